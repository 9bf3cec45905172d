//! The same benchmark on a fleet of machines of one model (source 003's
//! question: do identical machines give the same result?). Per figure:
//! each host's mean and 95% interval over its repetitions, the spread
//! across hosts, and the hosts outside the others' interval (the 95%
//! interval of the other hosts' means); then the fingerprint fields in
//! which the hosts differ, next to the hosts that differ.

use crate::bench::figure;
use headroom_analysis::experiment::Summary;
use headroom_bundle::bench::BenchBundle;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One host's figure.
struct HostFigure {
    host: usize,
    summary: Summary,
    outlier: bool,
}

/// The fleet as text and as JSON; `names` are the bundles' names as given.
pub fn render_fleet(benches: &[BenchBundle], names: &[String]) -> (String, Value) {
    let mut out = String::new();
    let _ = writeln!(out, "fleet of {} hosts:", benches.len());
    for (name, bench) in names.iter().zip(benches) {
        let _ = writeln!(out, "  {} ({name})", host_name(bench));
    }
    let mut figures_json = Vec::new();
    for (benchmark, key) in shared_measures(benches) {
        if let Some(json) = fleet_figure(&mut out, benches, names, &benchmark, &key) {
            figures_json.push(json);
        }
    }
    let differences = fingerprint_differences(benches);
    if differences.is_empty() {
        let _ = writeln!(
            out,
            "\nfingerprints: the hosts agree on every field (CPU, memory, OS, kernel, storage, governor, ...)"
        );
    } else {
        let _ = writeln!(out, "\nfingerprint fields that differ:");
        for (field, values) in &differences {
            let shown: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{}: {v}", host_name(&benches[i])))
                .collect();
            let _ = writeln!(out, "  {field}: {}", shown.join(", "));
        }
    }
    let value = json!({
        "hosts": benches.iter().zip(names).map(|(b, n)| json!({"host": host_name(b), "bundle": n})).collect::<Vec<_>>(),
        "figures": figures_json,
        "fingerprint_differences": differences
            .iter()
            .map(|(field, values)| (field.clone(), json!(values)))
            .collect::<serde_json::Map<_, _>>(),
    });
    (out, value)
}

/// One figure across the fleet, as text in `out` and as JSON: each
/// host's mean and interval, and the spread between the hosts. `None`
/// (and no text) when fewer than two hosts measured it.
fn fleet_figure(
    out: &mut String,
    benches: &[BenchBundle],
    names: &[String],
    benchmark: &str,
    key: &str,
) -> Option<Value> {
    let measure = benches[0].measure(benchmark, key)?;
    let hosts = host_figures(benches, benchmark, key);
    if hosts.len() < 2 {
        return None;
    }
    let means: Vec<f64> = hosts.iter().map(|h| h.summary.mean).collect();
    let spread = Summary::of(&means)?;
    let _ = writeln!(
        out,
        "\n{benchmark}: {} ({}, {} is better)",
        measure.name,
        measure.unit,
        if measure.higher_is_better {
            "higher"
        } else {
            "lower"
        }
    );
    host_rows(out, benches, &hosts);
    let range_pct = (spread.max - spread.min) / spread.mean.abs().max(f64::EPSILON) * 100.0;
    let _ = writeln!(
        out,
        "  spread: {} to {} ({range_pct:.1}% of the fleet's mean {}), CoV across hosts {}",
        figure(spread.min),
        figure(spread.max),
        figure(spread.mean),
        spread
            .cov
            .map(|c| format!("{:.1}%", c * 100.0))
            .unwrap_or_default()
    );
    Some(json!({
        "benchmark": benchmark,
        "key": key,
        "name": measure.name,
        "unit": measure.unit,
        "hosts": hosts.iter().map(|h| json!({
            "host": host_name(&benches[h.host]),
            "bundle": names[h.host],
            "mean": h.summary.mean,
            "ci95": h.summary.ci95,
            "n": h.summary.n,
            "outlier": h.outlier,
        })).collect::<Vec<_>>(),
        "spread": {
            "min": spread.min, "max": spread.max, "mean": spread.mean,
            "range_pct": range_pct, "cov": spread.cov,
        },
    }))
}

/// A figure's table: a row per host with its mean, interval and
/// repetitions, marked when outside the others' interval.
fn host_rows(out: &mut String, benches: &[BenchBundle], hosts: &[HostFigure]) {
    let width = hosts
        .iter()
        .map(|h| host_name(&benches[h.host]).chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>12}  {:>25}  {:>2}",
        "host", "mean", "95% interval", "n"
    );
    for h in hosts {
        let interval = h
            .summary
            .ci95
            .map(|(lo, hi)| format!("{} – {}", figure(lo), figure(hi)))
            .unwrap_or_else(|| "one repetition".into());
        let _ = writeln!(
            out,
            "  {:<width$}  {:>12}  {:>25}  {:>2}{}",
            host_name(&benches[h.host]),
            figure(h.summary.mean),
            interval,
            h.summary.n,
            if h.outlier {
                "  outside the others' interval"
            } else {
                ""
            }
        );
    }
}

fn host_name(bench: &BenchBundle) -> String {
    if bench.fingerprint.hostname.is_empty() {
        "?".into()
    } else {
        bench.fingerprint.hostname.clone()
    }
}

