//! Charts as inline SVG, drawn by plotters: lines over the run's seconds
//! (with shaded spans for throttling or agent gaps and optional rating
//! bands), the latency percentile spectrum, and bars per label.

use plotters::prelude::*;
use plotters::style::RGBColor;

/// Colours of consecutive series (colour-blind friendly, Okabe–Ito).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

pub struct ChartSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A shaded span of seconds with its meaning (drawn behind the lines).
#[derive(Clone)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    pub color: RGBColor,
}

/// A horizontal band of y values (e.g. Apdex ratings).
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub color: RGBColor,
}

/// The Apdex rating bands: Excellent ≥ 0.94, Good ≥ 0.85, Fair ≥ 0.70,
/// Poor ≥ 0.50, Unacceptable.
pub fn apdex_bands() -> Vec<Band> {
    [
        (0.94, 1.0, RGBColor(76, 175, 80)),
        (0.85, 0.94, RGBColor(139, 195, 74)),
        (0.70, 0.85, RGBColor(255, 235, 59)),
        (0.50, 0.70, RGBColor(255, 152, 0)),
        (0.0, 0.50, RGBColor(244, 67, 54)),
    ]
    .into_iter()
    .map(|(from, to, color)| Band { from, to, color })
    .collect()
}

pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_max: f64,
    /// None: from the data (with 10% headroom).
    pub y_max: Option<f64>,
    pub series: Vec<ChartSeries>,
    pub spans: Vec<Span>,
    pub bands: Vec<Band>,
}

const WIDTH: u32 = 640;
const HEIGHT: u32 = 300;
/// Axis labels and descriptions, readable when the chart is shown at
/// half a phone's width.
const LABEL_FONT: u32 = 14;
/// The widest a character of a tick label is drawn at [`LABEL_FONT`]
/// (a digit of DejaVu Sans, the usual sans-serif, is 0.64 em).
const CHAR_WIDTH: f64 = 9.0;
/// Room for an axis title beside or under the tick labels (its line of
/// text and a gap), so the two never overlap.
const TITLE_ROOM: u32 = 24;
/// Room right of the plot for the half of the last x tick label that
/// stands beyond it ("99.9", "1,000").
const RIGHT_MARGIN: u32 = 28;
/// Space between the axis and its tick labels (plotters' tick and gap).
const TICK_ROOM: u32 = 14;

/// Words that name a count of things: an axis in them ("users",
/// "virtual users", "nodes") counts whole things and has whole ticks.
/// A rate ("requests/s", "per second") is not a count.
const COUNT_WORDS: &[&str] = &[
    "users",
    "students",
    "student",
    "visitors",
    "user",
    "vus",
    "nodes",
    "node",
    "requests",
    "errors",
    "samples",
    "workers",
    "threads",
    "connections",
    "levels",
    "runs",
    "hosts",
    "processes",
    "repetitions",
];

/// True when `label` names a count of things (see [`COUNT_WORDS`]).
pub fn counts_things(label: &str) -> bool {
    let label = label.to_lowercase();
    !label.contains('/')
        && !label.contains(" per ")
        && !label.starts_with("per ")
        && label
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| COUNT_WORDS.contains(&w))
}

/// The ticks of an axis from 0 to at least `max`: a step of 1, 2 or 5
/// times a power of ten giving about `target` steps (whole, at least 1, on
/// an axis that counts things), the axis' end rounded up to a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    pub step: f64,
    /// The axis' end: a whole number of steps.
    pub top: f64,
    /// Tick labels including 0 and `top`.
    pub labels: usize,
    /// Digits after the decimal point that the step needs.
    pub decimals: usize,
    pub whole: bool,
}

