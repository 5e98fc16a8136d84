//! End-to-end test support for Stowage.