/// The (benchmark, key) pairs of the first bundle that another one has too.
fn shared_measures(benches: &[BenchBundle]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for result in &benches[0].results {
        for measure in &result.measures {
            let others = benches[1..]
                .iter()
                .filter(|b| b.measure(&result.benchmark, &measure.key).is_some())
                .count();
            if others > 0 {
                out.push((result.benchmark.clone(), measure.key.clone()));
            }
        }
    }
    out
}

/// Each host's figure, and whether its interval misses the others'.
fn host_figures(benches: &[BenchBundle], benchmark: &str, key: &str) -> Vec<HostFigure> {
    let summaries: Vec<(usize, Summary)> = benches
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((i, Summary::of(&b.measure(benchmark, key)?.values)?)))
        .collect();
    summaries
        .iter()
        .map(|(host, summary)| {
            let others: Vec<f64> = summaries
                .iter()
                .filter(|(h, _)| h != host)
                .map(|(_, s)| s.mean)
                .collect();
            let outlier = Summary::of(&others)
                .and_then(|o| o.ci95)
                .is_some_and(|(lo, hi)| {
                    let (own_lo, own_hi) = summary.ci95.unwrap_or((summary.mean, summary.mean));
                    own_hi < lo || own_lo > hi
                });
            HostFigure {
                host: *host,
                summary: summary.clone(),
                outlier,
            }
        })
        .collect()
}

/// Fingerprint fields in which the hosts differ (their names aside), and
/// each host's value: `compare`'s environment differences.
fn fingerprint_differences(benches: &[BenchBundle]) -> BTreeMap<String, Vec<String>> {
    let fingerprints: Vec<Vec<(String, Value)>> = benches
        .iter()
        .map(|b| {
            let value = serde_json::to_value(&b.fingerprint).unwrap_or_default();
            vec![(String::new(), value)]
        })
        .collect();
    crate::compare::differences(&fingerprints)
        .into_iter()
        .filter(|d| d.field != "hostname")
        .map(|d| {
            let values = d
                .values
                .into_iter()
                .map(|v| v.unwrap_or_else(|| "unknown".into()))
                .collect();
            (d.field, values)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::bench::{BenchResult, Measure};

    fn bench(host: &str, values: &[f64], governor: &str) -> BenchBundle {
        let fingerprint = headroom_monitor::Fingerprint {
            hostname: host.into(),
            governor: Some(governor.into()),
            load_average: [values[0], 0.0, 0.0],
            ..Default::default()
        };
        BenchBundle {
            schema_version: 1,
            tool_version: "0".into(),
            command_line: Vec::new(),
            started: String::new(),
            ended: None,
            status: "complete".into(),
            fingerprint,
            findings: Vec::new(),
            results: vec![BenchResult {
                benchmark: "cpu".into(),
                method: String::new(),
                settings: BTreeMap::new(),
                measures: vec![Measure {
                    key: "prime_1t".into(),
                    name: "prime, 1 thread".into(),
                    unit: "events/s".into(),
                    higher_is_better: true,
                    values: values.to_vec(),
                }],
                series: Vec::new(),
                notes: Vec::new(),
            }],
            failures: Vec::new(),
        }
    }

    #[test]
    fn the_slow_host_is_named_with_the_field_it_differs_in() {
        let benches = vec![
            bench("pi-a", &[1000.0, 1004.0, 998.0], "ondemand"),
            bench("pi-b", &[1002.0, 999.0, 1001.0], "ondemand"),
            bench("pi-c", &[997.0, 1003.0, 1000.0], "ondemand"),
            bench("pi-d", &[900.0, 903.0, 898.0], "powersave"),
        ];
        let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let (text, value) = render_fleet(&benches, &names);
        let hosts = &value["figures"][0]["hosts"];
        let outliers: Vec<&str> = hosts
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["outlier"] == true)
            .map(|h| h["host"].as_str().unwrap())
            .collect();
        assert_eq!(outliers, ["pi-d"], "{text}");
        let differences = &value["fingerprint_differences"];
        assert_eq!(
            differences["governor"],
            json!(["ondemand", "ondemand", "ondemand", "powersave"])
        );
        assert!(
            differences.get("load_average").is_none(),
            "momentary fields are left out"
        );
        let spread = &value["figures"][0]["spread"];
        assert!((spread["min"].as_f64().unwrap() - 900.333).abs() < 0.01);
        assert!(text.contains("outside the others' interval"), "{text}");
        assert!(text.contains("governor: pi-a: ondemand"), "{text}");
    }

    #[test]
    fn identical_hosts_have_no_outlier_and_one_repetition_is_said() {
        let benches = vec![
            bench("a", &[100.0], "ondemand"),
            bench("b", &[100.0], "ondemand"),
            bench("c", &[100.0], "ondemand"),
        ];
        let names = vec!["a".to_string(), "b".into(), "c".into()];
        let (text, value) = render_fleet(&benches, &names);
        assert!(text.contains("one repetition"), "{text}");
        assert!(text.contains("agree on every field"), "{text}");
        assert!(value["figures"][0]["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["outlier"] == false));
    }
}
