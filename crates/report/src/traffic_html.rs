//! The page of an access log's model (`headroom scenario from-log --html`):
//! the model in words; sessions begun and pages seen each minute (the
//! peak's minute named); the reading time between pages as the share
//! read within each time, beside the log-normal fitted to it; pages a
//! session; the pages' mix, methods and statuses. No address and no query
//! value: the model holds none.

use crate::charts::{bar_chart, line_chart, ChartSeries, LineChart};
use crate::html::{escape, STYLE};
use headroom_traffic::traffic::model::TrafficModel;
use std::fmt::Write;

const EXTRA_STYLE: &str =
    ".charts{grid-template-columns:repeat(auto-fill,minmax(min(100%,480px),1fr))}\
     td.wrap,th.wrap{white-space:normal;text-align:left}";

/// Points of the reading-time curves.
const CURVE_POINTS: usize = 120;

/// The page, self-contained.
pub fn render_traffic_report(model: &TrafficModel, files: &[String]) -> String {
    let mut html = String::new();
    let names = files.join(", ");
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom: the users of {names}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>The users of {names}</h1>\n<ul class=\"findings\">",
        names = escape(&names)
    );
    for line in model.describe() {
        // The lists under these lines are the tables below.
        if line.starts_with("pages (")
            || line.starts_with("resources the application serves")
            || line.starts_with("  ")
        {
            continue;
        }
        let _ = write!(html, "<li>{}</li>", escape(&line));
    }
    html.push_str("</ul>\n<div class=\"charts\">");
    arrivals(&mut html, model);
    reading(&mut html, model);
    pages_a_session(&mut html, model);
    html.push_str("</div>\n");
    mix(&mut html, model);
    loaded_by_pages(&mut html, model);
    counts(
        &mut html,
        "Methods",
        "method",
        model.methods.iter().map(|(m, n)| (m.clone(), *n)),
        model.requests,
    );
    counts(
        &mut html,
        "Statuses",
        "status",
        model.statuses.iter().map(|(s, n)| (s.to_string(), *n)),
        model.requests,
    );
    html.push_str("</main></body></html>\n");
    html
}

/// Sessions begun and pages seen each minute (in hours past two days).
fn arrivals(html: &mut String, model: &TrafficModel) {
    let minutes = model
        .views_per_minute
        .len()
        .max(model.arrivals_per_minute.len());
    let (scale, unit) = if minutes > 48 * 60 {
        (
            60.0,
            "hours from the first request (each hour's mean minute)",
        )
    } else {
        (1.0, "minutes from the first request")
    };
    // Past two days, a point an hour: the minutes' mean.
    let series = |name: &str, counts: &[u32]| ChartSeries {
        name: name.to_string(),
        points: if scale > 1.0 {
            counts
                .chunks(60)
                .enumerate()
                .map(|(hour, minutes)| {
                    let sum: u64 = minutes.iter().map(|n| u64::from(*n)).sum();
                    (hour as f64, sum as f64 / minutes.len() as f64)
                })
                .collect()
        } else {
            counts
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, f64::from(*n)))
                .collect()
        },
    };
    let title = match model.peak() {
        Some(peak) => format!(
            "Each minute (peak {} UTC: {} pages, {} users reading)",
            peak.minute, peak.pages, peak.users
        ),
        None => "Each minute".to_string(),
    };
    let svg = line_chart(&LineChart {
        title: &title,
        x_label: unit,
        y_label: "a minute",
        x_max: (minutes as f64 / scale).max(1.0),
        y_max: None,
        series: vec![
            series("pages seen", &model.views_per_minute),
            series("sessions begun", &model.arrivals_per_minute),
        ],
        spans: Vec::new(),
        bands: Vec::new(),
    });
    let _ = write!(
        html,
        "<figure>{svg}<figcaption>Pages seen (not resources, not a redirect's answer) and sessions begun, each minute</figcaption></figure>"
    );
}

/// The share of reading times within each time, measured and fitted.
fn reading(html: &mut String, model: &TrafficModel) {
    if model.think_ms.is_empty() {
        return;
    }
    let top = model.think_ms.value_at_quantile(0.95) as f64 / 1000.0;
    let top = top.max(1.0);
    let measured: Vec<(f64, f64)> = (0..=CURVE_POINTS)
        .map(|i| {
            let x = top * i as f64 / CURVE_POINTS as f64;
            let at_most = model.think_ms.count_between(0, (x * 1000.0) as u64);
            (x, 100.0 * at_most as f64 / model.think_ms.len() as f64)
        })
        .collect();
    let (mu, sigma) = (model.think_log_mean, model.think_log_sd.max(1e-9));
    let fitted: Vec<(f64, f64)> = (0..=CURVE_POINTS)
        .map(|i| {
            let x = top * i as f64 / CURVE_POINTS as f64;
            let share = if x <= 0.0 {
                0.0
            } else {
                normal_cdf((x.ln() - mu) / sigma)
            };
            (x, 100.0 * share)
        })
        .collect();
    let svg = line_chart(&LineChart {
        title: "Reading time between a session's pages",
        x_label: "seconds",
        y_label: "% read within",
        x_max: top,
        y_max: Some(100.0),
        series: vec![
            ChartSeries {
                name: "the log".into(),
                points: measured,
            },
            ChartSeries {
                name: format!(
                    "log-normal (median {:.1} s, σ {:.2})",
                    mu.exp(),
                    model.think_log_sd
                ),
                points: fitted,
            },
        ],
        spans: Vec::new(),
        bands: Vec::new(),
    });
    let _ = write!(
        html,
        "<figure>{svg}<figcaption>The share of reading times (of at least 1 s) within each time, up to the 95th percentile, and the log-normal fitted to them</figcaption></figure>"
    );
}

