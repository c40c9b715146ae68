//! The constraint file format: what the grammar allows is read, anything else is an error that
//! names the file and line, and what is written reads back the same.

use grail_pta::{
    Constraint, Constraints, PtaError, check_name, parse_constraints, read_constraints, write_constraints,
};
use proptest::prelude::*;

#[test]
fn the_four_kinds_declarations_comments_and_odd_names_are_read() {
    let text = "# a comment line\n\
                \n\
                p = &a\n\
                q=p   # no spaces needed around `=`\n\
                \tr = * q\r\n\
                *p=q\n\
                var lonely\n\
                malloc@file.c:12 = &heap#1\n\
                var var\n\
                var = &a*b\n\
                x#y = q # `#` inside a name is not a comment\n";
    let c = parse_constraints(text, "ok.txt").unwrap();
    let names: Vec<&str> = c.names().collect();
    assert_eq!(names, ["p", "a", "q", "r", "lonely", "malloc@file.c:12", "heap#1", "var", "a*b", "x#y"]);
    let id = |n: &str| c.id(n).unwrap();
    assert_eq!(
        c.constraints(),
        [
            Constraint::AddressOf { dst: id("p"), src: id("a") },
            Constraint::Copy { dst: id("q"), src: id("p") },
            Constraint::Load { dst: id("r"), src: id("q") },
            Constraint::Store { dst: id("p"), src: id("q") },
            Constraint::AddressOf { dst: id("malloc@file.c:12"), src: id("heap#1") },
            Constraint::AddressOf { dst: id("var"), src: id("a*b") },
            Constraint::Copy { dst: id("x#y"), src: id("q") },
        ]
    );
    assert_eq!(c.counts(), [3, 2, 1, 1]);
    // Nothing at all is an empty set of constraints.
    assert!(parse_constraints("", "empty.txt").unwrap().is_empty());
    assert_eq!(parse_constraints("# only\n\n  \n", "c.txt").unwrap().num_vars(), 0);
}

#[test]
fn malformed_lines_name_the_file_and_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("p = &a\n*p = *q\n", 2, "`* p = * q` is not a constraint: load into a variable first"),
        ("*p = &a\n", 1, "`* p = & a` is not a constraint: take the address into a variable first"),
        ("\n\np\n", 3, "expected `=` after `p`"),
        ("*p\n", 1, "expected `=` after `p`"),
        ("p =\n", 1, "nothing after `=`"),
        ("p = # a comment, not a name\n", 1, "nothing after `=`"),
        ("p = q r\n", 1, "unexpected `r` after the statement"),
        ("p = &a = b\n", 1, "unexpected `=` after the statement"),
        ("p = **q\n", 1, "expected `p = &a`, `p = q`, `p = *q`, `*p = q` or `var NAME`, found `p = * * q`"),
        ("p = &*q\n", 1, "found `p = & * q`"),
        ("&p = q\n", 1, "found `& p = q`"),
        ("= q\n", 1, "found `= q`"),
        ("**p = q\n", 1, "found `* * p = q`"),
        ("var\n", 1, "`var` without a name"),
        ("var a b\n", 1, "unexpected `b` after the statement"),
    ];
    for &(text, line, expected) in cases {
        match parse_constraints(text, "bad.txt") {
            Err(PtaError::Malformed { path, line: at, message }) => {
                assert_eq!((path.as_str(), at), ("bad.txt", line), "{text:?}: {message}");
                assert!(message.contains(expected), "{text:?}: `{message}` lacks `{expected}`");
            }
            other => panic!("{text:?}: expected a malformed-file error, got {other:?}"),
        }
    }
    let e = parse_constraints("a = b\n\n*a=*b\n", "f.txt").unwrap_err().to_string();
    assert!(e.starts_with("f.txt:3: "), "{e}");
}

