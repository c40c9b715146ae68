//! Graph partitioning: which part (device) owns each node, and each part's subgraph.
//!
//! A partitioning gives every node one owner among `K` parts. Following Falcon (§4.7, §5.10) and
//! Groute (§4.6.1), a node and all of its out-edges live in the part that owns it; an edge whose
//! target another part owns reaches a *ghost* (Falcon's remote node) of the part, a local copy of
//! that node holding no edges of its own. [`Partitioning::parts`] builds each part's subgraph in
//! local ids: its owned nodes first, in increasing global id, then its ghosts, in increasing
//! global id.
//!
//! Five [`Method`]s: contiguous id ranges of equal node counts ([`Method::Ranges`]) or of equal
//! edge counts (Falcon's ordered partitioning, [`Method::Ordered`]); nodes sorted by degree and
//! dealt out (Falcon's degree-based partitioning, [`Method::Degree`]); a seeded hash
//! ([`Method::Random`], Totem's and Falcon's random partitioning); and METIS's multilevel k-way
//! edge-cut minimization ([`Method::Metis`], what Groute partitions with), on the undirected
//! simple graph underlying the input, through the system's METIS library (loaded when asked for:
//! [`crate::metis`]).
//!
//! Everything here runs in parallel and gives the same result on any number of threads.

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::{GraphError, Location, ParseError, Result};
use crate::graph::{Csr, Graph, NodeId};
use crate::par::{DisjointWriter, node_groups, split_by_bounds};

/// How nodes are assigned to parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// METIS's multilevel k-way partitioning (`METIS_PartGraphKway`), minimizing the edges cut
    /// of the undirected simple graph underlying the input, every node of weight 1 (so parts
    /// have about equal node counts, within METIS's default 3% imbalance). METIS may leave a
    /// part empty.
    Metis,
    /// Falcon's ordered partitioning: contiguous ranges of node ids, each holding about `m / K`
    /// out-edges (and at least one node; a graph without edges is cut as [`Method::Ranges`]).
    Ordered,
    /// Falcon's degree-based partitioning: nodes sorted by out-degree, largest first (ties by
    /// id), dealt to the parts in a snake order (`0, 1, ..., K-1, K-1, ..., 1, 0, 0, 1, ...`) so
    /// that every part gets a similar mix of degrees.
    Degree,
    /// Each node to the part a hash of its id and the seed picks. Parts have about equal node
    /// counts; a small graph may leave one empty.
    Random,
    /// Contiguous ranges of node ids of equal node counts (differing by at most one).
    Ranges,
    /// METIS as [`Method::Metis`], each node weighing 1 plus its out-degree: parts get about
    /// equal work (edges) rather than equal node counts, which is what a device's share is on a
    /// power-law graph, at the price of a somewhat larger cut.
    MetisEdges,
}

impl Method {
    /// Every method, in the order the CLI lists them.
    pub const ALL: [Method; 6] =
        [Method::Metis, Method::Ordered, Method::Degree, Method::Random, Method::Ranges, Method::MetisEdges];

    /// Whether the method needs the system's METIS library.
    pub fn uses_metis(self) -> bool {
        matches!(self, Method::Metis | Method::MetisEdges)
    }

    /// The method's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Metis => "metis",
            Method::Ordered => "ordered",
            Method::Degree => "degree",
            Method::Random => "random",
            Method::Ranges => "ranges",
            Method::MetisEdges => "metis-edges",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Method, String> {
        Method::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
            format!("unknown partitioning method `{s}` (expected one of {})", names.join(", "))
        })
    }
}

/// The part that owns each node of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    parts: u32,
    /// The part of each node.
    owner: Vec<u32>,
}

/// Partitions `graph` into `parts` parts by `method`; `seed` drives [`Method::Random`] and
/// METIS's own randomness (the other methods ignore it). The same inputs give the same
/// partitioning on any number of threads.
///
/// `parts` must be between 1 and the node count: more parts than nodes would leave parts empty
/// whatever the method, so it is refused. (Random and METIS may still leave a part empty when
/// `parts` is close to the node count; the others never do.) METIS's failures, and graphs too
/// large for its 32-bit indices, are errors.
pub fn partition(graph: &Graph, parts: u32, method: Method, seed: u64) -> Result<Partitioning> {
    // A graph with room per node is partitioned as its packed CSR.
    let graph = &*graph.packed();
    let n = graph.num_nodes();
    if parts == 0 {
        return Err(GraphError::invalid("the number of parts must be at least 1"));
    }
    if n == 0 {
        return Err(GraphError::invalid("a graph without nodes cannot be partitioned"));
    }
    if parts > n {
        return Err(GraphError::invalid(format!(
            "cannot cut a graph of {n} node{} into {parts} parts: some would be empty (at most {n} parts)",
            if n == 1 { "" } else { "s" }
        )));
    }
    let owner = match method {
        Method::Ranges => ranges(n, parts),
        Method::Ordered => ordered(graph.out(), parts),
        Method::Degree => by_degree(graph.out(), parts),
        Method::Random => random(n, parts, seed),
        Method::Metis => metis(graph, parts, seed, false)?,
        Method::MetisEdges => metis(graph, parts, seed, true)?,
    };
    let mut owner = owner;
    fill_empty_parts(&mut owner, parts);
    Ok(Partitioning { parts, owner })
}

