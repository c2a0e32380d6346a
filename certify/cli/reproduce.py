"""`certify reproduce FIGURE [--out DIR] [--long] [--seed N] [--strict]`: a paper's figure, reproduced.

FIGURE is one of wu-fig1, wu-fig2, wu-fig3 (Wu et al. 2024, see certify.studies.wu.studies).  Writes
FIGURE.png, FIGURE.csv (the plotted numbers) and FIGURE.json (settings, the certified spot check,
the paper's findings and whether this run shows them) into DIR.  The curves are float64
simulations; the spot check is ball arithmetic.  Default sizes take seconds; --long runs the
paper-sized study.  Exit 0 when written (with --strict: and every finding reproduced, else 1),
2 on bad input.
"""

from __future__ import annotations

from certify.studies.wu import figures
from certify.studies.wu import reproduce
from certify.studies.wu import studies


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("reproduce", help="reproduce a paper's figure (wu-fig1, wu-fig2, wu-fig3) as PNG and CSV",
                              description=__doc__.splitlines()[0])
    p.add_argument("figure", metavar="FIGURE", choices=sorted(studies.STUDIES),
                   help="one of " + ", ".join(sorted(studies.STUDIES)))
    p.add_argument("--out", default="certify-figures", metavar="DIR", help="output folder (default certify-figures)")
    p.add_argument("--long", action="store_true", help="paper-sized: more tokens, depth and inputs (minutes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random model and inputs (default 0)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a finding of the paper is not reproduced")
    p.set_defaults(run=run)


def run(args) -> int:
    study = studies.STUDIES[args.figure](reproduce.LONG if args.long else reproduce.CI, args.seed)
    paths = figures.write(study, args.out)
    print(f"{args.figure}: " + ", ".join(str(path) for path in paths.values()))
    for note in study.notes:
        print(f"  note: {note}")
    for spot in study.spot_checks:
        print(f"  certified spot check: {spot.configuration}: {spot.summary()}")
    for finding in study.findings:
        print(f"  {'reproduced' if finding.reproduced else 'NOT reproduced'}: {finding.statement} ({finding.detail})")
    return 1 if args.strict and not all(f.reproduced for f in study.findings) else 0
