//! The run spec: plain, serialisable data describing one run — its
//! workload source, profile, thresholds, monitors, faults, outputs, shard
//! and start. The CLI turns flags into a [`RunSpec`]; an experiment or a
//! capacity level writes one as data; [`crate::assemble`] turns it into a
//! run ready to start. Terminal matters (live line, `--json`, `--junit`,
//! `--fail-if` and exit codes, `--metrics-listen`) stay with the caller.
//!
//! Durations are `Duration`s (written as humantime text, "1m 30s"); rates
//! are [`Rate`]s (written as events per second).

use crate::fault::Fault;
use headroom_journey::profile::Think;
use headroom_journey::shard::Shard;
use headroom_units::quantity::Rate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// One run, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub workload: WorkloadSource,
    /// The profile; for a scenario, these replace the file's own.
    #[serde(default)]
    pub profile: ProfileSpec,
    /// Think time (for a scenario: of the steps without their own).
    #[serde(default)]
    pub think: Option<Think>,
    /// One throughput cap shared by all users.
    #[serde(default, with = "opt_rate")]
    pub throughput: Option<Rate>,
    /// Worker threads of the generator (`None`: one per available core).
    #[serde(default)]
    pub threads: Option<u32>,
    pub apdex: ApdexSpec,
    /// Seed of random think times and data choices.
    #[serde(default = "one")]
    pub seed: u64,
    /// Accept any TLS certificate.
    #[serde(default)]
    pub insecure: bool,
    /// The HTTP version the users speak (`None`: the scenario's
    /// `defaults: http:`, else 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<headroom_http::protocol::HttpChoice>,
    #[serde(default)]
    pub monitors: MonitorSpec,
    /// Commands run at moments of the run.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    #[serde(default)]
    pub outputs: OutputSpec,
    /// One part of a split run.
    #[serde(default)]
    pub shard: Option<ShardChoice>,
    #[serde(default)]
    pub start: StartSpec,
}

fn one() -> u64 {
    1
}

/// What the users of the run do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum WorkloadSource {
    /// One URL, one request.
    Url(UrlRequest),
    /// A scenario file (YAML, or a JMeter plan converted).
    Scenario(ScenarioSource),
    /// An access log's requests sent again at their recorded times.
    Replay(ReplaySource),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlRequest {
    pub url: String,
    #[serde(default = "get")]
    pub method: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub body: Option<BodySpec>,
    /// Label of the samples (default: the URL's path).
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default = "yes")]
    pub keep_alive: bool,
    /// Most time one request may take before it counts as a timeout.
    #[serde(with = "duration_text", default = "thirty_seconds")]
    pub timeout: Duration,
}

impl UrlRequest {
    /// A GET of `url` with load's defaults: keep-alive, 30 s timeout.
    pub fn get(url: &str) -> UrlRequest {
        UrlRequest {
            url: url.into(),
            method: get(),
            headers: Vec::new(),
            body: None,
            label: None,
            keep_alive: yes(),
            timeout: thirty_seconds(),
        }
    }
}

fn get() -> String {
    "GET".into()
}
fn yes() -> bool {
    true
}
fn thirty_seconds() -> Duration {
    Duration::from_secs(30)
}

/// A request body: its text, or a file read when the run is assembled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodySpec {
    Text(String),
    File(PathBuf),
}

/// An access log to replay (`headroom replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplaySource {
    pub files: Vec<PathBuf>,
    /// `combined`, `common` or an nginx `log_format` string.
    pub format: String,
    /// The server the requests go to.
    pub target: String,
    /// How fast the log's time runs.
    pub pace: ReplayPace,
    /// The methods sent (upper case); others are counted and left out.
    pub methods: Vec<String>,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(with = "duration_text", default = "thirty_seconds")]
    pub timeout: Duration,
}

