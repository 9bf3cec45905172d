//! The report of a bench bundle (`headroom report BENCH/`): where the host
//! stands first, then per benchmark its method, its figures with their 95%
//! intervals as a table and as bars, its curves (the thermal trace, the
//! round trip against payload size), its notes and settings; the published
//! reference figures beside the host's; the host's fingerprint and the
//! doctor's findings.

use crate::bench::{cov, figure, half_interval};
use crate::charts::{interval_bars, line_chart, ChartSeries, IntervalBar, LineChart};
use crate::html::{escape, fingerprint_table, to_value, STYLE};
use headroom_analysis::experiment::Summary;
use headroom_bundle::bench::{BenchBundle, BenchResult};
use std::fmt::Write;

/// A lone chart keeps half the width instead of stretching over the page.
/// `.wrap`: a cell of words (a method, a source) wraps instead of pushing
/// the table past the page's edge.
const EXTRA_STYLE: &str =
    ".charts{grid-template-columns:repeat(auto-fill,minmax(min(100%,480px),1fr))}\
     td.wrap,th.wrap{white-space:normal;text-align:left;min-width:8em}.verdict{overflow-wrap:anywhere}";

/// A published figure, with the host's own where it measured the same.
pub struct ReferenceRow {
    pub machine: String,
    pub what: String,
    pub value: f64,
    pub unit: String,
    pub method: String,
    pub source: String,
    pub host: Option<f64>,
}

