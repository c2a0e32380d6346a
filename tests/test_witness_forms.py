"""The forms of a certificate's norm witnesses: a wide matrix's witness is of its transpose (basis square on
its rows, "transposed": true), a witness stated once is referred to ({"same_as": NAME}), and the form
certificates had before both (a basis square on the columns, every name in full) is still confirmed.

Each enclosure is checked against mpmath at 60 digits; each forged form must be rejected.
"""

from __future__ import annotations

import copy
import json

import mpmath
import numpy as np
import pytest
from flint import arb, arb_mat, ctx
from mpmath import mp

import certify_checker as checker
from certify import engine
from certify.core import spectral
from certify.suite import thesis_cases as thesis
from certify_checker import forward, schema

SHAPES = [(1, 4), (2, 5), (3, 7), (3, 3), (5, 2), (4, 1)]  # wide, square and tall


def main_witness(A_float: np.ndarray) -> spectral.NormWitness:
    """The witness certificates stated before the transposed form: A's right singular basis, square on its
    columns whatever its shape (the code path certify took until then)."""
    _, singular, wt = np.linalg.svd(A_float, full_matrices=A_float.shape[0] < A_float.shape[1])
    return spectral.NormWitness(basis=np.ascontiguousarray(wt.T), top=wt[0].copy(), estimate=float(singular[0]))


def mp_norm(A: np.ndarray):
    return max(mpmath.svd_r(mp.matrix(A.tolist()), compute_uv=False))


def contains(x: arb, value) -> bool:
    return mp.mpf(x.lower().str(80, radius=False)) <= value <= mp.mpf(x.upper().str(80, radius=False))


def as_dict(w: spectral.NormWitness) -> dict:
    return {"basis": w.basis.tolist(), "top": w.top.tolist(), **({"transposed": True} if w.transposed else {})}


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_both_forms_enclose_the_norm_in_engine_and_checker(shape):
    """The new witness is of A^T exactly when A is wide, square on the smaller side; it and main's (square on
    the columns) enclose mpmath's ||A||_2 tightly, in the engine and in the checker."""
    rows, cols = shape
    A = np.random.default_rng(rows * 10 + cols).normal(size=shape)
    new, old = spectral.witness(A), main_witness(A)
    assert new.transposed == (rows < cols) and new.basis.shape == (min(shape),) * 2 and new.top.shape == (min(shape),)
    assert not old.transposed and old.basis.shape == (cols, cols)
    with mp.workdps(60), ctx.workprec(53):
        true = mp_norm(A)
        for w in (new, old):
            for enclosure in (spectral.enclose(arb_mat(A.tolist()), w), forward.spectral_norm(A.tolist(), as_dict(w))):
                assert contains(enclosure, true) and enclosure.rad() < 1e-12 * true, (w.transposed, enclosure)


def test_a_transposed_witness_is_read_only_on_a_wide_matrix():
    A = np.random.default_rng(3).normal(size=(2, 5))
    stated = as_dict(spectral.witness(A))
    with ctx.workprec(53):
        assert forward.spectral_norm(A.tolist(), stated).is_finite()
        for flag in (False, 1, "true"):
            with pytest.raises(ValueError):
                forward.spectral_norm(A.tolist(), {**stated, "transposed": flag})
        with pytest.raises(ValueError):  # A^T (tall) with the flag: its own witness would be square on 2
            forward.spectral_norm(A.T.tolist(), stated)
        square = as_dict(spectral.witness(A @ A.T))
        with pytest.raises(ValueError):
            forward.spectral_norm((A @ A.T).tolist(), {**square, "transposed": True})


# --- ffn.lipschitz: W1 is hidden x d (tall), W2 d x hidden (wide) -----------------------------------------------

FFN = thesis.ffn("gelu", False, n=5, d=3, hidden=7)


@pytest.fixture(scope="module")
def ffn_cert():
    return engine.check(FFN, claim="ffn.lipschitz").certificate


