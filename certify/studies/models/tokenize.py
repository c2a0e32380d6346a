"""Tokenisation of real text with the model folder's tokenizer.json (the `tokenizers` library), read as the
model as shipped reads it.

tokenizer_config.json, when the folder has one, sets what transformers' BERT tokenizer sets on tokenizer.json's
BertNormalizer: do_lower_case, strip_accents and tokenize_chinese_chars (each with that class's default when
absent); another tokenizer class, or another normalizer, is refused.  sentence_bert_config.json, the mark of a
sentence-transformers model, lower-cases the text when its do_lower_case is true and cuts a long text to its
max_seq_length tokens as sentence-transformers does ([CLS] and [SEP] kept; the end of the text dropped, or its
start when tokenizer_config.json's truncation_side is "left"): Tokens says how many tokens the whole text has.
Padding is off, and a folder without sentence_bert_config.json cuts nothing: the forward pass then sees exactly the
tokens of the text ([CLS] ... [SEP] for BERT), and a text longer than the model's positions is refused by the
model rather than cut silently.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from certify.core import files, jsonfile
from certify.core.limits import DEFAULT
from certify.errors import BadInput, shown
from certify.studies.models.loading import install_hint

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"  # transformers' settings of the tokenizer
SENTENCE_CONFIG_FILE = "sentence_bert_config.json"  # sentence-transformers' settings: max_seq_length, do_lower_case
TOKEN_FILES = (TOKENIZER_FILE, TOKENIZER_CONFIG_FILE, SENTENCE_CONFIG_FILE)  # the files a text's tokens depend on
BERT_TOKENIZERS = (None, "BertTokenizer", "BertTokenizerFast")  # classes whose settings are read (None: config.json's)
TRUNCATION_SIDES = ("right", "left")  # the end of a long text that is dropped


@dataclass(frozen=True)
class Truncation:
    """Where the model as shipped cuts a long text: to max_length tokens, the special ones included, dropping the
    text's end (side "right") or its start ("left")."""

    max_length: int
    side: str


@dataclass(frozen=True)
class Tokens:
    """A text as the model reads it: the word pieces (special tokens included) and the id, attention-mask
    and token-type arrays the forward pass takes."""

    text: str
    tokens: tuple[str, ...]  # the word pieces, special tokens included
    input_ids: np.ndarray  # (n,) int64
    attention_mask: np.ndarray  # (n,) int64, all ones without padding
    token_type_ids: np.ndarray  # (n,) int64
    text_tokens: int  # the tokens of the whole text, more than len(tokens) when truncation cut it
    truncation: Truncation | None  # the truncation read from the model folder, whether it cut the text or not

    def truncation_report(self) -> dict | None:
        """The truncation as a report states it (None when the folder sets none): max_seq_length, side and the
        tokens of the whole text."""
        if self.truncation is None:
            return None
        return {"max_seq_length": self.truncation.max_length, "side": self.truncation.side,
                "text_tokens": self.text_tokens}


def load_tokenizer(folder: Path):
    """The folder's tokenizer.json as a `tokenizers.Tokenizer`, padding and truncation off (tokenize_text cuts a
    text), with the settings of tokenizer_config.json and of sentence_bert_config.json that change the tokens."""
    try:
        from tokenizers import Tokenizer, normalizers
    except ImportError:
        raise BadInput(f"tokenising text needs tokenizers: {install_hint()}") from None
    path = Path(folder) / TOKENIZER_FILE
    if not path.is_file():
        raise BadInput(f"the model folder '{folder}' has no {TOKENIZER_FILE}, so text cannot be tokenised")
    try:  # within the JSON reader's limits asked before parsing (jsonfile.bounded): the tokenizer's Rust code read a
        # file of any size, and one of 5.5 million words (98 MB) took 1.6 GB and 6 s
        with open(path, "rb") as handle:
            text = files.head(handle, DEFAULT.bytes + 1)
    except OSError as err:
        raise BadInput(f"cannot read {path}: {err.strerror or err}") from None
    jsonfile.bounded(text, str(path), raise_with=None)
    try:
        tokenizer = Tokenizer.from_str(text.decode("utf-8"))
    except Exception as err:  # noqa: BLE001 - the Rust side raises plain Exception on a malformed file
        raise BadInput(f"cannot read {path}: {err}") from None
    tokenizer.no_padding()  # shipped BERT tokenizers pad to a fixed length (128 for MiniLM)
    tokenizer.no_truncation()
    _honour_tokenizer_config(tokenizer, folder)
    found = _settings(folder, SENTENCE_CONFIG_FILE)
    if found is not None and _flag(*found, "do_lower_case", False):  # sentence-transformers lower-cases the text
        steps = [normalizers.Lowercase()] + ([] if tokenizer.normalizer is None else [tokenizer.normalizer])
        tokenizer.normalizer = normalizers.Sequence(steps)
    return tokenizer


