//! A capacity search's figures: each level's measurement (after its
//! warm-up) read back from the level's bundle, the bottleneck at the knee,
//! and the verdict.

use headroom_analysis::apdex::Rating;
use headroom_load::bundle::{BundleError, TOTAL_LABEL};
use headroom_load::bundle_reader::{
    read_core_loads, read_intervals, read_latency_window, read_resources,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a level must meet.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Target {
    pub apdex: f64,
    /// Largest error share, 0..1.
    pub max_error: f64,
    pub p95_max_ms: Option<f64>,
}

/// A monitored host's resources over a level's measurement.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HostFigures {
    pub host: String,
    pub cpu_avg: Option<f64>,
    pub cpu_peak: Option<f64>,
    pub memory_avg: Option<f64>,
    pub disk_avg: Option<f64>,
    pub net_link_avg: Option<f64>,
    pub temperature_max: Option<f64>,
    pub throttled_seconds: u64,
    /// The busiest core and its average busy %: a server limited to one
    /// core (single-threaded, or pinned) saturates it while the host's
    /// average stays low.
    pub busiest_core: Option<(usize, f64)>,
}

/// One level of the search.
#[derive(Debug, Clone, Serialize)]
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The generator could not keep up (its figures are not the server's).
    pub generator_limited: bool,
    pub bundle: PathBuf,
}

