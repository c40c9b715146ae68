//! Compressed sparse row storage and the [`Graph`] that carries it.
//!
//! Node ids are `u32` (so `u32::MAX` is free to mean "no node"), edge offsets `u64` (so a graph
//! may have more than 4 billion edges). Weights, when present, are integers (`u32`, summed in
//! `u64` by path algorithms) or reals (`f32`, summed in `f64`): see [`WeightKind`].

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{GraphError, Result};
use crate::facts::Facts;
use crate::properties::Properties;

/// A node id.
pub type NodeId = u32;
/// An edge id: the edge's position in the CSR target array.
pub type EdgeId = u64;
/// An edge weight.
pub type Weight = u32;

/// What a graph's edge weights are.
///
/// Real weights are stored as `f32` (about 7 significant digits, as GPU graph codes keep them):
/// the readers refuse a value that `f32` cannot hold (one that overflows, a non-zero one that
/// would round to 0, NaN, an infinity) rather than change it silently. Both kinds share one 32-bit column,
/// so every reordering of edges carries either kind unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightKind {
    /// `u32` weights.
    Integer,
    /// `f32` weights.
    Real,
}

impl WeightKind {
    /// `"integer"` or `"real"`, for messages.
    pub fn name(self) -> &'static str {
        match self {
            WeightKind::Integer => "integer",
            WeightKind::Real => "real",
        }
    }
}

/// The key that orders real weights as their values (for non-negative ones, their bits' order
/// already does): flips the sign bit of positives and every bit of negatives.
#[inline]
pub fn real_weight_order_key(bits: u32) -> u32 {
    if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 }
}

/// The real weight's bits whose [`real_weight_order_key`] is `key`.
#[inline]
pub fn real_weight_from_order_key(key: u32) -> u32 {
    if key & 0x8000_0000 != 0 { key & 0x7fff_ffff } else { !key }
}

/// The largest number of nodes a graph may have: `u32::MAX` itself is reserved for "no node".
pub const MAX_NODES: u64 = u32::MAX as u64;

/// One direction of adjacency in CSR form: the edges of node `u` are
/// `targets[offsets[u]..offsets[u + 1]]`, with `weights` parallel to `targets`.
///
/// A CSR may instead have room per node ([`Csr::with_room`], module [`crate::room`]): then
/// node `u`'s edges are `targets[offsets[u]..ends()[u]]` and unused slots may follow a row.
/// Readers, writers, partitioners and the reference algorithms' inputs are packed; methods that
/// need a packed CSR say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    pub(crate) offsets: Vec<u64>,
    pub(crate) targets: Vec<NodeId>,
    /// One 32-bit word per edge slot: a `u32` weight, or an `f32`'s bits when `real`.
    pub(crate) weights: Option<Vec<Weight>>,
    pub(crate) real: bool,
    /// Where rows end, when they need not end where the next begins.
    pub(crate) room: Option<Box<crate::room::Room>>,
}

impl Csr {
    /// Assembles a CSR from its arrays, checking every invariant: `offsets` has one entry per
    /// node plus one, starts at 0, never decreases and ends at `targets.len()`; every target is a
    /// node; `weights`, if given, has one entry per edge.
    pub fn from_parts(offsets: Vec<u64>, targets: Vec<NodeId>, weights: Option<Vec<Weight>>) -> Result<Csr> {
        let csr = Csr { offsets, targets, weights, real: false, room: None };
        csr.validate()?;
        Ok(csr)
    }

    /// [`Csr::from_parts`] with real weights. Every weight must be a finite number (not NaN or
    /// an infinity), as the readers require: a CSR made here can be written and read back.
    pub fn from_parts_real(offsets: Vec<u64>, targets: Vec<NodeId>, weights: Vec<f32>) -> Result<Csr> {
        if let Some(e) = weights.iter().position(|w| !w.is_finite()) {
            return Err(GraphError::invalid(format!(
                "the weight of edge {e} is {}: real weights must be finite numbers",
                weights[e]
            )));
        }
        let bits = weights.into_iter().map(f32::to_bits).collect();
        let csr = Csr { offsets, targets, weights: Some(bits), real: true, room: None };
        csr.validate()?;
        Ok(csr)
    }

