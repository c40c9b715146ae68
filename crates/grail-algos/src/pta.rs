//! Andersen's points-to analysis by the grail program `programs/pta.grail`, on the CPU or a
//! GPU: the constraints become a graph (a node per variable, an edge per constraint weighing its
//! kind), the program grows each variable's set as sparse bit vectors and adds the copy edges
//! loads and stores imply, and the sets come back from its output collection. The sequential
//! reference is [`grail_pta::solve_sequential`]; results are compared with it set by set.
//!
//! **Cycle collapsing** ([`Options::collapse`], on by default): variables on a cycle of copy
//! edges end with equal sets, and a program's loads and stores close such cycles as they are
//! resolved (in C compiled without optimization most pointers travel through memory, so the
//! static copy edges form few cycles and the resolved ones a large one: lua's 6,000 variables,
//! over a million copy edges among them). The run is cut into epochs: the program returns after
//! the round in which the loads and stores added as many copy edges as the graph had (an
//! allowance that doubles once collapses stop merging much, [`Epochs`]); between two, the host
//! finds the strongly connected components of the copy edges known so far (the static ones and
//! those the program added), lets one variable of each stand for all of it (`rep`), and
//! resumes the program from the merged sets. What a merged variable has not yet sent along
//! every member's edges is sent again (its delta is the members' deltas and what not every
//! member held), so the resumed run reaches the same least solution. Every variable's set is
//! its representative's.
//!
//! Between epochs the host also renumbers the objects by how many sets hold them when the sets'
//! blocks are sparse (so that sets fill their blocks), and gives a variable that pulls from
//! many others slots, one node per block base that it ORs into, instead of a sorted list walked
//! once per source. `GRAIL_PTA_TRACE=1` prints each epoch's times and sizes.

use std::time::{Duration, Instant};

use grail_graph::{Csr, Graph};
use grail_ir::{Module, OptConfig};
use grail_pta::{Constraint, Constraints, PointsTo, VarId};
use grail_runtime::Table;
use grail_runtime::cpu::{RunOutput, Value};
use grail_runtime::gpu::GpuTimes;
use rayon::prelude::*;

use crate::Target;
use crate::error::{AlgoError, Result};
use crate::suite::ModuleProgram;

/// Where to run, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// `Cpu` or `Gpu`.
    pub target: Target,
    pub device: usize,
    /// CPU threads (0: one per core).
    pub threads: usize,
    pub opt: OptConfig,
    /// Collapse cycles of copy edges between epochs of rounds (see the module's docs); off, the
    /// program runs once to the end.
    pub collapse: bool,
    /// When an epoch ends, when collapsing.
    pub epochs: Epochs,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Cpu,
            device: 0,
            threads: 0,
            opt: OptConfig::all(),
            collapse: true,
            epochs: Epochs::default(),
        }
    }
}

/// When an epoch ends and the objects are renumbered. The defaults suit programs of thousands
/// of variables and more; tests make them small to cut many epochs out of small inputs.
#[derive(Debug, Clone, Copy)]
pub struct Epochs {
    /// An epoch ends after the round in which the loads and stores added as many copy edges as
    /// the graph had (it doubled, and may hold new cycles), or this many if more; this many
    /// doubles whenever a collapse merged less than a hundredth of the variables.
    pub edges: u64,
    /// The objects are renumbered (the most held first) when the sets' blocks doubled
    /// since the last time, are four times what their targets would fill, and are more than
    /// this many; 0: before every epoch (tests).
    pub renumber_blocks: usize,
    /// Variables that pull from at least this many others through copy edges stage what they
    /// pull into a slot per block base instead of a sorted list.
    pub slot_sources: usize,
}

impl Default for Epochs {
    fn default() -> Self {
        Epochs { edges: 4096, renumber_blocks: 1 << 14, slot_sources: 64 }
    }
}

/// The solution and what the run took.
#[derive(Debug, Clone)]
pub struct Solved {
    pub points_to: PointsTo,
    /// Rounds of evaluation, propagation and merging, over all epochs.
    pub rounds: u32,
    /// Runs of the program (one without collapsing).
    pub epochs: u32,
    /// Variables merged into another's cycle (their set is that variable's).
    pub collapsed: usize,
    /// The whole solve after compiling: the program's runs, and between them building its
    /// inputs and collapsing cycles.
    pub time: Duration,
    /// On a GPU: its kernels' share, and the copies, summed over the epochs.
    pub gpu_times: Option<GpuTimes>,
}

