"""The rigorous float64 tier: decide a batch of one-layer configurations at near float speed.

The claim's own formulas run unchanged on the midpoint-radius binary64 backend
(certify/core/arith/midrad64.py, valid under the model that fpmodel.py checks at start-up): the
layer of certify/core/layers.py, the primitives of certify/core/primitives.py (D, D_out, D_PX,
tau, a, v, L, gap, ...) and the claim's inequalities (certify.core.expr), on a whole batch at once
(the configurations are a leading axis).  Every value is an enclosure [lo, hi] of the exact one,
and an inequality lhs <= rhs holds for a configuration when lhs.hi <= rhs.lo.

The tier says "holds" when every inequality of the claim holds that way, and "cannot decide"
otherwise, never "violated": the arb engine decides the rest.  Interval evaluation picks the end
of each enclosure the comparison needs by itself; COVERED says for each claim which ends those
are.  The backend encloses every quantity tightly on both sides except the spectral norms a, v and
the norms inside L, which are tight from below (a binary64 witness vector, recomputed rigorously)
and loose from above (Frobenius norms): every covered claim needs only their lower ends.  An
operation the backend cannot enclose (log, matrix powers) makes the whole batch
"cannot decide" (midrad64.NotSupported).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from certify import claims
from certify.core import centred, expr
from certify.core.arith import fpmodel
from certify.core.arith.midrad64 import MidRad, MidRad64, NotSupported
from certify.core.config import COMPONENTS, Case, FeedForward, Layer
from certify.core.layers import LayerArrays, apply_layer, full_mask
from certify.core.masks import named_mask, validate_mask
from certify.core.numbers import json_type
from certify.core.primitives import PRIMITIVES, LayerView
from certify.errors import BadInput, keys_shown

HOLDS, UNDECIDED = "holds", "cannot decide"
# doubles of one n x max(n, d) array of a chunk: 512 KB, so that an elementwise pass over two such arrays
# into a third stays in a core's 2 MB cache; yet at least CHUNK_AT_LEAST configurations, as a chunk costs
# about a millisecond of Python whatever its size
CHUNK_ELEMENTS = 1 << 16
CHUNK_AT_LEAST = 2
TIER3 = MidRad64()

# The claims the tier decides, and the end of each enclosure that "holds" uses (lhs from above,
# rhs from below); every side is monotone in its primitives on the ranges they take (a, D, v, tau,
# L >= 0).  docs/claims.md and certify/claims/ state the inequalities.
COVERED = {
    # D_out <= (1 - exp(-a D^2)) D: the rhs increases in a and in D, so D_out from above, a and D from below
    "collapse.global": "D_out above; a, D below",
    # D_out <= tanh(a D^2 / 4) D: tanh increases, likewise
    "collapse.tanh": "D_out above; a, D below",
    # D_out <= a D^3
    "collapse.cubic": "D_out above; a, D below",
    # D_PX <= tau D (masked or not): tau >= 0 and D >= 0, so D_PX above, tau and D below
    "collapse.dobrushin": "D_PX above; tau (from the upper ends of P), D below",
    # tau <= 1 - exp(-a D^2): tau above (from the lower ends of P), a and D below
    "collapse.tau": "tau above; a, D below",
    # D_out <= (1 - gap) D with gap = exp(-a D^2): gap above, which is a and D below
    "init.scaling": "D_out above; a, D below",
    # D_out <= v (1 - exp(-a D^2)) D and D_out <= v a D^3: v as well from below
    "value.expansive": "D_out above; v, a, D below",
    # (1 - v tau) D <= D_out: the lhs decreases in v and tau (their lower ends) and takes D above
    # when 1 - v tau > 0; D_out from below.  D_out <= (1 + v tau) D: D_out above; v, tau, D below
    "residual.two_sided": "lower: v, tau below, D above, D_out below; upper: D_out above, v, tau, D below",
    # the same with tau replaced by 1 - exp(-a D^2) (a and D below inside it)
    "residual.two_sided.global": "lower: v, a, D below in v (1 - exp(-a D^2)), D above, D_out below; "
                                 "upper: D_out above; v, a, D below",
    # D_out <= L (1 - exp(-a D^2)) D and D_out <= L a D^3: L (||W1||_2, ||W2||_2) from below;
    # ReLU or GELU (erf enclosed by its series, midrad64._erf_at)
    "ffn.lipschitz": "D_out above; L, a, D below",
}


def configurations_within(entries: int, n: int, d: int) -> int:
    """How many configurations of n tokens of dimension d keep one n x max(n, d) array of each within
    `entries` entries (at least one): the measure of a batch's size that tier 3's cost follows."""
    return max(1, entries // (n * max(n, d)))


def _finite_binary64(array) -> bool:
    """Every entry of array is a finite binary64 number, which the tier's float64 arrays hold as it is: a float64
    array, or integers or narrower floats that convert exactly.  An integer past 2^53 or a wider float would be
    rounded, and the tier would decide another configuration than the one given; booleans and objects are no
    numbers here (config.load refuses them too)."""
    array = np.asarray(array)
    if array.dtype.kind not in "iuf":
        return False
    converted = array if array.dtype == np.float64 else array.astype(np.float64)
    if array.dtype.kind in "iu" or array.dtype.itemsize > 8:
        with np.errstate(all="ignore"):
            if not np.all(converted.astype(array.dtype) == array):
                return False
    return bool(np.all(np.isfinite(converted)))


@dataclass
class FeedForwardBatch:
    """b FFNs of one form: W1 (b, h, d), b1 (b, h), W2 (b, d, h), b2 (b, d)."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    activation: str = "relu"
    residual: bool = False


