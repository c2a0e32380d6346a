"""`python -m certify` and the `certify` command (pyproject's entry point): the command line, loaded so that a
Ctrl-C, SIGTERM or SIGHUP while it loads (flint and the commands: a tenth of a second or more; numpy loads with
the command that reads or makes a matrix, where signals.caused tells its failed import apart) ends as one during a
command does, with one line and the signal's status (130, 143, 129), not with Python's traceback
of the import it landed in (or, for SIGTERM, silently).  So does one in the instant between the command's end
and the process's exit, outside what certify.cli catches."""

import sys

from certify import signals  # light: the standard library's signal module only


def entry() -> None:
    """Load the command line and run it (certify.cli.entry exits with its code)."""
    signals.install()
    try:
        # a signal while the modules load interrupts once they have: raised inside an extension's initialisation
        # it became numpy's ImportError (a traceback, exit 1), or Python's exit by SIGINT after the line said 143
        with signals.deferred():
            from certify.cli import entry as run
        run()
    except KeyboardInterrupt:
        print(signals.interrupted_line(), file=sys.stderr)
        sys.exit(signals.exit_code())


if __name__ == "__main__":
    entry()
