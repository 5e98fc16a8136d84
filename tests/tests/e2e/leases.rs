//! End-to-end tests: leases.
