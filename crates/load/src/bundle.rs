//! The run bundle on disk: `manifest.json`, `intervals.csv`, `latency.hlog`
//! and optionally `samples.jtl`. Interval files are appended and flushed
//! every second, and the manifest is written at the start (status
//! `running`) and replaced atomically at the end, so a crash keeps the data
//! up to the last second and a reader can tell the run did not finish.

use crate::hlog::HlogWriter;
use crate::jtl::{self, csv_field};
use crate::sample::ErrorKind;
use crate::summary::{RunStatus, RunSummary};
use crate::tally::Tally;
use headroom_analysis::LatencyStats;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub const SCHEMA_VERSION: u32 = 1;
pub const MANIFEST: &str = "manifest.json";
pub const INTERVALS: &str = "intervals.csv";
pub const LATENCY: &str = "latency.hlog";
pub const SAMPLES: &str = "samples.jtl";
/// The label under which `intervals.csv` gives the total over all labels.
pub const TOTAL_LABEL: &str = "TOTAL";

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{path} already holds a run bundle: choose another --out, or remove it")]
    Exists { path: PathBuf },
    #[error("cannot write the bundle at {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The host that generated the load (the full fingerprint arrives with monitoring).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientHost {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub cores: usize,
}

impl ClientHost {
    pub fn current() -> ClientHost {
        let hostname = fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        ClientHost {
            hostname,
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub kind: String,
    pub target: String,
    /// What was sent: for URL mode, method, URL, headers and label.
    pub scenario: serde_json::Value,
    /// How load was scheduled (model, users or rate, durations, think time, cap).
    pub profile: serde_json::Value,
    pub apdex_t_ms: f64,
    pub apdex_f_ms: f64,
    pub timeout_ms: f64,
    pub threads: usize,
    pub seed: u64,
    pub labels: Vec<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub elapsed_s: Option<f64>,
    pub status: RunStatus,
    pub client: ClientHost,
    /// The generator's environment (hardware, OS, governor, storage, ...).
    #[serde(default)]
    pub fingerprint: Option<headroom_monitor::Fingerprint>,
    /// The doctor's findings before the run.
    #[serde(default)]
    pub doctor: Vec<headroom_monitor::Finding>,
    /// Hosts monitored through agents: their fingerprints and findings.
    #[serde(default)]
    pub monitored_hosts: Vec<MonitoredHost>,
    pub warnings: Vec<serde_json::Value>,
    pub summary: Option<RunSummary>,
    pub files: Files,
}

/// A host monitored through an agent, as it was when the run started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitoredHost {
    /// host:port of its agent.
    pub agent: String,
    pub fingerprint: headroom_monitor::Fingerprint,
    pub doctor: Vec<headroom_monitor::Finding>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Files {
    pub intervals: String,
    pub latency: String,
    pub samples: Option<String>,
    #[serde(default)]
    pub resources: Option<String>,
    #[serde(default)]
    pub resources_detail: Option<String>,
}

impl Files {
    pub fn new(samples: bool) -> Files {
        Files {
            intervals: INTERVALS.into(),
            latency: LATENCY.into(),
            samples: samples.then(|| SAMPLES.into()),
            resources: None,
            resources_detail: None,
        }
    }
}

/// Reads a bundle's manifest, checking its schema version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, BundleError> {
    let value = crate::bundle_reader::manifest_value(dir)?;
    let path = dir.join(MANIFEST);
    serde_json::from_value(value).map_err(|e| BundleError::Invalid {
        path,
        reason: format!("unexpected content: {e}"),
    })
}

/// Maps an I/O error to a bundle error naming `dir`; borrows only the path,
/// so it can be used while a file of the bundle is borrowed mutably.
fn io_error(dir: &Path) -> impl Fn(io::Error) -> BundleError + Copy + '_ {
    move |source| BundleError::Io {
        path: dir.to_path_buf(),
        source,
    }
}

/// One finished interval, merged over all workers.
pub struct MergedInterval {
    pub index: u64,
    pub length: Duration,
    /// Per label; `None` when the label had no samples.
    pub tallies: Vec<Option<Tally>>,
    pub total: Tally,
    pub active_vus: u32,
    /// Busiest worker's CPU use as a fraction of the interval.
    pub worker_busy: f64,
    /// Most-starved worker's run-queue wait as a fraction of the interval.
    pub worker_wait: f64,
    pub loop_lag: Duration,
}

