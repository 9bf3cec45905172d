//! The pages, at Moodle's paths so that Moodle's journeys run unchanged.
//! Each does the kind of database work Moodle does for it: several reads
//! and joins, and a log row for every view and action.

use crate::db::{query, timed, Access, Bind, RowExt};
use crate::generate::SITE_COURSE;
use crate::session::{random_id, random_token, SessionData};
use crate::site::{Ctx, Outcome, PageFailure, Site};
use crate::store::now_s;
use axum::extract::{Path, Query, Request, State};
use axum::http::HeaderMap;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Form, Json, Router};
use serde_json::{json, Value};
use sqlx::any::AnyRow;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use Bind::{Int, Text};

type Params = HashMap<String, String>;

/// One row of the standard log, as Moodle writes for every view and action.
const LOG_INSERT: &str =
    "INSERT INTO tb_logs (userid, courseid, action, objectid, timecreated) VALUES (?, ?, ?, ?, ?)";
type PageResult = Result<Outcome, PageFailure>;

/// Reads at most one row.
async fn read_row(
    site: &Site,
    ctx: &mut Ctx,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<Option<AnyRow>, PageFailure> {
    let sql = site.db.sql(sql);
    let call = query(&sql, binds).fetch_optional(site.db.pool());
    Ok(timed(&mut ctx.perf, Access::Read, call).await?)
}

/// Reads the one row of `table` the page is about; none is Moodle's 404.
async fn read_record(
    site: &Site,
    ctx: &mut Ctx,
    sql: &str,
    binds: &[Bind<'_>],
    table: &str,
) -> Result<AnyRow, PageFailure> {
    read_row(site, ctx, sql, binds).await?.ok_or_else(|| {
        PageFailure::NotFound(format!("Can't find data record in database table {table}."))
    })
}

async fn read_rows(
    site: &Site,
    ctx: &mut Ctx,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<Vec<AnyRow>, PageFailure> {
    let sql = site.db.sql(sql);
    let call = query(&sql, binds).fetch_all(site.db.pool());
    Ok(timed(&mut ctx.perf, Access::Read, call).await?)
}

async fn write(
    site: &Site,
    ctx: &mut Ctx,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<(), PageFailure> {
    let sql = site.db.sql(sql);
    let call = site.db.write(query(&sql, binds).execute(site.db.pool()));
    timed(&mut ctx.perf, Access::Write, call).await?;
    Ok(())
}

/// An axum handler for a GET page with query parameters.
macro_rules! query_page {
    ($name:ident, $view:ident) => {
        async fn $name(
            State(site): State<Arc<Site>>,
            headers: HeaderMap,
            Query(params): Query<Params>,
        ) -> Response {
            serve!(site, headers, ctx => $view(&site, ctx, &params))
        }
    };
}

/// Runs a page: starts the request's session, calls the page, ends the
/// session and answers.
macro_rules! serve {
    ($site:expr, $headers:expr, $ctx:ident => $page:expr) => {{
        let mut $ctx = match $site.begin(&$headers).await {
            Ok(ctx) => ctx,
            Err(failure) => return $site.reject(failure),
        };
        let outcome = {
            let $ctx = &mut $ctx;
            $page.await
        };
        $site.respond($ctx, outcome).await
    }};
}

pub fn router(site: Arc<Site>) -> Router {
    Router::new()
        .route("/", get(front))
        .route("/index.php", get(front))
        .route("/login/index.php", get(login_form).post(login))
        .route("/login/logout.php", get(logout))
        .route("/course/view.php", get(course))
        .route("/mod/page/view.php", get(page))
        .route("/mod/assign/view.php", get(assign))
        .route("/mod/resource/view.php", get(resource))
        .route("/mod/forum/view.php", get(forum))
        .route("/mod/forum/discuss.php", get(discussion))
        .route("/mod/forum/post.php", get(reply_form).post(reply))
        .route("/user/index.php", get(participants))
        .route(
            "/pluginfile.php/{cmid}/mod_resource/content/{revision}/{filename}",
            get(file),
        )
        .route(
            "/theme/styles.php/{theme}/{rev}/{sheet}",
            get(crate::assets::styles_php),
        )
        .route(
            "/lib/javascript.php/{rev}/{*file}",
            get(crate::assets::javascript_php),
        )
        .route(
            "/theme/font.php/{theme}/{component}/{rev}/{font}",
            get(crate::assets::font_php),
        )
        .route(
            "/theme/image.php/{theme}/{component}/{rev}/{image}",
            get(crate::assets::image_php),
        )
        .route("/_testbed/stats", get(stats))
        .layer(middleware::from_fn_with_state(site.clone(), worker_pool))
        .with_state(site)
}

/// Holds a worker for the whole request when `--workers` caps them, the way
/// php-fpm's pm.max_children does: requests beyond the cap wait in line.
async fn worker_pool(State(site): State<Arc<Site>>, request: Request, next: Next) -> Response {
    if request.uri().path() == "/_testbed/stats" {
        return next.run(request).await;
    }
    site.served.fetch_add(1, Ordering::Relaxed);
    let _permit = match &site.workers {
        Some((_, pool)) => pool.acquire().await.ok(),
        None => None,
    };
    let busy = site.busy.fetch_add(1, Ordering::Relaxed) + 1;
    site.peak_busy.fetch_max(busy, Ordering::Relaxed);
    let _busy = Busy(&site.busy);
    next.run(request).await
}

/// Counts a request out when it ends, also when the client went away.
struct Busy<'a>(&'a std::sync::atomic::AtomicU64);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn stats(State(site): State<Arc<Site>>) -> Response {
    Json(site.stats()).into_response()
}

fn param(params: &Params, name: &str) -> Result<i64, PageFailure> {
    let text = params.get(name).ok_or_else(|| {
        PageFailure::BadRequest(format!("A required parameter ({name}) was missing"))
    })?;
    text.trim()
        .parse()
        .map_err(|_| PageFailure::BadRequest(format!("Invalid parameter value detected ({name})")))
}

fn date(epoch: i64) -> String {
    let time = UNIX_EPOCH + Duration::from_secs(epoch.max(0) as u64);
    httpdate::fmt_http_date(time)
}

fn login_required(ctx: &Ctx) -> Result<i64, PageFailure> {
    if ctx.session.data.logged_in() {
        Ok(ctx.session.data.userid)
    } else {
        Err(PageFailure::NotLoggedIn)
    }
}

fn check_sesskey(ctx: &Ctx, given: Option<&String>) -> Result<(), PageFailure> {
    match given {
        Some(key) if !key.is_empty() && *key == ctx.session.data.sesskey => Ok(()),
        _ => Err(PageFailure::Forbidden(
            "Incorrect sesskey submitted, form not accepted!".into(),
        )),
    }
}

async fn log(
    site: &Site,
    ctx: &mut Ctx,
    course: i64,
    action: &str,
    objectid: i64,
) -> Result<(), PageFailure> {
    let userid = ctx.session.data.userid;
    write(
        site,
        ctx,
        LOG_INSERT,
        &[
            Int(userid),
            Int(course),
            Text(action),
            Int(objectid),
            Int(now_s()),
        ],
    )
    .await
}

async fn require_enrolled(site: &Site, ctx: &mut Ctx, course: i64) -> Result<(), PageFailure> {
    let userid = login_required(ctx)?;
    let sql = "SELECT id FROM tb_enrolments WHERE course = ? AND userid = ?";
    match read_row(site, ctx, sql, &[Int(course), Int(userid)]).await? {
        Some(_) => Ok(()),
        None => Err(PageFailure::Forbidden(
            "You cannot enrol yourself in this course".into(),
        )),
    }
}

struct CourseModule {
    course: i64,
    instance: i64,
    name: String,
}

/// The logged-in, enrolled user's course module of this kind.
async fn course_module(
    site: &Site,
    ctx: &mut Ctx,
    cmid: i64,
    kind: &str,
) -> Result<CourseModule, PageFailure> {
    login_required(ctx)?;
    let sql = "SELECT course, module, instance, name FROM tb_course_modules WHERE id = ?";
    let cm = match read_row(site, ctx, sql, &[Int(cmid)]).await? {
        Some(row) if row.text("module") == kind => CourseModule {
            course: row.int("course"),
            instance: row.int("instance"),
            name: row.text("name"),
        },
        _ => {
            return Err(PageFailure::NotFound(format!(
                "Invalid course module ID: no {kind} with id {cmid}"
            )))
        }
    };
    require_enrolled(site, ctx, cm.course).await?;
    Ok(cm)
}

async fn front(State(site): State<Arc<Site>>, headers: HeaderMap) -> Response {
    serve!(site, headers, ctx => front_page(&site, ctx))
}

async fn front_page(site: &Site, ctx: &mut Ctx) -> PageResult {
    let sql = "SELECT summary FROM tb_courses WHERE id = ?";
    let summary = read_row(site, ctx, sql, &[Int(SITE_COURSE)])
        .await?
        .map(|r| r.text("summary"))
        .unwrap_or_default();
    let courses = match site.cache_get(ctx, "frontpage_courses").await {
        Some(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
        None => {
            let sql = "SELECT id, fullname, summary FROM tb_courses WHERE id <> ? ORDER BY id";
            let rows = read_rows(site, ctx, sql, &[Int(SITE_COURSE)]).await?;
            let value = Value::Array(
                rows.iter()
                    .map(|r| json!({"id": r.int("id"), "fullname": r.text("fullname"), "summary": r.text("summary")}))
                    .collect(),
            );
            site.cache_set(ctx, "frontpage_courses", &value.to_string())
                .await;
            value
        }
    };
    let mut my_courses = Vec::new();
    if ctx.session.data.logged_in() {
        let sql =
            "SELECT c.id, c.fullname FROM tb_enrolments e JOIN tb_courses c ON c.id = e.course \
                   WHERE e.userid = ? ORDER BY c.fullname";
        let userid = ctx.session.data.userid;
        my_courses = read_rows(site, ctx, sql, &[Int(userid)])
            .await?
            .iter()
            .map(|r| json!({"id": r.int("id"), "fullname": r.text("fullname")}))
            .collect();
    }
    Ok(Outcome::Page {
        template: "front.html",
        title: "Home".into(),
        context: json!({"summary": summary, "courses": courses, "my_courses": my_courses}),
    })
}

async fn login_form(State(site): State<Arc<Site>>, headers: HeaderMap) -> Response {
    serve!(site, headers, ctx => login_page(ctx, None, ""))
}

async fn login_page(ctx: &mut Ctx, error: Option<&str>, username: &str) -> PageResult {
    let token = random_token(32);
    ctx.session.data.logintoken = token.clone();
    ctx.session.dirty = true;
    Ok(Outcome::Page {
        template: "login.html",
        title: "Log in to the site".into(),
        context: json!({"logintoken": token, "error": error, "username": username}),
    })
}

async fn login(
    State(site): State<Arc<Site>>,
    headers: HeaderMap,
    Form(form): Form<Params>,
) -> Response {
    serve!(site, headers, ctx => login_post(&site, ctx, &form))
}

async fn login_post(site: &Site, ctx: &mut Ctx, form: &Params) -> PageResult {
    let username = form.get("username").map(|s| s.trim()).unwrap_or("");
    let password = form.get("password").map(String::as_str).unwrap_or("");
    let token = form.get("logintoken").map(String::as_str).unwrap_or("");
    if token.is_empty() || token != ctx.session.data.logintoken {
        let error = "Invalid login token: reload the login page and try again";
        return login_page(ctx, Some(error), username).await;
    }
    let sql = "SELECT id, password, firstname, lastname FROM tb_users WHERE username = ?";
    let user = read_row(site, ctx, sql, &[Text(username)])
        .await?
        .filter(|r| crate::password::verify(password, &r.text("password")));
    let Some(user) = user else {
        log(site, ctx, SITE_COURSE, "user_login_failed", 0).await?;
        return login_page(ctx, Some("Invalid login, please try again"), username).await;
    };
    let userid = user.int("id");
    let data = SessionData {
        userid,
        fullname: format!("{} {}", user.text("firstname"), user.text("lastname")),
        sesskey: random_token(10),
        created: now_s(),
        ..SessionData::default()
    };
    ctx.session.regenerate(&site.sessions, data).await?;
    let sql = "UPDATE tb_users SET lastaccess = ? WHERE id = ?";
    write(site, ctx, sql, &[Int(now_s()), Int(userid)]).await?;
    log(site, ctx, SITE_COURSE, "user_loggedin", userid).await?;
    site.count_login(userid);
    Ok(Outcome::Redirect("/".into()))
}

query_page!(logout, logout_page);

async fn logout_page(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    if !ctx.session.data.logged_in() {
        return Ok(Outcome::Redirect("/".into()));
    }
    if check_sesskey(ctx, params.get("sesskey")).is_err() {
        let sesskey = ctx.session.data.sesskey.clone();
        return Ok(Outcome::Page {
            template: "logout.html",
            title: "Log out".into(),
            context: json!({"sesskey": sesskey}),
        });
    }
    log(
        site,
        ctx,
        SITE_COURSE,
        "user_loggedout",
        ctx.session.data.userid,
    )
    .await?;
    site.count_logout(ctx.session.data.userid);
    ctx.session.destroy(&site.sessions).await?;
    Ok(Outcome::Redirect("/".into()))
}

/// The course's sections and activities (Moodle's "modinfo"), cached.
async fn modinfo(site: &Site, ctx: &mut Ctx, course: i64) -> Result<Value, PageFailure> {
    let key = format!("modinfo_{course}");
    if let Some(text) = site.cache_get(ctx, &key).await {
        if let Ok(value) = serde_json::from_str(&text) {
            return Ok(value);
        }
    }
    let sql =
        "SELECT section, name, summary FROM tb_course_sections WHERE course = ? ORDER BY section";
    let sections = read_rows(site, ctx, sql, &[Int(course)]).await?;
    let sql = "SELECT id, section, module, name FROM tb_course_modules WHERE course = ? ORDER BY section, id";
    let modules = read_rows(site, ctx, sql, &[Int(course)]).await?;
    let mut by_section: HashMap<i64, Vec<Value>> = HashMap::new();
    for m in &modules {
        by_section
            .entry(m.int("section"))
            .or_default()
            .push(json!({"id": m.int("id"), "module": m.text("module"), "name": m.text("name")}));
    }
    let value = Value::Array(
        sections
            .iter()
            .map(|s| {
                let n = s.int("section");
                json!({
                    "section": n,
                    "name": s.text("name"),
                    "summary": s.text("summary"),
                    "modules": by_section.remove(&n).unwrap_or_default(),
                })
            })
            .collect(),
    );
    site.cache_set(ctx, &key, &value.to_string()).await;
    Ok(value)
}

query_page!(course, course_page);

async fn course_page(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let id = param(params, "id")?;
    login_required(ctx)?;
    let sql = "SELECT id, fullname, summary FROM tb_courses WHERE id = ?";
    let course = read_record(site, ctx, sql, &[Int(id)], "course").await?;
    require_enrolled(site, ctx, id).await?;
    let sections = modinfo(site, ctx, id).await?;
    if ctx.session.data.visit_course(id) {
        ctx.session.dirty = true;
    }
    log(site, ctx, id, "course_viewed", id).await?;
    Ok(Outcome::Page {
        template: "course.html",
        title: course.text("fullname"),
        context: json!({"id": id, "summary": course.text("summary"), "sections": sections}),
    })
}

query_page!(page, page_view);

async fn page_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let cmid = param(params, "id")?;
    let cm = course_module(site, ctx, cmid, "page").await?;
    let sql = "SELECT name, intro, content FROM tb_pages WHERE id = ?";
    let row = read_record(site, ctx, sql, &[Int(cm.instance)], "page").await?;
    log(site, ctx, cm.course, "page_viewed", cmid).await?;
    Ok(Outcome::Page {
        template: "page.html",
        title: row.text("name"),
        context: json!({"intro": row.text("intro"), "content": row.text("content"), "course": cm.course}),
    })
}

query_page!(assign, assign_view);

async fn assign_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let cmid = param(params, "id")?;
    let cm = course_module(site, ctx, cmid, "assign").await?;
    let sql = "SELECT name, intro, duedate FROM tb_assignments WHERE id = ?";
    let row = read_record(site, ctx, sql, &[Int(cm.instance)], "assign").await?;
    log(site, ctx, cm.course, "assign_viewed", cmid).await?;
    Ok(Outcome::Page {
        template: "assign.html",
        title: row.text("name"),
        context: json!({"intro": row.text("intro"), "duedate": date(row.int("duedate")), "course": cm.course}),
    })
}

query_page!(resource, resource_view);

async fn resource_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let cmid = param(params, "id")?;
    let cm = course_module(site, ctx, cmid, "resource").await?;
    let sql = "SELECT filename, filesize FROM tb_files WHERE cmid = ? ORDER BY id";
    let files: Vec<Value> = read_rows(site, ctx, sql, &[Int(cmid)])
        .await?
        .iter()
        .map(|r| json!({"filename": r.text("filename"), "filesize": r.int("filesize")}))
        .collect();
    log(site, ctx, cm.course, "resource_viewed", cmid).await?;
    Ok(Outcome::Page {
        template: "resource.html",
        title: cm.name,
        context: json!({"files": files, "cmid": cmid, "course": cm.course}),
    })
}

async fn file(
    State(site): State<Arc<Site>>,
    headers: HeaderMap,
    Path((cmid, _revision, filename)): Path<(i64, String, String)>,
) -> Response {
    serve!(site, headers, ctx => file_download(&site, ctx, cmid, &filename))
}

async fn file_download(site: &Site, ctx: &mut Ctx, cmid: i64, filename: &str) -> PageResult {
    course_module(site, ctx, cmid, "resource").await?;
    let sql = "SELECT path FROM tb_files WHERE cmid = ? AND filename = ?";
    let row = read_row(site, ctx, sql, &[Int(cmid), Text(filename)])
        .await?
        .ok_or_else(|| {
            PageFailure::NotFound(format!(
                "Sorry, the requested file could not be found: {filename}"
            ))
        })?;
    Ok(Outcome::File {
        path: site.meta.data_dir.join(row.text("path")),
        name: filename.to_string(),
    })
}

query_page!(forum, forum_view);

async fn forum_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let cmid = param(params, "id")?;
    let cm = course_module(site, ctx, cmid, "forum").await?;
    let sql = "SELECT name, intro FROM tb_forums WHERE id = ?";
    let forum = read_record(site, ctx, sql, &[Int(cm.instance)], "forum").await?;
    // The reply count is stored with the discussion (as Moodle's forum
    // keeps its own counts), so the page's work does not grow with the posts.
    let sql = "SELECT d.id, d.name, d.timemodified, d.replies, u.firstname, u.lastname \
               FROM tb_forum_discussions d JOIN tb_users u ON u.id = d.userid \
               WHERE d.forum = ? \
               ORDER BY d.timemodified DESC, d.id DESC LIMIT 100";
    let discussions: Vec<Value> = read_rows(site, ctx, sql, &[Int(cm.instance)])
        .await?
        .iter()
        .map(|r| {
            json!({
                "id": r.int("id"),
                "name": r.text("name"),
                "author": format!("{} {}", r.text("firstname"), r.text("lastname")),
                "replies": r.int("replies"),
                "timemodified": date(r.int("timemodified")),
            })
        })
        .collect();
    log(site, ctx, cm.course, "forum_viewed", cmid).await?;
    Ok(Outcome::Page {
        template: "forum.html",
        title: forum.text("name"),
        context: json!({"intro": forum.text("intro"), "discussions": discussions}),
    })
}

