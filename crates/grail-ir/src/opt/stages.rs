//! Items in stages (`stages=on`, GPU, with `converge`): in a phase that claims a neighbourhood
//! with `exclusive` (a morph operator's items: find the place, claim it, check what was read,
//! change the graph), every lane of a warp passes every stage of its item and the lanes meet
//! after each. A stage is a top-level statement of the item that loops, locks or ends the item
//! (`continue`), or a run of the others between such statements. A lane runs a stage only while
//! its item is live; the item's `continue` ends it for that lane, which still passes the stages
//! after it.
//!
//! Why: with warp-uniform trips alone (`converge`), the lanes meet only before each item. Those
//! that part at a branch of a long item (a walk of another length, a claim lost) run the rest of
//! it in groups, one group after another: Nsight Compute on `dmr`'s refinement showed 3.6 of 32
//! lanes active, and the stages made it 15% faster (docs/benchmarks.md). Phases without a claim
//! did not gain: `pta`'s merges, loops over sorted lists, were 20% slower with the meetings.
//!
//! The pass marks nothing in the IR: the CUDA emitter asks [`staged`] for each phase's item
//! loop when [`OptConfig::stages`] and [`OptConfig::converge`] are on.

use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if !config.stages {
        return;
    }
    for (k, kernel) in module.kernels.iter().enumerate() {
        for stmt in &kernel.body.block {
            let Stmt::ForAll(forall) = stmt else { continue };
            if !claims(forall) {
                continue;
            }
            if keeps_items(module, config, KernelId(k as u32)) {
                notes.push(format!(
                    "kernel `{}`: its items do not run in stages: it keeps its pushes in the thread (local=on)",
                    kernel.name
                ));
            } else if !config.converge {
                notes.push(format!(
                    "kernel `{}`: its items do not run in stages: stages need warp-uniform item loops (converge=on)",
                    kernel.name
                ));
            } else if returns(forall) {
                notes.push(format!("kernel `{}`: its items do not run in stages: an item returns", kernel.name));
            }
        }
    }
}

/// Whether phase `forall` of kernel `k` runs its items in stages under `module.opt`: it claims
/// with `exclusive`, no statement of its item returns (a lane that left the loop would miss the
/// meetings after it), its trips are warp-uniform, and the kernel does not run the items it
/// pushes in the thread (local worklists chain items in one trip).
pub fn staged(module: &Module, k: KernelId, forall: &ForAll) -> bool {
    let config = &module.opt;
    config.stages && config.converge && claims(forall) && !returns(forall) && !keeps_items(module, config, k)
}

fn keeps_items(module: &Module, config: &OptConfig, k: KernelId) -> bool {
    config.local && crate::opt::local::eligible(module, k).is_ok()
}

fn claims(forall: &ForAll) -> bool {
    block_has(&forall.body, |s| matches!(s, Stmt::Lock { kind: LockKind::Exclusive, .. }))
}

fn returns(forall: &ForAll) -> bool {
    block_has(&forall.body, |s| matches!(s, Stmt::Return(_)))
}
