/* grail CPU runtime header: included at the top of every generated C program.
 *
 * The Rust runtime owns the graph, the property columns, the worklists and the threads; generated
 * kernels see them through a grail_ctx and keep per-thread state in a grail_thread. Property
 * columns are plain arrays: atomic operations use the compiler's __atomic builtins on them. */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One argument, parameter or reduction value: integers and bools in u (or i), floats in f. */
typedef union grail_value {
    uint64_t u;
    int64_t i;
    double f;
} grail_value;

/* A growable array of items a thread pushed or retried; freed with grail_buf_free. */
typedef struct grail_buf {
    uint32_t *data;
    uint64_t len;
    uint64_t cap;
    /* Set when growing failed: the runtime reports out of memory instead of losing items. */
    uint32_t failed;
} grail_buf;

/* Collections. Element i lives in segment s = floor(log2(i / 1024 + 1)), which holds 1024 << s
 * elements; a segment is allocated by the first thread that adds into it and never moves, so
 * handles stay valid while other threads add. Each element has its fields, then a lock word, a
 * claim word and a removed word, laid out in one of two ways (the `layout` optimization):
 * - columns: a segment stores each field as an array, then the three word arrays; the generated
 *   code names the byte offsets of these arrays in segment 0 (GRAIL_C<c>_F<f>, ..._LOCKS,
 *   ..._CLAIMS, ..._GONE, ..._BYTES: a segment 0's size); in segment s they are shifted left by s;
 * - rows: element k of a segment is the row of `stride` bytes at k * stride, each field and word
 *   at its byte offset in the row; the names are then GRAIL_ROW(stride, offset), which
 *   GRAIL_SLOT tells from a column offset by GRAIL_ROW_BIT (a constant: the test folds away).
 * Keep in sync with `GrailColl` in ffi.rs. */
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
#define GRAIL_ALIGNOF(t) _Alignof(t)
/* A field or word's address in segment `seg` (number s), element k of it. */
#define GRAIL_SLOT(seg, s, offset, size, k)                                                                  \
    (((offset) & GRAIL_ROW_BIT) ? (void *)((char *)(seg) + (uint64_t)(k) * (((offset) >> 32) & 0x7fffffffu) + \
                                           ((offset) & 0xffffffffu))                                           \
                                : (void *)((char *)(seg) + ((offset) << (s)) + (uint64_t)(k) * (size)))

typedef struct grail_coll {
    /* Elements added so far (reserved slots; may pass GRAIL_COLL_MAX only when failed is set). */
    uint64_t len;
    /* Elements removed so far (each slot's removed word says which). */
    uint64_t removed;
    void *segs[GRAIL_SEGS];
    /* 1 when allocating a segment failed, 2 when the collection is full; the runtime reports it. */
    uint32_t failed;
} grail_coll;

/* Keep in sync with `GrailCtx` in crates/grail-runtime/src/cpu/ffi.rs (its #[repr(C)] mirror). */
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
    /* Property columns, by property id. */
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
    /* The whole graph's node and edge counts (`G.num_nodes()`, `G.num_edges()`). On a part of a
     * partitioned graph, num_nodes and num_edges are the part's own (owned nodes, their edges). */
    uint64_t graph_nodes;
    uint64_t graph_edges;
    /* Node slots: the length of node columns, the part's owned nodes then its ghosts (equal to
     * num_nodes on one device). */
    uint64_t node_slots;
    /* On a part, the global id of every local node (what `u as u32` gives); NULL otherwise. */
    const uint32_t *global_ids;
    /* On a part of a program that reads the out-degree of nodes other than its loops' items:
     * each ghost's out-degree in the whole graph, by local id minus num_nodes (a ghost's row
     * is empty); NULL otherwise. */
    const uint32_t *ghost_degrees;
} grail_ctx;

/* A growable array of 64-bit words: a thread's records of deferred loops; freed with
 * grail_wbuf_free. */
typedef struct grail_wbuf {
    uint64_t *data;
    uint64_t len;
    uint64_t cap;
    uint32_t failed;
} grail_wbuf;

/* Ordered for the runtime, which reads every thread's retries and deferred loops after each
 * pass of a phase (the first cache line of a thread's state), and its pushes and reduction once
 * an invocation. */
