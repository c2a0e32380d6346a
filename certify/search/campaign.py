"""Sampling campaigns: many configurations from one distribution, each decided rigorously, resumable.

A campaign is a target (a claim, or a bound D(layer output) <= EXPR), a distribution of
configurations (certify.search.samplers), n, d, a count, a seed, an optional L range, an optional
thin head's d_k and the precision cap.  Configuration i is a pure function of the campaign and i, so progress is just
the set of decided indices.  Each chunk of indices is screened in float64 at once
(certify.search.float_screen: batched for pure attention, else one configuration at a time), then
every configuration is decided by certify.engine.check (holds, violated or undecided with the
reason; decided verdicts are checker-confirmed).

The campaign folder:
    manifest.json         the campaign's parameters (a folder is resumed only by the same campaign),
                          and the chunks written so far in order, each with its number of records and
                          the sha256 of its file, chained: "chain" is sha256 over the parameters and
                          every chunk's entry in turn, so an edit, a deletion or a reordering shows
    chunks/<i>.jsonl      one JSON line per decided configuration (a chunk whose first index is i),
                          written atomically after its manifest entry and never changed or overwritten
    certificates/         violated-<i>.json for every violation, holds-<i>.json for every
                          `hold_stride`-th index (about HOLD_SAMPLES of them); `certify verify` re-checks
    undecided/<i>.json    the configuration of every undecided index (`certify check --max-prec ...`)
    summary.json          the summary of every decided configuration, rewritten at the end of a run (or
                          at Ctrl-C: only a run killed outright leaves none, or an earlier run's)
The folder is a certify.jobs.Store: a chunk's task (decide_chunk, on a process pool or Dask) returns
its records and the texts of its certificates and undecided configurations, and this process
commits them, chunk by chunk, so that the decided configurations are exactly the committed chunks'.

    index.html            the report page of `certify sample` (certify.report.campaign_page) and its
                          histograms.<format>, rewritten at the end of a run: derived output, which the
                          integrity checks below let be (a file the campaign does not write is refused)

Integrity (checked before a resumed run does any work, and whenever the records are read): every
chunk matches its digest and the chain its manifest; every record is an object with an index in
range, a known verdict, fields of the right types (a number finite: null past float64's range), a tier the
campaign can have written (tier3 only in a tier3 campaign, never where a certificate is kept) and, decided in
arb, a precision the engine stops at under the campaign's cap (a step of precision.ladder); no index twice; each chunk holds the record of
the index its file is named by; a record and the certificates on disk agree (a violated record has its
violation certificate, a sampled hold its hold certificate, each file matches the digest in its
record); certificates/ and undecided/ hold nothing a record does not name (a violation, a hold or an
undecided configuration there that the campaign never found would be browsed as one), and the folder
nothing else a campaign does not write (at its top, beside the files above; in chunks/, a file the
manifest does not list: jobs.store).  Only what a killed run leaves passes, the certificate or
undecided/ file of a configuration not decided yet and the hidden temporary file of an interrupted
write, which a resumed run removes before it decides again.  Anything else is reported as
one line (BadInput, exit 2) and nothing is overwritten.  A chunk listed last whose file is missing
is the one a killed run was writing (or the chunks listed last, a killed --restart's): its configurations
are decided again.

A record (one JSON line):
    i                 the configuration's index: with the manifest, it regenerates the configuration
    name              the configuration's name, "<distribution>-n<n>-d<d>-seed<seed>-<i>"
    verdict           holds | violated | undecided           precision  bits that decided it
    tier              the arithmetic that decided it: "arb" (ball arithmetic, certify.engine.check) or
                      "tier3" (the rigorous float64 tier, certify.search.tier3: holds only; then precision
                      and certificate are null, ratio and margin_log10 are bounds: lhs_upper / rhs_lower,
                      a lower bound of the margin).  With tier "tier3" each chunk goes through the
                      float64 tier first and only what it cannot decide goes to the engine, and so does
                      every hold_stride-th configuration, whose certificate is kept as with tier "arb".
    ratio             lhs / rhs of the tightest comparison (midpoints of the balls)
    margin_log10      log10(|rhs - lhs| / |rhs|) of that comparison, null when the ball contains 0
    margin            rhs - lhs to 3 digits (engine.Result.margin_text)
    L                 float64 a D^2 (null past float64's range, as ratio and margin_log10)
    float64           the chunk's float64 screen: "holds" when every lhs <= rhs, else "violated" (vacuously
                      "holds" where a float64 side is not finite: float64 compares nothing there)
    float64_equal     the screen found some lhs == rhs exactly
    float64_bound_is_D     float64 computes 1 - exp(-a D^2) as exactly 1, i.e. the thesis bound as D
    float64_gap_zero       float64 computes exp(-a D^2) as exactly 0
    reason            why it is undecided ("" otherwise): "the bound is undefined: ..." where it is certainly
                      undefined (certify check's bad input; a drawn configuration is recorded, precision 53)
    certificate       its certificate's path in the folder, or null
    certificate_sha256     the sha256 of that certificate file, or null
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import shlex
import time
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from statistics import median
from typing import Callable

import numpy as np
from flint import arb

from certify import claims, engine, jobs
from certify.core import config
from certify.core import progress as progress_display
from certify.core import expr, files, jsonfile, report_files, seeds
from certify.errors import BadInput, CertainlyUndefined, Interrupted, keys_shown
from certify.core.precision import check_precision_cap, ladder
from certify.core.float64_limits import GAP_UNDERFLOWS, ONE_MINUS_GAP_IS_ONE
from certify.core.files import folder_path
from certify.core.arguments import Spelling, flag, integer, option_of, workers_option
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits, in_campaign, limit_options
from certify.core.verdicts import NOT_CERTIFIED, labelled, short_repr
from certify.search import float_screen, samplers, tier3

FORMAT = "certify-campaign/2"
SUMMARY_FORMAT = "certify-campaign-summary/1"
MAX_COUNT = 10**9
HOLD_SAMPLES = 20  # holds whose certificate is kept, spread evenly over the indices
LISTED = 20  # indices and paths listed in the summary per category
MAX_CHUNK = 64  # configurations per chunk of records (the unit of work, progress and resumption)
# chunks per worker at least (smaller chunks where the work is small): the workers finish together to within
# about a chunk (600 configurations on 2 workers in chunks of 64, 320 against 280, left 6 percent of the two
# workers' time idle; in chunks of 38, 304 against 296, about 1 percent)
CHUNKS_PER_WORKER = 8
# tier 3 pays a fixed Python cost per batch: its chunks take up to this many n x max(n, d) entries
TIER3_CHUNK_ENTRIES = 1 << 16
TIERS = ("arb", "tier3")  # ball arithmetic at adaptive precision (engine.check); the rigorous float64 tier first


def uncertified_holds(summary: dict) -> str:
    """How the holds that the checker has not confirmed are labelled (tier 3 decides without a certificate:
    `certify verify FOLDER --all` re-derives them in arb, which the checker confirms), or "" when none."""
    k = summary["tiers"].get("tier3", 0)
    return f"{k} by tier 3, {NOT_CERTIFIED}: certify verify --all re-derives them" if k else ""


def recheck_options(summary: dict) -> str:
    """The --limit options `certify verify CERT` needs to re-check one of the campaign's certificates alone: the
    changed caps the checker confirmed them under (`certify verify FOLDER` reads them from the manifest)."""
    return limit_options(f"{name}={value}" for name, value in (summary["campaign"].get("limits") or {}).items())


def tiers_line(summary: dict) -> str:
    """Which tier decided how many configurations, for the printed summary and the report page; a tier-3
    record's ratio and margin come from its enclosures' ends (lhs above, rhs below), so they are bounds,
    not the exact figures arb records."""
    line = "decided by: " + ", ".join(f"{tier} {k}" for tier, k in summary["tiers"].items())
    if summary["tiers"].get("tier3"):
        line += " (tier-3 records: lhs/rhs from above, relative margins from below)"
    return line


PARTS = tuple(f.name for f in fields(samplers.LayerParts))
# the manifest's keys by their options (Campaign.command), for the refusal of another campaign's folder: "different
# L_range, max_prec" named the keys; --n, --count and the like are their own names
NAMED = {"distribution": "--distribution", "n": "--n", "d": "--d", "d_k": "--d-k", "count": "--count",
         "seed": "--seed", "claim": "--claim", "bound": "--bound", "L_range": "--l-range", "max_prec": "--max-prec",
         "tier": "--tier", "limits": "--limit", **samplers.PART_OPTIONS.names}
# the parameters of a run as `certify sample` and certify.sample name them where a value is refused
OPTIONS = Spelling({**NAMED, "workers": "--workers", "stop_after": "--stop-after", "restart": "--restart",
                    **jobs.COMMAND.names}, assign=" ")
# the manifest's key L_range is certify.sample's l_range=, as certify.attack and --l-range spell it
KEYWORDS = Spelling({**Spelling.keywords((*OPTIONS.names, "progress"), flags=("restart",)).names,
                     "L_range": "l_range="}, assign="")


@dataclass(frozen=True)
class Campaign(samplers.LayerParts):
    """The parameters of a sampling campaign, all it takes to regenerate every configuration: the
    distribution, n, d, the count and seed, the target (a claim or a bound), the L range, the precision
    cap and the tier, a thin head's d_k, and the layer's parts beyond the head (the keyword-only fields of
    samplers.LayerParts; the manifest names those not at their default).  Stored in the folder's
    manifest; a resumed run must have the same."""

    distribution: str
    n: int
    d: int
    count: int
    seed: int
    claim: str | None = None  # default collapse.global when no bound is given
    bound: str | None = None
    L_range: tuple[float, float] | None = None  # None: the distribution's default
    max_prec: int = engine.DEFAULT_MAX_PRECISION
    tier: str = "arb"  # or "tier3": the rigorous float64 tier first, arb for the rest
    limits: dict | None = None  # the caps of certify.core.limits changed from their defaults (--limit), or None
    d_k: int | None = None  # a thin head W_Q, W_K of d_k columns (samplers), or None: the distribution's head

    def validated(self, names: Spelling = OPTIONS) -> "Campaign":
        """This campaign with its defaults filled in, or BadInput naming the parameters as `names` spells them
        (OPTIONS, the command's --count; KEYWORDS, certify.sample's count=)."""
        if self.claim is not None and self.bound is not None:
            raise BadInput(f"give either {names.option('claim')} or {names.option('bound')}, not both")
        d_k = None if self.d_k is None else integer(self.d_k, names.option("d_k"))
        L_range = samplers.validate(self.distribution, self.n, self.d, self.L_range, d_k, names.option)
        if not 1 <= integer(self.count, names.option("count")) <= MAX_COUNT:
            raise BadInput(f"{names.option('count')} must be between 1 and {MAX_COUNT}, got {self.count}")
        seeds.checked(self.seed, names.option("seed"))
        check_precision_cap(self.max_prec, names.option("max_prec"))
        claim = None if self.bound is not None else claims.get(claims.chosen(self.claim)).id
        if not isinstance(self.tier, str) or self.tier not in TIERS:  # an array's `in` asked its ambiguous truth
            raise BadInput(f"unknown tier {self.tier!r}; known tiers: {', '.join(TIERS)}")
        if self.tier == "tier3" and claim is not None and claim not in tier3.COVERED:
            raise BadInput(f"the float64 tier decides {', '.join(tier3.COVERED)} and bounds on sampled "
                           f"configurations; use {names.given('tier', 'arb')} for {claim}")
        bound = None if self.bound is None else expr.parse(self.bound).text  # one canonical spelling
        campaign = replace(self, claim=claim, bound=bound, L_range=L_range, limits=_changed_limits(self.limits),
                           d_k=d_k, **asdict(self.parts.validated(self.d, names)))
        # The target's own checks (unknown claim, bound syntax, a claim whose hypotheses the sampled
        # layer does not meet) are the engine's, on configuration 0 read but not decided (the pool decides it).
        goal, case = engine.target(claim, self.bound), config.load(campaign.sample(0).config, campaign.engine_limits)
        engine.admit(goal, case)
        # what every check refuses before any work (its configurations share their shapes): refused here, once, in
        # a campaign's words (its limits are its manifest's)
        try:
            engine.preflight(case, goal.claim, campaign.engine_limits, max_prec=campaign.max_prec)
        except BadInput as refused:
            raise BadInput(in_campaign(str(refused))) from None
        return campaign

    @property
    def engine_limits(self) -> Limits:
        """The caps every configuration of the campaign is decided under (and re-derived by `certify verify`)."""
        return replace(DEFAULT_LIMITS, **(self.limits or {}))

    @property
    def chunk_limit(self) -> int:
        """Configurations per chunk at most: MAX_CHUNK, or with tier 3 batch_limit."""
        return self.batch_limit if self.tier == "tier3" else MAX_CHUNK

    @property
    def batch_limit(self) -> int:
        """Configurations per batch of float64 and tier 3 at most: MAX_CHUNK, or up to TIER3_CHUNK_ENTRIES
        entries (1,024 configurations of 8 x 4, 256 of 16 x 16)."""
        return max(MAX_CHUNK, tier3.configurations_within(TIER3_CHUNK_ENTRIES, self.n, self.d))

    @property
    def hold_stride(self) -> int:
        """Every hold_stride-th configuration that holds keeps its certificate (about HOLD_SAMPLES in all)."""
        return max(1, self.count // HOLD_SAMPLES)

    @property
    def parts(self) -> samplers.LayerParts:
        """The parts of the sampled layer beyond the head (mask, V, residual, FFN)."""
        return samplers.LayerParts(**{key: getattr(self, key) for key in PARTS})

    @property
    def pure_attention(self) -> bool:
        """The sampled layers are X' = P X (float_screen computes their float64 sides in one batch)."""
        return self.parts == samplers.LayerParts()

    def manifest(self) -> dict:
        """The parameters as the folder's manifest stores them (JSON types, with the campaign format)."""
        out = asdict(self)
        out["L_range"] = None if self.L_range is None else list(self.L_range)
        default = samplers.LayerParts()
        for key in PARTS:  # campaigns of pure attention keep the manifest they always had
            if out[key] == getattr(default, key):
                del out[key]
        for key in ("limits", "d_k"):  # and those at the default limits, or of the distribution's own head
            if out[key] is None:
                del out[key]
        return {"format": FORMAT, **out}

    def command(self, out) -> str:
        """The `certify sample` command line of this campaign with --out `out` (shell-quoted): what resumes it,
        or rewrites its summary.json when every configuration is decided (certify.cli.sample's options; a test
        parses it back into this campaign)."""
        # a bound may begin with "-", which argparse would take for an option unless joined to its flag
        options = [("--claim", self.claim), (f"--bound={self.bound}",) if self.bound else ("--bound", None),
                   ("--distribution", self.distribution),
                   ("--n", self.n), ("--d", self.d), ("--d-k", self.d_k), ("--count", self.count), ("--seed", self.seed)]
        if self.L_range is not None:
            options.append(("--l-range", *(repr(float(x)) for x in self.L_range)))
        if self.max_prec != engine.DEFAULT_MAX_PRECISION:
            options.append(("--max-prec", self.max_prec))
        if self.tier != "arb":
            options.append(("--tier", self.tier))
        for key in PARTS:  # the layer's parts not at their default (True flags take no value)
            value = getattr(self, key)
            if value not in (None, False):
                options.append((option_of(key),) + (() if value is True else (repr(value),)
                                                    if isinstance(value, float) else (value,)))
        for name, value in (self.limits or {}).items():  # caps changed from the defaults: part of the campaign
            options.append(("--limit", f"{name}={value}"))
        words = ["certify", "sample"] + [str(word) for option in options if option[1:] != (None,) for word in option]
        return shlex.join(words + ["--out", str(out)])

    def samples(self, indices: list[int]) -> list[samplers.Sample]:
        """Configurations `indices` of the campaign, the same on every machine and run (samplers.samples: refused
        where the floating-point environment would draw others)."""
        return samplers.samples(self.distribution, self.n, self.d, self.seed, indices, self.L_range, self.parts,
                                self.d_k)

    def sample(self, index: int) -> samplers.Sample:
        """Configuration `index` of the campaign (samples)."""
        return self.samples([index])[0]


