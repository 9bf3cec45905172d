//! `headroom report`: one self-contained HTML file per set of runs (inline
//! CSS and SVG charts, no script, no network), readable on a phone.

use crate::charts::{
    apdex_bands, bar_chart, line_chart, spectrum_chart, Band, ChartSeries, LineChart, Span, PALETTE,
};
use crate::run_data::{flatten, RunData, MIN_INTERVAL_S};
use hdrhistogram::Histogram;
use headroom_analysis::apdex::Rating;
use headroom_bundle::intervals::IntervalRow;
use headroom_bundle::resources::ResourceRow;
use headroom_bundle::sample::ErrorKind;
use headroom_bundle::scenario_record::{JtlRecord, ScenarioFileRecord, ScenarioRecord};
use headroom_bundle::TOTAL_LABEL;
use headroom_units::quantity::count;
use plotters::style::RGBColor;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Escapes text for HTML and XML (JUnit) alike; control characters that
/// XML 1.0 cannot hold become `?`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

pub(crate) const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1b1b1b;background:#f6f7f9}
main{max-width:1340px;margin:0 auto;padding:0 12px 40px}
h1{font-size:1.5em;margin:16px 0 4px}h2{font-size:1.25em;margin:28px 0 6px}h3{font-size:1.05em;margin:22px 0 6px}
h1,h2,h3,p,li,nav{overflow-wrap:anywhere}
.meta{color:#555;font-size:.92em;margin:4px 0 10px}.meta span{margin-right:14px;display:inline-block;max-width:100%}
.verdict{font-size:1.08em;background:#fff;border-left:6px solid #0072b2;padding:10px 12px;margin:10px 0}
.answer{font-size:1.25em;line-height:1.45;background:#fff;border-left:6px solid #009e73;padding:12px 14px;margin:12px 0;max-width:60em}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #ddd;background:linear-gradient(to right,#fff 30%,#fff0) left/40px 100% no-repeat local,linear-gradient(to left,#fff 30%,#fff0) right/40px 100% no-repeat local,radial-gradient(farthest-side at 0 50%,#0003,#0000) left/14px 100% no-repeat scroll,radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/14px 100% no-repeat scroll #fff}
table{border-collapse:collapse;font-size:.88em;width:100%}th,td{padding:4px 8px;text-align:right;white-space:nowrap;border-bottom:1px solid #eee}
th{background:#eef1f5;position:sticky;top:0}td:first-child,th:first-child{text-align:left}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,480px),1fr));gap:12px}
figure{margin:0;background:#fff;border:1px solid #ddd;padding:4px}figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.82em;color:#555;padding:2px 6px}
.Excellent{background:#c8e6c9}.Good{background:#dcedc8}.Fair{background:#fff9c4}.Poor{background:#ffe0b2}.Unacceptable{background:#ffcdd2}
.findings li{margin:3px 0}.status-complete{color:#1b5e20}.status-interrupted,.status-aborted,.status-running,.status-died{color:#b71c1c}
nav a{margin-right:12px}
td.text,th.text{text-align:left}td.text{white-space:normal;overflow-wrap:anywhere;min-width:12em}td.never{text-align:center;color:#666}
";

fn ms(value: Option<f64>) -> String {
    match value {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
        None => "-".into(),
    }
}

fn rating_of(apdex: Option<f64>) -> Option<String> {
    apdex.map(|a| Rating::of(a).to_string())
}

/// The report for these runs.
pub fn render_report(runs: &[RunData]) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom report: {}</title><style>{STYLE}</style></head><body><main>\n<h1>headroom report</h1>\n",
        escape(&runs.iter().map(|r| r.manifest.target.clone()).collect::<Vec<_>>().join(", "))
    );
    if runs.len() > 1 {
        html.push_str("<nav>");
        for (i, run) in runs.iter().enumerate() {
            let _ = write!(
                html,
                "<a href=\"#run{i}\">{}</a>",
                escape(&run.bundle.display().to_string())
            );
        }
        html.push_str("</nav>\n");
    }
    for (i, run) in runs.iter().enumerate() {
        let _ = write!(html, "<section id=\"run{i}\">");
        run_section(&mut html, run);
        html.push_str("</section>\n");
    }
    html.push_str("</main></body></html>\n");
    html
}

/// A mix as the run's heading names it: its name and each journey's
/// weight and users (or share of arrivals).
fn mix_line(mix: &headroom_bundle::scenario_record::MixRecord) -> String {
    let journeys: Vec<String> = mix
        .journeys
        .iter()
        .map(|j| match (j.users, j.arrival_share) {
            (Some(users), _) => format!("{} {}", j.name, count(users as usize, "user", "users")),
            (None, Some(share)) => format!("{} {:.0}% of arrivals", j.name, share * 100.0),
            (None, None) => j.name.clone(),
        })
        .collect();
    let name = mix.name.clone().unwrap_or_else(|| "mix".into());
    format!("{name} (mix: {})", journeys.join(", "))
}

fn run_section(html: &mut String, run: &RunData) {
    let m = &run.manifest;
    let status = m.status.name();
    // A journey's or a results file's name; a URL run's method and URL.
    let scenario = match &m.scenario {
        Some(ScenarioRecord::Url(url)) => format!("{} {}", url.method, url.url),
        Some(ScenarioRecord::Scenario(ScenarioFileRecord { name, .. }))
        | Some(ScenarioRecord::Jtl(JtlRecord { name, .. })) => name.clone().unwrap_or_default(),
        Some(ScenarioRecord::Mix(mix)) => mix_line(mix),
        Some(ScenarioRecord::Replay(replay)) => format!(
            "replay of {} ({} requests at {}×)",
            replay.files.join(", "),
            replay.requests,
            replay.speed
        ),
        None => String::new(),
    };
    let _ = writeln!(
        html,
        "<h2>{}</h2><div class=\"meta\"><span>scenario: {}</span><span>profile: {}</span>\
         <span>Apdex T {} ms, F {} ms</span>\
         <span>started: {}</span><span>duration: {:.1} s</span><span class=\"status-{}\">status: {}</span>\
         <span>headroom {}</span><span>bundle: {}</span></div>",
        escape(&m.target),
        escape(scenario.trim()),
        escape(&m.profile.describe()),
        m.apdex_t_ms,
        m.apdex_f_ms,
        escape(&m.started_at),
        run.elapsed_s(),
        status,
        status,
        escape(&m.tool.version),
        escape(&run.bundle.display().to_string()),
    );
    if run.recovered() {
        let _ = writeln!(
            html,
            "<p class=\"status-died\">The run died before it finished: these figures were rebuilt from \
             intervals.csv and latency.hlog, up to the last second it wrote. Status codes, connections \
             and checks were not kept.</p>"
        );
    }
    if let Some(merged) = &run.manifest.merged {
        merged_shards(html, merged);
    }
    if let Some(m) = &run.manifest.measurement {
        let _ = writeln!(
            html,
            "<p class=\"meta\">A capacity level: the figures cover its measurement, seconds {} to {}; \
             the first {} s were its warm-up (shaded grey on the charts over time). The whole run \
             held {}.</p>",
            m.from_s,
            m.until_s,
            m.from_s,
            count(m.whole_run.total.count as usize, "sample", "samples")
        );
    }
    if let Some(answer) = run
        .manifest
        .profile
        .arrive_within_s
        .and_then(|within| crate::first_sentence::lesson_run(&run.summary, within))
    {
        let _ = writeln!(html, "<p class=\"answer\">{}</p>", escape(&answer));
    }
    verdict(html, run);
    phases(html, run);
    statistics(html, run);
    server_timing(html, run);
    connections(html, run);
    jmeter_dashboard(html, run);
    checks(html, run);
    errors(html, run);
    kept_failures(html, run);
    charts(html, run);
    environment(html, run);
}

fn verdict(html: &mut String, run: &RunData) {
    let total = &run.summary.total;
    let labels: Vec<String> = run
        .labels()
        .into_iter()
        .filter(|l| l != TOTAL_LABEL)
        .collect();
    let worst = labels
        .iter()
        .filter_map(|l| {
            let f = run.figures(l)?;
            Some((l, f.apdex.unwrap_or(1.0), f.p95_ms))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2)));
    // With page loads the total counts pages; the requests they are made
    // of are said beside them.
    let (unit, wire) = match &run.summary.requests {
        Some(w) if w.pages == 0 => {
            let beside = crate::terminal::unrecorded_parts(&w.unrecorded).join(", ");
            (
                "requests/s",
                format!(
                    " ({} requests over the wire: {beside})",
                    count_of(w.requests)
                ),
            )
        }
        Some(w) => {
            let per_second = w.requests as f64 / run.summary.elapsed_s.max(0.001);
            let mut other = if w.plain > 0 {
                format!(", {} other", count_of(w.plain))
            } else {
                String::new()
            };
            for part in crate::terminal::unrecorded_parts(&w.unrecorded) {
                other.push_str(", ");
                other.push_str(&part);
            }
            (
                "pages/s",
                format!(
                    " ({} requests over the wire, <b>{per_second:.1}</b>/s: {} page documents, \
                     {} resources{other}; {} received)",
                    count_of(w.requests),
                    count_of(w.documents),
                    count_of(w.resources),
                    headroom_units::quantity::Bytes(w.bytes_received),
                ),
            )
        }
        None => ("requests/s", String::new()),
    };
    let _ = write!(
        html,
        "<p class=\"verdict\">Apdex <b>{}</b> {} · errors <b>{:.2}%</b> · <b>{:.1}</b> {unit}{wire} · p95 <b>{} ms</b>",
        total.apdex.map_or("-".into(), |a| format!("{a:.3}")),
        escape(&rating_of(total.apdex).unwrap_or_default()),
        total.error_rate * 100.0,
        total.rps,
        ms((total.count > 0).then_some(total.p95_ms)),
    );
    if let Some((label, apdex, p95)) = worst {
        let _ = write!(
            html,
            " · worst label: <b>{}</b> (Apdex {apdex:.3}, p95 {} ms)",
            escape(label),
            ms(Some(p95))
        );
    }
    html.push_str("</p>\n");
}

/// A lesson run's two phases, each judged: the login burst and the
/// reading after it.
fn phases(html: &mut String, run: &RunData) {
    if run.summary.phases.is_empty() {
        return;
    }
    html.push_str(
        "<h3>Phases</h3><div class=\"scroll\"><table class=\"stats\"><tr><th>Phase</th><th>Seconds</th>\
         <th>Arrived</th><th>Samples</th><th>Errors %</th><th>Apdex</th><th>Req/s</th><th>95th pct</th></tr>\n",
    );
    for phase in &run.summary.phases {
        let f = &phase.figures;
        let rating = rating_of(f.apdex).unwrap_or_default();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}–{}</td><td>{}</td><td>{}</td><td>{:.2}</td>\
             <td class=\"{rating}\">{} {rating}</td><td>{:.1}</td><td>{}</td></tr>",
            escape(&phase.name),
            phase.from_s,
            phase.to_s,
            phase.arrivals,
            f.count,
            f.error_rate * 100.0,
            f.apdex.map_or("-".into(), |a| format!("{a:.3}")),
            f.rps,
            ms((f.count > 0).then_some(f.p95_ms)),
        );
    }
    html.push_str(
        "</table></div>\n<p class=\"meta\">A lesson: the arrival phase lasts until every student may \
         have arrived and read a first page (arrive_within plus one mean think time, rounded up to a \
         whole second); the reading phase is the rest. Times in ms.</p>\n",
    );
}

/// The statistics table: what a reader looks for first (samples, errors,
/// Apdex, throughput) on the left, so it stays in view on a laptop; the
/// percentiles and byte rates after.
fn statistics(html: &mut String, run: &RunData) {
    // The seconds the figures cover (a capacity level: its measurement).
    let elapsed = run.summary.elapsed_s.max(0.001);
    html.push_str(
        "<h3>Statistics</h3><div class=\"scroll\"><table class=\"stats\"><tr><th>Label</th><th>Samples</th><th>Errors %</th>\
         <th>Apdex</th><th>Req/s</th><th>Mean</th><th>Median</th><th>90th pct</th><th>95th pct</th><th>99th pct</th>\
         <th>Min</th><th>Max</th><th>Recv KB/s</th><th>Sent KB/s</th></tr>\n",
    );
    for label in run.labels() {
        let Some(f) = run.figures(&label) else {
            continue;
        };
        let rating = rating_of(f.apdex).unwrap_or_default();
        // No sample, no response time: "-", not 0.
        let time = |v: f64| ms((f.count > 0).then_some(v));
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td class=\"{rating}\">{} {rating}</td><td>{:.1}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.1}</td><td>{:.1}</td></tr>",
            escape(&label),
            f.count,
            f.error_rate * 100.0,
            f.apdex.map_or("-".into(), |a| format!("{a:.3}")),
            f.rps,
            time(f.mean_ms),
            time(f.p50_ms),
            time(f.p90_ms),
            time(f.p95_ms),
            time(f.p99_ms),
            time(f.min_ms),
            time(f.max_ms),
            f.bytes_received as f64 / 1024.0 / elapsed,
            f.bytes_sent as f64 / 1024.0 / elapsed,
        );
    }
    html.push_str("</table></div>\n<p class=\"meta\">Times in ms. Percentiles over every sample (HdrHistogram); JMeter's dashboard uses a 20,000-sample window.</p>\n");
}

/// Where each label's time went by the server's own account (its
/// Server-Timing header), beside the time its client waited.
fn server_timing(html: &mut String, run: &RunData) {
    let timed = run.summary.server_timed_labels();
    if timed.is_empty() {
        return;
    }
    html.push_str(
        "<h3>The server's own account</h3><div class=\"scroll\"><table class=\"stats\"><tr><th>Label</th>\
         <th class=\"text\">Server-Timing metric</th><th>Mean</th><th>Responses that gave it</th><th>The client's mean</th></tr>\n",
    );
    for (label, f) in timed {
        for m in &f.server_timing {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{} of {}</td><td>{}</td></tr>",
                escape(label),
                escape(&m.name),
                ms(Some(m.mean_ms)),
                m.count,
                f.count,
                ms(Some(f.mean_ms)),
            );
        }
    }
    html.push_str("</table></div>\n<p class=\"meta\">Times in ms, as the server gave them in its Server-Timing header; the client's time holds them, the network and the queues before the server.</p>\n");
}

/// How the users reached the server: what each origin's connections
/// spoke (HTTP version, TLS version and cipher, as the run's check found
/// them) and the TLS handshakes the users made, full and resumed.
fn connections(html: &mut String, run: &RunData) {
    let mut lines: Vec<String> = run
        .manifest
        .connections
        .iter()
        .map(|c| escape(&c.describe()))
        .collect();
    let tls = crate::terminal::tls_line(&run.summary.total);
    // A capacity level's measured seconds are rebuilt from its intervals,
    // which do not count handshakes: the whole run's are said, as such.
    let whole = || {
        let total = &run.manifest.measurement.as_ref()?.whole_run.total;
        crate::terminal::tls_line(total)
            .map(|l| format!("{l}, in the whole run (its warm-up included)"))
    };
    lines.extend(tls.or_else(whole).map(|l| escape(&l)));
    if !lines.is_empty() {
        let _ = writeln!(html, "<p class=\"meta\">{}</p>", lines.join("<br>"));
    }
}

/// The scenario's checks: where each is evaluated, how often it passed
/// and failed; a check no user reached says "never ran".
fn checks(html: &mut String, run: &RunData) {
    let checks = &run.summary.checks;
    if checks.is_empty() {
        return;
    }
    let failed = checks.values().filter(|c| c.failures > 0).count();
    let never = checks.values().filter(|c| c.never_ran()).count();
    let _ = writeln!(
        html,
        "<h3>Checks</h3><p class=\"meta\">{}: {failed} failed at least once, {never} never ran.</p>\
         <div class=\"scroll\"><table class=\"checks\"><tr><th class=\"text\">Check</th><th class=\"text\">Steps (labels)</th>\
         <th>Passed</th><th>Failed</th><th>Failed %</th></tr>",
        count(checks.len(), "check", "checks")
    );
    // Failing checks first (most failures first), then the rest by name.
    let mut rows: Vec<(&String, &headroom_bundle::summary::CheckFigures)> = checks.iter().collect();
    rows.sort_by(|a, b| b.1.failures.cmp(&a.1.failures).then(a.0.cmp(b.0)));
    for (name, c) in rows {
        let steps = if c.labels.is_empty() {
            "—".to_string()
        } else {
            escape(&c.labels.join(", "))
        };
        let figures = match c.failure_pct() {
            None => "<td colspan=\"3\" class=\"never\">never ran</td>".to_string(),
            Some(pct) => format!(
                "<td>{}</td><td{}>{}</td><td>{}</td>",
                c.passes,
                if c.failures > 0 {
                    " class=\"Unacceptable\""
                } else {
                    ""
                },
                c.failures,
                crate::checks::percent(pct).trim_end_matches('%'),
            ),
        };
        let _ = writeln!(
            html,
            "<tr><td class=\"text\">{}</td><td class=\"text\">{steps}</td>{figures}</tr>",
            escape(name)
        );
    }
    html.push_str("</table></div>\n");
}

/// The errors: by kind (with the HTTP status for status errors) and the
/// first reason seen, then the labels that failed most.
fn errors(html: &mut String, run: &RunData) {
    let total = &run.summary.total;
    if total.errors == 0 {
        return;
    }
    let mut rows = error_rows(total);
    // Which checks failed: the scenario's checks, over the whole run.
    let failing = crate::checks::failed_anywhere(&run.summary.checks);
    for row in rows.iter_mut().filter(|r| r.kind == "check") {
        if !failing.is_empty() {
            row.reason = failing.clone();
        }
    }
    html.push_str(
        "<h3>Errors</h3><div class=\"scroll\"><table class=\"errors\"><tr><th>Kind</th><th>Status</th>\
         <th>Errors</th><th>% of errors</th><th>% of samples</th><th class=\"text\">First reason</th></tr>\n",
    );
    for row in &rows {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
            escape(&row.kind),
            escape(&row.status),
            row.count,
            share(row.count, total.errors),
            share(row.count, total.count),
            escape(&row.reason),
        );
    }
    html.push_str("</table></div>\n");
    let mut labels: Vec<(String, &headroom_bundle::summary::LabelFigures)> = run
        .labels()
        .into_iter()
        .filter(|l| l != TOTAL_LABEL)
        .filter_map(|l| Some((l.clone(), run.figures(&l)?)))
        .filter(|(_, f)| f.errors > 0)
        .collect();
    if labels.is_empty() {
        return;
    }
    labels.sort_by_key(|l| std::cmp::Reverse(l.1.errors));
    html.push_str(
        "<h3>Top errors per label</h3><div class=\"scroll\"><table class=\"errors\"><tr><th>Label</th>\
         <th>Samples</th><th>Errors</th><th>Errors %</th><th class=\"text\">#1 error</th><th class=\"text\">#2 error</th><th class=\"text\">#3 error</th></tr>\n",
    );
    for (label, f) in labels {
        let top = error_rows(f);
        let mut cells = String::new();
        for i in 0..3 {
            match top.get(i) {
                Some(row) => {
                    let kind = if row.kind == "check" {
                        crate::checks::label_check_errors(&run.summary.checks, &label)
                    } else {
                        row.kind.clone()
                    };
                    let what = format!("{kind} {}", row.status);
                    let _ = write!(
                        cells,
                        "<td class=\"text\">{} ({})</td>",
                        escape(what.trim()),
                        row.count
                    );
                }
                None => cells.push_str("<td></td>"),
            }
        }
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td>{cells}</tr>",
            escape(&label),
            f.count,
            f.errors,
            f.error_rate * 100.0
        );
    }
    html.push_str("</table></div>\n");
}

