//! Sleep cycles (seed 000): prioritized replay, compression into summaries, schema
//! formation, forgetting and decay. [`plan`] computes a cycle from a snapshot of the store
//! without writing; `api` commits it phase by phase (one transaction each), records it in
//! `sleep_cycles`, and undoes it.

pub mod auto;
pub mod chat;
pub(crate) mod commit;
pub(crate) mod counting;
pub mod endpoint;
pub(crate) mod plan;

pub use crate::compress::{self, text};
pub use crate::compress::{Batch, Compression, Compressor, EpisodeView, Extractive, SchemaDraft};

use crate::memory::{Details, Kind};
use serde::{Deserialize, Serialize};

/// Phase names, in order; also the progress stages.
pub const PHASES: [&str; 4] = ["replay", "compress", "schemas", "forget"];

/// Replay priority weights (seed 000): recency, importance, novelty, min(access_count, 5)/5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct ReplayWeights {
    pub recency: f64,
    pub importance: f64,
    pub novelty: f64,
    pub access: f64,
}

impl Default for ReplayWeights {
    fn default() -> Self {
        Self {
            recency: 0.3,
            importance: 0.3,
            novelty: 0.2,
            access: 0.2,
        }
    }
}

/// Every knob of a cycle. Unknown fields are refused; missing ones take their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct SleepConfig {
    pub weights: ReplayWeights,
    /// Recency = e^(−rate × days since the episode occurred).
    pub recency_decay_per_day: f64,
    /// Unconsolidated episodes replayed (and consolidated) per cycle, at most.
    pub max_replay: usize,
    /// Episodes per summary, at most; a longer session is cut into even windows.
    pub batch_size: usize,
    /// A session with fewer unconsolidated episodes waits for a later cycle.
    pub min_batch: usize,
    /// A gap this long (minutes) between turns without a session starts a new batch.
    pub gap_minutes: i64,
    /// Summaries that share a concept form a schema when there are at least this many.
    pub schema_min_support: usize,
    /// New schemas per cycle, at most.
    pub max_schemas: usize,
    /// Schemas group summaries of one conversation (false: across the whole store).
    pub schemas_per_conversation: bool,
    /// Importance halves every this many days without… anything (decay floor below).
    pub importance_half_life_days: f64,
    pub importance_floor: f64,
    /// How importance decays with time in the store (seed 003): exponential (halves every
    /// half-life) or power law (halves at the half-life, then ever more slowly).
    pub decay: DecayModel,
    /// The power law's exponent α (seed 003: 1.5); unused by the exponential model.
    pub decay_alpha: f64,
    /// Lifecycle by age (days): active < warm < cold < archived.
    pub warm_after_days: f64,
    pub cold_after_days: f64,
    pub archive_after_days: f64,
    /// A consolidated episode is forgotten when it is cold or archived, never accessed,
    /// below this importance and has at most `forget_max_words` content words.
    pub forget_importance: f64,
    pub forget_max_words: usize,
    /// Loss guard: a cycle that would archive or forget more than this share of the live
    /// (not yet archived or forgotten) memories is refused before it writes anything,
    /// unless forced ([`SleepOptions::force`]).
    pub max_loss_share: f64,
    /// "Now" for the cycle (Unix ms); `None`: the clock. Tests and replays set it.
    pub now_ms: Option<i64>,
}

/// How importance decays with a memory's time in the store (seed 003's two models), both
/// parametrised by the half-life h so the same knob means the same thing in each:
/// - exponential: f(t) = 2^(−t/h);
/// - power law: f(t) = (1 + t/τ)^(−α) with τ = h / (2^(1/α) − 1), so f(h) = ½; with
///   τ = 1 day this is seed 003's 1 / (1 + t)^α. It falls faster than the exponential
///   before the half-life and much more slowly after it.
///
/// A cycle multiplies the importance above the floor by f(age now) / f(age at the last
/// decay), so decaying in several cycles gives the same value as decaying once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DecayModel {
    #[default]
    Exponential,
    PowerLaw,
}

