"""The checker confirms honest certificates and rejects altered ones."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from certify import engine
from certify.suite import cases
import certify_checker as checker
from certify.cli import main


@pytest.fixture(scope="module")
def saturated():
    return engine.check(cases.antipodal(500.0)).certificate  # holds, decided only at > 1000 bits


@pytest.fixture(scope="module")
def generic():
    return engine.check(cases.gaussian(6, 3, seed=3)).certificate  # holds at 53 bits


@pytest.fixture(scope="module")
def violated():
    return engine.check(cases.antipodal(500.0), bound="(1-exp(-a*D**2/8))*D").certificate


def redigest(cert):
    """What a forger would do after editing: recompute the digest, so the mathematics must catch it."""
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"],
                            "precision": cert["precision"]},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


def edit_first_digit(value):
    """One digit of an exact number changed: in its text, or in the digits of a JSON number."""
    text = value if isinstance(value, str) else repr(value)
    for i, ch in enumerate(text):
        if ch.isdigit() and ch != "0":
            edited = text[:i] + str((int(ch) % 9) + 1) + text[i + 1:]
            return edited if isinstance(value, str) else float(edited)
    raise AssertionError(text)


def test_honest_certificates_are_confirmed(saturated, generic, violated):
    for cert in (saturated, generic, violated):
        assert checker.verify(cert).ok


def test_the_digest_is_the_sha256_of_the_canonical_json(saturated, generic, violated):
    """The engine's digest is the documented form (the checker recomputes it with its own code): sha256 of
    json.dumps with sorted keys and no spaces, also for a name outside ASCII and every kind of number."""
    from certify.engine.certificate import digest

    for cert in (saturated, generic, violated):
        assert redigest(copy.deepcopy(cert))["inputs_sha256"] == cert["inputs_sha256"]
    inputs = {"X": [[0.1, -2.5e-300], [1e300, 3]], "layers": [{"A": [["1/3", "0x1.8p-3"], [0, -0.0]], "d_k": 2}],
              "name": "pile \u00e9 \u2014 \"quoted\""}
    about = {"claim": None, "bound": "D_out <= D", "inputs": inputs, "precision": 53}
    expected = hashlib.sha256(json.dumps(about, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert digest(None, "D_out <= D", inputs, 53) == expected


@pytest.mark.parametrize("forge", [False, True])
def test_one_digit_of_X_is_rejected(generic, forge):
    cert = copy.deepcopy(generic)
    cert["inputs"]["X"][1][0] = edit_first_digit(cert["inputs"]["X"][1][0])
    if forge:
        redigest(cert)
    assert not checker.verify(cert).ok


def test_edited_A_with_forged_digest_is_rejected(saturated):
    cert = redigest(copy.deepcopy(saturated) | {"inputs": {"X": [["1"], ["-1"]], "layers": [{"A": [["499"]]}]}})
    assert not checker.verify(cert).ok


@pytest.mark.parametrize("fixture", ["generic", "saturated", "violated"])
def test_flipped_verdict_is_rejected(fixture, request):
    cert = copy.deepcopy(request.getfixturevalue(fixture))
    cert["verdict"] = "violated" if cert["verdict"] == "holds" else "holds"
    assert not checker.verify(cert).ok
    cert["verdict"] = "undecided"
    assert not checker.verify(cert).ok


@pytest.mark.parametrize("forge", [False, True])
def test_changed_claim_is_rejected(generic, forge):
    cert = copy.deepcopy(generic)
    cert["claim"] = "collapse.cubic"  # also holds there: only the digest and the values can tell
    if forge:
        redigest(cert)
    assert not checker.verify(cert).ok


def test_changed_bound_is_rejected(violated):
    cert = redigest(copy.deepcopy(violated) | {"bound": "(1-exp(-a*D**2/9))*D"})
    assert not checker.verify(cert).ok


@pytest.mark.parametrize("forge", [False, True])
@pytest.mark.parametrize("factor", [0.5, 2, 4])
def test_changed_precision_is_rejected(saturated, generic, factor, forge):
    """Also with the digest recomputed: the stated enclosures are not of the stated precision (or, lowered, do
    not decide the verdict), which only the mathematics can tell."""
    for original in (saturated, generic):
        cert = copy.deepcopy(original)
        cert["precision"] = max(53, int(cert["precision"] * factor))
        if cert["precision"] == original["precision"]:
            continue
        if forge:
            redigest(cert)
        assert not checker.verify(cert).ok, (original["precision"], cert["precision"])


def test_a_certificate_of_an_earlier_version_is_named_so_not_called_edited(generic):
    """An earlier version of certify wrote the same format with a digest of claim, bound and inputs only (not the
    precision): the checker does not read it and says so plainly; an edit beside that digest is still an edit."""
    cert = copy.deepcopy(generic)
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"]},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "written by an earlier version of certify" in confirmation.message, confirmation
    assert "certify check CONFIG --out CERT" in confirmation.message
    cert["claim"] = "collapse.tanh" if cert["claim"] != "collapse.tanh" else "collapse.global"
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "edited?" in confirmation.message and "earlier" not in confirmation.message


def test_edited_value_is_rejected(generic):
    cert = copy.deepcopy(generic)
    cert["values"]["D_out"] = edit_first_digit(cert["values"]["D_out"])
    assert not checker.verify(cert).ok
    cert = copy.deepcopy(generic)
    cert["values"]["layers"][0]["a"] = edit_first_digit(cert["values"]["layers"][0]["a"])
    assert not checker.verify(cert).ok


def test_bad_witness_can_only_fail(generic):
    cert = copy.deepcopy(generic)
    cert["witness"]["A0"]["basis"][0][0] = "0x1.8p+3"
    assert not checker.verify(cert).ok  # the norm enclosure widens or the basis is not orthogonal


def test_certificate_inputs_are_a_valid_configuration(generic, tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(generic["inputs"]))
    again = engine.check(str(path))
    assert again.verdict == generic["verdict"]


def test_verify_cli_exit_codes(generic, tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(generic))
    assert main(["verify", str(good)]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(generic | {"verdict": "violated"}))
    assert main(["verify", str(bad)]) == 1
    assert "REJECTED" in capsys.readouterr().out
    (tmp_path / "junk.json").write_text("{not json")
    assert main(["verify", str(tmp_path / "junk.json")]) == 2
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    assert main(["verify", str(tmp_path / "other.json")]) == 2
    assert main(["verify", str(tmp_path / "missing.json")]) == 2


def test_edited_comparison_text_is_rejected(generic):
    """What a certificate says it compared is checked too: a reader of the JSON must not be misled."""
    cert = copy.deepcopy(generic)
    cert["values"]["comparisons"][0]["rhs_expr"] = "(1 - exp(-a*D**2/100))*D"
    assert not checker.verify(cert).ok


def _beside(cert: dict, where: str, outside: bool) -> str:
    """A stated enclosure of `where` (D_out, a or bound) whose lower end lies 10^-20 above (outside) or
    below the lower end of the checker's own 400-bit enclosure, its upper end comfortably above."""
    from flint import ctx
    from mpmath import mp

    from certify_checker import inequality, schema
    expanded = {**cert, "inputs": schema.expanded(cert["inputs"])}
    with ctx.workprec(400):
        compared, steps = inequality._recompute(expanded, "layer", inequality.CLAIMS[cert["claim"]][2], 400)
        value = {"D_out": steps[0]("D_out"), "a": steps[0]("a"), "bound": compared[-1][-1]}[where]
        low, high = (x.str(130, radius=False) for x in (value.lower(), value.upper()))
    with mp.workdps(130):
        low, high = mp.mpf(low), mp.mpf(high)
        stated_low, radius = low + (1 if outside else -1) * mp.mpf(10) ** -20, mp.mpf("1.00e-13")
        assert high < stated_low + 2 * radius  # the upper end comfortably above the checker's
        return f"[{mp.nstr(stated_low + radius, 60, min_fixed=-5, max_fixed=5)} +/- 1.00e-13]"


