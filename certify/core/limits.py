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
    memory     estimated memory of the ball arithmetic (bytes)          2 GiB
    work       estimated ball operations x (1 + bits/64)                5e8 (a minute or two)

The estimates (memory, work) are coarse upper-ish bounds from the shapes, written in
`ball_count`, `operation_count` and `ball_bytes` below; they refuse before a run, and stop the
precision escalation of `check` (undecided, saying so) where the next precision would pass them.  A
trajectory is priced by the checker's own estimate of its certificate, step by step
(certify.studies.trajectory_budget).
A bound's own caps (2000 characters, 100 nested operators) are certify.core.expr's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace

from certify.core.numbers import MAX_DIGITS, NotAnInteger, option_integer
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
    work: int = 5 * 10**8

    def changed(self, items: list[str] | None) -> "Limits":
        """These limits with `NAME=VALUE` items applied (the --limit option)."""
        names = [f.name for f in fields(self)]
        out = self
        for item in items or []:
            name, equals, value = item.partition("=")
            name = name.strip()
            if name not in names:
                raise BadInput(f"--limit {item!r}: unknown limit; the limits are {', '.join(names)}")
            if not equals:
                raise BadInput(f"--limit {item!r}: expected NAME=INTEGER")
            try:  # the integer options' rules: int(float()) read 3.7e0 as 3 and 1e400 as "expected NAME=INTEGER"
                number = option_integer(value)
            except NotAnInteger as wrong:
                raise BadInput(f"--limit {item!r}: {wrong.reason}") from None
            if number < 1:
                raise BadInput(f"--limit {item!r}: a limit is a positive integer")
            if name == "digits" and number > MAX_DIGITS:  # a longer integer could not be read, nor written back
                raise BadInput(f"--limit {item!r}: a number has at most {MAX_DIGITS} digits")
            out = replace(out, **{name: number})
        return out


DEFAULT = Limits()


def given(limits) -> Limits:
    """The limits a function of the Python API was given: DEFAULT for None, a Limits as it is, else BadInput
    (a dict of caps reached the reader and raised AttributeError)."""
    if limits is None:
        return DEFAULT
    if not isinstance(limits, Limits):
        raise BadInput("limits: a certify.core.limits.Limits (None for the documented ones), "
                       f"not {type(limits).__name__}")
    return limits


def ball_bytes(precision: int) -> int:
    """Memory of one arb ball held in Python: the object and arb struct, plus the midpoint's limbs."""
    return 96 + 8 * (precision // 64 + 1)


# A norm's arrays at its peak, in balls per entry of its witness (w x w: d, or d_k for thin heads; an FFN weight's
# is square on its smaller side, so at most d, certify.core.spectral): the witness, its
# products and python-flint's temporaries inside them, measured in resident memory (one 768 x 768 norm: about
# 1 GB of 1.2 GB at 256 x 768, 0.5 GB in the checker; 0.37 GB at 256 x 384).
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
    certify.core.thin_norm (8 d_k^3), at most the d x d route's."""
    return min(3 * d * d * thin + 8 * thin ** 3, 4 * d ** 3) if 0 < thin < d else 4 * d ** 3


def thin_width(d: int, widths: set) -> int:
    """The d_k of norm_count's thin heads from the query widths of every layer (d for a layer that is not a thin
    head alone): their largest when all are below d, else 0."""
    return max(widths) if widths and 0 < min(widths) and max(widths) < d else 0


def operation_count(n: int, d: int, layers: int, hidden: int = 0, thin: int = 0) -> int:
    """Ball multiplications of one evaluation: per layer the scores and P X (n^2 d), the weight
    products (n d^2), the norms (norm_count), the FFN (n d h) and the diameters (the Gram matrix, n^2 d)."""
    return layers * (3 * n * n * d + n * d * d + norm_count(d, thin) + 2 * n * d * hidden + 3 * n * n)


def work(n: int, d: int, layers: int, hidden: int, precision: int, thin: int = 0) -> int:
    """Operations weighted by the cost of one at this precision: a fixed cost (the Python around
    each ball operation) plus one per limb, as measured on the checker from 53 to 65536 bits
    (about 1.5e-7 s per unit on the development machine)."""
    return operation_count(n, d, layers, hidden, thin) * (1 + precision // 64)


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
                     uses_tau: bool = False, thin: int = 0) -> str | None:
    """Which resource estimate an evaluation at this precision passes, in words, or None (a pure
    function of its arguments, remembered: every check of a campaign asks it for each precision)."""
    memory = ball_count(n, d, layers, hidden, uses_tau, thin) * ball_bytes(precision)
    if memory > limits.memory:
        return (f"an estimated {size(memory)} at {precision} bits is above the memory limit of "
                f"{size(limits.memory)} (raise it with --limit memory=BYTES)")
    cost = work(n, d, layers, hidden, precision, thin)
    if cost > limits.work:
        return (f"an estimated work of {cost:.3g} at {precision} bits is above the limit of {limits.work:.3g} "
                "(raise it with --limit work=N)")
    return None
