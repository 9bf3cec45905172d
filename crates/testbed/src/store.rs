//! Session and cache stores: where the site keeps a user's session and what
//! it caches, chosen by URL so that the stores can be compared, as the
//! caching study compared Moodle's.

use crate::db::{Create, Database, Durability, RowExt};
use crate::memcached::{Memcached, Stored};
use crate::store_error::failed;
pub use crate::store_error::StoreError;
use crate::{schema, Error};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Sessions live this long without a request.
pub const SESSION_TTL_S: u32 = 7200;
/// A lock older than this is taken over (its holder died).
pub const LOCK_TTL_S: u32 = 30;

/// `--sessions` as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionSpec {
    Db,
    DbSeparate(String),
    Redis(String),
    Memcached(String),
    Files(PathBuf),
}

/// `--cache` as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheSpec {
    None,
    Local,
    Redis(String),
    Memcached(String),
}

fn memcached_addr(url: &str) -> Result<String, String> {
    let rest = url.trim_start_matches("memcached://").trim_end_matches('/');
    if rest.is_empty() {
        return Err(format!(
            "'{url}' names no host: use memcached://HOST[:PORT]"
        ));
    }
    Ok(if rest.contains(':') {
        rest.to_string()
    } else {
        format!("{rest}:11211")
    })
}

impl std::str::FromStr for SessionSpec {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text == "db" {
            return Ok(SessionSpec::Db);
        }
        if let Some(url) = text.strip_prefix("db-separate:") {
            return Ok(SessionSpec::DbSeparate(url.to_string()));
        }
        if text.starts_with("redis://") {
            return Ok(SessionSpec::Redis(text.to_string()));
        }
        if text.starts_with("memcached://") {
            return memcached_addr(text).map(SessionSpec::Memcached);
        }
        if let Some(dir) = text.strip_prefix("files:") {
            if !dir.is_empty() {
                return Ok(SessionSpec::Files(PathBuf::from(dir)));
            }
        }
        Err(format!(
            "unknown session store '{text}': use db, db-separate:DATABASE_URL, redis://HOST[:PORT], memcached://HOST[:PORT] or files:DIR"
        ))
    }
}

impl std::str::FromStr for CacheSpec {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "none" => Ok(CacheSpec::None),
            "local" => Ok(CacheSpec::Local),
            _ if text.starts_with("redis://") => Ok(CacheSpec::Redis(text.to_string())),
            _ if text.starts_with("memcached://") => memcached_addr(text).map(CacheSpec::Memcached),
            _ => Err(format!(
                "unknown cache store '{text}': use none, local, redis://HOST[:PORT] or memcached://HOST[:PORT]"
            )),
        }
    }
}

/// The text that parses back to the same store (for the cluster's nodes).
impl std::fmt::Display for SessionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionSpec::Db => f.write_str("db"),
            SessionSpec::DbSeparate(url) => write!(f, "db-separate:{url}"),
            SessionSpec::Redis(url) => f.write_str(url),
            SessionSpec::Memcached(addr) => write!(f, "memcached://{addr}"),
            SessionSpec::Files(dir) => write!(f, "files:{}", dir.display()),
        }
    }
}

impl std::fmt::Display for CacheSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheSpec::None => f.write_str("none"),
            CacheSpec::Local => f.write_str("local"),
            CacheSpec::Redis(url) => f.write_str(url),
            CacheSpec::Memcached(addr) => write!(f, "memcached://{addr}"),
        }
    }
}

async fn redis_connect(url: &str) -> Result<ConnectionManager, Error> {
    let client = redis::Client::open(url).map_err(|e| Error::Store(failed("redis", e)))?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Duration::from_secs(2))
        .set_response_timeout(Duration::from_secs(2))
        .set_number_of_retries(1)
        .set_max_delay(500);
    let mut conn = tokio::time::timeout(
        Duration::from_secs(5),
        ConnectionManager::new_with_config(client, config),
    )
    .await
    .map_err(|_| Error::Store(failed("redis", format!("{url} did not answer within 5 s"))))?
    .map_err(|e| {
        Error::Store(failed(
            "redis",
            format!("cannot connect to {url}: {e} (is redis-server running there?)"),
        ))
    })?;
    redis::cmd("PING")
        .query_async::<String>(&mut conn)
        .await
        .map_err(|e| Error::Store(failed("redis", format!("{url} does not answer PING: {e}"))))?;
    Ok(conn)
}

