"""Softmax, LayerNorm, GELU and the adaptive-precision loop are written once outside the checker
(certify.core.layers, certify.core.precision): a second definition or an inline copy anywhere else
in certify/ fails here.  The checker (certify_checker/) keeps its own on purpose."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HOME = {
    "softmax": "certify/core/layers.py",
    "layernorm": "certify/core/layers.py",
    "gelu": "certify/core/layers.py",
    "precision loop": "certify/core/precision.py",
}
PATTERNS = {
    "softmax": [r"def (softmax\w*|\w*_softmax)\(", r"exp\([^)\n]*-[^)\n]*\.max\(axis"],
    "layernorm": [r"def (layernorm|sphere_ln|standard_ln|sphere_layernorm|standard_layernorm)\(",
                  r"\((centred|centered) \* (centred|centered)\)\.(mean|sum)\(axis=-?1\b",
                  r"linalg\.norm\([^)\n]*axis=-?1, keepdims=True\)"],
    "gelu": [r"def gelu\(", r"erf\(\w+ / "],
    "precision loop": [r"def escalate\(", r"(precision|prec|bits) \*= 2", r"min\(2 \* (precision|prec|bits)",
                       r"for (precision|bits) in \w*PRECISIONS"],
}


def _sources():
    for path in sorted((ROOT / "certify").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text()


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_written_once_outside_the_checker(name):
    allowed = {HOME[name]}  # no exceptions: tier 3 runs the generic layer on its own backend
    found = sorted({where for where, text in _sources() for pattern in PATTERNS[name] if re.search(pattern, text)})
    assert [where for where in found if where not in allowed] == []
    assert HOME[name] in found  # the patterns still recognise the one definition


def test_the_patterns_catch_a_planted_copy():
    planted = {
        "softmax": "w = np.exp(S - S.max(axis=-1, keepdims=True))",
        "layernorm": "variance = (centred * centred).mean(axis=-1, keepdims=True)",
        "gelu": "return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))",
        "precision loop": "        precision *= 2",
    }
    for name, line in planted.items():
        assert any(re.search(pattern, line) for pattern in PATTERNS[name]), name
