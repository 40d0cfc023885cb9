//! The façade's saved settings: reading them, applying a patch as one row of the operation
//! log (so it is on the timeline and undoes like a curation), and the log of applications.

use super::sleep::Running;
use super::Somna;
use crate::events::Job;
use crate::settings::{Settings, SettingsChange, SettingsPatch, SETTINGS_KEY};
use crate::sleep::commit::blockers;
use crate::store::{now_ms, CycleRow};
use crate::{Error, Result};

/// The operation log's name for an application of settings.
pub(crate) const OP: &str = "settings";

impl Somna {
    /// The saved settings (the defaults when none were applied).
    pub fn settings(&self) -> Result<Settings> {
        self.with_store(|s| match s.get_meta(SETTINGS_KEY)? {
            Some(json) => Ok(serde_json::from_str(&json)?),
            None => Ok(Settings::default()),
        })
    }

    /// Applies `patch` to the saved settings: checked, saved, and recorded as one row of the
    /// operation log holding the old and new values (undo with
    /// [`Self::settings_undo`]). Refused while a sleep cycle or an undo runs, and when the
    /// patch changes nothing.
    pub fn apply_settings(&self, patch: &SettingsPatch, by: &str) -> Result<SettingsChange> {
        let _running = Running::claim(self)?;
        let old = self.settings()?;
        let new = old.patched(patch)?;
        if new == old {
            return Err(Error::InvalidInput(
                "settings: nothing to change (the patch repeats the saved values)".into(),
            ));
        }
        let json = serde_json::to_string(&new)?;
        let at = now_ms();
        let id = self.store().transaction(|tx| {
            let id = tx.insert_operation(OP, at, by)?;
            tx.set_meta(SETTINGS_KEY, &json)?;
            tx.save_cycle(&CycleRow {
                id,
                op: OP.into(),
                started_at: at,
                ended_at: Some(at),
                trigger: by.into(),
                status: "done".into(),
                phase_stats: serde_json::json!({
                    "settings": { "old": old, "new": new },
                    "notes": [format!("settings applied by {by}")],
                }),
                created_ids: Vec::new(),
                changed: serde_json::json!([]),
                forgotten_ids: Vec::new(),
                undone_at: None,
            })?;
            Ok(id)
        })?;
        Ok(SettingsChange {
            id,
            at,
            by: by.into(),
            status: "done".into(),
            old,
            new,
        })
    }

    /// Undoes application `id`: the settings it replaced are saved again. Refused with
    /// [`Error::UndoBlocked`] while a later application stands (undo that first).
    pub fn settings_undo(&self, id: i64, job: &Job) -> Result<SettingsChange> {
        let _running = Running::claim(self)?;
        let row = {
            let store = self.store();
            let read = store.read();
            let row = read
                .get_cycle(id)?
                .filter(|r| r.op == OP)
                .ok_or(Error::SettingsNotFound { id })?;
            if row.status == "undone" {
                return Err(Error::InvalidInput(format!(
                    "settings application {id} is already undone"
                )));
            }
            let later = blockers(&read, &row)?;
            if !later.is_empty() {
                return Err(Error::UndoBlocked { cycle: id, later });
            }
            row
        };
        let undone = self.revert(&row, &format!("settings:{id}"), job)?;
        change_of(&undone)
    }

    /// The latest applications of settings, newest first.
    pub fn settings_history(&self, limit: usize) -> Result<Vec<SettingsChange>> {
        let rows = self.store().read().list_operations(OP, limit)?;
        rows.iter().map(change_of).collect()
    }
}

/// An application of settings from its log row.
fn change_of(row: &CycleRow) -> Result<SettingsChange> {
    let s = row
        .phase_stats
        .get("settings")
        .ok_or_else(|| Error::Internal(format!("operation {} holds no settings", row.id)))?;
    Ok(SettingsChange {
        id: row.id,
        at: row.started_at,
        by: row.trigger.clone(),
        status: row.status.clone(),
        old: serde_json::from_value(s["old"].clone())?,
        new: serde_json::from_value(s["new"].clone())?,
    })
}
