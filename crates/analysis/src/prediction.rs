//! The users another host would serve, predicted from a capacity search
//! on this one. The search's levels give the server's service demands:
//! the CPU seconds a request needs (its processes' busy cores divided by
//! the throughput, the utilization law, fitted over the levels), the
//! disk's (its busy share divided by the throughput), and the rest of a
//! light-load response (network, waiting on nothing this host measured):
//! a delay. A closed queueing network of those stations, with the users'
//! think time and the server's worker pool, is solved by mean value
//! analysis ([`crate::mva`], one population at a time: the CPU's demand
//! follows its busy share, the queueing is the levels' share of
//! exponential service's) for the host as measured (so its error is
//! known) and for the other host, its demands scaled: CPU by the
//! single-thread speed and the CPUs the server may use, the disk by its
//! random IOPS. Apdex at each population comes from the response times'
//! shape at the busiest level below half the CPU: a request's time is
//! that shape, scaled to the point's unqueued response, plus an
//! exponential wait of the model's mean queueing time.

use crate::mva::{MvaError, Network, OperatingPoint, Station};

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
    /// The disks' operations a second, when measured.
    pub disk_iops: Option<f64>,
    /// The level met the search's target.
    pub met: bool,
}

/// The levels a full CPU's demand was fitted over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuFit {
    /// Those whose server used [`BUSY`] of its CPU or more.
    Busy,
    /// Fewer than two reached [`BUSY`]: those that met the target, at a
    /// lower load than a full CPU's.
    Met,
    /// Fewer than two reached [`BUSY`] or met the target: every level.
    All,
}

/// A request's service demands on the measured host.
#[derive(Debug, Clone, PartialEq)]
pub struct Demands {
    /// CPU seconds a request on a full CPU (fitted over the levels that
    /// ran it 70% full or more, else as [`Demands::cpu_fit`] says).
    pub cpu_s: f64,
    /// The levels `cpu_s` was fitted over.
    pub cpu_fit: CpuFit,
    /// The busiest share (0–1) of its CPU the server used in any level.
    pub busiest_share: f64,
    /// A request's CPU at each busy share of the CPU below [`BUSY`] the
    /// levels measured, over `cpu_s`, and 1 at a full CPU: (share, ratio)
    /// by share. A busy CPU amortizes its wake-ups, so a request takes
    /// more of an idle one.
    pub cpu_by_share: Vec<(f64, f64)>,
    /// The least and most of those levels' own CPU demands.
    pub cpu_range_s: [f64; 2],
    /// Disk seconds a request (0 when not measured), from the levels
    /// below the knee where there are two.
    pub disk_s: f64,
    /// Disk operations a request, reads and writes (0 when not measured):
    /// a disk known by its operations a second serves a request in
    /// these over them.
    pub disk_ops: f64,
    /// The least and the most disk operations a request of the levels
    /// `disk_ops` was fitted over, each with its users: (users, operations).
    /// The disks' figures are the whole machine's, so other programs' I/O
    /// shows as a spread no server's own work makes
    /// ([`Demands::disk_ops_unsteady`]).
    pub disk_ops_spread: Option<[(u32, f64); 2]>,
    /// The rest of a response: time no measured station accounts for
    /// (the median over the levels below half the CPU).
    pub delay_s: f64,
    /// The share of exponential service's queueing the levels met
    /// (fitted below the knee; 1 where too few levels show it).
    pub variability: f64,
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

/// Below this share of the server's CPU a level is below the knee: the
/// queueing's variability is fitted to those levels.
pub const CALM: f64 = 0.9;

/// When a request's disk operations vary more than this many times
/// between the levels (and the most is an operation or more), they are
/// not the server's own: other programs used the disk.
pub const DISK_SPREAD: f64 = 3.0;

/// The variabilities tried: 1/20 to 1 in twentieths.
const VARIABILITY_STEPS: u32 = 20;

impl Demands {
    /// A request's CPU seconds on the measured host's CPU at a busy share
    /// `u` (0–1) of it, from a full-CPU demand of `cpu_s`: the levels'
    /// ratio at that share, joined by straight lines, the nearest level's
    /// beyond them.
    pub fn cpu_at(&self, cpu_s: f64, u: f64) -> f64 {
        let points = &self.cpu_by_share;
        let ratio = match points.iter().position(|&(share, _)| share >= u) {
            None => points.last().map_or(1.0, |p| p.1),
            Some(0) => points[0].1,
            Some(i) => {
                let ((u0, r0), (u1, r1)) = (points[i - 1], points[i]);
                if u1 > u0 {
                    r0 + (r1 - r0) * (u - u0) / (u1 - u0)
                } else {
                    r1
                }
            }
        };
        cpu_s * ratio
    }

