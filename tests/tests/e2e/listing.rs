//! End-to-end tests: listing.
