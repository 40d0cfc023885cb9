//! Clusters of clusters: when a full clustering makes more than [`GROUP_ABOVE`] clusters,
//! they are grouped by average-linkage agglomeration over the cosine similarity of their
//! centroids into about √k groups (3 to 12), and each group is labelled like a cluster
//! (c-TF-IDF over the members of its clusters, labels unique across groups). The groups
//! are kept with the clusters (a `meta` entry written in the clustering's transaction);
//! a cluster merged by a liquid step leaves its group, and the cluster it merged into
//! keeps its own.

use serde::{Deserialize, Serialize};

/// Above this many clusters, clusters are grouped.
pub const GROUP_ABOVE: usize = 20;

/// The `meta` key the groups are kept under (a JSON list of [`StoredGroup`]).
pub(crate) const GROUPS_META: &str = crate::store::CLUSTER_GROUPS_META;

/// The group a cluster belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterGroup {
    /// 1, 2, … in order of the groups' sizes (memories), largest first.
    pub id: i64,
    pub label: String,
}

/// A group as kept: its id, label and clusters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredGroup {
    pub id: i64,
    pub label: String,
    pub clusters: Vec<i64>,
}

/// How many groups `k` clusters form: about √k, from 3 to 12.
pub fn group_count(k: usize) -> usize {
    ((k as f64).sqrt().round() as usize).clamp(3, 12).min(k)
}

/// The group of each of the `k = centroids.len() / d` centroids: average-linkage
/// agglomerative clustering on cosine similarity, merging the most similar pair of groups
/// until `target` remain. Groups are numbered 0.. in order of their first cluster.
pub fn agglomerate(centroids: &[f32], d: usize, target: usize) -> Vec<usize> {
    let k = centroids.len().checked_div(d).unwrap_or(0);
    let unit: Vec<Vec<f32>> = (0..k)
        .map(|i| {
            let v = &centroids[i * d..(i + 1) * d];
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter().map(|x| x / n).collect()
        })
        .collect();
    // sim[a][b]: mean pairwise similarity of groups a and b (kept for live groups).
    let mut sim: Vec<Vec<f64>> = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| {
                    unit[a]
                        .iter()
                        .zip(&unit[b])
                        .map(|(x, y)| (x * y) as f64)
                        .sum()
                })
                .collect()
        })
        .collect();
    let mut size = vec![1usize; k];
    let mut live: Vec<bool> = vec![true; k];
    let mut of: Vec<usize> = (0..k).collect();
    let mut groups = k;
    while groups > target.max(1) {
        let mut best: Option<(f64, usize, usize)> = None;
        for a in 0..k {
            if !live[a] {
                continue;
            }
            for b in a + 1..k {
                if live[b] && best.is_none_or(|(s, _, _)| sim[a][b] > s) {
                    best = Some((sim[a][b], a, b));
                }
            }
        }
        let Some((_, a, b)) = best else { break };
        let (na, nb) = (size[a] as f64, size[b] as f64);
        for c in 0..k {
            if live[c] && c != a && c != b {
                let s = (na * sim[a][c] + nb * sim[b][c]) / (na + nb);
                sim[a][c] = s;
                sim[c][a] = s;
            }
        }
        size[a] += size[b];
        live[b] = false;
        for g in of.iter_mut() {
            if *g == b {
                *g = a;
            }
        }
        groups -= 1;
    }
    // Renumber 0.. in order of first appearance.
    let mut map = std::collections::HashMap::new();
    of.iter()
        .map(|g| {
            let n = map.len();
            *map.entry(*g).or_insert(n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_centroids_share_a_group() {
        // Three directions, two clusters near each.
        let c = [
            1.0, 0.0, 0.0, 0.9, 0.1, 0.0, //
            0.0, 1.0, 0.0, 0.1, 0.9, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.1, 0.9,
        ];
        let g = agglomerate(&c, 3, 3);
        assert_eq!(g, vec![0, 0, 1, 1, 2, 2]);
        // Asking for one group puts everything together; for six, nothing.
        assert!(agglomerate(&c, 3, 1).iter().all(|&x| x == 0));
        assert_eq!(agglomerate(&c, 3, 6), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn group_count_grows_with_the_root_of_k() {
        assert_eq!(group_count(21), 5);
        assert_eq!(group_count(64), 8);
        assert_eq!(group_count(400), 12);
        assert_eq!(group_count(2), 2);
    }
}
