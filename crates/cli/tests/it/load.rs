//! `headroom load` end to end: the real binary against servers started here
//! on 127.0.0.1, with figures checked against values computed by hand.

use crate::support::*;
use crate::support::{minutes, requires};
use std::time::{Duration, Instant};

/// 90% of requests take 100 ms and every 10th takes 2 s. With -n 100 the
/// server sees exactly 10 slow requests, so by hand: Apdex (T 0.5 s,
/// F 1.5 s) = (90 + 0/2) / 100 = 0.90; p50 = p90 = 100 ms; p95 = p99 =
/// max = 2 s; mean = 0.9 * 100 + 0.1 * 2000 = 290 ms.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn delay_mix_gives_hand_computed_apdex_and_percentiles() {
    let _paced = paced();
    let server = TestServer::start(|r| Reply {
        delay: if r.number % 10 == 0 {
            Duration::from_secs(2)
        } else {
            Duration::from_millis(100)
        },
        ..Reply::default()
    });
    let out = temp_dir("delay-mix");
    let output = run(&[
        "load",
        &server.url("/mix"),
        "-n",
        "100",
        "-c",
        "10",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let total = &json["total"];
    assert_eq!(total["count"], 100);
    assert_eq!(total["errors"], 0);
    assert_eq!(total["apdex"], 0.9);
    assert_eq!(total["apdex_rating"], "Good");
    assert_eq!(
        (
            total["apdex_satisfied"].as_u64(),
            total["apdex_frustrated"].as_u64()
        ),
        (Some(90), Some(10))
    );
    // Measured times add the loopback round trip and timer granularity
    // (about 1 ms) to the server's delays; histogram precision is 0.1%.
    let within = |name: &str, expected: f64, slack: f64| {
        let got = ms(&total[name]);
        assert!(
            got >= expected * 0.999 && got <= expected + slack,
            "{name} = {got} ms, expected {expected} ms"
        );
    };
    within("p50_ms", 100.0, 5.0);
    // p90 is the 90th of 100 sorted samples: exactly the slowest of the 90
    // fast ones, so it carries the worst scheduling hiccup among them.
    within("p90_ms", 100.0, 15.0);
    within("p95_ms", 2000.0, 10.0);
    within("p99_ms", 2000.0, 10.0);
    within("max_ms", 2000.0, 10.0);
    within("mean_ms", 290.0, 5.0);
    assert_eq!(json["labels"]["/mix"]["count"], 100);
    assert_eq!(json["status"], "complete");

    // The bundle agrees with the summary.
    let manifest = manifest(&out);
    assert_eq!(manifest["schema_version"], 1);
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["summary"]["total"]["count"], 100);
    let per_second: u64 = interval_totals(&out).iter().map(|(_, n)| n).sum();
    assert_eq!(per_second, 100, "intervals.csv adds up to the total");
    assert_eq!(
        hlog_total_count(&out),
        100,
        "latency.hlog adds up to the total"
    );
}

/// Reads latency.hlog with the HdrHistogram library's own log reader and
/// adds the untagged (total) intervals.
fn hlog_total_count(bundle: &std::path::Path) -> u64 {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let text = std::fs::read(bundle.join("latency.hlog")).unwrap();
    let mut total = 0;
    for entry in IntervalLogIterator::new(&text) {
        if let LogEntry::Interval(interval) = entry.unwrap() {
            if interval.tag().is_none() {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .unwrap();
                let h: hdrhistogram::Histogram<u64> =
                    Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                total += h.len();
            }
        }
    }
    total
}

