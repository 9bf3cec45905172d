//! The engine: one OS thread per core, each running a single-threaded tokio
//! runtime with its share of the virtual users, its own recorder and its own
//! share of the schedule. Nothing on the request path crosses threads.
//!
//! Closed model: VU `i` starts at `ramp_up * i / users` and loops
//! request → think → request. Under a throughput cap each request first
//! claims the next slot of the worker's pacer, and its response time counts
//! from that slot. Open model: arrival `n` is due at `n / rate`; a VU claims
//! the next arrival, waits for it, sends, and its response time counts from
//! the arrival's due time, so a stalled server shows as long response times
//! instead of fewer requests (coordinated omission corrected). When every VU
//! is busy and an arrival is overdue, the worker adds VUs up to `--max-vus`.
//! With a session, each arrival a VU claims is a new user (a fresh journey)
//! who stays for the session. A lesson's students are closed-model users
//! each starting at its planned arrival time. Every user's start is counted
//! in the second it was due (intervals.csv's `arrivals`).

use crate::failures::{Capture, FailureKeeper};
use crate::precise_timer::PreciseTimer;
use crate::recorder::{EngineEvent, Recorder};
use headroom_analysis::apdex::ApdexThresholds;
use headroom_bundle::failures::BODY_LIMIT;
use headroom_bundle::jtl::JtlContext;
use headroom_bundle::sample::{status_error, LabelId, Sample};
use headroom_http::client::{HttpClient, Outgoing};
use headroom_http::conn::Connector;
use headroom_journey::journey_mix::{MixPlan, Offset};
use headroom_journey::lesson::UserSession;
use headroom_journey::profile::{Profile, Think};
use headroom_journey::scenario::observe::{Observe, StepView};
use headroom_journey::scenario::runner::{Journey, JourneyHost, JourneyPlan};
use headroom_journey::shard::Shard;
use headroom_journey::stages::Stages;
use headroom_traffic::replay::ReplayPlan;
use headroom_units::quantity::Rate;
use headroom_units::rng::Rng;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc::UnboundedSender, watch};
use tokio::task::JoinSet;

/// How late an arrival may be before the worker adds a VU for it.
const ARRIVAL_GRACE: Duration = Duration::from_millis(2);
/// Shortest pause between two checks for overdue arrivals.
const SUPERVISE_EVERY: Duration = Duration::from_millis(2);

/// A request serialised once for the whole run.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub label: LabelId,
    pub bytes: Vec<u8>,
    pub is_head: bool,
    pub keep_alive: bool,
}

impl PreparedRequest {
    fn outgoing(&self) -> Outgoing<'_> {
        Outgoing {
            bytes: &self.bytes,
            is_head: self.is_head,
            keep_alive: self.keep_alive,
        }
    }
}

/// What each VU does in one iteration.
pub enum Workload {
    /// URL mode: one request, sent again and again.
    Url {
        connector: Arc<Connector>,
        request: Arc<PreparedRequest>,
    },
    /// A scenario: each iteration runs the whole journey.
    Journey(Arc<JourneyPlan>),
    /// A mix of journeys: each user (or arrival) runs one of them.
    Mix(Arc<MixPlan>),
    /// An access log replayed: arrival `n` sends the log's request `n`
    /// at its recorded time (open model only).
    Replay {
        connector: Arc<Connector>,
        plan: Arc<ReplayPlan>,
    },
}

/// Everything the engine needs to run.
pub struct EnginePlan {
    pub workload: Workload,
    pub labels: usize,
    /// Scenario checks (for per-check counts).
    pub checks: usize,
    pub profile: Profile,
    pub think: Think,
    pub throughput_cap: Option<Rate>,
    pub timeout: Duration,
    pub threads: usize,
    pub apdex: ApdexThresholds,
    pub seed: u64,
    pub jtl: Option<Arc<JtlContext>>,
    /// The agreed start; workers begin their schedule here.
    pub run_start: Instant,
    /// Keeps the first failed exchanges of each label (`--save-failures`);
    /// set by [`crate::run::run`].
    pub failures: Option<Arc<FailureKeeper>>,
    /// The part of the run this generator runs (`--shard`; the whole by default).
    pub shard: Shard,
    /// Workers through a scenario's `before:` phase, and when the last was.
    before_done: watch::Sender<BeforeDone>,
    /// The users do not think: each request follows the last as soon as it
    /// ends (a lesson search's look at what a page view costs the server).
    pub non_stop: bool,
    /// Each iteration of a closed-model user is a new student: a journey
    /// of its own (its own number, so its own account and data row, and
    /// in a mix its own journey), with no cookies, an empty cache and new
    /// connections, its `once:` steps run again (what a lesson's arrivals
    /// cost the server, non-stop).
    pub new_students: bool,
}

/// What an assembly decides of a plan: the workload and how it is run.
pub struct PlanParts {
    pub workload: Workload,
    pub profile: Profile,
    pub think: Think,
    /// `--throughput`: requests a second at most, the whole run's.
    pub throughput_cap: Option<Rate>,
    /// A request's time limit.
    pub timeout: Duration,
    /// Worker threads (one runtime each).
    pub threads: usize,
    pub apdex: ApdexThresholds,
    pub seed: u64,
}

/// How far the workers are through the `before:` phase.
#[derive(Debug, Clone, Copy, Default)]
struct BeforeDone {
    workers: usize,
    /// When the last worker's `before:` users ended: the profile starts.
    at: Option<Instant>,
}

