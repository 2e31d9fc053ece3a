//! Slurm hostlists: `gpu-[001-128],login1`, `rack[0-1]_blade[0-3]`, `/dev/nvidia[0-3,5]`.
//!
//! Rules (Slurm `hostlist.c`): a comma splits names outside brackets; a bracket holds a comma
//! list of numbers or `lo-hi` ranges; the number of digits of `lo` (leading zeros included) is
//! the minimum width of every number of that range; several bracket groups expand as a product.
//! [`compress`] writes only one bracket group, for the numeric run at the end of a name.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::error::HostlistError;

/// Most names one expression may expand to (guards memory against hostile input).
pub const MAX_EXPANDED: usize = 1 << 20;

fn syntax(list: &str, reason: &str) -> HostlistError {
    HostlistError::Syntax {
        list: list.to_string(),
        reason: reason.to_string(),
    }
}

/// One piece of a hostlist item: literal text or a bracket of `(lo, hi, width)` ranges.
enum Piece<'a> {
    Text(&'a str),
    Ranges(Vec<(u64, u64, usize)>),
}

fn parse_ranges(list: &str, body: &str) -> Result<Vec<(u64, u64, usize)>, HostlistError> {
    let mut out = Vec::new();
    for part in body.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (part, part),
        };
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !digits(hi) {
            return Err(syntax(
                list,
                "a bracket holds numbers or lo-hi ranges separated by ','",
            ));
        }
        let (l, h): (u64, u64) = match (lo.parse(), hi.parse()) {
            (Ok(l), Ok(h)) => (l, h),
            _ => return Err(syntax(list, "number out of range")),
        };
        if l > h {
            return Err(syntax(list, "range start is greater than its end"));
        }
        out.push((l, h, lo.len()));
    }
    Ok(out)
}

fn split_pieces<'a>(list: &str, item: &'a str) -> Result<Vec<Piece<'a>>, HostlistError> {
    let mut pieces = Vec::new();
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        if rest[..open].contains(']') {
            return Err(syntax(list, "']' without '['"));
        }
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let close = after
            .find(']')
            .ok_or_else(|| syntax(list, "'[' without ']'"))?;
        let body = &after[..close];
        if body.contains('[') {
            return Err(syntax(list, "nested '['"));
        }
        pieces.push(Piece::Ranges(parse_ranges(list, body)?));
        rest = &after[close + 1..];
    }
    if rest.contains(']') {
        return Err(syntax(list, "']' without '['"));
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// Splits at commas outside brackets.
fn split_items(list: &str) -> Result<Vec<&str>, HostlistError> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, b) in list.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    Ok(items)
}

/// The items of a hostlist expression, each split into its pieces, with how many names each
/// item expands to; every rule [`expand`] enforces is checked here, so [`count`] checks an
/// expression without making its names.
fn parse_items(list: &str) -> Result<Vec<(Vec<Piece<'_>>, u64)>, HostlistError> {
    let mut out = Vec::new();
    if list.is_empty() {
        return Ok(out);
    }
    if list
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(syntax(
            list,
            "blanks and control characters are not allowed",
        ));
    }
    let too_large = || HostlistError::TooLarge {
        list: list.to_string(),
        limit: MAX_EXPANDED,
    };
    let mut total: u64 = 0;
    for item in split_items(list)? {
        if item.is_empty() {
            return Err(syntax(list, "empty name between commas"));
        }
        let pieces = split_pieces(list, item)?;
        let mut names: u64 = 1;
        for piece in &pieces {
            if let Piece::Ranges(ranges) = piece {
                let mut width: u64 = 0;
                for &(l, h, _) in ranges {
                    width = width.saturating_add(h - l + 1);
                }
                names = names.saturating_mul(width);
                if names.saturating_add(total) > MAX_EXPANDED as u64 {
                    return Err(too_large());
                }
            }
        }
        total = total.saturating_add(names);
        if total > MAX_EXPANDED as u64 {
            return Err(too_large());
        }
        out.push((pieces, names));
    }
    Ok(out)
}

/// How many names a hostlist expression expands to (duplicates counted), checked by every
/// rule of [`expand`] without making the names: what reading a stored hostlist costs when
/// its names are needed only later, if at all.
pub fn count(list: &str) -> Result<usize, HostlistError> {
    let items = parse_items(list)?;
    // at most MAX_EXPANDED: `parse_items` refuses more
    Ok(items.iter().map(|(_, n)| *n as usize).sum())
}

/// A name as (the text before its trailing number, how many digits that number has, its
/// value); a name without a trailing number is (itself, 0, 0). Two names are equal exactly
/// when their keys are, so sets of names can be compared without making them.
pub type NumberedName<'a> = (&'a str, usize, u64);