/// Gives every empty part a node of the largest part (METIS may leave parts of a small graph
/// empty, as may random placement with many parts): each device of a partitioned run holds at
/// least one node, and a partition file written from the result is one that a run takes back.
/// At most `parts - 1` nodes move; `parts <= n`.
fn fill_empty_parts(owner: &mut [u32], parts: u32) {
    let mut sizes = vec![0u64; parts as usize];
    for &p in owner.iter() {
        sizes[p as usize] += 1;
    }
    for empty in 0..parts as usize {
        if sizes[empty] > 0 {
            continue;
        }
        let largest = (0..parts as usize).max_by_key(|&p| (sizes[p], std::cmp::Reverse(p))).expect("parts >= 1");
        // The largest part's last node (its highest id) moves: a range's end, so ordered parts
        // stay nearly ranges.
        let node = owner.iter().rposition(|&p| p as usize == largest).expect("the largest part has nodes");
        owner[node] = empty as u32;
        sizes[largest] -= 1;
        sizes[empty] += 1;
    }
}

/// Node `v`'s part when `n` nodes are cut into `parts` ranges by `bounds` (`parts + 1` values
/// from 0 to `n`, increasing).
fn owners_from_bounds(n: u32, bounds: &[u32]) -> Vec<u32> {
    let mut owner = vec![0u32; n as usize];
    let pieces = split_by_bounds(&mut owner, &bounds.iter().map(|&b| b as usize).collect::<Vec<_>>());
    pieces
        .into_par_iter()
        .enumerate()
        .for_each(|(p, piece)| piece.par_iter_mut().with_min_len(1 << 14).for_each(|o| *o = p as u32));
    owner
}

fn ranges(n: u32, parts: u32) -> Vec<u32> {
    let bounds: Vec<u32> = (0..=parts).map(|p| (u64::from(n) * u64::from(p) / u64::from(parts)) as u32).collect();
    owners_from_bounds(n, &bounds)
}

fn ordered(csr: &Csr, parts: u32) -> Vec<u32> {
    let n = csr.num_nodes();
    let offsets = csr.offsets();
    let m = csr.num_edges();
    if m == 0 {
        // Nothing to balance: equal node counts.
        return ranges(n, parts);
    }
    let mut bounds = vec![0u32];
    for p in 1..parts {
        let goal = (u128::from(m) * u128::from(p) / u128::from(parts)) as u64;
        // The node boundary whose edge offset is nearest the goal.
        let after = offsets.partition_point(|&o| o < goal).min(n as usize);
        let cut = if after > 0 && goal - offsets[after - 1] < offsets[after] - goal { after - 1 } else { after };
        // Every part keeps at least one node: after the previous bound, and leaving one node to
        // each part still to come.
        let low = bounds[p as usize - 1] + 1;
        let high = n - (parts - p);
        bounds.push((cut as u32).clamp(low, high));
    }
    bounds.push(n);
    owners_from_bounds(n, &bounds)
}

fn by_degree(csr: &Csr, parts: u32) -> Vec<u32> {
    let n = csr.num_nodes();
    // Largest degree first, ties by id: one sortable word per node (degrees past 2^32 - 1, which
    // no graph of u32 nodes can give a node many of, tie there).
    let mut keys: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|u| ((u64::from(u32::MAX) - csr.degree(u).min(u64::from(u32::MAX))) << 32) | u64::from(u))
        .collect();
    keys.par_sort_unstable();
    let mut owner = vec![0u32; n as usize];
    let writer = DisjointWriter::new(&mut owner);
    let k = u64::from(parts);
    keys.par_iter().enumerate().with_min_len(1 << 14).for_each(|(i, &key)| {
        let (round, j) = (i as u64 / k, i as u64 % k);
        let part = if round % 2 == 0 { j } else { k - 1 - j };
        // SAFETY: the keys hold every node once, so each node's slot is written by one item.
        unsafe { writer.write((key & 0xffff_ffff) as usize, part as u32) };
    });
    owner
}

/// A 64-bit mix of `x` (splitmix64's finalizer).
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn random(n: u32, parts: u32, seed: u64) -> Vec<u32> {
    let key = mix(seed ^ 0x6772_6169_6c70_6172);
    (0..n)
        .into_par_iter()
        .map(|u| {
            let h = mix(key ^ mix(u64::from(u).wrapping_add(0x9e37_79b9_7f4a_7c15)));
            ((u128::from(h) * u128::from(parts)) >> 64) as u32
        })
        .collect()
}

/// METIS on the undirected simple graph underlying `graph`; with `by_edges`, each node weighs 1
/// plus its out-degree in `graph`.
fn metis(graph: &Graph, parts: u32, seed: u64, by_edges: bool) -> Result<Vec<u32>> {
    let n = graph.num_nodes();
    if parts == 1 {
        return Ok(vec![0; n as usize]);
    }
    let weights: Option<Vec<u64>> =
        by_edges.then(|| (0..n).into_par_iter().map(|u| 1 + graph.out().degree(u)).collect());
    let simple = crate::undirected::undirected_simple(graph);
    crate::metis::part_graph_kway(simple.out().offsets(), simple.out().targets(), weights.as_deref(), parts, seed)
}

/// How many edges a partitioning cuts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeCut {
    /// Directed edges (as stored: an undirected edge counts twice) whose endpoints different
    /// parts own.
    pub edges: u64,
    /// `edges` as a share of all edges (0 for a graph without edges).
    pub share: f64,
}

/// How evenly a partitioning spreads nodes and edges: the largest part's count over the mean
/// part's (1 is perfect; `K` is everything in one part).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Balance {
    /// The most nodes a part owns, over `n / K`.
    pub nodes: f64,
    /// The most out-edges a part's nodes have, over `m / K` (1 for a graph without edges).
    pub edges: f64,
}

/// One part's counts, as [`Report`] gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartCounts {
    /// The nodes it owns.
    pub nodes: u64,
    /// Its owned nodes' out-edges.
    pub edges: u64,
    /// Those of its edges whose target another part owns.
    pub cut_edges: u64,
    /// The distinct nodes of other parts its edges reach.
    pub ghosts: u64,
}

