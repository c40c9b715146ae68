//! Checks the sequential references against independent oracles (petgraph, brute force, dense
//! linear algebra), and checks that every verifier accepts any correct result and rejects
//! corrupted ones, naming where they go wrong.

use std::collections::HashMap;

use grail_graph::reference::*;
use grail_graph::{BuildOptions, EdgeList, Graph, NodeId, Weight, build};
use petgraph::algo::{dijkstra, min_spanning_tree};
use petgraph::data::Element;
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind as PetUnionFind;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Graphs and oracles.

fn graph_of(n: u32, triples: &[(u32, u32, u32)], weighted: bool) -> Graph {
    let mut edges = EdgeList::from_triples(n, triples);
    if !weighted {
        edges.weights = None;
    }
    build(edges, &BuildOptions::AS_GIVEN).unwrap()
}

/// Every stored edge as `(u, v, weight)`, weight 1 when the graph is unweighted.
fn edges_of(graph: &Graph) -> Vec<(NodeId, NodeId, Weight)> {
    (0..graph.num_nodes()).flat_map(|u| graph.out().weighted_neighbors(u).map(move |(v, w)| (u, v, w))).collect()
}

fn petgraph_directed(graph: &Graph) -> petgraph::Graph<(), u64> {
    let mut pg = petgraph::Graph::new();
    for _ in 0..graph.num_nodes() {
        pg.add_node(());
    }
    for (u, v, w) in edges_of(graph) {
        pg.add_edge(NodeIndex::new(u as usize), NodeIndex::new(v as usize), u64::from(w));
    }
    pg
}

fn oracle_distances(graph: &Graph, source: NodeId, unit: bool) -> Vec<u64> {
    let pg = petgraph_directed(graph);
    let found = dijkstra(&pg, NodeIndex::new(source as usize), None, |e| if unit { 1 } else { *e.weight() });
    let mut distances = vec![INFINITE_DISTANCE; graph.num_nodes() as usize];
    for (node, d) in found {
        distances[node.index()] = d;
    }
    distances
}

fn oracle_levels(graph: &Graph, source: NodeId) -> Vec<u32> {
    oracle_distances(graph, source, true)
        .iter()
        .map(|&d| if d == INFINITE_DISTANCE { UNREACHED } else { d as u32 })
        .collect()
}

fn oracle_components(graph: &Graph) -> Vec<u32> {
    let n = graph.num_nodes() as usize;
    let mut sets = PetUnionFind::<usize>::new(n);
    for (u, v, _) in edges_of(graph) {
        sets.union(u as usize, v as usize);
    }
    let mut smallest = vec![u32::MAX; n];
    for v in 0..n {
        let root = sets.find(v);
        smallest[root] = smallest[root].min(v as u32);
    }
    (0..n).map(|v| smallest[sets.find(v)]).collect()
}

fn oracle_msf_weight(graph: &Graph) -> u64 {
    let mut pg = UnGraph::<(), u64>::new_undirected();
    for _ in 0..graph.num_nodes() {
        pg.add_node(());
    }
    for (u, v, w) in edges_of(graph) {
        if u != v {
            pg.add_edge(NodeIndex::new(u as usize), NodeIndex::new(v as usize), u64::from(w));
        }
    }
    min_spanning_tree(&pg).map(|e| if let Element::Edge { weight, .. } = e { weight } else { 0 }).sum()
}

/// The symmetric adjacency matrix of the simple undirected graph underlying `graph`.
fn adjacency_matrix(graph: &Graph) -> Vec<Vec<bool>> {
    let n = graph.num_nodes() as usize;
    let mut adjacent = vec![vec![false; n]; n];
    for (u, v, _) in edges_of(graph) {
        if u != v {
            adjacent[u as usize][v as usize] = true;
            adjacent[v as usize][u as usize] = true;
        }
    }
    adjacent
}

