"""Certificates: the exact inputs, what was compared, the verdict, and the enclosures.

Schema (format "certify-certificate/1", kind "inequality"):
    claim / bound      the claim id, or the user's bound expression (the other is null)
    verdict            holds | violated
    precision          bits at which the ball evaluation decided
    inputs             the exact configuration (certify.core.config.to_json): a valid config itself
    inputs_sha256      digest of {claim, bound, inputs}: any edit of them is detected
    witness            float64 singular vectors per layer ("A<t>", "V<t>": basis, top), JSON numbers;
                       the checker only uses them to confirm norms, so a bad witness can only fail
    values             D_in, D_out, bound, and per layer every primitive computed, as arb
                       strings "[mid +/- rad]"; "comparisons": each lhs, rhs and outcome
Numbers are printed with enough digits to keep the precision's accuracy.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from flint import arb

from certify.core import jsonfile
from certify.errors import BadInput

FORMAT = "certify-certificate/1"


def arb_text(x: arb, precision: int) -> str:
    digits = math.ceil(precision * math.log10(2)) + 3
    return x.str(digits, radius=True, more=True)


def digest(claim: str | None, bound: str | None, inputs: dict) -> str:
    """sha256 of the canonical JSON of what the certificate is about (independently recomputed by the checker)."""
    canonical = json.dumps({"claim": claim, "bound": bound, "inputs": inputs}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def build(case, claim_id, bound, verdict, precision, views, comparisons, witnesses) -> dict:
    from certify.core import config  # here, so that reading a certificate does not load numpy

    inputs = config.to_json(case)
    layers = [{name: arb_text(value, precision) for name, value in view.cache.items()} for view in views]
    compared = [
        {"layer": c.layer, "lhs_expr": c.lhs_expr, "rhs_expr": c.rhs_expr, "lhs": arb_text(c.lhs, precision),
         "rhs": arb_text(c.rhs, precision), "holds": c.outcome}
        for c in comparisons
    ]
    deciding = next((c for c in comparisons if c.outcome is False), comparisons[-1])
    last = views[-1]
    return {
        "format": FORMAT,
        "kind": "inequality",
        "claim": claim_id,
        "bound": bound,
        "verdict": verdict,
        "precision": precision,
        "inputs": inputs,
        "inputs_sha256": digest(claim_id, bound, inputs),
        "witness": {
            key: {"basis": w.basis.tolist(), "top": w.top.tolist()}
            for key, w in witnesses.items()
        },
        "values": {
            "D_in": arb_text(views[0].get("D"), precision),
            "D_out": arb_text(last.get("D_out"), precision),
            "bound": arb_text(deciding.rhs, precision),
            "layers": layers,
            "comparisons": compared,
        },
    }


def write(cert: dict, path) -> Path:
    return jsonfile.write(cert, path)


def read(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"no such certificate: {path}")
    try:
        cert = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BadInput(f"{path}: not a readable certificate ({err})") from None
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise BadInput(f"{path}: not a certify certificate (format {FORMAT!r} expected)")
    return cert