def _changed_limits(items) -> dict | None:
    """A campaign's changed caps in canonical form (those off the defaults, in certify.core.limits' order; None
    for none), or BadInput for an unknown name or a value that is not a positive integer."""
    if items is None:
        return None
    if not isinstance(items, dict) or any(type(value) is not int for value in items.values()):
        raise BadInput("a campaign's limits are names of certify.core.limits with positive integer values")
    changed = vars(DEFAULT_LIMITS.changed([f"{name}={value}" for name, value in items.items()]))
    return {name: value for name, value in changed.items() if value != getattr(DEFAULT_LIMITS, name)} or None


# ---------------------------------------------------------------------------------------------
# Deciding a chunk (runs in a worker process)


@dataclass(frozen=True)
class Screened:
    """What float64 and the rigorous float64 tier say of a chunk's configurations, all at once: the first pass
    of decide_chunk, and of `certify verify` over every record (certify.search.audit)."""

    samples: list[samplers.Sample]
    quantities: dict[str, np.ndarray]  # float_screen.layer_quantities (L, gap, ...)
    sides: list[tuple[np.ndarray, np.ndarray]]  # float64 lhs and rhs of each inequality (float_screen.chunk_sides)
    tier3: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # tier3.evaluate in a tier3 campaign, else None

    def facts(self, k: int) -> dict:
        """Configuration k's record fields that name it and say what float64 computes of a D^2."""
        gap = float(self.quantities["gap"][k])
        return {"i": self.samples[k].index, "name": self.samples[k].config["name"],
                "L": _finite(float(self.quantities["L"][k])),
                "float64_bound_is_D": 1.0 - gap == 1.0, "float64_gap_zero": gap == 0.0}

    def pairs(self, k: int) -> list[tuple[float, float]]:
        """Configuration k's float64 (lhs, rhs) of each inequality."""
        return [(float(lhs[k]), float(rhs[k])) for lhs, rhs in self.sides]

    def opinion(self, k: int) -> dict:
        """Configuration k's float64 verdict fields (float64_opinion)."""
        return float64_opinion(self.pairs(k))

    def tier3_hold(self, k: int) -> dict | None:
        """The fields a tier-3 hold records for configuration k (its sides' bounds, lhs from above and rhs from
        below), or None when tier 3 does not decide it (or is not the campaign's)."""
        if self.tier3 is None or self.tier3[0][k] != tier3.HOLDS:
            return None
        lhs, rhs = float(self.tier3[1][k]), float(self.tier3[2][k])
        return {"ratio": _finite(lhs / rhs), "margin_log10": math.log10((rhs - lhs) / rhs) if rhs > lhs else None,
                "margin": f"{rhs - lhs:.3g}"}


