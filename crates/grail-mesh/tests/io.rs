//! Triangle's formats: round trips in both numberings, what other tools write, and errors that
//! name the file and line.

use grail_mesh::generate::random_points;
use grail_mesh::io::{read_mesh, read_poly, write_mesh};
use grail_mesh::verify::check;

#[test]
fn meshes_round_trip_in_both_numberings() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = random_points(300, 5.0, 11).unwrap();
    for base in [0, 1] {
        let out = dir.path().join(format!("m{base}"));
        write_mesh(&mesh, &out, base).unwrap();
        let (back, read_base) = read_mesh(&dir.path().join(format!("m{base}.node"))).unwrap();
        assert_eq!(read_base, base);
        assert_eq!(back.points, mesh.points);
        assert_eq!(back.triangles, mesh.triangles);
        assert!(check(&back, 20.0, Some(mesh.area())).is_valid());
    }
}

#[test]
fn files_as_triangle_writes_them_are_read() {
    let dir = tempfile::tempdir().unwrap();
    // 1-based, comments, boundary markers and attributes, a clockwise triangle.
    std::fs::write(
        dir.path().join("sq.node"),
        "# a unit square\n4 2 1 1\n1 0 0 7.5 1\n2 1 0 7.5 1\n3 1 1 7.5 1\n4 0 1 7.5 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("sq.ele"), "2 3 0\n1 1 2 3\n2 1 4 3 # clockwise\n").unwrap();
    let (mesh, base) = read_mesh(&dir.path().join("sq.ele")).unwrap();
    assert_eq!(base, 1);
    assert_eq!(mesh.points.len(), 4);
    assert_eq!(mesh.triangles, [[0, 1, 2], [0, 2, 3]]);
    let report = check(&mesh, 30.0, Some(1.0));
    assert!(report.is_valid(), "{:?}", report.problems);
    assert!((report.min_angle.unwrap() - 45.0).abs() < 1e-9);
    // A .poly with its points in the .node file, segments and a hole.
    std::fs::write(dir.path().join("sq.poly"), "0 2 0 1\n4 1\n1 1 2\n2 2 3\n3 3 4\n4 4 1\n1\n1 0.5 0.5\n").unwrap();
    let (poly, base) = read_poly(&dir.path().join("sq.poly")).unwrap();
    assert_eq!(base, 1);
    assert_eq!(poly.segments, [[0, 1], [1, 2], [2, 3], [3, 0]]);
    assert_eq!(poly.holes, [[0.5, 0.5]]);
}

#[test]
fn malformed_files_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("bad.node");
    let ele = dir.path().join("bad.ele");
    let cases: [(&str, &str, &str); 5] = [
        ("3 2 0 0\n0 0 0\n1 1 0\n", "3 3 0\n", "bad.node:3: the file ends where a point"),
        ("3 2 0 0\n0 0 0\n1 1 x\n2 0 1\n", "1 3 0\n0 0 1 2\n", "bad.node:3: y: `x` is not a finite number"),
        ("3 2 0 0\n0 0 0\n2 1 0\n2 0 1\n", "1 3 0\n0 0 1 2\n", "point numbered 2, expected 1"),
        ("3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n", "1 3 0\n0 0 1 3\n", "bad.ele:2: point 3 does not exist"),
        ("3 3 0 0\n0 0 0\n1 1 0\n2 0 1\n", "1 3 0\n0 0 1 2\n", "dimension 3"),
    ];
    for (node_text, ele_text, expected) in cases {
        std::fs::write(&node, node_text).unwrap();
        std::fs::write(&ele, ele_text).unwrap();
        let error = read_mesh(&node).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
    }
    // Collinear corners.
    std::fs::write(&node, "3 2 0 0\n0 0 0\n1 1 1\n2 2 2\n").unwrap();
    std::fs::write(&ele, "1 3 0\n0 0 1 2\n").unwrap();
    assert!(read_mesh(&node).unwrap_err().to_string().contains("degenerate"));
    let missing = read_mesh(&dir.path().join("none.node")).unwrap_err().to_string();
    assert!(missing.contains("none.node"), "{missing}");
}

