"""Numbers stated as text (decimals, p/q, hex floats) are priced by the checker (certify_checker.schema.reading,
inequality.text_work) and by the engine with the checker's own function, so that what `check` admits `verify` does.

Before, the work estimate priced a text as an entry: 8 layers of 16 x 15 heads on 4 tokens, every number a p/q of
8000 digits, were estimated at 2.2e5 units (0.02 s) while one pass of the checker took 6 s."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import certify_checker
from certify.core import config, limits
from certify.engine import certificate, check
from certify.engine.decide import text_reading
from certify.errors import BadInput
from certify.search import samplers
from certify_checker import inequality, schema
from test_limits_estimates import _least_work


def _hand_written(inputs: dict, precision: int = 53) -> dict:
    cert = {"format": certify_checker.FORMAT, "kind": "inequality", "claim": "collapse.global", "bound": None,
            "verdict": "holds", "precision": precision, "inputs": inputs, "witness": {}, "values": {}}
    return {**cert, "inputs_sha256": inequality.digest(cert)}


def _heads(n: int, d: int, d_k: int, layers: int, number) -> dict:
    count = iter(range(1 << 30))
    matrix = lambda rows, cols: [[number(next(count)) for _ in range(cols)] for _ in range(rows)]
    return {"X": matrix(n, d), "layers": [{"W_Q": matrix(d, d_k), "W_K": matrix(d, d_k), "d_k": d_k}
                                          for _ in range(layers)]}


def test_long_p_over_q_weights_are_priced_as_the_seconds_the_checker_takes_to_read_them():
    """The reproduction: 4 tokens, d = 16, d_k = 15, 8 layers, every number a distinct p/q of two 4000-digit parts.
    Its forced verify took some 18 s of CPU (6 s a pass, three passes); it is now priced at over 5 * 10^8 units
    (50 s at 10^7 a second), of which the layers without their texts are under 10^6."""
    digits = "".join(random.Random(1).choices("0123456789", k=3995))
    inputs = _heads(4, 16, 15, 8, lambda i: f"{i + 1}{digits}/{digits}{2 * i + 1}")  # distinct: not cached
    cert = _hand_written(inputs)
    texts = schema.reading([inputs, {}])
    assert texts[1] == 4 * 16 + 8 * 2 * 16 * 15
    assert "work" in certify_checker.over_limits(cert, certify_checker.Limits(work=5 * 10**8))
    assert certify_checker.over_limits(cert, certify_checker.Limits()) is None  # 60 s at 10^7 units a second
    assert inequality.work(cert) - inequality.text_work(texts, 53) < 10**6  # the layers' own price, as before


def test_a_text_is_priced_by_its_length_and_its_exponent():
    """Reading "12345678e-3500" costs ten times "1/3" (its power of ten), a p/q of 4300-digit parts a hundred
    times; a float or a binary64 block is no text and costs nothing beyond its entry."""
    short, power, long = (schema.reading({"X": [[text]]})[0] for text in ("1/3", "12345678e-3500", "1/" + "7" * 4300))
    assert 10 * short <= power < long and 100 * short <= long
    assert schema.reading({"X": [[0.5]], "layers": [{"d_k": 3, "mask": [[1]]}]}) == (0, 0)
    assert schema.reading({"X": [[(0.75).hex(), "3", "0x1.8p-1", "0x1.8p-4000"]]})[1] == 3  # float.hex(0.75): an entry
    assert schema.reading({"name": "1/" + "7" * 4000}) == (0, 0)  # not a number's key


def _rational(x: float, digits: int) -> str:
    """x as a non-dyadic p/q near it, its denominator of the given digits."""
    q = 3 * 10 ** (digits - 1) + 1
    return str(Fraction(round(x * q), q))


@pytest.mark.parametrize("digits", [2, 300])
def test_a_check_of_texts_admitted_at_its_least_work_is_confirmed_by_the_checker_at_it(digits):
    """The engine prices its certificate's texts with the checker's own function (certificate.text_work): at the
    least work limit the engine admits a check at 53 bits, the certificate is written and confirmed under the same
    limit, the checker's estimate of it at most the engine's; one unit less is refused before any work."""
    drawn = samplers.sample("gaussian", 8, 6, 0, 0, L_range=(1.0, 1.0)).config
    data = {**drawn, "X": [[_rational(x, digits) for x in row] for row in drawn["X"]],
            "A": [[_rational(x, digits) for x in row] for row in drawn["A"]]}
    case = config.load(data)
    reading = text_reading(case)
    assert reading[1] == 8 * 6 + 6 * 6  # not beta, a binary64
    least = limits.work(*case.sizes(), 53, case.thin) + certificate.text_work(reading, 53)
    with pytest.raises(BadInput, match="work"):
        check(data, "collapse.global", limits=limits.Limits(work=least - 1))
    result = check(data, "collapse.global", limits=limits.Limits(work=least))
    assert result.certificate is not None and result.certificate["precision"] == 53, result.reason
    assert certify_checker.over_limits(result.certificate, certify_checker.Limits(work=least)) is None
    assert inequality.text_work(schema.reading([result.certificate["inputs"], {}]), 53) == certificate.text_work(
        reading, 53)


def test_a_binary64_configuration_states_no_text_and_is_priced_as_before():
    """No text, no change: a binary64 configuration's matrices (JSON numbers or binary64 blocks) and its scalars
    (beta, biases: float.hex's text, exact.binary64, read as an entry is) add nothing to either estimate; a scalar
    beyond binary64 is a text."""
    data = samplers.sample("gaussian", 16, 24, 0, 0, L_range=(1.0, 1.0)).config
    case = config.load(data)
    assert text_reading(case) == (0, 0) and text_reading(config.load({**data, "beta": "1/3"}))[1] == 1
    cert = check(data, "collapse.global").certificate
    assert cert is not None and "0x1" in cert["inputs"]["layers"][0]["beta"] and inequality.work(cert) == 0


def test_a_trajectory_prices_reading_its_inputs_texts_once():
    """A trajectory reads its inputs' numbers once (schema.exact), each "12345678e-4000" some 35 us: priced by
    schema.reading beside its steps' (which price a layer's characters at every step, trajectory._digits)."""
    from certify_checker import trajectory

    drawn = samplers.sample("gaussian", 8, 4, 0, 0, L_range=(1.0, 1.0)).config
    X = [[f"{int(abs(x) * 10**8) + 1}e-4000" for x in row] for row in drawn["X"]]
    skeleton = {"format": certify_checker.FORMAT, "kind": "trajectory", "layers": 3, "precision": 53,
                "step_precisions": [53] * 4, "curve_precision": 53, "norm_precision": 53, "curves": [], "witness": {}}
    stated, binary = ({**skeleton, "inputs": {**drawn, "X": tokens}} for tokens in (X, drawn["X"]))
    once = schema.reading(stated["inputs"])
    assert once[1] == 8 * 4 and once[0] >= 32 * 1000
    assert trajectory.work(stated) - trajectory.work(binary) >= once[0]
    assert _least_work(stated) - _least_work(binary) >= once[0]


def _reading_by_element(value, key=None) -> tuple[int, int]:
    """reading() element by element, recursively: its definition, which the walk must price alike."""
    if isinstance(value, dict):
        parts = [_reading_by_element(v, k) for k, v in value.items()]
    elif isinstance(value, list):
        parts = [_reading_by_element(v, key) for v in value]
    else:
        return schema.reading(value, key)  # one number: a text priced, anything else nothing
    return sum(units for units, _ in parts), sum(count for _, count in parts)


def test_the_walk_over_the_inputs_prices_every_text_and_passes_over_plain_numbers():
    """reading() passes over lists and matrices of plain numbers in one step (every check walks its inputs twice, the
    engine's estimate and the checker's: element by element, some 40 us of a check of 8 x 4 tokens); on random nested
    inputs of texts, numbers and matrices under every key it prices exactly what a walk element by element does."""
    rng = random.Random(7)
    keys = sorted(schema.READ)[:6] + ["basis", "top", "other", "layers"]
    leaves = [1.5, 3, None, True, "1/3", "0x1.8000000000000p+1", "12e-300", "abc", "7", 2.0 ** -1074, "1e5"]

    def drawn(depth: int):
        r = rng.random()
        if depth > 4 or r < 0.3:
            return rng.choice(leaves)
        if r < 0.5:  # a matrix, plain or with a text in it
            rows = [[rng.choice([0.5, -2.0, 4]) for _ in range(3)] for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.5:
                rows[rng.randrange(len(rows))][rng.randrange(3)] = rng.choice(leaves)
            return rows
        if r < 0.7:
            return [drawn(depth + 1) for _ in range(rng.randint(0, 5))]
        return {rng.choice(keys): drawn(depth + 1) for _ in range(rng.randint(0, 4))}

    priced = 0
    for _ in range(5000):
        value, key = drawn(0), rng.choice(keys + [None])
        assert schema.reading(value, key) == _reading_by_element(value, key), (value, key)
        priced += schema.reading(value, key)[1] > 0
    assert priced > 1000  # texts were found, not only passed over


def test_nothing_beyond_the_layers_is_priced_without_arithmetic(monkeypatch):
    """A certificate of binary64 numbers and no user's bound has no texts and no bound to price: inequality.work is 0
    without the limbs and passes of the prices of none (some 5 us of every check's confirmation, 2 percent of the bare
    arb evaluation at 8 x 4), which the same certificate with a bound and a text still pays."""
    cert = check({"X": [[0.0, 1.0], [1.5, -0.25], [2.0, 0.5]], "A": [[0.5, 0.0], [0.25, 1.0]]}).certificate

    def refused(*args, **kwargs):
        raise AssertionError("priced nothing with arithmetic")

    with monkeypatch.context() as patched:
        patched.setattr(inequality, "passes", refused)
        patched.setattr(inequality.limits, "limbs", refused)
        assert inequality.work(cert) == 0
    priced = {**cert, "bound": "D", "inputs": {**cert["inputs"], "X": [["1/3", 1.0]] + cert["inputs"]["X"][1:]}}
    assert inequality.work(priced) == (inequality.bound_work(inequality.operations("D"), 53)
                                       + inequality.text_work(schema.reading([priced["inputs"], {}]), 53)) > 0
