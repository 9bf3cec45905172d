//! The stack: Moodle's "System benchmark" in spirit (source 000, Table 6)
//! — ten timed tests of what a web application does (load its
//! configuration, compute, read and write its temporary files, read and
//! write its database, run complex queries, serve pages), each with
//! Moodle's acceptable and critical limits; score = ceil(total seconds ×
//! 100), lower is better. Against SQLite, PostgreSQL or MariaDB (`--db`,
//! as for the testbed); the page loads against `--target`.

use crate::{check, io_error, measure, settings, BenchError, BenchResult};
use headroom_testbed::db::{query, Bind, Create, Database, Durability};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct StackOptions {
    /// sqlite:FILE, postgres://… or mysql://…; `None`: SQLite in `dir`.
    pub db: Option<String>,
    /// Two page loads of this http:// URL; `None` skips them.
    pub target: Option<String>,
    /// Where the file tests write (the application's temporary folder).
    pub dir: PathBuf,
    pub repetitions: u32,
}

/// (key, name, acceptable s, critical s): Moodle's tests and limits.
pub const TESTS: [(&str, &str, f64, f64); 10] = [
    ("load", "configuration load (open the database)", 0.5, 0.8),
    ("cpu", "processor: 10,000,000 function calls", 0.5, 0.8),
    (
        "file_read",
        "2,000 reads of a 16 KB temporary file",
        0.5,
        0.8,
    ),
    (
        "file_write",
        "2,000 writes of 16 KB temporary files",
        1.0,
        1.25,
    ),
    ("db_read", "500 course reads", 0.75, 1.0),
    ("db_write", "25 course inserts", 1.0, 1.25),
    ("query1", "complex query #1 (join, group)", 0.5, 0.7),
    ("query2", "complex query #2 (subquery, having)", 0.3, 0.5),
    ("page1", "page load #1", 0.3, 0.8),
    ("page2", "page load #2", 0.3, 0.8),
];

/// Moodle's score: ceil(total seconds × 100).
pub fn score(total_seconds: f64) -> f64 {
    (total_seconds * 100.0 - 1e-9).ceil()
}

/// "ok", "slow" (past the acceptable limit) or "critical".
pub fn verdict(seconds: f64, acceptable: f64, critical: f64) -> &'static str {
    if seconds > critical {
        "critical"
    } else if seconds > acceptable {
        "slow"
    } else {
        "ok"
    }
}

const COURSES: i64 = 1000;
const MODULES_PER_COURSE: i64 = 10;
const KINDS: [&str; 4] = ["forum", "page", "quiz", "assign"];

#[inline(never)]
fn called(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(2_654_435_761) ^ 0x9e37)
}

fn cpu_loop() -> u64 {
    (0..10_000_000u64).fold(0, |acc, i| acc ^ called(std::hint::black_box(i)))
}

/// A blocking GET of an http:// URL on a new connection; the time to the
/// last byte of the answer.
pub fn page_load(url: &str) -> Result<Duration, BenchError> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        BenchError::Refused(format!(
            "the stack benchmark loads pages over plain HTTP: give --target an http:// URL (not {url})"
        ))
    })?;
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let with_port = if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    let failed = |e: std::io::Error| BenchError::Refused(format!("cannot load {url}: {e}"));
    let started = Instant::now();
    let address = with_port
        .to_socket_addrs()
        .map_err(failed)?
        .next()
        .ok_or_else(|| BenchError::Refused(format!("{authority} resolves to no address")))?;
    let mut stream =
        TcpStream::connect_timeout(&address, Duration::from_secs(10)).map_err(failed)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(failed)?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: headroom-bench\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n"
    )
    .map_err(failed)?;
    let status = read_answer(&mut stream).map_err(failed)?;
    let elapsed = started.elapsed();
    match status {
        Some(code) if code < 400 => Ok(elapsed),
        Some(code) => Err(BenchError::Refused(format!(
            "{url} answered {code}: give --target a page that loads"
        ))),
        None => Err(BenchError::Refused(format!("{url} sent no HTTP answer"))),
    }
}

