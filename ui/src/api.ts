// Typed calls of the Tauri commands and the app's events. Every command, with its request and
// response types, comes from the generated RPC map (`Rpc` in bindings.ts, from
// src-tauri/src/rpc.rs): a command name or a request the backend does not have fails the
// type check. So does an event name (`Events`: name → payload), and a job's result is typed
// by the kind its command started (`JobId<kind>` → `JobResults[kind]`).

import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { ApiError, Events, JobDone, JobId, JobResults, ProgressPayload, ProjectionMethod, Rpc } from "./bindings";
import { timed } from "./render/perf";
import { state } from "./store";
import type {
  AutoSleepSettings, CurateAction, GoldenAddArgs, ImportFormat, Review, LiquidParams, ListQuery, SearchArgs, SettingsPatch, SleepConfig,
  UpdateFields, Weights, WhatIfRequest,
} from "./types";

/** The X-ray's tuning of a search: context window (tokens) and fusion weights; null: the default. */
export interface Tuning {
  window: number | null;
  weights: Weights | null;
}

export class CommandError extends Error {
  constructor(public code: string, message: string) {
    super(message);
  }
}

type Command = keyof Rpc;
type Req<C extends Command> = Rpc[C]["req"];
type Res<C extends Command> = Rpc[C]["res"];

/// Calls one command with its one request value.
async function call<C extends Command>(cmd: C, req: Req<C>): Promise<Res<C>> {
  try {
    return await invoke<Res<C>>(cmd, { req });
  } catch (e) {
    const err = e as ApiError | string;
    if (typeof err === "object" && err && "code" in err) throw new CommandError(err.code, err.message);
    throw new CommandError("internal", String(err));
  }
}

/// Every command as a function of its request: `rpc.get_memory({ id })`.
export const rpc = new Proxy({} as { [C in Command]: (req: Req<C>) => Promise<Res<C>> }, {
  get: (_, cmd: string | symbol) => (req: unknown) => call(String(cmd) as Command, req as never),
});

