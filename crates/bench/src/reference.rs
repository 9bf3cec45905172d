//! Published figures of known machines (from ../shared/REFERENCE.md, each
//! with its source and method) and where a host stands among them. A
//! comparison holds only when the methods match: each entry names the
//! figure it stands beside, and [`position`] refuses figures measured with
//! other settings.

use headroom_bundle::bench::{BenchBundle, BenchResult};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    pub machine: &'static str,
    /// benchmark and measure key of the figure it compares with; `None`
    /// for a figure headroom does not measure (listed for the reader).
    pub figure: Option<(&'static str, &'static str)>,
    pub what: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub method: &'static str,
    pub source: &'static str,
}

const SYSBENCH: &str = "sysbench 1.0.20 cpu --cpu-max-prime=10000 --time=60";
const LEON: &str = "leoncode.co.uk (sysbench on Raspberry Pi 4 and 5)";
const STREAM: &str = "STREAM, gcc -O3, single thread";
const SCIPI: &str = "sci-pi.org.uk (STREAM on Raspberry Pi 4)";
const SEVENZIP: &str = "7z b";
const SBC: &str = "ThomasKaiser/sbc-bench Results.md";
const PIBENCH: &str = "PiBenchmarks Storage.sh score";
const HDPARM: &str = "hdparm -Tt --direct (PiBenchmarks Storage.sh)";
const PAPER000: &str = "source 000, Table 5 (PiBenchmarks script on a Raspberry Pi 4)";

