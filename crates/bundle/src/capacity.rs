//! A capacity search on disk: `capacity.json`'s types ([`CapacityResult`],
//! each [`Level`]), their reading and writing, the one-line verdict they
//! say, and a level's bundle marked with its measured window
//! ([`keep_measurement`]). The search that fills them is the
//! `headroom-capacity` crate's.

use crate::manifest::{read_manifest, write_manifest, Measurement};
use crate::recovery::{recover_summary, summary_of_window};
use crate::summary::RunSummary;
use crate::{invalid, read_versioned_json, BundleError, CAPACITY};
use headroom_analysis::capacity::{ApdexGoal, Bottleneck, HostFigures};
use serde::{Deserialize, Serialize};
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One level of the search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Level {
    pub users: u32,
    pub good: bool,
    pub apdex: Option<f64>,
    pub apdex_rating: Option<String>,
    pub samples: u64,
    pub error_rate: f64,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub rps: f64,
    pub measured_s: f64,
    pub resources: Vec<HostFigures>,
    /// Monitored hosts that gave no figures in this level, with the reason:
    /// their resources are unknown, not idle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The watched server's own resources judged by the USE method (its
    /// pools, CPU quota, accept queues), the saturated ones first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<crate::limits::Limit>,
    /// The generator could not keep up (its figures are not the server's).
    pub generator_limited: bool,
    pub bundle: PathBuf,
    /// The warm-up before the measurement (s): until the level was steady,
    /// or the fixed --warmup.
    #[serde(default)]
    pub warmup_s: f64,
    /// When the verdict settled (its interval wholly on one side of the
    /// target), also when the level ran on to its full duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<SettledVerdict>,
    /// The level stopped when its verdict settled: before --step-duration,
    /// unless it measured on to have --min-samples requests.
    #[serde(default)]
    pub stopped_early: bool,
    /// The Apdex's 99% interval over the measured seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apdex_interval: Option<[f64; 2]>,
    /// How the level ended, as a person reads it.
    #[serde(default)]
    pub ended: String,
    /// The think time per request its users took in the measured window
    /// (s): Little's law's Z as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_s: Option<f64>,
    /// The fewest requests a verdict rests on (--min-samples).
    #[serde(default)]
    pub min_samples: u64,
    /// Fewer requests were measured than that: its verdict is shown, but an
    /// answer it decides is not valid.
    #[serde(default)]
    pub thin: bool,
    /// Why the search chose this many users ("×2: doubling ...", "halfway
    /// between 40 met and 80 broken").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// A lesson level (`--arrive-within`): its arrival and reading phases,
    /// each judged; the level meets the target when both do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<LevelPhase>,
    /// A lesson level after the first: how long the search waited before
    /// it for the server to answer as it did idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<LevelRest>,
    /// Runs of this level put aside because the generator could not keep
    /// up (their bundles stay, their requests were sent): the level was
    /// measured once more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put_aside: Vec<PathBuf>,
    /// A lesson level that met each time it was measured, but so
    /// unevenly that one more lesson may not: after three lessons, the
    /// Apdex one more would come to at least, 19 times in 20 (the floor,
    /// `headroom_analysis::spread`), below the target; after two, the
    /// highest floor any third lesson could have given, below it too. The
    /// search judged the level broken. On each of its measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uneven_floor: Option<f64>,
    /// A lesson level that ended with its arrival phase, met, because an
    /// earlier lesson of as many students or more read well within the
    /// target (its reading phase settled met): that lesson's place among
    /// the levels (1 for the first). Its reading phase stands for this
    /// level's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_as: Option<u32>,
}

impl Level {
    /// Judged broken: it missed the target, or met it unevenly.
    pub fn broken(&self) -> bool {
        !self.good || self.uneven_floor.is_some()
    }

    /// A lesson level's phase by name ("arrival", "reading").
    pub fn phase(&self, name: &str) -> Option<&LevelPhase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The Apdex its verdict turned on: a lesson's worst phase's, else the
    /// level's.
    pub fn judged_apdex(&self) -> Option<f64> {
        self.phases
            .iter()
            .filter_map(|p| p.apdex)
            .min_by(f64::total_cmp)
            .or(self.apdex)
    }

    /// "met", "broken", or "met unevenly" (met, but judged broken).
    pub fn verdict(&self) -> &'static str {
        match (self.good, self.uneven_floor) {
            (false, _) => "broken",
            (true, Some(_)) => "met unevenly",
            (true, None) => "met",
        }
    }
}

