//! What limits it, named from the server's own evidence: bottlenecks
//! planted in Debian's php-fpm behind nginx, each named by `capacity` and
//! the others not, judged by php-fpm's own status page and the kernel's
//! own counters of the server's control group.

use crate::support::php_site::{php_fpm, serve_under, App, PhpSite};
use crate::support::{
    free_port, headroom, http_get, paced, program, requires, root, serial, service, stdout_json,
    temp_dir,
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

/// `capacity` of the page at `port`, watching php-fpm and nginx, with
/// `more` arguments.
fn search(
    port: u16,
    out: &Path,
    apdex_t: &str,
    start: &str,
    taskset: bool,
    more: &[&str],
) -> serde_json::Value {
    let process = php_fpm().file_name().unwrap().to_string_lossy().to_string();
    let url = format!("http://127.0.0.1:{port}/page.php");
    let processes = format!("{process},nginx");
    search_url(&url, &processes, out, apdex_t, start, taskset, more)
}

/// `capacity` of `url`, users thinking 1 s, watching `processes`.
fn search_url(
    url: &str,
    processes: &str,
    out: &Path,
    apdex_t: &str,
    start: &str,
    taskset: bool,
    more: &[&str],
) -> serde_json::Value {
    let mut arguments = vec![
        "capacity".to_string(),
        url.to_string(),
        "--think".into(),
        "1s".into(),
        "--apdex-t".into(),
        apdex_t.into(),
        "--start".into(),
        start.into(),
        "--step-duration".into(),
        "4s".into(),
        "--warmup".into(),
        "2s".into(),
        "--monitor".into(),
        "local".into(),
        "--process".into(),
        processes.to_string(),
        "--json".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    arguments.extend(more.iter().map(|a| a.to_string()));
    if !more.contains(&"--max") {
        arguments.extend(["--max".into(), "80".into()]);
    }
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

/// Whether a judged pool is the test's own (`dir`'s php-fpm master's):
/// another test's php-fpm, watched by the same name, may run meanwhile,
/// and a pool of the same name is then told apart by its master.
fn own_pool(dir: &Path, resource: &str) -> bool {
    let pid = std::fs::read_to_string(dir.join("site/php-fpm.pid")).unwrap();
    resource.ends_with("'s pool www")
        || resource.ends_with(&format!("'s pool www (master {})", pid.trim()))
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
    let json = search(port, &dir.join("out"), "150ms", "10", false, &[]);
    let users = json["capacity"]["users"].as_f64().unwrap();
    assert!((users - 23.0).abs() <= 3.0, "{users}: {}", json["verdict"]);
    assert!(json["bottleneck"].is_null(), "{}", json["bottleneck"]);
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "pool", "{}", json["verdict"]);
    assert!(
        own_pool(&dir, limit["resource"].as_str().unwrap()),
        "{limit}"
    );
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
    assert!(verdict.contains(": its 2 workers were busy"), "{verdict}");
    assert!(!verdict.contains("elsewhere"), "{verdict}");
    // Nothing else saturated: not the machine's CPU, not an accept queue.
    for kind in ["cpu", "cpu_quota", "accept_queue"] {
        assert!(
            at_knee(&json, kind).iter().all(|l| l["saturated"] == false),
            "{kind}: {:?}",
            at_knee(&json, kind)
        );
    }
    // The knee's own bundle, an ordinary run, judged its whole run too:
    // its summary and its report say the pool saturated.
    let knee = json["knee_users"].as_u64().unwrap();
    let bundle = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["users"].as_u64() == Some(knee))
        .map(|l| std::path::PathBuf::from(l["bundle"].as_str().unwrap()))
        .unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap())
            .unwrap();
    let judged = &manifest["summary"]["resources"][0]["limits"][0];
    assert_eq!(judged["kind"], "pool", "{judged}");
    assert_eq!(judged["saturated"], true, "{judged}");
    let html = crate::support::report_html(&bundle);
    assert!(
        html.contains("<p><b>Saturated:</b> php-fpm8.2&#39;s pool www")
            && html.contains(": its 2 workers were busy"),
        "the run's page names the pool"
    );
    // compare says what limited each run: the first level's pool was
    // not full, the knee's was.
    let first = json["levels"][0]["bundle"].as_str().unwrap();
    let compared = headroom()
        .args(["compare", first, bundle.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&compared.stdout);
    let said = text
        .split_once("What limits each run")
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_else(|| panic!("{text}"));
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("'s pool www")).collect();
    assert!(
        lines.len() == 2
            && lines[0].contains("(the fullest, not saturated)")
            && lines[1].contains("(saturated): php-fpm8.2's pool www"),
        "{said}"
    );
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
    let json = search(port, &dir.join("out"), "200ms", "5", true, &[]);
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

/// php-fpm with 20 workers whose disk is held to 100 operations a second
/// (`headroom emulate --iops 100`), a page that appends a line to a file
/// and syncs it (a commit per request): the answer names the disk
/// operations of php-fpm's control group, done at its limit as the
/// kernel's own throttle counted them, with php-fpm's threads waiting for
/// the disk; not the pool, nor a CPU. It needs the machine to itself:
/// its throttled syncs hold up the file system's journal, which every
/// other test's commits wait for (a MariaDB test beside it measured 8
/// users where it measures 52).
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_disk_held_to_100_operations_a_second_is_named_by_its_limit() {
    requires!(
        root(),
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm")
    );
    let _serial = serial();
    let dir = temp_dir("limits-disk");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let emulate = env!("CARGO_BIN_EXE_headroom");
    let page = format!(
        "<?php $f = fopen('{}/log', 'a'); fwrite($f, str_repeat('x', 200) . \"\\n\"); fsync($f); fclose($f); echo 'ok';",
        data.display()
    );
    let (_site, port) = site(
        &dir,
        &page,
        "pm = static\npm.max_children = 20",
        &[
            emulate,
            "emulate",
            "--iops",
            "100",
            "--disk-dir",
            data.to_str().unwrap(),
            "--",
        ],
    );
    let json = search(
        port,
        &dir.join("out"),
        "100ms",
        "10",
        false,
        &["--max", "200"],
    );
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "disk_quota", "{}", json["levels"]);
    let evidence = limit["evidence"].as_str().unwrap();
    // The throttle's own count of the group's operations: at its limit.
    let done: f64 = evidence
        .strip_prefix("it did ")
        .and_then(|e| e.split_once(' '))
        .map(|(n, _)| n.parse().unwrap())
        .unwrap_or_else(|| panic!("{evidence}"));
    assert!((85.0..=105.0).contains(&done), "{evidence}");
    assert!(
        evidence.contains(" of its 100 operations a second"),
        "{evidence}"
    );
    assert!(limit["waiting"].as_f64().unwrap() >= 1.0, "{limit}");
    assert!(json["verdict"]
        .as_str()
        .unwrap()
        .contains("put the data on a faster disk"));
    for kind in ["cpu", "cpu_quota", "accept_queue"] {
        assert!(
            at_knee(&json, kind).iter().all(|l| l["saturated"] == false),
            "{kind}: {:?}",
            at_knee(&json, kind)
        );
    }
    // The file holds a line for every page served: each request committed.
    let lines = std::fs::read_to_string(data.join("log"))
        .unwrap()
        .lines()
        .count() as u64;
    let sent = json["requests"]["levels"].as_u64().unwrap();
    assert!(lines >= sent * 9 / 10, "{lines} lines for {sent} requests");
}

