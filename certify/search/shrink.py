"""Shrinking a counterexample to a simple one that still certifies.

"Simple", decided before shrinking (Hypothesis's rule): fewer tokens first, then shorter
numbers (entries on a coarser dyadic grid 2^-k), then more zeros.  The moves, in that order:
    1. drop a token (while n > 2), with its row and column of a mask;
    2. round every matrix (X and the layer's matrices) to the grid 2^-k for decreasing k, then
       each matrix alone to coarser grids still;
    3. halve a layer's matrix (towards 0: for A, a smaller L = a D^2) while it still fails and its
       entries stay on their grid (1024 -> 512 -> ... -> 1, never 1/2: no longer numbers);
    4. set a whole row of a matrix to 0, then a whole column, then single entries (a d x d A is d^2 checks
       one entry at a time, and most of a large counterexample's entries do nothing: 2 d checks clear them).
The moves are repeated in rounds until a round keeps none (a later move can enable an earlier
one).  In a stack every layer's matrices are moved (named "<field>@<layer>"); a move that breaks the
claim's hypotheses (one V shared by every layer, a connected mask) is recorded and not kept.  A
move is kept only when `certify.engine.check` still says violated (a verdict the independent
checker has confirmed); the search that proposed the configuration is never trusted.  Every
attempt is recorded, so a reader sees what was tried and why the result is (1-)minimal for
these moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from certify import engine
from certify.core import config, masks
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits
from certify.core.precision import START_PRECISION
from certify.errors import BadInput

MATRIX_FIELDS = ("A", "W_Q", "W_K", "V")
# Grids 2^-k tried from fine to coarse; k < 0 are multiples of 2^|k| (large entries of A).
GRIDS = (40, 32, 24, 20, 16, 12, 10, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3, -4, -5, -6, -8, -10)
GIVE_UP_AFTER = 3  # consecutive failed grids before a coarser one is not tried
MAX_ROUNDS = 4


@dataclass
class Step:
    """One attempted move of the shrinker ("drop token 2", "round A to the grid 2^-4", ...) and whether the
    configuration it gave was still certified violated (so kept)."""

    move: str
    kept: bool


@dataclass
class Shrunk:
    """The simplest configuration found, its violated verdict, and every move attempted on the way."""

    # (case, its violated Result with the checker-confirmed certificate): one attribute, replaced in one
    # assignment, so that a Ctrl-C never leaves a case paired with another case's certificate
    pair: tuple[config.Case, engine.Result]
    steps: list[Step] = field(default_factory=list)

    @property
    def case(self) -> config.Case:
        """The simplest configuration found (still certified violated)."""
        return self.pair[0]

    @property
    def result(self) -> engine.Result:
        """Its violated Result, with the certificate the checker confirmed."""
        return self.pair[1]

    @property
    def kept(self) -> list[str]:
        """The moves that were kept, in the order they were made."""
        return [step.move for step in self.steps if step.kept]


def simplify(shrunk: Shrunk, claim: str | None, bound: str | None, *, max_prec: int,
             limits: Limits = DEFAULT_LIMITS, on_move: Callable[[str], None] | None = None) -> None:
    """Shrink in place: at every moment (a Ctrl-C included) `shrunk` holds a certified violation.  `on_move(move)`
    is told of each move before it is certified (progress: a large configuration takes hundreds of checks)."""

    def attempt(move: str, candidate: config.Case, lowers_L: bool = False) -> bool:
        """Record the move; keep the candidate when it is still certified violated.  The check starts at the
        precision the current counterexample took: a move leaves L = a D^2 about where it was, and with it the
        precision it needs (848 bits at L = 1024, five rungs up from 53, each a full evaluation); but for a move
        that lowers L (halving A), which starts from the lowest again."""
        if on_move is not None:
            on_move(move)
        start = START_PRECISION if lowers_L else min(shrunk.result.precision, max_prec)
        try:
            outcome = engine.check(candidate, claim=claim, bound=bound, max_prec=max_prec, start_prec=start,
                                   limits=limits)
        except BadInput:  # the move broke a hypothesis (one shared V, a connected mask): not a candidate
            shrunk.steps.append(Step(move, False))
            return False
        kept = outcome.verdict == engine.VIOLATED
        if kept:
            shrunk.pair = (candidate, outcome)
        shrunk.steps.append(Step(move, kept))
        return kept

    # the passes again until none simplifies further: a later move can enable an earlier one
    for _ in range(MAX_ROUNDS):
        kept_before = len(shrunk.kept)
        _shrink_pass(shrunk, attempt)
        if len(shrunk.kept) == kept_before:
            break


def _shrink_pass(shrunk: Shrunk, attempt) -> None:
    """One round of the moves, in the order of the module docstring."""
    token = shrunk.case.n - 1
    while token >= 0 and shrunk.case.n > 2:
        attempt(f"drop token {token}", _drop_token(shrunk.case, token))
        token = min(token - 1, shrunk.case.n - 1)

    finest = _coarsen(shrunk, attempt, names=None, start=0)
    for name in _matrix_names(shrunk.case):
        _coarsen(shrunk, attempt, names=(name,), start=finest + 1)

    for name in _matrix_names(shrunk.case)[1:]:  # the layers' matrices; halving X only rescales L again
        while _halvable(_get(shrunk.case, name)) and attempt(
                f"halve {_label(shrunk.case, name)}", _set(shrunk.case, name, _halved(_get(shrunk.case, name))),
                lowers_L=True):
            pass

    for name in _matrix_names(shrunk.case):
        _zero(shrunk, attempt, name)


def _zero(shrunk: Shrunk, attempt, name: str) -> None:
    """Set the named matrix's nonzero rows to 0, then its nonzero columns, then its nonzero entries, one at a time;
    a row or column of one nonzero entry is left to the entries (the same move, named as the entry)."""
    rows, cols = len(_get(shrunk.case, name)), len(_get(shrunk.case, name)[0])
    lines = [(f"row {i}", [(i, j) for j in range(cols)]) for i in range(rows)] + \
            [(f"column {j}", [(i, j) for i in range(rows)]) for j in range(cols)]
    for what, entries in lines:
        if sum(_get(shrunk.case, name)[i][j] != 0 for i, j in entries) > 1:
            zeroed = _with_entries(shrunk.case, name, entries, Fraction(0))
            attempt(f"set {what} of {_label(shrunk.case, name)} to 0", zeroed)
    for i in range(rows):
        for j in range(cols):
            if _get(shrunk.case, name)[i][j] != 0:
                zeroed = _with_entries(shrunk.case, name, [(i, j)], Fraction(0))
                attempt(f"set {_label(shrunk.case, name)}[{i}][{j}] = 0", zeroed)


def _coarsen(shrunk: Shrunk, attempt, names, start: int) -> int:
    """Round the named matrices (all when None) to ever coarser grids; the index of the last kept grid."""
    targets = names or _matrix_names(shrunk.case)  # rounding keeps every matrix, so the names stay
    last_kept, failures = start - 1, 0
    for index in range(start, len(GRIDS)):
        k = GRIDS[index]
        candidate = shrunk.case
        for name in targets:
            candidate = _set(candidate, name, _round(_get(candidate, name), k))
        if candidate == shrunk.case:  # already on this grid
            last_kept, failures = index, 0
            continue
        if attempt(f"round {', '.join(_label(shrunk.case, n) for n in targets)} to the grid 2^{-k}", candidate):
            last_kept, failures = index, 0
        else:
            failures += 1
            if failures >= GIVE_UP_AFTER:
                break
    return last_kept


def _round(matrix: config.Matrix, k: int) -> config.Matrix:
    step = Fraction(2) ** -k
    return tuple(tuple(round(v / step) * step for v in row) for row in matrix)


def _halvable(matrix: config.Matrix) -> bool:
    """Halving keeps every entry on the matrix's current grid (the largest denominator does not grow)."""
    entries = [v for row in matrix for v in row]
    grid = max(v.denominator for v in entries)
    return any(entries) and all((v / 2).denominator <= grid for v in entries)


