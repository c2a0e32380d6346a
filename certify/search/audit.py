"""Re-deriving a campaign folder: `certify verify FOLDER` (or its manifest.json).

A campaign's records name their configurations reproducibly (the manifest and the index
regenerate each one, certify.search.samplers), with a verdict and the tier that decided it.  The
audit first runs every record's configuration through float64 and, in a tier3 campaign, tier 3
(batched, at near float speed): a record's float64 fields (L, the float64 verdict and flags) must be
what float64 computes here, but for another machine's rounding (SLACK, APART), and a tier-3 hold's
figures (lhs/rhs, the relative margin, the margin) must be those of a hold, consistent with one another.
Then it regenerates and decides again in arb (certify.engine.check, the checker confirming every decided
verdict):
    - every violated and every undecided record, and every record with a certificate file;
    - every hold float64 finds violated here (all of a few, SAMPLE of many): float64's rare mistakes, and
      where a violation recorded as a hold would be;
    - every hold whose float64 sides are too close to tell (APART) or beyond float64's range, and that tier 3
      does not decide here (all of a few, SAMPLE of many): where an undecided case, or a violation float64
      misses, recorded as a hold would be;
    - the record of the summary's largest lhs/rhs;
    - every tier-3 hold tier 3 does not decide here, and holds recorded as arb's that tier 3 decides
      here in a tier3 campaign (all of a few, SAMPLE of many): arb stands for the tier a record names;
    - the tier-3 holds whose figures are not those tier 3 computes here in the campaign's own batches
      (TIER3_SLACK; all of a few, SAMPLE of many): edited, or written by another version of tier 3,
      whose bounds are as valid and other; arb's enclosures tell them apart;
    - SAMPLE other records drawn at random from fresh randomness (so a folder cannot be prepared
      for the sample it will meet), or all of them with everything=True (`--all`);
on a process pool (every core by default).  A record decided again must state arb's verdict and, decided
in arb, its precision, lhs/rhs and margins (to the figures a summary shows) and the kind of its reason (by
which the summary counts undecided records); a tier-3 hold's bounds must
agree with arb's enclosures (bounds from the right side, not equal figures).  A stored certificate must be confirmed by the checker, state the record's verdict and
precision and be about the regenerated configuration, and an undecided record's undecided/ file must state that
configuration as the run wrote it (a user checks it again from there).  The audit rejects the folder if any of this
differs, if a record is malformed, repeated or out of range, if a violation has no certificate, if a
configuration of the campaign has no record (an interrupted campaign is not yet the campaign its manifest
describes: the problem names the command that finishes it), or if summary.json does not say what the
records say (the counts a reader looks at first, every verdict's; one an interrupted run left is named stale, with
the command that rewrites it).  An arb record's figures and verdict, and a tier-3 hold's figures that tier 3 here
does not compute alike, where not re-derived, are trusted only as far as the sample goes.
"""

from __future__ import annotations

import functools
import math
import random
import sys
from dataclasses import MISSING, dataclass, field
from dataclasses import fields as parameters_of
from pathlib import Path
from typing import Callable

from certify import engine, jobs
from certify.engine import certificate
from certify.core import config, files, jsonfile
from certify.core.float64_limits import GAP_UNDERFLOWS, ONE_MINUS_GAP_IS_ONE
from certify.core.report_files import PAGE, RUN_RESULTS, TRAJECTORY_CERTIFICATE
from certify.errors import BadInput, keys_shown, shown
from certify.search import attack_folder, campaign as campaigns, tier3
from certify.search.audit_options import SAMPLE

# How far a figure computed again on another machine (BLAS kernels and summation order, FMA, libm) may differ
# and be no disagreement, relatively.  L = a D^2 comes from the exact inputs through a LAPACK norm: a few ulps.
SLACK = 1e-9
# float64's sides of a claim can cancel (D of a near-permutation P X), so another BLAS may move them far more:
# the float64 verdict is checked only where its sides are this far apart (elsewhere it is rounding's toss)
APART = 1e-3
# tier 3's bounds: an enclosure's end moves with the midpoint another BLAS computes, well inside its radius
# (another version of tier 3 computes other bounds: those records go to arb, not to the problems)
TIER3_SLACK = 1e-6
# a relative margin (rhs - lhs) / rhs = 1 - lhs/rhs is at most this in binary64: 10^308.25...
LARGEST_LOG10 = math.log10(sys.float_info.max)
TIERS = set(campaigns.TIERS)
VERDICTS = {engine.HOLDS, engine.VIOLATED, engine.UNDECIDED}
LISTED = 10  # problems listed in the report
# what every campaign's summary.json has stated since it has been checked: present, whatever the version
SUMMARY_ESSENTIALS = ("format", "campaign", "decided", "complete", "counts")