typedef struct grail_thread {
    grail_buf retries;
    /* Records of the loops this thread deferred (split sites): first and past-the-end CSR
     * positions, then the loop's closure, one word per value. */
    grail_wbuf deferred;
    grail_buf pushes;
    /* This thread's partial reduction; the runtime starts it at the operator's identity. */
    grail_value acc;
    /* A phase with a split site defers its adjacency loops of at least this many iterations
     * (hubs) instead of running them; UINT64_MAX: none. Set by the runtime when it changes. */
    uint64_t split_min;
    /* One per collection of the program (NULL when it has none): this thread's block of reserved
     * slots and its uncounted removals (see grail_coll_reserve_slot). */
    struct grail_slots *slots;
} grail_thread;

/* A thread's block of slots reserved in one collection, [next, end), and the removals it made
 * and has not yet counted into the collection's `removed`. */
typedef struct grail_slots {
    uint64_t next;
    uint64_t end;
    uint64_t removed;
} grail_slots;

static inline void grail_buf_append(grail_buf *b, uint32_t item) {
    if (b->len == b->cap) {
        uint64_t cap = b->cap ? 2 * b->cap : 1024;
        uint32_t *data = (uint32_t *)realloc(b->data, cap * sizeof(uint32_t));
        if (!data) {
            b->failed = 1;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    b->data[b->len++] = item;
}

void grail_buf_free(grail_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Room for `words` more words at the end of b (NULL, with `failed` set, when out of memory).
 * Called only for hubs, so kept out of the item loops. */
static __attribute__((noinline, cold, unused)) uint64_t *grail_wbuf_reserve(grail_wbuf *b, uint64_t words) {
    if (b->len + words > b->cap) {
        uint64_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->len + words) cap *= 2;
        uint64_t *data = (uint64_t *)realloc(b->data, cap * sizeof(uint64_t));
        if (!data) {
            b->failed = 1;
            return NULL;
        }
        b->data = data;
        b->cap = cap;
    }
    uint64_t *r = b->data + b->len;
    b->len += words;
    return r;
}

void grail_wbuf_free(grail_wbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Atomic read-modify-writes on property elements; each returns whether the value changed. */
#define GRAIL_ATOMIC_INT(T, NAME)                                                              \
    static inline bool grail_atomic_min_##NAME(T *p, T v) {                                    \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                          \
        while (v < old)                                                                        \
            if (__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
                return true;                                                                   \
        return false;                                                                          \
    }                                                                                          \
    static inline bool grail_atomic_max_##NAME(T *p, T v) {                                    \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                          \
        while (v > old)                                                                        \
            if (__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
                return true;                                                                   \
        return false;                                                                          \
    }                                                                                          \
    static inline bool grail_atomic_add_##NAME(T *p, T v) {                                    \
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                                            \
        return v != 0;                                                                         \
    }                                                                                          \
    static inline bool grail_atomic_sub_##NAME(T *p, T v) {                                    \
        __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);                                            \
        return v != 0;                                                                         \
    }                                                                                          \
    static inline bool grail_atomic_and_##NAME(T *p, T v) {                                    \
        T old = __atomic_fetch_and(p, v, __ATOMIC_RELAXED);                                    \
        return (T)(old & v) != old;                                                            \
    }                                                                                          \
    static inline bool grail_atomic_or_##NAME(T *p, T v) {                                     \
        T old = __atomic_fetch_or(p, v, __ATOMIC_RELAXED);                                     \
        return (T)(old | v) != old;                                                            \
    }                                                                                          \
    static inline bool grail_atomic_cas_##NAME(T *p, T expected, T v) {                        \
        return __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) \
            && expected != v;                                                                  \
    }

GRAIL_ATOMIC_INT(uint32_t, u32)
GRAIL_ATOMIC_INT(uint64_t, u64)
GRAIL_ATOMIC_INT(int32_t, i32)
GRAIL_ATOMIC_INT(int64_t, i64)

/* Bools: min is and, max is or; the fetch builtins do not take bool, so compare-and-swap. */
static inline bool grail_atomic_update_bool(bool *p, bool v, bool is_or) {
    bool old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        bool next = is_or ? (old || v) : (old && v);
        if (next == old) return false;
        if (__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return true;
    }
}
static inline bool grail_atomic_min_bool(bool *p, bool v) { return grail_atomic_update_bool(p, v, false); }
static inline bool grail_atomic_max_bool(bool *p, bool v) { return grail_atomic_update_bool(p, v, true); }
static inline bool grail_atomic_and_bool(bool *p, bool v) { return grail_atomic_update_bool(p, v, false); }
static inline bool grail_atomic_or_bool(bool *p, bool v) { return grail_atomic_update_bool(p, v, true); }
static inline bool grail_atomic_cas_bool(bool *p, bool expected, bool v) {
    return __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) && expected != v;
}

