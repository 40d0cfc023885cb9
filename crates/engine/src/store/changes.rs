//! The store's change stream. Every write the store commits announces what it changed as
//! typed [`Change`]s, once the transaction has committed (a rolled-back transaction
//! announces nothing). Writes made through this process's store are [`Origin::Local`];
//! other processes' commits, found when the engine catches up with them, are
//! [`Origin::External`]. Front ends subscribe once and forward what arrives, instead of
//! each command emitting its own event.
//!
//! Subscribers get a std channel each (the engine has no async runtime); dropping the
//! receiver unsubscribes. Events are sent to every live subscriber in commit order.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

/// What one committed write changed: the kind of object and which ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Memories created.
    MemoriesAdded { ids: Vec<i64> },
    /// Memories whose text, fields, state, embedding or tokens changed, or that came back
    /// from a soft delete.
    MemoriesUpdated { ids: Vec<i64> },
    /// Memories soft-deleted or removed for good.
    MemoriesRemoved { ids: Vec<i64> },
    /// Memories retrieved by a search: their access counts and co-access pairs changed.
    MemoriesAccessed { ids: Vec<i64> },
    /// Links from or to these memories were added, re-scored or removed.
    Links { ids: Vec<i64> },
    /// The raw message log of these conversations.
    Messages { conversations: Vec<String> },
    /// Concept clusters (their rows, centroids, labels, members or merges).
    Clusters { ids: Vec<i64> },
    /// Liquid-clustering energies of these memories.
    Energies { ids: Vec<i64> },
    /// The cached layout of a projection method in `dims` dimensions.
    Layout { method: String, dims: usize },
    /// Sleep cycles recorded, progressed, interrupted or undone.
    SleepCycles { ids: Vec<i64> },
    /// Golden queries or their runs.
    Golden,
    /// Cost and latency ledger entries.
    Ledger,
    /// Store settings (`meta` keys, e.g. the auto-sleep setting).
    Settings { keys: Vec<String> },
}

/// Where a change was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeOrigin"))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// By this process, through this engine.
    Local,
    /// By another process writing to the same store.
    External,
}

/// One announced change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChangeEvent {
    pub origin: Origin,
    pub change: Change,
}

/// Changes of a transaction that has not committed yet.
#[derive(Debug, Default)]
pub(crate) struct Pending(RefCell<Vec<Change>>);

impl Pending {
    pub(crate) fn push(&self, change: Change) {
        self.0.borrow_mut().push(change);
    }

    /// The transaction committed: what it changed, one change per kind.
    pub(crate) fn take(&self) -> Vec<Change> {
        coalesce(std::mem::take(&mut *self.0.borrow_mut()))
    }
}

/// Merges the changes of one transaction into at most one change per kind (ids sorted
/// and distinct). A memory both added and updated is reported as added; one removed is
/// reported only as removed.
pub fn coalesce(changes: Vec<Change>) -> Vec<Change> {
    #[derive(Default)]
    struct Acc {
        added: BTreeSet<i64>,
        updated: BTreeSet<i64>,
        removed: BTreeSet<i64>,
        accessed: BTreeSet<i64>,
        links: BTreeSet<i64>,
        conversations: BTreeSet<String>,
        clusters: BTreeSet<i64>,
        energies: BTreeSet<i64>,
        layouts: BTreeSet<(String, usize)>,
        cycles: BTreeSet<i64>,
        golden: bool,
        ledger: bool,
        settings: BTreeSet<String>,
    }
    let mut a = Acc::default();
    for c in changes {
        match c {
            Change::MemoriesAdded { ids } => a.added.extend(ids),
            Change::MemoriesUpdated { ids } => a.updated.extend(ids),
            Change::MemoriesRemoved { ids } => a.removed.extend(ids),
            Change::MemoriesAccessed { ids } => a.accessed.extend(ids),
            Change::Links { ids } => a.links.extend(ids),
            Change::Messages { conversations } => a.conversations.extend(conversations),
            Change::Clusters { ids } => a.clusters.extend(ids),
            Change::Energies { ids } => a.energies.extend(ids),
            Change::Layout { method, dims } => {
                a.layouts.insert((method, dims));
            }
            Change::SleepCycles { ids } => a.cycles.extend(ids),
            Change::Golden => a.golden = true,
            Change::Ledger => a.ledger = true,
            Change::Settings { keys } => a.settings.extend(keys),
        }
    }
    a.added.retain(|id| !a.removed.contains(id));
    a.updated
        .retain(|id| !a.removed.contains(id) && !a.added.contains(id));
    let ids = |s: BTreeSet<i64>| s.into_iter().collect::<Vec<_>>();
    let mut out = Vec::new();
    let mut push = |nonempty: bool, c: Change| {
        if nonempty {
            out.push(c);
        }
    };
    push(
        !a.added.is_empty(),
        Change::MemoriesAdded { ids: ids(a.added) },
    );
    push(
        !a.updated.is_empty(),
        Change::MemoriesUpdated {
            ids: ids(a.updated),
        },
    );
    push(
        !a.removed.is_empty(),
        Change::MemoriesRemoved {
            ids: ids(a.removed),
        },
    );
    push(
        !a.accessed.is_empty(),
        Change::MemoriesAccessed {
            ids: ids(a.accessed),
        },
    );
    push(!a.links.is_empty(), Change::Links { ids: ids(a.links) });
    push(
        !a.conversations.is_empty(),
        Change::Messages {
            conversations: a.conversations.into_iter().collect(),
        },
    );
    push(
        !a.clusters.is_empty(),
        Change::Clusters {
            ids: ids(a.clusters),
        },
    );
    push(
        !a.energies.is_empty(),
        Change::Energies {
            ids: ids(a.energies),
        },
    );
    for (method, dims) in a.layouts {
        push(true, Change::Layout { method, dims });
    }
    push(
        !a.cycles.is_empty(),
        Change::SleepCycles { ids: ids(a.cycles) },
    );
    push(a.golden, Change::Golden);
    push(a.ledger, Change::Ledger);
    push(
        !a.settings.is_empty(),
        Change::Settings {
            keys: a.settings.into_iter().collect(),
        },
    );
    out
}