/// The [`NumberedName`] of a written name; `None` when its trailing number has more than 18
/// digits.
pub fn numbered_name(name: &str) -> Option<NumberedName<'_>> {
    let (prefix, digits) = split_number(name);
    if digits.is_empty() {
        return Some((name, 0, 0));
    }
    Some((prefix, digits.len(), parse_digits(digits)?))
}

/// An item of a hostlist in the form [`compress`] writes: one name, or a prefix (not ending
/// in a digit) and one bracket of ranges.
enum Compressed<'p, 'a> {
    Name(&'a str),
    Run(&'a str, &'p [(u64, u64, usize)]),
}

/// The item's form, when it is one [`compress`] writes.
fn compressed<'p, 'a>(pieces: &'p [Piece<'a>]) -> Option<Compressed<'p, 'a>> {
    match pieces {
        [Piece::Text(name)] => Some(Compressed::Name(name)),
        [Piece::Ranges(r)] => Some(Compressed::Run("", r)),
        [Piece::Text(p), Piece::Ranges(r)] if !p.ends_with(|c: char| c.is_ascii_digit()) => {
            Some(Compressed::Run(p, r))
        }
        _ => None,
    }
}

/// How many digits `value` is written with in a range of width `width` (at least its own).
fn written_digits(value: u64, width: usize) -> usize {
    width.max(value.checked_ilog10().map_or(1, |d| d as usize + 1))
}

