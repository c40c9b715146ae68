//! The GPU self-test behind [`super::probe`]: one kernel that exercises every helper of
//! `grail_cuda.h` from many threads at once, and host checks of what it computed. The NVRTC tests
//! compile the same source, so CI checks that it builds; only a GPU runs it.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::error::GpuError;

use super::device::{Device, driver_error};
use super::ffi::{self, GpuCtx, GpuWorklist};

/// Threads the self-test kernel runs: `BLOCKS` blocks of `THREADS_PER_BLOCK`.
pub const BLOCKS: u32 = 8;
pub const THREADS_PER_BLOCK: u32 = 128;
const N: u64 = (BLOCKS * THREADS_PER_BLOCK) as u64;
/// Nodes the self-test's locks, claims and union-find cover.
const LOCKED: u64 = 16;
/// The capacity of the worklist that must overflow.
const SMALL_CAP: u64 = 100;
/// `grail_coll` in u64 words: len, removed, 23 segments, failed (and padding).
const COLL_WORDS: usize = size_of::<super::ffi::GpuColl>() / 8;

/// The kernel's name.
pub const KERNEL: &str = "grail_selftest";

/// Slots of the `scratch` array (u64 each). The host sets their initial values ([`initial`]).
mod slot {
    pub const MIN_U32: usize = 0;
    pub const MAX_U64: usize = 1;
    pub const ADD_I32: usize = 2;
    pub const SUB_I64: usize = 3;
    pub const OR_U32: usize = 4;
    pub const AND_U64: usize = 5;
    pub const CAS_U32: usize = 6;
    pub const ADD_F32: usize = 7;
    pub const MIN_F64: usize = 8;
    pub const MAX_F32: usize = 9;
    pub const SUB_F64: usize = 10;
    pub const OR_BOOL: usize = 11;
    pub const AND_BOOL: usize = 12;
    pub const CAS_BOOL: usize = 13;
    pub const MIN_I64: usize = 14;
    pub const CAS_F32: usize = 15;
    pub const CAS_F64: usize = 16;
    pub const MAX_I32: usize = 17;
    pub const ADD_U64: usize = 18;
    pub const COUNT: usize = 19;
}

/// Counters (u64 each): how many calls reported a change, and the lock and claim tallies.
mod count {
    use super::LOCKED;
    pub const CHANGED: usize = 0; // one per slot, slot::COUNT of them
    pub const LOCK_WINS: usize = super::slot::COUNT; // LOCKED: trylock successes per node
    pub const LOCKED_WRITES: usize = LOCK_WINS + LOCKED as usize; // LOCKED: plain increments under the lock
    pub const ALL_WINS: usize = LOCKED_WRITES + LOCKED as usize; // LOCKED: lock_all successes per node
    pub const ALL_WRITES: usize = ALL_WINS + LOCKED as usize; // LOCKED: increments under lock_all
    pub const CLAIMS: usize = ALL_WRITES + LOCKED as usize; // LOCKED: claims won per node
    pub const UNIONS: usize = CLAIMS + LOCKED as usize; // unions that merged
    pub const COLL_FAILS: usize = UNIONS + 1; // collection operations that went wrong
    pub const COLL_SUM: usize = COLL_FAILS + 1; // the sum of the elements, read back
    pub const COLL_SEEN: usize = COLL_SUM + 1; // the elements read back
    pub const COUNT: usize = COLL_SEEN + 1;
}

