//! NVRTC compiles what grail will run on GPUs: `grail_cuda.h` with the self-test kernel that
//! `gpu::probe` runs, for sm_90 (a cubin) and compute_90 (PTX); compile errors quote the
//! generated source; the layout checks catch a mismatch; the cache returns what it stored; and
//! the search finds NVIDIA's pip wheel by itself.
//!
//! Needs the NVRTC library, not a GPU. Without the library each test says it was skipped and
//! passes, unless GRAIL_REQUIRE_NVRTC=1 (as in CI), which makes a missing library a failure.

#![cfg(feature = "gpu")]

use std::io::Write;

use grail_runtime::GpuError;
use grail_runtime::gpu::library::NvrtcSearch;
use grail_runtime::gpu::{self, Arch, CompileOptions, ImageKind};

fn sm90() -> Arch {
    "sm_90".parse().unwrap()
}

#[test]
fn nvrtc_reports_its_version_and_knows_sm_90() {
    if !gpu::nvrtc_or_skip("nvrtc_reports_its_version_and_knows_sm_90") {
        return;
    }
    let info = gpu::nvrtc_info().unwrap();
    let _ = writeln!(std::io::stderr(), "using {info}");
    assert!(info.version.0 >= 12, "{info}");
    assert!(info.archs.contains(&90), "{info}: {:?}", info.archs);
}