@dataclass
class Batch:
    """b configurations of one layer form in binary64 (exact inputs): X (b, n, d) and either
    A (b, d, d) or W_Q, W_K (b, d, d_k) with optional biases (b, d_k); the score scale is beta (b,)
    or a scalar, divided by sqrt(d_k) when d_k is given (the W_Q, W_K form); an optional value
    matrix V (b, d, d); one mask (n, n) for all, a residual connection, an FFN."""

    X: np.ndarray
    A: np.ndarray | None = None
    W_Q: np.ndarray | None = None
    W_K: np.ndarray | None = None
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    beta: np.ndarray | float = 1.0
    d_k: int | None = None
    V: np.ndarray | None = None  # (b, d, d): X' = P X V^T
    mask: np.ndarray | None = None
    residual: bool = False
    ffn: FeedForwardBatch | None = None

    def validated(self) -> Batch:
        """The batch once its parts are numpy arrays of consistent shapes and components and every number is
        finite binary64, or BadInput.  Checked at each use, not remembered: a batch remembered as checked took
        parts put into it later (batch.X = ..., dataclasses.replace, an integer array changed in place)
        unchecked, and tokens 2^53 + 1 and 2^53, rounded to one point, held a bound that arb finds violated
        (a check costs about 20 us, an evaluation milliseconds)."""
        if self.ffn is not None and not isinstance(self.ffn, FeedForwardBatch):
            raise BadInput(f"ffn must be a FeedForwardBatch, not {type(self.ffn).__name__}")
        arrays = self._arrays()
        for key, array in arrays.items():
            if (array is not None or key == "X") and not isinstance(array, np.ndarray):
                raise BadInput(f"{key} must be a numpy array, not {type(array).__name__}")
        if self.X.ndim != 3 or self.X.shape[-2] < 2:
            raise BadInput(f"X must have shape (batch, n, d) with n >= 2 tokens, got {self.X.shape}")
        # exactly one head, as config.load reads it: A with a stray W_Q (or d_k, b_Q, b_K) was decided as A alone
        if (self.A is None, self.W_Q is None, self.W_K is None) not in ((False, True, True), (True, False, False)):
            raise BadInput("give either A or both W_Q and W_K")
        if self.A is not None and not all(part is None for part in (self.b_Q, self.b_K, self.d_k)):
            raise BadInput("d_k, b_Q and b_K only go with W_Q and W_K")
        if not all(_finite_binary64(a) for a in [*arrays.values(), np.asarray(self.beta)] if a is not None):
            raise BadInput("the configurations must be finite binary64 numbers")
        # read by their truth, "no" was a residual connection
        flags = {"residual": self.residual, **({} if self.ffn is None else {"ffn.residual": self.ffn.residual})}
        for key, flag in flags.items():
            if not isinstance(flag, (bool, np.bool_)):
                raise BadInput(f"{key} must be true or false, got {flag!r}")
        self._check_shapes()
        return self

    def _arrays(self) -> dict:
        """The batch's array parts by name (an FFN's by its own names), None for those it does not have."""
        ffn = {} if self.ffn is None else {key: getattr(self.ffn, key) for key in ("W1", "b1", "W2", "b2")}
        return {**{key: getattr(self, key) for key in ("X", "A", "W_Q", "W_K", "b_Q", "b_K", "V")}, **ffn}

    def _check_shapes(self) -> None:
        """BadInput unless every part fits X (b, n, d): the layer's products would otherwise fail, or
        broadcast a part over configurations it does not belong to."""
        b, n, d = self.X.shape
        d_k = None if self.W_Q is None else self.W_Q.shape[-1]
        expected = {"A": (b, d, d), "W_Q": (b, d, d_k), "W_K": (b, d, d_k), "b_Q": (b, d_k), "b_K": (b, d_k),
                    "V": (b, d, d)}
        if self.ffn is not None:
            h = self.ffn.W1.shape[1] if self.ffn.W1.ndim == 3 else None
            expected.update({"W1": (b, h, d), "b1": (b, h), "W2": (b, d, h), "b2": (b, d)})
        for key, array in self._arrays().items():
            if key != "X" and array is not None and array.shape != expected[key]:
                raise BadInput(f"{key} must have shape {expected[key]} for X of shape {self.X.shape}, got {array.shape}")
        if np.shape(self.beta) not in ((), (b,)):
            raise BadInput(f"beta must be one number or one per configuration ({b}), got shape {np.shape(self.beta)}")
        if self.W_Q is not None and (isinstance(self.d_k, bool) or not isinstance(self.d_k, int) or self.d_k < 1):
            raise BadInput(f"d_k must be a positive integer, got {self.d_k!r}")
        # entries 0 or 1 (a boolean array, or numbers): 0.5 or 2 was read as an edge
        if self.mask is not None and (np.shape(self.mask) != (n, n) or not np.all(np.diagonal(self.mask))
                                      or not np.isin(self.mask, (0, 1)).all()):
            raise BadInput(f"the mask must be {n} x {n} of 0s and 1s with every token attending to itself")
        if self.ffn is not None and self.ffn.activation not in ("relu", "gelu"):
            raise BadInput(f"the FFN's activation must be 'relu' or 'gelu', got {self.ffn.activation!r}")

    def __len__(self) -> int:
        return self.X.shape[0]

    def chunks(self) -> list[Batch]:
        """The batch in consecutive parts whose n x n and n x d arrays fit in a core's cache
        (elementwise passes over them then run at cache speed, not memory speed)."""
        n, d = self.X.shape[-2:]
        size = max(CHUNK_AT_LEAST, configurations_within(CHUNK_ELEMENTS, n, d))
        if len(self) <= size:
            return [self]
        return [self.part(slice(start, start + size)) for start in range(0, len(self), size)]

    def part(self, which: slice) -> Batch:
        """The configurations `which` of the batch (a slice), with the shared mask and settings."""
        def cut(array):
            return None if array is None else array[which]
        beta = np.broadcast_to(np.asarray(self.beta, dtype=np.float64), (len(self),))[which]
        ffn = None if self.ffn is None else FeedForwardBatch(
            W1=self.ffn.W1[which], b1=self.ffn.b1[which], W2=self.ffn.W2[which], b2=self.ffn.b2[which],
            activation=self.ffn.activation, residual=self.ffn.residual)
        return Batch(X=self.X[which], A=cut(self.A), W_Q=cut(self.W_Q), W_K=cut(self.W_K), b_Q=cut(self.b_Q),
                     b_K=cut(self.b_K), beta=beta, d_k=self.d_k, V=cut(self.V), mask=self.mask,
                     residual=self.residual, ffn=ffn)

    def structure(self) -> Case:
        """The form every configuration of the batch has (which components, the mask, the FFN's
        activation), for the claim's applicability and the layer's control flow; the numbers live
        in the batch."""
        n, d = self.X.shape[-2:]
        ffn = None
        if self.ffn is not None:
            ffn = FeedForward(W1=(), b1=(), W2=(), b2=(), activation=self.ffn.activation, residual=self.ffn.residual)
        mask = None if self.mask is None else tuple(tuple(bool(v) for v in row) for row in self.mask)
        layer = Layer(d=d, A=() if self.A is not None else None, W_Q=() if self.W_Q is not None else None,
                      W_K=() if self.W_K is not None else None, V=() if self.V is not None else None,
                      mask=mask, residual=self.residual, ffn=ffn)
        return Case(X=((Fraction(0),) * d,) * n, layers=(layer,))

    def arrays(self) -> LayerArrays:
        """The layer's data in the tier's numbers, batched.  beta (and 1 / sqrt(d_k)) are folded into
        A, or into the key side W_K, b_K: (Z W_Q + b_Q)(s (Z W_K + b_K))^T is the scaled score, and
        ||W_Q (s W_K)^T||_2 = |s| ||W_Q W_K^T||_2 = a."""
        b, n = self.X.shape[0], self.X.shape[-2]
        beta = np.broadcast_to(np.asarray(self.beta, dtype=np.float64), (b,))
        # beta = 1 everywhere (the default): A and W_K stay exact (M * 1 is M: MidRad's exact products
        # by powers of two), so every product with them skips the bound of a radius
        per_matrix = 1 if np.all(beta == 1) else MidRad(beta)[:, None, None]
        ffn = None
        if self.ffn is not None:
            f = self.ffn
            ffn = (MidRad(f.W1), MidRad(f.b1[:, None, :]), MidRad(f.W2), MidRad(f.b2[:, None, :]))
        mask = full_mask(n) if self.mask is None else np.asarray(self.mask, dtype=bool)
        common = dict(V=None if self.V is None else MidRad(self.V), mask=mask, ffn=ffn, score_scale=TIER3.number(1))
        if self.A is not None:
            return LayerArrays(A=MidRad(self.A) * per_matrix, W_Q=None, W_K=None, b_Q=None, b_K=None, **common)
        scale = per_matrix / TIER3.sqrt_nonneg(TIER3.number(self.d_k))
        return LayerArrays(A=None, W_Q=MidRad(self.W_Q), W_K=MidRad(self.W_K) * scale,
                           b_Q=None if self.b_Q is None else MidRad(self.b_Q[:, None, :]),
                           b_K=None if self.b_K is None else MidRad(self.b_K[:, None, :]) * scale, **common)


