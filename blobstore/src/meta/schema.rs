//! The schema, created on first open.

use rusqlite::Connection;

use crate::Result;

/// Bumped with every change to the statements below; a database written by a
/// newer Stowage is refused rather than misread.
const SCHEMA_VERSION: i64 = 15;

/// The schema version this build writes.
pub(crate) fn version() -> i64 {
    SCHEMA_VERSION
}

/// Brings the database to [`SCHEMA_VERSION`], one step at a time, each step
/// in its own transaction.
pub(crate) fn migrate(conn: &Connection) -> Result<()> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(crate::Error::Corrupt(format!(
            "database schema version {version} is newer than this server ({SCHEMA_VERSION})"
        )));
    }
    if version < 1 {
        // Before the first table: only then can auto-vacuum be chosen
        // without rewriting the file (see `to_v4`).
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        create_v1(conn)?;
    }
    if version < 2 {
        conn.execute_batch(V2)?;
    }
    if version < 3 {
        conn.execute_batch(V3)?;
    }
    if version < 4 {
        to_v4(conn)?;
    }
    if version < 5 {
        conn.execute_batch(V5)?;
    }
    if version < 6 {
        conn.execute_batch(V6)?;
    }
    if version < 7 {
        conn.execute_batch(V7)?;
    }
    if version < 8 {
        to_v8(conn)?;
    }
    if version < 9 {
        conn.execute_batch(V9)?;
    }
    if version < 10 {
        conn.execute_batch(V10)?;
    }
    if version < 11 {
        conn.execute_batch(V11)?;
    }
    if version < 12 {
        conn.execute_batch(V12)?;
    }
    if version < 13 {
        conn.execute_batch(V13)?;
    }
    if version < 15 {
        conn.execute_batch(V15)?;
    }
    Ok(())
}

/// Version 4: the file gives space back, and garbage is found by age.
///
/// `auto_vacuum = INCREMENTAL` keeps the bookkeeping that lets
/// `PRAGMA incremental_vacuum` move free pages to the end of the file and
/// cut them off; the collector runs it after it deleted something (without
/// it the file only ever grows: inline extents of overwritten blobs leave
/// free pages that are reused but never returned). A database created
/// without it is rewritten once by `VACUUM` (which cannot run inside a
/// transaction, so this step is not atomic; if it is interrupted, it runs
/// again on the next open and skips what is done).
///
/// The index on `(since, extent)` lets each batch of the collector start
/// where the previous one stopped instead of sorting the whole table.
fn to_v4(conn: &Connection) -> Result<()> {
    let mode: i64 = conn.pragma_query_value(None, "auto_vacuum", |r| r.get(0))?;
    if mode != AUTO_VACUUM_INCREMENTAL {
        // Takes a while on a large file, and room for a copy of it.
        tracing::info!("rewriting the metadata database once so that it can give space back");
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        conn.execute_batch("VACUUM")?;
    }
    conn.execute_batch(V4)?;
    Ok(())
}

/// What `PRAGMA auto_vacuum` reads for INCREMENTAL.
const AUTO_VACUUM_INCREMENTAL: i64 = 2;

const V4: &str = "
    BEGIN;
    CREATE INDEX garbage_by_time ON garbage(since, extent);
    PRAGMA user_version = 4;
    COMMIT;
";

/// Version 2: small extents (up to `extents::INLINE_MAX`) live in the
/// database, written in the transaction that references them; blobs are
/// indexed by ETag.
const V2: &str = "
    BEGIN;
    CREATE TABLE inline_extents (
        extent TEXT PRIMARY KEY,
        data BLOB NOT NULL
    );
    -- The highest ETag, read at start-up, without scanning every blob.
    CREATE INDEX blobs_by_etag ON blobs(etag);
    PRAGMA user_version = 2;
    COMMIT;
";

