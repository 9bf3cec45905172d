//! `headroom demo --serve`: a one-page course site on the scripted server,
//! with a pool of [`WORKERS`] workers. Each page holds a worker for a
//! deterministic spread of "database" time between 5 and 40 ms, and every
//! 25th page is a heavy report of 600–900 ms.

use crate::scripted::{Reply, Request, ScriptedServer};
use std::net::SocketAddr;
use std::time::Duration;

/// Requests served at once; the others wait (php-fpm's pm.max_children).
pub const WORKERS: usize = 4;

/// Serves the demo site on `address`.
pub fn start(address: SocketAddr) -> std::io::Result<ScriptedServer> {
    ScriptedServer::bind(address, Some(WORKERS), reply)
}

fn reply(request: &Request) -> Reply {
    let n = request.number - 1;
    let work = if n % 25 == 24 {
        600 + (n * 7919 % 301)
    } else {
        5 + (n * 7919 % 36)
    };
    Reply {
        delay: Duration::from_millis(work),
        headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
        text: Some(page(n, work)),
        ..Reply::default()
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
