//! Concept clusters (seed 003): k-means over the memories' embeddings with
//! k = min(max(8, n/10), 64) unless set, confidence 1/(1 + distance), labels from the
//! members' most distinctive noun phrases and named entities (`labels`), groups of
//! clusters when there are more than 20 (`groups`); new memories join incrementally
//! (mini-batch update); the liquid loop (`liquid`) then lets memories flow between
//! clusters and clusters merge.

pub mod groups;
pub mod kmeans;
pub mod labels;
pub mod liquid;
pub mod neighbour_file;

use crate::embed::Embedder;
use crate::events::Job;
use crate::handles::Handles;
use crate::index::VectorIndex;
use crate::store::EnergyRow;
use crate::store::Store;
use crate::MemoryFilter;
use crate::{Error, Result};
use liquid::LiquidCache;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, RwLockReadGuard};
use std::time::Instant;

pub use crate::store::ClusterMerge;
pub use groups::ClusterGroup;
pub use liquid::{LiquidEvent, LiquidParams, LiquidStep, Moved};

/// Energy a memory starts with, before any access is credited.
pub const INITIAL_ENERGY: f32 = 0.5;
/// Energy gained per access (seed 003), capped at 1.
pub const ENERGY_PER_ACCESS: f32 = 0.05;

/// The seed's cluster count: min(max(8, n/10), 64), never more than n.
pub fn default_k(n: usize) -> usize {
    (n / 10).clamp(8, 64).min(n)
}

/// Assignment confidence for a Euclidean distance to the centroid.
pub fn confidence(distance: f32) -> f32 {
    1.0 / (1.0 + distance)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterInfo {
    pub id: i64,
    pub label: String,
    pub size: usize,
    /// Mean liquid energy of the members.
    pub energy: f32,
    pub merged_into: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The group of clusters it belongs to, when the clustering made more than
    /// [`groups::GROUP_ABOVE`] clusters.
    #[serde(default)]
    pub group: Option<ClusterGroup>,
}

/// What a full clustering did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterReport {
    pub k: usize,
    pub n: usize,
    /// Sum of squared distances to the centroids.
    pub inertia: f64,
    pub iterations: usize,
    pub millis: u64,
    pub clusters: Vec<ClusterInfo>,
    /// The compression backend that named the clusters (e.g. "chat:qwen2.5"); `None` when
    /// the labels are the extractive ones (noun phrases and entities, c-TF-IDF).
    #[serde(default)]
    pub named_by: Option<String>,
    /// Something the report should mention (a backend that could not name the clusters).
    #[serde(default)]
    pub note: Option<String>,
}

/// What clustering works on, lent by the façade for one call: the shared handles and the
/// liquid loop's cache of neighbour lists and state.
pub(crate) struct Clustering<'a> {
    pub handles: Handles<'a>,
    pub liquid: &'a Mutex<Option<LiquidCache>>,
}

impl<'a> Clustering<'a> {
    fn store(&self) -> MutexGuard<'a, Store> {
        self.handles.store()
    }

    fn index_read(&self) -> Result<RwLockReadGuard<'a, VectorIndex>> {
        self.handles.index_read()
    }

    fn embedder(&self) -> &'a dyn Embedder {
        self.handles.embedder()
    }

    fn visible_vectors(&self) -> Result<(Vec<i64>, Vec<f32>)> {
        self.handles.visible_vectors()
    }
}

