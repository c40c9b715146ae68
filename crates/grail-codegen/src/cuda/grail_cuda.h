/* grail CUDA runtime header: included at the top of every generated CUDA program.
 *
 * The device-side counterpart of grail_cpu.h, with the same names for the same things, so that
 * one C-family printer emits for both targets: a grail_ctx (the graph, property columns,
 * parameters, the input worklist, locks, claims, union-find parents, collections), the
 * grail_atomic_<op>_<type> helpers, grail_lock_word / grail_trylock / grail_unlock /
 * grail_lock_all / grail_unlock_all, grail_claim, grail_find / grail_union, and the collection
 * helpers (grail_elem, grail_coll_reserve, grail_coll_len). What differs: pushes and retries go to
 * device worklists (grail_wl, grail_push) instead of per-thread growable buffers, there is no
 * grail_thread, and collection segments come from the device heap.
 *
 * Compiled by NVRTC (grail-runtime's gpu module) as CUDA C++17, usually with -default-device, so
 * the printer's unannotated helper functions are device functions (declare them `inline`, not
 * `static inline`: NVRTC warns, #177, about every unused static function); kernels are
 * `extern "C" __global__`, taking the grail_ctx by value. NVRTC has no C library headers (no
 * <stdint.h>, <math.h>, <stdbool.h> on most versions), so this header includes nothing: it
 * defines the fixed-width types and the few macros generated code uses itself. Device math
 * (sqrt, fabsf, ...), malloc, free and memset are built into NVRTC.
 *
 * Memory ordering: CUDA atomics are relaxed. Locks add a device-scope fence (__threadfence) after
 * taking and before releasing, which makes them acquire and release. Loads that must see other
 * threads' writes while a kernel runs (union-find parents, claim words, bool words) go through
 * volatile, which bypasses the non-coherent L1. */

#ifndef GRAIL_CUDA_H
#define GRAIL_CUDA_H

/* ---- Types and constants that C headers would give (the same types as on the host) ---- */

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
/* long long, not long: the CUDA atomics are declared for (unsigned) long long. Both are 64 bits,
 * so structs have the host's layout. */
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;

#ifndef INT8_MAX
#define INT8_MAX 127
#endif
#ifndef INT32_MAX
#define INT32_MAX 2147483647
#endif
#ifndef INT32_MIN
#define INT32_MIN (-INT32_MAX - 1)
#endif
#ifndef INT64_MAX
#define INT64_MAX 9223372036854775807LL
#endif
#ifndef INT64_MIN
#define INT64_MIN (-INT64_MAX - 1)
#endif
#ifndef UINT8_MAX
#define UINT8_MAX 255
#endif
#ifndef UINT32_MAX
#define UINT32_MAX 4294967295U
#endif
#ifndef UINT64_MAX
#define UINT64_MAX 18446744073709551615ULL
#endif
#ifndef INT64_C
#define INT64_C(c) c##LL
#endif
#ifndef UINT64_C
#define UINT64_C(c) c##ULL
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef NULL
#define NULL nullptr
#endif
/* C99's restrict is not a C++ keyword. */
#ifndef restrict
#define restrict __restrict__
#endif

/* Every helper here is a device function, inlined. */
#define GRAIL_DEVICE __device__ __forceinline__
/* The program's functions (inlined where the compiler sees fit) and its phases' item loops
 * (inlined into their kernel, or into an outlined region's control kernel). Either can be kept
 * out of line to measure what the size of the code costs: `GRAIL_NVRTC_FLAGS=
 * -DGRAIL_NOINLINE_FUNCTIONS` or `-DGRAIL_NOINLINE_PHASES`. */
#ifdef GRAIL_NOINLINE_FUNCTIONS
#define GRAIL_FUNCTION __device__ __noinline__
#else
#define GRAIL_FUNCTION __device__
#endif
#ifdef GRAIL_NOINLINE_PHASES
#define GRAIL_PHASE __device__ __noinline__
#else
#define GRAIL_PHASE __device__ __forceinline__
#endif
/* The hub executor (grail-codegen's cuda/schedule.rs): a nested loop of at least GRAIL_HUB_MIN
 * iterations is run by the whole grid after its phase, GRAIL_HUB_CHUNK iterations at a time per
 * block; a phase posts at most GRAIL_HUB_CAP such loops per step (the rest stay with their
 * blocks). GRAIL_NVRTC_FLAGS=-DGRAIL_HUB_MIN=... moves the threshold (-1u: never). */
#ifndef GRAIL_HUB_MIN
#define GRAIL_HUB_MIN (32u * GRAIL_BLOCK)
#endif
#ifndef GRAIL_HUB_CHUNK
#define GRAIL_HUB_CHUNK (4u * GRAIL_BLOCK)
#endif
#define GRAIL_HUB_CAP 8192u
/* A step's hubs posted: their count above GRAIL_HUB_SHIFT, their positions' total below. */
#define GRAIL_HUB_SHIFT 40
#define GRAIL_HUB_ONE ((uint64_t)1 << GRAIL_HUB_SHIFT)

/* A phase whose `exclusive` marks decide (grail_k<k>_<p>_run_marks) is kept out of line unless
 * GRAIL_INLINE_MARKS is defined: inlined into dmr's control kernel it faults on sm_90 (an invalid
 * address read early in an item, with the context's collection pointer garbled) unless ptxas
 * runs at -O0, and out of line it refines 10 M triangles, verified. The cause is not found. */
#if defined(GRAIL_INLINE_MARKS) && !defined(GRAIL_NOINLINE_PHASES)
#define GRAIL_PHASE_MARKS __device__ __forceinline__
#else
#define GRAIL_PHASE_MARKS __device__ __noinline__
#endif

/* ---- Values, worklists and the context ---- */

/* One argument, parameter or reduction value: integers and bools in u (or i), floats in f. */
typedef union grail_value {
    uint64_t u;
    int64_t i;
    double f;
} grail_value;

/* A worklist in device memory, written by grail_push. It never loses an item:
 * - Before a launch the host sets *len = 0 and *overflow = 0; `items` has room for `cap` items.
 * - grail_push reserves a slot with an atomicAdd on *len. A slot below `cap` gets the item. A
 *   slot j at or past `cap` spills: the item goes to spill segment s = floor(log2((j - cap) /
 *   2^GRAIL_SPILL_LOG + 1)), which holds 2^GRAIL_SPILL_LOG << s items and is allocated from the
 *   device heap by the first push that needs it (`spill` is a device array of GRAIL_SPILL_SEGS
 *   pointers, zero when unused), and *overflow is set to 1.
 * - After the kernel the host reads *len and *overflow. Overflow 1: the host grows `items` to
 *   at least *len slots, copies the spilled items into it with grail_wl_unspill, and frees the
 *   segments with grail_wl_free_spill: nothing is re-run and nothing is lost. Overflow 2: the
 *   device heap ran out while spilling; the host stops the program with an out-of-memory error.
 * Keep in sync with `GpuWorklist` in crates/grail-runtime/src/gpu/ffi.rs. */
#define GRAIL_SPILL_LOG 16
#define GRAIL_SPILL_SEGS 24
typedef struct grail_wl {
    uint32_t *items;
    /* Pushes made so far; may pass cap (the rest spilled). */
    uint64_t *len;
    uint64_t cap;
    uint32_t *overflow;
    void **spill;
} grail_wl;

/* Collections, laid out as in grail_cpu.h: element i lives in segment s = floor(log2(i / 1024 + 1)),
 * which holds 1024 << s elements; a segment is allocated by the first thread that adds into it
 * and never moves. In the columns layout a segment stores each field of the element struct as an
 * array, then a lock, a claim and a removed word per element, at the byte offsets the generated
 * code names for segment 0 (shifted left by s in segment s); in the rows layout each element is a
 * row of `stride` bytes holding its fields and words (GRAIL_ROW(stride, offset)).
 *
 * On the GPU a segment comes from the device heap (malloc in device code), so: the runtime sets
 * the heap size (cuCtxSetLimit with CU_LIMIT_MALLOC_HEAP_SIZE) before the first launch; segment
 * memory cannot be copied or freed by the host (driver calls do not take device-heap pointers),
 * so the host reads elements and frees segments (grail_coll_free) through kernels.
 * Keep in sync with `GpuColl` in crates/grail-runtime/src/gpu/ffi.rs. */
#define GRAIL_SEG_LOG 10
#define GRAIL_SEGS 23
/* The most elements a collection holds: handles are u32, and UINT32_MAX means "none". */
#define GRAIL_COLL_MAX ((uint64_t)UINT32_MAX - 1)
/* The bytes of one field array in segment 0, rounded up to a cache line. */
#define GRAIL_SEG_ARRAY(size) ((((uint64_t)(size) << GRAIL_SEG_LOG) + 63) & ~(uint64_t)63)
/* A field or word at byte `offset` of rows of `stride` bytes (the rows layout). */
#define GRAIL_ROW_BIT ((uint64_t)1 << 63)
#define GRAIL_ROW(stride, offset) (GRAIL_ROW_BIT | ((uint64_t)(stride) << 32) | (uint64_t)(offset))
#define GRAIL_ALIGN_UP(x, a) ((((uint64_t)(x)) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))
#define GRAIL_ALIGNOF(t) alignof(t)
/* A field or word's address in segment `seg` (number s), element k of it: GRAIL_ROW_BIT tells a
 * row offset from a column offset (a constant: the test folds away). */
#define GRAIL_SLOT(seg, s, offset, size, k)                                                                  \
    (((offset) & GRAIL_ROW_BIT) ? (void *)((char *)(seg) + (uint64_t)(uint32_t)(k) * (((offset) >> 32) & 0x7fffffffu) + \
                                           ((offset) & 0xffffffffu))                                           \
                                : (void *)((char *)(seg) + ((offset) << (s)) + (uint32_t)(k) * (size)))
/* The word after a lock or claim word: the claim after the lock, the removed after the claim. */
#define GRAIL_NEXT_WORD(offset) (((offset) & GRAIL_ROW_BIT) ? (offset) + 4 : (offset) + GRAIL_SEG_ARRAY(4))

typedef struct grail_coll {
    /* Elements added so far (reserved slots; may pass GRAIL_COLL_MAX only when failed is set). */
    uint64_t len;
    /* Elements removed so far (each slot's removed word says which). */
    uint64_t removed;
    void *segs[GRAIL_SEGS];
    /* 1 when allocating a segment failed, 2 when the collection is full; the runtime reports it. */
    uint32_t failed;
} grail_coll;

/* Everything a kernel sees, all in device memory; passed to a kernel by value.
 * The fields up to `ghost_degrees` are grail_cpu.h's grail_ctx, in its order.
 * Keep in sync with `GpuCtx` in crates/grail-runtime/src/gpu/ffi.rs (its #[repr(C)] mirror). */
typedef struct grail_ctx {
    uint64_t num_nodes;
    uint64_t num_edges;
    /* Node n's out-edges are positions out_offsets[n] .. out_ends[n] of out_targets (and of
     * edge columns). On a packed CSR out_ends is out_offsets + 1; on a graph with room per node
     * (a dynamic algorithm's) a row may be followed by unused slots, and num_edges counts slots. */
    const uint64_t *out_offsets;
    const uint64_t *out_ends;
    const uint32_t *out_targets;
    /* The reverse CSR (in-edges), or NULL when the program never looks at in-edges; packed. */
    const uint64_t *in_offsets;
    const uint64_t *in_ends;
    const uint32_t *in_sources;
    /* The tail of every out-edge, by edge id; NULL unless the program reads `e.src`. */
    const uint32_t *edge_sources;
    /* For each position of the reverse CSR, the id of the same edge among the out-edges; NULL
     * unless the program iterates `in_edges()` as edges. */
    const uint64_t *in_edge_ids;
    /* Property columns, by property id (a device array of device pointers). Bool columns are one
     * byte per element, allocated in whole 4-byte words (bool atomics work on the word). */
    void *const *props;
    /* Program parameters, by parameter id. */
    const grail_value *params;
    /* The input worklist, or the items being retried. */
    const uint32_t *items;
    uint64_t item_count;
    /* When set, a phase over all nodes runs over `items` instead (retried items). */
    uint32_t retrying;
    /* One lock word per node, for atomic and exclusive; zero when free. */
    uint32_t *locks;
    /* One claim word per node, for single: the invocation that claimed it. */
    uint32_t *claims;
    /* The current invocation's number (never 0). */
    uint32_t invocation;
    /* Union-find parents: set s, node u at sets[s * node_slots + u] (a part's ghosts have parents too). */
    uint32_t *sets;
    /* The program's collections, by collection id. */
    grail_coll *colls;
    /* The whole graph's node and edge counts, node slots and local nodes' global ids, as in
     * grail_cpu.h. */
    uint64_t graph_nodes;
    uint64_t graph_edges;
    uint64_t node_slots;
    const uint32_t *global_ids;
    /* Each ghost's out-degree, as in grail_cpu.h. */
    const uint32_t *ghost_degrees;
    /* Where the kernel pushes (its output worklist) and where it puts items to retry. */
    grail_wl pushes;
    grail_wl retries;
    /* The kernel's reduction value, combined into with the grail_atomic_* helpers; the runtime
     * starts it at the operator's identity. NULL when the kernel reduces nothing. */
    grail_value *acc;
    /* In a module with outlined regions, `items` holds the first `items_cap` items and the rest
     * are in the spill segments of `items_spill` (see grail_item); elsewhere items_cap is
     * UINT64_MAX. */
    uint64_t items_cap;
    void *const *items_spill;
    /* Checked mode's record of the first failed check (see grail_check_failed): three words. */
    uint64_t *checks;
    /* On a part of a partitioned graph whose worklist loop runs whole on the device: a ghost
     * (a node another part owns) found in the worklist is noted here, once (its flag, then the
     * list and its count), and not run; NULL elsewhere (see grail_note_ghost). */
    uint32_t *ghost_flags;
    uint32_t *ghost_list;
    unsigned long long *ghost_count;
    /* Adaptive parallelism (`--opt adapt=on`): only the grid's first `active` threads take items
     * (a whole number of blocks); 0: every thread. */
    uint32_t active;
} grail_ctx;

/* ---- Checked mode (`grail run --checks`) ----
 * Compiled with GRAIL_CHECKS defined, a program checks on the device what the CPU target's
 * hardware and executor check: an integer division or remainder by zero, or of the type's
 * minimum by -1 (a CPU faults on both; a GPU computes a meaningless value), and that every pushed
 * item is a node of the graph (the CPU executor checks its worklists). The first failure is
 * recorded in ctx->checks (word 0: what, a GRAIL_CHECK_* code; word 1: the value at fault; word
 * 2, set by an outlined region: the index plus one of the kernel whose step found it) and
 * the thread carries on with a harmless value (a quotient of 0, node 0 pushed), so the kernel
 * ends normally and the context survives; the host reads the record after every wait and stops
 * the run. A loop that never returns to the host in between (an outlined region's iterate, whose
 * substitute pushes would keep it going) asks grail_checks_failed after each grid-wide step and
 * leaves the region. Without GRAIL_CHECKS the helpers are the bare operations.
 * Keep the codes in sync with `check` in crates/grail-runtime/src/gpu/executor.rs. */
#define GRAIL_CHECK_DIVIDE 1u
#define GRAIL_CHECK_PUSH 2u
#define GRAIL_CHECK_PUSH_ELEMENT 3u

#ifdef GRAIL_CHECKS
GRAIL_DEVICE void grail_check_failed(const grail_ctx *ctx, uint64_t what, uint64_t value) {
    if (atomicCAS((unsigned long long *)ctx->checks, 0ull, (unsigned long long)what) == 0ull) {
        ctx->checks[1] = value;
    }
}
#define GRAIL_DIV_CHECK(ctx, bad)                                                             \
    if (bad) {                                                                                 \
        grail_check_failed(ctx, GRAIL_CHECK_DIVIDE, 0);                                       \
        return 0;                                                                              \
    }
#else
#define GRAIL_DIV_CHECK(ctx, bad)
#endif

/* Integer `a / b` and `a % b` of each type (BAD: the operands a CPU faults on), checked in
 * checked mode. */
#define GRAIL_DIVISION(T, NAME, BAD)                                                          \
    GRAIL_DEVICE T grail_div_##NAME(const grail_ctx *ctx, T a, T b) {                         \
        (void)ctx;                                                                              \
        GRAIL_DIV_CHECK(ctx, BAD)                                                              \
        return (T)(a / b);                                                                     \
    }                                                                                          \
    GRAIL_DEVICE T grail_rem_##NAME(const grail_ctx *ctx, T a, T b) {                         \
        (void)ctx;                                                                              \
        GRAIL_DIV_CHECK(ctx, BAD)                                                              \
        return (T)(a % b);                                                                     \
    }
GRAIL_DIVISION(int32_t, i32, b == 0 || (b == -1 && a == INT32_MIN))
GRAIL_DIVISION(int64_t, i64, b == 0 || (b == -1 && a == INT64_MIN))
GRAIL_DIVISION(uint32_t, u32, b == 0)
GRAIL_DIVISION(uint64_t, u64, b == 0)

/* Whether a check has failed in this run (always false without GRAIL_CHECKS). */
GRAIL_DEVICE bool grail_checks_failed(const grail_ctx *ctx) {
#ifdef GRAIL_CHECKS
    return *(volatile const uint64_t *)ctx->checks != 0ull;
#else
    (void)ctx;
    return false;
#endif
}

/* A pushed item, checked in checked mode to be a node of the graph (node 0 is pushed instead). */
GRAIL_DEVICE uint32_t grail_pushed(const grail_ctx *ctx, uint32_t item) {
#ifdef GRAIL_CHECKS
    if ((uint64_t)item >= ctx->node_slots) {
        grail_check_failed(ctx, GRAIL_CHECK_PUSH, item);
        return 0;
    }
#endif
    (void)ctx;
    return item;
}

/* ---- Thread indexing ---- */

