//! `headroom replay`: an access log's requests sent again at their
//! recorded times (or faster), each the arrival of an open model, so that
//! a slow server cannot slow the schedule down. [`ReplayLog`] holds the
//! requests read from the log (one text arena for their targets);
//! [`ReplayPlan`] is what the engine runs: request `n` is due at its
//! offset divided by the speed, and its replayed status and send time
//! are kept beside the recorded status (`replay.csv` in the bundle).
//! Labels are the folded patterns ([`crate::traffic::pattern`]): no id,
//! token or address reaches the bundle.

use crate::traffic::pattern::fold;
use headroom_import::access_log::format::{unescape_target, LogEntry, LogFormat};
use headroom_import::access_log::read::{read_logs, LogReading};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The most labels a replay has: the most requested patterns, the rest
/// under [`OTHER`].
pub const MAX_LABELS: usize = 100;
/// The label of the patterns beyond [`MAX_LABELS`].
pub const OTHER: &str = "other patterns";
/// The file of each request's outcome in the bundle.
pub const REPLAY_CSV: &str = "replay.csv";
/// The status of a request sent whose answer had not come when the run
/// ended.
pub const UNANSWERED: u16 = u16::MAX;

/// One request of the log.
#[derive(Debug, Clone, Copy)]
struct Recorded {
    /// From the first request replayed, µs (requests logged within one
    /// second, at a second's resolution, spread evenly over it).
    offset_us: u64,
    /// The method and target in the arena.
    method: (u32, u8),
    target: (u32, u32),
    status: u16,
    label: u16,
}

/// A request as read, before the log is put in time order.
#[derive(Debug, Clone, Copy)]
struct Logged {
    time_ms: i64,
    method: (u32, u8),
    target: (u32, u32),
    status: u16,
}

/// The requests of a log, in time order.
#[derive(Debug)]
pub struct ReplayLog {
    arena: String,
    requests: Vec<Recorded>,
    pub labels: Vec<String>,
    /// Requests of methods not replayed, by method.
    pub left_out: BTreeMap<String, u64>,
    /// Requests whose target was not a path (`*`, a full URL, not UTF-8).
    pub unusable: u64,
    /// The log's first replayed request, ms since the epoch.
    pub first_ms: i64,
}

impl ReplayLog {
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// From the first request to the last, as recorded.
    pub fn span(&self) -> Duration {
        Duration::from_micros(self.requests.last().map_or(0, |r| r.offset_us))
    }

    /// The longest time between two requests in a row, and the later's
    /// number in time order (None for fewer than two).
    pub fn widest_gap(&self) -> Option<(usize, Duration)> {
        self.requests
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i + 1, w[1].offset_us - w[0].offset_us))
            .max_by_key(|(_, gap)| *gap)
            .map(|(n, gap)| (n, Duration::from_micros(gap)))
    }

    fn method(&self, n: usize) -> &str {
        let (start, len) = self.requests[n].method;
        &self.arena[start as usize..start as usize + usize::from(len)]
    }

    fn target(&self, n: usize) -> &str {
        let (start, len) = self.requests[n].target;
        &self.arena[start as usize..(start + len) as usize]
    }
}

/// Reads the logs' requests of the `methods` (upper case), in time order.
pub fn read_replay(
    paths: &[PathBuf],
    format: &str,
    methods: &[String],
) -> Result<(ReplayLog, LogReading), String> {
    let format = LogFormat::parse(format)?;
    let mut read = RequestsRead::default();
    let reading =
        read_logs(paths, &format, |entry| read.add(entry, methods)).map_err(|e| e.to_string())?;
    if read.too_large {
        return Err(format!(
            "the log's requests take more than 4 GiB: replay it in parts (a day's files at a time); {} requests were read before that",
            read.raw.len()
        ));
    }
    let (labels, label_of) = label_patterns(&read.patterns);
    let (first_ms, requests) = in_time_order(&read.raw, &read.folded, &label_of);
    Ok((
        ReplayLog {
            arena: read.arena,
            requests,
            labels,
            left_out: read.left_out,
            unusable: read.unusable,
            first_ms,
        },
        reading,
    ))
}