impl EnginePlan {
    /// A plan; labels, checks, raw samples and the start are filled in by
    /// [`crate::run::run`] from the run's setup.
    pub fn new(parts: PlanParts) -> EnginePlan {
        let PlanParts {
            workload,
            profile,
            think,
            throughput_cap,
            timeout,
            threads,
            apdex,
            seed,
        } = parts;
        EnginePlan {
            workload,
            labels: 0,
            checks: 0,
            profile,
            think,
            throughput_cap,
            timeout,
            threads,
            apdex,
            seed,
            jtl: None,
            run_start: Instant::now(),
            failures: None,
            shard: Shard::WHOLE,
            before_done: watch::channel(BeforeDone::default()).0,
            non_stop: false,
            new_students: false,
        }
    }

    /// Users of the scenario's `before:` phase (0 without one).
    fn before_users(&self) -> u32 {
        match &self.workload {
            Workload::Journey(journey) => journey.before.as_ref().map_or(0, |b| b.users),
            Workload::Url { .. } | Workload::Mix(_) | Workload::Replay { .. } => 0,
        }
    }

    /// Counts a worker through the `before:` phase.
    fn before_finished(&self, workers: usize) {
        let now = Instant::now();
        self.before_done.send_modify(|done| {
            done.workers += 1;
            if done.workers >= workers {
                done.at = Some(now);
            }
        });
    }

    /// Worker threads actually used: no more than there are users to spread.
    pub fn worker_count(&self) -> usize {
        let mine = self.shard.share(u64::from(self.profile.population()));
        self.threads.clamp(1, mine.max(1) as usize)
    }
}

/// A running engine.
pub struct Engine {
    threads: Vec<JoinHandle<()>>,
    stop: watch::Sender<bool>,
}

