"""Exact numbers at the boundary: what a configuration file means, and how a certificate says it.

Contract (README, "Configuration file"): a JSON integer is that integer, exactly (9007199254740993
stays odd; at most 4000 digits, certify.core.limits); a JSON number with a fraction or an exponent
is the binary64 value it parses to (0.1 is 0x1.999999999999ap-4); a string is exact: decimal "0.1"
is 1/10, "p/q" a rational, "0x1.8p-3" a hex float.  Every input becomes a
Fraction here, once; the arithmetic backends convert Fractions to their own numbers.
"""

from __future__ import annotations

import argparse
import base64
import decimal
import itertools
import math
import re
import struct
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from certify.errors import BadInput, shown

if TYPE_CHECKING:  # numpy is loaded where an array is read (from_numpy), not with the module
    import numpy as np

# Exponents beyond this are not configurations anyone means; they would only make the exact
# rationals (and the precision needed to separate them) absurdly large.
MAX_DECIMAL_EXPONENT = 4000
# The most digits a number's numerator or denominator may have: Python's default limit on the
# decimal text of an integer (sys.int_info.default_max_str_digits), which every exact number a
# certificate states must pass, in certify and in the checker.  "0x1p-16000" (4817 digits below
# the bar) is within the exponent caps but could never be written down: refused on reading.
MAX_DIGITS = 4300
_DIGITS_BOUND = 10**MAX_DIGITS

_HEX_FLOAT = re.compile(r"^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?\d+))?$", re.IGNORECASE)
_DECIMAL_EXPONENT = re.compile(r"e([+-]?\d+)$", re.IGNORECASE)


# The most digits an integer option may have, and the most significant digits of a real one: more than any
# count, seed, cap or range means, and few enough that "1e400" is refused by its exponent before 10^400 is made.
MAX_OPTION_DIGITS = 30
MAX_OPTION_TEXT = 100  # characters of an option's number: longer texts are not read
# A decimal as an integer or real option writes it: digits with an optional point, an optional exponent.
_DECIMAL = re.compile(r"[+-]?([0-9]*)(?:\.([0-9]*))?(?:e([+-]?[0-9]+))?", re.ASCII | re.IGNORECASE)
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _script_problem(text: str) -> str | None:
    """What a number's text writes that Python's readers take and the number rules do not, or None: other
    scripts' digits ("\\u0665", an Arabic-Indic 5, looks like 0) and underscores ("1_000"; in an exponent,
    "1e1_000_000_000", they passed the exponent cap)."""
    if not text.isascii():
        return "numbers are written in ASCII digits"
    if "_" in text:
        return "digits are written without underscores"
    return None


class RefusedOption(argparse.ArgumentTypeError, ValueError):
    """A numeric option's text that the number rules refuse, and why (`reason`).  An ArgumentTypeError, so that
    argparse prints the reason ("invalid integer value" alone did not say that 1e400 is too large), and a
    ValueError for the callers that catch one.  `kind` names the option's type in the message."""

    kind = "number"

    def __init__(self, text: str, reason: str):
        self.reason = f"{shown(text)} {reason}"
        super().__init__(f"invalid {self.kind} value: {self.reason}")


class NotAnInteger(RefusedOption):
    """An integer option's text that is not one (option_integer()), and why."""

    kind = "integer"


class NotAReal(RefusedOption):
    """A real option's text that the number rules refuse (option_real()), and why."""

    kind = "real"


