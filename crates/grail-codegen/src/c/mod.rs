//! The C11 target: kernels and functions of a module as one C translation unit.
//!
//! The host function `main` is not emitted: the runtime executes orchestration itself and calls
//! into the generated code once per chunk of a kernel phase. The interface (declared in
//! `grail_cpu.h`, which is pasted at the top of every program):
//!
//! - every kernel is a sequence of phases (its top-level `forall` loops), numbered from 0; symbols
//!   name the kernel by its index `k` in the module (names are in comments), so no program name
//!   can clash with another symbol;
//! - `uint64_t grail_k<k>_<p>_size(const grail_ctx *ctx, const grail_value *args)` returns the
//!   number of items of phase `p`;
//! - `void grail_k<k>_<p>(const grail_ctx *ctx, const grail_value *args, uint64_t begin,
//!   uint64_t end, grail_thread *t)` runs items `begin..end` of phase `p`; pushes and retries go to
//!   `t`'s buffers and reductions into `t->acc`, so threads never contend on a shared worklist;
//! - `args` holds the kernel's parameters in order, one `grail_value` each;
//! - `void grail_buf_free(grail_buf *)` and `void grail_wbuf_free(grail_wbuf *)` free a thread's
//!   buffers;
//! - for a phase with a split site ([`split_site`]: the nested loop the nested-parallelism pass
//!   scheduled, when nothing follows it in the item), `grail_k<k>_<p>_hubs` (the phase
//!   function's signature) runs an adjacency of at least `t->split_min` iterations (a hub's)
//!   not at once but records it in `t->deferred`: its range of CSR positions and the values of
//!   its closure ([`SplitSite::stride`] words a record), and `void grail_k<k>_<p>_split(const
//!   grail_ctx *ctx, const grail_value *args, const uint64_t *record, uint64_t begin, uint64_t
//!   end, grail_thread *t)` runs the positions `begin..end` of a recorded loop; the runtime
//!   calls `_hubs` instead of the plain function when some node has that many, and shares the
//!   recorded loops' positions among the threads in edge-balanced chunks once the phase's
//!   items are done.
//!
//! The graph arrays a program needs beyond the out-CSR (the reverse CSR, `edge_sources`,
//! `in_edge_ids`) are set by the runtime only when [`grail_ir::analysis`] says the program uses
//! them; `grail_ctx` has a `#[repr(C)]` mirror in `grail-runtime` (`cpu/ffi.rs`).
//!
//! Arithmetic wraps (the program is compiled with `-fwrapv`); every integer result is cast back to
//! its type so C's integer promotions never show.

use std::cell::RefCell;
use std::fmt::Write;

use grail_ir::opt::nested;
use grail_ir::*;

use crate::CodegenError;
use crate::printer::{
    self, Emitter, Items, Target, ThreadUse, c_type, element_field, from_value, leaves, store_leaves,
};

/// The runtime header every generated C program starts with.
pub const CPU_HEADER: &str = include_str!("grail_cpu.h");

/// Emits the C program for a valid module.
pub fn emit_c(module: &Module) -> Result<String, CodegenError> {
    printer::emit(module, &C { split: RefCell::new(None) })
}

/// A kernel phase's nested loop whose large instances (hubs) the CPU splits across threads: the
/// loop the nested-parallelism pass scheduled ([`grail_ir::opt::nested::site`]), provided it is
/// the last thing its item does (no statement of the item's body follows it), so that the item
/// is complete once the loop's iterations are, whichever threads run them.
pub struct SplitSite<'k> {
    /// The nested loop.
    pub inner: &'k ForAll,
    /// Whether it walks the reverse CSR (in-edges or in-neighbours).
    pub reverse: bool,
    /// The locals its iterations read from the item (scalars), saved with each record.
    pub closure: Vec<LocalId>,
}

impl SplitSite<'_> {
    /// The `uint64_t` words of one record: the loop's first and past-the-end CSR positions, then
    /// one word per closure value.
    pub fn stride(&self) -> usize {
        2 + self.closure.len()
    }
}

