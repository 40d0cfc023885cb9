//! The façade's read-only views for visualisations: point attributes, nearest memories,
//! link neighbourhoods, a memory's sleep history. Row shapes and their builders are in
//! `crate::points`.

use super::Somna;
use crate::points::{
    attributes, node, visible, GraphEdge, MemorySleepEvent, Neighbourhood, PointAttributes, Similar,
};
use crate::{Result, State};
impl Somna {
    /// Attributes of every visible (not deleted, not forgotten) memory.
    pub fn point_attributes(&self) -> Result<PointAttributes> {
        self.with_store(attributes)
    }
}
impl Somna {
    /// The `k` (at most 100) visible memories nearest to memory `id` in embedding space,
    /// most similar first, with the memories themselves: the vector index's search (exact
    /// in small stores) from the memory's own embedding. Empty while the memory has no
    /// embedding in the index.
    pub fn similar_to(&self, id: i64, k: usize) -> Result<Vec<Similar>> {
        let k = k.min(100);
        let hits = {
            let index = self.index_read();
            // (From the database when this process has not read every vector.)
            let held = index.vector(id).map(<[f32]>::to_vec);
            let v = match held {
                Some(v) => Some(v),
                None if index.in_database() => self.with_store(|s| s.read().embedding_of(id))?,
                None => None,
            };
            let Some(v) = v else {
                return self.with_store(|s| {
                    if s.read().get_memories(&[id])?.is_empty() {
                        Err(crate::Error::NotFound { id })
                    } else {
                        Ok(Vec::new())
                    }
                });
            };
            // A few more than asked: the memory itself, and any that are not visible.
            index.search(&v, k + 8, None, None).0
        };
        let ids: Vec<i64> = hits.iter().map(|h| h.0).filter(|&h| h != id).collect();
        let mut visible: std::collections::HashMap<i64, crate::Memory> = self.with_store(|s| {
            Ok(s.read()
                .get_memories(&ids)?
                .into_iter()
                .filter(|m| m.deleted_at.is_none() && m.state != State::Forgotten)
                .map(|m| (m.id, m))
                .collect())
        })?;
        Ok(hits
            .into_iter()
            .filter_map(|(id, similarity)| {
                let memory = visible.remove(&id)?;
                Some(Similar {
                    id,
                    similarity,
                    memory,
                })
            })
            .take(k)
            .collect())
    }
}
impl Somna {
    /// The link graph around `seeds`: breadth-first over links in both directions up to
    /// `depth` hops and `limit` nodes (strongest links first), with every link among the
    /// nodes reached. Hidden (deleted or forgotten) memories are skipped. With no seeds, the
    /// most linked visible memories are used.
    pub fn neighbourhood(
        &self,
        seeds: &[i64],
        depth: usize,
        limit: usize,
    ) -> Result<Neighbourhood> {
        self.with_store(|store| {
            let read = store.read();
            let mut seeds = seeds.to_vec();
            if seeds.is_empty() {
                seeds = read.most_linked(12)?;
            }
            let limit = limit.max(1);
            // Each node's links are read once, for the walk and for the edges.
            let mut cache: std::collections::HashMap<i64, Vec<crate::store::Link>> =
                std::collections::HashMap::new();
            let mut links_of = |id: i64| -> Result<Vec<crate::store::Link>> {
                if let Some(l) = cache.get(&id) {
                    return Ok(l.clone());
                }
                let l = read.links_of(id)?;
                cache.insert(id, l.clone());
                Ok(l)
            };
            let mut out = Neighbourhood::default();
            let mut seen = std::collections::HashMap::new();
            let mut frontier = Vec::new();
            for &s in &seeds {
                if out.nodes.len() >= limit {
                    out.truncated = true;
                    break;
                }
                if let Some(m) = read.get_memory(s)?.filter(visible) {
                    if seen.insert(s, 0).is_none() {
                        out.nodes.push(node(&m, 0));
                        frontier.push(s);
                    }
                }
            }
            for d in 1..=depth {
                let mut next = Vec::new();
                for &id in &frontier {
                    let mut links = links_of(id)?;
                    links.sort_by(|a, b| b.score.total_cmp(&a.score));
                    for l in links {
                        let other = if l.src == id { l.dst } else { l.src };
                        if seen.contains_key(&other) {
                            continue;
                        }
                        if out.nodes.len() >= limit {
                            out.truncated = true;
                            break;
                        }
                        if let Some(m) = read.get_memory(other)?.filter(visible) {
                            seen.insert(other, d);
                            out.nodes.push(node(&m, d));
                            next.push(other);
                        }
                    }
                }
                frontier = next;
            }
            for n in &out.nodes {
                for l in links_of(n.id)? {
                    if l.src == n.id && seen.contains_key(&l.dst) {
                        out.edges.push(GraphEdge {
                            src: l.src,
                            dst: l.dst,
                            kind: l.kind,
                            score: l.score,
                        });
                    }
                }
            }
            Ok(out)
        })
    }
}
impl Somna {
    /// Every speaker name in the store, alphabetically (the engine's cached list).
    pub fn actors(&self) -> Vec<String> {
        let mut a = self
            .actors
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        a.sort_by_key(|s| s.to_lowercase());
        a
    }
}
impl Somna {
    /// The parameters of the cached layout of `method` in `dims` dimensions, if any (a full
    /// recomputation from the app reuses them).
    pub fn layout_params(
        &self,
        method: crate::ProjectionMethod,
        dims: usize,
    ) -> Result<Option<crate::ProjectionParams>> {
        let cached = self.with_store(|s| s.read().get_layout(method.as_str(), dims))?;
        Ok(cached
            .map(|c| serde_json::from_str(&c.params))
            .transpose()?)
    }
}
impl Somna {
    /// What the last `cycles` sleep cycles did to memory `id`, newest cycle first.
    pub fn memory_sleep_history(&self, id: i64, cycles: usize) -> Result<Vec<MemorySleepEvent>> {
        let mut out = Vec::new();
        let touching = self.store().read().cycles_touching(id, cycles)?;
        for cycle in touching {
            let r = self.sleep_report(cycle)?;
            let ev = |event: &str| MemorySleepEvent {
                cycle,
                started_at: r.started_at,
                status: r.status.clone(),
                event: event.into(),
                field: None,
                old: None,
                new: None,
                created: None,
            };
            for c in r.changed.iter().filter(|c| c.memory_id == id) {
                out.push(MemorySleepEvent {
                    field: Some(c.field.clone()),
                    old: Some(c.old.clone()),
                    new: Some(c.new.clone()),
                    ..ev("changed")
                });
            }
            if r.forgotten.contains(&id) {
                out.push(ev("forgotten"));
            }
            for p in r.created.iter().filter(|p| p.derived_from.contains(&id)) {
                out.push(MemorySleepEvent {
                    created: p.id,
                    ..ev("consolidated")
                });
            }
        }
        Ok(out)
    }
}
