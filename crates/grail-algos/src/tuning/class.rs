//! Input classes: a few cheap features of a graph, bucketed into a key such as
//! `size=M,skew=high,diameter=low`, under which the tuner records a configuration.
//!
//! The best optimizations depend on the input more than on its exact size (IrGL §5.2: nested
//! parallelism pays on power-law graphs and hurts on road networks, which want iteration
//! outlining instead). Three features say which regime a graph is in:
//!
//! - **size**: the edge count, in buckets a factor of 16 apart (`XS` < 2^16 edges, `S` < 2^20,
//!   `M` < 2^24, `L` < 2^28, `XL` beyond). Below a million edges launch overheads dominate; the
//!   buckets are wide enough that graphs of one family a scale or two apart share a class.
//! - **skew**: the share of edges that leave *hubs*, nodes whose out-degree is at least
//!   [`HUB_FACTOR`] times the mean (and at least a warp's worth, 32). That share is what the
//!   thread-block and warp schedulers take off single threads. `low` below 5%, `mid` below 25%,
//!   `high` from 25%: R-MAT/Kronecker graphs are `high`, uniform random graphs, grids and road
//!   networks `low`. The maximum over the mean degree is reported too, but one outlier node
//!   moves it, so it does not decide the class.
//! - **diameter**: estimated from breadth-first sweeps over out-edges, which decides how many
//!   bulk-synchronous rounds a traversal takes and so how launch-bound it is. `low` below 32
//!   levels, `mid` below 256, `high` from 256.
//!
//! Everything is computed on the graph as given (before any preparation a program needs) and is
//! deterministic: the same graph always gets the same class. The cost is bounded so that `grail
//! run` can afford it on every run that has a tuned entry to look up: one pass over the node
//! offsets for the degrees, and sweeps that together visit at most [`EDGE_BUDGET`] edges. The
//! first sweep starts from the highest-degree node among [`SAMPLES`] nodes spread over the id
//! range (likely in the giant component). A sweep that reaches 256 levels settles the class at
//! once (`high`). A sweep that finishes within the budget gives an exact eccentricity, and a
//! second sweep from the farthest node it found tightens it towards the diameter (the double
//! sweep); one that only reached a tiny part of the graph is retried from the next sample. A
//! sweep stopped by the budget after `L` levels, having visited `V` of the `n` nodes, is
//! extrapolated from how fast the visited set grew: with `V(L) ≈ c L^d`, where `d` is measured
//! between levels `L/2` and `L`, the remaining nodes take about `L ((n/V)^(1/d) - 1)` levels
//! more (for expanding graphs `d` is large and the estimate stays near `L`). A directed graph
//! whose sources reach little of it looks like a low-diameter graph; that is what a traversal
//! from such a source sees too.

use std::fmt;
use std::time::{Duration, Instant};

use grail_graph::Graph;
use serde::{Deserialize, Serialize};

/// A hub has at least this many times the mean out-degree.
pub const HUB_FACTOR: f64 = 8.0;
/// How many edges the diameter sweeps may visit together.
pub const EDGE_BUDGET: u64 = 1 << 18;
/// How many nodes are sampled for the sweeps' start.
pub const SAMPLES: u32 = 64;
/// Levels from which a graph's diameter is `high`; a sweep stops when it gets there.
pub const HIGH_DIAMETER: u32 = 256;
/// Levels from which a graph's diameter is `mid`.
pub const MID_DIAMETER: u32 = 32;

/// The measured features of a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Features {
    pub nodes: u64,
    pub edges: u64,
    pub mean_degree: f64,
    pub max_degree: u64,
    /// The share of edges whose source is a hub (see the module documentation).
    pub hub_edge_share: f64,
    /// The estimated diameter in levels (a lower bound when `diameter_exact`, else an
    /// extrapolation, capped at [`HIGH_DIAMETER`] once a sweep got that far).
    pub diameter: u32,
    /// Whether `diameter` is an eccentricity found by a complete sweep (a lower bound of the
    /// true diameter) rather than an extrapolation.
    pub diameter_exact: bool,
    /// Edges the sweeps visited.
    pub swept_edges: u64,
    /// How long computing the features took, in milliseconds.
    pub millis: f64,
}

/// A bucket of a feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Low,
    Mid,
    High,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Low => "low",
            Level::Mid => "mid",
            Level::High => "high",
        }
    }
}