/* Floats: compare-and-swap on the bits. */
#define GRAIL_ATOMIC_FLOAT(T, BITS, NAME)                                                      \
    static inline bool grail_atomic_update_##NAME(T *p, T v, int op) {                         \
        BITS *q = (BITS *)p;                                                                   \
        BITS old_bits = __atomic_load_n(q, __ATOMIC_RELAXED);                                  \
        for (;;) {                                                                             \
            T old, next;                                                                       \
            memcpy(&old, &old_bits, sizeof old);                                               \
            next = op == 0 ? (v < old ? v : old) : op == 1 ? (v > old ? v : old)               \
                 : op == 2 ? old + v : old - v;                                                \
            if (next == old) return false;                                                     \
            BITS next_bits;                                                                    \
            memcpy(&next_bits, &next, sizeof next);                                            \
            if (__atomic_compare_exchange_n(q, &old_bits, next_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
                return true;                                                                   \
        }                                                                                      \
    }                                                                                          \
    static inline bool grail_atomic_min_##NAME(T *p, T v) { return grail_atomic_update_##NAME(p, v, 0); } \
    static inline bool grail_atomic_max_##NAME(T *p, T v) { return grail_atomic_update_##NAME(p, v, 1); } \
    static inline bool grail_atomic_add_##NAME(T *p, T v) { return grail_atomic_update_##NAME(p, v, 2); } \
    static inline bool grail_atomic_sub_##NAME(T *p, T v) { return grail_atomic_update_##NAME(p, v, 3); } \
    static inline bool grail_atomic_cas_##NAME(T *p, T expected, T v) {                        \
        BITS e, n;                                                                             \
        memcpy(&e, &expected, sizeof e);                                                       \
        memcpy(&n, &v, sizeof n);                                                              \
        return __atomic_compare_exchange_n((BITS *)p, &e, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) && e != n; \
    }

GRAIL_ATOMIC_FLOAT(float, uint32_t, f32)
GRAIL_ATOMIC_FLOAT(double, uint64_t, f64)

/* The segment and the position in it of element i. */
static inline unsigned grail_segment(uint64_t i, uint64_t *position) {
    uint64_t q = (i >> GRAIL_SEG_LOG) + 1;
    unsigned s = 63 - (unsigned)__builtin_clzll(q);
    *position = i - ((((uint64_t)1 << s) - 1) << GRAIL_SEG_LOG);
    return s;
}

/* The address of element i's entry in the array at `offset` (in segment 0) of `size` bytes each. */
static inline void *grail_elem(const grail_coll *c, uint64_t offset, uint64_t size, uint64_t i) {
    uint64_t k;
    unsigned s = grail_segment(i, &k);
    char *seg = (char *)__atomic_load_n(&c->segs[s], __ATOMIC_ACQUIRE);
    return GRAIL_SLOT(seg, s, offset, size, k);
}

