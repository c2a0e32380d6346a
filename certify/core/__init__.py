"""The mathematics, written once: exact numbers, the configuration schema, the bound grammar,
the arithmetic backends, the layers and the quantities of both papers.  Imports nothing above it."""