/// The kinds of constraint, as the program reads them from the edge weights.
const COPY: u32 = 0;
const LOAD: u32 = 1;
const STORE: u32 = 2;
/// An edge to a slot node.
const SLOT: u32 = 3;
/// `slots` of a node without them.
const NO_SLOTS: u32 = u32::MAX;
/// At most this many slot nodes (each has every node property).
const MAX_SLOT_NODES: usize = 1 << 22;

/// Solves `constraints` with the grail program.
pub fn solve(constraints: &Constraints, options: &Options) -> Result<Solved> {
    let n = constraints.num_vars();
    if n >= u32::MAX as usize / 2 {
        return Err(AlgoError::Usage(format!("{n} variables: the grail solver handles fewer than 2^31")));
    }
    let mut solver = Solver::new(constraints);
    if !solver.pending() {
        // No address-of constraint: every set is empty, nothing to run.
        return Ok(Solved {
            points_to: PointsTo::new(n),
            rounds: 0,
            epochs: 0,
            collapsed: 0,
            time: Duration::ZERO,
            gpu_times: None,
        });
    }
    let module = crate::suite::optimized_program("pta", &options.opt)?;
    let program = ModuleProgram::compile(module, options.target, options.device, options.threads)?;
    // Blocks when the objects were last renumbered: again when they doubled.
    let mut renumbered_at = solver.blocks.len();
    let started = Instant::now();
    let (mut rounds, mut epochs) = (0u32, 0u32);
    let mut gpu_times: Option<GpuTimes> = None;
    // `GRAIL_PTA_TRACE=1`: each epoch's rounds, times and sizes on standard error.
    let trace = std::env::var_os("GRAIL_PTA_TRACE").is_some();
    // The memory of the last epoch's input rows.
    let mut reused: Vec<u64> = Vec::new();
    // Edges an epoch may add before it ends (at least the graph's own).
    let mut allowance = options.epochs.edges;
    loop {
        let host = Instant::now();
        if options.collapse {
            let (before, representatives) = (solver.collapsed(), solver.n - solver.collapsed());
            solver.collapse();
            // When a collapse merged less than a hundredth of the variables, cycles no longer
            // form fast: the next epoch may add twice as many edges before looking again.
            if epochs > 0 && (solver.collapsed() - before) * 100 < representatives {
                allowance = allowance.max(solver.copies.len() as u64).saturating_mul(2);
            }
        }
        let every = options.epochs.renumber_blocks == 0;
        if every || (solver.blocks.len() > 2 * renumbered_at && solver.sparse(options.epochs.renumber_blocks)) {
            solver.renumber();
            renumbered_at = solver.blocks.len();
        }
        let slots = solver.slots(options.epochs.slot_sources, MAX_SLOT_NODES);
        let inputs = solver.inputs(program.module(), &slots, std::mem::take(&mut reused))?;
        let graph = solver.graph(&slots)?;
        let max_added = if options.collapse { (solver.copies.len() as u64).max(allowance) } else { u64::MAX };
        let host = host.elapsed();
        let run = Instant::now();
        let params: Vec<Option<Value>> =
            program.module().params.iter().map(|p| (p.name == "max_added").then_some(Value::U64(max_added))).collect();
        let (output, times) = program.run(&graph, &params, &inputs)?;
        let run = run.elapsed();
        // The sets' rows are the largest input: the next epoch writes its rows into their
        // memory instead of fresh pages.
        reused = inputs.into_iter().next().map(Table::into_words).unwrap_or_default();
        if trace {
            let kernels: Vec<String> = output
                .stats
                .kernels
                .iter()
                .filter(|k| k.invocations > 0)
                .map(|k| format!("{} {:.1} ms", k.name, k.time.as_secs_f64() * 1e3))
                .collect();
            eprintln!(
                "pta epoch {}: host {:.1} ms, run {:.1} ms (GPU kernels {:.1} ms; {}), {} copies, {} blocks before",
                epochs + 1,
                host.as_secs_f64() * 1e3,
                run.as_secs_f64() * 1e3,
                times.as_ref().map_or(0.0, |t| t.kernels.as_secs_f64() * 1e3),
                kernels.join(", "),
                solver.copies.len(),
                solver.blocks.len()
            );
        }
        if let Some(times) = times {
            let total = gpu_times.get_or_insert_with(GpuTimes::default);
            total.kernels += times.kernels;
            total.upload += times.upload;
            total.download += times.download;
        }
        epochs += 1;
        let absorbing = Instant::now();
        let epoch_rounds = solver.absorb(output)?;
        rounds += epoch_rounds;
        if trace {
            eprintln!("  {epoch_rounds} rounds, read back in {:.1} ms", absorbing.elapsed().as_secs_f64() * 1e3);
        }
        if !solver.pending() {
            break;
        }
    }
    let collapsed = solver.collapsed();
    let expanding = Instant::now();
    let points_to = solver.points_to();
    if trace {
        eprintln!("pta: every variable's set written out in {:.1} ms", expanding.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Solved { points_to, rounds, epochs, collapsed, time: started.elapsed(), gpu_times })
}

/// A block of a set as the host keeps it between epochs: 64 targets from `base * 64`, and
/// those of them not yet sent along the owner's edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    owner: u32,
    base: u32,
    bits: u64,
    delta: u64,
}