/// Reads one answer to its end (Content-Length, chunked, or the close);
/// its status, or `None` when it is not HTTP.
fn read_answer(stream: &mut TcpStream) -> std::io::Result<Option<u16>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let (code, head, length, chunked) = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        raw.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(head)) => {
                let value = |name: &str| {
                    response
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
                };
                let length = value("content-length").and_then(|v| v.trim().parse::<usize>().ok());
                let chunked = value("transfer-encoding").is_some_and(|v| v.contains("chunked"));
                break (response.code.unwrap_or(0), head, length, chunked);
            }
            Ok(httparse::Status::Partial) if raw.len() < 1 << 20 => {}
            _ => return Ok(None),
        }
    };
    // The body is counted, not kept: only its last bytes, to see the end of
    // a chunked answer. A page larger than MAX_PAGE or slower than
    // PAGE_DEADLINE is an error, not a figure.
    let started = std::time::Instant::now();
    let mut tail = raw.split_off(head);
    let mut received = tail.len();
    loop {
        let done = match (length, chunked) {
            (Some(n), _) => received >= n,
            (None, true) => tail.ends_with(b"0\r\n\r\n"),
            (None, false) => false,
        };
        // An answer without a body: 1xx, 204, 304.
        if done || matches!(code, 100..=199 | 204 | 304) {
            return Ok(Some(code));
        }
        if received > MAX_PAGE {
            return Err(std::io::Error::other(format!(
                "the page is larger than {} MiB",
                MAX_PAGE >> 20
            )));
        }
        if started.elapsed() > PAGE_DEADLINE {
            return Err(std::io::Error::other(format!(
                "the page did not end within {} s",
                PAGE_DEADLINE.as_secs()
            )));
        }
        match stream.read(&mut buf)? {
            0 => return Ok(Some(code)),
            n => {
                received += n;
                tail.extend_from_slice(&buf[..n]);
                let keep = tail.len().saturating_sub(5);
                tail.drain(..keep);
            }
        }
    }
}

/// The largest page a page load reads.
const MAX_PAGE: usize = 64 << 20;
/// The longest a page load may take.
const PAGE_DEADLINE: Duration = Duration::from_secs(60);

async fn exec(db: &Database, sql: &str) -> Result<(), BenchError> {
    query(&db.sql(sql), &[])
        .execute(db.pool())
        .await
        .map(|_| ())
        .map_err(|e| BenchError::Refused(format!("the database {} failed: {e}", db.shown())))
}

async fn create_tables(db: &Database) -> Result<(), BenchError> {
    drop_tables(db).await;
    exec(
        db,
        "CREATE TABLE headroom_bench_course (id BIGINT PRIMARY KEY, category BIGINT NOT NULL, \
         fullname VARCHAR(255) NOT NULL, summary TEXT NOT NULL, created BIGINT NOT NULL)",
    )
    .await?;
    exec(
        db,
        "CREATE TABLE headroom_bench_module (id BIGINT PRIMARY KEY, course BIGINT NOT NULL, \
         kind VARCHAR(20) NOT NULL, name VARCHAR(255) NOT NULL)",
    )
    .await?;
    exec(
        db,
        "CREATE INDEX headroom_bench_module_course ON headroom_bench_module (course)",
    )
    .await?;
    for start in (1..=COURSES).step_by(100) {
        let rows: Vec<String> = (start..start + 100)
            .map(|id| {
                format!(
                    "({id}, {}, 'Course {id}', 'The summary of course {id}, as a teacher would write it.', {})",
                    id % 20,
                    1_700_000_000 + id * 37
                )
            })
            .collect();
        exec(
            db,
            &format!(
                "INSERT INTO headroom_bench_course VALUES {}",
                rows.join(",")
            ),
        )
        .await?;
    }
    let modules = COURSES * MODULES_PER_COURSE;
    for start in (1..=modules).step_by(500) {
        let rows: Vec<String> = (start..start + 500)
            .map(|id| {
                let course = (id - 1) / MODULES_PER_COURSE + 1;
                let kind = KINDS[((id * 7 + course) % 4) as usize];
                format!("({id}, {course}, '{kind}', 'Activity {id}')")
            })
            .collect();
        exec(
            db,
            &format!(
                "INSERT INTO headroom_bench_module VALUES {}",
                rows.join(",")
            ),
        )
        .await?;
    }
    Ok(())
}

async fn drop_tables(db: &Database) {
    for table in ["headroom_bench_module", "headroom_bench_course"] {
        let _ = query(&format!("DROP TABLE IF EXISTS {table}"), &[])
            .execute(db.pool())
            .await;
    }
}

/// One repetition's ten times in seconds (page loads `None` without a target).
async fn repetition(
    o: &StackOptions,
    url: &str,
    files: &std::path::Path,
    round: u32,
) -> Result<[Option<f64>; 10], BenchError> {
    let mut t = [None; 10];
    let started = Instant::now();
    let db = Database::connect(url, Create::IfMissing, Durability::Full, 1)
        .await
        .map_err(|e| BenchError::Refused(format!("--db: {e}")))?;
    query("SELECT 1", &[])
        .fetch_one(db.pool())
        .await
        .map_err(|e| BenchError::Refused(format!("the database {} failed: {e}", db.shown())))?;
    t[0] = Some(started.elapsed().as_secs_f64());

    let started = Instant::now();
    std::hint::black_box(cpu_loop());
    t[1] = Some(started.elapsed().as_secs_f64());

    let (read, written) = file_times(files)?;
    (t[2], t[3]) = (Some(read), Some(written));

    let queries = query_times(&db, round).await?;
    for (slot, took) in t[4..8].iter_mut().zip(queries) {
        *slot = Some(took);
    }
    db.close().await;

    if let Some(target) = &o.target {
        t[8] = Some(page_load(target)?.as_secs_f64());
        t[9] = Some(page_load(target)?.as_secs_f64());
    }
    Ok(t)
}

