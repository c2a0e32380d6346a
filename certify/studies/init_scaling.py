"""init.scaling: what standard initialisation does to the global bound, certified per dimension d.

For each d: n tokens with iid N(0, 1) entries (LayerNorm scale: ||x|| about sqrt(d)) and W_Q, W_K
(d x d_k) with iid N(0, s^2) entries, s^2 = 1/d (lecun), 2/(d + d_k) (xavier) or 0.02^2 (bert);
A = W_Q W_K^T / sqrt(d_k).  The float64 samples are the exact inputs.  Reported per d:
    a = ||A||_2, D^2, a D^2            certified enclosures
    float64 1 - exp(-a D^2) == 1.0, exp(-a D^2) == 0.0   what float64 computes from its own a D^2
    log10 exp(-a D^2) = -a D^2 / ln 10 certified: the gap the bound keeps, however small
    D(PX) / D                          the certified contraction actually achieved
    bound                              D(PX) <= (1 - exp(-a D^2)) D, confirmed by the independent
                                       checker from an attention-head certificate (certify.studies.heads)
Every enclosure is computed at 53 bits and the precision doubles (up to the cap) until each has
RESOLVED_BITS bits of relative accuracy.

Cost.  a needs one certified spectral norm.  With d_k <= d / 4 the thin route works on d_k x d_k
matrices only (certify.core.thin_norm); otherwise the d x d matrix W_Q W_K^T is formed and
enclosed (four d^3 ball products: about 25 s at d = 1024 on two cores, most of a default run),
and the checker forms and encloses it again to confirm the row (as long again).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from flint import arb

from certify.core import quantities
from certify.core import spectral
from certify.core import seeds
from certify.core.arith import BALL, FLOAT64
from certify.errors import BadInput, did_you_mean
from certify.core.float64_limits import GAP_UNDERFLOWS, ONE_MINUS_GAP_IS_ONE, float64_view
from certify.core import thin_norm
from certify.core.limits import DEFAULT as DEFAULT_LIMITS
from certify.core.numbers import Binary64Matrix, NotAnInteger, ball_text as text, encode_matrix, option_integer
from certify.core.precision import START_PRECISION, check_precision_cap, escalate, is_resolved, working
from certify.core.spectral import NormWitness
from certify.core.verdicts import HOLDS, UNDECIDED
from certify.engine import certificate
from certify.studies import heads

# scheme -> (s^2 as text, s^2(d, d_k), expected growth exponent of a D^2 in d when d_k = d).
# The exponent: ||W_Q W_K^T||_2 is about sqrt(27/4) s^2 d for square Gaussian factors
# (proofs/init_scaling.py), so a is about 2.6 s^2 sqrt(d) and a D^2 about 5.2 s^2 d^(3/2).
SCHEMES = {
    "lecun": ("1/d", lambda d, d_k: 1.0 / d, 0.5),
    "xavier": ("2/(d + d_k)", lambda d, d_k: 2.0 / (d + d_k), 0.5),
    "bert": ("0.02^2", lambda d, d_k: 0.02**2, 1.5),
}
# The checker confirms each row under its default limits (`init` takes no --limit): a d or d_k above its `dim` was
# computed for minutes and then reported undecided, the certificate refused.
MAX_DIMENSION = DEFAULT_LIMITS.dim
MAX_TOKENS = DEFAULT_LIMITS.tokens
DEFAULT_MAX_PRECISION = 1 << 12


@dataclass
class Sample:
    """The float64 data of one row, every value taken as exact: tokens X (n x d), W_Q and W_K (d x d_k) drawn
    with entry variance `variance`."""
    d: int
    d_k: int
    variance: float
    X: np.ndarray  # n x d, float64 values taken as exact
    W_Q: np.ndarray  # d x d_k
    W_K: np.ndarray


@dataclass
class Row:
    """One certified row of init.scaling: enclosures of a = ||A||_2, D^2, a D^2, log10 exp(-a D^2) and
    D(PX)/D, what float64 makes of 1 - exp(-a D^2) and exp(-a D^2), how a was certified, and the bound's
    verdict as the checker confirmed it."""
    d: int
    d_k: int
    variance: float
    a: arb
    D_squared: arb
    aD2: arb
    log10_gap: arb  # log10 exp(-a D^2) = -a D^2 / ln 10
    ratio: arb  # D(PX) / D
    float64_aD2: float
    float64_one_minus_is_one: bool  # float64 computes 1 - exp(-a D^2) as exactly 1.0
    float64_gap_is_zero: bool  # float64 computes exp(-a D^2) as exactly 0.0
    route: str  # "thin" or "direct": how ||W_Q W_K^T||_2 was certified
    precision: int
    seconds: float
    bound: str = UNDECIDED  # D(PX) <= (1 - exp(-a D^2)) D: holds | violated as the checker confirmed it, or undecided
    checker: str = ""  # the checker's word on the row's attention-head certificate

    @property
    def bound_certified(self) -> bool:
        """D(PX)/D <= 1 - exp(-a D^2), decided in ball arithmetic (the gap kept itself) and confirmed by
        the independent checker from the row's attention-head certificate."""
        return self.bound == HOLDS


