//! The site: its database, stores and templates, and what every request
//! shares: the worker pool, the session's start and end, the footer with
//! Moodle's performance figures, and the answer.

use crate::db::{Create, Database, Durability, Perf};
use crate::generate::{self, DatasetMeta};
use crate::session::{Session, SessionError, COOKIE, LOCK_TIMEOUT};
use crate::store::{CacheSpec, CacheStore, SessionSpec, SessionStore};
use crate::templates::Templates;
use crate::Error;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// How to run one instance of the site.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    pub db_url: String,
    pub sessions: SessionSpec,
    pub cache: CacheSpec,
    /// Requests handled at once (php-fpm's pm.max_children); None: no cap.
    pub workers: Option<u32>,
    /// This instance's name in a cluster (sent as X-Testbed-Node).
    pub node: String,
    pub db_connections: u32,
}

pub struct Site {
    pub db: Database,
    pub sessions: SessionStore,
    pub cache: CacheStore,
    pub meta: DatasetMeta,
    pub node: String,
    pub workers: Option<(u32, Semaphore)>,
    pub served: AtomicU64,
    pub errors: AtomicU64,
    /// Requests being handled now (past the worker pool), and the most at once.
    pub busy: AtomicU64,
    pub peak_busy: AtomicU64,
    /// Logins and forum posts since this instance started, and by whom:
    /// what a replayed journey did, told by the site itself.
    pub activity: std::sync::Mutex<Activity>,
    templates: Templates,
}

#[derive(Debug, Default)]
pub struct Activity {
    pub logins: u64,
    pub login_users: std::collections::BTreeSet<i64>,
    pub posts: u64,
    pub post_users: std::collections::BTreeSet<i64>,
    /// Sessions each user has open now (logged in, not yet logged out).
    pub open_sessions: std::collections::BTreeMap<i64, u32>,
    /// Logins of a user who was still logged in on another session: two
    /// clients using one account at once.
    pub concurrent_logins: u64,
}

impl Site {
    pub fn count_login(&self, userid: i64) {
        let mut a = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        a.logins += 1;
        a.login_users.insert(userid);
        let open = a.open_sessions.entry(userid).or_default();
        *open += 1;
        if *open > 1 {
            a.concurrent_logins += 1;
        }
    }

    pub fn count_logout(&self, userid: i64) {
        let mut a = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(open) = a.open_sessions.get_mut(&userid) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                a.open_sessions.remove(&userid);
            }
        }
    }

    pub fn count_post(&self, userid: i64) {
        let mut a = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        a.posts += 1;
        a.post_users.insert(userid);
    }
}

/// The request being served: its session and the work it did.
pub struct Ctx {
    pub session: Session,
    pub perf: Perf,
    pub cache_hits: u32,
    pub cache_misses: u32,
    pub cache_sets: u32,
    started: Instant,
}

/// What a page handler answers.
pub enum Outcome {
    Page {
        template: &'static str,
        title: String,
        context: serde_json::Value,
    },
    Redirect(String),
    File {
        path: PathBuf,
        name: String,
    },
}

/// Why a page could not be served.
#[derive(Debug)]
pub enum PageFailure {
    BadRequest(String),
    NotLoggedIn,
    Forbidden(String),
    NotFound(String),
    Db(sqlx::Error),
    Session(SessionError),
}

impl From<sqlx::Error> for PageFailure {
    fn from(e: sqlx::Error) -> Self {
        PageFailure::Db(e)
    }
}

impl From<SessionError> for PageFailure {
    fn from(e: SessionError) -> Self {
        PageFailure::Session(e)
    }
}

impl From<crate::store::StoreError> for PageFailure {
    fn from(e: crate::store::StoreError) -> Self {
        PageFailure::Session(SessionError::Store(e))
    }
}

#[derive(Serialize)]
struct Footer {
    timeused: String,
    reads: u32,
    writes: u32,
    dbtime: String,
    session_store: &'static str,
    session_kb: String,
    cache_store: &'static str,
    cache_hits: u32,
    cache_misses: u32,
    cache_sets: u32,
    node: String,
}