/// What a partitioning does to a graph: per-part counts, the edge cut, the balance.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// One entry per part.
    pub parts: Vec<PartCounts>,
    /// The graph's nodes.
    pub nodes: u64,
    /// The graph's directed edges.
    pub edges: u64,
}

impl Report {
    pub fn edge_cut(&self) -> EdgeCut {
        let edges = self.parts.iter().map(|p| p.cut_edges).sum();
        EdgeCut { edges, share: if self.edges == 0 { 0.0 } else { edges as f64 / self.edges as f64 } }
    }

    pub fn balance(&self) -> Balance {
        let k = self.parts.len() as f64;
        let ratio = |most: u64, total: u64| if total == 0 { 1.0 } else { most as f64 * k / total as f64 };
        Balance {
            nodes: ratio(self.parts.iter().map(|p| p.nodes).max().unwrap_or(0), self.nodes),
            edges: ratio(self.parts.iter().map(|p| p.edges).max().unwrap_or(0), self.edges),
        }
    }
}

/// The nodes grouped by part: `order[starts[p]..starts[p + 1]]` are part `p`'s nodes in
/// increasing id, and `rank[v]` is `v`'s position among its part's nodes.
struct Grouping {
    order: Vec<NodeId>,
    starts: Vec<usize>,
    rank: Vec<u32>,
}

impl Partitioning {
    /// A partitioning given as each node's part, every one below `parts`.
    pub fn from_owner(parts: u32, owner: Vec<u32>) -> Result<Partitioning> {
        if parts == 0 {
            return Err(GraphError::invalid("the number of parts must be at least 1"));
        }
        if owner.len() as u64 > crate::graph::MAX_NODES {
            return Err(GraphError::invalid(format!("{} nodes is more than a graph may have", owner.len())));
        }
        if let Some(u) = crate::par::first_index(owner.len(), |u| owner[u] >= parts) {
            return Err(GraphError::invalid(format!(
                "node {u} is in part {}, but there are only {parts} parts",
                owner[u]
            )));
        }
        Ok(Partitioning { parts, owner })
    }

    /// The first part that holds no node, if one does (a partition file made for fewer parts
    /// than a run has devices).
    pub fn empty_part(&self) -> Option<u32> {
        let mut seen = vec![false; self.parts as usize];
        for &p in &self.owner {
            seen[p as usize] = true;
        }
        seen.iter().position(|&s| !s).map(|p| p as u32)
    }

    /// The number of parts.
    pub fn num_parts(&self) -> u32 {
        self.parts
    }

    /// The number of nodes partitioned.
    pub fn num_nodes(&self) -> u32 {
        self.owner.len() as u32
    }

    /// The part of every node.
    pub fn owner(&self) -> &[u32] {
        &self.owner
    }

    /// The part of `u`.
    #[inline]
    pub fn owner_of(&self, u: NodeId) -> u32 {
        self.owner[u as usize]
    }

    /// The part of every node.
    pub fn into_owner(self) -> Vec<u32> {
        self.owner
    }

    fn check_graph(&self, graph: &Graph) {
        assert_eq!(
            self.owner.len(),
            graph.num_nodes() as usize,
            "a partitioning of {} nodes applied to a graph of {}",
            self.owner.len(),
            graph.num_nodes()
        );
    }

