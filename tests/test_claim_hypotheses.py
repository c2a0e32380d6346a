"""Which claims apply to a configuration: docs/claims.md's hypotheses, written here again from the contract,
against the engine's registry (certify.claims, `applies`) and the checker's own table (certify_checker.inequality),
over a grid of layers with and without each component.  A hypothesis that drifts on one side (the checker's, say,
accepting a mask for collapse.global) would let a "violated" stand for a configuration the claim is not about;
the sides of the inequalities are compared with the contract in test_claim_sides.py."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from fractions import Fraction

import pytest

import certify_checker as checker
from certify import claims, engine
from certify.core import config
from certify.errors import BadInput
from certify_checker import inequality, schema

X_FULL = [["1/2", "1/4", 0], ["-1/4", "1/2", "1/8"], ["1/8", "-3/8", "1/4"]]  # rank 3, a negative cosine
X_ALIGNED = [[1, 0, 0], [1, 1, 0], [2, 1, 0]]  # rank 2, every cosine >= 0
HEADS = ({"A": [[1, "1/2", 0], [0, 2, "1/4"], ["1/3", 0, 1]]},
         {"W_Q": [[1, 0], [0, 1], ["1/2", 1]], "W_K": [["3/4", 0], ["1/4", 1], [0, "1/2"]], "b_Q": ["1/2", -1],
          "beta": "3/2"})
SHEAR = [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
ROTATION = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
# token i attends to j: causal j <= i; sliding |i - j| <= 1 (the named masks, given by name); cycle j in
# {i, i + 1 mod 3} (radius 2) and the complete one as matrices
NAMED = ("causal", "sliding")
MASKS = {"causal": lambda i, j: j <= i, "sliding": lambda i, j: abs(i - j) <= 1,
         "cycle": lambda i, j: j in (i, (i + 1) % 3), "ones": lambda i, j: True}
LAYERNORMS = (None, "post", "pre", {"position": "post", "kind": "standard", "eps": "1/100", "gain": [1, 1, 1],
                                    "bias": [0, 0, 0]})
FFN = {"W1": [[1, 0, 0], [0, 1, 0]], "b1": [0, 0], "W2": [[1, 0], [0, 1], [1, 1]], "b2": [0, 0, 0],
       "activation": "relu"}
PURE = ("collapse.global", "collapse.tanh", "collapse.tau", "collapse.cubic", "collapse.trajectory", "init.scaling")


def exact(rows):
    return [[Fraction(v) for v in row] for row in rows]


def graph_of(mask, n):
    """The mask as 0/1 rows (None or a complete one: the complete graph)."""
    if mask is None:
        return [[1] * n for _ in range(n)]
    return mask if isinstance(mask, list) else [[int(MASKS[mask](i, j)) for j in range(n)] for i in range(n)]


def reach(rows):
    """(strongly connected, radius or None): distances along the edges j -> i (token i attends to j)."""
    n, eccentricities = len(rows), []
    for source in range(n):
        distance, frontier, seen = 0, {source}, {source}
        while frontier:
            frontier = {i for i in range(n) for j in frontier if rows[i][j]} - seen
            seen |= frontier
            distance += bool(frontier)
        eccentricities.append(distance if len(seen) == n else None)
    centres = [e for e in eccentricities if e is not None]
    return len(centres) == n, min(centres, default=None)


def rank(rows):
    rows, r = exact(rows), 0
    for c in range(len(rows[0])):
        pivot = next((i for i in range(r, len(rows)) if rows[i][c]), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        for i in range(r + 1, len(rows)):
            rows[i] = [x - rows[i][c] / rows[r][c] * y for x, y in zip(rows[i], rows[r])]
        r += 1
    return r


def orthogonal(V):
    V = exact(V)
    return all(sum(V[k][i] * V[k][j] for k in range(len(V))) == (i == j) for i in range(len(V)) for j in range(len(V)))


def contract(claim_id, data) -> bool:
    """docs/claims.md's hypotheses of the claim on the configuration, read from its JSON."""
    X, layers, n = data["X"], data["layers"], len(data["X"])
    graphs = [graph_of(layer.get("mask"), n) for layer in layers]
    masked = [any(0 in row for row in g) for g in graphs]
    has = [{key for key in ("V", "residual", "ffn", "layernorm") if layer.get(key)} | ({"mask"} if m else set())
           for layer, m in zip(layers, masked)]
    only = lambda *allowed, need=(): all(set(need) <= h <= set(allowed) | set(need) for h in has)  # noqa: E731
    one_graph = all(g == graphs[0] for g in graphs)
    strong, radius = reach(graphs[0])
    if claim_id in PURE:
        return only()
    if claim_id == "collapse.dobrushin":
        return only("mask")
    if claim_id == "value.expansive":
        return only(need=("V",))
    if claim_id == "value.bounded":
        return only(need=("V",)) and all(exact(layer["V"]) == exact(layers[0]["V"]) for layer in layers)
    if claim_id == "residual.two_sided":
        return only("mask", need=("V", "residual"))
    if claim_id == "residual.two_sided.global":
        return only(need=("V", "residual"))
    if claim_id == "ffn.lipschitz":
        return only(need=("ffn",))
    if claim_id == "mask.collapse":
        return only("mask") and one_graph and radius is not None and len(layers) >= radius
    if claim_id == "ln.collapse":
        post_sphere = all(layer.get("layernorm") == "post" and h <= {"V", "mask", "layernorm"}
                          and ("V" not in layer or orthogonal(layer["V"])) for layer, h in zip(layers, has))
        tokens = exact(X)
        cosines = all(any(tokens[i]) for i in range(n)) and all(
            sum(a * b for a, b in zip(tokens[i], tokens[k])) >= 0 for i in range(n) for k in range(n))
        return (post_sphere and one_graph and radius is not None and len(layers) >= 1 + 2 * radius
                and ((strong and n <= len(X[0]) and rank(X) == n) or cosines))
    raise AssertionError(f"no contract hypotheses written here for {claim_id}")


