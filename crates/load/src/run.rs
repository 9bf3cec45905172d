//! A run from start to bundle: starts the engine, collects each worker's
//! interval pieces, merges them second by second into the bundle, reports
//! progress, and on the end (or an interrupt) writes the summary.

use crate::engine::{Engine, EnginePlan, Workload};
use crate::failures::FailureKeeper;
use crate::fault::{Fault, Injector};
use crate::live_metrics::{render as render_metrics, LiveFigures, LiveMetrics};
use crate::monitoring::{MonitorSource, Monitoring};
use crate::phases::LessonPhases;
use crate::recorder::{EngineEvent, IntervalPiece, WorkerReport};
use headroom_analysis::summary::LabelSummary;
use headroom_analysis::LatencyStats;
use headroom_bundle::failures::{FailureWriter, FAILURES_INDEX};
use headroom_bundle::jtl::JtlContext;
use headroom_bundle::manifest::Manifest;
use headroom_bundle::resources::HostSummary;
use headroom_bundle::sample::ErrorKind;
use headroom_bundle::summary::{CheckFigures, LabelFigures, RunStatus, RunSummary};
use headroom_bundle::tally::{LabelTallies, Tally};
use headroom_bundle::warnings::RunWarning;
use headroom_bundle::writer::{BundleWriter, MergedInterval};
use headroom_bundle::BundleError;
use headroom_journey::profile::Profile;
use headroom_traffic::replay::ReplayPlan;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Time between preparing the run and its first request, so every worker
/// thread is up before the schedule begins.
pub const STARTUP_LEAD: Duration = Duration::from_millis(30);
/// A worker thread this busy on average could not keep up.
const SATURATED: f64 = 0.90;
/// A worker that waited for a CPU this share of the run was starved.
const STARVED: f64 = 0.10;
/// An event loop this late once was stalled.
const STALLED_LOOP: Duration = Duration::from_millis(100);

/// What the live display shows once a second.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub elapsed: Duration,
    pub planned: Option<Duration>,
    pub active_vus: u32,
    /// Requests completed in the last interval, per second.
    pub interval_rps: f64,
    pub count: u64,
    pub errors: u64,
    pub p50: Duration,
    pub p95: Duration,
    pub apdex: Option<f64>,
    /// The interval just finished: its index (second of the run), length
    /// and figures (all labels but groups), for callers that judge the run
    /// second by second (a capacity level's warm-up and early stop).
    pub index: u64,
    pub length: Duration,
    pub interval: Tally,
}

pub struct RunOutcome {
    pub status: RunStatus,
    pub summary: RunSummary,
    pub total: LabelSummary,
    pub labels: Vec<(String, LabelSummary)>,
    pub warnings: Vec<RunWarning>,
    pub bundle: PathBuf,
    /// Why the bundle is incomplete, when writing it failed.
    pub bundle_error: Option<String>,
    pub manifest: Manifest,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error("cannot start the load engine: {0}")]
    Engine(std::io::Error),
}

/// Everything a run needs besides the engine plan.
pub struct RunSetup {
    pub manifest: Manifest,
    pub bundle_dir: PathBuf,
    /// Write raw samples (`samples.jtl`); needs one (label, URL) per label.
    pub label_urls: Option<Vec<(String, String)>>,
    /// Per label: true for a group (its samples are not requests and stay
    /// out of the total). Empty means no groups.
    pub outside_total: Vec<bool>,
    /// Names of the scenario's checks, for per-check counts.
    pub check_names: Vec<String>,
    /// Per check: the labels of the steps that evaluate it (empty: not known).
    pub check_labels: Vec<Vec<String>>,
    /// Hosts whose resources go into `resources.csv` (`--monitor`).
    pub monitor: Vec<MonitorSource>,
    /// Process names with columns of their own in `resources.csv`.
    pub monitor_processes: Vec<String>,
    /// Commands run at moments of the run, recorded in `events.csv`.
    pub faults: Vec<Fault>,
    /// Failed exchanges kept per label in `failures/` (0: none).
    pub save_failures: u32,
    /// Serves the run's figures to Prometheus (`--metrics-listen`).
    pub metrics: Option<Arc<LiveMetrics>>,
    /// Ends the run before its planned end when it turns true, as a
    /// complete run: the caller has measured what it needed (a capacity
    /// level whose verdict is settled). In-flight requests are abandoned.
    pub end_early: Option<tokio::sync::watch::Receiver<bool>>,
}