/// The requests of a log as they are read, in the log's order.
#[derive(Default)]
struct RequestsRead {
    arena: String,
    raw: Vec<Logged>,
    left_out: BTreeMap<String, u64>,
    unusable: u64,
    too_large: bool,
    /// Each pattern once, with its count; a request keeps its pattern's id.
    ids: HashMap<String, u32>,
    patterns: Vec<(String, u64)>,
    folded: Vec<u32>,
}

impl RequestsRead {
    /// Keeps the request `entry` if its method is one of `methods` and its
    /// target can be sent again, else counts it as left out or unusable.
    fn add(&mut self, entry: &LogEntry<'_>, methods: &[String]) {
        let method = String::from_utf8_lossy(entry.method);
        if !methods.iter().any(|m| m.eq_ignore_ascii_case(&method)) {
            *self.left_out.entry(method.into_owned()).or_default() += 1;
            return;
        }
        // nginx writes a byte it would not print as \xHH, Apache a quote
        // as \": the client sent the byte, which a URL carries as %HH.
        let escaped = unescape_target(entry.target);
        let Ok(target) = std::str::from_utf8(&escaped) else {
            self.unusable += 1;
            return;
        };
        if !target.starts_with('/')
            || target.bytes().any(|b| b <= b' ' || b >= 0x7f)
            || method.len() > 16
            || !method.bytes().all(|b| b.is_ascii_alphabetic())
        {
            self.unusable += 1;
            return;
        }
        if self.arena.len() + method.len() + target.len() > u32::MAX as usize {
            self.too_large = true;
            return;
        }
        let method_at = self.arena.len() as u32;
        self.arena.push_str(&method.to_ascii_uppercase());
        let target_at = self.arena.len() as u32;
        self.arena.push_str(target);
        let id = self.pattern_id(fold(target.as_bytes()));
        self.patterns[id as usize].1 += 1;
        self.folded.push(id);
        self.raw.push(Logged {
            time_ms: entry.time_ms,
            method: (method_at, (target_at - method_at) as u8),
            target: (target_at, target.len() as u32),
            status: entry.status,
        });
    }

    /// The id of `pattern`, a new one (counting none yet) the first time.
    fn pattern_id(&mut self, pattern: String) -> u32 {
        match self.ids.get(&pattern) {
            Some(id) => *id,
            None => {
                let id = self.patterns.len() as u32;
                self.ids.insert(pattern.clone(), id);
                self.patterns.push((pattern, 0));
                id
            }
        }
    }
}

/// The labels, the most requested patterns (ties by text) and [`OTHER`]
/// for the rest, and each pattern's label.
fn label_patterns(patterns: &[(String, u64)]) -> (Vec<String>, Vec<u16>) {
    let mut by_count: Vec<u32> = (0..patterns.len() as u32).collect();
    by_count.sort_by(|a, b| {
        let (a, b) = (&patterns[*a as usize], &patterns[*b as usize]);
        b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
    });
    let mut labels: Vec<String> = by_count
        .iter()
        .take(MAX_LABELS)
        .map(|id| patterns[*id as usize].0.clone())
        .collect();
    if by_count.len() > MAX_LABELS {
        labels.push(OTHER.to_string());
    }
    // A pattern's label: its rank among the labels, else the last.
    let other = labels.len().saturating_sub(1) as u16;
    let mut label_of = vec![other; patterns.len()];
    for (rank, id) in by_count.iter().take(MAX_LABELS).enumerate() {
        label_of[*id as usize] = rank as u16;
    }
    (labels, label_of)
}

/// The requests `raw` in time order, the log's order kept among equal
/// times, each with its offset from the first and its label (through its
/// pattern `folded`); and the first request's time.
fn in_time_order(raw: &[Logged], folded: &[u32], label_of: &[u16]) -> (i64, Vec<Recorded>) {
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by_key(|i| raw[*i].time_ms);
    let first_ms = order.first().map_or(0, |i| raw[*i].time_ms);
    // A log written to the second ($time_local): its requests of one
    // second are spread evenly over it, as they came.
    let to_the_second = raw.iter().all(|r| r.time_ms % 1000 == 0);
    let mut requests: Vec<Recorded> = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < order.len() {
        // The requests logged at one time.
        let time = raw[order[at]].time_ms;
        let same = order[at..]
            .iter()
            .take_while(|i| raw[**i].time_ms == time)
            .count();
        for k in 0..same {
            let i = order[at + k];
            let Logged {
                method,
                target,
                status,
                ..
            } = raw[i];
            // Less than 31 days is refused later; past u64 µs, never.
            let base = u64::try_from(time.saturating_sub(first_ms))
                .unwrap_or(0)
                .saturating_mul(1000);
            let spread = if to_the_second {
                1_000_000 * k as u64 / same as u64
            } else {
                0
            };
            requests.push(Recorded {
                offset_us: base.saturating_add(spread),
                method,
                target,
                status,
                label: label_of[folded[i] as usize],
            });
        }
        at += same;
    }
    (first_ms, requests)
}

