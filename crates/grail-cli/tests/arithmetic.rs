//! Integer division faults and float-to-integer `as`, as the specification (section 2) defines
//! them, in kernels, in host code and in constants, through `grail run` and `grail check`.

use std::path::Path;
use std::process::Output;

mod common;
use common::grail;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Host code (`main` and the functions it calls) that divides by zero, or a signed type's
/// minimum by -1, stops the run as a kernel's fault does: exit status 70, the fault named.
#[test]
fn host_code_arithmetic_faults_exit_70() {
    let dir = tempfile::tempdir().unwrap();
    let graph = write(dir.path(), "g.el", "0 1\n1 2\n");
    let cases = [
        ("fn main() -> i32 { let a: i32 = 5; let b: i32 = 0; return a / b; }", "division by zero"),
        ("fn main() -> u64 { let a: u64 = 5; let b: u64 = 0; return a % b; }", "remainder by zero"),
        (
            "fn main() -> i32 { let a: i32 = -2147483647 - 1; let b: i32 = -1; return a / b; }",
            "division overflows: -2147483648 / -1",
        ),
        (
            "fn main() -> i64 { let a: i64 = -9223372036854775807 - 1; let b: i64 = -1; return a % b; }",
            "remainder overflows: -9223372036854775808 % -1",
        ),
        (
            "const A: i64 = -9223372036854775807 - 1;\nfn f(x: i64) -> i64 { return x / -1; }\n\
             fn main() -> i64 { return f(A); }",
            "division overflows",
        ),
    ];
    for (i, (source, message)) in cases.iter().enumerate() {
        let program = write(dir.path(), &format!("host{i}.grail"), source);
        for devices in [&["--target", "cpu"][..], &["--devices", "cpu,cpu"]] {
            let out = grail(&[&["run", &program, "--graph", &graph][..], devices].concat());
            assert_eq!(out.status.code(), Some(70), "{source} on {devices:?}: {}", stderr(&out));
            let expected = format!("error: the program failed: in host code: {message}");
            assert!(stderr(&out).contains(&expected), "{source} on {devices:?}: {}", stderr(&out));
        }
    }
    // Its neighbours divide as usual.
    let fine = write(
        dir.path(),
        "fine.grail",
        "fn main() -> i32 { let a: i32 = -2147483647; let b: i32 = -1; return a / b + a % b; }",
    );
    let out = grail(&["run", &fine, "--graph", &graph, "--target", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("result    inf"), "{}", stdout(&out));
}

/// A kernel's division of a signed minimum by -1 stops it (exit status 70) even where the C
/// compiler knows both operands, which it would fold to the minimum; so does a zero divisor it
/// knows. Each case runs alone (`which`), for `/` and `%`, i32 and i64, unsigned by zero.
#[test]
fn kernel_division_faults_exit_70_whatever_the_c_compiler_folds() {
    let dir = tempfile::tempdir().unwrap();
    let graph = write(dir.path(), "g.el", "0 1\n1 2\n2 0\n");
    let program = write(
        dir.path(),
        "divide.grail",
        "graph { node x: i32; node y: i64; node z: u32; }\nparam which: u32 = 0;\noutput x;\n\
         kernel div32() { forall u in G.nodes() { let m: i32 = -2147483647 - 1; let d: i32 = -1; u.x = m / d; } }\n\
         kernel rem32() { forall u in G.nodes() { let m: i32 = -2147483647 - 1; let d: i32 = -1; u.x = m % d; } }\n\
         kernel div64() { forall u in G.nodes() { let m: i64 = -9223372036854775807 - 1; let d: i64 = -1; u.y = m / d; } }\n\
         kernel rem64() { forall u in G.nodes() { let m: i64 = -9223372036854775807 - 1; let d: i64 = -1; u.y = m % d; } }\n\
         kernel zero() { forall u in G.nodes() { let d: u32 = 0; u.z = 7 / d; } }\n\
         kernel fine() { forall u in G.nodes() { let m: i32 = -2147483647; let d: i32 = -1; u.x = m / d + m % d; } }\n\
         fn main() {\n\
             if which == 0 { invoke div32(); } else if which == 1 { invoke rem32(); }\n\
             else if which == 2 { invoke div64(); } else if which == 3 { invoke rem64(); }\n\
             else if which == 4 { invoke zero(); } else { invoke fine(); }\n\
         }\n",
    );
    for (which, kernel) in ["div32", "rem32", "div64", "rem64", "zero"].iter().enumerate() {
        let which = format!("which={which}");
        for devices in [&["--target", "cpu"][..], &["--devices", "cpu,cpu"]] {
            let out = grail(&[&["run", &program, "--graph", &graph, "--param", &which][..], devices].concat());
            assert_eq!(out.status.code(), Some(70), "{kernel} on {devices:?}: {}", stderr(&out));
            let expected = format!("kernel `{kernel}` stopped on an arithmetic fault");
            assert!(stderr(&out).contains(&expected), "{kernel} on {devices:?}: {}", stderr(&out));
        }
    }
    let output = dir.path().join("x.txt");
    let out = grail(&[
        "run",
        &program,
        "--graph",
        &graph,
        "--param",
        "which=5",
        "--target",
        "cpu",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "inf\ninf\ninf\n");
}

/// A constant whose value divides a signed minimum by -1 is a compile error at its place.
#[test]
fn constant_division_overflow_is_a_compile_error() {
    let dir = tempfile::tempdir().unwrap();
    for (op, what) in [("/", "B"), ("%", "B")] {
        let program = write(
            dir.path(),
            "const.grail",
            &format!("const A: i32 = -2147483647 - 1;\nconst B: i32 = A {op} -1;\nfn main() -> i32 {{ return B; }}\n"),
        );
        let out = grail(&["check", &program]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let expected = format!("const.grail:2:16: error: the value of constant `{what}` overflows");
        assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    }
}

/// Values around every integer type's bounds, and the special ones.
const VALUES: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    -0.5,
    -1.0,
    0.999,
    -5.5,
    1.5,
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
    -9.3e18,
    1.8e19,
    18446744073709551615.0,
    1e20,
    -1e20,
    f64::MAX,
    f64::MIN,
    5e-324,
];

/// A grail expression of type f64 for `x` (NaN and the infinities have no literal).
fn literal(x: f64) -> String {
    if x.is_nan() {
        "(0.0 / 0.0)".into()
    } else if x.is_infinite() {
        format!("({}1.0 / 0.0)", if x < 0.0 { "-" } else { "" })
    } else {
        format!("{x:?}")
    }
}

/// What `print` writes for an integer: its decimal digits, `inf` for its type's largest value.
fn shown<T: PartialEq + std::fmt::Display>(x: T, max: T) -> String {
    if x == max { "inf".into() } else { x.to_string() }
}

/// Rust's `x as T` for every integer type, from `x` and from `x as f32`, as `print` shows them.
fn rust_casts(x: f64) -> String {
    let y = x as f32;
    [
        shown(x as i32, i32::MAX),
        shown(x as i64, i64::MAX),
        shown(x as u32, u32::MAX),
        shown(x as u64, u64::MAX),
        shown(y as i32, i32::MAX),
        shown(y as i64, i64::MAX),
        shown(y as u32, u32::MAX),
        shown(y as u64, u64::MAX),
    ]
    .join(" ")
}

/// The casts of `x` (an f64 expression) into the node's properties.
fn kernel_casts(x: &str) -> String {
    format!(
        "let x: f64 = {x}; let y = x as f32; u.a = x as i32; u.b = x as i64; u.c = x as u32; u.d = x as u64; \
         u.e = y as i32; u.f = y as i64; u.g = y as u32; u.h = y as u64;"
    )
}

const CAST_GRAPH: &str = "graph { node a: i32; node b: i64; node c: u32; node d: u64; \
                          node e: i32; node f: i64; node g: u32; node h: u64; }\n";

/// Float-to-integer `as` in kernels is Rust's (toward zero, saturating at the bounds, NaN to 0),
/// from f64 and f32 to every integer type: from literals the C compiler folds, and from a param
/// it cannot see; host code computes the same.
#[test]
fn float_to_integer_casts_in_kernels_saturate_as_rust_does() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = VALUES.len();
    let graph = write(dir.path(), "g.el", &format!("{} {}\n", nodes - 1, nodes - 1));
    let print_node = "print(u.a, u.b, u.c, u.d, u.e, u.f, u.g, u.h);";
    // Literals: node i holds value i's casts; host code prints its own after the kernels'.
    let mut source = format!("{CAST_GRAPH}kernel literals() {{ forall u in G.nodes() {{\n");
    for (i, &x) in VALUES.iter().enumerate() {
        source += &format!("    if (u as u32) == {i} {{ {} }}\n", kernel_casts(&literal(x)));
    }
    source += &format!("}} }}\nfn main() {{\n    invoke literals();\n    for u in G.nodes() {{ {print_node} }}\n");
    for (i, &x) in VALUES.iter().enumerate() {
        let (x, y) = (literal(x), format!("y{i}"));
        source += &format!(
            "    let {y} = {x} as f32;\n    print({x} as i32, {x} as i64, {x} as u32, {x} as u64, {y} as i32, \
             {y} as i64, {y} as u32, {y} as u64);\n"
        );
    }
    source += "}\n";
    let program = write(dir.path(), "literals.grail", &source);
    let out = grail(&["run", &program, "--graph", &graph, "--target", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: Vec<String> = VALUES.iter().map(|&x| rust_casts(x)).collect();
    let lines: Vec<String> = stdout(&out).lines().take(2 * nodes).map(str::to_string).collect();
    assert_eq!(lines[..nodes], expected[..], "kernels, from literals");
    assert_eq!(lines[nodes..], expected[..], "host code");
    // A param: one value per run.
    let source = format!(
        "{CAST_GRAPH}param p: f64 = 0.0;\nkernel casts() {{ forall u in G.nodes() {{ {} }} }}\n\
         fn main() {{ invoke casts(); let u = 0 as Node; {print_node} }}\n",
        kernel_casts("p")
    );
    let program = write(dir.path(), "param.grail", &source);
    for (&x, expected) in VALUES.iter().zip(&expected) {
        let param = format!("p={x:?}");
        let out = grail(&["run", &program, "--graph", &graph, "--target", "cpu", "--param", &param]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).lines().next(), Some(expected.as_str()), "kernel, from param {x:?}");
    }
}
