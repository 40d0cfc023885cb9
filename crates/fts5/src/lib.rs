//! The terms an SQLite FTS5 table makes of a text, from FTS5's own tokenizer.
//!
//! A search that ranks FTS5's documents outside SQLite (Somna's in-memory BM25, see the
//! engine's `store/lexicon.rs`) must turn a query word into exactly the term FTS5 indexed:
//! "Running" into "run" with the `porter` tokenizer, "Café" into "cafe" with
//! `remove_diacritics`. Rather than copy those rules, [`Tokenizer`] asks FTS5: it finds the
//! tokenizer a connection has registered through the `fts5_api` (`SELECT fts5(?1)` with
//! the API's pointer bound to the parameter, as FTS5's documentation describes), creates it
//! with the table's arguments and runs it over the text.
//!
//! Unsafe code: FTS5's C API is a table of function pointers. Each call is checked for its
//! return code, and nothing FTS5 hands out outlives the [`Tokenizer`] that holds it, which
//! borrows the connection it came from.

use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;

/// One FTS5 tokenizer, created with the arguments a table declared (for
/// `tokenize = 'porter unicode61 remove_diacritics 2'`: `["porter", "unicode61",
/// "remove_diacritics", "2"]`). It lives as long as the borrowed connection, and on its
/// thread (it is neither `Send` nor `Sync`).
pub struct Tokenizer<'c> {
    _conn: &'c Connection,
    module: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
}

/// Why FTS5 refused: an SQLite result code and what was being done.
fn failure(code: c_int, what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(what.to_string()))
}

impl<'c> Tokenizer<'c> {
    /// The tokenizer `spec[0]` with arguments `spec[1..]`, as `conn`'s FTS5 has it.
    pub fn new(conn: &'c Connection, spec: &[&str]) -> rusqlite::Result<Self> {
        let (name, args) = spec
            .split_first()
            .ok_or_else(|| failure(ffi::SQLITE_MISUSE, "a tokenizer needs a name"))?;
        let name =
            CString::new(*name).map_err(|_| failure(ffi::SQLITE_MISUSE, "a NUL in a name"))?;
        let args: Vec<CString> = args
            .iter()
            .map(|a| CString::new(*a))
            .collect::<Result<_, _>>()
            .map_err(|_| failure(ffi::SQLITE_MISUSE, "a NUL in an argument"))?;
        let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let api = fts5_api(conn)?;
        let mut user: *mut c_void = ptr::null_mut();
        // SAFETY: an all-null table of optional function pointers is a valid value; FTS5
        // fills it in below.
        let mut module: ffi::fts5_tokenizer = unsafe { std::mem::zeroed() };
        // SAFETY: `api` is the live `fts5_api` of `conn` (checked non-null by `fts5_api`),
        // and `name` a NUL-terminated string; FTS5 writes the module and its user data.
        let found = unsafe { (*api).xFindTokenizer }
            .ok_or_else(|| failure(ffi::SQLITE_MISUSE, "FTS5 has no xFindTokenizer"))?;
        // SAFETY: as above.
        let rc = unsafe { found(api, name.as_ptr(), &mut user, &mut module) };
        if rc != ffi::SQLITE_OK {
            return Err(failure(rc, "finding the FTS5 tokenizer"));
        }
        let create = module
            .xCreate
            .ok_or_else(|| failure(ffi::SQLITE_MISUSE, "the tokenizer has no xCreate"))?;
        if module.xTokenize.is_none() || module.xDelete.is_none() {
            return Err(failure(ffi::SQLITE_MISUSE, "the tokenizer is incomplete"));
        }
        let mut instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        let count = c_int::try_from(argv.len())
            .map_err(|_| failure(ffi::SQLITE_MISUSE, "too many tokenizer arguments"))?;
        // SAFETY: `user` is the module's own user data; `argv` holds `count` NUL-terminated
        // strings that outlive the call (FTS5 copies what it keeps).
        let rc = unsafe { create(user, argv.as_mut_ptr(), count, &mut instance) };
        if rc != ffi::SQLITE_OK || instance.is_null() {
            return Err(failure(rc, "creating the FTS5 tokenizer"));
        }
        Ok(Self {
            _conn: conn,
            module,
            instance,
        })
    }

    /// The terms FTS5 makes of `text` as a query (`FTS5_TOKENIZE_QUERY`), in order.
    pub fn terms(&self, text: &str) -> rusqlite::Result<Vec<String>> {
        self.tokenize(text, ffi::FTS5_TOKENIZE_QUERY)
    }

    /// The terms FTS5 makes of `text` as a column of a document it indexes
    /// (`FTS5_TOKENIZE_DOCUMENT`), in order: one a token its `docsize` counts.
    pub fn document_terms(&self, text: &str) -> rusqlite::Result<Vec<String>> {
        self.tokenize(text, ffi::FTS5_TOKENIZE_DOCUMENT)
    }

