//! Uniform random graphs (the directed Erdős–Rényi `G(n, m)` model with replacement).
//!
//! Parameters: `nodes` and `average_degree`; there are `nodes * average_degree` directed edges,
//! each with source and target drawn independently and uniformly, so self-loops and duplicates
//! occur (rarely, for sparse graphs) until the builder removes them. Degrees are binomial: no
//! hubs, and the diameter is logarithmic in `nodes`.

use rand::Rng;

use super::{GenOptions, Stream, check_size, draw_edges};
use crate::builder::EdgeList;
use crate::error::{GraphError, Result};
use crate::graph::NodeId;
use crate::progress::Progress;

/// A node uniform in `0..n` from 64 random bits (bias below `n / 2^64`).
#[inline(always)]
fn node(bits: u64, n: u32) -> NodeId {
    ((u128::from(bits) * u128::from(n)) >> 64) as NodeId
}

/// The raw edges: `nodes * average_degree` of them.
pub fn edges(nodes: u32, average_degree: u32, options: &GenOptions, progress: &dyn Progress) -> Result<EdgeList> {
    if nodes == 0 {
        return Err(GraphError::invalid("a random graph needs at least 1 node"));
    }
    if average_degree == 0 {
        return Err(GraphError::invalid("a random graph needs an average degree of at least 1"));
    }
    let m = u64::from(nodes) * u64::from(average_degree);
    check_size("this random graph", m, options.max_weight.is_some())?;
    let m = m as usize;

    progress.begin("generating random edges", Some(m as u64));
    Ok(draw_edges(nodes, m, Stream::Uniform, options, progress, |rng, sources, targets| {
        for (s, t) in sources.iter_mut().zip(targets.iter_mut()) {
            *s = node(rng.next_u64(), nodes);
            *t = node(rng.next_u64(), nodes);
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Generator;
    use crate::progress::NoProgress;

    #[test]
    fn sizes_and_spread() {
        let model = Generator::Uniform { nodes: 1000, average_degree: 20 };
        let edges = model.edges(&GenOptions { seed: 9, max_weight: Some(3) }, &NoProgress).unwrap();
        assert_eq!((edges.num_nodes, edges.len()), (1000, 20_000));
        let mut degree = vec![0u32; 1000];
        for &u in &edges.sources {
            degree[u as usize] += 1;
        }
        // Binomial(20000, 1/1000): mean 20, standard deviation about 4.5.
        assert!(degree.iter().all(|&d| (1..=45).contains(&d)), "{:?}", degree.iter().max());
        assert!(edges.targets.iter().all(|&v| v < 1000));
        assert!(edges.weights.unwrap().iter().all(|&w| (1..=3).contains(&w)));
        let single = Generator::Uniform { nodes: 1, average_degree: 3 };
        let edges = single.edges(&GenOptions::default(), &NoProgress).unwrap();
        assert_eq!(edges.sources, [0, 0, 0]);
    }

    #[test]
    fn invalid_parameters() {
        let options = GenOptions::default();
        for (model, needle) in [
            (Generator::Uniform { nodes: 0, average_degree: 4 }, "at least 1 node"),
            (Generator::Uniform { nodes: 10, average_degree: 0 }, "average degree"),
            (Generator::Uniform { nodes: u32::MAX, average_degree: u32::MAX }, "GiB"),
            (Generator::Uniform { nodes: u32::MAX, average_degree: 3 }, "GiB"),
        ] {
            let err = model.edges(&options, &NoProgress).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
    }
}
