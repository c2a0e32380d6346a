"""Powers with a constant exponent, x**p: (a*D**2)**0.5 is sqrt(a*D**2) to the prover and to the checker alike.

A positive rational constant p (0.5, 1/2, 1.5) reads as sqrt does: defined for x >= 0, 0**p = 0 (a region holds
D = 0), exp(p log x) elsewhere, not finite where a ball reaches 0 or below; any other exponent needs x > 0."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from flint import arb, ctx, fmpq
from mpmath import mp

import certify_checker as checker
from certify.cli import main
from certify.core import expr
from certify.core.arith import BALL
from certify.engine import check
from certify.errors import BadInput
from certify.prove import profiles
from certify.prove.forward import JETS, Jet
from certify_checker import formula
from certify_checker import region_proof as checker_region
from certify_checker.bound import canonical
from certify_checker.region_bounds import Dual

EXPONENTS = ["0.5", "1/2", "1.5", "0.3", "7/3", "-0.5", "-1.25", "(-5)/4"]
POINTS = [Fraction(1, 3), Fraction(2), Fraction(1, 10**20), Fraction(10**6), Fraction(17, 7)]


def _mp(x: Fraction):
    return mp.mpf(x.numerator) / x.denominator


def _ball(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


def contains(ball: arb, value) -> bool:
    with mp.workdps(60), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, 60, strip_zeros=False)))


def _prover(text: str, a, D=arb(1)):
    """The prover's value of a bound in D, a (n = 3, d = 2), in balls (or jets, for a jet a)."""
    env = {"D": D, "a": a, "n": arb(3), "d": arb(2)}
    if isinstance(a, Jet):
        return expr.parse(text).evaluate(JETS, {name: Jet.lift(value) for name, value in env.items()})
    return expr.parse(text).evaluate(BALL, env)


def _checker(text: str, a, D=arb(1)):
    """The checker's value of the same text (its own parse and arithmetic)."""
    env = {"D": D, "n": arb(3), "d": arb(2)}
    return formula.evaluate(text, lambda name: a if name == "a" else Dual.of(env[name]) if isinstance(a, Dual)
                               else env[name])


def _inside(ends, value) -> bool:
    """An interval of exact (possibly infinite) arb ends holds the mpmath value."""
    with mp.workdps(60), ctx.workprec(250):
        x = arb(mp.nstr(value, 60, strip_zeros=False))
        return bool(ends[0] <= x.lower()) and bool(x.upper() <= ends[1])


# ---- enclosures against mpmath

@pytest.mark.parametrize("p", EXPONENTS)
def test_a_power_and_its_derivative_contain_mpmath_values(p):
    """x**p at exact points and over intervals, and p x^(p - 1) over intervals (the forward-mode slopes region
    proofs close leaves with), by the prover and the checker, each against mpmath at 60 digits."""
    mp.dps = 60
    exponent = _mp(Fraction(p.replace("(", "").replace(")", "")))
    text = f"a**({p})"
    for x in POINTS:
        exact = _mp(x) ** exponent
        with ctx.workprec(53):
            values = [_prover(text, _ball(x)), _checker(text, _ball(x))]
        assert all(v.is_finite() and contains(v, exact) for v in values), (p, x, values)
        assert all(float(v.rad()) <= float(abs(exact)) * 2.0 ** -40 for v in values)  # a point's enclosure is tight
        top = x * Fraction(9, 8)
        with ctx.workprec(53):
            jets = [_prover(text, Jet.variable(Fraction(0), top)), _checker(text, Dual.over(top))]
        for y in (_mp(x), _mp(top), (_mp(x) + _mp(top)) / 2, _mp(top) / 10**30):
            for jet in jets:
                assert _inside(jet.value, y ** exponent), (p, x, jet.value)
                assert _inside(jet.slope, exponent * y ** (exponent - 1)), (p, x, jet.slope)


@pytest.mark.parametrize("p", ["0.5", "1/2", "1.5", "0.3", "7/3"])
def test_a_positive_rational_power_is_sqrt_like_at_and_below_zero(p):
    """0**p = 0 exactly (sqrt(0) = 0); a ball that reaches below 0 has no finite enclosure (the power is undefined
    there, and its true values on the nonnegative part would be lost by any clipped ball), in both; a base
    certainly < 0 is bad input to the prover.  Jets over (0, L] give p x**(p - 1) its finite end at L (the
    lower end for p < 1, whose upper end is infinite; the upper end for p > 1, whose lower end is 0)."""
    text = f"a**({p})"
    assert _prover(text, arb(0)) == 0 and _checker(text, arb(0)) == 0
    for straddling in (arb("0 +/- 1e-10"), arb(0).union(arb(1)), arb("1e-30 +/- 2e-30")):
        assert not _prover(text, straddling).is_finite() and not _checker(text, straddling).is_finite()
    power = Fraction(p)
    finite = _mp(power) * mp.mpf(8) ** (1 - _mp(power))
    for jet in (_prover(text, Jet.variable(Fraction(0), Fraction(1, 8))), _checker(text, Dual.over(Fraction(1, 8)))):
        assert jet.value[0] == 0 and jet.value[1].is_finite()
        end, other = (jet.slope[0], jet.slope[1]) if power < 1 else (jet.slope[1], jet.slope[0])
        assert end.is_finite() and abs(float(end) - float(finite)) <= 1e-12 * float(finite), (p, jet.slope)
        assert (not other.is_finite() and other > 0) if power < 1 else other == 0, (p, jet.slope)
    with pytest.raises(BadInput, match=r"base < 0"):
        _prover(text, arb("-1 +/- 0.5"))
    assert not _checker(text, arb("-1 +/- 0.5")).is_finite()


