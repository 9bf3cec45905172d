//! `headroom run FILE`: a scenario's journeys, profile from the file with
//! command-line flags on top.

use crate::args::RunArgs;
use crate::execute::{
    apdex, connect_checked, ensure_file_limit, execute, manifest, monitor_config, profile_json,
    threads, Failure, ManifestParts, Prepared,
};
use crate::load_cmd::{check_ramp_up, describe_profile, DEFAULT_DURATION};
use headroom_load::engine::{EnginePlan, Workload};
use headroom_load::profile::Profile;
use headroom_load::run::{default_bundle_dir, RunSetup};
use headroom_load::scenario::runner::JourneyPlan;
use headroom_load::scenario::{LabelKind, Scenario, StageKind};
use headroom_units::quantity::count;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Most VUs of the open model when neither the file nor --max-vus says.
const DEFAULT_MAX_VUS: u32 = 1000;

pub fn run(args: RunArgs) -> ExitCode {
    let common = args.common.clone();
    execute(&common, prepare(args))
}

/// The file's profile with the command line's flags on top.
fn profile(args: &RunArgs, scenario: &Scenario) -> anyhow::Result<(Profile, Option<u64>)> {
    let spec = &scenario.profile;
    let closed_flags = args.users.is_some() || args.iterations.is_some();
    let flags_set_profile =
        closed_flags || args.rate.is_some() || args.duration.is_some() || args.ramp_up.is_some();
    if let (Some((stages, kind)), false) = (&spec.stages, flags_set_profile) {
        let profile = match kind {
            StageKind::Users => Profile::RampingUsers {
                stages: stages.clone(),
            },
            StageKind::Rate => Profile::RampingRate {
                stages: stages.clone(),
                max_vus: args.max_vus.or(spec.max_vus).unwrap_or(DEFAULT_MAX_VUS),
            },
        };
        return Ok((profile, None));
    }
    let rate = args.rate.or(if closed_flags { None } else { spec.rate });
    if let Some(rate) = rate {
        let max_vus = args.max_vus.or(spec.max_vus).unwrap_or(DEFAULT_MAX_VUS);
        let duration = args.duration.or(spec.duration).unwrap_or(DEFAULT_DURATION);
        return Ok((
            Profile::Open {
                rate,
                max_vus,
                duration,
            },
            None,
        ));
    }
    if args.max_vus.is_some() {
        anyhow::bail!(
            "--max-vus bounds the open model's users (arrivals at --rate, or a scenario's rate: or stages: of rates); this run is closed (a fixed number of users), so it would not be used: leave it out, or give --rate"
        );
    }
    let users = args.users.or(spec.users).unwrap_or(1);
    let ramp_up = args.ramp_up.or(spec.ramp_up).unwrap_or_default();
    let iterations = args.iterations.or(if args.duration.is_some() {
        None
    } else {
        spec.iterations
    });
    let duration = args.duration.or(spec.duration).or(if iterations.is_some() {
        None
    } else {
        Some(DEFAULT_DURATION)
    });
    check_ramp_up(ramp_up, duration)?;
    Ok((
        Profile::Closed {
            users,
            ramp_up,
            duration,
            requests: None,
        },
        iterations,
    ))
}

