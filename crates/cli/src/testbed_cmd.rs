//! `headroom testbed init|serve|plan|info|cluster`: the flags mapped to
//! the testbed's options, run; the words are
//! [`headroom_testbed::testbed_text`]'s.

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
use headroom_testbed::testbed_text::{
    class_line, cluster_banner, default_data_dir, generating_line, info_json, info_lines,
    init_lines, node_serve_args, serve_banner,
};
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

async fn init(args: TestbedInitArgs) -> Result<ExitCode, Error> {
    let db = Database::connect(&args.db, Create::IfMissing, Durability::Full, 2).await?;
    let options = InitOptions {
        size: args.size,
        seed: args.seed,
        data_dir: args.data_dir.unwrap_or_else(|| default_data_dir(&args.db)),
        force: args.force,
    };
    if !args.json {
        eprintln!("{}", generating_line(&options, db.shown()));
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
    for line in init_lines(&report, &args.db) {
        println!("{line}");
    }
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
    eprintln!("{}", serve_banner(&config, &site, addr));
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
        println!("{}", class_line(dir, &class, &args.base_url));
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
        let value = info_json(db.shown(), &meta, &counts);
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for line in info_lines(db.shown(), &meta, &counts) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn cluster(args: TestbedClusterArgs) -> Result<ExitCode, Error> {
    // Check the database and stores once here, so a mistake is one clear
    // message rather than one per node.
    let config = site_config(&args.site, "check");
    let site = Site::open(&config).await?;
    site.db.close().await;
    drop(site);
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        path: PathBuf::from("headroom"),
        source,
    })?;
    let options = ClusterOptions {
        nodes: args.nodes,
        listen: args.listen.clone(),
        first_port: args.first_port,
        node_host: "127.0.0.1".into(),
        serve_args: node_serve_args(&config),
        sticky: args.sticky,
        dir: args.dir.clone(),
        exe,
    };
    let mut cluster = Cluster::start(&options).await?;
    eprintln!("{}", cluster_banner(&cluster, &args.listen, args.sticky));
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
