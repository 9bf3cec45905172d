//! `headroom capacity` against a server whose capacity is known from the
//! queueing model, and with a generator starved on purpose.

use crate::support;

use crate::support::{
    busy_cores, free_port, headroom, minutes, paced, program, requires, run_starved, searching,
    serial, skip_for_busy_cores, stdout_json, temp_dir, wait_for_port, Reply, TestServer,
};
use std::time::Duration;

/// A server with `workers` workers: each request holds one for `hold`;
/// requests beyond the pool wait (php-fpm's pm.max_children).
fn pool_server(workers: usize, hold: Duration) -> PoolServer {
    let server = TestServer::bind(
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        Some(workers),
        move |_| Reply {
            delay: hold,
            body: 2,
            ..Reply::default()
        },
    )
    .unwrap();
    PoolServer {
        port: server.addr.port(),
        _server: server,
    }
}

struct PoolServer {
    port: u16,
    _server: TestServer,
}

/// k = 4 workers, each request holds one for d = 100 ms; closed users
/// think z = 1 s. Up to N* = k(d + z)/d = 44 users there is no queue and
/// the response time is d; beyond, R = N·d/k − z. With T = 150 ms the
/// response time crosses T at N = k(T + z)/d = 46 users: the capacity at
/// Apdex ≥ 0.85. The search must land within 10% of it.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn the_capacity_of_a_worker_pool_matches_the_queueing_model() {
    requires!(program("chromium", "chromium"));
    let _paced = paced();
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
    // The machine saturates nowhere, and the server's own pool (threads of
    // the test's process, not watched) is said to be unmeasured, not guessed.
    assert!(json["bottleneck"].is_null());
    let note = json["limit_note"].as_str().unwrap();
    assert!(
        note.starts_with("nothing measured was full at the knee")
            && note.contains("no server process was watched"),
        "{note}"
    );
    // Every level is an ordinary bundle in the capacity bundle.
    let levels = json["levels"].as_array().unwrap();
    // The aimed ladder: 30 met, 60 broken, then the knee (45) and 46.
    assert!(levels.len() >= 4, "{levels:?}");
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
    // The page says what was searched, where the knee is, and whether to trust it.
    for needed in [
        &format!("http://127.0.0.1:{}/", server.port),
        "Apdex T 150 ms",
        "think time: 1 s",
        &format!("<b>Knee</b> at {knee} users"),
        "<b>Valid:</b>",
        "<b>Little's law</b>",
        "<a href=\"level-",
    ] {
        assert!(html.contains(needed), "no {needed:?} in the capacity page");
    }
    // In Chromium: the page shows the target, the knee and the verdict.
    let dom = support::browser::open_in_chromium(&out.join("report.html"), &out);
    for needed in [
        format!("http://127.0.0.1:{}/", server.port),
        format!("Knee</b> at {knee} users"),
        json["verdict"].as_str().unwrap().to_string(),
    ] {
        assert!(dom.contains(&needed), "the rendered page lacks {needed:?}");
    }
    // A level's own bundle gives the table's figures (the warm-up is apart).
    for level in levels {
        let bundle = level["bundle"].as_str().unwrap();
        let report = headroom()
            .args(["compare", bundle, bundle, "--json"])
            .output()
            .unwrap();
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(std::path::Path::new(bundle).join("manifest.json")).unwrap(),
        )
        .unwrap();
        let total = &manifest["summary"]["total"];
        assert_eq!(total["count"], level["samples"], "{bundle}");
        let (a, b) = (total["apdex"].as_f64(), level["apdex"].as_f64());
        assert!(
            (a.unwrap() - b.unwrap()).abs() < 1e-9,
            "{bundle}: {a:?} / {b:?}"
        );
        assert_eq!(manifest["measurement"]["from_s"], 2.0, "{bundle}");
        assert!(
            manifest["measurement"]["whole_run"]["total"]["count"].as_u64()
                > total["count"].as_u64()
        );
        let compared = stdout_json(&report);
        let apdex = compared["metrics"][0]["rows"][0]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        assert!(
            (apdex - b.unwrap()).abs() < 1e-9,
            "compare on {bundle}: {apdex}"
        );
    }
    // Little's law at the capacity: the users it accounts for are the users run.
    let little = &json["little"];
    let busy = little["users_busy"].as_f64().unwrap();
    assert!(
        (busy - users).abs() <= 0.1 * users,
        "{little}: {busy} of {users}"
    );
}

