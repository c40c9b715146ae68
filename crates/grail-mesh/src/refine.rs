//! The reference mesh refiner: Delaunay refinement (Ruppert's and Chew's algorithms, as `spade`
//! implements them) of a mesh or a planar straight-line graph, the sequential baseline that the
//! grail program refining meshes in parallel is checked and measured against.

use std::collections::HashSet;

use spade::{
    AngleLimit, ConstrainedDelaunayTriangulation, Point2, PositionInTriangulation, RefinementParameters, Triangulation,
};

use crate::{Mesh, MeshError, NO_NEIGHBOR, Result};

/// The largest quality bound, in degrees, that refinement accepts. Delaunay refinement is
/// sure to end only for bounds up to about 20.7° (Ruppert's algorithm; Triangle proves 28.6°
/// for its own variant); with off-centers it ends in practice on most meshes up to about 33°,
/// and from about 33.5° some meshes are refined without end (the reference refiner on a
/// 200-point random mesh at 33.5°, past a million added points; both refiners on random meshes
/// of 1,000 and 100,000 points at 33.8°). Triangle warns above 34°: past that, the bound is
/// refused, and below it the point budget ([`default_max_points`]) stops a refinement that
/// would not end.
pub const MAX_MIN_ANGLE: f64 = 34.0;

/// Points a refinement may add by default, whatever the input's size: enough for the small
/// domains with narrow features that need thousands of points per input point (a 15° wedge of
/// three points takes thousands), few enough that a refinement that would not end (a bound
/// above about 33°) stops within seconds on a small mesh.
pub const DEFAULT_ADDED_POINTS: usize = 1_000_000;

/// Points a refinement may add by default per input point, beyond [`DEFAULT_ADDED_POINTS`]:
/// random meshes of 1,000 to 100,000 points refined at 33° (near the largest bound that ends)
/// grew by 9 to 23 points per input point, at 30° by 3 to 5, so a hundred leaves room for any
/// refinement that ends, and stops one that does not before it has eaten the machine's memory.
pub const DEFAULT_ADDED_PER_POINT: usize = 100;

/// The default budget of added points for an input of `points` points:
/// [`DEFAULT_ADDED_POINTS`] plus [`DEFAULT_ADDED_PER_POINT`] per point. A fixed budget either
/// stops large meshes' refinements short or lets a small mesh's endless one run for minutes and
/// gigabytes first; one that grows with the input does neither.
pub fn default_max_points(points: usize) -> usize {
    DEFAULT_ADDED_POINTS.saturating_add(points.saturating_mul(DEFAULT_ADDED_PER_POINT))
}

/// What a refinement produced.
#[derive(Debug, Clone)]
pub struct Refined {
    pub mesh: Mesh,
    /// False when the refinement stopped at its point budget with bad triangles left.
    pub complete: bool,
}

/// The domain's boundary: `mesh`'s segments when it has them (a `.poly` file), else the sides of
/// its triangles that no other triangle shares (the outline of a triangulated mesh).
pub fn boundary(mesh: &Mesh) -> Result<Vec<[u32; 2]>> {
    boundary_numbered(mesh, 0)
}

/// [`boundary`], an error naming points from `base`.
fn boundary_numbered(mesh: &Mesh, base: u32) -> Result<Vec<[u32; 2]>> {
    if !mesh.segments.is_empty() {
        return Ok(mesh.segments.clone());
    }
    let neighbors = mesh.neighbors_numbered(base)?;
    let mut sides = Vec::new();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        for i in 0..3 {
            if neighbors[t][i] == NO_NEIGHBOR {
                sides.push([tri[(i + 1) % 3], tri[(i + 2) % 3]]);
            }
        }
    }
    Ok(sides)
}