impl DecayModel {
    /// f(age) for a half-life and exponent (ages in days, negative ages count as 0).
    pub fn curve(self, age_days: f64, half_life_days: f64, alpha: f64) -> f64 {
        let t = age_days.max(0.0);
        match self {
            DecayModel::Exponential => 0.5f64.powf(t / half_life_days),
            DecayModel::PowerLaw => {
                let tau = half_life_days / (2f64.powf(1.0 / alpha) - 1.0);
                (1.0 + t / tau).powf(-alpha)
            }
        }
    }

    /// The factor a cycle applies to the importance above the floor of a memory that was
    /// `age_days` old at the last decay, `elapsed_days` later.
    pub fn factor(self, age_days: f64, elapsed_days: f64, half_life_days: f64, alpha: f64) -> f64 {
        let elapsed = elapsed_days.max(0.0);
        match self {
            // Memoryless: the elapsed time alone (exactly the formula from before the
            // power law existed).
            DecayModel::Exponential => 0.5f64.powf(elapsed / half_life_days),
            DecayModel::PowerLaw => {
                let age = age_days.max(0.0);
                self.curve(age + elapsed, half_life_days, alpha)
                    / self.curve(age, half_life_days, alpha)
            }
        }
    }
}

#[cfg(test)]
mod decay_tests {
    use super::DecayModel::{Exponential, PowerLaw};

    #[test]
    fn both_models_halve_at_the_half_life_and_the_power_law_keeps_more_after_it() {
        for model in [Exponential, PowerLaw] {
            assert!((model.curve(0.0, 30.0, 1.5) - 1.0).abs() < 1e-12);
            assert!(
                (model.curve(30.0, 30.0, 1.5) - 0.5).abs() < 1e-12,
                "{model:?}"
            );
        }
        // Before the half-life the power law falls faster, after it more slowly.
        assert!(PowerLaw.curve(5.0, 30.0, 1.5) < Exponential.curve(5.0, 30.0, 1.5));
        assert!(PowerLaw.curve(120.0, 30.0, 1.5) > Exponential.curve(120.0, 30.0, 1.5));
        assert!((Exponential.curve(120.0, 30.0, 1.5) - 1.0 / 16.0).abs() < 1e-12);
    }

    #[test]
    fn the_power_law_with_a_one_day_scale_is_seed_003s_formula() {
        // τ = 1 day ⇔ h = 2^(1/α) − 1.
        let alpha = 1.5;
        let h = 2f64.powf(1.0 / alpha) - 1.0;
        for t in [0.0, 1.0, 7.0, 30.0, 365.0] {
            let seed = 1.0 / (1.0_f64 + t).powf(alpha);
            assert!(
                (PowerLaw.curve(t, h, alpha) - seed).abs() < 1e-12,
                "t = {t}"
            );
        }
    }

