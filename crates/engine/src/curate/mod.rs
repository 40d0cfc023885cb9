//! Curation (issue 17): a person's (or an agent's) actions on a set of memories: merge,
//! delete, restore, pin, unpin, tag, set importance. Each is planned here as pure field
//! changes over the memories it names (so a preview and the real run compute the same
//! thing), then committed by the façade (`engine/curate.rs`) as one row of the store's
//! operation log, the one sleep cycles use, so it is undone the same way.

pub mod duplicates;

use crate::memory::{Kind, Memory, State};
use crate::sleep::FieldChange;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Memories one action may name, at most.
pub const MAX_IDS: usize = 10_000;

/// What to do with the named memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum CurateAction {
    /// One new memory replaces the sources, which are archived (never deleted) and linked
    /// from it with `derived_from`. `text`: the person's wording; left out, a draft (the
    /// chat backend writes one; offline, the source with the most content words).
    Merge {
        ids: Vec<i64>,
        #[serde(default)]
        text: Option<String>,
    },
    /// Soft delete: hidden, restorable.
    Delete {
        ids: Vec<i64>,
    },
    /// Back from a soft delete, or from forgotten to active.
    Restore {
        ids: Vec<i64>,
    },
    /// A pinned memory is never compressed, decayed, archived or forgotten by a cycle.
    Pin {
        ids: Vec<i64>,
    },
    Unpin {
        ids: Vec<i64>,
    },
    Tag {
        ids: Vec<i64>,
        #[serde(default)]
        add: Vec<String>,
        #[serde(default)]
        remove: Vec<String>,
    },
    SetImportance {
        ids: Vec<i64>,
        importance: f64,
    },
    /// Names a concept cluster; liquid steps keep a person's label.
    RelabelCluster {
        cluster: i64,
        label: String,
    },
    /// Places memories in a concept cluster; liquid steps leave them there.
    MoveToCluster {
        ids: Vec<i64>,
        cluster: i64,
    },
}

impl CurateAction {
    /// The operation's name as the log records it.
    pub fn op(&self) -> &'static str {
        match self {
            CurateAction::Merge { .. } => "merge",
            CurateAction::Delete { .. } => "delete",
            CurateAction::Restore { .. } => "restore",
            CurateAction::Pin { .. } => "pin",
            CurateAction::Unpin { .. } => "unpin",
            CurateAction::Tag { .. } => "tag",
            CurateAction::SetImportance { .. } => "importance",
            CurateAction::RelabelCluster { .. } => "relabel",
            CurateAction::MoveToCluster { .. } => "move",
        }
    }

    pub fn ids(&self) -> &[i64] {
        match self {
            CurateAction::Merge { ids, .. }
            | CurateAction::Delete { ids }
            | CurateAction::Restore { ids }
            | CurateAction::Pin { ids }
            | CurateAction::Unpin { ids }
            | CurateAction::Tag { ids, .. }
            | CurateAction::SetImportance { ids, .. }
            | CurateAction::MoveToCluster { ids, .. } => ids,
            CurateAction::RelabelCluster { .. } => &[],
        }
    }

    /// Checks what can be checked without the store: ids present, unique and not too
    /// many; a merge of at least two; tags non-empty; importance within 0..=1.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidInput(m));
        if let CurateAction::RelabelCluster { label, .. } = self {
            let n = label.trim().chars().count();
            if n == 0 || n > 80 || label.chars().any(char::is_control) {
                return bad(
                    "relabel: a cluster label is 1–80 characters without control characters".into(),
                );
            }
            return Ok(());
        }
        let ids = self.ids();
        if ids.is_empty() {
            return bad(format!("{}: name at least one memory", self.op()));
        }
        if ids.len() > MAX_IDS {
            return bad(format!(
                "{}: {} memories named, at most {MAX_IDS} per action",
                self.op(),
                ids.len()
            ));
        }
        if ids.iter().collect::<BTreeSet<_>>().len() != ids.len() {
            return bad(format!("{}: a memory is named twice", self.op()));
        }
        match self {
            CurateAction::Merge { ids, text } => {
                if ids.len() < 2 {
                    return bad("merge: name at least two memories".into());
                }
                if let Some(t) = text {
                    if t.trim().is_empty() {
                        return bad("merge: the merged text is empty".into());
                    }
                    crate::ingest::validate_text(t)?;
                }
            }
            CurateAction::Tag { add, remove, .. } => {
                if add.is_empty() && remove.is_empty() {
                    return bad("tag: give tags to add or remove".into());
                }
                if let Some(t) = add.iter().chain(remove).find(|t| !valid_tag(t)) {
                    return bad(format!(
                        "tag: {t:?} is not a tag (1–64 characters, no control characters, not blank)"
                    ));
                }
            }
            CurateAction::SetImportance { importance, .. } if !(0.0..=1.0).contains(importance) => {
                return bad("importance must be within 0..=1".into());
            }
            _ => {}
        }
        Ok(())
    }
}

