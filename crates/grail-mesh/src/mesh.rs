//! [`Mesh`]: points and triangles.

use rayon::prelude::*;

use crate::predicates::orient2d;
use crate::{MeshError, Result};

/// A triangle side with no triangle across it (the mesh's boundary).
pub const NO_NEIGHBOR: u32 = u32::MAX;

/// A planar triangle mesh: `points`, `triangles` as three point indices in counter-clockwise
/// order, and the boundary `segments` and `holes` of the domain when it came from a `.poly` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    pub points: Vec<[f64; 2]>,
    pub triangles: Vec<[u32; 3]>,
    /// Edges the refinement must keep (split only at their midpoints), as point index pairs.
    pub segments: Vec<[u32; 2]>,
    /// A point inside each hole of the domain.
    pub holes: Vec<[f64; 2]>,
}

impl Mesh {
    /// Checks the indices and turns clockwise triangles counter-clockwise (Triangle's files may
    /// hold either); a degenerate (zero-area) triangle is an error naming it. Messages number
    /// points and triangles from 0: [`Mesh::normalize_numbered`] names them as a file does.
    pub fn normalize(&mut self) -> Result<()> {
        self.normalize_numbered(0)
    }

    /// [`Mesh::normalize`], its messages numbering points and triangles from `base` (0 or 1), as
    /// the files the mesh was read from do: a user looks the numbers up there.
    pub fn normalize_numbered(&mut self, base: u32) -> Result<()> {
        let n = self.points.len();
        let points = &self.points;
        let name = |v: usize| v as u64 + u64::from(base);
        // On every core; where several triangles are wrong, the first one is named.
        let wrong = self.triangles.par_iter_mut().enumerate().filter_map(|(t, tri)| {
            if let Some(&bad) = tri.iter().find(|&&v| v as usize >= n) {
                return Some((
                    t,
                    format!("triangle {} names point {}, but {}", name(t), name(bad as usize), point_range(n, base)),
                ));
            }
            let [a, b, c] = tri.map(|v| points[v as usize]);
            let orientation = orient2d(a, b, c);
            if orientation == 0.0 {
                let [a, b, c] = tri.map(|v| name(v as usize));
                return Some((
                    t,
                    format!("triangle {} ({a}, {b}, {c}) is degenerate: its corners are collinear", name(t)),
                ));
            }
            if orientation < 0.0 {
                tri.swap(1, 2);
            }
            None
        });
        match wrong.min_by_key(|(t, _)| *t) {
            Some((_, message)) => Err(MeshError::Invalid(message)),
            None => Ok(()),
        }
    }

    /// How many triangles have collinear corners (zero area, exactly), or name a point that does
    /// not exist.
    pub fn degenerate_triangles(&self) -> usize {
        let points = &self.points;
        self.triangles
            .par_iter()
            .filter(|tri| {
                !tri.iter().all(|&v| (v as usize) < points.len())
                    || orient2d(points[tri[0] as usize], points[tri[1] as usize], points[tri[2] as usize]) == 0.0
            })
            .count()
    }

    /// Turns clockwise triangles counter-clockwise and leaves the rest, degenerate ones and those
    /// naming points that do not exist included: what a caller that goes on to verify the mesh
    /// wants, so that the verifier names every problem ([`crate::verify::check`]) where
    /// [`Mesh::normalize`] would stop at the first.
    pub fn orient(&mut self) {
        let points = &self.points;
        self.triangles.par_iter_mut().for_each(|tri| {
            if tri.iter().all(|&v| (v as usize) < points.len()) {
                let [a, b, c] = tri.map(|v| points[v as usize]);
                if orient2d(a, b, c) < 0.0 {
                    tri.swap(1, 2);
                }
            }
        });
    }

    /// For each triangle and each side `i` (the side opposite corner `i`), the triangle across
    /// it, or [`NO_NEIGHBOR`]. An edge shared by more than two triangles, or twice in the same
    /// direction, is an error naming it (its points numbered from 0:
    /// [`Mesh::neighbors_numbered`] names them as a file does).
    pub fn neighbors(&self) -> Result<Vec<[u32; 3]>> {
        self.neighbors_numbered(0)
    }