/// The analysis between epochs: the constraints over representatives, the copy edges the
/// program has added, and every representative's set.
struct Solver {
    n: usize,
    /// The solver's numbering of the variables: the objects (targets of an address-of) first,
    /// in the order of their ids, so that every set lies in the first blocks and is dense there
    /// (a set of 300 objects spread over 40,000 ids would take 300 blocks of one target each);
    /// the rest after them. `original[v]` is the constraints' id of the solver's `v`.
    original: Vec<u32>,
    /// How many variables are objects (the solver's ids `0..objects`).
    objects: usize,
    /// Each variable's representative (itself unless a cycle was collapsed into another).
    rep: Vec<u32>,
    /// Copy edges `(to, from)`: `to`'s set includes `from`'s (the static ones and those loads
    /// and stores added), over representatives, without repeats or self-loops.
    copies: Vec<(u32, u32)>,
    /// `(p, x)` for each `p = *x`, over representatives.
    loads: Vec<(u32, u32)>,
    /// `(x, q)` for each `*x = q`, over representatives.
    stores: Vec<(u32, u32)>,
    /// The representatives' sets, sorted by owner and base.
    blocks: Vec<Block>,
}

impl Solver {
    /// The constraints, and the address-of ones as the first deltas.
    fn new(constraints: &Constraints) -> Solver {
        let n = constraints.num_vars();
        let mut object = vec![false; n];
        for &c in constraints.constraints() {
            if let Constraint::AddressOf { src, .. } = c {
                object[src as usize] = true;
            }
        }
        let original: Vec<u32> = (0..n as u32)
            .filter(|&v| object[v as usize])
            .chain((0..n as u32).filter(|&v| !object[v as usize]))
            .collect();
        let mut renumbered = vec![0u32; n];
        for (new, &old) in original.iter().enumerate() {
            renumbered[old as usize] = new as u32;
        }
        let (mut copies, mut loads, mut stores, mut blocks) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &c in constraints.constraints() {
            let (dst, src) = c.vars();
            let (dst, src) = (renumbered[dst as usize], renumbered[src as usize]);
            match c {
                Constraint::AddressOf { .. } => {
                    let bit = 1u64 << (src % 64);
                    blocks.push(Block { owner: dst, base: src / 64, bits: bit, delta: bit });
                }
                Constraint::Copy { .. } => copies.push((dst, src)),
                Constraint::Load { .. } => loads.push((dst, src)),
                Constraint::Store { .. } => stores.push((dst, src)),
            }
        }
        let objects = object.iter().filter(|&&o| o).count();
        let mut solver = Solver { n, original, objects, rep: (0..n as u32).collect(), copies, loads, stores, blocks };
        solver.tidy();
        solver
    }

    /// Whether some set has targets not yet sent along its edges.
    fn pending(&self) -> bool {
        self.blocks.iter().any(|b| b.delta != 0)
    }

    /// Variables standing for another.
    fn collapsed(&self) -> usize {
        self.rep.iter().enumerate().filter(|&(v, &r)| v as u32 != r).count()
    }

