"""A region proof the checker does not confirm as closed: the prover and the checker round each leaf's test their
own way, so a leaf closed by a unit of rounding at 53 bits may not close in the checker; `certify prove` closes it
again at more bits until the checker confirms the proof, and never writes a certificate the checker rejects."""

from __future__ import annotations

import json
from fractions import Fraction

from flint import ctx

import certify_checker
from certify.cli import main
from certify.prove import bnb, closing, reductions
from certify.prove import region as region_proof
from certify_checker import region_proof as checker_region

BOUND = "D*(2*a*D**2/(1 + 2*a*D**2))**(1025/1024)"
LINE = ["--bound", BOUND, "--n", "2", "--radius", "1/3", "--norm", "8"]
# A leaf of that proof which the prover's monotone-w/direct closes at 53 bits and the checker's, one unit of
# rounding lower, does not: w in [4/9, 2/3], L in [2^-53, 2^-52] 32/9 (the domain is [0, 8/9] x [0, 32/9])
TARGET = ((Fraction(4, 9), Fraction(2, 3)), (Fraction(32, 9) / 2**53, Fraction(32, 9) / 2**52))


def _towards(node, target) -> tuple[str, list]:
    """The bisection tree (preorder) from `node` down to `target` only, and its open boxes: every box beside the
    path is open, and so is the target."""
    if node == target:
        return "?", [node]
    axis = next(k for k, ((lo, hi), (t_lo, t_hi)) in enumerate(zip(node, target)) if (lo, hi) != (t_lo, t_hi))
    lower, upper = bnb.bisect(node, axis)
    inside_lower = target[axis][1] <= lower[axis][1]
    below, beside = (lower, upper) if inside_lower else (upper, lower)
    tree, left = _towards(below, target)
    if inside_lower:
        return str(axis) + tree + "?", left + [beside]
    return str(axis) + "?" + tree, [beside] + left


def _partial(tmp_path):
    """An undecided proof whose open boxes are the path's, the target among the first: what --resume continues."""
    region, profile = region_proof.prepare(None, BOUND, 2, None, "1/3", "8", 1)
    reduction = reductions.reduce(region)
    tree, left = _towards(reduction.root, TARGET)
    part = region_proof.ProofResult(region_proof.UNDECIDED, region, reduction, profile, tree=tree, left=left)
    path = tmp_path / "part.json"
    path.write_text(json.dumps(region_proof.certificate(part)))
    return path, profile


def test_the_leaf_rounds_apart_in_the_prover_and_the_checker(tmp_path):
    """The case below is one: the prover closes the target at 53 bits, the checker not, both at 212."""
    _, profile = _partial(tmp_path)
    checker_profile = checker_region.Profile(None, BOUND, 2, None)
    with ctx.workprec(53):
        assert closing.closes("monotone-w/direct", TARGET, profile)
        assert not checker_region._closes("monotone-w/direct", TARGET, checker_profile)
    with ctx.workprec(212):
        assert checker_region._closes("monotone-w/direct", TARGET, checker_profile)


def test_a_leaf_the_checker_does_not_close_is_closed_again_at_more_bits(tmp_path, capsys):
    part, _ = _partial(tmp_path)
    out = tmp_path / "proof.json"
    code = main(["prove", *LINE, "--resume", str(part), "--time-limit", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 3 and "not certified" not in text.lower(), text
    proof = json.loads(out.read_text())
    target = [[str(lo), str(hi)] for lo, hi in TARGET]
    leaf = next(leaf for leaf in proof["leaves"] if leaf["box"] == target)
    assert leaf["method"] == "monotone-w/direct" and leaf["precision"] > 53
    assert main(["verify", str(out)]) == 0


def test_a_proof_the_checker_rejects_is_not_written(tmp_path, monkeypatch, capsys):
    """Whatever the prover closes again, a checker that confirms nothing leaves the proof unconfirmed: exit 3 and
    no certificate at --out, for `certify verify` would reject it."""
    monkeypatch.setattr(certify_checker, "verify", lambda cert, *args, **kwargs: certify_checker.Confirmation(False, "no"))
    out = tmp_path / "proof.json"
    code = main(["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 3 and "not certified" in text.lower() and "no certificate written" in text, text
    assert not out.exists()
