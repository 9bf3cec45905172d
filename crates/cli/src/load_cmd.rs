//! `headroom load`: one URL, closed or open model.

use crate::args::LoadArgs;
use crate::execute::{
    apdex, connect_checked, ensure_file_limit, execute, manifest, monitor_config, profile_json,
    threads, Failure, ManifestParts, Prepared,
};
use anyhow::{bail, Context};
use headroom_load::engine::{EnginePlan, PreparedRequest, Workload};
use headroom_load::profile::{Profile, Think};
use headroom_load::run::{default_bundle_dir, RunSetup};
use headroom_load::target::RequestSpec;
use headroom_units::quantity::count;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

pub fn run(args: LoadArgs) -> ExitCode {
    let common = args.common.clone();
    execute(&common, prepare(args))
}

fn request_spec(args: &LoadArgs) -> anyhow::Result<RequestSpec> {
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => std::fs::read(path)
            .with_context(|| format!("cannot read --body-file {}", path.display()))?,
        (None, None) => Vec::new(),
    };
    let request = RequestSpec {
        method: args.method.clone(),
        headers: args.headers.clone(),
        body,
        keep_alive: !args.no_keepalive,
    };
    request.validate()?;
    Ok(request)
}

fn profile(args: &LoadArgs) -> anyhow::Result<Profile> {
    Ok(match args.rate {
        Some(rate) => Profile::Open {
            rate,
            max_vus: args.max_vus,
            duration: args.duration.unwrap_or(DEFAULT_DURATION),
        },
        None => {
            let duration = match (args.duration, args.requests) {
                (Some(d), _) => Some(d),
                (None, Some(_)) => None,
                (None, None) => Some(DEFAULT_DURATION),
            };
            let ramp_up = args.ramp_up.unwrap_or_default();
            check_ramp_up(ramp_up, duration)?;
            Profile::Closed {
                users: args.users.unwrap_or(10),
                ramp_up,
                duration,
                requests: args.requests,
            }
        }
    })
}

/// A ramp-up longer than the run would leave users that never start.
pub fn check_ramp_up(ramp_up: Duration, duration: Option<Duration>) -> anyhow::Result<()> {
    if let Some(d) = duration {
        if ramp_up > d {
            bail!(
                "--ramp-up ({} s) is longer than the run (-d {} s): some users would never start. The duration includes the ramp-up",
                ramp_up.as_secs_f64(),
                d.as_secs_f64()
            );
        }
    }
    Ok(())
}

/// "20 users, ramp-up 2s, 10s, ..." for the line printed before a run.
pub fn describe_profile(
    profile: &Profile,
    think: &Think,
    cap: Option<headroom_units::quantity::Rate>,
) -> String {
    match profile {
        Profile::Closed {
            users,
            ramp_up,
            duration,
            requests,
        } => {
            let mut text = count(*users as usize, "user", "users");
            if !ramp_up.is_zero() {
                text += &format!(", ramp-up {}s", ramp_up.as_secs_f64());
            }
            if let Some(n) = requests {
                text += &format!(", {}", count(*n as usize, "request", "requests"));
            }
            if let Some(d) = duration {
                text += &format!(", {}s", d.as_secs_f64());
            }
            if let Some(cap) = cap {
                text += &format!(", capped at {cap}");
            }
            if *think != Think::None {
                text += &format!(", think time {:.2}s on average", think.mean().as_secs_f64());
            }
            text
        }
        Profile::Open {
            rate,
            max_vus,
            duration,
        } => {
            format!(
                "open model: {rate} for {}s (up to {max_vus} VUs)",
                duration.as_secs_f64()
            )
        }
        Profile::RampingUsers { stages } => format!(
            "{} over {}s, up to {}{}",
            count(stages.0.len(), "stage", "stages"),
            stages.total().as_secs_f64(),
            count(profile.population() as usize, "user", "users"),
            cap.map(|c| format!(", capped at {c}")).unwrap_or_default()
        ),
        Profile::RampingRate { stages, max_vus } => format!(
            "open model in {} over {}s, up to {}/s (up to {max_vus} VUs)",
            count(stages.0.len(), "stage", "stages"),
            stages.total().as_secs_f64(),
            stages.peak()
        ),
    }
}

pub(crate) async fn prepare(args: LoadArgs) -> Result<Prepared, Failure> {
    let common = &args.common;
    let shard = crate::shard::resolve(&args.shard)?;
    let request = request_spec(&args).map_err(Failure::Usage)?;
    let profile = profile(&args).map_err(Failure::Usage)?;
    let apdex = apdex(common)?;
    let think = args.think.unwrap_or(Think::None);
    let label = args
        .label
        .clone()
        .unwrap_or_else(|| args.url.path_and_query.clone());
    let population = u64::from(profile.population());
    let population = shard.map_or(population, |s| s.share(population));
    ensure_file_limit(population + 64)?;
    let connector = connect_checked(&args.url, common.insecure).await?;
    let threads = threads(common);
    let profile_json = profile_json(&profile, think, args.throughput);
    let manifest = manifest(
        common,
        &apdex,
        ManifestParts {
            same_host: connector.address.ip().is_loopback(),
            kind: "load",
            target: args.url.url.clone(),
            scenario: serde_json::json!({
                "mode": "url",
                "method": request.method,
                "url": args.url.url,
                "label": label,
                // Credentials stay out of the bundle.
                "headers": request
                    .headers
                    .iter()
                    .map(|(n, v)| headroom_load::target::redact_secrets(&format!("{n}: {v}")))
                    .collect::<Vec<_>>(),
                "body_bytes": request.body.len(),
                "keep_alive": request.keep_alive,
            }),
            profile: profile_json,
            labels: vec![label.clone()],
            timeout: args.timeout,
        },
        threads,
    )?;
    let bundle_dir = common.out.clone().unwrap_or_else(|| {
        default_bundle_dir(
            &PathBuf::from("runs"),
            &format!("{}{}", args.url.host, args.url.path_and_query),
        )
    });
    let prepared_request = Arc::new(PreparedRequest {
        label: 0,
        bytes: request.serialize(&args.url, &args.url.path_and_query),
        is_head: request.method.eq_ignore_ascii_case("HEAD"),
        keep_alive: request.keep_alive,
    });
    let description = format!(
        "headroom: {} {} — {}",
        request.method,
        args.url,
        describe_profile(&profile, &think, args.throughput)
    );
    let mut prepared = Prepared {
        plan: EnginePlan::new(
            Workload::Url {
                connector: Arc::new(connector),
                request: prepared_request,
            },
            profile,
            think,
            args.throughput,
            args.timeout,
            threads,
            apdex,
            common.seed,
        ),
        setup: RunSetup {
            manifest,
            bundle_dir,
            label_urls: common
                .jtl
                .then(|| vec![(label.clone(), args.url.url.clone())]),
            group_labels: Vec::new(),
            check_names: Vec::new(),
            check_labels: Vec::new(),
            monitor: monitor_config(common),
            monitor_processes: common.process.clone(),
            faults: common.fault.clone(),
            save_failures: common.save_failures,
            metrics: None,
            end_early: None,
        },
        target: args.url.url.clone(),
        description,
        start_at: None,
    };
    crate::shard::apply(&mut prepared, shard, &args.shard, common.out.is_some())?;
    Ok(prepared)
}