def configurations():
    """Every combination of a head, V, mask, residual, LayerNorm and FFN in stacks of 1 and 5 layers, the same
    in every layer or with a second V or mask in layer 1, on tokens of full rank or with nonnegative cosines."""
    for X, head, V, mask, residual, ln, ffn, depth, vary in itertools.product(
            (X_FULL, X_ALIGNED), HEADS, (None, SHEAR, ROTATION), (None, *MASKS), (False, True), LAYERNORMS,
            (None, FFN), (1, 5), (False, True)):
        mask = mask if mask in NAMED or mask is None else graph_of(mask, len(X))
        layer = {**head, **{key: value for key, value in (("V", V), ("mask", mask), ("residual", residual),
                                                          ("layernorm", ln), ("ffn", ffn)) if value}}
        layers = [copy.deepcopy(layer) for _ in range(depth)]
        if vary:
            if depth == 1 or (V is None and mask is None):
                continue
            if V is not None:
                layers[1]["V"] = ROTATION if V is SHEAR else SHEAR
            else:
                layers[1]["mask"] = "sliding" if mask == "causal" else "causal"
        yield {"X": X, "layers": layers}


def checker_accepts(claim_id, inputs) -> bool:
    """The checker's hypotheses of the claim (its _target, before any arithmetic) hold for the inputs."""
    return not isinstance(inequality._target({"claim": claim_id, "bound": None, "inputs": inputs}), str)


def test_engine_checker_and_contract_agree_on_every_claims_hypotheses():
    ids = [claim.id for claim in claims.all_claims()]
    assert set(ids) == set(inequality.CLAIMS)
    seen = {claim_id: set() for claim_id in ids}
    for data in configurations():
        case = config.parse(data)
        inputs = schema.expanded(config.to_json(case))
        applicable = set(claims.applicable(case))
        for claim_id in ids:
            expected = contract(claim_id, data)
            where = json.dumps(data)[:300]
            assert (claim_id in applicable) == expected, f"engine, {claim_id}: {where}"
            assert checker_accepts(claim_id, inputs) == expected, f"checker, {claim_id}: {where}"
            seen[claim_id].add(expected)
    assert all(both == {True, False} for both in seen.values()), seen  # the grid shows each claim both ways


def redigest(cert):
    canonical = json.dumps({name: cert[name] for name in ("claim", "bound", "inputs", "precision")},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


def outside(claim_id):
    """A configuration of the grid that the contract leaves outside the claim, and one inside it."""
    found = {}
    for data in configurations():
        found.setdefault(contract(claim_id, data), data)
        if len(found) == 2:
            return found[False], found[True]
    raise AssertionError(claim_id)


@pytest.mark.parametrize("claim_id", sorted(inequality.CLAIMS))
def test_a_certificate_relabelled_to_a_claim_outside_its_hypotheses_is_refused(claim_id):
    """A user bound's certificate (any layer) on a configuration outside the claim, relabelled to the claim and
    digested again: the engine refuses the configuration (bad input) and the checker the certificate, naming
    the claim's hypotheses; relabelled on a configuration inside them it is refused for something else."""
    far, near = outside(claim_id)
    with pytest.raises(BadInput, match=claim_id):
        engine.check(far, claim=claim_id)
    for data, inside in ((far, False), (near, True)):
        cert = engine.check(data, bound="100*D").certificate
        assert cert is not None and checker.verify(cert).ok
        forged = redigest({**copy.deepcopy(cert), "claim": claim_id, "bound": None})
        verdict = checker.verify(forged)
        assert not verdict.ok
        assert (claim_id in verdict.message) is not inside, verdict.message
