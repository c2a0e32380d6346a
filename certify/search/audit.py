"""Re-deriving a campaign folder: `certify verify FOLDER` (or its manifest.json).

A campaign's records name their configurations reproducibly (the manifest and the index
regenerate each one, certify.search.samplers), with a verdict and the tier that decided it.  The
audit regenerates and decides again in arb (certify.engine.check, the checker confirming every
decided verdict):
    - every violated and every undecided record, and every record with a certificate file;
    - SAMPLE other records drawn at random from fresh randomness (so a folder cannot be prepared
      for the sample it will meet), or all of them with everything=True (`--all`);
on a process pool (every core by default).  A stored certificate must be confirmed by the checker,
state the record's verdict and be about the regenerated configuration.  The audit rejects the
folder if any of this differs, if a record is malformed, repeated or out of range, if a
violation has no certificate, if a configuration of the campaign has no record (an
interrupted campaign is not yet the campaign its manifest describes), or if summary.json does not
say what the records say (the counts a reader looks at first).  Records not re-derived
are trusted only as far as the sample goes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from certify import engine, jobs
from certify.engine import certificate
from certify.core import config, jsonfile
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits
from certify.core.verdicts import short_repr
from certify.errors import BadInput
from certify.search import campaign as campaigns

SAMPLE = 64  # records re-derived at random beyond the violated, undecided and certified ones
TIERS = set(campaigns.TIERS)
VERDICTS = {engine.HOLDS, engine.VIOLATED, engine.UNDECIDED}
LISTED = 10  # problems listed in the report


@dataclass
class Audit:
    """What `certify verify FOLDER` found in a campaign folder: how many records it holds, how many were
    decided again in arb, and every disagreement or integrity problem (none: the folder is confirmed)."""

    records: int  # records in the folder
    rederived: int  # records decided again
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def load(path) -> tuple[campaigns.Campaign, Path]:
    """The campaign of a folder (or of its manifest.json), validated, and the folder."""
    path = Path(path)
    folder = path.parent if path.name == "manifest.json" else path
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise BadInput(f"{path}: neither a certificate nor a campaign folder (no manifest.json)")
    try:
        manifest = campaigns.stored_parameters(folder)
        manifest.pop("format")
        if manifest["L_range"] is not None:
            manifest["L_range"] = tuple(manifest["L_range"])
        spec = campaigns.Campaign(**manifest)
    except BadInput:  # the folder's own one line (a corrupt manifest, ...)
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise BadInput(f"{manifest_path}: not a campaign manifest ({type(err).__name__}: {err})") from None
    validated = spec.validated()
    if validated != spec:
        raise BadInput(f"{manifest_path}: the manifest is not in the canonical form a campaign writes")
    return spec, folder


def rederive(spec: campaigns.Campaign, indices: list[int]) -> list[tuple[int, str, str]]:
    """(index, name, verdict) of each configuration, decided again in arb (runs in a worker)."""
    goal = engine.target(spec.claim, spec.bound)
    out = []
    for i in indices:
        item = spec.sample(i)
        result = engine.check(item.config, goal=goal, max_prec=spec.max_prec, limits=spec.engine_limits)
        out.append((i, item.config["name"], result.verdict))
    return out


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


def _missing_problem(by_index: dict, count: int) -> str | None:
    """Why a folder without a record for every configuration of its campaign is not the campaign: an
    interrupted run (resumable), or records taken away (a chunk of violations deleted and the manifest
    redone would otherwise leave a clean folder)."""
    absent = [i for i in range(count) if i not in by_index]
    if not absent:
        return None
    runs = []  # absent indices as ranges "a-b"
    for i in absent:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:LISTED])
    return (f"the folder records {count - len(absent)} of the campaign's {count} configurations; no record of "
            f"{shown}{', ...' if len(runs) > LISTED else ''} (an interrupted campaign: run the same "
            "`certify sample` on the folder to finish it)")


def _summary_problem(spec: campaigns.Campaign, folder: Path, decided: list[dict]) -> str | None:
    """Why the folder's summary.json does not say what its records say (the counts, tiers, margins, ... a
    reader looks at first), or None; the run's timings and this machine's float64 probe are not the
    records' to say.  No summary.json says nothing, and is no problem."""
    path = folder / campaigns.SUMMARY
    if not path.is_file():
        return None
    try:
        stored = jsonfile.read(path, raise_with=None)
    except BadInput as err:
        return f"{campaigns.SUMMARY} is unreadable: {err}"
    derived = json.loads(jsonfile.dumps(campaigns.summarize(spec, decided)))  # as the file holds it
    unsaid = ("run", "tier3_off")
    if not isinstance(stored, dict) or {k: v for k, v in stored.items() if k not in unsaid} != {
            k: v for k, v in derived.items() if k not in unsaid}:
        return (f"{campaigns.SUMMARY} does not describe the records (edited, or left by an earlier run: run the "
                "same `certify sample` on the folder to rewrite it)")
    return None


def _certificate_problem(folder: Path, record: dict, spec: campaigns.Campaign) -> str | None:
    where = f"configuration {record['i']}: certificate {record['certificate']}"
    path = (folder / record["certificate"]).resolve()
    if folder.resolve() not in path.parents or not path.is_file():
        return f"{where} is missing or outside the folder"
    try:  # the strict reader of every certificate: duplicate keys, nesting and size limits
        cert = certificate.read(path)
    except BadInput as err:
        return f"{where} is unreadable: {err}"
    confirmation = certificate.confirm(cert)
    if not confirmation.ok:
        return f"{where} is rejected by the checker: {confirmation.message}"
    if cert.get("verdict") != record["verdict"]:
        return f"{where} says {cert.get('verdict')}, the record {record['verdict']}"
    if (cert.get("claim"), cert.get("bound")) != (spec.claim, spec.bound):
        return f"{where} is about another claim or bound"
    if cert.get("inputs") != config.to_json(config.load(spec.sample(record["i"]).config)):
        return f"{where} is about another configuration than the campaign's configuration {record['i']}"
    return None