@dataclass
class Audit:
    """What `certify verify FOLDER` found in a campaign folder: how many records it holds, how many were
    decided again in arb, and every disagreement or integrity problem (none: the folder is confirmed)."""

    records: int  # records in the folder
    rederived: int  # records decided again
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a confirmation does not cover (no summary.json)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def load(path, manifest=None) -> tuple[campaigns.Campaign, Path]:
    """The campaign of a folder (or of its manifest.json), validated, and the folder; `manifest`: the manifest as
    jobs.read_manifest read it, where the caller has (None: read here, once)."""
    path = Path(path)
    folder = path.parent if path.name == "manifest.json" else path
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        if (folder / attack_folder.PARAMETERS).is_file():  # say what checks an attack's result instead
            found = folder / attack_folder.CERTIFICATE
            raise BadInput(f"{folder}: an attack's folder, not a campaign's; " + (
                f"check its counterexample with: certify verify {found}" if found.is_file()
                else "it holds no certificate (the attack certified no counterexample)"))
        if (folder / TRAJECTORY_CERTIFICATE).is_file():
            raise BadInput(f"{folder}: a trajectory's folder, not a campaign's; check its certificate with: "
                           f"certify verify {folder / TRAJECTORY_CERTIFICATE}")
        if (folder / RUN_RESULTS).is_file() and (folder / PAGE).is_file():
            raise BadInput(f"{folder}: the report folder of `certify run`, not a campaign's; its page {folder / PAGE} "
                           "gives the `certify verify` command of every certificate and campaign in it")
        if jobs.uncommitted(folder, campaigns.OUTPUTS):
            with jobs.reading(folder, noun="campaign"):  # a run that is beginning there now: "being written"
                pass
            raise BadInput(f"{folder}: no run has committed anything in this folder (the run that began it was stopped "
                           "before it wrote manifest.json): nothing to verify; run its command again to start it")
        missing = ("manifest.json is no file: a folder, a pipe or a broken link" if manifest_path.is_symlink()
                   or manifest_path.exists() else "no manifest.json")
        raise BadInput(f"{path}: neither a certificate nor a campaign or corpus run folder ({missing})")
    manifest = jobs.read_manifest(manifest_path) if manifest is None else manifest
    stated = jobs.stated_format(manifest)
    if jobs.another_kind(stated, campaigns.FORMAT):
        # another job's folder (a `model --corpus` run, ...): say what it is, not that it was edited
        kept = sorted((folder / "certificates").glob("*.json"))  # where a job keeps them (a corpus run's too)
        which = (f"e.g. certify verify {kept[0]} ({len(kept)} in {folder / 'certificates'})" if kept
                 else "it keeps none")
        # certify.verify (certify.api, the command's too) dispatches a `model --corpus` folder to its own audit
        # (certify.studies.models.corpus_audit), which this layer does not reach
        raise BadInput(f"{folder}: not a campaign folder of `certify sample` (its manifest.json is of format "
                       f"{stated!r}, not {campaigns.FORMAT}); the command `certify verify {folder}` re-checks a "
                       f"`certify model --corpus` folder, and checks a certificate it keeps: {which}")
    try:
        stored = campaigns.stored_parameters(folder, manifest)
        stored.pop("format")
        spec = campaigns.Campaign(**_parameters(stored, manifest_path))
    except BadInput:  # the folder's own one line (a corrupt manifest, ...)
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as err:  # what a parameter's own check did not say
        raise BadInput(f"{manifest_path}: not a campaign manifest ({err})") from None
    validated = spec.validated()
    if validated != spec:
        raise BadInput(f"{manifest_path}: the manifest is not in the canonical form a campaign writes")
    return spec, folder