/// The failed exchanges the run kept (`--save-failures`), each linked to
/// its request/response text and its body.
fn kept_failures(html: &mut String, run: &RunData) {
    let entries = match &run.failures {
        Ok(entries) if entries.is_empty() => return,
        Ok(entries) => entries,
        Err(e) => {
            let _ = writeln!(
                html,
                "<p class=\"meta\">The kept failures could not be read: {}</p>",
                escape(e)
            );
            return;
        }
    };
    let per_label = run.manifest.save_failures;
    let _ = writeln!(
        html,
        "<h3>Failed exchanges kept</h3><p class=\"meta\">The first {} of each label, in the \
         order they happened: the request as sent, the response's head (#) and its body, as the server \
         answered. The earliest is often the cause of the others.</p>\
         <div class=\"scroll\"><table class=\"errors\"><tr><th>Label</th>\
         <th class=\"text\">First failure</th><th>Status</th><th>At</th>\
         <th class=\"text\">Kept</th></tr>",
        per_label.map_or("few failures".to_string(), |n| count(
            n as usize,
            "failure",
            "failures"
        ))
    );
    // One row per label, labels in the order of their first failure.
    let mut labels: Vec<&str> = Vec::new();
    for e in entries {
        if !labels.contains(&e.label.as_str()) {
            labels.push(&e.label);
        }
    }
    let link = |path: &str, text: &str| {
        format!(
            "<a href=\"{}\">{}</a>",
            escape(&format!("{}{path}", run.link_prefix)),
            escape(text)
        )
    };
    for label in labels {
        let kept: Vec<_> = entries.iter().filter(|e| e.label == label).collect();
        let first = kept[0];
        let why = match (&first.check, &first.detail) {
            (Some(check), _) => format!("check failed: {check}"),
            (None, Some(detail)) => format!("{}: {detail}", first.error),
            (None, None) => first.error.clone(),
        };
        let links: Vec<String> = kept
            .iter()
            .map(|e| {
                let body = e
                    .body
                    .as_deref()
                    .map(|b| format!(" ({})", link(b, "body")))
                    .unwrap_or_default();
                format!("{}{body}", link(&e.exchange, &format!("#{}", e.n)))
            })
            .collect();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{:.1} s</td>\
             <td class=\"text\">{}</td></tr>",
            escape(label),
            escape(&why),
            if first.status > 0 {
                first.status.to_string()
            } else {
                "—".into()
            },
            first.at_s,
            links.join(" · ")
        );
    }
    html.push_str("</table></div>\n");
}

