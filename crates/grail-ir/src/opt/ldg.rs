//! Read-only loads: property columns that no kernel writes (the edge weights, a property the
//! host sets before the kernels run) are read through the GPU's read-only data cache (`__ldg`),
//! as IrGL's texture variants of its graph and worklist types do. A column a kernel writes may
//! not be: that cache is not coherent with writes made while a kernel runs.
//!
//! [`read_only`] answers which columns qualify; the CUDA target applies it when
//! [`Module::opt`]'s `ldg` is on. The graph's own arrays are read-only in every kernel and are
//! always read that way.

use crate::analysis::{assigned_properties, written_by_kernels};
use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if config.ldg && !read_only(module).iter().any(|&r| r) {
        notes.push("read-only loads: every property is written by some kernel".into());
    }
}

/// For each property, whether nothing on the device writes it: no kernel, and no host code of
/// an outlined region (which runs on the device).
pub fn read_only(module: &Module) -> Vec<bool> {
    let mut written = written_by_kernels(module);
    walk_block(&module.main.block, &mut |stmt| {
        let region = match stmt {
            Stmt::Iterate(iterate) if iterate.outlined => &iterate.body,
            Stmt::Pipe(pipe) if pipe.outlined => &pipe.body,
            _ => return,
        };
        assigned_properties(region, &mut written);
    });
    written.iter().map(|w| !w).collect()
}