    /// The disk operations a request vary more than [`DISK_SPREAD`] times
    /// between the levels, the most an operation or more: the disks'
    /// figures hold other programs' work, and the disk's part of a
    /// prediction is not the server's.
    pub fn disk_ops_unsteady(&self) -> bool {
        self.disk_ops_spread
            .is_some_and(|[(_, least), (_, most)]| most >= 1.0 && most > DISK_SPREAD * least)
    }
}

/// The demands of the levels given (those a verdict can rest on), on a
/// server that could use `server_cpus`. A request's CPU falls as the CPU
/// gets busier (a busy CPU amortizes its wake-ups: DokuWiki's pages took
/// 3.4 ms of CPU at 3 a second and 1.8 ms at 540) and rises again past
/// the knee (a queue, more switching). A smaller host runs its CPU full
/// at its knee, so the CPU demand comes from the levels whose server used
/// [`BUSY`] of its CPU or more, where there are two, else from those that
/// met the target, else from all: least squares through the origin, so
/// the busiest weigh most; its interval the least and most of those
/// levels' own. Below [`BUSY`] a request's CPU at each busy share is the
/// levels' own (those that met the target), joined to the full CPU's. The
/// delay is the lower median of what the levels below half the CPU took
/// beyond the model's CPU and disk with their queueing; the queueing's
/// variability is the one whose model is nearest the levels below
/// [`CALM`] (at least three of them); the response times' shape comes
/// from the busiest level below half the CPU.
pub fn demands(levels: &[LevelLoad], server_cpus: f64) -> Result<Demands, PredictionError> {
    let usable =
        |l: &&LevelLoad| l.throughput > 0.0 && l.response_s.is_finite() && l.cpu_busy.is_finite();
    let all: Vec<&LevelLoad> = levels.iter().filter(usable).collect();
    let met: Vec<&LevelLoad> = all.iter().copied().filter(|l| l.met).collect();
    let share = |l: &LevelLoad| cpu_share(l, server_cpus);
    let full: Vec<&LevelLoad> = all.iter().copied().filter(|l| share(l) >= BUSY).collect();
    let (judged, fallback) = if met.len() >= 2 {
        (met, CpuFit::Met)
    } else {
        (all.clone(), CpuFit::All)
    };
    let (used, cpu_fit) = if full.len() >= 2 {
        (full, CpuFit::Busy)
    } else {
        (judged.clone(), fallback)
    };
    let busiest_share = all.iter().map(|l| share(l)).fold(0.0, f64::max);
    if used.len() < 2 {
        return Err(PredictionError::TooFewLevels(used.len()));
    }
    let cpu_s = through_origin(&used, &|l| l.cpu_busy);
    if cpu_s.is_nan() || cpu_s <= 0.0 {
        return Err(PredictionError::NoCpu);
    }
    let each: Vec<f64> = used.iter().map(|l| l.cpu_busy / l.throughput).collect();
    let cpu_range_s = [
        each.iter().copied().fold(f64::INFINITY, f64::min),
        each.iter().copied().fold(0.0, f64::max),
    ];
    // The disk's from the levels below the knee, where there are two: a
    // host limited by its disk runs its CPU there, and a server past its
    // knee does more disk work a request (the testbed on SQLite: about 7
    // operations below it, 8.1–8.4 beyond).
    let below: Vec<&LevelLoad> = judged.iter().copied().filter(|l| share(l) < BUSY).collect();
    let disk_levels = if below.len() >= 2 { &below } else { &used };
    let disk_fit = |figure: fn(&LevelLoad) -> Option<f64>| {
        if disk_levels.iter().all(|l| figure(l).is_some()) {
            through_origin(disk_levels, &|l| figure(l).unwrap_or(0.0)).max(0.0)
        } else {
            0.0
        }
    };
    let disk_s = disk_fit(|l| l.disk_busy);
    let disk_ops = disk_fit(|l| l.disk_iops);
    let disk_ops_spread = ops_spread(disk_levels);
    let cpu_by_share = cpu_by_share(&judged, server_cpus, cpu_s);
    let light: Vec<&LevelLoad> = judged.iter().copied().filter(|l| share(l) < 0.5).collect();
    let light = if light.is_empty() {
        judged
            .iter()
            .copied()
            .min_by_key(|l| l.users)
            .into_iter()
            .collect()
    } else {
        light
    };
    let calm: Vec<&LevelLoad> = judged.iter().copied().filter(|l| share(l) < CALM).collect();
    let here = HostScale {
        cpu_speed: 1.0,
        cpus: server_cpus,
        disk_speed: 1.0,
        disk_iops: None,
    };
    let think_s = judged.iter().map(|l| l.think_s).sum::<f64>() / judged.len() as f64;
    let most = calm
        .iter()
        .chain(&light)
        .map(|l| l.users)
        .max()
        .unwrap_or(1);
    let base = Demands {
        cpu_s,
        cpu_fit,
        busiest_share,
        cpu_by_share,
        cpu_range_s,
        disk_s,
        disk_ops,
        disk_ops_spread,
        delay_s: 0.0,
        variability: 1.0,
        levels: used.len(),
        shape_users: light
            .iter()
            .max_by(|a, b| a.throughput.total_cmp(&b.throughput))
            .map_or(0, |l| l.users),
    };
    DelayFit {
        base,
        light,
        calm,
        here,
        think_s,
        most,
    }
    .fitted()
}

/// The share of the server's CPU a level used, from 0 to 1.
fn cpu_share(level: &LevelLoad, server_cpus: f64) -> f64 {
    (level.cpu_busy / server_cpus).clamp(0.0, 1.0)
}

/// Least squares through the origin: the demand in busy = demand ×
/// throughput, over `levels`.
fn through_origin(levels: &[&LevelLoad], busy: &dyn Fn(&LevelLoad) -> f64) -> f64 {
    let xy: f64 = levels.iter().map(|l| busy(l) * l.throughput).sum();
    let xx: f64 = levels.iter().map(|l| l.throughput * l.throughput).sum();
    xy / xx
}

/// A request's CPU over the fitted `cpu_s` at each busy share: below
/// [`BUSY`] each of the `judged` levels' own, a full CPU's the fitted
/// figure.
fn cpu_by_share(judged: &[&LevelLoad], server_cpus: f64, cpu_s: f64) -> Vec<(f64, f64)> {
    let mut cpu_by_share: Vec<(f64, f64)> = judged
        .iter()
        .filter(|l| l.cpu_busy > 0.0 && cpu_share(l, server_cpus) < BUSY)
        .map(|l| (cpu_share(l, server_cpus), l.cpu_busy / l.throughput / cpu_s))
        .collect();
    cpu_by_share.sort_by(|a, b| a.0.total_cmp(&b.0));
    cpu_by_share.push((1.0, 1.0));
    cpu_by_share
}

/// The fit of the delay and the queueing's variability to the levels
/// below half the CPU (`light`) and below [`CALM`] (`calm`).
struct DelayFit<'a> {
    /// The demands fitted so far, the delay and variability aside.
    base: Demands,
    light: Vec<&'a LevelLoad>,
    calm: Vec<&'a LevelLoad>,
    here: HostScale,
    think_s: f64,
    /// The most users of a light or calm level.
    most: u32,
}

