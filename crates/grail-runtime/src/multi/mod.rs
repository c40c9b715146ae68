//! Several devices: one program run on a partitioned graph, each part on its own device.
//!
//! A device is a group of CPU cores or a GPU ([`Device`]). The graph is split by
//! `grail_graph::partition` into one [`Part`] per device (its owned nodes with their out-edges,
//! and ghost copies of the remote nodes they reach, in local ids); each device runs the same
//! compiled kernels on its part. [`MultiProgram::run`] drives them bulk-synchronously
//! (`bsp.rs`): `main` runs once on the host, every invocation is a superstep on all parts, and
//! between supersteps the values kernels wrote into ghosts are merged into their owners with
//! the operator of the atomic that wrote them ([`Merge`]).
//!
//! Which programs can be partitioned is decided before anything runs
//! (`grail_ir::analysis::partition_obstacles`: no collections, in-edges, locks or
//! handle-valued properties; union-find sets whose `find` gives values, not nodes, which
//! `grail_ir::sets` joins across the parts); the reasons are given in the error.
//!
//! With [`Mode::Async`], worklist loops run without supersteps (`asynchronous.rs`).
//!
//! Between supersteps each part copies its changes straight into inboxes on the devices of
//! the parts that need them (`exchange.rs`): peer to peer between GPUs. Where every part is a
//! GPU, loops over worklists can run on all GPUs at once, their supersteps exchanged between
//! the GPUs without the host (`peer.rs`, [`DeviceRegions`]).
//!
//! Not yet built: the fused worker kernel; the asynchronous mode's packets still travel
//! through host memory.

mod asynchronous;
mod bsp;
pub mod collectives;
mod crew;
pub(crate) mod exchange;
mod merge;
pub(crate) mod peer;
pub mod router;
pub(crate) mod trace;

use std::fmt;
use std::io::Write;
use std::str::FromStr;
use std::time::{Duration, Instant};

use grail_graph::Graph;
use grail_graph::partition::{Part, Partitioning};
use grail_ir::{Module, OutlineId, PropertyId};

pub use asynchronous::Topology;
pub use bsp::SyncStats;
pub(crate) use exchange::{Counted, GhostMap, Place, Received, Route, Share};
pub use merge::Merge;
pub(crate) use merge::{normal, type_code};

use crate::cache::ModuleCache;
use crate::cpu::executor::{KernelStats, PartShape, RunOutput, RunStats};
use crate::cpu::pool::{Pool, PoolState};
use crate::cpu::{CCompiler, CpuProgram};
use crate::error::{Result, RuntimeError};
use crate::host::bind_params;
use crate::host::interp::{self, Machine};
use crate::host::memory::{HostArrays, Memory};
use crate::host::value::Value;

/// One device of a partitioned run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    /// A group of CPU cores (the run's threads shared among its CPU devices).
    Cpu,
    /// A CUDA GPU, by ordinal.
    Gpu(u32),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Gpu(ordinal) => write!(f, "gpu:{ordinal}"),
        }
    }
}

