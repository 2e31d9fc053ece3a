//! What a fresh memory page costs on this machine: `page-probe [MIB] [ROUNDS]`.
//!
//! Each round maps `MIB` MiB of anonymous memory (`memmap2`: a mapping of its own, never
//! memory the process touched before), writes one byte per 4 KiB page (each write a page fault, the kernel handing over a
//! zeroed page), then writes them all again (no fault: the pages are there), and unmaps it.
//! Then the same with the mapping advised to use transparent huge pages (`MADV_HUGEPAGE` on
//! its 2 MiB-aligned part: one fault per 2 MiB), as the charm's heap is (`src/charms/heap.rs`).
//! Prints µs per 4 KiB page, median and spread ([`stats::Stat`], shared with `hook-bench`). Why: on the benchmark machine a fresh page costs about
//! as much as 8,000 instructions, so the memory a hook touches for the first time counts beside
//! the instructions it runs (`src/charms/heap.rs` keeps freed memory for reuse and asks for huge
//! pages; docs/BENCHMARKS.md).

#[path = "../stats.rs"]
mod stats;

use stats::Stat;
use std::time::Instant;

const PAGE: usize = 4096;

/// Transparent huge pages' size on x86_64.
const HUGE_PAGE: usize = 2 << 20;

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(8);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let pages = (mib << 20) / PAGE;
    for huge in [false, true] {
        let (mut fresh, mut again) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            // room to align the probed part to a huge page
            let Ok(mut map) = memmap2::MmapMut::map_anon(pages * PAGE + HUGE_PAGE) else {
                eprintln!("page-probe: cannot map {mib} MiB");
                std::process::exit(1);
            };
            let skip = (map.as_ptr() as usize).next_multiple_of(HUGE_PAGE) - map.as_ptr() as usize;
            if huge && let Err(e) = map.advise_range(memmap2::Advice::HugePage, skip, pages * PAGE)
            {
                eprintln!("page-probe: MADV_HUGEPAGE refused: {e}");
                std::process::exit(1);
            }
            let Some(buf) = map.get_mut(skip..skip + pages * PAGE) else {
                eprintln!("page-probe: mapping shorter than asked");
                std::process::exit(1);
            };
            let t = Instant::now();
            touch(buf, 1);
            fresh.push(t.elapsed().as_secs_f64() * 1e6 / pages as f64);
            let t = Instant::now();
            touch(buf, 2);
            again.push(t.elapsed().as_secs_f64() * 1e6 / pages as f64);
            std::hint::black_box(&map);
        }
        let kind = if huge {
            "MADV_HUGEPAGE"
        } else {
            "4 KiB pages "
        };
        println!(
            "{kind} {mib} MiB ({pages} × 4 KiB) x {rounds} rounds, µs per 4 KiB, median (p10–p90, or min–max under 5 rounds): first write {}, second write {}",
            Stat::of(&fresh).show(3),
            Stat::of(&again).show(3)
        );
    }
}

/// Writes `value` to the first byte of every page.
fn touch(buf: &mut [u8], value: u8) {
    for page in buf.chunks_mut(PAGE) {
        page[0] = value;
    }
}
