//! `headroom compare -o compare.html`: the comparison as one self-contained
//! page: a table per figure with changes coloured by significance, bar
//! charts of the runs' totals, resources, environment and regressions.

use crate::charts::bar_chart;
use crate::compare::{
    no_regression, number, signed_pct, ComparedMetric, Comparison, EnvironmentDifference,
    MetricTable, ResourceFigures,
};
use crate::html::{escape, STYLE};
use headroom_bundle::TOTAL_LABEL;
use std::fmt::Write;

/// The colours of changes; in the sentence that explains them, the
/// coloured words stay in the text's flow (no gap before their comma).
const EXTRA_STYLE: &str = ".better{background:#c8e6c9}.worse{background:#ffcdd2}.ns{color:#777}\
    .meta span.better,.meta span.worse,.meta span.ns{margin-right:0;display:inline}";

pub fn render_compare_html(c: &Comparison) -> String {
    let mut html = String::new();
    page_head(&mut html, c);
    regressions(&mut html, c);
    totals(&mut html, c);
    for table in &c.metrics {
        metric_table(&mut html, c, table);
    }
    for host in &c.resources {
        resource_table(&mut html, c, host);
    }
    limits_table(&mut html, c);
    differences(&mut html, c);
    html.push_str("\n</main></body></html>\n");
    html
}

/// The page's head, what its colours mean, and the runs compared.
fn page_head(html: &mut String, c: &Comparison) {
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom comparison</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>headroom comparison</h1>\n<p class=\"meta\">Baseline {}. Changes in % of the baseline; \
         <span class=\"better\">significantly better</span>, <span class=\"worse\">significantly worse</span>, \
         <span class=\"ns\">n.s.</span> = not significant ({:.0}% bootstrap interval of the per-second medians includes 0), \
         n.t. = not tested (a run has fewer than 3 measured seconds). \
         Regression threshold {:.1}%.</p>\n",
        escape(&c.baseline),
        c.confidence * 100.0,
        c.threshold_pct
    );
    html.push_str("<div class=\"scroll\"><table><tr><th>Run</th><th class=\"text\">Bundle</th><th>Started</th><th>Status</th><th class=\"text\">Target</th></tr>");
    for run in &c.runs {
        let _ = write!(
            html,
            "<tr><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
            escape(&run.name),
            escape(&run.bundle),
            escape(&run.started_at),
            escape(&run.status),
            escape(&run.target)
        );
    }
    html.push_str("</table></div>\n");
}

/// The verdict: the significant regressions, or that there are none.
fn regressions(html: &mut String, c: &Comparison) {
    if c.regressions.is_empty() {
        let _ = writeln!(
            html,
            "<p class=\"verdict\">{}</p>",
            escape(&no_regression(c))
        );
    } else {
        html.push_str("<div class=\"verdict\"><b>Significant regressions</b><ul>");
        for r in &c.regressions {
            let _ = write!(
                html,
                "<li>{}: {}[{}] {:+.1}% (interval {:+.1}% .. {:+.1}%)</li>",
                escape(&r.run),
                r.metric.short(),
                escape(&r.label),
                r.change_pct,
                r.interval_pct.0,
                r.interval_pct.1
            );
        }
        html.push_str("</ul></div>\n");
    }
}

/// Bar charts of the runs' totals: Apdex, response time, throughput.
fn totals(html: &mut String, c: &Comparison) {
    let names: Vec<String> = c.runs.iter().map(|r| r.name.clone()).collect();
    let total = |metric: ComparedMetric| -> Vec<f64> {
        c.metrics
            .iter()
            .find(|t| t.metric == metric)
            .and_then(|t| {
                let column = t.labels.iter().position(|l| l == TOTAL_LABEL)?;
                Some(
                    t.rows
                        .iter()
                        .map(|row| row[column].value.unwrap_or(0.0))
                        .collect(),
                )
            })
            .unwrap_or_default()
    };
    let (apdex, p95, mean, rps) = (
        total(ComparedMetric::Apdex),
        total(ComparedMetric::P95),
        total(ComparedMetric::Mean),
        total(ComparedMetric::Throughput),
    );
    html.push_str("<h2>Totals</h2><div class=\"charts\">");
    for svg in [
        bar_chart("Apdex", "Apdex", &names, ("Apdex", &apdex), None),
        bar_chart(
            "Response time",
            "ms",
            &names,
            ("p95", &p95),
            Some(("mean", &mean)),
        ),
        bar_chart(
            "Throughput",
            "requests/s",
            &names,
            ("requests/s", &rps),
            None,
        ),
    ] {
        let _ = write!(html, "<figure>{svg}</figure>");
    }
    html.push_str("</div>\n");
}

