//! The façade's what-if simulator: reads one snapshot of the store, predicts the lifecycle
//! with the saved and the proposed settings (`crate::whatif`), and ranks the golden queries
//! and the current search over the store as the next cycle would leave it under each.
//! Nothing is written: searches go through the read-only pipeline with no access
//! bookkeeping and no ledger entry.

use super::Somna;
use crate::embed::Embedder;
use crate::golden::options_of;
use crate::retrieve::overlay::{Overlay, Reads};
use crate::retrieve::{self, SearchCtx, SearchQuery, SearchResponse, Weights};
use crate::sleep::plan::Snapshot;
use crate::sleep::SleepConfig;
use crate::store::now_ms;
use crate::whatif::{
    compare, predict, ranks, GoldenSummary, GoldenWhatIf, LifecycleWhatIf, SearchWhatIf,
    SidePrediction, WhatIfReport, WhatIfRequest, WhatIfTimings, WordCounts,
};
use crate::Result;
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Both sides' lifecycle predictions, their report, and what they took.
struct Predicted {
    was: SidePrediction,
    would: SidePrediction,
    lifecycle: LifecycleWhatIf,
    snapshot_ms: f64,
    lifecycle_ms: f64,
}

/// One side of the comparison: its fusion weights, its store after the next cycle, and the
/// answers kept for that store across the simulation's searches.
struct Side<'a> {
    weights: Weights,
    overlay: &'a Overlay,
    own: &'a Reads,
}

impl Somna {
    /// What `req.patch` would do beside the saved settings (see [`crate::whatif`]). Writes
    /// nothing.
    pub fn what_if(&self, req: &WhatIfRequest) -> Result<WhatIfReport> {
        let t0 = Instant::now();
        let horizon = req.horizon_days()?;
        let limit = req.limit()?;
        let k = req.k()?;
        if let Some(q) = &req.query {
            if q.trim().is_empty() {
                return Err(crate::Error::InvalidInput(
                    "query must not be empty (leave it out to rank no search)".into(),
                ));
            }
        }
        let before = self.settings()?;
        let after = before.patched(&req.patch)?;
        let now = req.now_ms.unwrap_or_else(now_ms);

        let golden = self.store().read().golden_queries()?;
        // Every query's vector in one batch (a batch embeds several times faster per text
        // than one text at a time); queries embedded lately are not embedded again. The
        // batch runs on a thread of its own beside the snapshot and the lifecycle, which
        // need the store and not the model: on a first run it is otherwise a tenth of the
        // time, spent while a core idles.
        let embedder = self.query_embedder();
        let texts: Vec<&str> = golden
            .iter()
            .map(|g| g.query.as_str())
            .chain(req.query.as_deref().map(str::trim))
            .collect();
        let (embedded, predicted) = std::thread::scope(|s| {
            let embedding = s.spawn(|| {
                let t = Instant::now();
                embedder.embed(&texts).map(|_| ms(t))
            });
            let predicted = self.predict_both(now, &before.sleep, &after.sleep, horizon, limit);
            (embedding.join(), predicted)
        });
        let embed_ms = embedded.map_err(|_| {
            crate::Error::Embedding("the thread embedding the queries panicked".into())
        })??;
        let Predicted {
            was,
            would,
            lifecycle,
            snapshot_ms,
            lifecycle_ms,
        } = predicted?;

        // Equal overlays (unchanged lifecycle settings) see the same store: one `own`.
        let own = [Reads::default(), Reads::default()];
        let after_own = if was.overlay == would.overlay {
            &own[0]
        } else {
            &own[1]
        };
        let sides = [
            Side {
                weights: before.weights,
                overlay: &was.overlay,
                own: &own[0],
            },
            Side {
                weights: after.weights,
                overlay: &would.overlay,
                own: after_own,
            },
        ];
        let shared = Reads::default();
        let t = Instant::now();
        let mut queries = Vec::with_capacity(golden.len());
        for g in &golden {
            let opts = options_of(g);
            let mut sq = SearchQuery::new(&g.query);
            sq.k = g.k;
            sq.filter = opts.filter;
            sq.route = opts.route;
            if let Some(m) = opts.mode {
                sq.mode = m;
            }
            let [b, a] = self.both_ways(&sq, &sides, &shared)?;
            let ids =
                |r: &SearchResponse| -> Vec<i64> { r.hits.iter().map(|h| h.memory.id).collect() };
            let (before_ranks, before_recall) = ranks(&g.expected, &ids(&b), g.k);
            let (after_ranks, after_recall) = ranks(&g.expected, &ids(&a), g.k);
            queries.push(GoldenWhatIf {
                query_id: g.id,
                query: g.query.clone(),
                k: g.k,
                expected: g.expected.clone(),
                before_ranks,
                after_ranks,
                before_recall,
                after_recall,
            });
        }
        let golden = summarise(queries);
        let golden_ms = ms(t);

        let t = Instant::now();
        let search = match &req.query {
            Some(q) => {
                let mut sq = SearchQuery::new(q.trim());
                sq.k = k;
                let [before, after] = self.both_ways(&sq, &sides, &shared)?;
                Some(SearchWhatIf { before, after })
            }
            None => None,
        };
        let search_ms = ms(t);
        Ok(WhatIfReport {
            now,
            horizon_days: horizon,
            before,
            after,
            lifecycle,
            golden,
            search,
            timings: WhatIfTimings {
                snapshot_ms,
                lifecycle_ms,
                embed_ms,
                golden_ms,
                search_ms,
                total_ms: ms(t0),
            },
        })
    }

