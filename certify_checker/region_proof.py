"""Checker for "region-proof" certificates: a bound D(PX) <= D g(a D^2) for every configuration of
a region (one layer of pure self-attention, n tokens, ||x_i|| <= radius, ||A||_2 <= norm).  Query/key
biases move w to any real number and leave L: the two-tokens box still bounds them (F decreases in |w|),
the line box does not, so a line proof covers scores x_i^T A x_j only.  The confirmation states the
region, exactly, with that scope (SCOPE): a proof's JSON alone (a radius 0.3, read as its binary64
value) would let a reader assume more.

The certificate names a reduction; this module recomputes its box from the region itself:
    two-tokens (n = 2, any d): (w, L) in [0, norm r^2] x [0, 4 norm r^2]
    line (d = 1, n >= 3): (w, L, t_2..t_{n-1}) in [0, norm r^2 / 2] x [0, 4 norm r^2] x [0, 1]^(n-2)
(derivations: proofs/region_two_tokens.py, proofs/region_line.py, proofs/region_tilt.py), replays
the bisection tree from that box (each digit bisects a box at the midpoint of that variable; "."
is the next leaf, "?" the next box left open), so the leaves and open boxes tile it exactly, and
re-runs every leaf's closing test with the code below at the leaf's precision:
    direct              (1 - F)_lo - (1 - g)_hi >= 0
    divided             L_lo = 0, g(0) = 0: g'_lo on (0, L_hi] - max Var >= 0 (h = L dh/dL(xi), xi in (0, L):
                        g'_lo from region_bounds.Dual, whose ends may be infinite, so 1/(2 sqrt(L)) keeps
                        1/(2 sqrt(L_hi)); g is continuous on [0, L_hi], the mean value theorem on [eps, L]
                        and eps -> 0)
    chord               L_hi > 0 (L_lo = 0 only where g(0) = 0): (g(L)/L)_lo - max Var over [w_lo - L_hi/2,
                        w_hi + L_hi/2] >= 0, since h = L (g(L)/L - F/L) and F/L is the mean of m' = Var over
                        [w - L/2, w + L/2]; (g(L)/L)_lo is g(L_hi)/L_hi for the claims (concave, g(0) = 0,
                        so g(L)/L decreases), g' on (0, L_hi] for a bound at L_lo = 0 (mean value), else
                        g's ball over L divided by the end of L that makes it smaller
    rise                from the face L = L_lo: g(L) - g(L_lo) >= (L - L_lo) s and F(L) - F(L_lo) <= (L - L_lo) times
                        (Var+ + Var-)/2 (dF/dL = (m'(w + L/2) + m'(w - L/2))/2), so h >= h(L_lo) + ...:
                        direct's margin on that face + (L_hi - L_lo) min(0, s - (Var+ + Var-)/2), s the secant
                        slope of g from L_lo to L_hi for the claims (concave), g'_lo on (0, L_hi] for a bound,
                        Var+ the max Var over [w_lo + L_lo/2, w_hi + L_hi/2], Var- over [w_lo - L_hi/2,
                        w_hi - L_lo/2] (h' = g'(L) - (m'(w + L/2) + m'(w - L/2))/2, m' = Var)
    monotone-w/FACE     two tokens: dF/dw <= 0 for w, L >= 0, so the face w = w_lo decides; FACE is
                        direct, divided, or identity (w_lo = 0, g = tanh(L/4) = F(0, L))
    monotone-t/FACE     the line: each inner position t with dF/dt <= 0 on the box (slope_margins, tried
                        first) moves to t_lo, with dF/dt >= 0 to t_hi (at least one moves), and that face
                        decides; FACE is direct, divided, chord, rise, or pair (every position at 0 or 1, k of n at 0:
                        the two-token ratio at w - ln(k/(n-k)), at most tanh(L/4))
    ordered             the line: a box inside t_k >= t_{k+1} for some k (t_k lo >= t_{k+1} hi).  F is symmetric in
                        the inner positions and h continuous, so the other leaves, which cover every strictly sorted
                        point, decide it; the volume proved is then the larger of 1 - (n - 2)! open/root and
                        the other leaves' volume
A test closes only on a finite enclosure that is certainly >= 0, a bound's 1 - exp(u) evaluated as -expm1(u) or,
as certificates written before that closed their leaves, as the subtraction (Profile.evaluations).  "violated"
carries an "inequality" certificate of a configuration inside the region, verified by that kind's checker.
"""

from __future__ import annotations

import ast
import copy
import math
from fractions import Fraction

from flint import arb, ctx

