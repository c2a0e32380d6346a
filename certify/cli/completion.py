"""certify completion bash|zsh|tcsh: the shell completion script of every command and option (shtab)."""

from __future__ import annotations

import shtab

SHELLS = ("bash", "zsh", "tcsh")


def add_parser(subparsers):
    """Register `certify completion` and its options."""
    p = subparsers.add_parser(
        "completion", help="print a shell completion script (bash, zsh, tcsh)",
        description="Print the completion script of certify for a shell, e.g. "
        "`certify completion bash > ~/.local/share/bash-completion/completions/certify` or, for zsh, "
        "`certify completion zsh > ~/.zfunc/_certify` (with ~/.zfunc in fpath).")
    p.add_argument("shell", choices=SHELLS, help="the shell: " + ", ".join(SHELLS))
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify completion`; return its exit code."""
    from certify.cli import build_parser  # the whole tree, every command's options

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0
