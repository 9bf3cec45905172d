//! The report of a study (`headroom report runs/STUDY/`): which differences
//! are real, each figure as a table (first factor down, second across) and
//! grouped bars with their 95% intervals, the figures against a numeric
//! factor per configuration (000's Fig. 4), the fault timelines, the
//! environment differences and every run with a link to its bundle.

use crate::charts::{interval_bars, line_chart, ChartSeries, IntervalBar, LineChart, Span};
use crate::html::{escape, STYLE};
use headroom_analysis::experiment::Factor;
use headroom_experiment::figure::Figure;
use headroom_experiment::file::Experiment;
use headroom_experiment::results::{cell_intervals, level_name, CellResult, Results};
use headroom_experiment::store::RunRow;
use headroom_units::quantity::count;
use plotters::style::RGBColor;
use std::fmt::Write;

/// `.wrap`: a cell of words (a change with its interval, a verdict) wraps
/// on a narrow screen instead of pushing the table past its edge.
const EXTRA_STYLE: &str =
    ".better{background:#c8e6c9}.worse{background:#ffcdd2}.ns{color:#666}.odd{background:#fff3e0}\
     td.wrap,th.wrap{white-space:normal;text-align:left;min-width:7em}\
     @media (max-width:600px){td.wrap,th.wrap{min-width:4em}}";

/// One run's seconds around its fault, for the fault timeline.
pub struct FaultTimeline {
    pub cell: String,
    pub repetition: u32,
    /// (second, errors, p95 ms) of the run's total.
    pub seconds: Vec<(u64, u64, Option<f64>)>,
    /// Offsets of the run's events, seconds.
    pub events: Vec<f64>,
}

/// Everything the page shows, as the CLI gathered it.
pub struct StudyPage<'a> {
    pub experiment: &'a Experiment,
    pub results: &'a Results,
    pub rows: &'a [RunRow],
    pub status: &'a str,
    pub runs_planned: (usize, usize),
    pub timelines: Vec<FaultTimeline>,
}

fn key_of_rest(cell: &CellResult) -> String {
    cell.cell
        .iter()
        .skip(1)
        .map(|(f, l)| format!("{f}={l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The factor to draw the figures against: one whose levels are all
/// numbers, preferring users, then the one with the most levels.
fn numeric_factor(experiment: &Experiment) -> Option<(usize, Vec<f64>)> {
    experiment
        .factors
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let values: Option<Vec<f64>> = f.levels.iter().map(|l| l.parse::<f64>().ok()).collect();
            values.filter(|v| v.len() > 1).map(|v| (i, v))
        })
        .max_by_key(|(i, v)| {
            (
                experiment.factors[*i].name == "users",
                v.len(),
                usize::MAX - i,
            )
        })
}

pub fn render_experiment_report(page: &StudyPage<'_>) -> String {
    let experiment = page.experiment;
    let results = page.results;
    let mut html = String::new();
    let finished: usize = results.cells.iter().map(|c| c.runs).sum();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom experiment: {name}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>headroom experiment</h1><h2>{name}</h2><div class=\"meta\"><span class=\"status-{status}\">status: {status}</span>\
         <span>{finished} of {planned}</span><span>{cells}</span><span>order: {order}</span>\
         <span>figures{label}: {figures}</span></div>\n",
        name = escape(&experiment.name),
        status = escape(page.status),
        finished = count(finished, "run", "runs"),
        planned = if page.runs_planned.0 == page.runs_planned.1 {
            page.runs_planned.1.to_string()
        } else {
            format!("{}–{}", page.runs_planned.0, page.runs_planned.1)
        },
        cells = count(results.cells.len(), "cell", "cells"),
        order = match experiment.order {
            headroom_experiment::file::Order::Interleaved =>
                format!("interleaved (seed {})", experiment.seed),
            headroom_experiment::file::Order::Sequential => "sequential".into(),
        },
        label = experiment
            .label
            .as_ref()
            .map(|l| format!(" of '{}'", escape(l)))
            .unwrap_or_default(),
        figures = experiment
            .figures
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", "),
    );
    if page.status != "complete" {
        let _ = write!(
            html,
            "<p class=\"verdict\">The study is {}: {} shown; run the same <code>headroom experiment</code> command to continue it.</p>",
            escape(page.status),
            count(finished, "run is", "runs are")
        );
    }
    if let Some(answer) = headroom_experiment::study_answer::study_answer(experiment, results) {
        let _ = write!(html, "<p class=\"answer\">{}</p>", escape(&answer));
    }
    html.push_str("<ul class=\"meta\">");
    for factor in &experiment.factors {
        let baseline = experiment.baseline_of(factor);
        let _ = write!(
            html,
            "<li>factor <b>{}</b>: {} (baseline {})</li>",
            escape(&factor.name),
            escape(&factor.levels.join(", ")),
            escape(&baseline)
        );
    }
    html.push_str("</ul>\n");
    findings(&mut html, results);
    failed_runs(&mut html, results);
    html.push_str("<h2>The figures, cell by cell</h2><div class=\"charts\">");
    for (k, figure) in experiment.figures.iter().enumerate() {
        figure_section(&mut html, experiment, results, k, *figure);
    }
    html.push_str("</div>\n");
    if let Some((factor, values)) = numeric_factor(experiment) {
        against_numeric(&mut html, experiment, results, factor, &values);
    }
    comparisons(&mut html, results);
    timelines(&mut html, &page.timelines);
    environment(&mut html, results);
    runs(&mut html, experiment, results, page.rows);
    html.push_str("</main></body></html>\n");
    html
}

