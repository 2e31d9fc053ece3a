//! Validators for the values that travel over the relation and end up in slurm.conf or
//! gres.conf. Each returns the reason a value is refused, worded for an operator.
//!
//! The rule of thumb (ARCHITECTURE.md §4): where Slurm expects a token, a value with whitespace,
//! a newline or other control character, `#`, `=`, quotes or a backslash is refused, because any
//! of them could end the token and smuggle in another directive.

/// Most characters a single value may have (a generous bound; real values are far shorter).
pub const MAX_TOKEN_LEN: usize = 1024;

/// Most device files one `File=` range may expand to (no node has more GPUs than this).
pub const MAX_DEVICE_FILES: usize = 1024;

/// Shows a value in a message with control characters escaped, so a log line stays one line.
pub fn shown(value: &str) -> String {
    format!("{value:?}")
}

/// A plain token: non-empty, printable ASCII, none of `# = " ' \` and no backquote.
pub fn check_token(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("is empty".into());
    }
    if value.len() > MAX_TOKEN_LEN {
        return Err(format!("is longer than {MAX_TOKEN_LEN} characters"));
    }
    for c in value.chars() {
        let bad = match c {
            c if c.is_whitespace() => Some("whitespace"),
            c if c.is_control() => Some("a control character"),
            c if !c.is_ascii() => Some("a non-ASCII character"),
            '#' => Some("'#' (starts a comment in Slurm's files)"),
            '=' => Some("'=' (would start another key)"),
            '"' | '\'' | '`' => Some("a quote"),
            '\\' => Some("a backslash"),
            _ => None,
        };
        if let Some(what) = bad {
            return Err(format!("{} contains {what}", shown(value)));
        }
    }
    Ok(())
}

/// A decimal number (digits only, fits in u64).
pub fn check_number(value: &str) -> Result<u64, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{} is not a whole number", shown(value)));
    }
    value
        .parse::<u64>()
        .map_err(|_| format!("{} is too large", shown(value)))
}

/// A Slurm node name as `slurmd -C` prints it (a short hostname): letters, digits, `-` and `_`,
/// starting with a letter or digit, at most 63 characters; not the reserved `ALL`/`DEFAULT`.
pub fn check_node_name(value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > 63 {
        return Err(format!(
            "{} is not a host name (1 to 63 characters)",
            shown(value)
        ));
    }
    let ok_chars = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let ok_start = value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if !ok_chars || !ok_start {
        return Err(format!(
            "{} is not a host name (letters, digits, '-' and '_' only)",
            shown(value)
        ));
    }
    if value.eq_ignore_ascii_case("ALL") || value.eq_ignore_ascii_case("DEFAULT") {
        return Err(format!("{} is reserved by Slurm", shown(value)));
    }
    Ok(())
}

/// A host name that may be fully qualified (labels of [`check_node_name`] joined by dots).
pub fn check_host(value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > 253 {
        return Err(format!("{} is not a host name", shown(value)));
    }
    for label in value.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && label
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric());
        if !ok {
            return Err(format!("{} is not a host name", shown(value)));
        }
    }
    Ok(())
}

/// A GRES type as NVML naming produces it (`tesla_t4`, `nvidia_a100-sxm4-80gb`,
/// `nvidia_a100_1g.5gb`): lower-case ASCII letters, digits, `_`, `-`, `.` and `+`.
pub fn check_gres_type(value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > 128 {
        return Err(format!("GPU type {} is empty or too long", shown(value)));
    }
    let ok = value.chars().all(|c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | '+')
    });
    if !ok {
        return Err(format!(
            "GPU type {} has characters NVML naming never produces (allowed: a-z 0-9 _ - . +)",
            shown(value)
        ));
    }
    Ok(())
}

/// Parses a list like `0-3,5` into numbers; `max` bounds how many it may expand to.
pub fn expand_ranges(value: &str, max: usize) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    if value.is_empty() {
        return Err("empty range list".into());
    }
    for part in value.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (check_number(a)?, check_number(b)?),
            None => {
                let n = check_number(part)?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(format!("range {} runs backwards", shown(part)));
        }
        let len = usize::try_from(hi - lo)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        if out.len().saturating_add(len) > max {
            return Err(format!("{} expands to more than {max} items", shown(value)));
        }
        out.extend(lo..=hi);
    }
    Ok(out)
}

/// A gres.conf `File=` value for NVIDIA GPUs: `/dev/nvidiaN`, `/dev/nvidia[0-1,3]`, or a comma
/// list of such paths. Returns the device files it names (for counting).
pub fn check_device_files(value: &str) -> Result<Vec<String>, String> {
    check_token(value)?;
    let mut files = Vec::new();
    // Split on commas outside brackets.
    let mut depth = 0i32;
    let mut start = 0usize;
    let mut parts = Vec::new();
    for (i, c) in value.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    for part in parts {
        let Some(rest) = part.strip_prefix("/dev/nvidia") else {
            return Err(format!("device file {} is not /dev/nvidia<N>", shown(part)));
        };
        if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            for n in expand_ranges(inner, MAX_DEVICE_FILES)? {
                files.push(format!("/dev/nvidia{n}"));
            }
        } else {
            check_number(rest)
                .map_err(|_| format!("device file {} is not /dev/nvidia<N>", shown(part)))?;
            files.push(part.to_string());
        }
        if files.len() > MAX_DEVICE_FILES {
            return Err(format!("{} names too many device files", shown(value)));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        if !seen.insert(f) {
            return Err(format!("device file {f} is listed twice"));
        }
    }
    Ok(files)
}

