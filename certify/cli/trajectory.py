"""certify trajectory CONFIG --layers T [--json] [--out DIR] [--max-prec BITS] [--format png|pdf|svg] [--dpi N]

Encloses D_t and mu_t through T layers (layer t is the configuration's layer t mod L) next to the
claimed bound curves whose hypotheses hold, and says at each t whether each bound is certified.
Exit 0: every D_t resolved and every drawn bound holds at every t; 1: a bound is violated;
3: something undecided or unresolved (see certify.studies.trajectory), or the checker did not
confirm the trajectory's certificate (then everything printed is labelled "not certified");
2: bad input.  --out also writes the certificate, which `certify verify` re-checks.  Under the
checker's limits (--limit) the precision rises only while a certificate of every D_t can still fit
them; where it stops, a last line says which limit and how to raise it
(certify.studies.trajectory_budget).
"""

from __future__ import annotations

from pathlib import Path


from certify.cli import options
from certify.core import jsonfile
from certify.core import progress
from certify.core.exponents import exponent_text
from certify.core.precision import working
from certify.core.report_files import TRAJECTORY_CERTIFICATE
from certify.studies import trajectory

# the options as `certify trajectory` names them in a refusal (certify.trajectory names its keywords)
OPTIONS = trajectory.OPTIONS
MARKS = {trajectory.HOLDS: "ok", trajectory.VIOLATED: "VIOLATED", trajectory.UNDECIDED: "undecided",
         trajectory.UNRESOLVED: "unresolved"}


def add_parser(subparsers):
    """Register `certify trajectory` and its options."""
    p = subparsers.add_parser(
        "trajectory", help="certified D_t and mu_t through T layers next to the bound curves",
        description="Enclose the diameter D_t and the distance to consensus mu_t through T layers with ball "
        "arithmetic (adaptive precision), next to the bound curves whose hypotheses hold: the global bound "
        "iterated and composed, the cubic (doubly exponential) one near consensus, and the value-matrix "
        "curves. A configuration of L layers is applied cyclically: layer t is layer t mod L (T = L runs a "
        "stack once). Exit 0 all bounds certified at every t, 1 a bound violated, 3 undecided, unresolved "
        "or not confirmed by the checker, 2 bad input.")
    p.add_argument("config", help="configuration file (JSON, or numpy .npz): X and one layer, or layers")
    p.add_argument("--layers", type=options.integer, required=True, metavar="T", help=f"number of layers, 1 to {trajectory.MAX_LAYERS}")
    p.add_argument("--out", type=options.out_folder, metavar="DIR",
                   help="folder: write trajectory.json, trajectory-certificate.json and the figure trajectory.FORMAT "
                   "into it (each file written is named)")
    options.add_max_prec(p, default=trajectory.DEFAULT_MAX_PRECISION)
    options.add_limits(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    options.add_figure_options(p, written=(lambda args: bool(args.out), "with --out"))
    p.set_defaults(run=run)


def _cell(value, check=None) -> str:
    """A ball to 4 digits ("10^[log10 ball]" once it leaves float64's range), or "<= its upper end"
    when it has too few correct digits."""
    if value is None:
        shown = "-"
    elif not value.is_finite():
        shown = "not finite"
    elif trajectory.is_resolved(value):
        shown = value.str(4, radius=False) if trajectory.in_float64_range(value) else _power_of_ten(value)
    else:
        upper = value.upper()
        shown = "<= " + (upper.str(3, radius=False) if trajectory.in_float64_range(upper) else
                         _power_of_ten(upper))
    return shown if check is None else f"{shown} {MARKS[check]}"


def _curve_cell(p, name: str) -> str:
    """A curve's value, or 10^[log10 ball] from its logarithm when the value itself is too wide to print."""
    value, log_value = p.curves.get(name), p.log_curves.get(name)
    if value is None or trajectory.is_resolved(value) and trajectory.in_float64_range(value):
        return _cell(value, p.checks.get(name))
    if not log_value.is_finite():  # a curve at 0 (a = 0), or a logarithm of a ball around 0
        return f"log not finite {MARKS[p.checks[name]]}"
    return f"{exponent_text(trajectory.log10_from_log(log_value))} {MARKS[p.checks[name]]}"


def _power_of_ten(value) -> str:
    """10^[log10 value], with 4 digits after the point of the exponent whatever its size."""
    return exponent_text(trajectory.log10_ball(value))


def render(tr: trajectory.Trajectory) -> str:
    """The table, with logarithms taken at the trajectory's own precision (the exponents of 10^[...]
    can have 47 digits)."""
    with working(tr.curve_precision):
        return _render(tr)


def _render(tr: trajectory.Trajectory) -> str:
    names = list(tr.drawn)
    header = ["t", "D_t", "mu_t"] + (["approach r_t"] if "value.approach" in tr.drawn else []) + names
    rows = []
    for p in tr.points:
        if p.D is None:
            rows.append([str(p.t), "unresolved", "-"] + [""] * (len(header) - 3))
            continue
        row = [str(p.t), _cell(p.D) + ("" if p.resolved else " unresolved"), _cell(p.mu)]
        if "value.approach" in tr.drawn:
            row.append(_cell(p.approach))
        row += [_curve_cell(p, name) for name in names]  # "-" where a curve is not drawn
        rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header] + rows]
    a_text = ", ".join(a.str(6, radius=False) for a in tr.a)
    intro = [f"{tr.name or 'trajectory'}: {tr.T} layers (layer t = configuration layer t mod {tr.cycle}); "
             f"a = ||A||_2 = {a_text}" + ("" if tr.M is None else f"; M = max_k<=T ||V^k||_2 = {tr.M.str(6, radius=False)}")
             + ("" if tr.rho is None else f"; rho = ||V||_2 = {tr.rho.str(6, radius=False)}")]
    for name, hypothesis in tr.drawn.items():
        intro.append(f"  curve {name}: {hypothesis}")
    for name, reason in tr.skipped.items():
        intro.append(f"  not drawn {name}: {reason}")
    intro.append(f"  coordinates: {tr.representation}")
    certified = ("certified: the checker re-derived every value and outcome above" if tr.certified else
                 f"{trajectory.NOT_CERTIFIED.upper()}: the checker did not confirm the certificate "
                 f"({tr.confirmation}); every value and outcome above is unconfirmed")
    summary = (f"{tr.verdict.upper()}{'' if tr.certified else ' (' + trajectory.NOT_CERTIFIED + ')'}: D_t resolved "
               f"through t = {tr.resolved_through} of {tr.T} (>= {trajectory.RESOLVED_BITS} bits relative), "
               f"{_bits(tr)} ({_cap(tr)}); curves at {tr.curve_precision} bits; {tr.seconds:.2f} s")
    stopped = [f"precision {tr.stopped}"] if tr.stopped else []  # the checker's limits: which one, how to raise it
    return "\n".join(intro + [""] + lines + ["", summary, certified] + stopped)