/// The server freezes for 3 s once, 2 s after its first request (a GC pause,
/// a full disk). Open model at 100 requests/s: about 300 requests arrive
/// during the pause and wait for it, so their response times, counted from
/// their scheduled start, spread over 0..3 s and p90 is about 2 s. Closed
/// model with 2 users: each user is stuck in one request, sends nothing
/// meanwhile, and the pause shows as 2 slow samples out of thousands: p90
/// stays near zero. This is coordinated omission; the open model is the
/// one that tells how users arriving during the pause fared.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn open_model_reports_a_pause_that_the_closed_model_hides() {
    requires!(minutes());
    let _serial = serial();
    let pausing = || {
        TestServer::start(|r| {
            let pause_start = r.first + Duration::from_secs(2);
            let pause_end = pause_start + Duration::from_secs(3);
            let in_pause = r.arrived >= pause_start && r.arrived < pause_end;
            Reply {
                hold_until: in_pause.then_some(pause_end),
                ..Reply::default()
            }
        })
    };
    let server = pausing();
    let open = run_json(
        "open",
        &["load", &server.url("/"), "--rate", "100/s", "-d", "10s"],
    );
    let count = open["total"]["count"].as_u64().unwrap();
    assert!(
        (990..=1000).contains(&count),
        "open model sent {count} requests at 100/s for 10 s"
    );
    let p90 = ms(&open["total"]["p90_ms"]);
    assert!(
        p90 > 1000.0,
        "open model p90 = {p90} ms: the pause must show"
    );
    assert!(ms(&open["total"]["max_ms"]) > 2800.0);

    let server = pausing();
    let closed = run_json(
        "closed",
        &["load", &server.url("/"), "-c", "2", "-d", "10s"],
    );
    let p90 = ms(&closed["total"]["p90_ms"]);
    assert!(
        p90 < 50.0,
        "closed model p90 = {p90} ms: the pause hides in 2 samples"
    );
    assert!(
        ms(&closed["total"]["max_ms"]) > 2800.0,
        "the pause is the maximum"
    );
}

/// A throughput cap of 600/min shared by 10 users holds the achieved rate
/// within 2% of 10 requests/s.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn throughput_cap_holds_the_rate() {
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(5),
        ..Reply::default()
    });
    let json = run_json(
        "cap",
        &[
            "load",
            &server.url("/"),
            "-c",
            "10",
            "--throughput",
            "600/min",
            "-d",
            "10s",
        ],
    );
    let rps = ms(&json["total"]["rps"]);
    assert!(
        (rps - 10.0).abs() <= 0.2,
        "achieved {rps}/s under a 10/s cap"
    );
}

#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn ctrl_c_leaves_a_valid_bundle_marked_interrupted() {
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(10),
        ..Reply::default()
    });
    let out = temp_dir("interrupt");
    let started = Instant::now();
    let child = headroom()
        .args([
            "load",
            &server.url("/"),
            "-c",
            "5",
            "-d",
            "60s",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly"
    );
    assert_eq!(output.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("interrupted"),
        "the summary is printed: {stdout}"
    );
    assert!(stdout.contains("Transactions:"));
    let manifest = manifest(&out);
    assert_eq!(manifest["status"], "interrupted");
    let elapsed = manifest["elapsed_s"].as_f64().unwrap();
    assert!((2.0..4.0).contains(&elapsed), "elapsed {elapsed} s");
    let count = manifest["summary"]["total"]["count"].as_u64().unwrap();
    assert!(
        count > 100,
        "{count} samples in 2.5 s with 5 users at 10 ms"
    );
    let per_second: u64 = interval_totals(&out).iter().map(|(_, n)| n).sum();
    assert_eq!(
        per_second, count,
        "every sample of the summary is in intervals.csv"
    );
}