/// The think time of a scenario's steps counts in Little's law; --fail-if
/// judges the answer and --junit writes it down.
#[test]
fn a_scenario_search_counts_its_think_time_and_is_judged() {
    requires!(minutes());
    let _search = searching();
    let server = pool_server(4, Duration::from_millis(100));
    let out = temp_dir("capacity-scenario");
    std::fs::create_dir_all(&out).unwrap();
    let scenario = out.join("journey.yaml");
    std::fs::write(
        &scenario,
        "name: pages\nsteps:\n  - label: a\n    path: /a\n    think: 0.5s..1.5s\n  - label: b\n    path: /b\n    think: 1s\n",
    )
    .unwrap();
    let junit = out.join("junit.xml");
    let search = out.join("search");
    let output = headroom()
        .args(["capacity", &format!("http://127.0.0.1:{}/", server.port)])
        .args(["--scenario", scenario.to_str().unwrap()])
        .args(["--apdex-t", "150ms", "--apdex-target", "0.85"])
        .args(["--start", "10", "--step", "10", "--max", "20"])
        .args(["--step-duration", "3s", "--warmup", "1s", "--json"])
        .args(["--fail-if", "users<1000", "--fail-if", "apdex<0.5"])
        .args(["--junit", junit.to_str().unwrap()])
        .args(["--out", search.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "users<1000 holds: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    // Both levels are below the pool's 44 users: no queue, R = 0.1 s, Z = 1 s.
    assert_eq!(json["capacity"]["users"], 20, "{}", json["verdict"]);
    // The think its users took: 0.5–1.5 s and 1 s, 1 s on average.
    let little = &json["little"];
    assert!(
        (little["think_s"].as_f64().unwrap() - 1.0).abs() < 0.05,
        "{little}"
    );
    let busy = little["users_busy"].as_f64().unwrap();
    assert!((busy - 20.0).abs() <= 2.0, "{little}");
    assert!(json["setup"]["think"]
        .as_str()
        .unwrap()
        .contains("from the scenario"));
    // The JSON carries the judgments too.
    let criteria = json["criteria"].as_array().unwrap();
    assert_eq!(criteria.len(), 2, "{criteria:?}");
    assert_eq!(
        (
            criteria[0]["failed"].clone(),
            criteria[0]["measured"].clone()
        ),
        (true.into(), 20.0.into())
    );
    assert_eq!(criteria[1]["failed"], false);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("name=\"users&lt;1000\"") && xml.contains("failures=\"1\""),
        "{xml}"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("FAILED: users = 20"));
}

/// headroom pinned to one core next to two busy loops, at nice 19: its
/// levels are generator-limited, each is measured once more (the first
/// run put aside, its bundle kept and its requests counted), and the
/// result says it is invalid.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_starved_generator_makes_the_result_invalid() {
    requires!(minutes());
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
    let mut sent = 0;
    for level in json["levels"].as_array().unwrap() {
        let aside = level["put_aside"].as_array().unwrap();
        assert_eq!(aside.len(), 1, "{level}");
        let ended = level["ended"].as_str().unwrap();
        assert!(
            ended.contains("; measured again: in its first run (")
                && ended.contains("headroom was starved of CPU"),
            "{ended}"
        );
        for bundle in aside.iter().chain([&level["bundle"]]) {
            let manifest = std::fs::read_to_string(
                std::path::Path::new(bundle.as_str().unwrap()).join("manifest.json"),
            )
            .unwrap();
            let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            let wire = &manifest["measurement"]["whole_run"]["requests"];
            sent += wire["requests"].as_u64().unwrap();
        }
    }
    // Every request sent is counted, the put-aside runs' too.
    let requests = &json["requests"];
    assert_eq!(
        requests["total"].as_u64().unwrap() - requests["rest_probes"].as_u64().unwrap(),
        sent,
        "{requests}"
    );
}

