//! Synthetic graph generators.
//!
//! Four models, chosen to cover the shapes that stress graph algorithms differently:
//!
//! * [`Generator::Rmat`] ([`rmat`]): the recursive matrix (Kronecker) model of Graph500. Each edge
//!   picks its cell of the `2^scale x 2^scale` adjacency matrix by descending `scale` times into
//!   one of four quadrants with probabilities `a`, `b`, `c` and `d = 1 - a - b - c`. The result is
//!   a small-world graph with a heavily skewed (power-law-like) degree distribution. With
//!   `permute`, node ids are randomly relabelled afterwards, as Graph500 does, so that high-degree
//!   nodes are not clustered at low ids.
//! * [`Generator::Uniform`] ([`uniform`]): Erdős–Rényi-like; `nodes * average_degree` directed
//!   edges whose endpoints are independent and uniform. Low diameter, no skew.
//! * [`Generator::Grid`] ([`grid`]): the 4-neighbour `rows x cols` grid, every edge in both
//!   directions. Regular, with diameter `rows + cols - 2`.
//! * [`Generator::Road`] ([`road`]): a planar, road-network-like graph with average degree about
//!   2.6, diameter about `2 * sqrt(n)` hops and Euclidean integer weights; a stand-in for the
//!   DIMACS road networks.
//!
//! Every generator is deterministic in its seed and runs in parallel with the same result on any
//! number of threads: the work is cut into fixed-size blocks, each drawing from its own random
//! stream derived from `(seed, generator, block)`, never from a shared one.
//!
//! Generators return a raw [`EdgeList`] (R-MAT and uniform may contain self-loops and
//! duplicates); [`generate`] also builds the graph.

pub mod grid;
pub mod rmat;
pub mod road;
pub mod uniform;

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::builder::{BuildOptions, EdgeList, build};
use crate::error::{GraphError, Result};
use crate::graph::{Graph, NodeId, Weight};
use crate::par::split_by_lengths;
use crate::progress::Progress;

/// A graph model with its parameters; see the module documentation for each model.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// `2^scale` nodes, `edge_factor * 2^scale` directed edges.
    Rmat { scale: u32, edge_factor: u32, a: f64, b: f64, c: f64, permute: bool },
    /// `nodes * average_degree` directed edges with uniform random endpoints.
    Uniform { nodes: u32, average_degree: u32 },
    /// A 4-neighbour 2-D grid, each undirected edge in both directions.
    Grid { rows: u32, cols: u32 },
    /// A planar road-like network of `nodes` nodes.
    Road { nodes: u32 },
}

/// Options shared by every generator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenOptions {
    /// The same seed always gives the same graph.
    pub seed: u64,
    /// Weights uniform in `[1, W]` when `Some(W)`; unweighted when `None`. The road generator
    /// ignores this: its weights are always the Euclidean lengths of its edges.
    pub max_weight: Option<u32>,
}

impl Generator {
    /// Graph500's R-MAT quadrant probabilities.
    pub const GRAPH500_A: f64 = 0.57;
    pub const GRAPH500_B: f64 = 0.19;
    pub const GRAPH500_C: f64 = 0.19;
    /// Graph500's edges per node.
    pub const GRAPH500_EDGE_FACTOR: u32 = 16;

    /// R-MAT with the Graph500 parameters (edge factor 16, a/b/c = 0.57/0.19/0.19, permuted ids).
    pub fn graph500(scale: u32) -> Generator {
        Generator::Rmat {
            scale,
            edge_factor: Self::GRAPH500_EDGE_FACTOR,
            a: Self::GRAPH500_A,
            b: Self::GRAPH500_B,
            c: Self::GRAPH500_C,
            permute: true,
        }
    }

    /// Generates the raw edges.
    pub fn edges(&self, options: &GenOptions, progress: &dyn Progress) -> Result<EdgeList> {
        if options.max_weight == Some(0) && !matches!(self, Generator::Road { .. }) {
            return Err(GraphError::invalid("the maximum weight must be at least 1"));
        }
        match *self {
            Generator::Rmat { scale, edge_factor, a, b, c, permute } => {
                rmat::edges(&rmat::Params { scale, edge_factor, a, b, c, permute }, options, progress)
            }
            Generator::Uniform { nodes, average_degree } => uniform::edges(nodes, average_degree, options, progress),
            Generator::Grid { rows, cols } => grid::edges(rows, cols, options, progress),
            Generator::Road { nodes } => road::edges(nodes, options.seed, progress),
        }
    }

    /// Whether the output is already symmetric, each direction of an edge with the same weight.
    pub fn is_undirected(&self) -> bool {
        matches!(self, Generator::Grid { .. } | Generator::Road { .. })
    }

    /// A short name for the model, as the CLI spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Rmat { .. } => "rmat",
            Generator::Uniform { .. } => "random",
            Generator::Grid { .. } => "grid",
            Generator::Road { .. } => "road",
        }
    }
}

