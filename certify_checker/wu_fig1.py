"""Checker for "wu-fig1" certificates: the N = 2 counterexample of Wu et al. (2024), Figure 1.

Setting: two tokens in R^2 (rows), causal mask, W_Q = W_K = 0 so the attention matrix is
P = [[1, 0], [1/2, 1/2]], W_V = [[1, w], [0, 1]] with w > 1, post-LN with LN(x) = x / ||x||_2:
X' = LN_rows(P X W_V).  LN(c y) = LN(y) for c > 0, so token 1 follows x1 -> LN(x1 W_V) and token 2
follows x2 -> LN((x1 + x2) W_V).

Token 1, exactly: LN(LN(y) W_V) = LN(y W_V) and W_V^t = [[1, t w], [0, 1]], so a unit start
(a, b) is after t layers x1(t) = LN(a, b + t w a).  For a > 0 its first coordinate is
1 / sqrt(1 + (t w + b/a)^2) and b/a >= -sqrt(1 - a^2)/a >= -sqrt(1 - a_min^2)/a_min when
a >= a_min; once M = T w - sqrt(1 - a_min^2)/a_min > 0 both coordinates are positive for t >= T,
the first is at most u = 1/sqrt(1 + M^2), and ||x1(t) - (0, 1)||^2 = u1^2 + (1 - sqrt(1 - u1^2))^2
<= u^2 (1 + u^2).  So x1(t) -> (0, 1); for a < 0 the map is odd (F(-X) = -F(X)) and x1 -> (0, -1).

Token 2 with token 1 frozen at (0, 1): write x2 = (cos th, sin th).  Then
(x1 + x2) W_V = (cos th, w cos th + 1 + sin th), and on the open arc pi/2 < th < 3 pi/2 (cos th < 0)
the new angle is f(th) = pi + atan(w + (1 + sin th)/cos th) = pi + atan(w + tan(th/2 + pi/4)),
which maps the arc into (pi/2, pi + atan w), a subset of itself.  Its derivative is
f'(th) = (1 + u^2) / (2 (1 + (w + u)^2)) with u = tan(th/2 + pi/4), positive on the arc.
Fixed points: A = (-1/w, sqrt(1 - 1/w^2)) and B = (-1/w, -sqrt(1 - 1/w^2)).

What a certified certificate proves (all in ball arithmetic from the exact w and the witness):
1. the token-1 bound above for the stated a_min and T;
2. interval Newton: each of the boxes for theta_A and theta_B, inside the arc, holds exactly one
   fixed point of f (N(Th) = m - g(m)/g'(Th) inside Th for g = f - id, with g' != 0 on Th);
   f' > 1 on the A one (repelling, second coordinate > 0), f' < 1 on the B one (second
   coordinate < 0);
3. the trapping arc [c_0, c_m] (cut into the witness's pieces) contains theta_B and has
   0 < f' < 1 on every piece, hence f maps it into itself (f(th) - theta_B has the sign of
   th - theta_B and is smaller in size) and contracts it: every start on it converges to B;
4. det [(0, 1), B] = -cos(theta_B) > 0: the equilibrium [(0, 1), B] has rank 2.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from itertools import pairwise

from flint import arb

from certify_checker.counterexample import Evaluation, confirm, retried, text_price
from certify_checker.exact import ball, interval, rational, square
from certify_checker.limits import limbs

KIND = "wu-fig1"
TEXT_READS = 3  # the most an evaluation reads one number stated as text (the cuts: read exactly, compared, and as balls at both precisions)
INPUT_KEYS = {"w"}
WITNESS_KEYS = {"token1", "theta_A", "theta_B", "trapping_cuts"}


def _witness_problem(witness: dict) -> str | None:
    """The witness holds exactly the fields evaluate reads (a field beside them, or a third end of a box, would
    be shown and never checked), or why not."""
    token1 = witness.get("token1")
    if not (set(witness) == WITNESS_KEYS and isinstance(token1, dict) and set(token1) == {"a_min", "T"}
            and all(isinstance(witness[f"theta_{name}"], list) and len(witness[f"theta_{name}"]) == 2 for name in "AB")):
        return "the witness must be exactly token1 (a_min, T), theta_A and theta_B (two ends each) and trapping_cuts"
    return None


def tangent_coordinate(theta: arb) -> arb:
    """u = tan(th/2 + pi/4) = (1 + sin th)/cos th, finite on the arc pi/2 < th < 3 pi/2."""
    return (theta / 2 + arb.pi() / 4).tan()


def angle_map(w: arb, theta: arb) -> arb:
    """f(th): the angle of token 2 after one layer, token 1 at (0, 1)."""
    return arb.pi() + (w + tangent_coordinate(theta)).atan()


def angle_map_derivative(w: arb, theta: arb) -> arb:
    """f'(th) = (1 + u^2) / (2 (1 + (w + u)^2)), positive for every real u."""
    u = tangent_coordinate(theta)
    return (1 + square(u)) / (2 * (1 + square(w + u)))