from certify_checker.bound import canonical as canonical_bound
from certify_checker import schema
from certify_checker.exact import rational
from certify_checker.formula import evaluate
from certify_checker.inequality import operations as bound_operations, same
from certify_checker.limits import LIMITS, Limits, limbs
from certify_checker.region_bounds import Dual, mean_ends, point, rest_of_ratio_lower, variance_upper, weights

KIND = "region-proof"
FORMAT = "certify-certificate/1"
VERDICTS = ("proved", "violated", "undecided")
MAX_TOKENS = 8
MIN_PRECISION, MAX_PRECISION = 53, 1 << 14
MAX_DEPTH = 200
FACES = ("direct", "divided", "identity")
METHODS = {"two-tokens": ("direct", "divided") + tuple(f"monotone-w/{f}" for f in FACES),
           "line": ("ordered", "direct", "divided", "chord", "rise", "monotone-t/direct", "monotone-t/divided",
                    "monotone-t/chord", "monotone-t/rise", "monotone-t/pair")}
LEMMAS = {"two-tokens": ["proofs/region_two_tokens.py", "proofs/region_tilt.py"],
          "line": ["proofs/region_line.py", "proofs/region_tilt.py", "proofs/region_two_tokens.py"]}
SCOPE = {"two-tokens": "with or without query/key biases", "line": "no query/key biases"}
CLAIM_BOUNDS = {"collapse.global": "(1 - exp(-a*D**2))*D", "collapse.tanh": "tanh(a*D**2/4)*D"}
CLAIMS = set(CLAIM_BOUNDS)
# The fields, exactly (certify.prove.region.certificate writes these): one the checker does not read
# would be shown unchecked.  A violation carries its counterexample instead of the tree.
KEYS = {"format", "kind", "verdict", "claim", "bound", "region", "reduction", "lemmas"}
FIELDS = {"violated": KEYS | {"counterexample"}, "proved": KEYS | {"tree", "leaves", "left", "volume_proved"}}
PARTS = {"region": {"n", "d", "radius", "norm"}, "reduction": {"name", "variables", "domain"}}


def _positive(text) -> Fraction:
    value = rational(text)
    if value <= 0:
        raise ValueError(f"{text!r} is not positive")
    return value


def _reduction(region: dict):
    n, d = region["n"], region["d"]
    if type(n) is not int or not 2 <= n <= MAX_TOKENS or not (d is None or (type(d) is int and d >= 1)):
        raise ValueError("region: n must be an integer in [2, 8], d null or a positive integer")
    radius, norm = _positive(region["radius"]), _positive(region["norm"])
    span = 4 * norm * radius ** 2
    if n == 2:
        return "two-tokens", ["w", "L"], [(Fraction(0), norm * radius ** 2), (Fraction(0), span)]
    if d == 1:
        return ("line", ["w", "L"] + [f"t{j}" for j in range(2, n)],
                [(Fraction(0), norm * radius ** 2 / 2), (Fraction(0), span)] + [(Fraction(0), Fraction(1))] * (n - 2))
    raise ValueError(f"no reduction covers n = {n}, d = {d}")