/// Groups of clusters when there are more than [`groups::GROUP_ABOVE`]: each cluster's
/// group (numbered by size, largest first) and the groups' labels.
fn group_clusters(
    centroids: &[f32],
    d: usize,
    members: &[Vec<&[String]>],
    corpus: &labels::Corpus,
) -> Option<(Vec<usize>, Vec<String>)> {
    let k = members.len();
    if k <= groups::GROUP_ABOVE {
        return None;
    }
    let of = groups::agglomerate(centroids, d, groups::group_count(k));
    let n = of.iter().max().map_or(0, |m| m + 1);
    let mut texts: Vec<Vec<&[String]>> = vec![Vec::new(); n];
    for (c, g) in of.iter().enumerate() {
        texts[*g].extend(members[c].iter().copied());
    }
    // Number the groups by size, largest first.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&g| (std::cmp::Reverse(texts[g].len()), g));
    let mut rank = vec![0; n];
    for (r, g) in order.iter().enumerate() {
        rank[*g] = r;
    }
    let texts: Vec<Vec<&[String]>> = order.iter().map(|&g| texts[g].clone()).collect();
    let names = labels::labels(&texts, corpus, 2);
    Some((of.iter().map(|g| rank[*g]).collect(), names))
}

/// The groups as kept beside the clusters (an empty list without groups).
fn stored_groups(
    group_of: &Option<(Vec<usize>, Vec<String>)>,
    cluster_ids: &[i64],
) -> Vec<groups::StoredGroup> {
    let Some((of, names)) = group_of else {
        return Vec::new();
    };
    names
        .iter()
        .enumerate()
        .map(|(g, label)| groups::StoredGroup {
            id: g as i64 + 1,
            label: label.clone(),
            clusters: (0..of.len())
                .filter(|&c| of[c] == g)
                .map(|c| cluster_ids[c])
                .collect(),
        })
        .collect()
}

/// Below this many embedded memories, [`Somna::keep_clustered`] does not cluster: k-means
/// over a handful of points gives clusters of one or two, which label nothing.
pub const AUTO_CLUSTER_MIN: usize = 16;

/// What [`Somna::keep_clustered`] did after new memories arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ClusterUpkeep {
    /// The store had no clusters: every memory was clustered (k-means, the default k).
    Clustered { k: usize, n: usize, millis: u64 },
    /// Clusters existed: the new memories joined their nearest cluster.
    Joined { memories: usize },
    /// Too few memories to cluster yet.
    TooFew { memories: usize },
}

impl ClusterUpkeep {
    /// The memories clustered or joined (none when there were too few).
    pub fn memories_placed(&self) -> usize {
        match *self {
            Self::Clustered { n, .. } => n,
            Self::Joined { memories } => memories,
            Self::TooFew { .. } => 0,
        }
    }
}

