"""`certify reproduce FIGURE [--out DIR] [--long] [--setting bert|project] [--dropout P] [--seed N] [--strict]
[--format png|pdf|svg] [--dpi N]`:
a paper's figure, reproduced.

FIGURE is one of wu-fig1, wu-fig2, wu-fig3 (Wu et al. 2024, see certify.studies.wu.studies).  Writes
FIGURE.png (or .pdf, .svg: --format), FIGURE.csv (the plotted numbers) and FIGURE.json (settings, the
spot check in ball arithmetic (not certified), the findings: each statement of the paper's caption, per
mask and variant, agreeing or not with this run, a disagreement with the cause a control run measured;
the caption) into DIR.  The curves are float64
simulations; the spot check is ball arithmetic.

--setting chooses how the random layers are built (certify.studies.wu.reproduce): bert (BERT's
initialisation, heads with W_O, N(0, 0.02^2), standard LayerNorm, the sphere LayerNorm as the
variant SAN+LN(sphere)) or project (one head, N(0, 1/d), the sphere LayerNorm).  Default sizes take
seconds in the project setting; --long runs the paper-sized study, in the bert setting unless
--setting says otherwise (minutes; progress on stderr).  --dropout P adds the train-mode curves
with dropout P next to the eval-mode ones (default: 0.1 in the bert setting, none in project).
Exit 0 when written (with --strict: and no finding disagrees without a measured cause, else 1),
2 on bad input.
"""

from __future__ import annotations

import json

from certify.core import jsonfile
from certify.cli import options
from certify.core import progress
from certify.figures import wu as wu_figures
from certify.studies.wu import reproduce
from certify.studies.wu import studies


def add_parser(subparsers) -> None:
    """Register `certify reproduce` and its options."""
    p = subparsers.add_parser("reproduce", help="reproduce a paper's figure (wu-fig1, wu-fig2, wu-fig3): the "
                              "figure (PNG, PDF or SVG), its numbers (CSV) and a JSON",
                              description="Reproduce a figure of Wu et al. (2024): write the figure (PNG, PDF or "
                              "SVG), the plotted numbers (CSV) and a JSON of settings, spot checks (ball arithmetic, "
                              "not certified), findings and the caption. Exit 0 when written (with --strict: and no "
                              "finding disagrees without a measured cause, else 1), 2 bad input.")
    p.add_argument("figure", metavar="FIGURE", choices=sorted(studies.STUDIES),
                   help="one of " + ", ".join(sorted(studies.STUDIES)))
    p.add_argument("--out", type=options.out_folder, default="certify-figures", metavar="DIR",
                   help="folder: FIGURE.FORMAT, FIGURE.csv and FIGURE.json go into it, each named (default certify-figures)")
    p.add_argument("--long", action="store_true",
                   help="paper-sized: N = 128 tokens, d = 768, 12 heads in the bert setting (minutes)")
    p.add_argument("--setting", choices=sorted(reproduce.SETTINGS),
                   help="random-init setting of wu-fig2 and wu-fig3: bert or project (default: project, bert with "
                        "--long)")
    p.add_argument("--dropout", type=options.real, metavar="P",
                   help="train-mode dropout rate of wu-fig2's extra curves (default 0.1 for bert, none for project)")
    p.add_argument("--seed", type=options.integer,
                   help="seed of the random model, inputs and dropout of wu-fig2 and wu-fig3 (default 0)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a finding disagrees with the paper and no control run explains it")
    p.add_argument("--json", action="store_true",
                   help="print FIGURE.json (settings, spot checks, findings) with the files written, instead of the summary")
    options.add_figure_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify reproduce`; return its exit code."""
    seed = 0 if args.seed is None else args.seed
    opts = studies.options(args.setting, args.long, seed, args.dropout, progress=progress.bars_shown())
    studies.unread(args.figure, {"setting": args.setting, "dropout": args.dropout, "seed": args.seed})
    study = studies.STUDIES[args.figure](opts)
    paths = wu_figures.write(study, args.out, fmt=args.figure_format, dpi=args.dpi)
    code = 1 if args.strict and not studies.all_accounted(study) else 0
    if args.json:
        data = json.loads(paths["json"].read_text(encoding="utf-8"))
        jsonfile.echo(data | {"files": {kind: str(path) for kind, path in paths.items()}})
        return code
    print(f"{args.figure}: " + ", ".join(str(path) for path in paths.values()))
    for note in study.notes:
        print(f"  note: {note}")
    for spot in study.spot_checks:
        print(f"  spot check: {spot.configuration}: {spot.summary()}")
    for finding in study.findings:
        print(f"  {finding.shown_verdict}: {finding.statement} ({finding.detail})")
        if finding.cause:
            print(f"      cause: {finding.cause}")
    return code