/// A log ready to be replayed against a target.
#[derive(Debug)]
pub struct ReplayPlan {
    pub log: ReplayLog,
    /// Offsets are divided by this (2: twice as fast).
    pub speed: f64,
    /// The headers after the request line, with the blank line.
    headers: Vec<u8>,
    /// Per request: the replayed status (16 bits) and the send time from
    /// the run's start in µs (48 bits), plus one; 0 until sent.
    outcomes: Box<[AtomicU64]>,
}

impl ReplayPlan {
    /// `host` is the Host header's value; `extra` more header lines.
    pub fn new(log: ReplayLog, speed: f64, host: &str, extra: &[(String, String)]) -> ReplayPlan {
        let mut headers = String::new();
        let has = |name: &str| extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if !has("host") {
            let _ = write!(headers, "Host: {host}\r\n");
        }
        if !has("user-agent") {
            let _ = write!(
                headers,
                "User-Agent: {}\r\n",
                headroom_http::target::USER_AGENT
            );
        }
        if !has("accept") {
            headers.push_str("Accept: */*\r\n");
        }
        for (name, value) in extra {
            let _ = write!(headers, "{name}: {value}\r\n");
        }
        headers.push_str("\r\n");
        let outcomes = (0..log.len()).map(|_| AtomicU64::new(0)).collect();
        ReplayPlan {
            log,
            speed,
            headers: headers.into_bytes(),
            outcomes,
        }
    }

    /// When request `n` is due, from the run's start (None past the last).
    pub fn due(&self, n: u64) -> Option<Duration> {
        let request = self.log.requests.get(usize::try_from(n).ok()?)?;
        Some(Duration::from_micros(
            (request.offset_us as f64 / self.speed).round() as u64,
        ))
    }

    /// The run's length: the last request's due time.
    pub fn span(&self) -> Duration {
        self.log
            .len()
            .checked_sub(1)
            .and_then(|last| self.due(last as u64))
            .unwrap_or_default()
    }

