//! The mesh verifier: independent of whatever made the mesh, exact where it matters.
//!
//! A mesh passes when its coordinates are ones the exact predicates take (0, or of magnitude
//! 2^-142 to 2^201, as for the triangulations), it is a valid triangulation (every index in
//! range, every triangle counter-clockwise and not degenerate, every edge shared by at most two
//! triangles and then in opposite directions, every point used by some triangle), every edge
//! not on a boundary segment is locally Delaunay (the opposite corner across it is not strictly
//! inside the circumcircle: exact in-circle test), which for a valid triangulation makes the
//! whole mesh (constrained) Delaunay, and, when an expected area is given, its triangles cover that area.
//! Quality is reported, not failed on: the minimum angle, how many triangles fall below a bound,
//! and how many of those have every angle below it at a corner of the domain narrower than 60°,
//! where no refiner can be asked to meet the bound (Ruppert's guarantee needs input angles of 60°
//! or more). A refinement that ran to completion meets the bound when those are all there are
//! ([`Report::meets_bound`]).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::predicates::{incircle, orient2d};
use crate::{Mesh, NO_NEIGHBOR};

/// What the verifier found.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub points: usize,
    pub triangles: usize,
    /// The smallest angle of any triangle, in degrees (`None` for an empty mesh).
    pub min_angle: Option<f64>,
    /// Triangles with an angle below the bound asked for.
    pub bad: usize,
    /// Of those, the ones a small input angle excuses: every angle below the bound sits at a
    /// point where the domain is narrower than 60° (the triangles around it sum to less), or the
    /// triangle's shortest side joins that corner's two sides at the same distance from it (the
    /// triangles between concentric shells, which Delaunay refinement leaves, as Triangle does,
    /// so as to end).
    pub bad_at_small_angles: usize,
    /// Total area of the triangles.
    pub area: f64,
    /// Everything that makes the mesh invalid, at most [`MAX_PROBLEMS`] of them.
    pub problems: Vec<String>,
}

/// How many problems a report lists.
pub const MAX_PROBLEMS: usize = 20;

impl Report {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether every triangle below the bound is excused by a small input angle.
    pub fn meets_bound(&self) -> bool {
        self.bad == self.bad_at_small_angles
    }
}

fn push(problems: &mut Vec<String>, text: String) {
    if problems.len() < MAX_PROBLEMS {
        problems.push(text);
    }
}

/// Checks `mesh`; `min_angle` is the quality bound in degrees, `expected_area` the domain's
/// area when known (checked to a relative 1e-9). Problems number points and triangles from 0:
/// [`check_numbered`] names them as a mesh's files do.
pub fn check(mesh: &Mesh, min_angle: f64, expected_area: Option<f64>) -> Report {
    check_numbered(mesh, min_angle, expected_area, 0)
}

