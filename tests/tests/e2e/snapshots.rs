//! End-to-end tests: snapshots.
