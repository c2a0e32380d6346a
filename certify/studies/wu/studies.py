"""Wu et al. (2024), Figures 1-3 as studies: what is run, the numbers behind each plot, one
certified spot check per figure, and the paper's captions judged on the numbers.

    study = STUDIES["wu-fig2"](options("bert", long=False, seed=0))

The simulations are float64 (certify.studies.wu.reproduce).  A Finding compares one statement of
the paper's caption with what this run measured (per mask: mu_T / mu_0, the rate of decay per
layer, collapsed or not): it agrees, disagrees, or the caption says nothing about it.  A
disagreement carries its cause only when a control run of the same study shows it (the same
curve in train mode instead of eval mode, or with the other LayerNorm); otherwise the cause is
reported as not isolated.  This is float64 evidence, not proof.  The certified parts are the spot
checks (certify.studies.wu.spot_check) and, for Figure 1, the checker-confirmed equilibria A, B and
the trapping arc of certify.studies.wu.fig1.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
from flint import arb

from certify.core.arith import FLOAT64
from certify.core.quantities import consensus_distance
from certify.core import seeds
from certify.core.precision import working
from certify.core.verdicts import NOT_CERTIFIED, labelled
from certify.errors import BadInput
from certify.studies.wu import fig1 as fig1_counterexample
from certify.studies.wu import reproduce as sim
from certify.studies.wu.spot_check import SpotCheck, certify_mu, decimal, exact_value

FIG1_W = "2"
SIMULATED = "float64 simulation (screening, not certified)"  # the arithmetic of every curve
COLLAPSED = 1e-3  # a curve collapses when its median mu_T < COLLAPSED * median mu_0
FLOAT64_FLOOR = 1e-12  # relative to mu_0: below it a collapsing curve is mostly float64 rounding


@dataclass(frozen=True)
class Options:
    """What to run: the random-init setting, the size, the seed, the train-mode dropout rate."""

    setting: sim.Setting
    size: sim.Size
    seed: int = 0
    dropout: float | None = None  # None: the setting's default
    progress: bool | None = None  # progress bars on stderr (None: when stderr is a terminal)

    @property
    def rates(self) -> tuple[float, ...]:
        """The dropout rates run: 0 (eval mode) and the train-mode rate when positive."""
        p = self.setting.dropout if self.dropout is None else self.dropout
        return (0.0, p) if p > 0 else (0.0,)


def options(setting: str | None = None, long: bool = False, seed: int = 0, dropout: float | None = None,
            progress: bool | None = None) -> Options:
    """The Options of a study: the setting by name (default: the setting of the short or `long` run), its
    size, seed, dropout and progress; BadInput for an unknown setting, a dropout outside [0, 1) or a negative seed."""
    name = sim.DEFAULT_SETTING[long] if setting is None else setting
    if name not in sim.SETTINGS:
        raise BadInput(f"unknown setting {name!r}: choose one of {', '.join(sim.SETTINGS)}")
    if dropout is not None and not (math.isfinite(dropout) and 0 <= dropout < 1):
        raise BadInput(f"--dropout must lie in [0, 1), got {dropout}")
    seeds.checked(seed)
    return Options(sim.SETTINGS[name], sim.SIZES[(name, long)], seed, dropout, progress)


@dataclass(frozen=True)
class Finding:
    """One statement of a figure's caption against this run: whether the run agrees (None: the caption says
    nothing), the measured numbers (per mask: mu_T / mu_0, decay rate, collapsed or not) and, for a
    disagreement, its cause when a control run shows it."""
    statement: str  # what the paper's caption says (or, when it says nothing, what was measured)
    reproduced: bool | None  # whether this run agrees; None: the caption states nothing about it
    detail: str  # the measured numbers
    cause: str | None = None  # a disagreement: what a control run of this study shows about it
    explained: bool = False  # a control run of this study shows the cause
    measured: dict = field(default_factory=dict)  # mask -> {"ratio", "rate", "collapses", "agrees"}

    @property
    def verdict(self) -> str:
        """"agrees", "DISAGREES" or "caption silent"."""
        return {True: "agrees", False: "DISAGREES", None: "caption silent"}[self.reproduced]

    @property
    def shown_verdict(self) -> str:
        """The verdict as an output shows it: read off float64 simulations that no checker re-derives, so
        labelled not certified (as a spot check is)."""
        return labelled(self.verdict, False)


@dataclass
class Study:
    """One figure's study: what was run (settings), its float64 curves (keyed per figure, see the field
    comment; mu arrays of shape (T + 1, inputs)), the certified spot checks, the findings against the
    caption, Figure 1's checker-confirmed values and notes."""
    figure: str
    settings: dict  # what was run, for the JSON and the captions
    curves: dict  # Figure 2: (init, variant, mask, dropout) -> mu (T + 1, inputs); Figure 3: (d_qk, mask) -> mu;
    #               Figure 1: (panel, run) -> path (T + 1, 2, 2)
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


