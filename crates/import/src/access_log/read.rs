//! LogReading access log files: plain or gzip-compressed (as logrotate leaves
//! them), several in the order of their first times, line by line in
//! bytes (a line need not be UTF-8, nor short). A line that does not match
//! the format is counted, and the first few are kept with their file and
//! line number; a file that ends early (a truncated gzip) keeps what it
//! gave and says so.

use super::format::{LineError, LogEntry, LogFormat};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Bad lines kept as examples.
const EXAMPLES: usize = 5;
/// Bytes of a bad line shown.
const SHOWN: usize = 160;

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
        if self.backwards > 0 {
            lines.push(format!(
                "warning: {} requests are logged before the one above them (files that overlap, or a log written out of order); each counts from its own time",
                self.backwards
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
}

/// Reads `paths` in the order of their first times, passing each entry
/// to `each`.
pub fn read_logs(
    paths: &[PathBuf],
    format: &LogFormat,
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
        ..LogReading::default()
    };
    let mut last = i64::MIN;
    let mut line = Vec::with_capacity(4096);
    for (_, path) in &ordered {
        let mut reader = open(path)?;
        let mut number = 0u64;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    reading.problems.push(format!(
                        "{} ends early after line {number} ({e}): the lines before are read, the rest of the file is missing",
                        path.display()
                    ));
                    break;
                }
            }
            number += 1;
            let text = trim_line_end(&line);
            if text.is_empty() {
                continue;
            }
            reading.lines += 1;
            match format.read(text) {
                Ok(entry) => {
                    reading.entries += 1;
                    if entry.time_ms < last {
                        reading.backwards += 1;
                    }
                    last = last.max(entry.time_ms);
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

/// The time of a file's first line in the format; a file with none is
/// refused (the format is not the server's).
fn first_time(path: &Path, format: &LogFormat) -> Result<i64, LogError> {
    let mut reader = open(path)?;
    let mut line = Vec::new();
    let mut first: Option<String> = None;
    for _ in 0..1000 {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
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

fn shown(text: &[u8]) -> String {
    let cut = &text[..text.len().min(SHOWN)];
    let mut shown = String::from_utf8_lossy(cut).into_owned();
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
    /// with their place, a line of a megabyte and bytes that are not
    /// UTF-8 among them, and a time going backwards is counted.
    #[test]
    fn rotated_files_are_read_in_time_order_with_bad_lines_counted() {
        let d = dir("rotated");
        let old = line("01/Jan/2027:00:00:00", "/a") + &line("01/Jan/2027:00:00:01", "/b");
        std::fs::write(d.join("access.log.2.gz"), gzip(old.as_bytes())).unwrap();
        let mut middle = line("01/Jan/2027:00:01:00", "/c").into_bytes();
        middle.extend_from_slice(b"\xff\xfe not a line\r\n");
        middle.extend_from_slice(line("01/Jan/2027:00:00:30", "/d").as_bytes());
        std::fs::write(d.join("access.log.1"), middle).unwrap();
        let mut new = line("01/Jan/2027:00:02:00", "/e").into_bytes();
        new.extend_from_slice(&vec![b'x'; 1 << 20]);
        new.extend_from_slice(b"\n\n");
        new.extend_from_slice(
            line("01/Jan/2027:00:02:01", &format!("/{}", "f".repeat(1 << 20))).as_bytes(),
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
        assert_eq!((reading.lines, reading.entries, reading.bad), (8, 6, 2));
        assert_eq!(reading.backwards, 1);
        let bad = &reading.bad_examples;
        assert_eq!((bad[0].line, bad[1].line), (2, 2));
        assert!(
            bad[0]
                .describe()
                .contains("access.log.1:2: it does not have the format's shape: ��"),
            "{}",
            bad[0].describe()
        );
        assert!(bad[1].text.ends_with('…') && bad[1].text.len() < 200);
        std::fs::remove_dir_all(&d).unwrap();
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
