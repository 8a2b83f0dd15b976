//! The leaderboard scatter: for every metric, each system's overall accuracy against the
//! reference metric's, as one SVG with a panel per metric (seed 000 Figure 1 style), so a nightly
//! leaderboard page shows at a glance where a metric disagrees with the reference.

use crate::analysis::agreement::Analysis;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Pixels of one panel.
const PANEL: (u32, u32) = (420, 420);

/// One system's overall accuracies on the reference (x) and on the panel's metric (y).
struct Point<'a> {
    system: &'a str,
    reference: f64,
    metric: f64,
}

/// The SVG document for `analysis`, or `None` when no metric besides the reference has an
/// overall accuracy for at least one system.
pub fn leaderboard_svg(analysis: &Analysis) -> Result<Option<String>, String> {
    let panels: Vec<(&str, Vec<Point<'_>>)> = analysis
        .metrics
        .iter()
        .filter(|m| **m != analysis.reference)
        .map(|m| (m.as_str(), points(analysis, m)))
        .filter(|(_, points)| !points.is_empty())
        .collect();
    if panels.is_empty() {
        return Ok(None);
    }
    let mut svg = String::new();
    {
        let width = PANEL.0 * u32::try_from(panels.len()).unwrap_or(u32::MAX / PANEL.0);
        let root = SVGBackend::with_string(&mut svg, (width, PANEL.1)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let areas = root.split_evenly((1, panels.len()));
        for ((metric, points), area) in panels.iter().zip(&areas) {
            let tau = analysis
                .kendall_tau
                .get(*metric)
                .and_then(|by_difficulty| by_difficulty.get("all").copied().flatten());
            draw_panel(area, &analysis.reference, metric, tau, points)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(Some(svg))
}

/// Systems with an overall accuracy on both the reference and `metric`, as percentages, both
/// on the items the two metrics scored (the items Kendall tau is computed on).
fn points<'a>(analysis: &'a Analysis, metric: &str) -> Vec<Point<'a>> {
    let common = |table: &crate::analysis::agreement::Table| table.get(metric)?.get("all")?.value();
    analysis
        .systems
        .iter()
        .filter_map(|system| {
            Some(Point {
                system: &system.name,
                reference: 100.0 * common(&system.common_reference)?,
                metric: 100.0 * common(&system.common_accuracy)?,
            })
        })
        .collect()
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    reference: &str,
    metric: &str,
    tau: Option<f64>,
    points: &[Point<'_>],
) -> Result<(), String> {
    let caption = match tau {
        Some(tau) => format!("{metric} vs {reference} (Kendall tau-b {tau:.3})"),
        None => format!("{metric} vs {reference}"),
    };
    let (low, high) = axis_range(points);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(low..high, low..high)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc(format!("{reference} accuracy (%)"))
        .y_desc(format!("{metric} accuracy (%)"))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(LineSeries::new([(low, low), (high, high)], &BLACK.mix(0.3)))
        .map_err(|e| e.to_string())?;
    let right_side = low + 0.6 * (high - low);
    chart
        .draw_series(points.iter().map(|p| {
            let (anchor, offset) = if p.reference > right_side {
                (HPos::Right, -6)
            } else {
                (HPos::Left, 6)
            };
            let style = ("sans-serif", 11)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(anchor, VPos::Bottom));
            EmptyElement::at((p.reference, p.metric))
                + Circle::new((0, 0), 4, BLUE.filled())
                + Text::new(label(p.system), (offset, -4), style)
        }))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// A square axis range around every point, padded, within [0, 100].
fn axis_range(points: &[Point<'_>]) -> (f64, f64) {
    let values = points.iter().flat_map(|p| [p.reference, p.metric]);
    let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let pad = ((max - min) * 0.1).max(2.0);
    ((min - pad).max(0.0), (max + pad).min(100.0))
}

/// A system name safe inside SVG text: markup characters dropped, at most 40 characters.
fn label(system: &str) -> String {
    system
        .chars()
        .filter(|c| !matches!(c, '<' | '>' | '&' | '"' | '\''))
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_cannot_inject_markup() {
        assert_eq!(label("<script>&\"x'"), "scriptx");
        assert_eq!(label(&"a".repeat(100)).len(), 40);
    }

    #[test]
    fn axis_range_is_padded_and_clamped() {
        let points = [
            Point {
                system: "a",
                reference: 50.0,
                metric: 60.0,
            },
            Point {
                system: "b",
                reference: 99.0,
                metric: 40.0,
            },
        ];
        let (low, high) = axis_range(&points);
        assert!((low - 34.1).abs() < 1e-9 && high == 100.0, "{low} {high}");
    }
}
