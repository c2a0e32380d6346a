"""certify prove [CLAIM | --bound EXPR] --n N [--d D] --radius R --norm A [--time-limit S] [--out PROOF]
[--resume PROOF] [--json]

A claim for every configuration of a region (certify.prove.region): exit 0 proved, 1 violated
(a certified counterexample inside the region, written as a configuration file), 3 undecided
(or a verdict the checker did not confirm), 2 bad input; 130 on Ctrl-C (143 on SIGTERM, 129 on SIGHUP), after reporting (and writing
with --out) the part proved so far as a time-limit stop at that moment would.  --resume continues an
undecided proof from its open boxes.
"""

from __future__ import annotations

import math
from pathlib import Path

from certify.cli import options
from certify.core import jsonfile
from certify.core.limits import limit_options
from certify.core import progress as progress_display
from certify.core.verdicts import NOT_CERTIFIED, labelled
from certify.engine import certificate as certificates
from certify.errors import Interrupted, counted
from certify.prove import region as region_proof



def add_parser(subparsers):
    """Register `certify prove` and its options."""
    p = subparsers.add_parser("prove", help="prove a claim for every configuration in a region",
                              description="Prove D(PX) <= D g(a D^2) (collapse.global, collapse.tanh or --bound) for "
                              "every one-layer pure self-attention with n tokens, ||x_i|| <= radius and ||A||_2 <= norm "
                              "(n = 2: with or without query/key biases; d = 1 with n >= 3: scores x_i A x_j, no biases), "
                              "by branch and bound on a reduction (n = 2 in any dimension; d = 1 with up to 8 tokens). "
                              "Exit 0 proved, 1 violated, 3 undecided (or not confirmed by the checker), 2 bad input. "
                              "Ctrl-C stops the search as the time limit would at that moment: the part proved so far "
                              "is reported (and written with --out, a certificate the checker confirms), then exit "
                              "130 (143 for SIGTERM, 129 for SIGHUP, which stop it the same way). --resume PROOF continues such an "
                              "undecided proof.")
    p.add_argument("claim", nargs="?", type=options.claim_id, help="collapse.global (default) or collapse.tanh")
    p.add_argument("--bound", metavar="EXPR", help='a bound D*g(a*D**2), e.g. "(1-exp(-a*D**2/2))*D"')
    p.add_argument("--n", type=options.integer, required=True, help="number of tokens")
    p.add_argument("--d", type=options.integer, help="dimension (omit for n = 2: the proof covers every d)")
    p.add_argument("--radius", required=True, help="||x_i|| <= radius (exact: 2, 0.5, 1/3)")
    p.add_argument("--norm", required=True, help="||A||_2 <= norm (exact)")
    p.add_argument("--time-limit", type=options.real, default=60.0, metavar="S",
                   help="seconds of search (default 60); the checker's replay of the proof comes after it")
    p.add_argument("--out", type=options.out_file, metavar="PROOF",
                   help="file: write the region-proof certificate here (once the checker confirms it)")
    p.add_argument("--counterexample", type=options.out_file, metavar="CONFIG",
                   help="where a violation's configuration goes (default: next to --out, else counterexample.json)")
    p.add_argument("--resume", type=options.path, metavar="PROOF",
                   help="continue an undecided proof of the same claim and region (stopped by --time-limit or Ctrl-C) "
                   "from its open boxes; the checker confirms it first and the merged proof in full")
    options.add_limits(p)  # reading --resume, and the checker's (`certify verify` of the proof needs the same)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify prove`; return its exit code."""
    region, profile = region_proof.prepare(args.claim, args.bound, args.n, args.d, args.radius, args.norm,
                                           args.time_limit)  # bad input before the progress bar
    # a violation's configuration was written over the certificate just written (which the report still named)
    options.not_overwriting("--counterexample", args.counterexample, {"--out": args.out, "--resume": args.resume})
    limits = options.limits_of(args)  # --resume's reader and the checker's
    if args.resume and progress_display.bars_shown():  # the checker replays its every leaf first: 10,000 leaves of six
        # tokens took a minute, with nothing on the screen
        progress_display.line(f"certify prove: the checker confirms {args.resume} before the search resumes it")
    checked = set()  # the leaf tests the checker closes confirming it (certificates.confirm): not replayed again
    resume = (region_proof.resumable(certificates.read(args.resume, limits), region, profile, limits, checked)
              if args.resume else None)
    start = region_proof.preflight(region, profile, limits, resume, checked)  # a limit no box fits: bad input before
    # the progress bar, and the search's start, priced once
    bar = progress_display.bar(total=1.0, mininterval=0.5, desc="certify prove",
                               bar_format="{desc}: {percentage:5.1f}% of the volume proved |{bar:20}|{postfix} [{elapsed}]")

    def progress(closed, queue, fraction, stage=None):
        bar.set_postfix_str(stage or f"{closed} boxes closed, {queue} queued", refresh=False)
        shown = math.floor(fraction * 1000) / 1000  # rounded down: 99.96% with boxes open is not "100.0%"
        bar.update(shown - bar.n)  # redraws at most every mininterval
        if stage:  # the checker's replay (seconds for thousands of leaves): drawn as it begins
            bar.refresh()

    try:
        result = region_proof.prove(region, profile, time_limit=args.time_limit, progress=progress,
                                    interruptible=True, limits=limits, start=start)
    finally:
        bar.close()
    written = _write(result, args)
    info = summary(result) | written
    if args.json:
        jsonfile.echo(info)
    else:
        _render(info, _continuable(result, written), unwritten=bool(args.out) and not written["certificate"],
                recheck=limit_options(args.limit))
    if result.interrupted:  # after the report: the exit code says the run was stopped, not what it proved
        what = ("its certified counterexample" if written["counterexample"] else "the part proved so far"
                if result.confirmed else "a result the checker did not confirm")
        kept = f"written to {written['certificate']}" if written["certificate"] else "reported above"
        more = f": continue it with --resume {written['certificate']}" if _continuable(result, written) else ""
        raise Interrupted(f"the search stopped early; {what} is {kept}{more}")
    return result.exit_code


