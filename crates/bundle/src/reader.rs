//! Reading bundle files back: the CSV helpers every reader shares (a cut
//! last line is tolerated, other damage names its line) and latency.hlog.
//! Every error names the file and says what is wrong with it.

use crate::{invalid, read_error, BundleError, LATENCY};
use hdrhistogram::Histogram;
use std::fs;
use std::path::Path;

/// A CSV file of the bundle and its header row.
pub(crate) fn open_csv(
    path: &Path,
) -> Result<(csv::Reader<fs::File>, csv::StringRecord), BundleError> {
    let file = fs::File::open(path).map_err(read_error(path))?;
    let mut reader = csv::Reader::from_reader(file);
    let headers = reader
        .headers()
        .map_err(|e| invalid(path, e.to_string()))?
        .clone();
    Ok((reader, headers))
}

/// The records of a bundle's CSV file with their line numbers. A last
/// line cut short (a run that died while writing it) is left out; damage
/// anywhere else is an error that names its line.
pub(crate) fn whole_records(
    path: &Path,
    reader: &mut csv::Reader<fs::File>,
) -> Result<Vec<(u64, csv::StringRecord)>, BundleError> {
    let mut out = Vec::new();
    let mut records = reader.records();
    let mut line = 1;
    while let Some(record) = records.next() {
        line += 1;
        match record {
            Ok(record) => out.push((line, record)),
            Err(_) if records.next().is_none() => break,
            Err(e) => return Err(invalid(path, format!("line {line}: {e}"))),
        }
    }
    Ok(out)
}

pub(crate) fn columns(
    path: &Path,
    headers: &csv::StringRecord,
    names: &[&str],
) -> Result<Vec<usize>, BundleError> {
    names
        .iter()
        .map(|name| {
            headers
                .iter()
                .position(|h| h == *name)
                .ok_or_else(|| invalid(path, format!("no column '{name}'")))
        })
        .collect()
}

pub(crate) fn number<T: std::str::FromStr>(
    path: &Path,
    line: u64,
    column: &str,
    text: &str,
) -> Result<T, BundleError> {
    text.parse().map_err(|_| {
        invalid(
            path,
            format!("line {line}: '{text}' in column {column} is not a number"),
        )
    })
}

/// A finite decimal number of a bundle's CSV file: `inf` and `NaN` are
/// refused as damage (no figure headroom writes is infinite).
pub(crate) fn finite(path: &Path, line: u64, column: &str, text: &str) -> Result<f64, BundleError> {
    let value: f64 = number(path, line, column, text)?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(invalid(
            path,
            format!("line {line}: '{text}' in column {column} is not a finite number"),
        ))
    }
}

/// The whole run's response times (µs): the sum of latency.hlog's untagged
/// histograms; `None` when the file is missing. A last line cut short is
/// left out ([`latency_warning`] says so).
pub fn read_latency(dir: &Path) -> Result<Option<Histogram<u64>>, BundleError> {
    let path = dir.join(LATENCY);
    let mut total = headroom_analysis::new_histogram();
    let mut added = Ok(());
    let read = visit_hlog(dir, false, |tag, _, histogram| {
        if tag.is_none() && added.is_ok() {
            added = total
                .add(histogram)
                .map_err(|e| invalid(&path, format!("a histogram does not add up: {e:?}")));
        }
    })?;
    added?;
    Ok(read.found.then_some(total))
}

/// What to tell the user about a bundle's latency.hlog once read: that
/// its last line was cut short, and what was used instead. `None` when
/// the file is whole, missing, or damaged (its reader says how).
pub fn latency_warning(dir: &Path) -> Option<String> {
    visit_hlog(dir, false, |_, _, _| {})
        .ok()
        .and_then(|read| read.torn_warning())
}

/// What reading latency.hlog found.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HlogRead {
    /// False when the file is missing.
    pub found: bool,
    /// Interval lines used (every tag).
    pub intervals: u64,
    /// The start of the latest interval used, in seconds from the run's start.
    pub last_second: f64,
    /// The last line was cut short (no end of line, and not a whole
    /// interval): a run stopped while writing it. It was left out.
    pub torn: bool,
}

impl HlogRead {
    /// "latency.hlog: the last line is incomplete (a run stopped while
    /// writing): used 12 intervals up to second 5", when it was.
    pub fn torn_warning(&self) -> Option<String> {
        self.torn.then(|| {
            format!(
                "{LATENCY}: the last line is incomplete (a run stopped while writing): used {} \
                 interval(s){}",
                self.intervals,
                if self.intervals == 0 {
                    String::new()
                } else {
                    format!(" up to second {:.0}", self.last_second)
                }
            )
        })
    }
}

