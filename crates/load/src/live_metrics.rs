//! A run's live figures for Prometheus (`--metrics-listen`): the collector
//! renders the page once a second from the figures it has just merged, and
//! a small HTTP thread serves the latest page. Nothing here touches the
//! request path.

use headroom_bundle::sample::ErrorKind;
use headroom_bundle::tally::Tally;
use headroom_monitor::agent::read_head;
use headroom_monitor::exposition::{Exposition, CONTENT_TYPE};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds: web response times
/// from a cache hit to a timeout.
pub const BUCKETS_S: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// What a page is made of: the run's cumulative figures so far.
pub struct LiveFigures<'a> {
    pub run: &'a str,
    pub target: &'a str,
    pub elapsed: Duration,
    pub active_vus: u32,
    /// Per label: its name, whether it is a group (not a request), its tally.
    pub labels: Vec<(&'a str, bool, &'a Tally)>,
    /// Per check: its name, passes and failures.
    pub checks: Vec<(&'a str, u64, u64)>,
}

/// The exposition of `figures`.
pub fn render(figures: &LiveFigures<'_>) -> String {
    let mut e = Exposition::default();
    e.family(
        "headroom_run_info",
        "gauge",
        "The run being measured (always 1).",
    )
    .sample(
        "headroom_run_info",
        &[("run", figures.run), ("target", figures.target)],
        1.0,
    );
    e.single(
        "headroom_run_elapsed_seconds",
        "gauge",
        "Time since the run started.",
        figures.elapsed.as_secs_f64(),
    );
    e.single(
        "headroom_active_vus",
        "gauge",
        "Virtual users active in the last second.",
        f64::from(figures.active_vus),
    );
    requests(&mut e, figures);
    apdex_zones(&mut e, figures);
    durations(&mut e, figures);
    checks(&mut e, figures);
    e.finish()
}

/// The samples completed and failed, per label (and kind of error).
fn requests(e: &mut Exposition, figures: &LiveFigures<'_>) {
    let kind = |group: bool| if group { "group" } else { "request" };
    e.family(
        "headroom_requests_total",
        "counter",
        "Samples completed, per label (type group: a group of steps, not a request).",
    );
    for (label, group, tally) in &figures.labels {
        e.sample(
            "headroom_requests_total",
            &[("label", label), ("type", kind(*group))],
            tally.counts.count as f64,
        );
    }
    e.family(
        "headroom_request_errors_total",
        "counter",
        "Failed samples, per label and kind of error.",
    );
    for (label, _, tally) in &figures.labels {
        for error in ErrorKind::ALL {
            let n = tally.counts.errors_of(error);
            if n > 0 {
                e.sample(
                    "headroom_request_errors_total",
                    &[("label", label), ("kind", error.name())],
                    n as f64,
                );
            }
        }
    }
}

/// The samples in each Apdex zone, per label.
fn apdex_zones(e: &mut Exposition, figures: &LiveFigures<'_>) {
    e.family(
        "headroom_apdex_samples_total",
        "counter",
        "Samples per Apdex zone (satisfied, tolerating, frustrated), per label.",
    );
    for (label, _, tally) in &figures.labels {
        let a = &tally.counts.apdex;
        for (zone, n) in [
            ("satisfied", a.satisfied),
            ("tolerating", a.tolerating),
            ("frustrated", a.frustrated),
        ] {
            e.sample(
                "headroom_apdex_samples_total",
                &[("label", label), ("zone", zone)],
                n as f64,
            );
        }
    }
}