/// The subscribers of one store's changes.
#[derive(Debug, Default)]
pub struct ChangeBus {
    subscribers: Mutex<Vec<Sender<ChangeEvent>>>,
    /// Memories added or updated since the last [`ChangeBus::take_arrivals`]; `None` until
    /// the first take, when nothing was watched yet.
    arrivals: Mutex<Option<BTreeSet<i64>>>,
}

impl ChangeBus {
    /// The memories added or updated (here or, once caught up with, by another process)
    /// since the last call, and from now on a fresh watch. `None` on the first call: what
    /// arrived before it was not watched, so the caller looks at the whole store once.
    /// Cluster upkeep places what arrived this way, at the cost of the arrivals rather
    /// than the store's size.
    pub fn take_arrivals(&self) -> Option<BTreeSet<i64>> {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        arrivals.replace(BTreeSet::new())
    }

    /// Puts memories back among the arrivals (taken but not dealt with yet), so the next
    /// take returns them again. Nothing happens before the first take.
    pub fn return_arrivals(&self, ids: impl IntoIterator<Item = i64>) {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = arrivals.as_mut() {
            a.extend(ids);
        }
    }

    /// A new receiver of every change published from now on.
    pub fn subscribe(&self) -> Receiver<ChangeEvent> {
        let (tx, rx) = mpsc::channel();
        self.lock().push(tx);
        rx
    }

    /// Sends each change to every subscriber; subscribers that hung up are dropped.
    pub fn publish(&self, origin: Origin, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        let arrived = changes.iter().flat_map(|c| match c {
            Change::MemoriesAdded { ids } | Change::MemoriesUpdated { ids } => ids.as_slice(),
            _ => &[],
        });
        self.return_arrivals(arrived.copied());
        let mut subscribers = self.lock();
        for change in changes {
            let event = ChangeEvent { origin, change };
            subscribers.retain(|s| s.send(event.clone()).is_ok());
        }
    }

    /// How many subscribers are listening.
    pub fn subscribers(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Sender<ChangeEvent>>> {
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_transactions_changes_merge_into_one_change_per_kind() {
        let merged = coalesce(vec![
            Change::MemoriesAdded { ids: vec![3, 1] },
            Change::MemoriesUpdated { ids: vec![1, 2] },
            Change::Links { ids: vec![1, 3] },
            Change::MemoriesAdded { ids: vec![4] },
            Change::MemoriesRemoved { ids: vec![4] },
            Change::Links { ids: vec![3, 2] },
            Change::Settings {
                keys: vec!["a".into()],
            },
        ]);
        assert_eq!(
            merged,
            vec![
                Change::MemoriesAdded { ids: vec![1, 3] },
                Change::MemoriesUpdated { ids: vec![2] },
                Change::MemoriesRemoved { ids: vec![4] },
                Change::Links { ids: vec![1, 2, 3] },
                Change::Settings {
                    keys: vec!["a".into()]
                },
            ]
        );
        assert!(coalesce(Vec::new()).is_empty());
    }

    #[test]
    fn arrivals_are_the_memories_added_or_updated_since_the_last_take() {
        let bus = ChangeBus::default();
        let added = |ids: Vec<i64>| vec![Change::MemoriesAdded { ids }];
        bus.publish(Origin::Local, added(vec![1]));
        assert_eq!(
            bus.take_arrivals(),
            None,
            "nothing was watched before the first take"
        );
        bus.publish(Origin::Local, added(vec![3, 2]));
        bus.publish(
            Origin::External,
            vec![
                Change::MemoriesUpdated { ids: vec![7] },
                Change::MemoriesAccessed { ids: vec![8] },
                Change::MemoriesRemoved { ids: vec![9] },
                Change::Clusters { ids: vec![10] },
            ],
        );
        let taken = bus.take_arrivals().unwrap();
        assert_eq!(taken.into_iter().collect::<Vec<_>>(), vec![2, 3, 7]);
        assert_eq!(bus.take_arrivals(), Some(BTreeSet::new()));
        bus.return_arrivals([5]);
        bus.publish(Origin::Local, added(vec![4]));
        let taken = bus.take_arrivals().unwrap();
        assert_eq!(taken.into_iter().collect::<Vec<_>>(), vec![4, 5]);
    }

    #[test]
    fn every_subscriber_gets_every_change_and_a_dropped_one_is_forgotten() {
        let bus = ChangeBus::default();
        let a = bus.subscribe();
        let b = bus.subscribe();
        bus.publish(Origin::Local, vec![Change::Golden, Change::Ledger]);
        drop(b);
        bus.publish(Origin::External, vec![Change::Golden]);
        assert_eq!(bus.subscribers(), 1);
        let got: Vec<ChangeEvent> = a.try_iter().collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].change, Change::Golden);
        assert_eq!(got[2].origin, Origin::External);
        assert_eq!(
            serde_json::to_value(&got[0]).unwrap(),
            serde_json::json!({"origin": "local", "change": {"kind": "golden"}})
        );
    }
}
