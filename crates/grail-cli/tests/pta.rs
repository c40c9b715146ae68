//! `grail pta extract` and `grail pta solve` as users run them: C programs (tests/pta/*.c)
//! compiled by clang to LLVM IR, their constraints extracted, solved and verified, and what
//! pointers may point to checked by name; the error paths; and a generated program of
//! thousands of constraints, whose solution must equal the reference solver's.
//!
//! The tests that need clang print a message and pass when it is not installed, unless
//! `GRAIL_REQUIRE_CLANG=1` (as CI sets it) makes that a failure.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::grail;

/// Whether clang can be run; when not, says so, or fails under `GRAIL_REQUIRE_CLANG=1`.
fn have_clang(test: &str) -> bool {
    let found = Command::new("clang").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("GRAIL_REQUIRE_CLANG").as_deref() != Ok("1"),
            "clang is not installed, and GRAIL_REQUIRE_CLANG=1 requires it"
        );
        eprintln!("{test}: skipped: clang is not installed (GRAIL_REQUIRE_CLANG=1 makes this a failure)");
    }
    found
}

/// Compiles C source to textual LLVM IR as the docs say to: `-O0 -g0`, and with the source's
/// names kept (`-fno-discard-value-names`) when `names` is set, so that stack objects are
/// `main.x` rather than `main.2`.
fn compile(source: &Path, ll: &Path, names: bool) {
    let mut clang = Command::new("clang");
    clang.args(["-S", "-emit-llvm", "-O0", "-g0"]);
    if names {
        clang.arg("-fno-discard-value-names");
    }
    let out = clang.arg("-o").arg(ll).arg(source).output().expect("clang runs");
    assert!(out.status.success(), "clang {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What `grail pta solve --json` says and the points-to file it wrote.
struct Analysis {
    summary: serde_json::Value,
    /// Each pointer's targets, as the file lists them.
    sets: BTreeMap<String, Vec<String>>,
    cons: PathBuf,
    pts: PathBuf,
}

impl Analysis {
    /// Extracts, solves and verifies `ll` in `dir`; no warnings expected.
    fn of(ll: &Path, dir: &Path) -> Analysis {
        let stem = ll.file_stem().unwrap().to_str().unwrap();
        let cons = dir.join(format!("{stem}.cons"));
        let pts = dir.join(format!("{stem}.pts"));
        let extracted = grail(&["pta", "extract", path(ll), "-o", path(&cons)]);
        let stderr = String::from_utf8_lossy(&extracted.stderr);
        assert!(extracted.status.success(), "{stderr}");
        assert!(!stderr.contains("warning:"), "{stem}: the model should cover this program: {stderr}");
        assert!(stderr.contains(" variables, ") && stderr.contains(" address-of, "), "no summary: {stderr}");
        let solved = grail(&["pta", "solve", path(&cons), "--verify", "--json", "-o", path(&pts)]);
        assert!(solved.status.success(), "{}", String::from_utf8_lossy(&solved.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&solved.stdout).unwrap();
        assert_eq!(summary["verified"], true, "{summary}");
        // The grail program by default, checked by the reference inside --verify and here by
        // the reference's file being the same text.
        assert_eq!(summary["target"], "cpu");
        let text = std::fs::read_to_string(&pts).unwrap();
        let reference_pts = dir.join(format!("{stem}.reference.pts"));
        let reference = grail(&["pta", "solve", path(&cons), "--target", "reference", "-o", path(&reference_pts)]);
        assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));
        assert_eq!(
            text,
            std::fs::read_to_string(&reference_pts).unwrap(),
            "{stem}: grail's sets are not the reference's"
        );
        let mut sets = BTreeMap::new();
        let mut previous: Option<String> = None;
        for line in text.lines() {
            let (name, targets) = line.rsplit_once(':').unwrap_or_else(|| panic!("`{line}` has no `:`"));
            let targets: Vec<String> = targets.split_whitespace().map(String::from).collect();
            assert!(!targets.is_empty(), "`{line}`: only non-empty sets are written");
            assert!(targets.is_sorted() && targets.windows(2).all(|w| w[0] != w[1]), "`{line}`: unsorted targets");
            assert!(previous.as_deref().is_none_or(|p| p < name), "`{line}`: lines not sorted by name");
            previous = Some(name.to_string());
            sets.insert(name.to_string(), targets);
        }
        assert_eq!(summary["pointers"], sets.len());
        assert_eq!(summary["facts"], sets.values().map(Vec::len).sum::<usize>());
        Analysis { summary, sets, cons, pts }
    }

    /// The objects (not SSA values: their names hold no `%`) that may point to `target`.
    fn holders(&self, target: &str) -> Vec<&str> {
        let objects = self.sets.iter().filter(|(v, _)| !v.contains('%'));
        objects.filter(|(_, s)| s.iter().any(|t| t == target)).map(|(v, _)| v.as_str()).collect()
    }

    /// What `var` may point to (nothing when the file has no line for it).
    fn pts(&self, var: &str) -> Vec<&str> {
        self.sets.get(var).map_or(Vec::new(), |s| s.iter().map(String::as_str).collect())
    }

    #[track_caller]
    fn expect(&self, var: &str, targets: &[&str]) {
        assert_eq!(self.pts(var), targets, "the set of `{var}`");
    }
}

/// Compiles tests/pta/NAME.c (names kept) and analyses it; also checks that the same program
/// compiled with clang's default of discarding names gives the same analysis, up to names.
fn program(name: &str, dir: &Path) -> Analysis {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pta").join(format!("{name}.c"));
    let ll = dir.join(format!("{name}.ll"));
    compile(&source, &ll, true);
    let named = Analysis::of(&ll, dir);
    let unnamed_ll = dir.join(format!("{name}-unnamed.ll"));
    compile(&source, &unnamed_ll, false);
    let unnamed = Analysis::of(&unnamed_ll, dir);
    for key in ["variables", "constraints", "constraints_by_kind", "pointers", "facts"] {
        assert_eq!(named.summary[key], unnamed.summary[key], "{name}: {key} depends on the names");
    }
    named
}

#[test]
fn pointers_to_locals_and_a_swap_through_double_pointers() {
    if !have_clang("swap") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("swap", dir.path());
    // Flow-insensitively, after the swap either pointer may hold either address...
    a.expect("main.p", &["main.x", "main.y"]);
    a.expect("main.q", &["main.x", "main.y"]);
    a.expect("swap.t", &["main.x", "main.y"]);
    // ...but `r` is not swapped, and nothing points to `z` but `r`.
    a.expect("main.r", &["main.z"]);
    assert_eq!(a.holders("main.z"), ["main.r"]);
    // Each parameter slot holds only the address its argument was.
    a.expect("swap.a.addr", &["main.p"]);
    a.expect("swap.b.addr", &["main.q"]);
    // An alloca's value is the address of its stack object.
    a.expect("main.%x", &["main.x"]);
    a.expect("main.x", &[]);
}

#[test]
fn globals_and_their_initializers() {
    if !have_clang("globals") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("globals", dir.path());
    a.expect("@gp", &["@g1", "@g2"]);
    a.expect("@gpp", &["@gp"]);
    a.expect("@table", &["@g1", "@g2"]);
    a.expect("@unused", &["@g3"]);
    a.expect("main.l", &["@g1", "@g2"]);
    a.expect("main.m", &["@g1", "@g2"]);
    // Nothing loaded from `gpp` or `table` can reach `g3`.
    assert_eq!(a.holders("@g3"), ["@unused"]);
}

#[test]
fn heap_allocation_sites_and_a_linked_list() {
    if !have_clang("list") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("list", dir.path());
    // One object per allocation call site (compiled with -g0 there is no line: `#N` counts the
    // sites of a function).
    a.expect("push.n", &["malloc@push#1"]);
    a.expect("main.list", &["malloc@push#1"]);
    // The list's nodes point to nodes of the same site (`next`; fields are not told apart).
    a.expect("malloc@push#1", &["malloc@push#1"]);
    a.expect("sum.cur", &["malloc@push#1"]);
    // The two other sites are other objects: `a` and `b` do not alias.
    a.expect("main.a", &["malloc@main#1"]);
    a.expect("main.b", &["malloc@main#2"]);
    a.expect("malloc@main#1", &[]);
}

#[test]
fn function_pointers_and_indirect_calls() {
    if !have_clang("fnptr") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("fnptr", dir.path());
    a.expect("main.fp", &["@identity", "@to_counter"]);
    a.expect("pick.<ret>", &["@identity", "@to_counter"]);
    // `fp(&a)` calls either: `a` flows through `identity`, `to_counter` gives `counter`.
    a.expect("main.r", &["@counter", "main.a"]);
    a.expect("identity.p.addr", &["main.a"]);
    a.expect("to_counter.<ret>", &["@counter"]);
    // A function whose address is never taken is not called indirectly.
    a.expect("direct_only.p.addr", &["main.b"]);
    a.expect("main.d", &["main.b"]);
    a.expect("@actions", &["@bye", "@hello"]);
    a.expect("main.act", &["@bye", "@hello"]);
}

#[test]
fn structs_are_one_object_and_copies_carry_their_pointers() {
    if !have_clang("structs") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("structs", dir.path());
    // `ps->second = &w` stores into `s` (ps points to s); fields are one variable.
    a.expect("main.s", &["main.w", "main.x", "main.y"]);
    a.expect("main.f", &["main.w", "main.x", "main.y"]);
    a.expect("main.k", &["main.w", "main.x", "main.y"]);
    // `t = s` is a memcpy: its contents are s's.
    a.expect("main.t", &["main.w", "main.x", "main.y"]);
    a.expect("main.g", &["main.w", "main.x", "main.y"]);
    a.expect("main.h", &["main.s"]);
    a.expect("main.ps", &["main.s"]);
}

#[test]
fn arrays_of_pointers_are_one_object() {
    if !have_clang("arrays") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = program("arrays", dir.path());
    a.expect("main.arr", &["main.a", "main.b", "main.c"]);
    a.expect("main.pp", &["main.arr"]);
    a.expect("main.e", &["main.a", "main.b", "main.c"]);
    a.expect("main.whole", &["main.arr"]);
    a.expect("main.f", &["main.a", "main.b", "main.c"]);
    // `d` is only ever in `other`.
    a.expect("main.other", &["main.d"]);
    assert!(!a.pts("main.arr").contains(&"main.d"));
}

#[test]
fn standard_output_and_warnings() {
    if !have_clang("stdout") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("env.c");
    std::fs::write(
        &source,
        "char *getenv(const char *name);\nint main(void) { char *h = getenv(\"HOME\"); return h != 0; }\n",
    )
    .unwrap();
    let ll = dir.path().join("env.ll");
    compile(&source, &ll, true);
    // Warnings name the file and line; the constraints go to standard output under `-o -`.
    let run = grail(&["pta", "extract", path(&ll), "-o", "-"]);
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("warning: ") && stderr.contains("env.ll:") && stderr.contains("`@getenv` returns a pointer"),
        "{stderr}"
    );
    assert!(stderr.contains("1 warning"), "{stderr}");
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.lines().any(|l| l == "main.%h = &main.h"), "{text}");
    let cons = dir.path().join("env.cons");
    std::fs::write(&cons, &text).unwrap();
    // The solution on standard output, the summary then on standard error.
    let run = grail(&["pta", "solve", path(&cons), "--verify", "-o", "-"]);
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "main.%h: main.h\nmain.%retval: main.retval\n");
    assert!(String::from_utf8_lossy(&run.stderr).contains("verified"));
}

