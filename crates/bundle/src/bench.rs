//! A bench bundle: one `bench.json` holding what a `headroom bench` measured
//! on a host, every repetition's raw figure, with the host's fingerprint and
//! doctor's findings. Written after each benchmark (atomically), so an
//! interrupted bench keeps what it finished.

use crate::{invalid, read_versioned_json, BundleError};
use headroom_monitor::doctor::Finding;
use headroom_monitor::Fingerprint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The file of a bench bundle.
pub const BENCH: &str = "bench.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchBundle {
    pub schema_version: u32,
    pub tool_version: String,
    pub command_line: Vec<String>,
    /// RFC 3339, UTC.
    pub started: String,
    pub ended: Option<String>,
    /// `running` while it measures, then `complete`, `interrupted` or `failed`.
    pub status: String,
    pub fingerprint: Fingerprint,
    pub findings: Vec<Finding>,
    pub results: Vec<BenchResult>,
    /// Benchmarks that could not run, and why.
    #[serde(default)]
    pub failures: Vec<BenchFailure>,
}

/// One benchmark's outcome: its method, settings and figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchResult {
    /// cpu, memory, storage, network, thermal or stack.
    pub benchmark: String,
    /// The method in a sentence a reader can check.
    pub method: String,
    pub settings: BTreeMap<String, String>,
    pub measures: Vec<Measure>,
    /// Curves: the thermal trace, latency against payload size.
    #[serde(default)]
    pub series: Vec<Series>,
    /// What the reader must know to trust or compare the figures.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One figure, measured once per repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Stable key, e.g. `prime_1t`.
    pub key: String,
    /// Shown name, e.g. "sysbench prime, 1 thread".
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// One value per repetition.
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchFailure {
    pub benchmark: String,
    pub error: String,
}

impl BenchBundle {
    pub fn measure(&self, benchmark: &str, key: &str) -> Option<&Measure> {
        self.results
            .iter()
            .filter(|r| r.benchmark == benchmark)
            .flat_map(|r| &r.measures)
            .find(|m| m.key == key)
    }
}

/// Whether `dir` holds a bench bundle.
pub fn is_bench(dir: &Path) -> bool {
    dir.join(BENCH).is_file()
}

/// Writes `bench.json` atomically (temporary file, then rename).
pub fn write(dir: &Path, bundle: &BenchBundle) -> Result<(), BundleError> {
    let path = dir.join(BENCH);
    let io = |source| BundleError::Io {
        path: path.clone(),
        source,
    };
    let text = serde_json::to_string_pretty(bundle).map_err(|e| invalid(&path, e.to_string()))?;
    fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join("bench.json.tmp");
    if let Err(e) = fs::write(&tmp, text + "\n") {
        let _ = fs::remove_file(&tmp);
        return Err(io(e));
    }
    fs::rename(&tmp, &path).map_err(io)
}

/// Reads a bench bundle, checking its schema version.
pub fn read(dir: &Path) -> Result<BenchBundle, BundleError> {
    let path = dir.join(BENCH);
    let value = read_versioned_json(&path, "a headroom bench result")?;
    serde_json::from_value(value).map_err(|e| invalid(&path, format!("not a bench result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMA_VERSION;

    fn sample() -> BenchBundle {
        BenchBundle {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            command_line: vec!["headroom".into(), "bench".into()],
            started: "2026-11-23T00:00:00Z".into(),
            ended: None,
            status: "running".into(),
            fingerprint: Fingerprint::default(),
            findings: Vec::new(),
            results: vec![BenchResult {
                benchmark: "cpu".into(),
                method: "m".into(),
                settings: BTreeMap::new(),
                measures: vec![Measure {
                    key: "prime_1t".into(),
                    name: "prime".into(),
                    unit: "events/s".into(),
                    higher_is_better: true,
                    values: vec![1.0, 2.0],
                }],
                series: Vec::new(),
                notes: Vec::new(),
            }],
            failures: Vec::new(),
        }
    }

    #[test]
    fn round_trips_and_refuses_other_files() {
        let dir =
            std::env::temp_dir().join(format!("headroom-bench-bundle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        write(&dir, &sample()).unwrap();
        assert!(is_bench(&dir));
        let back = read(&dir).unwrap();
        assert_eq!(
            back.measure("cpu", "prime_1t").unwrap().values,
            vec![1.0, 2.0]
        );
        fs::write(dir.join(BENCH), "{\"schema_version\": 1, \"trunc").unwrap();
        assert!(read(&dir).unwrap_err().to_string().contains("truncated"));
        fs::write(dir.join(BENCH), "{\"schema_version\": 1}").unwrap();
        assert!(read(&dir)
            .unwrap_err()
            .to_string()
            .contains("not a bench result"));
        fs::write(dir.join(BENCH), "{\"schema_version\": 9}").unwrap();
        assert!(read(&dir)
            .unwrap_err()
            .to_string()
            .contains("schema version 9"));
        let _ = fs::remove_dir_all(&dir);
    }
}
