//! The run's manifest (`manifest.json`): what ran, against what, how, on
//! which machines, and (once the run ends) its summary. It is written at the
//! start with status `running` and replaced atomically at the end.

use crate::scenario_record::ScenarioRecord;
use crate::summary::{RunStatus, RunSummary};
use crate::{
    invalid, io_error, read_error, BundleError, INTERVALS, LATENCY, MANIFEST, SAMPLES,
    SCHEMA_VERSION,
};
use headroom_units::quantity::count;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The host that generated the load (the full fingerprint arrives with monitoring).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    pub kind: String,
    pub target: String,
    /// What was sent: a URL's request, a journey file or imported JMeter
    /// results (none in a manifest that has no such section).
    #[serde(deserialize_with = "crate::scenario_record::optional")]
    pub scenario: Option<ScenarioRecord>,
    /// How load was scheduled (model, users or rate, durations, think time, cap).
    pub profile: ProfileRecord,
    pub apdex_t_ms: f64,
    pub apdex_f_ms: f64,
    pub timeout_ms: f64,
    pub threads: usize,
    pub seed: u64,
    pub labels: Vec<String>,
    /// The labels that are not plain requests (pages, their requests,
    /// groups), by name; absent in bundles written before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub label_roles: BTreeMap<String, crate::wire::LabelRole>,
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
    /// The figures: of the whole run, or, with `measurement`, of the
    /// measured seconds only.
    pub summary: Option<RunSummary>,
    /// A run whose first seconds were a warm-up (a capacity level): which
    /// seconds `summary` covers, and the whole run's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// Failed exchanges kept per label (`--save-failures`; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_failures: Option<u32>,
    /// One shard of a run split over several generators (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// A run merged from its shards (`headroom merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeRecord>,
    pub files: Files,
    /// What each origin's connections speak, as the run's check found
    /// (absent in bundles written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<Negotiated>,
}

/// What one origin's connections speak: the HTTP version asked for and
/// the one agreed on, TLS's version and cipher suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negotiated {
    /// The origin (scheme, host and port).
    pub origin: String,
    /// What was asked: `1.1`, `2` or `auto`.
    pub asked: String,
    /// `HTTP/1.1` or `HTTP/2`.
    pub protocol: String,
    /// `TLSv1.3`, `TLSv1.2`; none without TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<String>,
    /// The cipher suite, as IANA names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
}

impl Negotiated {
    /// A line for the terminal: "https://host:443 speaks HTTP/2 (TLSv1.3,
    /// TLS13_AES_256_GCM_SHA384)".
    pub fn describe(&self) -> String {
        let mut text = format!("{} speaks {}", self.origin, self.protocol);
        if let (Some(version), Some(cipher)) = (&self.tls_version, &self.cipher) {
            text.push_str(&format!(" ({version}, {cipher})"));
        }
        if self.asked == "auto" && self.protocol == "HTTP/1.1" && self.tls_version.is_some() {
            text.push_str(
                ": it did not offer HTTP/2 in its TLS handshake (ALPN), so the users speak HTTP/1.1",
            );
        }
        text
    }
}

/// A shard's place in the split run, its planned start and its clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// From 0.
    pub index: u32,
    pub count: u32,
    /// The start every shard was given (`--start-at`, or `--start-in`
    /// from the barrier), RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// This generator's clock against a reference all shards share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockRecord>,
}

/// How far this machine's clock is from a common reference.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockRecord {
    /// What was asked: `agent HOST:PORT` or `Date header of URL`.
    pub reference: String,
    /// The reference's time minus this machine's, in ms.
    pub offset_ms: f64,
    /// The offset is known to within this many ms either way.
    pub uncertainty_ms: f64,
}

/// The largest clock offset (and uncertainty) a shard may record: a day.
/// Shards start together within seconds (`--start-at`, or `--start-in`
/// from a barrier), so an offset beyond this is a damaged manifest, not a
/// clock.
pub const MOST_CLOCK_OFFSET_MS: f64 = 86_400_000.0;