def _on_arc(lo: Fraction, hi: Fraction) -> bool:
    half_pi = arb.pi() / 2
    return lo < hi and bool(half_pi < ball(lo)) and bool(ball(hi) < 3 * half_pi)


def closed_form_angle(w: arb, name: str) -> arb:
    """theta_A = pi - atan(sqrt(w^2 - 1)), theta_B = pi + atan(sqrt(w^2 - 1)): (-1/w, +-sqrt(1 - 1/w^2))."""
    offset = (w * w - 1).sqrt().atan()
    return arb.pi() - offset if name == "A" else arb.pi() + offset


def _newton(found: Evaluation, w: arb, name: str, box) -> arb | None:
    """Interval Newton on g = f - id over the box; the enclosure of its unique zero, or None.

    The closed-form point (a fixed point by the algebra in the module docstring) must lie in the
    box too: then it is that unique zero, and the box is the one of A (or B) as named."""
    lo, hi = rational(box[0]), rational(box[1])
    if not found.require(_on_arc(lo, hi), f"the box of theta_{name} is not inside the arc (pi/2, 3pi/2)"):
        return None
    m = ball((lo + hi) / 2)
    slope = angle_map_derivative(w, interval(lo, hi)) - 1
    if not found.require(slope > 0 or slope < 0, f"g' may vanish on the box of theta_{name}"):
        return None
    image = m - (angle_map(w, m) - m) / slope
    inside = bool(ball(lo) < image) and bool(image < ball(hi))
    if not found.require(inside, f"interval Newton does not map the box of theta_{name} into itself"):
        return None
    exact = closed_form_angle(w, name)
    named = bool(ball(lo) < exact) and bool(exact < ball(hi))
    return image if found.require(named, f"the box of theta_{name} does not hold {name}'s closed form") else None


def evaluate(inputs: dict, witness: dict) -> Evaluation:
    if problem := _witness_problem(witness):
        raise ValueError(problem)
    found = Evaluation()
    w_exact = rational(inputs["w"])
    if w_exact <= 1:
        raise ValueError(f"w must exceed 1, got {w_exact}")
    w = ball(w_exact)

    # 1. Token 1 converges to (0, 1) from every start with first coordinate >= a_min.
    a_min, T = rational(witness["token1"]["a_min"]), witness["token1"]["T"]
    if not (0 < a_min <= 1 and type(T) is int and T >= 1):
        raise ValueError("token1 needs 0 < a_min <= 1 and an integer T >= 1")
    a = ball(a_min)
    M = T * w - (1 - a * a).nonnegative_part().sqrt() / a
    if found.require(M > 0, "T w - sqrt(1 - a_min^2)/a_min is not positive"):
        u = 1 / (1 + M * M).sqrt()
        found.values["token1_distance_bound"] = u * (1 + u * u).sqrt()

    # 2. The equilibria A and B of token 2.
    theta = {name: _newton(found, w, name, witness[f"theta_{name}"]) for name in ("A", "B")}
    if theta["A"] is not None:
        slope_A = angle_map_derivative(w, theta["A"])
        found.require(slope_A > 1, "f' > 1 at A is not proven")
        found.require(theta["A"].sin() > 0, "A's second coordinate is not proven positive")
        found.values.update(theta_A=theta["A"], A_x=theta["A"].cos(), A_y=theta["A"].sin(), fprime_A=slope_A)
    if theta["B"] is not None:
        slope_B = angle_map_derivative(w, theta["B"])
        found.require(slope_B < 1, "f' < 1 at B is not proven")
        found.require(theta["B"].sin() < 0, "B's second coordinate is not proven negative")
        found.values.update(theta_B=theta["B"], B_x=theta["B"].cos(), B_y=theta["B"].sin(), fprime_B=slope_B)

    # 3. The trapping arc: 0 < f' < 1 piece by piece, theta_B inside.
    cuts = [rational(c) for c in witness["trapping_cuts"]]
    if len(cuts) < 2 or any(c >= d for c, d in pairwise(cuts)):
        raise ValueError("trapping_cuts must be at least two increasing numbers")
    if found.require(_on_arc(cuts[0], cuts[-1]), "the trapping arc is not inside (pi/2, 3pi/2)"):
        slopes = [angle_map_derivative(w, interval(c, d)) for c, d in pairwise(cuts)]
        for (c, d), slope in zip(pairwise(cuts), slopes):
            if not found.require(slope > 0 and slope < 1, f"0 < f' < 1 is not proven on [{c}, {d}]"):
                break
        else:
            found.values["fprime_on_trapping_arc"] = functools.reduce(arb.union, slopes)
        if theta["B"] is not None:
            found.require(bool(ball(cuts[0]) < theta["B"]) and bool(theta["B"] < ball(cuts[-1])),
                          "theta_B is not inside the trapping arc")

    # 4. Rank 2 of [(0, 1), B].
    if theta["B"] is not None:
        det = -theta["B"].cos()
        found.require(det > 0, "det [(0, 1), B] > 0 is not proven")
        found.values["det_rank2"] = det

    found.claims = claims(w_exact, a_min, T, witness)
    return found


