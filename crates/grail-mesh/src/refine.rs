//! The reference mesh refiner: Delaunay refinement (Ruppert's and Chew's algorithms, as `spade`
//! implements them) of a mesh or a planar straight-line graph, the sequential baseline that the
//! grail program refining meshes in parallel is checked and measured against.

use std::collections::HashSet;

use spade::{
    AngleLimit, ConstrainedDelaunayTriangulation, Point2, PositionInTriangulation, RefinementParameters, Triangulation,
};

use crate::{Mesh, MeshError, NO_NEIGHBOR, Result};

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
    if !mesh.segments.is_empty() {
        return Ok(mesh.segments.clone());
    }
    let neighbors = mesh.neighbors()?;
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
    if !(min_angle.is_finite() && (0.0..=34.0).contains(&min_angle)) {
        return Err(MeshError::Invalid(format!(
            "minimum angle {min_angle}°: Delaunay refinement terminates for bounds up to about 34° (use 0 to 34)"
        )));
    }
    let mut cdt = constrained_triangulation(mesh)?;
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
    let cdt = constrained_triangulation(domain)?;
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
    mesh.normalize()?;
    drop_unused_points(&mut mesh);
    Ok(mesh)
}

/// The constrained Delaunay triangulation of `mesh`'s points with its boundary as constraints;
/// duplicate points and crossing segments are errors.
fn constrained_triangulation(mesh: &Mesh) -> Result<ConstrainedDelaunayTriangulation<Point2<f64>>> {
    let constraints = boundary(mesh)?;
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
    if let Some([a, b]) = conflicts.first() {
        return Err(MeshError::Invalid(format!(
            "boundary segment {a}-{b} crosses another segment ({} such conflicts): segments may meet only at their ends",
            conflicts.len()
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
