//! The statements the per-table files run, one API whatever the database: a [`Conn`] to
//! run statements on, [`Stmt`]s it prepares, [`Row`]s they return, and the values bound to
//! their parameters ([`Value`], [`ToArg`], [`params!`]). The shapes follow rusqlite's, so
//! a query reads as it would against SQLite; a statement's text is written once, in the
//! dialect both databases accept (`?N` parameters, `COALESCE`, `ON CONFLICT`,
//! `RETURNING`), and what only one of them has is chosen by [`Conn::dialect`].
//!
//! Every statement is prepared once per connection and kept (`prepare` and
//! `prepare_cached` are the same here): a search runs the same few statements thousands
//! of times.

use super::postgres::PgConn;
use crate::{Error, Result};

/// Which SQL a connection speaks, for the few statements written twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A value bound to a statement's parameter (the variants SQLite stores).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// What can be bound to a parameter.
pub trait ToArg {
    fn to_arg(&self) -> Value;
}

impl ToArg for Value {
    fn to_arg(&self) -> Value {
        self.clone()
    }
}

macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl ToArg for $t {
            fn to_arg(&self) -> Value {
                Value::Integer(*self as i64)
            }
        }
    )*};
}
int_arg!(i64, i32, u32, u8);

impl ToArg for usize {
    fn to_arg(&self) -> Value {
        Value::Integer(count(*self))
    }
}

