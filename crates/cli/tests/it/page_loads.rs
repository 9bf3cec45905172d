//! Page loads against real Chromium: the resources headroom fetches for a
//! first and a repeat visit, and how (200 or 304), are the ones the browser
//! fetches, on a static site with three kinds of caching (nginx), on
//! DokuWiki (Debian's package) and on the testbed.

use crate::support::browser::chromium_visits;
use crate::support::php_site::{nginx_http, Daemon};
use crate::support::site::{serve, sqlite_dataset, stats};
use crate::support::{
    browser, dokuwiki, free_port, light, program, requires, run, serial, temp_dir, text,
};
use std::path::Path;
use std::process::Command;

/// One user of headroom visiting `paths` once, each a page load.
fn headroom_visits(dir: &Path, base: &str, paths: &[&str]) -> serde_json::Value {
    let mut yaml = format!("defaults:\n  base_url: {base}\n  page_loads: true\nsteps:\n");
    for (i, path) in paths.iter().enumerate() {
        yaml.push_str(&format!(
            "  - label: visit {}\n    path: \"{path}\"\n",
            i + 1
        ));
    }
    let journey = dir.join("visits.yaml");
    std::fs::write(&journey, yaml).unwrap();
    one_user_once(dir, &journey)
}

/// Runs `journey` for one user, once; its summary.
fn one_user_once(dir: &Path, journey: &Path) -> serde_json::Value {
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "-c",
        "1",
        "--iterations",
        "1",
        "--json",
        "--quiet",
        "--out",
        dir.join("bundle").to_str().unwrap(),
    ]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)))
}

/// The access log's requests of one client (its User-Agent holding
/// `agent`), split into visits: each starts at the request for its page.
/// Per visit: its resources' (URI, status), sorted.
fn visits(log: &str, agent: &str, paths: &[&str]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = Vec::new();
    for line in log.lines().filter(|l| l.contains(agent)) {
        let mut parts = line.split(' ');
        let (uri, status) = (parts.next().unwrap(), parts.next().unwrap());
        // DokuWiki's task runner image carries the time: one name for it.
        let uri = match uri.split_once("taskrunner.php") {
            Some((path, _)) => format!("{path}taskrunner.php"),
            None => uri.to_string(),
        };
        let uri = uri.as_str();
        if out.len() < paths.len() && uri == paths[out.len()] {
            out.push(Vec::new());
            continue;
        }
        if let Some(visit) = out.last_mut() {
            visit.push((uri.to_string(), status.to_string()));
        }
    }
    for visit in &mut out {
        visit.sort();
    }
    out
}

/// A static site: two pages naming the same files, cached for an hour
/// (`/s/`), never without asking (`/nc/`, no-cache), or by the heuristic
/// (`/old/`: modified ten days ago, so fresh for a day; `/new/`: modified
/// in the future, so always asked again).
fn static_site(dir: &Path) -> (Daemon, u16) {
    let www = dir.join("www");
    for sub in ["s", "nc", "old", "new"] {
        std::fs::create_dir_all(www.join(sub)).unwrap();
    }
    let page = |title: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title>\
             <link rel=\"icon\" href=\"/s/icon.ico\">\
             <link rel=\"stylesheet\" href=\"/s/style.css\">\
             <script src=\"/nc/app.js\"></script></head>\
             <body><h1>{title}</h1><img src=\"/old/logo.png\" alt=\"\">\
             <img src=\"/new/photo.png\" alt=\"\"><div class=\"box\">x</div></body></html>"
        )
    };
    std::fs::write(www.join("a.html"), page("A")).unwrap();
    std::fs::write(www.join("b.html"), page("B")).unwrap();
    std::fs::write(
        www.join("s/style.css"),
        "body{margin:0}.box{width:9px;height:9px;background:url(/s/dot.png)}\n",
    )
    .unwrap();
    std::fs::write(www.join("nc/app.js"), "document.title += '.';\n").unwrap();
    let png = support_png();
    for file in ["s/dot.png", "s/icon.ico", "old/logo.png", "new/photo.png"] {
        std::fs::write(www.join(file), &png).unwrap();
    }
    let touch = |file: &str, when: &str| {
        let status = Command::new("touch")
            .args(["-d", when])
            .arg(www.join(file))
            .status()
            .unwrap();
        assert!(status.success());
    };
    touch("old/logo.png", "10 days ago");
    touch("new/photo.png", "1 day");
    let port = free_port();
    let server = format!(
        "access_log {d}/access.log pages;\n\
         server {{\n    listen 127.0.0.1:{port};\n    root {www};\n\
         location /s/ {{ add_header Cache-Control \"max-age=3600\"; }}\n\
         location /nc/ {{ add_header Cache-Control \"no-cache\"; }}\n  }}\n",
        d = dir.display(),
        www = www.display()
    );
    (logging_nginx(dir, &server, port), port)
}

