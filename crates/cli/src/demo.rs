//! `headroom demo`: serves a small page from headroom itself (a stand-in
//! for a real site, with a worker pool of 4, 5–40 ms of "database" time
//! per page and a 600–900 ms report every 25th page) and runs a short closed-model load against it, so a
//! first-time user sees a whole run, its summary and its bundle.

use crate::args::{Cli, Command, DemoArgs};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Concurrent requests the demo site handles, like php-fpm's pm.max_children.
const DEMO_WORKERS: usize = 4;

pub fn run(args: DemoArgs) -> ExitCode {
    if let Some(address) = args.serve {
        return serve_only(address);
    }
    let address = match start_demo_site("127.0.0.1:0".parse().expect("a valid address")) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("headroom: cannot start the demo site: {e}");
            return ExitCode::from(crate::execute::EXIT_CANNOT_RUN);
        }
    };
    let url = format!("http://{address}/course/view.php?id=2");
    let duration = format!("{}ms", args.duration.as_millis());
    // Users start over 2 s, or over half the run when it is shorter.
    let ramp_up = format!(
        "{}ms",
        (args.duration / 2).min(Duration::from_secs(2)).as_millis()
    );
    let mut argv: Vec<String> = [
        "headroom",
        "load",
        &url,
        "-c",
        "20",
        "--ramp-up",
        &ramp_up,
        "-d",
        &duration,
        "--think",
        "100ms..500ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(out) = &args.out {
        argv.push("--out".into());
        argv.push(out.display().to_string());
    } else {
        argv.push("--out".into());
        argv.push(
            headroom_load::run::default_bundle_dir(std::path::Path::new("runs"), "demo")
                .display()
                .to_string(),
        );
    }
    if args.json {
        argv.push("--json".into());
    }
    if args.quiet {
        argv.push("--quiet".into());
    }
    if !args.quiet && !args.json {
        eprintln!(
            "headroom demo: a page served by headroom itself at {url}\n\
             ({DEMO_WORKERS} workers, 5-40 ms per page, every 25th page a 0.6-0.9 s report),\n\
             loaded by 20 users with 0.1-0.5 s think time.\n\
             The built-in testbed (a real LMS on a database) replaces this page once it exists."
        );
    }
    let load = match <Cli as clap::Parser>::try_parse_from(&argv) {
        Ok(Cli {
            command: Command::Load(load),
        }) => *load,
        Ok(_) | Err(_) => {
            eprintln!("headroom: internal error building the demo's load arguments");
            return ExitCode::from(crate::execute::EXIT_CANNOT_RUN);
        }
    };
    crate::load_cmd::run(load)
}

/// `--serve`: the demo site alone, until the process is stopped.
fn serve_only(address: SocketAddr) -> ExitCode {
    match start_demo_site(address) {
        Ok(bound) => {
            eprintln!(
                "headroom demo site on http://{bound}/ ({DEMO_WORKERS} workers); Ctrl-C stops it"
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!(
                "headroom: cannot serve the demo site on {address}: {e}. Is the port in use?"
            );
            ExitCode::from(crate::execute::EXIT_CANNOT_RUN)
        }
    }
}

/// Starts the demo site on `address` in a background thread.
fn start_demo_site(address: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(address)?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("headroom-demo-site".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else {
                    return;
                };
                let pool = Arc::new(Semaphore::new(DEMO_WORKERS));
                let counter = Arc::new(AtomicU64::new(0));
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(serve(stream, pool.clone(), counter.clone()));
                }
            });
        })?;
    Ok(address)
}

async fn serve(mut stream: TcpStream, pool: Arc<Semaphore>, counter: Arc<AtomicU64>) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 8192];
    let mut filled = 0;
    loop {
        // Read one request head (bodies are not expected on this page).
        let head_len = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut request = httparse::Request::new(&mut headers);
            match request.parse(&buf[..filled]) {
                Ok(httparse::Status::Complete(n)) => break n,
                Ok(httparse::Status::Partial) if filled < buf.len() => {}
                _ => return,
            }
            match stream.read(&mut buf[filled..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => filled += n,
            }
        };
        buf.copy_within(head_len..filled, 0);
        filled -= head_len;
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let page = {
            let Ok(_worker) = pool.acquire().await else {
                return;
            };
            // A deterministic spread of "database" time between 5 and 40 ms,
            // and every 25th page a heavy report of 600-900 ms.
            let work = if n % 25 == 24 {
                600 + (n * 7919 % 301)
            } else {
                5 + (n * 7919 % 36)
            };
            tokio::time::sleep(Duration::from_millis(work)).await;
            page(n, work)
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        );
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn page(n: u64, work_ms: u64) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><title>Course: Demo</title></head><body><h1>Demo course</h1><ul>",
    );
    for topic in 1..=12 {
        html.push_str(&format!(
            "<li><a href=\"/mod/page/view.php?id={topic}\">Topic {topic}</a></li>"
        ));
    }
    html.push_str(&format!(
        "</ul><footer>Page {n}; DB queries time: {:.3} secs</footer></body></html>",
        work_ms as f64 / 1000.0
    ));
    html
}
