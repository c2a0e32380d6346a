"""Attention-head certificates (certify.studies.heads, certify_checker/head.py): what `certify model`
and `certify init` print as decided is confirmed by the checker; tampering is rejected; what the
checker refuses is reported undecided."""

from __future__ import annotations

import base64
import copy
import struct

import numpy as np
import pytest
from flint import arb, ctx

import certify_checker
from certify.core.thin_norm import ball_array, ball_matrix, product_norm_witnessed
from certify.engine import certificate
from certify.studies import heads

BITS = 64


def sample_head(keys=None, biases=False, seed=4, n=5, d=8, k=3) -> heads.Head:
    rng = np.random.default_rng(seed)
    return heads.Head(X=rng.normal(size=(n, d)), W_Q=rng.normal(scale=0.4, size=(d, k)),
                      W_K=rng.normal(scale=0.4, size=(d, k)), b_Q=rng.normal(size=k) if biases else None,
                      b_K=rng.normal(size=k) if biases else None, keys=keys)


def confirmed_steps(head: heads.Head, steps=("dobrushin", "tau", "global"), with_regime=True) -> heads.Steps:
    with ctx.workprec(BITS):
        norm, route, witness = product_norm_witnessed(ball_matrix(head.W_Q), ball_matrix(head.W_K))
        found = heads.values(head, ball_array(head.X), norm / arb(head.W_Q.shape[1]).sqrt())
        return heads.confirm_steps(head, found, steps, route, witness, BITS, with_regime=with_regime)


@pytest.mark.parametrize("head", [sample_head(), sample_head(keys=np.array([1, 1, 0, 1, 0], dtype=bool), biases=True)])
def test_decided_steps_are_confirmed_by_the_checker(head):
    steps = confirmed_steps(head)
    assert steps.outcomes == {"dobrushin": "holds", "tau": "holds", "global": "holds"}
    assert steps.regime == "informative" and steps.checker.startswith("confirmed")
    assert certify_checker.verify(steps.certificate).ok  # and again from scratch, as `certify verify` would


TAMPERINGS = {
    "a step turned round": lambda c: c["inputs"]["steps"].update(tau="violated"),
    "its claim turned round too": lambda c: (c["inputs"]["steps"].update(tau="violated"),
                                             c["claims"].__setitem__(1, "tau(P) > 1 - exp(-a D(X)^2)")),
    "another regime": lambda c: c["inputs"]["steps"].update(regime="underflowed"),
    "a token moved": lambda c: c["inputs"]["X"][0].__setitem__(0, c["inputs"]["X"][0][0] + 0.5),
    "a stated value": lambda c: c["values"].update(tau="[0.5 +/- 1e-30]"),
    "no key left": lambda c: c["inputs"].update(keys=[0] * 5),
    "an unknown route": lambda c: c["witness"].update(route="guess"),
    "a precision below float64": lambda c: c.update(precision=20),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERINGS))
def test_tampered_head_certificates_are_rejected(tamper):
    cert = copy.deepcopy(confirmed_steps(sample_head()).certificate)
    TAMPERINGS[tamper](cert)
    assert not certify_checker.verify(cert).ok


def _restamped(cert: dict) -> dict:
    """cert with its digest made anew, so that the checker judges what an edit means, not the digest."""
    from certify_checker.counterexample import digest
    cert["inputs_sha256"] = digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    return cert


def _block_entries(block: dict) -> list:
    return list(struct.unpack(f"<{block['shape'][0] * block['shape'][1]}d", base64.b64decode(block["binary64"])))


def _with_entries(block: dict, entries: list) -> dict:
    return {"binary64": base64.b64encode(struct.pack(f"<{len(entries)}d", *entries)).decode(), "shape": block["shape"]}


def test_wide_heads_state_binary64_blocks_the_checker_reads_exactly():
    """A head of more than 64 numbers a matrix (every head of `certify model`) states X, W_Q, W_K and the witness's
    basis as binary64 blocks, whose JSON text the digests read in a fraction of the time of 28,000 numbers; the
    checker confirms it from the blocks, prices it as the same head stated as rows, and rejects a moved token or a
    block whose bytes are not its shape's, even under a digest made anew."""
    from certify_checker import head as checker_head

    head = sample_head(n=6, d=24, k=9)
    cert = confirmed_steps(head).certificate
    inputs = cert["inputs"]
    assert all(set(inputs[name]) == {"binary64", "shape"} for name in ("X", "W_Q", "W_K"))
    assert set(cert["witness"]["basis"]) == {"binary64", "shape"}
    assert _block_entries(inputs["W_K"]) == head.W_K.ravel().tolist()  # exactly the float64 weights, row by row
    assert certify_checker.verify(cert).ok
    as_rows = copy.deepcopy(cert)
    as_rows["inputs"].update(X=head.X.tolist(), W_Q=head.W_Q.tolist(), W_K=head.W_K.tolist())
    assert certify_checker.verify(_restamped(as_rows)).ok
    assert checker_head.work(cert) == checker_head.work(as_rows) > 0
    moved = copy.deepcopy(cert)
    entries = _block_entries(moved["inputs"]["X"])
    entries[0] += 0.5
    moved["inputs"]["X"] = _with_entries(moved["inputs"]["X"], entries)
    assert not certify_checker.verify(_restamped(moved)).ok
    short = copy.deepcopy(cert)
    short["inputs"]["W_Q"]["shape"] = [24, 8]
    found = certify_checker.verify(_restamped(short))
    assert not found.ok and "bytes" in found.message


