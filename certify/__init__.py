"""certify: rigorous certification of the mathematics of iterated self-attention.

    >>> import certify
    >>> result = certify.check("layer.json")                  # collapse.global
    >>> result = certify.check(config_dict, bound="(1-exp(-a*D**2/8))*D")
    >>> result.verdict, result.margin, result.certificate

Verdicts come from ball arithmetic (python-flint arb) with adaptive precision; every decided
verdict is re-derived by the independent checker (certify.checker) before it is returned.
"""

from certify.engine import Result, check
from certify.errors import BadInput

__version__ = "0.1.0"
__all__ = ["check", "Result", "BadInput", "__version__"]
