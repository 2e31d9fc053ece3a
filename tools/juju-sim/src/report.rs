//! Readable reports.
