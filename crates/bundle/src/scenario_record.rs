//! The manifest's `scenario` section: what was sent. Its `mode` says which
//! kind of run wrote it: `url` (one request, `headroom load`), `scenario`
//! (a journey file, `headroom run`), `mix` (several journey files with
//! weights, `headroom run`), `jtl` (JMeter results imported) or `replay`
//! (an access log's requests sent again, `headroom replay`).
//!
//! On disk it is the object it always was: the record's fields and `mode`,
//! keys in alphabetical order, nested objects too (so manifests written
//! before this type read as they are, and are written byte for byte the
//! same).

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a run sent, by its `mode`.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioRecord {
    /// `mode: url`: one request, repeated.
    Url(UrlRecord),
    /// `mode: scenario`: a journey file's steps.
    Scenario(ScenarioFileRecord),
    /// `mode: mix`: several journey files, each with a weight.
    Mix(MixRecord),
    /// `mode: jtl`: JMeter's results, imported.
    Jtl(JtlRecord),
    /// `mode: replay`: an access log's requests sent again.
    Replay(ReplayRecord),
}

/// An access log replayed: its files, how fast, what was sent and what
/// was left out. No request's target is kept (labels are its folded
/// pattern; replay.csv has a row a request).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayRecord {
    pub files: Vec<String>,
    pub format: String,
    /// Requests sent again.
    pub requests: u64,
    /// Requests of other methods, by method, not sent.
    pub left_out: BTreeMap<String, u64>,
    /// The methods sent.
    pub methods: Vec<String>,
    /// The log's time divided by this.
    pub speed: f64,
    /// From the first request to the last, as logged and as replayed.
    pub logged_s: f64,
    pub replayed_s: f64,
    /// What the log held that could not be read or sent, a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The request of a URL run. Header values that hold credentials are
/// written as `***`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UrlRecord {
    pub body_bytes: usize,
    pub headers: Vec<String>,
    pub keep_alive: bool,
    pub label: String,
    pub method: String,
    pub url: String,
}

/// A journey file as it ran: its steps, checks, variables and data, and
/// its text (credentials hidden).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScenarioFileRecord {
    pub before: Option<BeforeRecord>,
    pub checks: Vec<String>,
    pub data: Option<DataRecord>,
    pub file: String,
    pub name: Option<String>,
    pub steps: usize,
    pub text: String,
    pub variables: Vec<String>,
}

/// A mix of journeys as it ran: the mix file and each journey with its
/// weight and what it was given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixRecord {
    pub file: String,
    pub journeys: Vec<JourneyRecord>,
    pub name: Option<String>,
    pub text: String,
}

/// One journey of a mix: its name (the prefix of its labels), file and
/// weight; the users it was given (closed model: the exact split of the
/// whole run's users, the same in every shard) or the probability each
/// arrival runs it (open model).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JourneyRecord {
    pub arrival_share: Option<f64>,
    pub file: String,
    pub name: String,
    pub scenario: ScenarioFileRecord,
    pub users: Option<u64>,
    pub weight: f64,
}

/// The scenario's data file (`data:`): this generator's rows of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataRecord {
    pub file: String,
    pub recycle: bool,
    pub rows: usize,
    pub shared: bool,
    /// With `visits:`: the visits the rows hold (each taken whole by one
    /// user, as a new visitor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visits: Option<usize>,
}

/// The scenario's `before:` users, who ran before the profile started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BeforeRecord {
    pub iterations: u64,
    pub name: Option<String>,
    pub users: u32,
}

/// A JMeter results file imported as a run: the file, what it holds, what
/// it cannot say, and JMeter's own dashboard figures from it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JtlRecord {
    pub file: String,
    /// `csv` or `xml`, as read.
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jmeter_dashboard: Option<JmeterDashboard>,
    pub name: Option<String>,
    pub samples: usize,
    /// The labels of transaction controllers.
    pub transactions: Vec<String>,
    /// What a results file does not say (said in the report).
    pub unknown: Vec<String>,
}

/// What JMeter's HTML dashboard shows for the same file, computed as it
/// does: per label and `Total` (without transaction controllers).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JmeterDashboard {
    /// How its percentiles are estimated, in words.
    pub estimator: String,
    pub labels: BTreeMap<String, DashboardFigures>,
    /// Over every sample, transaction controllers included.
    pub overall_apdex: Option<f64>,
}

/// One row of JMeter's dashboard statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DashboardFigures {
    pub apdex: Option<f64>,
    pub error_count: usize,
    pub mean_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub sample_count: usize,
}

