"""The counterexample of Wu et al.'s Figure 1 (claim ln.counterexample), certified.

    certify counterexample wu-fig1 --w 2 [--out CERT]

The mathematics and exactly what is certified are in certify_checker.wu_fig1, which re-derives
the certificate with its own code.  Here: the engine's evaluation of the same four statements (the
angle map written once over the arithmetic), the untrusted search for the witness (float64 closed
forms, boxes snapped to dyadic rationals, the trapping arc cut until every piece passes), and the
hand-over to the checker.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from itertools import pairwise

from flint import arb

from certify.core.arith import BALL
from certify.core.arith.ball import hull
from certify.core.precision import working
from certify.engine.counterexamples import Found, Outcome, certify_named, checker_limits, stage_of, value_lines
from certify.errors import BadInput
from certify.studies.wu import w_option
from certify.studies.wu.spot_check import decimal, exact_value

KIND = "wu-fig1"

HELP = "Wu et al. Figure 1: N = 2, W_V = [[1, w], [0, 1]], post-LN keeps rank 2"
TOKEN1_A_MIN = Fraction(1, 10)  # starts of token 1 with first coordinate >= 1/10 ...
TOKEN1_T = 100  # ... are within the certified distance of (0, 1) from layer 100 on
MAX_CUT_DEPTH = 40


def add_arguments(parser) -> None:
    """Add this counterexample's options to the `certify counterexample wu-fig1` parser. (--w)."""
    parser.add_argument("--w", default="2", help="the entry w > 1 of W_V, exact: '2', '3/2', '1.25', at most 2^64 (default 2)")


def parse_w(text: str) -> Fraction:
    """--w as an exact Fraction; BadInput unless 1 < w <= w_option.MAX_W (for w <= 1 there is no equilibrium B)."""
    w = w_option.read(text, "closed forms")
    if w <= 1:
        raise BadInput(f"--w must be greater than 1 (for w <= 1 there is no equilibrium B), got {text}")
    return w


def tangent_coordinate(ar, theta):
    """u = tan(th/2 + pi/4) = (1 + sin th)/cos th, finite on the arc pi/2 < th < 3 pi/2."""
    return ar.apply("tan", theta / 2 + ar.pi() / 4)


def angle_map(ar, w, theta):
    """f(th): the angle of token 2 after one layer, token 1 at (0, 1)."""
    return ar.pi() + ar.apply("atan", w + tangent_coordinate(ar, theta))


def angle_map_derivative(ar, w, theta):
    """f'(th) = (1 + u^2) / (2 (1 + (w + u)^2))."""
    u = tangent_coordinate(ar, theta)
    return (1 + u * u) / (2 * (1 + (w + u) * (w + u)))


def closed_form_angle(ar, w, name: str):
    """theta_A = pi - atan(sqrt(w^2 - 1)), theta_B = pi + atan(sqrt(w^2 - 1))."""
    offset = ar.apply("atan", ar.sqrt_nonneg(w * w - 1))
    return ar.pi() - offset if name == "A" else ar.pi() + offset


def _strictly_inside(lo: Fraction, x: arb, hi: Fraction) -> bool:
    return bool(BALL.number(lo) < x) and bool(x < BALL.number(hi))


def _on_arc(lo: Fraction, hi: Fraction) -> bool:
    half_pi = BALL.pi() / 2
    return lo < hi and bool(half_pi < BALL.number(lo)) and bool(BALL.number(hi) < 3 * half_pi)


def _fixed_point(found: Found, w: arb, name: str, box) -> arb | None:
    """Interval Newton on g = f - id over the box (N = m - g(m)/g'(box) inside the box: exactly one
    zero there), and the closed form inside it too; the enclosure of the zero, or None."""
    lo, hi = Fraction(box[0]), Fraction(box[1])
    if not found.require(_on_arc(lo, hi), f"the box of theta_{name} is not inside the arc (pi/2, 3pi/2)"):
        return None
    m = BALL.number((lo + hi) / 2)
    slope = angle_map_derivative(BALL, w, hull(lo, hi)) - 1
    if not found.require(slope > 0 or slope < 0, f"g' may vanish on the box of theta_{name}"):
        return None
    image = m - (angle_map(BALL, w, m) - m) / slope
    inside = _strictly_inside(lo, image, hi)
    if not found.require(inside, f"interval Newton does not map the box of theta_{name} into itself"):
        return None
    named = _strictly_inside(lo, closed_form_angle(BALL, w, name), hi)
    return image if found.require(named, f"the box of theta_{name} does not hold {name}'s closed form") else None