/// Refines `mesh` (its triangles, or, for a `.poly` domain without triangles, its points and
/// segments) until no triangle inside the domain has an angle below `min_angle` degrees, adding
/// at most `max_points` points. Boundary segments are kept (split at midpoints where
/// encroached); holes are the regions the boundary encloses an even number of times.
pub fn reference(mesh: &Mesh, min_angle: f64, max_points: usize) -> Result<Refined> {
    if !(min_angle.is_finite() && (0.0..=MAX_MIN_ANGLE).contains(&min_angle)) {
        return Err(MeshError::Invalid(format!(
            "minimum angle {min_angle}°: expected 0 to {MAX_MIN_ANGLE}° (above, Delaunay refinement need not end)"
        )));
    }
    if mesh.points.is_empty() {
        // Nothing to refine (and nothing for the triangulation to start from): the empty mesh,
        // as the grail program gives it.
        return Ok(Refined { mesh: Mesh { holes: mesh.holes.clone(), ..Mesh::default() }, complete: true });
    }
    let mut cdt = constrained_triangulation(mesh, 0)?;
    let parameters = RefinementParameters::<f64>::new()
        .with_angle_limit(AngleLimit::from_deg(min_angle))
        .with_max_additional_vertices(max_points)
        .exclude_outer_faces(true);
    let result = cdt.refine(parameters);
    let excluded: HashSet<_> = result.excluded_faces.iter().copied().collect();
    let points: Vec<[f64; 2]> = cdt.vertices().map(|v| [v.position().x, v.position().y]).collect();
    let triangles: Vec<[u32; 3]> = cdt
        .inner_faces()
        .filter(|face| !excluded.contains(&face.fix()))
        .map(|face| face.vertices().map(|v| v.fix().index() as u32))
        .collect();
    let segments: Vec<[u32; 2]> = cdt
        .undirected_edges()
        .filter(|edge| edge.is_constraint_edge())
        .map(|edge| edge.vertices().map(|v| v.fix().index() as u32))
        .collect();
    if triangles.is_empty() {
        // spade decides what is inside by parity: a segment with the domain on both sides makes
        // regions alternate, and a square with its diagonal comes out empty.
        return Err(MeshError::Invalid(
            "no triangle lies inside the domain (the reference refiner takes a segment inside the domain as a boundary between inside and outside)".into(),
        ));
    }
    let mut refined = Mesh { points, triangles, segments, holes: mesh.holes.clone() };
    refined.normalize()?;
    drop_unused_points(&mut refined);
    Ok(Refined { mesh: refined, complete: result.refinement_complete })
}

/// The constrained Delaunay triangulation of a `.poly` domain (its points and segments), with no
/// point added, without the triangles outside it, as Triangle decides: those reachable from
/// outside the convex hull, or from a hole's point, without crossing a segment. (A segment with
/// the domain on both sides stays inside it.) The starting mesh of a refinement that takes
/// triangles; its segments are the constraint edges (a segment through other points comes back in
/// pieces).
pub fn triangulate_domain(domain: &Mesh) -> Result<Mesh> {
    let mut mesh = triangulate_in_place(domain, 0)?;
    drop_unused_points(&mut mesh);
    Ok(mesh)
}

/// A `.poly` domain as both refiners need it, errors naming points as its file numbers them
/// (from `base`): its points distinct, its segments crossing nowhere but at their ends, some area
/// inside, and every segment on the domain's boundary (with the domain on one side only), which
/// neither refiner keeps otherwise: the grail program refines across such a segment, the
/// reference takes it for a boundary between inside and outside. Returns the domain triangulated
/// ([`triangulate_domain`]), what the grail program starts from. Checked before either refiner
/// runs, so that a domain is accepted or refused with the same words whichever refines it.
pub fn domain_for_refinement(domain: &Mesh, base: u32) -> Result<Mesh> {
    let mut mesh = triangulate_in_place(domain, base)?;
    // The points are still the domain's, in its order (spade keeps the order, and duplicates
    // were refused): a segment found here is named as the file names its ends.
    let across = mesh.neighbors_numbered(base)?;
    let mut boundary = HashSet::new();
    for (tri, n) in mesh.triangles.iter().zip(&across) {
        for i in (0..3).filter(|&i| n[i] == NO_NEIGHBOR) {
            let (u, v) = (tri[(i + 1) % 3], tri[(i + 2) % 3]);
            boundary.insert((u.min(v), u.max(v)));
        }
    }
    let inside = mesh.segments.iter().find(|[u, v]| !boundary.contains(&((*u).min(*v), (*u).max(*v))));
    if let Some(&[u, v]) = inside {
        let [u, v] = [u.min(v), u.max(v)].map(|p| u64::from(p) + u64::from(base));
        return Err(MeshError::Invalid(format!(
            "the segment between points {u} and {v} lies inside the domain (triangles on both sides): \
             the refiners keep only the domain's boundary, not segments with the domain on both sides \
             (not supported yet)"
        )));
    }
    drop_unused_points(&mut mesh);
    Ok(mesh)
}