/// The rest before a lesson level: a lesson has no warm-up, so work the
/// level before left queued (its users gone, their requests not) would
/// land in its login burst. The search probes the target (one GET at a
/// time) until it answers about as fast as it did idle before the search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LevelRest {
    /// How long the search waited.
    pub waited_s: f64,
    /// The probe's time on the idle server, before the first level.
    pub idle_ms: f64,
    /// The last probe's time (`None`: it failed).
    pub probe_ms: Option<f64>,
    /// The probes came back to idle; `false`: the level started anyway at
    /// the rest's limit, on a server still busy.
    pub quiet: bool,
    /// Probes sent while resting (each one GET the server logs).
    #[serde(default)]
    pub probes: u32,
}

impl LevelRest {
    /// "rested 14 s before it: a probe answered in 6 ms (idle: 4 ms)".
    pub fn describe(&self) -> String {
        let probe = self
            .probe_ms
            .map_or("failed".to_string(), |ms| format!("answered in {ms:.0} ms"));
        if self.quiet {
            format!(
                "rested {:.0} s before it: a probe {probe} (idle: {:.0} ms)",
                self.waited_s, self.idle_ms
            )
        } else {
            format!(
                "started after {:.0} s of rest on a server still busy with the level before: the last probe {probe} (idle: {:.0} ms)",
                self.waited_s, self.idle_ms
            )
        }
    }
}

/// One phase of a lesson level, judged on its own.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LevelPhase {
    /// `arrival` (the login burst) or `reading`.
    pub name: String,
    pub from_s: f64,
    pub to_s: f64,
    /// Users who arrived in it.
    pub arrivals: u64,
    pub requests: u64,
    pub apdex: Option<f64>,
    pub error_rate: f64,
    pub p95_ms: Option<f64>,
    pub met: bool,
}

impl LevelPhase {
    /// "arrival 0–70 s: Apdex 0.912, p95 120 ms, errors 0.0% met".
    pub fn describe(&self) -> String {
        format!(
            "{} {}: {} requests, Apdex {}, p95 {}, errors {:.1}% {}",
            self.name,
            headroom_units::quantity::span(self.from_s, self.to_s, "s"),
            self.requests,
            self.apdex.map_or("-".into(), |a| format!("{a:.3}")),
            self.p95_ms.map_or("-".into(), |p| format!("{p:.0} ms")),
            self.error_rate * 100.0,
            if self.met { "met" } else { "broken" }
        )
    }
}

/// A level's verdict as it settled during the level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SettledVerdict {
    /// Measured seconds when it settled.
    pub at_s: f64,
    pub met: bool,
    pub why: String,
}

/// Every request a search sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchRequests {
    /// The sum of all below.
    pub total: u64,
    /// Its levels' requests with a sample, warm-ups and the seconds after
    /// the measurement included (each level's `measurement.whole_run`).
    pub levels: u64,
    /// Its levels' requests no sample stands for (redirects followed,
    /// abandoned at a level's end, answered after it, HTTP/2 probes).
    pub unrecorded: crate::wire::Unrecorded,
    /// GETs of the target between levels, waiting for it to be idle
    /// (user agent "headroom (capacity probe)").
    pub rest_probes: u64,
    /// A modelled lesson search's non-stop levels' requests with a sample
    /// (what a page view costs, before the first lesson).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub non_stop: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SearchRequests {
    /// "11,064 requests over the wire: 10,482 in the levels' runs, 372
    /// redirects followed, 204 abandoned unanswered at a level's end, 6
    /// probes between levels".
    pub fn describe(&self) -> String {
        let n = |v: u64| headroom_units::quantity::group_thousands(v.min(i64::MAX as u64) as i64);
        let mut parts = vec![format!(
            "{} in the levels' runs (warm-ups included)",
            n(self.levels)
        )];
        if self.non_stop > 0 {
            parts.push(format!("{} in the non-stop levels", n(self.non_stop)));
        }
        let u = &self.unrecorded;
        for (count, words) in [
            (u.redirects, "redirects followed"),
            (u.abandoned, "abandoned unanswered at a level's end"),
            (u.late, "answered after a level's end"),
            (u.probes + self.rest_probes, "probes"),
        ] {
            if count > 0 {
                parts.push(format!("{} {words}", n(count)));
            }
        }
        format!(
            "{} requests over the wire: {}",
            n(self.total),
            parts.join(", ")
        )
    }
}

