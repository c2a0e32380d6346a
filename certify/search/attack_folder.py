"""The folder of `certify attack --out DIR`: its parameters, the journal of its search, and its results.

    attack.json     the parameters that determine the search and its certification (target, layout,
                    seed, starts, budget, range of L, max_prec, the format): a folder is resumed only by
                    the same attack, anything else is refused (BadInput) before any work
    journal.txt     the search's events in order, one line each (about 100 bytes: the points themselves are
                    not needed, the search rebuilds them), appended (one write) as they happen:
                        e DIGEST SCORE LOG_RATIO EXPONENT L   an objective evaluation: DIGEST names the point
                                                              (blake2b of its float64 shape and L keyed by
                                                              the parameters), then the Evaluation's floats
                                                              (repr, so exact; "-": no exponent)
                        t SECONDS                             a reading of a time budget's clock (seconds of search)
    best.json, tightest.json, summary.json (+ counterexample.json, certificate.json)
                    the results, rewritten whole (certify.core.files) at the end of every run; the two
                    files of a counterexample are removed by a run that certified none
    .lock           held (flock) by the one run that writes the folder (certify.jobs.store.locked)

A folder without attack.json that holds only what a run killed in its first write of it leaves (the lock
file, the temporary file of that write) is a new folder: a run starts the attack there, removing them.

Resuming.  The search is a function of its seed, of the values its objective returns and, for a time
budget, of its clock readings.  A resumed run performs it again from the start and takes each of those
from the journal, in order, instead of computing (or reading) it: the k journaled evaluations are not
recomputed, and an evaluation budget gives exactly the search one uninterrupted run makes.  Each
evaluation's digest must be that of the point the search asks for: a journal that does not replay
(edited, or written by another version of certify) is refused, BadInput.  For a time budget the
clock continues from the last journaled reading, so the time already spent counts and replaying is
free.  A last line without its newline, shorter than any event's, is what a killed run was writing: it is
dropped.  A journal with more evaluations than a search of its budget makes (an evaluation budget's, or
MAX_EVALUATIONS, where a time budget ends too), or with more clock readings (none for an evaluation budget), or
longer than such a search writes, is not this search's: refused, the last without reading it.  A number is
read only as repr writes one (a hundred digits, "1e999" and "1e+999" are refused) and an evaluation only as the
objective returns one (NaN nowhere but in the log ratio of a point where the bound is undefined).
journal.txt and attack.json are the folder's own regular files (a link is refused: a run truncates and
appends to its journal).  A run stopped (Ctrl-C) before it has searched beyond the journal (replaying it, or
certifying again the finalists of a search the journal holds whole) knows no more than the results in the
folder say, and may know less (a counterexample certified by the run before it): it leaves them as they are.

The journal is untrusted search data.  It supplies scores only: every point is the one the search
itself builds, and a verdict comes only from certify.engine.check on the finalists, which a resumed
run certifies (and shrinks) again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from certify.core import config, files, jsonfile
from certify.core.arguments import Spelling
from certify.engine import certificate
from certify.errors import BadInput, keys_shown
from certify.jobs.store import (LOCK, choose_another, discard_begun, first_run_leftovers, locked,
                                 remove_first_run_leftovers)
from certify.search.objective import Evaluation

if TYPE_CHECKING:
    from certify.search.attack import AttackReport, Budget

FORMAT = "certify-attack/1"
PARAMETERS = "attack.json"
JOURNAL = "journal.txt"
COUNTEREXAMPLE = "counterexample.json"  # a certified counterexample's configuration
CERTIFICATE = "certificate.json"  # its certificate

# What repr writes for a float: at most 17 significant digits, 4 zeros before them, an exponent of 3 digits
_FLOAT = rb"-?(?:inf|nan|[0-9]{1,17}\.[0-9]{1,21}|[0-9](?:\.[0-9]{1,16})?e[-+][0-9]{2,3})"
_EVALUATION = re.compile(rb"e ([0-9a-f]{16}) (%s) (%s) (%s|-) (%s)\n" % ((_FLOAT,) * 4))
_CLOCK = re.compile(rb"t (%s)\n" % _FLOAT)
UNDEFINED_REPLAYED = "the bound is undefined (why is not journaled)"  # an Evaluation.undefined replayed
# The longest line of each event: repr writes a float in at most 24 characters ("-2.2250738585072014e-308"), so an
# evaluation is at most 2 + 16 + 4 * 25 + 1 bytes and a clock reading 2 + 24 + 1; Journal refuses a file longer
# than the lines its budget's search writes (certify.search.attack.Budget: 10^7 evaluations at most, 1.2 GB; a time
# budget's 2 x 10^7 clock readings besides, 1.7 GB) before reading it
EVALUATION_BYTES, CLOCK_BYTES = 119, 27
# Longer than any event line: a journal's lines are read up to this, so a line of junk is refused without being
# read whole, and a last line cut short is a kill's only if shorter
LONGEST = 256


def digest(point: np.ndarray, L: float, attack: bytes) -> str:
    """The name of an evaluated point in the journal: 64 bits of blake2b over its float64 shape and L, keyed by
    the attack (its parameters): the same point of another target, or under another mask, has another score,
    and a journal of another attack must not replay as this one's (attack.json edited to match the command)."""
    data = np.ascontiguousarray(point, dtype="<f8").tobytes() + struct.pack("<d", L)
    return hashlib.blake2b(data, digest_size=8, key=hashlib.blake2b(attack, digest_size=32).digest()).hexdigest()


