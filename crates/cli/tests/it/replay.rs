//! `headroom replay`: an access log's requests sent again against the
//! testbed behind nginx, each at its logged time (a second's requests
//! spread over it) or twice as fast; the server's own log ($msec less
//! $request_time: when each request came) and the bundle's replay.csv
//! hold the log's requests second by second, in its order; the logged
//! status beside the replayed one; the POSTs left out and said.

use crate::support::php_site::logging_proxy;
use crate::support::{paced, program, requires, run, site, temp_dir, text};

/// Requests a logged second: 40 GETs over 4 seconds, unevenly.
const PER_SECOND: [usize; 4] = [5, 12, 3, 20];

/// A combined log of `PER_SECOND`'s GETs (every 5th for a course page,
/// logged 200 for a student who was logged in) and a POST each second.
fn generated_log() -> String {
    let mut log = String::new();
    let mut n = 0;
    for (second, count) in PER_SECOND.iter().enumerate() {
        for _ in 0..*count {
            n += 1;
            let target = match n % 5 {
                0 => format!("/course/view.php?id=2&n={n}"),
                1 | 2 => format!("/?n={n}"),
                _ => "/login/index.php".to_string(),
            };
            log += &format!(
                "192.0.2.{} - - [04/Jan/2027:10:00:{second:02} +0000] \"GET {target} HTTP/1.1\" 200 100 \"-\" \"Firefox\"\n",
                n % 200
            );
        }
        log += &format!(
            "192.0.2.9 - - [04/Jan/2027:10:00:{second:02} +0000] \"POST /form HTTP/1.1\" 303 0 \"-\" \"Firefox\"\n"
        );
    }
    // A proxy's request and a line not in the format: said, not sent.
    log += "192.0.2.9 - - [04/Jan/2027:10:00:03 +0000] \"GET http://proxy.example/ HTTP/1.1\" 200 0 \"-\" \"Firefox\"\n";
    log += "not a log line\n";
    log
}

/// Counts a second, the first at 0, of `times` (seconds).
fn per_second(times: &[f64], first: f64, width: f64) -> Vec<usize> {
    let mut counts = Vec::new();
    for t in times {
        let at = ((t - first) / width).floor().max(0.0) as usize;
        if counts.len() <= at {
            counts.resize(at + 1, 0);
        }
        counts[at] += 1;
    }
    counts
}

fn within_one(got: &[usize], want: &[usize]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.abs_diff(*w) <= 1)
}