def _parameters(manifest: dict, where: Path) -> dict:
    """A manifest's parameters as campaign.Campaign's keywords, or BadInput naming a key missing, unknown or of another
    form (Campaign.validated judges the values): a forged manifest with its chain made anew was refused in Python's
    words ("Campaign.__init__() missing 1 required positional argument: 'n'")."""
    keys = {f.name: f.default is MISSING and f.default_factory is MISSING for f in parameters_of(campaigns.Campaign)}
    wrong = [f"{key} is missing" for key, required in keys.items() if required and key not in manifest]
    # each unknown key cut short, and ten of them listed: a million made a line of 26 MB
    if unknown := [key for key in manifest if key not in keys]:
        wrong.append(f"an unknown key {shown(unknown[0])}" if len(unknown) == 1
                     else f"unknown keys {keys_shown(unknown)}")
    L_range = manifest.get("L_range")
    if L_range is not None and not isinstance(L_range, list):
        wrong.append("L_range is not an array of two numbers")
    if wrong:
        raise BadInput(f"{where}: not a campaign manifest: {'; '.join(wrong)}")
    return {**manifest, "L_range": None if L_range is None else tuple(L_range)}


def rederive_and_confirm(spec: campaigns.Campaign, items: list[tuple[int, dict]],
                         folder: Path) -> list[tuple[tuple, str | None]]:
    """((index, name, verdict, the record's other arb fields and reason, _ends), the problem of the certificate the
    record names, or of an undecided record's undecided/ file, or None) of each (index, record) of the campaign in
    `folder`: each configuration decided again in arb, and the checker's confirmations of its certificate on the pool
    too, not one by one in the parent (runs in a worker)."""
    goal = engine.target(spec.claim, spec.bound)
    out = []
    # each configuration drawn once: the one re-derived is the one its certificate must be about
    for (i, record), item in zip(items, spec.samples([i for i, _ in items])):
        result, verdict, decision, reason = campaigns.decided(spec, item.config, goal)
        # the reason too: the summary counts undecided records by its kind (campaign.reason_kind)
        row = (i, item.config["name"], verdict, {**decision, "reason": reason},
               None if result is None else _ends(result))
        out.append((row, _certificate_problem(folder, record, spec, item.config) if record.get("certificate")
                    else _undecided_problem(folder, i, item.config) if record["verdict"] == engine.UNDECIDED
                    else None))
    return out


def _undecided_problem(folder: Path, i: int, sampled: dict) -> str | None:
    """What is wrong with the undecided/ file of configuration i (None when nothing): it must state `sampled`, the
    campaign's configuration i, as the run wrote it (a user checks it again at a higher cap from that file)."""
    path = campaigns.undecided_path(i)
    where = f"configuration {i}: {path.as_posix()}"
    if not (folder / path).is_file():
        return f"{where} is missing"
    if not files.holds(folder / path, campaigns.undecided_text(sampled).encode("utf-8")):
        return f"{where} is not the campaign's configuration {i} (edited)"
    return None


def _ends(result: engine.Result) -> tuple[float, float, float] | None:
    """(a lower bound of lhs/rhs, an upper bound of (rhs - lhs) / |rhs|, an upper bound of rhs - lhs) of the
    tightest comparison, from its balls (a record's figures are their midpoints, which a wide ball leaves far
    from the truth), or None when rhs may be 0."""
    c = result.tightest
    if c.rhs.contains(0):
        return None
    return (float((c.lhs / c.rhs).lower()), float(((c.rhs - c.lhs) / abs(c.rhs)).upper()),
            float((c.rhs - c.lhs).upper()))


def screen(spec: campaigns.Campaign, batches: list[tuple[int, ...]]) -> list[dict]:
    """What float64 and, in a tier3 campaign, tier 3 say of each configuration of these batches of the campaign
    (runs in a worker): its record's float64 fields (campaign.Screened.facts), the float64 sides and the
    fields of a tier-3 hold (None where tier 3 does not decide it).  Tier 3's bounds on a configuration depend
    on the others of its batch: they are computed in the campaign's own."""
    if spec.tier != "tier3":  # float64's figures of a configuration do not depend on its batch: larger ones
        flat = [i for batch in batches for i in batch]
        batches = [flat[k:k + spec.batch_limit] for k in range(0, len(flat), spec.batch_limit)]
    rows = []
    for batch in batches:
        first = campaigns.screened(spec, list(batch))
        rows += [{**first.facts(k), "pairs": first.pairs(k), "tier3": first.tier3_hold(k)} for k in range(len(batch))]
    return rows


def _close(recorded, seen, slack: float) -> bool:
    """Two figures agree to a relative `slack` (None, a number past float64's range, only with None)."""
    if recorded is None or seen is None:
        return recorded is None and seen is None
    return (type(recorded) in (int, float) and math.isfinite(recorded) and math.isfinite(seen)
            and abs(recorded - seen) <= slack * max(abs(recorded), abs(seen)))