#[test]
fn the_self_test_kernel_compiles_to_a_cubin_for_sm_90() {
    if !gpu::nvrtc_or_skip("the_self_test_kernel_compiles_to_a_cubin_for_sm_90") {
        return;
    }
    let module = match gpu::compile(&gpu::selftest::source(), "grail_selftest.cu", sm90()) {
        Ok(module) => module,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(module.kind, ImageKind::Cubin);
    assert_eq!(module.arch, sm90());
    assert!(module.image.starts_with(b"\x7fELF"), "a cubin is an ELF file");
    assert!(!module.from_cache);
    // A clean compile: the header and the kernel give no warnings.
    assert_eq!(module.log, "", "NVRTC warned:\n{}", module.log);
}

#[test]
fn the_self_test_kernel_compiles_to_ptx_for_compute_90_with_line_info() {
    if !gpu::nvrtc_or_skip("the_self_test_kernel_compiles_to_ptx_for_compute_90_with_line_info") {
        return;
    }
    let mut options = CompileOptions::new("compute_90".parse().unwrap());
    options.line_info = true;
    assert!(options.args().contains(&"-lineinfo".to_string()));
    let module =
        gpu::compile_with(&gpu::selftest::source(), "grail_selftest.cu", &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(module.kind, ImageKind::Ptx);
    let ptx = module.ptx().expect("PTX is text");
    assert!(ptx.contains(".target sm_90"), "{}", &ptx[..ptx.len().min(600)]);
    assert!(ptx.contains(".entry grail_selftest("), "the kernel keeps its C name");
    assert!(ptx.contains(".loc"), "-lineinfo puts line numbers in");
}

#[test]
fn compile_errors_quote_nvrtc_and_the_generated_line() {
    if !gpu::nvrtc_or_skip("compile_errors_quote_nvrtc_and_the_generated_line") {
        return;
    }
    let header = grail_codegen::cuda::CUDA_HEADER;
    let source = format!(
        "{header}\nextern \"C\" __global__ void grail_k0_0(grail_ctx ctx) {{\n    uint32_t x = grail_no_such_helper(&ctx);\n}}\n"
    );
    let line = header.lines().count() + 3;
    match gpu::compile(&source, "bad.cu", sm90()) {
        Err(GpuError::CompileFailed { name, arch, log, report }) => {
            assert_eq!((name.as_str(), arch.as_str()), ("bad.cu", "sm_90"));
            assert!(log.contains(&format!("bad.cu({line}): error")), "{log}");
            assert!(report.starts_with(log.trim_end()), "the report starts with NVRTC's log");
            assert!(report.contains(&format!("> {line} |     uint32_t x = grail_no_such_helper(&ctx);")), "{report}");
            let message = GpuError::CompileFailed { name, arch, log, report }.to_string();
            assert!(message.starts_with("NVRTC could not compile `bad.cu` for sm_90"), "{message}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn the_layout_checks_catch_a_struct_that_differs() {
    if !gpu::nvrtc_or_skip("the_layout_checks_catch_a_struct_that_differs") {
        return;
    }
    let checks = gpu::ffi::layout_checks();
    let good = format!("{}\n{checks}", grail_codegen::cuda::CUDA_HEADER);
    gpu::compile(&good, "layout.cu", sm90()).unwrap_or_else(|e| panic!("{e}"));
    // The same checks against a header whose grail_ctx gained a field before `acc`.
    let changed = grail_codegen::cuda::CUDA_HEADER
        .replace("    grail_value *acc;\n", "    uint64_t extra;\n    grail_value *acc;\n");
    assert_ne!(changed, grail_codegen::cuda::CUDA_HEADER);
    match gpu::compile(&format!("{changed}\n{checks}"), "layout.cu", sm90()) {
        Err(GpuError::CompileFailed { log, .. }) => {
            assert!(log.contains("grail-runtime's mirror"), "{log}");
        }
        other => panic!("expected the static_asserts to fail, got {other:?}"),
    }
}

#[test]
fn an_architecture_nvrtc_does_not_know_is_named() {
    if !gpu::nvrtc_or_skip("an_architecture_nvrtc_does_not_know_is_named") {
        return;
    }
    let err = gpu::compile("extern \"C\" __global__ void k() {}", "k.cu", "sm_20".parse().unwrap()).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, GpuError::ArchUnsupported { .. }), "{message}");
    assert!(message.contains("cannot compile for sm_20 (it knows sm_"), "{message}");
    assert!(message.contains("older NVRTC"), "the advice fits an architecture that is too old: {message}");
}

#[test]
fn the_cache_returns_what_it_stored() {
    if !gpu::nvrtc_or_skip("the_cache_returns_what_it_stored") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = grail_runtime::ModuleCache::at(dir.path().join("cache"));
    let source = format!(
        "{}\nextern \"C\" __global__ void k(grail_ctx ctx) {{ grail_push(&ctx.pushes, 1u); }}\n",
        grail_codegen::cuda::CUDA_HEADER
    );
    let options = CompileOptions::new(sm90());
    let first = gpu::compile_cached(&cache, &source, "k.cu", &options).unwrap_or_else(|e| panic!("{e}"));
    let second = gpu::compile_cached(&cache, &source, "k.cu", &options).unwrap();
    assert!(!first.from_cache && second.from_cache);
    assert_eq!(first.image, second.image);
    assert_eq!(second.kind, ImageKind::Cubin);
    // Another architecture is another entry.
    let ptx =
        gpu::compile_cached(&cache, &source, "k.cu", &CompileOptions::new("compute_90".parse().unwrap())).unwrap();
    assert!(!ptx.from_cache && ptx.kind == ImageKind::Ptx);
    let entries: Vec<String> = std::fs::read_dir(cache.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 4, "nothing but the two entries and their checksums (no temporary files): {entries:?}");
    assert!(entries.iter().all(|e| e.starts_with("cuda-")), "{entries:?}");
    assert!(
        entries.iter().any(|e| e.ends_with(".cubin")) && entries.iter().any(|e| e.ends_with(".ptx")),
        "{entries:?}"
    );
    // A damaged image is compiled again, not handed to the driver.
    let cubin = entries.iter().find(|e| e.ends_with(".cubin")).unwrap();
    std::fs::write(cache.dir().join(cubin), b"not a cubin").unwrap();
    let again = gpu::compile_cached(&cache, &source, "k.cu", &options).unwrap();
    assert!(!again.from_cache && again.image == first.image);
}

#[test]
fn grail_nvrtc_lib_names_the_library_or_its_folder() {
    if !gpu::nvrtc_or_skip("grail_nvrtc_lib_names_the_library_or_its_folder") {
        return;
    }
    let info = gpu::nvrtc_info().unwrap();
    let Some(path) = info.path else {
        let _ = writeln!(std::io::stderr(), "the system's loader found NVRTC by name; no path to name");
        return;
    };
    for explicit in [path.clone(), path.parent().unwrap().to_path_buf()] {
        let search = NvrtcSearch { explicit: Some(explicit.clone()), ..NvrtcSearch::default() };
        let found = search.find().unwrap_or_else(|e| panic!("{}: {e}", explicit.display()));
        assert!(found.path.is_some());
    }
}

/// Where CI installs NVRTC with pip, the search finds it through python3 alone.
#[test]
fn the_search_finds_nvidias_pip_wheel_through_python() {
    if !gpu::nvrtc_or_skip("the_search_finds_nvidias_pip_wheel_through_python") {
        return;
    }
    let info = gpu::nvrtc_info().unwrap();
    let from_wheel = info.path.as_ref().is_some_and(|p| {
        let p = p.to_string_lossy();
        p.contains("-packages/nvidia/")
    });
    if !from_wheel {
        let _ = writeln!(std::io::stderr(), "NVRTC is not from a pip wheel here ({info}); nothing to check");
        return;
    }
    let search = NvrtcSearch { python: true, ..NvrtcSearch::default() };
    let found = search.find().unwrap_or_else(|e| panic!("{e}"));
    let found = found.path.expect("found by path");
    assert!(found.to_string_lossy().contains("-packages/nvidia/"), "{}", found.display());
}