def _decimal(text: str, refused: type[RefusedOption], what: str, example: str) -> tuple[bool, int, int]:
    """(negative, mantissa, shift) of a decimal option's text, its value being +-mantissa * 10^shift, under
    the number rules of inputs (ASCII digits, no underscores, no nan or inf); `refused` (NotAnInteger or
    NotAReal) says what is wrong, calling the value `what` ("an integer") and showing `example`."""
    stripped = text.strip()
    if unreadable := _script_problem(stripped):
        raise refused(text, f"is not {what}: {unreadable}")
    if len(stripped) > MAX_OPTION_TEXT:
        raise refused(text, f"is longer than {MAX_OPTION_TEXT} characters, more than any option's number needs")
    if _NOT_FINITE.fullmatch(stripped):
        raise refused(text, f"is not {what}: it is not finite")
    match = _DECIMAL.fullmatch(stripped)
    if not match or not (match.group(1) or match.group(2)):
        raise refused(text, f"is not {what} (write one in decimal digits, e.g. {example})")
    whole, fraction, exponent = match.group(1), match.group(2) or "", match.group(3) or "0"
    # at most MAX_OPTION_TEXT digits in each part: int() of them is cheap, and 10^shift is never made here
    return stripped.startswith("-"), int(whole + fraction), int(exponent) - len(fraction)


def option_integer(text: str) -> int:
    """An integer option (argparse's type=, and --limit's values) under the number rules of inputs: ASCII
    decimal digits (int() also reads other scripts' digits, an Arabic-Indic 3, and underscores, 1_0), an
    exponent allowed where the value is an exact integer ("1e3" and "2.5e3" as "1e9" in the README's
    limits; "1.5" and "1e-3" are not integers), at most MAX_OPTION_DIGITS digits.  Each option checks its
    own range after; NotAnInteger says what is wrong."""
    negative, mantissa, shift = _decimal(text, NotAnInteger, "an integer", "1000 or 1e3")
    if mantissa and shift < 0:
        if -shift > len(str(mantissa)) or mantissa % 10**-shift:
            raise NotAnInteger(text, "is not an integer")
        mantissa, shift = mantissa // 10**-shift, 0
    if mantissa and len(str(mantissa)) + shift > MAX_OPTION_DIGITS:
        raise NotAnInteger(text, f"has more than {MAX_OPTION_DIGITS} digits, the most an integer option may have")
    value = mantissa * 10**shift if mantissa else 0  # "0e999999" is 0, without 10^999999
    return -value if negative else value


def option_real(text: str) -> float:
    """A real option (argparse's type=) under the number rules of inputs, as the binary64 number nearest its
    decimal: ASCII digits (float() also reads other scripts' digits, underscores, nan and inf), at most
    MAX_OPTION_DIGITS significant digits, within binary64's range (1e999 would be inf, a nonzero 1e-999 would
    be 0).  Each option checks its own range after; NotAReal says what is wrong."""
    negative, mantissa, shift = _decimal(text, NotAReal, "a number", "0.5 or 2e-3")
    if not mantissa:
        return 0.0
    while mantissa % 10 == 0:  # trailing zeros are not precision: 1000.0 has one significant digit
        mantissa, shift = mantissa // 10, shift + 1
    places = len(str(mantissa))
    if places > MAX_OPTION_DIGITS:
        raise NotAReal(text, f"has more than {MAX_OPTION_DIGITS} significant digits, the most a real option "
                             "may have")
    magnitude = places + shift  # the value lies in [10^(magnitude-1), 10^magnitude)
    value = float(f"{mantissa}e{shift}") if abs(magnitude) < 400 else (math.inf if magnitude > 0 else 0.0)
    if math.isinf(value):
        raise NotAReal(text, f"is too large: beyond binary64's range (about {sys.float_info.max:.1e})")
    if value == 0:
        raise NotAReal(text, f"is too small: below binary64's range (about {math.ulp(0.0):.0e}), "
                             "it would be read as 0")
    return -value if negative else value


def digits(value: Fraction) -> int:
    """At least the number of decimal digits of value's numerator or denominator, whichever is longer
    (from their bit lengths: no decimal text is made)."""
    return 1 + math.ceil(max(abs(value.numerator).bit_length(), value.denominator.bit_length()) * math.log10(2))


def _written(value: Fraction, text, where: str) -> Fraction:
    """value, unless its numerator or denominator has more than MAX_DIGITS digits (BadInput)."""
    if abs(value.numerator) >= _DIGITS_BOUND or value.denominator >= _DIGITS_BOUND:
        raise BadInput(f"{where}: {shown(str(text)) if isinstance(text, str) else 'a number'} has more than "
                       f"{MAX_DIGITS} digits above or below the fraction bar, the most a number may have")
    return value


