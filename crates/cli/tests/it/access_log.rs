//! `headroom scenario from-log`: an nginx access log (combined, gzip and
//! plain, rotated) read into its users' model; what cannot be read is
//! said, with its place, and the run goes on. Its counts agree with
//! goaccess's (Debian's) on the same log.

use crate::support::{minutes, program, requires, run, temp_dir, text};
use std::io::Write;

fn line(second: u32, address: &str, target: &str, status: u16) -> String {
    format!(
        "{address} - - [04/Jan/2027:08:{:02}:{:02} +0000] \"GET {target} HTTP/1.1\" {status} 100 \"-\" \"Firefox\"\n",
        second / 60,
        second % 60
    )
}

#[test]
fn a_rotated_access_log_becomes_its_users_model() {
    requires!(program("chromium", "chromium"));
    let dir = temp_dir("from-log");
    std::fs::create_dir_all(&dir).unwrap();
    // Two users, each reading three pages 20 s apart with a style sheet
    // each; the older file gzipped, as logrotate leaves it.
    let mut old = String::new();
    for (address, start) in [("192.0.2.1", 0), ("192.0.2.2", 5)] {
        for page in 0..3 {
            let at = start + page * 20;
            old += &line(
                at,
                address,
                &format!("/course/view.php?id={}", 10 + page),
                200,
            );
            old += &line(at, address, "/theme/style.css", 200);
        }
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(old.as_bytes()).unwrap();
    std::fs::write(dir.join("access.log.1.gz"), gz.finish().unwrap()).unwrap();
    let new = line(
        3000,
        "192.0.2.3",
        "/login/index.php?user=ann&token=s3cr3t",
        200,
    ) + "not a log line\n";
    std::fs::write(dir.join("access.log"), new).unwrap();
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        dir.join("access.log.1.gz").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for expected in [
        "(14 lines, 13 read)",
        "requests: 13: 7 for pages, 6 for their resources (46.2%)",
        "sessions: 3 (a session is a client address with its user agent",
        "reading between pages (4 of at least 1 s; 0 sooner, not read, left out): 10th percentile 20.0 s",
        "   85.7%  /course/view.php?id=*",
        "   14.3%  /login/index.php?user=*&token=*",
        "1 of 14 lines (7.14%) are not in the format",
        "access.log:2: it does not have the format's shape: not a log line",
    ] {
        assert!(said.contains(expected), "{expected}\n{said}");
    }
    // The files in time order, and no address or query value in the output.
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let files = stdout.lines().next().unwrap();
    assert!(
        files.find("access.log.1.gz") < files.find("access.log ("),
        "{files}"
    );
    assert!(
        !said.contains("192.0.2") && !said.contains("s3cr3t"),
        "{said}"
    );
    // Its page: charts and the mix, drawn in Chromium, nothing loaded,
    // no address or query value.
    let page = dir.join("users.html");
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        dir.join("access.log.1.gz").to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    crate::support::browser::self_contained(&html);
    let dom = crate::support::browser::open_in_chromium(&page, &dir);
    for expected in [
        "Reading time between a session",
        "Pages a session",
        "/course/view.php?id=*",
        "<svg",
    ] {
        assert!(dom.contains(expected), "{expected}");
    }
    assert!(!html.contains("192.0.2") && !html.contains("s3cr3t"));
    // As a workload without --target: it reads back as `run --target`
    // reads it, and the request with a token is left out, said.
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        dir.join("access.log.1.gz").to_str().unwrap(),
        "--out",
        dir.join("users").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("workload.yaml --target URL"), "{said}");
    let workload = std::fs::read_to_string(dir.join("users/workload.yaml")).unwrap();
    let pages = std::fs::read_to_string(dir.join("users/pages.csv")).unwrap();
    assert!(
        workload.contains("/login/index.php?user=*&token=*: every request carried a token"),
        "{workload}"
    );
    assert!(!pages.contains("s3cr3t") && pages.contains("/course/view.php?id=11"));
    // A format that does not fit: refused with its first line.
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        "--format",
        "common",
        "--session-cookie",
        "sid",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("does not log the cookie sid"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// goaccess and headroom read one log to the same counts where both
/// define them: requests, unique visitors (an address with its user agent,
/// per day) and requests per status.
#[test]
fn its_counts_agree_with_goaccess() {
    requires!(program("goaccess", "goaccess"));
    let dir = temp_dir("from-log-goaccess");
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = String::new();
    let agents = ["Firefox", "Chrome"];
    for day in 4..6 {
        for n in 0..300u32 {
            let address = format!("198.51.100.{}", n % 7);
            let agent = agents[(n % 3 == 0) as usize];
            let status = [200, 200, 200, 304, 404, 302, 500][(n % 7) as usize];
            let target = if n % 4 == 0 {
                "/pix/a.png".to_string()
            } else {
                format!("/page.php?id={n}")
            };
            log += &format!(
                "{address} - - [{day:02}/Jan/2027:{:02}:{:02}:{:02} +0000] \"GET {target} HTTP/1.1\" {status} 10 \"-\" \"{agent}\"\n",
                n / 60 % 24,
                n % 60,
                n % 60
            );
        }
    }
    std::fs::write(dir.join("access.log"), &log).unwrap();
    let report = dir.join("goaccess.json");
    let goaccess = std::process::Command::new("goaccess")
        .args([
            dir.join("access.log").to_str().unwrap(),
            "--log-format=COMBINED",
            "-o",
        ])
        .arg(&report)
        .output()
        .expect("goaccess (scripts/services installs it)");
    assert!(
        goaccess.status.success(),
        "{}",
        String::from_utf8_lossy(&goaccess.stderr)
    );
    let theirs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        ours["requests"], theirs["general"]["total_requests"],
        "{ours}"
    );
    assert_eq!(ours["requests"], 600);
    assert_eq!(
        ours["visitors"], theirs["general"]["unique_visitors"],
        "{ours}"
    );
    let mut by_status = std::collections::BTreeMap::new();
    for class in theirs["status_codes"]["data"].as_array().unwrap() {
        for item in class["items"].as_array().unwrap() {
            let code = item["data"].as_str().unwrap()[..3].to_string();
            by_status.insert(code, item["hits"]["count"].clone());
        }
    }
    assert_eq!(
        serde_json::to_value(&by_status).unwrap(),
        ours["statuses"],
        "goaccess {by_status:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// nginx's combined format with the testbed's session cookie.
const WITH_SESSION: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $cookie_MoodleSession";

/// Each sent pattern's share (%) of the GETs answered 2xx of the sent
/// patterns, in the log `path` (`from-log --json`).
fn sent_shares(path: &std::path::Path, sent: &[String]) -> Vec<f64> {
    let shares = page_shares(&model_of(path, WITH_SESSION), |p| {
        sent.iter().any(|s| s == p)
    });
    sent.iter()
        .map(|p| shares.get(p).copied().unwrap_or(0.0))
        .collect()
}

/// The testbed's own journey (log in, read, post, log out) run behind
/// nginx; its access log written as a workload with the login it cannot
/// show; the workload run again behind the same nginx: the server's log
/// holds each page the workload sends within 2 points of its share in the
/// first log, every page answered 2xx (its users logged in), and the
/// workload leaves out the POSTs and the logout that carried a sesskey.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn the_testbeds_journey_read_from_its_log_runs_again_with_the_same_page_mix() {
    requires!(program("nginx", "nginx"));
    use crate::support::php_site::logging_proxy;
    use crate::support::{serial, site};
    let _serial = serial();
    let (dir, db) = site::sqlite_dataset("from-log-round-trip", "S");
    let testbed = site::serve(&db, &[]);
    let (_nginx, port) = logging_proxy(&dir, testbed.port, WITH_SESSION);
    let journey = site::journey(&db, port, &dir);
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "-c",
        "6",
        "--think",
        "200ms",
        "-d",
        "12s",
        "--out",
        dir.join("journey-run").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let first = dir.join("first.log");
    std::fs::copy(dir.join("access.log"), &first).unwrap();
    // nginx appends: emptied, the file holds the second run only.
    std::fs::write(dir.join("access.log"), "").unwrap();

    // The login the log cannot show (no form bodies), with the accounts
    // the journey used.
    let journey_text = std::fs::read_to_string(&journey).unwrap();
    let users = journey_text
        .lines()
        .find_map(|l| l.trim().strip_prefix("file: "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    std::fs::write(
        dir.join("login.yaml"),
        format!(
            "name: log in\ndata:\n  file: \"{users}\"\n  columns: [username, password]\nsteps:\n\
             \x20 - label: login page\n    path: /login/index.php\n    think: 0s\n    extract:\n\
             \x20     - {{name: logintoken, css: 'input[name=logintoken]@value', required: true}}\n\
             \x20 - label: login\n    method: POST\n    path: /login/index.php\n    think: 0s\n\
             \x20   form: {{username: \"${{username}}\", password: \"${{password}}\", logintoken: \"${{logintoken}}\"}}\n\
             \x20   check:\n      - {{contains: You are logged in as, name: logged in}}\n"
        ),
    )
    .unwrap();
    let workload_dir = dir.join("users");
    let out = run(&[
        "scenario",
        "from-log",
        first.to_str().unwrap(),
        "--format",
        WITH_SESSION,
        "--out",
        workload_dir.to_str().unwrap(),
        "--target",
        &format!("http://127.0.0.1:{port}"),
        "--login",
        dir.join("login.yaml").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("users: "), "{said}");
    let workload = std::fs::read_to_string(workload_dir.join("workload.yaml")).unwrap();
    // What cannot be sent again is left out, with its reason.
    for left in [
        "/mod/forum/post.php: no GET answered 2xx or 304",
        "/login/logout.php?sesskey=*: no GET answered 2xx or 304",
    ] {
        assert!(workload.contains(left), "{left}\n{workload}");
    }
    let sent: Vec<String> = workload
        .lines()
        .filter_map(|l| l.strip_prefix("  - label: \""))
        .map(|l| l[..l.find('"').unwrap()].to_string())
        .collect();
    assert!(sent.len() >= 4, "{workload}");
    assert!(
        sent.contains(&"/course/view.php?id=*".to_string()),
        "{sent:?}"
    );
    // No address and no sesskey reach the workload.
    let pages = std::fs::read_to_string(workload_dir.join("pages.csv")).unwrap();
    assert!(!workload.contains("127.0.0.1 -") && !pages.contains("sesskey"));

    // Many pages a user, so that its one login weighs little.
    let out = run(&[
        "run",
        workload_dir.join("workload.yaml").to_str().unwrap(),
        "-c",
        "3",
        "--ramp-up",
        "0s",
        "--think",
        "0s",
        "-d",
        "8s",
        "--out",
        dir.join("workload-run").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("  TOTAL "), "{said}");
    let summary = said.lines().find(|l| l.contains("  TOTAL ")).unwrap();
    assert!(summary.contains(" 0 (0.0%) "), "{said}");
    let before = sent_shares(&first, &sent);
    let after = sent_shares(&dir.join("access.log"), &sent);
    for ((pattern, was), is) in sent.iter().zip(&before).zip(&after) {
        eprintln!("{pattern}: {was:.1}% → {is:.1}%");
        assert!(
            (was - is).abs() <= 2.0,
            "{pattern}: {was:.1}% of the first log's pages, {is:.1}% of the second's\n{sent:?}\n{before:?}\n{after:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// nginx's combined format, as Debian's nginx writes it.
const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

/// A log's model (`scenario from-log --json`).
fn model_of(path: &std::path::Path, format: &str) -> serde_json::Value {
    let out = run(&[
        "scenario",
        "from-log",
        path.to_str().unwrap(),
        "--format",
        format,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each page pattern's share (%) of the pages answered 2xx to a GET, of
/// the patterns `counted`.
fn page_shares(
    model: &serde_json::Value,
    counted: impl Fn(&str) -> bool,
) -> std::collections::BTreeMap<String, f64> {
    let mix: Vec<&serde_json::Value> = model["mix"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| counted(p["pattern"].as_str().unwrap()))
        .collect();
    let total: f64 = mix.iter().map(|p| p["get_2xx"].as_f64().unwrap()).sum();
    mix.iter()
        .map(|p| {
            let share = 100.0 * p["get_2xx"].as_f64().unwrap() / total;
            (p["pattern"].as_str().unwrap().to_string(), share)
        })
        .filter(|(_, share)| *share > 0.0)
        .collect()
}

/// The patterns of what pages loaded that is not a file, with counts.
fn loaded_by_pages(model: &serde_json::Value) -> std::collections::BTreeMap<String, u64> {
    model["loaded_by_pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["pattern"].as_str().unwrap().to_string(),
                l["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The log with each page's scripts the application serves (`.php`
/// naming the page as referer) moved before the page, as nginx logs them
/// when the page completes last.
fn scripts_first(log: &str) -> String {
    fn target(line: &str) -> &str {
        let request = line.split('"').nth(1).unwrap_or("");
        request.split(' ').nth(1).unwrap_or("")
    }
    /// A page's lines: its scripts, the page, the rest.
    fn reorder<'a>(out: &mut Vec<&'a str>, page: &mut Vec<&'a str>) {
        let Some((&first, rest)) = page.split_first() else {
            return;
        };
        let named = format!("{}\"", target(first));
        let (scripts, others): (Vec<&str>, Vec<&str>) = rest
            .iter()
            .partition(|l| l.contains(&named) && target(l).starts_with("/lib/exe/"));
        out.extend(scripts);
        out.push(first);
        out.extend(others);
        page.clear();
    }
    let mut out: Vec<&str> = Vec::new();
    let mut page: Vec<&str> = Vec::new();
    for line in log.lines() {
        if target(line).starts_with("/doku.php") {
            reorder(&mut out, &mut page);
        }
        page.push(line);
    }
    reorder(&mut out, &mut page);
    out.iter().map(|l| format!("{l}\n")).collect()
}

/// DokuWiki (Debian's package) read in headless Chromium behind nginx, a
/// user reading each page 1.5 s: the browser's log tells its 8 pages from
/// the 54 requests that loaded them (style sheets, scripts and images the
/// application serves name their page as referer), and is written as a
/// workload of the two page patterns, pages loaded as a browser does.
/// Run, DokuWiki's own log holds each page pattern within 2 points of its
/// share in the browser's, the same resources the application serves
/// (its task runner once a page, as Chromium asks for it). The browser's
/// log replayed: the server answers the same 62 requests as logged (the
/// image Chromium revalidated, 304, is answered 200 without validators).
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn dokuwikis_log_from_a_browser_runs_again_with_its_mix_and_replays_as_logged() {
    requires!(crate::support::dokuwiki::in_chromium());
    use crate::support::browser::chromium_reads;
    use crate::support::php_site::logging_proxy;
    use crate::support::{dokuwiki, serial};
    let _serial = serial();
    let dir = temp_dir("from-log-dokuwiki");
    let wiki = dokuwiki::start(&dir.join("wiki"), &[]);
    let logs = dir.join("proxy");
    let (_nginx, port) = logging_proxy(&logs, wiki.port, COMBINED);
    let base = format!("http://127.0.0.1:{port}");
    chromium_reads(
        &base,
        &[
            "/doku.php?id=wiki:welcome",
            "/doku.php?id=wiki:syntax",
            "/doku.php?id=wiki:welcome",
            "/doku.php?id=wiki:dokuwiki",
            "/doku.php?id=wiki:welcome&do=index",
            "/doku.php?id=start",
            "/doku.php?id=playground:playground",
            "/doku.php?id=wiki:syntax",
        ],
        1.5,
    );
    let browser = dir.join("browser.log");
    std::fs::copy(logs.join("access.log"), &browser).unwrap();
    std::fs::write(logs.join("access.log"), "").unwrap();
    let logged = std::fs::read_to_string(&browser).unwrap();

    let users = dir.join("users");
    let out = run(&[
        "scenario",
        "from-log",
        browser.to_str().unwrap(),
        "--out",
        users.to_str().unwrap(),
        "--target",
        &base,
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let requests = logged.lines().count();
    let resources = requests - 8;
    assert!(
        said.contains(&format!(
            "requests: {requests}: 8 for pages, {resources} for their resources"
        )),
        "{said}\n{logged}"
    );
    assert!(said.contains("pages a session: median 8"), "{said}");
    let browsed = model_of(&browser, COMBINED);
    let loaded = loaded_by_pages(&browsed);
    for script in [
        "/lib/exe/css.php?t=*&tseed=*",
        "/lib/exe/js.php?t=*&tseed=*",
        "/lib/exe/taskrunner.php?id=*&*",
    ] {
        assert!(loaded.contains_key(script), "{script}: {loaded:?}");
    }
    assert_eq!(loaded["/lib/exe/taskrunner.php?id=*&*"], 8, "{loaded:?}");
    // nginx logs a request when it completes: a large script (jquery.php,
    // 400 KB) may be logged before its page. The same log with each
    // page's scripts moved before it is read to the same model.
    let reordered = dir.join("completion-order.log");
    std::fs::write(&reordered, scripts_first(&logged)).unwrap();
    let again = model_of(&reordered, COMBINED);
    assert_eq!(loaded_by_pages(&again), loaded);
    assert_eq!(again["mix"], browsed["mix"]);
    let workload = std::fs::read_to_string(users.join("workload.yaml")).unwrap();
    assert!(workload.contains("page_loads: true"), "{workload}");
    assert!(!workload.contains("label: \"/lib/"), "{workload}");

    let out = run(&[
        "run",
        users.join("workload.yaml").to_str().unwrap(),
        "-c",
        "2",
        "--ramp-up",
        "0s",
        "--think",
        "0s",
        "-d",
        "6s",
        "--out",
        dir.join("workload-run").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let summary = said.lines().find(|l| l.contains("  TOTAL ")).unwrap();
    assert!(summary.contains(" 0 (0.0%) "), "{said}");
    let served = model_of(&logs.join("access.log"), COMBINED);
    let (before, after) = (
        page_shares(&browsed, |_| true),
        page_shares(&served, |_| true),
    );
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "{after:?}"
    );
    for (pattern, was) in &before {
        let is = after[pattern];
        eprintln!("{pattern}: {was:.1}% → {is:.1}%");
        assert!((was - is).abs() <= 2.0, "{pattern}: {was:.1}% → {is:.1}%");
    }
    let pages: u64 = served["mix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["count"].as_u64().unwrap())
        .sum();
    // (Not the image fetch.php serves: DokuWiki marks it loading=lazy,
    // which Chromium fetched as it was near the screen and headroom,
    // without a layout, leaves out: docs/scenarios.md.)
    let again = loaded_by_pages(&served);
    for script in loaded.keys().filter(|p| !p.contains("fetch.php")) {
        assert!(again.contains_key(script), "{script}: {again:?}");
    }
    // (A page in flight when the run ended may lack its task runner.)
    let runners = again["/lib/exe/taskrunner.php?id=*&*"];
    assert!(
        runners <= pages && runners + 2 >= pages,
        "a task runner a page: {pages} pages, {again:?}"
    );

    std::fs::write(logs.join("access.log"), "").unwrap();
    let out = run(&[
        "replay",
        browser.to_str().unwrap(),
        "--target",
        &base,
        "--speed",
        "4x",
        "--out",
        dir.join("replay").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let revalidated = logged.matches("\" 304 ").count();
    let statuses = match revalidated {
        0 => format!("replayed statuses: {requests} answered as recorded\n"),
        n => format!(
            "replayed statuses: {} answered as recorded; {n} not: 304 → 200 ({n})",
            requests - n
        ),
    };
    assert!(said.contains(&statuses), "{statuses}\n{said}");
    let request_lines = |log: &str| {
        let mut lines: Vec<String> = log
            .lines()
            .map(|l| l.split('"').nth(1).unwrap().to_string())
            .collect();
        lines.sort();
        lines
    };
    let replayed = std::fs::read_to_string(logs.join("access.log")).unwrap();
    assert_eq!(request_lines(&replayed), request_lines(&logged));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--login` with 6 accounts: the workload logs each user in with its own
/// account row (user n, row n), whatever pages the users before it read;
/// the accounts are in a file only their owner may read, said, and not
/// in pages.csv. The log's peak is 20 users: that 14 share an account is
/// said.
#[test]
fn each_user_of_a_login_workload_logs_in_with_its_own_account() {
    requires!(minutes());
    use crate::support::light;
    use crate::support::raw::{RawConn, RawServer};
    use std::os::unix::fs::PermissionsExt;
    let _guard = light();
    let dir = temp_dir("from-log-accounts");
    std::fs::create_dir_all(&dir).unwrap();
    // 20 users in the same minute, each reading a page every 30 s.
    let mut log = String::new();
    for second in (0..300).step_by(30) {
        for user in 0..20 {
            let page = format!("/course/view.php?id={}", (second / 30 + user) % 4);
            log += &line(second, &format!("192.0.2.{user}"), &page, 200);
        }
    }
    std::fs::write(dir.join("access.log"), log).unwrap();
    let accounts: String = (1..=6)
        .map(|i| format!("student{i},Pw-{i}-secret\n"))
        .collect();
    std::fs::write(dir.join("students.csv"), accounts).unwrap();
    std::fs::write(
        dir.join("login.yaml"),
        "name: log in\ndata:\n  file: students.csv\n  columns: [username, password]\nsteps:\n\
         \x20 - label: login\n    method: POST\n    path: /login\n    think: 0s\n\
         \x20   form: {username: \"${username}\", password: \"${password}\"}\n",
    )
    .unwrap();
    let site = RawServer::start(|mut conn: RawConn| {
        while let Some(_request) = conn.next_request(std::time::Duration::from_secs(5)) {
            conn.respond("200 OK", &[], b"a page");
        }
    });
    let users = dir.join("users");
    let out = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        "--out",
        users.to_str().unwrap(),
        "--target",
        &site.url(""),
        "--login",
        dir.join("login.yaml").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for expected in [
        "accounts.csv (6 accounts of ",
        "with their passwords: readable by you only); user n logs in with row n",
        "20 users, 6 accounts: 14 users share an account",
    ] {
        assert!(said.contains(expected), "{expected}\n{said}");
    }
    let mode = |file: &str| {
        std::fs::metadata(users.join(file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("accounts.csv"), 0o600);
    let pages = std::fs::read_to_string(users.join("pages.csv")).unwrap();
    assert!(
        !pages.contains("secret") && !pages.contains("student"),
        "{pages}"
    );
    // Users 0.5 s apart, each reading pages every 50 ms meanwhile: the
    // data's shared cursor moves on between two users' logins.
    let out = run(&[
        "run",
        users.join("workload.yaml").to_str().unwrap(),
        "-c",
        "6",
        "--ramp-up",
        "3s",
        "--think",
        "50ms",
        "-d",
        "4s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let requests = site.requests();
    let mut logins: Vec<String> = requests
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    logins.sort();
    let expected: Vec<String> = (1..=6)
        .map(|i| format!("username=student{i}&password=Pw-{i}-secret"))
        .collect();
    // Each user walks the log's sessions (10 pages each), each a new
    // visitor who logs in first, always with the user's own account: a
    // login per visit begun (the last of each user may be cut by the end).
    let mut accounts = logins.clone();
    accounts.dedup();
    assert_eq!(accounts, expected);
    let pages = requests.iter().filter(|r| r.method == "GET").count();
    assert!(
        pages <= 10 * logins.len() && pages > 10 * (logins.len() - 6),
        "{pages} pages, {} logins",
        logins.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
