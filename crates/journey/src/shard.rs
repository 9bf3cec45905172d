//! One shard of a run split over several generators (`--shard i/N`). The
//! split is by index, deterministic, and leaves the whole run's schedule
//! intact: the run's users, arrivals and data rows are numbered as in one
//! run, and shard `i` takes those whose number is `i` modulo `N` (k6's
//! execution segments split the same way, in contiguous slices). Together
//! the shards start the same users at the same moments, and send the same
//! arrivals, as one run would.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Shard `index` of `count`, numbered from 0 (as Slurm and Kubernetes
/// number their tasks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

impl Shard {
    /// The whole run, unsplit.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };
    /// The most shards a run splits into.
    pub const MOST: u32 = 10_000;

    /// A shard, when `index` is below `count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 {
            return Err("a run splits into at least 1 shard".into());
        }
        if count > Shard::MOST {
            return Err(format!(
                "{count} shards: a run splits into at most {} shards",
                Shard::MOST
            ));
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist: shards are numbered 0 to {} (as Slurm's \
                 SLURM_PROCID and Kubernetes' JOB_COMPLETION_INDEX)",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// `2/8`: shard 2 of 8.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("'{text}' is not a shard: write INDEX/COUNT, e.g. 0/4"))?;
        let number = |part: &str, what: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{text}': the {what} '{part}' is not a whole number"))
        };
        Shard::new(number(index, "index")?, number(count, "count")?)
    }

    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// How many of `total` things numbered from 0 are this shard's.
    pub fn share(&self, total: u64) -> u64 {
        let count = u64::from(self.count);
        total / count + u64::from(u64::from(self.index) < total % count)
    }

    /// The whole run's number of this shard's `local`-th thing.
    pub fn global(&self, local: u64) -> u64 {
        local * u64::from(self.count) + u64::from(self.index)
    }

    /// Whether the whole run's `n`-th thing is this shard's.
    pub fn owns(&self, n: u64) -> bool {
        n % u64::from(self.count) == u64::from(self.index)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_partition_the_whole() {
        for count in 1..=7u32 {
            for total in [0u64, 1, 5, 6, 7, 100, 1001] {
                let mut seen = vec![0u32; total as usize];
                let mut sum = 0;
                for index in 0..count {
                    let shard = Shard::new(index, count).unwrap();
                    let mine = shard.share(total);
                    sum += mine;
                    for local in 0..mine {
                        let g = shard.global(local);
                        assert!(shard.owns(g));
                        seen[g as usize] += 1;
                    }
                }
                assert_eq!(sum, total);
                assert!(seen.iter().all(|n| *n == 1), "{count} {total}");
            }
        }
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Shard::parse("2/8").unwrap(), Shard { index: 2, count: 8 });
        assert!(Shard::parse("8/8").unwrap_err().contains("numbered 0 to 7"));
        assert!(Shard::parse("1/0").unwrap_err().contains("at least 1"));
        assert!(Shard::parse("a/2").unwrap_err().contains("'a'"));
        assert!(Shard::parse("3").unwrap_err().contains("INDEX/COUNT"));
        assert_eq!(Shard::parse("0/4").unwrap().to_string(), "0/4");
    }
}