    /// Assembles a CSR whose invariants the caller has established (the builder, the readers
    /// that checked as they parsed). Checked again in debug builds.
    pub(crate) fn from_parts_unchecked(offsets: Vec<u64>, targets: Vec<NodeId>, weights: Option<Vec<Weight>>) -> Csr {
        let csr = Csr { offsets, targets, weights, real: false, room: None };
        debug_assert!(csr.validate().is_ok(), "{:?}", csr.validate());
        csr
    }

    /// An empty graph of `num_nodes` nodes.
    pub fn empty(num_nodes: u32, weighted: bool) -> Csr {
        Csr {
            offsets: vec![0; num_nodes as usize + 1],
            targets: Vec::new(),
            weights: weighted.then(Vec::new),
            real: false,
            room: None,
        }
    }

    /// This CSR with its weight column read as `f32` bits when `real` (how the builders and
    /// readers that move the column as words pass its kind on).
    pub(crate) fn with_real_weights(mut self, real: bool) -> Csr {
        self.real = real && self.weights.is_some();
        self
    }

    fn validate(&self) -> Result<()> {
        let Some((&first, _)) = self.offsets.split_first() else {
            return Err(GraphError::invalid("CSR offsets must have one entry per node plus one"));
        };
        let n = self.offsets.len() as u64 - 1;
        if n > MAX_NODES {
            return Err(GraphError::invalid(format!("{n} nodes is more than the {MAX_NODES} a graph may have")));
        }
        let m = self.targets.len() as u64;
        if first != 0 || *self.offsets.last().unwrap() != m {
            return Err(GraphError::invalid(format!(
                "CSR offsets must run from 0 to the edge count {m}, but run from {first} to {}",
                self.offsets.last().unwrap()
            )));
        }
        if let Some(i) = crate::par::first_decrease(&self.offsets) {
            return Err(GraphError::invalid(format!("CSR offsets decrease at node {}", i - 1)));
        }
        if let Some(edge) = crate::par::first_out_of_range(&self.targets, n) {
            return Err(GraphError::invalid(format!(
                "edge {edge} points to node {}, but there are only {n} nodes",
                self.targets[edge]
            )));
        }
        if let Some(weights) = &self.weights
            && weights.len() != self.targets.len()
        {
            return Err(GraphError::invalid(format!("{} weights for {m} edges", weights.len())));
        }
        Ok(())
    }

    pub fn num_nodes(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// The edges in the rows (on a CSR with room, fewer than [`Csr::edge_slots`]).
    pub fn num_edges(&self) -> u64 {
        match &self.room {
            None => self.targets.len() as u64,
            Some(room) => room.edges,
        }
    }

    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The kind of the weights, or `None` for an unweighted graph.
    pub fn weight_kind(&self) -> Option<WeightKind> {
        self.weights.as_ref().map(|_| if self.real { WeightKind::Real } else { WeightKind::Integer })
    }

    /// Whether the weights are real (`f32`).
    pub fn has_real_weights(&self) -> bool {
        self.real && self.weights.is_some()
    }

    /// The positions of `u`'s edges in [`Csr::targets`] and [`Csr::weights`].
    #[inline]
    pub fn edge_range(&self, u: NodeId) -> Range<usize> {
        self.offsets[u as usize] as usize..self.end(u) as usize
    }

    /// The position past `u`'s last edge.
    #[inline]
    fn end(&self, u: NodeId) -> u64 {
        match &self.room {
            None => self.offsets[u as usize + 1],
            Some(room) => room.ends[u as usize],
        }
    }

    #[inline]
    pub fn degree(&self, u: NodeId) -> u64 {
        self.end(u) - self.offsets[u as usize]
    }

    /// The heads of `u`'s edges.
    #[inline]
    pub fn neighbors(&self, u: NodeId) -> &[NodeId] {
        &self.targets[self.edge_range(u)]
    }

    /// The integer weights of `u`'s edges, parallel to [`Csr::neighbors`] (`None` for real ones).
    #[inline]
    pub fn neighbor_weights(&self, u: NodeId) -> Option<&[Weight]> {
        let range = self.edge_range(u);
        self.weights().map(|w| &w[range])
    }

    /// `u`'s edges as `(head, weight)`, with weight 1 when the graph is unweighted.
    ///
    /// # Panics
    ///
    /// If the weights are real: use [`Csr::real_weighted_neighbors`].
    pub fn weighted_neighbors(&self, u: NodeId) -> impl Iterator<Item = (NodeId, Weight)> + '_ {
        assert!(!self.has_real_weights(), "integer weights asked of a graph with real weights");
        let range = self.edge_range(u);
        let weights = self.weights.as_ref().map(|w| &w[range.clone()]);
        self.targets[range].iter().enumerate().map(move |(i, &v)| (v, weights.map_or(1, |w| w[i])))
    }

