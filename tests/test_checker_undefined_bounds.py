"""A bound with an undefined part is decided by no certificate the checker confirms.

certify refuses a bound certainly undefined where it is evaluated (log(-1), 1/0) as bad input, and x**0 keeps an
undefined x undefined (certify.core.expr.integer_power: x * 0 + 1).  The checker read x**0 as the exact 1 whatever x
was, so a certificate made by hand from an honest one, its bound multiplied by log(-1)**0 (digest recomputed), was
confirmed: "holds" for an inequality and "proved" for a region, of a bound that has no value."""

from __future__ import annotations

import copy
import json

import pytest

import certify_checker as checker
from certify.cli import main
from certify_checker.inequality import digest

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
UNDEFINED = ["log(-1)", "sqrt(-2)", "(1/0)", "log(0)"]


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """An inequality certificate of the bound D and a region proof of collapse.global's bound, both confirmed."""
    folder = tmp_path_factory.mktemp("undefined")
    assert main(["check", str(ROOT / "examples/layer.json"), "--bound", "D", "--out", str(folder / "d.json")]) == 0
    assert main(["prove", "--bound", "(1 - exp(-a*D**2))*D", "--n", "2", "--radius", "1", "--norm", "1",
                 "--out", str(folder / "proof.json"), "-q"]) == 0
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in ("d", "proof")}


@pytest.mark.parametrize("part", UNDEFINED)
def test_an_inequality_of_a_bound_with_an_undefined_power_0_is_rejected(honest, part):
    assert checker.verify(honest["d"]).ok
    forged = copy.deepcopy(honest["d"])
    forged["bound"] = f"{part}**0*D"
    for comparison in forged["values"]["comparisons"]:
        comparison["rhs_expr"] = forged["bound"]
    forged["inputs_sha256"] = digest(forged)
    confirmation = checker.verify(forged)
    assert not confirmation.ok and "undecided" in confirmation.message


def test_a_defined_power_0_is_still_1(honest):
    """D**0*D is D, negative bases too: only an undefined base is no longer read as 1."""
    for bound in ("D**0*D", "(-2)**0*D"):
        changed = copy.deepcopy(honest["d"])
        changed["bound"] = bound
        for comparison in changed["values"]["comparisons"]:
            comparison["rhs_expr"] = bound
        changed["inputs_sha256"] = digest(changed)
        assert checker.verify(changed).ok, bound


@pytest.mark.parametrize("part", UNDEFINED + ["log(a*D**2 - 1)"])
def test_a_region_proof_of_a_bound_with_an_undefined_power_0_is_rejected(honest, part):
    assert checker.verify(honest["proof"]).ok
    forged = copy.deepcopy(honest["proof"])
    forged["bound"] = f"{part}**0*(1 - exp(-a*D**2))*D"
    assert not checker.verify(forged).ok
