//! `headroom demo`: the whole job on this machine with embedded defaults:
//! the testbed (size S on SQLite in a temporary directory) on 127.0.0.1, a
//! short capacity search against it with Moodle's journey and local
//! monitoring, the HTML report with the capacity curve, and the verdict.
//! `--serve ADDR` serves a small built-in page instead (a worker pool of 4,
//! 5–40 ms per page, a 600–900 ms report every 25th page) to try scenarios.

use crate::args::{Cli, Command, DemoArgs};
use crate::execute::EXIT_CANNOT_RUN;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(args: DemoArgs) -> ExitCode {
    if let Some(address) = args.serve {
        return serve_only(address);
    }
    let runtime = match crate::execute::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(capacity_demo(args))
}

/// The testbed in a temporary directory, served on 127.0.0.1 by its own
/// runtime on a background thread until `stop` is dropped.
struct Testbed {
    url: String,
    plan: PathBuf,
    dir: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start_testbed(quiet: bool) -> Result<Testbed, String> {
    use headroom_testbed::db::{Create, Database, Durability};
    use headroom_testbed::generate::{self, InitOptions};
    use headroom_testbed::site::{Site, SiteConfig};
    use headroom_testbed::store::{CacheSpec, SessionSpec};
    let dir = std::env::temp_dir().join(format!("headroom-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let db_url = format!("sqlite:{}", dir.join("lms.db").display());
    let db = Database::connect(&db_url, Create::IfMissing, Durability::Full, 2)
        .await
        .map_err(|e| e.to_string())?;
    let options = InitOptions {
        size: headroom_testbed::Size::S,
        seed: 1,
        data_dir: dir.join("files"),
        force: true,
    };
    generate::init(&db, &options)
        .await
        .map_err(|e| e.to_string())?;
    let meta = generate::meta(&db).await.map_err(|e| e.to_string())?;
    let ids = headroom_testbed::plan::ids(&db)
        .await
        .map_err(|e| e.to_string())?;
    db.close().await;
    let config = SiteConfig {
        db_url,
        sessions: SessionSpec::Db,
        cache: CacheSpec::Local,
        workers: None,
        node: "demo".into(),
        db_connections: 10,
    };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<std::net::SocketAddr, String>>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("headroom-demo-testbed".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            runtime.block_on(async move {
                let site = match Site::open(&config).await {
                    Ok(site) => site,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let listener = match headroom_testbed::server::bind("127.0.0.1:0").await {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = ready_tx.send(listener.local_addr().map_err(|e| e.to_string()));
                let _ = headroom_testbed::server::serve(site.clone(), listener, async move {
                    let _ = stop_rx.await;
                })
                .await;
                site.db.close().await;
            });
        })
        .map_err(|e| e.to_string())?;
    let address = ready_rx
        .recv()
        .map_err(|_| "the testbed thread ended before it listened".to_string())??;
    let url = format!("http://{address}");
    let plan = dir.join("journey.yaml");
    let options = headroom_testbed::plan::PlanOptions {
        base_url: url.clone(),
        users: None,
        loops: None,
        ramp_up_s: None,
    };
    std::fs::write(&plan, headroom_testbed::plan::render(&meta, &ids, &options))
        .map_err(|e| format!("{}: {e}", plan.display()))?;
    if !quiet {
        eprintln!(
            "headroom demo: the testbed (size S: 100 users, 10 sections, 50 pages, a forum) on SQLite at {url}/, \
             with Moodle's 14-step journey"
        );
    }
    Ok(Testbed {
        url,
        plan,
        dir,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

/// What one of the demo's users is, printed under its answer: the figure
/// counts request loops, not people reading pages.
pub const DEMO_USER: &str =
    "A demo user runs Moodle's 14-step journey in a loop with no time to read \
between pages: it asks for far more than a student, who reads for tens of seconds between clicks \
(give your users their think time: see \"Users who think\" in docs/capacity.md).";

/// Starts the testbed, searches its capacity (local monitoring), writes
/// the HTML report, prints its path and the verdict, stops the testbed.
async fn capacity_demo(args: DemoArgs) -> ExitCode {
    let quiet = args.quiet || args.json;
    let testbed = match start_testbed(quiet).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("headroom: cannot start the demo testbed: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| headroom_load::run::default_bundle_dir(Path::new("runs"), "demo"));
    let step = format!("{}ms", args.duration.as_millis());
    let mut argv: Vec<String> = [
        "headroom",
        "capacity",
        &testbed.url,
        "--scenario",
        &testbed.plan.display().to_string(),
        "--monitor",
        "local",
        "--apdex-target",
        "0.70",
        "--start",
        "10",
        "--step",
        "30",
        "--max",
        "1000",
        "--resolution",
        "40",
        "--step-duration",
        &step,
        "--warmup",
        "2s",
        "--warmup-min",
        "1s",
        "--min-step-duration",
        "2s",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if quiet {
        argv.push("--quiet".into());
    }
    let capacity = match <Cli as clap::Parser>::try_parse_from(&argv) {
        Ok(Cli {
            command: Command::Capacity(capacity),
        }) => *capacity,
        Ok(_) | Err(_) => {
            eprintln!("headroom: internal error building the demo's capacity arguments");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let searched = match crate::capacity_cmd::search(capacity).await {
        Ok(s) => s,
        Err(crate::execute::Failure::Usage(e)) | Err(crate::execute::Failure::CannotRun(e)) => {
            eprintln!("headroom: {}", crate::execute::describe(&e));
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    drop(testbed);
    let result = &searched.result;
    let value = serde_json::to_value(result).unwrap_or_default();
    let report = out.join("report.html");
    let html = headroom_report::capacity_html::render_capacity_report(result);
    if let Err(e) = std::fs::write(&report, html) {
        eprintln!("headroom: cannot write {}: {e}", report.display());
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        println!("\nheadroom demo: {}", result.verdict);
        println!("{DEMO_USER}");
        println!("Report: {}", report.display());
    }
    searched.code
}

/// `--serve`: the demo site alone, until the process is stopped.
fn serve_only(address: SocketAddr) -> ExitCode {
    match headroom_testbed::demo_site::start(address) {
        Ok(site) => {
            eprintln!(
                "headroom demo site on http://{}/ ({} workers); Ctrl-C stops it",
                site.addr,
                headroom_testbed::demo_site::WORKERS
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!(
                "headroom: cannot serve the demo site on {address}: {e}. Is the port in use?"
            );
            ExitCode::from(crate::execute::EXIT_CANNOT_RUN)
        }
    }
}
