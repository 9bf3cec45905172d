//! `headroom run` end to end: scenario journeys against sites started here.

use crate::support::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// What the LMS-like test site counted itself.
#[derive(Default, Debug)]
struct SiteCounters {
    logins: u64,
    failed_logins: u64,
    posts: u64,
    forbidden: u64,
    users_logged_in: HashSet<String>,
}

#[derive(Default, Clone)]
struct Session {
    user: Option<String>,
    logintoken: String,
    sesskey: String,
}

/// A small Moodle-shaped site: a login form with a hidden token, a session
/// cookie, pages that need a logged-in session (403 otherwise), a reply
/// form with hidden sesskey/userid/itemid/attachments, and a POST that
/// needs the session's sesskey. Users are studentN / Secret-N!.
fn lms_site() -> (TestServer, Arc<Mutex<SiteCounters>>) {
    let counters = Arc::new(Mutex::new(SiteCounters::default()));
    let sessions: Arc<Mutex<HashMap<String, Session>>> = Arc::new(Mutex::new(HashMap::new()));
    let next_id = Arc::new(Mutex::new(0u64));
    let c = counters.clone();
    let server = TestServer::start(move |r| {
        let mut sessions = sessions.lock().unwrap();
        let mut set_cookie = None;
        let id = match r
            .cookie("MoodleSession")
            .filter(|id| sessions.contains_key(id))
        {
            Some(id) => id,
            None => {
                let mut n = next_id.lock().unwrap();
                *n += 1;
                let id = format!("s{n}");
                sessions.insert(id.clone(), Session::default());
                set_cookie = Some(format!("MoodleSession={id}; path=/; HttpOnly"));
                id
            }
        };
        let session = sessions.get_mut(&id).unwrap();
        let html = |text: String| Reply {
            text: Some(format!("<html><body>{text}</body></html>")),
            ..Reply::default()
        };
        let mut reply = match (r.method.as_str(), r.route()) {
            ("GET", "/") => match &session.user {
                Some(user) => html(format!("<p>You are logged in as {user}</p>")),
                None => html("<p>You are not logged in. <a href=\"/login/index.php\">Log in</a></p>".into()),
            },
            ("GET", "/login/index.php") => {
                session.logintoken = format!("tok{}", r.number);
                html(format!(
                    "<form method=post><input type=\"hidden\" name=\"logintoken\" value=\"{}\"><input name=username><input name=password></form>",
                    session.logintoken
                ))
            }
            ("POST", "/login/index.php") => {
                let user = r.param("username").unwrap_or_default();
                let number = user.strip_prefix("student").unwrap_or("?");
                let valid = r.param("password").as_deref() == Some(format!("Secret-{number}!").as_str())
                    && r.param("logintoken").as_deref() == Some(session.logintoken.as_str());
                let mut c = c.lock().unwrap();
                if valid {
                    c.logins += 1;
                    c.users_logged_in.insert(user.clone());
                    session.user = Some(user);
                    session.sesskey = format!("key{}", r.number);
                    Reply { status: 303, headers: vec![("Location".into(), "/".into())], text: Some(String::new()), ..Reply::default() }
                } else {
                    c.failed_logins += 1;
                    html("<p>Invalid login, please try again</p>".into())
                }
            }
            ("GET", "/login/logout.php") => {
                if r.param("sesskey").as_deref() == Some(session.sesskey.as_str()) {
                    session.user = None;
                }
                Reply { status: 303, headers: vec![("Location".into(), "/".into())], text: Some(String::new()), ..Reply::default() }
            }
            (method, route) if session.user.is_none() => {
                let _ = (method, route);
                c.lock().unwrap().forbidden += 1;
                Reply { status: 403, text: Some("Forbidden: log in first".into()), ..Reply::default() }
            }
            ("GET", "/mod/forum/post.php") => html(format!(
                "<form method=post><input type=hidden name=userid value=\"7\"><input type=hidden name=sesskey value=\"{}\">\
                 <input type=hidden name=attachments value=\"99\"><input type=hidden name=\"message[itemid]\" value=\"123\"></form>",
                session.sesskey
            )),
            ("POST", "/mod/forum/post.php") => {
                if r.param("sesskey").as_deref() == Some(session.sesskey.as_str()) && r.param("message[itemid]").as_deref() == Some("123") {
                    c.lock().unwrap().posts += 1;
                    Reply { status: 303, headers: vec![("Location".into(), "/mod/forum/discuss.php?d=1".into())], text: Some(String::new()), ..Reply::default() }
                } else {
                    c.lock().unwrap().forbidden += 1;
                    Reply { status: 403, text: Some("Invalid sesskey".into()), ..Reply::default() }
                }
            }
            ("GET", _) => html(format!("<h1>{}</h1><a href=\"/mod/page/view.php?id=3\">Page</a>", r.route())),
            _ => Reply { status: 405, ..Reply::default() },
        };
        if let Some(cookie) = set_cookie {
            reply.headers.push(("Set-Cookie".into(), cookie));
        }
        reply
    });
    (server, counters)
}

