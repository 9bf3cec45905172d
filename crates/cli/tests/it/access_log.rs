//! `headroom scenario from-log`: an nginx access log (combined, gzip and
//! plain, rotated) read into its users' model; what cannot be read is
//! said, with its place, and the run goes on. Its counts agree with
//! goaccess's (Debian's) on the same log.

use crate::support::{run, temp_dir, text};
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