impl Ticks {
    pub fn new(max: f64, target: usize, whole: bool) -> Ticks {
        let max = if max.is_finite() && max > 0.0 {
            max
        } else {
            1.0
        };
        let rough = max / target.max(1) as f64;
        let magnitude = 10f64.powf(rough.log10().floor());
        let mut step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= rough * (1.0 - 1e-9))
            .unwrap_or(10.0 * magnitude);
        if whole {
            step = step.max(1.0);
        }
        let steps = (max / step - 1e-9).ceil().max(1.0);
        let decimals = if step >= 1.0 {
            0
        } else {
            (-step.log10() - 1e-9).ceil() as usize
        };
        Ticks {
            step,
            top: steps * step,
            labels: steps as usize + 1,
            decimals,
            whole,
        }
    }

    /// A tick's label: as many decimals as the step needs, none on a count
    /// axis (where a value between whole ones gets no label at all).
    pub fn label(&self, v: f64) -> String {
        if self.whole && (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        if self.decimals == 0 {
            headroom_units::quantity::group_thousands(v.round() as i64)
        } else {
            format!("{v:.*}", self.decimals)
        }
    }

    /// The widest of its labels, in pixels.
    fn widest(&self) -> u32 {
        (0..self.labels)
            .map(|i| self.label(i as f64 * self.step).chars().count())
            .max()
            .unwrap_or(1) as u32
            * CHAR_WIDTH as u32
    }

    /// The width of a y axis' label area: its widest tick label, the
    /// tick, and the title's room beyond them.
    fn y_area(&self) -> u32 {
        self.widest() + TICK_ROOM + TITLE_ROOM
    }
}

/// The height of an x axis' label area: a line of tick labels, the tick,
/// and the title's room below them.
const X_AREA: u32 = LABEL_FONT + TICK_ROOM + TITLE_ROOM;

fn failed(title: &str, error: impl std::fmt::Debug) -> String {
    format!("<p class=\"chart-error\">The chart '{title}' could not be drawn: {error:?}</p>")
}

/// How a legend entry is drawn: a line or a filled box.
#[derive(Clone, Copy)]
enum Mark {
    Line,
    Box,
}

/// Height of the strip above a chart that holds its title and legend.
fn header_height(entries: usize, names: usize) -> u32 {
    let lines = if entries > 1 { 1 + names / 60 } else { 0 };
    30 + lines as u32 * 20
}

/// Draws the title and, when there is more than one entry, the legend in
/// the strip above the plot, so the legend never covers a line or a bar.
fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    entries: &[(&str, RGBColor, Mark)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (width, _) = area.dim_in_pixel();
    area.draw(&Text::new(
        title.to_string(),
        (12, 6),
        ("sans-serif", 18).into_font(),
    ))?;
    if entries.len() < 2 {
        return Ok(());
    }
    let (mut x, mut y) = (64i32, 36i32);
    for (name, color, mark) in entries {
        // A 14 px sans-serif character is about 7.5 px wide.
        let needed = 26 + (name.chars().count() as f64 * 7.5) as i32 + 16;
        if x + needed > width as i32 && x > 64 {
            x = 64;
            y += 20;
        }
        match mark {
            Mark::Line => area.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                color.stroke_width(3),
            ))?,
            Mark::Box => area.draw(&Rectangle::new(
                [(x + 2, y - 5), (x + 16, y + 5)],
                color.filled(),
            ))?,
        }
        area.draw(&Text::new(
            name.to_string(),
            (x + 24, y - 8),
            ("sans-serif", LABEL_FONT).into_font(),
        ))?;
        x += needed;
    }
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A white canvas `WIDTH` wide with the title and legend strip drawn on
/// top of a plot area `plot_height` high: returns the whole canvas (to
/// present) and the plot area.
fn framed<'a>(
    svg: &'a mut String,
    plot_height: u32,
    title: &str,
    entries: &[(&str, RGBColor, Mark)],
) -> Result<(Area<'a>, Area<'a>), DrawingAreaErrorKind<std::io::Error>> {
    let names: usize = entries.iter().map(|e| e.0.chars().count() + 6).sum();
    let top = header_height(entries.len(), names);
    let root = SVGBackend::with_string(svg, (WIDTH, plot_height + top)).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, plot) = root.split_vertically(top);
    draw_header(&header, title, entries)?;
    Ok((root, plot))
}

