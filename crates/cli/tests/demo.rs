//! `headroom demo`, the README's first command, runs end to end.

mod support;

use support::*;

#[test]
fn demo_runs_a_whole_load_and_writes_a_bundle() {
    let out = temp_dir("demo");
    let output = run(&["demo", "-d", "3s", "--json", "--out", out.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["status"], "complete");
    let count = json["total"]["count"].as_u64().unwrap();
    // 20 users (started over 1.5 s) with 0.1-0.5 s think time and 5-40 ms pages.
    assert!(count > 50, "{count} samples");
    assert_eq!(json["total"]["errors"], 0);
    // Every 25th page is a 0.6-0.9 s report: tolerated, not satisfied.
    assert!(json["total"]["apdex_tolerating"].as_u64().unwrap() >= 1);
    assert_eq!(manifest(&out)["status"], "complete");
}
