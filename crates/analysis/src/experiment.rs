//! The statistics and the plan of an experiment (configurations ×
//! workloads × repetitions): the cells a set of factors makes, the order
//! of the runs (interleaved rounds, shuffled by a seed, so drift spreads
//! over every cell), when to stop repeating (Phoronix Test Suite's rule:
//! while the coefficient of variation is above a bound, up to a maximum),
//! and each cell's figures across its repetitions: mean, 95% confidence
//! interval (Student's t), coefficient of variation, range, and the
//! repetitions that peak above five times the mean (as source 003 counts
//! them).

use headroom_units::rng::Rng;

/// A factor and its levels, e.g. `store: [db, redis, memcached]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    pub name: String,
    pub levels: Vec<String>,
}

/// One cell: a level of every factor, in the factors' order.
pub type Cell = Vec<(String, String)>;

/// Every combination of the factors' levels (their product), the first
/// factor varying slowest. No factor gives one empty cell.
pub fn cells(factors: &[Factor]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = vec![Vec::new()];
    for factor in factors {
        cells = cells
            .iter()
            .flat_map(|cell| {
                factor.levels.iter().map(move |level| {
                    let mut next = cell.clone();
                    next.push((factor.name.clone(), level.clone()));
                    next
                })
            })
            .collect();
    }
    cells
}

/// The order of the runs of `cells` cells over `rounds` rounds: each round
/// runs every cell once, in an order shuffled by `seed` (a different order
/// each round, the same for the same seed). Returns (round, cell) pairs.
pub fn interleaved_order(cells: usize, rounds: u32, seed: u64) -> Vec<(u32, usize)> {
    let mut rng = Rng::new(seed, 0x0e7e_51de);
    let mut order = Vec::with_capacity(cells * rounds as usize);
    for round in 0..rounds {
        let mut cells_of_round: Vec<usize> = (0..cells).collect();
        // Fisher–Yates.
        for i in (1..cells_of_round.len()).rev() {
            let j = rng.between(0, i as u64) as usize;
            cells_of_round.swap(i, j);
        }
        order.extend(cells_of_round.into_iter().map(|cell| (round, cell)));
    }
    order
}

/// The same runs cell after cell: every repetition of the first cell, then
/// of the second, ...
pub fn sequential_order(cells: usize, rounds: u32) -> Vec<(u32, usize)> {
    (0..cells)
        .flat_map(|cell| (0..rounds).map(move |round| (round, cell)))
        .collect()
}

/// How many repetitions a cell gets: at least `min`, at most `max`, and in
/// between more while the coefficient of variation of the figure is above
/// `until_cov` (a fraction: 0.035 for 3.5%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepetitionRule {
    pub min: u32,
    pub max: u32,
    pub until_cov: Option<f64>,
}

impl RepetitionRule {
    /// A fixed number of repetitions.
    pub fn fixed(n: u32) -> RepetitionRule {
        RepetitionRule {
            min: n.max(1),
            max: n.max(1),
            until_cov: None,
        }
    }

    /// Whether a cell with these measurements needs another repetition.
    pub fn more_needed(&self, values: &[f64]) -> bool {
        let n = values.len() as u32;
        if n < self.min {
            return true;
        }
        if n >= self.max {
            return false;
        }
        match self.until_cov {
            Some(bound) => Summary::of(values).is_none_or(|s| s.cov.is_none_or(|c| c > bound)),
            None => false,
        }
    }
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Cornish–Fisher to the second order: z + (z³ + z) / (4 df) +
        // (5z⁵ + 16z³ + 3z) / (96 df²), z = 1.959964 (within 0.0001 of
        // scipy's t.ppf(0.975, df) above 30).
        _ => {
            let df = df as f64;
            1.959_964 + 2.372_3 / df + 2.822_5 / (df * df)
        }
    }
}

/// A cell's figure across its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` for one value.
    pub stdev: Option<f64>,
    /// The 95% confidence interval of the mean; `None` for one value.
    pub ci95: Option<(f64, f64)>,
    /// Standard deviation over the mean; `None` for one value or a zero mean.
    pub cov: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// The repetitions (indices) whose value is above five times the mean
    /// of the others: the peaks source 003 reports apart.
    pub peaks: Vec<usize>,
}