/// How far Little's law may miss the users that ran before a level counts
/// as not steady (its window caught users in step, all thinking or all
/// waiting, or users waited somewhere not measured).
pub const LITTLE_TOLERANCE: f64 = 0.20;

/// The search's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityAnswer {
    pub users: Option<u32>,
    pub apdex: Option<f64>,
    pub apdex_rating: Option<String>,
    pub rps: Option<f64>,
    pub p95_ms: Option<f64>,
    /// The target still held at --max: the capacity is at least that.
    pub at_least: bool,
    /// A level run several times (--confirm, a lesson's final level):
    /// which of its runs the figures are all from (the worst).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoted: Option<Quoted>,
}

/// The one run of a repeated level that an answer quotes everywhere (its
/// headline, its phases, its interval): the worst, by Apdex and then p95.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Quoted {
    /// Its bundle, as in its level's `bundle`.
    pub bundle: PathBuf,
    /// Its place among the level's runs, in the order run (1-based).
    pub run: u32,
    pub runs: u32,
}

impl Quoted {
    /// "run 2 of 3, the worst".
    pub fn describe(&self) -> String {
        format!("run {} of {}, the worst", self.run, self.runs)
    }
}

/// What the search ran against and how it judged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CapacitySetup {
    pub url: String,
    /// The scenario file, when the search ran one.
    pub scenario: Option<String>,
    pub started_at: String,
    pub apdex_t_ms: f64,
    pub apdex_f_ms: f64,
    /// The think time as a person reads it ("1 s", "1–3 s (uniform)"), or
    /// "per step in the scenario".
    pub think: String,
    pub warmup_s: f64,
    pub measured_s: f64,
    /// `aimed` or `plain`.
    #[serde(default)]
    pub ladder: String,
    /// The plain ladder's step (the aimed ladder's smallest), users.
    #[serde(default)]
    pub step: u32,
    /// The bisection ends when the last met and first broken levels are
    /// this close, users.
    #[serde(default)]
    pub resolution: u32,
    /// Levels stop when their verdict settles (after `min_measured_s`).
    #[serde(default)]
    pub early_stop: bool,
    #[serde(default)]
    pub min_measured_s: f64,
    /// The least measured time of a level with a figure near its bound.
    #[serde(default)]
    pub near_min_measured_s: f64,
    /// The warm-up's floor (the ramp-up); `warmup_s` is its ceiling.
    #[serde(default)]
    pub warmup_min_s: f64,
    /// The fewest requests a level's verdict rests on.
    #[serde(default)]
    pub min_samples: u64,
    /// What the search lengthened to fit its users' think time, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengthened: Option<String>,
    /// The server's processes watched on the monitored hosts (`--process`):
    /// their CPU is the server's, the host's is the whole machine's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<String>,
    /// What one user is, in words ("runs the journey 'Student' (14
    /// requests) in a loop, reading 30 s between requests on average; ...").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user: String,
    /// What the answer calls the users, plural ("students"); `None`: users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users_are: Option<String>,
    /// What a level's throughput (`rps`) counts: "pages/s" when every step
    /// loads its page (a page with its resources is one), "steps/s" when
    /// some do; empty: requests ("req/s").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rate_unit: String,
    /// The busiest minute of the access log the workload was written from
    /// (its `peak:`): the answer says how many times it the server takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_peak: Option<LogPeakRecord>,
    /// A lesson search (`--arrive-within`): the window its students
    /// arrive within, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrive_within_s: Option<f64>,
    /// A lesson search: the class its scenario's profile names (its
    /// `students:`); the answer says how it fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u32>,
}

/// A log's busiest minute, as users.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogPeakRecord {
    /// "2026-11-20 10:01" (UTC).
    pub minute: String,
    pub pages: u64,
    pub users: u64,
}

impl LogPeakRecord {
    /// "4.20× the log's peak of 20 users (at 2026-11-20 10:01 UTC, 957
    /// pages that minute)".
    pub fn times(&self, users: u32) -> String {
        format!(
            "{:.2}× the log's peak of {} users (at {} UTC, {} pages that minute)",
            f64::from(users) / self.users.max(1) as f64,
            self.users,
            self.minute,
            self.pages
        )
    }
}

