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

use grail_ir::{Adjacency, Block, Expr, GraphGrowth, Module, PropertyId, Space, Stmt};

use super::{Emitter, Target, c_type};
use crate::CodegenError;

/// The helpers of a program whose kernels change the graph, after its collections' support.
pub(crate) fn support<T: Target>(target: &T, out: &mut String, module: &Module, growth: &GraphGrowth) {
    let q = target.add_qualifier();
    let c = growth.added.0;
    let element = module.collections[growth.added.index()].element.0;
    let field = |f: u32| format!("GRAIL_C{c}_F{f}");
    let (src, dst, next) = (field(GraphGrowth::SRC), field(GraphGrowth::DST), field(GraphGrowth::NEXT));
    // A node property's place: the input's column, or the added node's field.
    let node_slot = match &growth.nodes {
        Some(nodes) => format!(
            "{q} void *grail_node_slot(const grail_ctx *ctx, void *column, uint64_t size, uint64_t field, uint64_t v) {{\n    \
                 if (v < ctx->num_nodes) return (char *)column + v * size;\n    \
                 return grail_elem(&ctx->colls[{}], field, size, v - ctx->num_nodes);\n}}\n",
            nodes.added.0
        ),
        None => String::new(),
    };
    out.push_str(&node_slot);
    let hidden_slot = |property: grail_ir::PropertyId| match growth.node_field_of(property) {
        Some((nc, f)) => {
            format!("(uint32_t *)grail_node_slot(ctx, ctx->props[{}], 4, GRAIL_C{}_F{f}, n)", property.0, nc.0)
        }
        None => format!("&((uint32_t *)ctx->props[{}])[n]", property.0),
    };
    let (first_slot, change_slot) = (hidden_slot(growth.first_added), hidden_slot(growth.degree_change));
    writeln!(
        out,
        "{q} uint32_t *grail_first_slot(const grail_ctx *ctx, uint32_t n) {{ return {first_slot}; }}\n\
         {q} uint32_t *grail_change_slot(const grail_ctx *ctx, uint32_t n) {{ return {change_slot}; }}"
    )
    .unwrap();
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
             return *(volatile uint32_t *)grail_first_slot(ctx, n);\n}}\n\
         {q} uint32_t grail_next_added(const grail_ctx *ctx, uint32_t h) {{\n    \
             return grail_added_u32(ctx, {next}, h);\n}}\n\
         {q} uint32_t grail_degree_change(const grail_ctx *ctx, uint32_t n) {{\n    \
             return *(volatile uint32_t *)grail_change_slot(ctx, n);\n}}"
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
             uint32_t *const first = grail_first_slot(ctx, u);\n    \
             for (;;) {{\n        \
                 const uint32_t head = *(volatile uint32_t *)first;\n        \
                 *(volatile uint32_t *)grail_elem(&ctx->colls[{c}], {next}, 4, h) = head;\n        \
                 grail_fence_release();\n        \
                 if (grail_atomic_cas_u32(first, head, h + 1u)) break;\n    \
             }}\n    \
             grail_atomic_add_u32(grail_change_slot(ctx, u), 1u);\n    \
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
                 grail_atomic_sub_u32(grail_change_slot(ctx, src), 1u);\n    \
                 return true;\n}}",
            removed.0
        )
        .unwrap();
    }
    if let Some(nodes) = &growth.nodes {
        let nc = nodes.added.0;
        let element = module.collections[nodes.added.index()].element.0;
        let init = match nodes.init {
            Some(_) => {
                format!("{} void grail_init_node(const grail_ctx *ctx, uint32_t v);\n", target.function_qualifier())
            }
            None => String::new(),
        };
        let call_init = if nodes.init.is_some() { "    grail_init_node(ctx, v);\n" } else { "" };
        writeln!(
            out,
            "{init}/* Node num_nodes + h is element h of `added nodes` (collection {nc}); ids stay below 2^32 - 1. */\n\
             {q} uint32_t grail_node_add(const grail_ctx *ctx) {{\n    \
                 grail_s{element} v_;\n    memset(&v_, 0, sizeof v_);\n    \
                 const uint32_t h = grail_c{nc}_add(ctx, v_);\n    \
                 if ((uint64_t)h + ctx->num_nodes >= (uint64_t)UINT32_MAX) grail_atomic_max_u32(&ctx->colls[{nc}].failed, 2u);\n    \
                 const uint32_t v = (uint32_t)(ctx->num_nodes + h);\n    \
                 /* A failed add returned the sink element: the run stops with the collection's error. */\n    \
                 if (*(volatile uint32_t *)&ctx->colls[{nc}].failed != 0u) return v;\n\
             {call_init}    \
                 grail_fence_release();\n    \
                 return v;\n}}\n\
             /* Checked mode: a pushed node is one of the input's or an added one. */\n\
             {q} uint32_t grail_pushed_grown(const grail_ctx *ctx, uint32_t item) {{\n\
             #if defined(GRAIL_CHECKS) && defined(__CUDACC__)\n    \
                 if ((uint64_t)item >= ctx->node_slots + grail_coll_len(&ctx->colls[{nc}])) {{\n        \
                     grail_check_failed(ctx, GRAIL_CHECK_PUSH, item);\n        \
                     return 0u;\n    \
                 }}\n\
             #endif\n    \
                 (void)ctx;\n    return item;\n}}"
        )
        .unwrap();
    }
}

