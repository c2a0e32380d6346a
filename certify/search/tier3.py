"""The rigorous float64 tier: decide a batch of attention configurations at near float speed.

For each configuration the tier says "holds" only when binary64 enclosures (certify/core/arith/
attention64.py, valid under the model that fpmodel.py checks at start-up) prove the claim's
inequalities D(X') <= bound(a, D[, v]) with X' = P X (or P X V^T), a = ||A||_2, D = D(X),
v = ||V||_2:

    D(X') <= upper bound   <=   lower bound of the bound side, from lower bounds of a, D and v

(every bound here increases in a, D and v, so lower bounds of them give a lower bound of the
bound side).  Anything else is "cannot decide", never "violated": the arb engine decides those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from certify.core.arith import attention64, exp64, fpmodel
from certify.core.arith.rounding import down, up
from certify.errors import BadInput

HOLDS, UNDECIDED = "holds", "cannot decide"


def _global_lower(L, D):
    """(1 - exp(-L)) D from below."""
    _, gap = exp64.exp_bounds(-L)
    return down(np.maximum(down(1.0 - gap), 0.0) * D)


def _tanh_lower(L, D):
    """tanh(L/4) D from below; tanh(L/4) = (1 - e) / (1 + e), e = exp(-L/2), decreases in e."""
    _, e = exp64.exp_bounds(-down(L * 0.5))
    return down(np.maximum(down(np.maximum(down(1.0 - e), 0.0) / up(1.0 + e)), 0.0) * D)


def _cubic_lower(L, D):
    """a D^3 = L D from below."""
    return down(L * D)


# claim -> the bound sides of its inequalities (each D_out <= side), and whether they are scaled by
# v = ||V||_2 (X' = P X V^T; shared/CLAIMS.md, certify/claims/collapse.py and value.py)
BOUNDS = {"collapse.global": ((_global_lower,), False), "collapse.tanh": ((_tanh_lower,), False),
          "collapse.cubic": ((_cubic_lower,), False), "value.expansive": ((_global_lower, _cubic_lower), True)}
PURE_ATTENTION_CLAIMS = tuple(claim for claim, (_, scaled) in BOUNDS.items() if not scaled)


@dataclass
class Batch:
    """b configurations of one attention layer in binary64 (exact inputs): X (b, n, d) and either
    A (b, d, d) or W_Q, W_K (b, d, d_k) with optional biases (b, d_k); the score scale is beta (b,)
    or a scalar, divided by sqrt(d_k) when d_k is given (the W_Q, W_K form); an optional value
    matrix V (b, d, d)."""

    X: np.ndarray
    A: np.ndarray | None = None
    W_Q: np.ndarray | None = None
    W_K: np.ndarray | None = None
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    beta: np.ndarray | float = 1.0
    d_k: int | None = None
    V: np.ndarray | None = None  # (b, d, d): X' = P X V^T

    def validated(self) -> "Batch":
        if self.X.ndim != 3:
            raise BadInput(f"X must have shape (batch, n, d), got {self.X.shape}")
        if (self.A is None) == (self.W_Q is None or self.W_K is None):
            raise BadInput("give either A or both W_Q and W_K")
        arrays = [self.X, self.A, self.W_Q, self.W_K, self.b_Q, self.b_K, self.V, np.asarray(self.beta)]
        if not all(np.all(np.isfinite(a)) for a in arrays if a is not None):
            raise BadInput("the configurations must be finite binary64 numbers")
        return self

    def operator(self) -> dict:
        return {"A": self.A, "W_Q": self.W_Q, "W_K": self.W_K, "beta": self.beta, "d_k": self.d_k}


@dataclass
class Enclosures:
    """Per configuration: P in [P_lo, P_hi]; D(P X V^T) <= D_out_upper; D(X) >= D_lower;
    a >= a_lower; ||V||_2 >= v_lower (None without V)."""

    P_lo: np.ndarray
    P_hi: np.ndarray
    D_out_upper: np.ndarray
    D_lower: np.ndarray
    a_lower: np.ndarray
    v_lower: np.ndarray | None


def enclosures(batch: Batch) -> Enclosures:
    batch = batch.validated()
    with np.errstate(all="ignore"):  # overflow gives inf or nan, which decide nothing
        S, S_rad = attention64.scores(batch.X, b_Q=batch.b_Q, b_K=batch.b_K, **batch.operator())
        P_lo, P_hi = attention64.softmax_bounds(S, S_rad)
        return Enclosures(P_lo=P_lo, P_hi=P_hi, D_out_upper=attention64.output_diameter_upper(P_lo, P_hi, batch.X, batch.V),
                          D_lower=attention64.diameter_lower(batch.X),
                          a_lower=attention64.norm_lower(**batch.operator()),
                          v_lower=None if batch.V is None else attention64.norm_lower(A=batch.V))


def bound_lower(claim: str, a_lower: np.ndarray, D_lower: np.ndarray, v_lower: np.ndarray | None = None) -> np.ndarray:
    """A lower bound of the smallest bound side of the claim at (a, D, v) >= (a_lower, D_lower, v_lower)."""
    sides, scaled = _claim_sides(claim, v_lower is not None)
    with np.errstate(all="ignore"):
        L = down(down(a_lower * D_lower) * D_lower)
        lowest = np.minimum.reduce([side(L, D_lower) for side in sides])
        return down(v_lower * lowest) if scaled else lowest


def _claim_sides(claim: str, with_value: bool):
    if claim not in BOUNDS:
        raise BadInput(f"the float64 tier decides {', '.join(BOUNDS)}; not {claim!r}")
    sides, scaled = BOUNDS[claim]
    if scaled != with_value:
        raise BadInput(f"{claim} is about attention {'with' if scaled else 'without'} a value matrix V")
    return sides, scaled


def unusable_reason() -> str | None:
    """Why the tier cannot run on this machine (a floating-point model probe failed), or None."""
    usable, reason = fpmodel.tier3_usable()
    return None if usable else reason


def evaluate(claim: str, batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(verdicts, lhs_upper, rhs_lower) per configuration: HOLDS where lhs_upper <= rhs_lower,
    else UNDECIDED; all UNDECIDED (bounds nan) when the floating-point model fails its probes
    (fpmodel.tier3_usable says why)."""
    _claim_sides(claim, batch.V is not None)
    if unusable_reason() is not None:
        nothing = np.full(batch.X.shape[0], np.nan)
        return np.full(batch.X.shape[0], UNDECIDED, dtype=object), nothing, nothing
    found = enclosures(batch)
    rhs = bound_lower(claim, found.a_lower, found.D_lower, found.v_lower)
    holds = found.D_out_upper <= rhs  # nan: False
    return np.where(holds, HOLDS, UNDECIDED).astype(object), found.D_out_upper, rhs


