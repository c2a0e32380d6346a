"""`certify graph`: an attention mask as a directed graph (Wu et al., Definitions 1-5).

    certify graph --mask causal --n 128 [--window K] [--json]
    certify graph --mask MASK.json [--n N] [--json]

MASK.json holds a square 0/1 (or false/true) matrix (or {"mask": [[...]]}); mask[i][j] = 1 means token i attends
to token j, the edge j -> i.  Every token must attend to itself.  Exit 0, or 2 on bad input.  No checker
re-derives a graph: the report says "not certified" (exact shortest-path search), in the text and the JSON.
"""

from __future__ import annotations

from certify.cli import options
from certify.core import jsonfile
from certify.core import limits, masks, numbers
from certify.errors import BadInput, counted, shown
from certify.core import graphs


def add_parser(subparsers) -> None:
    """Register `certify graph` and its options."""
    names = ", ".join(sorted(masks.NAMED_MASKS))
    p = subparsers.add_parser("graph", help="connectivity, centres and radius of an attention mask",
                              description="An attention mask as a directed graph (Wu et al., Definitions 1-5): "
                              "mask[i][j] = 1 means token i attends to token j, the edge j -> i. Prints whether it "
                              "is strongly or quasi-strongly connected, its centres and its radius. Exit 0, or 2 on "
                              "bad input.")
    p.add_argument("--mask", required=True, help=f"a named mask ({names}) or a JSON file of 0/1 (or false/true) rows")
    p.add_argument("--n", type=numbers.option_integer, help="number of tokens (required for a named mask)")
    p.add_argument("--window", type=numbers.option_integer, metavar="K",
                   help=f"the width k of the {' and '.join(masks.WINDOWED)} masks: sliding attends to i-k..i+k, uni "
                        "to i-k..i (default 1)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def _mask(args) -> graphs.Mask:
    name = masks.ALIASES.get(args.mask, args.mask)
    if name not in masks.WINDOWED:  # it did nothing to another mask, silently
        options.refuse_unused(["--window"] if args.window is not None else [],
                              f"the {' and '.join(masks.WINDOWED)} masks, not with {shown(args.mask)}")
    if name in masks.NAMED_MASKS:
        if args.n is None:
            raise BadInput(f"the named mask {args.mask!r} needs --n")
        _within_limit(args.n)  # before the n x n matrix is built
        if args.window is not None and args.window < 1:  # named by its option, not as named_mask's "window width"
            raise BadInput(f"--window must be at least 1, got {args.window}")
        width = {} if args.window is None else {"window": args.window}  # else named_mask's default width
        return masks.named_mask(name, args.n, **width)
    mask = masks.load_mask(args.mask, limits.DEFAULT.tokens)
    if args.n is not None and len(mask) != args.n:
        raise BadInput(f"the mask in {args.mask} has {counted(len(mask), 'token')}, not --n {args.n}")
    return mask


def _within_limit(n: int) -> None:
    """--n within the tokens limit of a configuration (a mask file's rows are held against it as it is read):
    the analysis is a shortest-path search from every token (n^3 compiled steps and an n x n table of
    distances for a complete mask: under 2 s at 1024 tokens, days and 80 GB at 10^5)."""
    if not 1 <= n <= limits.DEFAULT.tokens:
        raise BadInput(f"--n must be from 1 to {limits.DEFAULT.tokens} tokens, got {n}")


def run(args) -> int:
    """Run `certify graph`; return its exit code."""
    report = graphs.analyse(_mask(args))
    if args.json:
        jsonfile.echo(report.to_json(), indent=2)
        return 0
    centres = report.centres
    shown = ", ".join(map(str, centres[:10])) + (", ..." if len(centres) > 10 else "")
    print(f"tokens: {report.n}   edges (with self-loops): {report.edges}")
    print(f"strongly connected: {'yes' if report.strongly_connected else 'no'}")
    print(f"quasi-strongly connected: {'yes' if report.quasi_strongly_connected else 'no'}")
    print(f"centres ({len(centres)}): {shown or 'none'}")
    print(f"radius: {report.radius if report.radius is not None else 'undefined (no centre)'}")
    print(f"({graphs.EXACT_SEARCH})")
    return 0
