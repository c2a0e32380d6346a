"""What is wrong with a malformed certificate, in words: the field the checker was reading when it stopped, and why.

The kinds read their fields as they go, and a field missing or of another form stops them with one of the exceptions
certify_checker.MALFORMED lists, whose texts name Python's types and no field ("KeyError: 'x'", "object of type 'int'
has no len()").  The field is found among the variables of the reading that stopped (its traceback's frames, the
innermost first): the deepest part of the certificate one of them holds, by identity (a value that occurs more than
once, as null or a one-character string does, names no field).  The words say what was found and what was wanted.
This serves the message only: the certificate is not confirmed, whatever it names.
"""

from __future__ import annotations

import re

_JSON = {"NoneType": "null", "bool": "a boolean", "int": "a number", "float": "a number", "str": "a string",
         "list": "an array", "dict": "an object"}
_T = r"'(\w+)'"  # a Python type's name quoted, as its messages quote it
# (the pattern of an exception's text, what was wanted, in words); {} is what was found, in JSON's words
_WANTED = ((rf"object of type {_T} has no len\(\)|{_T} object is not iterable", "{} where an array is expected"),
           (rf"{_T} object is not subscriptable", "{} where an array or an object is expected"),
           (rf"expected string or bytes-like object, got {_T}", "{} where a string is expected"),
           (rf"unhashable type: {_T}", "{} where a string is expected"),
           (r"(list) indices must be integers", "{} where an object is expected"),
           (r"(str)ing indices must be integers", "{} where an array or an object is expected"),
           (rf"{_T} object has no attribute '(?:get|items|keys|values)'", "{} where an object is expected"),
           ((rf"not supported between instances of {_T}|bad operand type for \S+ {_T}|unsupported operand type\(s\) "
             rf"for \S+ {_T}"), "{} where a number is expected"))
_VALUE = ((r"too many values to unpack|not enough values to unpack", "an array of the wrong length"),
          (r"invalid literal for int|could not convert|invalid string for arb",
           "not a number as certificates state one"),
          # a number read whole (2^16000 as 0x1p16000) that the checker writes in decimal, as a claim states it
          (r"Exceeds the limit \((\d+) digits\) for integer string", "a number of more than {} digits written out"))


def where(err: BaseException, cert, text: str, kind: str | None) -> tuple | None:
    """The path of the part of `cert` that err is about, or None when it is not known for sure: among the parts the
    innermost frame of err's traceback that holds any holds, and their entries, the one (or ones at one path) that
    is of the Python type `kind` its text names, or whose value the text quotes (a value met once in `cert`), or (a
    KeyError) that is an object without the key."""
    frames, trace = [], err.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame)
        trace = trace.tb_next
    held = [list(frame.f_locals.values()) for frame in reversed(frames)]
    quotes = set(re.findall(r"(?:^|\s)'([^']*)'(?=\s|$)|(?:^|\s)\"([^\"]*)\"(?=\s|$)", text))
    quoted = {q for pair in quotes for q in pair}
    longest = max(map(len, quoted), default=-1)
    walked = _walk(cert, {id(value) for values in held for value in values}, quoted, longest)
    if walked is None:
        return None
    paths, said = walked
    for values in held:
        direct = [(paths[id(v)][0], v) for v in values if len(paths.get(id(v), ())) == 1 and paths[id(v)][0]]
        if not direct:
            continue  # a frame that holds no part of the certificate (null and the like name no field: met often)
        parts = direct + [((*path, key), item) for path, value in direct for key, item in _entries(value)]
        if isinstance(err, KeyError):
            key = err.args[0] if err.args else None
            found = {(*path, key) for path, value in parts if isinstance(value, dict) and isinstance(key, str)
                     and key not in value}
        else:
            # the value of the type the text names is one a variable holds, an array or an object one the raising
            # line holds itself (the entries of what an outer frame holds are many of one type); a null, the same
            # object wherever it is, is the one null among the entries of the objects and arrays held
            typed = parts if kind == "NoneType" else direct if values is held[0] or kind not in ("list", "dict") else []
            found = {path for path, value in typed if type(value).__name__ == kind}
            found |= {path for path, value in parts if _small(value) and said.get(_text(value, longest)) == 1
                      and _quoted(value, text)}
        return found.pop() if len(found) == 1 else None
    return None


