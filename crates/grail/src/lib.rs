//! grail: graph algorithms written once, in the grail language, run on every core of a CPU or
//! on an NVIDIA GPU.
//!
//! The suite's algorithms are methods of [`Graph`]; choose the target, run, get plain vectors:
//!
//! ```
//! use grail::{Graph, Target};
//!
//! let graph = Graph::from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])?;
//! let levels = graph.bfs(0).run()?;                       // on the CPU
//! assert_eq!(levels, [0, 1, 2, 3]);
//! let ranks = graph.pagerank().on(Target::Reference).run()?;
//! assert!((ranks.ranks.iter().sum::<f64>() - 1.0).abs() < 1e-6);
//! # Ok::<(), grail::Error>(())
//! ```
//!
//! On a GPU: `graph.bfs(0).on(Target::Gpu(0)).run()?`. A [`Session`] keeps a graph (on the GPU:
//! in device memory) and the compiled programs across many runs. A program of one's own is a
//! [`Program`]: compiled from a `.grail` file or text, run with named parameters, its output
//! properties read back as typed slices:
//!
//! ```
//! let program = grail::Program::from_source("two_hop", "
//!     graph { node hops: u32 = 0; }
//!     param from: Node;
//!     output hops;
//!     kernel spread() {
//!         forall u in G.nodes() { u.hops = u.degree(); }
//!     }
//!     fn main() { invoke spread(); from.hops = 100; }
//! ")?;
//! let graph = grail::Graph::from_edges(3, [(0, 1), (1, 2)])?;
//! let out = program.on(&graph).param("from", 2).run()?;
//! assert_eq!(out.property::<u32>("hops")?, &[1, 1, 100]);
//! # Ok::<(), grail::Error>(())
//! ```
//!
//! Programs compile once per configuration and are cached on disk (`$GRAIL_CACHE_DIR`, else
//! `~/.cache/grail`); the CPU target needs a C compiler (`$CC`, else `cc`), the GPU target the
//! NVIDIA driver and NVRTC. Results can be checked with the algorithms' verifiers
//! ([`Run::verify`]). The crates under this one (`grail-graph`, `grail-lang`, `grail-ir`,
//! `grail-codegen`, `grail-runtime`, `grail-algos`) are reachable through [`Graph::as_inner`]
//! and [`Program::module`] for what this API does not cover.

mod algorithms;
mod error;
mod graph;
mod program;
mod session;

pub use algorithms::{AlgorithmOutput, INFINITE_DISTANCE, PageRank, Run, RunInfo, Target, UNREACHED};
pub use error::{Error, Result};
pub use grail_graph::partition::Method as PartitionMethod;
pub use grail_graph::reference::SpanningForest;
pub use grail_graph::{Column, NodeId, Weight};
pub use grail_runtime::Table;
pub use grail_runtime::cpu::Value;
pub use grail_runtime::multi::{Device, Topology, Worker};
pub use graph::{Graph, LoadOptions};
pub use program::{Program, ProgramOutput, ProgramRun, PropertyType};
pub use session::Session;
