"""The certificate of a trajectory (kind "trajectory"), re-derived by certify_checker.trajectory.

Schema (format "certify-certificate/1", kind "trajectory"):
    layers             T, the number of layers applied (layer t is the configuration's layer t mod L)
    inputs             the exact configuration (certify.core.config.to_json)
    inputs_sha256      digest of {kind, layers, inputs, precisions}: the three precisions and the
                       step precisions
    representation     "centred" (X = 1 c^T + E, certify.core.centred) or "absolute"
    precision, curve_precision, norm_precision   bits of the run (its first step), of the curves, of M
    step_precisions    per computed point t (through the first unresolved one), the bits at which D_t,
                       mu_t, tau_t and layer t were computed, none above precision (optional: without
                       it every step ran at precision)
    witness            float64 singular vectors ("A<t>" per configuration layer, "V0^k" for M), hex floats
    a                  ||A_t||_2 of each configuration layer (at the curve precision)
    curves             the curves drawn; M when a value curve is
    points             per t: resolved, D, mu, tau, approach, log_curves {name: natural log of the
                       curve}, checks {name: outcome of quantity <= curve}
    verdict            holds | violated | undecided | enclosed
Balls are stored exactly in binary, [mid mantissa, mid exponent, radius mantissa, radius exponent]
as decimal strings ("non-finite" for a ball that is not): near consensus D_t can be 10^(-10^40),
whose decimal exponent a string of digits could not carry back without a huge power of ten.
"""

from __future__ import annotations


from flint import arb

from certify.core import config
from certify.engine.certificate import FORMAT, canonical_digest, widened

NON_FINITE = "non-finite"


def ball(x: arb | None, precision: int) -> list[str] | str | None:
    """The exact binary form of a ball computed at `precision`, widened as certify.engine.certificate
    widens every stated enclosure (the checker's own, rounded differently, must lie inside it);
    "non-finite" for one that is not (a logarithm of a ball around 0)."""
    if x is None:
        return None
    if not x.is_finite():
        return NON_FINITE
    x = widened(x, precision)
    mid, rad = x.mid().man_exp(), x.rad().man_exp()
    return [str(v) for v in (*mid, *rad)]


def digest(layers: int, inputs: dict, precisions: list) -> str:
    """sha256 of what the certificate is about, its precisions (the three, then the list of step
    precisions) bound exactly."""
    return canonical_digest({"kind": "trajectory", "layers": layers, "inputs": inputs, "precisions": precisions})


def build(tr, case: config.Case, witnesses: dict, norm_precision: int) -> dict:
    """The trajectory's certificate (schema in the module docstring): the exact inputs and their digest, the
    precisions, the float64 witness vectors as hex floats, a_t, M and every point's balls stored exactly in
    binary, and the verdict."""
    inputs = config.to_json(case)
    steps = tr.step_precisions
    return {
        "format": FORMAT,
        "kind": "trajectory",
        "layers": tr.T,
        "inputs": inputs,
        "inputs_sha256": digest(tr.T, inputs, [tr.precision, tr.curve_precision, norm_precision, steps]),
        "representation": "centred" if tr.representation == "centred" else "absolute",
        "precision": tr.precision,
        "step_precisions": steps,
        "curve_precision": tr.curve_precision,
        "norm_precision": norm_precision,
        "witness": {
            key: {"basis": [[float(v).hex() for v in row] for row in w.basis], "top": [float(v).hex() for v in w.top]}
            for key, w in witnesses.items()
        },
        "a": [ball(a, tr.curve_precision) for a in tr.a],
        "curves": list(tr.drawn),
        "M": ball(tr.M, norm_precision),
        "points": [{"t": p.t, "resolved": p.resolved, "D": ball(p.D, p.precision), "mu": ball(p.mu, p.precision),
                    "tau": ball(p.tau, p.precision), "approach": ball(p.approach, tr.precision),
                    "log_curves": {name: ball(v, tr.curve_precision) for name, v in p.log_curves.items()},
                    "checks": dict(p.checks)} for p in tr.points],
        "verdict": tr.verdict,
    }
