"""The shape of a configuration as certificates state it (certify.core.config.to_json), checked first.

The checker's arithmetic reads entries by position and truthiness and ignores keys it does not
know, so a malformed input would otherwise be evaluated as some other configuration: a 3 x 3 mask
on 2 tokens gives a graph the attention never uses, a mask entry 0.5 or a missing self-loop
breaks the hypotheses of Wu et al.'s theorems, an unknown activation is read as GELU.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from collections import Counter
from itertools import chain
from operator import itemgetter

from flint import fmpq

from certify_checker.exact import binary64, rational

# No "description": certify writes none in a certificate (config.to_json), and a note no check reads is a forger's.
TOP_KEYS = {"X", "layers", "name"}
LAYER_KEYS = {"A", "W_Q", "W_K", "b_Q", "b_K", "d_k", "beta", "V", "mask", "residual", "ffn", "layernorm"}
FFN_KEYS = {"W1", "b1", "W2", "b2", "activation", "residual"}
NUMBERS = {"X", "A", "W_Q", "W_K", "b_Q", "b_K", "beta", "V", "W1", "b1", "W2", "b2", "gain", "bias", "eps"}
# A part of a configuration's name between hyphens that states its tokens' number or dimension, as certify names the
# configurations it makes (gaussian-n8-d4, a campaign's gaussian-n8-d4-seed0-17, near-permutation-n5)
SIZE_PART = re.compile(r"[nd][0-9]+")


def expanded(value):
    """The inputs (or a norm witness) with every block {"binary64": base64 of little-endian IEEE doubles row by
    row, "shape": [rows, cols]} (how a certificate states a large binary64 matrix) replaced by its rows of numbers;
    ValueError (malformed) for a block that is not exactly that: its bytes must be those of its stated shape (so
    a small file cannot state a large matrix; decoding costs what its text's length, under limits.bytes, allows),
    and every entry is finite (JSON numbers are: a block must not bring in a NaN the text could not)."""
    if isinstance(value, list):  # a list of numbers holds no block (and a block there is no number: rejected)
        return [expanded(v) for v in value] if value and isinstance(value[0], (list, dict)) else value
    if not isinstance(value, dict) or set(value) != {"binary64", "shape"}:
        return {k: expanded(v) for k, v in value.items()} if isinstance(value, dict) else value
    shape, data = value["shape"], value["binary64"]
    if not (isinstance(shape, list) and len(shape) == 2 and all(type(s) is int and s > 0 for s in shape)
            and isinstance(data, str)):
        raise ValueError('a binary64 block is {"binary64": BASE64, "shape": [rows, cols]}')
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:  # binascii.Error, or a character beyond ASCII
        raise ValueError("a binary64 block is not base64") from None
    rows, cols = shape
    if len(raw) != 8 * rows * cols:
        raise ValueError(f"a binary64 block of shape {rows} x {cols} holds {len(raw)} bytes")
    flat = struct.unpack(f"<{rows * cols}d", raw)
    if not all(map(math.isfinite, flat)):
        raise ValueError("a binary64 block holds a number that is not finite")
    return [list(flat[i * cols:(i + 1) * cols]) for i in range(rows)]


def rectangular(value, rows: int | None, cols: int | None) -> bool:
    return (isinstance(value, list) and bool(value) and all(isinstance(row, list) and row for row in value)
            and len({len(row) for row in value}) == 1 and rows in (None, len(value)) and cols in (None, len(value[0])))


def vector_of(value, length: int) -> bool:
    return isinstance(value, list) and len(value) == length


def _mask(mask, n: int) -> bool:
    """Square n x n, entries the integers 0 and 1, every self-loop (certify.core.masks.validate_mask)."""
    return (rectangular(mask, n, n) and all(type(v) is int and v in (0, 1) for row in mask for v in row)
            and all(mask[i][i] == 1 for i in range(n)))


def _attention(layer: dict, d: int) -> bool:
    if "A" in layer:
        return rectangular(layer["A"], d, d) and not set(layer) & {"W_Q", "W_K", "b_Q", "b_K", "d_k"}
    if not (rectangular(layer.get("W_Q"), d, None) and rectangular(layer.get("W_K"), d, len(layer["W_Q"][0]))):
        return False
    k, d_k = len(layer["W_Q"][0]), layer.get("d_k")
    return (type(d_k) is int and d_k >= 1 and all(vector_of(layer[b], k) for b in ("b_Q", "b_K") if b in layer))


def _ffn(ffn, d: int) -> bool:
    if not (isinstance(ffn, dict) and set(ffn) <= FFN_KEYS and FFN_KEYS - {"residual"} <= set(ffn)):
        return False
    h = len(ffn["W1"]) if isinstance(ffn["W1"], list) else 0
    return (rectangular(ffn["W1"], h, d) and vector_of(ffn["b1"], h) and rectangular(ffn["W2"], d, h) and vector_of(ffn["b2"], d)
            and ffn["activation"] in ("relu", "gelu") and type(ffn.get("residual", False)) is bool)


def _layernorm(ln, d: int) -> bool:
    if not (isinstance(ln, dict) and ln.get("position") in ("pre", "post")):
        return False
    extra = set(ln) - {"position", "kind"}
    if ln.get("kind", "sphere") == "sphere":
        return not extra
    return (ln["kind"] == "standard" and extra == {"gain", "bias", "eps"} and vector_of(ln["gain"], d)
            and vector_of(ln["bias"], d) and rational(ln["eps"]) >= 0)


def problem(inputs) -> str | None:
    """What makes inputs not a configuration in canonical form, or None."""
    if isinstance(inputs, dict) and "description" in inputs:
        return "the inputs state a description, a note no check reads (certify writes none in a certificate)"
    if not (isinstance(inputs, dict) and set(inputs) <= TOP_KEYS and rectangular(inputs.get("X"), None, None)):
        return "the inputs are not a configuration with tokens X (a rectangular list of rows)"
    if not isinstance(inputs.get("name", ""), str):  # the author's label, read by no check (a kind that names its
        return "the inputs' name is a text"  # configuration by its parameters rebuilds it: counterexample.confirm)
    n, d, layers = len(inputs["X"]), len(inputs["X"][0]), inputs.get("layers")
    if n < 2 or not isinstance(layers, list) or not layers:
        return "the inputs need at least two tokens and a non-empty list of layers"
    for t, layer in enumerate(layers):
        well_formed = (isinstance(layer, dict) and set(layer) <= LAYER_KEYS and _attention(layer, d)
                       and ("V" not in layer or rectangular(layer["V"], d, d))
                       and ("mask" not in layer or _mask(layer["mask"], n))
                       and type(layer.get("residual", False)) is bool
                       and ("ffn" not in layer or _ffn(layer["ffn"], d))
                       and ("layernorm" not in layer or _layernorm(layer["layernorm"], d)))
        if not well_formed:
            return f"layer {t} is not a well-formed layer on {n} tokens of dimension {d}"
    return misstated_sizes(inputs.get("name", ""), n, d)


def misstated_sizes(name: str, n: int, d: int) -> str | None:
    """Why the name states other sizes than the tokens' (a part n<k> or d<k>, SIZE_PART), or None.  The rest of a
    name is a label no check reads and the checker never prints (an author's, a distribution's, a seed): a forger's
    name, digest redone, made a certificate of 4 tokens read as one of 8.  certify.core.config.misstated_sizes is its
    twin, which refuses such a configuration before any work: the checker imports nothing of certify."""
    sizes = {"n": n, "d": d}
    for part in name.split("-"):
        if SIZE_PART.fullmatch(part) and part != f"{part[0]}{sizes[part[0]]}":
            k = part[1:] if len(part) <= 20 else f"{part[1:20]}..."
            stated = f"{k} tokens" if part[0] == "n" else f"a dimension of {k}"
            return (f"the configuration's name {name!r:.80} states {stated} (its part {part:.20}), but its inputs are "
                    f"{n} tokens of dimension {d}")
    return None


# Reading a number stated as text (exact.ball: Fraction's parse, its power of 10 or 2, a division at the precision)
# costs by its length and its exponent, not as an entry: measured at 53 bits, in work units, 27 for "123456", 300 for
# "12345678e-3500", 7000 for p/q of 4300 digits each; at 65536 bits 85 for "1/3", 1350 for "12345678e-3500".
TEXT = 32  # units a text, beyond 2 a character, its exponent's (a quarter of a unit a decimal, a sixteenth a binary)


# The keys whose texts reading() prices: beside NUMBERS, a witness's basis and top, the exact numbers of the
# residual-far, wu-fig1 and ln-equilibria kinds (w, q) and of their witnesses (ends of boxes, cuts, shifts), each
# read exactly (exact.rational: 2000 cuts of 4000-digit p/q took 12 s of a wu-fig1 estimate of 0.06 s).
READ = NUMBERS | {"basis", "top", "w", "q", "a_min", "theta_A", "theta_B", "trapping_cuts", "box", "gram_shift",
                  "top_vector"}
PLAIN = {float, int, bool, type(None)}  # what reading() passes over: no text to read
FLAT = PLAIN | {str}  # what holds no list or object
# A text's exponent, as reading() prices it: its last e or p, then signs, zeros and at least a digit that is not 0 (its
# first six read), and nothing but digits and white space to its end; each part possessive, so that a search is linear
# in the text.  A binary64's text as float.hex spells it (exact.binary64 reads it): asked of that one by one.
_EXPONENTS = ((re.compile(r"[eE][+-]*+0*+([1-9][0-9]{0,5}+)[0-9]*+\s*+\Z"), 4),
              (re.compile(r"[pP][+-]*+0*+([1-9][0-9]{0,5}+)[0-9]*+\s*+\Z"), 16))
_HEX_FLOAT = re.compile(r"(?:0x1|-0x[01])\.[0-9a-f]+p[+-][0-9]+\Z")


def _texts_reading(texts: list[str]) -> tuple[int, int]:
    """reading() of texts under a key of READ: each _price()d, but for a binary64's hex text (certify's beta, biases),
    read as an entry and priced as one; a text at a time only where it may be a binary64's (a Python loop over every
    text cost a microsecond each: 64 MiB of "xy" took 13 s to price, 1 s to read)."""
    entries = [text for text in filter(_HEX_FLOAT.match, texts) if binary64(text) is not None]
    return _price(texts) - _price(entries), len(texts) - len(entries)


def _price(texts: list[str]) -> int:
    """The units of reading texts, in C: each TEXT, 2 a character and its exponent's (a quarter of a unit a decimal, a
    sixteenth a binary, at most 16000 read)."""
    units = TEXT * len(texts) + 2 * sum(map(len, texts))
    for marker, per_unit in _EXPONENTS:  # an exponent's six digits at most: its distinct ones are few, each read once
        stated = Counter(map(itemgetter(1), filter(None, map(marker.search, texts))))
        units += sum(min(int(digits), 16000) // per_unit * times for digits, times in stated.items())
    return units


def reading(value, key: str | None = None) -> tuple[int, int]:
    """(the work units of reading once every number stated as text in value under a key of READ (NUMBERS, a witness's
    basis and top) at 53 bits; how many there are: each costs a unit a limb of the precision more, its division).  A
    walk with a stack, a list (or a list of lists) of plain numbers passed over in one step (set(map(type, ...)), in
    C): rows of floats read element by element in Python cost every check of 8 x 4 tokens some 40 us; and a list's
    texts, or its rows', priced together (_texts_reading)."""
    units = count = 0
    stack = [(value, key)]
    while stack:
        value, key = stack.pop()
        if isinstance(value, dict):
            stack += [(v, k) for k, v in value.items() if type(v) not in PLAIN]
        elif isinstance(value, list):
            kinds = set(map(type, value))
            if kinds == {list} and (entries := set(map(type, chain.from_iterable(value)))) <= FLAT:
                kinds = entries  # rows of numbers and texts: their entries as one list, when it has texts to price
                value = list(chain.from_iterable(value)) if str in kinds and key in READ else []
            if str in kinds and key in READ:
                more = _texts_reading(value if kinds == {str} else [v for v in value if type(v) is str])
                units, count = units + more[0], count + more[1]
            if not kinds <= FLAT:
                stack += [(v, key) for v in value if type(v) not in FLAT]
        elif isinstance(value, str) and key in READ:
            more = _texts_reading([value])
            units, count = units + more[0], count + more[1]
    return units, count


def exact(value, key: str | None = None):
    """A configuration (one problem() passes) with every number of NUMBERS that is not a float (text, an integer)
    read once, as the fmpq exact.ball takes: a trajectory reads its layers at every step, and reading their texts
    there (some 0.2 ms one of 4000 digits) cost hundreds of times the checker's estimate of the steps."""
    if isinstance(value, (dict, list)):
        return {k: exact(v, k) for k, v in value.items()} if isinstance(value, dict) else [exact(v, key) for v in value]
    if key not in NUMBERS or isinstance(value, float):  # a binary64, exact in arb and read in one pass (forward._row)
        return value
    q = rational(value)
    return fmpq(q.numerator, q.denominator)
