//! LogReading access log files: plain or gzip-compressed (as logrotate leaves
//! them), several in the order of their first times, line by line in
//! bytes (a line need not be UTF-8, nor short). A line that does not match
//! the format is counted, and the first few are kept with their file and
//! line number; a file that ends early (a truncated gzip) keeps what it
//! gave and says so.

use super::format::{LineError, LogEntry, LogFormat};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Bad lines kept as examples.
const EXAMPLES: usize = 5;
/// Bytes of a bad line shown.
const SHOWN: usize = 160;
/// The longest line read; a longer one is skipped as too long, read past
/// without being held (a line of a log is rarely over a few KiB: nginx's
/// request line is at most 8 KiB).
pub const MAX_LINE: usize = 64 * 1024;
/// A request logged this long before the latest one read begins the log
/// again (files joined newest first, two servers' logs one after the
/// other), not a request logged late.
pub const JUMP_BACK_MS: i64 = 5 * 60_000;
/// Requests more than this apart from the rest of the log (a wrong year, a
/// clock reset) are set aside: `replay`'s longest span.
pub const APART_MS: i64 = 31 * 86_400_000;
/// The longest span of a log's minutes read into a model.
pub const MAX_SPAN_MS: i64 = 366 * 86_400_000;

/// A line that did not match its format.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    pub file: PathBuf,
    /// From 1.
    pub line: u64,
    pub why: LineError,
    /// Its start, as text (bytes that are not UTF-8 replaced).
    pub text: String,
}

/// Where a line is: its file and its number there (from 1).
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlace {
    pub file: PathBuf,
    pub line: u64,
}

impl std::fmt::Display for LinePlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// The minutes a log's requests span, those set apart left out: the
/// largest run of requests (most requests) whose times are never more than
/// [`APART_MS`] apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSpan {
    /// The first and last clock minutes (ms since the epoch / 60,000).
    pub first_minute: i64,
    pub last_minute: i64,
}

impl LogSpan {
    pub fn contains(&self, time_ms: i64) -> bool {
        (self.first_minute..=self.last_minute).contains(&time_ms.div_euclid(60_000))
    }

    /// Minutes from the first to the last, both counted.
    pub fn minutes(&self) -> usize {
        (self.last_minute - self.first_minute + 1) as usize
    }
}

impl BadLine {
    pub fn describe(&self) -> String {
        format!(
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.why.describe(),
            self.text
        )
    }
}

/// What reading the files found, beside the entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogReading {
    /// The files, in the order read (by their first time).
    pub files: Vec<PathBuf>,
    /// Lines seen (empty ones left out).
    pub lines: u64,
    /// Lines read into entries.
    pub entries: u64,
    pub bad: u64,
    /// The first bad lines.
    pub bad_examples: Vec<BadLine>,
    /// Entries whose time is before the one read before them (a log
    /// written out of order, or files that overlap).
    pub backwards: u64,
    /// Files that ended early, each with what happened.
    pub problems: Vec<String>,
    /// Lines longer than [`MAX_LINE`], skipped, and the first's place.
    pub too_long: u64,
    pub first_too_long: Option<LinePlace>,
    /// Times the log went back by more than [`JUMP_BACK_MS`], and the
    /// first's place.
    pub jumps_back: u64,
    pub first_jump_back: Option<LinePlace>,
    /// Requests set aside as far outside the log's span, and the first's
    /// place and time (UTC).
    pub set_aside: u64,
    pub first_set_aside: Option<(LinePlace, i64)>,
    /// The span read (`read_logs_in_span`).
    pub span: Option<LogSpan>,
}

impl LogReading {
    /// The share of lines not in the format.
    pub fn bad_share(&self) -> f64 {
        if self.lines == 0 {
            0.0
        } else {
            self.bad as f64 / self.lines as f64
        }
    }

    /// [`warnings`](Self::warnings) as standard error shows them: each
    /// line after "headroom: ", the examples indented under theirs.
    pub fn said_warnings(&self) -> Vec<String> {
        self.warnings()
            .into_iter()
            .map(|line| {
                if line.starts_with("  ") {
                    line
                } else {
                    format!("headroom: {line}")
                }
            })
            .collect()
    }

