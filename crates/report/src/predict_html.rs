//! The page of a prediction (`headroom predict --html`): the model in
//! words; the measured levels beside the model of the measured host
//! (response time and throughput against users) and each level's error;
//! then every host's predicted Apdex and throughput against users, its
//! answer, and what its scaling assumed.

use crate::charts::{apdex_bands, line_chart, ChartSeries, LineChart, Span};
use crate::html::{escape, STYLE};
use headroom_analysis::prediction::{Predicted, CALM};
use headroom_capacity::predict::{Fit, MeasuredServer, Prediction};
use plotters::style::RGBColor;
use std::fmt::Write;

const EXTRA_STYLE: &str = "td.wrap,th.wrap{white-space:normal;text-align:left}";

/// At most this many points of a model's curve are drawn.
const DRAWN: usize = 300;

/// A host predicted for: its name, the answer in words, its scaling's
/// notes and the model's curve.
pub struct HostCurve<'a> {
    pub name: &'a str,
    pub answer: &'a str,
    pub notes: &'a [String],
    pub prediction: &'a Prediction,
}

/// The page, self-contained. `cautions`: what the prediction cannot know
/// from this search (shown first, marked); `findings`: the model in words
/// (what a user is, the server, a request's demands, the model's answer
/// for the measured host).
pub fn render_prediction_report(
    server: &MeasuredServer,
    fits: &[Fit],
    itself: &Prediction,
    cautions: &[String],
    findings: &[String],
    hosts: &[HostCurve<'_>],
) -> String {
    let mut html = String::new();
    let search = server.dir.display().to_string();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>headroom: other hosts, from {s}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><main>\n\
         <h1>Other hosts, predicted from {s}</h1>\n",
        s = escape(&search)
    );
    if !cautions.is_empty() {
        html.push_str(
            "<p class=\"status-died\">What this prediction cannot know from the search:</p><ul class=\"status-died\">",
        );
        for line in cautions {
            let _ = write!(html, "<li>{}</li>", escape(line));
        }
        html.push_str("</ul>\n");
    }
    html.push_str("<ul class=\"findings\">");
    for line in findings {
        let _ = write!(html, "<li>{}</li>", escape(line.trim()));
    }
    html.push_str("</ul>\n");
    the_measured_host(&mut html, server, fits, itself);
    if !hosts.is_empty() {
        other_hosts(&mut html, server, hosts);
    }
    html.push_str("</main></body></html>\n");
    html
}

/// Every `step`th point of a curve of 1..=n users (at most [`DRAWN`]),
/// and its last.
fn thinned<T>(points: &[T], upto: usize, value: impl Fn(&T) -> (f64, f64)) -> Vec<(f64, f64)> {
    let shown = &points[..upto.min(points.len())];
    let step = shown.len().div_ceil(DRAWN).max(1);
    let mut out: Vec<(f64, f64)> = shown.iter().step_by(step).map(&value).collect();
    if let Some(last) = shown.last() {
        if !(shown.len() - 1).is_multiple_of(step) {
            out.push(value(last));
        }
    }
    out
}

fn figure(html: &mut String, chart: &LineChart<'_>, caption: &str) {
    let _ = writeln!(
        html,
        "<figure>{}<figcaption>{}</figcaption></figure>",
        line_chart(chart),
        escape(caption)
    );
}

/// The levels' figure (`measured`) beside the model's (`model`) to
/// `upto` users.
fn beside(
    fits: &[&Fit],
    itself: &Prediction,
    upto: usize,
    measured: fn(&Fit) -> f64,
    model: fn(&Predicted) -> f64,
) -> Vec<ChartSeries> {
    vec![
        ChartSeries {
            name: "measured (the levels)".into(),
            points: fits
                .iter()
                .map(|f| (f64::from(f.users), measured(f)))
                .collect(),
        },
        ChartSeries {
            name: "model".into(),
            points: thinned(&itself.curve, upto, |p| (f64::from(p.users), model(p))),
        },
    ]
}

