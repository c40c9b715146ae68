//! The `#[repr(C)]` mirrors of `grail_cuda.h`'s structs, as kernels receive them. Device pointers
//! are `u64` (`CUdeviceptr`); 0 is NULL.
//!
//! [`layout_checks`] writes C++ `static_assert`s of every field's offset as Rust lays it out;
//! compiled after the header (the NVRTC tests and [`super::probe`] do), they fail the compilation
//! if the two ever disagree.

use std::mem::{offset_of, size_of};

use cudarc::driver::DeviceRepr;

/// `grail_wl`: a device worklist (see the header for the push protocol).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuWorklist {
    /// `uint32_t *items`: `cap` slots.
    pub items: u64,
    /// `uint64_t *len`: pushes made.
    pub len: u64,
    pub cap: u64,
    /// `uint32_t *overflow`: 1 when pushes spilled past `cap`, 2 when spilling ran out of heap.
    pub overflow: u64,
    /// `void **spill`: [`GRAIL_SPILL_SEGS`] device-heap segment pointers, zero when unused.
    pub spill: u64,
}

/// `GRAIL_SPILL_SEGS`: a worklist's spill segments.
pub const GRAIL_SPILL_SEGS: usize = 24;

/// `GRAIL_SEGS`: the segments of a collection.
pub const GRAIL_SEGS: usize = 23;

/// `grail_coll`: a collection's element count and segments (device-heap pointers, allocated and
/// freed by device code).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuColl {
    pub len: u64,
    /// Elements removed (marked; their slots are not reused).
    pub removed: u64,
    pub segs: [u64; GRAIL_SEGS],
    /// 1: the device heap ran out; 2: the collection is full.
    pub failed: u32,
    pub _pad: u32,
}

/// `grail_ctx`, passed to kernels by value. Fields mean what they mean in the header.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuCtx {
    pub num_nodes: u64,
    pub num_edges: u64,
    pub out_offsets: u64,
    pub out_ends: u64,
    pub out_targets: u64,
    pub in_offsets: u64,
    pub in_ends: u64,
    pub in_sources: u64,
    pub edge_sources: u64,
    pub in_edge_ids: u64,
    pub props: u64,
    pub params: u64,
    pub items: u64,
    pub item_count: u64,
    pub retrying: u32,
    /// Padding the C compiler puts there too, spelled out so every byte is defined.
    pub _pad0: u32,
    pub locks: u64,
    pub claims: u64,
    pub invocation: u32,
    pub _pad1: u32,
    pub sets: u64,
    /// `grail_coll *colls`: the program's collections.
    pub colls: u64,
    /// The whole graph's counts, the node slots and the local nodes' global ids (0 = none), as
    /// in `GrailCtx`.
    pub graph_nodes: u64,
    pub graph_edges: u64,
    pub node_slots: u64,
    pub global_ids: u64,
    /// `const uint32_t *ghost_degrees`, as in `GrailCtx` (0 = none).
    pub ghost_degrees: u64,
    pub pushes: GpuWorklist,
    pub retries: GpuWorklist,
    pub acc: u64,
    pub items_cap: u64,
    pub items_spill: u64,
    /// `uint64_t *checks`: checked mode's record of the first failed check (three words: what, the value, the kernel of an outlined region).
    pub checks: u64,
    /// `uint32_t *ghost_flags`, `uint32_t *ghost_list`, `unsigned long long *ghost_count`: a
    /// part's ghosts found in its worklist during a loop run whole on the device (0: none).
    pub ghost_flags: u64,
    pub ghost_list: u64,
    pub ghost_count: u64,
    /// `uint32_t active`: the threads of a phase that take items (adaptive parallelism; 0: all).
    pub active: u32,
}

/// `grail_list`: a worklist buffer of an outlined region.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuList {
    pub items: u64,
    pub cap: u64,
    /// `void **spill`: the list's spill table.
    pub spill: u64,
}

/// `GRAIL_RING`: the slots of an outlined region's counter rings.
pub const GRAIL_RING: usize = 3;