def _parse_hex_float(text: str, where: str) -> Fraction | None:
    match = _HEX_FLOAT.match(text)
    if not match or not (match.group(2) or match.group(3)):
        return None
    sign, whole, frac, exponent = match.groups()
    frac = frac or ""
    mantissa = int((whole or "0") + frac, 16)
    power = int(exponent or 0) - 4 * len(frac)
    if abs(power) > 4 * MAX_DECIMAL_EXPONENT:
        raise BadInput(f"{where}: {shown(text)} has an absurd exponent")
    value = Fraction(mantissa) * (Fraction(2) ** power)
    return -value if sign == "-" else value


# 2^-1074 made from its bits: under denormals-are-zero it compares equal to 0 (_subnormals_read)
_SMALLEST_FROM_BITS = struct.unpack("<d", struct.pack("<Q", 1))[0]
SUBNORMAL_UNREAD = ("a subnormal number (nonzero, below 2^-1022) is read as 0 or 2^-1023 in this process: "
                    "denormals-are-zero is set (as a fast-math library does when it is loaded)")


def _subnormals_read() -> bool:
    """This process reads a subnormal binary64 number as itself: under denormals-are-zero every operation takes it
    for 0, and Fraction(x), float.hex and arb(x) give 0 or 2^-1023, so a configuration would be decided that its
    file does not hold."""
    return _SMALLEST_FROM_BITS != 0.0


def _subnormal(value: float) -> bool:
    """value is a nonzero binary64 number below 2^-1022, judged from its bits."""
    return 0 < struct.unpack("<Q", struct.pack("<d", value))[0] & ~(1 << 63) < 1 << 52


def parse_number(value, where: str = "number") -> Fraction:
    """The exact rational a configuration value stands for."""
    if isinstance(value, bool) or value is None:
        raise BadInput(f"{where}: expected a number, got {json_type(value)}")
    if isinstance(value, int):
        return _written(Fraction(value), value, where)
    if isinstance(value, float):
        if not math.isfinite(value):
            # a JSON number beyond binary64's range (1e400) parses to inf: the file never says inf
            hint = (' (a JSON number beyond binary64\'s range reads as inf: write it as a string, such as "1e400", '
                    'for its exact value)') if math.isinf(value) else ""
            raise BadInput(f"{where}: {value} is not a finite number{hint}")
        if not _subnormals_read() and _subnormal(value):
            raise BadInput(f"{where}: {SUBNORMAL_UNREAD}")
        return Fraction(value)
    if isinstance(value, Fraction):
        return _written(value, value, where)
    if isinstance(value, str):
        text = value.strip()
        if unreadable := _script_problem(text):
            raise BadInput(f"{where}: {shown(value)} is not a number: {unreadable}")
        hex_value = _parse_hex_float(text, where)
        if hex_value is not None:
            return _written(hex_value, text, where)
        exponent = _DECIMAL_EXPONENT.search(text)
        if exponent and abs(int(exponent.group(1))) > MAX_DECIMAL_EXPONENT:
            raise BadInput(f"{where}: {shown(value)} has an absurd exponent")
        if any(sum(c.isdigit() for c in part) > MAX_DIGITS for part in text.split("/")):  # (Fraction's own words)
            raise BadInput(f"{where}: {shown(value)} has more than {MAX_DIGITS} digits, the most a number may have")
        try:
            exact = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise BadInput(f"{where}: {shown(value)} is not a number (decimal, 'p/q' or hex float)") from None
        return _written(exact, text, where)
    raise BadInput(f"{where}: expected a number, got {json_type(value)}")


