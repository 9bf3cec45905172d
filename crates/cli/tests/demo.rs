//! `headroom demo`, the README's first command, runs end to end: the
//! testbed, a capacity search against it and the report with the curve.

mod support;

use support::*;

#[test]
fn demo_searches_the_testbeds_capacity_and_writes_the_report() {
    let _serial = serial();
    let testbeds = || -> Vec<String> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("headroom-demo-"))
            .collect()
    };
    let before = testbeds();
    let out = temp_dir("demo");
    let started = std::time::Instant::now();
    let output = run(&["demo", "-d", "3s", "--out", out.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The answer says what one of its users is: a request loop, not a
    // person reading pages.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = stdout
        .lines()
        .position(|l| l.starts_with("headroom demo: "))
        .unwrap_or_else(|| panic!("no answer line in {stdout}"));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[answer + 1].starts_with("A demo user runs Moodle's 14-step journey in a loop with no time to read"),
        "{stdout}"
    );
    assert!(lines[answer + 2].starts_with("Report: "), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("capacity.json")).unwrap())
            .unwrap();
    let users = json["capacity"]["users"].as_u64().expect("a capacity");
    assert!(users >= 10, "{users}");
    // The testbed's knee lies inside the demo's levels: a search that ends
    // at --max has found no capacity to show.
    assert_eq!(json["capacity"]["at_least"], false, "{}", json["verdict"]);
    assert!(json["capacity"]["apdex"].as_f64().unwrap() >= 0.70);
    let levels = json["levels"].as_array().unwrap();
    assert!(levels.len() >= 3, "{levels:?}");
    // The journey passed its checks at every level: no errors.
    for level in levels {
        assert_eq!(level["error_rate"], 0.0, "{level}");
        assert!(
            level["resources"][0]["cpu_avg"].is_number(),
            "local monitoring"
        );
    }
    assert!(json["verdict"]
        .as_str()
        .unwrap()
        .contains("users at Apdex ≥ 0.70"));
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for title in [
        "Apdex against users",
        "Response time against users",
        "Throughput against users",
    ] {
        assert!(
            report.contains(&format!(">\n{title}\n</text>")),
            "no curve '{title}'"
        );
    }
    assert!(out.join("capacity.json").exists());
    // The temporary testbed is gone.
    assert_eq!(testbeds(), before);
    assert!(
        started.elapsed().as_secs() < 180,
        "the demo took {:?}",
        started.elapsed()
    );
}
