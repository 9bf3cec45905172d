//! A PHP application from Debian's packages (DokuWiki, MediaWiki) served by
//! php-fpm and nginx on a port of 127.0.0.1, their configuration, sockets
//! and logs in a directory of the test's, so the system's servers are never
//! touched.
#![allow(dead_code)]

use super::wait_for_port;
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

/// What to serve: the application's `root` and `index` page, the top
/// folders nginx refuses (`deny`, e.g. "data|conf"), extra lines for
/// php-fpm's pool (e.g. `env[...]`), and whether nginx speaks TLS with
/// HTTP/2 (and HTTP/1.1) by ALPN, as a browser finds it, with a
/// certificate made for 127.0.0.1.
pub struct App<'a> {
    pub root: &'a Path,
    pub index: &'a str,
    pub deny: &'a str,
    pub fpm_pool: &'a str,
    pub h2: bool,
}

/// The running servers, stopped when the test ends (nginx first).
pub struct PhpSite {
    _nginx: Daemon,
    _fpm: Daemon,
}

/// Runs `scripts/NAME` (an application's idempotent installer), which
/// must succeed; what it printed.
pub fn setup_script(name: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../scripts/{name}"));
    let setup = Command::new(&script)
        .output()
        .unwrap_or_else(|e| panic!("scripts/{name} runs: {e}"));
    assert!(
        setup.status.success(),
        "scripts/{name} failed (run it as root, or run scripts/services):\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    String::from_utf8_lossy(&setup.stdout).into_owned()
}

/// php-fpm, started by `command` (php-fpm or a wrapper of it), with a pool
/// of 4 workers (and `pool`'s own lines) on a socket in `dir` (its files
/// and log there too); returns once the socket is there, with its path.
pub fn pool(dir: &Path, pool: &str, command: &mut Command) -> (Daemon, std::path::PathBuf) {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let socket = dir.join("php.sock");
    std::fs::write(
        dir.join("fpm.conf"),
        format!(
            "[global]\npid = {d}/php-fpm.pid\nerror_log = {d}/php-fpm.log\ndaemonize = no\n\
             [www]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n{pool}",
            d = dir.display(),
            s = socket.display(),
        ),
    )
    .unwrap();
    let fpm = Daemon(
        command
            .args(["-F", "-R", "-y"])
            .arg(dir.join("fpm.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("php-fpm starts"),
    );
    // php-fpm under a wrapper may start slowly (under `emulate --iops
    // 100` its files load at 100 reads a second).
    let started = std::time::Instant::now();
    while !socket.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "php-fpm made no socket in 60 s: {}",
            std::fs::read_to_string(dir.join("php-fpm.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (fpm, socket)
}

/// Serves `app` on `port` of 127.0.0.1 with 4 php-fpm workers.
pub fn serve(dir: &Path, port: u16, app: &App) -> PhpSite {
    serve_under(dir, port, app, &[])
}

/// Serves `app` as [`serve`] does, php-fpm started under `wrapper` (a
/// command and its arguments before php-fpm's, e.g. `headroom emulate
/// --cpus 0.5 --`); none when empty.
pub fn serve_under(dir: &Path, port: u16, app: &App, wrapper: &[&str]) -> PhpSite {
    let mut command = match wrapper.split_first() {
        Some((program, arguments)) => {
            let mut command = Command::new(program);
            command.args(arguments).arg(php_fpm());
            command
        }
        None => Command::new(php_fpm()),
    };
    let (fpm, socket) = pool(dir, app.fpm_pool, &mut command);
    let listen = if app.h2 {
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
        format!(
            "listen 127.0.0.1:{port} ssl http2;\n    ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;",
            d = dir.display()
        )
    } else {
        format!("listen 127.0.0.1:{port};")
    };
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n\
             log_format pages '$request_uri $status \"$http_user_agent\" $server_protocol';\n\
             access_log {d}/access.log pages;\n\
             client_body_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n\
             server {{\n    {listen}\n    root {root};\n    index {index};\n\
             location ~ ^/({deny})/ {{ deny all; }}\n\
             location ~ \\.php$ {{\n      include /etc/nginx/fastcgi_params;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_pass unix:{s};\n    }}\n  }}\n}}\n",
            d = dir.display(),
            root = app.root.display(),
            index = app.index,
            deny = app.deny,
            s = socket.display()
        ),
    )
    .unwrap();
    PhpSite {
        _nginx: nginx(&dir.join("nginx.conf"), port),
        _fpm: fpm,
    }
}

/// nginx serving on a free port as `server` says (its locations, root,
/// modules' settings), with `http` lines before it (a log format, an
/// access log), its files in `dir`. Returns nginx and its port.
pub fn nginx_serving(dir: &Path, http: &str, server: &str) -> (Daemon, u16) {
    let port = crate::support::free_port();
    let http = format!("{http}\n  server {{\n    listen 127.0.0.1:{port};\n{server}\n  }}\n");
    (nginx_http(dir, &http, port), port)
}

/// nginx with `http` as its http block's own lines (servers, log formats),
/// its files in `dir`, once it listens on `port`.
pub fn nginx_http(dir: &Path, http: &str, port: u16) -> Daemon {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n  client_body_temp_path {d}/tmp;\n{http}}}\n",
            d = dir.display()
        ),
    )
    .unwrap();
    nginx(&dir.join("nginx.conf"), port)
}

/// nginx in the foreground with `conf`, once it listens on `port`.
pub fn nginx(conf: &Path, port: u16) -> Daemon {
    let mut nginx = Command::new("/usr/sbin/nginx")
        .arg("-c")
        .arg(conf)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nginx starts (scripts/services installs it)");
    wait_for_port(port, &mut nginx, "nginx");
    Daemon(nginx)
}

/// nginx in front of the server on `upstream`, on a free port, writing
/// every request to `dir`/access.log in `log_format`: a server's access
/// log as its administrator has it. Returns nginx and its port.
pub fn logging_proxy(dir: &Path, upstream: u16, log_format: &str) -> (Daemon, u16) {
    let port = crate::support::free_port();
    let log = format!(
        "log_format given '{log_format}';\n  access_log {}/access.log given;",
        dir.display()
    );
    (proxy(dir, upstream, port, "", 1024, &log, ""), port)
}

/// nginx on `port` in front of the server on `upstream`: `listen` adds
/// to its listen line (e.g. "backlog=16"), `log` is its logging lines,
/// `server` more lines of its server (e.g. a stub_status location).
pub fn proxy(
    dir: &Path,
    upstream: u16,
    port: u16,
    listen: &str,
    worker_connections: u32,
    log: &str,
    server: &str,
) -> Daemon {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections {worker_connections}; }}\n\
             http {{\n  client_body_temp_path {d}/tmp;\n  proxy_temp_path {d}/tmp;\n\
             {log}\n\
             server {{\n    listen 127.0.0.1:{port} {listen};\n    {server}\n\
             location / {{ proxy_pass http://127.0.0.1:{upstream}; proxy_set_header Host $http_host; }}\n  }}\n}}\n",
            d = dir.display()
        ),
    )
    .unwrap();
    nginx(&dir.join("nginx.conf"), port)
}