/// Reads a device list: comma-separated `cpu`, `cpu*K` (K CPU devices), `gpu` (GPU 0),
/// `gpu:N`, or `all` (every GPU: `gpus` is asked how many there are).
pub fn parse_devices(
    text: &str,
    gpus: impl FnOnce() -> std::result::Result<u32, String>,
) -> std::result::Result<Vec<Device>, String> {
    let mut devices = Vec::new();
    let mut gpus = Some(gpus);
    for word in text.split(',').map(str::trim) {
        match word {
            "" => return Err(format!("an empty device in `{text}`")),
            "cpu" => devices.push(Device::Cpu),
            "gpu" => devices.push(Device::Gpu(0)),
            "all" => {
                let count = gpus.take().ok_or("`all` given twice")?()?;
                if count == 0 {
                    return Err("`all` asks for every GPU, and none was found".into());
                }
                devices.extend((0..count).map(Device::Gpu));
            }
            _ => {
                if let Some(count) = word.strip_prefix("cpu*") {
                    let count: u32 = count
                        .parse()
                        .ok()
                        .filter(|&c| c > 0)
                        .ok_or_else(|| format!("`{word}`: expected `cpu*K` with K a positive number"))?;
                    devices.extend(std::iter::repeat_n(Device::Cpu, count as usize));
                } else if let Some(ordinal) = word.strip_prefix("gpu:") {
                    let ordinal =
                        ordinal.parse().map_err(|_| format!("`{word}`: expected `gpu:N` with N a GPU number"))?;
                    devices.push(Device::Gpu(ordinal));
                } else {
                    return Err(format!("unknown device `{word}` (expected cpu, cpu*K, gpu, gpu:N or all)"));
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for device in &devices {
        if let Device::Gpu(_) = device
            && !seen.insert(*device)
        {
            return Err(format!("{device} is listed twice (a GPU holds one part)"));
        }
    }
    Ok(devices)
}

/// How the devices cooperate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Bulk-synchronous supersteps (Falcon).
    #[default]
    Bsp,
    /// Worklist loops (`iterate k() initial ...` with an empty body) run without supersteps:
    /// every part works on its own worklist and exchanges changes as packets as it goes
    /// (Groute's way); other loops and invocations run bulk-synchronously.
    Async,
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Mode, String> {
        match text {
            "bsp" => Ok(Mode::Bsp),
            "async" => Ok(Mode::Async),
            other => Err(format!("unknown mode `{other}` (expected bsp or async)")),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Bsp => "bsp",
            Mode::Async => "async",
        })
    }
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct MultiOptions {
    /// CPU threads in all, shared equally among the CPU devices; 0 = one per core.
    pub threads: usize,
    /// After how many rounds on the devices a union-find set's join is finished through the
    /// host ([`grail_ir::sets`]; at least one, after which every shared slot holds its root's
    /// class). `None`: `GRAIL_HOST_JOIN_AFTER` if set, else once the rounds have cost what
    /// the host's join would ([`bsp::HOST_JOIN_FIXED`]).
    pub host_join_after: Option<u32>,
    pub mode: Mode,
    /// The asynchronous mode waits a little at random and takes packets in shuffled order,
    /// from this seed: a test that results and termination do not depend on timing.
    pub jitter: Option<u64>,
    /// Which outlined regions run on every GPU at once, exchanging on the devices (`peer.rs`).
    pub device_regions: DeviceRegions,
    /// How many blocks such a region's control kernel runs on each GPU.
    pub region_grid: RegionGrid,
    /// Soft priorities in the asynchronous mode (Groute §4.4), with this width: nodes other
    /// parts push to a part wait while their value (of the property the loop's kernel lowers
    /// with `atomic_min`, an integer: a distance, a label) is more than this much above the
    /// lowest waiting, unless the part has nothing else to do. `None`: every pushed node is
    /// taken at once.
    pub priority_delta: Option<u64>,
    /// How the asynchronous mode's packets travel: straight to their part, or around a ring
    /// of the parts (Groute's distributed worklist topology).
    pub topology: Topology,
    /// Who runs the asynchronous mode's loops where every part is a GPU reaching the others.
    pub worker: Worker,
    /// Whether GPU parts time their kernels (CUDA events around each invocation): the per-kernel
    /// times of `grail run --stats` and each part's kernel time. Off, a GPU part's kernel time
    /// is not known ([`PartFigures::kernel_time`] is `None`) and each superstep saves the host
    /// the events' calls (a few microseconds, some before the kernel can start). CPU parts
    /// always time theirs (a clock read). `GRAIL_TRACE_STEPS` turns it on.
    pub kernel_times: bool,
    /// Whether supersteps that need nothing read back (no reduction, no pushes, no ghost read
    /// through: Afforest's neighbour rounds, a labelling pass) are queued without waiting for them,
    /// their changes merged on the receiving devices when the parts next run (`Bsp::defers`).
    /// `None`: where every part is a GPU reaching every other (`GRAIL_DEFER_STEPS=0` turns it
    /// off); `Some(true)`: on any parts (CPU parts run the same protocol at once: how tests
    /// exercise it without GPUs); `Some(false)`: never.
    pub defer_steps: Option<bool>,
}

/// Who runs an asynchronous loop of a run whose parts are all GPUs reaching each other's
/// memory. `GRAIL_FUSED_WORKER=0` or `=1` overrides it with `Host` or `Fused`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Worker {
    /// Groute's fused worker kernel (§5.2): one control kernel per GPU runs the loop to its
    /// end, sending and taking changes and nodes through rings in the GPUs' memory while it
    /// runs (`grail_peer_async_step`; while exchanges carry something, as many invocations
    /// apart as keep them under a tenth of the time, up to 64 apart while they carry nothing),
    /// where the loop's merges allow it (no replacement, no sum read through ghosts), without
    /// soft priorities, a ring topology or jitter; otherwise as `Host`. Against `Host` on two
    /// H200s: 5.8-18x faster on R-MAT and on road networks in random parts, 1.07-1.25x on a
    /// road network in ordered parts (BFS, SSSP), 0.67x for label propagation there
    /// (`docs/benchmarks.md`).
    #[default]
    Fused,
    /// Each part's loop leaves its control kernel every `EXCHANGE_ROUNDS` invocations, and the
    /// host exchanges packets between the parts (`asynchronous.rs`).
    Host,
}

impl std::str::FromStr for Worker {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Worker, String> {
        match text {
            "fused" => Ok(Worker::Fused),
            "host" => Ok(Worker::Host),
            other => Err(format!("unknown worker `{other}` (expected fused or host)")),
        }
    }
}

impl fmt::Display for Worker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Worker::Fused => "fused",
            Worker::Host => "host",
        })
    }
}

impl Worker {
    /// The choice after `GRAIL_FUSED_WORKER`.
    pub fn resolved(self) -> Worker {
        match std::env::var("GRAIL_FUSED_WORKER").as_deref() {
            Ok("0") => Worker::Host,
            Ok("1") => Worker::Fused,
            _ => self,
        }
    }
}

/// Which outlined regions of a run whose parts are all GPUs run on the devices at once, their
/// supersteps exchanged between the GPUs without the host (`peer.rs`); the others run superstep
/// by superstep from the host. `GRAIL_PEER_REGIONS=0` or `=1` overrides it with `Never` or
/// `Always` (for measuring one beside the other).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeviceRegions {
    /// Regions with a worklist loop: many small supersteps, each far cheaper on the devices
    /// (a few microseconds of barriers against a host round trip per part). A region of
    /// topology-driven kernels over every node (PageRank's) runs its kernels faster launched
    /// one by one, each with the grid its own occupancy allows, than inside a control kernel.
    #[default]
    Auto,
    Always,
    Never,
}