    /// Sorts and dedups the edges and merges blocks of one owner and base: the union of their
    /// bits and of their deltas, plus what not every member of a merged cycle held (`members`
    /// counts, per representative, the variables it stands for; the blocks of one base from all
    /// of them mean each held those bits).
    fn tidy_with(&mut self, members: Option<&[u32]>) {
        for edges in [&mut self.copies, &mut self.loads, &mut self.stores] {
            edges.par_sort_unstable();
            edges.dedup();
        }
        self.copies.retain(|&(to, from)| to != from);
        sort_blocks(&mut self.blocks, self.n);
        let repeated = |w: &[Block]| (w[0].owner, w[0].base) == (w[1].owner, w[1].base);
        if members.is_none() && !self.blocks.par_windows(2).any(repeated) {
            return; // One block per owner and base already (an epoch's output).
        }
        let mut merged: Vec<Block> = Vec::with_capacity(self.blocks.len());
        let mut i = 0;
        while i < self.blocks.len() {
            let first = self.blocks[i];
            let (mut union, mut common, mut delta, mut count) = (0u64, u64::MAX, 0u64, 0u32);
            while i < self.blocks.len() && (self.blocks[i].owner, self.blocks[i].base) == (first.owner, first.base) {
                union |= self.blocks[i].bits;
                common &= self.blocks[i].bits;
                delta |= self.blocks[i].delta;
                count += 1;
                i += 1;
            }
            if let Some(members) = members {
                if count < members[first.owner as usize] {
                    common = 0;
                }
                // Bits some member lacked have not crossed that member's edges.
                delta |= union & !common;
            }
            merged.push(Block { owner: first.owner, base: first.base, bits: union, delta });
        }
        self.blocks = merged;
    }

    fn tidy(&mut self) {
        self.tidy_with(None);
    }

    /// Finds the cycles of copy edges (strongly connected components) and lets the smallest
    /// variable of each stand for it: edges, loads, stores and sets move to it.
    fn collapse(&mut self) {
        let component = strong_components(self.n, &self.copies);
        // The smallest member of each component, by component.
        let mut leader = vec![u32::MAX; self.n];
        for (v, &c) in component.iter().enumerate() {
            leader[c as usize] = leader[c as usize].min(v as u32);
        }
        let to_leader = |v: u32| leader[component[v as usize] as usize];
        // Per leader, the representatives it will stand for.
        let mut members = vec![0u32; self.n];
        for r in 0..self.n as u32 {
            if self.rep[r as usize] == r {
                members[to_leader(r) as usize] += 1;
            }
        }
        if members.iter().all(|&m| m <= 1) {
            return; // No cycle.
        }
        let rep: Vec<u32> = self.rep.par_iter().map(|&r| to_leader(r)).collect();
        self.rep = rep;
        let rep = &self.rep;
        for edges in [&mut self.copies, &mut self.loads, &mut self.stores] {
            edges.par_iter_mut().for_each(|(a, b)| (*a, *b) = (rep[*a as usize], rep[*b as usize]));
        }
        self.blocks.par_iter_mut().for_each(|b| b.owner = rep[b.owner as usize]);
        self.tidy_with(Some(&members));
    }

    /// Renumbers the objects by how many sets hold them, the most held first (ties by id), so
    /// that the objects sets hold together sit together: on lua's constraints the final sets
    /// take a fifth of the blocks they take in the objects' first order.
    fn renumber(&mut self) {
        let mut held = vec![0u32; self.objects];
        for b in &self.blocks {
            let mut bits = b.bits;
            while bits != 0 {
                held[(b.base * 64 + bits.trailing_zeros()) as usize] += 1;
                bits &= bits - 1;
            }
        }
        let mut order: Vec<u32> = (0..self.objects as u32).collect();
        order.sort_by_key(|&v| (std::cmp::Reverse(held[v as usize]), v));
        // The new id of each id; the variables that are not objects keep theirs.
        let mut new_id: Vec<u32> = (0..self.n as u32).collect();
        for (new, &old) in order.iter().enumerate() {
            new_id[old as usize] = new as u32;
        }
        let mut original = vec![0u32; self.n];
        for v in 0..self.n {
            original[new_id[v] as usize] = self.original[v];
        }
        self.original = original;
        let mut rep = vec![0u32; self.n];
        for v in 0..self.n {
            rep[new_id[v] as usize] = new_id[self.rep[v] as usize];
        }
        self.rep = rep;
        let new_id = &new_id;
        for edges in [&mut self.copies, &mut self.loads, &mut self.stores] {
            edges.par_iter_mut().for_each(|(a, b)| (*a, *b) = (new_id[*a as usize], new_id[*b as usize]));
        }
        // Each owner's targets to their new blocks, the delta's bits with them (an owner's
        // blocks are consecutive).
        let owners: Vec<std::ops::Range<usize>> = owner_ranges(&self.blocks);
        let blocks = &self.blocks;
        self.blocks = owners
            .par_iter()
            .flat_map_iter(|range| {
                let owner = new_id[blocks[range.start].owner as usize];
                // Each target's new id shifted left, its low bit whether it is in the delta.
                let mut targets: Vec<u32> = Vec::new();
                for b in &blocks[range.clone()] {
                    let mut bits = b.bits;
                    while bits != 0 {
                        let bit = bits & bits.wrapping_neg();
                        let target = new_id[(b.base * 64 + bit.trailing_zeros()) as usize];
                        targets.push(target << 1 | u32::from(b.delta & bit != 0));
                        bits &= bits - 1;
                    }
                }
                targets.sort_unstable();
                let mut moved: Vec<Block> = Vec::new();
                for t in targets {
                    let (target, in_delta) = (t >> 1, t & 1 == 1);
                    let base = target / 64;
                    if moved.last().is_none_or(|b| b.base != base) {
                        moved.push(Block { owner, base, bits: 0, delta: 0 });
                    }
                    let last = moved.last_mut().expect("pushed above");
                    last.bits |= 1 << (target % 64);
                    if in_delta {
                        last.delta |= 1 << (target % 64);
                    }
                }
                moved
            })
            .collect();
        self.tidy();
    }

