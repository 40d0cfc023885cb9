//! Liquid clustering (seed 003): memories flow between concept clusters along affinities
//! to their nearest neighbours, and converged clusters merge.
//!
//! * Affinity of memory i to neighbour j: 0.4 co-access + 0.3 temporal proximity + 0.3
//!   semantic similarity, over i's k nearest neighbours from the vector index (plus the
//!   memories it was co-retrieved with). Never an n² matrix.
//! * Pull of cluster c on i: the summed affinity to i's neighbours in c over the number of
//!   neighbours, times c's energy (the mean energy of its members). i flows to the cluster
//!   with the strongest pull when that beats both the flow rate and its own cluster's pull.
//! * Energy of a memory: +0.05 per access since the last step (capped at 1), × 0.99 per step.
//! * Live clusters whose centroids exceed cosine 0.85 merge (the smaller into the larger),
//!   recorded in `cluster_merges`.
//!
//! The neighbour lists and per-memory state are cached in memory between steps (built on
//! the first step, extended for new memories); the store lock is taken only to read what
//! changed and to write the step's results, the index read lock only in short chunks.

use super::Clustering;
use super::{confidence, labels, neighbour_file, ClusterMerge};
use crate::events::Job;
use crate::project::knn::nearest_by_dot;
use crate::store::{ClusterRow, EnergyRow, MemoryFilter};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

pub const DEFAULT_DECAY: f32 = 0.99;
const STEP_META: &str = "liquid_step";
/// Up to this many memories, neighbour lists come from exact matrix products.
const EXACT_NEIGHBOURS: usize = 20_000;
const NONE: u32 = u32::MAX;
/// Clusters searched (its own included) for a memory's neighbours above EXACT_NEIGHBOURS.
const IVF_PROBES: usize = 4;