/* Makes sure slot i's segment is allocated (zeroed); false when memory ran out (`failed` is 1). */
static inline bool grail_coll_segment(grail_coll *c, uint64_t seg0_bytes, uint64_t i) {
    uint64_t k;
    unsigned s = grail_segment(i, &k);
    if (!__atomic_load_n(&c->segs[s], __ATOMIC_ACQUIRE)) {
        void *fresh = calloc(1, seg0_bytes << s);
        if (!fresh) {
            __atomic_store_n(&c->failed, 1u, __ATOMIC_RELAXED);
            return false;
        }
        void *expected = NULL;
        if (!__atomic_compare_exchange_n(&c->segs[s], &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            free(fresh);
    }
    return true;
}

/* Reserves the next element, allocating its segment (zeroed) if no thread has yet. False when
 * out of memory or full: `failed` says which, and the runtime stops the program. */
static inline bool grail_coll_reserve(grail_coll *c, uint64_t seg0_bytes, uint64_t locks, uint64_t *index) {
    (void)locks; /* a fresh segment is zeroed, and slots are not reused */
    uint64_t i = __atomic_fetch_add(&c->len, 1, __ATOMIC_RELAXED);
    if (i >= GRAIL_COLL_MAX) {
        __atomic_store_n(&c->failed, 2u, __ATOMIC_RELAXED);
        return false;
    }
    if (!grail_coll_segment(c, seg0_bytes, i)) return false;
    *index = i;
    return true;
}

/* Slots a thread reserves at once in a kernel's adds (one shared atomic per block instead of one
 * per element: with many threads adding, that counter's cache line was the kernel's bottleneck). */
#define GRAIL_SLOT_BLOCK 64

/* Reserves a slot for a kernel thread's next element: the next of its block `s`, or the first of
 * a fresh block. A fresh block's slots are marked removed at once (`gone`), so that loops over
 * the collection skip them until their adds have written them and cleared the mark; the slots a
 * thread does not use stay removed, and the runtime counts them, with the removals in
 * `s->removed`, into the collection once the kernel ends. Only for collections whose count no
 * kernel reads (the codegen decides): until then, the count would include them. */
static inline bool grail_coll_reserve_slot(grail_coll *c, uint64_t seg0_bytes, uint64_t gone, grail_slots *s,
                                           uint64_t *index) {
    if (s->next == s->end) {
        uint64_t base = __atomic_fetch_add(&c->len, GRAIL_SLOT_BLOCK, __ATOMIC_RELAXED);
        if (base >= GRAIL_COLL_MAX) {
            __atomic_store_n(&c->failed, 2u, __ATOMIC_RELAXED);
            return false;
        }
        uint64_t end = base + GRAIL_SLOT_BLOCK < GRAIL_COLL_MAX ? base + GRAIL_SLOT_BLOCK : GRAIL_COLL_MAX;
        unsigned allocated = GRAIL_SEGS; /* the segment made sure of last (none yet) */
        for (uint64_t i = base; i < end; i++) {
            uint64_t k;
            unsigned segment = grail_segment(i, &k);
            if (segment != allocated) {
                if (!grail_coll_segment(c, seg0_bytes, i)) return false;
                allocated = segment;
            }
            __atomic_store_n((uint32_t *)grail_elem(c, gone, 4, i), 1u, __ATOMIC_RELAXED);
        }
        s->next = base;
        s->end = end;
    }
    *index = s->next++;
    return true;
}


/* The handle a failed add returns: element 0, which the failing thread then writes instead of the
 * element that could not be made, so that no access strays outside the collection's memory. The
 * run is doomed: `failed` is set and the runtime stops the program with the collection's error
 * when the kernel ends. A collection without element 0 stops the kernel (a trap). */
static inline uint32_t grail_coll_sink(const grail_coll *c) {
    if (__atomic_load_n(&c->segs[0], __ATOMIC_ACQUIRE)) return 0u;
    __builtin_trap();
    return 0u;
}

/* The number of elements a loop over the collection visits. */
static inline uint64_t grail_coll_len(const grail_coll *c) {
    uint64_t n = __atomic_load_n(&c->len, __ATOMIC_ACQUIRE);
    return n < GRAIL_COLL_MAX ? n : GRAIL_COLL_MAX;
}

/* Integer `a / b` and `a % b` of each type (BAD: the operands the language calls an error, a
 * divisor of zero or the type's minimum over -1). The operands are tested rather than left to
 * the hardware's trap because the C compiler may never divide: with operands it knows (a
 * divisor in a local, a function inlined with a constant) -fwrapv has it fold INT_MIN / -1 to
 * INT_MIN and INT_MIN % -1 to 0, and a known zero divisor is undefined behaviour it may drop.
 * A known divisor other than 0 and -1 folds the test away; any other costs a compare. */
__attribute__((cold, noinline, noreturn)) static void grail_arith_fault(void) {
    /* The runtime's handler, installed while a kernel runs, reports the kernel and exits with
     * status 70, as for the hardware's trap. Elsewhere it puts the previous handler back and
     * returns: raised again, the signal ends the process as the trap would. */
    raise(SIGFPE);
    raise(SIGFPE);
    abort();
}
#define GRAIL_DIVISION(T, NAME, BAD)                                                          \
    static inline T grail_div_##NAME(T a, T b) {                                              \
        if (__builtin_expect(BAD, 0)) grail_arith_fault();                                   \
        return (T)(a / b);                                                                     \
    }                                                                                          \
    static inline T grail_rem_##NAME(T a, T b) {                                              \
        if (__builtin_expect(BAD, 0)) grail_arith_fault();                                   \
        return (T)(a % b);                                                                     \
    }
