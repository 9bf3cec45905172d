//! The report of a capacity search: the verdict, the capacity curves
//! (Apdex over the rating bands, response times, throughput and resources
//! against users) and the per-level table.

use crate::charts::{apdex_bands, line_chart, ChartSeries, LineChart, Span};
use crate::html::{escape, STYLE};
use headroom_bundle::capacity::{CapacityResult, Level, LittlesLaw, LITTLE_TOLERANCE};
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// `.wrap`: a cell of words (how a level ran, why it was chosen) wraps
/// instead of pushing the levels table past the page's edge.
const EXTRA_STYLE: &str =
    "table.levels th{white-space:normal}table.levels td,table.levels th{padding:4px 6px}td.wrap,th.wrap{white-space:normal;text-align:left;min-width:5em}td.why{min-width:10em}";

/// One level's resource averages on a host: users, the machine's CPU,
/// memory, disk, and the watched server processes' CPU (% of the host).
type HostPoint = (f64, Option<f64>, Option<f64>, Option<f64>, Option<f64>);

/// The median of `values` (the lower middle one of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len().saturating_sub(1) / 2]
}

/// One point per user count: a level measured several times (`--confirm`)
/// is drawn at the median of its measurements.
fn curve(name: &str, levels: &[&Level], value: fn(&Level) -> Option<f64>) -> ChartSeries {
    let mut by_users: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for level in levels {
        if let Some(v) = value(level) {
            by_users.entry(level.users).or_default().push(v);
        }
    }
    ChartSeries {
        name: name.into(),
        points: by_users
            .into_iter()
            .map(|(users, values)| (f64::from(users), median(values)))
            .collect(),
    }
}

/// A level's bundle as a link relative to the report (written in the
/// search's directory), shown as the level's directory name.
fn bundle_link(level: &Level, base: &Path) -> String {
    // Only a directory inside the search's own is linked; anything else
    // (a capacity.json edited by hand) is shown as text, never as a URL.
    match level.bundle.strip_prefix(base) {
        Ok(relative)
            if relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
                && !relative.to_string_lossy().contains(':') =>
        {
            let relative = relative.display().to_string();
            format!(
                "<a href=\"{}/\">{}</a>",
                escape(&relative),
                escape(&relative)
            )
        }
        _ => escape(&level.bundle.display().to_string()),
    }
}

/// A level's kept failed exchanges (`--save-failures`), linked to the
/// first one; its own report lists them all.
fn failures_kept(level: &Level, base: &Path) -> String {
    let Ok(entries) = headroom_bundle::failures::read_index(&level.bundle) else {
        return String::new();
    };
    let Some(first) = entries.first() else {
        return String::new();
    };
    match level.bundle.strip_prefix(base) {
        Ok(relative)
            if relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))) =>
        {
            format!(
                " · <a href=\"{}/{}\">{} kept</a>",
                escape(&relative.display().to_string()),
                escape(&first.exchange),
                headroom_units::quantity::count(entries.len(), "failure", "failures")
            )
        }
        _ => format!(
            " · {} kept",
            headroom_units::quantity::count(entries.len(), "failure", "failures")
        ),
    }
}

/// The report of a capacity search (`result` as in capacity.json).
pub fn render_capacity_report(result: &CapacityResult) -> String {
    let mut levels: Vec<&Level> = result.levels.iter().collect();
    levels.sort_by_key(|l| l.users);
    let x_max = levels
        .iter()
        .map(|l| f64::from(l.users))
        .fold(1.0f64, f64::max)
        * 1.05;
    let mut html = String::new();
    head(&mut html, result, &levels);
    findings(&mut html, result, &levels);
    what_limits_it(&mut html, result);
    if levels.is_empty() {
        html.push_str("<h2>Levels</h2><p>No level was measured.</p>\n</main></body></html>\n");
        return html;
    }
    html.push_str("<h2>Capacity curve</h2><div class=\"charts\">\n");
    curve_charts(&mut html, result, &levels, x_max);
    let processes = crate::capacity::watched_processes(result);
    let server_title = crate::capacity::server_cpu_title(&processes);
    resource_charts(&mut html, result, &levels, x_max, &server_title);
    limit_charts(&mut html, result, &levels, x_max);
    levels_table(&mut html, result, &levels, &processes, &server_title);
    html
}

