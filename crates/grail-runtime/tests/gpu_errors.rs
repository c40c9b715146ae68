//! The GPU layer's errors, without NVRTC, a driver or a GPU: what a user reads when NVRTC is
//! missing or misnamed, compile errors that quote the generated source, architectures, devices.

#![cfg(feature = "gpu")]

use std::path::PathBuf;

use grail_runtime::gpu::library::{NVRTC_NAMES, NvrtcSearch};
use grail_runtime::gpu::nvrtc::{compile_report, parse_log};
use grail_runtime::gpu::{Arch, CompileOptions};
use grail_runtime::{GpuError, RuntimeError};

/// A search of the given folders only: no `GRAIL_NVRTC_LIB`, no system loader, no python3.
fn search_in(dirs: &[PathBuf]) -> NvrtcSearch {
    NvrtcSearch {
        explicit: None,
        system: false,
        dirs: dirs.iter().map(|d| (d.clone(), "a test folder".to_string())).collect(),
        python: false,
    }
}

#[test]
fn a_missing_nvrtc_says_what_to_install_and_where_grail_looked() {
    let empty = tempfile::tempdir().unwrap();
    let absent = empty.path().join("no-such-toolkit/lib64");
    let err = search_in(&[empty.path().to_path_buf(), absent.clone()]).find().unwrap_err();
    assert!(matches!(err, GpuError::NvrtcNotFound { .. }), "{err}");
    let message = err.to_string();
    for needle in [
        "cannot find the NVRTC library (libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so)",
        "`python3 -m pip install nvidia-cuda-nvrtc`",
        "nvidia-cuda-nvrtc-cu12",
        "CUDA toolkit",
        "GRAIL_NVRTC_LIB",
    ] {
        assert!(message.contains(needle), "no {needle:?} in:\n{message}");
    }
    let empty_line = format!("  - {} (a test folder): has no libnvrtc.so.13", empty.path().display());
    assert!(message.contains(&empty_line), "{message}");
    assert!(message.contains(&format!("  - {} (a test folder): no such folder", absent.display())), "{message}");
}

#[test]
fn the_system_search_is_listed_with_ld_library_path() {
    // Only meaningful where the system's loader has no NVRTC: then the list says what it tried.
    let search = NvrtcSearch { system: true, ..NvrtcSearch::default() };
    match search.find() {
        Ok(found) => assert_eq!(found.path, None, "found by name through the loader"),
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("the system's library path (LD_LIBRARY_PATH"), "{message}");
            assert!(message.contains(&NVRTC_NAMES.join(", ")), "{message}");
        }
    }
}

#[test]
fn a_file_that_is_not_a_library_is_reported_with_the_loaders_words() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("libnvrtc.so.13");
    std::fs::write(&fake, b"not an ELF file").unwrap();
    let message = search_in(&[dir.path().to_path_buf()]).find().unwrap_err().to_string();
    assert!(message.contains(&format!("{} does not load:", fake.display())), "{message}");
}

#[test]
fn grail_nvrtc_lib_pointing_nowhere_is_named_and_not_searched_past() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("libnvrtc.so.13");
    let search = NvrtcSearch { explicit: Some(nowhere.clone()), system: true, dirs: Vec::new(), python: true };
    let err = search.find().unwrap_err();
    assert!(matches!(err, GpuError::NvrtcLoad { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "GRAIL_NVRTC_LIB={} cannot be used: there is no such file or folder",
            nowhere.display()
        )),
        "{message}"
    );
    assert!(message.contains("unset it to let grail search"), "{message}");

    // A folder without NVRTC.
    let search = NvrtcSearch { explicit: Some(dir.path().to_path_buf()), ..NvrtcSearch::default() };
    let message = search.find().unwrap_err().to_string();
    assert!(message.contains("cannot be used: has no libnvrtc.so.13"), "{message}");

    // A file that is not a library.
    let junk = dir.path().join("junk.so");
    std::fs::write(&junk, b"junk").unwrap();
    let search = NvrtcSearch { explicit: Some(junk.clone()), ..NvrtcSearch::default() };
    let message = search.find().unwrap_err().to_string();
    assert!(message.contains(&format!("{} does not load", junk.display())), "{message}");
}

const SOURCE: &str = r#"typedef unsigned int uint32_t;
extern "C" __global__ void grail_k0_0(uint32_t *p) {
    uint32_t x = grail_missing(p);
    p[0] = x;
    p[1] = y;
}
"#;

const LOG: &str = r#"k.cu(3): error: identifier "grail_missing" is undefined
      uint32_t x = grail_missing(p);
                   ^

k.cu(2): warning #177-D: variable "q" was declared but never referenced

