"""certify check CONFIG [--claim ID | --bound EXPR] [--out CERT] [--max-prec BITS] [--json]"""

from __future__ import annotations

import json

from certify import engine
from certify.engine import certificate
from certify.cli import options


def add_parser(subparsers):
    p = subparsers.add_parser("check", help="decide a claim or a bound on one configuration",
                              description="Decide a claim (default collapse.global) or a user bound "
                              "D(layer output) <= EXPR on a configuration, with ball arithmetic. Exit 0 holds, "
                              "1 violated, 3 undecided, 2 bad input.")
    p.add_argument("config", help="configuration file (JSON, or numpy .npz): X, and A or W_Q/W_K, or layers")
    options.add_target(p)
    p.add_argument("--out", metavar="CERT", help="write the certificate here (holds or violated only)")
    options.add_max_prec(p)
    options.add_limits(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def describe(result: engine.Result) -> dict:
    c = result.tightest
    screen = next((s for s in result.screen if s.layer == c.layer and s.lhs_expr == c.lhs_expr), None)
    return {
        "verdict": result.verdict,
        "target": result.target,
        "precision": result.precision,
        "layer": c.layer,
        "lhs": f"{c.lhs_expr} = {c.lhs.str(10, radius=True)}",
        "rhs": f"{c.rhs_expr} = {c.rhs.str(10, radius=True)}",
        "margin": list(result.margin),
        "margin_ball": result.margin_ball,
        "float64": None if screen is None else {"lhs": float(screen.lhs), "rhs": float(screen.rhs),
                                                "says": "holds" if screen.outcome else "violated",
                                                "checker": "not certified"},
        "reason": result.reason,
    }


def run(args) -> int:
    result = engine.check(args.config, claim=args.claim, bound=args.bound, max_prec=args.max_prec,
                          limits=options.limits_of(args))
    info = describe(result)
    written = None
    if args.out and result.certificate is not None:
        written = str(certificate.write(result.certificate, args.out))
    info["certificate"] = written
    if args.json:
        print(json.dumps(info, indent=1))
        return result.exit_code
    where = "" if info["layer"] is None else f" (tightest at layer {info['layer']})"
    print(f"{result.verdict.upper()}: {info['target']}{where}")
    print(f"  lhs  {info['lhs']}")
    print(f"  rhs  {info['rhs']}")
    print(f"  margin rhs - lhs = {result.margin_text}" + (f"  [{result.precision} bits]" if result.precision else ""))
    if info["float64"]:
        f = info["float64"]
        agree = f["says"] == result.verdict
        print(f"  float64 screen (not certified): lhs {f['lhs']!r}, rhs {f['rhs']!r} -> {f['says']}"
              + ("" if agree else "  (float64 alone would be wrong or unsure here)"))
    elif not result.screen:
        print("  float64 screen: none (float64 cannot represent these inputs or sides; arb decided alone)")
    if result.reason:
        print(f"  {result.reason}")
    if written:
        print(f"  certificate: {written} (re-check with `certify verify {written}`)")
    elif args.out:
        print("  no certificate written: nothing was decided")
    return result.exit_code
