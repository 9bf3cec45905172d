//! The database: one connection pool over SQLite, PostgreSQL or MariaDB
//! (sqlx's Any driver), SQL written once with `?` placeholders, and the
//! per-request accounting Moodle prints in its footer (reads, writes, time).

use headroom_monitor::gauges::{PoolGauge, Visit};
use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Connection, Executor};
use std::borrow::Cow;
use std::future::Future;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
    MySql,
}

/// How much a database promises to keep a committed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Every commit reaches the disk before it returns (the main database).
    Full,
    /// Commits may be lost in a crash (PostgreSQL `synchronous_commit=off`,
    /// MariaDB `innodb_flush_log_at_trx_commit=0`, SQLite `synchronous=OFF`):
    /// the "separate session database" of the caching study.
    Relaxed,
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("unsupported database URL '{0}': use sqlite:FILE, postgres://USER:PASS@HOST/DB or mysql://USER:PASS@HOST/DB (mariadb:// works too)")]
    Scheme(String),
    #[error("cannot open the database {url}: {source}{hint}")]
    Connect {
        url: String,
        source: sqlx::Error,
        hint: &'static str,
    },
    #[error("database query failed: {0}")]
    Query(#[from] sqlx::Error),
    #[error("{0} is not a SQLite database (its first bytes are not \"SQLite format 3\"): give another file, or create one with `headroom testbed init --db sqlite:FILE`")]
    NotSqlite(String),
    #[error("{0} starts like a SQLite database but is damaged (its header's page size or versions are invalid, or it is not whole pages): restore it from a copy, or create a new one with `headroom testbed init --db sqlite:FILE --force`")]
    DamagedSqlite(String),
}

/// A SQLite URL's file that exists but holds something else: SQLite would
/// answer only when the pool's timeout runs out.
fn check_sqlite_file(url: &str) -> Result<(), DbError> {
    use std::io::Read;
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Ok(());
    };
    let path = rest.trim_start_matches("//");
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(());
    };
    let mut head = [0u8; 100];
    let n = file.read(&mut head).unwrap_or(0);
    if n == 0 {
        return Ok(());
    }
    if !head.starts_with(b"SQLite format 3\0") {
        return Err(DbError::NotSqlite(path.to_string()));
    }
    // The header's page size (a power of two from 512, 1 meaning 65536)
    // and format versions (1 or 2); a database file is whole pages.
    let page = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65536,
        size => u64::from(size),
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let whole = n >= 20
        && (512..=65536).contains(&page)
        && page.is_power_of_two()
        && (1..=2).contains(&head[18])
        && (1..=2).contains(&head[19])
        && size % page == 0;
    if whole {
        Ok(())
    } else {
        Err(DbError::DamagedSqlite(path.to_string()))
    }
}

/// The connection pool and its dialect.
#[derive(Clone)]
pub struct Database {
    pool: AnyPool,
    dialect: Dialect,
    /// The URL without its password, for messages.
    shown: String,
    /// SQLite's one writer, counted (see [`write`](Database::write)).
    writer: Option<Arc<PoolGauge>>,
}

/// What to change when SQLite's writer limits the site.
const WRITER_ADVICE: &str = "SQLite writes one transaction at a time, each synced to the disk: serve the testbed from PostgreSQL or MariaDB (headroom testbed init --db postgres://...), or keep its sessions out of the database (--sessions redis://...), which takes several writes off every page";

/// Database work done for one request, as in Moodle's footer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Perf {
    pub reads: u32,
    pub writes: u32,
    pub db_time: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Whether the SQLite file may be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    IfMissing,
    MustExist,
}

static DRIVERS: Once = Once::new();

/// The URL with any password replaced by `***`.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

fn normalise(url: &str, create: Create) -> Result<(String, Dialect), DbError> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("mariadb://") {
        return Ok((
            format!("mysql://{}", &url["mariadb://".len()..]),
            Dialect::MySql,
        ));
    }
    if lower.starts_with("mysql://") {
        return Ok((url.to_string(), Dialect::MySql));
    }
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Ok((url.to_string(), Dialect::Postgres));
    }
    if lower.starts_with("sqlite:") {
        let path = url["sqlite:".len()..].trim_start_matches("//");
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        if path.is_empty() {
            return Err(DbError::Scheme(url.to_string()));
        }
        let mode = match create {
            Create::IfMissing => "rwc",
            Create::MustExist => "rw",
        };
        let mut full = format!("sqlite://{path}?mode={mode}");
        if !query.is_empty() {
            full.push('&');
            full.push_str(query);
        }
        return Ok((full, Dialect::Sqlite));
    }
    Err(DbError::Scheme(url.to_string()))
}