impl Engine {
    pub fn start(
        plan: EnginePlan,
        events: UnboundedSender<EngineEvent>,
    ) -> std::io::Result<Engine> {
        let (stop, stop_rx) = watch::channel(false);
        let workers = plan.worker_count();
        let plan = Arc::new(plan);
        let mut threads = Vec::with_capacity(workers);
        for index in 0..workers {
            let plan = plan.clone();
            let events = events.clone();
            let stop_rx = stop_rx.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("headroom-worker-{index}"))
                    .spawn(move || run_worker(plan, index, workers, events, stop_rx))?,
            );
        }
        Ok(Engine { threads, stop })
    }

    /// Asks every worker to stop now; in-flight requests are abandoned.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// Waits for the worker threads to end.
    pub fn join(self) {
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

/// A worker's share of a throughput cap: slots `period` apart.
struct Pacer {
    next: Cell<Instant>,
    period: Duration,
}

impl Pacer {
    /// The start time of the caller's request: the next free slot, or now
    /// when the schedule has fallen behind (users cannot send faster than
    /// they are served).
    fn claim(&self, now: Instant) -> Instant {
        let slot = self.next.get().max(now);
        self.next.set(slot + self.period);
        slot
    }
}

/// When arrivals are due, as offsets from the run's start.
#[derive(Clone)]
enum ArrivalSchedule {
    /// Arrival `n` at `n * period`.
    Constant(Duration),
    Ramping(Stages),
    /// Arrival `n` when the log's request `n` is due.
    Recorded(Arc<ReplayPlan>),
}

/// A worker's share of the open model's arrivals: worker `worker` of
/// `workers` takes arrivals `worker`, `worker + workers`, ...
struct Arrivals {
    next: Cell<u64>,
    start: Instant,
    schedule: ArrivalSchedule,
    worker: u64,
    workers: u64,
    /// Arrivals are numbered as in one unsplit run; this shard's are its share.
    shard: Shard,
    end: Instant,
}

impl Arrivals {
    /// When this worker's `k`-th arrival is due, if before the end.
    fn due(&self, k: u64) -> Option<Instant> {
        self.numbered(k).map(|(_, due)| due)
    }

    /// This worker's `k`-th arrival: its number in the whole run and when
    /// it is due, if before the end.
    fn numbered(&self, k: u64) -> Option<(u64, Instant)> {
        let n = self.shard.global(k * self.workers + self.worker);
        let offset = match &self.schedule {
            ArrivalSchedule::Constant(period) => Some(period.mul_f64(n as f64)),
            ArrivalSchedule::Ramping(stages) => stages.arrival_time(n as f64),
            ArrivalSchedule::Recorded(plan) => plan.due(n),
        }?;
        let due = self.start + offset;
        (due < self.end).then_some((n, due))
    }

    fn peek(&self) -> Option<Instant> {
        self.due(self.next.get())
    }

    /// Unclaimed arrivals already due by `by`, counting up to `most`.
    fn overdue(&self, by: Instant, most: u32) -> u32 {
        let first = self.next.get();
        (0..most as u64)
            .take_while(|i| self.due(first + i).is_some_and(|due| due <= by))
            .count() as u32
    }

    fn claim(&self) -> Option<Instant> {
        self.claim_numbered().map(|(_, due)| due)
    }

    /// The next arrival with its number in the whole run.
    fn claim_numbered(&self) -> Option<(u64, Instant)> {
        let arrival = self.numbered(self.next.get())?;
        self.next.set(self.next.get() + 1);
        Some(arrival)
    }
}

struct Worker {
    plan: Arc<EnginePlan>,
    recorder: RefCell<Recorder>,
    requests_left: Cell<Option<u64>>,
    pacer: Option<Pacer>,
    arrivals: Option<Arrivals>,
    /// Microsecond timer for scheduled starts; `None` falls back to tokio's 1 ms timer.
    timer: Option<Rc<PreciseTimer>>,
}

impl Worker {
    /// Waits for a scheduled start as precisely as the platform allows.
    async fn wait_for_schedule(&self, at: Instant) {
        match &self.timer {
            Some(timer) => timer.sleep_until(at).await,
            None => tokio::time::sleep_until(at.into()).await,
        }
    }

    /// The run's duration is over: a VU sends nothing more (a response
    /// that arrives now is not counted, so a request sent now would be
    /// load the figures never show).
    fn past_cutoff(&self) -> bool {
        self.recorder
            .borrow()
            .cutoff
            .is_some_and(|cutoff| Instant::now() >= cutoff)
    }

    fn take_budget(&self) -> bool {
        match self.requests_left.get() {
            None => true,
            Some(0) => false,
            Some(n) => {
                self.requests_left.set(Some(n - 1));
                true
            }
        }
    }
}

/// `total` split over `parts`, the remainder going to the first parts.
fn share(total: u64, parts: usize, index: usize) -> u64 {
    total / parts as u64 + u64::from((index as u64) < total % parts as u64)
}

/// This worker's share of the profile's schedule: the requests it has
/// left (a closed profile's request count), its pacer under a throughput
/// cap, and its arrivals in an open profile.
fn worker_schedule(
    plan: &EnginePlan,
    index: usize,
    workers: usize,
) -> (Option<u64>, Option<Pacer>, Option<Arrivals>) {
    // Under a throughput cap, the generators' first slots interleave.
    let first_slot = plan.shard.global(index as u64) as f64;
    match plan.profile {
        Profile::Closed {
            users, requests, ..
        } => {
            let my_users = share(plan.shard.share(users as u64), workers, index);
            let pacer = plan.throughput_cap.map(|cap| {
                let my_rate = cap.per_second * my_users as f64 / users as f64;
                let period = Duration::from_secs_f64(1.0 / my_rate);
                Pacer {
                    next: Cell::new(plan.run_start + cap.period().mul_f64(first_slot)),
                    period,
                }
            });
            (
                requests.map(|n| share(plan.shard.share(n), workers, index)),
                pacer,
                None,
            )
        }
        Profile::RampingUsers { .. } | Profile::Lesson(_) => {
            let peak = plan.profile.population();
            let my_users = share(plan.shard.share(peak as u64), workers, index);
            let pacer = plan.throughput_cap.map(|cap| Pacer {
                next: Cell::new(plan.run_start + cap.period().mul_f64(first_slot)),
                period: Duration::from_secs_f64(peak as f64 / (cap.per_second * my_users as f64)),
            });
            (None, pacer, None)
        }
        Profile::Open { rate, duration, .. } => {
            let schedule = match &plan.workload {
                Workload::Replay { plan, .. } => ArrivalSchedule::Recorded(plan.clone()),
                _ => ArrivalSchedule::Constant(rate.period()),
            };
            let arrivals = Arrivals {
                next: Cell::new(0),
                start: plan.run_start,
                schedule,
                worker: index as u64,
                workers: workers as u64,
                shard: plan.shard,
                end: plan.run_start + duration,
            };
            (None, None, Some(arrivals))
        }
        Profile::RampingRate { ref stages, .. } => {
            let arrivals = Arrivals {
                next: Cell::new(0),
                start: plan.run_start,
                schedule: ArrivalSchedule::Ramping(stages.clone()),
                worker: index as u64,
                workers: workers as u64,
                shard: plan.shard,
                end: plan.run_start + stages.total(),
            };
            (None, None, Some(arrivals))
        }
    }
}

fn run_worker(
    plan: Arc<EnginePlan>,
    index: usize,
    workers: usize,
    events: UnboundedSender<EngineEvent>,
    stop: watch::Receiver<bool>,
) {
    let mut recorder = Recorder::new(
        index,
        plan.labels,
        plan.checks,
        plan.run_start,
        plan.apdex,
        events,
        plan.jtl.clone(),
    );
    // A request still in flight at -d is abandoned (as wrk does), even
    // when it completes before the worker has noticed the deadline.
    // With a before: phase, the cutoff is set when the profile starts.
    if plan.before_users() == 0 {
        recorder.cutoff = plan.profile.duration().map(|d| plan.run_start + d);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => {
            // Report an empty share so the collector (and the other
            // workers, past a before: phase) do not wait for us.
            recorder.finish(Instant::now());
            plan.before_finished(workers);
            return;
        }
    };
    let (requests_left, pacer, arrivals) = worker_schedule(&plan, index, workers);
    // A lesson's students arrive at their planned times to the microsecond,
    // each counted in the second it was planned for.
    let scheduled =
        pacer.is_some() || arrivals.is_some() || matches!(plan.profile, Profile::Lesson(_));
    let population = plan.profile.population();
    let timer = if scheduled {
        let _context = runtime.enter();
        let mine = plan.shard.share(population as u64);
        PreciseTimer::new(share(mine, workers, index) as usize + 1).ok()
    } else {
        None
    };
    // Ask the kernel for exact wake-ups (the default slack is 50 µs).
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let worker = Rc::new(Worker {
        plan: plan.clone(),
        recorder: RefCell::new(recorder),
        requests_left: Cell::new(requests_left),
        pacer,
        arrivals,
        timer: timer.clone(),
    });
    let local = tokio::task::LocalSet::new();
    if let Some(timer) = timer {
        local.spawn_local(timer.drive());
    }
    local.block_on(&runtime, control(worker, index, workers, stop));
}

async fn control(
    worker: Rc<Worker>,
    index: usize,
    workers: usize,
    mut stop: watch::Receiver<bool>,
) {
    let plan = worker.plan.clone();
    let mut next_tick = plan.run_start + Duration::from_secs(1);
    // The profile's users start when every before: user has ended.
    let origin = if plan.before_users() > 0 {
        match before_phase(&worker, index, workers, &mut stop, &mut next_tick).await {
            Some(at) => at,
            None => {
                worker.recorder.borrow_mut().finish(Instant::now());
                return;
            }
        }
    } else {
        plan.run_start
    };
    worker.recorder.borrow_mut().cutoff = plan.profile.duration().map(|d| origin + d);
    let mut users = WorkerUsers::start(
        &worker,
        UserNumbering {
            plan: &plan,
            workers,
            index,
        },
        origin,
    );
    let deadline = plan.profile.duration().map(|d| origin + d);
    let mut last_supervision = Instant::now();
    let mut finished_all = false;
    loop {
        let supervise_at = worker
            .arrivals
            .as_ref()
            .and_then(Arrivals::peek)
            .map(|due| (due + ARRIVAL_GRACE).max(last_supervision + SUPERVISE_EVERY));
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
            _ = sleep_until_opt(deadline) => break,
            _ = tokio::time::sleep_until(next_tick.into()) => {
                worker.recorder.borrow_mut().tick(Instant::now(), next_tick);
                next_tick += Duration::from_secs(1);
            }
            _ = sleep_until_opt(supervise_at) => {
                let now = Instant::now();
                last_supervision = now;
                users.add_for_overdue_arrivals(&worker, now);
            }
            joined = users.vus.join_next(), if !users.vus.is_empty() => {
                if joined.is_some() && users.vus.is_empty() {
                    finished_all = true;
                    break;
                }
            }
        }
    }
    let mut vus = users.vus;
    vus.abort_all();
    while vus.join_next().await.is_some() {}
    let now = Instant::now();
    let end = if finished_all {
        worker.recorder.borrow().last_end.unwrap_or(now)
    } else {
        deadline.map_or(now, |d| d.min(now))
    };
    worker.recorder.borrow_mut().finish(end);
}