def above_floor_levels(mus: list[np.ndarray]) -> list[float]:
    """log_level of each curve over the depths 1..t* before any of them falls below the float64
    floor (at least depth 1): there the curves compare true dynamics, not rounding."""
    medians = np.array([np.median(mu, axis=1) / np.median(mu[0]) for mu in mus])
    low = np.flatnonzero((medians[:, 1:] < FLOAT64_FLOOR).any(axis=0))
    last = max(1, int(low[0]) if low.size else medians.shape[1] - 1)
    return [log_level(mu, slice(1, last + 1)) for mu in mus]


@dataclass(frozen=True)
class Behaviour:
    """What one curve does: median mu_T / median mu_0, and its mean decay per layer in log10 over
    the depths before the float64 floor (positive: mu shrinks)."""

    ratio: float
    rate: float

    @property
    def collapses(self) -> bool:
        """Whether median mu_T < COLLAPSED * median mu_0."""
        return self.ratio < COLLAPSED

    def to_json(self) -> dict:
        """The behaviour as JSON: ratio, rate_log10_per_layer, collapses."""
        return {"ratio": self.ratio, "rate_log10_per_layer": self.rate, "collapses": self.collapses}

    def text(self) -> str:
        """The behaviour in words: "mu_T/mu_0 RATIO (+RATE log10/layer)"."""
        return f"mu_T/mu_0 {_g(self.ratio)} ({self.rate:+.3f} log10/layer)"


def behaviour(mu: np.ndarray) -> Behaviour:
    """The Behaviour of a curve mu of shape (T + 1, inputs): median mu_T / median mu_0, and the mean decay in
    log10 per layer up to the last depth (at least 1) before the median falls below FLOAT64_FLOOR relative
    to mu_0."""
    relative = np.median(mu, axis=1) / np.median(mu[0])
    low = np.flatnonzero(relative[1:] < FLOAT64_FLOOR)
    last = int(low[0]) if low.size else len(relative) - 1  # the last depth above the floor (>= 1 when T >= 1)
    last = max(last, 1)
    rate = -math.log10(max(relative[last], np.finfo(float).tiny)) / last
    return Behaviour(float(relative[-1]), rate)


def _g(x: float) -> str:
    return f"{x:.2g}"


def _mode(p: float) -> str:
    return "eval mode" if p == 0 else f"train mode (dropout {p:g})"


# ------------------------------------------------------------------ Figure 2

# What the caption of Figure 2 says about each (init, variant): True collapses, False does not,
# None: nothing.  "Rank collapse happens exponentially for pure attention, despite different
# attention masks having different convergence rates.  However, as soon as we solely add in
# LayerNorm, mu(X(t)) no longer converges to zero in randomly initialized models; in pretrained
# models, LayerNorm helps prevent the issue together with other components."
CAPTION_FIG2 = {
    ("random", "SAN"): (True, "pure attention collapses exponentially"),
    ("random", "SAN+LN"): (False, "as soon as LayerNorm alone is added, mu no longer converges to 0"),
    ("random", "SAN+LN(sphere)"): (False, "as soon as LayerNorm alone is added, mu no longer converges to 0"),
    ("random", "SAN+skip+LN"): (False, "with LayerNorm added, mu no longer converges to 0"),
    ("random", "full"): (False, "with LayerNorm added, mu no longer converges to 0"),
    ("pretrained", "SAN"): (True, "pure attention collapses exponentially"),
    ("pretrained", "SAN+skip+LN"): (False, "LayerNorm together with other components prevents the collapse"),
    ("pretrained", "full"): (False, "LayerNorm together with other components prevents the collapse"),
}