/// [`check`], its problems numbering points and triangles from `base` (0 or 1) as the files
/// the mesh was read from (or is written to) do, so that a user finds what they name there.
pub fn check_numbered(mesh: &Mesh, min_angle: f64, expected_area: Option<f64>, base: u32) -> Report {
    let n = mesh.points.len();
    let mut report = unmeasured(mesh, base);
    if !report.problems.is_empty() {
        return report;
    }
    // Past the range the exact predicates take, their products overflow or underflow and no
    // verdict below could be trusted.
    if let Err(e) = crate::refine::check_coordinates(mesh, base) {
        report.problems.push(e.to_string());
        return report;
    }
    let numbering = base;
    let base = u64::from(base);
    let mut problems: Vec<String> = Vec::new();
    // The loops over triangles run on all cores (meshes have millions); problems keep their order.
    let flipped: Vec<(usize, f64)> = (0..mesh.triangles.len())
        .into_par_iter()
        .filter_map(|t| {
            let [a, b, c] = mesh.triangles[t].map(|v| mesh.points[v as usize]);
            let orientation = orient2d(a, b, c);
            (orientation <= 0.0).then_some((t, orientation))
        })
        .collect();
    for &(t, orientation) in flipped.iter().take(MAX_PROBLEMS) {
        let [a, b, c] = mesh.triangles[t].map(|v| u64::from(v) + base);
        let what = if orientation == 0.0 { "degenerate: its corners are collinear" } else { "clockwise" };
        push(&mut problems, format!("triangle {} ({a}, {b}, {c}) is {what}", t as u64 + base));
    }
    let mut used = vec![false; n];
    for tri in &mesh.triangles {
        for &v in tri {
            used[v as usize] = true;
        }
    }
    let unused = used.par_iter().filter(|&&u| !u).count();
    if let Some(v) = used.iter().position(|&u| !u) {
        let others = match unused - 1 {
            0 => String::new(),
            1 => " (1 other point is in none either)".to_string(),
            more => format!(" ({more} other points are in none either)"),
        };
        push(&mut problems, format!("point {} is in no triangle{others}", v as u64 + base));
    }
    let neighbors = match mesh.neighbors_numbered(numbering) {
        Ok(neighbors) => Some(neighbors),
        Err(e) => {
            push(&mut problems, e.to_string());
            None
        }
    };
    if let Some(neighbors) = &neighbors {
        let constrained: HashSet<(u32, u32)> = mesh.segments.iter().flat_map(|&[a, b]| [(a, b), (b, a)]).collect();
        let not_delaunay: Vec<String> = (0..mesh.triangles.len())
            .into_par_iter()
            .flat_map_iter(|t| {
                let tri = mesh.triangles[t];
                let constrained = &constrained;
                (0..3).filter_map(move |i| {
                    let u = neighbors[t][i];
                    if u == NO_NEIGHBOR || (u as usize) < t {
                        return None;
                    }
                    let (a, b) = (tri[(i + 1) % 3], tri[(i + 2) % 3]);
                    if constrained.contains(&(a, b)) {
                        return None;
                    }
                    let far = mesh.triangles[u as usize].iter().copied().find(|&v| v != a && v != b)?;
                    let [p, q, r] = tri.map(|v| mesh.points[v as usize]);
                    (incircle(p, q, r, mesh.points[far as usize]) > 0.0).then(|| {
                        let [a, b, far, u] = [a, b, far, u].map(|v| u64::from(v) + base);
                        format!(
                            "edge {a}-{b} is not Delaunay: point {far} of triangle {u} lies inside the circumcircle of triangle {}",
                            t as u64 + base
                        )
                    })
                })
            })
            .collect();
        for problem in not_delaunay {
            push(&mut problems, problem);
        }
    }
    if problems.is_empty() {
        fans(mesh, &mut problems, base);
    }
    if problems.is_empty()
        && let Some(neighbors) = &neighbors
    {
        boundary_crossings(mesh, neighbors, &mut problems, base);
    }
    measure_quality(mesh, min_angle, &mut report);
    if let Some(expected) = expected_area
        && (report.area - expected).abs() > 1e-9 * expected.abs().max(1e-300)
    {
        push(&mut problems, format!("the triangles cover an area of {}, the domain's is {expected}", report.area));
    }
    report.problems = problems;
    report
}

/// The quality figures alone, without checking that the mesh is a valid Delaunay triangulation
/// (only that its indices are in range, as a problem): what a caller that does not verify
/// reports. A linear pass on every core, where [`check`] sorts the edges and walks every fan.
pub fn quality(mesh: &Mesh, min_angle: f64) -> Report {
    let mut report = unmeasured(mesh, 0);
    if report.problems.is_empty() {
        measure_quality(mesh, min_angle, &mut report);
    }
    report
}

/// A report of `mesh`'s counts, with a problem for each triangle naming a point that does not
/// exist (then nothing else can be measured); points and triangles numbered from `base`.
fn unmeasured(mesh: &Mesh, base: u32) -> Report {
    let n = mesh.points.len();
    let mut problems = Vec::new();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        if let Some(&v) = tri.iter().find(|&&v| v as usize >= n) {
            let (t, v) = (t as u64 + u64::from(base), u64::from(v) + u64::from(base));
            push(&mut problems, format!("triangle {t} names point {v}, but {}", crate::mesh::point_range(n, base)));
        }
    }
    Report {
        points: n,
        triangles: mesh.triangles.len(),
        min_angle: None,
        bad: 0,
        bad_at_small_angles: 0,
        area: 0.0,
        problems,
    }
}

