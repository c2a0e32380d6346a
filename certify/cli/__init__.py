"""The `certify` command line: a thin shell over the Python API.

Each subcommand lives in its own module of this package and exposes
    add_parser(subparsers)   -> registers its argparse sub-parser
    run(args) -> int         -> the exit code
Exit codes are a public contract: 0 holds / ok, 1 violated / not ok, 2 bad input or usage,
3 undecided.  Bad input is raised as certify.errors.BadInput anywhere below and becomes one
line on stderr here.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from certify.errors import BadInput

# Order is the order of `certify --help`.
COMMANDS = [
    "run",
    "check",
    "verify",
    "prove",
    "claims",
    "proofs",
    "sample",
    "attack",
    "trajectory",
    "init",
    "counterexample",
    "graph",
    "reproduce",
    "model",
]

EXIT_OK, EXIT_VIOLATED, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse hook
        raise BadInput(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="certify", description="Rigorous certification of the mathematics of iterated "
                     "self-attention: ball arithmetic verdicts (holds, violated, undecided) with certificates "
                     "that an independent checker re-verifies. Exit codes: 0 holds/ok, 1 violated, 2 bad input, "
                     "3 undecided.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMANDS:
        module = importlib.import_module(f"certify.cli.{name}")
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except BadInput as err:
        print(f"certify: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        print(f"certify: error: not valid JSON: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"certify: error: {err.strerror or err}: {err.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("certify: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())
