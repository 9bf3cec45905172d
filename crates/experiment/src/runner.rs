//! Running a plan: for each (round, cell) in order, whether the cell still
//! needs a repetition; entering a cell (setup, services ready) and leaving
//! it (services stopped, teardown); before/after hooks, the quiet wait and
//! the run itself, as a `headroom run --spec` child process writing an
//! ordinary bundle (`capacity --spec` for a search). Each finished run is appended to `runs.csv` at once, so an
//! interrupted or killed study continues where it stopped.

use crate::cell_run::RunSettings;
use crate::figure::Figure;
use crate::file::{Experiment, WorkloadCommand};
use crate::leftovers::Record;
use crate::plan::{estimate, Plan, PlannedCell};
use crate::process::{
    interrupted, run_child, run_hook, stop_leftovers, tail, ProcessError, RunningService,
};
use crate::quiet;
use crate::store::{self, RunRow, CELLS_DIR, CHILDREN, SERVICE_PIDS};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How a study ended.
#[derive(Debug)]
pub enum Ending {
    /// Every needed run finished.
    Complete,
    /// Ctrl-C or SIGTERM: the finished runs are kept.
    Interrupted,
    /// A hook, service or run failed: the message says which and why.
    Failed(String),
    /// The study's own files could not be read: nothing was run, and its
    /// results must not be rewritten.
    Unreadable(String),
    /// Every run was tried, but these runs' targets were not serving
    /// (`<cell> repetition <N>: <why>`): their repetitions are missing.
    RunsFailed(Vec<String>),
}

pub struct Options {
    pub out: PathBuf,
    /// The `headroom` binary that runs each run.
    pub program: PathBuf,
    /// Draw the one-line progress (stderr is a terminal).
    pub live: bool,
    /// Print a line per finished run (not quiet).
    pub verbose: bool,
}

/// The cell being visited: its services run until the runner leaves it.
struct Visit {
    cell: usize,
    services: Vec<RunningService>,
}

struct Runner<'a> {
    experiment: &'a Experiment,
    plan: &'a Plan,
    options: &'a Options,
    rows: Vec<RunRow>,
    /// The runs and services running, for a resumed runner to stop.
    children: Record,
    visit: Option<Visit>,
    /// The runs of this invocation that failed (target not serving).
    failed_now: Vec<String>,
    /// Runs done in this invocation and their total time, for the ETA.
    timed_runs: u32,
    timed_total: Duration,
}

/// Why the study's directory cannot be used: it holds something else
/// (the user's choice, exit 2) or cannot be made or written (exit 3).
#[derive(Debug)]
pub enum OutputError {
    Usage(String),
    CannotRun(String),
}

/// The study's directory, held by one `headroom experiment` at a time.
pub struct Prepared {
    /// True when the directory held runs of this study already.
    pub resumed: bool,
    /// Holds the directory's lock until dropped.
    _lock: std::fs::File,
}

/// Takes the lock of the study's directory, so a second `headroom
/// experiment` on it stops instead of mixing its runs in.
fn lock(out: &Path) -> Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    let path = out.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !locked {
        return Err(format!(
            "another headroom experiment is running in {}: wait for it, or choose another --out",
            out.display()
        ));
    }
    Ok(file)
}

/// Refuses an output directory that holds something other than this
/// experiment; creates and locks it and writes the file's copy and the plan.
pub fn prepare_output(
    experiment: &Experiment,
    plan: &Plan,
    out: &Path,
) -> Result<Prepared, OutputError> {
    let copy = out.join(store::FILE_COPY);
    let resumed = copy.exists();
    let compared = measured_by(experiment, plan);
    let plan_json = plan_json(experiment, plan, compared.clone());
    let stored_plan = if resumed {
        std::fs::read_to_string(out.join(store::PLAN))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    } else {
        None
    };
    if let Some(stored) = &stored_plan {
        let changed = plan_changes(stored, &plan_json);
        if !changed.is_empty() {
            return Err(OutputError::Usage(format!(
                "{} changed since the study in {} started: {}. Its runs followed the plan in {}, which is kept as it is. Revert the edit to continue this study, or give another --out to start a new study with the new settings",
                experiment.file.display(),
                out.display(),
                changed.join("; "),
                out.join(store::PLAN).display()
            )));
        }
    }
    if resumed {
        // Hooks, services, quiet waits and comments may change (to fix a
        // failing hook); what the runs ran and measured may not, nor
        // what decides which runs are made (checked against plan.json).
        let stored = std::fs::read_to_string(out.join(store::PLAN))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|v| v["measured_by"].clone());
        if let Some(what) = stored
            .as_ref()
            .and_then(|stored| difference(stored, &compared))
        {
            return Err(OutputError::Usage(format!(
                "{} holds a study whose {what} differ from {}'s: its runs would not compare with new ones. Use another --out, or remove {} to start over",
                out.display(),
                experiment.file.display(),
                out.display()
            )));
        }
    } else if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(OutputError::Usage(format!(
            "{} exists and is not an experiment's directory: choose another --out",
            out.display()
        )));
    }
    std::fs::create_dir_all(out.join(CELLS_DIR))
        .map_err(|e| OutputError::CannotRun(format!("cannot create {}: {e}", out.display())))?;
    let lock = lock(out).map_err(OutputError::CannotRun)?;
    // Held by this runner now: whatever a killed one left is stopped
    // before the prepare command, a hook or a run starts.
    stop_left_behind(out);
    let write = |name: &str, bytes: &[u8]| {
        store::write_atomic(&out.join(name), bytes).map_err(|e| {
            OutputError::CannotRun(format!("cannot write {}: {e}", out.join(name).display()))
        })
    };
    // Hooks, services and quiet waits may have been edited: the copy is
    // the file as last run. The plan is the one the runs follow, written
    // once.
    write(store::FILE_COPY, experiment.text.as_bytes())?;
    if stored_plan.is_none() {
        write(
            store::PLAN,
            serde_json::to_string_pretty(&plan_json)
                .unwrap_or_default()
                .as_bytes(),
        )?;
    }
    Ok(Prepared {
        resumed,
        _lock: lock,
    })
}

