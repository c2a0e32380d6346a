"""The reductions: a region of configurations mapped onto a box of few variables.

A region is every one-layer pure self-attention with n tokens in dimension d, ||x_i|| <= radius
and ||A||_2 <= norm.  Both reductions express D(PX)/D as F = m(w + L/2) - m(w - L/2), m the
tilted mean of positions 0 = tau_1 <= ... <= tau_n = 1 (certify.prove.tilt), with L = a D^2.

two-tokens (n = 2, every d; proofs/region_two_tokens.py): y_1 - y_2 = (p_11 - p_21)(x_1 - x_2),
    so D(PX)/D = |sigma(u) - sigma(v)|, u = x_1^T A delta, v = x_2^T A delta, |u - v| <= a D^2.
    F grows with |u - v| and is even in w = (u + v)/2; |w| <= a ||x_1 + x_2|| D / 2 <= norm r^2
    (||x_1 + x_2||^2 + D^2 <= 4 r^2, and D sqrt(4 r^2 - D^2) <= 2 r^2).  Box: w in [0, norm r^2],
    L in [0, 4 norm r^2].
line (d = 1, n >= 3; proofs/region_line.py): sorted tokens t_1 <= ... <= t_n, tau_j =
    (t_j - t_1)/D; row i of P is the tilt of the positions by theta_i = alpha D t_i, whose extremes
    are w +- L/2 with w = alpha D (t_1 + t_n)/2.  |w| <= norm D (r - D/2) <= norm r^2 / 2, and the
    reflection t -> -t maps w to -w.  Box: w in [0, norm r^2 / 2], L in [0, 4 norm r^2], the
    inner positions in [0, 1] (in any order: the formula does not need them sorted).
Biases: a query bias adds u_b^T x_j to the scores, which moves w to any real number and leaves L.
For two tokens F decreases in |w|, so the box still bounds every biased layer; for the line it does
not (positions 0, 0, 1 peak at w = ln 2, outside the box when norm r^2 / 2 < ln 2): a line proof
covers scores x_i^T A x_j only (SCOPE, shown with every verdict).
The boxes contain every point the region reaches (they may contain more): a proof over the box
proves the claim on the region; a point of the box that violates it is reported only once a
configuration of the region realises a violation that `certify check` certifies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certify.core import numbers
from certify.core.arguments import Spelling
from certify.errors import BadInput
from certify.prove.tilt import Interval

# The closing methods each reduction admits (certify.prove.closing; the checker has the same menu).
METHODS = {
    "two-tokens": ("direct", "divided", "monotone-w/direct", "monotone-w/divided", "monotone-w/identity"),
    "line": ("ordered", "direct", "divided", "chord", "rise", "monotone-t/direct", "monotone-t/divided", "monotone-t/chord",
             "monotone-t/rise", "monotone-t/pair"),
}
LEMMAS = {
    "two-tokens": ["proofs/region_two_tokens.py", "proofs/region_tilt.py"],
    "line": ["proofs/region_line.py", "proofs/region_tilt.py", "proofs/region_two_tokens.py"],
}
# Which layers a proof covers beyond the scores x_i^T A x_j (proofs/region_two_tokens.py, region_line.py);
# the checker states the same words with its confirmation.
SCOPE = {"two-tokens": "with or without query/key biases", "line": "no query/key biases"}
MAX_TOKENS = 8
MAX_SPAN = 2 ** 40  # a D^2 beyond this is absurd, not ambitious (and float64 would not realise its points)


@dataclass(frozen=True)
class Region:
    """Every one-layer pure self-attention with n tokens in dimension d (None: every d), ||x_i|| <= radius and
    ||A||_2 <= norm (exact rationals)."""
    n: int
    d: int | None  # None: every dimension (n = 2)
    radius: Fraction
    norm: Fraction

    def as_json(self) -> dict:
        """The region as JSON (radius and norm as exact rational strings)."""
        return {"n": self.n, "d": self.d, "radius": str(self.radius), "norm": str(self.norm)}


@dataclass(frozen=True)
class Reduction:
    """A region mapped onto a box: the reduction's name (two-tokens or line), its variables (w, L, then the
    inner positions t2, t3, ...) and the root box, one exact interval per variable."""
    name: str
    variables: tuple[str, ...]
    root: tuple[Interval, ...]

    @property
    def scope(self) -> str:
        """Whether the proof covers layers with query/key biases (SCOPE)."""
        return SCOPE[self.name]

    @property
    def methods(self) -> tuple[str, ...]:
        """The closing methods this reduction admits (certify.prove.closing; the checker has the same menu)."""
        return METHODS[self.name]


# the region's parameters as `certify prove` and certify.prove name them where a value is refused
OPTIONS = Spelling.command(("n", "d", "radius", "norm", "time_limit"))
KEYWORDS = Spelling.keywords(OPTIONS.names)


def region(n: int, d: int | None, radius, norm, names: Spelling = OPTIONS) -> Region:
    """The Region of n tokens in dimension d with ||x_i|| <= radius, ||A||_2 <= norm (both taken as exact
    Fractions); BadInput when n is not in [2, MAX_TOKENS], d < 1, radius or norm <= 0, or the region
    reaches a D^2 = 4 norm radius^2 above 2^40, naming the parameter as `names` spells it."""
    radius, norm = Fraction(radius), Fraction(norm)
    # each refused with its own name and value (one message named --radius and --norm whichever was wrong)
    if not 2 <= n <= MAX_TOKENS:
        raise BadInput(f"{names.option('n')} must be between 2 and {MAX_TOKENS}, got {n}")
    if d is not None and d < 1:
        raise BadInput(f"{names.option('d')} must be at least 1, got {d}")
    for key, value in (("radius", radius), ("norm", norm)):
        if value <= 0:
            raise BadInput(f"{names.option(key)} must be positive, got {value}")
    if 4 * norm * radius ** 2 > MAX_SPAN:
        raise BadInput("the region reaches a D^2 = 4 norm radius^2 above 2^40")
    # the boxes are halvings of [0, 4 norm radius^2] (at most 90 deep: 28 more digits), written exactly
    if numbers.digits(4 * norm * radius ** 2) > numbers.MAX_DIGITS - 100:
        raise BadInput(f"4 norm radius^2 has more than {numbers.MAX_DIGITS - 100} digits above or "
                       "below the fraction bar: the proof's boxes could not be written down")
    return Region(n, d, radius, norm)


def reduce(r: Region) -> Reduction:
    """The reduction of a region: two-tokens for n = 2 (box w in [0, norm r^2], L in [0, 4 norm r^2]) or line
    for d = 1 (w in [0, norm r^2 / 2], L as before, inner positions in [0, 1]); BadInput for any other
    region."""
    span = 4 * r.norm * r.radius ** 2  # a D^2 <= norm (2 r)^2
    if r.n == 2:
        return Reduction("two-tokens", ("w", "L"), ((Fraction(0), r.norm * r.radius ** 2), (Fraction(0), span)))
    if r.d == 1:
        inner = tuple(f"t{j}" for j in range(2, r.n))
        root = ((Fraction(0), r.norm * r.radius ** 2 / 2), (Fraction(0), span)) + ((Fraction(0), Fraction(1)),) * (r.n - 2)
        return Reduction("line", ("w", "L") + inner, root)
    raise BadInput(f"no reduction covers n = {r.n} tokens in d = {r.d or 'any'} dimensions "
                   "(covered: n = 2 in every d; d = 1 with n up to 8)")


def realise(r: Region, point: tuple[Fraction, ...]) -> dict | None:
    """A configuration of the region near the reduced point (w, L, tau...), or None.

    Tokens on the first axis: alpha = norm, D = sqrt(L / norm) and the centre c = w / (alpha D), each to
    SIGNIFICANT bits, t_j = c - D/2 + D tau_j.  The caller certifies what it violates.
    """
    w, L, inner = point[0], point[1], point[2:]
    if L <= 0:
        return None
    D = _root(L / r.norm)
    centre = _rounded(w / (r.norm * D))
    taus = [Fraction(0), *inner, Fraction(1)]
    if abs(centre) + D / 2 > r.radius:
        return None
    d = r.d or 1
    X = [[str(centre - D / 2 + D * tau)] + ["0"] * (d - 1) for tau in taus]
    A = [["0"] * d for _ in range(d)]
    A[0][0] = str(r.norm)
    return {"X": X, "A": A}


# Significant bits of D and of the centre: short exact texts at any scale of the region (through float64,
# L / norm = 4e400 overflowed, an internal error, and D = 1e-10 rounded to 0 at a fixed denominator, so a
# violated bound stayed undecided in a region of small tokens).
SIGNIFICANT = 32


def _rounded(q: Fraction) -> Fraction:
    """q to SIGNIFICANT bits (a dyadic rational), whatever its magnitude."""
    if q == 0:
        return q
    unit = Fraction(2) ** (SIGNIFICANT - (abs(q.numerator).bit_length() - q.denominator.bit_length()))
    return Fraction(round(q * unit)) / unit


def _root(q: Fraction) -> Fraction:
    """sqrt(q), q > 0, to about SIGNIFICANT bits, from integers (no float range)."""
    unit = Fraction(2) ** (SIGNIFICANT + 1 - (q.numerator.bit_length() - q.denominator.bit_length()) // 2)
    return Fraction(math.isqrt(math.floor(q * unit * unit))) / unit