/// `grail_region`: an outlined region's state, filled by the host before the control kernel's
/// launch and read back after it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuRegion {
    pub lists: [GpuList; 2],
    pub retry_lists: [GpuList; 2],
    pub len: u64,
    pub cur: u32,
    pub invocation: u32,
    pub overflow: u32,
    pub grid_blocks: u32,
    pub release: u32,
    pub step_overflow: [u32; GRAIL_RING + 1],
    pub push_len: [u64; GRAIL_RING],
    pub retry_len: [u64; GRAIL_RING],
    /// `grail_value *frame`: main's locals.
    pub frame: u64,
    /// `grail_value *acc`: [`GRAIL_RING`] reduction slots per kernel.
    pub acc: u64,
    /// `uint64_t *stats`: per kernel, invocations, items, pushes, retries.
    pub stats: u64,
    /// `uint32_t *arrive`: each block's arrival word at the grid barrier.
    pub arrive: u64,
    /// The most invocations a worklist loop makes before leaving with work left (0: no limit).
    pub budget: u32,
    /// Out: the region stopped because another part of a partitioned graph failed.
    pub stopped: u32,
    /// `grail_peers *peers`: the exchange between parts on the devices (0: none).
    pub peers: u64,
    /// Out: nanoseconds spent in those exchanges.
    pub peer_ns: u64,
    /// Out, supersteps: global thread 0's time in an exchange's parts (sending, the first
    /// barrier, merging, refreshing, the last barrier), its waits for the other parts, and
    /// the exchanges made.
    pub peer_phase_ns: [u64; 6],
    pub peer_steps: u64,
    /// The device's scratch: thread 0's clock at the last phase's end.
    pub peer_mark: u64,
    /// Out, `GRAIL_PEER_LISTS=check`: the changes the exchanges' lists missed.
    pub peer_missed: u64,
    /// A worklist loop run as one queue: the slots handed out, reserved by pushes, and done.
    pub queue_head: u64,
    pub queue_tail: u64,
    pub queue_done: u64,
}

/// `GRAIL_MAX_PARTS`: the most parts a region exchanging on the devices has.
pub const GRAIL_MAX_PARTS: usize = 8;

/// `grail_peer_entry`: a property an invocation of a kernel synchronizes between parts.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuPeerEntry {
    pub kernel: u32,
    pub size: u32,
    pub kind: u32,
    pub op: u32,
    pub merge: u32,
    pub refresh: u32,
    pub listed: u32,
    pub reserved: u32,
    pub columns: [u64; GRAIL_MAX_PARTS],
    pub ghost_records: [u64; GRAIL_MAX_PARTS],
    pub mirror_records: [u64; GRAIL_MAX_PARTS],
    pub in_before: [u64; GRAIL_MAX_PARTS],
    pub in_after: [u64; GRAIL_MAX_PARTS],
    pub in_step: [u64; GRAIL_MAX_PARTS],
}

/// `grail_peers`: a part's view of the exchange between parts on the devices (every pointer a
/// device address; those of other parts reached through peer access).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuPeers {
    pub part: u32,
    pub parts: u32,
    pub entries: u32,
    /// 0: supersteps; 1: asynchronous.
    pub mode: u32,
    pub ghosts: u64,
    pub mirrors: u64,
    pub plan: u64,
    pub ghost_local: u64,
    pub ghost_owner: u64,
    pub ghost_at: u64,
    pub ghost_mirror: u64,
    pub owner_of: u64,
    pub at_of: u64,
    pub mirror_local: u64,
    pub mirror_part: u64,
    pub mirror_ghost: u64,
    pub mirror_ghost_local: u64,
    pub forwarded: u64,
    pub barrier: u64,
    pub partials: [u64; GRAIL_MAX_PARTS],
    pub inbox: [u64; GRAIL_MAX_PARTS],
    pub inbox_len: [u64; GRAIL_MAX_PARTS],
    pub inbox_cap: [u64; GRAIL_MAX_PARTS],
    pub arrive: [u64; GRAIL_MAX_PARTS],
    pub mirror_counts: [u64; GRAIL_MAX_PARTS],
    pub words: [u64; GRAIL_MAX_PARTS],
    pub rec_ring: [u64; GRAIL_MAX_PARTS],
    pub node_ring: [u64; GRAIL_MAX_PARTS],
    pub rec_cap: [u64; GRAIL_MAX_PARTS],
    pub node_cap: [u64; GRAIL_MAX_PARTS],
    pub rec_most: [u64; GRAIL_MAX_PARTS],
    pub node_most: [u64; GRAIL_MAX_PARTS],
    pub rec_ring_in: [u64; GRAIL_MAX_PARTS],
    pub node_ring_in: [u64; GRAIL_MAX_PARTS],
    pub rec_cap_in: [u64; GRAIL_MAX_PARTS],
    pub node_cap_in: [u64; GRAIL_MAX_PARTS],
    pub ghost_position: u64,
    pub mirror_start: u64,
    pub mirror_order: u64,
}

/// How many senders' changes `grail_merge_changes_segs` merges in one launch.
pub const GRAIL_MERGE_SEGS: usize = 4;