pub const REFERENCES: &[Reference] = &[
    Reference {
        machine: "Raspberry Pi 4",
        figure: Some(("cpu", "prime_1t")),
        what: "sysbench prime, 1 thread",
        value: 1477.83,
        unit: "events/s",
        method: SYSBENCH,
        source: LEON,
    },
    Reference {
        machine: "Raspberry Pi 5",
        figure: Some(("cpu", "prime_1t")),
        what: "sysbench prime, 1 thread",
        value: 2737.49,
        unit: "events/s",
        method: SYSBENCH,
        source: LEON,
    },
    Reference {
        machine: "Raspberry Pi 4 (4 cores)",
        figure: Some(("cpu", "prime_all")),
        what: "sysbench prime, 4 threads",
        value: 5900.85,
        unit: "events/s",
        method: SYSBENCH,
        source: LEON,
    },
    Reference {
        machine: "Raspberry Pi 5 (4 cores)",
        figure: Some(("cpu", "prime_all")),
        what: "sysbench prime, 4 threads",
        value: 10945.45,
        unit: "events/s",
        method: SYSBENCH,
        source: LEON,
    },
    Reference {
        machine: "Raspberry Pi 4",
        figure: Some(("memory", "copy_1t")),
        what: "STREAM Copy, 1 thread",
        value: 5527.0,
        unit: "MB/s",
        method: STREAM,
        source: SCIPI,
    },
    Reference {
        machine: "Raspberry Pi 4",
        figure: Some(("memory", "triad_1t")),
        what: "STREAM Triad, 1 thread",
        value: 4844.0,
        unit: "MB/s",
        method: STREAM,
        source: SCIPI,
    },
    Reference {
        machine: "Raspberry Pi 4 at 1.8 GHz",
        figure: Some(("compression", "rating_1t")),
        what: "7-Zip, 1 core",
        value: 1738.0,
        unit: "MIPS (1,738–1,903)",
        method: SEVENZIP,
        source: SBC,
    },
    Reference {
        machine: "Raspberry Pi 4 at 1.8 GHz",
        figure: Some(("compression", "rating_all")),
        what: "7-Zip, all cores",
        value: 5640.0,
        unit: "MIPS (5,640–6,550)",
        method: SEVENZIP,
        source: SBC,
    },
    Reference {
        machine: "Raspberry Pi 5 at 2.4 GHz",
        figure: Some(("compression", "rating_1t")),
        what: "7-Zip, 1 core",
        value: 3196.0,
        unit: "MIPS (3,196–3,305)",
        method: SEVENZIP,
        source: SBC,
    },
    Reference {
        machine: "Raspberry Pi 5 at 2.4 GHz",
        figure: Some(("compression", "rating_all")),
        what: "7-Zip, all cores",
        value: 11010.0,
        unit: "MIPS (11,010–11,830)",
        method: SEVENZIP,
        source: SBC,
    },
    Reference {
        machine: "SD card on a Pi 4 (SanDisk 32 GB)",
        figure: Some(("storage", "score")),
        what: "storage score",
        value: 1203.0,
        unit: "points",
        method: PIBENCH,
        source: PAPER000,
    },
    Reference {
        machine: "best SD card (Samsung Evo)",
        figure: Some(("storage", "score")),
        what: "storage score",
        value: 1245.0,
        unit: "points",
        method: PIBENCH,
        source: "PiBenchmarks results (2019 table)",
    },
    Reference {
        machine: "Compute Module 4 eMMC",
        figure: Some(("storage", "score")),
        what: "storage score",
        value: 1397.0,
        unit: "points",
        method: PIBENCH,
        source: "marcone/teslausb #239",
    },
    Reference {
        machine: "USB 3 SSD on a Pi 4 (SanDisk SSD Plus)",
        figure: Some(("storage", "score")),
        what: "storage score",
        value: 4165.0,
        unit: "points",
        method: PIBENCH,
        source: PAPER000,
    },
    Reference {
        machine: "NVMe on a Pi 5 (KIOXIA Exceria G2)",
        figure: Some(("storage", "score")),
        what: "storage score",
        value: 49130.0,
        unit: "points",
        method: PIBENCH,
        source: "marcone/teslausb #239",
    },
    Reference {
        machine: "SD card on a Pi 4 (32-bit Raspberry Pi OS)",
        figure: Some(("reads", "direct_disk_read")),
        what: "hdparm O_DIRECT disk read",
        value: 40.92,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "SD card on a Pi 4 (32-bit Raspberry Pi OS)",
        figure: Some(("reads", "direct_cached_read")),
        what: "hdparm O_DIRECT cached read",
        value: 40.55,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "USB 3 SSD on a Pi 4 (32-bit Raspberry Pi OS)",
        figure: Some(("reads", "direct_disk_read")),
        what: "hdparm O_DIRECT disk read",
        value: 156.14,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "USB 3 SSD on a Pi 4 (32-bit Raspberry Pi OS)",
        figure: Some(("reads", "direct_cached_read")),
        what: "hdparm O_DIRECT cached read",
        value: 125.0,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "SD card on a Pi 4 (64-bit Ubuntu)",
        figure: Some(("reads", "direct_disk_read")),
        what: "hdparm O_DIRECT disk read",
        value: 41.52,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "SD card on a Pi 4 (64-bit Ubuntu)",
        figure: Some(("reads", "direct_cached_read")),
        what: "hdparm O_DIRECT cached read",
        value: 36.3,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "USB 3 SSD on a Pi 4 (64-bit Ubuntu)",
        figure: Some(("reads", "direct_disk_read")),
        what: "hdparm O_DIRECT disk read",
        value: 225.11,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
    Reference {
        machine: "USB 3 SSD on a Pi 4 (64-bit Ubuntu)",
        figure: Some(("reads", "direct_cached_read")),
        what: "hdparm O_DIRECT cached read",
        value: 177.15,
        unit: "MB/s (hdparm's: 2^20 bytes)",
        method: HDPARM,
        source: PAPER000,
    },
];

/// The settings a figure must have been measured with to stand beside
/// the references (benchmark, setting, value).
const MUST_MATCH: &[(&str, &str, &str)] = &[
    ("cpu", "max_prime", "10000"),
    ("storage", "dd_blocks", "133120"),
    ("storage", "file_mib", "80"),
    ("storage", "queue_depth", "64"),
    ("compression", "dictionary", "7-Zip's own"),
    ("compression", "passes", "7-Zip's own"),
];

/// Why `result`'s figures cannot stand beside published ones: measured
/// with other settings than the references, or outside the method's
/// conditions (STREAM over arrays that fit the cache); `None` when they can.
pub fn not_comparable(result: &BenchResult) -> Option<String> {
    let mismatch: Vec<(&str, &String, &str)> = MUST_MATCH
        .iter()
        .filter(|(b, _, _)| *b == result.benchmark)
        .filter_map(|(_, s, v)| {
            let here = result.settings.get(*s).filter(|x| x != v)?;
            Some((*s, here, *v))
        })
        .collect();
    if !mismatch.is_empty() {
        return Some(measured_otherwise(&mismatch));
    }
    if result.benchmark == "memory" {
        return crate::memory::outside_stream_rule_of(&result.settings);
    }
    None
}

/// "they were measured with dictionary 2^16 bytes and passes 1, the
/// published ones with 7-Zip's own": each setting here, then the published
/// values (once when they are the same).
fn measured_otherwise(mismatch: &[(&str, &String, &str)]) -> String {
    let here: Vec<String> = mismatch
        .iter()
        .map(|(s, h, _)| format!("{s} {h}"))
        .collect();
    let mut published: Vec<&str> = mismatch.iter().map(|(_, _, v)| *v).collect();
    published.dedup();
    format!(
        "they were measured with {}, the published ones with {}",
        and_list(&here),
        and_list(&published)
    )
}

/// "a", "a and b", "a, b and c".
fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => format!(
            "{} and {}",
            rest.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// The host's mean for the figure `r` stands beside, when measured the
/// same way.
pub fn host_value(bundle: &BenchBundle, r: &Reference) -> Option<f64> {
    let (benchmark, key) = r.figure?;
    let result = bundle.results.iter().find(|x| x.benchmark == benchmark)?;
    let m = result.measures.iter().find(|m| m.key == key)?;
    (not_comparable(result).is_none() && !m.values.is_empty())
        .then(|| m.values.iter().sum::<f64>() / m.values.len() as f64)
}

/// One sentence per compared figure: where the host stands; and one per
/// benchmark whose figures are not compared, saying why.
pub fn position(bundle: &BenchBundle) -> Vec<String> {
    let mut lines = Vec::new();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    // Per benchmark not compared: its figures' names and why.
    let mut refused: Vec<(&str, Vec<&str>, String)> = Vec::new();
    for r in REFERENCES {
        let Some((benchmark, key)) = r.figure else {
            continue;
        };
        if seen.contains(&(benchmark, key)) {
            continue;
        }
        seen.push((benchmark, key));
        let Some(result) = bundle.results.iter().find(|x| x.benchmark == benchmark) else {
            continue;
        };
        let Some(m) = result.measures.iter().find(|m| m.key == key) else {
            continue;
        };
        if m.values.is_empty() {
            continue;
        }
        if let Some(why) = not_comparable(result) {
            match refused.iter_mut().find(|(b, _, _)| *b == benchmark) {
                Some((_, names, _)) => names.push(&m.name),
                None => refused.push((benchmark, vec![&m.name], why)),
            }
            continue;
        }
        let value = m.values.iter().sum::<f64>() / m.values.len() as f64;
        lines.push(stand(&m.name, value, &m.unit, benchmark, key));
    }
    for (_, names, why) in refused {
        lines.push(format!(
            "{}: not compared with published figures ({why})",
            names.join("; ")
        ));
    }
    lines
}

/// "storage score 4,100: like a USB 3 SSD on a Pi 4 (4,165); 3.4× an SD card on a Pi 4 (1,203)".
pub fn stand(name: &str, value: f64, unit: &str, benchmark: &str, key: &str) -> String {
    let peers: Vec<&Reference> = REFERENCES
        .iter()
        .filter(|r| r.figure == Some((benchmark, key)))
        .collect();
    let shown = headroom_units::quantity::group_thousands(value.round() as i64);
    let mut parts = Vec::new();
    if let Some(near) = peers
        .iter()
        .min_by(|a, b| {
            (a.value / value)
                .ln()
                .abs()
                .total_cmp(&(b.value / value).ln().abs())
        })
        .filter(|r| (r.value / value - 1.0).abs() <= 0.2)
    {
        parts.push(format!(
            "like {} ({})",
            near.machine,
            headroom_units::quantity::group_thousands(near.value.round() as i64)
        ));
    }
    for r in &peers {
        let ratio = value / r.value;
        if parts.iter().any(|p| p.contains(r.machine)) {
            continue;
        }
        parts.push(format!(
            "{} {} ({})",
            if ratio >= 1.0 {
                format!("{ratio:.1}×")
            } else {
                format!("{:.0}% of", ratio * 100.0)
            },
            r.machine,
            headroom_units::quantity::group_thousands(r.value.round() as i64)
        ));
    }
    format!("{name} {shown} {unit}: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::bench::Measure;
    use std::collections::BTreeMap;

    #[test]
    fn a_usb3_ssd_like_score_is_named_and_compared_with_an_sd_card() {
        let line = stand("storage score", 4100.0, "points", "storage", "score");
        assert!(
            line.starts_with(
                "storage score 4,100 points: like USB 3 SSD on a Pi 4 (SanDisk SSD Plus) (4,165)"
            ),
            "{line}"
        );
        assert!(
            line.contains("3.4× SD card on a Pi 4 (SanDisk 32 GB) (1,203)"),
            "{line}"
        );
        assert!(line.contains("8% of NVMe on a Pi 5"), "{line}");
    }

    #[test]
    fn figures_measured_otherwise_are_not_compared() {
        let result = |prime: &str| BenchResult {
            benchmark: "cpu".into(),
            method: String::new(),
            settings: BTreeMap::from([("max_prime".to_string(), prime.to_string())]),
            measures: vec![Measure {
                key: "prime_1t".into(),
                name: "sysbench prime, 1 thread".into(),
                unit: "events/s".into(),
                higher_is_better: true,
                values: vec![1500.0],
            }],
            series: Vec::new(),
            notes: Vec::new(),
        };
        let mut bundle: BenchBundle = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool_version": "x", "command_line": [], "started": "", "ended": null,
            "status": "complete", "fingerprint": {}, "findings": [], "results": []
        }))
        .unwrap();
        bundle.results = vec![result("20000")];
        let lines = position(&bundle);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("not compared")
                && lines[0].contains("max_prime 20000, the published ones with 10000"),
            "{lines:?}"
        );
        bundle.results = vec![result("10000")];
        let lines = position(&bundle);
        assert!(
            lines[0].contains("like Raspberry Pi 4 (1,478)"),
            "{lines:?}"
        );
    }

    /// Finding 20 of adversary-3: "(they were measured with dictionary
    /// 2^16 bytes, the published ones with 7-Zip's own, passes 1, the
    /// published ones with 7-Zip's own)".
    #[test]
    fn several_settings_measured_otherwise_are_said_once_each() {
        let result = BenchResult {
            benchmark: "compression".into(),
            method: String::new(),
            settings: BTreeMap::from([
                ("dictionary".to_string(), "2^16 bytes".to_string()),
                ("passes".to_string(), "1".to_string()),
            ]),
            measures: Vec::new(),
            series: Vec::new(),
            notes: Vec::new(),
        };
        assert_eq!(
            not_comparable(&result).unwrap(),
            "they were measured with dictionary 2^16 bytes and passes 1, the published ones with 7-Zip's own"
        );
        let storage = BenchResult {
            benchmark: "storage".into(),
            settings: BTreeMap::from([
                ("dd_blocks".to_string(), "100".to_string()),
                ("file_mib".to_string(), "8".to_string()),
                ("queue_depth".to_string(), "64".to_string()),
            ]),
            ..result
        };
        assert_eq!(
            not_comparable(&storage).unwrap(),
            "they were measured with dd_blocks 100 and file_mib 8, the published ones with 133120 and 80"
        );
    }

    #[test]
    fn stream_over_arrays_that_fit_the_cache_is_not_compared() {
        // The user's case: --elements 2000000 (15 MiB arrays) on a 32 MiB
        // cache printed "12.4× Raspberry Pi 4 ... same method".
        let memory = |elements: &str| BenchResult {
            benchmark: "memory".into(),
            method: String::new(),
            settings: BTreeMap::from([
                ("elements".to_string(), elements.to_string()),
                ("last_level_cache".to_string(), "32768 KiB".to_string()),
            ]),
            measures: vec![Measure {
                key: "copy_1t".into(),
                name: "STREAM Copy, 1 thread".into(),
                unit: "MB/s".into(),
                higher_is_better: true,
                values: vec![68_500.0],
            }],
            series: Vec::new(),
            notes: Vec::new(),
        };
        let mut bundle: BenchBundle = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool_version": "x", "command_line": [], "started": "", "ended": null,
            "status": "complete", "fingerprint": {}, "findings": [], "results": []
        }))
        .unwrap();
        bundle.results = vec![memory("2000000")];
        let lines = position(&bundle);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("STREAM Copy, 1 thread: not compared with published figures")
                && lines[0].contains("less than 4× the last-level caches' 32 MiB")
                && lines[0].contains("--elements 16777216 or more")
                && !lines[0].contains("Raspberry"),
            "{lines:?}"
        );
        let copy = REFERENCES
            .iter()
            .find(|r| r.figure == Some(("memory", "copy_1t")))
            .unwrap();
        assert_eq!(host_value(&bundle, copy), None);
        bundle.results = vec![memory("16777216")];
        assert!(position(&bundle)[0].contains("Raspberry Pi 4 (5,527)"));
        assert_eq!(host_value(&bundle, copy), Some(68_500.0));
    }
}
