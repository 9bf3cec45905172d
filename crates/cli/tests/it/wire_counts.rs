//! A run's count of requests is the server's: the redirects a step
//! followed (the GET after a login's 303) and the requests abandoned when
//! the run ended are counted beside the figures, so the total equals what
//! the server received.

use crate::support::{light, run, searching, stdout_json, temp_dir, text, Reply, TestServer};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A server that counts every request it receives.
fn counting(reply: impl Fn(&str) -> Reply + Send + Sync + 'static) -> (TestServer, Arc<AtomicU64>) {
    let received = Arc::new(AtomicU64::new(0));
    let seen = received.clone();
    let server = TestServer::start(move |req| {
        seen.fetch_add(1, Ordering::SeqCst);
        reply(&req.path)
    });
    (server, received)
}

#[test]
fn a_steps_redirects_are_counted_as_the_server_received_them() {
    let _light = light();
    let (server, received) = counting(|path| match path {
        "/login" => Reply {
            status: 303,
            headers: vec![("Location".into(), "/home".into())],
            ..Reply::default()
        },
        _ => Reply::default(),
    });
    let dir = temp_dir("wire-redirects");
    std::fs::create_dir_all(&dir).unwrap();
    let journey = dir.join("login.yaml");
    std::fs::write(
        &journey,
        format!(
            "defaults:\n  base_url: {}\nsteps:\n  - label: login\n    method: POST\n    path: /login\n    body: 'u=a'\n  - label: page\n    path: /page\n",
            server.url("")
        ),
    )
    .unwrap();
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "-c",
        "2",
        "--iterations",
        "3",
        "--json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let json = stdout_json(&out);
    assert_eq!(json["total"]["count"], 12, "{json}");
    // 2 users × 3 iterations × (POST, its GET of /home, the page).
    assert_eq!(received.load(Ordering::SeqCst), 18);
    assert_eq!(json["requests"]["requests"], 18, "{}", json["requests"]);
    assert_eq!(json["requests"]["redirects"], 6, "{}", json["requests"]);

    // The terminal says them under the transactions.
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "-c",
        "1",
        "--iterations",
        "1",
    ]);
    let said = text(&out);
    assert!(
        said.contains("3 over the wire (2 transactions; 1 redirect followed)"),
        "{said}"
    );
}

#[test]
fn requests_abandoned_at_the_end_are_counted_as_the_server_received_them() {
    let _light = light();
    let (server, received) = counting(|_| Reply {
        delay: Duration::from_millis(400),
        ..Reply::default()
    });
    let out = run(&[
        "load",
        &server.url("/"),
        "-c",
        "4",
        "-d",
        "1s",
        "--json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let json = stdout_json(&out);
    let counted = json["total"]["count"].as_u64().unwrap();
    let wire = &json["requests"];
    let abandoned = wire["abandoned"].as_u64().unwrap_or(0) + wire["late"].as_u64().unwrap_or(0);
    // Each user's third request was on its way at the end (1.2 s).
    assert!(abandoned >= 1, "{json}");
    // Every request the server received is counted, once.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        received.load(Ordering::SeqCst),
        counted + abandoned,
        "{json}"
    );
    assert_eq!(wire["requests"], counted + abandoned, "{wire}");
}

/// A capacity search counts every request it sent, warm-ups and the
/// requests abandoned when each level ended included, as the server
/// received them (not only the measured windows its figures come from).
#[test]
fn a_searchs_requests_are_what_the_server_received() {
    let _search = searching();
    let (server, received) = counting(|_| Reply {
        delay: Duration::from_millis(30),
        ..Reply::default()
    });
    let out = temp_dir("wire-capacity");
    let output = crate::support::headroom()
        .args(["capacity", &server.url("/"), "--think", "50ms"])
        .args([
            "--start",
            "2",
            "--step",
            "2",
            "--max",
            "4",
            "--resolution",
            "2",
        ])
        .args(["--warmup", "1s", "--step-duration", "2s", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let json = stdout_json(&output);
    std::thread::sleep(Duration::from_millis(200));
    let sent = &json["requests"];
    let measured: u64 = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["samples"].as_u64().unwrap())
        .sum();
    // The warm-ups' requests are more than the measured ones leave out.
    assert!(sent["levels"].as_u64().unwrap() > measured, "{sent}");
    assert_eq!(sent["total"], received.load(Ordering::SeqCst), "{sent}");
    // The search's page says it too.
    let report = crate::support::run(&["report", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains(&format!(
            "<b>Requests</b>: {} requests over the wire",
            sent["total"]
        )),
        "{}",
        text(&report)
    );
}
