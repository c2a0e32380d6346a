"""A model together with its tokenizer: text in, forward trace or sentence embedding out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from certify.studies.models.bert import BertModel, ForwardTrace, sentence_embedding
from certify.studies.models.loading import load_model, locate_model
from certify.studies.models.tokenize import Tokens, Truncation, load_tokenizer, read_truncation, tokenize_text


@dataclass(frozen=True)
class TextModel:
    """A loaded model with its tokenizer and folder: text in, tokens, forward traces and sentence vectors out."""

    model: BertModel
    tokenizer: object  # a tokenizers.Tokenizer with padding and truncation off
    folder: Path
    truncation: Truncation | None = None  # sentence-transformers' cut of a long text (tokenize.read_truncation)

    def tokens(self, text: str) -> Tokens:
        """The word pieces and ids of `text` under the model's tokenizer (special tokens added, no padding), cut
        as the model as shipped cuts a long text."""
        return tokenize_text(self.tokenizer, text, self.truncation)

    def trace(self, text: str) -> ForwardTrace:
        """The forward pass on the tokens of one text."""
        return self.trace_of(self.tokens(text))

    def trace_of(self, tokens: Tokens) -> ForwardTrace:
        """The forward pass on the tokens of a text (no padding: every token is real)."""
        return self.model.forward(tokens.input_ids, tokens.attention_mask, tokens.token_type_ids)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit sentence vectors, one row per text (mean pooling + L2 normalisation)."""
        return np.stack([sentence_embedding(self.trace(text)) for text in texts])


def load_text_model(name_or_dir: str | Path) -> TextModel:
    """The model (see loading.locate_model for names and folders), its tokenizer.json and the settings of the
    folder that change the tokens (tokenize.load_tokenizer, tokenize.read_truncation)."""
    folder = locate_model(name_or_dir)
    tokenizer = load_tokenizer(folder)  # first: a missing tokenizer is cheaper to report
    model = load_model(folder)
    truncation = read_truncation(folder, model.config.max_positions, tokenizer)
    return TextModel(model=model, tokenizer=tokenizer, folder=folder, truncation=truncation)