impl ToArg for u64 {
    fn to_arg(&self) -> Value {
        Value::Integer(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

/// A count or limit as SQL takes it: `usize::MAX` (no limit) is `i64::MAX`, not the -1
/// that `as i64` makes of it (which SQLite reads as no limit and Postgres refuses).
pub fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl ToArg for bool {
    fn to_arg(&self) -> Value {
        Value::Integer(i64::from(*self))
    }
}

impl ToArg for f64 {
    fn to_arg(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToArg for f32 {
    fn to_arg(&self) -> Value {
        Value::Real(f64::from(*self))
    }
}

impl ToArg for str {
    fn to_arg(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToArg for String {
    fn to_arg(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToArg for [u8] {
    fn to_arg(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToArg for Vec<u8> {
    fn to_arg(&self) -> Value {
        Value::Blob(self.clone())
    }
}

impl<T: ToArg> ToArg for Option<T> {
    fn to_arg(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToArg::to_arg)
    }
}

impl<T: ToArg + ?Sized> ToArg for &T {
    fn to_arg(&self) -> Value {
        (**self).to_arg()
    }
}

/// The parameters of one statement: an array of values of one type (`[id]`,
/// `[key, value]`), [`params!`] for mixed types, or [`params_from_iter`].
pub trait Params {
    fn values(self) -> Vec<Value>;
}

impl Params for [&dyn ToArg; 0] {
    fn values(self) -> Vec<Value> {
        Vec::new()
    }
}

impl Params for &[&dyn ToArg] {
    fn values(self) -> Vec<Value> {
        self.iter().map(|a| a.to_arg()).collect()
    }
}

impl<const N: usize> Params for &[&dyn ToArg; N] {
    fn values(self) -> Vec<Value> {
        self.iter().map(|a| a.to_arg()).collect()
    }
}

macro_rules! array_params {
    ($($n:literal),*) => {$(
        impl<T: ToArg> Params for [T; $n] {
            fn values(self) -> Vec<Value> {
                self.iter().map(ToArg::to_arg).collect()
            }
        }
    )*};
}
array_params!(1, 2, 3, 4);

/// Values gathered at run time (a filter's conditions), bound in order.
pub struct ParamsFromIter(Vec<Value>);

pub fn params_from_iter(values: impl IntoIterator<Item = Value>) -> ParamsFromIter {
    ParamsFromIter(values.into_iter().collect())
}

impl Params for ParamsFromIter {
    fn values(self) -> Vec<Value> {
        self.0
    }
}

/// Parameters of mixed types, bound in order: `params![id, text, score]`.
macro_rules! params {
    () => {
        [] as [&dyn $crate::store::sql::ToArg; 0]
    };
    ($($x:expr),+ $(,)?) => {
        &[$(&$x as &dyn $crate::store::sql::ToArg),+] as &[&dyn $crate::store::sql::ToArg]
    };
}
pub(crate) use params;

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// A value read from a column.
pub trait FromCol: Sized {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self>;
    fn from_pg(row: &postgres::Row, i: usize) -> Result<Self>;
}

/// A column type read from Postgres, `None` for NULL. Postgres types its results strictly
/// where SQLite does not (`COUNT(*)` is BIGINT, `EXISTS` is BOOLEAN, a vector is pgvector's
/// `vector`), so each reads what the other database would have given.
trait PgScalar: Sized {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>>;
}

fn pg_type_error(row: &postgres::Row, i: usize, want: &str) -> Error {
    Error::Internal(format!(
        "column {i} ({}) of type {} read as {want}",
        row.columns()[i].name(),
        row.columns()[i].type_()
    ))
}

impl PgScalar for i64 {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>> {
        use postgres::types::Type;
        Ok(match *row.columns()[i].type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?,
            Type::INT4 => row.try_get::<_, Option<i32>>(i)?.map(i64::from),
            Type::INT2 => row.try_get::<_, Option<i16>>(i)?.map(i64::from),
            Type::BOOL => row.try_get::<_, Option<bool>>(i)?.map(i64::from),
            _ => return Err(pg_type_error(row, i, "an integer")),
        })
    }
}

impl PgScalar for f64 {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>> {
        use postgres::types::Type;
        Ok(match *row.columns()[i].type_() {
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?,
            Type::FLOAT4 => row.try_get::<_, Option<f32>>(i)?.map(f64::from),
            _ => i64::pg(row, i)?.map(|v| v as f64),
        })
    }
}

impl PgScalar for bool {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>> {
        Ok(i64::pg(row, i)?.map(|v| v != 0))
    }
}

/// Whether column `i` holds text (read as a Rust string).
fn pg_is_text(row: &postgres::Row, i: usize) -> bool {
    use postgres::types::Type;
    matches!(
        *row.columns()[i].type_(),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME
    )
}

impl PgScalar for String {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>> {
        if !pg_is_text(row, i) {
            return Err(pg_type_error(row, i, "text"));
        }
        Ok(row.try_get::<_, Option<String>>(i)?)
    }
}

impl PgScalar for Vec<u8> {
    fn pg(row: &postgres::Row, i: usize) -> Result<Option<Self>> {
        if row.columns()[i].type_().name() == "vector" {
            return Ok(row
                .try_get::<_, Option<pgvector::Vector>>(i)?
                .map(|v| super::vec_to_blob(v.as_slice())));
        }
        Ok(row.try_get::<_, Option<Vec<u8>>>(i)?)
    }
}

macro_rules! scalar_col {
    ($($t:ty),*) => {$(
        impl FromCol for $t {
            fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
                Ok(row.get(i)?)
            }
            fn from_pg(row: &postgres::Row, i: usize) -> Result<Self> {
                <$t as PgScalar>::pg(row, i)?.ok_or_else(|| {
                    Error::Internal(format!("column {i} ({}) is NULL", row.columns()[i].name()))
                })
            }
        }
        impl FromCol for Option<$t> {
            fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
                Ok(row.get(i)?)
            }
            fn from_pg(row: &postgres::Row, i: usize) -> Result<Self> {
                <$t as PgScalar>::pg(row, i)
            }
        }
    )*};
}
scalar_col!(i64, f64, bool, String, Vec<u8>);

/// One row of a result.
pub struct Row<'r> {
    inner: RowOf<'r>,
}

enum RowOf<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `i` (from 0) as a `T`.
    pub fn get<T: FromCol>(&self, i: usize) -> Result<T> {
        match self.inner {
            RowOf::Sqlite(r) => T::from_sqlite(r, i),
            RowOf::Postgres(r) => T::from_pg(r, i),
        }
    }

    /// Column `i`, a text, handed to `f` where it lies (no string is made of it): for
    /// columns parsed into something else, as the memories' kind and state.
    pub fn with_str<T>(&self, i: usize, f: impl FnOnce(&str) -> Result<T>) -> Result<T> {
        match self.inner {
            RowOf::Sqlite(r) => f(r
                .get_ref(i)?
                .as_str()
                .map_err(|e| Error::Internal(format!("column {i} is not text: {e}")))?),
            RowOf::Postgres(r) if pg_is_text(r, i) => f(r.try_get::<_, &str>(i)?),
            RowOf::Postgres(r) => Err(pg_type_error(r, i, "text")),
        }
    }

    /// Column `i` shown whatever its type (for tests that compare whole rows).
    pub fn show(&self, i: usize) -> String {
        match self.inner {
            RowOf::Sqlite(r) => match r.get_ref(i) {
                Ok(v) => format!("{v:?}"),
                Err(e) => format!("({e})"),
            },
            // As SQLite's values print, so a test's expectations hold on both.
            RowOf::Postgres(r) => {
                let show = |v: Option<String>| v.unwrap_or_else(|| "Null".into());
                let shown = Option::<i64>::from_pg(r, i)
                    .map(|v| show(v.map(|v| format!("Integer({v})"))))
                    .or_else(|_| {
                        Option::<f64>::from_pg(r, i)
                            .map(|v| show(v.map(|v| format!("Real({v:?})"))))
                    })
                    .or_else(|_| {
                        Option::<String>::from_pg(r, i)
                            .map(|v| show(v.map(|v| format!("Text({:?})", v.as_bytes()))))
                    })
                    .or_else(|_| {
                        Option::<Vec<u8>>::from_pg(r, i)
                            .map(|v| show(v.map(|v| format!("Blob({v:?})"))))
                    });
                shown.unwrap_or_else(|_| format!("({})", r.columns()[i].type_()))
            }
        }
    }
}

/// A connection (plain or inside a transaction) to run statements on.
#[derive(Clone, Copy)]
pub enum Conn<'c> {
    Sqlite(&'c rusqlite::Connection),
    Postgres(&'c PgConn),
}

impl<'c> Conn<'c> {
    pub fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// `sqlite` on SQLite, `postgres` on Postgres: for the few statements whose text
    /// differs.
    pub fn pick<'s>(&self, sqlite: &'s str, postgres: &'s str) -> &'s str {
        match self.dialect() {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }

    /// A subquery of the ids in JSON array parameter `param` (e.g. `?1`), one `value`
    /// column: the same statement text for any number of ids.
    pub fn json_ids(&self, param: &str) -> String {
        match self.dialect() {
            Dialect::Sqlite => format!("SELECT value FROM json_each({param})"),
            Dialect::Postgres => format!(
                "SELECT CAST(value AS BIGINT) AS value FROM json_array_elements_text(CAST({param} AS JSON))"
            ),
        }
    }

    /// The larger of two values (SQLite's two-argument `MAX`, Postgres's `GREATEST`).
    pub fn greatest(&self, a: &str, b: &str) -> String {
        match self.dialect() {
            Dialect::Sqlite => format!("MAX({a}, {b})"),
            Dialect::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// The integer at JSON path `path` (as `$.a.b`) of JSON text `expr`, NULL when absent.
    pub fn json_int(&self, expr: &str, path: &str) -> String {
        match self.dialect() {
            Dialect::Sqlite => format!("json_extract({expr}, '{path}')"),
            Dialect::Postgres => {
                let keys: Vec<&str> = path.trim_start_matches("$.").split('.').collect();
                format!(
                    "CAST(CAST({expr} AS JSONB) #>> '{{{}}}' AS BIGINT)",
                    keys.join(",")
                )
            }
        }
    }
    /// Prepares `sql` (kept for the connection's next use of the same text).
    pub fn prepare(&self, sql: &str) -> Result<Stmt<'c>> {
        self.prepare_cached(sql)
    }

    pub fn prepare_cached(&self, sql: &str) -> Result<Stmt<'c>> {
        Ok(match self {
            Conn::Sqlite(c) => Stmt::Sqlite(c.prepare_cached(sql)?),
            Conn::Postgres(c) => Stmt::Postgres(c, c.prepare(sql)?),
        })
    }

    /// Runs one statement; how many rows it changed.
    pub fn execute(&self, sql: &str, params: impl Params) -> Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    /// The first row of `sql` through `f`; an error when there is none (see
    /// [`OptionalExtension::optional`]).
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }

    /// Runs statements separated by `;`, without parameters.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(c) => c.batch_execute(sql),
        }
    }
}

/// A prepared statement.
pub enum Stmt<'c> {
    Sqlite(rusqlite::CachedStatement<'c>),
    Postgres(&'c PgConn, postgres::Statement),
}

impl Stmt<'_> {
    /// How many columns each row has.
    pub fn column_count(&self) -> usize {
        match self {
            Stmt::Sqlite(s) => s.column_count(),
            Stmt::Postgres(_, s) => s.columns().len(),
        }
    }

    pub fn execute(&mut self, params: impl Params) -> Result<usize> {
        let values = params.values();
        match self {
            Stmt::Sqlite(s) => Ok(s.execute(rusqlite::params_from_iter(values.iter()))?),
            Stmt::Postgres(c, s) => Ok(c.execute_values(s, &values)? as usize),
        }
    }

    /// Every row through `f`, in order (read before the first is handed back; a failed
    /// `f` ends the rows with its error).
    pub fn query_map<T>(
        &mut self,
        params: impl Params,
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<std::vec::IntoIter<Result<T>>> {
        let mut out = Vec::new();
        self.for_each(params, |r| {
            let v = f(r);
            let failed = v.is_err();
            out.push(v);
            Ok(!failed)
        })?;
        Ok(out.into_iter())
    }

    /// Hands each row to `f` as it is read, until `f` answers `false`: a result of
    /// millions of rows is read without a list of them.
    pub fn for_each(
        &mut self,
        params: impl Params,
        mut f: impl FnMut(&Row<'_>) -> Result<bool>,
    ) -> Result<()> {
        let values = params.values();
        match self {
            Stmt::Sqlite(s) => {
                let mut rows = s.query(rusqlite::params_from_iter(values.iter()))?;
                while let Some(r) = rows.next()? {
                    if !f(&Row {
                        inner: RowOf::Sqlite(r),
                    })? {
                        break;
                    }
                }
            }
            Stmt::Postgres(c, s) => {
                for r in &c.query_values(s, &values)? {
                    if !f(&Row {
                        inner: RowOf::Postgres(r),
                    })? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// The first row through `f`; an error when there is none.
    pub fn query_row<T>(
        &mut self,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut f = Some(f);
        let mut out = None;
        self.for_each(params, |r| {
            if let Some(f) = f.take() {
                out = Some(f(r));
            }
            Ok(false)
        })?;
        out.unwrap_or(Err(no_rows()))
    }

    /// Whether the statement returns any row.
    pub fn exists(&mut self, params: impl Params) -> Result<bool> {
        let mut any = false;
        self.for_each(params, |_| {
            any = true;
            Ok(false)
        })?;
        Ok(any)
    }
}

/// The error of a row asked for and not there.
fn no_rows() -> Error {
    Error::Sqlite(rusqlite::Error::QueryReturnedNoRows)
}

/// `optional()` on a one-row read: `None` instead of the error of a missing row.
pub trait OptionalExtension<T> {
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(Error::Sqlite(rusqlite::Error::QueryReturnedNoRows)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_of_every_shape_bind_in_order_and_a_missing_row_is_optional() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let c = Conn::Sqlite(&conn);
        c.execute_batch("CREATE TABLE t (a INTEGER, b TEXT, c REAL, d BLOB)")
            .unwrap();
        let name: Option<String> = None;
        c.execute(
            "INSERT INTO t (a, b, c, d) VALUES (?1, ?2, ?3, ?4)",
            params![7, name, 0.5, vec![1u8, 2]],
        )
        .unwrap();
        c.execute("INSERT INTO t (a, b) VALUES (?1, ?2)", ["8", "x"])
            .unwrap();
        c.execute(
            "INSERT INTO t (a) VALUES (?)",
            params_from_iter([Value::Integer(9)]),
        )
        .unwrap();
        let rows: Vec<(i64, Option<String>)> = c
            .prepare("SELECT a, b FROM t ORDER BY a")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(rows, vec![(7, None), (8, Some("x".into())), (9, None)]);
        let blob: Vec<u8> = c
            .query_row("SELECT d FROM t WHERE a = ?1", [7], |r| r.get(0))
            .unwrap();
        assert_eq!(blob, vec![1, 2]);
        let none: Option<i64> = c
            .query_row("SELECT a FROM t WHERE a = ?1", [100], |r| r.get(0))
            .optional()
            .unwrap();
        assert_eq!(none, None);
        assert!(c
            .prepare("SELECT 1 FROM t WHERE a = ?1")
            .unwrap()
            .exists([9])
            .unwrap());
    }
}
