"""`certify prove` under the checker's limits: refused before any work when not even its first box fits them,
stopped (undecided, saying which limit and how to raise it) before its certificate would pass them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import certify_checker as checker
from certify.cli import main
from certify.core import limits as core_limits
from certify.core.limits import Limits
from certify.prove import bnb, profiles, reductions
from certify.prove import region as region_proof
from certify_checker import region_proof as checker_region

LINE = ["--n", "3", "--d", "1", "--radius", "1", "--norm", "1"]
# the claim whose proof the work limit stops halfway: of a hundred leaves (collapse.global's takes a few, and half
# of its work is less than one leaf at the dearest test, at which the meter prices the boxes ahead)
HALVED = "collapse.tanh"


def prove(limits: Limits, resume=None):
    return region_proof.prove(reductions.region(3, 1, 1, 1), profiles.claim_profile(HALVED),
                              time_limit=60.0, limits=limits, resume=resume)


@pytest.fixture(scope="module")
def whole():
    result = prove(Limits())
    assert result.verdict == region_proof.PROVED and result.confirmed and not result.stopped
    return result


@pytest.mark.parametrize("limit", [
    "work=10",  # ran the whole search, then printed PROVED (NOT CERTIFIED) with exit 3
    # the meter priced the checker's work and its measure of a value's tree, not the text written, which even the
    # root box left open passes: the same
    "bytes=100",
    # holds the root box left open but no leaf (its box's intervals are five deep): the meter's leaves had no box
    "nesting=4",
])
def test_a_limit_no_box_fits_is_refused_before_the_search(monkeypatch, capsys, limit):
    """A limit that the certificate of no decided box fits is refused before any search, in one line naming it."""
    def searched(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(bnb, "explore", searched)
    assert main(["prove", *LINE, "--limit", limit]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    name = limit.partition("=")[0]
    assert "refused before starting" in captured.err and f"--limit {name}=N" in captured.err


def test_the_search_stops_before_its_certificate_passes_the_work_limit(whole):
    work = checker_region.work(whole.certificate)
    limits = Limits(work=work // 2)
    stopped = prove(limits)
    assert stopped.verdict == region_proof.UNDECIDED and stopped.left and stopped.leaves
    assert "work limit" in stopped.stopped and "--limit work=N" in stopped.stopped
    # what it wrote is what the checker accepts under those limits: confirmed, not refused
    assert stopped.confirmed, stopped.message
    assert checker_region.work(stopped.certificate) <= limits.work
    # raised, the limit lets the proof go on from where it stopped to the end
    resumed = prove(Limits(), resume=stopped.certificate)
    assert resumed.verdict == region_proof.PROVED and resumed.confirmed and not resumed.stopped


def test_the_cli_says_which_limit_stopped_the_search(whole, capsys):
    work = checker_region.work(whole.certificate) // 2
    assert main(["prove", HALVED, *LINE, "--limit", f"work={work}"]) == 3
    out = capsys.readouterr().out
    assert "UNDECIDED:" in out and "NOT CERTIFIED" not in out, out
    stops = [line for line in out.splitlines() if line.strip().startswith("stopped:")]
    assert len(stops) == 1 and "--limit work=N" in stops[0], out
    assert main(["prove", HALVED, *LINE, "--limit", f"work={work}", "--json"]) == 3
    info = json.loads(capsys.readouterr().out)
    assert "--limit work=N" in info["stopped"] and info["verdict"] == "undecided"
    assert main(["prove", HALVED, *LINE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stopped"] is None


# ---- a violation's counterexample is confirmed under the user's limits, as `certify check` of it would be

FALSE = "D*tanh(0.245*a*D**2)"  # violated at the first box of n = 3, radius 1, norm 1


def violated(limits: Limits):
    region, profile = region_proof.prepare(None, FALSE, 3, 1, 1, 1, 30.0)
    return region_proof.prove(region, profile, time_limit=30.0, limits=limits)


def test_the_counterexample_is_certified_under_the_users_limits(monkeypatch):
    """It was certified under the default limits, whatever --limit said (nor was a raised one passed on)."""
    given, seen = Limits(work=10**10), []
    checked = region_proof.check_configuration

    def check(*args, **kwargs):
        seen.append(kwargs.get("limits"))
        return checked(*args, **kwargs)

    monkeypatch.setattr(region_proof, "check_configuration", check)
    result = violated(given)
    assert result.verdict == region_proof.VIOLATED_VERDICT and result.confirmed, result.message
    assert seen and all(limits == given for limits in seen), seen


def test_a_counterexample_beyond_the_users_limits_is_bad_input_not_a_violation(capsys):
    """--limit tokens=2 printed VIOLATED, confirmed, with exit 1, for a counterexample of 3 tokens."""
    assert main(["prove", "--bound", FALSE, *LINE, "--limit", "tokens=2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "--limit tokens=N" in captured.err, captured


def test_a_counterexample_beyond_the_dim_limit_is_refused_before_it_is_built(monkeypatch, capsys):
    """The configuration of a violation (a d x d matrix A of texts) was built before the check refused its dimension:
    --d 100000 wrote out 10^10 entries (tens of gigabytes) on finding one, and went on until killed."""
    def realised(region, point):
        raise AssertionError("a configuration beyond the dim limit was built")

    monkeypatch.setattr(reductions, "realise", realised)
    region = ["--bound", FALSE, "--n", "2", "--d", "100000", "--radius", "1", "--norm", "1"]
    assert main(["prove", *region]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "--limit dim=N" in captured.err, captured
    assert main(["prove", *region, "--limit", "dim=100000"]) == 2  # raised, the dimension passes the memory estimate
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "--limit memory=BYTES" in captured.err, captured


def test_the_checker_refuses_a_counterexample_beyond_the_limits_it_is_given():
    """`certify verify --limit tokens=2` confirmed a region proof violated at 3 tokens (its counterexample was
    verified under the default limits); now refused, as the counterexample's certificate alone is."""
    cert = json.loads(json.dumps(violated(Limits()).certificate))
    inner = cert["counterexample"]["certificate"]
    assert checker.verify(cert).ok and checker.verify(inner).ok
    for limits in (checker.Limits(tokens=2), checker.Limits(precision=40)):
        alone, nested = checker.verify(inner, limits), checker.verify(cert, limits)
        assert alone.refused and nested.refused and not nested.ok, nested
        assert alone.message in nested.message


