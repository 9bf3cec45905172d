//! The statistics and the plan of an experiment (configurations ×
//! workloads × repetitions): the cells a set of factors makes, the order
//! of the runs (interleaved rounds, shuffled by a seed, so drift spreads
//! over every cell), when to stop repeating (Phoronix Test Suite's rule:
//! while the coefficient of variation is above a bound, up to a maximum),
//! each cell's figures across its repetitions: mean, 95% confidence
//! interval (Student's t), coefficient of variation, range, and the
//! repetitions that peak above five times the mean (as source 003 counts
//! them), and the difference of two cells with its interval (Welch).

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
            // A figure that does not vary at all (0 errors each time) is steady.
            Some(bound) => Summary::of(values).is_none_or(|s| match s.cov {
                Some(c) => c > bound,
                None => s.stdev != Some(0.0),
            }),
            None => false,
        }
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |acc, (i, g)| acc + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // The fraction converges fast below the mean; use the symmetry above it.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp() / a;
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < tiny { tiny } else { d };
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for numerator in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + numerator * d;
            d = 1.0 / if d.abs() < tiny { tiny } else { d };
            c = 1.0 + numerator / c;
            if c.abs() < tiny {
                c = tiny;
            }
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f
}

/// P(T ≤ t) for Student's t with `df` (> 0, not necessarily whole) degrees
/// of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided 95% quantile of Student's t (t.ppf(0.975, df)), for any
/// `df` > 0; infinite for `df` ≤ 0.
pub fn t95(df: f64) -> f64 {
    t_quantile(0.95, df)
}

/// The quantile of Student's t that bounds a two-sided `level` interval
/// (0.99 → t.ppf(0.995, df)), for any `df` > 0 and `level` in (0, 1);
/// infinite for `df` ≤ 0.
pub fn t_quantile(level: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 || !(level > 0.0 && level < 1.0) {
        return f64::INFINITY;
    }
    let target = 0.5 + level / 2.0;
    // t_cdf rises with t: bisect on [0, 1e6] to well below the printed digits.
    let (mut low, mut high) = (0.0f64, 1e6f64);
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if t_cdf(mid, df) < target {
            low = mid;
        } else {
            high = mid;
        }
        if high - low < 1e-12 {
            break;
        }
    }
    0.5 * (low + high)
}

/// The change of `b`'s mean against `a`'s, with its 95% confidence
/// interval (Welch: unequal variances, Welch–Satterthwaite degrees of
/// freedom), as scipy's `ttest_ind(b, a, equal_var=False)` gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    pub change: f64,
    /// The change in % of `a`'s mean (`None` when that mean is 0).
    pub change_pct: Option<f64>,
    pub ci95: (f64, f64),
    /// The 95% interval of the change as a share of `a`'s mean (0.05 for
    /// +5%): Fieller's interval of the ratio of the two means, minus 1.
    /// It accounts for the baseline mean's own uncertainty (the Welch
    /// interval divided by `a`'s mean would not) and uses the same t as
    /// `ci95`, so it holds 0 exactly when `ci95` does. `None` when `a`'s
    /// mean is not clearly away from 0 (then the interval is unbounded).
    pub relative_ci95: Option<(f64, f64)>,
    pub df: f64,
    /// The interval excludes 0: the difference is not noise.
    pub significant: bool,
    /// `a`'s mean and the two means' squared standard errors, for the
    /// intervals at other levels ([`Difference::interval`]).
    pub base_mean: f64,
    pub base_var: f64,
    pub other_var: f64,
}

impl Difference {
    /// The change's interval at `level` (0.99: 99%), Welch's as `ci95`.
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = t_quantile(level, self.df) * (self.base_var + self.other_var).sqrt();
        (self.change - half, self.change + half)
    }

    /// The relative change's interval at `level`, Fieller's as
    /// `relative_ci95`.
    pub fn relative_interval(&self, level: f64) -> Option<(f64, f64)> {
        fieller(
            self.base_mean,
            self.base_var,
            self.base_mean + self.change,
            self.other_var,
            t_quantile(level, self.df),
        )
        .map(|(low, high)| (low - 1.0, high - 1.0))
    }
}

