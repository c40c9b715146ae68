//! grail's intermediate representation.
//!
//! A [`Module`] is what every later stage works on: the front end lowers a checked program into
//! it, the optimization passes rewrite it, and the C and CUDA emitters print it. It has two
//! distinct parts:
//!
//! - **kernels** ([`Kernel`]): parallel loops ([`ForAll`]) over an iteration space ([`Space`]: a
//!   worklist, all nodes, all edges, a range, a node's edges), with statements inside; nested
//!   `ForAll`s over a node's edges carry a [`Schedule`] that the nested-parallelism pass chooses;
//!   pushes are numbered [`PushSite`]s whose [`Aggregation`] cooperative conversion chooses;
//!   branches and loops carry a uniformity mark that the uniformity analysis sets;
//! - **orchestration** (the host function `main`): scalar code, [`Stmt::Invoke`], and the
//!   [`Iterate`] and [`Pipe`] regions, each with an [`OutlineId`] and an `outlined` flag that
//!   iteration outlining sets.
//!
//! The IR is structured (statement trees, not basic blocks): both targets print structured C,
//! and IrGL's analyses (control dependence, uniform branches, focal points) follow the nesting.
//! Every expression carries its type. [`validate`] checks the invariants; [`fn@print`] shows a
//! module in a readable text form (`grail compile --emit ir`).

pub mod analysis;
mod ir;
pub mod opt;
mod printer;
pub mod samples;
pub mod sets;
mod validate;

pub use ir::*;
pub use opt::{OptConfig, optimize};
pub use printer::print;
pub use validate::{ValidationError, validate};