/// An imported JTL: the figures as JMeter's own dashboard computes them
/// from the same file (its percentile estimator over the last 20,000
/// samples, its overall Apdex with transaction controllers), beside
/// headroom's exact ones above.
fn jmeter_dashboard(html: &mut String, run: &RunData) {
    let Some(ScenarioRecord::Jtl(JtlRecord {
        jmeter_dashboard: Some(d),
        ..
    })) = &run.manifest.scenario
    else {
        return;
    };
    let labels = &d.labels;
    let cell = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.1}"));
    let _ = writeln!(
        html,
        "<h3>As JMeter's dashboard computes them</h3><p class=\"meta\">From the same JTL, as JMeter's \
         HTML dashboard would show it: percentiles by its estimator over each label's last 20,000 \
         samples, the mean of every sample; its overall Apdex is {} (it counts transaction controllers, \
         which its Total leaves out). The table above has headroom's exact percentiles.</p>\
         <div class=\"scroll\"><table class=\"stats\"><tr><th>Label</th><th>Samples</th><th>Errors</th>\
         <th>Apdex</th><th>Mean</th><th>Median</th><th>90th pct</th><th>95th pct</th><th>99th pct</th></tr>",
        d.overall_apdex
            .map_or("—".to_string(), |a| format!("{a:.3}"))
    );
    let mut names: Vec<&str> = labels
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "Total")
        .collect();
    names.sort_by_key(|n| run.manifest.labels.iter().position(|l| l == n));
    names.push("Total");
    for name in names {
        let Some(v) = labels.get(name) else { continue };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(name),
            v.sample_count,
            v.error_count,
            v.apdex.map_or("—".to_string(), |a| format!("{a:.3}")),
            cell(v.mean_ms),
            cell(v.median_ms),
            cell(v.p90_ms),
            cell(v.p95_ms),
            cell(v.p99_ms),
        );
    }
    html.push_str("</table></div>\n");
}

