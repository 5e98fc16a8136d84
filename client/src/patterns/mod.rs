//! What a table engine needs from a blob store, built on the client.
//!
//! - [`large_entity`]: values too large for a table entity live in blobs;
//!   the entity keeps a [`Pointer`](large_entity::Pointer) that is verified
//!   on every read.
//! - [`log_blobs`]: log records written in batches to append blobs named by
//!   hour, read back by time range through prefix listing.
//! - [`table_lock`]: one lease per table, renewed in the background, with a
//!   fencing token that grows from holder to holder.
//!
//! Every pattern reads time through the client's [`Clock`](crate::Clock),
//! so tests drive renewals, flushes and expiry with a manual clock.

pub mod large_entity;
pub mod log_blobs;
pub mod table_lock;