def _numpy_exact(array: np.ndarray, where: str):
    """The entries of a numpy array as exact Python numbers (nested lists; a 0-d array gives one number).

    Float dtypes: each entry exactly the binary floating-point value it holds (float16/32/64 as the
    binary64 Python float, wider ones as Fractions); integer dtypes: the integers; a string scalar: the
    string (a mask or LayerNorm name); a boolean dtype: the booleans, as JSON's true and false, which the
    reading then takes where JSON's are ("residual", a mask's entries) and refuses with JSON's words where they
    are not (a number, a matrix).  Object, complex and other dtypes, NaN and infinity
    are bad input."""
    import numpy as np  # see from_numpy

    kind = array.dtype.kind
    if kind in "US" and array.ndim == 0:
        return str(array.item())
    if kind == "b":  # read as 0 and 1 they let X = [[True]] through where {"X": [[true]]} is refused
        return array.tolist()
    if kind not in "fiu":
        raise BadInput(f"{where}: a numpy array of dtype {array.dtype} is not a number array "
                       "(give a float or integer dtype)")
    if kind == "f":
        if not np.isfinite(array).all():
            raise BadInput(f"{where}: the numpy array holds NaN or infinity")
        if array.dtype.itemsize > 8:  # long double: wider than binary64, kept exact as rationals
            exact = np.vectorize(lambda x: Fraction(*x.as_integer_ratio()), otypes=[object])(array)
            return exact.tolist()
        return widened(array, where).tolist()  # every float16/32 value is a binary64 value
    return array.tolist()  # numpy integers become Python integers, exactly


def widened(array: np.ndarray, where: str) -> np.ndarray:
    """A float16, float32 or float64 array as float64, exactly (each such value is a binary64 number).  Under
    denormals-are-zero (a fast-math library loaded) numpy's conversion read a subnormal float32 entry (1e-45, a
    normal binary64 number) as 0, and D_out <= 0 held for an .npz file's tokens 1e-45 apart: there such entries
    are made from their bits, and a subnormal binary64 one, which nothing reads as itself there, is refused."""
    import numpy as np  # see from_numpy

    wide = array.astype(np.float64)
    if _subnormals_read():
        return wide
    info, size = np.finfo(array.dtype), 8 * array.dtype.itemsize
    bits = array.astype(array.dtype.newbyteorder("=")).view(f"u{array.dtype.itemsize}")  # (a byte order's copy)
    magnitude = bits & (1 << size - 1) - 1
    subnormal = (magnitude > 0) & (magnitude < 1 << info.nmant)
    if not subnormal.any():
        return wide
    if size == 64:
        raise BadInput(f"{where}: {SUBNORMAL_UNREAD}" if where else SUBNORMAL_UNREAD)  # where: a file's matrix
    # m 2^(minexp - nmant) for the m of its bits, exact: a normal binary64 number (ldexp, as 2.0**k is pow's, which
    # errs under a rounding mode set in the process)
    scaled = np.ldexp(np.where(bits >> size - 1, -1.0, 1.0) * magnitude, info.minexp - info.nmant)
    return np.where(subnormal, scaled, wide)


def from_numpy(data, ndims: dict, where: str = ""):
    """data with every numpy array or numpy scalar inside (dicts and lists walked) replaced by its exact
    Python value (_numpy_exact), so that the rest of the reading sees what a JSON file gives.  ndims
    maps a key to the dimensions its array must have (2 for a matrix, 1 for a vector, 0 for a scalar)."""
    # numpy is loaded where a matrix is read or made, not with the module: the options, the number texts and the
    # reading of a certificate (`certify verify`) need none of it, and it is most of a short command's start
    import numpy as np

    if isinstance(data, (np.ndarray, np.generic)):
        hidden = np.ma.count_masked(data) if isinstance(data, np.ma.MaskedArray) else 0
        if hidden:  # np.asarray keeps the values under the mask, silently
            raise BadInput(f"{where}: a masked array with {hidden} masked {'entry' if hidden == 1 else 'entries'}"
                           " (fill them, e.g. .filled(0), or give a plain array)")
        array = np.asarray(data)
        key = where.rsplit(".", 1)[-1]
        want = ndims.get(key)
        if want is not None and array.ndim != want and not (key == "mask" and array.ndim == 0):
            what = {0: "a number", 1: "a vector (1-d)", 2: "a matrix (2-d)"}[want]
            raise BadInput(f"{where}: expected {what}, got a numpy array of shape {array.shape}")
        return _numpy_exact(array, where)
    if isinstance(data, dict):
        for key in data:  # a JSON object's are; from Python, 1 or None raised TypeError where unknown keys were listed
            if not isinstance(key, str):
                raise BadInput(f"{where or 'the configuration'}: a key is a string, not {type(key).__name__} ({key!r})")
        return {key: from_numpy(value, ndims, f"{where}.{key}" if where else key) for key, value in data.items()}
    if isinstance(data, (list, tuple)) and _holds_container(data):
        return [from_numpy(value, ndims, f"{where}[{i}]") for i, value in enumerate(data)]
    return data


