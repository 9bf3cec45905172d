//! What pages' scripts ask for, learned from the log: three students in
//! Chromium visit pages whose scripts fetch a feed (never cached), an
//! image (cached) and, on one page, its own data; `scenario from-log` of
//! nginx's log writes a workload whose page loads fetch them too, and the
//! workload run as those students costs nginx the same requests, URL by
//! URL, but for the scripts' POSTs, which it names.

use crate::support::browser::chromium_reads_as;
use crate::support::php_site::{nginx_serving, Daemon};
use crate::support::{
    browser, light, program, requires, run, serial, temp_dir, text, workload_from_log,
};
use std::collections::BTreeMap;
use std::path::Path;

/// Pages /a.html and /b.html, each running /s/app.js (cached an hour),
/// which fetches /api/news.json (never stored) and an image, and POSTs to
/// /api/seen (a body the log does not hold); /b.html also
/// runs /s/b.js, which fetches /api/b.json. nginx logs in its combined
/// format to `dir`/access.log.
fn site_with_scripts(dir: &Path) -> (Daemon, u16) {
    let www = dir.join("www");
    for sub in ["s", "api"] {
        std::fs::create_dir_all(www.join(sub)).unwrap();
    }
    let page = |title: &str, extra: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title>\
             <script src=\"/s/app.js\"></script>{extra}</head>\
             <body><h1>{title}</h1></body></html>"
        )
    };
    std::fs::write(www.join("a.html"), page("A", "")).unwrap();
    std::fs::write(
        www.join("b.html"),
        page("B", "<script src=\"/s/b.js\"></script>"),
    )
    .unwrap();
    std::fs::write(
        www.join("s/app.js"),
        "fetch('/api/news.json').then(r => r.json());\nnew Image().src = '/s/emoji.png';\n\
         fetch('/api/seen', {method: 'POST'});\n",
    )
    .unwrap();
    std::fs::write(
        www.join("s/b.js"),
        "fetch('/api/b.json').then(r => r.json());\n",
    )
    .unwrap();
    std::fs::write(www.join("s/emoji.png"), [0x89, b'P', b'N', b'G']).unwrap();
    std::fs::write(www.join("api/news.json"), "{\"news\": []}\n").unwrap();
    std::fs::write(www.join("api/b.json"), "{\"b\": 1}\n").unwrap();
    let log = format!("access_log {}/access.log combined;", dir.display());
    let server = format!(
        "root {};\n\
         location ~ \\.html$ {{ add_header Cache-Control \"no-cache\"; }}\n\
         location /s/ {{ add_header Cache-Control \"max-age=3600\"; }}\n\
         location /api/ {{ add_header Cache-Control \"no-store\"; }}\n\
         location = /api/seen {{ return 204; }}",
        www.display()
    );
    nginx_serving(dir, &log, &server)
}

/// The requests of the log's lines whose User-Agent holds `agent`, by
/// path.
fn requests_by_path(log: &str, agent: &str) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for line in log.lines().filter(|l| l.contains(agent)) {
        let request = line.split('"').nth(1).unwrap_or_default();
        let path = request.split(' ').nth(1).unwrap_or_default();
        *counts.entry(path.to_string()).or_default() += 1;
    }
    counts
}

/// A journey of page loads of `visits` in order, at `base`, written to
/// `dir`/visits.yaml.
fn visits_journey(dir: &Path, base: &str, visits: &[&str]) -> std::path::PathBuf {
    let journey = dir.join("visits.yaml");
    let steps: String = visits
        .iter()
        .enumerate()
        .map(|(i, path)| format!("  - label: visit {i}\n    path: \"{path}\"\n"))
        .collect();
    std::fs::write(
        &journey,
        format!("defaults:\n  base_url: {base}\n  page_loads: true\nsteps:\n{steps}"),
    )
    .unwrap();
    journey
}

