//! Hostlists of one prefix edited as runs of numbers: `gpu-[0-4,6-9999]` is the prefix `gpu-`
//! and the runs 0–4 and 6–9999. Taking a name out, putting one in and joining two lists cost
//! a step per run, not per name: the controller's node groups ([`crate::charms::slurmctld::
//! group_plan`]) move a node between two lists of thousands on each changed hook. The result
//! is the text [`compress`](super::hostlist::compress) writes for the same names (the tests
//! hold the two to it); lists of any other form are left to `expand` and `compress`.

use super::hostlist::{one_prefix_runs, push_num, push_ranges, unpadded_number};

/// A hostlist of one prefix and numbers without leading zeros, as sorted disjoint runs with a
/// gap between each two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberRuns {
    prefix: String,
    runs: Vec<(u64, u64)>,
}

impl NumberRuns {
    /// The runs of `list` (one name or one `prefix[ranges]` item, numbers without leading
    /// zeros; `None` for any other form); an empty list has no prefix yet, and
    /// takes the first name put in.
    pub fn of(list: &str) -> Option<Self> {
        if list.is_empty() {
            return Some(NumberRuns {
                prefix: String::new(),
                runs: Vec::new(),
            });
        }
        let (prefix, mut runs) = one_prefix_runs(list)?;
        runs.sort_unstable();
        let mut out = NumberRuns {
            prefix: prefix.to_owned(),
            runs: Vec::with_capacity(runs.len()),
        };
        for run in runs {
            out.add_run(run)?;
        }
        Some(out)
    }

