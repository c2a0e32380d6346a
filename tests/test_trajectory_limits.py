"""certify trajectory under the checker's limits: the escalation stops as soon as no certificate it could
write can fit them (and not before), and the run is refused up front only when no run could fit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import certify_checker
import pytest

from certify.cli import main
from certify.core.limits import Limits
from certify.errors import BadInput
from certify.studies import trajectory, trajectory_budget
from certify_checker import trajectory as checker_trajectory

LAYER = str(Path(__file__).resolve().parent.parent / "examples" / "layer.json")


def least_work(cert: dict) -> int:
    """The smallest work limit at which the checker reads the certificate (its own estimate, by bisection)."""
    low, high = 0, 10**15
    while high - low > 1:
        middle = (low + high) // 2
        if certify_checker.over_limits(cert, certify_checker.Limits(work=middle)) is None:
            high = middle
        else:
            low = middle
    return high


def test_the_escalation_stops_exactly_when_its_certificate_could_not_fit():
    """120 layers of examples/layer.json settle at 323 bits.  At a work limit equal to that certificate's
    estimate the run still settles; one below (or a quarter below) it stops in the attempt that would pass
    it, tries the precisions below that one down to the attempt before (trajectory._between), reports the
    highest that fits, undecided, with a certificate the checker confirms at that limit, and names the limit
    and how to raise it."""
    whole = trajectory.trace(LAYER, 120)
    assert whole.verdict == trajectory.HOLDS and whole.certified
    work = least_work(whole.certificate)

    fits = trajectory.trace(LAYER, 120, limits=Limits(work=work))
    assert fits.verdict == trajectory.HOLDS and fits.certified  # not stopped early
    assert fits.step_precisions == whole.step_precisions and not fits.stopped

    for limit in (work - 1, work * 3 // 4):
        over = trajectory.trace(LAYER, 120, limits=Limits(work=limit))
        assert over.verdict == trajectory.UNDECIDED and over.exit_code == 3 and over.precision < whole.precision
        assert over.certified and certify_checker.verify(over.certificate, certify_checker.Limits(work=limit)).ok
        assert "work limit" in over.stopped and "limits=Limits(work=N)" in over.stopped
        passed = int(re.search(r"at (\d+) bits", over.stopped).group(1))  # the lowest precision found over it
        assert over.precision < passed <= over.precision + trajectory.BETWEEN


def test_a_precision_between_two_attempts_that_fits_is_found():
    """500 layers of examples/layer.json settle at 1181 bits after an attempt at 106.  At nine tenths of that
    certificate's work the 1181-bit attempt passes the limit; the run reported the 106-bit one (D_t resolved
    through t = 38 only), where 1100 bits (--max-prec 1100) resolve every D_t within the limit."""
    whole = trajectory.trace(LAYER, 500)
    limit = least_work(whole.certificate) * 9 // 10
    within = trajectory.trace(LAYER, 500, limits=Limits(work=limit))
    assert within.precision < whole.precision and within.certified and not within.stopped
    assert within.verdict == trajectory.HOLDS and within.resolved_through == 500
    assert certify_checker.verify(within.certificate, certify_checker.Limits(work=limit)).ok


def test_a_last_attempt_that_ends_early_is_run_not_refused():
    """At --max-prec 53 the one attempt stops at its first unresolved D_t (t = 13 of 300): its certificate
    states 14 steps, far less than 301.  At a limit that fits those the run is not refused (it was, priced at
    every step); one below, it stops as soon as its steps pass the limit: bad input, never a certificate
    the checker would refuse."""
    cert = trajectory.trace(LAYER, 300, max_prec=53).certificate
    work = least_work(cert)
    tr = trajectory.trace(LAYER, 300, max_prec=53, limits=Limits(work=work))
    assert tr.certified and tr.verdict == trajectory.UNDECIDED and tr.step_precisions == cert["step_precisions"]
    with pytest.raises(BadInput, match=r"^stopped, no certificate the checker can verify.*limits=Limits\(work=N\)"):
        trajectory.trace(LAYER, 300, max_prec=53, limits=Limits(work=work - 1))


def test_the_checker_prices_a_planned_total_as_the_steps_that_add_up_to_it():
    """The budget asks the checker about a total of step prices (trajectory.step_prices: a step's Python, and its
    arithmetic at cost() of its precision and of twice it) in place of a list of steps, as no list need add up to
    every total (cost() leaps from one precision to the next); on a written certificate the total of its steps is its
    own estimate, at every limit."""
    from certify_checker import trajectory as checker_trajectory

    cert = trajectory.trace(LAYER, 120).certificate
    total, price = checker_trajectory.stated_price(cert), checker_trajectory.step_prices(cert)
    assert total == sum(map(price, cert["step_precisions"])) > len(cert["step_precisions"]) * price(53)
    planned = {**cert, "step_precisions": [53]}  # what the skeleton states is then read for its shape only
    for work in (least_work(cert), least_work(cert) - 1):
        limits = certify_checker.Limits(work=work)
        assert (certify_checker.over_limits(planned, limits, priced=total) is None) == (work == least_work(cert))
        assert certify_checker.over_limits(planned, limits, priced=total) == certify_checker.over_limits(cert, limits)


@pytest.mark.parametrize("steps", [[53], [4000, 2000, 53], [65536] * 3])
@pytest.mark.parametrize("inputs", [
    {"X": [[0, 1], [1, 0], [2, 2]], "layers": [{"A": [[1, 0], [0, 1]]}]},
    {"X": [[i % 3, i % 5, 1, 0] for i in range(8)], "layers": [{"W_Q": [[1], [0], [0], [1]], "W_K": [[0], [1], [1], [0]],
                                                                "d_k": 1}]},
    {"X": [[i, 1] for i in range(5)], "layers": [{"A": [[1, 0], [0, 1]], "ffn": {"W1": [[1, 0]] * 6, "b1": [0] * 6,
                                                                               "W2": [[1] * 6] * 2, "b2": [0, 0]}}]},
])
def test_the_engines_meter_prices_steps_as_the_checker_does(inputs, steps):
    """The run's meter charges the checker's own step price (trajectory_budget.Budget.price, asked of
    certify_checker.trajectory.step_prices through certify.engine.certificate; no copy of the formula): on a grid of
    sizes and precisions, a certificate stating these steps is refused at exactly the limits at which the planned
    total of their prices is."""
    budget = trajectory_budget.Budget(inputs, 2, ["global.step"], Limits(), lambda p, T: p, 53, True, {})
    planned = sum(map(budget.price, steps))
    stated = budget._skeleton(steps[0], steps)
    assert planned == checker_trajectory.stated_price(stated) > 0
    work = least_work(stated)
    for limit in (work - 1, work):
        budget = trajectory_budget.Budget(inputs, 2, ["global.step"], Limits(work=limit), lambda p, T: p, 53, True, {})
        assert (budget._refusal(steps[0], steps) is None) == (budget._refusal_of_sum(steps[0], planned) is None) \
            == (limit == work)


def test_cli_stops_with_one_line_naming_the_limit_and_verify_agrees(tmp_path, capsys):
    work = least_work(trajectory.trace(LAYER, 120).certificate) - 1
    out = tmp_path / "run"
    assert main(["trajectory", LAYER, "--layers", "120", "--limit", f"work={work}", "--out", str(out)]) == 3
    lines = capsys.readouterr().out.splitlines()
    stopped = [line for line in lines if line.startswith("precision not raised beyond")]
    assert len(stopped) == 1 and "--limit work=N" in stopped[0]
    saved = json.loads((out / "trajectory.json").read_text())
    assert saved["stopped"] and saved["certified"] and saved["verdict"] == "undecided"
    cert = str(out / "trajectory-certificate.json")
    assert main(["verify", cert, "--limit", f"work={work}"]) == 0
    capsys.readouterr()
    assert main(["trajectory", LAYER, "--layers", "300", "--limit", "work=100000"]) == 2  # not even one step fits
    err = capsys.readouterr().err
    assert err.startswith("certify: error: refused before starting") and err.count("\n") == 1
    assert "--limit work=N" in err


def test_no_attempt_runs_a_step_below_an_earlier_one(monkeypatch):
    """The meter's reasoning (a higher precision never costs the checker less) rests on each step running at
    least at its precision in every attempt before.  Planted: a step schedule that falls as the precision
    rises (53 bits after the first step from 187 bits on); the steps are floored all the same, and the
    checker still confirms what they computed."""
    seen, run = [], trajectory._run

    def recorded(*args, **kwargs):
        out = run(*args, **kwargs)
        seen.append(out.steps)
        return out

    monkeypatch.setattr(trajectory, "_run", recorded)
    monkeypatch.setattr(trajectory, "_step_precision", lambda top, D: top if top <= 106 else 53)
    tr = trajectory.trace(LAYER, 60, max_prec=1024)
    assert len(seen) > 2 and max(seen[1][1:]) == 106  # the premise: an attempt whose later steps ran above 53 bits
    for k, later in enumerate(seen):
        for before in seen[:k]:
            assert all(step >= low for step, low in zip(later[1:], before[1:])), (before, later)
    assert tr.certified


def test_in_absolute_coordinates_no_attempt_starts_that_could_not_fit(monkeypatch):
    """With a feed-forward network the tokens are absolute balls and every step runs at the attempt's
    precision: an attempt at p can only resolve every D_t with T + 1 steps at p.  No attempt is started
    whose certificate could not fit the limit so, priced by the checker on the run's own certificate."""
    precisions, run = [], trajectory._run

    def recorded(case, T, precision, *args, **kwargs):
        precisions.append(precision)
        return run(case, T, precision, *args, **kwargs)

    monkeypatch.setattr(trajectory, "_run", recorded)
    work, T = 7_000_000, 200
    tr = trajectory.trace(str(Path(LAYER).with_name("ffn-gelu.json")), T, limits=Limits(work=work))
    assert tr.representation.startswith("absolute") and tr.certified and "limits=Limits(work=N)" in tr.stopped
    assert len(precisions) > 2  # the premise: the precision did rise
    for p in precisions:
        complete = {**tr.certificate, "precision": p, "curve_precision": trajectory._curve_precision(p, T),
                    "step_precisions": [p] * (T + 1)}
        assert certify_checker.over_limits(complete, certify_checker.Limits(work=work)) is None, p


