"""The fast paths of the arb evaluation against an independent mpmath evaluation (tests/oracle.py):
diameters from Gram matrices (engine and checker, near consensus too), a = ||W_Q W_K^T||_2 / sqrt(d_k)
through the d_k x d_k reduction (engine and checker, and the d x d fallback), binary64 inputs and
the binary64 blocks of large certificates."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

import certify_checker as checker
from certify import engine
from certify.core import config, numbers, quantities
from certify.core.arith import BALL
from certify.core.numbers import BLOCK_ENTRIES, Binary64Matrix, parse_matrix, encode_matrix
from certify.errors import BadInput
from certify_checker import forward, norms, schema

import oracle


def contains(ball: arb, value) -> bool:
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, oracle.DPS, strip_zeros=False)))


def relative_radius(ball: arb) -> float:
    return float(ball.rad()) / abs(float(ball.mid()))


def near_consensus(seed: int, spread: float, n: int = 7, d: int = 5) -> np.ndarray:
    """n tokens within `spread` of a centre far from the origin (|centre| ~ 100)."""
    rng = np.random.default_rng(seed)
    return 100 * rng.normal(size=d) + spread * rng.normal(size=(n, d))


@pytest.mark.parametrize("spread", [1.0, 2.0**-20, 2.0**-40])
@pytest.mark.parametrize("seed", range(4))
def test_gram_diameters_contain_the_mpmath_value_and_stay_tight_near_consensus(seed, spread):
    X = near_consensus(seed, spread)
    with mp.workdps(oracle.DPS):
        expected = oracle.diameter(oracle.mat(X.tolist()))
    with ctx.workprec(53):
        mine = quantities.diameter(BALL, BALL.array(Binary64Matrix(X)))
        theirs = forward.diameter(forward.matrix(X.tolist()))
    for D in (mine, theirs):
        # centring at token 0 keeps every |y_i| <= D: no digits of D^2 cancel, however small the spread
        assert contains(D, expected) and relative_radius(D) < 2.0**-40, (D, expected)


def test_gram_diameter_of_balls_contains_every_member():
    """Tokens that are balls (P X in the ball pass): the enclosure holds for each exact member."""
    X = near_consensus(7, 2.0**-10)
    with ctx.workprec(53):
        widened = BALL.array(Binary64Matrix(X)) * arb(1, 2.0**-30)  # each entry x (1 +/- 2^-30)
        D = quantities.diameter(BALL, widened)
    rng = np.random.default_rng(0)
    for _ in range(5):
        member = X * (1 + rng.uniform(-2.0**-30, 2.0**-30, size=X.shape))
        with mp.workdps(oracle.DPS):
            assert contains(D, oracle.diameter(oracle.mat(member.tolist())))


def _thin_config(seed: int, d: int = 12, k: int = 3, beta: float = -0.75) -> dict:
    rng = np.random.default_rng(seed)
    return {"X": rng.normal(size=(4, d)).tolist(), "W_Q": rng.normal(size=(d, k)).tolist(),
            "W_K": rng.normal(size=(d, k)).tolist(), "d_k": k, "beta": beta}


def _expected_a(cfg: dict):
    with mp.workdps(oracle.DPS):
        product = oracle.mat(cfg["W_Q"]) * oracle.mat(cfg["W_K"]).T
        return abs(mp.mpf(cfg["beta"])) * max(mpmath.svd_r(product, compute_uv=False)) / mp.sqrt(cfg["d_k"])


@pytest.mark.parametrize("seed", range(3))
def test_thin_norm_of_engine_and_checker_contains_the_mpmath_value(seed):
    cfg = _thin_config(seed)  # beta < 0: a = |beta| ||W_Q W_K^T||_2 / sqrt(d_k)
    result = engine.check(cfg)
    cert = result.certificate
    assert len(cert["witness"]["A0"]["basis"]) == cfg["d_k"]  # the d_k x d_k witness, not d x d
    expected = _expected_a(cfg)
    with ctx.workprec(cert["precision"]):
        assert contains(arb(cert["values"]["layers"][0]["a"]), expected)
        theirs = norms.query_key_norm(config.to_json(config.load(cfg))["layers"][0], cert["witness"]["A0"])
    assert contains(theirs, expected) and relative_radius(theirs) < 1e-12
    assert checker.verify(cert).ok


def test_a_rank_deficient_W_K_falls_back_to_the_d_by_d_norm():
    cfg = _thin_config(5)
    cfg["W_K"] = [[row[0], row[1], 0.0] for row in cfg["W_K"]]  # W_K^T W_K is singular: no Cholesky
    result = engine.check(cfg)
    assert result.verdict == engine.HOLDS and len(schema.expanded(result.certificate["witness"]["A0"]["basis"])) == 12
    with ctx.workprec(result.precision):
        assert contains(arb(result.certificate["values"]["layers"][0]["a"]), _expected_a(cfg))


def test_a_d_k_witness_for_a_rank_deficient_W_K_is_rejected():
    good = engine.check(_thin_config(5)).certificate
    cert = copy.deepcopy(good)
    cert["inputs"]["layers"][0]["W_K"] = [[row[0], row[1], 0.0] for row in cert["inputs"]["layers"][0]["W_K"]]
    confirmation = checker.verify(_redigest(cert))
    assert not confirmation.ok and "not certainly positive definite" in confirmation.message


def _redigest(cert: dict) -> dict:
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"],
                            "precision": cert["precision"]}, sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


# --- binary64 inputs --------------------------------------------------------------------------------


def test_binary64_matrices_read_as_their_exact_rationals():
    rows = [[0.1, -0.0, 3], [2.0**-1074, -1.5, 2**53]]
    fast = parse_matrix(rows, "X")
    assert isinstance(fast, Binary64Matrix)
    exact = tuple(tuple(Fraction(v) for v in row) for row in rows)
    assert fast == exact and exact == fast and fast[1][0] == Fraction(1, 2**1074) and len(fast) == 2
    assert not isinstance(parse_matrix([[0.5, 2**53 + 1]], "X"), Binary64Matrix)  # not a binary64: exact anyway
    assert parse_matrix([[0.5, 2**53 + 1]], "X")[0][1] == 2**53 + 1
    with pytest.raises(BadInput, match="not a finite"):
        parse_matrix([[0.5, math.inf]], "X")


def test_binary64_matrices_hold_arrays_no_one_else_can_change():
    """A Binary64Matrix copies a caller's array (the caller may change it after); the reading's own array,
    made for the matrix alone, is taken as it is; either way it is read-only (its arb_mat is remembered)."""
    given = np.array([[0.5, 1.0], [2.0, 3.0]])
    matrix = Binary64Matrix(given)
    given[0, 0] = 7.0
    assert matrix[0][0] == Fraction(1, 2) and not matrix.array.flags.writeable
    parsed = parse_matrix([[0.5, 1.0], [2.0, 3.0]], "X")
    assert not parsed.array.flags.writeable and parsed == matrix
    with pytest.raises(ValueError):
        parsed.array[0, 0] = 7.0


def _all_binary64(rows) -> bool:
    """The rule of the binary64 reading, entry by entry: a non-empty list of equally long non-empty
    lists of floats and of integers up to 2^53 in size."""
    return (isinstance(rows, list) and bool(rows) and all(type(row) is list and row for row in rows)
            and len({len(row) for row in rows}) == 1
            and all(type(v) is float or type(v) is int and abs(v) <= 2**53 for row in rows for v in row))


@pytest.mark.parametrize("rows", [[[0.5, 1]], [[0.5, 2**53], [-(2**53), 0.0]], [[0.5, 2**53 + 1]],
                                  [[0.5, -(2**53) - 1]], [[0.5, True]], [[0.5, "0.5"]], [[0.5, None]], [[0.5], [0.5, 1.0]], [[0.5], []],
                                  [[], []], [[0.5], (0.5,)], [(0.5,), (0.5,)], [[0.5, [1.0]]], [[0.5, Fraction(1, 3)]],
                                  [[np.float64(0.5)]], [], [[1e308 * 10]]])
def test_the_binary64_reading_takes_what_the_general_one_gives(rows):
    """The set-based test of the binary64 reading accepts exactly the matrices of the rule, and reads
    them as the general reading does; the rest keeps the general reading's result or its one-line error."""
    try:
        general = tuple(tuple(numbers.parse_number(v) for v in row) for row in rows) if rows else None
    except BadInput:
        general = None
    fast = numbers._binary64_array(rows)
    finite = general is not None and all(map(math.isfinite, map(float, sum(general, ()))))
    assert (fast is not None) == (_all_binary64(rows) and finite)
    try:
        parsed = parse_matrix(rows, "X")
    except BadInput as error:
        assert fast is None and "\n" not in str(error) and str(error).startswith("X")
        return
    assert parsed == general and isinstance(parsed, Binary64Matrix) == (fast is not None)