#[test]
fn fail_if_sets_the_exit_code() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let url = server.url("/");
    let args = |extra: &[&str], name: &str| {
        let out = temp_dir(name);
        let mut a: Vec<String> = [
            "load",
            &url,
            "-n",
            "200",
            "-c",
            "4",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let pass = headroom()
        .args(args(
            &["--fail-if", "p95>5s", "--fail-if", "errors>1%"],
            "pass",
        ))
        .output()
        .unwrap();
    assert_eq!(
        pass.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pass.stdout)
    );
    assert!(String::from_utf8_lossy(&pass.stdout).contains("passed: p95"));

    let fail = headroom()
        .args(args(&["--fail-if", "rps<1000000", "--json"], "fail"))
        .output()
        .unwrap();
    assert_eq!(fail.status.code(), Some(1));
    let json = stdout_json(&fail);
    assert_eq!(json["passed"], false);
    assert_eq!(json["criteria"][0]["failed"], true);

    // --junit: one test case per criterion and one for the run itself.
    let junit = temp_dir("junit").with_extension("xml");
    let with_junit = headroom()
        .args(args(
            &[
                "--fail-if",
                "p95>5s",
                "--fail-if",
                "rps<1000000",
                "--junit",
                junit.to_str().unwrap(),
                "--quiet",
            ],
            "junit",
        ))
        .output()
        .unwrap();
    assert_eq!(with_junit.status.code(), Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(
        xml.contains("<testsuites name=\"headroom\" tests=\"3\" failures=\"1\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
    assert!(xml.contains("name=\"run completed\""));
    assert!(xml.contains("<testcase classname=\"headroom.fail-if\" name=\"p95&gt;5s\""));
    assert!(xml.contains("<testcase classname=\"headroom.fail-if\" name=\"rps&lt;1000000\""));
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(
        xml.contains("<failure type=\"threshold\" message=\"FAILED: rps = "),
        "{xml}"
    );
    assert!(
        xml.contains("<property name=\"requests\" value=\"200\"/>"),
        "{xml}"
    );
    let unwritable = headroom()
        .args(args(
            &["--junit", "/nonexistent-dir/j.xml", "--quiet"],
            "junit-bad",
        ))
        .output()
        .unwrap();
    assert_eq!(unwritable.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&unwritable.stderr)
        .contains("cannot write the JUnit file /nonexistent-dir/j.xml"));

    let bad = headroom()
        .args(args(&["--fail-if", "p95"], "bad"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no comparison"));
}

/// samples.jtl parses back with JMeter's default header and units.
#[test]
fn jtl_has_jmeter_columns_and_units() {
    let _guard = light();
    let server = TestServer::start(|r| Reply {
        delay: Duration::from_millis(20),
        status: if r.number % 5 == 0 { 503 } else { 200 },
        ..Reply::default()
    });
    let out = temp_dir("jtl");
    let before_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let output = run(&[
        "load",
        &server.url("/a?b=1"),
        "-n",
        "50",
        "-c",
        "2",
        "--jtl",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    let mut reader = csv::Reader::from_path(out.join("samples.jtl")).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>().join(","),
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 50);
    let mut failures = 0;
    for row in &rows {
        let timestamp: u64 = row[0].parse().unwrap();
        assert!(
            timestamp >= before_ms && timestamp < before_ms + 60_000,
            "epoch milliseconds"
        );
        let elapsed: u64 = row[1].parse().unwrap();
        assert!((20..200).contains(&elapsed), "elapsed in ms: {elapsed}");
        let latency: u64 = row[14].parse().unwrap();
        assert!(latency <= elapsed);
        assert_eq!(&row[2], "/a?b=1");
        assert_eq!(&row[13], &server.url("/a?b=1"));
        assert!(
            row[9].parse::<u64>().unwrap() > 64,
            "bytes include the head"
        );
        match &row[3] {
            "200" => assert_eq!(&row[7], "true"),
            "503" => {
                assert_eq!(&row[7], "false");
                failures += 1;
            }
            other => panic!("unexpected code {other}"),
        }
    }
    assert_eq!(failures, 10, "every 5th of 50 answers 503");
    let json_errors = manifest(&out)["summary"]["total"]["errors_by_kind"]["http_5xx"].as_u64();
    assert_eq!(json_errors, Some(10));
}

/// The server dies 1.5 s into a 4 s run: the run goes on, the failures are
/// counted by kind (the closed connections, then refused reconnects), and
/// the bundle is complete.
#[test]
fn a_server_that_dies_mid_run_is_recorded_not_fatal() {
    let _guard = light();
    let mut server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(5),
        ..Reply::default()
    });
    let out = temp_dir("dies");
    let child = headroom()
        .args([
            "load",
            &server.url("/"),
            "-c",
            "4",
            "-d",
            "4s",
            "--think",
            "10ms",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    server.kill();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["status"], "complete");
    let kinds = &json["total"]["errors_by_kind"];
    assert!(
        kinds["refused"].as_u64().unwrap_or(0) > 0,
        "refused reconnects are counted: {kinds}"
    );
    let successes =
        json["total"]["count"].as_u64().unwrap() - json["total"]["errors"].as_u64().unwrap();
    assert!(
        successes > 100,
        "{successes} successes before the server died"
    );
    assert_eq!(manifest(&out)["status"], "complete");
}

#[test]
fn chunked_bodies_and_closed_connections_are_read_correctly() {
    let _guard = light();
    let server = TestServer::start(|r| Reply {
        body: 1000,
        chunked: true,
        close: r.number % 3 == 0,
        ..Reply::default()
    });
    let json = run_json(
        "chunked",
        &["load", &server.url("/"), "-n", "90", "-c", "3"],
    );
    assert_eq!(json["total"]["count"], 90);
    assert_eq!(
        json["total"]["errors"], 0,
        "{}",
        json["total"]["errors_by_kind"]
    );
    assert!(
        json["total"]["connections"].as_u64().unwrap() >= 30,
        "a new connection after each close"
    );
}

#[test]
fn bad_input_is_a_clear_usage_error() {
    let _guard = light();
    for (args, hint) in [
        (vec!["load", "127.0.0.1:8080"], "not a valid URL"),
        (vec!["load", "ftp://127.0.0.1/"], "http:// and https://"),
        (
            vec!["load", "http://127.0.0.1:1/", "-d", "10 parsecs"],
            "unknown unit",
        ),
        (vec!["load", "http://127.0.0.1:1/", "-c", "0"], "at least 1"),
        (
            vec!["load", "http://127.0.0.1:1/", "-c", "5", "--rate", "10/s"],
            "cannot be used with",
        ),
        (
            vec!["load", "http://127.0.0.1:1/", "--rate", "10/fortnight"],
            "unknown rate unit",
        ),
        (
            vec!["load", "http://127.0.0.1:1/", "-H", "NoColon"],
            "Name: value",
        ),
        (
            vec![
                "load",
                "http://127.0.0.1:1/",
                "--apdex-t",
                "2s",
                "--apdex-f",
                "1s",
            ],
            "F must be at least T",
        ),
        (
            vec![
                "load",
                "http://127.0.0.1:1/",
                "-d",
                "10s",
                "--ramp-up",
                "20s",
            ],
            "longer than the run",
        ),
    ] {
        let output = run(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(hint),
            "{args:?}: expected '{hint}' in: {stderr}"
        );
    }
}

#[test]
fn unreachable_targets_fail_fast_with_a_hint() {
    let _guard = light();
    // Port 1 on loopback: nothing listens there.
    let refused = run(&[
        "load",
        "http://127.0.0.1:1/",
        "-d",
        "1s",
        "--out",
        temp_dir("refused").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("nothing is listening on 127.0.0.1:1")
    );
    let dns = run(&["load", "http://no-such-host.invalid/", "-d", "1s"]);
    assert_eq!(dns.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&dns.stderr).contains("cannot resolve 'no-such-host.invalid'"));
    // CI publishers still find a JUnit file: one failed case with the reason.
    let junit = temp_dir("junit-not-started").with_extension("xml");
    let output = run(&[
        "load",
        "http://127.0.0.1:1/",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("failures=\"1\"")
            && xml.contains("name=\"run started\"")
            && xml.contains("nothing is listening on 127.0.0.1:1"),
        "{xml}"
    );
}

#[test]
fn https_with_a_self_signed_certificate_needs_insecure() {
    let _guard = light();
    let server = TlsServer::start();
    let url = server.url("/secure");
    let refused = run(&[
        "load",
        &url,
        "-n",
        "10",
        "--out",
        temp_dir("tls-refused").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("TLS handshake") && stderr.contains("--insecure"),
        "{stderr}"
    );

    let json = run_json("tls", &["load", &url, "-n", "200", "-c", "4", "--insecure"]);
    assert_eq!(json["total"]["count"], 200);
    assert_eq!(
        json["total"]["errors"], 0,
        "{}",
        json["total"]["errors_by_kind"]
    );
    assert_eq!(
        json["total"]["connections"], 4,
        "one kept-alive TLS connection per user"
    );
    assert!(
        ms(&json["total"]["connect_mean_ms"]) > 0.0,
        "the handshake is part of connect time"
    );
}

/// Open model against a server that takes 200 ms with at most 2 VUs: the
/// VUs cannot keep up with 50 arrivals/s, so requests start late, their
/// response times count from their scheduled start, and the summary says so.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn open_model_warns_when_max_vus_cannot_keep_the_rate() {
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(200),
        ..Reply::default()
    });
    let json = run_json(
        "maxvus",
        &[
            "load",
            &server.url("/"),
            "--rate",
            "50/s",
            "-d",
            "3s",
            "--max-vus",
            "2",
        ],
    );
    let warning = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "behind_schedule");
    let message = warning.expect("a behind_schedule warning")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("--max-vus"), "{message}");
    // 2 VUs at 200 ms serve 10 requests/s at most; the rest wait their turn.
    let rps = ms(&json["total"]["rps"]);
    assert!(rps <= 11.0, "{rps}");
    assert!(
        ms(&json["total"]["p95_ms"]) > 1000.0,
        "waiting for a VU counts in response time"
    );
    assert!(
        ms(&json["total"]["service_p95_ms"]) < 300.0,
        "service time excludes the wait"
    );
}

#[test]
fn no_keepalive_opens_a_connection_per_request_and_bodies_are_sent() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let json = run_json(
        "nokeepalive",
        &[
            "load",
            &server.url("/post"),
            "-n",
            "40",
            "-c",
            "2",
            "--no-keepalive",
            "-X",
            "POST",
            "--body",
            "name=value",
            "-H",
            "Content-Type: application/x-www-form-urlencoded",
        ],
    );
    assert_eq!(json["total"]["count"], 40);
    assert_eq!(json["total"]["errors"], 0);
    assert_eq!(json["total"]["connections"], 40);
    let sent = json["total"]["bytes_sent"].as_u64().unwrap();
    assert!(
        sent > 40 * 100,
        "requests carry headers and body: {sent} bytes"
    );
}