fn y_top(series: &[ChartSeries], fixed: Option<f64>) -> f64 {
    fixed.unwrap_or_else(|| {
        let top = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        if top > 0.0 {
            top * 1.1
        } else {
            1.0
        }
    })
}

/// Lines over time as an SVG document.
pub fn line_chart(chart: &LineChart<'_>) -> String {
    let mut svg = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let entries: Vec<(&str, RGBColor, Mark)> = chart
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), PALETTE[i % PALETTE.len()], Mark::Line))
            .collect();
        let (root, plot) = framed(&mut svg, HEIGHT - 30, chart.title, &entries)?;
        let y_ticks = Ticks::new(
            y_top(&chart.series, chart.y_max),
            8,
            counts_things(chart.y_label),
        );
        let x_ticks = Ticks::new(chart.x_max.max(1.0), 10, counts_things(chart.x_label));
        let (x_max, y_max) = (x_ticks.top, y_ticks.top);
        let mut ctx = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AREA)
            .y_label_area_size(y_ticks.y_area())
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        for band in &chart.bands {
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(0.0, band.from), (x_max, band.to.min(y_max))],
                band.color.mix(0.18).filled(),
            )))?;
        }
        for span in &chart.spans {
            let (from, to) = (span.from.clamp(0.0, x_max), span.to.clamp(0.0, x_max));
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(from, 0.0), (to, y_max)],
                span.color.mix(0.25).filled(),
            )))?;
        }
        ctx.configure_mesh()
            .label_style(("sans-serif", LABEL_FONT))
            .axis_desc_style(("sans-serif", LABEL_FONT))
            .x_desc(chart.x_label)
            .y_desc(chart.y_label)
            .x_labels(x_ticks.labels)
            .y_labels(y_ticks.labels)
            .x_label_formatter(&|v| x_ticks.label(*v))
            .y_label_formatter(&|v| y_ticks.label(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (i, series) in chart.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            ctx.draw_series(LineSeries::new(
                series
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| x.is_finite() && y.is_finite()),
                color.stroke_width(2),
            ))?;
            // A line needs two points: a lone one (one level, one second) is a dot.
            if series.points.len() == 1 {
                ctx.draw_series(
                    series
                        .points
                        .iter()
                        .map(|point| Circle::new(*point, 4, color.filled())),
                )?;
            }
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed(chart.title, e.to_string()),
    }
}

/// The percentile spectrum: response time against percentile, the x axis
/// stretched towards the tail (0, 90, 99, 99.9, ... as HdrHistogram plots it).
pub fn spectrum_chart(title: &str, points: &[(f64, f64)]) -> String {
    // x = -log10(1 - q): 0 at the median's left, 1 at p90, 2 at p99, ...
    let mapped: Vec<(f64, f64)> = points
        .iter()
        .filter(|(q, _)| *q < 1.0)
        .map(|(q, ms)| (-(1.0 - q).log10(), *ms))
        .collect();
    let x_max = mapped.iter().map(|p| p.0).fold(1.0f64, f64::max).ceil();
    let mut svg = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let (root, plot) = framed(&mut svg, HEIGHT - 30, title, &[])?;
        let y_ticks = Ticks::new(
            mapped.iter().map(|p| p.1).fold(0.0f64, f64::max).max(0.001) * 1.1,
            8,
            false,
        );
        let y_max = y_ticks.top;
        let mut ctx = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AREA)
            .y_label_area_size(y_ticks.y_area())
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        ctx.configure_mesh()
            .label_style(("sans-serif", LABEL_FONT))
            .axis_desc_style(("sans-serif", LABEL_FONT))
            .x_desc("percentile (%)")
            .y_desc("ms")
            .y_labels(y_ticks.labels)
            .y_label_formatter(&|v| y_ticks.label(*v))
            .x_labels(x_max as usize + 1)
            .x_label_formatter(&|x| {
                let q = 100.0 * (1.0 - 10f64.powf(-x));
                if q < 99.0 {
                    format!("{q:.0}")
                } else {
                    let digits = (x.round() as usize).saturating_sub(2);
                    format!("{q:.digits$}")
                }
            })
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        ctx.draw_series(LineSeries::new(
            mapped.iter().copied(),
            PALETTE[0].stroke_width(2),
        ))?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed(title, e.to_string()),
    }
}