/* This thread's index in the grid, and the number of threads in the grid (for grid-stride loops). */
GRAIL_DEVICE uint64_t grail_thread_index(void) {
    return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
GRAIL_DEVICE uint64_t grail_thread_count(void) {
    return (uint64_t)gridDim.x * blockDim.x;
}

/* Adaptive parallelism: the threads that take items in invocation `n` (0, 1, ...) of a morph
 * kernel in an outlined region's launch: an eighth, a quarter and half of the grid's (whole
 * warps), then every thread (0). */
GRAIL_DEVICE uint32_t grail_adapt_threads(uint64_t n) {
    if (n >= 3u) return 0u;
    const uint64_t part = grail_thread_count() >> (3u - n);
    return (uint32_t)((part + 31u) / 32u * 32u);
}

/* The threads that take items in a phase's item loop: the grid's first ctx->active (adaptive
 * parallelism), or all of them. */
GRAIL_DEVICE uint64_t grail_item_threads(const grail_ctx *ctx) {
    const uint64_t all = grail_thread_count();
    return ctx->active != 0u && (uint64_t)ctx->active < all ? (uint64_t)ctx->active : all;
}

/* ---- Block-wide helpers of the nested-parallelism schedulers ---- */

/* The exclusive prefix sum of `v` over the block's threads (in thread order) and, in *total, the
 * sum of all. Every thread of the block must call it (it holds barriers); blockDim.x is a
 * multiple of 32. */
GRAIL_DEVICE uint64_t grail_block_exclusive_scan(uint64_t v, uint64_t *total) {
    __shared__ uint64_t warp_sums[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    uint64_t x = v;
    for (unsigned o = 1; o < 32; o <<= 1) {
        const uint64_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31u) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        uint64_t s = lane < warps ? warp_sums[lane] : 0;
        for (unsigned o = 1; o < 32; o <<= 1) {
            const uint64_t y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    const uint64_t before = warp > 0 ? warp_sums[warp - 1] : 0;
    *total = warp_sums[warps - 1];
    __syncthreads();
    return before + x - v;
}

/* ---- Retry backoff (IrGL §4.4): a retry pass hands each thread a block of consecutive items ---- */

/* Items per thread, and the bound of the loop index j whose item is grail_backoff_item(j). */
GRAIL_DEVICE uint64_t grail_backoff_limit(uint64_t size) {
    const uint64_t threads = grail_thread_count();
    return (size + threads - 1) / threads * threads;
}
/* The item of loop index j (j runs grid-stride below grail_backoff_limit): thread t takes items
 * t*R .. t*R+R-1, one per pass; items at or past `size` are skipped by the caller. */
GRAIL_DEVICE uint64_t grail_backoff_item(uint64_t j, uint64_t size) {
    const uint64_t threads = grail_thread_count();
    const uint64_t per_thread = (size + threads - 1) / threads;
    return (j % threads) * per_thread + j / threads;
}

/* The item of loop index j in the first pass of a kernel that retries: the items scattered
 * (j times a prime, modulo the count: a permutation for any count below the prime), so that the
 * threads running at once hold items from all over the worklist. Items pushed together tend to
 * be neighbours (a cavity's new triangles), and neighbours running together conflict. */
GRAIL_DEVICE uint64_t grail_first_item(uint64_t j, uint64_t size) {
    return size < 2 ? j : (j * 2147483647ull) % size;
}

/* ---- Loads that see other threads' writes ---- */

GRAIL_DEVICE uint32_t grail_load_u32(const uint32_t *p) {
    return *(const volatile uint32_t *)p;
}
GRAIL_DEVICE void *grail_load_ptr(void *const *p) {
    return *(void *const volatile *)p;
}

/* ---- Segments from the device heap ---- */

/* A segment slot holds 0 (not allocated), GRAIL_SEG_BUSY (a thread is allocating it),
 * GRAIL_SEG_FAILED (the device heap was exhausted) or the segment's address. */
#define GRAIL_SEG_BUSY ((uint64_t)1)
#define GRAIL_SEG_FAILED ((uint64_t)2)

/* The segment in `*slot`, allocating `bytes` (not zeroed) from the device heap if no thread has:
 * the first thread to find the slot empty allocates, the others wait for it (one malloc per
 * segment, so a burst of threads never exhausts the heap with copies). NULL when the heap is
 * exhausted. */
GRAIL_DEVICE void *grail_segment_get(void **slot, uint64_t bytes) {
    uint64_t *word = (uint64_t *)slot;
    uint64_t seen = *(volatile uint64_t *)word;
    if (seen == 0 && atomicCAS(word, (uint64_t)0, GRAIL_SEG_BUSY) == 0) {
        void *fresh = malloc(bytes);
        seen = fresh ? (uint64_t)(uintptr_t)fresh : GRAIL_SEG_FAILED;
        __threadfence(); /* what the allocating thread wrote is visible before the segment is */
        atomicExch(word, seen);
    }
    while (seen <= GRAIL_SEG_BUSY) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(64);
#endif
        seen = *(volatile uint64_t *)word;
    }
    return seen == GRAIL_SEG_FAILED ? NULL : (void *)(uintptr_t)seen;
}

/* Frees a segment slot's memory (run by device code: device-heap memory is the device's). */
GRAIL_DEVICE void grail_segment_free(void **slot) {
    uint64_t p = (uint64_t)(uintptr_t)*slot;
    if (p > GRAIL_SEG_FAILED) free((void *)(uintptr_t)p);
    *slot = NULL;
}

/* ---- Worklists ---- */

/* The spill segment and the position in it of spilled item j. */
GRAIL_DEVICE unsigned grail_spill_segment(uint64_t j, uint64_t *position) {
    uint64_t q = (j >> GRAIL_SPILL_LOG) + 1;
    unsigned s = 63u - (unsigned)__clzll((long long)q);
    *position = j - ((((uint64_t)1 << s) - 1) << GRAIL_SPILL_LOG);
    return s;
}

/* Stores `item` in reserved slot `slot` of the worklist: below `cap` in `items`, past it in a
 * spill segment (see grail_wl); false only when the device heap ran out. */
GRAIL_DEVICE bool grail_push_slot(const grail_wl *wl, uint64_t slot, uint32_t item) {
    if (slot < wl->cap) {
        wl->items[slot] = item;
        return true;
    }
    uint64_t k;
    unsigned s = grail_spill_segment(slot - wl->cap, &k);
    uint32_t *segment = s < GRAIL_SPILL_SEGS
        ? (uint32_t *)grail_segment_get(&wl->spill[s], (uint64_t)4 << (GRAIL_SPILL_LOG + s)) : NULL;
    if (!segment) {
        atomicMax(wl->overflow, 2u);
        return false;
    }
    segment[k] = item;
    atomicMax(wl->overflow, 1u);
    return true;
}

/* Appends `item` to the worklist (see grail_wl); false only when the device heap ran out. */
GRAIL_DEVICE bool grail_push(const grail_wl *wl, uint32_t item) {
    return grail_push_slot(wl, atomicAdd(wl->len, (uint64_t)1), item);
}

/* Cooperative conversion at warp level (IrGL §4.2.1): the threads of a warp that push together
 * reserve their slots with one atomic by the lowest of them, each taking the slot of its rank
 * among them. Correct whichever threads arrive together: every thread in the mask runs this. */
GRAIL_DEVICE uint64_t grail_warp_slot(const grail_wl *wl) {
    const unsigned mask = __activemask();
    const unsigned lane = threadIdx.x & 31u;
    const int leader = __ffs(mask) - 1;
    const unsigned rank = __popc(mask & ((1u << lane) - 1u));
    uint64_t base = 0;
    if ((int)lane == leader) base = atomicAdd(wl->len, (uint64_t)__popc(mask));
    base = __shfl_sync(mask, base, leader);
    return base + rank;
}
GRAIL_DEVICE bool grail_push_warp(const grail_wl *wl, uint32_t item) {
    return grail_push_slot(wl, grail_warp_slot(wl), item);
}

/* Cooperative conversion at block level (IrGL §4.2, Listing 9): called by every thread of the
 * block together, at a focal point (the end of an executor round), `valid` saying whether the
 * thread has `item` to push. One atomic per block reserves the slots; each thread takes the
 * slot of its rank among the block's pushers. Contains barriers. */
GRAIL_DEVICE void grail_push_block(const grail_wl *wl, bool valid, uint32_t item) {
    __shared__ uint32_t before_[32];
    __shared__ uint64_t base_;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned ballot = __ballot_sync(0xffffffffu, valid);
    if (lane == 0u) before_[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t total = 0;
        for (unsigned w = 0; w < (blockDim.x >> 5); w++) {
            const uint32_t n = before_[w];
            before_[w] = total;
            total += n;
        }
        base_ = total ? atomicAdd(wl->len, (uint64_t)total) : 0;
    }
    __syncthreads();
    if (valid) grail_push_slot(wl, base_ + before_[warp] + __popc(ballot & ((1u << lane) - 1u)), item);
    /* Every thread has read base_ and before_ before the next call writes them. */
    __syncthreads();
}

/* What an empty slot of a queue holds (grail_queue). */
#define GRAIL_QUEUE_EMPTY 0xffffffffu

/* The pushes of a kernel run as one queue (grail_queue): the item is stored with release
 * semantics, so that whatever the thread wrote before (the atomic that lowered the node) is seen
 * by the block that takes the item (grail_queue_item reads it with an acquire load). */
GRAIL_DEVICE void grail_store_release(uint32_t *p, uint32_t v);
GRAIL_DEVICE bool grail_push_slot_release(const grail_wl *wl, uint64_t slot, uint32_t item) {
    /* No node has the empty slot's number; a program that pushes it anyway (a bug the rounds
     * would fault on) gets another number past every node, and faults on it as well, rather
     * than leaving the block that takes the slot waiting for it forever. */
    if (item == GRAIL_QUEUE_EMPTY) item = GRAIL_QUEUE_EMPTY - 1u;
    if (slot < wl->cap) {
        grail_store_release(&wl->items[slot], item);
        return true;
    }
    /* Past the capacity nobody waits for the slot: the item is the next invocation's. */
    return grail_push_slot(wl, slot, item);
}
GRAIL_DEVICE bool grail_push_release(const grail_wl *wl, uint32_t item) {
    return grail_push_slot_release(wl, atomicAdd(wl->len, (uint64_t)1), item);
}
GRAIL_DEVICE bool grail_push_warp_release(const grail_wl *wl, uint32_t item) {
    return grail_push_slot_release(wl, grail_warp_slot(wl), item);
}
GRAIL_DEVICE void grail_push_block_release(const grail_wl *wl, bool valid, uint32_t item) {
    /* The block's pushes are recorded by the threads that made them; a fence orders each
     * thread's writes before its item, which grail_push_block stores plainly. */
    __threadfence();
    grail_push_block(wl, valid, item);
}

/* Item i of a worklist whose first `cap` items are in `items` and the rest in the spill segments
 * of `spill` (a list an outlined region pushed past its capacity). */
GRAIL_DEVICE uint32_t grail_item(const uint32_t *items, uint64_t cap, void *const *spill, uint64_t i) {
    if (i < cap) return items[i];
    uint64_t k;
    unsigned s = grail_spill_segment(i - cap, &k);
    return ((const uint32_t *)grail_load_ptr(&spill[s]))[k];
}

/* Copies spilled items [from, to) (slots past the old `cap`) into `dest` at the same slots. */
extern "C" __global__ void grail_wl_unspill(const grail_wl wl, uint32_t *dest, uint64_t to) {
    for (uint64_t j = wl.cap + grail_thread_index(); j < to; j += grail_thread_count()) {
        uint64_t k;
        unsigned s = grail_spill_segment(j - wl.cap, &k);
        dest[j] = ((const uint32_t *)wl.spill[s])[k];
    }
}

/* Frees the spill segments, from one thread. */
extern "C" __global__ void grail_wl_free_spill(const grail_wl wl) {
    if (grail_thread_index() == 0)
        for (int s = 0; s < GRAIL_SPILL_SEGS; s++) grail_segment_free(&wl.spill[s]);
}

/* ---- Atomic read-modify-writes on property elements; each returns whether the value changed ---- */

/* Integers. U is the unsigned type of T's bits: add, sub, and, or and cas work on the bits. */
#define GRAIL_ATOMIC_INT(T, U, NAME)                                                            \
    GRAIL_DEVICE bool grail_atomic_min_##NAME(T *p, T v) { return v < atomicMin(p, v); }      \
    GRAIL_DEVICE bool grail_atomic_max_##NAME(T *p, T v) { return v > atomicMax(p, v); }      \
    GRAIL_DEVICE bool grail_atomic_add_##NAME(T *p, T v) {                                     \
        atomicAdd((U *)p, (U)v);                                                               \
        return v != 0;                                                                         \
    }                                                                                          \
    GRAIL_DEVICE bool grail_atomic_sub_##NAME(T *p, T v) {                                     \
        atomicAdd((U *)p, (U)0 - (U)v);                                                        \
        return v != 0;                                                                         \
    }                                                                                          \
    GRAIL_DEVICE bool grail_atomic_and_##NAME(T *p, T v) {                                     \
        T old = (T)atomicAnd((U *)p, (U)v);                                                    \
        return (T)(old & v) != old;                                                            \
    }                                                                                          \
    GRAIL_DEVICE bool grail_atomic_or_##NAME(T *p, T v) {                                      \
        T old = (T)atomicOr((U *)p, (U)v);                                                     \
        return (T)(old | v) != old;                                                            \
    }                                                                                          \
    GRAIL_DEVICE bool grail_atomic_cas_##NAME(T *p, T expected, T v) {                         \
        return (T)atomicCAS((U *)p, (U)expected, (U)v) == expected && expected != v;           \
    }

GRAIL_ATOMIC_INT(uint32_t, uint32_t, u32)
GRAIL_ATOMIC_INT(uint64_t, uint64_t, u64)
GRAIL_ATOMIC_INT(int32_t, uint32_t, i32)
GRAIL_ATOMIC_INT(int64_t, uint64_t, i64)

/* Bools are one byte; CUDA atomics work on 4-byte words, so these work on the aligned word that
 * holds the byte (the runtime allocates bool columns in whole words). Min is and, max is or. */
GRAIL_DEVICE uint32_t *grail_bool_word(bool *p, uint32_t *shift) {
    uintptr_t a = (uintptr_t)p;
    *shift = (uint32_t)(a & 3u) * 8u;
    return (uint32_t *)(a & ~(uintptr_t)3u);
}
GRAIL_DEVICE bool grail_atomic_or_bool(bool *p, bool v) {
    if (!v) return false;
    uint32_t shift;
    uint32_t *word = grail_bool_word(p, &shift);
    uint32_t old = atomicOr(word, 1u << shift);
    return ((old >> shift) & 0xffu) == 0u;
}
GRAIL_DEVICE bool grail_atomic_and_bool(bool *p, bool v) {
    if (v) return false;
    uint32_t shift;
    uint32_t *word = grail_bool_word(p, &shift);
    uint32_t old = atomicAnd(word, ~(0xffu << shift));
    return ((old >> shift) & 0xffu) != 0u;
}
GRAIL_DEVICE bool grail_atomic_min_bool(bool *p, bool v) { return grail_atomic_and_bool(p, v); }
GRAIL_DEVICE bool grail_atomic_max_bool(bool *p, bool v) { return grail_atomic_or_bool(p, v); }
GRAIL_DEVICE bool grail_atomic_cas_bool(bool *p, bool expected, bool v) {
    if (expected == v) return false;
    uint32_t shift;
    uint32_t *word = grail_bool_word(p, &shift);
    uint32_t seen = *(volatile uint32_t *)word;
    for (;;) {
        if ((((seen >> shift) & 0xffu) != 0u) != expected) return false;
        uint32_t next = (seen & ~(0xffu << shift)) | ((uint32_t)v << shift);
        uint32_t prev = atomicCAS(word, seen, next);
        if (prev == seen) return true;
        seen = prev; /* another byte of the word, or this one, changed: look again */
    }
}

/* Floats. Min and max are compare-and-swap loops on the bits that mirror grail_cpu.h (no write
 * when the value would not change). Add and sub use the hardware's atomicAdd, and report a change
 * when old + v differs from old. */
GRAIL_DEVICE bool grail_atomic_min_f32(float *p, float v) {
    uint32_t *q = (uint32_t *)p;
    uint32_t old_bits = *(volatile uint32_t *)q;
    for (;;) {
        float old = __uint_as_float(old_bits);
        float next = v < old ? v : old;
        if (next == old) return false;
        uint32_t prev = atomicCAS(q, old_bits, __float_as_uint(next));
        if (prev == old_bits) return true;
        old_bits = prev;
    }
}
GRAIL_DEVICE bool grail_atomic_max_f32(float *p, float v) {
    uint32_t *q = (uint32_t *)p;
    uint32_t old_bits = *(volatile uint32_t *)q;
    for (;;) {
        float old = __uint_as_float(old_bits);
        float next = v > old ? v : old;
        if (next == old) return false;
        uint32_t prev = atomicCAS(q, old_bits, __float_as_uint(next));
        if (prev == old_bits) return true;
        old_bits = prev;
    }
}
GRAIL_DEVICE bool grail_atomic_add_f32(float *p, float v) {
    float old = atomicAdd(p, v);
    return old + v != old;
}
GRAIL_DEVICE bool grail_atomic_sub_f32(float *p, float v) {
    float old = atomicAdd(p, -v);
    return old - v != old;
}
GRAIL_DEVICE bool grail_atomic_cas_f32(float *p, float expected, float v) {
    uint32_t e = __float_as_uint(expected), n = __float_as_uint(v);
    return atomicCAS((uint32_t *)p, e, n) == e && e != n;
}