const KERNEL_SOURCE: &str = r#"
/* The self-test: every thread calls every helper; the host checks the outcome. */
#define CHANGED(slot) atomicAdd(&counts[slot], 1ull)
extern "C" __global__ void grail_selftest(const grail_ctx ctx, uint64_t *scratch, uint64_t *counts) {
    const grail_ctx *c = &ctx;
    uint64_t t = grail_thread_index();
    uint32_t k = (uint32_t)(t % GRAIL_LOCKED);

    if (grail_atomic_min_u32((uint32_t *)&scratch[0], (uint32_t)t + 7u)) CHANGED(0);
    if (grail_atomic_max_u64(&scratch[1], t)) CHANGED(1);
    if (grail_atomic_add_i32((int32_t *)&scratch[2], (t & 1) ? 2 : -1)) CHANGED(2);
    if (grail_atomic_sub_i64((int64_t *)&scratch[3], (int64_t)t)) CHANGED(3);
    if (grail_atomic_or_u32((uint32_t *)&scratch[4], 1u << (t % 32))) CHANGED(4);
    if (grail_atomic_and_u64(&scratch[5], ~(1ull << (t % 64)))) CHANGED(5);
    if (grail_atomic_cas_u32((uint32_t *)&scratch[6], 0u, (uint32_t)t + 1u)) CHANGED(6);
    if (grail_atomic_add_f32((float *)&scratch[7], 1.0f)) CHANGED(7);
    if (grail_atomic_min_f64((double *)&scratch[8], (double)(t + 3))) CHANGED(8);
    if (grail_atomic_max_f32((float *)&scratch[9], (float)t * 0.5f)) CHANGED(9);
    if (grail_atomic_sub_f64((double *)&scratch[10], 0.5)) CHANGED(10);
    if (grail_atomic_or_bool((bool *)&scratch[11] + t % 8, true)) CHANGED(11);
    if (grail_atomic_or_bool((bool *)&scratch[11] + t % 8, false)) CHANGED(11);
    if (grail_atomic_and_bool((bool *)&scratch[12] + t % 8, false)) CHANGED(12);
    if (grail_atomic_max_bool((bool *)&scratch[12] + t % 8, false)) CHANGED(12);
    if (grail_atomic_cas_bool((bool *)&scratch[13], false, true)) CHANGED(13);
    if (grail_atomic_cas_bool((bool *)&scratch[13] + 1, true, false)) CHANGED(13);
    if (grail_atomic_min_i64((int64_t *)&scratch[14], -(int64_t)t)) CHANGED(14);
    if (grail_atomic_cas_f32((float *)&scratch[15], 0.0f, 2.5f)) CHANGED(15);
    if (grail_atomic_cas_f64((double *)&scratch[16], 0.0, 4.25)) CHANGED(16);
    if (grail_atomic_max_i32((int32_t *)&scratch[17], (int32_t)t - 5)) CHANGED(17);
    if (grail_atomic_add_u64(&scratch[18], t)) CHANGED(18);
    /* Not counted: ops that must never report a change. */
    grail_atomic_add_u32((uint32_t *)&scratch[0] + 1, 0u);
    grail_atomic_sub_u32((uint32_t *)&scratch[0] + 1, 0u);
    grail_atomic_and_i32((int32_t *)&scratch[2] + 1, -1);
    grail_atomic_or_i64((int64_t *)&scratch[3], 0);
    grail_atomic_min_u64(&scratch[1], UINT64_MAX);
    grail_atomic_max_i64((int64_t *)&scratch[14], INT64_MIN);
    grail_atomic_min_i32((int32_t *)&scratch[17], INT32_MAX);
    grail_atomic_add_f64((double *)&scratch[10], 0.0);
    grail_atomic_sub_f32((float *)&scratch[7], 0.0f);
    grail_atomic_min_f32((float *)&scratch[9], INFINITY);
    grail_atomic_max_f64((double *)&scratch[8], -INFINITY);
    grail_atomic_min_bool((bool *)&scratch[11], true);
    grail_atomic_cas_u64(&scratch[1], 7ull, 7ull);
    grail_atomic_cas_i32((int32_t *)&scratch[2] + 1, 0, 0);
    grail_atomic_cas_i64((int64_t *)&scratch[3] + 0, 1, 1);

    /* Worklists: pushes past the capacity spill to the device heap and set overflow. */
    grail_push(&c->pushes, (uint32_t)t);
    grail_push(&c->retries, (uint32_t)t);

    /* Locks: a plain increment under a lock is never lost. */
    uint32_t *word = grail_lock_word(c, -1, 0, k);
    if (grail_trylock(word)) {
        volatile uint64_t *cell = &counts[GRAIL_LOCKED_WRITES + k];
        *cell = *cell + 1;
        grail_unlock(word);
        atomicAdd(&counts[GRAIL_LOCK_WINS + k], 1ull);
    }
    uint32_t elements[3] = {k, (k + 5u) % GRAIL_LOCKED, k};
    if (grail_lock_all(c, -1, 0, elements, 3)) {
        for (int i = 0; i < 3; i++) {
            if (i > 0 && elements[i] == elements[i - 1]) continue;
            volatile uint64_t *cell = &counts[GRAIL_ALL_WRITES + elements[i]];
            *cell = *cell + 1;
            atomicAdd(&counts[GRAIL_ALL_WINS + elements[i]], 1ull);
        }
        grail_unlock_all(c, -1, 0, elements, 3);
    }

    /* Single: one claim per node and invocation. */
    if (grail_claim(c, -1, 0, k)) atomicAdd(&counts[GRAIL_CLAIMS + k], 1ull);

    /* Union-find: joining every node to its half makes one set rooted at 0, in n - 1 merges. */
    for (uint64_t u = t; u < c->num_nodes; u += grail_thread_count())
        if (grail_union(c, 0, (uint32_t)u, (uint32_t)(u / 2))) atomicAdd(&counts[GRAIL_UNIONS], 1ull);

    /* Collections: three elements per thread fill segments 0 and 1 exactly. An element's
     * creator alone knows it, so its lock and its first claim succeed, a second claim fails. */
    for (int j = 0; j < 3; j++) {
        uint64_t e;
        if (!grail_coll_reserve(&c->colls[0], GRAIL_C0_BYTES, GRAIL_C0_LOCKS, &e)) {
            atomicAdd(&counts[GRAIL_COLL_FAILS], 1ull);
            continue;
        }
        *(uint32_t *)grail_elem(&c->colls[0], GRAIL_C0_F0, 4, e) = (uint32_t)(t * 3 + j);
        uint32_t *lock = grail_lock_word(c, 0, GRAIL_C0_LOCKS, (uint32_t)e);
        if (grail_trylock(lock)) grail_unlock(lock);
        else atomicAdd(&counts[GRAIL_COLL_FAILS], 1ull);
        if (!grail_claim(c, 0, GRAIL_C0_CLAIMS, (uint32_t)e)) atomicAdd(&counts[GRAIL_COLL_FAILS], 1ull);
        if (grail_claim(c, 0, GRAIL_C0_CLAIMS, (uint32_t)e)) atomicAdd(&counts[GRAIL_COLL_FAILS], 1ull);
    }
}