/// `grail_merge_seg`: one sender's changes for `grail_merge_changes_segs`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuMergeSeg {
    /// `const uint32_t *at`: the sender's range of the fixed list.
    pub at: u64,
    /// `const grail_change *changes`: its share of an inbox.
    pub changes: u64,
    /// `uint64_t *record`: the words recorded for the range, or 0.
    pub record: u64,
    pub n: u64,
}

/// `grail_merge_segs`, passed by value (unused segments hold no changes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuMergeSegs {
    pub seg: [GpuMergeSeg; GRAIL_MERGE_SEGS],
}

/// The bytes of `grail_async_words`: a part's words for the asynchronous exchange (fifteen
/// arrays of a word per part, three words, four `u32`s).
pub const ASYNC_WORDS_BYTES: usize = (15 * GRAIL_MAX_PARTS + 3) * 8 + 16;

// SAFETY: plain `#[repr(C)]` data of integers with no implicit padding, as the header declares it.
unsafe impl DeviceRepr for GpuCtx {}
// SAFETY: as for `GpuCtx`.
unsafe impl DeviceRepr for GpuWorklist {}
// SAFETY: as for `GpuCtx`.
unsafe impl DeviceRepr for GpuColl {}
// SAFETY: as for `GpuCtx`.
unsafe impl DeviceRepr for GpuMergeSegs {}

