"""The options of a corpus run's audit (`certify verify CORPUS_RUN --sample K --model PATH`, certify.verify), in a
module of their own: the command reads a certificate file without loading the models' code."""

from __future__ import annotations

from certify.core.arguments import Spelling, refuse_unused

# recorded sentences decided again at random by default: on 2 idle cores, 8 sentences of a MiniLM run took 22 s
# (31 to 35 s of CPU: about 5 s for each worker's model and 72 head norms, then about 3 s a sentence)
SAMPLE = 8
# where changed limits apply, said of a corpus run's folder: `certify model` takes none
LIMITS_APPLY = ("a certificate file: a corpus run's sentences are decided again as `certify model` decides them, "
                "under no limits (the run's --max-prec bounds a head's work)")


def refuse_unused_model(model: str | None, everything: bool, sample: int, names: Spelling) -> None:
    """BadInput for a model given (--model) where no sentence is decided again (--sample 0): none is loaded, and
    the one given would be believed checked.  `names` spells the options."""
    refuse_unused([names("model")] if model is not None and not (everything or sample) else [],
                  f"a sentence decided again, and {names.given('sample', 0)} decides none")


def refuse_corpus_options(model, corpus, source: str, names: Spelling) -> None:
    """--model and --corpus (as `names` spells them) name where a corpus run's model and corpus are here: beside a
    certificate or a campaign folder (`source`) they did nothing, and are refused as a campaign's options beside a
    certificate are."""
    refuse_unused([names(name) for name, value in (("model", model), ("corpus", corpus)) if value is not None],
                  f"the folder of a `certify model --corpus` run, which {source} is not")
