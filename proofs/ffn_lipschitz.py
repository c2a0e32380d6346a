"""ffn.lipschitz: a token-wise L-Lipschitz f after attention; Lip(GELU) = max |Phi(x) + x phi(x)|."""

from __future__ import annotations

import sympy as sp
from flint import arb

from certify.prove.bnb import prove_nonnegative, remainder_ball
from proofs._framework import Derivation, ball_of, require, require_encloses, require_zero

x = sp.Symbol("x", real=True)
PHI = (1 + sp.erf(x / sp.sqrt(2))) / 2  # standard normal cdf
phi = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)  # its density
GELU = x * PHI
CUT = 8  # compact box [-CUT, CUT]; past it the monotone pieces argue
NEAR = ("6/5", "8/5")  # around the maximiser sqrt(2): reduced form there


def _stated_constant():
    """Lip(GELU) = GELU'(sqrt 2) = (1 + erf(1)) / 2 + 1 / (e sqrt(pi)), about 1.1289."""
    return (1 + sp.erf(1)) / 2 + 1 / (sp.E * sp.sqrt(sp.pi))


def _arb_phi(t):
    return (-(t * t) / 2).exp() / (2 * arb.pi()).sqrt()


def _arb_gelu_prime(t):
    return (1 + (t / arb(2).sqrt()).erf()) / 2 + t * _arb_phi(t)


def _arb_minus_gelu_third(t):
    """-GELU'''(t) = phi(t) t (4 - t^2)."""
    return _arb_phi(t) * t * (4 - t * t)


