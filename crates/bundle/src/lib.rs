//! What headroom keeps on disk, in one place. A run bundle is a directory:
//!
//! | file | written by | what it holds |
//! |---|---|---|
//! | [`MANIFEST`] | [`manifest`] (what was sent: [`scenario_record`]) | what ran, where, how, and the summary |
//! | [`INTERVALS`] | [`writer`] (columns in [`intervals`]) | per second and label: counts, errors by kind, percentiles, Apdex counts |
//! | [`LATENCY`] | [`hlog`] | per second: HdrHistograms of response times (total and per label) |
//! | [`SAMPLES`] | [`jtl`] | one JMeter CSV line per request (with `--samples`) |
//! | [`RESOURCES`] | [`resources`] | per second and monitored host: CPU, memory, disk, network, processes |
//! | [`RESOURCES_DETAIL`] | [`resources`] | the same seconds, every figure (per core, device, sensor) as JSON lines |
//! | [`EVENTS`] | [`events`] | the run's events (faults: commands run at a moment of the run) and their outcome |
//!
//! The manifest's `label_roles` say which labels are pages and their
//! requests; [`wire`] counts the requests a run with page loads sent.
//!
//! A bench keeps its figures in [`bench::BENCH`] ([`bench`]).
//!
//! A capacity search keeps one bundle per level under its own directory and
//! writes [`CAPACITY`] ([`capacity`]) beside them. An experiment keeps one
//! bundle (or capacity search) per run under its directory, with its own
//! files (runs.csv, cells.csv, experiment.json) described and written by
//! `headroom_experiment::store`.
//!
//! Readers ([`reader`], [`manifest::read_manifest`], [`capacity::read`])
//! check what they read and say which file and line is wrong; a run that
//! died while writing is rebuilt by [`recovery`].

pub mod bench;
pub mod capacity;
pub mod events;
pub mod failures;
pub mod hlog;
pub mod intervals;
pub mod jtl;
pub mod jtl_import;
pub mod jtl_input;
pub mod jtl_read;
pub mod limits;
pub mod manifest;
pub mod merge;
pub mod phases;
pub mod reader;
pub mod recovery;
pub mod resources;
pub mod sample;
pub mod scenario_record;
pub mod server_timing;
pub mod summary;
pub mod tally;
pub mod warnings;
pub mod wire;
pub mod writer;

use std::io;
use std::path::{Path, PathBuf};

/// The version of every file's layout; readers refuse another.
pub const SCHEMA_VERSION: u32 = 1;
pub const MANIFEST: &str = "manifest.json";
pub const INTERVALS: &str = "intervals.csv";
pub const LATENCY: &str = "latency.hlog";
pub const SAMPLES: &str = "samples.jtl";
pub const RESOURCES: &str = "resources.csv";
pub const RESOURCES_DETAIL: &str = "resources.jsonl";
pub const EVENTS: &str = "events.csv";
/// A capacity search's result, in the search's directory.
pub const CAPACITY: &str = "capacity.json";
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

pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> BundleError {
    BundleError::Invalid {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Reads a JSON file of headroom's, checking its schema version; `what`
/// names it in errors ("a capacity result").
pub(crate) fn read_versioned_json(
    path: &Path,
    what: &str,
) -> Result<serde_json::Value, BundleError> {
    let text = std::fs::read_to_string(path).map_err(read_error(path))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        invalid(
            path,
            format!("not valid JSON ({e}); the file is truncated or not {what}"),
        )
    })?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => Ok(value),
        Some(v) => Err(invalid(
            path,
            format!("schema version {v}; this headroom reads version {SCHEMA_VERSION}. Use a matching headroom version"),
        )),
        None => Err(invalid(path, format!("no schema_version: not {what}"))),
    }
}

pub(crate) fn read_error(path: &Path) -> impl Fn(io::Error) -> BundleError + '_ {
    move |source| BundleError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// Maps an I/O error to a bundle error naming `dir`; borrows only the path,
/// so it can be used while a file of the bundle is borrowed mutably.
pub(crate) fn io_error(dir: &Path) -> impl Fn(io::Error) -> BundleError + Copy + '_ {
    move |source| BundleError::Io {
        path: dir.to_path_buf(),
        source,
    }
}

/// True when `dir` holds a run bundle (a manifest), as opposed to a
/// capacity search's directory.
pub fn is_run(dir: &Path) -> bool {
    dir.join(MANIFEST).exists()
}

/// True when `dir` is a capacity search's directory.
pub fn is_capacity(dir: &Path) -> bool {
    dir.join(CAPACITY).exists() && !is_run(dir)
}