impl DelayFit<'_> {
    /// The model's curve for `d` on this host, up to the most users.
    fn model(&self, d: &Demands) -> Result<Curve, PredictionError> {
        curve(
            d,
            self.base.cpu_s,
            &self.here,
            self.think_s,
            None,
            self.most,
        )
    }

    /// The demands with the variability nearest the calm levels (at least
    /// three of them), else with a variability of 1.
    fn fitted(&self) -> Result<Demands, PredictionError> {
        let mut fitted = self.with(1.0)?;
        if self.calm.len() >= 3 {
            let mut nearest = self.miss(&fitted)?;
            for step in (1..VARIABILITY_STEPS).rev() {
                let candidate = self.with(f64::from(step) / f64::from(VARIABILITY_STEPS))?;
                let error = self.miss(&candidate)?;
                if error < nearest {
                    (fitted, nearest) = (candidate, error);
                }
            }
        }
        Ok(fitted)
    }

    /// The delay at a variability: what the light levels took beyond the
    /// model's stations, their queueing included (the lower median).
    fn with(&self, variability: f64) -> Result<Demands, PredictionError> {
        let mut d = Demands {
            variability,
            ..self.base.clone()
        };
        let model = self.model(&d)?;
        let mut rest: Vec<f64> = self
            .light
            .iter()
            .map(|l| (l.response_s - model.points[l.users as usize - 1].response_s).max(0.0))
            .collect();
        rest.sort_by(f64::total_cmp);
        d.delay_s = rest[(rest.len() - 1) / 2];
        Ok(d)
    }

    /// How far the model of `d` is from the calm levels' response times:
    /// the sum of their log ratios squared.
    fn miss(&self, d: &Demands) -> Result<f64, PredictionError> {
        let model = self.model(d)?;
        Ok(self
            .calm
            .iter()
            .map(|l| {
                (model.points[l.users as usize - 1].response_s / l.response_s)
                    .ln()
                    .powi(2)
            })
            .sum())
    }
}

