//! Time travel: the store as it was at an instant `at`, derived from the history and the
//! operation log, not from snapshots.
//!
//! Every change of a memory is recorded with the fields it changed, before and after: in
//! `history` (adds, edits, deletes, restores, hard deletes with a full snapshot, states)
//! and in the operation log (`sleep_cycles`: each changed field of a sleep cycle or a
//! curation, its end time, and when it was undone). The state at `at` is today's state
//! with every change after `at` reverted, newest first. Only memories changed or created
//! after `at` differ from today, so [`AsOf`] keeps just those (the *delta*); everything
//! else is read from the store as it is.
//!
//! Cost: reading the changes after `at` is a range scan of `history_time` (migration 0008),
//! O(k log n) for k changes since `at` in a history of n rows, plus the operations since
//! `at` and the current rows of the memories they touch; reverting them is O(k). Memories
//! created after `at` did not exist then whatever happened to them since: they are only
//! named (their ids, from the `memories_created` index), and neither their rows nor their
//! changes are read. A listing as of `at` adds the page read from the store, of the
//! memories created by `at`. What is not reconstructed: access counts
//! (counted by searches, which record no history) and cluster membership (liquid steps
//! move members without a log); both are shown as they are now.
//!
//! Times: a history entry takes effect at its `created_at`; an operation's changes at its
//! end (`ended_at`, or its start if it never finished), since a cycle commits phase by phase
//! within that span; an undo at `undone_at`.

use crate::memory::{Memory, State};
use crate::store::{CycleRow, HistoryEntry, ListQuery, SortKey, Tx};
use crate::Result;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// The store at instant `at`, as the memories that differ from today.
#[derive(Debug, Clone, Default)]
pub struct AsOf {
    /// Unix ms.
    pub at: i64,
    /// Memories changed after `at` (other than those in `later`), as they were at `at`:
    /// `None` when the memory did not exist then (one created after `at` and gone now).
    pub then: HashMap<i64, Option<Memory>>,
    /// The same memories as they are now (missing: not in the store now), read once for
    /// the callers that compare then with now (a search's vectors, a listing's total).
    pub today: HashMap<i64, Memory>,
    /// Memories in the store now that were created after `at`: they did not exist then.
    /// Neither read nor reverted: early in a store's life this is most of it.
    pub later: HashSet<i64>,
}

impl AsOf {
    /// Reads the changes after `at` from the store and reverts them.
    pub fn read(tx: &Tx<'_>, at: i64) -> Result<Self> {
        let later: HashSet<i64> = tx.ids_created_after(at)?.into_iter().collect();
        let history = tx.history_since_of_existing(at)?;
        let ops = tx.operations_since(at)?;
        let mut touched: HashSet<i64> = history.iter().map(|h| h.memory_id).collect();
        for op in &ops {
            touched.extend(op_changes(op).into_iter().map(|c| c.memory_id));
        }
        touched.retain(|id| !later.contains(id));
        let ids: Vec<i64> = touched.iter().copied().collect();
        let now: HashMap<i64, Memory> = tx
            .get_memories(&ids)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        Ok(Self {
            at,
            then: reconstruct(at, &touched, now.clone(), &history, &ops),
            today: now,
            later,
        })
    }

    /// True when memory `id` differs at `at` from today.
    pub fn changed(&self, id: i64) -> bool {
        self.then.contains_key(&id) || self.later.contains(&id)
    }

    /// How many memories differ at `at` from today.
    pub fn changed_count(&self) -> usize {
        self.then.len() + self.later.len()
    }

    /// Memory `id` at `at`, given how it is now (`None`: not in the store now); `None` when
    /// it did not exist then.
    pub fn memory(&self, id: i64, now: Option<Memory>) -> Option<Memory> {
        if self.later.contains(&id) {
            return None;
        }
        match self.then.get(&id) {
            Some(then) => then.clone(),
            None => now,
        }
    }