/// Which differences are real, said first.
fn findings(html: &mut String, results: &Results) {
    let real: Vec<_> = results.comparisons.iter().filter(|c| c.real).collect();
    let noise = results
        .comparisons
        .iter()
        .filter(|c| c.difference.is_some_and(|d| !d.significant))
        .count();
    let unmeasured = |c: &&headroom_experiment::results::LevelComparison| {
        c.verdict
            .starts_with(headroom_experiment::results::NOT_MEASURED)
    };
    let untested = results
        .comparisons
        .iter()
        .filter(|c| c.difference.is_none() && !c.real && !unmeasured(c))
        .count();
    let mut missing: Vec<&str> = results
        .comparisons
        .iter()
        .filter(unmeasured)
        .map(|c| c.figure.name())
        .collect();
    missing.dedup();
    html.push_str("<h2>What the study found</h2><ul class=\"findings\">");
    if results.comparisons.is_empty() {
        html.push_str("<li>No comparisons: the study has no factor with two levels or more.</li>");
    }
    for c in &real {
        let _ = write!(
            html,
            "<li class=\"{}\"><b>{} {}</b>: {}</li>",
            if c.worse { "worse" } else { "better" },
            escape(c.figure.name()),
            escape(&c.change("against", "")),
            escape(&c.verdict)
        );
    }
    if noise > 0 {
        let _ =
            write!(
            html,
            "<li class=\"ns\">{} not distinguishable from noise: {} no change (listed below).</li>",
            count(noise, "other comparison is", "other comparisons are"),
            if noise == 1 { "its 95% interval includes" } else { "their 95% intervals include" }
        );
    }
    if untested > 0 {
        let _ = write!(
            html,
            "<li class=\"ns\">{} no difference (the same value in every repetition) or could not be tested (fewer than 2 repetitions).</li>",
            count(untested, "comparison is", "comparisons are")
        );
    }
    if !missing.is_empty() {
        let _ = write!(
            html,
            "<li class=\"ns\">Not measured by any run: {} (below, why).</li>",
            escape(&missing.join(", "))
        );
    }
    html.push_str("</ul>\n");
}

