"""Equilibria of every rank (Wu et al., Theorem 3): certified enclosures checked against an
independent mpmath fixed-point residual and SVD, and a checker that rejects tampering."""

from __future__ import annotations

import argparse
import copy
import json
from fractions import Fraction

import pytest
from flint import arb, ctx
from mpmath import mp

import certify_checker
from certify_checker import ln_equilibria as checker
from certify.cli import main
from certify.studies.wu import equilibria

mp.dps = 50


def build(n: int, w: str, one_per_rank: bool = False) -> dict:
    outcome = equilibria.build(argparse.Namespace(n=n, w=w, one_per_rank=one_per_rank))
    assert outcome.confirmed, outcome.message
    assert outcome.verdict == "certified", outcome.summary
    return outcome.certificate


def midpoint_matrix(entry: dict, n: int):
    """The centres of the token boxes as an mpmath matrix (rows = tokens)."""
    X = mp.zeros(n, n)
    for i, token in enumerate(entry["tokens"]):
        m = token["dim"]
        for c, (lo, hi) in enumerate(token["box"][:-1]):
            mid = (Fraction(lo) + Fraction(hi)) / 2
            X[i, n - m + c] = mp.mpf(mid.numerator) / mid.denominator
    return X


def post_ln_layer(X, w):
    """Independent oracle: LN_rows(P X W_V) with causal uniform P and W_V = I + w S."""
    n = X.rows
    W = mp.eye(n)
    for c in range(n - 1):
        W[c, c + 1] = w
    out = mp.zeros(n, n)
    for i in range(n):
        avg = sum((X[j, :] for j in range(1, i + 1)), X[0, :]) / (i + 1)
        y = avg * W
        out[i, :] = y / mp.norm(y)
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_rank_certified_and_checked_against_mpmath(n):
    cert = build(n, str(n))
    w = mp.mpf(n)
    entries = cert["witness"]["equilibria"]
    ranks = [entry["tokens"][-1]["dim"] for entry in entries]
    assert sorted(set(ranks)) == list(range(1, n + 1))
    assert all(ranks.count(k) == 2**k for k in range(1, n + 1))  # 2^k of rank k
    bound = n / (n - mp.mpf(n - 1) / w**2)
    for j, (entry, k) in enumerate(zip(entries, ranks)):
        X = midpoint_matrix(entry, n)
        assert mp.mnorm(post_ln_layer(X, w) - X, 1) < mp.mpf(10) ** -15  # a fixed point
        singular = mp.svd_r(X, compute_uv=False)
        assert sum(1 for s in singular if s > mp.mpf(10) ** -12) == k  # numerical rank = certified rank
        if k == n:
            stable_rank = n / max(singular) ** 2
            assert stable_rank < bound
            with ctx.workprec(200):
                stated = arb(cert["values"][f"eq{j}.stable_rank_at_most"])
                assert stated.upper() >= arb(mp.nstr(stable_rank, 40)) - arb("1e-30")


def test_one_per_rank_at_n_8():
    cert = build(8, "8", one_per_rank=True)
    ranks = [entry["tokens"][-1]["dim"] for entry in cert["witness"]["equilibria"]]
    assert ranks == list(range(1, 9))


@pytest.mark.slow
def test_all_equilibria_at_n_8():
    cert = build(8, "8")
    assert len(cert["witness"]["equilibria"]) == 2**9 - 2


@pytest.fixture(scope="module")
def cert() -> dict:
    return build(3, "3")


def _tampered(cert, edit):
    changed = copy.deepcopy(cert)
    edit(changed)
    return changed


def _move_box(c):
    box = c["witness"]["equilibria"][-1]["tokens"][-1]["box"][0]
    c["witness"]["equilibria"][-1]["tokens"][-1]["box"][0] = [str(Fraction(t) + Fraction(1, 1000)) for t in box]


def _flip_middle_chain_token(c):
    # rank-3 equilibrium: token 1 is the first chain token; negating it breaks token 2's equation
    token = c["witness"]["equilibria"][-1]["tokens"][1]
    token["box"][-2] = [str(-Fraction(hi)) for hi in reversed(token["box"][-2])][::1]


def _duplicate(c):
    c["witness"]["equilibria"].append(copy.deepcopy(c["witness"]["equilibria"][-1]))


