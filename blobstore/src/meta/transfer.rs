//! Copying the metadata between the two backends, table by table, for the
//! admin commands of cluster mode (docs/cluster.md#admin-commands): a
//! backup of a PostgreSQL database into a data directory's SQLite file, and
//! a restore of such a file into PostgreSQL.
//!
//! Both schemas hold the same tables and columns (PostgreSQL's version 1 is
//! SQLite's version 13), so a row is copied column by column, by name.
//! One side of a copy is always SQLite; its foreign keys give the order in
//! which the tables are filled (a parent before the tables referring to
//! it).

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::sql::{Dialect, Sql, Value, vals};
use crate::{Error, Result};

/// The tables of `conn`, schema bookkeeping excluded.
pub(crate) fn tables(conn: &dyn Sql) -> Result<Vec<String>> {
    let sql = conn.dialect().pick(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'
          ORDER BY name",
        "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            AND table_name NOT LIKE 'stowage\\_%'
          ORDER BY 1",
    );
    conn.query_map(sql, &[], |r| r.get(0))
}

/// The columns of `table` in `conn`, in their order.
pub(crate) fn columns(conn: &dyn Sql, table: &str) -> Result<Vec<String>> {
    let sql = conn.dialect().pick(
        "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
        "SELECT CAST(column_name AS TEXT) FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ?1
          ORDER BY ordinal_position",
    );
    conn.query_map(sql, &vals![table], |r| r.get(0))
}

/// The tables of SQLite connection `sqlite`, each after the tables its
/// foreign keys refer to.
pub(crate) fn fill_order(sqlite: &dyn Sql) -> Result<Vec<String>> {
    let mut parents: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for table in tables(sqlite)? {
        let refs = sqlite.query_map(
            "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)",
            &vals![&table],
            |r| r.get::<String>(0),
        )?;
        parents.insert(table, refs);
    }
    let mut order: Vec<String> = Vec::with_capacity(parents.len());
    while order.len() < parents.len() {
        let before = order.len();
        for (table, refs) in &parents {
            if !order.contains(table) && refs.iter().all(|p| p == table || order.contains(p)) {
                order.push(table.clone());
            }
        }
        if order.len() == before {
            return Err(Error::Corrupt(
                "the tables' foreign keys refer to each other in a cycle".into(),
            ));
        }
    }
    Ok(order)
}

