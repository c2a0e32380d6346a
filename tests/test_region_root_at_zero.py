"""Bounds with a square root or a fractional power of L = a D^2 close the box at L = 0 where the mathematics
allows: the slope g' over (0, L_hi] is enclosed in extended interval arithmetic (certify.prove.forward for the
prover, certify_checker.region_bounds.Dual for the checker), so 1/(2 sqrt(L)) keeps its finite lower end
1/(2 sqrt(L_hi)) where a ball over [0, L_hi] had infinite radius and closed nothing.

Every enclosure is compared with mpmath at 1000 digits at points of (0, L_hi] down to 1e-30 L_hi and at L_hi;
bounds false near L = 0 (violated for small D) are not proved, and a certificate claiming the box at L = 0
closed by a margin it does not have is rejected."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from flint import arb, ctx
from mpmath import mp

import certify_checker as checker
from certify.cli import main
from certify.core import expr
from certify.prove import profiles
from certify.prove.forward import JETS, Jet
from certify_checker import formula
from certify_checker import region_proof as checker_region
from certify_checker.bound import canonical
from certify_checker.region_bounds import Dual

# g(L) as a bound's text in a (D = 1, n = 3, d = 2); each with a point of (0, L_hi] where it is defined
SHAPES = ["sqrt(a)", "a**(1/3)", "a**1.5", "2*a**0.5 + a", "1 - exp(-sqrt(a))", "tanh(sqrt(a))", "sinh(sqrt(a))",
          "cosh(sqrt(a)) - 1", "log(1 + sqrt(a))", "sqrt(a)/(1 + a)", "min(1, sqrt(a))", "max(sqrt(a), a/4)",
          "sqrt(a + a**2)", "sqrt(a)*sqrt(a)", "1/(1 + sqrt(a))", "(a/4)**1.02", "sqrt(a)*tanh(sqrt(a))",
          "exp(-a)*sqrt(a)", "sqrt(n*a)/d", "a**(-0.5)", "sqrt(sqrt(a))", "tanh(a - 2)", "cosh(a - 1)",
          "sinh(1 - a)", "(1 - a)/(2 + a)", "min(sqrt(a), 1 - a/8)", "-sqrt(a)", "a**(2/3)*exp(-sqrt(a))"]
TOPS = [Fraction(1, 8), Fraction(1), Fraction(4), Fraction(37, 3), Fraction(1000)]


def _mp_function(text: str):
    names = {"sqrt": mp.sqrt, "exp": mp.exp, "log": mp.log, "tanh": mp.tanh, "sinh": mp.sinh, "cosh": mp.cosh,
             "min": min, "max": max, "n": mp.mpf(3), "d": mp.mpf(2)}
    return lambda L: eval(text, dict(names, a=L))  # noqa: S307 - the texts above, nothing else


def _prover_jet(text: str, top: Fraction):
    env = {"a": Jet.variable(Fraction(0), top), "D": Jet.lift(1), "n": Jet.lift(3), "d": Jet.lift(2)}
    return expr.parse(text).evaluate(JETS, env)


def _checker_jet(text: str, top: Fraction):
    values = {"D": 1, "n": 3, "d": 2}
    return formula.evaluate(text, lambda name: Dual.over(top) if name == "a" else Dual.of(values[name]))


def _exactly(end: arb):
    """An exact arb point as an mpf, without rounding."""
    mantissa, exponent = end.man_exp()
    return mp.mpf(int(mantissa)) * mp.mpf(2) ** int(exponent)


def _within(ends, value, tolerance) -> bool:
    """lo <= value <= hi, up to `tolerance` times |value| (the difference quotient's error, far below the rounding
    of a 53-bit end)."""
    with ctx.workprec(4000):
        x = arb(mp.nstr(value, 1000, strip_zeros=False))
        slack = arb(mp.nstr(abs(value) * tolerance, 20)) if tolerance else arb(0)
        return bool(ends[0] <= (x + slack).upper()) and bool((x - slack).lower() <= ends[1])


@pytest.mark.parametrize("text", SHAPES)
def test_the_jets_over_zero_to_top_hold_the_values_and_slopes_of_mpmath(text):
    """For L in (0, L_hi]: g(L) in the value interval and g'(L) (a central difference at 100 digits) in the slope
    interval, for the prover's jets and the checker's, at L_hi, at interior points and down to 1e-30 L_hi (at 1000
    digits: tanh(998)' = 4 exp(-1996) is lost to a difference quotient at 100)."""
    mp.dps = 1000
    g = _mp_function(text)
    for top in TOPS:
        with ctx.workprec(53):
            jets = [_prover_jet(text, top), _checker_jet(text, top)]
        high = mp.mpf(top.numerator) / top.denominator
        for y in (high, high / 2, high / 3, high * mp.mpf("0.999999"), high * mp.mpf("1e-6"), high * mp.mpf("1e-30")):
            value, slope = g(y), mp.diff(g, y, h=y * mp.mpf("1e-300"))
            for jet in jets:
                assert _within(jet.value, value, 0), (text, top, y, jet.value)
                assert _within(jet.slope, slope, mp.mpf("1e-25")), (text, top, y, jet.slope)


@pytest.mark.parametrize("text, slope", [("sqrt(a)", lambda t: 1 / (2 * mp.sqrt(t))),
                                         ("a**(1/3)", lambda t: t ** (mp.mpf(-2) / 3) / 3),
                                         ("1 - exp(-sqrt(a))", lambda t: mp.exp(-mp.sqrt(t)) / (2 * mp.sqrt(t)))])
def test_the_lower_end_of_a_root_slope_is_its_value_at_the_top(text, slope):
    """The slope decreases on (0, L_hi]: its least value is at L_hi, which both lower ends reach to a few roundings
    of 53 bits (not merely some finite number below it), and neither exceeds it (compared exactly)."""
    mp.dps = 50
    for top in TOPS:
        exact = slope(mp.mpf(top.numerator) / top.denominator)
        with ctx.workprec(53):
            ends = [_prover_jet(text, top).slope[0], _checker_jet(text, top).slope[0]]
        for end in ends:
            assert end.is_finite() and _exactly(end) <= exact, (text, top, end)
            assert _exactly(end) >= exact * (1 - mp.mpf(2) ** -40), (text, top, end)


@pytest.mark.parametrize("bound", ["D*sqrt(a*D**2)", "D*(a*D**2)**0.5", "D*(1 - exp(-sqrt(a*D**2)))",
                                   "D*tanh(sqrt(a*D**2))", "D*min(1, sqrt(a*D**2))", "D*(a*D**2)**(1/3)"])
def test_the_profiles_give_a_finite_slope_lower_end_at_zero(bound):
    """slope_lower(L_hi), the divided test's g'_lo on (0, L_hi], is finite for the prover and the checker, at most
    g' anywhere there (checked at L_hi and 1e-20 L_hi with mpmath), and the two agree to rounding."""
    mp.dps = 60
    text = expr.parse(bound).text
    g = _mp_function(text.replace("a*D**2", "(a)").replace("D*", "", 1))
    prover, own = profiles.bound_profile(text, 2, None), checker_region.Profile(None, text, 2, None)
    for top in TOPS:
        with ctx.workprec(53):
            ends = [prover.slope_lower(top).lower(), own.slope_lower(top)]
        high = mp.mpf(top.numerator) / top.denominator
        least = min(mp.diff(g, y, h=y * mp.mpf("1e-25")) for y in (high, high * mp.mpf("1e-20")))
        assert all(end.is_finite() and _exactly(end) <= least for end in ends), (bound, top, ends)
        assert abs(float(ends[0]) - float(ends[1])) <= 1e-12 * abs(float(ends[0])), (bound, top, ends)


@pytest.mark.parametrize("bound", ["D*sqrt(a*D**2 - a*D**2/8)", "D*(a*D**2)/(a*D**2 - 1)",
                                   "D*sqrt(a*D**2)*(a*D**2 - a*D**2)**0.5", "D*sqrt((a*D**2 - a*D**2/8)/(1 + a*D**2))",
                                   "D*sqrt(-(a*D**2))", "D*(-(a*D**2))**1.5"])
def test_a_bound_not_proved_defined_and_differentiable_on_the_interval_has_no_slope(bound):
    """The argument of a root or a division not proved > 0 (or nonzero) on (0, L_hi] (its interval reaches 0 for
    L_hi >= 4): no enclosure (NaN), never an interval that would close a box."""
    text = expr.parse(bound).text
    prover, own = profiles.bound_profile(text, 2, None), checker_region.Profile(None, text, 2, None)
    for top in TOPS[2:]:
        assert prover.slope_lower(top).is_nan() and own.slope_lower(top).is_nan(), (bound, top)


def test_the_checker_refuses_a_power_whose_exponent_may_be_one():
    """An exponent whose ball holds 1 (1 + 10^-30 at 53 bits): 0**(p - 1) is 0 or +inf by the sign of p - 1, which
    the ball does not tell, so the checker gives no slope."""
    text = expr.parse("D*(a*D**2)**1.000000000000000000000000000001").text
    with ctx.workprec(53):
        assert checker_region.Profile(None, text, 2, None).slope_lower(Fraction(1)).is_nan()


# ---- region proofs

TWO = ["--n", "2", "--radius", "1", "--norm", "1"]
LINE = ["--n", "3", "--d", "1", "--radius", "1", "--norm", "1"]


def _run(capsys, args):
    code = main(args)
    return code, capsys.readouterr()


@pytest.mark.parametrize("bound, region", [("sqrt(a*D**2)*D", TWO + ["--d", "1"]), ("sqrt(a*D**2)*D", TWO),
                                           ("(a*D**2)**0.5*D", LINE), ("D*(1 - exp(-sqrt(a*D**2)))", LINE),
                                           ("D*(a*D**2)**(1/3)", TWO)])
def test_a_root_bound_is_proved_and_its_box_at_zero_closed(bound, region, tmp_path, capsys):
    """Proved, no box left, the checker confirming it; a leaf at L = 0 is closed by the divided or the chord test;
    `certify verify` of the certificate exits 0."""
    out = tmp_path / "proof.json"
    code, captured = _run(capsys, ["prove", "--bound", bound, *region, "--time-limit", "60", "--json", "-q",
                                   "--out", str(out)])
    report = json.loads(captured.out)
    assert code == 0 and report["verdict"] == "proved" and report["left"] == 0, report
    assert report["checker"].startswith("confirmed"), report["checker"]
    cert = json.loads(out.read_text())
    at_zero = [leaf["method"] for leaf in cert["leaves"] if Fraction(leaf["box"][1][0]) == 0]
    assert at_zero and all(m.split("/")[-1] in ("divided", "chord") for m in at_zero), at_zero
    code, _ = _run(capsys, ["verify", str(out)])
    assert code == 0


@pytest.mark.parametrize("bound", ["D*0.249*sqrt(a*D**2)**2", "D*(a*D**2/4)**1.02",
                                   "D*0.249*sqrt(a*D**2)*tanh(sqrt(a*D**2))", "D*min(sqrt(a*D**2), 0.249*a*D**2)"])
def test_a_root_bound_false_near_zero_is_not_proved(bound, tmp_path, capsys):
    """Each is below L/4 = F(0, L) + O(L^3) for small L (two tokens at w = 0), so violated for small D: never proved
    (sqrt(L)^2 multiplies [0, sqrt(L_hi)] by [1/(2 sqrt(L_hi)), +inf): the interval product's lower end is 0, not a
    product of the finite ends).  A violation comes with a counterexample that `certify check` finds violated."""
    ce = tmp_path / "ce.json"
    code, captured = _run(capsys, ["prove", "--bound", bound, *TWO, "--time-limit", "5", "--json", "-q",
                                   "--counterexample", str(ce)])
    report = json.loads(captured.out)
    assert code in (1, 3) and report["verdict"] in ("violated", "undecided"), report
    if code == 1:
        assert _run(capsys, ["check", str(ce), "--bound", bound, "-q"])[0] == 1


def test_a_forged_margin_at_zero_is_rejected(tmp_path, capsys):
    """The sqrt proof's one leaf (divided: g' >= 1/(2 sqrt(4)) = 1/4 >= Var on (0, 4]) restated for 0.99 sqrt(L)
    (g' >= 0.2475 < 1/4), for radius 2 (L up to 16, g' >= 1/8), with its domain and box made consistent, so that
    only the margin is wrong, or for 0.249 sqrt(L)^2, false near L = 0: rejected, the leaf not closed."""
    out = tmp_path / "proof.json"
    assert _run(capsys, ["prove", "--bound", "sqrt(a*D**2)*D", *TWO, "--d", "1", "-q", "--out", str(out)])[0] == 0
    cert = json.loads(out.read_text())
    assert checker.verify(cert).ok and len(cert["leaves"]) == 1
    weaker = cert | {"bound": canonical("sqrt(a*D**2)*D*0.99")}
    wider = json.loads(json.dumps(cert))
    wider["region"]["radius"] = "2"
    wider["reduction"]["domain"] = [["0", "4"], ["0", "16"]]
    wider["leaves"][0]["box"] = [["0", "4"], ["0", "16"]]
    false = cert | {"bound": canonical("D*0.249*sqrt(a*D**2)**2")}
    for forged in (weaker, wider, false):
        confirmation = checker.verify(forged)
        assert not confirmation.ok and "is not closed by" in confirmation.message, confirmation.message