/// How fast a log is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayPace {
    /// The log's time divided by this (1: as recorded).
    Speed(f64),
    /// As fast as gives this mean rate, requests a second.
    PerSecond(f64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioSource {
    pub file: PathBuf,
    /// Base URL replacing the file's `defaults.base_url`.
    #[serde(default)]
    pub target: Option<String>,
    /// JMeter properties for a `.jmx` plan.
    #[serde(default)]
    pub jmeter_properties: BTreeMap<String, String>,
    /// With a `.jmx` plan: refuse to run what was not converted.
    #[serde(default)]
    pub strict: bool,
}

/// The profile's settings; what is not given comes from the scenario file
/// or the defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSpec {
    /// Closed model: virtual users.
    #[serde(default)]
    pub users: Option<u32>,
    #[serde(default, with = "opt_duration_text")]
    pub ramp_up: Option<Duration>,
    /// The whole run, ramp-up included.
    #[serde(default, with = "opt_duration_text")]
    pub duration: Option<Duration>,
    /// Closed model on a URL: total requests over all users.
    #[serde(default)]
    pub requests: Option<u64>,
    /// Closed model on a scenario: iterations of the journey per VU.
    #[serde(default)]
    pub iterations: Option<u64>,
    /// Open model: arrivals per second.
    #[serde(default, with = "opt_rate")]
    pub rate: Option<Rate>,
    /// Open model: most VUs at once.
    #[serde(default)]
    pub max_vus: Option<u32>,
    /// Open model: each arrival is a new user who stays this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<headroom_journey::lesson::UserSession>,
    /// The lesson start: this many students arrive within `arrive_within`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub students: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "opt_duration_text"
    )]
    pub arrive_within: Option<Duration>,
    /// Closed model on a workload written from an access log: this many
    /// times the users of its `peak:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_times: Option<f64>,
}

/// Apdex T, and F as a time or a multiple of T.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ApdexSpec {
    #[serde(with = "duration_text")]
    pub satisfied: Duration,
    pub tolerated: ToleratedSpec,
}

impl Default for ApdexSpec {
    fn default() -> Self {
        ApdexSpec {
            satisfied: Duration::from_millis(500),
            tolerated: ToleratedSpec::Time(Duration::from_millis(1500)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToleratedSpec {
    Time(#[serde(with = "duration_text")] Duration),
    TimesT(f64),
}

/// Hosts whose resources are sampled into `resources.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonitorSpec {
    #[serde(default)]
    pub sources: Vec<Monitored>,
    /// The agents' token.
    #[serde(default)]
    pub agent_token: Option<String>,
    /// Processes whose CPU and memory are summed by name.
    #[serde(default)]
    pub processes: Vec<String>,
    /// Link capacity for network %, when the interface reports none.
    #[serde(default)]
    pub link_capacity_mbit: Option<f64>,
    /// A file of database URLs whose own counters to read (the path only:
    /// its passwords are never recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Monitored {
    /// This machine.
    Local,
    /// `host:port` of a `headroom agent`.
    Agent(String),
}

/// A fault: a shell command at a moment of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultSpec {
    #[serde(with = "duration_text")]
    pub at: Duration,
    pub command: String,
}

impl From<&Fault> for FaultSpec {
    fn from(f: &Fault) -> Self {
        FaultSpec {
            at: f.at,
            command: f.command.clone(),
        }
    }
}

impl From<&FaultSpec> for Fault {
    fn from(f: &FaultSpec) -> Self {
        Fault {
            at: f.at,
            command: f.command.clone(),
        }
    }
}

/// What the run writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSpec {
    /// Bundle directory (`None`: runs/<UTC time>-<name>).
    #[serde(default)]
    pub bundle_dir: Option<PathBuf>,
    /// Also write every sample to samples.jtl.
    #[serde(default)]
    pub jtl: bool,
    /// Failed exchanges kept per label in failures/.
    #[serde(default = "five")]
    pub save_failures: u32,
    /// How the run was asked for, as the manifest keeps it (secrets
    /// already redacted).
    #[serde(default)]
    pub command_line: Vec<String>,
}

fn five() -> u32 {
    5
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            bundle_dir: None,
            jtl: false,
            save_failures: five(),
            command_line: Vec::new(),
        }
    }
}

/// Which shard this generator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardChoice {
    Given(Shard),
    /// From the scheduler's environment (Slurm, a Kubernetes Indexed Job
    /// with `shards`, or `HEADROOM_SHARD`), read when the run is assembled.
    Auto {
        shards: Option<u32>,
    },
}

/// When the load starts: now, at a moment, or a delay after the first
/// shard reached a barrier file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartSpec {
    #[serde(default, with = "opt_time_text")]
    pub at: Option<SystemTime>,
    #[serde(default)]
    pub after_barrier: Option<Barrier>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Barrier {
    #[serde(with = "duration_text")]
    pub delay: Duration,
    pub path: PathBuf,
}

impl RunSpec {
    /// A spec for `workload` with every other setting at its default.
    pub fn new(workload: WorkloadSource) -> RunSpec {
        RunSpec {
            workload,
            profile: ProfileSpec::default(),
            think: None,
            throughput: None,
            threads: None,
            apdex: ApdexSpec::default(),
            seed: 1,
            insecure: false,
            http: None,
            monitors: MonitorSpec::default(),
            faults: Vec::new(),
            outputs: OutputSpec::default(),
            shard: None,
            start: StartSpec::default(),
        }
    }

