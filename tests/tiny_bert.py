"""A tiny BERT-shaped model written to disk: config.json, model.safetensors (float32 tensors in the
Hugging Face names and PyTorch (out, in) layout) and a WordPiece tokenizer.json, so that tests run
the real loading code.  Shared by tests/test_models.py and tests/test_models_certified.py.
"""

from __future__ import annotations

import json

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

TINY = {"layers": 2, "heads": 2, "d": 8, "d_ff": 12, "vocab": 30, "positions": 16, "types": 2}
TINY_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "a", "the", "man", "cat", "dog",
              "is", "eating", "food", "riding", "horse", "on", "mat", "sat", "bread", "piece", "of",
              "big", "small", "run", "##s", "##ing", "red", "blue"]  # fmt: skip
assert len(TINY_WORDS) == TINY["vocab"]


def tiny_config(**overrides) -> dict:
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": TINY["d"],
        "intermediate_size": TINY["d_ff"],
        "num_attention_heads": TINY["heads"],
        "num_hidden_layers": TINY["layers"],
        "vocab_size": TINY["vocab"],
        "max_position_embeddings": TINY["positions"],
        "type_vocab_size": TINY["types"],
        "layer_norm_eps": 1e-12,
        "position_embedding_type": "absolute",
    }
    config.update(overrides)
    return config


def tiny_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights in the Hugging Face names and PyTorch (out, in) layout, float32 like real
    checkpoints; scales chosen so that attention is far from uniform."""
    rng = np.random.default_rng(seed)
    d, d_ff = TINY["d"], TINY["d_ff"]

    def t(*shape, scale=0.5):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": t(TINY["vocab"], d),
        "embeddings.position_embeddings.weight": t(TINY["positions"], d),
        "embeddings.token_type_embeddings.weight": t(TINY["types"], d),
        "embeddings.LayerNorm.weight": 1 + t(d, scale=0.1),
        "embeddings.LayerNorm.bias": t(d, scale=0.1),
        "embeddings.position_ids": np.arange(TINY["positions"], dtype=np.int64)[None, :],  # unused, as shipped
        "pooler.dense.weight": t(d, d),  # unused by the encoder
        "pooler.dense.bias": t(d),
    }
    for layer in range(TINY["layers"]):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            tensors[p + name + ".weight"] = t(d, d, scale=0.8)
            tensors[p + name + ".bias"] = t(d, scale=0.3)
        tensors[p + "intermediate.dense.weight"] = t(d_ff, d)
        tensors[p + "intermediate.dense.bias"] = t(d_ff, scale=0.3)
        tensors[p + "output.dense.weight"] = t(d, d_ff)
        tensors[p + "output.dense.bias"] = t(d, scale=0.3)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + ln + ".weight"] = 1 + t(d, scale=0.1)
            tensors[p + ln + ".bias"] = t(d, scale=0.1)
    return tensors


def write_tokenizer(folder) -> None:
    """A WordPiece tokenizer saved with fixed padding to 16, as shipped BERT tokenizers pad."""
    vocab = {word: i for i, word in enumerate(TINY_WORDS)}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    tokenizer.enable_padding(length=TINY["positions"], pad_id=0, pad_token="[PAD]")
    tokenizer.save(str(folder / "tokenizer.json"))


def write_model(folder, tensors=None, config=None, prefix="", tokenizer=True, settings=None):
    """The tiny model in `folder`; `settings` maps a settings file's name (tokenizer_config.json,
    sentence_bert_config.json) to the JSON it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = tiny_tensors() if tensors is None else tensors
    (folder / "config.json").write_text(json.dumps(tiny_config() if config is None else config))
    save_file({prefix + k: v for k, v in tensors.items()}, str(folder / "model.safetensors"))
    if tokenizer:
        write_tokenizer(folder)
    for name, content in (settings or {}).items():
        (folder / name).write_text(json.dumps(content))
    return folder
