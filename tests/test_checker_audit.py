"""Soundness audit of the trusted checker: certificates a forger can build, and must not get accepted.

The forger here is strong on purpose: it runs the checker's own arithmetic (certify_checker.forward,
inequality, windowed) to fill in every value, outcome and digest a certificate must state, so the
only thing standing between a forged certificate and acceptance is what the checker validates.
Each test plants one defect found in the audit and fails on the checker before its fix.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from fractions import Fraction

import pytest
from flint import ctx
from mpmath import mp

import certify_checker as checker
from certify_checker import forward
from certify_checker import residual_far
from certify_checker import windowed
from certify_checker import wu_fig1
from certify_checker import formula
from certify_checker import inequality as ineq
from certify.engine.certificate import named
from certify_checker.exact import ball, rational

ZERO2 = [["0", "0"], ["0", "0"]]
TWO_TOKENS = [["1", "0"], ["0", "1"]]


def certificate(kind: str, inputs: dict, witness: dict, found, precision: int) -> dict:
    """The certificate of what the checker's own evaluation found (the engine's writer)."""
    return named(kind, found.claims, found.verdict, inputs, witness, found.values, precision)


def identity_witness(d: int) -> dict:
    """A valid spectral-norm witness for any d x d matrix (the checker's bound is then just looser)."""
    return {"basis": [["1" if i == j else "0" for j in range(d)] for i in range(d)], "top": ["1"] + ["0"] * (d - 1)}


def redigest(cert: dict) -> dict:
    """The digest a forger recomputes after an edit (the documented canonical JSON rule)."""
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"],
                            "precision": cert["precision"]},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


