"""certify prove: region proofs, their certificates, the checker's replay, and the traps."""

from __future__ import annotations

import copy
import json
import random
import shlex
import signal
import subprocess
import sys
import time
from fractions import Fraction

import pytest
from flint import arb, ctx
from mpmath import mp

import certify_checker as checker
from certify.cli import main
from certify.engine import check
from certify.errors import BadInput
from certify.prove import bnb, closing, profiles, reductions, tilt
from certify.prove import region as region_proof
from certify_checker import region_bounds
from certify_checker import region_proof as checker_region

import signalled

SMALL = [("collapse.tanh", 2, None, 8, 8), ("collapse.global", 2, None, 1, 4), ("collapse.global", 3, 1, 1, 1),
         ("collapse.tanh", 3, 1, "1/2", "1/2")]


def prove(claim, n, d, radius, norm, bound=None, time_limit=30.0):
    profile = profiles.bound_profile(bound, n, d) if bound else profiles.claim_profile(claim)
    return region_proof.prove(reductions.region(n, d, radius, norm), profile, time_limit=time_limit)


@pytest.fixture(scope="module")
def line_proof():
    return prove("collapse.global", 3, 1, 1, 1)


# ---- the traps: a NaN or infinite enclosure never closes a box

BAD_BALLS = [arb("nan"), arb("inf"), arb("-inf"), arb(0).union(arb("inf"))]


@pytest.mark.parametrize("bad", BAD_BALLS, ids=["nan", "inf", "-inf", "[0, inf]"])
def test_certainly_nonnegative_refuses_non_finite(bad):
    assert not bnb.certainly_nonnegative(bad)
    assert not bnb.certainly_nonnegative(bad, strict=True)


def _poisoned(bad: arb) -> profiles.Profile:
    """A profile whose every enclosure is the bad ball: 1 - g, g', g(L)/L and g's secant slopes."""
    return profiles.Profile("collapse.tanh", "tanh(a*D**2/4)*D", gap_upper=lambda L: -bad, slope_lower=lambda top: bad,
                            chord_lower=lambda L: bad, secant_lower=lambda L: bad, vanishes=True, tanh=False)


BOXES = {"two-tokens": [((Fraction(1), Fraction(2)), (Fraction(0), Fraction(1, 8))),
                        ((Fraction(0), Fraction(1, 4)), (Fraction(1, 2), Fraction(1)))],
         "line": [((Fraction(1), Fraction(2)), (Fraction(0), Fraction(1, 8)), (Fraction(0), Fraction(1, 64))),
                  ((Fraction(0), Fraction(1, 4)), (Fraction(1, 2), Fraction(1)), (Fraction(1, 2), Fraction(1)))]}
MENU = [(name, method) for name, methods in reductions.METHODS.items() for method in methods]


@pytest.mark.parametrize("bad", BAD_BALLS, ids=["nan", "inf", "-inf", "[0, inf]"])
@pytest.mark.parametrize("reduction,method", MENU)
def test_prover_closing_tests_refuse_non_finite(reduction, method, bad, monkeypatch):
    for box in BOXES[reduction]:
        assert not closing.closes(method, box, _poisoned(bad))
    # and when the ratio's own enclosures are bad, with an honest profile
    monkeypatch.setattr(closing, "one_minus_ratio_lower", lambda *args: bad)
    monkeypatch.setattr(closing, "variance_upper", lambda *args: -bad)
    monkeypatch.setattr(closing, "slope_margins", lambda w, L, inner: tuple((bad, bad) for _ in inner))
    for box in BOXES[reduction]:
        if not method.endswith(("identity", "pair")):
            assert not closing.closes(method, box, profiles.claim_profile("collapse.global"))
        if method.startswith("monotone-t/"):  # the sign of dF/dt is never taken from a bad ball
            assert not closing.closes(method, box, profiles.claim_profile("collapse.tanh"))


class _PoisonedCheckerProfile:
    def __init__(self, bad):
        self.kind, self.bad, self.tanh = "collapse.global", bad, False

    def gap_upper(self, L):
        return -self.bad

    def slope_lower(self, top):
        return self.bad

    def chord_lower(self, L):
        return self.bad

    def secant_lower(self, L):
        return self.bad

    def vanishes(self):
        return True


CHECKER_MENU = [(name, method) for name, methods in checker_region.METHODS.items() for method in methods]


@pytest.mark.parametrize("bad", BAD_BALLS, ids=["nan", "inf", "-inf", "[0, inf]"])
@pytest.mark.parametrize("reduction,method", CHECKER_MENU)
def test_checker_closing_tests_refuse_non_finite(reduction, method, bad, monkeypatch):
    for box in BOXES[reduction]:
        assert not checker_region._closes(method, box, _PoisonedCheckerProfile(bad))
    monkeypatch.setattr(checker_region, "rest_of_ratio_lower", lambda *args: bad)
    monkeypatch.setattr(checker_region, "variance_upper", lambda *args: -bad)
    monkeypatch.setattr(checker_region, "slope_margins", lambda w, L, inner: [(bad, bad) for _ in inner])
    for box in BOXES[reduction]:
        assert not checker_region._closes(method, box, checker_region.Profile("collapse.global", None, 2, None))
        if method.startswith("monotone-t/"):
            assert not checker_region._closes(method, box, checker_region.Profile("collapse.tanh", None, 3, 1))


