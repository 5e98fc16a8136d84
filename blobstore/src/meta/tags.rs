//! SQL for blob index tags (table `blob_tags`, schema version 8).

use super::sql::{Sql, vals};

use crate::Result;
use crate::tags::Tags;
use crate::tags::expr::{Comparison, Op};

/// Replaces the tags of blob version `blob_id` (none clears them).
pub(crate) fn set_tags(conn: &dyn Sql, blob_id: i64, tags: &Tags) -> Result<()> {
    conn.execute_deferred("DELETE FROM blob_tags WHERE blob_id = ?1", &vals![&blob_id])?;
    if tags.is_empty() {
        return Ok(());
    }
    for (k, v) in tags.iter() {
        conn.execute_deferred(
            "INSERT INTO blob_tags (blob_id, key, value, account, container, name, is_base)
         SELECT b.id, ?2, ?3, c.account, c.name, b.name, b.is_base
         FROM blobs b JOIN containers c ON c.id = b.container_id WHERE b.id = ?1",
            &vals![&blob_id, &k, &v],
        )?;
    }
    Ok(())
}

/// The tags of blob version `blob_id`, by key.
pub(crate) fn get_tags(conn: &dyn Sql, blob_id: i64) -> Result<Tags> {
    let pairs = conn.query_map(
        "SELECT key, value FROM blob_tags WHERE blob_id = ?1 ORDER BY key",
        &vals![&blob_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Tags::from_stored(pairs))
}

/// Whether any blob version of the database has a tag: a listing without
/// `include=tags` asks once, so that stores without tags pay nothing for
/// `TagCount`.
pub(crate) fn any_tags(conn: &dyn Sql) -> Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM blob_tags)", &[], |r| r.get(0))?
        .ok_or_else(super::sql::no_rows)
}

/// How many tags blob version `blob_id` has.
pub(crate) fn tag_count(conn: &dyn Sql, blob_id: i64) -> Result<u64> {
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM blob_tags WHERE blob_id = ?1",
            &vals![&blob_id],
            |r| r.get(0),
        )?
        .ok_or_else(super::sql::no_rows)?;
    Ok(n as u64)
}

/// Gives blob version `to` the tags of `from` (Snapshot Blob).
pub(crate) fn copy_tags(conn: &dyn Sql, from: i64, to: i64) -> Result<()> {
    let tags = get_tags(conn, from)?;
    set_tags(conn, to, &tags)
}

/// Where a Find Blobs by Tags page starts: after this (value, container,
/// name) of the driving key, in index order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TagCursor {
    pub value: String,
    pub container: String,
    pub name: String,
}

/// A base blob whose driving tag matched.
#[derive(Clone, Debug)]
pub(crate) struct FoundBlob {
    pub blob_id: i64,
    pub cursor: TagCursor,
}

/// The statement of [`find_by_tag`] for `op`.
fn find_sql(op: Op, dialect: super::sql::Dialect) -> String {
    let op = match op {
        Op::Eq => "=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        // Not in the filter grammar; refused by the parser.
        Op::Ne => "<>",
    };
    // PostgreSQL has no index hints (its planner picks the index itself).
    let hint = dialect.pick(" INDEXED BY blob_tags_find", "");
    format!(
        "SELECT blob_id, value, container, name FROM blob_tags{hint}
         WHERE account = ?1 AND key = ?2 AND is_base = 1 AND value {op} ?3
           AND (?4 IS NULL OR container = ?4)
           AND (?5 IS NULL OR (value, container, name) > (?5, ?6, ?7))
         ORDER BY value, container, name LIMIT ?8"
    )
}

/// Up to `limit` base blobs of `account` (and of `container`, when given)
/// whose tag `term.key` meets `term`, after `after`, in (value, container,
/// name) order. Reads the `blob_tags_find` index from the key and value
/// range of `term` on: rows of other keys and values are never touched.
pub(crate) fn find_by_tag(
    conn: &dyn Sql,
    account: &str,
    container: Option<&str>,
    term: &Comparison,
    after: Option<&TagCursor>,
    limit: usize,
) -> Result<Vec<FoundBlob>> {
    let sql = find_sql(term.op, conn.dialect());
    let rows = conn.query_map(
        &sql,
        &vals![
            &account,
            &term.key,
            &term.value,
            &container,
            after.map(|a| &a.value),
            after.map(|a| &a.container),
            after.map(|a| &a.name),
            limit as i64
        ],
        |r| {
            Ok(FoundBlob {
                blob_id: r.get(0)?,
                cursor: TagCursor {
                    value: r.get(1)?,
                    container: r.get(2)?,
                    name: r.get(3)?,
                },
            })
        },
    )?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search reads the index from its key and value on, in the index's
    /// order (no sort, no scan of the table), for equalities and ranges;
    /// the index covers the columns read, so no table row is touched.
    #[test]
    fn searches_seek_the_index_by_key_and_value() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&conn).unwrap();
        for (op, want) in [
            (Op::Eq, "key=? AND value=?"),
            (Op::Ge, "key=? AND value>?"),
            (Op::Lt, "key=? AND value<?"),
        ] {
            let plan: Vec<String> = conn
                .prepare(&format!(
                    "EXPLAIN QUERY PLAN {}",
                    find_sql(op, crate::meta::sql::Dialect::Sqlite)
                ))
                .unwrap()
                .query_map(
                    rusqlite::params!["a", "k", "v", None::<String>, None::<String>, "", "", 10],
                    |r| r.get::<_, String>(3),
                )
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let plan = plan.join(" | ");
            assert!(plan.contains("INDEX blob_tags_find"), "{op:?}: {plan}");
            assert!(plan.contains(want), "{op:?}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{op:?} sorts: {plan}");
        }
    }
}