def _halved(matrix: config.Matrix) -> config.Matrix:
    return tuple(tuple(v / 2 for v in row) for row in matrix)


def _matrix_names(case: config.Case) -> list[str]:
    """"X" and the matrices of every layer present, as "X" or "<field>@<layer>"."""
    names = ["X"]
    for t, layer in enumerate(case.layers):
        names += [f"{name}@{t}" for name in MATRIX_FIELDS if getattr(layer, name) is not None]
    return names


def _label(case: config.Case, name: str) -> str:
    return name.removesuffix("@0") if len(case.layers) == 1 else name


def _get(case: config.Case, name: str) -> config.Matrix:
    if name == "X":
        return case.X
    field_name, t = name.split("@")
    return getattr(case.layers[int(t)], field_name)


def _set(case: config.Case, name: str, matrix: config.Matrix) -> config.Case:
    if name == "X":
        return replace(case, X=matrix)
    field_name, t = name.split("@")
    layers = list(case.layers)
    layers[int(t)] = replace(layers[int(t)], **{field_name: matrix})
    return replace(case, layers=tuple(layers))


def _with_entries(case: config.Case, name: str, entries, value: Fraction) -> config.Case:
    matrix = [list(row) for row in _get(case, name)]
    for i, j in entries:
        matrix[i][j] = value
    return _set(case, name, tuple(tuple(row) for row in matrix))


def _drop_token(case: config.Case, token: int) -> config.Case:
    X = case.X[:token] + case.X[token + 1:]
    layers = tuple(layer if layer.mask is None else replace(layer, mask=_without(layer.mask, token))
                   for layer in case.layers)
    return replace(case, X=X, layers=layers)


def _without(mask: tuple[tuple[bool, ...], ...], token: int) -> tuple[tuple[bool, ...], ...]:
    """The mask of the tokens left: a named mask (attack --mask) is that mask on one token fewer, since the rows and
    columns of the others kept would take sliding's [[1, 1, 0], [1, 1, 1], [0, 1, 1]] without its middle token to
    [[1, 0], [0, 1]], no attention at all, a counterexample outside the masks searched; any other loses its row
    and column.  (A complete mask, sliding on two tokens, the layer stores as none.)"""
    for name in masks.NAMED_MASKS:
        if mask == _booleans(masks.named_mask(name, len(mask))):
            return _booleans(masks.named_mask(name, len(mask) - 1))
    return tuple(row[:token] + row[token + 1:] for i, row in enumerate(mask) if i != token)


def _booleans(rows: masks.Mask) -> tuple[tuple[bool, ...], ...]:
    return tuple(tuple(v == 1 for v in row) for row in rows)
