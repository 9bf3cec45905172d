//! Thermal: stressberry's protocol — wait for a stable temperature, idle,
//! load every core, idle again — sampling every 2 s the temperature (the
//! hottest sensor), the clock, the Raspberry Pi's throttling flags and the
//! CPU benchmark's throughput (sysbench prime events per second), so the
//! result says what the machine sustains, not only what it bursts to.

use crate::cpu::prime_event;
use crate::{measure, settings, BenchError, BenchResult, Measure, Series};
use headroom_monitor::{Resources, Sampler, SamplerConfig};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ThermalOptions {
    /// Longest wait for a stable temperature, s.
    pub settle: f64,
    pub idle_before: f64,
    pub stress: f64,
    pub idle_after: f64,
    /// Sampling interval, s (stressberry: 2).
    pub interval: f64,
    pub threads: usize,
    pub max_prime: u64,
}

impl ThermalOptions {
    /// stressberry's durations: idle 150 s, stress 300 s, idle 150 s.
    pub fn stressberry(threads: usize) -> ThermalOptions {
        ThermalOptions {
            settle: 300.0,
            idle_before: 150.0,
            stress: 300.0,
            idle_after: 150.0,
            interval: 2.0,
            threads,
            max_prime: 10_000,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Seconds since the idle phase began (negative while settling).
    pub t: f64,
    pub phase: ThermalPhase,
    pub temperature_c: Option<f64>,
    pub mhz: Option<f64>,
    pub throttled: bool,
    /// Prime events per second over the interval (0 outside the stress).
    pub events_per_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThermalPhase {
    Settle,
    Idle,
    Stress,
    Cool,
}

/// Stable: the last `window` temperatures lie within 1 °C.
pub fn stable(temperatures: &[f64], window: usize) -> bool {
    temperatures.len() >= window && {
        let last = &temperatures[temperatures.len() - window..];
        let (lo, hi) = last
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
                (lo.min(*t), hi.max(*t))
            });
        hi - lo <= 1.0
    }
}

/// Seconds from the stress's start to the first throttled sample (a flag,
/// or the clock 10% below its stress peak twice in a row).
pub fn time_to_throttle(points: &[Point]) -> Option<f64> {
    let stress: Vec<&Point> = points
        .iter()
        .filter(|p| p.phase == ThermalPhase::Stress)
        .collect();
    let start = stress.first()?.t;
    let mut peak = 0.0f64;
    let mut low_before = false;
    for p in &stress {
        if p.throttled {
            return Some(p.t - start);
        }
        if let Some(mhz) = p.mhz {
            let low = peak > 0.0 && mhz < 0.9 * peak;
            if low && low_before {
                return Some(p.t - start);
            }
            low_before = low;
            peak = peak.max(mhz);
        }
    }
    None
}

pub fn run(o: &ThermalOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let threads = o.threads.max(1);
    let mut sampler = Sampler::new(SamplerConfig::default());
    sampler.sample();
    let counters: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let stressing = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let interval = Duration::from_secs_f64(o.interval.max(0.2));
    let result = std::thread::scope(|scope| {
        for counter in &counters {
            let (stressing, finished) = (&stressing, &finished);
            let max_prime = o.max_prime;
            scope.spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    if stressing.load(Ordering::Relaxed) {
                        prime_event(max_prime);
                        counter.fetch_add(1, Ordering::Relaxed);
                    } else {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            });
        }
        let outcome = watch_phases(o, stop, interval, &mut sampler, &counters, &stressing);
        stressing.store(false, Ordering::Relaxed);
        finished.store(true, Ordering::Relaxed);
        outcome
    });
    let (mut points, settled) = result?;
    // Time 0 is the start of the idle phase.
    let origin = points
        .iter()
        .find(|p| p.phase != ThermalPhase::Settle)
        .map_or(0.0, |p| p.t - o.interval);
    for p in &mut points {
        p.t -= origin;
    }
    Ok(summarise(o, &points, settled.unwrap_or(true)))
}

