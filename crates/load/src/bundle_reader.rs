//! Reading bundles back (for `compare` and reports): the manifest as JSON,
//! the per-second intervals and the per-second resources. Every error names
//! the file and says what is wrong with it.

use crate::bundle::{BundleError, INTERVALS, LATENCY, MANIFEST, SCHEMA_VERSION};
use hdrhistogram::Histogram;
use std::fs;
use std::path::Path;

pub const RESOURCES: &str = "resources.csv";

/// One row of intervals.csv (the columns `compare` and reports use).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    pub second: u64,
    pub interval_s: f64,
    pub label: String,
    pub count: u64,
    pub errors: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub active_vus: u64,
    pub apdex_satisfied: u64,
    pub apdex_tolerating: u64,
    pub apdex_frustrated: u64,
}

/// One row of resources.csv: a host's aggregates in one second.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub second: u64,
    pub host: String,
    pub cpu_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    pub disk_util_pct: Option<f64>,
    pub net_mbit_s: Option<f64>,
    /// The busiest interface's share of its link, when the capacity is known.
    pub net_link_pct: Option<f64>,
    pub temperature_max_c: Option<f64>,
    pub cpu_mhz: Option<f64>,
    /// A Raspberry Pi's throttling now; `None` elsewhere.
    pub throttled: Option<bool>,
}

fn read_error(path: &Path) -> impl Fn(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Read {
        path: path.to_path_buf(),
        source,
    }
}

fn invalid(path: &Path, reason: impl Into<String>) -> BundleError {
    BundleError::Invalid {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The manifest as JSON, after checking that it is one and of our schema.
pub fn manifest_value(dir: &Path) -> Result<serde_json::Value, BundleError> {
    let path = dir.join(MANIFEST);
    if !dir.is_dir() {
        return Err(invalid(dir, "no such bundle directory"));
    }
    let text = fs::read_to_string(&path).map_err(read_error(&path))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        invalid(
            &path,
            format!("not valid JSON ({e}); the file is truncated or not a headroom manifest"),
        )
    })?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => Ok(value),
        Some(v) => Err(invalid(
            &path,
            format!("schema version {v}; this headroom reads version {SCHEMA_VERSION}. Use a matching headroom version"),
        )),
        None => Err(invalid(&path, "no schema_version: not a headroom bundle")),
    }
}

/// A CSV file of the bundle and its header row.
fn open_csv(path: &Path) -> Result<(csv::Reader<fs::File>, csv::StringRecord), BundleError> {
    let file = fs::File::open(path).map_err(read_error(path))?;
    let mut reader = csv::Reader::from_reader(file);
    let headers = reader
        .headers()
        .map_err(|e| invalid(path, e.to_string()))?
        .clone();
    Ok((reader, headers))
}

/// The records of a bundle's CSV file with their line numbers. A last
/// line cut short (a run that died while writing it) is left out; damage
/// anywhere else is an error that names its line.
fn whole_records(
    path: &Path,
    reader: &mut csv::Reader<fs::File>,
) -> Result<Vec<(u64, csv::StringRecord)>, BundleError> {
    let mut out = Vec::new();
    let mut records = reader.records();
    let mut line = 1;
    while let Some(record) = records.next() {
        line += 1;
        match record {
            Ok(record) => out.push((line, record)),
            Err(_) if records.next().is_none() => break,
            Err(e) => return Err(invalid(path, format!("line {line}: {e}"))),
        }
    }
    Ok(out)
}

fn columns(
    path: &Path,
    headers: &csv::StringRecord,
    names: &[&str],
) -> Result<Vec<usize>, BundleError> {
    names
        .iter()
        .map(|name| {
            headers
                .iter()
                .position(|h| h == *name)
                .ok_or_else(|| invalid(path, format!("no column '{name}'")))
        })
        .collect()
}

fn number<T: std::str::FromStr>(
    path: &Path,
    line: u64,
    column: &str,
    text: &str,
) -> Result<T, BundleError> {
    text.parse().map_err(|_| {
        invalid(
            path,
            format!("line {line}: '{text}' in column {column} is not a number"),
        )
    })
}