/// The server's own resources at the knee, judged: each one's
/// utilization, the work that waited for it, the evidence and what to
/// change, the saturated first.
fn what_limits_it(html: &mut String, result: &CapacityResult) {
    let Some(knee) = result
        .knee_users
        .and_then(|k| result.levels.iter().find(|l| l.users == k))
    else {
        return;
    };
    html.push_str("<h2>What limits it</h2>\n");
    let _ = writeln!(
        html,
        "<p>{}</p>",
        escape(&match (&result.bottleneck, &result.limit) {
            (Some(b), _) => b.describe(),
            (None, _) => result.limit_note.clone(),
        })
    );
    if knee.limits.is_empty() {
        return;
    }
    let _ = writeln!(
        html,
        "<div class=\"scroll\"><table class=\"limits\"><tr><th class=\"wrap\">At the knee ({} users)</th><th>Utilization (%)</th><th class=\"wrap\">Waiting (average)</th><th>Saturated</th><th class=\"wrap\">Evidence</th><th class=\"wrap\">What to change</th></tr>",
        knee.users
    );
    for limit in &knee.limits {
        let _ = writeln!(
            html,
            "<tr><td class=\"wrap\">{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td class=\"wrap\">{}</td><td class=\"wrap\">{}</td></tr>",
            escape(&limit.resource),
            limit.utilization_pct,
            limit
                .waiting
                .filter(|_| !limit.units().1.is_empty())
                .map_or("-".to_string(), |w| format!("{w:.1} {}", limit.units().1)),
            if limit.saturated { "<b>yes</b>" } else { "no" },
            escape(&limit.evidence),
            escape(&limit.change),
        );
    }
    html.push_str("</table></div>\n");
}

/// Each judged resource of the server's processes, its utilization
/// against users: one chart for all of them, the knee shaded.
fn limit_charts(html: &mut String, result: &CapacityResult, levels: &[&Level], x_max: f64) {
    let mut by_resource: BTreeMap<&str, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for level in levels {
        for limit in &level.limits {
            by_resource
                .entry(limit.resource.as_str())
                .or_default()
                .entry(level.users)
                .or_default()
                .push(limit.utilization_pct);
        }
    }
    if by_resource.is_empty() {
        return;
    }
    let series = by_resource
        .into_iter()
        .map(|(resource, points)| ChartSeries {
            name: resource.to_string(),
            points: points
                .into_iter()
                .map(|(users, values)| (f64::from(users), median(values)))
                .collect(),
        })
        .collect();
    let chart = LineChart {
        title: "The server's own resources against users",
        x_label: "users",
        y_label: "% used",
        x_max,
        y_max: Some(100.0),
        series,
        spans: knee_spans(result),
        bands: vec![],
    };
    let _ = writeln!(
        html,
        "<figure>{}<figcaption>Each resource's utilization over each level's measurement: a pool's busy workers, a CPU quota used, an accept queue's fullest second of its backlog, a database's connections of max_connections or statements waiting for locks. \"What limits it\" above says which saturated.</figcaption></figure>",
        line_chart(&chart)
    );
}