def test_three_token_sign_test_agrees_with_mpmath():
    """Where the sign test certifies dF/dt <= 0, sampled points agree (an independent mpmath derivative)."""
    mp.dps = 30
    rng = random.Random(3)
    certified = 0
    for _ in range(60):
        w0, L0, t0 = Fraction(rng.randrange(0, 32), 16), Fraction(rng.randrange(0, 32), 8), Fraction(rng.randrange(0, 16), 64)
        box = ((w0, w0 + Fraction(1, 16)), (L0, L0 + Fraction(1, 8)), (t0, t0 + Fraction(1, 64)))
        with ctx.workprec(53):
            ok = [bnb.certainly_nonnegative(tilt.slope_margins(box[0], box[1], box[2:])[0][0]),
                  bnb.certainly_nonnegative(checker_region.slope_margins(box[0], box[1], box[2:])[0][0])]
        if not any(ok):
            continue
        certified += 1
        for _ in range(5):
            w, L, t = (mp.mpf(float(lo)) + mp.mpf(float(hi - lo)) * rng.random() for lo, hi in box)
            F = lambda tt: _mp_mean(w + L / 2, [0, tt, 1]) - _mp_mean(w - L / 2, [0, tt, 1])  # noqa: E731
            assert mp.diff(F, t) <= mp.mpf(10) ** -20
    assert certified > 5


# ---- the enclosures against an independent mpmath computation

def _mp_mean(theta, taus):
    weights = [mp.exp(theta * t) for t in taus]
    return sum(w * t for w, t in zip(weights, taus)) / sum(weights)


def test_enclosures_contain_mpmath_values():
    mp.dps = 40
    rng = random.Random(7)
    for _ in range(150):
        inner = []
        for _ in range(rng.choice([0, 1, 2])):
            lo = Fraction(rng.randrange(0, 16), 16)
            inner.append((lo, lo + Fraction(rng.choice([0, 1, 2]), 16)))
        w_lo = Fraction(rng.randrange(0, 64), 8)
        L_lo = Fraction(rng.randrange(0, 64), 4)
        w = (w_lo, w_lo + Fraction(rng.randrange(0, 8), 8))
        L = (L_lo, L_lo + Fraction(rng.randrange(0, 8), 4))
        taus = [mp.mpf(0)] + [mp.mpf(float(a + (b - a) * Fraction(rng.random()))) for a, b in inner] + [mp.mpf(1)]
        wp = mp.mpf(float(w[0])) + (mp.mpf(float(w[1] - w[0]))) * rng.random()
        Lp = mp.mpf(float(L[0])) + (mp.mpf(float(L[1] - L[0]))) * rng.random()
        rest = 1 - _mp_mean(wp + Lp / 2, taus) + _mp_mean(wp - Lp / 2, taus)
        with ctx.workprec(53):
            for lower in (tilt.one_minus_ratio_lower(w, L, tuple(inner)).lower(),
                          region_bounds.rest_of_ratio_lower(w, L, tuple(inner))):
                assert mp.mpf(lower.mid().str(30, radius=False)) <= rest * (1 + mp.mpf(10) ** -12)
            theta = (w[0] - L[1] / 2, w[1] + L[1] / 2)
            t = mp.mpf(float(theta[0])) + mp.mpf(float(theta[1] - theta[0])) * rng.random()
            m = _mp_mean(t, taus)
            variance = sum(mp.exp(t * x) * (x - m) ** 2 for x in taus) / sum(mp.exp(t * x) for x in taus)
            for upper in (tilt.variance_upper(theta, tuple(inner)).upper(), region_bounds.variance_upper(theta, tuple(inner))):
                assert variance <= mp.mpf(upper.mid().str(30, radius=False)) * (1 + mp.mpf(10) ** -12)


# ---- small proofs succeed and verify

@pytest.mark.parametrize("claim,n,d,radius,norm", SMALL)
def test_small_proofs_are_proved_and_confirmed(claim, n, d, radius, norm):
    result = prove(claim, n, d, radius, norm)
    assert result.verdict == "proved" and result.confirmed, result.message
    assert not result.left and result.volume_proved == 1
    assert checker.verify(json.loads(json.dumps(result.certificate))).ok


@pytest.mark.slow  # about 20 s of CPU
def test_four_tokens_at_radius_and_norm_two_are_proved():
    """collapse.tanh on four tokens at radius = norm = 2: up to L = 32 an inner position within e^(-L/2) of 0 next
    to the tight corner 0, 0, 0, 1 (w = ln 3); the sign of dF/dt2 there, proved from the factors' ends, lets the
    face t2 = t2_lo decide while w and t3 are split."""
    result = prove("collapse.tanh", 4, 1, 2, 2, time_limit=600.0)
    assert result.verdict == "proved" and result.confirmed, result.message
    assert checker.verify(json.loads(json.dumps(result.certificate))).ok
    large = [box for box, method, _ in result.leaves if method.startswith("monotone-t/") and box[1][0] >= 24]
    assert large


@pytest.mark.slow  # about a minute of CPU
def test_five_tokens_at_radius_and_norm_two_are_proved():
    """collapse.tanh on five tokens at radius = norm = 2 (tight along w = ln(3/2) and ln 4 at the corners of the
    positions): the boxes outside the sorted part t2 <= t3 <= t4 are ordered leaves, the others are closed by tests."""
    result = prove("collapse.tanh", 5, 1, 2, 2, time_limit=900.0)
    assert result.verdict == "proved" and result.confirmed, result.message
    assert checker.verify(json.loads(json.dumps(result.certificate))).ok
    methods = {method for _, method, _ in result.leaves}
    assert "ordered" in methods and "monotone-t/pair" in methods


def test_user_bound_with_divided_form_is_proved():
    result = prove(None, 2, 4, 1, 2, bound="(1-exp(-a*D**2/2))*D")
    assert result.verdict == "proved" and result.confirmed, result.message
    assert any(method.endswith("divided") for _, method, _ in result.leaves)


