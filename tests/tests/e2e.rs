//! End-to-end tests: one test binary (one link) with a module per area.
//! Each test starts its own server on port 0 with its own temporary
//! directory and manual clock, and never sleeps.

mod e2e {
    mod addressing;
    mod admin;
    mod append;
    mod basics;
    mod batch;
    mod blobs;
    mod blocks;
    mod checksums;
    mod conditions;
    mod connection;
    mod containers;
    mod contention;
    mod copy;
    mod copy_remote;
    mod copy_sources;
    mod cors;
    mod durability;
    mod errors;
    mod expiry;
    mod from_url;
    mod full_disk;
    mod gc;
    mod history;
    mod hostile;
    mod leases;
    mod listing;
    mod metrics;
    mod oauth;
    mod pages;
    mod restore;
    mod snapshots;
    mod tags;
    mod tiers;
    mod versions;
}
