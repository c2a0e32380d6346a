"""The proven exp of the rigorous float64 tier (certify/core/arith/exp64.py) against arb.

Its error constant is re-derived here in arb and re-proved by Gappa (proofs/formal/exp64.g, at the reduced argument
that proofs/formal/exp64_reduction.g proves), whose Coq certificates are checked when coqc and libcoq-gappa are
installed (Debian: gappa, libcoq-gappa, coq).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from flint import arb, ctx

from certify.core.arith import exp64

GAPPA_SCRIPT = Path(__file__).resolve().parents[1] / "proofs" / "formal" / "exp64.g"
REDUCTION_SCRIPT = GAPPA_SCRIPT.with_name("exp64_reduction.g")
needs_gappa = pytest.mark.skipif(shutil.which("gappa") is None,
                                 reason="gappa is not installed (Debian package gappa)")


def edge_points() -> np.ndarray:
    """Every edge: multiples of ln 2 and the half-way points between them (where k switches),
    with their binary64 neighbours; the underflow and overflow limits; zeros, subnormal and huge
    arguments, infinities."""
    ln2 = np.log(2.0)
    k = np.arange(-1080, 1030, dtype=np.float64)
    centres = np.concatenate([k * ln2, (k + 0.5) * ln2,
                              [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300,
                               exp64.X_MIN, exp64.X_MAX, -708.3964185322641, -708.4, -744.4400719213812,
                               -745.1332191019411, -745.2, -746.0, -1000.0, 709.782712893384, 709.79,
                               710.0, 1e308, -1e308, exp64.R1_MAX, -exp64.R1_MAX, 0.5 * ln2, -0.5 * ln2]])
    neighbours = [centres]
    for direction in (np.inf, -np.inf):
        step = centres
        for _ in range(3):
            step = np.nextafter(step, direction)
            neighbours.append(step)
    return np.concatenate(neighbours + [np.array([np.inf, -np.inf])])


def sample_points(count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    uniform = rng.uniform(-750.0, 715.0, count // 2)
    small = rng.choice([-1.0, 1.0], count // 4) * 10.0 ** rng.uniform(-320, 0, count // 4)
    softmax_like = -rng.exponential(5.0, count - count // 2 - count // 4)
    return np.concatenate([edge_points(), uniform, small, softmax_like])


def violations(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> list[float]:
    """Arguments where arb's exp is not certainly inside [lower, upper]."""
    bad = []
    with ctx.workprec(80):
        for xi, lo, hi in zip(x.tolist(), lower.tolist(), upper.tolist()):
            if xi == -np.inf:
                value = arb(0)
            elif xi > exp64.X_MAX:  # overflow: +inf above, the bound at X_MAX below
                if hi != np.inf or not arb(lo) <= arb(exp64.X_MAX).exp():
                    bad.append(xi)
                continue
            else:
                value = arb(xi).exp()
            if not (arb(lo) <= value and (hi == np.inf or value <= arb(hi))):
                bad.append(xi)
    return bad


def assert_encloses_and_tight(x: np.ndarray):
    lower, upper = exp64.exp_bounds(x)
    assert violations(x, lower, upper) == []
    # Tight where the result is a normal number well inside the range: about 5 units in the last place.
    normal = (x > -707.0) & (x < exp64.X_MAX)
    assert np.all(upper[normal] / lower[normal] - 1 <= 1.3e-15)


def test_enclosures_a_million_points_with_every_edge():
    # arb checks about 400,000 points a second on a quiet machine
    assert_encloses_and_tight(sample_points(1_000_000 - len(edge_points())))


@pytest.mark.slow
def test_enclosures_ten_million_points():
    for seed in range(1, 11):
        assert_encloses_and_tight(sample_points(1_000_000, seed))