    /// Per part: nodes, out-edges and cut out-edges (ghosts left at 0).
    fn counts(&self, graph: &Graph) -> Vec<PartCounts> {
        self.check_graph(graph);
        let csr = graph.out();
        let k = self.parts as usize;
        let owner = &self.owner;
        (0..graph.num_nodes())
            .into_par_iter()
            .with_min_len(1 << 12)
            .fold(
                || vec![PartCounts::default(); k],
                |mut counts, u| {
                    let p = owner[u as usize];
                    let c = &mut counts[p as usize];
                    c.nodes += 1;
                    c.edges += csr.degree(u);
                    c.cut_edges += csr.neighbors(u).iter().filter(|&&v| owner[v as usize] != p).count() as u64;
                    counts
                },
            )
            .reduce(
                || vec![PartCounts::default(); k],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        x.nodes += y.nodes;
                        x.edges += y.edges;
                        x.cut_edges += y.cut_edges;
                    }
                    a
                },
            )
    }

    /// The directed edges whose endpoints different parts own.
    pub fn edge_cut(&self, graph: &Graph) -> EdgeCut {
        self.report_without_ghosts(graph).edge_cut()
    }

    /// The largest part's nodes and edges over the mean's.
    pub fn balance(&self, graph: &Graph) -> Balance {
        self.report_without_ghosts(graph).balance()
    }

    fn report_without_ghosts(&self, graph: &Graph) -> Report {
        Report { parts: self.counts(graph), nodes: u64::from(graph.num_nodes()), edges: graph.num_edges() }
    }

    /// Every part's nodes, edges, cut edges and ghosts, with the edge cut and balance they make.
    pub fn report(&self, graph: &Graph) -> Report {
        self.check_graph(graph);
        let grouping = self.grouping();
        let csr = graph.out();
        let owner = &self.owner;
        // One part after another, a node's mark says the last part that counted it as a ghost:
        // the first of that part's edges to reach it swaps the part in, and counts it.
        let mark: Vec<AtomicU32> = (0..owner.len()).into_par_iter().map(|_| AtomicU32::new(0)).collect();
        let parts = (0..self.parts as usize)
            .map(|p| {
                let tag = p as u32 + 1;
                let nodes = &grouping.order[grouping.starts[p]..grouping.starts[p + 1]];
                let (edges, cut_edges, ghosts) = nodes
                    .par_iter()
                    .with_min_len(256)
                    .map(|&u| {
                        let (mut cut, mut ghosts) = (0u64, 0u64);
                        for &v in csr.neighbors(u) {
                            if owner[v as usize] != p as u32 {
                                cut += 1;
                                // Read first: a node many edges reach is swapped once, not by each.
                                let mark = &mark[v as usize];
                                if mark.load(Ordering::Relaxed) != tag && mark.swap(tag, Ordering::Relaxed) != tag {
                                    ghosts += 1;
                                }
                            }
                        }
                        (csr.degree(u), cut, ghosts)
                    })
                    .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
                PartCounts { nodes: nodes.len() as u64, edges, cut_edges, ghosts }
            })
            .collect();
        Report { parts, nodes: u64::from(graph.num_nodes()), edges: graph.num_edges() }
    }

    /// The nodes grouped by part, each group in increasing id (a stable counting sort, in
    /// parallel blocks).
    fn grouping(&self) -> Grouping {
        const BLOCK: usize = 1 << 16;
        let k = self.parts as usize;
        let n = self.owner.len();
        let mut block_counts: Vec<Vec<u32>> = self
            .owner
            .par_chunks(BLOCK)
            .map(|block| {
                let mut counts = vec![0u32; k];
                for &p in block {
                    counts[p as usize] += 1;
                }
                counts
            })
            .collect();
        let mut totals = vec![0usize; k];
        for counts in &block_counts {
            for (t, &c) in totals.iter_mut().zip(counts) {
                *t += c as usize;
            }
        }
        let mut starts = Vec::with_capacity(k + 1);
        starts.push(0usize);
        for t in &totals {
            starts.push(starts.last().unwrap() + t);
        }
        // Each block's first position in each part's group.
        let mut next: Vec<usize> = starts[..k].to_vec();
        for counts in &mut block_counts {
            for (c, at) in counts.iter_mut().zip(&mut next) {
                let here = *at;
                *at += *c as usize;
                *c = here as u32;
            }
        }
        let mut order = vec![0 as NodeId; n];
        let mut rank = vec![0u32; n];
        let writer = DisjointWriter::new(&mut order);
        self.owner.par_chunks(BLOCK).zip(rank.par_chunks_mut(BLOCK)).zip(block_counts).enumerate().for_each(
            |(b, ((block, ranks), mut at))| {
                for (i, (&p, r)) in block.iter().zip(ranks).enumerate() {
                    let pos = at[p as usize] as usize;
                    at[p as usize] += 1;
                    *r = (pos - starts[p as usize]) as u32;
                    // SAFETY: positions handed to different blocks and parts never overlap.
                    unsafe { writer.write(pos, (b * BLOCK + i) as NodeId) };
                }
            },
        );
        Grouping { order, starts, rank }
    }

    /// Each part's subgraph: its owned nodes' out-edges (with their weights) in local ids, its
    /// ghosts, and the maps between local and global ids. Built in parallel; the same on any
    /// number of threads.
    ///
    /// # Panics
    ///
    /// If the partitioning is not of `graph`'s node count.
    pub fn parts(&self, graph: &Graph) -> Vec<Part> {
        self.parts_holding(graph, PartContents { in_edges: false, weights: true })
    }

    /// [`Partitioning::parts`], each part also holding its owned nodes' in-edges (a reverse CSR
    /// in local ids; ghosts' rows empty), for programs that read in-neighbours. The sources of
    /// those edges that other parts own are ghosts too. On a graph known to be symmetric the
    /// in-edges are the out-edges: nothing more is stored.
    ///
    /// # Panics
    ///
    /// If the partitioning is not of `graph`'s node count.
    pub fn parts_with_in_edges(&self, graph: &Graph) -> Vec<Part> {
        self.parts_holding(graph, PartContents { in_edges: true, weights: true })
    }

    /// Each part's subgraph holding what `contents` asks for: its in-edges too
    /// ([`Partitioning::parts_with_in_edges`]), its edges' weights (where the graph has them),
    /// or neither (a program that reads no weights needs no copy of them, a word per edge).
    ///
    /// # Panics
    ///
    /// If the partitioning is not of `graph`'s node count.
    pub fn parts_holding(&self, graph: &Graph, contents: PartContents) -> Vec<Part> {
        let lookup = if self.owner.par_windows(2).all(|w| w[0] <= w[1]) {
            // Each part a contiguous range of ids (ordered and range partitionings).
            Lookup::Ranges
        } else if self.parts <= 256 {
            Lookup::Bytes
        } else {
            Lookup::Words
        };
        self.build_parts_by(graph, contents, lookup)
    }

    /// [`Partitioning::parts_holding`], finding a node's part and local id as `lookup` says.
    fn build_parts_by(&self, graph: &Graph, contents: PartContents, lookup: Lookup) -> Vec<Part> {
        self.check_graph(graph);
        let built;
        let reverse = match (contents.in_edges, graph.reverse()) {
            (false, _) => InEdges::None,
            _ if graph.facts().symmetric || graph.reverse_is_out() => InEdges::Out,
            (true, Some(csr)) => InEdges::Of(csr),
            (true, None) => {
                built = graph.out().transpose_structure();
                InEdges::Of(&built)
            }
        };
        let Grouping { order, starts, rank } = self.grouping();
        let ids = Arc::new(match lookup {
            Lookup::Ranges => GlobalIds::Ranges { starts: starts.iter().map(|&s| s as NodeId).collect() },
            Lookup::Bytes => GlobalIds::Bytes { owner: self.owner.par_iter().map(|&p| p as u8).collect(), rank },
            Lookup::Words => GlobalIds::Packed(
                self.owner.par_iter().zip(rank).map(|(&p, r)| (u64::from(p) << 32) | u64::from(r)).collect(),
            ),
        });
        (0..self.parts)
            .into_par_iter()
            .map(|p| {
                let owned = order[starts[p as usize]..starts[p as usize + 1]].to_vec();
                build_part(graph.out(), reverse, contents.weights, p, owned, &ids)
            })
            .collect()
    }

    /// Writes the partition file: line `i` holds node `i`'s part (METIS's partition file
    /// format; `-` is standard output), gzip-compressed if the name ends in `.gz`.
    pub fn write(&self, path: &Path) -> Result<()> {
        const BLOCK: usize = 1 << 16;
        let pieces: Vec<Vec<u8>> = self
            .owner
            .par_chunks(BLOCK)
            .map(|block| {
                let mut text = Vec::with_capacity(block.len() * 3);
                for &p in block {
                    writeln!(text, "{p}").expect("writing to memory");
                }
                text
            })
            .collect();
        crate::io::write_text_file(path, |out| pieces.iter().try_for_each(|piece| out.write_all(piece)))
    }

    /// Reads a partition file (one part per line, line `i` for node `i`, as [`Partitioning::write`]
    /// and METIS write it) for a graph of `nodes` nodes, gzip-compressed or not. The part count
    /// is `parts` when given (every part must be below it), else one more than the largest part
    /// named.
    pub fn read(path: &Path, nodes: u32, parts: Option<u32>) -> Result<Partitioning> {
        let mut bytes = std::fs::read(path).map_err(|e| GraphError::io(path, e))?;
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut text = Vec::with_capacity(bytes.len() * 4);
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut text).map_err(|e| {
                GraphError::Malformed {
                    path: path.to_path_buf(),
                    location: Location::Whole,
                    message: format!("gzip data is corrupt or truncated: {e}"),
                }
            })?;
            bytes = text;
        }
        Self::parse(&bytes, nodes, parts).map_err(|e| e.in_file(path))
    }

    /// [`Partitioning::read`] of bytes already in memory.
    pub fn parse(bytes: &[u8], nodes: u32, parts: Option<u32>) -> std::result::Result<Partitioning, ParseError> {
        let mut owner = Vec::with_capacity(nodes as usize);
        let mut lines = bytes.split(|&b| b == b'\n').enumerate().peekable();
        while let Some((i, line)) = lines.next() {
            let line_no = Location::Line(i as u64 + 1);
            let text = line.strip_suffix(b"\r").unwrap_or(line).trim_ascii();
            if text.is_empty() {
                if lines.peek().is_none() {
                    break;
                }
                return Err(ParseError::new(line_no, "an empty line: every line holds the part of one node"));
            }
            if owner.len() == nodes as usize {
                return Err(ParseError::new(line_no, format!("more lines than the graph's {nodes} nodes")));
            }
            let part = std::str::from_utf8(text).ok().and_then(|t| t.parse::<u32>().ok()).ok_or_else(|| {
                ParseError::new(line_no, format!("expected a part number, found `{}`", String::from_utf8_lossy(text)))
            })?;
            if let Some(k) = parts
                && part >= k
            {
                return Err(ParseError::new(line_no, format!("part {part}, but there are only {k} parts")));
            }
            owner.push(part);
        }
        if owner.len() != nodes as usize {
            return Err(ParseError::new(
                Location::Whole,
                format!("{} lines for a graph of {nodes} nodes: there must be one per node", owner.len()),
            ));
        }
        let parts = parts.unwrap_or_else(|| owner.iter().max().map_or(1, |&p| p + 1));
        Ok(Partitioning { parts, owner })
    }
}