/// How a worker numbers its users: as in one unsplit run, this worker's
/// `local`-th user is the shard's `local * workers + index`-th.
#[derive(Clone, Copy)]
struct UserNumbering<'a> {
    plan: &'a EnginePlan,
    workers: usize,
    index: usize,
}

impl UserNumbering<'_> {
    /// The user's index in the whole run, from 0.
    fn global(&self, local: u32) -> u64 {
        self.plan
            .shard
            .global(u64::from(local) * self.workers as u64 + self.index as u64)
    }

    /// The user's VU number, from 1.
    fn vu_number(&self, local: u32) -> u32 {
        self.global(local) as u32 + 1
    }
}

/// The virtual users a worker has started, and how many it may start.
struct WorkerUsers<'a> {
    vus: JoinSet<()>,
    numbering: UserNumbering<'a>,
    spawned: u32,
    max_local_vus: u32,
}

impl<'a> WorkerUsers<'a> {
    /// Starts this worker's share of the profile's users, starting at
    /// `origin`: every closed user with its start (or its stages'
    /// windows), or the first few open users that serve the arrivals.
    fn start(worker: &Rc<Worker>, numbering: UserNumbering<'a>, origin: Instant) -> Self {
        let plan = numbering.plan;
        let (workers, index) = (numbering.workers, numbering.index);
        let mut users = WorkerUsers {
            vus: JoinSet::new(),
            numbering,
            spawned: 0,
            max_local_vus: 0,
        };
        let shard_population = plan.shard.share(u64::from(plan.profile.population()));
        users.max_local_vus = match &plan.profile {
            Profile::Closed {
                users: all,
                ramp_up,
                ..
            } => {
                let mine = share(plan.shard.share(*all as u64), workers, index) as u32;
                for local in 0..mine {
                    let start =
                        origin + ramp_up.mul_f64(numbering.global(local) as f64 / *all as f64);
                    users.spawn_closed(worker, local, vec![(start, None)]);
                }
                users.spawned = mine;
                mine
            }
            Profile::Lesson(lesson) => {
                let mine = share(shard_population, workers, index) as u32;
                for local in 0..mine {
                    let start = origin + lesson.arrivals[numbering.global(local) as usize];
                    users.spawn_closed(worker, local, vec![(start, None)]);
                }
                users.spawned = mine;
                mine
            }
            Profile::RampingUsers { stages } => {
                let mine = share(shard_population, workers, index) as u32;
                for local in 0..mine {
                    let windows = stages
                        .windows(numbering.global(local) as u32)
                        .into_iter()
                        .map(|(start, end)| (origin + start, Some(origin + end)))
                        .collect();
                    users.spawn_closed(worker, local, windows);
                }
                users.spawned = mine;
                mine
            }
            Profile::Open { .. } | Profile::RampingRate { .. } => {
                let max_local = share(shard_population, workers, index) as u32;
                let peak_rate = match &plan.profile {
                    Profile::Open { rate, .. } => rate.per_second,
                    Profile::RampingRate { stages, .. } => stages.peak(),
                    _ => 0.0,
                };
                let my_rate = peak_rate / workers as f64 / f64::from(plan.shard.count);
                let initial = ((my_rate * 0.1).ceil() as u32 + 1).min(max_local);
                for _ in 0..initial {
                    users.spawn_open(worker);
                }
                max_local
            }
        };
        users
    }