class Profile:
    """g, 1 - g and g' of the claim, from its closed form or the bound's text."""

    def __init__(self, claim, bound, n, d):
        self.kind = claim
        self.expm1 = True  # a bound's 1 - exp(u) as -expm1(u) (formula.evaluate), else subtracted (evaluations)
        self.tanh = claim == "collapse.tanh"  # g(L) = tanh(L/4): the tight-set identities apply
        if claim is None:
            tree = ast.parse(bound.strip(), mode="eval").body
            self.tanh = ast.dump(tree) == ast.dump(ast.parse(CLAIM_BOUNDS["collapse.tanh"], mode="eval").body)
            if not _reduced(tree):
                raise ValueError("the bound is not of the form D*g(a*D**2)")
            if d is None and any(isinstance(node, ast.Name) and node.id == "d" for node in ast.walk(tree)):
                raise ValueError("the bound uses d but the region holds every dimension")
            self.bound, self.n, self.d = bound, n, d
        elif claim not in CLAIMS or bound is not None:
            raise ValueError(f"claim {claim!r} with bound {bound!r} is not covered")

    def _g(self, L):
        values = {"D": 1, "a": L, "n": self.n, "d": self.d if self.d is not None else 0}
        if isinstance(L, Dual):
            return evaluate(self.bound, lambda name: Dual.of(values[name]) if name != "a" else L, self.expm1)
        return evaluate(self.bound, lambda name: arb(values[name]) if name != "a" else L, self.expm1)

    def evaluations(self):
        """This profile, then for a bound the same with 1 - exp(u) evaluated as the subtraction written: certificates
        written before certify evaluated it as -expm1(u) closed their leaves with that ball, which over a wide L can
        be the narrower (arb's expm1 of -L/2 for L in [255/1024, 1/4] is 1e-4 of its radius wider than exp's), and
        either encloses g.  A leaf -expm1 leaves open is tried again so; the claims' closed forms have no such text."""
        for expm1 in (True, False)[:_tests(self.kind)]:
            profile = copy.copy(self)
            profile.expm1 = expm1
            yield profile

    def gap_upper(self, L) -> arb:
        if self.kind == "collapse.global":  # 1 - g = exp(-L), decreasing
            return (-point(L[0])).exp().upper()
        if self.kind == "collapse.tanh":  # 1 - tanh(L/4) = 2 / (1 + exp(L/2)), decreasing
            return (2 / (1 + (point(L[0]) / 2).exp())).upper()
        return (1 - self._g(point(L[0]).union(point(L[1])))).upper()

    def slope_lower(self, top: Fraction) -> arb:
        if self.kind == "collapse.global":  # exp(-L), decreasing
            return (-point(top)).exp().lower()
        if self.kind == "collapse.tanh":  # (1 - tanh^2(L/4)) / 4, decreasing on L >= 0
            t = (point(top) / 4).tanh()
            return ((1 - t * t) / 4).lower()
        try:  # g' on (0, top] in extended interval arithmetic (region_bounds.Dual): its lower end, maybe -inf
            return self._g(Dual.over(top)).slope[0]
        except ArithmeticError:  # not proved defined and differentiable there: no enclosure
            return arb("nan")

    def chord_lower(self, L) -> arb:
        """A lower end of g(L)/L on the interval L (L_hi > 0; L_lo = 0 only for a g with g(0) = 0)."""
        top = point(L[1])
        if self.kind == "collapse.global":  # (1 - exp(-L))/L decreases: 1 - exp(-L) concave, 0 at 0
            return (-(-top).expm1() / top).lower()
        if self.kind == "collapse.tanh":  # tanh(L/4)/L decreases: tanh(L/4) concave on L >= 0, 0 at 0
            return ((top / 4).tanh() / top).lower()
        if L[0] == 0:  # g(L)/L = g'(xi) for some xi in (0, L) when g(0) = 0 (the caller checks it)
            return self.slope_lower(L[1])
        low = self._g(point(L[0]).union(top)).lower()  # g >= low on L, so g/L >= low / (L_hi if low >= 0 else L_lo)
        return (low / (top if low >= 0 else point(L[0]))).lower()

    def secant_lower(self, L) -> arb:
        """A lower end of (g(x) - g(L_lo))/(x - L_lo) for x in (L_lo, L_hi]: for the claims (concave) the secant to
        L_hi, whose slope is the least; for a bound, g' on (0, L_hi] (mean value theorem)."""
        a, b, width = point(L[0]), point(L[1]), point(L[1] - L[0])
        if self.kind == "collapse.global":  # exp(-a) - exp(-b) = exp(-a) (1 - exp(a - b))
            return (-(-a).exp() * (a - b).expm1() / width).lower()
        if self.kind == "collapse.tanh":  # tanh(b/4) - tanh(a/4) = sinh((b - a)/4) / (cosh(a/4) cosh(b/4))
            return (((b - a) / 4).sinh() / ((a / 4).cosh() * (b / 4).cosh() * width)).lower()
        return self.slope_lower(L[1])

    def vanishes(self) -> bool:
        if self.kind in CLAIMS:
            return True
        zero = self._g(arb(0))
        return zero.is_exact() and zero.is_zero()


def _tests(claim) -> int:
    """How many times a leaf's test may run (Profile.evaluations): a bound's twice, with 1 - exp(u) as -expm1(u) and
    then subtracted; a claim's once."""
    return 2 if claim is None else 1


def _reduced(tree) -> bool:
    """A product (and quotient) with one factor D in the numerator; a and D elsewhere only within
    products c * a * D**2 (c numbers, n, d)."""
    factors = []

    def collect(node, up):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            collect(node.left, up)
            collect(node.right, up if isinstance(node.op, ast.Mult) else not up)
        else:
            factors.append((node, up))

    collect(tree, True)
    plain_d = [up for f, up in factors if isinstance(f, ast.Name) and f.id == "D"]
    rest = [(f, up) for f, up in factors if not (isinstance(f, ast.Name) and f.id == "D")]
    # D*(c*a*D**2) flattens to D, c, a, D**2: an a and a D**2 here that pair up in the numerator are powers of a D^2
    pairs = [up for f, up in rest if _is_a(f) or _is_d_squared(f)]
    paired = all(pairs) and 2 * sum(1 for f, _ in rest if _is_a(f)) == len(pairs)
    return plain_d == [True] and paired and all(_only_through_product(f) for f, _ in rest
                                                if not (_is_a(f) or _is_d_squared(f)))


