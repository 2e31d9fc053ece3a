//! GNU-style option parsing compatible with `juju/gnuflag`: interspersed options and
//! positionals, `--` ends options, `-r3`/`-r=3`/`-r 3`/`--relation 3`/`--relation=3`, and boolean
//! options that take a value only as `--flag=value`.

use crate::tools::ToolError;
use std::collections::HashMap;

/// One option a tool accepts.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    /// All names (single letters are short names); the last one is the canonical key.
    pub names: &'static [&'static str],
    /// Whether the option takes a value (otherwise it is boolean).
    pub takes_value: bool,
}

impl Flag {
    /// An option with a value.
    pub const fn value(names: &'static [&'static str]) -> Self {
        Flag {
            names,
            takes_value: true,
        }
    }
    /// A boolean option.
    pub const fn boolean(names: &'static [&'static str]) -> Self {
        Flag {
            names,
            takes_value: false,
        }
    }
    fn key(&self) -> &'static str {
        self.names.last().copied().unwrap_or("")
    }
}

/// `--format` (and its default `smart`).
pub const FORMAT: Flag = Flag::value(&["format"]);
/// `-o/--output`.
pub const OUTPUT: Flag = Flag::value(&["o", "output"]);

/// A value given for an option, with the spelling the caller used (for error messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// The value.
    pub value: String,
    /// The option as written, e.g. `-r` or `--relation`.
    pub written: String,
}

/// The parse result.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    values: HashMap<&'static str, Given>,
    bools: HashMap<&'static str, bool>,
    /// Positional arguments in order.
    pub positionals: Vec<String>,
}

impl Parsed {
    /// The value of an option by canonical (long) name.
    pub fn value(&self, key: &str) -> Option<&Given> {
        self.values.get(key)
    }
    /// A boolean option's value (false when absent).
    pub fn flag(&self, key: &str) -> bool {
        self.bools.get(key).copied().unwrap_or(false)
    }
    /// Whether a boolean option was given at all.
    pub fn flag_given(&self, key: &str) -> bool {
        self.bools.contains_key(key)
    }
}

/// Go's `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn find<'a>(flags: &'a [Flag], name: &str) -> Option<&'a Flag> {
    flags.iter().find(|f| f.names.contains(&name))
}

/// Parse `args` against `flags`. `-h`/`--help` yields [`ToolError::Help`].
pub fn parse(flags: &[Flag], args: &[String]) -> Result<Parsed, ToolError> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            out.positionals.extend(args[i..].iter().cloned());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            out.positionals.push(arg.clone());
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let written = format!("--{name}");
            if name == "help" {
                return Err(ToolError::Help);
            }
            let Some(flag) = find(flags, name) else {
                return Err(ToolError::Usage(format!(
                    "option provided but not defined: {written}"
                )));
            };
            i = apply(&mut out, flag, written, inline, args, i)?;
        } else {
            let short = &arg[1..];
            for (pos, c) in short.char_indices() {
                let name = &short[pos..pos + c.len_utf8()];
                let written = format!("-{name}");
                if name == "h" {
                    return Err(ToolError::Help);
                }
                let Some(flag) = find(flags, name) else {
                    return Err(ToolError::Usage(format!(
                        "option provided but not defined: {written}"
                    )));
                };
                let rest = &short[pos + c.len_utf8()..];
                if flag.takes_value {
                    let inline = rest.strip_prefix('=').unwrap_or(rest);
                    let inline = (!inline.is_empty() || rest.starts_with('=')).then_some(inline);
                    i = apply(&mut out, flag, written, inline, args, i)?;
                    break;
                }
                if let Some(v) = rest.strip_prefix('=') {
                    apply(&mut out, flag, written, Some(v), args, i)?;
                    break;
                }
                apply(&mut out, flag, written, None, args, i)?;
            }
        }
    }
    Ok(out)
}

fn apply(
    out: &mut Parsed,
    flag: &Flag,
    written: String,
    inline: Option<&str>,
    args: &[String],
    mut i: usize,
) -> Result<usize, ToolError> {
    if flag.takes_value {
        let value = match inline {
            Some(v) => v.to_owned(),
            None => {
                let Some(v) = args.get(i) else {
                    return Err(ToolError::Usage(format!(
                        "option needs an argument: {written}"
                    )));
                };
                i += 1;
                v.clone()
            }
        };
        out.values.insert(flag.key(), Given { value, written });
    } else {
        let value = match inline {
            None => true,
            Some(v) => parse_bool(v).ok_or_else(|| {
                ToolError::Usage(format!(
                    "invalid boolean value {v:?} for option {written}: parse error"
                ))
            })?,
        };
        out.bools.insert(flag.key(), value);
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Flag = Flag::value(&["r", "relation"]);
    const APP: Flag = Flag::boolean(&["app"]);

    fn p(args: &[&str]) -> Result<Parsed, ToolError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&[R, APP, FORMAT, OUTPUT], &args)
    }

    #[test]
    fn all_value_forms() {
        for form in [
            &["-r", "3"][..],
            &["-r3"],
            &["-r=3"],
            &["--relation", "3"],
            &["--relation=3"],
        ] {
            let parsed = p(form).unwrap();
            assert_eq!(parsed.value("relation").unwrap().value, "3", "{form:?}");
        }
    }

    #[test]
    fn interspersed_and_double_dash() {
        let parsed = p(&["key", "--app", "x", "--", "--format", "-r"]).unwrap();
        assert!(parsed.flag("app"));
        assert_eq!(parsed.positionals, ["key", "x", "--format", "-r"]);
    }

    #[test]
    fn bool_with_value() {
        assert!(!p(&["--app=false"]).unwrap().flag("app"));
        assert!(p(&["--app=True"]).unwrap().flag("app"));
        assert!(p(&["--app=maybe"]).is_err());
        // a bool never consumes the next argument
        assert_eq!(p(&["--app", "false"]).unwrap().positionals, ["false"]);
    }

    #[test]
    fn errors() {
        match p(&["--foo"]) {
            Err(ToolError::Usage(m)) => assert_eq!(m, "option provided but not defined: --foo"),
            other => panic!("{other:?}"),
        }
        match p(&["-r"]) {
            Err(ToolError::Usage(m)) => assert_eq!(m, "option needs an argument: -r"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(p(&["-h"]), Err(ToolError::Help)));
    }

    #[test]
    fn lone_dash_is_positional() {
        assert_eq!(p(&["-", "a/0"]).unwrap().positionals, ["-", "a/0"]);
    }
}
