//! Somna's memory engine: a SQLite store, all-MiniLM-L6-v2 embeddings on candle, an HNSW
//! index, ingestion into episodic bubbles and facts, multi-signal retrieval, evaluation.
//! No GUI dependency: the CLI and the desktop app are thin layers over [`Somna`].

pub mod bench;
pub mod cluster;
pub mod compress;
pub mod curate;
pub mod embed;
mod engine;
mod error;

pub mod eval;
pub mod events;
pub mod golden;
mod handles;
pub mod index;
pub mod ingest;
pub mod lang;
pub mod ledger;
pub mod memory;
pub mod metrics;
pub mod paths;
pub mod points;
pub mod project;
pub mod retrieve;
pub mod settings;
pub mod sleep;
pub mod store;
pub mod text;
pub mod timetravel;
pub mod whatif;

pub use cluster::{
    ClusterInfo, ClusterMerge, ClusterReport, LiquidEvent, LiquidParams, LiquidStep, Moved,
};
pub use engine::{
    import_batch_sizes, Changes, Config, ExternalWatch, LiquidLoop, MemoryDetail, OpenReport, Page,
    Somna, Stats, Tick, Timeline, VisibilitySteps, IMPORT_BATCH, IMPORT_RAMP,
};
pub use error::{Error, ErrorKind, Result};
pub use events::{CancelToken, Job, Progress, ProgressEvent};
pub use ingest::{AddOptions, AddReport};
pub use memory::{Kind, Memory, NewMemory, Source, State};
pub use project::{Layout, ProjectionMethod, ProjectionParams};
pub use retrieve::{Route, ScoreMode, SearchQuery, SearchResponse};
pub use settings::{Settings, SettingsChange, SettingsPatch};
pub use sleep::{
    DecayModel, FieldChange, LossBudget, PhaseReport, ProposedMemory, ReplayWeights, Review,
    SleepConfig, SleepOptions, SleepReport,
};
pub use store::{Change, ChangeEvent, Origin};
pub use store::{ListQuery, MemoryFilter, MemoryUpdate, Message};
