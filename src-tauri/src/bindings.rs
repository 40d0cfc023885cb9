//! TypeScript declarations of every type that crosses the IPC boundary, generated from the
//! Rust types by ts-rs into `ui/src/bindings.ts`, the RPC map `Rpc` (command name →
//! request and response types, from rpc.rs's table), the event map `Events` (event name →
//! payload type) and `JobResults` (kind of job → result type, from jobs.rs). The test fails when that file is
//! stale; `SOMNA_WRITE_BINDINGS=1 cargo test -p somna-app bindings` rewrites it. Integers
//! are `number` (ids and millisecond times stay far below 2^53).

use crate::commands::{self, JobRef, PathRequest, Status};
use crate::error::ApiError;
use crate::jobs::{DonePayload, ProgressPayload};
use crate::live::{self, ServerStatus};
use somna_api::{
    ClusterRequest, DeleteArgs, DeleteResult, Filters, IdArgs, ImportDone, ImportRequest,
    LayoutAsOf, LayoutKey, LayoutRequest, LayoutSummary, LiquidStatus, ListArgs, LlmSettings,
    NeighbourhoodRequest, SearchArgs, SetLlmSettings, SimilarArgs, SimilarResult, SleepRunRequest,
    UndoRequest, UpdateArgs, UpdateFields,
};
use somna_engine::cluster::{ClusterGroup, ClusterInfo};
use somna_engine::cluster::{ClusterReport, ClusterUpkeep};
use somna_engine::index::SearchPath;
use somna_engine::ingest::{ImportFormat, ImportOutcome};
use somna_engine::memory::{Details, Kind, LinkKind, Memory, Source, State, W5H1};
use somna_engine::points::{GraphEdge, GraphNode, MemorySleepEvent, Neighbourhood, Similar};
use somna_engine::retrieve::{
    Budget, Hit, Origin, Route, ScoreMode, SearchQuery, SearchResponse, Signals, Timings, Weights,
};
use somna_engine::sleep::auto::AutoSleepSettings;
use somna_engine::store::{
    ClusterMerge, HistoryEntry, Link, ListQuery, MemoryFilter, MemoryUpdate, SortKey,
};
use somna_engine::{
    AddReport, LiquidParams, PhaseReport, ProjectionMethod, ProposedMemory, ReplayWeights,
    SleepConfig, SleepReport,
};
use somna_engine::{MemoryDetail, Page, Stats};
use ts_rs::{Config, TS};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/bindings.ts");

