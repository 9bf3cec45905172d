//! `peak:`: the busiest minute of the access log a workload was written
//! from (`headroom scenario from-log --out`), as users. A run says how many
//! times that peak its users are; `capacity` says its answer in peaks.

use crate::yaml::{Doc, LocatedError};
use headroom_bundle::capacity::LogPeakRecord;
use marked_yaml::Node as Yaml;

const PEAK_KEYS: &[&str] = &["minute", "pages", "users"];

/// Reads `peak:`.
pub fn parse_peak(doc: &Doc, node: &Yaml) -> Result<LogPeakRecord, LocatedError> {
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
    Ok(LogPeakRecord {
        minute: doc.text(field("minute")?, "minute")?,
        pages: doc.whole(field("pages")?, "pages", 0)?,
        users: doc.whole(field("users")?, "users", 1)?,
    })
}
