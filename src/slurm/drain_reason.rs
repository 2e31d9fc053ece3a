//! Drain reasons Slurm itself sets when a node registers with fewer GRES than slurm.conf
//! gives it, recognised by their exact text so that the charms lift only drains they know they
//! may lift. An operator's drain is never one of these, even when its reason mentions `gres`,
//! `GPU` or a GRES count somewhere in the middle ("PSU swap in progress (ticket 4711)").
//!
//! The texts, as Slurm writes them (`xstrfmtcat(*reason_down, ...)`, the same in 22.05's
//! `src/common/gres.c` and in `src/interfaces/gres.c` of 23.02 and later; slurmctld's
//! `validate_node_specs` in `src/slurmctld/node_mgr.c` passes the text to `drain_nodes` or
//! `set_node_reason` unchanged), where `<gres>` is `gres_ctx->gres_type`, i.e. `gres/<name>`
//! (`xstrdup_printf("gres/%s", gres_name)` in `_add_gres_context`):
//!
//! * `"%s count reported lower than configured (%"PRIu64" < %"PRIu64")"` with `<gres>`
//!   (`_node_config_validate`: slurmd reports fewer than the node's `Gres=` count);
//! * `"%s count too low (%"PRIu64" < %"PRIu64")"` with `<gres>`
//!   (`_node_config_validate`: fewer found than configured);
//! * `"%s:%s count too low (%"PRIu64" < %"PRIu64")"` with `<gres>` and the GRES type
//!   (`_valid_gres_type` and `_valid_gres_types`: fewer of one type than configured).
//!
//! Read from SchedMD/slurm at `slurm-22-05-11-1` (`src/common/gres.c`) and at 284c3b95f0
//! (`src/interfaces/gres.c`, where the file lives since 23.02).
//!
//! Slurm joins several registration problems into one reason with `", "` (e.g. with
//! `Low RealMemory (...)`); such a reason is not one of these and is left alone: the other
//! problem would not be cured by what cures a GRES count.

/// True when `reason` is exactly one of Slurm's own GRES-count-mismatch drain reasons (module
/// doc), e.g. `gres/gpu count reported lower than configured (0 < 4)` or
/// `gres/gpu:tesla_t4 count too low (0 < 2)`. Anything else, an operator's reason included,
/// is false.
pub fn is_gres_mismatch(reason: &str) -> bool {
    let Some(rest) = reason.strip_prefix("gres/") else {
        return false;
    };
    let Some((gres, counts)) = rest.split_once(' ') else {
        return false;
    };
    let counts = if let Some(c) = counts.strip_prefix("count reported lower than configured ") {
        // Only the untyped form is written with this text.
        if !is_gres_name(gres) {
            return false;
        }
        c
    } else if let Some(c) = counts.strip_prefix("count too low ") {
        let typed_ok = match gres.split_once(':') {
            Some((name, ty)) => is_gres_name(name) && is_gres_type(ty),
            None => is_gres_name(gres),
        };
        if !typed_ok {
            return false;
        }
        c
    } else {
        return false;
    };
    is_counts(counts)
}

/// A GRES name as Slurm's gres.conf accepts it: letters, digits and `_`.
fn is_gres_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A GRES type: one word without the characters that separate a reason's parts.
fn is_gres_type(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !matches!(c, ':' | ',' | '(' | ')'))
}

/// `(<u64> < <u64>)`, the whole rest of the reason.
fn is_counts(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')) else {
        return false;
    };
    let Some((a, b)) = inner.split_once(" < ") else {
        return false;
    };
    is_u64(a) && is_u64(b)
}

fn is_u64(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<u64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurms_own_reasons_are_recognised() {
        for r in [
            "gres/gpu count reported lower than configured (0 < 4)",
            "gres/shard count reported lower than configured (0 < 4)",
            "gres/mps count reported lower than configured (0 < 100)",
            "gres/gpu count too low (1 < 2)",
            "gres/gpu:tesla_t4 count too low (0 < 2)",
            "gres/gpu:nvidia_a100_1g.10gb count too low (3 < 7)",
        ] {
            assert!(is_gres_mismatch(r), "{r}");
        }
    }

    #[test]
    fn operators_reasons_are_not() {
        for r in [
            "PSU swap in progress (ticket 4711)",
            "progress",
            "GRES",
            "gres",
            "GPU 3 reseated",
            "slurmd-charm: gpu 1 (x): uncorrectable ECC errors",
            "waiting for slurmd-charm fix",
            "disk replacement",
            // Slurm's text inside an operator's reason is the operator's reason.
            "maint: gres/gpu count reported lower than configured (0 < 4)",
            "gres/gpu count reported lower than configured (0 < 4) - leave drained",
            "Gres/gpu count too low (0 < 2)",
            // Joined with another registration problem: not cured by a GRES fix.
            "gres/gpu count too low (0 < 2), Low RealMemory (reported:1 < 100.00% of configured:2)",
            "gres/gpu:tesla_t4 count reported lower than configured (0 < 2)",
            "gres/gpu count too low (0 < )",
            "gres/gpu count too low (a < 2)",
            "gres/gpu count too low (0 <  2)",
            "gres/ count too low (0 < 2)",
            "gres/gpu: count too low (0 < 2)",
            "",
        ] {
            assert!(!is_gres_mismatch(r), "{r}");
        }
    }
}