def test_binary64_balls_and_their_remembered_arb_mat_are_the_exact_values():
    """Ball.array of a binary64 matrix: exact balls of its entries (as the Fractions' own), and the arb_mat
    its products use holds the same balls, whatever the precision."""
    from certify.core.arith.ball import _mat_of, to_arb

    rows = [[0.1, -2.0**-1074, 3.0], [1e300, -1.5, 2.0**53]]
    with ctx.workprec(200):  # enough for each of these binary64 values to be exact
        exact = [[to_arb(Fraction(v)) for v in row] for row in rows]
    for precision in (53, 20):
        with ctx.workprec(precision):
            balls = BALL.array(Binary64Matrix(np.array(rows)))
            assert all(b.is_exact() and b == e for b, e in zip(balls.ravel(), sum(exact, [])))
            mat = _mat_of(balls)
            assert all(mat[i, j] == balls[i, j] and mat[i, j].is_exact() for i in range(2) for j in range(3))


def test_plain_configurations_pass_the_numpy_reading_unchanged_and_numpy_inside_rows_is_converted():
    plain = {"X": [[0.5, 1], [2.0, -3.0]], "layers": [{"A": [[1, 0], [0, 1]], "mask": "causal"}]}
    assert numbers.from_numpy(plain, config.NDIMS) == plain
    hidden = {"X": [np.array([0.5, 1.0]), [2.0, np.float32(-3.0)]], "A": [[np.int64(1), 0], [0, 1]]}
    assert numbers.from_numpy(hidden, config.NDIMS) == {"X": [[0.5, 1.0], [2.0, -3.0]], "A": [[1, 0], [0, 1]]}
    assert all(type(v) in (float, int) for row in numbers.from_numpy(hidden, config.NDIMS)["X"] for v in row)
    with pytest.raises(BadInput, match="dtype"):
        numbers.from_numpy({"X": [[np.array(["a"])]]}, config.NDIMS)


