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
//! - `void grail_buf_free(grail_buf *)` frees a thread's buffers.
//!
//! The graph arrays a program needs beyond the out-CSR (the reverse CSR, `edge_sources`,
//! `in_edge_ids`) are set by the runtime only when [`grail_ir::analysis`] says the program uses
//! them; `grail_ctx` has a `#[repr(C)]` mirror in `grail-runtime` (`cpu/ffi.rs`).
//!
//! Arithmetic wraps (the program is compiled with `-fwrapv`); every integer result is cast back to
//! its type so C's integer promotions never show.

use std::fmt::Write;

use grail_ir::*;

use crate::CodegenError;
use crate::printer::{
    self, Emitter, Items, Target, ThreadUse, c_type, element_field, from_value, leaves, store_leaves,
};

/// The runtime header every generated C program starts with.
pub const CPU_HEADER: &str = include_str!("grail_cpu.h");

/// Emits the C program for a valid module.
pub fn emit_c(module: &Module) -> Result<String, CodegenError> {
    printer::emit(module, &C)
}

/// The C11 target of the printer.
struct C;

impl Target for C {
    fn prelude(&self) -> String {
        format!("{CPU_HEADER}{}\n", printer::value_helpers("static inline"))
    }

    fn function_qualifier(&self) -> &'static str {
        "static"
    }

    fn add_qualifier(&self) -> &'static str {
        "static inline"
    }

    fn struct_literal(&self, ty: &str, fields: &[String]) -> String {
        format!("(({ty}){{{}}})", fields.join(", "))
    }

    /// `uint32_t grail_c<c>_add_host(ctx, const grail_value *)` appends an element given as its
    /// flattened fields and returns its handle (UINT32_MAX when the collection could not grow),
    /// `void grail_c<c>_get_host(ctx, uint32_t, grail_value *)` reads one back, and
    /// `void grail_c<c>_clear_claims(grail_coll *)` zeroes its claim words.
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
        writeln!(
            out,
            "void grail_c{c}_clear_claims(grail_coll *coll) {{ grail_coll_clear_words(coll, GRAIL_C{c}_CLAIMS); }}"
        )
        .unwrap();
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
        let items = e.capture(|e| {
            for (open, item) in &loops {
                if let Some(open) = open {
                    e.line(1, open);
                }
                e.line(depth, "for (uint64_t i = begin; i < end; i++) {");
                e.item(forall, item, depth + 1)?;
                e.line(depth, "}");
            }
            if nested {
                e.line(1, "}");
            }
            Ok(())
        })?;
        e.out = size_fn;
        e.line(
            0,
            &format!(
                "void {name}(const grail_ctx *ctx, const grail_value *args, uint64_t begin, uint64_t end, grail_thread *t) {{"
            ),
        );
        e.prologue();
        e.line(1, "(void)t;");
        // Per-thread state lives in locals for the whole chunk and is written back at its end,
        // so that stores to property columns never force it to be reloaded from `grail_thread`.
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
        e.out.push_str(&items);
        if pushes {
            e.line(1, "t->pushes = pushes_;");
        }
        if retries {
            e.line(1, "t->retries = retries_;");
        }
        if let Some((_, _, _, member)) = &accumulator {
            e.line(1, &format!("t->acc.{member} = acc_;"));
        }
        e.line(0, "}");
        Ok(e.out)
    }

    fn push(&self, e: &mut Emitter<'_, Self>, _site: PushSite, value: &str, depth: usize) {
        e.line(depth, &format!("grail_buf_append(&pushes_, {value});"));
    }

    fn retry(&self, e: &mut Emitter<'_, Self>, value: &str, depth: usize) {
        e.line(depth, &format!("grail_buf_append(&retries_, {value});"));
    }
}