/// Where a discussion is: its course, forum, the forum's course module and its name.
struct Place {
    course: i64,
    forum: i64,
    cmid: i64,
    name: String,
}

/// The discussion's place; the user must be enrolled in its course.
async fn discussion_place(
    site: &Site,
    ctx: &mut Ctx,
    discussion: i64,
) -> Result<Place, PageFailure> {
    login_required(ctx)?;
    let sql = "SELECT d.course, d.forum, d.name, cm.id AS cmid FROM tb_forum_discussions d \
               JOIN tb_course_modules cm ON cm.instance = d.forum AND cm.module = 'forum' \
               WHERE d.id = ?";
    let row = read_record(site, ctx, sql, &[Int(discussion)], "forum_discussions").await?;
    let place = Place {
        course: row.int("course"),
        forum: row.int("forum"),
        cmid: row.int("cmid"),
        name: row.text("name"),
    };
    require_enrolled(site, ctx, place.course).await?;
    Ok(place)
}

query_page!(discussion, discussion_view);

/// The replies a discussion shows below its opening post, the newest ones;
/// `&all=1` shows every post. A load test posts a reply every journey, so
/// a page of all posts would grow by hundreds a minute and the site would
/// serve a third of its first throughput within two minutes: a capacity
/// search's levels would each meet another server.
const REPLIES_SHOWN: i64 = 30;

