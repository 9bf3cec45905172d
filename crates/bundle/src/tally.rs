//! What the recorder keeps per label and interval: two HdrHistograms
//! (response time and service time, µs) and counters. Tallies add exactly.

use crate::sample::{ErrorKind, Sample};
use crate::server_timing::TimingSums;
use hdrhistogram::Histogram;
use headroom_analysis::apdex::{ApdexCounts, ApdexThresholds};
use headroom_analysis::latency::{new_growing_histogram, record};
use std::time::Duration;

/// Distinct error statuses (400 and above) counted exactly per tally.
pub const ERROR_STATUSES: usize = 8;

/// A request that started this much later than scheduled counts as late.
pub const LATE_START: Duration = Duration::from_millis(10);

/// Counters of one label over one interval (or more, once added).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub count: u64,
    pub errors: u64,
    pub errors_by_kind: [u64; ErrorKind::COUNT],
    /// Responses by status class: index 1..=5 for 1xx..5xx, 0 for none/other.
    pub status_classes: [u64; 6],
    /// Responses with a status of 400 or more, by exact status: the first
    /// [`ERROR_STATUSES`] distinct ones (status 0 marks a free slot).
    pub error_statuses: [(u16, u64); ERROR_STATUSES],
    /// Responses of 400 or more whose status found no free slot.
    pub error_statuses_other: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub apdex: ApdexCounts,
    /// New connections opened, and the time spent opening them.
    pub connects: u64,
    pub connect_micros: u64,
    /// TLS handshakes made (part of the connects), those that resumed a
    /// session, and the time they took.
    pub tls_handshakes: u64,
    pub tls_resumed: u64,
    pub tls_micros: u64,
    /// Sum of time-to-first-byte over samples that received a byte.
    pub ttfb_micros: u64,
    pub ttfb_count: u64,
    /// Requests that started more than [`LATE_START`] after their schedule.
    pub late_starts: u64,
    pub max_schedule_lag_micros: u64,
    /// Requests sent again on a new connection after a kept-alive one
    /// failed before answering.
    pub resent: u64,
    /// Think time the users spent after these requests, before their next
    /// (Little's law's Z, as it was, not as the scenario planned it).
    pub think_micros: u64,
    /// The first reason given for each error kind, where one was.
    pub error_details: [Option<&'static str>; ErrorKind::COUNT],
    /// The responses' Server-Timing metrics, summed per name.
    pub server_timing: TimingSums,
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.count += other.count;
        self.errors += other.errors;
        for (a, b) in self.errors_by_kind.iter_mut().zip(other.errors_by_kind) {
            *a += b;
        }
        for (a, b) in self.status_classes.iter_mut().zip(other.status_classes) {
            *a += b;
        }
        for &(status, n) in other.error_statuses.iter().filter(|s| s.0 != 0) {
            self.count_error_status(status, n);
        }
        self.error_statuses_other += other.error_statuses_other;
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
        self.apdex.add(&other.apdex);
        self.connects += other.connects;
        self.connect_micros += other.connect_micros;
        self.tls_handshakes += other.tls_handshakes;
        self.tls_resumed += other.tls_resumed;
        self.tls_micros += other.tls_micros;
        self.ttfb_micros += other.ttfb_micros;
        self.ttfb_count += other.ttfb_count;
        self.late_starts += other.late_starts;
        self.max_schedule_lag_micros = self
            .max_schedule_lag_micros
            .max(other.max_schedule_lag_micros);
        self.resent += other.resent;
        self.think_micros += other.think_micros;
        for (a, b) in self.error_details.iter_mut().zip(other.error_details) {
            *a = a.or(b);
        }
        self.server_timing.add(&other.server_timing);
    }

    /// Counts `n` responses of `status` (400 or more).
    #[inline]
    pub fn count_error_status(&mut self, status: u16, n: u64) {
        for slot in &mut self.error_statuses {
            if slot.0 == status || slot.0 == 0 {
                *slot = (status, slot.1 + n);
                return;
            }
        }
        self.error_statuses_other += n;
    }

    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors_by_kind[kind as usize]
    }
}

/// Histograms and counters of one label.
#[derive(Debug, Clone)]
pub struct Tally {
    pub response: Histogram<u64>,
    pub service: Histogram<u64>,
    pub counts: Counts,
}

/// An empty tally: its histograms hold the range recorded so far (16 KB
/// each until a value passes 2 ms), not the whole hour (188 KB each).
impl Default for Tally {
    fn default() -> Self {
        Tally {
            response: new_growing_histogram(),
            service: new_growing_histogram(),
            counts: Counts::default(),
        }
    }
}

/// Each label's tally over a run, made when the label's first sample is
/// added: a run of 10,000 labels (a mix of 10,000 journeys) of which a few
/// are used holds a few tallies, not 10,000. A label without one reads as
/// an empty tally.
#[derive(Debug, Clone, Default)]
pub struct LabelTallies {
    tallies: Vec<Option<Tally>>,
    empty: Tally,
}

impl LabelTallies {
    /// `labels` labels, none with a tally yet.
    pub fn new(labels: usize) -> LabelTallies {
        LabelTallies {
            tallies: (0..labels).map(|_| None).collect(),
            empty: Tally::default(),
        }
    }

    /// Adds `tally` to label `label`'s (a label past the last is ignored).
    pub fn add(&mut self, label: usize, tally: &Tally) {
        if let Some(slot) = self.tallies.get_mut(label) {
            slot.get_or_insert_with(Tally::default).add(tally);
        }
    }

    /// Label `label`'s tally (empty when it has none).
    pub fn get(&self, label: usize) -> &Tally {
        self.tallies
            .get(label)
            .and_then(Option::as_ref)
            .unwrap_or(&self.empty)
    }

