//! Messages say each thing once, and the commands agree with each other.

mod common;

use std::process::{Command, Output};

use common::grail;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_file_is_named_once_with_the_reason_once() {
    let out = grail(&["run", "bfs", "-g", "/nonexistent/g.el"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert_eq!(text.matches("/nonexistent/g.el").count(), 1, "{text}");
    assert_eq!(text.matches("No such file or directory").count(), 1, "{text}");
}

/// The error message exactly: one `error:` line.
fn error_line(out: &Output) -> String {
    let text = stderr(out);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{text}");
    errors[0].to_string()
}

#[test]
fn errors_say_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.el");
    std::fs::write(&graph, "0 1\n").unwrap();
    let graph = graph.to_str().unwrap();

    let out = grail(&["run", "bfs", "-g", "/nonexistent/g.el"]);
    assert_eq!(
        error_line(&out),
        "error: cannot load the graph: /nonexistent/g.el: No such file or directory (os error 2)"
    );

    // The temporary file beside the target is no part of the message.
    let out = grail(&["run", "bfs", "-g", graph, "-o", "/nonexistent/levels.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        error_line(&out),
        "error: cannot write the result: /nonexistent/levels.txt: No such file or directory (os error 2)"
    );
    let out = grail(&["gen", "grid", "--rows", "3", "-o", "/nonexistent/grid.el"]);
    assert_eq!(
        error_line(&out),
        "error: cannot write the generated graph: /nonexistent/grid.el: No such file or directory (os error 2)"
    );

    let out = grail(&["mesh", "check", "/nonexistent/m.node"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(error_line(&out), "error: /nonexistent/m.node: No such file or directory (os error 2)");

    // A tuning database that cannot be read: an error for tune, a warning for run.
    let database = dir.path().join("tuning.json");
    std::fs::create_dir(&database).unwrap();
    let tune = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["-q", "tune", "bfs", "-g", graph, "--budget", "1"])
        .env("GRAIL_TUNING_DB", &database)
        .env("GRAIL_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(tune.status.code(), Some(1));
    assert_eq!(
        error_line(&tune),
        format!("error: cannot read the tuning database {}: Is a directory (os error 21)", database.display())
    );

    // A cache folder that cannot be made says it is the cache folder, and how it was chosen.
    let file = dir.path().join("plain");
    std::fs::write(&file, "").unwrap();
    for cache in [file.join("cache"), file.join("deeper").join("cache")] {
        let run = Command::new(env!("CARGO_BIN_EXE_grail"))
            .args(["-q", "run", "bfs", "-g", graph])
            .env("GRAIL_CACHE_DIR", &cache)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert!(
            error_line(&run).starts_with(&format!(
                "error: cannot use {} as the folder of compiled modules ($GRAIL_CACHE_DIR, default ~/.cache/grail): ",
                cache.display()
            )),
            "{}",
            stderr(&run)
        );
    }
}

#[test]
fn a_cc_that_cannot_be_split_or_flags_that_fail_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "0 1\n").unwrap();
    let run = |cc: &str, cflags: &str| {
        Command::new(env!("CARGO_BIN_EXE_grail"))
            .args(["-q", "run", "bfs", "-g", input.to_str().unwrap()])
            .env("CC", cc)
            .env("GRAIL_CFLAGS", cflags)
            .env("GRAIL_CACHE_DIR", dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let out = run("cc 'unclosed", "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        error_line(&out).starts_with(
            "error: no C compiler found: `cc 'unclosed` cannot be split into words (an unclosed single quote). "
        ),
        "{}",
        stderr(&out)
    );
    let out = run("cc -DGRAIL_UNUSED='a b'", "-Werror=no-such-warning-grail");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "check the flags added by $CC and $GRAIL_CFLAGS (-DGRAIL_UNUSED=a b -Werror=no-such-warning-grail); \
             without them, this is a bug in grail:"
        ),
        "{}",
        stderr(&out)
    );
    // Quoted words reach the compiler whole.
    let out = run("cc -DGRAIL_UNUSED='a b'", "'-DGRAIL_OTHER=c d'");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn compile_shows_what_run_runs_and_takes_variants() {
    let ir = |args: &[&str]| String::from_utf8(grail(args).stdout).unwrap();
    assert!(ir(&["compile", "bfs", "--emit", "ir"]).starts_with("module bfs_do"));
    assert!(ir(&["compile", "sssp", "--emit", "ir"]).starts_with("module sssp_nf"));
    assert!(ir(&["compile", "bfs", "--variant", "wl", "--emit", "ir"]).starts_with("module bfs\n"));
    assert!(ir(&["compile", "sssp_wl", "--emit", "ir"]).starts_with("module sssp_wl"));
    assert_eq!(grail(&["compile", "bfs", "--variant", "fast", "--emit", "ir"]).status.code(), Some(2));
    assert_eq!(grail(&["compile", "sssp_wl", "--variant", "wl", "--emit", "ir"]).status.code(), Some(2));
}

#[test]
fn variant_help_needs_no_graph_and_everything_else_does() {
    let help = grail(&["run", "sssp", "--variant", "help"]);
    assert!(help.status.success(), "{}", stderr(&help));
    assert!(String::from_utf8_lossy(&help.stdout).contains("nf"));
    // compile and tune take it alike, with the same list.
    for args in [&["compile", "sssp", "--variant", "help"][..], &["tune", "sssp", "--variant", "help"]] {
        let listed = grail(args);
        assert!(listed.status.success(), "{args:?}: {}", stderr(&listed));
        assert_eq!(listed.stdout, help.stdout, "{args:?}");
    }
    assert_eq!(grail(&["compile", "sssp", "--variant", "wl"]).status.code(), Some(2));
    let missing = grail(&["run", "sssp", "--variant", "wl"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("--graph"));
}

#[test]
fn format_hints_name_the_flag_the_command_takes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "0 1\n").unwrap();
    let out = dir.path().join("g.unknown");
    let converted = grail(&["convert", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(stderr(&converted).contains("--to FORMAT"), "{}", stderr(&converted));
    assert_eq!(stderr(&converted).matches("g.unknown").count(), 1, "{}", stderr(&converted));
    let generated = grail(&["gen", "rmat", "--scale", "3", "-o", out.to_str().unwrap()]);
    assert!(stderr(&generated).contains("--format FORMAT"), "{}", stderr(&generated));
}

#[test]
fn cc_with_arguments_is_split_like_make_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "0 1\n1 2\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["-q", "run", "bfs", "-g", input.to_str().unwrap(), "--verify"])
        .env("CC", "cc -O0")
        .env("GRAIL_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn demo_json_names_each_rows_variant() {
    let out = grail(&["demo", "--json", "--scale", "8"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["variant"].is_string()), "{rows:?}");
}

#[test]
fn a_runaway_program_is_stopped_by_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("forever.grail");
    std::fs::write(
        &program,
        "graph { node x: u32 = 0; }\noutput x;\n\
         kernel spin() { forall u in G.nodes() { while !atomic_cas(u.x, 7, 0) {} } }\n\
         fn main() { invoke spin(); }\n",
    )
    .unwrap();
    let graph = dir.path().join("g.el");
    std::fs::write(&graph, "0 1\n").unwrap();
    let started = std::time::Instant::now();
    let out = grail(&["run", program.to_str().unwrap(), "-g", graph.to_str().unwrap(), "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(124));
    assert_eq!(
        error_line(&out),
        "error: the run took longer than --timeout 1 s and was stopped in kernel `spin`",
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed().as_secs() < 60);
    assert_eq!(grail(&["run", "bfs", "-g", graph.to_str().unwrap(), "--timeout", "-3"]).status.code(), Some(2));
    // A run that ends in time is not disturbed.
    let quick = grail(&["run", "bfs", "-g", graph.to_str().unwrap(), "--timeout", "60"]);
    assert!(quick.status.success(), "{}", stderr(&quick));
    // A program stuck on the host, between kernels, is stopped too; the old result file stays.
    let host = dir.path().join("host.grail");
    std::fs::write(
        &host,
        "graph { node x: u32 = 0; }\noutput x;\nfn main() { let mut i: u32 = 0; while i < 1 { i = 0; } }\n",
    )
    .unwrap();
    let result = dir.path().join("x.txt");
    std::fs::write(&result, "old\n").unwrap();
    let args = [
        "run",
        host.to_str().unwrap(),
        "-g",
        graph.to_str().unwrap(),
        "--timeout",
        "0.5",
        "-o",
        result.to_str().unwrap(),
    ];
    let out = grail(&args);
    assert_eq!(out.status.code(), Some(124));
    assert_eq!(error_line(&out), "error: the run took longer than --timeout 0.5 s and was stopped");
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "old\n");
}

#[test]
fn help_lists_the_exit_statuses() {
    let help = String::from_utf8(grail(&["--help"]).stdout).unwrap();
    for status in
        ["0 success", "2 a usage error", "3 a verifier", "70 generated code faulted", "124 `grail run --timeout`"]
    {
        assert!(help.contains(status), "{status}: {help}");
    }
}

#[test]
fn checks_are_accepted_on_the_cpu_which_always_checks() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("divide.grail");
    std::fs::write(
        &program,
        "graph { node level: u32 = 1; }\nparam zero: u32 = 0;\noutput level;\n\
         kernel split() { forall u in G.nodes() { u.level = u.level / zero; } }\nfn main() { invoke split(); }\n",
    )
    .unwrap();
    let graph = dir.path().join("g.el");
    std::fs::write(&graph, "0 1\n").unwrap();
    let (program, graph) = (program.to_str().unwrap(), graph.to_str().unwrap());
    for extra in [&[][..], &["--checks"]] {
        let out = grail(&[&["run", program, "-g", graph][..], extra].concat());
        assert_eq!(out.status.code(), Some(70), "{}", stderr(&out));
        assert!(stderr(&out).contains("kernel `split` stopped on an arithmetic fault"), "{}", stderr(&out));
    }
    let fine = grail(&["run", "bfs", "-g", graph, "--checks", "--verify"]);
    assert!(fine.status.success(), "{}", stderr(&fine));
}