/// A size bucket, by edge count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Size {
    Xs,
    S,
    M,
    L,
    Xl,
}

impl Size {
    /// The bucket of `edges`: each is 16 times the one before.
    pub fn of(edges: u64) -> Size {
        match edges {
            e if e < 1 << 16 => Size::Xs,
            e if e < 1 << 20 => Size::S,
            e if e < 1 << 24 => Size::M,
            e if e < 1 << 28 => Size::L,
            _ => Size::Xl,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Size::Xs => "XS",
            Size::S => "S",
            Size::M => "M",
            Size::L => "L",
            Size::Xl => "XL",
        }
    }
}

/// The class of an input: the key the tuning database stores configurations under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputClass {
    pub size: Size,
    pub skew: Level,
    pub diameter: Level,
}

impl InputClass {
    /// The class of a graph with these features.
    pub fn of(features: &Features) -> InputClass {
        let skew = match features.hub_edge_share {
            s if s >= 0.25 => Level::High,
            s if s >= 0.05 => Level::Mid,
            _ => Level::Low,
        };
        let diameter = match features.diameter {
            d if d >= HIGH_DIAMETER => Level::High,
            d if d >= MID_DIAMETER => Level::Mid,
            _ => Level::Low,
        };
        InputClass { size: Size::of(features.edges), skew, diameter }
    }
}

impl fmt::Display for InputClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "size={},skew={},diameter={}", self.size.name(), self.skew.name(), self.diameter.name())
    }
}

/// A graph's features and its class.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    pub features: Features,
    pub class: InputClass,
}

/// Measures `graph`'s features and classifies it.
pub fn classify(graph: &Graph) -> Classified {
    let features = features(graph);
    Classified { class: InputClass::of(&features), features }
}

/// Measures `graph`'s features (see the module documentation for what and why).
pub fn features(graph: &Graph) -> Features {
    let start = Instant::now();
    let csr = graph.out();
    let n = graph.num_nodes();
    let m = graph.num_edges();
    let mean = if n == 0 { 0.0 } else { m as f64 / f64::from(n) };
    let hub_degree = (mean * HUB_FACTOR).max(32.0);
    let (mut max_degree, mut hub_edges) = (0u64, 0u64);
    // Rows end by their own array: the graph may have room after its rows.
    for (start, end) in csr.offsets().iter().zip(csr.ends()) {
        let degree = end - start;
        max_degree = max_degree.max(degree);
        if degree as f64 >= hub_degree {
            hub_edges += degree;
        }
    }
    let (diameter, diameter_exact, swept_edges) = estimate_diameter(graph);
    Features {
        nodes: u64::from(n),
        edges: m,
        mean_degree: mean,
        max_degree,
        hub_edge_share: if m == 0 { 0.0 } else { hub_edges as f64 / m as f64 },
        diameter,
        diameter_exact,
        swept_edges,
        millis: duration_ms(start.elapsed()),
    }
}

fn duration_ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// What one sweep found.
struct Sweep {
    /// The last level reached (the eccentricity of the start when `complete`).
    levels: u32,
    /// A node of the last level.
    farthest: u32,
    /// Nodes visited.
    visited: u64,
    /// Whether the sweep ran out of frontier (rather than out of budget or into the level cap).
    complete: bool,
    /// Nodes visited up to each level, for the extrapolation.
    visited_by_level: Vec<u64>,
}

/// The diameter level alone (the sweeps of [`classify`], bounded to [`EDGE_BUDGET`] edges,
/// without its pass over every node's degree).
pub fn diameter_level(graph: &Graph) -> Level {
    match estimate_diameter(graph).0 {
        d if d >= HIGH_DIAMETER => Level::High,
        d if d >= MID_DIAMETER => Level::Mid,
        _ => Level::Low,
    }
}

