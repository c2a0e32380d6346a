"""The thesis's residual family (docs/claims.md, residual.two_sided; residual.far is a
counterexample, `certify counterexample residual-far`).

X' = X + P X V^T: x'_i - x'_k = (x_i - x_k) + V ((PX)_i - (PX)_k), and ||(PX)_i - (PX)_k|| <= tau D
(collapse.dobrushin, any row-stochastic P), so the triangle inequality bounds D' on both sides.
"""

from __future__ import annotations

from certify.claims import Claim, Inequality, layers_only, register
from certify.claims.collapse import THESIS
from certify.core.config import Case


def residual_attention(case: Case, allow_mask: bool) -> str | None:
    """X' = X + P X V^T in every layer (give V = I for X + P X); a mask only where allowed."""
    return layers_only(case, "X' = X + P X V^T alone (give V = I for X + P X)",
                       allowed=("mask",) if allow_mask else (), required=("residual", "V"))


def _claim(id, statement, inequalities, hypotheses, allow_mask):
    return register(Claim(id=id, statement=statement, inequalities=inequalities, source=THESIS,
                          hypotheses=hypotheses, applies=lambda case: residual_attention(case, allow_mask)))


# Both derived in proofs/residual_two_sided.py.
_claim("residual.two_sided", "(1 - ||V||_2 tau) D <= D' <= (1 + ||V||_2 tau) D for X' = X + P X V^T",
       (Inequality("(1 - v*tau)*D", "D_out", "lower"), Inequality("D_out", "(1 + v*tau)*D", "upper")),
       "a residual layer X + P X V^T, masked or not, no FFN or LayerNorm", True)
# tau <= 1 - exp(-a D^2) (collapse.tau, unmasked) turns both sides into bounds in a and D alone.
_claim("residual.two_sided.global",
       "(1 - ||V||_2 (1 - exp(-a D^2))) D <= D' <= (1 + ||V||_2 (1 - exp(-a D^2))) D for X' = X + P X V^T",
       (Inequality("(1 - v*(1 - exp(-a*D**2)))*D", "D_out", "lower"),
        Inequality("D_out", "(1 + v*(1 - exp(-a*D**2)))*D", "upper")),
       "a residual layer X + P X V^T, no mask, FFN or LayerNorm", False)