/// Version 3: the blobs with only uncommitted blocks, by container. They
/// are few, so the index is small and most writes never touch it; a listing
/// asks it whether its container has any, and when none, finds groups in
/// the listing key alone, without reading each row for `committed`.
const V3: &str = "
    BEGIN;
    CREATE INDEX blobs_uncommitted ON blobs(container_id) WHERE committed = 0;
    PRAGMA user_version = 3;
    COMMIT;
";

/// Version 5: Put Block and Put Block List cost the same however many
/// blocks a blob has staged. Each blob's count of uncommitted blocks and
/// the time of its newest one are kept in a row of their own (the limit of
/// 100,000 is checked by reading it, not by counting; the collector finds
/// blobs whose blocks expired through its index instead of grouping every
/// staged block, which made the per-block time index useless), and
/// committed blocks are indexed by id (Put Block List looks each listed
/// block up; the partial index leaves blobs written whole, whose extents
/// have no block id, out of it).
const V5: &str = "
    BEGIN;
    CREATE TABLE staged_counts (
        blob_id INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        newest INTEGER NOT NULL
    );
    INSERT INTO staged_counts (blob_id, n, newest)
        SELECT blob_id, COUNT(*), MAX(staged_at) FROM blocks GROUP BY blob_id;
    CREATE INDEX staged_counts_by_newest ON staged_counts(newest);
    DROP INDEX blocks_by_time;
    CREATE INDEX blob_extents_by_block ON blob_extents(blob_id, block_id)
        WHERE block_id IS NOT NULL;
    PRAGMA user_version = 5;
    COMMIT;
";

/// Version 6: append blobs can be sealed (Append Blob Seal); every blob
/// written before is not.
const V6: &str = "
    BEGIN;
    ALTER TABLE blobs ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
    PRAGMA user_version = 6;
    COMMIT;
";

/// Version 7: a NULL content type now reads back as no `Content-Type` (what
/// Set Blob Properties without one leaves), and new blobs store the default
/// `application/octet-stream` themselves. Until version 3 NULL read back as
/// that default, so existing rows keep their answer by storing it.
const V7: &str = "
    BEGIN;
    UPDATE blobs SET content_type = 'application/octet-stream' WHERE content_type IS NULL;
    PRAGMA user_version = 7;
    COMMIT;
";

/// Version 8: access tiers. When Set Blob Tier last changed the tier, and a
/// pending rehydration out of the archive tier (target, priority, the time
/// it completes). Every blob written before has none.
fn to_v8(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "
        BEGIN;
        ALTER TABLE blobs ADD COLUMN access_tier_changed_at INTEGER;
        ALTER TABLE blobs ADD COLUMN rehydrate_to TEXT;
        ALTER TABLE blobs ADD COLUMN rehydrate_priority TEXT;
        ALTER TABLE blobs ADD COLUMN rehydrate_done_at INTEGER;
        PRAGMA user_version = 8;
        COMMIT;
        ",
    )?;
    Ok(())
}

/// Version 9: blob index tags, one row per (blob version, key). The
/// account, container and blob names are repeated in each row so that Find
/// Blobs by Tags reads one index, keyed (account, key, value, container,
/// name) over base blobs, and touches only the rows of the key and value
/// range it asks for; the rows go with their blob (`ON DELETE CASCADE`).
const V9: &str = "
    BEGIN;
    CREATE TABLE blob_tags (
        blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        account TEXT NOT NULL,
        container TEXT NOT NULL,
        name TEXT NOT NULL,
        is_base INTEGER NOT NULL,
        PRIMARY KEY (blob_id, key)
    ) WITHOUT ROWID;
    CREATE INDEX blob_tags_find ON blob_tags(account, key, value, container, name)
        WHERE is_base = 1;
    PRAGMA user_version = 9;
    COMMIT;
";

