//! The plan of an experiment: each cell with its commands rendered and
//! its run spec, the order of the runs, each run's command line, and the
//! estimate of how long the study takes. `--dry-run` prints it.

use crate::cell_run::{absolute, fault_arg, BuildRun, CellRun};
use crate::file::{Experiment, Order, Ready, WorkloadCommand, OUT};
use headroom_analysis::experiment::{interleaved_order, sequential_order, Cell};
use headroom_load::spec::FaultSpec;
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

/// Time a run takes besides its planned length (start, preflight, writing).
const RUN_OVERHEAD: Duration = Duration::from_secs(1);

/// A cell with everything it runs.
#[derive(Debug, Clone)]
pub struct PlannedCell {
    pub cell: Cell,
    /// Its directory under `cells/`: `c1-store-db_users-30`.
    pub dir_name: String,
    /// `store=db users=30`.
    pub label: String,
    /// The run's command line without --out, --seed and --quiet: what
    /// the plan shows and keeps, and what the CLI builds the run from.
    pub argv: Vec<String>,
    /// How its runs start (the CLI built it from `argv`).
    pub run: CellRun,
    /// The scenario file the runs load, when the workload has one.
    pub scenario: Option<String>,
    pub setup: Option<String>,
    pub teardown: Option<String>,
    pub before_each: Option<String>,
    pub after_each: Option<String>,
    pub services: Vec<PlannedService>,
    /// Commands run at moments of each run.
    pub faults: Vec<FaultSpec>,
}

#[derive(Debug, Clone)]
pub struct PlannedService {
    pub name: String,
    pub command: String,
    pub ready: Option<PlannedReady>,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedReady {
    Tcp(String),
    Http(String),
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub cells: Vec<PlannedCell>,
    /// (round, cell) in the order they run; a round beyond a cell's
    /// needed repetitions is skipped when it comes.
    pub order: Vec<(u32, usize)>,
    /// The `prepare` command, rendered.
    pub prepare: Option<String>,
}

/// `c3-store-redis_users-30`: the cell's number and its levels, with
/// anything but letters, digits, '.' and '-' made '-'.
fn dir_name(index: usize, cell: &Cell) -> String {
    let mut name = format!("c{}", index + 1);
    for (factor, level) in cell {
        name.push(if name.contains('-') { '_' } else { '-' });
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' {
                        c
                    } else {
                        '-'
                    }
                })
                .take(40)
                .collect()
        };
        let _ = write!(name, "{}-{}", clean(factor), clean(level));
    }
    name
}