def parse_dimensions(text: str) -> list[int]:
    """"64,256,1024" -> [64, 256, 1024], each an integer option (int() took an Arabic-Indic 4 for 4 and refused
    1e3, which every other integer option takes)."""
    try:
        values = [option_integer(part) for part in str(text).split(",")]
    except NotAnInteger as wrong:
        raise BadInput(f"--d must be a comma-separated list of integers such as 64,256,1024: {wrong.reason}") from None
    bad = [d for d in values if not 2 <= d <= MAX_DIMENSION]
    if bad:
        raise BadInput(f"every dimension in --d must be from 2 to {MAX_DIMENSION}, the checker's limit on d (it "
                       f"confirms each row), got {bad[0]}")
    return values


def sample(d: int, n: int, scheme: str, seed: int, d_k: int | None = None) -> Sample:
    """Tokens and weights for one d; a fresh generator per d, so each row can be regenerated alone."""
    if scheme not in SCHEMES:
        raise BadInput(f"unknown scheme {scheme!r}; {did_you_mean(scheme, SCHEMES)}choose one of {', '.join(SCHEMES)}")
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_TOKENS:
        raise BadInput(f"--n must be an integer from 2 to {MAX_TOKENS} (at least two tokens), got {n!r}")
    seeds.checked(seed)
    d_k = d if d_k is None else d_k
    if isinstance(d_k, bool) or not isinstance(d_k, int) or not 1 <= d_k <= MAX_DIMENSION:
        raise BadInput(f"--d-k must be an integer from 1 to {MAX_DIMENSION}, got {d_k!r}")
    variance = SCHEMES[scheme][1](d, d_k)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W_Q = rng.normal(scale=math.sqrt(variance), size=(d, d_k))
    W_K = rng.normal(scale=math.sqrt(variance), size=(d, d_k))
    return Sample(d=d, d_k=d_k, variance=variance, X=X, W_Q=W_Q, W_K=W_K)


def _thin_is_cheaper(d: int, d_k: int) -> bool:
    """The thin route's k x k Cholesky runs in Python-level arb operations (k^3 / 6 of them): worth it
    against the four d^3 ball products of the direct route while d_k <= d / 4."""
    return 4 * d_k <= d


def _route(s: Sample) -> str:
    """How ||W_Q W_K^T||_2 is certified for this sample: "thin" or "direct"."""
    return "thin" if _thin_is_cheaper(s.d, s.d_k) else "direct"


def _checker_refusal(s: Sample) -> str | None:
    """Why the checker's default limits would refuse this row's certificate even at the lowest precision, or None:
    its estimate reads the shapes only (the witness's basis is a placeholder of the route's size)."""
    size = s.d_k if _route(s) == "thin" else s.d
    witness = {"route": _route(s), "basis": encode_matrix(Binary64Matrix(np.zeros((size, size)))), "top": [0.0] * size}
    inputs = heads.Head(X=s.X, W_Q=s.W_Q, W_K=s.W_K).inputs({"global": HOLDS})
    return certificate.checker_refusal({"kind": heads.KIND, "inputs": inputs, "witness": witness,
                                        "precision": START_PRECISION})


def _thin_norm(W_Q: np.ndarray, W_K: np.ndarray) -> tuple[arb, str, NormWitness, float]:
    """||W_Q W_K^T||_2 certified through d_k x d_k factors (certify.core.thin_norm), with its route and
    witness, and the float64 value (from the float64 QR factors: ||W_Q W_K^T|| = ||R_Q R_K^T||)."""
    certified, route, witness = thin_norm.product_norm_witnessed(thin_norm.ball_matrix(W_Q), thin_norm.ball_matrix(W_K))
    return certified, route, witness, thin_norm.product_norm_estimate(W_Q, W_K)


def _direct_norm(W_Q: np.ndarray, W_K: np.ndarray) -> tuple[arb, str, NormWitness, float]:
    """||W_Q W_K^T||_2 (certified, with its witness, and the float64 value) from the d x d ball product.

    The witness is the eigenbasis of the float64 (W_Q W_K^T)^T (W_Q W_K^T): the right singular
    vectors, found several times faster than by a full SVD; any nearly orthogonal basis is valid.
    """
    product = W_Q @ W_K.T
    values, vectors = np.linalg.eigh(product.T @ product)
    basis = np.ascontiguousarray(vectors[:, ::-1])
    witness = spectral.NormWitness(basis=basis, top=basis[:, 0].copy())
    ball = thin_norm.ball_matrix(W_Q) * thin_norm.ball_matrix(W_K).transpose()
    certified = spectral.enclose(np.array(ball.tolist(), dtype=object), witness)
    return certified, "direct", witness, float(np.sqrt(max(values[-1], 0.0)))