    /// `u`'s edges as `(head, weight)` with the weight as `f64`, whatever its kind (1 when the
    /// graph is unweighted).
    pub fn real_weighted_neighbors(&self, u: NodeId) -> impl Iterator<Item = (NodeId, f64)> + '_ {
        let range = self.edge_range(u);
        let weights = self.weights.as_ref().map(|w| &w[range.clone()]);
        let real = self.real;
        self.targets[range].iter().enumerate().map(move |(i, &v)| {
            let w = weights.map_or(1.0, |w| if real { f64::from(f32::from_bits(w[i])) } else { f64::from(w[i]) });
            (v, w)
        })
    }

    /// Where each node's row begins (one entry per node plus one; on a packed CSR the last is
    /// the edge count, and each row ends where the next begins).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Where each node's row ends: `ends()[u]` is the position past `u`'s last edge (what
    /// generated code reads as `out_ends`): `offsets()[1..]` on a packed CSR.
    pub fn ends(&self) -> &[u64] {
        match &self.room {
            None => &self.offsets[1..],
            Some(room) => &room.ends,
        }
    }

    pub fn targets(&self) -> &[NodeId] {
        &self.targets
    }

    /// The integer weights, or `None` when the graph is unweighted or its weights are real.
    pub fn weights(&self) -> Option<&[Weight]> {
        self.weights.as_deref().filter(|_| !self.real)
    }

    /// The real weights, or `None` when the graph is unweighted or its weights are integers.
    pub fn real_weights(&self) -> Option<&[f32]> {
        self.weights.as_deref().filter(|_| self.real).map(bytemuck::cast_slice)
    }

    /// The weight column as stored, whatever its [`WeightKind`]: for the code that moves
    /// weights without reading them (binary formats, device uploads).
    pub fn weight_words(&self) -> Option<&[u32]> {
        self.weights.as_deref()
    }

    /// Every weight as `f64`, whatever its kind; `None` when the graph is unweighted.
    pub fn weights_as_f64(&self) -> Option<Vec<f64>> {
        if let Some(real) = self.real_weights() {
            return Some(real.par_iter().map(|&w| f64::from(w)).collect());
        }
        self.weights().map(|w| w.par_iter().map(|&w| f64::from(w)).collect())
    }

    /// This CSR with integer weights that order as its real weights do
    /// ([`real_weight_order_key`]): what algorithms that only compare weights (minimum spanning
    /// forests) run on. A CSR without real weights comes back as it is.
    pub fn with_weight_order_keys(&self) -> Csr {
        let mut csr = self.clone();
        if csr.real {
            if let Some(words) = &mut csr.weights {
                words.par_iter_mut().for_each(|w| *w = real_weight_order_key(*w));
            }
            csr.real = false;
        }
        csr
    }

    /// Drops the weights, keeping the structure.
    pub fn without_weights(mut self) -> Csr {
        self.weights = None;
        self.real = false;
        self
    }

    /// Takes the arrays apart: `(offsets, targets, weights)`, the weights as stored (see
    /// [`Csr::weight_words`]); those of the packed CSR of a CSR with room.
    pub fn into_parts(self) -> (Vec<u64>, Vec<NodeId>, Option<Vec<Weight>>) {
        let packed = if self.is_packed() { self } else { self.packed() };
        (packed.offsets, packed.targets, packed.weights)
    }

    /// The source of every edge, parallel to [`Csr::targets`] (on a CSR with room, the unused
    /// slots' are 0).
    pub fn edge_sources(&self) -> Vec<NodeId> {
        let mut sources = vec![0; self.targets.len()];
        let out = crate::par::DisjointWriter::new(&mut sources);
        (0..self.num_nodes()).into_par_iter().with_min_len(4096).for_each(|u| {
            for e in self.edge_range(u) {
                // SAFETY: rows do not overlap: position e belongs to u's row alone.
                unsafe { out.write(e, u) };
            }
        });
        sources
    }

    /// The transposed adjacency (in-edges as out-edges), with each node's in-edges in order of
    /// their sources (parallel edges in their out-list order) and weights carried along. Built
    /// in parallel; the same on any thread count.
    pub fn transpose(&self) -> Csr {
        if !self.is_packed() {
            return self.packed().transpose();
        }
        let t = crate::transpose::transpose(self, true, false);
        Csr::from_parts_unchecked(t.offsets, t.sources, t.weights).with_real_weights(self.real)
    }

    /// [`Csr::transpose`] without the weights.
    pub fn transpose_structure(&self) -> Csr {
        if !self.is_packed() {
            return self.packed().transpose_structure();
        }
        let t = crate::transpose::transpose(self, false, false);
        Csr::from_parts_unchecked(t.offsets, t.sources, None)
    }

    /// [`Csr::transpose`], plus for every in-edge its id among the out-edges (increasing within
    /// each node's in-edges).
    ///
    /// # Panics
    ///
    /// On a CSR with room (the ids would be positions of its packed copy): the runtimes refuse
    /// programs that iterate in-edges as edges on such a graph.
    pub fn transpose_with_ids(&self) -> (Csr, Vec<EdgeId>) {
        assert!(self.is_packed(), "in-edge ids of a CSR with room per node");
        let t = crate::transpose::transpose(self, true, true);
        let csr = Csr::from_parts_unchecked(t.offsets, t.sources, t.weights).with_real_weights(self.real);
        (csr, t.ids.expect("asked for"))
    }

    /// The largest out-degree, and a node that has it (0 for a graph without nodes).
    pub fn max_degree(&self) -> (NodeId, u64) {
        (0..self.num_nodes())
            .into_par_iter()
            .map(|u| (self.degree(u), std::cmp::Reverse(u)))
            .max()
            .map_or((0, 0), |(d, std::cmp::Reverse(u))| (u, d))
    }
}

