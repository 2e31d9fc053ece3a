//! A unit's name as an accepted node keeps it ([`UnitName`]).
//!
//! Why: the controller's changed hook makes an [`super::desired::AcceptedNode`] for every
//! accepted unit, and at 10,000 units an owned copy of each unit name was 10,000 allocations
//! (and frees, and fresh heap pages) on every hook, for a name read only when slurmctld refuses
//! the files ([`super::refusal::changed_units`]). Juju names every unit `<application>/<number>`
//! and the node already keeps its application, so the number is enough.

/// A unit's name, given its application: the number of `<app>/<number>`, or the whole name
/// when it is not of that form (Juju makes none such; a hand-edited cache could).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitName {
    /// `<app>/<number>` (the number in canonical form: up to 9 digits, no sign, no leading
    /// zero).
    Numbered(u32),
    /// Any other name, kept whole.
    Other(Box<str>),
}

impl UnitName {
    /// `unit` of application `app`, kept as its number where `unit` is exactly `<app>/<n>`.
    pub fn new(unit: &str, app: &str) -> Self {
        // one pass over the bytes (this runs once per accepted unit on every controller hook)
        let digits = unit
            .as_bytes()
            .strip_prefix(app.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"/"))
            // up to 9 digits: no overflow; no leading zero but in `0` itself
            .filter(|d| (1..=9).contains(&d.len()) && (d[0] != b'0' || d.len() == 1));
        let number = digits.and_then(|d| {
            d.iter().try_fold(0u32, |n, &b| {
                b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
            })
        });
        match number {
            Some(n) => UnitName::Numbered(n),
            None => UnitName::Other(unit.into()),
        }
    }

    /// The full name, given the application it was made with.
    pub fn to_full(&self, app: &str) -> String {
        match self {
            UnitName::Numbered(n) => format!("{app}/{n}"),
            UnitName::Other(name) => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn juju_names_keep_their_number_and_give_the_same_name_back() {
        for (unit, app, numbered) in [
            ("slurmd/0", "slurmd", Some(0)),
            ("slurmd/9999", "slurmd", Some(9999)),
            ("gpu-a/17", "gpu-a", Some(17)),
            ("slurmd/007", "slurmd", None),
            ("slurmd/+7", "slurmd", None),
            ("slurmd/", "slurmd", None),
            ("slurmd/1x", "slurmd", None),
            ("other/3", "slurmd", None),
            ("slurmd/99999999999", "slurmd", None),
            ("slurmd/999999999", "slurmd", Some(999_999_999)),
            ("slurmd/1000000000", "slurmd", None),
            ("slurmd3", "slurmd", None),
        ] {
            let name = UnitName::new(unit, app);
            let want = numbered.map_or_else(|| UnitName::Other(unit.into()), UnitName::Numbered);
            assert_eq!(name, want, "{unit}");
            assert_eq!(name.to_full(app), unit, "{unit}: the same name back");
        }
    }
}
