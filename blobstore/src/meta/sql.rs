//! The small SQL interface the metadata functions are written against, so
//! that one module of SQL serves both SQLite (the default, one node) and
//! PostgreSQL (cluster mode). See `docs/cluster.md`, "Metadata".
//!
//! Statements are written once, in SQLite's spelling with `?N` placeholders;
//! the PostgreSQL connection rewrites the placeholders to `$N` once per
//! statement text ([`dollar_placeholders`]) and caches the prepared
//! statement. SQL that has to differ between the two is chosen in one place
//! with [`Dialect`].
//!
//! Parameters are [`Value`]s that borrow what they bind; columns come back
//! through [`SqlRow`] as [`ValueRef`]s and are converted with [`FromValue`].
//! On SQLite nothing is copied on the way: a row is read where it lies.

use std::borrow::Cow;

use rusqlite::types::{ToSqlOutput, ValueRef as SqliteRef};

use crate::{Error, Result};

/// Which database a connection talks to, for the few statements whose SQL
/// differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `sqlite` on SQLite, `postgres` on PostgreSQL.
    pub(crate) fn pick<'a>(self, sqlite: &'a str, postgres: &'a str) -> &'a str {
        match self {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }
}

/// A parameter of a statement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(Cow<'a, str>),
    Blob(Cow<'a, [u8]>),
}

/// A column of a row: the same shapes as [`Value`].
pub(crate) type ValueRef<'a> = Value<'a>;

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&&'a str> for Value<'a> {
    fn from(v: &&'a str) -> Self {
        Value::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&&'a String> for Value<'a> {
    fn from(v: &&'a String) -> Self {
        Value::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&&'a [u8]> for Value<'a> {
    fn from(v: &&'a [u8]) -> Self {
        Value::Blob(Cow::Borrowed(v))
    }
}

impl From<String> for Value<'_> {
    fn from(v: String) -> Self {
        Value::Text(Cow::Owned(v))
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(v: &'a [u8]) -> Self {
        Value::Blob(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a Vec<u8>> for Value<'a> {
    fn from(v: &'a Vec<u8>) -> Self {
        Value::Blob(Cow::Borrowed(v))
    }
}

impl From<Vec<u8>> for Value<'_> {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(Cow::Owned(v))
    }
}

impl From<u32> for Value<'_> {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<&u32> for Value<'_> {
    fn from(v: &u32) -> Self {
        Value::Int(i64::from(*v))
    }
}

impl<'a> From<&Option<&'a str>> for Value<'a> {
    fn from(v: &Option<&'a str>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<&Option<bool>> for Value<'_> {
    fn from(v: &Option<bool>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<&i64> for Value<'_> {
    fn from(v: &i64) -> Self {
        Value::Int(*v)
    }
}

impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<&bool> for Value<'_> {
    fn from(v: &bool) -> Self {
        Value::Int(i64::from(*v))
    }
}

impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl<'a, T> From<Option<T>> for Value<'a>
where
    T: Into<Value<'a>>,
{
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(v: &'a Option<String>) -> Self {
        v.as_deref().map_or(Value::Null, Into::into)
    }
}

impl<'a> From<&'a Option<Vec<u8>>> for Value<'a> {
    fn from(v: &'a Option<Vec<u8>>) -> Self {
        v.as_deref().map_or(Value::Null, Into::into)
    }
}

impl From<&Option<i64>> for Value<'_> {
    fn from(v: &Option<i64>) -> Self {
        v.map_or(Value::Null, Value::Int)
    }
}

/// The parameters of a statement, each converted with `Value::from`:
/// `vals![id, name, etag.as_str()]`.
macro_rules! vals {
    ($($v:expr),* $(,)?) => {
        [$($crate::meta::sql::Value::from($v)),*]
    };
}
pub(crate) use vals;

/// The error of a query that must return a row and returned none.
pub(crate) fn no_rows() -> Error {
    Error::Internal("a query that returns a row returned none".into())
}

/// A type a column converts to.
pub(crate) trait FromValue: Sized {
    fn from_value(v: ValueRef<'_>) -> Result<Self>;
}

fn mismatch(want: &str, got: ValueRef<'_>) -> Error {
    Error::Corrupt(format!("expected {want}, found {got:?}"))
}

impl FromValue for i64 {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        match v {
            Value::Int(i) => Ok(i),
            other => Err(mismatch("an integer", other)),
        }
    }
}

impl FromValue for bool {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        i64::from_value(v).map(|i| i != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        match v {
            Value::Real(r) => Ok(r),
            Value::Int(i) => Ok(i as f64),
            other => Err(mismatch("a number", other)),
        }
    }
}

impl FromValue for String {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        match v {
            Value::Text(s) => Ok(s.into_owned()),
            other => Err(mismatch("text", other)),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        match v {
            Value::Blob(b) => Ok(b.into_owned()),
            other => Err(mismatch("bytes", other)),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: ValueRef<'_>) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One row of a result.
pub(crate) trait SqlRow {
    /// Column `i` (from 0).
    fn value(&self, i: usize) -> Result<ValueRef<'_>>;
}

impl dyn SqlRow + '_ {
    /// Column `i` converted to `T`.
    pub(crate) fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        T::from_value(self.value(i)?)
    }
}

/// A connection (or an open transaction on one) that runs statements.
pub(crate) trait Sql {
    fn dialect(&self) -> Dialect;

    /// Runs `sql`; the number of rows it changed.
    fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize>;

    /// Runs `sql` when the caller needs neither its answer nor its count
    /// now. PostgreSQL sends it without waiting (pipelined behind the
    /// statements before it) and reads its answer with the next statement
    /// it waits for, or with the COMMIT: an error of it still fails the
    /// transaction there, before anything is acknowledged. SQLite runs it
    /// at once. See `docs/cluster.md`, "Round trips".
    fn execute_deferred(&self, sql: &str, params: &[Value<'_>]) -> Result<()> {
        self.execute(sql, params).map(|_| ())
    }

    /// Runs `sql` and hands each row to `f` in turn, until `f` answers false.
    fn each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: &mut dyn FnMut(&dyn SqlRow) -> Result<bool>,
    ) -> Result<()>;

    /// The SQLite connection under this one, for the functions not yet
    /// written against this interface; PostgreSQL refuses them.
    fn sqlite(&self) -> Result<&rusqlite::Connection>;

    /// The database's clock when this write transaction's locks were
    /// granted, on a database that several nodes share (PostgreSQL);
    /// `None` elsewhere. Read with the locks, so free after the
    /// transaction's first statement (a round trip before it).
    fn locked_at(&self) -> Result<Option<std::time::SystemTime>> {
        Ok(None)
    }
}

impl dyn Sql + '_ {
    /// The first row of `sql` read by `f`, if there is one.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnOnce(&dyn SqlRow) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut f = Some(f);
        let mut out = None;
        self.each(sql, params, &mut |row| {
            if let Some(f) = f.take() {
                out = Some(f(row)?);
            }
            Ok(false)
        })?;
        Ok(out)
    }

    /// Every row of `sql`, each read by `f`.
    pub(crate) fn query_map<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        mut f: impl FnMut(&dyn SqlRow) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.each(sql, params, &mut |row| {
            out.push(f(row)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// Column 0 of the first row, if there is a row.
    pub(crate) fn query_value<T: FromValue>(
        &self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Option<T>> {
        self.query_row(sql, params, |r| r.get(0))
    }
}

// SQLite.

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => SqliteRef::Null,
            Value::Int(i) => SqliteRef::Integer(*i),
            Value::Real(r) => SqliteRef::Real(*r),
            Value::Text(s) => SqliteRef::Text(s.as_bytes()),
            Value::Blob(b) => SqliteRef::Blob(b),
        }))
    }
}

impl SqlRow for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        Ok(match self.get_ref(i)? {
            SqliteRef::Null => Value::Null,
            SqliteRef::Integer(i) => Value::Int(i),
            SqliteRef::Real(r) => Value::Real(r),
            SqliteRef::Text(t) => Value::Text(Cow::Borrowed(
                std::str::from_utf8(t).map_err(|e| Error::Corrupt(format!("text column: {e}")))?,
            )),
            SqliteRef::Blob(b) => Value::Blob(Cow::Borrowed(b)),
        })
    }
}

