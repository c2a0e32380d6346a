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

Everything here is exact: the distances are counts of edges, computed by scipy's compiled
shortest-path search with unit weights (scipy.sparse.csgraph, one search per token: O(n (E + n log n))
steps in C, not n^3 in Python).  They arrive as float64, which holds every integer below 2^53
exactly, and become Python ints here; unreachable is inf.  No ball arithmetic is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from certify.core.masks import Mask, validate_mask
from certify.core.verdicts import NOT_CERTIFIED

# No checker re-derives a graph (there is no certificate of one): what `certify graph` says is this
# module's exact search, labelled so.
EXACT_SEARCH = f"{NOT_CERTIFIED}: exact shortest-path search over the 0/1 mask, which no checker re-derives"


def _distances(mask: Mask) -> np.ndarray:
    """dist[u][v]: the fewest edges j -> i leading from u to v (inf when v is unreachable from u)."""
    # scipy only where a graph is searched (importing it costs a fifth of a second)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    # row j of the transpose holds the tokens i attending to j: the edges j -> i, in csgraph's
    # convention (entry [u, v] = an edge u -> v)
    edges = csr_matrix(np.array(mask, dtype=bool).T)
    return shortest_path(edges, method="D", directed=True, unweighted=True)


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


def analyse(mask: Mask) -> GraphReport:
    """Connectivity, centres and radius of the graph of a mask."""
    mask = validate_mask(mask)
    n = len(mask)
    dist = _distances(mask)
    centres = np.flatnonzero(np.isfinite(dist).all(axis=1)).tolist()
    # a centre's distances are all finite integers below n: exact in float64
    eccentricities = [int(dist[c].max()) for c in centres]
    return GraphReport(
        n=n,
        edges=sum(map(sum, mask)),
        strongly_connected=len(centres) == n,  # everyone reaches everyone
        quasi_strongly_connected=bool(centres),
        centres=centres,
        eccentricities=eccentricities,
        radius=min(eccentricities) if centres else None,
    )
