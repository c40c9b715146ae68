//! grail's intermediate representation: kernels (parallel loop nests over worklists, node ranges
//! or collections) and orchestration (Iterate, Pipe, Invoke, scalar code), its validator and
//! printer, the analyses (outline tree, control dependence, uniformity, focal points) and the
//! throughput optimization passes, each switched by an `OptConfig`.
//!
//! Not built yet: this crate holds its place in the workspace. See `docs/architecture.md`.
