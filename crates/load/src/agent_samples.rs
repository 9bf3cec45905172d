//! An agent's `/samples`, read over HTTP and checked: what the monitor
//! aligns with the run and what the clock reads the agent's time from.

use headroom_monitor::agent::{get, SamplesReply};
use std::io;

/// One `/samples` answer, or why it cannot be used: no answer, an HTTP
/// error, an empty or unreadable body, or figures no host can have.
pub fn read_samples(
    authority: &str,
    path: &str,
    token: Option<&str>,
) -> Result<SamplesReply, String> {
    let body = match get(authority, path, token) {
        Ok((200, body)) if body.is_empty() => return Err("it sent an empty answer".into()),
        Ok((200, body)) => body,
        Ok((401, _)) => return Err("it refused the token (--agent-token)".into()),
        Ok((status, _)) => return Err(format!("it answered HTTP {status}")),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            return Err("connection refused: the agent is not running".into())
        }
        Err(e) => return Err(e.to_string()),
    };
    let reply: SamplesReply = serde_json::from_slice(&body)
        .map_err(|e| format!("its answer is not headroom agent JSON ({e})"))?;
    for sample in &reply.samples {
        let r = &sample.resources;
        let percent = |v: f64| v.is_finite() && (-0.5..=100.5).contains(&v);
        if !percent(r.cpu_pct) || !percent(r.memory_used_pct) || !percent(r.iowait_pct) {
            return Err(format!(
                "it sent figures no host can have (CPU {}%, memory {}%)",
                r.cpu_pct, r.memory_used_pct
            ));
        }
    }
    Ok(reply)
}
