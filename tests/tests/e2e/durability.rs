//! End-to-end tests: durability.
