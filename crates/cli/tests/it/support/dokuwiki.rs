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

/// The accounts scenarios/dokuwiki.yaml logs in with (user, password),
/// from scenarios/dokuwiki-users.csv.
/// What a test of Debian's DokuWiki driven by headless Chromium needs:
/// root (Debian keeps its data readable by www-data only), nginx,
/// php-fpm, the package, and the browser.
pub fn in_chromium() -> [super::needs::Need; 7] {
    use super::needs::{browser, program, root};
    let [chromium, playwright] = browser();
    [
        root(),
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("/usr/share/dokuwiki/doku.php", "dokuwiki"),
        program("python3", "python3"),
        chromium,
        playwright,
    ]
}

pub fn scenario_accounts() -> Vec<(String, String)> {
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let users = std::fs::read_to_string(scenarios.join("dokuwiki-users.csv")).unwrap();
    users
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(','))
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .collect()
}

impl DokuWiki {
    /// Runs scenarios/dokuwiki.yaml against the wiki at `target` (3 users,
    /// 2 loops each, the run's bundle in `out`, `extra` flags beside):
    /// holds that its 30 steps passed and that the first 3 `accounts`' pages
    /// hold the text their users typed; returns the JSON summary.
    pub fn run_scenario(
        &self,
        target: &str,
        out: &Path,
        extra: &[&str],
        accounts: &[(String, String)],
    ) -> serde_json::Value {
        let journey = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dokuwiki.yaml");
        let ran = super::headroom()
            .args(["run", journey.to_str().unwrap(), "--target", target])
            .args(extra)
            .args(["-c", "3", "--iterations", "2", "--json", "--out"])
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(0), "{}", super::text(&ran));
        let json = super::stdout_json(&ran);
        assert_eq!(json["total"]["count"], 30, "{}", json["total"]);
        assert_eq!(json["total"]["errors"], 0, "{}", json["total"]);
        assert_eq!(
            json["checks"]["saved text shown"]["passes"], 6,
            "{}",
            json["checks"]
        );
        for (user, _) in accounts.iter().take(3) {
            let page = self.data.join(format!("pages/playground/{user}.txt"));
            let text = std::fs::read_to_string(&page)
                .unwrap_or_else(|e| panic!("{}: {e}", page.display()));
            assert!(
                text.starts_with(&format!("Edited by {user} in loop ")),
                "{text}"
            );
        }
        json
    }
}

/// Serves DokuWiki from `dir` with `accounts` (user, password) able to log in.
pub fn start(dir: &Path, accounts: &[(String, String)]) -> DokuWiki {
    start_on(dir, accounts, false)
}

/// As [`start`], over TLS with HTTP/2 (its base URL https://).
pub fn start_h2(dir: &Path, accounts: &[(String, String)]) -> DokuWiki {
    start_on(dir, accounts, true)
}

fn start_on(dir: &Path, accounts: &[(String, String)], h2: bool) -> DokuWiki {
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
        "\n$conf['savedir'] = '{}';\n$conf['baseurl'] = '{}://127.0.0.1:{port}';\n",
        data.display(),
        if h2 { "https" } else { "http" }
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
            h2,
        },
    );
    DokuWiki {
        port,
        data,
        _site: site,
    }
}