GRAIL_DEVICE bool grail_atomic_min_f64(double *p, double v) {
    uint64_t *q = (uint64_t *)p;
    uint64_t old_bits = *(volatile uint64_t *)q;
    for (;;) {
        double old = __longlong_as_double((long long)old_bits);
        double next = v < old ? v : old;
        if (next == old) return false;
        uint64_t prev = atomicCAS(q, old_bits, (uint64_t)__double_as_longlong(next));
        if (prev == old_bits) return true;
        old_bits = prev;
    }
}
GRAIL_DEVICE bool grail_atomic_max_f64(double *p, double v) {
    uint64_t *q = (uint64_t *)p;
    uint64_t old_bits = *(volatile uint64_t *)q;
    for (;;) {
        double old = __longlong_as_double((long long)old_bits);
        double next = v > old ? v : old;
        if (next == old) return false;
        uint64_t prev = atomicCAS(q, old_bits, (uint64_t)__double_as_longlong(next));
        if (prev == old_bits) return true;
        old_bits = prev;
    }
}
GRAIL_DEVICE double grail_atomic_add_f64_old(double *p, double v) {
#if __CUDA_ARCH__ >= 600
    return atomicAdd(p, v);
#else
    /* Before sm_60 there is no double atomicAdd. */
    uint64_t *q = (uint64_t *)p;
    uint64_t old_bits = *(volatile uint64_t *)q;
    for (;;) {
        double old = __longlong_as_double((long long)old_bits);
        uint64_t prev = atomicCAS(q, old_bits, (uint64_t)__double_as_longlong(old + v));
        if (prev == old_bits) return old;
        old_bits = prev;
    }
#endif
}
GRAIL_DEVICE bool grail_atomic_add_f64(double *p, double v) {
    double old = grail_atomic_add_f64_old(p, v);
    return old + v != old;
}
GRAIL_DEVICE bool grail_atomic_sub_f64(double *p, double v) {
    double old = grail_atomic_add_f64_old(p, -v);
    return old - v != old;
}
GRAIL_DEVICE bool grail_atomic_cas_f64(double *p, double expected, double v) {
    uint64_t e = (uint64_t)__double_as_longlong(expected), n = (uint64_t)__double_as_longlong(v);
    return atomicCAS((uint64_t *)p, e, n) == e && e != n;
}

/* ---- Collections ---- */

/* The segment and the position in it of element i. In 32-bit arithmetic: an element index is
 * below GRAIL_COLL_MAX < 2^32, so (i >> GRAIL_SEG_LOG) + 1 stays below 2^22 and the segment's start
 * below 2^32; 64-bit shifts and leading-zero counts cost the GPU several instructions each, and
 * every field access pays this. */
GRAIL_DEVICE unsigned grail_segment(uint64_t i, uint64_t *position) {
    const uint32_t e = (uint32_t)i;
    const uint32_t q = (e >> GRAIL_SEG_LOG) + 1u;
    const unsigned s = 31u - (unsigned)__clz((int)q);
    *position = e - (((1u << s) - 1u) << GRAIL_SEG_LOG);
    return s;
}

/* The address of element i's entry in the array at `offset` (in segment 0) of `size` bytes each. */
GRAIL_DEVICE void *grail_elem(const grail_coll *c, uint64_t offset, uint64_t size, uint64_t i) {
    uint64_t k;
    unsigned s = grail_segment(i, &k);
    /* A segment's address never changes once set (the host frees segments only between launches),
     * so a cached read that finds it set is current, and the compiler may reuse it; one that
     * finds it unset (allocated since this multiprocessor last read the word) reads again around
     * the cache. */
    char *seg = (char *)c->segs[s];
    if (seg == NULL) seg = (char *)grail_load_ptr(&c->segs[s]);
    return GRAIL_SLOT(seg, s, offset, size, k);
}

/* Makes slot i ready for its element: its segment allocated if no thread has yet
 * (grail_segment_get), its lock, claim and removed words (at `locks` and the two words after it)
 * zeroed. False when the device heap is exhausted (then `failed` is 1). */
GRAIL_DEVICE bool grail_coll_place(grail_coll *c, uint64_t seg0_bytes, uint64_t locks, uint64_t i) {
    uint64_t k;
    unsigned s = grail_segment(i, &k);
    char *segment = (char *)grail_segment_get(&c->segs[s], seg0_bytes << s);
    if (!segment) {
        atomicMax(&c->failed, 1u);
        return false;
    }
    const uint64_t claims = GRAIL_NEXT_WORD(locks), gone = GRAIL_NEXT_WORD(claims);
    *(uint32_t *)GRAIL_SLOT(segment, s, locks, 4, k) = 0u;
    *(uint32_t *)GRAIL_SLOT(segment, s, claims, 4, k) = 0u;
    *(uint32_t *)GRAIL_SLOT(segment, s, gone, 4, k) = 0u;
    return true;
}

/* Reserves the next element, allocating its segment if no thread has (grail_segment_get). The
 * segment is not zeroed: the element's fields are written by its add, and its lock, claim and
 * removed words (the last three arrays of the layout, whatever the fields) are zeroed here, so
 * nothing reads memory its creator did not write. False when the device heap is exhausted or the
 * collection is full: `failed` says which, and the runtime stops the program. */
GRAIL_DEVICE bool grail_coll_reserve(grail_coll *c, uint64_t seg0_bytes, uint64_t locks, uint64_t *index) {
    uint64_t i = atomicAdd(&c->len, (uint64_t)1);
    if (i >= GRAIL_COLL_MAX) {
        atomicMax(&c->failed, 2u);
        return false;
    }
    if (!grail_coll_place(c, seg0_bytes, locks, i)) return false;
    *index = i;
    return true;
}

/* The handle a failed add returns: element 0, which the failing thread then writes instead of the
 * element that could not be made, so that no access strays outside the collection's memory (a
 * handle past its end would name a segment never allocated). The run is doomed: `failed` is set,
 * an outlined region leaves after its step (grail_colls_failed) and the host stops the program
 * with the collection's error when it next waits. A collection without element 0 stops the
 * kernel (a trap). */
GRAIL_DEVICE uint32_t grail_coll_sink(const grail_coll *c) {
    if ((uint64_t)(uintptr_t)grail_load_ptr(&c->segs[0]) > GRAIL_SEG_FAILED) return 0u;
    __trap();
    return 0u;
}

/* Whether one of the first `n` collections could not grow (see grail_coll_sink). */
GRAIL_DEVICE bool grail_colls_failed(const grail_ctx *ctx, int n) {
    for (int i = 0; i < n; i++) {
        if (*(volatile const uint32_t *)&ctx->colls[i].failed != 0u) return true;
    }
    return false;
}

/* The number of elements a loop over the collection visits. */
GRAIL_DEVICE uint64_t grail_coll_len(const grail_coll *c) {
    uint64_t n = *(const volatile uint64_t *)&c->len;
    return n < GRAIL_COLL_MAX ? n : GRAIL_COLL_MAX;
}

/* A pushed element of collection `coll`, checked in checked mode to be one of its elements
 * (element 0 is pushed instead, and the run stops when the host next waits). */
GRAIL_DEVICE uint32_t grail_pushed_element(const grail_ctx *ctx, int coll, uint32_t item) {
#ifdef GRAIL_CHECKS
    if ((uint64_t)item >= grail_coll_len(&ctx->colls[coll])) {
        grail_check_failed(ctx, GRAIL_CHECK_PUSH_ELEMENT, item);
        return 0;
    }
#endif
    (void)ctx;
    (void)coll;
    return item;
}

/* Item i of the C array `a` (an array local's `.v`); an index past the end stops the kernel
 * (a trap: a kernel fault the runtime reports). */
#define GRAIL_TRAP() __trap()
#define GRAIL_AT(a, i) ((a)[(uint64_t)(i) < sizeof(a) / sizeof((a)[0]) ? (uint64_t)(i) : (GRAIL_TRAP(), (uint64_t)0)])

/* Removal marks an element (its removed word, at `gone` in segment 0): loops over the collection
 * skip it, its slot is not reused (handles held elsewhere never name another element), and its
 * fields stay readable. A handle that is not an element is never present and cannot be removed. */
GRAIL_DEVICE bool grail_coll_has(const grail_coll *c, uint64_t gone, uint32_t i) {
    /* The count only grows during a launch: a cached read that covers i is enough. */
    if ((uint64_t)i >= GRAIL_COLL_MAX || ((uint64_t)i >= c->len && (uint64_t)i >= grail_coll_len(c))) return false;
    return *(volatile uint32_t *)grail_elem(c, gone, 4, i) == 0u;
}

/* Orders this thread's earlier writes before its later ones for every other thread (an edge's
 * fields before the list head that publishes it). */
GRAIL_DEVICE void grail_fence_release(void) { __threadfence(); }

/* Removes element i; true for the one call that removed it. */
GRAIL_DEVICE bool grail_coll_remove(grail_coll *c, uint64_t gone, uint32_t i) {
    if ((uint64_t)i >= grail_coll_len(c)) return false;
    if (atomicExch((unsigned int *)grail_elem(c, gone, 4, i), 1u) != 0u) return false;
    atomicAdd((unsigned long long *)&c->removed, 1ull);
    return true;
}

/* The number of elements present: added and not removed. */
GRAIL_DEVICE uint64_t grail_coll_live(const grail_coll *c) {
    return grail_coll_len(c) - *(const volatile uint64_t *)&c->removed;
}

/* Frees a collection's segments; run by one device thread (device-heap memory is the device's). */
GRAIL_DEVICE void grail_coll_free(grail_coll *c) {
    for (int s = 0; s < GRAIL_SEGS; s++) grail_segment_free(&c->segs[s]);
    c->len = 0;
    c->removed = 0;
    c->failed = 0;
}

/* Frees every collection of a run, one thread per collection. */
extern "C" __global__ void grail_colls_free(grail_coll *colls, uint32_t count) {
    uint64_t t = grail_thread_index();
    if (t < count) grail_coll_free(&colls[t]);
}

/* ---- Partitioned runs: words moved between the parts of a graph ---- */

/* Element `k` of a column of `size`-byte elements as a 64-bit word (zero-extended), and back. */
GRAIL_DEVICE uint64_t grail_load_word(const void *column, uint32_t size, uint64_t k) {
    return size == 8 ? ((const uint64_t *)column)[k]
         : size == 4 ? (uint64_t)((const uint32_t *)column)[k]
                     : (uint64_t)((const uint8_t *)column)[k];
}

GRAIL_DEVICE void grail_store_word(void *column, uint32_t size, uint64_t k, uint64_t word) {
    if (size == 8) ((uint64_t *)column)[k] = word;
    else if (size == 4) ((uint32_t *)column)[k] = (uint32_t)word;
    else ((uint8_t *)column)[k] = (uint8_t)word;
}

/* The elements `at[0..n)` of a column copied into words. */
extern "C" __global__ void grail_gather_words(const void *column, uint32_t size, const uint32_t *at, uint64_t n,
                                              uint64_t *words) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) words[i] = grail_load_word(column, size, at[i]);
}

/* A position of a fixed list whose word changed (crates/grail-runtime/src/multi/mod.rs's Change). */
typedef struct grail_change {
    uint32_t position;
    uint64_t old_word;
    uint64_t new_word;
} grail_change;

/* Compares the elements `at[0..n)` with the words recorded for them, records the current ones,
 * and appends each changed position to `out` (counting in *count, zero on entry). */
extern "C" __global__ void grail_diff_words(const void *column, uint32_t size, const uint32_t *at, uint64_t n,
                                            uint64_t *record, grail_change *out, unsigned long long *count) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        uint64_t word = grail_load_word(column, size, at[i]);
        uint64_t old = record[i];
        if (word != old) {
            record[i] = word;
            unsigned long long k = atomicAdd(count, 1ull);
            out[k].position = (uint32_t)i;
            out[k].old_word = old;
            out[k].new_word = word;
        }
    }
}

/* Growing a resident graph by a batch of edges (grail-runtime's DeviceGraph::insert). The batch
 * comes sorted by source, stable; each node's inserted edges go after its own edges, in batch
 * order, as grail_graph's Csr::insert places them on the host. */

/* The first index in [lo, hi) of the non-decreasing `keys` whose key is not below `v` (`hi` if none). */
GRAIL_DEVICE uint32_t grail_first_not_below(const uint32_t *keys, uint32_t lo, uint32_t hi, uint64_t v) {
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if ((uint64_t)keys[mid] < v) lo = mid + 1u;
        else hi = mid;
    }
    return lo;
}

/* A graph with room per node (grail_graph::room), grown on the device by the steps the host's
 * copy took (DeviceGraph::insert), so that both hold the same arrays. First the rows the batch
 * outgrew move to the end of the edge arrays: moves[4 m .. 4 m + 4] = (node, from, to, len); a
 * warp copies a row (its new slots lie past every row) and sets its start and end. */
extern "C" __global__ void grail_room_move(uint64_t *starts, uint64_t *ends, uint32_t *targets, uint32_t *weights,
                                           const uint64_t *moves, uint32_t count) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t warps = grail_thread_count() / 32u;
    for (uint64_t m = grail_thread_index() / 32u; m < count; m += warps) {
        const uint64_t node = moves[4 * m], from = moves[4 * m + 1], to = moves[4 * m + 2], len = moves[4 * m + 3];
        for (uint64_t k = lane; k < len; k += 32u) {
            targets[to + k] = targets[from + k];
            if (weights) weights[to + k] = weights[from + k];
        }
        if (lane == 0u) {
            starts[node] = to;
            ends[node] = to + len;
        }
    }
}

/* Then each inserted edge goes after its row's last: edge i of the batch (sorted by source, a
 * row's edges in batch order) to ends[u] + (i - the first of u's edges in the batch). */
extern "C" __global__ void grail_room_place(const uint64_t *ends, uint32_t *targets, uint32_t *weights,
                                            const uint32_t *src, const uint32_t *dst, const uint32_t *weight,
                                            uint32_t count) {
    for (uint64_t i = grail_thread_index(); i < count; i += grail_thread_count()) {
        const uint32_t u = src[i];
        const uint64_t at = ends[u] + (i - grail_first_not_below(src, 0u, (uint32_t)i, u));
        targets[at] = dst[i];
        if (weights) weights[at] = weight[i];
    }
}

/* And each row's end moves past its inserted edges (the row's last edge in the batch moves it). */
extern "C" __global__ void grail_room_advance(uint64_t *ends, const uint32_t *src, uint32_t count) {
    for (uint64_t i = grail_thread_index(); i < count; i += grail_thread_count()) {
        const uint32_t u = src[i];
        if (i + 1u == count || src[i + 1u] != u) ends[u] += i + 1u - grail_first_not_below(src, 0u, (uint32_t)i, u);
    }
}

/* Rows of 64-bit words (an input table, as a collection's `put` kernel reads them) from `leaves`
 * columns of `rows` unsigned 32-bit values each (column j's value i at j * rows + i), widened
 * with zeros: a batch a resident graph took (`DeviceGraph::insert`) given to a program as its
 * input collection without crossing to the device again. */
extern "C" __global__ void grail_rows_from_columns(const uint32_t *columns, uint64_t rows, uint32_t leaves,
                                                   uint64_t *words) {
    const uint64_t total = rows * leaves;
    for (uint64_t k = grail_thread_index(); k < total; k += grail_thread_count())
        words[k] = columns[(k % leaves) * rows + k / leaves];
}

/* A changed ghost merged into its owner's word (crates/grail-runtime/src/multi/merge.rs): `kind`
 * 0 bool, 1 i32, 2 i64, 3 u32, 4 u64, 5 f32, 6 f64; `op` 0 min, 1 max, 2 sum (the ghost's change
 * added), 3 and, 4 or, 5 replace. */
GRAIL_DEVICE uint64_t grail_merge_word(uint32_t kind, uint32_t op, uint64_t owner, uint64_t before, uint64_t after) {
    if (op == 5u) return after;
    if (op == 3u) return owner & after;
    if (op == 4u) return owner | after;
    switch (kind) {
    case 1u: {
        int32_t o = (int32_t)(uint32_t)owner, a = (int32_t)(uint32_t)after;
        uint32_t r = op == 0u ? (uint32_t)(a < o ? a : o)
                   : op == 1u ? (uint32_t)(a > o ? a : o)
                              : (uint32_t)owner + ((uint32_t)after - (uint32_t)before);
        return (uint64_t)r;
    }
    case 2u: {
        int64_t o = (int64_t)owner, a = (int64_t)after;
        return op == 0u ? (uint64_t)(a < o ? a : o) : op == 1u ? (uint64_t)(a > o ? a : o) : owner + (after - before);
    }
    case 3u: {
        uint32_t o = (uint32_t)owner, a = (uint32_t)after;
        return (uint64_t)(op == 0u ? (a < o ? a : o) : op == 1u ? (a > o ? a : o) : o + (a - (uint32_t)before));
    }
    case 5u: {
        float o = __uint_as_float((uint32_t)owner), a = __uint_as_float((uint32_t)after);
        float r = op == 0u ? (a < o ? a : o) : op == 1u ? (a > o ? a : o) : o + (a - __uint_as_float((uint32_t)before));
        return (uint64_t)__float_as_uint(r);
    }
    case 6u: {
        double o = __longlong_as_double((long long)owner), a = __longlong_as_double((long long)after);
        double r = op == 0u ? (a < o ? a : o) : op == 1u ? (a > o ? a : o) : o + (a - __longlong_as_double((long long)before));
        return (uint64_t)__double_as_longlong(r);
    }
    case 0u:
        return op == 2u ? (owner | after) : op == 0u ? (after < owner ? after : owner) : (after > owner ? after : owner);
    default:
        return op == 0u ? (after < owner ? after : owner) : op == 1u ? (after > owner ? after : owner) : owner + (after - before);
    }
}

/* Merges changed ghosts into the owner's elements at[0..n) (distinct), the owner's new words
 * left in before[]. */
extern "C" __global__ void grail_merge_words(void *column, uint32_t size, uint32_t kind, uint32_t op, const uint32_t *at,
                                             uint64_t n, uint64_t *before, const uint64_t *after) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        uint64_t k = at[i];
        uint64_t word = grail_merge_word(kind, op, grail_load_word(column, size, k), before[i], after[i]);
        grail_store_word(column, size, k, word);
        before[i] = word;
    }
}

/* Stores words[i] at element at[positions[i]] and records it. */
extern "C" __global__ void grail_put_words(void *column, uint32_t size, const uint32_t *at, const uint32_t *positions,
                                           uint64_t n, const uint64_t *words, uint64_t *record) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        uint32_t p = positions[i];
        grail_store_word(column, size, at[p], words[i]);
        record[p] = words[i];
    }
}

/* A word of a `size`-byte element as grail_load_word reads it (words from a CPU part come
 * sign-extended). */
GRAIL_DEVICE uint64_t grail_word_of(uint32_t size, uint64_t word) {
    return size == 8 ? word : size == 4 ? (uint64_t)(uint32_t)word : (uint64_t)(uint8_t)(word != 0);
}

