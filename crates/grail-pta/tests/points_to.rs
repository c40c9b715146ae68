//! Solution files and comparisons: the writer sorts lines and targets by name, the reader
//! gives back the same solution and names the line of anything wrong, and `compare` names the
//! first variable two solutions disagree on.

use grail_pta::{
    Constraints, Difference, PointsTo, PtaError, compare, parse_constraints, parse_points_to, read_points_to,
    solve_sequential, write_points_to, write_points_to_into,
};
use proptest::prelude::*;

fn constraints() -> Constraints {
    parse_constraints("zp = &b\nzp = &a:\nap = zp\nmid = &zp\nt = &c\n*mid = t\nvar empty\n", "c.txt").unwrap()
}

#[test]
fn lines_and_targets_are_sorted_by_name() {
    let c = constraints();
    let pts = solve_sequential(&c);
    let mut out = Vec::new();
    write_points_to_into(&c, &pts, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    // `a:` is a name ending in `:`; only the last `:` of the first token separates.
    assert_eq!(text, "ap: a: b c\nmid: zp\nt: c\nzp: a: b c\n");
    assert_eq!(parse_points_to(&text, "p.txt", &c).unwrap(), pts);
}

#[test]
fn files_round_trip_and_replace_whole() {
    let c = constraints();
    let pts = solve_sequential(&c);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pts.txt");
    write_points_to(&c, &pts, &path).unwrap();
    assert_eq!(read_points_to(&path, &c).unwrap(), pts);
    write_points_to(&c, &PointsTo::new(c.num_vars()), &path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "only non-empty sets are written");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["pts.txt"]);
    // A solution that does not fit the constraints is refused before anything is written.
    let alien = PointsTo::from_sets(vec![vec![99]]);
    assert!(matches!(write_points_to(&c, &alien, &path), Err(PtaError::Invalid(_))));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    let e = read_points_to(&dir.path().join("absent.txt"), &c).unwrap_err();
    assert!(e.to_string().contains("absent.txt"), "{e}");
}

#[test]
fn the_reader_is_strict() {
    let c = constraints();
    // Comments, blank lines, an empty set and any order are fine.
    let ok = "# from another solver\n\nzp: c b a:\n  t:   c # trailing\nempty:\n";
    let pts = parse_points_to(ok, "ok.txt", &c).unwrap();
    let id = |n: &str| c.id(n).unwrap();
    let mut zp: Vec<u32> = ["a:", "b", "c"].iter().map(|n| id(n)).collect();
    zp.sort();
    assert_eq!(pts.get(id("zp")), zp);
    assert_eq!(pts.get(id("empty")), &[] as &[u32]);
    assert_eq!(pts.total(), 4);

    let cases: &[(&str, usize, &str)] = &[
        ("zp: a: b\n\nzp b\n", 3, "`zp`: expected `NAME:` and then the targets of NAME"),
        (": a\n", 1, "`:`: expected `NAME:`"),
        ("nobody: a:\n", 1, "the variable `nobody` is not a variable of the constraints"),
        ("zp: a: nothing\n", 1, "the target `nothing` is not a variable of the constraints"),
        ("zp: b\nt: c\nzp: c\n", 3, "a second line for `zp` (the first is line 1)"),
        ("zp: b c b\n", 1, "`zp` lists `b` twice"),
    ];
    for &(text, line, expected) in cases {
        match parse_points_to(text, "bad.txt", &c) {
            Err(PtaError::Malformed { path, line: at, message }) => {
                assert_eq!((path.as_str(), at), ("bad.txt", line), "{text:?}: {message}");
                assert!(message.contains(expected), "{text:?}: `{message}` lacks `{expected}`");
            }
            other => panic!("{text:?}: expected a malformed-file error, got {other:?}"),
        }
    }
}

#[test]
fn compare_names_the_first_difference() {
    let c = constraints();
    let pts = solve_sequential(&c);
    assert_eq!(compare(&pts, &pts.clone()), None);
    let id = |n: &str| c.id(n).unwrap();
    // Drop `b` from `ap` and add `t` to `mid`: `ap` comes first by id.
    let mut sets: Vec<Vec<u32>> = pts.iter().map(|(_, s)| s.to_vec()).collect();
    sets[id("ap") as usize].retain(|&t| t != id("b"));
    sets[id("mid") as usize].push(id("t"));
    let other = PointsTo::from_sets(sets);
    let d = compare(&pts, &other).unwrap();
    assert_eq!(d, Difference { var: id("ap"), only_in_a: vec![id("b")], only_in_b: vec![] });
    assert_eq!(d.describe(&c), "the sets of `ap` differ: only the first has b, only the second has nothing");
    let d = compare(&other, &pts).unwrap();
    assert_eq!(d.describe(&c), "the sets of `ap` differ: only the first has nothing, only the second has b");
    // A solution over fewer variables counts the rest as empty.
    let shorter = PointsTo::from_sets(pts.iter().take(id("mid") as usize).map(|(_, s)| s.to_vec()).collect());
    assert_eq!(compare(&pts, &shorter).map(|d| d.var), Some(id("mid")));
    assert_eq!(compare(&PointsTo::new(3), &PointsTo::new(5)), None);
    // Aliasing: `ap` and `zp` share targets, `mid` and `t` do not.
    assert!(pts.may_alias(id("ap"), id("zp")));
    assert!(!pts.may_alias(id("mid"), id("t")));
    assert!(!pts.may_alias(id("empty"), 1000), "out of range is empty, not a panic");
}

fn solutions() -> impl Strategy<Value = (Constraints, PointsTo)> {
    (1usize..15).prop_flat_map(|n| {
        let names = proptest::collection::hash_set("[a-z@%.][a-z0-9@%.:#*&<>]{0,6}", n..=n);
        let sets = proptest::collection::vec(proptest::collection::vec(0..n as u32, 0..6), n..=n);
        (names, sets).prop_map(|(names, sets)| {
            let mut c = Constraints::new();
            for name in &names {
                c.var(name).unwrap();
            }
            (c, PointsTo::from_sets(sets))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn solutions_round_trip((c, pts) in solutions()) {
        let mut out = Vec::new();
        write_points_to_into(&c, &pts, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        prop_assert_eq!(parse_points_to(&text, "p.txt", &c).unwrap(), pts.clone());
        // Sorted lines, whatever the ids.
        let firsts: Vec<&str> = text.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
        let mut sorted = firsts.clone();
        sorted.sort_by_key(|t| t.strip_suffix(':').unwrap());
        prop_assert_eq!(firsts, sorted);
    }
}