def _event(line: bytes):
    """("e", digest, score, log_ratio, exponent or None, L) or ("t", seconds) of a journal line; None when it
    is neither: its numbers must be written as repr writes them (_FLOAT, _reading), an evaluation's be what the
    objective returns (_returned) and a clock reading be finite and >= 0 (the clock of a resumed search continues
    from it)."""
    if match := _EVALUATION.fullmatch(line):
        key, score, log_ratio, exponent, L = match.groups()
        try:
            score, log_ratio, L = _reading(score), _reading(log_ratio), _reading(L)
            exponent = None if exponent == b"-" else _reading(exponent)
        except ValueError:
            return None
        return ("e", key.decode(), score, log_ratio, exponent, L) if _returned(score, log_ratio, exponent, L) else None
    if (match := _CLOCK.fullmatch(line)) and 0 <= (seconds := float(match.group(1))) < math.inf:
        return "t", seconds
    return None


_INFINITIES = (math.inf, -math.inf)


def _reading(text: bytes) -> float:
    """The number of a journal's `text` (_FLOAT); ValueError for one beyond binary64's range: repr writes inf as
    "inf", never "1e+999"."""
    value = float(text)
    if value in _INFINITIES and text.lstrip(b"-") != b"inf":
        raise ValueError(text)
    return value


def _returned(score: float, log_ratio: float, exponent: float | None, L: float) -> bool:
    """Whether certify.search.objective.evaluate returns such an evaluation: a NaN nowhere (its _mid makes one -inf,
    an unscored point) but in log_ratio, where it marks a point at which the bound is undefined, whose score is
    -inf and which has no exponent."""
    if math.isnan(log_ratio):
        return score == -math.inf and exponent is None
    return not (math.isnan(score) or math.isnan(L) or exponent is not None and math.isnan(exponent))


def _number(x: float) -> str:
    return repr(float(x))  # float(): numpy's repr of its own floats is np.float64(...)


