//! The suite's grail programs, embedded so `grail check bfs` and later `grail run` find them
//! without the source tree.

/// Every suite program: (name, source), by name. The name is the file stem in `programs/`.
pub const PROGRAMS: &[(&str, &str)] = &[
    ("bfs", include_str!("../programs/bfs.grail")),
    ("bfs_async", include_str!("../programs/bfs_async.grail")),
    ("bfs_do", include_str!("../programs/bfs_do.grail")),
    ("cc", include_str!("../programs/cc.grail")),
    ("cc_afforest", include_str!("../programs/cc_afforest.grail")),
    ("cc_lp", include_str!("../programs/cc_lp.grail")),
    ("cc_afforest_set", include_str!("../programs/cc_afforest_set.grail")),
    ("dmr", include_str!("../programs/dmr.grail")),
    ("dsssp", include_str!("../programs/dsssp.grail")),
    ("mis", include_str!("../programs/mis.grail")),
    ("mst", include_str!("../programs/mst.grail")),
    ("pbf", include_str!("../programs/pbf.grail")),
    ("pr", include_str!("../programs/pr.grail")),
    ("pr_pull32", include_str!("../programs/pr_pull32.grail")),
    ("pr_push", include_str!("../programs/pr_push.grail")),
    ("pr_residual", include_str!("../programs/pr_residual.grail")),
    ("pta", include_str!("../programs/pta.grail")),
    ("sp", include_str!("../programs/sp.grail")),
    ("sssp_bf", include_str!("../programs/sssp_bf.grail")),
    ("sssp_ds", include_str!("../programs/sssp_ds.grail")),
    ("sssp_nf_real", include_str!("../programs/sssp_nf_real.grail")),
    ("sssp_wl_real", include_str!("../programs/sssp_wl_real.grail")),
    ("sssp_nf", include_str!("../programs/sssp_nf.grail")),
    ("sssp_nfq", include_str!("../programs/sssp_nfq.grail")),
    ("sssp_wl", include_str!("../programs/sssp_wl.grail")),
    ("traverse", include_str!("../programs/traverse.grail")),
    ("tri", include_str!("../programs/tri.grail")),
];

/// The source of a suite program, by name (`bfs`, `sssp_nf`, ...).
pub fn program_source(name: &str) -> Option<&'static str> {
    PROGRAMS.iter().find(|(n, _)| *n == name).map(|(_, source)| *source)
}