def test_limits_and_special_values():
    lower, upper = exp64.exp_bounds(np.array([np.nan, np.inf, -np.inf, 0.0, 710.0, -746.0, -800.0]))
    assert np.isnan(lower[0]) and np.isnan(upper[0])
    assert upper[1] == np.inf and 0 < lower[1] < np.inf  # overflow: +inf above, a finite lower bound
    assert lower[2] == 0 and upper[2] <= 2.0**-1074
    assert lower[3] <= 1 <= upper[3] and upper[3] - lower[3] <= 1.3e-15
    assert upper[4] == np.inf
    assert lower[5] == 0 and upper[5] <= 2.0**-1073 and lower[6] == 0 and upper[6] <= 2.0**-1073
    # subnormal results keep their absolute accuracy: within a few units of 2^-1074
    lower, upper = exp64.exp_bounds(np.array([-740.0, -744.0]))
    assert np.all(upper - lower <= 4 * 2.0**-1074)


def test_planted_fault_one_ulp_narrower_bound_is_caught():
    x = sample_points(100_000)
    lower, upper = exp64.exp_bounds(x)
    assert len(violations(x, lower, np.nextafter(upper, -np.inf))) > 0
    assert len(violations(x, np.nextafter(lower, np.inf), upper)) > 0


@pytest.mark.parametrize("rel_error", [exp64.REL_ERROR, 1.6e-16, 3.3e-16, 1e-15, 2.0**-52])
def test_enclosure_factors_hold_exp_at_either_end_of_the_relative_error(rel_error):
    """enclosure_factors' promise: fl(p DOWN) <= exp(r) <= fl(p UP) whenever |p / exp(r) - 1| <= e, checked at the
    extremes exp(r) = p / (1 - e) and p / (1 + e), in Fractions, for p of every mantissa in [0.7, 1.42] (the
    products rounded by numpy, as _enclose rounds them)."""
    down, up = exp64.enclosure_factors(rel_error)
    rng = np.random.default_rng(5)
    p = np.concatenate([rng.uniform(0.7, 1.42, 20000), np.nextafter(1.0, 0.0) - 2.0**-52 * np.arange(200),
                        1.0 + 2.0**-52 * np.arange(200)])
    e = Fraction(rel_error)
    for value, low, high in zip(p, p * down, p * up):
        assert Fraction(low) <= Fraction(value) / (1 + e) and Fraction(value) / (1 - e) <= Fraction(high), value


def midrad_violations(x: np.ndarray, mid: np.ndarray, rad: np.ndarray) -> list[float]:
    """Arguments where arb's exp is not certainly within rad of mid (exp_midrad's form; overflow: both inf)."""
    bad = []
    with ctx.workprec(80):
        for xi, m, r in zip(x.tolist(), mid.tolist(), rad.tolist()):
            if xi > exp64.X_MAX:
                if not (m == np.inf and r == np.inf):
                    bad.append(xi)
                continue
            value = arb(0) if xi == -np.inf else arb(xi).exp()
            if not abs(value - arb(m)) <= arb(r):
                bad.append(xi)
    return bad


def test_midpoint_radius_form_encloses_and_is_tight():
    x = sample_points(300_000 - len(edge_points()), seed=3)
    mid, rad = exp64.exp_midrad(x)
    assert midrad_violations(x, mid, rad) == []
    normal = (x > -707.0) & (x < exp64.X_MAX)
    assert np.all(rad[normal] <= 2.8e-16 * mid[normal] + 3 * 2.0**-1074)  # e / (1 - e), two roundings, 2 ETA
    # subnormal results keep their absolute accuracy; nan stays nan
    mid, rad = exp64.exp_midrad(np.array([-740.0, -744.0, -746.0, np.nan]))
    assert np.all(rad[:3] <= 3 * 2.0**-1074) and np.isnan(mid[3]) and np.isnan(rad[3])


def test_planted_fault_in_the_midpoint_radius_form_is_caught():
    x = sample_points(20_000, seed=4)
    mid, rad = exp64.exp_midrad(x)
    assert len(midrad_violations(x, mid, rad / 16)) > 0
    assert len(midrad_violations(x, np.nextafter(mid, np.inf) + rad, rad)) > 0


