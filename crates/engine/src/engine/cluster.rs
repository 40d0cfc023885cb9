//! The façade's clustering methods: k-means over every memory, incremental joins, the
//! liquid loop's steps, and the cluster views. The work is in `crate::cluster`, over a
//! [`Clustering`] context lent for each call.

use super::Somna;
use crate::cluster::{
    ClusterInfo, ClusterMerge, ClusterReport, ClusterUpkeep, Clustering, LiquidParams, LiquidStep,
};
use crate::events::Job;
use crate::Result;

impl Somna {
    fn clustering(&self) -> Clustering<'_> {
        Clustering {
            handles: self.handles(),
            liquid: &self.liquid,
        }
    }

    /// Drops the liquid loop's cached state; the next step rebuilds it from the store.
    pub(super) fn forget_liquid_cache(&self) {
        self.clustering().reset_liquid();
    }

    /// Keeps concept clusters current after memories arrive (the app calls it after every
    /// import, so every view has concepts to show): a store without live clusters is
    /// clustered in full once it holds [`crate::cluster::AUTO_CLUSTER_MIN`] memories;
    /// otherwise new memories join their nearest cluster incrementally.
    pub fn keep_clustered(&self, job: &Job) -> Result<ClusterUpkeep> {
        let started = std::time::Instant::now();
        let upkeep = self.clustering().keep_clustered(job)?;
        let placed = crate::ledger::Cost::items(upkeep.memories_placed());
        self.record("cluster.upkeep", started, placed);
        Ok(upkeep)
    }

    /// Clusters every visible memory afresh (k-means), replacing all clusters, memberships
    /// and merge records; labels the clusters; resets the liquid loop's cached state.
    pub fn cluster(&self, k: Option<usize>, job: &Job) -> Result<ClusterReport> {
        self.clustering().cluster(k, job)
    }

    /// Names the clusters a person has not named with `backend` (an LLM endpoint's names;
    /// the extractive backend keeps the labels as they are). Returns how many changed.
    pub fn name_clusters_with(&self, backend: &dyn crate::compress::Compressor) -> Result<usize> {
        self.clustering().name_clusters(backend)
    }

    /// Live (not merged) clusters, largest first.
    pub fn clusters(&self) -> Result<Vec<ClusterInfo>> {
        self.clustering().clusters()
    }

    /// (memory_id, cluster_id, confidence) of every clustered memory.
    pub fn cluster_assignments(&self) -> Result<Vec<(i64, i64, f32)>> {
        self.clustering().cluster_assignments()
    }

    /// Every merge so far, oldest first.
    pub fn cluster_merges(&self) -> Result<Vec<ClusterMerge>> {
        self.clustering().cluster_merges()
    }

    /// Up to `limit` members of a cluster, most confident first.
    pub fn cluster_members(&self, cluster_id: i64, limit: usize) -> Result<Vec<i64>> {
        self.clustering().cluster_members(cluster_id, limit)
    }

    /// Assigns memories embedded since the last clustering to their nearest live cluster,
    /// moving its centroid toward them (mini-batch k-means). Returns how many joined.
    pub fn cluster_incremental(&self) -> Result<usize> {
        self.clustering().cluster_incremental()
    }

    /// One step of the liquid loop; builds the neighbour cache on the first call.
    pub fn liquid_step(&self, params: &LiquidParams) -> Result<LiquidStep> {
        self.clustering().liquid_step(params)
    }

    /// [`Somna::liquid_step`] with progress (of a first-step neighbour build) and cancellation.
    pub fn liquid_step_with(&self, params: &LiquidParams, job: &Job) -> Result<LiquidStep> {
        self.clustering().liquid_step_with(params, job)
    }
}
