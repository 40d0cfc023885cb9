//! A compressor wrapper that counts calls, for the cost ledger.

use crate::Result;

/// Counts a compressor's calls, so a sleep cycle can record how many LLM calls its
/// compression and schema phases made (a chat backend makes one per call; retries after a
/// context overflow are not seen here).
pub(crate) struct Counting<'a> {
    inner: &'a dyn crate::compress::Compressor,
    pub(crate) compress: std::sync::atomic::AtomicU64,
    pub(crate) schema: std::sync::atomic::AtomicU64,
}

impl<'a> Counting<'a> {
    pub(crate) fn new(inner: &'a dyn crate::compress::Compressor) -> Self {
        Self {
            inner,
            compress: Default::default(),
            schema: Default::default(),
        }
    }

    /// Whether the wrapped backend calls an LLM (the chat backend's names start "chat:").
    pub(crate) fn is_llm(&self) -> bool {
        self.inner.name().starts_with("chat:")
    }
}

impl crate::compress::Compressor for Counting<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn compress(
        &self,
        batch: &crate::compress::Batch,
        corpus: &crate::compress::Corpus,
    ) -> Result<crate::compress::Compression> {
        self.compress
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.compress(batch, corpus)
    }

    fn schema(
        &self,
        core_concepts: &[String],
        members: &[&crate::compress::SummaryView],
        corpus: &crate::compress::Corpus,
    ) -> Result<crate::compress::SchemaDraft> {
        self.schema
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.schema(core_concepts, members, corpus)
    }
}
