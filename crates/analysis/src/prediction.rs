//! The users another host would serve, predicted from a capacity search
//! on this one. The search's levels give the server's service demands:
//! the CPU seconds a request needs (its processes' busy cores divided by
//! the throughput, the utilization law, fitted over the levels), the
//! disk's (its busy share divided by the throughput), and the rest of a
//! light-load response (network, waiting on nothing this host measured):
//! a delay. A closed queueing network of those stations, with the users'
//! think time and the server's worker pool, is solved by exact mean value
//! analysis ([`crate::mva`]) for the host as measured (so its error is
//! known) and for the other host, its demands scaled: CPU by the
//! single-thread speed and the CPUs the server may use, the disk by its
//! random IOPS. Apdex at each population comes from the response times'
//! shape at the lightest level measured: a request's time is that shape,
//! scaled to the host's unqueued response, plus an exponential wait of the
//! model's mean queueing time.

use crate::mva::{self, MvaError, OperatingPoint, Station};

/// One measured level of the search, as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelLoad {
    pub users: u32,
    /// Requests (or pages) a second.
    pub throughput: f64,
    /// Their mean response time, s.
    pub response_s: f64,
    /// The think time between them, s (Little's law's Z).
    pub think_s: f64,
    /// Cores the server's processes kept busy on average.
    pub cpu_busy: f64,
    /// The busiest disk's busy share (0–1), when measured.
    pub disk_busy: Option<f64>,
    /// The level met the search's target.
    pub met: bool,
}

/// A request's service demands on the measured host.
#[derive(Debug, Clone, PartialEq)]
pub struct Demands {
    /// CPU seconds a request (fitted over the levels).
    pub cpu_s: f64,
    /// The least and most of the levels' own CPU demands.
    pub cpu_range_s: [f64; 2],
    /// Disk seconds a request (0 when not measured).
    pub disk_s: f64,
    /// The rest of a response: time no measured station accounts for
    /// (the median over the levels below half the CPU).
    pub delay_s: f64,
    /// The levels the fit used.
    pub levels: usize,
    /// The level whose response times give their shape: the busiest
    /// below half the CPU (queueing has not yet widened them).
    pub shape_users: u32,
}

/// Why there is no prediction.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PredictionError {
    #[error("{0} of the search's levels have a throughput and the server's CPU: the model needs at least 2 (search with more levels, or a smaller --step)")]
    TooFewLevels(usize),
    #[error("the server's processes used no CPU in any level: their names (--process) match nothing that served the requests")]
    NoCpu,
    #[error(transparent)]
    Mva(#[from] MvaError),
}

/// The share of the server's CPU from which a level counts as running it
/// full.
pub const BUSY: f64 = 0.7;

