//! The dataset generator: one course of a given size with its users,
//! activities, files and forum, the same for the same seed, written in
//! the order Moodle's course generator writes it (so the ids match too).

use crate::db::{Database, RowExt};
use crate::size::{Dataset, Size};
use crate::words::{Draw, Rng, FIRST_NAMES, LAST_NAMES};
use crate::{password, schema, Error};
use serde::Serialize;
use sqlx::{Any, Executor, Transaction};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The site's own course (the front page), as in Moodle.
pub const SITE_COURSE: i64 = 1;
/// The generated course.
pub const COURSE: i64 = 2;
/// Timestamps in the dataset start here (2024-01-01), not at "now", so
/// that the same seed gives the same rows.
const EPOCH: i64 = 1_704_067_200;
const BATCH: usize = 400;

pub struct InitOptions {
    pub size: Size,
    pub seed: u64,
    pub data_dir: PathBuf,
    pub force: bool,
}

#[derive(Debug, Serialize)]
pub struct InitReport {
    pub size: Size,
    pub seed: u64,
    pub data_dir: PathBuf,
    pub users_csv: PathBuf,
    pub file_bytes: u64,
    pub seconds: f64,
    pub counts: DatasetCounts,
}

/// What the database holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DatasetCounts {
    pub users: i64,
    pub enrolled: i64,
    pub sections: i64,
    pub assignments: i64,
    pub pages: i64,
    pub small_files: i64,
    pub big_files: i64,
    pub forum_discussions: i64,
    pub forum_posts: i64,
    pub logs: i64,
    pub sessions: i64,
}

/// The dataset's description, stored in `tb_meta`.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetMeta {
    pub size: Size,
    pub seed: u64,
    pub data_dir: PathBuf,
    pub users_csv: PathBuf,
}

/// Rows for one table, sent as multi-row INSERTs of literal values (the
/// one form every dialect reads the same way).
struct Batch<'t> {
    head: String,
    rows: Vec<String>,
    tx: &'t mut Transaction<'static, Any>,
}

enum Value<'a> {
    Int(i64),
    Text(&'a str),
}

impl<'t> Batch<'t> {
    fn new(tx: &'t mut Transaction<'static, Any>, table: &str, columns: &str) -> Batch<'t> {
        Batch {
            head: format!("INSERT INTO {table} ({columns}) VALUES "),
            rows: Vec::new(),
            tx,
        }
    }

    async fn push(&mut self, values: &[Value<'_>]) -> Result<(), sqlx::Error> {
        let mut row = String::from("(");
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                row.push_str(", ");
            }
            match value {
                Value::Int(n) => row.push_str(&n.to_string()),
                Value::Text(t) => {
                    row.push('\'');
                    row.push_str(&t.replace('\'', "''"));
                    row.push('\'');
                }
            }
        }
        row.push(')');
        self.rows.push(row);
        if self.rows.len() >= BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), sqlx::Error> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let statement = format!("{}{}", self.head, self.rows.join(", "));
        self.rows.clear();
        (&mut **self.tx).execute(statement.as_str()).await?;
        Ok(())
    }
}

/// A user's login, as written to the users CSV.
pub fn username(n: u32) -> String {
    format!("student{n}")
}