/// Reading a 16 KiB file 2000 times and writing 2000 of them (then
/// removed), in seconds each.
fn file_times(files: &std::path::Path) -> Result<(f64, f64), BenchError> {
    let content = vec![b'm'; 16 * 1024];
    let read_file = files.join("read.tmp");
    std::fs::write(&read_file, &content)
        .map_err(io_error(format!("cannot write {}", read_file.display())))?;
    let started = Instant::now();
    let mut buf = Vec::with_capacity(content.len());
    for _ in 0..2000 {
        buf.clear();
        std::fs::File::open(&read_file)
            .and_then(|mut f| f.read_to_end(&mut buf))
            .map_err(io_error(format!("cannot read {}", read_file.display())))?;
    }
    let read = started.elapsed().as_secs_f64();

    let started = Instant::now();
    for i in 0..2000 {
        let path = files.join(format!("write-{i}.tmp"));
        std::fs::write(&path, &content)
            .map_err(io_error(format!("cannot write {}", path.display())))?;
    }
    let written = started.elapsed().as_secs_f64();
    for i in 0..2000 {
        let _ = std::fs::remove_file(files.join(format!("write-{i}.tmp")));
    }
    Ok((read, written))
}

/// The database's times in seconds: 500 reads by key, 25 inserts (keys
/// apart for each `round`), a join grouped, and a grouped subquery.
async fn query_times(db: &Database, round: u32) -> Result<[f64; 4], BenchError> {
    let failed =
        |e: sqlx::Error| BenchError::Refused(format!("the database {} failed: {e}", db.shown()));
    let read_sql = db.sql(
        "SELECT id, category, fullname, summary, created FROM headroom_bench_course WHERE id = ?",
    );
    let started = Instant::now();
    for i in 0..500i64 {
        query(&read_sql, &[Bind::Int((i * 7919) % COURSES + 1)])
            .fetch_one(db.pool())
            .await
            .map_err(failed)?;
    }
    let reads = started.elapsed().as_secs_f64();

    let insert_sql = db.sql("INSERT INTO headroom_bench_course (id, category, fullname, summary, created) VALUES (?, ?, ?, ?, ?)");
    let started = Instant::now();
    for i in 0..25i64 {
        let id = 1_000_000 + i64::from(round) * 100 + i;
        query(
            &insert_sql,
            &[
                Bind::Int(id),
                Bind::Int(id % 20),
                Bind::Text("A new course"),
                Bind::Text("Written by the benchmark."),
                Bind::Int(1_800_000_000 + id),
            ],
        )
        .execute(db.pool())
        .await
        .map_err(failed)?;
    }
    let inserts = started.elapsed().as_secs_f64();

    let started = Instant::now();
    query(
        "SELECT c.category, COUNT(m.id) AS modules, MAX(c.created) AS newest FROM headroom_bench_course c \
         JOIN headroom_bench_module m ON m.course = c.id GROUP BY c.category ORDER BY modules DESC, c.category",
        &[],
    )
    .fetch_all(db.pool())
    .await
    .map_err(failed)?;
    let grouped = started.elapsed().as_secs_f64();

    let q2 = db.sql(
        "SELECT c.id, c.fullname FROM headroom_bench_course c WHERE c.id IN (SELECT m.course FROM \
         headroom_bench_module m WHERE m.kind = ? GROUP BY m.course HAVING COUNT(*) > 2) \
         ORDER BY c.created DESC LIMIT 50",
    );
    let started = Instant::now();
    query(&q2, &[Bind::Text("forum")])
        .fetch_all(db.pool())
        .await
        .map_err(failed)?;
    let subquery = started.elapsed().as_secs_f64();
    Ok([reads, inserts, grouped, subquery])
}

