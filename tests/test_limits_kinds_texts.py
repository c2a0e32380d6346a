"""Every kind prices the numbers its certificate states as text (counterexample.text_price, limits.text_work, one
formula with inequality.text_work), not the inequality kind and trajectories only.

Before, 4000-digit p/q entries cost an attention head on 4 x 16 tokens 0.9 s of CPU for an estimate of 1 ms, 16 x 16
centred tokens 0.4 s for 1 ms, a residual-far or expansive-v configuration 0.55 s for 3 to 9 ms, 2000 wu-fig1 cuts
12 s for 0.06 s, 200 ln-equilibria of long box ends 8 s for 0.1 s.  Each hostile certificate here (digest redone,
as a forger writes it) is priced at least at the CPU its forced verify takes, 10^7 units a second."""

from __future__ import annotations

import copy
import random
import time
from fractions import Fraction

import pytest

import certify_checker as checker
from certify_checker import counterexample, head
from test_limits_texts import _least_work

_DIGITS = "".join(random.Random(1).choices("0123456789", k=3995))
_UNLIMITED = checker.Limits(work=1 << 62, tokens=1 << 20, dim=1 << 20, memory=1 << 62)


def _texts():
    """Distinct p/q of two 4000-digit parts (a text read once is cached by its spelling)."""
    count = iter(range(1, 1 << 30))
    return lambda: f"{next(count)}{_DIGITS}/{_DIGITS}{2 * next(count) + 1}"


def _written(kind: str, inputs: dict, witness: dict, bits: int) -> dict:
    cert = {"format": checker.FORMAT, "kind": kind, "verdict": "certified", "claims": [], "inputs": inputs,
            "witness": witness, "values": {}, "precision": bits}
    return {**cert, "inputs_sha256": counterexample.digest(kind, inputs, witness, bits)}


def _matrix(number, rows: int, cols: int) -> list:
    return [[number() for _ in range(cols)] for _ in range(rows)]


def _head() -> dict:
    t = _texts()
    inputs = {"X": _matrix(t, 4, 8), "W_Q": _matrix(t, 8, 8), "W_K": _matrix(t, 8, 8), "steps": {"dobrushin": "holds"}}
    return _written("attention-head", inputs, {"route": "direct", "basis": _matrix(t, 8, 8), "top": [t()] * 8}, 53)


def _rank() -> dict:
    return _written("centred-rank", {"X": _matrix(_texts(), 12, 12)}, {}, 53)


def _residual_far() -> dict:
    t = _texts()
    config = {"X": _matrix(t, 6, 8), "layers": [{"A": _matrix(t, 8, 8), "V": _matrix(t, 8, 8), "residual": True}]}
    return _written("residual-far", {"q": "1/2", "config": config}, {}, 53)


def _expansive_v() -> dict:
    t = _texts()
    config = {"X": _matrix(t, 6, 8), "layers": [{"A": _matrix(t, 8, 8), "V": _matrix(t, 8, 8)} for _ in range(2)]}
    return _written("expansive-v", {"config": config}, {}, 53)


