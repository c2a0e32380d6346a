"""Distributions of configurations for sampling campaigns, each reproducible from its seed.

Configuration i of a campaign is a pure function of (distribution, n, d, seed, i, L range, d_k): its
random generator is numpy's `default_rng([seed, i])`, so a campaign can be resumed from the set
of indices already decided, in any order and on any number of processes.

Every sampled number is used as the exact binary64 value it is (a JSON number in the
configuration, see certify.core.numbers): the float64 screen and the ball evaluation see the same
inputs, so whatever float64 gets wrong is its arithmetic, not a rounding of the inputs.

Configurations are one head of self-attention, X' = P X (docs/claims.md), with n tokens of
dimension d, and the layer parts below when a campaign asks for them.  Unless a distribution says
otherwise the query-key matrix is A with iid N(0, 1/d) entries (||A||_2 is then about 2).  The
distributions:

    gaussian          x_ij ~ N(0, 1)
    sphere            tokens uniform on the unit sphere S^{d-1}
    near-consensus    x_i = c + s g_i, c and g_i ~ N(0, I), spread s log-uniform in [2^-20, 2^-2]:
                      small D, the cubic regime a D^2 << 1
    layernorm-lecun   LayerNorm-scale tokens (each row of a Gaussian matrix centred and scaled to
    layernorm-xavier  mean 0, variance 1, so ||x|| = sqrt(d)) and W_Q, W_K (d x d_k, d_k = max(1, d/2)
    layernorm-bert    rounded down) with iid entries: N(0, 1/d) (LeCun), uniform with variance
                      2/(d + d_k) (Xavier/Glorot), N(0, 0.02^2) (BERT); scores q.k / sqrt(d_k).
                      Needs d >= 2.
    anisotropic       x_i = m + z_i diag(sigma) Q: a shared offset m of norm 3, singular values
                      sigma_k = 10^(-2k/(d-1)) along a random rotation Q (like real embeddings)
    heavy-tailed      x_ij ~ Student t with 2 degrees of freedom (infinite variance), A_ij ~ t_3 / sqrt(d)
    log-L             gaussian, with L = a D^2 log-uniform in the L range (default 1e-3 .. 1e3)

A thin head (`d_k`, 1 <= d_k < d; any distribution): the head is W_Q, W_K (d x d_k) with "d_k" in the
configuration, drawn where the distribution draws its head, so the tokens are the same with or without
it, and a = ||W_Q W_K^T||_2 / sqrt(d_k) is certified through a d_k x d_k reduction
(certify.core.thin_norm) instead of a d x d norm.  The layernorm-* distributions draw their own
initialisation with this d_k (instead of d/2).  The others draw iid N(0, s^2) entries (heavy-tailed:
s t_3) with s^2 = thin_variance(d, d_k) = 2 sqrt(d_k) / (sqrt(d) + sqrt(d_k))^2: the largest singular
value of a d x d_k Gaussian matrix is about s (sqrt(d) + sqrt(d_k)), so ||A||_2 stays near the full A's 2
(1.2 to 1.7 measured from 32 x 4 to 768 x 64) and a D^2 in the same range.  N(0, 1/d), the LeCun
initialisation, would make it about 2 sqrt(d_k) times smaller (0.24 at 384 x 32): that is
layernorm-lecun's.

Beyond the head (any distribution; a campaign's LayerParts, drawn after everything above so that
the tokens and the head are the same with or without them):

    mask              a named mask of certify.core.masks: causal, sliding (previous, self, next) or uni
                      (previous, self), given by its name in the configuration
    value             V (d x d): "gaussian" (iid N(0, 1/d)) or "orthogonal" (Haar: the QR factor of a
                      Gaussian matrix, signs fixed), scaled to ||V||_2 = value_norm (in float64) if given
    residual          X' = X + P X V^T (the residual claims need a V: give --value orthogonal for X + P X
                      up to a rotation)
    ffn               a token-wise MLP W2 s(W1 x + b1) + b2 after attention, s = relu or gelu, hidden width
                      h (default 2d), W1 ~ N(0, 1/d), W2 ~ N(0, 1/h), b1, b2 ~ N(0, 0.1^2); residual
                      (x + f(x)) with ffn_residual

An L range (`L_range=(lo, hi)`, any distribution) sets the inverse temperature beta of each
configuration so that L = a D^2 (a = ||beta A||_2, computed in float64, for a thin head through its
d_k x d_k reduction, so L is met up to rounding) is log-uniform in [lo, hi]: the behaviour changes from L << 1 (cubic regime) through
L ~ 37 (float64 computes 1 - exp(-L) as exactly 1) to L ~ 745 (exp(-L) underflows to 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Callable

import numpy as np

from certify.core import quantities, thin_norm
from certify.core.config import ACTIVATIONS
from certify.core.arith import FLOAT64, fpmodel
from certify.core.arguments import Spelling, flag, integer, real
from certify.core.layers import sphere_layernorm, standard_layernorm
from certify.core.masks import NAMED_MASKS
from certify.errors import BadInput
from certify.search import heads
from certify.search.l_range import LRange

# Beyond these sizes a campaign is not a screening job any more (the ball pass is O(n^2 d) arb
# operations per configuration, with an arb_mat product of the query-key matrix).
MAX_TOKENS = 512
MAX_DIMENSION = 1024
# L ranges far above 1e6 cannot be decided: seeing exp(-L) next to 1 needs L / ln 2 bits.
L_RANGE = LRange(1e-12, 1e6, fixed=True, why="each configuration's L is drawn log-uniformly in it (LO = HI fixes "
                 "it); beyond 1e6, exp(-L) next to 1 needs too many bits to decide")


@dataclass(frozen=True)
class Draw:
    """What a distribution draws: tokens and the head, before any temperature."""

    X: np.ndarray  # n x d
    A: np.ndarray | None = None  # d x d, or None for the W_Q, W_K form
    W_Q: np.ndarray | None = None  # d x d_k
    W_K: np.ndarray | None = None

    def query_key(self) -> np.ndarray:
        """float64 A = W_Q W_K^T / sqrt(d_k) (or A itself), at beta = 1."""
        if self.A is not None:
            return self.A
        return self.W_Q @ self.W_K.T / math.sqrt(self.W_Q.shape[1])

    def thin_norm(self) -> float:
        """float64 ||W_Q W_K^T||_2 / sqrt(d_k) through the d_k x d_k reduction (no d x d SVD), at beta = 1."""
        return thin_norm.product_norm_estimate(self.W_Q, self.W_K) / math.sqrt(self.W_Q.shape[1])


@dataclass(frozen=True)
class Distribution:
    """A named way to draw configurations: its draw(rng, n, d, d_k) of X and the head (A, or W_Q and W_K of
    d_k columns; d_k None: the distribution's own head), the smallest d it needs, and the L range imposed
    when the campaign gives none (None: L as drawn)."""

    name: str
    draw: Callable[[np.random.Generator, int, int, int | None], Draw]
    min_dimension: int = 1
    default_L_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class Sample:
    """Configuration i: the JSON configuration (exact binary64 numbers) and its float64 arrays."""

    index: int
    config: dict
    X: np.ndarray  # n x d, exactly the configuration's tokens
    A: np.ndarray  # d x d, the float64 query-key matrix with beta folded in (screening only)
    L_target: float | None  # the drawn a D^2 when an L range is in force
    a: float | None = None  # float64 ||A||_2 of a thin head (its d_k x d_k reduction), else None: A's SVD


@dataclass(frozen=True, kw_only=True)
class LayerParts:
    """What each sampled layer has beyond the attention head (module docstring); the default: nothing."""

    mask: str | None = None
    value: str | None = None
    value_norm: float | None = None
    residual: bool = False
    ffn: str | None = None
    hidden: int | None = None
    ffn_residual: bool = False

    def validated(self, d: int, names: Spelling | None = None) -> LayerParts:
        """These parts, or BadInput naming the first that is not one certify samples, as `names` spells it (the
        command's --residual, PART_OPTIONS, by default; the API's residual=)."""
        names = PART_OPTIONS if names is None else names
        return self._typed(names)._checked(d, names)

    def _checked(self, d: int, names: Spelling) -> LayerParts:
        """validated(d) of parts of the right types."""
        if self.mask is not None and self.mask not in MASKS:
            raise BadInput(f"unknown mask {self.mask!r} for sampling; choose one of {', '.join(MASKS)}")
        if self.value is not None and self.value not in VALUES:
            raise BadInput(f"unknown value matrix {self.value!r}; choose one of {', '.join(VALUES)}")
        # each reason by itself: one message said both whichever was wrong
        if self.value_norm is not None and self.value is None:
            raise BadInput(f"a value norm needs a value matrix: give {names.given('value', '|'.join(VALUES))} with "
                           f"{names.option('value_norm')}")
        if self.value_norm is not None and not (math.isfinite(self.value_norm) and 0 < self.value_norm <= 1e6):
            raise BadInput(f"{names.option('value_norm')} must be in (0, 1e6], got {self.value_norm}")
        if self.ffn is not None and self.ffn not in ACTIVATIONS:
            raise BadInput(f"unknown FFN activation {self.ffn!r}; choose one of {', '.join(ACTIVATIONS)}")
        if self.ffn is None and (self.hidden is not None or self.ffn_residual):
            raise BadInput(f"a hidden width and a residual FFN need an FFN ({names.given('ffn', 'relu|gelu')})")
        if self.hidden is not None and not 1 <= self.hidden <= MAX_HIDDEN:
            raise BadInput(f"the hidden width must be between 1 and {MAX_HIDDEN}, got {self.hidden}")
        return replace(self, hidden=self.hidden or 2 * d) if self.ffn is not None else self

    def _typed(self, names: Spelling) -> LayerParts:
        """These parts with the flags as bools and the sizes as Python numbers, or BadInput: from Python, any
        truthy residual (residual="no") made a residual layer, and numpy numbers reached the manifest."""
        flags = {name: flag(getattr(self, name), names.option(name)) for name in ("residual", "ffn_residual")}
        norm = None if self.value_norm is None else real(self.value_norm, names.option("value_norm"))
        return replace(self, **flags, value_norm=norm,
                       hidden=None if self.hidden is None else integer(self.hidden, names.option("hidden")))

    def add_to(self, rng: np.random.Generator, config: dict, d: int) -> None:
        """Draw the parts into the configuration (after every other draw of the configuration)."""
        if self.mask is not None:
            config["mask"] = self.mask
        if self.value is not None:
            G = rng.standard_normal((d, d))
            if self.value == "orthogonal":
                Q, R = np.linalg.qr(G)
                V = Q * np.where(np.diag(R) < 0, -1.0, 1.0)  # the Haar-distributed factor
            else:
                V = G / math.sqrt(d)
            if self.value_norm is not None:
                V = V * (self.value_norm / np.linalg.norm(V, 2))
            config["V"] = V.tolist()
        if self.residual:
            config["residual"] = True
        if self.ffn is not None:
            h = self.hidden
            config["ffn"] = {"W1": (rng.standard_normal((h, d)) / math.sqrt(d)).tolist(),
                             "b1": (0.1 * rng.standard_normal(h)).tolist(),
                             "W2": (rng.standard_normal((d, h)) / math.sqrt(h)).tolist(),
                             "b2": (0.1 * rng.standard_normal(d)).tolist(),
                             "activation": self.ffn, "residual": self.ffn_residual}


# the parts as `certify sample` names its options (--value-norm): the spelling of a refusal unless told otherwise
PART_OPTIONS = Spelling.command(part.name for part in fields(LayerParts))


MASKS = tuple(name for name in NAMED_MASKS if name != "complete")  # "complete" is no mask at all
VALUES = ("gaussian", "orthogonal")
MAX_HIDDEN = 4 * MAX_DIMENSION


def thin_variance(d: int, d_k: int) -> float:
    """The variance of a thin head's iid weights: ||W_Q W_K^T||_2 / sqrt(d_k) near the full A's 2 (module
    docstring)."""
    return 2 * math.sqrt(d_k) / (math.sqrt(d) + math.sqrt(d_k)) ** 2


def _head(entries: Callable[[tuple], np.ndarray], d: int, d_k: int | None) -> dict:
    """A with iid entries / sqrt(d), or a thin head: W_Q, W_K with iid entries * s, s^2 = thin_variance
    (entries(shape): the distribution's unit draws, in this order)."""
    if d_k is None:
        return {"A": entries((d, d)) / math.sqrt(d)}
    s = math.sqrt(thin_variance(d, d_k))
    return {"W_Q": entries((d, d_k)) * s, "W_K": entries((d, d_k)) * s}


def _gaussian_head(rng: np.random.Generator, d: int, d_k: int | None) -> dict:
    """A with iid N(0, 1/d) entries, or a thin head of iid N(0, thin_variance) entries."""
    return _head(rng.standard_normal, d, d_k)


def _t3_head(rng: np.random.Generator, d: int, d_k: int | None) -> dict:
    """A with iid t_3 / sqrt(d) entries, or a thin head of iid t_3 s entries (s^2 = thin_variance)."""
    return _head(lambda shape: rng.standard_t(3, size=shape), d, d_k)


def _gaussian(rng, n, d, d_k):
    return Draw(X=rng.standard_normal((n, d)), **_gaussian_head(rng, d, d_k))


def _sphere(rng, n, d, d_k):
    G = rng.standard_normal((n, d))
    return Draw(X=sphere_layernorm(FLOAT64, G), **_gaussian_head(rng, d, d_k))


def _near_consensus(rng, n, d, d_k):
    centre = rng.standard_normal(d)
    spread = 2.0 ** rng.uniform(-20, -2)
    return Draw(X=centre + spread * rng.standard_normal((n, d)), **_gaussian_head(rng, d, d_k))


def _layernorm_tokens(rng, n, d):
    return standard_layernorm(FLOAT64, rng.standard_normal((n, d)), 0.0)


def _standard_init(weights: Callable[[np.random.Generator, int, int], np.ndarray]):
    def draw(rng, n, d, d_k):
        d_k = max(1, d // 2) if d_k is None else d_k
        X = _layernorm_tokens(rng, n, d)
        return Draw(X=X, W_Q=weights(rng, d, d_k), W_K=weights(rng, d, d_k))
    return draw


def _lecun(rng, d, d_k):
    return rng.normal(scale=math.sqrt(1 / d), size=(d, d_k))


def _xavier(rng, d, d_k):
    limit = math.sqrt(6 / (d + d_k))  # uniform on [-r, r] has variance r^2 / 3 = 2 / (d + d_k)
    return rng.uniform(-limit, limit, size=(d, d_k))


def _bert(rng, d, d_k):
    return rng.normal(scale=0.02, size=(d, d_k))


def _anisotropic(rng, n, d, d_k):
    sigma = np.array([10.0 ** (-2 * k / (d - 1)) for k in range(d)]) if d > 1 else np.ones(1)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    offset = rng.standard_normal(d)
    offset *= 3 / np.linalg.norm(offset)
    X = offset + (rng.standard_normal((n, d)) * sigma) @ rotation
    return Draw(X=X, **_gaussian_head(rng, d, d_k))


def _heavy_tailed(rng, n, d, d_k):
    return Draw(X=rng.standard_t(2, size=(n, d)), **_t3_head(rng, d, d_k))


DISTRIBUTIONS: dict[str, Distribution] = {
    dist.name: dist
    for dist in (
        Distribution("gaussian", _gaussian),
        Distribution("sphere", _sphere),
        Distribution("near-consensus", _near_consensus),
        Distribution("layernorm-lecun", _standard_init(_lecun), min_dimension=2),
        Distribution("layernorm-xavier", _standard_init(_xavier), min_dimension=2),
        Distribution("layernorm-bert", _standard_init(_bert), min_dimension=2),
        Distribution("anisotropic", _anisotropic),
        Distribution("heavy-tailed", _heavy_tailed),
        Distribution("log-L", _gaussian, default_L_range=(1e-3, 1e3)),
    )
}


def get(name: str) -> Distribution:
    """The distribution called `name` (one of DISTRIBUTIONS), or BadInput naming the known ones."""
    if not isinstance(name, str) or name not in DISTRIBUTIONS:  # a manifest's list is unhashable: no TypeError
        raise BadInput(f"unknown distribution {name!r}; choose one of {', '.join(DISTRIBUTIONS)}")
    return DISTRIBUTIONS[name]


def validate(name: str, n: int, d: int, L_range, d_k: int | None, option: Callable[[str], str]
             ) -> tuple[float, float] | None:
    """Check a campaign's sampling parameters; return the L range in force (or None).  option(key): the parameter
    `key` ("n", "d_k", "L_range") as a refusal names it, the command's --d-k or the API's d_k=."""
    dist = get(name)
    # a manifest's "4" or 4.0 compared with an integer: a TypeError
    n, d = integer(n, option("n")), integer(d, option("d"))
    if not 2 <= n <= MAX_TOKENS:
        raise BadInput(f"{option('n')} must be between 2 and {MAX_TOKENS} tokens, got {n}")
    if not dist.min_dimension <= d <= MAX_DIMENSION:
        raise BadInput(f"{option('d')} must be between {dist.min_dimension} and {MAX_DIMENSION} for {name}, got {d}")
    heads.checked_d_k(d, d_k, option("d_k"))  # the attack's rule too
    if L_range is None:
        return dist.default_L_range
    return L_RANGE.checked(L_range, option("L_range"))


def _sq_diameter(X: np.ndarray) -> float:
    """D^2 in float64: the largest squared distance between two tokens."""
    return float(quantities.pairwise_sq_distances(FLOAT64, X).max())


def float64_L(X: np.ndarray, A: np.ndarray) -> float:
    """a D^2 in float64: ||A||_2 times the squared diameter of the tokens."""
    return float(np.linalg.norm(A, 2) * _sq_diameter(X))


def samples(name: str, n: int, d: int, seed: int, indices: list[int], L_range=None,
            parts: LayerParts | None = None, d_k: int | None = None) -> list[Sample]:
    """Configurations `indices` of the campaign (sample), once the floating-point environment is known to be the
    one they are drawn in: numpy's draws and the SVD that scales A round as the process does, and under a rounding
    mode a library set, configuration i was another than its seed gives elsewhere (certify verify then rejected a
    sound campaign).  Probed once for them all (fpmodel.probe_environment, some 40 us: three times a draw of 8 x 4)."""
    if unusable := fpmodel.probe_environment():
        raise BadInput(f"a campaign's configurations are drawn in binary64 rounded to nearest, the same on every "
                       f"machine, and in this process {unusable}: they would not be the campaign's")
    return [sample(name, n, d, seed, index, L_range, parts, d_k) for index in indices]


def sample(name: str, n: int, d: int, seed: int, index: int, L_range=None,
           parts: LayerParts | None = None, d_k: int | None = None) -> Sample:
    """Configuration `index` of the campaign (name, n, d, seed, L range, layer parts, thin head's d_k);
    validate() and parts.validated() first; drawn as rounding to nearest draws it only where the environment is the
    model's (samples probes it)."""
    dist = DISTRIBUTIONS[name]
    rng = np.random.default_rng([seed, index])
    draw = dist.draw(rng, n, d, d_k)
    A = draw.query_key()
    # a thin head's a from its d_k x d_k reduction; without d_k the SVD of A as always (the layernorm-*
    # heads too), so that a campaign's beta, hence its configurations, stay those it was run with
    a_unit = draw.thin_norm() if d_k is not None else None
    beta, L_target = 1.0, None
    if L_range is not None:
        lo, hi = L_range
        L_target = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        L_unit = float64_L(draw.X, A) if a_unit is None else a_unit * _sq_diameter(draw.X)
        if L_unit > 0:
            beta = L_target / L_unit
    config: dict = {"name": f"{name}-n{n}-d{d}-seed{seed}-{index}", "X": draw.X.tolist()}
    if draw.A is not None:
        config["A"] = draw.A.tolist()
    else:
        config.update(W_Q=draw.W_Q.tolist(), W_K=draw.W_K.tolist())
        if d_k is not None:
            config["d_k"] = d_k
    if beta != 1.0:
        config["beta"] = beta
    if parts is not None:
        parts.add_to(rng, config, d)
    return Sample(index=index, config=config, X=draw.X, A=beta * A, L_target=L_target,
                  a=None if a_unit is None else abs(beta) * a_unit)