/// The commands under the names the views use.
export const api = {
  status: () => rpc.status(null),
  stats: () => rpc.stats(null),
  /// Listings, searches and memories are of the store as it was at `state.asOf` when the
  /// time scrubber is away from now.
  list: (q: ListQuery) =>
    rpc.list_memories({ filters: q.filter, sort: q.sort, descending: q.descending, offset: q.offset, limit: q.limit, as_of: state.asOf }),
  /// `tuning`: the X-ray's context window and fusion weights (null: the defaults).
  search: (req: Omit<SearchArgs, "as_of">, tuning: Tuning = { window: null, weights: null }) =>
    rpc.search({ search: { ...req, as_of: state.asOf }, window: tuning.window, weights: tuning.weights }),
  searchDefaults: () => rpc.search_defaults(null),
  get: (id: number) => rpc.get_memory({ id, as_of: state.asOf }),
  timeline: () => rpc.timeline(null),
  visibilitySteps: () => rpc.visibility_steps(null),
  history: (id: number) => rpc.memory_history({ id }),
  update: (id: number, update: UpdateFields) => rpc.update_memory({ id, ...update }),
  remove: (id: number, hard: boolean) => rpc.delete_memory({ id, hard }),
  restore: (id: number) => rpc.restore_memory({ id }),
  /// `format` null: the engine detects it from the name and content.
  importText: (name: string, format: ImportFormat | null, content: string) =>
    rpc.import_text({ name, format, content }),
  loadDemo: () => rpc.load_demo(null),
  exportStore: (path: string) => rpc.export_store({ path }),
  cancelJob: (job: number) => rpc.cancel_job({ job }),
  pointAttributes: () => rpc.point_attributes(null),
  actors: () => rpc.actors(null),
  memorySleepHistory: (id: number) => rpc.memory_sleep_history({ id }),
  similar: (id: number, k: number) => rpc.similar({ id, k }).then((r) => r.similar),
  neighbourhood: (seeds: number[], depth: number, limit: number) => rpc.neighbourhood({ seeds, depth, limit }),
  openStore: (path: string) => rpc.open_store({ path }),
  computeLayout: (method: ProjectionMethod, dims: number, full: boolean) => rpc.compute_layout({ method, dims, full }),
  /// The layout now, or (`at`, Unix ms) with the points where they were then.
  layoutData: (method: ProjectionMethod, dims: number, at: number | null = null) =>
    at === null ? rpc.layout_data({ method, dims }) : rpc.layout_as_of({ method, dims, at }),
  clusterRun: (k: number | null) => rpc.cluster_run({ k }),
  clusters: () => rpc.clusters(null),
  clusterMerges: () => rpc.cluster_merges(null),
  liquidDefaults: () => rpc.liquid_defaults(null),
  liquidStatus: () => rpc.liquid_status(null),
  liquidStart: (params: LiquidParams | null) => rpc.liquid_start(params),
  liquidPause: () => rpc.liquid_pause(null),
  liquidStep: (params: LiquidParams | null) => rpc.liquid_step(params),
  liquidSetParams: (params: LiquidParams) => rpc.liquid_set_params(params),
  sleepConfig: () => rpc.sleep_config(null),
  sleepRun: (dryRun: boolean, config: SleepConfig | null, backend: string, force = false, review: Review | null = null) =>
    rpc.sleep_run({ dry_run: dryRun, config, backend, force, review }),
  curate: (action: CurateAction, preview: boolean) => rpc.curate({ action, preview }),
  curateUndo: (id: number) => rpc.curate_undo({ id }),
  curations: (limit: number) => rpc.curations(limit),
  duplicates: (threshold: number) => rpc.duplicates({ threshold, conversation: null, limit: 500 }),
  llmSettings: () => rpc.llm_settings(null),
  setLlmSettings: (baseUrl: string, model: string, apiKey: string | null, timeoutSecs: number) =>
    rpc.set_llm_settings({ base_url: baseUrl, model, api_key: apiKey, timeout_secs: timeoutSecs }),
  sleepHistory: (limit: number) => rpc.sleep_history(limit),
  sleepUndo: (id: number) => rpc.sleep_undo({ id, cascade: false }),
  autoSleepSettings: () => rpc.auto_sleep_settings(null),
  setAutoSleep: (settings: AutoSleepSettings) => rpc.set_auto_sleep(settings),
  goldenList: () => rpc.golden_list(null),
  goldenAdd: (args: GoldenAddArgs) => rpc.golden_add(args),
  goldenRemove: (id: number) => rpc.golden_remove({ id }),
  goldenRun: () => rpc.golden_run(null),
  goldenHistory: (limit: number) => rpc.golden_history({ limit }),
  ledger: (hours: number) => rpc.ledger({ hours }),
  settings: () => rpc.settings(null),
  whatIf: (req: WhatIfRequest) => rpc.what_if(req),
  applySettings: (patch: SettingsPatch) => rpc.apply_settings(patch),
  settingsUndo: (id: number) => rpc.settings_undo(id),
  settingsHistory: (limit: number) => rpc.settings_history(limit),
  serverStatus: () => rpc.server_status(null),
  serverStart: (port: number) => rpc.server_start(port),
  serverStop: () => rpc.server_stop(null),
};

export function onEvent<E extends keyof Events>(name: E, f: (p: Events[E]) => void): Promise<UnlistenFn> {
  return listen<Events[E]>(name, (e) => timed(`event:${name.replace("somna://", "")}`, () => f(e.payload)));
}

export function onProgress(f: (p: ProgressPayload) => void): Promise<UnlistenFn> {
  return onEvent("somna://progress", f);
}

export function onJobDone(f: (p: JobDone) => void): Promise<UnlistenFn> {
  return onEvent("somna://job-done", f);
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

/// The result's type is the job kind's, from the id the job's command returned.
export function waitJob<K extends keyof JobResults>(job: JobId<K>): Promise<JobResults[K]> {
  type T = JobResults[K];
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
