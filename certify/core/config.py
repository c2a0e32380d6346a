"""Configuration files: what a user gives (tokens and layers), parsed once into exact data.

Schema (JSON read by certify.core.jsonfile: no duplicate keys; numbers as in certify.core.numbers;
the same keys as numpy arrays in a dict or an .npz file, certify.core.npzfile):
    "X":      n x d tokens as rows                                  (required, n >= 2)
    a layer:  "A" (d x d query-key matrix)  or  "W_Q", "W_K" (d x d_k), optional "b_Q", "b_K"
              (length d_k) and "d_k" (defaults to the columns of W_Q); scores are
              beta * q_i . k_j / sqrt(d_k) with q_i = W_Q^T x_i + b_Q;
              "beta" (inverse temperature, default 1, also scales a given A);
              "V" (d x d value matrix acting on tokens as column vectors: x'_i = V sum_j P_ij x_j);
              "mask" (n x n 0/1 or false/true, mask[i][j] = 1 (true) when token i attends to token j; or a name of
              certify.core.masks: "complete" (or "full"), "causal", "sliding" (previous, self, next),
              "uni" (previous, self)); the complete mask is the same as none;
              "residual" (bool): X' = X + P X V^T;
              "ffn": {"W1": h x d, "b1": h, "W2": d x h, "b2": d, "activation": "relu" | "gelu",
                      "residual": bool}, applied token-wise after attention;
              "layernorm": "post" | "pre" (the unit-sphere LN(x) = x / ||x||_2 of Wu et al.) or
                      {"position": "post" | "pre", "kind": "sphere" | "standard",
                       "gain": d, "bias": d, "eps": number} for g * (x - mean) / sqrt(var + eps) + b.
    Either the layer keys at top level (one layer) or "layers": [layer, ...] (a stack).
Parsing validates shapes and values; every problem is a BadInput with one sentence.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from certify.errors import BadInput, keys_shown, shown
from certify.core import files, jsonfile, npzfile
from certify.core.limits import DEFAULT, Limits, resource_problem, shape_problem, thin_width
from certify.core.masks import named_mask, validate_mask
from certify.core.numbers import (Binary64Matrix, columns, encode, encode_matrix, from_numpy, json_type,
                                  parse_matrix, parse_number, parse_vector)
from certify.core.precision import START_PRECISION
from certify.core.thin_norm import reduces

Matrix = tuple[tuple[Fraction, ...], ...]
Vector = tuple[Fraction, ...]


def exact_matrix(rows) -> Matrix:
    """A float64 matrix (a 2-d array, rows of floats) as exact entries: every float64 is a dyadic rational."""
    return tuple(exact_vector(row) for row in rows)


def exact_vector(values) -> Vector:
    """A float64 vector as exact entries."""
    return tuple(Fraction(float(v)) for v in values)

# The parts of a layer beyond one attention head, with the words that name them to a user.
COMPONENTS = {"V": "value matrix V", "mask": "mask", "residual": "residual connection",
              "ffn": "feed-forward network", "layernorm": "LayerNorm"}

LAYER_KEYS = {"A", "W_Q", "W_K", "b_Q", "b_K", "d_k", "beta", "V", "mask", "residual", "ffn", "layernorm"}
TOP_KEYS = {"X", "layers", "name", "description"}
ACTIVATIONS = ("relu", "gelu")  # the FFN activations certify encloses
# the dimensions of each key's value, for numpy arrays (a mask may also be a 0-d string array: its name)
NDIMS = {"X": 2, "A": 2, "W_Q": 2, "W_K": 2, "V": 2, "mask": 2, "W1": 2, "W2": 2,
         "b_Q": 1, "b_K": 1, "b1": 1, "b2": 1, "gain": 1, "bias": 1,
         "d_k": 0, "beta": 0, "eps": 0, "residual": 0, "activation": 0, "position": 0, "kind": 0, "name": 0,
         "description": 0}


@dataclass(frozen=True)
class FeedForward:
    """A token-wise MLP W2 s(W1 x + b1) + b2 after attention (s = ReLU or GELU), residual or not."""
    W1: Matrix
    b1: Vector
    W2: Matrix
    b2: Vector
    activation: str  # "relu" | "gelu"
    residual: bool = False


@dataclass(frozen=True)
class LayerNorm:
    """A LayerNorm before ("pre") or after ("post") attention: the sphere x/||x|| or the standard one."""
    position: str  # "post" | "pre"
    kind: str = "sphere"  # "sphere": x / ||x||_2 ; "standard": g * (x - mean) / sqrt(var + eps) + b
    gain: Vector | None = None
    bias: Vector | None = None
    eps: Fraction = Fraction(0)


@dataclass(frozen=True)
class Layer:
    """One layer, exact: an attention head (A, or W_Q and W_K with biases) and its optional parts."""
    d: int
    A: Matrix | None = None
    W_Q: Matrix | None = None
    W_K: Matrix | None = None
    b_Q: Vector | None = None
    b_K: Vector | None = None
    d_k: int | None = None
    beta: Fraction = Fraction(1)
    V: Matrix | None = None
    mask: tuple[tuple[bool, ...], ...] | None = None
    residual: bool = False
    ffn: FeedForward | None = None
    layernorm: LayerNorm | None = None

    def __post_init__(self):
        # No mask means the complete graph (docs/claims.md), so a mask that lets every token attend to every token is
        # stored as none: every hypothesis about "no mask" and every comparison of two layers' graphs then
        # reads an explicit complete mask as the contract does, whoever built the layer.
        if self.mask is not None and all(all(row) for row in self.mask):
            object.__setattr__(self, "mask", None)

    @property
    def is_pure_attention(self) -> bool:
        """X' = P X: no value matrix, mask, residual, feed-forward or LayerNorm."""
        return not self.components()

    def components(self) -> list[str]:
        """What the layer has beyond one attention head, as keys of COMPONENTS."""
        present = {"V": self.V is not None, "mask": self.mask is not None, "residual": self.residual,
                   "ffn": self.ffn is not None, "layernorm": self.layernorm is not None}
        return [key for key in COMPONENTS if present[key]]


