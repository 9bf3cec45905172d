//! The lesson start and the open model's sessions: students who arrive at
//! seeded times, log in once and read; arriving users who are new users
//! (no cookie on their first request) and leave after their session.

use crate::support::raw::{RawConn, RawServer};
use crate::support::{light, manifest, minutes, paced, requires, run, temp_dir, text};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A site whose `/login` gives a new session cookie to a request without
/// one, and whose other pages answer 200.
fn login_site() -> RawServer {
    let sessions = Arc::new(AtomicU64::new(0));
    RawServer::start(move |mut conn: RawConn| {
        while let Some(request) = conn.next_request(Duration::from_secs(5)) {
            if request.target == "/login" && request.header("cookie").is_none() {
                let sid = format!("sid={}; Path=/", sessions.fetch_add(1, Ordering::SeqCst));
                conn.respond("200 OK", &[("Set-Cookie", sid.as_str())], b"welcome");
            } else {
                conn.respond("200 OK", &[], b"a page to read");
            }
        }
    })
}

/// A journey file: log in once, then read (with `think`) under `profile`.
fn journey(name: &str, site: &RawServer, profile: &str, think: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("class.yaml");
    std::fs::write(
        &file,
        format!(
            "name: class\ndefaults:\n  base_url: {}\nprofile:\n{profile}\nsteps:\n  - label: login\n    path: /login\n    once: true\n  - label: read\n    path: /read\n    think: {think}\n",
            site.url("")
        ),
    )
    .unwrap();
    file
}

fn run_ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(output.status.success(), "{}", text(&output));
    String::from_utf8_lossy(&output.stderr).to_string()
}

/// intervals.csv's TOTAL rows: (second, a column's value).
fn total_column(bundle: &Path, column: &str) -> Vec<(u64, u64)> {
    let mut reader = csv::Reader::from_path(bundle.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (second, label, value) = (at("second"), at("label"), at(column));
    reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[label] == "TOTAL")
        .map(|r| (r[second].parse().unwrap(), r[value].parse().unwrap()))
        .collect()
}

/// The session cookie each request carried (`None`: none).
fn cookies(site: &RawServer, target: &str) -> Vec<Option<String>> {
    site.requests()
        .iter()
        .filter(|r| r.target == target)
        .map(|r| r.header("cookie").map(str::to_string))
        .collect()
}

