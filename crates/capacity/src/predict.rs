//! A finished capacity search read as a model of its server
//! ([`headroom_analysis::prediction`]): each level's throughput, mean
//! response, think time and the server's processes' busy cores, the
//! lightest level's response times for their shape; then the model's
//! curve for the host as measured (each level's error beside it) and for
//! other hosts, with the users each would serve at the search's target.

use headroom_analysis::capacity::ApdexGoal;
use headroom_analysis::prediction::{
    capacity, curve, demands, judged, Demands, HostScale, LevelLoad, Predicted, Shape, BUSY,
};
use headroom_bundle::capacity::{read, CapacityResult, Level};
use headroom_bundle::manifest::{read_manifest, Manifest};
use headroom_bundle::recovery::histogram_of_window;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Response-time quantiles kept for the shape.
const SHAPE_POINTS: usize = 200;

/// A search as the model reads it.
#[derive(Debug, Clone)]
pub struct MeasuredServer {
    pub dir: PathBuf,
    pub levels: Vec<LevelLoad>,
    pub demands: Demands,
    pub shape: Shape,
    pub goal: ApdexGoal,
    pub apdex_t_s: f64,
    pub apdex_f_s: f64,
    pub think_s: f64,
    /// The host the server's processes ran on, its cores, and the CPUs
    /// the server could use there (its limit, or every core).
    pub host: String,
    pub cores: usize,
    pub server_cpus: f64,
    pub architecture: String,
    pub processes: Vec<String>,
    /// What a user is, and what the throughput counts.
    pub user: String,
    pub users_are: String,
    pub rate_unit: String,
    /// The measured answer, and whether it is only a floor: the target
    /// held at every level tried (the search's "at least N"), so no limit
    /// was found for the model to be checked against.
    pub measured_users: Option<u32>,
    pub at_least: bool,
    pub pool: Option<u32>,
    /// A lesson search (`--arrive-within`): the seconds within which its
    /// students arrived. The model is of steady reading; the burst is not
    /// in it.
    pub lesson_within_s: Option<f64>,
}

/// A level whose throughput is more than this many times what its users
/// could make by Little's law (users / (think + response)) was not
/// measured: real levels stay within [`headroom_bundle::capacity::LITTLE_TOLERANCE`].
const LITTLE_IMPOSSIBLE: f64 = 2.0;

/// Reads the search in `dir`. `server_cpus`: the CPUs the server could
/// use when measured (a control group's limit), else the host's cores;
/// `pool`: the server's workers (php-fpm's pm.max_children), if bounded.
pub fn read_search(
    dir: &Path,
    server_cpus: Option<f64>,
    pool: Option<u32>,
) -> Result<MeasuredServer, String> {
    let result = read(dir).map_err(|e| e.to_string())?;
    impossible_level(&result.levels, result.think_s)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    refuse_unusable(dir, &result)?;
    let usable: Vec<&Level> = result
        .levels
        .iter()
        .filter(|l| !l.generator_limited && !l.thin && l.mean_ms.is_some() && l.rps > 0.0)
        .collect();
    let host = server_host(dir, &usable, &result.setup.processes)?;
    let lightest = usable.iter().min_by_key(|l| l.users).ok_or_else(|| {
        format!(
            "{}: no level has figures a verdict can rest on (each was thin or limited by the generator)",
            dir.display()
        )
    })?;
    let level_dir = level_bundle(dir, &lightest.bundle);
    let manifest = read_manifest(&level_dir).map_err(|e| e.to_string())?;
    let (cores, architecture) = server_cores(&level_dir, &manifest, &host)?;
    if let Some(given) = server_cpus.filter(|&n| n > cores as f64) {
        return Err(format!(
            "--server-cpus {given}: the search's host ({host}) had {cores} cores (its fingerprint in {}), so its server could not use more: give the CPUs its control group allowed (at most {cores}), or leave --server-cpus out for all {cores}",
            level_dir.join(headroom_bundle::MANIFEST).display()
        ));
    }
    let server_cpus = server_cpus.unwrap_or(cores as f64);
    let lesson_within_s = manifest.profile.arrive_within_s.or_else(|| {
        (manifest.profile.model == "lesson" || result.levels.iter().any(|l| !l.phases.is_empty()))
            .then_some(0.0)
    });
    let think_s = result.think_s;
    let levels = level_loads(&usable, &host, think_s, cores);
    let demands = demands(&levels, server_cpus).map_err(|e| format!("{}: {e}", dir.display()))?;
    // The shape's level, and its bundle.
    let shaped = usable
        .iter()
        .find(|l| l.users == demands.shape_users)
        .unwrap_or(lightest);
    let level_dir = level_bundle(dir, &shaped.bundle);
    let manifest = read_manifest(&level_dir).map_err(|e| e.to_string())?;
    let shape = response_shape(&level_dir, &manifest)?;
    Ok(MeasuredServer {
        dir: dir.to_path_buf(),
        levels,
        demands,
        shape,
        goal: result.target,
        apdex_t_s: result.setup.apdex_t_ms / 1000.0,
        apdex_f_s: result.setup.apdex_f_ms / 1000.0,
        think_s,
        host,
        cores,
        server_cpus,
        architecture,
        processes: result.setup.processes.clone(),
        user: result.setup.user.clone(),
        users_are: result
            .setup
            .users_are
            .clone()
            .unwrap_or_else(|| "users".to_string()),
        rate_unit: if result.setup.rate_unit.is_empty() {
            "req/s".to_string()
        } else {
            result.setup.rate_unit.clone()
        },
        measured_users: result.capacity.users,
        at_least: result.capacity.at_least,
        pool,
        lesson_within_s,
    })
}

