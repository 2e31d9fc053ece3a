//! [`GresLine`] as JSON, with gres.conf's own key names: the `gres` entries of the `node`
//! relation record (`{"Name": "gpu", "Type": "tesla_t4", "File": "/dev/nvidia[0-1]"}`).
//! Deserialising goes through the vocabulary types, so a bad value is refused there.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::ConfigError;
use super::gres_conf::GresLine;
use super::types::{
    CoreList, DeviceFiles, GresCount, GresDevices, GresFlags, GresName, GresType, LinksRow,
    MultipleFiles,
};

/// The JSON layout of a [`GresLine`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GresLineWire {
    #[serde(rename = "Name")]
    name: GresName,
    #[serde(rename = "Type", default, skip_serializing_if = "Option::is_none")]
    gres_type: Option<GresType>,
    #[serde(rename = "File", default, skip_serializing_if = "Option::is_none")]
    file: Option<DeviceFiles>,
    #[serde(
        rename = "MultipleFiles",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    multiple_files: Option<MultipleFiles>,
    #[serde(rename = "Count", default, skip_serializing_if = "Option::is_none")]
    count: Option<String>,
    #[serde(rename = "Cores", default, skip_serializing_if = "Option::is_none")]
    cores: Option<CoreList>,
    #[serde(rename = "Links", default, skip_serializing_if = "Option::is_none")]
    links: Option<LinksRow>,
    #[serde(rename = "Flags", default, skip_serializing_if = "Option::is_none")]
    flags: Option<GresFlags>,
}

impl TryFrom<GresLineWire> for GresLine {
    type Error = ConfigError;
    fn try_from(w: GresLineWire) -> Result<Self, ConfigError> {
        let devices = match (w.file, w.multiple_files) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::FileAndMultipleFiles {
                    node: "<relation>".to_string(),
                });
            }
            (Some(f), None) => Some(GresDevices::File(f)),
            (None, Some(m)) => Some(GresDevices::Multiple(m)),
            (None, None) => None,
        };
        let count = w
            .count
            .as_deref()
            .map(GresCount::try_from)
            .transpose()?
            .map(GresCount::get);
        Ok(GresLine {
            name: w.name,
            gres_type: w.gres_type,
            devices,
            count,
            cores: w.cores,
            links: w.links,
            flags: w.flags.unwrap_or_default(),
        })
    }
}

impl From<GresLine> for GresLineWire {
    fn from(r: GresLine) -> Self {
        let (file, multiple_files) = match r.devices {
            Some(GresDevices::File(f)) => (Some(f), None),
            Some(GresDevices::Multiple(m)) => (None, Some(m)),
            None => (None, None),
        };
        GresLineWire {
            name: r.name,
            gres_type: r.gres_type,
            file,
            multiple_files,
            count: r.count.map(|c| c.to_string()),
            cores: r.cores,
            links: r.links,
            flags: (!r.flags.is_empty()).then_some(r.flags),
        }
    }
}

/// [`GresLine`] is written as its `GresLineWire` layout.
impl Serialize for GresLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        GresLineWire::from(self.clone()).serialize(serializer)
    }
}

/// [`GresLine`] is read through its `GresLineWire` layout, refusing what its `TryFrom`
/// refuses.
impl<'de> Deserialize<'de> for GresLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        GresLine::try_from(GresLineWire::deserialize(deserializer)?)
            .map_err(serde::de::Error::custom)
    }
}
