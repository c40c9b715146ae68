//! Lowering to the IR: every program of the repository lowers, validates and turns into C that
//! compiles; a corpus of semantically wrong programs reports exactly the expected diagnostics;
//! mutated programs never make lowering panic, and whatever lowers is valid.

use std::path::{Path, PathBuf};
use std::process::Command;

use grail_codegen::{CodegenError, emit_c};
use grail_lang::{FileId, SourceMap, compile, diagnostics::render_to_string};

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "grail"))
        .collect();
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The suite's programs, by name.
fn suite() -> Vec<(String, String)> {
    files("../grail-algos/programs")
        .into_iter()
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), read(&p)))
        .collect()
}

/// The complete programs of the specification (those with a `fn main`): its ```grail blocks and
/// the copies under tests/programs.
fn specification_programs() -> Vec<(String, String)> {
    let mut programs: Vec<(String, String)> =
        files("tests/programs").into_iter().map(|p| (p.display().to_string(), read(&p))).collect();
    let spec = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md"));
    let mut rest = spec.as_str();
    let mut index = 0;
    while let Some(start) = rest.find("```grail\n") {
        let body = &rest[start + "```grail\n".len()..];
        let end = body.find("```").expect("a closed code block");
        index += 1;
        programs.push((format!("docs/language.md block {index}"), body[..end].to_string()));
        rest = &body[end..][3..];
    }
    programs.retain(|(_, source)| source.contains("fn main("));
    programs
}

/// Compiles, panicking with the rendered diagnostics on any.
fn lower_clean(name: &str, source: &str) -> grail_ir::Module {
    let (module, diagnostics) = compile(source, FileId(0), name);
    if !diagnostics.is_empty() {
        let mut map = SourceMap::new();
        map.add(name, source);
        panic!("{name}:\n{}", render_to_string(&diagnostics, &map));
    }
    module.expect("no diagnostics means a module")
}

/// Constructs the C emitter did not support at first: the source of an edge handle and in-edges
/// as edges. Random programs may still meet them as unsupported; nothing else may be.
fn tolerated(error: &CodegenError) -> bool {
    match error {
        CodegenError::Unsupported(what) => what.contains("source of an edge") || what.contains("in-edges"),
        _ => false,
    }
}

/// Checks C with the system compiler: `cc -std=c11 -Wall -Werror -fsyntax-only`. Unused variables
/// are allowed, as in the emitter's own tests: every phase of a kernel declares all its locals.
fn c_compiles(name: &str, c: &str) {
    if let Some(errors) = c_compile_errors(name, c) {
        panic!("{name}: the generated C does not compile:\n{errors}\n--- C ---\n{c}");
    }
}

/// The compiler's complaints about `c`, if any.
fn c_compile_errors(name: &str, c: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{}.c", name.replace(['/', ' ', '.'], "_")));
    std::fs::write(&path, c).unwrap();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let output = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Werror", "-Wno-unused-variable", "-fsyntax-only"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    (!output.status.success()).then(|| String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Lowers, validates and emits C that compiles; returns whether the C was emitted.
fn check_program(name: &str, source: &str) -> bool {
    let module = lower_clean(name, source);
    if let Err(e) = grail_ir::validate(&module) {
        panic!("{name}: the lowered module is invalid: {e}\n{}", grail_ir::print(&module));
    }
    match emit_c(&module) {
        Ok(c) => {
            c_compiles(name, &c);
            true
        }
        Err(e) if tolerated(&e) => false,
        Err(e) => panic!("{name}: {e}\n{}", grail_ir::print(&module)),
    }
}

#[test]
fn the_suite_lowers_validates_and_compiles_to_c() {
    let programs = suite();
    assert_eq!(programs.len(), 11, "the suite has 11 programs");
    let mut emitted = 0;
    for (name, source) in &programs {
        emitted += usize::from(check_program(name, source));
    }
    assert_eq!(emitted, programs.len(), "every suite program reaches C");
}

#[test]
fn the_specification_programs_lower_validate_and_compile_to_c() {
    let programs = specification_programs();
    assert!(programs.len() >= 7, "{} complete programs", programs.len());
    for (name, source) in &programs {
        assert!(check_program(name, source), "{name}: unsupported by the C emitter");
    }
}

/// One expected diagnostic: `//~ LINE:COL: message` in the file.
fn expectations(source: &str) -> Vec<(usize, usize, String)> {
    source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("//~"))
        .map(|spec| {
            let mut parts = spec.trim().splitn(3, ':');
            let line = parts.next().unwrap().trim().parse().expect("a line number");
            let column = parts.next().unwrap().trim().parse().expect("a column number");
            (line, column, parts.next().unwrap_or("").trim().to_string())
        })
        .collect()
}

#[test]
fn semantically_wrong_programs_report_exactly_the_expected_diagnostics() {
    let corpus = files("tests/semantic_errors");
    assert!(corpus.len() >= 30, "the corpus has {} files", corpus.len());
    for path in corpus {
        let name = path.display().to_string();
        let source = read(&path);
        let expected = expectations(&source);
        assert!(!expected.is_empty(), "{name}: no `//~` expectations");
        let mut map = SourceMap::new();
        let file = map.add(name.clone(), source.clone());
        let (program, parse_errors) = grail_lang::parse(&source, file);
        assert!(parse_errors.is_empty(), "{name} must parse:\n{}", render_to_string(&parse_errors, &map));
        let (module, diagnostics) = grail_lang::lower(&program.unwrap(), file);
        assert!(module.is_none(), "{name}: errors must withhold the module");
        let rendered = render_to_string(&diagnostics, &map);
        let actual: Vec<(usize, usize, String)> = diagnostics
            .iter()
            .map(|d| {
                let (line, column) = map.line_col(d.primary);
                (line, column, d.message.clone())
            })
            .collect();
        assert_eq!(actual, expected, "{name}: got\n{rendered}");
        // The rendering names the place and shows the source line.
        let (line, column, _) = &expected[0];
        assert!(rendered.contains(&format!("{name}:{line}:{column}: error: ")), "{rendered}");
        assert!(rendered.contains('^'), "{rendered}");
    }
}