/// k nearest rows of every row of `x` among the rows of its own cluster and of the
/// `probes − 1` clusters whose centroids are nearest to that cluster's: exact matrix
/// products per cluster, so ~n · probes · n/clusters dot products instead of n².
fn ivf_neighbours(
    x: &[f32],
    d: usize,
    cluster: &[u32],
    centroids: &[Vec<f32>],
    k: usize,
    probes: usize,
    job: &Job,
) -> Result<Vec<Vec<(u32, f32)>>> {
    let n = x.len() / d;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); centroids.len()];
    for (r, &c) in cluster.iter().enumerate() {
        if c != NONE {
            members[c as usize].push(r);
        }
    }
    let mut out: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
    let mut done = 0;
    for (c, rows) in members.iter().enumerate() {
        job.cancel.check()?;
        if rows.is_empty() {
            continue;
        }
        let mut near: Vec<(usize, f32)> = (0..centroids.len())
            .filter(|&o| !members[o].is_empty())
            .map(|o| (o, crate::embed::dot(&centroids[c], &centroids[o])))
            .collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut base_rows: Vec<usize> = rows.clone();
        for &(o, _) in near
            .iter()
            .filter(|p| p.0 != c)
            .take(probes.saturating_sub(1))
        {
            base_rows.extend(&members[o]);
        }
        let gather = |rs: &[usize]| -> Vec<f32> {
            rs.iter()
                .flat_map(|&r| x[r * d..(r + 1) * d].iter().copied())
                .collect()
        };
        let (q, b) = (gather(rows), gather(&base_rows));
        // Own rows come first in `base_rows`, so row i of q is row i of b: skip itself.
        let found = nearest_by_dot(&q, &b, d, k, true, &Job::default(), "neighbours")?;
        for (i, list) in found.into_iter().enumerate() {
            out[rows[i]] = list
                .into_iter()
                .map(|(j, s)| (base_rows[j] as u32, s))
                .collect();
        }
        done += rows.len();
        job.report("neighbours", done as u64, n as u64);
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiquidParams {
    /// A memory moves only when its strongest pull × energy exceeds this.
    pub flow_rate: f32,
    /// Clusters whose centroids' cosine similarity exceeds this merge.
    pub merge_threshold: f32,
    /// Nearest neighbours per memory.
    pub neighbours: usize,
    pub w_co_access: f32,
    pub w_temporal: f32,
    pub w_semantic: f32,
    /// Temporal proximity is exp(−|Δt| / this many hours).
    pub temporal_scale_hours: f64,
    /// Energy factor per step.
    pub decay: f32,
    /// Energy gained per access.
    pub energy_per_access: f32,
    /// Pause between steps of a running [`LiquidLoop`].
    pub interval_ms: u64,
}

impl Default for LiquidParams {
    fn default() -> Self {
        Self {
            flow_rate: 0.05,
            merge_threshold: 0.85,
            neighbours: 10,
            w_co_access: 0.4,
            w_temporal: 0.3,
            w_semantic: 0.3,
            temporal_scale_hours: 24.0,
            decay: DEFAULT_DECAY,
            energy_per_access: super::ENERGY_PER_ACCESS,
            interval_ms: 1000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Moved {
    pub memory_id: i64,
    pub from: i64,
    pub to: i64,
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiquidStep {
    pub step: i64,
    pub moved: Vec<Moved>,
    pub merged: Vec<ClusterMerge>,
    pub energy_mean: f32,
    pub energy_max: f32,
    /// Live clusters after the step.
    pub clusters: usize,
    pub memories: usize,
    /// Wall time of the step, excluding a first-step neighbour build.
    pub millis: u64,
    /// Time spent building or extending the neighbour cache (0 on a warm step).
    pub prepare_millis: u64,
    /// Clusters whose membership changed enough that their label was recomputed.
    #[serde(default)]
    pub relabelled: Vec<Relabelled>,
    /// On a step that built the neighbour cache: how many lists came from the file saved
    /// beside the store (the rest were searched).
    #[serde(default)]
    pub reused_neighbour_lists: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Relabelled {
    pub cluster_id: i64,
    pub label: String,
}

/// A cluster is relabelled once this share of its members has moved in or out since its
/// label was computed (and at least RELABEL_MIN_MOVES), or when another merged into it.
const RELABEL_SHARE: f64 = 0.1;
const RELABEL_MIN_MOVES: usize = 3;

/// The energy stored in `e`, decayed to `step`.
pub fn decayed(e: &EnergyRow, step: i64, decay: f32) -> f32 {
    e.energy * decay.powi((step - e.at_step).max(0) as i32)
}

#[derive(Debug, Clone, Copy)]
struct Nb {
    row: u32,
    semantic: f32,
    temporal: f32,
    co: f32,
}

#[derive(Debug, Clone)]
struct ClusterState {
    id: i64,
    label: String,
    sum: Vec<f32>,
    count: usize,
    live: bool,
    /// Members moved in or out since the label was computed.
    churn: usize,
    /// A person named it: never relabelled.
    named: bool,
}

/// Cached state of the liquid loop between steps.
pub(crate) struct LiquidCache {
    ids: Vec<i64>,
    row_of: HashMap<i64, u32>,
    alive: Vec<bool>,
    nbrs: Vec<Vec<Nb>>,
    times: Vec<i64>,
    cluster: Vec<u32>,
    clusters: Vec<ClusterState>,
    energy: Vec<f32>,
    credited: Vec<i64>,
    step: i64,
    synced_at: i64,
    index_seq: i64,
    index_len: usize,
    neighbours: usize,
    temporal_scale_ms: f64,
    /// Label terms' frequencies over the memories, and the speakers' names (for labels),
    /// built at the first relabelling.
    label_corpus: Option<labels::Corpus>,
    /// Neighbour lists taken from the saved file when the cache was built.
    reused_lists: usize,
    /// By row: a person placed the memory in its cluster (never moved by a step).
    placed: Vec<bool>,
}

/// Each memory's neighbours as (row, cosine similarity).
type RowLists = Vec<Vec<(u32, f32)>>;

fn co_value(count: i64) -> f32 {
    1.0 - (-(count as f32) / 3.0).exp()
}

fn affinity(n: &Nb, p: &LiquidParams) -> f32 {
    p.w_co_access * n.co + p.w_temporal * n.temporal + p.w_semantic * n.semantic.max(0.0)
}

impl Clustering<'_> {
    pub(crate) fn liquid_step_count(&self) -> Result<i64> {
        Ok(self
            .store()
            .get_meta(STEP_META)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    pub(crate) fn reset_liquid(&self) {
        *self.liquid.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// One step of the liquid loop; builds the neighbour cache on the first call.
    pub(crate) fn liquid_step(&self, params: &LiquidParams) -> Result<LiquidStep> {
        self.liquid_step_with(params, &Job::default())
    }

    /// [`Somna::liquid_step`] with progress (of a first-step neighbour build) and cancellation.
    pub(crate) fn liquid_step_with(&self, params: &LiquidParams, job: &Job) -> Result<LiquidStep> {
        if params.neighbours == 0 || !(0.0..=1.0).contains(&params.decay) {
            return Err(Error::InvalidInput(
                "liquid parameters: neighbours must be ≥ 1 and decay within 0..=1".into(),
            ));
        }
        let mut guard = self.liquid.lock().unwrap_or_else(|p| p.into_inner());
        let prep = Instant::now();
        let stale = guard.as_ref().is_none_or(|c| {
            c.neighbours != params.neighbours
                || c.temporal_scale_ms != params.temporal_scale_hours * 3_600_000.0
        });
        if stale {
            *guard = None;
            // Memories embedded since the last clustering join a cluster first.
            self.incremental_assign()?;
            *guard = Some(self.build_liquid(params, job)?);
        }
        let cache = guard.as_mut().expect("built above");
        self.extend_liquid(cache, params, job)?;
        let prepare_millis = if stale {
            prep.elapsed().as_millis() as u64
        } else {
            0
        };
        let started = Instant::now();
        let mut out = self.run_step(cache, params)?;
        out.millis = started.elapsed().as_millis() as u64;
        out.prepare_millis = prepare_millis;
        if stale {
            out.reused_neighbour_lists = cache.reused_lists;
        }
        Ok(out)
    }

    /// Builds the loop's cache: the clustered memories with their vectors, energies and
    /// cluster sums from the store and the index, then each memory's neighbour list.
    fn build_liquid(&self, params: &LiquidParams, job: &Job) -> Result<LiquidCache> {
        let inputs = self.liquid_inputs()?;
        if inputs.rows.iter().all(|c| c.merged_into.is_some()) {
            return Err(Error::InvalidInput(
                "there are no clusters yet: run `cluster` first".into(),
            ));
        }
        let synced_at = crate::store::now_ms();
        let d = self.embedder().dim();
        let timed: HashSet<i64> = inputs.times.iter().map(|t| t.0).collect();
        let assigned: HashSet<i64> = inputs.assignments.iter().map(|a| a.0).collect();
        // The memories of the loop: visible, embedded and clustered.
        let (ids, x, index_at) = {
            let index = self.index_read()?;
            let mut ids: Vec<i64> = index
                .ids()
                .filter(|id| timed.contains(id) && assigned.contains(id))
                .collect();
            ids.sort_unstable();
            let mut x = Vec::with_capacity(ids.len() * d);
            for id in &ids {
                x.extend_from_slice(index.vector(*id).expect("listed by the index"));
            }
            (ids, x, (index.seq(), index.len()))
        };
        let (mut cache, missing) =
            LiquidCache::from_inputs(&inputs, ids, &x, d, params, synced_at, index_at);
        if !missing.is_empty() {
            self.store().transaction(|tx| tx.put_energies(&missing))?;
        }
        let lists = self.neighbour_lists(&mut cache, &x, d, params.neighbours, job)?;
        cache.set_neighbours(lists);
        self.add_co_access(&mut cache, &inputs.co_pairs)?;
        Ok(cache)
    }

    /// What the store holds for a new cache.
    fn liquid_inputs(&self) -> Result<LiquidInputs> {
        let store = self.store();
        let read = store.read();
        Ok(LiquidInputs {
            rows: read.all_clusters()?,
            assignments: read.cluster_assignments()?,
            energies: read.energies()?,
            times: read.memory_times()?,
            co_pairs: read.co_access_since(i64::MIN)?,
            step: store
                .get_meta(STEP_META)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0i64),
        })
    }

    /// Neighbour lists of the cache's rows (`x` holds their vectors): saved beside the
    /// store by an earlier build when still valid; otherwise exact by matrix products when
    /// small, and above that exact within each cluster and its nearest clusters (an
    /// inverted-file search over the clusters). Saves what it computed.
    fn neighbour_lists(
        &self,
        cache: &mut LiquidCache,
        x: &[f32],
        d: usize,
        k: usize,
        job: &Job,
    ) -> Result<RowLists> {
        let n = cache.ids.len();
        let file = neighbour_file::path_for(self.store().path());
        let saved = match file.as_deref().and_then(|p| neighbour_file::load(p, k)) {
            Some((seq, lists)) => self.reuse_neighbours(cache, &lists, seq, k, job)?,
            None => None,
        };
        let lists: RowLists = match saved {
            Some((lists, reused)) => {
                cache.reused_lists = reused;
                lists
            }
            None if n <= EXACT_NEIGHBOURS => nearest_by_dot(x, x, d, k, true, job, "neighbours")?
                .into_iter()
                .map(|l| l.into_iter().map(|(r, s)| (r as u32, s)).collect())
                .collect(),
            None => {
                let centroids: Vec<Vec<f32>> = cache
                    .clusters
                    .iter()
                    .map(|c| {
                        let mut v = c.sum.clone();
                        crate::embed::normalize(&mut v);
                        v
                    })
                    .collect();
                ivf_neighbours(x, d, &cache.cluster, &centroids, k, IVF_PROBES, job)?
            }
        };
        if let Some(path) = &file {
            let by_id: Vec<Vec<(i64, f32)>> = lists
                .iter()
                .map(|l| l.iter().map(|&(j, s)| (cache.ids[j as usize], s)).collect())
                .collect();
            let entries = cache
                .ids
                .iter()
                .copied()
                .zip(by_id.iter().map(Vec::as_slice));
            // A cache: a store in a read-only directory just rebuilds next time.
            let _ = neighbour_file::save(path, k, cache.index_seq, entries);
        }
        Ok(lists)
    }

    /// Neighbour lists from a saved file: reused for memories whose embedding has not
    /// changed since it was written, searched afresh (HNSW) for the others. `None` when
    /// more than a fifth would need a search: a full build is then as quick.
    fn reuse_neighbours(
        &self,
        cache: &LiquidCache,
        saved: &neighbour_file::Lists,
        seq: i64,
        k: usize,
        job: &Job,
    ) -> Result<Option<(RowLists, usize)>> {
        if seq > cache.index_seq {
            return Ok(None);
        }
        let changed: HashSet<i64> = self
            .store()
            .read()
            .embeddings_since(seq)?
            .into_iter()
            .map(|e| e.0)
            .collect();
        let mut lists = Vec::with_capacity(cache.ids.len());
        let mut missing = Vec::new();
        for (r, id) in cache.ids.iter().enumerate() {
            match saved.get(id).filter(|_| !changed.contains(id)) {
                Some(l) => lists.push(
                    l.iter()
                        .filter_map(|(j, s)| cache.row_of.get(j).map(|&row| (row, *s)))
                        .collect(),
                ),
                None => {
                    missing.push((r, *id));
                    lists.push(Vec::new());
                }
            }
        }
        if missing.len() * 5 > cache.ids.len() {
            return Ok(None);
        }
        let ids: Vec<i64> = missing.iter().map(|m| m.1).collect();
        let found = self.hnsw_neighbours(&ids, &cache.row_of, k, job)?;
        let reused = cache.ids.len() - missing.len();
        for ((r, _), list) in missing.into_iter().zip(found) {
            lists[r] = list;
        }
        Ok(Some((lists, reused)))
    }

    /// k nearest neighbours (rows of `ids`) of each of `queries` by HNSW search, the
    /// index read lock taken per chunk.
    fn hnsw_neighbours(
        &self,
        queries: &[i64],
        row_of: &HashMap<i64, u32>,
        k: usize,
        job: &Job,
    ) -> Result<Vec<Vec<(u32, f32)>>> {
        let mut out = Vec::with_capacity(queries.len());
        for chunk in queries.chunks(2048) {
            job.cancel.check()?;
            let index = self.index_read()?;
            let pass = |id: i64| row_of.contains_key(&id);
            let part: Vec<Vec<(u32, f32)>> = chunk
                .par_iter()
                .map(|id| {
                    let v = index.vector(*id).unwrap_or(&[]);
                    let (hits, _) = index.search(v, k + 1, Some(&|x| x != *id && pass(x)), None);
                    hits.into_iter()
                        .take(k)
                        .map(|(j, s)| (row_of[&j], s))
                        .collect()
                })
                .collect();
            drop(index);
            out.extend(part);
            job.report("neighbours", out.len() as u64, queries.len() as u64);
        }
        Ok(out)
    }

    /// Adds co-access counts to the neighbour lists, adding co-retrieved memories as
    /// neighbours where they are not already.
    fn add_co_access(&self, cache: &mut LiquidCache, pairs: &[(i64, i64, i64)]) -> Result<()> {
        let mut missing = Vec::new();
        for &(a, b, count) in pairs {
            let (Some(&ra), Some(&rb)) = (cache.row_of.get(&a), cache.row_of.get(&b)) else {
                continue;
            };
            for (x, y) in [(ra, rb), (rb, ra)] {
                match cache.nbrs[x as usize].iter_mut().find(|n| n.row == y) {
                    Some(n) => n.co = co_value(count),
                    None => missing.push((x, y, count)),
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let index = self.index_read()?;
        for (x, y, count) in missing {
            let (a, b) = (cache.ids[x as usize], cache.ids[y as usize]);
            let semantic = match (index.vector(a), index.vector(b)) {
                (Some(va), Some(vb)) => crate::embed::dot(va, vb),
                _ => 0.0,
            };
            let temporal = cache.temporal(x as usize, y as usize);
            cache.nbrs[x as usize].push(Nb {
                row: y,
                semantic,
                temporal,
                co: co_value(count),
            });
        }
        Ok(())
    }

    /// Brings the cache up to date with memories added or removed since it was built.
    fn extend_liquid(
        &self,
        cache: &mut LiquidCache,
        params: &LiquidParams,
        job: &Job,
    ) -> Result<()> {
        let (seq, len) = {
            let index = self.index_read()?;
            (index.seq(), index.len())
        };
        if seq == cache.index_seq && len == cache.index_len {
            return Ok(());
        }
        self.incremental_assign()?;
        let (assigned, times, visible) = {
            let store = self.store();
            let read = store.read();
            let visible: HashSet<i64> = read
                .filter_ids(&MemoryFilter::default())?
                .into_iter()
                .collect();
            (read.cluster_assignments()?, read.memory_times()?, visible)
        };
        let index = self.index_read()?;
        // Removed memories leave their clusters.
        for r in 0..cache.ids.len() {
            let id = cache.ids[r];
            if cache.alive[r] && (!visible.contains(&id) || index.vector(id).is_none()) {
                cache.alive[r] = false;
                let c = cache.cluster[r];
                if c != NONE {
                    let st = &mut cache.clusters[c as usize];
                    st.count = st.count.saturating_sub(1);
                    if let Some(v) = index.vector(id) {
                        st.sum.iter_mut().zip(v).for_each(|(s, x)| *s -= x);
                    }
                }
                cache.cluster[r] = NONE;
            }
        }
        let cluster_pos: HashMap<i64, u32> = cache
            .clusters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i as u32))
            .collect();
        let time_of: HashMap<i64, (i64, i64)> =
            times.iter().map(|&(id, t, a)| (id, (t, a))).collect();
        let mut fresh = Vec::new();
        for (id, cid, _) in assigned {
            if cache.row_of.contains_key(&id) || !visible.contains(&id) {
                continue;
            }
            let (Some(v), Some(&c), Some(&(t, a))) =
                (index.vector(id), cluster_pos.get(&cid), time_of.get(&id))
            else {
                continue;
            };
            let r = cache.ids.len() as u32;
            cache.ids.push(id);
            cache.row_of.insert(id, r);
            cache.alive.push(true);
            cache.times.push(t);
            cache.cluster.push(c);
            cache.energy.push(super::INITIAL_ENERGY);
            cache.credited.push(a);
            cache.nbrs.push(Vec::new());
            let st = &mut cache.clusters[c as usize];
            st.count += 1;
            st.sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
            fresh.push(id);
        }
        cache.index_seq = index.seq();
        cache.index_len = index.len();
        drop(index);
        let lists = self.hnsw_neighbours(&fresh, &cache.row_of, params.neighbours, job)?;
        for (id, list) in fresh.iter().zip(lists) {
            let i = cache.row_of[id] as usize;
            for (j, s) in list {
                let temporal = cache.temporal(i, j as usize);
                cache.nbrs[i].push(Nb {
                    row: j,
                    semantic: s,
                    temporal,
                    co: 0.0,
                });
                // Symmetric edge, so existing memories feel the newcomer too.
                if !cache.nbrs[j as usize].iter().any(|n| n.row as usize == i) {
                    cache.nbrs[j as usize].push(Nb {
                        row: i as u32,
                        semantic: s,
                        temporal,
                        co: 0.0,
                    });
                }
            }
        }
        let rows: Vec<EnergyRow> = fresh
            .iter()
            .map(|id| {
                let r = cache.row_of[id] as usize;
                EnergyRow {
                    memory_id: *id,
                    energy: cache.energy[r],
                    at_step: cache.step,
                    accesses: cache.credited[r],
                }
            })
            .collect();
        self.store().transaction(|tx| tx.put_energies(&rows))?;
        Ok(())
    }

    /// One step over the cache, in stages: take in new accesses (energy credit and decay,
    /// co-access affinities), plan the flow of memories toward the clusters that pull them
    /// hardest, apply it, merge clusters that converged, relabel, commit.
    fn run_step(&self, cache: &mut LiquidCache, params: &LiquidParams) -> Result<LiquidStep> {
        let now = crate::store::now_ms();
        let (accessed, co_pairs) = {
            let store = self.store();
            let read = store.read();
            (
                read.accessed_since(cache.synced_at)?,
                read.co_access_since(cache.synced_at)?,
            )
        };
        cache.synced_at = now;
        self.sync_person_edits(cache)?;
        self.add_co_access(cache, &co_pairs)?;
        cache.step += 1;
        let dirty = cache.credit_accesses(&accessed, params);
        let e_cluster = cache.cluster_energies();
        let moves = cache.plan_flow(&e_cluster, params);
        let flow = {
            let index = self.index_read()?;
            cache.apply_moves(&moves, |id| index.vector(id))
        };
        let mut touched = flow.touched;
        let d = self.embedder().dim();
        let merged_pairs = cache.apply_merges(params.merge_threshold, d, &mut touched);
        let relabelled = self.relabel(cache, &touched)?;
        let energy_rows = cache.energy_rows(&dirty);
        let updates = cache.cluster_updates(&touched, &e_cluster);
        let step = cache.step;
        let merged = self.store().transaction(|tx| {
            tx.set_members(&flow.members)?;
            let mut merged = Vec::new();
            for &(from, into, sim) in &merged_pairs {
                tx.reassign_cluster(from, into)?;
                merged.push(tx.record_merge(from, into, sim, now)?);
            }
            for (id, label, centroid, energy) in &updates {
                tx.update_cluster(*id, label, centroid, *energy, now)?;
            }
            tx.put_energies(&energy_rows)?;
            tx.set_meta(STEP_META, &step.to_string())?;
            Ok(merged)
        })?;
        Ok(cache.step_report(flow.moved, merged, relabelled))
    }

    /// Takes the labels as stored (a person may have renamed a cluster, here or in another
    /// process), which of them a person gave, and which memories a person placed.
    fn sync_person_edits(&self, cache: &mut LiquidCache) -> Result<()> {
        let (labels, placed) = {
            let store = self.store();
            let read = store.read();
            (read.cluster_labels()?, read.person_placed()?)
        };
        cache.placed = vec![false; cache.ids.len()];
        for id in placed {
            if let Some(&r) = cache.row_of.get(&id) {
                cache.placed[r as usize] = true;
            }
        }
        let pos: HashMap<i64, usize> = cache
            .clusters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i))
            .collect();
        for (id, label, named) in labels {
            if let Some(&i) = pos.get(&id) {
                let st = &mut cache.clusters[i];
                st.label = label;
                st.named = named;
            }
        }
        Ok(())
    }

    /// Recomputes the labels of touched clusters whose membership changed enough (not
    /// those a person named).
    fn relabel(&self, cache: &mut LiquidCache, touched: &HashSet<u32>) -> Result<Vec<Relabelled>> {
        let due: Vec<u32> = touched
            .iter()
            .copied()
            .filter(|&c| {
                let st = &cache.clusters[c as usize];
                st.live
                    && !st.named
                    && st.churn >= RELABEL_MIN_MOVES
                    && st.churn as f64 >= RELABEL_SHARE * st.count as f64
            })
            .collect();
        if due.is_empty() {
            return Ok(Vec::new());
        }
        if cache.label_corpus.is_none() {
            let store = self.store();
            let read = store.read();
            let texts = read.texts_and_accesses()?;
            let extractor = labels::Extractor::new(&read.actors()?);
            let (corpus, _) = labels::Corpus::build(texts.iter().map(|t| t.1.as_str()), extractor);
            cache.label_corpus = Some(corpus);
        }
        let mut out = Vec::with_capacity(due.len());
        for c in due {
            let members: Vec<i64> = (0..cache.ids.len())
                .filter(|&r| cache.alive[r] && cache.cluster[r] == c)
                .map(|r| cache.ids[r])
                .collect();
            let texts = self.store().read().texts_of(&members)?;
            let corpus = cache.label_corpus.as_ref().expect("built above");
            let terms: Vec<Vec<String>> = texts.iter().map(|t| corpus.terms(t)).collect();
            let refs: Vec<&[String]> = terms.iter().map(Vec::as_slice).collect();
            // Labels stay unique: terms another live cluster's label uses are left out.
            let live = cache.clusters.iter().filter(|o| o.live).count();
            let taken: HashSet<String> = cache
                .clusters
                .iter()
                .enumerate()
                .filter(|(i, o)| o.live && *i != c as usize)
                .flat_map(|(_, o)| labels::label_terms(&o.label).collect::<Vec<_>>())
                .collect();
            let others: HashSet<&str> = cache
                .clusters
                .iter()
                .enumerate()
                .filter(|(i, o)| o.live && *i != c as usize)
                .map(|(_, o)| o.label.as_str())
                .collect();
            let base = labels::label_one(&refs, corpus, live, &taken, 3);
            let mut label = base.clone();
            for n in 2.. {
                if !others.contains(label.as_str()) {
                    break;
                }
                label = format!("{base} ({n})");
            }
            let st = &mut cache.clusters[c as usize];
            st.churn = 0;
            if label != st.label {
                st.label = label.clone();
                out.push(Relabelled {
                    cluster_id: st.id,
                    label,
                });
            }
        }
        Ok(out)
    }
}

impl LiquidCache {
    fn temporal(&self, i: usize, j: usize) -> f32 {
        let dt = (self.times[i] - self.times[j]).abs() as f64;
        (-dt / self.temporal_scale_ms.max(1.0)).exp() as f32
    }

    /// Pairs of live clusters whose centroids exceed `threshold` cosine, most similar
    /// first, each cluster in at most one pair: (from = smaller, into = larger, similarity).
    fn find_merges(&self, threshold: f32) -> Vec<(u32, u32, f32)> {
        let live: Vec<(u32, Vec<f32>)> = self
            .clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.live && c.count > 0)
            .map(|(i, c)| {
                let mut v = c.sum.clone();
                crate::embed::normalize(&mut v);
                (i as u32, v)
            })
            .collect();
        let mut pairs = Vec::new();
        for a in 0..live.len() {
            for b in a + 1..live.len() {
                let sim = crate::embed::dot(&live[a].1, &live[b].1);
                if sim > threshold {
                    pairs.push((live[a].0, live[b].0, sim));
                }
            }
        }
        pairs.sort_by(|x, y| y.2.total_cmp(&x.2).then(x.0.cmp(&y.0)).then(x.1.cmp(&y.1)));
        let mut used = HashSet::new();
        let mut out = Vec::new();
        for (a, b, sim) in pairs {
            if used.contains(&a) || used.contains(&b) {
                continue;
            }
            used.insert(a);
            used.insert(b);
            let (from, into) = if self.clusters[a as usize].count < self.clusters[b as usize].count
            {
                (a, b)
            } else {
                (b, a)
            };
            out.push((from, into, sim));
        }
        out
    }
}

/// What the store holds for a new liquid cache.
struct LiquidInputs {
    rows: Vec<ClusterRow>,
    assignments: Vec<(i64, i64, f32)>,
    energies: Vec<EnergyRow>,
    /// (memory id, occurred or created at, access count).
    times: Vec<(i64, i64, i64)>,
    co_pairs: Vec<(i64, i64, i64)>,
    step: i64,
}

impl LiquidCache {
    /// The cache of the memories `ids` (their vectors row-major in `x`) before neighbour
    /// lists: cluster states with their sums, energies restored from the store (decayed to
    /// the current step), and the energy rows the store is missing (to be written).
    fn from_inputs(
        inputs: &LiquidInputs,
        ids: Vec<i64>,
        x: &[f32],
        d: usize,
        params: &LiquidParams,
        synced_at: i64,
        (index_seq, index_len): (i64, usize),
    ) -> (Self, Vec<EnergyRow>) {
        let step = inputs.step;
        let cluster_pos: HashMap<i64, u32> = inputs
            .rows
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i as u32))
            .collect();
        let clusters: Vec<ClusterState> = inputs
            .rows
            .iter()
            .map(|c| ClusterState {
                id: c.id,
                label: c.label.clone(),
                sum: vec![0.0; d],
                count: 0,
                live: c.merged_into.is_none(),
                churn: 0,
                named: false,
            })
            .collect();
        let time_of: HashMap<i64, (i64, i64)> = inputs
            .times
            .iter()
            .map(|&(id, t, a)| (id, (t, a)))
            .collect();
        let assigned: HashMap<i64, i64> = inputs.assignments.iter().map(|a| (a.0, a.1)).collect();
        let n = ids.len();
        let mut cache = LiquidCache {
            row_of: ids
                .iter()
                .enumerate()
                .map(|(r, id)| (*id, r as u32))
                .collect(),
            alive: vec![true; n],
            nbrs: Vec::new(),
            times: ids.iter().map(|id| time_of[id].0).collect(),
            cluster: ids
                .iter()
                .map(|id| cluster_pos.get(&assigned[id]).copied().unwrap_or(NONE))
                .collect(),
            clusters,
            energy: vec![super::INITIAL_ENERGY; n],
            credited: ids.iter().map(|id| time_of[id].1).collect(),
            step,
            synced_at,
            index_seq,
            index_len,
            neighbours: params.neighbours,
            temporal_scale_ms: params.temporal_scale_hours * 3_600_000.0,
            label_corpus: None,
            reused_lists: 0,
            placed: Vec::new(),
            ids,
        };
        for e in &inputs.energies {
            if let Some(&r) = cache.row_of.get(&e.memory_id) {
                cache.energy[r as usize] = decayed(e, step, params.decay);
                cache.credited[r as usize] = e.accesses;
            }
        }
        let known: HashSet<i64> = inputs.energies.iter().map(|e| e.memory_id).collect();
        let missing: Vec<EnergyRow> = cache
            .ids
            .iter()
            .enumerate()
            .filter(|(_, id)| !known.contains(id))
            .map(|(r, id)| EnergyRow {
                memory_id: *id,
                energy: cache.energy[r],
                at_step: step,
                accesses: cache.credited[r],
            })
            .collect();
        for (r, row) in x.chunks_exact(d).enumerate() {
            let c = cache.cluster[r];
            if c != NONE {
                let st = &mut cache.clusters[c as usize];
                st.count += 1;
                st.sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
            }
        }
        (cache, missing)
    }

    /// Takes in neighbour lists as (row, cosine) per row, with their temporal affinities.
    fn set_neighbours(&mut self, lists: RowLists) {
        self.nbrs = lists
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                l.into_iter()
                    .map(|(j, s)| Nb {
                        row: j,
                        semantic: s,
                        temporal: self.temporal(i, j as usize),
                        co: 0.0,
                    })
                    .collect()
            })
            .collect();
    }
}

/// What applying a step's moves changed: the moves, the clusters they touched, and the
/// moved memories' new memberships (memory, cluster id, confidence).
struct Flow {
    moved: Vec<Moved>,
    touched: HashSet<u32>,
    members: Vec<(i64, i64, f32)>,
}

/// A cluster's row after a step: (id, label, centroid, energy).
type ClusterUpdate = (i64, String, Vec<f32>, f32);

/// The stages of a liquid step over the cached state (no store, no index).
impl LiquidCache {
    /// Credits each memory's accesses since the last step to its energy, then decays every
    /// energy; returns the rows whose credit changed (to be written).
    fn credit_accesses(&mut self, accessed: &[(i64, i64)], params: &LiquidParams) -> Vec<usize> {
        let mut dirty = Vec::new();
        for &(id, count) in accessed {
            if let Some(&r) = self.row_of.get(&id) {
                let r = r as usize;
                let delta = count - self.credited[r];
                if delta > 0 {
                    self.energy[r] =
                        (self.energy[r] + params.energy_per_access * delta as f32).min(1.0);
                    self.credited[r] = count;
                    dirty.push(r);
                }
            }
        }
        self.energy.iter_mut().for_each(|e| *e *= params.decay);
        dirty
    }

    /// Each cluster's energy: the mean energy of its live members.
    fn cluster_energies(&self) -> Vec<f32> {
        let nc = self.clusters.len();
        let mut e_sum = vec![0f32; nc];
        let mut e_cnt = vec![0usize; nc];
        for r in 0..self.ids.len() {
            let c = self.cluster[r];
            if self.alive[r] && c != NONE {
                e_sum[c as usize] += self.energy[r];
                e_cnt[c as usize] += 1;
            }
        }
        (0..nc).map(|c| e_sum[c] / e_cnt[c].max(1) as f32).collect()
    }

    /// The moves of a step as (row, cluster): each memory goes to the cluster whose pull
    /// (affinity to its members there, times the cluster's energy) is the strongest, when
    /// that beats its own cluster's and the flow rate. Decided on the assignment at the
    /// start of the step, so the order of rows does not matter.
    fn plan_flow(&self, e_cluster: &[f32], params: &LiquidParams) -> Vec<(usize, u32)> {
        (0..self.ids.len())
            .into_par_iter()
            .filter_map(|i| {
                let cur = self.cluster[i];
                let placed = self.placed.get(i).copied().unwrap_or(false);
                if !self.alive[i] || cur == NONE || self.nbrs[i].is_empty() || placed {
                    return None;
                }
                let mut pulls: Vec<(u32, f32)> = Vec::with_capacity(self.nbrs[i].len());
                for nb in &self.nbrs[i] {
                    let c = self.cluster[nb.row as usize];
                    if c == NONE || !self.alive[nb.row as usize] {
                        continue;
                    }
                    let a = affinity(nb, params);
                    match pulls.iter_mut().find(|p| p.0 == c) {
                        Some(p) => p.1 += a,
                        None => pulls.push((c, a)),
                    }
                }
                let norm = self.nbrs[i].len() as f32;
                let score = |(c, s): (u32, f32)| s / norm * e_cluster[c as usize];
                let own = pulls.iter().find(|p| p.0 == cur).map_or(0.0, |p| score(*p));
                let best = pulls
                    .iter()
                    .copied()
                    .map(|p| (p.0, score(p)))
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
                (best.0 != cur && best.1 > params.flow_rate && best.1 > own).then_some((i, best.0))
            })
            .collect()
    }

    /// Moves each memory of `moves` that still has a vector (`vector_of`), keeping the
    /// clusters' sums and counts current.
    fn apply_moves<'v>(
        &mut self,
        moves: &[(usize, u32)],
        vector_of: impl Fn(i64) -> Option<&'v [f32]>,
    ) -> Flow {
        let mut moved = Vec::with_capacity(moves.len());
        let mut touched: HashSet<u32> = HashSet::new();
        let mut member_rows = Vec::with_capacity(moves.len());
        for &(i, to) in moves {
            let from = self.cluster[i];
            let Some(v) = vector_of(self.ids[i]) else {
                continue;
            };
            let (src, dst) = (from as usize, to as usize);
            self.clusters[src].count -= 1;
            self.clusters[src]
                .sum
                .iter_mut()
                .zip(v)
                .for_each(|(s, x)| *s -= x);
            self.clusters[dst].count += 1;
            self.clusters[dst]
                .sum
                .iter_mut()
                .zip(v)
                .for_each(|(s, x)| *s += x);
            self.cluster[i] = to;
            self.clusters[src].churn += 1;
            self.clusters[dst].churn += 1;
            touched.insert(from);
            touched.insert(to);
            moved.push(Moved {
                memory_id: self.ids[i],
                from: self.clusters[src].id,
                to: self.clusters[dst].id,
            });
            member_rows.push((i, v));
        }
        let members = member_rows
            .iter()
            .map(|(i, v)| {
                let st = &self.clusters[self.cluster[*i] as usize];
                let n = st.count.max(1) as f32;
                let dist = v
                    .iter()
                    .zip(&st.sum)
                    .map(|(x, s)| (x - s / n).powi(2))
                    .sum::<f32>()
                    .sqrt();
                (self.ids[*i], st.id, confidence(dist))
            })
            .collect();
        Flow {
            moved,
            touched,
            members,
        }
    }

    /// Merges the clusters whose centroids converged (see [`Self::find_merges`]) into the
    /// larger of each pair; returns the merges as (from id, into id, similarity).
    fn apply_merges(
        &mut self,
        threshold: f32,
        d: usize,
        touched: &mut HashSet<u32>,
    ) -> Vec<(i64, i64, f32)> {
        let mut merged_pairs = Vec::new();
        for (from, into, sim) in self.find_merges(threshold) {
            for c in self.cluster.iter_mut() {
                if *c == from {
                    *c = into;
                }
            }
            let (f, t) = (from as usize, into as usize);
            let moved_sum = std::mem::take(&mut self.clusters[f].sum);
            self.clusters[t]
                .sum
                .iter_mut()
                .zip(&moved_sum)
                .for_each(|(s, x)| *s += x);
            self.clusters[f].sum = vec![0.0; d];
            self.clusters[t].churn += self.clusters[f].count.max(RELABEL_MIN_MOVES);
            self.clusters[t].count += self.clusters[f].count;
            self.clusters[f].count = 0;
            self.clusters[f].live = false;
            touched.insert(into);
            touched.remove(&from);
            merged_pairs.push((self.clusters[f].id, self.clusters[t].id, sim));
        }
        merged_pairs
    }

    /// The energy rows to write for the rows whose credit changed.
    fn energy_rows(&self, dirty: &[usize]) -> Vec<EnergyRow> {
        dirty
            .iter()
            .map(|&r| EnergyRow {
                memory_id: self.ids[r],
                energy: self.energy[r],
                at_step: self.step,
                accesses: self.credited[r],
            })
            .collect()
    }

    /// The rows of the clusters a step touched: label, centroid and energy.
    fn cluster_updates(&self, touched: &HashSet<u32>, e_cluster: &[f32]) -> Vec<ClusterUpdate> {
        touched
            .iter()
            .map(|&c| {
                let st = &self.clusters[c as usize];
                let n = st.count.max(1) as f32;
                (
                    st.id,
                    st.label.clone(),
                    st.sum.iter().map(|s| s / n).collect(),
                    e_cluster[c as usize],
                )
            })
            .collect()
    }

    /// The report of the step just committed.
    fn step_report(
        &self,
        moved: Vec<Moved>,
        merged: Vec<ClusterMerge>,
        relabelled: Vec<Relabelled>,
    ) -> LiquidStep {
        let alive: Vec<f32> = (0..self.ids.len())
            .filter(|&r| self.alive[r])
            .map(|r| self.energy[r])
            .collect();
        LiquidStep {
            step: self.step,
            moved,
            merged,
            energy_mean: alive.iter().sum::<f32>() / alive.len().max(1) as f32,
            energy_max: alive.iter().copied().fold(0.0, f32::max),
            clusters: self.clusters.iter().filter(|c| c.live).count(),
            memories: alive.len(),
            millis: 0,
            prepare_millis: 0,
            relabelled,
            reused_neighbour_lists: 0,
        }
    }
}