class Journal:
    """The journal of one search (module docstring): replayed first, then appended to."""

    def __init__(self, folder: Path, attack: bytes, names: Spelling, budget: Budget):
        self.folder, self.path, self.budget, self.attack = folder, folder / JOURNAL, budget, attack
        self.names = names  # the attack's options as its caller writes them (opened)
        self._refuse_longer_than_written()
        self.journaled, last_clock, length = self._scan()
        os.truncate(self.path, length)  # a last line cut short by a killed run is dropped
        self._replay = open(self.path, "rb")
        self._line = 0
        self._pending = self.journaled["events"]  # events still to replay
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self.replayed = 0  # evaluations taken from the journal
        self.appended = 0  # events this run added to the journal: the search it made beyond the earlier runs'
        self._clock_base, self._live_since = last_clock, None

    def _refuse_longer_than_written(self) -> None:
        """BadInput for a journal longer than the events a search of its budget makes can be (module docstring)."""
        most = (self.budget.most_evaluations * EVALUATION_BYTES + self.budget.most_clock_readings * CLOCK_BYTES)
        if (size := os.stat(self.path).st_size) > most:
            raise corrupt(self.folder, f"{JOURNAL} is {size} bytes, more than a search of its budget "
                          f"({self.budget.describe()}) writes ({most})", self.names)

    def _scan(self) -> tuple[dict, float, int]:
        """The events and evaluations journaled, the last clock reading and the length of the whole lines;
        BadInput for a line that is not an event, or for more evaluations or clock readings than a search of the
        budget makes (certify.search.attack.Budget): the scan of a huge journal ends there."""
        events = evaluations = readings = length = 0
        last_clock = 0.0
        with open(self.path, "rb") as handle:
            for number, line in enumerate(iter(lambda: handle.readline(LONGEST), b""), 1):
                if not line.endswith(b"\n") and len(line) < LONGEST:
                    break  # the end of the file: a line a killed run was writing
                event = _event(line)
                if event is None:
                    raise corrupt(self.folder, f"{JOURNAL} line {number} is not an event of an attack's journal",
                                  self.names)
                events, length = events + 1, length + len(line)
                if event[0] == "e":
                    evaluations += 1
                    if evaluations > self.budget.most_evaluations:
                        raise corrupt(self.folder, f"{JOURNAL} holds more evaluations than a search of its budget "
                                      f"({self.budget.describe()}) makes ({self.budget.most_evaluations})", self.names)
                    continue
                if not self.budget.most_clock_readings:  # refused here, not when replayed: they may never be
                    raise corrupt(self.folder, f"{JOURNAL} line {number} is not an evaluation (a search of an "
                                  "evaluation budget reads no clock)", self.names)
                readings, last_clock = readings + 1, event[1]
                if readings > self.budget.most_clock_readings:
                    raise corrupt(self.folder, f"{JOURNAL} holds more clock readings than a search of its budget "
                                  f"({self.budget.describe()}) takes ({self.budget.most_clock_readings})", self.names)
        return {"events": events, "evaluations": evaluations}, last_clock, length

    @property
    def replaying(self) -> bool:
        """Whether journaled events are left to replay."""
        return self._pending > 0

    def start(self) -> None:
        """The search starts now: a time budget's clock runs from here when there is nothing to replay."""
        if not self.replaying:
            self._live_since = time.monotonic()

    def _next(self, kind: str):
        """The next journaled event, which must be of `kind`; None once the journal is replayed."""
        if not self._pending:
            return None
        self._pending -= 1
        self._line += 1
        event = _event(self._replay.readline())
        if event is None or event[0] != kind:
            raise self._diverged("a clock reading" if kind == "t" else "an evaluation")
        if not self._pending:
            self._live_since = time.monotonic()  # the clock of a time budget runs again from here
        return event

    def _diverged(self, wanted: str) -> BadInput:
        return corrupt(self.folder, f"{JOURNAL} line {self._line} is not {wanted} this search makes at that point "
                       "(edited, or written by another version of certify)", self.names)

    def _append(self, line: str) -> None:
        data = line.encode()
        while data:  # one write for a line in practice; a line cut short by a kill is dropped when resumed
            data = data[os.write(self._fd, data):]
        self.appended += 1

    def evaluation(self, point: np.ndarray, L: float, compute: Callable[[], Evaluation]) -> Evaluation:
        """The evaluation of (point, L): from the journal while it replays, else compute() journaled."""
        key = digest(point, L, self.attack)
        event = self._next("e")
        if event is not None:
            if event[1] != key:
                raise self._diverged("the evaluation")
            self.replayed += 1
            _, _, score, log_ratio, exponent, L_value = event
            # a log_ratio of nan, which no scored point has, is a point where the bound is undefined (its reason
            # is not journaled)
            return Evaluation(score, log_ratio, exponent, L_value, shape=point, L_param=L,
                              undefined=UNDEFINED_REPLAYED if math.isnan(log_ratio) else "")
        e = compute()
        exponent = "-" if e.exponent is None else _number(e.exponent)
        self._append(f"e {key} {_number(e.score)} {_number(e.log_ratio)} {exponent} {_number(e.L)}\n")
        return e

    def clock(self) -> float:
        """Seconds of search so far: journaled while it replays, then from the last journaled reading on."""
        event = self._next("t")
        if event is not None:
            self._clock_base = event[1]
            return event[1]
        seconds = self._clock_base + (time.monotonic() - self._live_since)
        self._append(f"t {_number(seconds)}\n")
        return seconds

    def close(self) -> None:
        """Close the journal's files (what was appended is on disk: one write per line)."""
        self._replay.close()
        os.close(self._fd)