impl Sql for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        Ok(self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: &mut dyn FnMut(&dyn SqlRow) -> Result<bool>,
    ) -> Result<()> {
        let mut stmt = self.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            if !f(row)? {
                break;
            }
        }
        Ok(())
    }

    fn sqlite(&self) -> Result<&rusqlite::Connection> {
        Ok(self)
    }
}

impl Sql for rusqlite::Transaction<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        Sql::execute(&**self, sql, params)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: &mut dyn FnMut(&dyn SqlRow) -> Result<bool>,
    ) -> Result<()> {
        (**self).each(sql, params, f)
    }

    fn sqlite(&self) -> Result<&rusqlite::Connection> {
        Ok(self)
    }
}

/// `sql` with SQLite's `?N` placeholders written as PostgreSQL's `$N`
/// (outside quoted strings and identifiers). A bare `?` is not used in
/// Stowage's SQL and is left alone.
pub(crate) fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c);
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        let cases = [
            ("SELECT 1", "SELECT 1"),
            ("WHERE a = ?1 AND b = ?12", "WHERE a = $1 AND b = $12"),
            ("(?4 IS NULL OR name < ?4)", "($4 IS NULL OR name < $4)"),
            ("WHERE a = '?1' AND b = ?2", "WHERE a = '?1' AND b = $2"),
            ("SELECT \"?3\", ?3", "SELECT \"?3\", $3"),
            ("a || '''?1' || ?1", "a || '''?1' || $1"),
            ("x = ?", "x = ?"),
        ];
        for (sqlite, postgres) in cases {
            assert_eq!(dollar_placeholders(sqlite), postgres, "{sqlite}");
        }
    }

    #[test]
    fn values_round_trip_through_sqlite() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql: &dyn Sql = &conn;
        sql.execute("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n TEXT)", &[])
            .unwrap();
        let name = String::from("hello");
        let none: Option<&str> = None;
        sql.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            &vals![7i64, &name, &b"\x00\x01"[..], none],
        )
        .unwrap();
        let row = sql
            .query_row("SELECT i, s, b, n FROM t", &[], |r| {
                Ok((
                    r.get::<i64>(0)?,
                    r.get::<String>(1)?,
                    r.get::<Vec<u8>>(2)?,
                    r.get::<Option<String>>(3)?,
                ))
            })
            .unwrap();
        assert_eq!(row, Some((7, name, vec![0, 1], None)));
        assert_eq!(
            sql.query_value::<bool>("SELECT i FROM t WHERE i = ?1", &vals![8i64])
                .unwrap(),
            None
        );
        assert!(sql.query_value::<String>("SELECT i FROM t", &[]).is_err());
    }
}