/// How a split finds each edge's target's part and local id, the look-up every edge makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lookup {
    /// By arithmetic, where every part is a contiguous range of ids in part order: no memory
    /// read per edge (R-MAT of 2^21 nodes into two ordered parts: 247-250 ms against 569-718 by
    /// words, on 2 cores).
    Ranges,
    /// A byte per node for its part, up to 256 parts (most edges of a random split fail the
    /// test, which then misses the cache far less often than on a word per node: the same
    /// graph into two random parts, 725-763 ms against 1,030-1,090).
    Bytes,
    /// A word per node: its part and local id.
    Words,
}

/// Every node's part and its position among that part's nodes, as a [`Lookup`] finds them;
/// shared by all the parts.
#[derive(Debug)]
enum GlobalIds {
    /// Part `p` owns ids `starts[p]..starts[p + 1]` (the local id is the offset).
    Ranges { starts: Vec<NodeId> },
    /// By global id: its part (up to 256 parts) and its local id there.
    Bytes { owner: Vec<u8>, rank: Vec<u32> },
    /// By global id: its part (high word) and its local id there (low word).
    Packed(Vec<u64>),
}

impl GlobalIds {
    /// Node `u`'s local id in part `part`, if that part owns it.
    #[inline]
    fn local_in(&self, part: u32, u: NodeId) -> Option<u32> {
        match self {
            GlobalIds::Ranges { starts } => {
                let first = starts[part as usize];
                (u >= first && u < starts[part as usize + 1]).then(|| u - first)
            }
            GlobalIds::Bytes { owner, rank } => (u32::from(owner[u as usize]) == part).then(|| rank[u as usize]),
            GlobalIds::Packed(packed) => {
                let slot = packed[u as usize];
                ((slot >> 32) as u32 == part).then_some(slot as u32)
            }
        }
    }

    /// Whether part `part` owns node `u`.
    #[inline]
    fn owns(&self, part: u32, u: NodeId) -> bool {
        self.local_in(part, u).is_some()
    }
}

/// What a part holds besides its owned nodes' out-edges ([`Partitioning::parts_holding`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartContents {
    /// Its owned nodes' in-edges too.
    pub in_edges: bool,
    /// Its edges' weights, where the graph has them.
    pub weights: bool,
}