    /// What could not be read, a line each (the bad lines' first
    /// examples indented under their count).
    pub fn warnings(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.bad > 0 {
            lines.push(format!(
                "warning: {} of {} lines ({:.2}%) are not in the format and were left out; the first:",
                self.bad,
                self.lines,
                100.0 * self.bad_share()
            ));
            for bad in &self.bad_examples {
                lines.push(format!("  {}", bad.describe()));
            }
        }
        if self.too_long > 0 {
            lines.push(format!(
                "warning: {} longer than {} KiB left out (not a request a server logs), the first at {}",
                if self.too_long == 1 { "1 line".to_string() } else { format!("{} lines", self.too_long) },
                MAX_LINE / 1024,
                self.first_too_long.as_ref().map_or(String::new(), |p| p.to_string())
            ));
        }
        if let Some((place, time)) = &self.first_set_aside {
            lines.push(format!(
                "warning: {} set aside: more than {} days from the rest of the log (a wrong year or clock?); the first at {place}, timed {} UTC",
                if self.set_aside == 1 { "1 request".to_string() } else { format!("{} requests", self.set_aside) },
                APART_MS / 86_400_000,
                headroom_units::civil::utc_minute_text(*time)
            ));
        }
        if self.backwards > 0 {
            lines.push(format!(
                "warning: {} requests are logged after a later one (files that overlap, or a log written out of order); each counts in its own minute",
                self.backwards
            ));
        }
        if let Some(place) = &self.first_jump_back {
            lines.push(format!(
                "warning: the log goes back in time by more than {} minutes {} (the first at {place}: files joined newest first, or two servers' logs one after the other); the sessions open there end there. Give the files apart (headroom reads them in time order) to join a user's requests across them",
                JUMP_BACK_MS / 60_000,
                if self.jumps_back == 1 { "once".to_string() } else { format!("{} times", self.jumps_back) }
            ));
        }
        for problem in &self.problems {
            lines.push(format!("warning: {problem}"));
        }
        lines
    }
}

/// Why the files could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot read the access log {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no line of {path} is in the format '{format}' (first line: {first}); give the server's format with --format (nginx log_format syntax, or combined / common)")]
    NoneMatch {
        path: PathBuf,
        format: String,
        first: String,
    },
    #[error("no access log given")]
    NoFiles,
    #[error("the log's requests span {days} days, from {first} to {last} UTC (none more than 31 days from the one before): more than a year, the most a model is made of; give fewer files (a month's, a term's)")]
    SpanTooLong {
        first: String,
        last: String,
        days: i64,
    },
}

