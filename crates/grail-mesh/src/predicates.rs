//! Geometric predicates with adaptive-precision arithmetic (the `robust` crate's port of the
//! classic adaptive predicates): exact signs whatever the round-off of a plain evaluation.

use robust::Coord;

fn coord(p: [f64; 2]) -> Coord<f64> {
    Coord { x: p[0], y: p[1] }
}

/// Positive when `a`, `b`, `c` turn counter-clockwise, negative clockwise, 0 when collinear
/// (twice the signed area, exact in sign).
pub fn orient2d(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    robust::orient2d(coord(a), coord(b), coord(c))
}

/// Positive when `d` lies strictly inside the circle through the counter-clockwise `a`, `b`,
/// `c`, negative outside, 0 on it (exact in sign).
pub fn incircle(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> f64 {
    robust::incircle(coord(a), coord(b), coord(c), coord(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_are_exact_where_plain_arithmetic_fails() {
        assert!(orient2d([0.0, 0.0], [1.0, 0.0], [0.0, 1.0]) > 0.0);
        assert!(orient2d([0.0, 0.0], [0.0, 1.0], [1.0, 0.0]) < 0.0);
        // Nearly collinear points a naive determinant gets wrong: exactly collinear here.
        let a = [0.5, 0.5];
        let b = [12.0, 12.0];
        let c = [24.0, 24.0];
        assert_eq!(orient2d(a, b, c), 0.0);
        let tiny = f64::EPSILON;
        assert!(orient2d([0.5, 0.5], [12.0, 12.0], [24.0, 24.0 + 24.0 * tiny]) > 0.0);
        // The fourth corner of a square is on the circle through the other three.
        assert_eq!(incircle([0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]), 0.0);
        assert!(incircle([0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]) > 0.0);
        assert!(incircle([0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 2.0]) < 0.0);
    }
}
