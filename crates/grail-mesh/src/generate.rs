//! Generated inputs: the Delaunay triangulation of random points, or of any points.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use spade::{DelaunayTriangulation, Point2, Triangulation};

use crate::{Mesh, MeshError, Result};

/// The largest side of the square [`random_points`] draws from: `spade`, which triangulates,
/// takes coordinates up to 2^201 (its exact predicates' products must not overflow).
pub const MAX_SIDE: f64 = spade::MAX_ALLOWED_VALUE;

/// The smallest side of the square [`random_points`] draws from: `spade` refuses a coordinate
/// other than 0 below 2^-142 (its predicates' products must not underflow), and the points'
/// coordinates are the side times multiples of 2^-53, so the side must be at least 2^-89.
pub const MIN_SIDE: f64 = spade::MIN_ALLOWED_VALUE * (1u64 << 53) as f64;

/// What is wrong with a coordinate for `spade`'s triangulations, if anything: not finite, or of
/// a magnitude its predicates cannot take exactly (0 is always fine).
pub(crate) fn coordinate_problem(x: f64) -> Option<String> {
    if !x.is_finite() {
        Some("is not finite".into())
    } else if x != 0.0 && !(spade::MIN_ALLOWED_VALUE..=spade::MAX_ALLOWED_VALUE).contains(&x.abs()) {
        Some(format!(
            "is out of range: coordinates are 0 or of magnitude {:e} to {:e} (the limits of the triangulation's exact arithmetic)",
            spade::MIN_ALLOWED_VALUE,
            spade::MAX_ALLOWED_VALUE
        ))
    } else {
        None
    }
}

/// The Delaunay triangulation of `count` points drawn uniformly from the square
/// `[0, side] x [0, side]` with `seed` (the same seed gives the same mesh). The triangulation is
/// built by `spade` (a maintained, robust Delaunay crate); triangles come counter-clockwise.
/// The side must be from [`MIN_SIDE`] to [`MAX_SIDE`].
pub fn random_points(count: usize, side: f64, seed: u64) -> Result<Mesh> {
    if count < 3 {
        return Err(MeshError::Invalid(format!("{count} points: a triangulation needs at least 3")));
    }
    if !(MIN_SIDE..=MAX_SIDE).contains(&side) {
        return Err(MeshError::Invalid(format!("square side {side:?}: expected {MIN_SIDE:e} to {MAX_SIDE:e}")));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let points: Vec<[f64; 2]> = (0..count).map(|_| [rng.random::<f64>() * side, rng.random::<f64>() * side]).collect();
    delaunay(&points)
}

/// The Delaunay triangulation of `points` (at least 3, not all on a line), built by `spade`;
/// triangles come counter-clockwise. Duplicate points are kept once.
pub fn delaunay(points: &[[f64; 2]]) -> Result<Mesh> {
    for p in points {
        if let Some(problem) = coordinate_problem(p[0]).or_else(|| coordinate_problem(p[1])) {
            return Err(MeshError::Invalid(format!("point ({:?}, {:?}) {problem}", p[0], p[1])));
        }
    }
    let points: Vec<Point2<f64>> = points.iter().map(|p| Point2::new(p[0], p[1])).collect();
    let triangulation = DelaunayTriangulation::<Point2<f64>>::bulk_load_stable(points)
        .map_err(|e| MeshError::Invalid(format!("cannot triangulate the points: {e}")))?;
    let points: Vec<[f64; 2]> = triangulation.vertices().map(|v| [v.position().x, v.position().y]).collect();
    let triangles: Vec<[u32; 3]> =
        triangulation.inner_faces().map(|face| face.vertices().map(|v| v.fix().index() as u32)).collect();
    let mut mesh = Mesh { points, triangles, ..Mesh::default() };
    mesh.normalize()?;
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sides from the smallest to the largest the triangulation takes give valid meshes; past
    /// either end, the side is refused with the range, before triangulating.
    #[test]
    fn square_sides_are_checked_against_the_range_the_triangulation_takes() {
        for side in [MIN_SIDE, 1e-20, 1.0, 1e50, MAX_SIDE] {
            let mesh = random_points(50, side, 3).unwrap();
            let report = crate::verify::check(&mesh, 30.0, None);
            assert!(report.is_valid(), "side {side}: {:?}", report.problems);
        }
        for side in [MIN_SIDE / 2.0, 1e-300, 0.0, -1.0, MAX_SIDE * 2.0, 1e300, f64::INFINITY, f64::NAN] {
            let error = random_points(50, side, 3).unwrap_err().to_string();
            assert!(error.contains("expected 1.6155871338926322e-27 to 3.2138760885179806e60"), "{side}: {error}");
        }
        let error = delaunay(&[[0.0, 0.0], [1e300, 0.0], [0.0, 1.0]]).unwrap_err().to_string();
        assert!(error.contains("point (1e300, 0.0) is out of range"), "{error}");
        let error = delaunay(&[[0.0, 0.0], [1e-300, 0.0], [0.0, 1.0]]).unwrap_err().to_string();
        assert!(error.contains("is out of range"), "{error}");
    }
}