def _near(x: float | None, edge: float) -> bool:
    return x is not None and abs(x - edge) <= SLACK * edge


def _float64_problem(record: dict, seen: dict) -> str | None:
    """How the record's float64 fields differ from what float64 computes here (screen), beyond what another
    machine's rounding (BLAS order, libm) can change: L to SLACK, a flag of 1 - exp(-L) or exp(-L) only away
    from the edge of float64's range, the float64 verdict only where each inequality's sides are APART."""
    where = f"configuration {record['i']}"
    if record["name"] != seen["name"]:
        return f"{where}: the record names {record['name']!r}, the campaign {seen['name']!r}"
    if not _close(record["L"], seen["L"], SLACK):
        return f"{where}: the record says L = {record['L']}, float64 computes {seen['L']}"
    for flag, edge in (("float64_bound_is_D", ONE_MINUS_GAP_IS_ONE), ("float64_gap_zero", GAP_UNDERFLOWS)):
        if record[flag] != seen[flag] and not _near(seen["L"], edge):
            return f"{where}: the record says {flag} = {record[flag]}, float64 computes {seen[flag]}"
    pairs = seen["pairs"]
    beyond = not all(math.isfinite(side) for pair in pairs for side in pair)
    said = {key: record[key] for key in ("float64", "float64_equal")}
    if (_apart(pairs) or beyond) and said != campaigns.float64_opinion(pairs):
        return f"{where}: the record's float64 fields {said} are not what float64 computes"
    return None


def _apart(pairs: list[tuple[float, float]]) -> bool:
    """Each inequality's float64 sides are APART (both finite): float64's verdict is no rounding's toss."""
    return all(abs(lhs - rhs) > APART * max(abs(lhs), abs(rhs)) for lhs, rhs in pairs)


def _tier3_differs(record: dict, seen: dict) -> bool:
    """Whether tier 3 here decides the hold and computes other bounds (lhs/rhs from above, the relative margin
    from below, the margin) than the record's, beyond another machine's rounding: an edited record, or one of
    another version of tier 3 (arb's enclosures tell them apart)."""
    fast = seen["tier3"]
    if fast is None:
        return False
    relative = abs(_relative_margin(record["margin_log10"]) - _relative_margin(fast["margin_log10"]))
    return (not _close(record["ratio"], fast["ratio"], TIER3_SLACK)
            or relative > 4 * TIER3_SLACK * max(1.0, abs(fast["ratio"] or 1.0))
            # the margin's digits, unless rhs - lhs is so small against rhs that rounding moves them
            or fast["margin_log10"] is not None and fast["margin_log10"] > -3
            and not _same_margin(record["margin"], fast["margin"]))


def _relative_margin(log10: float | None) -> float:
    """The relative margin (rhs - lhs) / rhs of a record's margin_log10 (None: rhs == lhs, 0), kept from
    overflowing."""
    return 0.0 if log10 is None else 10.0 ** min(log10, 300)


