"""What the checker's limits leave a region proof: a meter that stops the search before its certificate would
pass them, and refuses before any work when not even the first box fits.

The checker prices a region proof's replay as a sum over its bisection tree's symbols and its leaves, each leaf by
its precision and method (certify_checker.region_proof.prices, asked through certify.engine.certificate: never a
copy of it), and `certify prove` has it confirm the certificate under the same limits.  Deciding one more box adds
at most two symbols to the tree (a split: the box's "?" becomes its axis and two open halves) and one leaf at the
top of the precision ladder by the dearest test (a closing).  So the meter keeps the work of the proof so far, adding
the checker's price of each symbol and leaf as the search decides it, and lets a box be decided while that work and
one box at its dearest fit the work limit and the text written the byte limit.  The checker's estimate of the whole
is asked only at the first box (the limits that the boxes do not change: a leaf's nesting) and at the stop, to
confirm it: asked at every refill of the boxes known to fit, priced at the dearest while those decided cost far
less, it walked the whole proof some 80 times as a search neared the limit (2.4 s of 20).  The rest of the
checker's estimate of a region proof does not grow with the boxes but for its measure of the certificate's tree,
which the text written, bounded here, passes first.  A search stopped by the meter writes a certificate the
checker accepts, and states which limit stopped it and how to raise it.
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
        self._symbol, self._leaf_work = certificate.region_prices(stated)
        self._leaf_prices: dict[tuple, int] = {}  # the checker's price of a leaf, by precision and method
        self.work = self._symbol * self.symbols + sum(map(self._price, self.closings))  # the checker's, of the proof so far
        self._dearest = 2 * self._symbol + self._price((top, None))  # of a box decided at its dearest
        self.ahead = 0  # boxes already known to fit
        self._asked = False  # whether the checker has confirmed the first box (admits)
        self._leaves: dict[tuple, dict] = {}  # one leaf per precision and method, shared by every skeleton

    def split(self) -> None:
        """Count a box split: its symbol and two open halves."""
        self.symbols += 2
        self.work += 2 * self._symbol
        self._since += 1

    def closed(self, precision: int, method: str) -> None:
        """Count a box closed at `precision` by `method`: one leaf (the checker prices its test by its method)."""
        self.closings.append((precision, method))
        self.work += self._price((precision, method))
        self._since += 1

    def admits(self) -> bool:
        """Whether the next box may be decided: the certificate fits the limits whatever it becomes (reason() if not)."""
        if self.ahead > 0:
            self.ahead -= 1
            return True
        m = self._most()
        if m and self._asked:
            self.ahead = m - 1
            return True
        # The checker's answer on the whole decides at the first box (the limits the boxes do not change, as a leaf's
        # nesting) and where the work kept leaves no room (the stop: the work kept is the checker's sum, so it refuses
        # there too, and names the limit): one walk of the proof each, however long the search goes on near the limit.
        self._asked = True
        if self._past_bytes(1) or certificate.checker_refusal(self._skeleton(1), self.limits) is not None:
            return False
        self.ahead = max(m, 1) - 1
        return True

    def _most(self) -> int:
        """The most boxes at their dearest that the work limit leaves room for, by the work kept (the checker's prices,
        summed), and the bytes limit (the text's growth never falls as boxes are added)."""
        most = max(0, (self.limits.work - self.work) // max(1, self._dearest))
        low, high = 0, most
        while low < high:  # the most whose text fits
            middle = (low + high + 1) // 2
            low, high = (low, middle - 1) if self._past_bytes(middle) else (middle, high)
        return low

    def _price(self, closing: tuple) -> int:
        if closing not in self._leaf_prices:
            self._leaf_prices[closing] = self._leaf_work(*closing)
        return self._leaf_prices[closing]

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