async fn memcached_connect(addr: &str) -> Result<Memcached, Error> {
    Memcached::connect(addr).await.map_err(|e| {
        Error::Store(failed(
            "memcached",
            format!("cannot connect to {addr}: {e} (is memcached running there?)"),
        ))
    })
}

pub fn now_s() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Where sessions are kept.
pub enum SessionStore {
    Db(Database),
    Redis(ConnectionManager),
    Memcached(Memcached),
    Files(PathBuf),
}

impl SessionStore {
    /// Opens the store; an unreachable store is an error at start.
    pub async fn open(spec: &SessionSpec, main: &Database) -> Result<SessionStore, Error> {
        Ok(match spec {
            SessionSpec::Db => SessionStore::Db(main.clone()),
            SessionSpec::DbSeparate(url) => {
                let db = Database::connect(url, Create::IfMissing, Durability::Relaxed, 8).await?;
                schema::ensure_session_tables(&db).await?;
                SessionStore::Db(db)
            }
            SessionSpec::Redis(url) => SessionStore::Redis(redis_connect(url).await?),
            SessionSpec::Memcached(addr) => SessionStore::Memcached(memcached_connect(addr).await?),
            SessionSpec::Files(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    path: dir.clone(),
                    source,
                })?;
                SessionStore::Files(dir.clone())
            }
        })
    }

    /// The name shown in the footer, as Moodle shows its handler's class.
    pub fn name(&self) -> &'static str {
        match self {
            SessionStore::Db(_) => "database",
            SessionStore::Redis(_) => "redis",
            SessionStore::Memcached(_) => "memcached",
            SessionStore::Files(_) => "files",
        }
    }

    fn file(dir: &std::path::Path, sid: &str, suffix: &str) -> PathBuf {
        dir.join(format!("sess_{sid}{suffix}"))
    }

    pub async fn load(&self, sid: &str) -> Result<Option<String>, StoreError> {
        let name = self.name();
        match self {
            SessionStore::Db(db) => {
                let row = sqlx::query(&db.sql("SELECT data FROM tb_sessions WHERE sid = ?"))
                    .bind(sid)
                    .fetch_optional(db.pool())
                    .await
                    .map_err(|e| failed(name, e))?;
                Ok(row.map(|r| r.text("data")))
            }
            SessionStore::Redis(conn) => redis::cmd("GET")
                .arg(format!("sess:{sid}"))
                .query_async::<Option<String>>(&mut conn.clone())
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Memcached(mc) => Ok(mc
                .get(&format!("sess_{sid}"))
                .await
                .map_err(|e| failed(name, e))?
                .map(|b| String::from_utf8_lossy(&b).into_owned())),
            SessionStore::Files(dir) => {
                match tokio::fs::read_to_string(Self::file(dir, sid, "")).await {
                    Ok(text) => Ok(Some(text)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(failed(name, e)),
                }
            }
        }
    }

    pub async fn save(&self, sid: &str, data: &str) -> Result<(), StoreError> {
        let name = self.name();
        match self {
            SessionStore::Db(db) => {
                let upsert = match db.dialect() {
                    crate::db::Dialect::MySql => {
                        "INSERT INTO tb_sessions (sid, data, timemodified) VALUES (?, ?, ?) \
                         ON DUPLICATE KEY UPDATE data = VALUES(data), timemodified = VALUES(timemodified)"
                    }
                    _ => {
                        "INSERT INTO tb_sessions (sid, data, timemodified) VALUES (?, ?, ?) \
                         ON CONFLICT (sid) DO UPDATE SET data = excluded.data, timemodified = excluded.timemodified"
                    }
                };
                db.write(
                    sqlx::query(&db.sql(upsert))
                        .bind(sid)
                        .bind(data)
                        .bind(now_s())
                        .execute(db.pool()),
                )
                .await
                .map(|_| ())
                .map_err(|e| failed(name, e))
            }
            SessionStore::Redis(conn) => redis::cmd("SET")
                .arg(format!("sess:{sid}"))
                .arg(data)
                .arg("EX")
                .arg(SESSION_TTL_S)
                .query_async::<()>(&mut conn.clone())
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Memcached(mc) => mc
                .set(&format!("sess_{sid}"), data.as_bytes(), SESSION_TTL_S)
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Files(dir) => {
                // Written aside and renamed, so a reader never sees half a file.
                let path = Self::file(dir, sid, "");
                let temp = Self::file(dir, sid, ".tmp");
                tokio::fs::write(&temp, data)
                    .await
                    .map_err(|e| failed(name, e))?;
                tokio::fs::rename(&temp, &path)
                    .await
                    .map_err(|e| failed(name, e))
            }
        }
    }

    pub async fn destroy(&self, sid: &str) -> Result<(), StoreError> {
        let name = self.name();
        match self {
            SessionStore::Db(db) => db
                .write(
                    sqlx::query(&db.sql("DELETE FROM tb_sessions WHERE sid = ?"))
                        .bind(sid)
                        .execute(db.pool()),
                )
                .await
                .map(|_| ())
                .map_err(|e| failed(name, e)),
            SessionStore::Redis(conn) => redis::cmd("DEL")
                .arg(format!("sess:{sid}"))
                .query_async::<()>(&mut conn.clone())
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Memcached(mc) => mc
                .delete(&format!("sess_{sid}"))
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Files(dir) => {
                match tokio::fs::remove_file(Self::file(dir, sid, "")).await {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(failed(name, e)),
                }
            }
        }
    }

    /// Takes the session's lock if nobody holds it (Moodle's per-session
    /// lock: one request of a user at a time). A lock older than
    /// LOCK_TTL_S is taken over.
    pub async fn try_lock(&self, sid: &str) -> Result<bool, StoreError> {
        let name = self.name();
        match self {
            SessionStore::Db(db) => {
                let now = now_s();
                // Both in the writer: the stale lock's removal and the
                // new one.
                let _writing = db.writing();
                sqlx::query(&db.sql("DELETE FROM tb_session_locks WHERE sid = ? AND expires < ?"))
                    .bind(sid)
                    .bind(now)
                    .execute(db.pool())
                    .await
                    .map_err(|e| failed(name, e))?;
                let insert = sqlx::query(
                    &db.sql("INSERT INTO tb_session_locks (sid, expires) VALUES (?, ?)"),
                )
                .bind(sid)
                .bind(now + i64::from(LOCK_TTL_S))
                .execute(db.pool())
                .await;
                match insert {
                    Ok(_) => Ok(true),
                    Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
                    Err(e) => Err(failed(name, e)),
                }
            }
            SessionStore::Redis(conn) => redis::cmd("SET")
                .arg(format!("lock:{sid}"))
                .arg(1)
                .arg("NX")
                .arg("EX")
                .arg(LOCK_TTL_S)
                .query_async::<Option<String>>(&mut conn.clone())
                .await
                .map(|answer| answer.is_some())
                .map_err(|e| failed(name, e)),
            SessionStore::Memcached(mc) => mc
                .add(&format!("lock_{sid}"), b"1", LOCK_TTL_S)
                .await
                .map(|stored| stored == Stored::Stored)
                .map_err(|e| failed(name, e)),
            SessionStore::Files(dir) => {
                let path = Self::file(dir, sid, ".lock");
                match tokio::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        let stale = tokio::fs::metadata(&path)
                            .await
                            .ok()
                            .and_then(|m| m.modified().ok())
                            .and_then(|t| t.elapsed().ok())
                            .is_some_and(|age| age.as_secs() > u64::from(LOCK_TTL_S));
                        if stale {
                            let _ = tokio::fs::remove_file(&path).await;
                        }
                        Ok(false)
                    }
                    Err(e) => Err(failed(name, e)),
                }
            }
        }
    }

    pub async fn unlock(&self, sid: &str) -> Result<(), StoreError> {
        let name = self.name();
        match self {
            SessionStore::Db(db) => db
                .write(
                    sqlx::query(&db.sql("DELETE FROM tb_session_locks WHERE sid = ?"))
                        .bind(sid)
                        .execute(db.pool()),
                )
                .await
                .map(|_| ())
                .map_err(|e| failed(name, e)),
            SessionStore::Redis(conn) => redis::cmd("DEL")
                .arg(format!("lock:{sid}"))
                .query_async::<()>(&mut conn.clone())
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Memcached(mc) => mc
                .delete(&format!("lock_{sid}"))
                .await
                .map_err(|e| failed(name, e)),
            SessionStore::Files(dir) => {
                match tokio::fs::remove_file(Self::file(dir, sid, ".lock")).await {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(failed(name, e)),
                }
            }
        }
    }
}

