"""What the checker's limits leave a region proof: a meter that stops the search before its certificate would
pass them, and refuses before any work when not even the first box fits.

The checker prices a region proof's replay from its bisection tree and its leaves' precisions and methods
(certify_checker.region_proof.work, asked through certify.engine.certificate: never a copy of it), and
`certify prove` has it confirm the certificate under the same limits.  Deciding one more box adds at most two
symbols to the tree (a split: the box's "?" becomes its axis and two open halves) or one leaf at the top of the
precision ladder by the dearest test (a closing), and the estimate never falls as a certificate grows.  So before
a box is decided, the meter asks whether the certificate with the next m boxes at that worst still fits; to stay
cheap on long searches it asks for m of about the boxes decided so far (where those do not fit, the most that the
checker's work estimate and the text leave room for, halved until they fit), and asks again only when those m are
spent: a few walks of the certificate a refill, however large a resumed proof.  A search stopped by the meter writes
a certificate the checker accepts, and states which limit stopped it and how to raise it.
"""

from __future__ import annotations

from certify.core.limits import Limits, raised_with
from certify.engine import certificate


class Meter:
    """A region proof's certificate as the checker prices it: the tree's length and the leaves' precisions and
    methods so far."""

    def __init__(self, stated: dict, limits: Limits, top: int, tree: str = "?", closings: tuple = (), *, text):
        self.stated = stated  # what the checker's estimate reads besides tree and leaves: kind, region, bound
        self.limits, self.top = limits, top
        # The checker reads the certificate as the text written (certificate.confirm, which measures the tree in its
        # place only under the defaults and where the text is certain to fit), longer than its measure of the
        # skeleton's tree: (written, growth), functions giving the bytes of that text so far and the most bytes m
        # more boxes add to it.
        self.text = text
        # The text's bytes as last measured (written() builds and writes the whole certificate: seconds for one of
        # 7 MB, measured at every refill, a resumed search of --time-limit 1 took 5 s), and the boxes decided since,
        # which growth bounds (_past_bytes).
        self._measured: int | None = None
        self._since = 0
        self.symbols, self.closings = len(tree), list(closings)  # (precision, method) of each leaf
        self.ahead = 0  # boxes already known to fit
        self._leaves: dict[tuple, dict] = {}  # one leaf per precision and method, shared by every skeleton

    def split(self) -> None:
        """Count a box split: its symbol and two open halves."""
        self.symbols += 2
        self._since += 1

    def closed(self, precision: int, method: str) -> None:
        """Count a box closed at `precision` by `method`: one leaf (the checker prices its test by its method)."""
        self.closings.append((precision, method))
        self._since += 1

    def admits(self) -> bool:
        """Whether the next box may be decided: the certificate fits the limits whatever it becomes (reason() if not)."""
        if self.ahead > 0:
            self.ahead -= 1
            return True
        m = max(1, (self.symbols - 1) // 2 + len(self.closings))  # about the boxes decided so far
        steered = False
        while not self._fits(m):
            if m == 1:
                return False
            # Each answer of the checker walks the whole certificate: halved from the boxes decided so far, a resumed
            # proof of 100,000 leaves near the work limit was walked 12 to 18 times (6 to 8 s) before its first box.
            # The most boxes its work and text leave room for (_most, one walk more) are tried first; the checker's
            # answer still decides.
            m = m // 2 if steered else max(1, min(m - 1, self._most()))
            steered = True
        self.ahead = m - 1
        return True

    def _fits(self, boxes: int) -> bool:
        """Whether the certificate with `boxes` more boxes at their dearest fits the limits, as the checker prices it."""
        return not self._past_bytes(boxes) and certificate.checker_refusal(self._skeleton(boxes), self.limits) is None

    def _most(self) -> int:
        """The most boxes at their dearest that the checker's work limit leaves room for, by its estimate of the
        certificate so far and of one box more (every box ahead is priced alike), and the bytes limit (the text's growth
        never falls as boxes are added): a count to try, never a verdict (a limit that work and text do not measure,
        or work that would not grow by the box, is still the checker's to refuse)."""
        alone = self.stated | {"tree": "?", "leaves": []}  # the work of one box more, priced on a certificate of none
        box = certificate.region_work(alone | {"tree": "???", "leaves": [self._leaf(self.top)]}) - certificate.region_work(alone)
        most = max(0, (self.limits.work - certificate.region_work(self._skeleton(0))) // max(1, box))
        low, high = 0, most
        while low < high:  # the most whose text fits
            middle = (low + high + 1) // 2
            low, high = (low, middle - 1) if self._past_bytes(middle) else (middle, high)
        return low

    def _past_bytes(self, boxes: int) -> bool:
        """Whether the text written, with `boxes` more boxes at their dearest, passes the checker's byte limit: by the
        text last measured and the most the boxes since and these add (growth(k) bounds any k boxes up to the deepest
        now and k more, and those since were no deeper), measured afresh only where that bound leaves no room for one
        box: near the byte limit, not at every refill."""
        written, growth = self.text
        if self._measured is None or (self._since and boxes == 1
                                      and self._measured + growth(self._since + 1) > self.limits.bytes):
            self._measured, self._since = written(), 0
        return self._measured + growth(self._since + boxes) > self.limits.bytes

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