k.cu(5): error: identifier "y" is undefined

k.cu(3): error: a second complaint about the same line
other.h(40): error: in a file that is not the program
k.cu(99): catastrophic error: past the end

4 errors detected in the compilation of "k.cu".
"#;

#[test]
fn the_log_is_parsed_into_file_line_severity_message() {
    let entries = parse_log(LOG);
    let summary: Vec<(String, usize, String, bool)> =
        entries.iter().map(|e| (e.file.clone(), e.line, e.severity.clone(), e.is_error())).collect();
    let want = [
        ("k.cu", 3, "error", true),
        ("k.cu", 2, "warning #177-D", false),
        ("k.cu", 5, "error", true),
        ("k.cu", 3, "error", true),
        ("other.h", 40, "error", true),
        ("k.cu", 99, "catastrophic error", true),
    ];
    let want: Vec<(String, usize, String, bool)> =
        want.iter().map(|(f, l, s, e)| (f.to_string(), *l, s.to_string(), *e)).collect();
    assert_eq!(summary, want);
    assert_eq!(entries[0].message, "identifier \"grail_missing\" is undefined");
    // Not entries: NVRTC's excerpt lines and its summary.
    assert!(
        parse_log("      uint32_t x = f(a): error: b;\n4 errors detected in the compilation of \"k.cu\".").is_empty()
    );
    assert!(parse_log("(3): error: no file").is_empty());
}

#[test]
fn a_compile_report_quotes_each_erroneous_generated_line_once() {
    let report = compile_report(LOG, SOURCE, "k.cu");
    let expected_tail = r#"the generated source at each error:
k.cu:3: error: identifier "grail_missing" is undefined
    2 | extern "C" __global__ void grail_k0_0(uint32_t *p) {
  > 3 |     uint32_t x = grail_missing(p);
    4 |     p[0] = x;

k.cu:5: error: identifier "y" is undefined
    4 |     p[0] = x;
  > 5 |     p[1] = y;
    6 | }

k.cu:99: catastrophic error: past the end
    (the source has 6 lines)"#;
    assert!(report.starts_with(LOG.trim_end()), "the report starts with NVRTC's whole log:\n{report}");
    assert!(report.ends_with(expected_tail), "got:\n{report}");
    // The warning's line and the other file's line are not quoted.
    assert!(!report.contains("k.cu:2:") && !report.contains("other.h:40"), "{report}");
}

#[test]
fn a_compile_report_quotes_the_first_line_and_stops_after_twenty_errors() {
    let source: String = (1..=30).map(|i| format!("line{i}\n")).collect();
    let log: String = (1..=30).map(|i| format!("p.cu({i}): error: bad {i}\n")).collect();
    let report = compile_report(&log, &source, "p.cu");
    assert!(report.contains("  > 1 | line1\n    2 | line2\n"), "line 1 has no line before it:\n{report}");
    assert!(report.contains("p.cu:20: error: bad 20"), "{report}");
    assert!(!report.contains("p.cu:21: error"), "{report}");
    assert!(report.ends_with("... and 10 more"), "{report}");
    // No log at all still makes a report.
    assert_eq!(compile_report("", "x", "p.cu"), "(NVRTC gave no log)");
}

#[test]
fn a_compile_error_message_blames_grail_and_carries_the_report() {
    let report = compile_report(LOG, SOURCE, "k.cu");
    let err =
        GpuError::CompileFailed { name: "k.cu".into(), arch: "sm_90".into(), log: LOG.into(), report: report.clone() };
    let message = RuntimeError::from(err).to_string();
    assert_eq!(
        message,
        format!("NVRTC could not compile `k.cu` for sm_90; this is a bug in grail's CUDA code generator:\n{report}")
    );
}

