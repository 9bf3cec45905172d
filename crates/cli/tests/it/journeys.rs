//! Journeys against real applications: `scenario try` (every exchange
//! printed, stops at the first failure and saves its response),
//! `--save-failures` (the first N failed exchanges of each label kept in
//! the bundle and linked from the report), `scenario from-har` (a
//! journey recorded in real Chromium, its tokens correlated, replayed by
//! ten users against the testbed), and the shipped DokuWiki journey
//! against Debian's DokuWiki on nginx + php-fpm.

use crate::support;

use crate::support::site::{serve, sqlite_dataset};
use crate::support::{
    browser, light, program, requires, root, run, stdout_json, temp_dir, text, Reply, TestServer,
};
use std::path::Path;
use std::process::Command;

#[test]
fn scenario_try_shows_every_exchange_and_stops_at_the_first_failure() {
    let _guard = light();
    let (dir, db) = sqlite_dataset("try", "xs");
    let site = serve(&db, &[]);
    let journey = support::site::journey(&db, site.port, &dir);
    let ok = run(&["scenario", "try", journey.to_str().unwrap()]);
    let out = text(&ok).to_lowercase();
    assert_eq!(ok.status.code(), Some(0), "{out}");
    let base = format!("http://127.0.0.1:{}", site.port);
    for expected in [
        format!("post {base}/login/index.php"),
        "form: username=\"student1\" password=*** ".to_string(),
        "logintoken=\"".to_string(),
        "<- 303 see other".to_string(),
        "set-cookie: moodlesession=".to_string(),
        "extract logintoken = \"".to_string(),
        "extract sesskey = \"".to_string(),
        ": ok".to_string(),
        "every check passed".to_string(),
    ] {
        assert!(out.contains(&expected), "missing {expected:?} in\n{out}");
    }
    assert!(!out.contains("failed"), "{out}");

    // A wrong password: the login step's check fails, the rest does not run.
    let data = dir.join("files/users.csv");
    let users = std::fs::read_to_string(&data).unwrap();
    let first = users.lines().next().unwrap();
    let wrong = format!("{},not-the-password\n", first.split(',').next().unwrap());
    std::fs::write(&data, wrong).unwrap();
    let save = dir.join("saved");
    let failed = run(&[
        "scenario",
        "try",
        journey.to_str().unwrap(),
        "-v",
        "--save-dir",
        save.to_str().unwrap(),
    ]);
    let out = text(&failed);
    let lower = out.to_lowercase();
    assert_eq!(failed.status.code(), Some(1), "{out}");
    assert!(out.contains("\nFAILED at step 3 ("), "{out}");
    assert!(out.contains("check '"), "the failed check is named: {out}");
    assert!(
        out.contains("    > Content-Type: application/x-www-form-urlencoded"),
        "-v shows request headers: {out}"
    );
    assert!(
        lower.contains("    < content-type: text/html"),
        "-v shows response headers: {out}"
    );
    assert!(!out.contains("[4]"), "stops at the failed step: {out}");
    let saved: Vec<_> = std::fs::read_dir(&save)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let body = saved
        .iter()
        .find(|p| p.to_string_lossy().ends_with(".body.html"))
        .unwrap_or_else(|| panic!("no body saved: {saved:?}"));
    assert!(
        out.contains(&body.display().to_string()),
        "the path is printed: {out}"
    );
    let page = std::fs::read_to_string(body).unwrap();
    assert!(page.contains("Invalid login"), "{page}");
    let exchange = saved
        .iter()
        .find(|p| p.to_string_lossy().ends_with(".txt"))
        .unwrap();
    let exchange = std::fs::read_to_string(exchange).unwrap();
    assert!(
        exchange.contains("POST /login/index.php HTTP/1.1"),
        "{exchange}"
    );
    assert!(exchange.contains("HTTP/1.1 200 OK"), "{exchange}");
    assert!(
        exchange.contains("password=not-the-password"),
        "the form as sent: {exchange}"
    );

    // Nothing listens: the first step fails with the reason.
    let closed = support::free_port();
    let refused = run(&[
        "scenario",
        "try",
        journey.to_str().unwrap(),
        "--target",
        &format!("http://127.0.0.1:{closed}"),
    ]);
    let out = text(&refused);
    assert!(matches!(refused.status.code(), Some(1) | Some(3)), "{out}");
    assert!(out.to_lowercase().contains("refused"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn index(bundle: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(bundle.join("failures/index.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn save_failures_keeps_exactly_n_per_label_and_the_report_links_them() {
    let _guard = light();
    let server = TestServer::start(|req| {
        if req.path.starts_with("/a") {
            Reply {
                status: 500,
                text: Some(format!("boom {}", req.number)),
                ..Reply::default()
            }
        } else {
            Reply {
                text: Some("<p>welcome</p>".into()),
                headers: vec![("Content-Type".into(), "text/html".into())],
                ..Reply::default()
            }
        }
    });
    let dir = temp_dir("save-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!(
            "defaults:\n  base_url: http://{}\nsteps:\n  - label: a\n    path: /a\n  - label: b page\n    path: /b\n    check:\n      - contains: logged in\n",
            server.addr
        ),
    )
    .unwrap();
    let bundle = dir.join("bundle");
    let out = run(&[
        "run",
        scenario.to_str().unwrap(),
        "-c",
        "2",
        "--iterations",
        "10",
        "--save-failures",
        "3",
        "--quiet",
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let kept = index(&bundle);
    let of = |label: &str| kept.iter().filter(|e| e["label"] == label).count();
    assert_eq!((of("a"), of("b page"), kept.len()), (3, 3, 6), "{kept:?}");
    let a = kept.iter().find(|e| e["label"] == "a").unwrap();
    assert_eq!(a["status"], 500);
    assert_eq!(a["error"], "http_5xx");
    let body = std::fs::read_to_string(bundle.join(a["body"].as_str().unwrap())).unwrap();
    assert!(body.starts_with("boom "), "{body}");
    let b = kept.iter().find(|e| e["label"] == "b page").unwrap();
    assert_eq!(b["check"], "contains \"logged in\"");
    let exchange = std::fs::read_to_string(bundle.join(b["exchange"].as_str().unwrap())).unwrap();
    assert!(
        exchange.starts_with("# b page — check failed: contains \"logged in\""),
        "{exchange}"
    );
    assert!(exchange.contains("GET /b HTTP/1.1"), "{exchange}");
    assert!(
        exchange.contains("<p>welcome</p>") || bundle.join(b["body"].as_str().unwrap()).exists()
    );
    let manifest = support::manifest(&bundle);
    assert_eq!(manifest["files"]["failures"], "failures/index.jsonl");
    assert_eq!(manifest["save_failures"], 3);

    // The report's error section links each kept failure.
    let report = run(&["report", bundle.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(html.contains("<h3>Failed exchanges kept</h3>"), "report");
    assert!(
        html.contains("href=\"failures/0001-"),
        "links are relative to the bundle"
    );
    let elsewhere = dir.join("elsewhere.html");
    let report = run(&[
        "report",
        bundle.to_str().unwrap(),
        "-o",
        elsewhere.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(&elsewhere).unwrap();
    let canonical = std::fs::canonicalize(&bundle).unwrap();
    assert!(
        html.contains(&format!("href=\"{}/failures/0001-", canonical.display())),
        "a report elsewhere links by the bundle's path"
    );

    // 0 keeps none; a URL run keeps 5 by default, with the error body.
    let none = dir.join("none");
    let out = run(&[
        "run",
        scenario.to_str().unwrap(),
        "--iterations",
        "3",
        "--save-failures",
        "0",
        "--quiet",
        "--out",
        none.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!none.join("failures").exists());
    assert_eq!(
        support::manifest(&none)["files"]["failures"],
        serde_json::Value::Null
    );
    let url = dir.join("url");
    let out = run(&[
        "load",
        &format!("http://{}/a", server.addr),
        "-n",
        "40",
        "-c",
        "2",
        "--json",
        "--out",
        url.to_str().unwrap(),
    ]);
    assert_eq!(stdout_json(&out)["total"]["errors"], 40, "{}", text(&out));
    let kept = index(&url);
    assert_eq!(kept.len(), 5, "{kept:?}");
    let report = run(&["report", url.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(url.join("report.html")).unwrap();
    assert!(
        html.contains("<h3>Failed exchanges kept</h3>"),
        "one label, still listed"
    );
    let body = std::fs::read_to_string(url.join(kept[0]["body"].as_str().unwrap())).unwrap();
    assert!(body.starts_with("boom "), "{body}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_journey_recorded_in_chromium_runs_for_ten_users_with_its_tokens_correlated() {
    requires!(program("python3", "python3"), browser());
    let _guard = light();
    // Size S: 100 accounts, so the 30 logins are 30 different users.
    let (dir, db) = sqlite_dataset("har", "s");
    let site = serve(&db, &[]);
    let base = format!("http://127.0.0.1:{}", site.port);
    let accounts = dir.join("files/users.csv");
    let first = std::fs::read_to_string(&accounts).unwrap();
    let (user, password) = first.lines().next().unwrap().split_once(',').unwrap();
    let har = dir.join("recording.har");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/record_har.py");
    let recorded = Command::new("python3")
        .arg(&script)
        .args([&base, user, password, har.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{}", text(&recorded));

    let journey = dir.join("journey.yaml");
    let imported = run(&[
        "scenario",
        "from-har",
        har.to_str().unwrap(),
        "--data",
        accounts.to_str().unwrap(),
        "-o",
        journey.to_str().unwrap(),
    ]);
    let said = text(&imported);
    assert_eq!(imported.status.code(), Some(0), "{said}");
    for expected in [
        "correlated: logintoken from step",
        "correlated: sesskey from step",
        "correlated: message_itemid from step",
        "typed: username (field username), password (field password)",
    ] {
        assert!(said.contains(expected), "missing {expected:?}:\n{said}");
    }
    let yaml = std::fs::read_to_string(&journey).unwrap();
    assert!(yaml.contains("\"${logintoken}\""), "{yaml}");
    assert!(
        yaml.contains("\"sesskey\": \"${sesskey}\""),
        "the logout link's sesskey: {yaml}"
    );
    assert!(
        !yaml.contains(password),
        "the password is a data column: {yaml}"
    );
    let check = run(&["scenario", "check", journey.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));

    let before = support::site::stats(site.port);
    let bundle = dir.join("bundle");
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "-c",
        "10",
        "--iterations",
        "3",
        "--json",
        "--out",
        bundle.to_str().unwrap(),
    ]);
    let json = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json["total"]["errors"], 0, "{}", json["total"]);
    let after = support::site::stats(site.port);
    let delta = |k: &str| after[k].as_u64().unwrap() - before[k].as_u64().unwrap();
    assert_eq!(delta("logins"), 30, "{before} {after}");
    assert_eq!(delta("posts"), 30, "{before} {after}");
    // One account a journey (the CSV's first 30 rows; the first is also the
    // recording's): the session key and login token were read, not replayed.
    assert_eq!(after["login_users"], 30, "{after}");
    assert_eq!(after["post_users"], 30, "{after}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn recordings_that_are_not_journeys_are_clear_errors() {
    let dir = temp_dir("har-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &str); 4] = [
        ("{", "not valid JSON"),
        ("{\"log\": {}}", "no log.entries"),
        ("{\"log\": {\"entries\": []}}", "no requests"),
        (
            "{\"log\": {\"entries\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://a/x.css\"}, \"response\": {\"status\": 200, \"content\": {\"mimeType\": \"text/css\"}}}]}}",
            "no page request",
        ),
    ];
    for (content, expected) in cases {
        let path = dir.join("bad.har");
        std::fs::write(&path, content).unwrap();
        let out = run(&["scenario", "from-har", path.to_str().unwrap()]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains(expected), "{expected}: {said}");
        assert!(!said.contains("panicked"), "{said}");
    }
    let missing = run(&[
        "scenario",
        "from-har",
        dir.join("none.har").to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing).contains("cannot read"), "{}", text(&missing));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_tokens_cookies_and_page_text_are_correlated_and_untraced_ones_reported() {
    let dir = temp_dir("har-json");
    std::fs::create_dir_all(&dir).unwrap();
    let entry = |t: &str,
                 method: &str,
                 url: &str,
                 post: serde_json::Value,
                 status: u16,
                 headers: serde_json::Value,
                 mime: &str,
                 body: &str| {
        serde_json::json!({
            "startedDateTime": t, "time": 20,
            "request": {"method": method, "url": url, "headers": [], "postData": post},
            "response": {"status": status, "headers": headers, "content": {"mimeType": mime, "text": body}},
            "_resourceType": "fetch",
        })
    };
    let har = serde_json::json!({"log": {"entries": [
        entry("2026-11-23T10:00:00.000Z", "GET", "http://app.test/api/session", serde_json::Value::Null, 200,
              serde_json::json!([{"name": "Set-Cookie", "value": "csrf=Zx81Kq73Lm; Path=/"}]),
              "application/json", r#"{"data": {"token": "tok9f8e7d6c5b4a"}}"#),
        entry("2026-11-23T10:00:02.000Z", "GET", "http://app.test/page", serde_json::Value::Null, 200,
              serde_json::json!([]), "text/html", "<script>var edit = \"e7Q2w9R4t1\";</script>"),
        entry("2026-11-23T10:00:03.500Z", "POST", "http://app.test/api/save",
              serde_json::json!({"mimeType": "application/json", "text": r#"{"token": "tok9f8e7d6c5b4a", "edit": "e7Q2w9R4t1", "nonce": "n0nce12345ab", "title": "cost ${x}"}"#}),
              200, serde_json::json!([]), "application/json", "{}"),
        entry("2026-11-23T10:00:04.000Z", "POST", "http://app.test/api/form",
              serde_json::json!({"mimeType": "application/x-www-form-urlencoded", "text": "csrf=Zx81Kq73Lm&x=1&y=%24%7Bnot_a_var%7D"}),
              200, serde_json::json!([]), "text/html", "ok"),
        entry("2026-11-23T10:00:04.500Z", "POST", "http://app.test/api/login",
              serde_json::json!({"mimeType": "application/json", "text": r#"{"username": "erin", "password": "pw-erin-2"}"#}),
              200, serde_json::json!([]), "application/json", r#"{"jwt": "eyJhbGciOiJIUzI1NiJ9.e30.sig123"}"#),
        serde_json::json!({
            "startedDateTime": "2026-11-23T10:00:05.000Z", "time": 20,
            "request": {"method": "GET", "url": "http://app.test/api/me?q=%24%7Bz%7D", "headers": [
                {"name": "Authorization", "value": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig123"},
                {"name": "X-Note", "value": "${literal}"}]},
            "response": {"status": 200, "headers": [], "content": {"mimeType": "application/json", "text": "{}"}},
            "_resourceType": "fetch",
        }),
    ]}});
    let path = dir.join("api.har");
    std::fs::write(&path, har.to_string()).unwrap();
    let file = dir.join("api.yaml");
    let out = run(&[
        "scenario",
        "from-har",
        path.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let yaml = std::fs::read_to_string(&file).unwrap();
    // A login sent as JSON: the account is data; the token it answered is
    // read from the answer and sent as the Authorization header's credentials.
    assert!(
        said.contains("typed: username (field username), password (field password)"),
        "{said}"
    );
    assert!(!yaml.contains("pw-erin-2"), "{yaml}");
    assert!(
        yaml.contains(r#""Authorization": "Bearer ${jwt}""#),
        "{yaml}"
    );
    assert!(std::fs::read_to_string(dir.join("api-users.csv"))
        .unwrap()
        .contains("erin,pw-erin-2"));
    // Recorded `${` in a form, a query and a header stay literal.
    assert!(yaml.contains(r#""y": "$${not_a_var}""#), "{yaml}");
    assert!(yaml.contains(r#""q": "$${z}""#), "{yaml}");
    assert!(yaml.contains(r#""X-Note": "$${literal}""#), "{yaml}");
    // The recording is never overwritten.
    let same = run(&[
        "scenario",
        "from-har",
        path.to_str().unwrap(),
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_eq!(same.status.code(), Some(2), "{}", text(&same));
    assert!(std::fs::read_to_string(&path).unwrap().contains("log"));
    assert!(
        said.contains("correlated: token from step 01 (JSON /data/token), sent by step 03"),
        "{said}"
    );
    assert!(
        said.contains("correlated: edit from step 02 (text of the page)"),
        "{said}"
    );
    assert!(
        said.contains("correlated: csrf from step 01 (cookie csrf), sent by step 04"),
        "{said}"
    );
    assert!(
        said.contains("not correlated: step 03 JSON /nonce = \"n0nce12345ab\""),
        "{said}"
    );
    assert!(yaml.contains(r#""token": "${token}""#), "{yaml}");
    assert!(
        yaml.contains(r#""title": "cost $${x}""#),
        "a recorded ${{ stays literal: {yaml}"
    );
    assert!(yaml.contains("think: 1.5s"), "the recorded pause: {yaml}");
    let check = run(&["scenario", "check", file.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_shipped_dokuwiki_journey_logs_in_edits_and_logs_out_without_errors() {
    requires!(
        root(),
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("/usr/share/dokuwiki/doku.php", "dokuwiki"),
    );
    let _guard = light();
    let dir = temp_dir("dokuwiki");
    let _ = std::fs::remove_dir_all(&dir);
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let accounts = support::dokuwiki::scenario_accounts();
    let wiki = support::dokuwiki::start(&dir, &accounts);
    let target = format!("http://127.0.0.1:{}", wiki.port);
    let journey = scenarios.join("dokuwiki.yaml");
    let tried = run(&[
        "scenario",
        "try",
        journey.to_str().unwrap(),
        "--target",
        &target,
    ]);
    let out = text(&tried);
    assert_eq!(tried.status.code(), Some(0), "{out}");
    // The login form's and the edit form's hidden tokens were read.
    assert!(out.contains("extract sectok = \""), "{out}");
    assert!(out.contains("extract changecheck = \""), "{out}");

    let json = wiki.run_scenario(&target, &dir.join("bundle"), &[], &accounts);
    assert_eq!(
        json["checks"]["extract sectok"]["passes"], 6,
        "{}",
        json["checks"]
    );
    drop(wiki);
    std::fs::remove_dir_all(&dir).unwrap();
}
