//! "Did you mean": the known word nearest to a misspelt one, for error messages.

/// The known key closest to `key` (Jaro-Winkler similarity ≥ 0.8), for "did you mean".
pub fn closest<'a>(keys: impl IntoIterator<Item = &'a str>, key: &str) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    keys.into_iter()
        .map(|k| (strsim::jaro_winkler(&k.to_ascii_lowercase(), &lower), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}