/// Generates and builds a simple graph: R-MAT and uniform with [`BuildOptions::SIMPLE`], or
/// [`BuildOptions::UNDIRECTED`] when `undirected` (duplicates keep their lightest weight, the same
/// in both directions); grid and road with [`BuildOptions::SIMPLE`], as they are symmetric
/// already. Road graphs carry their node coordinates as `f64` node properties `x` and `y`, in the
/// units of the weights.
pub fn generate(
    generator: &Generator,
    options: &GenOptions,
    undirected: bool,
    progress: &dyn Progress,
) -> Result<Graph> {
    let edges = generator.edges(options, progress)?;
    let build_options =
        if undirected && !generator.is_undirected() { BuildOptions::UNDIRECTED } else { BuildOptions::SIMPLE };
    progress.begin("building", None);
    let mut graph = build(edges, &build_options)?;
    progress.finish();
    if generator.is_undirected() {
        // Both directions of every edge, with the same weight (see `is_undirected`).
        graph = graph.with_more_facts(crate::facts::Facts { symmetric: true, ..crate::facts::Facts::NONE });
    }
    if let Generator::Road { nodes } = *generator {
        let (x, y) = road::coordinates(nodes, options.seed);
        graph.node_props.insert_values("x", x)?;
        graph.node_props.insert_values("y", y)?;
    }
    Ok(graph)
}

/// Generated edge lists above this size are refused rather than left to exhaust memory.
const MAX_EDGE_LIST_BYTES: u64 = 64 << 30;

/// Refuses edge lists that would need more than [`MAX_EDGE_LIST_BYTES`].
fn check_size(what: &str, edges: u64, weighted: bool) -> Result<()> {
    let per_edge = if weighted { 12 } else { 8 };
    match edges.checked_mul(per_edge) {
        Some(bytes) if bytes <= MAX_EDGE_LIST_BYTES => Ok(()),
        _ => Err(GraphError::invalid(format!(
            "{what} would have {edges} edges, needing more than the {} GiB a generated edge list may take",
            MAX_EDGE_LIST_BYTES >> 30
        ))),
    }
}

/// Edges per random stream: large enough to amortise seeding, small enough to balance work.
const BLOCK_EDGES: usize = 1 << 16;

/// Independent random streams, one per generator and purpose.
#[derive(Clone, Copy)]
#[repr(u64)]
pub(crate) enum Stream {
    Rmat = 1,
    RmatPermutation = 2,
    Uniform = 3,
    Grid = 4,
    Road = 5,
    Shuffle = 6,
}

/// A strong 64-bit mixer (SplitMix64's finaliser): nearby inputs give unrelated outputs.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random 64-bit value determined by `(seed, stream, index)` alone.
#[inline]
pub(crate) fn hash3(seed: u64, stream: Stream, index: u64) -> u64 {
    mix64(mix64(seed ^ mix64(stream as u64)) ^ index)
}

/// The random stream of one block of work.
pub(crate) fn block_rng(seed: u64, stream: Stream, block: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(hash3(seed, stream, block))
}

