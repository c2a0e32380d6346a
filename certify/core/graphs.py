"""Attention masks as directed graphs (Wu et al., Definitions 1-5).

Convention (docs/claims.md): mask[i][j] = 1 means token i attends to token j, i.e. row i of the
attention matrix P may be nonzero in column j.  In the graph G this is the edge j -> i
("information flows from j to i").  Token indices start at 0.

Definitions, in the direction of the edges j -> i:
- v is reachable from u if a directed path leads from u to v (every node reaches itself);
- G is strongly connected if every pair of nodes is mutually reachable;
- a centre is a node from which every node is reachable; G is quasi-strongly connected if it
  has a centre;
- the eccentricity of a centre c is max_v dist(c, v) (shortest paths, counted in edges); the
  radius is the smallest eccentricity over the centres.
This is the direction Theorem 1 needs: a product of r attention matrices has a positive column c
exactly when every token is reached from c by a path of length r (self-loops pad shorter paths).
At N = 128 the radii are: complete 1, causal 1 (centre 0), sliding window (previous, self, next)
64, uni-directional window (previous, self) 127 (centre 0).

Everything here is exact integer arithmetic: the answers are certain, no ball arithmetic needed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from certify.core.masks import Mask, validate_mask
from certify.core.verdicts import NOT_CERTIFIED

# No checker re-derives a graph (there is no certificate of one): what `certify graph` says is this
# module's exact search, labelled so.
EXACT_SEARCH = f"{NOT_CERTIFIED}: exact breadth-first search over the 0/1 mask, which no checker re-derives"


def successors(mask: Mask) -> list[list[int]]:
    """out[j] = the tokens i that attend to j: the edges j -> i of G."""
    n = len(mask)
    return [[i for i in range(n) if mask[i][j]] for j in range(n)]


def distances_from(out: list[list[int]], source: int) -> list[int | None]:
    """Breadth-first shortest path lengths from source along the edges; None = unreachable."""
    dist: list[int | None] = [None] * len(out)
    dist[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in out[u]:
            if dist[v] is None:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


@dataclass(frozen=True)
class GraphReport:
    """The attention graph of a mask: connectivity, centres and radius (Wu et al.'s r)."""
    n: int
    edges: int  # including the n self-loops
    strongly_connected: bool
    quasi_strongly_connected: bool
    centres: list[int]  # nodes that reach every node
    eccentricities: list[int]  # of the centres, in the same order
    radius: int | None  # None when there is no centre

    def to_json(self) -> dict:
        """The report as JSON (what `certify graph --json` prints)."""
        return {
            "n": self.n,
            "edges": self.edges,
            "strongly_connected": self.strongly_connected,
            "quasi_strongly_connected": self.quasi_strongly_connected,
            "centres": self.centres,
            "eccentricities": self.eccentricities,
            "radius": self.radius,
            "convention": "mask[i][j] = 1: token i attends to j, edge j -> i; indices from 0",
            "checker": EXACT_SEARCH,
        }


def reachability(mask: Mask) -> list[list[bool]]:
    """reach[u][v]: v is reachable from u along the edges j -> i."""
    out = successors(validate_mask(mask))
    return [[d is not None for d in distances_from(out, u)] for u in range(len(out))]


def analyse(mask: Mask) -> GraphReport:
    """Connectivity, centres and radius of the graph of a mask."""
    mask = validate_mask(mask)
    out = successors(mask)
    n = len(mask)
    all_dist = [distances_from(out, u) for u in range(n)]
    centres = [u for u in range(n) if all(d is not None for d in all_dist[u])]
    eccentricities = [max(all_dist[c]) for c in centres]
    return GraphReport(
        n=n,
        edges=sum(map(sum, mask)),
        strongly_connected=len(centres) == n,  # everyone reaches everyone
        quasi_strongly_connected=bool(centres),
        centres=centres,
        eccentricities=eccentricities,
        radius=min(eccentricities) if centres else None,
    )