def screened(campaign: Campaign, indices: list[int]) -> Screened:
    """Configurations `indices` of the campaign through float64 and, in a tier3 campaign, tier 3 (batched)."""
    samples = campaign.samples(indices)
    configs = [s.config for s in samples]
    # a thin head's a comes with it (its d_k x d_k reduction): no d x d SVD per configuration
    a = np.array([s.a for s in samples]) if campaign.d_k is not None else None
    quantities = float_screen.layer_quantities(np.stack([s.X for s in samples]), np.stack([s.A for s in samples]), a)
    claim = engine.target(campaign.claim, campaign.bound).claim
    sides = float_screen.chunk_sides(claim, campaign.pure_attention, configs, quantities)
    fast = tier3.evaluate(claim, tier3.batch_of_configs(configs)) if campaign.tier == "tier3" else None
    return Screened(samples, quantities, sides, fast)


def decide_chunk(campaign: Campaign, indices: list[int]) -> jobs.ChunkResult:
    """Screen the chunk in float64 at once (and in tier 3 in a tier3 campaign), then decide each configuration;
    its records, the certificates and undecided configurations to keep (the client writes them), and why tier 3
    could not run here, if it could not (the summary's tier3_off: the client's machine, or its state when it
    summarises, need not be this worker's)."""
    off = tier3.unusable_reason() if campaign.tier == "tier3" else None
    first = screened(campaign, indices)
    goal = engine.target(campaign.claim, campaign.bound)
    records, kept = [], {}
    for k, item in enumerate(first.samples):
        facts, opinion = first.facts(k), first.opinion(k)
        # every hold_stride-th configuration goes to arb anyway: its certificate is kept for `certify verify`
        fast = first.tier3_hold(k) if item.index % campaign.hold_stride else None
        if fast is not None:
            records.append({**facts, "verdict": engine.HOLDS, "tier": "tier3", "precision": None, **fast, **opinion,
                            "reason": "", "certificate": None, "certificate_sha256": None})
            continue
        result, verdict, decision, reason = decided(campaign, item.config, goal)
        fields, artefact = _keep(campaign, item, result)
        kept.update(artefact)
        records.append({**facts, "verdict": verdict, "tier": "arb", **decision, **opinion, "reason": reason, **fields})
    return jobs.ChunkResult(records, kept, notes=() if off is None else (off,))


