//! The CPU toolchain with the machine's real C compiler: build, cache, load, call, and fail clearly.

use grail_runtime::cpu::CCompiler;
use grail_runtime::{ModuleCache, RuntimeError};

const SUM: &str = r#"
#include <stdint.h>
uint64_t grail_test_sum(const uint32_t *values, uint64_t count) {
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; i++) total += values[i];
    return total;
}
"#;

type SumFn = unsafe extern "C" fn(*const u32, u64) -> u64;

fn compiler() -> CCompiler {
    CCompiler::new("cc", Vec::new()).expect("the test machine has a C compiler")
}

#[test]
fn builds_loads_and_calls_generated_code() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModuleCache::at(dir.path());
    let library = compiler().load(SUM, &cache).unwrap();
    let sum: SumFn = unsafe { library.function("grail_test_sum") }.unwrap();
    let values: Vec<u32> = (1..=1000).collect();
    assert_eq!(unsafe { sum(values.as_ptr(), values.len() as u64) }, 500_500);
    let err = unsafe { library.function::<SumFn>("missing") }.unwrap_err();
    assert!(matches!(err, RuntimeError::MissingSymbol { .. }), "{err}");
}

#[test]
fn builds_once_per_source_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModuleCache::at(dir.path().join("nested"));
    let cc = compiler();
    let (first, built) = cc.build(SUM, &cache).unwrap();
    assert!(built);
    let (again, built) = cc.build(SUM, &cache).unwrap();
    assert!(!built);
    assert_eq!(first, again);
    let (other_source, built) = cc.build(&format!("{SUM}\n// changed\n"), &cache).unwrap();
    assert!(built && other_source != first);
    let with_flags = CCompiler::new("cc", vec!["-DGRAIL_TEST=1".into()]).unwrap();
    let (other_flags, built) = with_flags.build(SUM, &cache).unwrap();
    assert!(built && other_flags != first);
    // Only finished libraries and their checksums remain: no build folders or temporary files.
    let mut names: Vec<String> =
        std::fs::read_dir(cache.dir()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("cpu-") && (n.ends_with(".so") || n.ends_with(".so.xxh"))), "{names:?}");
}

#[test]
fn compile_errors_show_the_compiler_output() {
    let dir = tempfile::tempdir().unwrap();
    let err = compiler().build("int broken( { return 0; }\n", &ModuleCache::at(dir.path())).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RuntimeError::CompileFailed { .. }), "{text}");
    assert!(text.contains("program.c:1"), "{text}");
    assert!(text.contains("bug in grail"), "{text}");
}

#[test]
fn a_missing_compiler_says_what_to_install() {
    let err = CCompiler::new("/nonexistent/grail-test-cc", Vec::new()).unwrap_err().to_string();
    assert!(err.contains("`/nonexistent/grail-test-cc` was not found"), "{err}");
    assert!(err.contains("install gcc or clang") && err.contains("set CC"), "{err}");
    let err = CCompiler::new("false", Vec::new()).unwrap_err().to_string();
    assert!(err.contains("failed to report its version"), "{err}");
}

/// Calls the test library's sum over 1..=10.
fn sum_of_ten(library: &grail_runtime::cpu::NativeLibrary) -> u64 {
    let sum: SumFn = unsafe { library.function("grail_test_sum") }.unwrap();
    let values: Vec<u32> = (1..=10).collect();
    unsafe { sum(values.as_ptr(), values.len() as u64) }
}

#[test]
fn damaged_cache_entries_are_rebuilt_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModuleCache::at(dir.path().join("cache"));
    let cc = compiler();
    let (path, built) = cc.build(SUM, &cache).unwrap();
    assert!(built);
    let good = std::fs::read(&path).unwrap();
    // Truncated (what a full disk or a crash leaves), then garbage of the same length.
    for damage in [good[..good.len() / 3].to_vec(), vec![0x55; good.len()]] {
        std::fs::write(&path, &damage).unwrap();
        let library = cc.load(SUM, &cache).unwrap();
        assert_eq!(sum_of_ten(&library), 55);
        assert_eq!(std::fs::read(&path).unwrap(), good, "the entry was rebuilt");
    }
    // An entry without its checksum is not trusted either.
    let mut sum_file = path.as_os_str().to_owned();
    sum_file.push(".xxh");
    std::fs::remove_file(&sum_file).unwrap();
    let (_, built) = cc.build(SUM, &cache).unwrap();
    assert!(built);
}

#[cfg(unix)]
#[test]
fn the_cache_folder_is_private_and_a_shared_one_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("private");
    let cache = ModuleCache::at(&folder);
    compiler().build(SUM, &cache).unwrap();
    assert_eq!(std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777, 0o700);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let error = compiler().build(SUM, &cache).unwrap_err().to_string();
    assert!(error.contains("can be written by other users") && error.contains("chmod 700"), "{error}");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    compiler().build(SUM, &cache).unwrap();
}