def _holds_container(data: list | tuple) -> bool:
    """Whether an entry of data is something from_numpy walks into or converts.  A list of plain rows
    (a JSON matrix) is told from its entries' types, without a call per row."""
    kinds = set(map(type, data))
    if kinds <= {list}:  # rows (or nothing): whether a row holds one
        kinds = set(map(type, itertools.chain.from_iterable(data)))
    import numpy as np  # see from_numpy

    containers = (np.ndarray, np.generic, dict, list, tuple)  # what from_numpy walks into or converts
    return any(issubclass(kind, containers) for kind in kinds)


def json_type(value) -> str:
    """How a value is named in an error message ("a list", "the string 'x'", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (list, tuple)):
        return "a list" if value else "an empty list"  # "expected a non-empty list, got a list" did not say why
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return f"the string {shown(value)}"
    return type(value).__name__


def parse_vector(value, where: str, length: int | None = None) -> tuple[Fraction, ...]:
    """A non-empty list of exact numbers (of `length` entries when given)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise BadInput(f"{where}: expected a non-empty list of numbers, got {json_type(value)}")
    if any(isinstance(v, (list, tuple)) for v in value):
        raise BadInput(f"{where}: expected a list of numbers, got a nested list")
    if length is not None and len(value) != length:
        raise BadInput(f"{where}: expected {length} entries, got {len(value)}")
    return tuple(parse_number(v, f"{where}[{i}]") for i, v in enumerate(value))


class Binary64Matrix(Sequence):
    """A matrix whose every entry is a binary64 value, held as its float64 array (exact as it is).

    It reads like any parsed matrix (rows of Fractions, equal to the tuple of them), but the
    Fractions are made only when something asks for them: the arithmetic backends and the
    certificate take the array itself (a binary64 value is exact in arb and in float64).
    """

    __slots__ = ("array", "_rows")

    def __init__(self, array: np.ndarray, owned: bool = False, where: str = ""):
        import numpy as np  # see from_numpy

        # a copy, so that no one else holds the array to change it, unless the caller made it for this matrix alone
        self.array = array if owned and array.dtype == np.float64 else np.array(array, dtype=np.float64)
        self.array.flags.writeable = False
        if not _subnormals_read():
            widened(self.array, where)  # which refuses a subnormal entry, read as itself nowhere here
        self._rows = None

    def rows(self) -> tuple:
        """The matrix as rows of Fractions (made once, on first use)."""
        if self._rows is None:
            self._rows = tuple(tuple(map(Fraction, row)) for row in self.array.tolist())
        return self._rows

    def __len__(self) -> int:
        return self.array.shape[0]

    def __getitem__(self, index):
        if self._rows is None and isinstance(index, int):  # one row (e.g. the width) needs only its own Fractions
            return tuple(map(Fraction, self.array[index].tolist()))
        return self.rows()[index]

    def __iter__(self):
        return iter(self.rows())

    def __eq__(self, other):
        if isinstance(other, Binary64Matrix):
            return self.array.shape == other.array.shape and bool((self.array == other.array).all())
        return self.rows() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows())

    def __repr__(self) -> str:
        return f"Binary64Matrix({self.array.shape[0]} x {self.array.shape[1]})"


