//! Road-network-like graphs: planar, sparse, with high diameter and Euclidean weights.
//!
//! Parameter: `nodes`. They are laid out row-major on a `cols = ceil(sqrt(nodes))` wide grid (the
//! last row partial), each moved by a random jitter of up to a quarter cell in each axis; that
//! keeps every grid cell a convex quadrilateral, so edges along cell sides and one diagonal per
//! cell never cross. Edges:
//!
//! * a spanning tree, so the graph is connected: every node but the first joins a random one of
//!   its left and up neighbours;
//! * each other left/up grid edge with probability [`EXTRA_EDGE`];
//! * in a fraction [`DIAGONAL`] of the cells, one diagonal of random orientation.
//!
//! This gives an average degree of about 2.6 (road networks have 2.4 to 2.8), a maximum degree
//! of at most 8, and a diameter of about `2 * sqrt(nodes)` hops, since edges only join nearby
//! nodes. Each undirected edge is stored in both directions with one weight, its Euclidean length
//! with a cell side of [`CELL`] units, rounded and at least 1. The weight option of
//! [`super::GenOptions`] does not apply. [`super::generate`] stores the coordinates (same units)
//! as node properties `x` and `y`; they differ from the weights by at most the rounding, so they
//! suit geometric heuristics.

use rayon::prelude::*;

use super::{Stream, check_size, concat, hash3, mix64, unit_f64};
use crate::builder::EdgeList;
use crate::error::{GraphError, Result};
use crate::graph::{NodeId, Weight};
use crate::progress::Progress;

/// The length of a cell side in weight units.
pub const CELL: f64 = 1000.0;
/// The largest displacement of a node from its grid point, in cells.
pub const JITTER: f64 = 0.25;
/// The probability that a grid edge outside the spanning tree is kept.
pub const EXTRA_EDGE: f64 = 0.25;
/// The fraction of cells that get a diagonal.
pub const DIAGONAL: f64 = 0.04;

/// Nodes per block of work.
const BLOCK_NODES: u64 = 1 << 14;

/// Random values drawn per node, each from its own hash so that nodes are independent.
#[derive(Clone, Copy)]
#[repr(u64)]
enum Draw {
    X = 0,
    Y = 1,
    Edges = 2,
}

/// The grid width for `n` nodes: the smallest `cols` with `cols * cols >= n`.
fn width(n: u64) -> u64 {
    let mut cols = (n as f64).sqrt() as u64;
    while cols * cols < n {
        cols += 1;
    }
    while cols > 1 && (cols - 1) * (cols - 1) >= n {
        cols -= 1;
    }
    cols.max(1)
}

/// True with probability `p`, from the low 24 bits of `bits`.
fn chance(bits: u64, p: f64) -> bool {
    ((bits & 0xff_ffff) as f64) < p * f64::from(1u32 << 24)
}

fn draw(seed: u64, u: u64, what: Draw) -> u64 {
    hash3(seed, Stream::Road, mix64(u) ^ what as u64)
}

/// Node `u`'s coordinates, in cells.
fn position(seed: u64, cols: u64, u: u64) -> (f64, f64) {
    let jitter = |bits: u64| JITTER * (2.0 * unit_f64(bits) - 1.0);
    ((u % cols) as f64 + jitter(draw(seed, u, Draw::X)), (u / cols) as f64 + jitter(draw(seed, u, Draw::Y)))
}

/// The coordinates of every node, in weight units: `(x, y)`.
pub fn coordinates(nodes: u32, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let cols = width(u64::from(nodes));
    (0..u64::from(nodes)).into_par_iter().map(|u| position(seed, cols, u)).map(|(x, y)| (x * CELL, y * CELL)).unzip()
}

