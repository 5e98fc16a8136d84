//! End-to-end tests: blocks.