def side_by_side(left, right):
    """The parsed matrix [left | right] (rows joined), a Binary64Matrix when both are."""
    if isinstance(left, Binary64Matrix) and isinstance(right, Binary64Matrix):
        import numpy as np  # see from_numpy

        return Binary64Matrix(np.hstack([left.array, right.array]))
    return tuple(tuple(a) + tuple(b) for a, b in zip(left, right))


def is_matrix(exact) -> bool:
    """A parsed vector or matrix of exact numbers (tuples or lists) is a matrix: its first entry is a row."""
    return len(exact) > 0 and isinstance(exact[0], (tuple, list))


def columns(matrix) -> int:
    """The number of columns of a parsed matrix (a Binary64Matrix's without making a row of Fractions)."""
    return matrix.array.shape[1] if isinstance(matrix, Binary64Matrix) else len(matrix[0])


_BINARY64_INTEGER = 2**53  # every integer up to this is a binary64 value


def _binary64_array(value) -> np.ndarray | None:
    """The float64 array of a rectangular list of JSON numbers that are all binary64 values, else None
    (then the general reading applies, with its error messages)."""
    # the types and lengths as sets: one pass in C over the rows and the entries, not a Python loop
    if not isinstance(value, list) or not value or set(map(type, value)) != {list} or len(set(map(len, value))) != 1:
        return None
    kinds = set(map(type, itertools.chain.from_iterable(value)))
    if not kinds or not kinds <= {float, int}:  # no entries, or one that is not a JSON number
        return None
    if int in kinds and not all(-_BINARY64_INTEGER <= v <= _BINARY64_INTEGER
                                for v in itertools.chain.from_iterable(value) if type(v) is int):
        return None
    # a pass in C over the entries: numpy's isfinite().all() costs more in calls than in work at these sizes
    if not all(map(math.isfinite, itertools.chain.from_iterable(value))):
        return None
    import numpy as np  # see from_numpy

    return np.array(value, dtype=np.float64)


def parse_matrix(value, where: str, shape: tuple[int | None, int | None] = (None, None)):
    """A rectangular matrix of exact numbers, rows as given; shape entries of None are free."""
    fast = _binary64_array(value)
    if isinstance(value, dict):
        matrix = _parse_block(value, where)
        width = matrix.array.shape[1]
    elif fast is not None:
        matrix, width = Binary64Matrix(fast, owned=True, where=where), fast.shape[1]
    else:
        if not isinstance(value, (list, tuple)) or not value:
            raise BadInput(f"{where}: expected a non-empty list of rows, got {json_type(value)}")
        for i, row in enumerate(value):
            if not isinstance(row, (list, tuple)):
                raise BadInput(f"{where}: row {i} is {json_type(row)}, not a list of numbers")
        width = len(value[0])
        if any(len(row) != width for row in value):
            raise BadInput(f"{where}: ragged rows (lengths {sorted({len(r) for r in value})})")
        # the shape before the numbers: reading millions of numbers took minutes before a wrong shape was seen
        _check_shape(where, len(value), width, shape)
        return tuple(parse_vector(row, f"{where}[{i}]") for i, row in enumerate(value))
    _check_shape(where, len(matrix), width, shape)
    return matrix


def _check_shape(where: str, rows: int, width: int, shape: tuple[int | None, int | None]) -> None:
    """BadInput unless a matrix of rows x width has the wanted shape (entries of None are free)."""
    want_rows, want_cols = shape
    if want_rows is not None and rows != want_rows or want_cols is not None and width != want_cols:
        want = f"{want_rows if want_rows is not None else '*'} x {want_cols if want_cols is not None else '*'}"
        raise BadInput(f"{where}: expected shape {want}, got {rows} x {width}")