    /// Whether the sets take more than four times the blocks their targets would fill, and
    /// more than `at_least`.
    fn sparse(&self, at_least: usize) -> bool {
        let targets: u64 = self.blocks.par_iter().map(|b| u64::from(b.bits.count_ones())).sum();
        self.blocks.len() > at_least && self.blocks.len() as u64 > 4 * targets.div_ceil(64)
    }

    /// The constraint graph over representatives: an edge `p -> q` weighing its kind for each
    /// copy `p ⊇ q`, load `p = *q` and store `*p = q`; after them each slot owner's edges to its
    /// slot nodes, which follow the variables.
    fn graph(&self, slots: &Slots) -> Result<Graph> {
        let n = self.n;
        let total = n + slots.nodes();
        let edges = self.copies.iter().map(|&(p, q)| (p, q, COPY));
        let edges = edges.chain(self.loads.iter().map(|&(p, q)| (p, q, LOAD)));
        let edges = edges.chain(self.stores.iter().map(|&(p, q)| (p, q, STORE)));
        let slot_edges = slots.owners.iter().flat_map(|&p| std::iter::repeat_n(p as usize, slots.width as usize));
        let offsets: Vec<u64> = offsets_of(total, edges.clone().map(|(p, _, _)| p as usize).chain(slot_edges))
            .into_iter()
            .map(|o| o as u64)
            .collect();
        let m = offsets[total] as usize;
        let mut next: Vec<u64> = offsets[..total].to_vec();
        let (mut targets, mut weights) = (vec![0u32; m], vec![0u32; m]);
        for (p, q, kind) in edges {
            let at = next[p as usize] as usize;
            targets[at] = q;
            weights[at] = kind;
            next[p as usize] += 1;
        }
        // Each owner's slot edges last, in order of base, to its own slot nodes.
        for (k, &p) in slots.owners.iter().enumerate() {
            for base in 0..slots.width as usize {
                let at = next[p as usize] as usize;
                targets[at] = (n + k * slots.width as usize + base) as u32;
                weights[at] = SLOT;
                next[p as usize] += 1;
            }
        }
        let csr = Csr::from_parts(offsets, targets, Some(weights))
            .map_err(|e| AlgoError::Internal(format!("the constraint graph: {e}")))?;
        Ok(Graph::from_csr(csr))
    }

    /// Which representatives get slots: those pulling from at least `sources` others through
    /// static copy edges, the most first, as many as `max_nodes` slot nodes allow.
    fn slots(&self, sources: usize, max_nodes: usize) -> Slots {
        let width = self.objects.div_ceil(64) as u32;
        let mut pulled = vec![0u32; self.n];
        for &(to, _) in &self.copies {
            pulled[to as usize] += 1;
        }
        let mut owners: Vec<u32> =
            (0..self.n as u32).filter(|&p| pulled[p as usize] as usize >= sources.max(1)).collect();
        owners.sort_by_key(|&p| (std::cmp::Reverse(pulled[p as usize]), p));
        owners.truncate(max_nodes / (width.max(1) as usize));
        let mut degree = vec![0u32; self.n];
        for &(p, _) in self.copies.iter().chain(&self.loads).chain(&self.stores) {
            degree[p as usize] += 1;
        }
        let first = owners.iter().map(|&p| degree[p as usize]).collect();
        Slots { owners, first, width }
    }

