//! NVIDIA XID errors: the driver's own fault reports, read from the kernel log.
//!
//! **Why the kernel log and not NVML's event API.** `nvmlEventSetWait` only returns events
//! that happen while an event set is registered (`nvmlDeviceRegisterEvents`); Slurm runs the
//! health check for a moment every `HealthCheckInterval`, so an XID between two runs would be
//! missed. The driver writes every XID to the kernel ring buffer as
//! `NVRM: Xid (PCI:0000:3b:00): 79, pid=…, GPU has fallen off the bus.`, and `/dev/kmsg`
//! numbers each record (`prio,seq,usec,flags;text`), so a check that remembers the last
//! sequence number it read sees every XID since its last run, exactly once, and none twice.
//! (The ring buffer is finite: on a very chatty kernel old records are overwritten; the read
//! then starts at the oldest one kept.) The fake NVML implements the event API
//! (`docs/fake-nvml.md`) so that path can be tested too, but the charm does not rely on it.
//!
//! **Classification.** [`classify`] sorts each XID into one of three [`XidClass`]es with
//! [`XID_CATALOG`], built from NVIDIA's published XID catalog: "Xid Errors", *Analyzing Xid
//! Errors with the Xid Catalog* (<https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>),
//! column "Resolution Bucket (Immediate Action)": `RESET_GPU` / `RESTART_BM` (and the workflows
//! that end in them) drain the node, `RESTART_APP` is the application's own fault, everything
//! else (`IGNORE`, `CONTACT_SUPPORT`, informational events) is logged and counted. XIDs not in
//! the table are logged and counted (never a drain on a code the charm does not know).

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What the charm does about an XID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum XidClass {
    /// The GPU needs a reset or the node a reboot: drain now.
    Drain,
    /// Worth knowing (kept in the recent list and counted), no action.
    Count,
    /// The application's own fault (it is killed or sees an error); the GPU is fine.
    Application,
}

/// One row of [`XID_CATALOG`]: code, class, NVIDIA's short meaning.
pub type XidRow = (u32, XidClass, &'static str);

/// The XIDs the charm knows, from NVIDIA's XID catalog (see the module documentation for the
/// source and the rule that maps its "Resolution Bucket (Immediate Action)" to a class).
pub const XID_CATALOG: &[XidRow] = &[
    (8, XidClass::Application, "GPU stopped processing"),
    (13, XidClass::Application, "graphics engine exception"),
    (31, XidClass::Application, "GPU memory page fault"),
    (
        32,
        XidClass::Count,
        "invalid or corrupted push buffer stream",
    ),
    (38, XidClass::Count, "driver firmware error"),
    (43, XidClass::Application, "GPU stopped processing"),
    (
        45,
        XidClass::Application,
        "preemptive cleanup, due to previous errors",
    ),
    (48, XidClass::Drain, "double bit ECC error"),
    (
        61,
        XidClass::Drain,
        "internal micro-controller breakpoint/warning",
    ),
    (62, XidClass::Drain, "internal micro-controller halt"),
    (
        63,
        XidClass::Count,
        "ECC page retirement or row remapping recorded",
    ),
    (
        64,
        XidClass::Drain,
        "ECC page retirement or row remapping recording failure",
    ),
    (68, XidClass::Application, "video processor exception"),
    (69, XidClass::Application, "graphics engine class error"),
    (74, XidClass::Drain, "NVLink error"),
    (79, XidClass::Drain, "GPU has fallen off the bus"),
    (92, XidClass::Count, "high single-bit ECC error rate"),
    (94, XidClass::Count, "contained ECC error"),
    (95, XidClass::Drain, "uncontained ECC error"),
    (109, XidClass::Application, "context switch timeout"),
    (119, XidClass::Drain, "GSP RPC timeout"),
    (120, XidClass::Drain, "GSP error"),
    (121, XidClass::Count, "C2C link corrected error"),
    (140, XidClass::Drain, "unrecovered ECC error"),
    (143, XidClass::Drain, "GPU initialization failure"),
    (154, XidClass::Drain, "GPU recovery action changed"),
];

/// The class and meaning of `xid`; an XID not in [`XID_CATALOG`] is [`XidClass::Count`],
/// "unknown XID".
pub fn classify(xid: u32) -> (XidClass, &'static str) {
    XID_CATALOG
        .iter()
        .find(|(code, _, _)| *code == xid)
        .map_or((XidClass::Count, "unknown XID"), |(_, class, meaning)| {
            (*class, *meaning)
        })
}

/// One XID as the kernel logged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XidEvent {
    /// The `/dev/kmsg` sequence number of the record (0 for a line without one).
    pub seq: u64,
    /// PCI bus id as NVML writes it (`00000000:3B:00.0`), from the log's `PCI:0000:3b:00`.
    pub pci_bus_id: String,
    /// The XID.
    pub xid: u32,
}