/// A directed graph: out-edges in CSR, in-edges on request, and property columns.
///
/// Undirected graphs are stored symmetrically (each edge in both directions). The edge arrays
/// are shared: cloning a graph to add its reverse CSR or a property copies no edges. What is known
/// of the edges ([`Facts`]) travels with them; two graphs are equal when their edges, reverse CSRs
/// and properties are, whatever is known of them.
#[derive(Debug, Clone)]
pub struct Graph {
    out: Arc<Csr>,
    reverse: Reverse,
    /// For every position of the reverse CSR, the id of the same edge among the out-edges.
    in_edge_ids: Option<Arc<Vec<EdgeId>>>,
    facts: Facts,
    /// One value per node for each named column.
    pub node_props: Properties,
    /// One value per edge (indexed by out-edge id) for each named column.
    pub edge_props: Properties,
}

/// The in-edges a graph holds.
#[derive(Debug, Clone)]
enum Reverse {
    None,
    /// The out-CSR itself: the graph is symmetric with sorted adjacencies.
    Out,
    Built(Arc<Csr>),
}

impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        self.out == other.out
            && self.reverse() == other.reverse()
            && self.in_edge_ids() == other.in_edge_ids()
            && self.node_props == other.node_props
            && self.edge_props == other.edge_props
    }
}

impl Graph {
    pub fn from_csr(out: Csr) -> Graph {
        Graph::with_facts(out, Facts::NONE)
    }

    /// A graph whose edges the caller knows `facts` of (a builder, a reader that checked them).
    pub(crate) fn with_facts(out: Csr, facts: Facts) -> Graph {
        let node_props = Properties::new(out.num_nodes() as usize);
        let edge_props = Properties::new(out.num_edges() as usize);
        Graph { out: Arc::new(out), reverse: Reverse::None, in_edge_ids: None, facts, node_props, edge_props }
    }

    /// Attaches the reverse CSR (and in-edge ids) that the caller checked to be this graph's;
    /// `None` for a graph whose facts make it its own reverse.
    pub(crate) fn set_reverse(&mut self, reverse: Option<Csr>, in_edge_ids: Option<Vec<EdgeId>>) {
        self.reverse = match reverse {
            Some(csr) => Reverse::Built(Arc::new(csr)),
            None => {
                debug_assert!(self.facts.reverse_is_out());
                Reverse::Out
            }
        };
        self.in_edge_ids = in_edge_ids.map(Arc::new);
    }

