"""`certify counterexample NAME [options] [--out CERT] [--json]`: build and certify a named counterexample.

Names and their options: `certify counterexample --help`, `certify counterexample NAME --help`.
Exit 0 certified (the counterexample exists, confirmed by the trusted checker), 3 refuted (these inputs are
proven not to be the counterexample: a check proven false, confirmed by the checker), undecided, or not
confirmed by the checker (its verdict is then shown "(not certified)", in the text and the JSON; never 1,
the code of a violation: no claim is violated), 2 bad input.
"""

from __future__ import annotations

from certify.core import jsonfile, progress
from certify.cli import options
from certify.engine import certificate
from certify.studies import counterexamples

EXITS = ("Exit 0 when the counterexample is certified and the independent checker confirms it, 3 otherwise "
         "(refuted: these inputs are proven not to be the counterexample; undecided; or not confirmed), 2 bad input.")


def add_parser(subparsers) -> None:
    """Register `certify counterexample` and its options."""
    p = subparsers.add_parser("counterexample", help="certify a named counterexample (wu-fig1, ln-equilibria, ...)",
                              description=f"{__doc__.splitlines()[0]} {EXITS}")
    names = p.add_subparsers(dest="counterexample", metavar="NAME")
    names.required = True
    for name in counterexamples.REGISTRY:
        module = counterexamples.load(name)
        q = names.add_parser(name, help=module.HELP, description=f"{module.HELP}. {EXITS}")
        module.add_arguments(q)
        q.add_argument("--out", type=options.out_file, metavar="CERT", help="file: write the certificate here")
        options.add_limits(q)  # the checker's, which confirms the certificate (`certify verify` needs the same)
        q.add_argument("--json", action="store_true",
                       help="print the outcome as JSON (verdict, confirmed, the checker's message, the summary lines)")
        q.set_defaults(run=run)


def run(args) -> int:
    """Run `certify counterexample`; return its exit code."""
    args.limits = options.limits_of(args)  # build(args) hands them to the checker
    module = counterexamples.load(args.counterexample)
    # ln-equilibria --n 8 takes seconds in silence otherwise: each stage of each precision is shown (stderr)
    with progress.bar(desc=f"certify counterexample {args.counterexample}",
                      bar_format="{desc}{postfix} [{elapsed}]") as bar:
        args.stage = bar.set_postfix_str  # build(args) reports its stages there (certify_named)
        outcome = module.build(args)
    # one past the limits is not written: `certify verify` with the same limits would refuse it
    written = str(certificate.write(outcome.certificate, args.out)) if args.out and not outcome.refused else None
    # 3 for refuted, undecided or unconfirmed; never 1 (violated): failing to be the counterexample violates no claim
    code = 0 if outcome.confirmed and outcome.verdict == "certified" else 3
    if args.json:
        jsonfile.echo({"name": args.counterexample, "verdict": outcome.shown_verdict, "confirmed": outcome.confirmed,
                       "message": outcome.message, "summary": [line.strip() for line in outcome.lines],
                       "certificate": written})
        return code
    print(f"{args.counterexample}:")
    for line in outcome.lines:
        print(line)
    if written:
        print(f"certificate: {written}")
    if not outcome.confirmed:
        print(f"the checker does not confirm the certificate: {outcome.message}"
              + ("; no certificate written" if args.out and not written else ""))
    return code