def decided(campaign: Campaign, sampled: dict, goal: engine.Target) -> tuple[engine.Result | None, str, dict, str]:
    """(engine.check's Result, the verdict, the record's arb fields, the reason) of a sampled configuration.  Where
    the bound or a layer is certainly undefined (log(a - 1)*D at a <= 1, a LayerNorm of 0/0), which `certify check`
    refuses as bad input, the configuration is undecided and the reason says where (no Result): drawn, not chosen, it
    stopped the campaign there, and every run that resumed it."""
    try:
        result = engine.check(sampled, goal=goal, max_prec=campaign.max_prec, limits=campaign.engine_limits)
    except CertainlyUndefined as undefined:
        return None, engine.UNDECIDED, {"precision": engine.START_PRECISION, "ratio": None, "margin_log10": None,
                                        "margin": ""}, str(undefined)
    # the reason in a campaign's words: its limits are raised by another campaign, not on `certify verify`
    return result, result.verdict, arb_fields(result), in_campaign(result.reason)


def arb_fields(result: engine.Result) -> dict:
    """What an arb record says of its decision besides the verdict: the precision, lhs/rhs and the relative
    margin of the tightest comparison, and the margin's text."""
    return {"precision": result.precision, **_tightest(result), "margin": result.margin_text}


def float64_opinion(pairs: list[tuple[float, float]]) -> dict:
    """A record's float64 fields from the float64 (lhs, rhs) of each inequality: whether every lhs <= rhs, and
    whether some lhs == rhs.  Where a side is not finite, float64 has left its range and compares nothing (as
    engine.Result.screen): "holds", vacuously, and no equality."""
    if not all(math.isfinite(lhs) and math.isfinite(rhs) for lhs, rhs in pairs):
        pairs = []
    return {"float64": engine.HOLDS if all(lhs <= rhs for lhs, rhs in pairs) else engine.VIOLATED,
            "float64_equal": any(lhs == rhs for lhs, rhs in pairs)}


def _finite(x: float) -> float | None:
    """A float for a record, None past float64's range (JSON has no NaN or Infinity)."""
    return x if math.isfinite(x) else None


def _tightest(result: engine.Result) -> dict:
    c = result.tightest
    ratio = _finite(float((c.lhs / c.rhs).mid())) if not c.rhs.contains(0) else None
    slack = c.rhs - c.lhs
    if slack.contains(0) or c.rhs.contains(0):
        return {"ratio": ratio, "margin_log10": None}
    relative = abs(slack) / abs(c.rhs)  # an arb: it may be far below float64's range
    return {"ratio": ratio, "margin_log10": _finite(float((relative.log() / arb(10).log()).mid()))}


