//! DokuWiki (Debian's package, installed by scripts/services) served by
//! nginx and php-fpm on a free port: a private copy of the application
//! with its own configuration, data and accounts, so the system's wiki is
//! never touched.
#![allow(dead_code)]

use super::free_port;
use super::php_site::{serve, App, PhpSite};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct DokuWiki {
    pub port: u16,
    /// The wiki's data directory (pages/, attic/, ...).
    pub data: PathBuf,
    _site: PhpSite,
}

fn copy(from: &str, to: &Path) {
    let status = Command::new("cp")
        .args(["-a", from])
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "cp -a {from} {}", to.display());
}

/// Serves DokuWiki from `dir` with `accounts` (user, password) able to log in.
pub fn start(dir: &Path, accounts: &[(String, String)]) -> DokuWiki {
    assert!(
        Path::new("/usr/share/dokuwiki/doku.php").exists(),
        "DokuWiki is not installed: run scripts/services (scripts/test does)"
    );
    std::fs::create_dir_all(dir).unwrap();
    let (app, conf, data) = (dir.join("app"), dir.join("conf"), dir.join("data"));
    copy("/usr/share/dokuwiki", &app);
    copy("/etc/dokuwiki", &conf);
    copy("/var/lib/dokuwiki/data", &data);
    let port = free_port();
    std::fs::write(
        app.join("inc/preload.php"),
        format!(
            "<?php\nif(!defined('DOKU_CONF')) define('DOKU_CONF', '{}/');\n",
            conf.display()
        ),
    )
    .unwrap();
    let mut local = std::fs::read_to_string(conf.join("local.php")).unwrap();
    local.push_str(&format!(
        "\n$conf['savedir'] = '{}';\n$conf['baseurl'] = 'http://127.0.0.1:{port}';\n",
        data.display()
    ));
    std::fs::write(conf.join("local.php"), local).unwrap();
    // DokuWiki reads unsalted MD5 hashes as well as its own formats.
    let mut users = String::new();
    for (user, password) in accounts {
        let digest = Command::new("md5sum")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(password.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        let hash = String::from_utf8_lossy(&digest.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        users.push_str(&format!("{user}:{hash}:{user}:{user}@localhost:user\n"));
    }
    std::fs::write(conf.join("users.auth.php"), users).unwrap();
    let site = serve(
        dir,
        port,
        &App {
            root: &app,
            index: "doku.php",
            deny: "data|conf|bin|inc|vendor",
            fpm_pool: "",
        },
    );
    DokuWiki {
        port,
        data,
        _site: site,
    }
}