fn figure_section(
    html: &mut String,
    experiment: &Experiment,
    results: &Results,
    k: usize,
    figure: Figure,
) {
    let _ = write!(html, "<div><h3>{}</h3>", escape(&results.title(figure)));
    // Groups: the first factor's levels; series: the rest's combinations.
    let first = experiment.factors.first();
    let groups: Vec<String> = match first {
        Some(f) => f.levels.iter().map(|l| format!("{}={l}", f.name)).collect(),
        None => vec!["(one cell)".into()],
    };
    let mut keys: Vec<String> = Vec::new();
    for c in &results.cells {
        let key = key_of_rest(c);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let series = figure_series(first, results, &keys, k, figure);
    figure_table(html, results, figure, first, &groups, &keys, &series);
    for (level, cells) in cell_intervals(experiment, results, figure, k) {
        let _ = write!(
            html,
            "<p class=\"meta\">{} intervals of the means: {}</p>",
            level_name(level),
            escape(&cells.join("; "))
        );
    }
    lower_bounds(html, results, k);
    if results.cells.iter().all(|c| c.values[k].is_empty()) {
        // Nothing to draw: say why instead of an empty chart.
        let _ = write!(
            html,
            "<p class=\"meta\">Not measured: {}.</p></div>",
            escape(figure.missing_reason())
        );
        return;
    }
    let title = results.title(figure);
    let _ = write!(
        html,
        "<figure>{}<figcaption>Mean of the repetitions; the whisker is its 95% interval (Student's t).</figcaption></figure></div>",
        interval_bars(&title, &title, &groups, &series)
    );
}

/// The bars of figure `k`: a series per combination of the other
/// factors' levels (`keys`), a bar per level of the `first` factor.
fn figure_series(
    first: Option<&Factor>,
    results: &Results,
    keys: &[String],
    k: usize,
    figure: Figure,
) -> Vec<(String, Vec<Option<IntervalBar>>)> {
    let bar = |c: &CellResult| {
        c.summaries[k].as_ref().map(|s| IntervalBar {
            mean: figure.shown(s.mean),
            ci95: s.ci95.map(|(a, b)| (figure.shown(a), figure.shown(b))),
        })
    };
    keys.iter()
        .map(|key| {
            let bars = match first {
                Some(f) => f
                    .levels
                    .iter()
                    .map(|level| {
                        results
                            .cells
                            .iter()
                            .find(|c| c.cell[0].1 == *level && key_of_rest(c) == *key)
                            .and_then(bar)
                    })
                    .collect(),
                None => results.cells.iter().map(bar).collect(),
            };
            (
                if key.is_empty() {
                    figure.name().to_string()
                } else {
                    key.clone()
                },
                bars,
            )
        })
        .collect()
}

/// The table: first factor down, the rest across. Each cell is "mean
/// ±half its 95% interval", in the figure's unit.
fn figure_table(
    html: &mut String,
    results: &Results,
    figure: Figure,
    first: Option<&Factor>,
    groups: &[String],
    keys: &[String],
    series: &[(String, Vec<Option<IntervalBar>>)],
) {
    let _ = write!(
        html,
        "<div class=\"scroll\"><table><tr><th>{}</th>",
        escape(first.map_or("", |f| f.name.as_str()))
    );
    for key in keys {
        let _ = write!(
            html,
            "<th>{}</th>",
            escape(&match (key.is_empty(), results.unit(figure)) {
                (true, _) => format!("{}, mean ±95%", results.title(figure)),
                (false, "") => format!("{key} (mean ±95%)"),
                (false, unit) => format!("{key} ({unit}, mean ±95%)"),
            })
        );
    }
    html.push_str("</tr>");
    for (g, group) in groups.iter().enumerate() {
        let _ = write!(html, "<tr><td>{}</td>", escape(group));
        for (_, bars) in series {
            let text = match bars.get(g).copied().flatten() {
                Some(b) => figure.with_interval(b.mean, b.ci95.map(|(low, _)| b.mean - low)),
                None => "—".into(),
            };
            let _ = write!(html, "<td>{}</td>", escape(&text));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>");
}

/// The cells whose capacity search reached its max in a repetition:
/// lower bounds, not capacities.
fn lower_bounds(html: &mut String, results: &Results, k: usize) {
    let bounded: Vec<String> = results
        .cells
        .iter()
        .filter(|c| c.at_least[k] > 0)
        .map(|c| {
            format!(
                "{} ({} of {})",
                escape(&c.label),
                c.at_least[k],
                count(c.values[k].len(), "repetition", "repetitions")
            )
        })
        .collect();
    if !bounded.is_empty() {
        let _ = write!(
            html,
            "<p class=\"verdict\">Lower bounds, not capacities: the search reached its max in {}. These cells serve at least that many users; they are not compared.</p>",
            bounded.join(", ")
        );
    }
}

/// Each figure against the numeric factor, one line per combination of
/// the other factors (as 000's Fig. 4 draws Apdex against users).
fn against_numeric(
    html: &mut String,
    experiment: &Experiment,
    results: &Results,
    factor: usize,
    values: &[f64],
) {
    let name = &experiment.factors[factor].name;
    let _ = write!(
        html,
        "<h2>Against {}</h2><div class=\"charts\">",
        escape(name)
    );
    let x_max = values.iter().copied().fold(1.0f64, f64::max) * 1.05;
    let faults = [Figure::FaultErrors, Figure::Recovery, Figure::UsersLost];
    for (k, figure) in experiment.figures.iter().enumerate() {
        if faults.contains(figure) {
            continue;
        }
        let title = results.title(*figure);
        let mut lines: Vec<ChartSeries> = Vec::new();
        for c in &results.cells {
            let others: String = c
                .cell
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != factor)
                .map(|(_, (f, l))| format!("{f}={l}"))
                .collect::<Vec<_>>()
                .join(" ");
            let x: f64 = c.cell[factor].1.parse().unwrap_or(0.0);
            let Some(summary) = &c.summaries[k] else {
                continue;
            };
            let name = if others.is_empty() {
                figure.name().to_string()
            } else {
                others
            };
            match lines.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x, figure.shown(summary.mean))),
                None => lines.push(ChartSeries {
                    name,
                    points: vec![(x, figure.shown(summary.mean))],
                }),
            }
        }
        if lines.is_empty() {
            continue;
        }
        for line in &mut lines {
            line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let chart = LineChart {
            title: &title,
            x_label: name,
            y_label: &title,
            x_max,
            y_max: (*figure == Figure::Apdex).then_some(1.0),
            series: lines,
            spans: Vec::new(),
            bands: if *figure == Figure::Apdex {
                crate::charts::apdex_bands()
            } else {
                Vec::new()
            },
        };
        let _ = write!(html, "<figure>{}</figure>", line_chart(&chart));
    }
    html.push_str("</div>\n");
}