/// The cores and architecture of the server's host (`host`: `local` or
/// an agent) as the level's bundle in `level_dir` fingerprinted it.
fn server_cores(
    level_dir: &Path,
    manifest: &Manifest,
    host: &str,
) -> Result<(usize, String), String> {
    let fingerprint = if host == "local" {
        manifest.fingerprint.clone()
    } else {
        manifest
            .monitored_hosts
            .iter()
            .find(|m| m.agent == host)
            .map(|m| m.fingerprint.clone())
    };
    let Some(fingerprint) = fingerprint.filter(|f| f.cores > 0) else {
        return Err(format!(
            "{}: the level's bundle does not say how many cores {host} has",
            level_dir.display()
        ));
    };
    Ok((fingerprint.cores, fingerprint.architecture.clone()))
}

/// Each usable level's load on the server: its throughput, response and
/// think times, and the server's CPU and disk on `host`; a level without
/// figures for the host is left out.
fn level_loads(usable: &[&Level], host: &str, think_s: f64, cores: usize) -> Vec<LevelLoad> {
    usable
        .iter()
        .filter_map(|l| {
            let figures = l.resources.iter().find(|h| h.host == host)?;
            let share: f64 = figures.processes.iter().map(|p| p.1).sum();
            Some(LevelLoad {
                users: l.users,
                throughput: l.rps,
                response_s: l.mean_ms? / 1000.0,
                think_s: l.think_s.unwrap_or(think_s),
                cpu_busy: share / 100.0 * cores as f64,
                disk_busy: figures.disk_avg.map(|d| d / 100.0),
                disk_iops: figures.disk_iops_avg,
                met: l.good,
            })
        })
        .collect()
}

/// A search predict does not read: one marked INVALID, or one that
/// watched no server process.
fn refuse_unusable(dir: &Path, result: &CapacityResult) -> Result<(), String> {
    if !result.valid {
        return Err(format!(
            "{}: the search is marked INVALID: {}. A model of its levels would carry the same fault, so predict does not read it: search again once that is put right (the search's own words above say what to change), then predict from that search",
            dir.display(),
            if result.invalid.is_empty() {
                "it gave no reason".to_string()
            } else {
                result.invalid.join("; ")
            }
        ));
    }
    if result.setup.processes.is_empty() {
        return Err(format!(
            "{}: the search watched no server process, so the CPU a request needs is unknown: search again with --monitor local (or an agent on the server) and --process NAME for each of the server's programs (e.g. --process php-fpm --process nginx --process mariadbd)",
            dir.display()
        ));
    }
    Ok(())
}