/* Changes another part sent into an inbox (crates/grail-runtime/src/multi/exchange.rs), as the
 * merge kernels take them: the owner's element at[position], the words before and after; with a
 * record (indexed as `at`), each change's new word recorded at its position. */
extern "C" __global__ void grail_unpack_changes(const grail_change *changes, uint64_t n, const uint32_t *at,
                                                uint32_t size, uint32_t *at_out, uint64_t *before,
                                                uint64_t *after, uint64_t *record) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        grail_change c = changes[i];
        at_out[i] = at[c.position];
        before[i] = c.old_word;
        after[i] = c.new_word;
        if (record) record[c.position] = grail_word_of(size, c.new_word);
    }
}

/* grail_unpack_changes and grail_merge_words in one pass, for the built-in operators: each
 * change of an inbox merged into the owner's element at[position] (distinct within an inbox);
 * with a record, its new word recorded at its position. */
extern "C" __global__ void grail_merge_changes(void *column, uint32_t size, uint32_t kind, uint32_t op,
                                               const uint32_t *at, const grail_change *changes, uint64_t n,
                                               uint64_t *record) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        const grail_change c = changes[i];
        const uint64_t k = at[c.position];
        grail_store_word(column, size, k, grail_merge_word(kind, op, grail_load_word(column, size, k), c.old_word, c.new_word));
        if (record) record[c.position] = grail_word_of(size, c.new_word);
    }
}

/* grail_merge_changes for a superstep whose sender did not wait for its comparisons (a deferred
 * superstep, crates/grail-runtime's `PartRun::invoke_deferred`): the sender counted its changes
 * at *count, a word on its own device (complete: this stream waited for the sender's event),
 * and `most` (its range's length) bounds them, so the grid is sized without the count. The
 * count is added to *tally, the changes this part merged so far (read when the run ends). */
extern "C" __global__ void grail_merge_changes_counted(void *column, uint32_t size, uint32_t kind, uint32_t op,
                                                       const uint32_t *at, const grail_change *changes,
                                                       const unsigned long long *count, uint64_t most,
                                                       unsigned long long *tally) {
    uint64_t n = (uint64_t)*(volatile const unsigned long long *)count;
    if (n > most) n = most;
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(tally, (unsigned long long)n);
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        const grail_change c = changes[i];
        const uint64_t k = at[c.position];
        grail_store_word(column, size, k, grail_merge_word(kind, op, grail_load_word(column, size, k), c.old_word, c.new_word));
    }
}

/* grail_merge_word applied to element k by compare-and-swap, for merges that may meet at one
 * element (4- and 8-byte elements). */
GRAIL_DEVICE void grail_merge_word_atomic(void *column, uint32_t size, uint32_t kind, uint32_t op, uint64_t k,
                                          uint64_t before, uint64_t after) {
    if (size == 8) {
        unsigned long long *p = (unsigned long long *)column + k;
        unsigned long long seen = *(volatile unsigned long long *)p, assumed;
        do {
            assumed = seen;
            seen = atomicCAS(p, assumed, (unsigned long long)grail_merge_word(kind, op, assumed, before, after));
        } while (seen != assumed);
    } else {
        unsigned int *p = (unsigned int *)column + k;
        unsigned int seen = *(volatile unsigned int *)p, assumed;
        do {
            assumed = seen;
            seen = atomicCAS(p, assumed, (unsigned int)grail_merge_word(kind, op, (uint64_t)assumed, before, after));
        } while (seen != assumed);
    }
}

/* Up to GRAIL_MERGE_SEGS inboxes' changes merged by one launch (crates/grail-runtime's
 * `merge_changes` over several senders): segment s holds n changes at changes, positions
 * into at (its sender's range of the fixed list), recorded in record (or not, when null). */
#define GRAIL_MERGE_SEGS 4
typedef struct grail_merge_seg {
    const uint32_t *at;
    const grail_change *changes;
    uint64_t *record;
    uint64_t n;
} grail_merge_seg;
typedef struct grail_merge_segs {
    grail_merge_seg seg[GRAIL_MERGE_SEGS];
} grail_merge_segs;

/* grail_merge_changes over several inboxes at once. Two senders may hold the same owner's
 * element (a node that is a ghost of both), so each merge is a compare-and-swap: the result
 * is the merges' in any order (min, max, or, and a sum's differences all commute). 4- and
 * 8-byte elements; `total` is the segments' n summed. */
extern "C" __global__ void grail_merge_changes_segs(void *column, uint32_t size, uint32_t kind, uint32_t op,
                                                    grail_merge_segs segs, uint64_t total) {
    for (uint64_t i = grail_thread_index(); i < total; i += grail_thread_count()) {
        uint64_t j = i;
        uint32_t s = 0;
        while (j >= segs.seg[s].n) j -= segs.seg[s++].n;
        const grail_merge_seg seg = segs.seg[s];
        const grail_change c = seg.changes[j];
        grail_merge_word_atomic(column, size, kind, op, seg.at[c.position], c.old_word, c.new_word);
        if (seg.record) seg.record[c.position] = grail_word_of(size, c.new_word);
    }
}

/* Stores the changes of an inbox at at[position] and records the words stored. */
extern "C" __global__ void grail_put_changes(void *column, uint32_t size, const uint32_t *at, const grail_change *changes,
                                             uint64_t n, uint64_t *record) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        grail_change c = changes[i];
        grail_store_word(column, size, at[c.position], c.new_word);
        record[c.position] = grail_load_word(column, size, at[c.position]);
    }
}

/* Pushed ghosts `ghosts[0..n)` (local ids from `owned` on), each as its owner's id for it, into
 * `out` by owner part: part o's from out[starts[o]] on, counted in counts[o] (zero on entry). */
extern "C" __global__ void grail_route_pushes(const uint32_t *ghosts, uint64_t n, uint32_t owned,
                                              const uint32_t *owner_of, const uint32_t *position,
                                              const uint32_t *at_owner, const uint32_t *starts, uint32_t *out,
                                              unsigned long long *counts) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        uint32_t j = ghosts[i] - owned;
        uint32_t o = owner_of[j];
        out[starts[o] + atomicAdd(&counts[o], 1ull)] = at_owner[position[j]];
    }
}

/* Partitioned runs: splits a pushed worklist `items[0..n)` into the owned nodes (ids below
 * `owned`, appended to `kept`) and the ghosts, each once (appended to `ghosts`; `flags` holds a
 * word per ghost, zero on entry, cleared again by grail_clear_ghost_flags). counts[0] and
 * counts[1] (zero on entry) become the two lengths. */
extern "C" __global__ void grail_split_pushes(const uint32_t *items, uint64_t n, uint32_t owned, uint32_t *flags,
                                              uint32_t *kept, uint32_t *ghosts, unsigned long long *counts) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        uint32_t x = items[i];
        if (x < owned) {
            kept[atomicAdd(&counts[0], 1ull)] = x;
        } else if (atomicExch(&flags[x - owned], 1u) == 0u) {
            ghosts[atomicAdd(&counts[1], 1ull)] = x;
        }
    }
}

/* Partitioned runs whose parts reach each other's memory: grail_split_pushes and
 * grail_route_pushes in one pass, each ghost written straight into its owner's inbox for this
 * part's pushes (`inboxes[o]`, as the owner's id for it). counts (zero on entry): the owned
 * items kept, the ghosts found (left in `ghosts` for grail_clear_ghost_flags), then by part
 * the ghosts sent to it. */
extern "C" __global__ void grail_split_route_pushes(const uint32_t *items, uint64_t n, uint32_t owned, uint32_t *flags,
                                                    uint32_t *kept, uint32_t *ghosts, const uint32_t *owner_of,
                                                    const uint32_t *position, const uint32_t *at_owner,
                                                    uint32_t *const *inboxes, unsigned long long *counts) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) {
        const uint32_t x = items[i];
        if (x < owned) {
            kept[atomicAdd(&counts[0], 1ull)] = x;
        } else if (atomicExch(&flags[x - owned], 1u) == 0u) {
            ghosts[atomicAdd(&counts[1], 1ull)] = x;
            const uint32_t j = x - owned;
            const uint32_t o = owner_of[j];
            inboxes[o][atomicAdd(&counts[2u + o], 1ull)] = at_owner[position[j]];
        }
    }
}

/* A ghost pushed during a part's worklist loop run whole on the device: its owner gets it when
 * the loop ends (the host reads the list). */
GRAIL_DEVICE void grail_note_ghost(const grail_ctx *ctx, uint32_t item) {
    /* A part whose region exchanges with its peers on the device (grail_peers) forwards pushed
     * ghosts itself: ghosts in its worklist are only skipped. */
    if (ctx->ghost_list == NULL) return;
    if (atomicExch(&ctx->ghost_flags[item - (uint32_t)ctx->num_nodes], 1u) == 0u) {
        ctx->ghost_list[atomicAdd(ctx->ghost_count, 1ull)] = item;
    }
}

extern "C" __global__ void grail_clear_ghost_flags(uint32_t *flags, const uint32_t *ghosts, uint64_t n,
                                                   uint32_t owned) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) flags[ghosts[i] - owned] = 0u;
}

/* Every edge slot's source node, on the device (edge-parallel kernels read `e.src`): slot e's
 * row is the last node whose row starts at or before e, found by binary search over the n + 1
 * offsets; a slot in the room after a row's end (a graph with room per node) gets 0, as the
 * host's `Csr::edge_sources` gives it. Built on the host and copied up, the sources of a road
 * network of 2^24 nodes took a quarter of a second. */
extern "C" __global__ void grail_edge_sources(const uint64_t *offsets, const uint64_t *ends, uint64_t n, uint64_t slots,
                                              uint32_t *sources) {
    for (uint64_t e = grail_thread_index(); e < slots; e += grail_thread_count()) {
        uint64_t lo = 0, hi = n;
        while (hi - lo > 1) {
            const uint64_t mid = lo + (hi - lo) / 2;
            if (offsets[mid] <= e) lo = mid; else hi = mid;
        }
        sources[e] = e < ends[lo] ? (uint32_t)lo : 0u;
    }
}

/* Every union-find set's parents made the identity (each node its own root), on the device: the
 * host's copy of a graph's sets is as large as a column per set, and copying it up cost more
 * than the union-find itself. */
extern "C" __global__ void grail_sets_identity(uint32_t *sets, uint64_t slots, uint64_t n) {
    for (uint64_t i = grail_thread_index(); i < n; i += grail_thread_count()) sets[i] = (uint32_t)(i % slots);
}

/* ---- Locks: try-lock words; nothing ever waits for a lock, so warps cannot deadlock ---- */

/* A lock word per node (ctx->locks) and per collection element (in its segment). A lock
 * statement names its kind: `coll` is -1 for nodes, else the collection, whose lock words are
 * at `lock_offset`. */
GRAIL_DEVICE uint32_t *grail_lock_word(const grail_ctx *ctx, int coll, uint64_t lock_offset, uint32_t id) {
    return coll < 0 ? &ctx->locks[id] : (uint32_t *)grail_elem(&ctx->colls[coll], lock_offset, 4, id);
}

GRAIL_DEVICE bool grail_trylock(uint32_t *word) {
    if (atomicCAS(word, 0u, 1u) != 0u) return false;
    __threadfence(); /* acquire: the section's accesses stay after taking the lock */
    return true;
}

GRAIL_DEVICE void grail_unlock(uint32_t *word) {
    __threadfence(); /* release: the section's writes are visible before the lock is free */
    atomicExch(word, 0u);
}

/* Exclusive: priority locks, so that overlapping claims cannot livelock. Each thread has a
 * priority, its grid index + 2 (1 is what `atomic`'s try-lock writes), and an element's lock word
 * holds its owner's. Elements are taken in increasing id order (duplicates once); meeting a word
 * held by a higher priority (or by this thread itself), the thread gives way: it releases what
 * it took and fails, and its item is retried. Meeting a lower priority, it waits: that owner
 * either finishes its section or gives way itself. A thread only ever waits for lower
 * priorities, so nothing waits in a cycle, and of the claims that overlap, the one of highest
 * priority always succeeds; plain try-locks could let every one of them fail, over and over.
 * (Waiting within a warp relies on independent thread scheduling, sm_70 and later.) Sorts
 * `elements` in place (grail_unlock_all expects them sorted). */
GRAIL_DEVICE bool grail_lock_all(const grail_ctx *ctx, int coll, uint64_t lock_offset, uint32_t *elements, int count) {
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && elements[j - 1] > elements[j]; j--) {
            uint32_t t = elements[j];
            elements[j] = elements[j - 1];
            elements[j - 1] = t;
        }
    const uint32_t me = (uint32_t)grail_thread_index() + 2u;
    for (int i = 0; i < count; i++) {
        if (i > 0 && elements[i] == elements[i - 1]) continue;
        uint32_t *word = grail_lock_word(ctx, coll, lock_offset, elements[i]);
        for (;;) {
            const uint32_t owner = atomicCAS(word, 0u, me);
            if (owner == 0u) break;
#if __CUDA_ARCH__ >= 700
            if (owner < me && owner != 1u) {
                __nanosleep(32);
                continue;
            }
#endif
            /* Nothing was written under these locks: they go back without a fence. */
            for (int j = i - 1; j >= 0; j--)
                if (j == 0 || elements[j] != elements[j - 1])
                    atomicExch(grail_lock_word(ctx, coll, lock_offset, elements[j]), 0u);
            return false;
        }
    }
    __threadfence(); /* acquire: the section's accesses stay after taking the locks */
    return true;
}

GRAIL_DEVICE void grail_unlock_all(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                   int count) {
    /* One release fence for all of them: a fence waits for every outstanding write, and costs
     * the same for one lock as for sixty. */
    __threadfence();
    for (int i = 0; i < count; i++)
        if (i == 0 || elements[i] != elements[i - 1]) atomicExch(grail_lock_word(ctx, coll, lock_offset, elements[i]), 0u);
}

/* ---- Single: the first thread to claim the word in this invocation wins ---- */

/* Claim words are per node (ctx->claims) or per element (`coll` and `claim_offset` as for locks). */
GRAIL_DEVICE bool grail_claim(const grail_ctx *ctx, int coll, uint64_t claim_offset, uint32_t id) {
    uint32_t *word = coll < 0 ? &ctx->claims[id] : (uint32_t *)grail_elem(&ctx->colls[coll], claim_offset, 4, id);
    uint32_t seen = grail_load_u32(word);
    while (seen != ctx->invocation) {
        uint32_t prev = atomicCAS(word, seen, ctx->invocation);
        if (prev == seen) return true;
        seen = prev;
    }
    return false;
}

/* ---- Union-find with path halving; the smaller id becomes the root, so roots are deterministic ----
 *
 * A parent is always a smaller id than its child (union hooks the larger root under the
 * smaller), and a node's ancestors stay its ancestors: halving may store any ancestor into a
 * non-root's parent, so a plain store does, racing or not (as GAP's Afforest compresses); only
 * hooking a root needs the compare-and-swap.
 *
 * The parents are read with plain (L1-cached) loads, as Afforest's link reads its labels. A
 * stale parent is still an ancestor, so a walk on stale values ends at an ancestor that was a
 * root once: two nodes that reach the same one are in one class, and a hook of a stale root
 * fails. The failed compare-and-swap answers with the root's parent as it is now, smaller than
 * the root, and union walks on from there: every retry starts from a smaller id, so it ends
 * however stale the cache. No fence: the operations are atomic, not ordered with the kernel's
 * other memory accesses.
 *
 * Measured on one H200, road network of 2^24 nodes, kernels of `grail run cc --stats`: union
 * over every edge (`uf`) 4.85 ms with volatile loads and a full find after a failed hook, 1.31-
 * 1.45 ms so; Afforest over a set 2.78 -> 1.00-1.04 ms. Walking without halving was slower
 * (1.61-2.05 ms), Afforest's two-hop link without it far slower (21 ms: the trees are deep without
 * Afforest's compress passes), and full path compression slower too (1.25 ms). */

GRAIL_DEVICE uint32_t grail_find(const grail_ctx *ctx, uint32_t set, uint32_t u) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->node_slots;
    uint32_t p = parent[u];
    while (p != u) {
        uint32_t gp = parent[p];
        if (gp != p) parent[u] = gp;
        u = p;
        p = gp;
    }
    return u;
}

GRAIL_DEVICE bool grail_union(const grail_ctx *ctx, uint32_t set, uint32_t a, uint32_t b) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->node_slots;
    a = grail_find(ctx, set, a);
    b = grail_find(ctx, set, b);
    while (a != b) {
        uint32_t hi = a > b ? a : b, lo = a > b ? b : a;
        uint32_t seen = atomicCAS(&parent[hi], hi, lo);
        if (seen == hi) return true;
        /* hi was no root: go on from its parent as the compare-and-swap saw it. */
        const uint32_t above = grail_find(ctx, set, seen);
        if (hi == a) a = above; else b = above;
    }
    return false;
}

/* ---- Outlined regions (iteration outlining, IrGL §4.1) ----
 *
 * An outlined `iterate` or `pipe` runs as one control kernel, launched cooperatively with every
 * block resident, in which every thread runs the region's host code with its own copy of the
 * host's locals (so all threads decide every branch alike), and each kernel invocation becomes
 * calls of its phases' _run functions separated by grid-wide barriers. The region's state lives
 * in a grail_region the host fills before the launch and reads after it; each thread keeps a
 * grail_state, the same in every thread.
 *
 * Counters that threads write during one phase and everyone reads after the barrier (the
 * pushes of an invocation, the retries of a launch, a reduction) rotate through GRAIL_RING
 * slots: slot t % 3 is written in step t and read by all after the barrier that ends it; global
 * thread 0 resets slot (t + 2) % 3 right after that barrier, which is safe because every thread
 * read it before arriving at the barrier of step t, and it is written again only in step t + 2,
 * after the barrier of step t + 1. So one barrier per step suffices.
 * Keep in sync with `GpuList` and `GpuRegion` in crates/grail-runtime/src/gpu/ffi.rs. */
#define GRAIL_RING 3