/// The kernel's count of connection attempts its listening sockets dropped
/// (ListenDrops: those whose accept queue was full, and the rest).
fn listen_drops() -> u64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap();
    let lines: Vec<&str> = netstat
        .lines()
        .filter(|l| l.starts_with("TcpExt:"))
        .collect();
    let names: Vec<&str> = lines[0].split_whitespace().collect();
    let values: Vec<&str> = lines[1].split_whitespace().collect();
    let at = names.iter().position(|n| *n == "ListenDrops").unwrap();
    values[at].parse().unwrap()
}

/// A listening socket's own count of the connection attempts it dropped,
/// as `ss -m` prints it (`d` in its skmem figures).
fn socket_drops(port: u16) -> u64 {
    let ss = std::process::Command::new("ss")
        .args(["-ltnm", &format!("sport = :{port}")])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&ss.stdout).to_string();
    let figures = listed
        .split("skmem:(")
        .nth(1)
        .unwrap_or_else(|| panic!("{listed}"));
    figures
        .trim_end_matches(|c: char| c.is_whitespace() || c == ')')
        .split(',')
        .find_map(|f| f.strip_prefix('d')?.parse().ok())
        .unwrap_or_else(|| panic!("{listed}"))
}

/// nginx listening with a backlog of 16, at most 24 connections a worker
/// (each request proxied takes two), in front of php-fpm's 20 workers
/// answering in 100 ms, under a burst of 80 users at once: nginx accepts
/// about 12, its accept queue fills to its backlog and the kernel drops
/// the rest. The run names nginx's accept queue (after nginx's
/// connections, when nginx turned headroom's look at them away), not the
/// pool, with the packets it dropped: no more than `ss -m` counted at the
/// socket; and the host's ListenDrops grew.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn an_nginx_backlog_of_16_under_a_burst_is_named_by_its_accept_queue() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    let _paced = paced();
    let dir = temp_dir("limits-backlog");
    let (_site, _front, port) = front_of_php(&dir, "backlog=16", "");
    let ss = std::process::Command::new("ss")
        .args(["-ltn", &format!("sport = :{port}")])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&ss.stdout).to_string();
    assert!(
        listed
            .lines()
            .any(|l| l.split_whitespace().nth(2) == Some("16")),
        "{listed}"
    );
    let (before, drops_before) = (listen_drops(), socket_drops(port));
    let limits = run_judged(port, "80", "8s", &dir.join("out"));
    let host = listen_drops() - before;
    let drops = socket_drops(port) - drops_before;
    assert!(
        drops > 0 && host > 0,
        "{drops} dropped at the socket, {host} by the host"
    );
    // The accept queue is named first, or after nginx's connections
    // only: a worker out of worker_connections stops accepting (and
    // closes headroom's own look at it unanswered), which is what fills
    // the queue.
    let at = limits
        .iter()
        .position(|l| l["kind"] == "accept_queue")
        .unwrap_or_else(|| panic!("{limits:?}"));
    assert!(
        limits[..at].iter().all(|l| l["resource"]
            .as_str()
            .is_some_and(|r| r.starts_with("nginx's connections"))),
        "{limits:?}"
    );
    let first = &limits[at];
    assert_eq!(
        first["resource"],
        format!("nginx's listening socket 127.0.0.1:{port}"),
        "{first}"
    );
    assert_eq!(first["saturated"], true, "{first}");
    let evidence = first["evidence"].as_str().unwrap();
    assert!(evidence.contains("of a backlog of 16"), "{evidence}");
    let counted: u64 = evidence
        .split("its own drop count grew by ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{evidence}"));
    assert!(
        counted >= 1 && counted <= drops,
        "{counted} of {drops}: {evidence}"
    );
    assert!(first["change"]
        .as_str()
        .unwrap()
        .contains("worker_connections"));
    for pool in limits.iter().filter(|l| l["kind"] == "pool") {
        assert_eq!(pool["saturated"], false, "{pool}");
    }
}

