//! A database server's own counters, read once a second on a thread of
//! its own (a database that stalls never holds up the other figures):
//! MariaDB's and MySQL's global status (connections against
//! max_connections, refused connections, row lock waits and the time spent
//! in them, table lock waits, slow queries, temporary tables on disk,
//! buffer pool reads from disk) and PostgreSQL's activity (connections
//! against max_connections, what active backends wait for, deadlocks,
//! blocks read against found in memory) and Redis's INFO (clients
//! against maxclients, rejected connections, its command thread's CPU).
//!
//! Where to connect comes from a credentials file the user names (one URL
//! a line, `mysql://user:password@host/` or `postgres://...`): it is read,
//! never recorded; figures name a database by its address without the
//! user or password. A MariaDB whose process is watched is also found by
//! itself: as root through its unix socket, as Debian lets root in.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One database to read: what it is, where, and how to connect.
#[derive(Clone)]
pub struct DatabaseSource {
    pub kind: DatabaseKind,
    /// The address figures name it by (no user, no password).
    pub address: String,
    url: String,
}

impl std::fmt::Debug for DatabaseSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL holds the password: never printed.
        write!(f, "{:?} {}", self.kind, self.address)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DatabaseKind {
    MariaDb,
    PostgreSql,
    Redis,
}

impl DatabaseKind {
    pub fn name(self) -> &'static str {
        match self {
            DatabaseKind::MariaDb => "MariaDB",
            DatabaseKind::PostgreSql => "PostgreSQL",
            DatabaseKind::Redis => "Redis",
        }
    }
}

/// The sources of a credentials file: one URL a line, `#` comments.
pub fn read_credentials(path: &Path) -> Result<Vec<DatabaseSource>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the credentials file {}: {e}", path.display()))?;
    let mut sources = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        sources.push(source(line).ok_or_else(|| {
            format!(
                "{} line {}: not a database URL (mysql://USER:PASSWORD@HOST[:PORT]/, postgres://USER:PASSWORD@HOST[:PORT]/DATABASE or redis://[:PASSWORD@]HOST[:PORT])",
                path.display(),
                i + 1
            )
        })?);
    }
    Ok(sources)
}

/// A source from a URL: its kind by the scheme, its address without the user.
pub fn source(url: &str) -> Option<DatabaseSource> {
    if let Some((address, _)) = crate::redis::url_parts(url) {
        return Some(DatabaseSource {
            kind: DatabaseKind::Redis,
            address,
            url: url.to_string(),
        });
    }
    let (scheme, rest) = url.split_once("://")?;
    let kind = match scheme {
        "mysql" | "mariadb" => DatabaseKind::MariaDb,
        "postgres" | "postgresql" => DatabaseKind::PostgreSql,
        _ => return None,
    };
    let after_user = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let host = after_user.split(['/', '?']).next().unwrap_or("");
    let socket = rest
        .split_once('?')
        .and_then(|(_, query)| {
            query
                .split('&')
                .find_map(|p| p.strip_prefix("socket=").or(p.strip_prefix("host=")))
        })
        .unwrap_or("");
    let address = if host.is_empty() { socket } else { host };
    if address.is_empty() {
        return None;
    }
    let url = match kind {
        // sqlx speaks "mysql://" for MariaDB too.
        DatabaseKind::MariaDb => format!("mysql://{rest}"),
        DatabaseKind::PostgreSql | DatabaseKind::Redis => url.to_string(),
    };
    Some(DatabaseSource {
        kind,
        address: address.to_string(),
        url,
    })
}

/// A MariaDB found by itself: root through the unix socket at `socket`.
pub fn local_mariadb(socket: &str) -> DatabaseSource {
    DatabaseSource {
        kind: DatabaseKind::MariaDb,
        address: socket.to_string(),
        url: format!("mysql://root@localhost/?socket={socket}"),
    }
}