def claims(w: Fraction, a_min: Fraction, T: int, witness: dict) -> list[str]:
    """The statements a certified certificate proves, word for word.  Ends as the exact rationals the
    checks used: a JSON number 2.0943951023931957 prints as that decimal but is a binary64 above it."""
    box = {name: "[{}, {}]".format(*map(rational, witness[f"theta_{name}"][:2])) for name in ("A", "B")}
    arc = f"[{rational(witness['trapping_cuts'][0])}, {rational(witness['trapping_cuts'][-1])}]"
    return [
        f"setting: N = 2, d = 2, causal mask, W_Q = W_K = 0, W_V = [[1, {w}], [0, 1]], post-LN x / ||x||_2",
        (f"token 1 from any unit start (a, b) with a >= {a_min} is LN(a, b + t w a) after t layers and lies "
         f"within token1_distance_bound of (0, 1) for every t >= {T}; it tends to (0, 1) (to (0, -1) when a < 0)"),
        "with token 1 at (0, 1), token 2 = (cos th, sin th) on pi/2 < th < 3pi/2 follows th -> pi + atan(w + tan(th/2 + pi/4))",
        f"exactly one fixed point theta_A in {box['A']}: A = (-1/w, sqrt(1 - 1/w^2)), repelling (f' > 1)",
        f"exactly one fixed point theta_B in {box['B']}: B = (-1/w, -sqrt(1 - 1/w^2)), attracting (f' < 1)",
        f"the arc {arc} contains theta_B, is mapped into itself and contracted (0 < f' < 1): every start on it tends to B",
        "[(0, 1), B] is an equilibrium of rank 2 (det = -cos(theta_B) > 0)",
    ]


def work(cert: dict) -> int:
    """The work of the trapping arc's pieces in the units of certify_checker.limits (certify_checker.__init__):
    f' on each piece, a tangent and its arithmetic, weighted by the limbs, at the stated precision and the finer
    one (counterexample.retried), and reading the numbers stated as text (counterexample.text_price: 2000 cuts of
    4000-digit p/q took 12 s, 200 times the estimate without it).  0 when malformed (verify judges)."""
    try:
        cuts, bits = cert["witness"]["trapping_cuts"], cert["precision"]
        if type(bits) is not int or not isinstance(cuts, list):
            return 0
        return retried(lambda bits: 100 * len(cuts) * limbs(bits), bits) + text_price(cert, TEXT_READS)
    except (TypeError, KeyError, AttributeError):
        return 0


def verify(cert: dict) -> tuple[bool, str]:
    return confirm(cert, KIND, evaluate, INPUT_KEYS)
