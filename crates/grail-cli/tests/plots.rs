//! `--plot FILE.svg` draws what the commands print.

mod common;

use std::path::Path;

use common::grail;

/// The chart's text: title, axis descriptions, labels, legend.
fn svg_text(path: &Path) -> String {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "not an SVG document");
    svg
}

#[test]
fn benchmarks_and_pagerank_draw_charts() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.svg");
    let out = grail(&[
        "bench",
        "suite",
        "--graphs",
        "kron:7",
        "--algorithms",
        "bfs,pr",
        "--repeat",
        "1",
        "--plot",
        suite.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = svg_text(&suite);
    for needle in ["bfs do kron7", "pr pull32 kron7", "time (ms)", "cpu"] {
        assert!(text.contains(needle), "the suite chart lacks {needle}");
    }
    let opts = dir.path().join("opts.svg");
    let out = grail(&[
        "bench",
        "opts",
        "--graphs",
        "kron:7",
        "--algorithms",
        "bfs",
        "--repeat",
        "1",
        "--plot",
        opts.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = svg_text(&opts);
    for needle in ["bfs kron7", "speedup over none", "all", "outline"] {
        assert!(text.contains(needle), "the optimization chart lacks {needle}");
    }
    let graph = dir.path().join("g.gcsr");
    assert!(grail(&["gen", "rmat", "--scale", "8", "--undirected", "-o", graph.to_str().unwrap()]).status.success());
    let pr = dir.path().join("pr.svg");
    let out = grail(&["run", "pr", "-g", graph.to_str().unwrap(), "--plot", pr.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = svg_text(&pr);
    assert!(
        text.contains("PageRank convergence") && text.contains("L1 change of the ranks") && text.contains("iteration")
    );
    // The curve is the run's own rounds (as many as the run reports), not the reference's.
    let summary = grail(&["run", "pr", "-g", graph.to_str().unwrap(), "--json"]);
    let summary: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    let rounds = summary["iterations"].as_u64().unwrap();
    assert!(text.contains(&format!("({rounds} rounds, target cpu, variant pull32)")), "{rounds}");
    let reference = dir.path().join("reference.svg");
    let out =
        grail(&["run", "pr", "-g", graph.to_str().unwrap(), "-t", "reference", "--plot", reference.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(svg_text(&reference).contains("the reference power iteration"));
    // Only SVG, only for PageRank, and a bad place is an error.
    assert_eq!(grail(&["run", "pr", "-g", graph.to_str().unwrap(), "--plot", "x.png"]).status.code(), Some(2));
    assert_eq!(grail(&["run", "bfs", "-g", graph.to_str().unwrap(), "--plot", "x.svg"]).status.code(), Some(2));
    let nowhere = grail(&["run", "pr", "-g", graph.to_str().unwrap(), "--plot", "/nonexistent/dir/pr.svg"]);
    assert_eq!(nowhere.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("/nonexistent/dir/pr.svg"));
}