/// nginx serving `servers` (its http block's own lines), logging each
/// request's URI, status and User-Agent in the format `pages`.
fn logging_nginx(dir: &Path, servers: &str, port: u16) -> Daemon {
    let http =
        format!("  log_format pages '$request_uri $status \"$http_user_agent\"';\n{servers}");
    nginx_http(dir, &http, port)
}

/// Two sites whose pages name no icon, as a browser then asks for each
/// origin's `/favicon.ico`: on the first none is there (404), on the
/// second it redirects (302, as WordPress answers it) to a logo cached for
/// an hour. Each logs to its own file.
fn sites_without_icons(dir: &Path) -> (Daemon, u16, u16) {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    for page in ["a", "b"] {
        std::fs::write(
            www.join(format!("{page}.html")),
            format!("<!doctype html><html><head><title>{page}</title></head><body><p>{page}</p></body></html>"),
        )
        .unwrap();
    }
    std::fs::write(www.join("logo.png"), support_png()).unwrap();
    let (missing, redirected) = (free_port(), free_port());
    let servers = format!(
        "server {{\n    listen 127.0.0.1:{missing};\n    root {www};\n\
         access_log {d}/missing.log pages;\n  }}\n\
         server {{\n    listen 127.0.0.1:{redirected};\n    root {www};\n\
         access_log {d}/redirected.log pages;\n\
         location = /favicon.ico {{ return 302 /logo.png; }}\n\
         location = /logo.png {{ add_header Cache-Control \"max-age=3600\"; }}\n  }}\n",
        d = dir.display(),
        www = www.display()
    );
    (logging_nginx(dir, &servers, missing), missing, redirected)
}

