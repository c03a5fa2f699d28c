//! The ring chart: nanoseconds per message hop against the number of
//! processes in the ring, act and BEAM, one and two schedulers, drawn from
//! the results `programs/bench` writes (`programs/bench.csv`) into a PNG.
//!
//!     act-chart [RESULTS.csv [OUT.png]]
//!
//! This is its own Cargo package (and its own workspace) so that plotters
//! never enters act's build; `programs/bench` builds and runs it. Text
//! needs a TrueType font, which is read at run time from the system
//! (Debian's fonts-dejavu-core) instead of being committed here; the path
//! can be overridden with `ACT_CHART_FONT`.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::collections::BTreeMap;
use std::path::Path;

/// Where the font is looked for, first match wins.
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// The family name the chart's text asks for; the loaded font is
/// registered under it.
const FAMILY: &str = "sans-serif";

/// One row of the bench's CSV: a median for act and, if measured, for BEAM.
struct Row {
    program: String,
    args: Vec<u64>,
    schedulers: u32,
    metric: String,
    act: Option<f64>,
    beam: Option<f64>,
}

/// One line of the chart: its label, colour and (N, ns per hop) points,
/// sorted by N.
struct Series {
    label: String,
    colour: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let results = argv.next().unwrap_or_else(|| "programs/bench.csv".into());
    let output = argv.next().unwrap_or_else(|| "programs/ring.png".into());
    if let Err(message) = run(Path::new(&results), Path::new(&output)) {
        eprintln!("act-chart: {message}");
        std::process::exit(1);
    }
}

fn run(results: &Path, output: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let rows = parse(&text)?;
    let series = ring_series(&rows);
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(format!(
            "no 'ring.act' 'hop ns' rows in {}; run programs/bench --only ring",
            results.display()
        ));
    }
    load_font()?;
    draw(&series, output).map_err(|e| format!("cannot draw {}: {e}", output.display()))?;
    println!("wrote {}", output.display());
    Ok(())
}

/// Reads the first font found and registers it for the chart's text.
/// plotters keeps registered fonts for the whole run, so the bytes are
/// leaked once on purpose: this is a short-lived command.
fn load_font() -> Result<(), String> {
    let chosen = std::env::var("ACT_CHART_FONT").ok();
    let candidates = chosen
        .iter()
        .map(String::as_str)
        .chain(FONT_PATHS.iter().copied());
    for path in candidates {
        if let Ok(bytes) = std::fs::read(path) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            return plotters::style::register_font(FAMILY, FontStyle::Normal, bytes)
                .map_err(|_| format!("{path} is not a TrueType font"));
        }
    }
    Err(format!(
        "no font found (tried {}); install one with `apt-get install fonts-dejavu-core` \
         or point ACT_CHART_FONT at a .ttf file",
        FONT_PATHS.join(", ")
    ))
}

/// Parses `program,args,schedulers,metric,act,beam` lines after a header;
/// an empty act or BEAM cell means that side was not measured or failed.
fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [program, args, schedulers, metric, act, beam] = fields[..] else {
            return Err(format!("line {}: expected 6 fields: {line}", index + 1));
        };
        let number = |cell: &str| -> Option<f64> { cell.parse().ok() };
        rows.push(Row {
            program: program.to_string(),
            args: args
                .split_whitespace()
                .filter_map(|a| a.parse().ok())
                .collect(),
            schedulers: schedulers
                .parse()
                .map_err(|_| format!("line {}: bad schedulers '{schedulers}'", index + 1))?,
            metric: metric.to_string(),
            act: number(act),
            beam: number(beam),
        });
    }
    Ok(rows)
}

/// The four lines: act and BEAM, each with 1 and 2 schedulers. Act is
/// blue, BEAM red; one scheduler is solid, two are dashed.
fn ring_series(rows: &[Row]) -> Vec<Series> {
    let mut series = Vec::new();
    for (vm, colour) in [
        ("act", RGBColor(31, 90, 180)),
        ("BEAM", RGBColor(200, 50, 40)),
    ] {
        for schedulers in [1, 2] {
            // Keyed by N so a repeated size keeps the last row.
            let mut points = BTreeMap::new();
            for row in rows {
                if row.program != "ring.act"
                    || row.metric != "hop ns"
                    || row.schedulers != schedulers
                {
                    continue;
                }
                let value = if vm == "act" { row.act } else { row.beam };
                if let (Some(&n), Some(ns)) = (row.args.first(), value) {
                    points.insert(n, ns);
                }
            }
            let plural = if schedulers == 1 { "" } else { "s" };
            series.push(Series {
                label: format!("{vm}, {schedulers} scheduler{plural}"),
                colour,
                dashed: schedulers == 2,
                points: points.into_iter().map(|(n, ns)| (n as f64, ns)).collect(),
            });
        }
    }
    series
}

/// Thousands separators for the N axis: 1000000 -> "1,000,000".
fn grouped(n: f64) -> String {
    let digits = format!("{}", n.round() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn draw(series: &[Series], output: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut n_min, mut n_max, mut ns_max) = (f64::MAX, 0.0f64, 0.0f64);
    for &(n, ns) in all {
        n_min = n_min.min(n);
        n_max = n_max.max(n);
        ns_max = ns_max.max(ns);
    }
    // Some room around the points so the end markers are not cut off.
    let x_range = (n_min / 1.5)..(n_max * 1.5);
    let y_range = 0.0..(ns_max * 1.2).max(1.0);
    // Ticks at the powers of ten only: plotters' own log ticks crowd the
    // axis with 2..9 multiples whose labels overlap.
    let ticks: Vec<f64> = (0..10)
        .map(|e| 10f64.powi(e))
        .filter(|t| x_range.contains(t))
        .collect();

    let root = BitMapBackend::new(output, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Ring: time per message hop against ring size (lower is better)",
            (FAMILY, 26),
        )
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range.log_scale().with_key_points(ticks), y_range)?;
    chart
        .configure_mesh()
        .x_desc("processes in the ring (N, log scale)")
        .y_desc("nanoseconds per message hop")
        .x_label_formatter(&|n| grouped(*n))
        .y_label_formatter(&|ns| format!("{ns:.0}"))
        .label_style((FAMILY, 16))
        .axis_desc_style((FAMILY, 18))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;

    for s in series.iter().filter(|s| !s.points.is_empty()) {
        let style = s.colour.stroke_width(3);
        if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(
                    s.points.iter().copied(),
                    12,
                    8,
                    style,
                ))?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 30, y)], 8, 5, style)
                });
        } else {
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))?
                .label(s.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], style));
        }
        chart.draw_series(
            s.points
                .iter()
                .map(|&p| Circle::new(p, 5, s.colour.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .legend_area_size(45)
        .label_font((FAMILY, 18))
        .draw()?;
    root.present()?;
    Ok(())
}
