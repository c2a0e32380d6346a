"""The thesis's feed-forward family (docs/claims.md, ffn.lipschitz).

A token-wise L-Lipschitz f after attention: D(f(PX)) <= L D(PX) <= L (1 - exp(-a D^2)) D
<= L a D^3, with L = ||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), see certify.core.lipschitz.
"""

from __future__ import annotations

from certify.claims import Claim, Inequality, layers_only, register
from certify.claims.collapse import THESIS
from certify.core.config import Case


def attention_then_ffn(case: Case) -> str | None:
    """X' = f(P X): an FFN in every layer, no value matrix, mask, residual attention or LayerNorm."""
    return layers_only(case, "X' = f(P X) alone", required=("ffn",))


register(Claim(
    id="ffn.lipschitz",
    statement="D(f(PX)) <= L (1 - exp(-a D^2)) D <= L a D^3, L = ||W2||_2 Lip(s) ||W1||_2 (1 + that for a "
              "residual FFN), Lip(ReLU) = 1, Lip(GELU) = (1 + erf(1))/2 + 1/(e sqrt(pi))",
    inequalities=(Inequality("D_out", "L*(1 - exp(-a*D**2))*D"), Inequality("D_out", "L*a*D**3")),
    source=THESIS,
    hypotheses="pure self-attention followed by an MLP f (ReLU or GELU, residual or not), no V, mask or LayerNorm",
    applies=attention_then_ffn,
))
