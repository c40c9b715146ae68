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
    assert!(programs.len() >= 11, "the suite has at least 11 programs, found {}", programs.len());
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

/// Mutations that keep most programs parseable: one token swapped for another of its kind
/// (names for names, literals for literals, operators for operators, related keywords).
mod mutants {
    use grail_lang::lexer::lex;
    use grail_lang::token::{Keyword, TokenKind};
    use proptest::prelude::*;

    use super::*;

    const LITERALS: &[&str] =
        &["0", "1", "7u64", "2i32", "1.5", "2.5f32", "INF", "true", "false", "0x846ca68b", "5000000000", "-1"];
    const OPERATORS: &[&str] = &["+", "-", "*", "/", "%", "<", "<=", "==", "!=", "&&", "||", "<<", ">>", "&", "|", "^"];
    const ASSIGNMENTS: &[&str] = &["=", "+=", "-=", "*=", "/="];
    const NAMES: &[&str] = &[
        "u32",
        "u64",
        "i32",
        "i64",
        "f64",
        "f32",
        "bool",
        "Node",
        "Edge",
        "self",
        "main",
        "min",
        "max",
        "abs",
        "sqrt",
        "print",
        "atomic_min",
        "atomic_add",
        "atomic_cas",
        "degree",
        "in_degree",
        "neighbor",
        "out_edges",
        "in_edges",
        "neighbors",
        "in_neighbors",
        "find",
        "union",
        "src",
        "dst",
        "num_nodes",
        "num_edges",
        "nodes",
        "edges",
        "sum",
        "any",
        "x",
    ];
    /// Keywords that can stand in for one another somewhere.
    const KEYWORDS: &[&[&str]] = &[
        &["for", "forall"],
        &["push", "retry", "reduce"],
        &["while", "until"],
        &["atomic", "single"],
        &["let", "return"],
        &["node", "edge"],
        &["worklist", "G"],
        &["INF", "true", "false"],
    ];