def fig2(opts: Options) -> Study:
    """Run Figure 2: mu(X_t) for every variant, mask and dropout rate of the random-init setting, and of the
    pretrained MiniLM when its package is installed (otherwise a note says the panel was skipped); with one
    certified spot check and the findings against the caption."""
    size, setting = opts.size, opts.setting
    model = sim.RandomModel(setting, size.d, size.heads, size.depth, opts.seed)
    X0 = sim.random_inputs(size.tokens, size.d, size.inputs, opts.seed)
    runs = [sim.Run(v, m, p) for p in opts.rates for v in setting.variants for m in sim.MASKS]
    results = sim.simulate(lambda t: sim.stack_heads(model.layer(t)), size.depth, runs, X0, opts.seed,
                           opts.progress, "wu-fig2 random init")
    curves = {("random", r.variant.name, r.mask, r.dropout): mu for r, mu in results.items()}
    settings = {"random": _random_settings(opts)}
    notes = []
    try:
        settings["pretrained"] = _pretrained_curves(opts, curves)
    except BadInput as err:
        notes.append(f"pretrained panel skipped: {err}")
    spot = _spot_fig2(opts, curves)
    return Study("wu-fig2", settings, curves, [spot], fig2_findings(curves), notes=notes)


def _random_settings(opts: Options) -> dict:
    size = opts.size
    return {"setting": opts.setting.name, "seed": opts.seed, "tokens": size.tokens, "d": size.d,
            "heads": size.heads, "depth": size.depth, "inputs": size.inputs, "dropout": list(opts.rates),
            "arithmetic": SIMULATED, "initialisation": opts.setting.initialisation,
            "inputs_are": "x_i ~ N(0, I_d); every layer drawn independently",
            "dropout_is": "train mode: inverted dropout on the attention probabilities, the attention output "
                          "and the feed-forward output; 0 is eval mode"}


def _pretrained_curves(opts: Options, curves: dict) -> dict:
    from certify.studies.models import load_text_model  # optional extra: safetensors, tokenizers, the model package

    size = opts.size
    text_model = load_text_model("minilm")
    layers = [sim.stack_heads(layer) for layer in text_model.model.layers]
    X0 = sim.pretrained_inputs(text_model, size.pretrained_tokens, size.pretrained_inputs,
                               np.random.default_rng([opts.seed, 1]))
    runs = [sim.Run(v, m, p) for p in opts.rates for v in sim.PRETRAINED_VARIANTS for m in sim.MASKS]
    results = sim.simulate(lambda t: layers[t % len(layers)], size.pretrained_depth, runs, X0, opts.seed + 1,
                           opts.progress, "wu-fig2 pretrained")
    curves.update({("pretrained", r.variant.name, r.mask, r.dropout): mu for r, mu in results.items()})
    passes = math.ceil(size.pretrained_depth / len(layers))
    return {"model": "all-MiniLM-L6-v2 (certify.studies.models 'minilm')", "tokens": size.pretrained_tokens,
            "depth": size.pretrained_depth, "inputs": size.pretrained_inputs, "seed": opts.seed,
            "model_layers": len(layers), "arithmetic": SIMULATED,
            "inputs_are": "[CLS] + random whole-word vocabulary entries + [SEP], embedded by the model",
            "layers": f"depth {size.pretrained_depth} reached by repeating the model's {len(layers)} real layers "
                      f"({passes} passes: layer t is layer t mod {len(layers)})"}


def fig2_findings(curves: dict) -> list[Finding]:
    """Figure 2's findings: each (init, variant, mode) against the caption, mask by mask, then per init and
    mode whether pure attention (SAN) collapses more slowly under the local masks (sliding, uni)."""
    groups = sorted({(key[0], key[1], key[3]) for key in curves}, key=lambda g: (g[0] != "random", g[2], g[1]))
    measured = {key: behaviour(mu) for key, mu in curves.items()}
    findings = [_variant_finding(init, variant, p, measured) for init, variant, p in groups]
    for init in ("random", "pretrained"):
        for p in sorted({key[3] for key in curves if key[0] == init and key[1] == "SAN"}):
            findings.append(_mask_rate_finding(init, p, measured))
    return findings