/// `plan.json`: the cells with their levels and commands, the settings
/// that decide the runs (seed, order, repetitions) and the run order.
fn plan_json(
    experiment: &Experiment,
    plan: &Plan,
    compared: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "schema_version": 1,
        "name": experiment.name,
        "seed": experiment.seed,
        "repetitions": {"min": experiment.repetitions.min, "max": experiment.repetitions.max,
            "until_cov": experiment.repetitions.until_cov, "on": experiment.repetitions_on.name()},
        "cells": plan.cells.iter().map(|c| serde_json::json!({
            "label": c.label,
            "dir": format!("{CELLS_DIR}/{}", c.dir_name),
            "levels": c.cell.iter().map(|(f, l)| (f.clone(), serde_json::json!(l))).collect::<serde_json::Map<_, _>>(),
            "run": c.argv,
            "setup": c.setup, "teardown": c.teardown,
            "before_each": c.before_each, "after_each": c.after_each,
            "services": c.services.iter().map(|s| serde_json::json!({"name": s.name, "command": s.command})).collect::<Vec<_>>(),
            "faults": c.fault_args(),
        })).collect::<Vec<_>>(),
        "order": plan.order.iter().map(|(r, c)| [*r + 1, *c as u32 + 1]).collect::<Vec<_>>(),
        "measured_by": compared,
    })
}