/// The minimum angle, the bad triangles (and those excused by small input angles) and the area.
fn measure_quality(mesh: &Mesh, min_angle: f64, report: &mut Report) {
    // By cosines (the arc cosine only near the bound, and once for the smallest): the same
    // figures as every triangle's angle would give, the arc cosine being monotone.
    let cos_bound = min_angle.to_radians().cos();
    let (largest_cos, bad) = (0..mesh.triangles.len())
        .into_par_iter()
        .map(|t| {
            let cos = mesh.min_angle_cos(t);
            (cos, usize::from(crate::mesh::sharper(cos, min_angle, cos_bound)))
        })
        .reduce(|| (f64::NEG_INFINITY, 0), |x, y| (x.0.max(y.0), x.1 + y.1));
    report.min_angle = (!mesh.triangles.is_empty()).then(|| largest_cos.acos().to_degrees());
    report.bad = bad;
    if bad > 0 {
        report.bad_at_small_angles = bad_at_small_angles(mesh, min_angle);
    }
    report.area = mesh.area();
}

/// The triangles below `bound` whose every angle below it is at a point where the triangles'
/// angles sum to less than 60° (a corner of the domain that narrow).
fn bad_at_small_angles(mesh: &Mesh, bound: f64) -> usize {
    let corner_angles = |t: usize| -> [f64; 3] {
        let tri = mesh.triangles[t];
        std::array::from_fn(|i| angle_at(mesh, tri[i] as usize, (tri[(i + 1) % 3], tri[(i + 2) % 3])).to_degrees())
    };
    // A bad triangle's corners below the bound (its smallest, should rounding put that one at
    // the bound exactly).
    let sharp = |t: usize| -> Vec<usize> {
        let angles = corner_angles(t);
        let below: Vec<usize> = (0..3).filter(|&i| angles[i] < bound).collect();
        if below.is_empty() {
            vec![(0..3).min_by(|&i, &j| angles[i].total_cmp(&angles[j])).unwrap_or(0)]
        } else {
            below
        }
    };
    let cos_bound = bound.to_radians().cos();
    let bad: Vec<usize> =
        (0..mesh.triangles.len()).into_par_iter().filter(|&t| mesh.is_sharper(t, bound, cos_bound)).collect();
    // The points at the sharp corners of bad triangles, and the total angle around each (an
    // input mesh may have millions of bad triangles: flags and sums by point, on every core,
    // the sums added in the triangles' order).
    let corners: Vec<u32> =
        bad.par_iter().flat_map_iter(|&t| sharp(t).into_iter().map(move |i| mesh.triangles[t][i])).collect();
    let mut tracked = vec![false; mesh.points.len()];
    for &v in &corners {
        tracked[v as usize] = true;
    }
    let around = angles_around(mesh, &tracked);
    let at_corners = |t: usize| sharp(t).into_iter().all(|i| around[mesh.triangles[t][i] as usize] < 60.0);
    let left: Vec<usize> = bad.par_iter().copied().filter(|&t| !at_corners(t)).collect();
    bad.len() - left.len() + between_shells(mesh, &left)
}

/// The total angle, in degrees, of the triangles around each point `tracked` flags (0 for the
/// others): on every core, the sums added in the triangles' order.
fn angles_around(mesh: &Mesh, tracked: &[bool]) -> Vec<f64> {
    let angles: Vec<(u32, f64)> = mesh
        .triangles
        .par_iter()
        .filter(|tri| tri.iter().any(|&v| tracked[v as usize]))
        .flat_map_iter(|tri| {
            (0..3)
                .filter(|&i| tracked[tri[i] as usize])
                .map(|i| (tri[i], angle_at(mesh, tri[i] as usize, (tri[(i + 1) % 3], tri[(i + 2) % 3])).to_degrees()))
        })
        .collect();
    let mut around = vec![0.0f64; mesh.points.len()];
    for (v, angle) in angles {
        around[v as usize] += angle;
    }
    around
}