impl DeviceRegions {
    /// The choice after `GRAIL_PEER_REGIONS`.
    fn resolved(self) -> DeviceRegions {
        match std::env::var("GRAIL_PEER_REGIONS").as_deref() {
            Ok("0") => DeviceRegions::Never,
            Ok("1") => DeviceRegions::Always,
            _ => self,
        }
    }
}

/// The grid of a region that runs on every GPU at once (unless the program's `--opt grid=N`
/// asks for N blocks per multiprocessor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RegionGrid {
    /// One block per multiprocessor: for the thousands of small supersteps of a graph of high
    /// diameter, whose grid barriers (with the parts' barrier inside) cost more than the
    /// threads gain (BFS on a road network of 2^24 nodes over two H100s: 462 ms with every
    /// resident block, 240 ms with one per multiprocessor).
    #[default]
    OnePerMultiprocessor,
    /// Every block that fits: for the few large supersteps of a graph of low diameter (R-MAT
    /// of 2^23 nodes over two H200s: BFS 1.80 ms against 2.52 with one block per
    /// multiprocessor, SSSP 27.7 against 32.6, CC 24.1 against 54.2).
    Resident,
}

/// One part's share of a run.
#[derive(Debug, Clone)]
pub struct PartFigures {
    pub device: Device,
    pub nodes: u32,
    pub ghosts: u32,
    pub edges: u64,
    /// CPU threads (0 for a GPU).
    pub threads: usize,
    /// Its kernels' time, where they were timed (a CPU part's always are, a GPU part's under
    /// [`MultiOptions::kernel_times`]).
    pub kernel_time: Option<Duration>,
}

/// What a partitioned run leaves: what one device's run leaves (columns in global ids), and how
/// the parts shared the work.
#[derive(Debug, Clone)]
pub struct MultiOutput {
    pub output: RunOutput,
    pub parts: Vec<PartFigures>,
    pub sync: SyncStats,
    /// Building the parts' local graphs from the partitioning.
    pub split: Duration,
}

/// A send of [`PartRun::send_changes_to`]: the positions of the fixed list whose changes go,
/// and the share of the inbox they go to (`None`: nothing goes there).
pub(crate) type Send = (std::ops::Range<usize>, Option<exchange::Place>);

/// Where a deferred superstep's counts of changes lie on the sending part's device, and the
/// event its sends end at ([`PartRun::invoke_deferred`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DeviceCounts {
    /// The first count word's device address: a word per property sent and send, the sends of
    /// the first property first.
    pub words: u64,
    /// The sends of each property (the part's routes).
    pub sends: usize,
    /// The event (its handle) recorded after the sends.
    pub event: u64,
}