/// A value uniform in `[0, 1)` from 64 random bits.
#[inline]
fn unit_f64(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A weight uniform in `[1, max]` from 64 random bits (bias below `max / 2^64`).
#[inline]
fn weight_from_bits(bits: u64, max: Weight) -> Weight {
    ((u128::from(bits) * u128::from(max)) >> 64) as Weight + 1
}

/// Concatenates per-block edge lists in block order, copying in parallel.
fn concat(num_nodes: u32, weighted: bool, blocks: Vec<EdgeList>) -> EdgeList {
    let mut starts = Vec::with_capacity(blocks.len() + 1);
    starts.push(0usize);
    for block in &blocks {
        starts.push(starts.last().unwrap() + block.len());
    }
    let total = *starts.last().unwrap();
    let mut sources = vec![0 as NodeId; total];
    let mut targets = vec![0 as NodeId; total];
    let mut weights = vec![0 as Weight; if weighted { total } else { 0 }];
    let source_pieces = split_by_lengths(&mut sources, blocks.iter().map(EdgeList::len));
    let target_pieces = split_by_lengths(&mut targets, blocks.iter().map(EdgeList::len));
    let weight_pieces = split_by_lengths(&mut weights, blocks.iter().map(|b| if weighted { b.len() } else { 0 }));
    blocks.into_par_iter().zip(source_pieces).zip(target_pieces).zip(weight_pieces).for_each(
        |(((block, sources), targets), weights)| {
            sources.copy_from_slice(&block.sources);
            targets.copy_from_slice(&block.targets);
            if let Some(w) = &block.weights {
                weights.copy_from_slice(w);
            }
        },
    );
    EdgeList { num_nodes, sources, targets, weights: weighted.then_some(weights), real: false }
}

/// Draws `m` edges in parallel blocks of [`BLOCK_EDGES`], each block from its own random stream
/// so that the result does not depend on the thread count. `draw` fills one block's endpoints;
/// weights, when asked for, come after them from the same stream.
fn draw_edges(
    num_nodes: u32,
    m: usize,
    stream: Stream,
    options: &GenOptions,
    progress: &dyn Progress,
    draw: impl Fn(&mut Xoshiro256PlusPlus, &mut [NodeId], &mut [NodeId]) + Sync,
) -> EdgeList {
    let mut sources = vec![0 as NodeId; m];
    let mut targets = vec![0 as NodeId; m];
    let mut weights = options.max_weight.map(|_| vec![0 as Weight; m]);
    let work = |block: usize, sources: &mut [NodeId], targets: &mut [NodeId], weights: Option<&mut [Weight]>| {
        let mut rng = block_rng(options.seed, stream, block as u64);
        draw(&mut rng, sources, targets);
        if let (Some(weights), Some(max)) = (weights, options.max_weight) {
            for w in weights.iter_mut() {
                *w = rng.random_range(1..=max);
            }
        }
        progress.advance(sources.len() as u64);
    };
    let blocks = sources.par_chunks_mut(BLOCK_EDGES).zip(targets.par_chunks_mut(BLOCK_EDGES)).enumerate();
    match &mut weights {
        Some(w) => blocks.zip(w.par_chunks_mut(BLOCK_EDGES)).for_each(|((b, (s, t)), w)| work(b, s, t, Some(w))),
        None => blocks.for_each(|(b, (s, t))| work(b, s, t, None)),
    }
    progress.finish();
    EdgeList { num_nodes, sources, targets, weights, real: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    fn all_generators() -> Vec<Generator> {
        vec![
            Generator::graph500(12),
            Generator::Rmat { scale: 11, edge_factor: 5, a: 0.45, b: 0.15, c: 0.15, permute: false },
            Generator::Uniform { nodes: 3000, average_degree: 50 },
            Generator::Grid { rows: 300, cols: 457 },
            Generator::Road { nodes: 100_003 },
        ]
    }

    #[test]
    fn generate_same_on_any_thread_count_and_depends_on_seed() {
        for generator in all_generators() {
            for max_weight in [None, Some(1000)] {
                let options = GenOptions { seed: 42, max_weight };
                let one = in_pool(1, || generator.edges(&options, &NoProgress).unwrap());
                let five = in_pool(5, || generator.edges(&options, &NoProgress).unwrap());
                assert_eq!(one, five, "{generator:?}");
                let again = generator.edges(&options, &NoProgress).unwrap();
                assert_eq!(one, again, "{generator:?}");
                if !matches!(generator, Generator::Grid { .. }) || max_weight.is_some() {
                    let other = generator.edges(&GenOptions { seed: 43, max_weight }, &NoProgress).unwrap();
                    assert_ne!(one, other, "{generator:?}");
                }
            }
        }
    }

    #[test]
    fn weighted_undirected_builds_are_symmetric() {
        for generator in all_generators() {
            let options = GenOptions { seed: 7, max_weight: Some(100) };
            let graph = generate(&generator, &options, true, &NoProgress).unwrap();
            assert!(graph.is_weighted());
            // What the generator claims, and what the edges show with nothing known of them.
            assert!(graph.facts().is_undirected_simple(), "{generator:?}");
            assert!(Graph::from_csr(graph.out().clone()).is_symmetric(), "{generator:?}");
            assert!(crate::facts::scan(graph.out()).is_simple_sorted(), "{generator:?}");
            let weights = graph.out().weights().unwrap();
            if !matches!(generator, Generator::Road { .. }) {
                assert!(weights.iter().all(|&w| (1..=100).contains(&w)), "{generator:?}");
            }
        }
    }

    #[test]
    fn names_and_directedness() {
        let names: Vec<_> = all_generators().iter().map(|g| (g.name(), g.is_undirected())).collect();
        assert_eq!(names, [("rmat", false), ("rmat", false), ("random", false), ("grid", true), ("road", true)]);
    }

    #[test]
    fn zero_max_weight_is_refused() {
        let options = GenOptions { seed: 1, max_weight: Some(0) };
        let err = Generator::Grid { rows: 2, cols: 2 }.edges(&options, &NoProgress).unwrap_err();
        assert!(err.to_string().contains("maximum weight"), "{err}");
        // Road weights are lengths, so the option does not apply.
        assert!(Generator::Road { nodes: 10 }.edges(&options, &NoProgress).is_ok());
    }

    #[test]
    fn weights_cover_their_range() {
        let mut seen = [false; 5];
        for i in 0..1000 {
            let w = weight_from_bits(mix64(i), 5);
            seen[w as usize - 1] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(weight_from_bits(u64::MAX, u32::MAX), u32::MAX);
        assert_eq!(weight_from_bits(0, 1), 1);
    }
}