def _is_a(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "a"


def _is_d_squared(node) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Name)
            and node.left.id == "D" and isinstance(node.right, ast.Constant) and type(node.right.value) is int
            and node.right.value == 2)


def _only_through_product(node) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)) and _product(node):
        return True
    if isinstance(node, ast.Name):
        return node.id not in ("a", "D")
    return all(_only_through_product(child) for child in ast.iter_child_nodes(node))


def _product(node) -> bool:
    factors = []

    def collect(x, up):
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult):
            collect(x.left, up)
            collect(x.right, up)
        elif isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div):
            collect(x.left, up)
            collect(x.right, not up)
        elif isinstance(x, ast.UnaryOp) and isinstance(x.op, (ast.USub, ast.UAdd)):
            collect(x.operand, up)
        else:
            factors.append((x, up))

    collect(node, True)
    a = [up for x, up in factors if _is_a(x)]
    d2 = [up for x, up in factors if _is_d_squared(x)]
    constants = [x for x, _ in factors if isinstance(x, ast.Constant) or (isinstance(x, ast.Name) and x.id in ("n", "d"))]
    return a == [True] and d2 == [True] and len(constants) + 2 == len(factors)


def _margin(method: str, box, profile: Profile):
    w, L, inner = box[0], box[1], box[2:]
    if method == "ordered":  # F is symmetric in the inner positions: the sorted part of the domain decides
        unsorted = any(inner[k][0] >= inner[k + 1][1] for k in range(len(inner) - 1))
        return arb(0) if len(box) >= 4 and unsorted else None
    if method.startswith("monotone-w/"):
        if len(box) != 2 or w[0] < 0 or L[0] < 0:
            return None
        face = method[len("monotone-w/"):]
        if face == "identity":
            return arb(0) if w[0] == 0 and profile.tanh else None
        return _margin(face, ((w[0], w[0]), L), profile)
    if method.startswith("monotone-t/"):
        if len(box) < 3 or L[0] < 0:
            return None
        face, moved = list(box), False  # each position with a proved sign moves to the end where F is largest
        for k, (lower, upper) in enumerate(slope_margins(w, L, inner)):
            if lower.is_finite() and lower >= 0:
                face[k + 2], moved = (box[k + 2][0], box[k + 2][0]), True
            elif upper.is_finite() and upper >= 0:
                face[k + 2], moved = (box[k + 2][1], box[k + 2][1]), True
        if not moved:
            return None
        face_test = method[len("monotone-t/"):]
        if face_test == "pair":  # positions at 0 and 1 only: the two-token ratio shifted, at most tanh(L/4)
            return arb(0) if all(lo == hi and lo in (0, 1) for lo, hi in face[2:]) and profile.tanh else None
        return _margin(face_test, tuple(face), profile) if face_test in ("direct", "divided", "chord", "rise") else None
    if method == "direct":
        return rest_of_ratio_lower(w, L, inner) - profile.gap_upper(L)
    if method == "divided":
        if L[0] != 0 or not profile.vanishes():
            return None
        return profile.slope_lower(L[1]) - variance_upper((w[0] - L[1] / 2, w[1] + L[1] / 2), inner)
    if method == "chord":
        if L[1] <= 0 or L[0] < 0 or (L[0] == 0 and not profile.vanishes()):
            return None
        return profile.chord_lower(L) - variance_upper((w[0] - L[1] / 2, w[1] + L[1] / 2), inner)
    if method == "rise":
        if L[0] < 0:
            return None
        base = _margin("direct", (w, (L[0], L[0])) + tuple(inner), profile)
        plus = variance_upper((w[0] + L[0] / 2, w[1] + L[1] / 2), inner)
        minus = variance_upper((w[0] - L[1] / 2, w[1] - L[0] / 2), inner)
        least = profile.secant_lower(L) - (plus + minus) / 2  # (h(L) - h(L_lo))/(L - L_lo) >= least on the box
        if not least.is_finite():  # min(0, +inf) is 0: an infinite enclosure closes nothing
            return None
        return base + point(L[1] - L[0]) * least.min(arb(0))
    return None