/// `part` as a % of `whole`, with "<0.01" for a share too small to show.
fn count_of(n: u64) -> String {
    headroom_units::quantity::group_thousands(n.min(i64::MAX as u64) as i64)
}

fn share(part: u64, whole: u64) -> String {
    let pct = part as f64 * 100.0 / whole.max(1) as f64;
    if part > 0 && pct < 0.01 {
        "<0.01".into()
    } else {
        format!("{pct:.2}")
    }
}

struct ErrorRow {
    kind: String,
    status: String,
    count: u64,
    reason: String,
}

/// A label's errors by kind, HTTP status errors split by status code,
/// most frequent first.
fn error_rows(f: &headroom_bundle::summary::LabelFigures) -> Vec<ErrorRow> {
    let mut rows = Vec::new();
    for (kind, &count) in f.errors_by_kind.iter().filter(|(_, n)| **n > 0) {
        // The first reason seen, or what the kind itself says.
        let reason = f.error_details.get(kind).cloned().unwrap_or_else(|| {
            ErrorKind::ALL
                .iter()
                .find(|k| k.name() == kind)
                .map_or(String::new(), |k| k.describe().to_string())
        });
        let class = match kind.as_str() {
            "http_4xx" => Some('4'),
            "http_5xx" => Some('5'),
            _ => None,
        };
        let statuses: Vec<(&String, &u64)> = class
            .map(|c| {
                f.error_statuses
                    .iter()
                    .filter(|(code, n)| code.starts_with(c) && **n > 0)
                    .collect()
            })
            .unwrap_or_default();
        if statuses.iter().map(|(_, n)| **n).sum::<u64>() == count && !statuses.is_empty() {
            for (code, n) in statuses {
                rows.push(ErrorRow {
                    kind: kind.clone(),
                    status: code.clone(),
                    count: *n,
                    reason: if code == "other" {
                        reason.clone()
                    } else {
                        format!("HTTP {code}")
                    },
                });
            }
        } else {
            rows.push(ErrorRow {
                kind: kind.clone(),
                status: String::new(),
                count,
                reason,
            });
        }
    }
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
    rows
}

