//! What the spread of a level's repeated measurements says of the next
//! one: the lower one-sided prediction bound of one more draw (the level's
//! "floor"). Near a server's limit one lesson start can meet the target
//! and the next, with other arrival times, break it; three lessons that all
//! met but far apart say a fourth may not. The figures are taken as draws
//! of a normal variable (an approximation: an Apdex is bounded by 1), so
//! the floor is mean − t(n − 1) · s · √(1 + 1/n), t the one-sided
//! [`ASSURANCE`] quantile of Student's t.

use crate::experiment::t_quantile;

/// How often one more measurement comes to at least the floor: 19 in 20.
pub const ASSURANCE: f64 = 0.95;

/// The fewest measurements whose spread is read (two say little: t with one
/// degree of freedom is 6.3).
pub const SPREAD_FROM: usize = 3;

/// The floor of one more measurement after `values`: at least this with
/// [`ASSURANCE`]. `None` for fewer than [`SPREAD_FROM`] values.
pub fn floor_of_next(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < SPREAD_FROM {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    // One-sided at ASSURANCE is two-sided at 2·ASSURANCE − 1.
    let t = t_quantile(2.0 * ASSURANCE - 1.0, (n - 1) as f64);
    Some(mean - t * var.sqrt() * (1.0 + 1.0 / n as f64).sqrt())
}

/// The lowest and the highest of `values` (infinite when there are none).
pub fn lowest_highest(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), &v| {
            (low.min(v), high.max(v))
        })
}

/// The highest floor `values` can still come to once there are `n`
/// measurements, the ones still to come as favourable as they can be (all
/// alike, at most `ceiling`: for a given mean, equal values spread least).
/// `None` when `n` is below [`SPREAD_FROM`] or no more can come.
pub fn best_floor(values: &[f64], n: usize, ceiling: f64) -> Option<f64> {
    if n < SPREAD_FROM || values.len() >= n {
        return None;
    }
    let mut all = values.to_vec();
    let known = all.len();
    let mut best = f64::NEG_INFINITY;
    // A thousandth of the range is finer than any figure printed.
    for step in 0..=1000 {
        let x = ceiling * f64::from(step) / 1000.0;
        all.truncate(known);
        all.resize(n, x);
        if let Some(floor) = floor_of_next(&all) {
            best = best.max(floor);
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_one_sided_prediction_bound() {
        // Three lessons of 349 on the testbed: mean 0.9037, s 0.1066;
        // t(0.95, 2) = 2.919986, √(4/3) = 1.154701.
        let floor = floor_of_next(&[0.781, 0.954, 0.976]).unwrap();
        let mean = (0.781 + 0.954 + 0.976) / 3.0;
        let s =
            (((0.781f64 - mean).powi(2) + (0.954f64 - mean).powi(2) + (0.976f64 - mean).powi(2))
                / 2.0)
                .sqrt();
        assert!(
            (floor - (mean - 2.919986 * s * 1.154701)).abs() < 1e-5,
            "{floor}"
        );
        assert!((floor - 0.5436).abs() < 1e-3, "{floor}");
        // DokuWiki's three of 164: close together, so close to them.
        let floor = floor_of_next(&[0.916, 0.900, 0.885]).unwrap();
        assert!((floor - 0.8481).abs() < 1e-3, "{floor}");
        // Alike: the floor is their value.
        assert!((floor_of_next(&[0.9, 0.9, 0.9]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(floor_of_next(&[0.9, 0.8]), None);
    }

    #[test]
    fn the_floor_holds_at_its_assurance_on_normal_draws() {
        // Of many triples drawn from one normal variable, a fourth draw
        // falls below the triple's floor about 1 time in 20.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = move || {
            let (u, v) = (uniform().max(1e-300), uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let trials = 20_000;
        let below = (0..trials)
            .filter(|_| {
                let three = [normal(), normal(), normal()];
                normal() < floor_of_next(&three).unwrap()
            })
            .count();
        let rate = below as f64 / trials as f64;
        assert!((rate - 0.05).abs() < 0.006, "{rate}");
    }

    #[test]
    fn two_lessons_far_apart_already_decide() {
        // 0.781 and 0.954: no third lesson brings the floor to 0.70.
        let best = best_floor(&[0.781, 0.954], 3, 1.0).unwrap();
        assert!(best < 0.70, "{best}");
        // 0.90 and 0.92: a third alike would.
        assert!(best_floor(&[0.90, 0.92], 3, 1.0).unwrap() > 0.70);
        // The best floor is one some third value reaches.
        let third = floor_of_next(&[0.781, 0.954, 0.87]).unwrap();
        assert!(best >= third);
        assert_eq!(best_floor(&[0.9], 2, 1.0), None);
        assert_eq!(best_floor(&[0.9, 0.9, 0.9], 3, 1.0), None);
    }
}