/// Each host's predicted `value` to `upto` users.
fn per_host(
    hosts: &[HostCurve<'_>],
    upto: usize,
    value: fn(&Predicted) -> f64,
) -> Vec<ChartSeries> {
    hosts
        .iter()
        .map(|h| ChartSeries {
            name: h.name.to_string(),
            points: thinned(&h.prediction.curve, upto, |p| {
                (f64::from(p.users), value(p))
            }),
        })
        .collect()
}

fn the_measured_host(
    html: &mut String,
    server: &MeasuredServer,
    fits: &[Fit],
    itself: &Prediction,
) {
    let unit = &server.rate_unit;
    let widest = fits.iter().map(|f| f.users).max().unwrap_or(1);
    let x_max = f64::from(widest) * 1.05;
    let upto = (x_max.ceil() as usize).max(1);
    let _ = write!(
        html,
        "<h2>The model against the levels measured</h2>\
         <p>Each level of the search beside the model of the host it ran on (with the search's \
         users, think time and server): where they part, the model misses something this host \
         did.</p>\n<div class=\"charts\">"
    );
    let all: Vec<&Fit> = fits.iter().collect();
    let users = server.users_are.as_str();
    figure(
        html,
        &LineChart {
            title: &format!("Mean response time against {users}"),
            x_label: users,
            y_label: "ms",
            x_max,
            y_max: None,
            series: beside(&all, itself, upto, response_ms, model_ms),
            spans: Vec::new(),
            bands: Vec::new(),
        },
        "The levels' mean response time, joined in order of users, and the model's for every number of users.",
    );
    below_the_knee(html, server, fits, itself, widest);
    figure(
        html,
        &LineChart {
            title: &format!("Throughput against {users}"),
            x_label: users,
            y_label: unit,
            x_max,
            y_max: None,
            series: beside(
                &all,
                itself,
                upto,
                |f| f.measured_throughput,
                |p| p.throughput,
            ),
            spans: Vec::new(),
            bands: Vec::new(),
        },
        "It flattens where the model's CPU (or disk, or pool) is full.",
    );
    html.push_str("</div>\n");
    fit_table(html, server, fits);
}

/// Response times below the knee: to the last level whose server used
/// less of its CPU than the model's fit of the queueing counts as calm,
/// when there is one below the widest level.
fn below_the_knee(
    html: &mut String,
    server: &MeasuredServer,
    fits: &[Fit],
    itself: &Prediction,
    widest: u32,
) {
    let users = server.users_are.as_str();
    let calm = server
        .levels
        .iter()
        .filter(|l| l.cpu_busy < CALM * server.server_cpus)
        .map(|l| l.users)
        .max();
    if let Some(calm) = calm.filter(|&c| c < widest) {
        let below: Vec<&Fit> = fits.iter().filter(|f| f.users <= calm).collect();
        let x_calm = f64::from(calm) * 1.05;
        figure(
            html,
            &LineChart {
                title: "Mean response time below the knee",
                x_label: users,
                y_label: "ms",
                x_max: x_calm,
                y_max: None,
                series: beside(
                    &below,
                    itself,
                    x_calm.ceil() as usize,
                    response_ms,
                    model_ms,
                ),
                spans: Vec::new(),
                bands: Vec::new(),
            },
            &format!(
                "The same, to the last level whose server used less than {:.0}% of its CPU.",
                100.0 * CALM
            ),
        );
    }
}

/// Each level's response time and throughput, measured and modelled.
fn fit_table(html: &mut String, server: &MeasuredServer, fits: &[Fit]) {
    let unit = &server.rate_unit;
    let users = server.users_are.as_str();
    let _ = write!(
        html,
        "<table><thead><tr><th>{}</th><th>measured</th><th>model</th><th>error</th>",
        escape(users)
    );
    let _ = write!(
        html,
        "<th>measured {u}</th><th>model {u}</th></tr></thead><tbody>",
        u = escape(unit)
    );
    for f in fits {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{:.1} ms</td><td>{:.1} ms</td><td>{:+.1}%</td><td>{:.1}</td><td>{:.1}</td></tr>",
            f.users,
            f.measured_s * 1000.0,
            f.model_s * 1000.0,
            100.0 * (f.model_s / f.measured_s - 1.0),
            f.measured_throughput,
            f.model_throughput
        );
    }
    html.push_str("</tbody></table>\n");
}

/// A level's mean response time, ms.
fn response_ms(f: &Fit) -> f64 {
    f.measured_s * 1000.0
}

/// The model's mean response time, ms.
fn model_ms(p: &Predicted) -> f64 {
    p.response_s * 1000.0
}

fn other_hosts(html: &mut String, server: &MeasuredServer, hosts: &[HostCurve<'_>]) {
    let unit = &server.rate_unit;
    // Each host's curve to twice its answer, the widest setting the axis.
    let reach = |h: &HostCurve<'_>| {
        (h.prediction.users.unwrap_or(1) as usize * 2)
            .max(2)
            .min(h.prediction.curve.len())
    };
    let widest = hosts.iter().map(reach).max().unwrap_or(1);
    let x_max = widest as f64;
    let mut apdex = per_host(hosts, widest, |p| p.apdex);
    apdex.push(ChartSeries {
        name: "target".into(),
        points: vec![(0.0, server.goal.apdex), (x_max, server.goal.apdex)],
    });
    let rates = per_host(hosts, widest, |p| p.throughput);
    let answers: Vec<Span> = hosts
        .iter()
        .filter_map(|h| h.prediction.users)
        .map(|n| Span {
            from: f64::from(n),
            to: f64::from(n) + x_max / 150.0,
            color: RGBColor(90, 90, 90),
        })
        .collect();
    html.push_str("<h2>Other hosts</h2>\n<ul class=\"findings\">");
    for h in hosts {
        let _ = write!(html, "<li>{}", escape(h.answer));
        if !h.notes.is_empty() {
            html.push_str("<ul>");
            for note in h.notes {
                let _ = write!(html, "<li>{}</li>", escape(note));
            }
            html.push_str("</ul>");
        }
        html.push_str("</li>");
    }
    html.push_str("</ul>\n<div class=\"charts\">");
    figure(
        html,
        &LineChart {
            title: &format!("Predicted Apdex against {}", server.users_are),
            x_label: &server.users_are,
            y_label: "Apdex",
            x_max,
            y_max: Some(1.0),
            series: apdex,
            spans: answers.clone(),
            bands: apdex_bands(),
        },
        "Each host's Apdex as the model predicts it, and the target: its answer (the grey mark) is the most users before the first to fall below.",
    );
    figure(
        html,
        &LineChart {
            title: &format!("Predicted throughput against {}", server.users_are),
            x_label: &server.users_are,
            y_label: unit,
            x_max,
            y_max: None,
            series: rates,
            spans: answers,
            bands: Vec::new(),
        },
        "Each host's throughput: it flattens where its busiest station (the CPU, the disk or the pool) is full.",
    );
    html.push_str("</div>\n");
}
