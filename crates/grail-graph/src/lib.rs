//! grail's graph substrate.
//!
//! Everything the compiler and runtimes stand on: CSR storage ([`Graph`], [`Csr`]), typed
//! property columns ([`Properties`]), a parallel deterministic builder ([`builder`]), readers and
//! writers for the formats users have files in ([`io`]), generators ([`generate`]), reorderings
//! ([`reorder`]), partitioning among devices ([`partition`]), and the sequential reference
//! algorithms with their verifiers ([`mod@reference`]), which are the oracles every backend is
//! checked against.

pub mod builder;
pub mod error;
pub mod facts;
pub mod generate;
pub mod graph;
pub mod insert;
pub mod io;
pub mod metis;
mod par;
pub mod partition;
pub mod progress;
pub mod properties;
pub mod reference;
pub mod reorder;
pub mod room;
pub mod stats;
mod transpose;
pub mod undirected;

pub use builder::{BuildOptions, EdgeList, build};
pub use error::{GraphError, Location, ParseError, Result};
pub use facts::Facts;
pub use graph::{Csr, EdgeId, Graph, MAX_NODES, NodeId, Weight, WeightKind};
pub use progress::{NoProgress, Progress};
pub use properties::{Column, Properties, PropertyType, PropertyValue};
pub use room::{Inserted, RowMove};
pub use stats::GraphStats;