async fn discussion_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let d = param(params, "d")?;
    let all = param(params, "all").unwrap_or(0) == 1;
    let place = discussion_place(site, ctx, d).await?;
    let columns = "SELECT p.id, p.subject, p.message, p.created, u.firstname, u.lastname \
                   FROM tb_forum_posts p JOIN tb_users u ON u.id = p.userid";
    let (rows, earlier) = if all {
        let sql = format!("{columns} WHERE p.discussion = ? ORDER BY p.created, p.id");
        (read_rows(site, ctx, &sql, &[Int(d)]).await?, false)
    } else {
        let sql = format!(
            "{columns} JOIN tb_forum_discussions d ON d.id = p.discussion \
             WHERE p.id = d.firstpost AND d.id = ?"
        );
        let mut rows = read_rows(site, ctx, &sql, &[Int(d)]).await?;
        // One more than shown says whether earlier replies are hidden.
        let sql = format!(
            "{columns} WHERE p.discussion = ? AND p.parent <> 0 \
             ORDER BY p.created DESC, p.id DESC LIMIT ?"
        );
        let mut replies = read_rows(site, ctx, &sql, &[Int(d), Int(REPLIES_SHOWN + 1)]).await?;
        let hidden = replies.len() as i64 > REPLIES_SHOWN;
        replies.truncate(REPLIES_SHOWN as usize);
        replies.reverse();
        rows.extend(replies);
        (rows, hidden)
    };
    let posts: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.int("id"),
                "subject": r.text("subject"),
                "message": r.text("message"),
                "author": format!("{} {}", r.text("firstname"), r.text("lastname")),
                "created": date(r.int("created")),
            })
        })
        .collect();
    log(site, ctx, place.course, "discussion_viewed", d).await?;
    Ok(Outcome::Page {
        template: "discussion.html",
        title: place.name,
        context: json!({"posts": posts, "cmid": place.cmid, "d": d, "earlier": earlier, "shown": REPLIES_SHOWN}),
    })
}

