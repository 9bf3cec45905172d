//! Apache's own count of its workers: mod_status's machine-readable page
//! (`/server-status?auto`, which Debian's Apache serves to local clients),
//! read from the port the watched Apache listens on. A status page that
//! does not answer in time says something too: its request waits for a
//! free worker like any other.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The most a status page may take.
pub(crate) const STATUS_TIMEOUT: Duration = Duration::from_millis(300);

/// Apache's workers at one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApacheWorkers {
    pub busy: u32,
    pub idle: u32,
}

/// Where to ask a server listening on `address` ("0.0.0.0:80",
/// "[::]:8080", "127.0.0.1:18080"): this machine's loopback at its port.
pub fn local_address(address: &str) -> Option<SocketAddr> {
    let (host, port) = address.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip: std::net::IpAddr = match host {
        "0.0.0.0" | "*" => [127, 0, 0, 1].into(),
        "::" => std::net::Ipv6Addr::LOCALHOST.into(),
        other => other.parse().ok()?,
    };
    ip.is_loopback()
        .then_some(SocketAddr::new(ip, port))
        .or_else(|| (host == "0.0.0.0" || host == "::").then_some(SocketAddr::new(ip, port)))
}

/// Why a server's own page could not be read.
#[derive(Debug)]
pub(crate) enum PageError {
    /// Not answered in time: no worker (or connection) was free.
    Late,
    /// Closed unanswered (a server out of connections accepts and closes).
    Closed,
    Failed(std::io::Error),
    /// Answered, not with 200: its status line.
    Status(String),
}

/// GETs `path` at `at` (HTTP/1.0, at most 64 KiB, each step within
/// 300 ms): the body of a 200.
pub(crate) fn local_page(at: SocketAddr, path: &str) -> Result<String, PageError> {
    use std::io::ErrorKind::*;
    let failed = |e: std::io::Error| match e.kind() {
        WouldBlock | TimedOut => PageError::Late,
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => PageError::Closed,
        _ => PageError::Failed(e),
    };
    let mut stream = TcpStream::connect_timeout(&at, STATUS_TIMEOUT).map_err(failed)?;
    stream
        .set_read_timeout(Some(STATUS_TIMEOUT))
        .map_err(failed)?;
    stream
        .set_write_timeout(Some(STATUS_TIMEOUT))
        .map_err(failed)?;
    let request =
        format!("GET {path} HTTP/1.0\r\nHost: localhost\r\nUser-Agent: headroom-monitor\r\n\r\n");
    stream.write_all(request.as_bytes()).map_err(failed)?;
    let mut reply = Vec::new();
    // A status page is small; an application's page at the path is cut short.
    stream
        .take(64 * 1024)
        .read_to_end(&mut reply)
        .map_err(failed)?;
    if reply.is_empty() {
        return Err(PageError::Closed);
    }
    let text = String::from_utf8_lossy(&reply);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        return Err(PageError::Status(
            head.lines().next().unwrap_or("nothing").to_string(),
        ));
    }
    Ok(body.to_string())
}

/// Reads `/server-status?auto` at `at`: the workers, or why not.
pub fn apache_workers(at: SocketAddr) -> Result<ApacheWorkers, String> {
    let body = local_page(at, "/server-status?auto").map_err(|e| match e {
        PageError::Late | PageError::Closed => format!(
            "its status page did not answer within {} ms (no worker was free to serve it)",
            STATUS_TIMEOUT.as_millis()
        ),
        PageError::Failed(e) => format!("its status page at {at} could not be read: {e}"),
        PageError::Status(line) => format!(
            "its status page answered {line} (enable mod_status and allow local clients at /server-status)"
        ),
    })?;
    parse(&body).ok_or_else(|| {
        "its status page has no BusyWorkers and IdleWorkers (is it mod_status's ?auto page?)".into()
    })
}

/// The BusyWorkers and IdleWorkers lines of a `?auto` page.
fn parse(body: &str) -> Option<ApacheWorkers> {
    let field = |name: &str| {
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
    };
    Some(ApacheWorkers {
        busy: field("BusyWorkers")?,
        idle: field("IdleWorkers")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_page_gives_its_busy_and_idle_workers() {
        let page = "localhost\nServerVersion: Apache/2.4.62 (Debian)\nServerMPM: event\nTotal Accesses: 10\nBusyWorkers: 4\nIdleWorkers: 0\nProcesses: 1\nScoreboard: WWWW\n";
        assert_eq!(parse(page), Some(ApacheWorkers { busy: 4, idle: 0 }));
        assert_eq!(parse("BusyWorkers: 4\n"), None);
    }

    #[test]
    fn a_listening_address_is_asked_on_loopback() {
        assert_eq!(
            local_address("0.0.0.0:8080"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            local_address("127.0.0.1:18080"),
            Some("127.0.0.1:18080".parse().unwrap())
        );
        assert_eq!(local_address("[::]:80"), Some("[::1]:80".parse().unwrap()));
        assert_eq!(local_address("10.0.0.5:80"), None);
        assert_eq!(local_address("/run/php/php.sock"), None);
    }

    #[test]
    fn a_server_that_does_not_answer_is_late_not_an_error_of_ours() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        // Accepted by the kernel, never answered.
        let e = apache_workers(at).unwrap_err();
        assert!(e.contains("did not answer within 300 ms"), "{e}");
        drop(listener);
    }
}
