"""The one exception that means "the user's input is wrong".

Everything raised as BadInput reaches the user as a single line on stderr and exit code 2
(see certify.cli); anything else escaping is a bug in certify.
"""


class BadInput(ValueError):
    """Malformed, inconsistent or out-of-range input: reported, never a verdict."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during work whose part done is kept or reported (a campaign, a region proof, an attack): its
    message says where that part is and, where it can be, how to continue it (certify.cli prints it on
    the one line of an interruption)."""