    /// Makes the out-CSR the graph's reverse CSR, which the caller knows to hold every node's
    /// in-edges (a part of a symmetric graph: its owned nodes' in-edges are their out-edges,
    /// and its ghosts have neither), whatever the local CSR's own symmetry.
    pub(crate) fn set_reverse_to_out(&mut self) {
        self.reverse = Reverse::Out;
        self.in_edge_ids = None;
    }

    /// The graph, with `facts` that the caller guarantees added to what is known.
    pub(crate) fn with_more_facts(mut self, facts: Facts) -> Graph {
        self.facts = self.facts.union(facts);
        self
    }

    /// What is known of the out-edges.
    pub fn facts(&self) -> Facts {
        self.facts
    }

    /// Learns the facts a parallel pass over the edges can tell (sorted, self-loops, duplicates;
    /// see [`crate::facts::scan`]), keeps them, and returns everything known.
    pub fn learn_facts(&mut self) -> Facts {
        if !self.facts.is_simple_sorted() {
            self.facts = self.facts.union(crate::facts::scan(&self.out));
        }
        self.facts
    }

    /// Whether the graph is symmetric, decided exactly and remembered. For sorted adjacencies
    /// this transposes the graph once and keeps the transpose as the reverse CSR when it is not
    /// the out-CSR itself (it is, for a symmetric graph).
    pub fn learn_symmetry(&mut self) -> bool {
        if self.facts.symmetric {
            return true;
        }
        self.learn_facts();
        if !self.facts.sorted {
            let symmetric = self.is_symmetric();
            self.facts.symmetric = symmetric;
            return symmetric;
        }
        let transpose = match &self.reverse {
            Reverse::Built(csr) => Arc::clone(csr),
            _ => Arc::new(self.out.transpose()),
        };
        let symmetric = crate::facts::symmetric_given_transpose(&self.out, &transpose);
        self.facts.symmetric = symmetric;
        if symmetric {
            self.reverse = Reverse::Out;
        } else if matches!(self.reverse, Reverse::None) {
            self.reverse = Reverse::Built(transpose);
        }
        symmetric
    }

    /// The out-edges.
    pub fn out(&self) -> &Csr {
        &self.out
    }

    /// The in-edges, if [`Graph::build_reverse`] has run or the graph came with them.
    pub fn reverse(&self) -> Option<&Csr> {
        match &self.reverse {
            Reverse::None => None,
            Reverse::Out => Some(&self.out),
            Reverse::Built(csr) => Some(csr),
        }
    }

    /// Whether the reverse CSR is the out-CSR itself (a symmetric graph with sorted adjacencies),
    /// so that storing it again would store nothing new.
    pub fn reverse_is_out(&self) -> bool {
        matches!(self.reverse, Reverse::Out)
    }

    /// Computes the in-edge CSR if it is not there yet, and returns it. A graph known to be
    /// symmetric with sorted adjacencies is its own reverse: nothing is built.
    pub fn build_reverse(&mut self) -> &Csr {
        if matches!(self.reverse, Reverse::None) {
            self.reverse =
                if self.facts.reverse_is_out() { Reverse::Out } else { Reverse::Built(Arc::new(self.out.transpose())) };
        }
        self.reverse().expect("just built")
    }

    /// For every position of the reverse CSR, the id of the same edge among the out-edges, if
    /// [`Graph::build_in_edge_ids`] has run or the graph came with them.
    pub fn in_edge_ids(&self) -> Option<&[EdgeId]> {
        self.in_edge_ids.as_deref().map(Vec::as_slice)
    }

    /// Computes the in-edge ids (and the reverse CSR, if missing) and returns the ids.
    pub fn build_in_edge_ids(&mut self) -> &[EdgeId] {
        if self.in_edge_ids.is_none() {
            let (reverse, ids) = self.out.transpose_with_ids();
            if matches!(self.reverse, Reverse::None) {
                self.reverse =
                    if self.facts.reverse_is_out() { Reverse::Out } else { Reverse::Built(Arc::new(reverse)) };
            }
            self.in_edge_ids = Some(Arc::new(ids));
        }
        self.in_edge_ids().expect("just built")
    }

    pub fn num_nodes(&self) -> u32 {
        self.out.num_nodes()
    }

    /// Directed edges as stored (an undirected edge counts twice).
    pub fn num_edges(&self) -> u64 {
        self.out.num_edges()
    }

