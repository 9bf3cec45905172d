//! Is a difference between two runs real? The bootstrap confidence interval
//! of the difference of two medians (percentile method): resample each run's
//! per-interval values with replacement, take the difference of the
//! resamples' medians many times, and read the interval off the sorted
//! differences. A change whose interval includes zero is not significant.

use headroom_units::rng::Rng;

/// Resamples used by [`median_difference`]; enough for a stable 95% interval.
pub const RESAMPLES: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// median(b) − median(a) of the samples themselves.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether the interval excludes zero.
    pub fn significant(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// The median of `values` (NaNs are not expected); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(sorted_median(&sorted))
}

fn sorted_median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn resample_median(values: &[f64], rng: &mut Rng, scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    let n = values.len() as u64;
    scratch.extend((0..n).map(|_| values[rng.between(0, n - 1) as usize]));
    scratch.sort_by(f64::total_cmp);
    sorted_median(scratch)
}

/// The `confidence` (e.g. 0.95) interval of median(b) − median(a). `None`
/// when either side has fewer than 3 values: too few to say anything. The
/// same `seed` gives the same interval.
pub fn median_difference(a: &[f64], b: &[f64], confidence: f64, seed: u64) -> Option<Interval> {
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let estimate = median(b)? - median(a)?;
    let mut rng = Rng::new(seed, 0xB007);
    let mut scratch = Vec::with_capacity(a.len().max(b.len()));
    let mut differences: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let mb = resample_median(b, &mut rng, &mut scratch);
            let ma = resample_median(a, &mut rng, &mut scratch);
            mb - ma
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.5, 0.999)) / 2.0;
    let at = |q: f64| {
        let i = (q * (RESAMPLES - 1) as f64).round() as usize;
        differences[i.min(RESAMPLES - 1)]
    };
    Some(Interval {
        estimate,
        low: at(tail),
        high: at(1.0 - tail),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(mean: f64, spread: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed, 1);
        (0..n)
            .map(|_| mean * (1.0 + spread * (rng.next_f64() - 0.5)))
            .collect()
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn a_planted_20_percent_increase_is_significant() {
        let a = noisy(100.0, 0.3, 60, 1);
        let b: Vec<f64> = noisy(100.0, 0.3, 60, 2).iter().map(|v| v * 1.2).collect();
        let ci = median_difference(&a, &b, 0.95, 7).unwrap();
        assert!(ci.significant(), "{ci:?}");
        assert!(ci.low > 10.0 && ci.high < 30.0, "{ci:?}");
        assert!((ci.estimate - 20.0).abs() < 8.0, "{ci:?}");
    }

    #[test]
    fn the_same_distribution_is_not_significant() {
        // Twenty A/A pairs from one distribution: a 95% interval should
        // include zero nearly always; none of these seeds is unlucky.
        let mut significant = 0;
        for seed in 0..20 {
            let a = noisy(100.0, 0.3, 60, 100 + seed);
            let b = noisy(100.0, 0.3, 60, 200 + seed);
            let ci = median_difference(&a, &b, 0.95, seed).unwrap();
            assert!(ci.low <= ci.estimate && ci.estimate <= ci.high);
            significant += usize::from(ci.significant());
        }
        assert!(
            significant <= 2,
            "{significant} of 20 A/A pairs looked different"
        );
    }

    #[test]
    fn too_few_values_say_nothing_and_seeds_repeat() {
        assert_eq!(
            median_difference(&[1.0, 2.0], &[1.0, 2.0, 3.0], 0.95, 1),
            None
        );
        let a = noisy(10.0, 0.2, 30, 3);
        let b = noisy(11.0, 0.2, 30, 4);
        assert_eq!(
            median_difference(&a, &b, 0.95, 9),
            median_difference(&a, &b, 0.95, 9)
        );
    }
}
