"""Proofs: the index of the symbolic derivations in proofs/, the certified branch and bound their
one- and two-variable steps rely on, and `certify prove`, claims for every configuration of a
region (region.py: reductions, tilt enclosures, closing tests, profiles of the bounds).

The package is also the function `certify.prove(claim=None, *, bound=None, n, d=None, radius, norm,
time_limit=60.0, progress=None, limits=Limits())` of the Python API (certify.prove.region.prove_claim): a package cannot be replaced
by a function of the same name (importing certify.prove.region sets the attribute `certify.prove`
to the package), so the package itself is callable.

    >>> import certify
    >>> certify.prove("collapse.global", n=4, d=1, radius=2, norm=2)
"""

import sys
import types


class _CallablePackage(types.ModuleType):
    def __call__(self, claim=None, **kwargs):
        """certify.prove(...) = certify.prove.region.prove_claim(...)."""
        from certify.prove.region import prove_claim

        return prove_claim(claim, **kwargs)

    @property
    def __signature__(self):
        """prove_claim's signature, for inspect and a notebook's hint (they read (claim=None, **kwargs))."""
        import inspect

        from certify.prove.region import prove_claim

        return inspect.signature(prove_claim)


sys.modules[__name__].__class__ = _CallablePackage