def reduced_width(layer: Layer) -> int:
    """d_k when the layer's a is certain to take the d_k x d_k route of certify.core.thin_norm (W_Q, W_K of d x d_k,
    d_k < d, and its W_K reduces: certify.core.thin_norm.reduces), else 0: the d x d route, the witness the work
    estimates then price (a head whose W_K^T W_K float64 finds nearly singular may still reduce at some precision,
    priced the dearer way)."""
    if layer.A is not None or layer.W_Q is None or not columns(layer.W_Q) < layer.d:
        return 0
    W_K = layer.W_K.array if isinstance(layer.W_K, Binary64Matrix) else layer.W_K
    return columns(layer.W_Q) if reduces(W_K) else 0


@dataclass(frozen=True)
class Case:
    """Tokens X (n x d, rows) and the layers they pass through, all exact."""

    X: Matrix
    layers: tuple[Layer, ...]
    name: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        """The number of tokens."""
        return len(self.X)

    @property
    def d(self) -> int:
        """The token dimension."""
        return columns(self.X)

    def sizes(self) -> tuple[int, int, int, int]:
        """(n, the widest of d and d_k, layers, the widest FFN hidden layer): what the limits cap."""
        return self._sizes

    @functools.cached_property
    def thin(self) -> int:
        """d_k when every layer is a thin head alone (certify.core.limits.norm_count) whose norm takes the d_k x d_k
        route (its W_K reduces: certify.core.thin_norm.reduces), else 0."""
        widths = {columns(layer.W_Q) if layer.W_Q is not None and layer.V is None and layer.ffn is None else self.d
                  for layer in self.layers}
        thin = thin_width(self.d, widths)
        heads = {id(layer.W_K): layer for layer in self.layers}.values()  # a repeated head's W_K once
        return thin if thin and all(map(reduced_width, heads)) else 0

    @property
    def value(self) -> bool:
        """Whether a layer has a value matrix V, whose products and norms the work estimate prices
        (certify.core.limits.layer_parts)."""
        return any(layer.V is not None for layer in self.layers)

    @property
    def normed(self) -> bool:
        """Whether a layer has LayerNorm, whose operations on the tokens the work estimate prices
        (certify.core.limits.layer_parts)."""
        return any(layer.layernorm is not None for layer in self.layers)

    @functools.cached_property
    def _sizes(self) -> tuple[int, int, int, int]:  # load() and check() both ask: counted once
        d_k = max((columns(layer.W_Q) for layer in self.layers if layer.W_Q is not None), default=0)
        hidden = max((len(layer.ffn.W1) for layer in self.layers if layer.ffn is not None), default=0)
        return self.n, max(self.d, d_k), len(self.layers), hidden