/// The names of `list` as [`NumberedName`]s, without making them, when each item is one
/// name or a prefix (not ending in a digit) and one bracket: the form [`compress`] writes.
/// `Ok(None)` for any other expression (then [`expand`] it).
pub fn numbered_names(list: &str) -> Result<Option<Vec<NumberedName<'_>>>, HostlistError> {
    let items = parse_items(list)?;
    let mut out = Vec::with_capacity(items.iter().map(|(_, n)| *n as usize).sum());
    for (pieces, _) in &items {
        match compressed(pieces) {
            Some(Compressed::Name(name)) => match numbered_name(name) {
                Some(key) => out.push(key),
                None => return Ok(None),
            },
            Some(Compressed::Run(prefix, ranges)) => {
                for &(l, h, width) in ranges {
                    out.extend((l..=h).map(|v| (prefix, written_digits(v, width), v)));
                }
            }
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// Whether `list` expands to `name`, told without making its names when each item is of the
/// form [`compress`] writes: the name's prefix and number are looked up in the ranges. Any
/// other expression is expanded. What a hook that resumes one node of 10,000 asks of the
/// applied record.
pub fn contains(list: &str, name: &str) -> Result<bool, HostlistError> {
    // `None` (a number of more than 18 digits): no range writes it
    let key = numbered_name(name);
    for (pieces, _) in parse_items(list)? {
        let found = match compressed(&pieces) {
            Some(Compressed::Name(n)) => n == name,
            Some(Compressed::Run(prefix, ranges)) => key.is_some_and(|(p, digits, value)| {
                p == prefix
                    && digits > 0
                    && ranges.iter().any(|&(l, h, width)| {
                        (l..=h).contains(&value) && written_digits(value, width) == digits
                    })
            }),
            None => return Ok(expand(list)?.iter().any(|n| n == name)),
        };
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The name a [`NumberedName`] stands for.
pub fn numbered_to_string((prefix, digits, value): NumberedName<'_>) -> String {
    let mut name = String::with_capacity(prefix.len() + digits);
    name.push_str(prefix);
    if digits > 0 {
        push_num(&mut name, value, digits);
    }
    name
}

/// Expands a hostlist expression into names, in written order (duplicates kept).
/// The empty string expands to no names.
pub fn expand(list: &str) -> Result<Vec<String>, HostlistError> {
    let items = parse_items(list)?;
    let mut out: Vec<String> = Vec::with_capacity(items.iter().map(|(_, n)| *n as usize).sum());
    for (pieces, _) in &items {
        let mut names = vec![String::new()];
        for piece in pieces {
            match piece {
                Piece::Text(t) => names.iter_mut().for_each(|n| n.push_str(t)),
                Piece::Ranges(ranges) => {
                    let mut next = Vec::new();
                    for n in &names {
                        for &(l, h, w) in ranges {
                            for v in l..=h {
                                let mut name = String::with_capacity(n.len() + w.max(4));
                                name.push_str(n);
                                push_num(&mut name, v, w);
                                next.push(name);
                            }
                        }
                    }
                    names = next;
                }
            }
        }
        out.extend(names);
    }
    Ok(out)
}

/// Splits a name into (prefix, trailing digits); digits are empty when there are none.
fn split_number(name: &str) -> (&str, &str) {
    let cut = name
        .bytes()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |p| p + 1);
    (&name[..cut], &name[cut..])
}

/// The sort key behind [`natural_cmp`]: (prefix, significant digit count, value of the
/// significant digits when they fit in a u64, significant digits, digit count, name).
/// Precompute it to sort many names.
pub fn natural_key(name: &str) -> (&str, usize, u64, &str, usize, &str) {
    let (prefix, digits) = split_number(name);
    let significant = digits.trim_start_matches('0');
    let value = parse_digits(significant).unwrap_or(0);
    (
        prefix,
        significant.len(),
        value,
        significant,
        digits.len(),
        name,
    )
}

/// A name whose natural order under its prefix is (digit class, digits): the prefix, the class
/// (0 for the number `0`, else the digit count) and the digits, for trailing digits that are
/// `0` or 1 to 18 digits without a leading zero. `None` otherwise (the full [`natural_key`]
/// decides). Comparing these costs no key: `u/2` < `u/10` by class, `u/10` < `u/11` by digits.
fn plain_key(name: &str) -> Option<(&str, usize, &str)> {
    let (prefix, digits) = split_number(name);
    match digits.as_bytes() {
        b"0" => Some((prefix, 0, digits)),
        [first, ..] if *first != b'0' && digits.len() <= 18 => Some((prefix, digits.len(), digits)),
        _ => None,
    }
}

/// `a` ≤ `b` in natural order ([`natural_cmp`]). Two names that first differ inside a
/// trailing number (one prefix, then digits to the end) are compared from the bytes where
/// they differ, without building their keys: by the digits when both have as many (`n09`,
/// `n10`), else by digit count when neither has a leading zero (`gpu-9`, `gpu-10`; `0` counts as
/// none); any other
/// pair by [`natural_key`].
fn natural_le(a: &str, b: &str) -> bool {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let common = x
        .iter()
        .zip(y)
        .position(|(p, q)| p != q)
        .unwrap_or(x.len().min(y.len()));
    // where the digit run that the first difference falls in starts (the prefix is equal)
    let start = x[..common]
        .iter()
        .rposition(|c| !c.is_ascii_digit())
        .map_or(0, |p| p + 1);
    let digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
    let plain = |d: &[u8]| d == b"0" || (matches!(d.first(), Some(b'1'..=b'9')) && d.len() <= 18);
    let (dx, dy) = (&x[start..], &y[start..]);
    if digits(dx) && digits(dy) {
        if dx.len() == dy.len() {
            // as many digits, zero-padded or not: their bytes order them as their values
            return dx <= dy;
        }
        if plain(dx) && plain(dy) {
            return dx.len() < dy.len();
        }
    }
    natural_key(a) <= natural_key(b)
}

/// The first of `names` in natural order (the first of equals), compared with [`natural_le`].
pub(crate) fn natural_first<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .reduce(|first, n| if natural_le(first, n) { first } else { n })
}

/// Sorts `items` by the natural order ([`natural_cmp`]) of the name each has, exactly as a
/// stable sort by [`natural_key`] would. Names already in order cost a comparison each
/// (`natural_le`). A relation's units come in string order (`u/0`, `u/1`, `u/10`, `u/100`,
/// …): when every name is a plain number under one prefix (`plain_key`), a stable counting
/// sort by digit class puts them in order, checked by one more pass. Otherwise names are put
/// in classes (prefix, significant digit count) by a counting sort; only a class whose names
/// are out of order is sorted, by value first.
pub fn sort_naturally<'a, T>(items: &mut [T], name: impl Fn(&T) -> &'a str) {
    let in_order = |items: &[T]| {
        items
            .windows(2)
            .all(|w| natural_le(name(&w[0]), name(&w[1])))
    };
    if in_order(items) {
        // the usual case for node names taken in unit order: nothing to move
        return;
    }
    if sort_by_digit_class(items, &name) {
        return;
    }
    let keys: Vec<_> = items.iter().map(|i| natural_key(name(i))).collect();
    // The classes, in key order (runs of one class first, so the sort sees few).
    let mut classes: Vec<(&str, usize)> = keys.iter().map(|k| (k.0, k.1)).collect();
    classes.dedup();
    classes.sort_unstable();
    classes.dedup();
    let class_of: Vec<u32> = keys
        .iter()
        .map(|k| classes.binary_search(&(k.0, k.1)).unwrap_or(0) as u32)
        .collect();
    // Counting sort by class: stable, so each class keeps the items' order.
    let mut start = vec![0usize; classes.len() + 1];
    for &c in &class_of {
        start[c as usize + 1] += 1;
    }
    for c in 1..start.len() {
        start[c] += start[c - 1];
    }
    let mut next = start.clone();
    let mut perm = vec![0usize; items.len()];
    for (i, &c) in class_of.iter().enumerate() {
        perm[next[c as usize]] = i;
        next[c as usize] += 1;
    }
    // Within a class prefix and digit count are equal: the value decides, else the whole key,
    // else the original place (the sort is stable).
    let within = |a: &usize, b: &usize| {
        keys[*a]
            .2
            .cmp(&keys[*b].2)
            .then_with(|| keys[*a].cmp(&keys[*b]))
    };
    for w in start.windows(2) {
        let class = &mut perm[w[0]..w[1]];
        if !class.is_sorted_by(|a, b| within(a, b).is_le()) {
            class.sort_by(within);
        }
    }
    permute(items, perm);
}

/// When every name is a plain number under one prefix (`plain_key`) and the names of each
/// digit class come in ascending order (as in string order), moves the items into digit-class
/// order by a stable counting sort and returns true: they are then in natural order. Returns
/// false, moving nothing, otherwise.
fn sort_by_digit_class<'a, T>(items: &mut [T], name: &impl Fn(&T) -> &'a str) -> bool {
    const CLASSES: usize = 19;
    let Some((prefix, _, _)) = items.first().and_then(|i| plain_key(name(i))) else {
        return false;
    };
    let mut class_of = Vec::with_capacity(items.len());
    // the last digits seen in each class: one prefix and one digit count, so the digits'
    // bytes order them
    let mut last: [&str; CLASSES] = [""; CLASSES];
    for item in items.iter() {
        match plain_key(name(item)) {
            Some((p, class, digits)) if p == prefix && last[class] <= digits => {
                last[class] = digits;
                class_of.push(class as u8);
            }
            _ => return false,
        }
    }
    let mut start = [0usize; CLASSES + 1];
    for &c in &class_of {
        start[usize::from(c) + 1] += 1;
    }
    for c in 1..start.len() {
        start[c] += start[c - 1];
    }
    let mut perm = vec![0usize; items.len()];
    for (i, &c) in class_of.iter().enumerate() {
        perm[start[usize::from(c)]] = i;
        start[usize::from(c)] += 1;
    }
    permute(items, perm);
    true
}