def _number(text: str) -> float:
    """A record's margin text as a number (nan when it is none)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _tier3_figures_problem(record: dict) -> str | None:
    """Why a tier-3 hold's figures cannot be those of a hold (campaign.Screened.tier3_hold): lhs/rhs finite,
    the relative margin (rhs - lhs) / rhs = 1 - lhs/rhs finite and equal to 1 - lhs/rhs to the rounding of
    the two (absent only when rhs = lhs), the margin rhs - lhs a finite number >= 0."""
    ratio, log10, margin = record["ratio"], record["margin_log10"], _number(record["margin"])
    consistent = (ratio is None or math.isfinite(ratio)) and margin >= 0 and math.isfinite(margin)
    if log10 is None:
        consistent = consistent and ratio in (None, 1.0)
    elif not (math.isfinite(log10) and log10 <= LARGEST_LOG10):
        consistent = False
    elif ratio is not None:
        relative = 10.0**log10
        consistent = consistent and abs(relative - (1 - ratio)) <= 1e-12 * max(1.0, abs(ratio)) + 1e-9 * relative
    if consistent:
        return None
    shown = {key: record[key] for key in ("ratio", "margin_log10", "margin")}
    return f"configuration {record['i']}: the tier-3 record's {shown} are not the figures of a hold"


def _arb_problem(record: dict, fields: dict) -> str | None:
    """How an arb record's precision, lhs/rhs, relative margin, margin and reason differ from arb's decision here
    (to the figures a summary shows: another python-flint may round a midpoint otherwise, another version word a
    reason otherwise within its kind)."""
    log10 = record["margin_log10"], fields["margin_log10"]
    if (record["precision"] != fields["precision"] or not _close(record["ratio"], fields["ratio"], 1e-6)
            or (None in log10 and log10[0] != log10[1]) or None not in log10 and abs(log10[0] - log10[1]) > 0.01
            or not _same_margin(record["margin"], fields["margin"])
            or campaigns.reason_kind(record["reason"]) != campaigns.reason_kind(fields["reason"])):
        shown = {key: record[key] for key in fields}
        return f"configuration {record['i']}: the record's {shown} are not arb's {fields}"
    return None


def _bound_problem(record: dict, ends: tuple[float, float, float] | None) -> str | None:
    """How a tier-3 hold's bounds (lhs/rhs from above, the relative margin and the margin from below) contradict
    arb's enclosures of the same claim (_ends: tier 3 keeps the comparison whose bounds are tightest, so its ratio
    bounds every comparison's from above, and arb's lower end bounds it from below)."""
    if ends is None:
        return None
    ratio, slack, gap = ends
    margin = record["margin_log10"]
    if (record["ratio"] is not None and record["ratio"] < ratio - SLACK * abs(ratio)
            or margin is not None and _relative_margin(margin) > slack + SLACK * abs(slack)
            # the margin rhs - lhs to 3 digits, rounded to nearest: at most half a unit of its third digit above
            or not _number(record["margin"]) <= gap * 1.01):
        shown = {key: record[key] for key in ("ratio", "margin_log10", "margin")}
        return (f"configuration {record['i']}: the tier-3 record's bounds {shown} contradict arb's enclosures "
                f"(lhs/rhs >= {ratio:.6g}, relative margin <= {slack:.6g})")
    return None


def _same_margin(recorded: str, seen: str) -> bool:
    """Two margins' texts (3 digits) say the same, but for the last digit's rounding."""
    a, b = _number(recorded), _number(seen)  # nan for a text that is no number: then only the same text
    return recorded == seen or a != 0 and b != 0 and _close(a, b, 0.01)


def _record_problem(record, count: int) -> str | None:
    if not isinstance(record, dict) or type(record.get("i")) is not int or not 0 <= record["i"] < count:
        return f"a record without a valid index: {str(record)[:80]}"
    if record.get("verdict") not in VERDICTS:
        return f"configuration {record['i']}: verdict {record.get('verdict')!r} is not a verdict"
    if record.get("tier") not in TIERS:
        return f"configuration {record['i']}: tier {record.get('tier')!r} is not one certify decides with"
    if not isinstance(record.get("certificate"), (str, type(None))):
        return f"configuration {record['i']}: certificate {record.get('certificate')!r} is not a path"
    if record["verdict"] == engine.VIOLATED and not record.get("certificate"):
        return f"configuration {record['i']}: violated without a certificate"
    return None


def _missing_problem(spec: campaigns.Campaign, folder: Path, by_index: dict) -> str | None:
    """Why a folder without a record for every configuration of its campaign is not the campaign: an
    interrupted run (resumable), or records taken away (a chunk of violations deleted and the manifest
    redone would otherwise leave a clean folder)."""
    count = spec.count
    if len(by_index) == count:  # indices in range, each once (the folder's checks)
        return None
    # the absent indices as ranges "a-b", from the gaps between those recorded: listing every absent index one by
    # one took 36 GB for a campaign of --count 1e9 stopped early
    runs, previous = [], -1
    for i in [*sorted(by_index), count]:
        if i > previous + 1:
            runs.append((previous + 1, i - 1))
        previous = i
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:LISTED])
    return (f"the folder records {len(by_index)} of the campaign's {count} configurations; no record of "
            f"{shown}{', ...' if len(runs) > LISTED else ''} (an interrupted campaign; finish it with: "
            f"{spec.command(folder)})")


def _summary_problem(spec: campaigns.Campaign, folder: Path, decided: list[dict],
                     batches: list[list[int]]) -> tuple[str | None, str | None]:
    """(problem, note): why the folder's summary.json does not say what its records say (the counts, tiers,
    margins, ... a reader looks at first), and what a confirmation without a summary.json leaves out.  The
    run's timings and this machine's float64 probe are not the records' to say.  A run stopped after its last
    chunk and before its summary (killed) leaves no summary.json, or the one of an earlier run, which says
    what the records of that run's chunks say: then the records are judged as ever, the summary is named
    stale (not confirmed: a script reading it after a confirmation would read an earlier campaign's counts)
    and the command that rewrites it, deciding nothing again, is given."""
    path = folder / campaigns.SUMMARY
    how = f"deciding nothing again, with: {spec.command(folder)}"
    rewrite = f"rewrite it, {how}"
    if not path.is_file() and (path.exists() or path.is_symlink()):  # in its place: not a summary still to write
        return f"{campaigns.SUMMARY} is not a file (a folder, a device or a broken link)", None
    if not path.is_file():
        return None, f"there is no {campaigns.SUMMARY} (the run was stopped before writing it); write it, {how}"
    try:
        stored = jsonfile.read(path, raise_with=None)
    except BadInput as err:
        return f"{campaigns.SUMMARY} is unreadable: {err}", None
    if _says(stored, spec, decided):
        return None, None
    earlier = stored.get("decided") if isinstance(stored, dict) else None
    if type(earlier) is int and 0 <= earlier < len(decided):
        prefix = campaigns.committed_prefix(batches, earlier)
        if prefix is not None and _says(stored, spec, [r for r in decided if r["i"] in prefix]):
            return (f"{campaigns.SUMMARY} is stale: it describes the first {earlier} of the {len(decided)} records "
                    f"(an earlier run's; the run that decided the rest was stopped before rewriting it), while "
                    f"the records re-derived are as recorded; {rewrite}"), None
    return (f"{campaigns.SUMMARY} does not describe the records (edited?); {rewrite}"), None


def _says(stored, spec: campaigns.Campaign, decided: list[dict]) -> bool:
    """The summary `stored` says what campaign.summarize writes for these records (timings and the float64
    probe aside): the counts a reader looks at first, and every other figure it states.  A summary of an
    earlier version of certify lacks the figures added since (a largest lhs/rhs without its tier, ...): what
    it does not state it cannot misstate."""
    derived = jsonfile.as_read(campaigns.summarize(spec, decided))  # as the file holds it
    unsaid = ("run", "tier3_off")
    return (isinstance(stored, dict) and all(key in stored for key in SUMMARY_ESSENTIALS)
            # every verdict's count, as every version states them: one left out (the violations) reads as none
            and isinstance(stored["counts"], dict) and stored["counts"].keys() == derived["counts"].keys()
            and _states_only({k: v for k, v in stored.items() if k not in unsaid}, derived))


def _states_only(stated, derived) -> bool:
    """Every figure of `stated` is the one of `derived` (JSON values; within objects, key by key: a key
    `stated` lacks is not stated, a key `derived` lacks is misstated)."""
    if isinstance(stated, dict) and isinstance(derived, dict):
        return all(key in derived and _states_only(value, derived[key]) for key, value in stated.items())
    return stated == derived


def _certificate_problem(folder: Path, record: dict, spec: campaigns.Campaign, sampled: dict) -> str | None:
    """What is wrong with the certificate a record names (None when nothing): `sampled`, the campaign's
    configuration of that record, is the one it must be about."""
    where = f"configuration {record['i']}: certificate {record['certificate']}"
    path = (folder / record["certificate"]).resolve()
    if folder.resolve() not in path.parents or not path.is_file():
        return f"{where} is missing or outside the folder"
    try:  # the strict reader of every certificate: duplicate keys, nesting and size limits
        cert = certificate.read(path, spec.engine_limits)  # the campaign's, under which it was written
    except BadInput as err:
        return f"{where} is unreadable: {err}"
    confirmation = certificate.confirm(cert, spec.engine_limits, written=False)  # read from its file, measured there
    if not confirmation.ok:
        return f"{where} is rejected by the checker: {confirmation.message}"
    if cert.get("verdict") != record["verdict"]:
        return f"{where} says {cert.get('verdict')}, the record {record['verdict']}"
    if cert.get("precision") != record["precision"]:  # the precision checked against the cap is the decision's
        return f"{where} was decided at {cert.get('precision')} bits, the record says {record['precision']}"
    if (cert.get("claim"), cert.get("bound")) != (spec.claim, spec.bound):
        return f"{where} is about another claim or bound"
    if cert.get("inputs") != config.to_json(config.load(sampled)):
        return f"{where} is about another configuration than the campaign's configuration {record['i']}"
    return None


def audit(path, *, everything: bool = False, sample: int = SAMPLE, workers: int | None = None,
          progress: Callable[[int, int], None] | None = None, manifest=None) -> Audit:
    """Re-derive the campaign in `path` (module docstring); Audit.ok when nothing differs.
    `progress(done, total)` is called as configurations are re-derived.  BadInput while a run writes the
    folder (its records and manifest change under the audit): read it once the run has stopped.  `manifest`: its
    manifest as jobs.read_manifest read it, where the caller has (None: read here); the records are read with the
    manifest as it is once the folder is locked for reading."""
    try:
        spec, folder = load(path, manifest)
    except jobs.Edited as err:  # tampered, not unreadable: rejected (exit 1), as an edited chunk is
        return Audit(records=0, rederived=0, problems=[str(err)])
    with jobs.reading(folder, noun="campaign"):  # no run starts on the folder while it is audited
        return _audit(spec, folder, everything, sample, workers, progress)


def _audit(spec: campaigns.Campaign, folder: Path, everything: bool, sample: int, workers: int | None,
           progress) -> Audit:
    """audit() of a loaded campaign."""
    try:
        decided, batches = campaigns.read_with_batches(folder)
    except BadInput as err:  # a configuration recorded twice: the folder is corrupt
        return Audit(records=0, rederived=0, problems=[str(err)])
    except (ValueError, KeyError, TypeError):
        return Audit(records=0, rederived=0, problems=[f"{folder}: a record is not readable JSON"])
    problems = [p for p in (_record_problem(r, spec.count) for r in decided) if p]
    if problems:
        return Audit(records=len(decided), rederived=0, problems=problems)
    by_index = {r["i"]: r for r in decided}
    if missing := _missing_problem(spec, folder, by_index):  # a folder's "OK" speaks for the whole campaign
        problems.append(missing)
    chosen = {i for i, r in by_index.items() if r["verdict"] != engine.HOLDS or r.get("certificate")}
    # the float64 pass's total includes the arb pass to come (all of it with --all, else about the records chosen
    # and the sample, and the largest lhs/rhs): its own total alone read 100% with the arb pass still to run
    ahead = len(by_index) if everything else min(len(by_index), len(chosen) + sample + 1)
    screening = None if progress is None else lambda done, total: progress(done, total + ahead)
    screened, unproved, relabelled, doubted, tied, differing, notes = _screen_all(spec, batches, by_index, workers,
                                                                                  screening)
    problems += screened
    chosen |= unproved
    # a few, or a sample of many (a campaign run where tier 3 could not run records every hold as arb's)
    drawn = _drawn(relabelled, everything)
    chosen |= drawn
    if relabelled:
        notes.append(f"{len(relabelled)} hold(s) recorded as decided in arb are decided by tier 3 here; {len(drawn)} "
                     "of them re-derived in arb")
    # none in a campaign of this version of tier 3 (edited records: all of a few), many in one of another
    drawn = _drawn(differing, everything)
    chosen |= drawn
    if differing:
        notes.append(f"{len(differing)} tier-3 hold(s) state other bounds than tier 3 computes here (another version "
                     f"of tier 3, or edited); {len(drawn)} of them re-derived in arb, whose enclosures they must "
                     "respect")
    # float64's mistakes are few in a campaign: all of them, or a sample of many (extreme L)
    drawn = _drawn(doubted, everything)
    chosen |= drawn
    if len(drawn) < len(doubted):
        notes.append(f"{len(doubted)} hold(s) float64 finds violated; {len(drawn)} of them re-derived in arb")
    # those not chosen already (the holds float64 doubts are not diluted among these): many in a campaign of tiny
    # margins
    tied = [i for i in tied if i not in chosen]
    drawn = _drawn(tied, everything)
    chosen |= drawn
    if len(drawn) < len(tied):
        notes.append(f"{len(tied)} other hold(s) whose float64 sides are too close to tell; {len(drawn)} of them "
                     "re-derived in arb")
    if largest := campaigns.largest_ratio(decided):  # the summary's "largest lhs/rhs" is always arb's
        chosen.add(largest["i"])
    rest = sorted(set(by_index) - chosen)
    chosen |= set(rest if everything else random.SystemRandom().sample(rest, min(sample, len(rest))))
    # tasks no larger than a campaign's chunks: Ctrl-C waits for the tasks in flight (a quarter of --all per worker
    # was minutes), and progress moves as often as a campaign's; each confirms its records' certificates too
    tasks = jobs.split([(i, by_index[i]) for i in sorted(chosen)], workers, campaigns.MAX_CHUNK)
    checked = jobs.pool_map(functools.partial(rederive_and_confirm, folder=folder), spec, tasks, workers, progress,
                            len(by_index) + len(chosen), len(by_index))
    problems += [problem for _, problem in checked if problem]
    for (i, name, verdict, fields, ends), _ in checked:
        record = by_index[i]
        if record.get("name") != name:
            problems.append(f"configuration {i}: the record names {record.get('name')!r}, the campaign {name!r}")
        if record["verdict"] != verdict:
            problems.append(f"configuration {i}: the record says {record['verdict']}, arb decides {verdict}")
        elif problem := _arb_problem(record, fields) if record["tier"] == "arb" else _bound_problem(record, ends):
            problems.append(problem)
    if not problems:  # what the records say, said (or not said at all: a note)
        summary, note = _summary_problem(spec, folder, decided, batches)
        problems += [summary] if summary else []
        notes += [note] if note else []
    return Audit(records=len(decided), rederived=len(chosen), problems=problems, notes=notes)


def _drawn(indices: list[int], everything: bool) -> set[int]:
    """All of a few of these records' indices, SAMPLE of many drawn from fresh randomness (a folder cannot be
    prepared for the draw it will meet), or all with everything."""
    return set(random.SystemRandom().sample(indices, len(indices) if everything else min(SAMPLE, len(indices))))


def _screen_all(spec: campaigns.Campaign, batches: list[list[int]], by_index: dict, workers: int | None, progress):
    """Every record through float64, and in a tier3 campaign through tier 3 (batched, at near float speed, on the pool):
    (problems, the tier-3 holds tier 3 does not decide here, the holds recorded as arb's that tier 3 decides here,
    the holds float64 finds violated here, the holds whose float64 sides are too close to tell or beyond its range
    that tier 3 does not decide here, the tier-3 holds whose figures tier 3 here computes otherwise, notes).  A
    record's float64 fields must be what this machine computes (_float64_problem) and a tier-3 hold's figures those
    of a hold (_tier3_figures_problem); the others go to arb, which stands for the tier a record names (a rounding
    at the edge of deciding can move a few, honestly) and tells a tier-3 hold's edited figures from another
    version's (_bound_problem).  Where tier 3 cannot run (a failed floating-point model probe) its labels are checked
    only as far as the arb sample goes: a note says so."""
    problems, unproved, relabelled, doubted, tied, differing, notes = [], set(), [], [], [], [], []
    usable = spec.tier == "tier3" and tier3.unusable_reason() is None
    if spec.tier == "tier3" and not usable:
        notes.append(f"tier 3 cannot run on this machine ({tier3.unusable_reason()}): its holds are checked only "
                     "as far as the arb sample goes")
    # the campaign's own batches, a few to a task: tier 3's bounds on a configuration depend on its batch
    tasks = jobs.split([tuple(batch) for batch in batches], workers)
    for seen in jobs.pool_map(screen, spec, tasks, workers, progress, len(by_index)):
        record = by_index[seen["i"]]
        problems += [p for p in (_float64_problem(record, seen), record["tier"] == "tier3"
                                 and _tier3_figures_problem(record)) if p]
        # float64 finds it violated here: one of float64's rare mistakes, or a violation a forger recorded as a
        # hold (with the record's float64 fields true, as they must be); only arb tells them apart
        if record["verdict"] == engine.HOLDS and campaigns.float64_opinion(seen["pairs"])["float64"] != engine.HOLDS:
            doubted.append(seen["i"])
        # float64 cannot tell its sides apart (or has left its range): an undecided configuration, or a violation
        # float64 misses, recorded as a hold (its float64 fields true, as they must be) would be here; not one
        # that tier 3 decides here (as it is labelled, or relabelled below)
        if (record["verdict"] == engine.HOLDS and not _apart(seen["pairs"])
                and not (usable and seen["tier3"] is not None)):
            tied.append(seen["i"])
        # a kept hold goes to arb in any campaign, and is re-derived in arb as one
        if usable and record["verdict"] == engine.HOLDS and seen["i"] % spec.hold_stride:
            if record["tier"] == "tier3" and seen["tier3"] is None:
                unproved.add(seen["i"])
            elif record["tier"] == "arb" and seen["tier3"] is not None:
                relabelled.append(seen["i"])
            elif record["tier"] == "tier3" and _tier3_differs(record, seen):
                differing.append(seen["i"])
    return problems, unproved, relabelled, doubted, tied, differing, notes
