//! A bench bundle in the terminal, and two bench bundles compared: each
//! figure's mean, 95% interval and CoV over the repetitions; a comparison
//! says better, worse or noise by Welch's t, and says when the two were
//! measured with different settings.

use headroom_analysis::experiment::{difference, Summary};
use headroom_bundle::bench::{BenchBundle, BenchResult, Measure};
use std::fmt::Write;

pub use headroom_units::quantity::figure;

/// "±12.3" (half the 95% interval) or "" for one value.
pub fn half_interval(s: &Summary) -> String {
    s.ci95
        .map(|(lo, hi)| format!("±{}", figure((hi - lo) / 2.0)))
        .unwrap_or_default()
}

pub fn cov(s: &Summary) -> String {
    s.cov
        .map(|c| format!("{:.1}%", c * 100.0))
        .unwrap_or_default()
}

fn host_line(b: &BenchBundle) -> String {
    let f = &b.fingerprint;
    format!(
        "{} ({}, {}, {} MB, {})",
        if f.hostname.is_empty() {
            "this host"
        } else {
            &f.hostname
        },
        if f.cpu_model.is_empty() {
            "CPU unknown"
        } else {
            &f.cpu_model
        },
        headroom_units::quantity::count(f.cores, "core", "cores"),
        f.memory_mb,
        f.kernel
    )
}

fn result_table(out: &mut String, r: &BenchResult) {
    let width = r
        .measures
        .iter()
        .map(|m| m.name.chars().count())
        .max()
        .unwrap_or(10)
        .max(6);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>12}  {:>10}  {:>6}  {:>2}  unit",
        "figure", "mean", "95% ±", "CoV", "n"
    );
    for m in &r.measures {
        let Some(s) = Summary::of(&m.values) else {
            continue;
        };
        let _ = writeln!(
            out,
            "  {:<width$}  {:>12}  {:>10}  {:>6}  {:>2}  {}",
            m.name,
            figure(s.mean),
            half_interval(&s),
            cov(&s),
            s.n,
            m.unit
        );
    }
}

/// The terminal view of a bench bundle; `position` says where the host
/// stands among published machines.
pub fn render_text(b: &BenchBundle, position: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "headroom bench on {} — {}", host_line(b), b.status);
    for finding in &b.findings {
        let _ = writeln!(out, "doctor: {}: {}", finding.check, finding.message);
    }
    for r in &b.results {
        let _ = writeln!(out, "\n{} — {}", r.benchmark, r.method);
        result_table(&mut out, r);
        for note in &r.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    if !position.is_empty() {
        let _ = writeln!(
            out,
            "\nwhere this host stands (published figures, same method):"
        );
        for line in position {
            let _ = writeln!(out, "  {line}");
        }
    }
    for failure in &b.failures {
        let _ = writeln!(
            out,
            "\n{} did not run: {}",
            failure.benchmark, failure.error
        );
    }
    out
}

/// One figure of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub benchmark: String,
    pub measure: Measure,
    pub a: Summary,
    pub b: Summary,
    /// % change of B against A and its 95% interval (Fieller's interval of
    /// the ratio of the means, with Welch's degrees of freedom).
    pub change_pct: Option<f64>,
    pub ci_pct: Option<(f64, f64)>,
    /// "better", "worse", "noise" or "one repetition".
    pub verdict: &'static str,
}

/// Every figure both bundles hold, B against A.
pub fn changes(a: &BenchBundle, b: &BenchBundle) -> Vec<Change> {
    let mut out = Vec::new();
    for ra in &a.results {
        let Some(rb) = b.results.iter().find(|r| r.benchmark == ra.benchmark) else {
            continue;
        };
        for ma in &ra.measures {
            let Some(mb) = rb.measures.iter().find(|m| m.key == ma.key) else {
                continue;
            };
            let (Some(sa), Some(sb)) = (Summary::of(&ma.values), Summary::of(&mb.values)) else {
                continue;
            };
            let d = difference(&ma.values, &mb.values);
            let change_pct =
                (sa.mean.abs() > f64::EPSILON).then(|| (sb.mean - sa.mean) / sa.mean * 100.0);
            // Fieller's interval of the ratio of the means: the baseline's
            // own spread counts too.
            let ci_pct = d
                .and_then(|d| d.relative_ci95)
                .map(|(low, high)| (low * 100.0, high * 100.0));
            let verdict = match d {
                None => "one repetition",
                Some(d) if !d.significant => "noise",
                Some(d) if (d.change > 0.0) == ma.higher_is_better => "better",
                Some(_) => "worse",
            };
            out.push(Change {
                benchmark: ra.benchmark.clone(),
                measure: ma.clone(),
                a: sa,
                b: sb,
                change_pct,
                ci_pct,
                verdict,
            });
        }
    }
    out
}

/// Settings that differ between the two bundles' runs of a benchmark.
pub fn setting_differences(a: &BenchBundle, b: &BenchBundle) -> Vec<String> {
    let mut out = Vec::new();
    for ra in &a.results {
        let Some(rb) = b.results.iter().find(|r| r.benchmark == ra.benchmark) else {
            continue;
        };
        for (k, va) in &ra.settings {
            if matches!(
                k.as_str(),
                "repetitions" | "path" | "dir" | "mount_point" | "device" | "model"
            ) {
                continue;
            }
            match rb.settings.get(k) {
                Some(vb) if vb != va => out.push(format!("{} {k}: {va} vs {vb}", ra.benchmark)),
                _ => {}
            }
        }
    }
    out
}

