//! Bad input gets a clear message and exit 2 (usage) or 3 (cannot run),
//! never a panic (exit 101) or a wait.

use crate::support::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

#[test]
fn flags_out_of_range_say_why() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["load", "http://127.0.0.1:1/", "-c", "99999999999999999999"],
            "is too large",
        ),
        (
            &[
                "load",
                "http://127.0.0.1:1/",
                "-n",
                "99999999999999999999999",
            ],
            "is too large",
        ),
        (
            &["load", "http://127.0.0.1:1/", "--apdex-t", "0"],
            "must be longer than zero",
        ),
        (&["agent", "--token", ""], "an empty token would let anyone"),
        (
            &["load", "http://127.0.0.1:1/", "--label", ""],
            "an empty label",
        ),
        (
            &["load", "http://127.0.0.1:1/", "--rate", "1e309/s"],
            "not a finite rate",
        ),
        (
            &["bench", "network", "--link-capacity", "1e400Mbit"],
            "is not a link capacity",
        ),
        (
            &["bench", "network", "--link-capacity", "1e307Gbit"],
            "is not a link capacity",
        ),
    ];
    for (args, message) in cases {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// Paths that are not UTF-8 are paths like any other (they gave exit 101).
#[test]
fn non_utf8_paths_do_not_panic() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let dir = temp_dir("non-utf8");
    std::fs::create_dir_all(&dir).unwrap();
    let odd = |name: &[u8]| dir.join(OsStr::from_bytes(name));
    let bundle = odd(b"out\xff");
    let junit = odd(b"\xff.xml");
    let output = headroom()
        .arg("load")
        .arg(server.url("/"))
        .args(["-n", "3", "--jtl", "-q", "--out"])
        .arg(&bundle)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(bundle.join("manifest.json").exists() && junit.exists());
    let scenario = odd(b"sc\xfe.yaml");
    std::fs::write(
        &scenario,
        format!(
            "defaults: {{base_url: '{}'}}\nsteps:\n  - {{label: a, path: /}}\n",
            server.url("")
        ),
    )
    .unwrap();
    let output = headroom()
        .arg("run")
        .arg(&scenario)
        .args(["-c", "1", "--iterations", "1", "-q", "--out"])
        .arg(odd(b"run\xfd"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let missing = headroom()
        .arg("run")
        .arg(odd(b"none\xfc.yaml"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    let report = headroom().arg("report").arg(&bundle).output().unwrap();
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
}

/// A --fail-if on a label the scenario does not define is refused before
/// the run (it was checked only after it).
#[test]
fn criteria_on_unknown_labels_are_refused_before_the_run() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let started = Instant::now();
    let output = run(&[
        "load",
        &server.url("/"),
        "-d",
        "10s",
        "--fail-if",
        "p99[/nope]>1s",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        stderr(&output).contains("'/nope', which this run does not have (labels: /)"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// https:// against a plain HTTP server names the mistake, and messages
/// say their cause once.
#[test]
fn wrong_scheme_and_repeated_causes() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let https = server.url("/").replace("http://", "https://");
    let output = run(&["load", &https, "-n", "1"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output).contains("answered in plain HTTP, not TLS: use http://")
            && !stderr(&output).contains("--insecure"),
        "{}",
        stderr(&output)
    );
    let dir = temp_dir("repeated-cause");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let output = run(&[
        "load",
        &server.url("/"),
        "-n",
        "1",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3));
    let text = stderr(&output);
    assert!(
        text.contains("is a file, and a bundle is a directory") && !text.contains("os error"),
        "{text}"
    );
}

/// The testbed given a file that is not a SQLite database says so at once
/// (it waited 10 s for "pool timed out").
#[test]
fn the_testbed_names_a_file_that_is_not_sqlite() {
    let dir = temp_dir("not-sqlite");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("notes.txt");
    std::fs::write(&file, "these are notes, not a database\n").unwrap();
    let started = Instant::now();
    let output = run(&[
        "testbed",
        "serve",
        "--db",
        &format!("sqlite:{}", file.display()),
    ]);
    assert_eq!(output.status.code(), Some(3));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        stderr(&output).contains("is not a SQLite database"),
        "{}",
        stderr(&output)
    );
    // A SQLite header on a damaged file (it waited 10 s for "pool timed out").
    let damaged = dir.join("damaged.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..20).flat_map(|_| 0..=255u8));
    std::fs::write(&damaged, bytes).unwrap();
    let started = Instant::now();
    let output = run(&[
        "testbed",
        "info",
        "--db",
        &format!("sqlite:{}", damaged.display()),
    ]);
    assert_eq!(output.status.code(), Some(3));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        stderr(&output).contains("is damaged"),
        "{}",
        stderr(&output)
    );
}

/// A scenario file too large to be a journey is refused at once (50 MB
/// took 18 s and 3.5 GB); a UTF-8 byte-order mark is not part of the first key.
#[test]
fn scenario_files_too_large_or_with_a_bom() {
    let dir = temp_dir("scenario-size");
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.yaml");
    let mut text = String::from("steps:\n");
    while text.len() < 5_000_000 {
        text.push_str("  - {label: a, url: 'http://127.0.0.1:1/x'}\n");
    }
    std::fs::write(&big, &text).unwrap();
    let started = Instant::now();
    let output = run(&["scenario", "check", big.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        stderr(&output).contains("larger than 4 MB"),
        "{}",
        stderr(&output)
    );
    // A device or a pipe is bounded the same way (/dev/zero ran until memory ran out).
    let started = Instant::now();
    let output = run(&["scenario", "check", "/dev/zero"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(2));
    // Text that is not UTF-8 is located; UTF-16 is named.
    let latin1 = dir.join("latin1.yaml");
    std::fs::write(
        &latin1,
        b"steps:\n  - {label: caf\xe9, url: 'http://127.0.0.1:1/x'}\n",
    )
    .unwrap();
    let output = run(&["scenario", "check", latin1.to_str().unwrap()]);
    assert!(
        stderr(&output).contains("latin1.yaml:2:16: this byte is not UTF-8"),
        "{}",
        stderr(&output)
    );
    let utf16 = dir.join("utf16.yaml");
    std::fs::write(&utf16, [0xff, 0xfe, b's', 0, b't', 0]).unwrap();
    let output = run(&["scenario", "check", utf16.to_str().unwrap()]);
    assert!(stderr(&output).contains("UTF-16"), "{}", stderr(&output));
    let bom = dir.join("bom.yaml");
    std::fs::write(
        &bom,
        "\u{feff}steps:\n  - {label: a, url: 'http://127.0.0.1:1/x'}\n",
    )
    .unwrap();
    let output = run(&["scenario", "check", bom.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for (name, body, message) in [
        ("dup-columns", "data: {file: d.csv, columns: [u, u]}\nsteps:\n  - {label: a, url: 'http://127.0.0.1:1/${u}'}\n", "named twice"),
        ("empty-label", "steps:\n  - {label: '', url: 'http://127.0.0.1:1/x'}\n", "an empty label"),
    ] {
        std::fs::write(dir.join("d.csv"), "a,b\n").unwrap();
        let file = dir.join(format!("{name}.yaml"));
        std::fs::write(&file, body).unwrap();
        let output = run(&["scenario", "check", file.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{name}");
        assert!(stderr(&output).contains(message), "{name}: {}", stderr(&output));
    }
    // A file without base_url checks with --target.
    let relative = dir.join("relative.yaml");
    std::fs::write(&relative, "steps:\n  - {label: a, path: /x}\n").unwrap();
    let output = run(&[
        "scenario",
        "check",
        relative.to_str().unwrap(),
        "--target",
        "http://127.0.0.1:8080",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// JMeter files that cannot be used: a located error, exit 2, never a
/// panic; `--strict` refuses a plan with an element headroom cannot run.
#[test]
fn broken_jmeter_plans_and_results_are_located() {
    let dir = temp_dir("bad-jmeter");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = |threads: &str, csv: &str, extra: &str| {
        format!(
            "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree>\
             <CSVDataSet testname=\"Users\"><stringProp name=\"filename\">{csv}</stringProp><stringProp name=\"variableNames\">u</stringProp></CSVDataSet><hashTree/>\
             <ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">{threads}</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">1</stringProp></elementProp></ThreadGroup>\
             <hashTree>{extra}<HTTPSamplerProxy testname=\"home\"><stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp><stringProp name=\"HTTPSampler.port\">1</stringProp><stringProp name=\"HTTPSampler.path\">/</stringProp></HTTPSamplerProxy><hashTree/></hashTree>\
             </hashTree></hashTree></jmeterTestPlan>"
        )
    };
    std::fs::write(dir.join("users.csv"), "ann\n").unwrap();
    let script = "<JSR223Sampler testname=\"groovy\"><stringProp name=\"script\">1</stringProp></JSR223Sampler><hashTree/>";
    let cases: [(&str, String, &[&str], &str); 5] = [
        (
            "cut.jmx",
            plan("1", "users.csv", "")[..200].to_string(),
            &[],
            "not well-formed XML",
        ),
        (
            "csv.jmx",
            plan("1", "missing.csv", ""),
            &[],
            "cannot read the data file",
        ),
        (
            "script.jmx",
            plan("1", "users.csv", script),
            &["--strict"],
            "JSR223Sampler 'groovy'",
        ),
        (
            "threads.jmx",
            plan("lots", "users.csv", ""),
            &["--strict"],
            "threads 'lots' is not a whole number",
        ),
        (
            "results.jtl",
            "timeStamp,elapsed,label\n1700000000000,5,x\n1700000000000,x,y\n".into(),
            &[],
            "line 3: elapsed 'x'",
        ),
    ];
    for (name, text, flags, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let command = if name.ends_with(".jtl") {
            "report"
        } else {
            "run"
        };
        let mut args = vec![command, path.to_str().unwrap()];
        args.extend_from_slice(flags);
        let out = run(&args);
        // A plan is the run's input (2, usage); a results file that cannot
        // be read is a report that cannot be made (3), as for a bundle.
        let code = if command == "run" { 2 } else { 3 };
        assert_eq!(out.status.code(), Some(code), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(name),
            "{name} is named: {}",
            stderr(&out)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Empty controllers contribute nothing (the plan was refused, naming a
/// YAML file that does not exist); a plan with nothing to run names
/// itself; 5,000 nested controllers are a clear error, not a stack
/// overflow.
#[test]
fn empty_and_deeply_nested_jmeter_controllers() {
    let dir = temp_dir("jmx-controllers");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = |body: &str| {
        format!(
            "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree>\
             <ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">1</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">1</stringProp></elementProp></ThreadGroup>\
             <hashTree>{body}</hashTree></hashTree></hashTree></jmeterTestPlan>"
        )
    };
    let http = "<HTTPSamplerProxy testname=\"home\"><stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp><stringProp name=\"HTTPSampler.path\">/</stringProp></HTTPSamplerProxy><hashTree/>";
    let empty = "<GenericController testname=\"simple\"/><hashTree/><TransactionController testname=\"tx\"/><hashTree/>";
    let check = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        run(&["scenario", "check", path.to_str().unwrap()])
    };
    let out = check("empty.jmx", &plan(&format!("{empty}{http}")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = check("nothing.jmx", &plan(empty));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("nothing.jmx: ") && said.contains("in the scenario converted from this plan"),
        "{said}"
    );
    assert!(
        !said.contains("nothing.jmx.yaml"),
        "no file of that name exists: {said}"
    );
    let mut nested = http.to_string();
    for i in 0..5000 {
        nested = format!("<GenericController testname=\"c{i}\"/><hashTree>{nested}</hashTree>");
    }
    let out = check("nested.jmx", &plan(&nested));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nested.jmx: line 1: elements nested more than 200 deep"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Flags a command would accept and then not use are refused, naming what
/// to do instead: the URL's request flags beside a capacity --scenario,
/// --max-vus in a closed run, an agent token without an agent, the
/// lesson model without a lesson; and the
/// testbed plan's ramp-up takes a duration like every other.
#[test]
fn flags_that_would_be_ignored_are_refused() {
    let dir = temp_dir("ignored-flags");
    std::fs::create_dir_all(&dir).unwrap();
    let journey = dir.join("journey.yaml");
    std::fs::write(
        &journey,
        "defaults:\n  base_url: http://127.0.0.1:1\nsteps:\n  - label: home\n    path: /\n",
    )
    .unwrap();
    let journey = journey.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "capacity",
                "http://127.0.0.1:1/",
                "--scenario",
                journey,
                "-X",
                "POST",
                "--no-keepalive",
            ],
            "-X, --no-keepalive shape the URL's one request, which --scenario replaces",
        ),
        (
            &[
                "capacity",
                "http://127.0.0.1:1/",
                "--scenario",
                journey,
                "-H",
                "A: b",
                "--label",
                "x",
            ],
            "-H, --label shape the URL's one request",
        ),
        (
            &["run", journey, "-c", "2", "--max-vus", "5"],
            "--max-vus bounds the open model's users",
        ),
        (
            &[
                "load",
                "http://127.0.0.1:1/",
                "-n",
                "1",
                "--agent-token",
                "x",
            ],
            "--agent-token without an agent",
        ),
        (
            &[
                "load",
                "http://127.0.0.1:1/",
                "-n",
                "1",
                "--monitor",
                "local",
                "--agent-token",
                "x",
            ],
            "--agent-token without an agent",
        ),
        (
            &["capacity", "http://127.0.0.1:1/", "--agent-token", "x"],
            "--agent-token without an agent",
        ),
        (
            &[
                "capacity",
                "http://127.0.0.1:1/",
                "--scenario",
                journey,
                "--ladder",
                "model",
            ],
            "--ladder model models a lesson start: give --arrive-within (e.g. 60s), or use --ladder aimed",
        ),
        (
            &["capacity", "http://127.0.0.1:1/", "--arrive-within", "60s"],
            "--arrive-within makes each level a lesson, whose students log in and keep cookies: give the journey with --scenario FILE",
        ),
        (
            &["doctor", "--agent-token", "x"],
            "--agent-token without an agent",
        ),
        (
            &["bench", "cpu", "--agent-token", "x"],
            "--agent-token without --agent",
        ),
        (
            &["testbed", "plan", "--ramp-up", "6.5s"],
            "'6.5s' is not a whole number of seconds",
        ),
    ];
    for (args, message) in cases {
        let output = run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // A duration is a ramp-up: the plan goes on to open its database.
    let output = run(&[
        "testbed",
        "plan",
        "--db",
        "sqlite:/nonexistent/x.db",
        "--ramp-up",
        "2m",
    ]);
    assert!(!stderr(&output).contains("ramp-up"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot open the database"),
        "{}",
        stderr(&output)
    );
}

/// A lesson of a billion students is refused before its arrivals are drawn
/// (they took 19.5 GB): the child may map at most 4 GB, so drawing them
/// would end it with an allocation failure instead of the refusal.
#[test]
fn a_lesson_too_large_is_refused_before_its_arrivals_are_drawn() {
    let dir = temp_dir("huge-lesson");
    std::fs::create_dir_all(&dir).unwrap();
    let journey = dir.join("class.yaml");
    std::fs::write(
        &journey,
        "defaults:\n  base_url: http://127.0.0.1:1\nsteps:\n  - label: home\n    path: /\n",
    )
    .unwrap();
    let output = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 4000000 && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", journey.to_str().unwrap()])
        .args(["--students", "1000000000", "--arrive-within", "60s"])
        .output()
        .expect("sh runs");
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    // Refused for open files (the usual limit) or for the lesson's size.
    assert!(
        said.contains("1000000064 VUs need about 1000000064 open files")
            || said.contains("students: 1000000000 is more than a lesson holds"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
