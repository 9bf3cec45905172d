//! Pools that a program inside this process counts itself (the demo
//! testbed's SQLite writer): how much work was in it, second by second,
//! integrated as it happens, so that the sampler's second gives the
//! pool's exact busy share and mean queue rather than a look at one
//! instant. Work enters and leaves the pool ([`PoolGauge::enter`]); of the
//! work inside, up to `workers` are served and the rest wait. The pool's
//! own lock is held for a few additions at each entry and exit; the
//! registry's lock is taken when a pool is made and once a second by the
//! sampler.

use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

/// One pool of `workers` that work waits for, counted by its owner.
#[derive(Debug)]
pub struct PoolGauge {
    /// Tells apart two pools of one name (two databases of one process).
    id: u64,
    owner: String,
    pool: String,
    workers: u32,
    advice: String,
    started: Instant,
    counts: Mutex<Counts>,
}

/// The work inside since the pool was made, integrated over time.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    /// Work inside now (served and waiting).
    inside: u32,
    /// When `inside` last changed, microseconds after `started`.
    changed_us: u64,
    /// Worker-microseconds served: min(inside, workers) over time.
    held_us: u64,
    /// Microseconds waited: (inside - workers) over time, when positive.
    waited_us: u64,
    /// The most that waited at once since the last reading.
    most_waiting: u32,
}

impl Counts {
    /// Brings the integrals up to `now_us`.
    fn advance(&mut self, now_us: u64, workers: u32) {
        let elapsed = now_us.saturating_sub(self.changed_us);
        self.held_us += u64::from(self.inside.min(workers)) * elapsed;
        self.waited_us += u64::from(self.inside.saturating_sub(workers)) * elapsed;
        self.changed_us = now_us.max(self.changed_us);
    }
}

/// A pool's counters at one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct GaugeReading {
    /// The pool's own number in this process.
    pub id: u64,
    /// Who counts it ("the testbed").
    pub owner: String,
    /// What it is ("SQLite writer").
    pub pool: String,
    pub workers: u32,
    /// What to change when it is full, in its owner's words.
    pub advice: String,
    /// Worker-microseconds served since the pool was made.
    pub held_us: u64,
    /// Microseconds work waited since the pool was made.
    pub waited_us: u64,
    /// The most that waited at once since the reading before.
    pub most_waiting: u32,
}

static REGISTRY: Mutex<Vec<Weak<PoolGauge>>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl PoolGauge {
    /// A pool of `workers`, read by this process's sampler while it lives.
    pub fn register(owner: &str, pool: &str, workers: u32, advice: &str) -> Arc<PoolGauge> {
        let gauge = Arc::new(PoolGauge::new(owner, pool, workers, advice));
        let mut registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        registry.retain(|g| g.strong_count() > 0);
        registry.push(Arc::downgrade(&gauge));
        gauge
    }

    fn new(owner: &str, pool: &str, workers: u32, advice: &str) -> PoolGauge {
        PoolGauge {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            owner: owner.into(),
            pool: pool.into(),
            workers: workers.max(1),
            advice: advice.into(),
            started: Instant::now(),
            counts: Mutex::new(Counts::default()),
        }
    }

    fn now_us(&self) -> u64 {
        self.started.elapsed().as_micros() as u64
    }

    fn change(&self, by: i32) {
        let now = self.now_us();
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.advance(now, self.workers);
        counts.inside = counts.inside.saturating_add_signed(by);
        let waiting = counts.inside.saturating_sub(self.workers);
        counts.most_waiting = counts.most_waiting.max(waiting);
    }

    /// Work enters the pool (served at once if a worker is free, else it
    /// waits); it leaves when the [`Visit`] is dropped.
    pub fn enter(&self) -> Visit<'_> {
        self.change(1);
        Visit { gauge: self }
    }

    fn reading(&self) -> GaugeReading {
        let now = self.now_us();
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.advance(now, self.workers);
        let most_waiting = counts.most_waiting;
        // The most since this reading starts again from those waiting now.
        counts.most_waiting = counts.inside.saturating_sub(self.workers);
        GaugeReading {
            id: self.id,
            owner: self.owner.clone(),
            pool: self.pool.clone(),
            workers: self.workers,
            advice: self.advice.clone(),
            held_us: counts.held_us,
            waited_us: counts.waited_us,
            most_waiting,
        }
    }
}

/// Work inside a pool; it leaves when dropped.
pub struct Visit<'a> {
    gauge: &'a PoolGauge,
}

impl Drop for Visit<'_> {
    fn drop(&mut self) {
        self.gauge.change(-1);
    }
}

/// Every live pool of this process, read now.
pub fn read_all() -> Vec<GaugeReading> {
    let live: Vec<Arc<PoolGauge>> = {
        let registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        registry.iter().filter_map(Weak::upgrade).collect()
    };
    live.iter().map(|g| g.reading()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integrals by hand: three inside a pool of one for 30 ms (one
    /// served, two waiting), one for 20 ms, none for 20 ms.
    #[test]
    fn work_served_and_waiting_is_integrated_over_time() {
        let mut counts = Counts::default();
        counts.advance(0, 1);
        counts.inside = 3;
        counts.advance(30_000, 1);
        counts.inside = 1;
        counts.advance(50_000, 1);
        counts.inside = 0;
        counts.advance(70_000, 1);
        assert_eq!((counts.held_us, counts.waited_us), (50_000, 60_000));
        // Two workers: both served while three were inside.
        let mut two = Counts {
            inside: 3,
            ..Counts::default()
        };
        two.advance(10_000, 2);
        assert_eq!((two.held_us, two.waited_us), (20_000, 10_000));
    }

    #[test]
    fn the_most_waiting_restarts_at_each_reading() {
        let gauge = PoolGauge::new("test", "gauge-most", 1, "more");
        let first = gauge.enter();
        let second = gauge.enter();
        let third = gauge.enter();
        assert_eq!(gauge.reading().most_waiting, 2);
        drop(first);
        drop(third);
        drop(second);
        let reading = gauge.reading();
        // Two were waiting at the reading before, and waited after it.
        assert_eq!(reading.most_waiting, 2, "{reading:?}");
        // Nobody has waited since.
        assert_eq!(gauge.reading().most_waiting, 0);
        assert_eq!(
            (
                reading.owner.as_str(),
                reading.workers,
                reading.advice.as_str()
            ),
            ("test", 1, "more")
        );
    }

    #[test]
    fn a_registered_pool_is_read_while_it_lives() {
        let listed = || read_all().iter().any(|r| r.pool == "gauge-registered");
        let gauge = PoolGauge::register("test", "gauge-registered", 3, "");
        assert!(listed());
        drop(gauge);
        assert!(!listed());
    }
}
