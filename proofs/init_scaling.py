"""init.scaling: under standard initialisation a D^2 grows with d; float64 loses the contraction."""

from __future__ import annotations

import math

import sympy as sp
from flint import arb

from proofs._framework import Derivation, require, require_zero


BERT_384 = sp.Rational(384**2, 50**4)  # d^2 s^4 with s = 0.02 = 1/50, d = 384


def build() -> Derivation:
    D = Derivation(
        claim="init.scaling",
        statement="With W_Q, W_K entries iid N(0, s^2) and tokens of norm about sqrt(d), a D^2 grows "
                  "with d (roughly like sqrt(d) for s^2 = 1/d); 1 - exp(-a D^2) is exactly 1.0 in float64 "
                  "once a D^2 >= 54 ln 2 (about 37.43) and exp(-a D^2) underflows to 0 once "
                  "a D^2 >= 1075 ln 2 (about 745.13); arb keeps exp(-a D^2) > 0.",
        source="the thesis on iterated self-attention",
        note="The thresholds are those of correctly rounded exp: 1 - y rounds to 1.0 exactly when "
             "y <= 2^-54 and y rounds to 0 exactly when y <= 2^-1075 (ties to even); a libm exp may "
             "move them by an ulp of its argument.",
    )

    @D.symbolic("Second moment of one entry of W_Q W_K^T",
                "E[(sum_{k<=m} g_k h_k)^2] = m s^4 for iid g_k, h_k ~ N(0, s^2); checked for m = 3 "
                "by expanding and using E g = 0, E g^2 = s^2 and independence.")
    def _():
        s = sp.Symbol("s", positive=True)
        m = 3
        g = sp.symbols(f"g1:{m + 1}")
        h = sp.symbols(f"h1:{m + 1}")
        square = sp.Poly(sp.expand(sum(g[k] * h[k] for k in range(m))**2), *g, *h)
        moments = {0: 1, 1: 0, 2: s**2}  # moments of N(0, s^2) up to order 2

        def expectation(monomial):
            return sp.Mul(*(moments[p] for p in monomial))
        expected = sum(c * expectation(mon) for mon, c in square.terms())
        require_zero(expected - m * s**4, "E (row . column)^2")

    @D.symbolic("E ||A||_F^2 = d^2 s^4 for A = W_Q W_K^T / sqrt(d_k)",
                "d^2 entries, each of second moment d_k s^4 / d_k; = 1 for s^2 = 1/d, = (2d/(d+d_k))^2 for "
                f"Xavier, = d^2 0.02^4 for BERT ({float(BERT_384):.4f} at d = 384).")
    def _():
        d, dk, s = sp.symbols("d d_k s", positive=True)
        frob2 = d**2 * dk * s**4 / dk
        require_zero(frob2.subs(s, 1 / sp.sqrt(d)) - 1, "s^2 = 1/d")
        require_zero(frob2.subs(s, sp.sqrt(2 / (d + dk))) - (2 * d / (d + dk))**2, "Xavier")
        require(sp.nsimplify(frob2.subs({s: sp.Rational(2, 100), d: 384})) == BERT_384,
                "BERT at d = 384")

    D.prose("Tokens of norm sqrt(d)",
            "For independent centred tokens with E||x||^2 = d: E||x_i - x_k||^2 = 2d, and D^2 is at "
            "least every pairwise squared distance.")

    D.prose("Growth of a D^2",
            "||A||_F / sqrt(rank A) <= a <= ||A||_F with rank A <= min(d, d_k), so for s^2 = 1/d, "
            "d_k = d: a D^2 lies between about 2 sqrt(d) and 2 d.  Random-matrix theory puts it near "
            "the lower end: for square Gaussian factors ||W_Q W_K^T||_2 -> sqrt(27/4) s^2 d "
            "(the Fuss-Catalan edge), so a is about 2.6 / sqrt(d) and a D^2 about 5.2 sqrt(d), e.g. "
            "about 100 at d = 384: past the float64 threshold 37.43.")

    @D.ball("Thresholds: 54 ln 2 in [37.42, 37.44] and 1075 ln 2 in [745.13, 745.14]",
                 formal="init.v:init_thresholds")
    def _():
        low, high = 54 * arb.const_log2(), 1075 * arb.const_log2()
        require(bool(low > arb("37.42")) and bool(low < arb("37.44")), f"54 ln 2 = {low}")
        require(bool(high > arb("745.13")) and bool(high < arb("745.14")), f"1075 ln 2 = {high}")

    @D.symbolic("IEEE binary64 rounding at the thresholds",
                "Exact binary64 arithmetic: 1 - 2^-54 rounds to 1.0 while 1 - 2^-53 does not; 2^-1074 "
                "(the smallest subnormal) is kept while 2^-1075 * 1 rounds to 0.",
                formal="init_rounding.g:init_rounding")
    def _():
        require(1.0 - 2.0**-54 == 1.0 and 1.0 - 2.0**-53 != 1.0, "1 - y near 2^-54")
        tiny = math.ldexp(1.0, -1074)
        require(tiny > 0.0 and tiny / 2 == 0.0, "underflow at 2^-1075")

    @D.ball("float64 loses the contraction, arb keeps it",
                 "At a D^2 = 38, float64 gives 1 - exp(-38) == 1.0 (no contraction); at 746 it gives "
                 "exp(-746) == 0.0; arb certifies exp(-38) > 2^-55 and exp(-746) > 0.",
                 formal="init.v:init_contraction_kept")
    def _():
        require(1.0 - math.exp(-38.0) == 1.0 and math.exp(-746.0) == 0.0, "float64 behaviour")
        require(1.0 - math.exp(-37.0) != 1.0 and math.exp(-744.0) > 0.0, "float64 below the thresholds")
        require(bool(arb(-38).exp() > arb(2)**-55) and bool(arb(-746).exp() > 0), "arb lower bounds")
    return D