/// The demands of the levels given (those a verdict can rest on), on a
/// server that could use `server_cpus`. A request's CPU falls as load
/// rises (a busy server amortizes its wake-ups) and rises again when the
/// CPU is full (a queue of requests, more switching between them). A
/// smaller host runs its CPU full at its knee, so the CPU demand comes
/// from the levels whose server used [`BUSY`] of its CPU or more, where
/// there are two, else from those that met the target, else from all:
/// least squares through the origin, so the busiest weigh most; its
/// interval the least and most of those levels' own. The delay and the
/// shape come from the levels that met the target.
pub fn demands(levels: &[LevelLoad], server_cpus: f64) -> Result<Demands, PredictionError> {
    let usable =
        |l: &&LevelLoad| l.throughput > 0.0 && l.response_s.is_finite() && l.cpu_busy.is_finite();
    let all: Vec<&LevelLoad> = levels.iter().filter(usable).collect();
    let met: Vec<&LevelLoad> = all.iter().copied().filter(|l| l.met).collect();
    let full: Vec<&LevelLoad> = all
        .iter()
        .copied()
        .filter(|l| l.cpu_busy >= BUSY * server_cpus)
        .collect();
    let calm = if met.len() >= 2 { met } else { all.clone() };
    let used = if full.len() >= 2 { full } else { calm.clone() };
    if used.len() < 2 {
        return Err(PredictionError::TooFewLevels(used.len()));
    }
    // Least squares through the origin: busy = demand × throughput.
    let through_origin = |busy: &dyn Fn(&LevelLoad) -> f64| {
        let xy: f64 = used.iter().map(|l| busy(l) * l.throughput).sum();
        let xx: f64 = used.iter().map(|l| l.throughput * l.throughput).sum();
        xy / xx
    };
    let cpu_s = through_origin(&|l| l.cpu_busy);
    if cpu_s <= 0.0 {
        return Err(PredictionError::NoCpu);
    }
    let each: Vec<f64> = used.iter().map(|l| l.cpu_busy / l.throughput).collect();
    let cpu_range_s = [
        each.iter().copied().fold(f64::INFINITY, f64::min),
        each.iter().copied().fold(0.0, f64::max),
    ];
    let disk_s = if used.iter().all(|l| l.disk_busy.is_some()) {
        through_origin(&|l| l.disk_busy.unwrap_or(0.0)).max(0.0)
    } else {
        0.0
    };
    let light: Vec<&&LevelLoad> = calm
        .iter()
        .filter(|l| l.cpu_busy < 0.5 * server_cpus)
        .collect();
    let light = if light.is_empty() {
        calm.iter().min_by_key(|l| l.users).into_iter().collect()
    } else {
        light
    };
    let mut rest: Vec<f64> = light
        .iter()
        .map(|l| (l.response_s - cpu_s - disk_s).max(0.0))
        .collect();
    rest.sort_by(f64::total_cmp);
    // The lower median: the middle, or the lesser of the two middles.
    let delay_s = rest[(rest.len() - 1) / 2];
    let shape_users = light
        .iter()
        .max_by(|a, b| a.throughput.total_cmp(&b.throughput))
        .map_or(0, |l| l.users);
    Ok(Demands {
        cpu_s,
        cpu_range_s,
        disk_s,
        delay_s,
        levels: used.len(),
        shape_users,
    })
}

/// A host the server runs on, against the measured one.
#[derive(Debug, Clone, PartialEq)]
pub struct HostScale {
    /// Its CPU's single-thread speed over the measured host's.
    pub cpu_speed: f64,
    /// CPUs the server may use there (a fraction: a share of one).
    pub cpus: f64,
    /// Its disk's random IOPS over the measured host's (1: the same).
    pub disk_speed: f64,
}

/// The network of `demands` on `host`: the CPU with ⌈cpus⌉ servers (a
/// fraction of a CPU is one server slower by that fraction), the disk,
/// and the delay (kept apart: it queues for nothing).
pub fn stations(demands: &Demands, cpu_s: f64, host: &HostScale) -> Vec<Station> {
    let servers = host.cpus.ceil().max(1.0);
    let mut stations = vec![Station {
        name: "CPU".to_string(),
        demand_s: cpu_s / host.cpu_speed * servers / host.cpus,
        servers: servers as u32,
    }];
    if demands.disk_s > 0.0 {
        stations.push(Station {
            name: "disk".to_string(),
            demand_s: demands.disk_s / host.disk_speed,
            servers: 1,
        });
    }
    stations
}

/// The model's figures for 1..=`users` users: each point's response
/// includes the delay.
pub fn curve(
    demands: &Demands,
    cpu_s: f64,
    host: &HostScale,
    think_s: f64,
    pool: Option<u32>,
    users: u32,
) -> Result<Vec<OperatingPoint>, PredictionError> {
    let stations = stations(demands, cpu_s, host);
    // A delay station is a longer think as far as the queues know.
    let thinking = think_s + demands.delay_s;
    let mut points = match pool {
        Some(pool) => mva::solve_with_pool(&stations, thinking, users, pool)?,
        None => mva::solve(&stations, thinking, users)?,
    };
    for p in &mut points {
        p.response_s += demands.delay_s;
    }
    Ok(points)
}