impl ClockRecord {
    /// Refuses numbers no measured clock gives: not finite, an offset of
    /// more than a day either way, a negative uncertainty or one of more
    /// than a day. The error names the field.
    pub fn check(&self) -> Result<(), String> {
        let day = MOST_CLOCK_OFFSET_MS;
        if !(self.offset_ms.is_finite() && self.offset_ms.abs() <= day) {
            return Err(format!(
                "shard.clock.offset_ms is {}: not a clock offset (at most a day, {day:.0} ms, either way)",
                as_written(self.offset_ms)
            ));
        }
        if !(self.uncertainty_ms.is_finite() && (0.0..=day).contains(&self.uncertainty_ms)) {
            return Err(format!(
                "shard.clock.uncertainty_ms is {}: not an uncertainty (0 to a day, {day:.0} ms)",
                as_written(self.uncertainty_ms)
            ));
        }
        Ok(())
    }
}

/// A number as a manifest would hold it: 1e300, not 301 digits.
fn as_written(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// What `headroom merge` made this bundle from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    pub shards: Vec<MergedShard>,
    /// Why the figures are not the whole planned run (empty: they are).
    pub partial: Vec<String>,
    /// A shard that started later than this after the planned start (or
    /// the first shard) counts as late.
    pub tolerance_ms: f64,
}

/// One shard as the merge found it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    pub index: u32,
    pub dir: String,
    pub hostname: String,
    pub status: String,
    pub started_at: String,
    /// After the planned start (or the earliest shard), in ms.
    pub late_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    pub count: u64,
    pub errors: u64,
    pub warnings: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<headroom_monitor::Fingerprint>,
}

impl MergedShard {
    /// "shard 1 on pi-2: 1000 requests, 0 errors, complete, started +2 ms".
    pub fn describe(&self) -> String {
        format!(
            "shard {} on {}: {} requests, {} errors, {}, started {:+.0} ms{}",
            self.index,
            if self.hostname.is_empty() {
                "?"
            } else {
                &self.hostname
            },
            self.count,
            self.errors,
            self.status,
            self.late_ms,
            self.clock_offset_ms
                .map(|o| format!(", clock {o:+.1} ms from the reference"))
                .unwrap_or_default()
        )
    }
}

/// The measured part of a run that began with a warm-up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// The warm-up: seconds 0 to `from_s` are not in the summary.
    pub from_s: f64,
    pub until_s: f64,
    /// The whole run's figures, warm-up included.
    pub whole_run: RunSummary,
}

/// A host monitored through an agent, as it was when the run started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitoredHost {
    /// host:port of its agent.
    pub agent: String,
    pub fingerprint: headroom_monitor::Fingerprint,
    pub doctor: Vec<headroom_monitor::Finding>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Files {
    pub intervals: String,
    pub latency: String,
    pub samples: Option<String>,
    #[serde(default)]
    pub resources: Option<String>,
    #[serde(default)]
    pub resources_detail: Option<String>,
    /// `events.csv`, when the run had faults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<String>,
    /// `failures/index.jsonl`, when failed exchanges were kept (`--save-failures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<String>,
    /// `replay.csv`, a row a request of the log a replay sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
}

impl Files {
    pub fn new(samples: bool) -> Files {
        Files {
            intervals: INTERVALS.into(),
            latency: LATENCY.into(),
            samples: samples.then(|| SAMPLES.into()),
            resources: None,
            resources_detail: None,
            events: None,
            failures: None,
            replay: None,
        }
    }
}

/// How load was scheduled, as recorded: the model's fields (those that
/// apply to it), the think time between requests and the throughput cap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// `closed`, `open`, `lesson`, `ramping_users` or `ramping_rate`.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_up_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_vus: Option<u32>,
    /// Ramping models: the stages as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<serde_json::Value>,
    #[serde(default)]
    pub think: ThinkRecord,
    #[serde(default)]
    pub throughput_cap_per_s: Option<f64>,
    /// Scenario runs with `--iterations`: each user's iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_per_vu: Option<u64>,
    /// Open model: each arrival a new user for this long (`once` or a
    /// duration as text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Lesson: the students and the time within which they arrive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub students: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrive_within_s: Option<f64>,
    /// Lesson: the planned arrivals in each second from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals_per_second: Option<Vec<u32>>,
}