    /// Starts the closed user numbered `local` in this worker, active in
    /// `windows`.
    fn spawn_closed(
        &mut self,
        worker: &Rc<Worker>,
        local: u32,
        windows: Vec<(Instant, Option<Instant>)>,
    ) {
        self.vus.spawn_local(closed_user(
            worker.clone(),
            self.numbering.vu_number(local),
            windows,
        ));
    }

    /// Starts the next open user.
    fn spawn_open(&mut self, worker: &Rc<Worker>) {
        self.vus.spawn_local(open_user(
            worker.clone(),
            self.numbering.vu_number(self.spawned),
        ));
        self.spawned += 1;
    }

    /// Arrivals are waiting and every VU is busy: adds VUs, up to the
    /// worker's most, or notes that the most is reached.
    fn add_for_overdue_arrivals(&mut self, worker: &Rc<Worker>, now: Instant) {
        if let Some(arrivals) = &worker.arrivals {
            if let Some(due) = arrivals.peek() {
                if due + ARRIVAL_GRACE <= now {
                    let room = self.max_local_vus - self.spawned;
                    let overdue = arrivals.overdue(now - ARRIVAL_GRACE, room.max(1));
                    if room == 0 {
                        worker.recorder.borrow_mut().max_vus_reached = true;
                    }
                    for _ in 0..overdue.min(room) {
                        self.spawn_open(worker);
                    }
                }
            }
        }
    }
}

/// Runs this worker's share of the `before:` users to their end, then
/// waits for the other workers'. Returns when the profile may start, or
/// `None` when the run is stopped meanwhile.
async fn before_phase(
    worker: &Rc<Worker>,
    index: usize,
    workers: usize,
    stop: &mut watch::Receiver<bool>,
    next_tick: &mut Instant,
) -> Option<Instant> {
    let plan = worker.plan.clone();
    let Workload::Journey(journey) = &plan.workload else {
        return Some(plan.run_start);
    };
    let mut vus = JoinSet::new();
    let first_vu = plan.profile.population();
    let mine = plan.shard.share(u64::from(plan.before_users()));
    for local in 0..share(mine, workers, index) as u32 {
        let vu = first_vu
            + plan
                .shard
                .global(u64::from(local) * workers as u64 + index as u64) as u32
            + 1;
        let (worker, journey) = (worker.clone(), journey.clone());
        vus.spawn_local(async move {
            tokio::time::sleep_until(worker.plan.run_start.into()).await;
            let _active = ActiveGuard::new(&worker);
            let mut user = Journey::before_phase(journey, vu, worker.plan.seed);
            while user.iterate(&*worker, None).await {}
        });
    }
    let mut gate = plan.before_done.subscribe();
    let mut counted = false;
    loop {
        if vus.is_empty() && !counted {
            counted = true;
            plan.before_finished(workers);
        }
        if let Some(at) = gate.borrow_and_update().at {
            return Some(at);
        }
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    vus.abort_all();
                    while vus.join_next().await.is_some() {}
                    return None;
                }
            }
            _ = tokio::time::sleep_until((*next_tick).into()) => {
                worker.recorder.borrow_mut().tick(Instant::now(), *next_tick);
                *next_tick += Duration::from_secs(1);
            }
            _ = vus.join_next(), if !vus.is_empty() => {}
            _ = gate.changed(), if counted => {}
        }
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Decrements the worker's active VU count when the VU ends or is aborted.
struct ActiveGuard(Rc<Worker>);

impl ActiveGuard {
    fn new(worker: &Rc<Worker>) -> ActiveGuard {
        worker.recorder.borrow_mut().vu_started();
        ActiveGuard(worker.clone())
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        if let Ok(mut recorder) = self.0.recorder.try_borrow_mut() {
            recorder.vu_stopped();
        }
    }
}

impl JourneyHost for Worker {
    fn record(&self, sample: &Sample) {
        self.recorder.borrow_mut().record(sample);
    }

    fn record_check(&self, check: u16, passed: bool) {
        self.recorder.borrow_mut().record_check(check, passed);
    }

    fn record_think(&self, label: u16, think: Duration) {
        self.recorder.borrow_mut().record_think(label, think);
    }

    async fn pace(&self) -> Option<Instant> {
        let pacer = self.pacer.as_ref()?;
        let now = Instant::now();
        let slot = pacer.claim(now);
        if slot > now {
            self.wait_for_schedule(slot).await;
        }
        Some(slot)
    }

    #[inline]
    fn observe(&self, label: u16) -> Observe {
        match &self.plan.failures {
            Some(keeper) if keeper.wants(label) => Observe::Failures,
            _ => Observe::Nothing,
        }
    }

    fn halted(&self) -> bool {
        self.past_cutoff()
    }

    fn skips_think(&self) -> bool {
        self.plan.non_stop
    }

