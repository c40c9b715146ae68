//! The arithmetic the language defines where C and CUDA leave it undefined (section 2): float to
//! integer `as` saturates as Rust's does (NaN to 0), and on the CPU an integer division or
//! remainder by zero, or of a signed minimum by -1, stops the kernel (SIGFPE, which the runtime
//! reports) whatever the C compiler folds.
//!
//! The C helpers are run: the generated C program, with a `main` appended, is built as an
//! executable with the machine's C compiler, optimized and not, and its results are compared with
//! Rust's. The CUDA target uses the same helpers' text (`value_helpers`) or its own checked
//! division; its code for a program of casts compiles with NVRTC (skipped without the library
//! unless GRAIL_REQUIRE_NVRTC=1).

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

use grail_algos::suite::compile_source;
use grail_codegen::{emit_c, emit_cuda};
use grail_ir::{OptConfig, optimize};
use grail_runtime::gpu;

const CASTS: &str = include_str!("programs/casts.grail");
const DIVIDE: &str = include_str!("programs/divide.grail");

/// SIGFPE, on Linux and macOS alike.
const SIGFPE: i32 = 8;

/// The C compiler the runtime would use: `$CC`'s first word, else `cc`.
fn cc() -> String {
    std::env::var("CC").ok().and_then(|cc| cc.split_whitespace().next().map(str::to_string)).unwrap_or("cc".into())
}

/// The C program of the casts test program, with `main` appended, built with `flags` (the
/// runtime's own, `-fwrapv` included, and an optimization level) and run with `stdin`.
fn run_c(main: &str, flags: &[&str], stdin: &str) -> Output {
    let module = compile_source("casts", CASTS).unwrap_or_else(|e| panic!("{e}"));
    let source = format!("{}\n#include <stdio.h>\n{main}", emit_c(&module).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let (file, exe) = (dir.path().join("arith.c"), dir.path().join("arith"));
    std::fs::write(&file, &source).unwrap();
    let built = Command::new(cc())
        .args(["-std=c11", "-fwrapv", "-pthread", "-Wall", "-Werror", "-Wno-unused-function", "-Wno-unused-variable"])
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&file)
        .arg("-lm")
        .output()
        .expect("the C compiler runs");
    assert!(built.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&built.stderr));
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test program starts");
    use std::io::Write;
    // A program that stops before reading its input closes the pipe: not an error here.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

const LEVELS: [&str; 3] = ["-O0", "-O2", "-O3"];

/// Values around every integer type's bounds, and the special ones.
const VALUES: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    -0.5,
    -0.999,
    -1.0,
    0.999,
    -5.5,
    2147483647.0,
    2147483647.5,
    2147483648.0,
    -2147483648.0,
    -2147483648.9,
    -2147483649.0,
    4294967295.0,
    4294967295.5,
    4294967296.0,
    9.2e18,
    9223372036854775807.0,
    -9223372036854775808.0,
    -9223372036854777856.0,
    -9.3e18,
    1.8e19,
    18446744073709551615.0,
    18446744073709549568.0,
    1e20,
    -1e20,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
];

/// Rust's `x as T` for every integer type, from `x` and from `x as f32`: one line.
fn rust_casts(x: f64) -> String {
    let y = x as f32;
    format!("{} {} {} {} {} {} {} {}", x as i32, x as i64, x as u32, x as u64, y as i32, y as i64, y as u32, y as u64)
}

/// The C statement that prints the helpers' casts of the double expression `x`, as `rust_casts`.
fn c_casts(x: &str) -> String {
    format!(
        "{{ double x = {x}; float y = (float)x; printf(\"%d %lld %u %llu %d %lld %u %llu\\n\", grail_cast_f64_i32(x), \
         (long long)grail_cast_f64_i64(x), grail_cast_f64_u32(x), (unsigned long long)grail_cast_f64_u64(x), \
         grail_cast_f32_i32(y), (long long)grail_cast_f32_i64(y), grail_cast_f32_u32(y), \
         (unsigned long long)grail_cast_f32_u64(y)); }}\n"
    )
}

/// A C double literal of exactly `x`.
fn c_literal(x: f64) -> String {
    if x.is_nan() {
        "NAN".into()
    } else if x.is_infinite() {
        format!("{}INFINITY", if x < 0.0 { "-" } else { "" })
    } else {
        // Rust's shortest representation reads back as the same double in C.
        format!("{x:e}")
    }
}

