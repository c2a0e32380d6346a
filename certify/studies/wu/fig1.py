"""The counterexample of Wu et al.'s Figure 1 (claim ln.counterexample), certified.

    certify counterexample wu-fig1 --w 2 [--out CERT]

The mathematics and exactly what is certified are in certify_checker.wu_fig1.  Here: the
untrusted search for the witness (float64 closed forms, boxes snapped to dyadic rationals, the
trapping arc cut until every piece passes), and the hand-over to the checker.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import ctx

from certify_checker import wu_fig1 as checker
from certify_checker.exact import ball
from certify.engine.counterexamples import Outcome, certify_by_checker, value_lines
from certify.errors import BadInput

HELP = "Wu et al. Figure 1: N = 2, W_V = [[1, w], [0, 1]], post-LN keeps rank 2"
TOKEN1_A_MIN = Fraction(1, 10)  # starts of token 1 with first coordinate >= 1/10 ...
TOKEN1_T = 100  # ... are within the certified distance of (0, 1) from layer 100 on
MAX_CUT_DEPTH = 40


def add_arguments(parser) -> None:
    parser.add_argument("--w", default="2", help="the entry w > 1 of W_V, exact: '2', '3/2', '1.25' (default 2)")


def parse_w(text: str) -> Fraction:
    try:
        w = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise BadInput(f"--w must be an exact number such as 2, 3/2 or 1.25, got {text!r}") from None
    if w <= 1:
        raise BadInput(f"--w must be greater than 1 (for w <= 1 there is no equilibrium B), got {w}")
    return w


def _snap(x: float, bits: int, down: bool) -> Fraction:
    """x rounded outwards to a multiple of 2^-bits: short exact strings for the witness."""
    scaled = x * 2.0**bits
    return Fraction(math.floor(scaled) if down else math.ceil(scaled), 2**bits)


def _theta(u: float) -> float:
    """The angle th on (pi/2, 3pi/2) with tan(th/2 + pi/4) = u < 0."""
    return 2 * (math.pi + math.atan(u)) - math.pi / 2


def _trapping_cuts(w: Fraction, lo: Fraction, hi: Fraction) -> list[Fraction]:
    """Bisect [lo, hi] until f' < 1 is proven on every piece (at the working precision)."""
    wb = ball(w)
    pieces, cuts = [(lo, hi, 0)], [lo]
    while pieces:
        c, d, depth = pieces.pop()
        slope = checker.angle_map_derivative(wb, checker.interval(c, d))
        if (slope > 0 and slope < 1) or depth >= MAX_CUT_DEPTH:
            cuts.append(d)
        else:
            mid = (c + d) / 2
            pieces += [(mid, d, depth + 1), (c, mid, depth + 1)]  # left piece first
    return cuts


def witness(w: Fraction, precision: int) -> dict:
    wf = float(w)
    r = math.sqrt(wf * wf - 1)
    theta = {"A": math.pi - math.atan(r), "B": math.pi + math.atan(r)}
    radius = min(2.0**-30, (theta["B"] - theta["A"]) / 8, (theta["A"] - math.pi / 2) / 8)
    boxes = {f"theta_{k}": [str(_snap(t - radius, 48, True)), str(_snap(t + radius, 48, False))]
             for k, t in theta.items()}
    # f' < 1 exactly for u = tan(th/2 + pi/4) in (-2w + sqrt(2w^2 - 1), 0); B sits at u = r - w.
    u_edge, u_B = -2 * wf + math.sqrt(2 * wf * wf - 1), r - wf
    lo = _snap(_theta(u_edge + (u_B - u_edge) / 8), 20, False)
    hi = _snap(3 * math.pi / 2 - min(2.0**-10, (3 * math.pi / 2 - theta["B"]) / 4), 48, True)
    with ctx.workprec(precision):
        cuts = _trapping_cuts(w, lo, hi)
    return {
        "token1": {"a_min": str(TOKEN1_A_MIN), "T": TOKEN1_T},
        **boxes,
        "trapping_cuts": [str(c) for c in cuts],
    }


def _summary(found, witness: dict) -> list[str]:
    v = found.values
    extra = []
    if "fprime_on_trapping_arc" in v:
        extra.append(f"  f' on the trapping arc   <= {float(v['fprime_on_trapping_arc'].upper()):.6g}")
    cuts = witness["trapping_cuts"]
    extra.append(f"  trapping arc: [{float(Fraction(cuts[0])):.6f}, {float(Fraction(cuts[-1])):.6f}] in {len(cuts) - 1} pieces")
    return value_lines(found, ("theta_A", "A_x", "A_y", "fprime_A", "theta_B", "B_x", "B_y", "fprime_B",
                               "det_rank2", "token1_distance_bound"), extra)


def build(args) -> Outcome:
    w = parse_w(args.w)
    inputs = {"w": str(w)}
    return certify_by_checker(checker.KIND, checker, inputs, lambda p: witness(w, p), _summary)