def _wu_fig1() -> dict:
    from certify.studies.wu import fig1
    witness = fig1.witness(Fraction(2), 53)
    lo, hi = Fraction(witness["trapping_cuts"][0]), Fraction(witness["trapping_cuts"][-1])
    q, m = 10 ** 4000 + 7, 400
    witness["trapping_cuts"] = [str(lo + (hi - lo) * Fraction(i * q // m + 1, q + 1)) for i in range(m)]
    return _written("wu-fig1", {"w": "2"}, witness, 53)


def _ln_equilibria() -> dict:
    from certify.studies.wu import equilibria
    honest = equilibria.witness(2, Fraction(2), True, 64)["equilibria"]
    count, q = iter(range(1, 1 << 30)), 10 ** 4000 + 7
    moved = lambda end, by: str(Fraction(end) + by * Fraction(next(count), 1000 * q))  # a long end, the box wider
    listed = copy.deepcopy(honest * 20)
    for entry in listed:
        for token in entry["tokens"]:
            token["box"] = [[moved(lo, -1), moved(hi, 1)] for lo, hi in token["box"]]
    return _written("ln-equilibria", {"n": 2, "w": "2"}, {"equilibria": listed}, 64)


@pytest.mark.parametrize("build", [_head, _rank, _residual_far, _expansive_v, _wu_fig1, _ln_equilibria],
                         ids=lambda build: build.__name__.strip("_"))
def test_a_certificate_of_long_texts_is_priced_at_least_at_the_cpu_its_check_takes(build):
    cert = build()
    estimate = _least_work(cert)
    started = time.process_time()
    confirmation = checker.verify(cert, _UNLIMITED)
    seconds = time.process_time() - started
    assert not confirmation.refused
    assert estimate >= seconds * 10**7 and seconds > 0.05, (estimate, seconds, confirmation.message)


def test_a_kind_without_texts_is_priced_as_before():
    """Binary64 inputs (JSON numbers: every head `certify model` writes) state no text: nothing is added."""
    rng = random.Random(3)
    floats = lambda rows, cols: [[rng.uniform(-1, 1) for _ in range(cols)] for _ in range(rows)]
    inputs = {"X": floats(4, 8), "W_Q": floats(8, 8), "W_K": floats(8, 8), "steps": {"dobrushin": "holds"}}
    cert = _written("attention-head", inputs, {"route": "direct", "basis": floats(8, 8), "top": floats(1, 8)[0]}, 53)
    assert counterexample.text_price(cert, head.TEXT_READS) == 0 and head.work(cert) > 0
    assert counterexample.text_price(_head(), head.TEXT_READS) > 10**6  # the same shapes in long texts


def _region_violated(d: int, number) -> dict:
    """A region proof's violation whose counterexample (2 tokens in R^d, A d x d) states the given numbers; its
    inner certificate states no values (rejected, once the region's own tests have run)."""
    from certify_checker import inequality, region_proof
    config = {"X": _matrix(number, 2, d), "layers": [{"A": _matrix(number, d, d)}]}
    inner = {"format": checker.FORMAT, "kind": "inequality", "claim": "collapse.global", "bound": None,
             "verdict": "violated", "precision": 53, "inputs": config, "witness": {}, "values": {}}
    region = {"n": 2, "d": d, "radius": "100", "norm": "100"}
    name, variables, root = region_proof._reduction(region)
    return {"format": checker.FORMAT, "kind": "region-proof", "verdict": "violated", "region": region,
            "claim": "collapse.global", "bound": None, "lemmas": region_proof.LEMMAS[name],
            "reduction": {"name": name, "variables": variables, "domain": [[str(a), str(b)] for a, b in root]},
            "counterexample": {"config": config, "certificate": {**inner, "inputs_sha256": inequality.digest(inner)}}}


def test_a_region_counterexample_of_long_texts_is_priced_by_its_exact_sums():
    """_inside sums the squares of a token's and of A's entries exactly: the denominators grow with the terms, and
    A of 16 x 16 of 4000-digit p/q took 50 s for an estimate of 4 s.  Now priced as the square of the texts'
    length (region_proof._inside_work): at least its CPU at 6 x 6, refused under the default limits at 16 x 16."""
    cert = _region_violated(6, _texts())
    estimate = _least_work(cert)
    started = time.process_time()
    confirmation = checker.verify(cert, _UNLIMITED)
    seconds = time.process_time() - started
    assert not confirmation.ok and estimate >= seconds * 10**7 and seconds > 0.1, (estimate, seconds)
    assert "work" in checker.verify(_region_violated(16, _texts())).message
    from certify_checker import region_proof
    rng = random.Random(5)
    floats = region_proof.work(_region_violated(64, lambda: rng.uniform(-1, 1)))  # binary64: no growth
    assert floats < 10**6
