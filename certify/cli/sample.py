"""certify sample [--claim ID | --bound EXPR] --n N --d D [--d-k K] --count K --seed S --out DIR [--distribution NAME]
[--mask M] [--value K [--value-norm R]] [--residual] [--ffn relu|gelu [--hidden H] [--ffn-residual]] ..."""

from __future__ import annotations

from pathlib import Path

from certify.core import jsonfile, numbers
from certify import engine, jobs
from certify.search import campaign
from certify.cli import options
from certify.core import progress
from certify.core.verdicts import labelled
from certify.errors import counted
from certify.report import campaign_page
from certify.search import samplers

LISTED = 10  # failed chunks named in the summary


def add_parser(subparsers):
    """Register `certify sample` and its options."""
    p = subparsers.add_parser(
        "sample", help="decide a claim or a bound on many sampled configurations (resumable)",
        description="Sample configurations from a distribution (reproducible from the seed), screen them in "
        "float64 and decide every one with ball arithmetic, on every core. Interrupted (Ctrl-C, SIGTERM as from "
        "timeout or a cluster's scheduler, SIGHUP: exit 130, 143, 129; or killed), the same command continues where it "
        "stopped. Writes records, certificates (every violation, a sample of "
        "holds), summary.json, the histograms and the report page index.html into --out. Exit 0 all hold, "
        "1 some violated, 3 some undecided or the campaign incomplete, 2 bad input.")
    options.add_target(p)
    p.add_argument("--distribution", default="gaussian", metavar="NAME",
                   help=f"one of {', '.join(samplers.DISTRIBUTIONS)} (default gaussian; see certify.search.samplers)")
    p.add_argument("--n", type=options.integer, required=True, help="tokens per configuration")
    p.add_argument("--d", type=options.integer, required=True, help="token dimension")
    p.add_argument("--d-k", dest="d_k", type=options.integer, metavar="K",
                   help="a thin head, as real models have (BERT-base: d = 768, d_k = 64): W_Q, W_K of d x K "
                   "(1 <= K < d) with \"d_k\": K instead of a d x d A, so that a is certified through a K x K "
                   "reduction, not a d x d norm. Entries iid N(0, s^2), s^2 = 2 sqrt(K) / (sqrt(d) + sqrt(K))^2, "
                   "which keeps ||A||_2 near the full A's 2 and a D^2 in the same range (heavy-tailed: s t_3; "
                   "layernorm-*: their own initialisation with d_k = K instead of d/2)")
    p.add_argument("--count", type=options.integer, required=True, help="number of configurations")
    p.add_argument("--seed", type=options.integer, default=0, help="campaign seed (default 0)")
    options.add_l_range(p, "set each configuration's temperature so that L = a D^2 is log-uniform in [LO, HI]; "
                        + samplers.L_RANGE.rule)
    layer = p.add_argument_group("the layer beyond the head (default: pure attention X' = P X; drawn after the "
                                 "tokens and the head, see certify.search.samplers)")
    layer.add_argument("--mask", choices=samplers.MASKS, help="a named mask: causal, sliding (previous, self, next) "
                       "or uni (previous, self)")
    layer.add_argument("--value", choices=samplers.VALUES, help="a value matrix V: gaussian (iid N(0, 1/d)) or "
                       "orthogonal (Haar)")
    layer.add_argument("--value-norm", type=options.real, metavar="R", help="scale V to ||V||_2 = R (with --value)")
    layer.add_argument("--residual", action="store_true", help="X' = X + P X V^T (the residual claims need --value)")
    layer.add_argument("--ffn", choices=samplers.ACTIVATIONS, help="a token-wise MLP after attention, ReLU or GELU")
    layer.add_argument("--hidden", type=options.integer, metavar="H", help="the FFN's hidden width (default 2d)")
    layer.add_argument("--ffn-residual", action="store_true", help="the FFN adds its input: x + f(x)")
    p.add_argument("--out", type=options.out_folder, required=True, metavar="DIR",
                   help="folder: the campaign (created; resumed if it exists); its summary.json and report page are named "
                   "at the end")
    p.add_argument("--workers", type=options.integer, default=None,
                   help="processes, or the embedded Dask cluster's worker processes (default: every core)")
    p.add_argument("--executor", choices=jobs.KINDS, default="pool",
                   help="pool: a process pool on this machine (default); dask: Dask distributed (pip install "
                   "'certify[dask]'), an embedded cluster on this machine or the one at --scheduler")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: the address of a running Dask scheduler (e.g. tcp://host:8786), whose "
                   "workers can import certify")
    options.add_max_prec(p)
    p.add_argument("--tier", choices=campaign.TIERS, default="arb",
                   help="arb: every configuration through the ball-arithmetic engine (default); tier3: the "
                   "rigorous float64 tier first (every one-layer claim and bound it covers: collapse.*, init.scaling, "
                   "value.expansive, residual.*, ffn.lipschitz, see `certify.search.tier3.COVERED`), the engine for "
                   "what it cannot decide")
    p.add_argument("--stop-after", type=options.integer, metavar="K",
                   help="decide K more configurations, or up to one chunk more (this run's chunks hold about "
                   "K / (8 x workers)), then stop; the same command again (without --restart) continues")
    p.add_argument("--restart", action="store_true", help="discard a previous campaign in --out")
    options.add_limits(p)  # kept in the manifest: every configuration is decided, and re-derived, under them
    options.alias(p, "--no-progress", dest="progress", action="store_false")  # before -q existed
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    options.add_figure_options(p)
    p.set_defaults(run=run)


