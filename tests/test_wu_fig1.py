"""Wu et al. Figure 1: the certified equilibria against an independent mpmath computation, and a
checker that rejects tampered certificates."""

from __future__ import annotations

import argparse
import copy
import json
from fractions import Fraction

import pytest
from flint import arb, ctx
from mpmath import mp

from certify_checker import wu_fig1 as checker
from certify.cli import main
from certify.studies.wu import fig1

mp.dps = 50


def build(w: str) -> dict:
    outcome = fig1.build(argparse.Namespace(w=w))
    assert outcome.confirmed, outcome.message
    assert outcome.verdict == "certified"
    return outcome.certificate


@pytest.fixture(scope="module")
def cert() -> dict:
    return build("2")


def layer(x1, x2, w):
    """One post-LN layer of the Figure-1 system, in mpmath: rows, P = [[1, 0], [1/2, 1/2]]."""
    def value_ln(v):
        y = mp.matrix([[v[0], w * v[0] + v[1]]])
        return y / mp.norm(y)
    return value_ln(x1), value_ln((x1 + x2) / 2)


def token2_equilibria(w):
    """Solve x = LN((e2 + x) W_V) for x on the circle with mpmath's findroot (no closed form)."""
    def equations(a, b, lam):
        return [a - lam * a, w * a + 1 + b - lam * b, a * a + b * b - 1]
    found = {}
    for name, start in (("A", (-0.4, 0.9, 1.1)), ("B", (-0.4, -0.9, 1.1))):
        a, b, _ = mp.findroot(equations, start)
        found[name] = (a, b, mp.atan2(b, a) % (2 * mp.pi))
    return found


def ball(text: str) -> arb:
    with ctx.workprec(200):
        return arb(text)


def contains(text: str, x) -> bool:
    with ctx.workprec(200):
        return arb(text).contains(arb(mp.nstr(x, 45)))


@pytest.mark.parametrize("w", ["2", "3/2", "5", "101/100"])
def test_equilibria_enclosures_contain_mpmath_solutions(w):
    cert = build(w)
    values = cert["values"]
    for name, (a, b, theta) in token2_equilibria(mp.mpf(Fraction(w).numerator) / Fraction(w).denominator).items():
        assert contains(values[f"theta_{name}"], theta), (name, values[f"theta_{name}"], theta)
        assert contains(values[f"{name}_x"], a) and contains(values[f"{name}_y"], b)
    assert ball(values["theta_B"]).rad() < 1e-15


@pytest.mark.parametrize("w", ["1.00000000000001", "1000000000000000000001/1000000000000000000000", "10000000000",
                               str(2**64)])
def test_w_near_1_and_up_to_the_cap_is_certified(w):
    """The witness was found in float64: as w nears 1 (theta_B - pi = atan sqrt(w^2 - 1)) or grows (theta_A - pi/2
    about 1/w) its boxes and arc lost A and B, and every w past 1e10 or within 1e-14 of 1 that --w takes ended
    undecided.  Closed-form equilibria (-1/w, +-sqrt(1 - 1/w^2)) checked at 400 digits."""
    cert = build(w)
    with mp.workdps(400):
        exact = Fraction(w)
        wm = mp.mpf(exact.numerator) / exact.denominator
        for name, sign in (("A", 1), ("B", -1)):
            x, y = -1 / wm, sign * mp.sqrt(1 - 1 / wm**2)
            assert contains(cert["values"][f"{name}_x"], x) and contains(cert["values"][f"{name}_y"], y), name


def test_derivatives_against_mpmath_differentiation(cert):
    w = mp.mpf(2)
    def angle_after_layer(theta):
        _, x2 = layer(mp.matrix([[0, 1]]), mp.matrix([[mp.cos(theta), mp.sin(theta)]]), w)
        return mp.atan2(x2[1], x2[0]) % (2 * mp.pi)
    for name, (_, _, theta) in token2_equilibria(w).items():
        assert contains(cert["values"][f"fprime_{name}"], mp.diff(angle_after_layer, theta))


def test_trapping_arc_starts_converge_to_B_in_mpmath(cert):
    w = mp.mpf(2)
    theta_B = token2_equilibria(w)["B"][2]
    cuts = [Fraction(c) for c in cert["witness"]["trapping_cuts"]]
    x1 = mp.matrix([[0, 1]])
    for start in (cuts[0], (cuts[0] + cuts[-1]) / 2, cuts[-1]):
        theta = mp.mpf(start.numerator) / start.denominator
        x2 = mp.matrix([[mp.cos(theta), mp.sin(theta)]])
        for _ in range(60):
            _, x2 = layer(x1, x2, w)  # token 1 held at (0, 1), as in the claim
        assert mp.norm(x2 - mp.matrix([[mp.cos(theta_B), mp.sin(theta_B)]])) < mp.mpf(10) ** -20
    # the repelling A lies outside the certified arc
    assert not cuts[0] <= Fraction(str(token2_equilibria(w)["A"][2])) <= cuts[-1]