def _hull(lo: Fraction, hi: Fraction) -> arb:
    return point(lo).union(point(hi))


def slope_margins(w, L, inner):
    """For each inner position t: (lower, upper), >= 0 proving dF/dt <= 0, resp. >= 0, on the box.
    dm/dt = p_t (1 + theta (t - m)), d2m/dtheta dt = p_t ((t - m)(2 + theta (t - m)) - theta Var); either
    dm/dt over theta+ = w + L/2 lies below (above) dm/dt over theta- = w - L/2, or d2m/dtheta dt <= 0 (>= 0)
    between them (dF/dt is its integral from theta- to theta+)."""
    plus = position_slopes((w[0] + L[0] / 2, w[1] + L[1] / 2), inner)
    minus = position_slopes((w[0] - L[1] / 2, w[1] - L[0] / 2), inner)
    mixed = position_slopes((w[0] - L[1] / 2, w[1] + L[1] / 2), inner)
    return [(_largest(lo[0].lower() - hi[0].upper(), -both[1].upper()),
             _largest(hi[0].lower() - lo[0].upper(), both[1].lower()))
            for hi, lo, both in zip(plus, minus, mixed)]


def _times(x: arb, y: arb) -> arb:
    """A ball holding x y for every x and y in the two balls' intervals: the least and largest of the products of
    their ends (a midpoint-radius product of wide balls is wider: [1/3, 1/2] [1, 5.9] gives [-0.14, 2.9])."""
    ends = [e * f for e in (x.lower(), x.upper()) for f in (y.lower(), y.upper())]
    low, high = ends[0].lower(), ends[0].upper()
    for e in ends[1:]:
        low, high = low.min(e.lower()), high.max(e.upper())
    return low.union(high)


def _square(x: arb) -> arb:
    """A ball holding x^2 for every x in the ball's interval (0 at least when it holds 0)."""
    ends = [e * e for e in (x.lower(), x.upper())]
    high = ends[0].upper().max(ends[1].upper())
    if x.lower() <= 0 <= x.upper():
        return arb(0).union(high)
    return ends[0].lower().min(ends[1].lower()).union(high)


def position_slopes(theta, inner):
    """For each inner position t, balls holding dm/dt and d2m/dtheta dt over theta in the interval and the box;
    every product over the balls' intervals (_times): as balls, wide factors lose the sign."""
    taus = [(Fraction(0), Fraction(0)), *inner, (Fraction(1), Fraction(1))]
    p = [lo.union(hi) for lo, hi in weights(theta, taus)]
    low, high = mean_ends(theta, inner)
    m, th = low.union(high), _hull(*theta)
    variance = arb(0)
    for pj, (a, b) in zip(p, taus):
        variance += _times(pj, _square(_hull(a, b) - m))
    variance = variance.max(arb(0))
    out = []
    for pt, t in zip(p[1:-1], inner):
        spread = _hull(*t) - m
        out.append((_times(pt, 1 + _times(th, spread)),
                    _times(pt, _times(spread, 2 + _times(th, spread)) - _times(th, variance))))
    return out


def _largest(a: arb, b: arb) -> arb:
    """The larger of two candidate margins, the finite one when only one is (NaN when neither is)."""
    if a.is_finite() and b.is_finite():
        return a.max(b)
    return a if a.is_finite() else b


def _closes(method, box, profile) -> bool:
    value = _margin(method, box, profile)
    return isinstance(value, arb) and value.is_finite() and bool(value >= 0)


def _box(rows, dimension: int):
    # lists: the two keys of an object {"0": TEXT, "1": TEXT} were read as the ends, its texts shown unread
    if not (isinstance(rows, list) and all(isinstance(row, list) and len(row) == 2 for row in rows)):
        raise ValueError("a box is not a list of [lo, hi] pairs")
    box = tuple((rational(lo), rational(hi)) for lo, hi in rows)
    if len(box) != dimension:
        raise ValueError("a box of the wrong dimension")
    return box


def _halves(box, axis: int):
    lo, hi = box[axis]
    mid = (lo + hi) / 2
    lower, upper = list(box), list(box)
    lower[axis], upper[axis] = (lo, mid), (mid, hi)
    return tuple(lower), tuple(upper)