fn average(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

impl Level {
    /// Reads the level's bundle, keeping the seconds of its measurement:
    /// from `window.0` (the end of the warm-up) to `window.1` (the end of
    /// the level).
    pub fn measure(
        users: u32,
        dir: &Path,
        window: (f64, f64),
        target: &Target,
        generator_limited: bool,
    ) -> Result<Level, BundleError> {
        let (warmup_s, end_s) = window;
        let inside = |second: u64| {
            let s = second as f64;
            s + 1e-6 >= warmup_s && s + 1e-6 < end_s
        };
        let rows: Vec<_> = read_intervals(dir)?
            .into_iter()
            .filter(|r| r.label == TOTAL_LABEL && inside(r.second))
            .collect();
        let samples: u64 = rows.iter().map(|r| r.count).sum();
        let errors: u64 = rows.iter().map(|r| r.errors).sum();
        let measured_s: f64 = rows.iter().map(|r| r.interval_s).sum();
        let (s, t, f) = rows.iter().fold((0u64, 0u64, 0u64), |a, r| {
            (
                a.0 + r.apdex_satisfied,
                a.1 + r.apdex_tolerating,
                a.2 + r.apdex_frustrated,
            )
        });
        let apdex = (s + t + f > 0).then(|| (s as f64 + t as f64 / 2.0) / (s + t + f) as f64);
        let latency = read_latency_window(dir, warmup_s, end_s)?.filter(|h| !h.is_empty());
        let ms = |q: f64| {
            latency
                .as_ref()
                .map(|h| h.value_at_quantile(q) as f64 / 1000.0)
        };
        let error_rate = if samples > 0 {
            errors as f64 / samples as f64
        } else {
            1.0
        };
        let p95_ms = ms(0.95);
        let good = apdex.is_some_and(|a| a + 1e-9 >= target.apdex)
            && error_rate <= target.max_error
            && target
                .p95_max_ms
                .is_none_or(|max| p95_ms.is_some_and(|p| p <= max))
            && samples > 0;
        let mut hosts: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for row in read_resources(dir)?.unwrap_or_default() {
            if inside(row.second) {
                hosts.entry(row.host.clone()).or_default().push(row);
            }
        }
        let mut cores: BTreeMap<String, (Vec<f64>, usize)> = BTreeMap::new();
        for (second, host, loads) in read_core_loads(dir)? {
            if inside(second) {
                let (sums, n) = cores.entry(host).or_insert((Vec::new(), 0));
                sums.resize(sums.len().max(loads.len()), 0.0);
                for (sum, load) in sums.iter_mut().zip(&loads) {
                    *sum += load;
                }
                *n += 1;
            }
        }
        let resources = hosts
            .into_iter()
            .map(|(host, rows)| {
                let busiest_core = cores.get(&host).and_then(|(sums, n)| {
                    sums.iter()
                        .enumerate()
                        .map(|(i, sum)| (i, sum / *n as f64))
                        .max_by(|a, b| a.1.total_cmp(&b.1))
                });
                let values =
                    |get: fn(&headroom_load::bundle_reader::ResourceRow) -> Option<f64>| {
                        rows.iter().filter_map(get).collect::<Vec<f64>>()
                    };
                let cpu = values(|r| r.cpu_pct);
                HostFigures {
                    host,
                    cpu_avg: average(&cpu),
                    cpu_peak: cpu.iter().copied().reduce(f64::max),
                    memory_avg: average(&values(|r| r.memory_used_pct)),
                    disk_avg: average(&values(|r| r.disk_util_pct)),
                    net_link_avg: average(&values(|r| r.net_link_pct)),
                    temperature_max: values(|r| r.temperature_max_c).into_iter().reduce(f64::max),
                    throttled_seconds: rows.iter().filter(|r| r.throttled == Some(true)).count()
                        as u64,
                    busiest_core,
                }
            })
            .collect();
        let missing = headroom_load::bundle_reader::manifest_value(dir)
            .ok()
            .and_then(|m| m["summary"]["resources"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter(|host| host["samples"].as_u64() == Some(0))
            .map(|host| {
                format!(
                    "{} ({})",
                    host["host"].as_str().unwrap_or("?"),
                    host["problem"].as_str().unwrap_or("no sample was taken")
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
            mean_ms: latency.as_ref().map(|h| h.mean() / 1000.0),
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p95_ms,
            rps: if measured_s > 0.0 {
                samples as f64 / measured_s
            } else {
                0.0
            },
            measured_s,
            resources,
            missing,
            generator_limited,
            bundle: dir.to_path_buf(),
        })
    }
}

/// What limits the server at the knee.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bottleneck {
    /// `cpu`, `memory`, `disk`, `network`, `throttling`, `temperature`.
    pub resource: String,
    pub host: String,
    /// The figure: % (cpu, memory, disk, network), seconds (throttling) or °C.
    pub figure: f64,
    pub users: u32,
    /// For `cpu`: the one core that saturated while the host's average did not.
    pub core: Option<usize>,
}

impl Bottleneck {
    pub fn describe(&self) -> String {
        match self.resource.as_str() {
            "throttling" => format!(
                "{} throttled {} s at {} users",
                self.host, self.figure, self.users
            ),
            "temperature" => format!(
                "{} at {:.0} °C at {} users",
                self.host, self.figure, self.users
            ),
            "cpu" if self.core.is_some() => format!(
                "{} CPU core {} {:.0}% at {} users (one core saturated; the host's average is lower)",
                self.host,
                self.core.unwrap_or(0),
                self.figure,
                self.users
            ),
            resource => format!(
                "{} {} {:.0}% at {} users",
                self.host,
                match resource {
                    "cpu" => "CPU",
                    "disk" => "disk %util",
                    "network" => "network link",
                    other => other,
                },
                self.figure,
                self.users
            ),
        }
    }
}

/// The saturated resource of `level`, if any: CPU, disk or network link
/// ≥ 90%, memory ≥ 90%, throttling, or ≥ 80 °C. The most saturated wins.
pub fn bottleneck(level: &Level) -> Option<Bottleneck> {
    let mut found: Vec<(f64, Bottleneck)> = Vec::new();
    for host in &level.resources {
        let mut candidate =
            |resource: &str, figure: Option<f64>, limit: f64, core: Option<usize>| {
                if let Some(figure) = figure.filter(|f| *f >= limit) {
                    found.push((
                        figure / limit,
                        Bottleneck {
                            resource: resource.into(),
                            host: host.host.clone(),
                            figure,
                            users: level.users,
                            core,
                        },
                    ));
                }
            };
        candidate("cpu", host.cpu_avg, 90.0, None);
        if host.cpu_avg.is_none_or(|c| c < 90.0) {
            if let Some((core, busy)) = host.busiest_core {
                candidate("cpu", Some(busy), 95.0, Some(core));
            }
        }
        candidate("memory", host.memory_avg, 90.0, None);
        candidate("disk", host.disk_avg, 90.0, None);
        candidate("network", host.net_link_avg, 90.0, None);
        candidate("temperature", host.temperature_max, 80.0, None);
        if host.throttled_seconds > 0 {
            candidate("throttling", Some(host.throttled_seconds as f64), 1.0, None);
        }
    }
    found
        .into_iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, b)| b)
}

/// The search's answer.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityAnswer {
    pub users: Option<u32>,
    pub apdex: Option<f64>,
    pub apdex_rating: Option<String>,
    pub rps: Option<f64>,
    pub p95_ms: Option<f64>,
    /// The target still held at --max: the capacity is at least that.
    pub at_least: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapacityResult {
    pub schema_version: u32,
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
    /// False when the generator limited a level that decided the answer.
    pub valid: bool,
    pub think_s: f64,
    /// The one-line answer, as printed.
    pub verdict: String,
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
        think_s: f64,
        monitored: bool,
        bundle: PathBuf,
    ) -> CapacityResult {
        let at = |users: u32| levels.iter().rev().find(|l| l.users == users);
        let best = capacity.and_then(at);
        let knee = levels
            .iter()
            .filter(|l| !l.good && capacity.is_none_or(|c| l.users > c))
            .min_by_key(|l| l.users);
        let bottleneck = knee.and_then(bottleneck);
        let deciding: Vec<&Level> = best.into_iter().chain(knee).collect();
        let valid = !deciding.iter().any(|l| l.generator_limited);
        let limit_note = if !valid {
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
        let mut result = CapacityResult {
            schema_version: 1,
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
            think_s,
            verdict: String::new(),
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
        self.valid = false;
        self.limit_note = format!(
            "the search was interrupted after {} level(s), before it could decide: no capacity is claimed",
            self.levels.len()
        );
        self.verdict = self.verdict();
        self
    }

    /// "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; CPU 96% at 50 users".
    pub fn verdict(&self) -> String {
        if self.status == "interrupted" {
            return format!("no answer: {}", self.limit_note);
        }
        let mut text = match self.capacity.users {
            Some(users) => format!(
                "{}{users} users at Apdex ≥ {:.2} ({}: {:.2}), {:.1} req/s",
                if self.capacity.at_least {
                    "at least "
                } else {
                    ""
                },
                self.target.apdex,
                self.capacity.apdex_rating.as_deref().unwrap_or("-"),
                self.capacity.apdex.unwrap_or(0.0),
                self.capacity.rps.unwrap_or(0.0)
            ),
            None => format!(
                "fewer than {} users: not even the lowest level met Apdex ≥ {:.2}",
                self.levels.iter().map(|l| l.users).min().unwrap_or(1),
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

/// The terminal summary of a search.
pub fn render_capacity(result: &CapacityResult) -> String {
    let mut out = String::from(
        "\n  users   Apdex          errors      p50      p90      p95    req/s   server CPU   target\n",
    );
    let mut levels: Vec<&Level> = result.levels.iter().collect();
    levels.sort_by_key(|l| l.users);
    for l in levels {
        let cpu = l
            .resources
            .iter()
            .filter_map(|h| h.cpu_avg.map(|c| format!("{c:.0}%")))
            .collect::<Vec<_>>()
            .join("/");
        let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}ms"));
        out.push_str(&format!(
            "  {:>5}   {:<14} {:>5.2}%  {:>7}  {:>7}  {:>7}  {:>7.1}   {:>10}   {}{}\n",
            l.users,
            l.apdex.map_or("-".into(), |a| format!(
                "{a:.3} {}",
                l.apdex_rating.as_deref().unwrap_or("")
            )),
            l.error_rate * 100.0,
            ms(l.p50_ms),
            ms(l.p90_ms),
            ms(l.p95_ms),
            l.rps,
            if cpu.is_empty() { "-".into() } else { cpu },
            if l.good { "met" } else { "broken" },
            if l.generator_limited {
                " (generator limited)"
            } else {
                ""
            }
        ));
    }
    out.push_str(&format!("\n  Capacity: {}\n", result.verdict()));
    if let (Some(users), Some(rps), Some(mean)) = (
        result.capacity.users,
        result.capacity.rps,
        result
            .levels
            .iter()
            .find(|l| Some(l.users) == result.capacity.users)
            .and_then(|l| l.mean_ms),
    ) {
        let cycle = mean / 1000.0 + result.think_s;
        out.push_str(&format!(
            "  Little's law: {rps:.1} req/s × ({:.3} s mean response + {:.3} s think) = {:.1} users busy of {users}\n",
            mean / 1000.0,
            result.think_s,
            rps * cycle
        ));
    }
    out.push_str(&format!("  Bundle: {}\n", result.bundle.display()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            }],
            missing: Vec::new(),
            generator_limited: false,
            bundle: PathBuf::new(),
        }
    }

    #[test]
    fn the_most_saturated_resource_is_the_bottleneck() {
        let b = bottleneck(&level(50, 96.0, 20.0, 0)).unwrap();
        assert_eq!((b.resource.as_str(), b.figure, b.users), ("cpu", 96.0, 50));
        assert_eq!(b.describe(), "pi CPU 96% at 50 users");
        assert_eq!(
            bottleneck(&level(50, 92.0, 99.0, 0)).unwrap().resource,
            "disk"
        );
        assert_eq!(bottleneck(&level(50, 50.0, 20.0, 0)), None);
        assert_eq!(
            bottleneck(&level(50, 50.0, 20.0, 3)).unwrap().resource,
            "throttling"
        );
    }

    #[test]
    fn verdicts_name_the_limit_or_say_why_not() {
        let target = Target {
            apdex: 0.7,
            max_error: 0.01,
            p95_max_ms: None,
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
            1.0,
            true,
            PathBuf::new(),
        );
        assert_eq!(
            r.verdict(),
            "40 users at Apdex ≥ 0.70 (Fair: 0.74), 25.3 req/s; pi CPU 96% at 50 users"
        );
        let calm = level(50, 30.0, 10.0, 0);
        let r = CapacityResult::new(
            target,
            vec![good.clone(), calm.clone()],
            Some(40),
            false,
            1.0,
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
            1.0,
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
            1.0,
            true,
            PathBuf::new(),
        );
        assert!(!r.valid && r.verdict().ends_with("[INVALID]"));
        let stopped = r.interrupted();
        assert_eq!(stopped.status, "interrupted");
        assert_eq!((stopped.capacity.users, stopped.valid), (None, false));
        assert!(stopped
            .verdict
            .starts_with("no answer: the search was interrupted after 2 level(s)"));
    }
}