def _variant_finding(init: str, variant: str, p: float, measured: dict) -> Finding:
    """One (init, variant, mode) against the caption, per mask; a disagreement's cause from the
    control curves of the same study (the other mode, the other LayerNorm)."""
    expected, quote = CAPTION_FIG2.get((init, variant), (None, None))
    per_mask = {m: measured[(init, variant, m, p)] for m in sim.MASKS}
    detail = "; ".join(f"{m} {b.text()}{' collapses' if b.collapses else ''}" for m, b in per_mask.items())
    data = {m: b.to_json() | {"agrees": None if expected is None else b.collapses == expected}
            for m, b in per_mask.items()}
    where = f"{init} init, {variant}, {_mode(p)}"
    if expected is None:
        collapsed = [m for m, b in per_mask.items() if b.collapses]
        return Finding(f"{where}: the caption says nothing; measured: collapses for "
                       f"{', '.join(collapsed) or 'no mask'}", None, detail, measured=data)
    wrong = [m for m, b in per_mask.items() if b.collapses != expected]
    statement = f"{where}: {quote} ({'collapses' if expected else 'does not collapse'} for every mask)"
    if not wrong:
        return Finding(statement, True, detail, measured=data)
    cause, explained = _cause(init, variant, p, wrong, expected, measured)
    return Finding(statement, False, detail + f"; disagrees for {', '.join(wrong)}", cause, explained, data)


def _cause(init: str, variant: str, p: float, wrong: list[str], expected: bool, measured: dict) -> tuple[str, bool]:
    controls = [(key, f"in {_mode(key[3])}") for key in measured
                if key[:2] == (init, variant) and key[3] != p and key[2] == wrong[0]]
    other_ln = {"SAN+LN": "SAN+LN(sphere)", "SAN+LN(sphere)": "SAN+LN"}.get(variant)
    if other_ln is not None:
        kind = "the sphere LayerNorm x/||x||" if other_ln.endswith("(sphere)") else "the standard LayerNorm"
        controls += [((init, other_ln, wrong[0], p), f"with {kind}")]
    for (_, v, _, q), how in controls:
        fixed = [m for m in wrong if (init, v, m, q) in measured and measured[(init, v, m, q)].collapses == expected]
        if fixed == wrong:
            numbers = ", ".join(f"{m} {measured[(init, v, m, q)].text()}" for m in wrong)
            return f"the caption holds {how} ({numbers}): the {_mode(p)} curve differs by that alone", True
    tried = ", ".join(how for _, how in controls) or "none in this study"
    return f"not isolated by this run (controls tried: {tried})", False


def _mask_rate_finding(init: str, p: float, measured: dict) -> Finding:
    """'Different attention masks having different convergence rates' and their Theorem 1: the
    local masks (sliding, uni) collapse more slowly than the complete and causal ones."""
    rate = {m: measured[(init, "SAN", m, p)].rate for m in sim.MASKS}
    # a mask whose mu does not decay does not collapse at all, more slowly or not (MiniLM's pure attention: sliding
    # -0.002, uni -0.020 a layer once agreed with "more slowly")
    still = [m for m, r in rate.items() if r <= 0]
    slower = not still and max(rate["sliding"], rate["uni"]) < min(rate["complete"], rate["causal"])
    return Finding(f"{init} init, SAN, {_mode(p)}: masks collapse at different rates, the local ones (sliding, uni) "
                   "more slowly than complete and causal", slower,
                   "log10 decay per layer: " + ", ".join(f"{m} {r:.3f}" for m, r in rate.items())
                   + (f"; mu does not decay for {', '.join(still)}" if still else ""),
                   None if slower else "not isolated by this run", measured={m: {"rate": r} for m, r in rate.items()})


# ------------------------------------------------------------------ certified spot checks

# The bert setting's spot checks run a small model of the same construction (ball arithmetic on
# the paper-sized model is out of reach): N = 8, d = 16, 4 heads of d_k = 4 (d_k / d_QK is a
# square for every d_QK of the sweep).
SPOT_BERT = {"tokens": 8, "d": 16, "heads": 4, "depth": 24}


