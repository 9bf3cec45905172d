//! JMeter's results in headroom, checked against real JMeter 5.6.3
//! (assembled from Maven Central by scripts/jmeter): a plan runs against a
//! scripted server, JMeter writes its CSV and XML JTL and its dashboard,
//! and headroom's import of the same files gives the dashboard's counts,
//! errors, Apdex and percentiles.

use crate::support;

use crate::support::{light, program, requires, run, serial, temp_dir, text, Reply, TestServer};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// JMeter's home, assembled (once, then cached) by scripts/jmeter.
pub(crate) fn jmeter_home() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/jmeter");
    let out = Command::new(script).output().expect("scripts/jmeter runs");
    assert!(out.status.success(), "scripts/jmeter: {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(stdout.lines().last().expect("the home's path").trim())
}

pub(crate) fn jmeter(home: &Path, args: &[&str]) {
    let out = Command::new(home.join("bin/jmeter"))
        .args(args)
        .output()
        .expect("jmeter runs");
    assert!(out.status.success(), "jmeter {args:?}: {}", text(&out));
}

fn manifest(bundle: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap()).unwrap()
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-9, "{what}: headroom {a}, JMeter {b}");
}

#[test]
fn jmeters_own_results_imported_give_its_dashboards_figures() {
    requires!(
        program("java", "default-jre-headless"),
        program("mvn", "maven"),
    );
    let _guard = light();
    let home = jmeter_home();
    // /page: a 500 every 5th request, 600 ms every 7th (tolerating);
    // /api: a 200 whose body fails the plan's assertion every 4th.
    let server = TestServer::start(|req| {
        let n = req.number;
        if req.path.starts_with("/page") {
            Reply {
                status: if n % 5 == 0 { 500 } else { 200 },
                delay: Duration::from_millis(if n % 7 == 0 { 600 } else { (n % 4) * 15 }),
                text: Some("<html>page</html>".into()),
                ..Reply::default()
            }
        } else {
            Reply {
                delay: Duration::from_millis((n % 3) * 10),
                text: Some(if n % 4 == 0 {
                    "nope".into()
                } else {
                    "ok".into()
                }),
                ..Reply::default()
            }
        }
    });
    let dir = temp_dir("jmeter");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jmeter-plan.jmx");
    let port = format!("-Jport={}", server.addr.port());
    let csv = dir.join("results.jtl");
    jmeter(
        &home,
        &[
            "-n",
            "-t",
            plan.to_str().unwrap(),
            &port,
            "-l",
            csv.to_str().unwrap(),
            "-j",
            dir.join("jmeter.log").to_str().unwrap(),
        ],
    );
    let dashboard = dir.join("dashboard");
    jmeter(
        &home,
        &[
            "-g",
            csv.to_str().unwrap(),
            "-o",
            dashboard.to_str().unwrap(),
            "-j",
            dir.join("report.log").to_str().unwrap(),
        ],
    );
    let statistics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dashboard.join("statistics.json")).unwrap())
            .unwrap();

    let report = run(&["report", csv.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let bundle = dir.join("results-jtl-bundle");
    assert!(bundle.join("report.html").exists(), "{}", text(&report));
    let m = manifest(&bundle);
    assert_eq!(m["kind"], "import");
    let summary = &m["summary"];
    let ours = &m["scenario"]["jmeter_dashboard"]["labels"];
    for (label, theirs) in statistics.as_object().unwrap() {
        let figures = if label == "Total" {
            &summary["total"]
        } else {
            &summary["labels"][label]
        };
        assert_eq!(figures["count"], theirs["sampleCount"], "{label} count");
        assert_eq!(figures["errors"], theirs["errorCount"], "{label} errors");
        let dash = &ours[label.as_str()];
        for (mine, jmeters) in [
            ("mean_ms", "meanResTime"),
            ("median_ms", "medianResTime"),
            ("p90_ms", "pct1ResTime"),
            ("p95_ms", "pct2ResTime"),
            ("p99_ms", "pct3ResTime"),
        ] {
            close(
                dash[mine].as_f64().unwrap(),
                theirs[jmeters].as_f64().unwrap(),
                &format!("{label} {mine}"),
            );
        }
        // headroom's own mean comes from its histogram (3 significant digits).
        let (mean, exact) = (
            figures["mean_ms"].as_f64().unwrap(),
            theirs["meanResTime"].as_f64().unwrap(),
        );
        assert!(
            (mean - exact).abs() <= exact * 0.001 + 0.01,
            "{label} mean {mean} vs {exact}"
        );
    }
    // 3 threads x 12 loops: 36 of each, and the transactions out of the total.
    assert_eq!(statistics["Total"]["sampleCount"], 72);
    assert_eq!(summary["labels"]["journey"]["count"], 36);
    // The Apdex table of JMeter's dashboard (content/js/dashboard.js): its
    // overall figure counts the transaction controllers too.
    let js = std::fs::read_to_string(dashboard.join("content/js/dashboard.js")).unwrap();
    let table = &js[js.find("apdexTable").expect("the Apdex table")..];
    let at = table.find("\"overall\": {\"data\": [").unwrap() + 21;
    let overall: f64 = table[at..]
        .split(',')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dashboard_figures = &m["scenario"]["jmeter_dashboard"];
    close(
        dashboard_figures["overall_apdex"].as_f64().unwrap(),
        overall,
        "overall Apdex",
    );
    for label in ["page", "api", "journey"] {
        let at = table.find(&format!(", \"{label}\"]")).unwrap();
        let start = table[..at].rfind('[').unwrap() + 1;
        let theirs: f64 = table[start..at].split(',').next().unwrap().parse().unwrap();
        close(
            ours[label]["apdex"].as_f64().unwrap(),
            theirs,
            &format!("{label} Apdex"),
        );
    }

    // The same plan writing XML: every sample, nested transactions included.
    let xml = dir.join("results.xml");
    jmeter(
        &home,
        &[
            "-n",
            "-t",
            plan.to_str().unwrap(),
            &port,
            "-Jjmeter.save.saveservice.output_format=xml",
            "-l",
            xml.to_str().unwrap(),
            "-j",
            dir.join("jmeter-xml.log").to_str().unwrap(),
        ],
    );
    let written = std::fs::read_to_string(&xml).unwrap();
    let samples = written.matches("<httpSample ").count() + written.matches("<sample ").count();
    let failed = written.matches(" s=\"false\"").count();
    let report = run(&["report", xml.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let m = manifest(&dir.join("results-xml-bundle"));
    let labels = &m["summary"]["labels"];
    let count: u64 = ["page", "api", "journey"]
        .iter()
        .map(|l| labels[*l]["count"].as_u64().unwrap())
        .sum();
    let errors: u64 = ["page", "api", "journey"]
        .iter()
        .map(|l| labels[*l]["errors"].as_u64().unwrap())
        .sum();
    assert_eq!((count, errors), (samples as u64, failed as u64));
    assert_eq!(
        m["summary"]["total"]["count"], 72,
        "transactions stay out of the total"
    );

    // JMeter's history beside a headroom run: compare reads the JTL.
    let compared = run(&["compare", csv.to_str().unwrap(), xml.to_str().unwrap()]);
    assert!(compared.status.success(), "{}", text(&compared));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// JMeter's plan, then headroom's run of it, against one fresh testbed;
/// every count is checked here. Returns headroom's mean response time
/// over JMeter's (weighted by each label's count) and the labels' means.
fn moodle_plan_side_by_side(home: &Path) -> (f64, Vec<String>) {
    const LOOPS: u64 = 10;
    let (dir, db) = support::site::sqlite_dataset("jmx", "s");
    let site = support::site::serve(&db, &[]);
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/moodle-testplan.jmx");
    let users = dir.join("files/users.csv");
    let props = [
        format!("-Jport={}", site.port),
        format!("-Jusersfile={}", users.display()),
        "-Jusers=5".to_string(),
        format!("-Jloops={LOOPS}"),
        "-Jthroughput=3000".to_string(),
    ];
    let props: Vec<&str> = props.iter().map(String::as_str).collect();

    // Real JMeter.
    let before = support::site::stats(site.port);
    let jtl = dir.join("jmeter.jtl");
    let mut args = vec![
        "-n",
        "-t",
        plan.to_str().unwrap(),
        "-l",
        jtl.to_str().unwrap(),
    ];
    let log = dir.join("jmeter.log");
    args.extend(["-j", log.to_str().unwrap()]);
    args.extend(props.iter().copied());
    jmeter(home, &args);
    let after_jmeter = support::site::stats(site.port);

    // headroom, the same plan and properties.
    let bundle = dir.join("bundle");
    let mut args = vec![
        "run",
        plan.to_str().unwrap(),
        "--strict",
        "--json",
        "--out",
        bundle.to_str().unwrap(),
    ];
    args.extend(props.iter().copied());
    let ours = run(&args);
    let json: serde_json::Value =
        serde_json::from_slice(&ours.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&ours)));
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
    let after_headroom = support::site::stats(site.port);

    // Each logged a CSV user in and posted a reply per user and loop.
    let delta = |a: &serde_json::Value, b: &serde_json::Value, k: &str| {
        b[k].as_u64().unwrap() - a[k].as_u64().unwrap()
    };
    assert_eq!(delta(&before, &after_jmeter, "logins"), 5 * LOOPS, "JMeter");
    assert_eq!(
        delta(&after_jmeter, &after_headroom, "logins"),
        5 * LOOPS,
        "headroom"
    );
    assert_eq!(delta(&before, &after_jmeter, "posts"), 5 * LOOPS, "JMeter");
    assert_eq!(
        delta(&after_jmeter, &after_headroom, "posts"),
        5 * LOOPS,
        "headroom"
    );
    // The same ten accounts: in both, the warm-up group took row 1 of the
    // plan-wide CSV, and the main group's users rows 2-11.
    // (the test's site has more than 5 * LOOPS + 1 rows: no account twice)
    assert_eq!(after_headroom["login_users"], 5 * LOOPS, "{after_headroom}");
    assert_eq!(json["total"]["errors"], 0, "{}", json["total"]);

    // Per label: the same requests; mean times alike at this light load.
    let report = run(&["report", jtl.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let theirs = manifest(&dir.join("jmeter-jtl-bundle"));
    let mut means = Vec::new();
    let (mut ours_sum, mut theirs_sum, mut n) = (0.0, 0.0, 0.0);
    for (label, figures) in json["labels"].as_object().unwrap() {
        let t = &theirs["summary"]["labels"][label.as_str()];
        assert_eq!(figures["count"], t["count"], "{label}: count");
        assert_eq!(t["errors"], 0, "{label}: JMeter's errors");
        let (count, ours, their) = (
            figures["count"].as_f64().unwrap(),
            figures["mean_ms"].as_f64().unwrap(),
            t["mean_ms"].as_f64().unwrap(),
        );
        (ours_sum, theirs_sum, n) = (
            ours_sum + count * ours,
            theirs_sum + count * their,
            n + count,
        );
        means.push(format!("{label}: {ours:.1} / {their:.1}"));
    }
    // Over the plan's labels (JMeter's JTL also holds its redirect
    // sub-samples, "03 login-0", which its total counts). JMeter's client
    // adds its own time to every sample (bench/jmx, 2,400 requests a run:
    // headroom's mean is 0.81-0.97 of JMeter's, both orders); headroom must
    // never report more than JMeter does beyond 10%, nor less than 0.7.
    let ratio = ours_sum / theirs_sum;
    eprintln!(
        "mean ms, headroom / JMeter: {:.2} / {:.2} (ratio {ratio:.3}); {means:?}",
        ours_sum / n,
        theirs_sum / n
    );
    assert_eq!(json["labels"].as_object().unwrap().len(), 13);
    assert_eq!(json["labels"]["Warm-up front page"]["count"], 1);
    std::fs::remove_dir_all(&dir).unwrap();
    (ratio, means)
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn the_shipped_moodle_plan_runs_in_jmeter_and_in_headroom_alike() {
    requires!(
        program("java", "default-jre-headless"),
        program("mvn", "maven"),
    );
    let _serial = serial();
    let home = jmeter_home();
    // The means are measured again when they disagree: the counts are
    // exact every time, but a busy neighbour on this VM slows one client's
    // run of 20 s and not the other's (a suite once saw 1.385 then 0.555:
    // noise, both ways); an error of headroom's timing disagrees on every
    // attempt.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (ratio, means) = moodle_plan_side_by_side(&home);
        if (0.7..=1.1).contains(&ratio) {
            return;
        }
        seen.push(format!("mean ratio {ratio:.3}: {means:?}"));
    }
    panic!("{}", seen.join("\n"));
}

/// A plan of one thread looping `loops` times over `samplers`.
fn small_plan(loops: u32, samplers: &str) -> String {
    format!(
        "<jmeterTestPlan><hashTree><TestPlan testname=\"p\"/><hashTree>\
         <ThreadGroup testname=\"g\"><stringProp name=\"ThreadGroup.num_threads\">1</stringProp><elementProp name=\"ThreadGroup.main_controller\" elementType=\"LoopController\"><stringProp name=\"LoopController.loops\">{loops}</stringProp></elementProp></ThreadGroup>\
         <hashTree>{samplers}</hashTree></hashTree></hashTree></jmeterTestPlan>"
    )
}

fn sampler(name: &str, path: &str, props: &str) -> String {
    format!("<HTTPSamplerProxy testname=\"{name}\"><stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp><stringProp name=\"HTTPSampler.path\">{path}</stringProp>{props}</HTTPSamplerProxy><hashTree/>")
}

/// Runs a plan against `server`; the run's JSON whatever its exit code.
fn run_plan(name: &str, plan: &str, server: &TestServer) -> (serde_json::Value, String) {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.jmx"));
    std::fs::write(&file, plan).unwrap();
    let url = server.url("/");
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--target",
        &url,
        "--json",
        "--out",
        dir.join("bundle").to_str().unwrap(),
    ]);
    let json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (json, String::from_utf8_lossy(&out.stderr).to_string())
}

/// A sampler's 200 ms response timeout fails a 500 ms response, as in
/// JMeter (it was dropped and every request passed); keep-alive off opens
/// a connection per request; "Retrieve All Embedded Resources" is said.
#[test]
fn a_plans_timeouts_and_keep_alive_are_honoured() {
    let _guard = light();
    let connections = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = connections.clone();
    let server = TestServer::start(move |r| {
        let close = r
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        seen.lock()
            .unwrap()
            .push((r.connection, r.path.clone(), close));
        Reply {
            delay: Duration::from_millis(if r.path.starts_with("/slow") { 500 } else { 0 }),
            ..Reply::default()
        }
    });
    let timeout = "<stringProp name=\"HTTPSampler.response_timeout\">200</stringProp>";
    let (json, _) = run_plan(
        "timeout",
        &small_plan(3, &sampler("slow", "/slow", timeout)),
        &server,
    );
    let slow = &json["labels"]["slow"];
    assert_eq!(slow["count"], 3, "{json}");
    assert_eq!(
        slow["errors"], 3,
        "every request times out, as in JMeter: {slow}"
    );
    // Without it, the 30 s default: none fails.
    let (json, _) = run_plan(
        "no-timeout",
        &small_plan(1, &sampler("slow", "/slow", "")),
        &server,
    );
    assert_eq!(json["labels"]["slow"]["errors"], 0, "{json}");
    connections.lock().unwrap().clear();
    let off = "<boolProp name=\"HTTPSampler.use_keepalive\">false</boolProp>\
               <boolProp name=\"HTTPSampler.image_parser\">true</boolProp>";
    // a closes its connection; b and c share the next one (JMeter opens
    // new connections each iteration): 2 connections per iteration.
    let plan = small_plan(
        3,
        &(sampler("a", "/a", off) + &sampler("b", "/b", "") + &sampler("c", "/c", "")),
    );
    let (json, stderr) = run_plan("keep-alive-off", &plan, &server);
    assert_eq!(json["total"]["count"], 9, "{json}");
    let seen = connections.lock().unwrap().clone();
    let mut used: Vec<u64> = seen.iter().map(|(c, _, _)| *c).collect();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), 6, "a's own connection, b and c's: {seen:?}");
    for (_, path, close) in &seen {
        assert_eq!(
            *close,
            path == "/a",
            "Connection: close on a only: {seen:?}"
        );
    }
    assert!(
        stderr.contains("\"Retrieve All Embedded Resources\" is not converted"),
        "{stderr}"
    );
}