def test_a_proof_whose_text_passes_the_byte_limit_is_not_written(tmp_path, capsys):
    """The checker's measure of a value's tree (an entry a byte) is shorter than the text written: one byte below
    the file's size the proof was confirmed and written, and `certify verify` with that limit refused the file.
    Whatever the run does under that limit, it writes no file that `certify verify` with it refuses."""
    full = tmp_path / "full.json"
    assert main(["prove", *LINE, "--out", str(full)]) == 0
    size = full.stat().st_size
    below = tmp_path / "below.json"
    capsys.readouterr()
    assert main(["prove", *LINE, "--limit", f"bytes={size - 1}", "--out", str(below)]) in (2, 3)
    assert not below.exists() or main(["verify", str(below), "--limit", f"bytes={size - 1}"]) == 0


def test_the_search_stops_before_its_text_passes_the_byte_limit(tmp_path, capsys):
    """The meter priced the skeleton's tree, not the text written: under half the proof's size the search ran to its
    end, then printed PROVED (NOT CERTIFIED) and wrote nothing.  It stops, undecided, naming the byte limit; what it
    writes fits and is confirmed under that limit, and resumed under the defaults it ends in the whole proof."""
    tanh = ["collapse.tanh", *LINE]
    full, part = tmp_path / "full.json", tmp_path / "part.json"
    assert main(["prove", *tanh, "--out", str(full)]) == 0
    limit = full.stat().st_size // 2
    capsys.readouterr()
    assert main(["prove", *tanh, "--limit", f"bytes={limit}", "--out", str(part)]) == 3
    printed = capsys.readouterr().out
    assert "UNDECIDED:" in printed and "NOT CERTIFIED" not in printed and "--limit bytes=N" in printed, printed
    assert part.stat().st_size <= limit and main(["verify", str(part), "--limit", f"bytes={limit}"]) == 0
    assert main(["prove", *tanh, "--resume", str(part), "--out", str(part)]) == 0
    assert json.loads(part.read_text())["tree"] == json.loads(full.read_text())["tree"]