def _spot(opts: Options, variant: sim.Variant, mask: str, curves: dict, key, d_qk: Fraction | None) -> SpotCheck:
    """mu(X_T) of input 0 in ball arithmetic: on the run's own model in the project setting, on the
    small model SPOT_BERT in the bert setting (its float64 value from the same vectorised step)."""
    size = opts.size
    if opts.setting.bert_init:
        n, d, heads, depth = (SPOT_BERT[k] for k in ("tokens", "d", "heads", "depth"))
        where = f"bert setting at N = {n}, d = {d}, {heads} heads"
    else:
        n, d, heads, depth = size.tokens, size.d, size.heads, size.depth
        where = "random init"
    model = sim.RandomModel(opts.setting, d, heads, depth, opts.seed, ffn=variant.ffn)
    X0 = sim.random_inputs(n, d, 1, opts.seed)
    if opts.setting.bert_init:
        run = sim.Run(variant, mask, 0.0, d_qk)
        mu = sim.simulate(lambda t: sim.stack_heads(model.layer(t)), depth, [run], X0, opts.seed, False)[run]
    else:
        mu = curves[key]
    steps = [sim.exact_step(model.layer(t), variant, mask, n, d_qk) for t in range(depth)]
    temperature = "" if d_qk is None else f", d_QK = {d_qk}"
    what = f"{where}, {variant.name}, {mask} mask{temperature}, eval mode, input 0, mu(X_{depth})"
    spot = certify_mu(steps, X0[0], what, mu[-1, 0])
    return spot if opts.setting.bert_init else replace(spot, curve=key)


def _spot_fig2(opts: Options, curves: dict) -> SpotCheck:
    # bert: SAN+LN in eval mode, where float64 stalls near its floor; project: pure attention
    name = "SAN+LN" if opts.setting.bert_init else "SAN"
    variant = next(v for v in opts.setting.variants if v.name == name)
    return _spot(opts, variant, "complete", curves, ("random", variant.name, "complete", 0.0), None)


# ------------------------------------------------------------------ Figure 3


def fig3(opts: Options) -> Study:
    """Run Figure 3: mu(X_t) of pure attention (SAN, eval mode) for every mask and every d_QK of D_QK_SWEEP,
    with one certified spot check (causal, d_QK = 1) and the findings against the caption."""
    size, setting = opts.size, opts.setting
    model = sim.RandomModel(setting, size.d, size.heads, size.depth, opts.seed, ffn=False)
    X0 = sim.random_inputs(size.tokens, size.d, size.inputs, opts.seed)
    runs = [sim.Run(sim.SAN, m, 0.0, t) for t in sim.D_QK_SWEEP for m in sim.MASKS]
    results = sim.simulate(lambda t: sim.stack_heads(model.layer(t)), size.depth, runs, X0, opts.seed,
                           opts.progress, "wu-fig3")
    curves = {(str(r.d_qk), r.mask): mu for r, mu in results.items()}
    settings = {"random": _random_settings(opts) | {
        "dropout": [0.0], "variant": "SAN (eval mode)", "d_QK": [str(t) for t in sim.D_QK_SWEEP],
        "scores": "S = (X W_Q)(X W_K)^T / sqrt(d_QK) (Wu et al.'s convention; d_QK = d_k is the standard "
                  f"scaling, here d_k = {size.d // size.heads})"}}
    spot = _spot(opts, sim.SAN, "causal", curves, ("1", "causal"), Fraction(1))
    return Study("wu-fig3", settings, curves, [spot], fig3_findings(curves))


TEMPERATURE_EFFECT = 0.02  # in mean log10 mu: a smaller difference between two d_QK is no measurable effect


def temperature_direction(levels: list[float]) -> str:
    """How the curve heights order along the increasing d_QK sweep: "slower" (each smaller d_QK
    higher by more than TEMPERATURE_EFFECT: the caption's direction), "reversed" (some smaller d_QK
    lower by more than that) or "none"."""
    steps = [a - b for a, b in zip(levels, levels[1:])]
    if all(step > TEMPERATURE_EFFECT for step in steps):
        return "slower"
    return "reversed" if any(step < -TEMPERATURE_EFFECT for step in steps) else "none"


