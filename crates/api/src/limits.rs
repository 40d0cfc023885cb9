//! The one set of limits every front end applies. A value out of range is refused with an
//! `invalid_input` error that names the field and the range, e.g. `k must be 1 to 200 (got 0)`.
//!
//! Why these numbers:
//! * `k` (search) 1–200. Every hit carries its memory and eight signals, and MMR re-ranks
//!   the k best against each other (quadratic in k). 200 memories of a typical 20–40 tokens
//!   already fill the default context budget (6,656 tokens) several times over, so a larger
//!   k returns nothing an agent can use. The engine itself accepts up to 1,000 for the
//!   evaluation harness, which calls it directly.
//! * `k` (similar) 1–100: the engine's nearest-neighbour lookup stops at 100.
//! * `limit` (list) 1–1,000 rows per page; `offset` pages further.
//! * `messages` (add) 1–1,000 per call; larger batches go through `import`.
//! * `depth` 1–4 and `limit` 1–2,000 (link neighbourhood): beyond four hops the graph is the
//!   whole store, and the bubble graph lays out at most a few thousand nodes.
//! * `limit` (sleep history) 1–1,000 cycles.
//! * `limit` (golden history) 1–1,000 runs, default 50: each run carries every query's
//!   outcome.
//! * `hours` (ledger) 1–2,160 (90 days); the ledger is grouped by hour, so at most 2,160
//!   periods per operation.
//! * `window` (search's context window, tokens) 2,048–200,000, and `conversation_tokens`
//!   0–200,000. The system (512) and output (1,024) reserves come out of the window, so a
//!   smaller one packs nothing. The packer's exact knapsack keeps one bit of choice per hit
//!   and token of budget (at most 200 × 200,000 ≈ 40 MB at the bounds), and 200 hits of even
//!   1,000 tokens each fit in 200,000 tokens, so a larger window packs nothing more.

use somna_engine::{Error, Result};

/// An inclusive range of a request field, with the default used when it is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub field: &'static str,
    pub min: usize,
    pub max: usize,
    pub default: usize,
}

impl Limit {
    /// `value` (or the default when `None`) if it is within the range, else an error naming
    /// the field and the range.
    pub fn check(&self, value: Option<usize>) -> Result<usize> {
        let v = value.unwrap_or(self.default);
        if (self.min..=self.max).contains(&v) {
            Ok(v)
        } else {
            Err(Error::InvalidInput(format!(
                "{} must be {} to {} (got {v})",
                self.field, self.min, self.max
            )))
        }
    }
}

pub const SEARCH_K: Limit = Limit {
    field: "k",
    min: 1,
    max: 200,
    default: 10,
};

pub const SIMILAR_K: Limit = Limit {
    field: "k",
    min: 1,
    max: 100,
    default: 8,
};

pub const LIST_LIMIT: Limit = Limit {
    field: "limit",
    min: 1,
    max: 1000,
    default: 100,
};

pub const ADD_MESSAGES: Limit = Limit {
    field: "messages",
    min: 1,
    max: 1000,
    default: 1,
};

pub const GRAPH_DEPTH: Limit = Limit {
    field: "depth",
    min: 1,
    max: 4,
    default: 2,
};

pub const GRAPH_LIMIT: Limit = Limit {
    field: "limit",
    min: 1,
    max: 2000,
    default: 400,
};

pub const SLEEP_HISTORY: Limit = Limit {
    field: "limit",
    min: 1,
    max: 1000,
    default: 20,
};

pub const GOLDEN_HISTORY: Limit = Limit {
    field: "limit",
    min: 1,
    max: 1000,
    default: 50,
};

/// The ledger's window, hours back from now (up to 90 days).
pub const LEDGER_HOURS: Limit = Limit {
    field: "hours",
    min: 1,
    max: 90 * 24,
    default: 24,
};

/// Days without confirmation after which a contradicted fact is stale (up to ten years).
pub const STALE_DAYS: Limit = Limit {
    field: "stale_days",
    min: 1,
    max: 3650,
    default: somna_engine::store::STALE_DAYS as usize,
};

pub const SEARCH_WINDOW: Limit = Limit {
    field: "window",
    min: 2048,
    max: 200_000,
    default: 8192,
};

pub const CONVERSATION_TOKENS: Limit = Limit {
    field: "conversation_tokens",
    min: 0,
    max: 200_000,
    default: 0,
};

/// The LLM endpoint's request timeout, seconds.
pub const LLM_TIMEOUT_SECS: Limit = Limit {
    field: "timeout_secs",
    min: 1,
    max: 600,
    default: 60,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_in_range_or_the_default_passes() {
        assert_eq!(SEARCH_K.check(None).unwrap(), 10);
        assert_eq!(SEARCH_K.check(Some(200)).unwrap(), 200);
        assert_eq!(SEARCH_K.check(Some(1)).unwrap(), 1);
    }

    #[test]
    fn a_value_out_of_range_names_the_field_and_the_range() {
        let e = SEARCH_K.check(Some(0)).unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("k must be 1 to 200 (got 0)"), "{e}");
        let e = LIST_LIMIT.check(Some(1001)).unwrap_err();
        assert!(
            e.to_string().contains("limit must be 1 to 1000 (got 1001)"),
            "{e}"
        );
    }
}