def decide(claim: str, batch: Batch) -> np.ndarray:
    """Per configuration HOLDS or UNDECIDED (an array of str)."""
    return evaluate(claim, batch)[0]


def batch_of_configs(configs: list[dict]) -> Batch:
    """The Batch of single-layer pure-attention configurations (certify.config's JSON form, binary64
    numbers) of one shape; BadInput for anything else (masks, V, residual, FFN, LayerNorm)."""
    keys = {"name", "X", "A", "W_Q", "W_K", "b_Q", "b_K", "d_k", "beta", "V"}
    extra = set().union(*(set(c) for c in configs)) - keys
    if extra:
        raise BadInput(f"the float64 tier decides attention with or without V only; not {', '.join(sorted(extra))}")

    def stacked(key):
        present = [key in c for c in configs]
        if not any(present):
            return None
        if not all(present):
            raise BadInput(f"a batch must be of one form: {key} is in some configurations only")
        try:
            return np.array([c[key] for c in configs], dtype=np.float64)
        except (TypeError, ValueError):
            raise BadInput(f"{key} must be binary64 numbers of one shape for the float64 tier") from None

    W_Q = stacked("W_Q")
    d_k = None
    if W_Q is not None:
        d_ks = {c.get("d_k", W_Q.shape[-1]) for c in configs}
        if len(d_ks) != 1:
            raise BadInput("a batch must share d_k")
        d_k = int(d_ks.pop())
    if not all(isinstance(c.get("beta", 1.0), (int, float)) for c in configs):
        raise BadInput("beta must be a binary64 number for the float64 tier")
    beta = np.array([float(c.get("beta", 1.0)) for c in configs])
    return Batch(X=stacked("X"), A=stacked("A"), W_Q=W_Q, W_K=stacked("W_K"), b_Q=stacked("b_Q"),
                 b_K=stacked("b_K"), beta=beta, d_k=d_k, V=stacked("V"))