/// Runs `plan` to its end, or until `interrupt` completes.
pub async fn run(
    mut plan: EnginePlan,
    mut setup: RunSetup,
    interrupt: impl Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<RunOutcome, RunError> {
    let run_start = Instant::now() + STARTUP_LEAD;
    let wall_start = SystemTime::now() + STARTUP_LEAD;
    plan.run_start = run_start;
    let labels = setup.manifest.labels.clone();
    plan.labels = labels.len();
    plan.checks = setup.check_names.len();
    plan.jtl = setup.label_urls.as_ref().map(|urls| {
        Arc::new(JtlContext::new(
            urls,
            &setup.check_names,
            run_start,
            wall_start,
            Arc::new(AtomicU32::new(0)),
        ))
    });
    setup.manifest.started_at = humantime::format_rfc3339_millis(wall_start).to_string();
    setup.manifest.status = RunStatus::Running;
    setup.manifest.threads = plan.worker_count();
    let bundle = BundleWriter::create(&setup.bundle_dir, &setup.manifest, wall_start)?;
    let monitoring = start_monitoring(&mut setup, run_start, wall_start)?;

    let workers = plan.worker_count();
    let planned = plan.profile.duration();
    let max_vus = match plan.profile {
        Profile::Open { max_vus, .. } | Profile::RampingRate { max_vus, .. } => Some(max_vus),
        Profile::Closed { .. } | Profile::RampingUsers { .. } | Profile::Lesson(_) => None,
    };
    let (sender, events) = tokio::sync::mpsc::unbounded_channel();
    if setup.save_failures > 0 {
        plan.failures = Some(Arc::new(FailureKeeper::new(
            setup.save_failures,
            labels.clone(),
            run_start,
            sender.clone(),
        )));
    }
    let phases = LessonPhases::of(&plan.profile, &plan.think);
    let replay = match &plan.workload {
        Workload::Replay { plan, .. } => Some(plan.clone()),
        _ => None,
    };
    let engine = Engine::start(plan, sender).map_err(RunError::Engine)?;
    let injector = Injector::start(&setup.faults, run_start, &setup.bundle_dir);
    let mut collector = Collector::new(workers, labels, run_start, planned, bundle);
    collector.phases = phases;
    collector.take_setup(&setup);
    let status = collector
        .collect(
            &engine,
            events,
            interrupt,
            setup.end_early.take(),
            &mut on_progress,
        )
        .await;
    engine.join();
    if !injector.finish().is_empty() {
        setup.manifest.files.events = Some(headroom_bundle::EVENTS.into());
    }
    if collector.failures.written() > 0 {
        setup.manifest.files.failures = Some(FAILURES_INDEX.into());
    }
    // A replay's requests, each beside its recorded status.
    let replay_error = replay.and_then(|replay| write_replay(&replay, &mut setup));
    let mut resources: Vec<HostSummary> = monitoring.map(Monitoring::finish).unwrap_or_default();
    judge_limits(&setup.bundle_dir, &mut resources);
    if !resources.is_empty() {
        setup.manifest.files.resources = Some(headroom_bundle::RESOURCES.into());
        setup.manifest.files.resources_detail = Some(headroom_bundle::RESOURCES_DETAIL.into());
    }
    let mut outcome = collector.finish(status, setup.manifest, max_vus, wall_start, resources)?;
    if outcome.bundle_error.is_none() {
        outcome.bundle_error = replay_error;
    }
    Ok(outcome)
}

/// Each host's server resources judged over the whole run (the USE
/// method), from the seconds resources.jsonl holds; none when it cannot
/// be read.
fn judge_limits(dir: &std::path::Path, hosts: &mut [HostSummary]) {
    let Ok(details) = headroom_bundle::limits::read_details(dir) else {
        return;
    };
    for host in hosts {
        let seconds: Vec<&headroom_monitor::Resources> = details
            .iter()
            .filter(|(_, name, _)| *name == host.host)
            .map(|(_, _, r)| r)
            .collect();
        if !seconds.is_empty() {
            host.limits = headroom_bundle::limits::use_method(&host.host, &seconds);
        }
    }
}

/// A warning for each host whose resources were not sampled, or not
/// every second.
fn missing_resources(resources: &[HostSummary]) -> Vec<RunWarning> {
    let mut warnings = Vec::new();
    for host in resources {
        if host.no_data() || host.gap_seconds > 0 {
            warnings.push(RunWarning::MissingResources {
                host: host.host.clone(),
                seconds: host.gap_seconds,
                none_at_all: host.no_data(),
                problem: host
                    .problem
                    .clone()
                    .unwrap_or_else(|| "no sample was taken".into()),
            });
        }
    }
    warnings
}

/// Starts sampling the hosts of `setup.monitor` into the bundle, if any.
fn start_monitoring(
    setup: &mut RunSetup,
    run_start: Instant,
    wall_start: SystemTime,
) -> Result<Option<Monitoring>, BundleError> {
    if setup.monitor.is_empty() {
        return Ok(None);
    }
    let sources = std::mem::take(&mut setup.monitor);
    let started = Monitoring::start(
        sources,
        setup.monitor_processes.clone(),
        &setup.bundle_dir,
        run_start,
        wall_start,
    );
    Ok(Some(started.map_err(|source| BundleError::Io {
        path: setup.bundle_dir.clone(),
        source,
    })?))
}

/// Writes a replay's requests, each beside its recorded status, into the
/// bundle and names the file in the manifest; the error as text when it
/// cannot.
fn write_replay(replay: &ReplayPlan, setup: &mut RunSetup) -> Option<String> {
    match replay.write_csv(&setup.bundle_dir) {
        Ok(()) => {
            setup.manifest.files.replay = Some(headroom_traffic::replay::REPLAY_CSV.into());
            None
        }
        Err(e) => Some(format!(
            "cannot write {} in {}: {e}",
            headroom_traffic::replay::REPLAY_CSV,
            setup.bundle_dir.display()
        )),
    }
}

struct Collector {
    workers: usize,
    labels: Vec<String>,
    run_start: Instant,
    planned: Option<Duration>,
    bundle: Option<BundleWriter>,
    bundle_dir: PathBuf,
    /// The bundle could not be written: the run was stopped, the figures
    /// still cover it up to then.
    bundle_error: Option<BundleError>,
    /// Pieces received per interval index, merged as they come.
    pending: BTreeMap<u64, Vec<IntervalPiece>>,
    /// Highest index received from each worker.
    received: Vec<Option<u64>>,
    /// The index of each worker's last piece, once it arrived: that
    /// interval's length is known only with the worker's report.
    last_piece: Vec<Option<u64>>,
    done: Vec<Option<WorkerReport>>,
    next_index: u64,
    /// Per label, made by its first sample.
    cumulative: LabelTallies,
    cumulative_total: Tally,
    /// Per label: samples that ended after the run's end (not counted).
    late: Vec<u64>,
    /// Per label: a group, whose samples stay out of the total.
    outside_total: Vec<bool>,
    check_names: Vec<String>,
    check_labels: Vec<Vec<String>>,
    /// Per check: [passes, failures] over the run.
    check_counts: Vec<[u64; 2]>,
    worker_busy: Vec<f64>,
    worker_wait: Vec<f64>,
    worst_loop_lag: Duration,
    failures: FailureWriter,
    failures_stopped: bool,
    /// Where to publish the live figures, the run's name and its target.
    metrics: Option<(Arc<LiveMetrics>, String, String)>,
    /// A lesson run's two phases.
    phases: Option<LessonPhases>,
}

impl Collector {
    /// Takes from `setup` what the collector counts against: the requests
    /// outside the total, the live metrics page and the checks.
    fn take_setup(&mut self, setup: &RunSetup) {
        self.outside_total = setup.outside_total.clone();
        self.metrics = setup.metrics.clone().map(|live| {
            let run = setup.bundle_dir.display().to_string();
            (live, run, setup.manifest.target.clone())
        });
        self.check_names = setup.check_names.clone();
        self.check_labels = setup.check_labels.clone();
        self.check_counts = vec![[0, 0]; setup.check_names.len()];
    }

    fn new(
        workers: usize,
        labels: Vec<String>,
        run_start: Instant,
        planned: Option<Duration>,
        bundle: BundleWriter,
    ) -> Collector {
        Collector {
            workers,
            cumulative: LabelTallies::new(labels.len()),
            late: vec![0; labels.len()],
            labels,
            run_start,
            planned,
            bundle_dir: bundle.dir().to_path_buf(),
            failures: FailureWriter::new(bundle.dir()),
            failures_stopped: false,
            bundle: Some(bundle),
            bundle_error: None,
            pending: BTreeMap::new(),
            received: vec![None; workers],
            last_piece: vec![None; workers],
            done: vec![None; workers],
            next_index: 0,
            cumulative_total: Tally::default(),
            outside_total: Vec::new(),
            check_names: Vec::new(),
            check_labels: Vec::new(),
            check_counts: Vec::new(),
            worker_busy: Vec::new(),
            worker_wait: Vec::new(),
            metrics: None,
            phases: None,
            worst_loop_lag: Duration::ZERO,
        }
    }

    async fn collect(
        &mut self,
        engine: &Engine,
        mut events: tokio::sync::mpsc::UnboundedReceiver<EngineEvent>,
        interrupt: impl Future<Output = ()>,
        end_early: Option<tokio::sync::watch::Receiver<bool>>,
        on_progress: &mut impl FnMut(&Progress),
    ) -> RunStatus {
        let mut status = RunStatus::Complete;
        tokio::pin!(interrupt);
        let mut ended = end_early.is_none();
        let end_early = async move {
            match end_early {
                Some(mut end) => {
                    let _ = end.wait_for(|v| *v).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::pin!(end_early);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    None => break,
                    Some(EngineEvent::Interval(piece)) => {
                        self.received[piece.worker] = Some(piece.index);
                        if piece.last {
                            self.last_piece[piece.worker] = Some(piece.index);
                        }
                        self.pending.entry(piece.index).or_default().push(piece);
                        let written = self.finalize_ready(on_progress);
                        self.check(written, engine);
                    }
                    Some(EngineEvent::Samples(lines)) => {
                        if let (Some(bundle), None) = (&mut self.bundle, &self.bundle_error) {
                            let written = bundle.write_samples(&lines);
                            self.check(written, engine);
                        }
                    }
                    Some(EngineEvent::Failure(failure)) => {
                        // Keeping failures is a help, not the run: when it
                        // cannot be written (a full disk), it stops and the
                        // run goes on.
                        if self.bundle.is_some() && self.bundle_error.is_none() && !self.failures_stopped {
                            if let Err(e) = self.failures.write(&failure) {
                                self.failures_stopped = true;
                                eprintln!("headroom: warning: failed exchanges are no longer kept ({e}); the run goes on");
                            }
                        }
                    }
                    Some(EngineEvent::Late(by_label)) => {
                        for (sum, late) in self.late.iter_mut().zip(by_label) {
                            *sum += late;
                        }
                    }
                    Some(EngineEvent::WorkerDone(report)) => {
                        self.done[report.worker] = Some(report);
                        let written = self.finalize_ready(on_progress);
                        self.check(written, engine);
                    }
                },
                _ = &mut interrupt, if status != RunStatus::Interrupted => {
                    status = RunStatus::Interrupted;
                    engine.stop();
                }
                _ = &mut end_early, if !ended => {
                    ended = true;
                    engine.stop();
                }
            }
        }
        status
    }

    /// The requests answered after the run's end: the late samples of the
    /// labels that are requests (a page's or a group's sample is none).
    fn late_requests(&self, roles: &BTreeMap<String, headroom_bundle::wire::LabelRole>) -> u64 {
        use headroom_bundle::wire::LabelRole;
        self.labels
            .iter()
            .zip(&self.late)
            .filter(|(name, _)| {
                !matches!(
                    roles.get(name.as_str()),
                    Some(LabelRole::Page | LabelRole::Group)
                )
            })
            .map(|(_, late)| late)
            .sum()
    }

    /// A failed write stops the run: going on would produce figures that no
    /// bundle keeps. The collector still merges what the workers send.
    fn check(&mut self, written: Result<(), BundleError>, engine: &Engine) {
        if let Err(error) = written {
            if self.bundle_error.is_none() {
                self.bundle_error = Some(error);
                engine.stop();
            }
        }
    }

    fn run_end(&self) -> Option<Instant> {
        if self.done.iter().all(Option::is_some) {
            self.done.iter().flatten().map(|r| r.end).max()
        } else {
            None
        }
    }

    /// Merges and writes every interval all workers have reported.
    fn finalize_ready(
        &mut self,
        on_progress: &mut impl FnMut(&Progress),
    ) -> Result<(), BundleError> {
        loop {
            let index = self.next_index;
            let ready = (0..self.workers).all(|w| {
                let waiting_for_report =
                    self.last_piece[w] == Some(index) && self.done[w].is_none();
                (self.received[w].is_some_and(|r| r >= index) && !waiting_for_report)
                    || self.done[w].is_some_and(|d| d.last_index < index)
            });
            let all_done = self.run_end();
            let beyond_end =
                all_done.is_some() && self.done.iter().flatten().all(|d| d.last_index < index);
            if !ready || beyond_end {
                return Ok(());
            }
            let pieces = self.pending.remove(&index).unwrap_or_default();
            let length = match all_done {
                Some(end)
                    if self.done.iter().flatten().map(|d| d.last_index).max() == Some(index) =>
                {
                    let elapsed = end.saturating_duration_since(self.run_start);
                    elapsed
                        .saturating_sub(Duration::from_secs(index))
                        .clamp(Duration::from_millis(1), Duration::from_secs(1))
                }
                _ => Duration::from_secs(1),
            };
            let merged = self.merge(index, length, pieces);
            // A run that ends on a second's boundary leaves a sliver of the
            // next second in which nothing happened: not a row of its own.
            let sliver = all_done.is_some()
                && length < Duration::from_millis(50)
                && merged.total.counts.count == 0
                && merged.arrivals == 0
                && merged.tallies.iter().all(Option::is_none);
            if let (Some(bundle), None, false) = (&mut self.bundle, &self.bundle_error, sliver) {
                bundle.write_interval(&merged)?;
            }
            for (label, tally) in merged.tallies.iter().enumerate() {
                if let Some(tally) = tally {
                    self.cumulative.add(label, tally);
                }
            }
            self.cumulative_total.add(&merged.total);
            if let Some(phases) = &mut self.phases {
                phases.add(index, &merged.total, merged.arrivals);
            }
            if length >= Duration::from_millis(500) {
                self.worker_busy.push(merged.worker_busy);
                self.worker_wait.push(merged.worker_wait);
            }
            self.worst_loop_lag = self.worst_loop_lag.max(merged.loop_lag);
            self.publish(Duration::from_secs(index) + length, merged.active_vus);
            if sliver {
                self.next_index += 1;
                continue;
            }
            let latency = LatencyStats::of(&self.cumulative_total.response);
            on_progress(&Progress {
                elapsed: Duration::from_secs(index) + length,
                planned: self.planned,
                active_vus: merged.active_vus,
                interval_rps: merged.total.counts.count as f64 / length.as_secs_f64(),
                count: self.cumulative_total.counts.count,
                errors: self.cumulative_total.counts.errors,
                p50: latency.p50,
                p95: latency.p95,
                apdex: self.cumulative_total.counts.apdex.score(),
                index,
                length,
                interval: merged.total,
            });
            self.next_index += 1;
        }
    }

    /// Renders the live figures for `--metrics-listen` (once a second).
    fn publish(&self, elapsed: Duration, active_vus: u32) {
        let Some((live, run, target)) = &self.metrics else {
            return;
        };
        let figures = LiveFigures {
            run,
            target,
            elapsed,
            active_vus,
            labels: self
                .labels
                .iter()
                .zip(self.cumulative.iter())
                .enumerate()
                .map(|(i, (name, tally))| {
                    let group = self.outside_total.get(i).copied().unwrap_or(false);
                    (name.as_str(), group, tally)
                })
                .collect(),
            checks: self
                .check_names
                .iter()
                .zip(&self.check_counts)
                .map(|(name, [passes, failures])| (name.as_str(), *passes, *failures))
                .collect(),
        };
        live.publish(render_metrics(&figures));
    }

    fn merge(
        &mut self,
        index: u64,
        length: Duration,
        pieces: Vec<IntervalPiece>,
    ) -> MergedInterval {
        for piece in &pieces {
            for (sum, counts) in self.check_counts.iter_mut().zip(&piece.checks) {
                sum[0] += counts[0];
                sum[1] += counts[1];
            }
        }
        let mut tallies: Vec<Option<Tally>> = self.labels.iter().map(|_| None).collect();
        let mut total = Tally::default();
        let mut active_vus = 0;
        let mut arrivals = 0;
        let mut worker_busy: f64 = 0.0;
        let mut worker_wait: f64 = 0.0;
        let mut loop_lag = Duration::ZERO;
        for piece in pieces {
            active_vus += piece.active_vus;
            arrivals += piece.arrivals;
            worker_busy = worker_busy.max(piece.cpu.as_secs_f64() / length.as_secs_f64());
            worker_wait = worker_wait.max(piece.cpu_wait.as_secs_f64() / length.as_secs_f64());
            loop_lag = loop_lag.max(piece.loop_lag);
            for (label, (slot, tally)) in tallies.iter_mut().zip(piece.tallies).enumerate() {
                if let Some(tally) = tally {
                    if !self.outside_total.get(label).copied().unwrap_or(false) {
                        total.add(&tally);
                    }
                    match slot {
                        Some(existing) => existing.add(&tally),
                        None => *slot = Some(tally),
                    }
                }
            }
        }
        MergedInterval {
            index,
            length,
            tallies,
            total,
            active_vus,
            arrivals,
            worker_busy: worker_busy.min(1.0),
            worker_wait: worker_wait.min(1.0),
            loop_lag,
        }
    }

    fn finish(
        mut self,
        status: RunStatus,
        mut manifest: Manifest,
        max_vus: Option<u32>,
        wall_start: SystemTime,
        resources: Vec<HostSummary>,
    ) -> Result<RunOutcome, RunError> {
        let end = self.run_end().unwrap_or_else(Instant::now);
        let elapsed = end
            .saturating_duration_since(self.run_start)
            .max(Duration::from_millis(1));
        let (total_figures, total) = LabelFigures::of(&self.cumulative_total, elapsed);
        let mut labels = Vec::new();
        let mut label_figures = BTreeMap::new();
        for (name, tally) in self.labels.iter().zip(self.cumulative.iter()) {
            let (figures, summary) = LabelFigures::of(tally, elapsed);
            label_figures.insert(name.clone(), figures);
            labels.push((name.clone(), summary));
        }
        let peak_vus = self.done.iter().flatten().map(|d| d.peak_vus).sum();
        let mut warnings = self.warnings(max_vus);
        warnings.extend(missing_resources(&resources));
        let (apdex_t_ms, apdex_f_ms) = (manifest.apdex_t_ms, manifest.apdex_f_ms);
        let (phases, arrivals_per_second) = self
            .phases
            .as_ref()
            .map(|p| p.figures(elapsed))
            .unwrap_or_default();
        let response_sum = total.latency.mean.as_secs_f64() * total.count as f64;
        let mut unrecorded = headroom_http::sent::take();
        unrecorded.late = self.late_requests(&manifest.label_roles);
        let requests =
            headroom_bundle::wire::WireCount::of(&label_figures, &manifest.label_roles, unrecorded);
        let summary = RunSummary {
            elapsed_s: elapsed.as_secs_f64(),
            apdex_t_ms,
            apdex_f_ms,
            concurrency: response_sum / elapsed.as_secs_f64(),
            throughput_mb_s: total.bytes_received as f64 / 1e6 / elapsed.as_secs_f64(),
            total: total_figures,
            labels: label_figures,
            peak_vus,
            checks: self.check_figures(),
            resources,
            phases,
            arrivals_per_second,
            requests,
        };
        let status = if self.bundle_error.is_some() {
            RunStatus::Aborted
        } else {
            status
        };
        manifest.status = status;
        manifest.ended_at =
            Some(humantime::format_rfc3339_millis(wall_start + elapsed).to_string());
        manifest.elapsed_s = Some(elapsed.as_secs_f64());
        manifest.summary = Some(summary.clone());
        manifest.warnings = warnings
            .iter()
            .filter_map(|w| serde_json::to_value(w).ok())
            .collect();
        // Even after a failed write, try to leave a manifest saying `aborted`.
        if let Some(writer) = self.bundle.take() {
            if let Err(error) = writer.finish(&manifest) {
                self.bundle_error.get_or_insert(error);
            }
        }
        Ok(RunOutcome {
            status,
            summary,
            total,
            labels,
            warnings,
            bundle: self.bundle_dir,
            bundle_error: self.bundle_error.map(|e| e.to_string()),
            manifest,
        })
    }

    /// Each check's passes and failures, and the labels it checks.
    fn check_figures(&self) -> BTreeMap<String, CheckFigures> {
        self.check_names
            .iter()
            .zip(&self.check_counts)
            .enumerate()
            .map(|(i, (name, [passes, failures]))| {
                (
                    name.clone(),
                    CheckFigures {
                        passes: *passes,
                        failures: *failures,
                        labels: self.check_labels.get(i).cloned().unwrap_or_default(),
                    },
                )
            })
            .collect()
    }

    fn warnings(&self, max_vus: Option<u32>) -> Vec<RunWarning> {
        let mut warnings = Vec::new();
        let c = &self.cumulative_total.counts;
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let busy = mean(&self.worker_busy);
        if busy >= SATURATED {
            warnings.push(RunWarning::GeneratorSaturated {
                busy_percent: busy * 100.0,
            });
        }
        let waited = mean(&self.worker_wait);
        if waited >= STARVED || self.worst_loop_lag >= STALLED_LOOP {
            warnings.push(RunWarning::GeneratorStalled {
                waited_percent: waited * 100.0,
                worst_lag: self.worst_loop_lag,
            });
        }
        if c.count > 0 && c.late_starts * 100 >= c.count {
            let max_vus_reached = self.done.iter().flatten().any(|d| d.max_vus_reached);
            warnings.push(RunWarning::BehindSchedule {
                late: c.late_starts,
                total: c.count,
                worst_lag: Duration::from_micros(c.max_schedule_lag_micros),
                max_vus: max_vus.filter(|_| max_vus_reached),
            });
        }
        // A few resends are the keep-alive race; many are a pattern.
        if c.resent * 20 >= c.count.max(1) && c.resent >= 5 {
            warnings.push(RunWarning::ManyResent {
                resent: c.resent,
                total: c.count,
            });
        }
        if c.count == 0 {
            warnings.push(RunWarning::NoSamples);
        } else if c.errors == c.count {
            let main = ErrorKind::ALL
                .iter()
                .max_by_key(|k| c.errors_of(**k))
                .map_or("unknown".to_string(), |k| {
                    match c.error_details[*k as usize] {
                        Some(why) => format!("{}: {why}", k.describe()),
                        None => k.describe().to_string(),
                    }
                });
            warnings.push(RunWarning::AllFailed { main_error: main });
        }
        warnings
    }
}

/// `runs/<UTC timestamp>-<slug>`: the default bundle location.
pub fn default_bundle_dir(base: &Path, slug_source: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
        .to_string()
        .replace(':', "")
        .trim_end_matches('Z')
        .to_string();
    let slug: String = slug_source
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let slug: String = slug.chars().take(48).collect();
    let base_name = format!("{stamp}Z-{slug}");
    let mut dir = base.join(&base_name);
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{base_name}-{n}"));
        n += 1;
    }
    dir
}
