//! A page whose resources fail is a failed page (JMeter's default): its
//! errors count in the total, by kind (`resource`), in `--fail-if`, and
//! `scenario try` names each failed resource and exits 1. A resource's
//! redirects are followed as far as a browser follows them, a loop is an
//! error.

use crate::support::{headroom, light, run, stdout_json, temp_dir, text, Reply, TestServer};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages: `/ok` (a style sheet and an image that load), `/fail` (a style
/// sheet answering 404, an image 500, an image answering after the
/// timeout), `/loop` (a script whose redirects come back to it) and
/// `/chain` (a script redirected 30 times in a row).
fn site() -> TestServer {
    TestServer::start(|req| {
        let html = |body: &str| Reply {
            text: Some(format!(
                "<!doctype html><html><head>{body}</head><body></body></html>"
            )),
            headers: vec![("Content-Type".into(), "text/html".into())],
            ..Reply::default()
        };
        let to = |location: String| Reply {
            status: 302,
            headers: vec![("Location".into(), location)],
            ..Reply::default()
        };
        let path = req.path.as_str();
        match path {
            "/ok" => html("<link rel=stylesheet href=/s.css><img src=/i.png>"),
            "/fail" => html(
                "<link rel=stylesheet href=/missing.css><img src=/broken.png><img src=/slow.png>",
            ),
            "/loop" => html("<script src=/r/a.js></script>"),
            "/chain" => html("<script src=/c/0.js></script>"),
            "/missing.css" => Reply {
                status: 404,
                ..Reply::default()
            },
            "/broken.png" => Reply {
                status: 500,
                ..Reply::default()
            },
            "/slow.png" => Reply {
                delay: Duration::from_secs(3),
                ..Reply::default()
            },
            "/r/a.js" => to("/r/b.js".into()),
            "/r/b.js" => to("/r/a.js".into()),
            _ if path.starts_with("/c/") => {
                let n: u32 = path[3..].trim_end_matches(".js").parse().unwrap_or(0);
                to(format!("/c/{}.js", n + 1))
            }
            _ => Reply::default(),
        }
    })
}

fn journey(dir: &Path, server: &TestServer, page: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join(format!("{}.yaml", page.trim_start_matches('/')));
    std::fs::write(
        &file,
        format!(
            "defaults:\n  base_url: {}\n  page_loads: true\n  timeout: 1s\nsteps:\n  - label: p\n    path: {page}\n",
            server.url("")
        ),
    )
    .unwrap();
    file
}

fn once(journey: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        journey.to_str().unwrap(),
        "-c",
        "1",
        "--iterations",
        "2",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn a_page_whose_resources_fail_is_a_failed_page() {
    let _guard = light();
    let server = site();
    let dir = temp_dir("page-failures");
    let failing = journey(&dir, &server, "/fail");
    let out = once(&failing, &["--json"]);
    let summary = stdout_json(&out);
    let total = &summary["total"];
    assert_eq!(total["count"], 2, "{summary}");
    assert_eq!(total["errors"], 2, "both pages failed: {summary}");
    assert_eq!(
        total["errors_by_kind"]["resource"], 2,
        "{}",
        total["errors_by_kind"]
    );
    // The resources' own label keeps what each of them was.
    let resources = &summary["labels"]["p (resources)"];
    assert_eq!(resources["errors_by_kind"]["http_4xx"], 2, "{resources}");
    assert_eq!(resources["errors_by_kind"]["http_5xx"], 2, "{resources}");
    assert_eq!(resources["errors_by_kind"]["timeout"], 2, "{resources}");

    // --fail-if sees them.
    let judged = once(&failing, &["--fail-if", "errors>1%"]);
    assert!(!judged.status.success(), "{}", text(&judged));
    // A page whose resources all load passes the same criterion.
    let fine = once(&journey(&dir, &server, "/ok"), &["--fail-if", "errors>1%"]);
    assert!(fine.status.success(), "{}", text(&fine));

    // scenario try names each failed resource and exits 1.
    let tried = headroom()
        .args(["scenario", "try", failing.to_str().unwrap()])
        .output()
        .unwrap();
    let said = text(&tried);
    assert_eq!(tried.status.code(), Some(1), "{said}");
    for expected in [
        "failed resource: http://127.0.0.1",
        "/missing.css (answered 404)",
        "/broken.png (answered 500)",
        "/slow.png (Timed out",
        // The fourth: /favicon.ico, the page naming no icon (a site
        // without one is no failure of the page).
        "3 of its 4 resource requests failed",
    ] {
        assert!(said.contains(expected), "{expected:?} in:\n{said}");
    }
}

#[test]
fn a_resource_redirect_loop_or_endless_chain_fails_the_page() {
    let _guard = light();
    let server = site();
    let dir = temp_dir("page-redirects");
    let looping = journey(&dir, &server, "/loop");
    let tried = headroom()
        .args(["scenario", "try", looping.to_str().unwrap()])
        .output()
        .unwrap();
    let said = text(&tried);
    assert_eq!(tried.status.code(), Some(1), "{said}");
    assert!(
        said.contains("came back to a URL already in the chain"),
        "{said}"
    );

    let chain = journey(&dir, &server, "/chain");
    let tried = headroom()
        .args(["scenario", "try", chain.to_str().unwrap()])
        .output()
        .unwrap();
    let said = text(&tried);
    assert_eq!(tried.status.code(), Some(1), "{said}");
    assert!(said.contains("more than 20 redirects"), "{said}");
    // The script and its 20 redirects, as Chromium fetches them: not
    // 2,000; and /favicon.ico, the page naming no icon.
    assert!(said.contains("page: 22 resource requests"), "{said}");
}
