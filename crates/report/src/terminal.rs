//! The terminal summary: a siege-style block (what admins already read),
//! the Apdex verdict, a per-label table, errors by kind, warnings and the
//! `--fail-if` verdicts.

use crate::json::ReportInput;
use headroom_bundle::summary::{LabelFigures, RunStatus, RunSummary};
use headroom_units::quantity::{Bytes, Readable};
use std::fmt::Write;

fn ms(value: f64) -> Readable {
    Readable(headroom_units::quantity::saturating_secs(value / 1000.0))
}

/// Apdex thresholds as users wrote them: `500ms`, `1500ms`, `0.25ms`.
fn threshold(ms: f64) -> String {
    if ms.fract() == 0.0 {
        format!("{ms}ms")
    } else {
        format!("{ms:.3}ms").trim_end_matches('0').to_string()
    }
}

fn apdex_text(f: &LabelFigures) -> String {
    match (f.apdex, &f.apdex_rating) {
        (Some(a), Some(r)) => format!("{a:.3} {r}"),
        _ => "-".into(),
    }
}

fn thousands(n: u64) -> String {
    headroom_units::quantity::group_thousands(n.min(i64::MAX as u64) as i64)
}

pub fn render_summary(input: &ReportInput<'_>) -> String {
    let s = input.summary;
    let mut out = String::new();
    // The answer to a lesson's question first.
    if let Some(answer) = input
        .arrive_within_s
        .and_then(|within| crate::first_sentence::lesson_run(s, within))
    {
        out.push('\n');
        out.push_str(&crate::first_sentence::indented(&answer));
    }
    siege_block(&mut out, input);
    verdict_lines(&mut out, s);
    label_table(&mut out, input);
    server_timing_lines(&mut out, s);
    phase_lines(&mut out, s);
    if !s.checks.is_empty() {
        check_lines(&mut out, s);
    }
    closing_lines(&mut out, input);
    out
}

/// The target, the run's status, and siege's figures.
fn siege_block(out: &mut String, input: &ReportInput<'_>) {
    let s = input.summary;
    let t = &s.total;
    let status = match input.status {
        RunStatus::Complete => String::new(),
        RunStatus::Interrupted => " (interrupted: figures cover the run until the stop)".into(),
        RunStatus::Aborted => " (aborted)".into(),
        RunStatus::Running => " (unfinished)".into(),
        RunStatus::Died => " (died: figures rebuilt from its files)".into(),
    };
    let _ = writeln!(out, "\nheadroom: {}{status}\n", input.target);
    let availability = if t.count == 0 {
        0.0
    } else {
        100.0 * (t.count - t.errors) as f64 / t.count as f64
    };
    let rows: [(&str, String); 14] = [
        (
            "Transactions",
            format!(
                "{} {}",
                thousands(t.count),
                headroom_units::quantity::noun(
                    usize::try_from(t.count).unwrap_or(2),
                    "hit",
                    "hits"
                )
            ),
        ),
        ("Availability", format!("{availability:.2} %")),
        (
            "Elapsed time",
            format!(
                "{}",
                Readable(headroom_units::quantity::saturating_secs(s.elapsed_s))
            ),
        ),
        ("Data transferred", format!("{}", Bytes(t.bytes_received))),
        ("Response time (mean)", format!("{}", ms(t.mean_ms))),
        ("Response time (σ)", format!("{}", ms(t.stdev_ms))),
        (
            "Peaks",
            t.peaks.map_or("not counted in this bundle".into(), |n| {
                format!("{} above 5 × the mean", thousands(n))
            }),
        ),
        ("Transaction rate", format!("{:.2} trans/s", t.rps)),
        ("Throughput", format!("{:.3} MB/s", s.throughput_mb_s)),
        ("Concurrency", format!("{:.2}", s.concurrency)),
        ("Successful transactions", thousands(t.count - t.errors)),
        ("Failed transactions", thousands(t.errors)),
        ("Longest transaction", format!("{}", ms(t.max_ms))),
        ("Shortest transaction", format!("{}", ms(t.min_ms))),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {:<26}{value}", format!("{name}:"));
        if name == "Transactions" {
            if let Some(wire) = &s.requests {
                let _ = writeln!(out, "  {:<26}{}", "Requests:", wire_line(wire));
            }
        }
    }
}

