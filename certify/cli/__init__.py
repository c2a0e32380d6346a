"""The `certify` command line: a thin shell over the Python API.

Each subcommand lives in its own module of this package and exposes
    add_parser(subparsers)   -> registers its argparse sub-parser
    run(args) -> int         -> the exit code
Exit codes are a public contract: 0 holds / ok, 1 violated / not ok, 2 bad input or usage,
3 undecided, 4 internal error, 130 interrupted (Ctrl-C; a resumable command says how to go on), 143 and 129
when SIGTERM or SIGHUP stopped it the same way.
Bad input is raised as certify.errors.BadInput anywhere below and becomes one line on stderr here.
Any other exception is a bug in certify: it becomes one line naming the command and what a bug
report needs, and exit code 4, never a verdict's code.  A worker process killed from outside certify
(certify.errors.KilledFromOutside: the out-of-memory killer) exits 4 too, its line saying so, not calling it a bug.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import json
import os
import re
import sys
from pathlib import Path

# One BLAS thread unless the caller chose otherwise (before anything loads numpy): the commands'
# float64 work (screens, the SVDs of norm witnesses) is small next to arb's, while OpenBLAS starts
# a thread per core when it loads (0.1 s of wall time, more on a busy machine) whose spinning
# takes the cores the arb work needs.  Campaign workers limit BLAS to one thread as well.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import certify  # noqa: E402  (after the BLAS setting, like every import that may load numpy)
from certify import errors, signals  # noqa: E402
from certify.cli import options  # noqa: E402
from certify.core import files, progress  # noqa: E402
from certify.errors import BadInput, KilledFromOutside, did_you_mean, one_line, shown  # noqa: E402

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
    "completion",
]

# The most words that look like options (a dash first, before "--") a command line may hold: argparse looks for the
# next option among all of them at each one, in time that grows with their square (20,000 took 10 s, the 180,000 a
# command line holds some minutes), where a command takes some tens.
MOST_OPTIONS = 1000
OWN_OPTIONS = ("--help", "--version")  # the options of `certify` itself, before any command

# The verdicts' exit codes (0 holds, 1 violated, 3 undecided) are certify.core.verdicts.EXIT_CODES.
EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR = 2, 4
# A reader that stopped reading (`certify model --screen | head -1`) is not bad input: the shell's
# status for a process ended by SIGPIPE, 128 + 13, and nothing on stderr.
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse takes "-1" and "-0.5" as values but "-1e3", "-1." and "-inf" as unknown options, so that
        # `--seed -1e3` said "expected one argument" where `--seed -1000` says what is wrong with the value: every
        # negative decimal (and -inf, -nan) is a value, for the number rules to judge (no option starts so)
        self._negative_number_matcher = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$|^-(?:inf|infinity|nan)$",
                                                   re.IGNORECASE)

    def error(self, message):  # noqa: D401 - argparse hook
        # main() prefixes "certify: error:"; the parser's own name would say "certify" twice
        raise BadInput(f"{message}{self._joined_hint(message)} (see `{self.prog} --help`)")

    def _joined_hint(self, message: str) -> str:
        """How to give an option a value that begins with "-" (--bound "-D+2*D" said only "expected one argument",
        argparse taking the value for an option), when that is what the command line did."""
        option = re.fullmatch(r"argument (-[\w-]+)(?:/[\w/-]+)?: expected one argument", message)
        argv = getattr(self, "_argv", None) or []
        following = argv[argv.index(option.group(1)) + 1] if option and option.group(1) in argv[:-1] else ""
        if following.startswith("-") and following.split("=")[0] not in self._option_string_actions:
            return f" (a value that begins with '-' is written joined to its option: {option.group(1)}=VALUE)"
        return ""

    def parse_known_args(self, args=None, namespace=None):
        # a command's parser refuses what it does not know itself: argparse left the extras to the top parser,
        # whose message sent the user to `certify --help` rather than to the command's
        self._argv = list(sys.argv[1:] if args is None else args)  # for _joined_hint
        self._given = {}  # dest -> the action that set it, for _once
        ended = self._argv.index("--") if "--" in self._argv else len(self._argv)
        if (options := sum(word[:1] == "-" and word != "-" for word in self._argv[:ended])) > MOST_OPTIONS:
            self.error(f"{options} options on one command line, more than any command takes ({MOST_OPTIONS} at most)")
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            unknown = f"unrecognized arguments: {errors.few_shown(extras, ' ')}"
            if not _has_subcommands(self):
                self.error(unknown)
            # a parser of named kinds (counterexample NAME): NAME's parser refuses what follows NAME, so these came
            # before it, where the top parser's words sent the user to `certify --help` for an option NAME takes
            name = _subcommands(self).metavar
            raise BadInput(f"{unknown} before {name}: options come after it (see `{self.prog} {name} --help`)")
        return parsed, extras

    def _check_value(self, action, value):
        # argparse lists the choices and suggests none: `counterexample residual_far` and `reproduce wu-fig` were
        # refused without the name meant, as a misspelt command or claim is not
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}; {did_you_mean(value, action.choices)}"
                                                 f"choose from {choices}")
        super()._check_value(action, value)

    def _get_values(self, action, arg_strings):
        # Python 3.11's argparse drops the value of "--opt=--" and gives the option an empty list: --max-prec
        # crashed on it, --out=-- wrote nothing and --claim=-- checked the default claim
        if action.option_strings and arg_strings == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, not '--'")
        if action.option_strings:
            self._once(action)
        return super()._get_values(action, arg_strings)

    def _once(self, action) -> None:
        """An option given a second time is refused: argparse kept the last value silently (`--precision 64
        --precision 128`, `--out a --out b`), where a result must follow from the command line as written.  The
        options meant to repeat append (--limit, whose names Limits.changed holds to once each, and run's --only);
        an old spelling (options.alias) sets its option's dest, so it counts as that option; two options of a
        mutually exclusive group are left to argparse's own refusal ("not allowed with")."""
        if isinstance(action, (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction)):
            return
        earlier = self._given.get(action.dest)
        if earlier is None:
            self._given[action.dest] = action
            return
        if earlier is not action and any(earlier in group._group_actions and action in group._group_actions
                                         for group in self._mutually_exclusive_groups):
            return
        shown = earlier if earlier.help != argparse.SUPPRESS else action  # the option, not its old spelling
        self.error(f"argument {'/'.join(shown.option_strings)}: given more than once; give it once")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `only` one (a command imports what it needs when its
    module is imported, so `certify check` does not pay for plotting or optimisation libraries)."""
    parser = _Parser(prog="certify", description="Rigorous certification of the mathematics of iterated "
                     "self-attention: ball arithmetic verdicts (holds, violated, undecided) with certificates "
                     "that an independent checker re-verifies. Exit codes: 0 holds/ok, 1 violated, 2 bad input, "
                     "3 undecided, 4 internal error (a bug: please report it), 130 interrupted (Ctrl-C; 143 SIGTERM, "
                     "129 SIGHUP).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parser.add_argument("--version", action="version", version=f"certify {certify.__version__}")
    subparsers.required = True
    for name in [only] if only in COMMANDS else COMMANDS:
        module = importlib.import_module(f"certify.cli.{name}")
        module.add_parser(subparsers)
    for command in _commands(parser):
        options.add_output(command)
    return parser


def _commands(parser: argparse.ArgumentParser):
    """Every parser that runs something: the commands and the sub-commands (counterexample NAME)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from (_commands(sub) if _has_subcommands(sub) else [sub])


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((action for action in parser._actions if isinstance(action, argparse._SubParsersAction)), None)


def _has_subcommands(parser: argparse.ArgumentParser) -> bool:
    return _subcommands(parser) is not None


def main(argv: list[str] | None = None) -> int:
    """Run the `certify` command line on `argv` (default sys.argv[1:]) and return the exit code: 0 holds/ok, 1
    violated, 2 bad input or usage (one line on stderr), 3 undecided, 4 internal error, 130 when interrupted
    (143 by SIGTERM, 129 by SIGHUP), 141 when stdout's reader has gone."""
    argv = sys.argv[1:] if argv is None else argv
    for name in ("stdout", "stderr"):  # a stream closed by the shell (`>&-`) is None: what is written to it is lost,
        if getattr(sys, name) is None:  # as print() loses it, where a write or flush was an internal error
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    # "--" before the command ends certify's own options (POSIX): the command follows it (argparse took "--" for
    # a command, "invalid choice: '--'"), and what follows is a command even when it starts with a dash
    options_ended = argv[:1] == ["--"]
    argv = argv[1:] if options_ended else argv
    # Bytes of a command line that are not UTF-8 (a file name) reach Python as lone surrogates: printed back
    # they are those bytes again, where a strict stdout (a UTF-8 locale, PYTHONIOENCODING) raised
    # UnicodeEncodeError after the work was done, an internal error
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="surrogateescape")
    if not argv:  # a bare `certify`: its usage, as a usage error
        _say(build_parser().format_usage().rstrip())
        _say("certify: error: give a command (certify --help lists them)")
        return EXIT_BAD_INPUT
    try:
        with signals.handled():  # SIGTERM and SIGHUP stop a command as Ctrl-C does (certify.signals)
            _known_command(argv[0], options_allowed=not options_ended)
            args = build_parser(only=argv[0] if argv else None).parse_args(argv)
            args.argv = argv  # the command line, for the report pages (certify.report.environment)
            if hasattr(args, "figure_format"):
                options.check_figures(args)
            progress.configure(args.progress)
            code = args.run(args)
            sys.stdout.flush()  # output buffered for a pipe meets a closed pipe here, not at exit
            return code
    except BrokenPipeError:
        return _reader_gone()
    except BadInput as err:
        _say(f"certify: error: {cut_quoted(str(err))}")  # one line already (BadInput)
        return EXIT_BAD_INPUT
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        _say(f"certify: error: not valid JSON: {one_line(str(err))}")
        return EXIT_BAD_INPUT
    except OSError as err:
        _say(f"certify: error: {one_line(os_error_line(err))}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as err:  # resumable work (certify.errors.Interrupted) says how to continue it
        _say(signals.interrupted_line(str(err)))
        return signals.exit_code()
    except MemoryError:
        _say("certify: error: out of memory; lower the sizes or the precision (see the limits in "
             "`certify check --help`)")
        return EXIT_BAD_INPUT
    except KilledFromOutside as err:  # no verdict, as after an internal error, but no bug of certify to report
        _say(f"certify: {one_line(str(err))}")
        return EXIT_INTERNAL_ERROR
    except Exception as err:  # noqa: BLE001 - the last line of defence: a bug never reads as a verdict
        if signals.caused(err):  # a signal while a module loaded (exit 4, "internal error", for a SIGTERM)
            _say(signals.interrupted_line())
            return signals.exit_code()
        _say(internal_error_line(argv, err))
        return EXIT_INTERNAL_ERROR


def _say(line: str) -> None:
    """One line on stderr; a stderr that takes no writing (closed by the shell, `2>&-`, and its descriptor taken
    by a file opened read-only) loses the line, not the exit code: the OSError left main and Python exited 1,
    which reads as "violated"."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # nothing left for the interpreter's last flush


def cut_quoted(message: str) -> str:
    """message with every value quoted whole cut short as certify.errors.shown cuts it: argparse ("invalid
    choice: '...'") and many refusals ("unknown claim '...'") quote the value given, which made a line of
    100 kB of a 100 kB argument.  Only a quoted value: the quote of a value already cut short (shown), the
    apostrophe of a word after it ("option's") and the text between two empty values ('') are not one."""
    return re.sub(r"(?<![\w'])'([^'\n]{60,})'(?![\w'])", lambda quoted: shown(quoted.group(1)), message)


def os_error_line(err: OSError) -> str:
    """What an OSError says to a user: the system's words and the path, and where the path is a file in place of
    a folder or the other way round (--out naming the wrong kind), that, in words that say so: the system's
    "File exists: out.json" did not say that out.json was in the way of a folder."""
    name = err.filename
    if name is not None and len(str(name)) > 255:  # longer than any file name ("File name too long"): cut short
        name = shown(str(name))
    if name is not None and err.errno in (errno.EEXIST, errno.ENOTDIR) and Path(name).is_file():
        return files.wrong_kind(name, folder_needed=True)
    if name is not None and err.errno == errno.ENOTDIR:
        return f"{name}: a part of the path is a file where a folder is needed (choose another path)"
    if name is not None and err.errno == errno.EISDIR:
        return files.wrong_kind(name, folder_needed=False)
    return f"{err.strerror or err}: {name or ''}".rstrip(": ")


def _known_command(word: str, options_allowed: bool = True) -> None:
    """A misspelt command is refused with the closest one (argparse lists them all, suggests none); an option
    before the command other than certify's own (-h, --help, --version) is refused as one: argparse said "the
    following arguments are required: COMMAND" to `certify -q check ...`.  After "--" (options_allowed False)
    only a command may come."""
    own = word == "-h" or word.startswith("--") and any(option.startswith(word) for option in OWN_OPTIONS)
    if word in COMMANDS or options_allowed and own:
        return
    if word.startswith("-") and options_allowed:
        raise BadInput(f"unknown option {word!r} before the command: a command comes first, its options after it "
                       "(`certify COMMAND --help` lists them)")
    raise BadInput(f"unknown command {word!r}; {did_you_mean(word, COMMANDS)}`certify --help` lists them: "
                   f"{', '.join(COMMANDS)}")


def _reader_gone() -> int:
    """stdout's reader has gone: point stdout at /dev/null so that the interpreter's last flush
    does not fail again, and end quietly with the shell's SIGPIPE status."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in-process)
        pass
    return EXIT_BROKEN_PIPE


def internal_error_line(argv: list[str], err: BaseException) -> str:
    """The one line of an internal error: the command, the exception, and what a bug report needs."""
    command = " ".join(["certify"] + [word for word in argv if word in COMMANDS][:1])
    detail = " ".join(f"{type(err).__name__}: {err}".split())[:300]
    return (f"certify: internal error in `{command}` ({detail}); this is a bug in certify, not a "
            "verdict: please report it with the full command line, its input files and `pip show certify`")


def entry() -> None:
    """The console-script entry point: exit the process with `main()`'s code."""
    sys.exit(main())
