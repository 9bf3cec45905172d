//! nginx's own count of its connections: the stub_status page, found on
//! a port the watched nginx listens on at one of the paths people give
//! it (as monitoring agents look for it), and the worker_connections its
//! configuration allows each worker. A page found is remembered; a port
//! without one is asked again a minute later, so the server's access log
//! holds a few of headroom's looks, not four a second.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The paths a stub_status page is usually given.
pub const PATHS: [&str; 4] = ["/nginx_status", "/stub_status", "/basic_status", "/status"];
/// How long a port without a page is left before it is asked again.
const ASK_AGAIN: Duration = Duration::from_secs(60);
/// What a look that found no connection free says, in its reason.
pub const NO_CONNECTION_FREE: &str = "no connection was free to serve it";
/// nginx's worker_connections when its configuration does not say.
pub const DEFAULT_WORKER_CONNECTIONS: u64 = 512;

/// The page's figures at one look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StubStatus {
    /// Open client connections, idle ones included.
    pub active: u64,
    pub accepts: u64,
    pub handled: u64,
    pub requests: u64,
    pub reading: u64,
    /// Requests whose response is being made or sent (the page's own
    /// request among them).
    pub writing: u64,
    /// Idle keep-alive connections.
    pub waiting: u64,
}

/// A watched nginx at one look: its page's figures (or why there are
/// none), its workers, and each worker's worker_connections.
#[derive(Debug, Clone, PartialEq)]
pub struct NginxLook {
    pub status: Result<StubStatus, String>,
    /// The latest page that was answered, this look's or an earlier one
    /// (the sampler carries it over looks that were not): the
    /// connections closed unserved are counted from it.
    pub last_answered: Option<StubStatus>,
    pub workers: u32,
    pub worker_connections: u64,
    /// Whether worker_connections came from its configuration (else
    /// nginx's default).
    pub configured: bool,
}