def fig3_findings(curves: dict) -> list[Finding]:
    """The caption's direction, per mask: a smaller d_QK (a lower temperature, sharper attention)
    slows the collapse of SAN; and the temperature matters more with global attention."""
    sweep = [str(t) for t in sim.D_QK_SWEEP]  # increasing d_QK: higher temperature, flatter attention
    level = {m: above_floor_levels([curves[(t, m)] for t in sweep]) for m in sim.MASKS}
    findings = []
    for m, v in level.items():
        direction = temperature_direction(v)
        findings.append(Finding(
            f"{m} mask: a smaller d_QK slows the collapse of SAN (mu higher at d_QK = 1/64 than at 1, at 1 than at 64)",
            direction == "slower", f"measured: {direction}; mean log10 mu before the float64 floor, d_QK = "
            + ", ".join(sweep) + ": " + ", ".join(f"{x:.2f}" for x in v),
            None if direction == "slower" else "not isolated by this run",
            measured={"direction": direction, "levels": dict(zip(sweep, v))}))
    gap = {m: v[0] - v[-1] for m, v in level.items()}
    larger = gap["complete"] > max(gap["sliding"], gap["uni"])
    findings.append(Finding("the temperature matters more with global attention than with local masks "
                            "(the d_QK = 1/64 to 64 gap is larger for complete than for sliding and uni)", larger,
                            "gap in mean log10 mu: " + ", ".join(f"{m} {v:.2f}" for m, v in gap.items()),
                            None if larger else "not isolated by this run", measured={"gaps": gap}))
    return findings


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


def fig1(opts: Options) -> Study:
    """The N = 2 phase portrait; only the size's step count is used (the starts are fixed, the
    layer is the paper's)."""
    w = Fraction(FIG1_W)
    outcome = fig1_counterexample.build(argparse.Namespace(w=FIG1_W))
    certified = _fig1_certified(outcome)
    steps = opts.size.fig1_steps
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
    settings = {"w": FIG1_W, "steps": steps, "arithmetic": SIMULATED,
                "layer": "N = 2, d = 2, causal mask, W_Q = W_K = 0 (P = [[1, 0], [1/2, 1/2]]), "
                         "W_V = [[1, w], [0, 1]] (X' = P X W_V), with or without post-LN x/||x||_2",
                "runs": {"no-LN": [list(pair) for pair in FIG1_NO_LN_STARTS],
                         "post-LN token 1": list(FIG1_TOKEN1_STARTS),
                         "post-LN token 2": list(FIG1_TOKEN2_STARTS)},
                "runs_are": "start angles in degrees: (token 1, token 2) pairs without LN; token 1 alone; "
                            "token 2 with token 1 at (0, 1)"}
    findings = fig1_findings(curves, certified)
    notes = [] if outcome.confirmed and outcome.verdict == "certified" \
        else [f"the Figure-1 certificate is {NOT_CERTIFIED}: the checker did not confirm it ({outcome.message})"]
    return Study("wu-fig1", settings, curves, [spot], findings, certified=certified,
                 notes=notes + [_distance_to_equilibrium(spot, certified)])


def _fig1_certified(outcome) -> dict:
    """The checker-confirmed values of certify.studies.wu.fig1 (arb strings) and the trapping arc."""
    values = outcome.certificate["values"]
    cuts = outcome.certificate["witness"]["trapping_cuts"]
    keep = ("theta_A", "A_x", "A_y", "fprime_A", "theta_B", "B_x", "B_y", "fprime_B", "fprime_on_trapping_arc")
    return {"verdict": outcome.shown_verdict, "confirmed_by_checker": outcome.confirmed,
            "precision_bits": outcome.certificate["precision"], **{k: values[k] for k in keep if k in values},
            "trapping_arc": [cuts[0], cuts[-1]], "equilibrium_mu": _equilibrium_mu(values)}


def _equilibrium_mu(values: dict) -> str:
    """mu of the rank-2 equilibrium [(0, 1), B] = ||(0, 1) - B|| / sqrt 2, from the certified B."""
    with working(256):
        bx, by = arb(values["B_x"]), arb(values["B_y"])
        return (((bx * bx + (1 - by) * (1 - by)) / 2).sqrt()).str(20, radius=True)


def fig1_said(certified: dict, what: str) -> str:
    """what (the trapping arc, an equilibrium) called certified only when the checker confirmed Figure 1's
    certificate (_fig1_certified), else labelled not certified."""
    return f"certified {what}" if certified["confirmed_by_checker"] else f"{what} ({NOT_CERTIFIED})"


