//! Slurm time limits (`MaxTime`, `DefaultTime`): the formats of Slurm's `time_str2secs`
//! (`src/common/parse_time.c`, identical in 22.05, 24.11 and 26.05).

use super::VocabError;

/// A time limit as Slurm's `time_str2mins` reads it: `UNLIMITED`, `INFINITE` or `-1`
/// (no limit), or `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S` with non-negative decimal
/// fields. Kept as written; [`SlurmDuration::minutes`] is what Slurm stores (rounded up).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SlurmDuration {
    text: String,
    minutes: Option<u32>,
}

impl SlurmDuration {
    /// Minutes Slurm stores (`None` for no limit).
    pub fn minutes(&self) -> Option<u32> {
        self.minutes
    }

    /// The value as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for SlurmDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Largest time limit accepted, in seconds: Slurm computes it in a C `int`.
const MAX_SECONDS: u64 = i32::MAX as u64;

impl TryFrom<&str> for SlurmDuration {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let bad = |why: &str| VocabError::new("time limit", value, why);
        const FORMATS: &str = "expected UNLIMITED, INFINITE, -1, minutes, MM:SS, HH:MM:SS, D-HH, \
                               D-HH:MM or D-HH:MM:SS (Slurm's parse_time.c)";
        if ["-1", "INFINITE", "UNLIMITED"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(value))
        {
            return Ok(Self {
                text: value.to_string(),
                minutes: None,
            });
        }
        let (days, rest) = match value.split_once('-') {
            Some((d, rest)) => (Some(d), rest),
            None => (None, value),
        };
        let field = |s: &str| -> Result<u64, VocabError> {
            if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(FORMATS));
            }
            s.parse::<u64>().map_err(|_| bad(FORMATS))
        };
        let parts: Vec<&str> = rest.split(':').collect();
        let seconds = match (days, parts.as_slice()) {
            (Some(d), [""]) => field(d)? * 86_400,
            (Some(d), [h]) => field(d)? * 86_400 + field(h)? * 3_600,
            (Some(d), [h, m]) => field(d)? * 86_400 + field(h)? * 3_600 + field(m)? * 60,
            (Some(d), [h, m, s]) => {
                field(d)? * 86_400 + field(h)? * 3_600 + field(m)? * 60 + field(s)?
            }
            (None, [m]) => field(m)? * 60,
            (None, [m, s]) => field(m)? * 60 + field(s)?,
            (None, [h, m, s]) => field(h)? * 3_600 + field(m)? * 60 + field(s)?,
            _ => return Err(bad(FORMATS)),
        };
        if seconds > MAX_SECONDS {
            return Err(bad(
                "longer than Slurm's limit (2147483647 seconds, about 68 years)",
            ));
        }
        Ok(Self {
            text: value.to_string(),
            minutes: Some(seconds.div_ceil(60) as u32),
        })
    }
}

parsed_newtype!(SlurmDuration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_formats() {
        for (text, minutes) in [
            ("60", Some(60)),
            ("1:30", Some(2)),
            ("01:00:00", Some(60)),
            ("2-0", Some(2880)),
            ("1-", Some(1440)),
            ("1-2:3", Some(1563)),
            ("1-02:03:04", Some(1564)),
            ("UNLIMITED", None),
            ("infinite", None),
            ("-1", None),
            ("0", Some(0)),
        ] {
            let d = SlurmDuration::try_from(text).unwrap();
            assert_eq!(d.minutes(), minutes, "{text}");
            assert_eq!(d.to_string(), text);
        }
        for bad in [
            "1hour",
            "-5",
            "",
            "1:2:3:4",
            "1-2-3",
            ":",
            "1::",
            "-",
            "abc",
            "1.5",
            "+5",
            " 5",
            "99999999999",
            "1-2:3:4:5",
            "25000-0",
        ] {
            assert!(SlurmDuration::try_from(bad).is_err(), "{bad:?}");
        }
    }
}
