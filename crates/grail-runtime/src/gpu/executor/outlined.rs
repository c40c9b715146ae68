//! Running an outlined region: one cooperative launch of its control kernel (`grail_o<id>`,
//! see grail-codegen's `cuda/outline.rs`) instead of a launch per invocation.
//!
//! Before the launch the host makes both worklists (and, when the region retries, both retry
//! lists) large enough for any frontier of nodes, gives each a zeroed spill table, and writes the
//! region's state: the current list and its length, the claims' invocation number, `main`'s
//! locals, every kernel's reduction slots at its identity. The grid is as many blocks as fit on
//! the device at once (measured occupancy), so the control kernel's grid barriers never wait for
//! a block that cannot run. After it, the host reads the state back: which list is current and
//! its length (gathering items the device spilled past the list's capacity), the locals, the
//! per-kernel counts, and whether the device heap ran out.

use std::time::{Duration, Instant};

use cudarc::driver::CudaFunction;
use grail_ir::{KernelId, Module, OutlineId, Stmt, Type, walk_block};

use super::{BLOCK, Current, DeviceList, GpuRun, Layout, kept_buffer, plain_bytes, read_plain};
use crate::cpu::KernelStats;
use crate::cpu::ffi::GrailValue;
use crate::error::{Result, RuntimeError};
use crate::gpu::buffer::{DeviceBuffer, Event, arg, launch, launch_cooperative};
use crate::gpu::ffi::{GRAIL_RING, GRAIL_SPILL_SEGS, GpuList, GpuRegion, GpuWorklist};
use crate::host::identity;
use crate::host::value::Value;

/// An outlined region's control kernel, loaded.
pub(in crate::gpu) struct RegionCode {
    pub id: OutlineId,
    /// `iterate#0`, `pipe#1`: how errors and statistics name it.
    pub name: String,
    pub control: CudaFunction,
    /// Blocks of the control kernel that fit on the device at once (0: not even one).
    pub max_grid: u32,
    /// Of those, per multiprocessor, and the multiprocessors.
    pub blocks_per_sm: u32,
    pub sms: u32,
    /// The kernels it invokes.
    pub kernels: Vec<KernelId>,
    /// The properties its host code stores to.
    pub host_writes: Vec<bool>,
    /// Whether a kernel it invokes retries.
    pub retries: bool,
}

/// The outlined regions of `module` (marked `iterate`/`pipe` statements of `main`, not looking
/// inside them): the kernels each invokes and the properties its host code writes.
pub(in crate::gpu) fn outlined_regions(module: &Module) -> Vec<(OutlineId, String, Vec<KernelId>, Vec<bool>)> {
    let mut found = Vec::new();
    collect(&module.main.block, module, &mut found);
    found
}

fn collect(block: &[Stmt], module: &Module, found: &mut Vec<(OutlineId, String, Vec<KernelId>, Vec<bool>)>) {
    for stmt in block {
        let id = match stmt {
            Stmt::Iterate(iterate) if iterate.outlined => Some(iterate.id),
            Stmt::Pipe(pipe) if pipe.outlined => Some(pipe.id),
            _ => None,
        };
        let Some(id) = id else {
            for child in stmt.blocks() {
                collect(child, module, found);
            }
            continue;
        };
        let mut writes = vec![false; module.properties.len()];
        walk_block(std::slice::from_ref(stmt), &mut |s| {
            if let Stmt::Assign { place, .. } = s
                && let Some(p) = grail_ir::analysis::stored_property(place)
            {
                writes[p.index()] = true;
            }
        });
        let kernels = grail_ir::opt::outline::kernels_of(stmt);
        found.push((id, grail_ir::opt::outline::region_name(stmt), kernels, writes));
    }
}

/// The spill tables of the two worklists and the two retry lists, in that order.
const TABLES: usize = 4;

/// Where a region's state lies in its allocation: the spill tables, `main`'s locals (the
/// frame), the kernels' reduction slots, their counts, the grid barrier's words, and
/// `grail_region`.
pub(super) struct StateLayout {
    bytes: usize,
    tables: usize,
    frame: usize,
    acc: usize,
    stats: usize,
    /// Words of counts (four per kernel).
    counted: usize,
    arrive: usize,
    region: usize,
}