@pytest.mark.parametrize("p", ["-0.5", "(-1/2)", "0.5**2", "2**0.5", "0*1.5", "1/0"])
def test_any_other_exponent_needs_a_positive_base(p):
    """A negative, zero, irrational or undefined exponent: 0**p is bad input to the prover (1/0 for itself, undefined
    whatever the configuration) and not finite to the checker, as log(0) is."""
    with pytest.raises(BadInput, match=r"base <= 0|1/0 divides by zero"):
        _prover(f"a**({p})", arb(0))
    assert not _checker(f"a**({p})", arb(0)).is_finite()


BOUNDS = [("sqrt(a*D**2)*D", "(a*D**2)**0.5*D"), ("sqrt(a*D**2)*D", "(a*D**2)**(1/2)*D"),
          ("D*sqrt(a*D**2)**3", "D*(a*D**2)**1.5"), ("D*sqrt(sqrt(a*D**2))", "D*((a*D**2)**0.5)**0.5"),
          ("D/sqrt(a*D**2)", "D*(a*D**2)**-0.5"), ("D*(1 - exp(-sqrt(a*D**2/n)))", "D*(1 - exp(-(a*D**2/n)**0.5))"),
          ("sqrt(D)*n", "D**0.5*n"), ("sqrt(max(D, a))", "max(D, a)**0.5")]


@pytest.mark.parametrize("root, power", BOUNDS)
def test_prover_and_checker_read_a_power_as_its_sqrt_form(root, power):
    """At D = 0 and elsewhere, the prover and the checker give overlapping balls for the sqrt form and the power
    form, or both find the bound undefined (bad input to the prover, not finite to the checker)."""
    mp.dps = 30
    for D in (Fraction(0), Fraction(1, 3), Fraction(2)):
        for a in (Fraction(0), Fraction(1, 7), Fraction(3)):
            with ctx.workprec(80):
                values = []
                for text in (root, power):
                    try:
                        values.append(_prover(text, _ball(a), _ball(D)))
                    except BadInput:
                        values.append(None)
                    values.append(_checker(text, _ball(a), _ball(D)))
            if values[0] is None:  # undefined: 1/sqrt(0)
                assert values[2] is None and not values[1].is_finite() and not values[3].is_finite(), (D, a)
                continue
            assert all(v.is_finite() for v in values), (root, D, a, values)
            assert all(v.overlaps(values[0]) for v in values), (root, D, a, values)


@pytest.mark.parametrize("bound", ["(a*D**2)**0.5*D", "D*(a*D**2)**(3/2)", "D**0.5*n", "D*(a*D**2)**0.3 + D"])
def test_a_check_at_d_zero_reads_a_power_as_the_checker_does(bound):
    """Equal tokens (D = 0): `certify check` decides the bound at 0**p = 0, and the checker confirms it; a negative
    power there is bad input."""
    same = {"X": [[1, 0], [1, 0]], "A": [[1, 0], [0, 1]]}
    result = check(same, bound=bound)
    assert result.verdict == "holds" and checker.verify(result.certificate).ok
    apart = {"X": [[1, 0], [0, 1]], "A": [[1, 0], [0, 1]]}
    result = check(apart, bound=bound)
    assert result.verdict == "holds" and checker.verify(result.certificate).ok
    with pytest.raises(BadInput, match="base <= 0"):
        check(same, bound=bound.replace("0.5", "-0.5").replace("3/2", "-3/2").replace("0.3", "-0.3"))


# ---- region proofs, from the command line

def _prove(tmp_path, capsys, bound: str, region: list[str], name: str):
    out = tmp_path / f"{name}.json"
    code = main(["prove", "--bound", bound, *region, "--time-limit", "60", "--json", "-q", "--out", str(out),
                 "--counterexample", str(tmp_path / f"{name}.counterexample.json")])
    captured = capsys.readouterr()
    assert captured.err == "", captured.err
    return code, json.loads(captured.out), out


TWO = ["--n", "2", "--radius", "1", "--norm", "1"]
LINE = ["--n", "3", "--d", "1", "--radius", "1", "--norm", "1"]