/// What the partitioned machine needs of a part's run, beyond what the interpreter needs.
pub(crate) trait PartRun: Machine {
    /// Makes the part's device current on the calling thread (a GPU's context), before any
    /// other call from that thread.
    fn bind(&self) -> Result<()> {
        Ok(())
    }
    /// The words ([`crate::host::memory::ColumnRef::bits`]; 4-byte elements may come
    /// zero-extended) of a node or edge property at local ids `at`, into `out` (cleared first).
    fn gather(&mut self, property: PropertyId, at: Indices<'_>, out: &mut Vec<u64>) -> Result<()>;
    /// Compares a node property at the local ids of `list` (a list that keeps its address and
    /// contents for the whole run: a device may keep its own copy of it) with
    /// the words this part recorded for the list and property at the last `diff` or `put`
    /// (zeros at first, as the columns start), records the current ones, and appends every
    /// position of `list` whose word changed to `out`.
    fn diff(&mut self, property: PropertyId, list: &[u32], out: &mut Vec<Change>) -> Result<()>;
    /// Stores `words[i]` at local id `list[positions[i]]` and records it for the list.
    fn put(&mut self, property: PropertyId, list: &[u32], positions: &[u32], words: &[u64]) -> Result<()>;
    /// Merges changed ghosts into this part's nodes `at` (distinct local ids of owned nodes):
    /// each goes from its word to `merge.apply(ty, word, before[i], after[i])`; `before` is left
    /// holding the new words.
    fn merge_in(
        &mut self,
        property: PropertyId,
        merge: Merge,
        at: &[u32],
        before: &mut [u64],
        after: &[u64],
    ) -> Result<()>;
    /// Removes the ghosts (local ids from the number of owned nodes on) from the current
    /// worklist and returns them, each once; the owned items stay, in any order.
    fn take_pushed_ghosts(&mut self) -> Result<Vec<u32>>;
    /// Appends owned nodes to the current worklist.
    fn extend_worklist(&mut self, items: &[u32]) -> Result<()>;
    fn kernel_stats(&self) -> &[KernelStats];
    /// Opens an inbox of `bytes` bytes on this part's device, which another part writes into
    /// between supersteps ([`exchange`]); its number here and where it lies.
    fn open_inbox(&mut self, bytes: usize) -> Result<(usize, exchange::Place)>;
    /// Removes the ghosts from the current worklist (as [`PartRun::take_pushed_ghosts`]) and
    /// sends each, as its owner's id for it, to its owner's inbox for this part's pushes (the
    /// route's `to_owner_pushes`); by route, how many went.
    fn send_pushes(&mut self, map: exchange::GhostMap<'_>, routes: &[exchange::Route]) -> Result<Vec<usize>>;
    /// Appends the first `count` node ids of inbox `inbox` to the current worklist.
    fn take_pushes(&mut self, inbox: usize, count: usize) -> Result<()>;
    /// As [`PartRun::diff`] on the positions `range` of the fixed list `list` (the record is
    /// the whole list's), each change's position counted from `range.start`; the changes are
    /// written to the start of `to`. How many there were.
    fn send_changes(
        &mut self,
        property: PropertyId,
        list: &[u32],
        range: std::ops::Range<usize>,
        to: &exchange::Place,
    ) -> Result<usize>;
    /// [`PartRun::send_changes`] for several ranges of the fixed list `list` at once, each
    /// to its own inbox (`None`: nothing goes there, 0 sent); how many went to each. A GPU
    /// queues every comparison, writing straight into the inboxes it reaches, and waits once.
    fn send_changes_to(&mut self, property: PropertyId, list: &[u32], sends: &[Send]) -> Result<Vec<usize>> {
        sends
            .iter()
            .map(|(range, to)| match to {
                Some(to) => self.send_changes(property, list, range.clone(), to),
                None => Ok(0),
            })
            .collect()
    }
    /// Invokes `kernel` ([`Machine::invoke`]), then sends the changes of each property of
    /// `diff` as [`PartRun::send_changes_to`] does, property `diff[i]`'s by `sends[i]`; the
    /// result, and by property how many changes went to each send. A GPU queues the
    /// comparisons right behind the kernel and waits once where it can.
    fn invoke_sending(
        &mut self,
        kernel: grail_ir::KernelId,
        args: &[Value],
        diff: &[PropertyId],
        list: &[u32],
        sends: &[Vec<Send>],
    ) -> Result<(Option<Value>, Vec<Vec<usize>>)> {
        let result = self.invoke(kernel, args)?;
        let sent =
            diff.iter().zip(sends).map(|(&p, sends)| self.send_changes_to(p, list, sends)).collect::<Result<_>>()?;
        Ok((result, sent))
    }
    /// Whether `kernel` can run as a deferred superstep on this part ([`PartRun::invoke_deferred`]):
    /// one launch that pushes, reduces and retries nothing, and nothing else to read back.
    fn defers(&self, _kernel: grail_ir::KernelId) -> bool {
        false
    }
    /// A deferred superstep: queues `kernel` and, right behind it, the comparisons of
    /// [`PartRun::invoke_sending`] writing into the inboxes (each of which this part's device
    /// reaches), counting on the device, then records an event, and returns without waiting
    /// for any of it. Where the counts lie and the event: the receivers' merges
    /// ([`PartRun::merge_counted`]) wait for the event on their devices and read the counts
    /// there, so no host round trip separates this superstep from the next. Only where
    /// [`PartRun::defers`] said yes and every earlier merge into the inboxes is done.
    fn invoke_deferred(
        &mut self,
        _kernel: grail_ir::KernelId,
        _args: &[Value],
        _diff: &[PropertyId],
        _list: &[u32],
        _sends: &[Vec<Send>],
    ) -> Result<DeviceCounts> {
        Err(RuntimeError::Unsupported("a deferred superstep on a part that runs none".into()))
    }
    /// Makes this part's next work wait, on its device, for the events of deferred supersteps
    /// (handles from [`DeviceCounts::event`]).
    fn wait_for_events(&mut self, _events: &[u64]) -> Result<()> {
        Err(RuntimeError::Unsupported("a deferred superstep on a part that runs none".into()))
    }
    /// [`PartRun::merge_changes`] for a deferred superstep's changes, whose counts lie on the
    /// senders' devices; after [`PartRun::wait_for_events`]. Records nothing (a deferred
    /// superstep's properties are not read through ghosts).
    fn merge_counted(
        &mut self,
        _property: PropertyId,
        _merge: Merge,
        _received: &[exchange::Counted],
        _list: &[u32],
    ) -> Result<()> {
        Err(RuntimeError::Unsupported("a deferred superstep on a part that runs none".into()))
    }
    /// How many changes [`PartRun::merge_counted`] merged in all (read from the device).
    fn merged_on_device(&mut self) -> Result<u64> {
        Ok(0)
    }
    /// Waits for the work this part queued on its device (a merge is queued, not waited
    /// for: the part's next kernel follows it in order).
    fn settle(&mut self) -> Result<()> {
        Ok(())
    }
    /// Gets the exchanges' fixed lists and the words recorded for `records` (a list and a
    /// property) ready where the part's exchanges will use them, before the supersteps start,
    /// for a run of `parts` parts: a GPU copies the lists up once and makes the buffers its
    /// exchanges use (lazily, the first supersteps would pay for it: on an R-MAT graph of 2^23
    /// nodes, milliseconds; and a buffer freed or made while other GPUs work waits for them).
    fn prepare_exchange(&mut self, _parts: usize, _lists: &[&[u32]], _records: &[(&[u32], PropertyId)]) -> Result<()> {
        Ok(())
    }
    /// Invokes `kernel`, a defaults kernel whose values depend on each node alone
    /// (`grail_ir::analysis::node_local_defaults`), over the ghosts too: every node slot.
    fn invoke_over_slots(&mut self, kernel: grail_ir::KernelId, args: &[Value]) -> Result<Option<Value>>;
    /// Invokes `kernel`, a kernel over all nodes, over the local ids of the fixed list `list`
    /// alone (a part's shared slots, for [`grail_ir::Module::over_slots`]), as a retry pass
    /// runs over its items.
    fn invoke_over_list(&mut self, kernel: grail_ir::KernelId, args: &[Value], list: &[u32]) -> Result<Option<Value>>;
    /// [`PartRun::invoke_over_list`] over `over`, then the sends of [`PartRun::invoke_sending`]
    /// (the changes of `diff`'s properties at the fixed list `list`). A GPU queues the
    /// comparisons right behind the kernel and waits once where it can.
    fn invoke_over_list_sending(
        &mut self,
        kernel: grail_ir::KernelId,
        args: &[Value],
        over: &[u32],
        diff: &[PropertyId],
        list: &[u32],
        sends: &[Vec<Send>],
    ) -> Result<(Option<Value>, Vec<Vec<usize>>)> {
        let result = self.invoke_over_list(kernel, args, over)?;
        let sent =
            diff.iter().zip(sends).map(|(&p, sends)| self.send_changes_to(p, list, sends)).collect::<Result<_>>()?;
        Ok((result, sent))
    }
    /// Records property `property`'s current words at the fixed list `list` as the words last
    /// exchanged there (after [`PartRun::invoke_over_slots`], every ghost holds its owner's).
    fn record_current(&mut self, property: PropertyId, list: &[u32]) -> Result<()>;
    /// Merges what each sender of `received` sent (the first `count` changes of its share of
    /// an inbox, each a ghost's word before and after the superstep) into this part's nodes
    /// `list[start + position]` with `merge`; with `record`, records each change's new word
    /// for that position of the fixed list `list` (what the ghost holds now). Two senders may
    /// change the same node (a ghost of both): the result is their merges one after another.
    /// May return before the merge is done: anything that reads the part's nodes, or its
    /// inboxes' next writers, comes after [`PartRun::settle`] or the part's next invocation.
    fn merge_changes(
        &mut self,
        property: PropertyId,
        merge: Merge,
        received: &[exchange::Received],
        list: &[u32],
        record: bool,
    ) -> Result<()>;
    /// Stores the first `count` changes of share `inbox` of an inbox at `list[start + position]`
    /// and records them for the fixed list `list`.
    fn put_changes(
        &mut self,
        property: PropertyId,
        inbox: exchange::Share,
        count: usize,
        list: &[u32],
        start: usize,
    ) -> Result<()>;
    /// Runs the outlined worklist loop `region` (an `iterate` with an empty body) on this part's
    /// device, until the part's worklist is empty or after `budget` invocations (0: no limit),
    /// setting aside the ghosts pushed on the way (each once: they are returned) instead of
    /// running them. `None` when this part runs no such loop (a CPU part; a program compiled
    /// without outlining): the caller invokes the kernel round by round instead.
    fn run_loop_locally(
        &mut self,
        _region: OutlineId,
        _locals: &mut [Value],
        _budget: u32,
    ) -> Result<Option<Vec<u32>>> {
        Ok(None)
    }
    /// Copies this part's lists for regions exchanging on the devices ([`peer::Lists`]) where
    /// its regions will read them, and makes the buffers the other `parts - 1` parts write the
    /// changes of up to `properties` properties into, before `main` runs; nothing on a CPU part.
    /// With `rings`, the asynchronous exchange's rings too ([`peer::ring_caps`]).
    fn prepare_peer_lists(
        &mut self,
        _lists: &std::sync::Arc<peer::Lists>,
        _parts: usize,
        _properties: usize,
        _rings: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Makes this part ready to run an outlined region with the others, exchanging on the
    /// devices ([`peer`]): its columns and records of `request.properties` where the others
    /// can reach them, the buffers they write into; `None` when this part cannot (a CPU part).
    fn peer_buffers(&mut self, _request: &peer::Request<'_>) -> Result<Option<peer::Addresses>> {
        Ok(None)
    }
    /// Runs outlined region `region` on this part while every other part runs it, exchanging
    /// on the devices as `table` says; only called after [`PartRun::peer_buffers`] said yes.
    fn run_region_with_peers(
        &mut self,
        _region: OutlineId,
        _locals: &mut [Value],
        _table: &peer::Table,
    ) -> Result<peer::End> {
        Err(RuntimeError::Unsupported("a region exchanging on the devices, on a CPU part".into()))
    }
}

/// A position of a fixed list whose word changed since it was recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Change {
    pub position: u32,
    pub old: u64,
    pub new: u64,
}

/// Local ids: a list, or the range `start..end`.
#[derive(Clone, Copy)]
pub(crate) enum Indices<'a> {
    List(&'a [u32]),
    Range(u64, u64),
}

impl Indices<'_> {
    pub fn for_each(self, mut f: impl FnMut(usize)) {
        match self {
            Indices::List(list) => list.iter().for_each(|&i| f(i as usize)),
            Indices::Range(start, end) => (start..end).for_each(|i| f(i as usize)),
        }
    }
}

/// A program compiled for every device of a partitioned run.
pub struct MultiProgram {
    module: Module,
    devices: Vec<Device>,
    cpu: Option<CpuProgram>,
    /// The program compiled for each GPU of the list, by ordinal.
    #[cfg(feature = "gpu")]
    gpus: Vec<(u32, crate::gpu::GpuProgram)>,
}

impl fmt::Debug for MultiProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiProgram").field("module", &self.module.name).field("devices", &self.devices).finish()
    }
}

