"""certify: rigorous certification of the mathematics of iterated self-attention.

    >>> import certify
    >>> result = certify.check("layer.json")                  # collapse.global
    >>> result = certify.check(config_dict, bound="(1-exp(-a*D**2/8))*D")
    >>> result.verdict, result.margin, result.certificate
    >>> certify.sample(n=8, d=4, count=1000, out="runs/s1")    # a campaign (SampleResult)
    >>> certify.attack(bound="(1-exp(-a*D**2/3))*D", n=2, d=1)  # adversarial search (AttackReport)
    >>> certify.trajectory("layer.json", layers=8)             # D_t and the bound curves (Trajectory)
    >>> certify.prove("collapse.global", n=4, d=1, radius=2, norm=2)   # a region (ProofResult)
    >>> certify.verify("cert.json")                            # the independent checker (Verification)
    >>> certify.verify("runs/m1", model="models/mine")         # a corpus run's folder, its model found here

A configuration is a file (JSON or numpy .npz), a dict of JSON values or numpy arrays.  Verdicts
come from ball arithmetic (python-flint arb) with adaptive precision; every decided verdict is
re-derived by the independent checker (certify_checker) before it is returned.

Everything but BadInput is imported on first use, so that importing a part of certify (or the
checker) does not load numpy, scipy and the engine.
"""

from certify.errors import BadInput

__version__ = "0.1.0"
__all__ = ["check", "Result", "sample", "attack", "trajectory", "prove", "verify", "BadInput", "__version__"]

# name -> (module, attribute): the public API, imported lazily
_EXPORTS = {
    "check": ("certify.api", "check"),
    "Result": ("certify.engine", "Result"),
    "sample": ("certify.search.campaign", "sample"),
    "attack": ("certify.search.attack", "attack"),
    "trajectory": ("certify.studies.trajectory", "trace"),
    "verify": ("certify.api", "verify"),
    "prove": ("certify.prove", None),  # the package is callable (certify.prove.region.prove_claim)
}


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        module_name, attribute = _EXPORTS[name]
        module = importlib.import_module(module_name)
        return module if attribute is None else getattr(module, attribute)
    raise AttributeError(f"module 'certify' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