/// The one host the server's processes ran on, in the usable levels.
fn server_host(dir: &Path, usable: &[&Level], processes: &[String]) -> Result<String, String> {
    let hosts: Vec<&str> = usable
        .iter()
        .flat_map(|l| &l.resources)
        .filter(|h| h.processes.iter().any(|p| p.1 > 0.0))
        .map(|h| h.host.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    match hosts.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(format!(
                "{}: no level measured CPU for the server's processes ({}): check the names with `ps -e -o comm` on the server",
                dir.display(),
                processes.join(", ")
            )),
        several => Err(format!(
                "{}: the server's processes ran on {} hosts ({}); the model has one CPU: predict from a search whose server runs on one host",
                dir.display(),
                several.len(),
                several.join(", ")
            )),
    }
}

/// The shape of the response times a level measured, in its measurement
/// window.
fn response_shape(level_dir: &Path, manifest: &Manifest) -> Result<Shape, String> {
    let window = manifest
        .measurement
        .as_ref()
        .map_or(Duration::ZERO..Duration::MAX, |m| {
            headroom_units::quantity::saturating_secs(m.from_s)
                ..headroom_units::quantity::saturating_secs(m.until_s)
        });
    let histogram = histogram_of_window(level_dir, window).map_err(|e| e.to_string())?;
    let times: Vec<f64> = (0..SHAPE_POINTS)
        .map(|k| {
            let q = (k as f64 + 0.5) / SHAPE_POINTS as f64;
            histogram.value_at_quantile(q) as f64 / 1e6
        })
        .collect();
    let shape = Shape::new(&times)
        .ok_or_else(|| format!("{}: the level holds no response time", level_dir.display()))?;
    Ok(shape)
}