/// A database's counters at one look.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatabaseLook {
    pub max_connections: u64,
    /// Of max_connections, those kept for superusers (PostgreSQL's
    /// superuser_reserved_connections): the application has the rest.
    pub reserved_connections: u64,
    /// Open connections, this reader's own not counted.
    pub connections: u64,
    /// The most open at any of the quick counts over the second before
    /// this look (twenty a second, where at least half of what it allows
    /// were open at the look before; a connection held 100 ms is seldom
    /// open at one look a second).
    pub most_connections: u64,
    /// Connections running a statement now (our own not counted).
    pub running: u64,
    /// Cumulative counters by name (row_lock_ms, row_lock_waits,
    /// table_locks_waited, slow_queries, tmp_disk_tables, disk_reads,
    /// read_requests, refused, deadlocks).
    pub totals: BTreeMap<&'static str, u64>,
    /// Active connections by what they wait for (PostgreSQL's
    /// wait_event_type; "CPU" when none).
    pub waiting: BTreeMap<String, u64>,
}

/// The latest look at each source, or why there is none.
#[derive(Debug, Clone, Default)]
pub struct DatabaseLooks {
    pub looks: BTreeMap<String, (DatabaseKind, Result<DatabaseLook, String>)>,
}

/// Reads its sources every second on a thread of its own until dropped.
pub struct DatabaseReader {
    latest: Arc<Mutex<DatabaseLooks>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DatabaseReader {
    pub fn start(sources: Vec<DatabaseSource>) -> DatabaseReader {
        let latest = Arc::new(Mutex::new(DatabaseLooks::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopping) = (latest.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("headroom-db".into())
            .spawn(move || read_loop(sources, shared, stopping))
            .ok();
        DatabaseReader {
            latest,
            stop,
            thread,
        }
    }

    /// The latest looks (a copy).
    pub fn latest(&self) -> DatabaseLooks {
        self.latest.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for DatabaseReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The most one look may take before it counts as failed.
const LOOK_TIMEOUT: Duration = Duration::from_millis(800);
/// The most connecting may take (a password's SCRAM exchange is slow on a
/// busy machine); the other figures do not wait for it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

enum Connection {
    MariaDb(sqlx::MySqlConnection),
    PostgreSql(sqlx::PgConnection),
    Redis(crate::redis::RedisConnection),
}

fn read_loop(
    sources: Vec<DatabaseSource>,
    latest: Arc<Mutex<DatabaseLooks>>,
    stop: Arc<AtomicBool>,
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let mut connections: Vec<Option<Connection>> = sources.iter().map(|_| None).collect();
    // Each source's quick counts of open connections since its last look.
    let mut counts: Vec<Vec<u64>> = sources.iter().map(|_| Vec::new()).collect();
    // Whether a source's connections were at least half of what it
    // allows at its last look: only then are they counted between looks.
    let mut near_full: Vec<bool> = sources.iter().map(|_| false).collect();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        for (((source, connection), counted), near) in sources
            .iter()
            .zip(connections.iter_mut())
            .zip(counts.iter_mut())
            .zip(near_full.iter_mut())
        {
            let limit = if connection.is_some() {
                LOOK_TIMEOUT
            } else {
                CONNECT_TIMEOUT
            };
            let look = runtime.block_on(async {
                tokio::time::timeout(limit, look(source, connection))
                    .await
                    .unwrap_or_else(|_| {
                        Err(format!("it did not answer within {} ms", limit.as_millis()))
                    })
            });
            if look.is_err() {
                // Connect again next time.
                *connection = None;
            }
            let look = look.map(|mut look| {
                look.most_connections = counted.iter().copied().fold(look.connections, u64::max);
                look
            });
            counted.clear();
            *near = look.as_ref().is_ok_and(|l| {
                l.most_connections * 2 >= l.max_connections.saturating_sub(l.reserved_connections)
            });
            if let Ok(mut shared) = latest.lock() {
                shared
                    .looks
                    .insert(source.address.clone(), (source.kind, look));
            }
        }
        // Once a second, in slices so that a drop is quick; between the
        // looks, a quick count of connections every 50 ms where they
        // were near full.
        let mut next_count = started + COUNT_EVERY;
        while started.elapsed() < Duration::from_secs(1) && !stop.load(Ordering::Relaxed) {
            if Instant::now() >= next_count {
                next_count = Instant::now() + COUNT_EVERY;
                for ((connection, counted), near) in connections
                    .iter_mut()
                    .zip(counts.iter_mut())
                    .zip(&near_full)
                {
                    let (Some(open), true) = (connection.as_mut(), *near) else {
                        continue;
                    };
                    let counted_now = runtime.block_on(async {
                        tokio::time::timeout(LOOK_TIMEOUT, count_connections(open)).await
                    });
                    // A failed count: the next look says what is wrong.
                    if let Ok(Ok(n)) = counted_now {
                        counted.push(n);
                    }
                }
            }
            std::thread::sleep(
                next_count
                    .saturating_duration_since(Instant::now())
                    .clamp(Duration::from_millis(1), Duration::from_millis(50)),
            );
        }
    }
}

async fn look(
    source: &DatabaseSource,
    connection: &mut Option<Connection>,
) -> Result<DatabaseLook, String> {
    use sqlx::Connection as _;
    let refused = |e: sqlx::Error| format!("cannot connect: {e}");
    if connection.is_none() {
        *connection = Some(match source.kind {
            DatabaseKind::MariaDb => Connection::MariaDb(
                sqlx::MySqlConnection::connect(&source.url)
                    .await
                    .map_err(refused)?,
            ),
            DatabaseKind::PostgreSql => Connection::PostgreSql(
                sqlx::PgConnection::connect(&source.url)
                    .await
                    .map_err(refused)?,
            ),
            DatabaseKind::Redis => {
                let login = crate::redis::url_parts(&source.url).and_then(|(_, login)| login);
                Connection::Redis(
                    crate::redis::RedisConnection::connect(&source.address, login.as_ref())
                        .await
                        .map_err(|e| format!("cannot connect: {e}"))?,
                )
            }
        });
    }
    let failed = |e: sqlx::Error| format!("its status could not be read: {e}");
    match connection.as_mut() {
        Some(Connection::MariaDb(c)) => mariadb_look(c).await.map_err(failed),
        Some(Connection::PostgreSql(c)) => postgresql_look(c).await.map_err(failed),
        Some(Connection::Redis(c)) => redis_look(c)
            .await
            .map_err(|e| format!("its INFO could not be read: {e}")),
        None => Err("not connected".into()),
    }
}

/// How often connections are counted between looks.
const COUNT_EVERY: Duration = Duration::from_millis(50);

/// Open connections now, this reader's own not counted.
async fn count_connections(connection: &mut Connection) -> Result<u64, sqlx::Error> {
    let n: i64 = match connection {
        Connection::Redis(c) => {
            let info = c
                .info(Some("clients"))
                .await
                .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
            let open: i64 = info
                .get("connected_clients")
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            open - 1
        }
        Connection::MariaDb(c) => {
            sqlx::query_scalar("SELECT CAST(VARIABLE_VALUE AS SIGNED) - 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'")
                .fetch_one(&mut *c)
                .await?
        }
        Connection::PostgreSql(c) => {
            sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
            )
            .fetch_one(&mut *c)
            .await?
        }
    };
    Ok(n.max(0) as u64)
}

/// MariaDB's status names and what they count here.
const MARIADB: [(&str, &str); 11] = [
    ("Threads_connected", "connections"),
    ("Threads_running", "running"),
    ("Innodb_row_lock_time", "row_lock_ms"),
    ("Innodb_row_lock_waits", "row_lock_waits"),
    ("Table_locks_waited", "table_locks_waited"),
    ("Slow_queries", "slow_queries"),
    ("Created_tmp_disk_tables", "tmp_disk_tables"),
    ("Innodb_buffer_pool_reads", "disk_reads"),
    ("Innodb_buffer_pool_read_requests", "read_requests"),
    ("Connection_errors_max_connections", "refused"),
    ("Innodb_row_lock_current_waits", "row_lock_current_waits"),
];

async fn mariadb_look(c: &mut sqlx::MySqlConnection) -> Result<DatabaseLook, sqlx::Error> {
    use sqlx::Row;
    let names: Vec<String> = MARIADB.iter().map(|(n, _)| format!("'{n}'")).collect();
    let rows = sqlx::query(&format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(",")
    ))
    .fetch_all(&mut *c)
    .await?;
    let mut look = DatabaseLook::default();
    for row in rows {
        let name: String = row.try_get(0)?;
        let value: String = row.try_get(1)?;
        let Some((_, ours)) = MARIADB.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)) else {
            continue;
        };
        let value = value.trim().parse::<u64>().unwrap_or(0);
        match *ours {
            // This look's own connection is open too.
            "connections" => look.connections = value.saturating_sub(1),
            // This look's own statement runs too.
            "running" => look.running = value.saturating_sub(1),
            other => {
                look.totals.insert(other, value);
            }
        }
    }
    let max: u64 = sqlx::query_scalar::<_, u64>("SELECT CAST(@@max_connections AS UNSIGNED)")
        .fetch_one(&mut *c)
        .await?;
    look.max_connections = max;
    Ok(look)
}

