/* grail CPU runtime header: included at the top of every generated C program.
 *
 * The Rust runtime owns the graph, the property columns, the worklists and the threads; generated
 * kernels see them through a grail_ctx and keep per-thread state in a grail_thread. Property
 * columns are plain arrays: atomic operations use the compiler's __atomic builtins on them. */
#include <math.h>
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

/* Keep in sync with `GrailCtx` in crates/grail-runtime/src/cpu/ffi.rs (its #[repr(C)] mirror). */
typedef struct grail_ctx {
    uint64_t num_nodes;
    uint64_t num_edges;
    const uint64_t *out_offsets;
    const uint32_t *out_targets;
    /* The reverse CSR (in-edges), or NULL when the program never looks at in-edges. */
    const uint64_t *in_offsets;
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
    /* Union-find parents: set s, node u at sets[s * num_nodes + u]. */
    uint32_t *sets;
} grail_ctx;

typedef struct grail_thread {
    grail_buf pushes;
    grail_buf retries;
    /* This thread's partial reduction; the runtime starts it at the operator's identity. */
    grail_value acc;
} grail_thread;

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

/* Locks: a try-lock per node. */
static inline bool grail_trylock(const grail_ctx *ctx, uint32_t u) {
    uint32_t free_word = 0;
    return __atomic_compare_exchange_n(&ctx->locks[u], &free_word, 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void grail_unlock(const grail_ctx *ctx, uint32_t u) {
    __atomic_store_n(&ctx->locks[u], 0u, __ATOMIC_RELEASE);
}

/* Exclusive: try once to lock every element; on any failure release what was taken. Elements
 * are locked in increasing id order (duplicates once), so two threads never each wait on the
 * other's lock. */
static inline bool grail_lock_all(const grail_ctx *ctx, uint32_t *elements, int count) {
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && elements[j - 1] > elements[j]; j--) {
            uint32_t t = elements[j];
            elements[j] = elements[j - 1];
            elements[j - 1] = t;
        }
    for (int i = 0; i < count; i++) {
        if (i > 0 && elements[i] == elements[i - 1]) continue;
        if (!grail_trylock(ctx, elements[i])) {
            for (int j = i - 1; j >= 0; j--)
                if (j == 0 || elements[j] != elements[j - 1]) grail_unlock(ctx, elements[j]);
            return false;
        }
    }
    return true;
}

static inline void grail_unlock_all(const grail_ctx *ctx, const uint32_t *elements, int count) {
    for (int i = 0; i < count; i++)
        if (i == 0 || elements[i] != elements[i - 1]) grail_unlock(ctx, elements[i]);
}

/* Single: the first thread to claim u in this invocation wins. */
static inline bool grail_claim(const grail_ctx *ctx, uint32_t u) {
    uint32_t seen = __atomic_load_n(&ctx->claims[u], __ATOMIC_RELAXED);
    while (seen != ctx->invocation)
        if (__atomic_compare_exchange_n(&ctx->claims[u], &seen, ctx->invocation, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return true;
    return false;
}

/* Union-find with path halving; the smaller id becomes the root, so roots are deterministic. */
static inline uint32_t grail_find(const grail_ctx *ctx, uint32_t set, uint32_t u) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->num_nodes;
    uint32_t p = __atomic_load_n(&parent[u], __ATOMIC_RELAXED);
    while (p != u) {
        uint32_t gp = __atomic_load_n(&parent[p], __ATOMIC_RELAXED);
        if (gp != p) __atomic_compare_exchange_n(&parent[u], &p, gp, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        u = p;
        p = __atomic_load_n(&parent[u], __ATOMIC_RELAXED);
    }
    return u;
}

static inline bool grail_union(const grail_ctx *ctx, uint32_t set, uint32_t a, uint32_t b) {
    uint32_t *parent = ctx->sets + (uint64_t)set * ctx->num_nodes;
    for (;;) {
        a = grail_find(ctx, set, a);
        b = grail_find(ctx, set, b);
        if (a == b) return false;
        uint32_t hi = a > b ? a : b, lo = a > b ? b : a;
        uint32_t expected = hi;
        if (__atomic_compare_exchange_n(&parent[hi], &expected, lo, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return true;
    }
}
