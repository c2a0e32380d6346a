"""Configurations as numpy .npz files: one array per key, read into the dict a JSON file gives.

Keys (README, "Configuration file"): the configuration's keys, with a dot for each level of nesting:
"X", "A" (or "W_Q", "W_K", "b_Q", "b_K", "d_k"), "beta", "V", "mask" (an n x n 0/1 or boolean
array, a boolean one read as JSON's true and false are, 1 and 0; or a string such as "causal"), "residual" (a boolean), "ffn.W1", "ffn.b1", ..., "ffn.activation",
"layernorm.position", ..., "name"; for a stack "layers.0.A", "layers.0.V", "layers.1.A", ...
(layer numbers from 0, none missing).  Scalars are 0-d arrays.  Values are converted exactly by
certify.core.numbers.from_numpy; pickled objects are refused (numpy's allow_pickle=False).
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import numpy as np

from certify.core.limits import DEFAULT, Limits
from certify.errors import BadInput, keys_shown


# The most arrays a layer states: its ten keys (certify.core.config.LAYER_KEYS but "ffn" and "layernorm"), an FFN's six
# and a LayerNorm's five.  An array costs the reading some 50 us before its key is judged: 290,000 empty ones (65 MB)
# took 16 s to be refused.
ARRAYS_PER_LAYER = 21


def read(path, limits: Limits = DEFAULT) -> dict:
    """The configuration dict held by an .npz file (arrays not yet converted), within limits.bytes."""
    path = Path(path)
    where = str(path)
    if path.stat().st_size > limits.bytes:
        raise BadInput(f"{where}: larger than the limit of {limits.bytes} bytes (raise it with --limit bytes=N)")
    try:
        with zipfile.ZipFile(path) as archive:  # a compressed file must not unpack beyond the limit either
            unpacked = sum(info.file_size for info in archive.infolist())
            if unpacked > limits.bytes:
                raise BadInput(f"{where}: unpacks to {unpacked} bytes, above the limit of {limits.bytes} "
                               "(raise it with --limit bytes=N)")
            if len(archive.infolist()) > (most := ARRAYS_PER_LAYER * limits.layers + 3):  # with X, name, description
                raise BadInput(f"{where}: {len(archive.infolist())} arrays, more than the {most} of a configuration of "
                               f"at most {limits.layers} layers (raise it with --limit layers=N)")
            for info in archive.infolist():  # numpy allocates the array a header states before it reads the data
                if _stated_bytes(archive, info) > info.file_size:
                    raise BadInput(f"{where}: {info.filename} states an array larger than the data it holds")
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except BadInput:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise BadInput(f"{where}: not a readable .npz file of numeric arrays ({err})") from None
    return nest(arrays, where)


def _stated_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """The bytes of the array an archive member's .npy header states (ValueError when it has none)."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = header(member)
    return math.prod(shape) * dtype.itemsize


def nest(flat: dict, where: str) -> dict:
    """{"layers.0.A": a, "X": x} as {"layers": [{"A": a}], "X": x}: a dot opens an object, and the
    numbers under "layers" index its list."""
    out: dict = {}
    for key, value in flat.items():
        parts = key.split(".")
        if not all(parts):
            raise BadInput(f"{where}: the key {key!r} has an empty part")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise BadInput(f"{where}: the key {key!r} is both a value and a group")
        if parts[-1] in node:
            raise BadInput(f"{where}: the key {key!r} is both a value and a group")
        node[parts[-1]] = value
    if isinstance(out.get("layers"), dict):
        layers = out["layers"]
        # compared as strings: int() of a key was a crash on "layers.\u00b2.A", whose "\u00b2" isdigit() accepts
        if set(layers) != {str(i) for i in range(len(layers))}:
            raise BadInput(f'{where}: the layers are "layers.0.KEY", "layers.1.KEY", ... numbered from 0 '
                           f"without gaps; got {keys_shown(layers)}")
        out["layers"] = [layers[str(i)] for i in range(len(layers))]
    return out
