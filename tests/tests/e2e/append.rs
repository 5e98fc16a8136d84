//! End-to-end tests: append.
