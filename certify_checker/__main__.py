"""`python -m certify_checker [--limit NAME=VALUE ...] CERT [CERT ...]`: re-verify certificates with the trusted
checker alone.  --limit changes one of the checker's caps (certify_checker.limits), as on `certify verify`: a
certificate written under raised limits is verified under the same ones.

Exit codes as `certify verify`: 0 every certificate confirmed, 1 one rejected, 2 one unreadable or
beyond the checker's limits (certify_checker.limits), 4 an internal error of the checker (a bug,
never a verdict), 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP).
"""

import dataclasses
import decimal
import os
import re
import signal
import stat
import sys

from certify_checker import FORMAT, Unreadable, load, verify
from certify_checker.limits import ADVICE, LIMITS, Limits

EXIT_INTERNAL_ERROR = 4
_received = [signal.SIGINT]  # the stopping signal received last: Ctrl-C unless SIGTERM or SIGHUP came


def _stop(signum, _frame) -> None:
    """SIGTERM and SIGHUP (a batch system's stop, a closed terminal) end the run as Ctrl-C does, not silently."""
    _received[0] = signum
    raise KeyboardInterrupt


USAGE = "usage: python -m certify_checker [--limit NAME=VALUE ...] CERT [CERT ...]"
# as certify's integer options: ASCII digits, an exponent where the value is an exact integer (2.5e4), 30 digits at most
_INTEGER = re.compile(r"\+?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]{1,6})?", re.ASCII)
_MOST_DIGITS = 4300  # int() of a longer JSON integer raises: the digits limit stops there, as certify's


def _limit(item: str, limits: Limits) -> Limits:
    """limits with one NAME=VALUE applied (certify's --limit: the same names, positive integers)."""
    names = [field.name for field in dataclasses.fields(Limits)]
    name, equals, value = (part.strip() for part in item.partition("="))
    if name not in names:
        raise ValueError(f"--limit {item!r:.60}: unknown limit; the limits are {', '.join(names)}")
    number = decimal.Decimal(value if equals and _INTEGER.fullmatch(value) else 0)  # exact, whatever its exponent
    if not (number == number.to_integral_value() and 0 < number < 10 ** 30):
        raise ValueError(f"--limit {item!r:.60}: expected NAME=VALUE, VALUE a positive integer of at most 30 digits")
    if name == "digits" and number > _MOST_DIGITS:
        raise ValueError(f"--limit {item!r:.60}: a number has at most {_MOST_DIGITS} digits")
    return dataclasses.replace(limits, **{name: int(number)})


def arguments(argv: list[str]) -> tuple[list[str], Limits] | None:
    """(the certificates' paths, the limits) of a command line, None for --help; ValueError when it is wrong (an
    option was read as a file: "cannot read --help"; a limit given twice, whose last value was kept silently)."""
    paths, limits, given, rest = [], LIMITS, {}, iter(argv)  # each word read once: pop(0) moved all after it
    while (word := next(rest, None)) is not None:
        if word in ("-h", "--help"):
            return None
        if word == "--limit" or word.startswith("--limit="):
            item = next(rest, None) if word == "--limit" else word.partition("=")[2]
            if item is None:
                raise ValueError("--limit needs NAME=VALUE")
            limits = _limit(item, limits)
            name = item.partition("=")[0].strip()
            if name in given:
                raise ValueError(f"--limit {name} given more than once ({given[name]!r:.60}, {item!r:.60}); "
                                 "give it once")
            given[name] = item
        elif word == "--":
            paths += rest
            break
        elif word.startswith("-") and word != "-":
            raise ValueError(f"unknown option {word!r:.60} (a file of that name: write ./{word:.60})")
        else:
            paths.append(word)
    if not paths:
        raise ValueError("no certificate given")
    return paths, limits


def printed(path: str) -> str:
    """A file name as a line names it: every character that does not print (a newline, a terminal escape) escaped,
    so that a name "a<newline>b" cannot make a second line the checker never wrote; bytes that are not UTF-8 (lone
    surrogates, U+DC80 to U+DCFF) stay, to print back as those bytes."""
    return "".join(c if c.isprintable() or "\udc80" <= c <= "\udcff" else repr(c)[1:-1] for c in path)


