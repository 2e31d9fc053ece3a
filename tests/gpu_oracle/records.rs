//! GRES records as `slurmd -G` prints them, reduced to single devices for comparison.

/// One GPU as Slurm counts it: a `File=` device, or one MIG instance (`MultipleFiles=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// `Type=` (`None` when Slurm printed `(null)`).
    pub type_name: Option<String>,
    /// The device file, or the comma-joined files of a MIG instance.
    pub file: String,
    /// `Cores=` as core ids.
    pub cores: Option<Vec<u32>>,
    /// `Links=` as printed.
    pub links: Option<String>,
}

/// A printed record: its devices (a `File=` range gives one per file) and its `Count=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `Count=`.
    pub count: u64,
    /// The devices, in the order Slurm indexes them.
    pub devices: Vec<Device>,
}

fn value<'a>(tokens: &[&'a str], key: &str, sep: char) -> Option<&'a str> {
    tokens.iter().find_map(|t| {
        let (k, v) = t.split_once(sep)?;
        (k == key).then_some(v)
    })
}

fn non_null(v: Option<&str>) -> Option<&str> {
    v.filter(|v| !v.is_empty() && *v != "(null)")
}

/// The final records: lines `Gres Name=gpu Type=… Count=… … File=… Cores=… Links=…`.
pub fn final_records(output: &str) -> Vec<Record> {
    output
        .lines()
        .filter_map(|l| l.split_once("Gres Name=gpu ").map(|(_, rest)| rest))
        .map(|rest| {
            let tokens: Vec<&str> = rest.split_whitespace().collect();
            record(
                value(&tokens, "Type", '='),
                value(&tokens, "Count", '='),
                value(&tokens, "File", '='),
                value(&tokens, "Cores", '='),
                value(&tokens, "Links", '='),
            )
        })
        .collect()
}

/// The system GPUs Slurm detected but did not use: the lines after `The following autodetected
/// GPUs are being ignored:`, `GRES[gpu] Type:… Count:1 Cores(N):… Links:… Flags:… File:…`.
pub fn ignored_records(output: &str) -> Vec<Record> {
    let Some((_, tail)) = output.split_once("autodetected GPUs are being ignored:") else {
        return Vec::new();
    };
    tail.lines()
        .filter_map(|l| l.split_once("GRES[gpu] ").map(|(_, rest)| rest))
        .map(|rest| {
            let tokens: Vec<&str> = rest.split_whitespace().collect();
            let cores = tokens
                .iter()
                .find_map(|t| t.strip_prefix("Cores(")?.split_once("):").map(|(_, v)| v));
            record(
                value(&tokens, "Type", ':'),
                value(&tokens, "Count", ':'),
                value(&tokens, "File", ':'),
                cores,
                value(&tokens, "Links", ':'),
            )
        })
        .collect()
}

fn record(
    type_name: Option<&str>,
    count: Option<&str>,
    file: Option<&str>,
    cores: Option<&str>,
    links: Option<&str>,
) -> Record {
    let count = count.and_then(|c| c.parse().ok()).unwrap_or(0);
    let type_name = non_null(type_name).map(str::to_owned);
    let cores = non_null(cores).map(parse_ranges);
    let links = non_null(links).map(str::to_owned);
    let file = non_null(file).unwrap_or_default();
    let files = if file.contains(',') && !file.contains('[') {
        // MultipleFiles: one GRES for all the files.
        vec![file.to_owned()]
    } else {
        expand(file)
    };
    Record {
        count,
        devices: files
            .into_iter()
            .map(|file| Device {
                type_name: type_name.clone(),
                file,
                cores: cores.clone(),
                links: links.clone(),
            })
            .collect(),
    }
}

/// Slurm range list `0-3,8` → ids.
pub fn parse_ranges(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// `/dev/nvidia[0-1,3]` → `/dev/nvidia0`, `/dev/nvidia1`, `/dev/nvidia3` (Slurm's hostlist
/// order for one bracket); a name without brackets is itself.
pub fn expand(name: &str) -> Vec<String> {
    let Some((prefix, rest)) = name.split_once('[') else {
        return vec![name.to_owned()];
    };
    let Some((ranges, suffix)) = rest.split_once(']') else {
        return vec![name.to_owned()];
    };
    parse_ranges(ranges)
        .into_iter()
        .map(|n| format!("{prefix}{n}{suffix}"))
        .collect()
}

/// All devices of `records`, in order.
pub fn devices(records: &[Record]) -> Vec<Device> {
    records.iter().flat_map(|r| r.devices.clone()).collect()
}

#[test]
fn parses_both_printed_forms() {
    let out = "slurmd-n: Gres Name=gpu Type=tesla_t4 Count=2 Index=0 ID=7696487 File=/dev/nvidia[0-1] Cores=0-1 CoreCnt=2 (null)\n\
               slurmd-n: gres/gpu: _merge_system_gres_conf: WARNING: The following autodetected GPUs are being ignored:\n\
               slurmd-n:     GRES[gpu] Type:a_b Count:1 Cores(2):1  Links:0,-1 Flags:HAS_FILE File:/dev/nvidia3 UniqueId:(null)\n";
    let recs = final_records(out);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].count, 2);
    assert_eq!(recs[0].devices[1].file, "/dev/nvidia1");
    assert_eq!(recs[0].devices[1].cores, Some(vec![0, 1]));
    assert_eq!(recs[0].devices[1].links, None);
    let ign = ignored_records(out);
    assert_eq!(ign[0].devices[0].type_name.as_deref(), Some("a_b"));
    assert_eq!(ign[0].devices[0].cores, Some(vec![1]));
    assert_eq!(ign[0].devices[0].links.as_deref(), Some("0,-1"));
}

/// Our gres.conf's records, read the way `slurmd -G` prints them.
pub fn written_records(gres_conf: &str) -> Vec<Record> {
    let printed: String = gres_conf
        .lines()
        .filter(|l| l.starts_with("NodeName="))
        .map(|l| {
            let tokens: Vec<&str> = l.split_whitespace().collect();
            let get = |k: &str| {
                tokens
                    .iter()
                    .find_map(|t| t.strip_prefix(&format!("{k}=")))
                    .unwrap_or("(null)")
            };
            let file = match get("File") {
                "(null)" => get("MultipleFiles"),
                f => f,
            };
            let count = match expand(file).len() {
                n if file.contains(',') && !file.contains('[') => n.min(1),
                n => n,
            };
            format!(
                "Gres Name=gpu Type={} Count={count} File={file} Cores={} Links={}\n",
                get("Type"),
                get("Cores"),
                get("Links")
            )
        })
        .collect();
    final_records(&printed)
}

/// `devs` in order of their files: the same GPUs whatever order Slurm printed them in.
pub fn by_file(mut devs: Vec<Device>) -> Vec<Device> {
    devs.sort_by(|a, b| a.file.cmp(&b.file));
    devs
}