/// [`triangulate_domain`] without dropping the points outside the domain: its points are the
/// domain's, in order. Errors name points from `base`.
fn triangulate_in_place(domain: &Mesh, base: u32) -> Result<Mesh> {
    let cdt = constrained_triangulation(domain, base)?;
    let mut outside = HashSet::new();
    let mut stack = Vec::new();
    for face in cdt.inner_faces() {
        if face.adjacent_edges().iter().any(|e| !e.is_constraint_edge() && e.rev().face().as_inner().is_none()) {
            stack.push(face.fix());
        }
    }
    for hole in &domain.holes {
        match cdt.locate(Point2::new(hole[0], hole[1])) {
            PositionInTriangulation::OnFace(face) => stack.push(face),
            PositionInTriangulation::OnEdge(edge) => {
                let edge = cdt.directed_edge(edge);
                stack.extend([edge.face(), edge.rev().face()].iter().filter_map(|f| f.as_inner()).map(|f| f.fix()));
            }
            _ => {}
        }
    }
    while let Some(face) = stack.pop() {
        if !outside.insert(face) {
            continue;
        }
        for edge in cdt.face(face).adjacent_edges() {
            if let Some(next) = edge.rev().face().as_inner()
                && !edge.is_constraint_edge()
                && !outside.contains(&next.fix())
            {
                stack.push(next.fix());
            }
        }
    }
    let points: Vec<[f64; 2]> = cdt.vertices().map(|v| [v.position().x, v.position().y]).collect();
    let triangles: Vec<[u32; 3]> = cdt
        .inner_faces()
        .filter(|face| !outside.contains(&face.fix()))
        .map(|face| face.vertices().map(|v| v.fix().index() as u32))
        .collect();
    if triangles.is_empty() {
        return Err(MeshError::Invalid("the domain encloses no area: no triangle lies inside it".into()));
    }
    let segments: Vec<[u32; 2]> = cdt
        .undirected_edges()
        .filter(|edge| edge.is_constraint_edge())
        .map(|edge| edge.vertices().map(|v| v.fix().index() as u32))
        .collect();
    let mut mesh = Mesh { points, triangles, segments, holes: domain.holes.clone() };
    mesh.normalize_numbered(base)?;
    Ok(mesh)
}

/// Every point's coordinates are ones the refiners' exact predicates take (0, or of a magnitude
/// from `spade::MIN_ALLOWED_VALUE` to `spade::MAX_ALLOWED_VALUE`: past them their products
/// overflow or underflow); else an error naming the first point that is not, from `base`.
/// The reference refiner's triangulation refuses such points itself; the grail program's
/// predicates would silently go wrong, so a caller checks before either.
pub fn check_coordinates(mesh: &Mesh, base: u32) -> Result<()> {
    for (v, p) in mesh.points.iter().enumerate() {
        if let Some(problem) =
            crate::generate::coordinate_problem(p[0]).or_else(|| crate::generate::coordinate_problem(p[1]))
        {
            // `{:?}`: the shortest text that reads back as the number, with an exponent where
            // that is shorter (1e300, not three hundred digits).
            let v = v as u64 + u64::from(base);
            return Err(MeshError::Invalid(format!("point {v} ({:?}, {:?}) {problem}", p[0], p[1])));
        }
    }
    Ok(())
}

/// The constrained Delaunay triangulation of `mesh`'s points with its boundary as constraints;
/// duplicate points, crossing segments and coordinates the triangulation cannot take are errors,
/// naming points from `base`.
fn constrained_triangulation(mesh: &Mesh, base: u32) -> Result<ConstrainedDelaunayTriangulation<Point2<f64>>> {
    let name = |v: usize| v as u64 + u64::from(base);
    check_coordinates(mesh, base)?;
    let constraints = boundary_numbered(mesh, base)?;
    let points: Vec<Point2<f64>> = mesh.points.iter().map(|p| Point2::new(p[0], p[1])).collect();
    let edges: Vec<[usize; 2]> = constraints.iter().map(|&[a, b]| [a as usize, b as usize]).collect();
    let mut conflicts = Vec::new();
    let cdt = ConstrainedDelaunayTriangulation::<Point2<f64>>::try_bulk_load_cdt(points, edges, |e| conflicts.push(e))
        .map_err(|e| MeshError::Invalid(format!("cannot triangulate the domain: {e}")))?;
    if cdt.num_vertices() != mesh.points.len() {
        return Err(MeshError::Invalid(format!(
            "the domain has {} points but only {} distinct ones: remove the duplicates",
            mesh.points.len(),
            cdt.num_vertices()
        )));
    }
    if let Some(&[a, b]) = conflicts.first() {
        return Err(MeshError::Invalid(format!(
            "boundary segment {}-{} crosses another segment: segments may meet only at their ends{}",
            name(a),
            name(b),
            if conflicts.len() > 1 { format!(" ({} crossings in all)", conflicts.len()) } else { String::new() }
        )));
    }
    Ok(cdt)
}

