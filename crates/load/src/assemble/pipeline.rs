//! The one way every workload becomes a run: a source (a URL, a scenario
//! file, a mix, an access log) reads itself, checks its input and connects
//! to its hosts, and hands over what it made of itself ([`Shaped`]);
//! [`finish`] then makes the run the same way for all of them: the
//! manifest, the bundle's directory, the run's setup and tables, the
//! engine's plan and the lines said before the run.

use super::manifest::{manifest, profile_record, ManifestParts};
use super::parts::{labels_note, setup, threads, AssembledRun, AssemblyError};
use crate::engine::{EnginePlan, PlanParts, Workload};
use crate::run::default_bundle_dir;
use crate::spec::RunSpec;
use headroom_analysis::apdex::ApdexThresholds;
use headroom_bundle::manifest::Negotiated;
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_bundle::wire::LabelRole;
use headroom_journey::profile::{Profile, Think};
use headroom_units::quantity::Rate;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What a workload source made of itself, connected and checked.
pub(super) struct Shaped {
    pub workload: Workload,
    pub profile: Profile,
    /// Iterations per user, when the profile counts them.
    pub iterations: Option<u64>,
    pub think: Think,
    pub throughput: Option<Rate>,
    pub timeout: Duration,
    pub apdex: ApdexThresholds,
    /// The manifest's `kind` (`load`, `run`, `replay`).
    pub kind: &'static str,
    /// What the target is called in the summary.
    pub target: String,
    pub scenario: ScenarioRecord,
    pub labels: Vec<String>,
    /// A host of the workload is this machine.
    pub same_host: bool,
    pub connections: Vec<Negotiated>,
    /// What the default bundle directory is named after.
    pub slug: String,
    /// The line (or lines) said before the run.
    pub description: String,
    pub tables: Tables,
}

/// The run's tables beyond its labels: each label's URL, role and place
/// in the total, and the checks.
#[derive(Default)]
pub(super) struct Tables {
    pub label_urls: Vec<(String, String)>,
    /// Per label: kept out of the total (a group's or a page's parts).
    pub outside_total: Vec<bool>,
    pub label_roles: BTreeMap<String, LabelRole>,
    pub check_names: Vec<String>,
    pub check_labels: Vec<Vec<String>>,
    /// The run keeps no failed exchange (a replay's requests are the
    /// log's own, its ids and tokens).
    pub no_saved_failures: bool,
}

/// The run a shaped workload makes.
pub(super) fn finish(spec: &RunSpec, shaped: Shaped) -> Result<AssembledRun, AssemblyError> {
    let Shaped {
        workload,
        profile,
        iterations,
        think,
        throughput,
        timeout,
        apdex,
        kind,
        target,
        scenario,
        labels,
        same_host,
        connections,
        slug,
        mut description,
        tables,
    } = shaped;
    let threads = threads(spec);
    let mut profile_json = profile_record(&profile, think, throughput);
    profile_json.iterations_per_vu = iterations;
    if let Some(note) = labels_note(labels.len()) {
        description = format!("{note}\n{description}");
    }
    let manifest = manifest(
        spec,
        &apdex,
        ManifestParts {
            same_host,
            kind,
            target: target.clone(),
            scenario,
            profile: profile_json,
            labels,
            timeout,
            connections,
        },
        threads,
    )?;
    let bundle_dir = spec
        .outputs
        .bundle_dir
        .clone()
        .unwrap_or_else(|| default_bundle_dir(&PathBuf::from("runs"), &slug));
    let mut setup = setup(spec, manifest, bundle_dir);
    setup.manifest.label_roles = tables.label_roles;
    setup.label_urls = spec.outputs.jtl.then_some(tables.label_urls);
    setup.outside_total = tables.outside_total;
    setup.check_names = tables.check_names;
    setup.check_labels = tables.check_labels;
    if tables.no_saved_failures {
        setup.save_failures = 0;
    }
    Ok(AssembledRun {
        plan: EnginePlan::new(PlanParts {
            workload,
            profile,
            think,
            throughput_cap: throughput,
            timeout,
            threads,
            apdex,
            seed: spec.seed,
        }),
        setup,
        target,
        description,
        start_at: None,
    })
}