/// Version 10: page blobs. `page_blobs` holds what only a page blob has:
/// its sequence number, and for an incremental-copy destination the snapshot
/// the last copy made of it, the source blob it is tied to and the source
/// snapshot last copied. `page_ranges` is its page
/// map: the written bytes `[start_at, end_at)` are the bytes of `extent`
/// from `extent_at`, runs never overlap, and what no run covers reads as
/// zeros. A snapshot copies its base's runs and so shares the extents; the
/// index by extent is how the garbage collector asks whether anything still
/// reads one.
const V10: &str = "
    BEGIN;
    CREATE TABLE page_blobs (
        blob_id INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
        sequence_number INTEGER NOT NULL,
        incremental_copy INTEGER NOT NULL DEFAULT 0,
        copy_destination_snapshot TEXT,
        incremental_source TEXT,
        incremental_source_snapshot TEXT
    );
    CREATE TABLE page_ranges (
        blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
        start_at INTEGER NOT NULL,
        end_at INTEGER NOT NULL,
        extent TEXT NOT NULL,
        extent_at INTEGER NOT NULL,
        PRIMARY KEY (blob_id, start_at)
    ) WITHOUT ROWID;
    CREATE INDEX page_ranges_by_extent ON page_ranges(extent);
    PRAGMA user_version = 10;
    COMMIT;
";

/// Version 11: blob versions and soft-deleted blobs are rows of `blobs`
/// beside the base blob and its snapshots (sharing extents like them).
/// `version_id` is the version id of a row's content when versioning gave
/// it one; `deleted_at` and `purge_at` mark a soft-deleted row and when it
/// is purged. Rows that only a version id or `include=deleted` reaches have
/// `is_base = -1` and a key in `snapshot` (`v`, `s` or `b` and an id, see
/// `meta::versions`), so every query of base blobs and snapshots leaves
/// them out. The retention policy of each account is a row of its own, read
/// inside the transaction that deletes.
const V11: &str = "
    BEGIN;
    ALTER TABLE blobs ADD COLUMN version_id TEXT;
    ALTER TABLE blobs ADD COLUMN deleted_at INTEGER;
    ALTER TABLE blobs ADD COLUMN purge_at INTEGER;
    CREATE INDEX blobs_by_purge ON blobs(purge_at) WHERE purge_at IS NOT NULL;
    CREATE TABLE blob_delete_retention (
        account TEXT PRIMARY KEY,
        days INTEGER NOT NULL,
        allow_permanent_delete INTEGER NOT NULL
    );
    PRAGMA user_version = 11;
    COMMIT;
";

/// Version 12: soft-deleted containers and blob expiry.
///
/// A soft-deleted container keeps its row, its blobs and its policies; its
/// `name` becomes a key that no container name can equal (see
/// `meta::deleted_containers`), and these columns hold the name it had, the
/// version that tells it apart from other deletions of that name, when it
/// was deleted and when it is purged. `expires_at` is the time Set Blob
/// Expiry gave a blob. Both are indexed for the collector, which purges
/// what is due in time order; rows written before have neither.
const V12: &str = "
    BEGIN;
    ALTER TABLE containers ADD COLUMN deleted_name TEXT;
    ALTER TABLE containers ADD COLUMN deleted_version TEXT;
    ALTER TABLE containers ADD COLUMN deleted_at INTEGER;
    ALTER TABLE containers ADD COLUMN purge_at INTEGER;
    CREATE INDEX containers_by_purge ON containers(purge_at) WHERE purge_at IS NOT NULL;
    ALTER TABLE blobs ADD COLUMN expires_at INTEGER;
    CREATE INDEX blobs_by_expiry ON blobs(expires_at) WHERE expires_at IS NOT NULL;
    PRAGMA user_version = 12;
    COMMIT;
";

/// Version 13: copies from other hosts. A copy is pending while the
/// server fetches its bytes, and may end failed or aborted; the status
/// (NULL for `success`, what every earlier copy is) and its description
/// are kept with the other copy columns, and the pending ones are found by
/// a small index when the server starts (to end those a restart
/// interrupted).
const V13: &str = "
    BEGIN;
    ALTER TABLE blobs ADD COLUMN copy_status TEXT;
    ALTER TABLE blobs ADD COLUMN copy_status_description TEXT;
    CREATE INDEX blobs_copy_pending ON blobs(copy_status) WHERE copy_status = 'pending';
    PRAGMA user_version = 13;
    COMMIT;