/// Calls `visit` with each interval histogram of latency.hlog: its tag, its
/// start in seconds from the run's start, the histogram. A last line cut
/// short (no end of line: a run stopped while writing it) is left out and
/// said in the answer. Other damage is an error naming its line, or, with
/// `up_to_damage` (a run that died while writing), the end of what is read.
pub fn visit_hlog(
    dir: &Path,
    up_to_damage: bool,
    mut visit: impl FnMut(Option<&str>, f64, &Histogram<u64>),
) -> Result<HlogRead, BundleError> {
    let path = dir.join(LATENCY);
    if !path.exists() {
        return Ok(HlogRead::default());
    }
    let text = fs::read(&path).map_err(read_error(&path))?;
    // Every line the writer finished ends with '\n'; what follows the last
    // one is a line cut short, or a whole one that lost only its '\n'.
    let whole = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut read = HlogRead {
        found: true,
        ..HlogRead::default()
    };
    let mut counted = |tag: Option<&str>, start_s: f64, histogram: &Histogram<u64>| {
        read.intervals += 1;
        read.last_second = read.last_second.max(start_s);
        visit(tag, start_s, histogram)
    };
    match visit_lines(&text[..whole], &mut counted) {
        Ok(()) => {}
        Err(_) if up_to_damage => return Ok(read),
        Err(reason) => return Err(invalid(&path, reason)),
    }
    if whole < text.len() {
        let mut last = text[whole..].to_vec();
        last.push(b'\n');
        // The last line alone: it must be one whole interval, or it is torn.
        let mut one = None;
        let whole_line = visit_lines(&last, &mut |tag, start_s, histogram| {
            one = Some((tag.map(str::to_string), start_s, histogram.clone()));
        });
        match (whole_line, one) {
            (Ok(()), Some((tag, start_s, histogram))) => {
                counted(tag.as_deref(), start_s, &histogram)
            }
            (Ok(()), None) => {}
            (Err(_), _) => read.torn = true,
        }
    }
    Ok(read)
}

/// What is called with each interval: its tag, start (s) and histogram.
type Visitor<'a> = dyn FnMut(Option<&str>, f64, &Histogram<u64>) + 'a;

