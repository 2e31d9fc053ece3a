//! Slurm range lists (`0-3,5,7-8`).

/// Sorts and de-duplicates `ids`, then writes them as Slurm ranges: `[0,1,3]` → `"0-1,3"`.
/// Empty input gives an empty string.
pub fn compress_ranges(ids: &[u32]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut iter = sorted.into_iter().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while let Some(&next) = iter.peek()
            && Some(next) == end.checked_add(1)
        {
            end = next;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::compress_ranges;

    #[test]
    fn compresses() {
        assert_eq!(compress_ranges(&[]), "");
        assert_eq!(compress_ranges(&[3]), "3");
        assert_eq!(compress_ranges(&[1, 0]), "0-1");
        assert_eq!(compress_ranges(&[0, 1, 3, 5, 6, 7, 7]), "0-1,3,5-7");
        assert_eq!(
            compress_ranges(&[u32::MAX, u32::MAX - 1]),
            "4294967294-4294967295"
        );
    }
}
