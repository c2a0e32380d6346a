"""The whole numbers (a count, a size, a seed, a precision) and the flags of the Python API as Python values, and
the refusal of options (or arguments) given where they would do nothing, of the commands and the API alike."""

from __future__ import annotations

import contextlib
import numbers
import operator
import re
from dataclasses import dataclass

from certify.errors import BadInput


def integer(value, option: str) -> int:
    """value as a Python int, or BadInput naming the option and the value.

    A numpy integer is its integer (np.arange gives them; kept as they are, one reached a manifest that JSON
    cannot write); a float, even 2.0, a string or None is refused (2.0 tokens reached a proof's certificate,
    which the checker refused); a bool is no number, as in JSON."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # int and numpy integers; numpy's bool refuses it too
        except TypeError:
            pass
    raise BadInput(f"{option} must be an integer, got {value!r}")


def real(value, option: str) -> float:
    """value as a Python float (a numpy number included), or BadInput naming the option and the value: a string
    or None raised TypeError where it was compared; a bool is no number."""
    if not isinstance(value, bool) and isinstance(value, numbers.Real):  # numpy's numbers are registered Reals
        return float(value)
    raise BadInput(f"{option} must be a number, got {value!r}")


def flag(value, option: str) -> bool:
    """value as a Python bool (numpy's included), or BadInput naming the option and the value: read as true
    or false by its truth, restart="no" discarded a campaign and residual="no" made a residual layer."""
    kind = type(value)
    if kind is bool or kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"):  # numpy not imported
        return bool(value)
    raise BadInput(f"{option} must be true or false, got {value!r}")


def callback(value, keyword: str):
    """value as a function to call as the work advances, or None (False too: no calls), or BadInput naming the
    API's keyword (progress=, as its other refusals name keywords; no command takes a function) and the value:
    progress=True, as certify.sample takes it, reached the first call deep in the work as "'bool' object is not
    callable"."""
    if value is None or value is False:
        return None
    if callable(value):
        return value
    raise BadInput(f"{keyword}= must be a function (or None), got {value!r}")


def option_of(keyword: str) -> str:
    """The command's option for an API keyword, where it has no name of its own: max_prec is --max-prec."""
    return f"--{keyword.replace('_', '-')}"


@dataclass(frozen=True)
class Spelling:
    """How a caller writes the options of a job, so that a refusal written once names them in its reader's words: a
    command's (--all, --sample 0) or the Python API's keywords (everything=True, sample=0)."""

    names: dict[str, str]  # an option's keyword -> as the caller writes it: "--all" or "everything=True"
    assign: str  # between a name and its value: "--sample 0", "sample=0"

    @classmethod
    def command(cls, keywords, **named: str) -> Spelling:
        """A command's spelling of `keywords`: option_of each (--max-prec), or as `named` gives it."""
        return cls({keyword: named.get(keyword, option_of(keyword)) for keyword in keywords}, assign=" ")

    @classmethod
    def keywords(cls, keywords, flags=()) -> Spelling:
        """The Python API's spelling of `keywords`: max_prec=; a flag among them as set, restart=True (a refusal
        that tells the caller to pass it, where the command says --restart)."""
        return cls({keyword: f"{keyword}=True" if keyword in flags else f"{keyword}=" for keyword in keywords},
                   assign="")

    def __call__(self, keyword: str) -> str:
        return self.names[keyword]

    def option(self, keyword: str) -> str:
        """The option `keyword` as the caller names it where its value is refused: "--all", "--sample", or the
        keyword alone, "everything=" (not "everything=True", a value it may not have been given), "sample="."""
        written = self.names[keyword]
        return written if self.assign else written.partition("=")[0] + "="

    def given(self, keyword: str, value) -> str:
        """The option `keyword` given `value`, as the caller writes it."""
        return f"{self.names[keyword]}{self.assign}{value}"

    def respelled(self, text: str, command: Spelling) -> str:
        """`text`, written once in the `command`'s words (an undecided check's reason, a limit's refusal: records and
        certificates keep them, whichever ran the job), in this spelling's: "raise --max-prec" told a caller of
        certify.check to raise an option it has no way to give (max_prec=).  A limit raised is a Limits'
        (limits=Limits(work=N)), and the command `certify verify` the function certify.verify; another command
        quoted (`certify model --corpus`, the kind of a folder) keeps its words."""
        for pattern, words in _LIMIT_WORDS:
            text = re.sub(pattern, words, text)
        parts = re.split(r"(`[^`]*`)", text)  # the odd ones quoted
        return "".join(part if k % 2 else self._respelled(part, command) for k, part in enumerate(parts))

    def _respelled(self, text: str, command: Spelling) -> str:
        options = [k for k in command.names if command.names[k].startswith("--")]  # not a word: "interruptible"
        for keyword in sorted(options, key=lambda k: -len(command.names[k])):  # --d-k before --d
            # not within a word or a path (run--all.json, ./--all.json): a path given is shown as given
            text = re.sub(rf"(?<![\w./-]){re.escape(command.names[keyword])}(?![\w-])", self.names[keyword], text)
        return text

    @contextlib.contextmanager
    def respelling(self, command: Spelling):
        """BadInput raised inside, its message respelled from the `command`'s words."""
        try:
            yield
        except BadInput as err:
            raise type(err)(self.respelled(str(err), command)) from None


# how the texts of the commands say to raise a limit (certify.core.limits, the checker's ADVICE), and the Python API's
_LIMIT_WORDS = ((r"`certify verify --limit (\w+)=(\w+)`", r"limits=Limits(\1=\2) on certify.verify"),
                (r"--limit (\w+)=(\w+)", r"limits=Limits(\1=\2)"),
                # quoted alone, its backticks go with it; quoted with more words, both stay (a quote is kept)
                (r"`certify verify`|certify verify", "certify.verify"))


def workers_option(names: Spelling) -> str:
    """The workers as the process pool's refusal of their number names them: the API's keyword (workers=), and for
    a command "workers", the words its refusal has always had ("workers must be from 1 to 8 ...")."""
    return "workers" if names.assign else names.option("workers")


def refuse_unused(given: list[str], applies: str) -> None:
    """Options given where they would do nothing are refused, in one line: "--window goes with the sliding and uni
    masks", "--all and --workers go with a campaign folder" (`applies` completes it)."""
    if given:
        raise BadInput(f"{' and '.join(given)} {'goes' if len(given) == 1 else 'go'} with {applies}")
