//! How a hook process's heap is set up before the hook runs: what it frees is kept for its
//! later allocations, and the start of the heap is backed by transparent huge pages. A hook is
//! a process of a few milliseconds at 10,000 units, and on the benchmark machine the pages it
//! touches for the first time are a good part of that (docs/BENCHMARKS.md, issue 13,
//! thirteenth and fourteenth passes).

use std::ops::Range;

/// Sets up the hook's heap. Tells glibc's allocator to keep the memory a hook frees for the
/// hook's later allocations: no block is given its own mapping (up to 32 MiB, glibc's
/// ceiling) and the heap is never trimmed. A hook is a process of a few milliseconds; every
/// page it gets from the kernel is a page fault, and a page given back and asked for again is
/// a second one. Measured on the benchmark machine (`target/release/page-probe`): a fresh page
/// costs about 2.5 µs there, and a controller `slurmd-relation-changed` at 10,000 units takes
/// about 380 faults fewer (docs/BENCHMARKS.md, issue 13, thirteenth pass). The heap then
/// grows once, by a reserve whose first part is backed by huge pages (`heap_in_huge_pages`).
/// The memory goes back to the system when the hook exits. `main` calls it first thing, on
/// the main thread (whose allocations are the heap's). Returns the range advised to use huge
/// pages, if any (`tests/heap_pages.rs` checks the kernel's flags on it).
pub fn set_up_heap() -> Option<Range<usize>> {
    // SAFETY: `mallopt` only sets allocator parameters (under the allocator's lock); it changes
    // no allocation already made. A refusal (return 0) leaves glibc's defaults, which are
    // correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
        libc::mallopt(libc::M_TOP_PAD, HEAP_RESERVE as libc::c_int);
    }
    heap_in_huge_pages()
}

/// How much address space the heap reserves at once (virtual: a page is resident only once
/// touched); more than a hook at 10,000 distinct nodes uses, so the heap grows once.
const HEAP_RESERVE: usize = 64 << 20;

/// Huge pages' size on x86_64 and aarch64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// How much of the heap's start is backed by huge pages. A huge page is resident whole once
/// any byte of it is touched, so memory reserved but never written (a buffer's spare
/// capacity) counts in full: with the whole reserve in huge pages the controller's hook at
/// 10,000 distinct nodes peaked at 32.5 MiB (over issue 13's 30 MiB), with the first 16 MiB
/// at 28.5 MiB; a changed hook at 10,000 alike nodes stays within these 16 MiB.
const HUGE_HEAP: usize = 16 << 20;

/// Grows the heap once by [`HEAP_RESERVE`] and asks the kernel to back it with transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`: what glibc's own `glibc.malloc.hugetlb=1` tunable
/// does, which cannot be set here because Juju starts the charm with its own environment).
/// One fault then hands over 2 MiB instead of 4 KiB: on the benchmark machine a page touched
/// for the first time cost 2.2 µs per 4 KiB in 4 KiB pages and 0.17 µs in huge pages
/// (`target/release/page-probe 8 15`; docs/BENCHMARKS.md, issue 13, fourteenth pass). Where
/// THP is off (`never`) or refused, the advice does nothing and the heap works as before.
fn heap_in_huge_pages() -> Option<Range<usize>> {
    // SAFETY: `sbrk(0)` only reads the program break. The block is a plain allocation of
    // glibc's heap (below the mmap threshold set above, so it is carved from the heap and
    // makes it grow by it plus the top pad), released before anything else allocates.
    // `madvise` is given a range inside the heap's mapping, which stays mapped (the heap is
    // never trimmed); it changes how the pages are backed, not their contents.
    unsafe {
        let before = libc::sbrk(0) as usize;
        // black_box: a block never used would be optimised away with its malloc
        let block = std::hint::black_box(libc::malloc(1 << 20));
        let after = libc::sbrk(0) as usize;
        libc::free(block);
        // `sbrk` answers -1 (all bits set) where it fails
        let start = before.checked_next_multiple_of(HUGE_PAGE)?;
        if block.is_null() || after == usize::MAX || after <= start.saturating_add(HUGE_PAGE) {
            return None;
        }
        let end = after - after % HUGE_PAGE;
        let end = end.min(start + HUGE_HEAP);
        let advised = libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        (advised == 0).then_some(start..end)
    }
}
