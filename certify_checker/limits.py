"""The checker's caps on the work a certificate may demand (README, "Limits").

The same numbers as certify.core.limits (a test keeps them equal), written here again because the
checker shares no code with certify.  A certificate beyond them is refused before any work (not
confirmed, not rejected: `certify verify` and `python -m certify_checker` exit 2); `certify verify
--limit NAME=VALUE` raises one.

The work estimate counts the checker's own ball operations: per layer the scores, P X and the
products with V (n^2 d + n d^2), the witness norms (d^3; d^2 d_k + d_k^3 for thin heads; no witness is wider
than d, a wide FFN weight's being of its transpose, forward.spectral_norm), the FFN (n d h) and the Gram
matrices of the diameters (n^2 d), each weighted by its cost at the stated precision: a fixed part (the
Python around it) plus one per limb, 1 + bits/64.  Its memory: the same arrays and one norm's (20 w^2 balls).
"""

from __future__ import annotations

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
    work: int = 5 * 10**8


LIMITS = Limits()


def limbs(bits: int, most: int = 1 << 20) -> int:
    """The 64-bit words of a mantissa of `bits` bits, the per-limb part of every work estimate; bits is read
    from a certificate before it is judged, so it is clamped to [0, most] first."""
    return 1 + min(max(bits, 0), most) // 64


def norm_work(d: int, thin: int = 0) -> int:
    """One layer's norms, as certify.core.limits.norm_count: 4 d^3, or 3 d^2 d_k + 8 d_k^3 for thin heads alone."""
    return min(3 * d * d * thin + 8 * thin ** 3, 4 * d ** 3) if 0 < thin < d else 4 * d ** 3


def problem(n: int, d: int, layers: int, hidden: int, precision: int, limits: Limits, steps=0, extra=0,
            thin: int = 0) -> str | None:
    """Which limit a certificate of these shapes at this precision passes, in words, or None (steps: the layer
    steps computed beyond the layers, as a trajectory applies its layers cyclically, each weighted by the limbs
    of its own precision and summed; extra: other work; thin: norm_work's)."""
    for value, cap, name in ((n, limits.tokens, "tokens"), (d, limits.dim, "dim"), (hidden, limits.dim, "dim"),
                             (layers, limits.layers, "layers"), (precision, limits.precision, "precision")):
        if value > cap:
            return f"{name} {value} is above the checker's limit of {cap} (`certify verify --limit {name}=N` raises it)"
    words = limbs(precision, limits.precision)  # within the cap just checked: as precision // 64 + 1
    width = (thin if 0 < thin < d else d) if layers else 0  # one norm's arrays and flint's temporaries (NORM_BALLS)
    memory = (layers * (3 * n * n + 4 * n * d + 3 * d * d + 3 * hidden * (d + n)) + 20 * width * width) * (96 + 8 * words)
    if memory > limits.memory:
        return f"an estimated {memory} bytes is above the checker's memory limit of {limits.memory} bytes"
    cost = (layers * words + steps) * (3 * n * n * d + n * d * d + norm_work(d, thin) + 2 * n * d * hidden + 3 * n * n) + extra
    if cost > limits.work:
        return f"an estimated work of {cost:.3g} is above the checker's limit of {limits.work:.3g}"
    return None
