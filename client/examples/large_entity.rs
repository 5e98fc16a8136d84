//! Stores a value too large for a table entity as a blob, keeps the pointer
//! string as the entity would, reads it back verified, shows a stale
//! pointer, and sweeps unreferenced blobs.
//!
//! Needs a server with the development account: `cargo run -p
//! stowage-server`, then `cargo run -p stowage-client --example large_entity`.
//! Another port or server: pass its endpoint
//! (`... --example large_entity -- http://127.0.0.1:10010/devstoreaccount1`) or a
//! connection string, or set `STOWAGE_BLOB_ENDPOINT` or
//! `AZURE_STORAGE_CONNECTION_STRING`.

mod common;

use std::time::Duration;

use stowage_client::patterns::large_entity::{LargeEntityStore, Pointer};
use stowage_client::{Error, UploadOptions};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let service = common::service()?;
    let container = service.container("example-large-entities");
    container.create_if_not_exists().await?;
    let store = LargeEntityStore::new(container.clone()).with_prefix("orders/");

    // Blob first, entity second: the pointer string is what the entity keeps.
    let value = vec![b'x'; 2 * 1024 * 1024];
    let pointer = store.put("order-42/attachment", value.clone()).await?;
    let entity_property: String = pointer.to_string();
    println!("entity keeps: {entity_property}");

    let read: Pointer = entity_property.parse()?;
    let bytes = store.get(&read).await?;
    println!("read {} verified bytes", bytes.len());

    // Someone overwrites the blob: the old pointer is now stale.
    container
        .blob(&pointer.blob)
        .upload(value, &UploadOptions::default())
        .await?;
    match store.get(&read).await {
        Err(Error::StalePointer { blob, .. }) => println!("stale pointer to {blob}, as expected"),
        other => println!("unexpected: {other:?}"),
    }

    // Nothing references anything now: with no grace period, all are orphans.
    let orphans = store.delete_unreferenced([], Duration::ZERO).await?;
    println!("swept {} unreferenced blob(s)", orphans.len());
    Ok(())
}