struct Parent {
    discussion: i64,
    subject: String,
    message: String,
}

async fn parent_post(site: &Site, ctx: &mut Ctx, post: i64) -> Result<Parent, PageFailure> {
    let sql = "SELECT discussion, subject, message FROM tb_forum_posts WHERE id = ?";
    let row = read_record(site, ctx, sql, &[Int(post)], "forum_posts").await?;
    Ok(Parent {
        discussion: row.int("discussion"),
        subject: row.text("subject"),
        message: row.text("message"),
    })
}

query_page!(reply_form, reply_form_view);

async fn reply_form_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let reply = param(params, "reply")?;
    let userid = login_required(ctx)?;
    let parent = parent_post(site, ctx, reply).await?;
    let place = discussion_place(site, ctx, parent.discussion).await?;
    let itemid = random_id();
    let attachments = random_id();
    ctx.session.data.remember_draft(itemid);
    ctx.session.data.remember_draft(attachments);
    ctx.session.dirty = true;
    let subject = if parent.subject.starts_with("Re: ") {
        parent.subject.clone()
    } else {
        format!("Re: {}", parent.subject)
    };
    Ok(Outcome::Page {
        template: "post.html",
        title: "Reply".into(),
        context: json!({
            "reply": reply,
            "forum": place.forum,
            "discussion": parent.discussion,
            "userid": userid,
            "sesskey": ctx.session.data.sesskey,
            "itemid": itemid,
            "attachments": attachments,
            "subject": subject,
            "parent_subject": parent.subject,
            "parent_message": parent.message,
        }),
    })
}