#[test]
fn errors_name_the_file_and_line_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A malformed constraint file.
    let bad = d.join("bad.cons");
    std::fs::write(&bad, "# three lines\np = &a\n*p = *q\n").unwrap();
    let out = d.join("bad.pts");
    let run = grail(&["pta", "solve", path(&bad), "--verify", "-o", path(&out)]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.cons:3:") && stderr.contains("not a constraint"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one message: {stderr}");
    assert!(!out.exists());
    // Missing files.
    let run = grail(&["pta", "solve", path(&d.join("none.cons"))]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("none.cons: No such file"));
    let cons = d.join("none.cons");
    let run = grail(&["pta", "extract", path(&d.join("none.ll")), "-o", path(&cons)]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("none.ll: No such file"));
    assert!(!cons.exists());
    // Malformed LLVM IR: a store without its pointer, an unterminated string.
    let ll = d.join("bad.ll");
    std::fs::write(&ll, "define i32 @main() {\n  %p = alloca ptr\n  store ptr %p, ptr\n  ret i32 0\n}\n").unwrap();
    let run = grail(&["pta", "extract", path(&ll), "-o", path(&cons)]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.ll:3:") && stderr.contains("store"), "{stderr}");
    assert!(!cons.exists());
    std::fs::write(&ll, "; fine\n@s = global [3 x i8] c\"ab\n").unwrap();
    let run = grail(&["pta", "extract", path(&ll), "-o", path(&cons)]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("bad.ll:2:"));
    assert!(!cons.exists());
    // An existing output is not touched by a failed run.
    std::fs::write(&out, "kept\n").unwrap();
    assert_eq!(grail(&["pta", "solve", path(&bad), "-o", path(&out)]).status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "kept\n");
    // --json and -o - both want standard output: a usage error.
    let good = d.join("good.cons");
    std::fs::write(&good, "p = &a\n").unwrap();
    assert_eq!(grail(&["pta", "solve", path(&good), "--json", "-o", "-"]).status.code(), Some(2));
}

