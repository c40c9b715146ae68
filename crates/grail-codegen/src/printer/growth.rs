//! Graphs that kernels change (`G.add_edge`, `G.remove_edge`; `grail_ir::GraphGrowth`): the
//! helpers every target declares, and what the printer emits wherever a program looks at the
//! graph. The input CSR never changes; an added edge is an element of the hidden collection
//! `added edges` (edge id `num_edges + h` is element `h`), each node's added out-edges form a
//! list through the elements' `next` fields, newest first, and a removed edge is marked.
//!
//! Memory order: an adding thread writes the element's fields, then a release fence, then
//! swaps the list head; readers load heads and links around the GPU's non-coherent L1
//! (`volatile`), so a list is never seen before its links are written. Loops of the invocation
//! that adds an edge may or may not visit it; later invocations always do.

use std::fmt::Write;

use grail_ir::{Adjacency, Block, Expr, GraphGrowth, Module, PropertyId};

use super::{Emitter, Target, c_type};
use crate::CodegenError;

/// The helpers of a program whose kernels change the graph, after its collections' support.
pub(crate) fn support<T: Target>(target: &T, out: &mut String, module: &Module, growth: &GraphGrowth) {
    let q = target.add_qualifier();
    let c = growth.added.0;
    let first = growth.first_added.0;
    let change = growth.degree_change.0;
    let element = module.collections[growth.added.index()].element.0;
    let field = |f: u32| format!("GRAIL_C{c}_F{f}");
    let (src, dst, next) = (field(GraphGrowth::SRC), field(GraphGrowth::DST), field(GraphGrowth::NEXT));
    writeln!(
        out,
        "/* The graph's changes: edge num_edges + h is element h of `added edges` (collection {c}). */\n\
         {q} uint32_t grail_added_u32(const grail_ctx *ctx, uint64_t field, uint64_t h) {{\n    \
             return *(volatile uint32_t *)grail_elem(&ctx->colls[{c}], field, 4, h);\n}}\n\
         {q} void *grail_edge_slot(const grail_ctx *ctx, void *column, uint64_t size, uint64_t field, uint64_t e) {{\n    \
             if (e < ctx->num_edges) return (char *)column + e * size;\n    \
             return grail_elem(&ctx->colls[{c}], field, size, e - ctx->num_edges);\n}}\n\
         {q} uint32_t grail_edge_dst(const grail_ctx *ctx, uint64_t e) {{\n    \
             return e < ctx->num_edges ? ctx->out_targets[e] : grail_added_u32(ctx, {dst}, e - ctx->num_edges);\n}}\n\
         {q} uint32_t grail_edge_src(const grail_ctx *ctx, uint64_t e) {{\n    \
             return e < ctx->num_edges ? ctx->edge_sources[e] : grail_added_u32(ctx, {src}, e - ctx->num_edges);\n}}\n\
         {q} uint32_t grail_first_added(const grail_ctx *ctx, uint32_t n) {{\n    \
             return *(volatile uint32_t *)&((uint32_t *)ctx->props[{first}])[n];\n}}\n\
         {q} uint32_t grail_next_added(const grail_ctx *ctx, uint32_t h) {{\n    \
             return grail_added_u32(ctx, {next}, h);\n}}\n\
         {q} uint32_t grail_degree_change(const grail_ctx *ctx, uint32_t n) {{\n    \
             return *(volatile uint32_t *)&((uint32_t *)ctx->props[{change}])[n];\n}}"
    )
    .unwrap();
    let input_removed = match growth.removed {
        Some(removed) => format!("*(volatile uint32_t *)&((uint32_t *)ctx->props[{}])[e] != 0u", removed.0),
        None => "false".to_string(),
    };
    writeln!(
        out,
        "{q} bool grail_input_edge_removed(const grail_ctx *ctx, uint64_t e) {{\n    \
             (void)ctx; (void)e;\n    return {input_removed};\n}}\n\
         {q} bool grail_edge_present(const grail_ctx *ctx, uint64_t e) {{\n    \
             if (e < ctx->num_edges) return !grail_input_edge_removed(ctx, e);\n    \
             return grail_coll_has(&ctx->colls[{c}], GRAIL_C{c}_GONE, (uint32_t)(e - ctx->num_edges));\n}}"
    )
    .unwrap();
    // Adding: the element's fields, then its link to the node's list, then the list head.
    let weight = growth
        .edge_fields
        .iter()
        .find(|(p, _)| module.properties[p.index()].is_weight)
        .map(|(p, f)| (c_type(module.properties[p.index()].ty), *f));
    let weight_param = weight.as_ref().map_or(String::new(), |(t, _)| format!(", {t} w"));
    let weight_store = weight.as_ref().map_or(String::new(), |(_, f)| format!("    v_.f{f} = w;\n"));
    writeln!(
        out,
        "{q} uint64_t grail_edge_add(const grail_ctx *ctx, uint32_t u, uint32_t v{weight_param}) {{\n    \
             grail_s{element} v_;\n    memset(&v_, 0, sizeof v_);\n    v_.f0 = u;\n    v_.f1 = v;\n{weight_store}    \
             const uint32_t h = grail_c{c}_add(ctx, v_);\n    \
             /* A failed add returned the sink element: the run stops with the collection's error. */\n    \
             if (*(volatile uint32_t *)&ctx->colls[{c}].failed != 0u) return ctx->num_edges + h;\n    \
             uint32_t *const first = (uint32_t *)ctx->props[{first}];\n    \
             for (;;) {{\n        \
                 const uint32_t head = *(volatile uint32_t *)&first[u];\n        \
                 *(volatile uint32_t *)grail_elem(&ctx->colls[{c}], {next}, 4, h) = head;\n        \
                 grail_fence_release();\n        \
                 if (grail_atomic_cas_u32(&first[u], head, h + 1u)) break;\n    \
             }}\n    \
             grail_atomic_add_u32(&((uint32_t *)ctx->props[{change}])[u], 1u);\n    \
             return ctx->num_edges + h;\n}}"
    )
    .unwrap();
    if let Some(removed) = growth.removed {
        writeln!(
            out,
            "{q} bool grail_edge_remove(const grail_ctx *ctx, uint64_t e) {{\n    \
                 grail_coll *const coll = &ctx->colls[{c}];\n    uint32_t src;\n    \
                 if (e < ctx->num_edges) {{\n        \
                     if (!grail_atomic_cas_u32(&((uint32_t *)ctx->props[{}])[e], 0u, 1u)) return false;\n        \
                     /* Counted with the added edges' removals: num_edges + live(added) edges are present. */\n        \
                     grail_atomic_add_u64(&coll->removed, 1u);\n        \
                     src = ctx->edge_sources[e];\n    \
                 }} else {{\n        \
                     if (!grail_coll_remove(coll, GRAIL_C{c}_GONE, (uint32_t)(e - ctx->num_edges))) return false;\n        \
                     src = grail_added_u32(ctx, {src}, e - ctx->num_edges);\n    \
                 }}\n    \
                 grail_atomic_sub_u32(&((uint32_t *)ctx->props[{change}])[src], 1u);\n    \
                 return true;\n}}",
            removed.0
        )
        .unwrap();
    }
}

