"""Proofs: the index of the symbolic derivations in proofs/, the certified branch and bound their
one- and two-variable steps rely on, and `certify prove`, claims for every configuration of a
region (region.py: reductions, tilt enclosures, closing tests, profiles of the bounds)."""