#[test]
fn architectures_parse_print_and_know_what_runs_where() {
    for (text, cc, is_virtual) in [
        ("sm_90", (9, 0), false),
        ("sm_86", (8, 6), false),
        ("sm_100", (10, 0), false),
        ("sm_120", (12, 0), false),
        ("sm_90a", (9, 0), false),
        ("sm_100f", (10, 0), false),
        ("compute_90", (9, 0), true),
        ("compute_75", (7, 5), true),
    ] {
        let arch: Arch = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(arch.to_string(), text);
        assert_eq!((arch.compute_capability(), arch.is_virtual()), (cc, is_virtual), "{text}");
    }
    assert_eq!(Arch::sm(9, 0).number(), 90);
    assert_eq!(Arch::sm(12, 1).to_string(), "sm_121");
    for bad in ["sm90", "sm_9", "sm_", "sm_9x", "sm_1000", "gfx90a", "compute_", "sm_05", "", "SM_90", "sm_90b"] {
        let err = bad.parse::<Arch>().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{bad}` is not a GPU architecture: expected sm_XY or compute_XY, for example sm_90")
        );
    }
    let arch = |s: &str| s.parse::<Arch>().unwrap();
    let h100 = Arch::sm(9, 0);
    assert!(arch("sm_90").runs_on(h100));
    assert!(arch("sm_90a").runs_on(h100));
    assert!(arch("compute_80").runs_on(h100), "PTX runs on newer GPUs");
    assert!(!arch("sm_80").runs_on(h100), "a cubin does not cross major versions");
    assert!(arch("sm_80").runs_on(Arch::sm(8, 6)), "a cubin runs on newer minor versions");
    assert!(!arch("sm_86").runs_on(Arch::sm(8, 0)));
    assert!(!arch("compute_100").runs_on(h100));
    assert!(!arch("sm_90a").runs_on(Arch::sm(9, 1)), "an `a` cubin runs on its own GPU only");
}

#[test]
fn compile_options_are_the_ones_grail_documents() {
    let mut options = CompileOptions::new(Arch::sm(9, 0));
    assert_eq!(options.args(), ["-std=c++17", "--gpu-architecture=sm_90", "-default-device"]);
    options.line_info = true;
    options.default_device = false;
    options.extra.push("-DGRAIL_DEBUG=1".into());
    assert_eq!(options.args(), ["-std=c++17", "--gpu-architecture=sm_90", "-lineinfo", "-DGRAIL_DEBUG=1"]);
}

#[test]
fn device_and_driver_errors_read_well() {
    assert_eq!(
        GpuError::BadDevice { requested: 3, found: 1 }.to_string(),
        "device 3 requested, 1 found (devices are numbered from 0)"
    );
    let message = GpuError::NoDriver { message: "libcuda.so.1: cannot open shared object file".into() }.to_string();
    assert!(message.starts_with("no NVIDIA driver: libcuda.so.1: cannot open shared object file. "), "{message}");
    assert!(message.contains("compiling CUDA code with NVRTC alone does not"), "{message}");
    let message = GpuError::NoDevice { hint: " (CUDA_VISIBLE_DEVICES=\"\" may hide the GPUs)".into() }.to_string();
    assert_eq!(message, "the NVIDIA driver sees no CUDA GPU (CUDA_VISIBLE_DEVICES=\"\" may hide the GPUs)");
    let message = GpuError::ModuleLoad {
        name: "bfs.cu".into(),
        arch: "sm_80".into(),
        device: "device 0 (NVIDIA H100, sm_90)".into(),
        message: "code for sm_80 does not run on sm_90".into(),
    }
    .to_string();
    assert_eq!(
        message,
        "cannot load `bfs.cu` (sm_80) on device 0 (NVIDIA H100, sm_90): code for sm_80 does not run on sm_90"
    );
}

/// Where this machine has no CUDA driver (CI, development machines), opening a device says so
/// plainly; on a GPU machine it finds the devices.
#[test]
fn without_a_driver_device_calls_say_so() {
    match grail_runtime::gpu::device_count() {
        Err(GpuError::NoDriver { message }) => {
            assert!(!message.is_empty());
            let err = grail_runtime::gpu::Device::open(0).unwrap_err();
            assert!(matches!(err, GpuError::NoDriver { .. }), "{err}");
            assert!(matches!(grail_runtime::gpu::probe(), Err(GpuError::NoDriver { .. })));
        }
        Err(GpuError::NoDevice { .. }) => {}
        Ok(count) => {
            let err = grail_runtime::gpu::Device::open(count).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("device {count} requested, {count} found (devices are numbered from 0)")
            );
        }
        Err(other) => panic!("unexpected: {other}"),
    }
}

#[test]
fn layout_checks_cover_every_field_of_the_mirrors() {
    let checks = grail_runtime::gpu::ffi::layout_checks();
    for field in [
        "num_nodes",
        "num_edges",
        "out_offsets",
        "out_targets",
        "in_offsets",
        "in_sources",
        "edge_sources",
        "in_edge_ids",
        "props",
        "params",
        "items",
        "item_count",
        "retrying",
        "locks",
        "claims",
        "invocation",
        "sets",
        "colls",
        "pushes",
        "retries",
        "acc",
    ] {
        assert!(checks.contains(&format!("__builtin_offsetof(grail_ctx, {field}) ==")), "{field}");
    }
    assert!(checks.contains(&format!("sizeof(grail_ctx) == {}", size_of::<grail_runtime::gpu::GpuCtx>())));
    assert!(checks.contains("sizeof(grail_wl) == 40"));
    assert!(checks.contains("sizeof(grail_coll) == 208"));
}