    /// Request `n`'s label, whether it is a HEAD, and its bytes written
    /// into `out` (cleared first; a VU reuses it: nothing is allocated once
    /// it has grown to the longest request).
    pub fn request_into(&self, n: usize, out: &mut Vec<u8>) -> (u16, bool) {
        out.clear();
        let method = self.log.method(n);
        out.extend_from_slice(method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.log.target(n).as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let with_body = matches!(method, "POST" | "PUT" | "PATCH");
        if with_body {
            // The log holds no body: an empty one is sent.
            out.extend_from_slice(b"Content-Length: 0\r\n");
        }
        out.extend_from_slice(&self.headers);
        (self.log.requests[n].label, method == "HEAD")
    }

    /// Keeps request `n`'s outcome: its status (0: no answer, a timeout or
    /// a refused connection; [`UNANSWERED`] while it waits for its answer)
    /// and when it was sent, from the run's start.
    pub fn sent(&self, n: usize, status: u16, at: Duration) {
        if let Some(slot) = self.outcomes.get(n) {
            let micros = (at.as_micros() as u64).min((1 << 48) - 2);
            slot.store((u64::from(status) << 48) | (micros + 1), Ordering::Relaxed);
        }
    }

    /// Request `n`'s outcome: status and send time, if it was sent.
    pub fn outcome(&self, n: usize) -> Option<(u16, Duration)> {
        let value = self.outcomes.get(n)?.load(Ordering::Relaxed);
        (value != 0).then(|| {
            (
                (value >> 48) as u16,
                Duration::from_micros((value & ((1 << 48) - 1)) - 1),
            )
        })
    }

    /// How the replayed statuses compare with the recorded ones.
    pub fn statuses(&self) -> StatusComparison {
        let mut comparison = StatusComparison::default();
        for (n, request) in self.log.requests.iter().enumerate() {
            match self.outcome(n) {
                None => comparison.not_sent += 1,
                Some((UNANSWERED, _)) => comparison.unanswered += 1,
                Some((status, _)) if status == request.status => comparison.same += 1,
                Some((status, _)) => {
                    *comparison
                        .changed
                        .entry((request.status, status))
                        .or_default() += 1
                }
            }
        }
        comparison
    }

    /// Writes `replay.csv`: a row a request of the log, in the log's time
    /// order, with its label (no target: ids and tokens stay out),
    /// recorded and replayed statuses, when it was due and when it was
    /// sent (ms from the run's start; empty when it was not).
    pub fn write_csv(&self, dir: &Path) -> std::io::Result<()> {
        let file = std::fs::File::create(dir.join(REPLAY_CSV))?;
        let mut out = std::io::BufWriter::new(file);
        use std::io::Write;
        writeln!(
            out,
            "request,label,method,recorded_status,replayed_status,due_ms,sent_ms"
        )?;
        let mut label = String::new();
        for (n, request) in self.log.requests.iter().enumerate() {
            label.clear();
            csv_field(&mut label, &self.log.labels[usize::from(request.label)]);
            let due = self.due(n as u64).unwrap_or_default().as_secs_f64() * 1000.0;
            match self.outcome(n) {
                Some((UNANSWERED, at)) => writeln!(
                    out,
                    "{},{label},{},{},,{due:.3},{:.3}",
                    n + 1,
                    self.log.method(n),
                    request.status,
                    at.as_secs_f64() * 1000.0
                )?,
                Some((status, at)) => writeln!(
                    out,
                    "{},{label},{},{},{status},{due:.3},{:.3}",
                    n + 1,
                    self.log.method(n),
                    request.status,
                    at.as_secs_f64() * 1000.0
                )?,
                None => writeln!(
                    out,
                    "{},{label},{},{},,{due:.3},",
                    n + 1,
                    self.log.method(n),
                    request.status
                )?,
            }
        }
        out.flush()
    }
}

/// A CSV field, quoted when it must be.
fn csv_field(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// Replayed statuses against recorded ones.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StatusComparison {
    pub same: u64,
    /// (recorded, replayed) → requests; 0 replayed: no answer.
    pub changed: BTreeMap<(u16, u16), u64>,
    /// Sent, their answer not come when the run ended.
    pub unanswered: u64,
    pub not_sent: u64,
}

impl StatusComparison {
    /// "1,203 answered as recorded; 12 not: 200 → 404 (10), 200 → no answer (2)".
    pub fn describe(&self) -> String {
        use headroom_units::quantity::group_thousands;
        let mut text = format!("{} answered as recorded", group_thousands(self.same as i64));
        let differ: u64 = self.changed.values().sum();
        if differ > 0 {
            let mut changed: Vec<(&(u16, u16), &u64)> = self.changed.iter().collect();
            changed.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let shown: Vec<String> = changed
                .iter()
                .take(5)
                .map(|((was, is), n)| {
                    let is = if *is == 0 {
                        "no answer".to_string()
                    } else {
                        is.to_string()
                    };
                    format!("{was} → {is} ({})", group_thousands(**n as i64))
                })
                .collect();
            let _ = write!(
                text,
                "; {} not: {}",
                group_thousands(differ as i64),
                shown.join(", ")
            );
        }
        if self.unanswered > 0 {
            let _ = write!(
                text,
                "; {} sent, their answer not come when the run ended",
                group_thousands(self.unanswered as i64)
            );
        }
        if self.not_sent > 0 {
            let _ = write!(
                text,
                "; {} not sent (the run ended first)",
                group_thousands(self.not_sent as i64)
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(lines: &str) -> ReplayLog {
        // A directory a log, as tests run at once.
        let dir = std::env::temp_dir().join(format!(
            "headroom-replay-{}-{}",
            std::process::id(),
            lines.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("access.log");
        std::fs::write(&path, lines).unwrap();
        let (log, _) = read_replay(
            &[path],
            "$msec \"$request\" $status",
            &["GET".to_string(), "HEAD".to_string()],
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        log
    }

    #[test]
    fn requests_are_replayed_in_time_order_at_their_offsets() {
        let log = log_of(
            "1700000000.500 \"GET /b?id=2 HTTP/1.1\" 200\n\
             1700000000.250 \"GET /a HTTP/1.1\" 404\n\
             1700000001.000 \"POST /form HTTP/1.1\" 303\n\
             1700000002.000 \"GET /c HTTP/1.1\" 200\n\
             1700000002.000 \"HEAD /d HTTP/1.1\" 200\n\
             1700000003.000 \"GET http://other/ HTTP/1.1\" 200\n",
        );
        // Milliseconds in the log: requests at one time stay together.
        assert_eq!(log.len(), 4);
        assert_eq!(log.left_out.get("POST"), Some(&1));
        assert_eq!(log.unusable, 1);
        let plan = ReplayPlan::new(log, 2.0, "example.org", &[]);
        // /a first; at twice the speed.
        assert_eq!(plan.due(0), Some(Duration::ZERO));
        assert_eq!(plan.due(1), Some(Duration::from_millis(125)));
        assert_eq!(plan.due(2), Some(Duration::from_millis(875)));
        assert_eq!(plan.due(3), Some(Duration::from_millis(875)));
        assert_eq!(plan.due(4), None);
        let mut bytes = Vec::new();
        let (label, head) = plan.request_into(1, &mut bytes);
        assert_eq!(plan.log.labels[usize::from(label)], "/b?id=*");
        assert!(!head);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with("GET /b?id=2 HTTP/1.1\r\nHost: example.org\r\n"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\n"));
        assert!(plan.request_into(3, &mut bytes).1);
        plan.sent(0, 404, Duration::from_millis(3));
        plan.sent(1, 500, Duration::from_millis(130));
        plan.sent(2, 0, Duration::from_millis(900));
        let statuses = plan.statuses();
        assert_eq!(statuses.same, 1);
        assert_eq!(statuses.not_sent, 1);
        assert_eq!(
            statuses.describe(),
            "1 answered as recorded; 2 not: 200 → no answer (1), 200 → 500 (1); 1 not sent (the run ended first)"
        );
        assert_eq!(plan.outcome(1), Some((500, Duration::from_millis(130))));
        // A log to the second: a second's requests spread over it.
        let log = log_of(
            "1700000000.000 \"GET /a HTTP/1.1\" 200\n\
             1700000001.000 \"GET /b HTTP/1.1\" 200\n\
             1700000001.000 \"GET /c HTTP/1.1\" 200\n\
             1700000001.000 \"GET /d HTTP/1.1\" 200\n",
        );
        let plan = ReplayPlan::new(log, 1.0, "example.org", &[]);
        let due: Vec<u128> = (0..4).map(|n| plan.due(n).unwrap().as_millis()).collect();
        assert_eq!(due, vec![0, 1000, 1333, 1666]);
        assert_eq!(plan.log.widest_gap(), Some((1, Duration::from_secs(1))));
        // Sent, its answer not come: said so.
        plan.sent(0, 200, Duration::ZERO);
        plan.sent(1, UNANSWERED, Duration::from_millis(1000));
        let statuses = plan.statuses();
        assert_eq!(
            (statuses.same, statuses.unanswered, statuses.not_sent),
            (1, 1, 2)
        );
        assert!(statuses
            .describe()
            .contains("1 sent, their answer not come when the run ended"));
    }

    #[test]
    fn nginx_escapes_become_percent_encoding() {
        assert_eq!(&*unescape_target(b"/caf\\xC3\\xA9?q=1"), b"/caf%C3%A9?q=1");
        assert_eq!(&*unescape_target(b"/a\\xZZ"), b"/a\\xZZ");
        assert_eq!(&*unescape_target(b"/plain"), b"/plain");
        let log = log_of("1700000000.000 \"GET /caf\\xC3\\xA9 HTTP/1.1\" 200\n");
        let plan = ReplayPlan::new(log, 1.0, "example.org", &[]);
        let mut bytes = Vec::new();
        plan.request_into(0, &mut bytes);
        assert!(bytes.starts_with(b"GET /caf%C3%A9 HTTP/1.1\r\n"));
        // Apache writes a quote in the request as \".
        let log = log_of("1700000000.000 \"GET /c\\\"d HTTP/1.1\" 200\n");
        let plan = ReplayPlan::new(log, 1.0, "example.org", &[]);
        let mut bytes = Vec::new();
        plan.request_into(0, &mut bytes);
        assert!(
            bytes.starts_with(b"GET /c%22d HTTP/1.1\r\n"),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}