/// The helpers of a program whose kernels remove nodes (`grail_ir::GraphGrowth::node_removed`),
/// after [`support`]: whether a node is removed, and removing one with its out-edges.
pub(crate) fn node_removal_support<T: Target>(target: &T, out: &mut String, growth: &GraphGrowth) {
    let (Some(removed), Some(nodes)) = (growth.node_removed, growth.nodes.as_ref()) else { return };
    let q = target.add_qualifier();
    let nc = nodes.added.0;
    let field = nodes.fields.iter().find(|(p, _)| *p == removed).map(|(_, f)| *f).expect("a node property's field");
    let slot = format!("(uint32_t *)grail_node_slot(ctx, ctx->props[{}], 4, GRAIL_C{nc}_F{field}, n)", removed.0);
    writeln!(
        out,
        "/* Removed nodes: marked in `node removed`, counted in the added nodes' removed count. */\n\
         {q} bool grail_node_removed(const grail_ctx *ctx, uint32_t n) {{\n    \
             return *(volatile uint32_t *){slot} != 0u;\n}}\n\
         {q} bool grail_node_has(const grail_ctx *ctx, uint32_t n) {{\n    \
             if ((uint64_t)n >= ctx->num_nodes + grail_coll_len(&ctx->colls[{nc}])) return false;\n    \
             return !grail_node_removed(ctx, n);\n}}\n\
         {q} bool grail_node_remove(const grail_ctx *ctx, uint32_t n) {{\n    \
             if (!grail_node_has(ctx, n) || !grail_atomic_cas_u32({slot}, 0u, 1u)) return false;\n    \
             grail_atomic_add_u64(&ctx->colls[{nc}].removed, 1u);\n    \
             /* Its out-edges go with it: the input's, then those added. */\n    \
             if ((uint64_t)n < ctx->num_nodes)\n        \
                 for (uint64_t k = ctx->out_offsets[n]; k < ctx->out_ends[n]; k++) grail_edge_remove(ctx, k);\n    \
             for (uint32_t h = grail_first_added(ctx, n); h != 0u; h = grail_next_added(ctx, h - 1u))\n        \
                 grail_edge_remove(ctx, ctx->num_edges + (uint64_t)(h - 1u));\n    \
             return true;\n}}"
    )
    .unwrap();
}

/// `grail_init_node(ctx, v)`: the initialisation kernel's loop over the nodes, for one added
/// node. After the program's functions, which initialisers may call.
pub(crate) fn init_node_function<T: Target>(target: &T, out: &mut String, module: &Module) -> Result<(), CodegenError> {
    let Some(init) = module.growth.as_ref().and_then(|g| g.nodes.as_ref()).and_then(|n| n.init) else {
        return Ok(());
    };
    let kernel = &module.kernels[init.index()];
    let mut e = Emitter::new(target, module, &kernel.body, Some(kernel));
    let mut body = String::new();
    for stmt in &kernel.body.block {
        let Stmt::ForAll(forall) = stmt else { continue };
        if forall.space != Space::AllNodes {
            continue;
        }
        body.push_str(&e.capture(|e| {
            e.line(1, "do {");
            e.item(forall, "v", 2)?;
            e.line(1, "} while (0);");
            Ok(())
        })?);
    }
    e.line(0, &format!("{} void grail_init_node(const grail_ctx *ctx, uint32_t v) {{", target.function_qualifier()));
    e.views();
    e.locals(0);
    e.out.push_str(&body);
    e.line(0, "}");
    out.push_str(&e.out);
    Ok(())
}

