//! Where a run is assembled: a [`RunSpec`] becomes an [`AssembledRun`] —
//! the engine plan, the bundle's manifest and setup, the line said before
//! the run — after the pre-flight checks (the target answers, the agents
//! answer, enough open files). Errors say whether the input is wrong
//! ([`AssemblyError::Usage`]) or the run cannot happen
//! ([`AssemblyError::CannotRun`]).

mod manifest;
mod mix;
pub(crate) mod parts;
mod pipeline;
mod profile;
mod replay;
mod scenario;
mod url;

pub use manifest::{examine_host, profile_record, ManifestParts};
pub use mix::{split_line, users_think};
pub use profile::{check_ramp_up, describe_profile, DEFAULT_DURATION};

pub use parts::{
    apdex, connect_checked, describe, ensure_file_limit, monitor_sources, threads, AssembledRun,
    AssemblyError,
};

use crate::spec::{RunSpec, WorkloadSource};

/// Turns `spec` into a run ready to start: reads the workload source,
/// resolves the profile, checks the target and the agents, writes the
/// manifest's first state, and makes it this shard's run.
pub async fn assemble(spec: &RunSpec) -> Result<AssembledRun, AssemblyError> {
    // What an earlier run of this process left uncounted is not this one's.
    let _ = headroom_http::sent::take();
    let shard = crate::start::resolve(spec.shard)?;
    let mut run = match &spec.workload {
        WorkloadSource::Url(request) => url::assemble(spec, request, shard).await?,
        WorkloadSource::Scenario(source)
            if headroom_journey::scenario::mix::is_mix_file(&source.file) =>
        {
            mix::assemble(spec, source, shard).await?
        }
        WorkloadSource::Scenario(source) => scenario::assemble(spec, source, shard).await?,
        WorkloadSource::Replay(source) => replay::assemble(spec, source, shard).await?,
    };
    let out_given = spec.outputs.bundle_dir.is_some();
    crate::start::apply(&mut run, shard, &spec.start, out_given)?;
    Ok(run)
}

#[cfg(test)]
mod tests;