/// Moves the items in place along the cycles of `perm`: item `perm[i]` goes to `i`.
fn permute<T>(items: &mut [T], mut perm: Vec<usize>) {
    for start in 0..perm.len() {
        let mut at = start;
        while perm[at] != start {
            let from = perm[at];
            items.swap(at, from);
            perm[at] = at;
            at = from;
        }
        perm[at] = at;
    }
}

/// Natural order of names: prefix, then the trailing number by value, then the text.
/// `gpu-2` < `gpu-10`; `n9` < `n10`. Used for every sorted list the renderer writes.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    natural_key(a).cmp(&natural_key(b))
}

/// Under one prefix: whether the bare prefix is itself a name, and the numbers that follow it
/// (value, digit count).
type Numbered = (bool, Vec<(u64, usize)>);

/// Compresses names into Slurm's hostlist form, sorted and without duplicates:
/// `["gpu-002", "gpu-001", "gpu-003", "cpu"]` → `cpu,gpu-[001-003]`. A zero-padded number
/// keeps its width (`n09`,`n10` → `n[09-10]`, but `n9`,`n10` → `n[9-10]`); `expand` of the
/// result gives the same set of names.
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    if let [only] = names {
        return only.as_ref().to_string();
    }
    compress_ascending(names).unwrap_or_else(|| compress_any(names))
}

/// [`compress`] of `names` and the index of their first name in natural order (`0` for no
/// names). Names of one prefix with strictly increasing numbers (the controller's sorted node
/// groups) are in natural order already: their first is the first given, and the list is read
/// once, not twice.
pub fn compress_with_first(names: &[&str]) -> (usize, String) {
    if let Some(hostlist) = compress_ascending(names) {
        return (0, hostlist);
    }
    let first = natural_first(names.iter().copied())
        .and_then(|f| names.iter().position(|n| std::ptr::eq(*n, f)))
        .unwrap_or(0);
    (first, compress(names))
}