/* A worklist buffer: the first `cap` items in `items`, the rest in the segments of `spill` (a
 * table of GRAIL_SPILL_SEGS pointers). */
typedef struct grail_list {
    uint32_t *items;
    uint64_t cap;
    void **spill;
} grail_list;

typedef struct grail_region {
    /* The two worklists (lists[cur] is the current one) and the two retry lists. */
    grail_list lists[2];
    grail_list retry_lists[2];
    /* In and out: the current worklist's length, which list is current, the claims' number. */
    uint64_t len;
    uint32_t cur;
    uint32_t invocation;
    /* Pushes and retries past a list's capacity over the whole launch: 1 some spilled, 2 the
     * device heap ran out (the most of step_overflow's values). */
    uint32_t overflow;
    /* The grid's blocks, and the barrier's release word (the generation block 0 last opened). */
    uint32_t grid_blocks;
    uint32_t release;
    /* The overflow words of the steps (a ring, so that every thread decides alike whether the
     * heap ran out); the fourth word pads. */
    uint32_t step_overflow[GRAIL_RING + 1];
    /* The rings of pushes per invocation and retries per launch of a phase. */
    uint64_t push_len[GRAIL_RING];
    uint64_t retry_len[GRAIL_RING];
    /* main's locals by index (in and out), each kernel's GRAIL_RING reduction slots (kernel k at
     * acc[3k..3k+3], every slot starting at the kernel's identity), and each kernel's counts:
     * invocations, items, pushes, retries (kernel k at stats[4k..4k+4]). */
    grail_value *frame;
    grail_value *acc;
    uint64_t *stats;
    /* Each block's arrival word at the barrier (the generation it arrived for); zeroed by the
     * host. */
    uint32_t *arrive;
    /* The most invocations a worklist loop (`iterate` until empty) makes before the region
     * leaves with work left, 0 for no limit: a part of a partitioned graph comes back to
     * exchange with the others now and then (the fourth word pads). */
    uint32_t budget;
    /* Out: the region stopped because another part of a partitioned graph failed. */
    uint32_t stopped;
    /* On a part of a partitioned graph whose parts all run the region at once, exchanging on
     * the devices (see grail_peer_step); NULL elsewhere. */
    struct grail_peers *peers;
    /* Out: nanoseconds global thread 0 spent in those exchanges (waiting for the others
     * included). */
    uint64_t peer_ns;
    /* Out, supersteps only (printed with GRAIL_TRACE_STEPS): global thread 0's time in an
     * exchange's parts (writing to the others, the first barrier, merging what came in to the
     * grid barrier's end, refreshing the others' ghosts, the last barrier), its waits for the
     * other parts inside the peer barriers, and the exchanges made. */
    uint64_t peer_phase_ns[6];
    uint64_t peer_steps;
    /* Global thread 0's clock at the exchange's last mark (grail_peer_mark). */
    uint64_t peer_mark;
    /* Out, GRAIL_PEER_LISTS=check: the changes the exchanges' lists missed and the full
     * comparisons after them found (grail_peer_exchange); the host fails the run if any. */
    uint64_t peer_missed;
    /* A worklist loop run as one queue (grail_queue): the slots handed out, the slots pushes
     * reserved (the pushes' length), the slots whose items are done. Zeroed by the host. */
    uint64_t queue_head;
    uint64_t queue_tail;
    uint64_t queue_done;
} grail_region;

/* A thread's view of its region: the same in every thread. What only changes between launches
 * (the lists) and what the host reads only at the end (counts, overflow) is kept here, so that
 * no step waits on memory for it. */
typedef struct grail_state {
    grail_region *R;
    grail_list lists[2];
    grail_list retry_lists[2];
    /* Every kernel's counts (as grail_region's stats), and the most of the steps' overflow. */
    uint64_t *stats;
    uint32_t overflow;
    uint64_t len;
    uint32_t cur;
    uint32_t invocation;
    /* The retry list being read (the other is written). */
    uint32_t retry_cur;
    /* The barrier generation this thread waits to leave. */
    uint32_t barrier_gen;
    /* Invocations and phase launches made so far in this launch: the rings' positions. */
    uint64_t inv;
    uint64_t step;
    /* Each kernel's invocations in this launch: its reduction ring's position. */
    uint32_t *kinv;
    /* The device heap ran out: the region stops and the host reports it. */
    bool failed;
    /* The worklist's length over every part (S->len on one device), which `iterate` until empty
     * and `pipe` test; the peer barriers passed and the exchanges made (grail_peer_step). */
    uint64_t all_len;
    uint32_t peer_gen;
    uint32_t peer_step;
    /* The asynchronous exchange's gap (invocations between exchanges while the part has work
     * of its own) and the invocations since the last one (grail_peer_async_step). */
    uint32_t async_gap;
    uint32_t async_since;
    /* Thread 0's clock: when the part's last exchange returned to its worklist, when this
     * exchange and its current round began (grail_async_at_barrier's choice of gap). */
    uint64_t async_ended;
    uint64_t async_began;
    uint64_t async_round;
    /* Bit k: kernel k has made an exchange in this launch, which compared every ghost and
     * mirror; its later ones may look only at its worklist (grail_peer_entry.listed). */
    uint64_t peer_scanned;
    /* Per list, a bound on the slots written since a queue last emptied it: slots [dirty[l],
     * cap) read as empty (GRAIL_QUEUE_EMPTY). Only a program with a queued loop keeps it
     * (grail_list_written); a launch starts with every slot taken as written. */
    uint64_t dirty[2];
} grail_state;

GRAIL_DEVICE grail_state grail_state_begin(grail_region *R, uint32_t *kinv, uint64_t *stats) {
    grail_state S;
    S.R = R;
    S.lists[0] = R->lists[0];
    S.lists[1] = R->lists[1];
    S.retry_lists[0] = R->retry_lists[0];
    S.retry_lists[1] = R->retry_lists[1];
    S.stats = stats;
    S.overflow = 0u;
    S.len = R->len;
    S.cur = R->cur;
    S.invocation = R->invocation;
    S.retry_cur = 0;
    S.barrier_gen = 0;
    S.inv = 0;
    S.step = 0;
    S.kinv = kinv;
    S.failed = false;
    S.all_len = R->len;
    S.peer_gen = 0;
    S.peer_step = 0;
    S.async_gap = 1;
    S.async_since = 0;
    S.async_ended = 0;
    S.async_began = 0;
    S.async_round = 0;
    S.peer_scanned = 0;
    S.dirty[0] = R->lists[0].cap;
    S.dirty[1] = R->lists[1].cap;
    return S;
}

/* List `l`'s first `len` items were written (the rest, past its capacity, went to its spill):
 * the slots a queue must empty before it runs on the list reach at least that far. */
GRAIL_DEVICE void grail_list_written(grail_state *S, uint32_t l, uint64_t len) {
    const uint64_t in_items = len < S->lists[l].cap ? len : S->lists[l].cap;
    if (in_items > S->dirty[l]) S->dirty[l] = in_items;
}

/* Release stores and acquire loads at device scope (sm_70 on), which order memory without a
 * separate fence: a release store makes every write the thread saw happen before it (the
 * block's too, after a __syncthreads) visible to a thread whose acquire load reads it. */
GRAIL_DEVICE void grail_store_release(uint32_t *p, uint32_t v) {
#if __CUDA_ARCH__ >= 700
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
    __threadfence();
    *(volatile uint32_t *)p = v;
#endif
}
GRAIL_DEVICE uint32_t grail_load_acquire(const uint32_t *p) {
#if __CUDA_ARCH__ >= 700
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#else
    uint32_t v = *(const volatile uint32_t *)p;
    __threadfence();
    return v;
#endif
}

/* What grail_grid_sync runs inside the barrier: nothing. */
struct grail_nothing {
    __device__ void operator()() const {}
};
template <typename F> __device__ constexpr bool grail_is_nothing() { return false; }
template <> __device__ constexpr bool grail_is_nothing<grail_nothing>() { return true; }

/* The grid-wide barrier: never deadlocks because the control kernel is launched cooperatively
 * (every block resident). No block contends for a shared counter: thread 0 of each block other
 * than 0 stores the generation it arrives for in its own arrival word (a release store, after
 * the block's __syncthreads) and waits for block 0's release word to show it (acquire loads);
 * block 0's threads wait, in parallel, for every arrival word (acquire loads), then its thread 0
 * releases. So every write made before the barrier by any thread is visible to every read after
 * it by any thread. `at_barrier()` runs on block 0's threads once every block has arrived and
 * before any leaves (grail_async_at_barrier; grail_nothing: nothing). */
template <typename AtBarrier>
GRAIL_DEVICE void grail_grid_sync_with(grail_state *S, AtBarrier at_barrier) {
    grail_region *const R = S->R;
    const uint32_t gen = S->barrier_gen + 1u;
    __syncthreads();
    if (blockIdx.x != 0) {
        if (threadIdx.x == 0) {
            grail_store_release(&R->arrive[blockIdx.x], gen);
            while (grail_load_acquire(&R->release) != gen) {
            }
        }
    } else {
        for (uint32_t b = threadIdx.x + 1u; b < gridDim.x; b += blockDim.x) {
            while (grail_load_acquire(&R->arrive[b]) != gen) {
            }
        }
        __syncthreads();
        if constexpr (!grail_is_nothing<AtBarrier>()) {
            at_barrier();
            __syncthreads();
        }
        if (threadIdx.x == 0) grail_store_release(&R->release, gen);
    }
    __syncthreads();
    S->barrier_gen = gen;
}

GRAIL_DEVICE void grail_grid_sync(grail_state *S) { grail_grid_sync_with(S, grail_nothing{}); }

/* ---- Worklist loops as one queue (grail_ir::opt::queue) ----
 *
 * The loop's current worklist is the queue: its items, then every push appended after them
 * (the pushes' length is the tail). Slots past the items start empty (GRAIL_QUEUE_EMPTY) and a
 * push fills its slot some time after reserving it. A block takes the next slots up to the tail
 * (grail_queue_take), waits for each to be filled (grail_queue_item), runs the items, and counts
 * them done after every thread's pushes (grail_queue_done). The loop has ended when every slot
 * handed out is done and none is left to hand out: with done read before head and head before
 * tail, done == head == tail means that at the time done was read no block held an item, so no
 * push can come. Pushes past the list's capacity spill as usual and are not handed out: they
 * are the next invocation's items. */
/* An idle block looks whether the loop has ended every GRAIL_QUEUE_POLL spins, and naps between
 * spins once it has been idle for GRAIL_QUEUE_NAP of them (compile-time constants, which
 * GRAIL_NVRTC_FLAGS=-D... can change for a measurement). */
#ifndef GRAIL_QUEUE_POLL
#define GRAIL_QUEUE_POLL 8u
#endif
#ifndef GRAIL_QUEUE_NAP
#define GRAIL_QUEUE_NAP 64u
#endif
/* On a part of a partitioned graph in the asynchronous mode, a queue's turn: its blocks stop
 * taking items after this many nanoseconds, and the part exchanges with the others
 * (grail_peer_async_step) before its next turn. */
#ifndef GRAIL_ASYNC_QUEUE_NS
#define GRAIL_ASYNC_QUEUE_NS 100000u
#endif

typedef struct grail_queue {
    uint64_t *head;
    uint64_t *tail;
    uint64_t *done;
    /* Slots that can be handed out: the list's capacity. */
    uint64_t cap;
    const uint32_t *items;
    /* 0, or the clock (grail_clock_ns) after which no block takes more: the slots not handed
     * out by then are left for the caller (a part of a partitioned graph, which exchanges with
     * the others between its queue's turns). */
    uint64_t deadline;
} grail_queue;

/* The device's nanosecond clock. */
GRAIL_DEVICE uint64_t grail_clock_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

GRAIL_DEVICE uint64_t grail_load_acquire_u64(const uint64_t *p) {
#if __CUDA_ARCH__ >= 700
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    uint64_t v = *(const volatile uint64_t *)p;
    __threadfence();
    return v;
#endif
}

/* Block-wide: the block's next batch of slots [*begin, *end), at most a slot per thread, once
 * there are any; an empty batch once the loop has ended or its deadline has passed. */
GRAIL_DEVICE void grail_queue_take(const grail_queue *q, uint64_t *begin, uint64_t *end) {
    __shared__ uint64_t qb_, qe_;
    if (threadIdx.x == 0) {
        uint64_t b = 0, e = 0;
        for (unsigned idle = 0;; idle++) {
            if (q->deadline != 0u && grail_clock_ns() >= q->deadline) break;
            const uint64_t h = *(volatile uint64_t *)q->head;
            uint64_t t = *(volatile uint64_t *)q->tail;
            if (t > q->cap) t = q->cap;
            if (h < t) {
                const uint64_t want = t - h < (uint64_t)blockDim.x ? t : h + blockDim.x;
                if (atomicCAS((unsigned long long *)q->head, (unsigned long long)h, (unsigned long long)want) == h) {
                    b = h;
                    e = want;
                    break;
                }
                idle = 0;
                continue;
            }
            if (idle % GRAIL_QUEUE_POLL == 0u) {
                const uint64_t d = grail_load_acquire_u64(q->done);
                const uint64_t h2 = *(volatile uint64_t *)q->head;
                uint64_t t2 = *(volatile uint64_t *)q->tail;
                if (t2 > q->cap) t2 = q->cap;
                if (d == h2 && h2 == t2) break;
            }
#if __CUDA_ARCH__ >= 700
            if (idle > GRAIL_QUEUE_NAP) __nanosleep(idle > 16u * GRAIL_QUEUE_NAP ? 256u : 32u);
#endif
        }
        qb_ = b;
        qe_ = e;
    }
    __syncthreads();
    *begin = qb_;
    *end = qe_;
    /* Every thread has read the batch before thread 0 takes the next. */
    __syncthreads();
}

/* The item in slot i, once its push has filled it (an acquire: what the pusher wrote before
 * is seen after). */
GRAIL_DEVICE uint32_t grail_queue_item(const grail_queue *q, uint64_t i) {
    uint32_t v;
    while ((v = grail_load_acquire(&q->items[i])) == GRAIL_QUEUE_EMPTY) {
    }
    return v;
}

/* Block-wide: the batch's n items are done, their pushes reserved. */
GRAIL_DEVICE void grail_queue_done(const grail_queue *q, uint64_t n) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd((unsigned long long *)q->done, (unsigned long long)n);
    }
}

/* ---- Marks: 3-phase conflict resolution (the morph paper's §7.3; grail_ir::opt::marks) ----
 *
 * An `exclusive` lowered to marks owns its elements through their lock words, in rounds that
 * every thread of an outlined region's grid makes together, a grid barrier after each phase.
 * A thread's mark is the number its locks use (grail_thread_index() + 2), so a lock taken inside
 * a winner's section waits for and excludes the same threads as before. A round starts with
 * every lock word clear (each thread clears its own marks before the round ends). */

/* Race: the thread's mark on each element (plain stores; the last one stands). */
GRAIL_DEVICE void grail_mark_race(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                  int count, uint32_t me) {
    for (int i = 0; i < count; i++) *(volatile uint32_t *)grail_lock_word(ctx, coll, lock_offset, elements[i]) = me;
}

/* Priority check, after a barrier: false once a higher thread's mark is seen (the thread has
 * lost, and raises nothing more); a lower thread's mark is raised to the thread's own. After
 * the next barrier each element holds its highest claimant's mark. */
GRAIL_DEVICE bool grail_mark_priority(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                      int count, uint32_t me) {
    for (int i = 0; i < count; i++) {
        uint32_t *word = grail_lock_word(ctx, coll, lock_offset, elements[i]);
        const uint32_t mark = *(volatile uint32_t *)word;
        if (mark > me) return false;
        if (mark < me && atomicMax(word, me) > me) return false;
    }
    return true;
}

/* Check, after a barrier (read-only): whether every mark is still the thread's own. */
GRAIL_DEVICE bool grail_mark_check(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                   int count, uint32_t me) {
    for (int i = 0; i < count; i++)
        if (*(volatile uint32_t *)grail_lock_word(ctx, coll, lock_offset, elements[i]) != me) return false;
    return true;
}

/* A winner's marks, cleared after its section. With GRAIL_MARKS_VERIFY, a mark that is no longer
 * the winner's (another thread wrote it during the section) stops the kernel. */
GRAIL_DEVICE void grail_mark_release(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                     int count, uint32_t me) {
    for (int i = 0; i < count; i++) {
        const uint32_t was = atomicCAS(grail_lock_word(ctx, coll, lock_offset, elements[i]), me, 0u);
#ifdef GRAIL_MARKS_VERIFY
        if (was != me) {
            bool repeated = false; /* a repeated element was cleared the first time */
            for (int j = 0; j < i; j++) repeated |= elements[j] == elements[i];
            if (!repeated) __trap();
        }
#else
        (void)was;
#endif
    }
}

/* Clears the thread's marks that still stand (a loser's). */
GRAIL_DEVICE void grail_mark_clear(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                   int count, uint32_t me) {
    for (int i = 0; i < count; i++) atomicCAS(grail_lock_word(ctx, coll, lock_offset, elements[i]), me, 0u);
}

/* A worklist buffer as a grail_wl whose length is `len`. */
GRAIL_DEVICE grail_wl grail_list_wl(const grail_list *list, uint64_t *len, uint32_t *overflow) {
    grail_wl wl;
    wl.items = list->items;
    wl.len = len;
    wl.cap = list->cap;
    wl.overflow = overflow;
    wl.spill = list->spill;
    return wl;
}

/* Reads a counter another thread wrote before the last barrier. */
GRAIL_DEVICE uint64_t grail_read_u64(const uint64_t *p) {
    return *(const volatile uint64_t *)p;
}
GRAIL_DEVICE grail_value grail_read_value(const grail_value *p) {
    grail_value v;
    v.u = *(const volatile uint64_t *)&p->u;
    return v;
}

/* The next invocation number for claims; when it wraps to 0, every node's claim word is
 * cleared (by the whole grid) and numbering restarts at 1. */
GRAIL_DEVICE uint32_t grail_next_invocation(const grail_ctx *ctx, grail_state *S) {
    S->invocation++;
    if (S->invocation == 0u) {
        for (uint64_t u = grail_thread_index(); u < ctx->node_slots; u += grail_thread_count()) ctx->claims[u] = 0u;
        grail_grid_sync(S);
        S->invocation = 1u;
    }
    return S->invocation;
}