impl CapacitySetup {
    /// A lesson search (`--arrive-within`): every level a lesson start.
    pub fn is_lesson(&self) -> bool {
        self.arrive_within_s.is_some()
    }

    /// What a level's throughput counts: "req/s", "pages/s" or "steps/s".
    pub fn rate(&self) -> &str {
        if self.rate_unit.is_empty() {
            "req/s"
        } else {
            &self.rate_unit
        }
    }

    /// What one user and many are called: ("user", "users") unless
    /// `--users-are` named them ("students" → "student").
    pub fn nouns(&self) -> (String, String) {
        let Some(many) = self
            .users_are
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        else {
            return ("user".into(), "users".into());
        };
        let one = if let Some(stem) = many.strip_suffix("ies") {
            format!("{stem}y")
        } else if let Some(stem) = many.strip_suffix("people") {
            format!("{stem}person")
        } else {
            many.strip_suffix('s').unwrap_or(many).to_string()
        };
        (one, many.to_string())
    }
}

/// Levels that ran their full duration although their verdict settled
/// earlier: how often the settled verdict was the final one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Agreement {
    pub settled: u32,
    pub agreed: u32,
}

/// The deciding levels measured several times (`--confirm`): the range of
/// capacities the repetitions support.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Confirmation {
    pub repetitions: u32,
    pub low: u32,
    pub high: u32,
}

/// A `--fail-if` criterion judged on the answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CriterionOutcome {
    pub expression: String,
    /// In the criterion's unit (users, req/s, Apdex, seconds); null when
    /// there was nothing to measure.
    pub measured: Option<f64>,
    pub failed: bool,
    pub message: String,
}

/// Little's law at the capacity: the users the throughput and cycle time
/// account for, against the users that ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LittlesLaw {
    pub rps: f64,
    pub mean_response_s: f64,
    pub think_s: f64,
    pub users_busy: f64,
    pub users: u32,
}

impl LittlesLaw {
    /// The share by which the users accounted for miss the users that ran.
    pub fn miss(&self) -> f64 {
        if self.users == 0 {
            return 0.0;
        }
        (self.users_busy - f64::from(self.users)).abs() / f64::from(self.users)
    }

    /// The users the same throughput and response time would hold with
    /// another think time: `rps × (response + think)`. A model: it takes
    /// the server's throughput at the capacity to hold whatever the users'
    /// think.
    pub fn users_at_think(&self, think: Duration) -> f64 {
        self.rps * (self.mean_response_s + think.as_secs_f64())
    }

    /// The model's users at people's think times (5 s, 10 s, 30 s, 60 s),
    /// leaving out the one the users had.
    pub fn other_think_times(&self) -> Vec<(Duration, f64)> {
        [5, 10, 30, 60]
            .into_iter()
            .map(Duration::from_secs)
            .filter(|z| (z.as_secs_f64() - self.think_s).abs() > 0.5)
            .map(|z| (z, self.users_at_think(z)))
            .collect()
    }