/// Samples the host every `interval` through the phases (settle, idle,
/// stress, cool), switching the stress threads on and off, until the cool
/// phase ends or `stop`. Returns a point per sample and whether the
/// temperature settled.
fn watch_phases(
    o: &ThermalOptions,
    stop: &AtomicBool,
    interval: Duration,
    sampler: &mut Sampler,
    counters: &[AtomicU64],
    stressing: &AtomicBool,
) -> Result<(Vec<Point>, Option<bool>), BenchError> {
    let mut points: Vec<Point> = Vec::new();
    let mut settled = None;
    let began = Instant::now();
    let mut phase_start = began;
    let mut phase = ThermalPhase::Settle;
    let mut temperatures = Vec::new();
    let mut last_events = 0u64;
    let mut last_at = Instant::now();
    let window = (30.0 / interval.as_secs_f64()).ceil() as usize;
    loop {
        if !crate::sleep_unless(stop, interval) {
            return Err(BenchError::Interrupted);
        }
        let Some(r) = sampler.sample() else { continue };
        let now = Instant::now();
        let events = events_so_far(counters);
        let rate = (events - last_events) as f64 / now.duration_since(last_at).as_secs_f64();
        (last_events, last_at) = (events, now);
        let (temperature, mhz, throttled) = thermal_reading(&r);
        let in_phase = now.duration_since(phase_start).as_secs_f64();
        if let Some(t) = temperature {
            temperatures.push(t);
        }
        points.push(Point {
            t: now.duration_since(began).as_secs_f64(),
            phase,
            temperature_c: temperature,
            mhz,
            throttled,
            events_per_s: if phase == ThermalPhase::Stress {
                rate
            } else {
                0.0
            },
        });
        let next = match phase {
            ThermalPhase::Settle => {
                let done =
                    temperature.is_none() || stable(&temperatures, window) || in_phase >= o.settle;
                if done {
                    settled = Some(temperature.is_none() || stable(&temperatures, window));
                }
                done.then_some(ThermalPhase::Idle)
            }
            ThermalPhase::Idle => (in_phase >= o.idle_before).then_some(ThermalPhase::Stress),
            ThermalPhase::Stress => (in_phase >= o.stress).then_some(ThermalPhase::Cool),
            ThermalPhase::Cool => {
                if in_phase >= o.idle_after {
                    return Ok((points, settled));
                }
                None
            }
        };
        if let Some(next) = next {
            stressing.store(next == ThermalPhase::Stress, Ordering::Relaxed);
            phase = next;
            phase_start = now;
            let events = events_so_far(counters);
            (last_events, last_at) = (events, Instant::now());
        }
    }
}

/// The events the stress threads have run so far.
fn events_so_far(counters: &[AtomicU64]) -> u64 {
    counters.iter().map(|c| c.load(Ordering::Relaxed)).sum()
}