/// A server that resets every third request: on a new connection the reset
/// is a failure of kind `reset`; on a kept-alive connection the request is
/// sent again once on a new one (as browsers do) and counted as resent, so
/// every reset the server made shows as one or the other.
#[test]
fn resets_are_counted_by_kind() {
    let _guard = light();
    let server = TestServer::start(|r| Reply {
        reset: r.number % 3 == 0,
        ..Reply::default()
    });
    let json = run_json(
        "reset",
        &[
            "load",
            &server.url("/"),
            "-n",
            "60",
            "-c",
            "2",
            "-X",
            "POST",
            "--no-keepalive",
        ],
    );
    assert_eq!(json["total"]["count"], 60);
    assert_eq!(
        json["total"]["errors_by_kind"]["reset"], 20,
        "{}",
        json["total"]["errors_by_kind"]
    );
    assert_eq!(json["total"]["errors"], 20);

    let before = server.requests.load(std::sync::atomic::Ordering::SeqCst);
    let json = run_json(
        "reset-keepalive",
        &[
            "load",
            &server.url("/"),
            "-n",
            "60",
            "-c",
            "2",
            "-X",
            "POST",
        ],
    );
    let received = server.requests.load(std::sync::atomic::Ordering::SeqCst) - before;
    let resent = json["total"]["resent"].as_u64().unwrap_or(0);
    let errors = json["total"]["errors"].as_u64().unwrap();
    assert_eq!(json["total"]["count"], 60);
    assert_eq!(received, 60 + resent, "{json}");
    assert!(resent > 0, "{json}");
    // So many resends are a pattern, not the keep-alive race: said.
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "many_resent"),
        "{json}"
    );
    assert_eq!(
        json["total"]["errors_by_kind"]["reset"]
            .as_u64()
            .unwrap_or(0),
        errors
    );
    // Every third request the server received was reset (give or take the
    // phase of the counter at the start).
    assert!(
        (errors + resent).abs_diff(received / 3) <= 1,
        "{errors} failed + {resent} resent for {received} received"
    );
}