def test_undecided_reports_the_fraction_and_the_open_boxes():
    result = prove("collapse.tanh", 6, 1, 2, 2, time_limit=0.05)  # 3/4 of its domain closed after 30 s of CPU
    assert result.verdict == "undecided" and result.confirmed, result.message
    assert result.left and 0 <= result.volume_proved < 1
    assert result.certificate["volume_proved"] == str(result.volume_proved)


def test_an_undecided_proof_never_reads_as_all_of_the_volume(tmp_path, capsys):
    """sqrt(7 L/8), written sqrt(L - L/8), is not closed near L = 0 (the interval of L - L/8 over [0, L_hi] reaches
    below 0, so no slope is proved there) and every other box is: 1 - 1e-27 of the domain proved, which the
    command, its JSON, the result's repr and the checker's message rounded up to 100% (or 1.0) of it."""
    out = tmp_path / "proof.json"
    bound = "D*sqrt(a*D**2 - a*D**2/8)"
    args = ["prove", "--bound", bound, "--n", "2", "--radius", "1", "--norm", "1", "-q"]
    assert main(args + ["--out", str(out)]) == 3
    text = capsys.readouterr().out
    assert "undecided" in text.lower() and "100.0000%" not in text and "99.9999% of the reduced domain" in text
    assert main(["verify", str(out)]) == 0
    confirmation = capsys.readouterr().out
    assert "99.9999%" in confirmation and "100.0000%" not in confirmation and "1 box open" in confirmation
    assert main(args + ["--json"]) == 3
    assert 0 < json.loads(capsys.readouterr().out)["volume_proved"] < 1
    result = prove(None, 2, None, 1, 1, bound=bound)
    assert result.left and result.volume_proved < 1 and "99.9999% of the volume" in repr(result)


def test_an_undecided_proof_with_ordered_leaves_counts_the_leaves_it_closed_directly():
    """Five tokens at radius 2 stopped after ten leaves (6 ordered, 4 closed directly: a number of leaves, not of
    seconds, which a loaded machine made too few): the open boxes, counted (n - 2)! = 6 times, left 1 - 6 x open below
    0, so the certificate stated 0 proved where its leaves closed directly (chord, rise, ...) cover much of the
    domain: those count whatever the open boxes hold."""

    def stop_after_ten_leaves(closed, queue, fraction, *checker):
        if not checker and closed >= 10:
            raise KeyboardInterrupt  # ends the search as its time limit would (interruptible)

    result = region_proof.prove(reductions.region(5, 1, 2, 2), profiles.claim_profile("collapse.tanh"),
                                time_limit=600.0, progress=stop_after_ten_leaves, interruptible=True)
    assert result.verdict == "undecided" and result.confirmed, result.message
    root = region_proof.volume(result.reduction.root)
    direct = sum((region_proof.volume(box) for box, method, _ in result.leaves if method != "ordered"), Fraction(0))
    open_part = 6 * sum((region_proof.volume(box) for box in result.left), Fraction(0))
    assert any(method == "ordered" for _, method, _ in result.leaves) and direct > 0
    assert result.volume_proved == max(direct, root - open_part) / root >= direct / root > 0


# ---- tampered proofs are rejected

def _edits(cert):
    """Each edit of a proved certificate, named."""
    def drop_leaf(c):
        c["leaves"].pop()

    def relabel(c):
        # a leaf at L = 0 (divided or chord): direct compares with 1 - g(0) = 1 there and closes nothing
        leaf = next(x for x in c["leaves"] if x["method"] in ("divided", "chord") and Fraction(x["box"][1][0]) == 0)
        leaf["method"] = "direct"

    def widen_region(c):
        c["region"]["radius"] = "2"

    def widen_region_and_domain(c):
        c["region"]["radius"] = "2"
        c["reduction"]["domain"][0][1] = "2"
        c["reduction"]["domain"][1][1] = "16"

    def change_claim(c):
        c["claim"] = "collapse.tanh"

    def change_bound(c):
        c["claim"], c["bound"] = None, "tanh(a*D**2/4)*D"  # sharper than the claim proved

    def move_leaf(c):
        c["leaves"][0]["box"][0][1] = str(Fraction(c["leaves"][0]["box"][0][1]) * 2)

    def verdict(c):
        c["verdict"] = "undecided"

    def volume(c):
        c["volume_proved"] = "1/2"

    def tree(c):
        c["tree"] = c["tree"].replace(".", "?", 1)

    def lemma(c):
        c["lemmas"] = c["lemmas"][:1]

    def precision(c):
        c["leaves"][0]["precision"] = 10

    def tree_digits(c):  # the same bisections in Arabic-Indic digits: not the tree certify writes
        c["tree"] = c["tree"].translate({ord(str(k)): chr(0x660 + k) for k in range(10)})

    def left_as_object(c):  # no open box, written as a JSON object: not the list of boxes the format has
        c["left"] = {}

    def leaves_as_object(c):
        c["leaves"] = dict(enumerate(c["leaves"]))

    return [drop_leaf, relabel, widen_region, widen_region_and_domain, change_claim, change_bound, move_leaf,
            verdict, volume, tree, lemma, precision, tree_digits, left_as_object, leaves_as_object]


@pytest.mark.parametrize("index", range(15))
def test_tampered_proofs_are_rejected(line_proof, index):
    assert line_proof.verdict == "proved" and checker.verify(line_proof.certificate).ok
    cert = copy.deepcopy(line_proof.certificate)
    edit = _edits(cert)[index]
    edit(cert)
    confirmation = checker.verify(cert)
    assert not confirmation.ok, edit.__name__