/// Of the bad triangles `bad`, those whose shortest side joins the two sides of a corner of the
/// domain narrower than 60°, at the same distance from the corner (to a relative 1e-9): points
/// on the straight runs of boundary that leave the corner. Looked for only when such triangles
/// are left, so the sort of every edge it takes is rarely made.
fn between_shells(mesh: &Mesh, bad: &[usize]) -> usize {
    if bad.is_empty() {
        return 0;
    }
    // The boundary, as next and previous point along it (triangles turn counter-clockwise,
    // so the domain is on each boundary side's left). A mesh whose edges do not pair up has
    // its problem reported by the checks of validity.
    let Ok(neighbors) = mesh.neighbors() else { return 0 };
    let n = mesh.points.len();
    let (mut next, mut prev) = (vec![u32::MAX; n], vec![u32::MAX; n]);
    for (tri, across) in mesh.triangles.iter().zip(&neighbors) {
        for i in (0..3).filter(|&i| across[i] == NO_NEIGHBOR) {
            let (a, b) = (tri[(i + 1) % 3], tri[(i + 2) % 3]);
            next[a as usize] = b;
            prev[b as usize] = a;
        }
    }
    let on_boundary = |v: u32| next[v as usize] != u32::MAX;
    let boundary_points: Vec<bool> = (0..n as u32).map(on_boundary).collect();
    let around = angles_around(mesh, &boundary_points);
    // By point: (corner, which of its two sides, squared distance from it) for the points on
    // the straight runs of boundary that leave a narrow corner.
    let mut on_side: std::collections::HashMap<u32, Vec<(u32, bool, f64)>> = std::collections::HashMap::new();
    let at = |v: u32| mesh.points[v as usize];
    for corner in (0..n as u32).filter(|&v| on_boundary(v) && around[v as usize] < 60.0) {
        let c = at(corner);
        for forward in [true, false] {
            let step = |v: u32| if forward { next[v as usize] } else { prev[v as usize] };
            let first = step(corner);
            let (dx, dy) = (at(first)[0] - c[0], at(first)[1] - c[1]);
            let mut v = first;
            let mut last = 0.0;
            while v != u32::MAX && v != corner {
                let (px, py) = (at(v)[0] - c[0], at(v)[1] - c[1]);
                let d2 = px * px + py * py;
                let cross = dx * py - dy * px;
                if d2 <= last || cross.abs() > 1e-9 * (dx * dx + dy * dy).sqrt() * d2.sqrt() {
                    break;
                }
                on_side.entry(v).or_default().push((corner, forward, d2));
                last = d2;
                v = step(v);
            }
        }
    }
    let length2 = |u: u32, v: u32| {
        let (p, q) = (at(u), at(v));
        (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)
    };
    let across_shell = |u: u32, v: u32| {
        let (Some(us), Some(vs)) = (on_side.get(&u), on_side.get(&v)) else { return false };
        us.iter().any(|&(c, side, du)| {
            vs.iter().any(|&(c2, side2, dv)| c == c2 && side != side2 && (du - dv).abs() <= 1e-9 * du.max(dv))
        })
    };
    bad.iter()
        .filter(|&&t| {
            let tri = mesh.triangles[t];
            let sides = [0, 1, 2].map(|i| (tri[i], tri[(i + 1) % 3]));
            let shortest = sides.iter().map(|&(u, v)| length2(u, v)).fold(f64::INFINITY, f64::min);
            sides.iter().any(|&(u, v)| length2(u, v) <= shortest * (1.0 + 1e-9) && across_shell(u, v))
        })
        .count()
}

