"""The float64 screen is off the certified path: engine.check evaluates it only when Result.screen is
read, and the ball pass finds its norm witnesses itself, from the binary64 midpoints of its balls."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import mp

import certify_checker as checker
from certify_checker import schema
from certify import claims, engine
from certify.cli import main
from certify.core import config, jsonfile
from certify.core.arith import BALL, FLOAT64
from certify.engine import decide
from certify.search import campaign
from certify.suite import cases


@pytest.fixture
def float64_evaluations(monkeypatch) -> list:
    """The claims evaluated in float64 (decide.evaluate with the FLOAT64 backend), as they happen."""
    calls = []
    evaluate = decide.evaluate

    def counting(ar, case, claim, witnesses, *form):
        if ar is FLOAT64:
            calls.append(claim.id)
        return evaluate(ar, case, claim, witnesses, *form)

    monkeypatch.setattr(decide, "evaluate", counting)
    return calls


def test_check_evaluates_the_screen_only_when_it_is_read(float64_evaluations):
    result = engine.check(cases.gaussian(n=6, d=4, seed=3))
    assert result.verdict == engine.HOLDS and float64_evaluations == []
    certificate = jsonfile.dumps(result.certificate)
    screen = result.screen
    assert float64_evaluations == ["collapse.global"]
    assert len(screen) == 1 and isinstance(screen[0].lhs, float) and screen[0].outcome is True
    assert result.screen is screen and len(float64_evaluations) == 1  # evaluated once
    # reading the screen changes nothing decided
    assert jsonfile.dumps(result.certificate) == certificate
    assert jsonfile.dumps(engine.check(cases.gaussian(n=6, d=4, seed=3)).certificate) == certificate
    assert checker.verify(result.certificate).ok


def test_an_undecided_result_screens_on_request_too(float64_evaluations):
    result = engine.check(cases.two_tokens(), claim="collapse.dobrushin", max_prec=128)
    assert result.verdict == engine.UNDECIDED and float64_evaluations == []
    assert len(result.screen) == 1 and float64_evaluations == ["collapse.dobrushin"]


def _witnesses(certificate: dict) -> dict:
    """The stated witnesses by name, a reference ({"same_as": NAME}) read as the witness it names, a basis stated
    as a binary64 block as its rows of numbers."""
    table = certificate["witness"]
    return {key: schema.expanded(table[w["same_as"]] if "same_as" in w else w) for key, w in table.items()}


def _float64_witnesses(cfg, claim_id: str) -> dict:
    """The witnesses a float64 evaluation of the claim records (what the screen handed the ball pass before)."""
    found: dict = {}
    decide.evaluate(FLOAT64, config.load(cfg), claims.get(claim_id), found)
    return {key: {"basis": w.basis.tolist(), "top": w.top.tolist(), **({"transposed": True} if w.transposed else {})}
            for key, w in found.items()}


def _random(shape, seed) -> list:
    return np.random.default_rng(seed).standard_normal(shape).tolist()


WITNESS_CASES = {
    # A given as it is: its midpoints are the float64 matrix itself
    "A": ({"X": _random((5, 4), 1), "A": _random((4, 4), 2)}, "collapse.global", True),
    # beta A: the ball product's midpoints round otherwise than float64's product
    "beta": ({"X": _random((5, 4), 1), "A": _random((4, 4), 2), "beta": 1.3}, "collapse.global", False),
    # W_Q W_K^T with d_k = d: the d x d product
    "square": ({"X": _random((5, 4), 3), "W_Q": _random((4, 4), 4), "W_K": _random((4, 4), 5), "d_k": 4},
               "collapse.tau", False),
    # M: the powers V^k (float64 rescales them, arb does not)
    "powers": ({"layers": [{"A": _random((3, 3), 6), "V": _random((3, 3), 7)}] * 3, "X": _random((4, 3), 8)},
               "value.bounded", False),
    # ||W1||_2 and ||W2||_2 of an FFN, given as they are
    "ffn": ({"X": _random((4, 3), 9), "A": _random((3, 3), 10), "ffn": {"W1": _random((5, 3), 11),
             "W2": _random((3, 5), 12), "activation": "relu"}}, "ffn.lipschitz", True),
}


@pytest.mark.parametrize("name", WITNESS_CASES)
def test_the_ball_pass_finds_the_witnesses_float64_finds(name, float64_evaluations):
    """The ball pass's witness of a norm is the SVD of its ball matrix's binary64 midpoints: for binary64
    inputs the very one a float64 evaluation records; for derived matrices (beta A, W_Q W_K^T, V^k) the
    same top singular vector up to rounding.  The checker confirms the norms from them."""
    cfg, claim_id, identical = WITNESS_CASES[name]
    result = engine.check(cfg, claim=claim_id)
    assert result.certificate is not None and float64_evaluations == []
    mine, theirs = _witnesses(result.certificate), _float64_witnesses(cfg, claim_id)
    assert mine.keys() == theirs.keys() != set()
    if identical:
        assert mine == theirs
    for key in mine:
        assert abs(np.dot(mine[key]["top"], theirs[key]["top"])) > 1 - 1e-9, key
    assert checker.verify(result.certificate).ok


def _thin(d=40, d_k=8, n=5, seed=0, beyond=False) -> dict:
    """A thin head (d_k < d) of binary64 weights; `beyond`: W_Q's entries of order 1e400, beyond binary64."""
    rng = np.random.default_rng(seed)
    W_Q = rng.standard_normal((d, d_k))
    return {"X": rng.standard_normal((n, d)).tolist(), "W_K": rng.standard_normal((d, d_k)).tolist(), "d_k": d_k,
            "W_Q": [[f"{round(x * 1e6)}e394" for x in row] for row in W_Q] if beyond else W_Q.tolist()}


