//! One run of a search's level to its end, as every level runs: until
//! the run is over or the user's stop turns true, its bundle written. The
//! search's lesson and ladder levels ([`crate::search`]) and a modelled
//! search's non-stop levels ([`crate::lesson_aim`]) both run this way.

use crate::error::CapacityError;
use headroom_bundle::summary::RunStatus;
use headroom_load::engine::EnginePlan;
use headroom_load::run::{run as run_plan, Progress, RunOutcome, RunSetup};
use tokio::sync::watch;

/// How a level's run ended.
pub enum Ran {
    /// It ran its course, and its bundle is whole.
    Done(RunOutcome),
    /// The user stopped it (its bundle holds what it measured).
    Interrupted(RunOutcome),
}

/// Runs `plan` until it ends or `stop` turns true; each second goes to
/// `on_progress`. A bundle that could not be written is an error: the
/// level's figures would be lost.
pub async fn run_level(
    plan: EnginePlan,
    setup: RunSetup,
    stop: &watch::Receiver<bool>,
    on_progress: impl FnMut(&Progress),
) -> Result<Ran, CapacityError> {
    let mut halt = stop.clone();
    let outcome = run_plan(
        plan,
        setup,
        async move {
            let _ = halt.wait_for(|v| *v).await;
        },
        on_progress,
    )
    .await
    .map_err(CapacityError::Run)?;
    if outcome.status == RunStatus::Interrupted {
        return Ok(Ran::Interrupted(outcome));
    }
    if let Some(error) = &outcome.bundle_error {
        return Err(CapacityError::Level(error.to_string()));
    }
    Ok(Ran::Done(outcome))
}