/* ---- Partitioned regions: parts that exchange on the devices ----
 *
 * When every part of a partitioned graph is a GPU and every pair of them can reach the other's
 * memory (peer access), a region outlined for one GPU runs on all parts at once, one control
 * kernel per GPU, and each invocation's superstep ends on the devices instead of the host
 * (crates/grail-runtime/src/multi/peer.rs builds the tables). After every invocation every
 * part calls grail_peer_step, which
 *  1. writes its reduction value and its worklist's length into every part's `partials`, each
 *     ghost the kernel changed into its owner's inbox for the property (at the ghost's mirror
 *     entry there: the ghosts of one owner are its mirror entries for this part, in order, so
 *     the stores are contiguous), and each ghost it pushed, once, into its owner's inbox of
 *     nodes; then passes the peer barrier (every part's grid has arrived);
 *  2. merges the changes that came in into its own nodes with the operator
 *     crates/grail-runtime/src/multi/merge.rs derives, appends the nodes that came in to its
 *     worklist, and, for properties kernels read through ghosts, stores its owned words that
 *     its ghosts elsewhere have not seen in them; a second barrier where it did.
 * No part writes what another part's kernel reads, so no barrier is needed before the writes;
 * barriers the invocation does not need are left out. Every part takes the same branches (the
 * reductions are combined in part order, the lengths summed), so all pass the same barriers. A
 * part that fails raises the shared stop word; the others leave at their next barrier.
 * Keep in sync with `GpuPeers` and `GpuPeerEntry` in crates/grail-runtime/src/gpu/ffi.rs. */
#define GRAIL_MAX_PARTS 8

/* A property an invocation of `kernel` synchronizes. */
typedef struct grail_peer_entry {
    uint32_t kernel;
    /* The element's bytes, its type and merge operator as grail_merge_word numbers them. */
    uint32_t size;
    uint32_t kind;
    uint32_t op;
    /* 1: the kernel writes through other nodes than its item, so ghosts it changed are merged;
     * 1: kernels read it through ghosts, so owners' changed words go to their ghosts. */
    uint32_t merge;
    uint32_t refresh;
    /* 1: the kernel pushes every node whose word it changes (grail_ir::analysis::pushed_writes)
     * and lists are allowed (unless GRAIL_PEER_LISTS=0): after the kernel's first exchange of a
     * launch, its exchanges may look only at the nodes in its worklist (grail_peer_exchange,
     * grail_peer_follows). 2: so, and
     * each listed pass is followed by the full comparison, counting what it finds still to do
     * (GRAIL_PEER_LISTS=check; grail_region.peer_missed). */
    uint32_t listed;
    uint32_t reserved;
    /* By part: its column, the words its ghosts last synchronized (by ghost position), the words
     * its mirrors' ghosts hold (by mirror entry), and its inbox of changes by mirror entry (two
     * parities of its mirror_counts entries, the parity of the exchange writing them, so that
     * the next exchange's writes never meet this one's merges): the ghost's word before and
     * after, and the exchange that wrote them. */
    void *columns[GRAIL_MAX_PARTS];
    uint64_t *ghost_records[GRAIL_MAX_PARTS];
    uint64_t *mirror_records[GRAIL_MAX_PARTS];
    uint64_t *in_before[GRAIL_MAX_PARTS];
    uint64_t *in_after[GRAIL_MAX_PARTS];
    uint32_t *in_step[GRAIL_MAX_PARTS];
} grail_peer_entry;

/* A part's words for the asynchronous exchange (grail_peer_async_step), in its own memory. The
 * first seven arrays other parts write (at system scope); the rest only the part itself. */
typedef struct grail_async_words {
    /* By sender q: the records and nodes q has published into this part's rings from q. */
    unsigned long long rec_published[GRAIL_MAX_PARTS];
    unsigned long long node_published[GRAIL_MAX_PARTS];
    /* By receiver q: how many of this part's records and nodes q has taken. */
    unsigned long long rec_taken_by[GRAIL_MAX_PARTS];
    unsigned long long node_taken_by[GRAIL_MAX_PARTS];
    /* By part q: its state (its activity count times two, plus one while idle), and how many
     * records and nodes it has sent and taken in all. */
    unsigned long long state[GRAIL_MAX_PARTS];
    unsigned long long sent[GRAIL_MAX_PARTS];
    unsigned long long taken[GRAIL_MAX_PARTS];
    /* By receiver q: the slots this part has reserved in its rings to q (device atomics) and
     * published. */
    unsigned long long rec_reserved[GRAIL_MAX_PARTS];
    unsigned long long node_reserved[GRAIL_MAX_PARTS];
    unsigned long long rec_sent[GRAIL_MAX_PARTS];
    unsigned long long node_sent[GRAIL_MAX_PARTS];
    /* By sender q: what this step takes (published when the step began), and what it took. */
    unsigned long long rec_seen[GRAIL_MAX_PARTS];
    unsigned long long node_seen[GRAIL_MAX_PARTS];
    unsigned long long rec_taken[GRAIL_MAX_PARTS];
    unsigned long long node_taken[GRAIL_MAX_PARTS];
    /* This part's state, and its totals sent and taken. */
    unsigned long long my_state;
    unsigned long long my_sent;
    unsigned long long my_taken;
    /* 1: a ring to some part lacks room for a step's records, so this step sends nothing;
     * 1: every part is idle with nothing in flight (the loop is over). */
    uint32_t blocked;
    uint32_t done;
    /* 1: the step just made sent something. */
    uint32_t sent_now;
    /* The invocations between exchanges while they carry something (grail_async_at_barrier). */
    uint32_t gap;
} grail_async_words;

typedef struct grail_peers {
    uint32_t part;
    uint32_t parts;
    uint32_t entries;
    /* 0: supersteps (grail_peer_step); 1: asynchronous (grail_peer_async_step). */
    uint32_t mode;
    /* This part's ghosts (by position: grouped by owner) and mirror entries (its nodes that are
     * ghosts elsewhere, by part, in that part's ghost order). */
    uint64_t ghosts;
    uint64_t mirrors;
    const grail_peer_entry *plan;
    const uint32_t *ghost_local;
    const uint32_t *ghost_owner;
    const uint32_t *ghost_at;
    /* The ghost's entry among its owner's mirrors. */
    const uint32_t *ghost_mirror;
    /* By ghost (local id minus the owned count): its owner and its local id there. */
    const uint32_t *owner_of;
    const uint32_t *at_of;
    const uint32_t *mirror_local;
    const uint32_t *mirror_part;
    /* The mirror's ghost's position in its part's ghost list, and its local id there. */
    const uint32_t *mirror_ghost;
    const uint32_t *mirror_ghost_local;
    /* By ghost (local id minus the owned count): the exchange in which it was last forwarded. */
    uint32_t *forwarded;
    /* Part 0's words; word 1 is 1 once a part has failed. */
    uint32_t *barrier;
    /* By part: its reduction slots (two parities of `parts` pairs: value, length), its inbox of
     * nodes (two parities of inbox_cap items) and the inbox's two counts, inbox_cap, and its
     * arrival words (by part: the last barrier generation that part reached). */
    grail_value *partials[GRAIL_MAX_PARTS];
    uint32_t *inbox[GRAIL_MAX_PARTS];
    unsigned long long *inbox_len[GRAIL_MAX_PARTS];
    uint64_t inbox_cap[GRAIL_MAX_PARTS];
    uint32_t *arrive[GRAIL_MAX_PARTS];
    uint64_t mirror_counts[GRAIL_MAX_PARTS];
    /* The asynchronous mode: every part's words; by receiver q, the rings in q's memory this
     * part writes (records of three words, nodes), their capacities and the most one step
     * writes; by sender q, the rings in this part's memory q writes, and their capacities. */
    grail_async_words *words[GRAIL_MAX_PARTS];
    unsigned long long *rec_ring[GRAIL_MAX_PARTS];
    uint32_t *node_ring[GRAIL_MAX_PARTS];
    uint64_t rec_cap[GRAIL_MAX_PARTS];
    uint64_t node_cap[GRAIL_MAX_PARTS];
    uint64_t rec_most[GRAIL_MAX_PARTS];
    uint64_t node_most[GRAIL_MAX_PARTS];
    const unsigned long long *rec_ring_in[GRAIL_MAX_PARTS];
    const uint32_t *node_ring_in[GRAIL_MAX_PARTS];
    uint64_t rec_cap_in[GRAIL_MAX_PARTS];
    uint64_t node_cap_in[GRAIL_MAX_PARTS];
    /* By ghost (local id minus the owned count): its position. By owned node: where its mirror
     * entries start in mirror_order (one more than the owned nodes), and the entries. */
    const uint32_t *ghost_position;
    const uint32_t *mirror_start;
    const uint32_t *mirror_order;
} grail_peers;

#ifndef GRAIL_PEER_PATIENCE_NS
#define GRAIL_PEER_PATIENCE_NS 120000000000ull
#endif

