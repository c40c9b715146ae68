//! R-MAT (recursive matrix) graphs, as in the Graph500 benchmark.
//!
//! Parameters: `scale` (there are `2^scale` nodes, `1 <= scale <= 31`), `edge_factor` (there are
//! `edge_factor * 2^scale` directed edges before self-loops and duplicates are removed), and the
//! quadrant probabilities `a`, `b`, `c` (with `d = 1 - a - b - c`). Each edge starts from the whole
//! adjacency matrix and, `scale` times, keeps the top-left (`a`), top-right (`b`), bottom-left
//! (`c`) or bottom-right (`d`) quadrant; the row it ends in is the source, the column the target.
//! Skewed probabilities (Graph500: 0.57/0.19/0.19) concentrate edges on few nodes, which gives
//! the power-law-like degrees of social and web graphs. With `permute`, ids are relabelled by a
//! seeded pseudo-random bijection (as Graph500 scrambles them) so that degree does not correlate
//! with id.
//!
//! Each quadrant choice compares 32 random bits with fixed-point thresholds, without branches, so
//! one 64-bit draw serves two levels.

use rand::Rng;

use super::{GenOptions, Stream, check_size, draw_edges, hash3};
use crate::builder::EdgeList;
use crate::error::{GraphError, Result};
use crate::graph::NodeId;
use crate::progress::Progress;

/// The parameters of an R-MAT graph (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub scale: u32,
    pub edge_factor: u32,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub permute: bool,
}

impl Params {
    fn validate(&self) -> Result<()> {
        if self.scale == 0 || self.scale > 31 {
            return Err(GraphError::invalid(format!(
                "R-MAT scale must be between 1 and 31 (2 to 2^31 nodes), not {}",
                self.scale
            )));
        }
        if self.edge_factor == 0 {
            return Err(GraphError::invalid("R-MAT edge factor must be at least 1"));
        }
        for (name, p) in [("a", self.a), ("b", self.b), ("c", self.c)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(GraphError::invalid(format!("R-MAT probability {name} must be between 0 and 1, not {p}")));
            }
        }
        let sum = self.a + self.b + self.c;
        if sum > 1.0 + 1e-9 {
            return Err(GraphError::invalid(format!(
                "R-MAT probabilities a + b + c must be at most 1 (d = 1 - a - b - c), but sum to {sum}"
            )));
        }
        Ok(())
    }
}

/// Fixed-point cumulative quadrant probabilities, out of `2^32`.
#[derive(Clone, Copy)]
struct Thresholds {
    a: u64,
    ab: u64,
    abc: u64,
}

impl Thresholds {
    fn new(params: &Params) -> Thresholds {
        let fixed = |p: f64| ((p.clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64).min(1 << 32);
        Thresholds { a: fixed(params.a), ab: fixed(params.a + params.b), abc: fixed(params.a + params.b + params.c) }
    }

    /// The (row, column) bits of the quadrant that 32 random bits choose.
    #[inline(always)]
    fn quadrant(&self, r: u64) -> (u32, u32) {
        let row = (r >= self.ab) as u32;
        let col = ((r >= self.a) & (r < self.ab)) as u32 | (r >= self.abc) as u32;
        (row, col)
    }
}

/// A keyed bijection of `0..2^scale`, the relabelling of `permute`.
///
/// Like the scramble of the Graph500 reference generator, it is arithmetic rather than a table,
/// so it needs no memory and causes no cache misses at large scales. Each round adds a key and
/// multiplies by an odd key (bijective modulo `2^scale`: low bits spread upwards), then xors the
/// high half of the `scale` bits into the low half (bijective too: high bits spread downwards).
/// All in `u32` arithmetic, so that a pass over a block of ids vectorises.
#[derive(Clone, Copy)]
struct Scramble {
    keys: [(u32, u32); 4],
    mask: u32,
    shift: u32,
}

impl Scramble {
    fn new(seed: u64, scale: u32) -> Scramble {
        let key = |i: u64| hash3(seed, Stream::RmatPermutation, i) as u32;
        Scramble {
            keys: [0, 1, 2, 3].map(|r| (key(2 * r), key(2 * r + 1) | 1)),
            mask: ((1u64 << scale) - 1) as u32,
            shift: scale.div_ceil(2),
        }
    }