    /// The program's inputs: the input collection `sets` (element 0 the empty sentinel, then
    /// the blocks by owner and base, linked in order by `next` and, those with a delta, by
    /// `next_delta`), then the node properties `head`, `deltas`, `changed`, `rep` and `slots` in
    /// the order the module lists them.
    fn inputs(&self, module: &Module, slots: &Slots, mut words: Vec<u64>) -> Result<Vec<Table>> {
        let internal = |what: &str| AlgoError::Internal(format!("pta's inputs: {what}"));
        let [sets_id] = module.collection_inputs[..] else {
            return Err(internal("not one input collection"));
        };
        let owners = owner_ranges(&self.blocks);
        let blocks = &self.blocks;
        let row = |i: usize| (i + 1) as u64;
        // Rows in order (the sentinel first), each owner's linked by `next` and its delta
        // blocks by `next_delta`, written in place by owner on every core.
        words.clear();
        words.resize(6 * (blocks.len() + 1), 0);
        let mut rest = &mut words[6..];
        let mut jobs = Vec::with_capacity(owners.len());
        for range in &owners {
            let (slice, tail) = rest.split_at_mut(6 * range.len());
            jobs.push((range.clone(), slice));
            rest = tail;
        }
        jobs.into_par_iter().for_each(|(range, slice)| {
            let mut following = 0u64;
            for i in range.clone().rev() {
                let b = blocks[i];
                let next = if i + 1 < range.end { row(i + 1) } else { 0 };
                let at = 6 * (i - range.start);
                slice[at..at + 6].copy_from_slice(&[
                    u64::from(b.owner),
                    u64::from(b.base),
                    b.bits,
                    b.delta,
                    next,
                    following,
                ]);
                if b.delta != 0 {
                    following = row(i);
                }
            }
        });
        // Every node's properties: the variables', then the slot nodes' (no set, their own rep).
        let total = self.n + slots.nodes();
        let (mut head, mut deltas, mut changed) = (vec![0u64; total], vec![0u64; total], vec![0u64; total]);
        for range in &owners {
            let owner = blocks[range.start].owner as usize;
            head[owner] = row(range.start);
            if let Some(first) = range.clone().find(|&i| blocks[i].delta != 0) {
                deltas[owner] = row(first);
                changed[owner] = 1;
            }
        }
        let leaves = Table::for_collection(module, sets_id).leaves().to_vec();
        let table = |leaves: Vec<grail_ir::Type>, words: Vec<u64>| {
            Table::from_words(leaves, words).map_err(|e| internal(&e.to_string()))
        };
        let mut tables = vec![table(leaves, words)?];
        for &id in &module.property_inputs {
            let property = &module.properties[id.index()];
            let words = match property.name.as_str() {
                "head" => std::mem::take(&mut head),
                "deltas" => std::mem::take(&mut deltas),
                "changed" => std::mem::take(&mut changed),
                "rep" => self.rep.iter().map(|&r| u64::from(r)).chain(self.n as u64..total as u64).collect(),
                "slots" => {
                    let mut first = vec![u64::from(NO_SLOTS); total];
                    for (&p, &at) in slots.owners.iter().zip(&slots.first) {
                        first[p as usize] = u64::from(at);
                    }
                    first
                }
                other => return Err(internal(&format!("an unknown input property `{other}`"))),
            };
            tables.push(table(vec![property.ty], words)?);
        }
        Ok(tables)
    }

