//! `headroom load`: one URL, closed or open model, to a bundle and a summary.

use crate::args::{LoadArgs, Tolerated};
use crate::signals::interrupt_on_signal;
use anyhow::{bail, Context};
use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::Verdict;
use headroom_load::bundle::{ClientHost, Files, Manifest, Tool, SCHEMA_VERSION};
use headroom_load::conn::Connector;
use headroom_load::engine::{EnginePlan, PreparedRequest};
use headroom_load::profile::{Profile, Think};
use headroom_load::run::{default_bundle_dir, run as run_load, Progress, RunOutcome, RunSetup};
use headroom_load::summary::RunSummary;
use headroom_load::target::RequestSpec;
use headroom_report::{json_summary, live_line, render_summary, ReportInput};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEFAULT_DURATION: Duration = Duration::from_secs(10);
const PREFLIGHT_WAIT: Duration = Duration::from_secs(5);

/// Exit codes (documented in `headroom --help` and the README).
pub const EXIT_CRITERIA_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_CANNOT_RUN: u8 = 3;
/// The run was stopped by Ctrl-C or SIGTERM (its bundle is valid and marked interrupted).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A problem with the user's input (exit 2) or with running at all (exit 3).
enum Failure {
    Usage(anyhow::Error),
    CannotRun(anyhow::Error),
}