fn valid_tag(t: &str) -> bool {
    !t.trim().is_empty() && t.chars().count() <= 64 && !t.chars().any(char::is_control)
}

/// A cluster's label before and after a relabel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterRelabel {
    pub cluster: i64,
    pub old: String,
    /// Whether the old label was a person's too (what an undo puts back).
    pub old_by_person: bool,
    pub new: String,
}

/// A memory a merge creates (or, in a preview, would create).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MergedMemory {
    /// `None` in a preview, and once the merge is undone.
    pub id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub who: Option<String>,
    pub sources: Vec<i64>,
    /// Where the text came from: "person", "extractive" (the richest source) or the chat
    /// backend's name.
    pub drafted_by: String,
}

/// One curation as planned, done or undone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CurationReport {
    /// The operation log's id; `None` for a preview.
    pub id: Option<i64>,
    pub op: String,
    /// preview, done or undone.
    pub status: String,
    pub at: i64,
    /// Who asked: "user", "app", "cli", "agent", …
    pub by: String,
    pub changed: Vec<FieldChange>,
    pub merged: Option<MergedMemory>,
    #[serde(default)]
    pub relabel: Option<ClusterRelabel>,
    /// Named memories left alone, and why (already pinned, already deleted, …).
    pub notes: Vec<String>,
}

/// What an action changes, field by field, over the memories it names (read, in the
/// order named). Memories the action would not change are noted and left alone.
/// `memberships`: each named memory's cluster membership as the store records it (see
/// `Tx::memberships`; only a move reads it).
pub fn plan_changes(
    action: &CurateAction,
    memories: &[Memory],
    now: i64,
    memberships: &std::collections::HashMap<i64, serde_json::Value>,
) -> (Vec<FieldChange>, Vec<String>) {
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let mut change = |m: &Memory, field: &str, old: serde_json::Value, new: serde_json::Value| {
        changes.push(FieldChange {
            memory_id: m.id,
            field: field.into(),
            old,
            new,
        })
    };
    for m in memories {
        match action {
            CurateAction::Merge { .. } => {
                if m.state != State::Archived {
                    change(m, "state", m.state.as_str().into(), "archived".into());
                }
            }
            CurateAction::Delete { .. } => match m.deleted_at {
                Some(_) => notes.push(format!("memory {} is already deleted", m.id)),
                None => change(m, "deleted_at", serde_json::Value::Null, now.into()),
            },
            CurateAction::Restore { .. } => {
                if let Some(at) = m.deleted_at {
                    change(m, "deleted_at", at.into(), serde_json::Value::Null);
                }
                if m.state == State::Forgotten {
                    change(m, "state", "forgotten".into(), "active".into());
                }
                if m.deleted_at.is_none() && m.state != State::Forgotten {
                    notes.push(format!("memory {} is neither deleted nor forgotten", m.id));
                }
            }
            CurateAction::Pin { .. } | CurateAction::Unpin { .. } => {
                let pin = matches!(action, CurateAction::Pin { .. });
                if m.pinned == pin {
                    let already = if pin { "pinned" } else { "not pinned" };
                    notes.push(format!("memory {} is already {already}", m.id));
                } else {
                    change(m, "pinned", m.pinned.into(), pin.into());
                }
            }
            CurateAction::Tag { add, remove, .. } => {
                let mut tags = m.tags.clone();
                tags.retain(|t| !remove.contains(t));
                for t in add {
                    let t = t.trim().to_string();
                    if !tags.contains(&t) {
                        tags.push(t);
                    }
                }
                if tags == m.tags {
                    notes.push(format!("memory {}'s tags are unchanged", m.id));
                } else {
                    change(m, "tags", m.tags.clone().into(), tags.into());
                }
            }
            CurateAction::RelabelCluster { .. } => {}
            CurateAction::MoveToCluster { cluster, .. } => {
                let old = memberships.get(&m.id).cloned().unwrap_or_default();
                let new =
                    serde_json::json!({"cluster": cluster, "confidence": 1.0, "by_person": true});
                let there = old.get("cluster").and_then(|c| c.as_i64()) == Some(*cluster)
                    && old.get("by_person").and_then(|b| b.as_bool()) == Some(true);
                if there {
                    notes.push(format!(
                        "memory {} is already placed in cluster {cluster}",
                        m.id
                    ));
                } else {
                    change(m, "cluster", old, new);
                }
            }
            CurateAction::SetImportance { importance, .. } => {
                if (m.importance - importance).abs() < 1e-9 {
                    notes.push(format!(
                        "memory {} already has importance {importance}",
                        m.id
                    ));
                } else {
                    change(m, "importance", m.importance.into(), (*importance).into());
                }
            }
        }
    }
    (changes, notes)
}

