//! Who runs which journey of a mix. Closed model: the run's users are
//! split exactly by weight (each journey's share rounded by the largest
//! remainder, ties to the earlier journey) and interleaved by smooth
//! weighted round-robin, so that any first users of a ramp-up are mixed as
//! evenly as whole users allow. Open model: each arrival draws its journey
//! with probability weight / sum from the run's seed and its own number, so
//! shards (which number arrivals as one run) agree. A journey records under
//! its own labels and checks: [`Offset`] shifts its ids into the run's.

use crate::scenario::observe::{Observe, StepView};
use crate::scenario::runner::{JourneyHost, JourneyPlan};
use headroom_bundle::sample::Sample;
use headroom_units::rng::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Mixed into the seed for the arrivals' draws (so they do not repeat a
/// VU's think-time draws).
const ARRIVAL_SALT: u64 = 0x6a6f_7572_6e65_7973;

/// `total` users split by `weights`: each journey's exact share rounded
/// down, the users left over going to the largest remainders (ties to the
/// earlier journey). The counts add up to `total`.
pub fn exact_split(weights: &[f64], total: u64) -> Vec<u64> {
    let weights = &relative(weights, total);
    let sum: f64 = weights.iter().sum();
    if weights.is_empty() || sum <= 0.0 {
        return vec![0; weights.len()];
    }
    let quotas: Vec<f64> = weights.iter().map(|w| total as f64 * w / sum).collect();
    let mut counts: Vec<u64> = quotas.iter().map(|q| q.floor() as u64).collect();
    let given: u64 = counts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // A stable sort keeps the earlier journey first among equal remainders.
    order.sort_by(|&a, &b| {
        let (ra, rb) = (quotas[a] - quotas[a].floor(), quotas[b] - quotas[b].floor());
        rb.total_cmp(&ra)
    });
    for &i in order
        .iter()
        .cycle()
        .take(total.saturating_sub(given) as usize)
    {
        counts[i] += 1;
    }
    counts
}

/// The weights, over the largest when `total` times their sum would not
/// be finite (1e308 and 1e308 add up to infinity, and every share to 0;
/// 1e307 and 1e307 for 1,000 users gave infinite quotas): the same shares.
/// Weights that multiply out are kept as they are, so their split is
/// exactly the one their quotients give.
fn relative(weights: &[f64], total: u64) -> Vec<f64> {
    let largest = weights.iter().copied().fold(0.0, f64::max);
    let sum: f64 = weights.iter().sum();
    if (sum * total.max(1) as f64).is_finite() || !(largest > 0.0 && largest.is_finite()) {
        return weights.to_vec();
    }
    weights.iter().map(|w| w / largest).collect()
}

/// The journey of each user in turn: `counts[i]` users of journey `i`,
/// interleaved by smooth weighted round-robin (nginx's): every prefix holds
/// each journey within one user of its share.
pub fn interleave(counts: &[u64]) -> Vec<u16> {
    let total: u64 = counts.iter().sum();
    let mut current = vec![0i64; counts.len()];
    let mut order = Vec::with_capacity(total as usize);
    for _ in 0..total {
        let mut best = 0;
        for (i, count) in counts.iter().enumerate() {
            current[i] += *count as i64;
            if current[i] > current[best] {
                best = i;
            }
        }
        current[best] -= total as i64;
        order.push(best as u16);
    }
    order
}

/// A journey of a running mix: its plan and where its labels and checks
/// start in the run's tables.
pub struct MixEntry {
    pub plan: Arc<JourneyPlan>,
    pub first_label: u16,
    pub first_check: u16,
}

/// The journeys of a run and who runs which.
pub struct MixPlan {
    pub journeys: Vec<MixEntry>,
    /// Closed model: the journey of user `k` (0-based, numbered as in one
    /// unsplit run).
    users: Vec<u16>,
    /// Open model: the weights' running sums, over their total.
    cumulative: Vec<f64>,
    seed: u64,
}

impl MixPlan {
    /// `population` users split by `weights` (one per journey).
    pub fn new(journeys: Vec<MixEntry>, weights: &[f64], population: u64, seed: u64) -> MixPlan {
        let users = interleave(&exact_split(weights, population));
        let weights = &relative(weights, 1);
        let sum: f64 = weights.iter().sum();
        let mut running = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                running += w;
                running / sum
            })
            .collect();
        MixPlan {
            journeys,
            users,
            cumulative,
            seed,
        }
    }

    /// The journey of closed-model user `vu` (1-based, as the engine numbers them).
    pub fn for_user(&self, vu: u32) -> &MixEntry {
        let k = (vu.max(1) - 1) as usize;
        let index = match self.users.get(k) {
            Some(&index) => usize::from(index),
            // More users than were split (not planned): round-robin.
            None => k % self.journeys.len(),
        };
        &self.journeys[index]
    }

    /// The journey (its index) of open-model arrival `n` (0-based,
    /// numbered as in one unsplit run): drawn with probability weight / sum.
    pub fn arrival_journey(&self, n: u64) -> usize {
        let draw = Rng::new(self.seed ^ ARRIVAL_SALT, n).next_f64();
        self.cumulative
            .iter()
            .position(|c| draw < *c)
            .unwrap_or(self.cumulative.len() - 1)
    }
}

/// A journey's host in a mix: the worker, with the journey's label and
/// check ids shifted to the run's (a copy of the sample on the stack; no
/// allocation).
pub struct Offset<'a, H> {
    host: &'a H,
    labels: u16,
    checks: u16,
}