def test_under_the_default_limits_the_search_stops_before_its_text_passes_the_byte_limit(monkeypatch, tmp_path, capsys):
    """Under the default limits the meter measured only the skeleton's tree (9 bytes a box at its dearest, against some
    90 of the text written), while the checker's confirmation reads a certificate that is not certain to fit as its
    text: with the default byte limit at half a proof's size, the search ran to its end, printed PROVED (NOT CERTIFIED)
    and wrote nothing.  It stops as under an explicit equal limit: undecided, naming the byte limit, with the same
    partial proof written, which `certify verify` accepts and a raised limit resumes to the whole proof."""
    tanh = ["collapse.tanh", *LINE]
    full, explicit, part = tmp_path / "full.json", tmp_path / "explicit.json", tmp_path / "part.json"
    assert main(["prove", *tanh, "--out", str(full)]) == 0
    limit = full.stat().st_size // 2
    assert main(["prove", *tanh, "--limit", f"bytes={limit}", "--out", str(explicit)]) == 3
    defaults = replace(core_limits.DEFAULT, bytes=limit)  # the documented limits, but for a byte limit a test can reach
    for module, name in ((core_limits, "DEFAULT"), (region_proof.certificates, "DEFAULT"), (region_proof, "DEFAULT_LIMITS")):
        monkeypatch.setattr(module, name, defaults)
    capsys.readouterr()
    assert main(["prove", *tanh, "--out", str(part)]) == 3
    printed = capsys.readouterr().out
    assert "UNDECIDED:" in printed and "NOT CERTIFIED" not in printed and "--limit bytes=N" in printed, printed
    assert part.exists() and part.stat().st_size <= limit and main(["verify", str(part)]) == 0
    assert json.loads(part.read_text())["tree"] == json.loads(explicit.read_text())["tree"]
    assert main(["prove", *tanh, "--resume", str(part), "--limit", f"bytes={Limits().bytes}", "--out", str(part)]) == 0
    assert json.loads(part.read_text())["tree"] == json.loads(full.read_text())["tree"]


# ---- the meter's price of a resumed proof: a few walks of its certificate, whatever its size


@pytest.mark.parametrize("decided", [1 << 10, 1 << 14])
def test_a_large_proof_near_a_limit_is_priced_in_a_few_walks(monkeypatch, decided):
    """Each of the checker's answers walks the whole certificate, and the meter halved the boxes ahead from the boxes
    decided so far until one fitted: a resumed proof of 100,000 leaves near the work limit was walked 12 to 18 times,
    6 to 8 s, before its first box.  Now one walk (the checker's confirmation of the first box; the work so far is the
    sum of the checker's prices of its symbols and leaves) finds the boxes that fit, whatever the proof's size, and
    exactly as many as the checker's estimate leaves room for."""
    region = reductions.region(3, 1, 1, 1)
    stated = {"kind": "region-proof", "verdict": "undecided", "claim": HALVED, "bound": None, "region": region.as_json()}
    top, room = 53, 5
    tree, closings = "?" * (2 * decided + 1), [(top, "direct")] * decided

    def skeleton(boxes):  # the proof so far with `boxes` more at their dearest, as the meter states it
        dearest = {"box": [["0", "1"]], "precision": top}
        return stated | {"tree": tree + "??" * boxes, "leaves": [{**dearest, "method": "direct"}] * decided
                         + [dearest] * boxes}

    limits = Limits(work=checker_region.work(skeleton(room)))
    assert checker.over_limits(skeleton(room + 1), checker.Limits(**vars(limits))) is not None
    walks, work = [], checker_region.work

    def counted(cert):
        walks.extend([1] if len(cert.get("leaves", ())) >= decided else [])
        return work(cert)

    monkeypatch.setattr(checker_region, "work", counted)
    meter = region_proof.budget.Meter(stated, limits, top, tree, closings, text=(lambda: 0, lambda boxes: 0))  # no text
    admitted = meter.admits()
    assert len(walks) == 1, len(walks)
    assert admitted and meter.ahead + 1 == room


