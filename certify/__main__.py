"""`python -m certify` and the `certify` command (pyproject's entry point): the command line, loaded so that a
Ctrl-C while it loads (numpy, flint and the commands: a tenth of a second or more) ends as one during a command
does, with one line and exit 130, not with Python's traceback of the import it landed in."""

import sys

INTERRUPTED = 130  # the shell's status for SIGINT, 128 + 2 (certify.cli.EXIT_INTERRUPTED, not loaded yet here)


def entry() -> None:
    """Load the command line and run it (certify.cli.entry exits with its code)."""
    try:
        from certify.cli import entry as run
    except KeyboardInterrupt:
        print("certify: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    run()


if __name__ == "__main__":
    entry()