def test_ln2_parts_and_coefficients():
    with ctx.workprec(400):
        l1, l2, l3 = (arb(v) for v in exp64.LN2_PARTS)
        assert abs(arb(2).log() - l1 - l2 - l3) < arb(exp64.LN2_REMAINDER)
    # k L1 and k L2 exact for |k| <= K_MAX: 42 significant bits and |k| < 2^11
    for part in exp64.LN2_PARTS[:2]:
        assert Fraction(part).numerator.bit_length() <= 42
    assert exp64.K_MAX < 2**11
    assert np.rint(exp64.X_MIN * exp64.INV_LN2) >= -exp64.K_MAX
    assert np.rint(exp64.X_MAX * exp64.INV_LN2) <= exp64.K_MAX
    factorial = 1
    for i, c in enumerate(exp64.COEFFICIENTS):
        factorial *= max(i, 1)
        assert c == float(Fraction(1, factorial))


def test_arb_derivation_is_within_the_constant():
    terms = exp64.derive_error_terms()
    assert terms["total"] <= arb(exp64.REL_ERROR)
    # the factors turn REL_ERROR into an enclosure (exp64.enclosure_factors)
    e, u = Fraction(exp64.REL_ERROR), Fraction(2) ** -53
    assert Fraction(exp64.UP_FACTOR) >= (1 + u) / (1 - e)
    assert Fraction(exp64.DOWN_FACTOR) * (1 + u) * (1 + e) <= 1


def gappa_literal(value: float) -> str:
    fraction = Fraction(value)
    exponent = fraction.denominator.bit_length() - 1
    assert fraction.denominator == 1 << exponent
    return f"{fraction.numerator}b-{exponent}"


def goal_bound(script: str) -> str:
    match = re.search(r"\(p - ER\) / ER in \[-(\S+), (\S+)\] \}", script)
    assert match and match.group(1) == match.group(2)
    return match.group(1)