def audit(path, *, everything: bool = False, sample: int = SAMPLE, workers: int | None = None,
          progress: Callable[[int, int], None] | None = None) -> Audit:
    """Re-derive the campaign in `path` (module docstring); Audit.ok when nothing differs.
    `progress(done, total)` is called as configurations are re-derived.  BadInput while a run writes the
    folder (its records and manifest change under the audit): read it once the run has stopped."""
    spec, folder = load(path)
    with jobs.reading(folder, noun="campaign"):  # no run starts on the folder while it is audited
        return _audit(spec, folder, everything, sample, workers, progress)


def _audit(spec: campaigns.Campaign, folder: Path, everything: bool, sample: int, workers: int | None,
           progress) -> Audit:
    """audit() of a loaded campaign."""
    try:
        decided = campaigns.records(folder)
    except BadInput as err:  # a configuration recorded twice: the folder is corrupt
        return Audit(records=0, rederived=0, problems=[str(err)])
    except (ValueError, KeyError, TypeError):
        return Audit(records=0, rederived=0, problems=[f"{folder}: a record is not readable JSON"])
    problems = [p for p in (_record_problem(r, spec.count) for r in decided) if p]
    if problems:
        return Audit(records=len(decided), rederived=0, problems=problems)
    by_index = {r["i"]: r for r in decided}
    if missing := _missing_problem(by_index, spec.count):  # a folder's "OK" speaks for the whole campaign
        problems.append(missing)
    chosen = {i for i, r in by_index.items() if r["verdict"] != engine.HOLDS or r.get("certificate")}
    rest = sorted(set(by_index) - chosen)
    chosen |= set(rest if everything else random.SystemRandom().sample(rest, min(sample, len(rest))))
    for i in sorted(chosen):
        if by_index[i].get("certificate") and (problem := _certificate_problem(folder, by_index[i], spec)):
            problems.append(problem)
    for i, name, verdict in _rederive_all(spec, sorted(chosen), workers, progress):
        record = by_index[i]
        if record.get("name") != name:
            problems.append(f"configuration {i}: the record names {record.get('name')!r}, the campaign {name!r}")
        if record["verdict"] != verdict:
            problems.append(f"configuration {i}: the record says {record['verdict']}, arb decides {verdict}")
    if not problems and (summary := _summary_problem(spec, folder, decided)):  # what the records say, said
        problems.append(summary)
    return Audit(records=len(decided), rederived=len(chosen), problems=problems)


def _rederive_all(spec: campaigns.Campaign, indices: list[int], workers: int | None, progress=None):
    pool = jobs.ProcessPool(workers)
    size = max(1, -(-len(indices) // (4 * pool.workers)))
    chunks = [indices[k:k + size] for k in range(0, len(indices), size)]
    done = 0

    def count(rows) -> None:
        nonlocal done
        done += len(rows)
        if progress is not None:
            progress(done, len(indices))

    return [row for rows in pool.map(rederive, spec, chunks, on_each=count) for row in rows]


# ---------------------------------------------------------------------------------------------
# The Python API: certify.verify


@dataclass(frozen=True)
class Verification:
    """What `certify verify` says of a certificate or a campaign folder: ok (confirmed), refused
    (unreadable or beyond the limits: nothing was checked), the checker's or the audit's message,
    and for a campaign the problems found."""

    source: str
    kind: str  # the certificate's kind ("inequality", "trajectory", ...) or "campaign"
    verdict: str | None  # the verdict the certificate states (None for a campaign)
    ok: bool
    message: str
    refused: bool = False
    problems: tuple = ()

    @property
    def exit_code(self) -> int:
        """0 confirmed, 1 rejected, 2 refused: the exit code of `certify verify`."""
        return 2 if self.refused else 0 if self.ok else 1

    def __repr__(self) -> str:
        outcome = "refused" if self.refused else "confirmed" if self.ok else "REJECTED"
        stated = f" ({self.verdict})" if self.verdict else ""
        return short_repr(f"verify {outcome}", f"{self.kind}{stated} {self.source}: {self.message}")


def verify(source, *, limits: Limits = DEFAULT_LIMITS, everything: bool = False, sample: int = SAMPLE,
           workers: int | None = None) -> Verification:
    """Re-check a certificate (a path or a certificate dict) with the independent checker, or re-derive
    a campaign folder (or its manifest.json) in arb, as `certify verify` does."""
    if isinstance(source, dict):
        cert, name = source, "certificate"
    else:
        path = Path(source)
        if path.is_dir() or path.name == "manifest.json":
            report = audit(path, everything=everything, sample=sample, workers=workers)
            message = (f"{report.rederived} of {report.records} configurations re-derived in arb"
                       + ("" if report.ok else f"; {len(report.problems)} problem(s)"))
            return Verification(str(path), "campaign", None, report.ok, message, problems=tuple(report.problems))
        cert, name = certificate.read(path, limits), str(path)
    confirmation = certificate.confirm(cert, limits)
    return Verification(name, str(cert.get("kind", "inequality")), cert.get("verdict"), confirmation.ok,
                        confirmation.message, refused=confirmation.refused)
