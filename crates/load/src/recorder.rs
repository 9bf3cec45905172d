//! The per-thread recorder: folds samples into the current one-second
//! interval's tallies and hands each finished interval to the collector.
//! It lives on one worker thread, so recording takes no lock.

use headroom_analysis::apdex::ApdexThresholds;
use headroom_bundle::jtl::JtlContext;
use headroom_bundle::sample::Sample;
use headroom_bundle::tally::Tally;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// Raw-sample lines are shipped to the writer in chunks of about this size.
const JTL_CHUNK: usize = 64 * 1024;

/// One worker's share of one interval.
#[derive(Debug)]
pub struct IntervalPiece {
    pub worker: usize,
    pub index: u64,
    /// Per label; `None` when the label had no sample in this interval.
    pub tallies: Vec<Option<Tally>>,
    /// Per scenario check: [passes, failures].
    pub checks: Vec<[u64; 2]>,
    /// The most VUs running on this worker at once during the interval (so
    /// the last interval, when users stop, still shows the users it had).
    pub active_vus: u32,
    /// Users who arrived (started) on this worker during the interval.
    pub arrivals: u32,
    /// CPU time this worker's thread used during the interval.
    pub cpu: Duration,
    /// How late the worker's once-a-second tick ran.
    pub loop_lag: Duration,
    /// Time the worker thread was ready to run but waited for a CPU (the
    /// kernel's run-queue wait): a generator starved by other processes.
    pub cpu_wait: Duration,
    /// The worker's last piece, sent as it stops: its interval may be
    /// shorter than a second (the worker's report says how long).
    pub last: bool,
}

/// What workers tell the collector.
#[derive(Debug)]
pub enum EngineEvent {
    Interval(IntervalPiece),
    /// JTL lines, complete lines only.
    Samples(Vec<u8>),
    WorkerDone(WorkerReport),
    /// Samples that ended after the run's end, by label (sent before the
    /// worker's report): left out of the figures, counted on the wire.
    Late(Vec<u64>),
    /// A failed exchange to keep (`--save-failures`).
    Failure(Box<headroom_bundle::failures::FailedExchange>),
}

#[derive(Debug, Clone, Copy)]
pub struct WorkerReport {
    pub worker: usize,
    /// Index of the last interval this worker sent.
    pub last_index: u64,
    /// When its last request ended (or when it was stopped).
    pub end: Instant,
    pub peak_vus: u32,
    /// The open model wanted another VU but `--max-vus` was reached.
    pub max_vus_reached: bool,
}

pub struct Recorder {
    worker: usize,
    run_start: Instant,
    apdex: ApdexThresholds,
    index: u64,
    tallies: Vec<Option<Tally>>,
    checks: Vec<[u64; 2]>,
    active_vus: u32,
    /// The most VUs active at once in the current interval.
    interval_vus: u32,
    /// Users who arrived in the current interval.
    arrivals: u32,
    pub peak_vus: u32,
    pub max_vus_reached: bool,
    cpu_mark: Duration,
    wait_mark: Duration,
    loop_lag: Duration,
    events: UnboundedSender<EngineEvent>,
    jtl: Option<(Arc<JtlContext>, Vec<u8>)>,
    pub last_end: Option<Instant>,
    /// Samples that end after this (the run's planned end) are not kept.
    pub cutoff: Option<Instant>,
    /// Samples past the cutoff, by label (empty until one is).
    late: Vec<u64>,
}

impl Recorder {
    pub fn new(
        worker: usize,
        labels: usize,
        checks: usize,
        run_start: Instant,
        apdex: ApdexThresholds,
        events: UnboundedSender<EngineEvent>,
        jtl: Option<Arc<JtlContext>>,
    ) -> Recorder {
        Recorder {
            worker,
            run_start,
            apdex,
            index: 0,
            tallies: (0..labels).map(|_| None).collect(),
            checks: vec![[0, 0]; checks],
            active_vus: 0,
            interval_vus: 0,
            arrivals: 0,
            peak_vus: 0,
            max_vus_reached: false,
            cpu_mark: thread_cpu_time(),
            wait_mark: thread_cpu_wait(),
            loop_lag: Duration::ZERO,
            events,
            jtl: jtl.map(|ctx| (ctx, Vec::with_capacity(JTL_CHUNK + 1024))),
            last_end: None,
            cutoff: None,
            late: Vec::new(),
        }
    }