def corrupt(folder: Path, what: str, names: Spelling) -> BadInput:
    """The BadInput of an attack folder that cannot be resumed, naming `what` is wrong (and the folder's option as
    `names` spells it: --out, out=)."""
    return BadInput(f"{folder}: {what}; nothing was changed (move the folder away, or {choose_another(names)})")


class Folder:
    """An attack's folder, open and locked for one run (module docstring)."""

    def __init__(self, path: Path, journal: Journal):
        self.path, self.journal = path, journal

    def write(self, report: AttackReport) -> dict:
        """Write the results (best.json, tightest.json, and when a violation was certified counterexample.json
        and certificate.json, else those two removed, then summary.json); return {name: path} of what was
        written.  Nothing when a Ctrl-C stopped the run before it searched beyond the journal (module docstring):
        what it has may be less than the files hold."""
        if report.interrupted and not self.journal.appended:
            return {}
        written = {}

        def dump(name: str, data: dict) -> None:
            path = self.path / name
            jsonfile.write(data, path)
            written[name.removesuffix(".json")] = str(path)

        if report.best is not None:
            dump("best.json", report.configuration(report.best, "attack-best"))
        if report.best_exponent is not None:
            dump("tightest.json", report.configuration(report.best_exponent, "attack-tightest"))
        if report.counterexample is not None:
            dump(COUNTEREXAMPLE, config.to_json(report.counterexample.case))
            written["certificate"] = str(certificate.write(report.counterexample.result.certificate,
                                                           self.path / CERTIFICATE))
        else:  # an earlier run's (or a foreign) counterexample would stand beside a summary that found none
            for name in (COUNTEREXAMPLE, CERTIFICATE):
                (self.path / name).unlink(missing_ok=True)
        written["parameters"] = str(self.path / PARAMETERS)  # written as the run started, named with the rest
        written["journal"] = str(self.journal.path)
        dump("summary.json", dict(report.to_json(), files=dict(written, summary=str(self.path / "summary.json"))))
        return written


def _own(folder: Path, names: Spelling) -> None:
    """BadInput unless the folder's parameters, journal and results, where present, are its own regular files: a run
    truncates and appends to its journal and rewrites its results, which must not reach through a link to a file
    elsewhere (best.json linked to a user's file had it overwritten)."""
    for name in (PARAMETERS, JOURNAL, *sorted(RESULTS)):
        path = folder / name
        if path.is_symlink() or path.exists() and not path.is_file():
            raise corrupt(folder, f"{name} is not a file of the folder (a link, or not a regular file)", names)


# What an attack writes at its end (Folder.write): an earlier version of certify wrote only these, no parameters.
RESULTS = frozenset({"best.json", "tightest.json", "summary.json", COUNTEREXAMPLE, CERTIFICATE})


def _foreign(folder: Path) -> bool:
    """A folder that holds something, but no attack's parameters (aside from what a run killed in its first write of
    them leaves: the lock file, the temporary file of that write)."""
    return not (folder / PARAMETERS).is_file() and first_run_leftovers(folder, ()) is None


def _not_ours(folder: Path, names: Spelling) -> BadInput:
    """The refusal of a _foreign folder: the results of an earlier version's attack (no parameters, no journal to
    resume from) are named as such, and left alone as anything else is."""
    entries = {path.name for path in folder.iterdir()} - {LOCK}
    if "summary.json" in entries and entries <= RESULTS:
        return BadInput(f"{folder}: the results of an attack by an earlier version of certify (no {PARAMETERS}, no "
                        f"{JOURNAL}), which this version does not resume; nothing was changed: move them away, or "
                        f"{choose_another(names)}")
    return BadInput(f"{folder} is not empty and is not an attack folder; {choose_another(names)}")


