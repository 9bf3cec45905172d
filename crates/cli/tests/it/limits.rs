//! What limits it, named from the server's own evidence: bottlenecks
//! planted in Debian's php-fpm behind nginx, each named by `capacity` and
//! the others not, judged by php-fpm's own status page and the kernel's
//! own counters of the server's control group.

use crate::support::php_site::{php_fpm, serve_under, App, PhpSite};
use crate::support::{
    free_port, headroom, http_get, paced, program, requires, serial, stdout_json, temp_dir,
};
use std::path::Path;

/// A page and php-fpm's pool lines, served on a free port; php-fpm
/// under `wrapper` (empty: as it is). The status page is
/// /fpm-status.php.
fn site(dir: &Path, page: &str, pool: &str, wrapper: &[&str]) -> (PhpSite, u16) {
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("page.php"), page).unwrap();
    let port = free_port();
    let pool = format!("{pool}\npm.status_path = /fpm-status.php\n");
    let site = serve_under(
        &dir.join("site"),
        port,
        &App {
            root: &root,
            index: "page.php",
            deny: "none",
            fpm_pool: &pool,
            h2: false,
        },
        wrapper,
    );
    (site, port)
}

/// php-fpm's own status page (`query` "full" adds each worker's last
/// request).
fn status_page(port: u16, query: &str) -> String {
    let (code, body) = http_get(port, &format!("/fpm-status.php{query}"), None);
    assert_eq!(code, 200, "{body}");
    body
}

/// Each line's figure of `field` on a status page ("max children reached: 1").
fn figures(page: &str, field: &str) -> Vec<f64> {
    page.lines()
        .filter_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

fn status(port: u16, field: &str) -> f64 {
    let page = status_page(port, "");
    *figures(&page, field)
        .first()
        .unwrap_or_else(|| panic!("no {field} in {page}"))
}

/// `capacity` of the page at `port`, watching php-fpm and nginx.
fn search(port: u16, out: &Path, apdex_t: &str, start: &str, taskset: bool) -> serde_json::Value {
    let process = php_fpm().file_name().unwrap().to_string_lossy().to_string();
    let arguments = [
        "capacity".to_string(),
        format!("http://127.0.0.1:{port}/page.php"),
        "--think".into(),
        "1s".into(),
        "--apdex-t".into(),
        apdex_t.into(),
        "--start".into(),
        start.into(),
        "--max".into(),
        "80".into(),
        "--step-duration".into(),
        "4s".into(),
        "--warmup".into(),
        "2s".into(),
        "--monitor".into(),
        "local".into(),
        "--process".into(),
        format!("{process},nginx"),
        "--json".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    // The generator away from the server's core (emulate pins it to the last).
    let output = if taskset {
        std::process::Command::new("taskset")
            .args(["-c", "0", env!("CARGO_BIN_EXE_headroom")])
            .args(&arguments)
            .output()
            .unwrap()
    } else {
        headroom().args(&arguments).output().unwrap()
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

/// The knee's judged resources by kind.
fn at_knee<'a>(json: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    let knee = json["knee_users"].as_u64().unwrap();
    let level = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["users"].as_u64() == Some(knee))
        .unwrap();
    level["limits"]
        .as_array()
        .map(|all| all.iter().filter(|l| l["kind"] == kind).collect())
        .unwrap_or_default()
}

/// php-fpm with 2 workers and a page that waits 100 ms: 20 requests a
/// second at most, so with 1 s of think the capacity is near
/// 2 × (0.15 + 1) / 0.1 = 23 users. The answer names the pool, with its
/// workers busy and requests queued, and nothing else; php-fpm's own
/// status page says its pool reached pm.max_children.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_pool_of_two_workers_is_named_as_the_limit() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    let _paced = paced();
    let dir = temp_dir("limits-pool");
    let pool = "pm = dynamic\npm.max_children = 2\npm.start_servers = 2\n\
                pm.min_spare_servers = 1\npm.max_spare_servers = 2";
    let (_site, port) = site(&dir, "<?php usleep(100000); echo 'ok';", pool, &[]);
    assert_eq!(status(port, "max children reached"), 0.0);
    let json = search(port, &dir.join("out"), "150ms", "10", false);
    let users = json["capacity"]["users"].as_f64().unwrap();
    assert!((users - 23.0).abs() <= 3.0, "{users}: {}", json["verdict"]);
    assert!(json["bottleneck"].is_null(), "{}", json["bottleneck"]);
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "pool", "{}", json["verdict"]);
    assert!(limit["resource"].as_str().unwrap().ends_with("'s pool www"));
    assert!(
        limit["utilization_pct"].as_f64().unwrap() >= 90.0,
        "{limit}"
    );
    let evidence = limit["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with("its 2 workers were busy") && evidence.contains("sleeping on a timer"),
        "{evidence}"
    );
    assert!(limit["change"]
        .as_str()
        .unwrap()
        .starts_with("Raise pm.max_children (now 2): memory allows"));
    let verdict = json["verdict"].as_str().unwrap();
    assert!(verdict.contains("'s pool www: its 2 workers"), "{verdict}");
    assert!(!verdict.contains("elsewhere"), "{verdict}");
    // Nothing else saturated: not the machine's CPU, not an accept queue.
    for kind in ["cpu", "cpu_quota", "accept_queue"] {
        assert!(
            at_knee(&json, kind).iter().all(|l| l["saturated"] == false),
            "{kind}: {:?}",
            at_knee(&json, kind)
        );
    }
    // php-fpm's own counters: its pool filled.
    assert!(status(port, "max children reached") >= 1.0);
    assert_eq!(status(port, "max active processes"), 2.0);
}

/// php-fpm with 20 workers held to half a CPU (`headroom emulate`), a
/// page that only computes: the answer names the CPU quota, not the pool,
/// whose workers were not all busy at the knee. php-fpm's own status page
/// says its workers' last requests had well under a whole CPU each (a
/// page that only computes has nearly 100% of one when it runs
/// unhindered).
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_server_held_to_half_a_cpu_is_named_by_its_quota() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    let _guard = serial();
    let dir = temp_dir("limits-cpu");
    let emulate = env!("CARGO_BIN_EXE_headroom");
    let (_site, port) = site(
        &dir,
        "<?php $x = 0; for ($i = 0; $i < 3000000; $i++) { $x += $i % 7; } echo $x;",
        "pm = static\npm.max_children = 20",
        &[emulate, "emulate", "--cpus", "0.5", "--"],
    );
    let json = search(port, &dir.join("out"), "200ms", "5", true);
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "cpu_quota", "{}", json["verdict"]);
    let evidence = limit["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with("it is held to 0.5 CPU and used"),
        "{evidence}"
    );
    assert!(json["verdict"]
        .as_str()
        .unwrap()
        .contains("Give it more CPU"));
    for pool in at_knee(&json, "pool") {
        assert_eq!(pool["saturated"], false, "{pool}");
    }
    assert!(json["bottleneck"].is_null(), "{}", json["bottleneck"]);
    // php-fpm's own figures: its workers' page requests had little CPU each.
    let page = status_page(port, "?full");
    let cpu: Vec<f64> = page
        .split("************************")
        .filter(|worker| worker.contains("request URI:          /page.php"))
        .flat_map(|worker| figures(worker, "last request cpu"))
        .collect();
    assert!(!cpu.is_empty(), "{page}");
    let mean = cpu.iter().sum::<f64>() / cpu.len() as f64;
    assert!(mean < 60.0, "{cpu:?}");
}
