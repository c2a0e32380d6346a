"""Checker for "attention-head" certificates: the steps of collapse.global for one attention head
on one configuration (the heads of `certify model`, the rows of `certify init`).

Inputs: tokens "X" (n x d, n >= 2), the head's "W_Q", "W_K" (d x k), optional biases "b_Q", "b_K"
(k) and "keys" (n values 0/1, at least one 1: which tokens every query may attend to; default
all), and "steps": each step named with the outcome the certificate states for it:
    dobrushin   D(P X) <= tau(P) D(X)                 (collapse.dobrushin)
    tau         tau(P) <= 1 - exp(-a D(X)^2)          (collapse.tau)
    global      D(P X) <= (1 - exp(-a D(X)^2)) D(X)   (collapse.global, as init.scaling states it)
    regime      where float64 loses the gap: a D^2 < 54 ln 2 (informative), 54 ln 2 <= a D^2 < 1075 ln 2
                (indistinguishable), a D^2 >= 1075 ln 2 (underflowed)
with "holds" or "violated" for the first three and the regime's name for the last.  Here
P = softmax over the keys of S = (X W_Q + 1 b_Q^T)(X W_K + 1 b_K^T)^T / sqrt(k) and
a = ||W_Q W_K^T||_2 / sqrt(k).  The witness gives the norm's route: "direct" (a d x d witness for
W_Q W_K^T) or "thin" (a k x k witness for C (W_Q^T W_Q) C^T, norms.thin_product_norm).
Certified means: every stated outcome is decided, in that direction, in ball arithmetic.
"""

from __future__ import annotations

import hashlib
import json

from flint import arb, arb_mat

from certify_checker import forward
from certify_checker import norms
from certify_checker.counterexample import Evaluation, confirm, retried, text_price
from certify_checker.limits import limbs, stated_shape
from certify_checker.schema import expanded, rectangular, vector_of

KIND = "attention-head"
KEYS = {"X", "W_Q", "W_K", "b_Q", "b_K", "keys", "steps"}
TEXT_READS = 2  # the most an evaluation reads one number stated as text (W_Q, W_K: as matrices and in the scores)
STATEMENTS = {  # step: (the two sides from the values, the statement with its comparison left open)
    "dobrushin": (lambda v: (v["D_PX"], v["tau"] * v["D"]), "D(P X) {} tau(P) D(X)"),
    "tau": (lambda v: (v["tau"], 1 - v["gap"]), "tau(P) {} 1 - exp(-a D(X)^2)"),
    "global": (lambda v: (v["D_PX"], (1 - v["gap"]) * v["D"]), "D(P X) {} (1 - exp(-a D(X)^2)) D(X)"),
}
REGIMES = ("informative", "indistinguishable", "underflowed")
WITNESS_KEYS = {"route", "basis", "top"}  # exactly: a field beside them would be shown and never read
SATURATION_LN2, UNDERFLOW_LN2 = 54, 1075  # float64: 1 - exp(-x) == 1.0 from 54 ln 2, exp(-x) == 0.0 from 1075 ln 2


def _problem(inputs: dict) -> str | None:
    if not (isinstance(inputs, dict) and set(inputs) <= KEYS and {"X", "W_Q", "W_K", "steps"} <= set(inputs)):
        return f"the inputs must hold X, W_Q, W_K and steps, and only keys of {sorted(KEYS)}"
    X, W_Q = inputs["X"], inputs["W_Q"]
    if not (rectangular(X, None, None) and len(X) >= 2 and rectangular(W_Q, len(X[0]), None)):
        return "X must be n x d with n >= 2 and W_Q d x k"
    d, k = len(X[0]), len(W_Q[0])
    if not (rectangular(inputs["W_K"], d, k) and all(vector_of(inputs[b], k) for b in ("b_Q", "b_K") if b in inputs)):
        return "W_K must be d x k like W_Q, and the biases k long"
    keys = inputs.get("keys", [1] * len(X))
    if not (isinstance(keys, list) and len(keys) == len(X) and all(type(v) is int and v in (0, 1) for v in keys)
            and any(keys)):
        return "keys must be n values 0/1, not all 0"
    steps = inputs["steps"]
    if not (isinstance(steps, dict) and steps and set(steps) <= set(STATEMENTS) | {"regime"}
            and all(steps[s] in ("holds", "violated") for s in steps if s != "regime")
            and steps.get("regime", REGIMES[0]) in REGIMES):
        return f"steps must name some of {sorted(STATEMENTS)} (holds or violated) and a regime of {REGIMES}"
    return None


