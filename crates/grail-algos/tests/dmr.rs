//! The refinement program (`dmr.grail`: Bowyer-Watson with Ruppert's boundary splitting) on the
//! CPU, on one and several threads: on 160 Delaunay meshes of random, clustered and co-circular
//! points and on `.poly` domains with holes, what it leaves is a valid Delaunay triangulation of
//! the same area with no angle below the bound, checked by grail-mesh's independent verifier.

use grail_algos::dmr::{Options, refine};
use grail_mesh::Mesh;
use grail_mesh::generate::{delaunay, random_points};

/// Uniform numbers in [0, 1) from a seed (splitmix64): enough for test inputs.
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The layouts a refinement takes in turn: the default (rows, spatial order), then columns
/// without it, then rows without it; each three turns, the next count of windows.
static LAYOUTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Refines `mesh` on `threads` threads and checks the result; `what` names the mesh on failure.
fn refines(mesh: &Mesh, bound: f64, threads: usize, what: &str) {
    let before = grail_mesh::verify::check(mesh, bound, None);
    let turn = LAYOUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (opt, spatial_order) = match turn % 3 {
        0 => ("all", true),
        1 => ("all,layout=columns", false),
        _ => ("all,layout=rows", false),
    };
    // The target's default (one window: all bad triangles at once), or the sharpest first in
    // two or five windows.
    let windows = [None, Some(2), Some(5)][turn / 3 % 3];
    let options = Options {
        min_angle: bound,
        threads,
        opt: opt.parse().unwrap(),
        spatial_order: Some(spatial_order),
        windows,
        ..Options::default()
    };
    let refined = refine(mesh, &options).unwrap();
    let what = format!("{what} ({opt}, spatial order {spatial_order}, {windows:?} windows)");
    assert!(refined.complete, "{what}");
    // The input's points come back first, as numbered in the input.
    assert_eq!(refined.mesh.points[..mesh.points.len()], mesh.points[..], "{what}");
    let after = grail_mesh::verify::check(&refined.mesh, bound, Some(before.area));
    assert!(after.is_valid(), "{what}, {threads} threads: {:?}", after.problems);
    assert_eq!(after.bad, 0, "{what}, {threads} threads: {} bad before, {} after", before.bad, after.bad);
    assert!(after.triangles >= before.triangles, "{what}");
    if before.bad > 0 {
        assert!(after.triangles > before.triangles, "{what}");
    }
}

/// Points in a few tight clusters inside the unit square, with the square's corners (so the
/// domain has no sharp corner, which no refiner can fix).
fn clustered(count: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut rng = Uniform(seed);
    let centers: Vec<[f64; 2]> = (0..4).map(|_| [rng.next(), rng.next()]).collect();
    let mut points = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    for k in 0..count {
        let c = centers[k % centers.len()];
        let (r, a) = (0.05 * rng.next().sqrt(), std::f64::consts::TAU * rng.next());
        points.push([(c[0] + r * a.cos()).clamp(0.0, 1.0), (c[1] + r * a.sin()).clamp(0.0, 1.0)]);
    }
    points
}

/// `count` points on a circle (every triangle's circumcircle is the same circle) and its center.
fn on_a_circle(count: usize) -> Vec<[f64; 2]> {
    let mut points: Vec<[f64; 2]> = (0..count)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / count as f64;
            [0.5 + 0.5 * a.cos(), 0.5 + 0.5 * a.sin()]
        })
        .collect();
    points.push([0.5, 0.5]);
    points
}

#[test]
fn refinement_leaves_a_valid_delaunay_mesh_without_bad_triangles() {
    for (count, seed, bound) in [(30, 1, 30.0), (1000, 3, 30.0), (3000, 4, 30.0), (500, 5, 20.0)] {
        let mesh = random_points(count, 1.0, seed).unwrap();
        refines(&mesh, bound, 1, &format!("{count} random points"));
    }
    // A bound past 34° is a usage error; a mesh the program cannot take is bad input (as a
    // file's contents are), not a usage error.
    let too_sharp = Options { min_angle: 50.0, ..Options::default() };
    let error = refine(&random_points(10, 1.0, 1).unwrap(), &too_sharp).unwrap_err();
    assert!(matches!(error, grail_algos::AlgoError::Usage(_)), "{error}");
    let mut overlapping = random_points(10, 1.0, 1).unwrap();
    overlapping.triangles.push(overlapping.triangles[0]);
    let error = refine(&overlapping, &Options::default()).unwrap_err();
    assert!(matches!(error, grail_algos::AlgoError::Graph(grail_graph::GraphError::Invalid(_))), "{error} ({error:?})");
    assert!(error.to_string().contains("(overlapping or flipped triangles)"), "{error}");
    // A point budget stops the refinement with bad triangles left, and says so.
    let mesh = random_points(300, 1.0, 9).unwrap();
    let budget = Options { max_points: 320, ..Options::default() };
    let stopped = refine(&mesh, &budget).unwrap();
    assert!(!stopped.complete);
    let report = grail_mesh::verify::check(&stopped.mesh, 30.0, Some(mesh.area()));
    assert!(report.is_valid(), "{:?}", report.problems);
    assert!(report.bad > 0 && stopped.mesh.points.len() < 400);
}

