//! Charts of what the commands print (`--plot FILE.svg`): grouped bars for benchmark tables, a
//! line for convergence. Drawn with plotters as SVG (text needs no font there) and written only
//! once complete.

use std::path::Path;

use anyhow::{Context, Result, bail};
use plotters::prelude::*;

/// Colors of the series, in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Refuses anything but an `.svg` file before the work is done.
pub fn check_path(path: &Path) -> Result<()> {
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg")) {
        bail!(crate::commands::UsageError(format!("--plot {}: charts are written as .svg files", path.display())));
    }
    Ok(())
}

/// A grouped bar chart of table rows (JSON objects): one group per `category` of a row, one
/// series per `series` of a row, both in the order they first appear; a row's value is `value`.
pub fn table_bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    rows: &[serde_json::Value],
    category: impl Fn(&serde_json::Value) -> String,
    series: impl Fn(&serde_json::Value) -> Option<String>,
    value: impl Fn(&serde_json::Value) -> Option<f64>,
) -> Result<()> {
    let mut categories: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        let c = category(row);
        if !categories.contains(&c) {
            categories.push(c);
        }
        if let Some(s) = series(row)
            && !names.contains(&s)
        {
            names.push(s);
        }
    }
    let mut table: Vec<(String, Vec<Option<f64>>)> =
        names.iter().map(|n| (n.clone(), vec![None; categories.len()])).collect();
    for row in rows {
        let Some(s) = series(row) else { continue };
        let c = categories.iter().position(|c| *c == category(row)).expect("collected above");
        let i = names.iter().position(|n| *n == s).expect("collected above");
        if let Some(v) = value(row) {
            table[i].1[c] = Some(v);
        }
    }
    // A series with no value anywhere (a pass that applied nowhere) only crowds the legend.
    table.retain(|(_, values)| values.iter().any(Option::is_some));
    bars(path, title, y_desc, &categories, &table)
}

/// A grouped bar chart: one group of bars per category, one bar per series (a missing value
/// leaves a gap), on a log scale when the values span more than a factor of 100.
pub fn bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> Result<()> {
    let values: Vec<f64> = series.iter().flat_map(|(_, v)| v.iter().flatten().copied()).filter(|v| *v > 0.0).collect();
    if values.is_empty() || categories.is_empty() {
        bail!("nothing to plot: no measured values");
    }
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let width = (160 + categories.len() * (series.len() * 14 + 20)).clamp(640, 4000) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let n = categories.len() as f64;
        let slot = 1.0 / (series.len() as f64 + 1.0);
        let log = hi / lo > 100.0;
        let mut builder = ChartBuilder::on(&root);
        builder.caption(title, ("sans-serif", 20)).margin(12).x_label_area_size(90).y_label_area_size(70);
        let label = |x: &f64| -> String {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-9 && i < categories.len() {
                categories[i].clone()
            } else {
                String::new()
            }
        };
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_labels(categories.len() * 2 + 1)
                    .x_label_formatter(&label)
                    .x_label_style(("sans-serif", 11).into_font().transform(FontTransform::Rotate90))
                    .y_desc(y_desc)
                    .draw()
                    .map_err(draw_error)?;
                for (s, (name, values)) in series.iter().enumerate() {
                    let color = PALETTE[s % PALETTE.len()];
                    let base = if log { lo / 2.0 } else { 0.0 };
                    chart
                        .draw_series(values.iter().enumerate().filter_map(|(c, v)| {
                            let v = (*v)?;
                            let x0 = c as f64 + slot * (s as f64 + 0.5);
                            Some(Rectangle::new([(x0, base), (x0 + slot, v.max(base))], color.filled()))
                        }))
                        .map_err(draw_error)?
                        .label(name.as_str())
                        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(draw_error)?;
            }};
        }
        if log {
            draw!(builder.build_cartesian_2d(0.0..n, (lo / 2.0..hi * 2.0).log_scale()).map_err(draw_error)?);
        } else {
            draw!(builder.build_cartesian_2d(0.0..n, 0.0..hi * 1.1).map_err(draw_error)?);
        }
        root.present().map_err(draw_error)?;
    }
    write(path, &svg)
}

/// A line on a log-scale y axis (convergence): `y[i]` at x = i + 1.
pub fn convergence(path: &Path, title: &str, x_desc: &str, y_desc: &str, name: &str, y: &[f64]) -> Result<()> {
    let positive: Vec<f64> = y.iter().copied().filter(|v| *v > 0.0).collect();
    if positive.is_empty() {
        bail!("nothing to plot: no iterations");
    }
    let (lo, hi) = positive.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(1u32..(y.len() as u32 + 1), (lo / 2.0..hi * 2.0).log_scale())
            .map_err(draw_error)?;
        chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(draw_error)?;
        let color = PALETTE[0];
        chart
            .draw_series(LineSeries::new(
                y.iter().enumerate().filter(|(_, v)| **v > 0.0).map(|(i, v)| (i as u32 + 1, *v)),
                color.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw().map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    write(path, &svg)
}

fn draw_error(error: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("cannot draw the chart: {error}")
}

fn write(path: &Path, svg: &str) -> Result<()> {
    grail_graph::io::write_atomically(path, |out| out.write_all(svg.as_bytes())).context("cannot write the chart")
}
