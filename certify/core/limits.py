"""The documented caps on the work one input may demand (README, "Limits").

`certify check` and `certify verify` refuse an input beyond them before doing any work (bad
input, exit 2); `--limit NAME=VALUE` changes one, there and on every command that reads, decides or
has the checker confirm under them (trajectory, sample, attack, prove, counterexample).  The trusted checker keeps its own copy of the
same numbers and estimates (certify_checker.limits; a test keeps the two equal), since it shares
no code with certify.

    tokens     n, the tokens of a configuration                         1024
    dim        d, d_k and an FFN's hidden width                         1024
    layers     the layers of a stack                                    64
    precision  bits a certificate may state (`verify`)                  65536
    nesting    depth of JSON arrays and objects                         32
    digits     digits of a JSON integer                                 4000
    bytes      size of a configuration or certificate file              64 MiB
               and its arrays, objects and keys (one per 16 bytes)      4 Mi
    memory     estimated memory of the ball arithmetic (bytes)          2 GiB
    work       estimated work, units of about 0.1 us of one core       1e9 (a minute or two)

The estimates (memory, work) are coarse upper-ish bounds from the shapes, written in `ball_count`,
`layer_work`, `work` and `ball_bytes` below (the work counts the most a certificate can make the checker
do: its recomputations at 2 and 4 times the precision, which a stated value missing by rounding causes, and the
engine's own refinement of its norm witnesses from 106 bits, `refine_work`); they
refuse before a run, and stop the precision escalation of `check` (undecided, saying so) where the next
precision would pass them.  A trajectory is priced by the checker's own estimate of its certificate, step by step
(certify.studies.trajectory_budget).
A bound's own caps (2000 characters, 100 nested operators) are certify.core.expr's.
"""

from __future__ import annotations

import functools
import shlex
from dataclasses import dataclass, fields, replace

from certify.core.arguments import integer
from certify.core.numbers import MAX_DIGITS, NotAnInteger, option_integer
from certify.core.precision import REFINE_FROM, SPLIT_BITS
from certify.errors import BadInput


@dataclass(frozen=True)
class Limits:
    """The caps on an input (README, "Limits"): sizes, precision, JSON shape, memory and work."""
    tokens: int = 1024
    dim: int = 1024
    layers: int = 64
    precision: int = 1 << 16
    nesting: int = 32
    digits: int = 4000
    bytes: int = 64 << 20
    memory: int = 2 << 30
    work: int = 10**9

    def changed(self, items: list[str] | None) -> "Limits":
        """These limits with `NAME=VALUE` items applied (the --limit option), each name once: --limit repeats to
        change several limits, and a second value of one was kept silently in place of the first."""
        names = [f.name for f in fields(self)]
        out, given = self, {}
        for item in items or []:
            name, equals, value = item.partition("=")
            name = name.strip()
            if name not in names:
                raise BadInput(f"--limit {item!r}: unknown limit; the limits are {', '.join(names)}")
            if name in given:
                raise BadInput(f"--limit {name} given more than once ({given[name]!r}, {item!r}); give it once")
            given[name] = item
            if not equals:
                raise BadInput(f"--limit {item!r}: expected NAME=INTEGER")
            try:  # the integer options' rules: int(float()) read 3.7e0 as 3 and 1e400 as "expected NAME=INTEGER"
                number = option_integer(value)
            except NotAnInteger as wrong:
                raise BadInput(f"--limit {item!r}: {wrong.reason}") from None
            out = replace(out, **{name: _checked(name, number, f"--limit {item!r}")})
        return out


def _checked(name: str, number: int, given: str) -> int:
    """A limit's value, or BadInput: --limit's rule, and the Python API's (`given` names what was given)."""
    if number < 1:
        raise BadInput(f"{given}: a limit is a positive integer")
    if name == "digits" and number > MAX_DIGITS:  # a longer integer could not be read, nor written back
        raise BadInput(f"{given}: a number has at most {MAX_DIGITS} digits")
    return number


DEFAULT = Limits()

