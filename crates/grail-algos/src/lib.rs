//! grail's algorithm suite.
//!
//! Each suite algorithm has a name users type (`bfs`, `sssp`, ...), an output type, headline
//! figures for summaries, and a verifier. Targets say what runs it: today the sequential
//! references of `grail-graph`; the generated CPU code (`cpu`) and CUDA (`gpu`) join as the
//! language, IR and backends land, and every one of them is checked by the same verifiers.

mod algorithm;
mod output;
mod programs;
mod run;

pub use algorithm::{Algorithm, Target};
pub use output::Output;
pub use programs::{PROGRAMS, program_source};
pub use run::{RunParams, RunResult, run, verify};
