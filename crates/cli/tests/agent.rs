//! `headroom agent` and `--monitor http://...`: token rules, and an agent
//! that dies mid-run leaving a recorded gap and a complete bundle.

mod support;

use std::io::{Read, Write};
use std::time::Duration;
use support::*;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    (
        status,
        text.split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string(),
    )
}

fn start_agent(port: u16, token: &str) -> std::process::Child {
    let child = headroom()
        .args([
            "agent",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--token",
            token,
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..50 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

#[test]
fn agent_token_rules() {
    let _serial = serial();
    // Anything but loopback needs a token (refused before binding).
    let open = run(&["agent", "--listen", "0.0.0.0:9464"]);
    assert_eq!(open.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&open.stderr).contains("without a token"));

    let port = free_port();
    let mut agent = start_agent(port, "s3cret");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(get(port, "/samples?since=0", None).0, 401);
    assert_eq!(get(port, "/samples?since=0", Some("wrong")).0, 401);
    assert_eq!(
        get(port, "/samples?since=0", Some("s3cre")).0,
        401,
        "a prefix is not the token"
    );
    let (status, body) = get(port, "/samples?since=0", Some("s3cret"));
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(json["now_ms"].as_u64().unwrap() > 0);
    assert!(
        !json["samples"].as_array().unwrap().is_empty(),
        "a sample per second: {body}"
    );
    let (status, fingerprint) = get(port, "/fingerprint", Some("s3cret"));
    assert_eq!(status, 200);
    assert!(fingerprint.contains("\"kernel\""));
    let _ = agent.kill();
    let _ = agent.wait();
}

/// The agent is killed 2.5 s into a 5 s run: the run completes, the
/// agent's rows stop, and the summary records the gap.
#[test]
fn an_agent_that_dies_leaves_a_gap_not_a_failed_run() {
    let _serial = serial();
    let port = free_port();
    let mut agent = start_agent(port, "tok");
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(5),
        ..Reply::default()
    });
    let out = temp_dir("agent-dies");
    let child = headroom()
        .args([
            "load",
            &server.url("/"),
            "-c",
            "2",
            "-d",
            "5s",
            "--monitor",
            &format!("http://127.0.0.1:{port}"),
            "--agent-token",
            "tok",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let _ = agent.kill();
    let _ = agent.wait();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["status"], "complete");
    let host = &json["resources"][0];
    assert!(
        host["host"]
            .as_str()
            .unwrap()
            .contains(&format!("127.0.0.1:{port}")),
        "{host}"
    );
    assert!(
        host["samples"].as_u64().unwrap() >= 1,
        "figures before the agent died: {host}"
    );
    assert!(
        host["gap_seconds"].as_u64().unwrap() >= 1,
        "the gap is recorded: {host}"
    );
    assert!(
        host["clock_offset_ms"].as_f64().unwrap().abs() < 1000.0,
        "same machine, same clock: {host}"
    );
    let rows = std::fs::read_to_string(out.join("resources.csv")).unwrap();
    assert!(rows.lines().count() >= 2, "{rows}");
    let manifest = manifest(&out);
    assert_eq!(manifest["status"], "complete");
    let monitored = &manifest["monitored_hosts"][0];
    assert_eq!(monitored["agent"], format!("127.0.0.1:{port}"));
    assert!(
        !monitored["fingerprint"]["kernel"]
            .as_str()
            .unwrap()
            .is_empty(),
        "{monitored}"
    );

    // An agent that does not answer when the run starts is a clear error.
    let nobody = free_port();
    let refused = run(&[
        "load",
        &server.url("/"),
        "-n",
        "5",
        "--monitor",
        &format!("http://127.0.0.1:{nobody}"),
    ]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("start `headroom agent` there"));
}