/* Reads the collection back (the host cannot read device-heap segments): its elements' sum and count. */
extern "C" __global__ void grail_selftest_read(const grail_ctx ctx, uint64_t *counts) {
    const grail_ctx *c = &ctx;
    uint64_t len = grail_coll_len(&c->colls[0]);
    for (uint64_t e = grail_thread_index(); e < len; e += grail_thread_count()) {
        atomicAdd(&counts[GRAIL_COLL_SUM], (uint64_t)*(uint32_t *)grail_elem(&c->colls[0], GRAIL_C0_F0, 4, e));
        atomicAdd(&counts[GRAIL_COLL_SEEN], 1ull);
    }
}

/* Frees the collection's segments, from one thread. */
extern "C" __global__ void grail_selftest_free(const grail_ctx ctx) {
    if (grail_thread_index() == 0) grail_coll_free(&ctx.colls[0]);
}
"#;

/// The defines the kernel's `GRAIL_*` counter names come from.
fn defines() -> String {
    format!(
        "#define GRAIL_LOCKED {LOCKED}u\n#define GRAIL_LOCK_WINS {}\n#define GRAIL_LOCKED_WRITES {}\n\
         #define GRAIL_ALL_WINS {}\n#define GRAIL_ALL_WRITES {}\n#define GRAIL_CLAIMS {}\n#define GRAIL_UNIONS {}\n\
         #define GRAIL_COLL_FAILS {}\n#define GRAIL_COLL_SUM {}\n#define GRAIL_COLL_SEEN {}\n\
         /* collection 0: one u32 field, then lock, claim and removed words, as the C target lays them out */\n\
         #define GRAIL_C0_F0 ((uint64_t)0)\n#define GRAIL_C0_LOCKS (GRAIL_C0_F0 + GRAIL_SEG_ARRAY(4))\n\
         #define GRAIL_C0_CLAIMS (GRAIL_C0_LOCKS + GRAIL_SEG_ARRAY(4))\n\
         #define GRAIL_C0_GONE (GRAIL_C0_CLAIMS + GRAIL_SEG_ARRAY(4))\n\
         #define GRAIL_C0_BYTES (GRAIL_C0_GONE + GRAIL_SEG_ARRAY(4))\n",
        count::LOCK_WINS,
        count::LOCKED_WRITES,
        count::ALL_WINS,
        count::ALL_WRITES,
        count::CLAIMS,
        count::UNIONS,
        count::COLL_FAILS,
        count::COLL_SUM,
        count::COLL_SEEN
    )
}

