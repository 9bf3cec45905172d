//! MediaWiki (Debian's package, 1.39, on MariaDB), installed and set up by
//! scripts/mediawiki (idempotent: the test runs it, and it only checks once
//! done), served by nginx and php-fpm on a free port of 127.0.0.1. Its
//! accounts are Headroom1..Headroom5 (password Hr-wiki-pass-N); its
//! database is read to judge what the journeys did.
#![allow(dead_code)]

use super::free_port;
use super::php_site::{serve, setup_script, App, PhpSite};
use std::path::Path;
use std::process::Command;

pub struct MediaWiki {
    pub port: u16,
    _site: PhpSite,
}

pub fn accounts() -> Vec<(String, String)> {
    (1..=5)
        .map(|i| (format!("Headroom{i}"), format!("Hr-wiki-pass-{i}")))
        .collect()
}

/// Runs scripts/mediawiki and serves the wiki from `dir` (its nginx and
/// php-fpm files).
pub fn start(dir: &Path) -> MediaWiki {
    let stdout = setup_script("mediawiki");
    let config = stdout
        .lines()
        .find_map(|l| l.strip_prefix("MEDIAWIKI_CONFIG="))
        .expect("scripts/mediawiki prints MEDIAWIKI_CONFIG=")
        .to_string();
    let port = free_port();
    let pool = format!("env[MW_CONFIG_FILE] = {config}\n");
    let site = serve(
        dir,
        port,
        &App {
            root: Path::new("/usr/share/mediawiki"),
            index: "index.php",
            deny: "maintenance|includes|vendor|cache",
            fpm_pool: &pool,
            h2: false,
        },
    );
    MediaWiki { port, _site: site }
}

/// One number from the wiki's database.
pub fn count(query: &str) -> u64 {
    let out = Command::new("mariadb")
        .args([
            "-u",
            "headroom_wiki",
            "-pheadroom_wiki",
            "-h",
            "127.0.0.1",
            "-N",
            "-B",
            "headroom_wiki",
            "-e",
            query,
        ])
        .output()
        .expect("the mariadb client runs");
    assert!(
        out.status.success(),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{query}: {e}"))
}
