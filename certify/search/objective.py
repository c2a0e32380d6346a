"""The attack's objective: how badly one configuration violates a claim or a bound.

Untrusted, like all of certify.search: it ranks candidates and never decides anything.

Parametrisation (one layer, n tokens in d dimensions).  Scores x_i^T A x_j are unchanged by
(A, X) -> (A / c^2, c X), so P and every ratio D'/D are too: for a target that scales like D
(every claim, and bounds such as (1 - exp(-a D^2)) D), the diameter is normalised to D = 1 and
the scale lives in one number, L = a D^2.  A point is a shape and L:
    X = s X~ / D(X~),   A = (L / s^2) A~ / ||A~||_2,   V = V~ (when the layer has a value matrix)
with s = 1 for such targets; a target that does not scale like D (probed numerically, see
`scales_like_D`) gets s = exp(shape[-1]) as one more coordinate.  A head is searched in one of
the forms of certify.search.heads: the entries of A~, or (a thin head, `d_k`) those of W_Q~ and
W_K~ with A~ = W_Q~ W_K~^T / sqrt(d_k), scaled as A is through both factors.  A stack of T layers (Layout)
searches X_0 and every layer's A_t (and V_t) together, all A_t scaled by the factor of A_0, so that
L = a_0 D_0^2; a mask is fixed, not searched.

Score of an inequality lhs <= rhs at D = D(X):
    log(lhs / rhs) + log((D - rhs) / (D - lhs))     (the second term only when lhs, rhs < D)
Each term has the sign of lhs - rhs, so the score is > 0 exactly when the inequality fails.  The
first term resolves small sides (the cubic regime); the second resolves contraction bounds near
saturation, where lhs and rhs agree to about exp(-L) and float64 sees 1 = 1: it compares the
gaps 1 - D'/D, the quantity in the exponent -ln(1 - D'/D) / (a D^2).  Everything is evaluated in
arb at a precision that grows with L, then read as float64: tiny numbers are fine in float64,
only 1 - tiny is not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from flint import arb

from certify import engine
from certify.core import config
from certify.core import masks
from certify.core import quantities
from certify.core.arith import BALL, FLOAT64
from certify.core.arguments import option_of
from certify.core.precision import escalate
from certify.claims import Claim
from certify.errors import BadInput, CertainlyUndefined
from certify.search import heads

# Extra bits beyond those needed to resolve exp(-1.25 L) next to 1 (see precision_for).
GUARD_BITS = 64
ESCALATIONS = 3  # precision doublings when the score's ball is still too wide to rank
SCALE_RANGE = (2.0**-10, 2.0**10)  # the diameter's range when the target does not scale like D
PROBE_SHAPES = 3  # random shapes scales_like_D tries
PROBE_OFFSETS = 2  # runs of powers of two scales_like_D puts D_0 on: steps of ln(2) / 2 = 0.35 in log D
# float64 ranks a point only when every side and D' are farther than this from 0 and from D
# (relative to D); closer, the score is evaluated in arb (see _float_resolves)
FLOAT_RESOLUTION = 1e-6
EXTREMAL_NOISE = 0.05  # of a shape near the extremal structure (its heads), against their entries of about 1
# a hidden token's scores (Layout.extremal_shape) lie this far below the others' in every row: its weight exp(-40)
HIDDEN_SCORE_GAP = 40.0
HIDDEN_STEP = 0.5  # how much nearer the origin along w the hidden token lies than the others
# the most the tokens lie away along w: float64 rounds the scores, about L R^2, by L R^2 2^-53, which moves D'/D (about
# L / 4 where L is small) by about 4 R^2 2^-53: 6e-11 here, below an extremal point's margin (attack.EXTREMAL_MARGIN);
# at L = 5e-6 an offset of 1.7e7 made float64 read collapse.tanh as violated by 4%
MAX_HIDDEN_OFFSET = 256.0
# a later layer's head against its own in a shape (Layout.rescaled), as a factor on its L_t = a_t D_t^2.  Far
# down: where L_t is small a layer contracts by about L_t / 4, and through a stack those factors compound,
# so the diameters a bound may be false at lie far below D_0 (exp(-30) from D_0 = e^4.8 took a factor of about 2^-44
# with the other heads as found).  Up to 2^16: beyond the attack's largest L, 2^14, the contraction saturates.
HEAD_SCALE_RANGE = (2.0**-64, 2.0**16)
MAX_LAYERS = 16  # stacks searched: each evaluation runs every layer


@dataclass(frozen=True)
class Layout:
    """Which stack the attack parametrises, and how a point maps to a configuration.

    `layers` T layers share the layer kind (and the fixed `mask`, a name of certify.core.masks);
    their heads and X_0 are searched together.  All A_t are scaled by one factor, so
    that a_0 D_0^2 = L (the other layers keep their ratios to A_0).  With `shared_v` one V serves
    every layer (value.bounded iterates one linear map), otherwise each layer has its own.  `d_k`:
    every head is a thin one, W_Q and W_K of d x d_k (certify.search.heads), else a d x d A.
    """

    n: int
    d: int
    with_v: bool = False
    residual: bool = False
    scale_free: bool = True  # the target scales like D: normalise D = 1
    layers: int = 1
    mask: str | None = None
    shared_v: bool = False
    d_k: int | None = None

    @property
    def head(self) -> heads.FullHead | heads.ThinHead:
        """The form every layer's head is searched in."""
        return heads.of(self.d, self.d_k)

    @property
    def value_matrices(self) -> int:
        """How many value matrices a point holds: none without V, one when shared, else one per layer."""
        return 0 if not self.with_v else 1 if self.shared_v else self.layers

    @property
    def size(self) -> int:
        """The length of a point: X's n d entries, a head's entries per layer, d^2 per value matrix, and
        the log-scale of the diameter when the target does not scale like D."""
        return (self.n * self.d + self.head.size * self.layers + self.d * self.d * self.value_matrices
                + (0 if self.scale_free else 1))

    def random_shape(self, rng: np.random.Generator) -> np.ndarray:
        """A random starting point: standard normal entries, the log-scale (if any) uniform in SCALE_RANGE."""
        shape = rng.normal(size=self.size)
        if not self.scale_free:
            shape[-1] = rng.uniform(*np.log(SCALE_RANGE))
        return shape

    def extremal_shape(self, rng: np.random.Generator, noise: float = EXTREMAL_NOISE,
                       hidden_at: float | None = None) -> np.ndarray:
        """A shape near the known extremal structure (docs/claims.md, collapse.tanh): the tokens in two
        opposite groups at +-u/2 along a random unit u, every head with u^T A u = ||A||_2 (A = u u^T), V = I;
        the heads with noise of `noise` (EXTREMAL_NOISE), so that shapes differ (it shifts the scores of a row, which
        costs the exponent about that much).  The tokens of a group coincide exactly and V is exactly I:
        tokens e apart in a group leave a gap 1 - D'/D of about e exp(-L e / 2), not 2 exp(-L / 2) (e = 0.05
        took the exponent from near 1/2 to below 0.1 at L = 70), and a V off I by e a gap of about e too.

        Random shapes in many variables rarely come near it, and where L is large its score is the only
        steep one: a bound that fails only there is found from it, or not at all in a small budget.

        For odd n the groups differ by a token, which keeps D'/D below tanh(L/4) (by a factor 8/9 as L -> 0 for
        n = 3); tanh(L/4) is approached only with the odd token hidden.  With `hidden_at` (an L) and a
        second direction w the head reaches (Layout.hides_a_token), every token lies R w away and the odd one
        HIDDEN_STEP less, with A = u u^T + w w^T: every row's score for it is L R HIDDEN_STEP = HIDDEN_SCORE_GAP
        lower than the others' at that L, or less where L is so small that R would pass MAX_HIDDEN_OFFSET.
        """
        u = rng.normal(size=self.d)
        u /= np.linalg.norm(u)
        if hidden_at is not None and self.hides_a_token:
            w = rng.normal(size=self.d)
            w -= (w @ u) * u
            w /= np.linalg.norm(w)
            offset = min(HIDDEN_SCORE_GAP / (HIDDEN_STEP * hidden_at), MAX_HIDDEN_OFFSET)
            signs = np.repeat([0.5, -0.5], self.n // 2)
            tokens = np.vstack([np.outer(rng.permutation(signs), u) + offset * w, (offset - HIDDEN_STEP) * w])
            head = self.head.aligned(u, w)
        else:
            signs = np.where(np.arange(self.n) < (self.n + 1) // 2, 0.5, -0.5)
            tokens, head = np.outer(rng.permutation(signs), u), self.head.aligned(u)
        parts = [tokens.ravel()]
        parts += [head + noise * rng.normal(size=self.head.size) for _ in range(self.layers)]
        parts += [np.eye(self.d).ravel() for _ in range(self.value_matrices)]
        shape = np.concatenate(parts + [np.zeros(0 if self.scale_free else 1)])
        if not self.scale_free:
            shape[-1] = rng.uniform(*np.log(SCALE_RANGE))
        return shape

    @property
    def hides_a_token(self) -> bool:
        """Whether extremal_shape hides a token at a given L: n odd, and a second direction the head reaches."""
        return self.n % 2 == 1 and self.d >= 2 and self.head.reaches_two_directions()

    @property
    def scales(self) -> int:
        """How many scale variables a shape has besides L (see rescaled): every later layer's head, and the
        diameter D_0 when the target does not scale like D."""
        return self.layers - 1 + (0 if self.scale_free else 1)

    def rescaled(self, shape: np.ndarray, scale: int, places) -> list[np.ndarray]:
        """The shape with scale variable `scale` (0 <= scale < self.scales) moved, once per place in [0, 1] of
        `places` along its range, on a log scale: scale t < layers - 1 multiplies the head of layer t + 1 by a
        factor in HEAD_SCALE_RANGE (its L_t = a_t D_t^2 by that factor, and so D_(t+1) and the later diameters
        when L_t is small), the last, for a target that does not scale like D, sets D_0 in SCALE_RANGE.

        These are the quantities a bound can depend on besides L: through a stack, D_t and L_t follow from the
        ratios of the heads, which random shapes keep near 1 and a local run moves by small steps, not across
        orders of magnitude (a bound false only where D_2 is near exp(-30), HEAD_SCALE_RANGE).
        """
        moved = [np.array(shape, dtype=float) for _ in places]
        if scale == self.layers - 1:
            low, high = np.log(SCALE_RANGE)
            for point, place in zip(moved, places):
                point[-1] = low + place * (high - low)
            return moved
        low, high = np.log(HEAD_SCALE_RANGE)
        start = self.n * self.d + self.head.size * (scale + 1)
        block = self.head.arrays(np.array(shape[start:start + self.head.size], dtype=float))
        for point, place in zip(moved, places):
            factor = math.exp(low + place * (high - low))
            point[start:start + self.head.size] = self.head.scaled(block, factor).ravel()
        return moved

    def arrays(self, shape: np.ndarray, L: float):
        """(X, [head_t], [V_t] or None) as float64 arrays (a head's arrays are its form's,
        certify.search.heads), or None when the shape is degenerate (D(X~) = 0 or A~_0 = 0) or its arrays
        are not finite.

        X~ and A~ are normalised, so their sizes are directions the score does not see, along which Nelder-Mead's
        steps can grow: X~ reached 1e154 (D(X~)^2 overflowing, a RuntimeWarning on stderr), and an A~_0 of
        subnormal entries scaled A to inf, which no configuration holds (an internal error)."""
        head, nd, dd = self.head, self.n * self.d, self.d * self.d
        X = shape[:nd].reshape(self.n, self.d)
        heads_at = nd + head.size * np.arange(self.layers + 1)
        Hs = [head.arrays(shape[start:end]) for start, end in zip(heads_at[:-1], heads_at[1:])]
        Vs = [shape[heads_at[-1] + k * dd:heads_at[-1] + (k + 1) * dd].reshape(self.d, self.d)
              for k in range(self.value_matrices)]
        s = 1.0 if self.scale_free else float(np.exp(np.clip(shape[-1], *np.log(SCALE_RANGE))))
        with np.errstate(all="ignore"):  # an overflow is an infinity, refused below
            diameter = math.sqrt(float(quantities.pairwise_sq_distances(FLOAT64, X).max()))
            norm = head.norm(Hs[0])
            if not diameter > 0 or not norm > 0 or not math.isfinite(diameter * norm):
                return None
            factor = (L / (s * s)) / norm
            X, Hs = s * X / diameter, [head.scaled(H, factor) for H in Hs]
        V = None if not self.with_v else Vs * self.layers if self.shared_v else Vs
        if not all(np.all(np.isfinite(m)) for m in [X, *Hs, *(V or [])]):
            return None
        return X, Hs, V

    def case(self, X: np.ndarray, H, V, name: str = "") -> config.Case:
        """The exact configuration of float64 arrays (each float is a dyadic rational); H (the heads'
        arrays) and V are lists with one per layer (or a single array, used by every layer)."""
        Hs = [H] * self.layers if isinstance(H, np.ndarray) else list(H)
        Vs = [None] * self.layers if V is None else [V] * self.layers if isinstance(V, np.ndarray) else list(V)
        mask = None if self.mask is None else tuple(tuple(v == 1 for v in row)
                                                    for row in masks.named_mask(self.mask, self.n))
        layers = tuple(config.Layer(d=self.d, **self.head.fields(H_t), V=None if V_t is None else config.exact_matrix(V_t),
                                    residual=self.residual, mask=mask) for H_t, V_t in zip(Hs, Vs))
        return config.Case(X=config.exact_matrix(X), layers=layers, name=name)

    def describe(self) -> str:
        """The stack in words, e.g. "2 layers X' = P X V^T, one V, causal mask, n = 4, d = 2"."""
        kind = "X' = X + P X V^T" if self.residual else "X' = P X V^T" if self.with_v else "X' = P X"
        where = "one layer" if self.layers == 1 else f"{self.layers} layers"
        shared = ", one V" if self.shared_v and self.layers > 1 else ""
        masked = "" if self.mask is None else f", {self.mask} mask"
        return f"{where} {kind}{shared}{masked}{self.head.describe()}, n = {self.n}, d = {self.d}"


def layout_for(claim: Claim, n: int, d: int, with_v: bool, needs_v: bool, layers: int = 1,
               mask: str | None = None, d_k: int | None = None,
               option: Callable[[str], str] = option_of) -> Layout:
    """The simplest stack of `layers` layers the claim applies to: pure attention, then with one V,
    then a V per layer, then V and a residual (each with the mask, when one is given, and thin heads
    of d_k columns, when it is given: the claim is asked about a layer with such a head).

    `with_v` (asked for) and `needs_v` (the bound uses v = ||V||_2) keep only layouts with V.  option(key): the
    parameter `key` as a refusal names it (the command's --n by default, the API's n=).
    """
    if n < 2:
        raise BadInput(f"{option('n')} must be at least 2 (the claims are about two or more tokens), got {n}")
    if d < 1:
        raise BadInput(f"{option('d')} must be at least 1, got {d}")
    if not 1 <= layers <= MAX_LAYERS:
        raise BadInput(f"{option('layers')} must be between 1 and {MAX_LAYERS}, got {layers}")
    if mask is not None:
        masks.named_mask(mask, n)  # an unknown name is bad input, said once
    d_k = heads.checked_d_k(d, d_k, option("d_k"))
    kinds = [dict(), dict(with_v=True, shared_v=True), dict(with_v=True), dict(with_v=True, residual=True)]
    if with_v or needs_v:
        kinds = kinds[1:]
    reasons = []
    for kind in kinds:
        layout = Layout(n, d, layers=layers, mask=mask, d_k=d_k, **kind)
        probe = layout.case(np.eye(n, d) + np.arange(n)[:, None], layout.head.probe(),
                            np.eye(d) if layout.with_v else None)
        reason = claim.applies(probe)
        if reason is None:
            return layout
        reasons.append(reason)
    raise BadInput(f"claim {claim.id or 'the bound'} does not apply to the layers the attack parametrises "
                   f"({reasons[0]})")


def scales_like_D(claim: Claim, layout: Layout, rng: np.random.Generator) -> bool:
    """Whether lhs/rhs is unchanged by (A, X) -> (A / c^2, c X) across the range of D_0 the search reaches.

    A numerical probe for the parametrisation only: a wrong answer costs search power, never soundness.  On
    PROBE_SHAPES random shapes, D_0 takes every value 2^(k + j / PROBE_OFFSETS) in SCALE_RANGE (the range a
    shape's last entry sets D_0 in), steps of ln(2) / PROBE_OFFSETS in log D: a target that breaks scaling
    only in a window of D_0 (a bound false only near D = e^5) is seen wherever in the range the window lies.
    Two scales (e^-1, e^1.5) missed such a window, and D_0 was then never varied.  A target that scales like D
    costs 41 float64 evaluations per shape, once per attack.

    Each offset j is a run of powers of two, compared within itself: X by 2^k and A by 2^-2k are exact in
    float64, so a target that scales like D gives the same ratios bit for bit, however much rounding a stack's
    collapse leaves in them (the tolerance is for library routines that need not be exactly homogeneous).
    Scales not a power of two apart made (1 - exp(-a D^2 / 3)) D on 4 to 16 collapsing layers look as if it
    did not scale like D on nearly every seed: its later layers' diameters, 1e-17 of D_0, are rounding.
    """
    probe = replace(layout, scale_free=False)
    low, high = (math.log2(end) for end in SCALE_RANGE)
    for _ in range(PROBE_SHAPES):
        shape = probe.random_shape(rng)
        for offset in np.arange(PROBE_OFFSETS) / PROBE_OFFSETS:
            shape[-1] = offset * math.log(2)  # D_0 near 2^offset, then scaled by powers of two only
            built = probe.arrays(shape, 1.0)
            if built is None:  # a degenerate shape (D(X~) = 0) says nothing
                continue
            X, H, V = built
            reference = None
            for k in range(math.ceil(low - offset), math.floor(high - offset) + 1):
                ratios = _ratios(claim, probe, np.ldexp(X, k), [probe.head.scaled(H_t, math.ldexp(1.0, -2 * k))
                                                                for H_t in H], V)
                if reference is None:
                    reference = ratios
                elif not np.allclose(reference, ratios, rtol=1e-7, atol=1e-12, equal_nan=True):
                    return False
    return True


def _ratios(claim: Claim, layout: Layout, X: np.ndarray, H, V) -> np.ndarray:
    """lhs/rhs of every comparison of the claim in float64 (inf or nan where a side is 0 or overflows)."""
    with np.errstate(all="ignore"):
        _, comparisons = engine.evaluate(FLOAT64, layout.case(X, H, V), claim, {})
        return np.array([float(c.lhs) for c in comparisons]) / np.array([float(c.rhs) for c in comparisons])


@dataclass(frozen=True)
class Evaluation:
    """The optimiser's view of one point: its score, log(lhs / rhs) of the worst inequality, the
    contraction exponent when the layer contracts, a D^2 as evaluated and as built, and the point."""

    score: float  # > 0: the search believes the target is violated (-inf: could not rank)
    log_ratio: float  # log(lhs / rhs) of the worst inequality
    exponent: float | None  # -ln(1 - D'/D) / (a D^2), D' = D(layer output), when D' < D
    L: float  # a D^2 as evaluated
    shape: np.ndarray
    L_param: float  # the L the point was built with (the arrays' a D^2, up to rounding)
    undefined: str = ""  # why the bound is certainly undefined at the point (unscored, score -inf), else ""

    @property
    def ratio(self) -> float:
        """lhs / rhs of the worst inequality (inf once it would overflow float64)."""
        return math.exp(self.log_ratio) if self.log_ratio < 700 else math.inf


def precision_for(L: float) -> int:
    """Bits to resolve exp(-1.25 L) next to 1, plus guard bits (escalation covers steeper bounds)."""
    return GUARD_BITS + math.ceil(1.25 * max(L, 0.0) / math.log(2))


def evaluate(claim: Claim, layout: Layout, shape: np.ndarray, L: float) -> Evaluation:
    """Score one point (see the module docstring) for the optimiser.

    float64 first (it also records the norm witnesses the ball pass needs); where float64 cannot
    resolve the sides (a side within FLOAT_RESOLUTION of 0 or of D, relative to D), arb at a
    precision that grows with L, doubled while the score's ball is too wide to rank.
    """
    built = layout.arrays(shape, L)
    if built is None:
        return _unranked(shape, L)
    case = layout.case(*built)
    witnesses: dict = {}
    with np.errstate(all="ignore"):
        views, comparisons = engine.evaluate(FLOAT64, case, claim, witnesses)
        views[0].get("a")  # the exponent needs a = ||A||_2 (and its witness) even where the claim does not
        if _float_resolves(views, comparisons):
            score, log_ratio, exponent, L_value = _assess(views, comparisons, _float_log)
            return Evaluation(_mid(score), _mid(log_ratio), None if exponent is None else _mid(exponent),
                              _mid(L_value), shape=shape, L_param=L)
    def attempt(precision: int) -> Evaluation | None:
        views, comparisons = engine.evaluate(BALL, case, claim, witnesses)
        score, log_ratio, exponent, L_value = _assess(views, comparisons, arb.log)
        if not _rankable(score):
            return None
        return Evaluation(_mid(score), _mid(log_ratio), _mid(exponent) if _rankable(exponent) else None,
                          _mid(L_value), shape=shape, L_param=L)

    bits = precision_for(L)
    try:
        found, _ = escalate(attempt, lambda found: found is not None, bits, bits << ESCALATIONS)
    except CertainlyUndefined as undefined:  # log(a - 1) where a < 1, a LayerNorm of 0/0: no score here, the search goes on elsewhere
        return replace(_unranked(shape, L), log_ratio=math.nan, undefined=str(undefined))
    return found or _unranked(shape, L)


def _unranked(shape: np.ndarray, L: float) -> Evaluation:
    """A point the objective cannot rank: degenerate, or its score's ball stayed too wide."""
    return Evaluation(-math.inf, -math.inf, None, L, shape, L)


def _diameter(c: engine.Comparison, views):
    """D of the layer a comparison is about (its input)."""
    return views[c.layer].get("D")


def _float_resolves(views, comparisons) -> bool:
    """float64 (relative error about 1e-16) resolves the score when no side nears 0 or D."""
    for c in comparisons:
        D = float(_diameter(c, views))
        for side in (float(c.lhs) / D, float(c.rhs) / D):
            if not (math.isfinite(side) and abs(side) > FLOAT_RESOLUTION and abs(1 - side) > FLOAT_RESOLUTION):
                return False
    view = views[0]
    return abs(1 - float(view.get("D_out")) / float(view.get("D"))) > FLOAT_RESOLUTION


def _assess(views, comparisons, log):
    """(score, log(lhs/rhs) of the worst inequality, exponent, a D^2) in the comparisons' arithmetic; all None
    when a side's sign is unknown at this precision."""
    scored = [(_score(c, views, log), c) for c in comparisons]
    if any(score is None for score, _ in scored):
        return None, None, None, None
    score, worst = max(scored, key=lambda pair: _mid(pair[0]))
    view = views[0]
    D, D_out, a = view.get("D"), view.get("D_out"), view.get("a")
    exponent = -log(1 - D_out / D) / (a * D * D) if D_out < D and a > 0 else None
    return score, _log_ratio(worst.lhs, worst.rhs, log), exponent, a * D * D


def _score(c: engine.Comparison, views, log):
    """The comparison's score (module docstring), or None when the ball of a side straddles 0: which case
    below applies is then unknown (arb's `>` is False when undecided), and ranking it by the midpoint of
    lhs - rhs made a stack that contracts below the balls' width look violated, with lhs/rhs = 0."""
    D = _diameter(c, views)
    lhs, rhs = c.lhs, c.rhs
    if not all(side > 0 or side <= 0 for side in (lhs, rhs)):
        return None
    if not rhs > 0:
        # a bound that is <= 0 fails for any positive lhs; rank by how far it is below lhs
        return 1000 + (lhs - rhs) if lhs > 0 else lhs - rhs
    if not lhs > 0:
        return -1000 + lhs  # lhs = 0 (exact consensus): nothing to find here
    score = _log_ratio(lhs, rhs, log)
    if lhs < D and rhs < D:
        score += log((D - rhs) / (D - lhs))
    return score


def _log_ratio(lhs, rhs, log):
    """log(lhs / rhs); +inf when a positive lhs meets a bound <= 0 (violated beyond any ratio), else NaN."""
    if lhs > 0 and rhs > 0:
        return log(lhs) - log(rhs)
    return math.inf if lhs > 0 and rhs <= 0 else math.nan


def _float_log(x) -> float:
    return math.log(x) if x > 0 else math.nan


def _rankable(x) -> bool:
    """The ball is narrow enough to rank candidates (a search heuristic, not a verdict)."""
    return isinstance(x, arb) and x.is_finite() and float(x.rad()) <= 1e-9 + 1e-6 * abs(float(x.mid()))


def _mid(x) -> float:
    if isinstance(x, arb):
        return float(x.mid()) if x.is_finite() else -math.inf
    return -math.inf if x is None or math.isnan(x) else float(x)  # +inf: a bound <= 0 under a positive lhs