/// The disk fills up mid-run (a 48 KB tmpfs): the run stops, the summary
/// still covers it until then, the error says what happened, exit code 3.
/// Mounting needs root.
#[test]
fn a_full_disk_stops_the_run_with_a_clear_error() {
    requires!(root(), program("mount", "mount"));
    let _guard = light();
    let mount_point = temp_dir("full-disk");
    std::fs::create_dir_all(&mount_point).unwrap();
    let mounted = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=48k",
            "tmpfs",
            mount_point.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs as root");
    let server = TestServer::start(|_| Reply::default());
    let started = Instant::now();
    let output = run(&[
        "load",
        &server.url("/"),
        "-c",
        "4",
        "-d",
        "30s",
        "--jtl",
        "--out",
        mount_point.join("run").to_str().unwrap(),
    ]);
    let _ = std::process::Command::new("umount")
        .arg(&mount_point)
        .status();
    assert_eq!(output.status.code(), Some(3));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the run stopped when the disk filled"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("No space left on device") && stderr.contains("choose another --out"),
        "{stderr}"
    );
    let stdout_text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        format!("{stderr}{stdout_text}")
            .matches("(os error 28)")
            .count(),
        1,
        "the cause is said once: {stderr}{stdout_text}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Transactions:") && stdout.contains("aborted"),
        "{stdout}"
    );
}

