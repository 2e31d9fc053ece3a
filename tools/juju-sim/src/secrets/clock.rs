//! The simulator's wall clock (seconds since the Unix epoch) and the time formats Juju prints.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

/// RFC 3339 in UTC, as Go marshals a `time.Time` (`2025-01-01T06:06:06Z`).
pub fn rfc3339(secs: i64) -> String {
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// `goal-state`'s `since`: `YYYY-MM-DD hh:mm:ssZ` in UTC.
pub fn goal_state_time(secs: i64) -> String {
    let fmt = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]Z");
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_default()
}

/// `--expire`: RFC 3339, `2006-01-02T15:04:05` (UTC), or a positive Go duration from `now`.
/// The error is the exact Juju message (a usage error).
pub fn parse_expire(spec: &str, now: i64) -> Result<i64, String> {
    if let Ok(t) = OffsetDateTime::parse(spec, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let no_tz = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    if let Ok(t) = time::PrimitiveDateTime::parse(spec, &no_tz) {
        return Ok(t.assume_utc().unix_timestamp());
    }
    let secs = parse_go_duration(spec)
        .ok_or_else(|| format!("expire time or duration {spec:?} not valid"))?;
    if secs <= 0.0 {
        return Err(format!("negative expire duration {spec:?} not valid"));
    }
    Ok(now + secs.ceil() as i64)
}

/// Go's `time.ParseDuration` (units ns, us, µs, ms, s, m, h; signed; fractions), in seconds.
pub fn parse_go_duration(s: &str) -> Option<f64> {
    let (sign, mut rest) = match s.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0.0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += num * scale;
    }
    Some(sign * total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rfc3339(1_735_711_566), "2025-01-01T06:06:06Z");
        assert_eq!(goal_state_time(1_740_823_205), "2025-03-01 10:00:05Z");
    }

    #[test]
    fn expire_forms() {
        assert_eq!(parse_expire("2025-01-01T06:06:06Z", 0), Ok(1_735_711_566));
        assert_eq!(parse_expire("2025-01-01T06:06:06", 0), Ok(1_735_711_566));
        assert_eq!(parse_expire("24h", 100), Ok(100 + 86_400));
        assert_eq!(parse_expire("1h30m", 0), Ok(5400));
        assert_eq!(
            parse_expire("-1h", 0),
            Err("negative expire duration \"-1h\" not valid".into())
        );
        assert_eq!(
            parse_expire("soon", 0),
            Err("expire time or duration \"soon\" not valid".into())
        );
    }
}
