//! The causal route's graph expansion (seed 001): breadth-first along `causal` and
//! `derived_from` links, in both directions, from the strongest vector hits. A "why"
//! question matches the turn that states the effect; its causal link leads to the turn
//! that holds the cause, and a summary's `derived_from` links lead to its source turns.

use crate::memory::LinkKind;
use crate::store::Tx;
use crate::Result;
use std::collections::{HashMap, HashSet};

/// Vector hits the expansion starts from.
pub const CAUSAL_SEEDS: usize = 3;
/// Links followed from a seed, at most.
pub const CAUSAL_DEPTH: usize = 2;

/// (id, depth) of every memory reached from `seeds` within `max_depth` hops, nearest
/// first (smallest depth over the seeds). Each seed is walked on its own, so a seed reached
/// from another seed is reported too: with a "why" question the cause is often a weaker
/// vector hit than the effect, and it still earns its graph signal.
pub fn expand(read: &Tx<'_>, seeds: &[i64], max_depth: usize) -> Result<Vec<(i64, usize)>> {
    let mut best: HashMap<i64, usize> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    for &seed in seeds {
        let mut seen: HashSet<i64> = HashSet::from([seed]);
        let mut frontier = vec![seed];
        for depth in 1..=max_depth {
            let mut next = Vec::new();
            for id in frontier {
                for l in read.links_of(id)? {
                    if !matches!(l.kind, LinkKind::Causal | LinkKind::DerivedFrom) {
                        continue;
                    }
                    let other = if l.src == id { l.dst } else { l.src };
                    if seen.insert(other) {
                        next.push(other);
                        let d = best.entry(other).or_insert_with(|| {
                            order.push(other);
                            depth
                        });
                        *d = (*d).min(depth);
                    }
                }
            }
            frontier = next;
        }
    }
    let mut out: Vec<(i64, usize)> = order.into_iter().map(|id| (id, best[&id])).collect();
    out.sort_by_key(|x| x.1);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Kind, NewMemory};
    use crate::store::Store;

    #[test]
    fn expansion_follows_causal_and_derived_links_only_to_the_depth_limit() {
        let mut store = Store::open_in_memory().unwrap();
        let ids: Vec<i64> = store
            .transaction(|tx| {
                let ids = (0..5)
                    .map(|i| {
                        tx.insert_memory(&NewMemory::new(Kind::Episode, format!("m{i}")), 1.0, 0)
                    })
                    .collect::<Result<Vec<_>>>()?;
                tx.upsert_link(ids[0], ids[1], LinkKind::Causal, 0.9, 0)?;
                tx.upsert_link(ids[2], ids[1], LinkKind::DerivedFrom, 1.0, 0)?;
                tx.upsert_link(ids[2], ids[3], LinkKind::Causal, 0.7, 0)?;
                tx.upsert_link(ids[0], ids[4], LinkKind::Similar, 0.9, 0)?;
                Ok(ids)
            })
            .unwrap();
        let read = store.read();
        let got = expand(&read, &[ids[0]], 2).unwrap();
        assert_eq!(got, vec![(ids[1], 1), (ids[2], 2)]);
        let deeper = expand(&read, &[ids[0]], 3).unwrap();
        assert_eq!(deeper.last(), Some(&(ids[3], 3)));
        assert!(expand(&read, &[ids[4]], 3).unwrap().is_empty());
        // Two seeds linked to each other each get the other at depth 1.
        let both = expand(&read, &[ids[0], ids[1]], 1).unwrap();
        assert!(
            both.contains(&(ids[1], 1)) && both.contains(&(ids[0], 1)),
            "{both:?}"
        );
    }
}