/// Runs a scenario file against `server` with extra flags, expecting exit 0.
fn run_scenario(name: &str, file: &Path, server: &TestServer, extra: &[&str]) -> serde_json::Value {
    let url = server.url("/");
    let mut args = vec!["run", file.to_str().unwrap(), "--target", &url];
    args.extend_from_slice(extra);
    run_json(name, &args)
}

/// The shipped Moodle journey for 5 users, 2 iterations each, without its
/// 180/min cap: every user logs in with its own CSV line, and the site's
/// own counters agree with headroom's.
#[test]
fn moodle_journey_logs_users_in_and_posts() {
    let _guard = light();
    let (server, counters) = lms_site();
    let json = run_scenario(
        "moodle",
        &repo_file("scenarios/moodle.yaml"),
        &server,
        &["-c", "5", "--iterations", "2", "--throughput", "100000/min"],
    );
    let site = counters.lock().unwrap();
    assert_eq!(site.logins, 10, "{site:?}");
    assert_eq!(site.failed_logins, 0);
    assert_eq!(site.posts, 10);
    assert_eq!(site.forbidden, 0);
    // The shared cursor hands out lines 1..10 of the CSV: ten different users.
    assert_eq!(site.users_logged_in.len(), 10, "{:?}", site.users_logged_in);
    let labels = &json["labels"];
    assert_eq!(labels["03 login"]["count"], 10);
    assert_eq!(labels["03 login"]["errors"], 0);
    assert_eq!(labels["11 post reply"]["count"], 10);
    assert_eq!(labels["11 post reply"]["errors"], 0);
    assert_eq!(json["checks"]["logged in"]["passes"], 10);
    assert_eq!(json["checks"]["logged in"]["failures"], 0);
    assert_eq!(json["checks"]["extract sesskey"]["passes"], 10);
    // 14 requests per journey; the group is reported but not counted in the total.
    assert_eq!(labels["whole journey"]["count"], 10);
    assert_eq!(json["total"]["count"], 140);
    assert_eq!(
        json["total"]["errors"], 0,
        "{}",
        json["total"]["errors_by_kind"]
    );
}