/// C text of `functions` functions of one signature, each allocating, storing through pointers,
/// calling the next function directly and a function-pointer table's entry indirectly.
fn generated_program(functions: usize, globals: usize, table: usize) -> String {
    let mut c = String::from(
        "typedef __SIZE_TYPE__ size_t;\nvoid *malloc(size_t size);\nstruct obj { struct obj *next; int *data; };\n",
    );
    for g in 0..globals {
        c += &format!("int g{g};\nint *gp{g} = &g{g};\n");
    }
    for i in 0..functions {
        c += &format!("struct obj *f{i}(struct obj *o, int *d);\n");
    }
    let entries: Vec<String> = (0..table).map(|k| format!("f{}", (k * 37) % functions)).collect();
    c += &format!("struct obj *(*table[{table}])(struct obj *, int *) = {{{}}};\n", entries.join(", "));
    for i in 0..functions {
        let data = if i % 3 == 0 { "&local".to_string() } else { format!("&g{}", i % globals) };
        c += &format!(
            "struct obj *f{i}(struct obj *o, int *d) {{
    int local, unshared;
    int *own = &unshared;
    int *p = d;
    struct obj *n = malloc(sizeof *n);
    n->next = o;
    n->data = {data};
    gp{g} = n->data;
    int **pp = &p;
    if (*own > {i}) return n;
    *pp = gp{h};
    struct obj *m = f{next}(n, p);
    struct obj *(*fp)(struct obj *, int *) = table[{slot}];
    struct obj *r = fp(m, gp{g1});
    r->next = n;
    return r->next ? r : m;
}}
",
            g = i % globals,
            h = (i * 7 + 1) % globals,
            next = (i * 11 + 3) % functions,
            slot = i % table,
            g1 = (i + 1) % globals,
        );
    }
    c += "int main(void) { struct obj *o = f0(0, &g0); return o != 0; }\n";
    c
}