@pytest.mark.parametrize("where", ["D_out", "a", "bound"])
@pytest.mark.parametrize("outside", [True, False])
def test_a_stated_enclosure_a_hair_beside_the_checkers_own(generic, where, outside):
    """10^-20 above the lower end of the checker's enclosure: rejected, whatever the precision; 10^-20
    below it: confirmed once the checker recomputes finely enough.  At these magnitudes (1 to 6) both
    texts read as the same binary64 numbers: the binary64 reading must leave both to the exact one."""
    from certify_checker import exact
    cert = copy.deepcopy(generic)
    text = _beside(cert, where, outside)
    assert exact._binary64(text) == exact._binary64(_beside(cert, where, not outside))  # indistinguishable
    if where == "a":
        cert["values"]["layers"][0]["a"] = text
    else:
        cert["values"][where] = text
    assert checker.verify(cert).ok is not outside, (where, text, checker.verify(cert).message)


@pytest.mark.parametrize("precision", [53, 106, 300])
def test_a_widened_ball_is_the_same_whatever_the_callers_precision(precision):
    """widened() works at the stated precision: called inside that precision (as a check does) or
    outside it, the ball is the same, and it contains the ball it widens by its radius and ulps."""
    from flint import arb, ctx
    from certify.engine.certificate import WIDENING_BITS, widened

    with ctx.workprec(precision):
        x = arb(2).sqrt() / 3
        inside = widened(x, precision)
    with ctx.workprec(precision + 17):
        outside = widened(x, precision)
    assert (inside.mid(), inside.rad()) == (outside.mid(), outside.rad())
    assert inside.contains(x) and inside.rad() >= x.rad() * (1 + 2**WIDENING_BITS)
    assert inside.rad() >= abs(x.mid()) * arb(2) ** (WIDENING_BITS - precision)