async fn reply(
    State(site): State<Arc<Site>>,
    headers: HeaderMap,
    Form(form): Form<Params>,
) -> Response {
    serve!(site, headers, ctx => reply_post(&site, ctx, &form))
}

async fn reply_post(site: &Site, ctx: &mut Ctx, form: &Params) -> PageResult {
    let userid = login_required(ctx)?;
    check_sesskey(ctx, form.get("sesskey"))?;
    if param(form, "userid")? != userid {
        return Err(PageFailure::Forbidden(
            "The user id of the form is not the logged-in user's".into(),
        ));
    }
    let itemid = param(form, "message[itemid]")?;
    if !ctx.session.data.take_draft(itemid) {
        return Err(PageFailure::BadRequest(
            "Invalid draft item id: open the reply form again".into(),
        ));
    }
    if let Ok(attachments) = param(form, "attachments") {
        ctx.session.data.take_draft(attachments);
    }
    ctx.session.dirty = true;
    let reply = param(form, "reply")?;
    let subject = form.get("subject").map(|s| s.trim()).unwrap_or("");
    let message = form.get("message[text]").map(|s| s.trim()).unwrap_or("");
    if subject.is_empty() || message.is_empty() {
        return Err(PageFailure::BadRequest(
            "Subject and message are required".into(),
        ));
    }
    let parent = parent_post(site, ctx, reply).await?;
    let place = discussion_place(site, ctx, parent.discussion).await?;
    // The post, the discussion's time and the log row: one transaction.
    let now = now_s();
    let message = format!("<p>{}</p>", html_escape(message));
    let writing = site.db.writing();
    let mut tx = site.db.pool().begin().await?;
    let sql = site.db.sql(
        "INSERT INTO tb_forum_posts (discussion, parent, userid, created, subject, message) \
         VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    );
    let binds = [
        Int(parent.discussion),
        Int(reply),
        Int(userid),
        Int(now),
        Text(subject),
        Text(&message),
    ];
    let call = query(&sql, &binds).fetch_one(&mut *tx);
    let post = timed(&mut ctx.perf, Access::Write, call).await?.int("id");
    let sql = site.db.sql(
        "UPDATE tb_forum_discussions SET timemodified = ?, replies = replies + 1 WHERE id = ?",
    );
    let call = query(&sql, &[Int(now), Int(parent.discussion)]).execute(&mut *tx);
    timed(&mut ctx.perf, Access::Write, call).await?;
    let sql = site.db.sql(LOG_INSERT);
    let binds = [
        Int(userid),
        Int(place.course),
        Text("post_created"),
        Int(post),
        Int(now),
    ];
    let call = query(&sql, &binds).execute(&mut *tx);
    timed(&mut ctx.perf, Access::Write, call).await?;
    tx.commit().await?;
    drop(writing);
    site.count_post(userid);
    Ok(Outcome::Redirect(format!(
        "/mod/forum/discuss.php?d={}#p{post}",
        parent.discussion
    )))
}

fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

query_page!(participants, participants_view);

/// The heavy page: every participant with the time of their last action in
/// the course, computed from the log (each user's latest row, read from the
/// log's index, so the page costs the same as the log grows).
async fn participants_view(site: &Site, ctx: &mut Ctx, params: &Params) -> PageResult {
    let id = param(params, "id")?;
    let page = param(params, "page").unwrap_or(0).max(0);
    let perpage = param(params, "perpage").unwrap_or(20).clamp(1, 5000);
    login_required(ctx)?;
    let sql = "SELECT fullname FROM tb_courses WHERE id = ?";
    let course = read_record(site, ctx, sql, &[Int(id)], "course").await?;
    require_enrolled(site, ctx, id).await?;
    let sql = "SELECT COUNT(*) AS n FROM tb_enrolments WHERE course = ?";
    let total = read_row(site, ctx, sql, &[Int(id)])
        .await?
        .map_or(0, |r| r.int("n"));
    let sql = "SELECT u.id, u.firstname, u.lastname, u.email, e.role, \
               (SELECT MAX(l.timecreated) FROM tb_logs l \
                WHERE l.courseid = e.course AND l.userid = u.id) AS lastaccess \
               FROM tb_enrolments e JOIN tb_users u ON u.id = e.userid \
               WHERE e.course = ? \
               ORDER BY u.lastname, u.firstname, u.id LIMIT ? OFFSET ?";
    let users: Vec<Value> = read_rows(
        site,
        ctx,
        sql,
        &[Int(id), Int(perpage), Int(page * perpage)],
    )
    .await?
    .iter()
    .map(|r| {
        json!({
            "firstname": r.text("firstname"),
            "lastname": r.text("lastname"),
            "email": r.text("email"),
            "role": r.text("role"),
            "lastaccess": r.opt_int("lastaccess").map(date).unwrap_or_else(|| "Never".into()),
        })
    })
    .collect();
    log(site, ctx, id, "participants_viewed", id).await?;
    let pages = ((total + perpage - 1) / perpage).max(1);
    Ok(Outcome::Page {
        template: "participants.html",
        title: format!("Participants: {}", course.text("fullname")),
        context: json!({
            "id": id,
            "total": total,
            "users": users,
            "page": page,
            "perpage": perpage,
            "pages": pages,
            "previous": if page > 0 { Some(page - 1) } else { None },
            "next": if page + 1 < pages { Some(page + 1) } else { None },
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_and_escaping() {
        let mut p = Params::new();
        p.insert("id".into(), " 7 ".into());
        p.insert("x".into(), "seven".into());
        assert_eq!(param(&p, "id").ok(), Some(7));
        assert!(matches!(param(&p, "x"), Err(PageFailure::BadRequest(m)) if m.contains("(x)")));
        assert!(matches!(param(&p, "d"), Err(PageFailure::BadRequest(m)) if m.contains("missing")));
        assert_eq!(html_escape("<b>&\""), "&lt;b&gt;&amp;&quot;");
        assert_eq!(date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
