//! A level's figures: its bundle read back over the measured window
//! ([`measure_level`]: the target met or not, each monitored host's
//! figures, hosts that sent nothing), what the ladder learns of it
//! ([`ladder_figures`]), and Little's law on it ([`little`]).

use crate::ladder::{users_for, LevelFigures};
use headroom_analysis::apdex::Rating;
use headroom_analysis::capacity::{host_figures, meets, ApdexGoal, HostFigures, HostSecond};
use headroom_bundle::capacity::{keep_measurement, Level, LittlesLaw, SearchRequests};
use headroom_bundle::limits::{in_order, read_details, use_method, Limit};
use headroom_bundle::resources::{read_core_loads, read_resources, ResourceRow};
use headroom_bundle::wire::Unrecorded;
use headroom_bundle::BundleError;
use headroom_units::quantity::saturating_secs;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Reads the level's bundle, keeping the seconds of its measurement,
/// `window`: from the end of the warm-up to the end of the level.
pub fn measure_level(
    users: u32,
    dir: &Path,
    window: Range<Duration>,
    target: &ApdexGoal,
    generator_limited: bool,
) -> Result<Level, BundleError> {
    let inside =
        |second: u64| window.contains(&(Duration::from_secs(second) + Duration::from_micros(1)));
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
                    disk_iops: r.disk_iops,
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
    let mut details: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for (second, host, resources) in read_details(dir)? {
        if inside(second) {
            details.entry(host).or_default().push(resources);
        }
    }
    let mut limits: Vec<Limit> = details
        .iter()
        .flat_map(|(host, seconds)| use_method(host, &seconds.iter().collect::<Vec<_>>()))
        .collect();
    in_order(&mut limits);
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
        limits,
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
        phases: Vec::new(),
        rest: None,
        put_aside: Vec::new(),
        uneven_floor: None,
        reading_as: None,
    })
}

/// Every request a search's levels sent, read from their bundles (each
/// level's whole run: warm-up and the seconds after its measurement
/// included), with the probes between levels and `idle_probes` before
/// the first. A level whose bundle cannot be read counts its measured
/// samples.
pub fn requests_sent(levels: &[Level], idle_probes: u32, non_stop: &[PathBuf]) -> SearchRequests {
    let mut sent = SearchRequests {
        rest_probes: u64::from(idle_probes),
        ..SearchRequests::default()
    };
    for level in levels {
        sent.rest_probes += level.rest.as_ref().map_or(0, |r| u64::from(r.probes));
        let measured = std::iter::once((&level.bundle, Some(level.samples)));
        let put_aside = level.put_aside.iter().map(|b| (b, None));
        for (bundle, samples) in measured.chain(put_aside) {
            sent.levels += bundle_requests(bundle, samples, &mut sent.unrecorded);
        }
    }
    for bundle in non_stop {
        sent.non_stop += bundle_requests(bundle, None, &mut sent.unrecorded);
    }
    sent.total = sent.levels + sent.non_stop + sent.unrecorded.total() + sent.rest_probes;
    sent
}

/// A run's requests with a sample (its whole run), adding those without
/// one to `unrecorded`; `samples` when its bundle cannot be read.
fn bundle_requests(bundle: &Path, samples: Option<u64>, unrecorded: &mut Unrecorded) -> u64 {
    let whole = headroom_bundle::manifest::read_manifest(bundle)
        .ok()
        .and_then(|m| m.measurement.map(|m| m.whole_run).or(m.summary));
    match whole {
        Some(summary) => match summary.requests {
            Some(wire) => {
                unrecorded.add(&wire.unrecorded);
                wire.requests - wire.unrecorded.total()
            }
            None => summary.total.count,
        },
        None => samples.unwrap_or(0),
    }
}

/// Little's law on the level's measurement: the users its throughput
/// and cycle (response + the think its users took, else `think`)
/// account for.
pub fn little(level: &Level, think: Duration) -> Option<LittlesLaw> {
    let mean_s = level.mean_ms? / 1000.0;
    let think_s = level.think_s.unwrap_or(think.as_secs_f64());
    Some(LittlesLaw {
        rps: level.rps,
        mean_response_s: mean_s,
        think_s,
        users_busy: users_for(level.rps, saturating_secs(mean_s), saturating_secs(think_s)),
        users: level.users,
    })
}

/// The busiest monitored resource of a level, 0..1: the highest of a
/// host's CPU, its busiest core and its disk. With the server's processes
/// watched (`--process`), its CPU is theirs, not the machine's: other work
/// that keeps the machine busy does not make the server look full
/// ([`crowded`] says so instead).
pub fn utilization(level: &Level) -> Option<f64> {
    level
        .resources
        .iter()
        .flat_map(|h| {
            let (cpu, core) = if h.processes.is_empty() {
                (h.cpu_avg, h.busiest_core.map(|c| c.1))
            } else {
                (Some(server_cpu(h)), None)
            };
            [cpu, core, h.disk_avg]
        })
        .flatten()
        .reduce(f64::max)
        .map(|pct| pct / 100.0)
}

/// The watched processes' CPU together, as a % of the host.
fn server_cpu(host: &HostFigures) -> f64 {
    host.processes.iter().map(|(_, pct)| pct).sum()
}

/// A host whose CPU other work kept busy at a level: the machine's CPU
/// near full while the watched server processes used under half of it.
/// "host: the machine's CPU 100% busy, the server's processes 4%".
pub fn crowded(level: &Level) -> Option<String> {
    level.resources.iter().find_map(|h| {
        let machine = h.cpu_avg?;
        let server = server_cpu(h);
        (!h.processes.is_empty()
            && machine >= CROWDED_PCT
            && server < machine * headroom_analysis::capacity::SERVER_SHARE_OF_CPU)
            .then(|| {
                format!(
                    "{}: the machine's CPU {machine:.0}% busy, the server's processes (--process) {server:.0}%",
                    h.host
                )
            })
    })
}

/// The machine's CPU from which other work crowding the server is said.
const CROWDED_PCT: f64 = 90.0;

/// What the ladder learns of a measured level.
pub fn ladder_figures(level: &Level) -> LevelFigures {
    LevelFigures {
        rps: level.rps,
        mean_response: Duration::from_secs_f64(level.mean_ms.unwrap_or(0.0) / 1000.0),
        apdex: level.apdex,
        utilization: utilization(level),
        think: level.think_s.map(saturating_secs),
        // A lesson met when its worst phase did.
        judged_apdex: level.judged_apdex(),
    }
}