# JSON's arrays, objects and keys cost json.loads and the walks over what it built some 70 to 200 bytes of memory and up
# to a microsecond each, where a number or a string costs 8 to 70 bytes: 64 MiB of `[{},{},...]` took 3.4 GB and 23 s to
# be refused.  So a text may hold one per CONTAINER_BYTES bytes of the bytes limit, counted as its bytes `{`, `[` and
# `:` before it is read (strings' too): 4 Mi under the defaults, 1.6 GB and 8 s at most with short strings around
# them (which alone take 1.1 GB and a second at 64 MiB).  The densest files certify writes, a region proof's leaves and
# open boxes, hold one per 18 bytes or more (25 measured).  As certify_checker.limits.CONTAINER_BYTES (a test keeps the
# two equal).  Strings are not counted so: a cap would save little (64 MiB of numbers, `1.5,` repeated, take 0.83 GB;
# 8 Mi strings of `"ab",` among them 1.0 GB, against 1.1 GB for strings alone), and an honest configuration states its
# exact entries as strings as short (`"-1",`, `"1/3",`: 5 and 6 bytes each), as a region proof's are (16 bytes a
# string, its indentation included).
CONTAINER_BYTES = 16


def given(limits) -> Limits:
    """The limits a function of the Python API was given: DEFAULT for None, a Limits of valid caps, else BadInput
    (a dict of caps reached the reader and raised AttributeError)."""
    if limits is None or limits is DEFAULT:  # DEFAULT's caps are valid: a campaign's checks pass it each time
        return DEFAULT
    if not isinstance(limits, Limits):
        raise BadInput("limits: a certify.core.limits.Limits (None for the documented ones), "
                       f"not {type(limits).__name__}")
    # each a positive integer, as --limit takes it: Limits(tokens="5") raised TypeError where it was compared,
    # and Limits(work=float("nan")) passed every comparison, no limit at all
    return replace(limits, **{f.name: _checked(f.name, integer(getattr(limits, f.name), f"limits.{f.name}"),
                                               f"limits.{f.name} = {getattr(limits, f.name)!r}")
                              for f in fields(limits)})


def limbs(bits: int) -> int:
    """The 64-bit words of a mantissa of `bits` bits (as certify_checker.limits.limbs)."""
    return 1 + max(bits, 0) // 64


def ball_bytes(precision: int) -> int:
    """Memory of one arb ball held in Python: the object and arb struct, plus the midpoint's limbs."""
    return 96 + 8 * limbs(precision)


# A norm's arrays at its peak, in balls per entry of its witness (w x w: d, or d_k for thin heads; an FFN weight's
# is square on its smaller side, so at most d, certify.core.spectral): the witness, its
# products and python-flint's temporaries inside them, measured in resident memory (one 768 x 768 norm: about
# 1 GB of 1.2 GB at 256 x 768, 0.5 GB in the checker; 0.37 GB at 256 x 384).  The engine's refinement of a witness
# (certify.core.refine), before its norm is enclosed and freed by then, peaks below it: 13 to 16.5 balls per entry at
# its bits (w = 128, 256 at 424 and 1696 bits).
NORM_BALLS = 20


