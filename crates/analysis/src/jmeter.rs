//! Percentiles as JMeter's HTML dashboard computes them, so an imported
//! JTL can show the figures its users compare against: Apache Commons
//! Math's `Percentile` with its default (LEGACY) estimator — position
//! p·(n+1)/100 in the sorted values, linear between neighbours — over a
//! window of the last 20,000 samples of a label
//! (`jmeter.reportgenerator.statistic_window`).

/// JMeter's default statistic window.
pub const STATISTIC_WINDOW: usize = 20_000;

/// The LEGACY estimate of the `p`-th percentile (0 < p ≤ 100) of `sorted`
/// (ascending); `None` without values.
pub fn legacy_percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    if n == 1 {
        return Some(sorted[0]);
    }
    let position = p * (n as f64 + 1.0) / 100.0;
    if position < 1.0 {
        return Some(sorted[0]);
    }
    if position >= n as f64 {
        return Some(sorted[n - 1]);
    }
    let floor = position.floor();
    let lower = sorted[floor as usize - 1];
    let upper = sorted[floor as usize];
    Some(lower + (position - floor) * (upper - lower))
}

/// The dashboard's median, 90th, 95th and 99th percentiles of `values` (in
/// the order the file lists them; only the last `window` count).
pub fn dashboard_percentiles(values: &[f64], window: usize) -> Option<[f64; 4]> {
    let kept = &values[values.len().saturating_sub(window)..];
    let mut sorted = kept.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some([
        legacy_percentile(&sorted, 50.0)?,
        legacy_percentile(&sorted, 90.0)?,
        legacy_percentile(&sorted, 95.0)?,
        legacy_percentile(&sorted, 99.0)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_dashboard_jmeter_generated() {
        // Elapsed times of a real JMeter 5.6.3 run whose statistics.json
        // says median 3.0, pct1 (90) 18.6, pct2 (95) 19.0, pct3 (99) 19.0.
        let values = [19.0, 15.0, 3.0, 2.0, 4.0, 3.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(
            dashboard_percentiles(&values, STATISTIC_WINDOW),
            Some([3.0, 18.6, 19.0, 19.0])
        );
        assert_eq!(legacy_percentile(&[], 90.0), None);
        assert_eq!(legacy_percentile(&[7.0], 90.0), Some(7.0));
        // Only the window's last values count.
        assert_eq!(
            dashboard_percentiles(&[100.0, 1.0, 2.0], 2).unwrap()[3],
            2.0
        );
    }
}
