//! A GPU part's side of a region that exchanges with the other parts on the devices
//! (`crate::multi::peer`): the buffers the other parts write into, and the part's
//! `grail_peers` tables, uploaded before its control kernel starts.

use std::sync::Arc;

use grail_ir::OutlineId;

use super::{GpuRun, Layout, kept_buffer, plain_bytes};
use crate::error::{Result, RuntimeError};
use crate::gpu::buffer::{DeviceBuffer, call, synchronize, upload_to};
use crate::gpu::ffi::{GRAIL_MAX_PARTS, GpuPeerEntry, GpuPeers};
use crate::host::value::Value;
use crate::multi::peer::{Addresses, End, Lists, Request, Table};

/// What a part keeps for its regions exchanging on the devices: one zeroed allocation holding
/// every buffer the other parts write into (allocations are slow once peer access maps each
/// into every GPU: it is made before `main` and zeroed again for each later region), and one
/// holding the part's tables for the region running.
pub(in crate::gpu) struct PeerBuffers {
    exchange: DeviceBuffer,
    /// What the exchange's layout was made for, and properties (a region synchronizing fewer
    /// finds its buffers at the same places).
    shape: ExchangeShape,
    properties: usize,
    /// Whether nothing has run over the exchange since it was zeroed.
    fresh: bool,
    /// The exchange each ghost was last forwarded in (inside `exchange`).
    forwarded: u64,
    /// Part 0's words' address (this part's or another's; the stop word is the second), for a
    /// stop raised from the host.
    barrier_at: u64,
    tables: Option<DeviceBuffer>,
}

/// A part's [`Lists`] on its device, copied once per run: the host lists they came from, their
/// allocation, and each list's address in `grail_peers`' order.
pub(in crate::gpu) struct PeerLists {
    from: Arc<Lists>,
    _buffer: DeviceBuffer,
    at: [u64; crate::multi::peer::LISTS],
}

/// What an exchange's allocation is made for: parts, the inbox's capacity, ghosts, change
/// entries, and for the asynchronous exchange the capacities of the rings from each sender
/// (records, nodes; empty without them).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExchangeShape {
    parts: usize,
    inbox_cap: u64,
    ghosts: usize,
    entries: usize,
    rings: Vec<(u64, u64)>,
}

/// Where an exchange's buffers lie in its allocation.
struct ExchangeLayout {
    bytes: usize,
    partials: usize,
    inbox: usize,
    inbox_len: usize,
    barrier: usize,
    forwarded: usize,
    arrive: usize,
    /// By property: the inbox of changes' words before, after, and steps.
    changes: Vec<[usize; 3]>,
    /// The asynchronous exchange's words, and by sender its rings of records and nodes.
    words: usize,
    rings: Vec<(usize, usize)>,
}

impl ExchangeLayout {
    fn of(shape: &ExchangeShape, properties: usize) -> ExchangeLayout {
        let &ExchangeShape { parts, inbox_cap, ghosts, entries, .. } = shape;
        let mut layout = Layout::default();
        let partials = layout.take(2 * parts * 2 * 8);
        let inbox = layout.take(2 * inbox_cap as usize * 4);
        let inbox_len = layout.take(16);
        let barrier = layout.take(8);
        let forwarded = layout.take(ghosts * 4);
        let arrive = layout.take(GRAIL_MAX_PARTS * 4);
        let changes = (0..properties)
            .map(|_| [layout.take(entries * 8), layout.take(entries * 8), layout.take(entries * 4)])
            .collect();
        let words = layout.take(crate::gpu::ffi::ASYNC_WORDS_BYTES);
        let rings = shape
            .rings
            .iter()
            .map(|&(records, nodes)| (layout.take(records as usize * 24), layout.take(nodes as usize * 4)))
            .collect();
        ExchangeLayout {
            bytes: layout.bytes,
            partials,
            inbox,
            inbox_len,
            barrier,
            forwarded,
            arrive,
            changes,
            words,
            rings,
        }
    }
}

/// An array of up to [`GRAIL_MAX_PARTS`] addresses, from a list by part.
fn by_part(list: &[u64]) -> [u64; GRAIL_MAX_PARTS] {
    let mut out = [0u64; GRAIL_MAX_PARTS];
    out[..list.len()].copy_from_slice(list);
    out
}

