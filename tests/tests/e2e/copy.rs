//! End-to-end tests: copy.
