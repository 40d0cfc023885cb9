//! WAL checkpoints on a thread of their own, off the writers' path.
//!
//! SQLite copies the WAL back into the database file (a checkpoint, with an fsync) from
//! inside whichever commit finds the WAL past 1,000 pages. A search's bookkeeping (the
//! hits' access counts and co-access, a few pages) is such a commit, so now and then one
//! search paid for a checkpoint of everything written before it. A file store's writing
//! connection therefore does not checkpoint (`wal_autocheckpoint = 0`); after each commit
//! the store looks at the WAL file's size and, past [`WAL_LIMIT`], wakes this thread, which
//! runs a passive checkpoint on a connection of its own: it copies what no reader still
//! needs and never waits for, or blocks, a reader or a writer. What is durable, and when,
//! is unchanged (the WAL holds every commit until it is copied), and closing the last
//! connection still checkpoints as SQLite always does.

use crate::{Error, Result};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

/// The WAL's size past which a commit wakes the checkpointer: SQLite's own threshold
/// (1,000 pages of 4 KiB).
pub(super) const WAL_LIMIT: u64 = 1000 * 4096;
/// What the WAL file is cut back to when SQLite starts it again from the beginning (after a
/// complete checkpoint): below [`WAL_LIMIT`], so that its size says how much has been
/// written since (SQLite otherwise keeps the file at the largest size it reached).
const WAL_KEPT: i64 = 1 << 20;

/// How long the checkpointer's statements wait for a lock (a passive checkpoint takes only
/// the checkpoint lock, which another process's checkpoint may hold).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The thread that checkpoints one store file's WAL, and how to wake it.
pub(super) struct Checkpointer {
    wal: PathBuf,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Turns automatic checkpoints off on `conn` (the store's connection to `db`) and
    /// starts the thread that does them instead.
    pub(super) fn start(db: &Path, conn: &Connection) -> Result<Self> {
        let own = Connection::open(db)?;
        own.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.pragma_update(None, "journal_size_limit", WAL_KEPT)?;
        // One pending wake-up is enough: a checkpoint copies everything committed so far.
        let (wake, woken) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("somna-checkpoint".into())
            .spawn(move || run(&own, &woken))
            .map_err(|e| Error::io(db, e))?;
        let mut wal = db.as_os_str().to_os_string();
        wal.push("-wal");
        Ok(Self {
            wal: PathBuf::from(wal),
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// After a commit: wakes the thread when the WAL has grown past [`WAL_LIMIT`]. A file
    /// that cannot be read is left to the next commit.
    pub(super) fn committed(&self) {
        let past = std::fs::metadata(&self.wal).is_ok_and(|m| m.len() >= WAL_LIMIT);
        if let (true, Some(wake)) = (past, &self.wake) {
            // Refused only when a wake-up is already pending (the thread ends only when
            // this is dropped).
            let _ = wake.try_send(());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.wake.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Checkpoints each time it is woken, until the store closes the channel.
fn run(conn: &Connection, woken: &Receiver<()>) {
    while woken.recv().is_ok() {
        // PASSIVE: copy what readers no longer need, wait for nobody. The result row (busy,
        // frames in the WAL, frames copied) needs no answer: what is left is copied on the
        // next wake-up. An error (the disk) leaves the WAL as it was, durable.
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    fn wal_len(db: &std::path::Path) -> u64 {
        let mut wal = db.as_os_str().to_os_string();
        wal.push("-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len())
    }

    /// Small commits, as a search's bookkeeping makes them: the writer's connection never
    /// checkpoints, and the WAL still stays near the limit rather than growing with every
    /// commit (about 100 MB of frames are written; without the thread the WAL grew to 19 MB in half as many).
    #[test]
    fn the_wal_is_checkpointed_by_its_own_thread_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let mut store = Store::open(&db).unwrap();
        let auto: i64 = match &store.backend {
            crate::store::Backend::Sqlite(conn) => conn
                .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
                .unwrap(),
            crate::store::Backend::Postgres(_) => unreachable!("a file store"),
        };
        assert_eq!(auto, 0, "the writer's connection checkpoints itself");
        let value = "x".repeat(8000);
        let mut largest = 0;
        for i in 0..8000 {
            store
                .set_meta(&format!("k{}", i % 50), &format!("{value}{i}"))
                .unwrap();
            largest = largest.max(wal_len(&db));
            if i % 100 == 99 {
                // Room for the thread between bursts, as between searches.
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        assert!(
            largest < 4 * super::WAL_LIMIT,
            "the WAL grew to {largest} bytes"
        );
    }
}
