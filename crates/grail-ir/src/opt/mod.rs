//! The optimization passes and the pass manager that runs them.
//!
//! Each pass is a function over the [`Module`] that rewrites or marks it for the emitters, in
//! its own file: [`nested`] (nested-parallelism schedules, IrGL §4.3), [`coop`] (cooperative
//! conversion with focal-point analysis, §4.2), [`outline`] (iteration outlining, §4.1),
//! [`backoff`] (retry backoff, §4.4), [`unroll`] (pipe unrolling, §4.4), [`ldg`] (read-only
//! loads) [`local`] (local worklists, the morph paper's §7.5), [`marks`] (3-phase conflict
//! resolution, §7.3), [`queue`] (worklist loops as one queue) and [`stages`] (long items whose
//! lanes meet after each stage). [`optimize`] runs the
//! passes an [`OptConfig`] selects, in that order (cooperative conversion looks at the
//! schedules the nested-parallelism pass chose), validates the module after each, records the
//! configuration in [`Module::opt`], and collects what kept a pass from applying somewhere in
//! [`Module::opt_notes`].

pub mod backoff;
mod config;
pub mod coop;
pub mod ldg;
pub mod local;
pub mod marks;
pub mod nested;
pub mod outline;
pub mod queue;
pub mod stages;
pub mod unroll;

pub use config::{ConfigError, Layout, OptConfig, Outline, Schedulers};

use crate::ir::Module;
use crate::validate::{ValidationError, validate};

/// A pass: rewrites or marks `module` as `config` asks, appending a note for each place it had
/// to leave alone and why.
type Pass = fn(&mut Module, &OptConfig, &mut Vec<String>);

/// The passes in the order they run, each with its name (for validation errors).
const PASSES: &[(&str, Pass)] = &[
    ("nested parallelism", nested::run),
    ("cooperative conversion", coop::run),
    ("iteration outlining", outline::run),
    ("retry backoff", backoff::run),
    ("pipe unrolling", unroll::run),
    ("read-only loads", ldg::run),
    ("local worklists", local::run),
    ("conflict marks", marks::run),
    ("worklist queues", queue::run),
    ("items in stages", stages::run),
];

/// Runs the passes `config` selects over `module` (each pass decides from the configuration
/// whether it has anything to do), validating after each. The result records `config` and the
/// passes' notes. An error here is a bug in a pass: the module it produced breaks an invariant.
pub fn optimize(mut module: Module, config: &OptConfig) -> Result<Module, ValidationError> {
    let mut notes = Vec::new();
    module.opt = *config;
    for (name, pass) in PASSES {
        pass(&mut module, config, &mut notes);
        validate(&module).map_err(|e| ValidationError {
            location: format!("{} (after the {name} pass)", e.location),
            message: e.message,
        })?;
    }
    module.opt_notes = notes;
    Ok(module)
}
