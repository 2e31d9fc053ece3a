//! Slurm's booleans and enumerated settings, spelled as Slurm's parsers accept them
//! (`parse_value.c` `s_p_handle_boolean`, `read_config.c` `_parse_partitionname`,
//! `slurm_protocol_defs.c` `preempt_mode_num`; the same in 22.05, 24.11 and 26.05).

use super::VocabError;

fn one_of(value: &str, words: &[&str]) -> bool {
    words.iter().any(|w| w.eq_ignore_ascii_case(value))
}

/// `S_P_BOOLEAN`: `YES`/`NO` (Slurm also reads `UP`/`DOWN`, `TRUE`/`FALSE`, `1`/`0`).
pub fn parse_bool(value: &str) -> Result<bool, VocabError> {
    if one_of(value, &["YES", "UP", "TRUE", "1"]) {
        Ok(true)
    } else if one_of(value, &["NO", "DOWN", "FALSE", "0"]) {
        Ok(false)
    } else {
        Err(VocabError::new(
            "Slurm boolean",
            value,
            "expected YES or NO (also TRUE/FALSE, UP/DOWN, 1/0)",
        ))
    }
}

/// A decimal number after a `YES:` / `FORCE:` prefix (Slurm uses `strtol`, which silently
/// reads junk as 0: refused here).
fn small_number(s: &str) -> Option<u64> {
    (!s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Partition `OverSubscribe` (and its old name `Shared`): `NO`, `EXCLUSIVE`, `YES`,
/// `YES:<n>` with n ≥ 2, `FORCE`, `FORCE:<n>` with n ≥ 1 (n ≤ 65535).
pub fn check_oversubscribe(value: &str) -> Result<(), VocabError> {
    let upper = value.to_ascii_uppercase();
    let ok = match upper.split_once(':') {
        None => one_of(value, &["NO", "EXCLUSIVE", "YES", "FORCE"]),
        Some(("YES", n)) => small_number(n).is_some_and(|n| (2..=65535).contains(&n)),
        Some(("FORCE", n)) => small_number(n).is_some_and(|n| (1..=65535).contains(&n)),
        Some(_) => false,
    };
    ok.then_some(()).ok_or_else(|| {
        VocabError::new(
            "OverSubscribe",
            value,
            "expected NO, EXCLUSIVE, YES, YES:<2..65535>, FORCE or FORCE:<1..65535>",
        )
    })
}

/// Where a `PreemptMode` is set: the global key or a partition's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PreemptScope {
    /// slurm.conf's global `PreemptMode`.
    Cluster,
    /// A partition's `PreemptMode`.
    Partition,
}

/// `PreemptMode` (`slurm_protocol_defs.c` `preempt_mode_num`): a comma list with exactly one
/// of `OFF`/`CLUSTER`, `CANCEL`, `REQUEUE`, `SUSPEND`/`ON`, optionally with `GANG` or `WITHIN`
/// (not both). Globally, `SUSPEND` needs `GANG` (`read_config.c`: "PreemptMode=SUSPEND
/// requires GANG too", fatal). In a partition `GANG` is refused: 24.11 and 26.05 ignore it
/// ("cluster-wide option ... ignored") and then ignore the whole invalid value, where 22.05
/// stops.
pub fn check_preempt_mode(value: &str, scope: PreemptScope) -> Result<(), VocabError> {
    let (mut modes, mut gang, mut within, mut suspend, mut ok) =
        (0, false, false, false, !value.is_empty());
    for tok in value.split(',') {
        if one_of(tok, &["GANG"]) {
            gang = true;
        } else if one_of(tok, &["WITHIN"]) {
            within = true;
        } else if one_of(tok, &["SUSPEND", "ON"]) {
            suspend = true;
            modes += 1;
        } else if one_of(tok, &["OFF", "CLUSTER", "CANCEL", "REQUEUE"]) {
            modes += 1;
        } else {
            ok = false;
        }
    }
    let bad = |why: &str| Err(VocabError::new("PreemptMode", value, why));
    if !(ok && modes <= 1 && !(gang && within) && (modes == 1 || gang)) {
        return bad(
            "expected one of OFF, CANCEL, REQUEUE, SUSPEND, optionally with ,GANG or ,WITHIN",
        );
    }
    match scope {
        PreemptScope::Cluster if suspend && !gang => {
            bad("SUSPEND requires GANG too (SUSPEND,GANG)")
        }
        PreemptScope::Partition if gang => {
            bad("GANG is a cluster-wide option; a partition takes OFF, CANCEL, REQUEUE or SUSPEND")
        }
        _ => Ok(()),
    }
}

/// Partition `SelectTypeParameters`: `CR_Core`, `CR_Core_Memory`, `CR_Socket` or
/// `CR_Socket_Memory` (Slurm matches prefixes; only the exact words are accepted here).
pub fn check_partition_cr_type(value: &str) -> Result<(), VocabError> {
    one_of(
        value,
        &["CR_Core", "CR_Core_Memory", "CR_Socket", "CR_Socket_Memory"],
    )
    .then_some(())
    .ok_or_else(|| {
        VocabError::new(
            "partition SelectTypeParameters",
            value,
            "expected CR_Core, CR_Core_Memory, CR_Socket or CR_Socket_Memory",
        )
    })
}

/// Partition `OverTimeLimit`: `UNLIMITED`/`INFINITE` or minutes 0..=65534 (Slurm's `strtol`
/// reads junk as 0 and larger numbers as unlimited: both refused here).
pub fn check_over_time_limit(value: &str) -> Result<(), VocabError> {
    if one_of(value, &["UNLIMITED", "INFINITE"]) || small_number(value).is_some_and(|n| n <= 65534)
    {
        return Ok(());
    }
    Err(VocabError::new(
        "OverTimeLimit",
        value,
        "expected minutes 0..=65534, UNLIMITED or INFINITE",
    ))
}

/// Partition `SuspendTime`: `INFINITE`, `-1` or seconds 0..=4294967293 (Slurm's
/// `slurm_atoul` reads junk as 0: refused here).
pub fn check_suspend_time(value: &str) -> Result<(), VocabError> {
    if one_of(value, &["INFINITE", "-1"]) {
        return Ok(());
    }
    super::SlurmInt::parse(value, super::IntWidth::U32, false)
        .map(|_| ())
        .map_err(|e| {
            VocabError::new(
                "SuspendTime",
                value,
                format!("{}; or INFINITE, -1", e.reason),
            )
        })
}

/// Partition `QOS`, `DenyQos`, `AllowQos`: QOS exist only in a slurmdbd accounting database,
/// which the charms do not deploy; without one Slurm 26.05 stops on any QOS name ("Partition
/// p has an invalid qos", "We have no QOS on the system"). Only `AllowQos=ALL` is accepted.
pub fn check_qos(key: &'static str, value: &str) -> Result<(), VocabError> {
    if key.eq_ignore_ascii_case("AllowQos") && value.eq_ignore_ascii_case("ALL") {
        return Ok(());
    }
    Err(VocabError::new(
        key,
        value,
        "QOS need slurmdbd accounting, which this deployment has not (Slurm 26.05 stops on an unknown QOS); only AllowQos=ALL is accepted",
    ))
}

/// Partition `TRESBillingWeights`: a comma list of `<TRES>=<weight>`, the TRES a name such as
/// `CPU`, `Mem`, `GRES/gpu` or `GRES/gpu:tesla`, the weight a decimal number with an optional
/// `K`, `M`, `G`, `T` or `P` (`slurm_protocol_api.c` 26.05 l.303: Slurm stops on
/// "invalid TRES weight entry").
pub fn check_tres_weights(value: &str) -> Result<(), VocabError> {
    check_weights(value, None).then_some(()).ok_or_else(|| {
        VocabError::new(
            "TRESBillingWeights",
            value,
            "expected <TRES>=<weight>[,...] such as CPU=1.0,Mem=0.25G,GRES/gpu=2.0",
        )
    })
}

/// The TRES Slurm configures whatever `AccountingStorageTRES` says
/// (`DEFAULT_ACCOUNTING_TRES`, the same in 22.05, 24.11 and 26.05).
pub const DEFAULT_TRES: [&str; 8] = [
    "CPU", "Mem", "Energy", "Node", "Billing", "FS/Disk", "VMem", "Pages",
];

/// `PriorityWeightTRES`: like [`check_tres_weights`], the TRES among [`DEFAULT_TRES`] (any
/// case). 24.11 and 26.05 stop on a TRES that is not configured ("TRES weight 'GRES:gpu' is
/// not a configured TRES type", fatal), and a GRES is a TRES only when
/// `AccountingStorageTRES` lists it.
pub fn check_priority_tres_weights(value: &str) -> Result<(), VocabError> {
    check_weights(value, Some(&DEFAULT_TRES)).then_some(()).ok_or_else(|| {
        VocabError::new(
            "PriorityWeightTRES",
            value,
            format!(
                "expected <TRES>=<weight>[,...] with TRES among {} (e.g. CPU=1000,Mem=2000); a GRES weight needs AccountingStorageTRES to list it",
                DEFAULT_TRES.join(", ")
            ),
        )
    })
}

/// `<TRES>=<weight>[,...]`, the TRES among `names` (any case) when given.
fn check_weights(value: &str, names: Option<&[&str]>) -> bool {
    let entry_ok = |entry: &str| {
        let Some((name, weight)) = entry.split_once('=') else {
            return false;
        };
        let name_ok = match names {
            Some(names) => names.iter().any(|n| n.eq_ignore_ascii_case(name)),
            None => {
                !name.is_empty()
                    && name.as_bytes()[0].is_ascii_alphabetic()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"/_:-.".contains(&b))
            }
        };
        let number = weight.trim_end_matches(['K', 'M', 'G', 'T', 'P', 'k', 'm', 'g', 't', 'p']);
        let number_ok = weight.len() - number.len() <= 1
            && !number.is_empty()
            && number.len() <= 20
            && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && number.bytes().filter(|b| *b == b'.').count() <= 1
            && number.bytes().any(|b| b.is_ascii_digit());
        name_ok && number_ok
    };
    !value.is_empty() && value.split(',').all(entry_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_as_slurm_spells_them() {
        assert!(parse_bool("yes").unwrap() && !parse_bool("NO").unwrap());
        assert!(parse_bool("maybe").is_err());
        for ok in ["NO", "exclusive", "YES:4", "FORCE", "FORCE:1"] {
            check_oversubscribe(ok).unwrap();
        }
        for bad in ["YES:1", "FORCE:0", "YES:", "sometimes", "YES:x"] {
            assert!(check_oversubscribe(bad).is_err(), "{bad}");
        }
        let cluster = PreemptScope::Cluster;
        for ok in ["OFF", "REQUEUE", "SUSPEND,GANG", "cancel,within", "GANG"] {
            check_preempt_mode(ok, cluster).unwrap();
        }
        for bad in [
            "",
            "GANG,WITHIN",
            "CANCEL,REQUEUE",
            "kill",
            "OFF,",
            "SUSPEND",
        ] {
            assert!(check_preempt_mode(bad, cluster).is_err(), "{bad}");
        }
        let part = PreemptScope::Partition;
        assert!(check_preempt_mode("SUSPEND", part).is_ok());
        assert!(check_preempt_mode("SUSPEND,GANG", part).is_err());
        assert!(check_partition_cr_type("CR_Core_Memory").is_ok());
        assert!(check_partition_cr_type("CR_CPU").is_err());
        assert!(check_over_time_limit("abc").is_err() && check_over_time_limit("10").is_ok());
        assert!(check_suspend_time("-1").is_ok() && check_suspend_time("-2").is_err());
        assert!(check_qos("AllowQos", "all").is_ok() && check_qos("QOS", "normal").is_err());
        check_tres_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0").unwrap();
        for bad in ["junk", "CPU=", "=1", "CPU=1..0", "CPU=1.0,", "CPU=x"] {
            assert!(check_tres_weights(bad).is_err(), "{bad}");
        }
    }
}