/// Reads `paths` in the order of their first times, passing each entry
/// to `each`.
pub fn read_logs(
    paths: &[PathBuf],
    format: &LogFormat,
    mut each: impl FnMut(&LogEntry<'_>),
) -> Result<LogReading, LogError> {
    read_logs_within(paths, format, None, |entry| each(entry))
}

/// A first reading of `paths`: the span of their requests' minutes, those
/// far from the rest set apart ([`APART_MS`]); None when no line is in the
/// format. A span over [`MAX_SPAN_MS`] is refused.
pub fn log_span(paths: &[PathBuf], format: &LogFormat) -> Result<Option<LogSpan>, LogError> {
    let mut minutes: HashMap<i64, u64> = HashMap::new();
    read_logs_within(paths, format, None, |entry| {
        *minutes.entry(entry.time_ms.div_euclid(60_000)).or_default() += 1;
    })?;
    let Some(span) = largest_run(minutes) else {
        return Ok(None);
    };
    if (span.last_minute - span.first_minute) * 60_000 > MAX_SPAN_MS {
        return Err(LogError::SpanTooLong {
            first: headroom_units::civil::utc_minute_text(span.first_minute * 60_000),
            last: headroom_units::civil::utc_minute_text(span.last_minute * 60_000),
            days: (span.last_minute - span.first_minute) / 1440,
        });
    }
    Ok(Some(span))
}

/// The run of minutes, never more than [`APART_MS`] apart, holding the most
/// requests (the earliest of equals).
fn largest_run(minutes: HashMap<i64, u64>) -> Option<LogSpan> {
    let mut sorted: Vec<(i64, u64)> = minutes.into_iter().collect();
    sorted.sort_unstable();
    let apart = APART_MS / 60_000;
    let mut best: Option<(u64, LogSpan)> = None;
    let mut at = 0;
    while at < sorted.len() {
        let mut end = at;
        let mut requests = sorted[at].1;
        while end + 1 < sorted.len() && sorted[end + 1].0 - sorted[end].0 <= apart {
            end += 1;
            requests += sorted[end].1;
        }
        if best.is_none_or(|(most, _)| requests > most) {
            let span = LogSpan {
                first_minute: sorted[at].0,
                last_minute: sorted[end].0,
            };
            best = Some((requests, span));
        }
        at = end + 1;
    }
    best.map(|(_, span)| span)
}

/// Reads `paths` in the order of their first times, passing each entry
/// within `span` to `each`; those outside are counted and set aside.
pub fn read_logs_within(
    paths: &[PathBuf],
    format: &LogFormat,
    span: Option<LogSpan>,
    mut each: impl FnMut(&LogEntry<'_>),
) -> Result<LogReading, LogError> {
    if paths.is_empty() {
        return Err(LogError::NoFiles);
    }
    let mut ordered = Vec::new();
    for path in paths {
        ordered.push((first_time(path, format)?, path.clone()));
    }
    ordered.sort_by_key(|(time, _)| *time);
    let mut reading = LogReading {
        files: ordered.iter().map(|(_, p)| p.clone()).collect(),
        span,
        ..LogReading::default()
    };
    let mut last = i64::MIN;
    let mut latest = i64::MIN;
    let mut line = Vec::with_capacity(4096);
    for (_, path) in &ordered {
        let mut reader = open(path)?;
        let mut number = 0u64;
        loop {
            let read = match next_line(&mut reader, &mut line) {
                Ok(Line::End) => break,
                Ok(read) => read,
                Err(e) => {
                    reading.problems.push(format!(
                        "{} ends early after line {number} ({e}): the lines before are read, the rest of the file is missing",
                        path.display()
                    ));
                    break;
                }
            };
            number += 1;
            let place = || LinePlace {
                file: path.clone(),
                line: number,
            };
            if read == Line::TooLong {
                reading.lines += 1;
                reading.too_long += 1;
                reading.first_too_long.get_or_insert_with(place);
                continue;
            }
            let text = trim_line_end(&line);
            if text.is_empty() {
                continue;
            }
            reading.lines += 1;
            match format.read(text) {
                Ok(entry) => {
                    if span.is_some_and(|s| !s.contains(entry.time_ms)) {
                        reading.set_aside += 1;
                        reading
                            .first_set_aside
                            .get_or_insert_with(|| (place(), entry.time_ms));
                        continue;
                    }
                    reading.entries += 1;
                    if entry.time_ms < last {
                        reading.backwards += 1;
                    }
                    // The log begins again: the latest is counted from here.
                    if entry.time_ms < latest.saturating_sub(JUMP_BACK_MS) {
                        reading.jumps_back += 1;
                        reading.first_jump_back.get_or_insert_with(place);
                        latest = entry.time_ms;
                    }
                    last = last.max(entry.time_ms);
                    latest = latest.max(entry.time_ms);
                    each(&entry);
                }
                Err(why) => {
                    reading.bad += 1;
                    if reading.bad_examples.len() < EXAMPLES {
                        reading.bad_examples.push(BadLine {
                            file: path.clone(),
                            line: number,
                            why,
                            text: shown(text),
                        });
                    }
                }
            }
        }
    }
    Ok(reading)
}

/// What [`next_line`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// The end of the file.
    End,
    /// A line, in the buffer.
    Read,
    /// A line longer than [`MAX_LINE`], read past; the buffer holds its
    /// start.
    TooLong,
}

/// Reads the next line into `line` (cleared first), never holding more
/// than [`MAX_LINE`] bytes of it.
fn next_line(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> std::io::Result<Line> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match (any, too_long) {
                (false, _) => Line::End,
                (true, false) => Line::Read,
                (true, true) => Line::TooLong,
            });
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(end) => (end + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            // The line end (\r\n) is not counted.
            if line.len() + take > MAX_LINE + 2 {
                too_long = true;
                line.truncate(SHOWN);
                let room = SHOWN.saturating_sub(line.len()).min(take);
                line.extend_from_slice(&chunk[..room]);
            } else {
                line.extend_from_slice(&chunk[..take]);
            }
        }
        reader.consume(take);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

/// The time of a file's first line in the format; a file with none is
/// refused (the format is not the server's).
fn first_time(path: &Path, format: &LogFormat) -> Result<i64, LogError> {
    let mut reader = open(path)?;
    let mut line = Vec::new();
    let mut first: Option<String> = None;
    for _ in 0..1000 {
        match next_line(&mut reader, &mut line) {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong) => {
                first.get_or_insert_with(|| shown(&line));
                continue;
            }
            Ok(Line::Read) => {}
        }
        let text = trim_line_end(&line);
        if text.is_empty() {
            continue;
        }
        if let Ok(entry) = format.read(text) {
            return Ok(entry.time_ms);
        }
        first.get_or_insert_with(|| shown(text));
    }
    match first {
        // An empty file sorts first and adds nothing.
        None => Ok(i64::MIN),
        Some(first) => Err(LogError::NoneMatch {
            path: path.to_path_buf(),
            format: format.text.clone(),
            first,
        }),
    }
}

