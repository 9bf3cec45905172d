//! Bench bundles compared: each against a baseline, figure by figure
//! ([`compare_benches`]), or, for three or more hosts with no baseline
//! named, a fleet ([`is_fleet`], rendered by [`crate::fleet`]). A
//! regression is a figure really worse by more than the threshold, in a
//! benchmark both measured with the same settings.

use crate::bench::{changes, render_compare, setting_differences};
use headroom_bundle::bench::BenchBundle;
use serde_json::{json, Value};

/// Bench bundles compared with a baseline.
#[derive(Debug, Clone)]
pub struct BenchCompared {
    /// Each pair's table, in the bundles' order.
    pub text: String,
    /// Each pair's figures, as `--json` prints them.
    pub json: Value,
    /// Figures worse beyond the threshold.
    pub regressions: usize,
}

/// Bench bundles of three or more different hosts, with no baseline
/// named: a fleet, each host against the others.
pub fn is_fleet(benches: &[BenchBundle], baseline_named: bool) -> bool {
    let mut hosts: Vec<&str> = benches
        .iter()
        .map(|b| b.fingerprint.hostname.as_str())
        .collect();
    hosts.sort();
    hosts.dedup();
    !baseline_named && benches.len() >= 3 && hosts.len() == benches.len()
}

/// Every bundle but `base` against `base`; `names` names each bundle.
pub fn compare_benches(
    benches: &[BenchBundle],
    names: &[String],
    base: usize,
    threshold_pct: f64,
) -> BenchCompared {
    let mut compared = BenchCompared {
        text: String::new(),
        json: Value::Array(Vec::new()),
        regressions: 0,
    };
    let mut pairs = Vec::new();
    for (i, other) in benches.iter().enumerate().filter(|(i, _)| *i != base) {
        let a = &benches[base];
        let changes = changes(a, other);
        let differ = setting_differences(a, other);
        compared.regressions += changes
            .iter()
            .filter(|c| c.verdict == "worse")
            .filter(|c| c.change_pct.is_some_and(|p| p.abs() > threshold_pct))
            .filter(|c| {
                !differ
                    .iter()
                    .any(|d| d.starts_with(&format!("{} ", c.benchmark)))
            })
            .count();
        pairs.push(json!({
            "a": names[base],
            "b": names[i],
            "setting_differences": differ,
            "figures": changes.iter().map(|c| json!({
                "benchmark": c.benchmark, "key": c.measure.key, "name": c.measure.name,
                "unit": c.measure.unit, "a_mean": c.a.mean, "b_mean": c.b.mean,
                "change_pct": c.change_pct, "ci95_pct": c.ci_pct, "verdict": c.verdict,
            })).collect::<Vec<_>>(),
        }));
        compared
            .text
            .push_str(&render_compare(a, other, (&names[base], &names[i])));
    }
    compared.json = Value::Array(pairs);
    compared
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::test_bundle as bundle;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{i}")).collect()
    }

    #[test]
    fn a_slower_bench_is_a_regression_unless_its_settings_differ() {
        let base = bundle("pi", vec![1000.0, 1010.0, 990.0], "10000");
        let slower = bundle("pi", vec![500.0, 505.0, 495.0], "10000");
        let other_settings = bundle("pi", vec![500.0, 505.0, 495.0], "20000");
        let c = compare_benches(&[base.clone(), slower], &names(2), 0, 5.0);
        assert_eq!(c.regressions, 1);
        assert_eq!(c.json[0]["a"], "0");
        assert_eq!(c.json[0]["figures"][0]["verdict"], "worse");
        assert!(c.text.contains("sysbench prime, 1 thread"), "{}", c.text);
        // Beyond a 60% threshold, a halving is not a regression.
        assert_eq!(
            compare_benches(
                &[
                    base.clone(),
                    bundle("pi", vec![500.0, 505.0, 495.0], "10000")
                ],
                &names(2),
                0,
                60.0
            )
            .regressions,
            0
        );
        let c = compare_benches(&[base, other_settings], &names(2), 0, 5.0);
        assert_eq!(c.regressions, 0, "{}", c.json);
        assert_eq!(
            c.json[0]["setting_differences"][0],
            "cpu max_prime: 10000 vs 20000"
        );
    }

    #[test]
    fn three_hosts_without_a_baseline_are_a_fleet() {
        let b = |host: &str| bundle(host, vec![1.0], "1");
        assert!(is_fleet(&[b("a"), b("b"), b("c")], false));
        assert!(!is_fleet(&[b("a"), b("b"), b("c")], true));
        assert!(!is_fleet(&[b("a"), b("b"), b("b")], false));
        assert!(!is_fleet(&[b("a"), b("b")], false));
    }
}
