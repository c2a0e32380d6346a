"""Masks as graphs: radii of the four masks of Wu et al. and random masks against Floyd-Warshall."""

from __future__ import annotations

import json
import random
from collections import deque

import pytest

from certify.cli import main
from certify.core import masks
from certify.errors import BadInput
from certify.core import graphs

INF = float("inf")


def floyd_warshall(mask):
    """Independent oracle: all shortest path lengths along j -> i for mask[i][j] = 1."""
    n = len(mask)
    dist = [[0 if u == v else (1 if mask[v][u] else INF) for v in range(n)] for u in range(n)]
    for k in range(n):
        for u in range(n):
            for v in range(n):
                dist[u][v] = min(dist[u][v], dist[u][k] + dist[k][v])
    return dist


def bfs_analyse(mask):
    """Independent oracle: a breadth-first search from every token in pure Python (n^3 steps on a
    dense mask), giving the report's fields."""
    n = len(mask)
    out = [[i for i in range(n) if mask[i][j]] for j in range(n)]
    all_dist = []
    for source in range(n):
        dist = [None] * n
        dist[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for v in out[u]:
                if dist[v] is None:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        all_dist.append(dist)
    centres = [u for u in range(n) if None not in all_dist[u]]
    eccentricities = [max(all_dist[c]) for c in centres]
    report = graphs.GraphReport(n=n, edges=sum(map(sum, mask)), strongly_connected=len(centres) == n,
                                quasi_strongly_connected=bool(centres), centres=centres,
                                eccentricities=eccentricities, radius=min(eccentricities) if centres else None)
    return report


def _same_as_bfs(mask):
    assert graphs.analyse(mask) == bfs_analyse(mask)
    # Python ints, as the JSON report and the claims' arithmetic expect
    assert all(type(v) is int for v in graphs.analyse(mask).centres + graphs.analyse(mask).eccentricities)


@pytest.mark.parametrize("name, window", [("complete", 1), ("causal", 1), ("sliding", 1), ("sliding", 3),
                                          ("uni", 1), ("uni", 2)])
def test_named_masks_up_to_64_tokens_against_breadth_first_search(name, window):
    for n in range(1, 65):
        _same_as_bfs(masks.named_mask(name, n, window))


@pytest.mark.parametrize("seed", range(12))
def test_random_masks_up_to_64_tokens_against_breadth_first_search(seed):
    rng = random.Random(1000 + seed)
    n = rng.randint(1, 64)
    density = rng.choice([0.0, 0.01, 0.03, 0.1, 0.5])
    _same_as_bfs([[1 if i == j or rng.random() < density else 0 for j in range(n)] for i in range(n)])


def test_a_complete_mask_at_the_tokens_limit_has_radius_one_and_every_token_a_centre():
    # its speed (12 s before the compiled search, under 2 s after) is measured, not asserted: no timed tests
    report = graphs.analyse(masks.named_mask("complete", 1024))
    assert report.radius == 1 and len(report.centres) == 1024


@pytest.mark.parametrize("name, radius", [("complete", 1), ("causal", 1), ("sliding", 64), ("uni", 127)])
def test_radii_at_128(name, radius):
    report = graphs.analyse(masks.named_mask(name, 128))
    assert report.radius == radius
    assert report.quasi_strongly_connected
    assert report.strongly_connected == (name in ("complete", "sliding"))


def test_causal_and_uni_have_the_first_token_as_only_centre():
    for name in ("causal", "uni"):
        assert graphs.analyse(masks.named_mask(name, 128)).centres == [0]


def test_direction_of_edges_matters():
    # every token attends to token 0: information flows from 0 to all, so 0 is the centre
    star = [[1 if j in (0, i) else 0 for j in range(6)] for i in range(6)]
    report = graphs.analyse(star)
    assert report.centres == [0] and report.radius == 1 and not report.strongly_connected
    # token 0 attends to everyone, nobody else attends to anyone: no centre at all
    transposed = [list(col) for col in zip(*star)]
    assert not graphs.analyse(transposed).quasi_strongly_connected
    assert graphs.analyse(transposed).radius is None


@pytest.mark.parametrize("seed", range(40))
def test_random_masks_against_floyd_warshall(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 14)
    density = rng.choice([0.05, 0.15, 0.3, 0.6])
    mask = [[1 if i == j or rng.random() < density else 0 for j in range(n)] for i in range(n)]
    dist = floyd_warshall(mask)
    report = graphs.analyse(mask)
    centres = [u for u in range(n) if all(d < INF for d in dist[u])]
    assert report.centres == centres
    assert report.quasi_strongly_connected == bool(centres)
    assert report.strongly_connected == all(d < INF for row in dist for d in row)
    assert report.radius == (min(max(dist[c]) for c in centres) if centres else None)


@pytest.mark.parametrize("name", ["sliding", "uni"])
@pytest.mark.parametrize("window", [2, 5])
def test_windows_of_width_k_against_floyd_warshall(name, window):
    mask = masks.named_mask(name, 40, window)
    dist = floyd_warshall(mask)
    centres = [u for u in range(40) if all(d < INF for d in dist[u])]
    assert graphs.analyse(mask).radius == min(max(dist[c]) for c in centres)


def test_cli_json(capsys):
    assert main(["graph", "--mask", "sliding", "--n", "128", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["radius"] == 64 and out["strongly_connected"] is True


def test_cli_reads_a_mask_file(tmp_path, capsys):
    path = tmp_path / "mask.json"
    path.write_text(json.dumps({"mask": masks.named_mask("uni", 10)}))
    assert main(["graph", "--mask", str(path), "--n", "10"]) == 0
    as_numbers = capsys.readouterr().out
    assert "radius: 9" in as_numbers
    # true and false are 1 and 0, as in a configuration's mask
    path.write_text(json.dumps({"mask": [[v == 1 for v in row] for row in masks.named_mask("uni", 10)]}))
    assert main(["graph", "--mask", str(path), "--n", "10"]) == 0
    assert capsys.readouterr().out == as_numbers


BAD_MASKS = {
    "no self-loop": [[1, 0], [1, 0]],
    "not square": [[1, 0, 1], [1, 1, 0]],
    "entry 2": [[1, 2], [0, 1]],
    "entry 0.5": [[1, 0.5], [0, 1]],
    "empty": [],
    "not a list": {"mask": 3},
    "beyond the tokens limit": masks.named_mask("causal", 1025),
}


@pytest.mark.parametrize("name", BAD_MASKS)
def test_bad_masks_exit_2(name, tmp_path, capsys):
    path = tmp_path / "mask.json"
    path.write_text(json.dumps(BAD_MASKS[name]))
    assert main(["graph", "--mask", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["graph", "--mask", "causal"],  # named mask without --n
    ["graph", "--mask", "causal", "--n", "0"],
    ["graph", "--mask", "sliding", "--n", "8", "--window", "0"],
    ["graph", "--mask", "no-such-mask-or-file", "--n", "8"],
    ["graph", "--mask", "causal", "--n", "1025"],  # refused before the matrix is built: --n 10^8 was a hang
])
def test_bad_arguments_exit_2(argv, capsys):
    assert main(argv) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_mask_file_beyond_the_tokens_limit_is_refused_before_its_entries_are_read(tmp_path, capsys):
    """Every entry of a mask file was validated before its size was held against the tokens limit (a file of
    5,000 tokens took 6 s to be refused): the limit now comes first, so a bad entry past it is never reached."""
    mask = masks.named_mask("causal", 1025)
    mask[0][1] = 2
    path = tmp_path / "mask.json"
    path.write_text(json.dumps(mask))
    assert main(["graph", "--mask", str(path)]) == 2
    assert capsys.readouterr().err == f"certify: error: the mask in {path} has 1025 tokens, above the limit of 1024\n"


def test_a_mask_file_beyond_a_json_limit_names_no_option_graph_lacks(tmp_path, capsys):
    path = tmp_path / "mask.json"
    path.write_text("[" * 40 + "]" * 40)
    assert main(["graph", "--mask", str(path)]) == 2
    err = capsys.readouterr().err
    assert "nested deeper than the limit of 32" in err and "--limit" not in err


def test_mask_of_the_wrong_size_exits_2(tmp_path, capsys):
    path = tmp_path / "mask.json"
    path.write_text(json.dumps(masks.named_mask("causal", 5)))
    assert main(["graph", "--mask", str(path), "--n", "6"]) == 2


def test_validate_rejects_a_missing_self_loop_in_a_named_size():
    with pytest.raises(BadInput):
        masks.validate_mask([[1, 1, 1], [1, 0, 1], [1, 1, 1]])


def test_a_misspelt_mask_name_is_refused_with_the_closest_one(capsys):
    """A configuration's mask, attack's and graph's --mask listed the names without pointing at the one meant."""
    with pytest.raises(BadInput, match=r"unknown mask 'causl'; did you mean causal\? known masks: causal"):
        masks.named_mask("causl", 3)
    assert main(["graph", "--mask", "slidng", "--n", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith("nor a JSON file; did you mean sliding?"), err
    assert main(["graph", "--mask", "zzz", "--n", "4"]) == 2  # nothing close: no hint
    assert capsys.readouterr().err.rstrip().endswith("nor a JSON file")