/// C++ `static_assert`s that `grail_ctx`, `grail_wl` and `grail_coll` have the mirrors' sizes and offsets.
pub fn layout_checks() -> String {
    let check = |expr: String, value: usize| {
        format!("static_assert({expr} == {value}, \"{expr} differs from grail-runtime's mirror\");\n")
    };
    let mut out = String::from("/* grail-runtime's gpu/ffi.rs mirrors of grail_cuda.h's structs */\n");
    out += &check("GRAIL_SPILL_SEGS".into(), GRAIL_SPILL_SEGS);
    out += &check("GRAIL_SEGS".into(), GRAIL_SEGS);
    out += &check("sizeof(grail_value)".into(), 8);
    out += &check("sizeof(grail_wl)".into(), size_of::<GpuWorklist>());
    out += &check("sizeof(grail_ctx)".into(), size_of::<GpuCtx>());
    out += &check("sizeof(grail_coll)".into(), size_of::<GpuColl>());
    out += &check("sizeof(grail_list)".into(), size_of::<GpuList>());
    out += &check("sizeof(grail_region)".into(), size_of::<GpuRegion>());
    out += &check("GRAIL_RING".into(), GRAIL_RING);
    out += &check("GRAIL_MAX_PARTS".into(), GRAIL_MAX_PARTS);
    out += &check("sizeof(grail_peer_entry)".into(), size_of::<GpuPeerEntry>());
    out += &check("sizeof(grail_peers)".into(), size_of::<GpuPeers>());
    out += &check("sizeof(grail_async_words)".into(), ASYNC_WORDS_BYTES);
    out += &check("GRAIL_MERGE_SEGS".into(), GRAIL_MERGE_SEGS);
    out += &check("sizeof(grail_merge_segs)".into(), size_of::<GpuMergeSegs>());
    // Offsets need __builtin_offsetof, which NVRTC 13 has and 12 does not (nor offsetof: there is
    // no <stddef.h>); every NVRTC checks the sizes.
    out += "#if defined(__has_builtin)\n#if __has_builtin(__builtin_offsetof)\n";
    let worklist = [
        ("items", offset_of!(GpuWorklist, items)),
        ("len", offset_of!(GpuWorklist, len)),
        ("cap", offset_of!(GpuWorklist, cap)),
        ("overflow", offset_of!(GpuWorklist, overflow)),
        ("spill", offset_of!(GpuWorklist, spill)),
    ];
    for (field, offset) in worklist {
        out += &check(format!("__builtin_offsetof(grail_wl, {field})"), offset);
    }
    let ctx = [
        ("num_nodes", offset_of!(GpuCtx, num_nodes)),
        ("num_edges", offset_of!(GpuCtx, num_edges)),
        ("out_offsets", offset_of!(GpuCtx, out_offsets)),
        ("out_ends", offset_of!(GpuCtx, out_ends)),
        ("out_targets", offset_of!(GpuCtx, out_targets)),
        ("in_offsets", offset_of!(GpuCtx, in_offsets)),
        ("in_ends", offset_of!(GpuCtx, in_ends)),
        ("in_sources", offset_of!(GpuCtx, in_sources)),
        ("edge_sources", offset_of!(GpuCtx, edge_sources)),
        ("in_edge_ids", offset_of!(GpuCtx, in_edge_ids)),
        ("props", offset_of!(GpuCtx, props)),
        ("params", offset_of!(GpuCtx, params)),
        ("items", offset_of!(GpuCtx, items)),
        ("item_count", offset_of!(GpuCtx, item_count)),
        ("retrying", offset_of!(GpuCtx, retrying)),
        ("locks", offset_of!(GpuCtx, locks)),
        ("claims", offset_of!(GpuCtx, claims)),
        ("invocation", offset_of!(GpuCtx, invocation)),
        ("sets", offset_of!(GpuCtx, sets)),
        ("colls", offset_of!(GpuCtx, colls)),
        ("global_ids", offset_of!(GpuCtx, global_ids)),
        ("ghost_degrees", offset_of!(GpuCtx, ghost_degrees)),
        ("pushes", offset_of!(GpuCtx, pushes)),
        ("retries", offset_of!(GpuCtx, retries)),
        ("acc", offset_of!(GpuCtx, acc)),
        ("items_cap", offset_of!(GpuCtx, items_cap)),
        ("items_spill", offset_of!(GpuCtx, items_spill)),
        ("checks", offset_of!(GpuCtx, checks)),
        ("ghost_flags", offset_of!(GpuCtx, ghost_flags)),
        ("ghost_list", offset_of!(GpuCtx, ghost_list)),
        ("ghost_count", offset_of!(GpuCtx, ghost_count)),
        ("active", offset_of!(GpuCtx, active)),
    ];
    for (field, offset) in ctx {
        out += &check(format!("__builtin_offsetof(grail_ctx, {field})"), offset);
    }
    for (field, offset) in [
        ("len", offset_of!(GpuColl, len)),
        ("removed", offset_of!(GpuColl, removed)),
        ("segs", offset_of!(GpuColl, segs)),
        ("failed", offset_of!(GpuColl, failed)),
    ] {
        out += &check(format!("__builtin_offsetof(grail_coll, {field})"), offset);
    }
    for (field, offset) in [
        ("lists", offset_of!(GpuRegion, lists)),
        ("retry_lists", offset_of!(GpuRegion, retry_lists)),
        ("len", offset_of!(GpuRegion, len)),
        ("cur", offset_of!(GpuRegion, cur)),
        ("invocation", offset_of!(GpuRegion, invocation)),
        ("overflow", offset_of!(GpuRegion, overflow)),
        ("grid_blocks", offset_of!(GpuRegion, grid_blocks)),
        ("release", offset_of!(GpuRegion, release)),
        ("step_overflow", offset_of!(GpuRegion, step_overflow)),
        ("push_len", offset_of!(GpuRegion, push_len)),
        ("retry_len", offset_of!(GpuRegion, retry_len)),
        ("frame", offset_of!(GpuRegion, frame)),
        ("acc", offset_of!(GpuRegion, acc)),
        ("stats", offset_of!(GpuRegion, stats)),
        ("arrive", offset_of!(GpuRegion, arrive)),
        ("budget", offset_of!(GpuRegion, budget)),
        ("stopped", offset_of!(GpuRegion, stopped)),
        ("peers", offset_of!(GpuRegion, peers)),
        ("peer_ns", offset_of!(GpuRegion, peer_ns)),
        ("peer_phase_ns", offset_of!(GpuRegion, peer_phase_ns)),
        ("peer_steps", offset_of!(GpuRegion, peer_steps)),
        ("peer_mark", offset_of!(GpuRegion, peer_mark)),
        ("peer_missed", offset_of!(GpuRegion, peer_missed)),
    ] {
        out += &check(format!("__builtin_offsetof(grail_region, {field})"), offset);
    }
    for (field, offset) in [
        ("plan", offset_of!(GpuPeers, plan)),
        ("mirror_ghost_local", offset_of!(GpuPeers, mirror_ghost_local)),
        ("barrier", offset_of!(GpuPeers, barrier)),
        ("partials", offset_of!(GpuPeers, partials)),
        ("inbox_cap", offset_of!(GpuPeers, inbox_cap)),
        ("arrive", offset_of!(GpuPeers, arrive)),
        ("mirror_counts", offset_of!(GpuPeers, mirror_counts)),
        ("words", offset_of!(GpuPeers, words)),
        ("node_cap_in", offset_of!(GpuPeers, node_cap_in)),
        ("mirror_order", offset_of!(GpuPeers, mirror_order)),
    ] {
        out += &check(format!("__builtin_offsetof(grail_peers, {field})"), offset);
    }
    for (field, offset) in [
        ("listed", offset_of!(GpuPeerEntry, listed)),
        ("columns", offset_of!(GpuPeerEntry, columns)),
        ("mirror_records", offset_of!(GpuPeerEntry, mirror_records)),
    ] {
        out += &check(format!("__builtin_offsetof(grail_peer_entry, {field})"), offset);
    }
    out += "#endif\n#endif\n";
    out
}