/// scenarios/moodle-testplan.jmx as shipped, run from another directory
/// against `headroom testbed serve` (size S, the default seed): its users
/// CSV is found beside the plan, every account logs in, no error. Only the
/// port (free, not 8080) and a higher throughput cap (the plan's 120/min
/// would take a minute) are given.
#[test]
fn the_shipped_moodle_plan_runs_against_the_testbed_as_it_is() {
    let _light = support::light();
    let (dir, db) = support::site::sqlite_dataset("jmx-as-shipped", "s");
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    // The shipped accounts are the testbed's (seed 1): the first 100 rows.
    let shipped = std::fs::read_to_string(scenarios.join("moodle-testplan-users.csv")).unwrap();
    let made = std::fs::read_to_string(dir.join("files/users.csv")).unwrap();
    assert_eq!(shipped.lines().count(), 100);
    assert!(
        made.starts_with(&shipped),
        "the testbed's users.csv changed"
    );

    let site = support::site::serve(&db, &[]);
    let before = support::site::stats(site.port);
    let plan = scenarios.join("moodle-testplan.jmx");
    let bundle = dir.join("bundle");
    let out = support::headroom()
        .current_dir(&dir)
        .args(["run", plan.to_str().unwrap(), "--strict", "--json", "--out"])
        .arg(&bundle)
        .arg(format!("-Jport={}", site.port))
        .arg("-Jthroughput=6000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let after = support::site::stats(site.port);
    // The warm-up's front page, then 5 users × 2 loops × 12 requests.
    assert_eq!(json["total"]["count"], 121, "{}", json["total"]);
    assert_eq!(json["total"]["errors"], 0, "{}", json["total"]);
    assert_eq!(
        json["checks"]["Logged in"]["failures"], 0,
        "{}",
        json["checks"]
    );
    let logins = after["logins"].as_u64().unwrap() - before["logins"].as_u64().unwrap();
    assert_eq!(logins, 10);
    eprintln!("elapsed {} s", json["elapsed_s"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A plan whose CSV cannot be read: the error names the plan given (not a
/// converted file) and its element, and from-jmx prints the scenario the
/// error's line is in.
#[test]
fn a_plans_missing_data_file_is_said_of_the_plan_and_its_element() {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/moodle-testplan.jmx");
    let plan = plan.to_str().unwrap();
    let out = run(&["run", plan, "-Jusersfile=no-such-users.csv", "-d", "1s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "{plan}: CSVDataSet 'Users', filename ${{__P(usersfile,moodle-testplan-users.csv)}}: \
             cannot read the data file"
        )),
        "{said}"
    );
    assert!(said.contains("scenarios/no-such-users.csv"), "{said}");
    assert!(!said.contains(".jmx.yaml"), "{said}");
    let out = run(&[
        "scenario",
        "from-jmx",
        plan,
        "-Jusersfile=no-such-users.csv",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(
        yaml.contains("  file: \"no-such-users.csv\""),
        "{}",
        text(&out)
    );
}
