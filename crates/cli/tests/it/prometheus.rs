//! Prometheus (Debian's package, installed by scripts/test) scrapes a
//! `headroom agent` and a live run's `--metrics-listen` on 127.0.0.1; its
//! HTTP API then answers with the run's own figures, and `promtool check
//! metrics` accepts both pages.

use crate::support::*;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The body of a GET.
fn get(port: u16, path: &str, token: Option<&str>) -> String {
    http_get(port, path, token).1
}

/// `promtool check metrics` on a page: no error, no lint.
fn promtool_accepts(page: &str, what: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; scripts/test installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool on the {what} page: {}{}\n{page}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Percent-encodes a PromQL query for a URL.
fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The values of an instant query, by their series' labels.
fn query(port: u16, promql: &str, at: Option<f64>) -> Vec<(serde_json::Value, f64)> {
    let time = at.map(|t| format!("&time={t}")).unwrap_or_default();
    let body = get(
        port,
        &format!("/api/v1/query?query={}{time}", encode(promql)),
        None,
    );
    let json: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(json["status"], "success", "{promql}: {body}");
    json["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let v = r["value"][1].as_str().unwrap().parse::<f64>().unwrap();
            (r["metric"].clone(), v)
        })
        .collect()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn epoch_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn prometheus_scrapes_the_agent_and_a_live_run() {
    requires!(
        program("prometheus", "prometheus"),
        program("promtool", "prometheus"),
    );
    let _paced = paced();
    let dir = temp_dir("prometheus");
    std::fs::create_dir_all(&dir).unwrap();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(20),
        ..Reply::default()
    });
    let (agent_port, run_port, prom_port) = (free_port(), free_port(), free_port());
    let mut agent = headroom()
        .args(["agent", "--listen", &format!("127.0.0.1:{agent_port}")])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(agent_port, &mut agent, "headroom agent");
    let _agent = Killed(agent);
    std::fs::write(
        dir.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: agent\n    static_configs:\n      - targets: ['127.0.0.1:{agent_port}']\n  - job_name: run\n    authorization:\n      credentials: s3cret\n    static_configs:\n      - targets: ['127.0.0.1:{run_port}']\n"
        ),
    )
    .unwrap();
    let mut prometheus = Command::new("prometheus")
        .arg(format!(
            "--config.file={}",
            dir.join("prometheus.yml").display()
        ))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus (Debian's package; scripts/test installs it)");
    wait_for_port(prom_port, &mut prometheus, "prometheus");
    let _prometheus = Killed(prometheus);
    let started = Instant::now();
    while !get(prom_port, "/-/ready", None).contains("Ready") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "prometheus is not ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Prometheus hands targets to its scrapers a few seconds after it
    // starts: the run begins once the agent has been scraped.
    while query(prom_port, "up{job=\"agent\"}", None)
        .first()
        .is_none_or(|(_, up)| *up != 1.0)
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "prometheus scrapes nothing"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A 6 s run of 4 users on 20 ms pages, its figures kept on /metrics
    // for 3 s after it.
    let run_started = epoch_s();
    let url = server.url("/page");
    let mut load = headroom()
        .args([
            "load",
            &url,
            "-c",
            "4",
            "-d",
            "6s",
            "--json",
            "--out",
            dir.join("bundle").to_str().unwrap(),
            "--metrics-listen",
            &format!("127.0.0.1:{run_port}"),
            "--metrics-token",
            "s3cret",
            "--metrics-linger",
            "3s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(get(run_port, "/metrics", None).contains("missing or wrong token"));
    promtool_accepts(&get(run_port, "/metrics", Some("s3cret")), "live run");
    promtool_accepts(&get(agent_port, "/metrics", None), "agent");
    let mut stdout = String::new();
    load.stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(load.wait().unwrap().success());
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let count = json["total"]["count"].as_f64().unwrap();
    assert!(count > 500.0, "{}", json["total"]);

    // The last scrape, from the lingering page, holds the final counters.
    let last = |promql: &str| {
        let values = query(prom_port, &format!("max_over_time({promql}[2m])"), None);
        assert_eq!(values.len(), 1, "{promql}: {values:?}");
        values[0].1
    };
    assert_eq!(last("headroom_requests_total"), count);
    assert_eq!(last("headroom_request_duration_seconds_count"), count);
    assert_eq!(
        last("headroom_apdex_samples_total{zone=\"satisfied\"}"),
        count
    );
    let errors = query(
        prom_port,
        "max_over_time(headroom_request_errors_total[2m])",
        None,
    );
    assert!(errors.is_empty(), "no error series: {errors:?}");

    // Mid-run, the rate is the run's throughput; the 90th percentile from
    // the buckets lies in the bucket of the run's own (10-25 ms).
    let middle = run_started + 4.0;
    let rate = query(prom_port, "rate(headroom_requests_total[3s])", Some(middle));
    let rps = json["total"]["rps"].as_f64().unwrap();
    assert_eq!(rate.len(), 1, "{rate:?}");
    assert!(
        (rate[0].1 - rps).abs() <= rps * 0.15,
        "Prometheus rate {} vs the run's {rps} requests/s",
        rate[0].1
    );
    let p90 = query(
        prom_port,
        "histogram_quantile(0.9, max_over_time(headroom_request_duration_seconds_bucket[2m]))",
        None,
    );
    let ours = json["total"]["p90_ms"].as_f64().unwrap() / 1000.0;
    assert!(
        (0.01..=0.025).contains(&p90[0].1) && (0.01..=0.025).contains(&ours),
        "p90 from the buckets {} s, the run's {ours} s",
        p90[0].1
    );

    // Every query of the shipped Grafana dashboard runs, and those of the
    // load, the CPU, memory and network have series.
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../deploy/grafana-dashboard.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for target in dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["targets"].as_array())
        .flatten()
    {
        let expr = target["expr"]
            .as_str()
            .unwrap()
            .replace("$__rate_interval", "3s")
            .replace("$run_job", "run")
            .replace("$agent_job", "agent");
        let result = query(prom_port, &expr, Some(middle));
        let optional = ["errors", "disk", "temperature", "throttling", "process"];
        if !optional.iter().any(|o| expr.contains(o)) {
            assert!(!result.is_empty(), "the dashboard's {expr} has no series");
        }
        checked += 1;
    }
    assert!(checked >= 14, "{checked} dashboard queries");

    // The agent's gauges are its JSON samples' figures.
    let samples: serde_json::Value =
        serde_json::from_str(&get(agent_port, "/samples?since=0", None)).unwrap();
    let memory: Vec<f64> = samples["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["resources"]["memory_used_pct"].as_f64().unwrap() / 100.0)
        .collect();
    let scraped = query(prom_port, "headroom_memory_used_ratio", None);
    assert_eq!(scraped.len(), 1, "{scraped:?}");
    assert!(
        memory.iter().any(|m| (m - scraped[0].1).abs() < 1e-9),
        "{} is one of the agent's samples {memory:?}",
        scraped[0].1
    );
    let cores = query(prom_port, "headroom_cpu_core_busy_ratio", None);
    assert_eq!(
        cores.len(),
        samples["samples"][0]["resources"]["per_core_pct"]
            .as_array()
            .unwrap()
            .len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