    pub fn is_weighted(&self) -> bool {
        self.out.is_weighted()
    }

    #[inline]
    pub fn neighbors(&self, u: NodeId) -> &[NodeId] {
        self.out.neighbors(u)
    }

    #[inline]
    pub fn out_degree(&self, u: NodeId) -> u64 {
        self.out.degree(u)
    }

    /// The graph without edge weights (out-edges and reverse CSR), keeping its properties and
    /// what is known of its edges. Copies the edges only if another graph shares them.
    pub fn without_weights(self) -> Graph {
        if !self.is_weighted() {
            return self;
        }
        let strip = |csr: Arc<Csr>| Arc::new(Arc::unwrap_or_clone(csr).without_weights());
        Graph {
            out: strip(self.out),
            reverse: match self.reverse {
                Reverse::Built(csr) => Reverse::Built(strip(csr)),
                other => other,
            },
            ..self
        }
    }

    /// This graph with a packed out-CSR ([`Csr::packed`]; itself when it is packed): what
    /// readers of the plain CSR (writers, partitioners) take.
    pub fn packed(&self) -> std::borrow::Cow<'_, Graph> {
        if self.out.is_packed() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut graph = Graph::from_csr(self.out.packed());
        graph.node_props = self.node_props.clone();
        std::borrow::Cow::Owned(graph)
    }

    /// Gives the out-edges room per node ([`Csr::with_room`]) unless they have it: what a
    /// dynamic algorithm does before its first batch, so that inserting it moves no edges.
    /// Refused when the graph has edge properties (they would need a place for each new edge).
    pub fn make_room(&mut self) -> Result<()> {
        self.check_no_edge_properties()?;
        if self.out.is_packed() {
            self.out = Arc::new(self.out.with_room());
            self.forget_derived();
        }
        Ok(())
    }

    /// Inserts `batch` into the out-edges in place ([`Csr::insert`]; room per node is made the
    /// first time). The reverse CSR, the in-edge ids and what was known of the edges are
    /// dropped: the graph changed. Refused, as [`Graph::make_room`] is, with edge properties.
    pub fn insert_edges(&mut self, batch: &[crate::insert::Insertion]) -> Result<crate::room::Inserted> {
        self.check_no_edge_properties()?;
        let inserted = Arc::make_mut(&mut self.out).insert(batch)?;
        self.forget_derived();
        Ok(inserted)
    }

    fn check_no_edge_properties(&self) -> Result<()> {
        match self.edge_props.schema().next() {
            Some((name, _)) => Err(GraphError::invalid(format!(
                "edges cannot be inserted into a graph with edge properties (it has `{name}`): only weights follow \
                 inserted edges"
            ))),
            None => Ok(()),
        }
    }

    /// Drops what was built from or known of the out-edges.
    fn forget_derived(&mut self) {
        self.reverse = Reverse::None;
        self.in_edge_ids = None;
        self.facts = Facts::NONE;
    }

    /// Takes the out-edge CSR, dropping the rest (copying the edges only if another graph
    /// shares them).
    pub fn into_csr(self) -> Csr {
        Arc::unwrap_or_clone(self.out)
    }

    /// Checks that `u` names a node of this graph, for ids that come from users.
    pub fn check_node(&self, u: u64, what: &str) -> Result<NodeId> {
        if u < u64::from(self.num_nodes()) {
            Ok(u as NodeId)
        } else {
            Err(GraphError::invalid(format!(
                "{what} {u} is out of range: the graph has {} nodes (ids 0 to {})",
                self.num_nodes(),
                i64::from(self.num_nodes()) - 1
            )))
        }
    }

    /// Whether every edge `u -> v` has a matching `v -> u` (with the same weight, if weighted),
    /// counting multiplicities.
    pub fn is_symmetric(&self) -> bool {
        if self.facts.symmetric {
            return true;
        }
        // The transpose lists each node's in-edges by source, parallel edges by weight when the
        // out-edges are sorted; compare it against the sorted out-edges.
        let sorted = self.facts.sorted || crate::facts::scan(&self.out).sorted;
        let forward = if sorted { None } else { Some(crate::builder::sort_adjacencies(Csr::clone(&self.out))) };
        let forward = forward.as_ref().unwrap_or(&self.out);
        crate::facts::symmetric_given_transpose(forward, &forward.transpose())
    }
}
