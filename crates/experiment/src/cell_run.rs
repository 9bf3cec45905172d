//! What each run of a cell runs: the cell's spec, built by the CLI from
//! the cell's command line (its own parser and flags → spec), made into
//! one run's spec (bundle directory, seed, faults), written as `spec.json`
//! in the run's directory and run as `headroom run --spec FILE`, each run
//! in its own process. A capacity search's cell is the same with a
//! capacity spec (each level's run spec and the search's settings; the
//! search's directory is the run's) and `headroom capacity --spec FILE`.

use headroom_capacity::spec::CapacitySpec;
use headroom_load::spec::{BodySpec, FaultSpec, RunSpec, WorkloadSource};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The file in a run's directory holding the spec it ran.
pub const SPEC_FILE: &str = "spec.json";

/// How a cell's runs are started.
#[derive(Debug, Clone, PartialEq)]
pub enum CellRun {
    /// `headroom run --spec FILE`.
    Spec {
        /// The cell's spec, before each run's bundle directory, seed and
        /// faults.
        spec: Box<RunSpec>,
        /// Flags of the cell about the run's reporting, not its workload
        /// (`--fail-if`, `--junit`, `--metrics-*`), given beside the spec.
        reporting: Vec<String>,
    },
    /// `headroom capacity --spec FILE`.
    Capacity {
        /// The cell's search, before each run's directory and seed.
        spec: Box<CapacitySpec>,
        /// Flags about reporting, as for [`CellRun::Spec`].
        reporting: Vec<String>,
    },
}

impl CellRun {
    /// The child's arguments for one run into `run.dir`, its spec written
    /// there.
    pub fn child_args(&self, run: &RunSettings) -> Result<Vec<String>, String> {
        match self {
            CellRun::Spec { spec, reporting } => {
                let file = write_spec(run.dir, &run_spec(spec, run))?;
                Ok(spec_args("run", &file, reporting))
            }
            CellRun::Capacity { spec, reporting } => {
                let file = write_spec(run.dir, &capacity_run_spec(spec, run))?;
                Ok(spec_args("capacity", &file, reporting))
            }
        }
    }
}

/// Turns a cell's command line (after the program's name, without the
/// runner's flags) into how its runs are started; the error says what is
/// wrong with the command line.
pub type BuildRun<'a> = &'a dyn Fn(&[String]) -> Result<CellRun, String>;

/// One run of a cell: its directory, seed and faults.
pub struct RunSettings<'a> {
    pub dir: &'a Path,
    pub seed: u64,
    pub faults: &'a [FaultSpec],
}

/// The spec of one run of a cell whose cell spec is `spec`. Its manifest
/// keeps the equivalent command line: the cell's, as the CLI gave it,
/// with the run's `--out`, `--seed`, `--quiet` and `--fault`s.
pub fn run_spec(spec: &RunSpec, run: &RunSettings) -> RunSpec {
    let mut spec = spec.clone().with_bundle_dir(run.dir.to_path_buf());
    // The spec in the run's directory runs from anywhere.
    match &mut spec.workload {
        WorkloadSource::Scenario(source) => source.file = absolute(&source.file),
        WorkloadSource::Replay(source) => {
            for file in &mut source.files {
                *file = absolute(file);
            }
        }
        WorkloadSource::Url(request) => {
            if let Some(BodySpec::File(file)) = &mut request.body {
                *file = absolute(file);
            }
        }
    }
    spec.seed = run.seed;
    spec.faults = run.faults.to_vec();
    let line = &mut spec.outputs.command_line;
    line.extend([
        "--out".to_string(),
        run.dir.display().to_string(),
        "--seed".to_string(),
        run.seed.to_string(),
        "--quiet".to_string(),
    ]);
    for fault in run.faults {
        line.push("--fault".into());
        line.push(headroom_http::target::redact_secrets(&fault_arg(fault)));
    }
    spec
}

/// The capacity spec of one run of a cell whose search is `spec`: each
/// level's run made as [`run_spec`] makes a run's (its manifest keeping
/// the cell's command line with the run's `--out`, `--seed` and
/// `--quiet`), the search's directory the run's.
pub fn capacity_run_spec(spec: &CapacitySpec, run: &RunSettings) -> CapacitySpec {
    let mut spec = spec.clone();
    spec.level = run_spec(&spec.level, run);
    // Each level's bundle goes into its own directory in the search's.
    spec.level.outputs.bundle_dir = None;
    spec.dir = Some(run.dir.to_path_buf());
    spec
}

/// Writes `spec` as the run directory's `spec.json`; returns its path.
pub fn write_spec(dir: &Path, spec: &impl Serialize) -> Result<PathBuf, String> {
    let path = dir.join(SPEC_FILE);
    let json = serde_json::to_string_pretty(spec)
        .map_err(|e| format!("cannot write the run spec {}: {e}", path.display()))?;
    std::fs::write(&path, json + "\n")
        .map_err(|e| format!("cannot write the run spec {}: {e}", path.display()))?;
    Ok(path)
}

