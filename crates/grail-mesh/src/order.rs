//! Spatial order: a mesh renumbered so that points and triangles near each other in the plane
//! are near each other in memory (the morph paper's memory layout optimization, §6.1).
//!
//! A refinement hops from a triangle to its neighbours and their corners; in a mesh numbered in
//! the order its points were generated (random points: random order) every hop is a cache miss.
//! Numbering points and triangles along a Hilbert curve through the mesh's bounding box keeps a
//! cavity's triangles and points on a few cache lines.

use rayon::prelude::*;

use crate::Mesh;

/// Cells per side of the grid the Hilbert curve visits (2^16: keys fit in 32 bits).
const ORDER_BITS: u32 = 16;

/// A mesh renumbered in spatial order, and the map back to the original point numbers.
#[derive(Debug, Clone)]
pub struct Ordered {
    pub mesh: Mesh,
    /// `original[i]` is the original number of the ordered mesh's point `i`.
    pub original: Vec<u32>,
}

impl Ordered {
    /// A point number of the ordered mesh (or of a mesh refined from it, whose points past the
    /// ordered mesh's are new) as the original mesh numbers it.
    pub fn original_point(&self, p: u32) -> u32 {
        self.original.get(p as usize).copied().unwrap_or(p)
    }
}

/// Position `(x, y)` (each below 2^ORDER_BITS) along the Hilbert curve that fills the grid.
fn hilbert_index(mut x: u32, mut y: u32) -> u32 {
    let mut d = 0u32;
    let mut s = 1u32 << (ORDER_BITS - 1);
    while s > 0 {
        let rx = u32::from(x & s != 0);
        let ry = u32::from(y & s != 0);
        d += s * s * ((3 * rx) ^ ry);
        // Rotate the quadrant so that the curve inside it starts and ends where it should.
        if ry == 0 {
            if rx == 1 {
                let last = (1u32 << ORDER_BITS) - 1;
                x = last - x;
                y = last - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d
}

/// The grid cell of each coordinate pair, over the bounding box of `points`.
struct Grid {
    min: [f64; 2],
    scale: [f64; 2],
}

impl Grid {
    fn around(points: &[[f64; 2]]) -> Grid {
        let mut min = [f64::INFINITY; 2];
        let mut max = [f64::NEG_INFINITY; 2];
        for p in points {
            for k in 0..2 {
                min[k] = min[k].min(p[k]);
                max[k] = max[k].max(p[k]);
            }
        }
        let cells = f64::from((1u32 << ORDER_BITS) - 1);
        let scale = [0, 1].map(|k| if max[k] > min[k] { cells / (max[k] - min[k]) } else { 0.0 });
        Grid { min, scale }
    }

    fn key(&self, p: [f64; 2]) -> u32 {
        let cell = |k: usize| ((p[k] - self.min[k]) * self.scale[k]).clamp(0.0, f64::from(u16::MAX)) as u32;
        hilbert_index(cell(0), cell(1))
    }
}

/// `mesh` renumbered in Hilbert order: its points by position, its triangles by centroid; each
/// triangle keeps its corners' turn (counter-clockwise stays counter-clockwise), segments and
/// holes follow the points. The same mesh, only numbered differently.
pub fn spatial_order(mesh: &Mesh) -> Ordered {
    let grid = Grid::around(&mesh.points);
    let mut points: Vec<(u32, u32)> =
        mesh.points.par_iter().enumerate().map(|(i, &p)| (grid.key(p), i as u32)).collect();
    points.par_sort_unstable();
    let original: Vec<u32> = points.iter().map(|&(_, i)| i).collect();
    let mut renumber = vec![0u32; mesh.points.len()];
    for (new, &old) in original.iter().enumerate() {
        renumber[old as usize] = new as u32;
    }
    let mut triangles: Vec<(u32, [u32; 3])> = mesh
        .triangles
        .par_iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| mesh.points[v as usize]);
            let centroid = [(a[0] + b[0] + c[0]) / 3.0, (a[1] + b[1] + c[1]) / 3.0];
            (grid.key(centroid), t.map(|v| renumber[v as usize]))
        })
        .collect();
    triangles.par_sort_unstable_by_key(|&(key, _)| key);
    let ordered = Mesh {
        points: original.par_iter().map(|&i| mesh.points[i as usize]).collect(),
        triangles: triangles.into_iter().map(|(_, t)| t).collect(),
        segments: mesh.segments.iter().map(|s| s.map(|v| renumber[v as usize])).collect(),
        holes: mesh.holes.clone(),
    };
    Ordered { mesh: ordered, original }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hilbert_curve_visits_every_cell_once_moving_to_a_neighbour_each_step() {
        // On the 2^16 grid, a corner's cells: the curve's first 256 positions fill the 16 x 16 at
        // the origin, each a step from the one before.
        let mut at = vec![None; 256];
        for x in 0..16 {
            for y in 0..16 {
                let d = hilbert_index(x, y) as usize;
                assert!(d < 256, "({x}, {y}) at {d}");
                assert!(at[d].is_none());
                at[d] = Some((x as i64, y as i64));
            }
        }
        for w in at.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0].unwrap(), w[1].unwrap());
            assert_eq!((x0 - x1).abs() + (y0 - y1).abs(), 1);
        }
    }

    #[test]
    fn ordering_renumbers_but_keeps_the_mesh() {
        let mesh = crate::generate::random_points(2_000, 1.0, 5).unwrap();
        let ordered = spatial_order(&mesh);
        assert_eq!(ordered.mesh.points.len(), mesh.points.len());
        for (new, p) in ordered.mesh.points.iter().enumerate() {
            assert_eq!(*p, mesh.points[ordered.original_point(new as u32) as usize]);
        }
        // The same triangles, as sets of original corners, each turning the same way.
        let canonical = |t: [u32; 3]| {
            let k = (0..3).min_by_key(|&i| t[i]).unwrap();
            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
        };
        let mut before: Vec<[u32; 3]> = mesh.triangles.iter().map(|&t| canonical(t)).collect();
        let mut after: Vec<[u32; 3]> =
            ordered.mesh.triangles.iter().map(|&t| canonical(t.map(|v| ordered.original_point(v)))).collect();
        before.sort_unstable();
        after.sort_unstable();
        assert_eq!(before, after);
        // Neighbouring triangles are mostly near each other in the new numbering.
        let across = ordered.mesh.neighbors().unwrap();
        let gaps: Vec<u64> = across
            .iter()
            .enumerate()
            .flat_map(|(t, n)| {
                n.iter().filter(|&&o| o != crate::NO_NEIGHBOR).map(move |&o| (o as i64 - t as i64).unsigned_abs())
            })
            .collect();
        let near = gaps.iter().filter(|&&g| g < 64).count();
        assert!(near * 10 > gaps.len() * 8, "{near} of {} neighbours within 64", gaps.len());
    }
}
