"""A real model over a corpus: every sentence x every layer and head, certified as `certify model` does it.

A corpus is a UTF-8 text file, one sentence per line; blank lines and lines starting with '#' are
ignored.  The shipped default (data/corpus.txt) is 200 short English sentences dedicated to the
public domain (CC0, see its header).  Sentence i of a corpus is certified by certify_sentences, a
top-level (picklable) function that a process pool or a Dask worker runs on a list of indices: per
sentence, the forward pass, then certified.iter_layers on every layer and head (every regime and step
confirmed by the independent checker from an attention-head certificate), returned as one compact
record (format below) plus the certificate texts worth keeping: the attention-head certificate of
every head with a violated step (a counterexample to collapse.dobrushin or collapse.tau).  The
certificates of the steps that hold are checked and dropped: each holds the head's weights (about
0.5 MB), and `certify model --text SENTENCE` re-derives them.

A record (one JSON object per sentence):
    i, text, n_tokens, tokens
    layers: per layer {layer, D, rank, rank_max, rank_certified, heads}, per head
        {head, bits, a, a_D2, log10_gap, tau, D_PX_over_D, regime, step1, step2, checker, certificate,
         certificate_sha256}
    Every number is an enclosure [lower, upper] of binary64 numbers rounded outward from the ball
    (report.bounds), so lower <= exact <= upper; null for an endpoint beyond binary64.  "certificate"
    is the name of the kept certificate of that head and "certificate_sha256" the sha256 of its text,
    or both null.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from certify.core import files
from certify.errors import BadInput
from certify.studies.models import report
from certify.studies.models.certified import (DEFAULT_BITS, MAX_BITS, HeadNorms, LayerCertificate, check_token_count,
                                              iter_layers)
from certify.studies.models.pipeline import TextModel, load_text_model

SHIPPED_NAME = "shipped (certify/studies/models/data/corpus.txt)"  # the shipped corpus's name in a run's manifest
MAX_LINE_CHARS = 2000  # a longer line is not a sentence (and would exceed the model's positions)
# the bytes of the longest line read: such a line in UTF-8 (4 bytes a character at most) and its "\r\n"; a file
# without newlines (a minified JSON file) was read whole, three times its size in memory, before it was refused
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS + 2
MAX_SENTENCES = 10**7


def default_corpus_path() -> Path:
    """Where the shipped corpus (200 CC0 sentences, data/corpus.txt) is installed."""
    return Path(str(resources.files("certify.studies.models") / "data" / "corpus.txt"))


def read_corpus(path: Path | None) -> list[str]:
    """The sentences of a corpus file (the shipped one for None), or BadInput saying what is wrong."""
    path = files.input_file(default_corpus_path() if path is None else path, "corpus file")
    sentences = []
    with path.open("rb") as stream:
        for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise BadInput(f"{path}: line {number} has more than {MAX_LINE_BYTES} bytes: a corpus holds one "
                               "sentence per line")
            if b"\0" in raw:
                raise BadInput(f"{path}: line {number} holds a NUL byte: a corpus is a text file, one sentence per line")
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                raise BadInput(f"{path}: line {number} is not UTF-8 text") from None
            if len(line) > MAX_LINE_CHARS:
                raise BadInput(f"{path}: line {number} has {len(line)} characters, more than {MAX_LINE_CHARS}: "
                               "a corpus holds one sentence per line")  # fmt: skip
            if line and not line.startswith("#"):
                sentences.append(line)
            if len(sentences) > MAX_SENTENCES:
                raise BadInput(f"{path}: more than {MAX_SENTENCES} sentences")
    if not sentences:
        raise BadInput(f"{path}: no sentences (blank lines and '#' comments are ignored)")
    return sentences


@dataclass(frozen=True)
class CorpusRun:
    """What decides every record: the model, the sentences and the precision ladder."""

    model: str  # 'minilm' or a model folder
    sentences: tuple[str, ...]
    bits: int = DEFAULT_BITS
    max_bits: int = MAX_BITS

    def check_sentences(self, text_model: TextModel, wanted: int) -> None:
        """Each of the first `wanted` sentences is one the model and the analysis take: its tokens fit the model's
        positions and vocabulary, and are at least two (BadInput naming the first that is not).  Found by the worker
        deciding it, such a sentence stopped the run after the sentences before it were committed, and every resumed
        one.  The sentences a run does not want are not tokenised: `--sentences 1` of ten million took minutes."""
        for index, sentence in enumerate(self.sentences[:wanted]):
            try:
                tokens = text_model.tokens(sentence)
                check_token_count(len(tokens.tokens))
                text_model.model.checked_input(tokens.input_ids, tokens.token_type_ids)
            except BadInput as err:
                raise BadInput(f"sentence {index}: {err}") from None


# One loaded model per worker process (and its weight-only norms, HeadNorms): loading MiniLM takes a
# fraction of a second, its 72 heads' norms several seconds; both are reused for every sentence.
_LOADED: dict[str, tuple[TextModel, HeadNorms]] = {}


def _loaded(model: str) -> tuple[TextModel, HeadNorms]:
    if model not in _LOADED:
        _LOADED[model] = (load_text_model(model), HeadNorms())
    return _LOADED[model]


def certify_sentences(run: CorpusRun, indices: list[int]) -> list[tuple[dict, dict[str, str]]]:
    """(record, {certificate name: certificate JSON text}) for each sentence index, in order."""
    return certify_texts(run, [(i, run.sentences[i]) for i in indices])


def certify_texts(run: CorpusRun, items: list[tuple[int, str]]) -> list[tuple[dict, dict[str, str]]]:
    """certify_sentences for each (sentence index i, its text), by the run's model and precision ladder (its
    sentences are not read): `certify verify` re-derives a recorded sentence with it, from the record's text."""
    text_model, norms = _loaded(run.model)
    out = []
    for i, text in items:
        tokens = text_model.tokens(text)
        trace = text_model.trace_of(tokens)
        layers = list(iter_layers(text_model.model, trace, run.bits, run.max_bits, norms))
        out.append(sentence_record(i, text, list(tokens.tokens), layers))
    return out


