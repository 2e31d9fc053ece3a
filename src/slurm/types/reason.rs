//! Free-text reasons (`Reason="New node."`).

use super::error::VocabError;

/// Longest reason accepted (Slurm reads lines into a 64 KiB buffer; a reason is a sentence).
pub const MAX_REASON_LEN: usize = 4096;

/// A node's `Reason=` (on a `NodeName` or `DownNodes` line): free text the renderer writes
/// quoted, escaping `\` and `#` as Slurm's lexer unescapes them. 1 to [`MAX_REASON_LEN`]
/// bytes without control characters (a newline would end the line), double quotes (they would
/// end the quoted value) or leading and trailing blanks (Slurm's lexer drops them).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reason(String);

fn check_reason(value: &str) -> Result<(), VocabError> {
    let bad = |reason: &str| Err(VocabError::new("Reason", value, reason));
    if value.is_empty() {
        return bad("must not be empty");
    }
    if value.len() > MAX_REASON_LEN {
        return bad("longer than 4096 bytes");
    }
    if value.chars().any(char::is_control) {
        return bad("control characters (newline, tab, ...) are not allowed");
    }
    if value.contains('"') {
        return bad("double quotes are not allowed");
    }
    if value.trim() != value {
        return bad("leading or trailing blanks are not allowed");
    }
    Ok(())
}

string_newtype!(Reason, check_reason);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_one_quoted_line() {
        for ok in ["New node.", "maintenance # ticket 12", "a\\b", "é"] {
            Reason::try_from(ok).unwrap();
        }
        let long = "x".repeat(MAX_REASON_LEN + 1);
        for no in [
            "",
            "a\nb",
            "a\tb",
            "say \"hi\"",
            " lead",
            "trail ",
            long.as_str(),
        ] {
            let e = Reason::try_from(no).unwrap_err().to_string();
            assert!(e.contains("Reason"), "{no:?}: {e}");
        }
    }
}