def query_key_norm(W_Q: arb_mat, W_K: arb_mat, witness: dict) -> arb:
    """||W_Q W_K^T||_2 by the witness's route."""
    if witness["route"] == "thin":
        return norms.thin_product_norm(W_Q, W_K, witness)
    if witness["route"] == "direct":
        return forward.spectral_norm(W_Q * W_K.transpose(), witness)
    raise ValueError(f"unknown norm route {witness['route']!r}")


def evaluate(inputs: dict, witness: dict, kept: dict | None = None) -> Evaluation:
    """kept: the norm a of an earlier evaluation of this certificate, reused (else computed and kept there)."""
    inputs, witness = expanded(inputs), expanded(witness)  # a matrix of more than 64 numbers as a binary64 block
    if unreadable := _problem(inputs):
        raise ValueError(unreadable)
    if not isinstance(witness, dict) or set(witness) != WITNESS_KEYS:  # a block for a witness expands to rows
        raise ValueError(f"the witness must be exactly {sorted(WITNESS_KEYS)}")
    X = forward.matrix(inputs["X"])
    n, k = len(X), len(inputs["W_Q"][0])
    keys = inputs.get("keys", [1] * n)
    layer = {name: inputs[name] for name in ("W_Q", "W_K", "b_Q", "b_K") if name in inputs}
    layer.update(d_k=k, mask=[list(keys) for _ in range(n)])  # every query sees the same keys
    P = forward.attention(forward.scores(layer, X), layer["mask"]).tolist()
    kept = {} if kept is None else kept
    if "a" not in kept:  # the weights straight into arb_mats, the form both routes multiply
        W_Q, W_K = forward.matrix_mat(inputs["W_Q"]), forward.matrix_mat(inputs["W_K"])
        kept["a"] = query_key_norm(W_Q, W_K, witness) / arb(k).sqrt()
    a = kept["a"]
    D = forward.diameter(X)
    a_D2 = a * D * D
    values = {"D": D, "D_PX": forward.diameter(forward.product(P, X)), "tau": forward.dobrushin(P), "a": a,
              "a_D2": a_D2, "gap": (-a_D2).exp()}
    found = Evaluation(values=values)
    steps = inputs["steps"]
    for step, (sides, statement) in STATEMENTS.items():
        if step in steps:
            left, right = sides(values)
            holds = steps[step] == "holds"
            claim = statement.format("<=" if holds else ">")
            found.claims.append(claim)
            found.require(left <= right if holds else left > right, f"{step}: {claim} is not proven")
    if "regime" in steps:
        found.claims.append(f"the float64 regime of a D^2 is {steps['regime']}")
        found.require(_in_regime(a_D2, steps["regime"]), f"a D^2 is not certainly {steps['regime']}")
    return found


def _in_regime(a_D2: arb, regime: str) -> bool:
    ln2 = arb(2).log()
    saturation, underflow = SATURATION_LN2 * ln2, UNDERFLOW_LN2 * ln2
    if regime == "informative":
        return bool(a_D2 < saturation)
    if regime == "underflowed":
        return bool(a_D2 >= underflow)
    return bool(a_D2 >= saturation) and bool(a_D2 < underflow)


# The work estimate (certify_checker.__init__ adds it to the limits' own, which is 0 without layers), in the
# limits' units: about 0.1 us of checker time each, so the default limit of 10^9 is a minute or two.  Measured on
# one core (python-flint 0.9), entries full at the precision (exact rationals such as 1/3):
#   arb_mat product, per multiply-add   3.5 ns to 128 bits, 9.6 at 256, 19 at 512, 1.0 us at 4096, 120 us
#                                       at 65536: 5 ns x mantissa(bits), mantissa = max(1, bits / 128)^1.7
#   Python-level ball operation         310 ns at 53 bits, 1.8 us at 4096, 105 us at 65536 (a Cholesky's)
#   softmax entry (an exp)              0.64 us at 53 bits, 1.9 at 512, 32 at 4096, 3200 at 65536
#   Dobrushin pair term (min and add)   0.22 us at 53 bits, 0.43 at 4096, 2.7 at 65536: no multiplication
# Whole heads, direct route, n = 16: d = 1024 at 53 bits (certify init's default last row) 25 to 36 s, estimate
# 2.9 * 10^8 (29 s); d = 128 at 4096 bits 8.7 s, estimate 2.1 * 10^8; d = 64 at 65536 bits 160 s, estimate
# 3.1 * 10^9.  Thin route, d = 384, d_k = 32 (MiniLM's): n = 142 at 64 bits 0.54 s, estimate 0.58 s.  Binary64
# inputs (every certificate certify writes) keep products short, so their cost grows more slowly with the bits.


