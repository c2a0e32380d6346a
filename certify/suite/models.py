"""`certify run`'s section for a real model: the regimes of all-MiniLM-L6-v2's heads, certified.

One Row per layer on a short sentence (with --long, also on a longer one): the regimes of its
heads and whether both steps of collapse.global (D(P_h X) <= tau D and tau <= 1 - exp(-a D^2),
biases included) were certified for every head, and the configuration's centred rank.  Expected:
every step holds, every regime is decided and every layer is certified full rank.  The JSON
report and the plots go to <report>/model/.  Without the model installed the section is one
skipped Row that says how to install it.
"""

from __future__ import annotations

import importlib.util

from certify.core import jsonfile
from certify.engine import HOLDS, UNDECIDED, VIOLATED
from certify.studies.models import MODEL_PACKAGES, install_hint, load_text_model
from certify.figures import models as model_figures
from certify.studies.models import report
from certify.studies.models.certified import DEFAULT_BITS, MAX_BITS, iter_layers, regime_counts
from certify.suite import Row, SuiteRun

TITLE = "model"
COST = 11  # with the model installed (without it, one skipped row at once)
FOLDER = "model"
MODEL = "minilm"
TEXTS = ("A man is eating food.",)
LONG_TEXTS = TEXTS + ("The quick brown fox jumps over the lazy dog near the river bank.",)


# What the section needs beyond certify itself: the model's package and the `models` extra.
EXTRA_MODULES = ("safetensors", "tokenizers")


def section(run: SuiteRun):
    """The rows of the "model" section of `certify run`: one row per layer of all-MiniLM-L6-v2 on a short
    sentence (and a long one with --long): head regimes, both steps of collapse.global certified for every
    head, the centred rank; one skipped row when the model is not installed."""
    package, pip_name = MODEL_PACKAGES[MODEL]
    if importlib.util.find_spec(package) is None:
        yield Row(section=TITLE, case="all-MiniLM-L6-v2", verdict="skipped", ok=True, expected=HOLDS,
                  detail=f"not installed: {install_hint(pip_name)}")  # fmt: skip
        return
    missing = [name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        yield Row(section=TITLE, case="all-MiniLM-L6-v2", verdict="skipped", ok=True, expected=HOLDS,
                  detail=f"needs {', '.join(missing)}: {install_hint(pip_name)}")
        return
    text_model = load_text_model(MODEL)
    folder = run.folder(FOLDER)
    for index, text in enumerate(LONG_TEXTS if run.long else TEXTS):
        trace = text_model.trace(text)
        path = folder / f"{MODEL}-{index}.json"
        layers = []
        for layer in iter_layers(text_model.model, trace, DEFAULT_BITS, MAX_BITS):
            layers.append(layer)
            yield _layer_row(layer, text)
        tokens = text_model.tokens(text)
        built = report.build(str(text_model.folder), text_model.model.config, text, list(tokens.tokens), layers,
                             DEFAULT_BITS, MAX_BITS, tokens.truncation_report())  # fmt: skip
        jsonfile.write(built, path)
        model_figures.write(built, folder / f"{MODEL}-{index}", name=MODEL, **run.figure_options())


def _layer_row(layer, text: str) -> Row:
    """A layer's row: it names no certificate, since its heads' are confirmed as they are made and not written (the
    JSON report beside the figures is data, which `certify verify` refuses)."""
    steps = [step for head in layer.heads for step in (head.step1, head.step2)]
    verdict = VIOLATED if VIOLATED in steps else UNDECIDED if UNDECIDED in steps else HOLDS
    regimes = {name: count for name, count in regime_counts([layer]).items() if count}
    c = layer.configuration
    rank = f"centred rank {c.rank}/{c.rank_max}" + (" certified" if c.rank_certified else " NOT certified")
    detail = (f"{len(layer.heads)} heads: " + ", ".join(f"{count} {name}" for name, count in sorted(regimes.items()))
              + f"; both steps certified for {sum(h.step1 == h.step2 == HOLDS for h in layer.heads)}; {rank}")  # fmt: skip
    ok = verdict == HOLDS and c.rank_certified and UNDECIDED not in regimes
    return Row(section=TITLE, case=f"layer {layer.layer} on {text!r}", verdict=verdict, detail=detail, ok=ok,
               expected=HOLDS)  # fmt: skip
