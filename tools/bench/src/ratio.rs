//! A ratio of two medians with a bootstrap interval (`hook-bench`'s scaling note).

use crate::stats::{Stat, nearest_rank};
use serde::Serialize;

/// A ratio of two medians (`num` over `den`, e.g. the controller's changed hook at 10,000
/// units over the same hook at 10) with how far this machine's spread could move it: a
/// percentile bootstrap, each of `resamples` rounds drawing as many samples as each row has,
/// with replacement, and taking the ratio of the drawn medians. Why: issue 13 sets a target on
/// that ratio (≤ 2), and two runs a minute apart put it on either side of the line; the
/// interval says whether one run decides it. Seeded, so a run's report can be reproduced from
/// its samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioInterval {
    /// median(num) / median(den).
    pub ratio: f64,
    /// 5th percentile of the resampled ratios.
    pub p5: f64,
    /// 95th percentile of the resampled ratios.
    pub p95: f64,
}

impl RatioInterval {
    /// The ratio and its 90 % interval; `None` when either side has no samples or a zero
    /// median.
    pub fn of(num: &[f64], den: &[f64], resamples: usize, seed: u64) -> Option<Self> {
        let ratio = Stat::of(num).median / Stat::of(den).median;
        if num.is_empty() || den.is_empty() || !ratio.is_finite() {
            return None;
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut draw = |v: &[f64]| {
            let drawn: Vec<f64> = (0..v.len()).map(|_| v[rng.usize(..v.len())]).collect();
            Stat::of(&drawn).median
        };
        let mut ratios: Vec<f64> = (0..resamples.max(1))
            .map(|_| draw(num) / draw(den))
            .filter(|r| r.is_finite())
            .collect();
        ratios.sort_by(f64::total_cmp);
        (!ratios.is_empty()).then(|| RatioInterval {
            ratio,
            p5: nearest_rank(&ratios, 0.05),
            p95: nearest_rank(&ratios, 0.95),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_of_steady_samples_has_no_spread() {
        let r = RatioInterval::of(&[20.0; 7], &[10.0; 9], 500, 1).unwrap();
        assert_eq!((r.ratio, r.p5, r.p95), (2.0, 2.0, 2.0));
        assert_eq!(RatioInterval::of(&[], &[1.0], 10, 1), None);
        assert_eq!(RatioInterval::of(&[1.0], &[0.0], 10, 1), None);
    }

    #[test]
    fn a_spread_widens_the_interval_around_the_ratio() {
        // medians 20 and 10; the spread of each row moves the resampled ratio both ways
        let num = [14.0, 17.0, 19.0, 20.0, 21.0, 23.0, 26.0];
        let den = [8.0, 9.0, 9.5, 10.0, 10.5, 11.0, 12.0];
        let r = RatioInterval::of(&num, &den, 2000, 7).unwrap();
        assert_eq!(r.ratio, 2.0);
        assert!(r.p5 < 2.0 && 2.0 < r.p95, "{r:?}");
        // never wider than the extremes allow
        assert!(r.p5 >= 14.0 / 12.0 && r.p95 <= 26.0 / 8.0, "{r:?}");
        // the same seed, the same interval
        assert_eq!(RatioInterval::of(&num, &den, 2000, 7), Some(r));
    }
}