def _replay(tree: str, root):
    """The leaf boxes and the open boxes of the bisection tree, in preorder."""
    leaves, left, stack = [], [], [(tuple(root), 0)]
    for symbol in tree:
        if not stack:
            raise ValueError("the tree has symbols past its last box")
        box, depth = stack.pop()
        if symbol == ".":
            leaves.append(box)
        elif symbol == "?":
            left.append(box)
        elif "0" <= symbol <= "9" and int(symbol) < len(root) and depth < MAX_DEPTH:  # ASCII: int("\u0661") is 1
            lower, upper = _halves(box, int(symbol))
            stack.extend([(upper, depth + 1), (lower, depth + 1)])
        else:
            raise ValueError(f"bad tree symbol {symbol!r}")
    if stack:
        raise ValueError("the tree ends before every box is a leaf or left open")
    return leaves, left


def _volume(box) -> Fraction:
    out = Fraction(1)
    for lo, hi in box:
        out *= hi - lo
    return out


def _inside(config: dict, region: dict) -> str | None:
    """Why the configuration is not in the region, or None: exact rational tests."""
    X, layers = config["X"], config["layers"]
    radius, norm = rational(region["radius"]), rational(region["norm"])
    if len(X) != region["n"] or (region["d"] is not None and any(len(row) != region["d"] for row in X)):
        return "the counterexample has another number of tokens or another dimension"
    if len(layers) != 1 or set(layers[0]) != {"A"}:
        return "the counterexample is not one layer of pure attention given by A"
    if any(sum(rational(x) ** 2 for x in row) > radius ** 2 for row in X):
        return "a token of the counterexample lies outside the radius"
    if sum(rational(x) ** 2 for row in layers[0]["A"] for x in row) > norm ** 2:  # ||A||_2 <= ||A||_F
        return "the counterexample's A is not within the norm (Frobenius test)"
    return None


def work(cert: dict) -> int:
    """The replay's work in the units of certify_checker.limits (about a minute for 10^5 direct leaves of 8 tokens
    at 53 bits): the price of each symbol of the tree and of each leaf (prices), or of a violation's sums (_inside_work).
    0 when the region or the tree is malformed (verify rejects those before any replay).  The tree is counted whatever
    the leaves are: a malformed leaf is rejected only after the replay, which a 64 MB tree makes minutes long and
    gigabytes large."""
    if cert.get("verdict") == "violated":
        return _inside_work(cert)
    priced, tree, leaves = prices(cert), cert.get("tree"), cert.get("leaves")
    if priced is None or not isinstance(tree, str):
        return 0
    symbol, leaf = priced
    stated = [(item.get("precision"), item.get("method")) for item in leaves if isinstance(item, dict)] \
        if isinstance(leaves, list) else []
    return symbol * len(tree) + sum(leaf(precision, method) for precision, method in stated)


def prices(cert: dict):
    """(symbol, leaf): the replay's work of a symbol of the tree and leaf(precision, method), that of a leaf as stated,
    for the claim or bound and region the certificate states; a proof's work is their sum (work), which the prover's
    meter keeps as its proof grows.  None when the region is malformed.  Each symbol makes a box of n intervals, exact
    rationals as long as the region's span 4 norm radius^2 (one per limb of it: a radius of 1,400 digits over 1,400 made
    each symbol 30 times dearer, and the boxes gigabytes); each leaf's closing test takes tilts of n^2 exponentials, as
    many as its method needs (_tilts), each a fixed part, the Python around them, plus one per limb of its precision
    and one per limb of the span beyond the first (the tilts' exponents are products of the box's rationals, 100 times
    slower a leaf at that radius), twice for a bound (_tests)."""
    try:
        region = cert["region"]
        n, span = region["n"], 4 * rational(region["norm"]) * rational(region["radius"]) ** 2
    except (TypeError, KeyError, ValueError, ArithmeticError, AttributeError):
        return None
    if type(n) is not int or not 2 <= n <= MAX_TOKENS:
        return None
    size = limbs(max(span.numerator.bit_length(), span.denominator.bit_length()), 1 << 62)
    operations, tests = bound_operations(cert.get("bound")), _tests(cert.get("claim"))

    def leaf(precision, method) -> int:
        # its tilts, and the bound evaluated with first derivatives (up to 4 ball operations a product); a test that
        # may take the bound's slope (divided, chord, rise; a leaf stating no method, as the prover's meter prices the
        # boxes ahead, counts as one) adds the Python of region_bounds.Dual's interval arithmetic, about 30 us an
        # operation at any precision (4 x (a*D**2)**1024: 0.13 s at 53 bits), 400 units.  A bound's leaf that -expm1
        # leaves open is tested again, whole (_tests): priced once, a forged proof of leaves that only the second test
        # closes made the checker do twice the work its limits were asked about.
        tilts = (32 * (n * n + 16) * _tilts(method) + 4 * operations) * (limbs(precision, MAX_PRECISION) + size - 1) \
            if type(precision) is int else 0
        return tests * (400 * operations * _may_take_the_slope(method) + tilts)

    return 64 * n * size, leaf