fn figure(html: &mut String, svg: &str, caption: &str) {
    let _ = writeln!(
        html,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

fn series(
    name: &str,
    rows: &[&IntervalRow],
    value: impl Fn(&IntervalRow) -> Option<f64>,
) -> ChartSeries {
    ChartSeries {
        name: name.into(),
        points: rows
            .iter()
            .filter_map(|r| value(r).map(|v| (r.second as f64 + 0.5, v)))
            .collect(),
    }
}

fn charts(html: &mut String, run: &RunData) {
    let total: Vec<&IntervalRow> = run
        .intervals
        .iter()
        .filter(|r| r.label == TOTAL_LABEL && r.interval_s >= MIN_INTERVAL_S)
        .collect();
    let x_max = run
        .elapsed_s()
        .max(total.last().map_or(1.0, |r| r.second as f64 + 1.0));
    html.push_str("<h3>Over time</h3>");
    if !run.events.is_empty() {
        event_list(html, run);
    }
    html.push_str("<div class=\"charts\">\n");
    let timeline = Timeline { run, x_max };
    total_charts(html, &timeline, &total);
    if let Some(histogram) = &run.latency {
        spectrum(html, histogram);
    }
    html.push_str("</div>\n");
    resources(html, run, x_max);
    label_charts(html, &timeline);
}

/// The run's events (faults), listed as they are marked on the charts.
fn event_list(html: &mut String, run: &RunData) {
    html.push_str("<p class=\"meta\">Events, marked red on the charts:</p><ul class=\"findings\">");
    for e in &run.events {
        let _ = write!(
            html,
            "<li>at {:.3} s: {} <code>{}</code>: {}</li>",
            e.offset_s,
            escape(&e.kind),
            escape(&e.command),
            escape(&match e.exit_code {
                Some(code) => format!("exit code {code} after {:.2} s", e.took_s),
                None => format!("did not end: {}", e.output.lines().last().unwrap_or("")),
            })
        );
    }
    html.push_str("</ul>");
}

/// The charts over the run's time: their x axis and marks.
struct Timeline<'r> {
    run: &'r RunData,
    x_max: f64,
}

impl Timeline<'_> {
    /// A capacity level's warm-up, shaded: its seconds are not in the
    /// figures; and each event (a fault), a red mark at its moment.
    fn marks(&self) -> Vec<Span> {
        let mut spans: Vec<Span> = self
            .run
            .manifest
            .measurement
            .as_ref()
            .map(|m| Span {
                from: 0.0,
                to: m.from_s,
                color: RGBColor(120, 120, 120),
            })
            .into_iter()
            .collect();
        spans.extend(self.run.events.iter().map(|e| Span {
            from: e.offset_s,
            to: e.offset_s + self.x_max / 150.0,
            color: RGBColor(213, 0, 0),
        }));
        spans
    }

    fn chart<'a>(
        &self,
        title: &'a str,
        y_label: &'a str,
        y_max: Option<f64>,
        series: Vec<ChartSeries>,
        bands: Vec<Band>,
    ) -> LineChart<'a> {
        LineChart {
            title,
            x_label: "seconds",
            y_label,
            x_max: self.x_max,
            y_max,
            series,
            spans: self.marks(),
            bands,
        }
    }
}