fn user_password(seed: u64, n: u32) -> String {
    let mut rng = Rng::new(seed, u64::from(n));
    format!("pw-{:08x}", rng.next_u64() as u32)
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates the schema and the dataset; with `force`, replaces an existing one.
pub async fn init(db: &Database, options: &InitOptions) -> Result<InitReport, Error> {
    let started = Instant::now();
    if !options.force && schema::has_dataset(db).await {
        return Err(Error::DatasetExists(db.shown().to_string()));
    }
    schema::drop_all(db).await?;
    schema::create_all(db).await?;
    let data_dir = absolute(&options.data_dir)?;
    let files_dir = data_dir.join("files");
    if files_dir.exists() {
        fs::remove_dir_all(&files_dir).map_err(|e| io_error(&files_dir, e))?;
    }
    fs::create_dir_all(&files_dir).map_err(|e| io_error(&files_dir, e))?;

    let dataset = options.size.dataset();
    let mut rng = Rng::new(options.seed, 0);
    let mut tx = db.pool().begin().await?;
    let users_csv = data_dir.join("users.csv");
    write_users(&mut tx, &dataset, options.seed, &users_csv).await?;
    write_course(&mut tx, options.size, &dataset, &mut rng).await?;
    let file_bytes = write_modules(&mut tx, &dataset, &mut rng, &data_dir).await?;
    write_forum(&mut tx, &dataset, &mut rng).await?;
    let mut meta = Batch::new(&mut tx, "tb_meta", "name, value");
    let seed = options.seed.to_string();
    let layout = schema::SCHEMA.to_string();
    let dir = data_dir.display().to_string();
    let csv = users_csv.display().to_string();
    for (name, value) in [
        ("schema", layout.as_str()),
        ("size", options.size.name()),
        ("seed", seed.as_str()),
        ("data_dir", dir.as_str()),
        ("users_csv", csv.as_str()),
    ] {
        meta.push(&[Value::Text(name), Value::Text(value)]).await?;
    }
    meta.flush().await?;
    tx.commit().await?;
    schema::sync_sequences(db).await?;
    Ok(InitReport {
        size: options.size,
        seed: options.seed,
        data_dir,
        users_csv,
        file_bytes,
        seconds: started.elapsed().as_secs_f64(),
        counts: counts(db).await?,
    })
}

fn absolute(path: &Path) -> Result<PathBuf, Error> {
    fs::create_dir_all(path).map_err(|e| io_error(path, e))?;
    path.canonicalize().map_err(|e| io_error(path, e))
}

async fn write_users(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    seed: u64,
    csv_path: &Path,
) -> Result<(), Error> {
    let mut csv = String::new();
    let mut rng = Rng::new(seed, 0xA11CE);
    let mut users = Batch::new(
        tx,
        "tb_users",
        "id, username, password, firstname, lastname, email",
    );
    for n in 1..=dataset.users {
        let name = username(n);
        let password = user_password(seed, n);
        let salt = format!("{:08x}", rng.next_u64() as u32);
        let first = rng.pick(FIRST_NAMES);
        let last = rng.pick(LAST_NAMES);
        let email = format!("{name}@example.invalid");
        users
            .push(&[
                Value::Int(i64::from(n)),
                Value::Text(&name),
                Value::Text(&password::hash(&password, &salt)),
                Value::Text(first),
                Value::Text(last),
                Value::Text(&email),
            ])
            .await?;
        csv.push_str(&format!("{name},{password}\n"));
    }
    users.flush().await?;
    let mut enrol = Batch::new(tx, "tb_enrolments", "id, course, userid, role, timestart");
    for n in 1..=dataset.users {
        enrol
            .push(&[
                Value::Int(i64::from(n)),
                Value::Int(COURSE),
                Value::Int(i64::from(n)),
                Value::Text("student"),
                Value::Int(EPOCH),
            ])
            .await?;
    }
    enrol.flush().await?;
    let mut file = fs::File::create(csv_path).map_err(|e| io_error(csv_path, e))?;
    file.write_all(csv.as_bytes())
        .map_err(|e| io_error(csv_path, e))?;
    Ok(())
}

async fn write_course(
    tx: &mut Transaction<'static, Any>,
    size: Size,
    dataset: &Dataset,
    rng: &mut Rng,
) -> Result<(), Error> {
    let mut courses = Batch::new(
        tx,
        "tb_courses",
        "id, shortname, fullname, summary, numsections",
    );
    let site_summary = rng.paragraphs(60);
    courses
        .push(&[
            Value::Int(SITE_COURSE),
            Value::Text("testbed"),
            Value::Text("headroom testbed"),
            Value::Text(&site_summary),
            Value::Int(0),
        ])
        .await?;
    let short = format!("tb_course_{}", size.name());
    let full = format!("Test course {size} ({})", rng.sentence(3));
    let summary = rng.paragraphs(120);
    courses
        .push(&[
            Value::Int(COURSE),
            Value::Text(&short),
            Value::Text(&full),
            Value::Text(&summary),
            Value::Int(i64::from(dataset.sections)),
        ])
        .await?;
    courses.flush().await?;
    let mut sections = Batch::new(
        tx,
        "tb_course_sections",
        "id, course, section, name, summary",
    );
    for section in 0..=dataset.sections {
        let name = if section == 0 {
            "General".to_string()
        } else {
            format!("Topic {section}: {}", rng.sentence(3))
        };
        let summary = rng.paragraphs(30);
        sections
            .push(&[
                Value::Int(i64::from(section) + 1),
                Value::Int(COURSE),
                Value::Int(i64::from(section)),
                Value::Text(&name),
                Value::Text(&summary),
            ])
            .await?;
    }
    sections.flush().await?;
    Ok(())
}

/// One course module: its id, section, kind, instance and name.
struct Module {
    cmid: i64,
    section: i64,
    kind: &'static str,
    instance: i64,
    name: String,
}

async fn write_modules(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    rng: &mut Rng,
    data_dir: &Path,
) -> Result<u64, Error> {
    let mut modules = Modules {
        list: Vec::new(),
        last_cmid: 0,
        sections: dataset.sections,
    };
    write_assignments(tx, dataset, rng, &mut modules).await?;
    write_pages(tx, dataset, rng, &mut modules).await?;
    let file_rows = write_resources(tx, dataset, rng, &mut modules).await?;
    write_course_forum(tx, rng, &mut modules).await?;
    write_course_modules(tx, &modules.list).await?;
    write_files(tx, &file_rows, rng, data_dir).await
}

/// The course's modules as they are made, and the next module id.
struct Modules {
    list: Vec<Module>,
    last_cmid: i64,
    sections: u32,
}

impl Modules {
    fn next_cm(&mut self) -> i64 {
        self.last_cmid += 1;
        self.last_cmid
    }

    /// A section other than the course's top one (0).
    fn random_section(&self, rng: &mut Rng) -> i64 {
        1 + rng.below(u64::from(self.sections)) as i64
    }
}

async fn write_assignments(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    rng: &mut Rng,
    modules: &mut Modules,
) -> Result<(), Error> {
    let mut assigns = Batch::new(tx, "tb_assignments", "id, course, name, intro, duedate");
    for i in 1..=i64::from(dataset.assignments) {
        let name = format!("Assignment {i}");
        let intro = rng.paragraphs(50);
        let due = EPOCH + 7 * 86_400 * i;
        assigns
            .push(&[
                Value::Int(i),
                Value::Int(COURSE),
                Value::Text(&name),
                Value::Text(&intro),
                Value::Int(due),
            ])
            .await?;
        let cmid = modules.next_cm();
        modules.list.push(Module {
            cmid,
            section: modules.random_section(rng),
            kind: "assign",
            instance: i,
            name,
        });
    }
    assigns.flush().await?;
    Ok(())
}

async fn write_pages(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    rng: &mut Rng,
    modules: &mut Modules,
) -> Result<(), Error> {
    let mut pages = Batch::new(tx, "tb_pages", "id, course, name, intro, content");
    for i in 1..=i64::from(dataset.pages) {
        let name = format!("Page {i}: {}", rng.sentence(3));
        let intro = rng.sentence(12);
        let content = rng.paragraphs(400);
        pages
            .push(&[
                Value::Int(i),
                Value::Int(COURSE),
                Value::Text(&name),
                Value::Text(&intro),
                Value::Text(&content),
            ])
            .await?;
        let cmid = modules.next_cm();
        modules.list.push(Module {
            cmid,
            section: modules.random_section(rng),
            kind: "page",
            instance: i,
            name,
        });
    }
    pages.flush().await?;
    Ok(())
}

/// One resource with all the small files (section 0), then one resource
/// per big file, as Moodle's generator does. Returns the files to write:
/// module id, file name, size.
async fn write_resources(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    rng: &mut Rng,
    modules: &mut Modules,
) -> Result<Vec<(i64, String, u64)>, Error> {
    let mut resources = Batch::new(tx, "tb_resources", "id, course, name, intro");
    let mut file_rows = Vec::new();
    let small_cm = modules.next_cm();
    resources
        .push(&[
            Value::Int(1),
            Value::Int(COURSE),
            Value::Text("Small files"),
            Value::Text(""),
        ])
        .await?;
    modules.list.push(Module {
        cmid: small_cm,
        section: 0,
        kind: "resource",
        instance: 1,
        name: "Small files".into(),
    });
    for i in 0..dataset.small_files {
        file_rows.push((
            small_cm,
            format!("smallfile{i}.dat"),
            dataset.small_file_bytes,
        ));
    }
    for i in 0..dataset.big_files {
        let cm = modules.next_cm();
        let instance = 2 + i64::from(i);
        let name = format!("Big file {i}");
        resources
            .push(&[
                Value::Int(instance),
                Value::Int(COURSE),
                Value::Text(&name),
                Value::Text(""),
            ])
            .await?;
        modules.list.push(Module {
            cmid: cm,
            section: modules.random_section(rng),
            kind: "resource",
            instance,
            name,
        });
        file_rows.push((cm, format!("bigfile{i}.dat"), dataset.big_file_bytes));
    }
    resources.flush().await?;
    Ok(file_rows)
}

async fn write_course_forum(
    tx: &mut Transaction<'static, Any>,
    rng: &mut Rng,
    modules: &mut Modules,
) -> Result<(), Error> {
    let mut forums = Batch::new(tx, "tb_forums", "id, course, name, intro");
    let intro = rng.paragraphs(40);
    forums
        .push(&[
            Value::Int(1),
            Value::Int(COURSE),
            Value::Text("Forum"),
            Value::Text(&intro),
        ])
        .await?;
    forums.flush().await?;
    let cmid = modules.next_cm();
    modules.list.push(Module {
        cmid,
        section: 0,
        kind: "forum",
        instance: 1,
        name: "Forum".into(),
    });
    Ok(())
}

async fn write_course_modules(
    tx: &mut Transaction<'static, Any>,
    modules: &[Module],
) -> Result<(), Error> {
    let mut cms = Batch::new(
        tx,
        "tb_course_modules",
        "id, course, section, module, instance, name",
    );
    for m in modules {
        cms.push(&[
            Value::Int(m.cmid),
            Value::Int(COURSE),
            Value::Int(m.section),
            Value::Text(m.kind),
            Value::Int(m.instance),
            Value::Text(&m.name),
        ])
        .await?;
    }
    cms.flush().await?;
    Ok(())
}

/// Writes each file's random bytes under `data_dir` and its row; returns
/// the bytes written.
async fn write_files(
    tx: &mut Transaction<'static, Any>,
    file_rows: &[(i64, String, u64)],
    rng: &mut Rng,
    data_dir: &Path,
) -> Result<u64, Error> {
    let mut total = 0;
    let mut files = Batch::new(tx, "tb_files", "id, cmid, filename, filesize, path");
    for (id, (cm, name, bytes)) in file_rows.iter().enumerate() {
        let relative = format!("files/{cm}/{name}");
        write_random_file(&data_dir.join(&relative), *bytes, rng)?;
        total += bytes;
        files
            .push(&[
                Value::Int(id as i64 + 1),
                Value::Int(*cm),
                Value::Text(name),
                Value::Int(*bytes as i64),
                Value::Text(&relative),
            ])
            .await?;
    }
    files.flush().await?;
    Ok(total)
}

fn write_random_file(path: &Path, bytes: u64, rng: &mut Rng) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    let mut file = std::io::BufWriter::new(fs::File::create(path).map_err(|e| io_error(path, e))?);
    let mut block = vec![0u8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        rng.fill(&mut block[..n]);
        file.write_all(&block[..n]).map_err(|e| io_error(path, e))?;
        left -= n as u64;
    }
    file.flush().map_err(|e| io_error(path, e))
}

