//! End-to-end tests: blobs.
