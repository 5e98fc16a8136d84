//! End-to-end tests: errors.