@contextmanager
def opened(folder, params: dict, names: Spelling, budget: Budget,
           chosen: dict[str, str] | None = None) -> Iterator[Folder]:
    """The attack folder of `params` (JSON, without the format), created or resumed (the same parameters only),
    locked for this run (BadInput when another run holds it) until the block ends; `budget`: params' budget, which
    bounds the journal read.  `names`: the folder ("out")
    and the parameters as the caller writes them (certify.search.attack.OPTIONS, --max-prec; KEYWORDS, max_prec=),
    as a refusal names them; `chosen`: the parameters no option gave, by the option they were chosen from
    ({"starts": "--budget"})."""
    folder = Path(folder)
    params = json.loads(json.dumps({"format": FORMAT, **params}))  # as it reads back (lists, not tuples)
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"{folder} is not a folder; {choose_another(names)}")
    if folder.is_dir() and _foreign(folder):
        raise _not_ours(folder, names)
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    lock = locked(folder, shared=False, busy=f"{folder} is in use by another certify attack (one run writes "
                  f"an attack folder at a time); wait for it to stop, or {choose_another(names)}")
    journal, new, refused = None, False, False
    try:
        _own(folder, names)
        _check_parameters(folder, params, names, chosen or {})
        if new := not (folder / PARAMETERS).is_file():  # and, not foreign, the folder is empty
            files.replace(folder / PARAMETERS, jsonfile.dumps(params))
        (folder / JOURNAL).touch()  # missing (a run killed before its first event, or deleted): nothing to replay
        journal = Journal(folder, json.dumps(params, sort_keys=True).encode(), names, budget)
        yield Folder(folder, journal)
    except BadInput:
        refused = True
        raise
    finally:
        if journal is not None:
            journal.close()
        if refused and new:
            # bad input the search itself found (a bound undefined where it is evaluated): the attack begun here
            # would stop so again when resumed, and its folder refused the corrected command as "another attack"
            discard_begun(folder, made, lock)
        elif lock is not None:
            lock.close()


def _same_json(a, b) -> bool:
    """a == b with their JSON types too: an integer is not a real (2 vs 2.0), a boolean not a number."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return a == b


def _kind(value) -> str:
    """" (an integer)" and the like: what a number or boolean parameter is in JSON, for the refusal of one of
    another type (a list or an object shows its entries, which say it)."""
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a real number")):
        if isinstance(value, kind):
            return f" ({name})"
    return ""


def _option(key: str, names: Spelling, chosen: dict[str, str]) -> str:
    """A parameter by the option that sets it, as `names` spells it (--max-prec, max_prec=), as the refusal of
    another attack names it; "format" (or a key edited in) is set by no option, and one `chosen` from another option
    says so ("--starts (from --budget)")."""
    option = names.option(key) if key in names.names else key
    return f"{option} (from {chosen[key]})" if key in chosen else option


def _check_parameters(folder: Path, params: dict, names: Spelling, chosen: dict[str, str]) -> None:
    """BadInput unless the folder is new or holds the attack of `params`."""
    path = folder / PARAMETERS
    if not path.is_file():
        if (left := first_run_leftovers(folder, ())) is None:  # filled between the first look and the lock
            raise _not_ours(folder, names)
        remove_first_run_leftovers(left)  # a run killed before it wrote attack.json: nothing was committed
        return
    stored = jsonfile.read(path, str(path), raise_with=None)
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        raise corrupt(folder, f"{PARAMETERS} does not hold the parameters of an attack of format {FORMAT}", names)
    if retyped := [k for k in params if k in stored and stored[k] == params[k] and not _same_json(stored[k], params[k])]:
        # Python's == takes 2.0 for 2 and true for 1: "d_k": 2.0 resumed as d_k = 2.  An attack writes its
        # integers as integers, so a parameter of another JSON type was edited in: refused as malformed
        key = retyped[0]
        raise corrupt(folder, f"{PARAMETERS} states {json.dumps(key)}: {json.dumps(stored[key])}, where an attack "
                      f"writes {json.dumps(params[key])}{_kind(params[key])}: it was edited", names)
    if stored != params:
        differ = {k for k in set(stored) | set(params) if stored.get(k) != params.get(k)}
        # a parameter chosen from the options given differs with them (more starts for a larger --budget): it is
        # named only when it alone differs, else the options given that differ are what the user changes
        # (keys edited in: ten listed, each cut short; a million made a line of 8.9 MB)
        named = keys_shown(_option(k, names, chosen) for k in (differ - chosen.keys() or differ))
        raise BadInput(f"{folder} holds another attack (different {named}); {choose_another(names)}, "
                       "or move the folder away")