@pytest.mark.parametrize("forms, region", [
    (("sqrt(a*D**2)*D", "(a*D**2)**0.5*D", "(a*D**2)**(1/2)*D"), TWO),
    (("D*sqrt(a*D**2)/10", "D*(a*D**2)**0.5/10", "D*(a*D**2)**(1/2)/10"), TWO),
    (("D*sqrt(a*D**2)/10", "D*(a*D**2)**0.5/10"), LINE),
    (("D*(1 - exp(-sqrt(a*D**2)**3))", "D*(1 - exp(-(a*D**2)**1.5))"), LINE),
])
def test_a_power_proves_and_refutes_where_its_sqrt_form_does(forms, region, tmp_path, capsys):
    """The same verdict, the certificate confirmed by the checker: a true bound is proved, the box at L = 0
    closed through the finite lower end of its slope over (0, L_hi] (certify.prove.forward) where the slope
    itself is infinite at 0; a false bound is violated with a counterexample that `certify check` finds
    violated under every spelling."""
    results = [_prove(tmp_path, capsys, bound, region, f"form{k}") for k, bound in enumerate(forms)]
    codes = {code for code, _, _ in results}
    assert len(codes) == 1 and codes <= {0, 1}, codes
    first = results[0][1]
    for code, report, out in results:
        assert report["checker"].startswith("confirmed"), report["checker"]
        assert checker.verify(json.loads(out.read_text())).ok
        assert (report["verdict"], report["left"] > 0) == (first["verdict"], first["left"] > 0)
        if report["verdict"] == "proved":
            assert report["left"] == 0 and report["volume_proved"] == 1
        else:
            assert report["verdict"] == "violated"
            for bound in forms:
                assert main(["check", report["counterexample"], "--bound", bound, "-q"]) == 1
                capsys.readouterr()


def test_the_checker_rejects_a_proof_whose_exponent_is_swapped(tmp_path, capsys):
    """A certificate of (a*D**2)**0.5*D restated for an exponent above 1, a bound below L/4 near L = 0 (false there):
    its leaf at L = 0 no longer closes (the slope p L**(p - 1) has the lower end 0 on (0, L_hi])."""
    code, report, out = _prove(tmp_path, capsys, "(a*D**2)**0.5*D", TWO, "honest")
    cert = json.loads(out.read_text())
    assert code == 0 and checker.verify(cert).ok and report["leaves"] >= 1
    for forged in ("(a*D**2)**1.5*D", "(a*D**2)**(3/2)*D", "(a*D**2)**1.25*D"):
        confirmation = checker.verify(cert | {"bound": forged})
        assert not confirmation.ok and "is not closed by" in confirmation.message, confirmation.message


# ---- hostile exponents: one line, exit 2

@pytest.mark.parametrize("bound", [
    "(a*D**2)**1e400*D", "(a*D**2)**(2049/2)*D", "(a*D**2)**-1025.5*D", "(a*D**2)**nan*D", "(a*D**2)**inf*D",
    "(a*D**2)**(a)*D", "(a*D**2)**(D)*D", "(a*D**2)**0.5**0.5*D", "(a*D**2)**(1/0)*D", "(a*D**2)**-0.5*D",
    "(a*D**2)**(-1/2)*D", "(a*D**2)**'0.5'*D", "(a*D**2)**(0.5*D", "(a*D**2)**" + "9" * 1900 + "*D",
    "(a*D**2)**(" + "1e999*" * 300 + "0)*D", "(a*D**2)**(1/" + "3" * 1500 + ")**2*D", "D**0.5",
    "(a*D**2)**0.5**0.5**0.5**0.5*D",
])
def test_a_hostile_exponent_is_one_line_of_bad_input(bound, capsys):
    assert main(["prove", "--bound", bound, *TWO, "--time-limit", "5", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: ") and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_negative_power_of_the_paired_variable_is_refused_at_d_zero(capsys):
    """g(0) decides which closing tests apply; (a*D**2)**-0.5 has none: said so, naming D = 0."""
    assert main(["prove", "--bound", "(1 + (a*D**2)**-0.5)*D", *TWO, "-q"]) == 2
    err = capsys.readouterr().err
    assert "(a*D**2)**-0.5 with a base <= 0" in err and "at D = 0" in err, err


@pytest.mark.parametrize("bound", ["(a*D**2)**(2049/2)*D", "(a*D**2)**1e400*D", "(a*D**2)**a*D", "(a*D**2)**(1/0)*D",
                                   "(a*D**2)**1.5*D/(a*D**2)"])
def test_the_checker_refuses_a_certificate_stating_a_hostile_exponent(bound, tmp_path, capsys):
    """In its canonical form, so that it is the exponent that is refused: too large, not constant, undefined,
    or the paired variable divided out."""
    _, _, out = _prove(tmp_path, capsys, "(a*D**2)**0.5*D", TWO, "honest")
    cert = json.loads(out.read_text())
    assert checker.verify(cert).ok
    confirmation = checker.verify(cert | {"bound": canonical(bound)})
    assert not confirmation.ok and "canonical" not in confirmation.message, confirmation.message


def test_the_profiles_agree_that_a_positive_power_vanishes_at_zero():
    """g(0) = 0 exactly for (a*D**2)**p, p > 0 (the divided and chord tests rest on it), in both."""
    for p in ("0.5", "1/2", "1.5", "7/3"):
        bound = f"(a*D**2)**({p})*D"
        assert profiles.bound_profile(bound, 2, None).vanishes
        assert checker_region.Profile(None, expr.parse(bound).text, 2, None).vanishes()