/// All labels together, per second: percentiles, throughput and errors,
/// active users, Apdex.
fn total_charts(html: &mut String, timeline: &Timeline<'_>, total: &[&IntervalRow]) {
    // Seconds without samples have no response times or Apdex.
    let answered: Vec<&IntervalRow> = total.iter().copied().filter(|r| r.count > 0).collect();
    figure(
        html,
        &line_chart(&timeline.chart(
            "Response time percentiles",
            "ms",
            None,
            vec![
                series("p50", &answered, |r| Some(r.p50_ms)),
                series("p90", &answered, |r| Some(r.p90_ms)),
                series("p95", &answered, |r| Some(r.p95_ms)),
                series("p99", &answered, |r| Some(r.p99_ms)),
            ],
            vec![],
        )),
        "Per second, all labels together.",
    );
    figure(
        html,
        &line_chart(&timeline.chart(
            "Throughput and errors",
            "per second",
            None,
            vec![
                series("requests/s", total, |r| Some(r.count as f64 / r.interval_s)),
                series("errors/s", total, |r| Some(r.errors as f64 / r.interval_s)),
            ],
            vec![],
        )),
        "Completed requests and failed ones per second.",
    );
    // Bundles written before arrivals were recorded have none to draw.
    let mut users = vec![series("users", total, |r| Some(r.active_vus as f64))];
    if total.iter().any(|r| r.arrivals.is_some_and(|n| n > 0)) {
        users.push(series("arrived", total, |r| r.arrivals.map(|n| n as f64)));
    }
    figure(
        html,
        &line_chart(&timeline.chart("Active users", "virtual users", None, users, vec![])),
        "Virtual users running in each second, and users who arrived (started) in it.",
    );
    let bands = apdex_bands();
    figure(
        html,
        &line_chart(&timeline.chart(
            "Apdex",
            "Apdex",
            Some(1.0),
            vec![series("Apdex", &answered, |r| r.apdex_counts().score())],
            bands,
        )),
        "Per second; bands: Excellent ≥ 0.94, Good ≥ 0.85, Fair ≥ 0.70, Poor ≥ 0.50, Unacceptable.",
    );
}

/// The latency percentile spectrum of the whole run.
fn spectrum(html: &mut String, histogram: &Histogram<u64>) {
    if !histogram.is_empty() {
        let mut points = Vec::new();
        let mut q = 0.0;
        while q < 1.0 - 1.0 / histogram.len() as f64 && points.len() < 400 {
            points.push((q, histogram.value_at_quantile(q) as f64 / 1000.0));
            // Ten steps per decade of 1 − q.
            q = 1.0 - (1.0 - q) * 10f64.powf(-0.1);
        }
        points.push((q.min(0.999_999), histogram.max() as f64 / 1000.0));
        figure(
            html,
            &spectrum_chart("Latency percentile spectrum", &points),
            "Response time at each percentile of the whole run (from latency.hlog).",
        );
    }
}

/// Per label: response times over the whole run, and p95 over time.
fn label_charts(html: &mut String, timeline: &Timeline<'_>) {
    let run = timeline.run;
    let labels: Vec<String> = run
        .labels()
        .into_iter()
        .filter(|l| l != TOTAL_LABEL)
        .collect();
    if !labels.is_empty() {
        let get = |key: fn(&headroom_bundle::summary::LabelFigures) -> f64| -> Vec<f64> {
            labels
                .iter()
                .map(|l| run.figures(l).map_or(0.0, key))
                .collect()
        };
        let (p95, mean) = (get(|f| f.p95_ms), get(|f| f.mean_ms));
        html.push_str("<h3>Per label</h3><div class=\"charts\">\n");
        figure(
            html,
            &bar_chart(
                "Response time per label",
                "ms",
                &labels,
                ("p95", &p95),
                Some(("mean", &mean)),
            ),
            "Whole run, in the order of the scenario's steps.",
        );
        let mut by_label: BTreeMap<&str, Vec<&IntervalRow>> = BTreeMap::new();
        for row in &run.intervals {
            if row.label != TOTAL_LABEL && row.interval_s >= MIN_INTERVAL_S {
                by_label.entry(row.label.as_str()).or_default().push(row);
            }
        }
        let lines: Vec<ChartSeries> = labels
            .iter()
            .filter_map(|l| {
                by_label
                    .get(l.as_str())
                    .map(|rows| series(l, rows, |r| Some(r.p95_ms)))
            })
            .collect();
        // An empty chart says nothing; more lines than colours, too much.
        if !lines.is_empty() && lines.len() <= PALETTE.len() {
            figure(
                html,
                &line_chart(&timeline.chart("p95 per label over time", "ms", None, lines, vec![])),
                "95th percentile of each label per second.",
            );
        }
        html.push_str("</div>\n");
    }
}
/// The resource chart's caption: the shadings it has, and only those.
fn resource_caption(throttled_seconds: usize, gap_seconds: f64, down_seconds: usize) -> String {
    let mut caption = String::from("Same time axis as the response times.");
    if throttled_seconds > 0 {
        caption.push_str(&format!(" Shaded red: throttled ({throttled_seconds} s)."));
    }
    if down_seconds > 0 {
        caption.push_str(&format!(
            " Shaded orange: a network link down ({down_seconds} s)."
        ));
    }
    let gap = gap_seconds.round();
    if gap >= 1.0 {
        caption.push_str(&format!(" Grey: the agent did not answer ({gap:.0} s)."));
    }
    caption
}

/// Seconds with a row for this host, and the spans without one (agent gaps).
fn gaps(rows: &[&ResourceRow], x_max: f64) -> Vec<Span> {
    let seen: BTreeSet<u64> = rows.iter().map(|r| r.second).collect();
    let (Some(&first), Some(&last)) = (seen.first(), seen.last()) else {
        return vec![];
    };
    let mut spans = Vec::new();
    let mut second = first;
    while second <= last {
        if !seen.contains(&second) {
            let start = second;
            while second <= last && !seen.contains(&second) {
                second += 1;
            }
            spans.push(Span {
                from: start as f64,
                to: (second as f64).min(x_max),
                color: RGBColor(120, 120, 120),
            });
        }
        second += 1;
    }
    spans
}

fn resources(html: &mut String, run: &RunData, x_max: f64) {
    let Some(rows) = &run.resources else { return };
    let hosts: BTreeSet<&str> = rows.iter().map(|r| r.host.as_str()).collect();
    for host in hosts {
        let rows: Vec<&ResourceRow> = rows.iter().filter(|r| r.host == host).collect();
        host_resources(html, run, host, &rows, x_max);
    }
}