    /// The same run with `users` (closed model).
    pub fn with_users(mut self, users: u32) -> RunSpec {
        self.profile.users = Some(users);
        self
    }

    /// The same run lasting `duration`, ramp-up included.
    pub fn with_duration(mut self, duration: Duration) -> RunSpec {
        self.profile.duration = Some(duration);
        self
    }

    /// The same run with its users starting over `ramp_up`.
    pub fn with_ramp_up(mut self, ramp_up: Duration) -> RunSpec {
        self.profile.ramp_up = Some(ramp_up);
        self
    }

    /// The same run writing its bundle into `dir`.
    pub fn with_bundle_dir(mut self, dir: PathBuf) -> RunSpec {
        self.outputs.bundle_dir = Some(dir);
        self
    }
}

/// `Duration`s as humantime text ("1m 30s", "250ms").
pub mod duration_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text).map_err(|e| {
            serde::de::Error::custom(format!("'{text}' is not a duration ({e}): write e.g. 30s"))
        })
    }
}

mod opt_duration_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::duration_text::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                humantime::parse_duration(&text).map_err(|e| {
                    serde::de::Error::custom(format!("'{text}' is not a duration ({e})"))
                })
            })
            .transpose()
    }
}

mod opt_time_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::SystemTime;

    pub fn serialize<S: Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&humantime::format_rfc3339_millis(*t).to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SystemTime>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                humantime::parse_rfc3339_weak(&text).map_err(|e| {
                    serde::de::Error::custom(format!("'{text}' is not an RFC 3339 time ({e})"))
                })
            })
            .transpose()
    }
}

/// A rate as events per second.
mod opt_rate {
    use headroom_units::quantity::Rate;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<Rate>, s: S) -> Result<S::Ok, S::Error> {
        match r {
            Some(r) => s.serialize_some(&r.per_second),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
        match Option::<f64>::deserialize(d)? {
            Some(v) if v.is_finite() && v > 0.0 => Ok(Some(Rate { per_second: v })),
            Some(v) => Err(serde::de::Error::custom(format!(
                "{v} is not a rate: write events per second above zero"
            ))),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_survives_json() {
        let mut spec = RunSpec::new(WorkloadSource::Url(UrlRequest {
            url: "http://127.0.0.1:8080/".into(),
            method: "POST".into(),
            headers: vec![("Accept".into(), "text/html".into())],
            body: Some(BodySpec::Text("x=1".into())),
            label: Some("home".into()),
            keep_alive: false,
            timeout: Duration::from_millis(2500),
        }))
        .with_users(20)
        .with_duration(Duration::from_secs(90))
        .with_ramp_up(Duration::from_secs(5));
        spec.think = Some(Think::Uniform {
            min: Duration::from_millis(500),
            max: Duration::from_secs(2),
        });
        spec.throughput = Some(Rate { per_second: 3.0 });
        spec.apdex.tolerated = ToleratedSpec::TimesT(4.0);
        spec.monitors.sources = vec![Monitored::Local, Monitored::Agent("pi:9464".into())];
        spec.faults = vec![FaultSpec {
            at: Duration::from_secs(30),
            command: "true".into(),
        }];
        spec.shard = Some(ShardChoice::Given(Shard::new(1, 4).unwrap()));
        spec.start.at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000));
        let json = serde_json::to_string_pretty(&spec).unwrap();
        assert!(json.contains("\"duration\": \"1m 30s\""), "{json}");
        assert!(json.contains("\"timeout\": \"2s 500ms\""), "{json}");
        let back: RunSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn a_short_spec_takes_the_defaults() {
        let spec: RunSpec = serde_json::from_str(
            r#"{"workload": {"source": "url", "url": "http://127.0.0.1/"}, "apdex": {"satisfied": "500ms", "tolerated": {"time": "1s 500ms"}}}"#,
        )
        .unwrap();
        let WorkloadSource::Url(request) = &spec.workload else {
            panic!("{spec:?}")
        };
        assert_eq!(request.method, "GET");
        assert_eq!(request.timeout, Duration::from_secs(30));
        assert_eq!(spec.apdex, ApdexSpec::default());
        assert_eq!(spec.seed, 1);
        assert_eq!(spec.outputs.save_failures, 5);
        let bad = serde_json::from_str::<RunSpec>(
            r#"{"workload": {"source": "url", "url": "x", "timeout": "soon"}, "apdex": {"satisfied": "1s", "tolerated": {"times_t": 4.0}}}"#,
        )
        .unwrap_err();
        assert!(
            bad.to_string().contains("'soon' is not a duration"),
            "{bad}"
        );
    }
}