def test_the_checker_computes_a_heads_norm_once_for_its_weights(monkeypatch):
    """`certify model --corpus` states each head's weights again for every sentence: the checker computes their norm
    once a process (for the weights, witness and precision as stated) and judges each certificate with it, a forged
    value of a as any other; other weights, or a bound on what it keeps, mean another computation."""
    from certify_checker import head as checker_head
    from certify_checker import norms

    computed = []
    thin = norms.thin_product_norm
    monkeypatch.setattr(norms, "thin_product_norm", lambda *args: computed.append(1) or thin(*args))
    first, again = sample_head(n=6, d=24, k=9), sample_head(n=6, d=24, k=9)
    other_tokens = heads.Head(X=np.random.default_rng(7).normal(size=(7, 24)), W_Q=first.W_Q, W_K=first.W_K)
    certs = [confirmed_steps(h).certificate for h in (first, again, other_tokens)]  # (confirmed as they are made)
    assert certs[1]["inputs"]["W_K"] == certs[2]["inputs"]["W_K"] and certs[0]["witness"] == certs[2]["witness"]
    monkeypatch.setattr(checker_head, "_NORMS", {})  # a process that has seen none of them
    computed.clear()
    assert all(certify_checker.verify(cert).ok for cert in certs) and len(computed) == 1
    forged = copy.deepcopy(certs[2])
    forged["values"]["a"] = "[1.0 +/- 1e-30]"
    assert not certify_checker.verify(forged).ok and len(computed) == 1
    other_weights = confirmed_steps(sample_head(n=6, d=24, k=9, seed=5)).certificate
    assert certify_checker.verify(other_weights).ok and len(computed) == 2
    monkeypatch.setattr(checker_head, "KEPT_NORMS", 1)
    third = confirmed_steps(sample_head(n=6, d=24, k=9, seed=6)).certificate
    computed.clear()
    assert certify_checker.verify(third).ok and len(checker_head._NORMS) == 1
    assert certify_checker.verify(certs[0]).ok and len(computed) == 1  # dropped: computed anew


def test_a_kept_norm_serves_no_other_weights_nor_precision(monkeypatch):
    """The norm kept for a confirmed head is not taken for a certificate that states its values beside other weights
    (the same block's shape, other bytes) or at another precision: each is computed anew, and the forgery rejected."""
    from certify_checker import head as checker_head
    from certify_checker import norms

    computed = []
    thin = norms.thin_product_norm
    monkeypatch.setattr(norms, "thin_product_norm", lambda *args: computed.append(1) or thin(*args))
    monkeypatch.setattr(checker_head, "_NORMS", {})
    cert = confirmed_steps(sample_head(n=6, d=24, k=9)).certificate
    assert certify_checker.verify(cert).ok and len(computed) == 1
    doubled = copy.deepcopy(cert)
    doubled["inputs"]["W_Q"] = _with_entries(cert["inputs"]["W_Q"], [2 * w for w in _block_entries(cert["inputs"]["W_Q"])])
    assert not certify_checker.verify(_restamped(doubled)).ok and len(computed) == 2
    coarser = copy.deepcopy(cert)
    coarser["precision"] = 53
    certify_checker.verify(_restamped(coarser))
    assert len(computed) == 3


