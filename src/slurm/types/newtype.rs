//! The boilerplate shared by the string-backed vocabulary types.

/// Writes `items` separated by `,`: the one writer of the vocabulary's comma lists (`Links=`,
/// `MultipleFiles=`, `Flags=`).
pub(crate) fn write_comma_list<T: std::fmt::Display>(
    f: &mut std::fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
) -> std::fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// `FromStr` through the type's `TryFrom<&str>`.
macro_rules! from_str_via_try_from {
    ($ty:ident) => {
        impl std::str::FromStr for $ty {
            type Err = $crate::slurm::types::VocabError;
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Self::try_from(value)
            }
        }
    };
}

/// The text a string newtype holds: an owned `String`, or a shared `Arc<str>` for a type that
/// is cloned once per node on every controller hook ([`super::NodeName`]: a clone is then a
/// reference count, not an allocation).
/// Both are made from the checked `String` by `From` (a move for `String`).
pub trait NewtypeText: std::ops::Deref<Target = str> + From<String> {
    /// Gives the text back as a `String` (a move for `String`, a copy for `Arc<str>`).
    fn into_string(self) -> String;
}

impl NewtypeText for String {
    fn into_string(self) -> String {
        self
    }
}

impl NewtypeText for std::sync::Arc<str> {
    fn into_string(self) -> String {
        String::from(&*self)
    }
}

/// Declares the conversions of a string newtype whose only constructor is `$check`
/// (`fn(&str) -> Result<(), VocabError>`): `TryFrom<String>`, `TryFrom<&str>`, `FromStr`,
/// serde through those, `Display`, `Deref<Target = str>`, comparisons with `str`.
macro_rules! string_newtype {
    ($ty:ident, $check:path) => {
        impl $ty {
            /// The value as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The value as an owned `String`.
            pub fn into_string(self) -> String {
                $crate::slurm::types::newtype::NewtypeText::into_string(self.0)
            }
        }

        impl TryFrom<String> for $ty {
            type Error = $crate::slurm::types::VocabError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                $check(&value)?;
                Ok(Self(value.into()))
            }
        }

        impl TryFrom<&str> for $ty {
            type Error = $crate::slurm::types::VocabError;
            fn try_from(value: &str) -> Result<Self, Self::Error> {
                $check(value)?;
                Ok(Self(value.into()))
            }
        }

        from_str_via_try_from!($ty);

        impl From<$ty> for String {
            fn from(value: $ty) -> String {
                value.into_string()
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::ops::Deref for $ty {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $ty {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                *self.0 == *other
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                *self.0 == **other
            }
        }
    };
}

/// Declares the conversions of a vocabulary type parsed from text by its `TryFrom<&str>` and
/// written by its `Display`: `TryFrom<String>`, `FromStr`, and `From<T> for String` (so serde
/// can use `try_from = "String", into = "String"`).
macro_rules! parsed_newtype {
    ($ty:ident) => {
        impl TryFrom<String> for $ty {
            type Error = $crate::slurm::types::VocabError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::try_from(value.as_str())
            }
        }

        from_str_via_try_from!($ty);

        impl From<$ty> for String {
            fn from(value: $ty) -> String {
                value.to_string()
            }
        }
    };
}
