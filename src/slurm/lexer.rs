//! Slurm's lexical rules (`src/common/parse_config.c`): comments, continuation, escapes,
//! `Include` and `Key=Value` pairs.
//!
//! Per physical line: everything from a `#` preceded by an even number of `\` is a comment;
//! a line ending (trailing blanks allowed) in an odd number of `\` is joined with the next one,
//! the last `\` and what follows it removed. On the joined line every `\x` becomes `x`. A pair
//! is `key[op]=value` with blanks allowed around `=`, key `[A-Za-z0-9_.]+`, value either
//! `"quoted text"` (quotes removed) or a run of non-blank characters.

use std::borrow::Cow;

/// One logical line: comment-free, continuations joined, escapes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogicalLine<'a> {
    /// 1-based number of its first physical line.
    pub line: usize,
    /// The text (borrowed from the input when nothing had to change).
    pub text: Cow<'a, str>,
}

/// Cuts a physical line at its first unescaped `#`.
fn strip_comment(line: &str) -> &str {
    let mut backslashes = 0usize;
    for (i, b) in line.bytes().enumerate() {
        match b {
            b'#' if backslashes & 1 == 0 => return &line[..i],
            b'\\' => backslashes += 1,
            _ => backslashes = 0,
        }
    }
    line
}

/// If the line is continued, returns the text to keep (without the last `\`).
fn continued(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut bs = 0;
    while end > bs && bytes[end - 1 - bs] == b'\\' {
        bs += 1;
    }
    (bs & 1 == 1).then(|| &line[..end - 1])
}

/// Removes escapes: `\x` → `x` (so `\\` → `\`, `\#` → `#`); a lone trailing `\` is dropped.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits text into logical lines; blank lines are dropped.
pub fn logical_lines(text: &str) -> Vec<LogicalLine<'_>> {
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut start = 0;
    let mut joining = false;
    for (i, raw) in text.split('\n').enumerate() {
        if !joining {
            start = i + 1;
            buf.clear();
        }
        let line = strip_comment(raw);
        match continued(line) {
            Some(keep) => {
                buf.push_str(keep);
                joining = true;
            }
            None if !joining => push_line(&mut out, start, Cow::Borrowed(line)),
            None => {
                buf.push_str(line);
                joining = false;
                push_line(&mut out, start, Cow::Owned(std::mem::take(&mut buf)));
            }
        }
    }
    if joining {
        push_line(&mut out, start, Cow::Owned(buf));
    }
    out
}

fn push_line<'a>(out: &mut Vec<LogicalLine<'a>>, line: usize, text: Cow<'a, str>) {
    let text = if text.contains('\\') {
        Cow::Owned(strip_escapes(&text))
    } else {
        text
    };
    if !text.trim().is_empty() {
        out.push(LogicalLine { line, text });
    }
}

/// A lexing error: what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    /// What was expected.
    pub expected: &'static str,
    /// The text where it was expected.
    pub found: String,
}

/// If the line is an `Include <file>` directive (keyword case-insensitive, at the start of
/// the line), returns the file name.
pub fn include_directive(text: &str) -> Option<Result<&str, LexError>> {
    let head = text.get(..7)?;
    if !head.eq_ignore_ascii_case("include") {
        return None;
    }
    let rest = &text[7..];
    if !rest.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let (file, tail) = rest.split_at(end);
    if file.is_empty() {
        return Some(Err(LexError {
            expected: "a file name after Include",
            found: text.to_string(),
        }));
    }
    if !tail.trim().is_empty() {
        return Some(Err(LexError {
            expected: "nothing after the Include file name",
            found: tail.trim().to_string(),
        }));
    }
    Some(Ok(file))
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// Splits a logical line into `(key, value)` pairs. Operators (`+=`, `-=`, ...) are refused.
pub fn pairs(text: &str) -> Result<Vec<(&str, &str)>, LexError> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let skip_ws = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    loop {
        i = skip_ws(i);
        if i >= bytes.len() {
            return Ok(out);
        }
        let start = i;
        while i < bytes.len() && is_key_byte(bytes[i]) {
            i += 1;
        }
        let rest = || text[start..].to_string();
        if i == start {
            return Err(LexError {
                expected: "a Key=Value pair (key of letters, digits, '_' and '.')",
                found: rest(),
            });
        }
        let key = &text[start..i];
        i = skip_ws(i);
        if i < bytes.len() && matches!(bytes[i], b'+' | b'-' | b'*' | b'/') {
            return Err(LexError {
                expected: "'=' (the +=, -=, *= and /= operators are not supported)",
                found: rest(),
            });
        }
        if i >= bytes.len() || bytes[i] != b'=' {
            return Err(LexError {
                expected: "'=' after the key",
                found: rest(),
            });
        }
        i = skip_ws(i + 1);
        if i >= bytes.len() {
            return Err(LexError {
                expected: "a value after '='",
                found: rest(),
            });
        }
        let value;
        let quoted = if bytes[i] == b'"' {
            text[i + 1..].find('"').filter(|close| {
                bytes
                    .get(i + close + 2)
                    .is_none_or(|b| b.is_ascii_whitespace())
            })
        } else {
            None
        };
        if let Some(close) = quoted {
            value = &text[i + 1..i + 1 + close];
            i = i + 1 + close + 1;
        } else {
            let s = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            value = &text[s..i];
        }
        out.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<(usize, String)> {
        logical_lines(s)
            .into_iter()
            .map(|l| (l.line, l.text.into_owned()))
            .collect()
    }

    #[test]
    fn comments_and_escapes() {
        assert_eq!(
            texts("a=b # c\n\n# x\nd=e\\#f"),
            [(1, "a=b ".into()), (4, "d=e#f".into())]
        );
        assert_eq!(texts("a=b\\\\# c"), [(1, "a=b\\".into())]);
    }

    #[test]
    fn continuation() {
        assert_eq!(
            texts("NodeName=a \\  \n CPUs=2\nx=y"),
            [(1, "NodeName=a  CPUs=2".into()), (3, "x=y".into())]
        );
        assert_eq!(
            texts("a=b \\\\\nc=d"),
            [(1, "a=b \\".into()), (2, "c=d".into())]
        );
        // A comment ending in a backslash does not continue.
        assert_eq!(
            texts("a=b # c \\\nd=e"),
            [(1, "a=b ".into()), (2, "d=e".into())]
        );
        assert_eq!(texts("a=b\\"), [(1, "a=b".into())]);
    }

    #[test]
    fn pairs_follow_the_regex() {
        assert_eq!(
            pairs("a=b  C = d Reason=\"x y\"").unwrap(),
            [("a", "b"), ("C", "d"), ("Reason", "x y")]
        );
        assert_eq!(pairs("k=\"a\"b").unwrap(), [("k", "\"a\"b")]);
        assert_eq!(pairs("k= x=y").unwrap(), [("k", "x=y")]);
        assert!(pairs("k").is_err());
        assert!(pairs("k=").is_err());
        assert!(pairs("k+=1").is_err());
        assert!(pairs("=1").is_err());
    }

    #[test]
    fn include() {
        assert_eq!(
            include_directive("include slurm.conf.x").unwrap().unwrap(),
            "slurm.conf.x"
        );
        assert!(include_directive("Include a b").unwrap().is_err());
        assert!(include_directive("IncludeX=1").is_none());
        assert!(include_directive("NodeName=x").is_none());
    }
}
