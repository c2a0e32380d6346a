"""proofs/: every derivation holds, the command works, and a wrong constant or dropped term fails."""

import json
from pathlib import Path

import pytest
import sympy as sp

from certify.errors import BadInput
from certify.prove import derivations as proofs_index
from certify.cli import main
from proofs._framework import Derivation, require

REPO = Path(__file__).resolve().parents[1]
CLAIM_IDS = ["collapse.global", "collapse.cubic", "collapse.trajectory", "value.bounded",
             "value.expansive", "residual.two_sided", "residual.far", "ffn.lipschitz", "init.scaling",
             "mask.collapse", "ln.collapse", "ln.counterexample", "ln.equilibria"]


@pytest.mark.parametrize("name", proofs_index.names())
def test_every_derivation_holds(name):
    result = proofs_index.run_derivation(name)
    assert result.ok, [(s.title, s.message) for s in result.steps if s.outcome == "failed"]
    assert any(s.status != "prose" for s in result.steps)  # something is actually checked


def test_every_claim_has_a_derivation():
    for claim in CLAIM_IDS:
        path = proofs_index.derivation_path(claim)
        assert path == f"proofs/{claim.replace('.', '_')}.py"
        assert proofs_index.build(claim).claim == claim
    assert proofs_index.derivation_path("no.such_claim") is None


def test_every_registered_claim_links_to_a_derivation():
    from certify.claims import all_claims
    for claim in all_claims():
        path = proofs_index.derivation_path(claim.id)
        assert path is not None and (REPO / path).is_file(), claim.id
    assert proofs_index.derivation_path("residual.two_sided.global") == "proofs/residual_two_sided.py"


def test_every_registered_claim_id_runs_its_derivation():
    """`certify proofs ID` takes every id of `certify claims`, a refinement its parent's derivation;
    a dotted name that is no claim is not resolved to a prefix."""
    from certify.claims import all_claims
    for claim in all_claims():
        path = proofs_index.derivation_path(claim.id)
        assert proofs_index.build(claim.id).name == path.removeprefix("proofs/").removesuffix(".py")
    with pytest.raises(BadInput):
        proofs_index.build("collapse.global.nonsense")


def test_cli_runs_one_derivation(capsys):
    assert main(["proofs", "residual.far"]) == 0
    out = capsys.readouterr().out
    assert "residual.far" in out and "[holds, not certified]" in out and "1 of 1 derivations hold" in out