fn comparisons(html: &mut String, results: &Results) {
    if results.comparisons.is_empty() {
        return;
    }
    html.push_str(
        "<h2>Each level against its baseline</h2><p class=\"meta\">The other factors held. A change in % is of the baseline's mean, its 95% interval Fieller's (the ratio of the two means, the baseline's spread included); shares (errors, CPU, memory, disk busy, seconds throttled) change in percentage points (pp), their interval Welch's. An interval that includes no change is noise.</p>\
         <div class=\"scroll\"><table><tr><th class=\"wrap\">figure</th><th class=\"wrap\">level against baseline (others held)</th><th class=\"wrap\">change (95% interval)</th><th class=\"wrap\">verdict</th></tr>",
    );
    for c in &results.comparisons {
        let class = match (c.real, c.worse) {
            (true, true) => "worse",
            (true, false) => "better",
            _ => "ns",
        };
        let change = c
            .shown
            .map_or_else(|| "—".to_string(), |s| s.text(c.figure));
        // The verdict begins with the change already in its own column.
        let verdict = c
            .verdict
            .strip_prefix(&format!("{change}, "))
            .unwrap_or(&c.verdict);
        let _ = write!(
            html,
            "<tr class=\"{class}\"><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td></tr>",
            escape(&results.title(c.figure)),
            escape(&c.change("vs", "")),
            escape(&change),
            escape(verdict)
        );
    }
    html.push_str("</table></div>\n");
}