    #[test]
    fn decaying_in_several_cycles_equals_decaying_once() {
        for model in [Exponential, PowerLaw] {
            let once = model.factor(3.0, 100.0, 20.0, 1.5);
            let steps = model.factor(3.0, 10.0, 20.0, 1.5)
                * model.factor(13.0, 40.0, 20.0, 1.5)
                * model.factor(53.0, 50.0, 20.0, 1.5);
            assert!((once - steps).abs() < 1e-12, "{model:?}: {once} vs {steps}");
            assert!((model.factor(7.0, 0.0, 20.0, 1.5) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn models_are_named_as_the_cli_writes_them() {
        assert_eq!("exp".parse::<super::DecayModel>().unwrap(), Exponential);
        assert_eq!("power".parse::<super::DecayModel>().unwrap(), PowerLaw);
        assert_eq!("power_law".parse::<super::DecayModel>().unwrap(), PowerLaw);
        assert!("linear".parse::<super::DecayModel>().is_err());
    }
}

impl std::str::FromStr for DecayModel {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "exp" | "exponential" => Ok(DecayModel::Exponential),
            "power" | "power_law" | "power-law" => Ok(DecayModel::PowerLaw),
            other => Err(crate::Error::InvalidInput(format!(
                "unknown decay model {other:?}; expected exponential (exp) or power_law (power)"
            ))),
        }
    }
}

impl Default for SleepConfig {
    fn default() -> Self {
        Self {
            weights: ReplayWeights::default(),
            recency_decay_per_day: 0.05,
            max_replay: 20_000,
            batch_size: 12,
            min_batch: 3,
            gap_minutes: 120,
            schema_min_support: 3,
            max_schemas: 40,
            schemas_per_conversation: true,
            importance_half_life_days: 30.0,
            importance_floor: 0.05,
            decay: DecayModel::Exponential,
            decay_alpha: 1.5,
            warm_after_days: 7.0,
            cold_after_days: 30.0,
            archive_after_days: 90.0,
            forget_importance: 0.4,
            forget_max_words: 4,
            max_loss_share: 0.25,
            now_ms: None,
        }
    }
}

impl SleepConfig {
    pub fn validate(&self) -> crate::Result<()> {
        let w = &self.weights;
        let bad = |m: &str| Err(crate::Error::InvalidInput(format!("sleep config: {m}")));
        if [w.recency, w.importance, w.novelty, w.access]
            .iter()
            .any(|x| !x.is_finite() || *x < 0.0)
        {
            return bad("replay weights must be finite and non-negative");
        }
        if self.batch_size < 2 || self.min_batch == 0 || self.min_batch > self.batch_size {
            return bad("need 1 ≤ min_batch ≤ batch_size and batch_size ≥ 2");
        }
        if !(self.warm_after_days <= self.cold_after_days
            && self.cold_after_days <= self.archive_after_days)
        {
            return bad("lifecycle ages must be warm ≤ cold ≤ archive");
        }
        if !(0.0..=1.0).contains(&self.max_loss_share) {
            return bad("max_loss_share is a share of the live memories, within 0..=1");
        }
        if !(self.importance_half_life_days.is_finite() && self.importance_half_life_days > 0.0)
            || self.schema_min_support < 2
        {
            return bad("half life must be positive and schema_min_support at least 2");
        }
        if !(self.decay_alpha.is_finite() && self.decay_alpha > 0.0 && self.decay_alpha <= 10.0) {
            return bad("decay_alpha (the power law's exponent) must be within (0, 10]");
        }
        if !(0.0..=1.0).contains(&self.importance_floor)
            || !(0.0..=1.0).contains(&self.forget_importance)
        {
            return bad("importance_floor and forget_importance are importances, within 0..=1");
        }
        if [
            self.warm_after_days,
            self.cold_after_days,
            self.archive_after_days,
        ]
        .iter()
        .any(|d| !d.is_finite() || *d < 0.0)
        {
            return bad("lifecycle ages must be finite and non-negative days");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SleepOptions {
    /// Compute the whole cycle and return it without writing anything.
    pub dry_run: bool,
    /// Who started it: "manual", "cli", "app", "auto", …
    pub trigger: String,
    pub config: SleepConfig,
    /// Run even when the loss guard would refuse the cycle.
    #[serde(default)]
    pub force: bool,
    /// Sleep review: write only the proposals a person accepted from a dry run.
    #[serde(default)]
    pub review: Option<Review>,
}

impl Default for SleepOptions {
    fn default() -> Self {
        Self {
            dry_run: false,
            trigger: "manual".into(),
            config: SleepConfig::default(),
            force: false,
            review: None,
        }
    }
}

/// The proposals of a reviewed dry run that a person accepted. A reviewed cycle plans again
/// at the dry run's "now" (so it proposes what was reviewed, if the store did not change
/// meanwhile) and writes only these, as one cycle that undoes like any other. Proposals are
/// named as the dry run's report shows them: a summary by its source memories, a schema by
/// its text, a state change by its memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The dry run's "now" (its `config.now_ms`, else its `started_at`).
    pub now_ms: i64,
    /// Accepted summaries, each as the ids it derives from (the dry run's `derived_from`).
    pub summaries: Vec<Vec<i64>>,
    /// Accepted schemas, by their text.
    pub schemas: Vec<String>,
    /// Memories whose proposed state change (forget phase) is accepted.
    pub states: Vec<i64>,
    /// Accept the importance decay of the forget phase.
    pub decay: bool,
}

impl Review {
    fn key(ids: &[i64]) -> Vec<i64> {
        let mut k = ids.to_vec();
        k.sort_unstable();
        k
    }

    /// A replayed batch is compressed when an accepted summary draws on it.
    pub fn keeps_batch(&self, batch: &[i64]) -> bool {
        self.summaries
            .iter()
            .any(|k| !k.is_empty() && k.iter().all(|id| batch.contains(id)))
    }

    pub fn keeps_summary(&self, sources: &[i64]) -> bool {
        let key = Self::key(sources);
        self.summaries.iter().any(|k| Self::key(k) == key)
    }

    pub fn keeps_schema(&self, text: &str) -> bool {
        self.schemas.iter().any(|t| t == text)
    }

    /// A forget-phase change: a state change of an accepted memory, or decay if accepted.
    pub fn keeps_change(&self, c: &FieldChange) -> bool {
        match c.field.as_str() {
            "state" => self.states.contains(&c.memory_id),
            "importance" => self.decay,
            _ => false,
        }
    }
}

/// How much of the loss guard a cycle used: the live memories (not archived, forgotten
/// or deleted) when it started, how many it archived or forgot (or would), the limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LossBudget {
    pub live: u64,
    pub lost: u64,
    /// `max_loss_share` of the cycle's config.
    pub limit_share: f64,
    /// Run with `force`: the limit did not apply.
    pub forced: bool,
}

impl LossBudget {
    /// The share of the live memories lost (0 when there were none).
    pub fn share(&self) -> f64 {
        if self.live == 0 {
            0.0
        } else {
            self.lost as f64 / self.live as f64
        }
    }

    pub fn exceeded(&self) -> bool {
        !self.forced && self.share() > self.limit_share
    }
}

/// One phase's timing and counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PhaseReport {
    pub name: String,
    pub millis: u64,
    /// Whether its transaction committed (always false in a dry run).
    pub committed: bool,
    /// Phase-specific counts, e.g. candidates, selected, batches, summaries, schemas,
    /// decayed, state_changes, forgotten.
    pub counts: std::collections::BTreeMap<String, u64>,
}

/// A memory a cycle created (or, in a dry run, would create).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProposedMemory {
    /// `None` in a dry run, and for a created memory that no longer exists.
    pub id: Option<i64>,
    pub kind: Kind,
    pub text: String,
    pub conversation: Option<String>,
    pub session: Option<String>,
    pub details: Details,
    /// Existing memories it derives from.
    pub derived_from: Vec<i64>,
    /// Other proposals it derives from, by position in `created` (dry runs: a schema over
    /// summaries that do not exist yet).
    pub derived_from_proposed: Vec<usize>,
    /// Which backend wrote it ("extractive", or the fallback note of a failed LLM call).
    pub backend: String,
}

/// One field of one memory changed by a cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FieldChange {
    pub memory_id: i64,
    /// Sleep cycles: `last_accessed`, `importance` or `state`; curation also `pinned`,
    /// `tags` and `deleted_at`.
    pub field: String,
    pub old: serde_json::Value,
    pub new: serde_json::Value,
}

/// What a cycle did (or would do). Persisted in `sleep_cycles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SleepReport {
    /// `None` for a dry run.
    pub id: Option<i64>,
    pub trigger: String,
    /// running, completed, cancelled, failed, interrupted (killed; a later cycle found it),
    /// refused (the loss guard stopped it before it wrote anything), undone, or dry_run.
    pub status: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub dry_run: bool,
    pub backend: String,
    pub phases: Vec<PhaseReport>,
    pub created: Vec<ProposedMemory>,
    pub changed: Vec<FieldChange>,
    pub forgotten: Vec<i64>,
    /// Fallbacks, skipped batches, recovered cycles, errors.
    pub notes: Vec<String>,
    pub config: SleepConfig,
    /// The golden-query runs before and after the cycle (when golden queries exist).
    #[serde(default)]
    pub golden: Vec<crate::golden::GoldenRun>,
    /// The loss guard's figures (absent in reports of cycles from before the guard).
    #[serde(default)]
    pub loss: Option<LossBudget>,
}

impl SleepReport {
    pub fn phase(&self, name: &str) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.name == name)
    }
}