impl<T: Target> Emitter<'_, T> {
    /// Edge property `property` of edge `element` as an lvalue, when added edges hold it too.
    pub(crate) fn growth_edge_place(&self, property: PropertyId, element: &str) -> Option<String> {
        let growth = self.module.growth.as_ref()?;
        let field = growth.field_of(property)?;
        let t = c_type(self.module.properties[property.index()].ty);
        Some(format!(
            "(*({t} *)grail_edge_slot(ctx, P{}, sizeof({t}), GRAIL_C{}_F{field}, {element}))",
            property.0, growth.added.0
        ))
    }

    /// The added part of a loop over node `n_`'s out-edges or out-neighbours (after the input
    /// edges' loop, in the same scope): the node's list, newest first, removed edges skipped.
    pub(crate) fn added_adjacency_loop(
        &mut self,
        var: &str,
        adjacency: Adjacency,
        body: &Block,
        depth: usize,
    ) -> Result<(), CodegenError> {
        let Some(growth) = &self.module.growth else { return Ok(()) };
        if adjacency.uses_reverse() {
            return Err(CodegenError::Internal("in-edges of a graph that kernels change".into()));
        }
        let c = growth.added.0;
        let removable = growth.removed.is_some();
        let item = match adjacency {
            Adjacency::OutEdges => format!("{} + (uint64_t)a_", self.ctx("num_edges")),
            _ => format!("grail_added_u32(ctx, GRAIL_C{c}_F{}, a_)", GraphGrowth::DST),
        };
        self.line(
            depth,
            "for (uint32_t h_ = grail_first_added(ctx, n_); h_ != 0u; h_ = grail_next_added(ctx, h_ - 1u)) {",
        );
        self.line(depth + 1, "const uint32_t a_ = h_ - 1u;");
        if removable {
            let colls = self.ctx("colls");
            self.line(depth + 1, &format!("if (!grail_coll_has(&{colls}[{c}], GRAIL_C{c}_GONE, a_)) continue;"));
        }
        self.line(depth + 1, &format!("{var} = {item};"));
        self.looped(body, depth + 1)?;
        self.line(depth, "}");
        Ok(())
    }

    /// The check that skips a removed input edge at CSR position `k`, if edges can be removed.
    pub(crate) fn removed_input_edge_skip(&self) -> Option<&'static str> {
        self.module.growth.as_ref().and_then(|g| g.removed).map(|_| "if (grail_input_edge_removed(ctx, k)) continue;")
    }

    /// A call of the growth helpers for `G.add_edge` or `G.remove_edge`.
    pub(crate) fn edge_change(
        &self,
        add: Option<(&Expr, &Expr, Option<&Expr>)>,
        removed: Option<&Expr>,
    ) -> Result<String, CodegenError> {
        self.note_call();
        if let Some((src, dst, weight)) = add {
            let mut args = vec![self.expr(src)?, self.expr(dst)?];
            if let Some(weight) = weight {
                args.push(self.expr(weight)?);
            }
            return Ok(format!("grail_edge_add(ctx, {})", args.join(", ")));
        }
        let edge = removed.ok_or_else(|| CodegenError::Internal("an edge change with no edge".into()))?;
        Ok(format!("grail_edge_remove(ctx, {})", self.expr(edge)?))
    }
}