/// A resource figure of a host, a point per second it was measured.
fn resource_line(
    rows: &[&ResourceRow],
    name: &str,
    get: fn(&ResourceRow) -> Option<f64>,
) -> ChartSeries {
    ChartSeries {
        name: name.into(),
        points: rows
            .iter()
            .filter_map(|r| get(r).map(|v| (r.second as f64 + 0.5, v)))
            .collect(),
    }
}

/// The charts of one host's resources (`rows`): its usage with the
/// seconds not measured, throttled or with a link down shaded, then its
/// other figures per second and its interrupts.
fn host_resources(html: &mut String, run: &RunData, host: &str, rows: &[&ResourceRow], x_max: f64) {
    let line = |name: &str, get: fn(&ResourceRow) -> Option<f64>| resource_line(rows, name, get);
    let mut spans = gaps(rows, x_max);
    let gap_seconds: f64 = spans.iter().map(|s| s.to - s.from).sum();
    // Seconds throttled (red) and with a network link down (orange).
    let shade = |when: fn(&ResourceRow) -> bool, color: RGBColor| -> Vec<Span> {
        rows.iter()
            .filter(|r| when(r))
            .map(|r| Span {
                from: r.second as f64,
                to: r.second as f64 + 1.0,
                color,
            })
            .collect()
    };
    let throttled = shade(|r| r.throttled == Some(true), RGBColor(213, 0, 0));
    let down = shade(
        |r| r.links_down.is_some_and(|n| n > 0),
        RGBColor(230, 120, 0),
    );
    let (throttled_seconds, down_seconds) = (throttled.len(), down.len());
    spans.extend(throttled);
    spans.extend(down);
    let _ = writeln!(html, "<h3>Resources of {}</h3>", escape(host));
    let summary = run.summary.resources.iter().find(|h| h.host == host);
    if let Some(h) = summary {
        let _ = writeln!(
            html,
            "<p class=\"meta\">{}</p>",
            escape(&crate::terminal::host_line(h))
        );
        for limit in h.limits.iter().filter(|l| l.saturated) {
            let _ = writeln!(
                html,
                "<p><b>Saturated:</b> {}</p>",
                escape(&limit.describe())
            );
        }
    }
    html.push_str("<div class=\"charts\">");
    let usage: Vec<ChartSeries> = vec![
        line("CPU %", |r| r.cpu_pct),
        line("memory %", |r| r.memory_used_pct),
        line("disk %util", |r| r.disk_util_pct),
        line("network % of link", |r| r.net_link_pct),
    ]
    .into_iter()
    .filter(|s| !s.points.is_empty())
    .collect();
    figure(
        html,
        &line_chart(&LineChart {
            title: "Resource usage",
            x_label: "seconds",
            y_label: "%",
            x_max,
            y_max: Some(100.0),
            series: usage,
            spans,
            bands: vec![],
        }),
        &resource_caption(throttled_seconds, gap_seconds, down_seconds),
    );
    per_second_charts(html, host, rows, x_max);
    html.push_str("</div>\n");
    if let Some(h) = summary.filter(|h| !h.interrupts_by_kind.is_empty()) {
        interrupt_table(html, h);
    }
}

/// A host's network, temperature and CPU frequency, a chart each, and
/// its interrupts and context switches, where they were measured.
fn per_second_charts(html: &mut String, host: &str, rows: &[&ResourceRow], x_max: f64) {
    let line = |name: &str, get: fn(&ResourceRow) -> Option<f64>| resource_line(rows, name, get);
    for (title, unit, get) in [
        (
            "Network",
            "Mbit/s",
            (|r: &ResourceRow| r.net_mbit_s) as fn(&ResourceRow) -> Option<f64>,
        ),
        ("Temperature", "°C", |r: &ResourceRow| r.temperature_max_c),
        ("CPU frequency", "MHz", |r: &ResourceRow| r.cpu_mhz),
    ] {
        let s = line(title, get);
        if s.points.is_empty() {
            continue;
        }
        figure(
            html,
            &line_chart(&LineChart {
                title,
                x_label: "seconds",
                y_label: unit,
                x_max,
                y_max: None,
                series: vec![s],
                spans: vec![],
                bands: vec![],
            }),
            &format!("{title} of {host} per second."),
        );
    }
    let noise: Vec<ChartSeries> = vec![
        line("interrupts", |r| r.interrupts_s),
        line("context switches", |r| r.context_switches_s),
    ]
    .into_iter()
    .filter(|s| !s.points.is_empty())
    .collect();
    if !noise.is_empty() {
        figure(
            html,
            &line_chart(&LineChart {
                title: "Interrupts and context switches",
                x_label: "seconds",
                y_label: "per second",
                x_max,
                y_max: None,
                series: noise,
                spans: vec![],
                bands: vec![],
            }),
            &format!(
                "Interrupts (all kinds and cores) and context switches of {host} per second: \
                 timers, rescheduling and devices interrupt the server's work (by kind in \
                 resources.jsonl and the run's summary)."
            ),
        );
    }
}

/// The run's interrupts by kind, the most first (the ten largest; the
/// rest in one row), as 003 tabulated them before and after a benchmark.
fn interrupt_table(html: &mut String, h: &headroom_bundle::resources::HostSummary) {
    let mut kinds: Vec<(&String, &u64)> = h.interrupts_by_kind.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let total: u64 = kinds.iter().map(|k| *k.1).sum();
    let seconds = h.samples.max(1) as f64;
    let _ = writeln!(
        html,
        "<details><summary>Interrupts of {} by kind ({total} over {} s)</summary>\
         <div class=\"scroll\"><table><tr><th class=\"text\">kind</th><th>interrupts</th>\
         <th>per second</th><th>share</th></tr>",
        escape(&h.host),
        h.samples
    );
    let row = |html: &mut String, kind: &str, n: u64| {
        let _ = writeln!(
            html,
            "<tr><td class=\"text\">{}</td><td>{n}</td><td>{:.1}</td><td>{:.1}%</td></tr>",
            escape(kind),
            n as f64 / seconds,
            100.0 * n as f64 / total.max(1) as f64
        );
    };
    for (kind, n) in kinds.iter().take(10) {
        row(html, kind, **n);
    }
    if kinds.len() > 10 {
        let rest: u64 = kinds.iter().skip(10).map(|k| *k.1).sum();
        row(html, &format!("{} other kinds", kinds.len() - 10), rest);
    }
    html.push_str("</table></div></details>\n");
}