#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn a_log_is_sent_again_second_by_second_at_its_pace_and_twice_as_fast() {
    requires!(program("nginx", "nginx"));
    let _paced = paced();
    let (dir, db) = site::sqlite_dataset("replay", "S");
    let testbed = site::serve(&db, &[]);
    let (_nginx, port) = logging_proxy(
        &dir,
        testbed.port,
        "$msec $request_time \"$request\" $status",
    );
    std::fs::write(dir.join("logged.log"), generated_log()).unwrap();
    let expected = [
        (1.0, PER_SECOND.to_vec()),
        (
            2.0,
            vec![PER_SECOND[0] + PER_SECOND[1], PER_SECOND[2] + PER_SECOND[3]],
        ),
    ];
    for (speed, want) in expected {
        std::fs::write(dir.join("access.log"), "").unwrap();
        let bundle = dir.join(format!("replay-{speed}"));
        let out = run(&[
            "replay",
            dir.join("logged.log").to_str().unwrap(),
            "--target",
            &format!("http://127.0.0.1:{port}"),
            "--speed",
            &format!("{speed}x"),
            "--out",
            bundle.to_str().unwrap(),
        ]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(0), "{said}");
        for expected in [
            "40 GET/HEAD requests logged over",
            "left out: 4 POST",
            "replayed statuses: 32 answered as recorded; 8 not: 200 → 303 (8)",
            "warning: 1 of 46 lines (2.17%) are not in the format",
            "logged.log:46: it does not have the format's shape: not a log line",
            "warning: 1 requests are left out: their target is not a path",
        ] {
            assert!(said.contains(expected), "{expected}\n{said}");
        }
        // No address and no query value reach the bundle.
        let csv = std::fs::read_to_string(bundle.join("replay.csv")).unwrap();
        let manifest = std::fs::read_to_string(bundle.join("manifest.json")).unwrap();
        assert!(
            !csv.contains("192.0.2") && !manifest.contains("192.0.2"),
            "{csv}"
        );
        assert!(!csv.contains("n=1"), "{csv}");
        // The bundle: every request sent on time, in the log's order.
        let rows: Vec<Vec<String>> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        assert_eq!(rows.len(), 40, "{csv}");
        let mut sent = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row[0], (i + 1).to_string());
            let due: f64 = row[5].parse().unwrap();
            let at: f64 = row[6].parse().unwrap();
            assert!(at >= due - 1.0 && at - due < 50.0, "{row:?}");
            // Without the student's session the course sends to the login.
            let replayed = if row[1].starts_with("/course/") {
                "303"
            } else {
                "200"
            };
            assert_eq!(
                (row[3].as_str(), row[4].as_str()),
                ("200", replayed),
                "{row:?}"
            );
            sent.push(at / 1000.0);
        }
        assert!(within_one(&per_second(&sent, 0.0, 1.0), &want), "{sent:?}");
        // The server's log: the same requests a second, in the same order
        // (each line written when its answer ended: it came $request_time
        // before).
        let server = std::fs::read_to_string(dir.join("access.log")).unwrap();
        let mut came: Vec<(f64, String)> = server
            .lines()
            .map(|l| {
                let mut fields = l.split(' ');
                let end: f64 = fields.next().unwrap().parse().unwrap();
                let took: f64 = fields.next().unwrap().parse().unwrap();
                (end - took, l.split('"').nth(1).unwrap().to_string())
            })
            .collect();
        came.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(came.len(), 40, "{server}");
        let times: Vec<f64> = came.iter().map(|c| c.0).collect();
        let counts = per_second(&times, times[0], 1.0);
        assert!(
            within_one(&counts, &want),
            "{counts:?} for {want:?} at {speed}×"
        );
        let order: Vec<&str> = came.iter().map(|c| c.1.as_str()).collect();
        let logged: Vec<String> = generated_log()
            .lines()
            .filter(|l| l.contains("\"GET /"))
            .map(|l| l.split('"').nth(1).unwrap().to_string())
            .collect();
        // Within a logged second requests are at least 1/20 s apart: the
        // server sees them in the log's order.
        assert_eq!(order, logged, "at {speed}×");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_log_with_nothing_to_send_is_refused_with_what_it_holds() {
    let dir = temp_dir("replay-empty");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("posts.log"),
        "192.0.2.1 - - [04/Jan/2027:10:00:00 +0000] \"POST /form HTTP/1.1\" 303 0 \"-\" \"Firefox\"\n",
    )
    .unwrap();
    let out = run(&[
        "replay",
        dir.join("posts.log").to_str().unwrap(),
        "--target",
        "http://127.0.0.1:9/",
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("no request of GET, HEAD is in")
            && said.contains("others: POST 1; --methods sends them"),
        "{said}"
    );
    let out = run(&[
        "replay",
        dir.join("posts.log").to_str().unwrap(),
        "--target",
        "http://127.0.0.1:9/",
        "--speed",
        "0x",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("is not a multiple above 0"),
        "{}",
        text(&out)
    );
    // One line from a wrong clock would make a replay of years: refused.
    std::fs::write(
        dir.join("clock.log"),
        "192.0.2.1 - - [04/Jan/2027:10:00:00 +0000] \"GET / HTTP/1.1\" 200 0 \"-\" \"Firefox\"\n\
         192.0.2.1 - - [04/Jan/2027:10:00:05 +0000] \"GET /a HTTP/1.1\" 200 0 \"-\" \"Firefox\"\n\
         192.0.2.1 - - [01/Jan/2031:00:00:00 +0000] \"GET /b HTTP/1.1\" 200 0 \"-\" \"Firefox\"\n",
    )
    .unwrap();
    let out = run(&[
        "replay",
        dir.join("clock.log").to_str().unwrap(),
        "--target",
        "http://127.0.0.1:9/",
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("more than 31 days: replay it in parts")
            && said.contains("before request 3 of the log's time order"),
        "{said}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