/// What the loop reports to whoever drives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiquidEvent {
    Step(LiquidStep),
    State { running: bool },
    Error { code: String, message: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kmeans::{fit, KMeansParams};
    use crate::project::tsne::tests::blobs;

    #[test]
    fn cluster_restricted_neighbours_agree_with_exact_ones() {
        let d = 32;
        let (x, _) = blobs(3000, 12, d, 9);
        let km = fit(&x, d, &KMeansParams::new(20), &Job::default()).unwrap();
        let cluster: Vec<u32> = km.labels.iter().map(|l| *l as u32).collect();
        let centroids: Vec<Vec<f32>> = km
            .centroids
            .chunks_exact(d)
            .map(|c| {
                let mut v = c.to_vec();
                crate::embed::normalize(&mut v);
                v
            })
            .collect();
        let ivf =
            ivf_neighbours(&x, d, &cluster, &centroids, 10, IVF_PROBES, &Job::default()).unwrap();
        let exact = nearest_by_dot(&x, &x, d, 10, true, &Job::default(), "t").unwrap();
        let mut hits = 0;
        for (a, e) in ivf.iter().zip(&exact) {
            assert_eq!(a.len(), 10);
            hits += a
                .iter()
                .filter(|p| e.iter().any(|q| q.0 == p.0 as usize))
                .count();
        }
        let recall = hits as f64 / (10.0 * 3000.0);
        assert!(recall > 0.95, "recall@10 {recall}");
    }

    #[test]
    fn a_new_cache_restores_decayed_energies_sums_members_and_lists_the_missing_rows() {
        let row = |id: i64, merged_into: Option<i64>| ClusterRow {
            id,
            label: format!("c{id}"),
            centroid: Vec::new(),
            energy: 0.5,
            merged_into,
            created_at: 0,
            updated_at: 0,
        };
        let inputs = LiquidInputs {
            rows: vec![row(10, None), row(11, Some(10))],
            assignments: vec![(1, 10, 1.0), (2, 10, 1.0)],
            energies: vec![EnergyRow {
                memory_id: 1,
                energy: 0.8,
                at_step: 3,
                accesses: 4,
            }],
            times: vec![(1, 1000, 4), (2, 2000, 1)],
            co_pairs: Vec::new(),
            step: 5,
        };
        let params = LiquidParams {
            decay: 0.5,
            ..Default::default()
        };
        let x = [1.0, 0.0, 0.0, 1.0];
        let (cache, missing) =
            LiquidCache::from_inputs(&inputs, vec![1, 2], &x, 2, &params, 7, (9, 2));
        assert!(
            (cache.energy[0] - 0.2).abs() < 1e-6,
            "0.8 decayed over two steps"
        );
        assert_eq!(cache.energy[1], crate::cluster::INITIAL_ENERGY);
        assert_eq!(cache.credited, vec![4, 1]);
        assert_eq!(missing.len(), 1);
        assert_eq!((missing[0].memory_id, missing[0].at_step), (2, 5));
        assert_eq!(cache.clusters[0].count, 2);
        assert_eq!(cache.clusters[0].sum, vec![1.0, 1.0]);
        assert!(!cache.clusters[1].live);
        assert_eq!(
            (cache.synced_at, cache.index_seq, cache.index_len),
            (7, 9, 2)
        );
    }

    /// Four memories in 2-d, two clusters: rows 0 and 1 in cluster 0 (near (1, 0)), rows
    /// 2 and 3 in cluster 1 (near (0, 1)); row 1's neighbours are all in cluster 1.
    fn tiny_cache() -> (LiquidCache, Vec<Vec<f32>>) {
        let vectors = vec![
            vec![1.0, 0.0],
            vec![0.6, 0.8],
            vec![0.0, 1.0],
            vec![0.1, 0.99],
        ];
        let cluster = vec![0u32, 0, 1, 1];
        let mut clusters: Vec<ClusterState> = (0..2)
            .map(|c| ClusterState {
                id: 10 + c as i64,
                label: format!("c{c}"),
                sum: vec![0.0; 2],
                count: 0,
                live: true,
                churn: 0,
                named: false,
            })
            .collect();
        for (v, &c) in vectors.iter().zip(&cluster) {
            let st = &mut clusters[c as usize];
            st.count += 1;
            st.sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
        }
        let nb = |row: u32, semantic: f32| Nb {
            row,
            semantic,
            temporal: 0.0,
            co: 0.0,
        };
        let ids = vec![100, 101, 102, 103];
        let cache = LiquidCache {
            row_of: ids
                .iter()
                .enumerate()
                .map(|(r, &id)| (id, r as u32))
                .collect(),
            alive: vec![true; 4],
            nbrs: vec![
                vec![nb(1, 0.6)],
                vec![nb(2, 0.8), nb(3, 0.85)],
                vec![nb(3, 0.99)],
                vec![nb(2, 0.99)],
            ],
            times: vec![0; 4],
            cluster,
            clusters,
            energy: vec![0.5; 4],
            credited: vec![0; 4],
            step: 0,
            synced_at: 0,
            index_seq: 0,
            index_len: 4,
            neighbours: 2,
            temporal_scale_ms: 3_600_000.0,
            label_corpus: None,
            reused_lists: 0,
            placed: Vec::new(),
            ids,
        };
        (cache, vectors)
    }

    #[test]
    fn accesses_credit_energy_once_then_everyone_decays() {
        let (mut cache, _) = tiny_cache();
        let params = LiquidParams {
            energy_per_access: 0.2,
            decay: 0.5,
            ..Default::default()
        };
        let dirty = cache.credit_accesses(&[(101, 2), (999, 5)], &params);
        assert_eq!(dirty, vec![1]);
        assert!((cache.energy[1] - 0.45).abs() < 1e-6, "{}", cache.energy[1]);
        assert!((cache.energy[0] - 0.25).abs() < 1e-6);
        // The same count again is no new access.
        assert!(cache.credit_accesses(&[(101, 2)], &params).is_empty());
        assert_eq!(cache.energy_rows(&dirty)[0].accesses, 2);
    }

    #[test]
    fn a_memory_flows_to_the_cluster_that_pulls_it_hardest_and_sums_follow() {
        let (mut cache, vectors) = tiny_cache();
        let params = LiquidParams {
            w_semantic: 1.0,
            w_temporal: 0.0,
            w_co_access: 0.0,
            flow_rate: 0.0,
            ..Default::default()
        };
        let e_cluster = cache.cluster_energies();
        assert_eq!(e_cluster, vec![0.5, 0.5]);
        let moves = cache.plan_flow(&e_cluster, &params);
        assert_eq!(moves, vec![(1, 1)], "only row 1 has its pull elsewhere");
        let flow = cache.apply_moves(&moves, |id| Some(vectors[(id - 100) as usize].as_slice()));
        assert_eq!(flow.moved.len(), 1);
        assert_eq!((flow.moved[0].from, flow.moved[0].to), (10, 11));
        assert_eq!(flow.touched, HashSet::from([0, 1]));
        assert_eq!((cache.clusters[0].count, cache.clusters[1].count), (1, 3));
        assert!((cache.clusters[1].sum[1] - (0.8 + 1.0 + 0.99)).abs() < 1e-6);
        assert_eq!(flow.members[0].0, 101);
        assert_eq!(flow.members[0].1, 11);
    }

    #[test]
    fn converged_clusters_merge_into_the_larger() {
        let (mut cache, _) = tiny_cache();
        cache.clusters[0].sum = vec![0.0, 2.0];
        cache.clusters[1].count = 3;
        let mut touched = HashSet::from([0u32]);
        let merges = cache.apply_merges(0.9, 2, &mut touched);
        assert_eq!(merges.len(), 1);
        assert_eq!((merges[0].0, merges[0].1), (10, 11));
        assert!(cache.cluster.iter().all(|&c| c == 1));
        assert!(!cache.clusters[0].live);
        assert_eq!(cache.clusters[1].count, 5);
        assert_eq!(touched, HashSet::from([1]));
        let report = cache.step_report(Vec::new(), Vec::new(), Vec::new());
        assert_eq!((report.clusters, report.memories), (1, 4));
        // Nothing converges any more.
        assert!(cache.apply_merges(0.9, 2, &mut touched).is_empty());
    }
}
