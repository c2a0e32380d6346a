"""certify check CONFIG [--claim ID | --bound EXPR] [--out CERT] [--max-prec BITS] [--json]"""

from __future__ import annotations

import math

from flint import arb

from certify.core import jsonfile, progress
from certify.core.exponents import short_form
from certify.core.limits import limit_options
from certify.core.numbers import arb_str, decimal_ends, float_bounds, signed_text
from certify import engine
from certify.engine import certificate
from certify.cli import options


def add_parser(subparsers):
    """Register `certify check` and its options."""
    p = subparsers.add_parser("check", help="decide a claim or a bound on one configuration",
                              description="Decide a claim (default collapse.global) or a user bound "
                              "D(layer output) <= EXPR on a configuration, with ball arithmetic. Exit 0 holds, "
                              "1 violated, 3 undecided, 2 bad input.")
    p.add_argument("config", help="configuration file (JSON, or numpy .npz): X, and A or W_Q/W_K, or layers")
    options.add_target(p)
    p.add_argument("--out", type=options.out_file, metavar="CERT", help="write the certificate here (holds or violated only)")
    options.add_max_prec(p)
    options.add_limits(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


# Sides are printed with enough digits to differ, up to MAX_SIDE_DIGITS; beyond that the margin's
# own enclosure shows the separation (a margin of 2e-434 on sides of 2 would need 435 digits).
SIDE_DIGITS, MAX_SIDE_DIGITS, MARGIN_DIGITS = 10, 60, 6


def agreeing_digits(c) -> int | None:
    """How many leading digits the two sides share (about log10(|rhs| / |rhs - lhs|)), None when the
    margin's ball contains 0 or a side is not finite."""
    margin = c.rhs - c.lhs
    if not isinstance(margin, arb) or not margin.is_finite() or margin.contains(0):
        return None
    size = max(abs(arb(c.lhs)), abs(arb(c.rhs)))
    if size == 0:
        return None
    shared = float(((size / abs(margin)).log() / arb(10).log()).upper())
    return max(0, math.ceil(shared))


def side_digits(c) -> int:
    """Digits to print each side of the tightest comparison with: SIDE_DIGITS, or enough (agreeing digits + 3,
    at most MAX_SIDE_DIGITS) for the printed balls to show the separation."""
    shared = agreeing_digits(c)
    return SIDE_DIGITS if shared is None or shared + 3 > MAX_SIDE_DIGITS else max(SIDE_DIGITS, shared + 3)


def number(x) -> dict:
    """A ball as numbers (binary64 midpoint and radius, for reading) and its text (arb's decimal
    enclosure, which stays exact where binary64 underflows or rounds two sides to the same value).  The radius is
    the distance from that midpoint to the ball's farther end, rounded up, so that value +/- radius encloses the
    ball: the ball's own radius to nearest was 0.0 below binary64's range (examples/saturated.json's margin, 2e-434
    +/- 7e-450, read [0.0, 0.0])."""
    x = arb(x)
    mid = float(x.mid())
    # from the exact midpoint and radius: the ends x.upper(), x.lower() are rounded to the working precision
    reach = abs(x.mid() - arb(mid)) + x.rad() if math.isfinite(mid) else arb("inf")
    return {"text": arb_str(x, MAX_SIDE_DIGITS), "value": mid, "radius": float_bounds(reach)[1],
            "log10_abs": None if x.mid() == 0 or not x.is_finite() else float((abs(x.mid()).log() / arb(10).log()).mid())}


def describe(result: engine.Result) -> dict:
    """The result of `certify check` as a JSON-ready dict: verdict, target, precision, the layer and both
    sides of the tightest comparison with its margin rhs - lhs (as numbers and as arb text), the float64
    screen's opinion (not certified) and the reason."""
    c = result.tightest
    screen = next((s for s in result.screen if s.layer == c.layer and s.lhs_expr == c.lhs_expr), None)
    return {
        "verdict": result.verdict,
        "target": result.target,
        "precision": result.precision,
        "layer": c.layer,
        "lhs": {"expr": c.lhs_expr} | number(c.lhs),
        "rhs": {"expr": c.rhs_expr} | number(c.rhs),
        "margin": {"expr": "rhs - lhs", "interval": list(result.margin),
                   "ends": list(decimal_ends(arb(c.rhs - c.lhs), MARGIN_DIGITS))} | number(c.rhs - c.lhs),
        "agreeing_digits": agreeing_digits(c),
        "float64": None if screen is None else {"lhs": float(screen.lhs), "rhs": float(screen.rhs),
                                                "says": "holds" if screen.outcome else "violated",
                                                "checker": "not certified"},
        "reason": result.reason,
    }


def run(args) -> int:
    """Run `certify check`; return its exit code."""
    options.not_overwriting("--out", args.out, {"CONFIG": args.config})  # the certificate replaced the input
    limits = options.limits_of(args)
    # 1024 tokens in dimension 256 take seconds per stage: each evaluation and the checker are shown (stderr)
    with progress.bar(desc="certify check", bar_format="{desc}{postfix} [{elapsed}]") as bar:
        result = engine.checked(args.config, "--max-prec", claim=args.claim, bound=args.bound, max_prec=args.max_prec,
                                limits=limits, stage=bar.set_postfix_str)
    info = describe(result)
    written = None
    if args.out and result.certificate is not None:
        written = str(certificate.write(result.certificate, args.out))
    info["certificate"] = written
    if args.json:
        jsonfile.echo(info)
        return result.exit_code
    where = f" (tightest at layer {info['layer']})"
    print(f"{result.verdict.upper()}: {info['target']}{where}")
    c = result.tightest
    digits = side_digits(c)
    # a side or margin whose decimal exponent is too long to read is shown as 10^[exponent ball] (short_form)
    print(f"  lhs  {c.lhs_expr} = {short_form(c.lhs) or c.lhs.str(digits, radius=True)}")
    print(f"  rhs  {c.rhs_expr} = {short_form(c.rhs) or c.rhs.str(digits, radius=True)}")
    margin = arb(c.rhs - c.lhs)
    print(f"  margin rhs - lhs = {short_form(margin) or signed_text(margin, MARGIN_DIGITS)}"
          + (f"  [{result.precision} bits]" if result.precision else ""))
    shared = info["agreeing_digits"]
    if shared is not None and shared + 3 > digits:
        print(f"  (the sides agree in about their first {shared} digits: the margin's enclosure, which excludes 0, "
              "is what separates them)")
    if info["float64"]:
        f = info["float64"]
        agree = f["says"] == result.verdict
        print(f"  float64 screen (not certified): lhs {f['lhs']!r}, rhs {f['rhs']!r} -> {f['says']}"
              + ("" if agree else "  (float64 alone would be wrong or unsure here)"))
    elif not result.screen:
        decided = result.verdict in (engine.HOLDS, engine.VIOLATED)  # an undecided one arb did not decide either
        print("  float64 screen: none (float64 cannot represent these inputs or sides" +
              ("; arb decided alone)" if decided else ")"))
    if result.reason:
        print(f"  {result.reason}")
    if written:
        print(f"  certificate: {written} (re-check with `certify verify {written}{limit_options(args.limit)}`)")
    elif args.out:
        print("  no certificate written: nothing was decided")
    return result.exit_code