    /// Takes an epoch's output: the sets as the program left them, and the copy edges it
    /// added (kept as static edges from now on). Returns the epoch's rounds.
    fn absorb(&mut self, output: RunOutput) -> Result<u32> {
        let internal = |what: String| AlgoError::Internal(format!("pta's output: {what}"));
        let rounds = match output.result {
            Some(Value::U32(rounds)) => rounds,
            _ => return Err(internal("main did not return its rounds".into())),
        };
        let [sets, pulls] = output.collections.as_slice() else {
            return Err(internal("not its sets and pulls".into()));
        };
        let n = self.n as u64;
        let width = sets.leaves().len();
        self.blocks = sets
            .words()
            .par_chunks(width)
            .filter(|row| row[2] != 0) // The sentinel has no bits.
            .map(|row| {
                let (owner, base, bits, delta) = (row[0], row[1], row[2], row[3]);
                if owner >= n || base * 64 >= n {
                    return Err(internal(format!(
                        "a block of variable {owner} at base {base}: there are {n} variables"
                    )));
                }
                Ok(Block { owner: owner as u32, base: base as u32, bits, delta })
            })
            .collect::<Result<_>>()?;
        for row in pulls.rows() {
            let (from, to) = (row[0], row[1]);
            if from >= n || to >= n {
                return Err(internal(format!("a copy edge {from} -> {to}: there are {n} variables")));
            }
            if from != to {
                self.copies.push((to as u32, from as u32));
            }
        }
        self.tidy();
        Ok(rounds)
    }

    /// Every variable's set: its representative's, in the constraints' numbering.
    fn points_to(self) -> PointsTo {
        let mut starts = vec![usize::MAX; self.n];
        for (i, b) in self.blocks.iter().enumerate().rev() {
            starts[b.owner as usize] = i;
        }
        let (blocks, original) = (&self.blocks, &self.original);
        // The objects (the solver's ids `0..objects`, the only targets) in the constraints'
        // order: a set is marked by rank in a bit map and read back in that order, sorted
        // without sorting (the renumbering does not keep the order).
        let mut by_original: Vec<u32> = (0..self.objects as u32).collect();
        by_original.sort_unstable_by_key(|&o| original[o as usize]);
        let mut rank = vec![0u32; self.objects];
        for (r, &o) in by_original.iter().enumerate() {
            rank[o as usize] = r as u32;
        }
        let ids: Vec<VarId> = by_original.iter().map(|&o| original[o as usize]).collect();
        let words = self.objects.div_ceil(64);
        let mut sets = vec![Vec::new(); self.n];
        // Each representative's set once.
        let mut of_rep: Vec<Vec<VarId>> = vec![Vec::new(); self.n];
        of_rep.par_iter_mut().enumerate().filter(|(r, _)| self.rep[*r] == *r as u32).for_each_init(
            || vec![0u64; words],
            |marks, (r, set)| {
                let (mut i, mut count) = (starts[r], 0usize);
                while i < blocks.len() && blocks[i].owner == r as u32 {
                    let mut bits = blocks[i].bits;
                    count += bits.count_ones() as usize;
                    while bits != 0 {
                        let k = rank[(blocks[i].base * 64 + bits.trailing_zeros()) as usize] as usize;
                        marks[k / 64] |= 1 << (k % 64);
                        bits &= bits - 1;
                    }
                    i += 1;
                }
                if count == 0 {
                    return;
                }
                set.reserve_exact(count);
                for (w, word) in marks.iter_mut().enumerate() {
                    let mut bits = std::mem::take(word);
                    while bits != 0 {
                        set.push(ids[w * 64 + bits.trailing_zeros() as usize]);
                        bits &= bits - 1;
                    }
                }
            },
        );
        let copied: Vec<Vec<VarId>> = self.rep.par_iter().map(|&r| of_rep[r as usize].clone()).collect();
        for (v, set) in copied.into_iter().enumerate() {
            sets[original[v] as usize] = set;
        }
        PointsTo::from_sets(sets)
    }
}