/// The response times per label, as a Prometheus histogram of
/// [`BUCKETS_S`].
fn durations(e: &mut Exposition, figures: &LiveFigures<'_>) {
    e.family(
        "headroom_request_duration_seconds",
        "histogram",
        "Response time per label (from the intended start: coordinated omission corrected).",
    );
    for (label, _, tally) in &figures.labels {
        let h = &tally.response;
        for bound in BUCKETS_S {
            let le = format!("{bound}");
            let micros = (bound * 1e6) as u64;
            // Values equivalent to the bound (HdrHistogram's 3 digits) count in.
            let below = if h.is_empty() {
                0
            } else {
                h.count_between(0, micros)
            };
            e.sample(
                "headroom_request_duration_seconds_bucket",
                &[("label", label), ("le", &le)],
                below as f64,
            );
        }
        e.sample(
            "headroom_request_duration_seconds_bucket",
            &[("label", label), ("le", "+Inf")],
            h.len() as f64,
        );
        e.sample(
            "headroom_request_duration_seconds_sum",
            &[("label", label)],
            h.mean() * h.len() as f64 / 1e6,
        );
        e.sample(
            "headroom_request_duration_seconds_count",
            &[("label", label)],
            h.len() as f64,
        );
    }
}

/// The scenario's checks passed and failed.
fn checks(e: &mut Exposition, figures: &LiveFigures<'_>) {
    e.family(
        "headroom_checks_total",
        "counter",
        "Scenario checks run, per check and result (pass, fail).",
    );
    for (check, passes, failures) in &figures.checks {
        e.sample(
            "headroom_checks_total",
            &[("check", check), ("result", "pass")],
            *passes as f64,
        );
        e.sample(
            "headroom_checks_total",
            &[("check", check), ("result", "fail")],
            *failures as f64,
        );
    }
}

/// The page being served, replaced once a second.
#[derive(Debug)]
pub struct LiveMetrics {
    pub address: SocketAddr,
    page: Arc<Mutex<String>>,
}

impl LiveMetrics {
    /// Listens on `address`; anything but loopback needs a token (a
    /// scraper sends it as `Authorization: Bearer TOKEN`).
    pub fn listen(address: SocketAddr, token: Option<String>) -> Result<LiveMetrics, String> {
        if token.is_none() && !address.ip().is_loopback() {
            return Err(format!(
                "--metrics-listen {address}: refusing to serve the run's figures beyond this machine without a token: add --metrics-token SECRET (Prometheus: authorization: {{credentials: SECRET}}), or listen on 127.0.0.1"
            ));
        }
        let listener = TcpListener::bind(address)
            .map_err(|e| format!("--metrics-listen {address}: cannot listen: {e}"))?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("--metrics-listen {address}: {e}"))?;
        let page = Arc::new(Mutex::new(String::new()));
        let served = page.clone();
        std::thread::Builder::new()
            .name("metrics-http".into())
            .spawn(move || {
                let token: Arc<Option<String>> = Arc::new(token);
                for stream in listener.incoming().flatten() {
                    // A thread per scrape: a client that sends nothing
                    // delays no other.
                    let (served, token) = (served.clone(), token.clone());
                    let _ = std::thread::Builder::new()
                        .name("metrics-client".into())
                        .spawn(move || {
                            let _ = answer(stream, &served, token.as_deref());
                        });
                }
            })
            .map_err(|e| format!("--metrics-listen {address}: {e}"))?;
        Ok(LiveMetrics { address, page })
    }

    /// Replaces the page served.
    pub fn publish(&self, page: String) {
        *self.page.lock().unwrap_or_else(|p| p.into_inner()) = page;
    }
}

/// One request on the metrics port: `GET /metrics`, within two seconds.
fn answer(mut stream: TcpStream, page: &Mutex<String>, token: Option<&str>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = [0u8; 4096];
    let head = match read_head(&mut stream, &mut buf)? {
        Some(Ok(head)) => head,
        Some(Err(())) => {
            return reply(
                &mut stream,
                "400 Bad Request",
                "text/plain",
                "bad request\n",
            )
        }
        None => return Ok(()),
    };
    if !token.is_none_or(|t| head.bearer_is(t)) {
        return reply(
            &mut stream,
            "401 Unauthorized",
            "text/plain",
            "missing or wrong token: pass the run's --metrics-token as a bearer token\n",
        );
    }
    match head.path.split('?').next() {
        Some("/metrics") => {
            let page = page.lock().unwrap_or_else(|p| p.into_inner()).clone();
            reply(&mut stream, "200 OK", CONTENT_TYPE, &page)
        }
        _ => reply(&mut stream, "404 Not Found", "text/plain", "try /metrics\n"),
    }
}