pub struct BundleWriter {
    dir: PathBuf,
    labels: Vec<String>,
    wall_start: SystemTime,
    intervals: BufWriter<File>,
    hlog: HlogWriter<BufWriter<File>>,
    samples: Option<BufWriter<File>>,
}

impl BundleWriter {
    /// Creates the bundle directory and its files, and writes the initial manifest.
    pub fn create(
        dir: &Path,
        manifest: &Manifest,
        wall_start: SystemTime,
    ) -> Result<BundleWriter, BundleError> {
        let io_err = io_error(dir);
        if dir.is_file() {
            return Err(BundleError::Invalid {
                path: dir.to_path_buf(),
                reason: "is a file, and a bundle is a directory: choose another --out".into(),
            });
        }
        if dir.join(MANIFEST).exists() {
            return Err(BundleError::Exists {
                path: dir.to_path_buf(),
            });
        }
        fs::create_dir_all(dir).map_err(io_err)?;
        let create = |name: &str| {
            File::create(dir.join(name))
                .map(BufWriter::new)
                .map_err(io_err)
        };
        let mut intervals = create(INTERVALS)?;
        let mut header = String::from("second,start_epoch_ms,interval_s,label,count,errors");
        for kind in ErrorKind::ALL {
            header.push_str(",errors_");
            header.push_str(kind.name());
        }
        header.push_str(",mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,service_mean_ms,ttfb_mean_ms,bytes_received,bytes_sent,active_vus,apdex_satisfied,apdex_tolerating,apdex_frustrated,generator_busy_pct,generator_wait_pct,generator_lag_ms");
        writeln!(intervals, "{header}").map_err(io_err)?;
        intervals.flush().map_err(io_err)?;
        let mut hlog = HlogWriter::new(create(LATENCY)?, wall_start).map_err(io_err)?;
        hlog.flush().map_err(io_err)?;
        let samples = if manifest.files.samples.is_some() {
            let mut f = create(SAMPLES)?;
            writeln!(f, "{}", jtl::HEADER).map_err(io_err)?;
            f.flush().map_err(io_err)?;
            Some(f)
        } else {
            None
        };
        let writer = BundleWriter {
            dir: dir.to_path_buf(),
            labels: manifest.labels.clone(),
            wall_start,
            intervals,
            hlog,
            samples,
        };
        writer.write_manifest(manifest)?;
        Ok(writer)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn io_err(&self, source: io::Error) -> BundleError {
        io_error(&self.dir)(source)
    }

    pub fn write_interval(&mut self, interval: &MergedInterval) -> Result<(), BundleError> {
        let start = Duration::from_secs(interval.index);
        let epoch_ms = self
            .wall_start
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64
            + interval.index * 1000;
        let rows = std::iter::once((TOTAL_LABEL, Some(&interval.total))).chain(
            self.labels
                .iter()
                .map(String::as_str)
                .zip(interval.tallies.iter().map(Option::as_ref)),
        );
        let mut text = String::new();
        for (label, tally) in rows {
            let Some(tally) = tally else { continue };
            use std::fmt::Write as _;
            let c = &tally.counts;
            let l = LatencyStats::of(&tally.response);
            let service = tally.service.mean() / 1000.0;
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            let ttfb = if c.ttfb_count == 0 {
                0.0
            } else {
                c.ttfb_micros as f64 / c.ttfb_count as f64 / 1000.0
            };
            let _ = write!(
                text,
                "{},{epoch_ms},{:.3},{},{},{}",
                interval.index,
                interval.length.as_secs_f64(),
                csv_field(label),
                c.count,
                c.errors
            );
            for n in c.errors_by_kind {
                let _ = write!(text, ",{n}");
            }
            let _ = writeln!(
                text,
                ",{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{service:.3},{ttfb:.3},{},{},{},{},{},{},{:.1},{:.1},{:.1}",
                ms(l.mean),
                ms(l.p50),
                ms(l.p90),
                ms(l.p95),
                ms(l.p99),
                ms(l.max),
                c.bytes_received,
                c.bytes_sent,
                interval.active_vus,
                c.apdex.satisfied,
                c.apdex.tolerating,
                c.apdex.frustrated,
                interval.worker_busy * 100.0,
                interval.worker_wait * 100.0,
                ms(interval.loop_lag),
            );
        }
        self.intervals
            .write_all(text.as_bytes())
            .map_err(|e| self.io_err(e))?;
        self.intervals.flush().map_err(|e| self.io_err(e))?;
        self.hlog
            .write(&interval.total.response, start, interval.length, None)
            .map_err(io_error(&self.dir))?;
        for (label, tally) in self.labels.iter().zip(&interval.tallies) {
            if let Some(tally) = tally {
                self.hlog
                    .write(&tally.response, start, interval.length, Some(label))
                    .map_err(io_error(&self.dir))?;
            }
        }
        self.hlog.flush().map_err(|e| self.io_err(e))?;
        if let Some(samples) = &mut self.samples {
            samples.flush().map_err(io_error(&self.dir))?;
        }
        Ok(())
    }

    /// Appends raw-sample lines (flushed with the next interval).
    pub fn write_samples(&mut self, lines: &[u8]) -> Result<(), BundleError> {
        if let Some(samples) = &mut self.samples {
            samples.write_all(lines).map_err(io_error(&self.dir))?;
        }
        Ok(())
    }

    /// Writes the manifest atomically (temporary file, then rename).
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), BundleError> {
        let text =
            serde_json::to_string_pretty(manifest).map_err(|e| self.io_err(io::Error::other(e)))?;
        let tmp = self.dir.join("manifest.json.tmp");
        if let Err(e) = fs::write(&tmp, text + "\n") {
            let _ = fs::remove_file(&tmp);
            return Err(self.io_err(e));
        }
        fs::rename(&tmp, self.dir.join(MANIFEST)).map_err(|e| self.io_err(e))
    }