def render(summary: dict, out_dir: str, restart: bool = False) -> list[str]:
    """The lines `certify sample` prints for a campaign summary: verdict counts, tiers, undecided reasons, the
    largest lhs/rhs, relative margins |rhs - lhs| / rhs by decade, float64's mistakes, the spread of L = a
    D^2, and where the certificates, summary and report page are in `out_dir`; `restart`: the command was given
    --restart, which the same command run again would repeat."""
    out = Path(out_dir)
    m = summary["campaign"]
    target = campaign.summary_target(summary)
    counts, f64, L = summary["counts"], summary["float64"], summary["L"]
    parts = [f"{key}={m[key]}" for key in ("d_k", *campaign.PARTS) if key in m]
    lines = [f"{target} on {m['distribution']} (n={m['n']}, d={m['d']}, seed {m['seed']}"
             + (f", {', '.join(parts)}" if parts else "")
             + (f", L in [{m['L_range'][0]:g}, {m['L_range'][1]:g}]" if m["L_range"] else "")
             + f"): {summary['decided']} of {m['count']} configurations checked"]
    unconfirmed = campaign.uncertified_holds(summary)
    lines += [f"  {verdict:<10} {counts[verdict]:>9}" + (f"  ({unconfirmed})" if verdict == engine.HOLDS and unconfirmed
                                                        else "") for verdict in counts]
    if summary.get("tier3_off"):
        lines.append(f"  {summary['tier3_off']}; arb decided in its place in this run")
    if summary["tiers"].get("tier3"):
        lines.append("  " + campaign.tiers_line(summary))
    for kind, k in summary["undecided_reasons"].items():
        lines.append(f"    undecided: {k} x {kind}")
    if summary["largest_ratio"]:
        r = summary["largest_ratio"]
        verdict = labelled(r["verdict"], r.get("tier") != "tier3")  # tier 3 decides without the checker
        lines.append(f"  largest lhs/rhs  {r['ratio']:.6g} (configuration {r['i']}, {verdict}, "
                     f"relative margin {numbers.power_of_ten(r['margin_log10'])})")
    for verdict, spread in summary["margins"].items():
        if spread["log10"]:
            s = spread["log10"]
            lines.append(f"  relative margin |rhs - lhs| / rhs ({verdict}): min {numbers.power_of_ten(s['min'])}, "
                         f"median {numbers.power_of_ten(s['median'])}, max {numbers.power_of_ten(s['max'])}")
            lines += [f"    {label:<16} {k:>9}" for label, k in spread["decades"].items()]
    lines.append(f"  float64 alone: wrong verdict on {f64['wrong']}, a verdict where arb is undecided on "
                 f"{f64['says_decided_but_undecided']}; sides exactly equal on {f64['equal_sides']}; "
                 f"bound computed as exactly D on {f64['bound_is_D']}, exp(-a D^2) = 0 on {f64['gap_is_zero']}")
    if "min" in L:
        lines.append(f"  L = a D^2: min {L['min']:.3g}, median {L['median']:.3g}, max {L['max']:.3g}  ("
                     + ", ".join(f"{label}: {k}" for label, k in L["regimes"].items()) + ")")
    certs = summary["certificates"]
    limits = campaign.recheck_options(summary)
    lines.append(f"  certificates: {certs['violated']} violations, {certs['holds']} sampled holds in "
                 f"{out / 'certificates'}/"
                 + (f"  (e.g. certify verify {out / certs['paths'][0]}{limits})" if certs["paths"] else ""))
    if counts["undecided"]:
        lines.append(f"  undecided configurations: {out / 'undecided'}/")
    run = summary.get("run")
    if run:
        rate = f", {run['per_second']} per second" if run["per_second"] else ""
        on = " on Dask" if run.get("executor") == "dask" else ""
        workers = counted(run["workers"], "worker")
        lines.append(f"  this run: {run['decided']} checked in {run['seconds']} s ({workers}{on}{rate})")
    if run and run.get("failed_chunks"):
        lines.append(f"  {len(run['failed_chunks'])} chunk(s) not decided: their worker processes died "
                     f"(first indices {', '.join(map(str, run['failed_chunks'][:LISTED]))})")
    if not summary["complete"]:
        lines.append(f"  incomplete: run the same command again{' without --restart' if restart else ''} to continue")
    lines.append(f"  summary: {out / 'summary.json'}, report page: {out / 'index.html'}  "
                 f"(re-derive the records in arb: certify verify {out})")
    return lines


