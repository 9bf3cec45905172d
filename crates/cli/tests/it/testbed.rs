//! The testbed with real services: SQLite, PostgreSQL and MariaDB (started
//! by scripts/services), Redis, memcached and nginx (started here on free
//! ports). The generated journey must pass every check on each database
//! and session store.

use crate::support;

use crate::support::site::{init, serve, sqlite_dataset, Process};
use crate::support::{
    free_port, headroom, light, program, requires, run, service, stdout_json, temp_dir,
    wait_for_port,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn postgres_url() -> String {
    std::env::var("HEADROOM_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://headroom:headroom@127.0.0.1/headroom_test".into())
}

fn postgres_sessions_url() -> String {
    std::env::var("HEADROOM_TEST_POSTGRES_SESSIONS")
        .unwrap_or_else(|_| "postgres://headroom:headroom@127.0.0.1/headroom_sessions".into())
}

fn mariadb_url() -> String {
    std::env::var("HEADROOM_TEST_MARIADB")
        .unwrap_or_else(|_| "mysql://headroom:headroom@127.0.0.1/headroom_test".into())
}

fn command_path(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
        let path = Path::new(dir).join(name);
        if path.is_file() {
            return path;
        }
    }
    panic!("{name} is not installed: run scripts/services (scripts/test does)")
}

