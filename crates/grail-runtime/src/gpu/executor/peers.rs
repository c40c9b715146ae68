//! A GPU part's side of a region that exchanges with the other parts on the devices
//! (`crate::multi::peer`): the buffers the other parts write into, and the part's
//! `grail_peers` tables, uploaded before its control kernel starts.

use grail_ir::OutlineId;

use super::GpuRun;
use crate::error::{Result, RuntimeError};
use crate::gpu::buffer::{DeviceBuffer, upload_to};
use crate::gpu::ffi::{GRAIL_MAX_PARTS, GpuPeerEntry, GpuPeers};
use crate::host::value::Value;
use crate::multi::peer::{Addresses, End, Request, Table};

/// What a part keeps for one region exchanging on the devices: one zeroed allocation holding
/// every buffer the other parts write into (allocations are slow once peer access maps each
/// into every GPU), and one holding the part's tables.
pub(in crate::gpu) struct PeerBuffers {
    _exchange: DeviceBuffer,
    /// The exchange each ghost was last forwarded in (inside `_exchange`).
    forwarded: u64,
    /// Part 0's words' address (this part's or another's; the stop word is the second), for a
    /// stop raised from the host.
    barrier_at: u64,
    tables: Option<DeviceBuffer>,
}

/// Places buffers one after another in one allocation, each aligned to 256 bytes.
#[derive(Default)]
struct Layout {
    bytes: usize,
}

impl Layout {
    /// The offset of the next buffer of `bytes` bytes.
    fn take(&mut self, bytes: usize) -> usize {
        let at = self.bytes.next_multiple_of(256);
        self.bytes = at + bytes.max(4);
        at
    }
}

/// An array of up to [`GRAIL_MAX_PARTS`] addresses, from a list by part.
fn by_part(list: &[u64]) -> [u64; GRAIL_MAX_PARTS] {
    let mut out = [0u64; GRAIL_MAX_PARTS];
    out[..list.len()].copy_from_slice(list);
    out
}