async fn write_forum(
    tx: &mut Transaction<'static, Any>,
    dataset: &Dataset,
    rng: &mut Rng,
) -> Result<(), Error> {
    let users = u64::from(dataset.users);
    let mut discussions = Vec::new();
    let mut posts = Vec::new();
    let mut post_id = 0i64;
    for d in 1..=i64::from(dataset.discussions) {
        let subject = format!("Discussion {d}: {}", rng.sentence(4));
        let first = post_id + 1;
        let mut time = EPOCH + d * 3600;
        for p in 0..dataset.posts_per_discussion {
            post_id += 1;
            let author = 1 + rng.below(users) as i64;
            let (parent, title) = if p == 0 {
                (0, subject.clone())
            } else {
                (first, format!("Re: {subject}"))
            };
            posts.push((post_id, d, parent, author, time, title, rng.paragraphs(60)));
            time += 60;
        }
        discussions.push((d, subject, posts[(first - 1) as usize].3, first, time));
    }
    let mut rows = Batch::new(
        tx,
        "tb_forum_discussions",
        "id, forum, course, name, userid, firstpost, replies, timemodified",
    );
    let replies = i64::from(dataset.posts_per_discussion.saturating_sub(1));
    for (id, name, author, first, modified) in &discussions {
        rows.push(&[
            Value::Int(*id),
            Value::Int(1),
            Value::Int(COURSE),
            Value::Text(name),
            Value::Int(*author),
            Value::Int(*first),
            Value::Int(replies),
            Value::Int(*modified),
        ])
        .await?;
    }
    rows.flush().await?;
    let mut rows = Batch::new(
        tx,
        "tb_forum_posts",
        "id, discussion, parent, userid, created, subject, message",
    );
    for (id, discussion, parent, author, created, subject, message) in &posts {
        rows.push(&[
            Value::Int(*id),
            Value::Int(*discussion),
            Value::Int(*parent),
            Value::Int(*author),
            Value::Int(*created),
            Value::Text(subject),
            Value::Text(message),
        ])
        .await?;
    }
    rows.flush().await?;
    Ok(())
}