    fn tokenize(&self, text: &str, flags: c_int) -> rusqlite::Result<Vec<String>> {
        let len = c_int::try_from(text.len())
            .map_err(|_| failure(ffi::SQLITE_TOOBIG, "a text too long to tokenize"))?;
        let mut out: Vec<String> = Vec::new();
        let Some(tokenize) = self.module.xTokenize else {
            return Err(failure(ffi::SQLITE_MISUSE, "the tokenizer is incomplete"));
        };
        // SAFETY: `instance` was created by this module and not yet deleted; `text` is
        // `len` bytes of UTF-8 that outlive the call; `push_term` receives `out` (a live
        // `Vec<String>`) as its context and nothing else.
        let rc = unsafe {
            tokenize(
                self.instance,
                (&mut out as *mut Vec<String>).cast::<c_void>(),
                flags,
                text.as_ptr().cast::<c_char>(),
                len,
                Some(push_term),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(failure(rc, "tokenizing"));
        }
        Ok(out)
    }
}

impl Drop for Tokenizer<'_> {
    fn drop(&mut self) {
        if let Some(delete) = self.module.xDelete {
            // SAFETY: `instance` was created by this module and is deleted once, here.
            unsafe { delete(self.instance) };
        }
    }
}

/// The tokenizer's callback: one term, appended to the `Vec<String>` behind `ctx`.
unsafe extern "C" fn push_term(
    ctx: *mut c_void,
    _flags: c_int,
    token: *const c_char,
    len: c_int,
    _start: c_int,
    _end: c_int,
) -> c_int {
    let Ok(len) = usize::try_from(len) else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: `ctx` is the `Vec<String>` `Tokenizer::terms` passed, borrowed mutably for
    // the call; FTS5 hands `len` readable bytes at `token` (a null one only when empty).
    let (out, bytes) = unsafe {
        (
            &mut *ctx.cast::<Vec<String>>(),
            if len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(token.cast::<u8>(), len)
            },
        )
    };
    out.push(String::from_utf8_lossy(bytes).into_owned());
    ffi::SQLITE_OK
}

/// The `fts5_api` of `conn`: `SELECT fts5(?1)` writes it through the pointer bound to the
/// parameter (type name "fts5_api_ptr").
fn fts5_api(conn: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    // SAFETY: the handle is `conn`'s open database, used on this thread for the duration
    // of the borrow.
    let db = unsafe { conn.handle() };
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    let sql = c"SELECT fts5(?1)";
    // SAFETY: `db` is open and `sql` NUL-terminated; the statement is finalized below.
    let rc = unsafe { ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, ptr::null_mut()) };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "preparing SELECT fts5(?1)"));
    }
    // SAFETY: `stmt` is prepared; the bound pointer (to `api`, alive across the step) is
    // the documented way to receive the API; the type name is a static C string.
    let rc = unsafe {
        let bound = ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        let stepped = if bound == ffi::SQLITE_OK {
            ffi::sqlite3_step(stmt)
        } else {
            bound
        };
        ffi::sqlite3_finalize(stmt);
        stepped
    };
    if rc != ffi::SQLITE_ROW || api.is_null() {
        return Err(failure(
            if rc == ffi::SQLITE_ROW {
                ffi::SQLITE_ERROR
            } else {
                rc
            },
            "this SQLite has no FTS5",
        ));
    }
    Ok(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &[&str] = &["porter", "unicode61", "remove_diacritics", "2"];

    #[test]
    fn stems_folds_and_strips_diacritics_as_fts5_does() {
        let conn = Connection::open_in_memory().unwrap();
        let t = Tokenizer::new(&conn, SPEC).unwrap();
        assert_eq!(
            t.terms("Running CAFÉS, naïve 東京 2023-05").unwrap(),
            ["run", "cafe", "naiv", "東京", "2023", "05"]
        );
        assert!(t.terms("").unwrap().is_empty());
        assert!(t.terms(" -- ?! ").unwrap().is_empty());
    }

    /// What the tokenizer says is what the table indexed: every term of a document, as
    /// FTS5's vocabulary table lists it.
    #[test]
    fn agrees_with_what_the_table_indexed() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
        )
        .unwrap();
        let text = "Müller's über-generalised hypotheses: l'été, ŒUVRES, x²+y² ﬁnally — ok";
        conn.execute("INSERT INTO t (x) VALUES (?1)", [text])
            .unwrap();
        let mut stmt = conn.prepare("SELECT term FROM v ORDER BY offset").unwrap();
        let indexed: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let t = Tokenizer::new(&conn, SPEC).unwrap();
        assert_eq!(t.terms(text).unwrap(), indexed);
        assert_eq!(t.document_terms(text).unwrap(), indexed);
        // One token a term: as many as the table's docsize counts for the document.
        let size: Vec<u8> = conn
            .query_row("SELECT sz FROM t_docsize", [], |r| r.get(0))
            .unwrap();
        assert_eq!(size, [indexed.len() as u8]);
    }

    #[test]
    fn an_unknown_tokenizer_is_an_error() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(Tokenizer::new(&conn, &["no-such-tokenizer"]).is_err());
        assert!(Tokenizer::new(&conn, &[]).is_err());
    }
}