/// Horizontal bars per label: the first measure (e.g. p95) in the upper
/// half of the label's row, the second (e.g. mean), if any, in the lower half.
pub fn bar_chart(
    title: &str,
    unit: &str,
    labels: &[String],
    upper: (&str, &[f64]),
    lower: Option<(&str, &[f64])>,
) -> String {
    let lower = lower.unwrap_or(("", &[]));
    let rows = labels.len().max(1);
    let height = (80 + rows * 34).clamp(180, 1600) as u32;
    let mut svg = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let (upper_color, lower_color) = (PALETTE[1], PALETTE[0]);
        let mut entries = vec![(upper.0, upper_color, Mark::Box)];
        if !lower.1.is_empty() {
            entries.push((lower.0, lower_color, Mark::Box));
        }
        let (root, plot) = framed(&mut svg, height - 30, title, &entries)?;
        let x_ticks = Ticks::new(
            upper
                .1
                .iter()
                .chain(lower.1)
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max)
                .max(0.001)
                * 1.15,
            8,
            counts_things(unit),
        );
        let x_max = x_ticks.top;
        let mut ctx = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AREA)
            .y_label_area_size(170)
            // A segmented range holds its end too: rows segments are 0..rows - 1.
            .build_cartesian_2d(0f64..x_max, (0..rows - 1).into_segmented())?;
        ctx.configure_mesh()
            .label_style(("sans-serif", LABEL_FONT))
            .axis_desc_style(("sans-serif", LABEL_FONT))
            .x_desc(unit)
            .x_labels(x_ticks.labels)
            .x_label_formatter(&|v| x_ticks.label(*v))
            .y_labels(rows)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => {
                    labels
                        .get(rows - 1 - (*i).min(rows - 1))
                        .map_or(String::new(), |l| {
                            if l.chars().count() > 24 {
                                format!("{}…", l.chars().take(23).collect::<String>())
                            } else {
                                l.clone()
                            }
                        })
                }
                _ => String::new(),
            })
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        // Row 0 is at the bottom: the first label goes to the top row.
        let row = |i: usize| rows - 1 - i;
        ctx.draw_series(upper.1.iter().enumerate().map(|(i, v)| {
            Rectangle::new(
                [
                    (0.0, SegmentValue::CenterOf(row(i))),
                    (*v, SegmentValue::Exact(row(i) + 1)),
                ],
                upper_color.filled(),
            )
        }))?;
        ctx.draw_series(lower.1.iter().enumerate().map(|(i, v)| {
            Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(row(i))),
                    (*v, SegmentValue::CenterOf(row(i))),
                ],
                lower_color.filled(),
            )
        }))?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed(title, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y of the SVG text element that reads `label`.
    fn text_y(svg: &str, label: &str) -> f64 {
        let at = svg
            .find(&format!(">\n{label}\n</text>"))
            .unwrap_or_else(|| panic!("no text {label}"));
        let start = svg[..at].rfind("<text").unwrap();
        let y = svg[start..at].split("y=\"").nth(1).unwrap();
        y[..y.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn legends_stand_above_the_plot() {
        let series = |name: &str| ChartSeries {
            name: name.into(),
            points: vec![(0.0, 1.0), (10.0, 100.0)],
        };
        let svg = line_chart(&LineChart {
            title: "Response time percentiles",
            x_label: "seconds",
            y_label: "ms",
            x_max: 10.0,
            y_max: None,
            series: vec![series("p50"), series("p95")],
            spans: vec![],
            bands: vec![],
        });
        // The plot (its top axis label "120" and below) starts under the
        // strip that holds the title and the legend.
        let top_of_plot = text_y(&svg, "120");
        for label in ["p50", "p95"] {
            assert!(
                text_y(&svg, label) < top_of_plot - 10.0,
                "{label} over the plot"
            );
        }
        let bars = bar_chart(
            "Per label",
            "ms",
            &["a".into()],
            ("p95", &[3.0]),
            Some(("mean", &[2.0])),
        );
        assert!(text_y(&bars, "mean") < 50.0 && text_y(&bars, "p95") < 50.0);
    }

    /// The texts of an SVG's <text> elements.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_string())
            })
            .collect()
    }

    /// A count axis ("virtual users", "nodes", "requests") has whole
    /// ticks without decimals, never 0.2 of a node; other axes get the
    /// decimals their step needs and no more (ms: 0, 20, 40, not 20.0).
    #[test]
    fn count_axes_have_whole_ticks() {
        let users = line_chart(&LineChart {
            title: "Active users",
            x_label: "seconds",
            y_label: "virtual users",
            x_max: 8.0,
            y_max: None,
            series: vec![ChartSeries {
                name: "users".into(),
                points: vec![(0.5, 4.0), (7.5, 4.0)],
            }],
            spans: vec![],
            bands: vec![],
        });
        let labels = texts(&users);
        for tick in ["0", "1", "2", "3", "4", "5", "8"] {
            assert!(
                labels.iter().any(|l| l == tick),
                "no tick {tick}: {labels:?}"
            );
        }
        assert!(
            !labels.iter().any(|l| l.contains('.')),
            "decimals on a count axis: {labels:?}"
        );
        // Three nodes on x: 0, 1, 2, 3 and nothing between.
        let nodes = line_chart(&LineChart {
            title: "By nodes",
            x_label: "nodes",
            y_label: "ms",
            x_max: 3.0,
            y_max: None,
            series: vec![ChartSeries {
                name: "p95".into(),
                points: vec![(1.0, 12.5), (2.0, 30.0), (3.0, 61.0)],
            }],
            spans: vec![],
            bands: vec![],
        });
        let labels = texts(&nodes);
        assert!(
            !labels.iter().any(|l| l.contains('.')),
            "decimals on a count axis or ms: {labels:?}"
        );
        assert!(labels.iter().any(|l| l == "70"), "{labels:?}");
        let bars = bar_chart(
            "Requests per label",
            "requests",
            &["a".into(), "b".into()],
            ("requests", &[3.0, 1.0]),
            None,
        );
        assert!(
            !texts(&bars).iter().any(|l| l.contains('.')),
            "{:?}",
            texts(&bars)
        );
        // A fraction where it means something: Apdex in tenths.
        assert_eq!(Ticks::new(1.0, 8, false).label(0.4), "0.4");
        assert_eq!(Ticks::new(0.3, 8, true).top, 1.0);
        assert_eq!(Ticks::new(12_000.0, 8, false).label(12_000.0), "12,000");
        assert!(counts_things("virtual users") && counts_things("nodes"));
        assert!(!counts_things("requests/s") && !counts_things("per second"));
    }

    /// The y axis' label area holds its widest tick label and its title
    /// beside it: wider ticks, a wider area.
    #[test]
    fn axis_titles_get_room_beside_the_widest_tick() {
        let narrow = Ticks::new(5.0, 8, false);
        let wide = Ticks::new(120_000.0, 8, false);
        assert_eq!(narrow.widest(), 9);
        assert_eq!(wide.label(120_000.0), "120,000");
        assert_eq!(wide.widest(), 7 * 9);
        assert_eq!(wide.y_area() - narrow.y_area(), 6 * 9);
        assert!(narrow.y_area() >= narrow.widest() + TICK_ROOM + LABEL_FONT);
    }

    #[test]
    fn charts_are_svg_with_their_titles() {
        let svg = line_chart(&LineChart {
            title: "Response time",
            x_label: "s",
            y_label: "ms",
            x_max: 10.0,
            y_max: None,
            series: vec![ChartSeries {
                name: "p50".into(),
                points: vec![(0.0, 1.0), (1.0, 2.0)],
            }],
            spans: vec![Span {
                from: 2.0,
                to: 3.0,
                color: PALETTE[3],
            }],
            bands: vec![],
        });
        assert!(
            svg.starts_with("<svg") && svg.contains("Response time"),
            "{svg}"
        );
        let spectrum = spectrum_chart("Spectrum", &[(0.5, 1.0), (0.9, 2.0), (0.999, 9.0)]);
        assert!(
            spectrum.contains("99.9") && spectrum.contains("<polyline"),
            "{spectrum}"
        );
        let bars = bar_chart(
            "Per label",
            "ms",
            &["login".into(), "course".into()],
            ("p95", &[3.0, 4.0]),
            Some(("mean", &[1.0, 2.0])),
        );
        assert!(bars.contains("login") && bars.contains("course") && bars.contains("<rect"));
    }
}