@pytest.fixture(scope="module")
def ffn_main_cert():
    """The certificate main's witness path writes (the witness of W2 square on its 7 columns, no flag)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spectral, "witness", main_witness)
        return engine.check(FFN, claim="ffn.lipschitz").certificate


def mp_lipschitz():
    """||W2||_2 Lip(GELU) ||W1||_2 in mpmath, Lip(GELU) = Phi(sqrt 2) + sqrt 2 phi(sqrt 2)."""
    W1, W2 = (np.array([[float(v) for v in row] for row in FFN["ffn"][key]]) for key in ("W1", "W2"))
    s = mp.sqrt(2)
    gelu = mp.ncdf(s) + s * mp.npdf(s)
    return mp_norm(W2) * gelu * mp_norm(W1)


def test_the_new_form_is_stated_and_confirmed(ffn_cert):
    witness = ffn_cert["witness"]
    assert witness["W2_0"]["transposed"] is True and len(witness["W2_0"]["basis"]) == 3 == len(witness["W2_0"]["top"])
    assert "transposed" not in witness["W1_0"] and len(witness["W1_0"]["basis"]) == 3
    assert checker.verify(ffn_cert).ok, checker.verify(ffn_cert).message
    with mp.workdps(60):
        assert contains(arb(ffn_cert["values"]["layers"][0]["L"]), mp_lipschitz())


def test_main_s_form_is_still_confirmed(ffn_main_cert):
    W2 = ffn_main_cert["witness"]["W2_0"]
    assert set(W2) == {"basis", "top"} and len(W2["basis"]) == 7  # the old form: square on W2's columns
    assert checker.verify(ffn_main_cert).ok, checker.verify(ffn_main_cert).message
    with mp.workdps(60):
        assert contains(arb(ffn_main_cert["values"]["layers"][0]["L"]), mp_lipschitz())


def _poor(w):  # a basis that is orthogonal but not singular: the checker's upper bound loosens past the stated L
    w["basis"], w["top"] = np.eye(3).tolist(), [1.0, 0.0, 0.0]


def _below(cert):
    stated = arb(cert["values"]["layers"][0]["L"])
    cert["values"]["layers"][0]["L"] = (stated * arb("0.999")).str(30, radius=True)


@pytest.mark.parametrize("edit", [
    lambda c: c["witness"]["W2_0"].pop("transposed"),  # read as W2's own witness: the wrong size
    lambda c: c["witness"]["W2_0"].update(transposed=False),
    lambda c: c["witness"]["W2_0"].update(transposed="yes"),
    lambda c: c["witness"]["W1_0"].update(transposed=True),  # W1 is tall: its own witness is the smaller
    lambda c: c["witness"]["A0"].update(transposed=True),  # square
    lambda c: c["witness"]["W2_0"].update(basis=[row[:2] for row in c["witness"]["W2_0"]["basis"][:2]]),
    lambda c: c["witness"]["W2_0"]["top"].append(0.0),
    lambda c: c["witness"]["W2_0"].update(basis=np.eye(7).tolist(), top=[1.0] + [0.0] * 6),  # main's shape, flagged
    lambda c: c["witness"]["W2_0"].update(basis=[[2.0] * 3] * 3),  # not nearly orthogonal
    lambda c: _poor(c["witness"]["W2_0"]),
    _below,  # a stated L (||W2|| ||W1|| Lip) below the true one
], ids=["flag-dropped", "flag-false", "flag-text", "flag-on-tall", "flag-on-square", "basis-small", "top-long",
        "basis-of-columns", "not-orthogonal", "poor-basis", "L-below"])
def test_a_wrong_or_inconsistent_new_form_is_rejected(ffn_cert, edit):
    forged = copy.deepcopy(ffn_cert)
    edit(forged)
    assert not checker.verify(forged).ok


def test_witnesses_are_no_wider_than_the_limits_price(ffn_cert, ffn_main_cert):
    """The limits price a norm's arrays and products at width d (certify.core.limits.NORM_BALLS, norm_count):
    every witness of the new form is at most d x d, where main's W2 witness was hidden x hidden."""
    widths = [len(w["basis"]) for w in ffn_cert["witness"].values()]
    assert max(widths) == 3 and max(len(w["basis"]) for w in ffn_main_cert["witness"].values()) == 7
    assert len(json.dumps(ffn_cert["witness"])) < len(json.dumps(ffn_main_cert["witness"]))


# --- value.bounded: one V (and here one A) through the stack ------------------------------------------------------

STACK = thesis.jordan_stack(3)


@pytest.fixture(scope="module")
def stack_cert():
    return engine.check(STACK, claim="value.bounded").certificate


def expanded(cert: dict) -> dict:
    """The certificate with every reference replaced by a copy of the witness it names: main's form."""
    out = copy.deepcopy(cert)
    out["witness"] = {name: copy.deepcopy(cert["witness"][w["same_as"]]) if "same_as" in w else w
                      for name, w in cert["witness"].items()}
    return out


def test_each_distinct_witness_is_stated_once(stack_cert):
    witness = stack_cert["witness"]
    full = sorted(name for name, w in witness.items() if "same_as" not in w)
    assert full == ["A0", "V0^1", "V0^2", "V0^3"]
    assert witness["A2"] == {"same_as": "A0"} and witness["V1^3"] == {"same_as": "V0^3"}
    assert checker.verify(stack_cert).ok, checker.verify(stack_cert).message
    assert checker.verify(expanded(stack_cert)).ok  # every name in full, as main writes it


