//! Compact per-memory attributes for visualisations: one row per visible memory with what
//! a point's colour, size and tooltip need, without the text. Columnar so front ends can
//! hand the arrays straight to the GPU.

use crate::{Kind, Result, State};
use serde::{Deserialize, Serialize};

/// Column-oriented attributes of every visible memory, ordered by id.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PointAttributes {
    pub ids: Vec<i64>,
    pub kinds: Vec<Kind>,
    pub states: Vec<State>,
    /// Cluster id, or -1 when the memory is in no cluster.
    pub clusters: Vec<i64>,
    /// Unix ms of `occurred_at`, falling back to `created_at`.
    pub times: Vec<i64>,
    pub access_counts: Vec<i64>,
    pub importance: Vec<f32>,
    /// Liquid-clustering energy, decayed to the current liquid step (0 when never set).
    pub energy: Vec<f32>,
}

impl PointAttributes {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Attributes of every visible memory, read straight from a store (the app reads them this
/// way while the engine is still opening, to show the cached layout at once).
pub fn attributes(store: &crate::store::Store) -> Result<PointAttributes> {
    let read = store.read();
    let step: i64 = read
        .get_meta("liquid_step")?
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut out = PointAttributes::default();
    read.point_rows(&mut |r| {
        out.ids.push(r.id);
        out.kinds.push(r.kind);
        out.states.push(r.state);
        out.clusters.push(r.cluster);
        out.times.push(r.time);
        out.access_counts.push(r.access_count);
        out.importance.push(r.importance as f32);
        let age = (step - r.energy_step).clamp(0, i32::MAX as i64) as i32;
        out.energy
            .push(r.energy as f32 * crate::cluster::liquid::DEFAULT_DECAY.powi(age));
    })?;
    Ok(out)
}

/// A memory near another in embedding space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Similar {
    pub id: i64,
    /// Cosine similarity of the two memories' embeddings.
    pub similarity: f32,
    pub memory: crate::Memory,
}

/// A node of the bubble graph: enough to draw and label it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphNode {
    pub id: i64,
    pub kind: Kind,
    pub who: Option<String>,
    /// The first 120 characters of the text.
    pub label: String,
    pub importance: f64,
    /// Hops from the nearest seed (0 for a seed).
    pub depth: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphEdge {
    pub src: i64,
    pub dst: i64,
    pub kind: crate::memory::LinkKind,
    pub score: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Neighbourhood {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// True when `limit` stopped the traversal before `depth` was exhausted.
    pub truncated: bool,
}

pub(crate) fn visible(m: &crate::Memory) -> bool {
    m.deleted_at.is_none() && m.state != State::Forgotten
}

pub(crate) fn node(m: &crate::Memory, depth: usize) -> GraphNode {
    GraphNode {
        id: m.id,
        kind: m.kind,
        who: m.w5h1.who.clone(),
        label: m.text.chars().take(120).collect(),
        importance: m.importance,
        depth,
    }
}

/// What one sleep cycle did to one memory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MemorySleepEvent {
    pub cycle: i64,
    pub started_at: i64,
    /// The cycle's status (completed, undone, …).
    pub status: String,
    /// `changed` (a field), `forgotten`, or `consolidated` (a summary or schema was made
    /// from it).
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"changed\" | \"forgotten\" | \"consolidated\"")
    )]
    pub event: String,
    pub field: Option<String>,
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
    /// The summary or schema created from it, for `consolidated`.
    pub created: Option<i64>,
}