fn render() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust types by ts-rs (src-tauri/src/bindings.rs); do not edit.\n\
         // Regenerate: SOMNA_WRITE_BINDINGS=1 cargo test -p somna-app bindings\n\n",
    );
    macro_rules! declare {
        ($($t:ty),* $(,)?) => {
            $( out.push_str(&format!("export {}\n\n", <$t as TS>::decl(&cfg))); )*
        };
    }
    declare!(
        serde_json::Value,
        Kind,
        State,
        Source,
        LinkKind,
        W5H1,
        Details,
        Memory,
        Link,
        HistoryEntry,
        MemoryDetail,
        MemoryFilter,
        somna_engine::store::Superseded,
        SortKey,
        ListQuery,
        Page,
        MemoryUpdate,
        Stats,
        Route,
        ScoreMode,
        Weights,
        Budget,
        Signals,
        Origin,
        somna_engine::lang::entities::EntityKind,
        somna_engine::retrieve::Reason,
        somna_engine::retrieve::Question,
        Hit,
        Timings,
        SearchPath,
        somna_engine::retrieve::Tuning,
        SearchQuery,
        SearchResponse,
        ClusterGroup,
        ClusterInfo,
        ClusterMerge,
        GraphNode,
        GraphEdge,
        Neighbourhood,
        Similar,
        MemorySleepEvent,
        ApiError,
        Status,
        ProgressPayload,
        DonePayload,
        LlmSettings,
        AutoSleepSettings,
        ServerStatus,
        Filters,
        ListArgs,
        SearchArgs,
        IdArgs,
        somna_api::GetArgs,
        somna_engine::Tick,
        somna_engine::Timeline,
        somna_engine::VisibilitySteps,
        UpdateArgs,
        UpdateFields,
        DeleteArgs,
        DeleteResult,
        ImportFormat,
        ImportRequest,
        AddReport,
        ImportOutcome,
        ClusterUpkeep,
        ImportDone,
        PathRequest,
        JobRef,
        SimilarArgs,
        SimilarResult,
        NeighbourhoodRequest,
        ProjectionMethod,
        LayoutKey,
        LayoutAsOf,
        LayoutRequest,
        LayoutSummary,
        ClusterRequest,
        ClusterReport,
        LiquidParams,
        LiquidStatus,
        somna_engine::Moved,
        somna_engine::cluster::liquid::Relabelled,
        somna_engine::LiquidStep,
        crate::rpc::LiquidState,
        somna_engine::ProgressEvent,
        ReplayWeights,
        SleepConfig,
        PhaseReport,
        ProposedMemory,
        somna_engine::sleep::FieldChange,
        somna_engine::Change,
        somna_engine::Origin,
        somna_engine::ChangeEvent,
        somna_engine::eval::golden::GoldenOutcome,
        somna_engine::eval::golden::GoldenRun,
        somna_engine::LossBudget,
        somna_engine::Review,
        SleepReport,
        somna_engine::curate::CurateAction,
        somna_engine::curate::MergedMemory,
        somna_engine::curate::ClusterRelabel,
        somna_engine::curate::CurationReport,
        somna_engine::curate::duplicates::DuplicateGroup,
        somna_api::CurateRequest,
        somna_api::CurateUndoArgs,
        somna_api::DuplicatesArgs,
        SetLlmSettings,
        SleepRunRequest,
        UndoRequest,
        somna_api::TunedSearchArgs,
        somna_api::SearchDefaults,
        somna_engine::store::GoldenQuery,
        somna_engine::golden::GoldenEntry,
        somna_api::GoldenAddArgs,
        somna_api::GoldenHistoryArgs,
        somna_engine::store::LedgerSummary,
        somna_api::LedgerArgs,
        somna_api::LedgerReport,
        somna_engine::DecayModel,
        somna_engine::Settings,
        somna_engine::SettingsPatch,
        somna_engine::SettingsChange,
        somna_engine::whatif::WhatIfRequest,
        somna_engine::whatif::StateChange,
        somna_engine::whatif::Transition,
        somna_engine::whatif::Bucket,
        somna_engine::whatif::LifecycleWhatIf,
        somna_engine::whatif::GoldenWhatIf,
        somna_engine::whatif::GoldenSummary,
        somna_engine::whatif::SearchWhatIf,
        somna_engine::whatif::WhatIfTimings,
        somna_engine::whatif::WhatIfReport,
    );
    out.push_str(&rpc_map(&cfg));
    out.push('\n');
    out.push_str(&crate::rpc::events_ts(&cfg));
    out.push('\n');
    out.push_str(&crate::jobs::job_results_ts(&cfg));
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// `Rpc`: for every command of rpc.rs's table, its request (`null` when it takes none) and
/// response types.
macro_rules! rpc_ts {
    (
        json { $($m:ident :: $n:ident $(($q:ty))? => $r:ty),* $(,)? }
        binary { $($bm:ident :: $bn:ident $(($bq:ty))?),* $(,)? }
    ) => {
        fn rpc_map(cfg: &Config) -> String {
            let mut out = String::from(
                "/** Every command: its request (`req`) and response types. */\nexport type Rpc = {\n",
            );
            let req = |name: Option<String>| name.unwrap_or_else(|| "null".into());
            $(
                let q: Option<String> = None $(.or(Some(<$q as TS>::name(cfg))))?;
                out.push_str(&format!(
                    "  {}: {{ req: {}; res: {} }};\n",
                    stringify!($n),
                    req(q),
                    <$r as TS>::name(cfg)
                ));
            )*
            $(
                let q: Option<String> = None $(.or(Some(<$bq as TS>::name(cfg))))?;
                out.push_str(&format!(
                    "  {}: {{ req: {}; res: ArrayBuffer }};\n",
                    stringify!($bn),
                    req(q)
                ));
            )*
            out.push_str("};\n");
            out
        }
    };
}

rpc_table!(rpc_ts);

#[test]
fn typescript_bindings_are_current() {
    let fresh = render();
    if std::env::var_os("SOMNA_WRITE_BINDINGS").is_some() {
        std::fs::write(PATH, &fresh).expect("write ui/src/bindings.ts");
        return;
    }
    let committed = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/bindings.ts is stale: run `SOMNA_WRITE_BINDINGS=1 cargo test -p somna-app bindings`"
    );
}
