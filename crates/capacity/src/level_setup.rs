//! What the CLI's runner of a search's levels asks of the search: the
//! search's directory ([`search_dir`]) and each level's run assembled
//! from the spec ([`prepare_level`]), a scenario's `before:` phase left
//! out with the words that say so. The CLI runs the levels on the
//! terminal.

use crate::spec::CapacitySpec;
use crate::timing::Timing;
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_load::assemble::{AssembledRun, AssemblyError};
use headroom_load::engine::Workload;
use headroom_load::run::default_bundle_dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The level's run: the search's level spec (URL or scenario) with this
/// level's users, duration, ramp-up and bundle; beside it, when a
/// scenario's `before:` phase was left out ([`without_before`]), the
/// words that tell the user (once a search).
pub async fn prepare_level(
    spec: &CapacitySpec,
    timing: Timing,
    users: u32,
    repetition: u32,
    dir: &Path,
) -> Result<(AssembledRun, Option<String>), AssemblyError> {
    let run = spec.level_run(users, repetition, timing, dir);
    let mut prepared = headroom_load::assemble::assemble(&run).await?;
    let said = match spec.scenario() {
        None => None,
        Some(_) => without_before(&mut prepared),
    };
    Ok((prepared, said))
}

/// A non-stop level of a modelled lesson search
/// ([`CapacitySpec::non_stop_run`]): its plan's users do not think, and
/// but for the lone user with its samples, each of their iterations is a
/// new student.
pub async fn prepare_non_stop(
    spec: &CapacitySpec,
    users: u32,
    duration: std::time::Duration,
    samples: bool,
    dir: &Path,
) -> Result<AssembledRun, AssemblyError> {
    let run = spec.non_stop_run(users, duration, samples, dir);
    let mut prepared = headroom_load::assemble::assemble(&run).await?;
    if spec.scenario().is_some() {
        without_before(&mut prepared);
    }
    prepared.plan.non_stop = true;
    // The lone user walks as one student does; the crowd arrives as a
    // lesson's students do, each iteration a new one.
    prepared.plan.new_students = !samples
        && matches!(
            prepared.plan.workload,
            headroom_load::engine::Workload::Journey(_) | headroom_load::engine::Workload::Mix(_)
        );
    Ok(prepared)
}

/// A level measures its own users after its own warm-up: a scenario's
/// `before:` phase (a JMeter plan's warm-up group) would shift that window,
/// so it is left out, and the words returned to tell the user.
fn without_before(prepared: &mut AssembledRun) -> Option<String> {
    let Workload::Journey(journey) = &mut prepared.plan.workload else {
        return None;
    };
    let journey = Arc::get_mut(journey)?;
    let phase = journey.scenario.before.take()?;
    journey.before = None;
    if let Some(ScenarioRecord::Scenario(file)) = &mut prepared.setup.manifest.scenario {
        file.before = None;
    }
    Some(format!(
        "the scenario's before: users ({}) are not run by capacity: each level has its own warm-up (--warmup)",
        phase.name.as_deref().unwrap_or("before:")
    ))
}

/// The search's directory: the spec's (`--out`), else a new one under
/// runs/. An existing directory is taken only when it holds nothing but
/// logs and `spec_file` (an experiment's run directory, with its hooks'
/// output and the spec it runs).
pub fn search_dir(spec: &CapacitySpec, spec_file: &str) -> Result<PathBuf, AssemblyError> {
    let base = match &spec.dir {
        Some(dir) => dir.clone(),
        None => {
            let target = spec.target()?;
            default_bundle_dir(Path::new("runs"), &format!("capacity-{}", target.host))
        }
    };
    let only_logs = std::fs::read_dir(&base).is_ok_and(|entries| {
        entries.flatten().all(|e| {
            let path = e.path();
            path.is_file()
                && (path.extension().is_some_and(|x| x == "log")
                    || path.file_name().is_some_and(|n| n == spec_file))
        })
    });
    if base.exists() && !only_logs {
        return Err(AssemblyError::Usage(format!(
            "{} already exists: choose another --out, or remove it",
            base.display()
        )));
    }
    Ok(base)
}
