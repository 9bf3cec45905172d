//! A cluster: N instances of the site, each its own process on its own
//! port, behind a real nginx as load balancer (round robin, or sticky by
//! session cookie). The nginx configuration is written where the user can
//! read it; everything stops together.

use crate::Error;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

pub struct ClusterOptions {
    pub nodes: u32,
    /// Where nginx listens, e.g. 127.0.0.1:8080.
    pub listen: String,
    /// The first node's port; nodes use consecutive ports.
    pub first_port: u16,
    /// Host the nodes listen on.
    pub node_host: String,
    /// Arguments every node gets after `testbed serve` (database, stores, workers).
    pub serve_args: Vec<String>,
    pub sticky: bool,
    /// Where the nginx configuration, logs and temporary files go.
    pub dir: PathBuf,
    /// The headroom binary the nodes run.
    pub exe: PathBuf,
}

pub struct Cluster {
    pub nodes: Vec<(String, Child)>,
    pub nginx: Child,
    pub config: PathBuf,
    pub dir: PathBuf,
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Debian's nginx, or the one on PATH.
pub fn find_nginx() -> Result<PathBuf, Error> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("nginx")).collect())
        .unwrap_or_default();
    candidates.push(PathBuf::from("/usr/sbin/nginx"));
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        Error::Invalid(
            "nginx is not installed: install Debian's package (apt-get install nginx)".into(),
        )
    })
}

/// The nginx configuration for these nodes.
pub fn nginx_config(options: &ClusterOptions, dir: &Path, run_as_root: bool) -> String {
    let d = dir.display();
    let balance = if options.sticky {
        "    # sticky: a session stays on the node its cookie hashes to\n    hash $cookie_MoodleSession consistent;\n"
    } else {
        "    # round robin (nginx's default)\n"
    };
    let servers: String = (0..options.nodes)
        .map(|i| {
            format!(
                "    server {}:{};\n",
                options.node_host,
                u32::from(options.first_port) + i
            )
        })
        .collect();
    let user = if run_as_root { "user root root;\n" } else { "" };
    format!(
        "# Written by `headroom testbed cluster`; nginx runs as: nginx -p {d} -c {d}/nginx.conf
{user}worker_processes auto;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {d}/tmp/client_body;
  proxy_temp_path {d}/tmp/proxy;
  fastcgi_temp_path {d}/tmp/fastcgi;
  uwsgi_temp_path {d}/tmp/uwsgi;
  scgi_temp_path {d}/tmp/scgi;
  upstream testbed {{
{balance}{servers}    keepalive 64;
  }}
  server {{
    listen {listen};
    location / {{
      proxy_pass http://testbed;
      proxy_http_version 1.1;
      proxy_set_header Connection \"\";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_max_temp_file_size 0;
    }}
  }}
}}
",
        listen = options.listen,
    )
}

fn port_open(addr: &str) -> bool {
    addr.parse()
        .ok()
        .and_then(|a| TcpStream::connect_timeout(&a, Duration::from_millis(200)).ok())
        .is_some()
}

