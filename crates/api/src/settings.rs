//! The store's settings (sleep knobs and fusion weights): reading them, the what-if
//! simulator over a change, applying a change (recorded in the operation log, undoable)
//! and undoing one.

use crate::Api;
use somna_engine::whatif::{WhatIfReport, WhatIfRequest};
use somna_engine::{Job, Result, Settings, SettingsChange, SettingsPatch};

impl Api {
    pub fn settings(&self) -> Result<Settings> {
        self.engine().settings()
    }

    /// What `req.patch` would do, written nowhere (limits checked by the request).
    pub fn what_if(&self, req: &WhatIfRequest) -> Result<WhatIfReport> {
        self.engine().what_if(req)
    }

    /// Saves `patch` over the settings, recorded with this front end as who applied it.
    pub fn apply_settings(&self, patch: &SettingsPatch) -> Result<SettingsChange> {
        self.engine().apply_settings(patch, self.actor())
    }

    /// Puts back the settings application `id` replaced.
    pub fn settings_undo(&self, id: i64) -> Result<SettingsChange> {
        self.engine().settings_undo(id, &Job::default())
    }

    /// The latest applications, newest first (`limit` 1–1000, default 20).
    pub fn settings_history(&self, limit: Option<usize>) -> Result<Vec<SettingsChange>> {
        self.engine()
            .settings_history(crate::limits::SLEEP_HISTORY.check(limit)?)
    }
}