/// The self-test's CUDA source: `grail_cuda.h`, the layout checks of [`ffi::layout_checks`], and
/// the kernel.
pub fn source() -> String {
    format!("{}\n{}{}{}", grail_codegen::cuda::CUDA_HEADER, ffi::layout_checks(), defines(), KERNEL_SOURCE)
}

/// The scratch slots' initial values.
fn initial() -> Vec<u64> {
    let mut scratch = vec![0u64; slot::COUNT];
    scratch[slot::MIN_U32] = u32::MAX as u64;
    scratch[slot::AND_U64] = u64::MAX;
    scratch[slot::MIN_F64] = f64::INFINITY.to_bits();
    scratch[slot::MAX_F32] = f32::NEG_INFINITY.to_bits() as u64;
    scratch[slot::AND_BOOL] = 0x0101_0101_0101_0101;
    scratch[slot::MIN_I64] = 0;
    scratch[slot::MAX_I32] = (i32::MIN as u32) as u64;
    scratch
}

/// Runs the self-test kernel on `device` and checks every result.
pub fn run(device: &Device) -> Result<(), GpuError> {
    let info = device.info();
    let name = format!("device {} ({})", info.ordinal, info.name);
    let module = super::nvrtc::compile(&source(), "grail_selftest.cu", device.arch())?;
    let loaded = device.load(&module)?;
    let function = loaded.function(KERNEL)?;
    let read = loaded.function("grail_selftest_read")?;
    let free = loaded.function("grail_selftest_free")?;
    let stream = device.context().default_stream();
    let call = |what: &'static str| move |e| driver_error(what, e);

    let scratch_host = initial();
    let mut scratch = stream.clone_htod(&scratch_host).map_err(call("cuMemcpyHtoD"))?;
    let mut counts = stream.alloc_zeros::<u64>(count::COUNT).map_err(call("cuMemAlloc"))?;
    let locks = stream.alloc_zeros::<u32>(LOCKED as usize).map_err(call("cuMemAlloc"))?;
    let claims = stream.alloc_zeros::<u32>(LOCKED as usize).map_err(call("cuMemAlloc"))?;
    let parents: Vec<u32> = (0..N as u32).collect();
    let sets = stream.clone_htod(&parents).map_err(call("cuMemcpyHtoD"))?;
    let pushed = stream.alloc_zeros::<u32>(SMALL_CAP as usize).map_err(call("cuMemAlloc"))?;
    let retried = stream.alloc_zeros::<u32>(2 * N as usize).map_err(call("cuMemAlloc"))?;
    let lens = stream.alloc_zeros::<u64>(2).map_err(call("cuMemAlloc"))?;
    let overflows = stream.alloc_zeros::<u32>(2).map_err(call("cuMemAlloc"))?;
    let colls = stream.alloc_zeros::<u64>(COLL_WORDS).map_err(call("cuMemAlloc"))?;
    let spill = stream.alloc_zeros::<u64>(2 * ffi::GRAIL_SPILL_SEGS).map_err(call("cuMemAlloc"))?;
    let gathered = stream.alloc_zeros::<u32>(N as usize).map_err(call("cuMemAlloc"))?;

    use cudarc::driver::DevicePtr;
    let (locks_ptr, _l) = locks.device_ptr(&stream);
    let (claims_ptr, _c) = claims.device_ptr(&stream);
    let (sets_ptr, _s) = sets.device_ptr(&stream);
    let (pushed_ptr, _p) = pushed.device_ptr(&stream);
    let (retried_ptr, _r) = retried.device_ptr(&stream);
    let (lens_ptr, _n) = lens.device_ptr(&stream);
    let (overflows_ptr, _o) = overflows.device_ptr(&stream);
    let (colls_ptr, _k) = colls.device_ptr(&stream);
    let (spill_ptr, _sp) = spill.device_ptr(&stream);
    let (gathered_ptr, _g) = gathered.device_ptr(&stream);
    let ctx = GpuCtx {
        num_nodes: N,
        graph_nodes: N,
        node_slots: N,
        locks: locks_ptr,
        claims: claims_ptr,
        invocation: 1,
        sets: sets_ptr,
        colls: colls_ptr,
        pushes: GpuWorklist {
            items: pushed_ptr,
            len: lens_ptr,
            cap: SMALL_CAP,
            overflow: overflows_ptr,
            spill: spill_ptr,
        },
        retries: GpuWorklist {
            items: retried_ptr,
            len: lens_ptr + 8,
            cap: 2 * N,
            overflow: overflows_ptr + 4,
            spill: spill_ptr + 8 * ffi::GRAIL_SPILL_SEGS as u64,
        },
        ..GpuCtx::default()
    };
    let config = LaunchConfig { grid_dim: (BLOCKS, 1, 1), block_dim: (THREADS_PER_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.launch_builder(&function);
    launch.arg(&ctx).arg(&mut scratch).arg(&mut counts);
    // SAFETY: the kernel's parameters are (grail_ctx, uint64_t *, uint64_t *) as pushed; every
    // pointer in `ctx` is a live allocation of the size the kernel assumes.
    unsafe { launch.launch(config) }.map_err(call("cuLaunchKernel"))?;
    stream.synchronize().map_err(call("cuStreamSynchronize (the self-test kernel)"))?;
    let colls_added = stream.clone_dtoh(&colls).map_err(call("cuMemcpyDtoH"))?;
    // The pushes that spilled, gathered behind the ones that fit, as the executor grows a worklist.
    let unspill = loaded.function("grail_wl_unspill")?;
    let free_spill = loaded.function("grail_wl_free_spill")?;
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: both buffers are live and hold at least SMALL_CAP items.
    unsafe {
        cudarc::driver::result::memcpy_dtod_async(gathered_ptr, pushed_ptr, SMALL_CAP as usize * 4, stream.cu_stream())
    }
    .map_err(call("cuMemcpyDtoD"))?;
    let mut launch = stream.launch_builder(&unspill);
    launch.arg(&ctx.pushes).arg(&gathered_ptr).arg(&N);
    // SAFETY: (grail_wl, uint32_t *, uint64_t): `gathered` has N slots, the spill holds N - SMALL_CAP items.
    unsafe { launch.launch(config) }.map_err(call("cuLaunchKernel"))?;
    let mut launch = stream.launch_builder(&free_spill);
    launch.arg(&ctx.pushes);
    // SAFETY: (grail_wl), one thread frees.
    unsafe { launch.launch(one) }.map_err(call("cuLaunchKernel"))?;
    let mut launch = stream.launch_builder(&read);
    launch.arg(&ctx).arg(&mut counts);
    // SAFETY: (grail_ctx, uint64_t *), as above.
    unsafe { launch.launch(config) }.map_err(call("cuLaunchKernel"))?;
    let mut launch = stream.launch_builder(&free);
    launch.arg(&ctx);
    // SAFETY: (grail_ctx), as above; one thread frees.
    unsafe { launch.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }) }
        .map_err(call("cuLaunchKernel"))?;
    stream.synchronize().map_err(call("cuStreamSynchronize (the self-test's collection kernels)"))?;
    let colls_freed = stream.clone_dtoh(&colls).map_err(call("cuMemcpyDtoH"))?;

    let scratch = stream.clone_dtoh(&scratch).map_err(call("cuMemcpyDtoH"))?;
    let counts = stream.clone_dtoh(&counts).map_err(call("cuMemcpyDtoH"))?;
    let results = Results {
        scratch,
        counts,
        parents: stream.clone_dtoh(&sets).map_err(call("cuMemcpyDtoH"))?,
        pushed: stream.clone_dtoh(&gathered).map_err(call("cuMemcpyDtoH"))?,
        spill: stream.clone_dtoh(&spill).map_err(call("cuMemcpyDtoH"))?,
        retried: stream.clone_dtoh(&retried).map_err(call("cuMemcpyDtoH"))?,
        lens: stream.clone_dtoh(&lens).map_err(call("cuMemcpyDtoH"))?,
        overflows: stream.clone_dtoh(&overflows).map_err(call("cuMemcpyDtoH"))?,
        colls_added,
        colls_freed,
    };
    let failures = results.check();
    if failures.is_empty() { Ok(()) } else { Err(GpuError::SelfTest { device: name, message: failures.join("; ") }) }
}

