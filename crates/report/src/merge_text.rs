//! What `headroom merge` prints of the merged run: its summary with the
//! shards and why it is partial (JSON), or the shards merged and the
//! summary (text).

use crate::json::{json_summary, ReportInput};
use crate::terminal::render_summary;
use headroom_bundle::manifest::MergeRecord;

/// The run's summary as JSON, with the shards and why it is partial.
pub fn merged_json(input: &ReportInput<'_>, record: Option<&MergeRecord>) -> serde_json::Value {
    let mut value: serde_json::Value =
        serde_json::from_str(&json_summary(input)).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("merged".into(), serde_json::json!(record));
    }
    value
}

/// The shards merged into the bundle, each described, then the summary.
pub fn merged_text(input: &ReportInput<'_>, record: Option<&MergeRecord>) -> String {
    let shards = record.map_or(0, |r| r.shards.len());
    let mut text = format!(
        "headroom merge: {shards} shard(s) into {}\n",
        input.bundle.display()
    );
    for shard in record.map(|r| r.shards.as_slice()).unwrap_or_default() {
        text.push_str(&format!("  {}\n", shard.describe()));
    }
    text.push_str(&render_summary(input));
    text
}