/// Every float-to-integer helper gives Rust's `as` for values read at run time (which the C
/// compiler cannot see) and for literals it folds, at every optimization level.
#[test]
fn float_to_integer_casts_are_rusts() {
    let expected: Vec<String> = VALUES.iter().map(|&x| rust_casts(x)).collect();
    let mut main = String::from(
        "int main(void) {\n    char text[64];\n    \
         while (scanf(\"%63s\", text) == 1) {\n        double v = strtod(text, NULL);\n        ",
    );
    main += &c_casts("v");
    main += "    }\n";
    for &x in VALUES {
        main += &format!("    {}", c_casts(&c_literal(x)));
    }
    main += "    return 0;\n}\n";
    // strtod reads "nan", "inf" and "-inf".
    let input: Vec<String> = VALUES.iter().map(|&x| if x.is_nan() { "nan".into() } else { format!("{x:e}") }).collect();
    for level in LEVELS {
        let out = run_c(&main, &[level], &input.join("\n"));
        assert!(out.status.success(), "{level}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 * VALUES.len(), "{level}: {text}");
        for (i, &x) in VALUES.iter().enumerate() {
            assert_eq!(lines[i], expected[i], "{level}: {x:e} read at run time");
            assert_eq!(lines[VALUES.len() + i], expected[i], "{level}: {x:e} as a literal");
        }
    }
}

/// The CPU's division helpers stop the program with SIGFPE (the signal the runtime's handler
/// reports as a kernel's arithmetic fault) on a zero divisor and on a signed minimum by -1, for
/// operands the C compiler knows (it would fold `INT32_MIN / -1` to `INT32_MIN` under
/// `-fwrapv`) and for operands it reads at run time; other operands divide as C does.
#[test]
fn cpu_division_faults_whatever_the_compiler_folds() {
    let faults = [
        ("grail_div_i32", "INT32_MIN", "-1"),
        ("grail_rem_i32", "INT32_MIN", "-1"),
        ("grail_div_i64", "INT64_MIN", "-1"),
        ("grail_rem_i64", "INT64_MIN", "-1"),
        ("grail_div_i32", "7", "0"),
        ("grail_rem_i64", "7", "0"),
        ("grail_div_u32", "7u", "0u"),
        ("grail_rem_u64", "7u", "0u"),
    ];
    for (helper, a, b) in faults {
        let fault = format!("{helper}({a}, {b})");
        let known = format!("int main(void) {{ printf(\"%lld\\n\", (long long){fault}); return 0; }}\n");
        // The same operands, with a value read at run time (0) added to each.
        let unknown = format!(
            "int main(void) {{ long long x = 1; if (scanf(\"%lld\", &x) != 1) return 2; \
             printf(\"%lld\\n\", (long long){helper}(x + {a}, x + {b})); return 0; }}\n"
        );
        for level in LEVELS {
            for (main, how) in [(&known, "known"), (&unknown, "read")] {
                let out = run_c(main, &[level], "0");
                assert_eq!(
                    out.status.signal(),
                    Some(SIGFPE),
                    "{fault}, {how}, {level}: {:?} {}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout)
                );
            }
        }
    }
    let fine = "int main(void) { printf(\"%d %d %lld %lld %u %d\\n\", grail_div_i32(INT32_MIN + 1, -1), \
                grail_rem_i32(-7, 2), (long long)grail_div_i64(INT64_MIN, 2), (long long)grail_rem_i64(INT64_MIN, 3), \
                grail_div_u32(UINT32_MAX, UINT32_MAX), grail_div_i32(-7, 2)); return 0; }\n";
    let expected = format!("{} {} {} {} 1 -3\n", i32::MAX, -1, i64::MIN / 2, i64::MIN % 3);
    for level in LEVELS {
        let out = run_c(fine, &[level], "");
        assert!(out.status.success(), "{level}: {:?}", out.status);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{level}");
    }
}

/// Both targets print float-to-integer casts through the helpers and integer division through
/// the checking ones; the CUDA code of the casts program compiles with NVRTC without a warning,
/// unoptimized and with every optimization, in checked mode too.
#[test]
fn both_targets_use_the_helpers_and_cuda_compiles() {
    let module = compile_source("casts", CASTS).unwrap_or_else(|e| panic!("{e}"));
    let c = emit_c(&module).unwrap();
    for helper in ["grail_cast_f64_i32(", "grail_cast_f32_i32(", "grail_cast_f64_u64(", "grail_cast_f32_u64("] {
        assert!(c.contains(helper), "C: no {helper}");
    }
    let module = compile_source("divide", DIVIDE).unwrap_or_else(|e| panic!("{e}"));
    let c = emit_c(&module).unwrap();
    for helper in ["grail_div_i32(", "grail_rem_i32(", "grail_div_i64(", "grail_rem_u64("] {
        assert!(c.contains(helper), "C: no {helper}");
    }
    let nvrtc = gpu::nvrtc_or_skip("both_targets_use_the_helpers_and_cuda_compiles");
    for config in [OptConfig::NONE, OptConfig::all()] {
        let module = optimize(compile_source("casts", CASTS).unwrap(), &config).unwrap();
        let cuda = emit_cuda(&module).unwrap();
        for helper in ["grail_cast_f64_i32(", "grail_cast_f32_u32(", "grail_cast_f32_i64(", "grail_cast_f64_u64("] {
            assert!(cuda.contains(helper), "CUDA with {config}: no {helper}");
        }
        if !nvrtc {
            continue;
        }
        for (file, source) in
            [("casts.cu", cuda.clone()), ("casts_checked.cu", format!("#define GRAIL_CHECKS 1\n{cuda}"))]
        {
            let compiled = gpu::compile(&source, file, "sm_90".parse().unwrap())
                .unwrap_or_else(|e| panic!("{file} with {config}: {e}"));
            assert_eq!(compiled.log, "", "NVRTC warned about {file} with {config}:\n{}", compiled.log);
        }
    }
}
