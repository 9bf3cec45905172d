//! `headroom capacity` against a server whose capacity is known from the
//! queueing model, and with a generator starved on purpose.

mod support;

use std::time::Duration;
use support::{
    free_port, headroom, run_starved, serial, stdout_json, temp_dir, wait_for_port, Reply,
    TestServer,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// A server with `workers` workers: each request holds one for `hold`;
/// requests beyond the pool wait (php-fpm's pm.max_children).
struct PoolServer {
    port: u16,
    _runtime: tokio::runtime::Runtime,
}

fn pool_server(workers: usize, hold: Duration) -> PoolServer {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let port = listener.local_addr().unwrap().port();
    let pool = std::sync::Arc::new(Semaphore::new(workers));
    runtime.spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    // One request head per response (GET, keep-alive).
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    buf.drain(..end);
                    let permit = pool.acquire().await.unwrap();
                    tokio::time::sleep(hold).await;
                    drop(permit);
                    let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                    if stream.write_all(reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    PoolServer {
        port,
        _runtime: runtime,
    }
}

/// k = 4 workers, each request holds one for d = 100 ms; closed users
/// think z = 1 s. Up to N* = k(d + z)/d = 44 users there is no queue and
/// the response time is d; beyond, R = N·d/k − z. With T = 150 ms the
/// response time crosses T at N = k(T + z)/d = 46 users: the capacity at
/// Apdex ≥ 0.85. The search must land within 10% of it.
#[test]
fn the_capacity_of_a_worker_pool_matches_the_queueing_model() {
    let _serial = serial();
    let server = pool_server(4, Duration::from_millis(100));
    let out = temp_dir("capacity-pool");
    let output = headroom()
        .args([
            "capacity",
            &format!("http://127.0.0.1:{}/", server.port),
            "--think",
            "1s",
            "--apdex-t",
            "150ms",
            "--apdex-target",
            "0.85",
            "--start",
            "30",
            "--step",
            "10",
            "--max",
            "90",
            "--resolution",
            "2",
            "--step-duration",
            "4s",
            "--warmup",
            "2s",
            "--monitor",
            "local",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let users = json["capacity"]["users"].as_f64().unwrap();
    let analytical = 4.0 * (0.150 + 1.0) / 0.100;
    assert!(
        (users - analytical).abs() <= 0.1 * analytical,
        "capacity {users}, analytical {analytical}: {}",
        json["levels"]
    );
    // At the capacity, Little's law holds: X = N / (R + Z).
    let rps = json["capacity"]["rps"].as_f64().unwrap();
    let expected = users / (0.1 + 1.0);
    assert!(
        (rps - expected).abs() < 0.15 * expected,
        "{rps} req/s, expected {expected}"
    );
    assert!(json["capacity"]["apdex"].as_f64().unwrap() >= 0.85);
    assert_eq!(json["valid"], true);
    // Nothing monitored saturates: the limit is the worker pool.
    assert!(json["bottleneck"].is_null());
    assert!(json["limit_note"]
        .as_str()
        .unwrap()
        .contains("the limit is elsewhere"));
    // Every level is an ordinary bundle in the capacity bundle.
    let levels = json["levels"].as_array().unwrap();
    assert!(levels.len() >= 5, "{levels:?}");
    for level in levels {
        let bundle = std::path::PathBuf::from(level["bundle"].as_str().unwrap());
        assert!(bundle.starts_with(&out) && bundle.join("manifest.json").exists());
    }
    assert!(out.join("capacity.json").exists());
    // `report` on the capacity bundle draws the capacity curve.
    let report = headroom()
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(">\nApdex against users\n</text>"));
    assert!(
        html.contains("users at Apdex ≥ 0.85"),
        "the verdict heads the page"
    );
    let knee = json["knee_users"].as_f64().unwrap();
    assert!(
        knee > users && knee - users <= 2.0,
        "bisected to the resolution: {users} / {knee}"
    );
}

/// headroom pinned to one core next to two busy loops, at nice 19: its
/// levels are generator-limited, and the result says it is invalid.
#[test]
fn a_starved_generator_makes_the_result_invalid() {
    let _serial = serial();
    let server = TestServer::start(|_| Reply::default());
    let out = temp_dir("capacity-starved");
    let output = run_starved(&[
        "capacity",
        &server.url("/"),
        "--start",
        "10",
        "--step",
        "10",
        "--max",
        "20",
        "--step-duration",
        "2s",
        "--warmup",
        "1s",
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
    assert_eq!(json["valid"], false, "{json}");
    assert!(json["limit_note"]
        .as_str()
        .unwrap()
        .contains("load generator itself"));
    assert!(json["levels"][0]["generator_limited"].as_bool().unwrap());
}

#[test]
fn capacity_refuses_flags_it_sets_itself() {
    let output = headroom()
        .args(["capacity", "http://127.0.0.1:1/", "-c", "10"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("use --start, --step, --max"));
    let output = headroom()
        .args(["capacity", "http://127.0.0.1:1/", "--apdex-target", "1.5"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let output = headroom()
        .args([
            "capacity",
            "http://127.0.0.1:1/",
            "--start",
            "1",
            "--max",
            "1",
            "--step-duration",
            "1s",
            "--warmup",
            "0s",
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "an unreachable target cannot be measured"
    );
}

/// The testbed pinned to core 1 and headroom (one worker thread) to core
/// 0: the server runs out of its core, and the answer names the CPU (that
/// core) as the bottleneck, the run being valid.
#[test]
fn a_cpu_bound_testbed_names_the_cpu() {
    let _serial = serial();
    let dir = temp_dir("capacity-cpu");
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite:{}", dir.join("lms.db").display());
    let init = headroom()
        .args(["testbed", "init", "--size", "xs", "--db", &db])
        .args(["--data-dir", dir.join("files").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let port = free_port();
    let sessions = format!("files:{}", dir.join("sessions").display());
    let mut server = std::process::Command::new("taskset")
        .args(["-c", "1", env!("CARGO_BIN_EXE_headroom")])
        .args(["testbed", "serve", "--db", &db, "--sessions", &sessions])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut server, "testbed serve");
    let plan = headroom()
        .args(["testbed", "plan", "--db", &db])
        .args(["--base-url", &format!("http://127.0.0.1:{port}")])
        .output()
        .unwrap();
    let journey = dir.join("journey.yaml");
    std::fs::write(&journey, &plan.stdout).unwrap();
    // The ladder scales with this machine. Past saturation the response
    // time is N / X (Little's law, no think time), so Apdex (T = 0.5 s)
    // breaks near N = X_max * 0.5 s. One user's rate X1 bounds X_max from
    // above (contention only lowers it): climbing in steps of X1 * 0.5 / 4
    // up to 4 * X1 * 0.5 crosses the knee on any machine.
    let single = std::process::Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_headroom")])
        .args(["run", journey.to_str().unwrap(), "-c", "1", "-d", "3s"])
        .args(["--threads", "1", "--json", "--out"])
        .arg(dir.join("single-user"))
        .output()
        .unwrap();
    let x1 = stdout_json(&single)["total"]["rps"].as_f64().unwrap();
    let step = ((x1 * 0.5 / 4.0).round() as u32).max(2);
    let (step, max, resolution) = (
        step.to_string(),
        (step * 16).to_string(),
        (step / 4).max(2).to_string(),
    );
    let out = dir.join("capacity");
    let output = std::process::Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_headroom")])
        .args(["capacity", &format!("http://127.0.0.1:{port}")])
        .args(["--scenario", journey.to_str().unwrap(), "--threads", "1"])
        .args(["--monitor", "local", "--apdex-target", "0.85"])
        .args([
            "--start",
            &step,
            "--step",
            &step,
            "--max",
            &max,
            "--resolution",
            &resolution,
        ])
        .args(["--step-duration", "3s", "--warmup", "1s", "--json"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert!(
        json["knee_users"].is_u64(),
        "the target broke (one user: {x1:.1} req/s; ladder by {step} to {max}): {}",
        json["verdict"]
    );
    let bottleneck = &json["bottleneck"];
    assert_eq!(bottleneck["resource"], "cpu", "{}", json["verdict"]);
    assert_eq!(bottleneck["core"], 1, "{}", json["verdict"]);
    assert!(bottleneck["figure"].as_f64().unwrap() >= 95.0);
    assert_eq!(json["valid"], true, "{}", json["verdict"]);
    assert!(json["verdict"].as_str().unwrap().contains("CPU core 1"));
    // The last level too: the server's core was full.
    let last = json["levels"].as_array().unwrap().last().unwrap();
    let (core, busy) = (
        last["resources"][0]["busiest_core"][0].as_u64().unwrap(),
        last["resources"][0]["busiest_core"][1].as_f64().unwrap(),
    );
    assert_eq!(core, 1);
    assert!(busy >= 95.0, "core 1 at {busy}%");
}
