//! headroom's testbed: a reference 3-tier application shaped like Moodle
//! (front page, login, course, page, forum, reply, participants, files) on
//! SQLite, PostgreSQL or MariaDB, with its sessions and cache in a store of
//! the user's choice, a deterministic dataset generator, the generator of
//! the matching journey, and a cluster of instances behind nginx.
//! [`background`] serves a throwaway one for `headroom demo`.

pub mod assets;
pub mod background;
pub mod class;
pub mod cluster;
pub mod db;
pub mod demo_site;
pub mod generate;
mod memcached;
pub mod pages;
mod password;
pub mod plan;
pub mod schema;
pub mod scripted;
pub mod server;
pub mod session;
pub mod site;
pub mod size;
pub mod store;
mod store_error;
mod templates;
pub mod testbed_text;
mod words;

use std::path::PathBuf;

pub use size::{Dataset, Size};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Db(#[from] db::DbError),
    #[error("database query failed: {0}")]
    Sql(#[from] sqlx::Error),
    #[error(transparent)]
    Store(#[from] store_error::StoreError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} already holds a testbed dataset: pass --force to replace it")]
    DatasetExists(String),
    #[error("{0} holds no testbed dataset: create one with `headroom testbed init --db URL`")]
    NoDataset(String),
    #[error(
        "{0} holds a testbed dataset of layout {1}, and this headroom reads layout {2}: \
         replace it with `headroom testbed init --force --db URL`"
    )]
    OtherLayout(String, u32, u32),
    #[error("{0}")]
    Invalid(String),
}