enum Found {
    Page(&'static str),
    Nothing(Instant),
}

fn found() -> &'static Mutex<BTreeMap<SocketAddr, Found>> {
    static FOUND: std::sync::OnceLock<Mutex<BTreeMap<SocketAddr, Found>>> =
        std::sync::OnceLock::new();
    FOUND.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The page's figures on the first of `addresses` that serves one.
pub fn read(addresses: &[SocketAddr]) -> Result<StubStatus, String> {
    for &at in addresses {
        let known = found().lock().ok().and_then(|f| match f.get(&at) {
            Some(Found::Page(path)) => Some(Some(*path)),
            Some(Found::Nothing(when)) if when.elapsed() < ASK_AGAIN => Some(None),
            _ => None,
        });
        match known {
            Some(Some(path)) => return ask(at, path),
            Some(None) => continue,
            None => {}
        }
        for path in PATHS {
            match ask(at, path) {
                Ok(status) => {
                    if let Ok(mut f) = found().lock() {
                        f.insert(at, Found::Page(path));
                    }
                    return Ok(status);
                }
                // Not served: whether it has a page is not known yet, so
                // neither is how full it is (a full accept queue does this
                // too). Asked again next look.
                Err(e) if e.contains(NO_CONNECTION_FREE) => {
                    return Err(format!(
                        "no stub_status page was found yet: nginx had no connection free to answer {path} ({})",
                        e.split_once(" (").map_or(e.as_str(), |(first, _)| first)
                    ))
                }
                Err(_) => {}
            }
        }
        if let Ok(mut f) = found().lock() {
            f.insert(at, Found::Nothing(Instant::now()));
        }
    }
    Err(format!(
        "it serves no stub_status page on its local ports at {} (add `location = /nginx_status {{ stub_status; allow 127.0.0.1; deny all; }}`)",
        PATHS.join(", ")
    ))
}

/// Asks `path` at `at`; the figures, or why not.
fn ask(at: SocketAddr, path: &str) -> Result<StubStatus, String> {
    use crate::server_status::{local_page, PageError};
    // nginx out of worker_connections accepts and closes at once; one
    // whose accept queue is full does not answer in time.
    let body = local_page(at, path).map_err(|e| match e {
        PageError::Late => format!(
            "its stub_status page did not answer within {} ms ({NO_CONNECTION_FREE})",
            crate::server_status::STATUS_TIMEOUT.as_millis()
        ),
        PageError::Closed => format!(
            "nginx closed the connection to its stub_status page unanswered ({NO_CONNECTION_FREE})"
        ),
        PageError::Failed(e) => format!("its stub_status page could not be read: {e}"),
        PageError::Status(line) => format!("{path} answered {line}"),
    })?;
    parse(&body).ok_or_else(|| format!("{path} is not a stub_status page"))
}

/// A stub_status page's figures:
/// ```text
/// Active connections: 2
/// server accepts handled requests
///  10 10 31
/// Reading: 0 Writing: 1 Waiting: 1
/// ```
pub fn parse(body: &str) -> Option<StubStatus> {
    let mut lines = body.lines().map(str::trim);
    let active = lines
        .next()?
        .strip_prefix("Active connections:")?
        .trim()
        .parse()
        .ok()?;
    if lines.next()? != "server accepts handled requests" {
        return None;
    }
    let counts: Vec<u64> = lines
        .next()?
        .split_whitespace()
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [accepts, handled, requests] = counts[..] else {
        return None;
    };
    let states: Vec<&str> = lines.next()?.split_whitespace().collect();
    let state = |name: &str| -> Option<u64> {
        let at = states.iter().position(|w| *w == name)?;
        states.get(at + 1)?.parse().ok()
    };
    Some(StubStatus {
        active,
        accepts,
        handled,
        requests,
        reading: state("Reading:")?,
        writing: state("Writing:")?,
        waiting: state("Waiting:")?,
    })
}

/// The worker_connections of the configuration nginx was started with
/// (`cmdline`: its master's /proc/PID/cmdline, NUL-separated; `-c FILE`,
/// else Debian's /etc/nginx/nginx.conf), under `root` (a fixture tree in
/// tests, "/" otherwise); None when the file does not say.
pub fn worker_connections(root: &Path, cmdline: &[u8]) -> Option<u64> {
    // nginx writes its title over its arguments ("nginx: master process
    // /usr/sbin/nginx -c FILE"), spaces for NULs.
    let words: Vec<&[u8]> = cmdline
        .split(|&b| b == 0 || b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let file = words
        .iter()
        .position(|w| *w == b"-c")
        .and_then(|i| words.get(i + 1))
        .map(|w| String::from_utf8_lossy(w).to_string())
        .unwrap_or_else(|| "/etc/nginx/nginx.conf".into());
    let text = std::fs::read_to_string(root.join(file.trim_start_matches('/'))).ok()?;
    configured_connections(&text)
}

/// `worker_connections N;` in a configuration's text, comments skipped.
pub fn configured_connections(text: &str) -> Option<u64> {
    let uncommented: String = text
        .lines()
        .map(|l| l.split_once('#').map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n");
    let mut words = uncommented
        .split(|c: char| c.is_whitespace() || c == ';' || c == '{' || c == '}')
        .filter(|w| !w.is_empty());
    while let Some(word) = words.next() {
        if word == "worker_connections" {
            return words.next()?.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_stub_status_page_gives_its_connections_and_counters() {
        let page = "Active connections: 291 \nserver accepts handled requests\n 16630948 16630946 31070465 \nReading: 6 Writing: 179 Waiting: 106 \n";
        assert_eq!(
            parse(page),
            Some(StubStatus {
                active: 291,
                accepts: 16630948,
                handled: 16630946,
                requests: 31070465,
                reading: 6,
                writing: 179,
                waiting: 106,
            })
        );
        assert_eq!(parse("<html>Active connections: 2</html>"), None);
        assert_eq!(
            parse("Active connections: 2\nserver accepts handled requests\n 1 1\nReading: 0 Writing: 1 Waiting: 1\n"),
            None
        );
    }

    #[test]
    fn worker_connections_are_read_from_the_configuration_nginx_was_started_with() {
        let root = std::env::temp_dir().join(format!("headroom-stub-{}", std::process::id()));
        std::fs::create_dir_all(root.join("srv")).unwrap();
        std::fs::write(
            root.join("srv/nginx.conf"),
            "worker_processes 2;\n# worker_connections 9;\nevents {\n  worker_connections 24; # few\n}\n",
        )
        .unwrap();
        assert_eq!(
            worker_connections(
                &root,
                b"nginx: master process /usr/sbin/nginx\0-c\0/srv/nginx.conf\0"
            ),
            Some(24)
        );
        assert_eq!(
            worker_connections(&root, b"/usr/sbin/nginx\0-c\0/srv/none.conf\0"),
            None
        );
        assert_eq!(
            configured_connections("events { worker_connections 768; }"),
            Some(768)
        );
        assert_eq!(configured_connections("events { }"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_port_that_never_answered_is_not_judged_full() {
        // Accepted by the kernel, never answered: whether it has a page
        // is not known, so it does not count as out of connections.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let e = read(&[at]).unwrap_err();
        assert!(e.starts_with("no stub_status page was found yet"), "{e}");
        assert!(!e.contains(NO_CONNECTION_FREE), "{e}");
        drop(listener);
    }

    #[test]
    fn a_port_without_the_page_says_how_to_add_one_and_is_not_asked_each_second() {
        // Answers 404 to everything, counting what it was asked.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = asked.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        let e = read(&[at]).unwrap_err();
        assert!(
            e.contains("serves no stub_status page") && e.contains("stub_status;"),
            "{e}"
        );
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), PATHS.len());
        // The next look does not ask again.
        assert!(read(&[at]).is_err());
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), PATHS.len());
    }
}
