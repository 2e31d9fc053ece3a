//! charms module (placeholder, filled by its issue).