    /// Appends a run that starts after every run held (merging it with the last when they
    /// touch); `None` when it overlaps.
    fn add_run(&mut self, (lo, hi): (u64, u64)) -> Option<()> {
        match self.runs.last_mut() {
            Some((_, last)) if lo <= *last => return None,
            Some((_, last)) if lo == *last + 1 => *last = hi,
            _ => self.runs.push((lo, hi)),
        }
        Some(())
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The number of `name`, when it is one of this prefix without leading zeros.
    fn number(&self, name: &str) -> Option<u64> {
        let (prefix, value) = unpadded_number(name)?;
        (self.runs.is_empty() || prefix == self.prefix).then_some(value)
    }

    /// Takes `name` out; `None` when it is not held (or not of this form).
    pub fn remove(&mut self, name: &str) -> Option<()> {
        let v = self.number(name)?;
        let i = self.runs.partition_point(|&(_, hi)| hi < v);
        let (lo, hi) = *self.runs.get(i).filter(|(lo, _)| *lo <= v)?;
        match (lo == v, hi == v) {
            (true, true) => {
                self.runs.remove(i);
            }
            (true, false) => self.runs[i].0 = v + 1,
            (false, true) => self.runs[i].1 = v - 1,
            (false, false) => {
                self.runs[i].1 = v - 1;
                self.runs.insert(i + 1, (v + 1, hi));
            }
        }
        Some(())
    }

    /// Puts `name` in; `None` when it is held already (or not of this form).
    pub fn insert(&mut self, name: &str) -> Option<()> {
        let v = self.number(name)?;
        if self.runs.is_empty() {
            self.prefix = unpadded_number(name)?.0.to_owned();
        }
        let i = self.runs.partition_point(|&(_, hi)| hi < v);
        if self.runs.get(i).is_some_and(|&(lo, _)| lo <= v) {
            return None;
        }
        let joins_before = i > 0 && self.runs[i - 1].1 + 1 == v;
        let joins_after = self.runs.get(i).is_some_and(|&(lo, _)| lo == v + 1);
        match (joins_before, joins_after) {
            (true, true) => {
                self.runs[i - 1].1 = self.runs[i].1;
                self.runs.remove(i);
            }
            (true, false) => self.runs[i - 1].1 = v,
            (false, true) => self.runs[i].0 = v,
            (false, false) => self.runs.insert(i, (v, v)),
        }
        Some(())
    }

    /// The names of both; `None` when their prefixes differ or a name is in both.
    pub fn union(&self, other: &NumberRuns) -> Option<NumberRuns> {
        if self.is_empty() {
            return Some(other.clone());
        }
        if other.is_empty() {
            return Some(self.clone());
        }
        if self.prefix != other.prefix {
            return None;
        }
        let mut all: Vec<(u64, u64)> = self.runs.iter().chain(&other.runs).copied().collect();
        all.sort_unstable();
        let mut out = NumberRuns {
            prefix: self.prefix.clone(),
            runs: Vec::with_capacity(all.len()),
        };
        for run in all {
            out.add_run(run)?;
        }
        Some(out)
    }

    /// The first name in natural order and the hostlist, as
    /// [`compress_with_first`](super::hostlist::compress_with_first) gives them; `None`
    /// when no name is held.
    pub fn to_hostlist(&self) -> Option<(String, String)> {
        let &(lo, _) = self.runs.first()?;
        let mut first = self.prefix.clone();
        push_num(&mut first, lo, 0);
        if let [(lo, hi)] = self.runs.as_slice()
            && lo == hi
        {
            return Some((first.clone(), first));
        }
        let mut list = String::with_capacity(self.prefix.len() + 2 + 12 * self.runs.len());
        list.push_str(&self.prefix);
        list.push('[');
        push_ranges(&mut list, self.runs.iter().copied(), 0);
        list.push(']');
        Some((first, list))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::hostlist::{compress, compress_with_first, expand};
    use proptest::prelude::*;

    /// What `compress` makes of `names`, and their first name in natural order.
    fn compressed(names: &[String]) -> Option<(String, String)> {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (first, list) = compress_with_first(&refs);
        Some((refs.get(first)?.to_string(), list))
    }

    fn names() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec((0u64..40).prop_map(|v| format!("gpu-{v}")), 0..30)
    }

    proptest! {
        /// Taking out and putting in names gives what `compress` writes for the names left.
        #[test]
        fn edits_write_what_compress_writes(
            start in names(),
            out in proptest::collection::vec(0u64..40, 0..6),
            into in proptest::collection::vec(0u64..40, 0..6),
        ) {
            let mut want: Vec<String> = start.clone();
            want.sort();
            want.dedup();
            let list = compress(&want);
            let Some(mut runs) = NumberRuns::of(if want.is_empty() { "" } else { &list }) else {
                return Err(TestCaseError::fail(format!("{list} does not read")));
            };
            for v in out {
                let name = format!("gpu-{v}");
                let held = want.contains(&name);
                prop_assert_eq!(runs.remove(&name).is_some(), held, "{}", name);
                want.retain(|n| *n != name);
            }
            for v in into {
                let name = format!("gpu-{v}");
                let held = want.contains(&name);
                prop_assert_eq!(runs.insert(&name).is_some(), !held, "{}", name);
                if !held {
                    want.push(name);
                }
            }
            prop_assert_eq!(runs.is_empty(), want.is_empty());
            prop_assert_eq!(runs.to_hostlist(), compressed(&want));
            if let Some((_, list)) = runs.to_hostlist() {
                let mut back = expand(&list).unwrap();
                back.sort();
                want.sort();
                prop_assert_eq!(back, want);
            }
        }

        /// Joining two lists gives what `compress` writes for all their names.
        #[test]
        fn unions_write_what_compress_writes(a in names(), b in names()) {
            let set = |v: &[String]| {
                let mut v = v.to_vec();
                v.sort();
                v.dedup();
                v
            };
            let (a, b) = (set(&a), set(&b));
            let of = |v: &[String]| NumberRuns::of(&compress(v)).unwrap();
            let (ra, rb) = (of(&a), of(&b));
            let overlap = a.iter().any(|n| b.contains(n));
            let joined = ra.union(&rb);
            prop_assert_eq!(joined.is_none(), overlap);
            if let Some(j) = joined {
                let all: Vec<String> = a.iter().chain(&b).cloned().collect();
                prop_assert_eq!(j.to_hostlist(), compressed(&all));
            }
        }
    }

    #[test]
    fn other_forms_are_left_to_expand() {
        for list in ["gpu-[01-03]", "a1,b2", "gpu-x", "gpu-[1-2]x", "n0[1-2]"] {
            assert_eq!(NumberRuns::of(list), None, "{list}");
        }
        let mut runs = NumberRuns::of("gpu-[1-3]").unwrap();
        assert_eq!(runs.insert("cpu-4"), None);
        assert_eq!(runs.insert("gpu-04"), None);
        assert_eq!(runs.remove("gpu-9"), None);
        assert_eq!(
            NumberRuns::of("gpu-7").unwrap().to_hostlist(),
            Some(("gpu-7".into(), "gpu-7".into()))
        );
    }
}