fn reply(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::apdex::ApdexThresholds;
    use headroom_bundle::sample::Sample;
    use std::io::Read;
    use std::time::Instant;

    fn sample(ms: u64, error: Option<ErrorKind>) -> Sample {
        let start = Instant::now();
        Sample {
            label: 0,
            vu: 1,
            intended_start: start,
            actual_start: start,
            connect: Duration::ZERO,
            tls: None,
            first_byte: None,
            end: start + Duration::from_millis(ms),
            status: if error.is_some() { 500 } else { 200 },
            bytes_received: 0,
            bytes_sent: 0,
            error,
            failed_check: None,
            detail: None,
            resent: false,
            server_timing: Default::default(),
        }
    }

    #[test]
    fn counters_and_a_cumulative_histogram() {
        let apdex = ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        };
        let mut tally = Tally::default();
        for (ms, error) in [
            (3, None),
            (40, None),
            (40, None),
            (700, Some(ErrorKind::Http5xx)),
        ] {
            tally.record(&sample(ms, error), &apdex);
        }
        let page = render(&LiveFigures {
            run: "runs/x",
            target: "http://127.0.0.1:8080",
            elapsed: Duration::from_secs(3),
            active_vus: 2,
            labels: vec![("home \"page\"", false, &tally)],
            checks: vec![("logged in", 3, 1)],
        });
        for line in [
            "headroom_requests_total{label=\"home \\\"page\\\"\",type=\"request\"} 4",
            "headroom_request_errors_total{label=\"home \\\"page\\\"\",kind=\"http_5xx\"} 1",
            "headroom_apdex_samples_total{label=\"home \\\"page\\\"\",zone=\"satisfied\"} 3",
            "headroom_apdex_samples_total{label=\"home \\\"page\\\"\",zone=\"frustrated\"} 1",
            "headroom_request_duration_seconds_bucket{label=\"home \\\"page\\\"\",le=\"0.0025\"} 0",
            "headroom_request_duration_seconds_bucket{label=\"home \\\"page\\\"\",le=\"0.005\"} 1",
            "headroom_request_duration_seconds_bucket{label=\"home \\\"page\\\"\",le=\"0.05\"} 3",
            "headroom_request_duration_seconds_bucket{label=\"home \\\"page\\\"\",le=\"1\"} 4",
            "headroom_request_duration_seconds_bucket{label=\"home \\\"page\\\"\",le=\"+Inf\"} 4",
            "headroom_request_duration_seconds_count{label=\"home \\\"page\\\"\"} 4",
            "headroom_checks_total{check=\"logged in\",result=\"fail\"} 1",
            "headroom_active_vus 2",
        ] {
            assert!(page.contains(&format!("{line}\n")), "{line}\n{page}");
        }
        let sum: f64 = page
            .lines()
            .find(|l| l.starts_with("headroom_request_duration_seconds_sum"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        assert!((sum - 0.783).abs() < 0.001, "{sum}");
    }

    #[test]
    fn loopback_only_without_a_token_and_the_token_is_checked() {
        let open = "0.0.0.0:0".parse().unwrap();
        assert!(LiveMetrics::listen(open, None)
            .unwrap_err()
            .contains("--metrics-token"));
        let live = LiveMetrics::listen("127.0.0.1:0".parse().unwrap(), Some("s3".into())).unwrap();
        live.publish("x 1\n".into());
        let get = |auth: &str| {
            let mut s = TcpStream::connect(live.address).unwrap();
            write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n{auth}\r\n").unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            text
        };
        assert!(get("").starts_with("HTTP/1.1 401"));
        assert!(get("Authorization: Bearer s4\r\n").starts_with("HTTP/1.1 401"));
        let ok = get("Authorization: Bearer s3\r\n");
        assert!(
            ok.starts_with("HTTP/1.1 200") && ok.ends_with("\r\n\r\nx 1\n"),
            "{ok}"
        );
    }
}
