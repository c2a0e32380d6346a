"""`certify run`'s section for the thesis's dynamics: certified trajectories and the initialisation table.

Expected outcomes: on the default trajectories every drawn bound curve holds at every layer (the
doubly exponential collapse near consensus, and tokens approaching V^t c for a rotation V); in the
initialisation table each row certifies D(PX)/D <= 1 - exp(-a D^2) with the gap kept itself, and
float64's rounding of 1 - exp(-a D^2) to 1.0 agrees with the side of 54 ln 2 that a D^2 is
certified to lie on.
"""

from __future__ import annotations


from flint import arb

from certify.suite import cases
from certify.studies import init_scaling
from certify.core import jsonfile
from certify.figures import trajectory as trajectory_figure
from certify.studies import trajectory
from certify.core.float64_limits import ONE_MINUS_GAP_IS_ONE_LN2
from certify.suite import Row, SuiteRun, checked

TITLE = "thesis-dynamics"
COST = 4
FOLDER = "thesis-dynamics"

ROTATION_V = {"name": "rotation-V", "X": [[1, 0], [0, 1], [-1, 0.5], [0.25, -1]], "A": [[0.5, 0], [0, 0.5]],
              "V": [["3/5", "-4/5"], ["4/5", "3/5"]]}
# (configuration builder, layers T, layers T with --long).  In centred form (certify.core.centred) the
# precision no longer grows with the collapse: the long depths go well past the 65536 bits that
# absolute coordinates needed at near-consensus D_7 ~ 1e-12971 or stack D_11 ~ 1e-19019.
TRAJECTORIES = [(cases.near_consensus, 5, 20), (lambda: ROTATION_V, 6, 20), (cases.stack, 4, 20)]
INIT_DIMENSIONS, INIT_DIMENSIONS_LONG = [16, 64, 256], [64, 256, 1024]
INIT_SETTINGS = {"scheme": "lecun", "n": 16, "seed": 0}


def _float64_agrees(row: init_scaling.Row) -> bool:
    """float64's 1 - exp(-a D^2) == 1.0 exactly when a D^2 >= 54 ln 2 (either answer within the ball)."""
    threshold = ONE_MINUS_GAP_IS_ONE_LN2 * arb(2).log()
    if row.aD2 > threshold:
        return row.float64_one_minus_is_one
    if row.aD2 < threshold:
        return not row.float64_one_minus_is_one
    return True


def section(run: SuiteRun):
    """The rows of the "thesis-dynamics" section of `certify run`: certified trajectories whose drawn bound
    curves must hold at every layer, and the initialisation table (D(PX)/D <= 1 - exp(-a D^2) per row,
    float64's rounding against 54 ln 2)."""
    folder = run.folder(FOLDER)
    for build, layers, long_layers in TRAJECTORIES:
        config = build()
        T = long_layers if run.long else layers
        tr = trajectory.traced(config, trajectory.OPTIONS, T)  # a row's words are the commands' (--limit)
        stem = f"trajectory--{config['name']}"
        jsonfile.write(trajectory.to_json(tr), folder / f"{stem}.json")
        cert_path = folder / f"{stem}--certificate.json"
        jsonfile.write(tr.certificate, cert_path)  # the row's verdict is the one the checker confirmed
        trajectory_figure.write(tr, folder, stem=stem, **run.figure_options())
        resolved = f"log10 D_{tr.resolved_through} = " \
            f"{trajectory.log10_ball(tr.points[tr.resolved_through].D).str(6, radius=False)}" \
            if tr.resolved_through >= 0 else "not even D_0 resolved"
        detail = f"curves {', '.join(tr.drawn)}; {resolved}, {tr.precision} bits, {tr.representation} coordinates"
        verdict, detail = checked(tr.verdict, tr.certified, tr.confirmation, detail)  # nothing unconfirmed decided
        yield Row(section=TITLE, case=f"trajectory {config['name']}, T = {T}", verdict=verdict, detail=detail,
                  ok=tr.certified and tr.verdict == trajectory.HOLDS, certificate=str(cert_path.relative_to(run.out_dir)),
                  expected=trajectory.HOLDS)
    dimensions = INIT_DIMENSIONS_LONG if run.long else INIT_DIMENSIONS
    scheme = INIT_SETTINGS["scheme"]
    rows = init_scaling.study(dimensions, **INIT_SETTINGS)
    table = folder / f"init-{scheme}.json"
    jsonfile.write(init_scaling.to_json(rows, **INIT_SETTINGS), table)
    for r in rows:
        ok = r.bound_certified and _float64_agrees(r)
        saturated = "1 - exp == 1.0 in float64" if r.float64_one_minus_is_one else "float64 still < 1"
        detail = (f"a D^2 = {r.aD2.str(5, radius=False)}, log10 gap = {r.log10_gap.str(5, radius=False)}, "
                  f"{saturated}, D(PX)/D = {r.ratio.str(4, radius=False)}")
        yield Row(section=TITLE, case=f"init {scheme} d = {r.d}",
                  verdict=trajectory.HOLDS if r.bound_certified else trajectory.UNDECIDED,
                  detail=detail, ok=ok, expected=trajectory.HOLDS)  # the table is data, no certificate