#[test]
fn names_that_cannot_be_written_are_refused() {
    for bad in ["", "*p", "&a", "#x", "a b", "a=b", "tab\there", "=", "nl\n"] {
        assert!(check_name(bad).is_err(), "{bad:?}");
        assert!(matches!(Constraints::new().var(bad), Err(PtaError::Invalid(_))), "{bad:?}");
    }
    for good in ["p", "a*", "b&", "c#", "@g", "main.%p", "malloc@f:3", "<&@g>", "\"q\\20r\"", "var", "é"] {
        assert!(check_name(good).is_ok(), "{good:?}");
    }
    let mut c = Constraints::new();
    assert_eq!(c.var("a").unwrap(), 0);
    assert_eq!(c.var("b").unwrap(), 1);
    assert_eq!(c.var("a").unwrap(), 0, "a name names one variable");
    assert!(c.push(Constraint::Copy { dst: 0, src: 2 }).is_err(), "no variable 2");
    c.copy("a", "b").unwrap();
    assert_eq!(c.show(c.constraints()[0]).to_string(), "a = b");
}

#[test]
fn files_are_written_whole_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.txt");
    let mut c = Constraints::new();
    c.var("unused").unwrap();
    c.address_of("p", "a").unwrap();
    c.store("p", "q").unwrap();
    c.load("r", "p").unwrap();
    c.copy("q", "r").unwrap();
    c.copy("q", "r").unwrap();
    write_constraints(&c, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# 5 variables; 5 constraints: 1 address-of, 2 copy, 1 load, 1 store\n"), "{text}");
    assert!(text.ends_with("var unused\nvar p\nvar a\nvar q\nvar r\np = &a\n*p = q\nr = *p\nq = r\nq = r\n"), "{text}");
    assert_eq!(read_constraints(&path).unwrap(), c);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["c.txt"], "no temporary file is left behind");
    // Errors name the file.
    let e = write_constraints(&c, &dir.path().join("no/such/dir/c.txt")).unwrap_err();
    assert!(matches!(&e, PtaError::Io { path, .. } if path.contains("no/such/dir")), "{e}");
    let e = read_constraints(&dir.path().join("absent.txt")).unwrap_err();
    assert!(e.to_string().contains("absent.txt"), "{e}");
    std::fs::write(dir.path().join("bad.txt"), b"p = q\n\xff = q\n").unwrap();
    let e = read_constraints(&dir.path().join("bad.txt")).unwrap_err().to_string();
    assert!(e.contains("bad.txt:2: the text is not UTF-8"), "{e}");
}

/// Names the format can hold, including characters that are operators elsewhere in a name.
fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z@%._<>\"\\\\$é0-9][a-zA-Z0-9@%._:#*&<>\"\\\\$é-]{0,8}"
}

fn constraint_sets() -> impl Strategy<Value = Constraints> {
    (proptest::collection::vec(name(), 1..12), proptest::collection::vec((0u8..4, any::<u16>(), any::<u16>()), 0..30))
        .prop_map(|(names, raw)| {
            let mut c = Constraints::new();
            for n in &names {
                c.var(n).unwrap();
            }
            let n = c.num_vars() as u16;
            for (kind, a, b) in raw {
                let (dst, src) = (u32::from(a % n), u32::from(b % n));
                c.push(match kind {
                    0 => Constraint::AddressOf { dst, src },
                    1 => Constraint::Copy { dst, src },
                    2 => Constraint::Load { dst, src },
                    _ => Constraint::Store { dst, src },
                })
                .unwrap();
            }
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn constraint_files_round_trip(c in constraint_sets()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.txt");
        write_constraints(&c, &path).unwrap();
        prop_assert_eq!(read_constraints(&path).unwrap(), c);
    }

    #[test]
    fn any_text_gives_constraints_or_an_error(text in "[a-c*&=# \t\n%@]{0,60}") {
        if let Err(e) = parse_constraints(&text, "any.txt") {
            prop_assert!(matches!(e, PtaError::Malformed { .. }), "{}", e);
        }
    }
}