impl<'a, H> Offset<'a, H> {
    pub fn new(host: &'a H, entry: &MixEntry) -> Offset<'a, H> {
        Offset {
            host,
            labels: entry.first_label,
            checks: entry.first_check,
        }
    }

    fn sample(&self, sample: &Sample) -> Sample {
        Sample {
            label: sample.label + self.labels,
            failed_check: sample.failed_check.map(|c| c + self.checks),
            ..*sample
        }
    }
}

impl<H: JourneyHost> JourneyHost for Offset<'_, H> {
    fn record(&self, sample: &Sample) {
        self.host.record(&self.sample(sample));
    }

    fn record_check(&self, check: u16, passed: bool) {
        self.host.record_check(check + self.checks, passed);
    }

    fn record_think(&self, label: u16, think: Duration) {
        self.host.record_think(label + self.labels, think);
    }

    async fn pace(&self) -> Option<Instant> {
        self.host.pace().await
    }

    fn observe(&self, label: u16) -> Observe {
        self.host.observe(label + self.labels)
    }

    fn exchange(&self, view: &StepView<'_>) {
        let sample = self.sample(view.sample);
        self.host.exchange(&StepView {
            sample: &sample,
            ..*view
        });
    }

    fn halted(&self) -> bool {
        self.host.halted()
    }

    fn skips_think(&self) -> bool {
        self.host.skips_think()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ninety_nine_one_over_a_thousand_users_is_exact() {
        assert_eq!(exact_split(&[90.0, 9.0, 1.0], 1000), [900, 90, 10]);
        assert_eq!(exact_split(&[90.0, 9.0, 1.0], 30), [27, 3, 0]);
        let order = interleave(&[900, 90, 10]);
        let counted: Vec<usize> = (0..3)
            .map(|j| order.iter().filter(|i| usize::from(**i) == j).count())
            .collect();
        assert_eq!(counted, [900, 90, 10]);
    }

    /// Largest remainders: 1/3 each of 10 is 3.33: the first journey takes
    /// the user left over; 2/3 of 1 user goes to the larger remainder.
    #[test]
    fn the_users_left_over_go_to_the_largest_remainders_ties_to_the_earlier() {
        assert_eq!(exact_split(&[1.0, 1.0, 1.0], 10), [4, 3, 3]);
        assert_eq!(exact_split(&[1.0, 2.0], 1), [0, 1]);
        assert_eq!(exact_split(&[1.0, 1.0], 1), [1, 0]);
        assert_eq!(exact_split(&[5.0, 3.0, 2.0], 0), [0, 0, 0]);
        for total in [1u64, 7, 99, 1001] {
            let counts = exact_split(&[0.3, 2.5, 7.0, 0.01], total);
            assert_eq!(counts.iter().sum::<u64>(), total);
        }
    }

    /// Every prefix of the users (a ramp-up's first ones) holds each
    /// journey within one user of its share.
    #[test]
    fn every_prefix_of_the_users_is_mixed_within_one_user() {
        for counts in [
            vec![900u64, 90, 10],
            vec![27, 3, 0],
            vec![5, 5],
            vec![1, 2, 3, 4],
        ] {
            let total: u64 = counts.iter().sum();
            let order = interleave(&counts);
            let mut seen = vec![0u64; counts.len()];
            for (k, journey) in order.iter().enumerate() {
                seen[usize::from(*journey)] += 1;
                for (j, count) in counts.iter().enumerate() {
                    let share = (k + 1) as f64 * *count as f64 / total as f64;
                    assert!(
                        (seen[j] as f64 - share).abs() < 1.0 + 1e-9,
                        "{counts:?}: after {} users journey {j} has {} for a share of {share}",
                        k + 1,
                        seen[j]
                    );
                }
            }
        }
        assert_eq!(interleave(&[2, 1]), [0, 1, 0]);
    }

    fn mix_plan(weights: &[f64], population: u64) -> MixPlan {
        MixPlan::new(Vec::new(), weights, population, 7)
    }

    /// 100,000 arrivals: each journey's share within 0.4 percentage points
    /// of its weight's (the 90% share's standard deviation is 0.095 points);
    /// the same draw for the same arrival number (shards agree).
    #[test]
    fn arrivals_draw_their_journeys_by_weight_and_by_number() {
        let plan = mix_plan(&[90.0, 9.0, 1.0], 0);
        let n = 100_000u64;
        let mut seen = [0u64; 3];
        for arrival in 0..n {
            seen[plan.arrival_journey(arrival)] += 1;
        }
        for (count, weight) in seen.iter().zip([0.90, 0.09, 0.01]) {
            let share = *count as f64 / n as f64;
            assert!((share - weight).abs() < 0.004, "{seen:?}");
        }
        let again = mix_plan(&[90.0, 9.0, 1.0], 0);
        assert!((0..1000).all(|a| plan.arrival_journey(a) == again.arrival_journey(a)));
    }

    /// Weights whose sum overflows split as their ratio says (they sent
    /// every arrival to the last journey).
    #[test]
    fn weights_too_large_to_add_split_by_their_ratio() {
        assert_eq!(exact_split(&[1e308, 1e308], 10), [5, 5]);
        assert_eq!(exact_split(&[1e307, 1e307], 1000), [500, 500]);
        let plan = mix_plan(&[1e308, 1e308], 4);
        let first = (0..10_000)
            .filter(|a| plan.arrival_journey(*a) == 0)
            .count();
        assert!((4_500..5_500).contains(&first), "{first}");
        let users: Vec<usize> = (1..=4)
            .map(|vu| plan.users.get(vu - 1).copied().map_or(9, usize::from))
            .collect();
        assert_eq!(users, [0, 1, 0, 1]);
    }
}