/// What the site caches (course structure, the front page's course list).
pub enum CacheStore {
    None,
    Local(Mutex<HashMap<String, (Instant, Arc<str>)>>),
    Redis(ConnectionManager),
    Memcached(Memcached),
}

/// Entries in the local cache beyond this are dropped (oldest first).
const LOCAL_ENTRIES: usize = 1024;

impl CacheStore {
    pub async fn open(spec: &CacheSpec) -> Result<CacheStore, Error> {
        Ok(match spec {
            CacheSpec::None => CacheStore::None,
            CacheSpec::Local => CacheStore::Local(Mutex::new(HashMap::new())),
            CacheSpec::Redis(url) => CacheStore::Redis(redis_connect(url).await?),
            CacheSpec::Memcached(addr) => CacheStore::Memcached(memcached_connect(addr).await?),
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            CacheStore::None => "none",
            CacheStore::Local(_) => "local",
            CacheStore::Redis(_) => "redis",
            CacheStore::Memcached(_) => "memcached",
        }
    }

    /// A cached value; an unreachable cache is a miss, never an error page.
    pub async fn get(&self, key: &str) -> Option<String> {
        match self {
            CacheStore::None => None,
            CacheStore::Local(map) => {
                let map = map.lock().unwrap_or_else(|e| e.into_inner());
                map.get(key).map(|(_, v)| v.to_string())
            }
            CacheStore::Redis(conn) => redis::cmd("GET")
                .arg(format!("cache:{key}"))
                .query_async::<Option<String>>(&mut conn.clone())
                .await
                .ok()
                .flatten(),
            CacheStore::Memcached(mc) => mc
                .get(&format!("cache_{key}"))
                .await
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
        }
    }

    /// Stores a value; returns whether it was stored.
    pub async fn set(&self, key: &str, value: &str, ttl_s: u32) -> bool {
        match self {
            CacheStore::None => false,
            CacheStore::Local(map) => {
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                if map.len() >= LOCAL_ENTRIES && !map.contains_key(key) {
                    if let Some(oldest) = map
                        .iter()
                        .min_by_key(|(_, (at, _))| *at)
                        .map(|(k, _)| k.clone())
                    {
                        map.remove(&oldest);
                    }
                }
                map.insert(key.to_string(), (Instant::now(), Arc::from(value)));
                true
            }
            CacheStore::Redis(conn) => redis::cmd("SET")
                .arg(format!("cache:{key}"))
                .arg(value)
                .arg("EX")
                .arg(ttl_s)
                .query_async::<()>(&mut conn.clone())
                .await
                .is_ok(),
            CacheStore::Memcached(mc) => mc
                .set(&format!("cache_{key}"), value.as_bytes(), ttl_s)
                .await
                .is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_parse_or_say_what_works() {
        assert_eq!("db".parse(), Ok(SessionSpec::Db));
        assert_eq!(
            "db-separate:postgres://h/s".parse(),
            Ok(SessionSpec::DbSeparate("postgres://h/s".into()))
        );
        assert_eq!(
            "memcached://127.0.0.1".parse(),
            Ok(SessionSpec::Memcached("127.0.0.1:11211".into()))
        );
        assert_eq!(
            "files:/tmp/s".parse(),
            Ok(SessionSpec::Files("/tmp/s".into()))
        );
        let err = "mongodb://h".parse::<SessionSpec>().unwrap_err();
        assert!(err.contains("unknown session store 'mongodb://h'") && err.contains("files:DIR"));
        for text in [
            "db",
            "db-separate:sqlite:s.db",
            "redis://h:1",
            "memcached://h:2",
            "files:/d",
        ] {
            assert_eq!(text.parse::<SessionSpec>().unwrap().to_string(), text);
        }
        assert_eq!("local".parse(), Ok(CacheSpec::Local));
        assert!("files:/x"
            .parse::<CacheSpec>()
            .unwrap_err()
            .contains("none, local"));
    }
}