/// The page's head, the search's setup and the verdict.
fn head(html: &mut String, result: &CapacityResult, levels: &[&Level]) {
    let setup = &result.setup;
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom capacity: {}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>headroom capacity</h1>{}<h2>{}</h2><div class=\"meta\">{}<span>started: {}</span>\
         <span>Apdex T {} ms, F {} ms</span><span>think time: {}</span>\
         <span>target: Apdex ≥ {:.2}, errors ≤ {:.1}%{}</span>\
         <span>{}</span></div>\n<p class=\"verdict\">{}</p>\n",
        escape(&setup.url),
        crate::first_sentence::search_answer(result)
            .map(|s| format!("<p class=\"answer\">{}</p>", escape(&s)))
            .unwrap_or_default(),
        escape(&setup.url),
        setup.scenario.as_ref().map_or(String::new(), |s| format!(
            "<span>scenario: {}</span>",
            escape(s)
        )),
        escape(&setup.started_at),
        setup.apdex_t_ms,
        setup.apdex_f_ms,
        escape(&think_said(result, levels)),
        result.target.apdex,
        result.target.max_error * 100.0,
        result
            .target
            .p95_max
            .map_or(String::new(), |p| format!(", p95 ≤ {} ms", p.as_millis())),
        escape(&level_timing(setup)),
        escape(&result.verdict)
    );
}