pub fn render_compare(a: &BenchBundle, b: &BenchBundle, names: (&str, &str)) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "baseline {} on {}", names.0, host_line(a));
    let _ = writeln!(out, "other    {} on {}", names.1, host_line(b));
    let differ = setting_differences(a, b);
    if !differ.is_empty() {
        let _ = writeln!(
            out,
            "warning: measured with different settings, so those figures compare methods as well as machines:"
        );
        for d in &differ {
            let _ = writeln!(out, "  {d}");
        }
    }
    let all = changes(a, b);
    let width = all
        .iter()
        .map(|c| c.measure.name.chars().count())
        .max()
        .unwrap_or(10);
    let mut current = "";
    for c in &all {
        if c.benchmark != current {
            current = &c.benchmark;
            let _ = writeln!(out, "\n{current}");
            let _ = writeln!(
                out,
                "  {:<width$}  {:>12}  {:>12}  {:>8}  {:>18}  verdict",
                "figure", "baseline", "other", "change", "95% interval"
            );
        }
        let _ = writeln!(
            out,
            "  {:<width$}  {:>12}  {:>12}  {:>8}  {:>18}  {}",
            c.measure.name,
            format!("{} {}", figure(c.a.mean), short_unit(&c.measure.unit)),
            format!("{} {}", figure(c.b.mean), short_unit(&c.measure.unit)),
            c.change_pct.map_or("-".into(), |p| format!("{p:+.1}%")),
            c.ci_pct
                .map_or(String::new(), |(lo, hi)| format!("{lo:+.1}% to {hi:+.1}%")),
            c.verdict
        );
    }
    if all.is_empty() {
        let _ = writeln!(out, "\nthe two bundles hold no figure in common");
    }
    out
}

fn short_unit(unit: &str) -> &str {
    match unit {
        "events/s" => "ev/s",
        "commits/s" => "/s",
        u => u,
    }
}

/// A bench bundle of one CPU figure, for the tests of this crate.
#[cfg(test)]
pub(crate) fn test_bundle(host: &str, values: Vec<f64>, prime: &str) -> BenchBundle {
    let mut b: BenchBundle = serde_json::from_value(serde_json::json!({
        "schema_version": 1, "tool_version": "x", "command_line": [], "started": "", "ended": null,
        "status": "complete", "fingerprint": {"hostname": host, "cores": 4}, "findings": [], "results": []
    }))
    .unwrap();
    b.results.push(BenchResult {
        benchmark: "cpu".into(),
        method: "m".into(),
        settings: std::collections::BTreeMap::from([("max_prime".to_string(), prime.to_string())]),
        measures: vec![Measure {
            key: "prime_1t".into(),
            name: "sysbench prime, 1 thread".into(),
            unit: "events/s".into(),
            higher_is_better: true,
            values,
        }],
        series: Vec::new(),
        notes: vec!["a note".into()],
    });
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_at_a_glance() {
        assert_eq!(figure(12345.6), "12,346");
        assert_eq!(figure(123.45), "123.5");
        assert_eq!(figure(1.2345), "1.23");
        assert_eq!(figure(0.012345), "0.0123");
        let text = render_text(
            &test_bundle("pi", vec![1000.0, 1010.0, 990.0], "10000"),
            &["x stands".into()],
        );
        // The bundle's host has 4 cores; one core is "1 core".
        assert!(text.contains("pi (CPU unknown, 4 cores, "), "{text}");
        let mut one = test_bundle("pi", vec![1.0], "1");
        one.fingerprint.cores = 1;
        let single = render_text(&one, &[]);
        assert!(single.contains("pi (CPU unknown, 1 core, "), "{single}");
        assert!(text.contains("sysbench prime, 1 thread"), "{text}");
        assert!(
            text.contains("1,000") && text.contains("±24.8") && text.contains("1.0%"),
            "{text}"
        );
        assert!(
            text.contains("note: a note") && text.contains("x stands"),
            "{text}"
        );
    }

    #[test]
    fn a_comparison_says_better_worse_or_noise_and_flags_other_settings() {
        let a = test_bundle("pi", vec![1000.0, 1010.0, 990.0], "10000");
        let faster = test_bundle("pi", vec![2000.0, 2020.0, 1980.0], "10000");
        let same = test_bundle("pi", vec![1005.0, 995.0, 1012.0], "10000");
        assert_eq!(changes(&a, &faster)[0].verdict, "better");
        assert_eq!(changes(&faster, &a)[0].verdict, "worse");
        assert_eq!(changes(&a, &same)[0].verdict, "noise");
        let c = &changes(&a, &faster)[0];
        assert!((c.change_pct.unwrap() - 100.0).abs() < 1e-9);
        // Its interval is in % too, and holds the change.
        let (low, high) = c.ci_pct.unwrap();
        assert!(low < 100.0 && 100.0 < high, "{c:?}");
        let other = test_bundle("pi", vec![500.0, 505.0], "20000");
        let text = render_compare(&a, &other, ("a/", "b/"));
        assert!(text.contains("cpu max_prime: 10000 vs 20000"), "{text}");
        assert_eq!(
            changes(
                &test_bundle("pi", vec![1.0], "1"),
                &test_bundle("pi", vec![2.0], "1")
            )[0]
            .verdict,
            "one repetition"
        );
    }
}
