"""collapse.cubic: D(PX) <= a D^3 and, when sqrt(a) D_0 < 1, D_t <= a^{-1/2} (sqrt(a) D_0)^{3^t}."""

from __future__ import annotations

import sympy as sp
from flint import arb

from certify.prove.bnb import prove_nonnegative, remainder_ball
from proofs._framework import Derivation, require, require_encloses, require_zero

TAIL_CUT = 1  # the compact box is [0, TAIL_CUT]; past it the tail argument below applies


def _arb_h_second(t):
    """h''(t) = exp(-t) for h(x) = x - 1 + exp(-x)."""
    return (-t).exp()


def build(exponent_base: int = 3) -> Derivation:
    D = Derivation(
        claim="collapse.cubic",
        statement="Since 1 - exp(-x) <= x: D(PX) <= a D^3; if sqrt(a) D_0 < 1 then "
                  "D_t <= a^{-1/2} (sqrt(a) D_0)^{3^t} (doubly exponential collapse).",
        source="the thesis on iterated self-attention; Dong, Cordonnier and Loukas (2021)",
    )
    x, s = sp.symbols("x s", positive=True)

    @D.symbolic("Reduced form of h(x) = x - 1 + exp(-x), which vanishes to second order at 0",
                "h(x) = x^2 r(x) with r(x) = integral_0^1 (1 - s) exp(-s x) ds (Taylor's integral "
                "remainder; checked by integrating), so r(x) lies in exp(-[0, x]) / 2.")
    def _():
        r = sp.integrate((1 - s) * sp.exp(-s * x), (s, 0, 1))
        require_zero(x**2 * r - (x - 1 + sp.exp(-x)), "x^2 r(x) = h(x)")

    @D.ball(f"r(x) > 0 on [0, {TAIL_CUT}], so 1 - exp(-x) <= x there",
                 "Branch and bound (certify.prove.bnb) on the reduced form, enclosed as "
                 "exp(-segment [0, x]) / 2; plain subdivision of h itself never closes a box "
                 "touching x = 0, where h = 0.", formal="collapse.v:cubic_compact")
    def _():
        require_encloses(_arb_h_second, sp.diff(x - 1 + sp.exp(-x), x, 2), x, ("0", "1/2", TAIL_CUT), "h''")
        result = prove_nonnegative(lambda xb: remainder_ball(_arb_h_second, 2, arb(0), xb),
                                   [(0, TAIL_CUT)], strict=True)
        require(result.proved, f"branch and bound: {result.reason}")

    @D.symbolic(f"Tail x >= {TAIL_CUT}: h(x) = (x - 1) + exp(-x) > 0",
                "exp(-x) > 0, so h(x) - (x - 1) = exp(-x) > 0 and x - 1 >= 0 from the cut-off on.",
                formal="collapse.v:cubic_tail")
    def _():
        require_zero((x - 1 + sp.exp(-x)) - (x - 1) - sp.exp(-x), "tail decomposition")
        require(bool(sp.exp(-x).is_positive) and TAIL_CUT >= 1, "exp(-x) > 0 and cut-off >= 1")

    D.prose("Cubic step", "With x = a D^2: D(PX) <= (1 - exp(-a D^2)) D <= a D^2 D = a D^3.",
            formal="collapse.v:one_minus_exp_le")

    a, D0 = sp.symbols("a D_0", positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)

    def bound(k):
        return a**sp.Rational(-1, 2) * (sp.sqrt(a) * D0)**(exponent_base**k)

    @D.symbolic("Closed form solves the recursion: b_0 = D_0 and b_{t+1} = a b_t^3",
                "b_t = a^{-1/2} (sqrt(a) D_0)^{3^t}: log b_{t+1} - log(a b_t^3) simplifies to 0.",
                formal="collapse.v:cubic_closed_form")
    def _():
        require_zero(bound(0) - D0, "b_0")
        require_zero(sp.expand_log(sp.log(bound(t + 1)) - sp.log(a * bound(t)**3), force=True),
                     "b_{t+1} = a b_t^3")

    @D.symbolic("Induction step: D -> a D^3 is increasing on D >= 0",
                "d/dD (a D^3) = 3 a D^2 >= 0, so D_t <= b_t gives D_{t+1} <= a D_t^3 <= a b_t^3 = b_{t+1}.",
                formal="collapse.v:cubic_monotone")
    def _():
        Dv = sp.Symbol("D", nonnegative=True)
        require(bool(sp.diff(a * Dv**3, Dv).is_nonnegative), "derivative sign")

    @D.symbolic("Doubly exponential decay when sqrt(a) D_0 < 1",
                "log b_t = 3^t log(sqrt(a) D_0) - log(a) / 2 -> -infinity; checked at a = 4, D_0 = 1/4.")
    def _():
        value = bound(t).subs({a: 4, D0: sp.Rational(1, 4)})
        require(sp.limit(value, t, sp.oo) == 0, "limit of the closed form")
        require_zero(sp.expand_log(sp.log(bound(t)), force=True)
                     - (exponent_base**t * sp.log(sp.sqrt(a) * D0) - sp.log(a) / 2).expand(force=True)
                     .subs(sp.log(sp.sqrt(a) * D0), sp.log(a) / 2 + sp.log(D0)), "log of the bound")
    return D