/// [`compress`] of any names (two or more).
fn compress_any<S: AsRef<str>>(names: &[S]) -> String {
    // Names by prefix: whether the bare prefix is itself a name, and the numbers that follow it
    // (value, digits). Each name costs one hash of its prefix; only the distinct prefixes and
    // each prefix's numbers are sorted (10,000 `gpu-N`: one prefix, 10,000 integers).
    let mut by_prefix: HashMap<&str, Numbered> = HashMap::default();
    // Names of one prefix mostly come in a run (`gpu-1`, `gpu-2`, …): their numbers are
    // gathered here and handed to the map once per run, not hashed in one by one.
    let mut run: (&str, Vec<(u64, usize)>) = ("", Vec::new());
    for n in names {
        let n = n.as_ref();
        let (prefix, digits) = split_number(n);
        match parse_digits(digits) {
            Some(v) => {
                if prefix != run.0 {
                    hand_over(&mut by_prefix, &mut run);
                    run.0 = prefix;
                }
                run.1.push((v, digits.len()));
            }
            None => by_prefix.entry(n).or_default().0 = true,
        }
    }
    hand_over(&mut by_prefix, &mut run);
    let mut chunks: Vec<(&str, Numbered)> = by_prefix.into_iter().collect();
    chunks.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut out = String::with_capacity(16 * names.len().min(64));
    let mut groups: Vec<(u64, usize, Vec<u64>)> = Vec::new();
    for (prefix, (bare, numbers)) in chunks {
        // Widths fixed by zero padding under this prefix.
        let mut padded: Vec<usize> = Vec::new();
        for &(v, len) in &numbers {
            // zero padded: fewer significant digits than written (`v < 10^(len-1)`)
            if len > 1 && v < 10u64.pow((len - 1) as u32) && !padded.contains(&len) {
                padded.push(len);
            }
        }
        if bare {
            push_sep(&mut out);
            out.push_str(prefix);
        }
        groups.clear();
        if padded.is_empty() {
            // no zero padding (the usual case): one group, collected at its exact size
            let values: Vec<u64> = numbers.iter().map(|&(v, _)| v).collect();
            if let Some(&first) = values.first() {
                groups.push((first, 0, values));
            }
        } else {
            for (v, len) in numbers {
                let width = if padded.contains(&len) { len } else { 0 };
                match groups.iter_mut().find(|g| g.1 == width) {
                    Some(g) => g.2.push(v),
                    None => groups.push((v, width, vec![v])),
                }
            }
        }
        for g in &mut groups {
            sort_unique(&mut g.2);
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
                push_runs(&mut out, values, *width);
                out.push(']');
            }
        }
    }
    out
}

/// Sorts `values` and removes repeats. Many values in a span not much wider than their number
/// (a node per number, as clusters name them) are placed in a bitmap of the span and read back
/// in order: one pass instead of a sort (10,000 names in byte order, `n-1`, `n-10`, `n-100`,
/// …, are far from sorted by number).
fn sort_unique(values: &mut Vec<u64>) {
    const DENSE_FROM: usize = 64;
    const SPAN_PER_VALUE: u64 = 16;
    let (Some(&min), Some(&max)) = (values.iter().min(), values.iter().max()) else {
        return;
    };
    let span = max - min;
    let n = values.len();
    if n < DENSE_FROM || span / SPAN_PER_VALUE > n as u64 {
        values.sort_unstable();
        values.dedup();
        return;
    }
    // span + 1 bits; span is at most 16 × n here, so this is no larger than the values
    let mut bits = vec![0u64; (span / 64 + 1) as usize];
    for &v in values.iter() {
        let off = v - min;
        bits[(off / 64) as usize] |= 1 << (off % 64);
    }
    values.clear();
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let bit = u64::from(word.trailing_zeros());
            values.push(min + w as u64 * 64 + bit);
            word &= word - 1;
        }
    }
}

/// [`compress`] of names that share one prefix and carry strictly increasing numbers without
/// zero padding (`gpu-1`, `gpu-2`, `gpu-7`): the controller's node groups come so (sorted
/// naturally), and 10,000 of them then cost one pass with no per-name work beyond reading the
/// number. `None` when the names are not so (the general path decides); never for fewer than
/// two names.
fn compress_ascending<S: AsRef<str>>(names: &[S]) -> Option<String> {
    let [first, _, ..] = names else {
        return None;
    };
    let (prefix, _) = split_number(first.as_ref());
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for name in names {
        // `prefix` ends with a non-digit (or is empty): a name that starts with it and goes on
        // with digits only splits into it and those digits
        let digits = name.as_ref().strip_prefix(prefix)?;
        let bytes = digits.as_bytes();
        if !bytes.iter().all(u8::is_ascii_digit) || (bytes.len() > 1 && bytes[0] == b'0') {
            return None;
        }
        let v = parse_digits(digits)?;
        match ranges.last_mut() {
            Some((_, hi)) if v == *hi + 1 => *hi = v,
            Some((_, hi)) if v <= *hi => return None,
            _ => ranges.push((v, v)),
        }
    }
    let mut out = String::with_capacity(prefix.len() + 2 + 12 * ranges.len());
    out.push_str(prefix);
    out.push('[');
    push_ranges(&mut out, ranges, 0);
    out.push(']');
    Some(out)
}