def test_a_holds_stated_where_the_balls_overlap_is_rejected():
    """A forger's certificate of a false bound: tanh(250) D > (1 - 2 e^-500) D by about 2 e^-1000 D, so the
    bound is violated, but at 53 bits both sides round to the same midpoints and their balls overlap.  Built
    with the engine's own enclosures at 53 bits, every comparison and the verdict set to "holds", the digest
    recomputed: every stated number is honest, only the verdict is not decided by them, and it is rejected."""
    import dataclasses

    from flint import ctx

    from certify.core import config
    from certify.core.arith import BALL, FLOAT64
    from certify.engine import certificate, decide

    cfg, bound = cases.antipodal(250.0), "(1 - 2*exp(-a*D**2/2))*D"
    assert engine.check(cfg, bound=bound).verdict == engine.VIOLATED  # decided at a higher precision
    case, claim = config.load(cfg), engine.target(bound=bound).claim
    witnesses: dict = {}
    decide.evaluate(FLOAT64, case, claim, witnesses)
    with ctx.workprec(53):
        views, comparisons = decide.evaluate(BALL, case, claim, witnesses)
        assert [c.outcome for c in comparisons] == [None]  # undecided at 53 bits
        assert comparisons[0].lhs.mid() <= comparisons[0].rhs.mid()  # the midpoints alone would say "holds"
        forged = [dataclasses.replace(c, outcome=True) for c in comparisons]
        cert = certificate.build(config.to_json(case), None, bound, engine.HOLDS, 53, views, forged, witnesses)
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "undecided" in confirmation.message, confirmation.message


@pytest.mark.parametrize("fixture, radius", [("generic", "1e-6"), ("saturated", "1e-100")])
def test_a_stated_enclosure_widened_far_beyond_its_precision_is_rejected(fixture, radius, request):
    """The same midpoint with a radius far wider than the stated precision gives (1e-6 at 53 bits, where the
    checker's own is about 1e-14; 1e-100 at well over 1000 bits): it still contains the true value, but it
    is no enclosure of that precision, and a reader would take it for one."""
    cert = copy.deepcopy(request.getfixturevalue(fixture))
    midpoint = cert["values"]["D_out"].strip("[]").split("+/-")[0].strip()
    cert["values"]["D_out"] = f"[{midpoint} +/- {radius}]"
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "not as accurate" in confirmation.message, confirmation.message


@pytest.mark.parametrize("stated", [False, None])
def test_one_comparisons_stated_outcome_changed_is_rejected(stated):
    """Three layers, three comparisons that hold: the middle one stated violated or undecided while the verdict
    still says holds (so only the per-comparison check can tell), digest recomputed."""
    cert = engine.check(cases.stack(depth=3)).certificate
    assert [e["holds"] for e in cert["values"]["comparisons"]] == [True, True, True]
    cert["values"]["comparisons"][1]["holds"] = stated
    confirmation = checker.verify(redigest(cert))
    assert not confirmation.ok and "stated outcome" in confirmation.message, confirmation.message