impl StateLayout {
    fn of(module: &Module, code: &RegionCode, locals: usize) -> StateLayout {
        let value = std::mem::size_of::<GrailValue>();
        let counted = module.kernels.len().max(1) * 4;
        let mut layout = Layout::default();
        let tables = layout.take(TABLES * GRAIL_SPILL_SEGS * 8);
        let frame = layout.take(locals.max(1) * value);
        let acc = layout.take((module.kernels.len() * GRAIL_RING).max(1) * value);
        let stats = layout.take(counted * 8);
        let arrive = layout.take(code.max_grid as usize * 4);
        let region = layout.take(std::mem::size_of::<GpuRegion>());
        StateLayout { bytes: layout.bytes, tables, frame, acc, stats, counted, arrive, region }
    }
}

impl GpuRun<'_> {
    /// Runs outlined region `id` on the device; false when the program has no control kernel for
    /// it or the device cannot launch cooperatively (the interpreter then runs it, launch by
    /// launch).
    pub(super) fn run_outlined_region(&mut self, id: OutlineId, locals: &mut [Value]) -> Result<bool> {
        let entered = Instant::now();
        let program = self.program;
        let module = self.module;
        let Some(code) = program.regions.iter().find(|r| r.id == id) else { return Ok(false) };
        if !program.device.info().cooperative_launch {
            return Ok(false);
        }
        if code.max_grid == 0 {
            return Err(RuntimeError::Unsupported(format!(
                "the control kernel of outlined {} needs more registers or shared memory than one \
                 multiprocessor of {} has, so its blocks cannot all be resident for its grid barrier; \
                 run with --opt outline=none (or a smaller block size)",
                code.name,
                self.device_name()
            )));
        }
        let at = self.ready_region(code, locals.len())?;
        let mut frame = Vec::with_capacity(locals.len().max(1));
        for value in locals.iter() {
            frame.push(value.to_grail().unwrap_or(GrailValue { u: 0 }));
        }
        if frame.is_empty() {
            frame.push(GrailValue { u: 0 });
        }
        let mut acc = Vec::with_capacity(module.kernels.len() * GRAIL_RING);
        for kernel in &module.kernels {
            let start = kernel.reduction.map_or(GrailValue { u: 0 }, |(op, ty)| identity(op, ty));
            acc.extend(std::iter::repeat_n(start, GRAIL_RING));
        }
        if acc.is_empty() {
            acc.push(GrailValue { u: 0 });
        }
        let state = DeviceBuffer::view(self.region_state.as_ref().expect("made ready above"));
        let base = state.ptr();
        let table = |t: usize| base + (at.tables + t * GRAIL_SPILL_SEGS * 8) as u64;
        let current = self.worklists.last().expect("the worklist stack is never empty");
        let list = |l: &DeviceList, t: usize| GpuList { items: l.buffer.ptr(), cap: l.cap, spill: table(t) };
        // As many blocks as are resident at once, or as many per multiprocessor as the
        // configuration's `grid` asks when that is fewer. A region that exchanges with other
        // GPUs takes the grid its run chose (`multi::RegionGrid`: one block per multiprocessor
        // on graphs of high diameter) unless the configuration asks otherwise.
        let per_sm = match module.opt.grid {
            0 if self.region_peers != 0 && self.region_grid == crate::multi::RegionGrid::OnePerMultiprocessor => 1,
            0 => code.blocks_per_sm,
            wanted => wanted.min(code.blocks_per_sm),
        };
        let grid = per_sm * code.sms;
        let region = GpuRegion {
            lists: [list(current, 0), list(&self.spare, 1)],
            retry_lists: [list(&self.retries[0], 2), list(&self.retries[1], 3)],
            len: current.len,
            cur: 0,
            invocation: self.invocation,
            grid_blocks: grid,
            frame: base + at.frame as u64,
            acc: base + at.acc as u64,
            stats: base + at.stats as u64,
            arrive: base + at.arrive as u64,
            budget: self.region_budget,
            peers: self.region_peers,
            ..GpuRegion::default()
        };
        // The spill tables, counts and barrier words start zeroed.
        let mut image = vec![0u8; at.bytes];
        let mut put = |offset: usize, data: &[u8]| image[offset..offset + data.len()].copy_from_slice(data);
        put(at.frame, plain_bytes(&frame));
        put(at.acc, plain_bytes(&acc));
        put(at.region, plain_bytes(std::slice::from_ref(&region)));
        state.upload(0, &image)?;
        let region_ptr = base + at.region as u64;
        let mut ctx = self.ctx;
        ctx.items = 0;
        ctx.item_count = 0;
        ctx.retrying = 0;
        let start = Event::new()?;
        let end = Event::new()?;
        let prelude = entered.elapsed();
        if let Some((line, part, parts)) = self.region_start.take() {
            line.arrive_and_wait(part, parts);
        }
        start.record()?;
        let launched = crate::multi::trace::Launch { prelude, waited: entered.elapsed() - prelude, at: Instant::now() };
        // SAFETY: (grail_ctx, grail_region *): the context points at this run's live buffers and
        // the region at its state, whose lists, tables, frame, slots and counts live until the
        // launch completes (we wait below).
        unsafe {
            launch_cooperative(&code.control, grid, module.opt.block, &mut [arg(&ctx), arg(&region_ptr)])?;
        }
        end.record()?;
        self.wait(&code.name)?;
        let gpu_ms = start.elapsed_ms(&end)?;
        // The state back in one copy: the region, the counts, the locals.
        state.download(0, &mut image)?;
        let mut after = [GpuRegion::default()];
        read_plain(&image, at.region, &mut after);
        let after = after[0];
        self.region_stopped = after.stopped != 0;
        if after.peer_missed != 0 {
            return Err(RuntimeError::program(format!(
                "internal error: the exchanges that looked only at the worklists missed {} changes that comparing \
                 every ghost and mirror found (GRAIL_PEER_LISTS=check)",
                after.peer_missed
            )));
        }
        self.region_exchange = Duration::from_nanos(after.peer_ns);
        if self.region_peers != 0 && crate::multi::trace::on() {
            let name = self.device_name();
            crate::multi::trace::peer_region(
                &name,
                &launched,
                gpu_ms,
                after.peer_steps,
                after.peer_ns,
                after.peer_phase_ns,
            );
        }
        let mut counts = vec![0u64; at.counted];
        read_plain(&image, at.stats, &mut counts);
        read_plain(&image, at.frame, &mut frame);
        // The worklists: the current one comes back as the top of the stack, the other as spare.
        self.invocation = after.invocation;
        self.ctx.invocation = after.invocation;
        let mut current_table = 0;
        if after.cur == 1 {
            let top = self.worklists.last_mut().expect("the worklist stack is never empty");
            std::mem::swap(top, &mut self.spare);
            current_table = 1;
        }
        let heap_ran_out = after.overflow >= 2;
        if !heap_ran_out && !self.region_stopped {
            let top = self.worklists.last_mut().expect("the worklist stack is never empty");
            top.len = after.len;
            if after.len > top.cap {
                self.gather_spilled(after.len, table(current_table))?;
            }
        }
        for t in 0..TABLES {
            let wl = GpuWorklist { spill: table(t), ..GpuWorklist::default() };
            // SAFETY: (grail_wl), one thread: frees the table's segments.
            unsafe { launch(&program.free_spill, 1, 1, &mut [arg(&wl)])? };
        }
        self.wait(&code.name)?;
        if self.region_stopped {
            // Another part failed: what this part's region left is not a result.
            return Ok(true);
        }
        if heap_ran_out {
            return Err(RuntimeError::OutOfMemory {
                what: format!("the device heap, while outlined {} spilled its worklist", code.name),
            });
        }
        self.check_collections()?;
        // What the region's kernels and host code wrote is current only on the device now.
        for &kernel in &code.kernels {
            let effects = &program.kernels[kernel.index()].effects;
            for (p, written) in effects.writes.iter().enumerate() {
                if *written {
                    self.columns[p].current = Current::Device;
                    self.columns[p].element_reads = 0;
                }
            }
            if effects.sets
                && let Some(sets) = &mut self.sets
            {
                sets.current = Current::Device;
                sets.element_reads = 0;
            }
        }
        for (p, written) in code.host_writes.iter().enumerate() {
            if *written {
                self.columns[p].current = Current::Device;
                self.columns[p].element_reads = 0;
            }
        }
        let time = Duration::from_secs_f64(f64::from(gpu_ms) / 1e3);
        self.times.kernels += time;
        for &kernel in &code.kernels {
            let k = kernel.index();
            let stats = &mut self.stats[k];
            stats.invocations += counts[4 * k];
            stats.items += counts[4 * k + 1];
            stats.pushes += counts[4 * k + 2];
            stats.retries += counts[4 * k + 3];
        }
        // The region's launch and time, under its own name (the kernels' times are inside it).
        let name = format!("{} (outlined, {grid}x{})", code.name, module.opt.block);
        match self.stats.iter_mut().find(|s| s.name == name) {
            Some(stats) => {
                stats.invocations += 1;
                stats.time += time;
            }
            None => self.stats.push(KernelStats { name, invocations: 1, time, ..KernelStats::default() }),
        }
        for (i, local) in locals.iter_mut().enumerate() {
            let ty = module.main.locals[i].ty;
            if matches!(ty, Type::Struct(_) | Type::Unit) {
                continue;
            }
            if let Some(value) = Value::from_grail(ty, frame[i]) {
                *local = value;
            }
        }
        Ok(true)
    }

    /// Makes the part ready to launch region `code`: its columns on the device, both worklists
    /// (and retry lists) large enough for any frontier, and the kept allocation for the
    /// region's state (`locals` of `main`'s locals), whose layout it returns. A partitioned run
    /// makes its parts ready before any starts the region, so that none starts late (the others
    /// would wait for it at their first barrier).
    pub(super) fn ready_region(&mut self, code: &RegionCode, locals: usize) -> Result<StateLayout> {
        self.columns_to_device()?;
        let capacity = u64::from(self.num_nodes()) + 1024;
        self.grow_current(capacity)?;
        if self.spare.cap < capacity {
            self.spare = DeviceList::with_capacity(&self.context, capacity, "a worklist")?;
        }
        if code.retries {
            for list in &mut self.retries {
                if list.cap < capacity {
                    *list = DeviceList::with_capacity(&self.context, capacity, "a retry list")?;
                }
            }
        }
        let at = StateLayout::of(self.module, code, locals);
        kept_buffer(&mut self.region_state, &self.context, at.bytes, "an outlined region's state")?;
        Ok(at)
    }

    /// Makes the current worklist hold at least `capacity` items (its items kept).
    fn grow_current(&mut self, capacity: u64) -> Result<()> {
        let top = self.worklists.last_mut().expect("the worklist stack is never empty");
        if top.cap >= capacity {
            return Ok(());
        }
        let grown = DeviceList::with_capacity(&self.context, capacity, "a worklist")?;
        grown.buffer.copy_from(&top.buffer, top.len.min(top.cap) as usize * 4)?;
        *top = DeviceList { len: top.len, ..grown };
        Ok(())
    }

    /// The current worklist holds `len` items, those past its capacity in the segments of spill
    /// table `table`: moves them all into one buffer large enough.
    fn gather_spilled(&mut self, len: u64, table: u64) -> Result<()> {
        let top = self.worklists.last_mut().expect("the worklist stack is never empty");
        let grown = DeviceList::with_capacity(&self.context, len + len / 2, "a worklist")?;
        grown.buffer.copy_from(&top.buffer, top.cap as usize * 4)?;
        let wl = GpuWorklist { items: top.buffer.ptr(), cap: top.cap, spill: table, ..GpuWorklist::default() };
        let dest = grown.buffer.ptr();
        let grid = ((len - top.cap).div_ceil(u64::from(BLOCK))).min(4096) as u32;
        // SAFETY: (grail_wl, uint32_t *, uint64_t): `dest` holds at least `len` items and the
        // table's segments hold the items past the old capacity.
        unsafe { launch(&self.program.unspill, grid, BLOCK, &mut [arg(&wl), arg(&dest), arg(&len)])? };
        *top = DeviceList { len, ..grown };
        Ok(())
    }
}