pub fn run(o: &StackOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let scratch = tempdir(&o.dir)?;
    let url =
        o.db.clone()
            .unwrap_or_else(|| format!("sqlite:{}", scratch.0.join("stack.db").display()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io_error("cannot start the database client"))?;
    let mut measures: Vec<_> = TESTS
        .iter()
        .map(|(key, name, _, _)| measure(key, *name, "s", false))
        .collect();
    let mut total = measure("total", "total time", "s", false);
    let mut points = measure(
        "score",
        "score (Moodle's: ceil(total × 100), lower is better)",
        "points",
        false,
    );
    let shown = runtime.block_on(async {
        let db = Database::connect(&url, Create::IfMissing, Durability::Full, 1)
            .await
            .map_err(|e| BenchError::Refused(format!("--db: {e}")))?;
        let shown = db.shown().to_string();
        let made = create_tables(&db).await;
        db.close().await;
        made.map(|()| shown)
    })?;
    let outcome = (|| {
        for round in 0..o.repetitions {
            check(stop)?;
            let times = runtime.block_on(repetition(o, &url, &scratch.0, round))?;
            let mut sum = 0.0;
            for (m, t) in measures.iter_mut().zip(times) {
                if let Some(t) = t {
                    m.values.push(t);
                    sum += t;
                }
            }
            total.values.push(sum);
            points.values.push(score(sum));
        }
        Ok(())
    })();
    runtime.block_on(async {
        if let Ok(db) = Database::connect(&url, Create::MustExist, Durability::Full, 1).await {
            drop_tables(&db).await;
            db.close().await;
        }
    });
    outcome?;
    measures.retain(|m| !m.values.is_empty());
    let mut notes = vec![
        "the times are of headroom's compiled code, not of PHP: they compare machines, databases and \
         disks with each other, not with Moodle's own points"
            .to_string(),
    ];
    if o.target.is_none() {
        notes.push(
            "page loads not run (give --target http://…): the score covers 8 of the 10 tests"
                .into(),
        );
    }
    for (key, name, acceptable, critical) in TESTS {
        if let Some(m) = measures.iter().find(|m| m.key == key) {
            let worst = m.values.iter().copied().fold(0.0, f64::max);
            let v = verdict(worst, acceptable, critical);
            if v != "ok" {
                notes.push(format!(
                    "{name}: {worst:.3} s is past Moodle's {} limit ({} s)",
                    if v == "critical" {
                        "critical"
                    } else {
                        "acceptable"
                    },
                    if v == "critical" {
                        critical
                    } else {
                        acceptable
                    }
                ));
            }
        }
    }
    measures.push(total);
    measures.push(points);
    Ok(BenchResult {
        benchmark: "stack".into(),
        method: "Moodle's system benchmark in spirit: open the database, 10^7 function calls, 2,000 reads \
                 of a 16 KB file, 2,000 writes of 16 KB files, 500 reads of a course by id, 25 inserts \
                 (each committed), a join with grouping and a subquery with HAVING over 1,000 courses and \
                 10,000 activities, two page loads on new connections; score = ceil(total s × 100)"
            .into(),
        settings: settings([
            ("db", shown),
            ("target", o.target.clone().unwrap_or_else(|| "none".into())),
            ("dir", o.dir.display().to_string()),
            ("repetitions", o.repetitions.to_string()),
        ]),
        measures,
        series: Vec::new(),
        notes,
    })
}

/// A directory of our own under `dir`, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir(dir: &std::path::Path) -> Result<Scratch, BenchError> {
    let path = dir.join(format!(".headroom-stack-{}", std::process::id()));
    std::fs::create_dir_all(&path).map_err(io_error(format!(
        "cannot create a directory in {} for the file tests",
        dir.display()
    )))?;
    Ok(Scratch(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_and_limits_as_moodle_counts_them() {
        // 000, Table 6: 1.158 s → 116 points, 1.081 s → 109.
        assert_eq!(score(1.158), 116.0);
        assert_eq!(score(1.081), 109.0);
        assert_eq!(score(1.0), 100.0);
        assert_eq!(verdict(0.4, 0.5, 0.8), "ok");
        assert_eq!(verdict(0.6, 0.5, 0.8), "slow");
        assert_eq!(verdict(0.9, 0.5, 0.8), "critical");
    }

    #[test]
    fn sqlite_without_target_gives_eight_tests_and_cleans_up() {
        let dir = std::env::temp_dir().join(format!("headroom-stack-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = StackOptions {
            db: None,
            target: None,
            dir: dir.clone(),
            repetitions: 2,
        };
        let r = run(&o, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.measures.len(), 10, "8 tests, total, score");
        let score = r.measures.iter().find(|m| m.key == "score").unwrap();
        assert_eq!(score.values.len(), 2);
        assert!(score.values.iter().all(|v| *v >= 1.0));
        assert!(r.notes.iter().any(|n| n.contains("8 of the 10")));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unreachable_database_or_target_is_refused() {
        let dir = std::env::temp_dir();
        let o = StackOptions {
            db: Some("postgres://nobody:x@127.0.0.1:1/none".into()),
            target: None,
            dir: dir.clone(),
            repetitions: 1,
        };
        let e = run(&o, &AtomicBool::new(false)).unwrap_err().to_string();
        assert!(e.contains("--db"), "{e}");
        assert!(page_load("https://example.invalid/")
            .unwrap_err()
            .to_string()
            .contains("plain HTTP"));
        assert!(page_load("http://127.0.0.1:1/")
            .unwrap_err()
            .to_string()
            .contains("cannot load"));
    }
}