GRAIL_DEVICE uint32_t grail_load_acquire_sys(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

GRAIL_DEVICE void grail_store_release_sys(uint32_t *p, uint32_t v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Every part's grid arrives before any leaves: the grid barrier (grail_grid_sync) with the
 * parts' barrier inside it, made by block 0's first threads once every block of their grid has
 * arrived and before they release them: each stores the generation in this part's arrival word
 * on one part (a release at system scope) and thread 0 waits for every part's in its own memory
 * (acquire loads at system scope). A thread that wrote to another part's memory (`wrote`)
 * fences at system scope first, so its writes are visible to every part after the barrier
 * without relying on the cumulativity of the grid barrier's device-scope chain (the fences cost
 * nothing measurable: bfs on a road network of 2^24 nodes over two GPUs took 395.8 ms with them
 * and 394.7 ms without). False, the same in every thread, when a part has failed and the
 * region must stop. */
GRAIL_DEVICE bool grail_peer_barrier(grail_state *S, const grail_peers *P, bool wrote) {
    grail_region *const R = S->R;
    if (wrote) __threadfence_system();
    const uint32_t gen = S->barrier_gen + 1u;
    S->peer_gen += 1u;
    __syncthreads();
    if (blockIdx.x != 0) {
        if (threadIdx.x == 0) {
            grail_store_release(&R->arrive[blockIdx.x], gen);
            while (grail_load_acquire(&R->release) != gen) {
            }
        }
    } else {
        for (uint32_t b = threadIdx.x + 1u; b < gridDim.x; b += blockDim.x) {
            while (grail_load_acquire(&R->arrive[b]) != gen) {
            }
        }
        __syncthreads();
        if (threadIdx.x < P->parts) grail_store_release_sys(&P->arrive[threadIdx.x][P->part], S->peer_gen);
        if (threadIdx.x == 0) {
            const uint32_t *mine = P->arrive[P->part];
            const uint64_t since = grail_clock_ns();
            uint32_t spins = 0;
            for (uint32_t q = 0; q < P->parts; q++) {
                while ((int32_t)(grail_load_acquire_sys(&mine[q]) - S->peer_gen) < 0) {
                    if ((++spins & 255u) != 0u) continue;
                    if (*(volatile uint32_t *)&P->barrier[1] != 0u) {
                        R->stopped = 1u;
                        break;
                    }
                    /* A part that never arrives (its device failed without reaching its stop):
                     * give up after GRAIL_PEER_PATIENCE_NS, stopping every part. */
                    if (grail_clock_ns() - since > GRAIL_PEER_PATIENCE_NS) {
                        atomicExch_system(&P->barrier[1], 1u);
                        R->stopped = 1u;
                        break;
                    }
                }
                if (R->stopped != 0u) break;
            }
            R->peer_phase_ns[5] += grail_clock_ns() - since;
            grail_store_release(&R->release, gen);
        }
    }
    __syncthreads();
    S->barrier_gen = gen;
    if (*(volatile uint32_t *)&R->stopped != 0u) {
        S->failed = true;
        return false;
    }
    return true;
}

/* A ghost's change merged into this part's element `at` of `column`, as grail_merge_word would
 * (`before`: the word the ghost last synchronized). Several parts' ghosts of one node may merge
 * at once, so every operator but replacement is an atomic; a bool's operators only ever move
 * its byte one way. */
GRAIL_DEVICE void grail_peer_merge(void *column, uint32_t size, uint32_t kind, uint32_t op, uint64_t at,
                                   uint64_t before, uint64_t after) {
    if (size == 1u) {
        volatile uint8_t *b = (volatile uint8_t *)column + at;
        const bool a = (uint8_t)after != 0u;
        if (op == 5u) *b = a;
        else if (op == 0u || op == 3u) { if (!a) *b = 0u; }
        else if (a) *b = 1u;
        return;
    }
    if (op == 5u) {
        grail_store_word(column, size, at, after);
        return;
    }
    if (size == 4u) {
        uint32_t *w = (uint32_t *)column + at;
        const uint32_t a = (uint32_t)after;
        if (op == 2u) {
            if (kind == 5u) atomicAdd((float *)w, __uint_as_float(a) - __uint_as_float((uint32_t)before));
            else atomicAdd(w, a - (uint32_t)before);
        } else if (op == 3u) atomicAnd(w, a);
        else if (op == 4u) atomicOr(w, a);
        else if (kind == 1u) {
            if (op == 0u) atomicMin((int *)w, (int)a);
            else atomicMax((int *)w, (int)a);
        } else if (kind == 3u) {
            if (op == 0u) atomicMin(w, a);
            else atomicMax(w, a);
        } else {
            uint32_t seen = *(volatile uint32_t *)w;
            for (;;) {
                const float o = __uint_as_float(seen), v = __uint_as_float(a);
                if (!(op == 0u ? v < o : v > o)) return;
                const uint32_t prev = atomicCAS(w, seen, a);
                if (prev == seen) return;
                seen = prev;
            }
        }
        return;
    }
    unsigned long long *w = (unsigned long long *)column + at;
    const unsigned long long a = after;
    if (op == 2u) {
        if (kind == 6u) atomicAdd((double *)w, __longlong_as_double((long long)a) - __longlong_as_double((long long)before));
        else atomicAdd(w, a - before);
    } else if (op == 3u) atomicAnd(w, a);
    else if (op == 4u) atomicOr(w, a);
    else if (kind == 2u) {
        if (op == 0u) atomicMin((long long *)w, (long long)a);
        else atomicMax((long long *)w, (long long)a);
    } else if (kind == 4u) {
        if (op == 0u) atomicMin(w, a);
        else atomicMax(w, a);
    } else {
        unsigned long long seen = *(volatile unsigned long long *)w;
        for (;;) {
            const double o = __longlong_as_double((long long)seen), v = __longlong_as_double((long long)a);
            if (!(op == 0u ? v < o : v > o)) return;
            const unsigned long long prev = atomicCAS(w, seen, a);
            if (prev == seen) return;
            seen = prev;
        }
    }
}

/* Ghost `i`'s word of entry E, if it changed since it last synchronized, into its owner's
 * inbox of changes (at its mirror entry there); true if it did. */
GRAIL_DEVICE bool grail_peer_send_ghost(const grail_peers *P, const grail_peer_entry *E, uint32_t par, uint32_t step,
                                        uint64_t i) {
    uint64_t *record = E->ghost_records[P->part];
    const uint64_t word = grail_load_word(E->columns[P->part], E->size, P->ghost_local[i]);
    const uint64_t before = record[i];
    if (word == before) return false;
    record[i] = word;
    const uint32_t o = P->ghost_owner[i];
    const uint64_t m = (uint64_t)par * P->mirror_counts[o] + P->ghost_mirror[i];
    E->in_before[o][m] = before;
    E->in_after[o][m] = word;
    E->in_step[o][m] = step;
    return true;
}

/* Mirror entry `m`'s owned word of entry E, if it changed since its ghost last saw it, into
 * that ghost (its word and record in the part holding it); true if it did. */
GRAIL_DEVICE bool grail_peer_refresh_mirror(const grail_peers *P, const grail_peer_entry *E, uint64_t m) {
    uint64_t *record = E->mirror_records[P->part];
    const uint64_t word = grail_load_word(E->columns[P->part], E->size, P->mirror_local[m]);
    if (word == record[m]) return false;
    record[m] = word;
    const uint32_t q = P->mirror_part[m];
    E->ghost_records[q][P->mirror_ghost[m]] = word;
    grail_store_word(E->columns[q], E->size, P->mirror_ghost_local[m], word);
    return true;
}

/* After a listed pass of entry E: whether the full pass follows it, to count what the lists
 * missed (GRAIL_PEER_LISTS=check, E->listed == 2), once every thread's listed pass is done. */
GRAIL_DEVICE bool grail_peer_checks_lists(grail_state *S, const grail_peer_entry *E) {
    if (E->listed != 2u) return false;
    grail_grid_sync(S);
    return true;
}

#ifndef GRAIL_PEER_LIST_SHARE
#define GRAIL_PEER_LIST_SHARE 2u
#endif

/* Whether an exchange's pass follows its list of `listed` nodes rather than comparing all
 * `entries` (see grail_peer_exchange). */
GRAIL_DEVICE bool grail_peer_follows(uint64_t listed, uint64_t entries) {
    return listed * GRAIL_PEER_LIST_SHARE <= entries;
}

/* The full pass found work to do; after a listed pass, the lists missed it. */
GRAIL_DEVICE void grail_peer_missed(grail_state *S, bool listed) {
    if (listed) atomicAdd((unsigned long long *)&S->R->peer_missed, 1ull);
}

/* Global thread 0 adds the time since the exchange's last mark to its phase `phase`. */
GRAIL_DEVICE void grail_peer_mark(grail_state *S, uint32_t phase) {
    if (grail_thread_index() != 0) return;
    const uint64_t now = grail_clock_ns();
    S->R->peer_phase_ns[phase] += now - S->R->peer_mark;
    S->R->peer_mark = now;
}

/* The superstep after an invocation of `kernel` on a part whose region exchanges on the devices
 * (see above): `mine` is the part's reduction value, `*len` its worklist's length (the list
 * `out`, pushed through c->pushes), which grows by the nodes other parts forwarded to it. False
 * when the region must stop. Every thread of the grid calls it with the same arguments (through
 * grail_peer_step, out of line, so that the control kernel keeps the registers it has on one
 * GPU). */
GRAIL_DEVICE bool grail_peer_exchange(const grail_ctx *c, grail_state *S, uint32_t kernel, grail_value mine,
                                      bool reduces, uint64_t *len, const grail_list *out) {
    const grail_peers *P = S->R->peers;
    const uint32_t par = S->peer_step & 1u;
    S->peer_step += 1u;
    const uint32_t step = S->peer_step;
    bool merges = false, refresh = false;
    for (uint32_t e = 0; e < P->entries; e++) {
        if (P->plan[e].kernel != kernel) continue;
        merges |= P->plan[e].merge != 0u;
        refresh |= P->plan[e].refresh != 0u;
    }
    if (!reduces && out == NULL && !merges && !refresh) return true;
    const uint64_t index = grail_thread_index(), threads = grail_thread_count();
    const uint32_t owned = (uint32_t)c->num_nodes;
    /* The kernel's first exchange of the launch compares every ghost and mirror (the host may
     * have written columns before the launch); after it, a listed entry's exchanges look only
     * at the worklist's nodes, which hold every node the invocation changed: its ghosts sent,
     * the nodes forwarded to this part merged, the listed and forwarded owned nodes' mirrors
     * refreshed. Every part makes the same choice: they make the same invocations. */
    const bool scanned = kernel < 64u && ((S->peer_scanned >> kernel) & 1ull) != 0ull;
    if (kernel < 64u) S->peer_scanned |= 1ull << kernel;
    const bool lists = scanned && out != NULL;
    /* A listed pass reads a node, then its entries where they lie, so it is chosen where its
     * nodes are fewer than a GRAIL_PEER_LIST_SHARE-th of the entries the full pass reads in
     * order (a long worklist with repeats, as delta-stepping's, is slower to follow than the
     * whole range is to compare). Each pass chooses for itself: the records mean the same after
     * either. */
    const uint64_t pushed = out != NULL ? *len : 0u;
    bool wrote = index < P->parts;
    /* 1: every part's value and length in every part's slots; changed ghosts and pushed ghosts
     * in their owners' inboxes. */
    if (index < P->parts) {
        grail_value *slot = P->partials[index] + 2u * ((uint64_t)par * P->parts + P->part);
        grail_value n;
        n.u = out != NULL ? *len : 0u;
        slot[0] = mine;
        slot[1] = n;
    }
    for (uint32_t e = 0; merges && e < P->entries; e++) {
        const grail_peer_entry *E = &P->plan[e];
        if (E->kernel != kernel || E->merge == 0u) continue;
        const bool listed = lists && E->listed != 0u && grail_peer_follows(pushed, P->ghosts);
        if (listed) {
            for (uint64_t k = index; k < pushed; k += threads) {
                const uint32_t item = grail_item(out->items, out->cap, out->spill, k);
                if (item >= owned) wrote |= grail_peer_send_ghost(P, E, par, step, P->ghost_position[item - owned]);
            }
            if (!grail_peer_checks_lists(S, E)) continue;
        }
        for (uint64_t i = index; i < P->ghosts; i += threads) {
            if (grail_peer_send_ghost(P, E, par, step, i)) {
                wrote = true;
                grail_peer_missed(S, listed);
            }
        }
    }
    if (out != NULL) {
        /* Pushed ghosts into their owners' inboxes, a block's worth at a time: counted by owner
         * in shared memory, then one system-scope atomic per owner reserves the block's range
         * (one per ghost, on the same remote word, took milliseconds when a hub's level pushed
         * a hundred thousand ghosts). Every thread of a block makes the same trips. */
        __shared__ unsigned int block_count[GRAIL_MAX_PARTS];
        __shared__ unsigned long long block_base[GRAIL_MAX_PARTS];
        const uint64_t n = *len;
        for (uint64_t first = (uint64_t)blockIdx.x * blockDim.x; first < n; first += threads) {
            if (threadIdx.x < P->parts) block_count[threadIdx.x] = 0u;
            __syncthreads();
            const uint64_t i = first + threadIdx.x;
            uint32_t o = GRAIL_MAX_PARTS, at = 0u, k = 0u;
            if (i < n) {
                const uint32_t item = grail_item(out->items, out->cap, out->spill, i);
                if (item >= owned && atomicExch(&P->forwarded[item - owned], step) != step) {
                    o = P->owner_of[item - owned];
                    at = P->at_of[item - owned];
                    k = atomicAdd(&block_count[o], 1u);
                }
            }
            __syncthreads();
            if (threadIdx.x < P->parts && block_count[threadIdx.x] != 0u) {
                wrote = true;
                block_base[threadIdx.x] =
                    atomicAdd_system(&P->inbox_len[threadIdx.x][par], (unsigned long long)block_count[threadIdx.x]);
            }
            __syncthreads();
            if (o < GRAIL_MAX_PARTS) {
                wrote = true;
                const unsigned long long slot = block_base[o] + k;
                if (slot < P->inbox_cap[o]) P->inbox[o][(uint64_t)par * P->inbox_cap[o] + slot] = at;
            }
        }
    }
    grail_peer_mark(S, 0u);
    if (!grail_peer_barrier(S, P, wrote)) return false;
    grail_peer_mark(S, 1u);
    if (!merges && out == NULL && !refresh) return true;
    /* 2: the changes that came in merged into this part's nodes; the nodes that came in
     * appended to the worklist. */
    for (uint32_t e = 0; merges && e < P->entries; e++) {
        const grail_peer_entry *E = &P->plan[e];
        if (E->kernel != kernel || E->merge == 0u) continue;
        const uint64_t at = (uint64_t)par * P->mirrors;
        const uint64_t n = *(volatile unsigned long long *)&P->inbox_len[P->part][par];
        const bool listed = lists && E->listed != 0u && grail_peer_follows(n, P->mirrors);
        if (listed) {
            /* Every ghost changed was pushed, so its node came in: the nodes' mirror entries
             * written in this exchange, each merged once (a node may come from several parts). */
            const uint32_t *inbox = P->inbox[P->part] + (uint64_t)par * P->inbox_cap[P->part];
            for (uint64_t k = index; k < n; k += threads) {
                const uint32_t u = inbox[k];
                for (uint32_t j = P->mirror_start[u]; j < P->mirror_start[u + 1u]; j++) {
                    const uint32_t m = P->mirror_order[j];
                    if (atomicExch(&E->in_step[P->part][at + m], 0u) != step) continue;
                    const uint64_t after = *(volatile const uint64_t *)&E->in_after[P->part][at + m];
                    grail_peer_merge(E->columns[P->part], E->size, E->kind, E->op, u,
                                     *(volatile const uint64_t *)&E->in_before[P->part][at + m], after);
                    if (E->refresh != 0u) E->mirror_records[P->part][m] = after;
                }
            }
            if (!grail_peer_checks_lists(S, E)) continue;
        }
        for (uint64_t m = index; m < P->mirrors; m += threads) {
            if (*(volatile const uint32_t *)&E->in_step[P->part][at + m] != step) continue;
            grail_peer_missed(S, listed);
            const uint64_t after = *(volatile const uint64_t *)&E->in_after[P->part][at + m];
            grail_peer_merge(E->columns[P->part], E->size, E->kind, E->op, P->mirror_local[m],
                             *(volatile const uint64_t *)&E->in_before[P->part][at + m], after);
            /* That ghost holds this word now. */
            if (E->refresh != 0u) E->mirror_records[P->part][m] = after;
        }
    }
    if (out != NULL) {
        const uint64_t n = *(volatile unsigned long long *)&P->inbox_len[P->part][par];
        const uint32_t *inbox = P->inbox[P->part] + (uint64_t)par * P->inbox_cap[P->part];
        for (uint64_t i = index; i < n; i += threads) grail_push_slot(&c->pushes, *len + i, inbox[i]);
        *len += n;
    }
    grail_grid_sync(S);
    grail_peer_mark(S, 2u);
    if (out != NULL) {
        if (index == 0) P->inbox_len[P->part][par] = 0ull;
        const uint32_t overflow = *(volatile uint32_t *)c->pushes.overflow;
        if (overflow > S->overflow) S->overflow = overflow;
        if (overflow >= 2u) {
            S->failed = true;
            return false;
        }
    }
    if (!refresh) {
        grail_peer_mark(S, 4u);
        return true;
    }
    /* Owners' changed words to their ghosts elsewhere. */
    wrote = false;
    for (uint32_t e = 0; e < P->entries; e++) {
        const grail_peer_entry *E = &P->plan[e];
        if (E->kernel != kernel || E->refresh == 0u) continue;
        const uint64_t n = lists ? *len : 0u;
        const bool listed = lists && E->listed != 0u && grail_peer_follows(n, P->mirrors);
        if (listed) {
            /* The worklist now holds the nodes pushed here and those that came in. */
            for (uint64_t k = index; k < n; k += threads) {
                const uint32_t u = grail_item(out->items, out->cap, out->spill, k);
                if (u >= owned) continue;
                for (uint32_t j = P->mirror_start[u]; j < P->mirror_start[u + 1u]; j++) {
                    wrote |= grail_peer_refresh_mirror(P, E, P->mirror_order[j]);
                }
            }
            if (!grail_peer_checks_lists(S, E)) continue;
        }
        for (uint64_t m = index; m < P->mirrors; m += threads) {
            if (grail_peer_refresh_mirror(P, E, m)) {
                wrote = true;
                grail_peer_missed(S, listed);
            }
        }
    }
    grail_peer_mark(S, 3u);
    const bool ok = grail_peer_barrier(S, P, wrote);
    grail_peer_mark(S, 4u);
    return ok;
}

/* The exchange after an invocation (grail_peer_exchange), out of line, timed by global thread 0. */
__device__ __noinline__ bool grail_peer_step(const grail_ctx *c, grail_state *S, uint32_t kernel, grail_value mine,
                                            bool reduces, uint64_t *len, const grail_list *out) {
    const uint64_t started = grail_clock_ns();
    if (grail_thread_index() == 0) {
        S->R->peer_steps += 1u;
        S->R->peer_mark = started;
    }
    const bool ok = grail_peer_exchange(c, S, kernel, mine, reduces, len, out);
    if (grail_thread_index() == 0) S->R->peer_ns += grail_clock_ns() - started;
    return ok;
}

/* Part q's value or length (word 0 or 1) in the exchange just made. */
GRAIL_DEVICE grail_value grail_peer_partial(const grail_state *S, uint32_t q, uint32_t word) {
    const grail_peers *P = S->R->peers;
    const uint32_t par = (S->peer_step - 1u) & 1u;
    grail_value v;
    v.u = *(volatile uint64_t *)&P->partials[P->part][2u * ((uint64_t)par * P->parts + q) + word].u;
    return v;
}

/* The worklists' length over every part after the exchange just made. */
GRAIL_DEVICE uint64_t grail_peer_len(const grail_state *S) {
    uint64_t n = 0;
    for (uint32_t q = 0; q < S->R->peers->parts; q++) n += grail_peer_partial(S, q, 1u).u;
    return n;
}

/* ---- The asynchronous exchange: a fused worker per GPU (Groute §5.2) ----
 *
 * In the asynchronous mode (`grail run --mode async`) a worklist loop whose parts are all GPUs
 * reaching each other's memory runs as one control kernel per GPU that never waits for the
 * others: after an invocation the part sends what changed and returns to its worklist as soon
 * as it has one (crates/grail-runtime/src/multi/asynchronous.rs is the host-driven form); while
 * its exchanges carry nothing and it has work of its own, it exchanges after twice as many
 * invocations each time, up to GRAIL_ASYNC_MAX_GAP (the ghosts its worklist meets are noted by
 * grail_note_ghost meanwhile).
 * Between each ordered pair of parts there are two rings in the receiver's memory, written by
 * the sender only and read by the receiver only: records of three words (the entry and place,
 * the word the receiver last had from this sender, the word now) and nodes (noted ghosts, as
 * local ids at their owner). A round of the exchange is one grid barrier:
 *  - before it, every thread writes the ghosts that changed (at their mirror entries at the
 *    owner), the owned words that changed since their ghosts last had them (refreshes, for
 *    properties read through ghosts) and the noted ghosts into the rings, each slot reserved
 *    with a device atomic on the part's own count; and takes what the last round saw come in:
 *    merges the records (changes with the merge operator into owned nodes; refreshes into
 *    ghosts, keeping what the ghost has not sent yet) and appends the nodes to the worklist;
 *  - in it, once every thread has arrived, the first warp of block 0 publishes the slots
 *    reserved (stores at system scope into the receiver's words, after the writers' system
 *    fences), tells each sender how far this part has taken, and reads what the other parts
 *    have published since (grail_async_at_barrier), for the next round to take.
 * A record is so taken one round after it is seen; the host sizes the rings for that.
 * Refreshes of one ghost taken at once may be applied in any order, so properties read through
 * ghosts merge by an idempotent operator here (min, max, and, or; the host refuses the others).
 * A sender whose ring lacks room for the most one step writes (the host sizes rings at three
 * times that) sends nothing and takes what came in until the receiver has made room: no part ever
 * waits on another without taking. A part with nothing to run, send or take marks itself idle
 * and thread 0 polls; the loop ends when, read twice with nothing changed between, every part
 * is idle and the records and nodes sent in all equal those taken (each count is stored before
 * the state that follows it). Keep in sync with `GpuAsyncWords` in
 * crates/grail-runtime/src/gpu/ffi.rs. */

#ifndef GRAIL_ASYNC_PATIENCE_NS
#define GRAIL_ASYNC_PATIENCE_NS 3600000000000ull
#endif

GRAIL_DEVICE unsigned long long grail_load_acquire_sys64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

GRAIL_DEVICE void grail_store_release_sys64(unsigned long long *p, unsigned long long v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* A slot of counter `counts[o]`, reserved with one atomic per warp and destination. */
GRAIL_DEVICE unsigned long long grail_reserve_slot(unsigned long long *counts, uint32_t o) {
    const unsigned mask = __match_any_sync(__activemask(), o);
    const unsigned lane = threadIdx.x & 31u;
    const int leader = __ffs(mask) - 1;
    unsigned long long base = 0;
    if ((int)lane == leader) base = atomicAdd(&counts[o], (unsigned long long)__popc(mask));
    base = __shfl_sync(mask, base, leader);
    return base + __popc(mask & ((1u << lane) - 1u));
}

/* Words `a` and `b` merged with idempotent operator `op` (min, max, and, or) as type `kind`. */
GRAIL_DEVICE uint64_t grail_merge_pick(uint32_t size, uint32_t kind, uint32_t op, uint64_t a, uint64_t b) {
    if (size == 1u) return (op == 0u || op == 3u) ? (uint64_t)((a != 0u) && (b != 0u)) : (uint64_t)((a != 0u) || (b != 0u));
    if (op == 3u) return a & b;
    if (op == 4u) return a | b;
    bool less;
    switch (kind) {
    case 1u: less = (int32_t)(uint32_t)a < (int32_t)(uint32_t)b; break;
    case 2u: less = (int64_t)a < (int64_t)b; break;
    case 5u: less = __uint_as_float((uint32_t)a) < __uint_as_float((uint32_t)b); break;
    case 6u: less = __longlong_as_double((long long)a) < __longlong_as_double((long long)b); break;
    default: less = size == 4u ? (uint32_t)a < (uint32_t)b : a < b;
    }
    return (op == 0u) == less ? a : b;
}

/* `*word` merged with `w` by idempotent operator `op` as type `kind`, atomically. */
GRAIL_DEVICE void grail_pick_into(unsigned long long *word, uint32_t size, uint32_t kind, uint32_t op, uint64_t w) {
    unsigned long long seen = *(volatile unsigned long long *)word;
    for (;;) {
        const unsigned long long next = grail_merge_pick(size, kind, op, seen, w);
        if (next == seen) return;
        const unsigned long long prev = atomicCAS(word, seen, next);
        if (prev == seen) return;
        seen = prev;
    }
}

/* A ghost's word refreshed with its owner's `owner_word` (`record`: the word it last had from
 * or gave to its owner), by an idempotent operator (min, max, and, or: the asynchronous
 * exchange takes no other for properties read through ghosts), so that refreshes of one ghost
 * applied at once, in any order, leave the same: the word merged with the owner's, and the
 * record too (a word the ghost's kernel made better and has not sent stays unlike its record,
 * so it is sent). */
GRAIL_DEVICE void grail_peer_refresh_ghost(void *column, uint32_t size, uint32_t kind, uint32_t op, uint64_t at,
                                           uint64_t *record, uint64_t owner_word) {
    grail_peer_merge(column, size, kind, op, at, 0u, owner_word);
    grail_pick_into((unsigned long long *)record, size, kind, op, owner_word);
}

/* Thread 0's state stored in every part's words, after its counts sent and taken when `counts`
 * (a part stores them only as it becomes idle: the loop's end is judged only when every part
 * is, and a part that wakes says so before anything it does next can be seen). */
GRAIL_DEVICE void grail_async_publish(const grail_peers *P, grail_async_words *W, bool counts) {
    for (uint32_t q = 0; counts && q < P->parts; q++) {
        grail_store_release_sys64(&P->words[q]->sent[P->part], W->my_sent);
        grail_store_release_sys64(&P->words[q]->taken[P->part], W->my_taken);
    }
    for (uint32_t q = 0; q < P->parts; q++) grail_store_release_sys64(&P->words[q]->state[P->part], W->my_state);
}

/* Thread 0 of an idle part: waits until something comes in (true), or the loop is over or a
 * part failed (false; W->done or R->stopped says which). */
GRAIL_DEVICE bool grail_async_wait(grail_region *R, const grail_peers *P, grail_async_words *W) {
    if ((W->my_state & 1ull) == 0ull) {
        W->my_state += 1ull;
        grail_async_publish(P, W, true);
    }
    unsigned long long first[GRAIL_MAX_PARTS];
    unsigned long long seen_sum = 0ull;
    uint64_t since = grail_clock_ns();
    for (uint32_t spins = 0;; spins++) {
        for (uint32_t q = 0; q < P->parts; q++) {
            if (q == P->part) continue;
            if (grail_load_acquire_sys64(&W->rec_published[q]) != W->rec_taken[q] ||
                grail_load_acquire_sys64(&W->node_published[q]) != W->node_taken[q]) {
                W->my_state += 1ull;
                grail_async_publish(P, W, false);
                return true;
            }
        }
        /* Every part idle, read twice with the counts between unchanged, and nothing in flight. */
        bool idle = true;
        unsigned long long sum = 0ull;
        for (uint32_t q = 0; q < P->parts; q++) {
            first[q] = grail_load_acquire_sys64(&W->state[q]);
            idle &= (first[q] & 1ull) != 0ull;
            sum += first[q];
        }
        if (idle) {
            unsigned long long sent = 0ull, taken = 0ull;
            for (uint32_t q = 0; q < P->parts; q++) {
                sent += grail_load_acquire_sys64(&W->sent[q]);
                taken += grail_load_acquire_sys64(&W->taken[q]);
            }
            bool same = true;
            for (uint32_t q = 0; q < P->parts; q++) same &= grail_load_acquire_sys64(&W->state[q]) == first[q];
            if (same && sent == taken) {
                W->done = 1u;
                return false;
            }
        }
        if (sum != seen_sum) {
            seen_sum = sum;
            since = grail_clock_ns();
        }
        if ((spins & 63u) == 63u) {
            if (*(volatile uint32_t *)&P->barrier[1] != 0u) {
                R->stopped = 1u;
                return false;
            }
            /* No part has changed its state for GRAIL_ASYNC_PATIENCE_NS: one must have failed
             * without reaching its stop (a part that fails raises the stop word, and its host
             * thread does when its device does; a busy part publishes nothing while it works
             * alone, so the wait is far longer than at the supersteps' barriers). */
            if (grail_clock_ns() - since > GRAIL_ASYNC_PATIENCE_NS) {
                atomicExch_system(&P->barrier[1], 1u);
                R->stopped = 1u;
                return false;
            }
        }
        __nanosleep(100);
    }
}

/* This thread's share of the `count` words of entry `e`'s column at `local` that differ from
 * their `record`: each recorded again and written into the ring to part `to[i]`, at place
 * `at[i]` there (`kind`: the record's high bit). Whether it wrote any. */
GRAIL_DEVICE bool grail_async_send_changed(const grail_peers *P, grail_async_words *W, const grail_peer_entry *E,
                                           uint32_t e, uint64_t *record, uint64_t count, const uint32_t *local,
                                           const uint32_t *to, const uint32_t *at, unsigned long long kind) {
    bool wrote = false;
    const uint64_t threads = grail_thread_count();
    for (uint64_t i = grail_thread_index(); i < count; i += threads) {
        const uint64_t word = grail_load_word(E->columns[P->part], E->size, local[i]);
        const uint64_t before = record[i];
        if (word == before) continue;
        record[i] = word;
        wrote = true;
        const uint32_t q = to[i];
        const unsigned long long slot = grail_reserve_slot(W->rec_reserved, q) % P->rec_cap[q];
        unsigned long long *r = P->rec_ring[q] + 3u * slot;
        r[0] = kind | ((unsigned long long)e << 32) | at[i];
        r[1] = before;
        r[2] = word;
    }
    return wrote;
}

/* A relaxed store and load at system scope (ordered by the fences around them), and a fence
 * at system scope that orders the loads before it with every access after it, and every access
 * before it with the stores after it. */
GRAIL_DEVICE void grail_store_relaxed_sys64(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GRAIL_DEVICE unsigned long long grail_load_relaxed_sys64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GRAIL_DEVICE void grail_fence_sys(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/* Lane q reads how far sender q has published its nodes, then its records. A sender publishes
 * its records before its nodes, so every node seen comes with the records of the same step:
 * read the other way round, a node could be taken a step before the record that lowered it,
 * and its owner would run it with its old word (from INF, BFS's INF + 1 wraps to level 0). A
 * node and its record go out in one step when the worker skipped exchanges or its rings were
 * full. The caller's fence makes the slots behind both counts readable. */
GRAIL_DEVICE void grail_async_seen(grail_async_words *W, uint32_t q) {
    W->node_seen[q] = grail_load_acquire_sys64(&W->node_published[q]);
#ifdef GRAIL_ASYNC_STRESS_NS
    /* A stress test's wait between the two reads (GRAIL_NVRTC_FLAGS=-DGRAIL_ASYNC_STRESS_NS=N),
     * long enough for a sender to publish both meanwhile (scripts/gpu-suite.sh). */
    for (const uint64_t until = grail_clock_ns() + (GRAIL_ASYNC_STRESS_NS); grail_clock_ns() < until;) __nanosleep(1000);
#endif
    W->rec_seen[q] = grail_load_relaxed_sys64(&W->rec_published[q]);
}

#ifndef GRAIL_ASYNC_MAX_GAP
#define GRAIL_ASYNC_MAX_GAP 64u
#endif
/* While exchanges carry something, the part exchanges after as many invocations as keep an
 * exchange's round under 1/GRAIL_ASYNC_SHARE of the time they take (at least
 * GRAIL_ASYNC_MIN_GAP): after every invocation where invocations are long (R-MAT's), after a
 * few where a round costs about as much as an invocation (a road network's wave, ten
 * microseconds each). What the part sends waits the longer, but the exchanges' barriers and
 * system fences no longer double the invocations' time. */
#ifndef GRAIL_ASYNC_MIN_GAP
#define GRAIL_ASYNC_MIN_GAP 1u
#endif
#ifndef GRAIL_ASYNC_SHARE
#define GRAIL_ASYNC_SHARE 10u
#endif

/* What an exchange's barrier does once every thread has arrived and before any leaves, run by
 * the first warp of block 0 (lane q for part q): no thread is writing a ring or reading one, so
 * the counts stored here are exact.
 *  - publish the slots reserved in the rings to each receiver (`sending`; records before nodes);
 *  - tell each sender how far this part has taken (the records and nodes `took` in all, merged
 *    before the barrier: what the last exchange saw);
 *  - note whether some ring lacks room for the next exchange's most (W->blocked);
 *  - read what the other parts have published since, for the next exchange to take;
 *  - when the part has nothing to run, send or take afterwards (`idle_unless_seen`, unless
 *    something was seen), wait as an idle part until something comes or the loop ends.
 * One system fence goes before the stores (the writers' own fences made their slots visible;
 * the barrier orders them and this part's reads of the rings before it), a release store
 * publishes the nodes after the records, and one fence follows the loads. */
GRAIL_DEVICE void grail_async_at_barrier(grail_state *S, const grail_peers *P, grail_async_words *W, bool sending,
                                         bool forwarded, uint64_t took, bool idle_unless_seen, uint64_t *ghost_count,
                                         uint32_t invocations) {
    grail_region *const R = S->R;
    const uint32_t me = P->part;
    const uint32_t q = threadIdx.x;
    const bool peer = q < P->parts && q != me;
    unsigned long long moved = 0ull;
    uint32_t full = 0u, seen = 0u;
    if (peer) {
        const unsigned long long r = *(volatile unsigned long long *)&W->rec_reserved[q];
        const unsigned long long n = *(volatile unsigned long long *)&W->node_reserved[q];
        const bool publish_records = sending && r != W->rec_sent[q];
        const bool publish_nodes = sending && n != W->node_sent[q];
        const bool took_records = W->rec_seen[q] != W->rec_taken[q];
        const bool took_nodes = W->node_seen[q] != W->node_taken[q];
        if (publish_records || publish_nodes || took_records || took_nodes) grail_fence_sys();
        if (took_records) {
            W->rec_taken[q] = W->rec_seen[q];
            grail_store_relaxed_sys64(&P->words[q]->rec_taken_by[me], W->rec_taken[q]);
        }
        if (took_nodes) {
            W->node_taken[q] = W->node_seen[q];
            grail_store_relaxed_sys64(&P->words[q]->node_taken_by[me], W->node_taken[q]);
        }
        if (publish_records) grail_store_relaxed_sys64(&P->words[q]->rec_published[me], r);
        if (publish_nodes) grail_store_release_sys64(&P->words[q]->node_published[me], n);
        if (sending) {
            moved = (r - W->rec_sent[q]) + (n - W->node_sent[q]);
            W->rec_sent[q] = r;
            W->node_sent[q] = n;
        }
        /* Room in the ring for the next exchange's most, as far as the receiver has taken. */
        if (P->rec_cap[q] - (r - grail_load_relaxed_sys64(&W->rec_taken_by[q])) < P->rec_most[q] ||
            P->node_cap[q] - (n - grail_load_relaxed_sys64(&W->node_taken_by[q])) < P->node_most[q])
            full = 1u;
        grail_async_seen(W, q);
        grail_fence_sys();
        seen = W->rec_seen[q] != W->rec_taken[q] || W->node_seen[q] != W->node_taken[q];
    }
    for (uint32_t lanes = 16u; lanes > 0u; lanes >>= 1) moved += __shfl_down_sync(0xffffffffu, moved, lanes);
    full = __reduce_or_sync(0xffffffffu, full);
    seen = __reduce_or_sync(0xffffffffu, seen);
    bool again = false;
    if (q == 0u) {
        W->sent_now = moved != 0ull ? 1u : 0u;
        W->my_sent += moved;
        W->my_taken += took;
        W->blocked = full;
        if (sending && forwarded) *ghost_count = 0ull;
        uint64_t waited = 0u;
        if (!seen && idle_unless_seen) {
            /* Nothing to run, send or take: idle until something comes. */
            const uint64_t idle = grail_clock_ns();
            again = grail_async_wait(R, P, W);
            waited = grail_clock_ns() - idle;
        } else if (full != 0u && *(volatile uint32_t *)&P->barrier[1] != 0u) {
            R->stopped = 1u;
        }
        /* The gap while exchanges carry something, from this round's time (its wait left out)
         * against an invocation's since the last exchange (this thread is global thread 0,
         * whose clocks S holds). */
        if (S->async_ended != 0u && S->async_began > S->async_ended) {
            const uint64_t round = grail_clock_ns() - S->async_round - waited;
            const uint64_t invocation = (S->async_began - S->async_ended) / invocations + 1u;
            const uint64_t gap = (GRAIL_ASYNC_SHARE * round + invocation - 1u) / invocation;
            W->gap = (uint32_t)(gap < GRAIL_ASYNC_MIN_GAP ? GRAIL_ASYNC_MIN_GAP : gap > GRAIL_ASYNC_MAX_GAP ? GRAIL_ASYNC_MAX_GAP : gap);
        } else if (W->gap == 0u) {
            W->gap = GRAIL_ASYNC_MIN_GAP;
        }
    }
    if (__shfl_sync(0xffffffffu, again ? 1u : 0u, 0) != 0u && peer) {
        grail_async_seen(W, q);
        grail_fence_sys();
    }
    __syncwarp();
}

/* The asynchronous exchange after an invocation of `kernel` (see above): `*len` is the part's
 * worklist's length (the list `out`). Returns with work in the list, or with `*len` 0 once the
 * loop is over; false when the region must stop. Every thread of the grid calls it alike.
 * Each round is one grid barrier: before it every thread sends (the changed ghosts and
 * boundary words, the noted ghosts) and takes what the last barrier saw come in (merging the
 * records, appending the nodes to the list); the barrier publishes, acknowledges and looks for
 * more (grail_async_at_barrier). */
GRAIL_DEVICE bool grail_peer_async_exchange(const grail_ctx *c, grail_state *S, uint32_t kernel, uint64_t *len,
                                            const grail_list *out) {
    grail_region *const R = S->R;
    const grail_peers *P = R->peers;
    grail_async_words *W = P->words[P->part];
    const uint32_t me = P->part;
    const uint64_t index = grail_thread_index(), threads = grail_thread_count();
    const uint32_t owned = (uint32_t)c->num_nodes;
    (void)kernel;
    (void)out;
    /* While the part has work of its own and its last exchanges carried nothing, it makes
     * more invocations between exchanges (up to GRAIL_ASYNC_MAX_GAP): what changes meanwhile
     * waits in its ghosts' words and its noted ghosts (grail_note_ghost), not in the list. */
    if (*len > 0u && S->async_since + 1u < S->async_gap) {
        S->async_since += 1u;
        return true;
    }
    const uint32_t invocations = S->async_since + 1u;
    S->async_since = 0u;
    if (index == 0) S->async_began = grail_clock_ns();
    bool scan = true;
    /* The ghosts the invocations met in their worklists, noted once each. */
    const uint64_t noted = *(volatile unsigned long long *)c->ghost_count;
    bool forward = noted > 0u;
    for (;;) {
        S->peer_step += 1u;
        if (index == 0) S->async_round = grail_clock_ns();
        const bool blocked = *(volatile uint32_t *)&W->blocked != 0u;
        const bool sending = !blocked && (scan || forward);
        bool wrote = false;
        if (sending && scan) {
            for (uint32_t e = 0; e < P->entries; e++) {
                const grail_peer_entry *E = &P->plan[e];
                /* Changed ghosts to their owners, at their mirror entries there; changed
                 * boundary words to their ghosts, at the ghosts' positions there. */
                if (E->merge != 0u)
                    wrote |= grail_async_send_changed(P, W, E, e, E->ghost_records[me], P->ghosts, P->ghost_local,
                                                      P->ghost_owner, P->ghost_mirror, 0ull);
                if (E->refresh != 0u)
                    wrote |= grail_async_send_changed(P, W, E, e, E->mirror_records[me], P->mirrors, P->mirror_local,
                                                      P->mirror_part, P->mirror_ghost, 1ull << 63);
            }
        }
        if (sending && forward) {
            for (uint64_t i = index; i < noted; i += threads) {
                const uint32_t g = c->ghost_list[i] - owned;
                c->ghost_flags[g] = 0u;
                wrote = true;
                const uint32_t o = P->owner_of[g];
                const unsigned long long slot = grail_reserve_slot(W->node_reserved, o) % P->node_cap[o];
                P->node_ring[o][slot] = P->at_of[g];
            }
        }
        /* Take what the last barrier saw: merge the records, append the nodes. A record merged
         * here may change a word the sending above compares; what it misses goes next time. */
        uint64_t records = 0u, nodes = 0u;
        for (uint32_t q = 0; q < P->parts; q++) {
            if (q == me) continue;
            /* Written by the barrier's warp (block 0) before the release: read past L1. */
            const unsigned long long from = *(volatile unsigned long long *)&W->rec_taken[q];
            const unsigned long long n = *(volatile unsigned long long *)&W->rec_seen[q] - from;
            const unsigned long long *ring = P->rec_ring_in[q];
            for (uint64_t i = index; i < n; i += threads) {
                const uint64_t slot = (from + i) % P->rec_cap_in[q];
                const unsigned long long head = *(volatile const unsigned long long *)&ring[3u * slot];
                const uint64_t before = *(volatile const unsigned long long *)&ring[3u * slot + 1u];
                const uint64_t after = *(volatile const unsigned long long *)&ring[3u * slot + 2u];
                const grail_peer_entry *E = &P->plan[(uint32_t)(head >> 32) & 0x7fffffffu];
                const uint32_t at = (uint32_t)head;
                if ((head >> 63) == 0ull) {
                    grail_peer_merge(E->columns[me], E->size, E->kind, E->op, P->mirror_local[at], before, after);
                    /* That ghost holds this word now (or one its owner sent it since). */
                    if (E->refresh != 0u)
                        grail_pick_into((unsigned long long *)&E->mirror_records[me][at], E->size, E->kind, E->op, after);
                } else {
                    grail_peer_refresh_ghost(E->columns[me], E->size, E->kind, E->op, P->ghost_local[at],
                                             &E->ghost_records[me][at], after);
                }
            }
            records += n;
            const unsigned long long taken = *(volatile unsigned long long *)&W->node_taken[q];
            const unsigned long long k = *(volatile unsigned long long *)&W->node_seen[q] - taken;
            for (uint64_t i = index; i < k; i += threads) {
                const uint32_t item = P->node_ring_in[q][(taken + i) % P->node_cap_in[q]];
                grail_push_slot(&c->pushes, *len + nodes + i, item);
            }
            nodes += k;
        }
        const bool forwarded = sending && forward;
        if (sending) scan = forward = false;
        scan |= records != 0u;
        if (wrote) __threadfence_system();
        const uint64_t took = records + nodes;
        const bool idle_unless_seen = !scan && !forward && *len + nodes == 0u;
        grail_grid_sync_with(S, [&] {
            if (threadIdx.x < 32u)
                grail_async_at_barrier(S, P, W, sending, forwarded, took, idle_unless_seen, c->ghost_count, invocations);
        });
        if (*(volatile uint32_t *)&R->stopped != 0u) {
            S->failed = true;
            return false;
        }
        if (*(volatile uint32_t *)&W->done != 0u) {
            *len = 0u;
            return true;
        }
        if (nodes != 0u) {
            *len += nodes;
            const uint32_t overflow = *(volatile uint32_t *)c->pushes.overflow;
            if (overflow > S->overflow) S->overflow = overflow;
            if (overflow >= 2u) {
                S->failed = true;
                return false;
            }
        }
        const bool carried = records + nodes != 0u || *(volatile uint32_t *)&W->sent_now != 0u;
        if (*len > 0u && !forward) {
            const uint32_t gap = *(volatile uint32_t *)&W->gap;
            S->async_gap = carried ? gap : (S->async_gap * 2u > GRAIL_ASYNC_MAX_GAP ? GRAIL_ASYNC_MAX_GAP : S->async_gap * 2u);
            if (index == 0) S->async_ended = grail_clock_ns();
            return true;
        }
    }
}

/* The asynchronous exchange (grail_peer_async_exchange), out of line, timed by global thread 0. */
__device__ __noinline__ bool grail_peer_async_step(const grail_ctx *c, grail_state *S, uint32_t kernel,
                                                  uint64_t *len, const grail_list *out) {
    const uint64_t started = grail_clock_ns();
    const bool ok = grail_peer_async_exchange(c, S, kernel, len, out);
    if (grail_thread_index() == 0) S->R->peer_ns += grail_clock_ns() - started;
    return ok;
}

#endif /* GRAIL_CUDA_H */