def _keep(campaign: Campaign, item: samplers.Sample, result: engine.Result | None) -> tuple[dict, dict[str, str]]:
    """The certificate of a violation or a sampled hold, or the configuration of an undecided case (result None: the
    bound undefined there, see decided), by its path in the folder; and the record's fields naming the certificate
    and its sha256."""
    none = {"certificate": None, "certificate_sha256": None}
    if result is None or result.verdict == engine.UNDECIDED:
        return none, {undecided_path(item.index).as_posix(): undecided_text(item.config)}
    if result.verdict == engine.HOLDS and item.index % campaign.hold_stride:
        return none, {}
    path = Path("certificates") / f"{result.verdict}-{item.index:09d}.json"
    text = jsonfile.dumps(result.certificate)
    return ({"certificate": str(path), "certificate_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()},
            {path.as_posix(): text})


# ---------------------------------------------------------------------------------------------
# The campaign folder (a certify.jobs.Store)

HISTOGRAMS = "histograms"  # the stem of the campaign's figure (certify.figures.sample)
# derived files too, so that --restart leaves no page or histogram of the discarded campaign behind
# (the page: certify.report.campaign_page; the histograms in every format: certify.figures.sample)
SUMMARY = "summary.json"  # the summary of every decided configuration (summarize)
DRAWN = (report_files.PAGE, *report_files.figure_files(HISTOGRAMS))  # drawn from the summary by the caller
OUTPUTS = ("certificates", "undecided", SUMMARY, *DRAWN)


def _read(out_dir, manifest=None) -> jobs.Store:
    return jobs.Store.read(out_dir, FORMAT, noun="campaign", outputs=OUTPUTS, manifest=manifest)


# ---------------------------------------------------------------------------------------------
# Integrity of the folder

RECORD_TYPES = {"i": (int,), "name": (str,), "verdict": (str,), "tier": (str,), "precision": (int, type(None)), "ratio": (float, int, type(None)),
                "margin_log10": (float, int, type(None)), "margin": (str,), "L": (float, int, type(None)), "float64": (str,),
                "float64_equal": (bool,), "float64_bound_is_D": (bool,), "float64_gap_zero": (bool,),
                "reason": (str,), "certificate": (str, type(None)), "certificate_sha256": (str, type(None))}


def stored_parameters(out_dir: Path, manifest=None) -> dict:
    """The campaign parameters of a folder's manifest (format included), its chain of digests verified; `manifest`:
    the manifest as jobs.read_manifest read it, where the caller has (None: read now)."""
    return _read(out_dir, manifest).parameters


def _check_record(store: jobs.Store, record: dict, where: str, hold_stride: int, precisions: set[int]) -> None:
    """A record's fields and their types, a tier the campaign can have written and a precision its engine can
    have stopped at (the store has checked its index)."""
    if set(record) != set(RECORD_TYPES):
        raise store.corrupt(f"{where} is not a record with the fields {', '.join(RECORD_TYPES)}")
    for key, types in RECORD_TYPES.items():
        if type(record[key]) not in types:
            raise store.corrupt(f"{where}: {key} = {str(record[key])[:40]!r} has the wrong type")
        # a run writes null past float64's range (jsonfile.dumps): a literal read as infinity (1e400) is no run's
        if type(record[key]) is float and not math.isfinite(record[key]):
            raise store.corrupt(f"{where}: {key} = {record[key]} is beyond binary64's range, where a record states "
                                "null")
    if record["verdict"] not in (engine.HOLDS, engine.VIOLATED, engine.UNDECIDED):
        raise store.corrupt(f"{where}: unknown verdict {record['verdict'][:40]!r}")
    if record["tier"] not in TIERS or (record["tier"] == "tier3" and record["verdict"] != engine.HOLDS):
        raise store.corrupt(f"{where}: unknown tier {record['tier'][:40]!r}, or a tier3 record that is not a hold")
    # the tier is part of what a record claims (decide_chunk's rule): tier 3 decides only in a tier3
    # campaign, never a configuration whose certificate is kept, and leaves no precision or certificate
    if record["tier"] == "tier3" and (store.parameters.get("tier") != "tier3" or record["precision"] is not None
                                      or record["certificate"] is not None
                                      or record["i"] % hold_stride == 0):
        raise store.corrupt(f"{where}: a tier3 record this campaign cannot have written (an arb campaign, a "
                            "configuration whose certificate is kept, or a precision or certificate named)")
    # engine.check stops at a step of its ladder from START_PRECISION up to the campaign's cap: a precision
    # above the cap says the manifest's cap is not the one the records were decided with (a cap lowered in the
    # manifest turns a violation decided at higher precision into an undecided case its audit re-derives)
    if record["tier"] == "arb" and record["precision"] not in precisions:
        raise store.corrupt(f"{where}: precision {record['precision']} is not one the engine stops at with the "
                            f"campaign's cap of {store.parameters.get('max_prec')} bits")
    if record["float64"] not in (engine.HOLDS, engine.VIOLATED):
        raise store.corrupt(f"{where}: unknown float64 verdict {record['float64'][:40]!r}")


def _expected_certificate(record: dict, hold_stride: int) -> str | None:
    """The certificate path a record must name (the rule of _keep)."""
    if record["verdict"] == engine.VIOLATED or record["verdict"] == engine.HOLDS and record["i"] % hold_stride == 0:
        return str(Path("certificates") / f"{record['verdict']}-{record['i']:09d}.json")
    return None


def undecided_path(i: int) -> Path:
    """Where _keep writes the configuration of an undecided index i."""
    return Path("undecided") / f"{i:09d}.json"


def undecided_text(config: dict) -> str:
    """The text of the undecided/ file of a configuration (`certify check` reads it): JSON writes a float as its
    shortest round-trip text, so the file holds the exact binary64 inputs."""
    return json.dumps(config) + "\n"


def _kept(i: int, hold_stride: int) -> set[str]:
    """Every path _keep may write for configuration i, whatever its verdict: what a run killed before it committed
    i's chunk can have left of it."""
    certificates = {_expected_certificate({"verdict": verdict, "i": i}, hold_stride)
                    for verdict in (engine.HOLDS, engine.VIOLATED)}
    return {str(undecided_path(i))} | certificates - {None}


def _certificate_sha256(store: jobs.Store, path: Path) -> str:
    """The sha256 of a certificate's file as far as the campaign's bytes limit and a byte past it (a longer file is not
    one the campaign wrote, and its digest differs): a file put in its place was read whole, whatever its size."""
    stated = store.parameters.get("limits")
    most = stated.get("bytes") if isinstance(stated, dict) and type(stated.get("bytes")) is int else DEFAULT_LIMITS.bytes
    with open(path, "rb") as handle:
        return hashlib.sha256(files.head(handle, max(most, 0) + 1)).hexdigest()


def _cross_check(store: jobs.Store, found: dict[int, dict], hold_stride: int) -> None:
    """Records and the certificates on disk agree, both ways; certificates/ and undecided/ hold nothing the records
    do not name (but for a killed run's leftovers: jobs.Store.refuse_unnamed)."""
    for record in found.values():
        expected = _expected_certificate(record, hold_stride)
        if record["certificate"] != expected:
            raise store.corrupt(f"configuration {record['i']} ({record['verdict']}) names the certificate "
                                f"{record['certificate']!r}, not {expected!r}")
        if expected is not None:
            path = store.folder / expected
            found_digest = _certificate_sha256(store, path) if path.is_file() else None
            if found_digest != record["certificate_sha256"]:
                raise store.corrupt(f"the certificate {expected} of configuration {record['i']} is missing or "
                                    "does not match the digest in its record")

    def pending(output: str) -> Callable[[str], bool]:
        """Store.refuse_unnamed's `pending` for `output`: whether a name there is _keep's for a configuration not
        decided yet."""
        def left(name: str) -> bool:
            index = name.removesuffix(".json")[-9:]  # the nine digits of every name _keep gives
            if not (index.isascii() and index.isdigit()) or int(index) in found or int(index) >= store.count:
                return False
            return str(Path(output, name)) in _kept(int(index), hold_stride)
        return left

    store.refuse_unnamed("certificates", {Path(record["certificate"]).name for record in found.values()
                                          if record["certificate"]}, pending("certificates"))
    store.refuse_unnamed("undecided", {undecided_path(i).name for i, record in found.items()
                                       if record["verdict"] == engine.UNDECIDED}, pending("undecided"))


def committed_prefix(batches: list[list[int]], decided: int) -> set[int] | None:
    """The indices of the first `batches` (read_with_batches) that hold `decided` records together (what the
    summary written at the end of an earlier run describes: chunks are committed in the manifest's order),
    or None when no run can have stopped there."""
    prefix, total = set(), 0
    for batch in batches:
        if total == decided:
            break
        prefix.update(batch)
        total += len(batch)
    return prefix if total == decided else None


def records(out_dir) -> list[dict]:
    """Every decided configuration of the campaign in `out_dir` (a folder, or the jobs.Store a run holds open: its
    refusals then say how to start over), by index, after the integrity checks of the module docstring (BadInput
    on the first failure)."""
    return read_with_batches(out_dir)[0]


def read_with_batches(out_dir) -> tuple[list[dict], list[list[int]]]:
    """records(out_dir), and the indices of each committed chunk in the manifest's order, each in the order
    decide_chunk took them: the batches float64 and tier 3 saw (tier 3's bounds on a configuration depend on
    the others in its batch)."""
    store = out_dir if isinstance(out_dir, jobs.Store) else _read(out_dir)
    if store.count > MAX_COUNT:
        raise store.corrupt("manifest.json has no valid count")
    hold_stride = max(1, store.count // HOLD_SAMPLES)  # Campaign.hold_stride of the stored campaign
    cap = store.parameters.get("max_prec")
    if type(cap) is not int or not engine.START_PRECISION <= cap <= engine.PRECISION_LIMIT:
        raise store.corrupt("manifest.json has no valid max_prec")
    precisions = set(ladder(engine.START_PRECISION, cap))
    found = {record["i"]: record for record in  # in the order committed
             store.records(lambda record, where: _check_record(store, record, where, hold_stride, precisions))}
    _cross_check(store, found, hold_stride)
    order, batches, start = list(found), [], 0
    for entry in store.manifest["chunks"]:
        if start < len(order):  # not the last entry a killed run left without its file
            batches.append(order[start:start + entry["records"]])
        start += entry["records"]
    return [found[i] for i in sorted(found)], batches


# ---------------------------------------------------------------------------------------------
# Running


def run(campaign: Campaign, out_dir, *, workers: int | None = None, progress: bool = False,
        stop_after: int | None = None, restart: bool = False, executor: str = "pool",
        scheduler: str | None = None, on_summary: Callable[[dict, list[dict]], object] | None = None,
        names: Spelling = OPTIONS) -> dict:
    """Run (or resume) a campaign in `out_dir`; return its summary (also written to summary.json).

    `stop_after`: decide this many more configurations, or up to a chunk more (whole chunks of about 1/8 of it
    per worker), then stop; running the same campaign again continues.  `restart`: discard a previous campaign in the folder.
    `executor`, `workers`, `scheduler`: where the chunks run (certify.jobs.executor).
    `on_summary(summary, records)`: the caller's derived files (figures, page) of the summary and of the records it
    summarises (read once: the figures read them again, the manifest and every chunk), written while this run still
    holds the folder, so that a run started meanwhile does not write them at the same time; also when
    the run is interrupted (they go with summary.json, which an interruption rewrites).  Without it (certify.sample)
    the page and histograms of an earlier summary are removed (_undraw).
    `names`: the parameters as a refusal names them (OPTIONS, the command's; KEYWORDS, certify.sample's).
    """
    campaign = campaign.validated(names)
    runner = jobs.executor(executor, workers=workers, scheduler=scheduler, option=workers_option(names))
    if stop_after is not None and stop_after < 1:
        raise BadInput(f"{names.option('stop_after')} must be at least 1, got {stop_after}")
    with jobs.Store.open(out_dir, campaign.manifest(), outputs=OUTPUTS, noun="campaign", restart=restart,
                         names=names) as store:
        try:
            return _run(campaign, store, runner, progress, stop_after, on_summary or (lambda *_: _undraw(store)))
        except KeyboardInterrupt as stop:  # wherever it landed (reading the records: seconds), say what is kept
            if isinstance(stop, Interrupted):
                raise
            raise jobs.interrupted(store) from None


def _undraw(store: jobs.Store) -> None:
    """Remove the page and histograms of the folder, for a run that draws none (certify.sample): those `certify
    sample` drew of an earlier summary (a page of 10 of 300 checked, undecided) contradicted the new summary.json."""
    for name in DRAWN:
        (store.folder / name).unlink(missing_ok=True)


def _run(campaign: Campaign, store: jobs.Store, runner, progress: bool, stop_after: int | None,
         on_summary: Callable[[dict, list[dict]], object]) -> dict:
    """run() once the folder is open (and locked for this run)."""
    done = {record["i"] for record in records(store)}  # indices in range, each once (the folder's checks)
    # made as the chunks are taken: a list of every index left was 36 GB for --count 1e9 --stop-after 10
    todo = (i for i in range(campaign.count) if i not in done)
    with jobs.started(store, runner):
        workers = runner.workers
        # chunks over what this run decides (--stop-after's, whose last chunk may pass it: by less than a chunk)
        left = campaign.count - len(done)
        wanted = left if stop_after is None else min(left, stop_after)
        size = max(1, min(campaign.chunk_limit, math.ceil(wanted / (CHUNKS_PER_WORKER * workers))))
        started = time.time()
        bar = progress_display.bar(total=campaign.count, initial=len(done), unit="config",
                                   desc=campaign.distribution, show=progress, leave=True)
        try:
            report = jobs.run(store, runner, decide_chunk, campaign, jobs.grid_chunks(todo, size),
                              stop_after=stop_after, on_commit=bar.update)
            # what the bar, at its end, waits for: every record read again (seconds for 100,000 of them)
            bar.set_postfix_str(f"summarising {len(done) + report.decided} records")
        except KeyboardInterrupt:
            _summarise_interrupted(campaign, store, runner.kind, workers, started, len(done), on_summary)
            raise
        finally:
            bar.close()
    try:  # after the last chunk: reading many records takes seconds, and a Ctrl-C then says what is kept too
        summary, decided = _write_summary(campaign, store, report, runner.kind, workers, started)
        on_summary(summary, decided)
    except KeyboardInterrupt:
        _summarise_interrupted(campaign, store, runner.kind, workers, started, len(done), on_summary)
        raise
    return summary


def _summarise_interrupted(campaign: Campaign, store: jobs.Store, executor: str, workers: int, started: float,
                           before: int, on_summary: Callable[[dict, list[dict]], object]) -> None:
    """After Ctrl-C, the committed chunks' summary (summary.json is not left an earlier run's) and the page and
    figures of that summary; a second Ctrl-C stops the figures and page at once."""
    summary, decided = _write_summary(campaign, store, jobs.Report(), executor, workers, started, before)
    try:
        on_summary(summary, decided)
    except KeyboardInterrupt:  # a second Ctrl-C: stop now, still saying how much is kept
        pass


def _write_summary(campaign: Campaign, store: jobs.Store, report, executor: str, workers: int, started: float,
                   before: int | None = None) -> tuple[dict, list[dict]]:
    """Write summary.json of every committed record and this run (`before`: the records it found, when its
    report is lost to an interruption); return the summary and the records."""
    seconds = time.time() - started
    decided = records(store)
    now = report.decided if before is None else len(decided) - before
    result = summarize(campaign, decided, _tier3_off(campaign, report, before))
    result["run"] = {"decided": now, "seconds": round(seconds, 2), "workers": workers,
                     "per_second": round(now / seconds, 1) if seconds > 0 else None,
                     "executor": executor, "failed_chunks": report.failed}
    store.write(SUMMARY, jsonfile.dumps(result))
    return result, decided


def _tier3_off(campaign: Campaign, report, before: int | None) -> str | None:
    """Why tier 3 did not run where this run's chunks were decided (their notes), or None; for an interrupted run,
    whose chunks' notes are lost, why it cannot run here."""
    if campaign.tier != "tier3":
        return None
    return tier3.unusable_reason() if before is not None else "; ".join(report.notes) or None


# ---------------------------------------------------------------------------------------------
# The summary


def _decade(margin_log10: float) -> int:
    """k such that the relative margin lies in [10^-(k+1), 10^-k), clipped to 0..16."""
    return min(16, max(0, math.floor(-margin_log10)))


def _decade_label(k: int) -> str:
    if k == 0:
        return ">= 1e-1"
    if k == 16:
        return "< 1e-16"  # below float64's resolution
    return f"1e-{k + 1} .. 1e-{k}"


def _spread(values: list[float]) -> dict | None:
    return {"min": min(values), "median": median(values), "max": max(values)} if values else None


def reason_kind(reason: str) -> str:
    """The kind of an undecided record's reason, by which the summary counts them (undecided_reasons)."""
    if reason.startswith("the two sides agree"):
        return "sides agree to the precision cap (an equality, or a margin below it)"
    if " is exactly 0 and the enclosure of " in reason:
        return "a bound of exactly 0 beside a side enclosing 0 (an equality at 0, or a margin below the cap)"
    if reason.startswith("the enclosure of") and " is still wide at " in reason:
        return "a side still wide at the precision cap"
    if reason.startswith("undecided at the precision cap"):
        return "precision cap reached"
    if "checker did not confirm" in reason:
        return "checker did not confirm"
    return reason


def _ratio_order(record: dict) -> tuple[float, float]:
    """Order by lhs/rhs; float64 ratios tie at 1.0 in the saturated regime, so break ties with the
    exact relative margin (larger when violated, smaller when it holds, means a larger ratio)."""
    sign = 1 if record["verdict"] == engine.VIOLATED else -1
    return record["ratio"], sign * (record["margin_log10"] if record["margin_log10"] is not None else -math.inf)


def largest_ratio(decided: list[dict]) -> dict | None:
    """The record of the largest lhs/rhs (the summary's "largest_ratio"), or None when no record has one."""
    return max((r for r in decided if r["ratio"] is not None), key=_ratio_order, default=None)


def overall_verdict(counts: dict) -> str:
    """The campaign's verdict from its summary's counts: violated if any configuration is, else
    undecided if any is, else holds."""
    if counts[engine.VIOLATED]:
        return engine.VIOLATED
    return engine.UNDECIDED if counts[engine.UNDECIDED] else engine.HOLDS


def summary_target(summary: dict) -> str:
    """What the campaign of a summary decides, as its outputs name it: the claim's id, or "bound EXPR" (a campaign
    has one or the other, Campaign.validated)."""
    m = summary["campaign"]
    return m["claim"] if m["bound"] is None else f"bound {m['bound']}"


def summary_verdict(summary: dict) -> str:
    """The verdict of a campaign's summary: overall_verdict of its counts, but undecided while it is incomplete
    and nothing is violated (no verdict for configurations not decided).  What `certify sample` exits with,
    its report page and SampleResult say (SampleResult said holds for 38 of 300 decided)."""
    verdict = overall_verdict(summary["counts"])
    return engine.UNDECIDED if not summary["complete"] and verdict == engine.HOLDS else verdict


def summary_certified(summary: dict) -> bool:
    """Whether the checker stands behind the summary's verdict: not when it is holds resting on tier 3's holds
    (uncertified_holds), which every output of the campaign labels not certified."""
    return not (summary_verdict(summary) == engine.HOLDS and uncertified_holds(summary))


def summarize(campaign: Campaign, decided: list[dict], tier3_off: str | None = None) -> dict:
    """Counts per verdict, the largest lhs/rhs, the margins, float64's mistakes, and where files are; tier3_off:
    why tier 3 did not run in this run (_tier3_off)."""
    counts = Counter(r["verdict"] for r in decided)
    largest = largest_ratio(decided)
    histogram: dict = {}
    for verdict in (engine.HOLDS, engine.VIOLATED):
        margins = [r["margin_log10"] for r in decided if r["verdict"] == verdict and r["margin_log10"] is not None]
        decades = Counter(_decade(m) for m in margins)
        histogram[verdict] = {"log10": _spread(margins),
                              "decades": {_decade_label(k): decades[k] for k in sorted(decades)}}
    wrong = [r["i"] for r in decided if r["verdict"] != engine.UNDECIDED and r["float64"] != r["verdict"]]
    unsure = [r["i"] for r in decided if r["verdict"] == engine.UNDECIDED]
    Ls = [r["L"] for r in decided if r["L"] is not None]
    certificates = [r for r in decided if r["certificate"]]
    return {
        "format": SUMMARY_FORMAT,
        "campaign": campaign.manifest(),
        "decided": len(decided),
        "complete": len(decided) == campaign.count,
        "counts": {v: counts.get(v, 0) for v in (engine.HOLDS, engine.VIOLATED, engine.UNDECIDED)},
        "tiers": dict(Counter(r["tier"] for r in decided)),
        # the verdicts no checker has confirmed: tier 3's holds (uncertified_holds)
        "not_certified": {engine.HOLDS: sum(r["tier"] == "tier3" for r in decided)},
        # a failed floating-point model probe turned the float64 tier off where this run decided: arb did instead
        "tier3_off": tier3_off,
        "undecided_reasons": dict(Counter(reason_kind(r["reason"]) for r in decided
                                          if r["verdict"] == engine.UNDECIDED)),
        "undecided_indices": unsure[:LISTED],
        "largest_ratio": None if largest is None else {"ratio": largest["ratio"], "i": largest["i"],
                                                       "verdict": largest["verdict"], "tier": largest["tier"],
                                                       "margin_log10": largest["margin_log10"]},
        "margins": histogram,
        "float64": {
            # float64's verdict (lhs <= rhs in the engine's float64 screen) against the rigorous one
            "wrong": len(wrong), "wrong_indices": wrong[:LISTED],
            # the screen always says holds or violated, so every undecided case is one it would have decided
            "says_decided_but_undecided": len(unsure),
            "equal_sides": sum(r["float64_equal"] for r in decided),
            "bound_is_D": sum(r["float64_bound_is_D"] for r in decided),
            "gap_is_zero": sum(r["float64_gap_zero"] for r in decided),
        },
        "L": {**(_spread(Ls) or {}), "regimes": {
            "L < 1": sum(L < 1 for L in Ls),
            f"1 <= L < {ONE_MINUS_GAP_IS_ONE:.2f}": sum(1 <= L < ONE_MINUS_GAP_IS_ONE for L in Ls),
            f"{ONE_MINUS_GAP_IS_ONE:.2f} <= L < {GAP_UNDERFLOWS:.2f}":
                sum(ONE_MINUS_GAP_IS_ONE <= L < GAP_UNDERFLOWS for L in Ls),
            f"L >= {GAP_UNDERFLOWS:.2f}": sum(L >= GAP_UNDERFLOWS for L in Ls)}},
        "certificates": {
            "violated": counts.get(engine.VIOLATED, 0),
            "holds": sum(r["verdict"] == engine.HOLDS for r in certificates),
            "paths": [r["certificate"] for r in certificates if r["verdict"] == engine.VIOLATED][:LISTED]
            + [r["certificate"] for r in certificates if r["verdict"] == engine.HOLDS][:LISTED],
        },
    }


# ---------------------------------------------------------------------------------------------
# The Python API: certify.sample


@dataclass
class SampleResult:
    """A campaign's outcome: its folder and summary (summary.json); verdict and counts over every record."""

    folder: Path
    summary: dict = field(repr=False)

    @property
    def counts(self) -> dict:
        """Configurations decided per verdict (holds, violated, undecided)."""
        return dict(self.summary["counts"])

    @property
    def verdict(self) -> str:
        """violated if any configuration is, else undecided if any is or the campaign is incomplete, else holds."""
        return summary_verdict(self.summary)

    @property
    def certified(self) -> bool:
        """False when the verdict is holds resting on tier 3's holds, which no checker confirmed (summary_certified)."""
        return summary_certified(self.summary)

    @property
    def exit_code(self) -> int:
        """The exit code of `certify sample` for this campaign."""
        return engine.EXIT_CODES[self.verdict]

    def __repr__(self) -> str:
        m = self.summary["campaign"]
        counts = ", ".join(f"{verdict} {k}" for verdict, k in self.summary["counts"].items())
        return short_repr(f"sample {labelled(self.verdict, self.certified)}", f"{self.summary['decided']} of {m['count']} checked ({counts}); "
                          f"{self.folder}; {summary_target(self.summary)}")


def sample(claim: str | None = None, bound: str | None = None, *, n: int, d: int, count: int, out, seed: int = 0,
           distribution: str = "gaussian", l_range: tuple[float, float] | None = None, d_k: int | None = None,
           max_prec: int = engine.DEFAULT_MAX_PRECISION, tier: str = "arb", workers: int | None = None,
           progress: bool = False, stop_after: int | None = None, restart: bool = False, limits: Limits | None = None,
           **parts) -> SampleResult:
    """Decide a claim (default collapse.global) or a bound on `count` configurations sampled from
    `distribution` (certify.search.samplers) with n tokens in d dimensions, as `certify sample` does:
    records and certificates go to the folder `out` (resumed when it holds the same campaign).
    `l_range`: (LO, HI), each configuration's L = a D^2 drawn log-uniformly in it (default the distribution's);
    L_range=, its spelling before certify.attack's, is taken with a DeprecationWarning until the next release.
    `d_k`: a thin head W_Q, W_K of d_k columns (1 <= d_k < d) instead of the distribution's head.
    `parts`: the layer beyond the head, as samplers.LayerParts (mask="causal", value="orthogonal", ...).
    `limits`: the caps (certify.core.limits) to decide under, default the documented ones.
    `progress`: true or false, whether to show the command's progress bar (certify.verify, attack, trajectory and
    prove take a function to call instead).  BadInput names the keywords (`count=`) where a value is refused."""
    if "L_range" in parts:
        warnings.warn("certify.sample's L_range= is deprecated: use l_range=", DeprecationWarning, stacklevel=2)
        if l_range is not None:
            raise BadInput("give l_range= only (L_range= is its deprecated spelling), not both")
        l_range = parts.pop("L_range")
    unknown = set(parts) - set(PARTS)
    if unknown:  # **parts takes a misspelt option too: Max_prec given here was "an unknown layer part"
        options = [name for name in inspect.signature(sample).parameters if name != "parts"]
        meant = [option for key in sorted(unknown) for option in options if option.lower() == key.lower()]
        raise BadInput(f"unknown layer part(s) {keys_shown(unknown)}; known: {', '.join(PARTS)}"
                       + (f" (the option is {', '.join(meant)})" if meant else ""))
    out = folder_path(out, KEYWORDS.option("out"))
    n, d, count, seed, max_prec = (integer(value, KEYWORDS.option(key)) for key, value in (
        ("n", n), ("d", d), ("count", count), ("seed", seed), ("max_prec", max_prec)))
    d_k = None if d_k is None else integer(d_k, KEYWORDS.option("d_k"))
    progress, restart = flag(progress, KEYWORDS.option("progress")), flag(restart, KEYWORDS.option("restart"))
    workers, stop_after = (None if value is None else integer(value, KEYWORDS.option(key))
                           for key, value in (("workers", workers), ("stop_after", stop_after)))
    l_range = None if l_range is None else samplers.L_RANGE.checked(l_range, KEYWORDS.option("L_range"))
    spec = Campaign(distribution=distribution, n=n, d=d, count=count, seed=seed, claim=claim, bound=bound,
                    L_range=l_range, max_prec=max_prec, tier=tier, d_k=d_k,
                    limits=None if limits is None else vars(given_limits(limits)), **parts)
    with KEYWORDS.respelling(OPTIONS):  # a limit's refusal (limits=Limits(work=N)); the records keep the command's
        summary = run(spec, out, workers=workers, progress=progress, stop_after=stop_after, restart=restart,
                      names=KEYWORDS)
    return SampleResult(Path(out), summary)
