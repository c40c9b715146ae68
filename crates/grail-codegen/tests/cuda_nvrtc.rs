//! Every suite program (each variant's) and the collection test programs, emitted for CUDA,
//! compile with NVRTC for sm_90 without a warning.
//!
//! Needs the NVRTC library, not a GPU. Without the library each test says it was skipped and
//! passes, unless GRAIL_REQUIRE_NVRTC=1 (as in CI), which makes a missing library a failure.

use grail_algos::VARIANTS;
use grail_algos::suite::compile_source;
use grail_codegen::emit_cuda;
use grail_runtime::gpu;

/// Emits `source` for CUDA and compiles it for sm_90; NVRTC's errors quote the generated line.
fn compiles_cleanly(name: &str, source: &str) {
    let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
    let cuda = emit_cuda(&module).unwrap_or_else(|e| panic!("{name}: {e}"));
    let file = format!("{name}.cu");
    let compiled = gpu::compile(&cuda, &file, "sm_90".parse().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(compiled.log, "", "NVRTC warned about {file}:\n{}", compiled.log);
}

#[test]
fn every_suite_variant_compiles_for_sm_90() {
    if !gpu::nvrtc_or_skip("every_suite_variant_compiles_for_sm_90") {
        return;
    }
    for variant in VARIANTS {
        let source = grail_algos::program_source(variant.program).expect("an embedded program");
        compiles_cleanly(variant.program, source);
    }
}

#[test]
fn every_embedded_program_compiles_for_sm_90() {
    if !gpu::nvrtc_or_skip("every_embedded_program_compiles_for_sm_90") {
        return;
    }
    for (name, source) in grail_algos::PROGRAMS {
        compiles_cleanly(name, source);
    }
}

#[test]
fn the_collection_programs_compile_for_sm_90() {
    if !gpu::nvrtc_or_skip("the_collection_programs_compile_for_sm_90") {
        return;
    }
    compiles_cleanly("triangle_list", include_str!("../../grail-lang/tests/programs/triangle_list.grail"));
    compiles_cleanly("cells", include_str!("../../grail-lang/tests/programs/cells.grail"));
}
