//! Generated inputs: the Delaunay triangulation of random points, or of any points.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use spade::{DelaunayTriangulation, Point2, Triangulation};

use crate::{Mesh, MeshError, Result};

/// The Delaunay triangulation of `count` points drawn uniformly from the square
/// `[0, side] x [0, side]` with `seed` (the same seed gives the same mesh). The triangulation is
/// built by `spade` (a maintained, robust Delaunay crate); triangles come counter-clockwise.
pub fn random_points(count: usize, side: f64, seed: u64) -> Result<Mesh> {
    if count < 3 {
        return Err(MeshError::Invalid(format!("{count} points: a triangulation needs at least 3")));
    }
    if !(side.is_finite() && side > 0.0) {
        return Err(MeshError::Invalid(format!("square side {side}: expected a positive number")));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let points: Vec<[f64; 2]> = (0..count).map(|_| [rng.random::<f64>() * side, rng.random::<f64>() * side]).collect();
    delaunay(&points)
}

/// The Delaunay triangulation of `points` (at least 3, not all on a line), built by `spade`;
/// triangles come counter-clockwise. Duplicate points are kept once.
pub fn delaunay(points: &[[f64; 2]]) -> Result<Mesh> {
    if let Some(p) = points.iter().find(|p| !(p[0].is_finite() && p[1].is_finite())) {
        return Err(MeshError::Invalid(format!("point ({}, {}) is not finite", p[0], p[1])));
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
