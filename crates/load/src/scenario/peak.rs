//! `peak:`: the busiest minute of the access log a workload was written
//! from (`headroom scenario from-log --out`), as users. A run says how many
//! times that peak its users are; `capacity` says its answer in peaks.

use crate::yaml::{Doc, LocatedError};
use marked_yaml::Node as Yaml;

const PEAK_KEYS: &[&str] = &["minute", "pages", "users"];

/// The log's busiest minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPeak {
    /// When, as the log's writer put it ("2026-11-20 10:01").
    pub minute: String,
    /// Pages seen in it.
    pub pages: u64,
    /// Users reading at once to ask for those pages (at least 1).
    pub users: u64,
}

impl LogPeak {
    /// "1.50× the log's peak of 40 users (at 2026-11-20 10:01 UTC)".
    pub fn times(&self, users: f64) -> String {
        format!(
            "{:.2}× the log's peak of {} users (at {} UTC)",
            users / self.users as f64,
            self.users,
            self.minute
        )
    }
}

/// Reads `peak:`.
pub fn parse_peak(doc: &Doc, node: &Yaml) -> Result<LogPeak, LocatedError> {
    let map = doc.mapping(node, "peak")?;
    doc.keys(map, PEAK_KEYS, "peak")?;
    let field = |key: &str| {
        map.get_node(key).ok_or_else(|| {
            doc.at(
                doc.map_at(map),
                format!("peak needs {key}: (peak: is written by headroom scenario from-log: minute:, pages: and users:)"),
            )
        })
    };
    Ok(LogPeak {
        minute: doc.text(field("minute")?, "minute")?,
        pages: doc.whole(field("pages")?, "pages", 0)?,
        users: doc.whole(field("users")?, "users", 1)?,
    })
}