/// The diameter estimate, whether it is exact (a complete sweep's eccentricity), and the edges
/// visited.
fn estimate_diameter(graph: &Graph) -> (u32, bool, u64) {
    let n = graph.num_nodes();
    if n == 0 || graph.num_edges() == 0 {
        return (0, true, 0);
    }
    let csr = graph.out();
    // The sampled starts, by decreasing degree (ties by id, so the order is deterministic).
    let mut starts: Vec<u32> =
        (0..SAMPLES.min(n)).map(|i| (u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15) % u64::from(n)) as u32).collect();
    starts.sort_by_key(|&u| (std::cmp::Reverse(csr.degree(u)), u));
    starts.dedup();
    // Level + 1 of each visited node, 0 for unvisited: a zeroed allocation the OS gives lazily.
    let mut level = vec![0u32; n as usize];
    let mut budget = EDGE_BUDGET;
    let mut best: Option<(u32, bool)> = None;
    let mut tries = 0;
    let mut next_start = starts.into_iter().filter(|&u| csr.degree(u) > 0);
    let mut start = next_start.next();
    while let Some(source) = start {
        if budget == 0 || tries == 4 {
            break;
        }
        tries += 1;
        let sweep = sweep(graph, source, &mut level, &mut budget);
        let estimate = if sweep.complete { sweep.levels } else { extrapolate(&sweep, u64::from(n)) };
        let better = best.is_none_or(|(d, _)| estimate > d);
        if better {
            best = Some((estimate, sweep.complete));
        }
        if estimate >= HIGH_DIAMETER || !sweep.complete {
            break;
        }
        // A complete sweep that covered a real part of the graph: sweep again from its farthest
        // node (the double sweep). One that reached almost nothing started in a small component:
        // try the next sample.
        start = if sweep.visited * 100 >= u64::from(n) && tries < 2 {
            Some(sweep.farthest)
        } else if sweep.visited * 100 >= u64::from(n) {
            None
        } else {
            next_start.next()
        };
    }
    let (diameter, exact) = best.unwrap_or((0, true));
    (diameter.min(HIGH_DIAMETER), exact, EDGE_BUDGET - budget)
}

/// A breadth-first sweep from `source` over out-edges, until the frontier is empty, the budget
/// is spent, or [`HIGH_DIAMETER`] levels are reached. `level` is reset to zeros for the nodes it
/// visited before returning.
fn sweep(graph: &Graph, source: u32, level: &mut [u32], budget: &mut u64) -> Sweep {
    let csr = graph.out();
    let mut order: Vec<u32> = vec![source];
    level[source as usize] = 1;
    let mut visited_by_level = vec![1u64];
    let mut begin = 0usize;
    let mut depth = 0u32;
    let mut complete = true;
    'levels: while begin < order.len() {
        if depth >= HIGH_DIAMETER {
            complete = false;
            break;
        }
        let end = order.len();
        for i in begin..end {
            let targets = csr.neighbors(order[i]);
            // A node with more edges than the budget has left is scanned in part.
            let take = targets.len().min(usize::try_from(*budget).unwrap_or(usize::MAX));
            *budget -= take as u64;
            for &v in &targets[..take] {
                if level[v as usize] == 0 {
                    level[v as usize] = depth + 2;
                    order.push(v);
                }
            }
            if take < targets.len() {
                complete = false;
                if order.len() > end {
                    depth += 1;
                    visited_by_level.push(order.len() as u64);
                }
                break 'levels;
            }
        }
        begin = end;
        if order.len() > end {
            depth += 1;
            visited_by_level.push(order.len() as u64);
        }
    }
    let farthest = *order.last().expect("the source is visited");
    for &u in &order {
        level[u as usize] = 0;
    }
    Sweep { levels: depth, farthest, visited: order.len() as u64, complete, visited_by_level }
}