impl ScenarioRecord {
    /// The `mode` written with the record.
    pub fn mode(&self) -> &'static str {
        match self {
            ScenarioRecord::Url(_) => "url",
            ScenarioRecord::Scenario(_) => "scenario",
            ScenarioRecord::Mix(_) => "mix",
            ScenarioRecord::Jtl(_) => "jtl",
            ScenarioRecord::Replay(_) => "replay",
        }
    }

    /// The section as JSON (as it is on disk).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for ScenarioRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = match self {
            ScenarioRecord::Url(r) => serde_json::to_value(r),
            ScenarioRecord::Scenario(r) => serde_json::to_value(r),
            ScenarioRecord::Mix(r) => serde_json::to_value(r),
            ScenarioRecord::Jtl(r) => serde_json::to_value(r),
            ScenarioRecord::Replay(r) => serde_json::to_value(r),
        }
        .map_err(S::Error::custom)?;
        let Value::Object(mut map) = fields else {
            return Err(S::Error::custom("a scenario record is an object"));
        };
        map.insert("mode".into(), self.mode().into());
        map.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ScenarioRecord {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let mode = value
            .get("mode")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let record = match mode.as_str() {
            "url" => serde_json::from_value(value).map(ScenarioRecord::Url),
            "scenario" => serde_json::from_value(value).map(ScenarioRecord::Scenario),
            "mix" => serde_json::from_value(value).map(ScenarioRecord::Mix),
            "jtl" => serde_json::from_value(value).map(ScenarioRecord::Jtl),
            "replay" => serde_json::from_value(value).map(ScenarioRecord::Replay),
            "" => {
                return Err(D::Error::custom(
                    "the scenario section has no mode (url, scenario, mix, jtl or replay)",
                ))
            }
            other => {
                return Err(D::Error::custom(format!(
                    "the scenario section's mode {other:?} is none of url, scenario, mix, jtl or replay \
                     (was the bundle written by a newer headroom?)"
                )))
            }
        };
        record.map_err(|e| D::Error::custom(format!("scenario ({mode}): {e}")))
    }
}

/// The manifest's `scenario` field: null or `{}` (a manifest without one)
/// reads as none.
pub(crate) fn optional<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ScenarioRecord>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    match &value {
        Value::Null => Ok(None),
        Value::Object(map) if map.is_empty() => Ok(None),
        _ => ScenarioRecord::deserialize(value)
            .map(Some)
            .map_err(D::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section of a URL run as `headroom load` wrote it before it was
    /// typed (serde_json::json!, keys sorted).
    const URL_BEFORE: &str = r#"{
  "body_bytes": 0,
  "headers": [
    "Authorization: ***"
  ],
  "keep_alive": true,
  "label": "/",
  "method": "GET",
  "mode": "url",
  "url": "http://127.0.0.1:33793/"
}"#;

    #[test]
    fn a_url_section_written_before_reads_and_writes_the_same_bytes() {
        let record: ScenarioRecord = serde_json::from_str(URL_BEFORE).unwrap();
        let ScenarioRecord::Url(url) = &record else {
            panic!("{record:?}")
        };
        assert_eq!(url.method, "GET");
        assert_eq!(url.headers, ["Authorization: ***"]);
        assert_eq!(serde_json::to_string_pretty(&record).unwrap(), URL_BEFORE);
    }

    #[test]
    fn a_scenario_section_keeps_its_nested_keys_in_order() {
        let old = serde_json::json!({
            "mode": "scenario",
            "file": "shop.yaml",
            "name": null,
            "steps": 3,
            "checks": ["status 200"],
            "variables": ["user"],
            "data": {"file": "users.csv", "rows": 2, "shared": true, "recycle": false},
            "before": {"name": "warm", "users": 1, "iterations": 2},
            "text": "steps: []\n",
        });
        let record: ScenarioRecord = serde_json::from_value(old.clone()).unwrap();
        let ScenarioRecord::Scenario(s) = &record else {
            panic!("{record:?}")
        };
        assert_eq!(s.data.as_ref().unwrap().rows, 2);
        assert_eq!(s.before.as_ref().unwrap().iterations, 2);
        assert_eq!(
            serde_json::to_string(&record).unwrap(),
            serde_json::to_string(&old).unwrap()
        );
    }

    /// A bundle `headroom run` wrote before the section was typed (the
    /// report crate's test data) reads, and its section is written back as
    /// it was.
    #[test]
    fn a_manifest_written_before_reads_with_its_section() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/school");
        let manifest = crate::manifest::read_manifest(&dir).unwrap();
        let Some(ScenarioRecord::Scenario(file)) = &manifest.scenario else {
            panic!("{:?}", manifest.scenario)
        };
        assert_eq!(file.name.as_deref(), Some("school-portal"));
        assert_eq!((file.steps, file.checks.len()), (5, 5));
        assert_eq!((&file.data, &file.before), (&None, &None));
        let text = std::fs::read_to_string(dir.join(crate::MANIFEST)).unwrap();
        let on_disk: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(manifest.scenario.unwrap().to_json(), on_disk["scenario"]);
    }

    #[test]
    fn a_section_without_a_known_mode_is_refused_by_name() {
        let e = serde_json::from_str::<ScenarioRecord>(r#"{"mode": "playback", "journeys": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"playback\"") && e.contains("url, scenario, mix, jtl or replay"),
            "{e}"
        );
        let e = serde_json::from_str::<ScenarioRecord>(r#"{"url": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no mode"), "{e}");
        let e = serde_json::from_str::<ScenarioRecord>(r#"{"mode": "url", "body_bytes": "many"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("scenario (url)"), "{e}");
    }
}