/// Moves a run's numbers to its prefix in `by_prefix` (the run's own vector when the prefix
/// has none yet), leaving the run empty.
fn hand_over<'a>(
    by_prefix: &mut HashMap<&'a str, Numbered>,
    run: &mut (&'a str, Vec<(u64, usize)>),
) {
    if run.1.is_empty() {
        return;
    }
    let done = std::mem::take(&mut run.1);
    let numbers = &mut by_prefix.entry(run.0).or_default().1;
    if numbers.is_empty() {
        *numbers = done;
    } else {
        numbers.extend(done);
    }
}

fn push_sep(out: &mut String) {
    if !out.is_empty() {
        out.push(',');
    }
}

/// The value of 1 to 18 ASCII digits (`None` for none or more: such a name is kept whole).
fn parse_digits(digits: &str) -> Option<u64> {
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    Some(
        digits
            .bytes()
            .fold(0u64, |v, b| v * 10 + u64::from(b - b'0')),
    )
}

/// Appends `v` in decimal, zero-padded to `width` digits, without going through `core::fmt`.
pub(crate) fn push_num(out: &mut String, mut v: u64, width: usize) {
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

/// Writes sorted, unique values as a range list: runs of consecutive values as `lo-hi`, the
/// others alone (`0-3,8`).
fn push_runs(out: &mut String, values: &[u64], width: usize) {
    let runs = values.chunk_by(|a, b| *b == a + 1).map(|run| {
        // chunks are never empty
        (run[0], run[run.len() - 1])
    });
    push_ranges(out, runs, width);
}

/// Writes inclusive `(lo, hi)` ranges as a range list without brackets, comma-separated, a
/// range of one value as the value alone (`0-3,8`), each number zero-padded to `width`: the
/// one range-list writer (hostlists, gres.conf `Cores=`).
pub(crate) fn push_ranges(
    out: &mut String,
    ranges: impl IntoIterator<Item = (u64, u64)>,
    width: usize,
) {
    for (i, (lo, hi)) in ranges.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_num(out, lo, width);
        if hi > lo {
            out.push('-');
            push_num(out, hi, width);
        }
    }
}

/// Parses a range list without brackets (`0-3,8-11`) into its `(lo, hi)` ranges, in written
/// order, without expanding them (a `Cores=` value is kept as ranges: see
/// [`crate::slurm::types::CoreList`]): numbers (at most 18 digits) and `lo-hi` ranges with
/// `lo <= hi`, separated by `,`, as inside a hostlist's brackets.
pub fn parse_runs(list: &str) -> Result<Vec<(u64, u64)>, HostlistError> {
    Ok(parse_ranges(list, list)?
        .into_iter()
        .map(|(l, h, _)| (l, h))
        .collect())
}

#[cfg(test)]
mod tests {

    #[test]
    fn sort_naturally_is_a_stable_sort_by_natural_key() {
        let names = [
            "n10",
            "n9",
            "a",
            "n09",
            "b2",
            "n10",
            "x00000000000000000000001",
            "x2",
            "",
            "n",
            "x00000000000000000000001",
        ];
        let mut want: Vec<(usize, &str)> = names.iter().copied().enumerate().collect();
        want.sort_by_cached_key(|&(_, n)| natural_key(n));
        let mut got: Vec<(usize, &str)> = names.iter().copied().enumerate().collect();
        sort_naturally(&mut got, |&(_, n)| n);
        assert_eq!(got, want);
    }

    /// `names` as given, and sorted naturally without repeats: the two orders a list of
    /// names reaches [`compress`] in.
    fn given_and_sorted(names: &[String]) -> [Vec<&str>; 2] {
        let given: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut sorted = given.clone();
        sorted.sort_by_cached_key(|n| natural_key(n));
        sorted.dedup();
        [given, sorted]
    }

