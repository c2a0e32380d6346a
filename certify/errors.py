"""The one exception that means "the user's input is wrong".

Everything raised as BadInput reaches the user as a single line on stderr and exit code 2
(see certify.cli); anything else escaping is a bug in certify.
"""


class BadInput(ValueError):
    """Malformed, inconsistent or out-of-range input: reported, never a verdict."""


def shown(value) -> str:
    """A value as a message quotes it: its repr, cut short when long (a message is one readable line, not
    the 100 kB string a file may hold)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"
