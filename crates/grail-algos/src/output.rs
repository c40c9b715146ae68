//! Algorithm results: their headline figures and their per-node output files.

use std::io::Write;

use grail_graph::reference::{INFINITE_DISTANCE, SpanningForest, UNREACHED};
use serde_json::{Map, Value, json};

/// The result of one suite algorithm, whatever target computed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// BFS level per node; [`UNREACHED`] where there is none.
    Levels(Vec<u32>),
    /// Distance per node; [`INFINITE_DISTANCE`] where there is none.
    Distances(Vec<u64>),
    /// Distance per node over real weights; `f64::INFINITY` where there is none.
    RealDistances(Vec<f64>),
    /// Component label (smallest node id of the component) per node.
    Components(Vec<u32>),
    /// Rank per node, and the iterations it took.
    Ranks { ranks: Vec<f64>, iterations: u32 },
    /// Number of triangles.
    Triangles(u64),
    /// Membership in the independent set per node.
    IndependentSet(Vec<bool>),
    /// The edges of a minimum spanning forest.
    SpanningForest(SpanningForest),
}

impl Output {
    /// The figures a summary shows, by name (`reached`, `components`, `weight`, ...).
    pub fn headline(&self) -> Map<String, Value> {
        let value = match self {
            Output::Levels(levels) => {
                let reached = levels.iter().filter(|&&l| l != UNREACHED);
                json!({ "reached": reached.clone().count(), "max_level": reached.max().copied() })
            }
            Output::Distances(distances) => {
                let reached = distances.iter().filter(|&&d| d != INFINITE_DISTANCE);
                json!({ "reached": reached.clone().count(), "max_distance": reached.max().copied() })
            }
            Output::RealDistances(distances) => {
                let reached = distances.iter().copied().filter(|d| d.is_finite());
                json!({ "reached": reached.clone().count(), "max_distance": reached.reduce(f64::max) })
            }
            Output::Components(labels) => {
                let mut sizes = std::collections::HashMap::<u32, u64>::new();
                for &label in labels {
                    *sizes.entry(label).or_default() += 1;
                }
                json!({ "components": sizes.len(), "largest_component": sizes.values().max().copied().unwrap_or(0) })
            }
            Output::Ranks { ranks, iterations } => {
                let max_rank = ranks.iter().copied().fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
                json!({ "iterations": iterations, "max_rank": max_rank })
            }
            Output::Triangles(count) => json!({ "triangles": count }),
            Output::IndependentSet(in_set) => json!({ "size": in_set.iter().filter(|&&b| b).count() }),
            Output::SpanningForest(forest) => match forest.real_weight {
                Some(total) => json!({ "weight": total, "edges": forest.edges.len() }),
                None => json!({ "weight": forest.weight, "edges": forest.edges.len() }),
            },
        };
        match value {
            Value::Object(map) => map,
            _ => unreachable!("headlines are objects"),
        }
    }

    /// One short line for humans, e.g. `reached 1024, max level 7`.
    pub fn headline_text(&self) -> String {
        self.headline()
            .iter()
            .map(|(key, value)| match value {
                Value::Null => format!("{} -", key.replace('_', " ")),
                Value::Number(n) if n.is_f64() => format!("{} {:.3e}", key.replace('_', " "), n.as_f64().unwrap()),
                other => format!("{} {other}", key.replace('_', " ")),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Writes the result as text: line `i` holds node `i`'s value (`inf` where there is none);
    /// a spanning forest is one `u v w` line per edge, a triangle count one line.
    pub fn write_values(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Output::Levels(levels) => {
                write_lines(out, levels, |w, &l| if l == UNREACHED { w.write_all(b"inf") } else { write!(w, "{l}") })
            }
            Output::Distances(distances) => {
                write_lines(
                    out,
                    distances,
                    |w, &d| {
                        if d == INFINITE_DISTANCE { w.write_all(b"inf") } else { write!(w, "{d}") }
                    },
                )
            }
            // Display writes the fewest digits that read back as the same f64.
            Output::RealDistances(distances) => {
                write_lines(out, distances, |w, &d| if d.is_finite() { write!(w, "{d}") } else { w.write_all(b"inf") })
            }
            Output::Components(labels) => write_lines(out, labels, |w, l| write!(w, "{l}")),
            Output::Ranks { ranks, .. } => write_lines(out, ranks, |w, r| write!(w, "{r:.9e}")),
            Output::Triangles(count) => writeln!(out, "{count}"),
            Output::IndependentSet(in_set) => {
                write_lines(out, in_set, |w, &b| w.write_all(if b { b"1" } else { b"0" }))
            }
            Output::SpanningForest(forest) if forest.real_weight.is_some() => {
                write_lines(out, &forest.edges, |w, (u, v, bits)| write!(w, "{u} {v} {}", f32::from_bits(*bits)))
            }
            Output::SpanningForest(forest) => {
                write_lines(out, &forest.edges, |w, (u, v, weight)| write!(w, "{u} {v} {weight}"))
            }
        }
    }
}

fn write_lines<T>(
    out: &mut dyn Write,
    values: &[T],
    mut write_one: impl FnMut(&mut dyn Write, &T) -> std::io::Result<()>,
) -> std::io::Result<()> {
    for value in values {
        write_one(out, value)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(output: &Output) -> String {
        let mut bytes = Vec::new();
        output.write_values(&mut bytes).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn unreached_nodes_print_inf() {
        let levels = Output::Levels(vec![0, 1, UNREACHED]);
        assert_eq!(text(&levels), "0\n1\ninf\n");
        assert_eq!(levels.headline_text(), "max level 1, reached 2");
        let distances = Output::Distances(vec![INFINITE_DISTANCE, 5]);
        assert_eq!(text(&distances), "inf\n5\n");
        let real = Output::RealDistances(vec![f64::INFINITY, 0.1 + 0.2, 0.0]);
        assert_eq!(text(&real), "inf\n0.30000000000000004\n0\n");
        assert_eq!(real.headline_text(), "max distance 3.000e-1, reached 2");
    }

    #[test]
    fn forest_prints_edges() {
        let forest =
            Output::SpanningForest(SpanningForest { edges: vec![(0, 1, 3), (1, 2, 4)], weight: 7, real_weight: None });
        assert_eq!(text(&forest), "0 1 3\n1 2 4\n");
        assert_eq!(forest.headline()["weight"], 7);
    }
}