impl Database {
    /// Connects (and for SQLite with `Create::IfMissing`, creates the file).
    pub async fn connect(
        url: &str,
        create: Create,
        durability: Durability,
        max_connections: u32,
    ) -> Result<Database, DbError> {
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let (full, dialect) = normalise(url, create)?;
        if dialect == Dialect::Sqlite {
            check_sqlite_file(url)?;
        }
        let shown = redact(url);
        // One connection first: the pool would retry a refused connection
        // until its timeout and then only say that it timed out.
        let probe =
            tokio::time::timeout(Duration::from_secs(10), sqlx::AnyConnection::connect(&full))
                .await
                .unwrap_or(Err(sqlx::Error::PoolTimedOut));
        match probe {
            Ok(conn) => {
                let _ = conn.close().await;
            }
            Err(source) => {
                return Err(DbError::Connect {
                    hint: connect_hint(dialect, &source, create),
                    url: shown,
                    source,
                })
            }
        }
        let options = AnyPoolOptions::new()
            .max_connections(max_connections.max(1))
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    for statement in session_settings(dialect, durability) {
                        conn.execute(*statement).await?;
                    }
                    Ok(())
                })
            });
        let pool = options
            .connect(&full)
            .await
            .map_err(|source| DbError::Connect {
                hint: connect_hint(dialect, &source, create),
                url: shown.clone(),
                source,
            })?;
        if dialect == Dialect::MySql && durability == Durability::Relaxed {
            // A global variable: it needs the SUPER privilege and applies to
            // the whole server, which is why relaxed sessions belong in a
            // separate MariaDB server.
            pool.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
                .await
                .map_err(|source| DbError::Connect {
                    url: shown.clone(),
                    source,
                    hint: " (relaxed durability sets innodb_flush_log_at_trx_commit=0, which needs the SUPER privilege)",
                })?;
        }
        let writer = (dialect == Dialect::Sqlite)
            .then(|| PoolGauge::register("the testbed", "SQLite writer", 1, WRITER_ADVICE));
        Ok(Database {
            pool,
            dialect,
            shown,
            writer,
        })
    }

    /// SQLite writes one transaction at a time: the site's writes in
    /// flight are counted as work in its writer, one served and the rest
    /// waiting for SQLite's lock, for the monitor
    /// ([`headroom_monitor::gauges`]), which names the writer when it is
    /// what limits the site. Hold the visit over a write or a whole
    /// transaction; `None` on other databases, which write in parallel.
    pub fn writing(&self) -> Option<Visit<'_>> {
        self.writer.as_ref().map(|gauge| gauge.enter())
    }

    /// Runs one write, counted in the writer.
    pub async fn write<T>(
        &self,
        call: impl Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, sqlx::Error> {
        let _writing = self.writing();
        call.await
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The URL, password hidden.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The SQL for this dialect: `?` placeholders become `$1, $2, ...` on
    /// PostgreSQL. Our statements never hold a literal `?`.
    pub fn sql<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.dialect != Dialect::Postgres || !text.contains('?') {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len() + 8);
        let mut n = 0;
        for c in text.chars() {
            if c == '?' {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            } else {
                out.push(c);
            }
        }
        Cow::Owned(out)
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn session_settings(dialect: Dialect, durability: Durability) -> &'static [&'static str] {
    match (dialect, durability) {
        (Dialect::Sqlite, Durability::Full) => &[
            "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = FULL",
            "PRAGMA busy_timeout = 10000",
            "PRAGMA foreign_keys = OFF",
        ],
        (Dialect::Sqlite, Durability::Relaxed) => &[
            "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = OFF",
            "PRAGMA busy_timeout = 10000",
        ],
        (Dialect::Postgres, Durability::Full) => &[],
        (Dialect::Postgres, Durability::Relaxed) => &["SET synchronous_commit = off"],
        (Dialect::MySql, _) => &["SET SESSION sql_mode = 'TRADITIONAL,ANSI_QUOTES'"],
    }
}

fn connect_hint(dialect: Dialect, error: &sqlx::Error, create: Create) -> &'static str {
    let text = error.to_string();
    match dialect {
        Dialect::Sqlite if create == Create::MustExist && text.contains("unable to open") => {
            " (no such database file: create it with `headroom testbed init --db sqlite:FILE`)"
        }
        Dialect::Sqlite if matches!(error, sqlx::Error::PoolTimedOut) => {
            " (SQLite did not open the file within 10 s: it is damaged, or another process holds a lock on it; restore it from a copy or create a new one with `headroom testbed init --db sqlite:FILE --force`)"
        }
        _ if text.contains("refused") => {
            " (nothing listens there: is the database server running, on that host and port?)"
        }
        _ if text.contains("password") || text.contains("Access denied") => {
            " (check the user name and password in the URL)"
        }
        _ if text.contains("does not exist") || text.contains("Unknown database") => {
            " (create the database first, e.g. `createdb NAME` or `CREATE DATABASE NAME`)"
        }
        _ => "",
    }
}

