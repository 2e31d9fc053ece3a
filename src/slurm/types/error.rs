//! The one error every vocabulary type returns.

/// Longest excerpt of a refused value quoted in a message (a hostile 1 MiB value must not
/// become a 1 MiB log line).
pub const MAX_SHOWN: usize = 80;

/// Why a value was refused: which kind of value, the value (escaped, abbreviated) and the rule
/// it breaks, worded for an operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {shown}: {reason}")]
pub struct VocabError {
    /// The kind of value (`NodeName`, `GRES type`, ...).
    pub what: &'static str,
    /// The value as shown: Rust-escaped (one line), cut at [`MAX_SHOWN`] characters.
    pub shown: String,
    /// The rule it breaks.
    pub reason: String,
}

impl VocabError {
    /// A refusal of `value` as a `what` because of `reason`.
    pub fn new(what: &'static str, value: &str, reason: impl Into<String>) -> Self {
        Self {
            what,
            shown: shown(value),
            reason: reason.into(),
        }
    }
}

/// `value` escaped onto one line and abbreviated to [`MAX_SHOWN`] characters.
pub fn shown(value: &str) -> String {
    if value.chars().count() <= MAX_SHOWN {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(MAX_SHOWN).collect();
    format!("{head:?}… ({} bytes)", value.len())
}
