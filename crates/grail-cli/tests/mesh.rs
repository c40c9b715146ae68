//! `grail mesh` as users run it.

mod common;

use common::grail;

#[test]
fn generated_meshes_check_and_broken_ones_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let out = out.to_str().unwrap();
    let generated = grail(&["mesh", "gen", "--points", "500", "--seed", "4", "--base", "0", "-o", out]);
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let node = format!("{out}.node");
    let checked = grail(&["mesh", "check", &node, "--json"]);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    let report: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["points"], 500);
    assert_eq!(report["numbering"], 0);
    assert!(report["triangles"].as_u64().unwrap() > 900);
    // Refinement by the reference refiner, verified.
    let refined = dir.path().join("r");
    let run =
        grail(&["mesh", "refine", &node, "--min-angle", "25", "--verify", "--json", "-o", refined.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    for key in ["triangles_in", "triangles_out", "bad_in", "bad_out", "min_angle", "time_ms"] {
        assert!(!summary[key].is_null(), "{key} missing: {summary}");
    }
    assert!(summary["triangles_out"].as_u64() > summary["triangles_in"].as_u64());
    assert_eq!(summary["verified"], true);
    let again = grail(&["mesh", "check", &format!("{}.node", refined.display()), "--min-angle", "25"]);
    assert!(again.status.success());
    // The grail program on the CPU: verified, every angle at least the bound.
    let cpu = grail(&[
        "mesh",
        "refine",
        &node,
        "--target",
        "cpu",
        "--min-angle",
        "25",
        "--verify",
        "--json",
        "-o",
        refined.to_str().unwrap(),
    ]);
    assert!(cpu.status.success(), "{}", String::from_utf8_lossy(&cpu.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&cpu.stdout).unwrap();
    assert_eq!(
        (summary["target"].as_str(), summary["bad_out"].as_u64(), summary["verified"].as_bool()),
        (Some("cpu"), Some(0), Some(true))
    );
    // The time splits into the kernels' and the rest; the refinement took rounds and items.
    let (time, kernels) = (summary["time_ms"].as_f64().unwrap(), summary["kernel_ms"].as_f64().unwrap());
    assert!(kernels > 0.0 && kernels <= time, "{summary}");
    assert!(summary["rounds"].as_u64().unwrap() > 0 && summary["items"].as_u64().unwrap() > 0, "{summary}");
    assert!(summary["order_ms"].as_f64().unwrap() > 0.0, "the CPU orders the mesh by default: {summary}");
    // Without the spatial order, the same guarantees; a value other than on or off is refused.
    let plain = dir.path().join("plain");
    let args =
        ["mesh", "refine", &node, "--target", "cpu", "--min-angle", "25", "--verify", "--json", "--spatial-order"];
    let run = grail(&[&args[..], &["off", "-o", plain.to_str().unwrap()]].concat());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["verified"].as_bool(), summary["order_ms"].as_f64()), (Some(true), Some(0.0)));
    let run = grail(&[&args[..], &["sometimes", "-o", plain.to_str().unwrap()]].concat());
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("expected on or off"));
    // Worst first in five windows of sharpness: the same guarantees; no window at all is refused.
    let run = grail(&[&args[..], &["on", "--windows", "5", "-o", plain.to_str().unwrap()]].concat());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["verified"].as_bool(), summary["windows"].as_u64()), (Some(true), Some(5)));
    let run = grail(&[&args[..], &["on", "--windows", "0", "-o", plain.to_str().unwrap()]].concat());
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--windows 0: expected 1 to 64"));
    let again = grail(&["mesh", "check", &format!("{}.node", refined.display()), "--min-angle", "25"]);
    assert!(again.status.success());
    // Pictures.
    let svg = dir.path().join("m.svg");
    let drawn = grail(&["mesh", "draw", &node, "-o", svg.to_str().unwrap(), "--size", "300"]);
    assert!(drawn.status.success(), "{}", String::from_utf8_lossy(&drawn.stderr));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let gif = dir.path().join("m.gif");
    assert_eq!(grail(&["mesh", "draw", &node, "-o", gif.to_str().unwrap()]).status.code(), Some(1));
    // Overlay a triangle over the mesh: the checker names the problem and exits 3.
    let ele = format!("{out}.ele");
    let text = std::fs::read_to_string(&ele).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let count: usize = lines[0].split_whitespace().next().unwrap().parse().unwrap();
    lines[0] = format!("{} 3 0", count + 1);
    lines.push(format!("{count} 0 250 499"));
    std::fs::write(&ele, lines.join("\n")).unwrap();
    let broken = grail(&["mesh", "check", &node]);
    assert_eq!(broken.status.code(), Some(3), "{}", String::from_utf8_lossy(&broken.stdout));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("not a valid Delaunay triangulation"));
    // Bad requests.
    assert_eq!(grail(&["mesh", "gen", "--points", "2", "-o", out]).status.code(), Some(2));
    let missing = grail(&["mesh", "check", "/nonexistent/mesh.node"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/mesh.node"));
}

#[test]
fn poly_domains_refine_on_the_cpu_target_and_budgets_stop_refinement() {
    let dir = tempfile::tempdir().unwrap();
    let poly = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/meshes/square-with-holes.poly");
    let out = dir.path().join("holes");
    let run = grail(
        &["mesh", "refine", poly, "--target", "cpu", "--min-angle", "32", "--verify", "--json", "-o"]
            .into_iter()
            .chain([out.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["bad_out"].as_u64(), summary["verified"].as_bool()), (Some(0), Some(true)), "{summary}");
    assert_eq!(summary["complete"], true);
    // The holes stay holes: the refined mesh covers the square less the slot and the diamond.
    let checked = grail(&["mesh", "check", &format!("{}.node", out.display()), "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert!((report["area"].as_f64().unwrap() - 93.1).abs() < 1e-9, "{report}");

    // A budget of 10 points more on a mesh with many bad triangles: stopped, and said so.
    let mesh = dir.path().join("m");
    let generated = grail(&["mesh", "gen", "--points", "400", "--seed", "2", "-o", mesh.to_str().unwrap()]);
    assert!(generated.status.success());
    let node = format!("{}.node", mesh.display());
    let stopped = grail(&[
        "mesh",
        "refine",
        &node,
        "--target",
        "cpu",
        "--max-points",
        "10",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&stopped.stdout).unwrap();
    assert_eq!(summary["complete"], false, "{summary}");
    assert!(summary["bad_out"].as_u64().unwrap() > 0);

    // A segment inside the domain (a square with its diagonal) is refused with the reason.
    let inner = dir.path().join("inner.poly");
    std::fs::write(&inner, "4 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n5 0\n1 1 2\n2 2 3\n3 3 4\n4 4 1\n5 1 3\n0\n").unwrap();
    let refused = grail(&["mesh", "refine", inner.to_str().unwrap(), "--target", "cpu", "-o", out.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("lies inside the domain"));
}

/// A wedge of 15° with one side 100 times the other: the grail program ends, verified (what it
/// leaves below the bound sits at the sharp corner); the reference refiner, which stops short
/// along the long side, says so on standard error.
#[test]
fn sharp_corners_refine_to_an_end_and_the_reference_says_where_it_stops_short() {
    let dir = tempfile::tempdir().unwrap();
    let a = 15f64.to_radians();
    let poly = dir.path().join("wedge.poly");
    std::fs::write(&poly, format!("3 2 0 0\n1 0 0\n2 100 0\n3 {} {}\n3 0\n1 1 2\n2 2 3\n3 3 1\n0\n", a.cos(), a.sin()))
        .unwrap();
    let (poly, out) = (poly.to_str().unwrap(), dir.path().join("w"));
    let out = out.to_str().unwrap();
    let run = grail(&["mesh", "refine", poly, "--target", "cpu", "--verify", "--json", "-o", out]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((summary["verified"].as_bool(), summary["complete"].as_bool()), (Some(true), Some(true)), "{summary}");
    assert_eq!(summary["bad_out"], summary["bad_out_at_small_angles"], "{summary}");
    assert!(summary["triangles_out"].as_u64().unwrap() < 5_000, "{summary}");
    let reference = grail(&["mesh", "refine", poly, "-o", out]);
    assert!(reference.status.success());
    assert!(String::from_utf8_lossy(&reference.stderr).contains("the reference refiner stops short"));
}