/// One figure's table: a row per run, a column per label, each change
/// coloured by its significance.
fn metric_table(html: &mut String, c: &Comparison, table: &MetricTable) {
    let _ = write!(
        html,
        "<h3>{}</h3><div class=\"scroll\"><table><tr><th>Run</th>",
        escape(table.metric.title())
    );
    for label in &table.labels {
        let _ = write!(html, "<th>{}</th>", escape(label));
    }
    html.push_str("</tr>");
    for (run, row) in c.runs.iter().zip(&table.rows) {
        let _ = write!(html, "<tr><td>{}</td>", escape(&run.name));
        for cell in row {
            let value = number(table.metric, cell.value);
            let (class, change) = match (cell.change_pct, cell.significant) {
                (Some(change), Some(true)) => {
                    let better = (change > 0.0) == table.metric.higher_is_better();
                    (
                        if better { "better" } else { "worse" },
                        format!(" {}", signed_pct(change)),
                    )
                }
                (Some(change), Some(false)) => ("ns", format!(" {} n.s.", signed_pct(change))),
                (Some(change), None) => ("ns", format!(" {} n.t.", signed_pct(change))),
                (None, _) => ("", String::new()),
            };
            let _ = write!(html, "<td class=\"{class}\">{value}{change}</td>");
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>\n");
}

/// One monitored host's resources: average / peak per run.
fn resource_table(html: &mut String, c: &Comparison, host: &ResourceFigures) {
    let _ = write!(
        html,
        "<h3>Resources of {} (average / peak)</h3><div class=\"scroll\"><table><tr><th>Run</th>",
        escape(&host.host)
    );
    if let Some(first) = host.rows.first() {
        for figure in first {
            let _ = write!(html, "<th>{}</th>", escape(&figure.name));
        }
    }
    html.push_str("</tr>");
    for (run, row) in c.runs.iter().zip(&host.rows) {
        let _ = write!(html, "<tr><td>{}</td>", escape(&run.name));
        for figure in row {
            let mut text = match (figure.average, figure.peak) {
                (Some(a), Some(p)) => format!("{a:.1} / {p:.1}"),
                _ => "-".into(),
            };
            if let Some(change) = figure.change_pct {
                text.push_str(&format!(" ({change:+.0}%)"));
            }
            let _ = write!(html, "<td>{text}</td>");
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>\n");
}

/// Each run's first judged resource of the server: what limited it.
fn limits_table(html: &mut String, c: &Comparison) {
    if c.limits.is_empty() {
        return;
    }
    html.push_str(
        "<h3>What limits each run</h3><div class=\"scroll\"><table><tr><th class=\"text\">Run</th><th class=\"text\">Host</th>\
         <th class=\"text\">Resource</th><th>Utilization (%)</th><th>Saturated</th><th class=\"text\">Evidence</th><th class=\"text\">What to change</th></tr>",
    );
    for l in &c.limits {
        let _ = write!(
            html,
            "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{:.0}</td><td>{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td></tr>",
            escape(&l.run),
            escape(&l.host),
            escape(&l.limit.resource),
            l.limit.utilization_pct,
            if l.limit.saturated { "yes" } else { "no" },
            escape(&l.limit.evidence),
            escape(&l.limit.change)
        );
    }
    html.push_str("</table></div>\n");
}

/// What the runs measured differently (setup) and where they ran
/// (environment).
fn differences(html: &mut String, c: &Comparison) {
    let names: Vec<String> = c.runs.iter().map(|r| r.name.clone()).collect();
    if !c.setup.is_empty() || !c.apdex_comparable {
        html.push_str("<h2>Setup differences</h2><p>These runs measured different things.");
        if !c.apdex_comparable {
            html.push_str(
                " Apdex is shown but not compared: the runs used different Apdex T or F.",
            );
        }
        html.push_str("</p>");
        differences_table(html, &names, &c.setup);
    }
    html.push_str("<h2>Environment</h2>");
    if c.environment.is_empty() {
        html.push_str("<p>No fingerprint field differs between the runs.</p>");
    } else {
        differences_table(html, &names, &c.environment);
    }
}

/// A table of differing fields: one row per field, one column per run.
pub(crate) fn differences_table(
    html: &mut String,
    names: &[String],
    diffs: &[EnvironmentDifference],
) {
    html.push_str("<div class=\"scroll\"><table><tr><th>Field</th>");
    for name in names {
        let _ = write!(html, "<th>{}</th>", escape(name));
    }
    html.push_str("</tr>");
    for diff in diffs {
        let _ = write!(html, "<tr><td>{}</td>", escape(&diff.field));
        for v in &diff.values {
            let _ = write!(
                html,
                "<td class=\"text\">{}</td>",
                escape(v.as_deref().unwrap_or("(none)"))
            );
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>\n");
}
