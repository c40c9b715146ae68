//! [`Session`]: one graph, many runs, compiled programs and (on a GPU) the graph on the device
//! kept between them.

use std::collections::HashMap;

use grail_algos::suite::{Prepared, SuiteProgram};
use grail_algos::tuning::{self, ProgramId, TargetKey};
use grail_algos::{Algorithm, OptChoice, RunParams, Variant};
use grail_graph::NodeId;
use grail_graph::reference::SpanningForest;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::CCompiler;
use grail_runtime::gpu::Device;

use crate::algorithms::{AlgorithmOutput, PageRank, Target};
use crate::error::{Error, Result};
use crate::graph::Graph;

/// Runs suite algorithms on one graph again and again (many sources, many algorithms) without
/// compiling or preparing twice: each algorithm's program is compiled the first time it runs,
/// the input it needs (the undirected graph, the reverse edges) is made once, and on a GPU the
/// graph is copied to the device once and stays there while the session lives.
///
/// ```no_run
/// use grail::{Graph, Session, Target};
///
/// let graph = Graph::load("road.gr")?;
/// let mut session = Session::new(&graph, Target::Gpu(0))?;
/// for source in [0, 17, 4242] {
///     let levels = session.bfs(source)?;
///     println!("{source}: {} reached", levels.iter().filter(|&&l| l != grail::UNREACHED).count());
/// }
/// # Ok::<(), grail::Error>(())
/// ```
pub struct Session {
    graph: Graph,
    target: Target,
    threads: usize,
    device: Option<Device>,
    programs: HashMap<Algorithm, SuiteProgram>,
    /// Prepared inputs by what they hold (undirected simple, degree order, reverse, in-edge ids).
    prepared: HashMap<[bool; 5], Prepared<'static>>,
}

impl Session {
    /// A session on `graph` (shared, not copied: a graph's clone shares its edge arrays) and
    /// `target` (the reference target has nothing to keep: use [`Graph`]'s methods). Opens the
    /// GPU now, so a missing device is reported here.
    pub fn new(graph: &Graph, target: Target) -> Result<Session> {
        let device = match target {
            Target::Gpu(device) => Some(Device::open(device)?),
            Target::Cpu => None,
            Target::Reference => {
                return Err(Error::Usage("a session runs on Target::Cpu or Target::Gpu".into()));
            }
        };
        let graph = graph.clone();
        Ok(Session { graph, target, threads: 0, device, programs: HashMap::new(), prepared: HashMap::new() })
    }

    /// Worker threads on the CPU (default: one per core).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Breadth-first search levels from `source`; see [`Graph::bfs`].
    pub fn bfs(&mut self, source: NodeId) -> Result<Vec<u32>> {
        self.run(Algorithm::Bfs, Some(source))
    }

    /// Shortest-path distances from `source`; see [`Graph::sssp`].
    pub fn sssp(&mut self, source: NodeId) -> Result<Vec<u64>> {
        self.run(Algorithm::Sssp, Some(source))
    }

    /// Shortest-path distances from `source` as `f64`; see [`Graph::sssp_real`].
    pub fn sssp_real(&mut self, source: NodeId) -> Result<Vec<f64>> {
        self.run(Algorithm::Sssp, Some(source))
    }

    /// Connected component labels; see [`Graph::connected_components`].
    pub fn connected_components(&mut self) -> Result<Vec<u32>> {
        self.run(Algorithm::Cc, None)
    }

    /// PageRank with the default tolerance; see [`Graph::pagerank`].
    pub fn pagerank(&mut self) -> Result<PageRank> {
        self.run(Algorithm::Pr, None)
    }

    /// The triangle count; see [`Graph::triangles`].
    pub fn triangles(&mut self) -> Result<u64> {
        self.run(Algorithm::Tri, None)
    }

    /// A maximal independent set; see [`Graph::maximal_independent_set`].
    pub fn maximal_independent_set(&mut self) -> Result<Vec<bool>> {
        self.run(Algorithm::Mis, None)
    }

    /// A minimum spanning forest; see [`Graph::minimum_spanning_forest`].
    pub fn minimum_spanning_forest(&mut self) -> Result<SpanningForest> {
        self.run(Algorithm::Mst, None)
    }

    fn run<T: AlgorithmOutput>(&mut self, algorithm: Algorithm, source: Option<NodeId>) -> Result<T> {
        let params = RunParams {
            source: source.map(u64::from),
            threads: self.threads,
            device: match self.target {
                Target::Gpu(device) => device,
                _ => 0,
            },
            ..RunParams::default()
        };
        if !self.programs.contains_key(&algorithm) {
            let variant = Variant::find(algorithm, None)
                .and_then(|v| v.for_weights(self.graph.as_inner().out().weight_kind()))
                .map_err(Error::Usage)?;
            let id = ProgramId::of_variant(variant)?;
            let cache = ModuleCache::default_location();
            let program = match &self.device {
                Some(device) => {
                    let key = TargetKey::gpu(&device.info().name);
                    let config = tuning::resolve(OptChoice::Tuned, &key, &id, Some(self.graph.as_inner())).config;
                    SuiteProgram::compile_gpu(variant, device.clone(), Some(&cache), &config)?
                }
                None => {
                    let config =
                        tuning::resolve(OptChoice::Tuned, &TargetKey::cpu(), &id, Some(self.graph.as_inner())).config;
                    SuiteProgram::compile(variant, &CCompiler::detect()?, Some(&cache), &config)?
                }
            };
            self.programs.insert(algorithm, program);
        }
        let program = &self.programs[&algorithm];
        let needs = program.needs();
        let key =
            [needs.undirected_simple, needs.degree_order, needs.reverse, needs.in_edge_ids, needs.weight_order_keys];
        if !self.prepared.contains_key(&key) {
            let prepared = program.prepare(self.graph.as_inner())?.into_owned();
            self.prepared.insert(key, prepared);
        }
        if algorithm == Algorithm::Sssp {
            grail_graph::reference::check_real_weights(self.graph.as_inner()).map_err(grail_algos::AlgoError::from)?;
        }
        let run = program.run_prepared(self.graph.as_inner(), &self.prepared[&key], &params)?;
        let real = matches!(run.output, grail_algos::Output::RealDistances(_));
        T::from_output(run.output).ok_or_else(|| {
            if real {
                Error::Usage("the graph's weights are real, so its distances are too: use sssp_real".into())
            } else {
                Error::Usage(format!("internal error (a bug in grail): {algorithm} gave another kind of result"))
            }
        })
    }
}