    fn exchange(&self, view: &StepView<'_>) {
        if let (Some(keeper), Some(error)) = (&self.plan.failures, view.sample.error) {
            keeper.keep(&Capture {
                label: view.sample.label,
                vu: view.sample.vu,
                iteration: view.iteration,
                end: view.sample.end,
                error: Some(error),
                check: view.check,
                detail: view.sample.detail,
                status: view.sample.status,
                request: view.request,
                head: view.head,
                body: view.body,
                body_truncated: view.body_truncated,
                body_encoding: view.body_encoding,
            });
        }
    }
}

/// A closed-model VU of [`EnginePlan::new_students`]: each iteration a
/// new student numbered `vu`, then `vu` plus the level's users, and so on.
async fn new_students(worker: &Rc<Worker>, vu: u32, in_window: &impl Fn() -> bool) {
    let plan = worker.plan.clone();
    let stride = match plan.profile {
        Profile::Closed { users, .. } => users.max(1),
        _ => 1,
    };
    let mut student = vu;
    while in_window() {
        let went_on = match &plan.workload {
            Workload::Journey(journey) => {
                let mut journey = Journey::new(journey.clone(), student, plan.seed);
                journey.iterate(&**worker, None).await
            }
            Workload::Mix(mix) => {
                // Drawn by weight, as an open model's arrivals are.
                let entry = &mix.journeys[mix.arrival_journey(u64::from(student))];
                let mut journey = Journey::new(entry.plan.clone(), student, plan.seed);
                journey.iterate(&Offset::new(&**worker, entry), None).await
            }
            Workload::Url { .. } | Workload::Replay { .. } => return,
        };
        if !went_on {
            return;
        }
        student = student.saturating_add(stride);
    }
}

/// A closed-model VU, active during each of its `[start, end)` windows (one
/// open-ended window unless the profile has stages). An iteration under way
/// at the end of a window is finished.
async fn closed_user(worker: Rc<Worker>, vu: u32, windows: Vec<(Instant, Option<Instant>)>) {
    let plan = worker.plan.clone();
    let mut journey = match &plan.workload {
        Workload::Journey(journey) => Some(Journey::new(journey.clone(), vu, plan.seed)),
        Workload::Mix(mix) => Some(Journey::new(mix.for_user(vu).plan.clone(), vu, plan.seed)),
        Workload::Url { .. } | Workload::Replay { .. } => None,
    };
    let mut client = match &plan.workload {
        Workload::Url { connector, .. } => Some(HttpClient::new(connector.clone(), plan.timeout)),
        Workload::Journey(_) | Workload::Mix(_) | Workload::Replay { .. } => None,
    };
    let mut rng = Rng::new(plan.seed, vu as u64);
    for (start, end) in windows {
        if matches!(plan.profile, Profile::Lesson(_)) {
            worker.wait_for_schedule(start).await;
        } else {
            tokio::time::sleep_until(start.into()).await;
        }
        worker.recorder.borrow_mut().arrived(start);
        let _active = ActiveGuard::new(&worker);
        let in_window = || end.is_none_or(|end| Instant::now() < end) && !worker.past_cutoff();
        if plan.new_students {
            new_students(&worker, vu, &in_window).await;
            continue;
        }
        if let (Some(journey), Workload::Mix(mix)) = (&mut journey, &plan.workload) {
            let host = Offset::new(&*worker, mix.for_user(vu));
            while in_window() && journey.iterate(&host, None).await {}
            continue;
        }
        if let Some(journey) = &mut journey {
            while in_window() && journey.iterate(&*worker, None).await {}
            continue;
        }
        let (Workload::Url { request, .. }, Some(client)) = (&plan.workload, &mut client) else {
            return;
        };
        let mut kept = KeptResponse::default();
        while in_window() && !url_iteration(&worker, client, request, vu, &mut rng, &mut kept).await
        {
        }
    }
}

/// One URL-mode request of a closed VU, with pacing and think time;
/// returns true when the request budget (-n) is spent.
async fn url_iteration(
    worker: &Rc<Worker>,
    client: &mut HttpClient,
    request: &PreparedRequest,
    vu: u32,
    rng: &mut Rng,
    kept: &mut KeptResponse,
) -> bool {
    if !worker.take_budget() {
        return true;
    }
    // Under a throughput cap the request's intended start is its slot.
    let slot = worker.pace().await;
    let actual = Instant::now();
    exchange(
        worker,
        client,
        request,
        vu,
        slot.unwrap_or(actual),
        actual,
        kept,
    )
    .await;
    let pause = if worker.plan.non_stop {
        Duration::ZERO
    } else {
        worker.plan.think.pick(rng)
    };
    if !pause.is_zero() {
        worker.record_think(request.label, pause);
        tokio::time::sleep(pause).await;
    }
    false
}

