//! Worklist loops as one queue (`queue=on`, GPU): an `iterate k(...)` with an empty body, whose
//! kernel only lowers (or only raises) properties with atomics and pushes what it changed, runs
//! without rounds. Every block of the control kernel takes the next items from the current
//! worklist as soon as they are pushed into it, and the loop ends when no item is left and no
//! block is working on one (`grail_queue_take` in `grail_cuda.h`): no grid barrier between
//! levels, no count read back per round. On a graph of high diameter (a road network's BFS, with
//! thousands of levels of a few thousand nodes each) the rounds' barriers are most of the time.
//!
//! Without rounds an item pushed late may run before one pushed early: a node can be lowered by
//! a longer path first and again by a shorter one, and runs once more. What the loop computes
//! stays the same where every value a kernel offers grows with the values it reads (a level plus
//! one, a distance plus a weight, a neighbour's label): the least fixed point, which any order of
//! the items reaches. That is what `--mode async` promises on several devices; on one GPU,
//! `grail run --mode async` turns this on. A kernel that writes plainly, adds, reduces, retries,
//! locks, or touches sets or collections is left to rounds ([`eligible`] says why).
//!
//! The pass marks nothing in the IR: the CUDA emitter asks [`queued`] at each outlined `iterate`
//! when [`OptConfig::queue`] is on.

use crate::analysis::{kernel_effects, kernel_property_writes};
use crate::ir::*;
use crate::opt::OptConfig;

pub(crate) fn run(module: &mut Module, config: &OptConfig, notes: &mut Vec<String>) {
    if !config.queue {
        return;
    }
    let mut seen = Vec::new();
    walk_block(&module.main.block, &mut |stmt| {
        if let Stmt::Iterate(iterate) = stmt
            && let Until::Empty { kernel, .. } = &iterate.until
            && !seen.contains(&(*kernel, iterate.body.is_empty()))
        {
            seen.push((*kernel, iterate.body.is_empty()));
        }
    });
    for (kernel, empty) in seen {
        let why = if empty { eligible(module, kernel).err() } else { Some("host code runs between its rounds".into()) };
        if let Some(why) = why {
            notes.push(format!("kernel `{}`: its loop keeps its rounds: {why}", module.kernels[kernel.index()].name));
        }
    }
}

/// The kernel `iterate` runs as one queue, if it does: the configuration asks for queues, the
/// loop runs until its worklist is empty with no host code between invocations, and its kernel
/// is [`eligible`].
pub fn queued(module: &Module, iterate: &Iterate) -> Option<KernelId> {
    let Until::Empty { kernel, .. } = &iterate.until else { return None };
    (module.opt.queue && iterate.body.is_empty() && eligible(module, *kernel).is_ok()).then_some(*kernel)
}

/// The kernels some outlined region's `iterate` runs as one queue ([`queued`]), each once: the
/// CUDA emitter gives exactly these their queue functions.
pub fn queued_kernels(module: &Module) -> Vec<KernelId> {
    let mut kernels = Vec::new();
    for region in crate::opt::outline::outlined_regions(&module.main.block) {
        walk_block(std::slice::from_ref(region), &mut |stmt| {
            if let Stmt::Iterate(iterate) = stmt
                && let Some(k) = queued(module, iterate)
                && !kernels.contains(&k)
            {
                kernels.push(k);
            }
        });
    }
    kernels
}

/// Whether kernel `id`'s items may run in any order, each as soon as it is pushed: one phase
/// over its worklist that pushes, with no reduction, retry, lock, set or collection, and whose
/// writes each property only by `atomic_min` or only by `atomic_max`.
pub fn eligible(module: &Module, id: KernelId) -> Result<(), String> {
    let kernel = &module.kernels[id.index()];
    if kernel.reduction.is_some() {
        return Err("it returns a reduction, whose value depends on the rounds".into());
    }
    let [Stmt::ForAll(phase)] = kernel.body.block.as_slice() else {
        return Err("it has several phases".into());
    };
    if phase.space != Space::Worklist {
        return Err("its loop is not over its worklist".into());
    }
    let (mut pushes, mut other) = (false, None);
    walk_block(&kernel.body.block, &mut |stmt| match stmt {
        Stmt::Push { .. } => pushes = true,
        Stmt::Retry { .. } => other = Some("it retries items"),
        Stmt::Lock { .. } => other = Some("it takes locks"),
        _ => {}
    });
    if let Some(why) = other {
        return Err(why.into());
    }
    if !pushes {
        return Err("it pushes nothing".into());
    }
    if !module.collections.is_empty() || module.growth.is_some() {
        return Err("the program has collections or changes the graph".into());
    }
    if kernel_effects(module, id).sets {
        return Err("it uses a union-find set".into());
    }
    if module.opt.local && crate::opt::local::eligible(module, id).is_ok() {
        return Err("its pushes go to local worklists (`local=on`)".into());
    }
    for (p, writes) in kernel_property_writes(module, id).iter().enumerate() {
        if writes.plain || writes.add || writes.and || writes.or || writes.cas || (writes.min && writes.max) {
            let name = &module.properties[p].name;
            return Err(format!(
                "it writes `{name}` otherwise than only by atomic_min or only by atomic_max, so the order of its items \
                 matters"
            ));
        }
    }
    Ok(())
}