def test_a_small_memory_limit_is_stated_in_bytes_by_the_reader_and_the_checker():
    """--limit memory=BYTES below 0.01 GiB: the refusals name the estimate and the limit in bytes (both read
    "0.00 GiB" before), so the line says by how much to raise it."""
    cert = trajectory.trace(LAYER, 2).certificate
    least = next(m for m in range(1, 10**6)
                 if certify_checker.over_limits(cert, certify_checker.Limits(memory=m)) is None)
    assert least > 1000
    refusal = certify_checker.over_limits(cert, certify_checker.Limits(memory=least - 1))
    assert f"{least} bytes" in refusal and f"{least - 1} bytes" in refusal and "0.00" not in refusal
    with pytest.raises(BadInput) as refused:
        trajectory.trace(LAYER, 2, limits=Limits(memory=least - 1))
    message = str(refused.value)
    assert "0.00" not in message and f"{least - 1} bytes" in message


@pytest.mark.parametrize("precision,refused", [(856, True), (857, False)])
def test_a_precision_limit_is_named_once_with_its_advice_once(precision, refused, capsys):
    """500 layers state curves at 857 bits: below, the run is refused; at 857 the escalation stops there.  Either
    line quotes the checker's numbers and says once how to raise the limit (the checker's own advice, for
    `certify verify` only, was nested inside it)."""
    code = main(["trajectory", LAYER, "--layers", "500", "--limit", f"precision={precision}"])
    out, err = capsys.readouterr()
    line = err.strip() if refused else next(text for text in out.splitlines()
                                            if text.startswith("precision not raised"))
    assert code == (2 if refused else 3) and len(line.splitlines()) == 1
    assert f"above the checker's limit of {precision}" in line
    assert line.count("--limit") == 1 and line.count("(") == 1, line