def test_a_kept_norm_serves_no_other_key_weights_that_give_the_same_scores(monkeypatch):
    """Tokens whose last coordinate is 0 do not see W_K's last row: moved, the scores, P and every value but a are
    those of the confirmed head, while ||W_Q W_K^T|| changes.  A certificate stating the confirmed head's a beside
    the moved W_K (its digest made anew) is rejected, though a norm kept for the confirmed weights would agree."""
    from certify_checker import head as checker_head

    monkeypatch.setattr(checker_head, "_NORMS", {})
    head = sample_head(n=6, d=24, k=9)
    head.X[:, -1] = 0.0
    cert = confirmed_steps(head).certificate
    assert certify_checker.verify(cert).ok
    moved = copy.deepcopy(cert)
    entries = _block_entries(cert["inputs"]["W_K"])
    entries[-9:] = [w + 4.0 for w in entries[-9:]]  # the last of 24 rows of 9
    moved["inputs"]["W_K"] = _with_entries(cert["inputs"]["W_K"], entries)
    with ctx.workprec(BITS):  # the norm has changed: the stated a is not the moved weights'
        W_K = np.array(entries).reshape(24, 9)
        norm, _, _ = product_norm_witnessed(ball_matrix(head.W_Q), ball_matrix(W_K))
        assert not norm.overlaps(product_norm_witnessed(ball_matrix(head.W_Q), ball_matrix(head.W_K))[0])
    found = certify_checker.verify(_restamped(moved))
    assert not found.ok and "stated a " in found.message, found.message


def _hostile_blocks(cert: dict) -> dict:
    """Edits of a wide head's certificate that put a binary64 block (or blocks) where none belongs."""
    rows = [_with_entries({"shape": [1, 24]}, _block_entries(cert["inputs"]["X"])[24 * i:24 * (i + 1)])
            for i in range(6)]
    column = _with_entries({"shape": [9, 1]}, [1.0] * 9)
    return {
        "a bias as a k x 1 block": lambda c: c["inputs"].update(b_Q=column),
        "the keys as an n x 1 block": lambda c: c["inputs"].update(keys=_with_entries({"shape": [6, 1]}, [1.0] * 6)),
        "the witness's top as a k x 1 block": lambda c: c["witness"].update(top=column),
        "the witness as a block": lambda c: c.update(witness=column),
        "the steps as a block": lambda c: c["inputs"].update(steps=column),
        "the tokens as a list of row blocks": lambda c: c["inputs"].update(X=rows),
        "the tokens as rows of one block each": lambda c: c["inputs"].update(X=[[row] for row in rows]),
        "a block nested in a block": lambda c: c["inputs"].update(X={"binary64": column, "shape": [6, 24]}),
        "more bytes than the stated shape": lambda c: c["inputs"]["X"].update(shape=[6, 12]),
        "a NaN among a block's bytes": lambda c: c["inputs"].update(
            W_K=_with_entries(c["inputs"]["W_K"], [float("nan")] + _block_entries(c["inputs"]["W_K"])[1:])),
    }


def test_blocks_where_no_block_belongs_are_rejected_as_malformed():
    """A block decodes to rows of floats only where a matrix is read: in a vector, the keys, the witness's top, the
    witness itself, a list of rows or another block it is malformed (never read as some other head), whatever the
    work estimate made of its stated shapes (a list of blocks is priced as 2 x 2)."""
    cert = confirmed_steps(sample_head(n=6, d=24, k=9)).certificate
    assert certify_checker.verify(cert).ok
    for name, edit in _hostile_blocks(cert).items():
        forged = copy.deepcopy(cert)
        edit(forged)
        found = certify_checker.verify(_restamped(forged))
        assert not found.ok and not found.refused and found.message.startswith("malformed"), (name, found.message)
    as_block = copy.deepcopy(cert)
    _hostile_blocks(cert)["the witness as a block"](as_block)
    assert "the witness must be exactly" in certify_checker.verify(_restamped(as_block)).message


def test_a_block_stating_a_huge_shape_is_refused_before_it_is_decoded():
    """The limits price a block by its stated shape before its bytes are checked: a huge shape with no data is refused
    (neither confirmed nor rejected), for a head's weights and tokens and for centred tokens alike."""
    cert = confirmed_steps(sample_head(n=6, d=24, k=9)).certificate
    for name, shape in (("X", [1000, 1000]), ("X", [2 ** 62, 1]), ("W_Q", [24, 10 ** 9])):
        forged = copy.deepcopy(cert)
        forged["inputs"][name] = {"binary64": "", "shape": shape}
        found = certify_checker.verify(_restamped(forged))
        assert found.refused and not found.ok, (name, shape, found.message)
    rank = rank_certificate(np.random.default_rng(3).normal(size=(6, 20)), 5)
    rank["inputs"]["X"] = {"binary64": "", "shape": [4000, 4000]}
    found = certify_checker.verify(_restamped(rank))
    assert found.refused and not found.ok


def test_what_the_checker_refuses_is_undecided(monkeypatch):
    monkeypatch.setattr(certificate, "confirm", lambda cert: certify_checker.Confirmation(False, "refused"))
    steps = confirmed_steps(sample_head())
    assert set(steps.outcomes.values()) == {"undecided"} and steps.regime == "undecided"
    assert steps.checker == "refused"