/// One bar of [`interval_bars`]: a mean and its 95% interval, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalBar {
    pub mean: f64,
    pub ci95: Option<(f64, f64)>,
}

/// Vertical bars in groups (one group per `groups` entry, one colour per
/// series), each with a whisker over its 95% interval: the grouped bar
/// chart of a study's cells. `None` leaves a gap (a cell not measured).
pub fn interval_bars(
    title: &str,
    unit: &str,
    groups: &[String],
    series: &[(String, Vec<Option<IntervalBar>>)],
) -> String {
    let mut svg = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let entries: Vec<(&str, RGBColor, Mark)> = series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.0.as_str(), PALETTE[i % PALETTE.len()], Mark::Box))
            .collect();
        let (root, plot) = framed(&mut svg, HEIGHT - 30, title, &entries)?;
        let highest = series
            .iter()
            .flat_map(|(_, bars)| bars.iter().flatten())
            .map(|b| b.ci95.map_or(b.mean, |c| c.1.max(b.mean)))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let y_ticks = Ticks::new(
            if highest > 0.0 { highest * 1.1 } else { 1.0 },
            8,
            counts_things(unit),
        );
        let y_max = y_ticks.top;
        let n = groups.len().max(1);
        let mut ctx = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AREA)
            .y_label_area_size(y_ticks.y_area())
            .build_cartesian_2d(0f64..n as f64, 0f64..y_max)?;
        ctx.configure_mesh()
            .label_style(("sans-serif", LABEL_FONT))
            .axis_desc_style(("sans-serif", LABEL_FONT))
            .y_desc(unit)
            .y_labels(y_ticks.labels)
            .y_label_formatter(&|v| y_ticks.label(*v))
            .x_labels(n * 2 + 1)
            .x_label_formatter(&|x| {
                // Labels at the middle of each group.
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 1e-6 {
                    groups.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let width = 0.8 / series.len().max(1) as f64;
        for (s, (_, bars)) in series.iter().enumerate() {
            let color = PALETTE[s % PALETTE.len()];
            for (g, bar) in bars.iter().enumerate() {
                let Some(bar) = bar.filter(|b| b.mean.is_finite()) else {
                    continue;
                };
                let left = g as f64 + 0.1 + s as f64 * width;
                ctx.draw_series(std::iter::once(Rectangle::new(
                    [
                        (left + width * 0.08, 0.0),
                        (left + width * 0.92, bar.mean.max(0.0)),
                    ],
                    color.filled(),
                )))?;
                if let Some((low, high)) = bar.ci95 {
                    let middle = left + width / 2.0;
                    let cap = width * 0.2;
                    let black = BLACK.stroke_width(2);
                    ctx.draw_series(std::iter::once(PathElement::new(
                        vec![(middle, low.max(0.0)), (middle, high)],
                        black,
                    )))?;
                    for y in [low.max(0.0), high] {
                        ctx.draw_series(std::iter::once(PathElement::new(
                            vec![(middle - cap, y), (middle + cap, y)],
                            black,
                        )))?;
                    }
                }
            }
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed(title, e.to_string()),
    }
}
