"""Wu et al. (2024), Figures 1-3 as studies: what is run, the numbers behind each plot, one
certified spot check per figure, and the paper's qualitative findings judged on the numbers.

    study = STUDIES["wu-fig2"](size, seed)      # size: reproduce.CI or reproduce.LONG

The simulations are float64 (certify.studies.wu.reproduce); a Finding says whether the float64 numbers
show what the paper reports, which is evidence, not proof.  The certified parts are the spot
checks (certify.studies.wu.spot_check) and, for Figure 1, the checker-confirmed equilibria A, B and the
trapping arc of certify.studies.wu.fig1.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from certify.core.arith import FLOAT64
from certify.errors import BadInput
from certify.core.quantities import consensus_distance
from certify.studies.wu import fig1 as fig1_counterexample
from certify.studies.wu import reproduce as sim
from certify.studies.wu.spot_check import SpotCheck, certify_mu

FIG1_W = "2"
SIMULATED = "float64 simulation (screening, not certified)"  # the arithmetic of every curve
SAN = sim.VARIANT_BY_NAME["SAN"]


@dataclass(frozen=True)
class Finding:
    statement: str  # what the paper reports, in words
    reproduced: bool  # whether the float64 numbers of this run show it
    detail: str
    # False for a known disagreement with the paper, recorded with its reason in `detail`: the
    # suite then expects it not to reproduce, and flags the day it does.
    expected: bool = True


@dataclass
class Study:
    figure: str
    settings: dict  # what was run, for the JSON and the captions
    curves: dict  # Figures 2, 3: key -> mu (T + 1, inputs); Figure 1: (panel, run) -> path (T + 1, 2, 2)
    spot_checks: list[SpotCheck]
    findings: list[Finding]
    certified: dict = field(default_factory=dict)  # Figure 1: the checker-confirmed values
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ statistics of a curve


def depth_statistics(mu: np.ndarray) -> dict[str, np.ndarray]:
    """Per depth, over the inputs: mean, geometric mean, median, min, max of mu (T + 1, inputs)."""
    with np.errstate(divide="ignore"):
        geomean = np.where((mu > 0).all(axis=1), np.exp(np.log(np.where(mu > 0, mu, 1.0)).mean(axis=1)), 0.0)
    return {"mean": mu.mean(axis=1), "geomean": geomean, "median": np.median(mu, axis=1),
            "min": mu.min(axis=1), "max": mu.max(axis=1)}


def log_level(mu: np.ndarray, depths: slice = slice(1, None)) -> float:
    """The mean over depths (default t = 1..T) of log10 of the median mu: the height of a curve
    on the log plot."""
    median = np.median(mu[depths], axis=1)
    return float(np.mean(np.log10(np.maximum(median, np.finfo(float).tiny))))


FLOAT64_FLOOR = 1e-12  # relative to mu_0: below it a collapsing curve is mostly float64 rounding


def above_floor_levels(mus: list[np.ndarray]) -> list[float]:
    """log_level of each curve over the depths 1..t* before any of them falls below the float64
    floor (at least depth 1): there the curves compare true dynamics, not rounding."""
    medians = np.array([np.median(mu, axis=1) / np.median(mu[0]) for mu in mus])
    low = np.flatnonzero((medians[:, 1:] < FLOAT64_FLOOR).any(axis=0))
    last = max(1, int(low[0]) if low.size else medians.shape[1] - 1)
    return [log_level(mu, slice(1, last + 1)) for mu in mus]


def _g(x: float) -> str:
    return f"{x:.2g}"


# ------------------------------------------------------------------ Figure 2


def _random_setup(size: sim.Size, seed: int):
    rng = np.random.default_rng(seed)
    model = sim.random_model(size.d, size.depth, rng)
    return model, sim.random_inputs(size.tokens, size.d, size.inputs, rng)


def _random_settings(size: sim.Size, seed: int) -> dict:
    return {"seed": seed, "tokens": size.tokens, "d": size.d, "depth": size.depth, "inputs": size.inputs,
            "arithmetic": SIMULATED,
            "initialisation": "x_i ~ N(0, I_d); one head, d_k = d; W_Q, W_K, W_V ~ N(0, 1/d); "
                              "W_1 (4d x d) ~ N(0, 1/d), W_2 (d x 4d) ~ N(0, 1/(4d)); every layer drawn independently",
            "layernorm": "SAN+LN, SAN+skip+LN: x/||x||_2 (sphere); full: standard (x - mean)/sqrt(var + 1e-12)"}


def _spot(model, X0, variant, mask, curve, d_qk=None) -> SpotCheck:
    n, T = X0.shape[1], model.depth
    layers = [sim.exact_layer(model, t, variant, mask, n, d_qk) for t in range(T)]
    temperature = "" if d_qk is None else f", d_QK = {d_qk}"
    what = f"random init, {variant.name}, {mask} mask{temperature}, input 0, mu(X_{T})"
    return certify_mu(layers, X0[0], what, curve[-1, 0])


def fig2(size: sim.Size, seed: int) -> Study:
    model, X0 = _random_setup(size, seed)
    curves = {("random", v.name, m): sim.simulate_random(model, v, m, X0) for v in sim.VARIANTS for m in sim.MASKS}
    settings = {"random": _random_settings(size, seed)}
    notes = []
    try:
        settings["pretrained"] = _pretrained_curves(size, seed, curves)
    except BadInput as err:
        notes.append(f"pretrained panel skipped: {err}")
    spot = _spot(model, X0, SAN, "complete", curves[("random", "SAN", "complete")])
    return Study("wu-fig2", settings, curves, [spot], fig2_findings(curves), notes=notes)


def _pretrained_curves(size: sim.Size, seed: int, curves: dict) -> dict:
    from certify.studies.models import load_text_model  # optional extra: safetensors, tokenizers, the model package

    text_model = load_text_model("minilm")
    layers = [sim.stack_heads(layer) for layer in text_model.model.layers]
    X0 = sim.pretrained_inputs(text_model, size.pretrained_tokens, size.pretrained_inputs,
                               np.random.default_rng([seed, 1]))
    for v in sim.VARIANTS:
        for m in sim.MASKS:
            curves[("pretrained", v.name, m)] = sim.simulate_pretrained(layers, v, m, X0, size.pretrained_depth)
    return {"model": "all-MiniLM-L6-v2 (certify.studies.models 'minilm')", "tokens": size.pretrained_tokens,
            "depth": size.pretrained_depth, "inputs": size.pretrained_inputs, "seed": seed,
            "arithmetic": SIMULATED,
            "inputs_are": "[CLS] + random whole-word vocabulary entries + [SEP], embedded by the model",
            "layers": f"layer t is the model's layer t mod {len(layers)} (the real layers, then repeated)"}


def fig2_findings(curves: dict) -> list[Finding]:
    def ratio(init, variant, mask, since):
        """Median mu at the last depth over median mu at depth `since`."""
        mu = curves[(init, variant, mask)]
        return float(np.median(mu[-1])) / float(np.median(mu[since]))

    findings = []
    # Their Theorem 1 and Figure 2: pure attention collapses exponentially for every mask.
    ratios = {m: ratio("random", "SAN", m, 0) for m in sim.MASKS}
    findings.append(Finding("random init: pure attention (SAN) collapses for every mask (median mu_T < mu_0 / 10)",
                            all(r < 0.1 for r in ratios.values()),
                            "mu_T / mu_0: " + ", ".join(f"{m} {_g(r)}" for m, r in ratios.items())))
    # Local masks have a larger radius and collapse more slowly (their Theorem 1 and Figure 2).
    level = {m: log_level(curves[("random", "SAN", m)]) for m in sim.MASKS}
    slower = min(level["sliding"], level["uni"]) > max(level["complete"], level["causal"])
    findings.append(Finding("random init: SAN with local masks (sliding, uni) collapses more slowly than with "
                            "complete and causal ones", slower,
                            "mean log10 mu over depth: " + ", ".join(f"{m} {v:.1f}" for m, v in level.items())))
    # Figure 2: 'as soon as we solely add in LayerNorm, mu no longer converges to zero at random init'.
    kept = {m: ratio("random", "SAN+LN", m, 1) for m in sim.MASKS}
    lost = [m for m, r in kept.items() if not r > 1e-3]
    findings.append(Finding("random init: with LayerNorm alone (SAN+LN) mu does not converge to 0 "
                            "(median mu_T > mu_1 / 1000 for every mask)", not lost,
                            "mu_T / mu_1: " + ", ".join(f"{m} {_g(r)}" for m, r in kept.items())
                            + (f"; collapses for {', '.join(lost)}" if lost else "")
                            + "; known disagreement: with one head, Gaussian W_V and the sphere LayerNorm, "
                            "SAN+LN still collapses under the complete and causal masks (near consensus the "
                            "scores flatten), here and with a BERT-style initialisation",
                            expected=False))
    if any(key[0] == "pretrained" for key in curves):
        kept = {m: ratio("pretrained", "full", m, 0) for m in sim.MASKS}
        findings.append(Finding("pretrained: the full layer (LayerNorm with the other components) keeps mu away "
                                "from 0 (median mu_T > mu_0 / 10 for every mask)", all(r > 0.1 for r in kept.values()),
                                "mu_T / mu_0: " + ", ".join(f"{m} {_g(r)}" for m, r in kept.items())))
    return findings


# ------------------------------------------------------------------ Figure 3


def fig3(size: sim.Size, seed: int) -> Study:
    model, X0 = _random_setup(size, seed)
    curves = {(str(t), m): sim.simulate_random(model, SAN, m, X0, t) for t in sim.D_QK_SWEEP for m in sim.MASKS}
    settings = {"random": _random_settings(size, seed) | {
        "variant": "SAN (X' = P X W_V)", "d_QK": [str(t) for t in sim.D_QK_SWEEP],
        "scores": "S = (X W_Q)(X W_K)^T / sqrt(d_QK) (Wu et al.'s convention; d_QK = d_k is the standard scaling)"}}
    spot = _spot(model, X0, SAN, "causal", curves[("1", "causal")], Fraction(1))
    return Study("wu-fig3", settings, curves, [spot], fig3_findings(curves))


def fig3_findings(curves: dict) -> list[Finding]:
    sweep = [str(t) for t in sim.D_QK_SWEEP]  # increasing d_QK: higher temperature, flatter attention
    level = {m: above_floor_levels([curves[(t, m)] for t in sweep]) for m in sim.MASKS}
    ordered = {m: all(a > b for a, b in zip(v, v[1:])) for m, v in level.items()}
    gap = {m: v[0] - v[-1] for m, v in level.items()}
    return [
        Finding("smaller temperature d_QK slows the collapse of SAN (complete mask: mu higher at d_QK = 1/64 than "
                "at 1, higher at 1 than at 64)", ordered["complete"],
                "mean log10 mu before the float64 floor, d_QK = " + ", ".join(sweep) + ": "
                + "; ".join(f"{m} " + ", ".join(f"{x:.1f}" for x in v) for m, v in level.items())),
        Finding("the temperature matters more with global attention than with local masks "
                "(the d_QK = 1/64 to 64 gap is larger for complete than for sliding and uni)",
                gap["complete"] > max(gap["sliding"], gap["uni"]),
                "gap in mean log10 mu: " + ", ".join(f"{m} {v:.1f}" for m, v in gap.items())),
    ]


# ------------------------------------------------------------------ Figure 1


def _unit(degrees: float) -> list[float]:
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


# Token 1 ignores token 2 (causal mask): its runs start at these angles (degrees) and tend to
# (0, 1) or (0, -1) by the sign of the first coordinate.  Token 2 is run with token 1 at (0, 1),
# the setting of the certified statement, from starts all around the circle.
FIG1_TOKEN1_STARTS = (20.0, 60.0, 120.0, 160.0, 200.0, 240.0, 300.0, 340.0)
FIG1_TOKEN2_STARTS = tuple(float(a) for a in range(5, 360, 30))
FIG1_NO_LN_STARTS = ((60.0, 200.0), (60.0, 330.0), (240.0, 100.0))
FIG1_SPOT_TOKEN2 = 200.0  # inside the certified trapping arc around B (w = 2: B at 240 degrees)
TOKEN1_AT_TOP = [0.0, 1.0]


def fig1(size: sim.Size, seed: int) -> Study:
    """The N = 2 phase portrait; seed is unused (the starts are fixed), kept for a uniform interface."""
    w = Fraction(FIG1_W)
    outcome = fig1_counterexample.build(argparse.Namespace(w=FIG1_W))
    certified = _fig1_certified(outcome)
    steps = size.fig1_steps
    with_ln, without_ln = sim.fig1_layer(w, True), sim.fig1_layer(w, False)
    starts = {
        "no-LN": [[_unit(a1), _unit(a2)] for a1, a2 in FIG1_NO_LN_STARTS],
        "post-LN token 1": [[_unit(a1), _unit(a1)] for a1 in FIG1_TOKEN1_STARTS],
        "post-LN token 2": [[TOKEN1_AT_TOP, _unit(a2)] for a2 in FIG1_TOKEN2_STARTS],
    }
    curves = {(panel, i): sim.fig1_trajectory(without_ln if panel == "no-LN" else with_ln, np.array(X0), steps)
              for panel, runs in starts.items() for i, X0 in enumerate(runs)}
    spot_start = np.array([TOKEN1_AT_TOP, _unit(FIG1_SPOT_TOKEN2)])
    spot_path = sim.fig1_trajectory(with_ln, spot_start, steps)
    spot = certify_mu([with_ln] * steps, spot_start,
                      f"post-LN, token 1 at (0, 1), token 2 at {FIG1_SPOT_TOKEN2:g} degrees, mu(X_{steps})",
                      float(consensus_distance(FLOAT64, spot_path[-1])))
    certified["spot_distance_to_equilibrium_mu"] = _distance_to_equilibrium(spot, certified)
    settings = {"w": FIG1_W, "steps": steps, "arithmetic": SIMULATED,
                "layer": "N = 2, d = 2, causal mask, W_Q = W_K = 0 (P = [[1, 0], [1/2, 1/2]]), "
                         "W_V = [[1, w], [0, 1]] (X' = P X W_V), with or without post-LN x/||x||_2",
                "runs": {"no-LN": [list(pair) for pair in FIG1_NO_LN_STARTS],
                         "post-LN token 1": list(FIG1_TOKEN1_STARTS),
                         "post-LN token 2": list(FIG1_TOKEN2_STARTS)},
                "runs_are": "start angles in degrees: (token 1, token 2) pairs without LN; token 1 alone; "
                            "token 2 with token 1 at (0, 1)"}
    findings = fig1_findings(curves, certified)
    return Study("wu-fig1", settings, curves, [spot], findings, certified=certified,
                 notes=[] if outcome.confirmed and outcome.verdict == "certified"
                 else [f"the Figure-1 certificate is not confirmed: {outcome.message}"])


def _fig1_certified(outcome) -> dict:
    """The checker-confirmed values of certify.studies.wu.fig1 (arb strings) and the trapping arc."""
    values = outcome.certificate["values"]
    cuts = outcome.certificate["witness"]["trapping_cuts"]
    keep = ("theta_A", "A_x", "A_y", "fprime_A", "theta_B", "B_x", "B_y", "fprime_B", "fprime_on_trapping_arc")
    return {"verdict": outcome.verdict, "confirmed_by_checker": outcome.confirmed,
            "precision_bits": outcome.certificate["precision"], **{k: values[k] for k in keep if k in values},
            "trapping_arc": [cuts[0], cuts[-1]], "equilibrium_mu": _equilibrium_mu(values)}


def _equilibrium_mu(values: dict) -> str:
    """mu of the rank-2 equilibrium [(0, 1), B] = ||(0, 1) - B|| / sqrt 2, from the certified B."""
    with ctx.workprec(256):
        bx, by = arb(values["B_x"]), arb(values["B_y"])
        return (((bx * bx + (1 - by) * (1 - by)) / 2).sqrt()).str(20, radius=True)


def certified_point(certified: dict, name: str) -> tuple[float, float]:
    """The float64 midpoint of a certified point (name A or B) of _fig1_certified, for plots and distances."""
    with ctx.workprec(64):
        return float(arb(certified[f"{name}_x"]).mid()), float(arb(certified[f"{name}_y"]).mid())


def _distance_to_equilibrium(spot: SpotCheck, certified: dict) -> str:
    with ctx.workprec(256):
        return abs(spot.enclosure - arb(certified["equilibrium_mu"])).str(5, radius=True)


def fig1_findings(curves: dict, certified: dict) -> list[Finding]:
    no_ln = [float(consensus_distance(FLOAT64, path[-1])) for key, path in curves.items() if key[0] == "no-LN"]
    findings = [Finding("without LayerNorm both tokens collapse to one point (mu_T < 1e-6)",
                        max(no_ln) < 1e-6, "mu_T: " + ", ".join(_g(x) for x in no_ln))]
    limits = [[0.0, math.copysign(1.0, _unit(a)[0])] for a in FIG1_TOKEN1_STARTS]
    token1_error = max(float(np.linalg.norm(curves[("post-LN token 1", i)][-1, 0] - limit))
                       for i, limit in enumerate(limits))
    findings.append(Finding("with post-LN, token 1 tends to (0, 1) or (0, -1) by the sign of its first coordinate",
                            token1_error < 0.05, f"largest distance at T: {_g(token1_error)}"))
    B = np.array(certified_point(certified, "B"))
    lo, hi = (math.degrees(float(Fraction(c))) for c in certified["trapping_arc"])
    on_arc = [i for i, a in enumerate(FIG1_TOKEN2_STARTS) if lo <= a <= hi]
    distances = [float(np.linalg.norm(curves[("post-LN token 2", i)][-1, 1] - B)) for i in on_arc]
    findings.append(Finding("with post-LN and token 1 at (0, 1), token 2 started on the certified trapping arc "
                            "tends to B: the rank-2 equilibrium [(0, 1), B] attracts",
                            bool(distances) and max(distances) < 1e-6,
                            f"{len(distances)} starts on the arc; largest distance to B at T: "
                            f"{_g(max(distances)) if distances else 'none'}"))
    return findings


STUDIES = {"wu-fig1": fig1, "wu-fig2": fig2, "wu-fig3": fig3}
