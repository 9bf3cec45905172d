//! Prints headroom's experiment statistics for the cases read from stdin,
//! one JSON object per line, so bench/stats can set them beside scipy's:
//!   {"t95": DF}            → {"t95": value}
//!   {"a": [...], "b": [...]} → {"ci": [low, high], "df": df} (Welch), or null

use headroom_analysis::experiment::{difference, t95};
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(case) = serde_json::from_str::<serde_json::Value>(&line) else {
            let _ = writeln!(out, "null");
            continue;
        };
        let answer = if let Some(df) = case.get("t95").and_then(|v| v.as_f64()) {
            serde_json::json!({ "t95": t95(df) })
        } else {
            let values = |key: &str| -> Vec<f64> {
                case.get(key)
                    .and_then(|v| v.as_array())
                    .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
                    .unwrap_or_default()
            };
            match difference(&values("a"), &values("b")) {
                Some(d) => serde_json::json!({ "ci": [d.ci95.0, d.ci95.1], "df": d.df }),
                None => serde_json::Value::Null,
            }
        };
        let _ = writeln!(out, "{answer}");
    }
}