/// Where each of `n` keys' run starts when items are grouped by key (`n + 1` offsets, the last
/// the number of items): the keys counted, then summed.
fn offsets_of(n: usize, keys: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut offsets = vec![0usize; n + 1];
    for key in keys {
        offsets[key + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    offsets
}

/// Sorts `blocks` by owner (a counting sort over the `n` variables) and each owner's by base.
fn sort_blocks(blocks: &mut Vec<Block>, n: usize) {
    let offsets = offsets_of(n, blocks.iter().map(|b| b.owner as usize));
    let mut next = offsets.clone();
    let mut sorted = vec![Block { owner: 0, base: 0, bits: 0, delta: 0 }; blocks.len()];
    for &b in blocks.iter() {
        sorted[next[b.owner as usize]] = b;
        next[b.owner as usize] += 1;
    }
    // Each owner's slice sorted on its own, in parallel.
    let mut rest: &mut [Block] = &mut sorted;
    let mut slices = Vec::new();
    for v in 0..n {
        let (slice, tail) = rest.split_at_mut(offsets[v + 1] - offsets[v]);
        if slice.len() > 1 {
            slices.push(slice);
        }
        rest = tail;
    }
    slices.into_par_iter().for_each(|slice| slice.sort_unstable_by_key(|b| b.base));
    *blocks = sorted;
}

/// The variables that stage into slots (see `pta.grail`), and how many slots each has: one per
/// block base of the objects.
struct Slots {
    owners: Vec<u32>,
    /// Each owner's constraint edges, after which its slot edges start.
    first: Vec<u32>,
    width: u32,
}

impl Slots {
    /// The slot nodes, after the variables in the graph.
    fn nodes(&self) -> usize {
        self.owners.len() * self.width as usize
    }
}

/// The ranges of `blocks` (sorted by owner) that each owner holds.
fn owner_ranges(blocks: &[Block]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for i in 1..=blocks.len() {
        if i == blocks.len() || blocks[i].owner != blocks[start].owner {
            ranges.push(start..i);
            start = i;
        }
    }
    ranges
}

/// The strongly connected components of the graph of edges `from -> to` (given as `(to,
/// from)`) over `n` nodes: a component number per node (Tarjan's algorithm, iterative).
fn strong_components(n: usize, edges: &[(u32, u32)]) -> Vec<u32> {
    let offsets = offsets_of(n, edges.iter().map(|&(_, from)| from as usize));
    let mut next = offsets[..n].to_vec();
    let mut successors = vec![0u32; edges.len()];
    for &(to, from) in edges {
        successors[next[from as usize]] = to;
        next[from as usize] += 1;
    }
    let mut walk = Tarjan {
        index: vec![UNSEEN; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        component: vec![UNSEEN; n],
        stack: Vec::new(),
        calls: Vec::new(),
        counter: 0,
        components: 0,
    };
    for root in 0..n as u32 {
        if walk.index[root as usize] != UNSEEN {
            continue;
        }
        walk.visit(root, &offsets);
        while let Some(&mut (v, ref mut at)) = walk.calls.last_mut() {
            if *at < offsets[v as usize + 1] {
                let w = successors[*at];
                *at += 1;
                if walk.index[w as usize] == UNSEEN {
                    walk.visit(w, &offsets);
                } else if walk.on_stack[w as usize] {
                    walk.low[v as usize] = walk.low[v as usize].min(walk.index[w as usize]);
                }
                continue;
            }
            walk.finish(v);
        }
    }
    walk.component
}

const UNSEEN: u32 = u32::MAX;

/// Tarjan's walk: each node's visiting order and lowest reachable order, the stack of nodes
/// not yet in a component, and the walk's own stack of nodes and their next edge.
struct Tarjan {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    component: Vec<u32>,
    stack: Vec<u32>,
    calls: Vec<(u32, usize)>,
    counter: u32,
    components: u32,
}

impl Tarjan {
    /// Numbers `v`, puts it on the stack, and starts walking its successors.
    fn visit(&mut self, v: u32, offsets: &[usize]) {
        self.index[v as usize] = self.counter;
        self.low[v as usize] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v as usize] = true;
        self.calls.push((v, offsets[v as usize]));
    }

    /// `v`'s successors are walked: its lowest order goes to its caller, and if it is the
    /// root of a component, the component comes off the stack.
    fn finish(&mut self, v: u32) {
        self.calls.pop();
        if let Some(&(parent, _)) = self.calls.last() {
            self.low[parent as usize] = self.low[parent as usize].min(self.low[v as usize]);
        }
        if self.low[v as usize] == self.index[v as usize] {
            while let Some(w) = self.stack.pop() {
                self.on_stack[w as usize] = false;
                self.component[w as usize] = self.components;
                if w == v {
                    break;
                }
            }
            self.components += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strong_components;

    #[test]
    fn strong_components_finds_cycles_and_leaves_the_rest_alone() {
        // 0 -> 1 -> 2 -> 0 is a cycle, 3 -> 4 is not, 5 -> 5 alone; edges as (to, from).
        let edges = [(1, 0), (2, 1), (0, 2), (4, 3), (5, 5), (3, 2)];
        let c = strong_components(6, &edges);
        assert_eq!(c[0], c[1]);
        assert_eq!(c[1], c[2]);
        let mut others = vec![c[0], c[3], c[4], c[5]];
        others.sort_unstable();
        others.dedup();
        assert_eq!(others.len(), 4);
    }
}