/// A fingerprint's field as a person reads it: "memory_mb" → "Memory (MB)",
/// "storage.mount_options" → "Storage: mount options", "cpu_model" → "CPU
/// model". The key itself stays in the cell's title.
fn field_name(key: &str) -> String {
    let words = |part: &str| -> String {
        let mut part = part.to_string();
        let mut unit = "";
        for (suffix, name) in [("_mb", "MB"), ("_mhz", "MHz"), ("_c", "°C"), ("_pct", "%")] {
            if let Some(stripped) = part.strip_suffix(suffix) {
                part = stripped.to_string();
                unit = name;
                break;
            }
        }
        let text: Vec<String> = part
            .split('_')
            .map(|w| match w {
                "cpu" => "CPU".to_string(),
                "os" => "OS".to_string(),
                "cgroup" => "cgroup".to_string(),
                w => w.to_string(),
            })
            .collect();
        let text = text.join(" ");
        if unit.is_empty() {
            text
        } else {
            format!("{text} ({unit})")
        }
    };
    let parts: Vec<String> = key.split('.').map(words).collect();
    let mut text = parts.join(": ");
    if let Some(first) = text.get(..1) {
        if first != first.to_uppercase() && !text.starts_with("cgroup") {
            text = first.to_uppercase() + &text[1..];
        }
    }
    text
}

pub(crate) fn fingerprint_table(
    html: &mut String,
    title: &str,
    fingerprint: &Value,
    doctor: Option<&[headroom_monitor::Finding]>,
) {
    let _ = write!(html, "<h3>{}</h3>", escape(title));
    if let Some(findings) = doctor.filter(|f| !f.is_empty()) {
        html.push_str("<ul class=\"findings\">");
        for finding in findings {
            let _ = write!(
                html,
                "<li><b>{}</b>: {}</li>",
                escape(&field_name(&finding.check)),
                escape(&finding.message)
            );
        }
        html.push_str("</ul>");
    } else if doctor.is_some() {
        html.push_str("<p class=\"meta\">The doctor found nothing to warn about.</p>");
    }
    let mut fields = Vec::new();
    flatten("", fingerprint, &mut fields);
    html.push_str(
        "<div class=\"scroll\"><table><tr><th>Field</th><th class=\"text\">Value</th></tr>",
    );
    for (k, v) in fields {
        let _ = write!(
            html,
            "<tr><td title=\"{}\">{}</td><td class=\"text\">{}</td></tr>",
            escape(&k),
            escape(&field_name(&k)),
            escape(&v)
        );
    }
    html.push_str("</table></div>\n");
}

/// A run merged from shards: each shard's part, and why it is partial.
fn merged_shards(html: &mut String, merged: &headroom_bundle::manifest::MergeRecord) {
    let shards: Vec<String> = merged.shards.iter().map(|s| s.describe()).collect();
    let _ = writeln!(
        html,
        "<p>Merged from {} ({}).</p>",
        count(merged.shards.len(), "shard", "shards"),
        escape(&shards.join("; "))
    );
    if !merged.partial.is_empty() {
        html.push_str("<p class=\"status-died\">Partial:</p><ul class=\"status-died\">");
        for reason in &merged.partial {
            let _ = write!(html, "<li>{}</li>", escape(reason));
        }
        html.push_str("</ul>\n");
    }
}

fn environment(html: &mut String, run: &RunData) {
    let m = &run.manifest;
    if !m.warnings.is_empty() {
        html.push_str("<h3>Warnings</h3><ul class=\"findings\">");
        for w in &m.warnings {
            let message = w
                .get("message")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| w.to_string());
            let _ = write!(html, "<li>{}</li>", escape(&message));
        }
        html.push_str("</ul>\n");
    }
    html.push_str("<h2>Environment</h2>");
    if let Some(fp) = &m.fingerprint {
        fingerprint_table(html, "Load generator", &to_value(fp), Some(&m.doctor));
    }
    for host in &m.monitored_hosts {
        fingerprint_table(
            html,
            &format!("Monitored host {}", host.agent),
            &to_value(&host.fingerprint),
            Some(&host.doctor),
        );
    }
}

pub(crate) fn to_value(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_caption_names_only_the_shadings_it_has() {
        assert_eq!(
            resource_caption(0, -0.0, 0),
            "Same time axis as the response times."
        );
        assert_eq!(
            resource_caption(2, 3.0, 0),
            "Same time axis as the response times. Shaded red: throttled (2 s). Grey: the agent did not answer (3 s)."
        );
        assert!(resource_caption(0, 0.0, 4).ends_with("Shaded orange: a network link down (4 s)."));
        assert!(!resource_caption(0, 0.4, 0).contains("-0"));
    }

    #[test]
    fn gaps_are_the_missing_seconds() {
        let row = |second| ResourceRow {
            second,
            host: "h".into(),
            cpu_pct: Some(1.0),
            ..Default::default()
        };
        let rows = [row(0), row(1), row(4), row(5), row(7)];
        let refs: Vec<&ResourceRow> = rows.iter().collect();
        let spans = gaps(&refs, 10.0);
        let found: Vec<(f64, f64)> = spans.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(found, vec![(2.0, 4.0), (6.0, 7.0)]);
        assert_eq!(field_name("memory_mb"), "Memory (MB)");
        assert_eq!(
            field_name("storage.mount_options"),
            "Storage: mount options"
        );
        assert_eq!(field_name("cpu_model"), "CPU model");
        assert_eq!(field_name("same_host"), "Same host");
        assert_eq!(
            escape("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }
}
