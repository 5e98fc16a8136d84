//! Stowage client (see issue "Rust client and the table-engine patterns").
