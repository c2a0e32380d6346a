"""Working precision of the ball arithmetic, in bits: where adaptive precision starts, its
default cap, and the largest cap a user may ask for."""

START_PRECISION = 53
DEFAULT_MAX_PRECISION = 1 << 16
PRECISION_LIMIT = 1 << 20  # beyond this a request is absurd, not ambitious