    /// The program with the chosen tokens replaced; `choices` pick tokens and replacements.
    pub(super) fn mutate(source: &str, choices: &[(usize, usize)]) -> String {
        let (tokens, _) = lex(source, FileId(0));
        let tokens: Vec<_> = tokens.into_iter().filter(|t| t.kind != TokenKind::Eof).collect();
        if tokens.is_empty() {
            return source.to_string();
        }
        // The program's own names are the likeliest to resolve somewhere else.
        let own: Vec<String> = tokens
            .iter()
            .filter_map(|t| match &t.kind {
                TokenKind::Ident(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for &(at, pick) in choices {
            let token = &tokens[at % tokens.len()];
            let replacement = match &token.kind {
                TokenKind::Ident(_) => {
                    if pick % 2 == 0 {
                        own[pick / 2 % own.len()].clone()
                    } else {
                        NAMES[pick / 2 % NAMES.len()].to_string()
                    }
                }
                TokenKind::Int { .. } | TokenKind::Float { .. } | TokenKind::Keyword(Keyword::Inf) => {
                    LITERALS[pick % LITERALS.len()].to_string()
                }
                TokenKind::Keyword(k) => {
                    let text = k.as_str();
                    match KEYWORDS.iter().find(|group| group.contains(&text)) {
                        Some(group) => group[pick % group.len()].to_string(),
                        None => continue,
                    }
                }
                kind => {
                    let text = kind.fixed_text().unwrap_or("");
                    if OPERATORS.contains(&text) {
                        OPERATORS[pick % OPERATORS.len()].to_string()
                    } else if ASSIGNMENTS.contains(&text) {
                        ASSIGNMENTS[pick % ASSIGNMENTS.len()].to_string()
                    } else {
                        continue;
                    }
                }
            };
            let range = token.span.range();
            if edits.iter().all(|(r, _)| r.start != range.start) {
                edits.push((range, replacement));
            }
        }
        edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let mut out = source.to_string();
        for (range, text) in edits {
            out.replace_range(range, &text);
        }
        out
    }

    /// What happened to a mutant.
    #[derive(Debug, PartialEq)]
    pub(super) enum Outcome {
        ParseError,
        Rejected,
        Lowered,
    }

    /// Parses and lowers `source`; whatever lowers must validate and emit C.
    pub(super) fn check(source: &str) -> Outcome {
        let mut map = SourceMap::new();
        let file = map.add("mutant", source);
        let (program, parse_errors) = grail_lang::parse(source, file);
        let Some(program) = program else {
            assert!(!parse_errors.is_empty());
            return Outcome::ParseError;
        };
        let (module, diagnostics) = grail_lang::lower(&program, file);
        // Rendering must cope with every span lowering reports.
        let rendered = render_to_string(&diagnostics, &map);
        let Some(module) = module else {
            assert!(grail_lang::has_errors(&diagnostics), "no module without an error");
            return Outcome::Rejected;
        };
        assert!(diagnostics.is_empty(), "{rendered}");
        if let Err(e) = grail_ir::validate(&module) {
            panic!(
                "a mutant lowers to invalid IR: {e}\n--- source ---\n{source}\n--- IR ---\n{}",
                grail_ir::print(&module)
            );
        }
        match emit_c(&module) {
            Ok(_) => {}
            Err(e) if tolerated(&e) => {}
            Err(e) => panic!("a mutant's C cannot be emitted: {e}\n--- source ---\n{source}"),
        }
        Outcome::Lowered
    }

    /// A small deterministic generator for the sweep.
    fn next(state: &mut u64) -> usize {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 16) as usize
    }

    #[test]
    fn a_sweep_of_mutants_never_panics_and_lowers_to_valid_ir() {
        let programs: Vec<(String, String)> = suite().into_iter().chain(specification_programs()).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let (mut parsed, mut lowered, mut total) = (0, 0, 0);
        for round in 0..5000 {
            let (_, source) = &programs[round % programs.len()];
            let edits = 1 + next(&mut state) % 3;
            let choices: Vec<(usize, usize)> = (0..edits).map(|_| (next(&mut state), next(&mut state))).collect();
            let outcome = check(&mutate(source, &choices));
            total += 1;
            parsed += usize::from(outcome != Outcome::ParseError);
            lowered += usize::from(outcome == Outcome::Lowered);
        }
        // The sweep must exercise both the checker's errors and the lowering of valid programs.
        assert!(parsed * 2 > total, "only {parsed} of {total} mutants parse");
        assert!(lowered * 10 > total, "only {lowered} of {total} mutants lower");
        assert!(parsed - lowered > total / 10, "only {} of {total} mutants are rejected", parsed - lowered);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn mutated_programs_never_panic(
            which in any::<proptest::sample::Index>(),
            choices in proptest::collection::vec((any::<usize>(), any::<usize>()), 1..5),
        ) {
            let programs = suite();
            let (_, source) = which.get(&programs);
            check(&mutate(source, &choices));
        }
    }
}

/// The shape of the module that the runtime and the passes rely on.
#[test]
fn lowering_conventions() {
    use grail_ir::{Const, ExprKind, Initial, KernelId, Owner, Space, Stmt, Type, Until};
    let source = r#"
        graph {
            node dist: u64 = INF;
            node label: u32 = self as u32;
            edge weight: u32;
            edge mark: bool = false;
        }
        param source: Node;
        param limit: u64 = INF;
        param scale: f64 = 2;
        output dist;
        output mark;
        const STEP: u64 = 1 << 4;
        kernel init(bound: u64) -> sum u64 {
            forall u in worklist {
                if bound > STEP { reduce 1; }
                if u.dist > bound { push(u); }
            }
        }
        fn main() -> u64 {
            let mut total: u64 = 0;
            total += invoke init(limit);
            iterate init(STEP) initial [source] { total += 1; }
            return total;
        }
    "#;
    let module = lower_clean("conventions", source);
    grail_ir::validate(&module).unwrap();
    // The program's kernel keeps index 0; the initialiser comes last, renamed around `init`.
    assert_eq!(module.kernels.len(), 2);
    assert_eq!(module.kernels[0].name, "init");
    let init = &module.kernels[1];
    assert_eq!(init.name, "init_1");
    let spaces: Vec<&Space> = init
        .body
        .block
        .iter()
        .map(|s| match s {
            Stmt::ForAll(f) => &f.space,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(spaces, [&Space::AllNodes, &Space::AllEdges]);
    assert!(matches!(&module.main.block[0], Stmt::Invoke { kernel: KernelId(1), result: None, .. }));
    // Weights are bound, not initialised; bool edge properties can be outputs.
    assert!(module.properties[2].is_weight && module.properties[2].owner == Owner::Edge);
    assert_eq!(module.outputs.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 3]);
    assert_eq!(module.params[1].default, Some(Const::Inf));
    assert_eq!(module.params[2].default, Some(Const::Float(2.0)));
    assert_eq!(module.main_result, Type::U64);
    // `total += invoke init(limit)` receives the result in a temporary, then adds it.
    let Stmt::Invoke { result: Some(temp), .. } = &module.main.block[2] else { panic!("{:?}", module.main.block[2]) };
    let Stmt::Assign { value, .. } = &module.main.block[3] else { panic!() };
    assert!(matches!(&value.kind, ExprKind::Binary(grail_ir::BinaryOp::Add, _, r)
        if matches!(&r.kind, ExprKind::Load(grail_ir::Place::Local(l)) if l == temp)));
    let Stmt::Iterate(iterate) = &module.main.block[4] else { panic!() };
    let Until::Empty { initial: Some(Initial::Items(items)), args, .. } = &iterate.until else { panic!() };
    assert_eq!(items.len(), 1);
    assert_eq!(args[0].kind, ExprKind::Const(Const::Int(16)));
    // Branches on kernel parameters and constants are uniform; on an item's data, not.
    let Stmt::ForAll(phase) = &module.kernels[0].body.block[0] else { panic!() };
    let marks: Vec<bool> = phase
        .body
        .iter()
        .map(|s| match s {
            Stmt::If { uniform, .. } => *uniform,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(marks, [true, false]);
    assert_eq!(module.kernels[0].push_sites.len(), 1);
}
