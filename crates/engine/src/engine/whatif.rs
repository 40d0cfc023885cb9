//! The façade's what-if simulator: reads one snapshot of the store, predicts the lifecycle
//! with the saved and the proposed settings (`crate::whatif`), and ranks the golden queries
//! and the current search over the store as the next cycle would leave it under each.
//! Nothing is written: searches go through the read-only pipeline with no access
//! bookkeeping and no ledger entry.

use super::Somna;
use crate::embed::Embedder;
use crate::golden::search_query_of;
use crate::memory::Kind;
use crate::retrieve::overlay::{Overlay, Reads};
use crate::retrieve::{self, SearchCtx, SearchQuery, SearchResponse, Weights};
use crate::sleep::plan::Snapshot;
use crate::sleep::SleepConfig;
use crate::store::now_ms;
use crate::store::{GoldenQuery, Store};
use crate::whatif::{
    compare, predict, ranks, GoldenSummary, GoldenWhatIf, LifecycleWhatIf, SearchWhatIf,
    SidePrediction, WhatIfReport, WhatIfRequest, WhatIfTimings, WordCounts,
};
use crate::Result;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
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

/// A query ranked both ways (saved, proposed), and how long its two searches took (ms).
type Ranked = ([SearchResponse; 2], f64);

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
        self.what_if_on(req, true)
    }

    /// [`Somna::what_if`] on the calling thread and the store's one connection alone, for
    /// tests that hold the two-thread simulation to it.
    #[cfg(any(test, feature = "testing"))]
    pub fn what_if_on_one_thread(&self, req: &WhatIfRequest) -> Result<WhatIfReport> {
        self.what_if_on(req, false)
    }

    /// With `two_threads`, the store's reads and the searches are shared out with a second
    /// thread on a second connection (when the store has one).
    fn what_if_on(&self, req: &WhatIfRequest, two_threads: bool) -> Result<WhatIfReport> {
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
        // The queries' saved vectors, so the batch below embeds only queries without one.
        self.recall_golden_vectors()?;
        // A second connection to the store, for a second thread's reads.
        let mut spare = if two_threads {
            self.take_spare()?
        } else {
            None
        };
        // Every query's vector in one batch (a batch embeds several times faster per text
        // than one text at a time); queries embedded lately are not embedded again. The
        // batch runs on a thread of its own beside the snapshot and the lifecycle, which
        // need the store and not the model: on a first run it is otherwise a tenth of the
        // time, spent while a core idles.
        let embedder = self.query_embedder();
        // (the texts their searches embed: without the names of the people they are about)
        let owned: Vec<String> = golden
            .iter()
            .map(|g| g.query.as_str())
            .chain(req.query.as_deref().map(str::trim))
            .map(|q| self.golden_text(q))
            .collect();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (embedded, predicted) = std::thread::scope(|s| {
            let embedding = s.spawn(|| {
                let t = Instant::now();
                embedder.embed(&texts).map(|_| ms(t))
            });
            let predicted = self.predict_both(
                spare.as_mut(),
                now,
                &before.sleep,
                &after.sleep,
                horizon,
                limit,
            );
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
        // The golden queries and the current search, each ranked both ways, shared out
        // between two threads: this one on the store's connection and one on a second.
        let items: Vec<(Option<&GoldenQuery>, SearchQuery)> = req
            .query
            .as_deref()
            .map(|q| {
                let mut sq = SearchQuery::new(q.trim());
                sq.k = k;
                (None, sq)
            })
            .into_iter()
            .chain(golden.iter().map(|g| (Some(g), search_query_of(g))))
            .collect();
        let shared = Reads::default();
        let t = Instant::now();
        let ranked = self.rank_all(&items, &sides, &shared, &mut spare)?;
        if let Some(store) = spare {
            self.put_spare(store);
        }
        let golden_ms = ms(t);
        let (golden, search, search_ms) = outcomes(&items, ranked);
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
    /// settings from `now` to `horizon` days later. With a second connection (`spare`) the
    /// snapshot is read in two halves and the two sides are predicted at once, each on a
    /// thread of its own: both are most of a simulation's time, and a core would idle.
    fn predict_both(
        &self,
        spare: Option<&mut Store>,
        now: i64,
        before: &SleepConfig,
        after: &SleepConfig,
        horizon: f64,
        limit: usize,
    ) -> Result<Predicted> {
        let t = Instant::now();
        let two_threads = spare.is_some();
        let snap = match spare {
            Some(spare) => self.read_snapshot_in_halves(spare, now)?,
            None => Snapshot::read_for_lifecycle(&self.store().read(), now)?,
        };
        let snapshot_ms = ms(t);
        let t = Instant::now();
        let words = WordCounts::new(&snap, [before.forget_max_words, after.forget_max_words]);
        // Unchanged lifecycle settings (a change of weights only) predict the same.
        let (was, would) = if after == before {
            let was = predict(&snap, before, horizon, &words);
            (was.clone(), was)
        } else {
            self.at_once(
                two_threads,
                || predict(&snap, before, horizon, &words),
                || predict(&snap, after, horizon, &words),
            )?
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

    /// [`Snapshot::read_for_lifecycle`] read as two ranges of ids, the lower on the store's
    /// connection and the upper on `spare` at once (each read is mostly the decoding of
    /// its rows, one core's work). The two reads are two read transactions: a write
    /// committed between them is seen by one and not the other, which a simulation of the
    /// months ahead can bear (it writes nothing).
    fn read_snapshot_in_halves(&self, spare: &mut Store, now: i64) -> Result<Snapshot> {
        let store = self.store();
        let (low, high, count) = store.read().memory_id_bounds()?;
        let middle = low + (high - low) / 2 + 1;
        // Room for every row from the start (the list is most of the snapshot's memory):
        // at most `count`, about half of it in each half of the ids.
        let mut upper = Vec::with_capacity(count / 2 + 1);
        let mut memories = Vec::with_capacity(count);
        let upper_rows = &mut upper;
        let (consolidated, rest) = self.at_once(
            true,
            || {
                let read = store.read();
                read.memories_for_lifecycle(i64::MIN..middle, &mut memories)?;
                read.derived_targets(Kind::Summary)
            },
            move || -> Result<_> {
                let read = spare.read();
                read.memories_for_lifecycle(middle..i64::MAX, upper_rows)?;
                Ok((read.derived_targets(Kind::Schema)?, read.last_decay_at()?))
            },
        )?;
        let (consolidated, (in_schema, last_decay_at)) = (consolidated?, rest?);
        memories.append(&mut upper);
        Ok(Snapshot {
            now,
            memories,
            consolidated,
            in_schema,
            last_decay_at,
        })
    }

    /// `first` on this thread and `second` at the same time on the kept helper thread
    /// ([`Somna::beside`]); with `beside` false, both here, one after the other.
    fn at_once<A, B: Send>(
        &self,
        beside: bool,
        first: impl FnOnce() -> A,
        second: impl FnOnce() -> B + Send,
    ) -> Result<(A, B)> {
        if !beside {
            let b = second();
            return Ok((first(), b));
        }
        let mut out = None;
        let slot = &mut out;
        let a = self.beside()?.in_place_scope(|s| {
            s.spawn(move |_| *slot = Some(second()));
            first()
        });
        let b = out.ok_or_else(|| {
            crate::Error::Internal("the work beside this thread's was not done".into())
        })?;
        Ok((a, b))
    }

    /// Each query of `items` with each side's weights over each side's store after the
    /// next cycle, and how long its two searches took (ms). The queries are shared out
    /// between this thread, on the store's connection, and a second thread on a second
    /// connection ([`Somna::take_spare`]), each taking the next query left: a search
    /// spends most of its time in the store (FTS5 scoring, memory rows), which one
    /// connection serves to one thread at a time. An in-memory store ranks on one thread.
    fn rank_all(
        &self,
        items: &[(Option<&GoldenQuery>, SearchQuery)],
        sides: &[Side<'_>; 2],
        shared: &Reads,
        spare: &mut Option<Store>,
    ) -> Result<Vec<Ranked>> {
        let index = self.index_read();
        let actors = self.actors.read().unwrap_or_else(|p| p.into_inner());
        let embedder = self.query_embedder();
        let has_causal_links = self
            .has_causal_links
            .load(std::sync::atomic::Ordering::Relaxed);
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<Ranked>>>> =
            items.iter().map(|_| Mutex::new(None)).collect();
        // Takes the next query on `store` until none is left or one fails.
        let rank = |store: &Store| {
            let ctx = SearchCtx {
                store,
                index: &index,
                embedder: &embedder,
                known_actors: &actors,
                has_causal_links,
            };
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, q)) = items.get(i) else { break };
                let t = Instant::now();
                let out = both_ways(&ctx, q, sides, shared).map(|r| (r, ms(t)));
                let failed = out.is_err();
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(out);
                if failed {
                    next.store(items.len(), Ordering::Relaxed);
                }
            }
        };
        match spare.as_mut().filter(|_| items.len() > 1) {
            Some(spare) => {
                let rank = &rank;
                self.at_once(true, || rank(&self.store()), move || rank(spare))?;
            }
            None => rank(&self.store()),
        }
        slots
            .into_iter()
            .map(|slot| {
                slot.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .unwrap_or_else(|| {
                        Err(crate::Error::Internal(
                            "a what-if query was left unranked".into(),
                        ))
                    })
            })
            .collect()
    }
}

/// `q` with each side's weights over each side's store after the next cycle.
fn both_ways(
    ctx: &SearchCtx<'_>,
    q: &SearchQuery,
    sides: &[Side<'_>; 2],
    shared: &Reads,
) -> Result<[SearchResponse; 2]> {
    let run = |side: &Side<'_>| {
        let mut sq = q.clone();
        sq.weights = side.weights;
        retrieve::search_with_overlay(ctx, &sq, side.overlay, (shared, side.own))
    };
    Ok([run(&sides[0])?, run(&sides[1])?])
}

/// The golden queries' ranks and R@k each way, and the current search both ways with how
/// long its searches took (ms), from `items` ranked by [`Somna::rank_all`].
fn outcomes(
    items: &[(Option<&GoldenQuery>, SearchQuery)],
    ranked: Vec<Ranked>,
) -> (GoldenSummary, Option<SearchWhatIf>, f64) {
    let mut search = None;
    let mut search_ms = 0.0;
    let mut queries = Vec::with_capacity(items.len());
    for ((g, _), ([b, a], took)) in items.iter().zip(ranked) {
        let Some(g) = g else {
            search = Some(SearchWhatIf {
                before: b,
                after: a,
            });
            search_ms = took;
            continue;
        };
        let ids = |r: &SearchResponse| -> Vec<i64> { r.hits.iter().map(|h| h.memory.id).collect() };
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
    (summarise(queries), search, search_ms)
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
