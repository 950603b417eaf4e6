//! `gibbs --plot`: a Gibbs run's trace drawn as an SVG with `plotters` (issue 12,
//! deliverable 5): accuracy up to relabelling against seconds when the run was scored
//! against a truth, else labels changed per sweep against seconds; one line per chain
//! (`--chains`), the first in blue as a one-chain run's.
//!
//! Presentation only, like rendering diagnostics: the numbers come from
//! `slic_codegen::gibbs`. It uses plotters' SVG backend alone, built without font
//! features, so no font library is needed to build or run it: the SVG's text names a
//! generic font family and the viewer renders it (plotters estimates text sizes for the
//! layout). It must not read or write files; the caller writes the string.

use plotters::prelude::*;
use slic_codegen::SweepRecord;

/// The chains' colours in turn: the first is a one-chain run's.
const COLOURS: [RGBColor; 6] = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];

/// The SVG text of the traces of `chains`, each a chain's records.
pub fn trace_svg(chains: &[&[SweepRecord]]) -> Result<String, String> {
    let scored = chains
        .iter()
        .all(|rs| !rs.is_empty() && rs.iter().all(|r| r.accuracy.is_some()))
        && !chains.is_empty();
    let lines: Vec<Vec<(f64, f64)>> = chains
        .iter()
        .map(|records| {
            records
                .iter()
                .map(|r| {
                    let y = if scored {
                        r.accuracy.unwrap_or(0.0)
                    } else {
                        r.changed as f64
                    };
                    (r.seconds, y)
                })
                .collect()
        })
        .collect();
    let points = || lines.iter().flatten();
    let x_max = points().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let y_max = if scored {
        1.0
    } else {
        points().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.05
    };
    let (caption, y_desc) = if scored {
        ("Gibbs sweeps: accuracy", "accuracy up to relabelling")
    } else {
        (
            "Gibbs sweeps: labels changed",
            "labels changed in the sweep",
        )
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc(y_desc)
            .draw()
            .map_err(|e| e.to_string())?;
        for (c, line) in lines.iter().enumerate() {
            let colour = COLOURS[c % COLOURS.len()];
            chart
                .draw_series(LineSeries::new(line.iter().copied(), &colour))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
