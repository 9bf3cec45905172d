//! The HdrHistogram interval log (`latency.hlog`), written line by line in
//! the standard text format (V2 compressed histograms, base64), readable by
//! HistogramLogProcessor and every HdrHistogram library. Values are µs.

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A label as the log tags it: the format allows no separator or
/// whitespace in a tag, so those become `_`.
pub fn tag_of(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c == ',' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

pub struct HlogWriter<W: Write> {
    out: W,
    serializer: V2DeflateSerializer,
    buffer: Vec<u8>,
}

impl<W: Write> HlogWriter<W> {
    /// Writes the log's header; interval timestamps are relative to `start`.
    pub fn new(mut out: W, start: SystemTime) -> io::Result<HlogWriter<W>> {
        let epoch = start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        writeln!(out, "#[Histogram log format version 1.3]")?;
        writeln!(
            out,
            "#[Written by headroom {}; values in microseconds]",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(
            out,
            "#[StartTime: {epoch:.3} (seconds since epoch), {}]",
            humantime::format_rfc3339_millis(start)
        )?;
        writeln!(out, "#[BaseTime: {epoch:.3} (seconds since epoch)]")?;
        writeln!(out, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"")?;
        Ok(HlogWriter {
            out,
            serializer: V2DeflateSerializer::new(),
            buffer: Vec::new(),
        })
    }

    /// Appends one interval histogram; `tag` is the label (None for the total).
    pub fn write(
        &mut self,
        histogram: &Histogram<u64>,
        offset: Duration,
        length: Duration,
        tag: Option<&str>,
    ) -> io::Result<()> {
        self.buffer.clear();
        self.serializer
            .serialize(histogram, &mut self.buffer)
            .map_err(|e| io::Error::other(format!("histogram serialisation failed: {e:?}")))?;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&self.buffer);
        if let Some(tag) = tag {
            write!(self.out, "Tag={},", tag_of(tag))?;
        }
        // Interval_Max is informative, in milliseconds (max value divisor 1000).
        writeln!(
            self.out,
            "{:.3},{:.3},{:.3},{encoded}",
            offset.as_secs_f64(),
            length.as_secs_f64(),
            histogram.max() as f64 / 1000.0
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn standard_parser_reads_it_back() {
        let mut h = headroom_analysis::new_histogram();
        for v in [100u64, 200, 300, 2_000_000] {
            h.record(v).unwrap();
        }
        let mut out = Vec::new();
        let mut w =
            HlogWriter::new(&mut out, UNIX_EPOCH + Duration::from_secs(1_700_000_000)).unwrap();
        w.write(&h, Duration::ZERO, Duration::from_secs(1), None)
            .unwrap();
        w.write(
            &h,
            Duration::from_secs(1),
            Duration::from_secs(1),
            Some("login page"),
        )
        .unwrap();
        drop(w);
        let text = out;
        let mut intervals = 0;
        for entry in IntervalLogIterator::new(&text) {
            if let LogEntry::Interval(i) = entry.unwrap() {
                intervals += 1;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .unwrap();
                let back: Histogram<u64> =
                    Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                assert_eq!(back.len(), 4);
                assert_eq!(back.max(), h.max());
                if intervals == 2 {
                    assert_eq!(
                        i.tag().map(|t| t.as_str().to_string()),
                        Some("login_page".into())
                    );
                    assert_eq!(i.start_timestamp(), Duration::from_secs(1));
                }
            }
        }
        assert_eq!(intervals, 2);
    }
}
