//! Sequential reference algorithms and their verifiers.
//!
//! Each algorithm lives in its own file next to the verifier that checks results against it.
//! The references are deliberately plain sequential code: they are the oracles every backend
//! (generated CPU code, CUDA, multi-GPU) is checked against, so they favour obvious correctness
//! over speed. The verifiers accept any correct result (not only the one the reference happens
//! to produce), reject wrong ones with a [`GraphError::Verification`] naming the first offending
//! node or edge and the values involved, never panic on malformed results, and run in
//! near-linear time plus at most one reference run, so they can check large graphs.

mod bfs;
mod cc;
mod mis;
mod mst;
mod pr;
mod sssp;
mod tri;
pub mod union_find;

pub use bfs::{UNREACHED, bfs, verify_bfs};
pub use cc::{connected_components, verify_components};
pub use mis::{maximal_independent_set, verify_mis};
pub use mst::{SpanningForest, minimum_spanning_forest, verify_msf};
pub use pr::{PAGERANK_L1_TOLERANCE, PageRank, PageRankOptions, pagerank, pagerank_with_changes, verify_pagerank};
pub use sssp::{INFINITE_DISTANCE, check_real_weights, repair_sssp, sssp, sssp_real, verify_sssp, verify_sssp_real};
pub use tri::{triangles, verify_triangles};
pub use union_find::UnionFind;

use crate::error::{GraphError, Result};
use crate::graph::{Graph, NodeId};

/// A verification failure with the given message.
fn failure(message: impl Into<String>) -> GraphError {
    GraphError::Verification(message.into())
}

/// Checks that a result has one value per node.
fn check_length(graph: &Graph, len: usize, what: &str) -> Result<()> {
    if len == graph.num_nodes() as usize {
        Ok(())
    } else {
        Err(failure(format!("{len} {what} given for a graph of {} nodes", graph.num_nodes())))
    }
}

/// Checks that a source node named in a result is a node of the graph.
fn check_source(graph: &Graph, source: NodeId) -> Result<()> {
    if source < graph.num_nodes() {
        Ok(())
    } else {
        Err(failure(format!("source {source} is out of range: the graph has {} nodes", graph.num_nodes())))
    }
}

/// Panics with a clear message when a reference is asked to start from a node that does not
/// exist; user-supplied ids are checked earlier, with [`Graph::check_node`].
fn assert_source(graph: &Graph, source: NodeId) {
    assert!(source < graph.num_nodes(), "source {source} is out of range: the graph has {} nodes", graph.num_nodes());
}

/// The in-edges of `graph`: the stored reverse CSR if there is one, else a fresh transpose.
fn in_edges(graph: &Graph) -> std::borrow::Cow<'_, crate::graph::Csr> {
    match graph.reverse() {
        Some(reverse) => std::borrow::Cow::Borrowed(reverse),
        None => std::borrow::Cow::Owned(graph.out().transpose()),
    }
}