def summary(result: region_proof.ProofResult) -> dict:
    """A region proof as a JSON-ready dict: verdict (marked not certified unless the checker confirmed it),
    claim, bound, region, reduction and its variables, its scope (biases covered or not), boxes and leaves (with a count per closing method),
    boxes left open, the volume proved, seconds, which of the checker's limits stopped the search (or None) and the
    checker's message."""
    methods: dict[str, int] = {}
    for _, method, _ in result.leaves:
        methods[method] = methods.get(method, 0) + 1
    return {
        "verdict": labelled(result.verdict, result.confirmed),
        "claim": result.profile.claim,
        "bound": result.profile.bound,
        "region": result.region.as_json(),
        "reduction": result.reduction.name,
        "variables": list(result.reduction.variables),
        "scope": result.reduction.scope,
        "boxes": result.boxes,
        "leaves": len(result.leaves),
        "methods": methods,
        "left": len(result.left),
        "volume_proved": region_proof.below(result.volume_proved),
        "seconds": round(result.seconds, 3),
        "interrupted": result.interrupted,
        "stopped": result.stopped or None,
        "checker": result.message,
    }


def _write(result, args) -> dict:
    out = {"certificate": None, "counterexample": None}
    if args.out and result.confirmed:  # a certificate the checker rejects is no certificate: `certify verify` rejects it
        out["certificate"] = str(jsonfile.write(result.certificate, args.out))
    if result.verdict == region_proof.VIOLATED_VERDICT and result.confirmed:
        target = args.counterexample or (Path(args.out).with_suffix(".counterexample.json") if args.out
                                         else "counterexample.json")
        out["counterexample"] = str(jsonfile.write(result.counterexample["config"], target))
    return out


def _continuable(result, written: dict) -> bool:
    """A confirmed undecided proof was written: --resume can continue it."""
    return bool(written["certificate"]) and result.verdict == region_proof.UNDECIDED and result.confirmed


def _render(info: dict, continuable: bool = False, unwritten: bool = False, recheck: str = "") -> None:
    """The human-readable report; recheck: the --limit options of the re-check commands (the checker confirmed
    what was written under them, and at the default limits `certify verify` or `check` may refuse it)."""
    r = info["region"]
    dims = f"d = {r['d']}" if r["d"] is not None else "every d"
    what = info["claim"] or f"bound {info['bound']}"
    print(f"{info['verdict'].upper()}: {what} for n = {r['n']} tokens in {dims}, ||x_i|| <= {r['radius']}, "
          f"||A||_2 <= {r['norm']}, {info['scope']}")
    methods = ", ".join(f"{name} {count}" for name, count in sorted(info["methods"].items()))
    print(f"  reduction {info['reduction']} ({', '.join(info['variables'])}): {counted(info['boxes'], 'box')}, "
          f"{counted(info['leaves'], 'leaf')}" + (f" ({methods})" if methods else "") + f", {info['seconds']} s")
    if info["verdict"].startswith("undecided"):
        unconfirmed = f" ({NOT_CERTIFIED})" if info["verdict"].endswith(f"({NOT_CERTIFIED})") else ""
        print(f"  {region_proof.percent(info['volume_proved'])} of the reduced domain proved{unconfirmed}, {counted(info['left'], 'box')} left"
              + (" (interrupted)" if info["interrupted"] else ""))
    if info["stopped"]:
        print(f"  stopped: {info['stopped']}")
    print(f"  checker: {info['checker']}")
    if info["certificate"]:
        print(f"  certificate: {info['certificate']} (re-check with `certify verify {info['certificate']}{recheck}`)")
    elif unwritten:
        print("  no certificate written: the checker did not confirm the proof")
    if continuable and not info["interrupted"]:  # an interruption's own line says it
        print(f"  continue it: the same command with --resume {info['certificate']}")
    if info["counterexample"]:
        # the target named as the proof had it: `certify check FILE` alone checks collapse.global, which holds there
        target = f"--claim {info['claim']}" if info["claim"] else f"--bound \"{info['bound']}\""
        print(f"  counterexample configuration: {info['counterexample']} "
              f"(re-check: certify check {info['counterexample']} {target}{recheck})")