/// `None` when either side has fewer than 2 values or both vary not at all.
pub fn difference(a: &[f64], b: &[f64]) -> Option<Difference> {
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    let (va, vb) = (
        sa.stdev?.powi(2) / sa.n as f64,
        sb.stdev?.powi(2) / sb.n as f64,
    );
    let se2 = va + vb;
    if se2 <= 0.0 {
        return None;
    }
    let df = se2 * se2 / (va * va / (sa.n as f64 - 1.0) + vb * vb / (sb.n as f64 - 1.0));
    let change = sb.mean - sa.mean;
    let mut d = Difference {
        change,
        change_pct: (sa.mean.abs() > f64::EPSILON).then(|| change / sa.mean * 100.0),
        ci95: (change, change),
        relative_ci95: None,
        df,
        significant: false,
        base_mean: sa.mean,
        base_var: va,
        other_var: vb,
    };
    d.ci95 = d.interval(0.95);
    d.relative_ci95 = d.relative_interval(0.95);
    d.significant = d.ci95.0 > 0.0 || d.ci95.1 < 0.0;
    Some(d)
}

/// Fieller's interval of the ratio μb / μa of two independent means
/// (means `ma`, `mb`, their squared standard errors `va`, `vb`): the
/// ratios ρ with (mb − ρ·ma)² ≤ t²·(vb + ρ²·va). Bounded only when `ma` is
/// clearly away from 0 (ma² > t²·va); `None` otherwise.
fn fieller(ma: f64, va: f64, mb: f64, vb: f64, t: f64) -> Option<(f64, f64)> {
    let q = ma * ma - t * t * va;
    if q <= 0.0 || !t.is_finite() {
        return None;
    }
    // (ma·mb)² − q·(mb² − t²·vb) = t²·(va·mb² + vb·q) ≥ 0.
    let root = (t * t * (va * mb * mb + vb * q)).sqrt();
    Some(((ma * mb - root) / q, (ma * mb + root) / q))
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
        let ci95 = stdev.map(|s| mean_interval(mean, s, n, 0.95));
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

impl Summary {
    /// The interval of the mean at `level` (0.99: 99%; Student's t, as
    /// `ci95`); `None` for one value.
    pub fn interval(&self, level: f64) -> Option<(f64, f64)> {
        Some(mean_interval(self.mean, self.stdev?, self.n, level))
    }
}

/// The interval at `level` of a mean of `n` values with standard deviation
/// `stdev` (Student's t, n − 1 degrees of freedom).
fn mean_interval(mean: f64, stdev: f64, n: usize, level: f64) -> (f64, f64) {
    let half = t_quantile(level, (n - 1) as f64) * stdev / (n as f64).sqrt();
    (mean - half, mean + half)
}

/// A factor's main effect: for each of its levels, the mean over every
/// cell at that level of the cells' values (the other factors averaged
/// out). Cells without a value are left out.
pub fn main_effect(factor: &str, cells: &[Cell], values: &[Option<f64>]) -> Vec<(String, f64)> {
    let mut levels: Vec<(String, f64, usize)> = Vec::new();
    for (cell, value) in cells.iter().zip(values) {
        let (Some(level), Some(value)) = (level_of(cell, factor), value) else {
            continue;
        };
        match levels.iter_mut().find(|l| l.0 == level) {
            Some(entry) => {
                entry.1 += value;
                entry.2 += 1;
            }
            None => levels.push((level.to_string(), *value, 1)),
        }
    }
    levels
        .into_iter()
        .map(|(level, sum, n)| (level, sum / n as f64))
        .collect()
}

fn level_of<'a>(cell: &'a Cell, factor: &str) -> Option<&'a str> {
    cell.iter()
        .find(|(f, _)| f == factor)
        .map(|(_, l)| l.as_str())
}