pub(crate) async fn prepare(args: RunArgs) -> Result<Prepared, Failure> {
    let common = &args.common;
    let shard = crate::shard::resolve(&args.shard)?;
    let properties = crate::jmx_input::properties(&args.jmeter_property)
        .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    let mut scenario =
        crate::jmx_input::scenario(&args.file, args.target.as_ref(), &properties, args.strict)
            .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    if let (Some(shard), Some(data)) = (shard, scenario.data.as_mut()) {
        data.keep_shard_rows(shard)
            .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    }
    let (profile, iterations) = profile(&args, &scenario).map_err(Failure::Usage)?;
    let apdex = apdex(common)?;
    let population = u64::from(profile.population());
    let population = shard.map_or(population, |s| s.share(population));
    ensure_file_limit(population * scenario.origins.len() as u64 + 64)?;
    let mut connectors = Vec::new();
    for origin in &scenario.origins {
        connectors.push(Arc::new(connect_checked(origin, common.insecure).await?));
    }
    let throughput = args.throughput.or(scenario.profile.throughput);
    let think = args.think.unwrap_or(scenario.think);
    let threads = threads(common);
    let labels: Vec<String> = scenario.labels.iter().map(|l| l.name.clone()).collect();
    let target = scenario
        .origins
        .first()
        .map(|o| o.url.clone())
        .unwrap_or_default();
    let mut profile_json = profile_json(&profile, think, throughput);
    profile_json.iterations_per_vu = iterations;
    let manifest = manifest(
        common,
        &apdex,
        ManifestParts {
            same_host: connectors.iter().any(|c| c.address.ip().is_loopback()),
            kind: "run",
            target: target.clone(),
            scenario: serde_json::json!({
                "mode": "scenario",
                "file": args.file.display().to_string(),
                "name": scenario.name,
                "steps": scenario.requests.len(),
                "checks": scenario.checks,
                "variables": scenario.vars.names(),
                "data": scenario.data.as_ref().map(|d| serde_json::json!({
                    "file": d.file.display().to_string(), "rows": d.rows.len(), "shared": d.shared, "recycle": d.recycle,
                })),
                "before": scenario.before.as_ref().map(|b| serde_json::json!({
                    "name": b.name, "users": b.users, "iterations": b.iterations,
                })),
                "text": headroom_load::target::redact_secrets(
                    &std::fs::read_to_string(&args.file).unwrap_or_default()
                ),
            }),
            profile: profile_json,
            labels: labels.clone(),
            timeout: scenario.timeout,
        },
        threads,
    )?;
    let bundle_dir = common.out.clone().unwrap_or_else(|| {
        let stem = args
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        default_bundle_dir(&PathBuf::from("runs"), &stem)
    });
    let description = format!(
        "headroom: {} ({}) against {target} — {}{}",
        args.file.display(),
        count(scenario.requests.len(), "step", "steps"),
        describe_profile(&profile, &think, throughput),
        iterations
            .map(|n| format!(
                ", {} per user",
                count(n as usize, "iteration", "iterations")
            ))
            .unwrap_or_default(),
    );
    let description = match &scenario.before {
        Some(b) => format!(
            "{description}; before them, {}{} × {}",
            b.name
                .as_ref()
                .map(|n| format!("'{n}': "))
                .unwrap_or_default(),
            count(b.users as usize, "user", "users"),
            count(b.iterations as usize, "iteration", "iterations"),
        ),
        None => description,
    };
    let label_urls = common.jtl.then(|| {
        scenario
            .labels
            .iter()
            .map(|l| (l.name.clone(), l.url.clone()))
            .collect()
    });
    let group_labels = scenario
        .labels
        .iter()
        .map(|l| l.kind == LabelKind::Group)
        .collect();
    let check_names = scenario.checks.clone();
    let check_labels = scenario.check_labels();
    let timeout = scenario.timeout;
    let journey = JourneyPlan::new(scenario, connectors, iterations, think);
    let mut prepared = Prepared {
        plan: EnginePlan::new(
            Workload::Journey(Arc::new(journey)),
            profile,
            think,
            throughput,
            timeout,
            threads,
            apdex,
            common.seed,
        ),
        setup: RunSetup {
            manifest,
            bundle_dir,
            label_urls,
            group_labels,
            check_names,
            check_labels,
            monitor: monitor_config(common),
            monitor_processes: common.process.clone(),
            faults: common.fault.clone(),
            save_failures: common.save_failures,
            metrics: None,
            end_early: None,
        },
        target,
        description,
        start_at: None,
    };
    crate::shard::apply(&mut prepared, shard, &args.shard, common.out.is_some())?;
    Ok(prepared)
}
