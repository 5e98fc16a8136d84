//! End-to-end tests: gc.