/// The think time between a user's requests, as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThinkRecord {
    #[default]
    None,
    Constant {
        time_s: f64,
    },
    Gaussian {
        mean_s: f64,
        deviation_s: f64,
    },
    Uniform {
        min_s: f64,
        max_s: f64,
    },
    Exponential {
        mean_s: f64,
    },
    LogNormal {
        mean_s: f64,
        deviation_s: f64,
    },
}

impl ThinkRecord {
    /// The mean think time in seconds.
    pub fn mean_s(&self) -> f64 {
        match *self {
            ThinkRecord::None => 0.0,
            ThinkRecord::Constant { time_s } => time_s,
            ThinkRecord::Gaussian { mean_s, .. }
            | ThinkRecord::Exponential { mean_s }
            | ThinkRecord::LogNormal { mean_s, .. } => mean_s,
            ThinkRecord::Uniform { min_s, max_s } => (min_s + max_s) / 2.0,
        }
    }

    /// "1 s", "1–3 s (uniform)", "2 s ± 0.5 s (Gaussian)", "30 s on
    /// average (exponential)", "30 s ± 20 s (log-normal)", or "none".
    pub fn describe(&self) -> String {
        match *self {
            ThinkRecord::None => "none".into(),
            ThinkRecord::Constant { time_s } => format!("{} s", seconds(time_s)),
            ThinkRecord::Gaussian {
                mean_s,
                deviation_s,
            } => format!(
                "{} s ± {} s (Gaussian)",
                seconds(mean_s),
                seconds(deviation_s)
            ),
            ThinkRecord::Uniform { min_s, max_s } => {
                format!("{}–{} s (uniform)", seconds(min_s), seconds(max_s))
            }
            ThinkRecord::Exponential { mean_s } => {
                format!("{} s on average (exponential)", seconds(mean_s))
            }
            ThinkRecord::LogNormal {
                mean_s,
                deviation_s,
            } => format!(
                "{} s ± {} s (log-normal)",
                seconds(mean_s),
                seconds(deviation_s)
            ),
        }
    }
}

