//! The RPC map: every command the UI may call, with the type of its one request value
//! (`req`; none for commands that take nothing) and of its response. From this one table
//! * main.rs registers the commands (`generate_handler!`),
//! * the compiler holds each command to the types listed here (the check below), and
//! * the bindings test writes the TypeScript map `Rpc` into ui/src/bindings.ts, through
//!   which ui/src/api.ts calls every command.
//!
//! Commands that start a job answer with its [`crate::jobs::JobId`], marked with the kind of
//! job (jobs.rs lists the kinds and their results). The events the shell emits are in a
//! table of their own (`events!` below): each is emitted only through [`emit`], which holds
//! its payload to the table's type, and the bindings test writes the map `Events`.

/// Calls `$then!` with the table: `json { module::command(Request) => Response, … }` for
/// JSON responses and `binary { module::command(Request), … }` for commands that answer
/// with bytes (an `ArrayBuffer` in the UI).
macro_rules! rpc_table {
    ($then:ident) => {
        $then! {
            json {
                commands::status => commands::Status,
                commands::stats => somna_engine::Stats,
                commands::list_memories(somna_api::ListArgs) => somna_engine::Page,
                commands::search(somna_api::TunedSearchArgs) => somna_engine::SearchResponse,
                commands::get_memory(somna_api::GetArgs) => somna_engine::MemoryDetail,
                commands::memory_history(somna_api::IdArgs) => Vec<somna_engine::store::HistoryEntry>,
                commands::update_memory(somna_api::UpdateArgs) => somna_engine::Memory,
                commands::delete_memory(somna_api::DeleteArgs) => somna_api::DeleteResult,
                commands::restore_memory(somna_api::IdArgs) => somna_engine::Memory,
                commands::import_text(somna_api::ImportRequest) => crate::jobs::JobId<crate::jobs::kinds::Import>,
                commands::load_demo => crate::jobs::JobId<crate::jobs::kinds::Import>,
                commands::export_store(commands::PathRequest) => usize,
                commands::cancel_job(commands::JobRef) => bool,
                commands::similar(somna_api::SimilarArgs) => somna_api::SimilarResult,
                commands::neighbourhood(somna_api::NeighbourhoodRequest) => somna_engine::points::Neighbourhood,
                commands::actors => Vec<String>,
                commands::open_store(commands::PathRequest) => crate::jobs::JobId<crate::jobs::kinds::Open>,
                commands::memory_sleep_history(somna_api::IdArgs) => Vec<somna_engine::points::MemorySleepEvent>,
                commands::timeline => somna_engine::Timeline,
                commands::visibility_steps => somna_engine::VisibilitySteps,
                views::compute_layout(somna_api::LayoutRequest) => crate::jobs::JobId<crate::jobs::kinds::Layout>,
                views::cluster_run(somna_api::ClusterRequest) => crate::jobs::JobId<crate::jobs::kinds::Cluster>,
                views::clusters => Vec<somna_engine::ClusterInfo>,
                views::cluster_merges => Vec<somna_engine::ClusterMerge>,
                views::liquid_defaults => somna_engine::LiquidParams,
                views::liquid_status => somna_api::LiquidStatus,
                views::liquid_start(Option<somna_engine::LiquidParams>) => (),
                views::liquid_pause => (),
                views::liquid_step(Option<somna_engine::LiquidParams>) => (),
                views::liquid_set_params(somna_engine::LiquidParams) => (),
                views::sleep_config => somna_engine::SleepConfig,
                views::llm_settings => Option<somna_api::LlmSettings>,
                views::set_llm_settings(somna_api::SetLlmSettings) => (),
                views::sleep_run(somna_api::SleepRunRequest) => crate::jobs::JobId<crate::jobs::kinds::Sleep>,
                views::sleep_history(usize) => Vec<somna_engine::SleepReport>,
                views::sleep_undo(somna_api::UndoRequest) => crate::jobs::JobId<crate::jobs::kinds::SleepUndo>,
                views::curate(somna_api::CurateRequest) => somna_engine::curate::CurationReport,
                views::curate_undo(somna_api::CurateUndoArgs) => somna_engine::curate::CurationReport,
                views::curations(usize) => Vec<somna_engine::curate::CurationReport>,
                views::duplicates(somna_api::DuplicatesArgs) => Vec<somna_engine::curate::duplicates::DuplicateGroup>,
                views::auto_sleep_settings => somna_engine::sleep::auto::AutoSleepSettings,
                views::set_auto_sleep(somna_engine::sleep::auto::AutoSleepSettings) => (),
                views::settings => somna_engine::Settings,
                views::what_if(somna_engine::whatif::WhatIfRequest) => somna_engine::whatif::WhatIfReport,
                views::apply_settings(somna_engine::SettingsPatch) => somna_engine::SettingsChange,
                views::settings_undo(i64) => somna_engine::SettingsChange,
                views::settings_history(usize) => Vec<somna_engine::SettingsChange>,
                live::server_status => live::ServerStatus,
                live::server_start(u16) => live::ServerStatus,
                live::server_stop => live::ServerStatus,
                panels::golden_list => Vec<somna_engine::golden::GoldenEntry>,
                panels::golden_add(somna_api::GoldenAddArgs) => somna_engine::store::GoldenQuery,
                panels::golden_remove(somna_api::IdArgs) => (),
                panels::golden_run => crate::jobs::JobId<crate::jobs::kinds::Golden>,
                panels::golden_history(somna_api::GoldenHistoryArgs) => Vec<somna_engine::golden::GoldenRun>,
                panels::ledger(somna_api::LedgerArgs) => somna_api::LedgerReport,
                panels::search_defaults => somna_api::SearchDefaults,
            }
            binary {
                commands::point_attributes,
                views::layout_data(somna_api::LayoutKey),
                views::layout_as_of(somna_api::LayoutAsOf),
            }
        }
    };
}

