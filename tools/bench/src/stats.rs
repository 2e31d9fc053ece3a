//! Medians and spreads.

use serde::Serialize;

/// Summary of samples (milliseconds or any unit).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Stat {
    /// Median.
    pub median: f64,
    /// 10th percentile (nearest rank).
    pub p10: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Number of samples.
    pub n: usize,
}

impl Stat {
    /// Summarises `v` (empty: all zero).
    pub fn of(v: &[f64]) -> Stat {
        if v.is_empty() {
            return Stat::default();
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let rank = |p: f64| nearest_rank(&s, p);
        let median = if s.len() % 2 == 1 {
            s[s.len() / 2]
        } else {
            (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
        };
        Stat {
            median,
            p10: rank(0.10),
            p90: rank(0.90),
            min: s[0],
            max: s[s.len() - 1],
            n: s.len(),
        }
    }

    /// `median (p10–p90)`, or `median (min–max)` under 5 samples.
    pub fn show(&self, decimals: usize) -> String {
        if self.n == 0 {
            return "–".into();
        }
        let (lo, hi) = if self.n < 5 {
            (self.min, self.max)
        } else {
            (self.p10, self.p90)
        };
        format!("{:.d$} ({:.d$}–{:.d$})", self.median, lo, hi, d = decimals)
    }
}

/// The `p` percentile (0 to 1) of sorted, non-empty `s` by nearest rank.
pub fn nearest_rank(s: &[f64], p: f64) -> f64 {
    let i = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
    s[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles() {
        let s = Stat::of(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        assert_eq!(s.p10, 1.0);
        assert_eq!(s.p90, 5.0);
        assert_eq!(Stat::of(&[1.0, 2.0]).median, 1.5);
        assert_eq!(Stat::of(&[]).n, 0);
    }
}
