//! JMeter's results in headroom, checked against real JMeter 5.6.3
//! (assembled from Maven Central by scripts/jmeter): a plan runs against a
//! scripted server, JMeter writes its CSV and XML JTL and its dashboard,
//! and headroom's import of the same files gives the dashboard's counts,
//! errors, Apdex and percentiles.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{run, serial, temp_dir, text, Reply, TestServer};

/// JMeter's home, assembled (once, then cached) by scripts/jmeter.
fn jmeter_home() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/jmeter");
    let out = Command::new(script).output().expect("scripts/jmeter runs");
    assert!(out.status.success(), "scripts/jmeter: {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(stdout.lines().last().expect("the home's path").trim())
}

fn jmeter(home: &Path, args: &[&str]) {
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
    let _serial = serial();
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

#[test]
fn the_shipped_moodle_plan_runs_in_jmeter_and_in_headroom_alike() {
    let _serial = serial();
    let home = jmeter_home();
    let (dir, db) = support::site::sqlite_dataset("jmx", "s");
    let site = support::site::serve(&db, &[]);
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/moodle-testplan.jmx");
    let users = dir.join("files/users.csv");
    let props = [
        format!("-Jport={}", site.port),
        format!("-Jusersfile={}", users.display()),
        "-Jusers=5".to_string(),
        "-Jloops=2".to_string(),
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
    jmeter(&home, &args);
    let after_jmeter = support::site::stats(site.port);

    // --strict refuses a plan with anything not converted (the warm-up group).
    let strict = run(&["run", plan.to_str().unwrap(), "--strict"]);
    assert_eq!(strict.status.code(), Some(2), "{}", text(&strict));
    assert!(text(&strict).contains("Warm-up site"), "{}", text(&strict));

    // headroom, the same plan and properties.
    let bundle = dir.join("bundle");
    let mut args = vec![
        "run",
        plan.to_str().unwrap(),
        "--json",
        "--out",
        bundle.to_str().unwrap(),
    ];
    args.extend(props.iter().copied());
    let ours = run(&args);
    let json: serde_json::Value =
        serde_json::from_slice(&ours.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&ours)));
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
    assert!(
        String::from_utf8_lossy(&ours.stderr)
            .contains("thread group 'Warm-up site' (1 threads) is not run"),
        "what was not converted is said: {}",
        text(&ours)
    );
    let after_headroom = support::site::stats(site.port);

    // Each logged every CSV user in (rows 1-10) and posted ten replies.
    let delta = |a: &serde_json::Value, b: &serde_json::Value, k: &str| {
        b[k].as_u64().unwrap() - a[k].as_u64().unwrap()
    };
    assert_eq!(delta(&before, &after_jmeter, "logins"), 10, "JMeter");
    assert_eq!(
        delta(&after_jmeter, &after_headroom, "logins"),
        10,
        "headroom"
    );
    assert_eq!(delta(&before, &after_jmeter, "posts"), 10, "JMeter");
    assert_eq!(
        delta(&after_jmeter, &after_headroom, "posts"),
        10,
        "headroom"
    );
    // Ten accounts each: JMeter's warm-up group took row 1 of the plan-wide
    // CSV (its users were rows 2-11), headroom runs the main group only
    // (rows 1-10): eleven accounts between them.
    assert_eq!(after_headroom["login_users"], 11, "{after_headroom}");
    assert_eq!(json["total"]["errors"], 0, "{}", json["total"]);

    // Per label: the same requests; mean times alike at this light load.
    let report = run(&["report", jtl.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let theirs = manifest(&dir.join("jmeter-jtl-bundle"));
    let mut means = Vec::new();
    for (label, figures) in json["labels"].as_object().unwrap() {
        let t = &theirs["summary"]["labels"][label.as_str()];
        assert_eq!(figures["count"], t["count"], "{label}: count");
        assert_eq!(t["errors"], 0, "{label}: JMeter's errors");
        means.push(format!(
            "{label}: {:.1} / {:.1}",
            figures["mean_ms"].as_f64().unwrap(),
            t["mean_ms"].as_f64().unwrap()
        ));
    }
    // Mean times are printed, not held to a tolerance: at a few ms a page,
    // JMeter's cold JVM (a fresh process per run) adds more than the pages
    // take (measured 6.6 ms headroom vs 26.7 ms JMeter on this machine).
    eprintln!(
        "mean ms, headroom / JMeter: total {:.1} / {:.1}; {means:?}",
        json["total"]["mean_ms"].as_f64().unwrap(),
        theirs["summary"]["total"]["mean_ms"].as_f64().unwrap()
    );
    assert_eq!(json["labels"].as_object().unwrap().len(), 12);
    std::fs::remove_dir_all(&dir).unwrap();
}