/// The raw edges, each undirected edge in both directions.
pub fn edges(nodes: u32, seed: u64, progress: &dyn Progress) -> Result<EdgeList> {
    if nodes == 0 {
        return Err(GraphError::invalid("a road graph needs at least 1 node"));
    }
    let n = u64::from(nodes);
    // Expected 2.6 directed edges per node; refuse what could not fit with room to spare.
    check_size("this road graph", n * 3, true)?;
    let cols = width(n);
    let length = |u: u64, v: u64| -> Weight {
        let ((ux, uy), (vx, vy)) = (position(seed, cols, u), position(seed, cols, v));
        ((ux - vx).hypot(uy - vy) * CELL).round().max(1.0) as Weight
    };

    progress.begin("generating road edges", Some(n));
    let blocks: Vec<EdgeList> = (0..n.div_ceil(BLOCK_NODES))
        .into_par_iter()
        .map(|block| {
            let range = block * BLOCK_NODES..((block + 1) * BLOCK_NODES).min(n);
            let mut out = EdgeList::new(nodes, true);
            let mut add = |u: u64, v: u64| {
                let w = length(u, v);
                out.push(u as NodeId, v as NodeId, w);
                out.push(v as NodeId, u as NodeId, w);
            };
            for u in range.clone() {
                let (r, c) = (u / cols, u % cols);
                let bits = draw(seed, u, Draw::Edges);
                // Bit 0: tree choice; bit 7: diagonal orientation; bits 8..32: extra edge;
                // bits 32..56: diagonal.
                let keep_extra = chance(bits >> 8, EXTRA_EDGE);
                let left = (c > 0).then(|| u - 1);
                let up = (r > 0).then(|| u - cols);
                match (left, up) {
                    (Some(left), Some(up)) => {
                        let (tree, other) = if bits & 1 == 0 { (left, up) } else { (up, left) };
                        add(u, tree);
                        if keep_extra {
                            add(u, other);
                        }
                    }
                    (Some(v), None) | (None, Some(v)) => add(u, v),
                    (None, None) => {}
                }
                // The cell whose bottom-right corner is `u`; its other corners have smaller ids.
                if r > 0 && c > 0 && chance(bits >> 32, DIAGONAL) {
                    if bits & 0x80 == 0 {
                        add(u, u - cols - 1);
                    } else {
                        add(u - 1, u - cols);
                    }
                }
            }
            progress.advance(range.end - range.start);
            out
        })
        .collect();
    let edges = concat(nodes, true, blocks);
    progress.finish();
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{GenOptions, Generator, generate};
    use crate::graph::Graph;
    use crate::progress::NoProgress;

    fn road(nodes: u32, seed: u64) -> Graph {
        generate(&Generator::Road { nodes }, &GenOptions { seed, max_weight: None }, false, &NoProgress).unwrap()
    }

    /// Hop distances from `source` (u32::MAX where unreachable).
    fn bfs(graph: &Graph, source: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; graph.num_nodes() as usize];
        let mut queue = std::collections::VecDeque::from([source]);
        dist[source as usize] = 0;
        while let Some(u) = queue.pop_front() {
            for &v in graph.neighbors(u) {
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        dist
    }

    /// A lower bound on the diameter: the eccentricity of the farthest node from node 0.
    fn diameter_estimate(graph: &Graph) -> u32 {
        let dist = bfs(graph, 0);
        let far = (0..graph.num_nodes()).max_by_key(|&u| dist[u as usize]).unwrap();
        *bfs(graph, far).iter().max().unwrap()
    }

    #[test]
    fn connected_symmetric_sparse() {
        for (nodes, seed) in [(1, 1), (2, 1), (3, 5), (10, 2), (99, 3), (1000, 4), (250_000, 5)] {
            let graph = road(nodes, seed);
            assert_eq!(graph.num_nodes(), nodes);
            assert!(graph.is_symmetric(), "{nodes}");
            assert!(bfs(&graph, 0).iter().all(|&d| d != u32::MAX), "{nodes} nodes: not connected");
            assert!(graph.out().max_degree().1 <= 8);
            if nodes >= 1000 {
                let average = graph.num_edges() as f64 / f64::from(nodes);
                assert!((2.0..=3.5).contains(&average), "average degree {average}");
            }
            assert_eq!(graph.node_props.get::<f64>("x").unwrap().len(), nodes as usize);
            assert_eq!(graph.node_props.get::<f64>("y").unwrap().len(), nodes as usize);
        }
    }

    #[test]
    fn diameter_grows_like_sqrt_n() {
        for nodes in [10_000u32, 160_000] {
            let side = f64::from(nodes).sqrt();
            let diameter = f64::from(diameter_estimate(&road(nodes, 8)));
            assert!((1.5 * side..=4.0 * side).contains(&diameter), "{nodes} nodes: diameter {diameter}");
        }
    }

    #[test]
    fn weights_are_lengths() {
        let graph = road(5000, 12);
        let (x, y) = (graph.node_props.get::<f64>("x").unwrap(), graph.node_props.get::<f64>("y").unwrap());
        for u in 0..graph.num_nodes() {
            for (v, w) in graph.out().weighted_neighbors(u) {
                let length = (x[u as usize] - x[v as usize]).hypot(y[u as usize] - y[v as usize]);
                assert!((f64::from(w) - length).abs() <= 0.5 + 1e-9, "{u} -> {v}: {w} vs {length}");
                // Sides are 0.5 to 1.5 cells, diagonals at most 1.5 * sqrt(2).
                assert!((500..=2122).contains(&w), "{w}");
            }
        }
    }

    /// Whether segments `ab` and `cd` cross at a point interior to both.
    fn cross(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)) -> bool {
        let orient =
            |p: (f64, f64), q: (f64, f64), r: (f64, f64)| (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0);
        let (d1, d2) = (orient(a, b, c), orient(a, b, d));
        let (d3, d4) = (orient(c, d, a), orient(c, d, b));
        d1 * d2 < 0.0 && d3 * d4 < 0.0
    }

    #[test]
    fn planar_embedding() {
        for seed in 0..4 {
            let nodes = 2000;
            let graph = road(nodes, seed);
            let (x, y) = (graph.node_props.get::<f64>("x").unwrap(), graph.node_props.get::<f64>("y").unwrap());
            let point = |u: u32| (x[u as usize], y[u as usize]);
            let segments: Vec<(u32, u32)> = (0..nodes)
                .flat_map(|u| graph.neighbors(u).iter().filter(move |&&v| u < v).map(move |&v| (u, v)))
                .collect();
            for (i, &(a, b)) in segments.iter().enumerate() {
                for &(c, d) in &segments[i + 1..] {
                    // Only nearby segments can cross; skip the rest cheaply.
                    if (point(a).0 - point(c).0).abs() > 3000.0 || (point(a).1 - point(c).1).abs() > 3000.0 {
                        continue;
                    }
                    assert!(!cross(point(a), point(b), point(c), point(d)), "{a}-{b} crosses {c}-{d}");
                }
            }
        }
    }

    #[test]
    fn layout_width() {
        assert_eq!([1, 2, 4, 5, 9, 10, 99, 100, 101].map(width), [1, 2, 2, 3, 3, 4, 10, 10, 11]);
        assert!(Generator::Road { nodes: 0 }.edges(&GenOptions::default(), &NoProgress).is_err());
        let err = Generator::Road { nodes: u32::MAX }.edges(&GenOptions::default(), &NoProgress).unwrap_err();
        assert!(err.to_string().contains("GiB"), "{err}");
    }
}
