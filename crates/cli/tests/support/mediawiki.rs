//! MediaWiki (Debian's package, 1.39, on MariaDB), installed and set up by
//! scripts/mediawiki (idempotent: the test runs it, and it only checks once
//! done), served by nginx and php-fpm on a free port of 127.0.0.1. Its
//! accounts are Headroom1..Headroom5 (password Hr-wiki-pass-N); its
//! database is read to judge what the journeys did.
#![allow(dead_code)]

use super::dokuwiki::{php_fpm, Daemon};
use super::{free_port, wait_for_port};
use std::path::Path;
use std::process::{Command, Stdio};

pub struct MediaWiki {
    pub port: u16,
    _nginx: Daemon,
    _fpm: Daemon,
}

pub fn accounts() -> Vec<(String, String)> {
    (1..=5)
        .map(|i| (format!("Headroom{i}"), format!("Hr-wiki-pass-{i}")))
        .collect()
}

/// Runs scripts/mediawiki and serves the wiki from `dir` (its nginx and
/// php-fpm files).
pub fn start(dir: &Path) -> MediaWiki {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mediawiki");
    let setup = Command::new(&script)
        .output()
        .expect("scripts/mediawiki runs");
    assert!(
        setup.status.success(),
        "scripts/mediawiki failed (run it as root, or run scripts/services):\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let stdout = String::from_utf8_lossy(&setup.stdout);
    let config = stdout
        .lines()
        .find_map(|l| l.strip_prefix("MEDIAWIKI_CONFIG="))
        .expect("scripts/mediawiki prints MEDIAWIKI_CONFIG=")
        .to_string();
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let socket = dir.join("php.sock");
    std::fs::write(
        dir.join("fpm.conf"),
        format!(
            "[global]\npid = {d}/php-fpm.pid\nerror_log = {d}/php-fpm.log\ndaemonize = no\n\
             [www]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n\
             env[MW_CONFIG_FILE] = {config}\n",
            d = dir.display(),
            s = socket.display()
        ),
    )
    .unwrap();
    let fpm = Daemon(
        Command::new(php_fpm())
            .args(["-F", "-R", "-y"])
            .arg(dir.join("fpm.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("php-fpm starts"),
    );
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let port = free_port();
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n  access_log off;\n\
             client_body_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n\
             server {{\n    listen 127.0.0.1:{port};\n    root /usr/share/mediawiki;\n    index index.php;\n\
             location ~ ^/(maintenance|includes|vendor|cache)/ {{ deny all; }}\n\
             location ~ \\.php$ {{\n      include /etc/nginx/fastcgi_params;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_pass unix:{s};\n    }}\n  }}\n}}\n",
            d = dir.display(),
            s = socket.display()
        ),
    )
    .unwrap();
    let mut nginx = Command::new("/usr/sbin/nginx")
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nginx starts");
    wait_for_port(port, &mut nginx, "nginx");
    MediaWiki {
        port,
        _nginx: Daemon(nginx),
        _fpm: fpm,
    }
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