/// Refuses what an action cannot do to these memories: merging a deleted or forgotten
/// memory (restore it first), changing a deleted memory other than restoring it.
pub fn check_memories(action: &CurateAction, memories: &[Memory]) -> Result<()> {
    for m in memories {
        let gone = m.deleted_at.is_some() || m.state == State::Forgotten;
        match action {
            CurateAction::Restore { .. } | CurateAction::Delete { .. } => {}
            CurateAction::Merge { .. } if gone => {
                return Err(Error::InvalidInput(format!(
                    "merge: memory {} is deleted or forgotten; restore it first",
                    m.id
                )))
            }
            _ if m.deleted_at.is_some() => {
                return Err(Error::InvalidInput(format!(
                    "{}: memory {} is deleted; restore it first",
                    action.op(),
                    m.id
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The offline draft of a merge: the source with the most content words (the one that
/// says the most), the newest on a tie.
pub fn richest<'a>(sources: &[&'a Memory]) -> &'a Memory {
    sources
        .iter()
        .copied()
        .max_by_key(|m| {
            (
                crate::compress::text::content_stems(&m.text).len(),
                m.occurred_at.unwrap_or(m.created_at),
                m.id,
            )
        })
        .expect("a merge has at least two sources")
}

/// The merged memory's kind: the sources' kind when they share one, else a summary.
pub fn merged_kind(sources: &[&Memory]) -> Kind {
    let first = sources[0].kind;
    if sources.iter().all(|m| m.kind == first) {
        first
    } else {
        Kind::Summary
    }
}

/// The one value every source has, if they agree.
pub fn common<T: PartialEq + Clone>(values: impl IntoIterator<Item = Option<T>>) -> Option<T> {
    let mut it = values.into_iter();
    let first = it.next()??;
    it.all(|v| v.as_ref() == Some(&first)).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::fixture::memory;

    #[test]
    fn actions_are_checked_before_the_store_is_read() {
        let bad = [
            CurateAction::Merge {
                ids: vec![1],
                text: None,
            },
            CurateAction::Merge {
                ids: vec![1, 2],
                text: Some("  ".into()),
            },
            CurateAction::Pin { ids: vec![] },
            CurateAction::Delete { ids: vec![3, 3] },
            CurateAction::Tag {
                ids: vec![1],
                add: vec![],
                remove: vec![],
            },
            CurateAction::Tag {
                ids: vec![1],
                add: vec!["a\u{7}".into()],
                remove: vec![],
            },
            CurateAction::SetImportance {
                ids: vec![1],
                importance: 1.5,
            },
            CurateAction::Delete {
                ids: (0..MAX_IDS as i64 + 1).collect(),
            },
        ];
        for a in bad {
            assert_eq!(a.validate().unwrap_err().code(), "invalid_input", "{a:?}");
        }
        assert!(CurateAction::Pin { ids: vec![1, 2] }.validate().is_ok());
    }

    #[test]
    fn plans_change_only_what_differs_and_say_what_they_left() {
        let mut a = memory(1, "I live in Lisbon", "Ann");
        let b = memory(2, "I live in Lisbon now", "Ann");
        a.pinned = true;
        a.tags = vec!["home".into()];
        let (ch, notes) = plan_changes(
            &CurateAction::Pin { ids: vec![1, 2] },
            &[a.clone(), b.clone()],
            9,
            &Default::default(),
        );
        assert_eq!(ch.len(), 1);
        assert_eq!((ch[0].memory_id, ch[0].field.as_str()), (2, "pinned"));
        assert_eq!(notes, vec!["memory 1 is already pinned"]);

        let tag = CurateAction::Tag {
            ids: vec![1, 2],
            add: vec!["place".into()],
            remove: vec!["home".into()],
        };
        let (ch, _) = plan_changes(&tag, &[a.clone(), b.clone()], 9, &Default::default());
        assert_eq!(ch[0].new, serde_json::json!(["place"]));
        assert_eq!(ch[1].new, serde_json::json!(["place"]));

        let merge = CurateAction::Merge {
            ids: vec![1, 2],
            text: None,
        };
        let (ch, _) = plan_changes(&merge, &[a.clone(), b.clone()], 9, &Default::default());
        assert!(ch.iter().all(|c| c.field == "state" && c.new == "archived"));
        assert_eq!(richest(&[&a, &b]).id, 2, "more content words");
        assert_eq!(merged_kind(&[&a, &b]), Kind::Episode);
        assert_eq!(
            common([a.w5h1.who.clone(), b.w5h1.who.clone()]),
            Some("Ann".into())
        );

        let mut gone = b.clone();
        gone.deleted_at = Some(5);
        assert!(check_memories(&merge, &[a.clone(), gone.clone()]).is_err());
        assert!(check_memories(&CurateAction::Restore { ids: vec![2] }, &[gone]).is_ok());
    }
}
