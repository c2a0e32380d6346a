"""The thesis's value-matrix family (docs/claims.md, value.bounded and value.expansive).

X_{t+1} = P_t X_t V^T: one head with a value matrix, no residual, FFN, LayerNorm or mask (the
factor 1 - exp(-a D^2) bounds tau(P) for unmasked attention only).
"""

from __future__ import annotations

from certify.claims import Claim, Inequality, layers_only, register
from certify.claims.collapse import THESIS
from certify.core.config import Case


def value_attention(case: Case) -> str | None:
    """X' = P X V^T: a V in every layer and nothing else but attention."""
    return layers_only(case, "X' = P X V^T alone", required=("V",))


def one_value_matrix(case: Case) -> str | None:
    """value.bounded iterates one linear map V: every layer has the same V (A may change)."""
    reason = value_attention(case)
    if reason:
        return reason
    if any(layer.V != case.layers[0].V for layer in case.layers):
        return "the layers have different value matrices; the claim iterates one V (M bounds its powers)"
    return None


def _claim(id, statement, inequalities, hypotheses, applies, scope="layer"):
    return register(Claim(id=id, statement=statement, inequalities=inequalities, source=THESIS,
                          hypotheses=hypotheses, applies=applies, scope=scope))


# After every layer t <= T (scope "stack"), lhs D_t / M against the map D -> (1 - exp(-a_s M^2 D_0^2)) D
# iterated from D_0 through layers s < t: D_t <= M prod_{s<t} (1 - exp(-a_s M^2 D_0^2)) D_0, which for one
# repeated A is M (1 - exp(-a M^2 D_0^2))^t D_0.  Every factor is valid because D_s <= ||V^s||_2 D_0 <= M D_0
# and tau(P_s) <= 1 - exp(-a_s D_s^2).  M is the whole stack's max_{k <= T}, also at t < T: the bound
# increases with M (the leading M, and each factor since 1 - exp(-x) increases with x), so M_T >= M_t
# gives a weaker but still true bound for every prefix.
_claim("value.bounded",
       "D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0 for every t <= T, with M = max_{k <= T} ||V^k||_2, T the number "
       "of layers (layers with different A: the product of their factors)",
       (Inequality("D_out/M", "(1 - exp(-a*M**2*D_0**2))*D"),),
       "a stack X_{t+1} = P_t X_t V^T with the same V in every layer, no mask, residual, FFN or LayerNorm",
       one_value_matrix, scope="stack")
_claim("value.expansive",
       "D' <= rho (1 - exp(-a D^2)) D <= rho a D^3 with rho = ||V||_2 (the interesting case is rho > 1)",
       (Inequality("D_out", "v*(1 - exp(-a*D**2))*D"), Inequality("D_out", "v*a*D**3")),
       "X' = P X V^T, any V, no mask, residual, FFN or LayerNorm", value_attention)