impl<T: Target> Emitter<'_, T> {
    /// Property `property` of edge or node `element` as an lvalue, when added edges or nodes
    /// hold it too.
    pub(crate) fn growth_place(&self, property: PropertyId, element: &str) -> Option<String> {
        let growth = self.module.growth.as_ref()?;
        let t = c_type(self.module.properties[property.index()].ty);
        if let Some(field) = growth.field_of(property) {
            return Some(format!(
                "(*({t} *)grail_edge_slot(ctx, P{}, sizeof({t}), GRAIL_C{}_F{field}, {element}))",
                property.0, growth.added.0
            ));
        }
        let (nodes, field) = growth.node_field_of(property)?;
        Some(format!(
            "(*({t} *)grail_node_slot(ctx, P{}, sizeof({t}), GRAIL_C{}_F{field}, {element}))",
            property.0, nodes.0
        ))
    }

    /// Whether the input's columns are not the whole story for `property` (added edges or nodes
    /// hold some of its values): reads go to where each value is, never through a read-only
    /// cache.
    pub(crate) fn grown_property(&self, property: PropertyId) -> bool {
        self.module
            .growth
            .as_ref()
            .is_some_and(|g| g.field_of(property).is_some() || g.node_field_of(property).is_some())
    }

    /// Node `n_`'s range of input edges, `(begin, end)`, as C expressions over its `row`: empty
    /// for an added node.
    pub(crate) fn input_edge_range(&self, row: &super::Row) -> (String, String) {
        let (begin, end) = (row.begin("n_"), row.end("n_"));
        if self.module.growth.as_ref().is_some_and(|g| g.nodes.is_some()) {
            let n = self.ctx("num_nodes");
            (format!("(n_ < {n} ? {begin} : 0)"), format!("(n_ < {n} ? {end} : 0)"))
        } else {
            (begin, end)
        }
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

    /// `G.remove_node(node)`.
    pub(crate) fn node_remove(&self, node: &Expr) -> Result<String, CodegenError> {
        self.note_call();
        Ok(format!("grail_node_remove(ctx, {})", self.expr(node)?))
    }

    /// `G.has_node(node)`: below the node count and not removed (without removals, below the
    /// count: the input's nodes, a part's owned nodes and ghosts, or the added ones too).
    pub(crate) fn node_has(&self, node: &Expr) -> Result<String, CodegenError> {
        let n = self.expr(node)?;
        let growth = self.module.growth.as_ref();
        if growth.is_some_and(|g| g.node_removed.is_some()) {
            self.note_call();
            return Ok(format!("grail_node_has(ctx, {n})"));
        }
        Ok(match growth.and_then(|g| g.nodes.as_ref()) {
            Some(nodes) => format!(
                "((uint64_t)({n}) < {} + grail_coll_len(&{}[{}]))",
                self.ctx("num_nodes"),
                self.ctx("colls"),
                nodes.added.0
            ),
            // Nothing adds or removes nodes: every id below the graph's count is a node.
            None => format!("((uint64_t)({n}) < {})", self.ctx("graph_nodes")),
        })
    }

    /// Whether an edge is present (a sequential loop over every edge asks): not removed, where
    /// kernels change edges; else below the graph's count.
    pub(crate) fn edge_has(&self, edge: &Expr) -> Result<String, CodegenError> {
        let e = self.expr(edge)?;
        Ok(match &self.module.growth {
            Some(_) => {
                self.note_call();
                format!("grail_edge_present(ctx, {e})")
            }
            None => format!("((uint64_t)({e}) < {})", self.ctx("graph_edges")),
        })
    }

    /// The check that skips a removed node as a loop's item, if kernels remove nodes.
    pub(crate) fn removed_node_skip(&self, var: &str) -> Option<String> {
        self.module
            .growth
            .as_ref()
            .and_then(|g| g.node_removed)
            .map(|_| format!("if (grail_node_removed(ctx, {var})) continue;"))
    }

    /// `G.add_node()`.
    pub(crate) fn node_add(&self) -> String {
        self.note_call();
        "grail_node_add(ctx)".to_string()
    }

    /// `G.add_edge(src, dst[, weight])`.
    pub(crate) fn edge_add(&self, src: &Expr, dst: &Expr, weight: Option<&Expr>) -> Result<String, CodegenError> {
        self.note_call();
        let mut args = vec![self.expr(src)?, self.expr(dst)?];
        if let Some(weight) = weight {
            args.push(self.expr(weight)?);
        }
        Ok(format!("grail_edge_add(ctx, {})", args.join(", ")))
    }

    /// `G.remove_edge(edge)`.
    pub(crate) fn edge_remove(&self, edge: &Expr) -> Result<String, CodegenError> {
        self.note_call();
        Ok(format!("grail_edge_remove(ctx, {})", self.expr(edge)?))
    }
}
