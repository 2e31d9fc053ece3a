//! gpu module (placeholder, filled by its issue).
