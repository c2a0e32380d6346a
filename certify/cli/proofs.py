"""`certify proofs`: run the derivations in proofs/ and print every step with its status.

    certify proofs [NAME ...] [--json]
    certify proofs --formal [FILE ...] [--formal-dir DIR] [--json]

NAME is a claim id (collapse.cubic) or a module name (collapse_cubic); without one, every
derivation runs.  Exit 0 when every checked step holds, 1 when one fails, 2 for an unknown NAME.
The steps are checked by sympy and by our own branch and bound, not by the independent checker:
each "holds" is printed "holds, not certified" (and "checker": "not certified" in the JSON).
A step that a Coq lemma of proofs/formal/ also states shows it as "formal: file.v:lemma".

--formal compiles the Coq files proofs/formal/*.v (or those named, e.g. `collapse`, `collapse.v` or
`proofs/formal/collapse.v`) with coqc and
proves the Gappa scripts proofs/formal/*.g with gappa and their Coq certificates: per lemma,
checked or failed, the time and the axioms it rests on.  Exit 1 if any fails, 2 if coqc (or
gappa) is missing.
"""

from __future__ import annotations

import time
from pathlib import Path

from certify.cli import options
from certify.core import jsonfile
from certify.core import progress
from certify.core.verdicts import NOT_CERTIFIED
from certify.errors import BadInput
from certify.prove import derivations as proofs_index
from certify.prove import formal as formal_proofs
from proofs._framework import SHOWN

# Steps are checked by sympy, by our own branch and bound (certify.prove.bnb) or argued in prose: none
# passes through the independent checker, so every "holds" is printed "not certified".
_MARK = {"holds": f"holds, {NOT_CERTIFIED}", "failed": "FAILED", "argued": "argued"}
_WIDTH = max(map(len, _MARK.values()))


def add_parser(subparsers) -> None:
    """Register `certify proofs` and its options."""
    p = subparsers.add_parser("proofs", help="run the symbolic and certified derivations of the claims",
                              description="Run the derivations in proofs/ (one per claim) and print every step with "
                              "its status; with --formal, check the Coq lemmas and Gappa scripts of proofs/formal/ "
                              "instead. Exit 0 when every checked step holds, 1 when one fails, 2 for an unknown NAME "
                              "(or, with --formal, a missing coqc or gappa).")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="claim id or module name (default: all); with --formal, a file of proofs/formal/ (or of "
                        "--formal-dir) by name (collapse, collapse.v) or by path")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--formal", action="store_true",
                   help="check the Coq lemmas and Gappa scripts of proofs/formal/ (needs coqc and gappa)")
    p.add_argument("--formal-dir", type=lambda text: Path(options.path(text)), default=None, metavar="DIR",
                   help="folder of .v and .g files for --formal (default: proofs/formal)")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify proofs`; return its exit code."""
    if args.formal:
        return _run_formal(args)
    if args.formal_dir is not None:  # ignored, it ran every derivation where the user meant the formal proofs
        raise BadInput("--formal-dir is the folder of --formal's files: give --formal too")
    chosen = args.names or proofs_index.names()
    derivations = [proofs_index.build(name) for name in chosen]  # BadInput before anything runs
    # each once, in the order first named: a claim id and its module's name (region.tilt, region_tilt) ran it twice
    derivations = list({derivation.name: derivation for derivation in derivations}.values())
    with progress.bar(total=len(derivations), desc="certify proofs", unit="derivation") as bar:
        results = proofs_index.run_all([derivation.name for derivation in derivations],
                                       lambda result: (bar.set_postfix_str(result.name), bar.update()))
    if args.json:
        jsonfile.echo([_labelled(r.as_dict()) for r in results], indent=2)
    else:
        for result in results:
            _render(result)
        failed = [r.claim for r in results if not r.ok]
        print(f"{len(results) - len(failed)} of {len(results)} derivations hold ({NOT_CERTIFIED}: checked by sympy and "
              "our own ball-arithmetic branch and bound, never by the independent checker)"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 0 if all(r.ok for r in results) else 1


def _labelled(derivation: dict) -> dict:
    """A derivation's JSON with each step's and the whole's "checker": "not certified"."""
    steps = [{**step, "checker": NOT_CERTIFIED} for step in derivation["steps"]]
    return {**derivation, "checker": NOT_CERTIFIED, "steps": steps}


def _render(result) -> None:
    verdict = "ok" if result.ok else "FAILED"
    print(f"{result.claim}  (proofs/{result.name}.py)  {verdict}: {result.summary()}")
    print(f"  claim: {result.statement}")
    print(f"  source: {result.source}")
    if result.verdict_note:
        print(f"  note: {result.verdict_note}")
    for step in result.steps:
        mark = f"[{_MARK[step.outcome]}]"
        print(f"  {mark:<{_WIDTH + 2}} {SHOWN[step.status]:<9} {step.title}")
        indent = " " * (_WIDTH + 5)
        if step.formal:
            print(f"{indent}formal: {step.formal}")
        if step.message:
            print(f"{indent}{step.message}")
    print()


def _run_formal(args) -> int:
    started = time.perf_counter()
    with progress.bar(desc="certify proofs --formal", unit="file") as bar:
        folder = args.formal_dir or formal_proofs.FORMAL_DIR
        results = formal_proofs.check_all(folder, args.names, progress=lambda path: bar.update())
    elapsed = time.perf_counter() - started
    failed = [r for r in results if r.outcome != "checked"]
    if args.json:
        jsonfile.echo([r.as_dict() for r in results], indent=2)
    else:
        width = max((len(r.name) for r in results), default=0)  # the seconds in one column, whatever the names
        current = None
        for r in results:
            if r.file != current:
                current = r.file
                print(r.file)
            mark = "checked" if r.outcome == "checked" else "FAILED "
            print(f"  [{mark}] {r.name:<{width}} {r.seconds:7.2f} s  {r.assumptions}")
            if r.message:
                print(f"            {r.message}")
        proving = sum(r.seconds for r in results)
        # the files run side by side (one process per core): the proofs' seconds, summed, can pass the wall time
        print(f"{len(results) - len(failed)} of {len(results)} lemmas checked ({proving:.1f} s in the proofs, summed "
              f"over files checked in parallel; {elapsed:.0f} s of wall time with the assumption reports)"
              + (f"; failed: {', '.join(r.label for r in failed)}" if failed else ""))
    return 1 if failed else 0