def build(constant=_stated_constant) -> Derivation:
    D = Derivation(
        claim="ffn.lipschitz",
        statement="A token-wise L-Lipschitz f after attention gives D(f(PX)) <= L (1 - exp(-a D^2)) D "
                  "<= L a D^3 (a residual f has constant 1 + L); Lip(ReLU) = 1, "
                  "Lip(GELU) = max_x |Phi(x) + x phi(x)| (about 1.129).",
        source="the thesis on iterated self-attention; docs/claims.md conventions",
    )
    M = constant()

    @D.symbolic("Derivatives of GELU(x) = x Phi(x)",
                "GELU' = Phi + x phi, GELU'' = phi (2 - x^2), GELU''' = -phi x (4 - x^2).")
    def _():
        require_zero(sp.diff(GELU, x) - (PHI + x * phi), "GELU'")
        require_zero(sp.diff(GELU, x, 2) - phi * (2 - x**2), "GELU''")
        require_zero(sp.diff(GELU, x, 3) + phi * x * (4 - x**2), "GELU'''")

    @D.symbolic("Shape of GELU'", "GELU'(-x) = 1 - GELU'(x); GELU'' = 0 exactly at +-sqrt(2) (phi > 0); "
                "GELU' -> 1 as x -> oo and -> 0 as x -> -oo.")
    def _():
        g1 = PHI + x * phi
        require_zero(g1.subs(x, -x) - (1 - g1), "symmetry")
        require(set(sp.solve(2 - x**2, x)) == {sp.sqrt(2), -sp.sqrt(2)}, "critical points")
        require(sp.limit(g1, x, sp.oo) == 1 and sp.limit(g1, x, -sp.oo) == 0, "limits")

    D.prose("Maximum of |GELU'|",
            "GELU'' < 0 on (-oo, -sqrt 2), > 0 on (-sqrt 2, sqrt 2), < 0 on (sqrt 2, oo): GELU' falls "
            "from 0 to m = GELU'(-sqrt 2) = 1 - M, rises to M = GELU'(sqrt 2), then falls to 1.  As "
            "M > 1, sup |GELU'| = max(M, M - 1, 1) = M.", formal="ffn.v:gelu_prime_global")

    @D.symbolic("The constant: M = GELU'(sqrt 2) = (1 + erf(1)) / 2 + 1 / (e sqrt(pi))",
                formal="ffn.v:gelu_prime_at_sqrt2")
    def _():
        require_zero((PHI + x * phi).subs(x, sp.sqrt(2)) - M, "GELU'(sqrt 2)")
        require_zero(sp.diff(GELU, x, 2).subs(x, sp.sqrt(2)), "GELU''(sqrt 2) = 0")

    def arb_M():
        return (1 + arb(1).erf()) / 2 + 1 / (arb.const_e() * arb.pi().sqrt())

    @D.ball("M in [1.1289, 1.1290] and M > 1", "arb enclosure of the closed form.",
                 formal="ffn.v:gelu_constant_bounds")
    def _():
        value = arb_M()
        require(bool(value > arb("1.1289")) and bool(value < arb("1.1290")), f"M = {value}")

    @D.ball(f"|GELU'(x)| <= M on [-{CUT}, {CUT}], tight at sqrt(2)",
                 f"Branch and bound of M - GELU' >= 0 directly away from sqrt(2) and, on {NEAR}, of the "
                 "reduced form r = (M - GELU'(x)) / (x - sqrt 2)^2, enclosed as -GELU'''(segment) / 2 "
                 "(GELU'(sqrt 2) = M and GELU''(sqrt 2) = 0, Taylor's integral remainder); and of "
                 "GELU' + M >= 0 everywhere.", formal="ffn.v:gelu_prime_bounded")
    def _():
        Mb = arb_M()
        root2 = arb(2).sqrt()
        require(bool(Mb.overlaps(ball_of(M)) and root2.overlaps(ball_of(sp.sqrt(2)))), "M and sqrt(2) in arb")
        require_encloses(_arb_gelu_prime, PHI + x * phi, x, ("-8", "-3/2", "1/2", "3/2", "8"), "GELU'")
        require_encloses(_arb_minus_gelu_third, -sp.diff(GELU, x, 3), x, NEAR + ("0", "2"), "-GELU'''")
        upper = lambda t: Mb - _arb_gelu_prime(t)  # noqa: E731
        reduced = lambda t: remainder_ball(_arb_minus_gelu_third, 2, root2, t)  # noqa: E731
        lower, near = (-CUT, NEAR[0]), NEAR
        for f, box in ((upper, lower), (reduced, near), (upper, (NEAR[1], CUT))):
            result = prove_nonnegative(f, [box], strict=True)
            require(result.proved, f"on {box}: {result.reason}")
        result = prove_nonnegative(lambda t: _arb_gelu_prime(t) + Mb, [(-CUT, CUT)], strict=True)
        require(result.proved, f"GELU' + M: {result.reason}")

    D.prose(f"Tails |x| >= {CUT}",
            f"On [{CUT}, oo) GELU' decreases (GELU'' < 0) towards 1, so 1 < GELU'(x) <= GELU'({CUT}) <= M; "
            f"on (-oo, -{CUT}] it decreases from 0 towards m = 1 - M, so |GELU'(x)| < M - 1 < M.",
            formal="ffn.v:gelu_prime_global")

    D.prose("MLP and composition",
            "f(x) = W2 s(W1 x + b1) + b2 is a composition, so Lip(f) <= ||W2||_2 Lip(s) ||W1||_2 "
            "(Lip(ReLU) = 1: |max(u,0) - max(v,0)| <= |u - v|).  Token-wise f gives "
            "D(f(Y)) <= L D(Y); with Y = PX and collapse.global, D(f(PX)) <= L (1 - exp(-a D^2)) D; "
            "x + f(x) is (1 + L)-Lipschitz by the triangle inequality.")

    @D.symbolic("The cubic exponent is unchanged", "L (1 - exp(-a D^2)) D = L a D^3 + O(D^5).")
    def _():
        L, a, Dv = sp.symbols("L a D", positive=True)
        series = sp.series(L * (1 - sp.exp(-a * Dv**2)) * Dv, Dv, 0, 5).removeO()
        require_zero(series - L * a * Dv**3, "series")
    return D
