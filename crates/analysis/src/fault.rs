//! What a fault did to a run (a store restarted, a node killed at a known
//! second): the errors after it, and the time to recover, from the run's
//! per-second figures. Recovered means: from some second on, every second
//! is free of errors, that second's p95 is within 20% of the p95 before the
//! fault (the median of the seconds before it), and so is the median p95 of
//! the seconds from it on (a lone slow second of a mixed journey afterwards
//! is noise, not a relapse).

/// One second of a run, as the fault figures use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    pub second: u64,
    pub count: u64,
    pub errors: u64,
    /// `None` in a second without a sample.
    pub p95_ms: Option<f64>,
}

/// How far the p95 may stay above its level before the fault and count as
/// recovered.
pub const RECOVERED_WITHIN: f64 = 0.20;

#[derive(Debug, Clone, PartialEq)]
pub struct FaultEffect {
    /// The second the fault happened in.
    pub at: u64,
    /// Errors from that second on.
    pub errors_after: u64,
    /// The p95 before the fault (median of the seconds before it).
    pub p95_before_ms: Option<f64>,
    /// Seconds from the fault to the first second of the recovered rest of
    /// the run; `None` when the run never recovered (or there is no level
    /// to recover to).
    pub recovered_after_s: Option<u64>,
}

/// The effect of a fault at second `at` on a run's `seconds` (in order).
pub fn effect(seconds: &[Second], at: u64) -> FaultEffect {
    let mut before: Vec<f64> = seconds
        .iter()
        .filter(|s| s.second < at)
        .filter_map(|s| s.p95_ms)
        .collect();
    before.sort_by(f64::total_cmp);
    let p95_before_ms = (!before.is_empty()).then(|| before[(before.len() - 1) / 2]);
    let after: Vec<&Second> = seconds.iter().filter(|s| s.second >= at).collect();
    let errors_after = after.iter().map(|s| s.errors).sum();
    let limit = p95_before_ms.map(|b| b * (1.0 + RECOVERED_WITHIN));
    let within = |p: Option<f64>| matches!((p, limit), (Some(p), Some(l)) if p <= l);
    // Recovered from second `i` of `after` on: that second is back within
    // the limit, and every later one is error-free with samples and their
    // median p95 is within it too (one slow second of a mixed journey after
    // the recovery is not a relapse; errors are).
    let recovered_from = |i: usize| {
        let tail = &after[i..];
        if !within(tail[0].p95_ms) || tail.iter().any(|s| s.errors > 0 || s.count == 0) {
            return false;
        }
        let mut p95s: Vec<f64> = tail.iter().filter_map(|s| s.p95_ms).collect();
        p95s.sort_by(f64::total_cmp);
        within(p95s.get((p95s.len().max(1) - 1) / 2).copied())
    };
    let first_of_good_tail = (0..after.len())
        .find(|&i| recovered_from(i))
        .map(|i| after[i].second);
    FaultEffect {
        at,
        errors_after,
        p95_before_ms,
        recovered_after_s: first_of_good_tail.map(|second| second - at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p95: &[(u64, f64)]) -> Vec<Second> {
        p95.iter()
            .enumerate()
            .map(|(i, (errors, p))| Second {
                second: i as u64,
                count: 100,
                errors: *errors,
                p95_ms: Some(*p),
            })
            .collect()
    }

    #[test]
    fn recovery_is_the_start_of_the_good_rest() {
        // p95 20 ms before the fault at second 3; errors in 3 and 4; slow
        // until 6; from second 6 on within 20% (24 ms) and error-free.
        let seconds = run(&[
            (0, 20.0),
            (0, 19.0),
            (0, 21.0),
            (40, 300.0),
            (5, 80.0),
            (0, 30.0),
            (0, 23.0),
            (0, 20.0),
            // A lone slow second later is not a relapse.
            (0, 35.0),
            (0, 21.0),
        ]);
        let e = effect(&seconds, 3);
        assert_eq!(e.p95_before_ms, Some(20.0));
        assert_eq!(e.errors_after, 45);
        assert_eq!(e.recovered_after_s, Some(3));
        // Slow for the rest of the run (median above the limit): not recovered.
        let slow = run(&[
            (0, 20.0),
            (0, 20.0),
            (3, 90.0),
            (0, 22.0),
            (0, 40.0),
            (0, 41.0),
        ]);
        assert_eq!(effect(&slow, 2).recovered_after_s, None);
    }

    #[test]
    fn a_relapse_or_a_run_that_ends_broken_is_not_recovered() {
        let relapse = run(&[(0, 20.0), (9, 200.0), (0, 20.0), (1, 20.0)]);
        assert_eq!(effect(&relapse, 1).recovered_after_s, None);
        let unaffected = run(&[(0, 20.0), (0, 21.0), (0, 20.0)]);
        assert_eq!(effect(&unaffected, 1).recovered_after_s, Some(0));
        // A fault in the first second: nothing to recover to.
        assert_eq!(effect(&unaffected, 0).recovered_after_s, None);
        let silent = vec![Second {
            second: 2,
            count: 0,
            errors: 0,
            p95_ms: None,
        }];
        let mut with_gap = run(&[(0, 20.0), (0, 20.0)]);
        with_gap.extend(silent);
        assert_eq!(
            effect(&with_gap, 1).recovered_after_s,
            None,
            "a second without samples is not recovered"
        );
    }
}
