"""What the checker's limits leave a region proof: a meter that stops the search before its certificate would
pass them, and refuses before any work when not even the first box fits.

The checker prices a region proof's replay from its bisection tree and its leaves' precisions and methods
(certify_checker.region_proof.work, asked through certify.engine.certificate: never a copy of it), and
`certify prove` has it confirm the certificate under the same limits.  Deciding one more box adds at most two
symbols to the tree (a split: the box's "?" becomes its axis and two open halves) or one leaf at the top of the
precision ladder by the dearest test (a closing), and the estimate never falls as a certificate grows.  So before
a box is decided, the meter asks whether the certificate with the next m boxes at that worst still fits; to stay
cheap on long searches it asks for m of about the boxes decided so far (halved until it fits), and asks again
only when those m are spent: a search stopped by the meter writes a certificate the checker accepts, and states
which limit stopped it and how to raise it.
"""

from __future__ import annotations

from certify.core.limits import Limits, raised_with
from certify.engine import certificate


class Meter:
    """A region proof's certificate as the checker prices it: the tree's length and the leaves' precisions and
    methods so far."""

    def __init__(self, stated: dict, limits: Limits, top: int, tree: str = "?", closings: tuple = (), text=None):
        self.stated = stated  # what the checker's estimate reads besides tree and leaves: kind, region, bound
        self.limits, self.top = limits, top
        # Under a user's limits the checker reads the certificate as the text written (certificate.confirm), longer
        # than its measure of the skeleton's tree: (written, growth), functions giving the bytes of that text so far
        # and the most bytes m more boxes add to it; None under the defaults.
        self.text = text
        self.symbols, self.closings = len(tree), list(closings)  # (precision, method) of each leaf
        self.ahead = 0  # boxes already known to fit
        self._leaves: dict[tuple, dict] = {}  # one leaf per precision and method, shared by every skeleton

    def split(self) -> None:
        """Count a box split: its symbol and two open halves."""
        self.symbols += 2

    def closed(self, precision: int, method: str) -> None:
        """Count a box closed at `precision` by `method`: one leaf (the checker prices its test by its method)."""
        self.closings.append((precision, method))

    def admits(self) -> bool:
        """Whether the next box may be decided: the certificate fits the limits whatever it becomes (reason() if not)."""
        if self.ahead > 0:
            self.ahead -= 1
            return True
        m = max(1, (self.symbols - 1) // 2 + len(self.closings))  # about the boxes decided so far
        written = self.text[0]() if self.text else 0
        while certificate.checker_refusal(self._skeleton(m), self.limits) is not None or self._past_bytes(written, m):
            if m == 1:
                return False
            m //= 2
        self.ahead = m - 1
        return True

    def _past_bytes(self, written: int, boxes: int) -> bool:
        """Whether the text written, with `boxes` more boxes at their dearest, passes the checker's byte limit."""
        return self.text is not None and written + self.text[1](boxes) > self.limits.bytes

    def reason(self, quote: bool = True) -> str:
        """Which limit the next box's certificate passes once admits() said no, and how to raise it; quote: with the
        checker's estimate (certify.engine.certificate.checker_limit: not where the search stopped, which passes
        the limit by a hair)."""
        return (certificate.checker_limit(self._skeleton(1), self.limits, quote=quote)
                or f"the checker's bytes limit of {self.limits.bytes:.3g} (its text as written): raise it with "
                   f"{raised_with(['bytes'])}")

    def _skeleton(self, boxes: int) -> dict:
        """What the checker's estimate reads of the certificate with `boxes` more boxes decided at their dearest (at
        the top precision, stating no method: the checker prices such a leaf as its dearest test)."""
        leaves = [self._leaf(*closing) for closing in self.closings] + [self._leaf(self.top)] * boxes
        return self.stated | {"tree": "?" * (self.symbols + 2 * boxes), "leaves": leaves}

    def _leaf(self, precision: int, method: str | None = None) -> dict:
        # with a box nested as a leaf's is: without it, a nesting limit that no leaf fits let the search run to its end
        leaf = {"box": [["0", "1"]], "precision": precision} | ({"method": method} if method else {})
        return self._leaves.setdefault((precision, method), leaf)
