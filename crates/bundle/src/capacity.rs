//! A capacity search's figures: each level's measurement (after its
//! warm-up) read back from the level's bundle, the bottleneck at the knee,
//! and the verdict.

use crate::manifest::{read_manifest, write_manifest, Measurement};
use crate::recovery::{recover_summary, summary_of_window};
use crate::resources::{read_core_loads, read_resources, ResourceRow};
use crate::summary::RunSummary;
use crate::{invalid, read_versioned_json, BundleError, CAPACITY, SCHEMA_VERSION};
use headroom_analysis::apdex::Rating;
use headroom_analysis::capacity::{
    bottleneck, host_figures, meets, repetition_capacity, Bottleneck, HostFigures, HostSecond,
    Target,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
}

/// A level's verdict as it settled during the level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SettledVerdict {
    /// Measured seconds when it settled.
    pub at_s: f64,
    pub met: bool,
    pub why: String,
}

impl Level {
    /// Reads the level's bundle, keeping the seconds of its measurement,
    /// `window`: from the end of the warm-up to the end of the level.
    pub fn measure(
        users: u32,
        dir: &Path,
        window: Range<Duration>,
        target: &Target,
        generator_limited: bool,
    ) -> Result<Level, BundleError> {
        let inside = |second: u64| {
            window.contains(&(Duration::from_secs(second) + Duration::from_micros(1)))
        };
        // The level's own manifest is rewritten to hold these figures, so
        // `report` and `compare` on it say what this table says.
        let measured = keep_measurement(dir, window.clone())?;
        let total = &measured.total;
        let samples = total.count;
        let has_latency = samples > 0;
        let apdex = total.apdex;
        let error_rate = if samples > 0 { total.error_rate } else { 1.0 };
        let p95_ms = has_latency.then_some(total.p95_ms);
        let p95 = p95_ms.map(|ms| headroom_units::quantity::saturating_secs(ms / 1000.0));
        let good = meets(target, apdex, error_rate, p95, samples);
        let mut rows: BTreeMap<String, Vec<ResourceRow>> = BTreeMap::new();
        for row in read_resources(dir)?.unwrap_or_default() {
            if inside(row.second) {
                rows.entry(row.host.clone()).or_default().push(row);
            }
        }
        let mut cores: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
        for (second, host, loads) in read_core_loads(dir)? {
            if inside(second) {
                cores.insert((host, second), loads);
            }
        }
        let resources = rows
            .into_iter()
            .map(|(host, rows)| {
                let seconds: Vec<HostSecond> = rows
                    .iter()
                    .map(|r| HostSecond {
                        cpu_pct: r.cpu_pct,
                        memory_used_pct: r.memory_used_pct,
                        disk_util_pct: r.disk_util_pct,
                        net_link_pct: r.net_link_pct,
                        temperature_max_c: r.temperature_max_c,
                        throttled: r.throttled,
                        processes: &r.processes,
                        per_core: cores.get(&(host.clone(), r.second)).map(Vec::as_slice),
                    })
                    .collect();
                host_figures(&host, &seconds)
            })
            .collect();
        // Hosts that gave no figures: unknown, not idle.
        let missing = measured
            .resources
            .iter()
            .filter(|host| host.no_data())
            .map(|host| {
                format!(
                    "{} ({})",
                    host.host,
                    host.problem.as_deref().unwrap_or("no sample was taken")
                )
            })
            .collect();
        Ok(Level {
            users,
            good,
            apdex,
            apdex_rating: apdex.map(|a| Rating::of(a).to_string()),
            samples,
            error_rate,
            mean_ms: has_latency.then_some(total.mean_ms),
            p50_ms: has_latency.then_some(total.p50_ms),
            p90_ms: has_latency.then_some(total.p90_ms),
            p95_ms,
            rps: total.rps,
            measured_s: measured.elapsed_s,
            resources,
            missing,
            generator_limited,
            bundle: dir.to_path_buf(),
            warmup_s: window.start.as_secs_f64(),
            settled: None,
            stopped_early: false,
            apdex_interval: None,
            ended: String::new(),
            think_s: None,
            min_samples: 0,
            thin: false,
            why: String::new(),
        })
    }