/// The cell as people read it: `store=db users=30` (or `(one cell)`).
pub fn cell_label(cell: &Cell) -> String {
    if cell.is_empty() {
        return "(one cell)".into();
    }
    cell.iter()
        .map(|(f, l)| format!("{f}={l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The plan for a study written to `out` (made absolute, as `${out}` in
/// commands that may run anywhere), each cell's run built by `build` from
/// its command line. The error names the cell whose command line is wrong
/// and says why, before anything runs.
pub fn plan(experiment: &Experiment, out: &Path, build: BuildRun) -> Result<Plan, String> {
    let out = absolute(out);
    let cells = experiment
        .cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            let mut values = cell.clone();
            values.push((OUT.to_string(), out.display().to_string()));
            let label = cell_label(cell);
            let run = |argv: &[String]| {
                build(argv).map_err(|e| {
                    format!(
                        "{}: the workload of cell {label} gives `headroom {}`, which is wrong: {}",
                        experiment.file.display(),
                        shell_words(argv),
                        e.trim()
                    )
                })
            };
            let mut planned = planned_cell(experiment, i, &values, run)?;
            planned.dir_name = dir_name(i, cell);
            planned.cell = cell.clone();
            planned.label = label;
            Ok(planned)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let prepare = experiment
        .prepare
        .as_ref()
        .map(|t| t.render(&vec![(OUT.to_string(), out.display().to_string())]));
    let rounds = experiment.repetitions.max;
    let order = match experiment.order {
        Order::Interleaved => interleaved_order(cells.len(), rounds, experiment.seed),
        Order::Sequential => sequential_order(cells.len(), rounds),
    };
    Ok(Plan {
        cells,
        order,
        prepare,
    })
}

/// The cell with its commands rendered from `cell`'s values, its run
/// built by `run` from its command line.
fn planned_cell(
    experiment: &Experiment,
    index: usize,
    cell: &Cell,
    run: impl FnOnce(&[String]) -> Result<CellRun, String>,
) -> Result<PlannedCell, String> {
    let w = &experiment.workload;
    let mut subject = w.subject.render(cell);
    let is_file = w.command == WorkloadCommand::Run
        || (w.command == WorkloadCommand::Capacity
            && w.flags.iter().any(|(flag, _)| flag == "--target"));
    // A scenario's relative path is from the experiment file's directory.
    if is_file && Path::new(&subject).is_relative() {
        if let Some(dir) = experiment
            .file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            subject = dir.join(&subject).display().to_string();
        }
    }
    let scenario = is_file.then(|| subject.clone());
    let mut argv = vec![w.command.name().to_string()];
    let mut target = None;
    for (flag, value) in &w.flags {
        if flag == "--target" && w.command == WorkloadCommand::Capacity {
            target = Some(value.render(cell));
            continue;
        }
        argv.push(flag.clone());
        argv.push(value.render(cell));
    }
    match (w.command, target) {
        (WorkloadCommand::Capacity, Some(url)) => {
            argv.push("--scenario".into());
            argv.push(subject);
            argv.push(url);
        }
        _ => argv.push(subject),
    }
    argv.extend(w.extra.iter().map(|t| t.render(cell)));
    // Users who lost their session are counted from the raw samples.
    if experiment.faults.iter().any(|f| f.lost_check.is_some())
        && !argv.iter().any(|a| a == "--jtl")
    {
        argv.push("--jtl".into());
    }
    let hooks = &experiment.hooks;
    let run = run(&argv)?;
    Ok(PlannedCell {
        cell: cell.clone(),
        dir_name: dir_name(index, cell),
        label: cell_label(cell),
        argv,
        run,
        scenario,
        setup: hooks.setup.as_ref().map(|t| t.render(cell)),
        teardown: hooks.teardown.as_ref().map(|t| t.render(cell)),
        before_each: hooks.before_each.as_ref().map(|t| t.render(cell)),
        after_each: hooks.after_each.as_ref().map(|t| t.render(cell)),
        services: experiment
            .services
            .iter()
            .map(|s| PlannedService {
                name: s.name.clone(),
                command: s.command.render(cell),
                ready: s.ready.as_ref().map(|r| match r {
                    Ready::Tcp(t) => PlannedReady::Tcp(t.render(cell)),
                    Ready::Http(t) => PlannedReady::Http(t.render(cell)),
                }),
                timeout: s.timeout,
            })
            .collect(),
        faults: experiment
            .faults
            .iter()
            .map(|f| FaultSpec {
                at: f.at,
                command: f.command.render(cell),
            })
            .collect(),
    })
}

impl PlannedCell {
    /// The run's full command line (after the program's name).
    pub fn run_argv(&self, out: &Path, seed: u64) -> Vec<String> {
        let mut argv = self.argv.clone();
        argv.push("--out".into());
        argv.push(out.display().to_string());
        argv.push("--seed".into());
        argv.push(seed.to_string());
        argv.push("--quiet".into());
        for fault in self.fault_args() {
            argv.push("--fault".into());
            argv.push(fault);
        }
        argv
    }

    /// `AT=COMMAND`, as `--fault` takes them.
    pub fn fault_args(&self) -> Vec<String> {
        self.faults.iter().map(fault_arg).collect()
    }
}

/// A command line as a shell would take it: arguments with spaces or
/// shell characters quoted.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The estimate of the whole study: (fewest runs, most runs, time per run).
pub fn estimate(experiment: &Experiment) -> (usize, usize, Option<Duration>) {
    let cells = experiment.cells.len();
    let min = cells * experiment.repetitions.min as usize;
    let max = cells * experiment.repetitions.max as usize;
    (
        min,
        max,
        experiment.workload.planned.map(|p| p + RUN_OVERHEAD),
    )
}

fn hours(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A multi-line command with its later lines indented under the first.
fn indented(command: &str) -> String {
    command.trim_end().replace('\n', "\n           ")
}

/// What `--dry-run` prints: the cells, the order, each command, the estimate.
pub fn describe(experiment: &Experiment, plan: &Plan, program: &str, out: &Path) -> String {
    let mut text = String::new();
    study_text(&mut text, experiment, plan, out);
    estimate_text(&mut text, experiment);
    if let Some(prepare) = &plan.prepare {
        let _ = writeln!(text, "\nprepare (once): {}", indented(prepare));
    }
    let _ = writeln!(text, "\ncells:");
    for (i, cell) in plan.cells.iter().enumerate() {
        let run_dir = out.join("cells").join(&cell.dir_name).join("rN");
        let run = cell.run_argv(&run_dir, experiment.seed);
        cell_text(
            &mut text,
            i,
            cell,
            &format!("{program} {}", shell_words(&run)),
        );
    }
    order_text(&mut text, experiment, plan);
    text
}

/// `experiment 'x': 4 cells × 3 repetitions → 12 runs`, the order, the
/// figures and the output directory.
fn study_text(text: &mut String, experiment: &Experiment, plan: &Plan, out: &Path) {
    let rule = &experiment.repetitions;
    let (min_runs, max_runs, _) = estimate(experiment);
    let _ = writeln!(
        text,
        "experiment '{}': {} × {} → {}",
        experiment.name,
        headroom_units::quantity::count(plan.cells.len(), "cell", "cells"),
        if rule.min == rule.max {
            headroom_units::quantity::count(rule.min as usize, "repetition", "repetitions")
        } else {
            format!(
                "{}–{} repetitions (more while the CoV of {} is above {:.1}%)",
                rule.min,
                rule.max,
                experiment.repetitions_on.name(),
                rule.until_cov.unwrap_or(0.0) * 100.0
            )
        },
        if min_runs == max_runs {
            headroom_units::quantity::count(max_runs, "run", "runs")
        } else {
            format!("{min_runs}–{max_runs} runs")
        }
    );
    let _ = writeln!(
        text,
        "order: {}; figures: {}{}",
        match experiment.order {
            Order::Interleaved => format!("interleaved (seed {})", experiment.seed),
            Order::Sequential => "sequential".into(),
        },
        experiment
            .figures
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", "),
        experiment
            .label
            .as_ref()
            .map(|l| format!(" of label '{l}'"))
            .unwrap_or_default()
    );
    let _ = writeln!(text, "output: {}", out.display());
    if experiment.fresh_each_run {
        let _ = writeln!(
            text,
            "services, setup and teardown: around every run (services_per: run)"
        );
    }
}

/// `estimated time: 3m00s to 5m00s (15s per run)`, or why it is unknown.
fn estimate_text(text: &mut String, experiment: &Experiment) {
    let (min_runs, max_runs, per_run) = estimate(experiment);
    let Some(each) = per_run else {
        let _ = writeln!(
            text,
            "estimated time: unknown (the runs' length depends on {})",
            match experiment.workload.command {
                WorkloadCommand::Capacity => "the capacity search's answer",
                _ => "a factor, or a number of requests or iterations",
            }
        );
        return;
    };
    let low = each * min_runs as u32;
    let high = each * max_runs as u32;
    let _ = writeln!(
        text,
        "estimated time: {}{} ({} per run{})",
        hours(low),
        if low == high {
            String::new()
        } else {
            format!(" to {}", hours(high))
        },
        hours(each),
        if experiment.quiet.is_some()
            || experiment.hooks.before_each.is_some()
            || !experiment.services.is_empty()
        {
            ", plus hooks, services and quiet waits"
        } else {
            ""
        }
    );
}

/// One cell: its hooks, services and the run's command line.
fn cell_text(text: &mut String, i: usize, cell: &PlannedCell, run: &str) {
    let _ = writeln!(text, "  {:>3}. {}  [{}]", i + 1, cell.label, cell.dir_name);
    let show = |text: &mut String, what: &str, command: &Option<String>| {
        if let Some(c) = command {
            let _ = writeln!(text, "       {what}: {}", indented(c));
        }
    };
    show(text, "setup", &cell.setup);
    for s in &cell.services {
        let ready = match &s.ready {
            Some(PlannedReady::Tcp(a)) => {
                format!(" (ready: tcp {a}, within {})", hours(s.timeout))
            }
            Some(PlannedReady::Http(u)) => {
                format!(" (ready: http {u}, within {})", hours(s.timeout))
            }
            None => String::new(),
        };
        let _ = writeln!(
            text,
            "       service {}: {}{ready}",
            s.name,
            indented(&s.command)
        );
    }
    show(text, "before each", &cell.before_each);
    let _ = writeln!(text, "       run: {run}");
    show(text, "after each", &cell.after_each);
    show(text, "teardown", &cell.teardown);
}

/// The runs' order as round.cell, twelve a line.
fn order_text(text: &mut String, experiment: &Experiment, plan: &Plan) {
    let _ = writeln!(text, "\nrun order (round.cell):");
    let mut line = String::from(" ");
    for (n, (round, cell)) in plan.order.iter().enumerate() {
        if n > 0 && n % 12 == 0 {
            let _ = writeln!(text, "{line}");
            line = String::from(" ");
        }
        let _ = write!(line, " {}.{}", round + 1, cell + 1);
    }
    let _ = writeln!(text, "{line}");
    let rule = &experiment.repetitions;
    if rule.min != rule.max {
        let _ = writeln!(
            text,
            "  (rounds beyond {} run only for cells whose CoV is still above the bound)",
            rule.min
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_directories_are_numbered_and_clean() {
        let cell = vec![
            ("store".to_string(), "redis://127.0.0.1:6390".to_string()),
            ("users".to_string(), "30".to_string()),
        ];
        assert_eq!(
            dir_name(2, &cell),
            "c3-store-redis---127.0.0.1-6390_users-30"
        );
        assert_eq!(dir_name(0, &Vec::new()), "c1");
        assert_eq!(cell_label(&cell), "store=redis://127.0.0.1:6390 users=30");
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        let argv: Vec<String> = ["run", "a b.yaml", "--fault", "3000ms=echo 'x'"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            shell_words(&argv),
            "run 'a b.yaml' --fault '3000ms=echo '\\''x'\\'''"
        );
    }
}
