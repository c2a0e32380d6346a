"""The three verdicts of a claim on a configuration, the exit code each one means, how an output labels a
verdict the checker did not confirm, and how a result object shows itself in one short line."""

HOLDS, VIOLATED, UNDECIDED = "holds", "violated", "undecided"
EXIT_CODES = {HOLDS: 0, VIOLATED: 1, UNDECIDED: 3}
REPR_LIMIT = 199  # a result's repr stays one readable line in a notebook
NOT_CERTIFIED = "not certified"  # how an output marks what the independent checker did not confirm


def labelled(verdict: str, confirmed: bool) -> str:
    """A verdict as an output shows it: itself once the checker confirmed it, else marked "(not certified)",
    so that no text or JSON reads an unconfirmed verdict as one."""
    return verdict if confirmed else f"{verdict} ({NOT_CERTIFIED})"


def short_repr(head: str, detail: str = "") -> str:
    """<certify HEAD: detail> (HEAD such as "holds" or "trajectory holds"), the detail clipped with "..."
    so that the whole has at most REPR_LIMIT characters (a long bound or reason stays in the result's fields)."""
    head = f"<certify {head}"
    if not detail:
        return head + ">"
    room = REPR_LIMIT - len(head) - len(": >")
    if len(detail) > room:
        detail = detail[:max(room - 3, 0)].rstrip() + "..."
    return f"{head}: {detail}>"
