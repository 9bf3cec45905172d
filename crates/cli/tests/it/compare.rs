//! `headroom compare` on synthetic bundles with known differences, on two
//! real runs of the same thing, and on bundles it must refuse.

use crate::support::{
    light, minutes, paced, program, requires, run, serial, stdout_json, temp_dir, text, Reply,
    TestServer,
};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// A deterministic noise source for the synthetic bundles.
struct Noise(u64);

impl Noise {
    /// Uniform in 1 ± spread.
    fn factor(&mut self, spread: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let unit = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + spread * (2.0 * unit - 1.0)
    }
}

/// Writes a finished bundle of 60 seconds with two labels whose response
/// times are `base × factor × noise`; the summary holds the averages.
fn synthetic_bundle(dir: &Path, factor: f64, seed: u64, governor: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let mut noise = Noise(seed);
    let mut csv = String::from(
        "second,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,apdex_satisfied,apdex_tolerating,apdex_frustrated,p99_ms,active_vus\n",
    );
    let mut labels = serde_json::Map::new();
    let mut all = (0u64, 0.0f64, 0.0f64, 0.0f64);
    for (label, base) in [("login", 100.0), ("course", 50.0)] {
        let (mut count, mut mean, mut p90, mut p95) = (0u64, 0.0, 0.0, 0.0);
        for second in 0..60 {
            let n = (20.0 * noise.factor(0.1)).round() as u64;
            let m = base * factor * noise.factor(0.15);
            csv.push_str(&format!(
                "{second},1.000,{label},{n},0,{m:.3},{:.3},{:.3},{:.3},{n},0,0,{:.3},4\n",
                m * 0.9,
                m * 1.5,
                m * 1.7,
                m * 2.0
            ));
            count += n;
            mean += m / 60.0;
            p90 += m * 1.5 / 60.0;
            p95 += m * 1.7 / 60.0;
        }
        labels.insert(
            label.into(),
            json!({"count": count, "errors": 0, "error_rate": 0.0, "mean_ms": mean, "p90_ms": p90,
                   "p95_ms": p95, "rps": count as f64 / 60.0, "apdex": 1.0}),
        );
        all = (
            all.0 + count,
            all.1 + mean / 2.0,
            all.2 + p90 / 2.0,
            all.3 + p95 / 2.0,
        );
    }
    for second in 0..60 {
        // TOTAL rows: the two labels' seconds together (enough for the test).
        let rows: Vec<&str> = csv
            .lines()
            .filter(|l| l.starts_with(&format!("{second},")))
            .collect();
        let parts: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| r.split(',').filter_map(|f| f.parse().ok()).collect())
            .collect();
        let n: f64 = parts.iter().map(|p| p[2]).sum();
        let mean: f64 = parts.iter().map(|p| p[4] * p[2]).sum::<f64>() / n;
        csv.push_str(&format!(
            "{second},1.000,TOTAL,{n},0,{mean:.3},{:.3},{:.3},{:.3},{n},0,0,{:.3},8\n",
            mean * 0.9,
            mean * 1.5,
            mean * 1.7,
            mean * 2.0
        ));
    }
    std::fs::write(dir.join("intervals.csv"), csv).unwrap();
    let manifest = json!({
        "schema_version": 1,
        "status": "complete",
        "target": "http://testbed/",
        "started_at": "2026-11-21T10:00:00Z",
        "labels": ["login", "course"],
        "fingerprint": {"governor": governor, "kernel": "6.1"},
        "summary": {
            "total": {"count": all.0, "errors": 0, "error_rate": 0.0, "mean_ms": all.1, "p90_ms": all.2,
                      "p95_ms": all.3, "rps": all.0 as f64 / 60.0, "apdex": 1.0},
            "labels": labels,
        },
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
}

fn compare_json(args: &[&str]) -> (serde_json::Value, Option<i32>) {
    let mut all = vec!["compare", "--json"];
    all.extend(args);
    let output = run(&all);
    (stdout_json(&output), output.status.code())
}

fn cell<'a>(
    json: &'a serde_json::Value,
    metric: &str,
    run: usize,
    label: &str,
) -> &'a serde_json::Value {
    let table = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == metric)
        .unwrap();
    let column = table["labels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| l == label)
        .unwrap();
    &table["rows"][run][column]
}