/// What the kernel left, copied back.
struct Results {
    scratch: Vec<u64>,
    counts: Vec<u64>,
    parents: Vec<u32>,
    /// Every push, the spilled ones gathered behind the capacity.
    pushed: Vec<u32>,
    /// The spill tables after grail_wl_free_spill.
    spill: Vec<u64>,
    retried: Vec<u32>,
    lens: Vec<u64>,
    overflows: Vec<u32>,
    /// The `grail_coll` (as u64 words) after the adds, and after grail_coll_free.
    colls_added: Vec<u64>,
    colls_freed: Vec<u64>,
}

impl Results {
    /// Every expectation the kernel's results break, in words.
    fn check(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let mut expect = |what: &str, ok: bool, got: String| {
            if !ok {
                failures.push(format!("{what} (got {got})"));
            }
        };
        let s = &self.scratch;
        let changed = |slot: usize| self.counts[count::CHANGED + slot];
        let low = |slot: usize| s[slot] as u32;
        let high = |slot: usize| (s[slot] >> 32) as u32;
        let n = N;

        expect("atomic_min_u32 ends at the least value", low(slot::MIN_U32) == 7, low(slot::MIN_U32).to_string());
        expect("atomic_add/sub_u32 of 0 change nothing", high(slot::MIN_U32) == 0, high(slot::MIN_U32).to_string());
        let c = changed(slot::MIN_U32);
        expect("atomic_min_u32 reports between 1 and n changes", (1..=n).contains(&c), c.to_string());
        expect("atomic_max_u64 ends at n - 1", s[slot::MAX_U64] == n - 1, s[slot::MAX_U64].to_string());
        let c = changed(slot::MAX_U64);
        expect("atomic_max_u64 reports between 1 and n - 1 changes", (1..n).contains(&c), c.to_string());
        let sum = (n / 2) as i32 * 2 - (n / 2) as i32;
        expect("atomic_add_i32 sums", low(slot::ADD_I32) as i32 == sum, (low(slot::ADD_I32) as i32).to_string());
        expect("atomic_add_i32 reports every add", changed(slot::ADD_I32) == n, changed(slot::ADD_I32).to_string());
        expect(
            "atomic_and_i32 with all ones changes nothing",
            high(slot::ADD_I32) == 0,
            high(slot::ADD_I32).to_string(),
        );
        let want = -((n * (n - 1) / 2) as i64);
        expect("atomic_sub_i64 subtracts", s[slot::SUB_I64] as i64 == want, (s[slot::SUB_I64] as i64).to_string());
        expect(
            "atomic_sub_i64 reports every nonzero sub",
            changed(slot::SUB_I64) == n - 1,
            changed(slot::SUB_I64).to_string(),
        );
        expect("atomic_or_u32 sets every bit", low(slot::OR_U32) == u32::MAX, format!("{:#x}", low(slot::OR_U32)));
        expect("atomic_or_u32 reports each bit once", changed(slot::OR_U32) == 32, changed(slot::OR_U32).to_string());
        expect("atomic_and_u64 clears every bit", s[slot::AND_U64] == 0, format!("{:#x}", s[slot::AND_U64]));
        expect(
            "atomic_and_u64 reports each bit once",
            changed(slot::AND_U64) == 64,
            changed(slot::AND_U64).to_string(),
        );
        let v = low(slot::CAS_U32);
        expect("atomic_cas_u32 stores one thread's value", (1..=n as u32).contains(&v), v.to_string());
        expect("atomic_cas_u32 has one winner", changed(slot::CAS_U32) == 1, changed(slot::CAS_U32).to_string());
        let f = f32::from_bits(low(slot::ADD_F32));
        expect("atomic_add_f32 sums", f == n as f32, f.to_string());
        expect("atomic_add_f32 reports every add", changed(slot::ADD_F32) == n, changed(slot::ADD_F32).to_string());
        let d = f64::from_bits(s[slot::MIN_F64]);
        expect("atomic_min_f64 ends at the least value", d == 3.0, d.to_string());
        let c = changed(slot::MIN_F64);
        expect("atomic_min_f64 reports between 1 and n changes", (1..=n).contains(&c), c.to_string());
        let f = f32::from_bits(low(slot::MAX_F32));
        expect("atomic_max_f32 ends at the greatest value", f == (n - 1) as f32 * 0.5, f.to_string());
        let d = f64::from_bits(s[slot::SUB_F64]);
        expect("atomic_sub_f64 subtracts", d == -(n as f64) * 0.5, d.to_string());
        expect("atomic_sub_f64 reports every sub", changed(slot::SUB_F64) == n, changed(slot::SUB_F64).to_string());
        let all_true = 0x0101_0101_0101_0101u64;
        expect("atomic_or_bool sets each byte", s[slot::OR_BOOL] == all_true, format!("{:#x}", s[slot::OR_BOOL]));
        expect(
            "atomic_or_bool reports each byte once",
            changed(slot::OR_BOOL) == 8,
            changed(slot::OR_BOOL).to_string(),
        );
        expect("atomic_and_bool clears each byte", s[slot::AND_BOOL] == 0, format!("{:#x}", s[slot::AND_BOOL]));
        expect(
            "atomic_and_bool reports each byte once",
            changed(slot::AND_BOOL) == 8,
            changed(slot::AND_BOOL).to_string(),
        );
        expect("atomic_cas_bool sets byte 0 only", s[slot::CAS_BOOL] == 1, format!("{:#x}", s[slot::CAS_BOOL]));
        expect("atomic_cas_bool has one winner", changed(slot::CAS_BOOL) == 1, changed(slot::CAS_BOOL).to_string());
        let want = -((n - 1) as i64);
        expect(
            "atomic_min_i64 ends at the least value",
            s[slot::MIN_I64] as i64 == want,
            (s[slot::MIN_I64] as i64).to_string(),
        );
        let f = f32::from_bits(low(slot::CAS_F32));
        expect("atomic_cas_f32 stores", f == 2.5, f.to_string());
        expect("atomic_cas_f32 has one winner", changed(slot::CAS_F32) == 1, changed(slot::CAS_F32).to_string());
        let d = f64::from_bits(s[slot::CAS_F64]);
        expect("atomic_cas_f64 stores", d == 4.25, d.to_string());
        expect("atomic_cas_f64 has one winner", changed(slot::CAS_F64) == 1, changed(slot::CAS_F64).to_string());
        let v = low(slot::MAX_I32) as i32;
        expect("atomic_max_i32 ends at the greatest value", v == n as i32 - 6, v.to_string());
        let want = n * (n - 1) / 2;
        expect("atomic_add_u64 sums", s[slot::ADD_U64] == want, s[slot::ADD_U64].to_string());
        expect(
            "atomic_add_u64 reports nonzero adds",
            changed(slot::ADD_U64) == n - 1,
            changed(slot::ADD_U64).to_string(),
        );

        expect("push counts every push", self.lens[0] == n, self.lens[0].to_string());
        expect("push past the capacity sets overflow to 1", self.overflows[0] == 1, self.overflows[0].to_string());
        let mut pushed = self.pushed.clone();
        pushed.sort_unstable();
        let fine = pushed.iter().enumerate().all(|(i, &v)| v as usize == i);
        expect("push spills past the capacity and unspill gathers every item", fine, "a different set".into());
        expect("free_spill frees every spill segment", self.spill.iter().all(|&p| p == 0), format!("{:?}", self.spill));
        expect("push within the capacity counts every push", self.lens[1] == n, self.lens[1].to_string());
        expect("push within the capacity leaves overflow unset", self.overflows[1] == 0, self.overflows[1].to_string());
        let mut retried = self.retried[..n as usize].to_vec();
        retried.sort_unstable();
        let fine = retried.iter().enumerate().all(|(i, &v)| v as usize == i);
        expect("push within the capacity keeps every item", fine, "a different set".into());
        expect("push writes nothing past len", self.retried[n as usize..].iter().all(|&v| v == 0), "writes".into());

        for k in 0..LOCKED as usize {
            let (wins, writes) = (self.counts[count::LOCK_WINS + k], self.counts[count::LOCKED_WRITES + k]);
            expect(
                &format!("trylock: increments under lock {k} are not lost"),
                wins == writes,
                format!("{writes} of {wins}"),
            );
            let (wins, writes) = (self.counts[count::ALL_WINS + k], self.counts[count::ALL_WRITES + k]);
            expect(
                &format!("lock_all: increments under lock {k} are not lost"),
                wins == writes,
                format!("{writes} of {wins}"),
            );
            let claims = self.counts[count::CLAIMS + k];
            expect(&format!("claim: node {k} is claimed once"), claims == 1, claims.to_string());
        }
        let unions = self.counts[count::UNIONS];
        expect("union merges n - 1 times and every find reaches 0", unions == n - 1, unions.to_string());
        let rooted = (0..self.parents.len()).all(|mut u| {
            for _ in 0..self.parents.len() {
                if self.parents[u] as usize == u {
                    break;
                }
                if self.parents[u] as usize > u {
                    return false;
                }
                u = self.parents[u] as usize;
            }
            u == 0
        });
        expect("union makes the smaller id the parent, with 0 the root", rooted, "another forest".into());

        let (added, freed) = (&self.colls_added, &self.colls_freed);
        let elements = 3 * n;
        expect("coll_reserve counts every element", added[0] == elements, added[0].to_string());
        let segments: Vec<bool> = added[2..25].iter().map(|&p| p != 0).collect();
        let two = segments[..2] == [true, true] && segments[2..].iter().all(|&s| !s);
        expect("coll_reserve allocates segments 0 and 1 for 3072 elements", two, format!("{segments:?}"));
        expect("coll_reserve does not fail", added[25] as u32 == 0, (added[25] as u32).to_string());
        let fails = self.counts[count::COLL_FAILS];
        expect("element locks and claims behave", fails == 0, format!("{fails} failures"));
        let seen = self.counts[count::COLL_SEEN];
        expect("coll_len and elem read every element back", seen == elements, seen.to_string());
        let sum = self.counts[count::COLL_SUM];
        expect("elements keep their values", sum == elements * (elements - 1) / 2, sum.to_string());
        expect("coll_free empties the collection", freed.iter().all(|&w| w == 0), format!("{freed:?}"));
        failures
    }
}
