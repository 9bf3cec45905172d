//! HTTP/2 as browsers speak it, against Debian's nginx (1.22) with a
//! certificate made here: over TLS by ALPN, without TLS by prior knowledge
//! (h2c), and a TLS port that offers only HTTP/1.1 (`auto` falls back and
//! says so; `2` is refused). Counts, statuses and bytes are held against
//! nginx's own access log; a journey with a POST, a redirect and a cookie
//! runs over HTTP/2.

use crate::support::php_site::{nginx, Daemon};
use crate::support::{
    free_port, light, manifest, program, requires, root, run, stdout_json, temp_dir, text,
};
use std::path::{Path, PathBuf};

/// nginx with five servers: `tls` (HTTP/2 and HTTP/1.1 by ALPN; TLS 1.2
/// and 1.3), `h2c` (HTTP/2 without TLS), `h1_tls` (TLS 1.2, HTTP/1.1 only),
/// `h1` (HTTP/1.1 without TLS) and `capped` (as `tls`, taking two streams
/// at once on a connection).
struct Site {
    _nginx: Daemon,
    dir: PathBuf,
    tls: u16,
    h2c: u16,
    h1_tls: u16,
    h1: u16,
    capped: u16,
}

impl Site {
    fn start(dir: &Path) -> Site {
        let www = dir.join("www");
        std::fs::create_dir_all(&www).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::write(www.join("1k.bin"), vec![b'x'; 1024]).unwrap();
        // A page of a style sheet, a script and six images (the first its
        // icon too, so no /favicon.ico is asked for).
        let mut page = String::from(
            "<html><head><link rel=stylesheet href=/s.css><script src=/a.js></script>\
             <link rel=icon href=/i0.png></head><body>",
        );
        for i in 0..6 {
            page.push_str(&format!("<img src=/i{i}.png>"));
            std::fs::write(www.join(format!("i{i}.png")), vec![b'p'; 2000 + i * 100]).unwrap();
        }
        page.push_str("</body></html>");
        std::fs::write(www.join("page.html"), page).unwrap();
        // A page of eight images nginx sends slowly (about a second each).
        std::fs::create_dir_all(www.join("slow")).unwrap();
        let mut slow = String::from("<html><head><link rel=icon href=/slow/i0.png></head><body>");
        for i in 0..8 {
            slow.push_str(&format!("<img src=/slow/i{i}.png>"));
            std::fs::write(www.join(format!("slow/i{i}.png")), vec![b'p'; 12_000]).unwrap();
        }
        std::fs::write(www.join("slow/page.html"), slow + "</body></html>").unwrap();
        std::fs::write(www.join("s.css"), "body{margin:0}").unwrap();
        std::fs::write(www.join("a.js"), "var a=1;").unwrap();
        let cert = rcgen::generate_simple_self_signed(vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
        ])
        .unwrap();
        std::fs::write(dir.join("cert.pem"), cert.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
        let (tls, h2c, h1_tls, h1) = (free_port(), free_port(), free_port(), free_port());
        let capped = free_port();
        let d = dir.display();
        let tls_files =
            format!("ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;");
        // A POST to /login sets a cookie and redirects to /home, which
        // answers only with that cookie.
        let routes = "location = /login { add_header Set-Cookie \"session=s3cr3t42; Path=/\"; return 302 /home; }\n    \
             location = /home { if ($cookie_session != \"s3cr3t42\") { return 403; } return 200 \"welcome $cookie_session\\n\"; }\n    \
             location /slow/ { limit_rate 8k; }";
        std::fs::write(
            dir.join("nginx.conf"),
            format!(
                "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
                 events {{ worker_connections 256; }}\n\
                 http {{\n  client_body_temp_path {d}/tmp;\n\
                 log_format wire '$server_port $server_protocol $request_method $request_uri $status $body_bytes_sent $http_content_length $ssl_session_reused $connection $msec $request_time';\n\
                 access_log {d}/access.log wire;\n  root {www};\n\
                 server {{\n    listen 127.0.0.1:{tls} ssl http2;\n    ssl_protocols TLSv1.2 TLSv1.3;\n    {tls_files}\n    {routes}\n  }}\n\
                 server {{\n    listen 127.0.0.1:{h2c} http2;\n    {routes}\n  }}\n\
                 server {{\n    listen 127.0.0.1:{h1_tls} ssl;\n    ssl_protocols TLSv1.2;\n    {tls_files}\n  }}\n\
                 server {{\n    listen 127.0.0.1:{h1};\n  }}\n\
                 server {{\n    listen 127.0.0.1:{capped} ssl http2;\n    http2_max_concurrent_streams 2;\n    {tls_files}\n    {routes}\n  }}\n}}\n",
                www = www.display(),
            ),
        )
        .unwrap();
        // nginx opens every listening socket before it serves any.
        let daemon = nginx(&dir.join("nginx.conf"), tls);
        Site {
            _nginx: daemon,
            dir: dir.to_path_buf(),
            tls,
            h2c,
            h1_tls,
            h1,
            capped,
        }
    }

