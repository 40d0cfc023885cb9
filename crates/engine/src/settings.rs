//! The store's saved settings: the sleep cycle's knobs (decay, lifecycle and forgetting
//! thresholds, …) and the fusion weights searches rank with. They live in the store's
//! `meta` table (beside the auto-sleep setting) and change only by applying a patch, which
//! the façade records as one row of the operation log (op "settings", old and new values)
//! so it shows on the timeline and can be undone like a curation.

use crate::retrieve::Weights;
use crate::sleep::{DecayModel, SleepConfig};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The `meta` key the settings are saved under.
pub(crate) const SETTINGS_KEY: &str = "settings";

/// What a store runs with: every sleep cycle started without an explicit config uses
/// `sleep`, every search of the operations layer (and the golden queries) `weights`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub sleep: SleepConfig,
    pub weights: Weights,
}

impl Settings {
    pub fn validate(&self) -> Result<()> {
        self.sleep.validate()?;
        if self.sleep.now_ms.is_some() {
            return Err(Error::InvalidInput(
                "saved settings cannot fix the sleep cycle's clock (now_ms)".into(),
            ));
        }
        self.weights.validate()
    }

    /// These settings with `patch`'s values in place, checked.
    pub fn patched(&self, patch: &SettingsPatch) -> Result<Settings> {
        let mut s = self.clone();
        let c = &mut s.sleep;
        let set = |slot: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        if let Some(d) = patch.decay {
            c.decay = d;
        }
        set(&mut c.importance_half_life_days, patch.half_life_days);
        set(&mut c.decay_alpha, patch.decay_alpha);
        set(&mut c.importance_floor, patch.importance_floor);
        set(&mut c.warm_after_days, patch.warm_after_days);
        set(&mut c.cold_after_days, patch.cold_after_days);
        set(&mut c.archive_after_days, patch.archive_after_days);
        set(&mut c.forget_importance, patch.forget_importance);
        if let Some(n) = patch.forget_max_words {
            c.forget_max_words = n;
        }
        if let Some(w) = patch.weights {
            s.weights = w;
        }
        s.validate()?;
        Ok(s)
    }
}

/// A change to the settings: what a person tries in the what-if simulator and applies.
/// Every field left out keeps its saved value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields = nullable))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SettingsPatch {
    /// Importance decay model: exponential or power_law.
    pub decay: Option<DecayModel>,
    /// Importance half-life in days (both models halve at it).
    pub half_life_days: Option<f64>,
    /// The power law's exponent (0 to 10; seed 003: 1.5).
    pub decay_alpha: Option<f64>,
    /// Importance never decays below this.
    pub importance_floor: Option<f64>,
    /// Lifecycle: warm from this age (days).
    pub warm_after_days: Option<f64>,
    /// Lifecycle: cold from this age (days).
    pub cold_after_days: Option<f64>,
    /// Lifecycle: archived from this age (days).
    pub archive_after_days: Option<f64>,
    /// A consolidated, cold, never retrieved episode below this importance is forgotten…
    pub forget_importance: Option<f64>,
    /// …when it has at most this many content words.
    pub forget_max_words: Option<usize>,
    /// Fusion weights (they must sum to 1).
    pub weights: Option<Weights>,
}

impl SettingsPatch {
    pub fn is_empty(&self) -> bool {
        *self == SettingsPatch::default()
    }
}

/// One application of settings, as the operation log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SettingsChange {
    /// The operation-log row (undo it with this id).
    pub id: i64,
    pub at: i64,
    /// Who applied it ("cli", "app", …).
    pub by: String,
    /// done or undone.
    pub status: String,
    pub old: Settings,
    pub new: Settings,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_changes_only_what_it_names_and_is_checked() {
        let base = Settings::default();
        let p = SettingsPatch {
            decay: Some(DecayModel::PowerLaw),
            archive_after_days: Some(60.0),
            ..Default::default()
        };
        let s = base.patched(&p).unwrap();
        assert_eq!(s.sleep.decay, DecayModel::PowerLaw);
        assert_eq!(s.sleep.archive_after_days, 60.0);
        assert_eq!(s.sleep.cold_after_days, base.sleep.cold_after_days);
        assert_eq!(s.weights, base.weights);
        assert!(SettingsPatch::default().is_empty() && !p.is_empty());

        let backwards = SettingsPatch {
            archive_after_days: Some(10.0),
            ..Default::default()
        };
        assert_eq!(
            base.patched(&backwards).unwrap_err().code(),
            "invalid_input"
        );
        let unweighted = SettingsPatch {
            weights: Some(Weights {
                semantic: 1.0,
                ..Weights::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            base.patched(&unweighted).unwrap_err().code(),
            "invalid_input"
        );
        let no_half_life = SettingsPatch {
            half_life_days: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            base.patched(&no_half_life).unwrap_err().code(),
            "invalid_input"
        );
    }
}
