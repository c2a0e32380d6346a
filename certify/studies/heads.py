"""The steps of collapse.global for one attention head on one configuration, confirmed by the checker.

Used by `certify model` (every head of a pretrained encoder: steps dobrushin and tau, and the
float64 regime of a D^2) and `certify init` (each sampled row: step global).  The enclosures are
computed here with the generic formulas (certify.core.layers, quantities) on the float64 data
taken as exact; each decided step is then stated in an "attention-head" certificate, which the
independent checker re-derives (certify_checker/head.py).  A step is reported as decided only when
the checker confirms it; when it does not, the step is undecided and the checker's word is kept.

    dobrushin   D(P X) <= tau(P) D(X)                 (collapse.dobrushin)
    tau         tau(P) <= 1 - exp(-a D(X)^2)          (collapse.tau)
    global      D(P X) <= (1 - exp(-a D(X)^2)) D(X)   (collapse.global as init.scaling states it)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb

from certify.core import quantities
from certify.core.arith import BALL
from certify.core.float64_limits import UNDECIDED as REGIME_UNDECIDED
from certify.core.float64_limits import regime
from certify.core.layers import LayerArrays, attention
from certify.core.numbers import Binary64Matrix, encode_matrix
from certify.core.spectral import NormWitness
from certify.core.thin_norm import ball_array
from certify.core.verdicts import HOLDS, UNDECIDED, VIOLATED
from certify.engine import certificate

KIND = "attention-head"
STATEMENTS = {
    "dobrushin": "D(P X) {} tau(P) D(X)",
    "tau": "tau(P) {} 1 - exp(-a D(X)^2)",
    "global": "D(P X) {} (1 - exp(-a D(X)^2)) D(X)",
}


@dataclass(frozen=True)
class Head:
    """One head on one configuration: float64 arrays, every value taken as exact."""

    X: np.ndarray  # n x d
    W_Q: np.ndarray  # d x k
    W_K: np.ndarray  # d x k
    b_Q: np.ndarray | None = None  # k
    b_K: np.ndarray | None = None
    keys: np.ndarray | None = None  # n booleans: the tokens every query may attend to (default all)

    def key_mask(self) -> np.ndarray:
        """The n x n boolean mask: every query may attend to the tokens of `keys` (all by default)."""
        n = self.X.shape[0]
        keys = np.ones(n, dtype=bool) if self.keys is None else np.asarray(self.keys, dtype=bool)
        return np.broadcast_to(keys, (n, n))

    def inputs(self, steps: dict[str, str]) -> dict:
        """The head as the certificate's inputs, with the steps to confirm: the matrices as encode_matrix states
        binary64 ones (a block beyond 64 numbers: the digests of a MiniLM head's 28,000 numbers as JSON text were a
        quarter of `certify model`'s time), the biases as JSON numbers, the keys as 0/1."""
        out = {name: encode_matrix(Binary64Matrix(getattr(self, name))) for name in ("X", "W_Q", "W_K")}
        out["steps"] = steps
        for name in ("b_Q", "b_K"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name).tolist()
        if self.keys is not None:
            out["keys"] = [int(bool(v)) for v in self.keys]
        return out


@dataclass(frozen=True)
class Steps:
    """The confirmed steps of one head: the enclosures (D, D_PX, tau, a, a_D2, gap), each step's outcome as
    the checker confirmed it, the float64 regime of a D^2, the checker's word and the certificate."""
    values: dict[str, arb]  # D, D_PX, tau, a, a_D2, gap
    outcomes: dict[str, str]  # step -> holds | violated | undecided, as confirmed by the checker
    regime: str  # confirmed float64 regime of a D^2, or undecided
    checker: str  # the checker's word on the certificate ("" when nothing was decided)
    certificate: dict | None


def values(head: Head, X_ball: np.ndarray, a: arb) -> dict[str, arb]:
    """D, D(P X), tau(P), a, a D^2 and exp(-a D^2) at the current precision."""
    k = head.W_Q.shape[1]
    arrays = LayerArrays.factored(ball_array(head.W_Q), ball_array(head.W_K), 1 / arb(k).sqrt(), head.key_mask(),
                                  b_Q=None if head.b_Q is None else ball_array(head.b_Q),
                                  b_K=None if head.b_K is None else ball_array(head.b_K))
    P = attention(BALL, arrays, X_ball)
    D = quantities.diameter(BALL, X_ball)
    a_D2 = a * D * D
    return {"D": D, "D_PX": quantities.diameter(BALL, BALL.matmul(P, X_ball)), "tau": quantities.dobrushin(BALL, P),
            "a": a, "a_D2": a_D2, "gap": (-a_D2).exp()}


def _sides(step: str, v: dict[str, arb]) -> tuple[arb, arb]:
    if step == "dobrushin":
        return v["D_PX"], v["tau"] * v["D"]
    if step == "tau":
        return v["tau"], 1 - v["gap"]
    return v["D_PX"], (1 - v["gap"]) * v["D"]


def confirm_steps(head: Head, found: dict[str, arb], steps: tuple[str, ...], route: str, witness: NormWitness,
                  precision: int, with_regime: bool = False) -> Steps:  # fmt: skip
    """Decide the steps from the enclosures `found` (values() at `precision`), state the decided ones
    in a certificate and keep them only if the checker confirms it."""
    decided, claims = {}, []
    for step in steps:
        outcome = BALL.certainly_le(*_sides(step, found))
        if outcome is not None:
            decided[step] = HOLDS if outcome else VIOLATED
            claims.append(STATEMENTS[step].format("<=" if outcome else ">"))
    found_regime = regime(found["a_D2"]) if with_regime else REGIME_UNDECIDED
    stated = dict(decided)
    if found_regime != REGIME_UNDECIDED:
        stated["regime"] = found_regime
        claims.append(f"the float64 regime of a D^2 is {found_regime}")
    undecided = {step: UNDECIDED for step in steps}
    if not stated:
        return Steps(found, undecided, REGIME_UNDECIDED, "", None)
    norm_witness = {"route": route, "basis": encode_matrix(Binary64Matrix(witness.basis)), "top": witness.top.tolist()}
    cert = certificate.named(KIND, claims, "certified", head.inputs(stated), norm_witness, found, precision)
    confirmation = certificate.confirm(cert)
    if not confirmation.ok:
        return Steps(found, undecided, REGIME_UNDECIDED, confirmation.message, cert)
    return Steps(found, {**undecided, **decided}, found_regime, confirmation.message, cert)