#[derive(Serialize)]
struct Nav {
    logged_in: bool,
    fullname: String,
    sesskey: String,
}

impl Site {
    /// Connects the database and the stores; anything unreachable is an
    /// error here, before the site listens.
    pub async fn open(config: &SiteConfig) -> Result<Arc<Site>, Error> {
        let db = Database::connect(
            &config.db_url,
            Create::MustExist,
            Durability::Full,
            config.db_connections,
        )
        .await?;
        let meta = generate::meta(&db).await?;
        let sessions = SessionStore::open(&config.sessions, &db).await?;
        let cache = CacheStore::open(&config.cache).await?;
        Ok(Arc::new(Site {
            db,
            sessions,
            cache,
            meta,
            node: config.node.clone(),
            workers: config.workers.map(|n| (n, Semaphore::new(n as usize))),
            served: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            peak_busy: AtomicU64::new(0),
            activity: std::sync::Mutex::new(Activity::default()),
            templates: Templates::new(),
        }))
    }

    /// Starts a request: reads and locks the visitor's session.
    pub async fn begin(&self, headers: &HeaderMap) -> Result<Ctx, PageFailure> {
        let started = Instant::now();
        let cookie = session_cookie(headers);
        let session = Session::start(&self.sessions, cookie.as_deref(), LOCK_TIMEOUT).await?;
        Ok(Ctx {
            session,
            perf: Perf::default(),
            cache_hits: 0,
            cache_misses: 0,
            cache_sets: 0,
            started,
        })
    }