/// Around every point its triangles form one fan (one cycle of triangles for an inner point,
/// one path for a boundary point), turning once around it: an extra triangle laid over the
/// mesh, or a mesh folded over itself, breaks a fan or makes it turn twice. Points are named
/// from `base`.
fn fans(mesh: &Mesh, problems: &mut Vec<String>, base: u64) {
    let n = mesh.points.len();
    // For each point, its link: the directed edges (next corner, corner after) of its
    // triangles, point v's in link[start[v]..start[v + 1]] (in no particular order: a fan's
    // verdict does not depend on it). Counted and filled on every core.
    let counts: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    mesh.triangles.par_iter().for_each(|tri| {
        for &v in tri {
            counts[v as usize].fetch_add(1, Ordering::Relaxed);
        }
    });
    let mut start = vec![0usize; n + 1];
    for v in 0..n {
        start[v + 1] = start[v] + counts[v].load(Ordering::Relaxed);
    }
    let cursor: Vec<AtomicUsize> = start[..n].iter().map(|&s| AtomicUsize::new(s)).collect();
    let link: Vec<AtomicU64> = (0..start[n]).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    mesh.triangles.par_iter().for_each(|tri| {
        for i in 0..3 {
            let at = cursor[tri[i] as usize].fetch_add(1, Ordering::Relaxed);
            let edge = (u64::from(tri[(i + 1) % 3]) << 32) | u64::from(tri[(i + 2) % 3]);
            link[at].store(edge, Ordering::Relaxed);
        }
    });
    let link: Vec<(u32, u32)> = link
        .into_par_iter()
        .map(|edge| {
            let edge = edge.into_inner();
            ((edge >> 32) as u32, edge as u32)
        })
        .collect();
    let found: Vec<String> =
        (0..n).into_par_iter().filter_map(|v| fan_problem(mesh, v, &link[start[v]..start[v + 1]], base)).collect();
    for problem in found {
        push(problems, problem);
    }
}

/// What is wrong with the fan of point `v`, whose link is `edges`, if anything (the point named
/// from `base`).
///
/// Every triangle is counter-clockwise (checked exactly before the fans), so each link edge
/// (a, b) turns counter-clockwise about `v` by less than half a turn. How many full turns a
/// walk along the link makes is then counted exactly, without angles: a step crosses a
/// direction `d` from `v` once it goes from the side right of `d` to `d` or its left, and no
/// step can cross the opposite direction that way (that would take more than half a turn).
fn fan_problem(mesh: &Mesh, v: usize, edges: &[(u32, u32)], base: u64) -> Option<String> {
    if edges.is_empty() {
        return None;
    }
    // Follow the link from a start with no predecessor (a boundary point's path), or from
    // anywhere (an inner point's cycle); every edge must be reached.
    let start = edges.iter().position(|&(a, _)| !edges.iter().any(|&(_, b)| b == a));
    let is_cycle = start.is_none();
    let start = start.unwrap_or(0);
    let p = mesh.points[v];
    let first = mesh.points[edges[start].0 as usize];
    // The side of direction d (from p) a point lies on: negative right of it.
    let side = |d: [f64; 2], q: u32| orient2d(p, d, mesh.points[q as usize]);
    // A cycle counts its crossings of the direction +x (a pure comparison of coordinates); a
    // path those of its own first direction, which it must not reach again.
    let crosses = |&(a, b): &(u32, u32)| -> bool {
        if is_cycle {
            let (ya, yb) = (mesh.points[a as usize][1], mesh.points[b as usize][1]);
            ya < p[1] && yb >= p[1]
        } else {
            side(first, a) < 0.0 && side(first, b) >= 0.0
        }
    };
    let mut seen = 1;
    let mut turns = usize::from(crosses(&edges[start]));
    let mut at = edges[start].1;
    while seen < edges.len() {
        let Some(next) = edges.iter().find(|&&(a, _)| a == at) else { break };
        if is_cycle && next == &edges[start] {
            break;
        }
        turns += usize::from(crosses(next));
        at = next.1;
        seen += 1;
    }
    let name = v as u64 + base;
    if seen != edges.len() {
        Some(format!("the triangles around point {name} do not form one fan: overlapping or disconnected triangles"))
    } else if is_cycle && turns != 1 {
        Some(format!(
            "the triangles around point {name} turn {}° around it, not 360°: the mesh folds over itself",
            360 * turns
        ))
    } else if !is_cycle && turns > 0 {
        Some(format!("the triangles around boundary point {name} cover more than a full turn"))
    } else {
        None
    }
}