# The most parts of a certificate walked to name a field: an honest certificate's malformed copy has some thousands;
# a path a part, 64 MiB of one array walked took 50 s and 3 GB to name a field, which the message can do without.
WALKED = 100_000


def _walk(cert, wanted: set[int], quoted: set[str], longest: int) -> tuple[dict, dict] | None:
    """({id: the paths of cert's parts that are the objects `wanted`}, {text: how many of cert's small values read
    as this text}) for the texts `quoted`, the longest `longest` characters: one walk of the certificate, a JSON tree
    within the limits; None past WALKED parts."""
    paths, said, stack, count = {}, {}, [((), cert)], 1
    while stack:
        path, value = stack.pop()
        if id(value) in wanted and _own(value):
            paths.setdefault(id(value), []).append(path)
        if quoted and _small(value) and (shown_value := _text(value, longest)) in quoted:
            said[shown_value] = said.get(shown_value, 0) + 1
        count += len(value) if isinstance(value, (dict, list)) else 0  # the parts about to be walked, before they are
        if count > WALKED:
            return None
        stack += [((*path, key), item) for key, item in _entries(value)]
    return paths, said


def _own(value) -> bool:
    """Whether the object `value` is the certificate's own, as JSON's reader made it: not one Python keeps once for
    every use (null, true, false, the integers -5 to 256, a string of one character or none), which a variable of
    the checker's may hold whatever the certificate states."""
    return not (value is None or isinstance(value, bool) or isinstance(value, int) and -5 <= value <= 256
                or isinstance(value, str) and len(value) <= 1)


def _quoted(value, text: str) -> bool:
    """Whether text quotes the value whole ("'x' is not a decimal"), not within another's quote."""
    return re.search(rf"(?:^|\s){re.escape(repr(str(value)))}(?:\s|$)", text) is not None


def _small(value) -> bool:
    """A value a message may quote whole: a plain one, or an array or object of at most 8 plain ones (a larger one,
    the checker cuts short; its text is not made, as it may be megabytes)."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return items is None or len(items) <= 8 and not any(isinstance(item, (dict, list)) for item in items)


def _text(value, longest: int) -> str | None:
    """str(value) of a small value, or None where an integer in it has more digits than `longest`, the longest text
    quoted, which it then cannot be: such an integer is not written out (int to str takes time growing with the
    square of the digits: 15,000 of 4000 digits took 3.8 s, three times reading them).  An integer of b bits has more
    than (b - 1) / 4 digits."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else (value,)
    return None if any(type(v) is int and (v.bit_length() - 1) // 4 > longest for v in items) else str(value)


def _entries(value):
    return value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()


def shown(path: tuple) -> str:
    """A field's path as a reader of the certificate writes it: inputs.layers[0].A, witness.A0.basis[1][2]."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


def described(err: BaseException, cert) -> str:
    """What is wrong with the certificate that raised `err` while it was read, naming the field where it is known
    for sure (where) and never a Python exception's name or type."""
    text = str(err)
    wanted = next(((found, words) for pattern, words in _WANTED if (found := re.search(pattern, text))), None)
    kind = next(group for group in wanted[0].groups() if group) if wanted else None
    path = where(err, cert, text, kind)
    at = f"{shown(path)}: " if path else ""
    if isinstance(err, KeyError):
        return f"{shown(path)} is missing" if path else f"a field {err.args[0] if err.args else ''!r:.60} is missing"
    if isinstance(err, IndexError):
        return f"{at}an array shorter than it must be"
    if isinstance(err, (SyntaxError, RecursionError, MemoryError)):
        return f"{at}not a text the checker reads (a formula's syntax, or nested too deep)"
    if isinstance(err, ArithmeticError):
        return f"{at}a number out of range"
    if isinstance(err, ValueError):
        return at + next((words.format(*found.groups()) for pattern, words in _VALUE
                          if (found := re.search(pattern, text))), text)  # or the checker's
    if wanted:
        return at + wanted[1].format(_JSON.get(kind, "a value of another kind"))
    return f"{at}a value of the wrong kind"
