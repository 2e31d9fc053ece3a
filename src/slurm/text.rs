//! Appending slurm.conf and gres.conf text: quoted text, ` key=value` pairs, lists and numbers,
//! written into the output string without temporary strings or `core::fmt`. Shared by the
//! renderer and the node line writer ([`super::node_lines`]).

/// Writes free text quoted, escaping `\` and `#` the way Slurm's lexer unescapes them.
pub(super) fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '\\' || c == '#' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// ` <key>=<value>`.
pub(super) fn push_kv(out: &mut String, key: &str, value: &str) {
    out.push(' ');
    out.push_str(key);
    out.push('=');
    out.push_str(value);
}

/// ` <key>=a,b,c` for a non-empty list, nothing for an empty one (no joined copy).
pub(super) fn push_list<'a>(out: &mut String, key: &str, items: impl IntoIterator<Item = &'a str>) {
    for (i, item) in items.into_iter().enumerate() {
        if i == 0 {
            out.push(' ');
            out.push_str(key);
            out.push('=');
        } else {
            out.push(',');
        }
        out.push_str(item);
    }
}

/// Appends a decimal number without going through `core::fmt`.
pub(super) fn push_u64(out: &mut String, v: u64) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// ` <key>=<number>`.
pub(super) fn push_num(out: &mut String, key: &str, value: u64) {
    out.push(' ');
    out.push_str(key);
    out.push('=');
    push_u64(out, value);
}