/// The error for a module that cannot run partitioned, naming every reason.
pub fn check_partitionable(module: &Module) -> Result<()> {
    let obstacles = grail_ir::analysis::partition_obstacles(module);
    if obstacles.is_empty() {
        return Ok(());
    }
    Err(RuntimeError::Unsupported(format!(
        "the program `{}` cannot run on a partitioned graph: {}",
        module.name,
        obstacles.join("; ")
    )))
}

impl MultiProgram {
    /// Checks that `module` can run partitioned and compiles it for the devices' kinds (the C
    /// program once for all CPU devices).
    pub fn compile(
        module: Module,
        devices: &[Device],
        compiler: &CCompiler,
        cache: Option<&ModuleCache>,
    ) -> Result<MultiProgram> {
        if devices.is_empty() {
            return Err(RuntimeError::Unsupported("a partitioned run with no devices".into()));
        }
        check_partitionable(&module)?;
        // Union-find sets joined across the parts (grail_ir::sets).
        let module = grail_ir::sets::for_parts(&module);
        grail_ir::validate(&module)
            .map_err(|e| RuntimeError::Unsupported(format!("internal error (a bug in grail): sets on parts: {e}")))?;
        let cpu =
            devices.contains(&Device::Cpu).then(|| CpuProgram::compile(module.clone(), compiler, cache)).transpose()?;
        #[cfg(feature = "gpu")]
        let gpus = devices
            .iter()
            .filter_map(|d| match d {
                Device::Gpu(ordinal) => Some(*ordinal),
                Device::Cpu => None,
            })
            .map(|ordinal| {
                let device = crate::gpu::Device::open(ordinal as usize)?;
                Ok((ordinal, crate::gpu::GpuProgram::compile(module.clone(), device, cache)?))
            })
            .collect::<Result<Vec<_>>>()?;
        #[cfg(not(feature = "gpu"))]
        if let Some(gpu) = devices.iter().find(|d| matches!(d, Device::Gpu(_))) {
            return Err(RuntimeError::Unsupported(format!("{gpu}: this build of grail has no GPU support")));
        }
        Ok(MultiProgram {
            module,
            devices: devices.to_vec(),
            cpu,
            #[cfg(feature = "gpu")]
            gpus,
        })
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The program compiled for GPU `ordinal` (one of the devices).
    #[cfg(feature = "gpu")]
    fn gpu(&self, ordinal: u32) -> &crate::gpu::GpuProgram {
        &self.gpus.iter().find(|(o, _)| *o == ordinal).expect("compiled for every GPU of the list").1
    }

    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// Runs the program on `graph` split by `partitioning` (one part per device, in order).
    /// `params` as [`CpuProgram::run`] takes them.
    pub fn run(
        &self,
        graph: &Graph,
        partitioning: &Partitioning,
        params: &[Option<Value>],
        options: &MultiOptions,
        out: &mut dyn Write,
    ) -> Result<MultiOutput> {
        self.run_with_inputs(graph, partitioning, params, &[], options, out)
    }

    /// [`MultiProgram::run`] with the program's inputs, as [`CpuProgram::run_with_inputs`]
    /// takes them (a partitioned program has no input collections: its input properties, each
    /// node's value given in global ids, go to the node's owner and its ghosts).
    pub fn run_with_inputs(
        &self,
        graph: &Graph,
        partitioning: &Partitioning,
        params: &[Option<Value>],
        inputs: &[crate::host::table::Table],
        options: &MultiOptions,
        out: &mut dyn Write,
    ) -> Result<MultiOutput> {
        let started = Instant::now();
        let k = self.devices.len();
        if partitioning.num_parts() as usize != k || partitioning.num_nodes() != graph.num_nodes() {
            return Err(RuntimeError::Input(format!(
                "the partitioning has {} parts of {} nodes; the run has {k} devices and the graph {} nodes",
                partitioning.num_parts(),
                partitioning.num_nodes(),
                graph.num_nodes()
            )));
        }
        let params = bind_params(&self.module, graph, params)?;
        // Kernels that read in-neighbours get each part's in-edges; kernels that read other
        // nodes' out-degrees, its ghosts' degrees; a program without a weight property, no
        // weights (BFS on a weighted graph: a word per edge not copied into the parts).
        let contents = grail_graph::partition::PartContents {
            in_edges: grail_ir::analysis::needs_reverse(&self.module),
            weights: self.module.properties.iter().any(|p| p.is_weight),
        };
        let mut parts = partitioning.parts_holding(graph, contents);
        let ghost_degrees: Vec<Vec<u32>> = if grail_ir::analysis::reads_ghost_degrees(&self.module) {
            use rayon::prelude::*;
            parts.iter().map(|part| part.ghosts().par_iter().map(|&g| graph.out_degree(g) as u32).collect()).collect()
        } else {
            vec![Vec::new(); parts.len()]
        };
        let graphs = bsp::part_graphs(&mut parts);
        let ids: Vec<Vec<u32>> = parts.iter().map(Part::local_to_global).collect();
        let split = started.elapsed();
        let shapes: Vec<PartShape<'_>> = parts
            .iter()
            .zip(&ids)
            .zip(&ghost_degrees)
            .map(|((part, ids), ghost_degrees)| PartShape {
                owned: part.num_owned(),
                graph_nodes: graph.num_nodes().into(),
                graph_edges: graph.num_edges(),
                global_ids: ids,
                ghost_degrees,
            })
            .collect();
        // Node parameters in each part's ids (kernels never read them: checked at compile time;
        // a node a part does not hold gets an id past its slots).
        let part_params: Vec<Vec<Value>> = parts
            .iter()
            .map(|part| {
                params
                    .iter()
                    .map(|value| match *value {
                        Value::Node(u) => Value::Node(part.local(u).unwrap_or(u32::MAX)),
                        ref other => other.clone(),
                    })
                    .collect()
            })
            .collect();
        let cpus = self.devices.iter().filter(|d| **d == Device::Cpu).count();
        let threads = match options.threads {
            0 => rayon::current_num_threads().max(1),
            n => n,
        };
        let per_cpu = (threads / cpus.max(1)).max(1);
        let states: Vec<PoolState> = (0..cpus).map(|_| PoolState::new(per_cpu)).collect();
        let mut sinks: Vec<std::io::Sink> = (0..k).map(|_| std::io::sink()).collect();
        let host_module =
            Module { main: self.module.main.clone(), functions: self.module.functions.clone(), ..Module::default() };
        let memory = Memory::with(&host_module, graph, HostArrays { weights: false, graph_arrays: false })?;
        let owner = partitioning.owner();
        // Each GPU part's graph, made resident before the runs start (a run borrows it): every
        // GPU's copy at once, each from a thread of its own (one after another, four parts of
        // R-MAT 2^25 took four times one part's copy).
        #[cfg(feature = "gpu")]
        let residents: Vec<Option<crate::gpu::DeviceGraph>> = std::thread::scope(|scope| {
            let copies: Vec<_> = self
                .devices
                .iter()
                .zip(&graphs)
                .map(|(device, graph)| match device {
                    Device::Gpu(ordinal) => {
                        let program = self.gpu(*ordinal);
                        Some(scope.spawn(move || program.part_graph(graph)))
                    }
                    Device::Cpu => None,
                })
                .collect();
            copies
                .into_iter()
                .map(|copy| match copy {
                    Some(copy) => copy.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)).map(Some),
                    None => Ok(None),
                })
                .collect::<Result<_>>()
        })?;
        // Copies between GPU parts go peer to peer where the GPUs allow it; where every part is
        // a GPU that reaches every other, outlined regions exchange on the devices (`peer`).
        #[allow(unused_mut)]
        let mut peer_access = false;
        #[cfg(feature = "gpu")]
        {
            let contexts: Vec<_> = self.gpus.iter().map(|(_, program)| program.context()).collect();
            if contexts.len() > 1 {
                let connected = crate::gpu::connect_peers(&contexts)?;
                peer_access = connected == contexts.len() * (contexts.len() - 1)
                    && contexts.len() == k
                    && self.devices.iter().all(|d| matches!(d, Device::Gpu(_)));
            }
        }
        let (result, columns, sync, stats) = std::thread::scope(|scope| -> Result<_> {
            let pools: Vec<Pool<'_>> = states.iter().map(|state| Pool::start(scope, state)).collect();
            let mut runs: Vec<Box<dyn PartRun + '_>> = Vec::with_capacity(k);
            let mut pools_left = pools.iter();
            for (q, (((graph, params), shape), sink)) in
                graphs.iter().zip(part_params).zip(&shapes).zip(&mut sinks).enumerate()
            {
                match self.devices[q] {
                    Device::Cpu => {
                        let cpu = self.cpu.as_ref().expect("compiled for the CPU devices");
                        let pool = pools_left.next().expect("a pool per CPU device");
                        runs.push(Box::new(cpu.part_run(graph, params, shape, pool, sink)?));
                    }
                    #[cfg(feature = "gpu")]
                    Device::Gpu(ordinal) => {
                        let resident = residents[q].as_ref().expect("made for every GPU part");
                        let timed = options.kernel_times || trace::on();
                        runs.push(Box::new(self.gpu(ordinal).part_run(graph, resident, params, shape, timed, sink)?));
                    }
                    #[cfg(not(feature = "gpu"))]
                    Device::Gpu(_) => unreachable!("refused when compiling"),
                }
            }
            // SAFETY: the runs outlive the crew (dropped with the machine, inside the scope below),
            // and nothing else touches them while an invocation runs.
            let links = bsp::Links::of(&parts, owner);
            let mirrors = bsp::Mirrors::of(&links);
            let ghost_lists: Vec<&[u32]> = links.iter().map(|l| l.ghosts()).collect();
            let mirror_lists: Vec<&[u32]> = mirrors.iter().map(|m| m.locals()).collect();
            // Only where kernels run over them.
            let shared: Vec<Vec<u32>> = if self.module.over_slots.is_empty() {
                vec![Vec::new(); k]
            } else {
                mirrors.iter().zip(&links).map(|(m, l)| m.shared_slots(l)).collect()
            };
            let shared_lists: Vec<&[u32]> = shared.iter().map(Vec::as_slice).collect();
            let ghost_groups: Vec<Vec<_>> = links.iter().map(|l| (0..k).map(|o| l.group(o)).collect()).collect();
            let mirror_groups: Vec<Vec<_>> = mirrors.iter().map(|m| (0..k).map(|q| m.group(q)).collect()).collect();
            let merges = bsp::Bsp::merges_of(&self.module);
            let remotely_read = grail_ir::analysis::remote_reads(&self.module);
            let shares = exchange::Shares {
                changes: merges.iter().map(|k| k.iter().filter(|w| w.remote).count()).max().unwrap_or(0),
                words: merges
                    .iter()
                    .map(|k| k.iter().filter(|w| remotely_read[w.property.index()]).count())
                    .max()
                    .unwrap_or(0),
            };
            let routes = exchange::routes(&mut runs, &ghost_groups, &mirror_groups, shares)?;
            let crew_state = crew::CrewState::new(
                runs.iter_mut().map(|run| unsafe { crew::RunPtr::new(&mut **run) }).collect(),
                &ghost_lists,
                &mirror_lists,
                &shared_lists,
                &links.iter().enumerate().map(|(q, l)| l.map(q)).collect::<Vec<GhostMap<'_>>>(),
                routes,
            );
            std::thread::scope(|inner| -> Result<_> {
                let mut machine = bsp::Bsp {
                    module: &self.module,
                    memory,
                    params: &params,
                    out,
                    parts: &parts,
                    graphs: &graphs,
                    owner,
                    runs,
                    // The same lists the crew was given: parts record words by a list's address.
                    mirrors,
                    links,
                    shared,
                    remotely_read,
                    merges,
                    stats: SyncStats::default(),
                    pending: None,
                    crew: crew::Crew::start(inner, &crew_state),
                    mode: options.mode,
                    jitter: options.jitter,
                    priority_delta: options.priority_delta,
                    topology: options.topology,
                    worker: options.worker.resolved(),
                    device_regions: if peer_access { options.device_regions.resolved() } else { DeviceRegions::Never },
                    region_grid: options.region_grid,
                    local_defaults: grail_ir::analysis::node_local_defaults(&self.module),
                    peer_lists: Vec::new(),
                    joins: vec![bsp::JoinProgress::default(); self.module.set_joins.len()],
                    host_join_after: options.host_join_after.or_else(bsp::host_join_after_from_env).map(|n| n.max(1)),
                    defer_steps: options.defer_steps.unwrap_or_else(|| {
                        peer_access && std::env::var("GRAIL_DEFER_STEPS").map_or(true, |v| v.trim() != "0")
                    }),
                };
                machine.prepare_exchanges()?;
                interp::fill_inputs(&self.module, &mut machine, inputs)?;
                let result = interp::run_main(&self.module, &mut machine)?;
                let columns = machine.columns()?;
                machine.count_merged_on_devices()?;
                trace::print_sums();
                let stats: Vec<Vec<KernelStats>> = machine.runs.iter().map(|run| run.kernel_stats().to_vec()).collect();
                Ok((result, columns, machine.stats, stats))
            })
        })?;
        let mut kernels: Vec<KernelStats> =
            stats[0].iter().map(|s| KernelStats { name: s.name.clone(), ..KernelStats::default() }).collect();
        for part in &stats {
            for (total, s) in kernels.iter_mut().zip(part) {
                total.invocations = total.invocations.max(s.invocations);
                total.items += s.items;
                total.pushes += s.pushes;
                total.retries += s.retries;
                total.split += s.split;
                total.time = total.time.max(s.time);
            }
        }
        let figures = parts
            .iter()
            .zip(&graphs)
            .zip(&self.devices)
            .zip(&stats)
            .map(|(((part, graph), &device), stats)| PartFigures {
                device,
                nodes: part.num_owned(),
                ghosts: part.num_ghosts(),
                edges: graph.num_edges(),
                threads: if device == Device::Cpu { per_cpu } else { 0 },
                kernel_time: (device == Device::Cpu || options.kernel_times || trace::on())
                    .then(|| stats.iter().map(|s| s.time).sum()),
            })
            .collect();
        Ok(MultiOutput {
            output: RunOutput {
                properties: columns,
                result,
                collections: Vec::new(),
                stats: RunStats { kernels, elapsed: started.elapsed() },
            },
            parts: figures,
            sync,
            split,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_read_as_documented() {
        let two = || Ok(2);
        assert_eq!(parse_devices("cpu", two), Ok(vec![Device::Cpu]));
        assert_eq!(parse_devices("cpu*3", two), Ok(vec![Device::Cpu; 3]));
        assert_eq!(parse_devices("gpu:0, gpu:1,cpu", two), Ok(vec![Device::Gpu(0), Device::Gpu(1), Device::Cpu]));
        assert_eq!(parse_devices("all", two), Ok(vec![Device::Gpu(0), Device::Gpu(1)]));
        assert!(parse_devices("all", || Ok(0)).unwrap_err().contains("none was found"));
        assert!(parse_devices("gpu:0,gpu:0", two).unwrap_err().contains("twice"));
        assert!(parse_devices("tpu", two).unwrap_err().contains("unknown device"));
        assert!(parse_devices("cpu*0", two).is_err());
        assert!(parse_devices("cpu,,cpu", two).is_err());
    }
}