    /// Ends a request whose handler ran: writes and unlocks the session and
    /// renders the answer with the footer.
    pub async fn respond(&self, mut ctx: Ctx, outcome: Result<Outcome, PageFailure>) -> Response {
        let saved = ctx.session.finish(&self.sessions).await;
        let outcome = match (outcome, saved) {
            (Ok(_), Err(e)) => Err(PageFailure::Session(SessionError::Store(e))),
            (outcome, _) => outcome,
        };
        let mut response = match outcome {
            Ok(Outcome::Page {
                template,
                title,
                context,
            }) => self.render(StatusCode::OK, template, &title, context, Some(&ctx)),
            Ok(Outcome::Redirect(location)) => {
                let mut r = StatusCode::SEE_OTHER.into_response();
                if let Ok(v) = HeaderValue::from_str(&location) {
                    r.headers_mut().insert(header::LOCATION, v);
                }
                r
            }
            Ok(Outcome::File { path, name }) => file_response(&path, &name).await,
            Err(PageFailure::NotLoggedIn) => {
                let mut r = StatusCode::SEE_OTHER.into_response();
                r.headers_mut().insert(
                    header::LOCATION,
                    HeaderValue::from_static("/login/index.php"),
                );
                r
            }
            Err(failure) => self.error_page(failure, Some(&ctx)),
        };
        let headers = response.headers_mut();
        if ctx.session.destroyed {
            headers.append(
                header::SET_COOKIE,
                HeaderValue::from_static("MoodleSession=; Path=/; Max-Age=0; HttpOnly"),
            );
        } else if ctx.session.fresh {
            let cookie = format!(
                "{COOKIE}={}; Path=/; HttpOnly; SameSite=Lax",
                ctx.session.sid
            );
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                headers.append(header::SET_COOKIE, v);
            }
        }
        self.stamp(response)
    }

    /// A request that failed before its handler ran (no session).
    pub fn reject(&self, failure: PageFailure) -> Response {
        let response = self.error_page(failure, None);
        self.stamp(response)
    }

    fn stamp(&self, mut response: Response) -> Response {
        if response.status().is_server_error() {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(v) = HeaderValue::from_str(&self.node) {
            response.headers_mut().insert("x-testbed-node", v);
        }
        response
    }

    fn error_page(&self, failure: PageFailure, ctx: Option<&Ctx>) -> Response {
        let (status, message) = match failure {
            PageFailure::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            PageFailure::NotLoggedIn => (StatusCode::UNAUTHORIZED, "You are not logged in".into()),
            PageFailure::Forbidden(m) => (StatusCode::FORBIDDEN, m),
            PageFailure::NotFound(m) => (StatusCode::NOT_FOUND, m),
            PageFailure::Db(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Error reading from database: {e}"),
            ),
            PageFailure::Session(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        };
        self.render(
            status,
            "error.html",
            "Error",
            serde_json::json!({ "message": message }),
            ctx,
        )
    }

    fn render(
        &self,
        status: StatusCode,
        template: &str,
        title: &str,
        context: serde_json::Value,
        ctx: Option<&Ctx>,
    ) -> Response {
        let footer = ctx.map(|c| self.footer(c));
        let nav = ctx.map(|c| Nav {
            logged_in: c.session.data.logged_in() && !c.session.destroyed,
            fullname: c.session.data.fullname.clone(),
            sesskey: c.session.data.sesskey.clone(),
        });
        match self
            .templates
            .render(template, title, &context, &nav, &footer)
        {
            Ok(html) => (
                status,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                html,
            )
                .into_response(),
            Err(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("template {template} failed: {e}"),
            )
                .into_response(),
        }
    }

    fn footer(&self, ctx: &Ctx) -> Footer {
        Footer {
            timeused: format!("{:.6}", ctx.started.elapsed().as_secs_f64()),
            reads: ctx.perf.reads,
            writes: ctx.perf.writes,
            dbtime: format!("{:.5}", ctx.perf.db_time.as_secs_f64()),
            session_store: self.sessions.name(),
            session_kb: format!("{:.1}KB", ctx.session.bytes as f64 / 1024.0),
            cache_store: self.cache.name(),
            cache_hits: ctx.cache_hits,
            cache_misses: ctx.cache_misses,
            cache_sets: ctx.cache_sets,
            node: self.node.clone(),
        }
    }

    /// A cached value, counted in the footer.
    pub async fn cache_get(&self, ctx: &mut Ctx, key: &str) -> Option<String> {
        let value = self.cache.get(key).await;
        if value.is_some() {
            ctx.cache_hits += 1;
        } else {
            ctx.cache_misses += 1;
        }
        value
    }

    pub async fn cache_set(&self, ctx: &mut Ctx, key: &str, value: &str) {
        if self.cache.set(key, value, 600).await {
            ctx.cache_sets += 1;
        }
    }

    pub fn stats(&self) -> serde_json::Value {
        let activity = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::json!({
            "logins": activity.logins,
            "login_users": activity.login_users.len(),
            "posts": activity.posts,
            "post_users": activity.post_users.len(),
            "concurrent_logins": activity.concurrent_logins,
            "node": self.node,
            "served": self.served.load(Ordering::Relaxed),
            "server_errors": self.errors.load(Ordering::Relaxed),
            "peak_concurrent": self.peak_busy.load(Ordering::Relaxed),
            "workers": self.workers.as_ref().map(|(n, _)| *n),
            "size": self.meta.size,
            "database": self.db.shown(),
            "sessions": self.sessions.name(),
            "cache": self.cache.name(),
        })
    }
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    for value in headers.get_all(header::COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        for pair in text.split(';') {
            if let Some((name, value)) = pair.trim().split_once('=') {
                if name == COOKIE && !value.is_empty() {
                    return Some(value.to_string());
                }
            }
        }
    }
    None
}

async fn file_response(path: &std::path::Path, name: &str) -> Response {
    match tokio::fs::File::open(path).await {
        Ok(file) => {
            let length = file.metadata().await.map(|m| m.len()).ok();
            let stream = tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024);
            let mut response = Response::new(Body::from_stream(stream));
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            if let Some(length) = length {
                headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
            }
            if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
                headers.insert(header::CONTENT_DISPOSITION, v);
            }
            response
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "file {} is missing from the data directory: {e}",
                path.display()
            ),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_session_cookie() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; MoodleSession=abc; b=2"),
        );
        assert_eq!(session_cookie(&headers).as_deref(), Some("abc"));
        let mut empty = HeaderMap::new();
        empty.append(header::COOKIE, HeaderValue::from_static("MoodleSession="));
        assert_eq!(session_cookie(&empty), None);
    }
}
