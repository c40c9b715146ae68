//! [`Graph`]: a directed graph in CSR form, loaded from a file, built from arrays or edges.

use std::path::Path;

use grail_graph::io::{Format, ReadOptions, read_graph, write_graph};
use grail_graph::{BuildOptions, Csr, EdgeList, NoProgress, NodeId, Weight};

use crate::error::{Error, Result};

/// A directed graph: nodes `0..num_nodes()`, out-edges in compressed sparse row form, optional
/// `u32` edge weights. An undirected graph is stored with both directions of every edge.
///
/// Cloning is cheap: the edge arrays are shared.
#[derive(Debug, Clone)]
pub struct Graph {
    inner: grail_graph::Graph,
}

/// How [`Graph::load_with`] reads a file.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The format, when neither the extension nor the contents tell it: `"dimacs"`, `"mtx"`,
    /// `"el"`, `"wel"`, `"metis"`, `"galois"`, `"gcsr"` (as `grail convert --to` names them).
    pub format: Option<String>,
    /// Make the graph undirected and simple: both directions of every edge, no self-loops, one
    /// edge per pair (the lightest).
    pub undirected: bool,
}

impl Graph {
    /// Reads a graph file in any format grail knows (DIMACS `.gr`, Matrix Market `.mtx`, edge
    /// lists `.el`/`.txt`/`.wel`, METIS `.graph`, Galois `.gr`, `.gcsr`; text formats may be
    /// gzipped), telling the format from the name and contents, edges kept as stored.
    pub fn load(path: impl AsRef<Path>) -> Result<Graph> {
        Graph::load_with(path, LoadOptions::default())
    }

    /// Reads a graph file as `options` say.
    pub fn load_with(path: impl AsRef<Path>, options: LoadOptions) -> Result<Graph> {
        let format = match options.format.as_deref() {
            Some(name) => Some(name.parse::<Format>().map_err(Error::Usage)?),
            None => None,
        };
        let build = if options.undirected { BuildOptions::UNDIRECTED } else { BuildOptions::AS_GIVEN };
        Ok(Graph {
            inner: read_graph(path.as_ref(), &ReadOptions { format, build, ..Default::default() }, &NoProgress)?,
        })
    }

    /// A graph from its CSR arrays: `offsets` (one per node plus one, from 0, never decreasing,
    /// ending at `targets.len()`), each edge's head in `targets`, and optionally a weight per
    /// edge. Every invariant is checked.
    pub fn from_csr(offsets: Vec<u64>, targets: Vec<NodeId>, weights: Option<Vec<Weight>>) -> Result<Graph> {
        Ok(Graph { inner: grail_graph::Graph::from_csr(Csr::from_parts(offsets, targets, weights)?) })
    }

    /// [`Graph::from_csr`] with real weights (`f32`, one per edge; NaN and infinities are refused).
    pub fn from_csr_real(offsets: Vec<u64>, targets: Vec<NodeId>, weights: Vec<f32>) -> Result<Graph> {
        Ok(Graph { inner: grail_graph::Graph::from_csr(Csr::from_parts_real(offsets, targets, weights)?) })
    }

    /// A graph of `num_nodes` nodes from `(source, target, weight)` edges with real weights,
    /// kept as given (NaN and infinities are refused).
    pub fn from_real_weighted_edges(
        num_nodes: u32,
        edges: impl IntoIterator<Item = (NodeId, NodeId, f32)>,
    ) -> Result<Graph> {
        let triples: Vec<_> = edges.into_iter().collect();
        let list = EdgeList::from_real_triples(num_nodes, &triples)?;
        Ok(Graph { inner: grail_graph::build(list, &BuildOptions::AS_GIVEN)? })
    }

    /// A graph of `num_nodes` nodes from `(source, target)` edges, kept as given (duplicates and
    /// self-loops included; see [`Graph::undirected`]).
    pub fn from_edges(num_nodes: u32, edges: impl IntoIterator<Item = (NodeId, NodeId)>) -> Result<Graph> {
        let mut list = EdgeList::new(num_nodes, false);
        for (u, v) in edges {
            list.push(u, v, 1);
        }
        Ok(Graph { inner: grail_graph::build(list, &BuildOptions::AS_GIVEN)? })
    }

    /// A weighted graph of `num_nodes` nodes from `(source, target, weight)` edges, kept as given.
    pub fn from_weighted_edges(
        num_nodes: u32,
        edges: impl IntoIterator<Item = (NodeId, NodeId, Weight)>,
    ) -> Result<Graph> {
        let mut list = EdgeList::new(num_nodes, true);
        for (u, v, w) in edges {
            list.push(u, v, w);
        }
        Ok(Graph { inner: grail_graph::build(list, &BuildOptions::AS_GIVEN)? })
    }

    /// The undirected simple graph underlying this one: both directions of every edge, no
    /// self-loops, one edge per pair (the lightest), adjacencies sorted.
    pub fn undirected(&self) -> Graph {
        Graph { inner: grail_graph::undirected::undirected_simple(&self.inner).into_owned() }
    }

    /// Writes the graph, in the format the extension names (`.gcsr` keeps everything and loads
    /// fastest). The file is replaced only once it is complete.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(write_graph(&self.inner, path.as_ref(), None, &NoProgress)?)
    }

    pub fn num_nodes(&self) -> u32 {
        self.inner.num_nodes()
    }

    pub fn num_edges(&self) -> u64 {
        self.inner.num_edges()
    }

    /// Whether the edges carry weights (otherwise every edge weighs 1).
    pub fn is_weighted(&self) -> bool {
        self.inner.out().is_weighted()
    }

    /// Whether the weights are real (`f32`) rather than integers.
    pub fn has_real_weights(&self) -> bool {
        self.inner.out().has_real_weights()
    }

    /// The CSR offsets: node `u`'s out-edges are `offsets()[u]..offsets()[u + 1]`.
    pub fn offsets(&self) -> &[u64] {
        self.inner.out().offsets()
    }

    /// The head of every edge, by edge id.
    pub fn targets(&self) -> &[NodeId] {
        self.inner.out().targets()
    }

    /// The integer weight of every edge, by edge id, when the graph has integer weights.
    pub fn weights(&self) -> Option<&[Weight]> {
        self.inner.out().weights()
    }

    /// The real weight of every edge, by edge id, when the graph has real weights.
    pub fn real_weights(&self) -> Option<&[f32]> {
        self.inner.out().real_weights()
    }

    /// The substrate's graph, for the lower-level crates (`grail-graph`, `grail-runtime`).
    pub fn as_inner(&self) -> &grail_graph::Graph {
        &self.inner
    }
}

impl From<grail_graph::Graph> for Graph {
    fn from(inner: grail_graph::Graph) -> Graph {
        Graph { inner }
    }
}