def _cap(tr) -> str:
    """The precision cap the run had: --max-prec, or the lower one the checker's limits set (the stop line
    then says which limit)."""
    if tr.precision_cap >= tr.max_precision:
        return f"cap {tr.max_precision}"
    return f"cap {tr.precision_cap} under the limits, --max-prec {tr.max_precision}"


def _bits(tr) -> str:
    """The run's precision, and how low its later steps went (certify.studies.trajectory, step precisions)."""
    steps = tr.step_precisions
    if min(steps) == tr.precision:
        return f"{tr.precision} bits"
    return f"{tr.precision} bits at t = 0 down to {steps[-1]} at t = {len(steps) - 1}"


def _outputs(args) -> list[Path]:
    """The files --out DIR gets: the results, the certificate and the figure."""
    from certify.figures.trajectory import STEM  # matplotlib only when a figure is written

    out = Path(args.out)
    return [out / "trajectory.json", out / TRAJECTORY_CERTIFICATE, out / f"{STEM}.{args.figure_format}"]


def run(args) -> int:
    """Run `certify trajectory`; return its exit code."""
    limits = options.limits_of(args)  # the configuration's reader and the checker's (before the bar)
    outputs = _outputs(args) if args.out else []
    for path in outputs:  # DIR/trajectory.json given as the configuration was written over by its results
        options.not_overwriting("--out", path, {"CONFIG": args.config})
    # what a user waits for: the layers done (an attempt at a higher precision starts again from X_0), the
    # precision a detail
    with progress.bar(total=args.layers, desc="certify trajectory", mininterval=0.5,
                      bar_format="{desc}: {n}/{total} layers |{bar:20}| {postfix} [{elapsed}]") as bar:
        last = [None]  # the stage drawn last

        def shown(done: int, total: int, stage: str) -> None:
            bar.set_postfix_str(stage, refresh=False)
            bar.update(done - bar.n)  # redraws at most every mininterval
            if stage != last[0]:  # a new attempt or the checker (seconds through thousands of layers): drawn at once
                last[0] = stage
                bar.refresh()

        tr = trajectory.traced(args.config, OPTIONS, args.layers, max_prec=args.max_prec, progress=shown,
                               limits=limits)
    data = trajectory.to_json(tr)
    written = []
    if args.out:
        from certify.figures import trajectory as trajectory_figure  # matplotlib only when a figure is written

        json_path, cert_path, _ = outputs
        json_path.parent.mkdir(parents=True, exist_ok=True)
        jsonfile.write(data, json_path)
        jsonfile.write(tr.certificate, cert_path)
        figure_path = trajectory_figure.write(tr, json_path.parent, source=args.config, fmt=args.figure_format,
                                              dpi=args.dpi)
        written = [json_path, cert_path, figure_path]
    if args.json:
        jsonfile.echo(data)
    else:
        print(render(tr))
        for path in written:
            print(f"  wrote {path}")
    return tr.exit_code