/// Whether the figures are the server's, Little's law, the host beside
/// the bottleneck, the knee and how sure the answer is.
fn findings(html: &mut String, result: &CapacityResult, levels: &[&Level]) {
    let interrupted = result.status == "interrupted";
    let _ = write!(html, "<ul class=\"findings\">");
    if interrupted {
        html.push_str(if levels.is_empty() {
            "<li><b>Interrupted:</b> the search was stopped before its first level was measured: there are no figures, and no capacity is claimed.</li>"
        } else {
            "<li><b>Interrupted:</b> the search was stopped before it could decide; the levels below were measured, and no capacity is claimed.</li>"
        });
    } else if !result.valid {
        for why in &result.invalid {
            let _ = write!(html, "<li><b>Invalid:</b> {}.</li>", escape(why));
        }
        if result.invalid.is_empty() {
            html.push_str("<li><b>Invalid:</b> the load generator was the limit at a deciding level; the figures are not the server's.</li>");
        }
    } else {
        html.push_str("<li><b>Valid:</b> the load generator kept up at the deciding levels, each verdict rests on enough requests, and Little's law finds the users in their steady cycle, so the figures are the server's.</li>");
    }
    if let Some(line) = crate::capacity::one_user(result) {
        let (who, what) = line.split_once(": ").unwrap_or(("A user", &line));
        let _ = write!(html, "<li><b>{}:</b> {}.</li>", escape(who), escape(what));
    }
    if let Some(line) = crate::capacity::in_peaks(result) {
        let _ = write!(
            html,
            "<li><b>In the log's peaks:</b> {}.</li>",
            escape(&line)
        );
    }
    if let Some(line) = crate::capacity::phases_at_capacity(result) {
        let (at, what) = line.split_once(": ").unwrap_or(("At the capacity", &line));
        let _ = write!(
            html,
            "<li><b>{}</b>, phase by phase: {}.</li>",
            escape(at),
            escape(what)
        );
    }
    if let Some(little) = &result.little {
        let _ = write!(
            html,
            "<li><b>Little's law</b> at the capacity: {}.{}</li>",
            escape(&little.describe(result.setup.rate())),
            little_says(little, levels)
        );
    }
    if let Some(line) = crate::capacity::other_think_times(result) {
        let (head, rest) = line.split_once(" (").unwrap_or((&line, ""));
        let _ = write!(html, "<li><b>{}</b> ({}.</li>", escape(head), escape(rest));
    }
    if let Some((first, rest)) = result.host_bench.split_first() {
        let _ = write!(
            html,
            "<li><b>Beside the bottleneck</b>, {}: {}</li>",
            escape(first),
            rest.iter()
                .map(|l| escape(l))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if let Some(knee) = result.knee_users {
        let unevenly = result
            .levels
            .iter()
            .any(|l| l.users == knee && l.uneven_floor.is_some());
        let _ = write!(
            html,
            "<li><b>Knee</b> at {}: the first level above the capacity that {} (shaded on the curves).</li>",
            headroom_units::quantity::count(knee as usize, &result.setup.nouns().0, &result.setup.nouns().1),
            if unevenly {
                "met the target unevenly: by its lessons' spread, one more may not"
            } else {
                "broke the target"
            }
        );
    }
    for line in crate::capacity::uncertainty(result) {
        let (head, rest) = line.split_once(": ").unwrap_or(("", &line));
        let _ = write!(html, "<li><b>{}</b>: {}</li>", escape(head), escape(rest));
    }
    html.push_str("</ul>\n");
}

/// The knee, shaded on the curves: from the capacity to the first broken
/// level.
fn knee_spans(result: &CapacityResult) -> Vec<Span> {
    match (result.capacity.users, result.knee_users) {
        (Some(c), Some(k)) => vec![Span {
            from: f64::from(c),
            to: f64::from(k),
            color: RGBColor(213, 0, 0),
        }],
        (None, Some(k)) => vec![Span {
            from: (f64::from(k) - 0.5).max(0.0),
            to: f64::from(k) + 0.5,
            color: RGBColor(213, 0, 0),
        }],
        _ => vec![],
    }
}

/// Apdex, response times and throughput against users.
fn curve_charts(html: &mut String, result: &CapacityResult, levels: &[&Level], x_max: f64) {
    let target = result.target.apdex;
    let bands = apdex_bands();
    let target_line = ChartSeries {
        name: "target".into(),
        points: vec![(0.0, target), (x_max, target)],
    };
    // A lesson's levels are judged in their two phases: each its line.
    let lesson = levels.iter().any(|l| !l.phases.is_empty());
    fn phase_apdex(l: &Level, name: &str) -> Option<f64> {
        l.phases
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.apdex)
    }
    let mut apdex_series = vec![curve("Apdex", levels, |l| l.apdex)];
    if lesson {
        apdex_series.push(curve("arrival phase", levels, |l| {
            phase_apdex(l, "arrival")
        }));
        apdex_series.push(curve("reading phase", levels, |l| {
            phase_apdex(l, "reading")
        }));
    }
    apdex_series.push(target_line);
    let charts = [
        (
            LineChart {
                title: "Apdex against users",
                x_label: "users",
                y_label: "Apdex",
                x_max,
                y_max: Some(1.0),
                series: apdex_series,
                spans: knee_spans(result),
                bands,
            },
            if lesson {
                "Each level's measured Apdex, and that of its arrival phase (the login burst) and its reading phase, which must both meet the target; shaded red: from the capacity to the knee."
            } else {
                "Each level's measured Apdex (the median of its repetitions) over the rating bands, and the target; shaded red: from the capacity to the knee."
            },
        ),
        (
            LineChart {
                title: "Response time against users",
                x_label: "users",
                y_label: "ms",
                x_max,
                y_max: None,
                series: vec![
                    curve("mean", levels, |l| l.mean_ms),
                    curve("p90", levels, |l| l.p90_ms),
                    curve("p95", levels, |l| l.p95_ms),
                ],
                spans: knee_spans(result),
                bands: vec![],
            },
            "Mean and percentiles of each level's measurement.",
        ),
        (
            LineChart {
                title: "Throughput against users",
                x_label: "users",
                y_label: "requests/s",
                x_max,
                y_max: None,
                series: vec![curve("requests/s", levels, |l| Some(l.rps))],
                spans: knee_spans(result),
                bands: vec![],
            },
            "It flattens where the server saturates (Little's law: X = N / (R + Z)).",
        ),
    ];
    for (chart, caption) in charts {
        let _ = writeln!(
            html,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            line_chart(&chart),
            escape(caption)
        );
    }
}

/// Resources against users, per host.
fn resource_charts(
    html: &mut String,
    result: &CapacityResult,
    levels: &[&Level],
    x_max: f64,
    server_title: &str,
) {
    let mut hosts: BTreeMap<String, Vec<HostPoint>> = BTreeMap::new();
    for level in levels {
        for host in &level.resources {
            hosts.entry(host.host.clone()).or_default().push((
                f64::from(level.users),
                host.cpu_avg,
                host.memory_avg,
                host.disk_avg,
                (!host.processes.is_empty()).then(|| host.processes.iter().map(|p| p.1).sum()),
            ));
        }
    }
    for (host, rows) in &hosts {
        let series = |name: &str, pick: fn(&HostPoint) -> Option<f64>| {
            // Repetitions of a level: the median, as for the other curves.
            let mut by_users: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for row in rows.iter() {
                if let Some(v) = pick(row) {
                    by_users.entry(row.0 as u64).or_default().push(v);
                }
            }
            ChartSeries {
                name: name.into(),
                points: by_users
                    .into_iter()
                    .map(|(users, values)| (users as f64, median(values)))
                    .collect(),
            }
        };
        let title = format!("Resources of {host} against users");
        let chart = LineChart {
            title: &title,
            x_label: "users",
            y_label: "%",
            x_max,
            y_max: Some(100.0),
            series: {
                let mut lines = vec![series("machine CPU %", |r| r.1)];
                if rows.iter().any(|r| r.4.is_some()) {
                    lines.push(series(&format!("{server_title} %"), |r| r.4));
                }
                lines.push(series("memory %", |r| r.2));
                lines.push(series("disk %util", |r| r.3));
                lines
            },
            spans: knee_spans(result),
            bands: vec![],
        };
        let _ = writeln!(
            html,
            "<figure>{}<figcaption>Averages over each level's measurement.</figcaption></figure>",
            line_chart(&chart)
        );
    }
}

/// The per-level table and the note under it.
fn levels_table(
    html: &mut String,
    result: &CapacityResult,
    levels: &[&Level],
    processes: &[String],
    server_title: &str,
) {
    let _ = write!(
        html,
        "</div>\n<h2>Levels</h2><div class=\"scroll\"><table class=\"levels\"><tr><th>Users</th><th>Apdex</th><th>Errors (%)</th><th>Mean (ms)</th><th>p50 (ms)</th><th>p90 (ms)</th><th>p95 (ms)</th><th>{}</th><th title=\"every process on the host, the load generator's too when it runs there\">Machine CPU (%)</th>{}<th class=\"wrap\">Target</th><th class=\"wrap\">Ran (warm-up + measured)</th><th class=\"wrap\">Why this many users</th><th class=\"wrap\">Bundle</th></tr>\n",
        result.setup.rate(),
        if processes.is_empty() {
            String::new()
        } else {
            format!(
                "<th>{} (% of the host)</th>",
                escape(&server_title.replacen("server", "Server", 1))
            )
        }
    );
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    for level in levels {
        let rating = level.apdex_rating.as_deref().unwrap_or("");
        let machine = crate::capacity::machine_cpu(level);
        let server = if processes.is_empty() {
            String::new()
        } else {
            format!(
                "<td>{}</td>",
                crate::capacity::server_cpu(level).unwrap_or_else(|| "-".into())
            )
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"{rating}\">{} {rating}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td>{server}<td class=\"wrap\">{}{}</td><td title=\"{}\" class=\"wrap\">{}</td><td class=\"wrap why\">{}</td><td class=\"wrap\">{}{}</td></tr>",
            level.users,
            level.apdex.map_or("-".into(), |a| format!("{a:.3}")),
            level.error_rate * 100.0,
            ms(level.mean_ms),
            ms(level.p50_ms),
            ms(level.p90_ms),
            ms(level.p95_ms),
            level.rps,
            if machine.is_empty() { "-".to_string() } else { machine },
            level.verdict(),
            if level.generator_limited { " (generator limited)" } else { "" },
            escape(&level.ended),
            escape(&crate::capacity::ran(level)),
            escape(&level.why),
            bundle_link(level, &result.bundle),
            failures_kept(level, &result.bundle),
        );
    }
    let _ = write!(
        html,
        "</table></div>\n<p class=\"meta\">Machine CPU is the whole host's, every process on it (the load generator's too when it runs there){}. Each level is an ordinary bundle (linked): <code>headroom report</code> and <code>headroom compare</code> read them, and give the figures of its measurement after the warm-up, as in this table.</p>\n</main></body></html>\n",
        if processes.is_empty() {
            "; <code>--process NAME</code> with <code>--monitor</code> adds the server's own processes' CPU".to_string()
        } else {
            format!(
                "; {} is theirs alone, in % of the same host",
                escape(server_title)
            )
        }
    );
}

/// The search's think time as planned and, when the capacity level
/// measured it, the think its users took (a scenario's `if:` steps not
/// taken, or a random think, make them differ).
fn think_said(result: &CapacityResult, levels: &[&Level]) -> String {
    let took = result.capacity.users.and_then(|c| {
        levels
            .iter()
            .filter(|l| l.users == c)
            .find_map(|l| l.think_s)
    });
    match took {
        Some(took) => format!(
            "{}; the users at the capacity took {took:.3} s per request",
            result.setup.think
        ),
        None => result.setup.think.clone(),
    }
}

/// What Little's law says of the capacity level, by the rule that judges
/// the answer's validity ([`LITTLE_TOLERANCE`]); with the think time the
/// users took when the level measured it, else with the planned one (under
/// --throughput, whose waits for a slot are not think time).
fn little_says(little: &LittlesLaw, levels: &[&Level]) -> String {
    let tolerance = LITTLE_TOLERANCE * 100.0;
    let measured = levels
        .iter()
        .any(|l| l.users == little.users && l.think_s.is_some());
    match (measured, little.miss() > LITTLE_TOLERANCE) {
        (true, true) => format!(" More than {tolerance:.0}% apart: the level was not steady (its window did not see the users in their cycle), or users waited somewhere not measured (a connection queue)."),
        (true, false) => format!(" They agree within {tolerance:.0}%: the level was steady."),
        (false, true) => format!(" More than {tolerance:.0}% apart, with the planned think time (the level did not measure the think its users took): users waited somewhere not measured (a --throughput cap's slot, a connection queue), so this is no check of the level."),
        (false, false) => format!(" They agree within {tolerance:.0}%, with the planned think time."),
    }
}

/// "aimed ladder; each level: 1–3 s warm-up (until steady) + 3–8 s measured
/// (until its verdict settles)", or the plain search's fixed timing.
fn level_timing(setup: &headroom_bundle::capacity::CapacitySetup) -> String {
    let ladder = if setup.ladder.is_empty() {
        "plain"
    } else {
        &setup.ladder
    };
    let samples = if setup.min_samples > 0 {
        format!("; each verdict on at least {} requests", setup.min_samples)
    } else {
        String::new()
    };
    let lengthened = setup
        .lengthened
        .as_ref()
        .map_or(String::new(), |why| format!(" ({why})"));
    level_times(setup, ladder) + &samples + &lengthened
}

fn level_times(setup: &headroom_bundle::capacity::CapacitySetup, ladder: &str) -> String {
    if setup.early_stop {
        let near = setup.near_min_measured_s.max(setup.min_measured_s);
        format!(
            "{ladder} ladder; each level: {} warm-up (until steady) + {} measured (until its verdict settles{})",
            headroom_units::quantity::span(setup.warmup_min_s, setup.warmup_s, "s"),
            headroom_units::quantity::span(setup.min_measured_s, setup.measured_s, "s"),
            if headroom_units::quantity::round_figure(near) == headroom_units::quantity::round_figure(setup.min_measured_s) {
                String::new()
            } else {
                format!(
                    "; near the target at least {} s",
                    headroom_units::quantity::round_figure(near)
                )
            }
        )
    } else {
        format!(
            "{ladder} ladder; each level: {:.0} s warm-up + {:.0} s measured",
            setup.warmup_s, setup.measured_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::capacity::ApdexGoal;
    use std::path::PathBuf;
    use std::time::Duration;

    /// A level of `users` at 1 s mean response, `rps`, with the think its
    /// users took when `think_s` is given.
    fn level(users: u32, rps: f64, think_s: Option<f64>) -> Level {
        serde_json::from_value(serde_json::json!({
            "users": users, "good": true, "apdex": 1.0, "apdex_rating": "Excellent",
            "samples": 500, "error_rate": 0.0, "mean_ms": 1000.0, "p50_ms": 1000.0,
            "p90_ms": 1000.0, "p95_ms": 1000.0, "rps": rps, "measured_s": 60.0,
            "resources": [], "generator_limited": false, "bundle": "level",
            "think_s": think_s, "min_samples": 100
        }))
        .unwrap()
    }

    fn page(level: Level) -> (CapacityResult, String) {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let result = headroom_capacity::answer::answer(
            target,
            vec![level],
            Some(100),
            true,
            Duration::from_secs(9),
            false,
            PathBuf::new(),
        );
        let html = render_capacity_report(&result);
        (result, html)
    }

    /// The knee's judged resources are a section of their own: the named
    /// limit's sentence, and a row per resource with its evidence; and a
    /// chart of their utilization against users.
    #[test]
    fn what_limits_it_has_a_row_per_resource_at_the_knee() {
        let target = ApdexGoal {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let met = level(20, 18.0, Some(1.0));
        let mut knee = level(25, 19.8, Some(1.0));
        knee.good = false;
        knee.apdex = Some(0.5);
        knee.limits = vec![serde_json::from_value(serde_json::json!({
            "kind": "pool", "resource": "php-fpm8.2's pool www", "host": "local",
            "utilization_pct": 100.0, "saturated": true, "waiting": 3.0,
            "evidence": "its 2 workers were busy 100% of the measured time",
            "change": "Raise pm.max_children (now 2)", "severity": 1.2
        }))
        .unwrap()];
        let result = headroom_capacity::answer::answer(
            target,
            vec![met, knee],
            Some(20),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        let html = render_capacity_report(&result);
        assert!(html.contains("<h2>What limits it</h2>\n<p>php-fpm8.2&#39;s pool www: its 2 workers were busy 100% of the measured time. Raise pm.max_children (now 2)</p>"), "{html}");
        assert!(html.contains("<th class=\"wrap\">At the knee (25 users)</th>"));
        assert!(html.contains("<td>100</td><td>3.0 requests queued</td><td><b>yes</b></td>"));
        assert!(html.contains("The server&apos;s own resources against users"));
        // Without judged resources (no --process) the section says why.
        let (_, plain) = page(level(100, 50.0, Some(1.0)));
        assert!(!plain.contains("<table class=\"limits\">"));
    }

    /// The page judged Little's law at 10% while the answer's validity
    /// uses 20%: a valid search 15% apart read "Valid: ... Little's law
    /// finds the users in their steady cycle" and "More than 10% apart:
    /// ... the level was not steady" on one page. And under --throughput
    /// (no think measured) it blamed the level for the cap's waits.
    /// A scenario whose if: step (20 s think) was never taken: the header
    /// said "think time: 7.333 s mean per request of a steady iteration"
    /// while its users took 1.000 s (Little's law's line below): the page
    /// says both.
    #[test]
    fn the_header_says_the_think_the_users_took() {
        let mut result = page(level(100, 8.5, Some(1.0))).0;
        result.setup.think = "7.333 s planned per request".into();
        let html = render_capacity_report(&result);
        assert!(
            html.contains("think time: 7.333 s planned per request; the users at the capacity took 1.000 s per request"),
            "{html}"
        );
    }

    #[test]
    fn littles_law_is_said_by_the_rule_that_judges_the_answer() {
        // 100 users, 10 s cycle: 8.5 req/s is 85 users busy, 15% apart.
        let (result, html) = page(level(100, 8.5, Some(9.0)));
        assert!(result.valid, "{:?}", result.invalid);
        assert!(html.contains("They agree within 20%"), "{html}");
        assert!(!html.contains("not steady"), "{html}");
        // 7 req/s: 70 users busy, 30% apart: not valid, and said so.
        let (result, html) = page(level(100, 7.0, Some(9.0)));
        assert!(!result.valid);
        assert!(html.contains("More than 20% apart: the level was not steady"));
        // Without the think measured (a throughput cap), no verdict on the level.
        let (result, html) = page(level(100, 7.0, None));
        assert!(result.valid, "{:?}", result.invalid);
        assert!(
            html.contains("with the planned think time")
                && html.contains("--throughput")
                && !html.contains("the level was not steady"),
            "{html}"
        );
    }

    /// The levels table names the machine's CPU and, with --process, the
    /// server processes' own CPU beside it.
    #[test]
    fn the_levels_table_has_the_machine_and_the_server_cpu() {
        let mut l = level(100, 8.5, Some(9.0));
        l.resources = vec![serde_json::from_value(serde_json::json!({
            "host": "local", "cpu_avg": 53.0, "cpu_peak": 60.0, "memory_avg": 40.0,
            "disk_avg": 1.0, "net_link_avg": null, "temperature_max": null,
            "throttled_seconds": 0, "busiest_core": null,
            "processes": [["php-fpm", 30.4], ["nginx", 4.2]]
        }))
        .unwrap()];
        let mut result = page(l).0;
        result.setup.processes = vec!["php-fpm".into(), "nginx".into()];
        let html = render_capacity_report(&result);
        assert!(
            html.contains(
                "Machine CPU (%)</th><th>Server CPU (php-fpm, nginx) (% of the host)</th>"
            ),
            "{html}"
        );
        assert!(html.contains("<td>53%</td><td>35%</td>"), "{html}");
    }

    /// "1–1 s warm-up" was said of a warm-up of 1 s.
    #[test]
    fn the_level_timing_says_one_figure_for_equal_ends() {
        let mut result = page(level(100, 8.5, Some(9.0))).0;
        result.setup.early_stop = true;
        result.setup.ladder = "aimed".into();
        (result.setup.warmup_min_s, result.setup.warmup_s) = (1.0, 1.0);
        (result.setup.min_measured_s, result.setup.measured_s) = (5.0, 5.0);
        result.setup.near_min_measured_s = 5.0;
        let html = render_capacity_report(&result);
        assert!(
            html.contains("aimed ladder; each level: 1 s warm-up (until steady) + 5 s measured (until its verdict settles)"),
            "{html}"
        );
        (result.setup.warmup_s, result.setup.measured_s) = (3.0, 20.0);
        result.setup.near_min_measured_s = 10.0;
        let html = render_capacity_report(&result);
        assert!(
            html.contains("each level: 1–3 s warm-up (until steady) + 5–20 s measured (until its verdict settles; near the target at least 10 s)"),
            "{html}"
        );
    }

    /// The levels table said "Mean", "p95" and "Errors %" with the unit in
    /// a note below; each header says its unit, and the cells of words
    /// wrap so that the table fits the page.
    #[test]
    fn every_levels_column_says_its_unit() {
        let html = page(level(100, 8.5, Some(9.0))).1;
        for header in [
            "<th>Errors (%)</th>",
            "<th>Mean (ms)</th>",
            "<th>p50 (ms)</th>",
            "<th>p90 (ms)</th>",
            "<th>p95 (ms)</th>",
            "<th>req/s</th>",
            "Machine CPU (%)</th>",
        ] {
            assert!(html.contains(header), "{header}: {html}");
        }
        assert!(html.contains("<td class=\"wrap why\">"), "{html}");
        assert!(
            html.contains("td.wrap,th.wrap{white-space:normal"),
            "{html}"
        );
    }
}