/// Redis's INFO: clients (its own connection not counted) against
/// maxclients, rejected connections, blocked clients, and its main
/// thread's CPU time.
async fn redis_look(
    c: &mut crate::redis::RedisConnection,
) -> Result<DatabaseLook, crate::redis::RedisError> {
    let info = c.info(None).await?;
    let number = |name: &str| -> u64 {
        info.get(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut look = DatabaseLook {
        max_connections: number("maxclients"),
        connections: number("connected_clients").saturating_sub(1),
        ..Default::default()
    };
    look.totals
        .insert("refused", number("rejected_connections"));
    look.totals
        .insert("commands", number("total_commands_processed"));
    if let Some(us) = crate::redis::main_thread_cpu_us(&info) {
        look.totals.insert("main_thread_cpu_us", us);
    }
    let blocked = number("blocked_clients");
    if blocked > 0 {
        look.waiting.insert("blocked".into(), blocked);
    }
    Ok(look)
}

async fn postgresql_look(c: &mut sqlx::PgConnection) -> Result<DatabaseLook, sqlx::Error> {
    let (max, reserved, connections): (i64, i64, i64) = sqlx::query_as(
        "SELECT current_setting('max_connections')::bigint, \
         current_setting('superuser_reserved_connections')::bigint, \
         (SELECT count(*) FROM pg_stat_activity \
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())",
    )
    .fetch_one(&mut *c)
    .await?;
    let waiting: Vec<(String, i64)> = sqlx::query_as(
        "SELECT coalesce(wait_event_type, 'CPU'), count(*) FROM pg_stat_activity \
         WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() \
         GROUP BY 1",
    )
    .fetch_all(&mut *c)
    .await?;
    let (deadlocks, read, hit): (i64, i64, i64) = sqlx::query_as(
        "SELECT coalesce(sum(deadlocks), 0)::bigint, coalesce(sum(blks_read), 0)::bigint, \
         coalesce(sum(blks_hit), 0)::bigint FROM pg_stat_database",
    )
    .fetch_one(&mut *c)
    .await?;
    let mut look = DatabaseLook {
        max_connections: max.max(0) as u64,
        reserved_connections: reserved.clamp(0, max.max(0)) as u64,
        connections: connections.max(0) as u64,
        running: waiting.iter().map(|(_, n)| n.max(&0)).sum::<i64>() as u64,
        ..Default::default()
    };
    look.totals.insert("deadlocks", deadlocks.max(0) as u64);
    look.totals.insert("disk_reads", read.max(0) as u64);
    look.totals
        .insert("read_requests", (read + hit).max(0) as u64);
    look.waiting = waiting
        .into_iter()
        .map(|(kind, n)| (kind, n.max(0) as u64))
        .collect();
    Ok(look)
}

/// A database over one interval, as the figures hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatabaseFigures {
    /// "MariaDB" or "PostgreSQL".
    pub server: String,
    pub address: String,
    /// Why there are no figures this second (the database refused us, did
    /// not answer); then the others are zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    pub connections: u64,
    /// The most open at the quick counts (twenty a second) over the interval.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub most_connections: u64,
    pub max_connections: u64,
    /// Of max_connections, those kept for superusers (PostgreSQL).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserved_connections: u64,
    /// Connections running a statement at the look.
    pub running: u64,
    /// Transactions waiting for a row lock, on average over the interval
    /// (MariaDB's row lock time grew by this many seconds a second), or
    /// active backends waiting for a lock at the look (PostgreSQL).
    #[serde(default)]
    pub lock_waiting: f64,
    #[serde(default)]
    pub lock_waits_s: f64,
    /// Connections refused because max_connections were open (MariaDB).
    #[serde(default)]
    pub refused_s: f64,
    #[serde(default)]
    pub table_lock_waits_s: f64,
    #[serde(default)]
    pub slow_queries_s: f64,
    #[serde(default)]
    pub tmp_disk_tables_s: f64,
    /// Pages read from disk a second (not found in memory).
    #[serde(default)]
    pub disk_reads_s: f64,
    #[serde(default)]
    pub deadlocks_s: f64,
    /// Active connections by what they wait for (PostgreSQL), or clients
    /// blocked in a waiting command (Redis's "blocked").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting: BTreeMap<String, u64>,
    /// The share of one core its command thread was busy (Redis's main
    /// thread, which runs every command one at a time), %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_thread_pct: Option<f64>,
    /// Commands run a second (Redis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands_s: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Each source's figures between two looks `seconds` apart.
pub fn database_figures(
    old: &DatabaseLooks,
    new: &DatabaseLooks,
    seconds: f64,
) -> Vec<DatabaseFigures> {
    new.looks
        .iter()
        .map(|(address, (kind, look))| {
            let mut figures = DatabaseFigures {
                server: kind.name().into(),
                address: address.clone(),
                problem: None,
                connections: 0,
                most_connections: 0,
                max_connections: 0,
                reserved_connections: 0,
                running: 0,
                lock_waiting: 0.0,
                lock_waits_s: 0.0,
                refused_s: 0.0,
                table_lock_waits_s: 0.0,
                slow_queries_s: 0.0,
                tmp_disk_tables_s: 0.0,
                disk_reads_s: 0.0,
                deadlocks_s: 0.0,
                waiting: BTreeMap::new(),
                command_thread_pct: None,
                commands_s: None,
            };
            let look = match look {
                Ok(look) => look,
                Err(problem) => {
                    figures.problem = Some(problem.clone());
                    return figures;
                }
            };
            let before = old.looks.get(address).and_then(|(_, l)| l.as_ref().ok());
            let rate = |name: &str| -> f64 {
                let now = look.totals.get(name).copied().unwrap_or(0);
                let then = before
                    .and_then(|b| b.totals.get(name).copied())
                    .unwrap_or(now);
                now.saturating_sub(then) as f64 / seconds
            };
            figures.connections = look.connections;
            figures.most_connections = look.most_connections.max(look.connections);
            figures.max_connections = look.max_connections;
            figures.reserved_connections = look.reserved_connections;
            figures.running = look.running;
            figures.lock_waiting = match kind {
                DatabaseKind::MariaDb => rate("row_lock_ms") / 1000.0,
                DatabaseKind::PostgreSql => look.waiting.get("Lock").copied().unwrap_or(0) as f64,
                DatabaseKind::Redis => 0.0,
            };
            if *kind == DatabaseKind::Redis {
                let measured = before.is_some_and(|b| b.totals.contains_key("main_thread_cpu_us"));
                figures.command_thread_pct = (measured
                    && look.totals.contains_key("main_thread_cpu_us"))
                .then(|| (rate("main_thread_cpu_us") / 1e4).min(100.0));
                figures.commands_s = before.is_some().then(|| rate("commands"));
            }
            figures.lock_waits_s = rate("row_lock_waits");
            figures.refused_s = rate("refused");
            figures.table_lock_waits_s = rate("table_locks_waited");
            figures.slow_queries_s = rate("slow_queries");
            figures.tmp_disk_tables_s = rate("tmp_disk_tables");
            figures.disk_reads_s = rate("disk_reads");
            figures.deadlocks_s = rate("deadlocks");
            figures.waiting = look.waiting.clone();
            figures
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_its_database_by_address_not_by_user() {
        let s = source("mysql://monitor:s3cret@127.0.0.1:3306/").unwrap();
        assert_eq!(
            (s.kind, s.address.as_str()),
            (DatabaseKind::MariaDb, "127.0.0.1:3306")
        );
        assert!(!format!("{s:?}").contains("s3cret"));
        let s = source("postgres://u:p@db.local/app").unwrap();
        assert_eq!(
            (s.kind, s.address.as_str()),
            (DatabaseKind::PostgreSql, "db.local")
        );
        let s = source("mariadb://root@localhost/?socket=/run/mysqld/mysqld.sock").unwrap();
        assert_eq!(s.address, "localhost");
        assert_eq!(
            s.url,
            "mysql://root@localhost/?socket=/run/mysqld/mysqld.sock"
        );
        let s = source("redis://:s3cret@127.0.0.1/0").unwrap();
        assert_eq!(
            (s.kind, s.address.as_str()),
            (DatabaseKind::Redis, "127.0.0.1:6379")
        );
        assert!(!format!("{s:?}").contains("s3cret"));
        assert!(source("memcached://127.0.0.1/").is_none());
        assert!(source("not a url").is_none());
    }

    #[test]
    fn a_credentials_file_is_read_line_by_line() {
        let path = std::env::temp_dir().join(format!("headroom-creds-{}", std::process::id()));
        std::fs::write(
            &path,
            "# ours\nmysql://m:p@127.0.0.1/\n\npostgres://u:p@127.0.0.1/x\n",
        )
        .unwrap();
        let sources = read_credentials(&path).unwrap();
        assert_eq!(sources.len(), 2);
        std::fs::write(&path, "mysql://m:p@127.0.0.1/\nftp://x\n").unwrap();
        let e = read_credentials(&path).unwrap_err();
        assert!(e.contains("line 2: not a database URL"), "{e}");
        assert!(!e.contains("m:p"), "{e}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn figures_are_rates_between_looks() {
        let look = |lock_ms: u64, waits: u64| {
            let mut l = DatabaseLook {
                max_connections: 151,
                connections: 22,
                running: 9,
                ..Default::default()
            };
            l.totals.insert("row_lock_ms", lock_ms);
            l.totals.insert("row_lock_waits", waits);
            l
        };
        let one = |l: Result<DatabaseLook, String>| DatabaseLooks {
            looks: [("127.0.0.1".to_string(), (DatabaseKind::MariaDb, l))].into(),
        };
        let f = database_figures(&one(Ok(look(1000, 10))), &one(Ok(look(7000, 70))), 2.0);
        assert_eq!(f[0].lock_waiting, 3.0);
        assert_eq!(f[0].lock_waits_s, 30.0);
        assert_eq!(
            (f[0].connections, f[0].max_connections, f[0].running),
            (22, 151, 9)
        );
        let f = database_figures(&one(Ok(look(1000, 10))), &one(Err("refused".into())), 1.0);
        assert_eq!(f[0].problem.as_deref(), Some("refused"));
    }
}