/// One part of a partitioned graph: its owned nodes with their out-edges (and in-edges, where
/// built with them), and the ghosts those edges reach, in local ids.
///
/// Local ids `0..num_owned()` are the owned nodes in increasing global id; `num_owned()..` are
/// the ghosts, in increasing global id. The local CSR has a row for every local node; ghosts'
/// rows are empty. Each owned node's edges are in the graph's order, with the graph's weights.
#[derive(Debug, Clone)]
pub struct Part {
    id: u32,
    csr: Csr,
    /// The owned nodes' in-edges, where the part was built with them.
    reverse: PartReverse,
    owned: Vec<NodeId>,
    ghosts: Vec<NodeId>,
    ids: Arc<GlobalIds>,
}

impl Part {
    /// The part's number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The part's edges in local ids; ghosts' rows are empty.
    pub fn csr(&self) -> &Csr {
        &self.csr
    }

    /// Moves the part's local CSR out (for a graph that runs on it), leaving an empty one:
    /// afterwards [`Part::csr`], [`Part::num_local`] and [`Part::num_edges`] describe an empty
    /// graph, while the ids and ghosts stay.
    pub fn take_csr(&mut self) -> Csr {
        let empty = Csr::from_parts(vec![0], Vec::new(), None).expect("an empty CSR is valid");
        std::mem::replace(&mut self.csr, empty)
    }

    /// The part's in-edges in local ids (owned nodes' rows; ghosts' rows empty), if it was
    /// built with them ([`Partitioning::parts_with_in_edges`]).
    pub fn reverse(&self) -> Option<&Csr> {
        match &self.reverse {
            PartReverse::None => None,
            PartReverse::Out => Some(&self.csr),
            PartReverse::Built(csr) => Some(csr),
        }
    }

    /// Moves the part's edges out as a graph to run on (with its in-edges, where the part has
    /// them), leaving it empty as [`Part::take_csr`] does.
    pub fn take_graph(&mut self) -> Graph {
        let reverse = std::mem::replace(&mut self.reverse, PartReverse::None);
        let mut graph = Graph::from_csr(self.take_csr());
        match reverse {
            PartReverse::None => {}
            PartReverse::Out => graph.set_reverse_to_out(),
            PartReverse::Built(csr) => graph.set_reverse(Some(csr), None),
        }
        graph
    }

    /// The global ids of the owned nodes (local id = position).
    pub fn owned(&self) -> &[NodeId] {
        &self.owned
    }

    /// The global ids of the ghosts (local id = `num_owned()` + position).
    pub fn ghosts(&self) -> &[NodeId] {
        &self.ghosts
    }

    pub fn num_owned(&self) -> u32 {
        self.owned.len() as u32
    }

    pub fn num_ghosts(&self) -> u32 {
        self.ghosts.len() as u32
    }

    /// Owned nodes and ghosts.
    pub fn num_local(&self) -> u32 {
        self.csr.num_nodes()
    }

    /// The part's out-edges.
    pub fn num_edges(&self) -> u64 {
        self.csr.num_edges()
    }

    /// Whether the part owns global node `u`.
    pub fn owns(&self, u: NodeId) -> bool {
        self.ids.owns(self.id, u)
    }

    /// The global id of local node `local`.
    ///
    /// # Panics
    ///
    /// If `local` is not below [`Part::num_local`].
    pub fn global(&self, local: u32) -> NodeId {
        let local = local as usize;
        if local < self.owned.len() { self.owned[local] } else { self.ghosts[local - self.owned.len()] }
    }

    /// The local id of global node `u`: its owned id, its ghost id, or `None` when the part
    /// neither owns it nor reaches it.
    pub fn local(&self, u: NodeId) -> Option<u32> {
        self.ids
            .local_in(self.id, u)
            .or_else(|| self.ghosts.binary_search(&u).ok().map(|i| (self.owned.len() + i) as u32))
    }

    /// The global id of every local node (owned, then ghosts).
    pub fn local_to_global(&self) -> Vec<NodeId> {
        let mut ids = Vec::with_capacity(self.owned.len() + self.ghosts.len());
        ids.extend_from_slice(&self.owned);
        ids.extend_from_slice(&self.ghosts);
        ids
    }
}

/// Offsets `[0, d0, d0 + d1, ...]` of `len` rows of degree `degree(i)`, summed in parallel blocks.
fn prefix_offsets(len: usize, degree: impl Fn(usize) -> u64 + Sync) -> Vec<u64> {
    const BLOCK: usize = 1 << 14;
    let mut offsets = vec![0u64; len + 1];
    offsets[1..].par_chunks_mut(BLOCK).enumerate().for_each(|(b, block)| {
        let mut sum = 0;
        for (i, slot) in block.iter_mut().enumerate() {
            sum += degree(b * BLOCK + i);
            *slot = sum;
        }
    });
    let block_sums: Vec<u64> = offsets[1..].chunks(BLOCK).map(|block| *block.last().unwrap()).collect();
    let mut base = Vec::with_capacity(block_sums.len());
    let mut sum = 0;
    for s in block_sums {
        base.push(sum);
        sum += s;
    }
    offsets[1..].par_chunks_mut(BLOCK).zip(base).for_each(|(block, base)| block.iter_mut().for_each(|o| *o += base));
    offsets
}

/// Where a part's ghosts are found among its local ids.
enum GhostIndex {
    /// The ghosts' global ids, sorted: a binary search (for parts whose edges are few next to
    /// the node count).
    Sorted,
    /// A bit per node of the graph, set for the ghosts, with the number of bits set before
    /// each word: the ghost's rank in two reads.
    Bitmap { words: Vec<u64>, before: Vec<u32> },
}

impl GhostIndex {
    /// The position of ghost `v` among the ghosts.
    #[inline]
    fn rank(&self, ghosts: &[NodeId], v: NodeId) -> u32 {
        match self {
            GhostIndex::Sorted => ghosts.binary_search(&v).expect("every remote target is a ghost") as u32,
            GhostIndex::Bitmap { words, before } => {
                let (w, bit) = (v as usize / 64, v % 64);
                before[w] + (words[w] & ((1u64 << bit) - 1)).count_ones()
            }
        }
    }
}

