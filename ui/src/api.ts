// Typed wrappers over the Tauri commands (src-tauri/src/commands.rs) and events.

import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  ApiError, ClusterInfo, ClusterMerge, JobDone, ListQuery, Memory, MemoryDetail, MemoryUpdate, Neighbourhood, Page,
  ProgressPayload, SearchRequest, SearchResponse, Stats, Status, HistoryEntry,
} from "./types";
import type { SleepReport } from "./sleep";
import type { AutoSleepSettings, LlmSettings, MemorySleepEvent, ServerStatus, Similar } from "./types";

export class CommandError extends Error {
  constructor(public code: string, message: string) {
    super(message);
  }
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    const err = e as ApiError | string;
    if (typeof err === "object" && err && "code" in err) throw new CommandError(err.code, err.message);
    throw new CommandError("internal", String(err));
  }
}

export const api = {
  status: () => call<Status>("status"),
  stats: () => call<Stats>("stats"),
  list: (query: ListQuery) => call<Page>("list_memories", { query }),
  search: (query: SearchRequest) => call<SearchResponse>("search", { query }),
  get: (id: number) => call<MemoryDetail>("get_memory", { id }),
  history: (id: number) => call<HistoryEntry[]>("memory_history", { id }),
  update: (id: number, update: MemoryUpdate) => call<Memory>("update_memory", { id, update }),
  remove: (id: number, hard: boolean) => call<void>("delete_memory", { id, hard }),
  restore: (id: number) => call<Memory>("restore_memory", { id }),
  /// `format` null: the engine detects it from the name and content.
  importText: (name: string, format: string | null, content: string) =>
    call<number>("import_text", { name, format, content }),
  loadDemo: () => call<number>("load_demo"),
  exportStore: (path: string) => call<number>("export_store", { path }),
  cancelJob: (job: number) => call<boolean>("cancel_job", { job }),
  pointAttributes: () => call<ArrayBuffer>("point_attributes"),
  actors: () => call<string[]>("actors"),
  memorySleepHistory: (id: number) => call<MemorySleepEvent[]>("memory_sleep_history", { id }),
  similar: (id: number, k: number) => call<Similar[]>("similar", { id, k }),
  neighbourhood: (seeds: number[], depth: number, limit: number) =>
    call<Neighbourhood>("neighbourhood", { seeds, depth, limit }),
  openStore: (path: string) => call<number>("open_store", { path }),
  computeLayout: (method: "pca" | "tsne", dims: number, full: boolean) =>
    call<number>("compute_layout", { method, dims, full }),
  layoutData: (method: "pca" | "tsne", dims: number) => call<ArrayBuffer>("layout_data", { method, dims }),
  clusterRun: (k: number | null) => call<number>("cluster_run", { k }),
  clusters: () => call<ClusterInfo[]>("clusters"),
  clusterMerges: () => call<ClusterMerge[]>("cluster_merges"),
  liquidDefaults: () => call<Record<string, unknown>>("liquid_defaults"),
  liquidStatus: () => call<Record<string, unknown> & { running: boolean }>("liquid_status"),
  liquidStart: (params: Record<string, unknown> | null) => call<void>("liquid_start", { params }),
  liquidPause: () => call<void>("liquid_pause"),
  liquidStep: (params: Record<string, unknown> | null) => call<void>("liquid_step", { params }),
  liquidSetParams: (params: Record<string, unknown>) => call<void>("liquid_set_params", { params }),
  sleepConfig: () => call<Record<string, unknown>>("sleep_config"),
  sleepRun: (dryRun: boolean, config: Record<string, unknown> | null, backend: string) =>
    call<number>("sleep_run", { dryRun, config, backend }),
  llmSettings: () => call<LlmSettings | null>("llm_settings"),
  setLlmSettings: (baseUrl: string, model: string, apiKey: string | null, timeoutSecs: number) =>
    call<void>("set_llm_settings", { baseUrl, model, apiKey, timeoutSecs }),
  sleepHistory: (limit: number) => call<SleepReport[]>("sleep_history", { limit }),
  sleepUndo: (id: number) => call<number>("sleep_undo", { id }),
  autoSleepSettings: () => call<AutoSleepSettings>("auto_sleep_settings"),
  setAutoSleep: (settings: AutoSleepSettings) => call<void>("set_auto_sleep", { settings }),
  serverStatus: () => call<ServerStatus>("server_status"),
  serverStart: (port: number) => call<ServerStatus>("server_start", { port }),
  serverStop: () => call<ServerStatus>("server_stop"),
};

export function onProgress(f: (p: ProgressPayload) => void): Promise<UnlistenFn> {
  return listen<ProgressPayload>("somna://progress", (e) => f(e.payload));
}

export function onJobDone(f: (p: JobDone) => void): Promise<UnlistenFn> {
  return listen<JobDone>("somna://job-done", (e) => f(e.payload));
}

export function onEvent<T>(name: string, f: (p: T) => void): Promise<UnlistenFn> {
  return listen<T>(name, (e) => f(e.payload));
}

/// Resolves with a job's result when it ends, rejects with its error.
const waiters = new Map<number, { resolve: (v: unknown) => void; reject: (e: CommandError) => void }>();
const early = new Map<number, JobDone>();
void onJobDone((d) => {
  const w = waiters.get(d.job);
  if (!w) {
    early.set(d.job, d);
    return;
  }
  waiters.delete(d.job);
  if (d.ok) w.resolve(d.result);
  else w.reject(new CommandError(d.error?.code ?? "internal", d.error?.message ?? "failed"));
});

export function waitJob<T>(job: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const d = early.get(job);
    if (d) {
      early.delete(job);
      if (d.ok) resolve(d.result as T);
      else reject(new CommandError(d.error?.code ?? "internal", d.error?.message ?? "failed"));
      return;
    }
    waiters.set(job, { resolve: resolve as (v: unknown) => void, reject });
  });
}
