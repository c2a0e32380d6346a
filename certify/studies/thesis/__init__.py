"""The thesis's claims beyond pure attention: value matrices, residuals, FFNs (cases, named
counterexamples and the `certify run` section)."""