impl Clustering<'_> {
    /// Keeps concept clusters current after memories arrive (the app calls it after every
    /// import, so every view has concepts to show): a store without live clusters is
    /// clustered in full once it holds [`AUTO_CLUSTER_MIN`] memories; otherwise new memories
    /// join their nearest cluster incrementally.
    pub(crate) fn keep_clustered(&self, job: &Job) -> Result<ClusterUpkeep> {
        let live = self
            .store()
            .read()
            .all_clusters()?
            .iter()
            .filter(|c| c.merged_into.is_none())
            .count();
        if live > 0 {
            return Ok(ClusterUpkeep::Joined {
                memories: self.join_arrivals()?,
            });
        }
        let memories = {
            let ids = self.store().read().filter_ids(&MemoryFilter::default())?;
            let index = self.index_read()?;
            ids.iter().filter(|&&id| index.vector(id).is_some()).count()
        };
        if memories < AUTO_CLUSTER_MIN {
            return Ok(ClusterUpkeep::TooFew { memories });
        }
        let r = self.cluster(None, job)?;
        Ok(ClusterUpkeep::Clustered {
            k: r.k,
            n: r.n,
            millis: r.millis,
        })
    }

    /// Clusters every visible memory afresh (k-means), replacing all clusters, memberships
    /// and merge records; labels the clusters; resets the liquid loop's cached state.
    pub(crate) fn cluster(&self, k: Option<usize>, job: &Job) -> Result<ClusterReport> {
        let started = Instant::now();
        let (ids, x) = self.visible_vectors()?;
        let d = self.embedder().dim();
        let n = ids.len();
        if n == 0 {
            return Err(Error::InvalidInput(
                "there are no embedded memories to cluster".into(),
            ));
        }
        let k = match k {
            Some(0) => return Err(Error::InvalidInput("k must be at least 1".into())),
            Some(k) => k.min(n),
            None => default_k(n),
        };
        let fit = kmeans::fit(&x, d, &kmeans::KMeansParams::new(k), job)?;
        drop(x);
        job.cancel.check()?;
        let (texts, energies, actors) = {
            let store = self.store();
            let read = store.read();
            (read.texts_and_accesses()?, read.energies()?, read.actors()?)
        };
        let step = self.liquid_step_count()?;
        // Every text's label terms, once (speakers' names say who talked, not about what:
        // they stay out of labels).
        let (corpus, terms) = labels::Corpus::build(
            texts.iter().map(|t| t.1.as_str()),
            labels::Extractor::new(&actors),
        );
        let text_of: HashMap<i64, (&[String], i64)> = texts
            .iter()
            .zip(&terms)
            .map(|((id, _, a), terms)| (*id, (terms.as_slice(), *a)))
            .collect();
        let energy_of: HashMap<i64, f32> = energies
            .iter()
            .map(|e| (e.memory_id, liquid::decayed(e, step, liquid::DEFAULT_DECAY)))
            .collect();
        let mut groups: Vec<Vec<&[String]>> = vec![Vec::new(); k];
        let mut energy_sum = vec![0f32; k];
        let mut new_energy = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let l = fit.labels[i];
            let (terms, accesses) = text_of.get(id).copied().unwrap_or((&[], 0));
            groups[l].push(terms);
            let e = match energy_of.get(id) {
                Some(e) => *e,
                None => {
                    let e = (INITIAL_ENERGY + ENERGY_PER_ACCESS * accesses as f32).min(1.0);
                    new_energy.push(EnergyRow {
                        memory_id: *id,
                        energy: e,
                        at_step: step,
                        accesses,
                    });
                    e
                }
            };
            energy_sum[l] += e;
        }
        let names = labels::labels(&groups, &corpus, 3);
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        let group_of = group_clusters(&fit.centroids, d, &groups, &corpus);
        let now = crate::store::now_ms();
        let mut store = self.store();
        let cluster_ids = store.transaction(|tx| {
            tx.clear_clusters()?;
            let mut cluster_ids = Vec::with_capacity(k);
            for j in 0..k {
                let energy = energy_sum[j] / sizes[j].max(1) as f32;
                cluster_ids.push(tx.insert_cluster(
                    &names[j],
                    &fit.centroids[j * d..(j + 1) * d],
                    energy,
                    now,
                )?);
            }
            let members: Vec<(i64, i64, f32)> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    (
                        *id,
                        cluster_ids[fit.labels[i]],
                        confidence(fit.distances[i]),
                    )
                })
                .collect();
            tx.set_members(&members)?;
            tx.put_energies(&new_energy)?;
            let stored = stored_groups(&group_of, &cluster_ids);
            tx.set_meta_of_change(
                groups::GROUPS_META,
                &serde_json::to_string(&stored).map_err(|e| Error::Internal(e.to_string()))?,
            )?;
            Ok(cluster_ids)
        })?;
        drop(store);
        self.reset_liquid();
        let clusters = (0..k)
            .map(|j| ClusterInfo {
                id: cluster_ids[j],
                label: names[j].clone(),
                size: sizes[j],
                energy: energy_sum[j] / sizes[j].max(1) as f32,
                merged_into: None,
                created_at: now,
                updated_at: now,
                group: group_of.as_ref().map(|(of, labels)| ClusterGroup {
                    id: of[j] as i64 + 1,
                    label: labels[of[j]].clone(),
                }),
            })
            .collect();
        Ok(ClusterReport {
            k,
            n,
            inertia: fit.inertia,
            iterations: fit.iterations,
            millis: started.elapsed().as_millis() as u64,
            clusters,
            named_by: None,
            note: None,
        })
    }

    /// Names the live clusters a person has not named with `backend` (an LLM's names from a
    /// few members and the extractive label of each); returns how many labels changed.
    /// A backend without names (the extractive one) changes nothing.
    pub(crate) fn name_clusters(&self, backend: &dyn crate::compress::Compressor) -> Result<usize> {
        let todo: Vec<(i64, String)> = self
            .store()
            .read()
            .cluster_labels()?
            .into_iter()
            .filter(|(_, _, named)| !named)
            .map(|(id, label, _)| (id, label))
            .collect();
        let mut samples = Vec::with_capacity(todo.len());
        for (id, _) in &todo {
            let read = self.store();
            let read = read.read();
            samples.push(read.texts_of(&read.cluster_members(*id, 6)?)?);
        }
        let hints: Vec<String> = todo.iter().map(|t| t.1.clone()).collect();
        let Some(names) = backend.name_clusters(&samples, &hints)? else {
            return Ok(0);
        };
        let changed: Vec<(i64, String)> = todo
            .iter()
            .zip(names)
            .filter(|((_, old), new)| old != new)
            .map(|((id, _), new)| (*id, new))
            .collect();
        self.store().transaction(|tx| {
            for (id, label) in &changed {
                tx.set_cluster_label(*id, label, false)?;
            }
            Ok(())
        })?;
        Ok(changed.len())
    }

    /// Live (not merged) clusters, largest first.
    pub(crate) fn clusters(&self) -> Result<Vec<ClusterInfo>> {
        let store = self.store();
        let read = store.read();
        let sizes: HashMap<i64, usize> = read.cluster_sizes()?.into_iter().collect();
        let stored: Vec<groups::StoredGroup> = read
            .get_meta(groups::GROUPS_META)?
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default();
        let group_of: HashMap<i64, ClusterGroup> = stored
            .into_iter()
            .flat_map(|g| {
                let group = ClusterGroup {
                    id: g.id,
                    label: g.label,
                };
                g.clusters.into_iter().map(move |c| (c, group.clone()))
            })
            .collect();
        let mut out: Vec<ClusterInfo> = read
            .all_clusters()?
            .into_iter()
            .filter(|c| c.merged_into.is_none())
            .map(|c| ClusterInfo {
                id: c.id,
                size: sizes.get(&c.id).copied().unwrap_or(0),
                label: c.label,
                energy: c.energy,
                merged_into: None,
                created_at: c.created_at,
                updated_at: c.updated_at,
                group: group_of.get(&c.id).cloned(),
            })
            .collect();
        out.sort_by(|a, b| b.size.cmp(&a.size).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    /// (memory_id, cluster_id, confidence) of every clustered memory.
    pub(crate) fn cluster_assignments(&self) -> Result<Vec<(i64, i64, f32)>> {
        self.store().read().cluster_assignments()
    }

    /// Every merge so far, oldest first.
    pub(crate) fn cluster_merges(&self) -> Result<Vec<ClusterMerge>> {
        self.store().read().cluster_merges()
    }

    /// Up to `limit` members of a cluster, most confident first.
    pub(crate) fn cluster_members(&self, cluster_id: i64, limit: usize) -> Result<Vec<i64>> {
        self.store().read().cluster_members(cluster_id, limit)
    }

    /// Assigns memories embedded since the last clustering to their nearest live cluster,
    /// moving its centroid toward them (mini-batch k-means). Returns how many joined.
    pub(crate) fn cluster_incremental(&self) -> Result<usize> {
        let joined = self.incremental_assign()?;
        if joined > 0 {
            self.reset_liquid();
        }
        Ok(joined)
    }

    /// The upkeep's join: places the memories that arrived since the last upkeep (the
    /// store's [`ChangeBus::take_arrivals`](crate::store::ChangeBus::take_arrivals)), so an
    /// import into a large store costs its own memories; the first upkeep of a process
    /// looks for unclustered memories in the whole store once. An arrival not in the index
    /// yet, or one taken when the join failed, is put back for the next upkeep.
    fn join_arrivals(&self) -> Result<usize> {
        let bus = self.store().changes().clone();
        let arrivals: Option<Vec<i64>> = bus.take_arrivals().map(|a| a.into_iter().collect());
        match self.assign_unclustered(arrivals.as_deref()) {
            Ok(done) => {
                bus.return_arrivals(done.waiting);
                if done.joined > 0 {
                    self.reset_liquid();
                }
                Ok(done.joined)
            }
            Err(e) => {
                bus.return_arrivals(arrivals.into_iter().flatten());
                Err(e)
            }
        }
    }

    /// [`Somna::cluster_incremental`] without resetting the liquid loop's cache.
    pub(crate) fn incremental_assign(&self) -> Result<usize> {
        Ok(self.assign_unclustered(None)?.joined)
    }

    /// Joins unclustered memories to their nearest live cluster: those among `candidates`,
    /// or (`None`) any in the store.
    fn assign_unclustered(&self, candidates: Option<&[i64]>) -> Result<Assigned> {
        let d = self.embedder().dim();
        let (rows, sizes, unassigned) = {
            let store = self.store();
            let read = store.read();
            let filter = MemoryFilter::default();
            let unassigned = read.unclustered_ids(&filter, candidates)?;
            (read.all_clusters()?, read.cluster_sizes()?, unassigned)
        };
        let live: Vec<_> = rows
            .into_iter()
            .filter(|c| c.merged_into.is_none())
            .collect();
        if live.is_empty() {
            return Ok(Assigned {
                joined: 0,
                waiting: unassigned,
            });
        }
        // Only the unassigned memories' vectors are read: the cost follows the import, not
        // the store (a memory not yet in the index waits for the next upkeep).
        let mut fresh_ids = Vec::with_capacity(unassigned.len());
        let mut fresh = Vec::with_capacity(unassigned.len() * d);
        let mut waiting = Vec::new();
        {
            let index = self.index_read()?;
            for id in unassigned {
                match index.vector(id) {
                    Some(v) => {
                        fresh_ids.push(id);
                        fresh.extend_from_slice(v);
                    }
                    None => waiting.push(id),
                }
            }
        }
        if fresh_ids.is_empty() {
            return Ok(Assigned { joined: 0, waiting });
        }
        let size_of: HashMap<i64, usize> = sizes.into_iter().collect();
        let mut centroids: Vec<f32> = live
            .iter()
            .flat_map(|c| c.centroid.iter().copied())
            .collect();
        let mut counts: Vec<usize> = live
            .iter()
            .map(|c| size_of.get(&c.id).copied().unwrap_or(0))
            .collect();
        let placed = kmeans::minibatch_update(&fresh, d, &mut centroids, &mut counts);
        let now = crate::store::now_ms();
        let members: Vec<(i64, i64, f32)> = fresh_ids
            .iter()
            .zip(&placed)
            .map(|(id, (l, dist))| (*id, live[*l].id, confidence(*dist)))
            .collect();
        let mut touched: Vec<usize> = placed.iter().map(|p| p.0).collect();
        touched.sort_unstable();
        touched.dedup();
        self.store().transaction(|tx| {
            tx.set_members(&members)?;
            for &j in &touched {
                let c = &live[j];
                tx.update_cluster(
                    c.id,
                    &c.label,
                    &centroids[j * d..(j + 1) * d],
                    c.energy,
                    now,
                )?;
            }
            Ok(())
        })?;
        Ok(Assigned {
            joined: fresh_ids.len(),
            waiting,
        })
    }
}

/// What an incremental join did.
struct Assigned {
    joined: usize,
    /// Unclustered memories not in the vector index yet.
    waiting: Vec<i64>,
}