fn timelines(html: &mut String, timelines: &[FaultTimeline]) {
    if timelines.is_empty() {
        return;
    }
    html.push_str("<h2>Faults</h2><p class=\"meta\">The first repetition of each cell: errors and p95 per second; the shaded second is the fault.</p><div class=\"charts\">");
    for t in timelines {
        let x_max = t
            .seconds
            .iter()
            .map(|s| s.0 as f64 + 1.0)
            .fold(1.0, f64::max);
        let title = format!("{} (repetition {})", t.cell, t.repetition);
        let chart = LineChart {
            title: &title,
            x_label: "seconds",
            y_label: "errors/s; p95 ms",
            x_max,
            y_max: None,
            series: vec![
                ChartSeries {
                    name: "errors per second".into(),
                    points: t.seconds.iter().map(|s| (s.0 as f64, s.1 as f64)).collect(),
                },
                ChartSeries {
                    name: "p95 (ms)".into(),
                    points: t
                        .seconds
                        .iter()
                        .filter_map(|s| s.2.map(|p| (s.0 as f64, p)))
                        .collect(),
                },
            ],
            spans: t
                .events
                .iter()
                .map(|at| Span {
                    from: *at,
                    to: at + 0.5,
                    color: RGBColor(213, 0, 0),
                })
                .collect(),
            bands: Vec::new(),
        };
        let _ = write!(html, "<figure>{}</figure>", line_chart(&chart));
    }
    html.push_str("</div>\n");
}

fn environment(html: &mut String, results: &Results) {
    html.push_str("<h2>Environment</h2>");
    let odd: Vec<(&CellResult, &(u32, String))> = results
        .cells
        .iter()
        .flat_map(|c| c.odd_environment.iter().map(move |o| (c, o)))
        .collect();
    let _ = write!(
        html,
        "<p class=\"meta\">Most runs: <code>{}</code></p>",
        escape(&results.usual_environment)
    );
    if odd.is_empty() {
        html.push_str(
            "<p>Every run had the same governor, frequency, kernel, throttling and memory.</p>\n",
        );
        return;
    }
    html.push_str("<p>These runs differ; their cells' figures mix environments:</p><ul>");
    for (cell, (repetition, how)) in odd {
        let _ = write!(
            html,
            "<li class=\"odd\">{} repetition {repetition}: {}</li>",
            escape(&cell.label),
            escape(how)
        );
    }
    html.push_str("</ul>\n");
}

/// Runs whose target was not serving: named with why, kept out of the
/// figures.
fn failed_runs(html: &mut String, results: &Results) {
    if results.failed.is_empty() {
        return;
    }
    let _ = write!(
        html,
        "<h2>Failed runs</h2><p class=\"verdict\">{} kept out of every figure on this page: the target was not serving.</p><ul>",
        if results.failed.len() == 1 {
            "One run is".to_string()
        } else {
            format!("{} runs are", results.failed.len())
        }
    );
    for f in &results.failed {
        let _ = write!(
            html,
            "<li><b>{}</b> repetition {}: {} (<code>{}</code>)</li>",
            escape(&f.label),
            f.repetition,
            escape(&f.why),
            escape(&f.bundle.display().to_string())
        );
    }
    html.push_str("</ul>\n");
}

