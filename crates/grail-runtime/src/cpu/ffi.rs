//! The C ABI of generated programs: `#[repr(C)]` mirrors of the types in `grail_cpu.h`
//! (crates/grail-codegen/src/c/grail_cpu.h) and the signatures of the symbols the C target
//! emits. Keep every struct here field for field in sync with the header; the layout test
//! below compiles the header and compares sizes and offsets.

use std::ffi::c_void;
use std::ptr;

/// `grail_value`: integers and bools in `u` (or `i`), floats in `f`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union GrailValue {
    pub u: u64,
    pub i: i64,
    pub f: f64,
}

impl Default for GrailValue {
    fn default() -> Self {
        GrailValue { u: 0 }
    }
}

/// `grail_buf`: a growable array of items, grown by generated code with `realloc` and freed
/// with the program's `grail_buf_free`.
#[repr(C)]
pub(crate) struct GrailBuf {
    pub data: *mut u32,
    pub len: u64,
    pub cap: u64,
    pub failed: u32,
}

impl GrailBuf {
    const EMPTY: GrailBuf = GrailBuf { data: ptr::null_mut(), len: 0, cap: 0, failed: 0 };

    /// The items appended since the last reset.
    pub fn items(&self) -> &[u32] {
        if self.len == 0 || self.data.is_null() {
            return &[];
        }
        // SAFETY: generated code keeps `data[..len]` initialised and `len <= cap`; nothing
        // appends while the runtime reads.
        unsafe { std::slice::from_raw_parts(self.data, self.len as usize) }
    }
}

/// `grail_ctx`: everything generated code reads about the graph and the run. Keep in sync with
/// `grail_ctx` in crates/grail-codegen/src/c/grail_cpu.h.
#[repr(C)]
pub(crate) struct GrailCtx {
    pub num_nodes: u64,
    pub num_edges: u64,
    pub out_offsets: *const u64,
    pub out_ends: *const u64,
    pub out_targets: *const u32,
    pub in_offsets: *const u64,
    pub in_ends: *const u64,
    pub in_sources: *const u32,
    pub edge_sources: *const u32,
    pub in_edge_ids: *const u64,
    pub props: *const *mut c_void,
    pub params: *const GrailValue,
    pub items: *const u32,
    pub item_count: u64,
    pub retrying: u32,
    pub locks: *mut u32,
    pub claims: *mut u32,
    pub invocation: u32,
    pub sets: *mut u32,
    pub colls: *mut GrailColl,
    pub graph_nodes: u64,
    pub graph_edges: u64,
    pub node_slots: u64,
    pub global_ids: *const u32,
    /// On a part: each ghost's out-degree in the whole graph, where kernels read degrees of
    /// other nodes than their items (null otherwise).
    pub ghost_degrees: *const u32,
}

/// The number of segments of a collection (`GRAIL_SEGS`).
pub(crate) const GRAIL_SEGS: usize = 23;

/// `grail_coll`: a collection's element count and segments, allocated by generated code (with
/// `calloc`) as elements are added and freed with the program's `grail_coll_free`.
#[repr(C)]
pub(crate) struct GrailColl {
    pub len: u64,
    /// Elements removed (marked; their slots are not reused).
    pub removed: u64,
    pub segs: [*mut c_void; GRAIL_SEGS],
    /// 1: a segment could not be allocated; 2: the collection is full.
    pub failed: u32,
}

impl GrailColl {
    pub const EMPTY: GrailColl = GrailColl { len: 0, removed: 0, segs: [ptr::null_mut(); GRAIL_SEGS], failed: 0 };
}

/// `grail_wbuf`: a growable array of 64-bit words (records of deferred loops), grown by
/// generated code with `realloc` and freed with the program's `grail_wbuf_free`.
#[repr(C)]
pub(crate) struct GrailWBuf {
    pub data: *mut u64,
    pub len: u64,
    pub cap: u64,
    pub failed: u32,
}