#[test]
fn a_planted_20_percent_slowdown_is_a_significant_regression() {
    let _guard = light();
    let dir = temp_dir("compare-planted");
    synthetic_bundle(&dir.join("a"), 1.0, 1, "performance");
    synthetic_bundle(&dir.join("b"), 1.2, 2, "powersave");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let (json, code) = compare_json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{json}");
    for metric in ["mean", "p90", "p95"] {
        for label in ["login", "course", "TOTAL"] {
            let c = cell(&json, metric, 1, label);
            let change = c["change_pct"].as_f64().unwrap();
            assert!((12.0..28.0).contains(&change), "{metric}[{label}] {c}");
            assert_eq!(c["significant"], true, "{metric}[{label}] {c}");
            let (low, high) = (
                c["interval_pct"][0].as_f64().unwrap(),
                c["interval_pct"][1].as_f64().unwrap(),
            );
            assert!(
                low > 0.0 && low < change + 5.0 && high > change - 5.0,
                "{c}"
            );
        }
    }
    let regressions = json["regressions"].as_array().unwrap();
    assert_eq!(regressions.len(), 9, "{regressions:?}");
    assert!(regressions.iter().all(|r| r["run"] == "B"));
    // Throughput and Apdex did not change: no regression for them.
    assert_eq!(cell(&json, "apdex", 1, "TOTAL")["change_pct"], 0.0);
    let env = json["environment"].as_array().unwrap();
    assert_eq!(env.len(), 1, "{env:?}");
    assert_eq!(env[0]["field"], "generator.governor");
    assert_eq!(env[0]["values"], json!(["performance", "powersave"]));

    // The terminal table marks it, and a higher threshold forgives it.
    let output = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("Significant regressions beyond 5.0%:"),
        "{text}"
    );
    assert!(text.contains("B: p95[TOTAL] +"), "{text}");
    assert!(text.contains("generator.governor") && text.contains("A: performance   B: powersave"));
    let output = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--threshold",
        "30%",
    ]);
    assert_eq!(output.status.code(), Some(0));
    // With B as the baseline, A is faster: an improvement, not a regression.
    let (json, code) = compare_json(&[a.to_str().unwrap(), b.to_str().unwrap(), "--baseline", "B"]);
    assert_eq!(code, Some(0));
    assert_eq!(json["baseline"], "B");
    assert!(
        cell(&json, "mean", 0, "TOTAL")["change_pct"]
            .as_f64()
            .unwrap()
            < -10.0
    );
}

