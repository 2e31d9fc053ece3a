//! interface module (placeholder, filled by its issue).
