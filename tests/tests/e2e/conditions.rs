//! End-to-end tests: conditions.