/// A value bound to a `?` placeholder.
#[derive(Debug, Clone, Copy)]
pub enum Bind<'a> {
    Int(i64),
    Text(&'a str),
}

/// A statement with its values bound.
pub fn query<'q>(sql: &'q str, binds: &[Bind<'q>]) -> Query<'q, Any, AnyArguments<'q>> {
    let mut query = sqlx::query(sql);
    for bind in binds {
        query = match *bind {
            Bind::Int(n) => query.bind(n),
            Bind::Text(t) => query.bind(t),
        };
    }
    query
}

/// Runs one database call and counts it in `perf`.
pub async fn timed<T>(
    perf: &mut Perf,
    access: Access,
    call: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, sqlx::Error> {
    let started = Instant::now();
    let result = call.await;
    perf.db_time += started.elapsed();
    match access {
        Access::Read => perf.reads += 1,
        Access::Write => perf.writes += 1,
    }
    result
}

/// Column helpers that read integers whatever width the database returns.
pub trait RowExt {
    fn int(&self, column: &str) -> i64;
    fn text(&self, column: &str) -> String;
    fn opt_int(&self, column: &str) -> Option<i64>;
}

impl RowExt for AnyRow {
    fn int(&self, column: &str) -> i64 {
        self.opt_int(column).unwrap_or(0)
    }

    fn opt_int(&self, column: &str) -> Option<i64> {
        use sqlx::Row;
        if let Ok(v) = self.try_get::<Option<i64>, _>(column) {
            return v;
        }
        if let Ok(v) = self.try_get::<Option<i32>, _>(column) {
            return v.map(i64::from);
        }
        if let Ok(v) = self.try_get::<Option<f64>, _>(column) {
            return v.map(|f| f as i64);
        }
        self.try_get::<Option<String>, _>(column)
            .ok()
            .flatten()
            .and_then(|s| s.parse().ok())
    }

    fn text(&self, column: &str) -> String {
        use sqlx::Row;
        if let Ok(v) = self.try_get::<Option<String>, _>(column) {
            return v.unwrap_or_default();
        }
        self.try_get::<Option<Vec<u8>>, _>(column)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_to_dialects() {
        let (u, d) = normalise("sqlite:lms.db", Create::IfMissing).unwrap();
        assert_eq!(
            (u.as_str(), d),
            ("sqlite://lms.db?mode=rwc", Dialect::Sqlite)
        );
        let (u, _) = normalise("sqlite:///tmp/a.db", Create::MustExist).unwrap();
        assert_eq!(u, "sqlite:///tmp/a.db?mode=rw");
        let (u, d) = normalise("mariadb://u:p@h/db", Create::MustExist).unwrap();
        assert_eq!((u.as_str(), d), ("mysql://u:p@h/db", Dialect::MySql));
        assert!(normalise("mongodb://h/db", Create::MustExist)
            .unwrap_err()
            .to_string()
            .contains("postgres://"));
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
    }
}