def run_gappa(script: str, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    path = tmp_path / "exp64.g"
    path.write_text(script)
    return subprocess.run(["gappa", *options, str(path)], capture_output=True, text=True, timeout=300)


def hypotheses_and_goal(script: str) -> tuple[str, str]:
    """The text of a Gappa script's hypotheses and of its goal (its one `{ ... -> ... }`)."""
    block = re.search(r"\{(.*?)->(.*?)\}", script, re.S)
    return " ".join(block.group(1).split()), " ".join(block.group(2).split())


def gappa_number(literal: str) -> Fraction:
    """A Gappa number: a dyadic literal 5476250592985951b-104 or a decimal 0.3467, exactly."""
    mantissa, _, exponent = literal.partition("b")
    return Fraction(mantissa) * Fraction(2) ** int(exponent or 0)


def ranges(text: str) -> dict[str, tuple[Fraction, Fraction]]:
    """The atoms `EXPR in [LOW, HIGH]` of a Gappa hypothesis or goal, by EXPR."""
    found = {}
    for atom in text.split("/\\"):
        expression, low, high = re.fullmatch(r"\s*(.*?) in \[(\S+), (\S+)\]\s*", atom).groups()
        found[expression] = (gappa_number(low), gappa_number(high))
    return found


def test_every_gappa_hypothesis_is_a_fact_about_the_code():
    """Each hypothesis of the two scripts, by its expression: no other, and each one the code's constant or a fact
    re-derived here in arb.  A hypothesis narrower than the code's range (|x - k L1| <= 0.3, k in [-1000, 1000],
    |ln 2 - L1 - L2 - L3| <= 2^-200, Er in [0.9, 1.1]) made Gappa prove less than the code needs, and the arb
    analysis of the polynomial on |r| <= R_MAX must cover the range of r that the reduction proves."""
    script, reduction = GAPPA_SCRIPT.read_text(), REDUCTION_SCRIPT.read_text()
    terms = exp64.derive_error_terms()
    reduction_assumes, reduction_proves = (ranges(part) for part in hypotheses_and_goal(reduction))
    assumes = ranges(hypotheses_and_goal(script)[0])
    assert set(reduction_assumes) == {"x", "k", "x - k * L1", "dl"}
    assert set(reduction_proves) == {"r", "r - R"}
    assert set(assumes) == {"r", "Er", "(Q0 - Er) / Er", "ER", "(Er - ER) / ER"}

    def symmetric(bounds: tuple[Fraction, Fraction]) -> Fraction:
        assert bounds[0] == -bounds[1]
        return bounds[1]

    assert reduction_assumes["x"] == (Fraction(exp64.X_MIN), Fraction(exp64.X_MAX))  # the code clips x to this
    assert reduction_assumes["k"] == (-exp64.K_MAX, exp64.K_MAX)
    for x in (exp64.X_MIN, exp64.X_MAX):  # k = rint(x / ln 2) increases with x
        assert abs(np.rint(x * exp64.INV_LN2)) <= exp64.K_MAX
    # the code checks |fl(x - k L1)| <= R1_MAX, so |x - k L1| <= R1_MAX (1 + 2u)
    assert Fraction(exp64.R1_MAX) * (1 + Fraction(2) ** -52) <= symmetric(reduction_assumes["x - k * L1"])
    dl = symmetric(reduction_assumes["dl"])
    r_max, shift = symmetric(reduction_proves["r"]), symmetric(reduction_proves["r - R"])
    assert assumes["r"] == reduction_proves["r"] and Fraction(exp64.R_MAX) >= r_max  # arb's analysis covers r
    def value(number: Fraction) -> arb:
        return arb(number.numerator) / number.denominator

    with ctx.workprec(200):
        l1, l2, l3 = (arb(v) for v in exp64.LN2_PARTS)
        assert abs(arb(2).log() - l1 - l2 - l3) <= value(dl) and dl == Fraction(exp64.LN2_REMAINDER)
        assert terms["approx_rel"] <= value(symmetric(assumes["(Q0 - Er) / Er"]))
        assert value(shift).exp() - 1 <= value(symmetric(assumes["(Er - ER) / ER"]))  # exp(|r - R|) - 1
        # Er = exp(r) with |r| <= r_max; ER = exp(R) with |R| <= r_max + shift
        for name, reach in (("Er", value(r_max)), ("ER", value(r_max) + value(shift))):
            low, high = assumes[name]
            assert (-reach).exp() >= value(low) and reach.exp() <= value(high), name


def gappa_evaluation(script: str, inputs: dict) -> dict:
    """The binary64 values a Gappa script computes (its lower-case names, each `rnd(...)` one rounded operation),
    evaluated from `inputs` (its rounded inputs: arrays) with the script's constants, as numpy arrays: numpy's
    operations round each result to nearest binary64 as `rnd` does.  Every operation of such a line must be
    rounded, as the code's are."""
    values = dict(inputs)
    for name, expression in re.findall(r"(?m)^(\w+) = (.+);$", script):
        if name[0].isupper() and re.fullmatch(r"-?\d+b-?\d+", expression):  # a constant: exact in binary64
            values[name] = float(gappa_number(expression))
            assert Fraction(values[name]) == gappa_number(expression), name
        elif name[0].islower() and name not in inputs:
            assert expression.count("rnd(") == len(re.findall(r" [-+*/] ", expression)) > 0, (name, expression)
            values[name] = eval(expression.replace("rnd(", "("), {}, values)  # noqa: S307 - the script's arithmetic
    return values


def test_gappa_scripts_compute_what_the_code_computes():
    """The Gappa scripts' operations, with their constants, give the code's reduced argument and polynomial bit for
    bit: a script's constants swapped (C7 for C8, L1 for L2), an operation left unrounded or in another order, or a
    degree other than the code's would prove a bound about another evaluation."""
    x = sample_points(20_000)
    x = np.clip(x[np.isfinite(x)], exp64.X_MIN, exp64.X_MAX)
    k, r, reduced = exp64._reduce(x)
    assert reduced.all()
    script, reduction = GAPPA_SCRIPT.read_text(), REDUCTION_SCRIPT.read_text()
    # the inputs: any binary64 x and integer k (the code's k = rint(x / ln 2)), any binary64 r (the reduction's)
    assert "x = rnd(xx);" in reduction and "k = int<ne>(kk);" in reduction and "r = rnd(rr);" in script
    for i, part in enumerate(exp64.LN2_PARTS, 1):
        assert re.search(rf"(?m)^L{i} = {gappa_literal(part)};$", reduction), i
    assert np.array_equal(gappa_evaluation(reduction, {"x": x, "k": k})["r"], r)
    names = set(re.findall(r"(?m)^(C\d+) = ", script))
    assert names == {f"C{i}" for i in range(2, exp64.DEGREE + 1)}  # C0 = C1 = 1 are written as 1
    for i in range(2, exp64.DEGREE + 1):
        assert re.search(rf"(?m)^C{i} = {gappa_literal(exp64.COEFFICIENTS[i])};$", script), i
    rs = np.concatenate([r, np.linspace(-0.3467, 0.3467, 5001), [0.0, -0.0, 5e-324, -5e-324, 1e-300, 2.0**-1022]])
    assert np.array_equal(gappa_evaluation(script, {"r": rs})["p"], exp64._horner(rs.copy()))


@needs_gappa
def test_gappa_proves_the_codes_constant(tmp_path):
    script = GAPPA_SCRIPT.read_text()
    assert goal_bound(script) == gappa_literal(exp64.REL_ERROR)
    for proof in (script, REDUCTION_SCRIPT.read_text()):
        proved = run_gappa(proof, tmp_path)
        assert proved.returncode == 0, proved.stderr


@pytest.mark.slow
@needs_gappa
def test_gappa_tightest_bound_is_within_the_constant(tmp_path):
    script = GAPPA_SCRIPT.read_text()
    tightest = run_gappa(script.replace(f"[-{goal_bound(script)}, {goal_bound(script)}] }}", "? }"), tmp_path)
    assert tightest.returncode == 0, tightest.stderr
    low, high = re.search(r"\(p - ER\) / ER in \[(\S+) \{[^}]*\}, (\S+) \{", tightest.stderr + tightest.stdout).groups()
    mantissa, exponent = high.split("b")
    assert Fraction(int(mantissa)) * Fraction(2) ** int(exponent) <= Fraction(exp64.REL_ERROR)


@pytest.mark.slow  # Gappa bisects for about a minute before it gives up
@needs_gappa
def test_gappa_rejects_a_narrower_constant(tmp_path):
    script = GAPPA_SCRIPT.read_text()
    narrow = gappa_literal(2.0e-16)  # below the 2.26e-16 that Gappa proves
    failed = run_gappa(script.replace(goal_bound(script), narrow), tmp_path)
    assert failed.returncode != 0


@pytest.mark.slow
@needs_gappa
@pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc is not installed (Debian packages coq, libcoq-gappa)")
@pytest.mark.parametrize("script", [GAPPA_SCRIPT, REDUCTION_SCRIPT], ids=lambda path: path.stem)
def test_gappa_coq_certificate_checks(tmp_path, script):
    certificate = run_gappa(script.read_text(), tmp_path, "-Bcoq")
    assert certificate.returncode == 0, certificate.stderr
    proof = tmp_path / "exp64_certificate.v"
    proof.write_text(certificate.stdout)
    checked = subprocess.run(["coqc", str(proof)], capture_output=True, text=True, timeout=3600, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