/// `journey` run by one user `iterations` times without reading, once per
/// student (each a new user, its cache empty), into `dir`/`name`-N.
fn each_student(journey: &Path, students: u32, iterations: u32, dir: &Path, name: &str) {
    for student in 1..=students {
        let out = run(&[
            "run",
            journey.to_str().unwrap(),
            "-c",
            "1",
            "--iterations",
            &iterations.to_string(),
            "--think",
            "0s",
            "--quiet",
            "--out",
            dir.join(format!("{name}-{student}")).to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }
}

#[test]
fn a_workload_from_the_log_fetches_what_the_pages_scripts_asked_for() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        browser(),
    );
    let _guard = light();
    let dir = temp_dir("script-requests");
    let (_nginx, port) = site_with_scripts(&dir);
    let base = format!("http://127.0.0.1:{port}");
    let visits = ["/a.html", "/b.html", "/a.html"];
    // Three students, told apart in the log by their browsers' agents.
    for student in 1..=3 {
        let agent = format!("Mozilla/5.0 HeadlessChrome student-{student}");
        chromium_reads_as(&base, &visits, 2.5, Some(&agent));
    }
    let log_path = dir.join("access.log");
    let browsers = requests_by_path(&std::fs::read_to_string(&log_path).unwrap(), "student-");
    let expected: BTreeMap<String, u32> = [
        ("/a.html", 6),
        ("/b.html", 3),
        ("/s/app.js", 3),
        ("/s/b.js", 3),
        ("/api/news.json", 9),
        ("/api/b.json", 3),
        ("/s/emoji.png", 3),
        ("/favicon.ico", 3),
        ("/api/seen", 9),
    ]
    .into_iter()
    .map(|(p, n)| (p.to_string(), n))
    .collect();
    assert_eq!(browsers, expected, "Chromium's requests");

    let users = dir.join("users");
    let said = workload_from_log(&log_path, &users, &base, &[]);
    let workload = std::fs::read_to_string(users.join("workload.yaml")).unwrap();
    // Each page learned what its scripts fetched (and what its HTML
    // names); the feed with both, as it is never stored; /s/app.js not with
    // /b.html, each student having it cached from /a.html before.
    for (page, learned) in [
        (
            "/a.html",
            &["/s/app.js", "/api/news.json", "/s/emoji.png"][..],
        ),
        ("/b.html", &["/s/b.js", "/api/news.json", "/api/b.json"][..]),
    ] {
        let step = workload
            .split("  - label: ")
            .find(|s| s.starts_with(&format!("\"{page}\"")))
            .unwrap_or_else(|| panic!("no step for {page}:\n{workload}"));
        for resource in learned {
            assert!(
                step.contains(&format!("- \"{resource}\"")),
                "{page} {resource}:\n{step}"
            );
        }
    }
    assert!(
        said.contains("page views: the log's cost 4.7 requests each (42 requests, 9 pages seen)"),
        "{said}"
    );
    // The scripts' POSTs cannot be sent again: named.
    assert!(
        said.contains(
            "not learned from the log (sent only where a page's HTML names them): 1.00 requests a page view: 9 sent by a page's script with a method other than GET"
        ),
        "{said}"
    );
    assert!(
        said.contains("the lesson: headroom capacity --scenario"),
        "{said}"
    );

    // The workload: one user walks the log's three sessions (three pages
    // each), each as a new visitor, as each student was.
    assert!(
        said.contains("next page: as the log's sessions walked, each taken by a user as a new visitor (no cookies, an empty cache): 3 of the log's 3 sessions"),
        "{said}"
    );
    each_student(&users.join("workload.yaml"), 1, 9, &dir, "run");
    let ours = requests_by_path(&std::fs::read_to_string(&log_path).unwrap(), "headroom/");
    let mut sent = expected;
    sent.remove("/api/seen");
    assert_eq!(ours, sent, "headroom's requests, as nginx logged them");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The requests of the log's lines whose User-Agent holds `agent`, by
/// path without its query (WordPress versions its files in the query).
fn requests_by_file(log: &str, agent: &str) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for (path, n) in requests_by_path(log, agent) {
        let file = path.split('?').next().unwrap_or_default().to_string();
        *counts.entry(file).or_default() += n;
    }
    counts
}

/// Three students in Chromium, told apart by their agents, each through
/// `visits(n)` at `base` reading 1.5 s a page; the server's log at
/// `log_path` copied beside it as students.log. That file, and its text.
fn students_read(
    base: &str,
    log_path: &Path,
    visits: impl Fn(u32) -> Vec<String>,
) -> (std::path::PathBuf, String) {
    for student in 1..=3 {
        let agent = format!("Mozilla/5.0 HeadlessChrome student-{student}");
        let paths = visits(student);
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        chromium_reads_as(base, &paths, 1.5, Some(&agent));
    }
    let browsers = std::fs::read_to_string(log_path).unwrap();
    let copy = log_path.with_file_name("students.log");
    std::fs::write(&copy, &browsers).unwrap();
    (copy, browsers)
}