    /// "8.5 req/s × (0.120 s mean response + 10.000 s think) = 86.0 users
    /// busy of 100"; `rate` is the throughput's unit (a page load's
    /// response is its page's time).
    pub fn describe(&self, rate: &str) -> String {
        format!(
            "{:.1} {rate} × ({:.3} s mean response + {:.3} s think) = {:.1} users busy of {}",
            self.rps, self.mean_response_s, self.think_s, self.users_busy, self.users
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityResult {
    pub schema_version: u32,
    #[serde(default)]
    pub setup: CapacitySetup,
    /// `complete`, or `interrupted` (Ctrl-C, SIGTERM): then there is no
    /// capacity claim, only the levels measured.
    pub status: String,
    pub target: ApdexGoal,
    pub capacity: CapacityAnswer,
    /// The first level above the capacity that broke the target.
    pub knee_users: Option<u32>,
    pub bottleneck: Option<Bottleneck>,
    /// The server's own resource that saturated first at the knee (a
    /// worker pool, a CPU quota, an accept queue), with its evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::limits::Limit>,
    /// Why the limit has no name when nothing monitored saturates.
    pub limit_note: String,
    /// False when the answer's figures cannot be trusted: `invalid` says why.
    pub valid: bool,
    /// Why the answer is not valid, a sentence each: the generator limited
    /// a deciding level, a deciding level was thin, or Little's law says
    /// the capacity level was not steady.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<String>,
    pub think_s: f64,
    /// Little's law at the capacity, when there is one.
    #[serde(default)]
    pub little: Option<LittlesLaw>,
    /// With `--confirm`: the range the repetitions of the deciding levels support.
    #[serde(default)]
    pub confirmation: Option<Confirmation>,
    /// `--fail-if` on the answer (absent without criteria).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<CriterionOutcome>,
    /// Where the answer lies: from the capacity to the users below the
    /// first broken level above it (the resolution), widened by the
    /// repetitions with --confirm.
    #[serde(default)]
    pub range: Option<[u32; 2]>,
    /// Levels broken below a level that met: (broken, met). A noisy server;
    /// the answer is the highest level met.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inversions: Vec<[u32; 2]>,
    /// With --full-levels: levels whose verdict settled early, and how many
    /// of those the full duration confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// The one-line answer, as printed.
    pub verdict: String,
    /// The answer in words a teacher can forward, as the terminal and the
    /// page open with it ("This server takes about 240 students arriving
    /// within 60 s: ...").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The latest bench of the bottleneck's host (`headroom bench`), its
    /// figures for the saturated resource: first line names the bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_bench: Vec<String>,
    /// Every request the search sent, as the server's access log counts
    /// them: its levels' whole runs (warm-ups included), what no sample
    /// stands for, and its probes of the idle server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<SearchRequests>,
    /// A modelled lesson search: what a page view cost at its non-stop
    /// levels, the model's answer that aimed the first lesson, and what it
    /// said of each lesson run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<LessonModelRecord>,
    pub levels: Vec<Level>,
    pub bundle: PathBuf,
}

/// The most students a modelled lesson search tries unless told
/// (`--max`): beyond, the generator on one machine could not make the
/// lesson anyway.
pub const MOST_MODELLED: u32 = 100_000;

/// A non-stop level of a modelled lesson search: its users did not think.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NonStopRecord {
    pub users: u32,
    /// Requests over the wire a second (documents, resources, plain steps).
    pub requests_per_s: f64,
    pub mean_ms: f64,
    /// The share of those requests that failed.
    pub failed: f64,
    pub bundle: PathBuf,
}

/// What the lesson model said of a lesson of `students` (the worst of
/// its seeds' lessons): each phase's Apdex, arrival then reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelledLesson {
    pub students: u32,
    pub apdex: [Option<f64>; 2],
    pub p95_ms: [Option<f64>; 2],
    pub met: bool,
}

/// The model a lesson search aimed by (`--ladder model`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LessonModelRecord {
    pub non_stop: Vec<NonStopRecord>,
    /// Requests in flight at once, on average, at the fullest non-stop
    /// level: each request label's mean time there over this is its work.
    pub in_flight: f64,
    /// The fullest non-stop level's users (its requests' times priced the
    /// work).
    pub fullest: u32,
    /// How the server slowed past it: each larger crowd's requests in
    /// flight and its speed relative to the fullest's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowing: Vec<[f64; 2]>,
    /// One student's steps as the lone user walked them, and the requests
    /// over the wire they hold.
    pub steps: usize,
    pub requests: usize,
    /// The model's answer (0: not one student), and whether the target
    /// held at the most it tried.
    pub students: u32,
    pub capped: bool,
    /// The model's worst lesson at its answer, and just above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<ModelledLesson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<ModelledLesson>,
    /// What the model said of each lesson level run, by students.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<ModelledLesson>,
    /// The non-stop levels' time and the model's, in seconds.
    pub seconds: f64,
}

impl CapacityResult {
    /// "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; pi machine CPU 96% at 50 users".
    /// The reading that stands for `level`'s, when it ran only its arrival
    /// ([`Level::reading_as`]): that lesson's place among the levels (1 for
    /// the first), the lesson, and its reading phase. `None` when it names
    /// no level, or one without a reading.
    pub fn reading_as(&self, level: &Level) -> Option<(u32, &Level, &LevelPhase)> {
        let k = level.reading_as?;
        let by = self.levels.get((k as usize).checked_sub(1)?)?;
        Some((k, by, by.phase("reading")?))
    }

