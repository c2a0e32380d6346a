"""The thesis's collapse family (docs/claims.md; the claims and conventions of "one head as a dynamical system")."""

from __future__ import annotations

from certify.claims import Claim, Inequality, layers_only, register
from certify.core.config import Case

THESIS = "the thesis on iterated self-attention, chapter \"one head as a dynamical system\""


def pure_attention(case: Case) -> str | None:
    """collapse.* is about X' = P X: one head, no V, mask, residual, FFN or LayerNorm (biases ok)."""
    return layers_only(case, "pure self-attention X' = P X")


def any_row_stochastic(case: Case) -> str | None:
    """Step 1 holds for any row-stochastic P, masked or not; V, residual, FFN and LN change X'."""
    return layers_only(case, "D(PX) against tau(P) D(X), masked or not", allowed=("mask",))


def _claim(id, statement, inequalities, hypotheses, applies=pure_attention, scope="layer", source=THESIS):
    return register(Claim(id=id, statement=statement, inequalities=inequalities, source=source,
                          hypotheses=hypotheses, applies=applies, scope=scope))


GLOBAL_BOUND = "(1 - exp(-a*D**2))*D"

_claim("collapse.global", "D(PX) <= (1 - exp(-a D^2)) D for every X and A, a = ||A||_2",
       (Inequality("D_out", GLOBAL_BOUND),),
       "pure self-attention (biases and temperature allowed), no mask")
# Sharper, and attained by two antipodal tokens: tau(P) <= tanh(a D^2 / 4) (Birkhoff-Hopf), and
# tanh(x/4) <= 1 - exp(-x); proofs/collapse_tanh.py.
_claim("collapse.tanh", "D(PX) <= tanh(a D^2 / 4) D: the sharp form of collapse.global (Birkhoff-Hopf)",
       (Inequality("D_out", "tanh(a*D**2/4)*D"),),
       "pure self-attention (biases and temperature allowed), no mask",
       source="sharpening of the thesis's collapse.global (Birkhoff-Hopf bound on the Dobrushin coefficient)")
_claim("collapse.dobrushin", "step 1: D(PX) <= tau(P) D(X) for any row-stochastic P",
       (Inequality("D_PX", "tau*D"),),
       "any attention matrix, masked or not", applies=any_row_stochastic)
_claim("collapse.tau", "step 2: tau(P) <= 1 - exp(-a D^2), from the softmax spread a D^2",
       (Inequality("tau", "1 - exp(-a*D**2)"),),
       "pure self-attention, no mask")
_claim("collapse.cubic", "D(PX) <= a D^3 (since 1 - exp(-x) <= x)",
       (Inequality("D_out", "a*D**3"),),
       "pure self-attention, no mask")
_claim("collapse.trajectory", "D_t <= g_{a_t}(... g_{a_1}(D_0)) for every t <= T, g_a(D) = (1 - exp(-a D^2)) D",
       (Inequality("D_out", GLOBAL_BOUND),),
       "a stack of pure self-attention layers", scope="stack")