    /// The most requests nginx served at once on `port` (past its first
    /// `skip` lines), from its log's end times and request times (an end before a start at the same
    /// millisecond).
    fn most_at_once(&self, port: u16, skip: usize) -> usize {
        let text = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        let mut edges: Vec<(i64, i32)> = Vec::new();
        let lines = text.lines().filter(|l| l.starts_with(&format!("{port} ")));
        for line in lines.skip(skip) {
            let f: Vec<&str> = line.split(' ').collect();
            let end = (f[9].parse::<f64>().unwrap() * 1000.0).round() as i64;
            let took = (f[10].parse::<f64>().unwrap() * 1000.0).round() as i64;
            edges.push((end - took, 1));
            edges.push((end, -1));
        }
        edges.sort();
        let (mut now, mut most) = (0, 0);
        for (_, step) in edges {
            now += step;
            most = most.max(now);
        }
        most as usize
    }

    /// The access log's lines for `port`: (protocol, method, uri, status,
    /// body bytes, request's Content-Length, TLS session resumed: r or .,
    /// nginx's connection number).
    #[allow(clippy::type_complexity)]
    fn log(&self, port: u16) -> Vec<(String, String, String, u16, u64, String, String, u64)> {
        let text = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let f: Vec<&str> = line.split(' ').collect();
                (f[0] == port.to_string()).then(|| {
                    (
                        f[1].to_string(),
                        f[2].to_string(),
                        f[3].to_string(),
                        f[4].parse().unwrap(),
                        f[5].parse().unwrap(),
                        f[6].to_string(),
                        f[7].to_string(),
                        f[8].parse().unwrap(),
                    )
                })
            })
            .collect()
    }
}

