//! The charm's heap set-up (`slurm_charms::charms::heap`) really reaches the kernel: the heap
//! grows by its reserve and the advised range is marked for huge pages (`hg` in the mapping's
//! `VmFlags`, `/proc/self/smaps`). Without a test, a change that lets the compiler drop the
//! allocation that grows the heap (it did once, while this was written: an unused `malloc` is
//! optimised away) would leave every hook paying 4 KiB faults again, silently.
//!
//! Its own binary without libtest's harness: the set-up changes allocator parameters for the
//! whole process and must run on the main thread (a libtest test runs in a thread of its own,
//! whose allocations come from another arena than the heap).

fn main() {
    let advised = slurm_charms::charms::heap::set_up_heap()
        .expect("the heap grew by its reserve and madvise(MADV_HUGEPAGE) was accepted");
    assert!(
        advised.end - advised.start >= 2 << 20,
        "at least one huge page advised: {advised:x?}"
    );
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    // Each mapping: a header line `start-end perms …`, then fields; `VmFlags:` is among them.
    let mut mapping: Option<(usize, usize)> = None;
    let mut flagged = false;
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if let Some((lo, hi)) = mapping
                && lo <= advised.start
                && advised.end <= hi
            {
                flagged = flags.split_whitespace().any(|f| f == "hg");
                assert!(
                    flagged,
                    "advised range {advised:x?} lies in {lo:x}-{hi:x} without `hg`: {flags}"
                );
            }
            continue;
        }
        let Some((range, _)) = line.split_once(' ') else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
            mapping = Some((lo, hi));
        }
    }
    assert!(
        flagged,
        "no mapping of /proc/self/smaps holds the advised range {advised:x?}"
    );
    println!(
        "heap_pages: {:#x}..{:#x} advised MADV_HUGEPAGE and marked `hg`",
        advised.start, advised.end
    );
}