    /// The level the answer's figures are from: the quoted run of a
    /// repeated level, else the capacity's level (its last run, for a
    /// search written before answers named their run).
    pub fn quoted_level(&self) -> Option<&Level> {
        let users = self.capacity.users?;
        if let Some(quoted) = &self.capacity.quoted {
            if let Some(level) = self.levels.iter().find(|l| l.bundle == quoted.bundle) {
                return Some(level);
            }
        }
        self.levels.iter().rfind(|l| l.users == users)
    }

    pub fn verdict(&self) -> String {
        if self.status == "interrupted" {
            return format!("no answer: {}", self.limit_note);
        }
        let (one, many) = self.setup.nouns();
        let mut text = match self.capacity.users {
            Some(users) => format!(
                "{}{}{}{} at Apdex ≥ {:.2} ({}: {:.2}), {:.1} {}",
                if self.capacity.at_least {
                    "at least "
                } else {
                    ""
                },
                headroom_units::quantity::count(users as usize, &one, &many),
                self.confirmation
                    .as_ref()
                    .map_or(String::new(), |c| if self.setup.is_lesson() {
                        // Its lessons all met (a lesson search's rule):
                        // where each puts the crossing is not the answer.
                        format!(" ({} lessons met)", c.repetitions)
                    } else if c.low == c.high {
                        format!(" ({} repetitions agree)", c.repetitions)
                    } else {
                        format!(
                            " (between {} and {} in {} repetitions)",
                            c.low, c.high, c.repetitions
                        )
                    }),
                match &self.capacity.quoted {
                    Some(q) => format!(" [figures of {}]", q.describe()),
                    None => String::new(),
                },
                self.target.apdex,
                self.capacity.apdex_rating.as_deref().unwrap_or("-"),
                self.capacity.apdex.unwrap_or(0.0),
                self.capacity.rps.unwrap_or(0.0),
                self.setup.rate()
            ),
            None => format!(
                "fewer than {}: not even the lowest level met Apdex ≥ {:.2}",
                headroom_units::quantity::count(
                    self.levels.iter().map(|l| l.users).min().unwrap_or(1) as usize,
                    &one,
                    &many
                ),
                self.target.apdex
            ),
        };
        match &self.bottleneck {
            Some(b) => text.push_str(&format!("; {}", b.describe())),
            None if !self.limit_note.is_empty() => text.push_str(&format!("; {}", self.limit_note)),
            None => {}
        }
        if !self.valid {
            text.push_str(" [INVALID]");
        }
        text
    }
}

/// Makes a level's bundle say what was measured: its manifest's summary
/// becomes that of the seconds from `from_s` to `until_s`, and the whole
/// run's (warm-up included) moves to `measurement.whole_run`. Returns the
/// measured summary. Done once: a bundle already marked is read as it is.
pub fn keep_measurement(dir: &Path, window: Range<Duration>) -> Result<RunSummary, BundleError> {
    let mut manifest = read_manifest(dir)?;
    if manifest.measurement.is_some() {
        if let Some(summary) = manifest.summary {
            return Ok(summary);
        }
    }
    let whole = match manifest.summary.take() {
        Some(whole) => whole,
        None => recover_summary(dir, &manifest)?,
    };
    let mut measured = summary_of_window(dir, &manifest, window.clone())?;
    measured.resources = whole.resources.clone();
    manifest.summary = Some(measured.clone());
    manifest.measurement = Some(Measurement {
        from_s: window.start.as_secs_f64(),
        until_s: window.end.as_secs_f64(),
        whole_run: whole,
    });
    write_manifest(dir, &manifest)?;
    Ok(measured)
}

/// Writes `capacity.json` into the search's directory.
pub fn write(dir: &Path, result: &CapacityResult) -> Result<PathBuf, BundleError> {
    let path = dir.join(CAPACITY);
    let text = serde_json::to_string_pretty(result).map_err(|e| invalid(&path, e.to_string()))?;
    fs::create_dir_all(dir)
        .and_then(|()| fs::write(&path, text + "\n"))
        .map_err(|source| BundleError::Io {
            path: path.clone(),
            source,
        })?;
    Ok(path)
}

/// Reads a search's `capacity.json`, checking its schema version.
pub fn read(dir: &Path) -> Result<CapacityResult, BundleError> {
    let path = dir.join(CAPACITY);
    let value = read_versioned_json(&path, "a headroom capacity result")?;
    serde_json::from_value(value).map_err(|e| invalid(&path, format!("unexpected content: {e}")))
}