/// WordPress (Debian's package, Twenty Twenty-Three): three students in
/// Chromium read the front page, a lesson, the front page again and
/// another lesson. The workload `from-log` writes of nginx's log, run as
/// those students, costs nginx the same requests, file by file: the emoji
/// script WordPress's inline script adds, the featured images WordPress
/// marks `loading=lazy`, `/favicon.ico` answered 302 by PHP at every page.
/// Page loads of the same pages without the log differ only by what the
/// script adds, which the log's workload learned.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn wordpress_students_cost_what_the_workload_from_their_log_costs() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        program("mariadb", "mariadb-server"),
        browser(),
    );
    let _guard = serial();
    let dir = temp_dir("script-requests-wordpress");
    let blog = crate::support::wordpress::start(&dir);
    let base = blog.url("");
    let visits = ["/", "/lesson-12-islands/", "/", "/lesson-11-caves/"];
    let log_path = dir.join("access.log");
    let (browser_log, browsers) = students_read(&base, &log_path, |_| {
        visits.iter().map(|v| v.to_string()).collect()
    });
    let theirs = requests_by_file(&browsers, "student-");
    for (file, n) in [
        ("/", 6),
        ("/favicon.ico", 12),
        ("/wp-includes/js/wp-emoji-release.min.js", 3),
        ("/wp-content/uploads/2025/09/lesson-8-mountains.jpg", 3),
        ("/wp-content/uploads/2025/09/lesson-3-deserts.jpg", 3),
    ] {
        assert_eq!(theirs.get(file), Some(&n), "{file}: {theirs:?}");
    }

    let users = dir.join("users");
    let said = workload_from_log(&browser_log, &users, &base, &[]);
    assert!(
        said.contains("page views: the log's cost 4.0 requests each (48 requests, 12 pages seen)"),
        "{said}"
    );
    let workload = std::fs::read_to_string(users.join("workload.yaml")).unwrap();
    assert!(
        workload.contains("/wp-includes/js/wp-emoji-release.min.js"),
        "{workload}"
    );
    std::fs::write(&log_path, "").unwrap();
    each_student(&users.join("workload.yaml"), 1, 12, &dir, "run");
    let served = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(
        requests_by_file(&served, "headroom/"),
        theirs,
        "the workload from the log, as nginx logged it"
    );

    // Without the log: page loads of the same pages miss what the script
    // adds, and only that.
    let journey = visits_journey(&dir, &base, &visits);
    std::fs::write(&log_path, "").unwrap();
    each_student(&journey, 3, 1, &dir, "visits");
    let plain = requests_by_file(&std::fs::read_to_string(&log_path).unwrap(), "headroom/");
    let mut expected = theirs.clone();
    expected.remove("/wp-includes/js/wp-emoji-release.min.js");
    assert_eq!(plain, expected, "page loads without the log");
    drop(blog);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// WordPress again, its students logging in (the log holds no form body):
/// each logs in through the login page, lands on the front page logged in
/// (the admin bar's files with it), reads a lesson and the front page. The
/// workload from nginx's log with `--login` (the login page and its form)
/// walks their sessions, each visit logging in first: it costs nginx the
/// same requests, file by file, the login page sent by the login alone.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn wordpress_students_who_log_in_cost_what_the_workload_from_their_log_costs() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        program("mariadb", "mariadb-server"),
        browser(),
    );
    let _guard = serial();
    let dir = temp_dir("script-requests-wordpress-login");
    let blog = crate::support::wordpress::start(&dir);
    let base = blog.url("");
    let log_path = dir.join("access.log");
    let (browser_log, browsers) = students_read(&base, &log_path, |student| {
        vec![
            format!(
                "form:/wp-login.php?redirect_to=%2F#log=student{student}&pwd=Hr-wp-pass-{student}"
            ),
            "/lesson-12-islands/".to_string(),
            "/".to_string(),
        ]
    });
    let theirs = requests_by_file(&browsers, "student-");
    for (file, n) in [
        ("/wp-login.php", 6),
        ("/", 6),
        ("/wp-includes/css/admin-bar.min.css", 3),
    ] {
        assert_eq!(theirs.get(file), Some(&n), "{file}: {theirs:?}");
    }
    std::fs::write(
        dir.join("students.csv"),
        (1..=3)
            .map(|n| format!("student{n},Hr-wp-pass-{n}\n"))
            .collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        dir.join("login.yaml"),
        "name: log in\ndata:\n  file: students.csv\n  columns: [user, pass]\nsteps:\n\
         \x20 - label: login page\n    path: /wp-login.php?redirect_to=%2F\n    think: 0s\n\
         \x20 - label: login\n    method: POST\n    path: /wp-login.php\n    think: 0s\n\
         \x20   form: {log: \"${user}\", pwd: \"${pass}\", wp-submit: Log In, redirect_to: /, testcookie: \"1\"}\n\
         \x20   check:\n      - {contains: logged-in, name: logged in}\n",
    )
    .unwrap();
    let users = dir.join("users");
    let login = dir.join("login.yaml");
    let said = workload_from_log(
        &browser_log,
        &users,
        &base,
        &["--login", login.to_str().unwrap()],
    );
    assert!(
        said.contains("3 of the log's 3 sessions")
            && said.contains(
                "each visit logs in first, and the login sends its own pages (3 of the visits')"
            ),
        "{said}"
    );
    std::fs::write(&log_path, "").unwrap();
    each_student(&users.join("workload.yaml"), 1, 6, &dir, "run");
    let served = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(
        requests_by_file(&served, "headroom/"),
        theirs,
        "the workload from the log, as nginx logged it"
    );
    drop(blog);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// nginx's combined format, as a `log_format` line.