    /// Reads the store's snapshot for the lifecycle and predicts it under each side's
    /// settings from `now` to `horizon` days later.
    fn predict_both(
        &self,
        now: i64,
        before: &SleepConfig,
        after: &SleepConfig,
        horizon: f64,
        limit: usize,
    ) -> Result<Predicted> {
        let t = Instant::now();
        let snap = Snapshot::read_for_lifecycle(&self.store().read(), now)?;
        let snapshot_ms = ms(t);
        let t = Instant::now();
        let words = WordCounts::new(&snap, [before.forget_max_words, after.forget_max_words]);
        let was = predict(&snap, before, horizon, &words);
        // Unchanged lifecycle settings (a change of weights only) predict the same.
        let would = if after == before {
            was.clone()
        } else {
            predict(&snap, after, horizon, &words)
        };
        let lifecycle = compare(&snap, &was, &would, horizon, limit);
        Ok(Predicted {
            was,
            would,
            lifecycle,
            snapshot_ms,
            lifecycle_ms: ms(t),
        })
    }

    /// `q` with each side's weights over each side's store after the next cycle.
    fn both_ways(
        &self,
        q: &SearchQuery,
        sides: &[Side<'_>; 2],
        shared: &Reads,
    ) -> Result<[SearchResponse; 2]> {
        let store = self.store();
        let index = self.index_read();
        let actors = self.actors.read().unwrap_or_else(|p| p.into_inner());
        let ctx = SearchCtx {
            store: &store,
            index: &index,
            embedder: &self.query_embedder(),
            known_actors: &actors,
            has_causal_links: self
                .has_causal_links
                .load(std::sync::atomic::Ordering::Relaxed),
        };
        let run = |side: &Side<'_>| {
            let mut sq = q.clone();
            sq.weights = side.weights;
            retrieve::search_with_overlay(&ctx, &sq, side.overlay, (shared, side.own))
        };
        Ok([run(&sides[0])?, run(&sides[1])?])
    }
}

fn summarise(queries: Vec<GoldenWhatIf>) -> GoldenSummary {
    let n = queries.len().max(1) as f64;
    GoldenSummary {
        mean_recall_before: queries.iter().map(|q| q.before_recall).sum::<f64>() / n,
        mean_recall_after: queries.iter().map(|q| q.after_recall).sum::<f64>() / n,
        improved: queries
            .iter()
            .filter(|q| q.after_recall > q.before_recall + 1e-9)
            .count(),
        regressed: queries
            .iter()
            .filter(|q| q.after_recall + 1e-9 < q.before_recall)
            .count(),
        queries,
    }
}