#[test]
fn two_synthetic_runs_of_the_same_thing_are_not_different() {
    let dir = temp_dir("compare-aa-synthetic");
    synthetic_bundle(&dir.join("a"), 1.0, 11, "performance");
    synthetic_bundle(&dir.join("b"), 1.0, 12, "performance");
    let (json, code) = compare_json(&[
        dir.join("a").to_str().unwrap(),
        dir.join("b").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(json["regressions"], json!([]));
    for metric in ["mean", "p90", "p95", "throughput"] {
        let c = cell(&json, metric, 1, "TOTAL");
        assert_eq!(c["significant"], false, "{metric}: {c}");
        assert!(
            c["change_pct"].as_f64().unwrap().abs() < 5.0,
            "{metric}: {c}"
        );
    }
    assert_eq!(json["environment"], json!([]));
}

#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn two_real_runs_of_the_same_thing_show_no_regression() {
    requires!(minutes());
    let _paced = paced();
    let server = TestServer::start(|_| Reply {
        delay: Duration::from_millis(10),
        ..Reply::default()
    });
    let url = server.url("/");
    let a = temp_dir("compare-aa-a");
    let b = temp_dir("compare-aa-b");
    for out in [&a, &b] {
        let output = run(&[
            "load",
            &url,
            "-c",
            "4",
            "-d",
            "6s",
            "--monitor",
            "local",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(output.status.success());
    }
    let (json, code) = compare_json(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--threshold",
        "10%",
    ]);
    assert_eq!(code, Some(0), "{}", json["regressions"]);
    // A URL run has one label, shown once as TOTAL.
    assert_eq!(json["metrics"][0]["labels"], json!(["TOTAL"]));
    // Monitored resources: average and peak per run.
    let local = &json["resources"][0];
    assert_eq!(local["host"], "local");
    assert_eq!(local["rows"][0][0]["name"], "cpu %");
    assert!(local["rows"][0][0]["change_pct"].is_null(), "the baseline");
    assert!(local["rows"][1][0]["change_pct"].is_number());
    for run in 0..2 {
        let cpu = &local["rows"][run][0];
        assert!(cpu["peak"].as_f64().unwrap() >= cpu["average"].as_f64().unwrap());
    }
    let mean = cell(&json, "mean", 1, "TOTAL")["change_pct"]
        .as_f64()
        .unwrap();
    assert!(mean.abs() < 10.0, "{mean}");
}

#[test]
fn unreadable_bundles_are_clear_errors() {
    let dir = temp_dir("compare-bad");
    synthetic_bundle(&dir.join("good"), 1.0, 1, "performance");
    let good = dir.join("good");
    let good = good.to_str().unwrap();
    let refuse = |bundle: &Path, expected: &str| {
        let output = run(&["compare", good, bundle.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{text}");
        assert!(text.contains(expected), "{text}");
    };
    let newer = dir.join("newer");
    synthetic_bundle(&newer, 1.0, 2, "performance");
    std::fs::write(
        newer.join("manifest.json"),
        r#"{"schema_version": 2, "summary": {}}"#,
    )
    .unwrap();
    refuse(&newer, "schema version 2; this headroom reads version 1");
    let truncated = dir.join("truncated");
    synthetic_bundle(&truncated, 1.0, 3, "performance");
    let text = std::fs::read_to_string(truncated.join("manifest.json")).unwrap();
    std::fs::write(truncated.join("manifest.json"), &text[..text.len() / 2]).unwrap();
    refuse(&truncated, "truncated");
    let running = dir.join("running");
    std::fs::create_dir_all(&running).unwrap();
    std::fs::write(
        running.join("manifest.json"),
        r#"{"schema_version": 1, "status": "running"}"#,
    )
    .unwrap();
    // A run that died is read back from its interval files; without them
    // there is nothing to read.
    refuse(
        &running,
        "the run did not finish (status running) and this file cannot be read",
    );
    let cut = dir.join("cut");
    synthetic_bundle(&cut, 1.0, 4, "performance");
    std::fs::write(
        cut.join("intervals.csv"),
        "second,interval_s,label,count\n0,1.0,TOTAL,3\n",
    )
    .unwrap();
    refuse(&cut, "no column 'errors'");
    refuse(&dir.join("absent"), "no such bundle directory");

    let output = run(&["compare", good, good, "--baseline", "Z"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--baseline Z is none of the bundles"));
    let output = run(&["compare", good]);
    assert_eq!(output.status.code(), Some(2));
    let output = run(&["compare", good, good, "--threshold", "lots"]);
    assert_eq!(output.status.code(), Some(2));
}

/// Runs judged with different Apdex thresholds measured different things:
/// the setup difference is named, and Apdex is shown but not compared.
#[test]
fn a_different_apdex_t_is_named_and_not_a_regression() {
    let dir = temp_dir("compare-apdex-t");
    let (a, b) = (dir.join("a"), dir.join("b"));
    synthetic_bundle(&a, 1.0, 1, "performance");
    synthetic_bundle(&b, 1.0, 2, "performance");
    // B: T = 100 ms, and (as a shorter T gives) a lower Apdex.
    let path = b.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["apdex_t_ms"] = json!(100.0);
    manifest["apdex_f_ms"] = json!(400.0);
    manifest["summary"]["total"]["apdex"] = json!(0.6);
    std::fs::write(&path, manifest.to_string()).unwrap();
    let csv = std::fs::read_to_string(b.join("intervals.csv")).unwrap();
    // Half of every second's samples frustrated instead of satisfied.
    let halved: String = csv
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i == 0 {
                return format!("{line}\n");
            }
            let mut f: Vec<String> = line.split(',').map(String::from).collect();
            let n: u64 = f[9].parse().unwrap();
            f[9] = (n / 2).to_string();
            f[11] = (n - n / 2).to_string();
            format!("{}\n", f.join(","))
        })
        .collect();
    std::fs::write(b.join("intervals.csv"), halved).unwrap();
    let (json, code) = compare_json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{}", json["regressions"]);
    assert_eq!(json["apdex_comparable"], false);
    let fields: Vec<&str> = json["setup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"Apdex T (ms)") && fields.contains(&"Apdex F (ms)"),
        "{fields:?}"
    );
    let apdex = cell(&json, "apdex", 1, "TOTAL");
    assert_eq!(apdex["value"], 0.6);
    assert!(apdex["change_pct"].is_null() && apdex["significant"].is_null());
    let text = String::from_utf8_lossy(
        &run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]).stdout,
    )
    .to_string();
    assert!(text.contains("Apdex T (ms)"), "{text}");
    assert!(text.contains("not compared"), "{text}");
}

/// Runs too short for the significance test (fewer than 3 measured
/// seconds) are marked "not tested", and no "no regression" is claimed.
#[test]
fn changes_of_runs_too_short_to_test_are_not_called_insignificant() {
    let _guard = light();
    let server = TestServer::start(|r| Reply {
        delay: Duration::from_millis(if r.path.starts_with("/slow") { 40 } else { 2 }),
        ..Reply::default()
    });
    let dir = temp_dir("compare-short");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for (out, path) in [(&a, "/fast"), (&b, "/slow")] {
        let output = run(&[
            "load",
            &server.url(path),
            "-c",
            "2",
            "-d",
            "2s",
            "--label",
            "page",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let output = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(text.contains(" n.t."), "{text}");
    assert!(
        text.contains("Nothing could be tested for significance"),
        "{text}"
    );
    assert!(!text.contains("No significant regression"), "{text}");
    let (json, _) = compare_json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(json["untested"].as_u64().unwrap() > 0);
}

/// `headroom compare fleet/*` on bench bundles of several hosts: each
/// host's figure with its interval, the spread, the host outside the
/// others' interval and the fingerprint field it differs in.
#[test]
fn a_fleet_of_benches_names_the_odd_host() {
    requires!(program("chromium", "chromium"));
    let _guard = light();
    let dir = temp_dir("fleet");
    std::fs::create_dir_all(&dir).unwrap();
    let measured = dir.join("measured");
    let output = run(&[
        "bench",
        "cpu",
        "--repetitions",
        "3",
        "--cpu-time",
        "200ms",
        "--threads",
        "1",
        "--out",
        &measured.to_string_lossy(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let mut bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(measured.join("bench.json")).unwrap())
            .unwrap();
    // The real bench's structure with repetitions 1% apart around its
    // mean: a busy machine's noise must not decide what is odd.
    for result in bench["results"].as_array_mut().unwrap() {
        for measure in result["measures"].as_array_mut().unwrap() {
            let values = measure["values"].as_array_mut().unwrap();
            let mean =
                values.iter().map(|v| v.as_f64().unwrap()).sum::<f64>() / values.len() as f64;
            for (j, v) in values.iter_mut().enumerate() {
                *v = (mean * (0.99 + 0.01 * (j % 3) as f64)).into();
            }
        }
    }
    // Four hosts of one model: the same bench, pi-4's slower by 20% and
    // on another governor.
    let mut bundles = Vec::new();
    for (i, host) in ["pi-1", "pi-2", "pi-3", "pi-4"].iter().enumerate() {
        let mut copy = bench.clone();
        copy["fingerprint"]["hostname"] = (*host).into();
        if i == 3 {
            copy["fingerprint"]["governor"] = "powersave".into();
            for result in copy["results"].as_array_mut().unwrap() {
                for measure in result["measures"].as_array_mut().unwrap() {
                    let factor = if measure["higher_is_better"] == true {
                        0.8
                    } else {
                        1.25
                    };
                    for v in measure["values"].as_array_mut().unwrap() {
                        *v = (v.as_f64().unwrap() * factor).into();
                    }
                }
            }
        } else {
            // Each host's repetitions in a different order: the same figures.
            for result in copy["results"].as_array_mut().unwrap() {
                for measure in result["measures"].as_array_mut().unwrap() {
                    measure["values"].as_array_mut().unwrap().rotate_left(i);
                }
            }
        }
        let out = dir.join("fleet").join(host);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("bench.json"), copy.to_string()).unwrap();
        bundles.push(out.to_string_lossy().to_string());
    }
    let mut args = vec!["compare"];
    args.extend(bundles.iter().map(String::as_str));
    let output = run(&args);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("fleet of 4 hosts"), "{shown}");
    assert!(shown.contains("governor: pi-1: "), "{shown}");
    assert!(shown.contains("pi-4: powersave"), "{shown}");
    args.push("--json");
    let value = stdout_json(&run(&args));
    let figures = value["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    for figure in figures {
        for host in figure["hosts"].as_array().unwrap() {
            let odd = host["host"] == "pi-4";
            assert_eq!(host["outlier"] == true, odd, "{figure}");
        }
        let spread = &figure["spread"];
        assert!(spread["range_pct"].as_f64().unwrap() > 15.0, "{figure}");
    }
    // The four on one page: `report` of the bundles, and `compare -o`.
    let page = dir.join("fleet.html");
    let mut args = vec!["report"];
    args.extend(bundles.iter().map(String::as_str));
    let page_arg = page.to_string_lossy().to_string();
    args.extend(["-o", &page_arg]);
    let output = run(&args);
    assert!(output.status.success(), "{}", text(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    crate::support::browser::self_contained(&html);
    let dom = crate::support::browser::open_in_chromium(&page, &dir);
    assert!(dom.contains("4 bundles side by side"), "{dom}");
    // pi-4 is 20% slower than pi-1, the first: a real change, said.
    assert!(dom.contains("-20.0%") && dom.contains("worse"), "{dom}");
    assert!(
        dom.contains("powersave"),
        "the environment names the governor: {dom}"
    );
    let compared = dir.join("compared.html");
    let compared_arg = compared.to_string_lossy().to_string();
    let mut args = vec!["compare", "-o", &compared_arg, "--baseline", "B"];
    args.extend(bundles.iter().map(String::as_str));
    let output = run(&args);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
    let html = std::fs::read_to_string(&compared).unwrap();
    // The baseline (pi-2) first.
    let first = html.find("pi-2").unwrap();
    assert!(html.find("pi-1").unwrap() > first, "the baseline leads");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A JMeter results file of `seconds` seconds, one sample of each of two
/// labels every 100 ms, `ms` long (the page's every tenth fails with 500).
fn jtl(path: &Path, seconds: u64, ms: u64) {
    let mut text = String::from(
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,sentBytes,allThreads,URL,Latency,Connect\n",
    );
    for i in 0..seconds * 10 {
        let at = 1_700_000_000_000 + i * 100;
        for (label, extra) in [("page", 0), ("api", 7)] {
            let failed = label == "page" && i % 10 == 9;
            let (code, ok) = if failed {
                ("500", "false")
            } else {
                ("200", "true")
            };
            let _ = std::fmt::Write::write_fmt(
                &mut text,
                format_args!(
                    "{at},{},{label},{code},OK,Group 1-1,{ok},1200,150,1,http://127.0.0.1/{label},{},0\n",
                    ms + extra + i % 5,
                    ms / 2
                ),
            );
        }
    }
    std::fs::write(path, text).unwrap();
}

/// `report results.jtl` writes report.html into the imported bundle; a
/// compare of that JTL afterwards reuses the import and leaves the
/// report (before, each command imported the JTL again into a new
/// directory and the report was gone). A JTL that changed is imported
/// again, its figures replaced, the report still kept.
#[test]
fn compare_keeps_what_report_wrote_into_a_jtls_bundle() {
    let dir = temp_dir("compare-jtl-keeps");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("results.jtl"), dir.join("other.jtl"));
    jtl(&a, 10, 40);
    jtl(&b, 10, 40);
    let report = run(&["report", a.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let bundle = dir.join("results-jtl-bundle");
    let page = bundle.join("report.html");
    let written = std::fs::read_to_string(&page).unwrap();
    let imported = std::fs::metadata(bundle.join("manifest.json"))
        .unwrap()
        .modified()
        .unwrap();

    let compare = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(compare.status.success(), "{}", text(&compare));
    assert_eq!(
        std::fs::read_to_string(&page).ok().as_deref(),
        Some(written.as_str()),
        "report.html kept"
    );
    // The import was reused, not made again.
    assert_eq!(
        std::fs::metadata(bundle.join("manifest.json"))
            .unwrap()
            .modified()
            .unwrap(),
        imported
    );
    assert!(
        !String::from_utf8_lossy(&compare.stderr).contains("results-jtl-bundle"),
        "{}",
        text(&compare)
    );
    // With another bundle too.
    let other = dir.join("other-jtl-bundle");
    let compare = run(&["compare", bundle.to_str().unwrap(), other.to_str().unwrap()]);
    assert!(compare.status.success(), "{}", text(&compare));
    assert!(page.exists());

    // The JTL grows (JMeter ran on): imported again, the report kept.
    std::thread::sleep(Duration::from_millis(20));
    jtl(&a, 20, 40);
    let compare = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
    ]);
    assert!(compare.status.success(), "{}", text(&compare));
    assert!(page.exists(), "report.html kept after a new import");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        m["summary"]["total"]["count"], 400,
        "the new import's figures"
    );
    assert!(!dir.join("results-jtl-bundle.importing").exists());
}

/// Two runs against the same PHP page behind nginx and php-fpm, the pool
/// changed from 2 workers to 6 between them: `compare` names the setting
/// that differs (read from the running master's configuration, as
/// `--monitor local` records the server's software) beside the throughput
/// it changed. Another php-fpm master, with a `[www]` pool of its own,
/// starts between the runs (as another site's, or another test's, may):
/// the watched master's pool keeps its name, so it is not reported as gone.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn compare_names_the_changed_pm_max_children() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    use crate::support::php_site::{php_fpm, serve, App};
    let _guard = serial();
    let dir = temp_dir("compare-fpm-pool");
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    // 2 ms a request: 2 workers serve at most 1,000 a second, 6 three times that.
    std::fs::write(root.join("index.php"), "<?php usleep(2000); echo 'ok';").unwrap();
    let process = php_fpm().file_name().unwrap().to_string_lossy().to_string();
    let site = dir.join("site");
    let mut bundles = Vec::new();
    let mut other = None;
    for workers in [2, 6] {
        if workers == 6 {
            other = Some(other_fpm_master(&dir.join("other")));
        }
        let port = crate::support::free_port();
        let pool = format!("listen.mode = 0666\npm.max_children = {workers}\n");
        // The site's pool edited and its servers started again, as a user
        // does: serve waits for the socket, so the old one goes first.
        let _ = std::fs::remove_file(site.join("php.sock"));
        let _site = serve(
            &site,
            port,
            &App {
                root: &root,
                index: "index.php",
                deny: "none",
                fpm_pool: &pool,
                h2: false,
            },
        );
        let bundle = dir.join(format!("workers-{workers}"));
        let url = format!("http://127.0.0.1:{port}/index.php");
        let out = run(&[
            "load",
            &url,
            "-c",
            "8",
            "-d",
            "3s",
            "--monitor",
            "local",
            "--process",
            &process,
            "--out",
            bundle.to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        bundles.push(bundle);
    }
    drop(other);
    let out = run(&[
        "compare",
        bundles[0].to_str().unwrap(),
        bundles[1].to_str().unwrap(),
    ]);
    let report = text(&out);
    // The watched master is named by its configuration file (not the PHP
    // version's own), in both runs.
    let watched = format!("({}/fpm.conf) [www] pm.max_children", site.display());
    let line = report
        .lines()
        .find(|l| l.contains(&watched))
        .unwrap_or_else(|| panic!("no {watched} in\n{report}"));
    assert!(line.contains("A: 2") && line.contains("B: 6"), "{line}");
    // The only setting of the watched master that differs; the other
    // master's pool is there in B only, under its own file's name.
    let differing: Vec<&str> = report
        .lines()
        .filter(|l| l.contains(".server.settings.php-fpm"))
        .filter(|l| !l.contains(&format!("{}/fpm.conf)", dir.join("other").display())))
        .collect();
    assert_eq!(differing, vec![line], "{report}");
    let other_pool = format!(
        "({}/fpm.conf) [www] pm.max_children",
        dir.join("other").display()
    );
    assert!(
        report
            .lines()
            .any(|l| l.contains(&other_pool) && l.contains("A: (none)") && l.contains("B: 3")),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A php-fpm master of its own in `dir`, with a `[www]` pool of 3 workers,
/// once it listens.
fn other_fpm_master(dir: &Path) -> crate::support::php_site::Daemon {
    use crate::support::php_site::{php_fpm, Daemon};
    std::fs::create_dir_all(dir).unwrap();
    let socket = dir.join("php.sock");
    let conf = dir.join("fpm.conf");
    std::fs::write(
        &conf,
        format!(
            "[global]\npid = {d}/php-fpm.pid\nerror_log = {d}/php-fpm.log\ndaemonize = no\n\
             [www]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 3\n",
            d = dir.display(),
            s = socket.display()
        ),
    )
    .unwrap();
    let master = Daemon(
        std::process::Command::new(php_fpm())
            .args(["-F", "-R", "-y"])
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("php-fpm starts"),
    );
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(socket.exists(), "the other php-fpm master listens");
    master
}
