//! One finished run read back from its bundle: manifest, per-second
//! intervals, resources and (for reports) the whole run's latency histogram.

use hdrhistogram::Histogram;
use headroom_bundle::intervals::{read_intervals, IntervalRow};
use headroom_bundle::manifest::{read_manifest, Manifest};
use headroom_bundle::reader::read_latency;
use headroom_bundle::resources::{read_resources, ResourceRow};
use headroom_bundle::summary::{LabelFigures, RunStatus, RunSummary};
use headroom_bundle::{BundleError, TOTAL_LABEL};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Seconds shorter than this (the last, partial one) are left out of
/// per-second statistics.
pub const MIN_INTERVAL_S: f64 = 0.5;

/// One run read from its bundle.
pub struct RunData {
    pub name: String,
    pub bundle: PathBuf,
    pub manifest: Manifest,
    /// The manifest's summary, or one rebuilt from the files of a run that
    /// died before writing it.
    pub summary: RunSummary,
    pub intervals: Vec<IntervalRow>,
    pub resources: Option<Vec<ResourceRow>>,
    /// The whole run's response times in µs, when read.
    pub latency: Option<Histogram<u64>>,
    /// Faults injected during the run (`events.csv`).
    pub events: Vec<headroom_bundle::events::Event>,
    /// Failed exchanges the run kept (`failures/index.jsonl`), or why they
    /// could not be read.
    pub failures: Result<Vec<headroom_bundle::failures::FailureEntry>, String>,
    /// What the report puts before a kept failure's path to link it: empty
    /// when the report is written in the bundle, else the bundle's path.
    pub link_prefix: String,
}

impl RunData {
    /// Reads a bundle. A run whose process died before writing its summary
    /// (status `running`) gets one rebuilt from intervals.csv and
    /// latency.hlog, and is marked `recovered` with status `died` (the
    /// file itself is left as it is).
    pub fn load(dir: &Path, name: &str) -> Result<RunData, BundleError> {
        let mut manifest = read_manifest(dir)?;
        let summary = match manifest.summary.take() {
            Some(summary) => summary,
            None => {
                let summary = headroom_bundle::phases::recover_summary(dir, &manifest)?;
                manifest.elapsed_s = Some(summary.elapsed_s);
                manifest.status = RunStatus::Died;
                summary
            }
        };
        Ok(RunData {
            name: name.to_string(),
            bundle: dir.to_path_buf(),
            intervals: read_intervals(dir)?,
            resources: read_resources(dir)?,
            latency: None,
            events: headroom_bundle::events::read(dir)?,
            failures: headroom_bundle::failures::read_index(dir).map_err(|e| e.to_string()),
            link_prefix: String::new(),
            manifest,
            summary,
        })
    }

    /// Also reads latency.hlog (for the percentile spectrum).
    pub fn with_latency(mut self) -> Result<RunData, BundleError> {
        self.latency = if self.recovered() {
            // Up to the last whole line the run wrote.
            headroom_bundle::recovery::read_histograms(&self.bundle)?.remove(&None)
        } else {
            read_latency(&self.bundle)?
        };
        Ok(self)
    }

    /// True when the run died and its figures were rebuilt from its files.
    pub fn recovered(&self) -> bool {
        self.manifest.status == RunStatus::Died
    }

    /// The run's length in seconds.
    pub fn elapsed_s(&self) -> f64 {
        self.manifest.elapsed_s.unwrap_or(self.summary.elapsed_s)
    }

    /// The labels in the run's order, then TOTAL.
    pub fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self.manifest.labels.clone();
        for key in self.summary.labels.keys() {
            if !labels.contains(key) {
                labels.push(key.clone());
            }
        }
        labels.retain(|l| self.figures(l).is_some());
        // One label (a URL run) is the same as TOTAL: show it once.
        if labels.len() == 1 {
            labels.clear();
        }
        labels.push(TOTAL_LABEL.to_string());
        labels
    }

    pub fn figures(&self, label: &str) -> Option<&LabelFigures> {
        if label == TOTAL_LABEL {
            Some(&self.summary.total)
        } else {
            self.summary.labels.get(label)
        }
    }

    /// The seconds of `label` for per-second statistics: whole seconds with
    /// samples, and of a capacity level only those of its measurement.
    pub fn rows(&self, label: &str) -> Vec<&IntervalRow> {
        self.intervals
            .iter()
            .filter(|r| r.label == label && r.interval_s >= MIN_INTERVAL_S && r.count > 0)
            .filter(|r| self.measured(r.second))
            .collect()
    }

    /// False for a second of a capacity level's warm-up.
    pub fn measured(&self, second: u64) -> bool {
        self.manifest.measurement.as_ref().is_none_or(|m| {
            let s = second as f64 + 1e-6;
            s >= m.from_s && s < m.until_s
        })
    }
}

/// A JSON value (a fingerprint) as dotted fields and printable values;
/// arrays of plain values are joined with ", ", nulls left out.
pub fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Array(items) if items.iter().all(|v| !v.is_object() && !v.is_array()) => {
            let joined: Vec<String> = items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(String::from)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect();
            out.push((prefix.to_string(), joined.join(", ")));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Null => {}
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}