def evaluate(inputs: dict, witness: dict) -> Found:
    """The four statements of the certificate (certify_checker.wu_fig1's docstring), in ball arithmetic."""
    found = Found()
    w_exact = Fraction(inputs["w"])
    w = BALL.number(w_exact)
    a_min, T = Fraction(witness["token1"]["a_min"]), witness["token1"]["T"]
    a = BALL.number(a_min)
    M = T * w - BALL.sqrt_nonneg(1 - a * a) / a
    if found.require(M > 0, "T w - sqrt(1 - a_min^2)/a_min is not positive"):
        u = 1 / BALL.sqrt_nonneg(1 + M * M)
        found.values["token1_distance_bound"] = u * BALL.sqrt_nonneg(1 + u * u)
    theta = {name: _fixed_point(found, w, name, witness[f"theta_{name}"]) for name in ("A", "B")}
    if theta["A"] is not None:
        slope_A = angle_map_derivative(BALL, w, theta["A"])
        found.require(slope_A > 1, "f' > 1 at A is not proven")
        found.require(theta["A"].sin() > 0, "A's second coordinate is not proven positive")
        found.values.update(theta_A=theta["A"], A_x=theta["A"].cos(), A_y=theta["A"].sin(), fprime_A=slope_A)
    if theta["B"] is not None:
        slope_B = angle_map_derivative(BALL, w, theta["B"])
        found.require(slope_B < 1, "f' < 1 at B is not proven")
        found.require(theta["B"].sin() < 0, "B's second coordinate is not proven negative")
        found.values.update(theta_B=theta["B"], B_x=theta["B"].cos(), B_y=theta["B"].sin(), fprime_B=slope_B)
    cuts = [Fraction(c) for c in witness["trapping_cuts"]]
    if found.require(_on_arc(cuts[0], cuts[-1]), "the trapping arc is not inside (pi/2, 3pi/2)"):
        slopes = [angle_map_derivative(BALL, w, hull(c, d)) for c, d in pairwise(cuts)]
        for (c, d), slope in zip(pairwise(cuts), slopes):
            if not found.require(slope > 0 and slope < 1, f"0 < f' < 1 is not proven on [{c}, {d}]"):
                break
        else:
            found.values["fprime_on_trapping_arc"] = functools.reduce(arb.union, slopes)
        if theta["B"] is not None:
            found.require(_strictly_inside(cuts[0], theta["B"], cuts[-1]), "theta_B is not inside the trapping arc")
    if theta["B"] is not None:
        det = -theta["B"].cos()
        found.require(det > 0, "det [(0, 1), B] > 0 is not proven")
        found.values["det_rank2"] = det
    found.claims = claims(w_exact, a_min, T, witness)
    return found


def claims(w: Fraction, a_min: Fraction, T: int, witness: dict) -> list[str]:
    """The statements a certified certificate proves, word for word (the checker states them too)."""
    box = {name: "[{}, {}]".format(*map(Fraction, witness[f"theta_{name}"][:2])) for name in ("A", "B")}
    arc = f"[{Fraction(witness['trapping_cuts'][0])}, {Fraction(witness['trapping_cuts'][-1])}]"
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


def _snap(x: arb, bits: int, down: bool) -> Fraction:
    """The lower (down) or upper end of the ball x rounded outwards to a multiple of 2^-bits: short exact strings
    for the witness."""
    mantissa, exponent = (x.lower() if down else x.upper()).mid().man_exp()
    scaled = Fraction(int(mantissa)) * Fraction(2) ** (int(exponent) + bits)
    return Fraction(math.floor(scaled) if down else math.ceil(scaled), 2**bits)


def _theta(ar, u):
    """The angle th on (pi/2, 3pi/2) with tan(th/2 + pi/4) = u < 0."""
    return 2 * (ar.pi() + ar.apply("atan", u)) - ar.pi() / 2


def _trapping_cuts(w: Fraction, lo: Fraction, hi: Fraction, depth_limit: int) -> list[Fraction]:
    """Bisect [lo, hi] until f' < 1 is proven on every piece (at the working precision)."""
    wb = BALL.number(w)
    pieces, cuts = [(lo, hi, 0)], [lo]
    while pieces:
        c, d, depth = pieces.pop()
        slope = angle_map_derivative(BALL, wb, hull(c, d))
        if (slope > 0 and slope < 1) or depth >= depth_limit:
            cuts.append(d)
        else:
            mid = (c + d) / 2
            pieces += [(mid, d, depth + 1), (c, mid, depth + 1)]  # left piece first
    return cuts