def test_tampered_two_token_proof_relabelled_identity_is_rejected():
    result = prove("collapse.global", 2, None, 1, 4)
    cert = copy.deepcopy(result.certificate)
    cert["leaves"][0]["method"] = "monotone-w/identity"
    assert not checker.verify(cert).ok
    tanh = prove("collapse.tanh", 2, None, 1, 4).certificate
    forged = copy.deepcopy(tanh)
    forged["claim"] = "collapse.global"  # the identity closes the tanh claim only
    assert not checker.verify(forged).ok


# ---- false bounds end violated with a certified point, never proved

@pytest.mark.parametrize("bound,n,d,radius,norm", [
    ("D*(1-exp(-0.45*a*D**2))", 2, 3, 2, 4),  # the sharp exponent is 1/2: false once a D^2 > 14
    ("tanh(a*D**2/4)*D*(1 - exp(-(a*D**2 - 20)**2*64)/1000)", 2, None, 2, 4),  # a narrow dip below tanh at L = 20
    ("(1-exp(-a*D**2))*D*(1 - exp(-(a*D**2 - 5)**2*16))", 3, 1, 2, 2),  # vanishes at L = 5
])
def test_false_bounds_are_violated_at_a_certified_point(bound, n, d, radius, norm, tmp_path):
    result = prove(None, n, d, radius, norm, bound=bound)
    assert result.verdict == "violated" and result.confirmed, result.message
    config = result.counterexample["config"]
    assert check(config, bound=bound).verdict == "violated"
    assert checker_region._inside(config, result.certificate["region"]) is None
    forged = copy.deepcopy(result.certificate)
    forged["region"]["radius"] = str(Fraction(radius) / 100)  # the point is then outside the region
    forged["reduction"]["domain"] = [[str(lo), str(hi)] for lo, hi in
                                     reductions.reduce(reductions.region(n, d, Fraction(radius) / 100, norm)).root]
    assert not checker.verify(forged).ok


# ---- the command line

def test_cli_proves_writes_and_verifies(tmp_path, capsys):
    out = tmp_path / "proof.json"
    assert main(["prove", "collapse.global", "--n", "3", "--d", "1", "--radius", "1", "--norm", "1",
                 "--out", str(out), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "PROVED" in captured.out and "of the volume proved" in captured.err  # progress on stderr (forced:
    # bars are drawn by default only when stderr is a terminal)
    assert main(["verify", str(out)]) == 0


def test_cli_progress_shows_100_percent_only_once_all_is_proved(monkeypatch, capsys):
    """The bar's percentage was rounded: 99.96% of the volume proved, boxes still open, showed "100.0%"."""
    prove, drawn = region_proof.prove, []

    def reporting(*args, progress, **kwargs):
        time.sleep(0.6)  # past the bar's interval: this report is drawn
        progress(10, 3, 0.9996)
        drawn.append(capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1])
        return prove(*args, progress=progress, **kwargs)

    monkeypatch.setattr(region_proof, "prove", reporting)
    assert main(["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1", "--progress"]) == 0
    assert drawn[0].startswith("certify prove:  99.9% of the volume proved"), drawn


def test_cli_progress_names_the_checkers_replay_as_it_begins(monkeypatch, capsys):
    """After the search the checker replays every leaf (4 s for the 5113 leaves of collapse.tanh, n = 4, radius =
    norm = 2), and the bar stood at its last box meanwhile, as if the search were still going."""
    confirm, drawn = region_proof.certificates.confirm, []

    def watched(*args, **kwargs):
        drawn.append(capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1])
        return confirm(*args, **kwargs)

    monkeypatch.setattr(region_proof.certificates, "confirm", watched)
    assert main(["prove", "collapse.global", "--n", "3", "--d", "1", "--radius", "1", "--norm", "1", "--progress"]) == 0
    assert drawn[-1].startswith("certify prove: 100.0% of the volume proved") and "the checker" in drawn[-1], drawn


def test_cli_violated_writes_a_configuration_check_confirms(tmp_path, capsys):
    out = tmp_path / "proof.json"
    bound = "D*(1-exp(-0.45*a*D**2))"
    assert main(["prove", "--bound", bound, "--n", "2", "--radius", "2", "--norm", "4", "--out", str(out),
                 "--json"]) == 1
    info = json.loads(capsys.readouterr().out)
    assert info["verdict"] == "violated" and info["counterexample"]
    assert main(["check", info["counterexample"], "--bound", bound]) == 1
    assert main(["verify", str(out)]) == 0


