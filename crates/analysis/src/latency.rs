//! Latency statistics read from HdrHistograms recorded in microseconds with
//! three significant digits. Histograms add exactly, so statistics of merged
//! intervals or labels are those of all their samples together.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Largest trackable value: one hour, in microseconds. Larger values are
/// clamped to it (a request queued for over an hour is reported as an hour).
pub const HISTOGRAM_MAX_MICROS: u64 = 3_600_000_000;

/// An empty histogram with headroom's standard bounds: 1 µs to 1 h, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_MICROS, 3)
        .expect("constant histogram bounds are valid")
}

/// An empty histogram with the same buckets as [`new_histogram`]'s (1 µs,
/// 3 significant digits: every figure read from it, and every sum, is the
/// same) that holds only the range recorded so far: 16 KB for values up to
/// 2 ms, 64 KB up to 65 ms, instead of 188 KB for the whole hour. It grows
/// as larger values arrive ([`record`] still clamps them to
/// [`HISTOGRAM_MAX_MICROS`]) or as a larger histogram is added to it.
pub fn new_growing_histogram() -> Histogram<u64> {
    let mut histogram =
        Histogram::new_with_bounds(1, 2, 3).expect("constant histogram bounds are valid");
    histogram.auto(true);
    histogram
}

/// Records a duration in microseconds, clamped to the histogram's range.
#[inline]
pub fn record(histogram: &mut Histogram<u64>, value: Duration) {
    let micros = (value.as_micros() as u64).clamp(1, HISTOGRAM_MAX_MICROS);
    // Cannot fail: the value is within the histogram's bounds.
    let _ = histogram.record(micros);
}

/// Summary statistics of one histogram. Durations serialise as milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub count: u64,
    pub mean: Duration,
    pub min: Duration,
    pub p50: Duration,
    pub p90: Duration,
    pub p95: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub stdev: Duration,
    /// Responses above [`PEAK_FACTOR`] times the mean: 003's "peaks"
    /// (it counted 1,155 in one dataset), each response by its histogram
    /// bucket's middle value, as the mean is.
    pub peaks: u64,
}

/// A response is a peak when it took more than this many times the mean
/// (003's definition).
pub const PEAK_FACTOR: f64 = 5.0;

impl LatencyStats {
    pub fn of(histogram: &Histogram<u64>) -> LatencyStats {
        if histogram.is_empty() {
            return LatencyStats::default();
        }
        let micros = |v: u64| Duration::from_micros(v);
        let q = |p: f64| micros(histogram.value_at_quantile(p));
        LatencyStats {
            count: histogram.len(),
            mean: Duration::from_secs_f64(histogram.mean() / 1e6),
            min: micros(histogram.min()),
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            max: micros(histogram.max()),
            stdev: Duration::from_secs_f64(histogram.stdev() / 1e6),
            peaks: Self::above(histogram, PEAK_FACTOR * histogram.mean()),
        }
    }

    /// How many recorded values lie above `threshold` (µs).
    pub fn above(histogram: &Histogram<u64>, threshold: f64) -> u64 {
        histogram
            .iter_recorded()
            .filter(|v| histogram.median_equivalent(v.value_iterated_to()) as f64 > threshold)
            .map(|v| v.count_at_value())
            .sum()
    }