/// The least and the most disk operations a request of `levels`, each
/// with its users, when every one of them counted the disks' operations.
fn ops_spread(levels: &[&LevelLoad]) -> Option<[(u32, f64); 2]> {
    let each: Vec<(u32, f64)> = levels
        .iter()
        .map(|l| l.disk_iops.map(|iops| (l.users, iops / l.throughput)))
        .collect::<Option<_>>()?;
    let least = each.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let most = each.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some([least, most])
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
    /// Its disk's operations a second, when given: a request's disk
    /// demand is then its operations over these, not the measured disk's
    /// busy time scaled.
    pub disk_iops: Option<f64>,
}

/// The network of `demands` on `host`, the CPU's demand `cpu_s` (of the
/// measured host's CPU): the CPU with ⌈cpus⌉ servers (a fraction of a CPU
/// is one server slower by that fraction), the disk (a request's
/// operations over the host's operations a second when they are given,
/// else the measured disk's busy time scaled), and the delay (kept
/// apart: it queues for nothing).
pub fn stations(demands: &Demands, cpu_s: f64, host: &HostScale) -> Vec<Station> {
    let mut stations = vec![Station {
        name: "CPU".to_string(),
        demand_s: cpu_station(cpu_s, host),
        servers: host.cpus.ceil().max(1.0) as u32,
    }];
    let disk_s = match host.disk_iops {
        Some(iops) if demands.disk_ops > 0.0 && iops > 0.0 => demands.disk_ops / iops,
        _ => demands.disk_s / host.disk_speed,
    };
    if disk_s > 0.0 {
        stations.push(Station {
            name: "disk".to_string(),
            demand_s: disk_s,
            servers: 1,
        });
    }
    stations
}

/// The disk's share of exponential service's queueing: a request's disk
/// work is `ops` operations one after another, so its service's squared
/// coefficient of variation is 1/`ops` of one exponential operation's,
/// and Allen and Cunneen's wait, arrivals as random as a Poisson
/// stream's, (1 + 1/`ops`) / 2 of exponential service's (1 below one
/// operation, or when they were not measured).
pub fn disk_variability(ops: f64) -> f64 {
    if ops >= 1.0 {
        (1.0 + 1.0 / ops) / 2.0
    } else {
        1.0
    }
}

/// The CPU station's demand on `host` for `cpu_s` of the measured host's.
fn cpu_station(cpu_s: f64, host: &HostScale) -> f64 {
    let servers = host.cpus.ceil().max(1.0);
    cpu_s / host.cpu_speed * servers / host.cpus
}

/// The model's points, and each one's response without queueing (the
/// delay and every station's demand there).
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub points: Vec<OperatingPoint>,
    pub unqueued_s: Vec<f64>,
}

/// The model's figures for 1..=`users` users, from a full-CPU demand of
/// `cpu_s`: each point's response includes the delay; the CPU's demand
/// at each population is the one at the CPU's busy share with one user
/// fewer ([`Demands::cpu_at`]), its queueing the demands' variability of
/// exponential service's.
pub fn curve(
    demands: &Demands,
    cpu_s: f64,
    host: &HostScale,
    think_s: f64,
    pool: Option<u32>,
    users: u32,
) -> Result<Curve, PredictionError> {
    let idle = demands.cpu_at(cpu_s, 0.0);
    let network_stations = stations(demands, idle, host);
    let others: f64 = network_stations[1..].iter().map(|s| s.demand_s).sum();
    // A delay station is a longer think as far as the queues know.
    let mut network = Network::new(&network_stations, think_s + demands.delay_s, pool)?;
    network.set_variability(demands.variability);
    if network_stations.len() > 1 {
        network.set_station_variability(1, disk_variability(demands.disk_ops));
    }
    let mut curve = Curve {
        points: Vec::with_capacity(users as usize),
        unqueued_s: Vec::with_capacity(users as usize),
    };
    let mut cpu_now = network_stations[0].demand_s;
    for _ in 0..users {
        let mut point = network.one_more();
        point.response_s += demands.delay_s;
        curve.unqueued_s.push(demands.delay_s + cpu_now + others);
        if demands.cpu_by_share.len() > 1 {
            let busy = point.utilization.first().copied().unwrap_or(0.0);
            cpu_now = cpu_station(demands.cpu_at(cpu_s, busy), host);
            network.set_demand(0, cpu_now);
        }
        curve.points.push(point);
    }
    Ok(curve)
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
/// percentile: a request's time is the shape scaled to the point's
/// unqueued response, plus an exponential wait of its mean queueing.
pub fn judged(curve: &Curve, shape: &Shape, t_s: f64, f_s: f64) -> Vec<Predicted> {
    curve
        .points
        .iter()
        .zip(&curve.unqueued_s)
        .map(|(p, &base_s)| {
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