GRAIL_DIVISION(int32_t, i32, b == 0 || (b == -1 && a == INT32_MIN))
GRAIL_DIVISION(int64_t, i64, b == 0 || (b == -1 && a == INT64_MIN))
GRAIL_DIVISION(uint32_t, u32, b == 0)
GRAIL_DIVISION(uint64_t, u64, b == 0)

/* Removal marks an element (its removed word, at `gone` in segment 0): loops over the collection
 * skip it, its slot is not reused (handles held elsewhere never name another element), and its
 * fields stay readable. A handle that is not an element is never present and cannot be removed. */
/* Item i of the C array `a` (an array local's `.v`); an index past the end stops the kernel
 * (a trap, reported as a fault in the kernel). */
#define GRAIL_TRAP() __builtin_trap()
#define GRAIL_AT(a, i) ((a)[(uint64_t)(i) < sizeof(a) / sizeof((a)[0]) ? (uint64_t)(i) : (GRAIL_TRAP(), (uint64_t)0)])

static inline bool grail_coll_has(const grail_coll *c, uint64_t gone, uint32_t i) {
    if ((uint64_t)i >= grail_coll_len(c)) return false;
    /* Acquire: an element added through a reserved slot is written before its mark is cleared. */
    return __atomic_load_n((uint32_t *)grail_elem(c, gone, 4, i), __ATOMIC_ACQUIRE) == 0u;
}

/* Orders this thread's earlier writes before its later ones for every other thread (an edge's
 * fields before the list head that publishes it). */
static inline void grail_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }

/* Removes element i; true for the one call that removed it. */
static inline bool grail_coll_remove(grail_coll *c, uint64_t gone, uint32_t i) {
    if ((uint64_t)i >= grail_coll_len(c)) return false;
    if (__atomic_exchange_n((uint32_t *)grail_elem(c, gone, 4, i), 1u, __ATOMIC_RELAXED) != 0u) return false;
    __atomic_fetch_add(&c->removed, 1, __ATOMIC_RELAXED);
    return true;
}

/* Removes element i for a kernel thread, counting it in `s` (see grail_coll_reserve_slot). */
static inline bool grail_coll_remove_slot(grail_coll *c, uint64_t gone, uint32_t i, grail_slots *s) {
    if ((uint64_t)i >= grail_coll_len(c)) return false;
    if (__atomic_exchange_n((uint32_t *)grail_elem(c, gone, 4, i), 1u, __ATOMIC_RELAXED) != 0u) return false;
    s->removed++;
    return true;
}

/* The number of elements present: added and not removed. */
static inline uint64_t grail_coll_live(const grail_coll *c) {
    return grail_coll_len(c) - __atomic_load_n(&c->removed, __ATOMIC_RELAXED);
}

/* Zeroes the 4-byte words at `offset` (in segment 0) of every allocated segment: the claim words,
 * when invocation numbers wrap around. */
static inline void grail_coll_clear_words(grail_coll *c, uint64_t offset) {
    for (unsigned s = 0; s < GRAIL_SEGS; s++) {
        if (!c->segs[s]) continue;
        if (offset & GRAIL_ROW_BIT) {
            const uint64_t n = (uint64_t)1 << (GRAIL_SEG_LOG + s);
            for (uint64_t k = 0; k < n; k++) *(uint32_t *)GRAIL_SLOT(c->segs[s], s, offset, 4, k) = 0u;
        } else {
            memset((char *)c->segs[s] + (offset << s), 0, (uint64_t)4 << (GRAIL_SEG_LOG + s));
        }
    }
}

void grail_coll_free(grail_coll *c) {
    for (int s = 0; s < GRAIL_SEGS; s++) {
        free(c->segs[s]);
        c->segs[s] = NULL;
    }
    c->len = 0;
    c->removed = 0;
    c->failed = 0;
}

/* Locks: a try-lock word per node (ctx->locks) and per collection element (in its segment).
 * A lock statement names its kind: `coll` is -1 for nodes, else the collection, whose lock
 * words are at `lock_offset`. */
