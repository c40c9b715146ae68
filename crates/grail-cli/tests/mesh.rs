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
