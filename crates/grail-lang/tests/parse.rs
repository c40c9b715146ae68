//! The parser against the specification's programs, a corpus of malformed programs with the
//! diagnostics each must produce, and random inputs that must never make it panic.

use std::path::{Path, PathBuf};

use grail_lang::{FileId, SourceMap, diagnostics::render_to_string, parse};

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

/// Parses, panicking with the rendered diagnostics if there are any.
fn parse_clean(name: &str, source: &str) -> grail_lang::ast::Program {
    let (program, diagnostics) = parse(source, FileId(0));
    if !diagnostics.is_empty() {
        let mut map = SourceMap::new();
        map.add(name, source);
        panic!("{name}:\n{}", render_to_string(&diagnostics, &map));
    }
    program.expect("no errors means a program")
}

#[test]
fn the_specification_programs_parse() {
    let programs = files("tests/programs");
    assert!(programs.len() >= 5);
    for path in programs {
        let source = std::fs::read_to_string(&path).unwrap();
        parse_clean(&path.display().to_string(), &source);
    }
}