static inline uint32_t *grail_lock_word(const grail_ctx *ctx, int coll, uint64_t lock_offset, uint32_t id) {
    return coll < 0 ? &ctx->locks[id] : (uint32_t *)grail_elem(&ctx->colls[coll], lock_offset, 4, id);
}

static inline bool grail_trylock(uint32_t *word) {
    uint32_t free_word = 0;
    return __atomic_compare_exchange_n(word, &free_word, 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void grail_unlock(uint32_t *word) {
    __atomic_store_n(word, 0u, __ATOMIC_RELEASE);
}

/* Exclusive: try once to lock every element; on any failure release what was taken. Elements
 * are locked in increasing id order (duplicates once), so two threads never each wait on the
 * other's lock. */
static inline bool grail_lock_all(const grail_ctx *ctx, int coll, uint64_t lock_offset, uint32_t *elements, int count) {
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && elements[j - 1] > elements[j]; j--) {
            uint32_t t = elements[j];
            elements[j] = elements[j - 1];
            elements[j - 1] = t;
        }
    for (int i = 0; i < count; i++) {
        if (i > 0 && elements[i] == elements[i - 1]) continue;
        if (!grail_trylock(grail_lock_word(ctx, coll, lock_offset, elements[i]))) {
            for (int j = i - 1; j >= 0; j--)
                if (j == 0 || elements[j] != elements[j - 1])
                    grail_unlock(grail_lock_word(ctx, coll, lock_offset, elements[j]));
            return false;
        }
    }
    return true;
}

static inline void grail_unlock_all(const grail_ctx *ctx, int coll, uint64_t lock_offset, const uint32_t *elements,
                                    int count) {
    for (int i = 0; i < count; i++)
        if (i == 0 || elements[i] != elements[i - 1]) grail_unlock(grail_lock_word(ctx, coll, lock_offset, elements[i]));
}

/* Single: the first thread to claim the word in this invocation wins. Claim words are per node
 * (ctx->claims) or per element (`coll` and `claim_offset` as for locks). */
static inline bool grail_claim(const grail_ctx *ctx, int coll, uint64_t claim_offset, uint32_t id) {
    uint32_t *word = coll < 0 ? &ctx->claims[id] : (uint32_t *)grail_elem(&ctx->colls[coll], claim_offset, 4, id);
    uint32_t seen = __atomic_load_n(word, __ATOMIC_RELAXED);
    while (seen != ctx->invocation)
        if (__atomic_compare_exchange_n(word, &seen, ctx->invocation, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return true;
    return false;
}

/* Union-find with path halving; the smaller id becomes the root, so roots are deterministic.
 * A parent is always a smaller id than its child, and a node's ancestors stay its ancestors:
 * halving may store any ancestor into a non-root's parent, so a plain (relaxed) store does,
 * racing or not; only hooking a root needs the compare-and-swap, and a failed one answers with
 * the root's new parent, from which the union goes on (each retry starts below the last). The
 * operations are atomic, not ordered with the kernel's other accesses (the language's promise).
 * (Before, halving by compare-and-swap and a full find after every failed hook: on two cores,
 * union over every edge took a median of 52.6 ms against 47.2 now on a road network of 2^20
 * nodes, 48.8 against 41.2 on R-MAT 2^18, and Afforest over a set 13.2 against 9.2 there.) */
static inline uint32_t grail_find(const grail_ctx *ctx, uint32_t set, uint32_t u) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->node_slots;
    uint32_t p = __atomic_load_n(&parent[u], __ATOMIC_RELAXED);
    while (p != u) {
        const uint32_t gp = __atomic_load_n(&parent[p], __ATOMIC_RELAXED);
        if (gp != p) __atomic_store_n(&parent[u], gp, __ATOMIC_RELAXED);
        u = p;
        p = gp;
    }
    return u;
}

static inline bool grail_union(const grail_ctx *ctx, uint32_t set, uint32_t a, uint32_t b) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->node_slots;
    a = grail_find(ctx, set, a);
    b = grail_find(ctx, set, b);
    for (;;) {
        if (a == b) return false;
        const uint32_t hi = a > b ? a : b, lo = a > b ? b : a;
        uint32_t seen = hi;
        if (__atomic_compare_exchange_n(&parent[hi], &seen, lo, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return true;
        const uint32_t above = grail_find(ctx, set, seen);
        if (hi == a) a = above; else b = above;
    }
}
