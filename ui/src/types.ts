// Shapes of the engine's serde output (crates/engine: memory.rs, retrieve/mod.rs,
// store/*.rs, engine.rs). Keep in step with the Rust types.

export type Kind = "episode" | "fact" | "summary" | "schema";
export type MemState = "active" | "warm" | "cold" | "archived" | "forgotten";
export type Source = "user_input" | "tool_output" | "system" | "external" | "agent_inference";
export type LinkKind = "similar" | "derived_from" | "causal" | "co_access";
export type Route = "direct" | "pattern" | "causal" | "hybrid";
export type ScoreMode = "context" | "fusion";
export type SortKey =
  | "id" | "created_at" | "updated_at" | "occurred_at" | "importance" | "access_count" | "last_accessed";

export const KINDS: Kind[] = ["episode", "fact", "summary", "schema"];
export const STATES: MemState[] = ["active", "warm", "cold", "archived", "forgotten"];

export type Details =
  | { type: "none" }
  | {
      type: "summary";
      key_concepts: string[];
      themes: string[];
      relationships: string[];
      confidence: number;
      source_episode_ids: number[];
    }
  | {
      type: "schema";
      name: string;
      description: string;
      core_concepts: string[];
      related_memory_ids: number[];
      examples: string[];
      confidence: number;
    };

export interface Memory {
  id: number;
  kind: Kind;
  text: string;
  who: string | null;
  what: string | null;
  when: string | null;
  where: string | null;
  why: string | null;
  how: string | null;
  conversation: string | null;
  session: string | null;
  occurred_at: number | null;
  created_at: number;
  updated_at: number;
  importance: number;
  novelty: number;
  access_count: number;
  last_accessed: number | null;
  state: MemState;
  tags: string[];
  source: Source;
  l_score: number;
  metadata: Record<string, unknown>;
  details: Details;
  deleted_at: number | null;
  tokens: number | null;
}

export interface Link {
  src: number;
  dst: number;
  kind: LinkKind;
  score: number;
  created_at: number;
}

export interface HistoryEntry {
  id: number;
  memory_id: number;
  event: string;
  old_value: Record<string, unknown> | null;
  new_value: Record<string, unknown> | null;
  actor: string;
  cause: string | null;
  created_at: number;
}

export interface MemoryDetail {
  memory: Memory;
  links: Link[];
  history: HistoryEntry[];
  provenance: Memory[];
}

export interface MemoryFilter {
  kinds: Kind[];
  states: MemState[];
  who: string | null;
  conversation: string | null;
  from: number | null;
  to: number | null;
  include_deleted: boolean;
  cluster: number | null;
}

export interface ListQuery {
  filter: MemoryFilter;
  sort: SortKey;
  descending: boolean;
  offset: number;
  limit: number;
}

export interface Page {
  total: number;
  offset: number;
  memories: Memory[];
}

export interface MemoryUpdate {
  text?: string;
  who?: string;
  when?: string;
  where?: string;
  why?: string;
  how?: string;
  importance?: number;
  state?: MemState;
  tags?: string[];
}

export interface Stats {
  db_path: string;
  memories: number;
  by_kind: [string, number][];
  by_state: [string, number][];
  deleted: number;
  conversations: [string, number][];
  links: number;
  indexed: number;
  index_tombstones: number;
  embedding_model: string;
  dim: number;
}

export interface Status {
  state: "opening" | "ready" | "failed";
  error: ApiError | null;
  db_path: string;
  model_dir: string;
  stats: Stats | null;
  demo_if_empty: boolean;
}

export interface ApiError {
  code: string;
  message: string;
}

export interface Weights {
  semantic: number;
  lexical: number;
  recency: number;
  actor: number;
  spatial: number;
  usage: number;
}

export interface Signals extends Weights {
  neighbour: number;
  graph: number;
}

export interface Hit {
  memory: Memory;
  rank: number | null;
  origin: "vector" | "lexical" | "both" | "graph" | "adjacent" | "connected";
  signals: Signals;
  score: number;
  mmr_score: number | null;
  mmr_rank: number | null;
  tokens: number;
  packed: boolean;
  attention: number | null;
}

export interface SearchQuery {
  query: string;
  k: number;
  mode: ScoreMode;
  route: Route | null;
  filter: MemoryFilter;
}

export interface SearchResponse {
  query: string;
  route: Route;
  route_reason: string;
  mode: ScoreMode;
  weights: Weights;
  vector_path: "exact" | "hnsw";
  actors: string[];
  hits: Hit[];
  connected: Hit[];
  near_misses: Hit[];
  candidates_considered: number;
  context: number[];
  budget_tokens: number;
  used_tokens: number;
  timings: {
    embed_ms: number;
    vector_ms: number;
    lexical_ms: number;
    score_ms: number;
    pack_ms: number;
    total_ms: number;
  };
}

export interface ProgressPayload {
  job: number;
  kind: string;
  stage: string;
  done: number;
  total: number;
}

export interface JobDone {
  job: number;
  kind: string;
  ok: boolean;
  result: unknown;
  error: ApiError | null;
}

export function emptyFilter(): MemoryFilter {
  return { kinds: [], states: [], who: null, conversation: null, from: null, to: null, include_deleted: false, cluster: null };
}

export interface MemorySleepEvent {
  cycle: number;
  started_at: number;
  status: string;
  event: "changed" | "forgotten" | "consolidated";
  field: string | null;
  old: unknown;
  new: unknown;
  created: number | null;
}

export interface LlmSettings {
  base_url: string;
  model: string;
  has_key: boolean;
  timeout_secs: number;
}

/// The app's loopback server (src-tauri/src/live.rs ServerStatus).
export interface ServerStatus {
  running: boolean;
  address: string | null;
  mcp_url: string | null;
  db_path: string | null;
  token: string | null;
  token_file: string;
}

/// Memories another process (an agent) wrote, as the app caught up with them.
export interface ExternalChanges {
  added: number[];
  updated: number[];
  removed: number[];
}