impl GrailWBuf {
    const EMPTY: GrailWBuf = GrailWBuf { data: ptr::null_mut(), len: 0, cap: 0, failed: 0 };

    /// The words appended since the last reset.
    pub fn words(&self) -> &[u64] {
        if self.len == 0 || self.data.is_null() {
            return &[];
        }
        // SAFETY: as for `GrailBuf::items`.
        unsafe { std::slice::from_raw_parts(self.data, self.len as usize) }
    }
}

/// `grail_thread`: one worker's push and retry buffers, its partial reduction, the loops it
/// deferred, and the size from which it defers them.
#[repr(C)]
pub(crate) struct GrailThread {
    pub retries: GrailBuf,
    pub deferred: GrailWBuf,
    pub pushes: GrailBuf,
    pub acc: GrailValue,
    pub split_min: u64,
    /// One per collection (null when the program has none).
    pub slots: *mut GrailSlots,
}

impl GrailThread {
    pub fn new() -> GrailThread {
        GrailThread {
            retries: GrailBuf::EMPTY,
            deferred: GrailWBuf::EMPTY,
            pushes: GrailBuf::EMPTY,
            acc: GrailValue::default(),
            split_min: u64::MAX,
            slots: ptr::null_mut(),
        }
    }
}

/// `grail_slots`: a thread's block of reserved slots in one collection, `[next, end)`, and the
/// removals it has not counted into the collection yet.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct GrailSlots {
    pub next: u64,
    pub end: u64,
    pub removed: u64,
}

/// A `grail_thread` alone on its cache lines: threads update their own buffers' lengths on
/// every push, and neighbours in one line would make every push a cache miss for the other.
#[repr(C, align(128))]
pub(crate) struct ThreadSlot(pub GrailThread);

impl std::ops::Deref for ThreadSlot {
    type Target = GrailThread;
    fn deref(&self) -> &GrailThread {
        &self.0
    }
}

impl std::ops::DerefMut for ThreadSlot {
    fn deref_mut(&mut self) -> &mut GrailThread {
        &mut self.0
    }
}

/// `uint64_t grail_k<k>_<p>_size(const grail_ctx *, const grail_value *args)`.
pub(crate) type SizeFn = unsafe extern "C" fn(*const GrailCtx, *const GrailValue) -> u64;
/// `void grail_k<k>_<p>(const grail_ctx *, const grail_value *args, uint64_t begin, uint64_t end,
/// grail_thread *)`.
pub(crate) type PhaseFn = unsafe extern "C" fn(*const GrailCtx, *const GrailValue, u64, u64, *mut GrailThread);
/// `void grail_k<k>_<p>_split(const grail_ctx *, const grail_value *args, const uint64_t *record,
/// uint64_t begin, uint64_t end, grail_thread *)`.
pub(crate) type SplitFn =
    unsafe extern "C" fn(*const GrailCtx, *const GrailValue, *const u64, u64, u64, *mut GrailThread);
