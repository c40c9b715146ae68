//! Two-dimensional grids.
//!
//! Parameters: `rows` and `cols`. Node `(r, c)` has id `r * cols + c` and is joined to its up to
//! four horizontal and vertical neighbours, each undirected edge stored in both directions with
//! one weight: `2 * (rows * (cols - 1) + cols * (rows - 1))` directed edges. Every node has degree
//! at most 4 and the diameter is `rows + cols - 2`, which makes grids the worst case for
//! algorithms whose rounds grow with the diameter.

use rayon::prelude::*;

use super::{GenOptions, Stream, check_size, concat, hash3, weight_from_bits};
use crate::builder::EdgeList;
use crate::error::{GraphError, Result};
use crate::graph::{MAX_NODES, NodeId};
use crate::progress::Progress;

/// Nodes per block of work.
const BLOCK_NODES: u64 = 1 << 14;

/// The edges of the grid, each node's listed as up, left, right, down.
pub fn edges(rows: u32, cols: u32, options: &GenOptions, progress: &dyn Progress) -> Result<EdgeList> {
    if rows == 0 || cols == 0 {
        return Err(GraphError::invalid(format!("a grid needs at least 1 row and 1 column, not {rows} x {cols}")));
    }
    let n = u64::from(rows) * u64::from(cols);
    if n > MAX_NODES {
        return Err(GraphError::invalid(format!(
            "a {rows} x {cols} grid has {n} nodes, more than the {MAX_NODES} a graph may have"
        )));
    }
    let (rows, cols) = (u64::from(rows), u64::from(cols));
    let m = 2 * (rows * (cols - 1) + cols * (rows - 1));
    check_size("this grid", m, options.max_weight.is_some())?;
    // Undirected edge ids, for weights: horizontal edges first, then vertical ones.
    let horizontal = rows * (cols - 1);
    let weight =
        |id: u64| options.max_weight.map_or(1, |max| weight_from_bits(hash3(options.seed, Stream::Grid, id), max));

    progress.begin("generating grid edges", Some(n));
    let blocks: Vec<EdgeList> = (0..n.div_ceil(BLOCK_NODES))
        .into_par_iter()
        .map(|block| {
            let nodes = block * BLOCK_NODES..((block + 1) * BLOCK_NODES).min(n);
            let mut out = EdgeList::new(n as u32, options.max_weight.is_some());
            for u in nodes.clone() {
                let (r, c) = (u / cols, u % cols);
                let id = u as NodeId;
                if r > 0 {
                    out.push(id, (u - cols) as NodeId, weight(horizontal + u - cols));
                }
                if c > 0 {
                    out.push(id, id - 1, weight(r * (cols - 1) + c - 1));
                }
                if c + 1 < cols {
                    out.push(id, id + 1, weight(r * (cols - 1) + c));
                }
                if r + 1 < rows {
                    out.push(id, (u + cols) as NodeId, weight(horizontal + u));
                }
            }
            progress.advance(nodes.end - nodes.start);
            out
        })
        .collect();
    let edges = concat(n as u32, options.max_weight.is_some(), blocks);
    progress.finish();
    debug_assert_eq!(edges.len() as u64, m);
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, build};
    use crate::generate::Generator;
    use crate::progress::NoProgress;

    #[test]
    fn exact_sizes_and_shape() {
        for (r, c) in [(1, 1), (1, 7), (6, 1), (2, 2), (5, 9), (130, 131)] {
            let edges = Generator::Grid { rows: r, cols: c }.edges(&GenOptions::default(), &NoProgress).unwrap();
            assert_eq!(edges.num_nodes, r * c);
            assert_eq!(edges.len() as u32, 2 * (r * (c - 1) + c * (r - 1)), "{r} x {c}");
            let graph = build(edges, &BuildOptions::SIMPLE).unwrap();
            assert_eq!(graph.num_edges() as u32, 2 * (r * (c - 1) + c * (r - 1)), "no duplicates");
            assert!(graph.is_symmetric());
            assert!(graph.out().max_degree().1 <= 4);
        }
        let edges = Generator::Grid { rows: 2, cols: 3 }.edges(&GenOptions::default(), &NoProgress).unwrap();
        let graph = build(edges, &BuildOptions::SIMPLE).unwrap();
        let adjacency: Vec<&[u32]> = (0..6).map(|u| graph.neighbors(u)).collect();
        assert_eq!(adjacency, [&[1, 3][..], &[0, 2, 4], &[1, 5], &[0, 4], &[1, 3, 5], &[2, 4]]);
    }

    #[test]
    fn weights_are_shared_by_both_directions() {
        let options = GenOptions { seed: 11, max_weight: Some(1_000_000) };
        let edges = Generator::Grid { rows: 40, cols: 50 }.edges(&options, &NoProgress).unwrap();
        let graph = build(edges, &BuildOptions::AS_GIVEN).unwrap();
        assert!(graph.is_symmetric());
        let weights = graph.out().weights().unwrap();
        // Distinct undirected edges get independent weights.
        let mut distinct = weights.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > weights.len() / 2 - 100, "{}", distinct.len());
    }

    #[test]
    fn invalid_parameters() {
        for (model, needle) in [
            (Generator::Grid { rows: 0, cols: 5 }, "at least 1 row"),
            (Generator::Grid { rows: 5, cols: 0 }, "at least 1 row"),
            (Generator::Grid { rows: 70_000, cols: 70_000 }, "more than the"),
            (Generator::Grid { rows: 60_000, cols: 60_000 }, "GiB"),
        ] {
            let err = model.edges(&GenOptions::default(), &NoProgress).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
    }
}
