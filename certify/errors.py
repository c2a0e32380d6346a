"""The one exception that means "the user's input is wrong".

Everything raised as BadInput reaches the user as a single line on stderr and exit code 2
(see certify.cli); anything else escaping is a bug in certify.
"""


class BadInput(ValueError):
    """Malformed, inconsistent or out-of-range input: reported, never a verdict."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during resumable work: its message says where the work done so far is kept and how to
    continue it (certify.cli prints it on the one line of an interruption)."""