TAMPERINGS = {
    "changed w": lambda c: c["inputs"].update(w="4"),
    "changed n": lambda c: c["inputs"].update(n=4),
    "changed verdict": lambda c: c.update(verdict="undecided"),
    "moved box": _move_box,
    "flipped chain token": _flip_middle_chain_token,
    "duplicated equilibrium": _duplicate,
    "gram shift too large": lambda c: c["witness"]["equilibria"][-1].update(gram_shift="1"),
    "rank claim changed": lambda c: c["claims"].__setitem__(3, c["claims"][3].replace("rank 3", "rank 2")),
    "stable rank value changed": lambda c: c["values"].update({"eq13.stable_rank_at_most": "[1.2 +/- 1e-20]"}),
    "dimension lowered": lambda c: c["witness"]["equilibria"][-1]["tokens"][-1].update(dim=2),
}


def test_the_untouched_certificate_is_confirmed(cert):
    assert checker.verify(cert)[0]


@pytest.mark.parametrize("name", TAMPERINGS)
def test_tampered_certificates_are_rejected(cert, name):
    ok, message = checker.verify(_tampered(cert, TAMPERINGS[name]))
    assert not ok, message


@pytest.mark.parametrize("argv", [
    ["--n", "9", "--w", "9"],
    ["--n", "1", "--w", "1"],
    ["--n", "4", "--w", "3"],
    ["--n", "4", "--w", "7/2"],
    ["--n", "4", "--w", "four"],
    ["--n", "3", "--w", "1e4000"],  # beyond 2^64: its witness's boxes could not even be written down
    ["--n", "3", "--w", "1e99999"],  # an absurd exponent, refused before the number is built
])
def test_bad_input_exits_2(argv, capsys):
    assert main(["counterexample", "ln-equilibria", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("certify: error:")


def test_cli_writes_a_certified_certificate(tmp_path):
    out = tmp_path / "eq.json"
    assert main(["counterexample", "ln-equilibria", "--n", "4", "--w", "4", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["verdict"] == "certified" and checker.verify(written)[0]


def test_a_list_of_equilibria_beyond_the_work_limit_is_refused_before_any_work(cert):
    """160000 equilibria of 16 tokens whose first Krawczyk test fails on a box [0, 1/3] (64 MB at 2^16 bits,
    150 ms each) kept the checker busy for hours; the kind's work estimate (checker.work) is held to the limits
    before any."""
    import certify_checker
    from certify_checker import counterexample
    assert certify_checker.verify(cert).ok and 0 < checker.work(cert) < certify_checker.LIMITS.work
    assert certify_checker.verify(cert, certify_checker.Limits(work=checker.work(cert) - 1)).refused
    token = {"dim": 16, "box": [["0", "1/3"]] * 17}
    hostile = {"format": cert["format"], "kind": "ln-equilibria", "verdict": "certified", "claims": [],
               "inputs": {"n": 16, "w": "16"}, "values": {}, "precision": 64,
               "witness": {"equilibria": [{"tokens": [token] + [{"dim": 16}] * 15, "gram_shift": "1"}] * 1300}}
    hostile["inputs_sha256"] = counterexample.digest("ln-equilibria", hostile["inputs"], hostile["witness"], 64)
    assert certify_checker.verify(hostile, certify_checker.Limits(work=5 * 10**6)).refused  # a hundredth of the default
    precise = {**hostile, "precision": 1 << 16, "witness": {"equilibria": hostile["witness"]["equilibria"][:40]}}
    precise["inputs_sha256"] = counterexample.digest("ln-equilibria", precise["inputs"], precise["witness"], 1 << 16)
    assert certify_checker.verify(precise).refused  # 20 of them take 3 s at 2^16 bits, priced 6.9e8; 40, 1.4e9


def test_the_cli_shows_its_stages_on_stderr_and_is_silenced_by_q(capsys):
    """--n 8 took seconds with nothing on the screen: the witness, its evaluation and the checker are shown as they
    begin (a bar on stderr, drawn on a terminal or with --progress), and -q silences them."""
    assert main(["counterexample", "ln-equilibria", "--n", "2", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "verdict: certified" in captured.out
    for stage in ("the witness at", "its evaluation at", "the checker"):
        assert stage in captured.err, captured.err
    assert main(["counterexample", "ln-equilibria", "--n", "2", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_the_witness_stage_counts_its_equilibria_on_stderr(capsys):
    """--n 8 --w 2^64 spent 24 s per witness behind one unchanging "the witness at 64 bits": the stage now counts
    the equilibria boxed so far, so a long run visibly moves."""
    assert main(["counterexample", "ln-equilibria", "--n", "3", "--progress"]) == 0
    err = capsys.readouterr().err
    for done in range(1, 15):  # 2 + 4 + 8 equilibria of ranks 1..3
        assert f"the witness at 64 bits: {done}/14 equilibria" in err, err


# the tamperings the checker evaluates (a changed n or a lowered dim is a malformed witness, refused before)
WITNESS_TAMPERINGS = ["changed w", "moved box", "flipped chain token", "duplicated equilibrium", "gram shift too large"]


@pytest.mark.parametrize("name", WITNESS_TAMPERINGS)
def test_tampered_certificates_restated_as_a_forger_would_are_rejected(cert, name):
    """A forger restates the claims and values the checker computes for the tampered witness, keeps "certified"
    and redoes the digest: the checker must still reject each tampering by re-deriving the enclosures, the lam > 0,
    the ranks and their distinctness."""
    ok, message = checker.verify(_restated(_tampered(cert, TAMPERINGS[name])))
    assert not ok and "digest" not in message and "finds" in message, message


def test_an_untampered_certificate_restated_so_is_confirmed(cert):
    """The restatement alone (claims, values, digest as the checker computes them) keeps a genuine one confirmed:
    the tamperings above are rejected for what they change."""
    assert checker.verify(_restated(copy.deepcopy(cert)))[0]


def _redigested(cert: dict) -> dict:
    """cert with its digest redone, as a forger does after an edit."""
    from certify_checker import counterexample
    cert["inputs_sha256"] = counterexample.digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    return cert


def _restated(cert: dict) -> dict:
    """cert stating the claims and values the checker computes for its witness, its digest redone: a forger's."""
    with ctx.workprec(cert["precision"]):
        found = checker.evaluate(cert["inputs"], cert["witness"])
    cert["claims"] = found.claims
    cert["values"] = {key: value.str(30, radius=True) for key, value in found.values.items()}
    return _redigested(cert)


def test_a_token_of_lower_dimension_than_the_one_before_is_refused(cert):
    """Dims must not decrease: token i's system is solved on V_(m_i), which must hold s_(i-1).  A forger keeps the
    first two tokens (dims 1, 2) of an equilibrium and gives the third dim 1 with a box its restricted system passes
    (y = 1, lam = 1 + the last coordinate of s): no equilibrium (mpmath), and the witness is refused although its
    claims, values and digest are stated as the checker would."""
    entry = next(e for e in cert["witness"]["equilibria"] if e["tokens"][1]["dim"] == 2)
    first, second = entry["tokens"][:2]
    s_last = sum((Fraction(lo) + Fraction(hi)) / 2 for lo, hi in (first["box"][-2], second["box"][-2]))
    eps = Fraction(1, 1000)
    third = {"dim": 1, "box": [[str(1 - eps), str(1 + eps)], [str(1 + s_last - eps), str(1 + s_last + eps)]]}
    listed = {"tokens": [first, second, third], "gram_shift": "1/16"}
    X = midpoint_matrix(listed, 3)
    assert mp.mnorm(post_ln_layer(X, mp.mpf(3)) - X, 1) > mp.mpf(1) / 10  # not a fixed point
    forged = _stated_as_the_checker_would(cert, listed)
    confirmation = certify_checker.verify(forged)  # malformed: worded, naming the field, by the checker's entry
    assert not confirmation.ok and "nondecreasing" in confirmation.message, confirmation


def test_a_box_is_a_list_of_its_ends_not_an_object_whose_keys_are_read(cert):
    """A token's box [lo, hi] stated as an object {lo: TEXT, hi: TEXT} was read by its keys, its texts shown and
    never read ("from -1000", "to 1000"), and the certificate confirmed; a box is now lists only."""
    forged = copy.deepcopy(cert)
    token = forged["witness"]["equilibria"][0]["tokens"][0]
    token["box"] = [{lo: "from -1000", hi: "to 1000"} for lo, hi in token["box"]]
    confirmation = certify_checker.verify(_redigested(forged))
    assert not confirmation.ok and "[lo, hi]" in confirmation.message, confirmation


def _stated_as_the_checker_would(cert: dict, listed: dict) -> dict:
    """The certificate with one listed equilibrium (below full rank) as its witness, the claims and values the
    checker states for it and the digest redone: a forger's certificate."""
    from certify_checker.exact import ball
    n, w = cert["inputs"]["n"], Fraction(cert["inputs"]["w"])
    forged = copy.deepcopy(cert)
    forged["witness"] = {"equilibria": [listed]}
    bound = Fraction(n) / (n - Fraction(n - 1) / w**2)
    forged["claims"] = checker.claims(n, w, {listed["tokens"][-1]["dim"]: 1}, bound)
    with ctx.workprec(forged["precision"]):
        forged["values"] = {"stable_rank_bound": ball(bound).str(30, radius=True)}
    return _redigested(forged)


def test_a_solution_with_lam_not_positive_is_no_equilibrium():
    """Token 1 = -x_0 solves s W_V = lam x with lam = 0 (s = x_0 + x_1 = 0), a unique solution in its box, but LN(0)
    is undefined: no equilibrium.  The checker requires lam > 0 proven and rejects it, stated as it would be."""
    cert = build(2, "2")
    first = cert["witness"]["equilibria"][0]["tokens"][0]
    assert first["dim"] == 1 and Fraction(first["box"][0][0]) > 0  # x_0 = e_1
    eps = Fraction(1, 1000)
    second = {"dim": 1, "box": [[str(-1 - eps), str(-1 + eps)], [str(-eps), str(eps)]]}
    ok, message = checker.verify(_stated_as_the_checker_would(cert, {"tokens": [first, second], "gram_shift": "1/16"}))
    assert not ok and "lam > 0 is not proven" in message, message


def test_a_box_holding_two_solutions_is_not_certified():
    """Token 0 solves y = lam y, y^2 = 1 (s = 0, dim 1): (y, lam) = (1, 1) and (-1, 1) both lie in the box
    [-21/20, 19/10] x [1/2, 3/2], so no uniqueness holds there, though a Newton step from its centre stays inside.
    Krawczyk's image over the whole box (its spread U - c as balls) is not inside it: rejected."""
    cert = build(2, "2")
    listed = copy.deepcopy(cert["witness"]["equilibria"][0])
    assert [t["dim"] for t in listed["tokens"]] == [1, 1]
    listed["tokens"][0]["box"] = [["-21/20", "19/10"], ["1/2", "3/2"]]
    listed["tokens"][1]["box"] = [["1/2", "3/2"], ["3/2", "7/2"]]
    for y in (Fraction(1), Fraction(-1)):  # both solve token 0's equations inside its box
        assert y == 1 * y and y * y == 1 and Fraction(-21, 20) <= y <= Fraction(19, 10)
    ok, message = checker.verify(_stated_as_the_checker_would(cert, listed))
    assert not ok and "token 0: the Krawczyk test fails" in message, message


@pytest.mark.parametrize("coordinate", [0, 1, 2])
def test_a_box_missing_its_solution_in_one_coordinate_only_is_not_certified(coordinate):
    """N = 2, w = 2, x_0 = e_1: token 1 solves (x_0 + y) W_V = lam y, ||y|| = 1, that is y_0 (1 - lam) = 0,
    2 y_0 + 1 + y_1 = lam y_1 and y_0^2 + y_1^2 = 1, whose solutions are exactly (y_0, y_1, lam) = (-1/2, +-sqrt(3)/2,
    1), (0, 1, 2) and (0, -1, 0).  A forger widens token 1's box to +-1/50 about (-1/2, sqrt(3)/2, 1) and moves one
    coordinate's range just past the solution: the box holds no solution, yet the Krawczyk image lies inside it in
    every other coordinate (a Newton step from the box's centre lands on the solution).  Each coordinate of the image
    must be inside the box, the lam one too: rejected at that token, though restated as the checker would."""
    cert = build(2, "2")
    forged = copy.deepcopy(cert)
    first, token = forged["witness"]["equilibria"][2]["tokens"]
    assert (first["dim"], token["dim"]) == (1, 2) and Fraction(first["box"][0][0]) > 0  # x_0 = e_1
    centre = [(Fraction(lo) + Fraction(hi)) / 2 for lo, hi in token["box"]]
    box = [(c - Fraction(1, 50), c + Fraction(1, 50)) for c in centre]
    box[coordinate] = (centre[coordinate] + Fraction(1, 1000), centre[coordinate] + Fraction(3, 1000))
    token["box"] = [[str(lo), str(hi)] for lo, hi in box]
    half = mp.sqrt(3) / 2
    solutions = [(mp.mpf(-0.5), half, 1), (mp.mpf(-0.5), -half, 1), (0, 1, 2), (0, -1, 0)]
    for y0, y1, lam in solutions:
        assert max(abs(y0 * (1 - lam)), abs(2 * y0 + 1 + y1 - lam * y1), abs(y0**2 + y1**2 - 1)) < mp.mpf(10) ** -40
    within = [[mp.mpf(lo.numerator) / lo.denominator <= v <= mp.mpf(hi.numerator) / hi.denominator
               for v, (lo, hi) in zip(point, box)] for point in solutions]
    assert not any(all(row) for row in within)  # no solution in the box
    assert within[0] == [c != coordinate for c in range(3)]  # the one it was built about: missed in one coordinate
    ok, message = checker.verify(_restated(forged))
    assert not ok and "equilibrium 2, token 1: the Krawczyk test fails" in message, message


def test_a_top_vector_whose_rayleigh_quotient_equals_the_bound_proves_no_anisotropy():
    """N = 2, w = 2: the rank-2 equilibrium x_0 = e_1, x_1 = (-1/2, sqrt(3)/2) has ||X e_1||^2 = 1 + 3/4 = 7/4 =
    N - (N-1)/w^2, exactly the bound, so the top vector e_1 proves nothing (R > 7/4 is false).  A forger states it,
    with boxes of +-1/64 (token 0's centred 1/128 above y = 1, so that the Newton step from it, y = (c^2 + 1)/(2c),
    lands above 1): the enclosures are proven and their midpoints give R above 7/4 by about 3e-5, while the balls
    hold R = 7/4.  Rejected for the anisotropy, though restated as the checker would."""
    cert = build(2, "2")
    forged = copy.deepcopy(cert)
    entry = forged["witness"]["equilibria"][2]
    first, second = entry["tokens"]
    assert (first["dim"], second["dim"]) == (1, 2) and Fraction(first["box"][0][0]) > 0  # x_0 = e_1
    h = Fraction(1, 64)
    first["box"] = [[str(1 + h / 2 - h), str(1 + h / 2 + h)], [str(1 - h), str(1 + h)]]
    centre = [(Fraction(lo) + Fraction(hi)) / 2 for lo, hi in second["box"]]
    second["box"] = [[str(c - h), str(c + h)] for c in centre]
    entry["top_vector"] = ["0", "1"]
    X = mp.matrix([[0, 1], [mp.mpf(-0.5), mp.sqrt(3) / 2]])
    assert mp.mnorm(post_ln_layer(X, mp.mpf(2)) - X, 1) < mp.mpf(10) ** -40  # the equilibrium the boxes hold
    assert abs(mp.norm(X * mp.matrix([0, 1])) ** 2 - mp.mpf(7) / 4) < mp.mpf(10) ** -40  # R = the bound
    ok, message = checker.verify(_restated(forged))
    assert not ok and "equilibrium 2: stable rank < 8/7 is not proven" in message, message


def test_a_box_its_krawczyk_image_only_touches_is_not_certified():
    """N = 2, w = 2: x_0 = x_1 = e_1 is the rank-1 equilibrium, (y, lam) = (1, 1) for token 0 and (1, 2) for token 1
    (token i solves (s + y) = lam y, y^2 = 1, s the sum of the tokens before it).  Stated as point boxes, the
    Krawczyk image is the point itself: it lies in the box but not inside it.  K(U) in U gives a solution (Brouwer);
    only K(U) strictly inside U proves it the one solution of U (and C and J(U) nonsingular), which the certificate
    states: rejected, though every number it states is true."""
    cert = build(2, "2")
    tokens = [{"dim": 1, "box": [["1", "1"], ["1", "1"]]}, {"dim": 1, "box": [["1", "1"], ["2", "2"]]}]
    for y, lam, s in ((1, 1, 0), (1, 2, 1)):  # in dimension 1
        assert s + y == lam * y and y * y == 1
    ok, message = checker.verify(_stated_as_the_checker_would(cert, {"tokens": tokens, "gram_shift": "1/16"}))
    assert not ok and "token 0: the Krawczyk test fails" in message, message
