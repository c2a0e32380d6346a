"""Every JSON file certify writes (certificates, reports, tables): one format, one place."""

from __future__ import annotations

import decimal
import errno
import json
import math
import struct
import sys
from fractions import Fraction
from pathlib import Path

from certify.core import files
from certify.core.limits import CONTAINER_BYTES, DEFAULT, Limits
from certify.errors import BadInput


def dumps(data, indent: int = 1) -> str:
    """data as indented JSON text with a final newline (every JSON file and --json output certify writes).
    JSON has no NaN or Infinity (certify's own reader refuses them): a float that is not finite, such
    as a float64 side that overflowed, is written as null; the exact texts beside it keep the value."""
    try:
        return json.dumps(data, indent=indent, allow_nan=False) + "\n"
    except ValueError:  # a NaN or an infinity somewhere (rare): the walk only then
        return json.dumps(_finite(data), indent=indent, allow_nan=False) + "\n"


def echo(data, indent: int = 1) -> None:
    """Print data as JSON (dumps) on standard output: every command's --json."""
    text = dumps(data, indent)
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a stream without bytes beneath it (captured in-process)
        sys.stdout.write(text)
        return
    # Python's buffered writer returns a short count, and the text layer drops the rest silently, when a
    # write larger than its buffer is cut short (the reader gone: EPIPE; a signal): written to the bytes
    # beneath until all is taken, a closed pipe raises BrokenPipeError (exit 141) and no output is lost
    sys.stdout.flush()
    rest = memoryview(text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
    while rest:
        taken = binary.write(rest)
        if not taken:  # a stream that takes nothing (non-blocking, full) would loop forever
            raise BrokenPipeError(errno.EPIPE, "standard output accepts nothing")
        rest = rest[taken:]


def _finite(data):
    """data with every float that is not finite replaced by None (dicts, lists and tuples walked)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(value) for value in data]
    return data


def write(data, path) -> Path:
    """Write `data` as indented JSON, creating the folder, the file replaced whole (certify.core.files);
    returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return files.replace(path, dumps(data))


# ---------------------------------------------------------------------------------------------
# Reading untrusted JSON (configurations, certificates, campaign records): one strict reader.
# Rules (README, "JSON"): no duplicate keys (the first of two could be shown, the second used),
# no NaN or Infinity, integers of at most `limits.digits` digits (read exactly), nesting at most
# `limits.nesting` deep, files of at most `limits.bytes` bytes and one array, object or key per CONTAINER_BYTES of them.
# A breach names the limit and, in `raise_with`, how the caller's command raises it: check, verify,
# trajectory, sample, attack, prove and counterexample take --limit NAME=VALUE
# (certify.cli.options.add_limits); a reader whose command has no
# such option (a model's config.json, a mask of `graph`, a job's manifest) passes None, and the
# message names the limit alone.
BY_OPTION = "raise it with --limit {name}=N"


def _raised(name: str, raise_with: str | None) -> str:
    """The end of a limit's message: how to raise it, in brackets, or nothing."""
    return f" ({raise_with.format(name=name)})" if raise_with else ""


def _containers(text) -> int:
    """The arrays, objects and keys of a JSON text, counted before it is read (certify.core.limits.CONTAINER_BYTES): its
    characters `{`, `[` and `:`, in strings too, so never fewer."""
    return sum(map(text.count, "{[:" if isinstance(text, str) else b"{[:"))


def _unique_keys(where: str):
    def hook(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise BadInput(f"{where}: the key {key!r} appears twice in one object")
            out[key] = value
        return out
    return hook


def _depth(data) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        # The types of the children first (one C-level pass): a row of numbers adds nothing to walk.
        if {dict, list} & set(map(type, children)):
            stack.extend((child, level + 1) for child in children if type(child) in (dict, list))
    return deepest


def _rounds_to_nearest() -> bool:
    """float() reads a decimal as the nearest binary64, ties to even, subnormals kept: it rounds as the
    floating-point environment does, which a library in the process can set otherwise (fesetround, flush-to-zero)."""
    u, least_normal = math.ldexp(1.0, -53), math.ldexp(1.0, -1022)  # made now, as each operation below runs
    return 1.0 + u == 1.0 and 1.0 + 3 * u == 1.0 + 4 * u and -1.0 - u == -1.0 and least_normal / 2 > 0


# A decimal to 800 significant digits, the dropped ones leaving a trace in the last (ROUND_05UP: it ends in neither 0
# nor 5 where any were dropped): a binary64 number, or the midpoint of two, has at most 768, so the decimal rounds to
# binary64 as the text does, in time linear in its digits (exact fractions of 300,000 digits took 5 s, 64 MiB days).
_SIGNIFICANT = decimal.Context(prec=800, rounding=decimal.ROUND_05UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _significant(text: str) -> decimal.Decimal:
    """A JSON number's text as a decimal of at most 800 digits (_SIGNIFICANT) and an exponent of at most 10^15 (Decimal
    refuses one beyond 10^18: float() reads 1e99999999999999999999 as inf, and its value is so at 10^15 too)."""
    mantissa, _, power = text.lower().partition("e")
    digits = power.lstrip("+-").lstrip("0")
    shift = int(digits or 0) if len(digits) <= 15 else 10**15
    return _SIGNIFICANT.create_decimal(f"{mantissa}e{'-' if power.startswith('-') else ''}{shift}")


def nearest_binary64(text: str) -> float:
    """The binary64 number nearest to the decimal `text` (a JSON number), ties to even, +-inf beyond the range as
    float() gives, made from its bits by integer arithmetic alone: float() rounded down read 0.1 as the number
    below it, so a configuration was decided that its file does not hold."""
    exact = _significant(text)  # its exponent read without powers of ten (1e999999999)
    if exact.is_zero() or exact.adjusted() < -324:  # below half of 2^-1074
        bits = 0
    elif exact.adjusted() > 308:
        bits = 0x7FF << 52
    else:
        value = abs(Fraction(exact))
        n, d = value.numerator, value.denominator
        shift = n.bit_length() - d.bit_length() - 53  # n / d / 2^shift in (2^52, 2^54)
        if (n >> shift if shift >= 0 else n << -shift) >= d << 53:
            shift += 1  # now in [2^52, 2^53)
        shift = max(shift, -1074)  # the subnormals' spacing
        q, r = divmod(n << -shift, d) if shift < 0 else divmod(n, d << shift)
        if 2 * r > (d << max(shift, 0)) or 2 * r == (d << max(shift, 0)) and q & 1:
            q += 1
        if q >= 1 << 52:  # normal (a subnormal rounded up to 2^52 included)
            if q == 1 << 53:
                q, shift = q >> 1, shift + 1
            exponent = shift + 52 + 1023
            bits = 0x7FF << 52 if exponent >= 0x7FF else exponent << 52 | (q - (1 << 52))
        else:
            bits = q
    return struct.unpack("<d", struct.pack("<Q", bits | (exact.is_signed() << 63)))[0]


def number_reader():
    """How a JSON number's text becomes its binary64 number: float(), unless the floating-point environment would make
    it misread one (nearest_binary64; asked once a text)."""
    return float if _rounds_to_nearest() else nearest_binary64


def as_read(data):
    """data as certify reads back the text dumps() writes of it (tuples as lists, numbers as number_reader reads
    them): a value compared with what a file holds (a folder's parameters, a summary, a record decided again)
    went through json.loads alone, which rounds as the process does, so under a rounding mode a library set a
    sound folder was found edited."""
    return json.loads(dumps(data), parse_float=number_reader())


def bounded(text, where: str, limits: Limits = DEFAULT, raise_with: str | None = BY_OPTION):
    """text (str or bytes), or BadInput when it passes the rules above that are asked before it is parsed: its size,
    and its arrays, objects and keys (loads; a library's JSON file, a model's weights' header and its tokenizer)."""
    if len(text) > limits.bytes:
        raise BadInput(f"{where}: larger than the limit of {limits.bytes} bytes{_raised('bytes', raise_with)}")
    if (opened := _containers(text)) > limits.bytes // CONTAINER_BYTES:
        raise BadInput(f"{where}: {opened} arrays, objects and keys ('{{', '[' and ':' counted), above the limit of "
                       f"{limits.bytes // CONTAINER_BYTES}, one per {CONTAINER_BYTES} bytes of the bytes limit"
                       f"{_raised('bytes', raise_with)}")
    return text


def loads(text, where: str, limits: Limits = DEFAULT, raise_with: str | None = BY_OPTION):
    """Parse untrusted JSON text (str or bytes) under the rules above; every breach is BadInput."""
    text = bounded(text, where, limits, raise_with)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadInput(f"{where}: not UTF-8 text ({err.reason} at byte {err.start})") from None

    def refuse_constant(constant):
        raise BadInput(f"{where}: {constant} is not a finite number")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > limits.digits:
            raise BadInput(f"{where}: an integer of {len(digits.lstrip('-'))} digits is above the limit of "
                           f"{limits.digits}{_raised('digits', raise_with)}")
        return int(digits)

    try:
        data = json.loads(text, object_pairs_hook=_unique_keys(where), parse_constant=refuse_constant,
                          parse_int=integer, parse_float=number_reader())
    except json.JSONDecodeError as err:
        raise BadInput(f"{where}: not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:  # some hundreds of levels: beyond them a raised nesting limit was named as the cause
        if limits.nesting < sys.getrecursionlimit() // 2:
            raise BadInput(f"{where}: nested deeper than the limit of {limits.nesting}") from None
        raise BadInput(f"{where}: nested deeper than the JSON reader goes (some {sys.getrecursionlimit()} levels; "
                       f"the nesting limit is {limits.nesting})") from None
    if _depth(data) > limits.nesting:
        raise BadInput(f"{where}: nested deeper than the limit of {limits.nesting}{_raised('nesting', raise_with)}")
    return data


def read(path, where: str | None = None, limits: Limits = DEFAULT, raise_with: str | None = BY_OPTION):
    """Read and parse an untrusted JSON file (at most limits.bytes of it are read)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = files.head(handle, limits.bytes + 1)
    except OSError as err:  # a read that fails names no file ("Input/output error" of /proc/self/mem): this one
        err.filename = str(path) if err.filename is None else err.filename
        raise
    return loads(data, where or str(path), limits, raise_with)