/// Every request of a run: when it loaded pages (its transactions are
/// pages), or sent requests no transaction stands for (redirects,
/// abandoned ones, probes), what they were; the server's log counts these.
fn wire_line(w: &headroom_bundle::wire::WireCount) -> String {
    let mut line = format!("{} over the wire (", thousands(w.requests));
    let mut parts = Vec::new();
    if w.pages > 0 || w.documents > 0 {
        parts.push(format!(
            "{} {}: {} documents + {} resources",
            thousands(w.pages),
            headroom_units::quantity::noun(usize::try_from(w.pages).unwrap_or(2), "page", "pages"),
            thousands(w.documents),
            thousands(w.resources),
        ));
        if w.plain > 0 {
            parts.push(format!("{} other requests", thousands(w.plain)));
        }
    } else {
        parts.push(format!("{} transactions", thousands(w.plain)));
    }
    parts.extend(unrecorded_parts(&w.unrecorded));
    line.push_str(&parts.join("; "));
    line.push(')');
    line
}

/// The requests no transaction stands for, in words (none when none).
pub fn unrecorded_parts(u: &headroom_bundle::wire::Unrecorded) -> Vec<String> {
    let mut parts = Vec::new();
    let mut say = |n: u64, one: &str, many: &str| {
        if n > 0 {
            parts.push(format!(
                "{} {}",
                thousands(n),
                if n == 1 { one } else { many }
            ));
        }
    };
    say(u.redirects, "redirect followed", "redirects followed");
    say(
        u.abandoned,
        "abandoned unanswered at the end",
        "abandoned unanswered at the end",
    );
    say(
        u.late,
        "answered after the end (not in the figures)",
        "answered after the end (not in the figures)",
    );
    say(u.probes, "probe before the run", "probes before the run");
    parts
}

/// Apdex, the monitored hosts, errors by kind and resent requests.
fn verdict_lines(out: &mut String, s: &RunSummary) {
    let t = &s.total;
    let _ = writeln!(
        out,
        "\n  Apdex (T = {}, F = {}): {}",
        threshold(s.apdex_t_ms),
        threshold(s.apdex_f_ms),
        match (t.apdex, &t.apdex_rating) {
            (Some(a), Some(r)) => format!(
                "{a:.3} {r}  ({} satisfied, {} tolerating, {} frustrated)",
                t.apdex_satisfied, t.apdex_tolerating, t.apdex_frustrated
            ),
            _ => "no samples".into(),
        }
    );
    for host in &s.resources {
        let _ = writeln!(out, "  {}", host_line(host));
        for limit in host.limits.iter().filter(|l| l.saturated) {
            let _ = writeln!(out, "    Saturated: {}", limit.describe());
        }
    }
    if !t.errors_by_kind.is_empty() {
        let kinds: Vec<String> = t
            .errors_by_kind
            .iter()
            .map(|(k, n)| match t.error_details.get(k) {
                Some(why) => format!("{k} {n} ({why})"),
                // Which checks failed, by name.
                None if k == "check" && s.checks.values().any(|c| c.failures > 0) => {
                    format!("{k} {n} ({})", crate::checks::failed_anywhere(&s.checks))
                }
                None => format!("{k} {n}"),
            })
            .collect();
        let _ = writeln!(out, "  Errors by kind: {}", kinds.join(", "));
    }

    if let Some(line) = tls_line(t) {
        let _ = writeln!(out, "  {line}");
    }
    if t.resent > 0 {
        let _ = writeln!(
            out,
            "  Resent: {} again on a new connection: the server closed kept-alive \
             connections before answering them (as browsers do, they are not failures)",
            headroom_units::quantity::count(
                usize::try_from(t.resent).unwrap_or(usize::MAX),
                "request went",
                "requests went"
            )
        );
    }
}

/// A lesson run's arrival and reading phases, one line each.
fn phase_lines(out: &mut String, s: &RunSummary) {
    if s.phases.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n  Phases (arrival: until arrive_within plus one mean think time, in whole seconds):"
    );
    for phase in &s.phases {
        let f = &phase.figures;
        let p95 = if f.count == 0 {
            "-".to_string()
        } else {
            ms(f.p95_ms).to_string()
        };
        let _ = writeln!(
            out,
            "  {:<8} {:>5}–{:<5} {} arrived, {} requests, {} errors ({:.1}%), p95 {p95}, Apdex {}",
            phase.name,
            format!("{}s", phase.from_s),
            format!("{}s", phase.to_s),
            thousands(phase.arrivals),
            thousands(f.count),
            thousands(f.errors),
            f.error_rate * 100.0,
            apdex_text(f),
        );
    }
}