    /// [`Mesh::neighbors`], its errors numbering points from `base`, as the mesh's files do.
    pub fn neighbors_numbered(&self, base: u32) -> Result<Vec<[u32; 3]>> {
        // Every side as (its points, lower first; the triangle; the side; whether it runs from
        // the higher point), sorted so that the sides of one edge are next to each other: faster
        // than hashing on meshes of millions of triangles.
        // Built and sorted on every core.
        let mut sides: Vec<(u64, u32, u8, bool)> = self
            .triangles
            .par_iter()
            .enumerate()
            .flat_map_iter(|(t, tri)| {
                (0..3).map(move |i| {
                    let (a, b) = (tri[(i + 1) % 3], tri[(i + 2) % 3]);
                    let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
                    (key, t as u32, i as u8, a > b)
                })
            })
            .collect();
        sides.par_sort_unstable();
        let mut across = vec![[NO_NEIGHBOR; 3]; self.triangles.len()];
        for run in sides.chunk_by(|x, y| x.0 == y.0) {
            let (a, b) = ((run[0].0 >> 32) + u64::from(base), (run[0].0 & u64::from(u32::MAX)) + u64::from(base));
            match run {
                [_] => {}
                [(_, t, i, down), (_, u, j, other)] if down != other => {
                    across[*t as usize][*i as usize] = *u;
                    across[*u as usize][*j as usize] = *t;
                }
                [_, _] => {
                    return Err(MeshError::Invalid(format!(
                        "edge {a}-{b} belongs to two triangles in the same direction (overlapping or flipped triangles)"
                    )));
                }
                _ => {
                    return Err(MeshError::Invalid(format!(
                        "edge {a}-{b} belongs to {} triangles, some in the same direction (overlapping or flipped triangles)",
                        run.len()
                    )));
                }
            }
        }
        Ok(across)
    }

    /// The smallest angle of triangle `t`, in degrees.
    pub fn min_angle(&self, t: usize) -> f64 {
        self.min_angle_cos(t).acos().to_degrees()
    }

    /// Whether triangle `t`'s smallest angle is below `bound` degrees, exactly as comparing
    /// [`Mesh::min_angle`] would say, but with the arc cosine taken only for triangles within
    /// a rounding margin of the bound (`cos_bound` = the bound's cosine).
    pub fn is_sharper(&self, t: usize, bound: f64, cos_bound: f64) -> bool {
        sharper(self.min_angle_cos(t), bound, cos_bound)
    }

    /// The cosine of triangle `t`'s smallest angle (the largest of its angles' cosines).
    pub fn min_angle_cos(&self, t: usize) -> f64 {
        let [a, b, c] = self.triangles[t].map(|v| self.points[v as usize]);
        let len2 = |p: [f64; 2], q: [f64; 2]| (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2);
        let (ab, bc, ca) = (len2(a, b), len2(b, c), len2(c, a));
        // The smallest angle faces the shortest side: law of cosines on it.
        let (opposite, s1, s2) = if ab <= bc && ab <= ca {
            (ab, bc, ca)
        } else if bc <= ca {
            (bc, ab, ca)
        } else {
            (ca, ab, bc)
        };
        let product = (s1 * s2).sqrt();
        // Corners that coincide make no angle: counted as 0°, the sharpest there is.
        if product == 0.0 {
            return 1.0;
        }
        ((s1 + s2 - opposite) / (2.0 * product)).clamp(-1.0, 1.0)
    }

    /// The total area of the triangles (0, not the -0 that `Iterator::sum` gives for none, so
    /// that an empty mesh's area prints as 0).
    pub fn area(&self) -> f64 {
        self.triangles
            .iter()
            .map(|tri| {
                let [a, b, c] = tri.map(|v| self.points[v as usize]);
                ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs() / 2.0
            })
            .fold(0.0, |sum, area| sum + area)
    }
}

/// How `count` points numbered from `base` are numbered, for messages about a point that is
/// not one of them: "points are numbered 1 to 4", or "there are no points".
pub(crate) fn point_range(count: usize, base: u32) -> String {
    match count {
        0 => "there are no points".to_string(),
        _ => format!("points are numbered {base} to {}", count as u64 - 1 + u64::from(base)),
    }
}

/// Whether an angle of cosine `cos` is below `bound` degrees (`cos_bound` its cosine), as
/// comparing the angle in degrees would say: by cosines, the arc cosine taken only within a
/// rounding margin of the bound.
pub fn sharper(cos: f64, bound: f64, cos_bound: f64) -> bool {
    const MARGIN: f64 = 1e-9;
    if cos > cos_bound + MARGIN {
        true
    } else if cos < cos_bound - MARGIN {
        false
    } else {
        cos.acos().to_degrees() < bound
    }
}