fn brute_force_triangles(graph: &Graph) -> u64 {
    let adjacent = adjacency_matrix(graph);
    let n = adjacent.len();
    let mut count = 0;
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                count += u64::from(adjacent[a][b] && adjacent[b][c] && adjacent[a][c]);
            }
        }
    }
    count
}

/// Triangles by intersecting adjacency bitsets: for each edge `a < b`, the common neighbours
/// above `b`. For graphs too large to enumerate all triples.
fn bitset_triangles(graph: &Graph) -> u64 {
    let n = graph.num_nodes() as usize;
    let words = n.div_ceil(64);
    let mut rows = vec![0u64; n * words];
    for (u, v, _) in edges_of(graph) {
        if u != v {
            rows[u as usize * words + v as usize / 64] |= 1 << (v % 64);
            rows[v as usize * words + u as usize / 64] |= 1 << (u % 64);
        }
    }
    let mut count = 0u64;
    for a in 0..n {
        for b in a + 1..n {
            if rows[a * words + b / 64] >> (b % 64) & 1 == 0 {
                continue;
            }
            let (ra, rb) = (&rows[a * words..(a + 1) * words], &rows[b * words..(b + 1) * words]);
            // Count c > b only: mask off bits up to and including b.
            for k in b / 64..words {
                let mut both = ra[k] & rb[k];
                if k == b / 64 {
                    both &= !((2u128 << (b % 64)) - 1) as u64;
                }
                count += u64::from(both.count_ones());
            }
        }
    }
    count
}

/// PageRank by dense power iteration on the explicit Google matrix, run far past convergence.
fn dense_pagerank(graph: &Graph) -> Vec<f64> {
    let n = graph.num_nodes() as usize;
    if n == 0 {
        return Vec::new();
    }
    let d = 0.85;
    // matrix[v][u]: the probability of stepping from u to v.
    let mut matrix = vec![vec![(1.0 - d) / n as f64; n]; n];
    for u in 0..n {
        let out = graph.neighbors(u as u32);
        if out.is_empty() {
            for row in matrix.iter_mut() {
                row[u] += d / n as f64;
            }
        }
        for &v in out {
            matrix[v as usize][u] += d / out.len() as f64;
        }
    }
    let mut ranks = vec![1.0 / n as f64; n];
    for _ in 0..500 {
        ranks = matrix.iter().map(|row| row.iter().zip(&ranks).map(|(m, r)| m * r).sum()).collect();
    }
    ranks
}

/// PageRank by pulling over in-edges, for graphs too large for [`dense_pagerank`].
fn pull_pagerank(graph: &Graph) -> Vec<f64> {
    let n = graph.num_nodes() as usize;
    let d = 0.85;
    let reverse = graph.out().transpose();
    let degree: Vec<usize> = (0..n as u32).map(|u| graph.neighbors(u).len()).collect();
    let mut ranks = vec![1.0 / n as f64; n];
    for _ in 0..400 {
        let dangling: f64 = (0..n).filter(|&u| degree[u] == 0).map(|u| ranks[u]).sum();
        ranks = (0..n as u32)
            .map(|v| {
                let pulled: f64 =
                    reverse.neighbors(v).iter().map(|&u| ranks[u as usize] / degree[u as usize] as f64).sum();
                (1.0 - d) / n as f64 + d * (pulled + dangling / n as f64)
            })
            .collect();
    }
    ranks
}

/// How many nodes (and forest swaps) the corruption checks try on a large graph.
const SAMPLE: usize = 24;

/// The nodes to corrupt: all of a small graph, an even spread of a large one.
fn sample(n: u32) -> Vec<u32> {
    if n as usize <= 2 * SAMPLE {
        (0..n).collect()
    } else {
        (0..SAMPLE as u64).map(|i| (i * u64::from(n) / SAMPLE as u64) as u32).chain([n - 1]).collect()
    }
}