def encode(value: Fraction) -> str:
    """The canonical exact text of a number: an integer, a hex float when it is a binary64, else 'p/q'."""
    if value.denominator == 1:
        return str(value.numerator)
    if value.denominator & (value.denominator - 1) == 0:  # a dyadic rational
        as_float = float(value)
        if math.isfinite(as_float) and Fraction(as_float) == value:
            return as_float.hex()
    return f"{value.numerator}/{value.denominator}"


# Binary64 matrices with more entries are written as one binary64 block: the decimal text of a
# binary64 number costs about a microsecond to write, and a check writes its inputs twice (the
# digest of the certificate, in the engine and in the checker); smaller ones stay readable.
BLOCK_ENTRIES = 64


def encode_matrix(rows) -> list[list] | dict:
    """The exact text of a matrix.  Binary64 values as JSON numbers (each is the binary64 value it
    parses to, and JSON writes the shortest text that parses back to it), or, beyond BLOCK_ENTRIES of
    them, as a block {"binary64": base64 of the little-endian IEEE doubles row by row, "shape":
    [rows, cols]} (10.7 bytes a number instead of about 20); other numbers by encode()."""
    if isinstance(rows, Binary64Matrix):
        if rows.array.size <= BLOCK_ENTRIES:
            return rows.array.tolist()
        data = base64.b64encode(rows.array.astype("<f8").tobytes()).decode("ascii")
        return {"binary64": data, "shape": list(rows.array.shape)}
    return [[encode(v) for v in row] for row in rows]


def _parse_block(value: dict, where: str) -> Binary64Matrix:
    """A binary64 block (encode_matrix) as the matrix it holds."""
    shape = value.get("shape")
    if set(value) != {"binary64", "shape"} or not (isinstance(shape, list) and len(shape) == 2
                                                    and all(type(s) is int and s >= 1 for s in shape)):
        raise BadInput(f'{where}: a matrix object is {{"binary64": BASE64, "shape": [rows, cols]}}')
    try:
        raw = base64.b64decode(value["binary64"], validate=True)
    except (ValueError, TypeError):
        raise BadInput(f"{where}: the binary64 block is not base64") from None
    if len(raw) != 8 * shape[0] * shape[1]:
        raise BadInput(f"{where}: the binary64 block holds {len(raw)} bytes, not 8 x {shape[0]} x {shape[1]}")
    import numpy as np  # see from_numpy

    array = np.frombuffer(raw, dtype="<f8").reshape(shape)
    if not np.isfinite(array).all():
        raise BadInput(f"{where}: the binary64 block holds a number that is not finite")
    return Binary64Matrix(array, where=where)


def arb_str(x, digits: int, radius: bool = True, more: bool = False) -> str:
    """arb's text of the ball x ("[m +/- r]", arb.str's arguments), whatever the caller's python-flint context:
    with flint.ctx.unicode set (a choice for display) arb writes "[m \u00b1 r]", which no reader of a certificate
    takes, and every check came back undecided."""
    return x.str(digits, radius=radius, more=more).replace("\u00b1", "+/-")


def ball_text(x) -> str | None:
    """A decimal ball (15 digits) that contains the arb x (arb prints radii rounded outwards); None stays None."""
    return None if x is None else arb_str(x, 15)


_SMALLEST_SUBNORMAL = math.ulp(0.0)


def _float_at_most(value) -> float:
    """The largest binary64 number (or -inf) <= the arb value, an exact point."""
    if value.is_nan():
        return -math.inf
    if abs(value) < _SMALLEST_SUBNORMAL:  # far below binary64: an exponent too large to make a Fraction of
        return 0.0 if value >= 0 else -_SMALLEST_SUBNORMAL
    if abs(value) > sys.float_info.max:
        return sys.float_info.max if value > 0 else -math.inf
    mantissa, exponent = (int(part) for part in value.mid().man_exp())
    exact = Fraction(mantissa) * Fraction(2) ** exponent
    candidate = float(exact)
    return candidate if Fraction(candidate) <= exact else math.nextafter(candidate, -math.inf)


