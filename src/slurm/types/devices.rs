//! gres.conf device files: one path, a `File=` list, a `MultipleFiles=` set.

use super::error::VocabError;
use crate::slurm::hostlist::{self, natural_cmp};
use serde::{Deserialize, Serialize};

/// Most device files one `File=` value may name (no node has more GPUs than this).
pub const MAX_DEVICE_FILES: usize = 4096;

/// A device file: an absolute path of `[A-Za-z0-9/_.+-]`, no `.`/`..` component, no empty
/// component, no trailing `/`, at most 1024 bytes (`/dev/nvidia0`,
/// `/dev/nvidia-caps/nvidia-cap21`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DevicePath(String);

fn check_device_path(value: &str) -> Result<(), VocabError> {
    let ok = value.len() > 1
        && value.len() <= 1024
        && value.starts_with('/')
        && value[1..].split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
        });
    if !ok {
        return Err(VocabError::new(
            "device file",
            value,
            "a device file is an absolute path of letters, digits, '/', '_', '.', '+' and '-' without '..' (e.g. /dev/nvidia0)",
        ));
    }
    Ok(())
}

string_newtype!(DevicePath, check_device_path);

impl DevicePath {
    /// `/dev/nvidia<minor>`, the device file of a whole NVIDIA GPU.
    pub fn nvidia(minor: u32) -> Self {
        Self(format!("/dev/nvidia{minor}"))
    }
}

/// A `File=` value: one or more device files, each once, kept in natural order, written as a
/// compressed hostlist (`/dev/nvidia[0-3]`). Each file is one GRES.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DeviceFiles(Vec<DevicePath>);

impl DeviceFiles {
    /// Files from a list: refused when empty, too long or naming a file twice.
    pub fn new(mut files: Vec<DevicePath>) -> Result<Self, VocabError> {
        fn shown(files: &[DevicePath]) -> String {
            let list: Vec<&str> = files.iter().map(DevicePath::as_str).collect();
            list.join(",")
        }
        if files.is_empty() {
            return Err(VocabError::new("File", "", "names no device file"));
        }
        if files.len() > MAX_DEVICE_FILES {
            return Err(VocabError::new(
                "File",
                &shown(&files),
                format!("names more than {MAX_DEVICE_FILES} device files"),
            ));
        }
        files.sort_by(|a, b| natural_cmp(a, b));
        if let Some(w) = files.windows(2).find(|w| w[0] == w[1]) {
            let twice = w[0].to_string();
            return Err(VocabError::new(
                "File",
                &shown(&files),
                format!("{twice} is listed twice"),
            ));
        }
        Ok(Self(files))
    }

    /// One file.
    pub fn single(file: DevicePath) -> Self {
        Self(vec![file])
    }

    /// `/dev/nvidia<m>` for each minor (sorted, each once); `None` for no minors.
    pub fn nvidia(minors: &[u32]) -> Option<Self> {
        let mut minors = minors.to_vec();
        minors.sort_unstable();
        minors.dedup();
        (!minors.is_empty()).then(|| Self(minors.into_iter().map(DevicePath::nvidia).collect()))
    }

    /// The files, in natural order.
    pub fn files(&self) -> &[DevicePath] {
        &self.0
    }

    /// How many files (= GRES) the value names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false (a `File=` value names at least one file); for clippy's `len` rule.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The device files a hostlist value of `key` names (`/dev/nvidia[0-3]`), in written order,
/// each a [`DevicePath`]; refused past [`MAX_DEVICE_FILES`] before any is made.
fn expand_paths(key: &'static str, value: &str) -> Result<Vec<DevicePath>, VocabError> {
    let names = hostlist::expand(value).map_err(|e| VocabError::new(key, value, e.to_string()))?;
    if names.len() > MAX_DEVICE_FILES {
        return Err(VocabError::new(
            key,
            value,
            format!("names more than {MAX_DEVICE_FILES} device files"),
        ));
    }
    names.into_iter().map(DevicePath::try_from).collect()
}

impl TryFrom<&str> for DeviceFiles {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        Self::new(expand_paths("File", value)?)
    }
}

