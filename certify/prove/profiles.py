"""The right-hand sides a region proof can take: bounds D g(a D^2), seen through their profile g.

A profile encloses, for L = a D^2 in an exact interval, what the closing tests compare:
    gap_upper(L)       an upper end for 1 - g(L) (the claims' closed forms never subtract from 1:
                       1 - (1 - exp(-L)) is exp(-L), and 1 - tanh(L/4) = 2 / (1 + exp(L/2)))
    slope_lower(L_hi)  a lower end for g' on (0, L_hi] (the divided form)
    chord_lower(L)     a lower end for g(L)/L on an exact interval L with L_hi > 0 (the chord form):
                       at L_hi for the claims (g concave with g(0) = 0, so g(L)/L decreases:
                       proofs/region_tilt.py), g' on (0, L_hi] when L_lo = 0 (g(L)/L = g'(xi) by the
                       mean value theorem, g(0) = 0), else g's ball over L over L's end
    secant_lower(L)    a lower end for (g(x) - g(L_lo))/(x - L_lo) over x in (L_lo, L_hi] (the rise form):
                       the secant to L_hi for the claims (a concave g's secant slopes decrease in
                       their right end), else g' on (0, L_hi] (mean value theorem)
    vanishes           g(0) = 0 exactly (both sides of the claim vanish at L = 0)
The claims' profiles are decreasing gaps and slopes, so points suffice; a user's bound is
evaluated on the interval as a ball, with its derivative on (0, L_hi] by forward-mode differentiation in interval
arithmetic whose ends may be infinite (certify.prove.forward).  The mean value theorem holds on (0, L_hi] so: g is
defined at 0 (else the bound is refused) and, where the jets succeed, on (0, L_hi], built of functions continuous
on their domains, so continuous on [0, L_hi]; for 0 < eps < x, g(x) - g(eps) = (x - eps) g'(xi) with xi in
(eps, x), and eps -> 0 gives g(x) - g(0) >= x g'_lo (a Clarke derivative at a min or max: Lebourg's theorem).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from flint import arb

from certify import claims
from certify.core import expr as bound_grammar
from certify.core.arith import BALL
from certify.errors import BadInput, did_you_mean
from certify.prove.forward import JETS, Jet, Undefined
from certify.prove.tilt import Interval, exact

CLAIM_BOUNDS = {"collapse.global": "(1 - exp(-a*D**2))*D", "collapse.tanh": "tanh(a*D**2/4)*D"}


@dataclass(frozen=True)
class Profile:
    """The right-hand side D g(a D^2) of a region proof seen through g: the claim (None for a user's bound)
    and its text, gap_upper(L) an upper end of 1 - g on an exact interval L, slope_lower(L_hi) a lower end
    of g' on (0, L_hi], chord_lower(L) a lower end of g(L)/L on an exact interval L (L_hi > 0), secant_lower(L) one of
    g's secant slopes from L_lo over L, whether g(0) = 0 exactly, and whether g is tanh(L/4) as written (the tight-set
    identities close their faces exactly)."""
    claim: str | None  # a claim id, or None for a user's bound
    bound: str  # the right-hand side, D g(a D^2), as text
    gap_upper: Callable[[Interval], arb]
    slope_lower: Callable[[Fraction], arb]
    chord_lower: Callable[[Interval], arb]
    secant_lower: Callable[[Interval], arb]
    vanishes: bool
    tanh: bool  # g(L) = tanh(L/4) as written: the tight-set identities close their faces exactly
    made_from: tuple = ()  # a user's bound: bound_profile's arguments (text, n, d), with which it pickles

    def __reduce__(self):
        """Pickled as the call that makes it (its enclosures are closures, which pickle cannot name), so that a
        result holding it (certify.prove's ProofResult) can come back from a worker process."""
        return (claim_profile, (self.claim,)) if self.claim else (bound_profile, self.made_from)


def _interval_ball(L: Interval) -> arb:
    return exact(L[0]).union(exact(L[1]))


def _global() -> Profile:
    return Profile("collapse.global", CLAIM_BOUNDS["collapse.global"],
                   gap_upper=lambda L: (-exact(L[0])).exp(),
                   slope_lower=lambda top: (-exact(top)).exp(),
                   # (1 - exp(-L))/L decreases (g concave, g(0) = 0): its value at L_hi, without cancellation
                   chord_lower=lambda L: -(-exact(L[1])).expm1() / exact(L[1]),
                   # exp(-a) - exp(-b) = -exp(-a) expm1(a - b), over b - a: no cancellation
                   secant_lower=lambda L: -(-exact(L[0])).exp() * (exact(L[0]) - exact(L[1])).expm1()
                   / exact(L[1] - L[0]),
                   vanishes=True, tanh=False)


def _tanh() -> Profile:
    def slope(top):  # (tanh(L/4))' = (1 - tanh^2(L/4)) / 4, decreasing in L >= 0
        t = (exact(top) / 4).tanh()
        return (1 - t * t) / 4
    return Profile("collapse.tanh", CLAIM_BOUNDS["collapse.tanh"],
                   gap_upper=lambda L: 2 / (1 + (exact(L[0]) / 2).exp()),
                   # tanh(L/4)/L decreases (g concave, g(0) = 0): its value at L_hi
                   slope_lower=slope, chord_lower=lambda L: (exact(L[1]) / 4).tanh() / exact(L[1]),
                   secant_lower=_tanh_secant,
                   vanishes=True, tanh=True)


def _tanh_secant(L: Interval) -> arb:
    """(tanh(b/4) - tanh(a/4)) / (b - a) = sinh((b - a)/4) / (cosh(a/4) cosh(b/4) (b - a)): no cancellation."""
    a, b = exact(L[0]) / 4, exact(L[1]) / 4
    return (b - a).sinh() / (a.cosh() * b.cosh() * exact(L[1] - L[0]))


def claim_profile(claim: str) -> Profile:
    """The profile of collapse.global (g(L) = 1 - exp(-L)) or collapse.tanh (g(L) = tanh(L/4)); BadInput for
    any other claim, with the closest name."""
    if claim == "collapse.global":
        return _global()
    if claim == "collapse.tanh":
        return _tanh()
    covered = "certify prove covers collapse.global, collapse.tanh and --bound (a bound D g(a D^2))"
    # spelt right: a claim of the registry that no reduction here covers (from Python, a list was unhashable)
    if isinstance(claim, str) and claim in {c.id for c in claims.all_claims()}:
        raise BadInput(f"{covered}; no reduction covers the claim {claim}")
    raise BadInput(f"{did_you_mean(claim, CLAIM_BOUNDS)}{covered}; no reduction covers {claim!r}")


def bound_profile(text: str, n: int, d: int | None) -> Profile:
    """The profile of a user's bound: D times a function of a D^2 only (checked on the syntax)."""
    parsed = bound_grammar.parse(text)
    if "v" in parsed.names:
        raise BadInput("the bound may not use v (the region has no value matrix)")
    if "d" in parsed.names and d is None:
        raise BadInput("the bound uses d: give --d")
    if not reduced_form(parsed.tree):
        raise BadInput("the bound must read D*g(a*D**2): D as a factor, and a and D "
                       "elsewhere only in products such as c*a*D**2")

    def g(L):
        env = {"D": arb(1), "a": L,
               "n": arb(n), "d": arb(d or 0)}
        if isinstance(L, Jet):
            return parsed.evaluate(JETS, {name: Jet.lift(value) for name, value in env.items()})
        return parsed.evaluate(BALL, env)

    def slope(top):  # g' >= this on (0, top] (certify.prove.forward), NaN where g is not proved differentiable there
        try:
            return g(Jet.variable(Fraction(0), top)).slope[0]
        except Undefined:
            return arb("nan")

    try:
        zero = g(arb(0))
    except BadInput as undefined:  # (a*D**2)**-0.5 or 1/(a*D**2): the region's equal tokens have D = 0
        raise BadInput(f"{undefined}, at D = 0 (every region holds configurations with D = 0)") from None
    vanishes = zero.is_exact() and zero.is_zero()

    def chord(L):  # g(L)/L on [L_lo, L_hi], L_hi > 0: nothing is known of g's shape, only its ball
        if L[0] == 0:  # g(L)/L = (g(L) - g(0))/L = g'(xi), xi in (0, L): only when g(0) = 0
            return slope(L[1]) if vanishes else arb("nan")
        low = g(_interval_ball(L)).lower()  # g >= low on L: g/L >= low / L_hi when low >= 0, else >= low / L_lo
        return low / exact(L[1] if low >= 0 else L[0])
    # Written as the claim collapse.tanh is: the tight-set identity applies to it.
    tanh = parsed.tree == bound_grammar.parse(CLAIM_BOUNDS["collapse.tanh"]).tree
    return Profile(None, parsed.text, gap_upper=lambda L: 1 - g(_interval_ball(L)), slope_lower=slope,
                   chord_lower=chord, secant_lower=lambda L: slope(L[1]), vanishes=vanishes, tanh=tanh,
                   made_from=(text, n, d))


_A, _D_SQUARED = ("var", "a"), ("**", ("var", "D"), ("num", Fraction(2)))


def reduced_form(tree: tuple) -> bool:
    """tree = a product (and quotient) with one factor D in the numerator; a and D elsewhere only
    inside products c * a * D**2."""
    factors: list[tuple[tuple, bool]] = []

    def collect(node, numerator: bool):
        if node[0] in ("*", "/"):
            collect(node[1], numerator)
            collect(node[2], numerator if node[0] == "*" else not numerator)
        else:
            factors.append((node, numerator))

    collect(tree, True)
    plain_d = [up for f, up in factors if f == ("var", "D")]
    rest = [(f, up) for f, up in factors if f != ("var", "D")]
    # D*(c*a*D**2) flattens to the factors D, c, a, D**2: an a and a D**2 at this level that pair up in the
    # numerator are powers of a D^2 as much as the same product inside a function is
    pairs = [up for f, up in rest if f in (_A, _D_SQUARED)]
    paired = all(pairs) and 2 * sum(1 for f, _ in rest if f == _A) == len(pairs)
    return plain_d == [True] and paired and all(_only_reduced(f) for f, _ in rest if f not in (_A, _D_SQUARED))


def _only_reduced(tree: tuple) -> bool:
    if tree[0] in ("*", "/") and _is_product_of_a_D2(tree):
        return True
    if tree[0] == "var":
        return tree[1] not in ("a", "D")
    if tree[0] == "num":
        return True
    if tree[0] == "neg":
        return _only_reduced(tree[1])
    if tree[0] == "call":
        return all(_only_reduced(arg) for arg in tree[2])
    return _only_reduced(tree[1]) and _only_reduced(tree[2])


def _is_product_of_a_D2(tree: tuple) -> bool:
    """A chain of * and / whose factors are one a and one D**2 in the numerator, numbers, n and d."""
    factors: list[tuple] = []

    def collect(node, numerator: bool):
        if node[0] == "*":
            collect(node[1], numerator)
            collect(node[2], numerator)
        elif node[0] == "/":
            collect(node[1], numerator)
            collect(node[2], not numerator)
        elif node[0] == "neg":
            collect(node[1], numerator)
        else:
            factors.append((node, numerator))

    collect(tree, True)
    a_count = sum(1 for f, up in factors if f == _A and up)
    d2_count = sum(1 for f, up in factors if f == _D_SQUARED and up)
    constant = {("var", "n"), ("var", "d")}
    others = [(f, up) for f, up in factors if f[0] != "num" and f not in constant]
    return a_count == 1 and d2_count == 1 and len(others) == 2