/// A front nginx of one worker with worker_connections 24 (`listen`
/// added to its listen line, `server` lines to its server) before
/// php-fpm's 20 workers and a page that waits 100 ms.
fn front_of_php(
    dir: &Path,
    listen: &str,
    server: &str,
) -> (PhpSite, crate::support::php_site::Daemon, u16) {
    let (site, inner) = site(
        dir,
        "<?php usleep(100000); echo 'ok';",
        "pm = static\npm.max_children = 20",
        &[],
    );
    let port = free_port();
    let front = crate::support::php_site::proxy(
        &dir.join("front"),
        inner,
        port,
        listen,
        24,
        "access_log off;",
        server,
    );
    (site, front, port)
}

/// `users` at once on the page at `port` for `duration`, nginx and
/// php-fpm watched (and `more` processes): the run's judged resources,
/// in order.
fn run_judged(port: u16, users: &str, duration: &str, out: &Path) -> Vec<serde_json::Value> {
    run_watching(port, users, duration, ("", &[]), out)
}

fn run_watching(
    port: u16,
    users: &str,
    duration: &str,
    (more, arguments): (&str, &[&str]),
    out: &Path,
) -> Vec<serde_json::Value> {
    let output = headroom()
        .args(["load", &format!("http://127.0.0.1:{port}/page.php")])
        .args(["-c", users, "-d", duration, "--timeout", "30s"])
        .args(arguments)
        .args(["--monitor", "local", "--process"])
        .arg(format!("nginx,php-fpm8.2{more}"))
        .args(["--json", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    manifest["summary"]["resources"][0]["limits"]
        .as_array()
        .unwrap()
        .clone()
}

/// nginx's worker_connections: a front nginx of one worker with
/// worker_connections 24 (its listen backlog nginx's default) before
/// php-fpm's 20 workers (100 ms a page), 40 users at once. A proxied
/// request holds two of the 24 connections (the client's and the one to
/// php-fpm), so the worker runs out. The run names nginx's connections
/// from its own stub_status page, not php-fpm's pool; nginx's own error
/// log says its worker_connections were not enough.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn nginx_out_of_worker_connections_is_named_from_its_stub_status() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    // Its clients retry at once on every reset: thousands a second.
    let _serial = serial();
    let dir = temp_dir("limits-worker-connections");
    let (_site, _front, port) = front_of_php(
        &dir,
        "",
        "location = /nginx_status { stub_status; allow 127.0.0.1; deny all; }",
    );
    let (code, page) = http_get(port, "/nginx_status", None);
    assert!(
        code == 200 && page.starts_with("Active connections:"),
        "{code} {page}"
    );
    // Users start over 2 s, so that the first looks find nginx's page.
    let limits = run_watching(
        port,
        "40",
        "6s",
        ("", &["--ramp-up", "2s"]),
        &dir.join("out"),
    );
    let first = &limits[0];
    assert_eq!(first["kind"], "worker_connections", "{limits:?}");
    // The front's master, named by its pid beside the site's nginx.
    assert!(
        first["resource"]
            .as_str()
            .unwrap()
            .starts_with("nginx's connections (master "),
        "{first}"
    );
    assert_eq!(first["saturated"], true, "{first}");
    let full = limits
        .iter()
        .filter(|l| l["kind"] == "worker_connections" && l["saturated"] == true)
        .count();
    assert_eq!(full, 1, "{limits:?}");
    let evidence = first["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("its 1 worker may hold")
            && evidence.contains("24 connections")
            && evidence.contains("(worker_connections 24)"),
        "{evidence}"
    );
    assert!(first["change"]
        .as_str()
        .unwrap()
        .starts_with("Raise worker_connections (now 24"));
    for pool in limits.iter().filter(|l| l["kind"] == "pool") {
        assert_eq!(pool["saturated"], false, "{pool}");
    }
    // nginx's own word.
    let errors = std::fs::read_to_string(dir.join("front/error.log")).unwrap();
    assert!(
        errors.contains("worker_connections are not enough"),
        "{errors}"
    );
}

/// A Redis of the test's own on a free port of 127.0.0.1, with `more`
/// arguments; stopped when dropped.
fn redis(more: &[&str]) -> (crate::support::php_site::Daemon, u16) {
    let port = free_port();
    let mut child = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(more)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for_port(port, &mut child, "redis-server");
    (crate::support::php_site::Daemon(child), port)
}

/// Redis's one command thread: a page that runs a Lua loop of about
/// 5 ms in Redis (spoken over a socket: no PHP extension), php-fpm's 20
/// workers, 30 users at once. Redis runs one command at a time, so its
/// main thread is the limit at about 180 pages a second. The run names
/// Redis's command thread from its own INFO (found by itself: the
/// watched redis-server's port) before php-fpm's pool, whose workers
/// all waited for it; Redis's own commandstats and CPU agree.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn redis_busy_on_its_one_thread_is_named_from_its_own_info() {
    requires!(
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("redis-server", "redis-server")
    );
    let _serial = serial();
    let dir = temp_dir("limits-redis");
    let (_redis, redis_port) = redis(&[]);
    let page = format!(
        "<?php $r = fsockopen('127.0.0.1', {redis_port}, $no, $why, 2);\n\
         if (!$r) {{ http_response_code(503); exit; }}\n\
         fwrite($r, \"EVAL \\\"local i = 0 while i < 300000 do i = i + 1 end return i\\\" 0\\r\\n\");\n\
         $reply = fgets($r); fclose($r);\n\
         if (trim($reply) !== ':300000') {{ http_response_code(500); }} echo $reply;"
    );
    let (_site, port) = site(&dir, &page, "pm = static\npm.max_children = 20", &[]);
    let (code, body) = http_get(port, "/page.php", None);
    assert!(code == 200 && body.contains(":300000"), "{code} {body}");
    let redis_cli = |args: &[&str]| {
        let output = std::process::Command::new("redis-cli")
            .args(["-p", &redis_port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let cpu = |info: &str| -> f64 {
        ["used_cpu_sys_main_thread:", "used_cpu_user_main_thread:"]
            .iter()
            .map(|name| {
                info.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map_or(0.0, |v| v.trim().parse::<f64>().unwrap())
            })
            .sum()
    };
    let before = cpu(&redis_cli(&["INFO", "cpu"]));
    let started = std::time::Instant::now();
    let limits = run_watching(port, "30", "6s", (",redis-server", &[]), &dir.join("out"));
    let elapsed = started.elapsed().as_secs_f64();
    let used = cpu(&redis_cli(&["INFO", "cpu"])) - before;
    let first = &limits[0];
    assert_eq!(first["kind"], "command_thread", "{limits:?}");
    assert_eq!(
        first["resource"],
        format!("Redis's command thread (127.0.0.1:{redis_port})"),
        "{first}"
    );
    assert_eq!(first["saturated"], true, "{first}");
    let evidence = first["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with(
            "it runs every command one at a time on one thread, and that thread was busy"
        ),
        "{evidence}"
    );
    assert!(first["change"]
        .as_str()
        .unwrap()
        .contains("no KEYS or long Lua scripts"));
    // php-fpm's workers all waited for Redis: full too, but after it,
    // and more of them would not help.
    for pool in limits
        .iter()
        .filter(|l| l["kind"] == "pool" && l["saturated"] == true)
    {
        assert!(
            pool["change"].as_str().unwrap().starts_with(
                "Its workers were busy waiting for a reply over a socket while Redis's command thread"
            ),
            "{pool}"
        );
    }
    // Redis's own word: its main thread used most of a core over the run
    // (which includes headroom's start and end), each EVAL milliseconds.
    assert!(used / elapsed >= 0.6, "{used} s of CPU in {elapsed} s");
    let stats = redis_cli(&["INFO", "commandstats"]);
    let per_call: f64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_eval:"))
        .and_then(|l| l.split(',').find_map(|f| f.strip_prefix("usec_per_call=")))
        .unwrap()
        .parse()
        .unwrap();
    assert!(per_call >= 1000.0, "{stats}");
}

/// A Redis with a password: read with the password of a credentials
/// line, never recorded; found by itself without it, it says what to add.
#[test]
fn a_redis_with_a_password_is_read_with_its_credentials() {
    requires!(program("redis-server", "redis-server"));
    let _light = crate::support::light();
    let dir = temp_dir("limits-redis-password");
    std::fs::create_dir_all(&dir).unwrap();
    let (_redis, redis_port) = redis(&["--requirepass", "hunter2"]);
    let server = crate::support::TestServer::bind(
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        None,
        |_| crate::support::Reply::default(),
    )
    .unwrap();
    let credentials = dir.join("credentials");
    std::fs::write(
        &credentials,
        format!("redis://:hunter2@127.0.0.1:{redis_port}\n"),
    )
    .unwrap();
    let redis_seen = |more: &[&str], out: &str| -> Vec<serde_json::Value> {
        let output = headroom()
            .args([
                "load",
                &format!("http://{}/", server.addr),
                "-c",
                "1",
                "-d",
                "3s",
            ])
            .args(["--monitor", "local"])
            .args(more)
            .arg("--out")
            .arg(dir.join(out))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let lines = std::fs::read_to_string(dir.join(out).join("resources.jsonl")).unwrap();
        assert!(!lines.contains("hunter2"));
        lines
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|l| l["resources"]["databases"].get(0).cloned())
            .collect()
    };
    let read = redis_seen(&["--credentials", credentials.to_str().unwrap()], "with");
    assert!(read.len() >= 2, "{read:?}");
    for look in &read {
        assert_eq!(look["server"], "Redis", "{look}");
        assert_eq!(look["address"], format!("127.0.0.1:{redis_port}"), "{look}");
        assert!(look["problem"].is_null(), "{look}");
        assert_eq!(look["max_connections"].as_u64(), Some(10000), "{look}");
    }
    let refused = redis_seen(&["--process", "redis-server"], "without");
    let own: Vec<_> = refused
        .iter()
        .filter(|l| l["address"] == format!("127.0.0.1:{redis_port}"))
        .collect();
    assert!(!own.is_empty(), "{refused:?}");
    let problem = own[0]["problem"].as_str().unwrap_or_default();
    assert!(
        problem.contains("NOAUTH") && problem.contains("redis://:PASSWORD@HOST:PORT"),
        "{problem}"
    );
}

/// A statement on the test database as its own user (`mariadb` client).
fn mariadb(sql: &str) -> String {
    let url = std::env::var("HEADROOM_TEST_MARIADB").unwrap();
    let output = std::process::Command::new("mariadb")
        .args([
            "-h127.0.0.1",
            "-uheadroom",
            "-pheadroom",
            "-N",
            "-B",
            "headroom_test",
            "-e",
            sql,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{url}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// MariaDB's own status figure `name`.
fn mariadb_status(name: &str) -> u64 {
    let row = mariadb(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    row.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A page that updates one row in a transaction held 20 ms, php-fpm's
/// pool of 20 far from full: at most 50 requests a second, whatever the
/// CPU. The answer names MariaDB's row locks, read with the credentials
/// file's URL (its password nowhere in the bundle); MariaDB's own
/// counters saw the waits, and the hot row counted every request answered.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_hot_row_is_named_by_mariadbs_row_locks() {
    requires!(
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        service("HEADROOM_TEST_MARIADB", "MariaDB")
    );
    let _paced = paced();
    let dir = temp_dir("limits-hot-row");
    let table = format!("hot_{}", std::process::id());
    mariadb(&format!(
        "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id INT PRIMARY KEY, n INT) ENGINE=InnoDB; \
         INSERT INTO {table} VALUES (1, 0)"
    ));
    let page = format!(
        "<?php $db = new mysqli('127.0.0.1', 'headroom', 'headroom', 'headroom_test');\n\
         $db->begin_transaction();\n\
         $db->query('UPDATE {table} SET n = n + 1 WHERE id = 1');\n\
         usleep(20000);\n$db->commit();\necho 'ok';"
    );
    let (_site, port) = site(&dir, &page, "pm = static\npm.max_children = 20", &[]);
    let credentials = dir.join("credentials");
    std::fs::write(
        &credentials,
        format!(
            "# the test database\n{}\n",
            std::env::var("HEADROOM_TEST_MARIADB").unwrap()
        ),
    )
    .unwrap();
    let waits = mariadb_status("Innodb_row_lock_waits");
    let out = dir.join("out");
    let json = search(
        port,
        &out,
        "100ms",
        "10",
        false,
        &["--credentials", credentials.to_str().unwrap()],
    );
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "locks", "{}", json["verdict"]);
    assert_eq!(limit["resource"], "MariaDB's row locks (127.0.0.1)");
    assert!(limit["waiting"].as_f64().unwrap() >= 1.0, "{limit}");
    let users = json["capacity"]["users"].as_f64().unwrap();
    // 50 a second at most: with 1 s of think, about 50 × 1.1 = 55 users.
    assert!(
        (40.0..=62.0).contains(&users),
        "{users}: {}",
        json["verdict"]
    );
    for kind in ["pool", "cpu", "connections"] {
        let judged: Vec<_> = at_knee(&json, kind)
            .into_iter()
            .filter(|l| kind != "pool" || own_pool(&dir, l["resource"].as_str().unwrap()))
            .collect();
        assert!(
            judged.iter().all(|l| l["saturated"] == false),
            "{kind}: {judged:?}"
        );
    }
    // MariaDB's own counters: its row lock waits grew.
    assert!(mariadb_status("Innodb_row_lock_waits") > waits + 100);
    // The hot row counted at least every request answered (a request
    // abandoned at a level's end may still have committed).
    let counted: u64 = mariadb(&format!("SELECT n FROM {table} WHERE id = 1"))
        .parse()
        .unwrap();
    let answered: u64 = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["samples"].as_u64().unwrap())
        .sum();
    assert!(counted >= answered, "{counted} < {answered}");
    // The password is read, never written.
    let password = "headroom:headroom@";
    for entry in walk(&out) {
        let text = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains(password),
            "{} holds the password",
            entry.display()
        );
    }
    mariadb(&format!("DROP TABLE {table}"));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// PostgreSQL read with a credentials file's URL: its connections against
/// its own max_connections (as `SHOW max_connections` says), every
/// second; a credentials line that is not a database URL is refused at
/// once, without the line's password in the message.
#[test]
fn postgresqls_own_connections_are_read_each_second() {
    requires!(service("HEADROOM_TEST_POSTGRES", "PostgreSQL"));
    let _light = crate::support::light();
    let url = std::env::var("HEADROOM_TEST_POSTGRES").unwrap();
    let dir = temp_dir("limits-postgres");
    std::fs::create_dir_all(&dir).unwrap();
    let credentials = dir.join("credentials");
    std::fs::write(&credentials, format!("{url}\n")).unwrap();
    let server = crate::support::TestServer::bind(
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        None,
        |_| crate::support::Reply::default(),
    )
    .unwrap();
    let out = dir.join("run");
    // A connection of somebody else's, open through the run (headroom's
    // own is not counted).
    let mut held = std::process::Command::new("psql")
        .args([url.as_str(), "-c", "SELECT pg_sleep(6)"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let output = headroom()
        .args([
            "load",
            &format!("http://{}/", server.addr),
            "-c",
            "2",
            "-d",
            "3s",
        ])
        .args([
            "--monitor",
            "local",
            "--credentials",
            credentials.to_str().unwrap(),
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = held.wait();
    let max: u64 = sqlx_free_show_max_connections(&url);
    let lines = std::fs::read_to_string(out.join("resources.jsonl")).unwrap();
    let seen: Vec<serde_json::Value> = lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|l| l["resources"]["databases"].get(0).cloned())
        .collect();
    // A second whose look did not answer in time (a busy machine) says so
    // and holds no figure; the others hold the server's own.
    let answered: Vec<&serde_json::Value> = seen
        .iter()
        .filter(|db| {
            let problem = db["problem"].as_str().unwrap_or_default();
            assert!(
                problem.is_empty() || problem.contains("did not answer"),
                "{db}"
            );
            problem.is_empty()
        })
        .collect();
    assert!(answered.len() >= 2, "{lines}");
    for db in &seen {
        assert_eq!(db["server"], "PostgreSQL");
        assert_eq!(db["address"], "127.0.0.1");
    }
    for db in answered {
        assert_eq!(db["max_connections"].as_u64(), Some(max), "{db}");
        assert!(db["connections"].as_u64().unwrap() >= 1, "{db}");
    }
    assert!(!lines.contains("headroom:headroom"));
    std::fs::write(
        &credentials,
        "postgres://a:hunter2@127.0.0.1/x\nnot a url with hunter3\n",
    )
    .unwrap();
    let refused = headroom()
        .args([
            "load",
            &format!("http://{}/", server.addr),
            "-c",
            "1",
            "-d",
            "1s",
        ])
        .args([
            "--monitor",
            "local",
            "--credentials",
            credentials.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("line 2: not a database URL"), "{stderr}");
    assert!(!stderr.contains("hunter"), "{stderr}");
}

/// A PostgreSQL cluster of the test's own (Debian's binaries, run as
/// user postgres): `max_connections` 10, of which PostgreSQL keeps 3 for
/// superusers, on a free port of 127.0.0.1; stopped and removed when
/// dropped.
struct OwnPostgres {
    dir: std::path::PathBuf,
    port: u16,
    _server: crate::support::php_site::Daemon,
}

impl OwnPostgres {
    fn start() -> OwnPostgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| d.flatten().map(|e| e.path().join("bin")).max())
            .filter(|b| b.join("initdb").exists())
            .expect("PostgreSQL's binaries are not installed: run scripts/services");
        // Outside the test's own directory: user postgres must reach it.
        let dir =
            std::path::PathBuf::from(format!("/tmp/headroom-limits-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let as_postgres = |program: &Path| {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                .arg(program);
            c
        };
        assert!(std::process::Command::new("chown")
            .args(["postgres:postgres", dir.to_str().unwrap()])
            .status()
            .unwrap()
            .success());
        let data = dir.join("data");
        let made = as_postgres(&bin.join("initdb"))
            .args(["-A", "trust", "-U", "postgres", "-D"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let port = free_port();
        let server = as_postgres(&bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=10",
            ])
            .args(["-c", "fsync=off", "-c", "shared_buffers=16MB"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("postgres.log")).unwrap())
            .spawn()
            .unwrap();
        let own = OwnPostgres {
            dir,
            port,
            _server: crate::support::php_site::Daemon(server),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while own.psql("SELECT 1").is_err() {
            assert!(std::time::Instant::now() < deadline, "{}", own.log());
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        own.psql("CREATE ROLE app LOGIN").unwrap();
        own
    }

    fn psql(&self, sql: &str) -> Result<String, String> {
        let output = std::process::Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", "postgres", "-tAX", "-c", sql])
            .output()
            .unwrap();
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).to_string())
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        // The server first (its Daemon is dropped after this body runs).
        let _ = std::process::Command::new("pkill")
            .args([
                "-TERM",
                "-f",
                &format!("postgres -D {}", self.dir.join("data").display()),
            ])
            .status();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// PostgreSQL at its max_connections: a page that opens a connection
/// and holds it 100 ms, php-fpm with 20 workers, and a PostgreSQL whose
/// max_connections 10 leave the application 6 (3 are kept for
/// superusers, and headroom's own look holds one). Past 6 pages at once
/// PostgreSQL refuses ("remaining connection slots are reserved") and the
/// page fails, in bursts well before 60 pages a second. The answer names
/// PostgreSQL's connections from its own pg_stat_activity, and not
/// php-fpm's pool; PostgreSQL's own log says it refused clients.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn postgresql_at_its_max_connections_is_named_by_its_connections() {
    requires!(
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("psql", "postgresql-client")
    );
    let php_modules = std::process::Command::new("php")
        .arg("-m")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&php_modules.stdout).contains("pgsql"),
        "PHP's pgsql extension is not installed: run scripts/services"
    );
    let _paced = paced();
    let dir = temp_dir("limits-pg-connections");
    std::fs::create_dir_all(&dir).unwrap();
    let pg = OwnPostgres::start();
    assert_eq!(pg.psql("SHOW max_connections").unwrap(), "10");
    assert_eq!(pg.psql("SHOW superuser_reserved_connections").unwrap(), "3");
    let page = format!(
        "<?php $c = @pg_connect('host=127.0.0.1 port={} dbname=postgres user=app connect_timeout=2');\n\
         if (!$c) {{ http_response_code(503); echo 'no connection'; exit; }}\n\
         pg_query($c, 'SELECT pg_sleep(0.1)'); echo 'ok';",
        pg.port
    );
    let (_site, port) = site(&dir, &page, "pm = static\npm.max_children = 20", &[]);
    let (code, body) = http_get(port, "/page.php", None);
    assert!(code == 200 && body.contains("ok"), "{code} {body}");
    let credentials = dir.join("credentials");
    std::fs::write(
        &credentials,
        format!("postgres://postgres@127.0.0.1:{}/postgres\n", pg.port),
    )
    .unwrap();
    let json = search(
        port,
        &dir.join("out"),
        "150ms",
        "20",
        false,
        &[
            "--max",
            "120",
            "--credentials",
            credentials.to_str().unwrap(),
        ],
    );
    let users = json["capacity"]["users"].as_f64().unwrap();
    assert!(
        (20.0..=70.0).contains(&users),
        "{users}: {}",
        json["verdict"]
    );
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "connections", "{}", json["verdict"]);
    assert_eq!(
        limit["resource"],
        format!("PostgreSQL's connections (127.0.0.1:{})", pg.port),
        "{limit}"
    );
    assert_eq!(limit["saturated"], true, "{limit}");
    let evidence = limit["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with("at most 6 of the 6 connections its max_connections 10 leaves to applications (3 are kept for superusers, 1 is headroom's own)"),
        "{evidence}"
    );
    assert!(limit["change"]
        .as_str()
        .unwrap()
        .starts_with("Raise max_connections"));
    // Not the pool: its 20 workers were never all busy.
    for pool in at_knee(&json, "pool") {
        if own_pool(&dir, pool["resource"].as_str().unwrap()) {
            assert_eq!(pool["saturated"], false, "{pool}");
        }
    }
    // PostgreSQL's own log: it refused clients past its connections.
    assert!(
        pg.log().contains("too many clients already")
            || pg.log().contains("remaining connection slots are reserved"),
        "{}",
        pg.log()
    );
}

/// PostgreSQL's max_connections as psql reads it with the URL.
fn sqlx_free_show_max_connections(url: &str) -> u64 {
    let output = std::process::Command::new("psql")
        .args([url, "-tAX", "-c", "SHOW max_connections"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap()
}

/// Apache (mpm_event, Debian's package) with MaxRequestWorkers 4 in front
/// of a backend answering in 100 ms, one connection a request: 40
/// requests a second at most, about 4 × (0.15 + 1) / 0.1 = 46 users with
/// 1 s of think. The answer names Apache's workers from its own
/// mod_status page, and says to raise MaxRequestWorkers; Apache's own
/// error log says it reached MaxRequestWorkers.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn apaches_max_request_workers_are_named_from_its_status_page() {
    requires!(program("apache2", "apache2"));
    let _paced = paced();
    let dir = temp_dir("limits-apache");
    std::fs::create_dir_all(&dir).unwrap();
    let backend = crate::support::TestServer::bind(
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        Some(64),
        |_| crate::support::Reply {
            delay: std::time::Duration::from_millis(100),
            body: 2,
            ..crate::support::Reply::default()
        },
    )
    .unwrap();
    let port = free_port();
    let modules = "/usr/lib/apache2/modules";
    std::fs::write(
        dir.join("apache2.conf"),
        format!(
            "ServerRoot {d}\nPidFile {d}/apache2.pid\nErrorLog {d}/error.log\nListen 127.0.0.1:{port}\n\
             ServerName localhost\n\
             LoadModule mpm_event_module {modules}/mod_mpm_event.so\n\
             LoadModule authz_core_module {modules}/mod_authz_core.so\n\
             LoadModule authz_host_module {modules}/mod_authz_host.so\n\
             LoadModule status_module {modules}/mod_status.so\n\
             LoadModule proxy_module {modules}/mod_proxy.so\n\
             LoadModule proxy_http_module {modules}/mod_proxy_http.so\n\
             StartServers 1\nServerLimit 1\nThreadsPerChild 4\nThreadLimit 4\nMaxRequestWorkers 4\n\
             MinSpareThreads 1\nMaxSpareThreads 4\n\
             <Location /server-status>\n  SetHandler server-status\n  Require local\n</Location>\n\
             ProxyPass /server-status !\nProxyPass / http://{backend}/\n",
            d = dir.display(),
            backend = backend.addr
        ),
    )
    .unwrap();
    let mut apache = std::process::Command::new("/usr/sbin/apache2")
        .arg("-f")
        .arg(dir.join("apache2.conf"))
        .args(["-DFOREGROUND"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_for_port(port, &mut apache, "apache2");
    let _apache = crate::support::php_site::Daemon(apache);
    let url = format!("http://127.0.0.1:{port}/page");
    let out = dir.join("out");
    let json = search_url(
        &url,
        "apache2",
        &out,
        "150ms",
        "10",
        false,
        &["--no-keepalive"],
    );
    let users = json["capacity"]["users"].as_f64().unwrap();
    assert!((users - 46.0).abs() <= 5.0, "{users}: {}", json["verdict"]);
    let limit = &json["limit"];
    assert_eq!(limit["kind"], "pool", "{}", json["verdict"]);
    assert_eq!(limit["resource"], "apache2's pool workers");
    assert!(limit["evidence"]
        .as_str()
        .unwrap()
        .starts_with("its 4 workers were busy"));
    assert!(limit["change"]
        .as_str()
        .unwrap()
        .starts_with("Raise MaxRequestWorkers (now 4 workers"));
    // Apache's own words: it reached MaxRequestWorkers.
    let log = std::fs::read_to_string(dir.join("error.log")).unwrap();
    assert!(
        log.contains("server reached MaxRequestWorkers setting"),
        "{log}"
    );
}
