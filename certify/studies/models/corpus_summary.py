"""The summary of a corpus run, aggregated one record at a time in memory that does not grow with the corpus.

Per head (layer x head), over the sentences: the regime counts (informative, indistinguishable,
underflowed, undecided), the step outcomes, the range of the enclosures of a D^2 and of tau(P_h) (min of the
lower endpoints, max of the upper ones: the exact minimum and maximum over the corpus lie inside),
and their quantiles.  Quantiles come from fixed histograms, not from stored values:
    a D^2   log10 of the enclosure's midpoint in LOG10_A_D2_BINS bins of width 0.02 over [-2, 5]
            (a quantile is known to a factor 10^0.02 = 1.047)
    tau     the enclosure's midpoint in TAU_BINS bins of width 0.005 over [0, 1]
and a quantile is reported as the edges [lo, hi] of the bin that holds it.  A head "leaves the
saturated regime" when it is certified informative (a D^2 < 54 ln 2, so float64 sees 1 - exp(-a D^2)
below 1) for at least one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from certify.core.float64_limits import GAP_UNDERFLOWS, INDISTINGUISHABLE, INFORMATIVE, ONE_MINUS_GAP_IS_ONE, UNDERFLOWED
from certify.core.verdicts import NOT_CERTIFIED
from certify.engine import HOLDS, UNDECIDED, VIOLATED
from certify.studies.models.certified import REGIMES

FORMAT = "certify-model-corpus-summary/1"
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
LOG10_A_D2_RANGE, LOG10_A_D2_BINS = (-2.0, 5.0), 350
TAU_RANGE, TAU_BINS = (0.0, 1.0), 200
STEPS = ("step1", "step2")
OUTCOMES = (HOLDS, VIOLATED, UNDECIDED)


@dataclass
class Histogram:
    """Counts in equal bins over [lo, hi); values outside are counted as below or above."""

    lo: float
    hi: float
    bins: int
    counts: list[int] = field(default_factory=list)
    below: int = 0
    above: int = 0

    def __post_init__(self) -> None:
        self.counts = self.counts or [0] * self.bins

    @property
    def width(self) -> float:
        """The width of one bin: (hi - lo) / bins."""
        return (self.hi - self.lo) / self.bins

    def add(self, value: float) -> None:
        """Count `value` in its bin, or as below lo or at or above hi (infinities included)."""
        if value < self.lo:
            self.below += 1
        elif value >= self.hi:
            self.above += 1
        else:
            self.counts[min(int((value - self.lo) / self.width), self.bins - 1)] += 1

    def quantile(self, q: float) -> list[float] | None:
        """The edges of the bin holding the q-quantile (the smallest value with at least q of the
        values at or below it); None when there are no values or the quantile is outside the range."""
        total = self.below + sum(self.counts) + self.above
        if total == 0:
            return None
        rank = max(1, math.ceil(q * total))
        seen = self.below
        if seen >= rank:
            return None
        for index, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return [self.lo + index * self.width, self.lo + (index + 1) * self.width]
        return None

    def merged(self, other: Histogram) -> Histogram:
        """A new histogram with the counts of both (the same lo, hi and bins)."""
        return Histogram(self.lo, self.hi, self.bins, [a + b for a, b in zip(self.counts, other.counts)],
                         self.below + other.below, self.above + other.above)  # fmt: skip

    def to_json(self) -> dict:
        """The histogram as summary.json stores it (Histogram(**it) reads it back)."""
        return {"lo": self.lo, "hi": self.hi, "bins": self.bins, "counts": self.counts, "below": self.below,
                "above": self.above}  # fmt: skip


@dataclass
class Range:
    """The smallest lower and the largest upper endpoint seen: the exact extremes lie between."""

    low: float | None = None
    high: float | None = None
    unbounded: bool = False  # some endpoint was beyond binary64 (null in the record)

    def add(self, pair: list) -> None:
        """Widen the range to an enclosure [lower, upper]; a null endpoint (beyond binary64) marks it unbounded."""
        lower, upper = pair
        if lower is None or upper is None:
            self.unbounded = True
        if lower is not None:
            self.low = lower if self.low is None else min(self.low, lower)
        if upper is not None:
            self.high = upper if self.high is None else max(self.high, upper)


def _log10(value: float | None) -> float | None:
    return None if value is None or value <= 0 else math.log10(value)


def _within(edges: list[float] | None, low: float | None, high: float | None) -> list[float] | None:
    """A quantile's bin cut to the enclosures' range [low, high]: every value binned lies in both."""
    if edges is None:
        return None
    lo = edges[0] if low is None else max(edges[0], low)
    hi = edges[1] if high is None else min(edges[1], high)
    return [lo, hi] if lo <= hi else edges


def bin_midpoint(edges: list[float] | None) -> float | None:
    """What the outputs show of a quantile: the midpoint of its bin [lo, hi] as summary.json stores it (None when
    there is none, the quantile beyond the histogram's range)."""
    return None if edges is None else sum(edges) / 2


def log_bin_value(edges: list[float] | None) -> float | None:
    """The value 10^m at the bin_midpoint m of a log10 quantile's bin (a D^2's), None when there is none."""
    midpoint = bin_midpoint(edges)
    return None if midpoint is None else 10 ** midpoint


def _midpoint(pair: list) -> float | None:
    lower, upper = pair
    return None if lower is None or upper is None else (lower + upper) / 2


class HeadSummary:
    """One head over the sentences added so far: its regime and step counts, the ranges of the enclosures of a,
    a D^2 and tau(P_h), and the fixed histograms its quantiles come from (module docstring)."""

    def __init__(self, layer: int, head: int) -> None:
        self.layer, self.head = layer, head
        self.sentences = 0
        self.regimes = dict.fromkeys(REGIMES, 0)
        self.steps = {step: dict.fromkeys(OUTCOMES, 0) for step in STEPS}
        self.undecided_sentences = 0  # regime or a step undecided
        self.a = Range()
        self.a_D2, self.tau = Range(), Range()
        self.log10_a_D2 = Histogram(*LOG10_A_D2_RANGE, LOG10_A_D2_BINS)
        self.tau_histogram = Histogram(*TAU_RANGE, TAU_BINS)

    def add(self, head: dict) -> None:
        """Count one sentence's record of this head (corpus.sentence_record's per-head entry)."""
        self.sentences += 1
        self.regimes[head["regime"]] += 1
        for step in STEPS:
            self.steps[step][head[step]] += 1
        self.undecided_sentences += UNDECIDED in (head["regime"], head["step1"], head["step2"])
        self.a.add(head["a"])
        self.a_D2.add(head["a_D2"])
        self.tau.add(head["tau"])
        a_D2 = _midpoint(head["a_D2"])
        if a_D2 is None or a_D2 <= 0:  # beyond binary64 (log10 above the range) or a zero head
            self.log10_a_D2.add(math.inf if a_D2 is None else -math.inf)
        else:
            self.log10_a_D2.add(math.log10(a_D2))
        tau = _midpoint(head["tau"])
        self.tau_histogram.add(math.inf if tau is None else tau)

    @property
    def ever_informative(self) -> bool:
        """True when the head is certified informative (a D^2 < 54 ln 2) on at least one sentence."""
        return self.regimes[INFORMATIVE] > 0

    def to_json(self) -> dict:
        """The head as summary.json stores it: counts, ranges of the enclosures, quantile bins and histograms."""
        return {
            "layer": self.layer, "head": self.head, "sentences": self.sentences, "regimes": self.regimes,
            "ever_informative": self.ever_informative, "undecided_sentences": self.undecided_sentences,
            "steps": self.steps,
            "a": {"min": self.a.low, "max": self.a.high},
            "a_D2": {"min": self.a_D2.low, "max": self.a_D2.high, "beyond_binary64": self.a_D2.unbounded,
                     "log10_quantiles": {str(q): _within(self.log10_a_D2.quantile(q), _log10(self.a_D2.low),
                                                         _log10(self.a_D2.high)) for q in QUANTILES},
                     "log10_histogram": self.log10_a_D2.to_json()},
            "tau": {"min": self.tau.low, "max": self.tau.high,
                    "quantiles": {str(q): _within(self.tau_histogram.quantile(q), self.tau.low, self.tau.high)
                                  for q in QUANTILES},
                    "histogram": self.tau_histogram.to_json()},
        }  # fmt: skip


class CorpusSummary:
    """Feed it records (corpus.sentence_record) in any order; to_json() at any point."""

    def __init__(self, n_layers: int, n_heads: int) -> None:
        self.n_layers, self.n_heads = n_layers, n_heads
        self.heads = [[HeadSummary(layer, head) for head in range(n_heads)] for layer in range(n_layers)]
        self.sentences = 0
        self.tokens = Range()
        self.full_rank_layers = 0  # (sentence, layer) pairs certified full rank
        self.certificates: list[str] = []  # the kept certificates the records name (a violated step's)

    def add(self, record: dict) -> None:
        """Count one sentence's record into every head (ValueError when its layers do not match the model)."""
        if len(record["layers"]) != self.n_layers:
            raise ValueError(f"record {record['i']} has {len(record['layers'])} layers, not {self.n_layers}")
        self.sentences += 1
        self.tokens.add([record["n_tokens"], record["n_tokens"]])
        for layer in record["layers"]:
            self.full_rank_layers += layer["rank_certified"]
            for head in layer["heads"]:
                self.heads[layer["layer"]][head["head"]].add(head)
                if head["certificate"] is not None:
                    self.certificates.append(head["certificate"])

    def all_heads(self) -> list[HeadSummary]:
        """Every head's summary, layer by layer, heads in order."""
        return [head for layer in self.heads for head in layer]

    def totals(self) -> dict:
        """Over every sentence and head: sentence and pair counts, the token range, regime and step
        counts, undecided pairs, full-rank (sentence, layer) pairs, and the heads ever informative."""
        heads = self.all_heads()
        regimes = {name: sum(h.regimes[name] for h in heads) for name in REGIMES}
        steps = {step: {v: sum(h.steps[step][v] for h in heads) for v in OUTCOMES} for step in STEPS}
        return {
            "sentences": self.sentences,
            "tokens": {"min": self.tokens.low, "max": self.tokens.high},
            "head_sentences": sum(h.sentences for h in heads),
            "regimes": regimes,
            "steps": steps,
            "undecided_head_sentences": sum(h.undecided_sentences for h in heads),
            "layer_sentences_full_rank": self.full_rank_layers,
            "heads_ever_informative": [f"L{h.layer}H{h.head}" for h in heads if h.ever_informative],
            "heads_always_saturated": sum(1 for h in heads if h.sentences and not h.ever_informative),
        }

    def to_json(self, about: dict) -> dict:
        """summary.json: the format, `about` (the model, corpus and precision), float64's thresholds,
        how the quantiles are made, the totals, every head and the certificates kept (file names in certificates/)."""
        return {
            "format": FORMAT,
            **about,
            "thresholds": {"saturation": ONE_MINUS_GAP_IS_ONE, "underflow": GAP_UNDERFLOWS},
            "quantiles_from": ("fixed histograms: a D^2 in bins of 0.02 in log10 over [-2, 5], tau in bins of 0.005 "
                               "over [0, 1], of the enclosures' midpoints; a quantile is the [lo, hi] of its bin"),
            "totals": self.totals(),
            "heads": [h.to_json() for h in self.all_heads()],
            "certificates": sorted(self.certificates),
        }  # fmt: skip


# What the counts of regimes and steps are, in the text and on the report page (a rejected head counts as undecided)
COUNTED = f"regimes and steps as the checker confirmed them, else undecided ({NOT_CERTIFIED})"
# The ranges of a D^2 and tau span every sentence's enclosures, those of heads the checker left undecided too
RANGES_LABEL = f"{NOT_CERTIFIED} where a head's steps are undecided (the checker confirms a head's enclosures with them)"


def render(summary: dict, full: bool) -> str:
    """The summary as text: totals, the layer x head grid of median a D^2; with full, a row per head."""
    t = summary["totals"]
    regimes = ", ".join(f"{t['regimes'][name]} {name}" for name in REGIMES)
    steps = "; ".join(f"{step}: " + ", ".join(f"{count} {v}" for v, count in t["steps"][step].items())
                      for step in STEPS)  # fmt: skip
    n_layers, n_heads = summary["config"]["n_layers"], summary["config"]["n_heads"]
    lines = [
        f"corpus {summary['corpus']}: {t['sentences']} sentences ({t['tokens']['min']} to {t['tokens']['max']} tokens), "
        f"model {summary['model']}: {n_layers} layers x {n_heads} heads",
        f"{t['head_sentences']} (sentence, head) pairs; {COUNTED}: {regimes}",
        f"{steps}; {t['undecided_head_sentences']} pairs with something undecided",
        f"informative: a D^2 < 54 ln 2 = {ONE_MINUS_GAP_IS_ONE:.2f} (float64 sees 1 - exp(-a D^2) < 1); saturated beyond "
        f"(indistinguishable, underflowed from 1075 ln 2 = {GAP_UNDERFLOWS:.2f})",
        f"heads informative for at least one sentence ({len(t['heads_ever_informative'])} of {n_layers * n_heads}): "
        + (", ".join(t["heads_ever_informative"]) or "none"),
        "median a D^2 per head (quantile of fixed log bins, 3 digits; * = informative for some sentence):",
        "       " + "".join(f"{'H' + str(h):>9}" for h in range(n_heads)),
    ]
    by_place = {(h["layer"], h["head"]): h for h in summary["heads"]}
    for layer in range(n_layers):
        cells = []
        for head in range(n_heads):
            h = by_place[(layer, head)]
            median = log_bin_value(h["a_D2"]["log10_quantiles"]["0.5"])
            value = "-" if median is None else f"{median:.3g}"
            cells.append(f"{value + ('*' if h['ever_informative'] else ' '):>9}")
        lines.append(f"  L{layer:<4}" + "".join(cells))
    if full:
        lines.append("per head: regime counts (informative / indistinguishable / underflowed / undecided); a D^2 "
                     "min, quantiles 10/50/90 (bin midpoints), max of the enclosures; tau(P_h) the same; "
                     f"{RANGES_LABEL}")  # fmt: skip
        lines.append("  head     inf  indis  under  undec   aD2 min     q10       q50       q90       max"
                     "       tau min   q10     q50     q90     max")  # fmt: skip
        for h in summary["heads"]:
            r, a, tau = h["regimes"], h["a_D2"], h["tau"]
            lines.append(
                f"  L{h['layer']}H{h['head']:<5} {r[INFORMATIVE]:>4} {r[INDISTINGUISHABLE]:>6} {r[UNDERFLOWED]:>6} "
                f"{r[UNDECIDED]:>6}   {_number(a['min'])} {_log_quantiles(a['log10_quantiles'])} {_number(a['max'])}"
                f"   {_fraction(tau['min'])} {_quantiles(tau['quantiles'])} {_fraction(tau['max'])}"
            )
    return "\n".join(lines)


def _number(value) -> str:
    return f"{'-' if value is None else format(value, '.4g'):<9}"


def _fraction(value) -> str:
    return f"{'-' if value is None else format(value, '.4f'):<7}"


def _log_quantiles(quantiles: dict) -> str:
    return " ".join(_number(log_bin_value(quantiles[str(q)])) for q in (0.1, 0.5, 0.9))


def _quantiles(quantiles: dict) -> str:
    return " ".join(_fraction(bin_midpoint(quantiles[str(q)])) for q in (0.1, 0.5, 0.9))
