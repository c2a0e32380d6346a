"""Norm witnesses as binary64 blocks: a basis of more than numbers.BLOCK_ENTRIES entries is stated as the inputs'
large matrices are ({"binary64": base64, "shape": [rows, cols]}), read back exactly by engine and checker; a
certificate stating it as JSON numbers (as earlier versions wrote every witness) is still confirmed; a malformed
block is rejected in one clear line, never a traceback, never confirmed.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import certify_checker as checker
from certify import engine
from certify.core import numbers, spectral
from certify.engine import certificate
from certify_checker import schema

ROOT = Path(__file__).resolve().parent.parent


def _config(n: int, d: int, seed: int = 0, **layer) -> dict:
    rng = np.random.default_rng(seed)
    return {"X": rng.standard_normal((n, d)).tolist(), "layers": [{"A": (rng.standard_normal((d, d)) / d).tolist(),
                                                                   **layer}]}


@pytest.fixture(scope="module")
def large_cert() -> dict:
    """collapse.global on 6 tokens of d = 12: A's witness is 12 x 12, 144 entries, beyond the block threshold."""
    cert = engine.check(_config(6, 12), claim="collapse.global").certificate
    assert cert is not None
    return cert


def _numbers_form(cert: dict) -> dict:
    """The certificate with every witness basis as rows of JSON numbers: the form earlier versions wrote."""
    out = copy.deepcopy(cert)
    for w in out["witness"].values():
        if "basis" in w:
            w["basis"] = schema.expanded(w["basis"])
    return out


def _hard_values(rows: int, cols: int) -> np.ndarray:
    """Entries whose decimal text would need care: -0.0, subnormals, the extremes of binary64, 0.1, 1/3."""
    special = [-0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, -1.0, 2.0 ** -1074]
    values = np.random.default_rng(7).standard_normal(rows * cols)
    values[:len(special)] = special
    return values.reshape(rows, cols)


def test_a_block_round_trips_exactly_in_engine_and_checker():
    basis = _hard_values(9, 9)  # 81 entries: a block
    w = spectral.NormWitness(basis=basis, top=basis[:, 0].copy())
    stated = certificate.witness_table({"A0": w})["A0"]
    assert set(stated["basis"]) == {"binary64", "shape"} and stated["basis"]["shape"] == [9, 9]
    assert stated["top"] == basis[:, 0].tolist()  # a vector stays numbers, as the inputs' vectors do
    text = json.loads(json.dumps(stated))  # through JSON text, as a certificate file goes
    mine = np.array(schema.expanded(text["basis"]))
    engine_side = numbers.parse_matrix(text["basis"], "basis").array
    for decoded in (mine, engine_side):  # bit for bit: -0.0 and the subnormals too
        assert decoded.tobytes() == basis.astype("<f8").tobytes()


def test_a_small_witness_stays_numbers():
    """8 x 8 is within the threshold: the table is as before, rows of JSON numbers."""
    basis = _hard_values(8, 8)
    stated = certificate.witness_table({"A0": spectral.NormWitness(basis=basis, top=basis[0].copy())})["A0"]
    assert stated["basis"] == basis.tolist()
    cert = engine.check(_config(8, 4), claim="collapse.global").certificate
    assert isinstance(cert["witness"]["A0"]["basis"], list) and len(cert["witness"]["A0"]["basis"]) == 4


def test_a_large_certificate_states_its_witness_as_a_block_and_is_confirmed(large_cert):
    basis = large_cert["witness"]["A0"]["basis"]
    assert set(basis) == {"binary64", "shape"} and basis["shape"] == [12, 12]
    assert checker.verify(large_cert).ok
    old = _numbers_form(large_cert)
    assert len(json.dumps(large_cert["witness"])) < len(json.dumps(old["witness"])) * 0.7


def test_a_certificate_with_witnesses_as_numbers_is_still_confirmed(large_cert):
    """The witness is outside the digest: the earlier form's certificate has the same digest and is confirmed."""
    old = _numbers_form(large_cert)
    assert isinstance(old["witness"]["A0"]["basis"][0][0], float)
    assert old["inputs_sha256"] == large_cert["inputs_sha256"]
    assert checker.verify(old).ok and checker.verify_text(json.dumps(old)).ok


