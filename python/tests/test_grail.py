"""grail's Python bindings against networkx and scipy on the same graphs."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import grail


def random_graph(n=300, m=2000, seed=7, directed=True):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, m)
    cols = rng.integers(0, n, m)
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    weights = rng.integers(1, 100, rows.size)
    matrix = sp.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    # Duplicates were summed by scipy: the weights stay integers.
    if not directed:
        matrix = matrix.maximum(matrix.T).tocsr()
    return matrix


def test_bfs_matches_networkx():
    matrix = random_graph()
    g = grail.from_scipy(matrix, weights="ignore")
    G = nx.from_scipy_sparse_array(matrix, create_using=nx.DiGraph)
    levels = g.bfs(3)
    assert levels.dtype == np.uint32 and levels.shape == (g.num_nodes,)
    expected = nx.single_source_shortest_path_length(G, 3)
    for v in range(g.num_nodes):
        assert levels[v] == expected.get(v, grail.UNREACHED)


def test_sssp_matches_scipy_dijkstra():
    matrix = random_graph()
    g = grail.from_scipy(matrix)
    assert g.is_weighted
    distances = g.sssp(5, verify=True)
    expected = csgraph.dijkstra(matrix, directed=True, indices=5)
    for v in range(g.num_nodes):
        if np.isinf(expected[v]):
            assert distances[v] == grail.INFINITE_DISTANCE
        else:
            assert distances[v] == int(expected[v])


def test_components_match_scipy():
    matrix = random_graph(m=250)
    g = grail.from_scipy(matrix, weights="ignore")
    labels = g.connected_components()
    count, expected = csgraph.connected_components(matrix, directed=True, connection="weak")
    assert len(set(labels.tolist())) == count
    # The same partition: labels correspond one to one.
    pairs = set(zip(labels.tolist(), expected.tolist()))
    assert len(pairs) == count


def test_pagerank_matches_networkx():
    matrix = random_graph(directed=False)
    g = grail.from_scipy(matrix, weights="ignore")
    ranks, iterations = g.pagerank(tolerance=1e-10, max_iterations=500)
    assert iterations > 1
    G = nx.from_scipy_sparse_array(matrix, create_using=nx.DiGraph)
    expected = nx.pagerank(G, alpha=0.85, weight=None, tol=1e-12, max_iter=1000)
    assert np.allclose(ranks, [expected[v] for v in range(g.num_nodes)], atol=1e-6)


def test_triangles_mst_and_mis():
    matrix = random_graph(directed=False)
    g = grail.from_scipy(matrix)
    G = nx.from_scipy_sparse_array(matrix)
    assert g.triangles() == sum(nx.triangles(G).values()) // 3
    edges, weight = g.minimum_spanning_forest(verify=True)
    assert edges.shape[1] == 3
    assert weight == int(csgraph.minimum_spanning_tree(matrix).sum())
    in_set = g.maximal_independent_set(verify=True)
    chosen = set(np.flatnonzero(in_set).tolist())
    assert all(not (u in chosen and v in chosen) for u, v in G.edges())
    assert all(v in chosen or any(u in chosen for u in G.neighbors(v)) for v in G.nodes())


def test_every_target_spelling_and_the_reference():
    g = grail.from_scipy(random_graph(), weights="ignore")
    assert np.array_equal(g.bfs(0), g.bfs(0, target="reference"))
    assert np.array_equal(g.bfs(0, variant="wl", opt="none", threads=1), g.bfs(0, target="reference"))
    with pytest.raises(ValueError, match="gpu:N"):
        g.bfs(0, target="tpu")


def test_networkx_graphs_keep_their_node_order():
    G = nx.Graph()
    G.add_weighted_edges_from([("a", "b", 3), ("b", "c", 4), ("c", "a", 10)])
    g, nodes = grail.from_networkx(G)
    assert nodes == ["a", "b", "c"] and g.num_edges == 6 and g.is_weighted
    distances = g.sssp(nodes.index("a"))
    assert distances[nodes.index("c")] == 7


def test_real_weights_are_kept_and_match_scipy():
    matrix = sp.csr_matrix(np.array([[0, 0.3, 0], [0, 0, 0.2], [0.9, 0, 0]]))
    g = grail.from_scipy(matrix)
    assert g.is_weighted and g.has_real_weights
    assert g.csr()[2].dtype == np.float32
    expected = csgraph.dijkstra(matrix.astype(np.float32).astype(np.float64), indices=0)
    for target in ["cpu", "reference"]:
        distances = g.sssp(0, target=target, verify=True)
        assert distances.dtype == np.float64
        np.testing.assert_allclose(distances, expected, rtol=1e-12)
    # Rounding only when asked; dropping only when asked.
    rounded = grail.from_scipy(matrix, weights="round")
    assert not rounded.has_real_weights and list(rounded.sssp(0)) == [0, 0, 0]
    assert grail.from_scipy(matrix, weights="ignore").is_weighted is False
    # The minimum spanning forest over real weights (edges taken both ways).
    edges, total = g.minimum_spanning_forest(verify=True)
    assert edges.shape == (2, 3) and abs(total - (np.float32(0.3) + np.float32(0.2))) < 1e-6
    with pytest.raises(ValueError, match="finite"):
        grail.from_scipy(sp.csr_matrix(np.array([[0, np.inf], [0, 0]])))


def test_csr_round_trip_files_and_errors(tmp_path):
    indptr = np.array([0, 2, 3, 3], dtype=np.uint64)
    indices = np.array([1, 2, 0], dtype=np.uint32)
    g = grail.Graph.from_csr(indptr, indices)
    back_indptr, back_indices, weights = g.csr()
    assert np.array_equal(back_indptr, indptr) and np.array_equal(back_indices, indices) and weights is None
    path = tmp_path / "g.gcsr"
    g.save(str(path))
    assert grail.load(path).num_edges == 3
    with pytest.raises(grail.GrailError, match="missing.gr"):
        grail.load(tmp_path / "missing.gr")
    with pytest.raises(grail.GrailError, match="source"):
        g.bfs(99)
    with pytest.raises(grail.GrailError):
        grail.Graph.from_csr(np.array([0, 5], dtype=np.uint64), indices)
    assert "3 nodes" in repr(g)


SCALE = """
graph { node value: f64 = 0.0; }
param factor: f64 = 2.0;
param on: bool = true;
output value;
kernel scale(f: f64) { forall u in G.nodes() { u.value = (u.degree() as f64) * f; } }
fn main() -> u32 { if on { invoke scale(factor); } return 42; }
"""


def test_a_program_with_parameters_and_outputs():
    program = grail.Program(SCALE, name="scale")
    assert program.outputs == ["value"] and program.params == {"factor": "f64", "on": "bool"}
    g = grail.Graph.from_edges(3, np.array([0, 0, 1], dtype=np.uint32), np.array([1, 2, 2], dtype=np.uint32))
    out = program.run(g, params={"factor": 0.5, "on": True})
    assert np.array_equal(out["value"], [1.0, 0.5, 0.0])
    assert out.result == 42 and list(out.outputs) == ["value"] and out.time_ms >= 0
    assert np.array_equal(program.run(g, params={"on": False})["value"], [0.0, 0.0, 0.0])
    with pytest.raises(KeyError):
        out["nothing"]
    with pytest.raises(grail.GrailError, match="factr"):
        program.run(g, params={"factr": 1})
    with pytest.raises(grail.GrailError, match="broken.grail:1"):
        grail.Program("fn main() { y = 1; }", name="broken")
    assert grail.Program.suite("traverse").run(g).result == 1 + 2 + 2


def test_a_session_gives_what_single_runs_give():
    g = grail.from_scipy(random_graph(directed=False))
    session = grail.Session(g, target="cpu")
    for source in (0, 17, 123):
        assert np.array_equal(session.bfs(source), g.bfs(source, target="reference"))
        assert np.array_equal(session.sssp(source), g.sssp(source, target="reference"))
    assert session.triangles() == g.triangles(target="reference")
    ranks, iterations = session.pagerank()
    assert iterations > 0 and abs(ranks.sum() - 1.0) < 1e-3  # f32 ranks (pull32)
    with pytest.raises(grail.GrailError, match="source"):
        session.bfs(10**6)


def test_the_gpu_when_there_is_one():
    g = grail.from_scipy(random_graph(), weights="ignore")
    try:
        levels = g.bfs(0, target="gpu")
    except grail.GrailError as e:
        pytest.skip(f"no GPU: {e}")
    assert np.array_equal(levels, g.bfs(0, target="reference"))
    # Unweighted: every edge weighs 1 on the device too.
    assert np.array_equal(g.sssp(0, target="gpu", verify=True), g.sssp(0, target="reference"))


def test_a_timeout_stops_a_runaway_program():
    g = grail.from_scipy(random_graph(), weights="ignore")
    with pytest.raises(TimeoutError, match="time limit"):
        g.bfs(0, timeout=1e-9)
    spin = grail.Program(
        "graph { node x: u32; }\nkernel touch() { forall u in G.nodes() { u.x = 1; } }\n"
        "fn main() { while true { invoke touch(); } }\n",
        "spin",
    )
    with pytest.raises(TimeoutError, match="time limit of 200ms"):
        spin.run(g, timeout=0.2)
    with pytest.raises(ValueError, match="positive"):
        g.bfs(0, timeout=-1)
    # A limit past what a clock holds is no limit.
    for huge in (1.8e19, 1e300):
        assert np.array_equal(g.bfs(0, timeout=huge), g.bfs(0))


LINKED = """
struct Link { value: u32, next: links, sum: u32 }
graph { collection links: Link; }
input links;
output links;
kernel add_next() { forall t in G.links { t.sum = t.value + t.next.value; } }
fn main() -> u32 { invoke add_next(); return G.links.len(); }
"""


def test_input_collections_from_rows_or_text():
    program = grail.Program(LINKED, name="linked")
    g = grail.Graph.from_edges(2, np.array([0], dtype=np.uint32), np.array([1], dtype=np.uint32))
    rows = [(3 * i, (i + 7) % 10, 0) for i in range(10)]
    out = program.run(g, inputs={"links": rows})
    assert out.result == 10
    text = "".join(f"{a} {b} {c}\n" for a, b, c in rows)
    assert program.run(g, inputs={"links": text}).result == 10
    with pytest.raises(grail.GrailError, match="takes input collection `links`"):
        program.run(g)


def test_input_node_properties_from_values():
    program = grail.Program(
        "graph { node start: u64; node twice: u64; }\n"
        "input start;\n"
        "output twice;\n"
        "kernel double() { forall u in G.nodes() { u.twice = 2 * u.start; } }\n"
        "fn main() { invoke double(); }\n",
        name="doubled",
    )
    g = grail.Graph.from_edges(3, np.array([0, 1], dtype=np.uint32), np.array([1, 2], dtype=np.uint32))
    out = program.run(g, inputs={"start": [5, 6, 7]})
    assert np.array_equal(out["twice"], [10, 12, 14])
    with pytest.raises(grail.GrailError, match="takes one u64 per node"):
        program.run(g, inputs={"start": [5]})
