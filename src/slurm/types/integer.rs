//! Slurm's integer settings: the widths of `parse_value.c` (`s_p_handle_uint16/32/64`), with
//! the top values that Slurm reserves (`NO_VAL*` = max − 1 and `INFINITE*` = max) kept out.

use super::VocabError;

/// The C type a key is stored in (`S_P_UINT16`, `S_P_UINT32`, `S_P_UINT64` in
/// `read_config.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntWidth {
    /// `uint16_t`: 0 ..= 65533 (65534 is `NO_VAL16`, 65535 `INFINITE16`).
    U16,
    /// `uint32_t`: 0 ..= 4294967293 (`NO_VAL`, `INFINITE` reserved).
    U32,
    /// `uint64_t`: 0 ..= 2^64 − 3 (`NO_VAL64`, `INFINITE64` reserved).
    U64,
}

impl IntWidth {
    /// The largest ordinary value Slurm gives no special meaning.
    pub fn max(self) -> u64 {
        match self {
            IntWidth::U16 => u64::from(u16::MAX) - 2,
            IntWidth::U32 => u64::from(u32::MAX) - 2,
            IntWidth::U64 => u64::MAX - 2,
        }
    }
}

/// A number for a Slurm integer key: decimal digits within the key's width, or (where the
/// key allows it) `UNLIMITED` / `INFINITE`. Slurm also reads hex, octal and a `k` suffix;
/// those are refused here (one spelling, no surprises).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlurmInt {
    /// A plain number.
    Value(u64),
    /// `UNLIMITED` / `INFINITE` (written `UNLIMITED`).
    Unlimited,
}

impl SlurmInt {
    /// Parses `value` for a key of `width`; `unlimited` says whether the key takes
    /// `UNLIMITED`/`INFINITE`.
    pub fn parse(value: &str, width: IntWidth, unlimited: bool) -> Result<SlurmInt, VocabError> {
        let what = match width {
            IntWidth::U16 => "16-bit Slurm integer",
            IntWidth::U32 => "32-bit Slurm integer",
            IntWidth::U64 => "64-bit Slurm integer",
        };
        if unlimited
            && ["UNLIMITED", "INFINITE"]
                .iter()
                .any(|k| k.eq_ignore_ascii_case(value))
        {
            return Ok(SlurmInt::Unlimited);
        }
        let also = if unlimited {
            ", UNLIMITED or INFINITE"
        } else {
            ""
        };
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(VocabError::new(
                what,
                value,
                format!("expected a decimal number 0..={}{also}", width.max()),
            ));
        }
        if value.len() > 1 && value.starts_with('0') {
            // Slurm reads numbers with strtoul(.., 0): a leading 0 means octal (010 is 8,
            // 09 is an error).
            return Err(VocabError::new(
                what,
                value,
                "a leading 0 makes Slurm read the number as octal; write it without",
            ));
        }
        match value.parse::<u64>() {
            Ok(n) if n <= width.max() => Ok(SlurmInt::Value(n)),
            _ => Err(VocabError::new(
                what,
                value,
                format!(
                    "larger than {} (Slurm's limit for this key; higher values are reserved or overflow)",
                    width.max()
                ),
            )),
        }
    }

    /// The number (`None` for unlimited).
    pub fn value(self) -> Option<u64> {
        match self {
            SlurmInt::Value(n) => Some(n),
            SlurmInt::Unlimited => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_reserved_values() {
        assert_eq!(
            SlurmInt::parse("65533", IntWidth::U16, false).unwrap(),
            SlurmInt::Value(65533)
        );
        for bad in [
            "65534",
            "65535",
            "70000",
            "4294967295",
            "-1",
            "abc",
            "",
            "0x10",
            "1k",
        ] {
            assert!(SlurmInt::parse(bad, IntWidth::U16, false).is_err(), "{bad}");
        }
        assert!(SlurmInt::parse("4294967293", IntWidth::U32, false).is_ok());
        assert!(SlurmInt::parse("4294967294", IntWidth::U32, false).is_err());
        assert!(SlurmInt::parse("99999999999", IntWidth::U32, true).is_err());
        assert_eq!(
            SlurmInt::parse("unlimited", IntWidth::U32, true).unwrap(),
            SlurmInt::Unlimited
        );
        assert!(SlurmInt::parse("UNLIMITED", IntWidth::U32, false).is_err());
        assert!(SlurmInt::parse("18446744073709551613", IntWidth::U64, false).is_ok());
        assert!(SlurmInt::parse("18446744073709551614", IntWidth::U64, false).is_err());
        assert!(SlurmInt::parse("99999999999999999999999", IntWidth::U64, false).is_err());
    }
}
