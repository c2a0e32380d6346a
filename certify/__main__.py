"""`python -m certify` runs the command line."""

from certify.cli import entry

entry()