    /// The value at an arbitrary quantile (0..=1), for criteria such as `p999`.
    pub fn quantile(histogram: &Histogram<u64>, quantile: f64) -> Duration {
        Duration::from_micros(histogram.value_at_quantile(quantile))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_mix_by_hand() {
        // 90 samples at 100 ms and 10 at 2 s: mean 290 ms, p50 = p90 = 100 ms, p95 = p99 = 2 s
        let mut h = new_histogram();
        for _ in 0..90 {
            record(&mut h, Duration::from_millis(100));
        }
        for _ in 0..10 {
            record(&mut h, Duration::from_secs(2));
        }
        let s = LatencyStats::of(&h);
        let close = |a: Duration, b: Duration| {
            let (a, b) = (a.as_secs_f64(), b.as_secs_f64());
            (a - b).abs() <= b * 0.001 + 1e-6
        };
        assert_eq!(s.count, 100);
        assert!(close(s.mean, Duration::from_millis(290)), "{:?}", s.mean);
        assert!(close(s.p50, Duration::from_millis(100)));
        assert!(close(s.p90, Duration::from_millis(100)));
        assert!(close(s.p95, Duration::from_secs(2)));
        assert!(close(s.p99, Duration::from_secs(2)));
        assert!(close(s.max, Duration::from_secs(2)));
        // 2 s is 6.9 × the mean of 290 ms: the 10 are peaks; 100 ms is not.
        assert_eq!(s.peaks, 10);
    }

    #[test]
    fn a_peak_is_above_five_times_the_mean() {
        // 999 at 1 ms and one at 100 ms: mean 1.099 ms; the threshold 5.5 ms.
        let mut h = new_histogram();
        for _ in 0..999 {
            record(&mut h, Duration::from_millis(1));
        }
        record(&mut h, Duration::from_millis(100));
        assert_eq!(LatencyStats::of(&h).peaks, 1);
        // 90 at 1 ms and 10 at 5 ms: each is below 5 × the mean.
        let mut h = new_histogram();
        for _ in 0..90 {
            record(&mut h, Duration::from_millis(1));
        }
        for _ in 0..10 {
            record(&mut h, Duration::from_millis(5));
        }
        // mean 1.4 ms, 5 × = 7 ms: 5 ms is no peak.
        assert_eq!(LatencyStats::of(&h).peaks, 0);
        assert_eq!(LatencyStats::above(&h, 4_000.0), 10);
        assert_eq!(LatencyStats::above(&h, 0.0), 100);
        assert_eq!(LatencyStats::of(&new_histogram()).peaks, 0);
    }

    #[test]
    fn clamps_out_of_range_values() {
        let mut h = new_histogram();
        record(&mut h, Duration::ZERO);
        record(&mut h, Duration::from_secs(10_000));
        assert_eq!(h.len(), 2);
        assert_eq!(h.min(), 1);
        assert!(h.max() >= HISTOGRAM_MAX_MICROS);
    }

    proptest! {
        #[test]
        fn merge_equals_concatenation(a in proptest::collection::vec(1u64..10_000_000, 0..200),
                                      b in proptest::collection::vec(1u64..10_000_000, 0..200)) {
            let mut ha = new_histogram();
            let mut hb = new_histogram();
            let mut hall = new_histogram();
            for v in &a { ha.record(*v).unwrap(); hall.record(*v).unwrap(); }
            for v in &b { hb.record(*v).unwrap(); hall.record(*v).unwrap(); }
            ha.add(&hb).unwrap();
            prop_assert_eq!(LatencyStats::of(&ha), LatencyStats::of(&hall));
        }

        /// A growing histogram reads the same figures as a whole-range one,
        /// recorded into or added to either, in any order.
        #[test]
        fn a_growing_histogram_reads_the_same_figures(
            a in proptest::collection::vec(1u64..HISTOGRAM_MAX_MICROS, 0..200),
            b in proptest::collection::vec(1u64..100_000, 0..200)) {
            let (mut whole, mut grown, mut into_whole) =
                (new_histogram(), new_growing_histogram(), new_histogram());
            let mut small = new_growing_histogram();
            for v in &a {
                record(&mut whole, Duration::from_micros(*v));
                record(&mut grown, Duration::from_micros(*v));
            }
            for v in &b {
                record(&mut whole, Duration::from_micros(*v));
                record(&mut small, Duration::from_micros(*v));
            }
            grown.add(&small).unwrap();
            into_whole.add(&grown).unwrap();
            prop_assert_eq!(LatencyStats::of(&grown), LatencyStats::of(&whole));
            prop_assert_eq!(LatencyStats::of(&into_whole), LatencyStats::of(&whole));
            for q in [0.5, 0.9, 0.999, 1.0] {
                prop_assert_eq!(grown.value_at_quantile(q), whole.value_at_quantile(q));
            }
            prop_assert_eq!(LatencyStats::above(&grown, 5_000.0), LatencyStats::above(&whole, 5_000.0));
        }
    }

    /// It holds the range recorded, not the hour: 2,048 counts for values
    /// up to 2 ms (16 KB), 7,168 up to 65 ms (56 KB); the whole hour's 23,552.
    #[test]
    fn a_growing_histogram_holds_only_the_range_recorded() {
        let mut h = new_growing_histogram();
        assert_eq!(h.distinct_values(), 2048);
        record(&mut h, Duration::from_millis(50));
        assert_eq!(h.distinct_values(), 7168);
        record(&mut h, Duration::from_secs(7200));
        assert_eq!(h.distinct_values(), new_histogram().distinct_values());
        assert_eq!(new_histogram().distinct_values(), 23552);
    }
}