@pytest.mark.parametrize("part", ["comparisons", "layers"])
def test_an_extra_stated_comparison_or_layer_is_rejected(generic, part):
    """A comparison or a layer's values stated beyond those the checker recomputes (a copy of the last, its
    numbers moved) would be shown and never checked."""
    cert = copy.deepcopy(generic)
    extra = copy.deepcopy(cert["values"][part][-1])
    for key in ("lhs", "rhs") if part == "comparisons" else list(extra):
        extra[key] = "[0.5 +/- 1e-16]"
    cert["values"][part].append(extra)
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "different number" in confirmation.message, confirmation.message


def test_balls_that_touch_at_one_end_decide_nothing():
    """lhs in [0, 1] (its lower end exactly 0) against rhs = 0: lhs = rhs = 0 is allowed, so the comparison is
    undecided, not violated (lhs > rhs is certain only when the balls are apart); rhs in [0, 1] against lhs = 0
    holds."""
    from flint import arb

    from certify_checker import inequality
    touching = arb(0, 1).nonnegative_part()
    assert touching.lower() == 0
    assert inequality._outcome(touching, arb(0)) is None
    assert inequality._outcome(arb(0), touching) is True


def test_a_field_beside_the_certificates_own_is_rejected(generic):
    """A field the checker does not read (a note saying what was proved) would be shown and never checked."""
    confirmation = checker.verify(generic | {"note": "holds for every configuration"})
    assert not confirmation.ok and "fields" in confirmation.message, confirmation.message


def test_an_undecided_certificate_is_not_confirmed():
    """The comparison undecided at 53 bits (as in the forger's certificate above), stated so, with the verdict null:
    every stated number is honest, but a certificate states a decided verdict, and this one decides nothing."""
    from flint import ctx

    from certify.core import config
    from certify.core.arith import BALL, FLOAT64
    from certify.engine import certificate, decide

    cfg, bound = cases.antipodal(250.0), "(1 - 2*exp(-a*D**2/2))*D"
    case, claim = config.load(cfg), engine.target(bound=bound).claim
    witnesses: dict = {}
    decide.evaluate(FLOAT64, case, claim, witnesses)
    with ctx.workprec(53):
        views, comparisons = decide.evaluate(BALL, case, claim, witnesses)
        assert [c.outcome for c in comparisons] == [None]
        cert = certificate.build(config.to_json(case), None, bound, None, 53, views, comparisons, witnesses)
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "not a decided verdict" in confirmation.message, confirmation.message


@pytest.mark.parametrize("stated, inside", [("[0.99999999995 +/- 1e-10]", False), ("[1.00000000005 +/- 1e-10]", False),
                                            ("[1.0 +/- 2e-10]", True)])
def test_a_stated_enclosure_must_hold_both_ends_of_the_checkers_own(stated, inside):
    """The checker's ball [1 +/- 1e-10] against stated balls that hold its midpoint and one end only (their other
    end 5e-11 inside its own): not contained; one that holds both ends is."""
    from flint import arb

    from certify_checker import exact
    assert exact.contains(arb(1, 1e-10), stated) is inside


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**300, max_value=10**300)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(), children, max_size=6), max_leaves=40)


@settings(max_examples=2000, deadline=None)
@given(JSON_VALUES)
@example([False] * 1000)
@example([None, True] * 500)
@example(["x" * 100] * 50)
@example({"\x01" * 9: -2.2250738585072014e-308})
@example(["\U0001f600", "", "\udcff", 2**31, -(2**31) - 1, 255, 256, -1])
def test_a_certificates_pickle_bounds_its_json_text(value):
    """Under the default limits a check takes its certificate's text as certain to fit from its pickle's length, not
    from its JSON text (writing a small check's numbers in decimal was a tenth of its time): every JSON value's text
    is within JSON_PER_PICKLED_BYTE characters a byte of its pickle, a string met twice counted twice."""
    from certify.engine import certificate
    for tree in (value, [value, value], {"a": value, "b": [value]}):
        assert len(json.dumps(tree)) <= certificate.JSON_PER_PICKLED_BYTE * certificate._pickled_length(tree)