def test_token1_distance_bound_against_iteration(cert):
    a_min, T = Fraction(cert["witness"]["token1"]["a_min"]), cert["witness"]["token1"]["T"]
    w = mp.mpf(2)
    bound = mp.mpf(float(ball(cert["values"]["token1_distance_bound"]).upper())) * (1 + mp.mpf(10) ** -12)
    for a, b in ((a_min, -1), (a_min, 1), (Fraction(1, 2), -1)):  # b is then normalised
        a = mp.mpf(a.numerator) / a.denominator
        x1 = mp.matrix([[a, b * mp.sqrt(1 - a * a)]])
        x2 = mp.matrix([[1, 0]])
        for _ in range(T):
            x1, x2 = layer(x1, x2, w)
        distance = mp.norm(x1 - mp.matrix([[0, 1]]))
        assert distance <= bound
        assert distance > bound / 100  # the bound is not vacuous


def test_rank2_determinant(cert):
    assert contains(cert["values"]["det_rank2"], mp.mpf(1) / 2)  # det [(0, 1), B] = 1/w


def test_certificate_is_confirmed(cert):
    assert checker.verify(cert) == (True, "confirmed: certified at 64 bits")


def _tampered(cert, edit):
    changed = copy.deepcopy(cert)
    edit(changed)
    return changed


def _move_box(c, shift=Fraction(1, 1000)):
    lo, hi = (Fraction(t) for t in c["witness"]["theta_B"])
    c["witness"]["theta_B"] = [str(lo + shift), str(hi + shift)]


TAMPERINGS = {
    "changed w": lambda c: c["inputs"].update(w="3"),
    "slightly changed w": lambda c: c["inputs"].update(w="2000001/1000000"),
    "changed verdict": lambda c: c.update(verdict="undecided"),
    "moved box": _move_box,
    "box moved onto A": lambda c: c["witness"].update(theta_B=c["witness"]["theta_A"]),
    "changed claim": lambda c: c["claims"].__setitem__(-1, "[(0, 1), B] is an equilibrium of rank 1"),
    "changed value": lambda c: c["values"].update(det_rank2="[0.25 +/- 1e-18]"),
    "blown-up value": lambda c: c["values"].update(theta_B="[4 +/- 1]"),
    "missing value": lambda c: c["values"].pop("fprime_B"),
    "trapping arc stretched over A": lambda c: c["witness"]["trapping_cuts"].__setitem__(0, "2"),
    "token1 horizon shortened": lambda c: c["witness"]["token1"].update(T=1),
    "precision out of range": lambda c: c.update(precision=8),
    "other kind": lambda c: c.update(kind="ln-equilibria"),
}


@pytest.mark.parametrize("name", TAMPERINGS)
def test_tampered_certificates_are_rejected(cert, name):
    ok, message = checker.verify(_tampered(cert, TAMPERINGS[name]))
    assert not ok, message


def test_an_undecided_certificate_claiming_certified_is_rejected(cert):
    # a witness whose trapping arc reaches over A cannot be certified; claiming it is caught
    bad = _tampered(cert, lambda c: c["witness"].update(trapping_cuts=["2", "4"]))
    with ctx.workprec(64):
        assert checker.evaluate(bad["inputs"], bad["witness"]).verdict == "undecided"
    assert not checker.verify(bad)[0]