def certificate_name(i: int, layer: int, head: int) -> str:
    """The file name, in the run's certificates/, of the certificate kept for a head of sentence i."""
    return f"violated-{i}-L{layer}-H{head}.json"


def certificate_sentence(name: str) -> int | None:
    """The sentence i of a file named certificate_name(i, layer, head), or None for any other name."""
    found = re.fullmatch(r"violated-(0|[1-9][0-9]*)-L(0|[1-9][0-9]*)-H(0|[1-9][0-9]*)\.json", name)
    return None if found is None else int(found[1])


def sentence_record(i: int, text: str, tokens: list[str], layers: list[LayerCertificate]) -> tuple[dict, dict[str, str]]:
    """The record of sentence i (the format of the module docstring) and the certificates it keeps, by
    file name: the attention-head certificate of each head with a violated step, its sha256 in the record."""
    certificates: dict[str, str] = {}
    record_layers = []
    for layer in layers:
        heads = []
        for h in layer.heads:
            name = digest = None
            if h.violation is not None:  # a counterexample to a step: kept whole
                name = certificate_name(i, layer.layer, h.head)
                certificates[name] = json.dumps(h.violation, indent=1) + "\n"
                digest = sha256_text(certificates[name])
            heads.append({
                "head": h.head, "bits": h.bits,
                **{key: report.bounds(getattr(h, attr)) for key, attr in
                   (("a", "a"), ("a_D2", "a_D2"), ("log10_gap", "log10_gap"), ("tau", "tau"), ("D_PX_over_D", "ratio"))},
                "regime": h.regime, "step1": h.step1, "step2": h.step2, "checker": h.checker, "certificate": name,
                "certificate_sha256": digest,
            })  # fmt: skip
        c = layer.configuration
        record_layers.append({"layer": layer.layer, "D": report.bounds(layer.D), "rank": c.rank,
                              "rank_max": c.rank_max, "rank_certified": c.rank_certified, "heads": heads})  # fmt: skip
    record = {"i": i, "text": text, "n_tokens": len(tokens), "tokens": tokens, "layers": record_layers}
    return record, certificates


def sha256_text(text: str) -> str:
    """The sha256 of text's UTF-8 bytes, in hex (the digests of sentences and certificates in a run)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