/// A request's response time without queueing on `host`.
pub fn unqueued_s(demands: &Demands, cpu_s: f64, host: &HostScale) -> f64 {
    demands.delay_s
        + stations(demands, cpu_s, host)
            .iter()
            .map(|s| s.demand_s)
            .sum::<f64>()
}

/// The response times' shape: a light level's quantiles over their mean.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape(Vec<f64>);

impl Shape {
    /// From response times (any order, s); None when there are none.
    pub fn new(times_s: &[f64]) -> Option<Shape> {
        let mean = times_s.iter().sum::<f64>() / times_s.len() as f64;
        (!times_s.is_empty() && mean > 0.0)
            .then(|| Shape(times_s.iter().map(|t| t / mean).collect()))
    }

    /// The share of requests answered within `x` s, when the unqueued
    /// time has mean `base_s` and the wait is exponential with mean
    /// `wait_s`.
    pub fn within(&self, x: f64, base_s: f64, wait_s: f64) -> f64 {
        let sum: f64 = self
            .0
            .iter()
            .map(|s| {
                let room = x - s * base_s;
                if room < 0.0 {
                    0.0
                } else if wait_s <= 0.0 {
                    1.0
                } else {
                    1.0 - (-room / wait_s).exp()
                }
            })
            .sum();
        sum / self.0.len() as f64
    }

    /// Apdex with threshold `t_s`, tolerating to `f_s` (4T in the
    /// standard).
    pub fn apdex(&self, t_s: f64, f_s: f64, base_s: f64, wait_s: f64) -> f64 {
        let satisfied = self.within(t_s, base_s, wait_s);
        let tolerating = self.within(f_s, base_s, wait_s) - satisfied;
        satisfied + tolerating / 2.0
    }

    /// The time within which a `share` of requests are answered.
    pub fn quantile(&self, share: f64, base_s: f64, wait_s: f64) -> f64 {
        let (mut low, mut high) = (0.0, 1.0f64.max(base_s));
        while self.within(high, base_s, wait_s) < share && high < 1e6 {
            high *= 2.0;
        }
        for _ in 0..60 {
            let mid = (low + high) / 2.0;
            if self.within(mid, base_s, wait_s) < share {
                low = mid;
            } else {
                high = mid;
            }
        }
        high
    }
}

/// The model at one population, as the search would judge it.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted {
    pub users: u32,
    pub throughput: f64,
    pub response_s: f64,
    pub apdex: f64,
    pub p95_s: f64,
    /// Each station's busy share (CPU, then disk when modelled).
    pub utilization: Vec<f64>,
}

/// The curve's points with Apdex (T `t_s`, F `f_s`) and the 95th
/// percentile.
pub fn judged(
    points: &[OperatingPoint],
    shape: &Shape,
    base_s: f64,
    t_s: f64,
    f_s: f64,
) -> Vec<Predicted> {
    points
        .iter()
        .map(|p| {
            let wait = (p.response_s - base_s).max(0.0);
            Predicted {
                users: p.users,
                throughput: p.throughput,
                response_s: p.response_s,
                apdex: shape.apdex(t_s, f_s, base_s, wait),
                p95_s: shape.quantile(0.95, base_s, wait),
                utilization: p.utilization.clone(),
            }
        })
        .collect()
}

/// The most users whose predicted Apdex meets `apdex` (and p95 is within
/// `p95_max_s`), if any: the first population that breaks it ends the
/// count, as the search's ladder would.
pub fn capacity(points: &[Predicted], apdex: f64, p95_max_s: Option<f64>) -> Option<u32> {
    points
        .iter()
        .take_while(|p| p.apdex >= apdex && p95_max_s.is_none_or(|m| p.p95_s <= m))
        .last()
        .map(|p| p.users)
}

#[cfg(test)]
#[path = "prediction_tests.rs"]
mod tests;
