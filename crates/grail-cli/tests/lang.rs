//! `grail check` and `grail compile` as users run them.

use std::process::{Command, Output};

fn grail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail")).args(args).output().expect("grail runs")
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

const BFS: &str = "graph { node level: u32 = INF; }\nparam source: Node;\noutput level;\n\
kernel expand(next: u32) { forall u in worklist { for e in u.out_edges() { let v = e.dst; \
if v.level == INF { v.level = next; push(v); } } } }\n\
fn main() { source.level = 0; let mut next: u32 = 1; iterate expand(next) initial [source] { next += 1; } }\n";

#[test]
fn check_accepts_a_valid_program() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bfs.grail", BFS);
    let out = grail(&["check", &file]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("{file}: ok\n"));
    assert!(out.stdout.is_empty());
}

#[test]
fn check_reports_every_error_with_place_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.grail", "fn main() {\n    let x = 1\n}\nfn f() -> bool { return a < b < c; }\n");
    let out = grail(&["check", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("{file}:2:14: error: expected `;` after the `let` statement, found `}}`")),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("{file}:4:31: error: comparison operators cannot be chained")), "{stderr}");
    assert!(stderr.contains("2 |     let x = 1"), "{stderr}");
    assert!(stderr.lines().any(|l| l.trim_start().starts_with('|') && l.contains('^')), "{stderr}");
    // Not a terminal: no colour codes.
    assert!(!stderr.contains('\x1b'), "{stderr}");
    assert!(stderr.trim_end().ends_with("2 errors"), "{stderr}");
}