";

/// Version 15: a version number on each account's service properties,
/// raised by every Set Blob Service Properties. In cluster mode a node
/// keeps the document it read with its version, and a read of a blob
/// returns the version in the same statement, so the node reads the
/// document again only when another node changed it
/// (`docs/cluster.md`, "Round trips").
const V15: &str = "
    BEGIN;
    ALTER TABLE service_properties ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    PRAGMA user_version = 15;
    COMMIT;
";

fn create_v1(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "
        BEGIN;
        CREATE TABLE containers (
            id INTEGER PRIMARY KEY,
            account TEXT NOT NULL,
            name TEXT NOT NULL,
            etag TEXT NOT NULL,
            last_modified INTEGER NOT NULL,
            metadata TEXT NOT NULL,
            public_access TEXT,
            default_encryption_scope TEXT NOT NULL,
            deny_encryption_scope_override INTEGER NOT NULL,
            lease_id TEXT,
            lease_duration INTEGER,
            lease_expires_at INTEGER,
            lease_break_at INTEGER,
            lease_broken INTEGER NOT NULL DEFAULT 0,
            UNIQUE (account, name)
        );
        -- One row per blob version: the base blob (is_base = 1, snapshot '')
        -- and its snapshots. Listing order is (name, is_base, snapshot):
        -- snapshots oldest first, then the base blob.
        CREATE TABLE blobs (
            id INTEGER PRIMARY KEY,
            container_id INTEGER NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            is_base INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            committed INTEGER NOT NULL,
            blob_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            etag TEXT NOT NULL,
            last_modified INTEGER NOT NULL,
            creation_time INTEGER NOT NULL,
            content_type TEXT,
            content_encoding TEXT,
            content_language TEXT,
            content_md5 BLOB,
            cache_control TEXT,
            content_disposition TEXT,
            metadata TEXT NOT NULL,
            committed_block_count INTEGER,
            access_tier TEXT,
            copy_id TEXT,
            copy_source TEXT,
            copy_progress TEXT,
            copy_completion_time INTEGER,
            lease_id TEXT,
            lease_duration INTEGER,
            lease_expires_at INTEGER,
            lease_break_at INTEGER,
            lease_broken INTEGER NOT NULL DEFAULT 0,
            UNIQUE (container_id, name, is_base, snapshot)
        );
        -- The content of a blob version: extents in order. For a block blob
        -- committed with Put Block List each row is one committed block
        -- (block_id set; extent '' for an empty block).
        CREATE TABLE blob_extents (
            blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            extent TEXT NOT NULL,
            len INTEGER NOT NULL,
            block_id TEXT,
            PRIMARY KEY (blob_id, seq)
        );
        CREATE INDEX blob_extents_by_extent ON blob_extents(extent);
        -- Uncommitted blocks staged by Put Block, per base blob.
        CREATE TABLE blocks (
            blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
            block_id TEXT NOT NULL,
            extent TEXT NOT NULL,
            len INTEGER NOT NULL,
            staged_at INTEGER NOT NULL,
            PRIMARY KEY (blob_id, block_id)
        );
        CREATE INDEX blocks_by_extent ON blocks(extent);
        CREATE INDEX blocks_by_time ON blocks(staged_at);
        -- Extents no longer referenced, deleted after a grace period.
        CREATE TABLE garbage (
            extent TEXT PRIMARY KEY,
            since INTEGER NOT NULL
        );
        -- Stored access policies of a container's ACL, in document order.
        CREATE TABLE container_policies (
            container_id INTEGER NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            start INTEGER,
            expiry INTEGER,
            permission TEXT,
            PRIMARY KEY (container_id, seq)
        );
        CREATE TABLE service_properties (
            account TEXT PRIMARY KEY,
            document TEXT NOT NULL
        );
        PRAGMA user_version = 1;
        COMMIT;
        ",
    )?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Container 1 with two base blobs of block type, 1 (`b`) and 2
    /// (`d`), neither committed: rows for tests of the block tables.
    pub(crate) fn insert_two_blobs(conn: &Connection) {
        conn.execute_batch(
            "INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', 'e', 0, '', '', 0);
             INSERT INTO blobs (id, container_id, name, is_base, snapshot, committed,
                 blob_type, size, etag, last_modified, creation_time, metadata)
             VALUES (1, 1, 'b', 1, '', 0, 'BlockBlob', 0, 'e', 0, 0, ''),
                    (2, 1, 'd', 1, '', 0, 'BlockBlob', 0, 'e', 0, 0, '');",
        )
        .unwrap();
    }

    fn version(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    }

    fn has_index(conn: &Connection, name: &str) -> bool {
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    }

    /// A database written at version 2 is brought to the current version
    /// on open, and opening it again changes nothing.
    #[test]
    fn a_version_2_database_gains_the_index_of_uncommitted_blobs() {
        let conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
        conn.execute_batch(V2).unwrap();
        assert_eq!(version(&conn), 2);
        assert!(!has_index(&conn, "blobs_uncommitted"));
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "blobs_uncommitted"));
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
    }

    /// A version 7 database gains the tag table and its search index; its
    /// blobs have no tags.
    #[test]
    fn a_version_7_database_gains_the_tag_table() {
        let conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
        for step in [V2, V3, V4, V5, V6, V7] {
            conn.execute_batch(step).unwrap();
        }
        insert_two_blobs(&conn);
        assert_eq!(version(&conn), 7);
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "blob_tags_find"));
        let n: i64 = conn
            .query_row("SELECT count(*) FROM blob_tags", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    fn auto_vacuum(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "auto_vacuum", |r| r.get(0))
            .unwrap()
    }

    /// A version 3 file in WAL mode, written without auto-vacuum, is
    /// rewritten once with it, keeps its rows, and then gives pages back.
    #[test]
    fn a_version_3_database_is_vacuumed_into_incremental_auto_vacuum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            create_v1(&conn).unwrap();
            conn.execute_batch(V2).unwrap();
            conn.execute_batch(V3).unwrap();
            assert_eq!(auto_vacuum(&conn), 0);
            let big = vec![7u8; 100_000];
            for i in 0..50 {
                conn.execute(
                    "INSERT INTO inline_extents (extent, data) VALUES (?1, ?2)",
                    rusqlite::params![format!("i.{i}"), big],
                )
                .unwrap();
            }
        }
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert_eq!(auto_vacuum(&conn), AUTO_VACUUM_INCREMENTAL);
        assert!(has_index(&conn, "garbage_by_time"));
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM inline_extents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 50);

        let pages = |c: &Connection| -> i64 {
            c.pragma_query_value(None, "page_count", |r| r.get(0))
                .unwrap()
        };
        let before = pages(&conn);
        conn.execute("DELETE FROM inline_extents", []).unwrap();
        super::super::reclaim_free_pages(&conn).unwrap();
        let after = pages(&conn);
        assert!(after * 10 < before, "{before} pages, then {after}");
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
    }

    #[test]
    fn a_new_database_starts_with_incremental_auto_vacuum() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("n.sqlite")).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        migrate(&conn).unwrap();
        assert_eq!(auto_vacuum(&conn), AUTO_VACUUM_INCREMENTAL);
        assert_eq!(version(&conn), SCHEMA_VERSION);
    }

    /// A version 3 database gains the counts of staged blocks, computed
    /// from the blocks it holds, and the index of committed blocks.
    #[test]
    fn an_older_database_gains_the_counts_of_staged_blocks() {
        let conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
        conn.execute_batch(V2).unwrap();
        conn.execute_batch(V3).unwrap();
        insert_two_blobs(&conn);
        conn.execute_batch(
            "INSERT INTO blocks (blob_id, block_id, extent, len, staged_at)
             VALUES (1, 'QQ==', 'x', 1, 5), (1, 'Qg==', 'y', 1, 9), (2, 'QQ==', 'z', 1, 4);",
        )
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "blob_extents_by_block"));
        assert!(!has_index(&conn, "blocks_by_time"));
        let counts: Vec<(i64, i64, i64)> = conn
            .prepare("SELECT blob_id, n, newest FROM staged_counts ORDER BY blob_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(counts, vec![(1, 2, 9), (2, 1, 4)]);
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
    }

    /// A version 3 database with a blob in it gains the `sealed` column,
    /// false for the blob already there.
    #[test]
    fn a_version_3_database_gains_the_sealed_column() {
        let conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
        conn.execute_batch(V2).unwrap();
        conn.execute_batch(V3).unwrap();
        conn.execute_batch(
            "INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', '0x1', 0, '', '', 0);
             INSERT INTO blobs (container_id, name, is_base, snapshot, committed, blob_type,
                size, etag, last_modified, creation_time, metadata)
             VALUES (1, 'b', 1, '', 1, 'AppendBlob', 0, '0x2', 0, 0, '');",
        )
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        let sealed: bool = conn
            .query_row("SELECT sealed FROM blobs WHERE name = 'b'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(!sealed);
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
    }

    /// A version 3 row without a content type keeps reading back as
    /// `application/octet-stream` after the migration.
    #[test]
    fn a_version_3_database_stores_the_default_content_type() {
        let conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
        conn.execute_batch(V2).unwrap();
        conn.execute_batch(V3).unwrap();
        conn.execute_batch(
            "INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', 'e', 0, '', '', 0);
             INSERT INTO blobs (container_id, name, is_base, snapshot, committed, blob_type,
                 size, etag, last_modified, creation_time, metadata, content_type)
             VALUES (1, 'old', 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '', NULL),
                    (1, 'typed', 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '', 'text/plain');",
        )
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        let types: Vec<Option<String>> = conn
            .prepare("SELECT content_type FROM blobs ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            types,
            [
                Some("application/octet-stream".to_owned()),
                Some("text/plain".to_owned())
            ]
        );
    }

    /// Takes a database of this version back to version 9: drops what
    /// versions 10 to 13 added.
    const REWIND_TO_9: &str = "
             DROP TABLE page_ranges;
             DROP TABLE page_blobs;
             DROP INDEX blobs_by_purge;
             ALTER TABLE blobs DROP COLUMN version_id;
             ALTER TABLE blobs DROP COLUMN deleted_at;
             ALTER TABLE blobs DROP COLUMN purge_at;
             DROP TABLE blob_delete_retention;
             DROP INDEX containers_by_purge;
             DROP INDEX blobs_by_expiry;
             ALTER TABLE containers DROP COLUMN deleted_name;
             ALTER TABLE containers DROP COLUMN deleted_version;
             ALTER TABLE containers DROP COLUMN deleted_at;
             ALTER TABLE containers DROP COLUMN purge_at;
             ALTER TABLE blobs DROP COLUMN expires_at;
             DROP INDEX blobs_copy_pending;
             ALTER TABLE blobs DROP COLUMN copy_status;
             ALTER TABLE blobs DROP COLUMN copy_status_description;
             ALTER TABLE service_properties DROP COLUMN version;
             PRAGMA user_version = 9;";

    /// A version 13 database gains the service properties' version: 0 for
    /// a document already there, raised by each write of it.
    #[test]
    fn a_version_13_database_gains_the_service_properties_version() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(
            "ALTER TABLE service_properties DROP COLUMN version;
             PRAGMA user_version = 13;
             INSERT INTO service_properties (account, document) VALUES ('a', 'old');",
        )
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        let at = |conn: &Connection| super::super::service_properties_at(conn, "a").unwrap();
        assert_eq!(at(&conn), (Some(0), Some("old".into())));
        assert_eq!(
            super::super::set_service_properties(&conn, "a", "new").unwrap(),
            1
        );
        assert_eq!(at(&conn), (Some(1), Some("new".into())));
        assert_eq!(
            super::super::set_service_properties(&conn, "b", "first").unwrap(),
            1
        );
        assert_eq!(
            super::super::service_properties_at(&conn, "c").unwrap(),
            (None, None)
        );
    }

    /// A version 9 database gains the copy status columns; its copies
    /// read as completed (NULL status) and none is pending.
    #[test]
    fn a_version_9_database_gains_the_copy_status() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(&format!(
            "{REWIND_TO_9}
             INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', 'e', 0, '', '', 0);
             INSERT INTO blobs (container_id, name, is_base, snapshot, committed, blob_type,
                 size, etag, last_modified, creation_time, metadata, copy_id, copy_source,
                 copy_progress, copy_completion_time)
             VALUES (1, 'b', 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '', 'id', 'src', '0/0', 0);",
        ))
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "blobs_copy_pending"));
        let row: (Option<String>, Option<String>) = conn
            .query_row(
                "SELECT copy_status, copy_status_description FROM blobs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(row, (None, None));
    }

    /// A version 7 database gains the tier columns, empty for the blobs
    /// already there (their tier, if any, stays in `access_tier`).
    #[test]
    fn a_version_7_database_gains_the_tier_columns() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(&format!(
            "ALTER TABLE blobs DROP COLUMN access_tier_changed_at;
             ALTER TABLE blobs DROP COLUMN rehydrate_to;
             ALTER TABLE blobs DROP COLUMN rehydrate_priority;
             ALTER TABLE blobs DROP COLUMN rehydrate_done_at;
             DROP TABLE blob_tags;
             {REWIND_TO_9}
             PRAGMA user_version = 7;
             INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', 'e', 0, '', '', 0);
             INSERT INTO blobs (container_id, name, is_base, snapshot, committed, blob_type,
                 size, etag, last_modified, creation_time, metadata, access_tier)
             VALUES (1, 'b', 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '', 'Cool');",
        ))
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        let row: (String, Option<i64>, Option<String>) = conn
            .query_row(
                "SELECT access_tier, access_tier_changed_at, rehydrate_to FROM blobs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(row, ("Cool".to_owned(), None, None));
    }

    /// A version 9 database with a container and a blob gains the columns
    /// of soft delete and expiry, empty for the rows already there.
    #[test]
    fn a_version_9_database_gains_soft_delete_and_expiry_columns() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(REWIND_TO_9).unwrap();
        insert_two_blobs(&conn);
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "containers_by_purge"));
        assert!(has_index(&conn, "blobs_by_expiry"));
        let (deleted, expiring): (i64, i64) = conn
            .query_row(
                "SELECT (SELECT count(*) FROM containers WHERE deleted_at IS NOT NULL),
                        (SELECT count(*) FROM blobs WHERE expires_at IS NOT NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((deleted, expiring), (0, 0));
    }

    /// A version 9 database (every table of main before versions) gains
    /// the version columns and the retention table; its rows keep reading.
    #[test]
    fn a_version_9_database_gains_the_version_columns() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(&format!(
            "{REWIND_TO_9}
             INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (1, 'a', 'c', 'e', 0, '', '', 0);
             INSERT INTO blobs (container_id, name, is_base, snapshot, committed, blob_type,
                 size, etag, last_modified, creation_time, metadata)
             VALUES (1, 'b', 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '');",
        ))
        .unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "blobs_by_purge"));
        let row: (Option<String>, Option<i64>, Option<i64>) = conn
            .query_row(
                "SELECT version_id, deleted_at, purge_at FROM blobs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(row, (None, None, None));
        let n: i64 = conn
            .query_row("SELECT count(*) FROM blob_delete_retention", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, 0);
    }

    /// A version 9 database gains the page blob tables, empty.
    #[test]
    fn a_version_9_database_gains_the_page_tables() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.execute_batch(REWIND_TO_9).unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn), SCHEMA_VERSION);
        assert!(has_index(&conn, "page_ranges_by_extent"));
        let n: i64 = conn
            .query_row("SELECT count(*) FROM page_blobs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn a_database_from_a_newer_server_is_refused() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = migrate(&conn).unwrap_err();
        assert!(matches!(err, crate::Error::Corrupt(_)), "{err:?}");
    }
}
