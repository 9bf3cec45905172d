//! The words of `headroom testbed init|serve|plan|info|cluster`: where a
//! dataset's files go by default, what init made, the class written, a
//! dataset's counts (text and JSON), the serving and cluster banners, and
//! the flags each node of a cluster is served with. The CLI maps its flags
//! to the options, runs and prints.

use crate::class::ClassFiles;
use crate::cluster::Cluster;
use crate::generate::{DatasetCounts, DatasetMeta, InitOptions, InitReport};
use crate::site::{Site, SiteConfig};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Next to a SQLite file (`lms.db` -> `lms.db.files`), else ./testbed-files.
pub fn default_data_dir(db_url: &str) -> PathBuf {
    match db_url.strip_prefix("sqlite:") {
        Some(path) => {
            let path = path.trim_start_matches("//");
            let path = path.split('?').next().unwrap_or(path);
            PathBuf::from(format!("{path}.files"))
        }
        None => PathBuf::from("testbed-files"),
    }
}

/// What `init` is about to make, in the database shown as `shown`.
pub fn generating_line(options: &InitOptions, shown: &str) -> String {
    format!(
        "headroom: generating the size {} dataset (seed {}) in {} ...",
        options.size, options.seed, shown
    )
}

/// What `init` made, and what to do next with the database `db_url`.
pub fn init_lines(report: &InitReport, db_url: &str) -> Vec<String> {
    let c = &report.counts;
    vec![
        format!(
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
        ),
        format!("Files:     {}", report.data_dir.display()),
        format!(
            "Users CSV: {} (username,password)",
            report.users_csv.display()
        ),
        format!(
            "Next:      headroom testbed serve --db {}   and   headroom testbed plan --db {} > journey.yaml",
            db_url, db_url
        ),
    ]
}

/// The class's files written in `dir`, and how to search with them.
pub fn class_line(dir: &Path, class: &ClassFiles, base_url: &str) -> String {
    let names: Vec<&str> = class.files.iter().map(|(name, _)| *name).collect();
    format!(
        "{}: {} ({} reader and {} poster accounts); how many students at the start of a lesson: headroom capacity --scenario {} {} --arrive-within 60s",
        dir.display(),
        names.join(", "),
        class.readers,
        class.posters,
        dir.join("class.yaml").display(),
        base_url
    )
}

/// `info --json`: the dataset, what its size should hold and what it holds.
pub fn info_json(shown: &str, meta: &DatasetMeta, counts: &DatasetCounts) -> serde_json::Value {
    serde_json::json!({
        "database": shown,
        "size": meta.size,
        "seed": meta.seed,
        "data_dir": meta.data_dir,
        "users_csv": meta.users_csv,
        "expected": meta.size.dataset(),
        "counts": counts,
    })
}

/// `info`: the dataset and a line per table.
pub fn info_lines(shown: &str, meta: &DatasetMeta, counts: &DatasetCounts) -> Vec<String> {
    let mut lines = vec![format!(
        "{}: size {} dataset (seed {}); files in {}",
        shown,
        meta.size,
        meta.seed,
        meta.data_dir.display()
    )];
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
        lines.push(format!("  {name:<25} {n:>8}"));
    }
    lines
}

/// What `serve` serves, as it starts.
pub fn serve_banner(config: &SiteConfig, site: &Site, addr: SocketAddr) -> String {
    let workers = match config.workers {
        Some(n) => format!("{n} workers"),
        None => "no worker cap".into(),
    };
    format!(
        "headroom testbed ({}): size {} dataset from {}; sessions {}, cache {}, {workers}; http://{addr}/ (Ctrl-C stops)",
        config.node,
        site.meta.size,
        site.db.shown(),
        site.sessions.name(),
        site.cache.name(),
    )
}

/// The flags of `testbed serve` that give each node of a cluster the
/// site `config` describes.
pub fn node_serve_args(config: &SiteConfig) -> Vec<String> {
    let mut serve_args = vec![
        "--db".to_string(),
        config.db_url.clone(),
        "--db-connections".into(),
        config.db_connections.to_string(),
    ];
    serve_args.extend(["--sessions".into(), config.sessions.to_string()]);
    serve_args.extend(["--cache".into(), config.cache.to_string()]);
    if let Some(n) = config.workers {
        serve_args.extend(["--workers".into(), n.to_string()]);
    }
    serve_args
}

/// What `cluster` started, behind nginx on `listen`.
pub fn cluster_banner(cluster: &Cluster, listen: &str, sticky: bool) -> String {
    format!(
        "headroom testbed cluster: {} nodes ({}) behind nginx on http://{}/ ({}); configuration {} (Ctrl-C stops all)",
        cluster.nodes.len(),
        cluster
            .nodes
            .iter()
            .map(|(addr, _)| addr.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        listen,
        if sticky { "sticky sessions" } else { "round robin" },
        cluster.config.display(),
    )
}