def mantissa(bits: int) -> float:
    return max(1.0, min(max(bits, 0), 1 << 20) / 128) ** 1.7


def products(count: int, bits: int) -> int:
    """The work of `count` multiply-adds inside arb_mat products."""
    return int(count * 5 * mantissa(bits)) // 100


def operations(count: int, bits: int) -> int:
    """The work of `count` ball operations made one by one from Python (reading an entry included)."""
    return int(count * (300 + 5 * mantissa(bits))) // 100


def work(cert: dict) -> int:
    """The head's work: scores, softmax, P X, two diameters, tau (n^3 / 2 pair terms), these again at the finer
    precision (counterexample.retried), and the norm of W_Q W_K^T by the witness's route (direct: five d^3
    products; thin: k x k ones and a k^3 / 6 Cholesky in Python), and reading the numbers stated as text, inputs
    and witness, at both precisions (counterexample.text_price: a head of 4000-digit p/q entries on 4 x 16 tokens
    took 0.9 s, a thousand times its estimate without it).  0 when malformed (verify judges)."""
    return _arithmetic(cert) + text_price(cert, TEXT_READS)


def _arithmetic(cert: dict) -> int:
    try:
        inputs, bits, witness = cert["inputs"], cert["precision"], cert["witness"]
        (n, d), (_, k) = stated_shape(inputs["X"]), stated_shape(inputs["W_Q"])
        route = witness.get("route") if isinstance(witness, dict) else None  # P is computed before it is read
        if type(bits) is not int or not (n and k):
            return 0
        total = retried(lambda bits: products(n * d * 2 * k + n * n * (k + 3 * d), bits)
                        + operations(n * d + 2 * d * k + 4 * n * n, bits) + n * n * (600 + 150 * int(mantissa(bits))) // 100
                        + n ** 3 // 2 * (250 + 3 * limbs(bits)) // 100, bits)  # and again finer, but for the norm
        if route == "direct":
            return total + products(5 * d ** 3 + d * d, bits) + operations(5 * d * d, bits)
        if route == "thin":
            return total + products(2 * d * k * k + 6 * k ** 3, bits) + operations(k ** 3 // 6 + 3 * k * k, bits)
        return total
    except (TypeError, KeyError, IndexError, AttributeError):
        return 0


# The norms a this process has computed, by the sha256 of all they depend on as the certificate states it (weights,
# witness, precision): `certify model --corpus` states each head's weights again for every sentence, and their norm
# was half of the checker's work there.  The same arb computation on the same exact inputs at the same precision
# gives the same ball, so a kept one is exact reuse.  The oldest are dropped beyond KEPT_NORMS (BERT-base has 144).
_NORMS: dict[str, arb] = {}
KEPT_NORMS = 512


def _norm_key(cert: dict) -> str | None:
    """The key of the certificate's norm in _NORMS (the weights' binary64 blocks make its text short), or None."""
    try:
        determining = [cert["inputs"]["W_Q"], cert["inputs"]["W_K"], cert["witness"], cert["precision"]]
        return hashlib.sha256(json.dumps(determining, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    except (KeyError, TypeError, ValueError):
        return None  # malformed: confirm says how


def verify(cert: dict) -> tuple[bool, str]:
    """A finer evaluation (counterexample.confirm) reuses the norm of the one at the stated precision, an enclosure at
    any: its d^3 products are most of a wide head's work, and its width is the float64 witness's, not the precision's;
    so does a certificate of the same weights, witness and precision (_NORMS)."""
    key = _norm_key(cert)
    kept = {"a": _NORMS[key]} if key in _NORMS else {}
    found = confirm(cert, KIND, lambda inputs, witness: evaluate(inputs, witness, kept), KEYS)
    if key is not None and "a" in kept and key not in _NORMS:
        while len(_NORMS) >= KEPT_NORMS:
            del _NORMS[next(iter(_NORMS))]
        _NORMS[key] = kept["a"]
    return found