/// Sessions by their pages: 1 to 9, and 10 or more.
fn pages_a_session(html: &mut String, model: &TrafficModel) {
    let p = &model.pages_per_session;
    if p.is_empty() {
        return;
    }
    let total = p.len() as f64;
    let mut labels = Vec::new();
    let mut shares = Vec::new();
    for n in 1..=9u64 {
        labels.push(format!("{n} page{}", if n == 1 { "" } else { "s" }));
        shares.push(100.0 * p.count_between(n, n) as f64 / total);
    }
    labels.push("10 or more".to_string());
    shares.push(100.0 * p.count_between(10, p.max().max(10)) as f64 / total);
    let svg = bar_chart(
        "Pages a session",
        "% of sessions",
        &labels,
        ("% of sessions", &shares),
        None,
    );
    let _ = write!(
        html,
        "<figure>{svg}<figcaption>Sessions by the pages they asked for (mean {:.1})</figcaption></figure>",
        p.mean()
    );
}

/// The pages' mix, most asked first (the first 50).
fn mix(html: &mut String, model: &TrafficModel) {
    html.push_str(
        "<h2>Pages</h2><p>Ids, tokens and query values folded to *. A GET answered 2xx is a page a workload may ask for again; \
         within 1 s: after the session's page before (loaded with a page, or a click too quick to read).</p>\
         <div class=\"scroll\"><table><tr><th class=\"wrap\">Pattern</th><th>Share</th><th>Requests</th><th>GET 2xx</th><th>Within 1 s</th></tr>",
    );
    for page in model.mix.iter().take(50) {
        let _ = write!(
            html,
            "<tr><td class=\"wrap\">{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&page.pattern),
            100.0 * page.count as f64 / model.mix_requests().max(1) as f64,
            page.count,
            page.replayable,
            page.quick
        );
    }
    html.push_str("</table></div>\n");
    if model.mix.len() > 50 {
        let _ = write!(
            html,
            "<p>and {} more patterns (scenario from-log --json lists them all)</p>",
            model.mix.len() - 50
        );
    }
}

/// What pages loaded that is no file (a script's style sheet, an image the
/// application serves, a request a page's script makes), most asked first.
fn loaded_by_pages(html: &mut String, model: &TrafficModel) {
    if model.loaded_by_pages.is_empty() {
        return;
    }
    let loaded: u64 = model.loaded_by_pages.iter().map(|l| l.1).sum();
    let _ = write!(
        html,
        "<h2>Resources the application serves</h2><p>{loaded} of the requests named their session's page as referer within {} s of it (before or after it in the log): not pages, but what pages loaded.</p>",
        headroom_traffic::traffic::model::LOADED_WITHIN_MS / 1000
    );
    counts(
        html,
        "",
        "pattern",
        model.loaded_by_pages.iter().take(50).cloned(),
        model.requests,
    );
    if model.loaded_by_pages.len() > 50 {
        let _ = write!(
            html,
            "<p>and {} more patterns (scenario from-log --json lists them all)</p>",
            model.loaded_by_pages.len() - 50
        );
    }
}

fn counts(
    html: &mut String,
    title: &str,
    what: &str,
    rows: impl Iterator<Item = (String, u64)>,
    total: u64,
) {
    if !title.is_empty() {
        let _ = write!(html, "<h2>{title}</h2>");
    }
    let _ = write!(
        html,
        "<div class=\"scroll\"><table><tr><th>{what}</th><th>Requests</th><th>Share</th></tr>"
    );
    for (name, n) in rows {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{n}</td><td>{:.1}%</td></tr>",
            escape(&name),
            100.0 * n as f64 / total.max(1) as f64
        );
    }
    html.push_str("</table></div>\n");
}

/// The standard normal distribution function (Abramowitz and Stegun
/// 7.1.26: within 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What pages loaded that is no file is listed in a table of its own
    /// (under its line, the list was empty: only the line was kept).
    #[test]
    fn the_resources_the_application_serves_are_listed() {
        use headroom_traffic::traffic::model::{LogFormat, LogSpan, SessionKey, TrafficBuilder};
        let format = LogFormat::parse("combined").unwrap();
        let day = 20_822 * 1440;
        let span = LogSpan {
            first_minute: day,
            last_minute: day + 1439,
        };
        let mut builder = TrafficBuilder::new(SessionKey::ClientAndAgent, 30 * 60_000, span);
        for line in [
            "10.0.0.1 - - [04/Jan/2027:08:00:00 +0000] \"GET /doku.php?id=a HTTP/1.1\" 200 10 \"-\" \"ua\"",
            "10.0.0.1 - - [04/Jan/2027:08:00:01 +0000] \"GET /lib/exe/css.php?t=x HTTP/1.1\" 200 10 \"http://w/doku.php?id=a\" \"ua\"",
        ] {
            builder.add(&format.read(line.as_bytes()).unwrap());
        }
        let html = render_traffic_report(&builder.finish(), &["access.log".to_string()]);
        assert!(
            html.contains("<h2>Resources the application serves</h2>"),
            "{html}"
        );
        assert!(
            html.contains("<td>/lib/exe/css.php?t=*</td><td>1</td>"),
            "{html}"
        );
        assert!(!html.contains("(1 of the requests: each named"), "{html}");
    }

    #[test]
    fn the_normal_distribution_function_is_close() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.0) - 0.841_344_75).abs() < 1e-6);
        assert!((normal_cdf(-1.959_964) - 0.025).abs() < 1e-6);
    }
}