/// The first figure of a search's `levels` that no measurement gives, said
/// with its level, its value and why: a throughput or mean response time
/// of zero or less, a process's or host's negative CPU, a disk's negative
/// busy share or operations, a throughput more than its
/// users could make by Little's law ([`LITTLE_IMPOSSIBLE`] times
/// users / (think + response), the think the level's users took, else
/// the search's `think_s`). Such a bundle was edited or damaged.
pub fn impossible_level(levels: &[Level], think_s: f64) -> Result<(), String> {
    for (i, level) in levels.iter().enumerate() {
        let said = |figure: String, why: &str| {
            format!(
                "level {} ({}): {figure}: {why}; the bundle was edited or damaged: search again, or restore its capacity.json",
                i + 1,
                headroom_units::quantity::count(level.users as usize, "user", "users")
            )
        };
        if !level.rps.is_finite() || level.rps < 0.0 {
            return Err(said(
                format!("rps {}", level.rps),
                "a throughput cannot be negative",
            ));
        }
        if level.rps == 0.0 && level.samples > 0 {
            return Err(said(
                "rps 0".to_string(),
                &format!(
                    "{} requests were measured, so the throughput cannot be 0",
                    level.samples
                ),
            ));
        }
        if let Some(mean) = level.mean_ms.filter(|m| !m.is_finite() || *m <= 0.0) {
            return Err(said(
                format!("mean_ms {mean}"),
                "a mean response time is more than 0",
            ));
        }
        for host in &level.resources {
            if let Some((name, cpu)) = host
                .processes
                .iter()
                .find(|p| !p.1.is_finite() || p.1 < 0.0)
            {
                return Err(said(
                    format!("{name}'s CPU {cpu}% on {}", host.host),
                    "a process's CPU cannot be negative",
                ));
            }
            let figures = [
                ("cpu_avg", host.cpu_avg, "a host's CPU"),
                ("disk_avg", host.disk_avg, "a disk's busy share"),
                ("disk_iops_avg", host.disk_iops_avg, "a disk's operations"),
            ];
            if let Some((field, value, what)) = figures
                .into_iter()
                .find_map(|(f, v, w)| v.filter(|v| !v.is_finite() || *v < 0.0).map(|v| (f, v, w)))
            {
                return Err(said(
                    format!("{field} {value} on {}", host.host),
                    &format!("{what} cannot be negative"),
                ));
            }
        }
        let think_s = level.think_s.unwrap_or(think_s).max(0.0);
        if let (Some(mean), true) = (level.mean_ms, level.users > 0) {
            let most = f64::from(level.users) / (think_s + mean / 1000.0);
            if level.rps > LITTLE_IMPOSSIBLE * most {
                return Err(said(
                    format!("rps {}", level.rps),
                    &format!(
                        "{} users who think {think_s:.3} s and wait {:.1} ms a request make at most {most:.1} a second (Little's law: users / (think + response)), not {:.1} times that",
                        level.users,
                        mean,
                        level.rps / most
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A level's bundle: where the search wrote it, or beside capacity.json
/// when the search's directory was moved.
fn level_bundle(dir: &Path, recorded: &Path) -> PathBuf {
    if recorded.join(headroom_bundle::MANIFEST).exists() {
        return recorded.to_path_buf();
    }
    recorded
        .file_name()
        .map_or_else(|| recorded.to_path_buf(), |name| dir.join(name))
}

/// One level measured beside the model's figures for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub users: u32,
    pub measured_s: f64,
    pub model_s: f64,
    pub measured_throughput: f64,
    pub model_throughput: f64,
}

/// The model's prediction for one host.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub host: HostScale,
    pub curve: Vec<Predicted>,
    /// The users at the target, and between what (the model with the
    /// least and the most CPU demand a level measured).
    pub users: Option<u32>,
    pub range: [Option<u32>; 2],
    /// The station busiest at the answer ("CPU", "disk", "worker pool").
    pub limited_by: String,
}

impl MeasuredServer {
    /// The host as measured.
    pub fn here(&self) -> HostScale {
        HostScale {
            cpu_speed: 1.0,
            cpus: self.server_cpus,
            disk_speed: 1.0,
            disk_iops: None,
        }
    }

    /// The model's figures for each measured level.
    pub fn fit(&self) -> Result<Vec<Fit>, String> {
        let most = self.levels.iter().map(|l| l.users).max().unwrap_or(1);
        let here = self.here();
        let points = curve(
            &self.demands,
            self.demands.cpu_s,
            &here,
            self.think_s,
            self.pool,
            most,
        )
        .map_err(|e| e.to_string())?;
        let mut fits: Vec<Fit> = self
            .levels
            .iter()
            .map(|l| {
                let p = &points.points[l.users as usize - 1];
                Fit {
                    users: l.users,
                    measured_s: l.response_s,
                    model_s: p.response_s,
                    measured_throughput: l.throughput,
                    model_throughput: p.throughput,
                }
            })
            .collect();
        fits.sort_by_key(|f| f.users);
        Ok(fits)
    }

    /// The prediction for `host`, its curve up to `most` users.
    pub fn predict(&self, host: &HostScale, most: u32) -> Result<Prediction, String> {
        let goal = &self.goal;
        let p95 = goal.p95_max.map(|d| d.as_secs_f64());
        let judge = |cpu_s: f64| -> Result<Vec<Predicted>, String> {
            let points = curve(&self.demands, cpu_s, host, self.think_s, self.pool, most)
                .map_err(|e| e.to_string())?;
            Ok(judged(&points, &self.shape, self.apdex_t_s, self.apdex_f_s))
        };
        let curve = judge(self.demands.cpu_s)?;
        let users = capacity(&curve, goal.apdex, p95);
        let [least, most_demand] = self.demands.cpu_range_s;
        let range = [
            capacity(&judge(most_demand)?, goal.apdex, p95),
            capacity(&judge(least)?, goal.apdex, p95),
        ];
        let limited_by = users
            .and_then(|n| curve.get(n as usize - 1))
            .map(|p| {
                let names = ["CPU", "disk"];
                let (at, busiest) =
                    p.utilization
                        .iter()
                        .enumerate()
                        .fold(
                            (0, 0.0),
                            |best, (i, u)| if *u > best.1 { (i, *u) } else { best },
                        );
                if busiest >= BUSY {
                    names.get(at).unwrap_or(&"CPU").to_string()
                } else if self.pool.is_some() {
                    "the worker pool".to_string()
                } else {
                    "the response time the server takes unqueued".to_string()
                }
            })
            .unwrap_or_default();
        Ok(Prediction {
            host: host.clone(),
            curve,
            users,
            range,
            limited_by,
        })
    }
}

#[cfg(test)]
#[path = "predict_tests.rs"]
mod tests;
