//! The façade's search methods: the staged retrieval in `crate::retrieve` over a
//! [`SearchCtx`] of the store, index, embedder and cached speaker names, then the access
//! bookkeeping.

use super::Somna;
use crate::ledger::Cost;
use crate::retrieve::{self, SearchCtx, SearchQuery, SearchResponse};
use crate::Result;

impl Somna {
    /// Searches, then counts the access of every returned memory and the co-access of
    /// every pair among the best [`CO_ACCESS_TOP_HITS`](crate::store::CO_ACCESS_TOP_HITS)
    /// hits (at most 45 pairs, whatever k is).
    /// A search of the store as it was (`as_of`) counts no access: it reads the past.
    pub fn search(&self, q: &SearchQuery) -> Result<SearchResponse> {
        let response = self.search_readonly(q)?;
        if q.as_of.is_some() {
            return Ok(response);
        }
        let ids: Vec<i64> = response.hits.iter().map(|h| h.memory.id).collect();
        let mut store = self.store();
        let now = crate::store::now_ms();
        store.transaction(|tx| {
            tx.touch(&ids, now)?;
            tx.record_co_access(&ids, now)
        })?;
        Ok(response)
    }

    /// A search that records nothing (for evaluations that must not perturb the store).
    pub fn search_readonly(&self, q: &SearchQuery) -> Result<SearchResponse> {
        let started = std::time::Instant::now();
        let response = self.search_unrecorded(q)?;
        self.record("search", started, Cost::items(response.hits.len()));
        Ok(response)
    }

    fn search_unrecorded(&self, q: &SearchQuery) -> Result<SearchResponse> {
        if q.as_of.is_some() {
            q.filter.check_as_of()?;
        }
        let store = self.store();
        // As of a time, every memory's vector is read (`retrieve::as_of`); a search of now
        // reads only its candidates'.
        let index = if q.as_of.is_some() {
            self.vectors_read()?
        } else {
            self.index_read()
        };
        let actors = self.actors.read().unwrap_or_else(|p| p.into_inner());
        let has_causal_links = self
            .has_causal_links
            .load(std::sync::atomic::Ordering::Relaxed);
        let embedder = self.query_embedder();
        let ctx = SearchCtx {
            store: &store,
            index: &index,
            embedder: &embedder,
            known_actors: &actors,
            has_causal_links,
        };
        retrieve::search(&ctx, q)
    }
}