/// True when no table of `conn` holds a row.
pub(crate) fn is_empty(conn: &dyn Sql) -> Result<bool> {
    for table in tables(conn)? {
        let any = conn.query_row(&format!("SELECT 1 FROM {table} LIMIT 1"), &[], |_| Ok(()))?;
        if any.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Copies every table of `from` into the same tables of `to` (which must
/// be empty), in `order`, and returns the rows copied. Every column of a
/// source table must exist in the destination; a destination column the
/// source lacks keeps its default.
pub(crate) fn copy_tables(from: &dyn Sql, to: &dyn Sql, order: &[String]) -> Result<u64> {
    let present = tables(from)?;
    let mut rows = 0;
    for table in order {
        if !present.contains(table) {
            continue;
        }
        let source = columns(from, table)?;
        let dest = columns(to, table)?;
        if let Some(missing) = source.iter().find(|c| !dest.contains(c)) {
            return Err(Error::Corrupt(format!(
                "column {table}.{missing} has no place in the destination database \
                 (its schema is older or newer than the source's)"
            )));
        }
        let list = source
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let params = (1..=source.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let insert = format!("INSERT INTO {table} ({list}) VALUES ({params})");
        let select = format!("SELECT {list} FROM {table}");
        let mut values: Vec<Value<'static>> = Vec::with_capacity(source.len());
        let mut failed = None;
        from.each(&select, &[], &mut |r| {
            values.clear();
            for i in 0..source.len() {
                values.push(owned(r.value(i)?));
            }
            if let Err(e) = to.execute(&insert, &values) {
                failed = Some(e);
                return Ok(false);
            }
            rows += 1;
            Ok(true)
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(rows)
}

/// After rows were inserted with their ids, moves each identity column's
/// sequence past the highest id (PostgreSQL; SQLite needs nothing).
pub(crate) fn reset_identities(conn: &dyn Sql) -> Result<()> {
    if conn.dialect() != Dialect::Postgres {
        return Ok(());
    }
    let identities = conn.query_map(
        "SELECT CAST(table_name AS TEXT), CAST(column_name AS TEXT)
           FROM information_schema.columns
          WHERE table_schema = current_schema() AND is_identity = 'YES'",
        &[],
        |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
    )?;
    for (table, column) in identities {
        conn.query_row(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', '{column}'),
                               (SELECT COALESCE(MAX({column}), 0) + 1 FROM {table}), false)"
            ),
            &[],
            |_| Ok(()),
        )?;
    }
    Ok(())
}

/// `v` with what it borrows copied.
fn owned(v: Value<'_>) -> Value<'static> {
    match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(i),
        Value::Real(f) => Value::Real(f),
        Value::Text(t) => Value::Text(Cow::Owned(t.into_owned())),
        Value::Blob(b) => Value::Blob(Cow::Owned(b.into_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::meta::schema::migrate(&conn).unwrap();
        conn
    }

    #[test]
    fn parents_are_filled_before_the_tables_that_refer_to_them() {
        let conn = sqlite();
        let order = fill_order(&conn).unwrap();
        let at = |t: &str| order.iter().position(|x| x == t).unwrap();
        assert!(at("containers") < at("blobs"));
        for child in ["blob_extents", "blocks", "page_ranges", "blob_tags"] {
            assert!(at("blobs") < at(child), "{child}: {order:?}");
        }
        assert_eq!(order.len(), tables(&conn).unwrap().len());
    }

    #[test]
    fn tables_copy_row_for_row_between_databases() {
        let from = sqlite();
        from.execute_batch(
            "INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 default_encryption_scope, deny_encryption_scope_override)
             VALUES (7, 'acct', 'c', '\"e\"', 5, '{}', '$account-encryption-key', 0);
             INSERT INTO inline_extents (extent, data) VALUES ('i.x', x'00ff10');",
        )
        .unwrap();
        let to = sqlite();
        assert!(is_empty(&to).unwrap());
        let order = fill_order(&from).unwrap();
        assert_eq!(copy_tables(&from, &to, &order).unwrap(), 2);
        assert!(!is_empty(&to).unwrap());
        let data: Vec<u8> = to
            .query_row("SELECT data FROM inline_extents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(data, vec![0, 0xff, 0x10]);
        let id: i64 = to
            .query_row("SELECT id FROM containers WHERE name = 'c'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(id, 7);
    }

    /// SQLite to PostgreSQL and back: every value comes back as it was
    /// (NULLs, bytes, text), and PostgreSQL's next id is past the copied
    /// ones.
    #[test]
    fn a_round_trip_through_postgresql_keeps_every_value_and_moves_the_ids_on() {
        let pg = crate::testing::TempPostgres::shared().unwrap();
        let mut conn = crate::meta::pg::PgConnection::connect(&pg.new_database().unwrap()).unwrap();
        crate::meta::pg_schema::migrate(&mut conn).unwrap();
        let from = sqlite();
        from.execute_batch(
            "INSERT INTO containers (id, account, name, etag, last_modified, metadata,
                 public_access, default_encryption_scope, deny_encryption_scope_override)
             VALUES (41, 'acct', 'c', '\"e\"', 5, '{}', NULL, '$account-encryption-key', 0);
             INSERT INTO blobs (id, container_id, name, is_base, snapshot, committed,
                 blob_type, size, etag, last_modified, creation_time, content_md5, metadata)
             VALUES (90, 41, 'b', 1, '', 1, 'BlockBlob', 3, '\"x\"', 6, 6, x'0102ff', '{}');
             INSERT INTO blob_extents (blob_id, seq, extent, len, block_id)
             VALUES (90, 0, 'i.a', 3, NULL);
             INSERT INTO inline_extents (extent, data) VALUES ('i.a', x'616263');",
        )
        .unwrap();
        let order = fill_order(&from).unwrap();
        conn.write(&crate::meta::locks::Scope::Store, |pg| {
            assert!(is_empty(pg)?);
            assert_eq!(copy_tables(&from, pg, &order)?, 4);
            reset_identities(pg)
        })
        .unwrap();
        let new_id = conn
            .write(&crate::meta::locks::Scope::Store, |pg| {
                pg.query_value::<i64>(
                    "INSERT INTO containers (account, name, etag, last_modified, metadata,
                         default_encryption_scope, deny_encryption_scope_override)
                     VALUES ('acct', 'd', 'e', 1, '{}', '', 0) RETURNING id",
                    &[],
                )
            })
            .unwrap()
            .unwrap();
        assert!(new_id > 41, "{new_id}");
        let back = sqlite();
        conn.read(|pg| copy_tables(pg, &back, &order)).unwrap();
        let (md5, access): (Vec<u8>, Option<String>) = back
            .query_row(
                "SELECT b.content_md5, c.public_access FROM blobs b
                   JOIN containers c ON c.id = b.container_id WHERE b.id = 90",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(md5, vec![1, 2, 0xff]);
        assert_eq!(access, None);
        let block: Option<String> = back
            .query_row("SELECT block_id FROM blob_extents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(block, None);
        let data: Vec<u8> = back
            .query_row("SELECT data FROM inline_extents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(data, b"abc");
        drop(conn);
    }
}