/// The interval lines of `text` (whole lines), each decoded and visited;
/// the first damaged line is an error naming it.
fn visit_lines(text: &[u8], visit: &mut Visitor<'_>) -> Result<(), String> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{
        IntervalLogIterator, LogEntry, LogIteratorError,
    };
    use hdrhistogram::serialization::Deserializer;
    // The line holding byte `offset` of `text`.
    let line_at = |offset: usize| {
        text[..offset.min(text.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    };
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(text) {
        match entry {
            Ok(LogEntry::Interval(interval)) => {
                let encoded = interval.encoded_histogram();
                // The encoded histogram is a slice of `text`: where it
                // starts says which line it is on.
                let line = line_at(encoded.as_ptr() as usize - text.as_ptr() as usize);
                let histogram = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|_| format!("line {line}: a histogram is not base64: the file is damaged"))
                    .and_then(|bytes| {
                        deserializer.deserialize::<u64, _>(&mut &bytes[..]).map_err(|_| {
                            format!(
                                "line {line}: a histogram does not decode (damaged compressed data): \
                                 the file is damaged"
                            )
                        })
                    })?;
                visit(
                    interval.tag().map(|t| t.as_str()),
                    interval.start_timestamp().as_secs_f64(),
                    &histogram,
                );
            }
            Ok(_) => {}
            Err(LogIteratorError::ParseError { offset }) => {
                return Err(format!(
                    "line {} is not an HdrHistogram interval log line: the file is damaged or was \
                     not written by headroom",
                    line_at(offset)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals::read_intervals;
    use crate::manifest::manifest_value;
    use crate::resources::read_resources;
    use crate::{INTERVALS, MANIFEST};

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("headroom-reader-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_intervals_and_names_bad_values() {
        let d = dir("intervals");
        fs::write(
            d.join(INTERVALS),
            "second,start_epoch_ms,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,apdex_satisfied,apdex_tolerating,apdex_frustrated,active_vus\n\
             0,1,1.000,TOTAL,10,1,5.5,5,9,9.5,9.9,8,1,1,4\n",
        )
        .unwrap();
        let rows = read_intervals(&d).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].count, rows[0].errors, rows[0].p90_ms),
            (10, 1, 9.0)
        );
        fs::write(
            d.join(INTERVALS),
            "second,interval_s,label,count,errors,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,apdex_satisfied,apdex_tolerating,apdex_frustrated,active_vus\n\
             0,1.0,TOTAL,ten,1,5.5,5,9,9.5,9.9,8,1,1,4\n",
        )
        .unwrap();
        let err = read_intervals(&d).unwrap_err().to_string();
        assert!(err.contains("line 2: 'ten' in column count"), "{err}");
        fs::write(d.join(INTERVALS), "second,label\n0,TOTAL\n").unwrap();
        assert!(read_intervals(&d)
            .unwrap_err()
            .to_string()
            .contains("no column 'interval_s'"));
        assert_eq!(read_resources(&d).unwrap(), None);
    }

    /// A row written now carries the second's arrivals; a bundle written
    /// before arrivals were recorded still reads, with none recorded.
    #[test]
    fn arrivals_are_read_when_recorded_and_absent_in_old_bundles() {
        let d = dir("arrivals");
        let mut text = crate::intervals::header() + "\n";
        let generator = crate::intervals::Generator {
            active_vus: 30,
            arrivals: 7,
            busy: 0.1,
            wait: 0.0,
            loop_lag: std::time::Duration::ZERO,
        };
        crate::intervals::write_row(
            &mut text,
            2,
            1,
            std::time::Duration::from_secs(1),
            crate::TOTAL_LABEL,
            &crate::tally::Tally::default(),
            &generator,
        );
        fs::write(d.join(INTERVALS), &text).unwrap();
        let rows = read_intervals(&d).unwrap();
        assert_eq!((rows[0].second, rows[0].arrivals), (2, Some(7)));
        // The old header: no arrivals column.
        let old = text.replace(",arrivals\n", "\n").replace(",7\n", "\n");
        fs::write(d.join(INTERVALS), old).unwrap();
        let rows = read_intervals(&d).unwrap();
        assert_eq!((rows[0].active_vus, rows[0].arrivals), (30, None));
    }

    #[test]
    fn manifests_of_other_schemas_or_truncated_are_refused() {
        let d = dir("manifest");
        fs::write(d.join(MANIFEST), "{\"schema_version\": 2}").unwrap();
        let err = manifest_value(&d).unwrap_err().to_string();
        assert!(
            err.contains("schema version 2; this headroom reads version 1"),
            "{err}"
        );
        fs::write(d.join(MANIFEST), "{\"schema_version\": 1, \"sta").unwrap();
        assert!(manifest_value(&d)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let missing = manifest_value(&d.join("nope")).unwrap_err().to_string();
        assert!(missing.contains("no such bundle directory"), "{missing}");
    }

    /// latency.hlog with `seconds` intervals (untagged, then tagged "a"),
    /// 10 response times each.
    fn hlog(seconds: u64) -> Vec<u8> {
        let mut h = headroom_analysis::new_histogram();
        h.record_n(5_000, 10).unwrap();
        let mut out = Vec::new();
        let start = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        let mut w = crate::hlog::HlogWriter::new(&mut out, start).unwrap();
        for s in 0..seconds {
            let at = std::time::Duration::from_secs(s);
            let one = std::time::Duration::from_secs(1);
            w.write(&h, at, one, None).unwrap();
            w.write(&h, at, one, Some("a")).unwrap();
        }
        drop(w);
        out
    }

    #[test]
    fn a_torn_last_line_is_left_out_and_said() {
        let d = dir("torn");
        let whole = hlog(3);
        // Killed while writing the last line: 20 bytes of it are missing.
        fs::write(d.join(LATENCY), &whole[..whole.len() - 20]).unwrap();
        let total = read_latency(&d).unwrap().unwrap();
        assert_eq!(total.len(), 30);
        let read = visit_hlog(&d, false, |_, _, _| {}).unwrap();
        assert_eq!(
            (read.intervals, read.last_second, read.torn),
            (5, 2.0, true)
        );
        assert_eq!(
            latency_warning(&d).unwrap(),
            "latency.hlog: the last line is incomplete (a run stopped while writing): used 5 \
             interval(s) up to second 2"
        );
        // Cut just before its end of line, the last line is whole: used.
        fs::write(d.join(LATENCY), &whole[..whole.len() - 1]).unwrap();
        let read = visit_hlog(&d, false, |_, _, _| {}).unwrap();
        assert_eq!((read.intervals, read.torn), (6, false));
        assert_eq!(latency_warning(&d), None);
        // Cut in its first bytes ("2."): torn too.
        let last = whole[..whole.len() - 1]
            .iter()
            .rposition(|b| *b == b'\n')
            .unwrap();
        fs::write(d.join(LATENCY), &whole[..last + 3]).unwrap();
        assert!(visit_hlog(&d, false, |_, _, _| {}).unwrap().torn);
    }

    #[test]
    fn a_damaged_line_in_the_middle_is_an_error_naming_it() {
        let d = dir("middle");
        let whole = String::from_utf8(hlog(3)).unwrap();
        let mut lines: Vec<String> = whole.lines().map(String::from).collect();
        // Line 7 (the second second's untagged interval): its histogram cut.
        let cut = lines[6].len() - 20;
        lines[6].truncate(cut);
        fs::write(d.join(LATENCY), lines.join("\n") + "\n").unwrap();
        let e = read_latency(&d).unwrap_err().to_string();
        assert!(e.contains("line 7: a histogram"), "{e}");
        // A line that is not an interval at all.
        lines[6] = "1.000,garbage".into();
        fs::write(d.join(LATENCY), lines.join("\n") + "\n").unwrap();
        let e = read_latency(&d).unwrap_err().to_string();
        assert!(
            e.contains("line 7 is not an HdrHistogram interval log line"),
            "{e}"
        );
        // ... also when the file's last line is torn besides.
        let torn = lines.join("\n");
        fs::write(d.join(LATENCY), &torn[..torn.len() - 10]).unwrap();
        assert!(read_latency(&d).is_err());
    }
}