impl XidEvent {
    /// Its class and meaning ([`classify`]).
    pub fn class(&self) -> (XidClass, &'static str) {
        classify(self.xid)
    }
}

/// How many times one XID code was logged for one GPU (in one boot): what the health-check
/// program counts for the `slurm_node_gpu_xid_errors_total` metric (`docs/observability.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XidCount {
    /// PCI bus id as NVML writes it ([`XidEvent::pci_bus_id`]).
    pub pci_bus_id: String,
    /// The XID.
    pub xid: u32,
    /// Times logged.
    pub count: u64,
}

/// The XID codes of class [`XidClass::Drain`], in [`XID_CATALOG`] order: the codes the
/// drain-class alert watches (`SlurmGpuXidDrainClass`).
pub fn drain_class_codes() -> impl Iterator<Item = u32> {
    XID_CATALOG
        .iter()
        .filter(|(_, class, _)| *class == XidClass::Drain)
        .map(|(code, _, _)| *code)
}

/// The XID in one kernel log message, if it is one: `NVRM: Xid (PCI:0000:3b:00): 79, …`
/// (also `(0000:3b:00)` without `PCI:`, as older drivers write). `seq` is the record's number.
pub fn parse_xid(seq: u64, message: &str) -> Option<XidEvent> {
    let rest = &message[message.find("NVRM: Xid (")? + "NVRM: Xid (".len()..];
    let (addr, rest) = rest.split_once(')')?;
    let addr = addr.trim().trim_start_matches("PCI:");
    let code = rest.strip_prefix(':')?.trim_start();
    let digits: &str = &code[..code
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(code.len())];
    let xid = digits.parse().ok()?;
    Some(XidEvent {
        seq,
        pci_bus_id: nvml_bus_id(addr)?,
        xid,
    })
}

/// `0000:3b:00` (domain:bus:device, as the driver logs it) → `00000000:3B:00.0` (NVML's form).
fn nvml_bus_id(addr: &str) -> Option<String> {
    let mut parts = addr.split(':');
    let (domain, bus, dev) = (parts.next()?, parts.next()?, parts.next()?);
    let dev = dev.split('.').next()?;
    let hex = |s: &str, max: usize| {
        (!s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())
    };
    hex(domain, 8)?;
    hex(bus, 2)?;
    hex(dev, 2)?;
    Some(format!(
        "{:0>8}:{:0>2}:{:0>2}.0",
        domain.to_ascii_uppercase(),
        bus.to_ascii_uppercase(),
        dev.to_ascii_uppercase()
    ))
}

/// One `/dev/kmsg` record (`prio,seq,usec,flags[,…];message`): its sequence number and text.
/// Continuation lines (starting with a space: `KEY=value` dictionary) are not records.
fn parse_record(line: &str) -> Option<(u64, &str)> {
    let (head, message) = line.split_once(';')?;
    let seq = head.split(',').nth(1)?.trim().parse().ok()?;
    Some((seq, message))
}

/// What one read of the kernel log found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KmsgScan {
    /// XIDs in records after the cursor, oldest first.
    pub xids: Vec<XidEvent>,
    /// The highest sequence number seen (the next cursor); `None` when no record was read.
    pub last_seq: Option<u64>,
}

/// Most records read in one run: a bound on the work of one check (the kernel's ring buffer
/// holds far fewer on a usual machine).
pub const MAX_RECORDS: usize = 100_000;

