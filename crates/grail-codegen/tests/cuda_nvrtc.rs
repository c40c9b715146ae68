//! Every suite program (each variant's) and the collection test programs, emitted for CUDA,
//! compile with NVRTC for sm_90 without a warning: unoptimized, and under configurations that
//! between them use every scheduler combination, outlining on and off, every aggregation level,
//! retry backoff, read-only loads and several block sizes.
//!
//! Needs the NVRTC library, not a GPU. Without the library each test says it was skipped and
//! passes, unless GRAIL_REQUIRE_NVRTC=1 (as in CI), which makes a missing library a failure.

use grail_algos::suite::compile_source;
use grail_algos::{REAL_WEIGHT_VARIANTS, VARIANTS};
use grail_codegen::emit_cuda;
use grail_ir::opt::{Layout, Outline, Schedulers};
use grail_ir::{Aggregation, OptConfig, optimize};
use grail_runtime::gpu;

/// Emits `source` for CUDA and compiles it for sm_90; NVRTC's errors quote the generated line.
fn compiles_cleanly(name: &str, source: &str) {
    compiles_cleanly_with(name, source, &OptConfig::NONE);
}

/// As [`compiles_cleanly`], optimized with `config` first.
fn compiles_cleanly_with(name: &str, source: &str, config: &OptConfig) {
    let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
    let module = optimize(module, config).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
    let cuda = emit_cuda(&module).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
    let file = format!("{name}.cu");
    let compiled =
        gpu::compile(&cuda, &file, "sm_90".parse().unwrap()).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
    assert_eq!(compiled.log, "", "NVRTC warned about {file} with {config}:\n{}", compiled.log);
}

/// Eight configurations, one per scheduler combination, that also alternate outlining, the
/// aggregation level, backoff, read-only loads, the block size, the collections' layout,
/// warp-uniform item loops and their stages, conflict marks and adaptive parallelism.
fn configurations() -> Vec<OptConfig> {
    let coops = [Aggregation::None, Aggregation::Warp, Aggregation::Block];
    let blocks = [256, 128, 512, 1024];
    Schedulers::combinations()
        .enumerate()
        .map(|(i, np)| OptConfig {
            outline: if i % 2 == 0 { Outline::All } else { Outline::None },
            np,
            coop: coops[i % 3],
            backoff: i % 4 < 2,
            ldg: i % 3 != 1,
            block: blocks[i % 4],
            grid: (i % 3) as u32,
            unroll: 1 + (i % 3) as u32,
            scatter: i % 2 == 1,
            lockcache: i % 4 != 3,
            local: i % 2 == 0,
            layout: if i % 3 == 0 { Layout::Columns } else { Layout::Rows },
            converge: i % 4 != 1,
            stages: i % 3 != 2,
            marks: i % 4 == 2,
            adapt: i % 4 == 0,
            queue: i % 4 == 2,
        })
        .collect()
}

#[test]
fn every_suite_variant_compiles_under_every_scheduler_combination() {
    if !gpu::nvrtc_or_skip("every_suite_variant_compiles_under_every_scheduler_combination") {
        return;
    }
    for config in configurations() {
        for variant in VARIANTS.iter().chain(REAL_WEIGHT_VARIANTS) {
            let source = grail_algos::program_source(variant.program).expect("an embedded program");
            compiles_cleanly_with(variant.program, source, &config);
        }
    }
}

/// Worklist loops run as one queue (`queue=on`), with and without the schedulers and with every
/// aggregation level of their pushes.
#[test]
fn every_suite_variant_compiles_with_worklist_queues() {
    if !gpu::nvrtc_or_skip("every_suite_variant_compiles_with_worklist_queues") {
        return;
    }
    for text in ["all,queue=on", "all,queue=on,np=serial,coop=none", "all,queue=on,np=tb,coop=block"] {
        let config = OptConfig::parse(text).unwrap();
        for variant in VARIANTS.iter().chain(REAL_WEIGHT_VARIANTS) {
            let source = grail_algos::program_source(variant.program).expect("an embedded program");
            compiles_cleanly_with(variant.program, source, &config);
        }
    }
}