/// A sample's hottest temperature, mean CPU frequency, and whether the
/// CPU is throttled now.
fn thermal_reading(r: &Resources) -> (Option<f64>, Option<f64>, bool) {
    let temperature = r
        .temperatures_c
        .values()
        .copied()
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
    let mhz = (!r.frequencies_mhz.is_empty())
        .then(|| r.frequencies_mhz.iter().sum::<f64>() / r.frequencies_mhz.len() as f64);
    let throttled = r
        .throttling
        .is_some_and(|t| t.throttled_now || t.frequency_capped_now || t.soft_temperature_limit_now);
    (temperature, mhz, throttled)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The figures and curves of a finished protocol.
pub fn summarise(o: &ThermalOptions, points: &[Point], settled: bool) -> BenchResult {
    let f = Figures::of(o, points);
    let notes = notes(o, &f, settled);
    let measures = measures(&f);
    let series = curves(points);
    BenchResult {
        benchmark: "thermal".into(),
        method: format!(
            "stressberry's protocol: wait for a stable temperature (1 °C over 30 s, at most {:.0} s), \
             idle {:.0} s, sysbench prime events on {} threads for {:.0} s, idle {:.0} s; every {} s the \
             hottest sensor, the mean clock, throttling and events/s. Burst: the first 10 s of load; \
             sustained: the last 60 s (a third of the load when shorter). Runs once",
            o.settle, o.idle_before, o.threads, o.stress, o.idle_after, o.interval
        ),
        settings: settings([
            ("idle_before_s", o.idle_before.to_string()),
            ("stress_s", o.stress.to_string()),
            ("idle_after_s", o.idle_after.to_string()),
            ("interval_s", o.interval.to_string()),
            ("threads", o.threads.to_string()),
            ("max_prime", o.max_prime.to_string()),
        ]),
        measures,
        series,
        notes,
    }
}

/// What the points say: throughput at the start and end of the load,
/// temperatures, the clock under load and the time to throttle.
struct Figures {
    burst: Option<f64>,
    sustained: Option<f64>,
    idle_temp: Option<f64>,
    max_temp: Option<f64>,
    stress_mhz: Option<f64>,
    throttle: Option<f64>,
}

impl Figures {
    fn of(o: &ThermalOptions, points: &[Point]) -> Figures {
        let stress: Vec<&Point> = points
            .iter()
            .filter(|p| p.phase == ThermalPhase::Stress)
            .collect();
        let start = stress.first().map_or(0.0, |p| p.t);
        let end = stress.last().map_or(0.0, |p| p.t);
        let span = (o.stress / 3.0).max(o.interval);
        let burst = mean(
            stress
                .iter()
                .filter(|p| p.t - start < span.min(10.0).max(o.interval))
                .map(|p| p.events_per_s),
        );
        let sustained = mean(
            stress
                .iter()
                .filter(|p| end - p.t < span.min(60.0))
                .map(|p| p.events_per_s),
        );
        let idle_temp = mean(
            points
                .iter()
                .filter(|p| p.phase == ThermalPhase::Idle)
                .filter_map(|p| p.temperature_c),
        );
        let max_temp = points
            .iter()
            .filter_map(|p| p.temperature_c)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
        let stress_mhz = mean(stress.iter().filter_map(|p| p.mhz));
        let throttle = time_to_throttle(points);
        Figures {
            burst,
            sustained,
            idle_temp,
            max_temp,
            stress_mhz,
            throttle,
        }
    }
}

fn measures(f: &Figures) -> Vec<Measure> {
    let (burst, sustained, idle_temp, max_temp) = (f.burst, f.sustained, f.idle_temp, f.max_temp);
    let (stress_mhz, throttle) = (f.stress_mhz, f.throttle);
    let one = |key: &str, name: &str, unit: &str, higher: bool, value: Option<f64>| {
        value.map(|v| {
            let mut m = measure(key, name, unit, higher);
            m.values.push(v);
            m
        })
    };
    [
        one(
            "burst",
            "throughput, first seconds of the load",
            "events/s",
            true,
            burst,
        ),
        one(
            "sustained",
            "throughput, end of the load",
            "events/s",
            true,
            sustained,
        ),
        one(
            "sustained_pct",
            "sustained throughput, % of burst",
            "%",
            true,
            burst
                .zip(sustained)
                .filter(|(b, _)| *b > 0.0)
                .map(|(b, s)| s / b * 100.0),
        ),
        one("idle_c", "temperature at idle", "°C", false, idle_temp),
        one("max_c", "highest temperature", "°C", false, max_temp),
        one(
            "rise_c",
            "temperature rise under load",
            "°C",
            false,
            max_temp.zip(idle_temp).map(|(m, i)| m - i),
        ),
        one(
            "stress_mhz",
            "clock under load, mean",
            "MHz",
            true,
            stress_mhz,
        ),
        one("time_to_throttle", "time to throttle", "s", true, throttle),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Temperature, clock and (under load) throughput over time.
fn curves(points: &[Point]) -> Vec<Series> {
    let curve = |name: &str, unit: &str, f: &dyn Fn(&Point) -> Option<f64>| Series {
        name: name.into(),
        x_label: "s".into(),
        y_label: unit.into(),
        points: points
            .iter()
            .filter(|p| p.phase != ThermalPhase::Settle)
            .filter_map(|p| f(p).map(|v| (p.t, v)))
            .collect(),
    };
    let mut series = vec![
        curve("temperature", "°C", &|p| p.temperature_c),
        curve("clock", "MHz", &|p| p.mhz),
        curve("throughput", "events/s", &|p| {
            (p.phase == ThermalPhase::Stress).then_some(p.events_per_s)
        }),
    ];
    series.retain(|s| !s.points.is_empty());
    series
}

fn notes(o: &ThermalOptions, f: &Figures, settled: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if f.max_temp.is_none() {
        notes.push(
            "this machine reports no temperature (no sensor under /sys/class/thermal or hwmon): the \
             clock and the throughput are still recorded"
                .into(),
        );
    }
    if f.throttle.is_none() {
        notes.push(format!(
            "no throttling seen in {:.0} s of load (no throttling flag, clock within 10% of its peak)",
            o.stress
        ));
    }
    if !settled {
        notes.push(format!(
            "the temperature was still moving after {:.0} s of waiting: the idle phase started anyway",
            o.settle
        ));
    }
    if (o.idle_before, o.stress, o.idle_after) != (150.0, 300.0, 150.0) {
        notes.push(format!(
            "durations differ from stressberry's (idle 150 s, load 300 s, idle 150 s): here idle {:.0} s, \
             load {:.0} s, idle {:.0} s",
            o.idle_before, o.stress, o.idle_after
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: f64, phase: ThermalPhase, temp: f64, mhz: f64, rate: f64) -> Point {
        Point {
            t,
            phase,
            temperature_c: Some(temp),
            mhz: Some(mhz),
            throttled: false,
            events_per_s: rate,
        }
    }

    #[test]
    fn stability_and_throttling_are_found() {
        assert!(stable(&[50.0, 50.4, 50.9], 3));
        assert!(!stable(&[50.0, 51.2, 50.9], 3));
        assert!(!stable(&[50.0], 3));
        let mut points = vec![point(2.0, ThermalPhase::Idle, 45.0, 600.0, 0.0)];
        for (i, mhz) in [1500.0, 1500.0, 1400.0, 1300.0, 1300.0].iter().enumerate() {
            points.push(point(
                4.0 + 2.0 * i as f64,
                ThermalPhase::Stress,
                60.0,
                *mhz,
                100.0,
            ));
        }
        // 1300 is below 0.9 × 1500 twice: at t = 10 and 12, i.e. 8 s after the start.
        assert_eq!(time_to_throttle(&points), Some(8.0));
        points[2].throttled = true;
        assert_eq!(time_to_throttle(&points), Some(2.0));
    }

    #[test]
    fn burst_and_sustained_come_from_the_start_and_the_end_of_the_load() {
        let o = ThermalOptions {
            stress: 30.0,
            idle_before: 4.0,
            idle_after: 4.0,
            ..ThermalOptions::stressberry(4)
        };
        let mut points = vec![
            point(2.0, ThermalPhase::Idle, 40.0, 600.0, 0.0),
            point(4.0, ThermalPhase::Idle, 40.0, 600.0, 0.0),
        ];
        for i in 0..15 {
            let t = 6.0 + 2.0 * i as f64;
            let rate = if i < 5 { 1000.0 } else { 800.0 };
            points.push(point(
                t,
                ThermalPhase::Stress,
                50.0 + i as f64,
                1500.0,
                rate,
            ));
        }
        points.push(point(36.0, ThermalPhase::Cool, 55.0, 600.0, 0.0));
        let r = summarise(&o, &points, true);
        let get = |k: &str| r.measures.iter().find(|m| m.key == k).map(|m| m.values[0]);
        assert_eq!(get("burst"), Some(1000.0));
        assert_eq!(get("sustained"), Some(800.0));
        assert_eq!(get("sustained_pct"), Some(80.0));
        assert_eq!(get("idle_c"), Some(40.0));
        assert_eq!(get("max_c"), Some(64.0));
        assert_eq!(get("rise_c"), Some(24.0));
        assert_eq!(get("time_to_throttle"), None);
        assert!(r.notes.iter().any(|n| n.contains("no throttling")));
        assert!(r
            .notes
            .iter()
            .any(|n| n.contains("differ from stressberry")));
        assert_eq!(r.series.len(), 3);
    }
}