async fn open_user(worker: Rc<Worker>, vu: u32) {
    let plan = worker.plan.clone();
    if let Some(session) = plan.profile.session() {
        if !matches!(
            plan.workload,
            Workload::Url { .. } | Workload::Replay { .. }
        ) {
            return session_users(&worker, session).await;
        }
    }
    let _active = ActiveGuard::new(&worker);
    let (connector, request) = match &plan.workload {
        Workload::Url { connector, request } => (connector.clone(), request.clone()),
        Workload::Replay { connector, plan } => {
            return replay_user(&worker, connector, plan, vu).await;
        }
        Workload::Journey(journey) => {
            let mut journey = Journey::new(journey.clone(), vu, plan.seed);
            while let Some(due) = worker.arrivals.as_ref().and_then(Arrivals::claim) {
                if due > Instant::now() {
                    worker.wait_for_schedule(due).await;
                }
                worker.recorder.borrow_mut().arrived(due);
                if !journey.iterate(&*worker, Some(due)).await {
                    break;
                }
            }
            return;
        }
        Workload::Mix(mix) => return open_mix_user(&worker, mix, vu).await,
    };
    let mut client = HttpClient::new(connector, plan.timeout);
    let mut kept = KeptResponse::default();
    while let Some(due) = worker.arrivals.as_ref().and_then(Arrivals::claim) {
        if due > Instant::now() {
            worker.wait_for_schedule(due).await;
        }
        worker.recorder.borrow_mut().arrived(due);
        exchange(
            &worker,
            &mut client,
            &request,
            vu,
            due,
            Instant::now(),
            &mut kept,
        )
        .await;
    }
}

/// An open-model VU of a replay: each arrival it claims sends the log's
/// request of the arrival's number, its bytes written into the VU's one
/// buffer, and keeps the replayed status and send time beside it.
async fn replay_user(
    worker: &Rc<Worker>,
    connector: &Arc<Connector>,
    replay: &ReplayPlan,
    vu: u32,
) {
    let plan = &worker.plan;
    let mut client = HttpClient::new(connector.clone(), plan.timeout);
    let mut kept = KeptResponse::default();
    let mut request = PreparedRequest {
        label: 0,
        bytes: Vec::with_capacity(512),
        is_head: false,
        keep_alive: true,
    };
    while let Some((n, due)) = worker.arrivals.as_ref().and_then(Arrivals::claim_numbered) {
        if due > Instant::now() {
            worker.wait_for_schedule(due).await;
        }
        worker.recorder.borrow_mut().arrived(due);
        let Ok(n) = usize::try_from(n) else {
            break;
        };
        let (label, is_head) = replay.request_into(n, &mut request.bytes);
        request.label = label;
        request.is_head = is_head;
        let sent = Instant::now();
        let at = sent.saturating_duration_since(plan.run_start);
        // Sent, should the run end before its answer comes.
        replay.sent(n, headroom_traffic::replay::UNANSWERED, at);
        let status = exchange(worker, &mut client, &request, vu, due, sent, &mut kept).await;
        replay.sent(n, status, at);
    }
}

/// An open-model VU of a mix: each arrival it claims runs the journey
/// drawn for the arrival's number. It keeps one user state per journey
/// it has run (made at its first arrival of that journey).
async fn open_mix_user(worker: &Rc<Worker>, mix: &MixPlan, vu: u32) {
    let mut journeys: Vec<Option<Journey>> = mix.journeys.iter().map(|_| None).collect();
    while let Some((n, due)) = worker.arrivals.as_ref().and_then(Arrivals::claim_numbered) {
        if due > Instant::now() {
            worker.wait_for_schedule(due).await;
        }
        worker.recorder.borrow_mut().arrived(due);
        let index = mix.arrival_journey(n);
        let entry = &mix.journeys[index];
        let journey = journeys[index]
            .get_or_insert_with(|| Journey::new(entry.plan.clone(), vu, worker.plan.seed));
        if !journey
            .iterate(&Offset::new(&**worker, entry), Some(due))
            .await
        {
            break;
        }
    }
}

/// An open-model VU of a profile with sessions: each arrival it claims is
/// a new user (fresh cookies, variables and page cache; the data row of its
/// arrival's number) who runs the journey once (of a mix: the journey drawn
/// for the arrival's number; with data visits, once a row of its whole
/// visit), or loops it until its session is over (finishing the iteration
/// under way), and leaves.
async fn session_users(worker: &Rc<Worker>, session: UserSession) {
    let seed = worker.plan.seed;
    while let Some((n, due)) = worker.arrivals.as_ref().and_then(Arrivals::claim_numbered) {
        if due > Instant::now() {
            worker.wait_for_schedule(due).await;
        }
        worker.recorder.borrow_mut().arrived(due);
        let _active = ActiveGuard::new(worker);
        let user = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let leaves = match session {
            UserSession::Once => due,
            UserSession::For(length) => due + length,
        };
        let whole_visit = matches!(session, UserSession::Once);
        let stays =
            |journey: &Journey| Instant::now() < leaves || (whole_visit && journey.in_visit());
        let mut intended = Some(due);
        match &worker.plan.workload {
            Workload::Journey(plan) => {
                let mut journey = Journey::new(plan.clone(), user, seed).from_row(n as usize);
                while journey.iterate(&**worker, intended.take()).await && stays(&journey) {}
            }
            Workload::Mix(mix) => {
                let entry = &mix.journeys[mix.arrival_journey(n)];
                let host = Offset::new(&**worker, entry);
                let mut journey = Journey::new(entry.plan.clone(), user, seed).from_row(n as usize);
                while journey.iterate(&host, intended.take()).await && stays(&journey) {}
            }
            Workload::Url { .. } | Workload::Replay { .. } => return,
        }
    }
}

