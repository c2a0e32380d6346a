"""Tokenisation of real text with the model folder's tokenizer.json (the `tokenizers` library).

Padding and truncation are turned off: the forward pass then sees exactly the tokens of the
text ([CLS] ... [SEP] for BERT), and a text longer than the model's positions is refused by the
model rather than cut silently.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from certify.errors import BadInput
from certify.studies.models.loading import install_hint

TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class Tokens:
    """A text as the model reads it: the word pieces (special tokens included) and the id, attention-mask
    and token-type arrays the forward pass takes."""

    text: str
    tokens: tuple[str, ...]  # the word pieces, special tokens included
    input_ids: np.ndarray  # (n,) int64
    attention_mask: np.ndarray  # (n,) int64, all ones without padding
    token_type_ids: np.ndarray  # (n,) int64


def load_tokenizer(folder: Path):
    """The folder's tokenizer.json as a `tokenizers.Tokenizer`, padding and truncation off."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise BadInput(f"tokenising text needs tokenizers: {install_hint()}") from None
    path = Path(folder) / TOKENIZER_FILE
    if not path.is_file():
        raise BadInput(f"the model folder '{folder}' has no {TOKENIZER_FILE}, so text cannot be tokenised")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # noqa: BLE001 - the Rust side raises plain Exception on a malformed file
        raise BadInput(f"cannot read {path}: {err}") from None
    tokenizer.no_padding()  # shipped BERT tokenizers pad to a fixed length (128 for MiniLM)
    tokenizer.no_truncation()
    return tokenizer


@contextmanager
def _rust_stderr_silenced():
    """File descriptor 2 on /dev/null for the call: a panic of the tokenizer's Rust code prints its own lines there,
    past sys.stderr, beside the one line of the bad input."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to silence
        yield
        return
    try:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 2)
        os.close(quiet)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def tokenize_text(tokenizer, text: str) -> Tokens:
    """The tokens of one text, exactly as the model will see them."""
    if not isinstance(text, str):
        raise BadInput(f"the text to tokenise must be a string, not {type(text).__name__}")
    try:  # bytes of a command line that are not UTF-8 reach Python as lone surrogates, which tokenizers refuses
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise BadInput(f"the text is not UTF-8: {text[max(err.start - 10, 0):err.end + 10]!a}") from None
    try:
        with _rust_stderr_silenced():
            encoding = tokenizer.encode(text)
    except BaseException as err:  # the Rust side raises plain Exception on what the file lacks ([UNK]), and a
        # panic as pyo3's PanicException, no Exception at all: it left main with a traceback and exit 1
        if not isinstance(err, Exception) and type(err).__name__ != "PanicException":
            raise
        raise BadInput(f"the model's {TOKENIZER_FILE} cannot tokenise the text: {err}") from None
    return Tokens(
        text=text,
        tokens=tuple(encoding.tokens),
        input_ids=np.asarray(encoding.ids, dtype=np.int64),
        attention_mask=np.asarray(encoding.attention_mask, dtype=np.int64),
        token_type_ids=np.asarray(encoding.type_ids, dtype=np.int64),
    )