/// Apdex with the standard's F = 4T: at T = 100 ms every 300 ms response is
/// tolerated (300 <= 400), so Apdex = (0 + 20 / 2) / 20 = 0.5; with F = 200 ms
/// they are all frustrated and Apdex = 0. The body comes from --body-file.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn apdex_f_as_a_multiple_of_t_and_body_file() {
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(300),
        ..Reply::default()
    });
    let body = temp_dir("body-file");
    std::fs::write(&body, vec![b'a'; 1000]).unwrap();
    let url = server.url("/");
    let common = [
        "load",
        &url,
        "-n",
        "20",
        "-c",
        "5",
        "-X",
        "PUT",
        "--body-file",
        body.to_str().unwrap(),
        "--apdex-t",
        "100ms",
    ];
    let standard = run_json("apdex-4t", &[&common[..], &["--apdex-f", "4T"]].concat());
    assert_eq!(standard["apdex_f_ms"], 400.0);
    assert_eq!(standard["total"]["apdex"], 0.5);
    assert_eq!(standard["total"]["apdex_rating"], "Poor");
    assert!(
        standard["total"]["bytes_sent"].as_u64().unwrap() >= 20 * 1000,
        "the file is the body"
    );
    let strict = run_json(
        "apdex-200",
        &[&common[..], &["--apdex-f", "200ms"]].concat(),
    );
    assert_eq!(strict["total"]["apdex"], 0.0);
    assert_eq!(strict["total"]["apdex_rating"], "Unacceptable");
}