/// The settings of `plan.json` that decide which runs a study makes and
/// in which order, that differ between the stored plan and `now`, each
/// as `seed: 7 → 8`.
fn plan_changes(stored: &serde_json::Value, now: &serde_json::Value) -> Vec<String> {
    let levels = |plan: &serde_json::Value| -> Vec<serde_json::Value> {
        plan["cells"]
            .as_array()
            .map(|cells| cells.iter().map(|c| c["levels"].clone()).collect())
            .unwrap_or_default()
    };
    let cells = |plan: &serde_json::Value| -> String {
        plan["cells"]
            .as_array()
            .map(|cells| {
                cells
                    .iter()
                    .filter_map(|c| c["label"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let mut changed = Vec::new();
    if stored["seed"] != now["seed"] {
        changed.push(format!("seed: {} → {}", stored["seed"], now["seed"]));
    }
    if levels(stored) != levels(now) {
        changed.push(format!(
            "factors or levels: the cells were {}, now {}",
            cells(stored),
            cells(now)
        ));
    }
    let repetitions = |plan: &serde_json::Value| {
        let r = &plan["repetitions"];
        let mut text = format!("min {}, max {}", r["min"], r["max"]);
        if !r["until_cov"].is_null() {
            text.push_str(&format!(", until_cov {}, on {}", r["until_cov"], r["on"]));
        }
        text
    };
    if stored["repetitions"] != now["repetitions"] {
        changed.push(format!(
            "repetitions: {} → {}",
            repetitions(stored),
            repetitions(now)
        ));
    }
    if changed.is_empty() && stored["order"] != now["order"] {
        changed.push("the order of the runs (order:)".into());
    }
    changed
}

/// Stops what an earlier runner of the study, killed, left running (its
/// runs, services and hooks), saying what, before anything else runs.
fn stop_left_behind(out: &Path) {
    stop_leftovers(&out.join(SERVICE_PIDS));
    for left in Record::new(out.join(CHILDREN)).stop_all() {
        let by = "an earlier, killed headroom experiment left running";
        match left.kind.as_str() {
            "run" => eprintln!(
                "headroom: stopped the run {} (pid {}) that {by}; its repetition is run again",
                left.what, left.pid
            ),
            "hook" => eprintln!(
                "headroom: stopped {} (pid {}), a hook {by}",
                left.what, left.pid
            ),
            kind => eprintln!(
                "headroom: stopped the {kind} {} (pid {}) that {by}",
                left.what, left.pid
            ),
        }
    }
}

/// What the runs ran and measured: the cells, their command lines and
/// faults, the figures and the label. A resumed study must match it.
fn measured_by(experiment: &Experiment, plan: &Plan) -> serde_json::Value {
    serde_json::json!({
        "cells": plan.cells.iter().map(|c| c.label.clone()).collect::<Vec<_>>(),
        "commands": plan.cells.iter().map(|c| serde_json::json!({"run": c.argv, "faults": c.fault_args()})).collect::<Vec<_>>(),
        "figures": experiment.figures.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "label": experiment.label,
    })
}

/// Which part of `measured_by` differs, in words.
fn difference(stored: &serde_json::Value, now: &serde_json::Value) -> Option<String> {
    let parts = [
        ("cells", "cells"),
        ("commands", "runs' command lines or faults"),
        ("figures", "figures"),
        ("label", "measured label"),
    ];
    let differing: Vec<&str> = parts
        .iter()
        .filter(|(key, _)| stored[*key] != now[*key])
        .map(|(_, words)| *words)
        .collect();
    (!differing.is_empty()).then(|| differing.join(" and "))
}

/// A digest of each cell's scenario file, compared with the one the
/// study's earlier runs used (kept in `inputs.json`): a journey edited
/// between runs would mix two workloads in one cell. Written when the
/// study has no finished run yet.
pub fn check_inputs(plan: &Plan, out: &Path, has_runs: bool) -> Result<(), String> {
    let digest = |path: &str| {
        std::fs::read(path).ok().map(|bytes| {
            // FNV-1a, 64 bits: stable across versions and machines.
            let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            format!("{hash:016x}")
        })
    };
    let now: serde_json::Map<String, serde_json::Value> = plan
        .cells
        .iter()
        .filter_map(|c| c.scenario.as_ref())
        .map(|s| (s.clone(), serde_json::json!(digest(s))))
        .collect();
    let path = out.join("inputs.json");
    let stored = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    if let (true, Some(stored)) = (has_runs, stored) {
        for (file, hash) in &now {
            if stored["scenarios"].get(file).is_some_and(|h| h != hash) {
                return Err(format!(
                    "the scenario {file} changed since this study's first runs: new runs would not compare with them. Restore it, use another --out, or remove {} to start over",
                    out.display()
                ));
            }
        }
        return Ok(());
    }
    store::write_atomic(
        &path,
        serde_json::to_string_pretty(&serde_json::json!({"scenarios": now}))
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs what is left of the plan; returns the finished runs (earlier ones
/// included) and how it ended.
pub fn run(experiment: &Experiment, plan: &Plan, options: &Options) -> (Vec<RunRow>, Ending) {
    let factors: Vec<String> = experiment.factors.iter().map(|f| f.name.clone()).collect();
    let rows = match store::read_runs(&options.out, &factors, &experiment.figures) {
        Ok(rows) => rows,
        Err(e) => return (Vec::new(), Ending::Unreadable(e)),
    };
    let children = Record::new(options.out.join(CHILDREN));
    let mut runner = Runner {
        experiment,
        plan,
        options,
        rows,
        children,
        visit: None,
        failed_now: Vec::new(),
        timed_runs: 0,
        timed_total: Duration::ZERO,
    };
    let ending = runner.all();
    let left = runner.leave();
    if options.live {
        eprint!("\r\x1b[2K");
    }
    let ending = match (ending, left) {
        (Ending::Complete, Err(e)) => Ending::Failed(e.to_string()),
        (Ending::Complete, Ok(())) if !runner.failed_now.is_empty() => {
            Ending::RunsFailed(runner.failed_now.clone())
        }
        (ending, _) => ending,
    };
    (runner.rows, ending)
}

impl Runner<'_> {
    fn figure_index(&self) -> usize {
        let on = self.experiment.repetitions_on;
        self.experiment
            .figures
            .iter()
            .position(|f| *f == on)
            .unwrap_or(0)
    }

    /// The cell's repetitions: its runs that did not fail.
    fn done(&self, cell: usize) -> Vec<&RunRow> {
        self.rows
            .iter()
            .filter(|r| r.cell == cell && !r.failed())
            .collect()
    }

    /// Whether the cell needs the repetition of this round.
    fn needed(&self, round: u32, cell: usize) -> bool {
        let done = self.done(cell);
        if done.iter().any(|r| r.round == round + 1) {
            return false;
        }
        let k = self.figure_index();
        let values: Vec<f64> = done
            .iter()
            .filter(|r| r.round <= round)
            .map(|r| r.values[k].unwrap_or(f64::NAN))
            .collect();
        self.experiment.repetitions.more_needed(&values)
    }

    fn all(&mut self) -> Ending {
        for (position, &(round, cell)) in self.plan.order.iter().enumerate() {
            if interrupted() {
                return Ending::Interrupted;
            }
            if !self.needed(round, cell) {
                continue;
            }
            let same_visit = self.visit.as_ref().map(|v| v.cell) == Some(cell)
                && !self.experiment.fresh_each_run;
            if !same_visit {
                if let Err(e) = self.leave() {
                    return Ending::Failed(e.to_string());
                }
                if let Err(e) = self.enter(cell) {
                    if interrupted() {
                        return Ending::Interrupted;
                    }
                    return Ending::Failed(e.to_string());
                }
            }
            match self.one(position, round, cell) {
                Ok(()) => {}
                Err(ending) => return ending,
            }
        }
        Ending::Complete
    }

    fn cell_dir(&self, cell: usize) -> PathBuf {
        self.options
            .out
            .join(CELLS_DIR)
            .join(&self.plan.cells[cell].dir_name)
    }

    fn env(
        &self,
        cell: &PlannedCell,
        run_dir: Option<&Path>,
        repetition: Option<u32>,
    ) -> Vec<(String, String)> {
        let mut env = base_env(self.options);
        env.push(("HEADROOM_CELL".to_string(), cell.label.clone()));
        for (factor, level) in &cell.cell {
            env.push((
                format!("HEADROOM_FACTOR_{}", factor.to_ascii_uppercase()),
                level.clone(),
            ));
        }
        if let Some(dir) = run_dir {
            env.push(("HEADROOM_RUN_DIR".to_string(), dir.display().to_string()));
        }
        if let Some(r) = repetition {
            env.push(("HEADROOM_REPETITION".to_string(), r.to_string()));
        }
        env
    }

    fn status(&self, text: &str) {
        if self.options.live {
            eprint!("\r\x1b[2K{text}");
            let _ = std::io::stderr().flush();
        }
    }

    /// Setup, then the cell's services, each ready before the next starts.
    fn enter(&mut self, cell: usize) -> Result<(), ProcessError> {
        let planned = &self.plan.cells[cell];
        let dir = self.cell_dir(cell);
        let env = self.env(planned, None, None);
        if let Some(setup) = &planned.setup {
            self.status(&format!("{}: setup", planned.label));
            run_hook(
                &format!("the setup of cell {}", planned.label),
                setup,
                &dir.join("setup.log"),
                &env,
                self.experiment.hooks.timeout,
                &self.children,
            )?;
        }
        let mut visit = Visit {
            cell,
            services: Vec::new(),
        };
        for service in &planned.services {
            if let Some(ready) = service
                .ready
                .as_ref()
                .filter(|r| crate::process::already_answers(r))
            {
                let at = match ready {
                    crate::plan::PlannedReady::Tcp(a) => a.clone(),
                    crate::plan::PlannedReady::Http(u) => u.clone(),
                };
                self.visit = Some(visit);
                return Err(ProcessError {
                    what: format!(
                        "cell {}: something already answers at {at} before service '{}' started: stop it (an earlier study's service?) or give the service another port; else the study would measure that",
                        planned.label, service.name
                    ),
                    log: dir.join(format!("service-{}.log", service.name)),
                });
            }
            self.status(&format!("{}: starting {}", planned.label, service.name));
            let started = RunningService::start(
                &service.name,
                &service.command,
                &dir.join(format!("service-{}.log", service.name)),
                &env,
            );
            let mut running = match started {
                Ok(s) => s,
                Err(e) => {
                    self.visit = Some(visit);
                    return Err(e);
                }
            };
            self.children.add(
                running.group(),
                "service",
                &format!("'{}' of cell {}", service.name, planned.label),
            );
            let ready = running.wait_ready(service.ready.as_ref(), service.timeout);
            visit.services.push(running);
            if let Err(mut e) = ready {
                e.what = format!("cell {}: {}", planned.label, e.what);
                self.visit = Some(visit);
                return Err(e);
            }
        }
        self.visit = Some(visit);
        Ok(())
    }

    /// Stops the visited cell's services (last started first), then its teardown.
    fn leave(&mut self) -> Result<(), ProcessError> {
        let Some(mut visit) = self.visit.take() else {
            return Ok(());
        };
        let planned = &self.plan.cells[visit.cell];
        while let Some(service) = visit.services.pop() {
            self.status(&format!("{}: stopping {}", planned.label, service.name));
            let group = service.group();
            service.stop();
            self.children.remove(group);
        }
        if let Some(teardown) = &planned.teardown {
            self.status(&format!("{}: teardown", planned.label));
            run_hook(
                &format!("the teardown of cell {}", planned.label),
                teardown,
                &self.cell_dir(visit.cell).join("teardown.log"),
                &self.env(planned, None, None),
                self.experiment.hooks.timeout,
                &self.children,
            )?;
        }
        Ok(())
    }

    fn eta(&self, position: usize) -> String {
        let (_, max_runs, per_run) = estimate(self.experiment);
        let average = if self.timed_runs > 0 {
            Some(self.timed_total / self.timed_runs)
        } else {
            per_run
        };
        let left = self.plan.order.len().saturating_sub(position).min(max_runs);
        match average {
            Some(each) => format!(
                "study ETA ≤{}",
                humantime::format_duration(Duration::from_secs((each * left as u32).as_secs()))
            ),
            None => "study ETA unknown".into(),
        }
    }

    /// One run of `cell` for `round`: hooks, quiet wait, the run, its row.
    fn one(&mut self, position: usize, round: u32, cell: usize) -> Result<(), Ending> {
        let plan = self.plan;
        let planned = &plan.cells[cell];
        let repetition = self.done(cell).len() as u32 + 1;
        let run_name = format!("r{repetition}");
        let dir = self.fresh_run_dir(cell, &run_name, repetition)?;
        self.check_services(planned, repetition)?;
        let at = Repetition {
            env: self.env(planned, Some(&dir), Some(repetition)),
            head: format!(
                "[{}/{}] {} repetition {repetition}",
                position + 1,
                self.plan.order.len(),
                planned.label
            ),
            relative: PathBuf::from(CELLS_DIR)
                .join(&planned.dir_name)
                .join(&run_name),
            planned,
            repetition,
            dir,
        };
        if let Some(before) = &planned.before_each {
            self.each_hook(&at, "before_each", before)?;
        }
        let quiet_note = match &self.experiment.quiet {
            Some(q) => {
                self.status(&format!("{}: waiting for a quiet machine", at.head));
                quiet::wait(q, interrupted).describe()
            }
            None => String::new(),
        };
        if interrupted() {
            return Err(Ending::Interrupted);
        }
        let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let (code, took) = self.the_run(&at, position, self.experiment.seed + u64::from(round))?;
        let measured = measure(self.experiment, &at.dir).map_err(|e| {
            Ending::Failed(format!(
                "the run of cell {} (repetition {repetition}) wrote no usable result: {e}",
                planned.label
            ))
        })?;
        if let Some(after) = &planned.after_each {
            self.each_hook(&at, "after_each", after)?;
        }
        let bundle = self.bundle_of(&at, measured.failure.is_some())?;
        let row = RunRow {
            cell,
            label: planned.label.clone(),
            repetition,
            round: round + 1,
            bundle,
            started_at,
            took_s: took.as_secs_f64(),
            exit_code: code.unwrap_or(-1),
            quiet: quiet_note,
            environment: measured.environment,
            values: measured.values,
            at_least: measured.at_least,
            failure: measured.failure,
        };
        self.record(&at, row, measured.error_rate, took)
    }

    /// The run's directory, empty: a run that did not finish before is
    /// set aside, not mixed in.
    fn fresh_run_dir(&self, cell: usize, name: &str, repetition: u32) -> Result<PathBuf, Ending> {
        let run_dir = self.cell_dir(cell).join(name);
        if run_dir.exists() {
            if self.options.live {
                eprint!("\r\x1b[2K");
            }
            match set_aside(&run_dir, "unfinished") {
                Ok(aside) => eprintln!(
                    "headroom: {} repetition {repetition} did not finish before: its partial bundle is set aside as {} and the repetition is run again",
                    self.plan.cells[cell].label,
                    self.cell_dir(cell).join(aside).display()
                ),
                Err(e) => {
                    return Err(Ending::Failed(format!(
                        "cannot set aside the unfinished run {}: {e}",
                        run_dir.display()
                    )))
                }
            }
        }
        std::fs::create_dir_all(&run_dir)
            .map_err(|e| Ending::Failed(format!("cannot create {}: {e}", run_dir.display())))?;
        Ok(run_dir)
    }

    /// A service of the cell that ended between runs stops the study.
    fn check_services(&mut self, planned: &PlannedCell, repetition: u32) -> Result<(), Ending> {
        let Some(visit) = &mut self.visit else {
            return Ok(());
        };
        for service in &mut visit.services {
            if let Some(how) = service.ended() {
                return Err(Ending::Failed(
                    ProcessError {
                        what: format!(
                            "service '{}' of cell {} ended ({how}) before repetition {repetition}",
                            service.name, planned.label
                        ),
                        log: service.log.clone(),
                    }
                    .to_string(),
                ));
            }
        }
        Ok(())
    }

    /// `before_each` or `after_each` (`which`) of the repetition.
    fn each_hook(&self, at: &Repetition, which: &str, command: &str) -> Result<(), Ending> {
        self.status(&format!("{}: {which}", at.head));
        run_hook(
            &format!(
                "{which} of cell {} (repetition {})",
                at.planned.label, at.repetition
            ),
            command,
            &at.dir.join(format!("{which}.log")),
            &at.env,
            self.experiment.hooks.timeout,
            &self.children,
        )
        .map_err(|e| {
            if interrupted() {
                Ending::Interrupted
            } else {
                Ending::Failed(e.to_string())
            }
        })
    }

    /// The run itself, a child process, with the live line ticking while
    /// it runs; its exit code (0, or 1 when the user's own --fail-if held)
    /// and how long it took.
    fn the_run(
        &self,
        at: &Repetition,
        position: usize,
        seed: u64,
    ) -> Result<(Option<i32>, Duration), Ending> {
        // Messages show the run as the equivalent command line.
        let command = crate::plan::shell_words(&at.planned.run_argv(&at.dir, seed));
        let argv = child_args(at.planned, &at.dir, seed).map_err(Ending::Failed)?;
        let began = Instant::now();
        let log = at.dir.join("run.log");
        // The child runs on its own thread so the live line can tick.
        let program = self.options.program.clone();
        let child_env = at.env.clone();
        let child_log = log.clone();
        let record = self.children.clone();
        let what = at.relative.display().to_string();
        // This thread spawns the child and lives until it ends, as
        // PR_SET_PDEATHSIG needs (it follows the spawning thread).
        let child = std::thread::spawn(move || {
            run_child(&program, &argv, &child_log, &child_env, &record, &what)
        });
        while !child.is_finished() {
            self.tick(at, position, began.elapsed());
            std::thread::sleep(Duration::from_millis(200));
        }
        let status = match child.join() {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                return Err(Ending::Failed(format!(
                    "cannot start {}: {e}",
                    self.options.program.display()
                )))
            }
            Err(_) => return Err(Ending::Failed("the run's thread failed".into())),
        };
        let took = began.elapsed();
        let code = status.code();
        if interrupted() {
            return Err(Ending::Interrupted);
        }
        // 0: done; 1: the user's own --fail-if held (the run is still measured).
        if !matches!(code, Some(0 | 1)) {
            return Err(Ending::Failed(format!(
                "the run of cell {} (repetition {}) failed ({}): `{} {}`; its output:\n{}",
                at.planned.label,
                at.repetition,
                match code {
                    Some(130) => "stopped by a signal from outside the study, exit code 130".into(),
                    _ => crate::process::describe_status(status),
                },
                self.options.program.display(),
                command,
                tail(&log).trim_end()
            )));
        }
        Ok((code, took))
    }

    /// The live line while a run runs.
    fn tick(&self, at: &Repetition, position: usize, elapsed: Duration) {
        let run_eta = self
            .experiment
            .workload
            .planned
            .map(|p| {
                format!(
                    ", run {}s of {}s",
                    elapsed.as_secs(),
                    p.as_secs().max(elapsed.as_secs())
                )
            })
            .unwrap_or_else(|| format!(", run {}s", elapsed.as_secs()));
        self.status(&format!("{}{run_eta}; {}", at.head, self.eta(position)));
    }

    /// The run's bundle, relative to the study: a run whose target was not
    /// serving is set aside, named, and does not count; its repetition is
    /// run again when the study is.
    fn bundle_of(&self, at: &Repetition, failed: bool) -> Result<PathBuf, Ending> {
        if !failed {
            return Ok(at.relative.clone());
        }
        match set_aside(&at.dir, "failed") {
            Ok(aside) => Ok(at.relative.with_file_name(aside)),
            Err(e) => Err(Ending::Failed(format!(
                "cannot set aside the failed run {}: {e}",
                at.dir.display()
            ))),
        }
    }

    /// Appends the run's row to `runs.csv` and says what it measured (or
    /// why it failed).
    fn record(
        &mut self,
        at: &Repetition,
        row: RunRow,
        error_rate: Option<f64>,
        took: Duration,
    ) -> Result<(), Ending> {
        let (label, repetition) = (&at.planned.label, at.repetition);
        if let Err(e) = store::append_run(
            &self.options.out,
            &row,
            &at.planned.cell,
            &self.experiment.figures,
        ) {
            return Err(Ending::Failed(format!(
                "cannot record the run in {}: {e}",
                self.options.out.join(store::RUNS).display()
            )));
        }
        if let Some(why) = &row.failure {
            if self.options.live {
                eprint!("\r\x1b[2K");
            }
            eprintln!(
                "headroom: the run of cell {label} (repetition {repetition}) failed: {why}. It is kept out of the statistics (its bundle: {})",
                self.options.out.join(&row.bundle).display()
            );
            self.failed_now
                .push(format!("{label} repetition {repetition}: {why}"));
            self.rows.push(row);
            return Ok(());
        }
        if self.options.verbose {
            self.say_figures(at, &row, took);
        }
        if let Some(rate) = error_rate.filter(|r| *r > 0.5) {
            eprintln!(
                "headroom: warning: {:.1}% of the requests of {label} repetition {repetition} failed, though the target answered: the run counts like any other (see {})",
                rate * 100.0,
                at.dir.join("run.log").display()
            );
        }
        self.rows.push(row);
        self.timed_runs += 1;
        self.timed_total += took;
        Ok(())
    }

    /// `[3/12] store=db repetition 2: mean 12.3, errors 0.0 (8.1s)`.
    fn say_figures(&self, at: &Repetition, row: &RunRow, took: Duration) {
        let shown: Vec<String> = self
            .experiment
            .figures
            .iter()
            .zip(&row.values)
            .map(|(f, v)| match v {
                Some(v) => format!("{} {:.*}", f.name(), f.decimals(), f.shown(*v)),
                None => format!("{} —", f.name()),
            })
            .collect();
        if self.options.live {
            eprint!("\r\x1b[2K");
        }
        eprintln!(
            "{}: {} ({:.1}s)",
            at.head,
            shown.join(", "),
            took.as_secs_f64()
        );
    }
}

/// One repetition of a cell while it runs.
struct Repetition<'p> {
    planned: &'p PlannedCell,
    repetition: u32,
    /// Its directory, and the same under the study's.
    dir: PathBuf,
    relative: PathBuf,
    env: Vec<(String, String)>,
    /// `[3/12] store=db repetition 2`, the live line's start.
    head: String,
}

/// The arguments of the child making one run of `planned` into `run_dir`:
/// `run --spec` on the run's spec, or `capacity --spec` on the run's
/// capacity spec, written there.
fn child_args(planned: &PlannedCell, run_dir: &Path, seed: u64) -> Result<Vec<String>, String> {
    planned.run.child_args(&RunSettings {
        dir: run_dir,
        seed,
        faults: &planned.faults,
    })
}

/// Renames `dir` (`r2`) to `r2.<why>` (`r2.<why>-2`, ... when taken);
/// returns the new name.
fn set_aside(dir: &Path, why: &str) -> std::io::Result<String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let free = (1..)
        .map(|i| {
            if i == 1 {
                format!("{name}.{why}")
            } else {
                format!("{name}.{why}-{i}")
            }
        })
        .find(|n| !dir.with_file_name(n).exists())
        .unwrap_or_default();
    std::fs::rename(dir, dir.with_file_name(&free))?;
    Ok(free)
}

/// What every command of the study gets: the study's directory, and
/// `headroom` on the PATH as the binary running the study.
pub fn base_env(options: &Options) -> Vec<(String, String)> {
    let mut env = vec![(
        "HEADROOM_EXPERIMENT_DIR".to_string(),
        crate::cell_run::absolute(&options.out)
            .display()
            .to_string(),
    )];
    if let Some(dir) = options.program.parent() {
        let path = std::env::var("PATH").unwrap_or_default();
        env.push(("PATH".to_string(), format!("{}:{path}", dir.display())));
    }
    env
}

/// Runs the study's `prepare` command once (its output in `prepare.log`).
pub fn prepare(plan: &Plan, options: &Options, timeout: Duration) -> Result<(), String> {
    let Some(command) = &plan.prepare else {
        return Ok(());
    };
    run_hook(
        "the prepare command",
        command,
        &options.out.join("prepare.log"),
        &base_env(options),
        timeout,
        &Record::new(options.out.join(CHILDREN)),
    )
    .map_err(|e| e.to_string())
}

/// The experiment's figures of a finished run, and its environment.
/// What a finished run measured.
pub struct Measured {
    /// One per figure of the experiment.
    pub values: Vec<Option<f64>>,
    /// One per figure: the value is a lower bound (a capacity search that
    /// still held at its max: "at least N users").
    pub at_least: Vec<bool>,
    pub environment: String,
    /// Failed requests as a share (none for a capacity search).
    pub error_rate: Option<f64>,
    /// Why the run failed: its target was not serving ([`crate::serving`]).
    pub failure: Option<String>,
}

pub fn measure(experiment: &Experiment, dir: &Path) -> Result<Measured, String> {
    if experiment.workload.command == WorkloadCommand::Capacity {
        let result = headroom_bundle::capacity::read(dir).map_err(|e| e.to_string())?;
        if result.status != "complete" {
            return Err(format!("the capacity search is {}", result.status));
        }
        // A level's manifest: its bundle is named from the search's
        // directory (or as it was written, when that is not it).
        let manifest_of = |l: &headroom_bundle::capacity::Level| {
            let bundle = if l.bundle.is_absolute() {
                l.bundle.clone()
            } else {
                dir.join(&l.bundle)
            };
            headroom_bundle::manifest::read_manifest(&bundle)
                .or_else(|_| headroom_bundle::manifest::read_manifest(&l.bundle))
                .ok()
        };
        let environment = result
            .levels
            .first()
            .and_then(manifest_of)
            .map(|m| environment(&m))
            .unwrap_or_default();
        // The other figures are the capacity level's, over its measured
        // seconds (its bundle's summary).
        let at_capacity = result
            .capacity
            .users
            .and_then(|users| result.levels.iter().rfind(|l| l.users == users && l.good))
            .and_then(manifest_of)
            .and_then(|m| m.summary);
        let values = experiment
            .figures
            .iter()
            .map(|f| match f {
                Figure::Users => result.capacity.users.map(f64::from),
                other => other.of_run(at_capacity.as_ref()?, experiment.label.as_deref()),
            })
            .collect();
        let at_least = experiment
            .figures
            .iter()
            .map(|f| *f == Figure::Users && result.capacity.at_least)
            .collect();
        return Ok(Measured {
            values,
            at_least,
            environment,
            error_rate: None,
            failure: None,
        });
    }
    let manifest = headroom_bundle::manifest::read_manifest(dir).map_err(|e| e.to_string())?;
    if manifest.status != headroom_bundle::summary::RunStatus::Complete {
        return Err(format!("the run is {}", manifest.status.name()));
    }
    let Some(summary) = &manifest.summary else {
        return Err("its manifest has no summary".into());
    };
    if let Some(label) = &experiment.label {
        if !summary.labels.contains_key(label) {
            return Err(format!(
                "it has no label '{label}' (measure.label); its labels: {}",
                summary
                    .labels
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let faults = if experiment.faults.is_empty() {
        None
    } else {
        let lost_check = experiment.faults[0].lost_check.as_deref();
        crate::fault_figures::of_run(dir, &manifest, lost_check)?
    };
    let values = experiment
        .figures
        .iter()
        .map(|f| match (f, &faults) {
            (Figure::FaultErrors, Some(found)) => Some(found.errors_after as f64),
            (Figure::Recovery, Some(found)) => found.recovered_after_s.map(|s| s as f64),
            (Figure::UsersLost, Some(found)) => found.users_lost.map(|n| n as f64),
            _ => f.of_run(summary, experiment.label.as_deref()),
        })
        .collect();
    Ok(Measured {
        values,
        at_least: vec![false; experiment.figures.len()],
        environment: environment(&manifest),
        error_rate: Some(summary.total.error_rate),
        failure: crate::serving::not_serving(
            &summary.total,
            &crate::serving::stretches(
                &headroom_bundle::intervals::read_intervals(dir).unwrap_or_default(),
            ),
        ),
    })
}

/// The environment's figures that must match across runs: governor,
/// highest frequency, kernel, throttling and memory, of the generator
/// and every monitored host.
fn environment(manifest: &headroom_bundle::manifest::Manifest) -> String {
    let mut pairs = Vec::new();
    let mut add = |prefix: &str, f: &headroom_monitor::Fingerprint| {
        pairs.push(format!(
            "{prefix}governor={}",
            f.governor.as_deref().unwrap_or("none")
        ));
        pairs.push(format!(
            "{prefix}max_mhz={}",
            f.frequency_max_mhz
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "unknown".into())
        ));
        pairs.push(format!("{prefix}kernel={}", f.kernel.replace(' ', "_")));
        pairs.push(format!(
            "{prefix}throttled={}",
            match &f.throttling {
                Some(t) if t.throttled_now || t.frequency_capped_now || t.under_voltage_now =>
                    "yes",
                Some(_) => "no",
                None => "unknown",
            }
        ));
        pairs.push(format!("{prefix}memory_mb={}", f.memory_mb));
    };
    if let Some(f) = &manifest.fingerprint {
        add("", f);
    }
    for host in &manifest.monitored_hosts {
        add(&format!("{}:", host.agent), &host.fingerprint);
    }
    pairs.join(" ")
}
