//! The latest bench of a host among the bundles under a directory (the
//! default `runs/`), and its headline figures: what `headroom doctor`
//! prints and what a capacity search shows beside its bottleneck (a
//! disk-bound capacity next to a storage score of 1,200 tells the user
//! what to buy).

use crate::reference::{stand, REFERENCES};
use headroom_analysis::capacity::Bottleneck;
use headroom_bundle::bench::{self as bundle, BenchBundle};
use headroom_units::quantity::figure;
use std::path::{Path, PathBuf};

/// What a capacity search shows beside its bottleneck: the latest bench
/// of the bottleneck's host under `runs` (`local`: this machine), its
/// figures for the saturated resource (throttling and temperature are the
/// CPU's), the first line naming the bundle; empty without one.
pub fn of_bottleneck(runs: &Path, bottleneck: &Bottleneck) -> Vec<String> {
    let host = if bottleneck.host == "local" {
        headroom_monitor::Fingerprint::local(env!("CARGO_PKG_VERSION")).hostname
    } else {
        bottleneck.host.clone()
    };
    let resource = match bottleneck.resource.as_str() {
        "throttling" | "temperature" => "cpu",
        other => other,
    };
    let Some((path, bench)) = latest(runs, &host) else {
        return Vec::new();
    };
    let lines = headlines(&bench, Some(resource));
    if lines.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "the latest bench of {host} ({}, {})",
        path.display(),
        bench.started
    )];
    out.extend(lines);
    out
}

/// The newest complete bench bundle of `hostname` directly under `runs`.
pub fn latest(runs: &Path, hostname: &str) -> Option<(PathBuf, BenchBundle)> {
    let entries = std::fs::read_dir(runs).ok()?;
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| bundle::is_bench(p))
        .filter_map(|p| bundle::read(&p).ok().map(|b| (p, b)))
        .filter(|(_, b)| b.fingerprint.hostname == hostname && !b.results.is_empty())
        .max_by(|a, b| a.1.started.cmp(&b.1.started))
}

/// The figures that speak for each resource a capacity can be limited by.
const HEADLINES: &[(&str, &str, &str)] = &[
    ("cpu", "cpu", "prime_1t"),
    ("cpu", "cpu", "prime_all"),
    ("memory", "memory", "triad_1t"),
    ("disk", "storage", "score"),
    ("disk", "storage", "commit_p99"),
    ("network", "network", "upload"),
    ("network", "network", "download"),
];

/// One line per headline figure of `b` (those of `resource` only, when
/// given: `cpu`, `memory`, `disk`, `network`), with where it stands among
/// published machines when they measured it the same way.
pub fn headlines(b: &BenchBundle, resource: Option<&str>) -> Vec<String> {
    HEADLINES
        .iter()
        .filter(|(r, _, _)| resource.is_none_or(|x| x == *r))
        .filter_map(|(_, benchmark, key)| {
            let m = b.measure(benchmark, key).filter(|m| !m.values.is_empty())?;
            let mean = m.values.iter().sum::<f64>() / m.values.len() as f64;
            let compared = REFERENCES
                .iter()
                .any(|r| r.figure == Some((benchmark, key)))
                && REFERENCES
                    .iter()
                    .filter(|r| r.figure == Some((benchmark, key)))
                    .any(|r| crate::reference::host_value(b, r).is_some());
            Some(if compared {
                stand(&m.name, mean, &m.unit, benchmark, key)
            } else {
                format!("{} {} {}", m.name, figure(mean), m.unit)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::bench::{BenchResult, Measure};
    use std::collections::BTreeMap;

    fn bench(host: &str, started: &str, score: f64) -> BenchBundle {
        let mut b: BenchBundle = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool_version": "x", "command_line": [], "started": started,
            "ended": null, "status": "complete", "fingerprint": {"hostname": host}, "findings": [], "results": []
        }))
        .unwrap();
        b.results.push(BenchResult {
            benchmark: "storage".into(),
            method: String::new(),
            settings: BTreeMap::from([("dd_blocks".to_string(), "133120".to_string())]),
            measures: vec![
                Measure {
                    key: "score".into(),
                    name: "storage score (PiBenchmarks)".into(),
                    unit: "points".into(),
                    higher_is_better: true,
                    values: vec![score],
                },
                Measure {
                    key: "commit_p99".into(),
                    name: "commit p99".into(),
                    unit: "ms".into(),
                    higher_is_better: false,
                    values: vec![12.5],
                },
            ],
            series: Vec::new(),
            notes: Vec::new(),
        });
        b
    }

    #[test]
    fn the_newest_bench_of_the_host_is_found_and_told_for_the_resource() {
        let runs = std::env::temp_dir().join(format!("headroom-latest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&runs);
        for (dir, host, started, score) in [
            ("a-bench", "pi", "2026-11-01T00:00:00Z", 1200.0),
            ("b-bench", "pi", "2026-11-20T00:00:00Z", 1210.0),
            ("c-bench", "other", "2026-11-22T00:00:00Z", 9000.0),
        ] {
            bundle::write(&runs.join(dir), &bench(host, started, score)).unwrap();
        }
        std::fs::create_dir_all(runs.join("not-a-bench")).unwrap();
        let (path, b) = latest(&runs, "pi").unwrap();
        assert!(path.ends_with("b-bench"));
        let lines = headlines(&b, Some("disk"));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("1,210 points: like SD card on a Pi 4"),
            "{lines:?}"
        );
        assert_eq!(lines[1], "commit p99 12.50 ms");
        assert!(headlines(&b, Some("cpu")).is_empty());
        assert!(latest(&runs, "nobody").is_none());
        // A capacity search's bottleneck on pi's disk: the bench's bundle,
        // then its disk figures; on its CPU (no CPU figures), nothing.
        let mut disk = Bottleneck {
            resource: "disk".into(),
            host: "pi".into(),
            figure: 97.0,
            users: 50,
            core: None,
            processes: Vec::new(),
            server_pct: None,
        };
        let said = of_bottleneck(&runs, &disk);
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[0].starts_with("the latest bench of pi (") && said[0].contains("b-bench"),
            "{said:?}"
        );
        assert_eq!(said[1..], lines[..]);
        disk.resource = "throttling".into();
        assert!(of_bottleneck(&runs, &disk).is_empty());
        let _ = std::fs::remove_dir_all(&runs);
    }
}