def load(source, limits: Limits = DEFAULT) -> Case:
    """A Case from a path (JSON, or numpy .npz: certify.core.npzfile), a dict (whose values may be
    numpy arrays), or a Case; refused beyond the size limits."""
    if isinstance(source, Case):
        case = source
    elif isinstance(source, (str, Path)):
        path = files.input_file(source, "configuration file")
        read = npzfile.read(path, limits) if path.suffix.lower() == ".npz" else jsonfile.read(path, str(path), limits)
        case = parse(_within(read, limits))
    elif isinstance(source, dict):
        case = parse(_within(source, limits))
    else:
        raise BadInput(f"a configuration is a file path or a JSON object, not {json_type(source)}")
    if problem := shape_problem(*case.sizes(), limits):
        raise BadInput(f"the configuration has {problem}")
    return case


def _within(data, limits: Limits):
    """data, once the sizes it states pass the size limits and the resource estimate of one evaluation
    at the lowest precision: from lengths alone, before any number is read (a file of two million
    tokens, or of twelve 1024 x 1024 layers of strings, took minutes to read before it was refused)."""
    if isinstance(data, dict):
        layers = data.get("layers")
        specs = [spec for spec in layers if isinstance(spec, dict)] if isinstance(layers, list) else [data]
        n, d = _stated_shape(data.get("X"))
        d_k = max((_stated_shape(spec.get("W_Q"))[1] for spec in specs), default=0)
        hidden = max((_stated_shape(spec["ffn"].get("W1"))[0] for spec in specs if isinstance(spec.get("ffn"), dict)),
                     default=0)
        sizes = (n, max(d, d_k), len(layers) if isinstance(layers, list) else 1, hidden)
        widths = {_stated_shape(spec.get("W_Q"))[1] if not {"A", "V", "ffn"} & set(spec) else d for spec in specs}
        refuse_sizes(sizes, limits, thin=thin_width(d, widths), value=any("V" in spec for spec in specs),
                     layernorm=any("layernorm" in spec for spec in specs))
    return data


def refuse_sizes(sizes: tuple[int, int, int, int], limits: Limits, **parts) -> None:
    """BadInput when a configuration of these sizes (n, d, layers, hidden) passes the size limits or the resource
    estimate of one evaluation at the lowest precision (`parts`: its thin width, value and layernorm, as
    limits.resource_problem takes them): what a configuration is refused for before it is read, or made."""
    if problem := shape_problem(*sizes, limits):
        raise BadInput(f"the configuration has {problem}")
    if problem := resource_problem(*sizes, START_PRECISION, limits, **parts):
        raise BadInput(f"refused before starting: {problem}")


