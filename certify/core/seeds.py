"""The seed of a study's or a search's random generator, as a user gives it (--seed)."""

from __future__ import annotations

from certify.errors import BadInput


def checked(seed, option: str = "--seed") -> int:
    """seed, or BadInput naming the `option` unless it is a non-negative integer (numpy's generators take no
    negative seed; a bool is no seed)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BadInput(f"{option} must be a non-negative integer, got {seed!r}")
    return seed