/// The angle at corner `v` of the triangle whose opposite side is `side`, in radians.
fn angle_at(mesh: &Mesh, v: usize, side: (u32, u32)) -> f64 {
    let p = mesh.points[v];
    let (a, b) = (mesh.points[side.0 as usize], mesh.points[side.1 as usize]);
    let (ax, ay, bx, by) = (a[0] - p[0], a[1] - p[1], b[0] - p[0], b[1] - p[1]);
    (ax * by - ay * bx).atan2(ax * bx + ay * by).abs()
}

/// No two boundary edges (sides of one triangle only) cross: with the fans above, the mesh is
/// then a proper triangulation of the region its boundary encloses, with no overlaps. Edges are
/// bucketed on a grid, so this costs about one test per edge. Points are named from `base`.
fn boundary_crossings(mesh: &Mesh, neighbors: &[[u32; 3]], problems: &mut Vec<String>, base: u64) {
    let mut edges = Vec::new();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        for i in 0..3 {
            if neighbors[t][i] == NO_NEIGHBOR {
                edges.push((tri[(i + 1) % 3], tri[(i + 2) % 3]));
            }
        }
    }
    if edges.is_empty() {
        return;
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in &mesh.points {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let cells = (edges.len() as f64).sqrt().ceil().max(1.0) as usize;
    let cell_of = |x: f64, k: usize| {
        let span = (hi[k] - lo[k]).max(f64::MIN_POSITIVE);
        (((x - lo[k]) / span * cells as f64) as usize).min(cells - 1)
    };
    let mut grid: Vec<Vec<usize>> = vec![Vec::new(); cells * cells];
    for (e, &(a, b)) in edges.iter().enumerate() {
        let (p, q) = (mesh.points[a as usize], mesh.points[b as usize]);
        for cx in cell_of(p[0].min(q[0]), 0)..=cell_of(p[0].max(q[0]), 0) {
            for cy in cell_of(p[1].min(q[1]), 1)..=cell_of(p[1].max(q[1]), 1) {
                grid[cx * cells + cy].push(e);
            }
        }
    }
    let mut tested = std::collections::HashSet::new();
    for bucket in &grid {
        for (i, &e) in bucket.iter().enumerate() {
            for &f in &bucket[i + 1..] {
                let (e, f) = (e.min(f), e.max(f));
                if !tested.insert((e, f)) {
                    continue;
                }
                let ((a, b), (c, d)) = (edges[e], edges[f]);
                if a == c || a == d || b == c || b == d {
                    continue; // Edges meeting at a point: the fans judged that point.
                }
                let [pa, pb, pc, pd] = [a, b, c, d].map(|v| mesh.points[v as usize]);
                let (o1, o2) = (orient2d(pa, pb, pc), orient2d(pa, pb, pd));
                let (o3, o4) = (orient2d(pc, pd, pa), orient2d(pc, pd, pb));
                if o1 * o2 <= 0.0 && o3 * o4 <= 0.0 && !(o1 == 0.0 && o2 == 0.0 && disjoint(pa, pb, pc, pd)) {
                    let [a, b, c, d] = [a, b, c, d].map(|v| u64::from(v) + base);
                    push(problems, format!("boundary edges {a}-{b} and {c}-{d} cross: the mesh overlaps itself"));
                    return;
                }
            }
        }
    }
}

/// Whether collinear segments `ab` and `cd` are apart.
fn disjoint(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
    let k = if (a[0] - b[0]).abs() > (a[1] - b[1]).abs() { 0 } else { 1 };
    let (lo1, hi1) = (a[k].min(b[k]), a[k].max(b[k]));
    let (lo2, hi2) = (c[k].min(d[k]), c[k].max(d[k]));
    hi1 < lo2 || hi2 < lo1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::random_points;

    /// The quality figures by cosines equal those of every triangle's angle: the smallest
    /// angle, and which triangles are below bounds at and around their angles (triangles made
    /// with an angle of exactly the bound, and a hair either side).
    #[test]
    fn quality_by_cosines_equals_quality_by_angles() {
        let mut mesh = random_points(400, 1.0, 9).unwrap();
        for degrees in [20.0f64, 30.0, 33.5] {
            for nudge in [-1e-7, -1e-12, 0.0, 1e-12, 1e-7] {
                let angle = (degrees + nudge).to_radians();
                let base = mesh.points.len() as u32;
                // An isosceles triangle whose apex angle is `angle` (the smallest of the three).
                mesh.points.extend([[0.0, 0.0], [1.0, 0.0], [angle.cos(), angle.sin()]]);
                mesh.triangles.push([base, base + 1, base + 2]);
            }
        }
        for bound in [20.0, 30.0, 33.5] {
            let cos_bound = f64::to_radians(bound).cos();
            for t in 0..mesh.triangles.len() {
                assert_eq!(
                    mesh.is_sharper(t, bound, cos_bound),
                    mesh.min_angle(t) < bound,
                    "triangle {t}, bound {bound}"
                );
            }
            let report = quality(&mesh, bound);
            let smallest = (0..mesh.triangles.len()).map(|t| mesh.min_angle(t)).fold(f64::INFINITY, f64::min);
            assert_eq!(report.min_angle, Some(smallest));
            assert_eq!(report.bad, (0..mesh.triangles.len()).filter(|&t| mesh.min_angle(t) < bound).count());
        }
    }

    #[test]
    fn generated_meshes_pass_and_broken_ones_fail_with_the_reason() {
        for seed in 0..20 {
            let mesh = random_points(50 + seed as usize * 17, 10.0, seed).unwrap();
            let report = check(&mesh, 30.0, None);
            assert!(report.is_valid(), "seed {seed}: {:?}", report.problems);
            assert!(report.min_angle.unwrap() > 0.0);
            // Unrefined: sharp angles inside the domain, which nothing excuses.
            assert!(report.bad > report.bad_at_small_angles && !report.meets_bound(), "seed {seed}");
            assert_eq!(report.triangles, mesh.triangles.len());
        }
        let mesh = random_points(200, 1.0, 3).unwrap();
        // Flip one triangle.
        let mut flipped = mesh.clone();
        flipped.triangles[5].swap(0, 1);
        assert!(check(&flipped, 30.0, None).problems.iter().any(|p| p.contains("clockwise")));
        // Drop a triangle: the area falls short of the domain's.
        let area = mesh.area();
        let mut holed = mesh.clone();
        holed.triangles.remove(7);
        let report = check(&holed, 30.0, Some(area));
        assert!(report.problems.iter().any(|p| p.contains("area")), "{:?}", report.problems);
        // A triangle laid over the mesh between far-apart points, and one replaced that way.
        for replace in [false, true] {
            let mut overlaid = mesh.clone();
            let far = [0u32, 100, 199];
            let [a, b, c] = far.map(|v| overlaid.points[v as usize]);
            let tri = if orient2d(a, b, c) > 0.0 { far } else { [far[0], far[2], far[1]] };
            if replace {
                overlaid.triangles[4] = tri;
            } else {
                overlaid.triangles.push(tri);
            }
            let report = check(&overlaid, 30.0, None);
            assert!(!report.is_valid(), "replace {replace}: an overlapping triangle passed");
        }
        // A duplicated triangle.
        let mut doubled = mesh;
        doubled.triangles.push(doubled.triangles[0]);
        assert!(check(&doubled, 30.0, None).problems.iter().any(|p| p.contains("same direction")));
    }

    /// A fan of counter-clockwise triangles that winds twice around its point (each passes the
    /// checks of its own: only the fan shows the fold), and a boundary fan that laps itself.
    #[test]
    fn fans_that_wind_twice_are_caught_exactly() {
        // Point 0 at the origin; six points a third of a turn apart, farther out each time.
        let ring = |turns: usize, closed: bool| {
            let steps = 3 * turns;
            let mut points = vec![[0.0, 0.0]];
            for i in 0..steps {
                let angle = std::f64::consts::TAU * i as f64 / 3.0 + 0.1;
                let r = 1.0 + 0.1 * i as f64;
                points.push([r * angle.cos(), r * angle.sin()]);
            }
            let last = if closed { steps } else { steps - 1 };
            let triangles = (0..last).map(|i| [0, 1 + i as u32, 1 + ((i + 1) % steps) as u32]).collect();
            Mesh { points, triangles, ..Mesh::default() }
        };
        for (turns, closed, expected) in [
            (1, true, None),
            (2, true, Some("turn 720° around it")),
            (3, true, Some("turn 1080° around it")),
            (1, false, None),
            (2, false, Some("cover more than a full turn")),
        ] {
            let mesh = ring(turns, closed);
            assert!(mesh.triangles.iter().all(|t| {
                let [a, b, c] = t.map(|v| mesh.points[v as usize]);
                orient2d(a, b, c) > 0.0
            }));
            let mut problems = Vec::new();
            fans(&mesh, &mut problems, 0);
            match expected {
                None => assert!(problems.is_empty(), "{turns} turns, closed {closed}: {problems:?}"),
                Some(text) => {
                    assert!(problems.iter().any(|p| p.contains(text)), "{turns} turns, closed {closed}: {problems:?}")
                }
            }
        }
    }

    #[test]
    fn quality_alone_measures_what_the_verifier_measures() {
        let mesh = random_points(500, 3.0, 9).unwrap();
        for bound in [0.0, 20.0, 30.0] {
            let full = check(&mesh, bound, None);
            let measured = quality(&mesh, bound);
            assert_eq!(measured, Report { problems: Vec::new(), ..full });
        }
        // It checks no validity, but a point that does not exist is still named.
        let mut broken = mesh.clone();
        broken.triangles[3][1] = 10_000;
        let report = quality(&broken, 30.0);
        assert!(report.problems.iter().any(|p| p.contains("names point 10000")), "{:?}", report.problems);
        let mut flipped = mesh;
        flipped.triangles[5].swap(0, 1);
        assert!(quality(&flipped, 30.0).is_valid(), "quality checks no orientation");
    }

    #[test]
    fn a_non_delaunay_quad_is_caught() {
        // Two triangles over the long diagonal of a thin rhombus: not Delaunay.
        let mesh = Mesh {
            points: vec![[0.0, 0.0], [2.0, -0.2], [4.0, 0.0], [2.0, 0.2]],
            triangles: vec![[0, 1, 3], [1, 2, 3]],
            ..Mesh::default()
        };
        let report = check(&mesh, 20.0, None);
        assert!(report.is_valid(), "{:?}", report.problems);
        // Both triangles are below 20° only at the rhombus's sharp ends, where the domain itself
        // is 11.4° wide: excused.
        assert_eq!((report.bad, report.bad_at_small_angles), (2, 2));
        assert!(report.meets_bound());
        let bad = Mesh { triangles: vec![[0, 1, 2], [0, 2, 3]], ..mesh };
        let report = check(&bad, 20.0, None);
        assert!(report.problems.iter().any(|p| p.contains("not Delaunay")), "{:?}", report.problems);
        assert_eq!(report.bad, 2);
    }

    /// A wedge of 20°, its sides split at half their length: the triangle at the corner is
    /// excused by its angle there, the one whose shortest side joins the two splits (the same
    /// distance from the corner) by the shells; with the splits at different distances, only
    /// the first.
    #[test]
    fn triangles_between_shells_of_a_sharp_corner_are_excused() {
        let a = 20f64.to_radians();
        let wedge = |q: f64| Mesh {
            points: vec![[0.0, 0.0], [1.0, 0.0], [a.cos(), a.sin()], [0.5 * a.cos(), 0.5 * a.sin()], [q, 0.0]],
            triangles: vec![[1, 2, 3], [1, 3, 4], [3, 0, 4]],
            ..Mesh::default()
        };
        let report = check(&wedge(0.5), 30.0, None);
        assert!(report.is_valid(), "{:?}", report.problems);
        assert_eq!((report.bad, report.bad_at_small_angles), (2, 2));
        let report = check(&wedge(0.45), 30.0, None);
        assert!(
            report.bad >= 2 && report.bad_at_small_angles == 1,
            "{} bad, {} excused",
            report.bad,
            report.bad_at_small_angles
        );
    }
}