impl Summary {
    /// `None` without a finite value; non-finite values are left out.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let finite: Vec<(usize, f64)> = values
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .collect();
        let n = finite.len();
        if n == 0 {
            return None;
        }
        let sum: f64 = finite.iter().map(|(_, v)| v).sum();
        let mean = sum / n as f64;
        let stdev = (n > 1).then(|| {
            let squares: f64 = finite.iter().map(|(_, v)| (v - mean).powi(2)).sum();
            (squares / (n - 1) as f64).sqrt()
        });
        let ci95 = stdev.map(|s| {
            let half = t95(n - 1) * s / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        let cov = stdev
            .filter(|_| mean.abs() > f64::EPSILON)
            .map(|s| s / mean.abs());
        let peaks = finite
            .iter()
            .filter(|(_, v)| {
                n > 1 && {
                    let others = (sum - v) / (n - 1) as f64;
                    others > 0.0 && *v > 5.0 * others
                }
            })
            .map(|(i, _)| *i)
            .collect();
        Some(Summary {
            n,
            mean,
            stdev,
            ci95,
            cov,
            min: finite.iter().map(|(_, v)| *v).fold(f64::INFINITY, f64::min),
            max: finite
                .iter()
                .map(|(_, v)| *v)
                .fold(f64::NEG_INFINITY, f64::max),
            peaks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor(name: &str, levels: &[&str]) -> Factor {
        Factor {
            name: name.into(),
            levels: levels.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn cells_are_the_product_of_the_factors() {
        let c = cells(&[
            factor("store", &["db", "redis", "memcached"]),
            factor("users", &["30", "100"]),
        ]);
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[1],
            vec![
                ("store".into(), "db".into()),
                ("users".into(), "100".into())
            ]
        );
        assert_eq!(cells(&[]), vec![Vec::<(String, String)>::new()]);
        assert!(cells(&[factor("x", &[])]).is_empty());
    }

    #[test]
    fn interleaved_rounds_run_every_cell_once_in_a_seeded_order() {
        let order = interleaved_order(5, 4, 7);
        assert_eq!(order.len(), 20);
        let rounds: Vec<Vec<usize>> = (0..4)
            .map(|r| order.iter().filter(|o| o.0 == r).map(|o| o.1).collect())
            .collect();
        for round in &rounds {
            let mut sorted = round.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        }
        assert!(rounds.windows(2).any(|w| w[0] != w[1]), "{rounds:?}");
        assert_eq!(order, interleaved_order(5, 4, 7));
        assert_ne!(order, interleaved_order(5, 4, 8));
        assert_eq!(sequential_order(2, 2), vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
    }

    #[test]
    fn summary_by_hand() {
        // Mean 10, sample stdev 2 (squares 4+0+4 over 2), t(2) = 4.303.
        let s = Summary::of(&[8.0, 10.0, 12.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.stdev, s.min, s.max),
            (3, 10.0, Some(2.0), 8.0, 12.0)
        );
        let (low, high) = s.ci95.unwrap();
        let half = 4.303 * 2.0 / 3f64.sqrt();
        assert!((low - (10.0 - half)).abs() < 1e-9 && (high - (10.0 + half)).abs() < 1e-9);
        assert!((s.cov.unwrap() - 0.2).abs() < 1e-12);
        let one = Summary::of(&[5.0]).unwrap();
        assert_eq!((one.stdev, one.ci95, one.cov), (None, None, None));
        assert_eq!(Summary::of(&[f64::NAN]), None);
        // 60 is more than five times the mean of the others (10).
        assert_eq!(
            Summary::of(&[10.0, 9.0, 11.0, 60.0]).unwrap().peaks,
            vec![3]
        );
    }

    #[test]
    fn t_quantiles_meet_the_normal_one() {
        assert_eq!(t95(1), 12.706);
        assert_eq!(t95(30), 2.042);
        // Above the table the approximation continues it smoothly: t(40) = 2.021, t(120) = 1.980.
        assert!((t95(40) - 2.021).abs() < 0.002, "{}", t95(40));
        assert!((t95(120) - 1.980).abs() < 0.001, "{}", t95(120));
        assert!(t95(100_000) > 1.9599 && t95(100_000) < 1.9601);
    }

    #[test]
    fn repetitions_continue_while_the_spread_is_large() {
        let rule = RepetitionRule {
            min: 3,
            max: 6,
            until_cov: Some(0.035),
        };
        assert!(rule.more_needed(&[100.0, 101.0]));
        assert!(!rule.more_needed(&[100.0, 101.0, 99.0]), "CoV 1%");
        assert!(rule.more_needed(&[100.0, 120.0, 80.0]), "CoV 20%");
        assert!(
            !rule.more_needed(&[100.0, 120.0, 80.0, 90.0, 110.0, 70.0]),
            "at max"
        );
        assert!(!RepetitionRule::fixed(2).more_needed(&[1.0, 50.0]));
    }
}