class _Names:
    """The primitives of the batch's layer step, by name (what expr.evaluate reads)."""

    def __init__(self, view: LayerView):
        self.view = view

    def __getitem__(self, name):
        return self.view.get(name)


def layer_view(batch: Batch) -> LayerView:
    """The batch's layer step in the tier's numbers: its primitives (view.get("D"), ...) are
    MidRad enclosures with one entry per configuration."""
    batch = batch.validated()
    X = MidRad(batch.X)
    layer, arrays = batch.structure().layers[0], batch.arrays()
    # P X from the centred tokens E = X - 1 c^T where the layer is translation-equivariant (near consensus
    # the output's enclosure is then of the size of the disagreement, not of the tokens).  Any exact
    # vector c serves (apply_layer); the float64 mean of the tokens is one, and E's enclosure then has no
    # radius of c's size
    translated = None
    if centred.unsupported(layer) is None:
        translated = X - MidRad(np.mean(batch.X, axis=-2, keepdims=True))
    step = apply_layer(TIER3, layer, X, arrays, translated=translated)
    return LayerView(ar=TIER3, t=0, layer=layer, arrays=arrays, X=X, step=step, X0=X, witnesses={})


def enclosures(claim: str | claims.Claim, batch: Batch) -> list[tuple[MidRad, MidRad]]:
    """(lhs, rhs) enclosures of each inequality of the claim, per configuration (NotSupported when the
    backend cannot enclose an operation they need)."""
    claim_spec = _covered(claim)
    claim_spec.check_applies(batch.validated().structure())
    with np.errstate(all="ignore"):  # overflow gives inf or nan, which decide nothing
        names = _Names(layer_view(batch))
        return [(_parsed(ineq.lhs).evaluate(TIER3, names), _parsed(ineq.rhs).evaluate(TIER3, names))
                for ineq in claim_spec.inequalities]


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> expr.Expr:
    """A side of a claim's inequality over the layer primitives, parsed once."""
    return expr.parse(text, set(PRIMITIVES))