#[test]
fn check_names_a_file_it_cannot_read() {
    let out = grail(&["check", "/no/such/dir/prog.grail"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("cannot read /no/such/dir/prog.grail"), "{stderr}");
}

#[test]
fn check_finds_suite_programs_by_name() {
    let out = grail(&["check", "bfs"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "bfs: ok\n");
}

#[test]
fn compile_emits_canonical_source_that_is_a_fixpoint() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bfs.grail", BFS);
    let out = grail(&["compile", &file, "--emit", "ast"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.starts_with("graph {\n    node level: u32 = INF;\n}\n\nparam source: Node;\n"), "{printed}");
    assert!(printed.contains("    iterate expand(next) initial [source] {\n        next += 1;\n    }\n"), "{printed}");
    let again = write(dir.path(), "printed.grail", &printed);
    let out = grail(&["compile", &again, "--emit", "ast"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), printed);
}

#[test]
fn compile_fails_on_errors_and_unknown_stages() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.grail", "fn main( {}\n");
    let out = grail(&["compile", &file, "--emit", "ast"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8(out.stderr).unwrap().contains(&format!("{file}:1:10: error:")));
    let out = grail(&["compile", &file, "--emit", "ptx"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn compile_emits_cuda_for_the_gpu_backend() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "deg.grail",
        "graph { node d: u32; }\noutput d;\nkernel degrees() { forall u in G.nodes() { u.d = u.degree(); } }\n\
         fn main() { invoke degrees(); }\n",
    );
    let out = grail(&["compile", &file, "--emit", "cuda"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let cuda = String::from_utf8(out.stdout).unwrap();
    assert!(cuda.contains("extern \"C\" __global__ void grail_k0_0("), "{cuda}");
    assert!(cuda.contains("GRAIL_PHASE void grail_k0_0_run("), "{cuda}");
}

#[test]
fn input_collections_come_from_files_in_the_output_format() {
    let dir = tempfile::tempdir().unwrap();
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/../grail-lang/tests/programs/linked_input.grail");
    let graph = write(dir.path(), "g.el", "0 1\n");
    let n = 50u32;
    let links: String = (0..n).map(|i| format!("{} {} 0\n", 3 * i, (i + 7) % n)).collect();
    let links = write(dir.path(), "links.txt", &links);
    let out = dir.path().join("out.txt");
    let run = grail(&["run", program, "-g", &graph, "--input", &format!("links={links}"), "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let written = std::fs::read_to_string(&out).unwrap();
    let expected: String =
        (0..n).map(|i| format!("{} {} {}\n", 3 * i, (i + 7) % n, 3 * i + 3 * ((i + 7) % n))).collect();
    assert_eq!(written, expected);
    // What is missing, unknown or malformed is named.
    let missing = grail(&["run", program, "-g", &graph]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--input links=FILE"));
    let unknown = grail(&["run", program, "-g", &graph, "--input", &format!("links={links}"), "--input", "nodes=x"]);
    assert_eq!(unknown.status.code(), Some(2));
    let bad = write(dir.path(), "bad.txt", "1 2 0\n1 x 0\n");
    let malformed = grail(&["run", program, "-g", &graph, "--input", &format!("links={bad}")]);
    assert_eq!(malformed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&malformed.stderr).contains("bad.txt: line 2: `x` is not an element index"));
}

#[test]
fn input_properties_come_from_files_of_one_value_per_node() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(
        dir.path(),
        "start.grail",
        "graph { node start: u64; node twice: u64; }\ninput start;\noutput twice;\n\
         kernel double() { forall u in G.nodes() { u.twice = 2 * u.start; } }\nfn main() { invoke double(); }\n",
    );
    let graph = write(dir.path(), "g.el", "0 1\n1 2\n2 3\n");
    let start = write(dir.path(), "start.txt", "7\n# a comment\n0\ninf\n5\n");
    let out = dir.path().join("out.txt");
    let run =
        grail(&["run", &program, "-g", &graph, "--input", &format!("start={start}"), "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let twice: Vec<String> = std::fs::read_to_string(&out).unwrap().lines().map(str::to_string).collect();
    assert_eq!(twice, ["14", "0", (u64::MAX.wrapping_mul(2)).to_string().as_str(), "10"]);
    // Too few values, or a value that is not a number, is named.
    let short = write(dir.path(), "short.txt", "1\n2\n");
    let run = grail(&["run", &program, "-g", &graph, "--input", &format!("start={short}")]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("takes one u64 per node of the graph (4), given 2 row(s)"));
    let bad = write(dir.path(), "bad.txt", "1\nx\n3\n4\n");
    let run = grail(&["run", &program, "-g", &graph, "--input", &format!("start={bad}")]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("bad.txt: line 2"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// An input property over several devices: each node's value reaches its owner and its ghosts
/// (read through them here), and the result equals one device's.
#[test]
fn input_properties_reach_every_part_of_a_partitioned_run() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(
        dir.path(),
        "spread.grail",
        "graph { node start: u64; node acc: u64; }\ninput start;\noutput acc;\n\
         kernel spread() { forall u in G.nodes() { for v in u.neighbors() { atomic_add(v.acc, v.start * 1000 + u.start); } } }\n\
         fn main() { invoke spread(); }\n",
    );
    let graph = dir.path().join("g.gcsr");
    let generated = grail(&["gen", "rmat", "--scale", "9", "-o", graph.to_str().unwrap()]);
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let start: String = (0..512u64).map(|u| format!("{}\n", (u * 7919) % 1013)).collect();
    let start = write(dir.path(), "start.txt", &start);
    let graph = graph.to_str().unwrap();
    let input = format!("start={start}");
    let one = dir.path().join("one.txt");
    let run = grail(&["run", &program, "-g", graph, "--input", &input, "-o", one.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for (devices, partition) in [("cpu*2", "ordered"), ("cpu*3", "random")] {
        let parts = dir.path().join(format!("{devices}.txt"));
        let run = grail(&[
            "run",
            &program,
            "-g",
            graph,
            "--input",
            &input,
            "--devices",
            devices,
            "--partition",
            partition,
            "-o",
            parts.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{devices}: {}", String::from_utf8_lossy(&run.stderr));
        assert_eq!(std::fs::read_to_string(&parts).unwrap(), std::fs::read_to_string(&one).unwrap(), "{devices}");
    }
}
