//! grail's algorithm suite.
//!
//! Each suite algorithm has a name users type (`bfs`, `sssp`, ...), an output type, headline
//! figures for summaries, and a verifier. Targets say what runs it: the sequential references of
//! `grail-graph` (`reference`), or the suite's grail programs (`programs/`, one per [`Variant`])
//! compiled by grail and run by the CPU executor (`cpu`); CUDA (`gpu`) joins with its backend.
//! Every target is checked by the same verifiers.

mod algorithm;
pub mod dmr;
pub mod dsssp;
mod error;
mod output;
pub mod pbf;
mod programs;
pub mod pta;
mod run;
pub mod sections;
pub mod sp;
pub mod suite;
pub mod tuning;
mod variant;

pub use algorithm::{Algorithm, Target};
pub use error::{AlgoError, Result};
pub use output::Output;
pub use programs::{PROGRAMS, program_source};
pub use run::{RunParams, RunResult, preferred_mode, run, verify};
pub use tuning::OptChoice;
pub use variant::{REAL_WEIGHT_VARIANTS, VARIANTS, Variant};
