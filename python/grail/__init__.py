"""grail: graph algorithms written once, run on multicore CPUs and NVIDIA GPUs.

    import grail
    g = grail.load("road.gr")                      # any format grail reads
    levels = g.bfs(0, target="gpu")                # numpy uint32, UNREACHED where unreached
    ranks, iterations = g.pagerank()               # every CPU core
    g2 = grail.from_scipy(matrix)                  # or from_networkx(G), Graph.from_csr(...)
    out = grail.Program.from_file("my.grail").run(g, params={"k": 3})
    out["score"]                                   # a property's values as a numpy array
    s = grail.Session(g, target="gpu")             # many runs, the graph kept on the GPU
    levels = [s.bfs(src) for src in (0, 5, 9)]

Targets: "cpu" (default), "gpu", "gpu:N", "reference" (the sequential reference that checks the
others). Errors raise grail.GrailError with grail's message.
"""

import numpy as _np

from ._grail import (
    INFINITE_DISTANCE,
    UNREACHED,
    GrailError,
    Graph,
    Program,
    ProgramOutput,
    Session,
    __version__,
)

__all__ = [
    "Graph",
    "Program",
    "ProgramOutput",
    "Session",
    "GrailError",
    "UNREACHED",
    "INFINITE_DISTANCE",
    "load",
    "from_scipy",
    "from_networkx",
]


def load(path, format=None, undirected=False):
    """Reads a graph file; see Graph.load."""
    return Graph.load(str(path), format=format, undirected=undirected)


def _edge_weights(values, how):
    """Edge weights for grail: uint32 when every value is a whole number in 0..2**32-1, else
    real weights (float32); `how` may ask for "round" (integers), "real" or "ignore" (None)."""
    values = _np.asarray(values)
    if how == "ignore":
        return None
    if how not in ("auto", "round", "real"):
        raise ValueError(f"weights={how!r}: expected 'auto', 'round', 'real' or 'ignore'")
    if values.dtype.kind not in "fiub":
        raise ValueError(f"edge weights must be numbers, not {values.dtype}")
    if values.dtype.kind == "f" and not _np.all(_np.isfinite(values)):
        bad = values[~_np.isfinite(values)][0]
        raise ValueError(f"edge weight {bad} is not a finite number")
    if how == "round":
        values = _np.rint(values)
    integral = values.dtype.kind != "f" or _np.all(values == _np.rint(values))
    in_range = not values.size or (values.min() >= 0 and values.max() <= 0xFFFFFFFF)
    if how != "real" and integral and in_range:
        return values.astype(_np.uint32)
    if how == "round":
        raise ValueError("edge weights must lie in 0..2**32-1 to be rounded to integers")
    real = values.astype(_np.float32)
    if _np.any(_np.isinf(real)) or _np.any((real == 0) & (values != 0)):
        raise ValueError("an edge weight is beyond what grail's real weights (float32) hold")
    return real


def from_scipy(matrix, weights="auto"):
    """A graph from a scipy.sparse matrix: entry (i, j) is an edge i -> j, its value the weight.

    weights: "auto" (whole values in 0..2**32-1 become integer weights, others real weights,
    float32), "round" (round them to integers), "real" (real weights whatever the values),
    "ignore" (an unweighted graph). The matrix must be square.
    """
    csr = matrix.tocsr()
    rows, cols = csr.shape
    if rows != cols:
        raise ValueError(f"the matrix is {rows} x {cols}: an adjacency matrix is square")
    csr.sort_indices()
    w = _edge_weights(csr.data, weights)
    return Graph.from_csr(
        _np.asarray(csr.indptr, dtype=_np.uint64),
        _np.asarray(csr.indices, dtype=_np.uint32),
        w,
    )


def from_networkx(graph, weight="weight", weights="auto"):
    """A graph from a networkx graph, and the list of its nodes in grail's order.

    Node i of the result is nodes[i] (the networkx graph's node order). An undirected graph
    gets both directions of every edge. Edge attribute `weight` gives the weights when every
    edge has it (weights= as in from_scipy); otherwise the graph is unweighted.
    """
    nodes = list(graph.nodes())
    index = {node: i for i, node in enumerate(nodes)}
    sources, targets, values = [], [], []
    has_weight = weight is not None and weights != "ignore"
    for u, v, data in graph.edges(data=True):
        pairs = [(u, v)] if graph.is_directed() or u == v else [(u, v), (v, u)]
        for a, b in pairs:
            sources.append(index[a])
            targets.append(index[b])
            if has_weight:
                if weight not in data:
                    has_weight = False
                else:
                    values.append(data[weight])
    w = _edge_weights(values, weights) if has_weight and values else None
    g = Graph.from_edges(
        len(nodes),
        _np.asarray(sources, dtype=_np.uint32),
        _np.asarray(targets, dtype=_np.uint32),
        w,
    )
    return g, nodes