/// Removes points no triangle uses (corners of excluded outer faces), renumbering the rest.
fn drop_unused_points(mesh: &mut Mesh) {
    let mut used = vec![false; mesh.points.len()];
    for tri in &mesh.triangles {
        for &v in tri {
            used[v as usize] = true;
        }
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let mut renumber = vec![u32::MAX; mesh.points.len()];
    let mut points = Vec::with_capacity(mesh.points.len());
    for (v, p) in mesh.points.iter().enumerate() {
        if used[v] {
            renumber[v] = points.len() as u32;
            points.push(*p);
        }
    }
    mesh.points = points;
    for tri in &mut mesh.triangles {
        *tri = tri.map(|v| renumber[v as usize]);
    }
    mesh.segments.retain(|s| s.iter().all(|&v| renumber[v as usize] != u32::MAX));
    for s in &mut mesh.segments {
        *s = s.map(|v| renumber[v as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::random_points;
    use crate::verify::check;

    #[test]
    fn refined_meshes_verify_keep_their_area_and_meet_the_bound() {
        for seed in 0..8 {
            let mesh = random_points(200 + 50 * seed as usize, 1.0, seed).unwrap();
            let before = check(&mesh, 25.0, None);
            assert!(before.bad > 0);
            let refined = reference(&mesh, 25.0, 1_000_000).unwrap();
            assert!(refined.complete);
            let after = check(&refined.mesh, 25.0, Some(mesh.area()));
            assert!(after.is_valid(), "seed {seed}: {:?}", after.problems);
            // Chew's and Ruppert's theory allows bad triangles only at small input angles,
            // which a convex hull's corners can be: few, if any, remain.
            assert!(after.bad * 50 <= after.triangles, "seed {seed}: {} bad of {}", after.bad, after.triangles);
            assert!(after.triangles > before.triangles);
        }
    }

    /// The default budget grows with the input, from a floor that small domains need.
    #[test]
    fn default_budgets_grow_with_the_input() {
        assert_eq!(default_max_points(0), DEFAULT_ADDED_POINTS);
        assert_eq!(default_max_points(200), 1_020_000);
        assert_eq!(default_max_points(usize::MAX), usize::MAX);
    }

    /// Nothing to refine: the empty mesh back, complete, as the grail program gives it.
    #[test]
    fn an_empty_mesh_refines_to_itself() {
        let refined = reference(&Mesh::default(), 30.0, 10).unwrap();
        assert!(refined.complete && refined.mesh.points.is_empty() && refined.mesh.triangles.is_empty());
        assert!(reference(&Mesh::default(), 34.5, 10).unwrap_err().to_string().contains("expected 0 to 34"));
    }

    /// A domain is refused with its points named as its file numbers them: a segment inside the
    /// domain, crossing segments, duplicate points, a coordinate the triangulation cannot take.
    #[test]
    fn domains_are_refused_with_their_points_numbered_as_the_file_does() {
        let square = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let domain = |points: Vec<[f64; 2]>, segments: Vec<[u32; 2]>| Mesh { points, segments, ..Mesh::default() };
        let outline = vec![[0, 1], [1, 2], [2, 3], [3, 0]];
        let fine = domain_for_refinement(&domain(square.clone(), outline.clone()), 1).unwrap();
        assert_eq!((fine.points.len(), fine.triangles.len()), (4, 2));
        let diagonal = [outline.clone(), vec![[2, 0]]].concat();
        for base in [0, 1] {
            let error = domain_for_refinement(&domain(square.clone(), diagonal.clone()), base).unwrap_err().to_string();
            let named = format!("the segment between points {} and {} lies inside the domain", base, 2 + base);
            assert!(error.contains(&named), "{error}");
        }
        let crossing = vec![[0, 2], [2, 1], [1, 3], [3, 0]];
        let error = domain_for_refinement(&domain(square.clone(), crossing), 1).unwrap_err().to_string();
        // Whichever of the two spade meets second is named, as the file numbers it.
        let named = ["boundary segment 1-3 ", "boundary segment 2-4 "].iter().any(|s| error.contains(s));
        assert!(error.contains("crosses another segment") && named, "{error}");
        let twice = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0]];
        let error = domain_for_refinement(&domain(twice, vec![[0, 1], [1, 2], [2, 0]]), 1).unwrap_err().to_string();
        assert!(error.contains("only 3 distinct ones"), "{error}");
        let huge = vec![[0.0, 0.0], [1e300, 0.0], [0.0, 1.0]];
        let error = domain_for_refinement(&domain(huge, vec![[0, 1], [1, 2], [2, 0]]), 1).unwrap_err().to_string();
        assert!(error.contains("point 2 (1e300, 0.0) is out of range"), "{error}");
    }

    #[test]
    fn a_square_with_a_hole_stays_a_square_with_a_hole() {
        let mut points = vec![[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]];
        points.extend([[1.0, 1.0], [3.0, 1.0], [3.0, 3.0], [1.0, 3.0]]);
        let segments = vec![[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]];
        let domain = Mesh { points, triangles: Vec::new(), segments, holes: vec![[2.0, 2.0]] };
        let refined = reference(&domain, 30.0, 100_000).unwrap();
        let report = check(&refined.mesh, 30.0, Some(16.0 - 4.0));
        assert!(report.is_valid(), "{:?}", report.problems);
        assert_eq!(report.bad, 0);
        assert!(reference(&domain, 40.0, 10).is_err());
    }
}
