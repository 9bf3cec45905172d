//! The report of a capacity search: the verdict, the capacity curves
//! (Apdex over the rating bands, response times, throughput and resources
//! against users) and the per-level table.

use crate::charts::{apdex_bands, line_chart, LineChart, Series};
use crate::html::{escape, STYLE};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One level's resource averages on a host: users, CPU, memory, disk.
type HostPoint = (f64, Option<f64>, Option<f64>, Option<f64>);

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn curve(name: &str, levels: &[&Value], key: &str) -> Series {
    Series {
        name: name.into(),
        points: levels
            .iter()
            .filter_map(|l| Some((num(l, "users")?, num(l, key)?)))
            .collect(),
    }
}

/// `result` is capacity.json; `verdict` the line the search printed.
pub fn render_capacity_report(result: &Value, verdict: &str) -> String {
    let mut levels: Vec<&Value> = result
        .get("levels")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    levels.sort_by(|a, b| {
        num(a, "users")
            .unwrap_or(0.0)
            .total_cmp(&num(b, "users").unwrap_or(0.0))
    });
    let x_max = levels
        .iter()
        .filter_map(|l| num(l, "users"))
        .fold(1.0f64, f64::max)
        * 1.05;
    let target = result
        .pointer("/target/apdex")
        .and_then(Value::as_f64)
        .unwrap_or(0.7);
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom capacity</title><style>{STYLE}</style></head><body><main>\n\
         <h1>headroom capacity</h1><p class=\"verdict\">{}</p>\n",
        escape(verdict)
    );
    let valid = result.get("valid").and_then(Value::as_bool).unwrap_or(true);
    let interrupted = result.get("status").and_then(Value::as_str) == Some("interrupted");
    if interrupted {
        html.push_str("<p class=\"verdict\" style=\"border-color:#d50000\"><b>Interrupted:</b> the search was stopped before it could decide; the levels below were measured, and no capacity is claimed.</p>\n");
    } else if !valid {
        html.push_str("<p class=\"verdict\" style=\"border-color:#d50000\"><b>Invalid:</b> the load generator was the limit at a deciding level; the figures are not the server's.</p>\n");
    }
    let bands = apdex_bands();
    html.push_str("<h2>Capacity curve</h2><div class=\"charts\">\n");
    let mut target_line = curve("target", &levels, "users");
    target_line.points = vec![(0.0, target), (x_max, target)];
    let charts = [
        (
            LineChart {
                title: "Apdex against users",
                x_label: "users",
                y_label: "Apdex",
                x_max,
                y_max: Some(1.0),
                series: vec![curve("Apdex", &levels, "apdex"), target_line],
                spans: vec![],
                bands,
            },
            "Each level's measured Apdex over the rating bands, and the target.",
        ),
        (
            LineChart {
                title: "Response time against users",
                x_label: "users",
                y_label: "ms",
                x_max,
                y_max: None,
                series: vec![
                    curve("mean", &levels, "mean_ms"),
                    curve("p90", &levels, "p90_ms"),
                    curve("p95", &levels, "p95_ms"),
                ],
                spans: vec![],
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
                series: vec![curve("requests/s", &levels, "rps")],
                spans: vec![],
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
    // Resources against users, per host.
    let mut hosts: BTreeMap<String, Vec<HostPoint>> = BTreeMap::new();
    for level in &levels {
        let users = num(level, "users").unwrap_or(0.0);
        for host in level
            .get("resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = host
                .get("host")
                .and_then(Value::as_str)
                .unwrap_or("host")
                .to_string();
            hosts.entry(name).or_default().push((
                users,
                num(host, "cpu_avg"),
                num(host, "memory_avg"),
                num(host, "disk_avg"),
            ));
        }
    }
    for (host, rows) in &hosts {
        let series = |name: &str, pick: fn(&HostPoint) -> Option<f64>| Series {
            name: name.into(),
            points: rows
                .iter()
                .filter_map(|r| pick(r).map(|v| (r.0, v)))
                .collect(),
        };
        let title = format!("Resources of {host} against users");
        let chart = LineChart {
            title: &title,
            x_label: "users",
            y_label: "%",
            x_max,
            y_max: Some(100.0),
            series: vec![
                series("CPU %", |r| r.1),
                series("memory %", |r| r.2),
                series("disk %util", |r| r.3),
            ],
            spans: vec![],
            bands: vec![],
        };
        let _ = writeln!(
            html,
            "<figure>{}<figcaption>Averages over each level's measurement.</figcaption></figure>",
            line_chart(&chart)
        );
    }
    html.push_str("</div>\n<h2>Levels</h2><div class=\"scroll\"><table><tr><th>Users</th><th>Apdex</th><th>Errors %</th><th>Mean</th><th>p50</th><th>p90</th><th>p95</th><th>Requests/s</th><th>Target</th><th>Bundle</th></tr>\n");
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    for level in &levels {
        let rating = level
            .get("apdex_rating")
            .and_then(Value::as_str)
            .unwrap_or("");
        let good = level.get("good").and_then(Value::as_bool).unwrap_or(false);
        let limited = level
            .get("generator_limited")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"{rating}\">{} {rating}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}{}</td><td>{}</td></tr>",
            num(level, "users").unwrap_or(0.0),
            num(level, "apdex").map_or("-".into(), |a| format!("{a:.3}")),
            num(level, "error_rate").unwrap_or(0.0) * 100.0,
            ms(num(level, "mean_ms")),
            ms(num(level, "p50_ms")),
            ms(num(level, "p90_ms")),
            ms(num(level, "p95_ms")),
            num(level, "rps").unwrap_or(0.0),
            if good { "met" } else { "broken" },
            if limited { " (generator limited)" } else { "" },
            escape(level.get("bundle").and_then(Value::as_str).unwrap_or("")),
        );
    }
    html.push_str("</table></div>\n<p class=\"meta\">Times in ms. Each level is an ordinary bundle: `headroom report` and `headroom compare` read them.</p>\n</main></body></html>\n");
    html
}