    fn index_of(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.run_start).as_secs()
    }

    #[inline]
    pub fn record(&mut self, sample: &Sample) {
        if self.cutoff.is_some_and(|cutoff| sample.end > cutoff) {
            self.late_sample(sample.label);
            return;
        }
        let index = self.index_of(sample.end);
        if index > self.index {
            self.rotate_to(index);
        }
        let apdex = self.apdex;
        self.tallies[sample.label as usize]
            .get_or_insert_with(Tally::default)
            .record(sample, &apdex);
        self.last_end = Some(sample.end);
        if let Some((ctx, buffer)) = &mut self.jtl {
            ctx.write_line(buffer, sample);
            if buffer.len() >= JTL_CHUNK {
                let full = std::mem::replace(buffer, Vec::with_capacity(JTL_CHUNK + 1024));
                let _ = self.events.send(EngineEvent::Samples(full));
            }
        }
    }

    /// The think time a user takes after a request of `label`: counted in
    /// the interval its request ended in.
    #[inline]
    pub fn record_think(&mut self, label: u16, think: Duration) {
        if let Some(Some(tally)) = self.tallies.get_mut(label as usize) {
            tally.counts.think_micros += think.as_micros() as u64;
        }
    }

    /// Counts one evaluation of a scenario check.
    pub fn record_check(&mut self, check: u16, passed: bool) {
        if let Some(counts) = self.checks.get_mut(check as usize) {
            counts[usize::from(!passed)] += 1;
        }
    }

    /// A user arrived (started) at `at`, its planned time: counted in that
    /// second, or in the current one if that second is already sent.
    #[inline]
    pub fn arrived(&mut self, at: Instant) {
        let index = self.index_of(at);
        if index > self.index {
            self.rotate_to(index);
        }
        self.arrivals += 1;
    }

    pub fn vu_started(&mut self) {
        self.active_vus += 1;
        self.peak_vus = self.peak_vus.max(self.active_vus);
        self.interval_vus = self.interval_vus.max(self.active_vus);
        if let Some((ctx, _)) = &self.jtl {
            ctx.active_vus
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub fn vu_stopped(&mut self) {
        self.active_vus = self.active_vus.saturating_sub(1);
        if let Some((ctx, _)) = &self.jtl {
            ctx.active_vus
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Closes every interval before the one containing `now`; `scheduled`
    /// is when the tick was due, to measure the event loop's lateness.
    pub fn tick(&mut self, now: Instant, scheduled: Instant) {
        self.loop_lag = self.loop_lag.max(now.saturating_duration_since(scheduled));
        let index = self.index_of(now);
        if index > self.index {
            self.rotate_to(index);
        }
    }

    fn rotate_to(&mut self, index: u64) {
        while self.index < index {
            self.send_current();
            self.index += 1;
        }
    }

    fn send_current(&mut self) {
        self.send_piece(false);
    }

    fn send_piece(&mut self, last: bool) {
        // Raw samples go out at least once a second, before their interval,
        // so a crash loses no more of samples.jtl than of intervals.csv.
        if let Some((_, buffer)) = &mut self.jtl {
            if !buffer.is_empty() {
                let full = std::mem::replace(buffer, Vec::with_capacity(JTL_CHUNK + 1024));
                let _ = self.events.send(EngineEvent::Samples(full));
            }
        }
        let cpu_now = thread_cpu_time();
        let wait_now = thread_cpu_wait();
        let piece = IntervalPiece {
            worker: self.worker,
            index: self.index,
            tallies: self.tallies.iter_mut().map(Option::take).collect(),
            checks: self.checks.iter_mut().map(std::mem::take).collect(),
            active_vus: std::mem::replace(&mut self.interval_vus, self.active_vus),
            arrivals: std::mem::take(&mut self.arrivals),
            cpu: cpu_now.saturating_sub(self.cpu_mark),
            loop_lag: std::mem::take(&mut self.loop_lag),
            cpu_wait: wait_now.saturating_sub(self.wait_mark),
            last,
        };
        self.cpu_mark = cpu_now;
        self.wait_mark = wait_now;
        let _ = self.events.send(EngineEvent::Interval(piece));
    }

    /// Sends the last (partial) interval, pending raw samples, and the report.
    /// A sample past the cutoff: not in the figures; its label counted
    /// (a page's or a group's is no request, the collector knows which).
    #[cold]
    fn late_sample(&mut self, label: u16) {
        if self.late.is_empty() {
            self.late = vec![0; self.tallies.len()];
        }
        if let Some(count) = self.late.get_mut(label as usize) {
            *count += 1;
        }
    }

    pub fn finish(&mut self, end: Instant) {
        let last = self.index_of(end).max(self.index);
        self.rotate_to(last);
        self.send_piece(true);
        if let Some((_, buffer)) = &mut self.jtl {
            if !buffer.is_empty() {
                let _ = self
                    .events
                    .send(EngineEvent::Samples(std::mem::take(buffer)));
            }
        }
        if !self.late.is_empty() {
            let _ = self
                .events
                .send(EngineEvent::Late(std::mem::take(&mut self.late)));
        }
        let _ = self.events.send(EngineEvent::WorkerDone(WorkerReport {
            worker: self.worker,
            last_index: last,
            end,
            peak_vus: self.peak_vus,
            max_vus_reached: self.max_vus_reached,
        }));
    }
}

/// CPU time used by the calling thread (user + system).
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Time the calling thread has spent runnable but waiting for a CPU, from
/// `/proc/thread-self/schedstat` (zero where the kernel does not report it).
pub fn thread_cpu_wait() -> Duration {
    use std::io::Read;
    let mut buffer = [0u8; 96];
    let Ok(mut file) = std::fs::File::open("/proc/thread-self/schedstat") else {
        return Duration::ZERO;
    };
    let n = file.read(&mut buffer).unwrap_or(0);
    std::str::from_utf8(&buffer[..n])
        .ok()
        .and_then(|text| text.split_whitespace().nth(1))
        .and_then(|wait| wait.parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}