/// An event the shell emits: its name and the type of its payload.
pub(crate) trait Event {
    const NAME: &'static str;
    type Payload: serde::Serialize + Clone;
}

/// Declares the events (`Type "name" => Payload, …`) and their TypeScript map.
macro_rules! events {
    ($($e:ident $name:literal => $p:ty),* $(,)?) => {
        /// The events of the table.
        pub(crate) mod events {
            $(
                pub(crate) struct $e;
                impl super::Event for $e {
                    const NAME: &'static str = $name;
                    type Payload = $p;
                }
            )*
        }

        /// `Events` (event name → payload type) in TypeScript.
        #[cfg(test)]
        pub(crate) fn events_ts(cfg: &ts_rs::Config) -> String {
            use ts_rs::TS;
            let mut out = String::from(
                "/** Every event the shell emits: its name and payload type. */\nexport type Events = {\n",
            );
            $( out.push_str(&format!("  \"{}\": {};\n", $name, <$p as TS>::name(cfg))); )*
            out.push_str("};\n");
            out
        }
    };
}

events! {
    Changed "somna://changed" => somna_engine::ChangeEvent,
    Progress "somna://progress" => crate::jobs::ProgressPayload,
    JobDone "somna://job-done" => crate::jobs::DonePayload,
    Opening "somna://opening" => somna_engine::ProgressEvent,
    Ready "somna://ready" => (),
    OpenFailed "somna://open-failed" => crate::error::ApiError,
    LiquidStep "somna://liquid-step" => somna_engine::LiquidStep,
    LiquidState "somna://liquid-state" => crate::rpc::LiquidState,
    LiquidError "somna://liquid-error" => crate::error::ApiError,
}

/// Emits event `E` to the UI.
pub(crate) fn emit<E: Event>(app: &tauri::AppHandle, payload: E::Payload) {
    use tauri::Emitter;
    let _ = app.emit(E::NAME, payload);
}

/// The liquid loop started or paused.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct LiquidState {
    pub running: bool,
}

/// Registers every command of the table.
macro_rules! rpc_handler {
    (
        json { $($m:ident :: $n:ident $(($q:ty))? => $r:ty),* $(,)? }
        binary { $($bm:ident :: $bn:ident $(($bq:ty))?),* $(,)? }
    ) => {
        tauri::generate_handler![$($m::$n,)* $($bm::$bn,)*]
    };
}

/// Holds every command to the request and response types of its row: this fails to compile
/// when a command's signature and the table disagree.
macro_rules! rpc_check {
    (
        json { $($m:ident :: $n:ident $(($q:ty))? => $r:ty),* $(,)? }
        binary { $($bm:ident :: $bn:ident $(($bq:ty))?),* $(,)? }
    ) => {
        #[allow(dead_code, clippy::let_unit_value)]
        mod check {
            use crate::{commands, error::ApiResult, live, panels, views};
            use tauri::AppHandle;
            $(
                pub async fn $n(app: AppHandle $(, req: $q)?) -> ApiResult<$r> {
                    $m::$n(app $(, { let r: $q = req; r })?).await
                }
            )*
            $(
                pub async fn $bn(app: AppHandle $(, req: $bq)?) -> ApiResult<tauri::ipc::Response> {
                    $bm::$bn(app $(, { let r: $bq = req; r })?).await
                }
            )*
        }
    };
}

rpc_table!(rpc_check);

/// The command names of the table, in its order.
#[cfg(test)]
macro_rules! rpc_names {
    (
        json { $($m:ident :: $n:ident $(($q:ty))? => $r:ty),* $(,)? }
        binary { $($bm:ident :: $bn:ident $(($bq:ty))?),* $(,)? }
    ) => {
        &[$(stringify!($n),)* $(stringify!($bn),)*]
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Commands the UI has no use for: declared, so callable only if granted, and not granted.
    const NOT_GRANTED: &[&str] = &["memory_history"];

    fn declared() -> BTreeSet<&'static str> {
        let names: &[&str] = include!("command_names.rs");
        names.iter().copied().collect()
    }

    #[test]
    fn the_app_manifest_declares_every_command_of_the_table_and_no_other() {
        let table: &[&str] = rpc_table!(rpc_names);
        let table: BTreeSet<&str> = table.iter().copied().collect();
        assert_eq!(declared(), table);
    }

    #[test]
    fn the_main_window_is_granted_events_and_the_commands_the_ui_uses_only() {
        let text = include_str!("../capabilities/default.json");
        let cap: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(cap["windows"], serde_json::json!(["main"]));
        let granted: BTreeSet<String> = cap["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p.as_str()
                    .expect("plain permission identifiers")
                    .to_string()
            })
            .collect();
        let mut expected: BTreeSet<String> = declared()
            .into_iter()
            .filter(|c| !NOT_GRANTED.contains(c))
            .map(|c| format!("allow-{}", c.replace('_', "-")))
            .collect();
        expected.insert("core:event:allow-listen".into());
        expected.insert("core:event:allow-unlisten".into());
        assert_eq!(granted, expected);
    }
}