def test_a_thin_head_keeps_the_k_by_k_witness_with_no_screen(float64_evaluations):
    result = engine.check(_thin())
    assert result.verdict == engine.HOLDS and float64_evaluations == []
    assert np.array(_witnesses(result.certificate)["A0"]["basis"]).shape == (8, 8)
    assert checker.verify(result.certificate).ok


def test_a_thin_head_beyond_binary64_finds_its_k_by_k_witness_from_its_midpoints():
    """W_Q of 1e400 scale: float64 cannot form the witness, the ball pass scales its midpoints into range
    and keeps the d_k x d_k route (once the d x d one, through the screen's absence)."""
    cfg = _thin(beyond=True)
    result = engine.check(cfg)
    assert result.verdict == engine.HOLDS and result.screen == []
    assert np.array(_witnesses(result.certificate)["A0"]["basis"]).shape == (8, 8)
    assert checker.verify(result.certificate).ok


def _norm_truth(L: np.ndarray, R: np.ndarray):
    with mp.workdps(40):
        return max(mp.svd_r(mp.matrix(L.tolist()) * mp.matrix(R.tolist()).T, compute_uv=False))


def test_ball_thin_norm_without_a_witness_encloses_and_records_one():
    rng = np.random.default_rng(4)
    L, R = rng.standard_normal((12, 3)), rng.standard_normal((12, 3))
    witnesses: dict = {}
    norm = BALL.thin_product_norm(BALL.array(L.tolist()), BALL.array(R.tolist()), witnesses, "A0")
    assert norm.lower() <= float(_norm_truth(L, R)) <= norm.upper() and norm.rad() < 1e-12 * norm.mid()
    assert witnesses["A0"].basis.shape == (3, 3)
    # two equal columns: float64's Cholesky goes through on rounding, arb's pivot is not certainly > 0,
    # so the d x d product is enclosed with a witness of its own midpoints
    R[:, 2] = R[:, 1]
    witnesses = {}
    norm = BALL.thin_product_norm(BALL.array(L.tolist()), BALL.array(R.tolist()), witnesses, "A0")
    assert norm.lower() <= float(_norm_truth(L, R)) <= norm.upper() and witnesses["A0"].basis.shape == (12, 12)
    R[:, 2] = 0  # rank-deficient in float64: no witness, None (the caller's d x d route)
    witnesses = {}
    assert BALL.thin_product_norm(BALL.array(L.tolist()), BALL.array(R.tolist()), witnesses, "A0") is None
    assert witnesses == {}


def test_a_rank_deficient_thin_head_takes_the_d_by_d_route():
    cfg = _thin(d=10, d_k=4)
    cfg["W_K"] = [row[:3] + row[2:3] for row in cfg["W_K"]]  # two equal columns
    result = engine.check(cfg)
    assert np.array(_witnesses(result.certificate)["A0"]["basis"]).shape == (10, 10)
    assert checker.verify(result.certificate).ok


def test_certify_check_prints_the_float64_screen(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(jsonfile.dumps(cases.gaussian(n=6, d=4, seed=3)))
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "float64 screen (not certified): lhs " in out and "-> holds" in out
    beyond = tmp_path / "b.json"
    beyond.write_text(jsonfile.dumps({"X": [["1e400"], ["-1e400"]], "A": [["0"]]}))
    assert main(["check", str(beyond), "--bound", "2*D", "--max-prec", "256"]) == 0
    assert "float64 screen: none" in capsys.readouterr().out
    # undecided (log of a number whose enclosure straddles 0): arb did not decide alone either, as the line said
    assert main(["check", str(path), "--bound", "log(D - D)", "--max-prec", "256"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("UNDECIDED") and "float64 screen: none" in out and "arb decided alone" not in out


@pytest.mark.parametrize("spec", [
    dict(distribution="near-consensus", n=6, d=4, count=40, seed=1),  # float64 says violated on some
    dict(distribution="gaussian", n=2, d=3, count=40, seed=2, claim="collapse.dobrushin", max_prec=128),  # equal sides
    dict(distribution="gaussian", n=4, d=3, count=6, seed=5, claim="value.expansive", value="gaussian"),
    dict(distribution="gaussian", n=4, d=3, count=6, seed=4, claim="mask.collapse", mask="causal"),
])
def test_campaign_records_keep_the_float64_fields_of_the_screen(spec):
    """The chunk's batched float64 sides say what each configuration's own screen says."""
    spec = campaign.Campaign(**spec).validated()
    records = campaign.decide_chunk(spec, list(range(spec.count))).records
    goal = engine.target(spec.claim, spec.bound)
    says = []
    for record in records:
        screen = engine.check(spec.sample(record["i"]).config, goal=goal, max_prec=spec.max_prec).screen
        assert record["float64"] == (engine.HOLDS if all(c.outcome for c in screen) else engine.VIOLATED)
        assert record["float64_equal"] == any(c.lhs == c.rhs for c in screen)
        says.append((record["float64"], record["float64_equal"]))
    assert len(set(says)) > 1 or spec.value or spec.mask  # the first two see both answers


def test_a_float64_side_beyond_range_compares_nothing():
    assert campaign.float64_opinion([(1.0, 2.0), (3.0, 3.0)]) == {"float64": engine.HOLDS, "float64_equal": True}
    for beyond in (np.inf, np.nan):  # as an empty screen: vacuously holds, no equality
        assert campaign.float64_opinion([(beyond, 1.0), (3.0, 3.0)]) == {"float64": engine.HOLDS, "float64_equal": False}
