"""init.scaling on one configuration (docs/claims.md): what a single case can certify.

The claim proper is about scaling in d (a D^2 grows with d under standard initialisation), which
`certify init` tabulates over sampled configurations.  On one configuration the certifiable part
is the global bound with the gap g = exp(-a D^2) kept itself: D' <= (1 - g) D holds with a
certified g > 0 even where float64 rounds 1 - g to 1.0 (a D^2 >= 54 ln 2) or g to 0
(a D^2 >= 1075 ln 2); certify.core.float64_limits says which, decided in arb.
"""

from __future__ import annotations

from certify.claims import Claim, Inequality, register
from certify.claims.collapse import THESIS, pure_attention

register(Claim(
    id="init.scaling",
    statement="on this configuration D' <= (1 - g) D with g = exp(-a D^2) certified > 0 (kept itself, "
              "never as 1 - g), whatever float64 makes of it; the growth of a D^2 with d is `certify init`'s table",
    inequalities=(Inequality("D_out", "(1 - gap)*D"),),
    source=THESIS,
    hypotheses="pure self-attention, no mask (typically a standard-initialisation layer on LayerNorm-scale tokens)",
    applies=pure_attention,
))