def _stated_shape(value) -> tuple[int, int]:
    """(rows, the longest row) of a matrix as given (rows, a numpy array or a binary64 block), else (0, 0)."""
    if hasattr(value, "shape") and len(value.shape) == 2:  # a numpy array
        return value.shape
    if isinstance(value, dict) and isinstance(value.get("shape"), list) and len(value["shape"]) == 2:
        return tuple(v if type(v) is int else 0 for v in value["shape"])
    if isinstance(value, (list, tuple)):
        return len(value), max((len(row) for row in value if isinstance(row, (list, tuple))), default=0)
    return 0, 0


def parse(data: dict) -> Case:
    """The exact Case of a configuration dict (JSON values, or numpy arrays converted exactly)."""
    if not isinstance(data, dict):
        raise BadInput(f"a configuration is a JSON object, not {json_type(data)}")
    data = from_numpy(data, NDIMS)
    if "X" not in data:
        written = data.get("format")
        if isinstance(written, str) and written.startswith("certify-"):  # a certificate or report given to check
            hint = "; `certify verify` checks a certificate" if written.startswith("certify-certificate/") else ""
            raise BadInput(f"a certify file of format {shown(written)}, not a configuration{hint}")
        raise BadInput('the configuration has no tokens "X" (n x d, tokens as rows)')
    X = parse_matrix(data["X"], "X")
    n, d = len(X), columns(X)  # columns: no row of Fractions made to be counted
    if n < 2:
        raise BadInput(f"X has {n} token; the claims are about configurations of at least 2 tokens")
    if "layers" in data:
        unknown = set(data) - TOP_KEYS
        if unknown:
            raise BadInput(f'with "layers", layer keys belong inside the list; unexpected: {keys_shown(unknown)}')
        if not isinstance(data["layers"], list) or not data["layers"]:
            raise BadInput('"layers" must be a non-empty list of layer objects')
        layers = tuple(_parse_layer(spec, n, d, f"layers[{t}]") for t, spec in enumerate(data["layers"]))
    else:
        unknown = set(data) - TOP_KEYS - LAYER_KEYS
        if unknown:
            raise BadInput(f"unknown configuration keys: {keys_shown(unknown)}")
        layers = (_parse_layer({k: v for k, v in data.items() if k in LAYER_KEYS}, n, d, "layer"),)
    if not isinstance(data.get("description", ""), str):  # unread, so anything else passed unnoticed
        raise BadInput(f'"description" is a note in words (a string), not {json_type(data["description"])}')
    return Case(X=X, layers=layers, name=_label(data.get("name", ""), n, d))


def _label(name, n: int, d: int) -> str:
    """The configuration's "name", shown in titles and tables: a string of printable characters (a
    newline or a terminal escape in a file's name could print a line certify never wrote) that states no other sizes
    than its n tokens of dimension d (misstated_sizes: the checker would reject its certificate)."""
    if not isinstance(name, str) or not name.isprintable():
        what = json_type(name) if not isinstance(name, str) else "a string with control characters"
        raise BadInput(f'"name" is a label of printable characters, not {what}')
    if misstated := misstated_sizes(name, n, d):
        raise BadInput(f"{misstated}; name it otherwise")
    return name


# A part of a name between hyphens that states the tokens' number or dimension, as certify names the configurations
# it makes (gaussian-n8-d4, a campaign's gaussian-n8-d4-seed0-17, near-permutation-n5)
SIZE_PART = re.compile(r"[nd][0-9]+")


def misstated_sizes(name: str, n: int, d: int) -> str | None:
    """Why the name states other sizes than n tokens of dimension d (a part n<k> or d<k>, SIZE_PART), or None.  The
    checker rejects a certificate so named, whose name a forger could otherwise change with its digest; its twin is
    certify_checker.schema.misstated_sizes (certify.core may not import the checker, which imports nothing of
    certify)."""
    sizes = {"n": n, "d": d}
    for part in name.split("-"):
        if SIZE_PART.fullmatch(part) and part != f"{part[0]}{sizes[part[0]]}":
            k = part[1:] if len(part) <= 20 else f"{part[1:20]}..."
            stated = f"{k} tokens" if part[0] == "n" else f"a dimension of {k}"
            return (f"the configuration's name {name!r:.80} states {stated} (its part {part:.20}), but its inputs are "
                    f"{n} tokens of dimension {d}")
    return None