def test_the_text_is_measured_again_only_where_its_bound_passes_the_limit():
    """Under a user's limits the meter measured the certificate's text (built and written in full: seconds for one of
    7 MB) at every refill: a resumed search of --time-limit 1 took 5 s.  Measured once, it is bounded by the most the boxes
    since add, and measured again only where that bound passes the limit: never a box the text has no room for."""
    measured, decided, limit = [], [0], 10_000

    def written():  # the text now: 1,000 bytes and 5 a box decided (growth bounds a box by 10)
        measured.append(decided[0])
        return 1000 + 5 * decided[0]

    stated = {"kind": "region-proof", "verdict": "undecided", "claim": HALVED, "bound": None,
              "region": reductions.region(3, 1, 1, 1).as_json()}
    meter = region_proof.budget.Meter(stated, Limits(bytes=limit, work=10**15), 53, text=(written, lambda k: 10 * k))
    while meter.admits():
        assert written() + 5 <= limit  # the box admitted fits
        measured.pop()
        meter.split()
        decided[0] += 1
    assert decided[0] == (limit - 1000 - 10) // 5 + 1  # every box the text has room for at its most
    # measured again first where the first measure's bound has no room for a box (not at each refill: 1, 2, 4, ...),
    # then each time about half the room is left
    assert measured[:2] == [0, (limit - 1000 - 10) // 10 + 1] and len(measured) <= 16, measured


def test_a_stop_names_the_limit_reading_the_proof_once(monkeypatch):
    """At a stop the meter names the limit the next box passes (reason): asked of the checker a limit at a time, the
    proof's skeleton was read twenty times, its tree and its leaves' work once for each of the ten limits.  Now once
    each: the checker's estimate reads the leaves' work once for every limit, and the tree is measured again only
    when it is what the checker refuses."""
    region = reductions.region(3, 1, 1, 1)
    stated = {"format": "certify-certificate/1", "kind": "region-proof", "verdict": "undecided", "claim": HALVED,
              "bound": None, "region": region.as_json()}
    decided, top = 1 << 10, 53
    walks = {"tree": 0, "work": 0}
    for name, owner, attribute in (("tree", checker, "tree_problem"), ("work", checker_region, "work")):
        walked = getattr(owner, attribute)

        def counted(cert, *args, walked=walked, name=name):
            walks[name] += len(cert["leaves"]) >= decided  # the proof's, not a counterexample's
            return walked(cert, *args)

        monkeypatch.setattr(owner, attribute, counted)
    meter = region_proof.budget.Meter(stated, Limits(work=1), top, "?" * (2 * decided + 1), [(top, "direct")] * decided,
                                      text=(lambda: 0, lambda boxes: 0))
    reason = meter.reason(quote=False)
    assert reason.startswith("the checker's work limit of 1: raise it with --limit work=N"), reason
    assert walks == {"tree": 1, "work": 1}, walks


def test_the_command_prices_the_proof_once(monkeypatch, tmp_path, whole):
    """The command line priced the proof (its meter: the checker's work and the text of the certificate it resumes)
    before the progress bar, to refuse a limit no box fits, and the search priced it again; now the search goes on
    from the start the command made."""
    made = []

    class Counted(region_proof.budget.Meter):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(region_proof.budget, "Meter", Counted)
    assert main(["prove", HALVED, *LINE]) == 0
    assert len(made) == 1
    work = checker_region.work(whole.certificate) // 2
    part = tmp_path / "part.json"
    assert main(["prove", HALVED, *LINE, "--limit", f"work={work}", "--out", str(part)]) == 3
    made.clear()
    assert main(["prove", HALVED, *LINE, "--resume", str(part)]) == 0
    assert len(made) == 1


def test_a_resumed_proof_has_each_leaf_tested_by_the_checker_once(monkeypatch, tmp_path, whole, capsys):
    """`--resume` has the checker confirm the proof it continues before the search, then the merged proof: that
    replayed every earlier leaf's test a second time (a third of the time of a resumed proof's checking).  The checker
    keeps the tests it closed, so each runs once, and the merged proof is still confirmed in full."""
    work = checker_region.work(whole.certificate) // 2
    part, out = tmp_path / "part.json", tmp_path / "proof.json"
    assert main(["prove", HALVED, *LINE, "--limit", f"work={work}", "--out", str(part)]) == 3
    earlier = json.loads(part.read_text())["leaves"]
    tests = []
    closes = checker_region._closes

    def counted(method, box, profile):
        tests.append((method, box))
        return closes(method, box, profile)

    monkeypatch.setattr(checker_region, "_closes", counted)
    capsys.readouterr()
    assert main(["prove", HALVED, *LINE, "--resume", str(part), "--out", str(out)]) == 0
    assert "confirmed: collapse.tanh proved on the region" in capsys.readouterr().out
    merged = json.loads(out.read_text())["leaves"]
    assert len(earlier) < len(merged) and len(tests) == len(merged) == len(set(tests)), (len(tests), len(merged))
    monkeypatch.setattr(checker_region, "_closes", closes)
    assert main(["verify", str(out)]) == 0  # the file alone: every leaf replayed


@pytest.mark.parametrize("share", [2, 4, 10])
def test_near_a_limit_the_checker_is_asked_a_few_times(monkeypatch, whole, share):
    """Near the work limit the meter asked the checker's estimate 40 to 50 times in a search of a hundred boxes (some
    80 times, 2.4 s of 20, in one of 7,618 boxes): each refill priced the boxes ahead at the dearest, which the boxes
    decided cost far less than, so each spent a few percent of the room left and the checker walked the whole proof
    again.  The meter now keeps the work of the proof as it grows by the checker's price of a symbol and a leaf, and
    asks the checker about the whole at the first box and at the stop; the search stops where it did: the proof written
    fits the limits, and with one more box at its dearest it would not."""
    limits = Limits(work=checker_region.work(whole.certificate) // share)
    asked, estimate = [], checker.estimate

    def counted(cert, *args):
        asked.append(cert["kind"])
        return estimate(cert, *args)

    monkeypatch.setattr(checker, "estimate", counted)
    region, profile = reductions.region(3, 1, 1, 1), profiles.claim_profile(HALVED)
    start = region_proof.preflight(region, profile, limits)
    stopped = region_proof.prove(region, profile, limits=limits, start=start)
    monkeypatch.undo()
    # the first box, the stop confirmed and its limit named, the proof written confirmed
    assert len(asked) <= 5, len(asked)
    assert start.meter.work == checker_region.work(stopped.certificate)  # the work kept is the checker's estimate
    assert "work limit" in stopped.stopped and stopped.confirmed, stopped.message
    assert checker.verify(stopped.certificate, checker.Limits(**vars(limits))).ok
    top = region_proof._ladder(profile)[1]
    grown = stopped.certificate | {"tree": stopped.certificate["tree"] + "??",
                                   "leaves": stopped.certificate["leaves"] + [{"box": [["0", "1"]], "precision": top}]}
    assert checker.over_limits(grown, checker.Limits(**vars(limits))) is not None
