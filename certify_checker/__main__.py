"""`python -m certify_checker CERT [CERT ...]`: re-verify certificates with the trusted checker alone.

Exit codes as `certify verify`: 0 every certificate confirmed, 1 one rejected, 2 one unreadable or
beyond the checker's limits (certify_checker.limits), 4 an internal error of the checker (a bug,
never a verdict), 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP).
"""

import signal
import sys

from certify_checker import FORMAT, Unreadable, load, verify
from certify_checker.limits import LIMITS

EXIT_INTERNAL_ERROR = 4
_received = [signal.SIGINT]  # the stopping signal received last: Ctrl-C unless SIGTERM or SIGHUP came


def _stop(signum, _frame) -> None:
    """SIGTERM and SIGHUP (a batch system's stop, a closed terminal) end the run as Ctrl-C does, not silently."""
    _received[0] = signum
    raise KeyboardInterrupt


def main(paths: list[str]) -> int:
    getattr(sys.stdout, "reconfigure", lambda **_: None)(errors="surrogateescape")  # a non-UTF-8 path prints back
    if not paths:
        print("usage: python -m certify_checker CERT [CERT ...]", file=sys.stderr)
        return 2
    worst = 0
    for path in paths:
        try:
            with open(path, "rb") as handle:
                data = handle.read(LIMITS.bytes + 1)
            cert = load(data, LIMITS)
            if not (isinstance(cert, dict) and cert.get("format") == FORMAT):  # unreadable, as for `certify verify`
                raise Unreadable(f"not a certify certificate (format {FORMAT!r} expected)")
        except OSError as err:
            print(f"certify_checker: error: cannot read {path}: {err.strerror or err}", file=sys.stderr)
            return 2
        except Unreadable as err:
            print(f"certify_checker: error: {path}: {err}", file=sys.stderr)
            return 2
        confirmation = verify(cert, LIMITS)
        if confirmation.refused:
            print(f"certify_checker: error: {path}: {confirmation.message}", file=sys.stderr)
            return 2
        print(f"{'OK' if confirmation.ok else 'REJECTED'}: {path}: {confirmation.message}")
        worst = max(worst, 0 if confirmation.ok else 1)
    return worst


def guarded(paths: list[str]) -> int:
    """main, with any unexpected exception reported as an internal error (exit 4), never as a verdict."""
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP):  # one ignored on purpose (nohup) stays so
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, _stop)
        return main(paths)
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


sys.exit(guarded(sys.argv[1:]))
