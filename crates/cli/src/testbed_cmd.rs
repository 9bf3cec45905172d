//! `headroom testbed init|serve|plan|info|cluster`.

use crate::args::{
    SiteArgs, TestbedClusterArgs, TestbedCommand, TestbedInfoArgs, TestbedInitArgs,
    TestbedPlanArgs, TestbedServeArgs,
};
use crate::execute::{EXIT_CANNOT_RUN, EXIT_INTERRUPTED};
use crate::signals::interrupt_on_signal;
use headroom_testbed::class;
use headroom_testbed::cluster::{Cluster, ClusterOptions};
use headroom_testbed::db::{Create, Database, Durability};
use headroom_testbed::generate::{self, InitOptions};
use headroom_testbed::plan::{self, PlanOptions};
use headroom_testbed::site::{Site, SiteConfig};
use headroom_testbed::{server, Error};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(command: TestbedCommand) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("headroom: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let result = runtime.block_on(async move {
        match command {
            TestbedCommand::Init(args) => init(args).await,
            TestbedCommand::Serve(args) => serve(args).await,
            TestbedCommand::Plan(args) => plan(args).await,
            TestbedCommand::Info(args) => info(args).await,
            TestbedCommand::Cluster(args) => cluster(args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}

/// Next to a SQLite file (`lms.db` -> `lms.db.files`), else ./testbed-files.
fn default_data_dir(db_url: &str) -> PathBuf {
    match db_url.strip_prefix("sqlite:") {
        Some(path) => {
            let path = path.trim_start_matches("//");
            let path = path.split('?').next().unwrap_or(path);
            PathBuf::from(format!("{path}.files"))
        }
        None => PathBuf::from("testbed-files"),
    }
}

async fn init(args: TestbedInitArgs) -> Result<ExitCode, Error> {
    let db = Database::connect(&args.db, Create::IfMissing, Durability::Full, 2).await?;
    let options = InitOptions {
        size: args.size,
        seed: args.seed,
        data_dir: args.data_dir.unwrap_or_else(|| default_data_dir(&args.db)),
        force: args.force,
    };
    if !args.json {
        eprintln!(
            "headroom: generating the size {} dataset (seed {}) in {} ...",
            options.size,
            options.seed,
            db.shown()
        );
    }
    let report = generate::init(&db, &options).await?;
    db.close().await;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let c = &report.counts;
    println!(
        "Created the size {} dataset in {:.1} s: {} users enrolled, {} sections, {} assignments, {} pages, \
         {} small and {} big files ({:.1} MB), {} forum posts in {} discussions.",
        report.size,
        report.seconds,
        c.enrolled,
        c.sections,
        c.assignments,
        c.pages,
        c.small_files,
        c.big_files,
        report.file_bytes as f64 / 1e6,
        c.forum_posts,
        c.forum_discussions,
    );
    println!("Files:     {}", report.data_dir.display());
    println!(
        "Users CSV: {} (username,password)",
        report.users_csv.display()
    );
    println!(
        "Next:      headroom testbed serve --db {}   and   headroom testbed plan --db {} > journey.yaml",
        args.db, args.db
    );
    Ok(ExitCode::SUCCESS)
}

fn site_config(site: &SiteArgs, node: &str) -> SiteConfig {
    SiteConfig {
        db_url: site.db.clone(),
        sessions: site.sessions.clone(),
        cache: site.cache.clone(),
        workers: site.workers,
        node: node.to_string(),
        db_connections: site.db_connections,
    }
}

async fn serve(args: TestbedServeArgs) -> Result<ExitCode, Error> {
    let config = site_config(&args.site, &args.node);
    let site = Site::open(&config).await?;
    let listener = server::bind(&args.listen)
        .await
        .map_err(|source| Error::Io {
            path: PathBuf::from(&args.listen),
            source,
        })?;
    let addr = server::local_addr(&listener).map_err(|source| Error::Io {
        path: PathBuf::from(&args.listen),
        source,
    })?;
    let workers = match config.workers {
        Some(n) => format!("{n} workers"),
        None => "no worker cap".into(),
    };
    eprintln!(
        "headroom testbed ({}): size {} dataset from {}; sessions {}, cache {}, {workers}; http://{addr}/ (Ctrl-C stops)",
        config.node,
        site.meta.size,
        site.db.shown(),
        site.sessions.name(),
        site.cache.name(),
    );
    let interrupted = interrupt_on_signal();
    server::serve(site.clone(), listener, async move {
        let _ = interrupted.await;
    })
    .await
    .map_err(|source| Error::Io {
        path: PathBuf::from(&args.listen),
        source,
    })?;
    site.db.close().await;
    Ok(ExitCode::SUCCESS)
}

async fn plan(args: TestbedPlanArgs) -> Result<ExitCode, Error> {
    let db = Database::connect(&args.db, Create::MustExist, Durability::Full, 1).await?;
    let meta = generate::meta(&db).await?;
    let ids = plan::ids(&db).await?;
    db.close().await;
    if let Some(dir) = &args.class {
        let class = class::files(&meta, &ids, &args.base_url)?;
        class::write(dir, &class)?;
        let names: Vec<&str> = class.files.iter().map(|(name, _)| *name).collect();
        println!(
            "{}: {} ({} reader and {} poster accounts); how many students at the start of a lesson: headroom capacity --scenario {} {} --arrive-within 60s",
            dir.display(),
            names.join(", "),
            class.readers,
            class.posters,
            dir.join("class.yaml").display(),
            args.base_url
        );
        return Ok(ExitCode::SUCCESS);
    }
    let options = PlanOptions {
        base_url: args.base_url,
        users: args.users,
        loops: args.loops,
        ramp_up_s: args.ramp_up,
    };
    print!("{}", plan::render(&meta, &ids, &options));
    Ok(ExitCode::SUCCESS)
}

async fn info(args: TestbedInfoArgs) -> Result<ExitCode, Error> {
    let db = Database::connect(&args.db, Create::MustExist, Durability::Full, 1).await?;
    let meta = generate::meta(&db).await?;
    let counts = generate::counts(&db).await?;
    db.close().await;
    if args.json {
        let value = serde_json::json!({
            "database": db.shown(),
            "size": meta.size,
            "seed": meta.seed,
            "data_dir": meta.data_dir,
            "users_csv": meta.users_csv,
            "expected": meta.size.dataset(),
            "counts": counts,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: size {} dataset (seed {}); files in {}",
        db.shown(),
        meta.size,
        meta.seed,
        meta.data_dir.display()
    );
    let rows = [
        ("users", counts.users),
        ("enrolled", counts.enrolled),
        ("sections", counts.sections),
        ("assignments", counts.assignments),
        ("pages", counts.pages),
        ("small files", counts.small_files),
        ("big files", counts.big_files),
        ("forum discussions", counts.forum_discussions),
        ("forum posts", counts.forum_posts),
        ("log rows", counts.logs),
        ("sessions in the database", counts.sessions),
    ];
    for (name, n) in rows {
        println!("  {name:<25} {n:>8}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn cluster(args: TestbedClusterArgs) -> Result<ExitCode, Error> {
    // Check the database and stores once here, so a mistake is one clear
    // message rather than one per node.
    let site = Site::open(&site_config(&args.site, "check")).await?;
    site.db.close().await;
    drop(site);
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        path: PathBuf::from("headroom"),
        source,
    })?;
    let mut serve_args = vec![
        "--db".to_string(),
        args.site.db.clone(),
        "--db-connections".into(),
        args.site.db_connections.to_string(),
    ];
    serve_args.extend(["--sessions".into(), args.site.sessions.to_string()]);
    serve_args.extend(["--cache".into(), args.site.cache.to_string()]);
    if let Some(n) = args.site.workers {
        serve_args.extend(["--workers".into(), n.to_string()]);
    }
    let options = ClusterOptions {
        nodes: args.nodes,
        listen: args.listen.clone(),
        first_port: args.first_port,
        node_host: "127.0.0.1".into(),
        serve_args,
        sticky: args.sticky,
        dir: args.dir.clone(),
        exe,
    };
    let mut cluster = Cluster::start(&options).await?;
    eprintln!(
        "headroom testbed cluster: {} nodes ({}) behind nginx on http://{}/ ({}); configuration {} (Ctrl-C stops all)",
        cluster.nodes.len(),
        cluster
            .nodes
            .iter()
            .map(|(addr, _)| addr.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        args.listen,
        if args.sticky { "sticky sessions" } else { "round robin" },
        cluster.config.display(),
    );
    let interrupted = interrupt_on_signal();
    let code = tokio::select! {
        _ = interrupted => ExitCode::from(EXIT_INTERRUPTED),
        why = cluster.wait_for_exit() => {
            eprintln!("headroom: {why}; stopping the cluster");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    };
    cluster.stop().await;
    eprintln!("headroom testbed cluster: stopped");
    Ok(code)
}
