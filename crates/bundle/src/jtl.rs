//! Raw samples in JMeter's CSV results format (JTL), default columns and
//! units (epoch ms timestamps, durations in ms), so JMeter's dashboard and
//! every JTL tool read them.

use crate::sample::Sample;
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub const HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// Quotes a CSV field when it holds a comma, a quote, CR or LF (quotes doubled).
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Everything a JTL line needs besides the sample, prepared once per run.
pub struct JtlContext {
    /// Per label: the label and its URL, already CSV-quoted.
    pub labels: Vec<(String, String)>,
    /// Scenario check names, CSV-quoted: the failure message of a failed check.
    pub checks: Vec<String>,
    pub run_start: Instant,
    pub run_start_epoch_ms: u64,
    pub active_vus: Arc<AtomicU32>,
}

impl JtlContext {
    pub fn new(
        labels: &[(String, String)],
        checks: &[String],
        run_start: Instant,
        wall_start: SystemTime,
        active_vus: Arc<AtomicU32>,
    ) -> JtlContext {
        JtlContext {
            labels: labels
                .iter()
                .map(|(l, u)| (csv_field(l), csv_field(u)))
                .collect(),
            checks: checks.iter().map(|c| csv_field(c)).collect(),
            run_start,
            run_start_epoch_ms: wall_start
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64,
            active_vus,
        }
    }

    /// Appends one line; formatting numbers into a reused buffer allocates nothing.
    pub fn write_line(&self, out: &mut Vec<u8>, sample: &Sample) {
        // To the nearest millisecond, as JMeter's own clock reads on average.
        let ms = |d: std::time::Duration| ((d.as_micros() + 500) / 1000) as u64;
        let timestamp = self.run_start_epoch_ms
            + ms(sample
                .intended_start
                .saturating_duration_since(self.run_start));
        let (label, url) = &self.labels[sample.label as usize];
        let active = self.active_vus.load(Ordering::Relaxed);
        let check_name = sample
            .failed_check
            .and_then(|c| self.checks.get(c as usize))
            .map(String::as_str);
        let (message, failure) = match sample.error {
            Some(_) if check_name.is_some() => {
                (reason_phrase(sample.status), check_name.unwrap_or_default())
            }
            Some(kind) if sample.status != 0 => (
                reason_phrase(sample.status),
                sample.detail.unwrap_or(kind.describe()),
            ),
            Some(kind) => (kind.describe(), sample.detail.unwrap_or(kind.describe())),
            None => (reason_phrase(sample.status), ""),
        };
        let code: &dyn std::fmt::Display = if sample.status == 0 {
            &""
        } else {
            &sample.status
        };
        let _ = writeln!(
            out,
            "{timestamp},{},{label},{code},{message},headroom 1-{},text,{},{failure},{},{},{active},{active},{url},{},0,{}",
            ms(sample.response_time()),
            sample.vu,
            !sample.failed(),
            sample.bytes_received,
            sample.bytes_sent,
            sample.time_to_first_byte().map(ms).unwrap_or(0),
            ms(sample.connect),
        );
    }
}

/// Standard reason phrases (no commas, so no quoting needed).
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::ErrorKind;
    use std::time::Duration;

    #[test]
    fn line_has_jmeter_columns_and_units() {
        let start = Instant::now();
        let ctx = JtlContext::new(
            &[("a,b".into(), "http://x/?q=\"1\"".into())],
            &[],
            start,
            UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            Arc::new(AtomicU32::new(3)),
        );
        let sample = Sample {
            label: 0,
            vu: 2,
            intended_start: start + Duration::from_millis(1500),
            actual_start: start + Duration::from_millis(1500),
            connect: Duration::from_micros(2500),
            tls: None,
            first_byte: Some(start + Duration::from_millis(1510)),
            end: start + Duration::from_millis(1620),
            status: 503,
            bytes_received: 900,
            bytes_sent: 80,
            error: Some(ErrorKind::Http5xx),
            failed_check: None,
            detail: None,
            resent: false,
            server_timing: Default::default(),
        };
        let mut out = Vec::new();
        ctx.write_line(&mut out, &sample);
        let line = String::from_utf8(out).unwrap();
        // Durations round to the nearest millisecond: the 2.5 ms connect is 3.
        assert_eq!(
            line,
            "1700000001500,120,\"a,b\",503,Service Unavailable,headroom 1-2,text,false,HTTP 5xx,900,80,3,3,\"http://x/?q=\"\"1\"\"\",10,0,3\n"
        );
        assert_eq!(
            HEADER.split(',').count(),
            line.trim_end().split(',').count() - 1,
            "one quoted comma in the label"
        );
    }
}