fn runs(html: &mut String, experiment: &Experiment, results: &Results, rows: &[RunRow]) {
    html.push_str("<h2>Runs</h2><div class=\"scroll\"><table><tr><th>#</th><th>cell</th><th>repetition</th><th>started</th><th>took</th>");
    for f in &experiment.figures {
        let _ = write!(html, "<th>{}</th>", escape(&results.title(*f)));
    }
    html.push_str("<th>quiet</th></tr>");
    for (i, row) in rows.iter().enumerate() {
        let bundle = row.bundle.display().to_string();
        // Only a path inside the study's directory is linked.
        let safe = row
            .bundle
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
            && !bundle.contains(':');
        let link = if safe {
            format!(
                "<a href=\"{0}/\">{1}</a>",
                escape(&bundle),
                escape(&row.label)
            )
        } else {
            escape(&row.label)
        };
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{link}</td><td>{}{}</td><td>{}</td><td>{:.0} s</td>",
            i + 1,
            row.repetition,
            if row.failed() { " (failed)" } else { "" },
            escape(&row.started_at),
            row.took_s
        );
        for (f, v) in experiment.figures.iter().zip(&row.values) {
            let _ = write!(
                html,
                "<td>{}</td>",
                v.map(|v| format!("{:.*}", f.decimals(), f.shown(v)))
                    .unwrap_or_else(|| "—".into())
            );
        }
        let _ = write!(html, "<td>{}</td></tr>", escape(&row.quiet));
    }
    html.push_str("</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::experiment::difference;
    use headroom_experiment::results::{LevelComparison, ShownChange};

    /// The table put "+20.3%" beside "+25.6 to +30.3" (the absolute
    /// difference, no unit); the change and its interval share one unit
    /// now, and the interval holds the change.
    #[test]
    fn the_comparison_table_says_the_interval_in_the_changes_unit() {
        let (a, b) = (
            [100.0, 104.0, 98.0, 101.0, 103.0],
            [110.0, 112.0, 107.0, 115.0, 109.0],
        );
        let d = difference(&a, &b);
        let (e_a, e_b) = ([0.010, 0.012, 0.011], [0.02, 0.022, 0.025]);
        let comparison = |figure: Figure, base: &[f64], other: &[f64]| {
            let d = difference(base, other);
            let shown = ShownChange::of(figure, base, other, d.as_ref());
            LevelComparison {
                factor: "delay".into(),
                level: "120".into(),
                baseline: "100".into(),
                held: String::new(),
                figure,
                cell: 1,
                baseline_cell: 0,
                difference: d,
                change_pct: d.and_then(|d| d.change_pct),
                verdict: format!("{}, worse", shown.unwrap().text(figure)),
                shown,
                real: true,
                worse: true,
            }
        };
        assert!(d.is_some());
        let results = Results {
            cells: Vec::new(),
            main_effects: Vec::new(),
            comparisons: vec![
                comparison(Figure::Mean, &a, &b),
                comparison(Figure::Errors, &e_a, &e_b),
            ],
            usual_environment: String::new(),
            failed: Vec::new(),
            rate_unit: "req/s",
        };
        let mut html = String::new();
        comparisons(&mut html, &results);
        assert!(
            html.contains("<td class=\"wrap\">mean (ms)</td><td class=\"wrap\">delay=120 vs 100</td><td class=\"wrap\">+9.3% (95%: +5.2% to +13.5%)</td><td class=\"wrap\">worse</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"wrap\">errors (%)</td><td class=\"wrap\">delay=120 vs 100</td><td class=\"wrap\">+1.1 pp (95%: +0.6 pp to +1.7 pp)</td><td class=\"wrap\">worse</td>"),
            "{html}"
        );
    }

    /// "1 comparisons are ...": counts agree with their nouns.
    #[test]
    fn one_comparison_is_said_as_one() {
        let (a, b) = ([100.0, 130.0, 80.0], [105.0, 90.0, 140.0]);
        let d = difference(&a, &b);
        let shown = ShownChange::of(Figure::Mean, &a, &b, d.as_ref());
        let noise = LevelComparison {
            factor: "delay".into(),
            level: "120".into(),
            baseline: "100".into(),
            held: String::new(),
            figure: Figure::Mean,
            cell: 1,
            baseline_cell: 0,
            difference: d,
            change_pct: None,
            verdict: String::new(),
            shown,
            real: false,
            worse: false,
        };
        let untested = LevelComparison {
            difference: None,
            ..noise.clone()
        };
        let results = Results {
            cells: Vec::new(),
            main_effects: Vec::new(),
            comparisons: vec![noise, untested],
            usual_environment: String::new(),
            failed: Vec::new(),
            rate_unit: "req/s",
        };
        let mut html = String::new();
        findings(&mut html, &results);
        assert!(
            html.contains("1 other comparison is not distinguishable from noise: its 95% interval includes no change"),
            "{html}"
        );
        assert!(html.contains("1 comparison is no difference"), "{html}");
    }

    /// Every figure on the page says its unit: the cell tables' and the
    /// runs table's headers named the figure ("mean", "errors") without
    /// it.
    #[test]
    fn a_second_factors_columns_say_their_level_and_unit_once() {
        let experiment = headroom_experiment::file::parse_str(
            "name: t\nfactors:\n  delay: [100, 120]\n  users: [1, 2]\nworkload:\n  url: http://127.0.0.1:1/\n  users: ${users}\n  duration: 2s\nrepetitions: 2\nmeasure: [mean]\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap();
        let rows: Vec<RunRow> = (0..8)
            .map(|i| RunRow {
                cell: i % 4,
                label: format!("cell {}", i % 4),
                repetition: i as u32 / 4 + 1,
                round: 1,
                bundle: "r".into(),
                started_at: String::new(),
                took_s: 2.0,
                exit_code: 0,
                quiet: String::new(),
                environment: String::new(),
                values: vec![Some(100.0 + i as f64)],
                at_least: vec![false],
                failure: None,
            })
            .collect();
        let results = headroom_experiment::results::analyse(&experiment, &rows);
        let html = render_experiment_report(&StudyPage {
            experiment: &experiment,
            results: &results,
            rows: &rows,
            status: "complete",
            runs_planned: (8, 8),
            timelines: Vec::new(),
        });
        // The heading above the table names the figure; the columns say
        // the level and the unit, not the figure's name again.
        assert!(
            html.contains("<th>users=1 (ms, mean ±95%)</th><th>users=2 (ms, mean ±95%)</th>"),
            "{html}"
        );
    }

    #[test]
    fn every_figure_says_its_unit() {
        let experiment = headroom_experiment::file::parse_str(
            "name: t\nfactors:\n  delay: [100, 120]\nworkload:\n  url: http://127.0.0.1:1/\n  users: 1\n  duration: 2s\nrepetitions: 2\nmeasure: [mean, errors]\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap();
        let rows: Vec<RunRow> = [(0, 100.0), (1, 120.0), (0, 102.0), (1, 125.0)]
            .iter()
            .enumerate()
            .map(|(i, (cell, mean))| RunRow {
                cell: *cell,
                label: format!("delay={}", [100, 120][*cell]),
                repetition: i as u32 / 2 + 1,
                round: 1,
                bundle: "r".into(),
                started_at: String::new(),
                took_s: 2.0,
                exit_code: 0,
                quiet: String::new(),
                environment: String::new(),
                values: vec![Some(*mean), Some(0.0)],
                at_least: vec![false, false],
                failure: None,
            })
            .collect();
        let results = headroom_experiment::results::analyse(&experiment, &rows);
        let html = render_experiment_report(&StudyPage {
            experiment: &experiment,
            results: &results,
            rows: &rows,
            status: "complete",
            runs_planned: (4, 4),
            timelines: Vec::new(),
        });
        assert!(
            html.contains("<th>delay</th><th>mean (ms), mean ±95%</th>")
                && html.contains("<th>errors (%), mean ±95%</th>"),
            "{html}"
        );
        assert!(
            html.contains("<th>mean (ms)</th><th>errors (%)</th><th>quiet</th>"),
            "{html}"
        );
        assert!(html.contains("<td>2 s</td>"), "{html}");
    }
}
