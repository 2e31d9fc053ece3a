//! `hostlist::compress` groups names by prefix with a hash map instead of sorting every name
//! (10,000 names: one prefix, 10,000 integers to sort). Its output must stay byte-identical:
//! slurm.conf's `NodeName=` lines, partitions' `Nodes=` and the applied record are written with
//! it. The oracle below is the sort-based implementation it replaced, kept verbatim.

use proptest::prelude::*;
use slurm_charms::slurm::hostlist::compress;

fn old_compress<S: AsRef<str>>(names: &[S]) -> String {
    if let [only] = names {
        return only.as_ref().to_string();
    }
    // (prefix, Some((value, digits))) for names ending in a number, (name, None) otherwise.
    let mut items: Vec<(&str, Option<(u64, usize)>)> = names
        .iter()
        .map(|n| {
            let n = n.as_ref();
            let (prefix, digits) = split_number(n);
            match digits.parse::<u64>() {
                Ok(v) if !digits.is_empty() && digits.len() <= 18 => {
                    (prefix, Some((v, digits.len())))
                }
                _ => (n, None),
            }
        })
        .collect();
    items.sort_unstable();
    items.dedup();
    let mut out = String::with_capacity(16 * names.len().min(64));
    let mut groups: Vec<(u64, usize, Vec<u64>)> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let prefix = items[i].0;
        let mut j = i;
        while j < items.len() && items[j].0 == prefix {
            j += 1;
        }
        let chunk = &items[i..j];
        i = j;
        // Widths fixed by zero padding under this prefix.
        let mut padded: Vec<usize> = Vec::new();
        for (_, num) in chunk {
            if let Some((v, len)) = num {
                if *len > 1 && digits_of(*v) < *len && !padded.contains(len) {
                    padded.push(*len);
                }
            }
        }
        groups.clear();
        for (_, num) in chunk {
            let Some((v, len)) = *num else {
                push_sep(&mut out);
                out.push_str(prefix);
                continue;
            };
            let width = if padded.contains(&len) { len } else { 0 };
            match groups.iter_mut().find(|g| g.1 == width) {
                Some(g) => g.2.push(v),
                None => groups.push((v, width, vec![v])),
            }
        }
        for g in &mut groups {
            g.2.sort_unstable();
            g.2.dedup();
            g.0 = g.2[0];
        }
        groups.sort_unstable_by_key(|g| (g.0, g.1));
        for (_, width, values) in &groups {
            push_sep(&mut out);
            out.push_str(prefix);
            if let [v] = values.as_slice() {
                push_num(&mut out, *v, *width);
            } else {
                out.push('[');
                push_runs(&mut out, values, *width, "-");
                out.push(']');
            }
        }
    }
    out
}

fn split_number(name: &str) -> (&str, &str) {
    let cut = name
        .bytes()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |p| p + 1);
    (&name[..cut], &name[cut..])
}

fn push_sep(out: &mut String) {
    if !out.is_empty() {
        out.push(',');
    }
}

fn digits_of(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

fn push_num(out: &mut String, mut v: u64, width: usize) {
    let mut buf = [b'0'; 40];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let start = buf.len().saturating_sub(width.min(buf.len())).min(i);
    for &b in &buf[start..] {
        out.push(char::from(b));
    }
}

fn push_runs(out: &mut String, values: &[u64], width: usize, sep: &str) {
    let mut i = 0;
    let mut first = true;
    while i < values.len() {
        let lo = values[i];
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        if !first {
            out.push(',');
        }
        first = false;
        push_num(out, lo, width);
        if j > i {
            out.push_str(sep);
            push_num(out, values[j], width);
        }
        i = j + 1;
    }
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-c]{0,2}[-_.]?", 0u64..40, 0usize..4, "(-[a-z]{1,2})?")
            .prop_map(|(prefix, n, pad, suffix)| format!("{prefix}{n:0pad$}{suffix}")),
        "[a-c0-9]{1,4}",
        Just(String::new()),
        (0u64..u64::MAX).prop_map(|n| format!("n{n}")),
    ]
}

proptest! {
    #[test]
    fn compress_writes_what_the_sorting_version_wrote(
        names in prop::collection::vec(name(), 0..80)
    ) {
        prop_assert_eq!(compress(&names), old_compress(&names));
    }
}