/// On a terminal a live line is drawn every second; piped, nothing is.
#[test]
fn live_line_only_on_a_terminal() {
    let _guard = light();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(5),
        ..Reply::default()
    });
    let command = format!(
        "{} load {} -c 2 -d 2500ms --out {}",
        env!("CARGO_BIN_EXE_headroom"),
        server.url("/"),
        temp_dir("tty").display()
    );
    // `script` runs the command on a pseudo-terminal and copies what it shows.
    let on_tty = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    let shown = String::from_utf8_lossy(&on_tty.stdout);
    assert!(
        shown.contains("0:01/0:02  users 2"),
        "live line on a terminal: {shown}"
    );
    assert!(shown.contains("req/s") && shown.contains("Apdex 1.000"));

    let piped = run(&[
        "load",
        &server.url("/"),
        "-c",
        "2",
        "-d",
        "1500ms",
        "--out",
        temp_dir("piped").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains("req/s"),
        "no live line when piped: {stderr}"
    );
    assert!(String::from_utf8_lossy(&piped.stdout).contains("Transactions:"));
}

/// headroom starved on purpose (nice 19 on one core next to two busy
/// loops) says so: its worker waited for the CPU most of the run.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_starved_generator_is_reported() {
    requires!(minutes());
    let _serial = serial();
    let server = TestServer::start(|_| Reply::default());
    let out = temp_dir("starved");
    let output = run_starved(&[
        "load",
        &server.url("/"),
        "-c",
        "10",
        "-d",
        "3s",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let kinds: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(
        kinds.contains(&"generator_stalled"),
        "warnings: {}",
        json["warnings"]
    );
}

/// `--monitor local` samples this machine every second on the run's
/// timeline: resources.csv has a row per second, the summary a host line,
/// and the JSON the averages and peaks, including a named process.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn monitor_local_records_resources_on_the_run_timeline() {
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(2),
        ..Reply::default()
    });
    let out = temp_dir("monitor");
    let output = run(&[
        "load",
        &server.url("/"),
        "-c",
        "4",
        "-d",
        "3s",
        "--monitor",
        "local",
        "--process",
        "headroom",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let host = &json["resources"][0];
    assert_eq!(host["host"], "local");
    assert!(host["samples"].as_u64().unwrap() >= 2, "{host}");
    let cpu = ms(&host["cpu_pct"]["avg"]);
    assert!(cpu > 0.0 && cpu <= 100.0, "{cpu}");
    assert!(ms(&host["memory_used_pct"]["peak"]) > 0.0);
    assert!(
        ms(&host["processes"]["headroom"]["cpu_pct"]["avg"]) > 0.0,
        "headroom itself is busy"
    );
    let mut reader = csv::Reader::from_path(out.join("resources.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    assert!(headers.iter().any(|h| h == "headroom_cpu_pct"));
    let seconds: Vec<u64> = reader
        .records()
        .map(|r| r.unwrap()[0].parse().unwrap())
        .collect();
    assert!(
        seconds.len() >= 2 && seconds.windows(2).all(|w| w[1] == w[0] + 1),
        "{seconds:?}"
    );
    assert_eq!(manifest(&out)["files"]["resources"], "resources.csv");
    // Every figure (per core, device, interface, sensor) is in resources.jsonl.
    let detail = std::fs::read_to_string(out.join("resources.jsonl")).unwrap();
    assert_eq!(detail.lines().count(), seconds.len());
    let first: serde_json::Value = serde_json::from_str(detail.lines().next().unwrap()).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(
        first["resources"]["per_core_pct"].as_array().unwrap().len(),
        cores
    );
    assert_eq!(first["host"], "local");

    for (bad, hint) in [
        ("https://127.0.0.1:9464", "plain http://"),
        ("bogus", "write 'local'"),
    ] {
        let output = run(&["load", &server.url("/"), "--monitor", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(hint),
            "{bad}"
        );
    }
}

/// `headroom doctor` describes this machine and, given a loopback target,
/// says the generator and the server share it; runs keep the same in the manifest.
#[test]
fn doctor_and_the_fingerprint_in_every_manifest() {
    let _guard = light();
    let doctor = run(&["doctor", "--target", "http://127.0.0.1:8080/", "--json"]);
    assert!(doctor.status.success());
    let json = stdout_json(&doctor);
    assert!(json["fingerprint"]["cores"].as_u64().unwrap() >= 1);
    assert!(!json["fingerprint"]["kernel"].as_str().unwrap().is_empty());
    let checks: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["check"].as_str())
        .collect();
    assert!(checks.contains(&"same_host"), "{checks:?}");

    let server = TestServer::start(|_| Reply::default());
    let out = temp_dir("fingerprint");
    let output = run(&[
        "load",
        &server.url("/"),
        "-n",
        "10",
        "-c",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("headroom doctor: the target runs on this machine"));
    let manifest = manifest(&out);
    assert_eq!(
        manifest["fingerprint"]["cores"],
        json["fingerprint"]["cores"]
    );
    assert!(manifest["doctor"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["check"] == "same_host"));
}

/// A TLS failure is said in words, with what to do: against real servers
/// presenting certificates made here, one CA trusted (SSL_CERT_FILE).
#[test]
fn tls_failures_say_what_happened_and_what_to_do() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let _light = light();
    let dir = temp_dir("tls-words");
    std::fs::create_dir_all(&dir).unwrap();
    let key_der = |key: &KeyPair| PrivateKeyDer::Pkcs8(key.serialize_der().into());

    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "headroom test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let ca_der: CertificateDer<'static> = ca.der().clone();
    let ca_key_der = key_der(&ca_key);
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: &[&str], expired: bool| {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        if expired {
            params.not_before = rcgen::date_time_ymd(2019, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        }
        let cert = params.signed_by(&key, &issuer).unwrap();
        (vec![cert.der().clone()], key_der(&key))
    };
    let self_signed = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();

    let cases = [
        (
            "self-signed",
            (
                vec![self_signed.cert.der().clone()],
                key_der(&self_signed.signing_key),
            ),
            "the server's certificate is not signed by an authority this machine trusts",
        ),
        (
            "expired",
            leaf(&["localhost"], true),
            "the server's certificate expired on 2020-01-01",
        ),
        (
            "another name",
            leaf(&["elsewhere.example"], false),
            "the server's certificate is for elsewhere.example, not for \"localhost\"",
        ),
        (
            "the CA itself",
            (vec![ca_der], ca_key_der),
            "the server's certificate is a CA certificate (one that signs other certificates) \
             used as the server's own certificate",
        ),
    ];
    for (what, (chain, key), expected) in cases {
        let server = TlsServer::serving(chain, key);
        let out = headroom()
            .env("SSL_CERT_FILE", &ca_file)
            .args(["load", &server.url("/"), "-n", "1", "--out"])
            .arg(dir.join(what.replace(' ', "-")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{what}: {}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(expected), "{what}: {said}");
        assert!(
            said.contains("--insecure to skip the verification"),
            "{what}: {said}"
        );
        for debug in [
            "Other(",
            "Error(",
            "Custom {",
            "Context {",
            "NotValid",
            "Unknown",
        ] {
            assert!(!said.contains(debug), "{what}: a Rust value: {said}");
        }
        eprintln!("{what}: {said}");
    }
    // A certificate signed by the trusted CA, for the name: accepted.
    let (chain, key) = leaf(&["localhost"], false);
    let server = TlsServer::serving(chain, key);
    let out = headroom()
        .env("SSL_CERT_FILE", &ca_file)
        .args(["load", &server.url("/"), "-n", "1", "--out"])
        .arg(dir.join("good"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}