/// The targets of part `id`'s edges (and the sources of its in-edges, where `reverse` is given)
/// that other parts own, each once, sorted, and the index to find them by: a bitmap over the graph's nodes when the part has enough edges to pay for
/// one (set by every edge, then read in order), else the targets gathered and sorted.
fn find_ghosts(
    csr: &Csr,
    reverse: Option<&Csr>,
    id: u32,
    owned: &[NodeId],
    bounds: &[usize],
    edges: u64,
    ids: &GlobalIds,
) -> (Vec<NodeId>, GhostIndex) {
    let n = csr.num_nodes() as usize;
    let remote = |u: NodeId| {
        let sources = reverse.map_or(&[][..], |r| r.neighbors(u));
        csr.neighbors(u).iter().chain(sources).copied().filter(move |&v| !ids.owns(id, v))
    };
    if edges < (n / 8) as u64 {
        let mut ghosts: Vec<NodeId> = bounds
            .par_windows(2)
            .flat_map_iter(|w| {
                let mut found: Vec<NodeId> = owned[w[0]..w[1]].iter().flat_map(|&u| remote(u)).collect();
                found.sort_unstable();
                found.dedup();
                found
            })
            .collect();
        ghosts.par_sort_unstable();
        ghosts.dedup();
        return (ghosts, GhostIndex::Sorted);
    }
    const BLOCK: usize = 1 << 12;
    let marks: Vec<AtomicU64> = (0..n.div_ceil(64)).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    bounds.par_windows(2).for_each(|w| {
        for &u in &owned[w[0]..w[1]] {
            for v in remote(u) {
                let (word, bit) = (&marks[v as usize / 64], 1u64 << (v % 64));
                // Read first: a hub's word is set once, not fought over by every thread.
                if word.load(Ordering::Relaxed) & bit == 0 {
                    word.fetch_or(bit, Ordering::Relaxed);
                }
            }
        }
    });
    let words: Vec<u64> = marks.into_par_iter().map(AtomicU64::into_inner).collect();
    let block_counts: Vec<u32> =
        words.par_chunks(BLOCK).map(|block| block.iter().map(|w| w.count_ones()).sum()).collect();
    let mut block_starts = Vec::with_capacity(block_counts.len());
    let mut total = 0u32;
    for c in block_counts {
        block_starts.push(total);
        total += c;
    }
    let mut before = vec![0u32; words.len()];
    let mut ghosts = vec![0 as NodeId; total as usize];
    let writer = DisjointWriter::new(&mut ghosts);
    words.par_chunks(BLOCK).zip(before.par_chunks_mut(BLOCK)).zip(block_starts).enumerate().for_each(
        |(b, ((block, before), mut at))| {
            for (i, (&word, slot)) in block.iter().zip(before).enumerate() {
                *slot = at;
                let mut bits = word;
                while bits != 0 {
                    let v = (b * BLOCK + i) * 64 + bits.trailing_zeros() as usize;
                    // SAFETY: each block writes its own range of positions, from its start on.
                    unsafe { writer.write(at as usize, v as NodeId) };
                    at += 1;
                    bits &= bits - 1;
                }
            }
        },
    );
    (ghosts, GhostIndex::Bitmap { words, before })
}

/// Where a part's in-edges come from while the parts are built.
#[derive(Clone, Copy)]
enum InEdges<'g> {
    None,
    /// The graph is symmetric: a node's in-edges are its out-edges.
    Out,
    /// The graph's reverse CSR.
    Of(&'g Csr),
}

/// A part's in-edges.
#[derive(Debug, Clone)]
enum PartReverse {
    None,
    /// The local out-CSR itself (the graph is symmetric).
    Out,
    Built(Csr),
}

fn build_part(
    csr: &Csr,
    in_edges: InEdges<'_>,
    with_weights: bool,
    id: u32,
    owned: Vec<NodeId>,
    ids: &Arc<GlobalIds>,
) -> Part {
    let n_owned = owned.len();
    let owned_offsets = prefix_offsets(n_owned, |i| csr.degree(owned[i]));
    let bounds = node_groups(&owned_offsets);
    let m = owned_offsets[n_owned];
    let reverse_rows = match in_edges {
        InEdges::Of(reverse) => Some(reverse),
        InEdges::None | InEdges::Out => None,
    };
    let in_edge_count: u64 = reverse_rows.map_or(0, |r| owned.par_iter().map(|&u| r.degree(u)).sum());
    let (ghosts, index) = find_ghosts(csr, reverse_rows, id, &owned, &bounds, m + in_edge_count, ids);
    let n_local = n_owned + ghosts.len();
    let local_id = |v: NodeId| match ids.local_in(id, v) {
        Some(local) => local,
        None => n_owned as NodeId + index.rank(&ghosts, v),
    };
    let mut offsets = owned_offsets;
    offsets.resize(n_local + 1, m);
    let targets = local_rows(csr, &owned, &bounds, &offsets, local_id);
    let weights = csr.weight_words().filter(|_| with_weights).map(|words| {
        let edge_bounds: Vec<usize> = bounds.iter().map(|&b| offsets[b] as usize).collect();
        let mut local = vec![0u32; m as usize];
        split_by_bounds(&mut local, &edge_bounds).into_par_iter().enumerate().for_each(|(g, piece)| {
            let mut at = 0;
            for &u in &owned[bounds[g]..bounds[g + 1]] {
                let range = csr.edge_range(u);
                piece[at..at + range.len()].copy_from_slice(&words[range.clone()]);
                at += range.len();
            }
        });
        local
    });
    let local = Csr::from_parts_unchecked(offsets, targets, weights).with_real_weights(csr.has_real_weights());
    let reverse = match in_edges {
        InEdges::None => PartReverse::None,
        InEdges::Out => PartReverse::Out,
        InEdges::Of(reverse) => {
            let mut offsets = prefix_offsets(n_owned, |i| reverse.degree(owned[i]));
            offsets.resize(n_local + 1, in_edge_count);
            let bounds = node_groups(&offsets[..=n_owned]);
            let sources = local_rows(reverse, &owned, &bounds, &offsets, local_id);
            PartReverse::Built(Csr::from_parts_unchecked(offsets, sources, None))
        }
    };
    Part { id, csr: local, reverse, owned, ghosts, ids: Arc::clone(ids) }
}