def ball_count(n: int, d: int, layers: int, hidden: int = 0, uses_tau: bool = False, thin: int = 0) -> int:
    """Balls alive at once in the engine's evaluation: every layer's arrays (X, scores, P, P X,
    the output, the weights), a diameter's centred tokens and their Gram matrix (n d + n^2:
    certify.core.quantities.pairwise_sq_distances), one norm's arrays (NORM_BALLS w^2, w = d or thin's d_k), and for
    tau the pairwise row minima (n^3 / 2)."""
    per_layer = 3 * n * n + 4 * n * d + 3 * d * d + 3 * hidden * (d + n)
    width = (thin if 0 < thin < d else d) if layers else 0  # kinds without layers price their own (head.work)
    peak = n * n + n * d + NORM_BALLS * width * width + (n * n * n // 2 if uses_tau else 0)
    return layers * per_layer + peak


def norm_count(d: int, thin: int = 0) -> int:
    """Ball multiplications of one layer's norms: 4 d^3 through d x d witnesses (A, V, an FFN's weights, whose
    witnesses are square on their smaller side, hidden x hidden never: certify.core.spectral); for a
    thin head alone (thin = d_k < d: W_Q, W_K of d x d_k, no A, V nor FFN, its witness d_k x d_k) the Grams of
    W_Q and W_K, W_Q W_K^T where a trajectory forms it (3 d^2 d_k) and the d_k x d_k reduction of
    certify.core.thin_norm (8 d_k^3), more than the d x d route's for d_k above about 0.57 d: the reduction is taken
    wherever W_K reduces, and capped at the d x d route's price, a head of 8 x 257 with d_k = 256 took 2.3 times its
    price in a forced verify (with the reduction's Cholesky, CHOLESKY)."""
    return 3 * d * d * thin + 8 * thin ** 3 if 0 < thin < d else 4 * d ** 3


def thin_width(d: int, widths: set) -> int:
    """The d_k of norm_count's thin heads from the query widths of every layer (d for a layer that is not a thin
    head alone): their largest when all are below d, else 0."""
    return max(widths) if widths and 0 < min(widths) and max(widths) < d else 0


# The work's units (README, "Limits"): about 0.1 us of one core at 53 bits (python-flint 0.9; `python -m
# benchmarks.limits` prints the estimates against the CPU time), measured at 128 x 384 to 256 x 768.
PRODUCTS = 32  # arb_mat multiply-adds a unit: 3 to 4.4 ns each
ENTRY = 3  # units of one ball operation made from Python (an entry read or listed, an exp, a sum): 0.1 to 0.4 us
GELU = 40  # units of one GELU (an erf): 4 us
LAYER = 2000  # units of the Python around one layer step (0.2 to 0.4 ms measured: its witnesses, its quantities)
WEIGHT = 20  # units of the Python of an entry of a weight (read, formed: certify_checker.limits.STEP_WEIGHT)
# The checker recomputes an inequality's layers at these multiples of the precision when a stated enclosure misses
# its own by rounding (certify_checker.exact.ESCALATION; a test keeps the two equal): `check` confirms every
# certificate it writes, so its estimate prices those recomputations too.
ESCALATION = (2, 4)

# The reduction's Cholesky of W_K^T W_K (certify.core.thin_norm.cholesky_upper; the checker's norms.cholesky_upper):
# d_k^3 / 6 multiply-adds of balls made from Python, CHOLESKY units each (about 0.35 us at 53 bits).
CHOLESKY = ENTRY


def cost(bits: int) -> int:
    """The work of one unit at `bits` bits, in units at 53: L + L^2 / 64 for L = 1 + bits // 64 limbs (an arb_mat
    multiply-add costs 1.75 times its 53-bit cost at 128 bits, 2.8 at 256, 13 at 1024, 125 at 4096; an exp 13 and
    120)."""
    words = limbs(bits)
    return words + words * words // 64


# A value matrix V (d x d) beyond the head: P X V^T (n d^2), and its norm ||V||_2 or value.bounded's powers V^k with
# theirs, each through a d x d witness (M W, (M W)^T (M W), W^T W) and a product: VALUE_CUBES d^3, PRODUCTS a unit;
# its Python VALUE_WEIGHT an entry (V and a witness's basis read and formed, E's row sums).  Unpriced, V made a
# value.bounded check's forced verify take 1.2 times its price at 16 x 16, 4000 bits (`python -m benchmarks.limits`),
# 1.0 at 64 x 64, 500 bits; at 128 x 384, 53 bits, it adds 3.7 s, priced 8.6e7 units.
VALUE_CUBES = 5
VALUE_WEIGHT = 2 * WEIGHT + 2 * ENTRY
# LayerNorm on a layer's n x d tokens, twice at most (post-LN around an FFN): its squares, sums and divisions made
# from Python and the rows made and read back around it, LAYERNORM units an entry (6 to 8 an application at 53 and
# 500 bits, 3 its rows), and 2 units an entry weighted by cost() (27 units an application at 4000 bits).
LAYERNORM = 4 * ENTRY
# Every layer's tokens at the full precision: a layer after the first has them (the one before made them), and so
# has the first where the tokens are stated as text, or with LayerNorm.  Binary64 tokens keep the scores, P X and a
# diameter's Gram matrix short; full-precision ones make each of these products 2 to 4 times as costly (counted
# FULL_TOKENS times) and the scores' exps costlier (ENTRY an entry of P more).  Priced on binary64 tokens, a forced
# verify of a bound on 2 value layers of 64 x 16 at 500 bits took 1.33 times its price, on 2 layers of 32 x 16 whose
# tokens and A are stated as non-dyadic rationals at 4000 bits 1.67 times, one such layer of 64 x 64 at 500 bits 1.5
# times (`python -m benchmarks.limits`, the stack and rational rows).
FULL_TOKENS = 3


def score_products(n: int, d: int, thin: int = 0) -> tuple[int, int]:
    """The multiply-adds of a layer's scores as (those on the tokens, counted FULL_TOKENS times; those of the tokens by
    a weight, once): X A X^T, (n^2 d, n d^2); a thin head alone's (thin = d_k < d: W_Q, W_K of d x d_k, no A)
    (X W_Q)(X W_K)^T, whose both products take the tokens, (2 n d d_k + n^2 d_k, 0).  Priced as X A X^T, a thin
    head's forced verify at 64 x 256 to 256 x 768, 53 to 424 bits, read 5.9 to 11 times its CPU on binary64 tokens
    and 1.8 to 4.3 times on tokens, W_Q and W_K stated as non-dyadic rationals; so priced, 4.0 to 7.7 and 1.3 to 3.0
    (`python -m benchmarks.limits`, the thin rows).  As certify_checker.limits.layer_parts' (a test keeps the two
    equal)."""
    return (2 * n * d * thin + n * n * thin, 0) if 0 < thin < d else (n * n * d, n * d * d)


# The Python of an entry of P, each pass (ENTRY each): the scores' rows read, P's made (a shift, an exp, a division)
# and listed, and the diameters of the layer's input and output, their n^2 / 2 pairs each read and compared (about
# 1.5 us a pair): PAIRS ENTRY an entry (2 ENTRY left a 128 x 16 layer's forced verify at 0.66 of its price at 53 bits,
# 0.45 with its tokens stated as non-dyadic rationals).
PAIRS = 6


def layer_parts(n: int, d: int, hidden: int = 0, thin: int = 0, value: bool = False,
                layernorm: bool = False) -> tuple[int, int]:
    """The work of one layer at 53 bits as (its Python, the same at any precision; its arithmetic, which costs cost()
    times as much at other precisions): its arb_mat products, PRODUCTS to a unit (the scores, score_products, P X and a
    diameter's Gram matrix, n^2 d each, those on the tokens counted FULL_TOKENS times as on full-precision ones; the
    norms, norm_count; an FFN's products, 2 n d h, and its weights' norms through h x h and d x d witnesses; a value
    matrix's, VALUE_CUBES), the exps of P (2 ENTRY an entry, their arguments at the full precision), the GELUs and
    LayerNorm's operations (2 an entry of the tokens); its ball operations made from Python (PAIRS ENTRY an entry of P,
    ENTRY an entry of the tokens and the norms' sums; WEIGHT an entry of a weight, VALUE_WEIGHT of V, LAYERNORM of the
    tokens with LayerNorm, CHOLESKY a multiply-add of a thin head's reduction) and the step's own LAYER.  Every layer
    alike: each may have full-precision tokens.  As certify_checker.limits.layer_parts (a test keeps the two equal)."""
    tokens, weights = score_products(n, d, thin)
    products = (FULL_TOKENS * (tokens + 2 * n * n * d) + weights + norm_count(d, thin)
                + value * (n * d * d + VALUE_CUBES * d ** 3))
    if hidden:
        products += 2 * n * d * hidden + 2 * d * hidden * (d + hidden) + d ** 3 + hidden ** 3
    python = (ENTRY * (PAIRS * n * n + n * d) + WEIGHT * (d * d + 2 * d * hidden) + LAYER + VALUE_WEIGHT * d * d * value
              + LAYERNORM * n * d * layernorm + (CHOLESKY * thin ** 3 // 6 if 0 < thin < d else 0))
    return python, products // PRODUCTS + 2 * ENTRY * n * n + GELU * n * hidden + 2 * n * d * layernorm


# A window of k layers (certify.core.windows; the checker's certify_checker.windowed): the product of its k
# attention matrices, (k - 1) n^3 multiply-adds whose factors are both at the full precision (2 to 6 times the cost
# of one with binary64 entries, which PRODUCTS and cost() are measured on: WINDOW_FULL), each factor's rows rescaled
# by post-LN's norms (P X V^T again, n d^2, and n norms) and multiplied from Python; the window's own quantities:
# D, D_end, D_0 and m's Q X_t (n^2 d products each), the edge minima of its layers' P and the minima over M's and
# Q's columns (n^2 each), Q's divisions (n^2), the norms of mu and of the theory bound (n d each layer).  Unpriced,
# windows of 2 layers made ln.collapse at 64 x 4, 53 bits, take 2 to 5 times its price forced.
WINDOW_FULL = 4


def window_parts(n: int, d: int, k: int) -> tuple[int, int]:
    """The work of one window of k layers at 53 bits as (its Python, its arithmetic), as layer_parts.  As
    certify_checker.limits.window_parts (a test keeps the two equal)."""
    products = (k - 1) * (WINDOW_FULL * n ** 3 + n * d * d) + 4 * n * n * d
    python = ENTRY * ((2 * k + 4) * n * n + (k + 4) * n * d) + LAYER
    return python, products // PRODUCTS + ENTRY * n * n + (k + 2) * n * d


# The engine's refinement of a norm's witness on a rung (certify.core.refine; the checker does not refine, it evaluates
# with the witness stated, so certify_checker.limits has no such term).  A witness of w x w (of an M of h x w, h >= w:
# M^T M costs w^2 h) is refined from `start` bits to `bits` at bits + SPLIT_BITS: E = 2 + floor(log2(bits / start))
# evaluations (counted: 3 from binary64 to 106 bits, 7 to 1696, 10 to 16000; 3 on each later rung of the ladder, from
# half its bits), each X^T X, B X and X^T (B X) (3 w^3) and each but the last a step X E (w^3), so (4 E - 1) w^3
# multiply-adds, every factor at the full precision: REFINE_FULL times an arb_mat multiply-add on binary64 entries (1.3
# to 4.6 measured, w = 32 to 128 at 170 to 16064 bits).  From Python, each evaluation's lists, sums, Gershgorin rows and
# divisions (REFINE_ENTRY an entry, 2 of them ball operations weighted by cost()) and LAYER around them; the refined
# basis stated once (REFINE_STATED an entry: 5.6 us).  Unpriced, a bound on a 64 x 64 layer decided at 1696 bits (its
# witness refined on each rung from 106 bits: 0.82 s of the 1.26 s of the engine's evaluation at 1696) had that
# evaluation priced 5.5e6 units, 0.43 * 10^7 a second; so priced 2.3e7, 1.8 * 10^7 (`python -m benchmarks.limits`, the
# tight rows).  A norm's refinement alone, w = 4 to 128, h to 384, 106 to 16000 bits: 0.6 to 4.7 * 10^7 units a second
# of its CPU (1.5 the median).
REFINE_FULL = 4
REFINE_ENTRY = 10 * ENTRY
REFINE_STATED = 20 * ENTRY


def refine_norm(w: int, h: int, bits: int, start: int) -> int:
    """The work of refining one norm's witness of w x w (of a matrix of h x w) from `start` bits (binary64's 53 at
    least) to `bits`, or 0 where it is not refined (below REFINE_FROM, or refined that far already)."""
    if bits < REFINE_FROM or bits <= start:
        return 0
    evaluations = 1 + (bits // max(start, 53)).bit_length()
    arithmetic = REFINE_FULL * (w * w * h + (4 * evaluations - 1) * w ** 3) // PRODUCTS + 2 * evaluations * w * w
    return (arithmetic * cost(bits + SPLIT_BITS) + (REFINE_ENTRY * evaluations + REFINE_STATED) * w * w
            + LAYER * evaluations)


def refine_work(d: int, hidden: int = 0, thin: int = 0, value: bool = False, bits: int = 0, start: int = 0) -> int:
    """The work of refining one layer's witnesses from `start` bits to `bits` (refine_norm each): its head's (d_k x d_k
    for a thin head alone, thin, else d x d), V's (d x d) and an FFN's two weights' (square on their smaller side)."""
    norms = [(thin, thin) if 0 < thin < d else (d, d)] + [(d, d)] * value
    if hidden:
        norms += [(min(d, hidden), max(d, hidden))] * 2
    return sum(refine_norm(w, h, bits, start) for w, h in norms)


def layer_work(n: int, d: int, hidden: int = 0, thin: int = 0, value: bool = False, layernorm: bool = False) -> int:
    """The work of one layer at 53 bits, both of layer_parts."""
    return sum(layer_parts(n, d, hidden, thin, value, layernorm))


# A layer in centred form (certify.core.centred, certify.engine.decide.carries_centred), priced as the checker prices
# a trajectory's step (certify_checker.limits.step_parts, written again; a test keeps centred_cost equal to the
# checker's): LAYER_STEP its Python, STEP_ENTRY an entry of P (its exps, Pi, Delta, the scores' rows), STEP_WEIGHT an
# entry of A, ENTRY a token's entry and a term of tau; its products (the scores and P X, n^2 d; E A, n d^2; a head's
# W_Q W_K^T, d^3 at most) and tau's n^3 / 2 terms, PRODUCTS a unit; STEP_EXP an entry of P weighted by cost().
LAYER_STEP, STEP_ENTRY, STEP_WEIGHT, STEP_EXP = 500, 70, 20, 8


def centred_cost(n: int, d: int, bits: int, factors: tuple = ()) -> int:
    """The work of a layer in centred form at `bits` and at each of `factors` times them (the comment above)."""
    cubes = n * n * n // 2
    python = LAYER_STEP + STEP_ENTRY * n * n + STEP_WEIGHT * d * d + ENTRY * (n * d + cubes)
    arithmetic = (3 * n * n * d + n * d * d + d * d * d + cubes) // PRODUCTS + STEP_EXP * n * n
    return (1 + len(factors)) * python + arithmetic * (cost(bits) + sum(cost(f * bits) for f in factors))


def work(n: int, d: int, layers: int, hidden: int, precision: int, thin: int = 0, uses_tau: bool = False,
         value: bool = False, layernorm: bool = False, window: tuple[int, int] = (0, 0),
         refining: tuple[int, int] = (0, 0), centred: bool = False) -> int:
    """The work of a check at this precision: the engine's evaluation and the checker's confirmation of the
    certificate, which may recompute it at each ESCALATION of the precision, each pass a layer's Python and its
    arithmetic weighted by cost() (layer_parts; value: a layer has a value matrix, layernorm: a layer has LayerNorm);
    with tau's n^3 / 2 minima a layer (ENTRY each, weighted by cost()); window: (how many, of how many layers) the
    windows of a claim of scope "window" (window_parts, each pass as a layer); refining: (bits, start) of the engine's
    refinement of every layer's witnesses on this rung (refine_work; the engine's plan says them, (0, 0) none);
    centred: every layer's centred step too (centred_cost), in the engine's evaluation and the checker's.  At
    least the checker's own estimate of the certificate, so that what `check` admits `verify` does
    (certify_checker.limits.problem)."""
    passes = 2 * cost(precision) + sum(cost(factor * precision) for factor in ESCALATION)
    python, arithmetic = layer_parts(n, d, hidden, thin, value, layernorm)
    tau = n * n * n // 2 * ENTRY if uses_tau else 0
    count, k = window
    frame_python, frame_arithmetic = window_parts(n, d, k) if count else (0, 0)
    refined = refine_work(d, hidden, thin, value, *refining)
    steps = centred_cost(n, d, precision) + centred_cost(n, d, precision, ESCALATION) if centred else 0
    return (layers * ((2 + len(ESCALATION)) * python + passes * (arithmetic + tau) + refined + steps)
            + count * ((2 + len(ESCALATION)) * frame_python + passes * frame_arithmetic))


def shape_problem(n: int, d: int, layers: int, hidden: int, limits: Limits) -> str | None:
    """Which size limit a configuration passes, in words, or None."""
    for value, cap, name, what in ((n, limits.tokens, "tokens", "tokens"), (d, limits.dim, "dim", "dimensions"),
                                   (hidden, limits.dim, "dim", "hidden units"),
                                   (layers, limits.layers, "layers", "layers")):
        if value > cap:
            return f"{value} {what}, above the limit of {cap} (raise it with --limit {name}=N)"
    return None


def size(count: int) -> str:
    """A number of bytes in words: in GiB to 2 decimals, or in bytes below 0.01 GiB (where a limit set with
    --limit memory=BYTES read "0.00 GiB is above the memory limit of 0.00 GiB")."""
    return f"{count / 2**30:.2f} GiB" if count >= 2**30 / 100 else f"{count} bytes"


@functools.lru_cache(maxsize=1024)
def resource_problem(n: int, d: int, layers: int, hidden: int, precision: int, limits: Limits,
                     uses_tau: bool = False, thin: int = 0, value: bool = False, layernorm: bool = False,
                     window: tuple[int, int] = (0, 0), texts: int = 0,
                     refining: tuple[int, int] = (0, 0), centred: bool = False) -> str | None:
    """Which resource estimate an evaluation at this precision passes, in words, or None (a pure
    function of its arguments, remembered: every check of a campaign asks it for each precision); texts: the work
    of reading the numbers its certificate states as text, added to work()'s (the checker's own price of them, at
    this precision: certify.engine.certificate.text_work); refining and centred: work()'s."""
    memory = ball_count(n, d, layers, hidden, uses_tau, thin) * ball_bytes(precision)
    if memory > limits.memory:
        return (f"an estimated {size(memory)} at {precision} bits is above the memory limit of "
                f"{size(limits.memory)} (raise it with --limit memory=BYTES)")
    cost = work(n, d, layers, hidden, precision, thin, uses_tau, value, layernorm, window, refining, centred) + texts
    if cost > limits.work:
        return (f"an estimated work of {cost:.3g} at {precision} bits is above the limit of {limits.work:.3g} "
                "(raise it with --limit work=N)")
    return None


def limit_options(items) -> str:
    """The --limit options of NAME=VALUE items (a command's --limit as given), for the commands printed to re-check
    what it wrote: the checker confirmed it under them, and `certify verify` at the default limits refuses one that
    needs them raised."""
    return "".join(f" --limit {shlex.quote(item)}" for item in items)


# How a refusal says to raise the limits its certificate passes, written here once: on the command that met it, and on
# `certify verify` of what it writes, which the checker confirms under the same limits (a command's own context)...
ON_VERIFY = ", here and on `certify verify`"
# ... but a campaign's limits are its manifest's: `certify verify FOLDER` refuses --limit and re-derives the campaign
# under them, and a run given other limits is another campaign, which `certify sample` will not resume in its folder
IN_CAMPAIGN = (" on a new campaign (another --out, or --restart: a campaign keeps the limits of its manifest, under "
               "which `certify verify` re-derives it)")


def raised_with(names) -> str:
    """How limits `names` are raised, in a command's words: "--limit bytes=N and --limit nesting=N, here and on
    `certify verify`" (in_campaign says it for a campaign; the Python API respells it: certify.core.arguments)."""
    return " and ".join(f"--limit {name}=N" for name in names) + ON_VERIFY


def in_campaign(text: str) -> str:
    """text (an undecided reason, a refusal) with the advice of raised_with said as it holds for a campaign."""
    return text.replace(ON_VERIFY, IN_CAMPAIGN)