LONGEST_NAME = 255  # no file's name is longer (NAME_MAX): a longer path the system refused is cut short in its line


def refused(path: str) -> str:
    """A path the system refused as a line names it: printed, or cut short as certify.errors.shown cuts it (its repr,
    40 characters and its length) when longer than any file's name, as `certify verify` names one: a path of 100 kB
    made a line of 100 kB."""
    return printed(path) if len(path) <= LONGEST_NAME else f"{repr(path)[:40]}... ({len(repr(path))} characters)"


def _head(handle, count: int) -> bytes:
    """The first `count` bytes of a binary file, or all of it when shorter, read in pieces: handle.read(count) made a
    buffer of `count` bytes first, whatever the file's length (--limit bytes=1e12 was out of memory, 1e29 an error).
    certify.core.files.head is its twin: the checker imports nothing of certify."""
    pieces = []
    while count > 0 and (piece := handle.read(min(count, 1 << 24))):
        pieces.append(piece)
        count -= len(piece)
    return b"".join(pieces)


def _advised(message: str) -> str:
    """A refusal's message with its advice naming the command run (ADVICE names `certify verify`)."""
    return message.replace(ADVICE, "`python -m certify_checker --limit")


def main(argv: list[str]) -> int:
    getattr(sys.stdout, "reconfigure", lambda **_: None)(errors="surrogateescape")  # a non-UTF-8 path prints back
    try:
        parsed = arguments(argv)
    except ValueError as err:
        print(f"certify_checker: error: {err} ({USAGE})", file=sys.stderr)
        return 2
    if parsed is None:
        print(__doc__.strip())
        return 0
    (paths, limits), worst = parsed, 0
    for path in paths:
        name = printed(path)
        try:
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):  # a campaign's folder: `certify verify` re-derives one, the checker reads files
                raise Unreadable("a folder, not a certificate (a campaign folder is checked by certify verify FOLDER)")
            if not stat.S_ISREG(mode):  # opening a pipe without a writer waits for ever
                raise Unreadable("a device, a pipe or a socket, not a certificate (a regular file)")
            with open(path, "rb") as handle:
                data = _head(handle, limits.bytes + 1)
            cert = load(data, limits)
            if not (isinstance(cert, dict) and cert.get("format") == FORMAT):  # unreadable, as for `certify verify`
                raise Unreadable(f"not a certify certificate (format {FORMAT!r} expected)")
        except OSError as err:
            print(f"certify_checker: error: cannot read {refused(path)}: {err.strerror or err}", file=sys.stderr)
            return 2
        except Unreadable as err:
            print(f"certify_checker: error: {name}: {_advised(str(err))}", file=sys.stderr)
            return 2
        confirmation = verify(cert, limits)
        if confirmation.refused:
            print(f"certify_checker: error: {name}: {_advised(confirmation.message)}", file=sys.stderr)
            return 2
        print(f"{'OK' if confirmation.ok else 'REJECTED'}: {name}: {confirmation.message}")
        worst = max(worst, 0 if confirmation.ok else 1)
    return worst


def guarded(argv: list[str]) -> int:
    """main, with any unexpected exception reported as an internal error (exit 4), never as a verdict."""
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP):  # one ignored on purpose (nohup) stays so
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, _stop)
        return main(argv)
    except KeyboardInterrupt:
        name = "" if _received[0] == signal.SIGINT else f" ({signal.Signals(_received[0]).name})"
        print(f"certify_checker: interrupted{name}", file=sys.stderr)
        return 128 + _received[0]  # the shell's status for the signal: 130, 143 or 129, never a verdict's
    except MemoryError:
        print("certify_checker: error: out of memory (see certify_checker.limits)", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - the last line of defence
        detail = " ".join(f"{type(err).__name__}: {err}".split())[:300]
        print(f"certify_checker: internal error ({detail}); this is a bug in the checker, not a verdict: please "
              "report it with the certificate file", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # `python -m certify_checker`; its functions importable
    sys.exit(guarded(sys.argv[1:]))