/// 30 students within 6 s (the proof's 30 within 60 s, shortened): the
/// bundle's arrivals per second equal the planned schedule second by
/// second, and each student logs in once.
#[test]
fn thirty_students_arrive_second_by_second_as_planned() {
    let _guard = light();
    let site = login_site();
    let file = journey(
        "lesson-spike",
        &site,
        "  model: lesson\n  students: 30\n  arrive_within: 6s\n  duration: 8s",
        "500ms",
    );
    let out = temp_dir("lesson-spike-bundle");
    let output = run(&[
        "run",
        file.to_str().unwrap(),
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains("lesson: 30 students arrive within 6 s (seed 3), then read until 8s"),
        "{said}"
    );
    // The read's think is its own: no default think, so the arrival phase
    // is the 6 s window.
    assert!(said.contains("arrival     0s–6s    30 arrived,"), "{said}");
    assert!(said.contains("reading     6s–8s    0 arrived,"), "{said}");
    let profile = &manifest(&out)["profile"];
    assert_eq!(profile["model"], "lesson", "{profile}");
    assert_eq!(profile["students"], 30);
    assert_eq!(profile["arrive_within_s"], 6.0);
    let planned: Vec<u64> = profile["arrivals_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(planned.iter().sum::<u64>(), 30);
    assert!(planned.len() <= 6, "{planned:?}");
    let recorded = total_column(&out, "arrivals");
    assert!(recorded.len() >= 7, "{recorded:?}");
    for (second, arrivals) in recorded {
        let expected = planned.get(second as usize).copied().unwrap_or(0);
        assert_eq!(arrivals, expected, "second {second}: {planned:?}");
    }
    // The summary (as --json prints it) judges each phase and holds the
    // recorded arrivals; together the phases are the whole run.
    let summary = &manifest(&out)["summary"];
    let recorded: Vec<u64> = summary["arrivals_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(recorded, planned);
    let phases = summary["phases"].as_array().unwrap();
    let field = |i: usize, key: &str| phases[i][key].clone();
    assert_eq!(
        (field(0, "name"), field(0, "to_s"), field(0, "arrivals")),
        ("arrival".into(), 6.0.into(), 30.into())
    );
    assert_eq!(
        (field(1, "name"), field(1, "arrivals")),
        ("reading".into(), 0.into())
    );
    let count = |i: usize| phases[i]["figures"]["count"].as_u64().unwrap();
    assert_eq!(
        count(0) + count(1),
        summary["total"]["count"].as_u64().unwrap()
    );
    assert!(count(0) >= 30 && count(1) > 0, "{phases:?}");
    let html = out.join("lesson.html");
    let output = run(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h3>Phases</h3>")
            && page.contains("<td>arrival</td><td>0–6</td><td>30</td>")
    );

    // The login is a once: step: one per student, none with a cookie.
    let logins = cookies(&site, "/login");
    assert_eq!(logins.len(), 30);
    assert!(logins.iter().all(Option::is_none), "{logins:?}");
    let readers: std::collections::HashSet<_> = cookies(&site, "/read").into_iter().collect();
    assert_eq!(readers.len(), 30, "{readers:?}");
}

/// `session: once`: each of 30 arrivals is a new user: its login carries
/// no cookie, and 30 distinct sessions read. Without a session the pool's
/// VUs keep their cookies from arrival to arrival.
#[test]
fn with_session_once_each_arrival_is_a_new_user() {
    let _guard = light();
    let site = login_site();
    let file = journey(
        "session-once",
        &site,
        "  model: open\n  rate: 10/s\n  duration: 3s\n  session: once",
        "0s",
    );
    let out = temp_dir("session-once-bundle");
    let said = run_ok(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        said.contains("each arrival a new user who runs the journey once"),
        "{said}"
    );
    assert_eq!(manifest(&out)["profile"]["session"], "once");
    let logins = cookies(&site, "/login");
    assert_eq!(logins.len(), 30, "{logins:?}");
    assert!(logins.iter().all(Option::is_none), "{logins:?}");
    let reads = cookies(&site, "/read");
    let sessions: std::collections::HashSet<_> = reads.iter().collect();
    assert_eq!((reads.len(), sessions.len()), (30, 30), "{reads:?}");
    let arrivals: u64 = total_column(&out, "arrivals").iter().map(|(_, n)| n).sum();
    assert_eq!(arrivals, 30);

    // The same journey without a session: arrivals reuse VUs, and a VU's
    // later login carries the cookie of its first.
    let site = login_site();
    let file = journey(
        "session-none",
        &site,
        "  model: open\n  rate: 10/s\n  duration: 3s",
        "0s",
    );
    run_ok(&["run", file.to_str().unwrap(), "--quiet"]);
    let logins = cookies(&site, "/login");
    assert!(
        logins.iter().filter(|c| c.is_none()).count() < 30,
        "{logins:?}"
    );
}

/// `session: 1s` at 5 arrivals a second: each new user reads for about a
/// second (then leaves), so about 5 users are active at once, not all 20.
#[test]
fn with_a_session_length_users_leave_after_it() {
    let _guard = light();
    let site = login_site();
    let file = journey(
        "session-length",
        &site,
        "  model: open\n  rate: 5/s\n  duration: 4s\n  session: 1s",
        "200ms",
    );
    let out = temp_dir("session-length-bundle");
    let said = run_ok(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(said.contains("about 5 users at once"), "{said}");
    let mut reads_per_user: HashMap<String, u32> = HashMap::new();
    for cookie in cookies(&site, "/read") {
        *reads_per_user
            .entry(cookie.expect("a logged-in read"))
            .or_default() += 1;
    }
    assert_eq!(reads_per_user.len(), 20, "{reads_per_user:?}");
    // A second of reading every 200 ms: 5 or 6 reads; the last users are
    // cut short by the run's end.
    assert!(
        reads_per_user.values().all(|n| (1..=7).contains(n)),
        "{reads_per_user:?}"
    );
    let active = total_column(&out, "active_vus");
    let most = active.iter().map(|(_, n)| *n).max().unwrap();
    assert!((5..=8).contains(&most), "{active:?}");
}

/// Bad profiles are refused with the key (or flag) they got wrong.
#[test]
fn bad_lessons_and_sessions_name_the_key() {
    let _guard = light();
    let site = login_site();
    for (name, profile, says) in [
        (
            "zero",
            "  model: lesson\n  students: 0\n  arrive_within: 6s",
            "students must be a whole number of at least 1, not '0'",
        ),
        (
            "late",
            "  model: lesson\n  students: 3\n  arrive_within: 2m\n  duration: 1m",
            "arrive_within (120 s) is longer than the lesson (duration 60 s)",
        ),
        (
            "within",
            "  model: lesson\n  students: 3",
            "model: lesson needs students: and arrive_within:",
        ),
        (
            "closed",
            "  users: 3\n  session: once",
            "session: is how long each arriving user of the open model stays",
        ),
        ("negative", "  rate: 2/s\n  session: -5s", "session '-5s'"),
        (
            "word",
            "  model: lesson\n  students: 3\n  arrive_within: soon",
            "arrive_within:",
        ),
        (
            "no-model",
            "  students: 3\n  arrive_within: 6s",
            "add model: lesson",
        ),
    ] {
        let file = journey(&format!("bad-{name}"), &site, profile, "0s");
        let output = run(&["scenario", "check", file.to_str().unwrap()]);
        assert!(!output.status.success(), "{name}: {}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    let file = journey("bad-flags", &site, "  users: 1", "0s");
    let file = file.to_str().unwrap();
    for (args, says) in [
        (vec!["--students", "0"], "--students"),
        (
            vec!["--students", "3", "--arrive-within=-1s"],
            "--arrive-within",
        ),
        (vec!["--session", "once"], "--rate"),
        (vec!["--rate", "2/s", "--session", "soon"], "--session"),
        (
            vec!["--students", "3", "--arrive-within", "20s", "-d", "10s"],
            "arrive_within (20 s) is longer than the lesson (duration 10 s)",
        ),
        (
            vec!["--students", "3", "-d", "10s"],
            "--students needs --arrive-within",
        ),
    ] {
        let mut all = vec!["run", file];
        all.extend(&args);
        let output = run(&all);
        assert!(!output.status.success(), "{args:?}: {}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// A lesson split over two generators (`--shard`): each runs its share of
/// the students at their planned times, and the merged bundle's arrivals
/// per second are the whole class's schedule.
#[test]
fn two_shards_of_a_lesson_merge_into_its_schedule() {
    let _guard = light();
    let site = login_site();
    let file = journey(
        "lesson-shards",
        &site,
        "  model: lesson\n  students: 20\n  arrive_within: 4s\n  duration: 5s",
        "500ms",
    );
    let dir = temp_dir("lesson-shards-bundles");
    std::fs::create_dir_all(&dir).unwrap();
    let start =
        humantime::format_rfc3339_millis(std::time::SystemTime::now() + Duration::from_secs(3))
            .to_string();
    let pattern = dir.join("shard-{index}").to_string_lossy().to_string();
    let file = file.to_str().unwrap();
    let children: Vec<_> = ["0/2", "1/2"]
        .iter()
        .map(|shard| {
            crate::support::headroom()
                .args(["run", file, "--shard", shard, "--start-at", &start])
                .args(["--seed", "5", "-q", "--out", &pattern])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }
    let shards: Vec<_> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
    let planned: Vec<u64> = manifest(&shards[0])["profile"]["arrivals_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(planned.iter().sum::<u64>(), 20);
    let each: Vec<u64> = shards
        .iter()
        .map(|s| total_column(s, "arrivals").iter().map(|(_, n)| n).sum())
        .collect();
    assert_eq!(each, vec![10, 10]);
    let merged = dir.join("merged");
    let output = run(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output));
    for (second, arrivals) in total_column(&merged, "arrivals") {
        let expected = planned.get(second as usize).copied().unwrap_or(0);
        assert_eq!(arrivals, expected, "second {second}: {planned:?}");
    }
    // The merged summary judges the whole class's phases as each shard's
    // did its own (it was rebuilt without them before): the same split,
    // the arrivals and requests of both shards.
    let summary = |dir: &Path| manifest(dir)["summary"].clone();
    let merged_summary = summary(&merged);
    let phases = merged_summary["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2, "{merged_summary}");
    for (i, phase) in phases.iter().enumerate() {
        let of_shards: Vec<serde_json::Value> = shards
            .iter()
            .map(|s| summary(s)["phases"][i].clone())
            .collect();
        assert_eq!(phase["name"], of_shards[0]["name"]);
        assert_eq!(phase["to_s"], of_shards[0]["to_s"], "{phase}");
        let sum = |key: &str| -> u64 { of_shards.iter().map(|p| p[key].as_u64().unwrap()).sum() };
        assert_eq!(phase["arrivals"].as_u64(), Some(sum("arrivals")), "{phase}");
        assert_eq!(
            phase["figures"]["count"].as_u64(),
            Some(
                of_shards
                    .iter()
                    .map(|p| p["figures"]["count"].as_u64().unwrap())
                    .sum()
            ),
            "{phase}"
        );
    }
    let merged_arrivals: Vec<u64> = merged_summary["arrivals_per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(merged_arrivals, planned[..merged_arrivals.len()].to_vec());
    assert_eq!(cookies(&site, "/login").len(), 20);
}

/// A search over lessons of students arriving within 2 s, reading a page
/// a second, Apdex T 100 ms, 3 s of reading a level; `more` flags beside.
fn lesson_search(file: &Path, target: &str, out: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "capacity",
        "--scenario",
        file.to_str().unwrap(),
        target,
        "--arrive-within",
        "2s",
        "--apdex-t",
        "100ms",
        "--step-duration",
        "3s",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    run(&args)
}

/// A lesson site's answer: a session cookie with the login, a page to
/// read otherwise.
fn answer(conn: &mut RawConn, target: &str) {
    if target == "/login" {
        conn.respond("200 OK", &[("Set-Cookie", "sid=1; Path=/")], b"welcome");
    } else {
        conn.respond("200 OK", &[], b"a page to read");
    }
}

/// A site whose logins slow down with the burst: a login takes 1 ms for
/// every login started in the second before it (a session store that
/// grows busy), and reading pages are instant. A class of N arriving
/// within 2 s makes logins of about N/2 ms; the reading after it is fast.
fn logins_slow_with_the_burst() -> RawServer {
    let recent = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
    RawServer::start(move |mut conn: RawConn| {
        while let Some(request) = conn.next_request(Duration::from_secs(5)) {
            if request.target == "/login" {
                let busy = {
                    let mut recent = recent.lock().unwrap_or_else(|p| p.into_inner());
                    let now = std::time::Instant::now();
                    while recent
                        .front()
                        .is_some_and(|t: &std::time::Instant| now - *t > Duration::from_secs(1))
                    {
                        recent.pop_front();
                    }
                    recent.push_back(now);
                    recent.len() as u64
                };
                std::thread::sleep(Duration::from_millis(busy));
            }
            answer(&mut conn, &request.target);
        }
    })
}

/// Capacity over lesson starts: each level's students arrive within 2 s,
/// log in and read. Up to about 200 students a login stays within the
/// Apdex T of 100 ms; past that the burst's logins are slow and its Apdex
/// breaks while the reading phase after it stays excellent: the arrival
/// phase decides, which a closed level (its warm-up thrown away) never
/// sees.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_capacity_search_over_lesson_starts_judges_the_burst() {
    requires!(minutes());
    // Paced: its top level starts 640 students within 2 s, which takes
    // both cores of the generator for that moment; beside the first pass
    // and the ARM builds one arrival came late (639 of 640) and the level
    // was the generator's limit. Alone it used 0.19 of a core on average
    // over 81 s, as the other paced tests do (0.02-0.20).
    let _paced = paced();
    let site = logins_slow_with_the_burst();
    let file = journey("lesson-capacity", &site, "  model: closed", "1s");
    let out = temp_dir("lesson-capacity-out");
    let target = site.url("");
    let output = lesson_search(
        &file,
        &target,
        &out,
        &[
            "--ladder",
            "aimed",
            "--apdex-target",
            "0.85",
            "--start",
            "40",
            "--max",
            "640",
            "--resolution",
            "20",
        ],
    );
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        stderr.contains("each level is a lesson start: its students arrive within 2 s"),
        "{stderr}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("capacity.json")).unwrap()).unwrap();
    let users = json["capacity"]["users"].as_u64().expect("an answer");
    // The answer first, in words: how many, the pages then, what broke
    // first past it (the logins the site slows with the burst); the same
    // in capacity.json.
    let answer = json["answer"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with(&format!(
            "This server takes about {users} students arriving within 2 s"
        )),
        "{json}"
    );
    // What broke first: the knee's arrival, or, when the knee's lessons
    // all met but too unevenly to vouch for the next, their spread.
    let knee = json["knee_users"].as_u64().expect("a knee");
    let uneven = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["users"] == knee && l["uneven_floor"].is_f64());
    let broke = if uneven {
        // (judged after two lessons, or three)
        format!("With {knee}, its ")
    } else {
        format!("With {knee}, the arrival (the logins and first pages) missed the target first: 95 in 100 pages took under")
    };
    assert!(
        stdout.starts_with(&format!(
            "\n  This server takes about {users} students arriving within 2 s: with {users}, 95 in 100 pages took under"
        )) && stdout.replace("\n  ", " ").contains(&broke),
        "{stdout}"
    );
    // The final level ran three times: the answer quotes its worst run
    // everywhere, and says which.
    let quoted = &json["capacity"]["quoted"];
    let run = quoted["run"].as_u64().expect("the run quoted");
    assert_eq!(quoted["runs"], 3, "{quoted}");
    let repetitions: Vec<&serde_json::Value> = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["users"] == users)
        .collect();
    // A lesson is judged by its worst phase.
    let judged = |l: &serde_json::Value| {
        l["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["apdex"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min)
    };
    let worst = repetitions
        .iter()
        .map(|l| judged(l))
        .fold(f64::INFINITY, f64::min);
    let quoted_level = repetitions[run as usize - 1];
    assert_eq!(quoted_level["bundle"], quoted["bundle"], "{quoted}");
    assert_eq!(judged(quoted_level), worst);
    assert_eq!(json["capacity"]["apdex"], quoted_level["apdex"]);
    // The answer gives both phases at the capacity, of that run.
    assert!(
        stdout.contains(&format!(
            "  At {users} students (run {run} of 3, the worst): arrival 0–2 s: "
        )),
        "{stdout}"
    );
    // N/2 ms logins against a T of 100 ms: logins slower than T from
    // about 200 students; the arrival phase holds reads too, so its Apdex
    // breaks later (400 here).
    assert!((100..=640).contains(&users), "{users}: {}", json["verdict"]);
    assert!(json.get("invalid").is_none(), "{}", json["invalid"]);
    // Its three lessons met: the rule, not where each puts the crossing.
    let verdict = json["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with(&format!("{users} students (3 lessons met) [")),
        "{verdict}"
    );
    assert!(
        verdict.contains(&format!("[figures of run {run} of 3, the worst] at Apdex")),
        "{verdict}"
    );
    let levels = json["levels"].as_array().unwrap();
    for level in levels {
        let phases = level["phases"].as_array().expect("a lesson level's phases");
        // A level whose reading an earlier lesson of as many students or
        // more showed ended with its arrival phase, met.
        if level["good"] == true && phases.len() == 1 {
            assert_eq!(phases[0]["name"], "arrival", "{level}");
            let by = level["reading_as"]
                .as_u64()
                .expect("the lesson read for it");
            let by = &levels[by as usize - 1];
            assert!(by["users"].as_u64() >= level["users"].as_u64(), "{by}");
            assert_eq!(by["phases"][1]["name"], "reading", "{by}");
            assert_eq!(by["phases"][1]["met"], true, "{by}");
            assert!(
                level["ended"].as_str().unwrap().contains(&format!(
                    "; its reading was not run again: the lesson of {} before it",
                    by["users"]
                )),
                "{level}"
            );
            continue;
        }
        // A level whose arrival phase broke ended with it.
        if level["good"] == false && phases.len() == 1 {
            assert_eq!(phases[0]["name"], "arrival", "{level}");
            assert!(
                level["ended"].as_str().unwrap().starts_with(
                    "ended with its arrival phase, which broke the target; arrival 0–"
                ),
                "{level}"
            );
            continue;
        }
        assert_eq!(phases.len(), 2, "{level}");
        assert_eq!(
            (phases[0]["name"].as_str(), phases[1]["name"].as_str()),
            (Some("arrival"), Some("reading"))
        );
        // Every student arrives in the first phase.
        assert_eq!(phases[0]["arrivals"], level["users"], "{level}");
        assert_eq!(level["warmup_s"], 0.0, "{level}");
        let both = phases.iter().all(|p| p["met"] == true);
        assert_eq!(level["good"].as_bool().unwrap(), both, "{level}");
    }
    // The site's readers are served at once: a lesson's reading settles
    // well within the target, and later lessons of as many students or
    // fewer run only their arrival.
    assert!(
        levels.iter().any(|l| l["reading_as"].is_u64()),
        "no lesson ran its arrival only: {levels:?}"
    );
    // The answer is three lesson starts of its students (a lesson search's
    // default --confirm), each another draw of arrival times (seeds 1, 2
    // and 3), and every one of them met.
    let at_answer: Vec<&serde_json::Value> =
        levels.iter().filter(|l| l["users"] == users).collect();
    assert_eq!(at_answer.len(), 3, "{levels:?}");
    assert!(at_answer.iter().all(|l| l["good"] == true), "{at_answer:?}");
    let mut seeds: Vec<u64> = at_answer
        .iter()
        .map(|l| {
            manifest(Path::new(l["bundle"].as_str().unwrap()))["seed"]
                .as_u64()
                .unwrap()
        })
        .collect();
    seeds.sort_unstable();
    assert_eq!(seeds, [1, 2, 3]);
    assert!(
        at_answer[1]["why"]
            .as_str()
            .unwrap()
            .contains("measurement 2 of 3 (--confirm) of the last met level"),
        "{}",
        at_answer[1]["why"]
    );
    // Every level but the first rested until the server answered a probe
    // as fast as when idle (here at once: the site keeps no backlog).
    for (i, level) in levels.iter().enumerate() {
        if i == 0 {
            assert!(level["rest"].is_null(), "{level}");
        } else {
            assert_eq!(level["rest"]["quiet"], true, "{level}");
            assert!(level["rest"]["waited_s"].as_f64().unwrap() < 5.0, "{level}");
            assert!(
                level["ended"].as_str().unwrap().contains("; rested "),
                "{level}"
            );
        }
    }
    // Broken once is broken: no level is measured again after it broke.
    for (i, level) in levels.iter().enumerate() {
        if level["good"] == false {
            let again = levels[i + 1..]
                .iter()
                .filter(|l| l["users"] == level["users"])
                .count();
            assert_eq!(again, 0, "{levels:?}");
        }
    }
    // A broken level broke in its burst, and ended with it: the reading
    // after a broken burst cannot mend the level.
    let broken: Vec<&serde_json::Value> = levels.iter().filter(|l| l["good"] == false).collect();
    assert!(!broken.is_empty(), "no level broke: {levels:?}");
    for level in broken {
        assert_eq!(level["phases"][0]["met"], false, "{level}");
        assert_eq!(level["phases"].as_array().unwrap().len(), 1, "{level}");
        assert!(level["measured_s"].as_f64().unwrap() <= 3.5, "{level}");
    }
}

/// A site that does one request at a time, each `work` long (a server of
/// one worker): it does at most 1/work requests a second, and requests
/// that come together wait their turn.
fn one_at_a_time(work: Duration) -> RawServer {
    let worker = Arc::new(std::sync::Mutex::new(()));
    RawServer::start(move |mut conn: RawConn| {
        while let Some(request) = conn.next_request(Duration::from_secs(5)) {
            {
                let _turn = worker.lock().unwrap_or_else(|p| p.into_inner());
                std::thread::sleep(work);
            }
            answer(&mut conn, &request.target);
        }
    })
}

/// A modelled search's answer, held to its bracket: three lessons of it,
/// all met, and a broken lesson above it (or lessons met unevenly) within
/// a tenth of its students.
fn bracketed(json: &serde_json::Value) -> u64 {
    let levels = json["levels"].as_array().unwrap();
    let users = json["capacity"]["users"].as_u64().expect("an answer");
    let at_answer: Vec<&serde_json::Value> =
        levels.iter().filter(|l| l["users"] == users).collect();
    assert_eq!(at_answer.len(), 3, "{levels:?}");
    assert!(at_answer.iter().all(|l| l["good"] == true), "{at_answer:?}");
    let broken = levels
        .iter()
        .filter(|l| {
            (l["good"] == false || l["uneven_floor"].is_f64())
                && l["users"].as_u64().unwrap() > users
        })
        .map(|l| l["users"].as_u64().unwrap())
        .min()
        .expect("a broken level above the answer");
    assert!(broken - users <= broken.div_ceil(10), "{users} {broken}");
    users
}

/// A lesson search aimed by its model (a lesson search's default): short
/// non-stop levels measure what a request costs this one-worker site (4 ms
/// each: at most 250 a second, which the crowds reach), the model of the
/// lesson start answers from it, the first lesson goes there, and lessons
/// bracket the answer to within a tenth of the first broken level, the
/// answer measured three times. Every request the search says it sent
/// reached the site, the non-stop levels' included.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_modelled_lesson_search_aims_by_what_a_request_costs() {
    requires!(minutes());
    let _paced = paced();
    let site = one_at_a_time(Duration::from_millis(4));
    // The file's own lesson is a class of 30: the answer measures itself
    // against it.
    let file = journey(
        "lesson-model",
        &site,
        "  model: lesson\n  students: 30\n  arrive_within: 2s\n  duration: 5s",
        "1s",
    );
    let out = temp_dir("lesson-model-out");
    let target = site.url("");
    let output = lesson_search(&file, &target, &out, &[]);
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        stderr.contains("first what a page view costs (short non-stop levels, about a minute), then lessons aimed by a model of the lesson start")
            && stderr.contains("headroom capacity: what a page view costs: 1 user without thinking (one student's walk): ")
            && stderr.contains("headroom capacity: the lesson model: the lone user walked "),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("capacity.json")).unwrap()).unwrap();
    assert_eq!(json["setup"]["ladder"], "model");
    let model = &json["model"];
    let non_stop: Vec<u64> = model["non_stop"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["users"].as_u64().unwrap())
        .collect();
    assert_eq!(non_stop, [1, 2, 4, 8, 16, 32], "{model}");
    // The crowds keep the one worker busy: close to 250 requests a second,
    // never more.
    for level in &model["non_stop"].as_array().unwrap()[1..] {
        let rate = level["requests_per_s"].as_f64().unwrap();
        assert!((150.0..=255.0).contains(&rate), "{level}");
    }
    let modelled = model["students"].as_u64().unwrap();
    let levels = json["levels"].as_array().unwrap();
    assert_eq!(levels[0]["users"].as_u64(), Some(modelled), "{model}");
    assert!(
        levels[0]["why"]
            .as_str()
            .unwrap()
            .starts_with("the lesson model's answer"),
        "{}",
        levels[0]
    );
    // After the non-stop levels, even the first lesson rested.
    assert_eq!(levels[0]["rest"]["quiet"], true, "{}", levels[0]);
    let users = bracketed(&json);
    // The model measures a one-worker site well, and the lessons need
    // few levels to bracket it.
    let off = (modelled as f64 - users as f64).abs() / users as f64;
    assert!(off <= 0.35, "model {modelled}, lessons {users}");
    assert_eq!(json["setup"]["class"], 30, "{}", json["setup"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "  Search: 6 non-stop levels, then {} lessons in ",
            levels.len()
        )),
        "{stdout}"
    );
    let answer = json["answer"].as_str().unwrap();
    assert!(
        answer.starts_with(&format!(
            "A class of 30 arriving within 2 s fits, {} times over. This server takes about {users} students arriving within 2 s: ",
            users / 30
        )),
        "{answer}"
    );
    // (The model, a ninth above, ×1.25 or two cuts, three runs of the
    // answer; a run that broke sends it a level down.)
    assert!(levels.len() <= 10, "{levels:?}");
    // What the model said of each lesson run is kept beside it.
    let said: Vec<u64> = model["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["students"].as_u64().unwrap())
        .collect();
    assert!(
        said.contains(&users) && said.contains(&modelled),
        "{said:?}"
    );
    // The site saw every request the search says it sent (one still
    // unanswered at a level's end may not have reached it).
    let requests = &json["requests"];
    let total = requests["total"].as_u64().unwrap();
    let abandoned = requests["unrecorded"]["abandoned"].as_u64().unwrap_or(0);
    let served = site.requests().len() as u64;
    assert!(requests["non_stop"].as_u64().unwrap() > 0, "{requests}");
    assert!(
        (total - abandoned..=total).contains(&served),
        "served {served}, the search says {requests}"
    );
}

/// The class question from the log: the workload `scenario from-log`
/// writes of a class's access log (twenty students, each reading four
/// course pages 2 s apart, each page with its style sheet) takes a lesson
/// search as a scenario does. The model is made from its walk (its pages
/// and the resources the log showed with them), the lessons bracket the
/// answer, three lessons confirm it, and the answer's first sentence says
/// how many students arriving within 2 s, the same on the terminal.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_lesson_search_of_a_workload_from_the_log_aims_by_its_model() {
    requires!(minutes());
    let _paced = paced();
    let site = one_at_a_time(Duration::from_millis(4));
    let dir = temp_dir("lesson-from-log");
    std::fs::create_dir_all(&dir).unwrap();
    // In time order; a style sheet names its page as referer.
    let mut lines = Vec::new();
    for student in 0..20u32 {
        for page in 0..4u32 {
            let at = student + page * 2;
            let path = format!("/course/view.php?id={}", 10 + page);
            let referer = format!("http://school.example{path}");
            for (target, referer) in [(path.as_str(), "-"), ("/theme/style.css", &referer)] {
                lines.push((at, format!(
                    "192.0.2.{} - - [04/Jan/2027:08:{:02}:{:02} +0000] \"GET {target} HTTP/1.1\" 200 100 \"{referer}\" \"Firefox\"\n",
                    student + 1,
                    at / 60,
                    at % 60
                )));
            }
        }
    }
    lines.sort_by_key(|(at, _)| *at);
    let log: String = lines.into_iter().map(|(_, line)| line).collect();
    std::fs::write(dir.join("access.log"), log).unwrap();
    let written = run(&[
        "scenario",
        "from-log",
        dir.join("access.log").to_str().unwrap(),
        "--out",
        dir.join("class").to_str().unwrap(),
    ]);
    assert_eq!(written.status.code(), Some(0), "{}", text(&written));
    let out = dir.join("search");
    let output = lesson_search(&dir.join("class/workload.yaml"), &site.url(""), &out, &[]);
    assert!(output.status.success(), "{}", text(&output));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("capacity.json")).unwrap()).unwrap();
    assert_eq!(json["setup"]["ladder"], "model", "{}", json["setup"]);
    let model = &json["model"];
    // The lone student's walk held the pages and their style sheet.
    assert!(model["steps"].as_u64().unwrap() >= 2, "{model}");
    assert!(
        model["requests"].as_u64().unwrap() > model["steps"].as_u64().unwrap(),
        "{model}"
    );
    let levels = json["levels"].as_array().unwrap();
    assert_eq!(levels[0]["users"], model["students"], "{model}");
    let users = bracketed(&json);
    let answer = json["answer"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with(&format!("This server takes about {users} "))
            && answer.contains(" arriving within 2 s: "),
        "{answer}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(stdout.contains(&answer[..40]), "{stdout}");
    // The site served the style sheet the log showed with each page.
    let styles = site
        .requests()
        .iter()
        .filter(|r| r.target == "/theme/style.css")
        .count();
    assert!(styles > 0, "no style sheet was requested");
}