def test_a_trajectory_without_value_curves_is_not_refused_for_the_precision_of_an_m_it_has_not():
    """Two layers of examples/layer.json: the curves take 68 bits and no M is drawn (no value curves).  At
    --limit precision=100 the run was refused (the norms' 128 bits, stated though unused, set the
    certificate's precision); it holds, and the checker confirms it at that limit."""
    tr = trajectory.trace(LAYER, 2, limits=Limits(precision=100))
    assert tr.M is None and tr.verdict == trajectory.HOLDS and tr.certified and not tr.stopped
    assert max(tr.certificate[key] for key in ("precision", "curve_precision", "norm_precision")) <= 100
    assert certify_checker.verify(tr.certificate, certify_checker.Limits(precision=100)).ok


@pytest.mark.parametrize("name, T, work", [("ffn-gelu.json", 200, 1_000_000),  # capped before any attempt
                                           ("layer.json", 120, 300_000)])  # an attempt stopped by the limits
def test_the_summary_states_the_cap_the_limits_set(name, T, work, capsys):
    """The summary said "(cap 65536)", --max-prec, beside a stop line "not raised beyond 214 bits": it states
    the cap the run had, and --json adds it (precision_cap) beside max_precision."""
    argv = ["trajectory", str(Path(LAYER).with_name(name)), "--layers", str(T), "--limit", f"work={work}", "-q"]
    assert main(argv) == 3
    lines = capsys.readouterr().out.splitlines()
    stop = [line for line in lines if line.startswith("precision not raised beyond")]
    cap = int(re.match(r"precision not raised beyond (\d+) bits", stop[0]).group(1))
    summary = [line for line in lines if line.startswith("UNDECIDED: D_t resolved")]
    assert len(summary) == 1 and f"(cap {cap} under the limits, --max-prec 65536)" in summary[0], summary
    assert main(argv + ["--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["precision_cap"] == cap < data["max_precision"] == 65536


def test_the_summary_states_max_prec_when_the_limits_do_not_cap(capsys):
    assert main(["trajectory", LAYER, "--layers", "8", "--max-prec", "4096", "-q"]) == 0
    assert "(cap 4096);" in capsys.readouterr().out
    assert main(["trajectory", LAYER, "--layers", "8", "--max-prec", "4096", "-q", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["precision_cap"] == data["max_precision"] == 4096


def _thin_head(zero_column: bool) -> dict:
    import numpy as np
    rng = np.random.default_rng(0)
    W_K = rng.standard_normal((64, 8)) / 8
    if zero_column:
        W_K[:, -1] = 0.0  # W_K^T W_K singular: no d_k x d_k reduction applies
    return {"X": rng.standard_normal((4, 64)).tolist(), "W_Q": (rng.standard_normal((64, 8)) / 8).tolist(),
            "W_K": W_K.tolist()}


@pytest.mark.parametrize("zero_column", [False, True], ids=["full-rank", "rank-deficient"])
def test_a_thin_head_is_priced_as_the_witness_its_certificate_states(zero_column):
    """A trajectory states the witness of a it enclosed a from: d_k x d_k for a thin head whose W_K reduces, d x d
    (4 d^3 to the checker) for a rank-deficient W_K.  The budget once stated none to the checker's estimate, which
    then priced every thin head through its d_k x d_k reduction: under a work limit below the certificate's price
    the run went on and ended "holds, not certified", the checker refusing its certificate (256 x 1024: half a
    minute at 2 GB).  It is refused or stopped with one line instead, and at the certificate's price it is
    certified."""
    whole = trajectory.trace(_thin_head(zero_column), 2)
    assert whole.certified and len(whole.certificate["witness"]["A0"]["basis"]) == (64 if zero_column else 8)
    price = least_work(whole.certificate)
    assert trajectory.trace(_thin_head(zero_column), 2, limits=Limits(work=price)).certified
    with pytest.raises(BadInput, match="the checker's work limit"):
        trajectory.trace(_thin_head(zero_column), 2, limits=Limits(work=price - 1))
    # far below it (the reduced head's): the configuration's own estimate at 53 bits refuses it first, as for check
    with pytest.raises(BadInput, match=r"work.*limits=Limits\(work=N\)"):
        trajectory.trace(_thin_head(zero_column), 2, limits=Limits(work=price // 4))


def forged(layers: int, layer: dict, tokens: list, steps: list | None = None) -> dict:
    """A trajectory certificate of these tokens and one layer with its digest redone, every point stated resolved (so
    the checker runs every step before it finds the stated values wrong), the steps at these precisions (by default
    each at its own: no step reads its numbers from another's)."""
    d = len(tokens[0])
    steps = steps or [53 + layers - t for t in range(layers + 1)]
    precisions = [steps[0], steps[0], 53]
    basis = [[float(i == j) for j in range(d)] for i in range(d)]
    inputs = {"X": tokens, "layers": [layer]}
    return {"format": "certify-certificate/1", "kind": "trajectory", "layers": layers, "inputs": inputs,
            "inputs_sha256": checker_trajectory.digest(layers, inputs, precisions + [steps]),
            "representation": "centred", "precision": steps[0], "step_precisions": steps,
            "curve_precision": steps[0], "norm_precision": 53, "witness": {"A0": {"basis": basis, "top": [1.0] * d}},
            "a": [["1", "0", "0", "0"]], "curves": [], "M": None, "verdict": "holds",
            "points": [{"t": t, "resolved": True, "D": None, "mu": None, "tau": None, "approach": None,
                        "log_curves": {}, "checks": {}} for t in range(layers + 1)]}


def test_a_layer_stated_as_text_is_read_once_not_at_every_step(monkeypatch):
    """The checker prices a step by its sizes, not by the length of its layer's text: a layer whose A and V state
    numbers of 4000 digits was read again at every step (0.2 ms a number), 250 times its estimate of 40 steps of
    2 x 64.  Here the texts are read as often through 30 steps as through 3."""
    import certify_checker.exact
    import certify_checker.schema

    reads = []
    for module in (certify_checker.exact, certify_checker.schema):
        monkeypatch.setattr(module, "rational", lambda text, read=module.rational: reads.append(text) or read(text))
    texts = [[f"{i + 1}/{j + 7}" for j in range(3)] for i in range(3)]
    layer = {"A": texts, "V": [[f"-{i}/{j + 5}" for j in range(3)] for i in range(3)]}
    counts = []
    for layers in (3, 30):
        reads.clear()
        certify_checker.exact._ball_of_text.cache_clear()
        confirmation = certify_checker.verify(forged(layers, layer, [[0.5, 0.25, 0.0], [-0.5, 0.0, 0.75]]))
        assert not confirmation.ok and "||A_t||_2" in confirmation.message  # after every step ran
        counts.append(sum(text in {t for row in texts + layer["V"] for t in row} for text in reads))
    assert counts[0] == counts[1] >= 18, counts


def test_a_layer_stated_as_long_text_is_priced_at_every_step():
    """Read once, a layer's numbers are still made balls at every step's precision (up to 3 us one of 8600 characters,
    an exact rational of 4300 digits over 4300): 2 x 64 whose A and V state such texts took 36 ms a step, priced at
    17 (and twice that with every step recomputed finer), so some 6000 layers, within the default work limit, took
    about 4 minutes of CPU.  The text is priced at every step and its run and the engine's meter alike (step_prices)."""
    d, tokens = 64, [[0.5] * 64, [-0.5] * 64]
    texts = {name: [[f"0.{i:02d}{j:02d}{sign}" + "7" * 4290 for j in range(d)] for i in range(d)]
             for name, sign in (("A", 1), ("V", 2))}
    floats = {name: [[0.5] * d for _ in range(d)] for name in ("A", "V")}
    stated, plain = (forged(5500, layer, tokens, [53] * 5501) for layer in (texts, floats))
    assert certify_checker.over_limits(plain, certify_checker.LIMITS) is None  # the sizes alone fit
    assert "work" in certify_checker.over_limits(stated, certify_checker.LIMITS)
    price, bare = checker_trajectory.step_prices(stated), checker_trajectory.step_prices(plain)
    read = 2 * d * d * 4297 // checker_trajectory.TEXT_DIGITS  # the characters of A and V, at each run
    assert price(53) - bare(53) == price(4000) - bare(4000) == (1 + len(checker_trajectory.FINER)) * read
