"""certify attack [--claim ID | --bound EXPR] [--n N] [--d D] [--d-k K] [--with-v] [--layers T] [--mask NAME]
[--seed S] [--starts K] [--budget N|Ts] [--l-range LO HI] [--max-prec BITS] [--out DIR] [--json]"""

from __future__ import annotations

import shlex
import sys
from fractions import Fraction

import numpy as np
from flint import arb

from certify import engine
from certify.core import config
from certify.core import jsonfile
from certify.core import progress
from certify.core.exponents import short_form
from certify.core.limits import limit_options
from certify.core.verdicts import NOT_CERTIFIED
from certify.cli import options
from certify.errors import Interrupted, counted
from certify.search import attack as search
from certify.search import shrink
from certify.search.attack import AttackReport


def add_parser(subparsers):
    """Register `certify attack` and its options."""
    p = subparsers.add_parser(
        "attack", help="search for tight cases and counterexamples of a claim or a bound",
        description="Maximise how badly a claim (default collapse.global) or a bound D(layer output) <= EXPR is "
        "violated over the tokens and parameters of one layer or of a stack (--layers, --mask; thin heads W_Q, W_K "
        "with --d-k), across the whole range of L = a D^2. A violation is "
        "shrunk to a simple configuration, certified with ball arithmetic and written as a certificate (exit 1). "
        "Otherwise exit 0: nothing was found, which guarantees nothing; exit 3 when a time budget ran out before the "
        "first evaluation (nothing was searched). Ctrl-C stops the search at once: the best "
        "point so far is printed (and written with --out), marked not certified unless a violation was already "
        "certified, then exit 130 (143 for SIGTERM, 129 for SIGHUP, which stop it the same way). "
        "With --out the search keeps a journal of its evaluations in DIR, and the same "
        "command run again on DIR resumes it: the journal is replayed instead of computed again, so an evaluation "
        "budget ends as one uninterrupted run would (a time budget counts the time already spent); the finalists "
        "are certified again, never taken from the journal.")
    options.add_target(p, example="(1-exp(-a*D**2/3))*D")
    p.add_argument("--n", type=options.integer, default=3, help="tokens (default 3)")
    p.add_argument("--d", type=options.integer, default=2, help="dimension (default 2)")
    p.add_argument("--d-k", dest="d_k", type=options.integer, metavar="K",
                   help="thin heads, as real models have: search the entries of W_Q and W_K (d x K, 1 <= K < d; "
                   "A = W_Q W_K^T / sqrt(K), of rank <= K) instead of those of a d x d A; the configurations and "
                   "certificates written hold \"W_Q\", \"W_K\" and \"d_k\": K")
    p.add_argument("--with-v", action="store_true", help="search over a value matrix V too (X' = P X V^T)")
    p.add_argument("--layers", type=options.integer, default=1, metavar="T",
                   help="search a stack of T layers: X_0 and every layer's parameters together (default 1; "
                   "stack claims such as collapse.trajectory and value.bounded need T >= 2 to say more than one layer)")
    p.add_argument("--mask", metavar="NAME", help="a fixed mask in every layer: causal, sliding, uni (e.g. for "
                   "mask.collapse)")
    p.add_argument("--seed", type=options.integer, default=0, help="random seed (default 0)")
    p.add_argument("--starts", type=options.integer, help="local optimisations from random starts (default: from the budget, "
                   f"{search.MIN_STARTS} to {search.DEFAULT_STARTS}); before them {search.EXTREMAL_POINTS} points near "
                   "the known extremal structure (two opposite groups of tokens along A's top singular direction) are "
                   "evaluated across the range of L")
    p.add_argument("--budget", default=search.DEFAULT_BUDGET, metavar="N|Ts",
                   help=f"evaluations (reproducible, resumed or not; default {search.DEFAULT_BUDGET}) or seconds, "
                   "e.g. 10s (a resumed search counts those spent before; it ends at "
                   f"{search.MAX_EVALUATIONS} evaluations too)")
    options.add_l_range(p, "the range of L = a D^2 searched (default {:g} {:g}); ".format(*search.DEFAULT_L_RANGE)
                        + search.L_RANGE.rule,
                        default=search.DEFAULT_L_RANGE)
    options.add_max_prec(p, default=search.CHECK_MAX_PREC, what="of the ball arithmetic that certifies a candidate")
    options.add_limits(p)  # the engine's, certifying the candidates
    p.add_argument("--out", type=options.out_folder, metavar="DIR", help="folder (new, or resumed: the same attack "
                   "only): attack.json (the parameters) and journal.txt (the evaluations) as the search goes, then "
                   "best.json, tightest.json, summary.json (and counterexample.json, certificate.json when violated); "
                   "each file written is named")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify attack`; return its exit code."""
    budget = search.Budget.parse(args.budget)  # a bad budget is reported before any work
    limits = options.limits_of(args)
    with progress.bar(total=budget.evaluations, desc="certify attack", unit="eval") as bar:
        def resumed(journaled: int) -> None:  # progress, as the bar: the report says it too
            if progress.bars_shown():
                bar.write(f"certify attack: resuming {args.out}: replaying the {journaled} evaluations of its journal",
                          file=sys.stderr)  # above the bar

        searching = True

        def certifying(status: str) -> None:  # the bar, full once the search ends, counts the checks from here
            nonlocal searching
            if searching:
                searching = False
                bar.reset()
                bar.total, bar.unit = None, "check"  # (reset(total=None) keeps the total)
                bar.set_description("certify attack: certifying")
            bar.set_postfix_str(status, refresh=False)
            bar.update(1)

        try:
            report = search.attacked(search.OPTIONS, args.claim, args.bound, n=args.n, d=args.d, seed=args.seed,
                                     starts=args.starts, budget=args.budget, with_v=args.with_v,
                                     l_range=tuple(args.l_range), progress=bar.update, layers=args.layers,
                                     mask=args.mask, max_prec=args.max_prec, interruptible=True, out=args.out,
                                     on_resume=resumed, limits=limits, d_k=args.d_k, on_certify=certifying)
        except KeyboardInterrupt:  # outside the search (reading the journal, writing the results): no report
            if not args.out:
                raise
            raise Interrupted(f"{args.out} keeps the journal of the search; continue with: {_again(args)}") from None
    summary = dict(report.to_json(), files=report.files)
    if args.json:
        jsonfile.echo(summary)
    else:
        render(report, summary, report.files, _recheck_options(args))
    if report.interrupted:  # after the report: the exit code says the run was stopped, not what it found
        raise Interrupted(interruption(report, args))
    return report.exit_code


def interruption(report: AttackReport, args) -> str:
    """The line of a Ctrl-C: how far the search got, what it has and where, and the command that resumes it."""
    what = ("its certified counterexample" if report.violated
            else "the best point so far (not certified)" if report.best is not None else "no point evaluated yet")
    where = ""
    if args.out and not report.files:  # (certify.search.attack_folder.Folder.write)
        where = f"; {args.out} is as the last run left it (stopped before it searched beyond its journal)"
    elif args.out and report.best is not None:
        where = f" is in {args.out}"
    again = (f"; continue with: {_again(args)}" if args.out
             else "; run it with --out DIR to make a search that can be continued")
    return f"the search stopped early after {report.evaluations} evaluations; {what}{where}{again}"


def _again(args) -> str:
    """The command that continues the attack of this folder: the same one."""
    return shlex.join(["certify", *args.argv])


def _g(x, digits: int = 6) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def _recheck_options(args) -> tuple[str, str]:
    """The options the re-check commands of a counterexample need, (verify's, check's): the --limit options the
    checker confirmed it under, and check's the attack's --max-prec where it passes check's default cap."""
    given = limit_options(args.limit)
    higher = args.max_prec > engine.DEFAULT_MAX_PRECISION
    return given, given + (f" --max-prec {args.max_prec}" if higher else "")


def render(report: AttackReport, summary: dict, written: dict, recheck: tuple[str, str] = ("", "")) -> None:
    """Print the attack's human-readable report: the search, the most violating and the tightest points, the
    best per band of L = a D^2, the certified (shrunk) counterexample if any, and the files written; recheck: the
    options of its re-check commands (_recheck_options)."""
    print(f"ATTACK {report.target} on {report.layout.describe()}")
    replayed = f" ({report.replayed} replayed from the journal)" if report.replayed else ""
    print(f"  search: seed {report.seed}, {counted(report.starts, 'start')}, {counted(report.evaluations, 'evaluation')}{replayed} in "
          f"{report.seconds:.1f} s, L = a D^2 in [{report.l_range[0]:g}, {report.l_range[1]:g}]")
    if report.undefined:
        print(f"  not scored: {report.undefined_reason}, at {report.undefined} of the "
              f"{counted(report.evaluations, 'point')} evaluated; the search went on where it is defined")
    best, tight = summary["best"], summary["best_exponent"]
    if best or tight or summary["bands"]:  # a log(lhs/rhs) of 7e-15 from rounding read as a violation found
        print(f"  the search's points and figures are float64 ({NOT_CERTIFIED}); a counterexample is reported "
              "only once certified")
    if best:
        print(f"  most violating point: log(lhs/rhs) = {_g(best['log_ratio'], 4)} (lhs/rhs = {_g(best['ratio'], 10)}),"
              f" score {_g(best['score'], 4)}, at L = {_g(best['L'], 5)}")
    if tight:
        print(f"  tightest point: exponent c = -ln(1 - D'/D)/(a D^2) = {_g(tight['exponent'], 6)} at "
              f"L = {_g(tight['L'], 5)}")
        print(f"    {_point_text(report, report.best_exponent)}")
    if summary["bands"]:
        reference = any("antipodal_exponent" in band for band in summary["bands"])
        print("  by L = a D^2:  evals   best log(lhs/rhs)   best exponent c (at L)"
              + ("   two antipodal tokens" if reference else ""))
        for band in summary["bands"]:
            ratio, exponent = band["best_ratio"], band["best_exponent"]
            where = f"{_g(exponent['exponent'])} ({_g(exponent['L'], 4)})" if exponent else "-"
            line = (f"    [{band['L_from']:g}, {band['L_to']:g})".ljust(18) + f"{band['evaluations']:>6}   "
                    + f"{_g(ratio['log_ratio'], 4) if ratio else '-':<20}{where:<25}")
            print(line + (f"{_g(band['antipodal_exponent'])}" if "antipodal_exponent" in band else ""))
        if reference:
            print("    (two antipodal tokens give c = ln((e^{L/2} + 1)/2)/L, the most any pure-attention "
                  "configuration can: tau <= tanh(a D^2/4))")
    for finalist in summary["finalists"]:
        candidate = f"  candidate at L = {_g(finalist['L'], 5)} (score {_g(finalist['score'], 3)})"
        if finalist["verdict"] == engine.HOLDS:  # a checker-confirmed verdict, about this one configuration only
            print(f"{candidate} is no counterexample: the check certifies it holds at this one configuration")
        elif finalist["verdict"] != engine.VIOLATED:
            print(f"{candidate} not certified: {finalist['verdict']}"
                  + (f"; {finalist['reason']}" if finalist["reason"] else ""))
    shrunk = report.counterexample
    if shrunk is None and report.interrupted:
        print("  INTERRUPTED: " + (f"best point so far, NOT CERTIFIED: {_point_text(report, report.best)}"
                                   if report.best is not None else "no point evaluated yet"))
    elif shrunk is None and not report.searched:
        print(f"  NOTHING SEARCHED: the budget of {report.budget} ran out before the first evaluation, so this run "
              f"says nothing about {report.target} (not certified either way); give a larger --budget"
              + (" and another --out (a folder is resumed by the same attack only)" if "parameters" in written else ""))
    elif shrunk is None:
        # the count in the verdict line itself: a time budget may end a search after a handful of evaluations
        print(f"  NOTHING FOUND: no violation of {report.target} was found by this search of "
              f"{counted(report.evaluations, 'evaluation')}. That guarantees nothing: the bound may still fail elsewhere.")
        if report.best is None:  # D/(a - a): a value at no point, so nothing to climb (check says undecided there)
            print(f"  no evaluated point could be scored: {report.target} had no finite value, or none decided, "
                  "at every one (certify check on a configuration says why)")
    else:
        kept = len(shrunk.kept)
        print(f"  VIOLATED: certified counterexample, shrunk with {kept} of {len(shrunk.steps)} simplifications kept:")
        print(f"    {_compact(shrunk.case)}")
        c = shrunk.result.tightest
        # a value whose decimal exponent is too long to read as 10^[exponent ball] (short_form)
        lhs, rhs = (short_form(x) or x.str(10, radius=False) for x in (c.lhs, c.rhs))
        margin = short_form(arb(c.rhs - c.lhs)) or shrunk.result.margin_text
        print(f"    {c.lhs_expr} = {lhs}  >  {c.rhs_expr} = {rhs}"
              f"  (margin {margin}, {shrunk.result.precision} bits, confirmed by the checker)")
    for name, path in written.items():
        print(f"  {name}: {path}")
    if "certificate" in written:
        print(f"  re-check: certify verify {written['certificate']}{recheck[0]}; certify check {written['counterexample']}"
              + (f" --bound \"{report.bound}\"" if report.bound else f" --claim {report.claim}") + recheck[1])


# The most entries of a matrix an evaluated (uncertified) point shows: --n 64 --d 64 printed 100 kB of digits;
# larger ones are summarised, the whole point being written with --out (best.json, tightest.json)
SHOWN_ENTRIES = 64


def _point_text(report: AttackReport, evaluation) -> str:
    """An evaluated point's matrices to 4 digits (a stack's first layer), for reading; a large one summarised."""
    X, Hs, Vs = report.layout.arrays(evaluation.shape, evaluation.L_param)
    matrices = [X, Hs[0]] + ([Vs[0]] if Vs is not None else [])
    text = (f"X ~ {_rounded(X)}, {report.layout.head.text(Hs[0], _rounded)}"
            + (f", V ~ {_rounded(Vs[0])}" if Vs is not None else "") + ("" if len(Hs) == 1 else " (layer 0)"))
    if any(np.size(m) > SHOWN_ENTRIES for m in matrices):
        text += " (the whole point is written with --out: best.json, tightest.json)"
    return text


def _matrix_text(rows, entry) -> str:
    return "[" + ", ".join("[" + ", ".join(entry(v) for v in row) + "]" for row in rows) + "]"


def _rounded(M) -> str:
    """A float64 matrix to 4 digits (the tightest point, for reading); beyond SHOWN_ENTRIES its shape and range."""
    M = np.asarray(M)
    if M.size > SHOWN_ENTRIES:
        return f"[{' x '.join(map(str, M.shape))} entries from {M.min():.4g} to {M.max():.4g}]"
    return _matrix_text(M, lambda v: f"{v:.4g}")


def _compact(case: config.Case) -> str:
    """The counterexample with its exact entries, e.g. X = [[-1/2], [1/2]], A = [[-4]] (A@t, V@t in a stack;
    W_Q, W_K for thin heads)."""
    def matrix(rows) -> str:
        return _matrix_text(rows, lambda v: str(Fraction(v)))

    parts = [f"X = {matrix(case.X)}"]
    for t, layer in enumerate(case.layers):
        at = "" if len(case.layers) == 1 else f"@{t}"
        parts += [f"{name}{at} = {matrix(getattr(layer, name))}" for name in shrink.MATRIX_FIELDS
                  if getattr(layer, name) is not None]
    layer = case.layers[0]
    if layer.mask is not None:
        parts.append("mask " + matrix([[int(v) for v in row] for row in layer.mask]))
    if layer.residual:
        parts.append("residual")
    return ", ".join(parts)