/// The per-label table in the scenario's order, with a TOTAL row when
/// there is more than one label.
fn label_table(out: &mut String, input: &ReportInput<'_>) {
    let s = input.summary;
    let t = &s.total;
    let header = [
        "label", "count", "errors", "mean", "p50", "p90", "p95", "p99", "max", "req/s", "Apdex",
    ];
    let mut table: Vec<[String; 11]> = Vec::new();
    let row = |label: &str, f: &LabelFigures| -> [String; 11] {
        // A label without samples (a step no user reached) has no times:
        // "-", not "0µs".
        let time = |v: f64| {
            if f.count == 0 {
                "-".to_string()
            } else {
                ms(v).to_string()
            }
        };
        [
            label.to_string(),
            thousands(f.count),
            format!("{} ({:.1}%)", f.errors, f.error_rate * 100.0),
            time(f.mean_ms),
            time(f.p50_ms),
            time(f.p90_ms),
            time(f.p95_ms),
            time(f.p99_ms),
            time(f.max_ms),
            format!("{:.1}", f.rps),
            apdex_text(f),
        ]
    };
    let ordered = input
        .label_order
        .iter()
        .filter_map(|l| s.labels.get_key_value(l));
    let rest = s
        .labels
        .iter()
        .filter(|(l, _)| !input.label_order.contains(l));
    for (label, figures) in ordered.chain(rest) {
        table.push(row(label, figures));
    }
    if s.labels.len() != 1 {
        table.push(row("TOTAL", t));
    }
    let mut widths = header.map(str::len);
    for r in &table {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    out.push('\n');
    let mut line = |cells: &[String]| {
        let mut text = String::from("  ");
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 0 || i == cells.len() - 1 {
                let _ = write!(text, "{cell:<w$}  ");
            } else {
                let _ = write!(text, "{cell:>w$}  ");
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(&header.map(String::from));
    for r in &table {
        line(r);
    }
}

/// Where each label's time went by the server's own account (its
/// Server-Timing header), beside the time its client waited.
fn server_timing_lines(out: &mut String, s: &RunSummary) {
    let timed = s.server_timed_labels();
    if timed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n  The server's own account (Server-Timing), mean of the responses that gave it:"
    );
    for (label, f) in timed {
        let metrics: Vec<String> = f
            .server_timing
            .iter()
            .map(|m| format!("{} {}", m.name, ms(m.mean_ms)))
            .collect();
        let _ = writeln!(
            out,
            "    {label}: {}; its client waited {} on average ({} of {} responses timed)",
            metrics.join(", "),
            ms(f.mean_ms),
            thousands(f.server_timed),
            thousands(f.count)
        );
    }
}

/// Each check's outcome and the steps it ran in.
fn check_lines(out: &mut String, s: &RunSummary) {
    out.push_str("\n  Checks:\n");
    let width = s
        .checks
        .keys()
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(0)
        // A long name (a whole sentence to find) does not push every
        // other line's figures off the screen.
        .min(40);
    for (name, c) in &s.checks {
        let mark = if c.never_ran() {
            "--  "
        } else if c.failures == 0 {
            "ok  "
        } else {
            "FAIL"
        };
        let steps = if c.labels.is_empty() {
            String::new()
        } else {
            format!(
                "  ({} {})",
                headroom_units::quantity::noun(c.labels.len(), "step", "steps"),
                c.labels.join(", ")
            )
        };
        let _ = writeln!(
            out,
            "    {mark} {name:<width$}  {}{steps}",
            crate::checks::outcome(c)
        );
    }
}

/// Warnings, `--fail-if` verdicts and where the bundle is.
fn closing_lines(out: &mut String, input: &ReportInput<'_>) {
    if !input.warnings.is_empty() {
        out.push('\n');
        for w in input.warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
    }
    if !input.verdicts.is_empty() {
        out.push('\n');
        for v in input.verdicts {
            let _ = writeln!(out, "  --fail-if {}", v.message);
        }
    }
    let _ = writeln!(out, "\n  Bundle: {}", input.bundle.display());
}

/// One line per monitored host: averages and peaks of what limits servers.
pub fn host_line(h: &headroom_bundle::resources::HostSummary) -> String {
    if h.no_data() {
        return format!(
            "Host {}: no data ({})",
            h.host,
            h.problem.as_deref().unwrap_or("no sample was taken")
        );
    }
    let mut parts = vec![
        format!("CPU {:.0}% (peak {:.0}%)", h.cpu_pct.avg, h.cpu_pct.peak),
        format!(
            "memory {:.0}% (peak {:.0}%)",
            h.memory_used_pct.avg, h.memory_used_pct.peak
        ),
        format!(
            "disk {:.0}% busy (peak {:.0}%)",
            h.disk_util_pct.avg, h.disk_util_pct.peak
        ),
        match h.network_link_pct {
            Some(link) => format!(
                "network {:.1} Mbit/s (peak {:.0}% of link)",
                h.network_mbit_s.avg, link.peak
            ),
            None => format!(
                "network {:.1} Mbit/s (peak {:.1})",
                h.network_mbit_s.avg, h.network_mbit_s.peak
            ),
        },
    ];
    if h.swap_used_mb.peak > 0.0 {
        parts.push(format!("swap {:.0} MB", h.swap_used_mb.peak));
    }
    if let Some(t) = h.temperature_max_c {
        parts.push(format!("max {t:.0} °C"));
    }
    for (name, p) in &h.processes {
        parts.push(process_part(name, p, h.memory_available_mb_least));
    }
    if let (Some(i), Some(c)) = (h.interrupts_s, h.context_switches_s) {
        parts.push(format!(
            "{:.0} interrupts/s and {:.0} context switches/s (peaks {:.0}, {:.0})",
            i.avg, c.avg, i.peak, c.peak
        ));
    }
    if h.link_down_seconds > 0 {
        parts.push(format!("a network link down for {} s", h.link_down_seconds));
    }
    if h.gap_seconds > 0 {
        parts.push(format!(
            "no data for {} s ({})",
            h.gap_seconds,
            h.problem.as_deref().unwrap_or("the agent did not answer")
        ));
    }
    format!("Host {}: {}", h.host, parts.join(", "))
}

/// "php-fpm 35% CPU, 180 MB in 6 processes (30.0 MB each; 61 more fit in
/// the 1,850 MB available)": the count and the fit where the run kept them.
fn process_part(
    name: &str,
    p: &headroom_bundle::resources::ProcessSummary,
    available_mb: Option<f64>,
) -> String {
    let mut text = format!("{name} {:.0}% CPU, {:.0} MB", p.cpu_pct.avg, p.rss_mb_peak);
    if let (Some(each), true) = (p.rss_mb_each, p.count_peak > 0) {
        let plural = if p.count_peak == 1 { "" } else { "es" };
        text.push_str(&format!(
            " in {} process{plural} ({each:.1} MB each",
            p.count_peak
        ));
        if let Some((more, available)) = available_mb.and_then(|a| Some((p.more_that_fit(a)?, a))) {
            text.push_str(&format!(
                "; {more} more fit in the {available:.0} MB available"
            ));
        }
        text.push(')');
    }
    text
}

/// "TLS handshakes: 2086 (4 full, 2082 resumed), 1.82ms on average (part of
/// the connect time)"; None for a run without TLS.
pub(crate) fn tls_line(t: &LabelFigures) -> Option<String> {
    (t.tls_handshakes > 0).then(|| {
        format!(
            "TLS handshakes: {} ({} full, {} resumed), {} on average (part of the connect time)",
            t.tls_handshakes,
            t.tls_handshakes - t.tls_resumed,
            t.tls_resumed,
            ms(t.tls_mean_ms)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::process_part;
    use headroom_bundle::resources::{ProcessSummary, Spread};

    #[test]
    fn a_process_line_says_how_many_more_fit_in_memory() {
        let p = ProcessSummary {
            cpu_pct: Spread {
                avg: 35.0,
                peak: 80.0,
            },
            rss_mb_peak: 60.0,
            count_peak: 5,
            rss_mb_each: Some(11.0),
        };
        assert_eq!(
            process_part("php-fpm", &p, Some(850.0)),
            "php-fpm 35% CPU, 60 MB in 5 processes (11.0 MB each; 77 more fit in the 850 MB available)"
        );
        // An agent that kept no available memory: the size alone.
        assert_eq!(
            process_part("php-fpm", &p, None),
            "php-fpm 35% CPU, 60 MB in 5 processes (11.0 MB each)"
        );
        // A run from before counts were kept: as it was printed then.
        let old = ProcessSummary {
            count_peak: 0,
            rss_mb_each: None,
            ..p
        };
        assert_eq!(
            process_part("nginx", &old, Some(850.0)),
            "nginx 35% CPU, 60 MB"
        );
        let one = ProcessSummary {
            count_peak: 1,
            rss_mb_each: Some(60.0),
            ..p
        };
        assert!(process_part("mariadbd", &one, Some(30.0))
            .contains("in 1 process (60.0 MB each; 0 more fit"));
    }
}
