"""A configuration's name in a certificate: the parts that state its sizes are checked, the rest is a label.

Certify names the configurations it makes by their parameters, the number of tokens and their dimension written as
parts n<k> and d<k> between hyphens (gaussian-n8-d4, a campaign's gaussian-n8-d4-seed0-17, near-permutation-n5).
The name is bound only by the certificate's digest, which a forger recomputes: a certificate of 4 tokens relabelled
as one of 8 was confirmed.  The checker now rebuilds those parts from the tokens it checks and rejects another; the
rest of a name (an author's label, a distribution's, a seed) is read by no check and printed by neither the checker
nor `certify verify`.
"""

from __future__ import annotations

import copy
import json

import pytest
from test_checker_audit import seal

import certify
import certify_checker
from certify import engine
from certify.cli import main
from certify.core import config
from certify.errors import BadInput
from certify.prove import profiles, reductions, region
from certify.search import samplers
from certify.suite import cases, thesis_cases, wu_cases
from certify_checker import inequality, trajectory
from certify_checker.__main__ import main as checker_main

FALSE_BOUND = "D*(1 - exp(-0.45*a*D**2))"  # violated on the region of norm 100 (test_region_checker_ends)


def _honest(name: str = "gaussian-n4-d3") -> dict:
    case = cases.gaussian(4, 3, seed=5)
    cert = engine.check({**case, "name": name}, claim="collapse.global").certificate
    return json.loads(json.dumps(cert))


def _relabelled(cert: dict, name: str) -> dict:
    """cert under another name, its digest recomputed as a forger would."""
    forged = copy.deepcopy(cert)
    forged["inputs"]["name"] = name
    forged["inputs_sha256"] = inequality.digest(forged)
    return forged


@pytest.mark.parametrize("forged", ["gaussian-n8-d3", "gaussian-n4-d30", "near-permutation-n40",
                                    "gaussian-n8-d3-seed0-17", "causal-n04-d3", "x-d" + "7" * 5000],
                         ids=["more tokens", "wider", "n only", "a campaign's", "a leading zero", "long"])
def test_a_name_misstating_the_sizes_is_rejected(forged):
    """A certificate of 4 tokens of dimension 3 relabelled, its digest recomputed: rejected in one line."""
    honest = _honest()
    assert certify_checker.verify(honest).ok
    confirmation = certify_checker.verify(_relabelled(honest, forged))
    assert not confirmation.ok, confirmation.message
    assert "name" in confirmation.message and "4 tokens of dimension 3" in confirmation.message, confirmation.message
    assert "\n" not in confirmation.message and len(confirmation.message) < 300, confirmation.message


@pytest.mark.parametrize("label", ["gaussian-n4-d3", "gaussian-n4-d3-seed0-17", "Wu et al., Theorem 3, case n",
                                   "d-n-x", "n4", "and4", "two-tokens", ""],
                         ids=["certify's", "a campaign's", "a paper's case", "no sizes", "n alone", "no part",
                              "fixed", "empty"])
def test_a_name_stating_the_sizes_truly_or_none_is_confirmed(label):
    """An old honest certificate still verifies: certify's own names state the sizes truly, and an author's label that
    states none in certify's notation is confirmed as before (it is a label, which nothing prints)."""
    assert certify_checker.verify(_relabelled(_honest(), label)).ok


def test_a_relabelled_trajectory_is_rejected():
    """A trajectory certificate states its configuration as an inequality certificate does: the same rule."""
    honest = copy.deepcopy(certify.trajectory(cases.near_consensus(5, 2), layers=2, max_prec=128).certificate)
    assert honest["inputs"]["name"] == "near-consensus-n5-d2" and certify_checker.verify(honest).ok
    forged = copy.deepcopy(honest)
    forged["inputs"]["name"] = "near-consensus-n50-d2"
    precisions = [forged["precision"], forged["curve_precision"], forged["norm_precision"],
                  forged.get("step_precisions")]
    forged["inputs_sha256"] = trajectory.digest(forged["layers"], forged["inputs"], precisions)
    confirmation = certify_checker.verify(forged)
    assert not confirmation.ok and "near-consensus-n50-d2" in confirmation.message, confirmation.message