def _parse_bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise BadInput(f"{where}: expected true or false, got {json_type(value)}")
    return value


def _parse_layer(spec, n: int, d: int, where: str) -> Layer:
    if not isinstance(spec, dict):
        raise BadInput(f"{where}: a layer is a JSON object, not {json_type(spec)}")
    unknown = set(spec) - LAYER_KEYS
    if unknown:
        raise BadInput(f"{where}: unknown layer keys: {keys_shown(unknown)}")
    fields: dict = {"d": d}
    if "A" in spec:
        if "W_Q" in spec or "W_K" in spec:
            raise BadInput(f"{where}: give either A or W_Q and W_K, not both")
        if stray := sorted({"b_Q", "b_K", "d_k"} & set(spec)):  # (the checker refuses them with A too)
            one = len(stray) == 1
            raise BadInput(f"{where}: {' and '.join(stray)} only {'goes' if one else 'go'} with W_Q and W_K; with A "
                           f"{'it' if one else 'they'} would be ignored")
        fields["A"] = parse_matrix(spec["A"], f"{where}.A", (d, d))
    elif "W_Q" in spec or "W_K" in spec:
        if "W_Q" not in spec or "W_K" not in spec:
            raise BadInput(f"{where}: W_Q and W_K come together")
        W_Q = parse_matrix(spec["W_Q"], f"{where}.W_Q", (d, None))
        width = columns(W_Q)
        W_K = parse_matrix(spec["W_K"], f"{where}.W_K", (d, width))
        fields.update(W_Q=W_Q, W_K=W_K)
        for bias in ("b_Q", "b_K"):
            if bias in spec:
                fields[bias] = parse_vector(spec[bias], f"{where}.{bias}", width)
        d_k = spec.get("d_k", width)
        if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
            raise BadInput(f"{where}.d_k: expected a positive integer, got {shown(d_k)}")
        fields["d_k"] = d_k
    else:
        raise BadInput(f"{where}: no attention given: add A (d x d) or W_Q and W_K")
    if "beta" in spec:
        fields["beta"] = parse_number(spec["beta"], f"{where}.beta")
    if "V" in spec:
        fields["V"] = parse_matrix(spec["V"], f"{where}.V", (d, d))
    if "mask" in spec:
        mask = spec["mask"]
        try:  # the masks' messages name no layer (`certify graph` reads them too): in a stack the layer is named here
            rows = named_mask(mask, n) if isinstance(mask, str) else validate_mask(mask, n)
        except BadInput as err:
            raise BadInput(f"{where}.mask: {err}") from None
        fields["mask"] = tuple(tuple(v == 1 for v in row) for row in rows)
    if "residual" in spec:
        fields["residual"] = _parse_bool(spec["residual"], f"{where}.residual")
    if "ffn" in spec:
        fields["ffn"] = _parse_ffn(spec["ffn"], d, f"{where}.ffn")
    if "layernorm" in spec:
        fields["layernorm"] = _parse_layernorm(spec["layernorm"], d, f"{where}.layernorm")
    return Layer(**fields)


def _parse_ffn(spec, d: int, where: str) -> FeedForward:
    if not isinstance(spec, dict):
        raise BadInput(f"{where}: expected an object with W1, b1, W2, b2, activation")
    unknown = set(spec) - {"W1", "b1", "W2", "b2", "activation", "residual"}
    if unknown:
        raise BadInput(f"{where}: unknown keys: {keys_shown(unknown)}")
    missing = {"W1", "W2"} - set(spec)
    if missing:
        raise BadInput(f"{where}: missing {', '.join(sorted(missing))}")
    W1 = parse_matrix(spec["W1"], f"{where}.W1", (None, d))
    hidden = len(W1)
    W2 = parse_matrix(spec["W2"], f"{where}.W2", (d, hidden))
    b1 = parse_vector(spec["b1"], f"{where}.b1", hidden) if "b1" in spec else (Fraction(0),) * hidden
    b2 = parse_vector(spec["b2"], f"{where}.b2", d) if "b2" in spec else (Fraction(0),) * d
    activation = spec.get("activation", "relu")
    if activation not in ACTIVATIONS:
        raise BadInput(f"{where}.activation: expected 'relu' or 'gelu', got {shown(activation)}")
    residual = _parse_bool(spec.get("residual", False), f"{where}.residual")
    return FeedForward(W1=W1, b1=b1, W2=W2, b2=b2, activation=activation, residual=residual)