def _enclosures(s: Sample, route: str) -> tuple[dict[str, arb], float, str, NormWitness]:
    """The head's enclosures (certify.studies.heads.values) at the current precision, float64's a, and
    the route and witness of the norm."""
    norm, route, witness, float_norm = (_thin_norm if route == "thin" else _direct_norm)(s.W_Q, s.W_K)
    found = heads.values(heads.Head(X=s.X, W_Q=s.W_Q, W_K=s.W_K), thin_norm.ball_array(s.X),
                         norm / BALL.sqrt_nonneg(BALL.number(s.d_k)))
    return found, float_norm / math.sqrt(s.d_k), route, witness


def _resolved(found: dict[str, arb]) -> bool:
    return all(is_resolved(x) for x in (found["a"], found["D"], found["D_PX"]))


def certify_row(s: Sample, max_prec: int, stage: Callable[[str], None] = lambda text: None) -> Row:
    """Certify one sample: enclose a, D and D(PX) with the precision doubling from 53 bits up to `max_prec`
    until each has RESOLVED_BITS bits, then have the checker confirm D(PX) <= (1 - exp(-a D^2)) D from an
    attention-head certificate; stage(text) is told as each attempt and the checker begin."""
    started = time.time()
    route = _route(s)

    def attempt(precision: int):
        stage(f"d = {s.d}: the enclosures at {precision} bits")
        return _enclosures(s, route)

    (found, float_a, route, witness), precision = escalate(attempt, lambda result: _resolved(result[0]),
                                                            START_PRECISION, max_prec)
    stage(f"d = {s.d}: the checker")
    with working(precision):
        D_squared = found["D"] * found["D"]
        log10_gap = -found["a_D2"] / arb(10).log()
        bound = heads.confirm_steps(heads.Head(X=s.X, W_Q=s.W_Q, W_K=s.W_K), found, ("global",), route, witness,
                                    precision)
    float_aD2 = float_a * float(quantities.pairwise_sq_distances(FLOAT64, s.X).max())
    one_minus_is_one, gap_is_zero = float64_view(float_aD2)
    return Row(d=s.d, d_k=s.d_k, variance=s.variance, a=found["a"], D_squared=D_squared, aD2=found["a_D2"],
               log10_gap=log10_gap, ratio=found["D_PX"] / found["D"], float64_aD2=float_aD2,
               float64_one_minus_is_one=one_minus_is_one, float64_gap_is_zero=gap_is_zero,
               route=route, precision=precision, seconds=time.time() - started,
               bound=bound.outcomes["global"], checker=bound.checker)


def study(dimensions: list[int], scheme: str = "lecun", n: int = 16, seed: int = 0, d_k: int | None = None,
          max_prec: int = DEFAULT_MAX_PRECISION, progress: Callable[[Row], None] | None = None,
          stage: Callable[[str], None] = lambda text: None) -> list[Row]:
    """One certified Row per dimension; `progress(row)` is called as each is done, `stage(text)` as each part of a
    row begins (certify_row)."""
    check_precision_cap(max_prec)
    samples = [sample(d, n, scheme, seed, d_k) for d in dimensions]  # validate everything before the slow part
    for s in samples:
        # tau's n^3 pair terms: --n 1024 at d = 2 was computed, then shown undecided with the refusal in the JSON only
        if refusal := _checker_refusal(s):
            raise BadInput(f"d = {s.d} with --n {n}: the checker would refuse the row's certificate ({refusal}) and "
                           "init takes no --limit: choose a smaller --n or d")
    rows = []
    for s in samples:
        rows.append(certify_row(s, max_prec, stage))
        if progress is not None:
            progress(rows[-1])
    return rows


def growth_exponent(rows: list[Row]) -> float | None:
    """Least-squares slope of log(a D^2) against log(d): float64, descriptive only (sqrt(d) is 0.5)."""
    if len({r.d for r in rows}) < 2:
        return None
    x = np.log([r.d for r in rows])
    y = np.log([float(r.aD2.mid()) for r in rows])
    return float(np.polyfit(x, y, 1)[0])


def to_json(rows: list[Row], scheme: str, n: int, seed: int) -> dict:
    """The study as JSON: scheme, variance, n, seed, the float64 thresholds, the growth exponent of a D^2 and
    every row (balls as arb decimal text)."""
    def row_json(r: Row) -> dict:
        return {"d": r.d, "d_k": r.d_k, "variance": r.variance, "a": text(r.a), "D_squared": text(r.D_squared),
                "aD2": text(r.aD2), "log10_gap": text(r.log10_gap), "ratio_D_PX_over_D": text(r.ratio),
                "bound_certified": r.bound_certified, "checker": r.checker, "float64_aD2": r.float64_aD2,
                "float64_one_minus_exp_is_one": r.float64_one_minus_is_one,
                "float64_exp_is_zero": r.float64_gap_is_zero, "route": r.route, "precision": r.precision,
                "seconds": round(r.seconds, 2)}
    return {"scheme": scheme, "variance": SCHEMES[scheme][0], "n": n, "seed": seed,
            "tokens": "iid N(0, 1) entries: ||x|| about sqrt(d)",
            "thresholds": {"one_minus_exp_is_one_from": ONE_MINUS_GAP_IS_ONE, "exp_is_zero_from": GAP_UNDERFLOWS},
            "growth_exponent_aD2": growth_exponent(rows), "rows": [row_json(r) for r in rows]}