def certified_point(certified: dict, name: str) -> tuple[float, float]:
    """The float64 midpoint of a certified point (name A or B) of _fig1_certified, for plots and distances."""
    with working(64):
        return float(arb(certified[f"{name}_x"]).mid()), float(arb(certified[f"{name}_y"]).mid())


def trapping_arc(certified: dict) -> tuple[float, float]:
    """The ends of the certified trapping arc of _fig1_certified as float64 angles in radians (exact fractions in
    the certified values)."""
    lo, hi = (float(Fraction(c)) for c in certified["trapping_arc"])
    return lo, hi


def _distance_to_equilibrium(spot: SpotCheck, certified: dict) -> str:
    """How far the spot check's mu lies from the equilibrium's, as a note: the spot check is ball arithmetic that no
    checker re-derives, so the distance is no checker-confirmed value (it was kept among them)."""
    with working(256):
        distance = exact_value(abs(spot.enclosure - arb(certified["equilibrium_mu"])).upper())
    return (f"spot check: mu(X_{spot.depth}) differs from mu of the rank-2 equilibrium [(0, 1), B] by at most "
            f"{decimal(distance, down=False)} ({NOT_CERTIFIED}: the spot check's ball arithmetic)")


def fig1_findings(curves: dict, certified: dict) -> list[Finding]:
    """Figure 1's findings: without LayerNorm both tokens collapse; with post-LN token 1 tends to (0, +-1);
    token 2 started on the certified trapping arc tends to the certified B."""
    no_ln = [float(consensus_distance(FLOAT64, path[-1])) for key, path in curves.items() if key[0] == "no-LN"]
    findings = [Finding("without LayerNorm both tokens collapse to one point (mu_T < 1e-6)",
                        max(no_ln) < 1e-6, "mu_T: " + ", ".join(_g(x) for x in no_ln))]
    limits = [[0.0, math.copysign(1.0, _unit(a)[0])] for a in FIG1_TOKEN1_STARTS]
    token1_error = max(float(np.linalg.norm(curves[("post-LN token 1", i)][-1, 0] - limit))
                       for i, limit in enumerate(limits))
    findings.append(Finding("with post-LN, token 1 tends to (0, 1) or (0, -1) by the sign of its first coordinate",
                            token1_error < 0.05, f"largest distance at T: {_g(token1_error)}"))
    B = np.array(certified_point(certified, "B"))
    lo, hi = map(math.degrees, trapping_arc(certified))
    on_arc = [i for i, a in enumerate(FIG1_TOKEN2_STARTS) if lo <= a <= hi]
    distances = [float(np.linalg.norm(curves[("post-LN token 2", i)][-1, 1] - B)) for i in on_arc]
    findings.append(Finding(f"with post-LN and token 1 at (0, 1), token 2 started on the "
                            f"{fig1_said(certified, 'trapping arc')} tends to B: the rank-2 equilibrium [(0, 1), B] "
                            "attracts",
                            bool(distances) and max(distances) < 1e-6,
                            f"{len(distances)} starts on the arc; largest distance to B at T: "
                            f"{_g(max(distances)) if distances else 'none'}"))
    return findings


STUDIES = {"wu-fig1": fig1, "wu-fig2": fig2, "wu-fig3": fig3}
# the options of Options each figure reads beside its size (--long), and why it reads no other
READS = {"wu-fig1": ((), "its layer and starts are the paper's, fixed"),
         "wu-fig2": (("setting", "dropout", "seed"), ""),
         "wu-fig3": (("setting", "seed"), "it runs pure attention in eval mode")}


def unread(figure: str, given: dict) -> None:
    """BadInput naming the options given (a name -> value, None when not given) that the figure does not read: a
    figure written as if they had been used would say what was not done."""
    reads, why = READS[figure]
    ignored = [f"--{name}" for name, value in given.items() if value is not None and name not in reads]
    if ignored:
        raise BadInput(f"{figure} does not use {', '.join(ignored)}: {why}")


def all_accounted(study: Study) -> bool:
    """Every finding agrees with the paper, concerns what the caption does not state, or
    disagrees with a cause a control run of the study measured."""
    return all(f.reproduced is not False or f.explained for f in study.findings)