def exit_code(summary: dict) -> int:
    """As `check` for the overall verdict; a campaign not complete and without a violation is
    undecided (3): no verdict for configurations not decided."""
    return engine.EXIT_CODES[campaign.summary_verdict(summary)]


def campaign_of(args) -> campaign.Campaign:
    """The campaign that parsed `certify sample` options describe (not yet validated)."""
    return campaign.Campaign(distribution=args.distribution, n=args.n, d=args.d, d_k=args.d_k, count=args.count,
                             seed=args.seed, claim=args.claim, bound=args.bound,
                             L_range=None if args.l_range is None else tuple(args.l_range), max_prec=args.max_prec,
                             tier=args.tier, mask=args.mask, value=args.value, value_norm=args.value_norm,
                             residual=args.residual, ffn=args.ffn, hidden=args.hidden, ffn_residual=args.ffn_residual,
                             limits=vars(options.limits_of(args)))  # those changed are kept in the manifest


def run(args) -> int:
    """Run `certify sample`; return its exit code."""
    spec = campaign_of(args)
    figure = {}

    def derived(summary: dict, records: list[dict]) -> None:
        """The histograms, then the page that embeds them (in the folder, while this run holds it)."""
        from certify.figures import sample as sample_figure  # matplotlib only once the campaign has run

        figure["path"] = sample_figure.write(args.out, summary, records, fmt=args.figure_format, dpi=args.dpi)
        campaign_page.write(summary, args.out, args.argv)

    summary = campaign.run(spec, args.out, workers=args.workers, progress=progress.bars_shown(),
                           stop_after=args.stop_after, restart=args.restart, executor=args.executor,
                           scheduler=args.scheduler, on_summary=derived)
    figure_path = figure["path"]
    if args.json:
        jsonfile.echo(summary)
    else:
        print("\n".join(render(summary, args.out, args.restart)))
        print(f"  histograms of the margins and of L: {figure_path}")
    return exit_code(summary)