    proptest::proptest! {
        /// The ascending fast path writes what the general path writes, for names in natural
        /// order (where it applies) and any others (where it must step aside).
        #[test]
        fn compress_ascending_agrees_with_the_general_path(
            names in proptest::collection::vec("(n|gpu-|x1-)?0{0,1}[0-9]{0,3}", 0..40),
        ) {
            for list in given_and_sorted(&names) {
                if list.len() < 2 {
                    continue;
                }
                proptest::prop_assert_eq!(compress(&list), compress_any(&list), "{:?}", list);
            }
        }

        /// The first name found with the hostlist is the first minimum of the natural key,
        /// and the hostlist is [`compress`]'s, sorted or not.
        #[test]
        fn compress_with_first_finds_the_first_name(
            names in proptest::collection::vec("(n|gpu-|x1-)?0{0,1}[0-9]{0,3}", 0..40),
        ) {
            for list in given_and_sorted(&names) {
                let (at, hostlist) = compress_with_first(&list);
                proptest::prop_assert_eq!(hostlist, compress(&list));
                let want = list
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, n)| natural_key(n))
                    .map_or(0, |(i, _)| i);
                proptest::prop_assert_eq!(at, want, "{:?}", list);
            }
        }

        /// Any names, and a relation's units in string order (the controller's case): the
        /// same order as a stable sort by the natural key.
        #[test]
        fn sort_naturally_agrees_with_a_stable_sort(
            names in proptest::collection::vec("(n|gpu-|x|u/)?0{0,2}[0-9]{0,4}", 0..60),
            units in 0usize..1200,
        ) {
            let mut want: Vec<(usize, &str)> = names.iter().map(String::as_str).enumerate().collect();
            want.sort_by_cached_key(|&(_, n)| natural_key(n));
            let mut got: Vec<(usize, &str)> = names.iter().map(String::as_str).enumerate().collect();
            sort_naturally(&mut got, |&(_, n)| n);
            proptest::prop_assert_eq!(got, want);
            let owned: Vec<String> = (0..units).map(|k| format!("compute/{k}")).collect();
            let mut units: Vec<&str> = owned.iter().map(String::as_str).collect();
            units.sort();
            let mut want = units.clone();
            want.sort_by_cached_key(|n| natural_key(n));
            sort_naturally(&mut units, |n| n);
            proptest::prop_assert_eq!(units, want);
        }
    }

    proptest::proptest! {
        /// The quick comparison agrees with the natural key on any pair of names.
        #[test]
        fn natural_le_agrees_with_the_key(
            a in "(n|gpu-|u/)?0{0,2}[0-9]{0,20}",
            b in "(n|gpu-|u/)?0{0,2}[0-9]{0,20}",
        ) {
            proptest::prop_assert_eq!(natural_le(&a, &b), natural_key(&a) <= natural_key(&b));
        }

        /// The first name found by quick comparisons is the first minimum of the key.
        #[test]
        fn natural_first_is_the_first_minimum(
            names in proptest::collection::vec("(n|gpu-)?0{0,2}[0-9]{0,4}", 0..30),
        ) {
            let want = names.iter().map(String::as_str).min_by_key(|n| natural_key(n));
            let got = natural_first(names.iter().map(String::as_str));
            proptest::prop_assert_eq!(got.map(|g| g.as_ptr()), want.map(|w| w.as_ptr()));
        }

        /// The bitmap path of `sort_unique` gives what a sort and dedup give.
        #[test]
        fn sort_unique_is_a_sort_and_dedup(
            values in proptest::collection::vec(0u64..3000, 0..400),
            base in proptest::prelude::prop_oneof![proptest::prelude::Just(0u64), proptest::prelude::Just(u64::MAX - 4000)],
        ) {
            let mut got: Vec<u64> = values.iter().map(|v| v + base).collect();
            let mut want = got.clone();
            want.sort_unstable();
            want.dedup();
            sort_unique(&mut got);
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn ascending_names_take_the_fast_path_and_others_do_not() {
        let names: Vec<String> = (0..10_000).map(|k| format!("gpu-{k}")).collect();
        assert_eq!(compress_ascending(&names).as_deref(), Some("gpu-[0-9999]"));
        assert_eq!(
            compress_ascending(&["n1", "n3", "n4"]).as_deref(),
            Some("n[1,3-4]")
        );
        for refused in [
            &["n2", "n1"][..],
            &["n1", "n1"],
            &["n1", "m2"],
            &["n01", "n02"],
            &["n1", "n"],
            &["n1", "n2x"],
            &["n1"],
        ] {
            assert_eq!(compress_ascending(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn numbered_names_stand_for_the_expanded_names() {
        for list in [
            "gpu-[0-9999]",
            "n[07-12],n3,n003,x",
            "a[1-3],b9,[5-6]",
            "rack1-[1-2]",
        ] {
            let keys = numbered_names(list).unwrap().unwrap();
            let made: Vec<String> = keys.iter().map(|&k| numbered_to_string(k)).collect();
            assert_eq!(made, expand(list).unwrap(), "{list}");
            for (name, key) in made.iter().zip(&keys) {
                assert_eq!(numbered_name(name), Some(*key), "{name}");
            }
        }
        // `n3` and `n003` are different names, `n[07]` and `n07` the same
        assert_ne!(numbered_name("n3"), numbered_name("n003"));
        assert_eq!(
            numbered_names("n[07]").unwrap().unwrap(),
            [numbered_name("n07").unwrap()]
        );
        // not compress's form: the names must be made
        for other in ["a1[0-3]", "r[1-2]x", "r[1-2]-[3-4]"] {
            assert_eq!(numbered_names(other).unwrap(), None, "{other}");
        }
        assert!(numbered_names("n[3-1]").is_err());
    }

    use super::*;

    #[test]
    fn contains_agrees_with_the_expanded_names() {
        let lists = [
            "gpu-[0-9999]",
            "n[07-12],n3,n003,x",
            "a[1-3],b9,[5-6]",
            "rack1-[1-2]",
            "a1[0-3],r[1-2]x,r[1-2]-[3-4]",
            "n[098-101]",
            "",
        ];
        let names = [
            "gpu-0",
            "gpu-9999",
            "gpu-10000",
            "gpu-00",
            "gpu-",
            "n07",
            "n7",
            "n12",
            "n13",
            "n3",
            "n003",
            "n03",
            "x",
            "a2",
            "b9",
            "5",
            "6",
            "05",
            "rack1-2",
            "rack1-02",
            "a12",
            "r1x",
            "r2-4",
            "n098",
            "n98",
            "n100",
            "n0100",
            "gpu-123456789012345678901",
        ];
        for list in lists {
            let all = expand(list).unwrap();
            for name in names {
                assert_eq!(
                    contains(list, name).unwrap(),
                    all.iter().any(|n| n == name),
                    "{list} {name}"
                );
            }
        }
        assert!(contains("n[3-1]", "n2").is_err());
    }

    #[test]
    fn expands_slurm_examples() {
        assert_eq!(expand("vm").unwrap(), ["vm"]);
        assert_eq!(expand("vm,vm[1-3]").unwrap(), ["vm", "vm1", "vm2", "vm3"]);
        assert_eq!(
            expand("node[01-03]").unwrap(),
            ["node01", "node02", "node03"]
        );
        assert_eq!(expand("n[9-11]").unwrap(), ["n9", "n10", "n11"]);
        assert_eq!(
            expand("rack[0-1]_blade[0-1]").unwrap(),
            [
                "rack0_blade0",
                "rack0_blade1",
                "rack1_blade0",
                "rack1_blade1"
            ]
        );
        assert_eq!(
            expand("/dev/nvidia[0,2-3]").unwrap(),
            ["/dev/nvidia0", "/dev/nvidia2", "/dev/nvidia3"]
        );
        assert_eq!(expand("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn expand_rejects_bad_syntax() {
        for bad in [
            "a,,b", "n[1-", "n1]", "n[3-1]", "n[a]", "n[]", "n[[1]]", "a b", "n[1-2", ",",
        ] {
            assert!(expand(bad).is_err(), "{bad:?}");
        }
        assert!(matches!(
            expand("n[0-99999999]"),
            Err(HostlistError::TooLarge { .. })
        ));
    }

    #[test]
    fn compresses() {
        let names: Vec<String> = (1..=128).map(|i| format!("gpu-{i:03}")).collect();
        assert_eq!(compress(&names), "gpu-[001-128]");
        assert_eq!(compress(&["n10", "n9", "n11"]), "n[9-11]");
        assert_eq!(compress(&["n09", "n10"]), "n[09-10]");
        assert_eq!(
            compress(&[
                "/dev/nvidia3",
                "/dev/nvidia0",
                "/dev/nvidia1",
                "/dev/nvidia2",
                "/dev/nvidia5"
            ]),
            "/dev/nvidia[0-3,5]"
        );
        assert_eq!(compress(&["/dev/nvidia0"]), "/dev/nvidia0");
        assert_eq!(compress(&["b", "a", "a", "c1"]), "a,b,c1");
        assert_eq!(compress::<&str>(&[]), "");
    }

    #[test]
    fn compress_keeps_widths_apart() {
        let names = ["n9", "n09", "n10"];
        let c = compress(&names);
        let mut back = expand(&c).unwrap();
        back.sort();
        let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(back, want, "{c}");
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["gpu-10", "gpu-2", "cpu", "gpu-1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["cpu", "gpu-1", "gpu-2", "gpu-10"]);
    }

    #[test]
    fn range_lists() {
        assert_eq!(parse_runs("8,0-3,2").unwrap(), [(8, 8), (0, 3), (2, 2)]);
        assert!(parse_runs("3-1").is_err());
        let mut out = String::new();
        push_ranges(&mut out, [(0, 3), (8, 8), (10, 11)], 0);
        assert_eq!(out, "0-3,8,10-11");
        out.clear();
        push_runs(&mut out, &[0, 1, 2, 3, 8, 10, 11], 2);
        assert_eq!(out, "00-03,08,10-11");
    }
}