/// The split site of a kernel's phase (one of its top-level `forall`s), if it has one.
pub fn split_site<'k>(kernel: &'k Kernel, phase: &'k ForAll) -> Option<SplitSite<'k>> {
    let (top, site) = nested::site(phase)?;
    // A scheduled fold (a `for` that sums into a local) stays in its item's thread.
    let Stmt::ForAll(inner) = site else { return None };
    let Space::Adjacent(adjacency, _) = inner.space else { return None };
    if top + 1 != phase.body.len() {
        return None;
    }
    Some(SplitSite { inner, reverse: adjacency.uses_reverse(), closure: nested::closure(kernel, site) })
}

/// The C11 target of the printer.
struct C {
    /// While a phase with a split site is emitted: the site's loop and its closure.
    split: RefCell<Option<(*const ForAll, Vec<LocalId>)>>,
}

impl Target for C {
    fn prelude(&self) -> String {
        format!(
            "{CPU_HEADER}{}\n#define GRAIL_GEOM static inline\n#define GRAIL_GEOM_SLOW static __attribute__((noinline, unused))\n{}",
            printer::value_helpers("static inline"),
            crate::GEOMETRY
        )
    }

    fn function_qualifier(&self) -> &'static str {
        "static"
    }

    fn add_qualifier(&self) -> &'static str {
        "static inline"
    }

    fn per_thread_slots(&self) -> bool {
        true
    }

    fn struct_literal(&self, ty: &str, fields: &[String]) -> String {
        format!("(({ty}){{{}}})", fields.join(", "))
    }

    /// `uint32_t grail_c<c>_add_host(ctx, const grail_value *)` appends an element given as its
    /// flattened fields and returns its handle (UINT32_MAX when the collection could not grow),
    /// `uint32_t grail_c<c>_grow_host(ctx, uint64_t count, uint64_t *base)` reserves `count`
    /// slots at once (0 when the collection could not grow) and `void grail_c<c>_put_host(ctx,
    /// uint64_t, const grail_value *)` writes one of them, from any thread (bulk filling),
    /// `void grail_c<c>_get_host(ctx, uint32_t, grail_value *)` reads one back, and
    /// `void grail_c<c>_clear_claims(grail_coll *)` zeroes its claim words, and `uint64_t
    /// grail_c<c>_seg_bytes_host(void)` gives the size of its segment 0.
    fn collection_entry_points(&self, out: &mut String, module: &Module, c: usize, collection: &CollectionDecl) {
        let element = Type::Struct(collection.element);
        let fields = &module.structs[collection.element.index()].fields;
        let elem_ty = c_type(element);
        let mut flat = Vec::new();
        leaves(module, element, "v".to_string(), &mut flat);
        writeln!(out, "uint32_t grail_c{c}_add_host(const grail_ctx *ctx, const grail_value *flat) {{").unwrap();
        writeln!(out, "    {elem_ty} v;\n    memset(&v, 0, sizeof v);").unwrap();
        for (k, (path, ty)) in flat.iter().enumerate() {
            writeln!(out, "    {path} = {};", from_value(*ty, &format!("flat[{k}]"))).unwrap();
        }
        writeln!(out, "    return grail_c{c}_add(ctx, v);\n}}").unwrap();
        // Bulk filling (input collections): grow by `count` slots at once, their segments made,
        // then write each slot from any thread.
        writeln!(
            out,
            "uint32_t grail_c{c}_grow_host(const grail_ctx *ctx, uint64_t count, uint64_t *base) {{\n    \
             grail_coll *coll = &ctx->colls[{c}];\n    \
             uint64_t first = __atomic_fetch_add(&coll->len, count, __ATOMIC_RELAXED);\n    \
             if (first + count > GRAIL_COLL_MAX) {{ __atomic_store_n(&coll->failed, 2u, __ATOMIC_RELAXED); return 0; }}\n    \
             for (uint64_t i = first; i < first + count; ) {{\n        \
             if (!grail_coll_segment(coll, GRAIL_C{c}_BYTES, i)) return 0;\n        \
             uint64_t k;\n        \
             unsigned s = grail_segment(i, &k);\n        \
             i += ((uint64_t)1 << (s + GRAIL_SEG_LOG)) - k;\n    \
             }}\n    \
             *base = first;\n    \
             return 1;\n}}"
        )
        .unwrap();
        writeln!(out, "void grail_c{c}_put_host(const grail_ctx *ctx, uint64_t i, const grail_value *flat) {{")
            .unwrap();
        writeln!(out, "    grail_coll *coll = &ctx->colls[{c}];\n    {elem_ty} v;\n    memset(&v, 0, sizeof v);")
            .unwrap();
        for (k, (path, ty)) in flat.iter().enumerate() {
            writeln!(out, "    {path} = {};", from_value(*ty, &format!("flat[{k}]"))).unwrap();
        }
        for (f, (_, ty)) in fields.iter().enumerate() {
            writeln!(out, "    {} = v.f{f};", element_field(c, f, *ty)).unwrap();
        }
        writeln!(out, "}}").unwrap();
        writeln!(
            out,
            "void grail_c{c}_clear_claims(grail_coll *coll) {{ grail_coll_clear_words(coll, GRAIL_C{c}_CLAIMS); }}"
        )
        .unwrap();
        // The bytes of segment 0 (segment s holds that many shifted left by s): the runtime
        // clears a segment it keeps for the next run.
        writeln!(out, "uint64_t grail_c{c}_seg_bytes_host(void) {{ return GRAIL_C{c}_BYTES; }}").unwrap();
        writeln!(out, "void grail_c{c}_get_host(const grail_ctx *ctx, uint32_t index, grail_value *flat) {{").unwrap();
        writeln!(
            out,
            "    const grail_coll *coll = &ctx->colls[{c}];\n    const uint64_t i = index;\n    {elem_ty} v;"
        )
        .unwrap();
        for (f, (_, ty)) in fields.iter().enumerate() {
            writeln!(out, "    v.f{f} = {};", element_field(c, f, *ty)).unwrap();
        }
        store_leaves(out, "    ", &flat, "");
        // One slot more: whether the element was removed.
        writeln!(out, "    flat[{}].u = !grail_coll_has(coll, GRAIL_C{c}_GONE, index);", flat.len()).unwrap();
        writeln!(out, "}}").unwrap();
    }

    fn phase(
        &self,
        mut e: Emitter<'_, Self>,
        kernel: usize,
        phase: usize,
        forall: &ForAll,
    ) -> Result<String, CodegenError> {
        let name = format!("grail_k{kernel}_{phase}");
        let kernel_name = e.kernel.map_or("", |k| k.name.as_str());
        let site = e.kernel.and_then(|k| split_site(k, forall));
        *self.split.borrow_mut() = None;
        // The size function.
        let size = e.phase_size(forall)?;
        e.line(0, &format!("/* kernel `{kernel_name}`, phase {phase} */"));
        e.line(0, &format!("uint64_t {name}_size(const grail_ctx *ctx, const grail_value *args) {{"));
        e.prologue();
        e.line(1, &format!("return {size};"));
        e.line(0, "}");
        let size_fn = std::mem::take(&mut e.out);
        e.reset_uses();
        // The item loop: over all nodes, one loop for the nodes and one for retried items.
        let loops = match e.phase_items(forall)? {
            Items::Each(item) => vec![(None, item)],
            Items::AllNodes { retrying, item } => {
                vec![(Some(format!("if ({retrying}) {{")), item), (Some("} else {".into()), "(uint32_t)i".into())]
            }
        };
        let nested = loops.len() > 1;
        let depth = 1 + nested as usize;
        let item_loops = |e: &mut Emitter<'_, Self>| {
            e.capture(|e| {
                for (open, item) in &loops {
                    if let Some(open) = open {
                        e.line(1, open);
                    }
                    e.line(depth, "for (uint64_t i = begin; i < end; i++) {");
                    e.item_chain(forall, item, depth + 1)?;
                    e.line(depth, "}");
                }
                if nested {
                    e.line(1, "}");
                }
                Ok(())
            })
        };
        // Every phase's function runs its nested loops in the item's thread; a phase with a
        // split site has a second one, `_hubs`, that defers the large ones, which the runtime
        // calls only when some node is large enough to be deferred.
        let items = item_loops(&mut e)?;
        let hub_items = match &site {
            Some(site) => {
                *self.split.borrow_mut() = Some((site.inner as *const ForAll, site.closure.clone()));
                let hub_items = item_loops(&mut e);
                *self.split.borrow_mut() = None;
                Some(hub_items?)
            }
            None => None,
        };
        e.out = size_fn;
        let accumulator = if e.uses.acc { Some(e.accumulator()?) } else { None };
        phase_function(&mut e, &name, &items, false, &accumulator);
        if let (Some(site), Some(hub_items)) = (site, hub_items) {
            phase_function(&mut e, &format!("{name}_hubs"), &hub_items, true, &accumulator);
            split_function(&mut e, &name, &site)?;
        }
        Ok(e.out)
    }

    /// The scheduled nested loop of a phase with a split site: a hub's loop is recorded for the
    /// threads to share once the phase's items are done, a smaller one runs here.
    fn nested_forall(&self, e: &mut Emitter<'_, Self>, forall: &ForAll, depth: usize) -> Result<(), CodegenError> {
        let closure = match &*self.split.borrow() {
            Some((site, closure)) if std::ptr::eq(*site, forall) => closure.clone(),
            _ => return printer::serial_nested_forall(self, e, forall, depth),
        };
        let stride = 2 + closure.len();
        let Space::Adjacent(adjacency, node) = &forall.space else {
            return Err(CodegenError::Internal("a split loop that is not over adjacency".into()));
        };
        let node = e.expr(node)?;
        let (row, _) = e.adjacency(*adjacency);
        // One loop, as without a split site; a hub's is recorded and left empty here (when the
        // record cannot be made, `failed` stops the run).
        e.line(depth, "{");
        e.line(depth + 1, &format!("const uint32_t n_ = {node};"));
        e.line(depth + 1, &format!("const uint64_t k0_ = {};", row.begin("n_")));
        e.line(depth + 1, &format!("uint64_t k1_ = {};", row.end("n_")));
        e.line(depth + 1, "if (__builtin_expect(k1_ - k0_ >= split_min_, 0)) {");
        e.line(depth + 2, &format!("uint64_t *const r_ = grail_wbuf_reserve(&t->deferred, {stride});"));
        e.line(depth + 2, "if (r_) {");
        e.line(depth + 3, "r_[0] = k0_;");
        e.line(depth + 3, "r_[1] = k1_;");
        for (j, local) in closure.iter().enumerate() {
            let name = e.local(*local);
            e.line(depth + 3, &format!("memcpy(&r_[{}], &{name}, sizeof {name});", 2 + j));
        }
        e.line(depth + 2, "}");
        e.line(depth + 2, "k1_ = k0_;");
        e.line(depth + 1, "}");
        split_loop(e, forall, "k0_", "k1_", depth + 1)?;
        e.line(depth, "}");
        Ok(())
    }

    fn merge_entry_point(&self, out: &mut String, index: usize, body: &str) {
        writeln!(
            out,
            "/* update function {index}: the runtime merges a changed ghost into its owner with it */\n\
             uint64_t grail_merge_custom_{index}(const grail_ctx *ctx, uint64_t current, uint64_t incoming) {{\n\
             {body}    return w_;\n}}"
        )
        .unwrap();
    }

    fn push(&self, e: &mut Emitter<'_, Self>, _site: PushSite, value: &str, depth: usize) {
        e.line(depth, &format!("grail_buf_append(&pushes_, {value});"));
    }

    fn retry(&self, e: &mut Emitter<'_, Self>, value: &str, depth: usize) {
        e.line(depth, &format!("grail_buf_append(&retries_, {value});"));
    }

    /// Through `grail_cpu.h`'s helpers, which stop the kernel on a zero divisor or the minimum
    /// over -1 whatever the C compiler folds (a plain `/` relies on the hardware's trap, which a
    /// division the compiler folded never reaches).
    fn divide(&self, op: BinaryOp, ty: Type, l: &str, r: &str) -> Result<String, CodegenError> {
        let name = if op == BinaryOp::Div { "div" } else { "rem" };
        Ok(format!("grail_{name}_{}({l}, {r})", printer::type_suffix(ty)?))
    }
}