#[test]
fn a_generated_program_of_thousands_of_constraints_matches_the_reference() {
    if !have_clang("generated") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("big.c");
    let functions = 200;
    std::fs::write(&source, generated_program(functions, 30, 8)).unwrap();
    let ll = dir.path().join("big.ll");
    compile(&source, &ll, true);
    let a = Analysis::of(&ll, dir.path());
    let constraints = a.summary["constraints"].as_u64().unwrap();
    assert!(constraints > 10_000, "{}", a.summary);
    // The file read back equals the reference solver's solution of the constraints read back.
    let c = grail_pta::read_constraints(&a.cons).unwrap();
    assert_eq!(c.len() as u64, constraints);
    let written = grail_pta::read_points_to(&a.pts, &c).unwrap();
    let reference = grail_pta::solve_sequential(&c);
    if let Some(d) = grail_pta::compare(&written, &reference) {
        panic!("the written solution is not the reference's: {}", d.describe(&c));
    }
    assert_eq!(grail_pta::check_solution(&c, &written), Ok(()));
    // Precise where the program is: each function's `own` points to its `unshared` only, its
    // `n` to its one allocation site only.
    for i in 0..functions {
        a.expect(&format!("f{i}.own"), &[&format!("f{i}.unshared")]);
        a.expect(&format!("f{i}.n"), &[&format!("malloc@f{i}#1")]);
        assert_eq!(a.pts(&format!("f{i}.fp")).len(), 8, "f{i}.fp: the table's functions");
    }
    // The table holds its eight functions; every global pointer keeps its initializer's target.
    let mut table: Vec<String> = (0..8).map(|k| format!("@f{}", (k * 37) % functions)).collect();
    table.sort();
    a.expect("@table", &table.iter().map(String::as_str).collect::<Vec<_>>());
    for g in 0..30 {
        assert!(a.pts(&format!("@gp{g}")).contains(&format!("@g{g}").as_str()), "@gp{g}");
    }
}

#[test]
fn collapse_switches_cycle_collapsing_and_says_what_it_merged() {
    let dir = tempfile::tempdir().unwrap();
    let cons = dir.path().join("cycle.cons");
    // a and b copy each other: one variable when collapsing.
    std::fs::write(&cons, "a = &x\nb = a\na = b\nc = *b\nx = &y\n").unwrap();
    for (switch, collapsed) in [("on", 1), ("off", 0)] {
        let run = grail(&["pta", "solve", path(&cons), "--collapse", switch, "--verify", "--json"]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(summary["verified"], true);
        assert_eq!(summary["collapsed"], collapsed, "{summary}");
        assert_eq!(summary["epochs"], 1, "{summary}");
        assert_eq!(summary["facts"], 4, "{summary}"); // a, b: x; c: y; x: y
    }
    let run = grail(&["pta", "solve", path(&cons), "--collapse", "maybe"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--collapse"));
}