/// Pages that name no icon: Chromium asks for `/favicon.ico` once each
/// page has loaded, not again after a 404 (it remembers a 404 or 410
/// while it runs, not a 403 or a 500), and at every page when it
/// redirects, the logo it points to taken from the cache after the first
/// time. headroom's first and repeat visits ask for the same.
#[test]
fn a_page_without_an_icon_costs_what_chromium_asks_for_its_favicon() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        browser(),
    );
    let _guard = light();
    let dir = temp_dir("page-loads-favicon");
    let (_nginx, missing, redirected) = sites_without_icons(&dir);
    let paths = ["/a.html", "/b.html", "/a.html"];
    let pair = |uri: &str, status: &str| (uri.to_string(), status.to_string());
    for (port, log, expected) in [
        (
            missing,
            "missing.log",
            vec![vec![pair("/favicon.ico", "404")], vec![], vec![]],
        ),
        (
            redirected,
            "redirected.log",
            vec![
                vec![pair("/favicon.ico", "302"), pair("/logo.png", "200")],
                vec![pair("/favicon.ico", "302")],
                vec![pair("/favicon.ico", "302")],
            ],
        ),
    ] {
        let base = format!("http://127.0.0.1:{port}");
        chromium_visits(&base, &paths);
        let own = dir.join(log.trim_end_matches(".log"));
        std::fs::create_dir_all(&own).unwrap();
        let summary = headroom_visits(&own, &base, &paths);
        let log = std::fs::read_to_string(dir.join(log)).unwrap();
        assert_eq!(visits(&log, "HeadlessChrome", &paths), expected, "{log}");
        assert_eq!(visits(&log, "headroom/", &paths), expected, "{log}");
        // A missing favicon is no error of the page.
        assert_eq!(summary["total"]["errors"].as_u64(), Some(0), "{summary}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 1×1 PNG.
fn support_png() -> Vec<u8> {
    const PNG: &str = "89504e470d0a1a0a0000000d4948445200000001000000010806000000\
                       1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2a2\
                       b3c60000000049454e44ae426082";
    (0..PNG.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&PNG[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_static_sites_first_and_repeat_visits_fetch_what_chromium_fetches() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        browser(),
    );
    let _guard = light();
    let dir = temp_dir("page-loads-static");
    let (_nginx, port) = static_site(&dir);
    let base = format!("http://127.0.0.1:{port}");
    let paths = ["/a.html", "/b.html"];
    chromium_visits(&base, &paths);
    headroom_visits(&dir, &base, &paths);
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let chromium = visits(&log, "HeadlessChrome", &paths);
    let headroom = visits(&log, "headroom/", &paths);
    let pair = |uri: &str, status: &str| (uri.to_string(), status.to_string());
    // What the browser did, written out: the first visit fetches all six;
    // the second asks again for the no-cache script and the file modified
    // "in the future" (304 both), and takes the rest from its cache.
    assert_eq!(
        chromium,
        vec![
            vec![
                pair("/nc/app.js", "200"),
                pair("/new/photo.png", "200"),
                pair("/old/logo.png", "200"),
                pair("/s/dot.png", "200"),
                pair("/s/icon.ico", "200"),
                pair("/s/style.css", "200"),
            ],
            vec![pair("/nc/app.js", "304"), pair("/new/photo.png", "304")],
        ],
        "{log}"
    );
    assert_eq!(headroom, chromium, "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pages with `loading=lazy` images at several depths, as a blog's front
/// page has them: Chromium fetches at once those whose top is within
/// 1,970 px of the page's top (its 720 px window and 1,250 px ahead), and
/// so does headroom, from where it estimates them.
#[test]
fn lazy_images_near_the_top_are_fetched_as_chromium_fetches_them() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        browser(),
    );
    let _guard = light();
    let dir = temp_dir("page-loads-lazy");
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    let text = "The volcano erupts when magma rises through the crust. ".repeat(12);
    let post = |i: usize, lazy: bool| {
        format!(
            "<h2>Lesson {i}</h2><p><img src=\"/p{i}.png\" width=\"640\" height=\"360\"{}></p><p>{text}</p>",
            if lazy { " loading=\"lazy\"" } else { "" }
        )
    };
    // Posts of about 520 px each: the first image eager (as WordPress
    // writes it), lazy ones at about 600, 1,100 and 1,700 px (fetched) and
    // 2,200 px and below (not); a page of text with a lazy image at about
    // 1,450 px (fetched) and one at about 2,900 px (not).
    let posts: String = (1..=8).map(|i| post(i, i > 1)).collect();
    let page = |title: &str, body: &str| {
        format!("<!doctype html><html><head><title>{title}</title><link rel=\"icon\" href=\"data:,\"></head><body><h1>{title}</h1>{body}</body></html>")
    };
    std::fs::write(www.join("front.html"), page("Lessons", &posts)).unwrap();
    let paragraphs = format!("<p>{text}</p>").repeat(20);
    std::fs::write(
        www.join("text.html"),
        page(
            "Notes",
            &format!("{paragraphs}<img loading=lazy src=/t1.png width=50 height=50>{paragraphs}<img loading=lazy src=/t2.png width=50 height=50>"),
        ),
    )
    .unwrap();
    for name in (1..=8)
        .map(|i| format!("p{i}.png"))
        .chain(["t1.png".into(), "t2.png".into()])
    {
        std::fs::write(www.join(name), support_png()).unwrap();
    }
    let port = free_port();
    let server = format!(
        "access_log {d}/access.log pages;\n\
         server {{\n    listen 127.0.0.1:{port};\n    root {www};\n  }}\n",
        d = dir.display(),
        www = www.display()
    );
    let _nginx = logging_nginx(&dir, &server, port);
    let base = format!("http://127.0.0.1:{port}");
    let paths = ["/front.html", "/text.html"];
    chromium_visits(&base, &paths);
    headroom_visits(&dir, &base, &paths);
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let chromium = visits(&log, "HeadlessChrome", &paths);
    let names = |visit: &Vec<(String, String)>| -> Vec<String> {
        visit.iter().map(|(uri, _)| uri.clone()).collect()
    };
    assert_eq!(
        chromium.iter().map(names).collect::<Vec<_>>(),
        vec![
            vec!["/p1.png", "/p2.png", "/p3.png", "/p4.png"],
            vec!["/t1.png"],
        ],
        "{log}"
    );
    assert_eq!(visits(&log, "headroom/", &paths), chromium, "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The HTML report of `bundle`, written beside it.
fn report_html(bundle: &Path) -> String {
    let page = bundle.join("report.html");
    let out = run(&[
        "report",
        bundle.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn the_summary_counts_every_request_beside_the_pages() {
    requires!(program("nginx", "nginx"));
    let _guard = light();
    let dir = temp_dir("page-loads-wire");
    let (_nginx, port) = static_site(&dir);
    let base = format!("http://127.0.0.1:{port}");
    // The first visit: the document and its 6 resources; the second: the
    // document and 2 revalidated (the other 4 from the cache).
    let summary = headroom_visits(&dir, &base, &["/a.html", "/b.html"]);
    let wire = &summary["requests"];
    assert_eq!(
        (
            &wire["requests"],
            &wire["pages"],
            &wire["documents"],
            &wire["resources"],
            &wire["plain"]
        ),
        (&10.into(), &2.into(), &2.into(), &8.into(), &0.into()),
        "{summary}"
    );
    assert_eq!(summary["total"]["count"], 2, "the total counts pages");
    let received: u64 = [
        "visit 1 (html)",
        "visit 1 (resources)",
        "visit 2 (html)",
        "visit 2 (resources)",
    ]
    .iter()
    .map(|l| summary["labels"][l]["bytes_received"].as_u64().unwrap())
    .sum();
    assert_eq!(wire["bytes_received"], received, "{summary}");
    // The terminal says it under the transactions (pages).
    let out = run(&[
        "run",
        dir.join("visits.yaml").to_str().unwrap(),
        "-c",
        "1",
        "--iterations",
        "1",
        "--out",
        dir.join("shown").to_str().unwrap(),
    ]);
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        shown.contains(
            "Requests:                 10 over the wire (2 pages: 2 documents + 8 resources)"
        ),
        "{}",
        text(&out)
    );
    // `scenario try` counts them too (its user starts with an empty cache).
    let out = run(&["scenario", "try", dir.join("visits.yaml").to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(
            "OK: 2 steps (10 requests with their pages' 8 resources), every check passed"
        ),
        "{}",
        text(&out)
    );
    // A saved bundle keeps the labels' roles: its report says the same.
    let bundle = dir.join("bundle");
    let manifest_path = bundle.join("manifest.json");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    assert_eq!(
        manifest["label_roles"]["visit 2 (resources)"],
        "page_resources"
    );
    let said = "10 requests over the wire";
    assert!(report_html(&bundle).contains(said));
    // A run that died: its figures rebuilt from its files still count them.
    let mut died = manifest.clone();
    died["status"] = "running".into();
    died["summary"] = serde_json::Value::Null;
    std::fs::write(&manifest_path, died.to_string()).unwrap();
    assert!(report_html(&bundle).contains(said));
    // A bundle written before the roles: read as before, no count.
    let mut old = manifest.clone();
    old.as_object_mut().unwrap().remove("label_roles");
    old["summary"].as_object_mut().unwrap().remove("requests");
    std::fs::write(&manifest_path, old.to_string()).unwrap();
    let page = report_html(&bundle);
    assert!(!page.contains("over the wire") && page.contains("requests/s"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_merged_runs_count_adds_its_shards() {
    requires!(program("nginx", "nginx"));
    let _guard = light();
    let dir = temp_dir("page-loads-merge");
    let (_nginx, port) = static_site(&dir);
    let base = format!("http://127.0.0.1:{port}");
    headroom_visits(&dir, &base, &["/a.html", "/b.html"]);
    let journey = dir.join("visits.yaml");
    let start = humantime::format_rfc3339_millis(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3),
    )
    .to_string();
    let shards: Vec<_> = ["0/2", "1/2"]
        .iter()
        .enumerate()
        .map(|(i, shard)| {
            let out = dir.join(format!("shard-{i}"));
            let child = crate::support::headroom()
                .args([
                    "run",
                    journey.to_str().unwrap(),
                    "-c",
                    "2",
                    "--iterations",
                    "1",
                ])
                .args(["--shard", shard, "--start-at", &start, "-q", "--out"])
                .arg(&out)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut dirs = Vec::new();
    for (child, out) in shards {
        assert!(child.wait_with_output().unwrap().status.success());
        dirs.push(out);
    }
    let merged = dir.join("merged");
    let out = crate::support::headroom()
        .arg("merge")
        .args(&dirs)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
            .unwrap();
    // Each shard's user: 2 pages, 10 requests (as one user alone).
    let wire = &manifest["summary"]["requests"];
    assert_eq!(
        (&wire["requests"], &wire["pages"], &wire["resources"]),
        (&20.into(), &4.into(), &16.into()),
        "{manifest}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn dokuwikis_pages_load_as_in_chromium() {
    requires!(crate::support::dokuwiki::in_chromium());
    // Serial: its pages are told apart by nginx's log order, which is
    // the order requests finish in; beside other tests a page's last
    // resources finished after the next page's document.
    let _guard = serial();
    let dir = temp_dir("page-loads-dokuwiki");
    let wiki = dokuwiki::start(&dir.join("wiki"), &[]);
    let base = format!("http://127.0.0.1:{}", wiki.port);
    let paths = ["/doku.php?id=start", "/doku.php?id=wiki:syntax"];
    chromium_visits(&base, &paths);
    headroom_visits(&dir, &base, &paths);
    let log = std::fs::read_to_string(dir.join("wiki/access.log")).unwrap();
    let chromium = visits(&log, "HeadlessChrome", &paths);
    let headroom = visits(&log, "headroom/", &paths);
    assert_eq!(chromium.len(), 2, "{log}");
    assert!(
        chromium[0].len() >= 4,
        "DokuWiki's first page names its CSS, JS and images: {log}"
    );
    assert_eq!(headroom, chromium, "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_testbeds_pages_cost_the_server_what_they_cost_in_chromium() {
    requires!(program("python3", "python3"), browser());
    let _guard = light();
    let (dir, db) = sqlite_dataset("page-loads", "s");
    let site = serve(&db, &[]);
    let base = format!("http://127.0.0.1:{}", site.port);
    let served = || stats(site.port)["served"].as_u64().unwrap();
    // A new browser each time: the front page alone, then the front page
    // and the login page (its cache carries over between the two).
    let before = served();
    chromium_visits(&base, &["/"]);
    let first = served() - before;
    let before = served();
    chromium_visits(&base, &["/", "/login/index.php"]);
    let both = served() - before;
    assert_eq!((first, both - first), (7, 1), "Chromium: 7 then 1");

    let before = served();
    let summary = headroom_visits(&dir, &base, &["/", "/login/index.php"]);
    assert_eq!(served() - before, 8, "{summary}");
    let count = |name: &str| {
        summary["labels"][name]["count"]
            .as_u64()
            .unwrap_or_else(|| panic!("no label {name}: {summary}"))
    };
    assert_eq!(count("visit 1 (resources)"), 6);
    assert_eq!(count("visit 2 (resources)"), 0);
    assert_eq!(count("visit 1"), 1);
    // The run's total counts pages, with the bytes of everything.
    assert_eq!(summary["total"]["count"], 2, "{summary}");
    let page_bytes = summary["total"]["bytes_received"].as_u64().unwrap_or(0);
    assert!(
        page_bytes > 400_000,
        "the theme's 400 KB are in the pages' bytes: {summary}"
    );
    drop(site);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_pages_end_with_recorded_failures_not_a_hang() {
    let _guard = light();
    use crate::support::raw::RawServer;
    use std::time::{Duration, Instant};
    // A host named for resources that accepts and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let _keep = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    let page = format!(
        "<html><head><link rel=stylesheet href=/loop1.css><<<broken <p =>\
         <script src=http://{silent_addr}/never.js></script></head><body>\
         <img src=/missing.png></body></html>"
    );
    let many: String = (0..3000).map(|i| format!("<img src=/i/{i}.png>")).collect();
    let server = RawServer::start(move |mut conn| {
        while let Some(request) = conn.next_request(Duration::from_secs(5)) {
            let target = request.target.as_str();
            match target {
                "/page" => {
                    conn.respond("200 OK", &[("Content-Type", "text/html")], page.as_bytes())
                }
                "/many" => conn.respond("200 OK", &[], many.as_bytes()),
                "/loop1.css" => conn.respond("302 Found", &[("Location", "/loop2.css")], b""),
                "/loop2.css" => conn.respond("302 Found", &[("Location", "/loop1.css")], b""),
                "/missing.png" => conn.respond("404 Not Found", &[], b"no"),
                _ => conn.respond("200 OK", &[("Content-Type", "image/png")], b"png"),
            }
        }
    });
    let dir = temp_dir("page-loads-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let journey = dir.join("bad.yaml");
    std::fs::write(
        &journey,
        format!(
            "defaults:\n  base_url: {}\n  page_loads: true\n  timeout: 1s\n  resource_hosts: [http://{silent_addr}]\nsteps:\n  - label: bad page\n    path: /page\n  - label: many\n    path: /many\n",
            server.url("")
        ),
    )
    .unwrap();
    let started = Instant::now();
    let summary = one_user_once(&dir, &journey);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let resources = &summary["labels"]["bad page (resources)"];
    // The style sheet and where it redirected (the loop ends at a URL
    // fetched before), the silent host's script (timed out after 1 s), the
    // missing image (404), and /favicon.ico (the page names no icon).
    assert_eq!(resources["count"], 5, "{summary}");
    assert_eq!(resources["errors"], 2, "{summary}");
    assert_eq!(resources["errors_by_kind"]["timeout"], 1, "{summary}");
    assert_eq!(resources["status_codes"]["3xx"], 2, "{summary}");
    let asked: Vec<String> = server.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        asked.iter().filter(|t| t.starts_with("/loop")).count(),
        2,
        "{asked:?}"
    );
    // 3,000 images: the first 2,000.
    assert_eq!(
        summary["labels"]["many (resources)"]["count"], 2000,
        "{summary}"
    );
    // The page came, but its resources failed (and a style sheet's
    // redirects looped): the page failed with them, as in JMeter.
    let page = &summary["labels"]["bad page"];
    assert_eq!(page["errors"], 1, "{summary}");
    assert_eq!(page["errors_by_kind"]["resource"], 1, "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// JMeter's HTTP Request with "Retrieve All Embedded Resources" (6
/// parallel downloads) and an HTTP Cache Manager, visiting `paths` once.
fn jmeter_plan(port: u16, paths: &[&str]) -> String {
    let samplers: String = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            format!(
                r#"<HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="visit {n}">
  <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
  <stringProp name="HTTPSampler.port">{port}</stringProp>
  <stringProp name="HTTPSampler.protocol">http</stringProp>
  <stringProp name="HTTPSampler.path">{path}</stringProp>
  <stringProp name="HTTPSampler.method">GET</stringProp>
  <boolProp name="HTTPSampler.image_parser">true</boolProp>
  <boolProp name="HTTPSampler.concurrentDwn">true</boolProp>
  <stringProp name="HTTPSampler.concurrentPool">6</stringProp>
</HTTPSamplerProxy>
<hashTree/>
"#,
                n = i + 1
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="page loads"/><hashTree>
<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="users">
  <intProp name="ThreadGroup.num_threads">1</intProp>
  <intProp name="ThreadGroup.ramp_time">0</intProp>
  <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController">
    <boolProp name="LoopController.continue_forever">false</boolProp>
    <stringProp name="LoopController.loops">1</stringProp>
  </elementProp>
</ThreadGroup><hashTree>
<CookieManager guiclass="CookiePanel" testclass="CookieManager" testname="cookies"/><hashTree/>
<CacheManager guiclass="CacheManagerGui" testclass="CacheManager" testname="cache">
  <boolProp name="clearEachIteration">false</boolProp>
  <boolProp name="useExpires">true</boolProp>
</CacheManager><hashTree/>
{samplers}</hashTree></hashTree></hashTree></jmeterTestPlan>
"#
    )
}

#[test]
fn beside_jmeter_the_testbeds_pages_add_what_its_style_sheet_names() {
    requires!(
        program("java", "default-jre-headless"),
        program("mvn", "maven"),
    );
    let _guard = light();
    let home = crate::jmeter::jmeter_home();
    let (dir, db) = sqlite_dataset("page-loads-jmeter", "s");
    let site = serve(&db, &[]);
    let base = format!("http://127.0.0.1:{}", site.port);
    let served = || stats(site.port)["served"].as_u64().unwrap();
    let paths = ["/", "/login/index.php"];
    let plan = dir.join("pages.jmx");
    std::fs::write(&plan, jmeter_plan(site.port, &paths)).unwrap();
    let before = served();
    crate::jmeter::jmeter(
        &home,
        &[
            "-n",
            "-t",
            plan.to_str().unwrap(),
            "-l",
            dir.join("pages.jtl").to_str().unwrap(),
            "-j",
            dir.join("jmeter.log").to_str().unwrap(),
        ],
    );
    let by_jmeter = served() - before;
    let jtl = std::fs::read_to_string(dir.join("pages.jtl")).unwrap();
    // JMeter: the front page's icon, style sheet and two scripts, then
    // nothing from its cache; it does not read the style sheet for the
    // logo and the font it names (Chromium and headroom do: 7 and 1).
    assert_eq!(by_jmeter, 2 + 4, "{jtl}");
    for resource in ["favicon", "styles.php", "polyfill.min.js", "require.min.js"] {
        assert!(jtl.contains(resource), "{resource}: {jtl}");
    }
    let before = served();
    headroom_visits(&dir, &base, &paths);
    assert_eq!(served() - before, 2 + 6);
    drop(site);
    std::fs::remove_dir_all(&dir).unwrap();
}
