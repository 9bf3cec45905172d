//! DokuWiki (Debian's package, installed by scripts/services) served by
//! nginx and php-fpm on a free port: a private copy of the application
//! with its own configuration, data and accounts, so the system's wiki is
//! never touched.
#![allow(dead_code)]

use super::{free_port, wait_for_port};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server with worker processes: stopped with SIGTERM, so its master
/// stops its workers (a SIGKILL would leave them running), then killed if
/// it is still there after 5 s.
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: signals a child process this value owns.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub struct DokuWiki {
    pub port: u16,
    /// The wiki's data directory (pages/, attic/, ...).
    pub data: PathBuf,
    // Stopped when the test ends (nginx first).
    _nginx: Daemon,
    _fpm: Daemon,
}

pub fn php_fpm() -> PathBuf {
    let found = std::fs::read_dir("/usr/sbin").ok().and_then(|dir| {
        dir.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("php-fpm"))
        })
    });
    found.unwrap_or_else(|| {
        panic!("php-fpm is not installed: run scripts/services (scripts/test does)")
    })
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
    let socket = dir.join("php.sock");
    std::fs::write(
        dir.join("fpm.conf"),
        format!(
            "[global]\npid = {d}/php-fpm.pid\nerror_log = {d}/php-fpm.log\ndaemonize = no\n\
             [www]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n",
            d = dir.display(),
            s = socket.display()
        ),
    )
    .unwrap();
    let fpm = Command::new(php_fpm())
        .args(["-F", "-R", "-y"])
        .arg(dir.join("fpm.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("php-fpm starts");
    let fpm = Daemon(fpm);
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n  access_log off;\n\
             client_body_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n\
             server {{\n    listen 127.0.0.1:{port};\n    root {app};\n    index doku.php;\n\
             location ~ ^/(data|conf|bin|inc|vendor)/ {{ deny all; }}\n\
             location ~ \\.php$ {{\n      include /etc/nginx/fastcgi_params;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_pass unix:{s};\n    }}\n  }}\n}}\n",
            d = dir.display(),
            app = app.display(),
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
    DokuWiki {
        port,
        data,
        _nginx: Daemon(nginx),
        _fpm: fpm,
    }
}
