//! Catching up with writes that another process made to the same store file (the desktop
//! app and an external `somna serve` / `somna mcp` share one SQLite store in WAL mode).
//!
//! Each process writes through its own connection; SQLite serialises the write
//! transactions (busy_timeout waits for the lock), and every change of a memory is one
//! row of the `history` table, written in the same transaction as the change. A reader
//! therefore catches up by reading the history rows after the last one it has seen:
//! * `PRAGMA data_version` changes only when *another* connection commits, so a poll that
//!   finds it unchanged costs two tiny queries and reports nothing;
//! * otherwise the new history rows name the memories added, changed and deleted; the
//!   vector index catches up from the store's embedding change log (new and re-embedded
//!   vectors) and drops the deleted ones; cached speaker names are refreshed.
//!
//! Own writes are not reported when no other connection committed in between (the caller
//! already knows about them); when both happened, both are reported, so consumers treat
//! the lists as upserts.
//!
//! What a catch-up finds is also published on the store's change stream as `External`
//! changes; [`Somna::watch_external`] runs the catch-up on a background thread, so front
//! ends subscribe to the stream instead of polling.

use crate::events::Job;
use crate::memory::Memory;
use crate::store::{Change, Origin};
use crate::{Result, Somna};
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// What changed in the store since the previous call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    /// Memories created since, as they are now (not deleted).
    pub added: Vec<Memory>,
    /// Memories changed since (text, fields, state, restore), as they are now.
    pub updated: Vec<Memory>,
    /// Memories soft- or hard-deleted since.
    pub removed: Vec<i64>,
    /// Vectors the index took in while catching up.
    pub indexed: usize,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty()
    }
}

/// Where a reader stands: the connection's data version and the last history row seen.
#[derive(Debug, Default)]
pub(crate) struct SyncCursor {
    data_version: i64,
    history_id: i64,
}

fn data_version(conn: &rusqlite::Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "data_version", |r| r.get(0))?)
}

fn max_history_id(conn: &rusqlite::Connection) -> Result<i64> {
    Ok(conn
        .query_row("SELECT MAX(id) FROM history", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .optional()?
        .flatten()
        .unwrap_or(0))
}

impl SyncCursor {
    /// The cursor of a freshly opened store: everything so far is known.
    pub(crate) fn at(conn: &rusqlite::Connection) -> Result<Self> {
        let history_id = max_history_id(conn)?;
        Ok(Self {
            data_version: data_version(conn)?,
            history_id,
        })
    }
}

impl Somna {
    /// Catches up with what other processes wrote to this store since the last call (or
    /// since opening): the index takes in their new vectors and drops their deleted
    /// memories, and the changed memories are returned. Cheap when nothing changed.
    pub fn sync_external_changes(&self) -> Result<Changes> {
        let mut cursor = self.sync.lock().unwrap_or_else(|p| p.into_inner());
        let store = self.store();
        // Read the high-water mark before the version: a commit by another process in
        // between changes the version, so its rows are read below, never skipped.
        let latest = max_history_id(store.conn())?;
        let version = data_version(store.conn())?;
        if version == cursor.data_version {
            cursor.history_id = latest;
            return Ok(Changes::default());
        }
        cursor.data_version = version;

        let mut seen: BTreeMap<i64, bool> = BTreeMap::new(); // id → added since
        let mut max_seen = cursor.history_id;
        {
            let mut stmt = store.conn().prepare_cached(
                "SELECT id, memory_id, event FROM history WHERE id > ?1 ORDER BY id",
            )?;
            let rows = stmt.query_map([cursor.history_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            for row in rows {
                let (hid, memory_id, event) = row?;
                max_seen = max_seen.max(hid);
                *seen.entry(memory_id).or_insert(false) |= event == "add";
            }
        }
        cursor.history_id = max_seen;
        if seen.is_empty() {
            return Ok(Changes::default());
        }

        let ids: Vec<i64> = seen.keys().copied().collect();
        let current: BTreeMap<i64, Memory> = store
            .read()
            .get_memories(&ids)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        let mut changes = Changes::default();
        for (id, added) in &seen {
            match current.get(id) {
                Some(m) if m.deleted_at.is_none() => {
                    if *added {
                        changes.added.push(m.clone());
                    } else {
                        changes.updated.push(m.clone());
                    }
                }
                // Soft- or hard-deleted (possibly added and deleted again) since.
                _ => changes.removed.push(*id),
            }
        }
        {
            let mut index = self.index_write();
            for id in &changes.removed {
                index.remove(*id);
            }
            changes.indexed = index.catch_up(&store, &Job::default())?;
        }
        self.refresh_actors(&store)?;
        drop(store);
        let ids = |ms: &[Memory]| ms.iter().map(|m| m.id).collect::<Vec<_>>();
        let found = [
            Change::MemoriesAdded {
                ids: ids(&changes.added),
            },
            Change::MemoriesUpdated {
                ids: ids(&changes.updated),
            },
            Change::MemoriesRemoved {
                ids: changes.removed.clone(),
            },
        ];
        self.changes.publish(
            Origin::External,
            found.into_iter().filter(|c| !is_empty(c)).collect(),
        );
        Ok(changes)
    }

    /// Catches up with other processes' writes every `interval` on a background thread (see
    /// [`Somna::sync_external_changes`]); what it finds arrives on [`Somna::subscribe`]'s
    /// stream as `External` changes. It stops when the handle or the engine is dropped.
    pub fn watch_external(self: &Arc<Self>, interval: Duration) -> ExternalWatch {
        let engine: Weak<Somna> = Arc::downgrade(self);
        let (stop, stopped) = mpsc::channel::<()>();
        let last_error = Arc::new(Mutex::new(None));
        let errors = last_error.clone();
        let handle = std::thread::Builder::new()
            .name("somna-watch".into())
            .spawn(move || loop {
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
                let Some(engine) = engine.upgrade() else {
                    break;
                };
                let outcome = engine.sync_external_changes();
                *errors.lock().unwrap_or_else(|p| p.into_inner()) =
                    outcome.err().map(|e| e.to_string());
            })
            .expect("spawn the external-change watcher");
        ExternalWatch {
            stop: Some(stop),
            handle: Some(handle),
            last_error,
        }
    }
}

fn is_empty(c: &Change) -> bool {
    match c {
        Change::MemoriesAdded { ids }
        | Change::MemoriesUpdated { ids }
        | Change::MemoriesRemoved { ids } => ids.is_empty(),
        _ => false,
    }
}

/// The background catch-up of [`Somna::watch_external`]; dropping it stops the thread.
pub struct ExternalWatch {
    stop: Option<Sender<()>>,
    handle: Option<JoinHandle<()>>,
    last_error: Arc<Mutex<Option<String>>>,
}

impl ExternalWatch {
    /// The error of the latest catch-up, if it failed (the next one tries again).
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for ExternalWatch {
    fn drop(&mut self) {
        self.shutdown();
    }
}
