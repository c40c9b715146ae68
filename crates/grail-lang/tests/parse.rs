//! The parser against the specification's programs, a corpus of malformed programs with the
//! diagnostics each must produce, and random inputs that must never make it panic.

use std::path::{Path, PathBuf};

use grail_lang::{FileId, SourceMap, diagnostics::render_to_string, parse, print_program};

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

/// Every program the repository holds: the specification's and the suite's.
fn all_programs() -> Vec<(String, String)> {
    let mut programs: Vec<(String, String)> = files("tests/programs")
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grail-algos/programs");
    if suite.is_dir() {
        programs.extend(
            files("../grail-algos/programs")
                .into_iter()
                .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap())),
        );
    }
    programs
}

/// `{:?}` of a tree with every span taken out, so trees compare modulo spans.
fn shape(program: &grail_lang::ast::Program) -> String {
    let text = format!("{program:?}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Span(") {
        out.push_str(&rest[..at]);
        let close = rest[at..].find(')').expect("a span closes");
        rest = &rest[at + close + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_suite_programs_parse() {
    for (name, source) in all_programs() {
        parse_clean(&name, &source);
    }
}

#[test]
fn printing_round_trips_and_is_a_fixpoint() {
    for (name, source) in all_programs() {
        let program = parse_clean(&name, &source);
        let printed = print_program(&program);
        let reparsed = parse_clean(&format!("{name} (printed)"), &printed);
        assert_eq!(shape(&program), shape(&reparsed), "{name}: the printed program parses to another tree");
        assert_eq!(print_program(&reparsed), printed, "{name}: printing is not a fixpoint");
    }
}

/// One expected diagnostic: `//~ LINE:COL: message substring` in the file.
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
fn malformed_programs_report_the_expected_diagnostics() {
    let corpus = files("tests/errors");
    assert!(corpus.len() >= 25, "the error corpus has {} files", corpus.len());
    for path in corpus {
        let source = std::fs::read_to_string(&path).unwrap();
        let expected = expectations(&source);
        assert!(!expected.is_empty(), "{}: no `//~` expectations", path.display());
        let mut map = SourceMap::new();
        let file = map.add(path.display().to_string(), source.clone());
        let (program, diagnostics) = parse(&source, file);
        assert!(program.is_none(), "{}: errors must withhold the program", path.display());
        let rendered = render_to_string(&diagnostics, &map);
        let actual: Vec<(usize, usize, &str)> = diagnostics
            .iter()
            .map(|d| {
                let (line, column) = map.line_col(d.primary);
                (line, column, d.message.as_str())
            })
            .collect();
        assert_eq!(actual.len(), expected.len(), "{}: got\n{rendered}", path.display());
        for ((line, column, message), (want_line, want_column, want)) in actual.iter().zip(&expected) {
            assert_eq!(
                (*line, *column),
                (*want_line, *want_column),
                "{}: `{want}` at the wrong place; got\n{rendered}",
                path.display()
            );
            assert!(message.contains(want.as_str()), "{}: `{message}` lacks `{want}`", path.display());
        }
        // The rendering names the place and underlines it.
        let (line, column, _) = expected[0];
        assert!(rendered.contains(&format!("{}:{line}:{column}: error: ", path.display())), "{rendered}");
        assert!(rendered.contains('^'), "{rendered}");
    }
}

#[test]
fn an_empty_program_is_valid() {
    for source in ["", "   \n\t", "// only a comment\n", "/* a /* nested */ comment */"] {
        let program = parse_clean("empty", source);
        assert!(program.items.is_empty());
    }
}

#[test]
fn literals_keep_their_values_suffixes_and_spans() {
    use grail_lang::lexer::lex;
    use grail_lang::token::{Base, FloatSuffix, IntSuffix, TokenKind};
    let (tokens, diagnostics) = lex("1_000 0x2a 0b101u64 7i32 1.5 2e-3 1.0e9f32 \"a\\n\\\"b\" 0..n", FileId(0));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let kinds: Vec<_> = tokens.iter().map(|t| t.kind.clone()).collect();
    assert_eq!(kinds[0], TokenKind::Int { value: 1000, base: Base::Decimal, suffix: None });
    assert_eq!(kinds[1], TokenKind::Int { value: 42, base: Base::Hex, suffix: None });
    assert_eq!(kinds[2], TokenKind::Int { value: 5, base: Base::Binary, suffix: Some(IntSuffix::U64) });
    assert_eq!(kinds[3], TokenKind::Int { value: 7, base: Base::Decimal, suffix: Some(IntSuffix::I32) });
    assert_eq!(kinds[4], TokenKind::Float { value: 1.5, suffix: None });
    assert_eq!(kinds[5], TokenKind::Float { value: 2e-3, suffix: None });
    assert_eq!(kinds[6], TokenKind::Float { value: 1.0e9, suffix: Some(FloatSuffix::F32) });
    assert_eq!(kinds[7], TokenKind::Str("a\n\"b".to_string()));
    assert_eq!(kinds[8], TokenKind::Int { value: 0, base: Base::Decimal, suffix: None });
    assert_eq!(kinds[9], TokenKind::DotDot);
    assert_eq!(kinds.last(), Some(&TokenKind::Eof));
    let spans: Vec<_> = tokens.iter().map(|t| t.span.range()).collect();
    assert_eq!(&spans[..4], &[0..5, 6..10, 11..19, 20..24]);
}

/// The expression of `const X: T = <expr>;`, printed back with full parentheses-free canon.
fn reprint_expr(expr: &str) -> String {
    let program = parse_clean("expr", &format!("const X: u32 = {expr};"));
    let grail_lang::ast::ItemKind::Const(constant) = &program.items[0].kind else { panic!("not a const") };
    grail_lang::printer::print_expr(&constant.value)
}

#[test]
fn precedence_follows_rust() {
    assert_eq!(reprint_expr("(a + b * c)"), "a + b * c");
    assert_eq!(reprint_expr("(a + b) * c"), "(a + b) * c");
    assert_eq!(reprint_expr("a - (b - c)"), "a - (b - c)");
    assert_eq!(reprint_expr("(a - b) - c"), "a - b - c");
    assert_eq!(reprint_expr("a * b as u64"), "a * b as u64");
    assert_eq!(reprint_expr("(a * b) as u64"), "(a * b) as u64");
    assert_eq!(reprint_expr("-a as u64"), "-a as u64");
    assert_eq!(reprint_expr("-(a as u64)"), "-(a as u64)");
    assert_eq!(reprint_expr("a << 1 & b | c ^ d"), "a << 1 & b | c ^ d");
    assert_eq!(reprint_expr("(a | b) & c"), "(a | b) & c");
    assert_eq!(reprint_expr("a < b && c || !d"), "a < b && c || !d");
    assert_eq!(reprint_expr("(a < b) == c"), "(a < b) == c");
    assert_eq!(reprint_expr("(-x).y.f(1, G.num_nodes())"), "(-x).y.f(1, G.num_nodes())");
    assert_eq!(reprint_expr("0xff & 0b11 + 1.5e-7f32"), "0xff & 0b11 + 1.5e-7f32");
    assert_eq!(reprint_expr("P { x: 1, y: INF }.x"), "P { x: 1, y: INF }.x");
}

#[test]
fn struct_literals_in_conditions_are_parenthesised_when_printed() {
    let source = "fn f(p: P) { if p == (P { x: 1 }) { return; } for i in (Q {}).a..(Q {}).b {} }";
    let program = parse_clean("cond", source);
    let printed = print_program(&program);
    assert!(printed.contains("if (p == P { x: 1 }) {"), "{printed}");
    assert!(printed.contains("for i in (Q {}.a)..(Q {}.b) {}"), "{printed}");
    assert_eq!(shape(&parse_clean("printed", &printed)), shape(&program));
}

#[test]
fn very_deep_input_is_an_error_not_a_crash() {
    for depth in [10_000, 100_000] {
        for source in [
            format!("const X: u32 = {}1{};", "(".repeat(depth), ")".repeat(depth)),
            format!("const X: u32 = {}1;", "-".repeat(depth)),
            format!("const X: u32 = 1{};", " + 1".repeat(depth)),
            format!("const X: u32 = a{};", ".b".repeat(depth)),
            format!("fn f() {}{}", "{ if true ".repeat(depth), "}".repeat(2 * depth)),
            format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(depth)),
        ] {
            let (program, diagnostics) = parse(&source, FileId(0));
            assert!(program.is_none());
            assert_eq!(diagnostics.len(), 1, "{:?}", &diagnostics[..diagnostics.len().min(3)]);
            assert!(diagnostics[0].message.contains("too deep"));
        }
    }
}

#[test]
fn nesting_just_under_the_limit_parses() {
    let depth = grail_lang::MAX_DEPTH - 2;
    let source = format!("const X: u32 = {}1{};", "(".repeat(depth), ")".repeat(depth));
    parse_clean("deep", &source);
}

mod never_panics {
    use proptest::prelude::*;

    use super::*;

    /// Fragments of grail that random programs are spliced from.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        ";",
        ",",
        ".",
        "..",
        ":",
        "->",
        "=",
        "+=",
        "==",
        "<",
        "<<",
        "&&",
        "|",
        "!",
        "-",
        "*",
        "as",
        "u32",
        "let",
        "mut",
        "if",
        "else",
        "while",
        "for",
        "forall",
        "in",
        "where",
        "worklist",
        "iterate",
        "pipe",
        "once",
        "initial",
        "invoke",
        "push",
        "retry",
        "reduce",
        "atomic",
        "exclusive",
        "single",
        "until",
        "fn",
        "kernel",
        "graph",
        "node",
        "edge",
        "set",
        "param",
        "output",
        "const",
        "struct",
        "x",
        "P",
        "G",
        "INF",
        "0",
        "0x",
        "1.5e",
        "7u8",
        "\"s",
        "/*",
        "*/",
        "//",
        "\n",
        "#",
        "é",
        "->",
        "sum",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn on_arbitrary_text(source in "\\PC{0,200}") {
            let _ = parse(&source, FileId(0));
        }

        #[test]
        fn on_token_soup(pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..120)) {
            let source = pieces.join(" ");
            let (_, diagnostics) = parse(&source, FileId(0));
            let mut map = SourceMap::new();
            map.add("soup", source.clone());
            let _ = render_to_string(&diagnostics, &map);
        }

        #[test]
        fn on_mutated_programs(
            which in any::<proptest::sample::Index>(),
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..3, proptest::sample::select(PIECES)), 1..6),
        ) {
            let programs = all_programs();
            let (_, source) = which.get(&programs);
            let mut source = source.clone();
            for (at, kind, piece) in edits {
                let mut cut = at.index(source.len() + 1);
                while !source.is_char_boundary(cut) {
                    cut -= 1;
                }
                match kind {
                    0 => source.insert_str(cut, piece),
                    1 => {
                        let mut end = (cut + piece.len()).min(source.len());
                        while !source.is_char_boundary(end) {
                            end += 1;
                        }
                        source.replace_range(cut..end, "");
                    }
                    _ => source.truncate(cut),
                }
            }
            let (program, diagnostics) = parse(&source, FileId(0));
            let mut map = SourceMap::new();
            map.add("mutant", source.clone());
            let _ = render_to_string(&diagnostics, &map);
            // Whatever parses must print and parse back to the same tree.
            if let Some(program) = program {
                let printed = print_program(&program);
                let (again, problems) = parse(&printed, FileId(0));
                prop_assert!(problems.is_empty(), "{printed}\n{problems:?}");
                prop_assert_eq!(shape(&again.unwrap()), shape(&program));
            }
        }
    }
}
