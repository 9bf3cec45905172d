//! The site's tables, written once and typed per dialect. Every table name
//! starts with `tb_` so the testbed can share a database with other data.

use crate::db::{Database, Dialect};
use sqlx::Executor;

/// The layout's version, kept in `tb_meta` as `schema`; a dataset of an
/// older layout is refused with the command that replaces it. 2: a
/// discussion stores its number of replies.
pub const SCHEMA: u32 = 2;

/// Tables in creation order (dropped in reverse).
pub const TABLES: [&str; 16] = [
    "tb_meta",
    "tb_users",
    "tb_courses",
    "tb_course_sections",
    "tb_course_modules",
    "tb_enrolments",
    "tb_pages",
    "tb_assignments",
    "tb_resources",
    "tb_files",
    "tb_forums",
    "tb_forum_discussions",
    "tb_forum_posts",
    "tb_logs",
    "tb_sessions",
    "tb_session_locks",
];

/// Tables a session store in the database needs.
pub const SESSION_TABLES: [&str; 2] = ["tb_sessions", "tb_session_locks"];

fn ddl(table: &str) -> &'static str {
    match table {
        "tb_meta" => "tb_meta (name VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
        "tb_users" => {
            "tb_users (id @ID, username VARCHAR(100) NOT NULL UNIQUE, password VARCHAR(160) NOT NULL, \
             firstname VARCHAR(100) NOT NULL, lastname VARCHAR(100) NOT NULL, email VARCHAR(200) NOT NULL, \
             lastaccess BIGINT NOT NULL DEFAULT 0)"
        }
        "tb_courses" => {
            "tb_courses (id @ID, shortname VARCHAR(100) NOT NULL, fullname VARCHAR(255) NOT NULL, \
             summary TEXT NOT NULL, numsections INTEGER NOT NULL)"
        }
        "tb_course_sections" => {
            "tb_course_sections (id @ID, course BIGINT NOT NULL, section INTEGER NOT NULL, \
             name VARCHAR(255) NOT NULL, summary TEXT NOT NULL)"
        }
        "tb_course_modules" => {
            "tb_course_modules (id @ID, course BIGINT NOT NULL, section INTEGER NOT NULL, \
             module VARCHAR(20) NOT NULL, instance BIGINT NOT NULL, name VARCHAR(255) NOT NULL)"
        }
        "tb_enrolments" => {
            "tb_enrolments (id @ID, course BIGINT NOT NULL, userid BIGINT NOT NULL, \
             role VARCHAR(20) NOT NULL, timestart BIGINT NOT NULL)"
        }
        "tb_pages" => {
            "tb_pages (id @ID, course BIGINT NOT NULL, name VARCHAR(255) NOT NULL, \
             intro TEXT NOT NULL, content TEXT NOT NULL)"
        }
        "tb_assignments" => {
            "tb_assignments (id @ID, course BIGINT NOT NULL, name VARCHAR(255) NOT NULL, \
             intro TEXT NOT NULL, duedate BIGINT NOT NULL)"
        }
        "tb_resources" => {
            "tb_resources (id @ID, course BIGINT NOT NULL, name VARCHAR(255) NOT NULL, intro TEXT NOT NULL)"
        }
        "tb_files" => {
            "tb_files (id @ID, cmid BIGINT NOT NULL, filename VARCHAR(200) NOT NULL, \
             filesize BIGINT NOT NULL, path VARCHAR(255) NOT NULL)"
        }
        "tb_forums" => {
            "tb_forums (id @ID, course BIGINT NOT NULL, name VARCHAR(255) NOT NULL, intro TEXT NOT NULL)"
        }
        "tb_forum_discussions" => {
            "tb_forum_discussions (id @ID, forum BIGINT NOT NULL, course BIGINT NOT NULL, \
             name VARCHAR(255) NOT NULL, userid BIGINT NOT NULL, firstpost BIGINT NOT NULL, \
             replies BIGINT NOT NULL, timemodified BIGINT NOT NULL)"
        }
        "tb_forum_posts" => {
            "tb_forum_posts (id @ID, discussion BIGINT NOT NULL, parent BIGINT NOT NULL, \
             userid BIGINT NOT NULL, created BIGINT NOT NULL, subject VARCHAR(255) NOT NULL, \
             message TEXT NOT NULL)"
        }
        "tb_logs" => {
            "tb_logs (id @ID, userid BIGINT NOT NULL, courseid BIGINT NOT NULL, \
             action VARCHAR(50) NOT NULL, objectid BIGINT NOT NULL, timecreated BIGINT NOT NULL)"
        }
        "tb_sessions" => {
            "tb_sessions (sid VARCHAR(64) NOT NULL PRIMARY KEY, data TEXT NOT NULL, \
             timemodified BIGINT NOT NULL)"
        }
        "tb_session_locks" => {
            "tb_session_locks (sid VARCHAR(64) NOT NULL PRIMARY KEY, expires BIGINT NOT NULL)"
        }
        _ => unreachable!("unknown table {table}"),
    }
}