    /// Flushes everything and writes the final manifest.
    pub fn finish(mut self, manifest: &Manifest) -> Result<PathBuf, BundleError> {
        self.intervals.flush().map_err(|e| self.io_err(e))?;
        self.hlog.flush().map_err(|e| self.io_err(e))?;
        if let Some(samples) = &mut self.samples {
            samples.flush().map_err(io_error(&self.dir))?;
        }
        self.write_manifest(manifest)?;
        Ok(self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "headroom".into(),
                version: "0".into(),
            },
            command_line: vec!["headroom".into()],
            kind: "load".into(),
            target: "http://127.0.0.1/".into(),
            scenario: serde_json::json!({}),
            profile: serde_json::json!({}),
            apdex_t_ms: 500.0,
            apdex_f_ms: 1500.0,
            timeout_ms: 30000.0,
            threads: 1,
            seed: 1,
            labels: vec!["/".into()],
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: None,
            elapsed_s: None,
            status: RunStatus::Running,
            client: ClientHost::current(),
            fingerprint: None,
            doctor: Vec::new(),
            monitored_hosts: Vec::new(),
            warnings: Vec::new(),
            summary: None,
            files: Files::new(false),
        }
    }

    #[test]
    fn manifests_read_back_and_bad_ones_are_named() {
        let dir = std::env::temp_dir().join(format!("headroom-bundle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let writer = BundleWriter::create(&dir, &manifest(), SystemTime::now()).unwrap();
        assert_eq!(
            read_manifest(&dir).unwrap().status,
            RunStatus::Running,
            "readable while running"
        );
        let mut done = manifest();
        done.status = RunStatus::Complete;
        writer.finish(&done).unwrap();
        assert_eq!(read_manifest(&dir).unwrap().status, RunStatus::Complete);
        assert!(matches!(
            BundleWriter::create(&dir, &done, SystemTime::now()),
            Err(BundleError::Exists { .. })
        ));

        let path = dir.join(MANIFEST);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(
            &path,
            text.replace("\"schema_version\": 1", "\"schema_version\": 9"),
        )
        .unwrap();
        let error = read_manifest(&dir).unwrap_err().to_string();
        assert!(
            error.contains("schema version 9") && error.contains("reads version 1"),
            "{error}"
        );
        fs::write(&path, &text[..text.len() / 2]).unwrap();
        let error = read_manifest(&dir).unwrap_err().to_string();
        assert!(error.contains("truncated"), "{error}");
    }
}