const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

/// MediaWiki (Debian's package, Vector): its pages load most of their
/// scripts through ResourceLoader's startup script, which asks for the
/// modules each page needs. Three students read the main page, the
/// version page, the main page again and the recent changes; the workload
/// from nginx's log costs the same requests, and what it does not send is
/// named.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn mediawiki_students_cost_what_the_workload_from_their_log_costs() {
    requires!(
        program("nginx", "nginx"),
        program("python3", "python3"),
        program("/usr/share/mediawiki/index.php", "mediawiki"),
        browser(),
    );
    use crate::support::php_site::logging_proxy;
    let _guard = serial();
    let dir = temp_dir("script-requests-mediawiki");
    let wiki = crate::support::mediawiki::start(&dir.join("wiki"));
    let logs = dir.join("proxy");
    let (_nginx, port) = logging_proxy(&logs, wiki.port, COMBINED);
    let base = format!("http://127.0.0.1:{port}");
    let visits = [
        "/index.php?title=Main_Page",
        "/index.php?title=Special:Version",
        "/index.php?title=Main_Page",
        "/index.php?title=Special:RecentChanges",
    ];
    let log_path = logs.join("access.log");
    let (browser_log, browsers) = students_read(&base, &log_path, |_| {
        visits.iter().map(|v| v.to_string()).collect()
    });
    let theirs = requests_by_path(&browsers, "student-");
    let users = dir.join("users");
    let said = workload_from_log(&browser_log, &users, &base, &[]);
    std::fs::write(&log_path, "").unwrap();
    each_student(&users.join("workload.yaml"), 1, 12, &dir, "run");
    let served = std::fs::read_to_string(&log_path).unwrap();
    let ours = requests_by_path(&served, "headroom/");
    assert_eq!(
        ours, theirs,
        "the workload from the log, as nginx logged it"
    );
    assert!(
        said.contains("learned for single pages (in the data file)"),
        "{said}"
    );

    // Without the log: page loads of the same pages send no more than the
    // browsers did, file by file; what they miss is what scripts ask for
    // (the modules, and the images of styles that apply once a script ran).
    let journey = visits_journey(&dir, &base, &visits);
    std::fs::write(&log_path, "").unwrap();
    each_student(&journey, 3, 1, &dir, "visits");
    let plain = requests_by_path(&std::fs::read_to_string(&log_path).unwrap(), "headroom/");
    let mut missing = 0;
    for (path, n) in &theirs {
        let sent = plain.get(path).copied().unwrap_or(0);
        assert!(sent <= *n, "{path}: {sent} sent, Chromium {n}");
        missing += n - sent;
    }
    assert!(plain.keys().all(|p| theirs.contains_key(p)), "{plain:?}");
    eprintln!(
        "page loads without the log: {} of Chromium's {} requests",
        plain.values().sum::<u32>(),
        theirs.values().sum::<u32>()
    );
    assert!(missing > 0);
    drop(_nginx);
    drop(wiki);
    std::fs::remove_dir_all(&dir).unwrap();
}
