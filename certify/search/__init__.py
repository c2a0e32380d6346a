"""Untrusted search: samplers, adversarial optimisation, shrinking.  It proposes; the engine decides."""