def _covered(claim: str | claims.Claim) -> claims.Claim:
    """The claim of a COVERED id, or a user's bound D_out <= EXPR given as its claim (engine.target(bound=
    ...).claim, id ""): interval evaluation encloses any expression, so its "holds" is as sound."""
    if isinstance(claim, claims.Claim) and not claim.id:
        return claim
    claim_id = claim.id if isinstance(claim, claims.Claim) else claim
    if claim_id not in COVERED:
        raise BadInput(f"the float64 tier decides {', '.join(COVERED)} and bounds; not {claim_id!r}")
    return claims.get(claim_id)


def _ends(claim: str | claims.Claim, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """The upper ends of the left sides and the lower ends of the right sides, (inequalities, configurations)."""
    sides = enclosures(claim, batch)
    with np.errstate(all="ignore"):
        return (np.array([np.broadcast_to(lhs.hi, (len(batch),)) for lhs, _ in sides]),
                np.array([np.broadcast_to(rhs.lo, (len(batch),)) for _, rhs in sides]))


def unusable_reason() -> str | None:
    """Why the tier cannot run on this machine (a floating-point model probe failed), or None."""
    usable, reason = fpmodel.tier3_usable()
    return None if usable else reason


def evaluate(claim: str | claims.Claim, batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(verdicts, lhs_upper, rhs_lower) per configuration: HOLDS where every inequality's lhs_upper <=
    rhs_lower, else UNDECIDED, with the sides of the tightest inequality; all UNDECIDED (bounds nan)
    when the floating-point model fails its probes (fpmodel.tier3_usable says why) or the backend
    cannot enclose an operation the claim needs."""
    _covered(claim)
    if not isinstance(batch, Batch):
        raise BadInput(f"a batch is a tier3.Batch (batch_of_configs makes one of configurations), "
                       f"not {type(batch).__name__}")
    batch = batch.validated()
    count = len(batch)
    nothing = np.full(count, np.nan)
    if unusable_reason() is not None or count == 0:  # (no configuration: numpy's reshapes fail on an empty batch)
        return np.full(count, UNDECIDED, dtype=object), nothing, nothing
    try:
        parts = [_ends(claim, part) for part in batch.chunks()]
    except NotSupported:
        return np.full(count, UNDECIDED, dtype=object), nothing, nothing
    uppers = np.concatenate([upper for upper, _ in parts], axis=1)
    lowers = np.concatenate([lower for _, lower in parts], axis=1)
    with np.errstate(all="ignore"):
        holds = np.all(uppers <= lowers, axis=0)  # nan: False
        slack = np.where(np.isnan(lowers - uppers), -np.inf, (lowers - uppers) / np.abs(lowers))
        tightest = np.argmin(slack, axis=0)
    pick = np.arange(count)
    return np.where(holds, HOLDS, UNDECIDED).astype(object), uppers[tightest, pick], lowers[tightest, pick]


def decide(claim: str | claims.Claim, batch: Batch) -> np.ndarray:
    """Per configuration HOLDS or UNDECIDED (an array of str)."""
    return evaluate(claim, batch)[0]


def _is_binary64(value) -> bool:
    """value is a number (no bool) equal to a binary64 number: what config.load reads as that number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    if isinstance(value, np.integer):  # numpy compares a numpy integer with a float in binary64, rounding it first
        value = int(value)
    try:
        return float(value) == value
    except OverflowError:
        return False


def _binary64(values: list, what: str) -> np.ndarray:
    """values (one per configuration) as one float64 array, or BadInput unless every entry is a number that
    the engine reads as this very binary64 number: config.load reads a decimal string or an integer exactly, so
    "0.1" or 2^53 + 1 rounded here would make tier 3 decide another configuration than arb."""
    problem = BadInput(f"{what} must be binary64 numbers of one shape for the float64 tier")
    try:
        raw = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        raise problem from None
    if raw.dtype.kind not in "fiuO":  # strings, bools
        raise problem
    # floats and integers below 2^53 are exact in a float64 array; anything else (an integer beyond 2^53 among
    # floats would be rounded without a trace, one beyond 2^63 makes an object array) is checked entry by entry
    array = None if raw.dtype.kind == "O" else raw if raw.dtype == np.float64 else raw.astype(np.float64)
    with np.errstate(invalid="ignore"):
        suspect = array is None or raw.dtype != np.float64 or bool(np.any(np.abs(array) >= 2.0**53))
    if suspect:
        entries = np.asarray(values, dtype=object)
        if not all(_is_binary64(v) for v in entries.ravel()):  # a ragged row leaves a list here
            raise problem
        array = entries.astype(np.float64)
    elif _bool_among_floats(values, array):
        raise problem
    return array


def _bool_among_floats(values: list, array: np.ndarray) -> bool:
    """Whether a bool hides in values, which numpy read as the float64 array: among floats it becomes 1.0 or
    0.0 without a trace, where config.load refuses it. Only the entries equal to 0 or 1 can be one, so the
    common batch (few exact zeros and ones) costs two vectorised comparisons, and the rest one pass in C
    over the types of those entries."""
    hits = (array == 0.0) | (array == 1.0)
    if not hits.any():
        return False
    return not set(map(type, np.asarray(values, dtype=object)[hits])).isdisjoint({bool, np.bool_})


def batch_of_configs(configs: list[dict]) -> Batch:
    """The Batch of one-layer configurations (certify.core.config's JSON form, binary64 numbers) of one
    form; BadInput for anything else (a stack, LayerNorm, configurations of different forms, numbers that
    are not binary64, what config.load would refuse), so that tier 3 decides exactly the configurations
    the engine reads."""
    # (a generator was used up by the first look at it, and read as configurations without tokens)
    if not isinstance(configs, (list, tuple)):
        raise BadInput(f"the float64 tier reads a list of configuration dicts, not {json_type(configs)}")
    for i, config_dict in enumerate(configs):
        if not isinstance(config_dict, dict):
            raise BadInput(f"the float64 tier reads a list of configuration dicts: configuration {i} is "
                           f"{json_type(config_dict)}")
    keys = {"name", "X", "A", "W_Q", "W_K", "b_Q", "b_K", "d_k", "beta", "V", "mask", "residual", "ffn"}
    extra = set().union(*(set(c) for c in configs)) - keys
    if extra:
        raise BadInput(f"the float64 tier decides one layer without {', '.join(sorted(extra))}")

    def stacked(key, source=None):
        source = source or configs
        present = [key in c for c in source]
        if not any(present):
            return None
        if not all(present):
            raise BadInput(f"a batch must be of one form: {key} is in some configurations only")
        return _binary64([c[key] for c in source], key)

    def shared(key, default, source=None):
        # a numpy array (a mask, a 0-d name) or scalar (np.int64(1), np.True_) as the nested lists or the Python
        # value config.load reads it as
        values = [value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
                  for value in (c.get(key, default) for c in source or configs)]
        if any(v != values[0] or type(v) is not type(values[0]) for v in values):
            raise BadInput(f"a batch must share {COMPONENTS.get(key, key)}")
        return values[0]

    def flag(key, source=None) -> bool:
        value = shared(key, False, source)
        if not isinstance(value, bool):
            raise BadInput(f"{key} must be true or false, got {value!r}")
        return value

    X, W_Q = stacked("X"), stacked("W_Q")
    if X is None:
        raise BadInput('the configurations have no tokens "X"')
    d_k = shared("d_k", None if W_Q is None or W_Q.ndim != 3 else W_Q.shape[-1])  # given with A: refused there
    beta = _binary64([c.get("beta", 1.0) for c in configs], "beta")
    mask = shared("mask", None)
    if mask is not None:
        n = X.shape[-2]
        mask = np.array(named_mask(mask, n) if isinstance(mask, str) else validate_mask(mask, n), dtype=bool)
    ffn = None
    if any("ffn" in c for c in configs):
        ffns = [c.get("ffn") for c in configs]
        if not all(isinstance(f, dict) for f in ffns):
            raise BadInput("a batch must be of one form: ffn is in some configurations only")
        unknown = set().union(*(set(f) for f in ffns)) - {"W1", "b1", "W2", "b2", "activation", "residual"}
        if unknown:
            raise BadInput(f"ffn: unknown keys: {keys_shown(unknown)}")
        W1, W2 = stacked("W1", ffns), stacked("W2", ffns)
        if W1 is None or W2 is None:
            raise BadInput("ffn: W1 and W2 are needed")
        b1, b2 = stacked("b1", ffns), stacked("b2", ffns)  # absent from all: zero, as config.load reads it
        b1 = np.zeros(W1.shape[:2]) if b1 is None else b1
        b2 = np.zeros(W2.shape[:2]) if b2 is None else b2
        ffn = FeedForwardBatch(W1=W1, b1=b1, W2=W2, b2=b2, activation=shared("activation", "relu", ffns),
                               residual=flag("residual", ffns))
    return Batch(X=X, A=stacked("A"), W_Q=W_Q, W_K=stacked("W_K"), b_Q=stacked("b_Q"), b_K=stacked("b_K"),
                 beta=beta, d_k=d_k, V=stacked("V"), mask=mask, residual=flag("residual"), ffn=ffn).validated()