/// The iterations `begin..end` (C expressions of CSR positions) of a split site's loop.
fn split_loop(
    e: &mut Emitter<'_, C>,
    forall: &ForAll,
    begin: &str,
    end: &str,
    depth: usize,
) -> Result<(), CodegenError> {
    let Space::Adjacent(adjacency, _) = &forall.space else {
        return Err(CodegenError::Internal("a split loop that is not over adjacency".into()));
    };
    let var = e.local(forall.var);
    let item = e.adjacency_item(*adjacency);
    e.line(depth, &format!("for (uint64_t k = {begin}; k < {end}; k++) {{"));
    e.line(depth + 1, &format!("{var} = {item};"));
    e.looped(&printer::filtered_body(forall), depth + 1)?;
    e.line(depth, "}");
    Ok(())
}

/// A phase's item function: the prologue, the per-thread state in locals (for the whole chunk,
/// written back at its end, so that stores to property columns never force it to be reloaded
/// from `grail_thread`), and the item loops; `hubs`: the variant that defers large loops.
fn phase_function(
    e: &mut Emitter<'_, C>,
    name: &str,
    items: &str,
    hubs: bool,
    accumulator: &Option<(ReduceOp, Type, String, &'static str)>,
) {
    e.line(
        0,
        &format!(
            "void {name}(const grail_ctx *ctx, const grail_value *args, uint64_t begin, uint64_t end, grail_thread *t) {{"
        ),
    );
    e.prologue();
    e.line(1, "(void)t;");
    let ThreadUse { pushes, retries, .. } = e.uses;
    if pushes {
        e.line(1, "grail_buf pushes_ = t->pushes;");
    }
    if retries {
        e.line(1, "grail_buf retries_ = t->retries;");
    }
    if let Some((_, _, ty, member)) = accumulator {
        e.line(1, &format!("{ty} acc_ = ({ty})t->acc.{member};"));
    }
    if hubs {
        e.line(1, "const uint64_t split_min_ = t->split_min;");
    }
    e.out.push_str(items);
    thread_epilogue(e, pushes, retries, accumulator);
    e.line(0, "}");
}

/// Writes back the per-thread state a function kept in locals.
fn thread_epilogue(
    e: &mut Emitter<'_, C>,
    pushes: bool,
    retries: bool,
    accumulator: &Option<(ReduceOp, Type, String, &'static str)>,
) {
    if pushes {
        e.line(1, "t->pushes = pushes_;");
    }
    if retries {
        e.line(1, "t->retries = retries_;");
    }
    if let Some((_, _, _, member)) = accumulator {
        e.line(1, &format!("t->acc.{member} = acc_;"));
    }
}

/// `grail_k<k>_<p>_split`: runs positions `begin..end` of a recorded loop, with its closure
/// restored from the record.
fn split_function(e: &mut Emitter<'_, C>, name: &str, site: &SplitSite<'_>) -> Result<(), CodegenError> {
    let done = std::mem::take(&mut e.out);
    e.reset_uses();
    e.uses = ThreadUse::default();
    let body = e.capture(|e| split_loop(e, site.inner, "begin", "end", 1))?;
    e.line(
        0,
        &format!(
            "void {name}_split(const grail_ctx *ctx, const grail_value *args, const uint64_t *r_, uint64_t begin, uint64_t end, grail_thread *t) {{"
        ),
    );
    e.prologue();
    e.line(1, "(void)t;");
    let ThreadUse { pushes, retries, acc } = e.uses;
    if pushes {
        e.line(1, "grail_buf pushes_ = t->pushes;");
    }
    if retries {
        e.line(1, "grail_buf retries_ = t->retries;");
    }
    let accumulator = if acc { Some(e.accumulator()?) } else { None };
    if let Some((_, _, ty, member)) = &accumulator {
        e.line(1, &format!("{ty} acc_ = ({ty})t->acc.{member};"));
    }
    for (j, local) in site.closure.iter().enumerate() {
        let name = e.local(*local);
        e.line(1, &format!("memcpy(&{name}, &r_[{}], sizeof {name});", 2 + j));
    }
    e.out.push_str(&body);
    thread_epilogue(e, pushes, retries, &accumulator);
    e.line(0, "}");
    e.out = format!("{done}{}", e.out);
    Ok(())
}