/// The child's arguments for a spec written at `spec_file`: `command`
/// (`run` or `capacity`) `--spec FILE --quiet` and the reporting flags.
pub fn spec_args(command: &str, spec_file: &Path, reporting: &[String]) -> Vec<String> {
    let mut argv = vec![
        command.to_string(),
        "--spec".to_string(),
        spec_file.display().to_string(),
        "--quiet".to_string(),
    ];
    argv.extend(reporting.iter().cloned());
    argv
}

/// `--fault`'s text for a fault: `3000ms=COMMAND`.
pub fn fault_arg(fault: &FaultSpec) -> String {
    format!("{}ms={}", fault.at.as_millis(), fault.command)
}

/// `path` from the current directory, without resolving links.
pub fn absolute(path: &Path) -> std::path::PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_load::spec::UrlRequest;
    use std::time::Duration;

    #[test]
    fn a_run_spec_sets_the_runs_own_settings() {
        let cell =
            RunSpec::new(WorkloadSource::Url(UrlRequest::get("http://127.0.0.1:9/"))).with_users(3);
        let mut cell = cell;
        cell.outputs.command_line = vec!["headroom".into(), "load".into()];
        let faults = [FaultSpec {
            at: Duration::from_millis(1500),
            command: "true".into(),
        }];
        let run = run_spec(
            &cell,
            &RunSettings {
                dir: Path::new("/s/cells/c1/r2"),
                seed: 8,
                faults: &faults,
            },
        );
        assert_eq!(
            run.outputs.bundle_dir,
            Some(PathBuf::from("/s/cells/c1/r2"))
        );
        assert_eq!(run.seed, 8);
        assert_eq!(run.faults, faults);
        assert_eq!(run.profile, cell.profile);
        assert_eq!(
            run.outputs.command_line.join(" "),
            "headroom load --out /s/cells/c1/r2 --seed 8 --quiet --fault 1500ms=true"
        );
        assert_eq!(fault_arg(&faults[0]), "1500ms=true");
    }

    /// A capacity cell's run: its search in the run's directory, each
    /// level's manifest keeping the run's command line, started as
    /// `capacity --spec` on the spec.json written there.
    #[test]
    fn a_capacity_run_searches_in_the_runs_directory() {
        use headroom_analysis::capacity::ApdexGoal;
        use headroom_capacity::ladder::Ladder;
        use headroom_capacity::timing::LevelTimes;
        let mut level = RunSpec::new(WorkloadSource::Scenario(
            headroom_load::spec::ScenarioSource {
                file: "journey.yaml".into(),
                target: Some("http://127.0.0.1:9/".into()),
                jmeter_properties: Default::default(),
                strict: false,
            },
        ));
        level.outputs.command_line = vec!["headroom".into(), "capacity".into()];
        let cell = CellRun::Capacity {
            spec: Box::new(CapacitySpec {
                level,
                goal: ApdexGoal {
                    apdex: 0.9,
                    max_error: 0.01,
                    p95_max: None,
                },
                ladder: Ladder {
                    start: 2,
                    step: 2,
                    max: 8,
                    resolution: 1,
                },
                aimed: true,
                modelled: false,
                confirm: 1,
                times: LevelTimes {
                    warmup: Duration::ZERO,
                    warmup_min: None,
                    step_duration: Duration::from_secs(2),
                    min_step_duration: None,
                    full_levels: false,
                    min_samples: 100,
                },
                dir: None,
                users_are: None,
                arrive_within: None,
            }),
            reporting: vec!["--fail-if".into(), "users<3".into()],
        };
        let dir = std::env::temp_dir().join(format!("headroom-cell-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = RunSettings {
            dir: &dir,
            seed: 4,
            faults: &[],
        };
        let argv = cell.child_args(&run).unwrap();
        let file = dir.join(SPEC_FILE);
        assert_eq!(
            argv,
            [
                "capacity",
                "--spec",
                file.to_str().unwrap(),
                "--quiet",
                "--fail-if",
                "users<3"
            ]
        );
        let written: CapacitySpec =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written.dir.as_deref(), Some(dir.as_path()));
        assert_eq!(written.level.outputs.bundle_dir, None);
        assert_eq!(written.level.seed, 4);
        let WorkloadSource::Scenario(source) = &written.level.workload else {
            panic!("{written:?}")
        };
        assert!(source.file.is_absolute(), "{source:?}");
        assert_eq!(
            written.level.outputs.command_line.join(" "),
            format!("headroom capacity --out {} --seed 4 --quiet", dir.display())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