def test_cli_exit_codes(tmp_path, capsys):
    out = tmp_path / "fig1.json"
    assert main(["counterexample", "wu-fig1", "--w", "2", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdict"] == "certified"
    # beyond 2^64, and numbers whose exponent is absurd (read with the configuration's exponent caps,
    # "1e999999999" is refused before 10^999999999 is built): one line, never a crash
    for bad in ("1", "1/2", "-3", "two", "1e300", "1e4000", "1e99999", "0x1p99999"):
        assert main(["counterexample", "wu-fig1", "--w", bad]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith("certify: error:")


def test_the_engine_angle_map_is_one_formula_over_both_arithmetics():
    """fig1's angle map runs in float64 and in arb: the closed-form A and B are its fixed points in
    both, and the ball encloses the float64 value."""
    from flint import ctx

    from certify.core.arith import BALL, FLOAT64
    from certify.studies.wu import fig1

    for name in ("A", "B"):
        theta = fig1.closed_form_angle(FLOAT64, 2.0, name)
        assert abs(fig1.angle_map(FLOAT64, 2.0, theta) - theta) < 1e-12
        with ctx.workprec(128):
            w = BALL.number(2)
            ball_theta = fig1.closed_form_angle(BALL, w, name)
            gap = fig1.angle_map(BALL, w, ball_theta) - ball_theta
            assert gap.contains(0) and gap.rad() < 1e-30  # a fixed point, to 128 bits
            assert abs(float(ball_theta.mid()) - theta) < 1e-12


def test_millions_of_trapping_cuts_are_refused_before_any_work(cert):
    """Five million cuts of the trapping arc (40 MB at 2^16 bits) kept the checker busy for minutes; the
    kind's work estimate (checker.work) is now held to the limits before any."""
    import certify_checker
    from certify_checker import counterexample
    bits = cert["precision"]  # the evaluation at the stated precision and the finer one, at twice it
    assert certify_checker.verify(cert).ok and checker.work(cert) == 100 * len(cert["witness"]["trapping_cuts"]) * (
        (1 + bits // 64) + (1 + 2 * bits // 64)) + counterexample.text_price(cert, checker.TEXT_READS)  # its texts'
    assert 0 < counterexample.text_price(cert, checker.TEXT_READS) < 10**4  # an honest witness's short texts: 1 ms
    lo, hi = (Fraction(c) for c in cert["witness"]["trapping_cuts"][::len(cert["witness"]["trapping_cuts"]) - 1])
    many = copy.deepcopy(cert)
    many["witness"]["trapping_cuts"] = [str(lo + (hi - lo) * i / 20_000) for i in range(20_001)]
    many["inputs_sha256"] = counterexample.digest("wu-fig1", many["inputs"], many["witness"], many["precision"])
    assert certify_checker.verify(many, certify_checker.Limits(work=2_000_000)).refused  # 1/250 of the default
    assert certify_checker.verify(cert, certify_checker.Limits(work=checker.work(cert) - 1)).refused


def test_both_layernorm_counterexamples_read_w_with_one_cap(monkeypatch):
    """wu-fig1 and ln-equilibria read --w through certify.studies.wu.w_option: one cap (MAX_W = 2^64) and one
    reading, each counterexample keeping its own lower bound and its words for why w is capped."""
    from certify.errors import BadInput
    from certify.studies.wu import equilibria, w_option
    assert w_option.MAX_W == 2**64
    assert fig1.parse_w(str(2**64)) == equilibria.parse(4, str(2**64))[1] == 2**64
    for read, why in ((fig1.parse_w, "closed forms"), (lambda text: equilibria.parse(4, text), "tokens")):
        with pytest.raises(BadInput, match=rf"^--w must be at most 2\^64 \(the witness's float64 {why}\), got {2**64 + 1}$"):
            read(str(2**64 + 1))
        monkeypatch.setattr(w_option, "MAX_W", Fraction(5))
        with pytest.raises(BadInput):
            read("6")
        monkeypatch.undo()
    with pytest.raises(BadInput, match="greater than 1"):
        fig1.parse_w("1")
    with pytest.raises(BadInput, match="at least N = 4"):
        equilibria.parse(4, "3")


def test_the_printed_bound_on_f_prime_and_the_printed_arc_are_rounded_the_safe_way():
    """The summary rounded to nearest: an upper end of f' of 0.9318814 printed "<= 0.931881", below the bound the
    checker confirmed, and the arc [3088347/1048576, ...] printed from 2.945277, wider than the one certified."""
    found = fig1.Found(values={"fprime_on_trapping_arc": arb("0.5") + arb(0, "0.4318814")})
    cuts = ["3088347/1048576", "331536175149597/70368744177664"]
    lines = fig1._summary(found, {"trapping_cuts": cuts})
    printed = Fraction(next(line for line in lines if "trapping arc   <=" in line).split("<=")[1].strip())
    mantissa, exponent = found.values["fprime_on_trapping_arc"].upper().mid().man_exp()
    assert printed >= Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    arc = next(line for line in lines if "trapping arc:" in line).split("[")[1].split("]")[0]
    low, high = (Fraction(end.strip()) for end in arc.split(","))
    assert Fraction(cuts[0]) <= low < high <= Fraction(cuts[1])


def test_near_w_1_the_summary_does_not_print_a_bound_on_f_prime_above_the_one_proven(capsys):
    """Each piece of the trapping arc is proven to have f' < 1, but near w = 1 the union of the pieces' balls ends
    above 1 (its radius rounded up to arb's 30 bits): the summary printed "<= 1.00001e0" at w = 1 + 1e-19, less
    than the certificate proves and seemingly against it."""
    assert main(["counterexample", "wu-fig1", "--w", "1.0000000000000000001"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "f' on the trapping arc" in line)
    assert line.split("arc", 1)[1].split() == ["<", "1", "on", "each", "piece"], line