async fn count(db: &Database, sql: &str) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(sql).fetch_one(db.pool()).await?;
    Ok(row.int("n"))
}

/// Counts what the database holds, for `testbed info` and the tests.
pub async fn counts(db: &Database) -> Result<DatasetCounts, sqlx::Error> {
    Ok(DatasetCounts {
        users: count(db, "SELECT COUNT(*) AS n FROM tb_users").await?,
        enrolled: count(
            db,
            "SELECT COUNT(*) AS n FROM tb_enrolments WHERE course = 2",
        )
        .await?,
        sections: count(
            db,
            "SELECT COUNT(*) AS n FROM tb_course_sections WHERE course = 2 AND section > 0",
        )
        .await?,
        assignments: count(db, "SELECT COUNT(*) AS n FROM tb_assignments").await?,
        pages: count(db, "SELECT COUNT(*) AS n FROM tb_pages").await?,
        small_files: count(
            db,
            "SELECT COUNT(*) AS n FROM tb_files WHERE filename LIKE 'smallfile%'",
        )
        .await?,
        big_files: count(
            db,
            "SELECT COUNT(*) AS n FROM tb_files WHERE filename LIKE 'bigfile%'",
        )
        .await?,
        forum_discussions: count(db, "SELECT COUNT(*) AS n FROM tb_forum_discussions").await?,
        forum_posts: count(db, "SELECT COUNT(*) AS n FROM tb_forum_posts").await?,
        logs: count(db, "SELECT COUNT(*) AS n FROM tb_logs").await?,
        sessions: count(db, "SELECT COUNT(*) AS n FROM tb_sessions").await?,
    })
}