async fn wait_until_listening(
    what: &str,
    addr: &str,
    child: &mut Child,
    limit: Duration,
) -> Result<(), Error> {
    let started = Instant::now();
    loop {
        if port_open(addr) {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::Invalid(format!(
                "{what} exited ({status}) before listening on {addr}: see its messages above"
            )));
        }
        if started.elapsed() > limit {
            return Err(Error::Invalid(format!(
                "{what} did not listen on {addr} within {} s",
                limit.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Cluster {
    /// Starts the nodes, waits until each listens, then starts nginx.
    /// On any failure, what was started is stopped again.
    pub async fn start(options: &ClusterOptions) -> Result<Cluster, Error> {
        if options.nodes == 0 {
            return Err(Error::Invalid("--nodes must be at least 1".into()));
        }
        if port_open(&options.listen) {
            return Err(Error::Invalid(format!(
                "{} is already in use: pick another --listen address",
                options.listen
            )));
        }
        let nginx_bin = find_nginx()?;
        std::fs::create_dir_all(options.dir.join("tmp")).map_err(|e| io_error(&options.dir, e))?;
        let dir = options
            .dir
            .canonicalize()
            .map_err(|e| io_error(&options.dir, e))?;
        let mut nodes: Vec<(String, Child)> = Vec::new();
        for i in 0..options.nodes {
            let port = u32::from(options.first_port) + i;
            let addr = format!("{}:{port}", options.node_host);
            if port_open(&addr) {
                stop_children(&mut nodes).await;
                return Err(Error::Invalid(format!(
                    "node port {addr} is already in use: pick another --first-port"
                )));
            }
            let name = format!("node{}", i + 1);
            let mut command = Command::new(&options.exe);
            command
                .args(["testbed", "serve", "--listen", &addr, "--node", &name])
                .args(&options.serve_args)
                .stdin(Stdio::null())
                .kill_on_drop(true);
            let spawned = die_with_parent(&mut command).spawn();
            let mut child = match spawned {
                Ok(child) => child,
                Err(e) => {
                    stop_children(&mut nodes).await;
                    return Err(io_error(&options.exe, e));
                }
            };
            let ready =
                wait_until_listening(&name, &addr, &mut child, Duration::from_secs(30)).await;
            nodes.push((addr, child));
            if let Err(e) = ready {
                stop_children(&mut nodes).await;
                return Err(e);
            }
        }
        let config = dir.join("nginx.conf");
        let run_as_root = unsafe { libc::geteuid() } == 0;
        if let Err(e) = std::fs::write(&config, nginx_config(options, &dir, run_as_root)) {
            stop_children(&mut nodes).await;
            return Err(io_error(&config, e));
        }
        let prefix = format!("{}/", dir.display());
        let mut command = Command::new(&nginx_bin);
        command
            .args(["-p", &prefix, "-c"])
            .arg(&config)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let spawned = die_with_parent(&mut command).spawn();
        let mut nginx = match spawned {
            Ok(child) => child,
            Err(e) => {
                stop_children(&mut nodes).await;
                return Err(io_error(&nginx_bin, e));
            }
        };
        if let Err(e) = wait_until_listening(
            "nginx",
            &options.listen,
            &mut nginx,
            Duration::from_secs(10),
        )
        .await
        {
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            let _ = nginx.kill().await;
            stop_children(&mut nodes).await;
            return Err(Error::Invalid(format!(
                "{e}\n{}",
                log.lines().rev().take(5).collect::<Vec<_>>().join("\n")
            )));
        }
        Ok(Cluster {
            nodes,
            nginx,
            config,
            dir,
        })
    }

    /// Waits until one process exits; returns which and how.
    pub async fn wait_for_exit(&mut self) -> String {
        loop {
            if let Ok(Some(status)) = self.nginx.try_wait() {
                return format!(
                    "nginx exited ({status}); see {}",
                    self.dir.join("error.log").display()
                );
            }
            for (addr, child) in &mut self.nodes {
                if let Ok(Some(status)) = child.try_wait() {
                    return format!("the node on {addr} exited ({status})");
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Stops nginx, then the nodes (SIGTERM, then SIGKILL after 5 s).
    pub async fn stop(&mut self) {
        terminate(&mut self.nginx).await;
        stop_children(&mut self.nodes).await;
    }
}

/// The child gets SIGTERM when the cluster process dies, even by SIGKILL,
/// so that no node or nginx outlives it.
fn die_with_parent(command: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        })
    }
}

fn send_sigterm(child: &Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on the pid of a child we own and have not reaped.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
}

/// Waits up to 5 s for a child told to stop, then kills it.
async fn reap(child: &mut Child) {
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

async fn terminate(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    send_sigterm(child);
    reap(child).await;
}

/// Tells every node to stop at once, then reaps them.
async fn stop_children(nodes: &mut Vec<(String, Child)>) {
    for (_, child) in nodes.iter() {
        send_sigterm(child);
    }
    for (_, child) in nodes.iter_mut() {
        reap(child).await;
    }
    nodes.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lists_every_node() {
        let options = ClusterOptions {
            nodes: 3,
            listen: "127.0.0.1:8080".into(),
            first_port: 8081,
            node_host: "127.0.0.1".into(),
            serve_args: vec![],
            sticky: false,
            dir: PathBuf::from("/tmp/c"),
            exe: PathBuf::from("headroom"),
        };
        let conf = nginx_config(&options, Path::new("/tmp/c"), true);
        for port in 8081..=8083 {
            assert!(conf.contains(&format!("server 127.0.0.1:{port};")));
        }
        assert!(!conf.contains("server 127.0.0.1:8084;"));
        assert!(conf.contains("listen 127.0.0.1:8080;") && conf.starts_with("# Written"));
        assert!(conf.contains("user root root;") && !conf.contains("hash $cookie"));
        let sticky = nginx_config(
            &ClusterOptions {
                sticky: true,
                ..options
            },
            Path::new("/tmp/c"),
            false,
        );
        assert!(sticky.contains("hash $cookie_MoodleSession consistent;"));
        assert!(!sticky.contains("user root"));
    }
}