/// One comparison of a level against the baseline level of its factor,
/// the other factors held the same.
#[derive(Debug, Clone, PartialEq)]
pub struct AgainstBaseline {
    /// The cell compared (its level of the factor is not the baseline).
    pub cell: usize,
    /// The cell it is compared with: the same levels, but the baseline's.
    pub baseline_cell: usize,
    /// `None` when either cell has fewer than 2 repetitions.
    pub difference: Option<Difference>,
}

/// Every cell whose level of `factor` is not `baseline`, against the cell
/// that differs from it only there. `runs[i]` are cell i's repetitions.
pub fn against_baseline(
    factor: &str,
    baseline: &str,
    cells: &[Cell],
    runs: &[Vec<f64>],
) -> Vec<AgainstBaseline> {
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        if level_of(cell, factor).is_none_or(|l| l == baseline) {
            continue;
        }
        let twin = cells.iter().position(|other| {
            other.len() == cell.len()
                && other.iter().zip(cell).all(|((f, a), (g, b))| {
                    f == g && if f == factor { a == baseline } else { a == b }
                })
        });
        if let Some(j) = twin {
            out.push(AgainstBaseline {
                cell: i,
                baseline_cell: j,
                difference: difference(&runs[j], &runs[i]),
            });
        }
    }
    out
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
        // Mean 10, sample stdev 2 (squares 4+0+4 over 2), t(2) = 4.3027 (scipy).
        let s = Summary::of(&[8.0, 10.0, 12.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.stdev, s.min, s.max),
            (3, 10.0, Some(2.0), 8.0, 12.0)
        );
        let (low, high) = s.ci95.unwrap();
        let half = 4.302652729749462 * 2.0 / 3f64.sqrt();
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
    fn t_distribution_matches_scipy() {
        // scipy.stats.t.ppf(0.975, df) and t.cdf.
        for (df, expected) in [
            (1.0, 12.706204736174694),
            (2.0, 4.302652729749462),
            (3.998502121993843, 2.776855341541797),
            (7.564296520423601, 2.329330150857689),
            (30.0, 2.0422724563012378),
            (1000.0, 1.9623390808264083),
        ] {
            assert!(
                (t95(df) - expected).abs() < 1e-9,
                "df {df}: {} vs {expected}",
                t95(df)
            );
        }
        assert!((t_cdf(2.0, 5.0) - 0.9490302605850708).abs() < 1e-12);
        assert!((t_cdf(-1.3, 2.5) - 0.15024339463535416).abs() < 1e-12);
        assert_eq!(t95(0.0), f64::INFINITY);
        // scipy.stats.t.ppf(0.995, df) and t.ppf(0.95, df): 99% and 90%.
        for (df, t99, t90) in [
            (1.0, 63.656741162871526, 6.313751514675037),
            (4.5, 4.272823993011293, 2.065575888878524),
            (10.0, 3.16927267261695, 1.8124611228116756),
            (30.0, 2.7499956535672254, 1.697260886593957),
        ] {
            assert!((t_quantile(0.99, df) - t99).abs() < 1e-8, "df {df}");
            assert!((t_quantile(0.90, df) - t90).abs() < 1e-8, "df {df}");
        }
        assert_eq!(t_quantile(1.0, 5.0), f64::INFINITY);
    }

    #[test]
    fn intervals_at_other_levels_match_scipy() {
        let (a, b) = ([10.0, 12.0, 11.0, 13.0], [14.0, 15.5, 13.0, 16.0]);
        // ttest_ind(b, a, equal_var=False).confidence_interval(0.99 / 0.90).
        let d = difference(&a, &b).unwrap();
        let (low, high) = d.interval(0.99);
        assert!((low + 0.3797618743361788).abs() < 1e-8, "{low}");
        assert!((high - 6.629761874336179).abs() < 1e-8, "{high}");
        let (low, high) = d.interval(0.90);
        assert!((low - 1.2898039140138753).abs() < 1e-8, "{low}");
        assert!((high - 4.960196085986124).abs() < 1e-8, "{high}");
        // At 95% the same as ci95, relative too.
        assert_eq!(d.interval(0.95), d.ci95);
        assert_eq!(d.relative_interval(0.95), d.relative_ci95);
        // A 99% interval is wider than the 95% one and holds it.
        let (r99, r95) = (d.relative_interval(0.99).unwrap(), d.relative_ci95.unwrap());
        assert!(r99.0 < r95.0 && r99.1 > r95.1);
        // t.interval(0.99, 3, mean(a), sem(a)).
        let (low, high) = Summary::of(&a).unwrap().interval(0.99).unwrap();
        assert!((low - 7.729709252782476).abs() < 1e-8, "{low}");
        assert!((high - 15.270290747217524).abs() < 1e-8, "{high}");
        assert_eq!(Summary::of(&[1.0]).unwrap().interval(0.99), None);
    }

    #[test]
    fn welch_differences_match_scipy() {
        // scipy.stats.ttest_ind(b, a, equal_var=False): df 7.5643, CI
        // 5.365481831112397 .. 13.434518168887585.
        let a = [100.0, 104.0, 98.0, 101.0, 103.0];
        let b = [110.0, 112.0, 107.0, 115.0, 109.0];
        let d = difference(&a, &b).unwrap();
        assert!((d.df - 7.564296520423601).abs() < 1e-9);
        assert!((d.ci95.0 - 5.365481831112397).abs() < 1e-9, "{d:?}");
        assert!((d.ci95.1 - 13.434518168887585).abs() < 1e-9, "{d:?}");
        assert!(d.significant);
        // Fieller's interval of the ratio (t(7.5643) = 2.329330150857689):
        // +5.22% to +13.49% around +9.29% (the Welch interval over the
        // baseline's mean, 101.2, would say +5.30% to +13.28%).
        let (low, high) = d.relative_ci95.unwrap();
        assert!((low - 0.05221501721404609).abs() < 1e-9, "{d:?}");
        assert!((high - 0.13487664279856193).abs() < 1e-9, "{d:?}");
        assert!(low < d.change_pct.unwrap() / 100.0 && d.change_pct.unwrap() / 100.0 < high);
        // A baseline whose mean is not clearly away from 0: unbounded.
        assert_eq!(
            difference(&[-1.0, 1.0, 0.5], &[5.0, 6.0, 7.0])
                .unwrap()
                .relative_ci95,
            None
        );
        // Noise: CI -49.28595033389013 .. 65.95261700055681, not significant.
        let d = difference(&[100.0, 130.0, 80.0], &[105.0, 90.0, 140.0]).unwrap();
        assert!((d.ci95.0 + 49.28595033389013).abs() < 1e-9, "{d:?}");
        assert!((d.ci95.1 - 65.95261700055681).abs() < 1e-9, "{d:?}");
        assert!(!d.significant);
        assert_eq!(difference(&[1.0], &[2.0, 3.0]), None);
    }

    #[test]
    fn main_effects_and_comparisons_against_a_baseline() {
        let c = cells(&[
            factor("store", &["db", "redis"]),
            factor("users", &["30", "100"]),
        ]);
        // db: 10 and 30; redis: 20 and 40 → store's effect 20 vs 30.
        let values = [Some(10.0), Some(30.0), Some(20.0), Some(40.0)];
        assert_eq!(
            main_effect("store", &c, &values),
            vec![("db".into(), 20.0), ("redis".into(), 30.0)]
        );
        assert_eq!(
            main_effect("users", &c, &values),
            vec![("30".into(), 15.0), ("100".into(), 35.0)]
        );
        let runs = vec![
            vec![10.0, 11.0, 9.0],
            vec![30.0, 31.0, 29.0],
            vec![20.0, 21.0, 19.0],
            vec![30.5, 29.5, 30.0],
        ];
        let against = against_baseline("store", "db", &c, &runs);
        assert_eq!(against.len(), 2);
        // redis at 30 users against db at 30 users: +10, clearly.
        assert_eq!((against[0].cell, against[0].baseline_cell), (2, 0));
        assert!(against[0].difference.unwrap().significant);
        // redis at 100 users against db at 100 users: no difference to speak of.
        assert_eq!((against[1].cell, against[1].baseline_cell), (3, 1));
        assert!(!against[1].difference.unwrap().significant);
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
        let steady_zero = RepetitionRule {
            min: 2,
            max: 6,
            until_cov: Some(0.05),
        };
        assert!(
            !steady_zero.more_needed(&[0.0, 0.0]),
            "no errors each time is steady"
        );
        assert!(steady_zero.more_needed(&[0.0, 1.0]));
    }

    /// Normal values by Box–Muller from the project's seeded generator.
    fn normal_runs(rng: &mut headroom_units::rng::Rng, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let (u, v) = (rng.next_f64().max(1e-12), rng.next_f64());
                mean + sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
            })
            .collect()
    }

    #[test]
    fn identical_levels_are_flagged_about_5_percent_of_the_time_and_20_percent_apart_nearly_always()
    {
        // 4 repetitions per cell, run-to-run noise 8% of the mean (as the
        // designed-difference test's server gives), 4,000 seeds.
        let seeds = 4000;
        let (mut false_alarms, mut found, mut covered, mut relative_covered) = (0, 0, 0, 0);
        for seed in 0..seeds {
            let mut rng = headroom_units::rng::Rng::new(seed, 7);
            let a = normal_runs(&mut rng, 4, 100.0, 8.0);
            let same = normal_runs(&mut rng, 4, 100.0, 8.0);
            let slower = normal_runs(&mut rng, 4, 120.0, 8.0);
            if difference(&a, &same).unwrap().significant {
                false_alarms += 1;
            }
            let d = difference(&a, &slower).unwrap();
            if d.significant && d.change > 0.0 {
                found += 1;
            }
            if d.ci95.0 <= 20.0 && 20.0 <= d.ci95.1 {
                covered += 1;
            }
            // The true ratio is 1.2: +20% of the baseline.
            let (low, high) = d.relative_ci95.unwrap();
            if low <= 0.2 && 0.2 <= high {
                relative_covered += 1;
            }
            // It holds 0 exactly when the difference's interval does.
            assert_eq!(d.significant, low > 0.0 || high < 0.0, "{d:?}");
        }
        let rate = |n: u64| n as f64 / seeds as f64;
        // Welch's interval at 95%: 5% false alarms (binomial sd 0.34%).
        assert!(
            (0.035..0.065).contains(&rate(false_alarms)),
            "false alarms {}",
            rate(false_alarms)
        );
        eprintln!(
            "false alarms {:.4}, +20% found {:.4}, interval holds +20% {:.4}, relative interval holds +20% {:.4}",
            rate(false_alarms),
            rate(found),
            rate(covered),
            rate(relative_covered)
        );
        // +20% against 8% noise with 4 + 4 runs: Welch's test's power is
        // about 0.8 (the designed-difference integration test runs this).
        assert!(rate(found) > 0.75, "found {}", rate(found));
        assert!(
            (0.93..0.97).contains(&rate(covered)),
            "covered {}",
            rate(covered)
        );
        // Fieller's interval holds the true relative change as often.
        assert!(
            (0.93..0.97).contains(&rate(relative_covered)),
            "relative interval covered {}",
            rate(relative_covered)
        );
    }
}