/// Every row of intervals.csv.
pub fn read_intervals(dir: &Path) -> Result<Vec<IntervalRow>, BundleError> {
    let path = dir.join(INTERVALS);
    let (mut reader, headers) = open_csv(&path)?;
    const NAMES: [&str; 14] = [
        "second",
        "interval_s",
        "label",
        "count",
        "errors",
        "mean_ms",
        "p50_ms",
        "p90_ms",
        "p95_ms",
        "apdex_satisfied",
        "apdex_tolerating",
        "apdex_frustrated",
        "p99_ms",
        "active_vus",
    ];
    let at = columns(&path, &headers, &NAMES)?;
    let mut rows = Vec::new();
    for (line, record) in whole_records(&path, &mut reader)? {
        let field = |k: usize| record.get(at[k]).unwrap_or("");
        let int = |k: usize| number::<u64>(&path, line, NAMES[k], field(k));
        let float = |k: usize| number::<f64>(&path, line, NAMES[k], field(k));
        rows.push(IntervalRow {
            second: int(0)?,
            interval_s: float(1)?,
            label: field(2).to_string(),
            count: int(3)?,
            errors: int(4)?,
            mean_ms: float(5)?,
            p50_ms: float(6)?,
            p90_ms: float(7)?,
            p95_ms: float(8)?,
            apdex_satisfied: int(9)?,
            apdex_tolerating: int(10)?,
            apdex_frustrated: int(11)?,
            p99_ms: float(12)?,
            active_vus: int(13)?,
        });
    }
    Ok(rows)
}

/// The whole run's response times (µs): the sum of latency.hlog's untagged
/// histograms; `None` when the file is missing.
pub fn read_latency(dir: &Path) -> Result<Option<Histogram<u64>>, BundleError> {
    read_latency_window(dir, 0.0, f64::INFINITY)
}

/// The response times of the seconds from `from_s` to before `until_s` (a
/// capacity level's measurement after its warm-up).
pub fn read_latency_window(
    dir: &Path,
    from_s: f64,
    until_s: f64,
) -> Result<Option<Histogram<u64>>, BundleError> {
    let path = dir.join(LATENCY);
    let mut total = headroom_analysis::new_histogram();
    let mut added = Ok(());
    let found = visit_hlog(dir, false, |tag, start_s, histogram| {
        let start = start_s + 1e-6;
        if tag.is_none() && start >= from_s && start < until_s && added.is_ok() {
            added = total
                .add(histogram)
                .map_err(|e| invalid(&path, format!("a histogram does not add up: {e:?}")));
        }
    })?;
    added?;
    Ok(found.then_some(total))
}

/// Calls `visit` with each interval histogram of latency.hlog: its tag, its
/// start in seconds from the run's start, the histogram. False when the
/// file is missing. Damage is an error naming its line, or, with
/// `up_to_damage` (a run that died while writing), the end of what is read.
pub fn visit_hlog(
    dir: &Path,
    up_to_damage: bool,
    mut visit: impl FnMut(Option<&str>, f64, &Histogram<u64>),
) -> Result<bool, BundleError> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let path = dir.join(LATENCY);
    if !path.exists() {
        return Ok(false);
    }
    let text = fs::read(&path).map_err(read_error(&path))?;
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(&text) {
        let decoded = match entry {
            Ok(LogEntry::Interval(interval)) => base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .map_err(|e| format!("a histogram is not base64: {e}"))
                .and_then(|bytes| {
                    deserializer
                        .deserialize::<u64, _>(&mut &bytes[..])
                        .map_err(|e| format!("a histogram does not decode: {e:?}"))
                })
                .map(|h| (interval, h)),
            Ok(_) => continue,
            Err(hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                offset,
            }) => {
                let line = text[..offset.min(text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
                    + 1;
                Err(format!("line {line} is not an HdrHistogram interval log line: the file is damaged or was not written by headroom"))
            }
        };
        match decoded {
            Ok((interval, histogram)) => visit(
                interval.tag().map(|t| t.as_str()),
                interval.start_timestamp().as_secs_f64(),
                &histogram,
            ),
            Err(_) if up_to_damage => break,
            Err(reason) => return Err(invalid(&path, reason)),
        }
    }
    Ok(true)
}