def test_an_equality_stays_undecided_and_is_not_stated():
    """n = 2 makes D(P X) = tau(P) D(X) exact: step dobrushin cannot be decided; the others are."""
    steps = confirmed_steps(sample_head(n=2), with_regime=False)
    assert steps.outcomes["dobrushin"] == "undecided" and steps.outcomes["global"] == "holds"
    assert set(steps.certificate["inputs"]["steps"]) == {"tau", "global"}


def rank_certificate(X: np.ndarray, rank: int) -> dict:
    claim = f"the centred tokens X - 1 xbar^T of inputs.X have rank {rank} = min(n - 1, d)"
    return certificate.named("centred-rank", [claim], "certified", {"X": X.tolist()}, {}, {}, 64)


def test_the_model_rank_is_confirmed_by_the_checker():
    """`certify model`'s 'certified full rank': the checker's interval Cholesky of the centred Gram."""
    from certify.studies.models.configuration import configuration_stats

    X = np.random.default_rng(1).normal(size=(5, 8))
    with ctx.workprec(64):
        assert configuration_stats(X).rank_certified
    assert certify_checker.verify(rank_certificate(X, 4)).ok
    wide = np.random.default_rng(2).normal(size=(7, 3))  # n - 1 > d: rank d
    assert certify_checker.verify(rank_certificate(wide, 3)).ok
    collinear = np.outer(np.arange(5.0), np.ones(8))  # all tokens on one line: centred rank 1
    assert not certify_checker.verify(rank_certificate(collinear, 4)).ok
    with ctx.workprec(64):
        assert not configuration_stats(collinear).rank_certified
    assert not certify_checker.verify(rank_certificate(X, 3)).ok  # the claim must state min(n - 1, d)


def test_the_models_rank_certificate_states_wide_tokens_as_a_block(monkeypatch):
    """`certify model` states a layer's tokens (n x 384) as a binary64 block; the checker confirms the rank from it,
    refuses it for collinear tokens, and prices it as the same tokens stated as rows."""
    from certify.studies.models import configuration
    from certify_checker import rank as checker_rank

    made, named = [], certificate.named
    monkeypatch.setattr(certificate, "named", lambda *args: made.append(named(*args)) or made[-1])
    X = np.random.default_rng(3).normal(size=(6, 20))
    with ctx.workprec(64):
        assert configuration._checker_confirms_rank(X, 5)
        assert not configuration._checker_confirms_rank(np.outer(np.arange(6.0), np.ones(20)), 5)
    assert set(made[0]["inputs"]["X"]) == {"binary64", "shape"}
    assert checker_rank.work(made[0]) == checker_rank.work(rank_certificate(X, 5)) > 0


def _shaped(n: int, d: int, k: int, route: str, bits: int) -> dict:
    """What the work estimate reads of a head certificate: its shapes, route and precision."""
    return {"inputs": {"X": [[0.0] * d] * n, "W_Q": [[0.0] * k] * d}, "witness": {"route": route}, "precision": bits}


def test_the_work_estimate_admits_what_certify_init_and_model_write():
    """The checker estimates a head's and centred tokens' work (they have no layers for the limits to
    count) to refuse huge precisions, never what certify writes by default: init's rows on both routes
    (confirmed here at small d), its default last row by shape (n = 16, d = d_k = 1024, direct, 53 bits:
    25 to 36 s in the checker, escalated to 128 bits no dearer), `certify model`'s heads and layers
    (MiniLM: n = 8, d = 384, d_k = 32, thin, 64 bits; 128 tokens at its cap of 512 bits)."""
    from certify.studies import init_scaling
    from certify_checker import head as checker_head
    from certify_checker import rank as checker_rank

    for d, d_k in ((32, 32), (32, 4)):
        row = init_scaling.certify_row(init_scaling.sample(d, 4, "lecun", seed=2, d_k=d_k), max_prec=1024)
        assert row.checker.startswith("confirmed") and row.route == ("direct" if d_k == d else "thin"), row.checker
    limit = certify_checker.LIMITS.work
    assert checker_head.work(_shaped(16, 1024, 1024, "direct", 53)) < 0.7 * limit
    assert checker_head.work(_shaped(16, 1024, 1024, "direct", 128)) < limit
    assert checker_head.work(_shaped(16, 1024, 1024, "direct", 1024)) > limit  # minutes: refused
    assert checker_head.work(_shaped(8, 384, 32, "thin", 64)) < limit / 1000
    assert checker_head.work(_shaped(128, 384, 32, "thin", 512)) < limit / 5  # with its finer evaluation at 1024 bits
    X = rank_certificate(np.random.default_rng(3).normal(size=(128, 384)), 127)
    assert 0 < checker_rank.work({**X, "precision": 512}) < limit / 10