def float_bounds(x) -> tuple[float, float]:
    """binary64 numbers (lo, hi) with lo <= every point of the arb ball x <= hi, rounded outward
    (a positive value below binary64's range gives (0.0, 5e-324)); (-inf, inf) for a non-finite ball."""
    if not x.is_finite():
        return -math.inf, math.inf
    return _float_at_most(x.lower()) + 0.0, -_float_at_most(-x.upper()) + 0.0  # + 0.0: no negative zero


def _rounded(digits: int, rounding: str) -> decimal.Context:
    """Decimal arithmetic to `digits` significant digits, rounded one way, with any exponent arb may print
    (no traps: beyond decimal's exponent range, 10^(10^18), a value rounds its way to an infinity, the
    largest finite decimal, 0 or the smallest one)."""
    return decimal.Context(prec=digits, rounding=rounding, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[])


def _decimal_end(point, digits: int, rounding: str) -> str:
    """The exact arb point as a decimal of `digits` digits, rounded down (ROUND_FLOOR) or up (ROUND_CEILING):
    arb's text of it, "m" or "[m +/- r]" (a ball around the point), moved to m - r or m + r and rounded once.
    An m beyond decimal's range is rounded its way already, past the point: r is not added to it."""
    printed = digits + 5
    mid, _, rad = arb_str(point, printed).strip("[]").partition(" +/- ")
    reading = _rounded(printed, rounding)
    exact = reading.create_decimal(mid)  # exact within decimal's range: m has `printed` digits
    context = _rounded(digits, rounding)
    if rad and not reading.flags[decimal.Inexact]:
        # (moved in `context`: the thread's default context traps past 10^999999)
        move = context.subtract if rounding == decimal.ROUND_FLOOR else context.add
        end = move(exact, _rounded(printed, decimal.ROUND_CEILING).create_decimal(rad))
    else:
        end = context.plus(exact)
    if end.is_infinite():
        return "+inf" if end > 0 else "-inf"
    return "0" if end.is_zero() else format(end.normalize(context), "g")  # (rounding down, 0 + -0 is -0)


def decimal_ends(x, digits: int) -> tuple[str, str]:
    """Decimal texts (lo, hi) of at most `digits` significant digits with lo <= every point of the arb ball
    x <= hi, rounded outward: they keep the sign of a ball that arb writes without a digit ("[+/- 8.13e-19]"
    for one inside [-8.1e-19, -1.6e-19]), and its digits where binary64 underflows (2.03e-434).  A ball that
    is not finite gives ("-inf", "+inf")."""
    if not x.is_finite():
        return "-inf", "+inf"
    return _decimal_end(x.lower(), digits, decimal.ROUND_FLOOR), _decimal_end(x.upper(), digits, decimal.ROUND_CEILING)


def signed_text(x, digits: int) -> str:
    """arb's text of the ball x to `digits` digits, unless it shows no digit ("[+/- 8.13e-19]") of a ball that
    excludes 0: then its interval "[lo, hi]" (decimal_ends), whose ends show the sign arb's text hides.  A ball
    around 0 keeps arb's "[+/- r]": its sign is not decided."""
    text = arb_str(x, digits)
    if not text.startswith("[+/-") or x.contains(0) or not x.is_finite():  # (arb writes +inf as "[+/- inf]")
        return text
    lo, hi = decimal_ends(x, digits)
    return f"[{lo}, {hi}]"


def power_of_ten(log10: float | None) -> str:
    """10^log10 to three significant digits of the exponent, never in e-notation: a margin of nearly the whole
    rhs has a log10 such as -9.64e-17 (printed 10^-0.000), one of 10^-4321 a log10 of -4321 (not -4.32e+03)."""
    if log10 is None:
        return "-"
    if log10 == 0 or 1e-3 <= abs(log10) < 1e3:
        return f"10^{log10:.3g}"
    return f"10^{log10:.3f}" if abs(log10) < 1e-3 else f"10^{log10:.0f}"