#[test]
fn capacity_refuses_flags_it_sets_itself() {
    let output = headroom()
        .args(["capacity", "http://127.0.0.1:1/", "-c", "10"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("use --start, --step, --max"));
    // Help lists only what capacity takes; what it sets itself is refused.
    let help = headroom().args(["capacity", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    for flag in [
        "--users",
        "--duration",
        "--requests",
        "--rate",
        "--max-vus",
        "--ramp-up",
        "--jtl",
    ] {
        // The flag itself, not a longer one it begins (--users-are).
        let listed = help.match_indices(flag).any(|(at, _)| {
            !help[at + flag.len()..].starts_with(|c: char| c == '-' || c.is_alphanumeric())
        });
        assert!(!listed, "capacity --help lists {flag}");
        let value: &[&str] = if flag == "--jtl" { &[] } else { &["5"] };
        let output = headroom()
            .args(["capacity", "http://127.0.0.1:1/", flag])
            .args(value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flag}: {stderr}");
        assert!(stderr.starts_with("headroom: capacity"), "{flag}: {stderr}");
    }
    assert!(help.contains("--fail-if") && help.contains("users<40") && help.contains("--confirm"));
    // An unwritable --junit path is refused before the first level.
    let output = headroom()
        .args([
            "capacity",
            "http://127.0.0.1:1/",
            "--junit",
            "/nonexistent/dir/x.xml",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot write the JUnit file"));
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

/// `capacity --spec FILE` (what an experiment's capacity runs are) runs
/// the search a file holds, without a URL; the flags the spec holds are
/// refused beside it, `--out` and `--json` are not; a bad file is named
/// with what is wrong.
#[test]
fn a_capacity_spec_file_runs_its_search_alone() {
    let _search = searching();
    let server = TestServer::start(|_| Reply::default());
    let dir = temp_dir("capacity-spec");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.json");
    std::fs::write(
        &spec,
        format!(
            r#"{{"level": {{"workload": {{"source": "url", "url": "{}"}}, "apdex": {{"satisfied": "300ms", "tolerated": {{"time": "1200ms"}}}}}},
 "goal": {{"apdex": 0.9, "max_error": 0.01}},
 "ladder": {{"start": 1, "step": 1, "max": 1, "resolution": 1}},
 "aimed": false,
 "times": {{"warmup": "0s", "step_duration": "1s", "min_samples": 1}}}}"#,
            server.url("/")
        ),
    )
    .unwrap();
    let spec_arg = spec.to_str().unwrap();
    for beside in [
        &["--start", "2"][..],
        &["http://127.0.0.1:1/"],
        &["--seed", "3"],
    ] {
        let output = headroom()
            .args(["capacity", "--spec", spec_arg])
            .args(beside)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{beside:?}: {stderr}");
        assert!(
            stderr.contains("cannot be used with"),
            "{beside:?}: {stderr}"
        );
    }
    let out = dir.join("again");
    let output = headroom()
        .args(["capacity", "--spec", spec_arg, "--out"])
        .arg(&out)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["levels"][0]["users"], 1, "{json}");
    assert_eq!(json["setup"]["url"], server.url("/"), "{json}");
    assert!(out.join("capacity.json").exists());
    assert!(out.join("level-0001").join("manifest.json").exists());
    std::fs::write(&spec, "{\"level\": 3}").unwrap();
    let output = headroom()
        .args(["capacity", "--spec", spec_arg])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("headroom: {spec_arg} is not a capacity spec: ")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The testbed pinned to core 1 and headroom (one worker thread) to core
/// 0: the server runs out of its core, and the answer names the CPU (that
/// core) as the bottleneck, the run being valid.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_cpu_bound_testbed_names_the_cpu() {
    requires!(minutes());
    let _serial = serial();
    let test = "a_cpu_bound_testbed_names_the_cpu";
    if skip_for_busy_cores(test, busy_cores()) {
        return;
    }
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
    // The server under its own name, so --process tells it from headroom.
    let server_exe = dir.join("lms-server");
    std::fs::copy(env!("CARGO_BIN_EXE_headroom"), &server_exe).unwrap();
    let mut server = std::process::Command::new("taskset")
        .args(["-c", "1", server_exe.to_str().unwrap()])
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
        .args([
            "--monitor",
            "local",
            "--process",
            "lms-server",
            "--apdex-target",
            "0.85",
        ])
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
    // Other work that came during the search shows as the machine's CPU
    // crowding the server out: the search said so rightly (INVALID).
    let crowded = json["invalid"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|why| why.as_str())
        .find(|why| why.contains("other work on the machine"))
        .map(str::to_string);
    if skip_for_busy_cores(test, crowded) {
        return;
    }
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
    // It names who used the CPU: the server's process, about one core of two.
    let processes = bottleneck["processes"].as_array().unwrap();
    assert_eq!(processes[0][0], "lms-server", "{}", json["verdict"]);
    assert!(processes[0][1].as_f64().unwrap() >= 35.0, "{processes:?}");
    assert!(json["verdict"].as_str().unwrap().contains("lms-server"));
    // The last level too: the server's core was full.
    let last = json["levels"].as_array().unwrap().last().unwrap();
    let (core, busy) = (
        last["resources"][0]["busiest_core"][0].as_u64().unwrap(),
        last["resources"][0]["busiest_core"][1].as_f64().unwrap(),
    );
    assert_eq!(core, 1);
    assert!(busy >= 95.0, "core 1 at {busy}%");
}

/// `--confirm 3` measures the deciding levels three times and gives the
/// range of capacities the repetitions support; on the worker pool of the
/// queueing model (the target breaks at 46 users) the range holds the
/// model's answer. Paced: beside the first pass's neighbours one of its
/// three runs at 44 users moved 35.0 req/s where the others moved 38.7
/// and 39.3, and the range (43..44) missed the model.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn confirmed_levels_give_a_range_around_the_model() {
    requires!(minutes());
    let _paced = paced();
    let server = pool_server(4, Duration::from_millis(100));
    let json = pool_search(
        server.port,
        "capacity-confirm",
        &[
            "--start",
            "40",
            "--step",
            "4",
            "--max",
            "60",
            "--resolution",
            "1",
            "--step-duration",
            "3s",
            "--warmup",
            "1s",
            "--confirm",
            "3",
        ],
    );
    let users = json["capacity"]["users"].as_u64().unwrap();
    let confirmation = &json["confirmation"];
    assert_eq!(confirmation["repetitions"], 3, "{}", json["verdict"]);
    let (low, high) = (
        confirmation["low"].as_u64().unwrap(),
        confirmation["high"].as_u64().unwrap(),
    );
    assert!(low <= users && users <= high, "{}", json["verdict"]);
    let levels = json["levels"].as_array().unwrap();
    let measured = |u: u64| levels.iter().filter(|l| l["users"] == u).count();
    assert_eq!(measured(users), 3, "{}", json["verdict"]);
    if let Some(knee) = json["knee_users"].as_u64() {
        assert_eq!(measured(knee), 3, "{}", json["verdict"]);
    }
    // The model's response time reaches T at 46 users: a capacity of N
    // users says the target breaks between N and N + 1, so the range
    // low..high holds the model when low ≤ 46 ≤ high + 1.
    let analytical = 4.0 * (0.150 + 1.0) / 0.100;
    assert!(
        low as f64 <= analytical + 1e-9 && analytical <= high as f64 + 1.0 + 1e-9,
        "range {low}..{high}, model {analytical}: {}",
        json["verdict"]
    );
    let said = if low == high {
        "(3 repetitions agree)".to_string()
    } else {
        format!("(between {low} and {high} in 3 repetitions)")
    };
    assert!(
        json["verdict"].as_str().unwrap().contains(&said),
        "{}",
        json["verdict"]
    );
}

/// The fast search's tests' levels: at most 3 s warm-up and 8 s measured.
const SHORT_LEVELS: [&str; 8] = [
    "--resolution",
    "2",
    "--step-duration",
    "8s",
    "--warmup",
    "3s",
    "--min-step-duration",
    "3s",
];

/// `capacity URL ARGS --json` on the worker pool of the queueing model
/// (think 1 s, T 150 ms, target 0.85: the target breaks at 46 users).
fn pool_search(port: u16, name: &str, args: &[&str]) -> serde_json::Value {
    let out = temp_dir(name);
    let output = headroom()
        .args(["capacity", &format!("http://127.0.0.1:{port}/")])
        .args([
            "--think",
            "1s",
            "--apdex-t",
            "150ms",
            "--apdex-target",
            "0.85",
        ])
        .args(["--json", "--out"])
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

/// The plain ladder with full levels records when each verdict settled:
/// the full duration never overturns it. The fast search (aimed ladder,
/// levels that stop when settled) gives the plain answer with fewer
/// levels and less measuring; the timing ratio is bench/capacity's.
#[test]
fn early_verdicts_hold_and_the_fast_search_gives_the_plain_answer() {
    requires!(minutes());
    // Beside other light tests: the pool's workers sleep their service
    // time, so a neighbour moves a level's figures by milliseconds against
    // its 100 ms. Such noise keeps a level's verdict open longer: alone
    // the fast search measured less than half of the plain one's time,
    // beside a first pass once 43 s of 72 s. It must measure at most three
    // quarters (bench/capacity measures the ratio on quiet cores).
    let _search = searching();
    let server = pool_server(4, Duration::from_millis(100));
    let mut bounds = SHORT_LEVELS.to_vec();
    bounds.extend(["--start", "30", "--step", "10", "--max", "90"]);
    let mut args = bounds.clone();
    args.extend(["--ladder", "plain", "--full-levels"]);
    let plain = pool_search(server.port, "capacity-plain", &args);
    let agreement = &plain["agreement"];
    let settled = agreement["settled"].as_u64().unwrap();
    assert!(settled >= 4, "{}", plain["levels"]);
    assert_eq!(agreement["agreed"], settled, "{}", plain["levels"]);
    for level in plain["levels"].as_array().unwrap() {
        assert_eq!(level["stopped_early"], false);
        assert!((level["measured_s"].as_f64().unwrap() - 8.0).abs() < 0.01);
    }
    let fast = pool_search(server.port, "capacity-fast", &bounds);
    let (p, f) = (
        plain["capacity"]["users"].as_f64().unwrap(),
        fast["capacity"]["users"].as_f64().unwrap(),
    );
    assert!(
        (p - f).abs() <= (0.05 * p).max(2.0),
        "plain {p}, fast {f}: {}",
        fast["levels"]
    );
    let measured = |r: &serde_json::Value| -> f64 {
        r["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["measured_s"].as_f64().unwrap() + l["warmup_s"].as_f64().unwrap())
            .sum()
    };
    assert!(
        measured(&fast) < 0.75 * measured(&plain),
        "fast {} s, plain {} s",
        measured(&fast),
        measured(&plain)
    );
    let levels = fast["levels"].as_array().unwrap();
    assert!(levels.iter().any(|l| l["stopped_early"] == true));
    for level in levels {
        let ended = level["ended"].as_str().unwrap();
        let early = level["stopped_early"].as_bool().unwrap();
        assert!(
            ended.contains(if early { "after" } else { "full" }),
            "{ended}"
        );
    }
    let range = fast["range"].as_array().unwrap();
    assert_eq!(range[0].as_f64().unwrap(), f);
    assert!(range[1].as_f64().unwrap() <= f + 2.0, "{range:?}");
}

/// A target met at --max, and one broken at --start: the fast search says
/// so and ends, keeping every level it measured.
#[test]
fn the_fast_search_at_its_bounds() {
    requires!(minutes());
    let _search = searching();
    let server = pool_server(4, Duration::from_millis(100));
    let met = pool_search(
        server.port,
        "capacity-at-max",
        &[&SHORT_LEVELS[..], &["--start", "10", "--max", "30"]].concat(),
    );
    assert_eq!(met["capacity"]["users"], 30, "{}", met["levels"]);
    assert_eq!(met["capacity"]["at_least"], true);
    assert!(met["verdict"]
        .as_str()
        .unwrap()
        .starts_with("at least 30 users"));
    let broken = pool_search(
        server.port,
        "capacity-at-start",
        &[&SHORT_LEVELS[..], &["--start", "80", "--max", "200"]].concat(),
    );
    let levels = broken["levels"].as_array().unwrap();
    assert_eq!(
        (levels[0]["users"].clone(), levels[0]["good"].clone()),
        (80.into(), false.into())
    );
    // The model's 46 within 20%: what this test checks is the search
    // below --start, and beside the side-by-side pass the pool of 4 once
    // served 34.75 req/s of its 40 at 40 users (38 found).
    let users = broken["capacity"]["users"].as_f64().unwrap();
    assert!((users - 46.0).abs() <= 0.2 * 46.0, "{users}: {levels:?}");
    assert!(levels.len() <= 10, "{levels:?}");
    for level in levels {
        let bundle = std::path::Path::new(level["bundle"].as_str().unwrap());
        assert!(bundle.join("manifest.json").is_file());
    }
}

/// Users who think 3 s between requests, with a warm-up and levels of 2 s
/// (shorter than one think): the levels are lengthened to the users'
/// cycle (they start over one think, are steady once each has thought,
/// and every user requests in the window), each verdict rests on
/// --min-samples requests, Little's law finds the users that ran, and the
/// answer is the queueing model's: 2 workers of 50 ms, T 150 ms, so
/// N = k(T + z)/d = 126 users. A plain run one --resolution below the
/// answer (the answer is no finer than that) meets the target: at the
/// answer itself the pool is saturated (122 users ask 40 req/s of 40) and
/// a plain run's Apdex swings between 0.8 and 1.0 from run to run.
#[test]
fn users_who_think_are_measured_in_their_steady_cycle() {
    requires!(minutes());
    let _search = searching();
    let server = pool_server(2, Duration::from_millis(50));
    let url = format!("http://127.0.0.1:{}/", server.port);
    let out = temp_dir("capacity-think");
    let output = headroom()
        .args(["capacity", &url, "--think", "3s"])
        .args(["--apdex-t", "150ms", "--apdex-target", "0.85"])
        .args(["--start", "40", "--max", "400", "--resolution", "8"])
        .args(["--warmup", "2s", "--step-duration", "2s", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let json = stdout_json(&output);
    let lengthened = json["setup"]["lengthened"].as_str().unwrap_or_default();
    assert!(
        lengthened.starts_with("the users think 3.0 s per request, so each level's warm-up to 6 s (users start over 3 s) and measurement to 6 s"),
        "{}",
        json["setup"]
    );
    for level in json["levels"].as_array().unwrap() {
        let samples = level["samples"].as_u64().unwrap();
        assert_eq!(level["thin"], samples < 100, "{level}");
        assert!(level["warmup_s"].as_f64().unwrap() >= 6.0, "{level}");
        let think = level["think_s"].as_f64().unwrap();
        assert!((think - 3.0).abs() < 0.01, "{level}");
    }
    assert_eq!(json["valid"], true, "{}", json["invalid"]);
    let users = json["capacity"]["users"].as_f64().unwrap();
    assert!(
        (users - 126.0).abs() <= 0.12 * 126.0,
        "{users}: {}",
        json["levels"]
    );
    let little = &json["little"];
    let busy = little["users_busy"].as_f64().unwrap();
    assert!((busy - users).abs() <= 0.1 * users, "{little}");
    // A plain run a resolution below the answer, three times a level's
    // measurement.
    let run = temp_dir("capacity-think-run");
    let below = users - 8.0;
    let plain = headroom()
        .args(["load", &url, "-c", &format!("{below}"), "--think", "3s"])
        .args([
            "--ramp-up",
            "3s",
            "-d",
            "24s",
            "--apdex-t",
            "150ms",
            "--json",
        ])
        .args(["--out", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let plain = stdout_json(&plain);
    let apdex = plain["total"]["apdex"]
        .as_f64()
        .unwrap_or_else(|| panic!("{plain}"));
    let level_apdex = json["capacity"]["apdex"].as_f64().unwrap();
    assert!(
        apdex >= 0.85,
        "plain run of {below} users: Apdex {apdex} (its start included); the answer's level ({users}) had {level_apdex}"
    );
}

/// A verdict needs --min-samples requests: a level that cannot get them
/// within 4 times --step-duration is thin, and the answer it decides is
/// not valid.
#[test]
fn a_thin_level_makes_the_answer_invalid() {
    requires!(minutes());
    let _search = searching();
    let server = pool_server(4, Duration::from_millis(10));
    let out = temp_dir("capacity-thin");
    let output = headroom()
        .args(["capacity", &format!("http://127.0.0.1:{}/", server.port)])
        .args(["--think", "1s", "--start", "2", "--max", "2"])
        .args([
            "--warmup",
            "2s",
            "--step-duration",
            "2s",
            "--min-samples",
            "50",
        ])
        .args(["--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let json = stdout_json(&output);
    let level = &json["levels"][0];
    // 2 users at about 2 req/s: 8 s (4 × 2 s) give some 16 requests.
    assert_eq!(level["thin"], true, "{level}");
    assert!(
        (level["measured_s"].as_f64().unwrap() - 8.0).abs() < 1.01,
        "{level}"
    );
    assert!(
        level["ended"].as_str().unwrap().contains("thin:"),
        "{level}"
    );
    assert_eq!(json["valid"], false);
    assert!(
        json["invalid"][0]
            .as_str()
            .unwrap()
            .contains("fewer than the 50 a verdict needs"),
        "{}",
        json["invalid"]
    );
    assert!(json["verdict"].as_str().unwrap().ends_with("[INVALID]"));
}
