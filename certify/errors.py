"""The exceptions that reach the user, and how a message quotes what the user gave.

Everything raised as BadInput reaches the user as a single line on stderr and exit code 2, an
Interrupted as one line and exit 130 (143 or 129 when SIGTERM or SIGHUP stopped it: certify.signals; see
certify.cli), a KilledFromOutside as one line and exit 4; anything else escaping is a bug in certify.
"""

import itertools

MOST_KEYS_SHOWN = 10  # a message lists this many unknown keys, then their count


class BadInput(ValueError):
    """Malformed, inconsistent or out-of-range input: reported, never a verdict.  Its message is one line
    (one_line), as the command line prints it: a path given with a newline in it ("d<newline>x/c.json: not valid
    JSON") split the message a caller of the Python API was given in two."""

    def __init__(self, message: str = ""):
        super().__init__(one_line(str(message)))


def one_line(message: str) -> str:
    """message with every character that does not print (a newline, a terminal escape) written as Python escapes
    it: refusals name files as given, and a file named "a<newline>b" split the one line of its refusal in two,
    the second one certify never wrote."""
    if message.isprintable():
        return message
    # in C but for each distinct character that does not print: a character at a time in Python, 20 MB took 2 s
    return message.translate({ord(c): repr(c)[1:-1] for c in itertools.filterfalse(str.isprintable, set(message))})


class CertainlyUndefined(BadInput):
    """Something certainly undefined at the configuration it is evaluated at, which no precision changes: bad input
    for one configuration; a campaign or an attack, which evaluate many, record such a point as undecided (or leave it
    unscored) and go on."""


class UndefinedBound(CertainlyUndefined):
    """A bound certainly undefined at the configuration it is evaluated at (log(0), a division by zero)."""


class UndefinedLayer(CertainlyUndefined):
    """A layer certainly undefined on its input: LayerNorm of a token whose norm (sphere), or variance with eps = 0
    (standard), is exactly 0."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) during work whose part done is kept or reported (a campaign, a region proof, an attack): its
    message says where that part is and, where it can be, how to continue it (certify.cli prints it on
    the one line of an interruption)."""


class KilledFromOutside(Exception):
    """A worker process of the command killed by a signal from outside certify (SIGKILL: the system's out-of-memory
    killer, a memory limit, kill -9), which stopped the work it ran: no verdict, and no bug of certify either.  Its
    message is one line saying so; the command exits as for an internal error (4), the code that says "no verdict"
    and that a caller already handles."""


def shown(value) -> str:
    """A value as a message quotes it: its repr, cut short when long (a message is one readable line, not
    the 100 kB string a file may hold)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def keys_shown(keys) -> str:
    """Unknown keys as a message lists them: sorted, as few_shown lists words."""
    return few_shown(sorted(keys), ", ")


def few_shown(words: list[str], separator: str) -> str:
    """Words a message lists (unknown keys, unrecognized arguments): each as given when printable and short, else
    quoted by shown (a key "a\\nb" broke the one line of its message in two), at most MOST_KEYS_SHOWN of them and their
    count (a million keys made a line of 26 MB)."""
    listed = [word if word.isprintable() and len(word) <= 60 else shown(word) for word in words[:MOST_KEYS_SHOWN]]
    return separator.join(listed) + (f"{separator}... ({len(words)} in all)" if len(words) > MOST_KEYS_SHOWN else "")


def counted(count: int, noun: str) -> str:
    """"1 row", "2 rows": a count and its noun, singular for one (a message said "the mask has 1 rows")."""
    plural = noun[:-1] + "ves" if noun.endswith("f") else noun + ("es" if noun.endswith(("s", "x")) else "s")
    return f"{count} {noun if count == 1 else plural}"


def did_you_mean(word, choices) -> str:
    """"did you mean X? " for the choice closest to a misspelt word (difflib), else "": how a refusal of an unknown
    name (command, claim, section) begins its hint."""
    import difflib  # here: only a refusal needs it, not every command's start

    word, choices = str(word), list(choices)
    # difflib's least ratio, 0.6, needs 2 len(choice) / (len(word) + len(choice)) >= 0.6: a longer word is close to no
    # choice, and difflib indexed it a character at a time in Python (a claim of 20 MB: some 5 s)
    if 3 * len(word) > 7 * max(map(len, choices), default=0):
        return ""
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean {close[0]}? " if close else ""
