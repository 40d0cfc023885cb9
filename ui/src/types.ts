// Types the UI receives from and sends to the backend. Everything that crosses the IPC
// boundary is generated from the Rust types (bindings.ts, by src-tauri/src/bindings.rs);
// this file only adds names the UI uses and shapes derived from the generated ones.

import type { Kind, MemoryFilter, ProgressPayload, State } from "./bindings";

export type {
  ApiError, Details, Hit, HistoryEntry, JobDone, JsonValue, Kind, Link, LinkKind, ListQuery, LlmSettings, Memory,
  MemoryDetail, MemoryFilter, MemorySleepEvent, MemoryUpdate, Origin, Page, Route, ScoreMode, SearchResponse,
  Signals, SortKey, Source, Stats, Status, Timings, Weights, ClusterGroup, ClusterInfo, ClusterMerge, GraphNode, GraphEdge,
  Neighbourhood, AutoSleepSettings, ServerStatus, ChangeEvent, Similar, Filters, ListArgs, SearchArgs,
  UpdateFields, ImportFormat, ImportDone, LayoutSummary, ClusterReport, LiquidParams, LiquidStatus, SleepConfig,
  SleepReport, PhaseReport, ProposedMemory, Rpc, LiquidStep, Events, JobId, JobResults, ProjectionMethod,
  CurateAction, CurationReport, DuplicateGroup, LossBudget, MergedMemory, FieldChange, Review, Reason, Question,
  GoldenAddArgs, GoldenEntry, GoldenQuery, GoldenRun, GoldenOutcome, LedgerReport, LedgerSummary, SearchDefaults,
  Bucket, DecayModel, GoldenSummary, GoldenWhatIf, LifecycleWhatIf, SearchWhatIf, Settings, SettingsChange,
  SettingsPatch, StateChange, Transition, WhatIfReport, WhatIfRequest,
} from "./bindings";

/** A memory's lifecycle state (the engine's `State`). */
export type MemState = State;
export type { ProgressPayload };

export const KINDS: Kind[] = ["episode", "fact", "summary", "schema"];
export const STATES: MemState[] = ["active", "warm", "cold", "archived", "forgotten"];

export function emptyFilter(): MemoryFilter {
  return {
    kinds: [], states: [], who: null, conversation: null, from: null, to: null, include_deleted: false, cluster: null,
    superseded: "hide", stale_days: null, valid_at: null,
  };
}