def test_a_thin_head_with_a_block_witness_is_priced_through_its_reduction():
    """_thin reads a block's stated shape, which the decoding holds it to: the same route as the numbers' form."""
    rng = np.random.default_rng(3)
    head = {"W_Q": rng.standard_normal((24, 9)).tolist(), "W_K": rng.standard_normal((24, 9)).tolist(), "d_k": 9}
    cert = engine.check({"X": rng.standard_normal((5, 24)).tolist(), "layers": [head]},
                        claim="collapse.global").certificate
    assert cert["witness"]["A0"]["basis"]["shape"] == [9, 9]
    specs = cert["inputs"]["layers"]
    assert checker._thin(cert, specs, 24) == 9 == checker._thin(_numbers_form(cert), specs, 24)
    assert checker.verify(cert).ok


def _block(values, shape) -> dict:
    return {"binary64": base64.b64encode(struct.pack(f"<{len(values)}d", *values)).decode("ascii"), "shape": shape}


MALFORMED = {
    "short": lambda b: {**b, "binary64": b["binary64"][:-12]},  # 9 bytes fewer: a whole base64 group and one more
    "long": lambda b: {**b, "binary64": b["binary64"] + "AAAAAAAAAAA="},
    "not-base64": lambda b: {**b, "binary64": "*" + b["binary64"][1:]},
    "not-ascii": lambda b: {**b, "binary64": "é" + b["binary64"][1:]},
    "nan": lambda b: _block([math.nan] + [0.0] * 143, [12, 12]),
    "inf": lambda b: _block([0.0] * 143 + [-math.inf], [12, 12]),
    "shape-transposed-wrong": lambda b: _block([1.0] * 132, [11, 12]),  # consistent bytes, not 12 x 12
    "shape-of-three": lambda b: {**b, "shape": [12, 12, 1]},
    "shape-negative": lambda b: {**b, "shape": [-12, -12]},
    "shape-bool": lambda b: {**b, "shape": [True, 144]},
    "shape-text": lambda b: {**b, "shape": "12x12"},
    "data-not-text": lambda b: {**b, "binary64": 12},
    "extra-key": lambda b: {**b, "dtype": "<f8"},
}


@pytest.mark.parametrize("name", MALFORMED)
def test_a_malformed_block_is_rejected(large_cert, name):
    forged = copy.deepcopy(large_cert)
    forged["witness"]["A0"]["basis"] = MALFORMED[name](forged["witness"]["A0"]["basis"])
    result = checker.verify_text(json.dumps(forged))
    assert not result.ok and not result.refused, result
    assert "\n" not in result.message and "Traceback" not in result.message


@pytest.mark.parametrize("name", ["not-base64", "nan", "short"])
def test_a_malformed_block_is_named_as_such(large_cert, name):
    forged = copy.deepcopy(large_cert)
    forged["witness"]["A0"]["basis"] = MALFORMED[name](forged["witness"]["A0"]["basis"])
    message = checker.verify(forged).message
    assert "malformed" in message and "binary64 block" in message, message


def test_verify_rejects_a_malformed_block_in_one_line(large_cert, tmp_path):
    forged = copy.deepcopy(large_cert)
    forged["witness"]["A0"]["basis"] = MALFORMED["nan"](forged["witness"]["A0"]["basis"])
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    done = subprocess.run([sys.executable, "-m", "certify", "verify", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    output = (done.stdout + done.stderr).strip()
    assert done.returncode == 1 and output.count("\n") == 0 and "not finite" in output, done


def test_a_block_that_decodes_to_a_poor_witness_costs_tightness_not_soundness(large_cert):
    """The identity as the basis is a valid witness, only a looser one: the checker's enclosure of a widens past
    the tight one the certificate states, which is then rejected, never confirmed."""
    forged = copy.deepcopy(large_cert)
    forged["witness"]["A0"] = {"basis": _block(np.eye(12).ravel().tolist(), [12, 12]), "top": [1.0] + [0.0] * 11}
    assert not checker.verify(forged).ok  # the stated a was tight: the identity's looser bound does not fit in it