#[inline]
async fn exchange(
    worker: &Worker,
    client: &mut HttpClient,
    request: &PreparedRequest,
    vu: u32,
    intended_start: Instant,
    actual_start: Instant,
    kept: &mut KeptResponse,
) -> u16 {
    let keeper = worker
        .plan
        .failures
        .as_deref()
        .filter(|k| k.wants(request.label));
    let result = match keeper {
        None => {
            client
                .send(request.outgoing(), actual_start, &mut |_, _| {}, None)
                .await
        }
        // Failures are kept: the head, and the body of a 4xx/5xx up to the limit.
        Some(_) => {
            kept.body.clear();
            kept.head.clear();
            kept.truncated = false;
            let (body, truncated) = (&mut kept.body, &mut kept.truncated);
            client
                .send(
                    request.outgoing(),
                    actual_start,
                    &mut |status, chunk| {
                        if status >= 400 {
                            let room = BODY_LIMIT.saturating_sub(body.len()).min(chunk.len());
                            *truncated |= room < chunk.len();
                            body.extend_from_slice(&chunk[..room]);
                        }
                    },
                    Some(&mut kept.head),
                )
                .await
        }
    };
    let end = Instant::now();
    let sample = Sample {
        label: request.label,
        vu,
        intended_start,
        actual_start,
        connect: result.connect,
        tls: result.tls,
        first_byte: result.first_byte,
        end,
        status: result.status,
        bytes_received: result.bytes_received,
        bytes_sent: result.bytes_sent,
        error: result.error.or_else(|| status_error(result.status)),
        failed_check: None,
        detail: result.detail,
        resent: result.resent,
        server_timing: result.server_timing,
    };
    worker.recorder.borrow_mut().record(&sample);
    if let (Some(keeper), Some(error)) = (keeper, sample.error) {
        keeper.keep(&Capture {
            label: request.label,
            vu,
            iteration: 0,
            end,
            error: Some(error),
            check: None,
            detail: sample.detail,
            status: sample.status,
            request: &request.bytes,
            head: if result.error.is_some() {
                &[]
            } else {
                &kept.head
            },
            body: &kept.body,
            body_truncated: kept.truncated,
            body_encoding: content_encoding(&kept.head),
        });
    }
    sample.status
}

/// A response head's Content-Encoding, other than identity.
fn content_encoding(head: &[u8]) -> Option<&str> {
    std::str::from_utf8(head)
        .ok()?
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-encoding"))
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty() && !value.eq_ignore_ascii_case("identity"))
}

/// A URL-mode VU's buffers for a failed response's head and body, reused
/// from request to request while failures are still kept.
#[derive(Default)]
struct KeptResponse {
    head: Vec<u8>,
    body: Vec<u8>,
    truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up() {
        for total in [0u64, 1, 7, 100, 10_001] {
            for parts in 1..5 {
                let sum: u64 = (0..parts).map(|i| share(total, parts, i)).sum();
                assert_eq!(sum, total);
            }
        }
    }

    #[test]
    fn pacer_spaces_slots_and_never_schedules_in_the_past() {
        let start = Instant::now();
        let pacer = Pacer {
            next: Cell::new(start),
            period: Duration::from_millis(100),
        };
        assert_eq!(pacer.claim(start), start);
        assert_eq!(pacer.claim(start), start + Duration::from_millis(100));
        let late = start + Duration::from_secs(5);
        assert_eq!(pacer.claim(late), late);
        assert_eq!(pacer.claim(late), late + Duration::from_millis(100));
    }

    #[test]
    fn arrivals_follow_the_rate_and_stop_at_the_end() {
        let start = Instant::now();
        let arrivals = Arrivals {
            next: Cell::new(0),
            start,
            schedule: ArrivalSchedule::Constant(Duration::from_millis(10)),
            worker: 0,
            workers: 1,
            shard: Shard::WHOLE,
            end: start + Duration::from_millis(100),
        };
        let times: Vec<_> = std::iter::from_fn(|| arrivals.claim()).collect();
        assert_eq!(times.len(), 10);
        assert_eq!(times[3] - start, Duration::from_millis(30));
    }

    /// 4 shards of 2 workers each send exactly the unsplit run's arrivals:
    /// no gap, no double, each shard a quarter.
    #[test]
    fn sharded_arrivals_interleave_into_the_whole_schedule() {
        let start = Instant::now();
        let end = start + Duration::from_millis(1000);
        for schedule in [
            ArrivalSchedule::Constant(Duration::from_micros(2500)),
            ArrivalSchedule::Ramping(Stages(vec![headroom_journey::stages::Stage {
                duration: Duration::from_secs(1),
                target: 800.0,
            }])),
        ] {
            let whole = Arrivals {
                next: Cell::new(0),
                start,
                schedule: schedule.clone(),
                worker: 0,
                workers: 1,
                shard: Shard::WHOLE,
                end,
            };
            let expected: Vec<_> = std::iter::from_fn(|| whole.claim()).collect();
            let mut merged = Vec::new();
            for index in 0..4 {
                let mut mine = 0;
                for worker in 0..2 {
                    let part = Arrivals {
                        next: Cell::new(0),
                        start,
                        schedule: schedule.clone(),
                        worker,
                        workers: 2,
                        shard: Shard::new(index, 4).unwrap(),
                        end,
                    };
                    let times: Vec<_> = std::iter::from_fn(|| part.claim()).collect();
                    mine += times.len();
                    merged.extend(times);
                }
                assert!(mine.abs_diff(expected.len() / 4) <= 1, "{mine}");
            }
            merged.sort();
            assert_eq!(merged, expected);
        }
    }
}
