//! End-to-end tests: contention.