/// The eccentricity an incomplete sweep suggests (see the module documentation).
fn extrapolate(sweep: &Sweep, nodes: u64) -> u32 {
    let levels = sweep.levels.max(1);
    if sweep.levels >= HIGH_DIAMETER {
        return HIGH_DIAMETER;
    }
    let visited = sweep.visited.max(2) as f64;
    let at = |l: u32| sweep.visited_by_level[(l as usize).min(sweep.visited_by_level.len() - 1)].max(1) as f64;
    let half = at(levels / 2).max(1.0);
    let growth = (visited / half).max(1.0 + 1e-9);
    // V(L) / V(L/2) = 2^d.
    let d = (growth.ln() / 2f64.ln()).max(1.0);
    let remaining = (nodes as f64 / visited).max(1.0).powf(1.0 / d) - 1.0;
    let estimate = f64::from(levels) * (1.0 + remaining);
    estimate.round().min(f64::from(HIGH_DIAMETER)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use grail_graph::NoProgress;
    use grail_graph::generate::{GenOptions, Generator, generate};

    fn graph(generator: Generator, undirected: bool) -> Graph {
        generate(&generator, &GenOptions { seed: 3, max_weight: Some(9) }, undirected, &NoProgress).unwrap()
    }

    #[test]
    fn sizes_are_buckets_of_sixteen() {
        assert_eq!(Size::of(0), Size::Xs);
        assert_eq!(Size::of(65_535), Size::Xs);
        assert_eq!(Size::of(65_536), Size::S);
        assert_eq!(Size::of(1 << 24), Size::L);
        assert_eq!(Size::of(1 << 40), Size::Xl);
    }

    #[test]
    fn class_text_is_the_key() {
        let class = InputClass { size: Size::M, skew: Level::High, diameter: Level::Low };
        assert_eq!(class.to_string(), "size=M,skew=high,diameter=low");
    }

    #[test]
    fn every_generator_gets_its_expected_class() {
        let kron = classify(&graph(Generator::graph500(14), true));
        assert_eq!(kron.class.skew, Level::High, "{:?}", kron.features);
        assert_eq!(kron.class.diameter, Level::Low, "{:?}", kron.features);
        assert_eq!(kron.class.size, Size::S);

        let uniform = classify(&graph(Generator::Uniform { nodes: 1 << 14, average_degree: 8 }, true));
        assert_eq!(uniform.class.skew, Level::Low, "{:?}", uniform.features);
        assert_eq!(uniform.class.diameter, Level::Low, "{:?}", uniform.features);

        let grid = classify(&graph(Generator::Grid { rows: 300, cols: 300 }, true));
        assert_eq!(grid.class.skew, Level::Low);
        assert_eq!(grid.class.diameter, Level::High, "{:?}", grid.features);

        let small_grid = classify(&graph(Generator::Grid { rows: 20, cols: 20 }, true));
        assert_eq!(small_grid.features.diameter, 38, "{:?}", small_grid.features);
        assert!(small_grid.features.diameter_exact);
        assert_eq!(small_grid.class.diameter, Level::Mid);

        let road = classify(&graph(Generator::Road { nodes: 1 << 16 }, true));
        assert_eq!(road.class.skew, Level::Low);
        assert_eq!(road.class.diameter, Level::High, "{:?}", road.features);
    }

    #[test]
    fn classes_are_deterministic_and_empty_graphs_are_fine() {
        let g = graph(Generator::graph500(10), false);
        let untimed = |c: Classified| Classified { features: Features { millis: 0.0, ..c.features }, ..c };
        assert_eq!(untimed(classify(&g)), untimed(classify(&g)));
        let empty = Graph::from_csr(grail_graph::Csr::empty(0, false));
        assert_eq!(classify(&empty).class.to_string(), "size=XS,skew=low,diameter=low");
        let isolated = Graph::from_csr(grail_graph::Csr::empty(10, false));
        assert_eq!(classify(&isolated).features.diameter, 0);
    }

    #[test]
    fn a_hub_larger_than_the_budget_is_scanned_in_part() {
        // A star with more leaves than the budget: one level, low diameter.
        let n = (EDGE_BUDGET + 10) as u32;
        let mut offsets = vec![0u64, u64::from(n) - 1];
        offsets.resize(n as usize + 1, u64::from(n) - 1);
        let targets: Vec<u32> = (1..n).collect();
        let star = Graph::from_csr(grail_graph::Csr::from_parts(offsets, targets, None).unwrap());
        let f = features(&star);
        assert!(f.diameter <= 2, "{f:?}");
        assert_eq!(f.swept_edges, EDGE_BUDGET);
        assert!(f.hub_edge_share > 0.99);
    }

    #[test]
    fn a_large_budgeted_sweep_extrapolates() {
        // A long path: the budget runs out long before the end, and growth is linear.
        let n = (EDGE_BUDGET * 4) as u32;
        let offsets: Vec<u64> = (0..=u64::from(n)).map(|i| i.min(u64::from(n) - 1)).collect();
        let targets: Vec<u32> = (1..n).collect();
        let path = Graph::from_csr(grail_graph::Csr::from_parts(offsets, targets, None).unwrap());
        let f = features(&path);
        assert_eq!(f.diameter, HIGH_DIAMETER);
        assert!(f.swept_edges <= EDGE_BUDGET);
    }
}
