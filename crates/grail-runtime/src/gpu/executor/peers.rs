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

/// What a part keeps for one region exchanging on the devices.
pub(in crate::gpu) struct PeerBuffers {
    /// The parts' reduction values and lengths (two parities of a pair per part).
    partials: DeviceBuffer,
    /// The nodes other parts forward (two parities of `inbox_cap`), and the two counts.
    inbox: DeviceBuffer,
    inbox_len: DeviceBuffer,
    /// Part 0's barrier words.
    barrier: Option<DeviceBuffer>,
    /// The exchange each ghost was last forwarded in.
    forwarded: DeviceBuffer,
    /// The arrival words of the parts' barrier, and by synchronized property the inbox of
    /// changes (words before, after, the exchange's number).
    arrive: DeviceBuffer,
    changes: Vec<[DeviceBuffer; 3]>,
    /// Part 0's barrier words' address (this part's or another's), for a host-side stop.
    barrier_at: u64,
    /// The device copies of the table's lists, its entries and the `grail_peers` itself.
    tables: Vec<DeviceBuffer>,
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
        let c = &self.context;
        let ghosts = (self.num_nodes() - self.ctx.num_nodes as u32) as usize;
        let inbox_cap = request.inbox_cap.max(1);
        let mut buffers = PeerBuffers {
            partials: DeviceBuffer::zeroed(c, 2 * request.parts * 2 * 8, "the parts' reduction slots")?,
            inbox: DeviceBuffer::new(c, 2 * inbox_cap as usize * 4, "the nodes other parts forward")?,
            inbox_len: DeviceBuffer::zeroed(c, 16, "the forwarded nodes' counts")?,
            barrier: match request.barrier {
                true => Some(DeviceBuffer::zeroed(c, 8, "the parts' barrier")?),
                false => None,
            },
            forwarded: DeviceBuffer::zeroed(c, ghosts.max(1) * 4, "the forwarded ghosts' marks")?,
            arrive: DeviceBuffer::zeroed(c, GRAIL_MAX_PARTS * 4, "the parts' arrival words")?,
            changes: Vec::new(),
            barrier_at: 0,
            tables: Vec::new(),
        };
        let mut addresses = Addresses {
            partials: buffers.partials.ptr(),
            inbox: buffers.inbox.ptr(),
            inbox_len: buffers.inbox_len.ptr(),
            inbox_cap,
            barrier: buffers.barrier.as_ref().map_or(0, |b| b.ptr()),
            arrive: buffers.arrive.ptr(),
            mirrors: request.mirrors.len() as u64,
            ..Addresses::default()
        };
        let entries = 2 * request.mirrors.len().max(1);
        for &p in request.properties {
            let changes = [
                DeviceBuffer::new(c, entries * 8, "the ghosts' changes")?,
                DeviceBuffer::new(c, entries * 8, "the ghosts' changes")?,
                DeviceBuffer::zeroed(c, entries * 4, "the ghosts' changes")?,
            ];
            addresses.in_before.push(changes[0].ptr());
            addresses.in_after.push(changes[1].ptr());
            addresses.in_step.push(changes[2].ptr());
            buffers.changes.push(changes);
            addresses.columns.push(self.columns[p.index()].buffer.ptr());
        }
        self.peers = Some(buffers);
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
                self.ctx.ghost_flags = self.peers.as_ref().expect("prepared").forwarded.ptr();
            }
            self.region_peers = peers;
            let ran = self.run_outlined_region(region, locals);
            self.region_peers = 0;
            (self.ctx.ghost_flags, self.ctx.ghost_list, self.ctx.ghost_count) = (0, 0, 0);
            ran
        });
        match ran {
            Ok(true) if std::mem::take(&mut self.region_stopped) => Ok(End::Stopped),
            Ok(true) => Ok(End::Done),
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

    /// Uploads the part's `grail_peers` and what it points to; its device address.
    fn upload_peer_table(&mut self, table: &Table) -> Result<u64> {
        let c = self.context.clone();
        let buffers = self.peers.as_mut().expect("prepared before the region");
        buffers.barrier_at = table.barrier;
        buffers.tables.clear();
        let mut list = |items: &[u32], what: &str| -> Result<u64> {
            let buffer = DeviceBuffer::from_slice(&c, if items.is_empty() { &[0u32] } else { items }, what)?;
            let ptr = buffer.ptr();
            buffers.tables.push(buffer);
            Ok(ptr)
        };
        let mut peers = GpuPeers {
            part: table.part,
            parts: table.parts,
            entries: table.entries.len() as u32,
            pad: 0,
            ghosts: table.ghost_local.len() as u64,
            mirrors: table.mirror_local.len() as u64,
            plan: 0,
            ghost_local: list(&table.ghost_local, "the ghosts' ids")?,
            ghost_owner: list(&table.ghost_owner, "the ghosts' owners")?,
            ghost_at: list(&table.ghost_at, "the ghosts' ids at their owners")?,
            ghost_mirror: list(&table.ghost_mirror, "the ghosts' mirror entries")?,
            owner_of: list(&table.owner_of, "the ghosts' owners")?,
            at_of: list(&table.at_of, "the ghosts' ids at their owners")?,
            mirror_local: list(&table.mirror_local, "the mirrors' ids")?,
            mirror_part: list(&table.mirror_part, "the mirrors' parts")?,
            mirror_ghost: list(&table.mirror_ghost, "the mirrors' ghost positions")?,
            mirror_ghost_local: list(&table.mirror_ghost_local, "the mirrors' ghost ids")?,
            forwarded: 0,
            barrier: table.barrier,
            partials: by_part(&table.partials),
            inbox: by_part(&table.inbox),
            inbox_len: by_part(&table.inbox_len),
            inbox_cap: by_part(&table.inbox_cap),
            arrive: by_part(&table.arrive),
            mirror_counts: by_part(&table.mirror_counts),
        };
        peers.forwarded = buffers.forwarded.ptr();
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
        let entries = if entries.is_empty() { vec![GpuPeerEntry::default()] } else { entries };
        let plan = DeviceBuffer::from_slice(&c, &entries, "the exchange's plan")?;
        peers.plan = plan.ptr();
        buffers.tables.push(plan);
        let peers_buffer = DeviceBuffer::from_slice(&c, &[peers], "the exchange's tables")?;
        let ptr = peers_buffer.ptr();
        buffers.tables.push(peers_buffer);
        Ok(ptr)
    }
}