def test_a_region_proof_s_relabelled_counterexample_is_rejected():
    """A violated region proof carries an inequality certificate of a configuration inside the region, checked by
    that kind's checker: its name is held to the tokens there too (certify names that configuration nothing)."""
    result = region.prove(reductions.region(2, None, 1, 100), profiles.bound_profile(FALSE_BOUND, 2, None),
                          time_limit=20.0)
    assert result.verdict == "violated" and result.confirmed, result.message
    cert = json.loads(json.dumps(result.certificate))
    inner = _relabelled(cert["counterexample"]["certificate"], "two-tokens-n20-d1")
    cert["counterexample"] = {"config": inner["inputs"], "certificate": inner}
    confirmation = certify_checker.verify(cert)
    assert not confirmation.ok and "two-tokens-n20-d1" in confirmation.message, confirmation.message


def test_every_name_certify_gives_states_its_sizes_truly():
    """The names of the suite's and a campaign's configurations, made by certify, pass the rule the checker holds
    them to (and config.load's, which refuses a configuration the checker would reject for its name)."""
    made = [cases.gaussian(), cases.standard_init(), cases.near_consensus(), cases.near_permutation(),
            cases.biased_heads(), cases.causal(), cases.stack(), cases.two_tokens(), cases.antipodal(),
            thesis_cases.rotation_stack(), thesis_cases.expansive(), thesis_cases.residual(mask="causal"),
            thesis_cases.ffn(residual=True), wu_cases.masked_stack(), wu_cases.layernorm_stack(positive=True)]
    made += [samplers.sample(name, 3, 2, 0, 5).config for name in ("gaussian", "layernorm-bert", "log-L")]
    for made_config in made:
        inputs = config.to_json(config.load(made_config))
        assert certify_checker.schema.problem(certify_checker.schema.expanded(inputs)) is None, made_config["name"]


def test_a_configuration_whose_name_misstates_its_sizes_is_refused_before_any_work():
    """certify check would write a certificate the checker rejects for its name: it refuses the configuration in one
    line instead, as bad input."""
    with pytest.raises(BadInput) as refused:
        engine.check({**cases.gaussian(4, 3), "name": "gaussian-n8-d3"}, claim="collapse.global")
    message = str(refused.value)
    assert "n8" in message and "4 tokens" in message and "\n" not in message, message


def test_a_free_label_is_printed_by_neither_verify_nor_the_checker(tmp_path, capsys):
    """A label the checker cannot rebuild (a paper's case) is not shown beside the confirmed verdict."""
    label = "Wu et al. Theorem 3 (the case of the paper)"
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(_relabelled(_honest(), label)))
    assert main(["verify", str(path)]) == 0
    assert main(["verify", "--json", str(path)]) == 0
    assert checker_main([str(path)]) == 0
    out = capsys.readouterr()
    assert "Theorem 3" not in out.out + out.err, out


def test_a_certificate_made_without_certify_is_held_to_the_same_rule():
    """A certificate sealed by the checker's arithmetic alone (no configuration certify loaded) is confirmed under a
    name stating its sizes truly and rejected under one stating others."""
    inputs = {"name": "n2-d2", "X": [["1", "0"], ["0", "1"]], "layers": [{"A": [["1", "0"], ["0", "1"]]}]}
    assert certify_checker.verify(seal(inputs, claim="collapse.global")).ok
    assert not certify_checker.verify(seal({**inputs, "name": "n3-d2"}, claim="collapse.global")).ok


@pytest.mark.parametrize("name", ["gaussian-n4-d3", "gaussian-n8-d3", "x-d30", "n04", "d", "n-d", "gaussian-n4-d3-seed0-17",
                                  "a label", "n4d3", "-n4-", "n4-n5"])
def test_the_engine_and_the_checker_read_a_name_s_sizes_alike(name):
    """The two copies of the rule (the checker imports nothing of certify): a configuration certify accepts is one
    whose certificate the checker does not reject for its name, and the same words say why."""
    assert config.misstated_sizes(name, 4, 3) == certify_checker.schema.misstated_sizes(name, 4, 3)
