"""The three verdicts of a claim on a configuration, and the exit code each one means."""

HOLDS, VIOLATED, UNDECIDED = "holds", "violated", "undecided"
EXIT_CODES = {HOLDS: 0, VIOLATED: 1, UNDECIDED: 3}
