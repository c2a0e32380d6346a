"""Rows of binary64 values, read in one pass by the engine (numbers._binary64_array) and the checker
(forward._row, matrix_mat, which take a row as exact when its sum is finite), against the general reading
of the same values written as exact texts: rows whose sum overflows though every value is finite, and
nan and infinity, which JSON cannot write but a certificate or configuration given as a Python dict can."""

from __future__ import annotations

import copy
import math

import pytest

import certify_checker as checker
from certify import engine
from certify.core import config
from certify.errors import BadInput
from test_certificates import redigest  # what a forger does after an edit: the digest recomputed

BIG = 1.7976931348623157e308  # the largest binary64 value: any two in a row overflow the sum
# Rows whose binary64 sum overflows: X's in one, W_Q's, W_K's, b_Q, V's and the FFN's W1 and b2 in the
# other; a bound in a (and v), so that the certificate holds the norm witnesses (matrix_mat's rows) too.
CONFIGS = {
    "tokens": ({"X": [[1e308, 1e308], [-1e308, 1.0], [0.5, -1e308]], "A": [[1e-320, 0.0], [0.0, 5e-324]]}, "2*D + a"),
    "weights": ({"X": [[1e-300, 2e-300], [-1e-300, 0.0], [3e-300, 1e-300]],
                 "W_Q": [[1e308, 1e308], [1e308, -1e308]], "W_K": [[1e308, BIG], [-0.0, 5e-324]],
                 "b_Q": [1e308, 1e308], "b_K": [1.0, -1e308], "V": [[1e308, 1e308], [1e-300, -1e308]],
                 "ffn": {"W1": [[1e308, 1e308]], "b1": [1e308], "W2": [[1.0], [0.5]], "b2": [BIG, BIG],
                         "activation": "relu"}}, "2*D + a*v"),
}


def hexed(value):
    """Every float in a tree written as its exact hex text: the general reading, value by value."""
    if isinstance(value, dict):
        return {key: hexed(v) for key, v in value.items()}
    if isinstance(value, list):
        return [hexed(v) for v in value]
    return value.hex() if type(value) is float else value


def float_rows(tree, path=(), kinds=(float,)):
    """The paths of the lists of floats (or of `kinds`) in a tree (the rows and vectors of a certificate's inputs and
    witness)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from float_rows(value, path + (key,), kinds)
    elif isinstance(tree, list):
        if tree and all(type(v) in kinds for v in tree):
            yield path
        for i, value in enumerate(tree):
            yield from float_rows(value, path + (i,), kinds)


def at(tree, path):
    for key in path:
        tree = tree[key]
    return tree


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def decided(request):
    data, bound = CONFIGS[request.param]
    result = engine.check(copy.deepcopy(data), bound=bound)
    assert result.certificate is not None, result.verdict
    return data, bound, result


def test_rows_whose_sum_overflows_are_read_as_their_values_by_the_engine(decided):
    """The one-pass reading (floats) and the general one (the same values as hex texts) load the same exact
    configuration and decide it alike: the same verdict at the same precision, the same stated values and
    witnesses (the inputs differ only in how the certificate writes them)."""
    data, bound, result = decided
    assert any(not math.isfinite(sum(at(data, path))) for path in float_rows(data))  # what this test is about
    assert config.load(copy.deepcopy(data)) == config.load(hexed(data))
    general = engine.check(hexed(data), bound=bound)
    assert (general.verdict, general.precision) == (result.verdict, result.precision)
    for field in ("values", "witness", "verdict", "precision"):
        assert general.certificate[field] == result.certificate[field], field


def test_rows_whose_sum_overflows_are_read_as_their_values_by_the_checker(decided):
    """The checker confirms the certificate, and the same certificate with its input rows written as exact
    texts (redigested) with the same message: its one-pass reading of the floats is the general one's.  A token
    moved far off, to a row whose sum overflows, changes D, and is rejected (the stated D_in no longer holds it)."""
    _, _, result = decided
    cert = result.certificate
    confirmation = checker.verify(copy.deepcopy(cert))
    assert confirmation.ok, confirmation.message
    general = redigest({**copy.deepcopy(cert), "inputs": hexed(cert["inputs"])})
    assert general["inputs"] != cert["inputs"] and checker.verify(general) == confirmation
    for i, token in enumerate(cert["inputs"]["X"]):
        edited = copy.deepcopy(cert)
        edited["inputs"]["X"][i] = moved = [BIG] * len(token)  # farther from every other token than D
        assert not math.isfinite(sum(moved))
        assert not checker.verify(redigest(edited)).ok, i


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_in_rows_given_as_python_floats_are_rejected(decided, bad):
    """A certificate given as a dict may hold nan and infinity where JSON cannot: in any row of the inputs
    (digest recomputed) or of the norm witnesses, first or last, next to an overflowing sum or not, the
    checker rejects it as malformed (ball() refuses them), never confirms it nor raises."""
    _, _, result = decided
    cert = result.certificate
    rows = [("inputs",) + path for path in float_rows(cert["inputs"])]
    # a witness refined past binary64 (certify.core.refine) states rows of exact texts, beside which a float is read too
    rows += [("witness",) + path for path in float_rows(cert["witness"], kinds=(float, str))]
    assert any(path[0] == "witness" for path in rows)  # the witnesses' rows are read by matrix_mat
    for path in rows:
        for where in (0, -1):
            edited = copy.deepcopy(cert)
            at(edited, path)[where] = bad
            confirmation = checker.verify(redigest(edited))
            assert not confirmation.ok and confirmation.message.startswith("malformed"), (path, confirmation)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_in_a_configuration_given_as_a_dict_are_bad_input(decided, bad):
    """The engine's one-pass reading sees nan and infinity in any row of a configuration dict, as the
    general reading does: bad input, one line, never a value."""
    data = decided[0]
    for path in float_rows(data):
        for where in (0, -1):
            edited = copy.deepcopy(data)
            at(edited, path)[where] = bad
            with pytest.raises(BadInput) as raised:
                config.load(edited)
            assert "\n" not in str(raised.value), path