impl GpuRun<'_> {
    /// Makes the part ready for region `request.region`: its columns on the device, its
    /// records, the buffers the other parts write into (zeroed, the copies finished); `None`
    /// when this part cannot run the region exchanging on the devices (no control kernel for
    /// it, or no cooperative launch).
    pub(in crate::gpu) fn prepare_peers(&mut self, request: &Request<'_>) -> Result<Option<Addresses>> {
        let program = self.program;
        let runs_region = program.regions.iter().any(|r| r.id == request.region && r.max_grid > 0);
        if !runs_region || !program.device.info().cooperative_launch || request.parts > GRAIL_MAX_PARTS {
            return Ok(None);
        }
        self.columns_to_device()?;
        let ghosts = (self.num_nodes() - self.ctx.num_nodes as u32) as usize;
        let inbox_cap = crate::multi::peer::inbox_cap(request.mirrors.len() as u64);
        let entries = 2 * request.mirrors.len().max(1);
        let mut layout = Layout::default();
        let partials = layout.take(2 * request.parts * 2 * 8);
        let inbox = layout.take(2 * inbox_cap as usize * 4);
        let inbox_len = layout.take(16);
        let barrier = layout.take(8);
        let forwarded = layout.take(ghosts * 4);
        let arrive = layout.take(GRAIL_MAX_PARTS * 4);
        let changes: Vec<[usize; 3]> = request
            .properties
            .iter()
            .map(|_| [layout.take(entries * 8), layout.take(entries * 8), layout.take(entries * 4)])
            .collect();
        let exchange = DeviceBuffer::zeroed(&self.context, layout.bytes, "the exchange between parts")?;
        let at = |offset: usize| exchange.ptr() + offset as u64;
        let mut addresses = Addresses {
            partials: at(partials),
            inbox: at(inbox),
            inbox_len: at(inbox_len),
            barrier: if request.barrier { at(barrier) } else { 0 },
            arrive: at(arrive),
            mirrors: request.mirrors.len() as u64,
            ..Addresses::default()
        };
        for (&p, [before, after, step]) in request.properties.iter().zip(&changes) {
            addresses.in_before.push(at(*before));
            addresses.in_after.push(at(*after));
            addresses.in_step.push(at(*step));
            addresses.columns.push(self.columns[p.index()].buffer.ptr());
        }
        self.peers = Some(PeerBuffers { forwarded: at(forwarded), barrier_at: 0, tables: None, _exchange: exchange });
        for &p in request.properties {
            addresses.ghost_records.push(self.record(request.ghosts, p)?);
            addresses.mirror_records.push(self.record(request.mirrors, p)?);
        }
        Ok(Some(addresses))
    }

    /// Runs region `region` with the other parts, exchanging on the devices as `table` says;
    /// every other part runs it at the same time (each waits for the others at its barriers).
    pub(in crate::gpu) fn run_with_peers(
        &mut self,
        region: OutlineId,
        locals: &mut [Value],
        table: &Table,
    ) -> Result<End> {
        let ran = self.upload_peer_table(table).and_then(|peers| {
            let owned = self.ctx.num_nodes as u32;
            // Ghosts in the worklist are skipped (grail_note_ghost without a list): their
            // owners got them when they were pushed.
            if self.num_nodes() > owned {
                self.ctx.ghost_flags = self.peers.as_ref().expect("prepared").forwarded;
            }
            self.region_peers = peers;
            let ran = self.run_outlined_region(region, locals);
            self.region_peers = 0;
            (self.ctx.ghost_flags, self.ctx.ghost_list, self.ctx.ghost_count) = (0, 0, 0);
            ran
        });
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
        let lists: [&[u32]; 10] = [
            &table.ghost_local,
            &table.ghost_owner,
            &table.ghost_at,
            &table.ghost_mirror,
            &table.owner_of,
            &table.at_of,
            &table.mirror_local,
            &table.mirror_part,
            &table.mirror_ghost,
            &table.mirror_ghost_local,
        ];
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
                columns: by_part(&e.columns),
                ghost_records: by_part(&e.ghost_records),
                mirror_records: by_part(&e.mirror_records),
                in_before: by_part(&e.in_before),
                in_after: by_part(&e.in_after),
                in_step: by_part(&e.in_step),
            })
            .collect();
        let mut layout = Layout::default();
        let list_at: Vec<usize> = lists.iter().map(|l| layout.take(l.len() * 4)).collect();
        let plan_at = layout.take(entries.len() * size_of::<GpuPeerEntry>());
        let peers_at = layout.take(size_of::<GpuPeers>());
        let mut bytes = vec![0u8; layout.bytes];
        let mut put = |at: usize, data: &[u8]| bytes[at..at + data.len()].copy_from_slice(data);
        for (list, &at) in lists.iter().zip(&list_at) {
            put(at, as_bytes(list));
        }
        put(plan_at, as_bytes(&entries));
        let buffer = DeviceBuffer::new(&self.context, layout.bytes, "the exchange's tables")?;
        let base = buffer.ptr();
        let list = |i: usize| base + list_at[i] as u64;
        let buffers = self.peers.as_mut().expect("prepared before the region");
        buffers.barrier_at = table.barrier;
        let peers = GpuPeers {
            part: table.part,
            parts: table.parts,
            entries: table.entries.len() as u32,
            pad: 0,
            ghosts: table.ghost_local.len() as u64,
            mirrors: table.mirror_local.len() as u64,
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
        };
        put(peers_at, as_bytes(std::slice::from_ref(&peers)));
        buffer.upload(0, &bytes)?;
        buffers.tables = Some(buffer);
        Ok(base + peers_at as u64)
    }
}

/// The bytes of plain `#[repr(C)]` values (integers, no padding).
fn as_bytes<T: Copy>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is a plain integer or an integer-only `#[repr(C)]` struct without padding
    // (the mirrors of grail_cuda.h's structs), so every byte is initialized.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}