/// A users file with the wrong passwords: the login check fails by name,
/// the site counts failed logins, and the pages behind the login answer 403.
#[test]
fn wrong_passwords_fail_the_named_check() {
    let _guard = light();
    let (server, counters) = lms_site();
    let dir = temp_dir("wrong-passwords");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("moodle-users.csv"),
        "student1,wrong\nstudent2,wrong\nstudent3,wrong\n",
    )
    .unwrap();
    let scenario = dir.join("moodle.yaml");
    std::fs::copy(repo_file("scenarios/moodle.yaml"), &scenario).unwrap();
    let out = temp_dir("wrong-passwords-run");
    let url = server.url("/");
    let output = run(&[
        "run",
        scenario.to_str().unwrap(),
        "--target",
        &url,
        "-c",
        "3",
        "--iterations",
        "1",
        "--throughput",
        "100000/min",
        "--jtl",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let site = counters.lock().unwrap();
    assert_eq!((site.logins, site.failed_logins), (0, 3), "{site:?}");
    assert_eq!(json["checks"]["logged in"]["failures"], 3);
    assert_eq!(json["labels"]["03 login"]["errors_by_kind"]["check"], 3);
    assert!(
        json["labels"]["05 course view"]["errors_by_kind"]["http_4xx"]
            .as_u64()
            .unwrap()
            == 3
    );
    assert_eq!(
        site.forbidden,
        json["total"]["errors_by_kind"]["http_4xx"]
            .as_u64()
            .unwrap(),
        "the site's 403s = headroom's 4xx"
    );
    // The JTL names the failed check as the failure message.
    let jtl = std::fs::read_to_string(out.join("samples.jtl")).unwrap();
    let failed_logins = jtl
        .lines()
        .filter(|l| l.contains(",03 login,") && l.contains(",false,logged in,"))
        .count();
    assert_eq!(failed_logins, 3, "{jtl}");
    drop(site); // the site's handler needs this lock for the next run
    let text = run(&[
        "run",
        scenario.to_str().unwrap(),
        "--target",
        &url,
        "-c",
        "1",
        "--iterations",
        "1",
        "--throughput",
        "100000/min",
        "--out",
        temp_dir("wrong-passwords-text").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("logged in") && stdout.contains("1 failed"),
        "checks listed by name: {stdout}"
    );
}

/// A server with fixed delays per path.
fn timed_site() -> TestServer {
    TestServer::start(|r| {
        let ms = match r.route() {
            "/a" => 50,
            "/b" => 100,
            _ => 0,
        };
        Reply {
            delay: Duration::from_millis(ms),
            ..Reply::default()
        }
    })
}

fn write_scenario(name: &str, text: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Group time = the sum of its steps' response times; think time counts
/// only with include_think (JMeter's Transaction Controller "include timers").
#[test]
fn group_time_is_the_sum_of_its_steps() {
    let _guard = light();
    let server = timed_site();
    for (include, think_ms) in [(false, 0.0), (true, 2.0 * 200.0)] {
        let file = write_scenario(
            &format!("group-{include}"),
            &format!(
                "think: 200ms\nsteps:\n  - group: both\n    include_think: {include}\n    steps:\n      - label: a\n        path: /a\n      - label: b\n        path: /b\n"
            ),
        );
        let json = run_scenario(
            &format!("group-run-{include}"),
            &file,
            &server,
            &["-c", "2", "--iterations", "3"],
        );
        let labels = &json["labels"];
        assert_eq!(labels["both"]["count"], 6);
        let sum = ms(&labels["a"]["mean_ms"]) + ms(&labels["b"]["mean_ms"]) + think_ms;
        let group = ms(&labels["both"]["mean_ms"]);
        // Histogram precision (0.1%) is the only difference.
        assert!(
            (group - sum).abs() <= sum * 0.002 + 0.1,
            "group {group} ms vs steps {sum} ms (include_think {include})"
        );
        assert_eq!(json["total"]["count"], 12, "groups are not requests");
    }
}

/// Requests per route, to see which steps ran.
fn counting_site() -> (TestServer, Arc<Mutex<HashMap<String, u64>>>) {
    let hits: Arc<Mutex<HashMap<String, u64>>> = Arc::new(Mutex::new(HashMap::new()));
    let h = hits.clone();
    let server = TestServer::start(move |r| {
        let key = if r.route() == "/check" {
            format!("/check cookie={}", r.cookie("visit").is_some())
        } else if let Some(user) = r.param("u") {
            format!("{} u={user}", r.route())
        } else {
            r.route().to_string()
        };
        *h.lock().unwrap().entry(key).or_default() += 1;
        let mut reply = Reply {
            text: Some("flag=on".into()),
            ..Reply::default()
        };
        if r.route() == "/set" {
            reply
                .headers
                .push(("Set-Cookie".into(), "visit=1; path=/".into()));
        }
        reply
    });
    (server, hits)
}

#[test]
fn once_loop_and_if_control_the_flow() {
    let _guard = light();
    let (server, hits) = counting_site();
    let file = write_scenario(
        "flow",
        r#"
variables:
  yes: "yes"
  no: ""
steps:
  - label: first iteration only
    path: /once
    once: true
    extract:
      - name: flag
        regex: 'flag=(\w+)'
  - loop: 3
    steps:
      - label: looped
        path: /loop
  - label: if equals
    path: /if-equals
    if: {var: yes, equals: "yes"}
  - label: if not set
    path: /if-not-set
    if: {var: no, set: false}
  - label: if set (never)
    path: /if-set
    if: {var: no, set: true}
  - label: if matches extracted
    path: /if-matches
    if: {var: flag, matches: '^on$'}
"#,
    );
    run_scenario(
        "flow-run",
        &file,
        &server,
        &["-c", "1", "--iterations", "2"],
    );
    let hits = hits.lock().unwrap();
    let count = |k: &str| hits.get(k).copied().unwrap_or(0);
    assert_eq!(count("/once"), 1, "{hits:?}");
    assert_eq!(count("/loop"), 6);
    assert_eq!(count("/if-equals"), 2);
    assert_eq!(count("/if-not-set"), 2);
    assert_eq!(count("/if-set"), 0);
    assert_eq!(
        count("/if-matches"),
        2,
        "the value extracted in iteration 1 stays set"
    );
}

#[test]
fn cookies_are_cleared_each_iteration_when_asked() {
    let _guard = light();
    for (policy, with_cookie) in [("clear_each_iteration", 2), ("keep", 3)] {
        let (server, hits) = counting_site();
        let file = write_scenario(
            &format!("cookies-{policy}"),
            &format!("cookies: {policy}\nsteps:\n  - label: check\n    path: /check\n  - label: set\n    path: /set\n  - label: check again\n    path: /check\n"),
        );
        run_scenario(
            &format!("cookies-run-{policy}"),
            &file,
            &server,
            &["-c", "1", "--iterations", "2"],
        );
        let hits = hits.lock().unwrap();
        assert_eq!(
            hits.get("/check cookie=true").copied().unwrap_or(0),
            with_cookie,
            "{policy}: {hits:?}"
        );
        assert_eq!(
            hits.get("/check cookie=false").copied().unwrap_or(0),
            4 - with_cookie,
            "{policy}"
        );
    }
}

#[test]
fn csv_data_recycles_or_stops() {
    let _guard = light();
    for (on_end, expected) in [
        ("recycle", vec![("a", 2), ("b", 2), ("c", 1)]),
        ("stop", vec![("a", 1), ("b", 1), ("c", 1)]),
    ] {
        let (server, hits) = counting_site();
        let file = write_scenario(
            &format!("csv-{on_end}"),
            &format!("data:\n  file: users.csv\n  columns: [user]\n  on_end: {on_end}\nsteps:\n  - label: visit\n    path: /visit?u=${{user}}\n"),
        );
        std::fs::write(file.parent().unwrap().join("users.csv"), "a\nb\nc\n").unwrap();
        let json = run_scenario(
            &format!("csv-run-{on_end}"),
            &file,
            &server,
            &["-c", "1", "--iterations", "5"],
        );
        let hits = hits.lock().unwrap();
        for (user, n) in &expected {
            assert_eq!(
                hits.get(&format!("/visit u={user}")).copied().unwrap_or(0),
                *n,
                "{on_end}: {hits:?}"
            );
        }
        let total: u64 = expected.iter().map(|(_, n)| n).sum();
        assert_eq!(json["total"]["count"], total);
    }
}

/// `visits:` in the data: each user takes a whole visit's rows in order, as
/// a new visitor (no cookie kept from its visit before; `once:` steps run
/// again); two users take the visits between them, none twice.
#[test]
fn a_data_visit_is_taken_whole_by_one_new_visitor() {
    let _guard = light();
    // Each request with its visitor's cookie; a request without one is
    // given a new visitor number.
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::new(Mutex::new(Vec::new()));
    let next = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let log = seen.clone();
    let server = TestServer::start(move |r| {
        let mut reply = Reply::default();
        let visitor = match r.cookie("uid") {
            Some(uid) => uid.to_string(),
            None => {
                let uid = next
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    .to_string();
                reply
                    .headers
                    .push(("Set-Cookie".into(), format!("uid={uid}; path=/")));
                uid
            }
        };
        let page = r.param("p").unwrap_or_else(|| r.route().to_string());
        log.lock().unwrap().push((visitor, page));
        reply
    });
    let file = write_scenario(
        "visits",
        "data:\n  file: visits.csv\n  columns: [visit, page]\n  on_end: stop\n  visits: visit\nsteps:\n  - label: arrive\n    path: /arrive\n    once: true\n  - label: page\n    path: /page?p=${page}\n",
    );
    std::fs::write(
        file.parent().unwrap().join("visits.csv"),
        "1,a\n1,b\n1,c\n2,d\n3,e\n3,f\n4,g\n4,h\n4,i\n4,j\n",
    )
    .unwrap();
    let walks = |seen: &[(String, String)]| {
        let mut by_visitor: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (visitor, page) in seen {
            by_visitor.entry(visitor).or_default().push(page);
        }
        let mut walks: Vec<String> = by_visitor.values().map(|pages| pages.join(" ")).collect();
        walks.sort();
        walks
    };
    let visits = [
        "/arrive a b c",
        "/arrive d",
        "/arrive e f",
        "/arrive g h i j",
    ];
    let json = run_scenario("visits-run", &file, &server, &["-c", "2"]);
    assert_eq!(walks(&seen.lock().unwrap()), visits);
    assert_eq!(json["total"]["count"], 14);
    // Arrivals that each run the journey once walk a whole visit each.
    seen.lock().unwrap().clear();
    run_scenario(
        "visits-arrivals",
        &file,
        &server,
        &["--rate", "20/s", "--session", "once", "-d", "1s"],
    );
    assert_eq!(walks(&seen.lock().unwrap()), visits);
    // Refused: a column the data does not have.
    let wrong = write_scenario(
        "visits-wrong",
        "data:\n  file: visits.csv\n  columns: [visit, page]\n  visits: session\nsteps:\n  - label: page\n    path: /page?p=${page}\n",
    );
    std::fs::write(wrong.parent().unwrap().join("visits.csv"), "1,a\n").unwrap();
    let output = run(&["scenario", "check", wrong.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && text.contains("'session' is not one of the data's columns"),
        "{text}"
    );
}

/// Stages: a rate that ramps 0 -> 20/s over 2 s and holds 2 s sends exactly
/// 20 + 40 = 60 requests; users that ramp 0 -> 4 peak at 4.
#[test]
fn stages_ramp_rate_and_users() {
    let _guard = light();
    let server = TestServer::start(|_| Reply::default());
    let rate = write_scenario(
        "stages-rate",
        "profile:\n  stages:\n    - {duration: 2s, rate: 20/s}\n    - {duration: 2s, rate: 20/s}\nsteps:\n  - label: a\n    path: /a\n",
    );
    let json = run_scenario("stages-rate-run", &rate, &server, &[]);
    // 0 to 20/s over 2 s (20 arrivals), then 20/s for 2 s (40): the last
    // is due at 3.95 s. On a busy machine it may be answered after the
    // run's 4 s, or not at all, and is then counted apart, as wrk would
    // leave it out; it was still sent.
    let unanswered = ["abandoned", "late"]
        .iter()
        .map(|k| json["requests"][k].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert_eq!(
        json["total"]["count"].as_u64().unwrap() + unanswered,
        60,
        "{}",
        json["requests"]
    );
    assert!(unanswered <= 1, "{}", json["requests"]);
    let users = write_scenario(
        "stages-users",
        "think: 100ms\nprofile:\n  stages:\n    - {duration: 2s, users: 4}\n    - {duration: 2s, users: 4}\n    - {duration: 1s, users: 0}\nsteps:\n  - label: a\n    path: /a\n",
    );
    let out = temp_dir("stages-users-run");
    let url = server.url("/");
    let output = run(&[
        "run",
        users.to_str().unwrap(),
        "--target",
        &url,
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    assert_eq!(stdout_json(&output)["peak_vus"], 4);
    let per_second = interval_totals(&out);
    assert!(
        per_second[0].1 < per_second[2].1,
        "users ramp up: {per_second:?}"
    );
    assert!(
        per_second[4].1 < per_second[3].1,
        "and down: {per_second:?}"
    );
}

/// A per-VU cursor: every VU reads the file from its first line.
#[test]
fn csv_cursor_per_vu() {
    let _guard = light();
    let (server, hits) = counting_site();
    let file = write_scenario(
        "csv-per-vu",
        "data:\n  file: users.csv\n  columns: [user]\n  share: vu\nsteps:\n  - label: visit\n    path: /visit?u=${user}\n",
    );
    std::fs::write(file.parent().unwrap().join("users.csv"), "a\nb\nc\n").unwrap();
    run_scenario(
        "csv-per-vu-run",
        &file,
        &server,
        &["-c", "3", "--iterations", "2"],
    );
    let hits = hits.lock().unwrap();
    assert_eq!(hits.get("/visit u=a").copied(), Some(3), "{hits:?}");
    assert_eq!(hits.get("/visit u=b").copied(), Some(3));
    assert_eq!(hits.get("/visit u=c").copied(), None);
}

/// A status the step expects is not an error: `status: 404` makes a 404 a
/// success, while a 404 without such a check stays an http_4xx error.
#[test]
fn an_expected_error_status_passes() {
    let _guard = light();
    let server = TestServer::start(|_| Reply {
        status: 404,
        ..Reply::default()
    });
    let file = write_scenario(
        "expected-404",
        "steps:\n  - label: gone\n    path: /gone\n    check:\n      - status: 404\n  - label: unexpected\n    path: /gone\n",
    );
    let json = run_scenario(
        "expected-404-run",
        &file,
        &server,
        &["-c", "1", "--iterations", "3"],
    );
    assert_eq!(json["labels"]["gone"]["errors"], 0);
    assert_eq!(
        json["labels"]["unexpected"]["errors_by_kind"]["http_4xx"],
        3
    );
}

/// `scenario init` prints a file that `scenario check` accepts; a broken
/// file is a usage error naming file:line:column.
/// A variable's value may use the built-ins and the variables above it:
/// rendered again each iteration, never sent as its literal text; an
/// unknown built-in is refused by `scenario check` at its line.
#[test]
fn variables_with_built_ins_are_rendered_each_iteration() {
    let _guard = light();
    let (server, hits) = counting_site();
    let file = write_scenario(
        "variables-built-ins",
        "variables:\n  dice: \"${__random(1,10)}\"\n  roll: \"${dice}-${__iteration}\"\n  literal: \"$${dice}\"\nsteps:\n  - label: roll\n    path: /roll/${roll}\n  - label: literal\n    path: /literal?u=${literal}\n",
    );
    let check = run(&[
        "scenario",
        "check",
        file.to_str().unwrap(),
        "--target",
        "http://127.0.0.1:1",
    ]);
    assert!(check.status.success(), "{}", text(&check));
    let json = run_scenario(
        "variables-run",
        &file,
        &server,
        &["-c", "2", "--iterations", "30"],
    );
    assert_eq!(json["labels"]["roll"]["count"], 60);
    let hits = hits.lock().unwrap();
    let mut dice = HashSet::new();
    for (route, count) in hits.iter().filter(|(r, _)| r.starts_with("/roll/")) {
        let (n, iteration) = route["/roll/".len()..]
            .split_once('-')
            .unwrap_or(("?", "?"));
        let n: u32 = n
            .parse()
            .unwrap_or_else(|_| panic!("{route}: not a number"));
        let iteration: u32 = iteration.parse().unwrap_or_else(|_| panic!("{route}"));
        assert!(
            (1..=10).contains(&n) && (1..=30).contains(&iteration),
            "{route}"
        );
        assert!(*count <= 2, "{route} x{count}");
        dice.insert(n);
    }
    assert!(dice.len() >= 5, "a new number each iteration: {dice:?}");
    assert_eq!(hits.get("/literal u=${dice}"), Some(&60), "{hits:?}");
    drop(hits);
    let bad = write_scenario(
        "variables-unknown",
        "variables:\n  dice: \"${__rnd(1,10)}\"\nsteps:\n  - label: roll\n    path: /roll/${dice}\n",
    );
    let out = run(&[
        "scenario",
        "check",
        bad.to_str().unwrap(),
        "--target",
        "http://127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("scenario.yaml:2:9: a variable's value: unknown built-in '__rnd(1,10)': use __time, __random(LOW,HIGH)"),
        "{}",
        text(&out)
    );
}

#[test]
fn init_output_checks_and_errors_are_located() {
    let init = run(&["scenario", "init"]);
    assert!(init.status.success());
    let dir = temp_dir("init");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("journey.yaml");
    std::fs::write(&file, &init.stdout).unwrap();
    let check = run(&["scenario", "check", file.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(String::from_utf8_lossy(&check.stdout).contains("OK: 4 request steps, 1 group, "));
    for shipped in [
        "scenarios/moodle.yaml",
        "scenarios/browse.yaml",
        "scenarios/dokuwiki-class/class.yaml",
    ] {
        let ok = run(&["scenario", "check", repo_file(shipped).to_str().unwrap()]);
        assert!(
            ok.status.success(),
            "{shipped}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }
    let text = String::from_utf8_lossy(&init.stdout).replace("    path: /\n", "    paht: /\n");
    std::fs::write(&file, text).unwrap();
    let bad = run(&["scenario", "check", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("journey.yaml:34:5: unknown key 'paht'")
            && stderr.contains("did you mean 'path'"),
        "{stderr}"
    );
}

/// `before:` users (JMeter's serialized warm-up group) run to their end
/// before the profile's users start; they read the shared data cursor
/// first, and the profile's duration counts from their end.
#[test]
fn before_users_finish_ahead_of_the_profile() {
    let _guard = light();
    let order: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let server = TestServer::start(move |r| {
        o.lock().unwrap().push(format!(
            "{} {}",
            r.route(),
            r.param("u").unwrap_or_default()
        ));
        Reply {
            delay: Duration::from_millis(if r.route() == "/warm" { 300 } else { 5 }),
            ..Reply::default()
        }
    });
    let file = write_scenario(
        "before",
        r#"
data:
  file: users.csv
  columns: [user]
before:
  name: Warm-up site
  users: 2
  iterations: 2
  steps:
    - label: warm
      path: /warm?u=${user}
steps:
  - label: main
    path: /main?u=${user}
"#,
    );
    let rows: String = (1..=20).map(|i| format!("u{i}\n")).collect();
    std::fs::write(file.with_file_name("users.csv"), rows).unwrap();
    let json = run_scenario(
        "before-run",
        &file,
        &server,
        &["-c", "3", "--iterations", "2"],
    );
    assert_eq!(json["labels"]["warm"]["count"], 4, "{}", json["labels"]);
    assert_eq!(json["labels"]["main"]["count"], 6, "{}", json["labels"]);
    let seen = order.lock().unwrap().clone();
    let (warm, main) = seen.split_at(4);
    assert!(warm.iter().all(|s| s.starts_with("/warm")), "{seen:?}");
    assert!(main.iter().all(|s| s.starts_with("/main")), "{seen:?}");
    let mut warm_users: Vec<&str> = warm.iter().map(|s| &s[6..]).collect();
    warm_users.sort();
    assert_eq!(
        warm_users,
        ["u1", "u2", "u3", "u4"],
        "the cursor's first rows"
    );
    assert!(main.iter().all(|s| !warm.contains(s)), "{seen:?}");

    // With a duration, the profile's users run it whole after the warm-up
    // (two 300 ms rounds), none of their requests cut off.
    order.lock().unwrap().clear();
    let json = run_scenario("before-run-d", &file, &server, &["-c", "2", "-d", "1s"]);
    let main = json["labels"]["main"]["count"].as_u64().unwrap();
    assert!(main > 20, "{}", json["labels"]);
    assert_eq!(json["labels"]["warm"]["count"], 4);
    let seen = order.lock().unwrap().clone();
    assert!(seen[..4].iter().all(|s| s.starts_with("/warm")), "{seen:?}");
    // Only the requests in flight at the end (one per user) go uncounted.
    let uncounted = seen.len() as u64 - 4 - main;
    assert!(uncounted <= 2, "{uncounted} main requests not counted");
}

/// A scenario's own Host, User-Agent or Accept replaces headroom's (never
/// sent twice); checks read the body, the headers (`in: headers`) or the
/// reason phrase (`in: message`), and `not_matches` is a negated regex.
#[test]
fn own_headers_replace_the_defaults_and_checks_read_the_field_asked() {
    let _guard = light();
    type Headers = Vec<(String, String)>;
    let seen: Arc<Mutex<Vec<Headers>>> = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let server = TestServer::start(move |r| {
        s.lock().unwrap().push(r.headers.clone());
        Reply {
            text: Some("all fine, no error 42 here".into()),
            headers: vec![("X-Cache".into(), "HIT".into())],
            ..Reply::default()
        }
    });
    let file = write_scenario(
        "fields",
        r#"
steps:
  - label: own
    path: /
    headers: {Accept: application/json, User-Agent: mine/1, Host: wiki.example}
    check:
      - contains: "X-Cache: HIT"
        in: headers
      - matches: '^OK$'
        in: message
      - not_matches: 'error \d{3}'
      - contains: "X-Cache"
        name: headers are not the body
  - label: defaults
    path: /
    check:
      - matches: '^HTTP/1\.1 200 '
        in: headers
      - not_matches: 'error \d+'
        name: negated regex
"#,
    );
    let json = run_scenario(
        "fields-run",
        &file,
        &server,
        &["-c", "1", "--iterations", "1"],
    );
    let checks = &json["checks"];
    for passing in [
        "headers contains \"X-Cache: HIT\"",
        "message matches /^OK$/",
        "does not match /error \\d{3}/",
        "headers matches /^HTTP/1\\.1 200 /",
    ] {
        assert_eq!(checks[passing]["passes"], 1, "{passing}: {checks}");
    }
    assert_eq!(
        checks["headers are not the body"]["failures"], 1,
        "{checks}"
    );
    assert_eq!(checks["negated regex"]["failures"], 1, "{checks}");
    let seen = seen.lock().unwrap();
    let all = |i: usize, name: &str| -> Vec<String> {
        seen[i]
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .collect()
    };
    assert_eq!(all(0, "accept"), ["application/json"]);
    assert_eq!(all(0, "user-agent"), ["mine/1"]);
    assert_eq!(all(0, "host"), ["wiki.example"]);
    assert_eq!(all(1, "accept"), ["*/*"]);
    assert_eq!(all(1, "host").len(), 1);
    assert!(all(1, "user-agent")[0].starts_with("headroom/"));
}

/// `keep_alive: iteration` opens new connections each iteration (JMeter's
/// default); `true` keeps them for the run; `false` uses one per request.
#[test]
fn connections_per_run_iteration_or_request() {
    let _guard = light();
    let seen: Arc<Mutex<HashSet<u64>>> = Arc::new(Mutex::new(HashSet::new()));
    let s = seen.clone();
    let server = TestServer::start(move |r| {
        s.lock().unwrap().insert(r.connection);
        Reply::default()
    });
    for (keep_alive, connections) in [("true", 1), ("iteration", 3), ("false", 6)] {
        seen.lock().unwrap().clear();
        let file = write_scenario(
            &format!("keep-{keep_alive}"),
            &format!("defaults:\n  keep_alive: {keep_alive}\nsteps:\n  - label: a\n    path: /a\n  - label: b\n    path: /b\n"),
        );
        let json = run_scenario(
            &format!("keep-run-{keep_alive}"),
            &file,
            &server,
            &["-c", "1", "--iterations", "3"],
        );
        assert_eq!(json["total"]["count"], 6);
        assert_eq!(
            seen.lock().unwrap().len(),
            connections,
            "keep_alive: {keep_alive}"
        );
    }
}