const INDEXES: [&str; 6] = [
    "CREATE INDEX tb_enrolments_course ON tb_enrolments (course, userid)",
    "CREATE INDEX tb_modules_course ON tb_course_modules (course, section)",
    "CREATE INDEX tb_files_cm ON tb_files (cmid, filename)",
    "CREATE INDEX tb_discussions_forum ON tb_forum_discussions (forum, timemodified)",
    "CREATE INDEX tb_posts_discussion ON tb_forum_posts (discussion, created)",
    "CREATE INDEX tb_logs_course_user ON tb_logs (courseid, userid, timecreated)",
];

fn create_statement(dialect: Dialect, table: &str, if_not_exists: bool) -> String {
    let id = match dialect {
        Dialect::Sqlite => "INTEGER PRIMARY KEY",
        Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
        Dialect::MySql => "BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let body = ddl(table).replace("@ID", id);
    let guard = if if_not_exists { "IF NOT EXISTS " } else { "" };
    let tail = if dialect == Dialect::MySql {
        " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    } else {
        ""
    };
    format!("CREATE TABLE {guard}{body}{tail}")
}

/// Drops every testbed table that exists.
pub async fn drop_all(db: &Database) -> Result<(), sqlx::Error> {
    for table in TABLES.iter().rev() {
        db.pool()
            .execute(format!("DROP TABLE IF EXISTS {table}").as_str())
            .await?;
    }
    Ok(())
}

/// Creates every table and index (the tables must not exist).
pub async fn create_all(db: &Database) -> Result<(), sqlx::Error> {
    for table in TABLES {
        db.pool()
            .execute(create_statement(db.dialect(), table, false).as_str())
            .await?;
    }
    for index in INDEXES {
        db.pool().execute(index).await?;
    }
    Ok(())
}

/// Creates the session tables when missing (a separate session database).
pub async fn ensure_session_tables(db: &Database) -> Result<(), sqlx::Error> {
    for table in SESSION_TABLES {
        db.pool()
            .execute(create_statement(db.dialect(), table, true).as_str())
            .await?;
    }
    Ok(())
}

/// Whether the database already holds a testbed dataset.
pub async fn has_dataset(db: &Database) -> bool {
    sqlx::query("SELECT value FROM tb_meta WHERE name = 'size'")
        .fetch_optional(db.pool())
        .await
        .is_ok()
}

/// After rows were inserted with explicit ids, PostgreSQL's sequences must
/// be moved past them so that the site's own inserts get fresh ids.
pub async fn sync_sequences(db: &Database) -> Result<(), sqlx::Error> {
    if db.dialect() != Dialect::Postgres {
        return Ok(());
    }
    for table in TABLES {
        if matches!(table, "tb_meta" | "tb_sessions" | "tb_session_locks") {
            continue;
        }
        let statement = format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
             COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
        );
        db.pool().execute(statement.as_str()).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_typed_per_dialect() {
        let s = create_statement(Dialect::Sqlite, "tb_logs", false);
        assert!(s.starts_with("CREATE TABLE tb_logs (id INTEGER PRIMARY KEY,"));
        let p = create_statement(Dialect::Postgres, "tb_sessions", true);
        assert!(p.starts_with("CREATE TABLE IF NOT EXISTS tb_sessions"));
        let m = create_statement(Dialect::MySql, "tb_users", false);
        assert!(m.contains("BIGINT AUTO_INCREMENT PRIMARY KEY") && m.ends_with("utf8mb4"));
        for table in TABLES {
            assert!(!create_statement(Dialect::MySql, table, false).contains('@'));
        }
    }
}