/// Greedy independent set in the order given.
fn greedy_mis(graph: &Graph, order: &[u32]) -> Vec<bool> {
    let adjacent = adjacency_matrix(graph);
    let mut in_set = vec![false; adjacent.len()];
    for &u in order {
        if !(0..adjacent.len()).any(|v| adjacent[u as usize][v] && in_set[v]) {
            in_set[u as usize] = true;
        }
    }
    in_set
}

/// A permutation of `0..n` from a seed (xorshift Fisher-Yates).
fn shuffled(n: u32, mut seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n).collect();
    seed |= 1;
    for i in (1..order.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        order.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    order
}

/// Whether `message` mentions `id` as a whole number.
fn names(message: &str, id: u64) -> bool {
    message.split(|c: char| !c.is_ascii_digit()).any(|word| word == id.to_string())
}

fn rejection<T: std::fmt::Debug>(result: grail_graph::Result<T>) -> String {
    match result {
        Ok(value) => panic!("a corrupted result was accepted: {value:?}"),
        Err(err @ grail_graph::GraphError::Verification(_)) => err.to_string(),
        Err(err) => panic!("wrong kind of error: {err}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Every check on one graph: reference == oracle, verifier accepts the reference (and other
// correct results), verifier rejects corruptions.

fn check_bfs(graph: &Graph, source: NodeId) {
    let levels = bfs(graph, source);
    assert_eq!(levels, oracle_levels(graph, source), "BFS from {source}");
    verify_bfs(graph, source, &levels).unwrap();
    for v in sample(graph.num_nodes()) {
        let level = levels[v as usize];
        if v == source || level == UNREACHED {
            continue;
        }
        for wrong in [level - 1, level + 1, UNREACHED] {
            let mut bad = levels.clone();
            bad[v as usize] = wrong;
            let message = rejection(verify_bfs(graph, source, &bad));
            assert!(names(&message, v.into()), "{message} (node {v} set to {wrong})");
        }
    }
    if let Some(v) = levels.iter().position(|&l| l == UNREACHED) {
        let mut bad = levels.clone();
        bad[v] = 1;
        let message = rejection(verify_bfs(graph, source, &bad));
        assert!(names(&message, v as u64), "{message}");
    }
}

fn check_sssp(graph: &Graph, source: NodeId) {
    let distances = sssp(graph, source);
    assert_eq!(distances, oracle_distances(graph, source, false), "SSSP from {source}");
    verify_sssp(graph, source, &distances).unwrap();
    for v in sample(graph.num_nodes()) {
        let distance = distances[v as usize];
        if v == source || distance == INFINITE_DISTANCE {
            continue;
        }
        let mut wrongs = vec![distance + 1, INFINITE_DISTANCE];
        if distance > 0 {
            wrongs.push(distance - 1);
        }
        for wrong in wrongs {
            let mut bad = distances.clone();
            bad[v as usize] = wrong;
            let message = rejection(verify_sssp(graph, source, &bad));
            assert!(names(&message, v.into()), "{message} (node {v} set to {wrong})");
        }
    }
}

fn check_components(graph: &Graph) {
    let labels = connected_components(graph);
    assert_eq!(labels, oracle_components(graph));
    verify_components(graph, &labels).unwrap();
    let n = graph.num_nodes();
    if n >= 2 {
        for v in sample(n) {
            let mut bad = labels.clone();
            bad[v as usize] = (labels[v as usize] + 1) % n;
            let message = rejection(verify_components(graph, &bad));
            assert!(names(&message, v.into()), "{message}");
        }
    }
}

fn check_pagerank(graph: &Graph) {
    // Far past convergence, to compare with the dense solution.
    let precise = PageRankOptions { tolerance: 1e-13, max_iterations: 10_000, ..PageRankOptions::default() };
    let result = pagerank(graph, &precise);
    let dense = if graph.num_nodes() <= 200 { dense_pagerank(graph) } else { pull_pagerank(graph) };
    let l1: f64 = result.ranks.iter().zip(&dense).map(|(a, b)| (a - b).abs()).sum();
    assert!(l1 < 1e-7, "PageRank is {l1} away from the dense solution");
    if graph.num_nodes() > 0 {
        assert!((result.ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
    verify_pagerank(graph, &result.ranks).unwrap();
    verify_pagerank(graph, &dense).unwrap();
    // The default options stop at GAP's tolerance, which the verifier accepts, within the bound.
    let default = pagerank(graph, &PageRankOptions::default()).ranks;
    verify_pagerank(graph, &default).unwrap();
    let l1: f64 = default.iter().zip(&dense).map(|(a, b)| (a - b).abs()).sum();
    assert!(l1 < PAGERANK_L1_TOLERANCE / 0.15, "PageRank is {l1} away from the dense solution");
    if graph.num_nodes() >= 2 {
        // Move mass from node 0 to node 1, keeping the sum. That changes one exact step's result
        // by at least 0.3 times the mass moved (the step contracts by 0.85), at node 0, node 1,
        // or a node they have an edge to.
        let mut bad = result.ranks.clone();
        let moved = bad[0].min(0.01);
        bad[0] -= moved;
        bad[1] += moved;
        if moved > PAGERANK_L1_TOLERANCE / 0.3 {
            let message = rejection(verify_pagerank(graph, &bad));
            let mut suspects = vec![0, 1];
            suspects.extend(graph.neighbors(0).iter().chain(graph.neighbors(1)));
            assert!(suspects.iter().any(|&v| names(&message, v.into())), "{message}");
        }
        let mut bad = result.ranks.clone();
        bad[1] = -bad[1] - 1e-3;
        assert!(names(&rejection(verify_pagerank(graph, &bad)), 1));
    }
}

fn check_triangles(graph: &Graph, expected: u64) {
    let count = triangles(graph);
    assert_eq!(count, expected);
    verify_triangles(graph, count).unwrap();
    rejection(verify_triangles(graph, count + 1));
    if count > 0 {
        rejection(verify_triangles(graph, count - 1));
    }
}

fn check_mis(graph: &Graph, seeds: &[u64]) {
    let set = maximal_independent_set(graph);
    let order: Vec<u32> = (0..graph.num_nodes()).collect();
    assert_eq!(set, greedy_mis(graph, &order));
    verify_mis(graph, &set).unwrap();
    for &seed in seeds {
        let other = greedy_mis(graph, &shuffled(graph.num_nodes(), seed));
        verify_mis(graph, &other).unwrap();
    }
    for v in sample(graph.num_nodes()).into_iter().map(|v| v as usize) {
        let mut bad = set.clone();
        bad[v] = !bad[v];
        let message = rejection(verify_mis(graph, &bad));
        if set[v] {
            assert!(message.contains("not maximal"), "{message}");
        } else {
            assert!(names(&message, v as u64), "{message}");
        }
    }
}

/// The forest path between `a` and `b` as indices into `forest.edges`, if they share a tree.
fn forest_path(n: u32, forest: &SpanningForest, a: NodeId, b: NodeId) -> Option<Vec<usize>> {
    let mut adjacent = vec![Vec::new(); n as usize];
    for (i, &(u, v, _)) in forest.edges.iter().enumerate() {
        adjacent[u as usize].push((v, i));
        adjacent[v as usize].push((u, i));
    }
    let mut via = vec![None; n as usize];
    let mut seen = vec![false; n as usize];
    let mut stack = vec![a];
    seen[a as usize] = true;
    while let Some(u) = stack.pop() {
        for &(v, i) in &adjacent[u as usize] {
            if !seen[v as usize] {
                seen[v as usize] = true;
                via[v as usize] = Some((u, i));
                stack.push(v);
            }
        }
    }
    if !seen[b as usize] {
        return None;
    }
    let mut path = Vec::new();
    let mut at = b;
    while let Some((prev, i)) = via[at as usize] {
        path.push(i);
        at = prev;
    }
    Some(path)
}

fn check_msf(graph: &Graph) {
    let forest = minimum_spanning_forest(graph);
    assert_eq!(forest.weight, oracle_msf_weight(graph));
    verify_msf(graph, &forest).unwrap();
    let n = graph.num_nodes();
    let mut lightest: HashMap<(u32, u32), u32> = HashMap::new();
    for (u, v, w) in edges_of(graph) {
        if u != v {
            let entry = lightest.entry((u.min(v), u.max(v))).or_insert(w);
            *entry = (*entry).min(w);
        }
    }
    let in_forest: std::collections::HashSet<(u32, u32)> = forest.edges.iter().map(|&(u, v, _)| (u, v)).collect();
    let mut pairs: Vec<_> = lightest.iter().map(|(&k, &w)| (k, w)).collect();
    pairs.sort_unstable();
    let step = pairs.len().div_ceil(SAMPLE);
    for &((a, b), w) in pairs.iter().step_by(step.max(1)) {
        if in_forest.contains(&(a, b)) {
            continue;
        }
        // A cycle: the forest plus a graph edge.
        let mut cyclic = forest.clone();
        cyclic.edges.push((a, b, w));
        cyclic.weight += u64::from(w);
        let message = rejection(verify_msf(graph, &cyclic));
        assert!(message.contains("closes a cycle") && names(&message, a.into()), "{message}");
        // Swap the graph edge for the heaviest forest edge on the path it closes: a spanning
        // forest, minimum exactly when the weights tie.
        let path = forest_path(n, &forest, a, b).expect("a graph edge joins nodes of one tree");
        let heaviest = *path.iter().max_by_key(|&&i| forest.edges[i].2).unwrap();
        let mut swapped = forest.clone();
        let old = swapped.edges[heaviest].2;
        swapped.edges[heaviest] = (b, a, w);
        swapped.weight = swapped.weight - u64::from(old) + u64::from(w);
        if w == old {
            verify_msf(graph, &swapped).unwrap();
        } else {
            let message = rejection(verify_msf(graph, &swapped));
            assert!(message.contains("minimum spanning forest weighs"), "{message}");
        }
    }
    if let Some(&(u, v, w)) = forest.edges.first() {
        let mut dropped = forest.clone();
        dropped.edges.remove(0);
        dropped.weight -= u64::from(w);
        let message = rejection(verify_msf(graph, &dropped));
        assert!(message.contains("does not span"), "{message}");
        let mut heavier = forest.clone();
        heavier.edges[0].2 = w.wrapping_add(1);
        heavier.weight = heavier.weight - u64::from(w) + u64::from(w.wrapping_add(1));
        let message = rejection(verify_msf(graph, &heavier));
        assert!(names(&message, u.into()) && names(&message, v.into()), "{message}");
        let mut misweighed = forest.clone();
        misweighed.weight += 1;
        rejection(verify_msf(graph, &misweighed));
    }
}

/// Everything, on one graph.
fn check_all(graph: &Graph, seeds: &[u64]) {
    let n = graph.num_nodes();
    let mut sources: Vec<u32> = [0, n / 2, n.saturating_sub(1)].into_iter().filter(|&s| s < n).collect();
    sources.dedup();
    for &source in &sources {
        check_bfs(graph, source);
        check_sssp(graph, source);
    }
    check_components(graph);
    check_pagerank(graph);
    let expected = if n <= 60 { brute_force_triangles(graph) } else { bitset_triangles(graph) };
    check_triangles(graph, expected);
    check_mis(graph, seeds);
    check_msf(graph);
}

// ---------------------------------------------------------------------------------------------
// Random small graphs.

fn weight() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), 1u32..10, Just(u32::MAX), any::<u32>()]
}

/// Up to 40 nodes, any edges (self-loops and duplicates included), weighted or not.
fn small_graph() -> impl Strategy<Value = Graph> {
    (0u32..40, prop::collection::vec((any::<u32>(), any::<u32>(), weight()), 0..120), any::<bool>()).prop_map(
        |(n, raw, weighted)| {
            let triples: Vec<_> =
                if n == 0 { Vec::new() } else { raw.iter().map(|&(u, v, w)| (u % n, v % n, w)).collect() };
            graph_of(n, &triples, weighted)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn references_match_oracles_on_random_graphs(graph in small_graph(), seeds in prop::collection::vec(any::<u64>(), 3)) {
        check_all(&graph, &seeds);
    }

    #[test]
    fn verifiers_never_panic_on_garbage(
        graph in small_graph(),
        levels in prop::collection::vec(any::<u32>(), 0..45),
        distances in prop::collection::vec(any::<u64>(), 0..45),
        ranks in prop::collection::vec(any::<f64>(), 0..45),
        flags in prop::collection::vec(any::<bool>(), 0..45),
        edges in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u32>()), 0..45),
        source in any::<u32>(),
        weight in any::<u64>(),
    ) {
        let n = graph.num_nodes();
        let small = |x: u32| if n > 0 && x % 2 == 0 { x % n } else { x };
        let _ = verify_bfs(&graph, small(source), &levels);
        let _ = verify_sssp(&graph, small(source), &distances);
        let labels: Vec<u32> = levels.iter().map(|&l| small(l)).collect();
        let _ = verify_components(&graph, &labels);
        let _ = verify_pagerank(&graph, &ranks);
        let _ = verify_triangles(&graph, weight);
        let _ = verify_mis(&graph, &flags);
        let edges = edges.iter().map(|&(u, v, w)| (small(u), small(v), w)).collect();
        let _ = verify_msf(&graph, &SpanningForest { edges, weight, real_weight: None });
    }
}

// ---------------------------------------------------------------------------------------------
// Edge cases and hand-made examples.

#[test]
fn empty_graph() {
    let graph = graph_of(0, &[], false);
    check_all(&graph, &[1]);
    assert!(rejection(verify_bfs(&graph, 0, &[])).contains("source 0 is out of range"));
    assert!(rejection(verify_sssp(&graph, 0, &[])).contains("source 0 is out of range"));
    assert_eq!(minimum_spanning_forest(&graph), SpanningForest::default());
    assert_eq!(pagerank(&graph, &PageRankOptions::default()).ranks, Vec::<f64>::new());
}

#[test]
fn single_node() {
    for triples in [&[][..], &[(0, 0, 5)][..]] {
        let graph = graph_of(1, triples, true);
        check_all(&graph, &[1]);
        assert_eq!(bfs(&graph, 0), vec![0]);
        assert_eq!(sssp(&graph, 0), vec![0]);
        assert_eq!(connected_components(&graph), vec![0]);
        assert_eq!(maximal_independent_set(&graph), vec![true]);
        assert_eq!(pagerank(&graph, &PageRankOptions::default()).ranks, vec![1.0]);
        assert!(rejection(verify_bfs(&graph, 1, &[0])).contains("source 1 is out of range"));
        assert!(rejection(verify_sssp(&graph, u32::MAX, &[0])).contains("out of range"));
    }
}

#[test]
fn wrong_lengths_are_rejected() {
    let graph = graph_of(3, &[(0, 1, 1), (1, 2, 1)], false);
    assert!(rejection(verify_bfs(&graph, 0, &[0, 1])).contains("2 levels"));
    assert!(rejection(verify_sssp(&graph, 0, &[0, 1, 2, 3])).contains("4 distances"));
    assert!(rejection(verify_components(&graph, &[])).contains("0 labels"));
    assert!(rejection(verify_pagerank(&graph, &[1.0])).contains("1 ranks"));
    assert!(rejection(verify_mis(&graph, &[true, false])).contains("2 flags"));
}

#[test]
#[should_panic(expected = "source 3 is out of range")]
fn reference_bfs_rejects_a_missing_source() {
    bfs(&graph_of(3, &[], false), 3);
}

#[test]
fn pagerank_iterations_and_options() {
    let graph = graph_of(5, &[(0, 1, 1), (1, 2, 1), (2, 0, 1), (3, 0, 1), (0, 3, 1)], false);
    let default = pagerank(&graph, &PageRankOptions::default());
    assert!(default.iterations > 10 && default.iterations < 1000, "{}", default.iterations);
    let precise = PageRankOptions { tolerance: 1e-13, ..PageRankOptions::default() };
    assert!(pagerank(&graph, &precise).iterations > default.iterations);
    let capped = pagerank(&graph, &PageRankOptions { max_iterations: 3, ..PageRankOptions::default() });
    assert_eq!(capped.iterations, 3);
    let none = pagerank(&graph, &PageRankOptions { max_iterations: 0, ..PageRankOptions::default() });
    assert_eq!((none.iterations, none.ranks), (0, vec![0.2; 5]));
    // Multi-edges count multiply: two edges 0 -> 1 against one 0 -> 2.
    let multi = graph_of(3, &[(0, 1, 1), (0, 1, 1), (0, 2, 1), (1, 0, 1), (2, 0, 1)], false);
    let dense = dense_pagerank(&multi);
    let ranks = pagerank(&multi, &precise).ranks;
    assert!(ranks[1] > ranks[2]);
    assert!(ranks.iter().zip(&dense).all(|(a, b)| (a - b).abs() < 1e-8), "{ranks:?} vs {dense:?}");
}

#[test]
fn sssp_zero_weight_cycles_cannot_fake_distances() {
    // 0 -> 1 (10), 1 <-> 2 at weight 0, 2 -> 3 (1).
    let graph = graph_of(4, &[(0, 1, 10), (1, 2, 0), (2, 1, 0), (2, 3, 1)], true);
    check_sssp(&graph, 0);
    let message = rejection(verify_sssp(&graph, 0, &[0, 3, 3, 4]));
    assert!(names(&message, 1), "{message}");
}

#[test]
fn triangles_of_a_clique() {
    // K_12 with every edge given in both directions, twice, with self-loops: C(12, 3) = 220.
    let mut pairs = Vec::new();
    for u in 0..12 {
        for v in 0..12 {
            pairs.push((u, v, 1));
            pairs.push((v, u, 2));
        }
    }
    let graph = graph_of(12, &pairs, true);
    check_triangles(&graph, 220);
    assert_eq!(bitset_triangles(&graph), 220);
}

#[test]
fn larger_random_graph_against_bitset_triangles() {
    let n = 3000u32;
    let order = shuffled(n, 7);
    let triples: Vec<_> =
        (0..30_000).map(|i| (order[i % n as usize], order[(i * 7 + 13) % n as usize] / 3, 1)).collect();
    let graph = graph_of(n, &triples, false);
    assert_eq!(triangles(&graph), bitset_triangles(&graph));
}

// ---------------------------------------------------------------------------------------------
// Generated graphs of every model, a few thousand nodes each.

#[test]
fn generated_graphs() {
    use grail_graph::NoProgress;
    use grail_graph::generate::{GenOptions, Generator, generate};
    let models = [
        Generator::Rmat { scale: 11, edge_factor: 8, a: 0.57, b: 0.19, c: 0.19, permute: true },
        Generator::Uniform { nodes: 3000, average_degree: 4 },
        Generator::Grid { rows: 40, cols: 60 },
        Generator::Road { nodes: 3000 },
    ];
    for model in &models {
        for (seed, max_weight, undirected) in [(1, None, false), (2, Some(100), true), (3, Some(u32::MAX), false)] {
            let graph = generate(model, &GenOptions { seed, max_weight }, undirected, &NoProgress).unwrap();
            assert!(graph.num_nodes() >= 2000, "{} has {} nodes", model.name(), graph.num_nodes());
            check_all(&graph, &[seed]);
        }
    }
}