parsed_newtype!(DeviceFiles);

impl std::fmt::Display for DeviceFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hostlist::compress(&self.0))
    }
}

/// A `MultipleFiles=` value: the two or more files that together make one GRES (a MIG
/// instance: the parent GPU and its capability files), each once, in written order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MultipleFiles(Vec<DevicePath>);

impl MultipleFiles {
    /// Files from a list: refused with fewer than two or a file named twice.
    pub fn new(files: Vec<DevicePath>) -> Result<Self, VocabError> {
        let shown = files
            .iter()
            .map(DevicePath::as_str)
            .collect::<Vec<_>>()
            .join(",");
        if files.len() < 2 || files.len() > MAX_DEVICE_FILES {
            return Err(VocabError::new(
                "MultipleFiles",
                &shown,
                format!(
                    "names {} files; one MIG instance has 2 or more",
                    files.len()
                ),
            ));
        }
        for (i, f) in files.iter().enumerate() {
            if files[..i].contains(f) {
                return Err(VocabError::new(
                    "MultipleFiles",
                    &shown,
                    format!("{f} is listed twice"),
                ));
            }
        }
        Ok(Self(files))
    }

    /// The files, in written order.
    pub fn files(&self) -> &[DevicePath] {
        &self.0
    }
}

impl TryFrom<&str> for MultipleFiles {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        Self::new(expand_paths("MultipleFiles", value)?)
    }
}

parsed_newtype!(MultipleFiles);

impl std::fmt::Display for MultipleFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::newtype::write_comma_list(f, &self.0)
    }
}

/// The device files of one gres.conf record: `File=` or `MultipleFiles=`, never both.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GresDevices {
    /// `File=`: one GRES per file.
    File(DeviceFiles),
    /// `MultipleFiles=`: one GRES in all.
    Multiple(MultipleFiles),
}

impl GresDevices {
    /// How many GRES the files stand for.
    pub fn count(&self) -> u64 {
        match self {
            GresDevices::File(f) => f.len() as u64,
            GresDevices::Multiple(_) => 1,
        }
    }

    /// Every file named, for overlap checks.
    pub fn paths(&self) -> &[DevicePath] {
        match self {
            GresDevices::File(f) => f.files(),
            GresDevices::Multiple(m) => m.files(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_files() {
        assert_eq!(DeviceFiles::try_from("/dev/nvidia0").unwrap().len(), 1);
        let f = DeviceFiles::try_from("/dev/nvidia[0-1,3],/dev/nvidia2").unwrap();
        assert_eq!((f.len(), f.to_string().as_str()), (4, "/dev/nvidia[0-3]"));
        for bad in [
            "",
            "/dev/../etc/shadow",
            "dev/nvidia0",
            "/dev/nvidia[0-99999999]",
            "/dev/nvidia[3-1]",
            "/dev/nvidia0,/dev/nvidia0",
            "/dev/nvidia0 /dev/nvidia1",
            "/dev/",
        ] {
            assert!(DeviceFiles::try_from(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            DeviceFiles::nvidia(&[1, 0, 1]).unwrap().to_string(),
            "/dev/nvidia[0-1]"
        );
        assert!(DeviceFiles::nvidia(&[]).is_none());
    }

    #[test]
    fn multiple_files() {
        let m = MultipleFiles::try_from(
            "/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22",
        )
        .unwrap();
        assert_eq!(m.files().len(), 3);
        assert!(MultipleFiles::try_from("/dev/nvidia0").is_err());
        assert!(MultipleFiles::try_from("/dev/nvidia0,/dev/nvidia0").is_err());
        assert_eq!(GresDevices::Multiple(m).count(), 1);
    }
}
