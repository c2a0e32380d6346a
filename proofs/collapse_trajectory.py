"""collapse.trajectory: g_a(D) = (1 - exp(-a D^2)) D is increasing, so D_T <= g_{a_T}(... g_{a_1}(D_0))."""

from __future__ import annotations

import sympy as sp
from flint import arb

from certify.prove.bnb import prove_nonnegative, remainder_ball
from proofs._framework import Derivation, require, require_encloses, require_zero

NEAR_ZERO = "1/4"  # the reduced form is used on [0, NEAR_ZERO], h itself on [NEAR_ZERO, 1/2]


def _arb_h(t):
    """h(y) = 1 + (2y - 1) exp(-y)."""
    return 1 + (2 * t - 1) * (-t).exp()


def _arb_h_prime(t):
    """h'(y) = (3 - 2y) exp(-y)."""
    return (3 - 2 * t) * (-t).exp()


def build() -> Derivation:
    D = Derivation(
        claim="collapse.trajectory",
        statement="g_a(D) = (1 - exp(-a D^2)) D is increasing in D, so through layers with "
                  "a_1..a_T: D_T <= g_{a_T}(... g_{a_1}(D_0)).",
        source="the thesis on iterated self-attention",
    )
    a, Dv, y = sp.symbols("a D y", positive=True)
    g = (1 - sp.exp(-a * Dv**2)) * Dv
    h = 1 + (2 * y - 1) * sp.exp(-y)

    @D.symbolic("Derivative, reduced to one variable: g_a'(D) = h(a D^2), h(y) = 1 + (2y - 1) exp(-y)",
                "g_a'(D) = (1 - exp(-a D^2)) + 2 a D^2 exp(-a D^2); also g_a(D) = a^{-1/2} g_1(sqrt(a) D), "
                "so one variable y = a D^2 carries the whole question.",
                formal="collapse.v:trajectory_derivative")
    def _():
        require_zero(sp.diff(g, Dv) - h.subs(y, a * Dv**2), "g_a' = h(a D^2)")
        g1 = lambda u: (1 - sp.exp(-u**2)) * u  # noqa: E731 - g_1
        require_zero(g - g1(sp.sqrt(a) * Dv) / sp.sqrt(a), "scaling")

    @D.symbolic("h vanishes at y = 0: divide out y",
                "h(0) = 0 and h'(y) = (3 - 2y) exp(-y), so h(y) = y r(y) with r(y) the mean of h' over "
                "[0, y] (first-order Taylor remainder).", formal="collapse.v:trajectory_h_zero")
    def _():
        require(h.subs(y, 0) == 0, "h(0) = 0")
        require_zero(sp.diff(h, y) - (3 - 2 * y) * sp.exp(-y), "h'")

    @D.ball(f"h > 0 on (0, 1/2]: reduced form r on [0, {NEAR_ZERO}], h itself on [{NEAR_ZERO}, 1/2]",
                 "Branch and bound: near 0 on r, enclosed as h'(segment [0, y]) (the segment always "
                 "contains 0, so this enclosure only closes short boxes); away from 0 on h directly.",
                 formal="collapse.v:trajectory_h_pos")
    def _():
        require_encloses(_arb_h_prime, sp.diff(h, y), y, ("0", "1/8", NEAR_ZERO), "h'")
        require_encloses(_arb_h, h, y, (NEAR_ZERO, "3/8", "1/2"), "h")
        near = prove_nonnegative(lambda yb: remainder_ball(_arb_h_prime, 1, arb(0), yb),
                                 [(0, NEAR_ZERO)], strict=True)
        require(near.proved, f"reduced form near 0: {near.reason}")
        away = prove_nonnegative(_arb_h, [(NEAR_ZERO, "1/2")], strict=True)
        require(away.proved, f"h away from 0: {away.reason}")

    @D.symbolic("Tail y >= 1/2: h(y) = 1 + (2y - 1) exp(-y) >= 1",
                "The second term is a product of 2y - 1 >= 0 and exp(-y) > 0.",
                formal="collapse.v:trajectory_h_tail")
    def _():
        t = sp.Symbol("t", nonnegative=True)  # y = 1/2 + t
        require(bool((h - 1).subs(y, sp.Rational(1, 2) + t).is_nonnegative), "sign of (2y - 1) exp(-y)")

    @D.symbolic("g_a(D) also increases with a",
                "d g_a / d a = D^3 exp(-a D^2) >= 0: an upper enclosure of a gives a valid bound.",
                formal="collapse.v:trajectory_g_increases_with_a")
    def _():
        require_zero(sp.diff(g, a) - Dv**3 * sp.exp(-a * Dv**2), "d g / d a")
        require(bool(sp.diff(g, a).is_positive), "sign")

    D.prose("Induction through the layers",
            "If D_{t-1} <= b_{t-1} then D_t <= g_{a_t}(D_{t-1}) <= g_{a_t}(b_{t-1}) = b_t because g_{a_t} "
            "is increasing (collapse.global for the first inequality).",
            formal="collapse.v:trajectory_induction_step")
    return D