/// A gres.conf `MultipleFiles=` value (one MIG instance): at least two comma-separated paths,
/// each `/dev/nvidiaN` or `/dev/nvidia-caps/nvidia-capN`.
pub fn check_multiple_files(value: &str) -> Result<(), String> {
    check_token(value)?;
    let parts: Vec<&str> = value.split(',').collect();
    if parts.len() < 2 {
        return Err(format!(
            "MultipleFiles {} must name at least two files",
            shown(value)
        ));
    }
    for part in parts {
        let num = part
            .strip_prefix("/dev/nvidia-caps/nvidia-cap")
            .or_else(|| part.strip_prefix("/dev/nvidia"));
        match num {
            Some(n) if check_number(n).is_ok() => {}
            _ => {
                return Err(format!(
                    "MultipleFiles entry {} is not /dev/nvidiaN or /dev/nvidia-caps/nvidia-capN",
                    shown(part)
                ));
            }
        }
    }
    Ok(())
}

/// A gres.conf `Cores=` value: core ids and ranges, `0-3,8`.
pub fn check_cores(value: &str) -> Result<(), String> {
    check_token(value)?;
    expand_ranges(value, 1 << 16).map(|_| ())
}

/// A gres.conf `Links=` value: comma-separated integers, exactly one `-1`.
pub fn check_links(value: &str) -> Result<(), String> {
    check_token(value)?;
    let mut selves = 0;
    for part in value.split(',') {
        if part == "-1" {
            selves += 1;
        } else {
            check_number(part)
                .map_err(|_| format!("Links {} is not a list of integers", shown(value)))?;
        }
    }
    if selves != 1 {
        return Err(format!(
            "Links {} must contain exactly one -1",
            shown(value)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_refuse_injection() {
        assert!(check_token("tesla_t4").is_ok());
        for bad in ["", "a b", "a\nb", "a#b", "a=b", "a\"b", "a\\b", "é", "a\tb"] {
            assert!(check_token(bad).is_err(), "{bad:?} accepted");
        }
        let msg = check_token("t4\nSlurmctldProlog=/tmp/x").unwrap_err();
        assert!(msg.contains("\\n"), "{msg}");
    }

    #[test]
    fn numbers_and_names() {
        assert_eq!(check_number("42"), Ok(42));
        assert!(check_number("-1").is_err());
        assert!(check_number("4 2").is_err());
        assert!(check_number("99999999999999999999999").is_err());
        assert!(check_node_name("juju-abc-1").is_ok());
        assert!(check_node_name("-x").is_err());
        assert!(check_node_name("node[1-2]").is_err());
        assert!(check_node_name("all").is_err());
        assert!(check_host("ctl.example.com").is_ok());
        assert!(check_host("ctl..x").is_err());
    }

    #[test]
    fn gres_types() {
        for ok in ["tesla_t4", "nvidia_a100-sxm4-80gb", "nvidia_a100_1g.5gb"] {
            assert!(check_gres_type(ok).is_ok(), "{ok}");
        }
        for bad in ["Tesla_T4", "t4:1", "t4,x", "t4\nSlurmctldProlog=/tmp/x", ""] {
            assert!(check_gres_type(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn device_files() {
        assert_eq!(check_device_files("/dev/nvidia0").unwrap().len(), 1);
        assert_eq!(check_device_files("/dev/nvidia[0-1,3]").unwrap().len(), 3);
        assert_eq!(
            check_device_files("/dev/nvidia2,/dev/nvidia3").unwrap(),
            vec!["/dev/nvidia2", "/dev/nvidia3"]
        );
        for bad in [
            "/dev/sda",
            "/dev/nvidia[0-99999999]",
            "/dev/nvidia[3-1]",
            "/dev/nvidia0,/dev/nvidia0",
            "/dev/nvidiactl",
            "/dev/nvidia0 /dev/nvidia1",
        ] {
            assert!(check_device_files(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mig_cores_links() {
        assert!(
            check_multiple_files(
                "/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22"
            )
            .is_ok()
        );
        assert!(check_multiple_files("/dev/nvidia0").is_err());
        assert!(check_multiple_files("/dev/nvidia0,/etc/passwd").is_err());
        assert!(check_cores("0-3,8").is_ok());
        assert!(check_cores("0-3 8").is_err());
        assert!(check_links("-1,2,0").is_ok());
        assert!(check_links("2,0").is_err());
        assert!(check_links("-1,-1").is_err());
    }
}
