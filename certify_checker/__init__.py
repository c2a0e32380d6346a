"""The trusted checker behind `certify verify`: small, separate, independent.

It imports only the Python standard library and python-flint, and shares no code with the
rest of certify (a test enforces this): it re-evaluates a certificate from its exact inputs in
its own plain code.  A bug in the clever parts (screening, search, the engine) can make
certification fail; it must never make this accept.

A certificate names its kind; each kind has a module here with verify(cert) -> (ok, message).
Its text is read by load() under strict JSON rules, and a certificate beyond the limits of
certify_checker.limits is refused before any work (Confirmation.refused), as a text or as a Python value.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import sys
from dataclasses import dataclass

from certify_checker import exact, fields, overlaps
from certify_checker.limits import ADVICE, CONTAINER_BYTES, LIMITS, Limits
from certify_checker.limits import problem as limits_problem, shape_problem, stated_shape

FORMAT = "certify-certificate/1"
# What untrusted input can raise while it is read; each means "malformed", never a crash.  Beyond
# the usual: a hex float past binary64 (OverflowError), a bound that is not Python syntax or nests
# too deep (SyntaxError, RecursionError, MemoryError from the parser).
MALFORMED = (KeyError, TypeError, ValueError, IndexError, ArithmeticError, AttributeError, SyntaxError,
             RecursionError, MemoryError)
# The working precisions a certificate may state, in bits, for every kind: the engine's own range
# (a user may ask for up to 2^20 bits); beyond it a stated precision is absurd, not ambitious.
MIN_PRECISION, MAX_PRECISION = 53, 1 << 20
KINDS = {
    "inequality": "certify_checker.inequality",
    "wu-fig1": "certify_checker.wu_fig1",
    "ln-equilibria": "certify_checker.ln_equilibria",
    "residual-far": "certify_checker.residual_far",
    "expansive-v": "certify_checker.expansive_v",
    "attention-head": "certify_checker.head",
    "centred-rank": "certify_checker.rank",
    "trajectory": "certify_checker.trajectory",
    "region-proof": "certify_checker.region_proof",
}
_module = functools.cache(importlib.import_module)  # a kind's module: imported on first use, then looked up


@dataclass(frozen=True)
class Confirmation:
    ok: bool
    message: str
    refused: bool = False  # beyond the checker's limits: neither confirmed nor rejected


class Unreadable(ValueError):
    """The certificate text is not JSON the checker reads (see load)."""


class OverLimit(Unreadable):
    """The certificate text passes the checker's size, nesting or digits limit (see load): refused, not rejected."""