/// A file's lines: gunzipped when it starts as gzip does.
fn open(path: &Path) -> Result<Box<dyn BufRead>, LogError> {
    let failed = |source| LogError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(failed)?);
    let gzip = file.fill_buf().map_err(failed)?.starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        let decoder: Box<dyn Read> = Box::new(flate2::read::MultiGzDecoder::new(file));
        Box::new(BufReader::with_capacity(1 << 16, decoder))
    } else {
        Box::new(file)
    })
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A line's start as text safe for a terminal: at most [`SHOWN`] bytes,
/// control characters (ESC, NUL, ...) written as `\x1b`, bytes that are
/// not UTF-8 replaced.
fn shown(text: &[u8]) -> String {
    let cut = &text[..text.len().min(SHOWN)];
    let mut shown = String::with_capacity(cut.len());
    for c in String::from_utf8_lossy(cut).chars() {
        if c.is_control() {
            shown.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            shown.push(c);
        }
    }
    if text.len() > SHOWN {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(t: &str, path: &str) -> String {
        format!("10.0.0.1 - - [{t} +0000] \"GET {path} HTTP/1.1\" 200 10 \"-\" \"ua\"\n")
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("access-log-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    /// logrotate's files (the oldest gzipped) are read oldest first,
    /// whatever order they are given in; bad lines are counted and shown
    /// with their place (bytes that are not UTF-8, and an escape sequence,
    /// shown safely), a line of a megabyte is skipped as too long, and a
    /// time going backwards is counted.
    #[test]
    fn rotated_files_are_read_in_time_order_with_bad_lines_counted() {
        let d = dir("rotated");
        let old = line("01/Jan/2027:00:00:00", "/a") + &line("01/Jan/2027:00:00:01", "/b");
        std::fs::write(d.join("access.log.2.gz"), gzip(old.as_bytes())).unwrap();
        let mut middle = line("01/Jan/2027:00:01:00", "/c").into_bytes();
        middle.extend_from_slice(b"\xff\xfe not a line \x1b]0;PWNED\x07\0\r\n");
        middle.extend_from_slice(line("01/Jan/2027:00:00:30", "/d").as_bytes());
        std::fs::write(d.join("access.log.1"), middle).unwrap();
        let mut new = line("01/Jan/2027:00:02:00", "/e").into_bytes();
        new.extend_from_slice(&vec![b'x'; 1 << 20]);
        new.extend_from_slice(b"\n\n");
        new.extend_from_slice(
            line(
                "01/Jan/2027:00:02:01",
                &format!("/{}", "f".repeat(32 << 10)),
            )
            .as_bytes(),
        );
        std::fs::write(d.join("access.log"), new).unwrap();
        let format = LogFormat::parse("combined").unwrap();
        let paths: Vec<PathBuf> = ["access.log", "access.log.2.gz", "access.log.1"]
            .iter()
            .map(|f| d.join(f))
            .collect();
        let mut seen = Vec::new();
        let reading = read_logs(&paths, &format, |e| {
            seen.push(String::from_utf8_lossy(&e.target[..e.target.len().min(2)]).into_owned())
        })
        .unwrap();
        assert_eq!(seen, ["/a", "/b", "/c", "/d", "/e", "/f"]);
        assert_eq!(
            reading.files,
            vec![
                d.join("access.log.2.gz"),
                d.join("access.log.1"),
                d.join("access.log")
            ]
        );
        assert_eq!((reading.lines, reading.entries, reading.bad), (8, 6, 1));
        assert_eq!(reading.backwards, 1);
        let bad = &reading.bad_examples;
        assert_eq!(
            bad[0].describe(),
            format!(
                "{}:2: it does not have the format's shape: �� not a line \\x1b]0;PWNED\\x07\\x00",
                d.join("access.log.1").display()
            )
        );
        assert_eq!(reading.too_long, 1);
        let warnings = reading.warnings().join("\n");
        assert!(
            warnings.contains(&format!(
                "1 line longer than 64 KiB left out (not a request a server logs), the first at {}:2",
                d.join("access.log").display()
            )),
            "{warnings}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A gzip of a line of 64 MiB without a line end (a gzip bomb) is
    /// read past in bounded memory: the line is never held (the buffer
    /// stays under a KiB), counted too long.
    #[test]
    fn a_line_without_end_is_read_past_unheld() {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            encoder.write_all(&zeros).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let d = dir("bomb");
        std::fs::write(d.join("bomb.gz"), bomb).unwrap();
        let mut reader = open(&d.join("bomb.gz")).unwrap();
        let mut line = Vec::new();
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Line::TooLong);
        assert!(line.capacity() < MAX_LINE * 2 && line.len() <= SHOWN);
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Line::End);
        let format = LogFormat::parse("combined").unwrap();
        let refused = read_logs(&[d.join("bomb.gz")], &format, |_| {}).unwrap_err();
        assert!(refused.to_string().contains("\\x00\\x00"), "{refused}");
        assert!(refused.to_string().len() < 1000, "{refused}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The span is the largest run of requests never 31 days apart: a line
    /// of another year is outside it, and a span over a year is refused.
    #[test]
    fn the_span_leaves_out_lines_far_from_the_rest() {
        let day = 20_000 * 1440;
        let minutes = |list: &[(i64, u64)]| list.iter().copied().collect::<HashMap<i64, u64>>();
        let span = largest_run(minutes(&[
            (day, 5),
            (day + 9, 5),
            (day + 5_000_000, 1),
            (3, 1),
        ]));
        assert_eq!(
            span,
            Some(LogSpan {
                first_minute: day,
                last_minute: day + 9
            })
        );
        let month = APART_MS / 60_000;
        let long: Vec<(i64, u64)> = (0..14).map(|i| (day + i * month, 1)).collect();
        let span = largest_run(minutes(&long)).unwrap();
        assert_eq!(span.minutes() as i64, 13 * month + 1);
        assert_eq!(largest_run(HashMap::new()), None);
    }

    /// A gzip cut short keeps its lines before the cut and says so; a file
    /// in another format is refused with its first line and what to do.
    #[test]
    fn a_truncated_gzip_keeps_its_lines_and_another_format_is_refused() {
        let d = dir("truncated");
        let text: String = (0..2000)
            .map(|i| {
                line(
                    &format!("01/Jan/2027:00:{:02}:{:02}", i / 60 % 60, i % 60),
                    &format!("/p{i}"),
                )
            })
            .collect();
        let whole = gzip(text.as_bytes());
        std::fs::write(d.join("cut.gz"), &whole[..whole.len() / 2]).unwrap();
        let format = LogFormat::parse("combined").unwrap();
        let mut count = 0;
        let reading = read_logs(&[d.join("cut.gz")], &format, |_| count += 1).unwrap();
        assert!(count > 100 && count < 2000, "{count}");
        assert_eq!(reading.entries, count);
        assert_eq!(reading.problems.len(), 1, "{:?}", reading.problems);
        assert!(
            reading.problems[0].contains("cut.gz ends early after line"),
            "{:?}",
            reading.problems
        );
        std::fs::write(d.join("json.log"), "{\"time\": 1}\n").unwrap();
        let refused = read_logs(&[d.join("json.log")], &format, |_| {}).unwrap_err();
        assert!(refused.to_string().contains("no line of"), "{refused}");
        assert!(refused.to_string().contains("{\"time\": 1}"), "{refused}");
        assert!(read_logs(&[d.join("missing.log")], &format, |_| {}).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