fn start_redis(port: u16) -> Process {
    let mut child = Command::new(command_path("redis-server"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    wait_for_port(port, &mut child, "redis-server");
    Process { child, port }
}

fn start_memcached() -> Process {
    let port = free_port();
    let mut command = Command::new(command_path("memcached"));
    command.args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
    if unsafe { libc::geteuid() } == 0 {
        command.args(["-u", "root"]);
    }
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memcached starts");
    wait_for_port(port, &mut child, "memcached");
    Process { child, port }
}

fn info(db: &str) -> serde_json::Value {
    let output = run(&["testbed", "info", "--db", db, "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

/// Writes the journey for the dataset and runs it with `users` users and
/// `loops` loops; returns the JSON summary and the exit code.
fn run_journey(name: &str, db: &str, port: u16, args: &[&str]) -> (serde_json::Value, i32) {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = support::site::journey(db, port, &dir);
    let out = dir.join("bundle");
    let mut all = vec![
        "run",
        plan.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend(args);
    let output = run(&all);
    (stdout_json(&output), output.status.code().unwrap_or(-1))
}

/// Every check passed and no request failed.
fn assert_clean(json: &serde_json::Value, requests: u64, what: &str) {
    assert_eq!(json["total"]["count"], requests, "{what}");
    assert_eq!(
        json["total"]["errors"], 0,
        "{what}: {}",
        json["total"]["errors_by_kind"]
    );
    let checks = json["checks"].as_object().unwrap();
    assert!(checks.len() >= 14, "{what}: {checks:?}");
    for (name, figures) in checks {
        assert_eq!(figures["failures"], 0, "{what}: check {name} failed");
        assert!(figures["passes"].as_u64().unwrap() > 0, "{what}: {name}");
    }
}

/// Runs 3 users × 2 journeys (84 requests) against the site on `db` with
/// the given stores and checks that all passed and the 6 replies are stored.
fn journey_on(db: &str, name: &str, stores: &[&str]) {
    let before = info(db)["counts"]["forum_posts"].as_i64().unwrap();
    let site = serve(db, stores);
    let (json, code) = run_journey(name, db, site.port, &["-c", "3", "--iterations", "2"]);
    let what = format!("{db} {stores:?}");
    assert_eq!(code, 0, "{what}");
    assert_clean(&json, 84, &what);
    drop(site);
    let after = info(db)["counts"]["forum_posts"].as_i64().unwrap();
    assert_eq!(
        after,
        before + 6,
        "{what}: the six replies are in the database"
    );
}

#[test]
fn dataset_sizes_equal_the_table_and_follow_the_seed() {
    let _guard = light();
    let dir = temp_dir("tb-sizes");
    std::fs::create_dir_all(&dir).unwrap();
    // (size, users, sections, assignments, pages, small files, big files,
    //  posts, discussions, small file bytes, big file bytes)
    let table = [
        ("xs", 1, 1, 1, 1, 1, 1, 2, 1, 1024, 8192),
        ("s", 100, 10, 10, 50, 64, 2, 20, 10, 16_384, 4_194_304),
        (
            "m", 1000, 100, 100, 200, 128, 5, 500, 100, 81_920, 16_777_216,
        ),
    ];
    for (
        size,
        users,
        sections,
        assigns,
        pages,
        small,
        big,
        posts,
        discussions,
        small_bytes,
        big_bytes,
    ) in table
    {
        let db = format!("sqlite:{}", dir.join(format!("{size}.db")).display());
        let data = dir.join(format!("{size}-files"));
        let report = init(&db, size, &data, "1");
        let c = &report["counts"];
        let got = [
            &c["users"],
            &c["enrolled"],
            &c["sections"],
            &c["assignments"],
            &c["pages"],
            &c["small_files"],
            &c["big_files"],
            &c["forum_posts"],
            &c["forum_discussions"],
        ]
        .map(|v| v.as_i64().unwrap());
        assert_eq!(
            got,
            [
                users,
                users,
                sections,
                assigns,
                pages,
                small,
                big,
                posts,
                discussions
            ],
            "size {size}"
        );
        assert_eq!(
            report["file_bytes"].as_i64().unwrap(),
            small * small_bytes + big * big_bytes,
            "size {size}"
        );
        let small_file = data
            .join("files")
            .join(format!("{}", assigns + pages + 1))
            .join("smallfile0.dat");
        assert_eq!(
            std::fs::metadata(&small_file).unwrap().len(),
            small_bytes as u64
        );
        let csv = std::fs::read_to_string(data.join("users.csv")).unwrap();
        assert_eq!(csv.lines().count() as i64, users);
    }
    // The same seed gives the same users, passwords and file bytes; another
    // seed does not.
    let one = |seed: &str, name: &str| {
        let data = dir.join(name);
        init(
            &format!("sqlite:{}", dir.join(format!("{name}.db")).display()),
            "s",
            &data,
            seed,
        );
        (
            std::fs::read(data.join("users.csv")).unwrap(),
            std::fs::read(data.join("files/61/smallfile3.dat")).unwrap(),
        )
    };
    let a = one("7", "a");
    let b = one("7", "b");
    let c = one("8", "c");
    assert_eq!(a, b);
    assert_ne!(a.0, c.0);
    assert_ne!(a.1, c.1);
    // Without --force, an existing dataset is kept and the error says so.
    let db = format!("sqlite:{}", dir.join("a.db").display());
    let output = run(&[
        "testbed",
        "init",
        "--db",
        &db,
        "--data-dir",
        dir.join("a").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--force"));
}

#[test]
fn journey_passes_on_sqlite_with_every_session_store() {
    requires!(
        program("redis-server", "redis-server"),
        program("memcached", "memcached"),
    );
    let _guard = light();
    let (dir, db) = sqlite_dataset("tb-sqlite", "s");
    let redis = start_redis(free_port());
    let memcached = start_memcached();
    let redis_url = format!("redis://127.0.0.1:{}", redis.port);
    let memcached_url = format!("memcached://127.0.0.1:{}", memcached.port);
    let sessions_dir = format!("files:{}", dir.join("sessions").display());
    let separate = format!("db-separate:sqlite:{}", dir.join("sessions.db").display());
    let combos: [[&str; 4]; 5] = [
        ["--sessions", "db", "--cache", "local"],
        ["--sessions", &separate, "--cache", "none"],
        ["--sessions", &sessions_dir, "--cache", &redis_url],
        ["--sessions", &redis_url, "--cache", &memcached_url],
        ["--sessions", &memcached_url, "--cache", "local"],
    ];
    for (i, stores) in combos.iter().enumerate() {
        journey_on(&db, &format!("tb-sqlite-{i}"), stores);
    }
}

#[test]
fn journey_passes_on_postgresql() {
    requires!(
        service("HEADROOM_TEST_POSTGRES", "PostgreSQL"),
        service("HEADROOM_TEST_POSTGRES_SESSIONS", "PostgreSQL"),
        program("redis-server", "redis-server"),
    );
    let _guard = light();
    let dir = temp_dir("tb-pg");
    let db = postgres_url();
    init(&db, "s", &dir.join("files"), "1");
    let redis = start_redis(free_port());
    let redis_url = format!("redis://127.0.0.1:{}", redis.port);
    let separate = format!("db-separate:{}", postgres_sessions_url());
    journey_on(&db, "tb-pg-db", &["--sessions", "db"]);
    journey_on(
        &db,
        "tb-pg-separate",
        &["--sessions", &separate, "--cache", "none"],
    );
    journey_on(
        &db,
        "tb-pg-redis",
        &["--sessions", &redis_url, "--cache", &redis_url],
    );
}

#[test]
fn journey_passes_on_mariadb() {
    requires!(
        service("HEADROOM_TEST_MARIADB", "MariaDB"),
        program("memcached", "memcached"),
    );
    let _guard = light();
    let dir = temp_dir("tb-maria");
    let db = mariadb_url();
    init(&db, "s", &dir.join("files"), "1");
    let memcached = start_memcached();
    let memcached_url = format!("memcached://127.0.0.1:{}", memcached.port);
    journey_on(&db, "tb-maria-db", &["--sessions", "db", "--cache", "none"]);
    journey_on(
        &db,
        "tb-maria-memcached",
        &["--sessions", &memcached_url, "--cache", &memcached_url],
    );
}

/// One HTTP/1.1 exchange with `Connection: close`: (status, head, body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    form: Option<&str>,
) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if let Some(cookie) = cookie {
        request.push_str(&format!("Cookie: MoodleSession={cookie}\r\n"));
    }
    if let Some(form) = form {
        request.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            form.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(form.unwrap_or(""));
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head[9..12].parse().unwrap();
    let mut body = answer[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    (status, head, body)
}

fn get(port: u16, path: &str, cookie: Option<&str>) -> (u16, String, Vec<u8>) {
    http(port, "GET", path, cookie, None)
}

fn post(port: u16, path: &str, cookie: Option<&str>, form: &str) -> (u16, String, Vec<u8>) {
    http(port, "POST", path, cookie, Some(form))
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 2 + size + 2..];
    }
}

fn cookie_of(head: &str) -> Option<String> {
    head.lines()
        .filter_map(|l| l.strip_prefix("set-cookie: MoodleSession="))
        .map(|v| v.split(';').next().unwrap().to_string())
        .find(|v| !v.is_empty())
}

fn hidden(body: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = body
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {body}"))
        + marker.len();
    body[start..start + body[start..].find('"').unwrap()].to_string()
}

fn log_in(port: u16, user: &str, password: &str) -> String {
    let (_, head, body) = get(port, "/login/index.php", None);
    let guest = cookie_of(&head).unwrap();
    let token = hidden(&String::from_utf8_lossy(&body), "logintoken");
    let form = format!("username={user}&password={password}&logintoken={token}");
    let (status, head, _) = post(port, "/login/index.php", Some(&guest), &form);
    assert_eq!(status, 303);
    let session = cookie_of(&head).expect("a new session id after login");
    assert_ne!(session, guest);
    session
}

#[test]
fn pages_behave_like_moodle() {
    let _guard = light();
    let (dir, db) = sqlite_dataset("tb-pages", "s");
    let csv = std::fs::read_to_string(dir.join("files/users.csv")).unwrap();
    let (user, password) = csv.lines().next().unwrap().split_once(',').unwrap();
    let site = serve(&db, &["--workers", "1"]);
    let port = site.port;

    // Not logged in: the course sends to the login page.
    let (status, head, _) = get(port, "/course/view.php?id=2", None);
    assert_eq!(status, 303);
    assert!(head.contains("location: /login/index.php"), "{head}");
    // A wrong password: the login page again, with Moodle's message.
    let (_, head, body) = get(port, "/login/index.php", None);
    let guest = cookie_of(&head).unwrap();
    let token = hidden(&String::from_utf8_lossy(&body), "logintoken");
    let form = format!("username={user}&password=wrong&logintoken={token}");
    let (status, _, body) = post(port, "/login/index.php", Some(&guest), &form);
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("Invalid login, please try again"));

    let session = log_in(port, user, password);
    let (status, _, body) = get(port, "/course/view.php?id=2", Some(&session));
    let page = String::from_utf8_lossy(&body);
    assert_eq!(status, 200);
    assert!(page.contains("You are logged in as"));
    // Moodle's footer: DB reads/writes, query time, session size, time used.
    assert!(page.contains("DB reads/writes: "), "{page}");
    assert!(page.contains("DB queries time: ") && page.contains("Session (database): "));
    assert!(page.contains("class=\"timeused\""));

    // The forum lists each discussion with its number of replies (stored
    // with the discussion, so the page does not count posts).
    let course = String::from_utf8_lossy(&body).into_owned();
    let forum = course
        .split("href=\"/mod/forum/view.php?id=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the course links its forum")
        .to_string();
    let replies_listed = || {
        let (status, _, body) = get(
            port,
            &format!("/mod/forum/view.php?id={forum}"),
            Some(&session),
        );
        assert_eq!(status, 200);
        let page = String::from_utf8_lossy(&body).into_owned();
        let row = page
            .split("<a href=\"/mod/forum/discuss.php?d=1\">")
            .nth(1)
            .expect("the forum lists discussion 1");
        let cells: Vec<&str> = row.split("<td>").collect();
        cells[2].split('<').next().unwrap().parse::<i64>().unwrap()
    };
    let replies_before = replies_listed();

    // A reply with a wrong sesskey is refused and not stored.
    let posts = info(&db)["counts"]["forum_posts"].as_i64().unwrap();
    let (_, _, body) = get(port, "/mod/forum/post.php?reply=1", Some(&session));
    let form_page = String::from_utf8_lossy(&body).into_owned();
    let itemid = hidden(&form_page, "message[itemid]");
    let userid = hidden(&form_page, "userid");
    let reply = |sesskey: &str| {
        format!(
            "reply=1&userid={userid}&sesskey={sesskey}&subject=Re&message%5Btext%5D=hello+there&message%5Bitemid%5D={itemid}&attachments=0"
        )
    };
    let (status, _, _) = post(
        port,
        "/mod/forum/post.php",
        Some(&session),
        &reply("forged"),
    );
    assert_eq!(status, 403);
    assert_eq!(info(&db)["counts"]["forum_posts"].as_i64().unwrap(), posts);
    let sesskey = hidden(&form_page, "sesskey");
    let (status, head, _) = post(
        port,
        "/mod/forum/post.php",
        Some(&session),
        &reply(&sesskey),
    );
    assert_eq!(status, 303);
    assert!(
        head.contains("location: /mod/forum/discuss.php?d=1#p"),
        "{head}"
    );
    assert_eq!(
        info(&db)["counts"]["forum_posts"].as_i64().unwrap(),
        posts + 1
    );
    // The same draft item cannot be posted twice.
    let (status, _, _) = post(
        port,
        "/mod/forum/post.php",
        Some(&session),
        &reply(&sesskey),
    );
    assert_eq!(status, 400);

    // A discussion shows its opening post and its newest 30 replies (a
    // load test adds hundreds a minute); `all=1` shows every post.
    for n in 0..31 {
        let (_, _, body) = get(port, "/mod/forum/post.php?reply=1", Some(&session));
        let form = String::from_utf8_lossy(&body).into_owned();
        let itemid = hidden(&form, "message[itemid]");
        let body = format!(
            "reply=1&userid={userid}&sesskey={sesskey}&subject=Re&message%5Btext%5D=reply+number+{n}&message%5Bitemid%5D={itemid}&attachments=0"
        );
        let (status, _, _) = post(port, "/mod/forum/post.php", Some(&session), &body);
        assert_eq!(status, 303);
    }
    let (status, _, body) = get(port, "/mod/forum/discuss.php?d=1", Some(&session));
    let page = String::from_utf8_lossy(&body);
    assert_eq!(status, 200);
    assert_eq!(page.matches("class=\"post\"").count(), 31, "{page}");
    assert!(page.contains("Earlier replies</a> are not shown; the newest 30 follow"));
    assert!(page.contains("reply number 30") && page.contains("reply number 1<"));
    assert!(!page.contains("reply number 0<") && !page.contains("hello there"));
    assert_eq!(replies_listed(), replies_before + 32);
    let (_, _, body) = get(port, "/mod/forum/discuss.php?d=1&all=1", Some(&session));
    let page = String::from_utf8_lossy(&body);
    assert!(page.matches("class=\"post\"").count() > 33, "{page}");
    assert!(page.contains("hello there") && page.contains("reply number 0<"));
    assert!(!page.contains("Earlier replies"));

    // Small and big files, whole; the file activities come after the
    // 10 assignments and 50 pages of size S.
    let (status, _, body) = get(
        port,
        "/pluginfile.php/61/mod_resource/content/0/smallfile0.dat",
        Some(&session),
    );
    assert_eq!((status, body.len()), (200, 16_384));
    let (status, _, body) = get(
        port,
        "/pluginfile.php/62/mod_resource/content/0/bigfile0.dat",
        Some(&session),
    );
    assert_eq!((status, body.len()), (200, 4_194_304));
    let (status, _, _) = get(
        port,
        "/pluginfile.php/62/mod_resource/content/0/nothere.dat",
        Some(&session),
    );
    assert_eq!(status, 404);

    // Participants: 100 enrolled, 20 per page.
    let (_, _, body) = get(port, "/user/index.php?id=2&page=4", Some(&session));
    let page = String::from_utf8_lossy(&body);
    assert!(
        page.contains("100 participants found") && page.contains("Page 5 of 5"),
        "{page}"
    );
    assert_eq!(page.matches("@example.invalid").count(), 20);

    // Logout needs the sesskey; then the session is gone.
    let (status, _, body) = get(port, "/login/logout.php", Some(&session));
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("Do you really want to log out?"));
    let (status, _, _) = get(
        port,
        &format!("/login/logout.php?sesskey={sesskey}"),
        Some(&session),
    );
    assert_eq!(status, 303);
    let (status, _, _) = get(port, "/course/view.php?id=2", Some(&session));
    assert_eq!(status, 303, "logged out");

    // --workers 1: eight users at once, never more than one request handled.
    let output = run(&[
        "load",
        &format!("http://127.0.0.1:{port}/login/index.php"),
        "-c",
        "8",
        "-n",
        "400",
        "--quiet",
        "--out",
        temp_dir("tb-load-1").to_str().unwrap(),
    ]);
    assert!(output.status.success());
    let (_, _, body) = get(port, "/_testbed/stats", None);
    let stats: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(stats["workers"], 1);
    assert_eq!(stats["peak_concurrent"], 1, "{stats}");
}

#[test]
fn without_a_worker_cap_requests_overlap() {
    let _guard = light();
    let (_dir, db) = sqlite_dataset("tb-nocap", "xs");
    let site = serve(&db, &[]);
    let output = run(&[
        "load",
        &format!("http://127.0.0.1:{}/login/index.php", site.port),
        "-c",
        "8",
        "-n",
        "400",
        "--quiet",
        "--out",
        temp_dir("tb-load-2").to_str().unwrap(),
    ]);
    assert!(output.status.success());
    let (_, _, body) = http(site.port, "GET", "/_testbed/stats", None, None);
    let stats: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert!(stats["peak_concurrent"].as_u64().unwrap() > 1, "{stats}");
}

#[test]
fn cluster_spreads_requests_over_all_nodes() {
    requires!(program("nginx", "nginx"));
    let _guard = light();
    let (dir, db) = sqlite_dataset("tb-cluster", "xs");
    let listen = free_port();
    // Three ports in a row that are free now (a free port's neighbours
    // may not be: the cluster once exited, its node's port taken).
    let first = loop {
        let first = free_port();
        if first < u16::MAX - 3
            && (1..3).all(|i| std::net::TcpListener::bind(("127.0.0.1", first + i)).is_ok())
            && listen != first + 1
            && listen != first + 2
        {
            break first;
        }
    };
    let ports: Vec<u16> = (0..3).map(|i| first + i).collect();
    let mut child = headroom()
        .args(["testbed", "cluster", "--nodes", "3", "--db", &db])
        .args(["--listen", &format!("127.0.0.1:{listen}")])
        .args(["--first-port", &first.to_string()])
        .args(["--dir", dir.join("cluster").to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_port(listen, &mut child, "testbed cluster");
    let cluster = Process {
        child,
        port: listen,
    };
    let config = std::fs::read_to_string(dir.join("cluster/nginx.conf")).unwrap();
    for port in &ports {
        assert!(
            config.contains(&format!("server 127.0.0.1:{port};")),
            "{config}"
        );
    }
    let output = run(&[
        "load",
        &format!("http://127.0.0.1:{listen}/login/index.php"),
        "-c",
        "6",
        "-n",
        "900",
        "--quiet",
        "--out",
        temp_dir("tb-load-3").to_str().unwrap(),
        "--json",
    ]);
    let json = stdout_json(&output);
    assert_eq!(json["total"]["errors"], 0);
    let served: Vec<u64> = ports
        .iter()
        .map(|&port| {
            let (_, _, body) = get(port, "/_testbed/stats", None);
            let stats: serde_json::Value = serde_json::from_slice(&body).unwrap();
            stats["served"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(served.iter().sum::<u64>(), 900, "{served:?}");
    for n in &served {
        assert!(
            (270..=330).contains(n),
            "within 10% of 300 each: {served:?}"
        );
    }
    // SIGTERM stops nginx and every node.
    let mut cluster = cluster;
    unsafe {
        libc::kill(cluster.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = cluster.child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(200));
    for port in ports.iter().chain([&listen]) {
        assert!(
            TcpStream::connect(("127.0.0.1", *port)).is_err(),
            "port {port} still open"
        );
    }
}

#[test]
fn a_redis_restart_mid_run_is_recorded_and_the_site_stays_up() {
    requires!(program("redis-server", "redis-server"));
    let _guard = light();
    let (dir, db) = sqlite_dataset("tb-redis-restart", "s");
    let redis_port = free_port();
    let redis = start_redis(redis_port);
    let redis_url = format!("redis://127.0.0.1:{redis_port}");
    let mut site = serve(&db, &["--sessions", &redis_url]);
    let port = site.port;
    // The restarted server is kept here, so that it is stopped whatever
    // happens to the test.
    let restarted = std::sync::Arc::new(std::sync::Mutex::new(None));
    let slot = restarted.clone();
    let restarter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        drop(redis);
        std::thread::sleep(Duration::from_millis(1500));
        *slot.lock().unwrap() = Some(start_redis(redis_port));
    });
    let (json, code) = run_journey("tb-redis-restart-run", &db, port, &["-c", "3", "-d", "6s"]);
    restarter.join().unwrap();
    assert_eq!(code, 0, "the run completes");
    let failed_checks: u64 = json["checks"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["failures"].as_u64().unwrap())
        .sum();
    let errors = json["total"]["errors"].as_u64().unwrap();
    assert!(
        errors > 0 && failed_checks > 0,
        "errors {errors}, failed checks {failed_checks}"
    );
    assert!(json["total"]["count"].as_u64().unwrap() > 100);
    // The site is still up and serves sessions again.
    assert!(site.child.try_wait().unwrap().is_none(), "the site exited");
    let session = log_in(port, "student1", &users_password(&dir, "student1"));
    let (status, _, _) = get(port, "/course/view.php?id=2", Some(&session));
    assert_eq!(status, 200);
}

fn users_password(dir: &Path, user: &str) -> String {
    let csv = std::fs::read_to_string(dir.join("files/users.csv")).unwrap();
    csv.lines()
        .find_map(|l| l.strip_prefix(&format!("{user},")).map(str::to_string))
        .unwrap()
}

#[test]
fn bad_databases_and_stores_are_clear_errors_at_start() {
    requires!(program("python3", "python3"));
    let _guard = light();
    let dir = temp_dir("tb-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let stderr = |args: &[&str], code: i32| {
        let output = run(args);
        let text = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(code), "{args:?}: {text}");
        text
    };
    let text = stderr(
        &[
            "testbed",
            "serve",
            "--db",
            "postgres://headroom:x@127.0.0.1:1/none",
        ],
        3,
    );
    assert!(
        text.contains("cannot open the database postgres://headroom:***@127.0.0.1:1/none"),
        "{text}"
    );
    assert!(text.contains("nothing listens there"), "{text}");
    let text = stderr(&["testbed", "init", "--db", "mongodb://127.0.0.1/x"], 3);
    assert!(
        text.contains("unsupported database URL 'mongodb://127.0.0.1/x'"),
        "{text}"
    );
    let missing = format!("sqlite:{}", dir.join("missing.db").display());
    let text = stderr(&["testbed", "serve", "--db", &missing], 3);
    assert!(text.contains("headroom testbed init"), "{text}");
    let text = stderr(
        &["testbed", "serve", "--sessions", "mongodb://127.0.0.1"],
        2,
    );
    assert!(
        text.contains("unknown session store 'mongodb://127.0.0.1'"),
        "{text}"
    );
    let text = stderr(&["testbed", "serve", "--cache", "files:/tmp"], 2);
    assert!(text.contains("unknown cache store"), "{text}");
    let db = format!("sqlite:{}", dir.join("lms.db").display());
    init(&db, "xs", &dir.join("files"), "1");
    let text = stderr(
        &[
            "testbed",
            "serve",
            "--db",
            &db,
            "--sessions",
            "redis://127.0.0.1:1",
        ],
        3,
    );
    assert!(text.contains("is redis-server running there?"), "{text}");
    let text = stderr(
        &[
            "testbed",
            "serve",
            "--db",
            &db,
            "--cache",
            "memcached://127.0.0.1:1",
        ],
        3,
    );
    assert!(text.contains("is memcached running there?"), "{text}");
    let text = stderr(&["testbed", "serve", "--db", &db, "--workers", "0"], 2);
    assert!(text.contains("--workers"), "{text}");
    // A dataset of an older layout (no `schema` row) is refused with the
    // command that replaces it, not served to fail page by page.
    let file = dir.join("lms.db");
    let forget = std::process::Command::new("python3")
        .arg("-c")
        .arg("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM tb_meta WHERE name = 'schema'\"); c.commit()")
        .arg(&file)
        .status()
        .unwrap();
    assert!(forget.success());
    let text = stderr(&["testbed", "serve", "--db", &db], 3);
    assert!(
        text.contains("holds a testbed dataset of layout 1, and this headroom reads layout 2")
            && text.contains("headroom testbed init --force"),
        "{text}"
    );
    let text = stderr(&["testbed", "init", "--size", "xl", "--db", &db], 2);
    assert!(text.contains("use xs, s, m or l"), "{text}");
}
