//! End-to-end tests: containers.