/// Per second and host, each core's busy % (from resources.jsonl); empty
/// when the run monitored nothing.
pub fn read_core_loads(dir: &Path) -> Result<Vec<(u64, String, Vec<f64>)>, BundleError> {
    let path = dir.join("resources.jsonl");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = fs::read_to_string(&path).map_err(read_error(&path))?;
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| invalid(&path, format!("line {}: {e}", i + 1)))?;
        let second = value.get("second").and_then(|v| v.as_u64());
        let host = value.get("host").and_then(|v| v.as_str());
        let cores = value
            .pointer("/resources/per_core_pct")
            .and_then(|v| v.as_array());
        if let (Some(second), Some(host), Some(cores)) = (second, host, cores) {
            let cores = cores.iter().filter_map(|c| c.as_f64()).collect();
            rows.push((second, host.to_string(), cores));
        }
    }
    Ok(rows)
}

/// resources.csv, or `None` when the run monitored nothing.
pub fn read_resources(dir: &Path) -> Result<Option<Vec<ResourceRow>>, BundleError> {
    let path = dir.join(RESOURCES);
    if !path.exists() {
        return Ok(None);
    }
    let (mut reader, headers) = open_csv(&path)?;
    let at = columns(&path, &headers, &["second", "host"])?;
    let optional = |name: &str| headers.iter().position(|h| h == name);
    let (mhz, throttled, link) = (
        optional("cpu_mhz"),
        optional("throttled"),
        optional("net_link_pct"),
    );
    let (cpu, memory, disk, rx, tx, temperature) = (
        optional("cpu_pct"),
        optional("memory_used_pct"),
        optional("disk_util_pct"),
        optional("net_rx_mbit_s"),
        optional("net_tx_mbit_s"),
        optional("temperature_max_c"),
    );
    let mut rows = Vec::new();
    for (line, record) in whole_records(&path, &mut reader)? {
        let value = |column: Option<usize>| -> Option<f64> {
            column
                .and_then(|c| record.get(c))
                .filter(|t| !t.is_empty())
                .and_then(|t| t.parse().ok())
        };
        let net = match (value(rx), value(tx)) {
            (Some(r), Some(t)) => Some(r + t),
            (r, t) => r.or(t),
        };
        rows.push(ResourceRow {
            second: number(&path, line, "second", record.get(at[0]).unwrap_or(""))?,
            host: record.get(at[1]).unwrap_or("").to_string(),
            cpu_pct: value(cpu),
            memory_used_pct: value(memory),
            disk_util_pct: value(disk),
            net_mbit_s: net,
            net_link_pct: value(link),
            temperature_max_c: value(temperature),
            cpu_mhz: value(mhz),
            throttled: value(throttled).map(|v| v > 0.0),
        });
    }
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("headroom-reader-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_intervals_and_names_bad_values() {
        let d = dir("intervals");
        fs::write(
            d.join(INTERVALS),
            "second,start_epoch_ms,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,apdex_satisfied,apdex_tolerating,apdex_frustrated,active_vus\n\
             0,1,1.000,TOTAL,10,1,5.5,5,9,9.5,9.9,8,1,1,4\n",
        )
        .unwrap();
        let rows = read_intervals(&d).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].count, rows[0].errors, rows[0].p90_ms),
            (10, 1, 9.0)
        );
        fs::write(
            d.join(INTERVALS),
            "second,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,apdex_satisfied,apdex_tolerating,apdex_frustrated,active_vus\n\
             0,1.0,TOTAL,ten,1,5.5,5,9,9.5,9.9,8,1,1,4\n",
        )
        .unwrap();
        let err = read_intervals(&d).unwrap_err().to_string();
        assert!(err.contains("line 2: 'ten' in column count"), "{err}");
        fs::write(d.join(INTERVALS), "second,label\n0,TOTAL\n").unwrap();
        assert!(read_intervals(&d)
            .unwrap_err()
            .to_string()
            .contains("no column 'interval_s'"));
        assert_eq!(read_resources(&d).unwrap(), None);
    }

    #[test]
    fn manifests_of_other_schemas_or_truncated_are_refused() {
        let d = dir("manifest");
        fs::write(d.join(MANIFEST), "{\"schema_version\": 2}").unwrap();
        let err = manifest_value(&d).unwrap_err().to_string();
        assert!(
            err.contains("schema version 2; this headroom reads version 1"),
            "{err}"
        );
        fs::write(d.join(MANIFEST), "{\"schema_version\": 1, \"sta").unwrap();
        assert!(manifest_value(&d)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let missing = manifest_value(&d.join("nope")).unwrap_err().to_string();
        assert!(missing.contains("no such bundle directory"), "{missing}");
    }
}