/// The XIDs in the kernel log records after `after` (`None`: every record kept). Records are
/// `/dev/kmsg` lines; on the real `/dev/kmsg` each `read` returns one record and the file is
/// opened non-blocking, so the read ends where the log ends; a regular file (a test's fake
/// kernel log) is read to its end the same way. A record number that went backwards (a new
/// boot) restarts the count: every record is then new.
pub fn scan_kmsg(path: &Path, after: Option<u64>) -> std::io::Result<KmsgScan> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let mut records: Vec<(u64, String)> = Vec::new();
    let mut pending = String::new();
    let mut buf = vec![0u8; 8192];
    while records.len() < MAX_RECORDS {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                pending.push_str(&String::from_utf8_lossy(&buf[..n]));
                while let Some(end) = pending.find('\n') {
                    let line: String = pending.drain(..=end).collect();
                    if let Some((seq, msg)) = parse_record(line.trim_end_matches('\n')) {
                        records.push((seq, msg.to_owned()));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: records were overwritten while reading; the next read continues at the
            // oldest one kept.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PIPE.raw_os_error()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if let Some((seq, msg)) = parse_record(pending.trim_end()) {
        records.push((seq, msg.to_owned()));
    }
    let last_seq = records.iter().map(|(s, _)| *s).max();
    // a log whose numbers are all below the cursor is a new boot's: read all of it
    let after = after.filter(|a| last_seq.is_some_and(|l| l >= *a));
    let xids = records
        .iter()
        .filter(|(seq, _)| after.is_none_or(|a| *seq > a))
        .filter_map(|(seq, msg)| parse_xid(*seq, msg))
        .collect();
    Ok(KmsgScan { xids, last_seq })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_driver_line() {
        let x = parse_xid(
            7,
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        )
        .unwrap();
        assert_eq!(x.pci_bus_id, "00000000:3B:00.0");
        assert_eq!(x.xid, 79);
        assert_eq!(x.seq, 7);
        let old = parse_xid(0, "NVRM: Xid (0000:01:00): 13, Graphics Exception").unwrap();
        assert_eq!((old.pci_bus_id.as_str(), old.xid), ("00000000:01:00.0", 13));
        assert_eq!(parse_xid(0, "NVRM: GPU at PCI:0000:3b:00: GPU-1"), None);
        assert_eq!(parse_xid(0, "NVRM: Xid (PCI:zz:3b:00): 79, x"), None);
        assert_eq!(parse_xid(0, "NVRM: Xid (PCI:0000:3b:00): x"), None);
    }

    #[test]
    fn one_xid_of_each_class() {
        assert_eq!(
            classify(79),
            (XidClass::Drain, "GPU has fallen off the bus")
        );
        assert_eq!(classify(48).0, XidClass::Drain);
        assert_eq!(
            classify(13),
            (XidClass::Application, "graphics engine exception")
        );
        assert_eq!(classify(31).0, XidClass::Application);
        assert_eq!(
            classify(92),
            (XidClass::Count, "high single-bit ECC error rate")
        );
        assert_eq!(classify(63).0, XidClass::Count);
        assert_eq!(classify(99_999), (XidClass::Count, "unknown XID"));
    }

    #[test]
    fn catalog_lists_each_code_once() {
        let mut codes: Vec<u32> = XID_CATALOG.iter().map(|r| r.0).collect();
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n);
    }

    #[test]
    fn kmsg_after_the_cursor_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kmsg");
        std::fs::write(
            &path,
            "6,10,100,-;NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception\n \
             SUBSYSTEM=pci\n\
             6,11,200,-;eth0: link up\n\
             4,12,300,-;NVRM: Xid (PCI:0000:86:00): 79, pid=1, GPU has fallen off the bus.\n",
        )
        .unwrap();
        let all = scan_kmsg(&path, None).unwrap();
        assert_eq!(all.last_seq, Some(12));
        assert_eq!(
            all.xids.iter().map(|x| x.xid).collect::<Vec<_>>(),
            vec![13, 79]
        );
        let new = scan_kmsg(&path, Some(10)).unwrap();
        assert_eq!(new.xids.iter().map(|x| x.xid).collect::<Vec<_>>(), vec![79]);
        assert!(scan_kmsg(&path, Some(12)).unwrap().xids.is_empty());
        // a cursor past every record: a new boot, all of it is new
        assert_eq!(scan_kmsg(&path, Some(900)).unwrap().xids.len(), 2);
    }
}