    /// Each label's tally, in label order.
    pub fn iter(&self) -> impl Iterator<Item = &Tally> {
        self.tallies
            .iter()
            .map(|t| t.as_ref().unwrap_or(&self.empty))
    }

    /// Tallies made so far (labels that had a sample).
    pub fn made(&self) -> usize {
        self.tallies.iter().filter(|t| t.is_some()).count()
    }
}

impl Tally {
    #[inline]
    pub fn record(&mut self, sample: &Sample, apdex: &ApdexThresholds) {
        let response_time = sample.response_time();
        record(&mut self.response, response_time);
        record(&mut self.service, sample.service_time());
        let c = &mut self.counts;
        c.count += 1;
        if let Some(kind) = sample.error {
            c.errors += 1;
            c.errors_by_kind[kind as usize] += 1;
            if sample.detail.is_some() && c.error_details[kind as usize].is_none() {
                c.error_details[kind as usize] = sample.detail;
            }
        }
        c.resent += u64::from(sample.resent);
        let class = (sample.status / 100) as usize;
        c.status_classes[if (1..=5).contains(&class) { class } else { 0 }] += 1;
        if (400..1000).contains(&sample.status) {
            c.count_error_status(sample.status, 1);
        }
        c.bytes_received += sample.bytes_received;
        c.bytes_sent += sample.bytes_sent;
        c.apdex.add_zone(apdex.zone(response_time, sample.failed()));
        if !sample.connect.is_zero() {
            c.connects += 1;
            c.connect_micros += sample.connect.as_micros() as u64;
        }
        if let Some(tls) = sample.tls {
            c.tls_handshakes += 1;
            c.tls_resumed += u64::from(tls.resumed);
            c.tls_micros += tls.time.as_micros() as u64;
        }
        if let Some(ttfb) = sample.time_to_first_byte() {
            c.ttfb_micros += ttfb.as_micros() as u64;
            c.ttfb_count += 1;
        }
        let lag = sample.schedule_lag();
        if lag > LATE_START {
            c.late_starts += 1;
        }
        c.max_schedule_lag_micros = c.max_schedule_lag_micros.max(lag.as_micros() as u64);
        c.server_timing.record(&sample.server_timing);
    }

    pub fn add(&mut self, other: &Tally) {
        // The histograms have the same buckets and grow to take the other's
        // values, so adding cannot fail.
        let _ = self.response.add(&other.response);
        let _ = self.service.add(&other.service);
        self.counts.add(&other.counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sample(ms: u64, error: Option<ErrorKind>, status: u16) -> Sample {
        let start = Instant::now();
        Sample {
            label: 0,
            vu: 1,
            intended_start: start,
            actual_start: start,
            connect: Duration::ZERO,
            tls: None,
            first_byte: Some(start + Duration::from_millis(ms / 2)),
            end: start + Duration::from_millis(ms),
            status,
            bytes_received: 100,
            bytes_sent: 50,
            error,
            failed_check: None,
            detail: None,
            resent: false,
            server_timing: Default::default(),
        }
    }

    #[test]
    fn counts_by_hand() {
        let apdex = ApdexThresholds::default();
        let mut t = Tally::default();
        t.record(&sample(100, None, 200), &apdex);
        t.record(&sample(1000, None, 200), &apdex);
        t.record(&sample(2000, None, 200), &apdex);
        t.record(&sample(10, Some(ErrorKind::Http5xx), 503), &apdex);
        let c = t.counts;
        assert_eq!(
            (c.count, c.errors, c.errors_of(ErrorKind::Http5xx)),
            (4, 1, 1)
        );
        assert_eq!(c.status_classes, [0, 0, 3, 0, 0, 1]);
        assert_eq!(
            c.apdex,
            ApdexCounts {
                satisfied: 1,
                tolerating: 1,
                frustrated: 2
            }
        );
        assert_eq!((c.bytes_received, c.bytes_sent), (400, 200));
        let mut sum = Tally::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!(sum.counts.count, 8);
        assert_eq!(sum.response.len(), 8);
    }

    /// 10,000 labels cost no tally until one has a sample (each cost two
    /// histograms of 188 KB: 3.8 GB for a mix of 10,000 journeys).
    #[test]
    fn label_tallies_are_made_by_their_first_sample() {
        let apdex = ApdexThresholds::default();
        let mut labels = LabelTallies::new(10_000);
        assert_eq!(labels.made(), 0);
        assert_eq!(labels.iter().count(), 10_000);
        let mut t = Tally::default();
        t.record(&sample(40, None, 200), &apdex);
        labels.add(7, &t);
        labels.add(7, &t);
        labels.add(10_000, &t);
        assert_eq!(labels.made(), 1);
        assert_eq!(labels.get(7).counts.count, 2);
        assert_eq!(labels.get(8).counts.count, 0);
        assert_eq!(labels.iter().map(|t| t.counts.count).sum::<u64>(), 2);
        // An empty tally holds the 2 ms its histograms start with.
        assert_eq!(Tally::default().response.distinct_values(), 2048);
    }

    #[test]
    fn error_statuses_are_exact_for_the_first_eight_and_add_up() {
        let mut a = Counts::default();
        for status in [404, 404, 500, 503] {
            a.count_error_status(status, 1);
        }
        let mut b = Counts::default();
        for status in 400..410 {
            b.count_error_status(status, 1);
        }
        assert_eq!((b.error_statuses[7], b.error_statuses_other), ((407, 1), 2));
        a.add(&b);
        assert_eq!(a.error_statuses[0], (404, 3));
        assert_eq!(a.error_statuses[1], (500, 1));
        let total: u64 = a.error_statuses.iter().map(|s| s.1).sum::<u64>() + a.error_statuses_other;
        assert_eq!(total, 14);
    }
}