#[test]
fn several_threads_refine_many_small_meshes() {
    for seed in 0..160u64 {
        let count = 20 + (37 * seed as usize) % 900;
        let threads = [2, 3, 4][seed as usize % 3];
        let (what, mesh) = match seed % 3 {
            0 => ("random", random_points(count, 1.0, seed).unwrap()),
            1 => ("clustered", delaunay(&clustered(count, seed)).unwrap()),
            _ => ("co-circular", delaunay(&on_a_circle(8 + seed as usize)).unwrap()),
        };
        refines(&mesh, 30.0, threads, &format!("{what} points, seed {seed}"));
    }
}

#[test]
fn several_threads_refine_larger_meshes() {
    for (count, seed, threads) in [(3000, 11, 4), (3000, 12, 2), (2000, 13, 3)] {
        refines(&random_points(count, 1.0, seed).unwrap(), 30.0, threads, &format!("{count} random points"));
    }
}

#[test]
fn domains_with_holes_from_poly_files_keep_their_holes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/meshes/square-with-holes.poly");
    let (domain, _) = grail_mesh::io::read_poly(std::path::Path::new(path)).unwrap();
    let mesh = grail_mesh::refine::triangulate_domain(&domain).unwrap();
    // The square less a 4 x 0.6 slot and a diamond of diagonal 3.
    assert!((mesh.area() - (100.0 - 2.4 - 4.5)).abs() < 1e-9, "{}", mesh.area());
    for (bound, threads) in [(30.0, 1), (33.0, 4), (25.0, 2)] {
        refines(&mesh, bound, threads, &format!("the square with holes at {bound}°"));
    }
    // A disk with three round holes: a fine boundary, graded inside.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/meshes/plate-with-holes.poly");
    let (domain, _) = grail_mesh::io::read_poly(std::path::Path::new(path)).unwrap();
    let mesh = grail_mesh::refine::triangulate_domain(&domain).unwrap();
    assert_eq!(mesh.points.len(), 200);
    for threads in [1, 3] {
        refines(&mesh, 30.0, threads, "the disk with three holes");
    }
}

#[test]
fn local_worklists_refine_as_well() {
    // Kept pushes run in the thread that made them (`local=on`): the same guarantees.
    let local: grail_ir::opt::OptConfig = "all,local=on".parse().unwrap();
    for (count, seed, threads) in [(2000, 21, 3), (800, 22, 1), (1500, 23, 4)] {
        let mesh = random_points(count, 1.0, seed).unwrap();
        let before = grail_mesh::verify::check(&mesh, 30.0, None);
        let options = Options { threads, opt: local, ..Options::default() };
        let refined = refine(&mesh, &options).unwrap();
        let after = grail_mesh::verify::check(&refined.mesh, 30.0, Some(before.area));
        assert!(
            refined.complete && after.is_valid() && after.bad == 0,
            "{count} points, {threads} threads: {:?}",
            after.problems
        );
    }
}

/// A polygon's domain: its corners in order, its sides as segments.
fn polygon(points: Vec<[f64; 2]>) -> Mesh {
    let n = points.len() as u32;
    let segments = (0..n).map(|i| [i, (i + 1) % n]).collect();
    let domain = Mesh { points, triangles: Vec::new(), segments, holes: Vec::new() };
    grail_mesh::refine::triangulate_domain(&domain).unwrap()
}

/// Corners sharper than 60° (wedges down to 1°, a star's spikes, a sliver of 0.11° corners)
/// would keep Ruppert's refinement splitting their sides forever: the program splits them on
/// concentric shells and leaves the triangles between shells, and ends. What it leaves below
/// the bound is only what the verifier excuses by those corners.
#[test]
fn sharp_corners_end_the_refinement() {
    let mut domains: Vec<(String, Mesh)> = [20.0f64, 5.0, 1.0]
        .into_iter()
        .map(|deg| {
            let a = deg.to_radians();
            (format!("a wedge of {deg}°"), polygon(vec![[0.0, 0.0], [1.0, 0.0], [a.cos(), a.sin()]]))
        })
        .collect();
    let star = (0..24)
        .map(|i| {
            let r = if i % 2 == 0 { 1.0 } else { 0.25 };
            let a = std::f64::consts::PI * f64::from(i) / 12.0;
            [r * a.cos(), r * a.sin()]
        })
        .collect();
    domains.push(("a star of 12 spikes".into(), polygon(star)));
    domains.push(("a sliver".into(), polygon(vec![[0.0, 0.0], [1.0, 0.0], [0.5, 0.001]])));
    for (what, mesh) in &domains {
        let before = grail_mesh::verify::check(mesh, 30.0, None);
        for threads in [1, 3] {
            let options = Options { threads, ..Options::default() };
            let refined = refine(mesh, &options).unwrap();
            assert!(refined.complete, "{what}, {threads} threads");
            let after = grail_mesh::verify::check(&refined.mesh, 30.0, Some(before.area));
            assert!(after.is_valid(), "{what}, {threads} threads: {:?}", after.problems);
            assert!(
                after.meets_bound(),
                "{what}, {threads} threads: {} bad, {} at small angles",
                after.bad,
                after.bad_at_small_angles
            );
            assert!(after.triangles < 10_000, "{what}: {} triangles", after.triangles);
        }
    }
}
