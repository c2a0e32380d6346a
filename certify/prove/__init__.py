"""Proofs: the index of the symbolic derivations in proofs/ and the certified branch and bound
their one- and two-variable steps rely on."""
