//! The C target's output compiles with the machine's C compiler (warnings as errors), for the
//! specification's BFS and for a module that uses every construct the target supports.

use grail_codegen::{CodegenError, emit_c};
use grail_ir::samples::bfs;
use grail_ir::*;
use grail_runtime::ModuleCache;
use grail_runtime::cpu::CCompiler;

mod common;
use common::kitchen_sink;

fn compile(source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cc = CCompiler::new("cc", vec!["-Wall".into(), "-Werror".into(), "-Wno-unused-variable".into()]).unwrap();
    if let Err(err) = cc.build(source, &ModuleCache::at(dir.path())) {
        let numbered: Vec<String> = source.lines().enumerate().map(|(i, l)| format!("{:4} {l}", i + 1)).collect();
        panic!("{err}\n\n{}", numbered.join("\n"));
    }
}

#[test]
fn bfs_compiles() {
    let source = emit_c(&bfs()).unwrap();
    assert!(source.contains("uint64_t grail_k0_0_size(const grail_ctx *ctx, const grail_value *args)"));
    assert!(source.contains("grail_buf_append(&pushes_, l3_v);"), "{source}");
    compile(&source);
}

#[test]
fn every_supported_construct_compiles() {
    let module = kitchen_sink();
    validate(&module).unwrap();
    let source = emit_c(&module).unwrap();
    for expected in [
        "grail_union(ctx, 0,",
        "grail_lock_all(ctx, -1, 0, ex0_, 2)",
        "grail_claim(ctx,",
        "t->acc.f =",
        "grail_f0(ctx,",
    ] {
        assert!(source.contains(expected), "missing {expected}");
    }
    compile(&source);
}

#[test]
fn invalid_modules_are_errors() {
    let mut module = bfs();
    module.outputs.push(PropertyId(9));
    assert!(matches!(emit_c(&module), Err(CodegenError::Invalid(_))));
}

/// BFS over in-edges, reading each edge's source: `in_edge_ids` and `edge_sources`.
#[test]
fn in_edges_and_edge_sources_compile() {
    let mut module = bfs();
    let Stmt::ForAll(forall) = &mut module.kernels[0].body.block[0] else { unreachable!() };
    let Stmt::ForEach { adjacency, body, .. } = &mut forall.body[0] else { unreachable!() };
    *adjacency = Adjacency::InEdges;
    let Stmt::Assign { value, .. } = &mut body[0] else { unreachable!() };
    *value = Expr::new(ExprKind::EdgeSource(Box::new(Expr::local(LocalId(2), Type::Edge))), Type::Node);
    validate(&module).unwrap();
    assert!(analysis::needs_in_edge_ids(&module) && analysis::needs_edge_sources(&module));
    let source = emit_c(&module).unwrap();
    for expected in ["G_in_offsets[n_]", "= G_in_edge_ids[k];", "= G_edge_sources[l2_e];"] {
        assert!(source.contains(expected), "missing {expected}\n{source}");
    }
    compile(&source);
}