    /// A page of the listing `q` as of `at`. `page_now` reads a page of today's listing
    /// (the same filter and order) of the given size, of the memories created at or before
    /// `at` (the others did not exist then); the delta's memories are taken out of it and
    /// put in as they were, so the page costs one read of `offset + limit + changed` rows.
    /// `in_cluster` answers the cluster filter, which a memory's fields do not carry.
    pub fn list(
        &self,
        q: &ListQuery,
        page_now: impl FnOnce(usize) -> Result<Vec<Memory>>,
        in_cluster: impl Fn(i64) -> bool,
    ) -> Result<Vec<Memory>> {
        let limit = if q.limit == 0 { 100 } else { q.limit };
        let mut rows: Vec<Memory> = page_now(q.offset + limit + self.then.len())?
            .into_iter()
            .filter(|m| !self.changed(m.id))
            .collect();
        rows.extend(
            self.then
                .values()
                .flatten()
                .filter(|m| q.filter.matches(m))
                .filter(|m| q.filter.cluster.is_none() || in_cluster(m.id))
                .cloned(),
        );
        rows.sort_by(|a, b| order(q.sort, q.descending, a, b));
        Ok(rows.into_iter().skip(q.offset).take(limit).collect())
    }
}

/// The listing's order (SQL's `ORDER BY key dir NULLS LAST, id dir`).
fn order(key: SortKey, descending: bool, a: &Memory, b: &Memory) -> Ordering {
    fn nulls_last<T: PartialOrd>(a: Option<T>, b: Option<T>, desc: bool) -> Ordering {
        match (a, b) {
            (Some(x), Some(y)) => {
                let o = x.partial_cmp(&y).unwrap_or(Ordering::Equal);
                if desc {
                    o.reverse()
                } else {
                    o
                }
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    }
    let by_key = match key {
        SortKey::Id => Ordering::Equal,
        SortKey::CreatedAt => nulls_last(Some(a.created_at), Some(b.created_at), descending),
        SortKey::UpdatedAt => nulls_last(Some(a.updated_at), Some(b.updated_at), descending),
        SortKey::OccurredAt => nulls_last(a.occurred_at, b.occurred_at, descending),
        SortKey::Importance => nulls_last(Some(a.importance), Some(b.importance), descending),
        SortKey::AccessCount => nulls_last(Some(a.access_count), Some(b.access_count), descending),
        SortKey::LastAccessed => nulls_last(a.last_accessed, b.last_accessed, descending),
    };
    let by_id = if descending {
        b.id.cmp(&a.id)
    } else {
        a.id.cmp(&b.id)
    };
    by_key.then(by_id)
}

/// One change to take back, newest first.
#[derive(Debug)]
struct Step<'a> {
    at: i64,
    /// Order among changes of one instant: (source, row, position); larger is later.
    seq: (u8, i64, usize),
    memory_id: i64,
    revert: Revert<'a>,
}

#[derive(Debug)]
enum Revert<'a> {
    /// Put these fields back (a JSON object of field → value).
    Fields(&'a Map<String, Value>),
    /// One field back.
    Field(&'a str, &'a Value),
    /// The memory was hard-deleted: it was this.
    Snapshot(&'a Value),
    /// A soft delete recorded without its old value: the memory was not deleted.
    Undelete,
    /// A restore recorded without its old values (before migration 0008): the memory
    /// was deleted (when is not known; the restore's time stands in).
    Unrestore(i64),
}

/// One changed field as the operation log stores it (`sleep::FieldChange`'s JSON, read
/// here without the sleep module, which sits above retrieval and so above this one).
#[derive(Debug, serde::Deserialize)]
struct LoggedChange {
    memory_id: i64,
    field: String,
    old: Value,
    new: Value,
}

/// The changes of an operation as recorded (an unreadable list counts as none).
fn op_changes(op: &CycleRow) -> Vec<LoggedChange> {
    serde_json::from_value(op.changed.clone()).unwrap_or_default()
}

/// When an undone operation was undone: its column, or for rows undone before migration
/// 0008 the note the undo left ("undone at <ms>").
fn undone_at(op: &CycleRow) -> Option<i64> {
    if op.status != "undone" {
        return None;
    }
    op.undone_at.or_else(|| {
        op.phase_stats
            .get("notes")?
            .as_array()?
            .iter()
            .filter_map(|n| n.as_str()?.strip_prefix("undone at ")?.parse().ok())
            .next_back()
    })
}

/// The memories in `touched` as they were at `at`, from how they are `now` (missing: not
/// in the store now) and the history entries and operations after `at`.
pub fn reconstruct(
    at: i64,
    touched: &HashSet<i64>,
    now: HashMap<i64, Memory>,
    history: &[HistoryEntry],
    ops: &[CycleRow],
) -> HashMap<i64, Option<Memory>> {
    let mut walked = walk(at, now, history, ops, |_, _, _| {});
    touched
        .iter()
        .map(|id| {
            let m = walked.remove(id).flatten();
            (*id, m.filter(|m| m.created_at <= at))
        })
        .collect()
}

/// Takes back every change after `at`, newest first, starting from the memories as they
/// are `now`; after each step, `seen(id, t, before)` is told what memory `id` was just
/// before instant `t` (`None`: not in the store). Returns every memory, touched or not.
fn walk(
    at: i64,
    now: HashMap<i64, Memory>,
    history: &[HistoryEntry],
    ops: &[CycleRow],
    mut seen: impl FnMut(i64, i64, Option<&Memory>),
) -> HashMap<i64, Option<Memory>> {
    let op_changes: Vec<(&CycleRow, Vec<LoggedChange>)> =
        ops.iter().map(|op| (op, op_changes(op))).collect();
    let mut steps: Vec<Step<'_>> = Vec::new();
    for h in history.iter().filter(|h| h.created_at > at) {
        let old = h.old_value.as_ref().and_then(Value::as_object);
        let revert = match (h.event.as_str(), old) {
            ("add", _) => continue, // creation is decided by `created_at`
            ("hard_delete", _) => match &h.old_value {
                Some(v) => Revert::Snapshot(v),
                None => continue,
            },
            ("delete", Some(o)) if o.contains_key("deleted_at") => Revert::Fields(o),
            ("delete", _) => Revert::Undelete,
            ("restore", Some(o)) if o.contains_key("deleted_at") || o.contains_key("state") => {
                Revert::Fields(o)
            }
            ("restore", _) => Revert::Unrestore(h.created_at),
            (_, Some(o)) => Revert::Fields(o),
            (_, None) => continue,
        };
        steps.push(Step {
            at: h.created_at,
            seq: (1, h.id, 0),
            memory_id: h.memory_id,
            revert,
        });
    }
    for (op, changes) in &op_changes {
        let ended = op.ended_at.unwrap_or(op.started_at);
        let undone = undone_at(op);
        for (i, c) in changes.iter().enumerate() {
            if ended > at {
                steps.push(Step {
                    at: ended,
                    seq: (0, op.id, i),
                    memory_id: c.memory_id,
                    revert: Revert::Field(&c.field, &c.old),
                });
            }
            // The undo put `old` back last-first; before it, `new` held. Taking the undo
            // back comes first (it is later), in the order the changes were made.
            if let Some(u) = undone.filter(|u| *u > at) {
                steps.push(Step {
                    at: u,
                    seq: (0, op.id, changes.len() * 2 - i),
                    memory_id: c.memory_id,
                    revert: Revert::Field(&c.field, &c.new),
                });
            }
        }
    }
    steps.sort_by_key(|s| std::cmp::Reverse((s.at, s.seq)));

    let mut memories: HashMap<i64, Option<Memory>> =
        now.into_iter().map(|(id, m)| (id, Some(m))).collect();
    for s in &steps {
        let slot = memories.entry(s.memory_id).or_default();
        match (&s.revert, slot.as_mut()) {
            (Revert::Snapshot(v), _) => *slot = serde_json::from_value((*v).clone()).ok(),
            (Revert::Fields(fields), Some(m)) => {
                for (k, v) in fields.iter() {
                    set_field(m, k, v);
                }
            }
            (Revert::Field(k, v), Some(m)) => set_field(m, k, v),
            (Revert::Undelete, Some(m)) => m.deleted_at = None,
            (Revert::Unrestore(t), Some(m)) => {
                if m.state == State::Active {
                    m.deleted_at = Some(t - 1);
                }
            }
            // A change of a memory that is gone and left no snapshot (a legacy undo's
            // creation): nothing to take back.
            (_, None) => {}
        }
        seen(s.memory_id, s.at, slot.as_ref());
    }
    memories
}

/// Each memory's states over time, for scrubbing a view through time without asking the
/// engine at every step: `(from, state)` pairs, oldest first, the first at the memory's
/// birth; `state` is `None` while the memory is hidden (deleted, forgotten) or gone. Before
/// its first pair a memory did not exist.
pub fn state_steps(
    now: Vec<Memory>,
    history: &[HistoryEntry],
    ops: &[CycleRow],
) -> HashMap<i64, Vec<(i64, Option<State>)>> {
    fn shown(m: Option<&Memory>) -> Option<State> {
        m.filter(|m| m.deleted_at.is_none() && m.state != State::Forgotten)
            .map(|m| m.state)
    }
    let mut born: HashMap<i64, i64> = now.iter().map(|m| (m.id, m.created_at)).collect();
    let mut current: HashMap<i64, Option<State>> =
        now.iter().map(|m| (m.id, shown(Some(m)))).collect();
    // Collected newest first: from each step on, the memory was what the walk held before
    // taking the step back.
    let mut steps: HashMap<i64, Vec<(i64, Option<State>)>> = HashMap::new();
    let now = now.into_iter().map(|m| (m.id, m)).collect();
    walk(i64::MIN, now, history, ops, |id, t, before| {
        let after = current.get(&id).copied().flatten();
        steps.entry(id).or_default().push((t, after));
        if let Some(m) = before {
            born.insert(id, m.created_at);
        }
        current.insert(id, shown(before));
    });
    born.into_iter()
        .map(|(id, birth)| {
            let mut s = steps.remove(&id).unwrap_or_default();
            s.retain(|(t, _)| *t > birth);
            s.push((birth, current.get(&id).copied().flatten()));
            s.reverse();
            s.dedup_by(|later, earlier| later.1 == earlier.1);
            (id, s)
        })
        .collect()
}

/// Sets one recorded field of a memory to its value as the history and the operation log
/// record it (the memory's JSON field names). Fields a memory does not carry (`cluster`:
/// membership is not reconstructed; `merged_from`) and values of the wrong type are left
/// out.
fn set_field(m: &mut Memory, field: &str, v: &Value) {
    fn text(v: &Value) -> Option<String> {
        v.as_str().map(str::to_string)
    }
    fn parsed<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
        serde_json::from_value(v.clone()).ok()
    }
    let w = &mut m.w5h1;
    match field {
        "text" => m.text = text(v).unwrap_or_else(|| m.text.clone()),
        "who" => w.who = text(v),
        "what" => w.what = text(v),
        "when" => w.when = text(v),
        "where" => w.where_ = text(v),
        "why" => w.why = text(v),
        "how" => w.how = text(v),
        "conversation" => m.conversation = text(v),
        "session" => m.session = text(v),
        "occurred_at" => m.occurred_at = v.as_i64(),
        "last_accessed" => m.last_accessed = v.as_i64(),
        "deleted_at" => m.deleted_at = v.as_i64(),
        "tokens" => m.tokens = v.as_i64(),
        "valid_from" => m.valid_from = v.as_i64(),
        "valid_to" => m.valid_to = v.as_i64(),
        "superseded_by" => m.superseded_by = v.as_i64(),
        "created_at" => m.created_at = v.as_i64().unwrap_or(m.created_at),
        "updated_at" => m.updated_at = v.as_i64().unwrap_or(m.updated_at),
        "access_count" => m.access_count = v.as_i64().unwrap_or(m.access_count),
        "importance" => m.importance = v.as_f64().unwrap_or(m.importance),
        "novelty" => m.novelty = v.as_f64().unwrap_or(m.novelty),
        "l_score" => m.l_score = v.as_f64().unwrap_or(m.l_score),
        "pinned" => m.pinned = v.as_bool().unwrap_or(m.pinned),
        "metadata" => m.metadata = v.clone(),
        "kind" => m.kind = parsed(v).unwrap_or(m.kind),
        "state" => m.state = parsed(v).unwrap_or(m.state),
        "source" => m.source = parsed(v).unwrap_or(m.source),
        "tags" => m.tags = parsed(v).unwrap_or_else(|| m.tags.clone()),
        "details" => m.details = parsed(v).unwrap_or_else(|| m.details.clone()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn memory(id: i64, text: &str, created_at: i64) -> Memory {
        serde_json::from_value(json!({
            "id": id, "kind": "fact", "text": text, "created_at": created_at,
            "updated_at": created_at, "importance": 0.5, "novelty": 0.5, "access_count": 0,
            "state": "active", "tags": [], "source": "user_input", "l_score": 1.0,
            "metadata": {}, "details": {"type": "none"}
        }))
        .unwrap()
    }

    fn entry(id: i64, memory_id: i64, event: &str, old: Value, at: i64) -> HistoryEntry {
        HistoryEntry {
            id,
            memory_id,
            event: event.into(),
            old_value: (!old.is_null()).then_some(old),
            new_value: None,
            actor: "user".into(),
            cause: None,
            created_at: at,
        }
    }

    fn at(
        t: i64,
        now: Vec<Memory>,
        history: &[HistoryEntry],
        ops: &[CycleRow],
    ) -> HashMap<i64, Option<Memory>> {
        let mut touched: HashSet<i64> = now.iter().map(|m| m.id).collect();
        touched.extend(history.iter().map(|h| h.memory_id));
        let now = now.into_iter().map(|m| (m.id, m)).collect();
        reconstruct(t, &touched, now, history, ops)
    }

    #[test]
    fn edits_after_the_instant_are_taken_back_newest_first() {
        let mut m = memory(1, "I live in Porto", 10);
        m.importance = 0.9;
        let h = [
            entry(1, 1, "update", json!({"text": "I live in Lisbon"}), 20),
            entry(
                2,
                1,
                "update",
                json!({"text": "I live in Braga", "importance": 0.2}),
                30,
            ),
        ];
        let then = |t| at(t, vec![m.clone()], &h, &[]).remove(&1).unwrap();
        assert_eq!(then(25).unwrap().text, "I live in Braga");
        assert_eq!(then(15).unwrap().text, "I live in Lisbon");
        assert_eq!(then(15).unwrap().importance, 0.2);
        assert_eq!(then(30).unwrap().text, "I live in Porto");
        assert!(then(5).is_none(), "created at 10");
    }

    #[test]
    fn deletes_restores_and_hard_deletes_are_taken_back() {
        let mut deleted = memory(1, "soft", 10);
        deleted.deleted_at = Some(40);
        let gone = memory(2, "hard", 10);
        let h = [
            entry(1, 1, "delete", json!({"text": "soft"}), 40),
            entry(
                2,
                2,
                "hard_delete",
                serde_json::to_value(&gone).unwrap(),
                50,
            ),
        ];
        let mut then = at(35, vec![deleted.clone()], &h, &[]);
        assert_eq!(then.remove(&1).unwrap().unwrap().deleted_at, None);
        assert_eq!(then.remove(&2).unwrap().unwrap().text, "hard");
        let mut later = at(45, vec![deleted], &h, &[]);
        assert_eq!(later.remove(&1).unwrap().unwrap().deleted_at, Some(40));
        assert!(later.remove(&2).unwrap().is_some());
    }

    #[test]
    fn an_undone_operation_held_between_its_end_and_its_undo() {
        let m = memory(1, "fact", 10);
        let op = CycleRow {
            id: 3,
            op: "sleep".into(),
            started_at: 18,
            ended_at: Some(20),
            trigger: "manual".into(),
            status: "undone".into(),
            phase_stats: json!({}),
            created_ids: vec![],
            changed: json!([{"memory_id": 1, "field": "state", "old": "active", "new": "cold"}]),
            forgotten_ids: vec![],
            undone_at: Some(30),
        };
        let state = |t| {
            at(t, vec![m.clone()], &[], std::slice::from_ref(&op))[&1]
                .clone()
                .unwrap()
                .state
        };
        assert_eq!(state(15), State::Active);
        assert_eq!(state(25), State::Cold);
        assert_eq!(state(35), State::Active);
    }

    #[test]
    fn an_undo_before_migration_0008_is_dated_by_its_note() {
        let op = CycleRow {
            id: 1,
            op: "sleep".into(),
            started_at: 0,
            ended_at: Some(1),
            trigger: "manual".into(),
            status: "undone".into(),
            phase_stats: json!({"notes": ["something", "undone at 77"]}),
            created_ids: vec![],
            changed: json!([]),
            forgotten_ids: vec![],
            undone_at: None,
        };
        assert_eq!(undone_at(&op), Some(77));
    }

    #[test]
    fn every_field_of_a_memory_can_be_set_back() {
        let mut other = memory(1, "other", 1);
        other.w5h1.where_ = Some("Lisbon".into());
        other.tags = vec!["trip".into()];
        other.deleted_at = Some(9);
        other.pinned = true;
        other.state = State::Cold;
        other.details = crate::memory::Details::Schema {
            name: "n".into(),
            description: "d".into(),
            core_concepts: vec!["c".into()],
            related_memory_ids: vec![2],
            examples: vec![],
            confidence: 0.5,
        };
        (other.w5h1.who, other.w5h1.how) = (Some("Ada".into()), Some("by train".into()));
        (other.conversation, other.session) = (Some("c".into()), Some("s".into()));
        (other.occurred_at, other.last_accessed, other.tokens) = (Some(3), Some(4), Some(5));
        (other.access_count, other.novelty, other.l_score) = (6, 0.25, 0.75);
        other.metadata = json!({"turn": 7});
        (other.valid_from, other.valid_to, other.superseded_by) = (Some(8), Some(9), Some(10));
        let mut m = memory(2, "m", 5);
        for (k, v) in serde_json::to_value(&other).unwrap().as_object().unwrap() {
            set_field(&mut m, k, v);
        }
        assert_eq!(Memory { id: other.id, ..m }, other);
    }

    #[test]
    fn a_listing_merges_todays_page_with_the_delta_in_order() {
        let a = memory(1, "a", 10);
        let b = memory(2, "b", 20);
        let c = memory(3, "c later", 30);
        let mut b_then = b.clone();
        b_then.text = "b then".into();
        let asof = AsOf {
            at: 25,
            then: HashMap::from([(2, Some(b_then))]),
            today: HashMap::from([(2, b.clone())]),
            later: HashSet::from([3]),
        };
        assert_eq!(
            asof.memory(3, Some(c.clone())),
            None,
            "created after the instant"
        );
        assert_eq!(asof.changed_count(), 2);
        let q = ListQuery {
            limit: 10,
            ..Default::default()
        };
        let page = asof
            .list(&q, |_| Ok(vec![a.clone(), b.clone(), c.clone()]), |_| true)
            .unwrap();
        let texts: Vec<&str> = page.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["a", "b then"]);
    }
}
