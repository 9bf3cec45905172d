//! Writing a run bundle while the run goes: `intervals.csv` and
//! `latency.hlog` are appended and flushed every second (and `samples.jtl`
//! with them), and the manifest is written at the start and replaced at
//! the end, so a crash keeps the data up to the last second.

use crate::hlog::HlogWriter;
use crate::intervals;
use crate::jtl;
use crate::manifest::{write_manifest, Manifest};
use crate::tally::Tally;
use crate::{io_error, BundleError, INTERVALS, LATENCY, MANIFEST, SAMPLES, TOTAL_LABEL};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// One finished interval, merged over all workers.
pub struct MergedInterval {
    pub index: u64,
    pub length: Duration,
    /// Per label; `None` when the label had no samples.
    pub tallies: Vec<Option<Tally>>,
    pub total: Tally,
    pub active_vus: u32,
    /// Users who arrived (started) in the interval.
    pub arrivals: u32,
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
        let header = intervals::header();
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
        let generator = intervals::Generator {
            active_vus: interval.active_vus,
            arrivals: interval.arrivals,
            busy: interval.worker_busy,
            wait: interval.worker_wait,
            loop_lag: interval.loop_lag,
        };
        let mut text = String::new();
        for (label, tally) in rows {
            if let Some(tally) = tally {
                intervals::write_row(
                    &mut text,
                    interval.index,
                    epoch_ms,
                    interval.length,
                    label,
                    tally,
                    &generator,
                );
            }
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
        write_manifest(&self.dir, manifest)
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
    use crate::manifest::{read_manifest, ClientHost, Files, Tool};
    use crate::summary::RunStatus;
    use crate::SCHEMA_VERSION;

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
            scenario: None,
            profile: crate::manifest::ProfileRecord::default(),
            apdex_t_ms: 500.0,
            apdex_f_ms: 1500.0,
            timeout_ms: 30000.0,
            threads: 1,
            seed: 1,
            labels: vec!["/".into()],
            label_roles: Default::default(),
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
            measurement: None,
            save_failures: None,
            shard: None,
            merged: None,
            files: Files::new(false),
            connections: Vec::new(),
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