@pytest.mark.parametrize("edit", [
    lambda w: w.update({"A1": {"same_as": "A7"}}),  # names no witness
    lambda w: w.update({"A1": {"same_as": "A1"}}),  # itself
    lambda w: w.update({"V0^1": {"same_as": "V1^1"}}),  # a loop (V1^1 refers to V0^1)
    lambda w: w.update({"A2": {"same_as": "A1"}}),  # a chain: A1 is itself a reference
    lambda w: w.update({"A1": {"same_as": "A0", "top": [1.0, 0.0]}}),  # a field beside it, never read
    lambda w: w.update({"A1": {"same_as": 0}}),
    lambda w: w.update({"V9^1": {"same_as": "V0^1"}}),  # a name nothing reads
], ids=["missing", "itself", "loop", "chain", "extra-field", "not-a-name", "unread"])
def test_a_malformed_reference_is_rejected(stack_cert, edit):
    forged = copy.deepcopy(stack_cert)
    edit(forged["witness"])
    assert not checker.verify(forged).ok


def test_a_head_read_through_a_reference_is_enclosed_again_when_it_differs(monkeypatch):
    """The checker reuses a layer's a only for the very witness and the same head: a layer whose A differs
    (value.bounded lets A change) but refers to layer 0's witness is enclosed from it afresh (and the certificate
    then stands or falls by its own enclosure, never by layer 0's)."""
    from certify_checker import norms
    stack = {**STACK, "layers": [dict(layer) for layer in STACK["layers"]]}  # one dict three times: three
    # its columns swapped: other right singular vectors (2 A would have had the same)
    stack["layers"][1]["A"] = [row[::-1] for row in STACK["layers"][0]["A"]]
    cert = engine.check(stack, claim="value.bounded").certificate
    assert "same_as" not in cert["witness"]["A1"] and cert["witness"]["A2"] == {"same_as": "A0"}
    calls = []
    query_key_norm = norms.query_key_norm
    monkeypatch.setattr(norms, "query_key_norm", lambda *args: calls.append(args[0]) or query_key_norm(*args))
    assert checker.verify(cert).ok
    assert len(calls) == 2  # layers 0 and 1; layer 2 has layer 0's head and witness
    forged = copy.deepcopy(cert)
    forged["witness"]["A1"] = {"same_as": "A0"}  # layer 1's norm from layer 0's witness: a looser enclosure
    calls.clear()
    assert not checker.verify(forged).ok and calls[:2] == [forged["inputs"]["layers"][0], forged["inputs"]["layers"][1]]


def test_a_repeated_thin_head_is_priced_through_its_reference():
    """Layers with one thin head (W_Q, W_K of d x d_k) state its d_k x d_k witness once; the checker prices
    every layer by the route that witness takes (d_k x d_k), as for every name stated in full."""
    rng = np.random.default_rng(5)
    head = {"W_Q": rng.normal(size=(6, 2)).tolist(), "W_K": rng.normal(size=(6, 2)).tolist(), "d_k": 2}
    cfg = {"X": rng.normal(size=(4, 6)).tolist(), "layers": [head] * 3}
    cert = engine.check(cfg, claim="collapse.trajectory").certificate
    assert cert["witness"]["A2"] == {"same_as": "A0"} and len(cert["witness"]["A0"]["basis"]) == 2
    specs = cert["inputs"]["layers"]
    assert checker._thin(cert, specs, 6) == 2 == checker._thin(expanded(cert), specs, 6)
    assert checker.verify(cert).ok

@pytest.mark.slow
def test_an_ffn_of_real_size_states_its_witnesses_on_the_smaller_side():
    """128 tokens of d = 384 through an FFN of hidden width 1024 (as `certify sample --ffn relu --hidden 1024`
    draws it): decided and confirmed with every witness 384 x 384 (main's W2 witness was 1024 x 1024, a
    certificate of 47 MB, this one of about 22 MB; 15 MB since a basis is a binary64 block, 10.5 MB of it the inputs)."""
    from certify.search import samplers
    parts = samplers.LayerParts(ffn="relu", hidden=1024).validated(384)
    cfg = samplers.sample("gaussian", 128, 384, 0, 0, parts=parts).config
    cert = engine.check(cfg, claim="ffn.lipschitz").certificate  # confirmed by the checker, or None
    assert cert is not None and cert["witness"]["W2_0"]["transposed"] is True
    assert all(len(schema.expanded(w["basis"])) == 384 == len(w["top"]) for w in cert["witness"].values())


def test_a_head_scaled_by_another_beta_is_enclosed_again():
    """Layer 1 is layer 0's A under beta = 3, its witness stated as layer 0's (same_as: beta A has A's singular
    vectors, and a witness is outside the digest): its a, 3 times layer 0's, is enclosed afresh.  Reusing layer
    0's a (a cache blind to beta) would take a norm 3 times too small for that layer."""
    stack = {**STACK, "layers": [dict(layer) for layer in STACK["layers"]]}
    stack["layers"][1]["beta"] = 3
    cert = engine.check(stack, claim="value.bounded").certificate
    cert["witness"]["A1"] = {"same_as": "A0"}
    confirmation = checker.verify(cert)
    assert confirmation.ok, confirmation.message
    a = [arb(layer["a"].strip("[]").split("+/-")[0]) for layer in cert["values"]["layers"][:2]]
    assert abs(a[1] / a[0] - 3) < 1e-6