/// Seconds without a needless ".0": 15, 2.5, 0.25.
fn seconds(s: f64) -> String {
    let text = format!("{s:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl ProfileRecord {
    /// The profile as a person would say it: "closed model: 50 users for
    /// 15 s (2 s ramp-up), think time 1–3 s (uniform)".
    pub fn describe(&self) -> String {
        let mut text = match self.model.as_str() {
            "closed" => {
                let users = self.users.unwrap_or(0) as usize;
                let mut t = format!("closed model: {}", count(users, "user", "users"));
                match (self.duration_s, self.requests) {
                    (Some(d), _) => t.push_str(&format!(" for {} s", seconds(d))),
                    (None, Some(n)) => t.push_str(&format!(
                        " until {}",
                        count(n as usize, "request", "requests")
                    )),
                    (None, None) => {}
                }
                if let Some(r) = self.ramp_up_s.filter(|r| *r > 0.0) {
                    t.push_str(&format!(" ({} s ramp-up)", seconds(r)));
                }
                t
            }
            "open" => {
                let mut t = format!(
                    "open model: {} req/s for {} s, up to {}",
                    seconds(self.rate_per_s.unwrap_or(0.0)),
                    seconds(self.duration_s.unwrap_or(0.0)),
                    count(self.max_vus.unwrap_or(0) as usize, "user", "users")
                );
                match self.session.as_deref() {
                    Some("once") => {
                        t.push_str(", each arrival a new user running the journey once")
                    }
                    Some(length) => t.push_str(&format!(", each arrival a new user for {length}")),
                    None => {}
                }
                t
            }
            "lesson" => format!(
                "lesson: {} arriving within {} s, reading until {} s",
                count(self.students.unwrap_or(0) as usize, "student", "students"),
                seconds(self.arrive_within_s.unwrap_or(0.0)),
                seconds(self.duration_s.unwrap_or(0.0)),
            ),
            "ramping_users" => "users ramping in stages".into(),
            "ramping_rate" => format!(
                "arrival rate ramping in stages, up to {}",
                count(self.max_vus.unwrap_or(0) as usize, "user", "users")
            ),
            "" => "not recorded".into(),
            other => other.replace('_', " "),
        };
        if let Some(stages) = self.stages.as_ref().and_then(|s| s.as_array()) {
            let parts: Vec<String> = stages
                .iter()
                .filter_map(|stage| {
                    let d = stage.get("duration_s")?.as_f64()?;
                    let target = stage.get("target")?.as_f64()?;
                    Some(format!("{} over {} s", seconds(target), seconds(d)))
                })
                .collect();
            if !parts.is_empty() {
                text.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        if self.think != ThinkRecord::None {
            text.push_str(&format!(", think time {}", self.think.describe()));
        }
        if let Some(n) = self.iterations_per_vu {
            text.push_str(&format!(
                ", {} per user",
                count(
                    usize::try_from(n).unwrap_or(usize::MAX),
                    "iteration",
                    "iterations"
                )
            ));
        }
        if let Some(cap) = self.throughput_cap_per_s {
            text.push_str(&format!(", capped at {} req/s", seconds(cap)));
        }
        text
    }
}

/// The manifest as JSON, after checking that it is one and of our schema.
pub fn manifest_value(dir: &Path) -> Result<serde_json::Value, BundleError> {
    let path = dir.join(MANIFEST);
    if dir.is_file() {
        return Err(invalid(
            dir,
            "is a file: a bundle is the directory that headroom load or run wrote (its --out)",
        ));
    }
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

/// Reads a bundle's manifest, checking its schema version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, BundleError> {
    let value = manifest_value(dir)?;
    let path = dir.join(MANIFEST);
    let manifest: Manifest = serde_json::from_value(value)
        .map_err(|e| invalid(&path, format!("unexpected content: {e}")))?;
    check_times(&manifest).map_err(|reason| invalid(&path, reason))?;
    Ok(manifest)
}

/// The longest run a manifest may claim: a year.
const LONGEST_S: f64 = 366.0 * 86_400.0;

/// The run's times must be ones a run can have: finite, not negative, at
/// most a year, and a measurement window that starts before it ends.
fn check_times(m: &Manifest) -> Result<(), String> {
    let plausible = |s: f64| s.is_finite() && (0.0..=LONGEST_S).contains(&s);
    if let Some(elapsed) = m.elapsed_s.filter(|s| !plausible(*s)) {
        return Err(format!("elapsed_s is {elapsed}: not a run's length"));
    }
    if let Some(w) = &m.measurement {
        if !(plausible(w.from_s) && plausible(w.until_s) && w.from_s <= w.until_s) {
            return Err(format!(
                "the measurement window {} s to {} s is not one a run can have",
                w.from_s, w.until_s
            ));
        }
    }
    if let Some(summary) = &m.summary {
        if !plausible(summary.elapsed_s) {
            return Err(format!(
                "summary.elapsed_s is {}: not a run's length",
                summary.elapsed_s
            ));
        }
    }
    Ok(())
}

/// Writes the manifest atomically (temporary file, then rename).
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), BundleError> {
    let io_err = io_error(dir);
    let text = serde_json::to_string_pretty(manifest).map_err(|e| io_err(io::Error::other(e)))?;
    let tmp = dir.join("manifest.json.tmp");
    if let Err(e) = fs::write(&tmp, text + "\n") {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(e));
    }
    fs::rename(&tmp, dir.join(MANIFEST)).map_err(io_err)
}

#[cfg(test)]
mod describe_tests {
    use super::*;

    /// One user, one request, one iteration: singular, not "1 users".
    #[test]
    fn a_profile_of_one_says_it_in_the_singular() {
        let one = ProfileRecord {
            model: "closed".into(),
            users: Some(1),
            requests: Some(1),
            iterations_per_vu: Some(1),
            ..ProfileRecord::default()
        };
        assert_eq!(
            one.describe(),
            "closed model: 1 user until 1 request, 1 iteration per user"
        );
        let many = ProfileRecord {
            model: "closed".into(),
            users: Some(1200),
            duration_s: Some(30.0),
            iterations_per_vu: Some(2),
            ..ProfileRecord::default()
        };
        assert_eq!(
            many.describe(),
            "closed model: 1,200 users for 30 s, 2 iterations per user"
        );
    }
}