/// Files of many megabytes are split among cores in chunks: line numbers still count every line
/// (comments, blank lines and CRLF endings included), the first malformed row in the file is the
/// one reported, and large meshes round-trip through the batched writer.
#[test]
fn large_files_keep_their_line_numbers_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let count = 300_000;
    let mut text = format!("# {count} points\r\n{count} 2 0 0\r\n");
    for i in 0..count {
        if i % 1000 == 0 {
            text.push_str("\r\n# a comment line\r\n");
        }
        text.push_str(&format!("{i} {}.5 {}.25 # point {i}\r\n", i % 977, i % 331));
    }
    assert!(text.len() > 8 << 20, "the file spans several chunks");
    let node = dir.path().join("big.node");
    std::fs::write(&node, &text).unwrap();
    let (points, base) = grail_mesh::io::read_node(&node).unwrap();
    assert_eq!((points.len(), base), (count, 0));
    assert_eq!(points[123_456], [(123_456 % 977) as f64 + 0.5, (123_456 % 331) as f64 + 0.25]);
    // Two malformed rows far apart: the first is named, with its line.
    let broken = text.replace("250000 ", "250000 x").replace("200000 ", "200000 y");
    std::fs::write(&node, &broken).unwrap();
    let line = broken.lines().position(|l| l.starts_with("200000 ")).unwrap() + 1;
    let error = grail_mesh::io::read_node(&node).unwrap_err().to_string();
    assert!(error.contains(&format!("big.node:{line}: x: `y")), "{error} (line {line})");
    // A file that ends early says where.
    let cut = &text[..text.find("299990 ").unwrap()];
    std::fs::write(&node, cut).unwrap();
    let error = grail_mesh::io::read_node(&node).unwrap_err().to_string();
    assert!(error.contains("the file ends where a point"), "{error}");
    // The writer's batches, in both numberings.
    let mesh = random_points(200_000, 1.0, 3).unwrap();
    for base in [0, 1] {
        let out = dir.path().join(format!("w{base}"));
        write_mesh(&mesh, &out, base).unwrap();
        let (back, read_base) = read_mesh(&dir.path().join(format!("w{base}.ele"))).unwrap();
        assert_eq!((read_base, &back.points, &back.triangles), (base, &mesh.points, &mesh.triangles));
    }
}

/// Damaged files are errors, never panics: a mesh's files with bytes overwritten, lines cut or
/// doubled at many places, and headers that promise more than a machine could hold.
#[test]
fn damaged_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = random_points(60, 1.0, 5).unwrap();
    let out = dir.path().join("m");
    write_mesh(&mesh, &out, 1).unwrap();
    let (node, ele) = (dir.path().join("m.node"), dir.path().join("m.ele"));
    let (node_text, ele_text) = (std::fs::read(&node).unwrap(), std::fs::read(&ele).unwrap());
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let junk = [b'#', b'\n', b' ', b'x', b'-', b'9', b'.', b'e', 0xFF, b'\r'];
    for round in 0..400 {
        let (mut damaged_node, mut damaged_ele) = (node_text.clone(), ele_text.clone());
        let target = if round % 2 == 0 { &mut damaged_node } else { &mut damaged_ele };
        for _ in 0..1 + next(4) {
            match next(3) {
                0 => {
                    let at = next(target.len());
                    target[at] = junk[next(junk.len())];
                }
                1 => target.truncate(next(target.len())),
                _ => {
                    let at = next(target.len());
                    let copy = target[at..].to_vec();
                    target.extend_from_slice(&copy);
                }
            }
        }
        std::fs::write(&node, &damaged_node).unwrap();
        std::fs::write(&ele, &damaged_ele).unwrap();
        // Either reads (a harmless change) or names the problem; never panics. Read for
        // checking (degenerate triangles kept), the verifier takes whatever comes.
        if let Err(e) = read_mesh(&node) {
            assert!(!e.to_string().is_empty());
        }
        if let Ok((mesh, base)) = grail_mesh::io::read_mesh_oriented(&node) {
            let _ = grail_mesh::verify::check_numbered(&mesh, 30.0, None, base);
        }
    }
    // A header promising 10^15 points or triangles: the file ends first, nothing is reserved.
    std::fs::write(&node, "1000000000000000 2 0 0\n0 0 0\n").unwrap();
    assert!(read_mesh(&node).unwrap_err().to_string().contains("the file ends where a point"));
    std::fs::write(&node, &node_text).unwrap();
    std::fs::write(&ele, "1000000000000000 3 0\n1 1 2 3\n").unwrap();
    assert!(read_mesh(&node).unwrap_err().to_string().contains("the file ends where a triangle"));
}