#[test]
fn every_suite_variant_compiles_for_sm_90() {
    if !gpu::nvrtc_or_skip("every_suite_variant_compiles_for_sm_90") {
        return;
    }
    for variant in VARIANTS.iter().chain(REAL_WEIGHT_VARIANTS) {
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
    // The programs no suite variant runs (the variants' test covers the others under every
    // configuration) also with every optimization: outlined regions, schedulers, aggregation.
    let variant_programs: Vec<&str> = grail_algos::VARIANTS.iter().map(|v| v.program).collect();
    for (name, source) in grail_algos::PROGRAMS.iter().filter(|(name, _)| !variant_programs.contains(name)) {
        compiles_cleanly_with(name, source, &OptConfig::all());
    }
}

/// The programs whose `exclusive` marks can decide (the morph paper's 3-phase conflict
/// resolution) compile with marks, in both layouts, and their outlined kernels do use them.
#[test]
fn marked_exclusives_compile_for_sm_90() {
    if !gpu::nvrtc_or_skip("marked_exclusives_compile_for_sm_90") {
        return;
    }
    let programs = [
        ("cavities", include_str!("../../grail-lang/tests/programs/cavities.grail")),
        ("split_cells", include_str!("../../grail-lang/tests/programs/split_cells.grail")),
        ("dmr", include_str!("../../grail-algos/programs/dmr.grail")),
    ];
    for (name, source) in programs {
        for text in ["all,marks=on", "all,marks=on,layout=columns,converge=off"] {
            let config = OptConfig::parse(text).unwrap();
            let module = optimize(compile_source(name, source).unwrap(), &config).unwrap();
            let cuda = emit_cuda(&module).unwrap();
            assert!(cuda.contains("_run_marks(c, args, size_, S);"), "{name} with {text}: no marked phase");
            compiles_cleanly_with(name, source, &config);
        }
    }
}

/// Adaptive parallelism: dmr's refinement, a morph kernel in an outlined region, sets its active
/// threads per invocation and its item loop steps over them only; it compiles.
#[test]
fn adaptive_parallelism_compiles_for_sm_90() {
    if !gpu::nvrtc_or_skip("adaptive_parallelism_compiles_for_sm_90") {
        return;
    }
    let source = include_str!("../../grail-algos/programs/dmr.grail");
    for text in ["all,adapt=on", "all,adapt=on,converge=off"] {
        let config = OptConfig::parse(text).unwrap();
        let module = optimize(compile_source("dmr", source).unwrap(), &config).unwrap();
        let cuda = emit_cuda(&module).unwrap();
        assert!(cuda.contains("c->active = grail_adapt_threads("), "{text}: no adaptive invocation");
        assert!(cuda.contains("j += threads_") || cuda.contains("j0_ += threads_"), "{text}: no adaptive loop");
        compiles_cleanly_with("dmr", source, &config);
    }
}

#[test]
fn the_collection_programs_compile_for_sm_90() {
    if !gpu::nvrtc_or_skip("the_collection_programs_compile_for_sm_90") {
        return;
    }
    compiles_cleanly("triangle_list", include_str!("../../grail-lang/tests/programs/triangle_list.grail"));
    compiles_cleanly("cells", include_str!("../../grail-lang/tests/programs/cells.grail"));
    compiles_cleanly("removal", include_str!("../../grail-lang/tests/programs/removal.grail"));
    compiles_cleanly("split_cells", include_str!("../../grail-lang/tests/programs/split_cells.grail"));
    compiles_cleanly("predicates", include_str!("../../grail-lang/tests/programs/predicates.grail"));
    compiles_cleanly("linked_input", include_str!("../../grail-lang/tests/programs/linked_input.grail"));
    compiles_cleanly("compaction", include_str!("../../grail-lang/tests/programs/compaction.grail"));
    compiles_cleanly("arrays", include_str!("../../grail-lang/tests/programs/arrays.grail"));
    compiles_cleanly("cavities", include_str!("../../grail-lang/tests/programs/cavities.grail"));
    compiles_cleanly("dmr", include_str!("../../grail-algos/programs/dmr.grail"));
    compiles_cleanly("edge_growth", include_str!("../../grail-lang/tests/programs/edge_growth.grail"));
    compiles_cleanly_with(
        "edge_growth",
        include_str!("../../grail-lang/tests/programs/edge_growth.grail"),
        &OptConfig::all(),
    );
    compiles_cleanly("node_growth", include_str!("../../grail-lang/tests/programs/node_growth.grail"));
    compiles_cleanly_with(
        "node_growth",
        include_str!("../../grail-lang/tests/programs/node_growth.grail"),
        &OptConfig::all(),
    );
    compiles_cleanly("node_removal", include_str!("../../grail-lang/tests/programs/node_removal.grail"));
    compiles_cleanly_with(
        "node_removal",
        include_str!("../../grail-lang/tests/programs/node_removal.grail"),
        &OptConfig::all(),
    );
    compiles_cleanly("update_function", include_str!("../../grail-lang/tests/programs/update_function.grail"));
    compiles_cleanly("several_properties", include_str!("../../grail-lang/tests/programs/several_properties.grail"));
    // Local worklists: dmr keeps its new bad triangles in the thread.
    let local: OptConfig = "all,local=on".parse().unwrap();
    compiles_cleanly_with("dmr", include_str!("../../grail-algos/programs/dmr.grail"), &local);
}

/// Checked mode (`grail run --checks`, `GRAIL_CHECKS` defined): every suite variant, and a
/// program dividing every integer type in a kernel, a function and an outlined loop, compile
/// without a warning, unoptimized and with every optimization; the divisions and pushes go
/// through the checking helpers.
#[test]
fn checked_mode_compiles_for_sm_90() {
    if !gpu::nvrtc_or_skip("checked_mode_compiles_for_sm_90") {
        return;
    }
    let divide = include_str!("programs/divide.grail");
    let programs = VARIANTS
        .iter()
        .map(|v| (v.program, grail_algos::program_source(v.program).expect("an embedded program")))
        .chain([
            ("divide", divide),
            ("node_growth", include_str!("../../grail-lang/tests/programs/node_growth.grail")),
        ]);
    for (name, source) in programs {
        for config in [OptConfig::NONE, OptConfig::all()] {
            let module = optimize(compile_source(name, source).unwrap_or_else(|e| panic!("{e}")), &config).unwrap();
            let cuda = emit_cuda(&module).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
            if name == "divide" {
                for helper in ["grail_div_i32(ctx", "grail_rem_i64(ctx", "grail_div_u32(ctx", "grail_rem_u64(ctx"] {
                    assert!(cuda.contains(helper), "{helper} in {name} with {config}");
                }
                assert!(cuda.contains("grail_pushed(ctx"), "{name} with {config}");
                compiles(name, &cuda, &config);
            }
            compiles(name, &format!("#define GRAIL_CHECKS 1\n{cuda}"), &config);
        }
    }

    fn compiles(name: &str, cuda: &str, config: &OptConfig) {
        let file = format!("{name}.cu");
        let compiled =
            gpu::compile(cuda, &file, "sm_90".parse().unwrap()).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
        assert_eq!(compiled.log, "", "NVRTC warned about {file} with {config}:\n{}", compiled.log);
    }
}

/// The switches that keep the program's functions and its phases out of line
/// (`-DGRAIL_NOINLINE_FUNCTIONS`, `-DGRAIL_NOINLINE_PHASES` in `GRAIL_NVRTC_FLAGS`) compile
/// cleanly, on `dmr` with every optimization (an outlined region calling its phases).
#[test]
fn out_of_line_functions_and_phases_compile() {
    if !gpu::nvrtc_or_skip("out_of_line_functions_and_phases_compile") {
        return;
    }
    let module = compile_source("dmr", include_str!("../../grail-algos/programs/dmr.grail")).unwrap();
    let module = optimize(module, &OptConfig::all()).unwrap();
    let cuda = emit_cuda(&module).unwrap();
    for defines in ["#define GRAIL_NOINLINE_FUNCTIONS\n", "#define GRAIL_NOINLINE_PHASES\n"] {
        let compiled = gpu::compile(&format!("{defines}{cuda}"), "dmr.cu", "sm_90".parse().unwrap())
            .unwrap_or_else(|e| panic!("{defines}{e}"));
        assert_eq!(compiled.log, "", "NVRTC warned with {defines}:\n{}", compiled.log);
    }
}

/// The programs with union-find sets that run partitioned compile as a partitioned run rewrites
/// them (`grail_ir::sets::for_parts`: classes, joins over the shared slots), unoptimized and
/// with every optimization.
#[test]
fn set_programs_rewritten_for_parts_compile_for_sm_90() {
    if !gpu::nvrtc_or_skip("set_programs_rewritten_for_parts_compile_for_sm_90") {
        return;
    }
    for name in ["cc", "cc_afforest_set"] {
        let source = grail_algos::program_source(name).expect("an embedded program");
        for config in [OptConfig::NONE, OptConfig::all()] {
            let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
            let module = optimize(module, &config).unwrap_or_else(|e| panic!("{name} with {config}: {e}"));
            let module = grail_ir::sets::for_parts(&module);
            grail_ir::validate(&module).unwrap_or_else(|e| panic!("{name} with {config}, for parts: {e}"));
            assert!(!module.over_slots.is_empty(), "{name}: no joins made");
            let cuda = emit_cuda(&module).unwrap_or_else(|e| panic!("{name} with {config}, for parts: {e}"));
            let compiled = gpu::compile(&cuda, &format!("{name}_parts.cu"), "sm_90".parse().unwrap())
                .unwrap_or_else(|e| panic!("{name} with {config}, for parts: {e}"));
            assert_eq!(compiled.log, "", "NVRTC warned about {name} for parts with {config}:\n{}", compiled.log);
        }
    }
}
