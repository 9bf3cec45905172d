//! How far another clock is from ours: an agent's (its `now_ms`), or a
//! target's (its Date header). One rule for both: a remote time read
//! during an exchange is taken at the exchange's midpoint, and of several
//! exchanges the shortest is the least uncertain. The monitor aligns an
//! agent's samples with it; a shard records it before a planned start.

use headroom_bundle::manifest::ClockRecord;
use headroom_http::conn::Connector;
use headroom_http::target::Target;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Exchanges with an agent; the shortest is kept.
pub const AGENT_TRIES: usize = 5;
/// The Date header is watched this long for its second to change.
const DATE_WATCH: Duration = Duration::from_millis(1200);

/// A remote clock read once, with our clock (epoch ms) around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Ours when the exchange began.
    pub sent_ms: f64,
    /// The remote clock during the exchange.
    pub remote_ms: f64,
    /// Ours when the answer came.
    pub received_ms: f64,
}

impl Reading {
    /// Remote clock minus ours, taking the remote time at the midpoint.
    pub fn offset_ms(&self) -> f64 {
        self.remote_ms - (self.sent_ms + self.received_ms) / 2.0
    }

    pub fn round_trip_ms(&self) -> f64 {
        self.received_ms - self.sent_ms
    }

    /// The reading as the manifest records it: to 0.1 ms, uncertain by half
    /// the round trip plus half the remote clock's resolution.
    pub fn record(&self, reference: String, resolution_ms: f64) -> ClockRecord {
        let tenth = |v: f64| (v * 10.0).round() / 10.0;
        ClockRecord {
            reference,
            offset_ms: tenth(self.offset_ms()),
            uncertainty_ms: tenth(self.round_trip_ms() / 2.0 + resolution_ms / 2.0),
        }
    }
}

/// The reading with the shortest round trip.
pub fn best(readings: impl IntoIterator<Item = Reading>) -> Option<Reading> {
    readings.into_iter().reduce(|a, b| {
        if b.round_trip_ms() < a.round_trip_ms() {
            b
        } else {
            a
        }
    })
}

/// Our clock, epoch milliseconds.
pub fn now_ms() -> f64 {
    epoch_ms(SystemTime::now())
}

fn epoch_ms(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

/// An agent's clock: the shortest of [`AGENT_TRIES`] exchanges; or why the
/// agent gave none.
pub fn agent_reading(authority: &str, token: Option<&str>) -> Result<Reading, String> {
    let mut readings = Vec::with_capacity(AGENT_TRIES);
    for _ in 0..AGENT_TRIES {
        let sent_ms = now_ms();
        let reply = crate::agent_samples::read_samples(
            authority,
            &format!("/samples?since={}", u64::MAX),
            token,
        )?;
        readings.push(Reading {
            sent_ms,
            remote_ms: reply.now_ms as f64,
            received_ms: now_ms(),
        });
    }
    best(readings).ok_or_else(|| "no exchange".into())
}

/// The agent's clock as a shard records it (`None` when it gave none).
pub async fn agent_record(authority: &str, token: Option<&str>) -> Option<ClockRecord> {
    let authority = authority.to_string();
    let token = token.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        let reading = agent_reading(&authority, token.as_deref()).ok()?;
        // The agent's clock counts whole milliseconds.
        Some(reading.record(format!("agent {authority}"), 1.0))
    })
    .await
    .ok()
    .flatten()
}

/// The target's clock from its Date header, whose second is watched until
/// it changes: the change happened between the two requests around it.
pub async fn date_record(connector: Arc<Connector>, url: &str) -> Option<ClockRecord> {
    let target = Target::parse(url).ok()?;
    let request = format!(
        "HEAD {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: headroom/{}\r\n\r\n",
        target.path_and_query,
        target.authority(),
        env!("CARGO_PKG_VERSION")
    );
    let mut client = headroom_http::client::HttpClient::new(connector, Duration::from_secs(2));
    let mut head = Vec::new();
    let mut previous: Option<(f64, u64)> = None;
    let watch_until = Instant::now() + DATE_WATCH;
    while Instant::now() < watch_until {
        head.clear();
        let sent = now_ms();
        let exchange = client
            .send(
                headroom_http::client::Outgoing {
                    bytes: request.as_bytes(),
                    is_head: true,
                    keep_alive: true,
                },
                Instant::now(),
                &mut |_, _| {},
                Some(&mut head),
            )
            .await;
        let received = now_ms();
        if exchange.error.is_some() {
            return None;
        }
        let date = date_header(&head)?;
        if let Some((before, second)) = previous {
            if date > second {
                let reading = Reading {
                    sent_ms: before,
                    remote_ms: date as f64 * 1000.0,
                    received_ms: received,
                };
                // The bracketing exchanges already hold the second's change.
                return Some(reading.record(format!("Date header of {url}"), 0.0));
            }
        }
        previous = Some((sent, date));
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    None
}

/// The Date header's time, epoch seconds ("Sun, 06 Nov 1994 08:49:37 GMT").
fn date_header(head: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(head).ok()?;
    let value = text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("date")
            .then(|| value.trim())
    })?;
    http_date(value)
}

fn http_date(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = headroom_units::civil::month_number(month.as_bytes())?;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    u64::try_from(headroom_units::civil::utc_seconds(
        year,
        month,
        day,
        (h, m, s),
    ))
    .ok()
}

#[cfg(test)]
mod tests;