def test_cli_violated_names_the_check_that_confirms_it(tmp_path, capsys, monkeypatch):
    """A violation's line said "(certify check confirms it)": `certify check FILE` as written checks collapse.global,
    which holds there (exit 0); the line gives the command with the proof's bound, which exits 1."""
    monkeypatch.chdir(tmp_path)
    assert main(["prove", "--bound", "D*(1-exp(-0.45*a*D**2))", "--n", "2", "--radius", "2", "--norm", "4"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "counterexample configuration" in x)
    command = line[line.index("re-check: certify ") + len("re-check: certify "):].rstrip(")")
    assert main(shlex.split(command)) == 1, line


def test_cli_re_check_commands_carry_the_limits_the_checker_confirmed_under(tmp_path, capsys, monkeypatch):
    """The counterexample's re-check command (and the certificate's) left out the --limit options the proof ran
    under, which `certify check` and `certify verify` need where a limit was raised for it."""
    monkeypatch.chdir(tmp_path)
    limit = "--limit work=1000000000000"
    assert main(["prove", "--bound", "D*(1-exp(-0.45*a*D**2))", "--n", "2", "--radius", "2", "--norm", "4",
                 "--out", "proof.json", *shlex.split(limit)]) == 1
    lines = capsys.readouterr().out.splitlines()
    for marker, exit_code in (("counterexample configuration", 1), ("certificate:", 0)):
        line = next(x for x in lines if marker in x)
        command = line[line.index("re-check") :].split("certify ", 1)[1].rstrip(")`")
        assert command.endswith(limit) and main(shlex.split(command)) == exit_code, line


def test_the_checker_counts_one_leaf_as_a_leaf():
    """A proof closed by one leaf was confirmed "(1 leaves, reduction two-tokens)"."""
    result = prove("collapse.tanh", 2, None, 8, 8)
    assert len(result.leaves) == 1 and result.confirmed
    assert "(1 leaf, reduction two-tokens)" in result.message, result.message

@pytest.mark.parametrize("same", ["--out", "--resume"])
def test_cli_refuses_a_counterexample_path_that_is_the_proofs(tmp_path, capsys, monkeypatch, same):
    """--counterexample P --out P wrote the violation's configuration over the certificate it had just written
    (and still named "certificate: P"); --resume P alike would lose the proof resumed.  Refused before any work."""
    monkeypatch.chdir(tmp_path)
    bound = "D*(1-exp(-0.45*a*D**2))"
    argv = ["prove", "--bound", bound, "--n", "2", "--radius", "2", "--norm", "4"]
    assert main(argv + ["--out", "proof.json"]) == 1
    before = (tmp_path / "proof.json").read_bytes()
    capsys.readouterr()
    assert main(argv + [same, "proof.json", "--counterexample", "./proof.json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"--counterexample ./proof.json is the file of {same}" in captured.err, captured.err
    assert (tmp_path / "proof.json").read_bytes() == before and main(["verify", "proof.json"]) == 0


def test_cli_undecided_exits_3(capsys):
    # collapse.tanh on six tokens at radius = norm = 2 is far from proved (after 30 s of CPU a quarter of its domain is
    # open, which may hold all of the sorted part, 1/24 of it: 0% of the volume proved)
    assert main(["prove", "collapse.tanh", "--n", "6", "--d", "1", "--radius", "2", "--norm", "2",
                 "--time-limit", "0.05"]) == 3
    assert "UNDECIDED" in capsys.readouterr().out


@pytest.mark.parametrize("args", [
    ["collapse.cubic", "--n", "2", "--radius", "1", "--norm", "1"],
    ["--n", "3", "--d", "2", "--radius", "1", "--norm", "1"],
    ["--n", "3", "--radius", "1", "--norm", "1"],
    ["--n", "1", "--radius", "1", "--norm", "1"],
    ["--n", "2", "--radius", "-1", "--norm", "1"],
    ["--n", "2", "--radius", "abc", "--norm", "1"],
    ["--n", "2", "--radius", "1", "--norm", "nan"],
    ["--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "0"],
    ["--bound", "a*D**3", "--n", "2", "--radius", "1", "--norm", "1"],
    ["--bound", "a*(a*D**2)*D", "--n", "2", "--radius", "1", "--norm", "1"],  # one a too many: a^2 D^3
    ["--bound", "D*a/D**2", "--n", "2", "--radius", "1", "--norm", "1"],  # a D^-1
    ["--bound", "(1-exp(-a*D))*D", "--n", "2", "--radius", "1", "--norm", "1"],
    ["--bound", "v*D", "--n", "2", "--radius", "1", "--norm", "1"],
    ["collapse.tanh", "--bound", "tanh(a*D**2/4)*D", "--n", "2", "--radius", "1", "--norm", "1"],
    # an empty bound (an unset variable) is bad input, as for check: it proved collapse.global, exit 0
    ["--bound", "", "--n", "2", "--radius", "1", "--norm", "1"],
    ["collapse.tanh", "--bound", "", "--n", "2", "--radius", "1", "--norm", "1"],
    ["--n", "2", "--radius", "1"],
    ["--n", "2", "--radius", "1e200", "--norm", "1"],
    # 4 norm radius^2 = 4e-12000: the boxes' bounds could not be written in the certificate
    ["--n", "2", "--radius", "1e-4000", "--norm", "1e-4000", "--time-limit", "5"],
])
def test_cli_bad_input_exits_2(args, capsys):
    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("certify: error:") and "Traceback" not in "".join(err)
    assert "certify prove:" not in err[-1]  # the prefix is certify's, once, as for every command


def test_suite_section_rows_are_as_expected(tmp_path):
    from certify.suite import SuiteRun, region_proofs
    rows = list(region_proofs.section(SuiteRun(out_dir=tmp_path)))
    assert len(rows) == len(region_proofs.CASES) and all(row.ok for row in rows), rows
    assert {row.verdict for row in rows} == {"proved", "violated"}
    assert all((tmp_path / row.certificate).is_file() for row in rows)
    # counts read in English: the first case closes its one box at once ("1 leaves, 1 boxes" before)
    assert rows[0].detail.startswith("1 leaf, 1 box, ") and "1 leaves" not in " ".join(row.detail for row in rows)


@pytest.mark.parametrize("bound,n,d,verdict", [("D*(a*D**2)", 2, None, "proved"),
                                               ("D*(a*D**2/4)*(a*D**2)", 3, 1, "violated")])
def test_a_bound_whose_factors_make_a_d_squared_is_decided(bound, n, d, verdict):
    """D*(a*D**2) is D g(a D^2) with g(L) = L (the cubic claim a D^3), though its product flattens to the factors
    D, a, D**2: the prover and the checker read it as the reduced form (it was refused as bad input).  It holds,
    since F <= tanh(L/4) <= L; g(L) = L^2/4 does not (F ~ L/4 near L = 0)."""
    result = prove(None, n, d, "1/2", 1, bound=bound, time_limit=20)
    assert result.verdict == verdict and result.confirmed, result.message


def test_a_bound_in_d_proved_for_one_dimension_is_not_accepted_for_every_dimension():
    result = prove(None, 2, 2, 1, 1, bound="(1-exp(-a*D**2/d))*D")
    assert result.verdict == "proved" and result.confirmed, result.message
    forged = copy.deepcopy(result.certificate)
    forged["region"]["d"] = None
    assert not checker.verify(forged).ok


def test_a_bound_written_as_the_tanh_claim_uses_the_identity_and_a_perturbed_one_does_not():
    same = prove(None, 2, None, 2, 2, bound="tanh(a*D**2/4)*D")
    assert same.verdict == "proved" and same.confirmed and same.leaves[0][1] == "monotone-w/identity"
    forged = copy.deepcopy(same.certificate)
    forged["bound"] = "tanh(a*D**2/4.001)*D"  # sharper than tanh(L/4): false at w = 0
    assert not checker.verify(forged).ok


@pytest.mark.parametrize("where", ["top", "region", "reduction", "leaf", "counterexample"])
def test_a_region_proof_states_nothing_the_checker_does_not_read(line_proof, where, tmp_path):
    """Extra fields (a note, a "proved_for_every_d": true) were confirmed with the rest, unread."""
    if where == "counterexample":
        result = prove(None, 2, None, 2, 2, bound="(1-exp(-a*D**2/8))*D")
        assert result.verdict == "violated" and checker.verify(result.certificate).ok
        cert = copy.deepcopy(result.certificate)
        cert["counterexample"]["proved_for_every_d"] = True
    else:
        cert = copy.deepcopy(line_proof.certificate)
        part = {"top": cert, "region": cert["region"], "reduction": cert["reduction"], "leaf": cert["leaves"][0]}[where]
        part["proved_for_every_d"] = True
    assert not checker.verify(cert).ok


def test_a_region_proof_is_held_to_the_work_limit_before_its_replay(line_proof):
    """Leaves at 2^14 bits, or a bisection tree of millions of symbols, had the checker replay for hours
    (a true bound, 2*D, in a full tree of 2^18 leaves: 40 MB, 50 ms a leaf); its work is now estimated first."""
    cert = line_proof.certificate
    assert checker.verify(cert).ok and 0 < checker_region.work(cert) < checker.LIMITS.work
    assert checker.verify(cert, checker.Limits(work=checker_region.work(cert))).ok
    refused = checker.verify(cert, checker.Limits(work=checker_region.work(cert) - 1))
    assert refused.refused and "work" in refused.message
    deeper = copy.deepcopy(cert)
    for leaf in deeper["leaves"]:
        leaf["precision"] = checker_region.MAX_PRECISION
    assert checker_region.work(deeper) > 200 * checker_region.work(cert)
    endless = copy.deepcopy(cert) | {"tree": "0" * 10 ** 7}
    assert checker.verify(endless).refused


@pytest.mark.parametrize("shown", [
    "(1 - exp(-a*D**2/2))*D # <= a*D**3/100",  # a comment: the text shown is not the bound proved
    "(1 - exp(-a*D**2/2))*D #\x1b[2K\x1b[1Ga*D**3/100",  # a terminal escape hiding the bound proved
    "(1 - exp(-\uff41*D**2/2))*D",  # a homoglyph (fullwidth a), read as a by Python
    "(1-exp(-a*D**2/2))*D",  # the same bound, not in its canonical form
])
def test_a_region_proof_states_its_bound_in_canonical_form(shown):
    result = prove(None, 2, None, 1, 1, bound="(1-exp(-a*D**2/2))*D")
    assert result.verdict == "proved" and checker.verify(result.certificate).ok
    forged = copy.deepcopy(result.certificate)
    forged["bound"] = shown
    confirmation = checker.verify(forged)
    assert not confirmation.ok and "bound" in confirmation.message


@pytest.mark.parametrize("bound", ["(1-exp(-a*D**2/2))*D", "D*tanh(sqrt(a*D**2 + 1) - 1)", "D*(a*D**2)**3/(1 + (a*D**2)**3)",
                                   "D*min(1, a*D**2/3)"])
def test_forward_mode_slopes_enclose_mpmath_derivatives(bound):
    """g' on [0, top] by forward mode (prover and checker) contains mpmath's derivative at sample points."""
    mp.dps = 30
    prover_profile = profiles.bound_profile(bound, 2, None)
    checker_profile = checker_region.Profile(None, bound, 2, None)
    text = bound.replace("D*", "", 1) if bound.startswith("D*") else bound[:-2]
    g = lambda L: eval(text.replace("a*D**2", "(L)"), {"exp": mp.exp, "tanh": mp.tanh, "sqrt": mp.sqrt,  # noqa: E731
                                                      "min": lambda x, y: x if x < y else y, "L": L})
    for top in (Fraction(1, 8), Fraction(1), Fraction(5, 2)):
        with ctx.workprec(53):
            slopes = [prover_profile.slope_lower(top), checker_profile.slope_lower(top)]
        if top < 1:  # a wide interval may give a NaN ball (it then closes nothing); a short one may not
            assert all(s.is_finite() for s in slopes)
        slopes = [s for s in slopes if s.is_finite()]
        for k in range(1, 9):
            x = mp.mpf(float(top)) * k / 9
            if "min" in bound and abs(x - 3) < mp.mpf("1e-6"):
                continue
            derivative = mp.diff(g, x)
            for lower in slopes:
                assert mp.mpf(lower.mid().str(30, radius=False)) - mp.mpf(float(lower.rad())) <= derivative + mp.mpf(10) ** -20


def test_realise_stays_inside_the_region_or_declines():
    region = reductions.region(3, 1, 1, 1)
    assert reductions.realise(region, (Fraction(0), Fraction(0), Fraction(1, 2))) is None
    tiny = reductions.realise(region, (Fraction(0), Fraction(1, 10 ** 30), Fraction(1, 2)))  # D = 10^-15, kept
    assert tiny is not None and 0 < Fraction(tiny["X"][2][0]) - Fraction(tiny["X"][0][0]) < Fraction(1, 10 ** 14)
    assert reductions.realise(region, (Fraction(1, 2), Fraction(4), Fraction(1, 2))) is None  # |c| + D/2 > radius
    config = reductions.realise(region, (Fraction(1, 8), Fraction(1), Fraction(1, 3)))
    as_checked = {"X": config["X"], "layers": [{"A": config["A"]}]}
    assert checker_region._inside(as_checked, region.as_json()) is None


# ---- interruption (Ctrl-C) and --resume

def _halving_search(interrupt_at: int, where: str, interruptible: bool = True):
    """explore on [0, 1] closing the boxes of width <= 1/8 right of 1/2 (the rest hits the depth limit), with a
    KeyboardInterrupt raised on the interrupt_at-th call of decide, split or progress."""
    calls = {"decide": 0, "split": 0, "progress": 0}

    def hook(name):
        calls[name] += 1
        if name == where and calls[name] == interrupt_at:
            raise KeyboardInterrupt

    def decide(box, depth):
        hook("decide")
        (lo, hi), = box
        return ("closed", depth) if lo >= Fraction(1, 2) and hi - lo <= Fraction(1, 8) else ("split", None)

    def split(box, depth):
        hook("split")
        return bnb.bisect(box)

    root = ((Fraction(0), Fraction(1)),)
    return bnb.explore(root, decide, split, max_depth=5, progress=lambda found, queued: hook("progress"),
                       interruptible=interruptible)


@pytest.mark.parametrize("where", ["decide", "split", "progress"])
@pytest.mark.parametrize("interrupt_at", [1, 2, 5, 9])
def test_an_interrupted_search_accounts_for_every_box_once(where, interrupt_at):
    found = _halving_search(interrupt_at, where)
    assert found.stop == "interrupted"
    boxes = [box for box, _ in found.leaves] + [box for box, _ in found.left]
    assert len(set(boxes)) == len(boxes)  # none both closed and open, none twice
    assert sum(region_proof.volume(box) for box in boxes) == 1  # and none lost: they tile [0, 1]
    complete = _halving_search(0, where)
    assert complete.stop == "done" and len(found.leaves) < len(complete.leaves)
    with pytest.raises(KeyboardInterrupt):
        _halving_search(interrupt_at, where, interruptible=False)


# 160 leaves, about a second (collapse.global now closes in a few dozen boxes everywhere)
CTRL_C_REGION = ["collapse.tanh", "--n", "3", "--d", "1", "--radius", "1", "--norm", "3/2"]


def _interrupt_closing_at(monkeypatch, call: int) -> dict:
    """Make the call-th closing test of the prover raise KeyboardInterrupt; count the boxes closed before it."""
    original, seen = region_proof._first_closing, {"calls": 0, "closed": 0}

    def closing_or_interrupt(*args):
        seen["calls"] += 1
        if seen["calls"] == call:
            raise KeyboardInterrupt
        found = original(*args)
        seen["closed"] += found is not None
        return found

    monkeypatch.setattr(region_proof, "_first_closing", closing_or_interrupt)
    return seen


def test_ctrl_c_writes_what_was_proved_and_the_checker_confirms_only_that(tmp_path, capsys, monkeypatch):
    out = tmp_path / "partial.json"
    seen = _interrupt_closing_at(monkeypatch, 120)
    assert main(["prove", *CTRL_C_REGION, "--out", str(out), "--json"]) == 130
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("certify: interrupted; ") and str(out) in err[0], err
    info = json.loads(captured.out)
    assert info["interrupted"] and info["verdict"] == "undecided" and info["certificate"] == str(out)
    cert = json.loads(out.read_text())
    # exactly the boxes closed before the Ctrl-C, the rest open: a proper part of the domain
    assert cert["verdict"] == "undecided" and len(cert["leaves"]) == seen["closed"] > 0 and cert["left"]
    assert 0 < Fraction(cert["volume_proved"]) < 1
    assert checker.verify(cert).ok
    assert main(["verify", str(out)]) == 0


def test_resume_continues_an_interrupted_proof_to_the_uninterrupted_one(tmp_path, capsys, monkeypatch):
    whole, part, resumed = tmp_path / "whole.json", tmp_path / "part.json", tmp_path / "resumed.json"
    assert main(["prove", *CTRL_C_REGION, "--out", str(whole), "--json"]) == 0
    boxes = json.loads(capsys.readouterr().out)["boxes"]
    _interrupt_closing_at(monkeypatch, 150)
    assert main(["prove", *CTRL_C_REGION, "--out", str(part)]) == 130
    assert f"--resume {part}" in capsys.readouterr().err
    monkeypatch.undo()
    assert main(["prove", *CTRL_C_REGION, "--resume", str(part), "--out", str(resumed), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["verdict"] == "proved" and main(["verify", str(resumed)]) == 0
    assert info["boxes"] == boxes  # the whole proof's boxes, those decided before the Ctrl-C too
    # the splits and leaves of a box do not depend on when it is decided: the same proof
    merged, uninterrupted = json.loads(resumed.read_text()), json.loads(whole.read_text())
    assert (merged["tree"], merged["leaves"]) == (uninterrupted["tree"], uninterrupted["leaves"])


def test_resume_says_the_checker_confirms_the_proof_before_the_search(tmp_path, capsys, monkeypatch):
    """The checker's replay of the proof resumed (a minute for 10,000 leaves of six tokens) showed nothing."""
    part = tmp_path / "part.json"
    _interrupt_closing_at(monkeypatch, 60)
    assert main(["prove", *CTRL_C_REGION, "--out", str(part)]) == 130
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["prove", *CTRL_C_REGION, "--resume", str(part), "--progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"certify prove: the checker confirms {part} before the search resumes it\n"), err
    assert main(["prove", *CTRL_C_REGION, "--resume", str(part)]) == 0  # not without progress
    assert "confirms" not in capsys.readouterr().err


def test_sigterm_writes_the_part_proved_and_resume_finishes_the_uninterrupted_proof(tmp_path, capsys):
    """SIGTERM (a scheduler's, `timeout`'s) received in the middle of the search: what Ctrl-C does, with exit 143,
    and --resume continues the partial proof to the uninterrupted one."""
    whole, part, resumed = tmp_path / "whole.json", tmp_path / "part.json", tmp_path / "resumed.json"
    assert main(["prove", *CTRL_C_REGION, "--out", str(whole)]) == 0
    process = signalled.start(["prove", *CTRL_C_REGION, "--out", str(part)],
                              at=("certify.prove.region", "_first_closing", 150, signal.SIGTERM))
    code, out, err = signalled.finish(process)
    line = signalled.interruption_line(err, signal.SIGTERM)
    assert code == 143 and line.endswith(f"continue it with --resume {part}") and "(interrupted)" in out
    cert = json.loads(part.read_text())
    assert cert["verdict"] == "undecided" and cert["leaves"] and cert["left"] and checker.verify(cert).ok
    capsys.readouterr()
    assert main(["prove", *CTRL_C_REGION, "--resume", str(part), "--out", str(resumed)]) == 0
    merged, uninterrupted = json.loads(resumed.read_text()), json.loads(whole.read_text())
    assert (merged["tree"], merged["leaves"]) == (uninterrupted["tree"], uninterrupted["leaves"])


def test_resume_refuses_another_target_a_finished_proof_and_a_forged_one(tmp_path, capsys, monkeypatch):
    part, whole = tmp_path / "part.json", tmp_path / "whole.json"
    _interrupt_closing_at(monkeypatch, 60)
    assert main(["prove", *CTRL_C_REGION, "--out", str(part)]) == 130
    monkeypatch.undo()
    assert main(["prove", *CTRL_C_REGION, "--out", str(whole)]) == 0
    forged = json.loads(part.read_text())
    forged["left"].pop()  # an open box dropped: the tree no longer matches
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    capsys.readouterr()
    for argv, why in [(["collapse.global", *CTRL_C_REGION[1:], "--resume", str(part)], "another claim"),
                      ([*CTRL_C_REGION[:-1], "3", "--resume", str(part)], "another claim"),
                      ([*CTRL_C_REGION, "--resume", str(whole)], "not undecided"),
                      ([*CTRL_C_REGION, "--resume", str(tmp_path / "forged.json")], "does not confirm"),
                      ([*CTRL_C_REGION, "--resume", str(tmp_path / "none.json")], "no such")]:
        assert main(["prove", *argv, "--out", str(tmp_path / "new.json")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("certify: error:") and why in err[0], err
    assert not (tmp_path / "new.json").exists()


def test_ctrl_c_during_the_final_check_writes_nothing(tmp_path, capsys, monkeypatch):
    def interrupted(cert, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(region_proof.certificates, "confirm", interrupted)
    out = tmp_path / "proof.json"
    assert main(["prove", *CTRL_C_REGION, "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "certify: interrupted" and not captured.out and not out.exists()


def test_a_real_sigint_stops_the_search_with_a_confirmed_partial_proof(tmp_path):
    """SIGINT as a terminal sends it, once the search is under way (its progress bar shows closed boxes)."""
    out = tmp_path / "partial.json"
    # the handler Python installs when SIGINT is not ignored (it may be, in a job started in the background)
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from certify.cli import main; sys.exit(main(sys.argv[1:]))")
    argv = [sys.executable, "-c", code, "prove", "collapse.tanh", "--n", "3", "--d", "1", "--radius", "2",
            "--norm", "2", "--out", str(out), "--progress"]  # about 10 s uninterrupted
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen, deadline = b"", time.monotonic() + 120
    while b"boxes closed" not in seen and time.monotonic() < deadline and process.poll() is None:
        seen += process.stderr.read1(4096)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the proof ended before it could be interrupted")
    lines = stderr.decode().replace("\r", "\n").strip().splitlines()
    assert process.returncode == 130 and "Traceback" not in stderr.decode(), stderr
    assert lines[-1].startswith("certify: interrupted; ") and str(out) in lines[-1]
    assert b"(interrupted)" in stdout and b"UNDECIDED" in stdout
    cert = json.loads(out.read_text())
    assert cert["verdict"] == "undecided" and cert["left"] and checker.verify(cert).ok


@pytest.mark.parametrize("name, suggested", [("collapse.cubic", False), ("collapse.glbal", True)])
def test_a_claim_prove_does_not_cover_is_named_as_such_and_a_misspelling_gets_a_hint(name, suggested):
    """A registered claim that no reduction covers is not answered "did you mean collapse.global?"."""
    with pytest.raises(BadInput) as err:
        profiles.claim_profile(name)
    assert ("did you mean collapse.global?" in str(err.value)) == suggested
    assert ("no reduction covers the claim" in str(err.value)) == (not suggested)