def _honour_tokenizer_config(tokenizer, folder: Path) -> None:
    """Set tokenizer_config.json's do_lower_case, strip_accents and tokenize_chinese_chars on tokenizer.json's
    BertNormalizer, each with its default in transformers' BERT tokenizer when absent (true, null, true), as that
    class does; without the file, tokenizer.json stands alone.  Another tokenizer class, or another normalizer
    (which transformers' versions treat differently), is refused: the tokens would not be the shipped model's."""
    from tokenizers import normalizers  # imported by load_tokenizer, which calls this

    found = _settings(folder, TOKENIZER_CONFIG_FILE)
    if found is None:
        return
    path, raw = found
    if raw.get("tokenizer_class") not in BERT_TOKENIZERS:
        raise BadInput(f"{path}: tokenizer_class {shown(raw['tokenizer_class'])} cannot be honoured: only BERT's "
                       f"({', '.join(BERT_TOKENIZERS[1:])}) is read")
    normalizer = tokenizer.normalizer
    if not isinstance(normalizer, normalizers.BertNormalizer):
        kind = "none" if normalizer is None else type(normalizer).__name__
        raise BadInput(f"{path}: its do_lower_case, strip_accents and tokenize_chinese_chars cannot be honoured: "
                       f"{TOKENIZER_FILE}'s normalizer is {kind}, not a BertNormalizer")
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=normalizer.clean_text,
        lowercase=_flag(path, raw, "do_lower_case", True),
        strip_accents=_flag(path, raw, "strip_accents", None, null=True),
        handle_chinese_chars=_flag(path, raw, "tokenize_chinese_chars", True),
    )


def read_truncation(folder: Path, max_positions: int, tokenizer) -> Truncation | None:
    """How sentence-transformers cuts a long text for a folder with sentence_bert_config.json: at its
    max_seq_length, or without one at the smaller of tokenizer_config.json's model_max_length and the model's
    positions; on the side of tokenizer_config.json's truncation_side ("right" when absent).  None for a folder
    without sentence_bert_config.json: a plain encoder, whose texts are not cut.  A length below the tokenizer's
    special tokens is refused (the tokenizers library would silently cut nothing)."""
    found = _settings(folder, SENTENCE_CONFIG_FILE)
    if found is None:
        return None
    path, raw = found
    tokenizer_path, tokenizer_raw = _settings(folder, TOKENIZER_CONFIG_FILE) or (None, {})
    max_length = _length(path, raw, "max_seq_length")
    if max_length is None:
        model_max = _length(tokenizer_path, tokenizer_raw, "model_max_length")
        max_length = max_positions if model_max is None else min(model_max, max_positions)
    special = tokenizer.num_special_tokens_to_add(is_pair=False)
    if max_length < special:
        raise BadInput(f"{path}: a max_seq_length of {max_length} cannot be honoured: it leaves no room for the "
                       f"{special} special tokens of {TOKENIZER_FILE}")
    side = tokenizer_raw.get("truncation_side", "right")
    if side not in TRUNCATION_SIDES:
        raise BadInput(f"{tokenizer_path}: truncation_side must be 'right' or 'left', not {shown(side)}")
    return Truncation(max_length, side)


def _settings(folder: Path, name: str) -> tuple[Path, dict] | None:
    """A settings file of the model folder and its JSON object, or None when the folder has no such file."""
    path = Path(folder) / name
    if not path.exists() and not path.is_symlink():
        return None
    # a folder or a broken link in its place, read as no file, changed the tokens: the model as shipped stops at it;
    # the strict reader, as for config.json
    raw = jsonfile.read(files.input_file(path, "settings file"), raise_with=None)
    if not isinstance(raw, dict):
        raise BadInput(f"{path} must hold a JSON object")
    return path, raw


def _flag(path: Path, raw: dict, key: str, default: bool | None, null: bool = False) -> bool | None:
    """raw[key] (default when absent): true or false, or null where `null` allows it."""
    value = raw.get(key, default)
    if not isinstance(value, bool) and not (null and value is None):
        raise BadInput(f"{path}: {key} must be true or false{' or null' if null else ''}, not {shown(value)}")
    return value


def _length(path: Path, raw: dict, key: str) -> int | None:
    """raw[key]: a positive integer, or None when absent or null."""
    value = raw.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise BadInput(f"{path}: {key} must be a positive integer, not {shown(value)}")
    return value


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


def tokenize_text(tokenizer, text: str, truncation: Truncation | None = None) -> Tokens:
    """The tokens of one text, exactly as the model will see them: cut to truncation.max_length tokens when it has
    more, as the tokenizer's own truncation does (the text's tokens cut, then the special tokens added)."""
    if not isinstance(text, str):
        raise BadInput(f"the text to tokenise must be a string, not {type(text).__name__}")
    try:  # bytes of a command line that are not UTF-8 reach Python as lone surrogates, which tokenizers refuses
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise BadInput(f"the text is not UTF-8: {text[max(err.start - 10, 0):err.end + 10]!a}") from None
    try:
        with _rust_stderr_silenced():
            encoding = tokenizer.encode(text, add_special_tokens=False)  # the whole text, truncation off
            special = tokenizer.num_special_tokens_to_add(is_pair=False)
            text_tokens = len(encoding.ids) + special
            if truncation is not None and text_tokens > truncation.max_length:
                encoding.truncate(truncation.max_length - special, direction=truncation.side)
            encoding = tokenizer.post_process(encoding)  # the special tokens added
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
        text_tokens=text_tokens,
        truncation=truncation,
    )