def _parse_layernorm(spec, d: int, where: str) -> LayerNorm:
    if isinstance(spec, str):
        spec = {"position": spec}
    if not isinstance(spec, dict):
        raise BadInput(f"{where}: expected 'post', 'pre' or an object")
    unknown = set(spec) - {"position", "kind", "gain", "bias", "eps"}
    if unknown:
        raise BadInput(f"{where}: unknown keys: {keys_shown(unknown)}")
    position = spec.get("position")
    if position not in ("post", "pre"):
        raise BadInput(f"{where}.position: expected 'post' or 'pre', got {shown(position)}")
    kind = spec.get("kind", "sphere")
    if kind == "sphere":
        extra = set(spec) & {"gain", "bias", "eps"}
        if extra:
            raise BadInput(f"{where}: the sphere LayerNorm x/||x|| takes no {', '.join(sorted(extra))}")
        return LayerNorm(position=position)
    if kind != "standard":
        raise BadInput(f"{where}.kind: expected 'sphere' or 'standard', got {shown(kind)}")
    gain = parse_vector(spec["gain"], f"{where}.gain", d) if "gain" in spec else (Fraction(1),) * d
    bias = parse_vector(spec["bias"], f"{where}.bias", d) if "bias" in spec else (Fraction(0),) * d
    eps = parse_number(spec.get("eps", "1e-12"), f"{where}.eps")
    if eps < 0:
        raise BadInput(f"{where}.eps: must be >= 0")
    return LayerNorm(position=position, kind=kind, gain=gain, bias=bias, eps=eps)


def to_json(case: Case) -> dict:
    """The exact, canonical configuration of a case: parse(to_json(case)) == case."""
    out: dict = {"X": encode_matrix(case.X), "layers": [_layer_json(layer) for layer in case.layers]}
    if case.name:
        out["name"] = case.name
    return out


def _layer_json(layer: Layer) -> dict:
    out: dict = {}
    if layer.A is not None:
        out["A"] = encode_matrix(layer.A)
    else:
        out["W_Q"], out["W_K"] = encode_matrix(layer.W_Q), encode_matrix(layer.W_K)
        for name in ("b_Q", "b_K"):
            if getattr(layer, name) is not None:
                out[name] = [encode(v) for v in getattr(layer, name)]
        out["d_k"] = layer.d_k
    if layer.beta != 1:
        out["beta"] = encode(layer.beta)
    if layer.V is not None:
        out["V"] = encode_matrix(layer.V)
    if layer.mask is not None:
        out["mask"] = [[int(v) for v in row] for row in layer.mask]
    if layer.residual:
        out["residual"] = True
    if layer.ffn is not None:
        f = layer.ffn
        out["ffn"] = {"W1": encode_matrix(f.W1), "b1": [encode(v) for v in f.b1], "W2": encode_matrix(f.W2),
                      "b2": [encode(v) for v in f.b2], "activation": f.activation, "residual": f.residual}
    if layer.layernorm is not None:
        ln = layer.layernorm
        spec: dict = {"position": ln.position, "kind": ln.kind}
        if ln.kind == "standard":
            spec.update(gain=[encode(v) for v in ln.gain], bias=[encode(v) for v in ln.bias], eps=encode(ln.eps))
        out["layernorm"] = spec
    return out
