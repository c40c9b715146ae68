//! Retry backoff (IrGL §4.4): a kernel's retried items are handed out in blocks of consecutive
//! items per thread instead of one item per thread, round robin. Items next to each other in a
//! retry list tend to conflict (they failed together), so running them in one thread, one after
//! another, resolves conflicts that running them side by side would repeat.
//!
//! The pass only checks where it applies (kernels that retry); the emitters read
//! [`Module::opt`]'s `backoff` and hand out retried items accordingly.

use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if !config.backoff {
        return;
    }
    if !module.kernels.iter().any(retries) {
        notes.push("retry backoff: no kernel retries, so there is nothing to back off".into());
    }
}

/// Whether a kernel has a `retry` statement.
pub fn retries(kernel: &Kernel) -> bool {
    let mut found = false;
    walk_block(&kernel.body.block, &mut |stmt| found |= matches!(stmt, Stmt::Retry { .. }));
    found
}