/// `void grail_buf_free(grail_buf *)`.
pub(crate) type BufFreeFn = unsafe extern "C" fn(*mut GrailBuf);
/// `void grail_wbuf_free(grail_wbuf *)`.
pub(crate) type WBufFreeFn = unsafe extern "C" fn(*mut GrailWBuf);
/// `void grail_coll_free(grail_coll *)`.
pub(crate) type CollFreeFn = unsafe extern "C" fn(*mut GrailColl);
/// `uint64_t grail_merge_custom_<i>(const grail_ctx *, uint64_t current, uint64_t incoming)`: a
/// program's update function on words.
pub(crate) type MergeFn = unsafe extern "C" fn(*const GrailCtx, u64, u64) -> u64;
/// `uint32_t grail_c<c>_add_host(const grail_ctx *, const grail_value *flat)`.
pub(crate) type CollAddFn = unsafe extern "C" fn(*const GrailCtx, *const GrailValue) -> u32;
/// `uint32_t grail_c<c>_grow_host(const grail_ctx *, uint64_t count, uint64_t *base)`.
pub(crate) type CollGrowFn = unsafe extern "C" fn(*const GrailCtx, u64, *mut u64) -> u32;
/// `void grail_c<c>_put_host(const grail_ctx *, uint64_t index, const grail_value *flat)`.
pub(crate) type CollPutFn = unsafe extern "C" fn(*const GrailCtx, u64, *const GrailValue);
/// `void grail_c<c>_clear_claims(grail_coll *)`.
pub(crate) type CollClearFn = unsafe extern "C" fn(*mut GrailColl);
pub(crate) type CollBytesFn = unsafe extern "C" fn() -> u64;
/// `void grail_c<c>_get_host(const grail_ctx *, uint32_t index, grail_value *flat)`.
pub(crate) type CollGetFn = unsafe extern "C" fn(*const GrailCtx, u32, *mut GrailValue);

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;
    use crate::cache::ModuleCache;
    use crate::cpu::CCompiler;

    type LayoutFn = unsafe extern "C" fn(u32) -> u64;

    /// The header's layout, as the C compiler sees it, equals the mirrors'.
    #[test]
    fn layouts_match_the_header() {
        let source = format!(
            "{}\nuint64_t grail_test_layout(uint32_t q) {{ switch (q) {{
                case 0: return sizeof(grail_ctx);
                case 1: return offsetof(grail_ctx, edge_sources);
                case 2: return offsetof(grail_ctx, in_edge_ids);
                case 3: return offsetof(grail_ctx, retrying);
                case 4: return offsetof(grail_ctx, invocation);
                case 5: return offsetof(grail_ctx, sets);
                case 6: return sizeof(grail_thread);
                case 7: return offsetof(grail_thread, acc);
                case 8: return sizeof(grail_buf);
                case 9: return offsetof(grail_ctx, colls);
                case 10: return sizeof(grail_coll);
                case 11: return offsetof(grail_coll, failed);
                case 12: return offsetof(grail_ctx, items);
                case 13: return offsetof(grail_thread, split_min);
                case 14: return offsetof(grail_thread, deferred);
                case 15: return sizeof(grail_wbuf);
                case 16: return offsetof(grail_thread, slots);
                case 17: return sizeof(grail_slots);
                case 18: return offsetof(grail_ctx, ghost_degrees);
                default: return 0; }} }}\n",
            grail_codegen::c::CPU_HEADER.replace("#include <string.h>", "#include <string.h>\n#include <stddef.h>")
        );
        let dir = tempfile::tempdir().unwrap();
        let library = CCompiler::new("cc", Vec::new()).unwrap().load(&source, &ModuleCache::at(dir.path())).unwrap();
        let layout: LayoutFn = unsafe { library.function("grail_test_layout") }.unwrap();
        let expected = [
            size_of::<GrailCtx>(),
            offset_of!(GrailCtx, edge_sources),
            offset_of!(GrailCtx, in_edge_ids),
            offset_of!(GrailCtx, retrying),
            offset_of!(GrailCtx, invocation),
            offset_of!(GrailCtx, sets),
            size_of::<GrailThread>(),
            offset_of!(GrailThread, acc),
            size_of::<GrailBuf>(),
            offset_of!(GrailCtx, colls),
            size_of::<GrailColl>(),
            offset_of!(GrailColl, failed),
            offset_of!(GrailCtx, items),
            offset_of!(GrailThread, split_min),
            offset_of!(GrailThread, deferred),
            size_of::<GrailWBuf>(),
            offset_of!(GrailThread, slots),
            size_of::<GrailSlots>(),
            offset_of!(GrailCtx, ghost_degrees),
        ];
        for (q, want) in expected.into_iter().enumerate() {
            assert_eq!(unsafe { layout(q as u32) }, want as u64, "layout query {q}");
        }
    }
}