def witness(w: Fraction, precision: int) -> dict:
    """The untrusted witness for w: small dyadic boxes around theta_A and theta_B, token 1's a_min and T, and the
    cuts of the trapping arc around theta_B, bisected until 0 < f' < 1 is proved on every piece.  All at
    `precision` bits: the closed forms in float64 lost A and B as w nears 1 (theta_B - pi = atan sqrt(w^2 - 1)) or
    grows (theta_A - pi/2 about 1/w), and left such w undecided at every precision."""
    with working(precision):
        wb, half_pi = BALL.number(w), BALL.pi() / 2
        r = BALL.sqrt_nonneg(wb * wb - 1)
        theta = {name: closed_form_angle(BALL, wb, name) for name in ("A", "B")}
        # the smallest feature: the gap between A and B, or an equilibrium's distance to the arc's ends; the
        # witness's grid 2^-16 of it at least
        scale = min((theta["B"] - theta["A"]).mid(), (theta["A"] - half_pi).mid(), (3 * half_pi - theta["B"]).mid())
        mantissa, exponent = scale.man_exp()
        bits = max(48, 16 - int(exponent) - int(mantissa).bit_length())
        # the boxes a 64th of it wide: their f' (a tangent near pi/2 for large w) must stay off 1
        radius = arb(2) ** -30 if scale / 64 > arb(2) ** -30 else scale / 64
        boxes = {f"theta_{k}": [str(_snap(t - radius, bits, True)), str(_snap(t + radius, bits, False))]
                 for k, t in theta.items()}
        # f' < 1 exactly for u = tan(th/2 + pi/4) in (-2w + sqrt(2w^2 - 1), 0); B sits at u = r - w.
        u_edge, u_B = -2 * wb + BALL.sqrt_nonneg(2 * wb * wb - 1), r - wb
        lo = _snap(_theta(BALL, u_edge + (u_B - u_edge) / 8), bits, False)
        end_gap = 3 * half_pi - theta["B"]
        hi = _snap(3 * half_pi - (arb(2) ** -10 if end_gap / 4 > arb(2) ** -10 else end_gap / 4), bits, True)
        cuts = _trapping_cuts(w, lo, hi, MAX_CUT_DEPTH + bits - 48)
    return {
        "token1": {"a_min": str(TOKEN1_A_MIN), "T": TOKEN1_T},
        **boxes,
        "trapping_cuts": [str(c) for c in cuts],
    }


def _summary(found, witness: dict) -> list[str]:
    v = found.values
    extra = []
    if "fprime_on_trapping_arc" in v:
        # rounded up: a bound to nearest could print below the upper end the checker confirmed.  The value is the
        # union of the pieces' balls, each proven < 1 (it is stated only then); near w = 1 the union's radius,
        # rounded up to arb's 30 bits, takes its upper end past 1, where the printed bound would say less than
        # was proven and seem to contradict it
        upper = exact_value(v["fprime_on_trapping_arc"].upper())
        shown = f"<= {decimal(upper, down=False, digits=6)}" if upper < 1 else "< 1 on each piece"
        extra.append(f"  f' on the trapping arc   {shown}")
    cuts = witness["trapping_cuts"]
    # rounded inwards: the printed arc stays inside the certified one
    low, high = decimal(Fraction(cuts[0]), down=False, digits=7), decimal(Fraction(cuts[-1]), down=True, digits=7)
    extra.append(f"  trapping arc: [{low}, {high}] in {len(cuts) - 1} pieces")
    return value_lines(found, ("theta_A", "A_x", "A_y", "fprime_A", "theta_B", "B_x", "B_y", "fprime_B",
                               "det_rank2", "token1_distance_bound"), extra)


def build(args) -> Outcome:
    """Run `certify counterexample wu-fig1`: search the witness, evaluate it in ball arithmetic and have the
    checker confirm the certificate (BadInput for a bad --w)."""
    w = parse_w(args.w)
    inputs = {"w": str(w)}
    return certify_named(KIND, evaluate, inputs, lambda p: witness(w, p), _summary, limits=checker_limits(args),
                         stage=stage_of(args), least={"trapping_cuts": ["0", "0"]})  # an arc in one piece at least
