//! Integration tests of the client and its patterns against a real
//! in-process Stowage server: one test binary with a module per area. Each
//! test starts its own server on port 0 with its own temporary directory and
//! manual clock; the client's clock moves in step with it, so lease expiry,
//! renewals and flushes are driven by advancing time, never by sleeping.

mod client {
    mod append;
    mod blobs;
    mod conditions;
    mod containers;
    mod copy;
    mod large_entity;
    mod leases;
    mod listing;
    mod log_blobs;
    mod pages;
    mod restore;
    mod retries;
    mod support;
    mod table_lock;
    mod tags;
    mod tiers;
    mod uploads;
    mod versions;
}