def seal(inputs: dict, claim: str | None = None, bound: str | None = None, precision: int = 53) -> dict:
    """A complete certificate for the inputs as the checker's arithmetic reads them (no validation).
    Claims of scope "layer" and "window" and user bounds (stack claims are not needed here)."""
    d = len(inputs["X"][0])
    witness = ineq._Witnesses({f"{k}{t}": identity_witness(d) for t in range(len(inputs["layers"])) for k in ("A", "V")})
    scope, _, inequalities = ineq.CLAIMS[claim] if claim else ("layer", None, [("D_out", bound)])
    assert scope in ("layer", "window")
    with ctx.workprec(precision):
        X0, steps = forward.matrix_mat(inputs["X"]), []
        for t, spec in enumerate(inputs["layers"]):
            tokens = steps[-1].step["out_matrix"] if steps else X0
            steps.append(ineq.Layer(spec, tokens, X0, witness, t, len(inputs["layers"])))
        frames = windowed.frames(claim, inputs, steps) if scope == "window" else []
        compared = []
        for lhs, rhs in inequalities:
            envs = frames if scope == "window" else steps
            compared += [(env.t, lhs, rhs, formula.evaluate(lhs, env), formula.evaluate(rhs, env)) for env in envs]
        outcomes = [ineq._outcome(lhs, rhs) for *_, lhs, rhs in compared]
        text = lambda x: x.str(precision * 3 // 10 + 3, radius=True, more=True)  # noqa: E731
        deciding = next((c for c, o in zip(compared, outcomes) if o is False), compared[-1])
        values = {"comparisons": [{"layer": t, "lhs_expr": le, "rhs_expr": re, "lhs": text(l), "rhs": text(r),
                                   "holds": o} for (t, le, re, l, r), o in zip(compared, outcomes)],
                  "layers": [{} for _ in steps], "D_in": text(steps[0]("D")), "D_out": text(steps[-1]("D_out")),
                  "bound": text(deciding[-1])}
    witness = {name: witness[name] for name in witness.read}  # those the comparisons read, as certify states them
    verdict = "violated" if False in outcomes else "holds" if all(o is True for o in outcomes) else "undecided"
    return redigest({"format": "certify-certificate/1", "kind": "inequality", "claim": claim, "bound": bound,
                     "verdict": verdict, "precision": precision, "inputs": inputs, "witness": witness, "values": values})


def shared_mask_stack(mask, depth=3) -> dict:
    return {"X": TWO_TOKENS, "layers": [{"A": ZERO2, "mask": mask} for _ in range(depth)]}


def test_the_forger_is_accepted_on_an_honest_configuration():
    """Control: the forger's certificates are the checker's own numbers, so a valid input passes."""
    cert = seal(shared_mask_stack([[1, 0], [1, 1]]), claim="mask.collapse")
    assert cert["verdict"] == "holds" and checker.verify(cert).ok


# Wu et al.'s Theorem 1 assumes every token attends to itself, a 0/1 mask on the n tokens.  Without
# these checks the checker confirmed "mask.collapse violated": a false counterexample to the theorem.
@pytest.mark.parametrize("mask", [
    [[0, 1], [1, 0]],  # no self-loops: P swaps the two tokens, which never collapse
    [[1, 0, 1], [0, 1, 1], [1, 1, 1]],  # 3 x 3 on 2 tokens: the graph has a centre the attention never sees
    [[1, 0.5], [0.5, 1]],  # an entry 0.5 counted as an edge, and as half a neighbour in max_i |N(i)|
])
def test_a_false_counterexample_to_mask_collapse_is_rejected(mask):
    forged = seal(shared_mask_stack(mask), claim="mask.collapse")
    assert forged["verdict"] == "violated"
    assert not checker.verify(forged).ok


def mutate(inputs: dict, change) -> dict:
    inputs = copy.deepcopy(inputs)
    change(inputs["layers"][0])
    return inputs


FFN = {"W1": [["1", "0"], ["0", "1"]], "b1": ["0", "0"], "W2": [["1", "0"], ["0", "1"]], "b2": ["0", "0"],
       "activation": "relu", "residual": False}


# Inputs the engine never writes, which the checker read as some other configuration (keys it
# ignores, values it takes by truthiness or position): "holds" was confirmed for a layer that is
# not the one written down.
@pytest.mark.parametrize("change", [
    lambda layer: layer.update(W_V=[["2", "0"], ["0", "2"]]),  # Wu et al.'s name for V, silently ignored
    lambda layer: layer.update(ffn=dict(FFN, activation="silu")),  # read as GELU
    lambda layer: layer.update(layernorm={"position": "middle", "kind": "sphere"}),  # no LayerNorm at all
    lambda layer: layer.update(layernorm={"position": "post", "kind": "sphere", "gain": ["3", "3"]}),
    lambda layer: layer.update(W_Q=[["5"], ["0"]], W_K=[["5"], ["0"]], d_k=1),  # A wins, W_Q/W_K ignored
    lambda layer: layer.update(residual="false"),  # a non-empty string: a residual
    lambda layer: layer.update(mask=[[1, 1, 0], [1, 1, 0]]),  # rows longer than the tokens
])
def test_a_layer_outside_the_schema_is_rejected(change):
    inputs = mutate({"X": TWO_TOKENS, "layers": [{"A": ZERO2}]}, change)
    forged = seal(inputs, bound="1000*D + 1000")
    assert forged["verdict"] == "holds"
    assert not checker.verify(forged).ok


def test_honest_stack_passes_the_schema():
    inputs = {"X": TWO_TOKENS, "name": "n", "layers": [
        {"W_Q": [["1"], ["0"]], "W_K": [["1"], ["1"]], "b_Q": ["1/2"], "d_k": 1, "beta": "2", "V": ZERO2,
         "mask": [[1, 0], [1, 1]], "residual": True, "ffn": FFN,
         "layernorm": {"position": "pre", "kind": "standard", "gain": ["1", "1"], "bias": ["0", "0"], "eps": "1e-12"}}]}
    cert = seal(inputs, bound="1000*D + 1000")
    assert cert["verdict"] == "holds" and checker.verify(cert).ok


@pytest.fixture(scope="module")
def honest():
    cert = seal({"X": [["1", "2"], ["-1", "0"], ["0x1.8000000000000p-1", "1/3"]],
                 "layers": [{"A": [["1/2", "1/4"], ["0", "1"]]}]}, claim="collapse.global")
    assert cert["verdict"] == "holds" and checker.verify(cert).ok
    return cert


# Untrusted text that used to raise out of verify (OverflowError, SyntaxError, MemoryError) instead
# of being rejected: `certify verify` then died with a traceback.
@pytest.mark.parametrize("edit", [
    lambda c: c["inputs"]["X"][0].__setitem__(0, "0x1.0000000000000p+1024"),  # past binary64
    lambda c: c.update(claim=None, bound="D +"),
    lambda c: c.update(claim=None, bound="(" * 300 + "D" + ")" * 300),
    lambda c: c.update(claim=None, bound="-" * 100000 + "D"),
    lambda c: c.update(claim=None, bound="D\x00"),
])
def test_malformed_text_is_rejected_not_raised(honest, edit):
    cert = copy.deepcopy(honest)
    edit(cert)
    assert not checker.verify(redigest(cert)).ok


def test_deeply_nested_json_is_rejected_not_raised():
    assert not checker.verify_text("[" * 100000 + "]" * 100000).ok


def test_a_number_past_binary64_is_still_read_exactly():
    with ctx.workprec(64):
        assert ball("0x1.0000000000000p+1024") == 2**1024 and ball("-0x1.8000000000000p+1100") == -3 * 2**1099


def test_a_json_integer_past_binary64_is_read_exactly():
    """load() keeps JSON integers of up to 4000 digits exact, but ball() asked math.isfinite of one past
    binary64 (OverflowError): a certificate with such an input was rejected as malformed."""
    with ctx.workprec(64):
        assert ball(10**400) == 10**400 and ball(-(10**3999)) == -(10**3999)
    cert = seal({"X": [[10**400, 0], [0, 1], [1, 1]], "layers": [{"A": [["1/2", "0"], ["0", "1"]]}]},
                claim="collapse.dobrushin", precision=4096)
    assert cert["verdict"] == "holds" and checker.verify(json.loads(json.dumps(cert))).ok


# "1e999999999" (or a power D**1000000000) made the checker compute for hours.  The caps are those
# of certify.core.numbers; a certificate at the cap is rejected in time.
@pytest.mark.parametrize("text", ["1e4001", "1E-99999", "0x1p+16001", "-0x1.8p-20000"])
def test_absurd_exponents_are_refused(text):
    with pytest.raises(ValueError):
        rational(text)


def test_numbers_up_to_the_cap_are_exact():
    assert rational("1e4000") == 10**4000 and rational("0x1p-16000") == Fraction(1, 2**16000)


def test_a_hex_mantissa_longer_than_certify_reads_is_refused_before_it_is_multiplied():
    """Base 16 has no limit on an integer's text, as decimal has (4300 digits): a region proof's radius of 4 million
    hex digits was squared in its work estimate (3.6 s, n^1.6 in its digits) before any cap refused it."""
    assert rational("0x1" + "0" * 7000 + "p-16000") == 2**12000  # certify reads it: 2^12000 has 3613 digits
    with pytest.raises(ValueError, match="4300 digits"):
        rational("0x" + "f" * 8000)
    cert = {"format": checker.FORMAT, "kind": "region-proof", "tree": "", "leaves": [],
            "region": {"n": 4, "d": 1, "norm": "1", "radius": "0x" + "f" * 4_000_000}}
    started = time.process_time()
    checker.over_limits(cert, checker.LIMITS)
    assert time.process_time() - started < 1


def test_huge_integer_powers_are_refused(honest):
    cert = redigest(copy.deepcopy(honest) | {"claim": None, "bound": f"D**{formula.MAX_POWER + 1}"})
    assert "exponent" in checker.verify(cert).message
    fine = seal(copy.deepcopy(honest["inputs"]), bound=f"D**{formula.MAX_POWER} + 100")
    assert checker.verify(fine).ok


def test_a_bounds_evaluation_is_priced_before_any_work(honest):
    """A bound is evaluated at every layer, at the precision and at each escalation of it; unpriced, 200 terms
    D**1024 at 65536 bits (6 tokens) took 18 s a layer, on a certificate whose estimate was 9 s with its
    recomputations: a stack of the 11 layers the work limit admitted, minutes before any recomputation."""
    bound = "max(" + ", ".join(["D**1024"] * 200) + ")"
    cert = redigest(copy.deepcopy(honest) | {"claim": None, "bound": bound, "precision": 1 << 16})
    assert "work" in (checker.over_limits(cert, checker.LIMITS) or "")
    started = time.process_time()
    confirmation = checker.verify(cert)
    assert confirmation.refused and "work" in confirmation.message
    assert time.process_time() - started < 1
    assert ineq.work({**cert, "bound": "D"}) < ineq.work({**cert, "bound": "exp(D)"}) < ineq.work(cert)


def test_residual_far_needs_distinct_tokens():
    """D(X) = 0 satisfies D' <= q D but contradicts no lower bound (it used to pass the evaluation)."""
    config = {"X": [["1", "0"], ["1", "0"]], "layers": [{"A": ZERO2, "V": [["-1", "0"], ["0", "-1"]], "residual": True}]}
    with ctx.workprec(64):
        assert residual_far.evaluate({"q": "1/10", "config": config}, {}).verdict == "undecided"


def test_residual_far_states_the_q_it_checked():
    """q given as the JSON number 0.1 is the binary64 0.1000000000000000055...; the claim used to
    print it as 0.1, and D'/D can sit between the two (V = -I, A = lam I, X = (e1, -e1))."""
    mp.dps = 60
    ratio = mp.mpf(1) / 10 + mp.mpf("2.7e-18")
    lam = mp.nstr(mp.log(2 / ratio - 1) / 2, 45)  # D'/D = 2 / (exp(2 lam) + 1)
    true_ratio = 2 / (mp.exp(2 * mp.mpf(lam)) + 1)
    config = {"X": [["1", "0"], ["-1", "0"]],
              "layers": [{"A": [[lam, "0"], ["0", lam]], "V": [["-1", "0"], ["0", "-1"]], "residual": True}]}
    inputs = {"q": 0.1, "config": config}
    with ctx.workprec(192):
        found = residual_far.evaluate(inputs, {})
    assert found.verdict == "certified"
    cert = certificate("residual-far", inputs, {}, found, 192)
    assert checker.verify(cert).ok
    stated_q = Fraction(cert["claims"][0].split("q = ")[1].split()[0])
    assert true_ratio <= mp.mpf(stated_q.numerator) / stated_q.denominator  # the claim, as printed, is true


def _residual_far_found():
    config = {"X": [["1", "0"], ["-1", "0"]],
              "layers": [{"A": [["1", "0"], ["0", "1"]], "V": [["-1", "0"], ["0", "-1"]], "residual": True}]}
    inputs = {"q": "1", "config": config}
    with ctx.workprec(64):
        return inputs, residual_far.evaluate(inputs, {})


@pytest.mark.parametrize("witness", [float("nan"), "NaN", 10**400, [], {"A0": {"basis": [["1"]], "top": ["1"]}}])
def test_a_witness_where_a_kind_reads_none_is_rejected(witness):
    """residual.far reads no witness: one stated (with the digest that binds it recomputed) is a field
    nobody checks, so it is rejected, whatever it holds; the control without one is confirmed."""
    inputs, found = _residual_far_found()
    assert found.verdict == "certified" and checker.verify(certificate("residual-far", inputs, {}, found, 64)).ok
    confirmation = checker.verify(certificate("residual-far", inputs, witness, found, 64))
    assert not confirmation.ok and "witness" in confirmation.message


def _stack_certificate() -> dict:
    """An engine certificate whose claim reads the norm of A (collapse.global on examples/layer.json)."""
    from certify import engine
    from pathlib import Path
    cert = engine.check(Path(__file__).parent.parent / "examples" / "layer.json", claim="collapse.global").certificate
    assert checker.verify(cert).ok and set(cert["witness"]) == {"A0"}
    return cert


@pytest.mark.parametrize("edit", [
    lambda w: w.update(V0=w["A0"]),  # a witness no stated quantity reads
    lambda w: w.update(A1=w["A0"]),  # of a layer the configuration does not have
    lambda w: w["A0"].update(estimate=1.0),  # a field beside the basis and the top vector
])
def test_an_inequality_certificate_states_only_the_witnesses_it_reads(edit):
    cert = copy.deepcopy(_stack_certificate())
    edit(cert["witness"])  # the witness is outside the digest: nothing to recompute
    assert not checker.verify(cert).ok


@pytest.mark.parametrize("witness", [float("nan"), "NaN", [], {"A0": None}, {"A0": [1, 2]}])
def test_an_inequality_witness_that_is_not_a_table_of_norm_witnesses_is_malformed(witness):
    cert = {**_stack_certificate(), "witness": witness}
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "malformed" in confirmation.message


def test_a_work_estimate_that_cannot_read_a_certificate_given_as_a_dict_rejects_it():
    """over_limits runs each kind's work estimate before the kind reads anything: a region proof whose
    region is a numpy number (no JSON gives one, a caller's dict can) raised IndexError out of verify()."""
    import numpy as np
    cert = {"format": "certify-certificate/1", "kind": "region-proof", "region": np.float64(1.0), "tree": ""}
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "malformed" in confirmation.message


def _holding_itself(cert: dict) -> dict:
    cert["inputs"]["X"].append(cert["inputs"]["X"])
    return cert


def _holding_a_list_twice(cert: dict) -> dict:
    shared = [1.0]
    for _ in range(24):  # 24 levels of [x, x]: 2^24 entries as text, within the nesting limit
        shared = [shared, shared]
    cert["inputs"]["layers"][0]["b_Q"] = shared
    return cert


@pytest.mark.parametrize("edit, refusal", [
    (_holding_itself, "nested deeper than the checker's limit of 32"),
    (_holding_a_list_twice, "larger than the checker's limit of 1000000 bytes as JSON text"),
])
def test_a_certificate_dict_that_is_no_json_tree_is_refused_at_once(edit, refusal):
    """A dict that holds itself kept the checker's first walk (pricing its texts) going for ever; one that holds a list
    twice at every level is 2^24 entries to walk, though a few hundred objects.  Both are refused before any
    work, as their text (if they had one) would be; a copy of the same dict as a tree is confirmed."""
    limits = checker.Limits(bytes=10 ** 6)
    cert = _stack_certificate()
    assert checker.verify(copy.deepcopy(cert), limits).ok
    confirmation = checker.verify(edit(cert), limits)
    assert not confirmation.ok and confirmation.refused and confirmation.message == refusal


def _nested_40_deep(cert: dict) -> tuple[dict, checker.Limits]:
    deep = 1.0
    for _ in range(40):
        deep = [deep]
    cert["inputs"]["layers"][0]["b_Q"] = deep
    return cert, checker.LIMITS


@pytest.mark.parametrize("past", [_nested_40_deep, lambda cert: (cert, checker.Limits(bytes=50))],
                         ids=["nesting", "bytes"])
def test_a_certificate_past_a_size_or_nesting_limit_is_refused_as_a_dict_as_it_is_as_text(past):
    """A dict past the nesting or byte limit was rejected by verify (refused False: "not confirmed", and `certify
    check` climbed its ladder for it), while its text was refused by verify_text (or rejected too: load's Unreadable
    was not marked).  Either way it is refused, neither confirmed nor rejected, as `python -m certify_checker` of its
    file refuses it (exit 2)."""
    cert, limits = past(copy.deepcopy(_stack_certificate()))
    as_dict, as_text = checker.verify(cert, limits), checker.verify_text(json.dumps(cert), limits)
    assert (as_dict.ok, as_dict.refused) == (as_text.ok, as_text.refused) == (False, True), (as_dict, as_text)
    assert "limit of" in as_dict.message and "limit of" in as_text.message


@pytest.mark.parametrize("rows", [[[1.0, 2.0], [3.0, 4.0]], [[1.0, "2"], [], [None, 4, True]], [[1.0], [[2.0]]]],
                         ids=["numbers", "texts and an empty row", "a row holding a list"])
def test_rows_of_numbers_are_measured_as_every_list_is(rows):
    """tree_problem measures a list of rows of plain values in one step: as the documented measure of any tree, a byte a
    container and one an entry, the rows one level below their list (here 3 deep under the dict), exactly at the limits
    and one past each."""
    value = {"X": rows}

    def walk(node, level):  # the measure written out, node by node: (bytes, depth)
        children = [walk(c, level + 1) for c in node if isinstance(c, list)] if isinstance(node, list) else []
        return 1 + len(node) + sum(b for b, _ in children), max([level] + [depth for _, depth in children])

    size, depth = walk(rows, 2)
    size += 2  # the dict and its one entry
    assert checker.tree_problem(value, checker.Limits(nesting=depth, bytes=size)) is None
    assert "nested deeper" in checker.tree_problem(value, checker.Limits(nesting=depth - 1, bytes=size))
    assert "larger than" in checker.tree_problem(value, checker.Limits(nesting=depth, bytes=size - 1))


def test_only_a_text_past_a_limit_is_refused_a_malformed_one_is_rejected():
    """verify_text refuses a text past the digits limit (as confirm() refuses the written text of a certificate past
    it), and rejects a text that is no JSON the checker reads (a key twice, NaN): it passes no limit."""
    text = json.dumps(_stack_certificate())
    digits = checker.verify_text(text.replace('"precision": 53', '"precision": ' + "5" * 4001))
    assert not digits.ok and digits.refused and "4000 digits" in digits.message, digits
    for malformed in (text.replace('{"format"', '{"precision": 53, "format"', 1), text.replace('"precision": 53', '"precision": NaN')):
        confirmation = checker.verify_text(malformed)
        assert not confirmation.ok and not confirmation.refused and "not JSON" in confirmation.message, confirmation


def test_wu_fig1_states_the_box_it_checked():
    """theta_A's box given as JSON numbers: its upper end printed as 2.0943951023931957 lies below
    theta_A for this w, so "exactly one fixed point in [.., 2.0943951023931957]" was false as printed."""
    from certify.studies.wu import fig1

    mp.dps = 60
    hi = 2.0943951023931957
    decimal, exact = mp.mpf(repr(hi)), mp.mpf(Fraction(hi).numerator) / Fraction(hi).denominator
    assert decimal < exact
    w = Fraction(mp.nstr(mp.sqrt(1 + mp.tan(mp.pi - (decimal + exact) / 2) ** 2), 55))  # theta_A in between
    theta_A = mp.pi - mp.atan(mp.sqrt(mp.mpf(w.numerator) ** 2 / w.denominator ** 2 - 1))
    witness = fig1.witness(w, 256)
    witness["theta_A"] = [hi - 1e-12, hi]
    inputs = {"w": str(w)}
    with ctx.workprec(256):
        found = wu_fig1.evaluate(inputs, witness)
    cert = certificate("wu-fig1", inputs, witness, found, 256)
    assert checker.verify(cert).ok
    box = cert["claims"][3].split(" in [")[1].split("]")[0].split(", ")
    lo, up = (Fraction(end) for end in box)
    assert mp.mpf(lo.numerator) / lo.denominator < theta_A < mp.mpf(up.numerator) / up.denominator


@pytest.mark.parametrize("inputs", [
    {"X": [[10**4000, -0.0], [1e308, 5e-324]], "layers": [{"A": [[-1.5e-300, 2**64 + 1]]}]},
    {"X": [["1/3", "0x1.8p-3"], ["-2.5e-7", "\u2028\n\t\"\\é"]], "layers": [{"b": {"z": 1, "a": [None, True, False]}}]},
    {"name": "\x00\x1f\ud7ff\U0001d403", "X": [[0.1, 0.2]], "layers": [{"mask": [[1]], "A": [[float.fromhex("0x1.fffffffffffffp+1023")]]}]},
])
def test_the_digest_is_the_canonical_json_of_claim_bound_inputs_and_precision(inputs):
    """The digest's text is json.dumps with sorted keys and no spaces, byte for byte, whatever the inputs hold
    (integers past binary64, -0.0, the extremes of binary64, escapes, unsorted nested keys), and an earlier
    version's digest (no precision) likewise."""
    cert = {"claim": None, "bound": "(1 - exp(-a*D**2))*D", "inputs": inputs, "precision": 53}
    assert ineq.digest(cert) == redigest(copy.deepcopy(cert))["inputs_sha256"]
    assert ineq.digest(cert, ("claim", "bound", "inputs")) == hashlib.sha256(json.dumps(
        {"claim": None, "bound": cert["bound"], "inputs": inputs}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    looped = copy.deepcopy(cert)
    looped["inputs"]["layers"].append(looped["inputs"])
    with pytest.raises(RecursionError):  # malformed (certify_checker.MALFORMED), as json.dumps finds it
        ineq.digest(looped)


@pytest.mark.parametrize("value", [5, ["a"]])
def test_a_name_that_is_no_text_is_rejected(value):
    """The inputs' name took any JSON value in the checker, where `certify check` refuses the configuration: a field
    no check read, unchecked.  A text there (the author's label, which certify copies from the configuration) is
    confirmed as before."""
    inputs = {"X": TWO_TOKENS, "layers": [{"A": [["1", "0"], ["0", "1"]]}]}
    honest = seal({**inputs, "name": "a label"}, claim="collapse.global")
    assert checker.verify(honest).ok, checker.verify(honest).message
    forged = seal({**inputs, "name": value}, claim="collapse.global")
    confirmation = checker.verify(forged)
    assert not confirmation.ok and "name is a text" in confirmation.message, confirmation.message


@pytest.mark.parametrize("value", ["D(PX) <= D/1000 proven", {"a": 1}, None])
def test_a_description_is_rejected(value):
    """A configuration's description, a note no check reads, was confirmed in any certificate, though certify writes
    none there (config.to_json keeps X, the layers and the name): a forger's words beside checked inputs."""
    inputs = {"X": TWO_TOKENS, "layers": [{"A": [["1", "0"], ["0", "1"]]}]}
    assert checker.verify(seal(inputs, claim="collapse.global")).ok
    confirmation = checker.verify(seal({**inputs, "description": value}, claim="collapse.global"))
    assert not confirmation.ok and "description" in confirmation.message, confirmation.message


@pytest.mark.parametrize("where", ["X", "A"])
def test_a_boolean_stated_for_a_number_is_malformed(where):
    """true in place of the number 1 (digest recomputed): JSON's true is no number, certify refuses it in a
    configuration, and the checker must not read it as 1 (a second reading of the certificate's inputs)."""
    from certify import engine

    cert = engine.check({"X": [[1, 0], [0, 1]], "layers": [{"A": [[1, 0], [0, 1]]}]}).certificate
    assert checker.verify(cert).ok
    forged = copy.deepcopy(cert)
    if where == "X":
        forged["inputs"]["X"][0][0] = True
    else:
        forged["inputs"]["layers"][0]["A"][0][0] = True
    forged["inputs_sha256"] = checker.inequality.digest(forged)
    confirmation = checker.verify(forged)
    assert not confirmation.ok and "malformed" in confirmation.message, confirmation.message