# The tilts (n^2 exponentials: a tilt's weights, or its mean at one end) of a leaf's test, by its method (the face's
# after "/"): direct 2, on which the price of a leaf was measured; divided and chord 3 (a variance), rise 8 (direct on
# its face and two variances); a monotone-t test adds 9 (three positions' slopes); pair, identity and ordered take
# none (priced 1).  A leaf stating no method (the prover's meter prices the boxes ahead so) is priced as the dearest.
# Priced alike as direct, a monotone-t/rise leaf of five tokens took 30 times its price at 53 bits, and a proof of
# 6 MB of monotone-t/chord leaves of eight tokens, priced 2e8 (20 s), 6 minutes (half an hour at the default limit).
TILTS = {"direct": 2, "divided": 3, "chord": 3, "rise": 8}
SIGN_TILTS = 9


def _tilts(method) -> int:
    if not isinstance(method, str):
        return SIGN_TILTS + max(TILTS.values())
    return TILTS.get(method.rsplit("/", 1)[-1], 1) + (SIGN_TILTS if method.startswith("monotone-t/") else 0)


def _may_take_the_slope(method) -> bool:
    return not isinstance(method, str) or method.rsplit("/", 1)[-1] in ("divided", "chord", "rise")


def _inside_work(cert: dict) -> int:
    """The work of _inside's exact sums of squares (a token's, A's): a sum's denominators grow with its terms, so its
    work grows as the square of its texts' digits, each text's at most 4 of its schema.reading units (2 a character, a
    quarter of a decimal exponent's unit): 4000-digit p/q, 32 of them 0.8 s, 64 3.4 s (A of 16 x 16 of them took 50 s,
    its estimate 4 s), priced at (4 units)^2 / 2^17 (1.5e-4 a character squared measured, 2.3e-6 a unit).  The
    numbers that are no text (binary64: powers of two below, whose common denominator stays under 2^2150) count as
    one text of 2200 digits; each term 30 units more.  0 when malformed (verify rejects it first)."""
    try:
        config = cert["counterexample"]["config"]
        sums = [*config["X"], [x for row in config["layers"][0]["A"] for x in row]]
        digits = lambda terms: (4 * sum(schema.reading(x, "X")[0] for x in terms if isinstance(x, str))
                                + (2200 if not all(isinstance(x, str) for x in terms) else 0))
        return sum(digits(terms) ** 2 // (1 << 17) + 30 * len(terms) for terms in sums)
    except (TypeError, KeyError, IndexError, AttributeError):
        return 0


def verify(cert: dict, limits: Limits = LIMITS, closed: set | None = None) -> tuple[bool, str]:
    """closed: the leaf tests an earlier verify closed, (claim, bound, n, d, box, method, precision) each: not run again
    (a resumed proof's, replayed before its search went on, in the merged proof), and those this one closes added; a
    set its caller made empty, which only verify fills."""
    if cert.get("format") != FORMAT or cert.get("kind") != KIND:
        return False, f"not a {KIND!r} certificate"
    verdict, region = cert["verdict"], cert["region"]
    if verdict not in VERDICTS:
        return False, f"verdict {verdict!r} is not one of {VERDICTS}"
    if set(cert) != FIELDS.get(verdict, FIELDS["proved"]) or any(set(cert[part]) != keys for part, keys in PARTS.items()):
        return False, f"the certificate's fields are not those of a {verdict} region proof"
    name, variables, root = _reduction(region)
    stated = cert["reduction"]
    if stated["name"] != name or stated["variables"] != variables or _box(stated["domain"], len(root)) != tuple(root):
        return False, "the reduction or its domain is not the one the region gives"
    if cert["lemmas"] != LEMMAS[name]:
        return False, "the lemmas are not those of the reduction"
    # A stated bound is read only in its canonical form (certify_checker.bound): a comment, a control
    # character or a homoglyph would otherwise show one bound and have another proved.
    if cert["bound"] is not None and canonical_bound(cert["bound"]) != cert["bound"]:  # outside the grammar: ValueError
        return False, f"the bound is not in its canonical form {canonical_bound(cert['bound'])!r}"
    profile = Profile(cert["claim"], cert["bound"], region["n"], region["d"])
    target = (cert["claim"], cert["bound"], region["n"], region["d"])  # all a leaf's test reads besides the leaf
    if verdict == "violated":
        return _verify_violation(cert, region, limits)
    if not isinstance(cert["tree"], str):  # a list of symbols replays as well, past work()'s estimate
        return False, "the bisection tree is not a text"
    if not (isinstance(cert["leaves"], list) and isinstance(cert["left"], list)):  # {} would pass for no box
        return False, "the leaves and the open boxes are not lists"
    leaves, left = _replay(cert["tree"], root)
    stated_leaves = cert["leaves"]
    if len(stated_leaves) != len(leaves) or len(cert["left"]) != len(left):
        return False, "the leaves or open boxes do not match the bisection tree"
    if [_box(b, len(root)) for b in cert["left"]] != left:
        return False, "an open box differs from the bisection tree's"
    if (verdict == "proved") != (not left):
        return False, f"verdict {verdict} with {len(left)} boxes left open"
    for box, leaf in zip(leaves, stated_leaves):
        if set(leaf) != {"box", "method", "precision"} or _box(leaf["box"], len(root)) != box:
            return False, "a leaf differs from the bisection tree's box, or states other fields"
        method, precision = leaf["method"], leaf["precision"]
        if method not in METHODS[name] or type(precision) is not int or not MIN_PRECISION <= precision <= MAX_PRECISION:
            return False, f"leaf method {method!r} or precision {precision!r} not allowed"
        if (test := (*target, box, method, precision)) in (closed or ()):
            continue
        with ctx.workprec(precision):
            if not any(_closes(method, box, evaluation) for evaluation in profile.evaluations()):
                return False, f"the leaf {leaf['box']} is not closed by {method} at {precision} bits"
        if closed is not None:
            closed.add(test)
    # Ordered leaves decide nothing themselves: every point is proved through its sorted permutation, and the
    # open boxes hold at most their volume of the sorted part, 1/(n - 2)! of the domain; the other leaves are proved.
    multiplicity = math.factorial(len(root) - 2) if any(leaf["method"] == "ordered" for leaf in stated_leaves) else 1
    direct = sum((_volume(box) for box, leaf in zip(leaves, stated_leaves) if leaf["method"] != "ordered"), Fraction(0))
    unsorted = multiplicity * sum((_volume(box) for box in left), Fraction(0))
    fraction = max(direct, _volume(root) - unsorted) / _volume(root)
    if rational(cert["volume_proved"]) != fraction:
        return False, "the stated volume proved is not the one the open boxes leave"
    what, where = cert["claim"] or f"bound {cert['bound']}", _stated(region, name)
    if verdict == "proved":
        leaves_closed = f"{len(leaves)} {'leaf' if len(leaves) == 1 else 'leaves'}"
        return True, f"confirmed: {what} proved on the region {where} ({leaves_closed}, reduction {name})"
    # rounded down: a proof with a box open is never said to cover 100.0000% of the domain
    return True, (f"confirmed: {what} proved on {math.floor(fraction * 10**6) / 10**4:.4f}% of the reduced domain of the "
                  f"region {where}, {len(left)} box{'' if len(left) == 1 else 'es'} open")


def _stated(region: dict, name: str) -> str:
    """The region as proved: exact radius and norm, and whether biased layers are in it (SCOPE)."""
    d = "every d" if region["d"] is None else f"d = {region['d']}"
    return (f"(n = {region['n']}, {d}, ||x_i|| <= {rational(region['radius'])}, ||A||_2 <= {rational(region['norm'])}, "
            f"{SCOPE[name]})")


def _verify_violation(cert: dict, region: dict, limits: Limits) -> tuple[bool, str]:
    from certify_checker import verify as verify_any

    if set(cert["counterexample"]) != {"config", "certificate"}:
        return False, "the counterexample states other fields than its configuration and certificate"
    inner = cert["counterexample"]["certificate"]
    if inner.get("kind") != "inequality" or inner.get("verdict") != "violated":
        return False, "the counterexample is not a violated inequality certificate"
    if inner.get("claim") != cert["claim"] or inner.get("bound") != cert["bound"]:
        return False, "the counterexample is about another claim or bound"
    if not same(inner["inputs"], cert["counterexample"]["config"]):  # as stated: Python's == took true for 1.0
        return False, "the counterexample's configuration differs from its certificate's"
    if reason := _inside(inner["inputs"], region):
        return False, reason
    confirmation = verify_any(inner, limits)  # the user's, as `certify check` of the counterexample
    if not confirmation.ok:
        return False, f"the counterexample's certificate is rejected: {confirmation.message}"
    return True, "confirmed: violated at a configuration inside the region"
