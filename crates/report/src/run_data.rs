//! One finished run read back from its bundle: manifest, per-second
//! intervals, resources and (for reports) the whole run's latency histogram.

use hdrhistogram::Histogram;
use headroom_load::bundle::{BundleError, TOTAL_LABEL};
use headroom_load::bundle_reader::{
    manifest_value, read_intervals, read_latency, read_resources, IntervalRow, ResourceRow,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Seconds shorter than this (the last, partial one) are left out of
/// per-second statistics.
pub const MIN_INTERVAL_S: f64 = 0.5;

/// One run read from its bundle.
pub struct RunData {
    pub name: String,
    pub bundle: PathBuf,
    pub manifest: Value,
    pub intervals: Vec<IntervalRow>,
    pub resources: Option<Vec<ResourceRow>>,
    /// The whole run's response times in µs, when read.
    pub latency: Option<Histogram<u64>>,
}

impl RunData {
    /// Reads a bundle. A run whose process died before writing its summary
    /// (status `running`) gets one rebuilt from intervals.csv and
    /// latency.hlog, and the manifest read says so (`recovered`: true,
    /// status `died`; the file itself is left as it is).
    pub fn load(dir: &Path, name: &str) -> Result<RunData, BundleError> {
        let mut manifest = manifest_value(dir)?;
        if manifest.pointer("/summary/total").is_none() {
            let summary = headroom_load::recovery::recover_summary(dir, &manifest)?;
            manifest["elapsed_s"] = summary.elapsed_s.into();
            manifest["summary"] = serde_json::to_value(summary).unwrap_or(Value::Null);
            manifest["recovered"] = Value::Bool(true);
            manifest["status"] = "died".into();
        }
        Ok(RunData {
            name: name.to_string(),
            bundle: dir.to_path_buf(),
            intervals: read_intervals(dir)?,
            resources: read_resources(dir)?,
            latency: None,
            manifest,
        })
    }

    /// True when the run died and its figures were rebuilt from its files.
    pub fn recovered(&self) -> bool {
        self.manifest["recovered"] == Value::Bool(true)
    }

    /// Also reads latency.hlog (for the percentile spectrum).
    pub fn with_latency(mut self) -> Result<RunData, BundleError> {
        self.latency = if self.recovered() {
            // Up to the last whole line the run wrote.
            headroom_load::recovery::read_histograms(&self.bundle)?.remove(&None)
        } else {
            read_latency(&self.bundle)?
        };
        Ok(self)
    }

    /// The labels in the run's order, then TOTAL.
    pub fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self
            .manifest
            .get("labels")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|l| l.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(map) = self
            .manifest
            .pointer("/summary/labels")
            .and_then(Value::as_object)
        {
            for key in map.keys() {
                if !labels.contains(key) {
                    labels.push(key.clone());
                }
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

    pub fn figures(&self, label: &str) -> Option<&Value> {
        if label == TOTAL_LABEL {
            self.manifest.pointer("/summary/total")
        } else {
            self.manifest.pointer("/summary/labels")?.get(label)
        }
    }

    pub fn rows(&self, label: &str) -> Vec<&IntervalRow> {
        self.intervals
            .iter()
            .filter(|r| r.label == label && r.interval_s >= MIN_INTERVAL_S && r.count > 0)
            .collect()
    }
}

/// A manifest's string at `pointer`, or "".
pub fn text<'a>(manifest: &'a Value, pointer: &str) -> &'a str {
    manifest
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
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