pub fn run(args: LoadArgs, command_line: Vec<String>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("headroom: cannot start: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    match runtime.block_on(execute(args, command_line)) {
        Ok(code) => code,
        Err(Failure::Usage(e)) => {
            eprintln!("headroom: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::CannotRun(e)) => {
            eprintln!("headroom: {e:#}");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}

/// The plan derived from the arguments, before anything touches the network.
struct Planned {
    request: RequestSpec,
    profile: Profile,
    think: Think,
    apdex: ApdexThresholds,
    label: String,
}

fn plan(args: &LoadArgs) -> anyhow::Result<Planned> {
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
    let tolerated = match args.apdex_f {
        Tolerated::Time(d) => d,
        Tolerated::TimesT(k) => args.apdex_t.mul_f64(k),
    };
    if tolerated < args.apdex_t {
        bail!(
            "--apdex-f ({} ms) is below --apdex-t ({} ms): F must be at least T (the Apdex standard uses F = 4T)",
            tolerated.as_millis(),
            args.apdex_t.as_millis()
        );
    }
    let profile = match args.rate {
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
            if let Some(d) = duration {
                if ramp_up > d {
                    bail!(
                        "--ramp-up ({} s) is longer than the run (-d {} s): some users would never start. The duration includes the ramp-up",
                        ramp_up.as_secs_f64(),
                        d.as_secs_f64()
                    );
                }
            }
            Profile::Closed {
                users: args.users.unwrap_or(10),
                ramp_up,
                duration,
                requests: args.requests,
            }
        }
    };
    Ok(Planned {
        label: args
            .label
            .clone()
            .unwrap_or_else(|| args.url.path_and_query.clone()),
        request,
        profile,
        think: args.think.unwrap_or(Think::None),
        apdex: ApdexThresholds {
            satisfied: args.apdex_t,
            tolerated,
        },
    })
}

/// Raises the open-file limit to its hard maximum: every VU holds a socket.
fn ensure_file_limit(needed: u64) -> anyhow::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Ok(());
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
    if limit.rlim_cur < needed {
        bail!(
            "{needed} VUs need about {needed} open files but this process may open only {}: raise the limit (ulimit -n {needed}) or use fewer users",
            limit.rlim_cur
        );
    }
    Ok(())
}

fn manifest(
    args: &LoadArgs,
    planned: &Planned,
    command_line: Vec<String>,
    threads: usize,
) -> Manifest {
    let scenario = serde_json::json!({
        "mode": "url",
        "method": planned.request.method,
        "url": args.url.url,
        "label": planned.label,
        "headers": planned.request.headers.iter().map(|(n, v)| format!("{n}: {v}")).collect::<Vec<_>>(),
        "body_bytes": planned.request.body.len(),
        "keep_alive": planned.request.keep_alive,
    });
    let mut profile = serde_json::to_value(&planned.profile).unwrap_or_default();
    if let Some(map) = profile.as_object_mut() {
        map.insert(
            "think".into(),
            serde_json::to_value(planned.think).unwrap_or_default(),
        );
        map.insert(
            "throughput_cap_per_s".into(),
            serde_json::to_value(args.throughput.map(|r| r.per_second)).unwrap_or_default(),
        );
    }
    let (t, f) = RunSummary::thresholds(&planned.apdex);
    Manifest {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "headroom".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line,
        kind: "load".into(),
        target: args.url.url.clone(),
        scenario,
        profile,
        apdex_t_ms: t,
        apdex_f_ms: f,
        timeout_ms: args.timeout.as_secs_f64() * 1000.0,
        threads,
        seed: args.seed,
        labels: vec![planned.label.clone()],
        started_at: String::new(),
        ended_at: None,
        elapsed_s: None,
        status: headroom_load::summary::RunStatus::Running,
        client: ClientHost::current(),
        warnings: Vec::new(),
        summary: None,
        files: Files::new(args.jtl),
    }
}

async fn execute(args: LoadArgs, command_line: Vec<String>) -> Result<ExitCode, Failure> {
    let planned = plan(&args).map_err(Failure::Usage)?;
    let population = match planned.profile {
        Profile::Closed { users, .. } => users,
        Profile::Open { max_vus, .. } => max_vus,
    };
    ensure_file_limit(population as u64 + 64).map_err(Failure::Usage)?;
    let connector = Connector::resolve(&args.url, args.insecure)
        .await
        .map_err(|e| Failure::CannotRun(e.into()))?;
    connector
        .preflight(&args.url, PREFLIGHT_WAIT)
        .await
        .map_err(|e| Failure::CannotRun(e.into()))?;

    let threads = args
        .threads
        .map(|t| t as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bundle_dir = args.out.clone().unwrap_or_else(|| {
        default_bundle_dir(
            &PathBuf::from("runs"),
            &format!("{}{}", args.url.host, args.url.path_and_query),
        )
    });
    let manifest = manifest(&args, &planned, command_line, threads);
    let request = Arc::new(PreparedRequest {
        label: 0,
        bytes: planned
            .request
            .serialize(&args.url, &args.url.path_and_query),
        is_head: planned.request.method.eq_ignore_ascii_case("HEAD"),
        idempotent: planned.request.idempotent(),
        keep_alive: planned.request.keep_alive,
    });
    let plan = EnginePlan {
        connector: Arc::new(connector),
        request,
        labels: 1,
        profile: planned.profile.clone(),
        think: planned.think,
        throughput_cap: args.throughput,
        timeout: args.timeout,
        threads,
        apdex: planned.apdex,
        seed: args.seed,
        jtl: None,
        run_start: Instant::now(),
    };
    let setup = RunSetup {
        manifest,
        bundle_dir,
        label_urls: args
            .jtl
            .then(|| vec![(planned.label.clone(), args.url.url.clone())]),
    };

    let live = !args.quiet && std::io::stderr().is_terminal();
    if !args.quiet && !args.json {
        eprintln!("{}", describe_plan(&args, &planned));
    }
    let interrupt = interrupt_on_signal();
    let on_progress = |p: &Progress| {
        if live {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{}", live_line(p));
            let _ = err.flush();
        }
    };
    let outcome = run_load(
        plan,
        setup,
        async {
            let _ = interrupt.await;
        },
        on_progress,
    )
    .await
    .map_err(|e| Failure::CannotRun(e.into()))?;
    if live {
        eprint!("\r\x1b[2K");
    }
    Ok(report(&args, &outcome))
}

fn describe_plan(args: &LoadArgs, planned: &Planned) -> String {
    let what = match &planned.profile {
        Profile::Closed {
            users,
            ramp_up,
            duration,
            requests,
        } => {
            let mut text = format!("{users} users");
            if !ramp_up.is_zero() {
                text += &format!(", ramp-up {}s", ramp_up.as_secs_f64());
            }
            if let Some(n) = requests {
                text += &format!(", {n} requests");
            }
            if let Some(d) = duration {
                text += &format!(", {}s", d.as_secs_f64());
            }
            if let Some(cap) = args.throughput {
                text += &format!(", capped at {cap}");
            }
            if planned.think != Think::None {
                text += &format!(
                    ", think time {:.2}s on average",
                    planned.think.mean().as_secs_f64()
                );
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
    };
    format!("headroom: {} {} — {what}", planned.request.method, args.url)
}

fn report(args: &LoadArgs, outcome: &RunOutcome) -> ExitCode {
    let verdicts: Vec<Verdict> = args
        .fail_if
        .iter()
        .map(|criterion| match &criterion.label {
            None => criterion.evaluate(Some(&outcome.total)),
            Some(label) => criterion.evaluate(
                outcome
                    .labels
                    .iter()
                    .find(|(name, _)| name == label)
                    .map(|(_, s)| s),
            ),
        })
        .collect();
    let input = ReportInput {
        status: outcome.status,
        bundle: &outcome.bundle,
        target: &args.url.url,
        summary: &outcome.summary,
        warnings: &outcome.warnings,
        verdicts: &verdicts,
    };
    if args.json {
        println!("{}", json_summary(&input));
    } else if !args.quiet {
        print!("{}", render_summary(&input));
    }
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| v.failed).collect();
    if args.quiet {
        for v in &failed {
            eprintln!("headroom: --fail-if {}", v.message);
        }
    }
    if let Some(error) = &outcome.bundle_error {
        eprintln!(
            "headroom: {error}. The run was stopped there; the figures above cover it until then. \
             Free some space or choose another --out."
        );
        ExitCode::from(EXIT_CANNOT_RUN)
    } else if outcome.status == headroom_load::summary::RunStatus::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    }
}