pub fn render_bench_report(
    b: &BenchBundle,
    position: &[String],
    references: &[ReferenceRow],
) -> String {
    let mut html = String::new();
    let host = if b.fingerprint.hostname.is_empty() {
        "this host"
    } else {
        &b.fingerprint.hostname
    };
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom bench: {host}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>headroom bench</h1><h2>{host}</h2><div class=\"meta\"><span class=\"status-{status}\">status: {status}</span>\
         <span>started {started}</span><span>{cpu}, {cores}, {memory} MB</span><span>{benchmarks}</span></div>\n",
        host = escape(host),
        status = escape(&b.status),
        started = escape(&b.started),
        cpu = escape(&b.fingerprint.cpu_model),
        cores = headroom_units::quantity::count(b.fingerprint.cores, "core", "cores"),
        memory = b.fingerprint.memory_mb,
        benchmarks = escape(
            &b.results
                .iter()
                .map(|r| r.benchmark.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    if !position.is_empty() {
        html.push_str("<div class=\"verdict\"><b>Where this host stands</b> (published figures measured the same way)<ul>");
        for line in position {
            let _ = write!(html, "<li>{}</li>", escape(line));
        }
        html.push_str("</ul></div>\n");
    }
    for failure in &b.failures {
        let _ = write!(
            html,
            "<p class=\"verdict\" style=\"border-color:#b71c1c\"><b>{} did not run</b>: {}</p>",
            escape(&failure.benchmark),
            escape(&failure.error)
        );
    }
    for r in &b.results {
        section(&mut html, r);
    }
    if !references.is_empty() {
        html.push_str(
            "<h2>Published figures</h2><p class=\"meta\">A comparison holds only when the methods match; \
             the host's figure is shown where it was measured the same way.</p>\
             <div class=\"scroll\"><table><tr><th class=\"wrap\">Machine</th><th class=\"wrap\">Figure</th><th>Published</th><th>This host</th>\
             <th class=\"wrap\">Unit</th><th class=\"wrap\">Method</th><th class=\"wrap\">Source</th></tr>",
        );
        for r in references {
            let _ = write!(
                html,
                "<tr><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td>{}</td><td>{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td></tr>",
                escape(&r.machine),
                escape(&r.what),
                figure(r.value),
                r.host.map_or("—".into(), figure),
                escape(&r.unit),
                escape(&r.method),
                escape(&r.source)
            );
        }
        html.push_str("</table></div>\n");
    }
    html.push_str("<h2>Environment</h2>");
    fingerprint_table(
        &mut html,
        "This host",
        &to_value(&b.fingerprint),
        Some(&b.findings),
    );
    let _ = writeln!(
        html,
        "<p class=\"meta\">Command: <code>{}</code></p></main></body></html>",
        escape(&b.command_line.join(" "))
    );
    html
}

fn section(html: &mut String, r: &BenchResult) {
    let _ = write!(
        html,
        "<h2 id=\"{id}\">{id}</h2><p>{method}</p>",
        id = escape(&r.benchmark),
        method = escape(&r.method)
    );
    figures_table(html, r);
    html.push_str("<div class=\"charts\">");
    unit_charts(html, r);
    series_charts(html, r);
    html.push_str("</div>");
    if !r.notes.is_empty() {
        html.push_str("<ul class=\"findings\">");
        for n in &r.notes {
            let _ = write!(html, "<li>{}</li>", escape(n));
        }
        html.push_str("</ul>");
    }
    let settings: Vec<String> = r
        .settings
        .iter()
        .map(|(k, v)| format!("{}: {}", escape(k), escape(v)))
        .collect();
    let _ = writeln!(
        html,
        "<p class=\"meta\">Settings — {}</p>",
        settings.join(" · ")
    );
}

/// The table of the benchmark's figures: mean, interval, CoV and each
/// repetition.
fn figures_table(html: &mut String, r: &BenchResult) {
    html.push_str(
        "<div class=\"scroll\"><table><tr><th class=\"wrap\">Figure</th><th>Mean</th><th>95% ±</th><th>CoV</th><th>n</th>\
         <th class=\"wrap\">Each repetition</th></tr>",
    );
    for m in &r.measures {
        let Some(s) = Summary::of(&m.values) else {
            continue;
        };
        let _ = write!(
            html,
            // Each figure with its unit, where it is read (the table
            // scrolls on a phone: a unit column at its end went unseen).
            "<tr><td class=\"wrap\">{}{}</td><td><b>{}</b> {unit}</td><td>{} {unit}</td><td>{}</td><td>{}</td><td class=\"wrap\">{} {unit}</td></tr>",
            escape(&m.name),
            if m.higher_is_better { "" } else { " <span class=\"meta\">(lower is better)</span>" },
            figure(s.mean),
            half_interval(&s),
            cov(&s),
            s.n,
            m.values.iter().map(|v| figure(*v)).collect::<Vec<_>>().join(" · "),
            unit = escape(&m.unit)
        );
    }
    html.push_str("</table></div>\n");
}

/// One bar chart per unit, each bar with its interval.
fn unit_charts(html: &mut String, r: &BenchResult) {
    let mut units: Vec<&str> = Vec::new();
    for m in &r.measures {
        if !units.contains(&m.unit.as_str()) {
            units.push(&m.unit);
        }
    }
    for unit in units {
        let of_unit: Vec<_> = r.measures.iter().filter(|m| m.unit == unit).collect();
        // Bars of single values say no more than the table; more than eight
        // bars do not fit their labels (the curves show those figures).
        if of_unit.len() > 8 || of_unit.iter().all(|m| m.values.len() < 2) {
            continue;
        }
        let bars: Vec<Option<IntervalBar>> = of_unit
            .iter()
            .map(|m| {
                Summary::of(&m.values).map(|s| IntervalBar {
                    mean: s.mean,
                    ci95: s.ci95,
                })
            })
            .collect();
        let groups: Vec<String> = of_unit
            .iter()
            .map(|m| {
                if of_unit.len() <= 4 {
                    short_name(&m.name)
                } else {
                    m.key.clone()
                }
            })
            .collect();
        let title = format!("{} ({unit})", r.benchmark);
        let svg = interval_bars(
            &title,
            unit,
            &groups,
            &[("mean, 95% interval".to_string(), bars)],
        );
        let _ = write!(
            html,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            escape(&title)
        );
    }
}

/// A line chart per curve the benchmark measured.
fn series_charts(html: &mut String, r: &BenchResult) {
    for s in &r.series {
        let x_max = s.points.iter().map(|p| p.0).fold(0.0, f64::max);
        let svg = line_chart(&LineChart {
            title: &s.name,
            x_label: &s.x_label,
            y_label: &s.y_label,
            x_max,
            y_max: None,
            series: vec![ChartSeries {
                name: s.name.clone(),
                points: s.points.clone(),
            }],
            spans: Vec::new(),
            bands: Vec::new(),
        });
        let _ = write!(
            html,
            "<figure>{svg}<figcaption>{} ({}) against {}</figcaption></figure>",
            escape(&s.name),
            escape(&s.y_label),
            escape(&s.x_label)
        );
    }
}

/// A bar's label: the name without what the chart's title says already.
pub(crate) fn short_name(name: &str) -> String {
    name.replace("sysbench prime, ", "prime ")
        .replace("gzip -6 of a 64 KiB page, ", "gzip ")
        .replace("STREAM ", "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::bench::{Measure, Series as BenchSeries};
    use std::collections::BTreeMap;

    #[test]
    fn the_page_shows_position_figures_curves_and_escapes() {
        let mut b: BenchBundle = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool_version": "x", "command_line": ["headroom", "bench"], "started": "now",
            "ended": null, "status": "complete", "fingerprint": {"hostname": "pi<1>", "cores": 4},
            "findings": [], "results": [], "failures": [{"benchmark": "network", "error": "no agent"}]
        }))
        .unwrap();
        b.results.push(BenchResult {
            benchmark: "thermal".into(),
            method: "stressberry".into(),
            settings: BTreeMap::from([("stress_s".to_string(), "300".to_string())]),
            measures: vec![Measure {
                key: "burst".into(),
                name: "throughput".into(),
                unit: "events/s".into(),
                higher_is_better: true,
                values: vec![100.0, 110.0],
            }],
            series: vec![BenchSeries {
                name: "temperature".into(),
                x_label: "s".into(),
                y_label: "°C".into(),
                points: vec![(0.0, 40.0), (2.0, 42.0)],
            }],
            notes: vec!["no sensor".into()],
        });
        let refs = [ReferenceRow {
            machine: "Raspberry Pi 4".into(),
            what: "prime".into(),
            value: 1477.83,
            unit: "events/s".into(),
            method: "sysbench".into(),
            source: "leoncode".into(),
            host: Some(2000.0),
        }];
        let html = render_bench_report(&b, &["storage score 4,100".into()], &refs);
        assert!(html.contains("pi&lt;1&gt;") && !html.contains("pi<1>"));
        assert!(html.contains("storage score 4,100"));
        assert!(html.contains("network did not run"));
        assert!(html.contains("<svg") && html.contains("temperature"));
        assert!(html.contains("1,478") && html.contains("2,000"));
        assert!(html.contains("no sensor") && html.contains("stress_s: 300"));
        // The published figures' method and source wrap: at 1366 px they
        // were past the page's edge.
        assert!(
            html.contains("<td class=\"wrap\">sysbench</td><td class=\"wrap\">leoncode</td>"),
            "{html}"
        );
        assert!(
            html.contains("td.wrap,th.wrap{white-space:normal"),
            "{html}"
        );
        assert!(html.contains("<span>, 4 cores, 0 MB</span>"), "{html}");
        // The mean, its interval and the repetitions say their unit.
        assert!(
            html.contains("<td><b>105.0</b> events/s</td><td>±63.53 events/s</td>"),
            "{html}"
        );
        assert!(html.contains("100.0 · 110.0 events/s"), "{html}");
    }
}