/// The rows of `rows` for the owned nodes, each neighbour in local ids (`local_id`), laid out by
/// `offsets` (the local CSR's, whose owned rows `bounds` groups for the threads).
fn local_rows(
    rows: &Csr,
    owned: &[NodeId],
    bounds: &[usize],
    offsets: &[u64],
    local_id: impl Fn(NodeId) -> NodeId + Sync,
) -> Vec<NodeId> {
    let edge_bounds: Vec<usize> = bounds.iter().map(|&b| offsets[b] as usize).collect();
    let mut targets = vec![0 as NodeId; offsets[owned.len()] as usize];
    split_by_bounds(&mut targets, &edge_bounds).into_par_iter().enumerate().for_each(|(g, piece)| {
        let mut at = 0;
        for &u in &owned[bounds[g]..bounds[g + 1]] {
            for &v in rows.neighbors(u) {
                piece[at] = local_id(v);
                at += 1;
            }
        }
    });
    targets
}

#[cfg(test)]
mod tests {
    #[test]
    fn empty_parts_get_a_node_of_the_largest() {
        let mut owner = vec![1, 1, 1];
        super::fill_empty_parts(&mut owner, 3);
        let mut sizes = [0; 3];
        for &p in &owner {
            sizes[p as usize] += 1;
        }
        assert_eq!(sizes, [1, 1, 1], "{owner:?}");
        let mut full = vec![0, 1, 2, 0];
        super::fill_empty_parts(&mut full, 3);
        assert_eq!(full, vec![0, 1, 2, 0], "nothing moves where no part is empty");
    }

    use super::*;
    use crate::generate::{GenOptions, Generator, generate};

    /// Parts come out the same whichever way a node's part and local id are found (by
    /// arithmetic where parts are ranges of ids, by a byte or a word per node), with and
    /// without in-edges.
    #[test]
    fn parts_are_the_same_by_every_lookup() {
        let graph = generate(&Generator::graph500(11), &GenOptions::default(), false, &crate::NoProgress).unwrap();
        for method in [Method::Ordered, Method::Ranges, Method::Random, Method::Degree] {
            for k in [1, 2, 3, 7] {
                let partitioning = partition(&graph, k, method, 5).unwrap();
                let ranges = matches!(method, Method::Ordered | Method::Ranges) || k == 1;
                let lookups: &[Lookup] = if ranges { &[Lookup::Ranges, Lookup::Bytes] } else { &[Lookup::Bytes] };
                for (&lookup, in_edges) in lookups.iter().flat_map(|l| [(l, false), (l, true)]) {
                    let contents = PartContents { in_edges, weights: true };
                    let by_lookup = partitioning.build_parts_by(&graph, contents, lookup);
                    let by_words = partitioning.build_parts_by(&graph, contents, Lookup::Words);
                    for (a, b) in by_lookup.iter().zip(&by_words) {
                        assert_eq!(a.owned(), b.owned(), "{method:?}, {k} parts, {lookup:?}");
                        assert_eq!(a.ghosts(), b.ghosts(), "{method:?}, {k} parts");
                        assert_eq!(a.csr().offsets(), b.csr().offsets());
                        assert_eq!(a.csr().targets(), b.csr().targets());
                        assert_eq!(a.reverse().map(Csr::targets), b.reverse().map(Csr::targets));
                        for u in (0..graph.num_nodes()).step_by(37) {
                            assert_eq!(a.local(u), b.local(u), "{method:?}, {k} parts, node {u}");
                            assert_eq!(a.owns(u), b.owns(u));
                        }
                    }
                }
            }
        }
    }

    /// Both ghost indexes find the same ghosts and rank them alike, whichever a part's size picks.
    #[test]
    fn both_ghost_indexes_agree() {
        let graph = generate(&Generator::graph500(11), &GenOptions::default(), false, &crate::NoProgress).unwrap();
        let csr = graph.out();
        for method in [Method::Random, Method::Ranges, Method::Degree] {
            for k in [2, 3, 7, 300] {
                let partitioning = partition(&graph, k, method, 5).unwrap();
                let Grouping { order, starts, rank } = partitioning.grouping();
                let ids = GlobalIds::Packed(
                    partitioning.owner.iter().zip(rank).map(|(&p, r)| (u64::from(p) << 32) | u64::from(r)).collect(),
                );
                for p in 0..k {
                    let owned = &order[starts[p as usize]..starts[p as usize + 1]];
                    let offsets = prefix_offsets(owned.len(), |i| csr.degree(owned[i]));
                    let bounds = node_groups(&offsets);
                    let (sorted, by_search) = find_ghosts(csr, None, p, owned, &bounds, 0, &ids);
                    let (mapped, by_bitmap) = find_ghosts(csr, None, p, owned, &bounds, u64::MAX, &ids);
                    assert!(matches!(by_search, GhostIndex::Sorted) && matches!(by_bitmap, GhostIndex::Bitmap { .. }));
                    assert_eq!(sorted, mapped);
                    for (i, &v) in sorted.iter().enumerate() {
                        assert_eq!(by_search.rank(&sorted, v), i as u32);
                        assert_eq!(by_bitmap.rank(&mapped, v), i as u32);
                    }
                }
            }
        }
    }
}