def test_cli_json(capsys):
    assert main(["proofs", "collapse_dobrushin", "init.scaling", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["claim"] for d in data] == ["collapse.dobrushin", "init.scaling"]
    assert all(d["ok"] for d in data)
    # "certified" named ball branch-and-bound steps beside "checker": "not certified": it is "ball" now
    assert {s["status"] for s in data[1]["steps"]} == {"symbolic", "ball", "prose"}
    assert all(s["checker"] == "not certified" for d in data for s in d["steps"])
    assert "certified" not in {s["status"] for d in data for s in d["steps"]}


def test_a_derivation_named_twice_runs_once(capsys):
    """A claim id and its module's name (collapse.dobrushin, collapse_dobrushin) ran the derivation twice."""
    assert main(["proofs", "collapse.dobrushin", "init.scaling", "collapse_dobrushin", "--json"]) == 0
    assert [d["claim"] for d in json.loads(capsys.readouterr().out)] == ["collapse.dobrushin", "init.scaling"]


def test_derivations_on_a_process_per_core_come_back_in_the_order_asked_as_run_here():
    """`certify proofs` and certify run's proofs section run the derivations on a process per core (37 -> 24 s):
    each result is the one this process gives, steps and messages alike, in the order asked (not the order done)."""
    names = ["ffn_lipschitz", "init_scaling", "collapse_tau", "mask_collapse", "collapse_trajectory"]

    def timeless(result) -> dict:
        data = result.as_dict()
        return {**data, "steps": [{**step, "seconds": None} for step in data["steps"]]}

    done_meanwhile = []
    pooled = proofs_index.run_all(names, on_each=lambda result: done_meanwhile.append(result.name))
    assert [timeless(r) for r in pooled] == [timeless(proofs_index.run_derivation(name)) for name in names]
    assert sorted(done_meanwhile) == sorted(names)


def test_cli_unknown_name_is_bad_input(capsys):
    assert main(["proofs", "no.such_claim"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no derivation named" in err


def test_cli_misspelt_name_is_refused_with_the_closest_derivation(capsys):
    """A misspelt name listed the derivations without pointing at the one meant, as a misspelt claim does."""
    assert main(["proofs", "collapse.globl"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean collapse_global? known: " in err, err


def _failed_titles(name, **overrides):
    result = proofs_index.build(name, **overrides).run()
    assert not result.ok
    return [s.title for s in result.steps if s.outcome == "failed"]


def test_mutation_cubic_exponent():
    assert any("Closed form" in t for t in _failed_titles("collapse.cubic", exponent_base=2))


def test_mutation_residual_far_constant():
    lam_ratio = lambda lam: 2 / (sp.exp(lam) + 1)  # noqa: E731 - exp(lambda) for exp(2 lambda)
    assert any("Closed form" in t for t in _failed_titles("residual.far", ratio=lam_ratio))


def test_mutation_residual_third_order_dropped_factor():
    dropped = lambda Ec, A, V, n: Ec * A * Ec.T * Ec * V.T  # noqa: E731 - the 1/n dropped
    assert _failed_titles("residual.two_sided", third_order=dropped) == [
        "Order eps^3: attention acts, (1/n) E_c A E_c^T E_c V^T"]
    # equal to (1/n) at n = 3, the only number of tokens the expansion had
    thirds = lambda Ec, A, V, n: Ec * A * Ec.T * Ec * V.T / 3  # noqa: E731
    assert _failed_titles("residual.two_sided", third_order=thirds) == [
        "Order eps^3: attention acts, (1/n) E_c A E_c^T E_c V^T"]


def test_mutation_residual_attention_expansion(monkeypatch):
    """P_1 and the i-independent part of P_2 never reach the disagreement C X', so an error in their
    transcription of the series lemma (here P_1 with the wrong sign) passed every step."""
    from proofs import residual_two_sided
    expansion = residual_two_sided._expansion()
    wrong = {**expansion, "Ps": [expansion["Ps"][0], -expansion["Ps"][1], expansion["Ps"][2]]}
    monkeypatch.setattr(residual_two_sided, "_expansion", lambda n=residual_two_sided.N_TOKENS: wrong)
    assert "The expansion is the softmax's Taylor series to order eps^2" in _failed_titles("residual.two_sided")


@pytest.mark.parametrize("name, function, wrong", [
    ("collapse.cubic", "_arb_h_second", lambda t: (-2 * t).exp()),
    ("collapse.trajectory", "_arb_h", lambda t: 1 + (2 * t - 1) * (-2 * t).exp()),
    ("collapse.trajectory", "_arb_h_prime", lambda t: (3 - t) * (-t).exp()),
    ("ffn.lipschitz", "_arb_gelu_prime", lambda t: 1 / (1 + (-t).exp())),
    ("ffn.lipschitz", "_arb_minus_gelu_third", lambda t: (-(t * t) / 2).exp() * t * (3 - t * t) + 1),
])
def test_mutation_ball_transcription(monkeypatch, name, function, wrong):
    """A branch and bound proves a fact about its ball function alone: a wrong transcription of the step's
    formula into arb (still positive on the box) was proved just as well."""
    import importlib
    monkeypatch.setattr(importlib.import_module(f"proofs.{name.replace('.', '_')}"), function, wrong)
    result = proofs_index.build(name).run()
    assert [s.status for s in result.steps if s.outcome == "failed"] == ["ball"]


def test_mutation_mu_from_the_diameter():
    """mu^2 = (1/(2n)) sum_{i,k} ||x_i - x_k||^2 was checked at n = 3 only, where a weight 1/6 passed as well."""
    titles = _failed_titles("mask.collapse", pair_weight=lambda n: sp.Rational(1, 6))
    assert any(t.startswith("From D to mu") for t in titles)


def test_mutation_masked_weights_with_a_query_bias():
    """The edge weights' bound with a query bias, exp(-2 (a B^2 + |u| B)) / |N(i)|, which the windows of mask.collapse
    use, was not derived: mask.collapse's derivation had the unbiased form only."""
    wrong = lambda a, B, u, m: sp.exp(-2 * (a * B**2 + 2 * u * B)) / m  # noqa: E731 - |u| B counted twice
    assert any("query bias" in t for t in _failed_titles("mask.collapse", biased_weight=wrong))


def test_init_scaling_states_the_bert_figure_it_checks():
    """The step checked E ||A||_F^2 = 384^2 / 50^4 (0.0236) for BERT at d = 384, and its text said 0.0614."""
    [step] = [s for s in proofs_index.build("init.scaling").steps if s.title.startswith("E ||A||_F^2")]
    assert f"{384**2 / 50**4:.4f} at d = 384" in step.text, step.text


@pytest.mark.parametrize("exponent", [sp.Rational(1, 3), sp.Integer(1)])
def test_mutation_tanh_exponent(exponent):
    """docs/claims.md: tanh(a D^2/4) D <= (1 - exp(-a D^2/2)) D and no exponent below 1/2 holds; the derivation
    showed only tanh(x/4) <= 1 - exp(-x), so neither a wrong exponent nor the slack 2 was derived."""
    assert any(t.startswith("The exponent is 1/2") for t in _failed_titles("collapse.tanh", exponent=exponent))


def test_steps_that_run_a_derivation_name_what_it_only_argues():
    """collapse.global's steps 1 and 2 run collapse.dobrushin and collapse.tau and read "holds" (symbolic), yet
    the triangle inequality of one and the Cauchy-Schwarz bound on the spread of the other are argued in prose."""
    steps = {s.title: s for s in proofs_index.build("collapse.global").steps}
    for sub, argued in (("collapse.dobrushin", "Triangle inequality"), ("collapse.tau", "Spread at most a D^2")):
        [title] = [t for t in steps if sub in t]
        assert argued in [s.title for s in proofs_index.build(sub).steps if s.status == "prose"]
        assert argued.lower() in title.lower() and "prose" in title, title


def test_mutation_bias_vector():
    wrong_u = lambda WQ, WK, bQ, bK, dk: WQ * bK / sp.sqrt(dk)  # noqa: E731
    assert any("Scores with biases" in t for t in _failed_titles("collapse.tau", u_formula=wrong_u))


def test_mutation_gelu_constant():
    titles = _failed_titles("ffn.lipschitz", constant=lambda: sp.Rational(1129, 1000))
    assert any("The constant" in t for t in titles)


def test_mutation_counterexample_equilibrium():
    from proofs.ln_counterexample import w
    wrong = lambda: (sp.Matrix([[-1 / w**2, sp.sqrt(1 - 1 / w**4)]]),  # noqa: E731
                     sp.Matrix([[-1 / w, -sp.sqrt(1 - 1 / w**2)]]))
    assert any("equilibria" in t for t in _failed_titles("ln.counterexample", equilibria=wrong))


def test_mutation_radius_and_stable_rank():
    assert _failed_titles("mask.collapse", stated_radii=(("sliding", 63),))
    titles = _failed_titles("ln.equilibria", stable_rank_bound=lambda N, w: N / (N - sp.Rational(N) / w**2))
    assert "Stable rank of the full-rank equilibria" in titles
    # equal to the stated bound at w = N, the only value checked, and wrong for every w > N that the claim covers
    titles = _failed_titles("ln.equilibria", stable_rank_bound=lambda N, w: N / (N - sp.Rational(N - 1) / (w * N)))
    assert "Stable rank of the full-rank equilibria" in titles


def test_a_crashing_step_fails_without_stopping_the_run():
    d = Derivation(claim="test.crash", statement="", source="")

    @d.symbolic("divides by zero")
    def _():
        return 1 / 0

    @d.symbolic("undecided relational is not a pass")
    def _():
        require(sp.Symbol("x") > 0, "x > 0 is not known")

    d.prose("words", "only argued")

    @d.symbolic("holds")
    def _():
        require(True, "")

    result = d.run()
    assert [s.outcome for s in result.steps] == ["failed", "failed", "argued", "holds"]
    assert "ZeroDivisionError" in result.steps[0].message
    assert not result.ok and result.summary() == "4 steps: 3 symbolic, 1 prose; 2 FAILED"


def test_suite_section_rows(tmp_path, monkeypatch):
    from certify.suite import derivations as proofs_section
    from certify.suite import SuiteRun
    monkeypatch.setattr(proofs_index, "names", lambda: ["residual_far", "init_scaling"])
    rows = list(proofs_section.section(SuiteRun(out_dir=tmp_path)))
    assert [r.case for r in rows] == ["residual.far", "init.scaling"]
    assert all(r.ok and r.verdict == "ok" for r in rows)
    assert rows[0].detail == "4 steps: 3 symbolic, 1 prose (not certified)"