/// Reads the dataset's description; a database without one is an error
/// that says how to make one.
pub async fn meta(db: &Database) -> Result<DatasetMeta, Error> {
    let rows = sqlx::query("SELECT name, value FROM tb_meta")
        .fetch_all(db.pool())
        .await
        .map_err(|_| Error::NoDataset(db.shown().to_string()))?;
    let get = |key: &str| {
        rows.iter()
            .find(|r| r.text("name") == key)
            .map(|r| r.text("value"))
            .ok_or_else(|| Error::NoDataset(db.shown().to_string()))
    };
    // Datasets from before the layout had a version are version 1.
    let layout = get("schema").map_or(1, |v| v.parse().unwrap_or(0));
    if layout != schema::SCHEMA {
        return Err(Error::OtherLayout(
            db.shown().to_string(),
            layout,
            schema::SCHEMA,
        ));
    }
    Ok(DatasetMeta {
        size: get("size")?.parse().map_err(Error::Invalid)?,
        seed: get("seed")?.parse().unwrap_or(0),
        data_dir: PathBuf::from(get("data_dir")?),
        users_csv: PathBuf::from(get("users_csv")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_depend_on_the_seed() {
        assert_eq!(user_password(1, 5), user_password(1, 5));
        assert_ne!(user_password(1, 5), user_password(2, 5));
        assert_ne!(user_password(1, 5), user_password(1, 6));
        assert_eq!(username(12), "student12");
    }
}
