"""`certify run`'s section "proofs over regions": claims proved for every configuration of a region
(certify prove), and a false bound refuted at a certified point; each certificate is confirmed by
the trusted checker.  Small regions, seconds in total; --long takes the larger ones.
"""

from __future__ import annotations

from typing import Iterable

from certify.core import jsonfile
from certify.errors import counted
from certify.prove import profiles, reductions
from certify.prove import region as region_proof
from certify.suite import Row, SuiteRun, checked

TITLE = "proofs over regions"
COST = 0.1
FOLDER = "region_proofs"

# (claim or None, bound or None, n, d, radius, norm, expected verdict)
CASES = [
    ("collapse.tanh", None, 2, None, "8", "8", region_proof.PROVED),
    ("collapse.global", None, 2, None, "1", "64", region_proof.PROVED),
    ("collapse.global", None, 3, 1, "2", "2", region_proof.PROVED),
    ("collapse.global", None, 4, 1, "1", "1", region_proof.PROVED),
    ("collapse.global", None, 2, None, "1", "2048", region_proof.PROVED),  # a D^2 up to 8192
    (None, "D*(1-exp(-0.45*a*D**2))", 2, None, "2", "4", region_proof.VIOLATED_VERDICT),  # the sharp exponent is 1/2
]
LONG_CASES = [
    ("collapse.global", None, 5, 1, "2", "2", region_proof.PROVED),
    ("collapse.global", None, 6, 1, "1", "1", region_proof.PROVED),
]
TIME_LIMIT = 60.0


def section(run: SuiteRun) -> Iterable[Row]:
    """The rows of the "proofs over regions" section of `certify run`: claims proved on every configuration of
    small regions and a false bound refuted at a certified point, each certificate confirmed by the
    checker."""
    folder = run.folder(FOLDER)
    for claim, bound, n, d, radius, norm, expected in CASES + (LONG_CASES if run.long else []):
        profile = profiles.bound_profile(bound, n, d) if bound else profiles.claim_profile(claim)
        region = reductions.region(n, d, radius, norm)
        result = region_proof.prove(region, profile, time_limit=TIME_LIMIT)
        dims = f"d = {d}" if d is not None else "every d"
        name = f"{claim or 'bound ' + bound}, n = {n}, {dims}, radius {radius}, norm {norm}"
        path = jsonfile.write(result.certificate, folder / f"{claim or 'bound'}--n{n}-d{d or 'any'}-r{radius}-a{norm}.json")
        verdict, detail = checked(result.verdict, result.confirmed, result.message,
                                  f"{counted(len(result.leaves), 'leaf')}, {counted(result.boxes, 'box')}, {result.seconds:.2f} s"
                                  if result.verdict != region_proof.VIOLATED_VERDICT else "counterexample inside the region")
        yield Row(section=TITLE, case=name, verdict=verdict, detail=detail,
                  ok=result.confirmed and result.verdict == expected, certificate=str(path.relative_to(run.out_dir)),
                  expected=expected)
