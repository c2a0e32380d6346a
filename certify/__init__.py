"""certify: rigorous certification of the mathematics of iterated self-attention.

    >>> import certify
    >>> result = certify.check("layer.json")                  # collapse.global
    >>> result = certify.check(config_dict, bound="(1-exp(-a*D**2/8))*D")
    >>> result.verdict, result.margin, result.certificate

Verdicts come from ball arithmetic (python-flint arb) with adaptive precision; every decided
verdict is re-derived by the independent checker (certify_checker) before it is returned.

The engine is imported on first use of `check` or `Result`, so that importing a part of certify
(or the checker) does not load numpy, scipy and the engine.
"""

from certify.errors import BadInput

__version__ = "0.1.0"
__all__ = ["check", "Result", "BadInput", "__version__"]


def __getattr__(name):
    if name in ("check", "Result"):
        from certify import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'certify' has no attribute {name!r}")
