//! Pictures of meshes: every triangle outlined, those with an angle below the quality bound
//! filled, as SVG or PNG (by the output's extension), drawn with `plotters`.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::{Mesh, MeshError, Result};

/// How a picture is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// The picture's longer side, in pixels.
    pub size: u32,
    /// Triangles with a smaller angle (degrees) are filled.
    pub min_angle: f64,
}

impl Default for Style {
    fn default() -> Self {
        Style { size: 1200, min_angle: 30.0 }
    }
}

const MARGIN: f64 = 10.0;
const EDGE: RGBColor = RGBColor(40, 70, 120);
const BAD: RGBColor = RGBColor(230, 90, 60);

/// Draws `mesh` to `path` (`.svg` or `.png`); the file is replaced only once complete. Returns
/// how many triangles were highlighted.
pub fn draw(mesh: &Mesh, path: &Path, style: Style) -> Result<usize> {
    let fail = |message: String| MeshError::Invalid(format!("cannot draw {}: {message}", path.display()));
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let png = match extension.as_deref() {
        Some("svg") => false,
        Some("png") => true,
        _ => return Err(fail("the picture's name must end in .svg or .png".into())),
    };
    if mesh.points.is_empty() {
        return Err(fail("the mesh has no points".into()));
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in &mesh.points {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    // Distances are taken at half scale, so that points near both ends of f64's range do not
    // overflow them.
    let half = |p: [f64; 2], k: usize| p[k] * 0.5 - lo[k] * 0.5;
    let span = [half(hi, 0), half(hi, 1)];
    let inner = f64::from(style.size.max(64)) - 2.0 * MARGIN;
    // Points all in one place (an invalid mesh is drawn too) make a picture of one unit's side.
    let extent = span[0].max(span[1]);
    let scale = inner / if extent > 0.0 && extent.is_finite() { extent } else { 1.0 };
    let (width, height) = ((span[0] * scale + 2.0 * MARGIN) as u32, (span[1] * scale + 2.0 * MARGIN) as u32);
    // Mesh coordinates to pixels, y up.
    let pixel =
        |p: [f64; 2]| ((MARGIN + half(p, 0) * scale) as i32, (f64::from(height) - MARGIN - half(p, 1) * scale) as i32);
    let cos_bound = style.min_angle.to_radians().cos();
    let bad: Vec<bool> = (0..mesh.triangles.len()).map(|t| mesh.is_sharper(t, style.min_angle, cos_bound)).collect();
    let stroke = if mesh.triangles.len() > 200_000 { 0 } else { 1 };
    let tmp = temporary(path);
    let result = if png {
        let root = BitMapBackend::new(&tmp, (width, height)).into_drawing_area();
        paint(&root, mesh, &bad, &pixel, stroke)
    } else {
        let root = SVGBackend::new(&tmp, (width, height)).into_drawing_area();
        paint(&root, mesh, &bad, &pixel, stroke)
    };
    let result = result.map_err(fail).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|cause| MeshError::Io { path: path.display().to_string(), cause })
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| bad.iter().filter(|&&b| b).count())
}

/// Draws the triangles on `root`: the bad ones filled, every one outlined.
fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    mesh: &Mesh,
    bad: &[bool],
    pixel: &dyn Fn([f64; 2]) -> (i32, i32),
    stroke: u32,
) -> std::result::Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (tri, &bad) in mesh.triangles.iter().zip(bad) {
        let corners: Vec<(i32, i32)> = tri.iter().map(|&v| pixel(mesh.points[v as usize])).collect();
        if bad {
            root.draw(&Polygon::new(corners.clone(), BAD.mix(0.8).filled())).map_err(|e| e.to_string())?;
        }
        let mut outline = corners;
        outline.push(outline[0]);
        root.draw(&PathElement::new(outline, EDGE.stroke_width(stroke))).map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// A temporary name beside `path` with the same extension (the backend picks the encoder by it).
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("mesh");
    path.with_file_name(format!(".{}.tmp.{name}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::random_points;

    #[test]
    fn pictures_are_drawn_as_svg_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let mesh = random_points(300, 2.0, 5).unwrap();
        let svg = dir.path().join("m.svg");
        let bad = draw(&mesh, &svg, Style { size: 400, min_angle: 30.0 }).unwrap();
        assert!(bad > 0);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg") && text.contains("polygon") && text.trim_end().ends_with("</svg>"));
        let png = dir.path().join("m.png");
        draw(&mesh, &png, Style::default()).unwrap();
        assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
        let error = draw(&mesh, &dir.path().join("m.gif"), Style::default()).unwrap_err().to_string();
        assert!(error.contains(".svg or .png"), "{error}");
        // Nothing half-written is left beside the pictures.
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert!(names.iter().all(|n| !n.contains(".tmp.")), "{names:?}");
    }
}