def test_large_matrices_are_written_as_binary64_blocks_and_read_back_exactly():
    X = np.random.default_rng(0).normal(size=(40, 30))
    block = encode_matrix(Binary64Matrix(X))
    assert set(block) == {"binary64", "shape"} and block["shape"] == [40, 30]
    assert np.array_equal(parse_matrix(block, "X").array, X)
    assert isinstance(encode_matrix(Binary64Matrix(X[:2, :BLOCK_ENTRIES // 2])), list)  # small ones stay readable
    assert set(encode_matrix(Binary64Matrix(X[:BLOCK_ENTRIES // 8 + 1, :8]))) == {"binary64", "shape"}


@pytest.mark.parametrize("bad", [{"binary64": "not base64!", "shape": [2, 2]},
                                 {"binary64": base64.b64encode(b"\0" * 24).decode(), "shape": [2, 2]},
                                 {"binary64": base64.b64encode(np.full(4, np.inf).tobytes()).decode(), "shape": [2, 2]},
                                 {"binary64": "", "shape": [0, 2]},
                                 {"binary64": "", "shape": [2, 2], "extra": 1}])
def test_malformed_blocks_are_bad_input(bad):
    with pytest.raises(BadInput):
        parse_matrix(bad, "X")


def test_a_certificate_with_blocks_is_confirmed_and_an_edited_block_rejected():
    rng = np.random.default_rng(3)
    cfg = {"X": rng.normal(size=(40, 30)).tolist(), "A": (rng.normal(size=(30, 30)) / 6).tolist()}
    cert = engine.check(cfg).certificate
    assert set(cert["inputs"]["X"]) == {"binary64", "shape"}
    assert checker.verify(json.loads(json.dumps(cert))).ok  # through its JSON text, as a file
    edited = copy.deepcopy(cert)
    raw = bytearray(base64.b64decode(edited["inputs"]["X"]["binary64"]))
    raw[13] ^= 0x10  # one bit of one token
    edited["inputs"]["X"]["binary64"] = base64.b64encode(bytes(raw)).decode()
    assert not checker.verify(edited).ok and not checker.verify(_redigest(edited)).ok
    short = copy.deepcopy(cert)
    short["inputs"]["X"]["shape"] = [39, 30]
    assert not checker.verify(_redigest(short)).ok


def test_matrices_written_as_binary64_blocks_are_held_to_the_checkers_caps():
    """The checker's caps read the shapes of rows only: tokens written as a block (as certificates write
    large matrices) passed them whatever their number, 3000 tokens in 64 KB."""
    rng = np.random.default_rng(5)
    cfg = {"X": rng.normal(size=(40, 30)).tolist(), "A": (rng.normal(size=(30, 30)) / 6).tolist()}
    cert = engine.check(cfg).certificate
    assert set(cert["inputs"]["X"]) == {"binary64", "shape"} and checker.verify(cert).ok
    assert checker.verify(cert, checker.Limits(tokens=40, dim=30)).ok
    assert checker.verify(cert, checker.Limits(tokens=39)).refused
    assert checker.verify(cert, checker.Limits(dim=29)).refused
    factored = {"X": cfg["X"], "W_Q": rng.normal(size=(30, 40)).tolist(), "W_K": rng.normal(size=(30, 40)).tolist(),
                "beta": "1/100"}
    wide = engine.check(factored, claim="collapse.dobrushin").certificate
    assert set(wide["inputs"]["layers"][0]["W_Q"]) == {"binary64", "shape"}
    assert checker.verify(wide, checker.Limits(dim=39)).refused and not checker.verify(wide, checker.Limits(dim=40)).refused


def test_the_full_mask_is_made_once_per_size_and_cannot_be_written():
    """layers.full_mask is shared by every layer of its size, so it is read-only: a write raises, and an
    unmasked layer's arrays hold the all-true n x n mask."""
    from certify.core import layers

    mask = layers.full_mask(5)
    assert mask.shape == (5, 5) and mask.dtype == bool and mask.all() and layers.full_mask(5) is mask
    with pytest.raises(ValueError):
        mask[0, 1] = False
    case = config.load({"X": [[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], "A": [[1.0, 0.0], [0.0, 1.0]]})
    arrays = layers.layer_arrays(BALL, case.layers[0], case.n)
    assert arrays.mask.shape == (3, 3) and arrays.mask.all() and not arrays.mask.flags.writeable