    #[inline(always)]
    fn apply(&self, id: NodeId) -> NodeId {
        let mut v = id;
        for &(add, mul) in &self.keys {
            v = v.wrapping_add(add).wrapping_mul(mul) & self.mask;
            v ^= v >> self.shift;
        }
        v
    }
}

/// One R-MAT edge (source, target) before relabelling.
#[inline(always)]
fn edge<R: Rng>(rng: &mut R, scale: u32, t: &Thresholds) -> (NodeId, NodeId) {
    let (mut u, mut v) = (0u32, 0u32);
    let mut level = 0;
    while level < scale {
        let bits = rng.next_u64();
        let (row, col) = t.quadrant(bits & 0xffff_ffff);
        u = (u << 1) | row;
        v = (v << 1) | col;
        if level + 1 < scale {
            let (row, col) = t.quadrant(bits >> 32);
            u = (u << 1) | row;
            v = (v << 1) | col;
        }
        level += 2;
    }
    (u, v)
}

/// The raw R-MAT edges: `edge_factor * 2^scale` of them, self-loops and duplicates included.
pub fn edges(params: &Params, options: &GenOptions, progress: &dyn Progress) -> Result<EdgeList> {
    params.validate()?;
    let n = 1u64 << params.scale;
    let m = n * u64::from(params.edge_factor);
    check_size("this R-MAT graph", m, options.max_weight.is_some())?;
    let m = m as usize;
    let thresholds = Thresholds::new(params);
    let scramble = params.permute.then(|| Scramble::new(options.seed, params.scale));

    progress.begin("generating R-MAT edges", Some(m as u64));
    Ok(draw_edges(n as u32, m, Stream::Rmat, options, progress, |rng, sources, targets| {
        for (s, t) in sources.iter_mut().zip(targets.iter_mut()) {
            (*s, *t) = edge(rng, params.scale, &thresholds);
        }
        if let Some(scramble) = &scramble {
            // A separate pass, which vectorises.
            sources.iter_mut().for_each(|id| *id = scramble.apply(*id));
            targets.iter_mut().for_each(|id| *id = scramble.apply(*id));
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuildOptions, build};
    use crate::generate::Generator;
    use crate::progress::NoProgress;

    fn options(seed: u64) -> GenOptions {
        GenOptions { seed, max_weight: None }
    }

    #[test]
    fn sizes_before_dedup() {
        let edges = Generator::graph500(10).edges(&options(1), &NoProgress).unwrap();
        assert_eq!(edges.num_nodes, 1024);
        assert_eq!(edges.len(), 16 * 1024);
        assert!(edges.weights.is_none());
        let model = Generator::Rmat { scale: 7, edge_factor: 3, a: 0.25, b: 0.25, c: 0.25, permute: false };
        let edges = model.edges(&GenOptions { seed: 1, max_weight: Some(9) }, &NoProgress).unwrap();
        assert_eq!((edges.num_nodes, edges.len()), (128, 384));
        assert!(edges.weights.unwrap().iter().all(|&w| (1..=9).contains(&w)));
        assert!(edges.sources.iter().chain(&edges.targets).all(|&u| u < 128));
    }

    #[test]
    fn degrees_are_skewed() {
        let graph =
            build(Generator::graph500(14).edges(&options(3), &NoProgress).unwrap(), &BuildOptions::SIMPLE).unwrap();
        let average = graph.num_edges() as f64 / f64::from(graph.num_nodes());
        let (_, max) = graph.out().max_degree();
        assert!(max as f64 > 50.0 * average, "max {max}, average {average}");
        // Uniform quadrants give no skew at all.
        let flat = Generator::Rmat { scale: 14, edge_factor: 16, a: 0.25, b: 0.25, c: 0.25, permute: false };
        let graph = build(flat.edges(&options(3), &NoProgress).unwrap(), &BuildOptions::SIMPLE).unwrap();
        assert!(graph.out().max_degree().1 < 60);
    }

    #[test]
    fn unpermuted_concentrates_on_low_ids_and_permutation_spreads() {
        let mut model = Generator::graph500(12);
        let Generator::Rmat { permute, .. } = &mut model else { unreachable!() };
        *permute = false;
        let edges = model.edges(&options(5), &NoProgress).unwrap();
        let graph = build(edges, &BuildOptions::SIMPLE).unwrap();
        assert_eq!(graph.out().max_degree().0, 0, "node 0 is the hub without permutation");
        // Permuting relabels: the degree multiset stays about the same, node 0 stops being the hub.
        let permuted =
            build(Generator::graph500(12).edges(&options(5), &NoProgress).unwrap(), &BuildOptions::SIMPLE).unwrap();
        assert_ne!(permuted.out().max_degree().0, 0);
        assert_eq!(permuted.out().max_degree().1, graph.out().max_degree().1);
    }

    #[test]
    fn scramble_is_a_bijection() {
        for (scale, seed) in [(1, 0), (2, 5), (7, 1), (16, 2)] {
            let scramble = Scramble::new(seed, scale);
            let mut seen = vec![false; 1 << scale];
            for id in 0..1u32 << scale {
                let to = scramble.apply(id) as usize;
                assert!(!seen[to], "scale {scale}: {id} collides");
                seen[to] = true;
            }
        }
        let scramble = Scramble::new(9, 31);
        assert!(scramble.apply(u32::MAX >> 1) <= u32::MAX >> 1);
    }

    #[test]
    fn corner_probabilities() {
        // a = 1: every edge is 0 -> 0.
        let model = Generator::Rmat { scale: 5, edge_factor: 2, a: 1.0, b: 0.0, c: 0.0, permute: false };
        let edges = model.edges(&options(1), &NoProgress).unwrap();
        assert!(edges.sources.iter().chain(&edges.targets).all(|&u| u == 0));
        // d = 1: every edge is last -> last.
        let model = Generator::Rmat { scale: 5, edge_factor: 2, a: 0.0, b: 0.0, c: 0.0, permute: false };
        let edges = model.edges(&options(1), &NoProgress).unwrap();
        assert!(edges.sources.iter().chain(&edges.targets).all(|&u| u == 31));
        // b = 1: row 0, last column.
        let model = Generator::Rmat { scale: 5, edge_factor: 2, a: 0.0, b: 1.0, c: 0.0, permute: false };
        let edges = model.edges(&options(1), &NoProgress).unwrap();
        assert!(edges.sources.iter().all(|&u| u == 0) && edges.targets.iter().all(|&u| u == 31));
    }

    #[test]
    fn invalid_parameters() {
        let check = |model: Generator, needle: &str| {
            let err = model.edges(&options(1), &NoProgress).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        };
        let rmat = |scale, edge_factor, a, b, c| Generator::Rmat { scale, edge_factor, a, b, c, permute: true };
        check(rmat(0, 16, 0.57, 0.19, 0.19), "scale");
        check(rmat(32, 16, 0.57, 0.19, 0.19), "scale");
        check(rmat(10, 0, 0.57, 0.19, 0.19), "edge factor");
        check(rmat(10, 16, 0.6, 0.3, 0.3), "sum");
        check(rmat(10, 16, -0.1, 0.3, 0.3), "probability a");
        check(rmat(10, 16, 0.5, f64::NAN, 0.3), "probability b");
        check(rmat(31, u32::MAX, 0.57, 0.19, 0.19), "GiB");
        check(rmat(30, 16, 0.57, 0.19, 0.19), "GiB");
    }
}