def load(data, limits: Limits = LIMITS):
    """Parse a certificate's text (str or bytes) strictly: at most limits.bytes, no duplicate keys (a certificate could
    otherwise show one verdict and have another checked), no NaN or Infinity, integers of at most limits.digits digits
    (read exactly), nesting at most limits.nesting deep, one array, object or key per CONTAINER_BYTES of limits.bytes
    (OverLimit past one of these limits, else Unreadable)."""
    if len(data) > limits.bytes:
        raise OverLimit(f"larger than the checker's limit of {limits.bytes} bytes")
    if (opened := sum(map(data.count, "{[:" if isinstance(data, str) else b"{[:"))) > limits.bytes // CONTAINER_BYTES:
        raise OverLimit(f"{opened} arrays, objects and keys ('{{', '[' and ':' counted), above the checker's limit of "
                        f"{limits.bytes // CONTAINER_BYTES}, one per {CONTAINER_BYTES} bytes of its bytes limit "
                        f"({ADVICE} bytes=N` raises it)")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable("not UTF-8 text") from None

    def unique(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise Unreadable(f"the key {key!r} appears twice in one object")
            out[key] = value
        return out

    def constant(name):
        raise Unreadable(f"{name} is not a number")

    def integer(digits):
        if len(digits.lstrip("-")) > limits.digits:
            raise OverLimit(f"an integer of more than {limits.digits} digits")
        return int(digits)

    try:
        # a JSON number is its nearest binary64, which float() reads only in the default floating-point environment
        near = float if overlaps.binary64_rounds_to_nearest() else exact.nearest_binary64
        cert = json.loads(data, object_pairs_hook=unique, parse_constant=constant, parse_int=integer, parse_float=near)
    except OverLimit:  # a ValueError too: refused as the limit it passes, not as text that is no JSON
        raise
    except ValueError as err:  # JSONDecodeError is a ValueError
        raise Unreadable(f"not JSON: {err}") from None
    except RecursionError:  # some hundreds of levels: beyond them a raised nesting limit was named as the cause
        depth = sys.getrecursionlimit()
        raise OverLimit(f"nested deeper than the checker's limit of {limits.nesting}" if limits.nesting < depth // 2
                         else f"nested deeper than the JSON reader goes (some {depth} levels)") from None
    if problem := tree_problem(cert, limits):
        raise OverLimit(problem)
    return cert


def tree_problem(value, limits: Limits) -> str | None:
    """Why value is not a JSON tree within the limits, or None (also the engine's measure, before a run, of the least
    certificate it could write): dicts and lists nested at most limits.nesting deep
    (a Python value that contains itself nests without end: it looped the checker's walks), and at most
    limits.bytes long as text, counted as a byte a container and one an entry (its opening bracket and the commas
    or closing bracket after its entries: no JSON text of it is shorter); a part met twice counts twice, as its
    text would state it twice (lists of a list twice, 60 deep, are 2^60 entries)."""
    size, stack = 0, [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, level = stack.pop()
        if level > limits.nesting:
            return f"nested deeper than the checker's limit of {limits.nesting}"
        size += node if type(node) is int else 1 + len(node)  # an int: lists of plain values, measured together
        if size > limits.bytes:
            return f"larger than the checker's limit of {limits.bytes} bytes as JSON text"
        items = node.values() if isinstance(node, dict) else () if type(node) is int else node
        kinds = set(map(type, items))  # plain values are passed over, and rows of them measured, in C
        if kinds == {list} and set(map(type, itertools.chain.from_iterable(items))) <= _PLAIN:
            stack.append((len(items) + sum(map(len, items)), level + 1))
        elif not kinds <= _PLAIN:
            stack += [(child, level + 1) for child in items if isinstance(child, (dict, list))]
    return None


_PLAIN = {float, int, str, bool, type(None)}  # what JSON reads that holds no dict or list


def _configuration(cert: dict):
    """The configuration a certificate evaluates (its inputs, or inputs.config), or None."""
    inputs = cert.get("inputs")
    if isinstance(inputs, dict) and "X" not in inputs:
        inputs = inputs.get("config")
    return inputs if isinstance(inputs, dict) else None


def over_limits(cert: dict, limits: Limits, priced: int | None = None) -> str | None:
    """Which limit the certificate's shapes and precisions pass, before any work (or a long run).  Tokens without layers
    (a head's, centred-rank's) meet the caps on n and d and their kind's work(cert); a trajectory's step_work too.
    priced: a trajectory's steps' price (trajectory.step_prices summed) in place of the stated ones' (the estimate of a
    certificate not yet written, certify.studies.trajectory_budget; a certificate is always priced by what it states)."""
    return estimate(cert, priced)(limits)


def estimate(cert: dict, priced: int | None = None):
    """over_limits of the certificate as a function of the limits, reading its kind's work once however many limits it
    is asked about (the engine's advice on which to raise: a region proof's leaves were read once a limit)."""
    inner = (cert.get("counterexample") or {}).get("certificate") if cert["kind"] == "region-proof" else None
    inner = estimate(inner) if isinstance(inner, dict) and inner.get("kind") == "inequality" else lambda _: None

    @functools.cache  # read past the counterexample's limits only
    def shapes():
        stated = [p for p in map(cert.get, ("precision", "curve_precision", "norm_precision")) if type(p) is int]
        return max(stated + [0]), sizes(cert)

    @functools.cache  # read only past the caps on sizes, as they keep a kind's work from reading its parts
    def work():  # the kind's work beyond the layers', a trajectory's value curves, a stated value's recomputations
        planned = {} if priced is None else {"priced": priced}  # only a trajectory's work takes it
        kind = _module(KINDS[cert["kind"]])
        return (getattr(kind, "work", lambda _: 0)(cert, **planned), getattr(kind, "step_work", lambda _: 0)(cert),
                getattr(kind, "ESCALATION", ()))

    def judged(limits: Limits) -> str | None:
        if refusal := inner(limits):
            return f"the counterexample's {refusal}"  # refused as on its own, and confirmed under the same limits (verify)
        precision, (n, d, layers, hidden, thin, _, value, layernorm) = shapes()
        if refusal := shape_problem(n, d, layers, hidden, precision, limits):
            return refusal
        own, steps, escalation = work()
        return limits_problem(n, d, layers, hidden, precision, limits, steps, own, thin, escalation, value, layernorm)

    return judged


def sizes(cert: dict) -> tuple[int, int, int, int, int, int, bool, bool]:
    """(n, d, layers, hidden, thin, d_k, value, layernorm) as the estimates read them: the tokens, the widest of d and
    d_k, the configured layers, the widest FFN, _thin's d_k (the norms' route), the widest d_k of a head stated by W_Q
    and W_K (whose W_Q W_K^T a trajectory's step forms, whatever its norm's route); 0 for what is not stated; whether a
    layer states a value matrix V, and LayerNorm (limits.layer_parts prices their work)."""
    config = _configuration(cert) or {}
    (n, d), layers = stated_shape(config.get("X")), config.get("layers")  # (0, 0) without tokens: the kind judges them
    specs = [layer for layer in layers if isinstance(layer, dict)] if isinstance(layers, list) else [config]
    widths = [stated_shape(layer.get("W_Q"))[1] for layer in specs]
    hidden = [stated_shape(layer["ffn"].get("W1"))[0] for layer in specs if isinstance(layer.get("ffn"), dict)]
    return (n, max([d] + widths), len(layers) if isinstance(layers, list) else 0, max(hidden, default=0),
            _thin(cert, specs, d), max(widths, default=0), any("V" in layer for layer in specs),
            any("layernorm" in layer for layer in specs))


def _thin(cert: dict, specs: list, d: int) -> int:
    """The largest d_k when every layer is a thin head alone (W_Q, W_K of d x d_k < d; no A, V nor FFN) with a d_k x d_k
    witness A{t}, stated or named by same_as (the route norms.query_key_norm takes; limits.norm_work), or none (no norm
    is computed without one: collapse.dobrushin's, a masked claim's), else 0."""
    if any({"A", "V", "ffn"} & set(spec) for spec in specs):  # a dense layer: no witness to read
        return 0
    witness = cert.get("witness") if isinstance(cert.get("witness"), dict) else {}
    stated = {name: witness.get(w["same_as"]) if isinstance(w, dict) and isinstance(w.get("same_as"), str) else w
              for name, w in witness.items()}
    found = [(stated_shape(spec.get("W_Q"))[1], stated_shape(w.get("basis") if isinstance(w := stated.get(f"A{t}"), dict)
                                                             else None) if f"A{t}" in stated else None)
             for t, spec in enumerate(specs)]
    thin = all(0 < k < d and basis in ((k, k), None) for k, basis in found)
    return max((k for k, _ in found), default=0) if thin else 0


def verify(cert, limits: Limits = LIMITS, closed=None) -> Confirmation:
    """Re-derive the certificate's verdict; ok only if everything it states is confirmed (closed: region_proof.verify's)."""
    if isinstance(cert, dict) and (problem := tree_problem(cert, limits)):  # a Python caller's: load() checks a text's
        return Confirmation(False, problem, refused=True)  # refused, as its text is (verify_text)
    return _confirm(cert, limits, closed)


def _confirm(cert, limits: Limits, closed=None) -> Confirmation:
    """verify() of a value that is a JSON tree within the limits."""
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        return Confirmation(False, f"not a certificate of format {FORMAT}")
    kind = cert.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return Confirmation(False, f"unknown certificate kind {kind!r:.60}")
    try:  # a kind's work estimate reads the certificate too: what it cannot read is malformed
        confirmation = _checked(cert, kind, limits, closed)
    except MALFORMED as err:  # rejected, naming the field and what is wrong with it (certify_checker.fields)
        confirmation = Confirmation(False, f"malformed certificate: {fields.described(err, cert)}")
    # A message quotes the certificate: control characters escaped (\r and an escape printed "OK" over "REJECTED"),
    message = confirmation.message[:1000]  # not 300 kB
    message = message if message.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    return Confirmation(confirmation.ok, message, confirmation.refused)


def _checked(cert: dict, kind: str, limits: Limits, closed=None) -> Confirmation:
    """_confirm of a certificate of a known kind, raising one of MALFORMED where it cannot be read."""
    if refusal := over_limits(cert, limits):
        return Confirmation(False, refusal, refused=True)
    if exact.subnormal_unread(cert):
        return Confirmation(False, "a subnormal number, which this process reads wrongly (denormals-are-zero is "
                            "set, as a fast-math library does when loaded): not checked here", refused=True)
    module = _module(KINDS[kind])  # a region proof's counterexample is confirmed under the same limits
    return Confirmation(*(module.verify(cert, limits, closed) if kind == "region-proof" else module.verify(cert)))


def precision_problem(precision) -> str | None:
    """Why a stated precision is refused, or None when it is an integer in range."""
    if type(precision) is not int or not MIN_PRECISION <= precision <= MAX_PRECISION:
        return f"precision {precision!r} out of range"
    return None


def verify_text(text, limits: Limits = LIMITS) -> Confirmation:
    """verify() of a certificate's text; unreadable text is not confirmed, and text past a limit is refused."""
    try:
        cert = load(text, limits)
    except Unreadable as err:
        return Confirmation(False, str(err), refused=isinstance(err, OverLimit))
    return _confirm(cert, limits)