/// Messages name points and triangles as the files number them (from 1 or from 0): a point out
/// of range with the range there is, a degenerate triangle, an edge two triangles run the same
/// way, a point in no triangle. Read for checking, a degenerate triangle is kept for the
/// verifier to name with the rest.
#[test]
fn problems_are_named_as_the_files_number_them() {
    let dir = tempfile::tempdir().unwrap();
    let (node, ele) = (dir.path().join("m.node"), dir.path().join("m.ele"));
    // Points 1-3 on a line, point 4 above the first.
    for base in [1u32, 0] {
        let n = |v: u32| v - 1 + base;
        let points = (1..=4).zip([[0, 0], [1, 0], [2, 0], [0, 1]]);
        let node_text: String = std::iter::once("4 2 0 0\n".to_string())
            .chain(points.map(|(v, [x, y])| format!("{} {x} {y}\n", n(v))))
            .collect();
        std::fs::write(&node, node_text).unwrap();
        let triangles = |rows: &[[u32; 3]]| {
            let mut text = format!("{} 3 0\n", rows.len());
            for (t, row) in rows.iter().enumerate() {
                text.push_str(&format!("{} {} {} {}\n", n(t as u32 + 1), n(row[0]), n(row[1]), n(row[2])));
            }
            text
        };
        let (last, past) = (n(4), n(5));
        std::fs::write(&ele, triangles(&[[1, 2, 4], [4, 1, 5]])).unwrap();
        let error = read_mesh(&node).unwrap_err().to_string();
        assert!(
            error.contains(&format!("m.ele:3: point {past} does not exist (points are numbered {base} to {last})"))
        );
        // Degenerate: an error for the plain reader, a problem for the verifier.
        std::fs::write(&ele, triangles(&[[1, 2, 3], [1, 2, 4]])).unwrap();
        let degenerate =
            format!("triangle {} ({}, {}, {}) is degenerate: its corners are collinear", n(1), n(1), n(2), n(3));
        assert!(read_mesh(&node).unwrap_err().to_string().contains(&degenerate));
        let (mesh, read_base) = grail_mesh::io::read_mesh_oriented(&node).unwrap();
        assert_eq!(read_base, base);
        let report = grail_mesh::verify::check_numbered(&mesh, 30.0, None, base);
        assert!(report.problems.contains(&degenerate), "{:?}", report.problems);
        // A point in no triangle; an edge two triangles run the same way.
        std::fs::write(&ele, triangles(&[[1, 2, 4]])).unwrap();
        let (mesh, _) = read_mesh(&node).unwrap();
        let report = grail_mesh::verify::check_numbered(&mesh, 30.0, None, base);
        assert_eq!(report.problems, [format!("point {} is in no triangle", n(3))]);
        std::fs::write(&ele, triangles(&[[1, 2, 4], [1, 2, 4]])).unwrap();
        let (mesh, _) = read_mesh(&node).unwrap();
        let report = grail_mesh::verify::check_numbered(&mesh, 30.0, None, base);
        let edge = format!("edge {}-{} belongs to two triangles in the same direction", n(1), n(2));
        assert!(report.problems.iter().any(|p| p.contains(&edge)), "{:?}", report.problems);
        // Unnumbered, the library's own calls count from 0.
        assert!(check(&mesh, 30.0, None).problems.iter().any(|p| p.contains("edge 0-1 belongs")));
    }
    // No points at all: there is no range to give.
    std::fs::write(&node, "0 2 0 0\n").unwrap();
    std::fs::write(&ele, "1 3 0\n1 1 2 3\n").unwrap();
    assert!(read_mesh(&node).unwrap_err().to_string().contains("point 1 does not exist (there are no points)"));
    // An empty mesh is valid, and its area is 0, not -0.
    std::fs::write(&ele, "0 3 0\n").unwrap();
    let (mesh, _) = read_mesh(&node).unwrap();
    let report = check(&mesh, 30.0, None);
    assert!(report.is_valid() && report.area == 0.0 && report.area.is_sign_positive(), "{report:?}");
}
