//! Where a request's time went, in the server's own words: a PHP page
//! that times its own parts and says so in a Server-Timing header (and
//! in a file of its own), behind nginx, whose access log says how long
//! it waited for the page. headroom's means per metric are the page's
//! own, and they fit inside nginx's time and the client's.

use crate::support::php_site::{logging_proxy, serve, App};
use crate::support::{free_port, headroom, program, requires, stdout_json, temp_dir};

/// Means of the whitespace-separated columns of `text`'s lines.
fn column_means(text: &str) -> Vec<f64> {
    let rows: Vec<Vec<f64>> = text
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect()
        })
        .filter(|r: &Vec<f64>| !r.is_empty())
        .collect();
    let width = rows.iter().map(Vec::len).min().unwrap_or(0);
    (0..width)
        .map(|i| rows.iter().map(|r| r[i]).sum::<f64>() / rows.len() as f64)
        .collect()
}

#[test]
fn a_pages_own_server_timing_is_summed_per_metric_beside_the_clients_time() {
    requires!(program("nginx", "nginx"), program("php-fpm8.2", "php-fpm"));
    let _light = crate::support::light();
    let dir = temp_dir("server-timing");
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    let own = dir.join("timings");
    std::fs::write(
        root.join("page.php"),
        format!(
            "<?php $t0 = microtime(true); usleep(random_int(20000, 40000));\n\
             $t1 = microtime(true); usleep(5000); $t2 = microtime(true);\n\
             $db = ($t1 - $t0) * 1000; $app = ($t2 - $t1) * 1000;\n\
             header(sprintf('Server-Timing: db;dur=%.3f;desc=\"queries\", app;dur=%.3f, cache;desc=\"miss\"', $db, $app));\n\
             file_put_contents('{}', sprintf(\"%.3f %.3f\\n\", $db, $app), FILE_APPEND | LOCK_EX);\n\
             echo 'ok';",
            own.display()
        ),
    )
    .unwrap();
    let inner = free_port();
    let _site = serve(
        &dir.join("site"),
        inner,
        &App {
            root: &root,
            index: "page.php",
            deny: "none",
            fpm_pool: "",
            h2: false,
        },
    );
    let (_front, port) = logging_proxy(
        &dir.join("front"),
        inner,
        "$request_time $upstream_response_time",
    );
    let output = headroom()
        .args(["load", &format!("http://127.0.0.1:{port}/page.php")])
        .args(["-c", "4", "-d", "3s", "--json", "--out"])
        .arg(dir.join("run"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    let total = &json["total"];
    let count = total["count"].as_u64().unwrap();
    assert!(count >= 40, "{total}");
    assert_eq!(total["server_timed"].as_u64(), Some(count), "{total}");
    let metric = |name: &str| -> (u64, f64) {
        let m = total["server_timing"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {total}"));
        (m["count"].as_u64().unwrap(), m["mean_ms"].as_f64().unwrap())
    };
    // A metric without a duration ("cache") is not a time.
    assert!(total["server_timing"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["name"] != "cache"));
    let (db_count, db) = metric("db");
    let (app_count, app) = metric("app");
    assert_eq!((db_count, app_count), (count, count));
    // The page's own record of every request it served, those whose
    // responses ended after the run's end among them.
    let written = std::fs::read_to_string(&own).unwrap();
    assert!(written.lines().count() as u64 >= count);
    let page = column_means(&written);
    assert!(
        (db - page[0]).abs() <= 0.03 * page[0],
        "db {db} against the page's {}",
        page[0]
    );
    assert!(
        (app - page[1]).abs() <= 0.03 * page[1],
        "app {app} against the page's {}",
        page[1]
    );
    assert!(
        (20.0..=45.0).contains(&db) && (5.0..=15.0).contains(&app),
        "{db} {app}"
    );
    // nginx's own log: the page's parts fit in the time nginx waited for
    // it, and that in the time the client waited.
    let log = std::fs::read_to_string(dir.join("front/access.log")).unwrap();
    let nginx = column_means(&log);
    let upstream_ms = nginx[1] * 1000.0;
    let client_ms = total["mean_ms"].as_f64().unwrap();
    assert!(
        db + app <= upstream_ms + 1.0,
        "{db} + {app} against nginx's {upstream_ms}"
    );
    assert!(
        upstream_ms <= client_ms + 1.0,
        "nginx {upstream_ms} against the client's {client_ms}"
    );
    // The run's words: each metric beside the client's time, in its
    // report too.
    let html = crate::support::report_html(&dir.join("run"));
    assert!(
        html.contains("<h3>The server's own account</h3>")
            && html.contains("<td>/page.php</td><td class=\"text\">db</td>"),
        "the report has the page's metrics"
    );
    let text = headroom()
        .args(["load", &format!("http://127.0.0.1:{port}/page.php")])
        .args(["-c", "2", "-d", "1s", "--out"])
        .arg(dir.join("said"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&text.stdout);
    assert!(
        said.contains("The server's own account (Server-Timing)")
            && said.contains("/page.php: db ")
            && said.contains(", app ")
            && said.contains("its client waited"),
        "{said}"
    );
}