    /// Little's law on the level's measurement: the users its throughput
    /// and cycle (response + the think its users took, else `think`)
    /// account for.
    pub fn little(&self, think: Duration) -> Option<LittlesLaw> {
        let mean_s = self.mean_ms? / 1000.0;
        let think_s = self.think_s.unwrap_or(think.as_secs_f64());
        Some(LittlesLaw {
            rps: self.rps,
            mean_response_s: mean_s,
            think_s,
            users_busy: headroom_analysis::capacity::users_for(
                self.rps,
                headroom_units::quantity::saturating_secs(mean_s),
                headroom_units::quantity::saturating_secs(think_s),
            ),
            users: self.users,
        })
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

    pub fn describe(&self) -> String {
        format!(
            "{:.1} req/s × ({:.3} s mean response + {:.3} s think) = {:.1} users busy of {}",
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
    pub target: Target,
    pub capacity: CapacityAnswer,
    /// The first level above the capacity that broke the target.
    pub knee_users: Option<u32>,
    pub bottleneck: Option<Bottleneck>,
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
    /// The latest bench of the bottleneck's host (`headroom bench`), its
    /// figures for the saturated resource: first line names the bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_bench: Vec<String>,
    pub levels: Vec<Level>,
    pub bundle: PathBuf,
}

impl CapacityResult {
    /// `levels` in the order run; `capacity` from the search.
    pub fn new(
        target: Target,
        levels: Vec<Level>,
        capacity: Option<u32>,
        at_least: bool,
        think: Duration,
        monitored: bool,
        bundle: PathBuf,
    ) -> CapacityResult {
        // A level measured several times (--confirm) speaks through its
        // median repetition (by Apdex): one consistent set of figures.
        let at = |users: u32| {
            let mut runs: Vec<&Level> = levels.iter().filter(|l| l.users == users).collect();
            runs.sort_by(|a, b| a.apdex.unwrap_or(0.0).total_cmp(&b.apdex.unwrap_or(0.0)));
            runs.get(runs.len().saturating_sub(1) / 2).copied()
        };
        let best = capacity.and_then(at);
        let knee = levels
            .iter()
            .filter(|l| !l.good && capacity.is_none_or(|c| l.users > c))
            .min_by_key(|l| l.users);
        let bottleneck = knee.and_then(|k| bottleneck(k.users, &k.resources));
        let deciding: Vec<&Level> = best.into_iter().chain(knee).collect();
        let generator_limited = deciding.iter().any(|l| l.generator_limited);
        let little = best.and_then(|l| l.little(think));
        let mut invalid = Vec::new();
        if generator_limited {
            invalid.push("the load generator was the limit at a deciding level: the figures are not the server's".to_string());
        }
        for thin in deciding.iter().filter(|l| l.thin) {
            invalid.push(format!(
                "the level of {} users decided the answer on {} requests, fewer than the {} a verdict needs (--min-samples): lengthen --step-duration, or lower --min-samples knowingly",
                thin.users, thin.samples, thin.min_samples
            ));
        }
        // Only where the think the users took was measured (a throughput
        // cap's waits for a slot are not, and older searches have none).
        let measured_think = best.is_some_and(|l| l.think_s.is_some());
        if let Some(l) = little
            .as_ref()
            .filter(|l| measured_think && l.miss() > LITTLE_TOLERANCE)
        {
            invalid.push(format!(
                "Little's law at the capacity accounts for {:.0} users busy of {}: the measured window did not see the users in their steady cycle (they started or clicked in step, or waited somewhere not measured); lengthen --warmup and --step-duration to several think times",
                l.users_busy, l.users
            ));
        }
        let valid = invalid.is_empty();
        let limit_note = if generator_limited {
            "the load generator itself was the limit (its CPU was saturated or starved): the result is not the server's; run headroom on another machine or give it more CPU".into()
        } else if knee.is_none() {
            "the target held at every level tried: raise --max".into()
        } else if bottleneck.is_some() {
            String::new()
        } else if let Some(missing) = knee.filter(|k| !k.missing.is_empty()) {
            format!(
                "no data from {} at the knee: those resources are unknown, not idle, so the limit cannot be named",
                missing.missing.join(", ")
            )
        } else if monitored {
            "nothing monitored saturates at the knee: the limit is elsewhere (a worker pool such as php-fpm's pm.max_children, locks, a connection pool, or a resource not monitored)".into()
        } else {
            "no server resources were monitored (--monitor): the limit cannot be named".into()
        };
        let confirmation = capacity.and_then(|c| {
            let at_c: Vec<&Level> = levels.iter().filter(|l| l.users == c).collect();
            if at_c.len() < 2 {
                return None;
            }
            let k = knee.map(|l| l.users);
            let estimates: Vec<u32> = match k {
                Some(k) => {
                    let at_k: Vec<&Level> = levels.iter().filter(|l| l.users == k).collect();
                    at_c.iter()
                        .zip(&at_k)
                        .map(|(lc, lk)| {
                            repetition_capacity(
                                c,
                                k,
                                (lc.good, lk.good),
                                (lc.apdex, lk.apdex),
                                target.apdex,
                            )
                        })
                        .collect()
                }
                // No broken level above: each repetition says c or less.
                None => at_c
                    .iter()
                    .map(|l| if l.good { c } else { c.saturating_sub(1) })
                    .collect(),
            };
            Some(Confirmation {
                repetitions: at_c.len() as u32,
                low: estimates.iter().copied().min().unwrap_or(c).min(c),
                high: estimates.iter().copied().max().unwrap_or(c).max(c),
            })
        });
        let range = capacity.map(|c| {
            let high = knee.map_or(c, |k| k.users.saturating_sub(1).max(c));
            match &confirmation {
                Some(conf) => [conf.low.min(c), conf.high.max(high)],
                None => [c, high],
            }
        });
        let ran_on: Vec<&Level> = levels
            .iter()
            .filter(|l| l.settled.is_some() && !l.stopped_early)
            .collect();
        let agreement = (!ran_on.is_empty()).then(|| Agreement {
            settled: ran_on.len() as u32,
            agreed: ran_on
                .iter()
                .filter(|l| l.settled.as_ref().is_some_and(|s| s.met == l.good))
                .count() as u32,
        });
        let mut result = CapacityResult {
            schema_version: SCHEMA_VERSION,
            setup: CapacitySetup::default(),
            status: "complete".into(),
            target,
            capacity: CapacityAnswer {
                users: capacity,
                apdex: best.and_then(|l| l.apdex),
                apdex_rating: best.and_then(|l| l.apdex_rating.clone()),
                rps: best.map(|l| l.rps),
                p95_ms: best.and_then(|l| l.p95_ms),
                at_least,
            },
            knee_users: knee.map(|l| l.users),
            bottleneck,
            limit_note,
            valid,
            invalid,
            think_s: think.as_secs_f64(),
            little,
            confirmation,
            criteria: Vec::new(),
            range,
            inversions: Vec::new(),
            agreement,
            verdict: String::new(),
            host_bench: Vec::new(),
            levels,
            bundle,
        };
        result.verdict = result.verdict();
        result
    }

    /// The search was stopped before it could decide: no capacity, no
    /// bottleneck and not valid; the levels measured stay.
    pub fn interrupted(mut self) -> CapacityResult {
        self.status = "interrupted".into();
        self.capacity = CapacityAnswer {
            users: None,
            apdex: None,
            apdex_rating: None,
            rps: None,
            p95_ms: None,
            at_least: false,
        };
        self.knee_users = None;
        self.bottleneck = None;
        self.little = None;
        self.confirmation = None;
        self.range = None;
        self.valid = false;
        self.limit_note = format!(
            "the search was interrupted after {}, before it could decide: no capacity is claimed",
            headroom_units::quantity::count(self.levels.len(), "level", "levels")
        );
        self.verdict = self.verdict();
        self
    }

    /// "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; pi machine CPU 96% at 50 users".
    pub fn verdict(&self) -> String {
        if self.status == "interrupted" {
            return format!("no answer: {}", self.limit_note);
        }
        let mut text = match self.capacity.users {
            Some(users) => format!(
                "{}{}{} at Apdex ≥ {:.2} ({}: {:.2}), {:.1} req/s",
                if self.capacity.at_least {
                    "at least "
                } else {
                    ""
                },
                headroom_units::quantity::count(users as usize, "user", "users"),
                self.confirmation
                    .as_ref()
                    .map_or(String::new(), |c| if c.low == c.high {
                        format!(" ({} repetitions agree)", c.repetitions)
                    } else {
                        format!(
                            " (between {} and {} in {} repetitions)",
                            c.low, c.high, c.repetitions
                        )
                    }),
                self.target.apdex,
                self.capacity.apdex_rating.as_deref().unwrap_or("-"),
                self.capacity.apdex.unwrap_or(0.0),
                self.capacity.rps.unwrap_or(0.0)
            ),
            None => format!(
                "fewer than {}: not even the lowest level met Apdex ≥ {:.2}",
                headroom_units::quantity::count(
                    self.levels.iter().map(|l| l.users).min().unwrap_or(1) as usize,
                    "user",
                    "users"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn bottleneck_of(level: &Level) -> Option<Bottleneck> {
        bottleneck(level.users, &level.resources)
    }

    fn level(users: u32, cpu: f64, disk: f64, throttled: u64) -> Level {
        Level {
            users,
            good: false,
            apdex: Some(0.5),
            apdex_rating: Some("Poor".into()),
            samples: 10,
            error_rate: 0.0,
            mean_ms: Some(10.0),
            p50_ms: None,
            p90_ms: None,
            p95_ms: None,
            rps: 1.0,
            measured_s: 1.0,
            resources: vec![HostFigures {
                host: "pi".into(),
                cpu_avg: Some(cpu),
                cpu_peak: Some(cpu),
                memory_avg: Some(40.0),
                disk_avg: Some(disk),
                net_link_avg: None,
                temperature_max: Some(60.0),
                throttled_seconds: throttled,
                busiest_core: None,
                processes: Vec::new(),
            }],
            missing: Vec::new(),
            generator_limited: false,
            bundle: PathBuf::new(),
            warmup_s: 1.0,
            settled: None,
            stopped_early: false,
            apdex_interval: None,
            ended: String::new(),
            think_s: None,
            min_samples: 0,
            thin: false,
            why: String::new(),
        }
    }

    #[test]
    fn the_most_saturated_resource_is_the_bottleneck() {
        let b = bottleneck_of(&level(50, 96.0, 20.0, 0)).unwrap();
        assert_eq!((b.resource.as_str(), b.figure, b.users), ("cpu", 96.0, 50));
        assert_eq!(b.describe(), "pi machine CPU 96% at 50 users");
        assert_eq!(
            bottleneck_of(&level(50, 92.0, 99.0, 0)).unwrap().resource,
            "disk"
        );
        assert_eq!(bottleneck_of(&level(50, 50.0, 20.0, 0)), None);
        assert_eq!(
            bottleneck_of(&level(50, 50.0, 20.0, 3)).unwrap().resource,
            "throttling"
        );
    }

    /// A capacity level measured while its users were all thinking (400
    /// users, 1.2 req/s, 30 s think: Little's law finds 37 of them) and a
    /// knee judged on 40 requests: the answer is said, and is not valid.
    #[test]
    fn a_level_out_of_its_steady_cycle_or_thin_is_not_valid() {
        let target = Target {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut silent = level(400, 5.0, 1.0, 0);
        silent.good = true;
        silent.apdex = Some(1.0);
        silent.rps = 1.2;
        silent.think_s = Some(30.0);
        silent.samples = 150;
        silent.min_samples = 100;
        let search = |levels: Vec<Level>, capacity| {
            CapacityResult::new(
                target,
                levels,
                Some(capacity),
                false,
                Duration::from_secs(30),
                true,
                PathBuf::new(),
            )
        };
        let r = search(vec![silent.clone()], 400);
        assert!(!r.valid);
        assert!(r.invalid[0].contains("Little's law"), "{:?}", r.invalid);
        assert!(r.verdict.ends_with("[INVALID]"), "{}", r.verdict);
        // In its cycle: 400 users at 13 req/s with 30 s think.
        let mut steady = silent.clone();
        steady.rps = 13.0;
        let mut knee = level(500, 5.0, 1.0, 0);
        knee.samples = 40;
        knee.min_samples = 100;
        let r = search(vec![steady.clone(), knee.clone()], 400);
        assert!(r.valid, "{:?}", r.invalid);
        knee.thin = true;
        let r = search(vec![steady.clone(), knee], 400);
        assert!(!r.valid);
        assert_eq!(r.invalid.len(), 1, "{:?}", r.invalid);
        assert!(r.invalid[0].contains("500 users decided the answer on 40 requests"));
        // Without a measured think (a throughput cap's slots), no check.
        let mut paced = silent;
        paced.think_s = None;
        assert!(search(vec![paced], 400).valid);
    }

    #[test]
    fn verdicts_name_the_limit_or_say_why_not() {
        let target = Target {
            apdex: 0.7,
            max_error: 0.01,
            p95_max: None,
        };
        let mut good = level(40, 60.0, 10.0, 0);
        good.good = true;
        good.apdex = Some(0.74);
        good.apdex_rating = Some("Fair".into());
        good.rps = 25.3;
        let knee = level(50, 96.0, 10.0, 0);
        let r = CapacityResult::new(
            target,
            vec![good.clone(), knee],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert_eq!(
            r.verdict(),
            "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; pi machine CPU 96% at 50 users"
        );
        let calm = level(50, 30.0, 10.0, 0);
        let r = CapacityResult::new(
            target,
            vec![good.clone(), calm.clone()],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(
            r.verdict().contains("the limit is elsewhere"),
            "{}",
            r.verdict()
        );
        // A host that sent nothing at the knee is unknown, not idle.
        let mut blind = calm.clone();
        blind.resources.clear();
        blind.missing = vec!["pi (connection refused: the agent is not running)".into()];
        let r = CapacityResult::new(
            target,
            vec![good.clone(), blind],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(
            r.verdict().contains("no data from pi (connection refused")
                && !r.verdict().contains("elsewhere"),
            "{}",
            r.verdict()
        );
        let mut starved = calm;
        starved.generator_limited = true;
        let r = CapacityResult::new(
            target,
            vec![good, starved],
            Some(40),
            false,
            Duration::from_secs(1),
            true,
            PathBuf::new(),
        );
        assert!(!r.valid && r.verdict().ends_with("[INVALID]"));
        // capacity.json reads back as it was written.
        let dir = std::env::temp_dir().join(format!("headroom-capacity-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        write(&dir, &r).unwrap();
        let back = read(&dir).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
        fs::write(dir.join(CAPACITY), "{\"schema_version\": 1, \"lev").unwrap();
        assert!(read(&dir).unwrap_err().to_string().contains("truncated"));
        let stopped = r.interrupted();
        assert_eq!(stopped.status, "interrupted");
        assert_eq!((stopped.capacity.users, stopped.valid), (None, false));
        assert!(stopped
            .verdict
            .starts_with("no answer: the search was interrupted after 2 levels"));
    }
}
