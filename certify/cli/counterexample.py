"""`certify counterexample NAME [options] [--out CERT]`: build and certify a named counterexample.

Names and their options: `certify counterexample --help`, `certify counterexample NAME --help`.
Exit 0 certified (the counterexample exists, confirmed by the trusted checker), 3 undecided,
1 when the checker does not confirm the engine's certificate, 2 bad input.
"""

from __future__ import annotations

from certify.engine import certificate
from certify.studies import counterexamples


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("counterexample", help="certify a named counterexample (wu-fig1, ln-equilibria, ...)",
                              description=__doc__.splitlines()[0])
    names = p.add_subparsers(dest="counterexample", metavar="NAME")
    names.required = True
    for name in counterexamples.REGISTRY:
        module = counterexamples.load(name)
        q = names.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(q)
        q.add_argument("--out", metavar="CERT", help="write the certificate here")
        q.set_defaults(run=run)


def run(args) -> int:
    outcome = counterexamples.load(args.counterexample).build(args)
    print(f"{args.counterexample}:")
    for line in outcome.summary:
        print(line)
    if args.out:
        print(f"certificate: {certificate.write(outcome.certificate, args.out)}")
    if not outcome.confirmed:
        print(f"the checker does not confirm the certificate: {outcome.message}")
        return 1
    return 0 if outcome.verdict == "certified" else 3