impl GpuRun<'_> {
    /// Makes the part ready for region `request.region`: what its launch needs allocated
    /// (`ready_region`), its records, the buffers the other parts write into (zeroed, the
    /// copies finished); `None` when this part cannot run the region exchanging on the devices
    /// (no control kernel for it, or no cooperative launch).
    pub(in crate::gpu) fn prepare_peers(&mut self, request: &Request<'_>) -> Result<Option<Addresses>> {
        let program = self.program;
        let Some(code) = program.regions.iter().find(|r| r.id == request.region && r.max_grid > 0) else {
            return Ok(None);
        };
        if !program.device.info().cooperative_launch || request.parts > GRAIL_MAX_PARTS {
            return Ok(None);
        }
        self.ready_region(code, self.module.main.locals.len())?;
        self.region_grid = request.grid;
        // The rings made before `main` (for as many properties as the run exchanges, so enough
        // for any region) serve every region, so the allocation is kept.
        let kept_rings = self.peers.as_ref().map(|p| p.shape.rings.clone()).filter(|r| !r.is_empty());
        let rings = match (kept_rings, &self.peer_lists, request.rings) {
            (Some(kept), _, _) => kept,
            (None, Some(lists), true) => {
                crate::multi::peer::ring_caps(&lists.from, request.parts, request.properties.len())
            }
            _ => Vec::new(),
        };
        if request.rings && rings.is_empty() {
            return Ok(None);
        }
        let shape = self.exchange_shape(request.parts, request.mirrors.len(), rings);
        let layout = self.exchange_buffer(shape, request.properties.len())?;
        let buffers = self.peers.as_mut().expect("made above");
        buffers.fresh = false;
        let base = buffers.exchange.ptr();
        let at = |offset: usize| base + offset as u64;
        let mut addresses = Addresses {
            partials: at(layout.partials),
            inbox: at(layout.inbox),
            inbox_len: at(layout.inbox_len),
            barrier: if request.barrier { at(layout.barrier) } else { 0 },
            arrive: at(layout.arrive),
            mirrors: request.mirrors.len() as u64,
            ..Addresses::default()
        };
        if request.rings {
            addresses.words = at(layout.words);
            let caps = &buffers.shape.rings;
            addresses.rec_rings = layout.rings.iter().map(|&(r, _)| at(r)).collect();
            addresses.node_rings = layout.rings.iter().map(|&(_, n)| at(n)).collect();
            addresses.rec_caps = caps.iter().map(|&(r, _)| r).collect();
            addresses.node_caps = caps.iter().map(|&(_, n)| n).collect();
        }
        for (&p, [before, after, step]) in request.properties.iter().zip(&layout.changes) {
            addresses.in_before.push(at(*before));
            addresses.in_after.push(at(*after));
            addresses.in_step.push(at(*step));
            addresses.columns.push(self.columns[p.index()].buffer.ptr());
        }
        for &p in request.properties {
            addresses.ghost_records.push(self.record(request.ghosts, p)?);
            addresses.mirror_records.push(self.record(request.mirrors, p)?);
        }
        Ok(Some(addresses))
    }

    /// The shape of this part's exchange with `parts` parts, `mirrors` mirror entries and
    /// rings of these capacities.
    fn exchange_shape(&self, parts: usize, mirrors: usize, rings: Vec<(u64, u64)>) -> ExchangeShape {
        let ghosts = (self.num_nodes() - self.ctx.num_nodes as u32) as usize;
        ExchangeShape {
            parts,
            inbox_cap: crate::multi::peer::inbox_cap(mirrors as u64),
            ghosts,
            entries: 2 * mirrors.max(1),
            rings,
        }
    }

    /// The exchange's allocation for `properties` synchronized properties, zeroed: the one
    /// made before if it fits (zeroed again unless nothing ran over it since), else a new one.
    /// Returns once the zeroing has finished: the other parts write into it from their own
    /// devices as soon as their kernels start, and a memset still queued here (behind another
    /// process's work on a shared GPU, say) would wipe what they wrote.
    fn exchange_buffer(&mut self, shape: ExchangeShape, properties: usize) -> Result<ExchangeLayout> {
        let layout = ExchangeLayout::of(&shape, properties);
        match self.peers.as_mut() {
            Some(kept) if kept.shape == shape && kept.properties >= properties => {
                if kept.fresh {
                    return Ok(layout);
                }
                kept.exchange.clear()?;
                kept.fresh = true;
            }
            _ => {
                self.peers = None;
                let exchange = DeviceBuffer::zeroed(&self.context, layout.bytes, "the exchange between parts")?;
                let forwarded = exchange.ptr() + layout.forwarded as u64;
                self.peers = Some(PeerBuffers {
                    exchange,
                    shape,
                    properties,
                    fresh: true,
                    forwarded,
                    barrier_at: 0,
                    tables: None,
                });
            }
        }
        synchronize().map_err(|e| call("cuCtxSynchronize", e))?;
        Ok(layout)
    }

    /// Copies `lists` to the device unless they are there already, and makes the exchange's
    /// allocation for `properties` properties and `parts` parts (with the asynchronous
    /// exchange's rings if `rings`): before `main`, so that no region pays for either.
    pub(in crate::gpu) fn prepare_peer_lists(
        &mut self,
        lists: &Arc<Lists>,
        parts: usize,
        properties: usize,
        rings: bool,
    ) -> Result<()> {
        let made = self.device_lists(lists).and_then(|_| {
            let caps = if rings { crate::multi::peer::ring_caps(lists, parts, properties) } else { Vec::new() };
            let shape = self.exchange_shape(parts, lists.mirror_local.len(), caps);
            self.exchange_buffer(shape, properties)
        });
        // On failure (out of memory, say) the part keeps neither.
        if made.is_err() {
            (self.peer_lists, self.peers) = (None, None);
        }
        made.map(|_| ())
    }

    /// The device addresses of `lists`, copied there unless they are already.
    fn device_lists(&mut self, lists: &Arc<Lists>) -> Result<[u64; crate::multi::peer::LISTS]> {
        if let Some(done) = self.peer_lists.as_ref().filter(|d| Arc::ptr_eq(&d.from, lists)) {
            return Ok(done.at);
        }
        let in_order = lists.in_order();
        let mut layout = Layout::default();
        let offsets: Vec<usize> = in_order.iter().map(|l| layout.take(l.len() * 4)).collect();
        let buffer = DeviceBuffer::new(&self.context, layout.bytes, "the exchange's lists")?;
        for (list, &offset) in in_order.iter().zip(&offsets) {
            buffer.upload(offset, list)?;
        }
        let at = std::array::from_fn(|i| buffer.ptr() + offsets[i] as u64);
        self.peer_lists = Some(PeerLists { from: lists.clone(), _buffer: buffer, at });
        Ok(at)
    }

    /// Runs region `region` with the other parts, exchanging on the devices as `table` says;
    /// every other part runs it at the same time (each waits for the others at its barriers).
    pub(in crate::gpu) fn run_with_peers(
        &mut self,
        region: OutlineId,
        locals: &mut [Value],
        table: &Table,
    ) -> Result<End> {
        let part = table.part as usize;
        // A part that fails (or panics) before its launch arrives at the start line all the
        // same, once it has raised the stop word (below), so that the others launch and stop
        // at their first barrier.
        let _arrives = crate::multi::peer::ArriveOnDrop(&table.start, part);
        self.region_start = Some((table.start.clone(), part, table.parts as usize));
        let ran = self.upload_peer_table(table).and_then(|peers| {
            let owned = self.ctx.num_nodes as u32;
            if table.rings.is_some() {
                // The asynchronous exchange forwards the ghosts met in the worklist, noted
                // once each (grail_note_ghost; the flags are zero between uses, and the
                // exchange clears those it forwards).
                self.split_buffers(0)?;
                let split = self.split.as_ref().expect("made above");
                split.counts.clear()?;
                self.ctx.ghost_flags = split.flags.ptr();
                self.ctx.ghost_list = split.ghosts.ptr();
                self.ctx.ghost_count = split.counts.ptr() + 8;
            } else if self.num_nodes() > owned {
                // Ghosts in the worklist are skipped (grail_note_ghost without a list): their
                // owners got them when they were pushed.
                self.ctx.ghost_flags = self.peers.as_ref().expect("prepared").forwarded;
            }
            self.region_peers = peers;
            let ran = self.run_outlined_region(region, locals);
            self.region_peers = 0;
            (self.ctx.ghost_flags, self.ctx.ghost_list, self.ctx.ghost_count) = (0, 0, 0);
            ran
        });
        self.region_start = None;
        match ran {
            Ok(true) if std::mem::take(&mut self.region_stopped) => Ok(End::Stopped),
            Ok(true) => Ok(End::Done(self.region_exchange)),
            Ok(false) => {
                self.stop_peers();
                Err(RuntimeError::Unsupported(format!(
                    "{} could not run an outlined region that the other parts run",
                    self.device_name()
                )))
            }
            Err(error) => {
                // The others would wait for this part at their next barrier.
                self.stop_peers();
                Err(error)
            }
        }
    }

    /// Raises the parts' stop word, so that the other parts leave the region at their next
    /// barrier.
    fn stop_peers(&self) {
        if let Some(at) = self.peers.as_ref().map(|p| p.barrier_at).filter(|&at| at != 0) {
            // Best effort: this part is failing already; its own error is the one reported.
            let _ = upload_to(&self.context, at + 4, &[1u32]);
        }
    }

    /// Uploads the part's `grail_peers` and what it points to, in one allocation; its device
    /// address.
    fn upload_peer_table(&mut self, table: &Table) -> Result<u64> {
        let lists = self.device_lists(&table.lists)?;
        let entries: Vec<GpuPeerEntry> = table
            .entries
            .iter()
            .map(|e| GpuPeerEntry {
                kernel: e.kernel,
                size: e.size,
                kind: e.kind,
                op: e.op,
                merge: u32::from(e.merge),
                refresh: u32::from(e.refresh),
                listed: e.listed,
                reserved: 0,
                columns: by_part(&e.columns),
                ghost_records: by_part(&e.ghost_records),
                mirror_records: by_part(&e.mirror_records),
                in_before: by_part(&e.in_before),
                in_after: by_part(&e.in_after),
                in_step: by_part(&e.in_step),
            })
            .collect();
        let mut layout = Layout::default();
        let plan_at = layout.take(entries.len() * size_of::<GpuPeerEntry>());
        let peers_at = layout.take(size_of::<GpuPeers>());
        let mut bytes = vec![0u8; layout.bytes];
        let mut put = |at: usize, data: &[u8]| bytes[at..at + data.len()].copy_from_slice(data);
        put(plan_at, plain_bytes(&entries));
        let buffers = self.peers.as_mut().expect("prepared before the region");
        let buffer = kept_buffer(&mut buffers.tables, &self.context, layout.bytes, "the exchange's tables")?;
        let base = buffer.ptr();
        let list = |i: usize| lists[i];
        buffers.barrier_at = table.barrier;
        let mut peers = GpuPeers {
            part: table.part,
            parts: table.parts,
            entries: table.entries.len() as u32,
            mode: u32::from(table.rings.is_some()),
            ghosts: table.lists.ghost_local.len() as u64,
            mirrors: table.lists.mirror_local.len() as u64,
            plan: base + plan_at as u64,
            ghost_local: list(0),
            ghost_owner: list(1),
            ghost_at: list(2),
            ghost_mirror: list(3),
            owner_of: list(4),
            at_of: list(5),
            mirror_local: list(6),
            mirror_part: list(7),
            mirror_ghost: list(8),
            mirror_ghost_local: list(9),
            forwarded: buffers.forwarded,
            barrier: table.barrier,
            partials: by_part(&table.partials),
            inbox: by_part(&table.inbox),
            inbox_len: by_part(&table.inbox_len),
            inbox_cap: by_part(&table.inbox_cap),
            arrive: by_part(&table.arrive),
            mirror_counts: by_part(&table.mirror_counts),
            ghost_position: list(10),
            mirror_start: list(11),
            mirror_order: list(12),
            ..GpuPeers::default()
        };
        if let Some(r) = &table.rings {
            peers.words = by_part(&r.words);
            peers.rec_ring = by_part(&r.rec_ring);
            peers.node_ring = by_part(&r.node_ring);
            peers.rec_cap = by_part(&r.rec_cap);
            peers.node_cap = by_part(&r.node_cap);
            peers.rec_most = by_part(&r.rec_most);
            peers.node_most = by_part(&r.node_most);
            peers.rec_ring_in = by_part(&r.rec_ring_in);
            peers.node_ring_in = by_part(&r.node_ring_in);
            peers.rec_cap_in = by_part(&r.rec_cap_in);
            peers.node_cap_in = by_part(&r.node_cap_in);
        }
        put(peers_at, plain_bytes(std::slice::from_ref(&peers)));
        buffer.upload(0, &bytes)?;
        Ok(base + peers_at as u64)
    }
}
