//! Catching up with writes that another process made to the same store (the desktop app
//! and an external `somna serve` / `somna mcp` share one store). The store finds them
//! (`Store::external_changes`: for SQLite, `PRAGMA data_version` and the `history` rows
//! after the last one seen); here the vector index takes in their new and re-embedded
//! vectors and drops the deleted ones, and cached speaker names are refreshed.
//!
//! Own writes are not reported when no other connection committed in between (the caller
//! already knows about them); when both happened, both are reported, so consumers treat
//! the lists as upserts.
//!
//! Clusters, links, sleep cycles and settings changed elsewhere are found by the store too
//! (cheap marks of those tables, compared when another connection committed); an undo
//! elsewhere writes no history, so the memories of a cycle found undone are read from its
//! row and caught up with like any other changed memory.
//!
//! What a catch-up finds is also published on the store's change stream as `External`
//! changes; [`Somna::watch_external`] runs the catch-up on a background thread, so front
//! ends subscribe to the stream instead of polling. On SQLite that thread looks every
//! interval (a `PRAGMA data_version` read); on Postgres it sleeps until the server
//! notifies it of a committed write (`LISTEN`/`NOTIFY`) and reads nothing otherwise.

use super::Somna;
use crate::events::Job;
use crate::memory::Memory;
use crate::store::Listener;
use crate::store::{Change, Origin, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
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

impl Somna {
    /// Catches up with what other processes wrote to this store since the last call (or
    /// since opening): the index takes in their new vectors and drops their deleted
    /// memories, and the changed memories are returned. Cheap when nothing changed.
    pub fn sync_external_changes(&self) -> Result<Changes> {
        let mut cursor = self.sync.lock().unwrap_or_else(|p| p.into_inner());
        let store = self.store();
        let found = store.external_changes(&mut cursor)?;
        let mut seen = found.memories;
        // An undo writes no history: the memories of a cycle undone elsewhere are read
        // from its row (fields set back; created summaries and schemas removed).
        for change in &found.others {
            if let Change::SleepCycles { ids } = change {
                for id in ids {
                    for m in undone_cycle_memories(&store.read(), *id)? {
                        seen.entry(m).or_insert(false);
                    }
                }
            }
        }
        if seen.is_empty() {
            self.changes.publish(Origin::External, found.others);
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
        let memories = [
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
            memories
                .into_iter()
                .filter(|c| !is_empty(c))
                .chain(found.others)
                .collect(),
        );
        Ok(changes)
    }

    /// Catches up with other processes' writes on a background thread (see
    /// [`Somna::sync_external_changes`]): on SQLite every `interval`, on Postgres as the
    /// server announces each committed write (and once per `interval` while the listening
    /// connection cannot be made). What it finds arrives on [`Somna::subscribe`]'s stream
    /// as `External` changes. It stops when the handle or the engine is dropped.
    pub fn watch_external(self: &Arc<Self>, interval: Duration) -> ExternalWatch {
        let engine: Weak<Somna> = Arc::downgrade(self);
        let postgres = self.store().is_postgres();
        let (stop, stopped) = mpsc::channel::<()>();
        let last_error = Arc::new(Mutex::new(None));
        let errors = last_error.clone();
        let handle = std::thread::Builder::new()
            .name("somna-watch".into())
            .spawn(move || {
                let report = |outcome: Result<()>| {
                    *errors.lock().unwrap_or_else(|p| p.into_inner()) =
                        outcome.err().map(|e| e.to_string());
                };
                if postgres {
                    listen(&engine, &stopped, interval, report);
                    return;
                }
                // Until told to stop (or the handle is dropped), every `interval`.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    let Some(engine) = engine.upgrade() else {
                        break;
                    };
                    report(engine.sync_external_changes().map(drop));
                }
            })
            .expect("spawn the external-change watcher");
        ExternalWatch {
            stop: Some(stop),
            handle: Some(handle),
            last_error,
        }
    }
}

/// How often a listening watcher looks whether it was told to stop.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// The Postgres watcher: waits for the server's notifications and catches up on each; a
/// lost listening connection is made again (and a catch-up run, for what was missed
/// meanwhile) after `interval`.
fn listen(
    engine: &Weak<Somna>,
    stopped: &Receiver<()>,
    interval: Duration,
    report: impl Fn(Result<()>),
) {
    let mut listener: Option<Listener> = None;
    loop {
        if !matches!(stopped.try_recv(), Err(TryRecvError::Empty)) {
            return;
        }
        let woke = match listener.as_mut() {
            Some(l) => l.wait(STOP_CHECK),
            None => {
                let Some(somna) = engine.upgrade() else {
                    return;
                };
                let made = somna.store().listener();
                match made {
                    // Connected: catch up with whatever came before it listened.
                    Ok(Some(l)) => {
                        listener = Some(l);
                        Ok(true)
                    }
                    Ok(None) => return,
                    Err(e) => Err(e),
                }
            }
        };
        match woke {
            Ok(false) => {}
            Ok(true) => {
                let Some(somna) = engine.upgrade() else {
                    return;
                };
                report(somna.sync_external_changes().map(drop));
            }
            Err(e) => {
                listener = None;
                report(Err(e));
                if !matches!(
                    stopped.recv_timeout(interval),
                    Err(RecvTimeoutError::Timeout)
                ) {
                    return;
                }
            }
        }
    }
}

/// The memories cycle `id` changed or created, if it is undone.
fn undone_cycle_memories(read: &Tx<'_>, id: i64) -> Result<Vec<i64>> {
    let Some(row) = read.get_cycle(id)? else {
        return Ok(Vec::new());
    };
    if row.status != "undone" {
        return Ok(Vec::new());
    }
    let changed = row.changed.as_array().into_iter().flatten();
    Ok(changed
        .filter_map(|c| c.get("memory_id").and_then(|m| m.as_i64()))
        .chain(row.created_ids.iter().copied())
        .collect())
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