/// Runs the journey `yaml` (written into `dir`) with `users` users for one
/// iteration each; returns the JSON summary.
fn run_journey(dir: &Path, yaml: &str, users: &str, iterations: &str) -> serde_json::Value {
    std::fs::create_dir_all(dir).unwrap();
    let journey = dir.join("journey.yaml");
    std::fs::write(&journey, yaml).unwrap();
    let out = run(&[
        "run",
        journey.to_str().unwrap(),
        "--insecure",
        "-c",
        users,
        "--iterations",
        iterations,
        "--json",
        "--out",
        dir.join("run").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    stdout_json(&out)
}

#[test]
fn url_mode_over_h2_and_h2c_agrees_with_nginxs_log() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-url");
    let site = Site::start(&dir);
    for (name, url, port) in [
        (
            "tls",
            format!("https://127.0.0.1:{}/1k.bin", site.tls),
            site.tls,
        ),
        (
            "h2c",
            format!("http://127.0.0.1:{}/1k.bin", site.h2c),
            site.h2c,
        ),
    ] {
        let out_dir = dir.join(name);
        let out = run(&[
            "load",
            &url,
            "--http",
            "2",
            "--insecure",
            "-c",
            "4",
            "-n",
            "400",
            "--json",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
        let json = stdout_json(&out);
        assert_eq!(json["total"]["count"], 400, "{name}: {json}");
        assert_eq!(json["total"]["errors"], 0, "{name}: {json}");
        // The run's check of the target: one HEAD (h2c: the only way to
        // know the server speaks it), then the run's GETs.
        let mut log = site.log(port);
        let checks = if name == "h2c" { 1 } else { 0 };
        // The run counts what nginx logged, its check included.
        let sent = json["requests"]["requests"]
            .as_u64()
            .unwrap_or_else(|| json["total"]["count"].as_u64().unwrap());
        assert_eq!(sent as usize, log.len(), "{name}: {}", json["requests"]);
        assert_eq!(
            json["requests"]["probes"].as_u64().unwrap_or(0),
            checks as u64
        );
        assert_eq!(
            log.iter().filter(|l| l.1 == "HEAD").count(),
            checks,
            "{log:?}"
        );
        log.retain(|l| l.1 == "GET");
        assert_eq!(log.len(), 400, "{name}: every request reached nginx once");
        assert!(
            log.iter()
                .all(|l| l.0 == "HTTP/2.0" && l.1 == "GET" && l.3 == 200 && l.4 == 1024),
            "{name}: {log:?}"
        );
        // The bytes on the wire: the bodies nginx sent, and the frames and
        // headers around them (never less than the bodies).
        let received = json["total"]["bytes_received"].as_u64().unwrap();
        let bodies: u64 = log.iter().map(|l| l.4).sum();
        assert!(
            received > bodies && received < bodies + 400 * 200,
            "{name}: {received} bytes received for {bodies} bytes of bodies"
        );
        let connections = manifest(&out_dir)["connections"].clone();
        assert_eq!(connections[0]["protocol"], "HTTP/2", "{connections}");
        assert_eq!(connections[0]["asked"], "2", "{connections}");
        if name == "tls" {
            assert_eq!(connections[0]["tls_version"], "TLSv1.3", "{connections}");
            assert!(
                connections[0]["cipher"]
                    .as_str()
                    .unwrap()
                    .starts_with("TLS13_"),
                "{connections}"
            );
        } else {
            assert!(connections[0].get("tls_version").is_none(), "{connections}");
        }
    }
    // The open model over HTTP/2: arrivals on schedule, each reaching
    // nginx once.
    let before = site.log(site.tls).len();
    let out = run(&[
        "load",
        &format!("https://127.0.0.1:{}/1k.bin", site.tls),
        "--http",
        "2",
        "--insecure",
        "--rate",
        "200/s",
        "-d",
        "2s",
        "--json",
        "--out",
        dir.join("rate").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let total = stdout_json(&out)["total"].clone();
    let count = total["count"].as_u64().unwrap();
    assert!((396..=400).contains(&count), "{total}");
    assert_eq!(total["errors"], 0, "{total}");
    let served = site.log(site.tls).len() - before;
    assert!(
        (count..=count + 2).contains(&(served as u64)),
        "{served} served for {count}"
    );
    // Those in flight at the end are counted beside the figures.
    let json = stdout_json(&out);
    let sent = json["requests"]["requests"].as_u64().unwrap_or(count);
    assert_eq!(sent, served as u64, "{}", json["requests"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn auto_falls_back_to_http1_and_says_so_where_2_is_refused() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-fallback");
    let site = Site::start(&dir);
    let url = format!("https://127.0.0.1:{}/1k.bin", site.h1_tls);
    let out_dir = dir.join("auto");
    let out = run(&[
        "load",
        &url,
        "--http",
        "auto",
        "--insecure",
        "-n",
        "20",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("speaks HTTP/1.1 (TLSv1.2")
            && said.contains("it did not offer HTTP/2 in its TLS handshake (ALPN)"),
        "{said}"
    );
    assert_eq!(manifest(&out_dir)["connections"][0]["protocol"], "HTTP/1.1");
    let log = site.log(site.h1_tls);
    assert_eq!(log.len(), 20);
    assert!(log.iter().all(|l| l.0 == "HTTP/1.1"), "{log:?}");
    // Asked for 2: refused before the run, with what to do.
    let out = run(&[
        "load",
        &url,
        "--http",
        "2",
        "--insecure",
        "-n",
        "20",
        "--out",
        dir.join("two").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("does not offer HTTP/2"), "{said}");
    assert!(said.contains("--http auto"), "{said}");
    // HTTP/2 without TLS (h2c) asked of a server that speaks HTTP/1.1
    // only: refused in words.
    let plain = format!("http://127.0.0.1:{}/1k.bin", site.h1);
    let out = run(&[
        "load",
        &plain,
        "--http",
        "2",
        "-n",
        "20",
        "--out",
        dir.join("h2c").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("does not speak HTTP/2 without TLS"), "{said}");
    assert!(
        site.log(site.h1).iter().all(|l| l.3 != 200),
        "nothing was served"
    );
    // The other way round, HTTP/1.1 asked of an h2c port: each failure
    // says what the server spoke and what to do.
    let h2c = format!("http://127.0.0.1:{}/1k.bin", site.h2c);
    let out = run(&[
        "load",
        &h2c,
        "-n",
        "5",
        "--json",
        "--out",
        dir.join("h1-on-h2c").to_str().unwrap(),
    ]);
    let said = text(&out);
    let total = &stdout_json(&out)["total"];
    assert_eq!(total["errors"], 5, "{said}");
    assert!(
        total["error_details"]["protocol"]
            .as_str()
            .is_some_and(|d| d.contains("HTTP/2 without TLS (h2c)") && d.contains("--http 2")),
        "{total}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each user makes one full TLS handshake, then resumes its own session
/// when it connects again (as a browser does); users never share one.
#[test]
fn a_new_user_makes_a_full_handshake_and_resumes_its_own_session() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-resume");
    let site = Site::start(&dir);
    // The users start 0.25 s apart: a store shared between users would
    // let the later ones resume the first one's session.
    for http in ["2", "1.1"] {
        let before = site.log(site.tls).len();
        let url = format!("https://127.0.0.1:{}/1k.bin", site.tls);
        let out = run(&[
            "load",
            &url,
            "--http",
            http,
            "--insecure",
            "--no-keepalive",
            "-c",
            "4",
            "--ramp-up",
            "1s",
            "-d",
            "2s",
            "--json",
            "--out",
            dir.join(format!("h{http}")).to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let total = stdout_json(&out)["total"].clone();
        let log: Vec<_> = site.log(site.tls).into_iter().skip(before).collect();
        let gets: Vec<_> = log.iter().filter(|l| l.1 == "GET").collect();
        assert!(gets.len() > 40, "{log:?}");
        let full = gets.iter().filter(|l| l.6 == ".").count();
        assert_eq!(
            full,
            4,
            "HTTP/{http}: one full handshake per user, {} requests",
            gets.len()
        );
        // headroom's own count agrees: a handshake per request, 4 full
        // (nginx also served the requests in flight when the run ended,
        // at most one a user).
        let count = total["count"].as_u64().unwrap();
        assert!((gets.len() as u64 - count) <= 4, "{total}");
        assert_eq!(total["tls_handshakes"], count, "{total}");
        assert_eq!(total["tls_resumed"], count - 4, "{total}");
        assert!(total["tls_mean_ms"].as_f64().unwrap() > 0.0, "{total}");
        // The report says it too, beside what the connections spoke.
        let bundle = dir.join(format!("h{http}"));
        let report = run(&["report", bundle.to_str().unwrap()]);
        assert!(report.status.success(), "{}", text(&report));
        let page = std::fs::read_to_string(bundle.join("report.html")).unwrap();
        let protocol = if http == "2" { "HTTP/2" } else { "HTTP/1.1" };
        assert!(
            page.contains(&format!(
                "https://127.0.0.1:{} speaks {protocol} (TLSv1.3, TLS13_",
                site.tls
            )),
            "{page}"
        );
        assert!(
            page.contains(&format!(
                "TLS handshakes: {count} (4 full, {} resumed)",
                count - 4
            )),
            "{page}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A page load over HTTP/2: the page's resources are streams on the
/// user's one connection, as a browser sends them; the samples' bytes add
/// up to what that connection moved, once.
#[test]
fn a_pages_resources_are_streams_on_the_users_one_connection() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-page");
    let site = Site::start(&dir);
    let yaml = format!(
        "defaults:\n  base_url: https://127.0.0.1:{}\n  http: 2\n  page_loads: true\n\
         steps:\n  - label: page\n    path: /page.html\n",
        site.tls
    );
    let json = run_journey(&dir, &yaml, "3", "1");
    assert_eq!(json["requests"]["requests"], 3 * 9, "{json}");
    let log = site.log(site.tls);
    assert_eq!(log.len(), 27, "{log:?}");
    assert!(
        log.iter().all(|l| l.0 == "HTTP/2.0" && l.3 == 200),
        "{log:?}"
    );
    // One connection per user, each carrying its page and the 8 resources.
    let mut per_connection = std::collections::BTreeMap::new();
    for l in &log {
        *per_connection.entry(l.7).or_insert(0) += 1;
    }
    assert_eq!(
        per_connection.values().copied().collect::<Vec<_>>(),
        vec![9, 9, 9],
        "{log:?}"
    );
    // The bytes: every body nginx sent, with frames and headers, counted
    // once (a stream's share of what its connection moved).
    let received = json["requests"]["bytes_received"].as_u64().unwrap();
    let bodies: u64 = log.iter().map(|l| l.4).sum();
    assert!(
        received > bodies && received < bodies + 27 * 250,
        "{received} bytes received for {bodies} bytes of bodies"
    );
    // Over HTTP/1.1 a user opens up to 6 connections to the host; the
    // first makes a full TLS handshake, the others resume the user's
    // session while its tickets last (a TLS 1.3 ticket is used once;
    // nginx's OpenSSL gives two a handshake), as a browser's do.
    let yaml = yaml.replace("http: 2", "http: 1.1");
    let json = run_journey(&dir.join("h1"), &yaml, "3", "1");
    assert_eq!(json["requests"]["requests"], 3 * 9, "{json}");
    let log: Vec<_> = site.log(site.tls).into_iter().skip(27).collect();
    assert!(log.iter().all(|l| l.0 == "HTTP/1.1"), "{log:?}");
    let connections: std::collections::BTreeSet<u64> = log.iter().map(|l| l.7).collect();
    let full: std::collections::BTreeSet<u64> =
        log.iter().filter(|l| l.6 == ".").map(|l| l.7).collect();
    let resumed = connections.len() - full.len();
    assert!(connections.len() > 3, "several connections a user: {log:?}");
    assert!(resumed >= 3, "the user's later connections resume: {log:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A browser sends a page's resources at once over HTTP/2, as many as the
/// server's SETTINGS allow: eight slow images are served together by
/// nginx's default (128 streams), two at a time by a server that takes
/// two, without a refused stream; over HTTP/1.1 six at a time.
#[test]
fn a_pages_streams_are_as_many_as_the_server_allows() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-streams");
    let site = Site::start(&dir);
    for (port, http, most) in [
        (site.tls, "2", 9),
        (site.capped, "2", 2),
        (site.tls, "1.1", 6),
    ] {
        let yaml = format!(
            "defaults:\n  base_url: https://127.0.0.1:{port}\n  http: \"{http}\"\n  page_loads: true\n\
             steps:\n  - label: page\n    path: /slow/page.html\n"
        );
        let before = site.log(port).len();
        let json = run_journey(&dir.join(format!("{port}-{http}")), &yaml, "1", "1");
        assert_eq!(json["requests"]["requests"], 9, "{json}");
        let errors: u64 = json["labels"]
            .as_object()
            .unwrap()
            .values()
            .map(|l| l["errors"].as_u64().unwrap())
            .sum();
        assert_eq!(errors, 0, "{json}");
        let log: Vec<_> = site.log(port).into_iter().skip(before).collect();
        assert!(log.iter().all(|l| l.3 == 200), "{log:?}");
        assert_eq!(log.len(), 9, "{log:?}");
        let at_once = site.most_at_once(port, before);
        if most == 9 {
            assert!(at_once >= 8, "the images at once over HTTP/2: {at_once}");
        } else {
            assert_eq!(at_once, most, "HTTP/{http} on port {port}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_journey_with_a_post_a_redirect_and_a_cookie_runs_over_h2() {
    requires!(program("nginx", "nginx"));
    let _light = light();
    let dir = temp_dir("h2-journey");
    let site = Site::start(&dir);
    let yaml = format!(
            "defaults:\n  base_url: https://127.0.0.1:{}\n  http: 2\n\
             steps:\n  - label: login\n    method: POST\n    path: /login\n    form: {{user: ann, note: hello}}\n    \
             check:\n      - contains: welcome s3cr3t42\n",
        site.tls
    );
    let json = run_journey(&dir, &yaml, "2", "3");
    assert_eq!(json["total"]["count"], 6, "{json}");
    assert_eq!(json["total"]["errors"], 0, "{json}");
    let log = site.log(site.tls);
    let posts: Vec<_> = log.iter().filter(|l| l.1 == "POST").collect();
    let homes: Vec<_> = log.iter().filter(|l| l.2 == "/home").collect();
    assert_eq!(posts.len(), 6, "{log:?}");
    assert!(
        posts
            .iter()
            .all(|l| l.0 == "HTTP/2.0" && l.3 == 302 && l.5 == "19"),
        "the form went as a body of 19 bytes: {log:?}"
    );
    assert_eq!(homes.len(), 6, "{log:?}");
    assert!(
        homes.iter().all(|l| l.0 == "HTTP/2.0" && l.3 == 200),
        "{log:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// How the scripted HTTP/2 server answers the run's streams (the first
/// connection, the run's check, is answered well).
#[derive(Clone, Copy, Debug)]
enum Misbehaviour {
    /// A header block that does not decode (HPACK index 0).
    Malformed,
    /// A header block of 2 MiB (HEADERS and CONTINUATION frames).
    Huge,
    /// HEADERS without END_HEADERS, then empty CONTINUATION frames forever.
    Endless,
    /// The head and part of the body, then the connection closes.
    Cut,
    /// GOAWAY naming no stream as processed: every stream unprocessed.
    GoAway,
    /// RST_STREAM INTERNAL_ERROR on every stream.
    Reset,
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// HPACK: a literal header with a new name, not indexed, no Huffman.
fn literal(name: &str, value_len: usize) -> Vec<u8> {
    let int = |out: &mut Vec<u8>, n: usize, prefix: u8| {
        let max = (1usize << prefix) - 1;
        if n < max {
            out.push(n as u8);
            return;
        }
        out.push(max as u8);
        let mut rest = n - max;
        while rest >= 128 {
            out.push((rest % 128 + 128) as u8);
            rest /= 128;
        }
        out.push(rest as u8);
    };
    let mut out = vec![0u8];
    int(&mut out, name.len(), 7);
    out.extend_from_slice(name.as_bytes());
    int(&mut out, value_len, 7);
    out.extend(std::iter::repeat_n(b'v', value_len));
    out
}

/// Serves HTTP/2 (prior knowledge) on a free port: connection 1 answers
/// every stream with 200; the later ones misbehave as told.
fn misbehaving_h2(how: Misbehaviour) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut s) = stream else { return };
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(30)));
                let mut preface = [0u8; 24];
                if s.read_exact(&mut preface).is_err() {
                    return;
                }
                let _ = s.write_all(&frame(4, 0, 0, &[]));
                loop {
                    let mut head = [0u8; 9];
                    if s.read_exact(&mut head).is_err() {
                        return;
                    }
                    let len = (usize::from(head[0]) << 16)
                        | (usize::from(head[1]) << 8)
                        | usize::from(head[2]);
                    let mut payload = vec![0u8; len];
                    if s.read_exact(&mut payload).is_err() {
                        return;
                    }
                    let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
                    match head[3] {
                        4 if head[4] & 1 == 0 => {
                            let _ = s.write_all(&frame(4, 1, 0, &[]));
                        }
                        1 if n == 0 => {
                            // :status 200 (HPACK static index 8), ended.
                            let _ = s.write_all(&frame(1, 0x5, id, &[0x88]));
                        }
                        1 => {
                            let ok = match how {
                                Misbehaviour::Malformed => s.write_all(&frame(1, 0x5, id, &[0x80])),
                                Misbehaviour::Huge => {
                                    let mut block = vec![0x88];
                                    for i in 0..128 {
                                        block.extend(literal(&format!("x-filler-{i}"), 16_000));
                                    }
                                    let chunks: Vec<&[u8]> = block.chunks(16_384).collect();
                                    let last = chunks.len() - 1;
                                    let mut r = Ok(());
                                    for (i, c) in chunks.iter().enumerate() {
                                        let kind = if i == 0 { 1 } else { 9 };
                                        let flags = if i == last { 0x4 } else { 0 }
                                            | if i == 0 { 1 } else { 0 };
                                        r = r.and(s.write_all(&frame(kind, flags, id, c)));
                                    }
                                    r
                                }
                                Misbehaviour::Endless => {
                                    let mut r = s.write_all(&frame(1, 0x1, id, &[0x88]));
                                    while r.is_ok() {
                                        r = s.write_all(&frame(9, 0, id, &[]));
                                    }
                                    r
                                }
                                Misbehaviour::Cut => {
                                    let _ = s.write_all(&frame(1, 0x4, id, &[0x88]));
                                    let _ = s.write_all(&frame(0, 0, id, &[b'x'; 100]));
                                    return;
                                }
                                Misbehaviour::GoAway => {
                                    let mut goaway = 0u32.to_be_bytes().to_vec();
                                    goaway.extend_from_slice(&0u32.to_be_bytes());
                                    let _ = s.write_all(&frame(7, 0, 0, &goaway));
                                    // A server closes a moment after its GOAWAY.
                                    std::thread::sleep(std::time::Duration::from_millis(300));
                                    return;
                                }
                                Misbehaviour::Reset => {
                                    s.write_all(&frame(3, 0, id, &2u32.to_be_bytes()))
                                }
                            };
                            if ok.is_err() {
                                return;
                            }
                        }
                        _ => {}
                    }
                }
            });
        }
    });
    port
}

/// A server that breaks HTTP/2 gets recorded failures with the reason in
/// words: no hang, no panic, and a stream it never processed goes again
/// once on a new connection.
#[test]
fn a_server_that_breaks_http2_is_a_recorded_failure_with_its_reason() {
    let _light = light();
    let dir = temp_dir("h2-broken");
    let cases = [
        (
            Misbehaviour::Malformed,
            "protocol",
            "malformed frame or header block",
        ),
        (Misbehaviour::Huge, "protocol", "too large"),
        (Misbehaviour::Endless, "protocol", "too large or endless"),
        (
            Misbehaviour::Cut,
            "reset",
            "closed before the stream was complete",
        ),
        (Misbehaviour::GoAway, "reset", "GOAWAY"),
        (Misbehaviour::Reset, "reset", "RST_STREAM INTERNAL_ERROR"),
    ];
    for (how, kind, words) in cases {
        let port = misbehaving_h2(how);
        let started = std::time::Instant::now();
        let out = run(&[
            "load",
            &format!("http://127.0.0.1:{port}/"),
            "--http",
            "2",
            "-c",
            "1",
            "-n",
            "2",
            "--timeout",
            "5s",
            "--json",
            "--out",
            dir.join(format!("{how:?}")).to_str().unwrap(),
        ]);
        let said = text(&out);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{how:?} took {:?}",
            started.elapsed()
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{how:?}: {said}");
        let json = stdout_json(&out);
        let total = &json["total"];
        assert_eq!(total["errors"], 2, "{how:?}: {total}");
        assert_eq!(total["errors_by_kind"][kind], 2, "{how:?}: {total}");
        let detail = total["error_details"][kind].as_str().unwrap_or("");
        assert!(detail.contains(words), "{how:?}: '{detail}' in {total}");
        eprintln!("{how:?}: {kind}: {detail} (resent {})", total["resent"]);
        if matches!(how, Misbehaviour::GoAway) {
            assert!(detail.contains("GOAWAY"), "{total}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// HTTP/2 against an application nobody here wrote: DokuWiki (Debian's
/// package, php-fpm) behind nginx over TLS. Its login, edit and save
/// journey (scenarios/dokuwiki.yaml: the forms' hidden tokens, posts,
/// redirects and the session cookie) runs with `--http 2`: every request
/// nginx logs is HTTP/2.0, none failed, and each account's page holds the
/// text its user typed; then its start page loads as a browser loads it,
/// its style sheets, scripts and images over HTTP/2 too, as many as
/// nginx logged.
#[test]
fn dokuwikis_journey_runs_over_h2_as_nginx_logs_it() {
    requires!(
        root(),
        program("nginx", "nginx"),
        program("php-fpm8.2", "php-fpm"),
        program("/usr/share/dokuwiki/doku.php", "dokuwiki"),
    );
    let _serial = crate::support::light();
    let dir = temp_dir("h2-dokuwiki");
    let accounts = crate::support::dokuwiki::scenario_accounts();
    let wiki = crate::support::dokuwiki::start_h2(&dir.join("wiki"), &accounts);
    let target = format!("https://127.0.0.1:{}", wiki.port);
    wiki.run_scenario(
        &target,
        &dir.join("run"),
        &["--http", "2", "--insecure"],
        &accounts,
    );
    let log = std::fs::read_to_string(dir.join("wiki/access.log")).unwrap();
    let ours: Vec<&str> = log.lines().filter(|l| l.contains("headroom/")).collect();
    // The 30 steps and the redirects they followed.
    assert!(ours.len() >= 30, "{log}");
    assert!(ours.iter().all(|l| l.ends_with(" HTTP/2.0")), "{log}");
    let status = |l: &str| l.split(' ').nth(1).unwrap_or("").to_string();
    assert!(ours.iter().all(|l| !status(l).starts_with('5')), "{log}");
    // A page load of the start page: its resources over the same HTTP/2.
    let visit = run_journey(
        &dir.join("visit"),
        &format!(
            "defaults:\n  base_url: {target}\n  http: 2\n  page_loads: true\n\
             steps:\n  - label: start\n    path: /doku.php?id=start\n"
        ),
        "1",
        "1",
    );
    let wire = &visit["requests"];
    assert_eq!(wire["pages"], 1, "{visit}");
    assert!(
        wire["resources"].as_u64().unwrap() >= 3,
        "DokuWiki's page names its CSS, JS and images: {visit}"
    );
    assert_eq!(visit["total"]["errors"], 0, "{visit}");
    let log = std::fs::read_to_string(dir.join("wiki/access.log")).unwrap();
    let after: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("headroom/"))
        .skip(ours.len())
        .collect();
    assert_eq!(
        after.len() as u64,
        wire["requests"].as_u64().unwrap(),
        "{log}"
    );
    assert!(after.iter().all(|l| l.ends_with(" HTTP/2.0")), "{log}");
    drop(wiki);
    std::fs::remove_dir_all(&dir).unwrap();
}
