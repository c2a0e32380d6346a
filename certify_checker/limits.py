"""The checker's caps on the work a certificate may demand (README, "Limits").

The same numbers as certify.core.limits (a test keeps them equal), written here again because the
checker shares no code with certify.  A certificate beyond them is refused before any work (not
confirmed, not rejected: `certify verify` and `python -m certify_checker` exit 2); `--limit NAME=VALUE` on
either raises one.  Work is in units of about 0.1 us of one core at 53 bits (`python -m
benchmarks.limits`): per layer (layer_work) arb_mat multiply-adds, PRODUCTS a unit, ball operations made from
Python, ENTRY units each, and LAYER for a step; its Python the same at any precision, its arithmetic weighted by
cost(bits) at the precision and at each multiple a kind may recompute at (its ESCALATION: layer_parts, layer_cost).
A trajectory's steps are priced apart (step_parts), in the same way.  An FFN's weights are priced through h x h
and d x d witnesses: this version states d x d ones (a wide weight's of its transpose, forward.spectral_norm),
earlier ones h x h, which a certificate may still state.  Memory: the same arrays and one norm's (20 w^2 balls).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    tokens: int = 1024
    dim: int = 1024
    layers: int = 64
    precision: int = 1 << 16
    nesting: int = 32
    digits: int = 4000
    bytes: int = 64 << 20
    memory: int = 2 << 30
    work: int = 10**9


LIMITS = Limits()
ADVICE = "`certify verify --limit"  # how a cap's refusal says to raise it; `python -m certify_checker` names itself
# A text holds at most one array, object or key per CONTAINER_BYTES bytes of the bytes limit, its characters `{`, `[`
# and `:` counted before it is read: each costs json.loads and tree_problem's walk some 70 to 200 bytes and up to a
# microsecond, and 64 MiB of `[{},{},...]` took 3.5 GB and 24 s to be refused.  As certify's (a test keeps them equal).
CONTAINER_BYTES = 16


def limbs(bits: int, most: int = 1 << 20) -> int:
    """The 64-bit words of a mantissa of `bits` bits, the per-limb part of every work estimate; bits is read
    from a certificate before it is judged, so it is clamped to [0, most] first."""
    return 1 + min(max(bits, 0), most) // 64


def text_work(reading: tuple[int, int], bits: int, reads: int, escalation: tuple) -> int:
    """The work of reading the numbers stated as text (schema.reading's units and count) `reads` times a pass, at the
    precision and at each escalation of it: each text its units, and a unit a limb more for its division.  Every kind
    that reads texts prices them so (inequality.text_work, head.work, rank.work), one formula; none price nothing."""
    units, texts = reading  # no texts, no units (schema.reading counts them together)
    return texts and reads * ((1 + len(escalation)) * units + texts * sum(limbs(f * bits) for f in (1, *escalation)))


# The units of layer_work, measured on one core (python-flint 0.9) at 128 x 384 to 256 x 768, 53 bits.
PRODUCTS = 32  # arb_mat multiply-adds a unit: 3 to 4.4 ns each
ENTRY = 3  # units of one ball operation made from Python (an entry read or listed, an exp, a sum): 0.1 to 0.4 us
GELU = 40  # units of one GELU (an erf): 4 us
LAYER = 2000  # units of the Python around one layer step (its arb_mats built, its quantities' calls: 0.2 to 0.4 ms)


def cost(bits: int, most: int = 1 << 20) -> int:
    """One unit at `bits` in units at 53: L + L^2 / 64 for L limbs (an arb_mat multiply-add costs 1.75 times its
    53-bit cost at 128 bits, 2.8 at 256, 13 at 1024, 125 at 4096; an exp 13 and 120)."""
    return limbs(bits, most) + limbs(bits, most) ** 2 // 64


def passes(bits: int, factors: tuple = (), most: int = 1 << 20) -> int:
    """cost() of an evaluation at `bits` and of its recomputations at each of `factors` times the bits."""
    return cost(bits, most) + sum(cost(factor * min(max(bits, 0), most), factor * most) for factor in factors)


def norm_work(d: int, thin: int = 0) -> int:
    """One layer's norms, as certify.core.limits.norm_count: 4 d^3, or 3 d^2 d_k + 8 d_k^3 for thin heads alone (more
    for d_k above about 0.57 d: a k x k witness takes the reduction whatever d_k, norms.query_key_norm)."""
    return 3 * d * d * thin + 8 * thin ** 3 if 0 < thin < d else 4 * d ** 3


VALUE_CUBES, VALUE_WEIGHT = 5, 46  # a value matrix V: its norm or powers' (d^3 each) and entries, as certify's
LAYERNORM = 4 * ENTRY  # LayerNorm's Python an entry of the tokens (twice at most, and its rows), as certify's
FULL_TOKENS, PAIRS = 3, 6  # the tokens' products counted 3 times (full precision); P's Python, as certify's
WINDOW_FULL = 4  # a window's product of attention matrices: both factors at the full precision, as certify's


def layer_parts(n: int, d: int, hidden: int = 0, thin: int = 0, value: bool = False,
                layernorm: bool = False) -> tuple[int, int]:
    """One layer step at 53 bits as (its Python, the same at any precision; its arithmetic, cost() times as much at
    other precisions), as step_parts: the products (scores, X A X^T or a thin head's (X W_Q)(X W_K)^T; P X and a
    Gram matrix, n^2 d each; the norms; an FFN's, 2 n d h, and its weights' norms through h x h and d x d), PRODUCTS a
    unit, an exp an entry of P (ENTRY) and the GELUs; the Python: the entries read and listed (ENTRY), a weight's as a
    step's (STEP_WEIGHT: at 53 bits a value layer's forced recomputations took 2 to 3 times their price without it)
    and the step's own LAYER; a value matrix's P X V^T, n d^2, and VALUE_CUBES and VALUE_WEIGHT; LayerNorm's, 2 an
    entry of the tokens (arithmetic) and LAYERNORM (Python).  Each layer's tokens at the full precision (stated as
    text in the first): their products FULL_TOKENS times, P's exps twice; P's Python (diameters' pairs) PAIRS ENTRY."""
    tokens, weights = (2 * n * d * thin + n * n * thin, 0) if 0 < thin < d else (n * n * d, n * d * d)  # certify's
    products = (FULL_TOKENS * (tokens + 2 * n * n * d) + weights + norm_work(d, thin)  # score_products: the scores'
                + value * (n * d * d + VALUE_CUBES * d ** 3))  # products on the tokens and by a weight
    if hidden:
        products += 2 * n * d * hidden + 2 * d * hidden * (d + hidden) + d ** 3 + hidden ** 3
    python = (ENTRY * (PAIRS * n * n + n * d) + STEP_WEIGHT * (d * d + 2 * d * hidden) + LAYER + VALUE_WEIGHT * d * d * value
              + LAYERNORM * n * d * layernorm + (ENTRY * thin ** 3 // 6 if 0 < thin < d else 0))  # norms.cholesky_upper
    return python, products // PRODUCTS + 2 * ENTRY * n * n + GELU * n * hidden + 2 * n * d * layernorm


def window_parts(n: int, d: int, k: int) -> tuple[int, int]:
    """One window of k layers (windowed.Window) at 53 bits, as layer_parts and certify's: its product of k attention
    matrices, both factors at the full precision (WINDOW_FULL), and their rescalings ((k - 1) n d^2), D, D_end, D_0
    and Q X_t (n^2 d each), PRODUCTS a unit; its minima over P's edges and M's and Q's columns, its rows rescaled and
    its norms (ENTRY each, Python), Q's divisions (ENTRY) and its norms' operations (arithmetic)."""
    products = (k - 1) * (WINDOW_FULL * n ** 3 + n * d * d) + 4 * n * n * d
    python = ENTRY * ((2 * k + 4) * n * n + (k + 4) * n * d) + LAYER
    return python, products // PRODUCTS + ENTRY * n * n + (k + 2) * n * d


def layer_work(n: int, d: int, hidden: int = 0, thin: int = 0, value: bool = False, layernorm: bool = False) -> int:
    """One layer step at 53 bits, both of layer_parts."""
    return sum(layer_parts(n, d, hidden, thin, value, layernorm))


def layer_cost(n: int, d: int, hidden: int, thin: int, bits: int, factors: tuple = (), most: int = 1 << 20,
               value: bool = False, layernorm: bool = False) -> int:
    """The work of a layer step at `bits` and of its recomputation at each of `factors` times them."""
    python, arithmetic = layer_parts(n, d, hidden, thin, value, layernorm)
    return (1 + len(factors)) * python + arithmetic * passes(bits, factors, most)


# One step of a trajectory (certify_checker.trajectory: the layer through attention, centred_step and tau, or
# forward.layer_step, and D and mu), measured on one core at 6 x 3 to 256 x 768 and 53 to 8000 bits (`python -m
# benchmarks.limits` prints each step's price against its CPU time): its Python per operation does not grow with the
# precision, only its arithmetic does (cost()), so a tiny step at thousands of bits is not priced as thousands of
# 53-bit ones.  A step's Python: LAYER_STEP, STEP_ENTRY an entry of P (6 to 9 us: its exps, Pi, Delta, the scores'
# rows), STEP_WEIGHT an entry of A (parsed, formed, A^T c), ENTRY a token's entry, a hidden unit's and a term of tau.
LAYER_STEP = 500
STEP_ENTRY = 70
STEP_WEIGHT = 20
STEP_EXP = 8  # units an entry of P at 53 bits, times cost(): its two exps and a dozen products (0.7 us at 4000 bits)


def step_parts(n: int, d: int, hidden: int = 0, d_k: int = 0) -> tuple[int, int]:
    """One trajectory step at 53 bits as (its Python, the same at any precision; its arithmetic, which costs cost()
    times as much at other precisions): the products (scores and P X, n^2 d; E A, n d^2; a head's W_Q W_K^T,
    d^2 d_k, formed each step; an FFN's, 2 n d h) and tau's n^3 / 2 terms, PRODUCTS a unit, the entries of P and
    the GELUs."""
    cubes = n * n * n // 2  # tau's terms: a difference, an absolute value and a sum each
    products = 3 * n * n * d + n * d * d + d * d * min(d_k, d) + 2 * n * d * hidden + cubes
    python = LAYER_STEP + STEP_ENTRY * n * n + STEP_WEIGHT * d * d + ENTRY * (n * d + 2 * d * hidden + cubes)
    return python, products // PRODUCTS + STEP_EXP * n * n + GELU * n * hidden


def step_cost(n: int, d: int, hidden: int, d_k: int, bits: int, factors: tuple = ()) -> int:
    """The work of a trajectory step at `bits` and of its recomputation at each of `factors` times them."""
    python, arithmetic = step_parts(n, d, hidden, d_k)
    return (1 + len(factors)) * python + arithmetic * passes(bits, factors)


def centred_cost(n: int, d: int, bits: int, factors: tuple = ()) -> int:
    """The work of a layer of an inequality certificate in centred form (certify_checker.centred, a trajectory's
    step) at `bits` and at each of `factors` times them, its d_k taken as d (the widest a head's W_Q W_K^T forms):
    as certify.core.limits.centred_cost, which a test keeps equal."""
    return step_cost(n, d, 0, d, bits, factors)


def stated_shape(value) -> tuple[int, int]:
    """(rows, columns) of a matrix as a certificate states it, read before its inputs are checked: rows, or a binary64
    block (schema.expanded checks its bytes); (0, 0) for anything else."""
    shape = value.get("shape") if isinstance(value, dict) else None
    if isinstance(shape, list) and len(shape) == 2 and all(type(v) is int for v in shape):
        return max(shape[0], 0), max(shape[1], 0)
    return (len(value), len(value[0])) if isinstance(value, list) and value and isinstance(value[0], list) else (0, 0)


def shape_problem(n: int, d: int, layers: int, hidden: int, precision: int, limits: Limits) -> str | None:
    """Which cap on a size or the precision these pass, in words, or None: asked before anything is read from a
    certificate at a cost beyond its length (a window claim's mask graph, inequality.work)."""
    for value, cap, name in ((n, limits.tokens, "tokens"), (d, limits.dim, "dim"), (hidden, limits.dim, "dim"),
                             (layers, limits.layers, "layers"), (precision, limits.precision, "precision")):
        if value > cap:
            return f"{name} {value} is above the checker's limit of {cap} ({ADVICE} {name}=N` raises it)"
    return None


@functools.lru_cache(maxsize=256)  # a pure function of numbers and frozen Limits: a campaign's certificates share them
def problem(n: int, d: int, layers: int, hidden: int, precision: int, limits: Limits, steps=0, extra=0,
            thin: int = 0, factors: tuple = (), valued: bool = False, layernorm: bool = False) -> str | None:
    """Which limit a certificate of these shapes at this precision passes, in words, or None (steps: the layer
    steps computed beyond the layers, each weighted by cost() at its precision, and summed: a trajectory's value
    curves; extra: other work, a trajectory's steps, a claim's windows; thin: norm_work's; factors: passes' and
    layer_cost's; valued: a layer has a value matrix, layer_parts' value; layernorm: a layer has LayerNorm)."""
    if refusal := shape_problem(n, d, layers, hidden, precision, limits):
        return refusal
    words = limbs(precision, limits.precision)  # within the cap just checked: as precision // 64 + 1
    width = (thin if 0 < thin < d else d) if layers else 0  # one norm's arrays and flint's temporaries (NORM_BALLS)
    memory = (layers * (3 * n * n + 4 * n * d + 3 * d * d + 3 * hidden * (d + n)) + 20 * width * width) * (96 + 8 * words)
    if memory > limits.memory:
        return f"an estimated {memory} bytes is above the checker's memory limit of {limits.memory} bytes"
    cost = layers * layer_cost(n, d, hidden, thin, precision, factors, limits.precision, valued, layernorm) + steps * (
        layer_work(n, d, hidden, thin, valued, layernorm)) + extra
    if cost > limits.work:
        return f"an estimated work of {cost:.3g} is above the checker's limit of {limits.work:.3g}"
    return None
