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
/// histograms; `None` when the file is missing.
pub fn read_latency(dir: &Path) -> Result<Option<Histogram<u64>>, BundleError> {
    let path = dir.join(LATENCY);
    let mut total = headroom_analysis::new_histogram();
    let mut added = Ok(());
    let found = visit_hlog(dir, false, |tag, _, histogram| {
        if tag.is_none() && added.is_ok() {
            added = total
                .add(histogram)
                .map_err(|e| invalid(&path, format!("a histogram does not add up: {e:?}")));
        }
    })?;
    added?;
    Ok(found.then_some(total))
}

/// Calls `visit` with each interval histogram of latency.hlog: its tag, its
/// start in seconds from the run's start, the histogram. False when the
/// file is missing. Damage is an error naming its line, or, with
/// `up_to_damage` (a run that died while writing), the end of what is read.
pub fn visit_hlog(
    dir: &Path,
    up_to_damage: bool,
    mut visit: impl FnMut(Option<&str>, f64, &Histogram<u64>),
) -> Result<bool, BundleError> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let path = dir.join(LATENCY);
    if !path.exists() {
        return Ok(false);
    }
    let text = fs::read(&path).map_err(read_error(&path))?;
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(&text) {
        let decoded = match entry {
            Ok(LogEntry::Interval(interval)) => base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .map_err(|_| "a histogram is not base64: the file is damaged".to_string())
                .and_then(|bytes| {
                    deserializer
                        .deserialize::<u64, _>(&mut &bytes[..])
                        .map_err(|_| {
                            "a histogram does not decode (damaged compressed data): the file is damaged"
                                .to_string()
                        })
                })
                .map(|h| (interval, h)),
            Ok(_) => continue,
            Err(hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                offset,
            }) => {
                let line = text[..offset.min(text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
                    + 1;
                Err(format!("line {line} is not an HdrHistogram interval log line: the file is damaged or was not written by headroom"))
            }
        };
        match decoded {
            Ok((interval, histogram)) => visit(
                interval.tag().map(|t| t.as_str()),
                interval.start_timestamp().as_secs_f64(),
                &histogram,
            ),
            Err(_) if up_to_damage => break,
            Err(reason) => return Err(invalid(&path, reason)),
        }
    }
    Ok(true)
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
}
