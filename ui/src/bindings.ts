// Generated from the Rust types by ts-rs (src-tauri/src/bindings.rs); do not edit.
// Regenerate: SOMNA_WRITE_BINDINGS=1 cargo test -p somna-app bindings

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type Kind = "episode" | "fact" | "summary" | "schema";

export type State = "active" | "warm" | "cold" | "archived" | "forgotten";

export type Source = "user_input" | "tool_output" | "system" | "external" | "agent_inference";

export type LinkKind = "similar" | "derived_from" | "causal" | "co_access";

export type W5H1 = { who: string | null, what: string | null, when: string | null, where: string | null, why: string | null, how: string | null, };

export type Details = { "type": "none" } | { "type": "summary", key_concepts: Array<string>, themes: Array<string>, relationships: Array<string>, confidence: number, source_episode_ids: Array<number>, } | { "type": "schema", name: string, description: string, core_concepts: Array<string>, related_memory_ids: Array<number>, examples: Array<string>, confidence: number, };

export type Memory = { id: number, kind: Kind, text: string, conversation: string | null, session: string | null, occurred_at: number | null, created_at: number, updated_at: number, importance: number, novelty: number, access_count: number, last_accessed: number | null, state: State, tags: Array<string>, source: Source, l_score: number, metadata: JsonValue, details: Details, 
/**
 * Soft-deleted memories keep everything and can be restored.
 */
deleted_at: number | null, 
/**
 * Tokens of `text` in the model's tokenizer (counted when the text was written).
 */
tokens: number | null, who: string | null, what: string | null, when: string | null, where: string | null, why: string | null, how: string | null, };

export type Link = { src: number, dst: number, kind: LinkKind, score: number, created_at: number, };

export type HistoryEntry = { id: number, memory_id: number, 
/**
 * add, update, delete, restore, hard_delete, state
 */
event: string, 
/**
 * The fields before the change (JSON object of the changed fields), if any.
 */
old_value: JsonValue | null, new_value: JsonValue | null, 
/**
 * Who made the change: "user", "import", "ingest", "sleep:<cycle>", ...
 */
actor: string, cause: string | null, created_at: number, };

export type MemoryDetail = { memory: Memory, links: Array<Link>, history: Array<HistoryEntry>, 
/**
 * Memories this one derives from, transitively (the provenance chain), nearest first.
 */
provenance: Array<Memory>, };

export type MemoryFilter = { 
/**
 * Empty: every kind.
 */
kinds: Array<Kind>, 
/**
 * Empty: every state except `forgotten`.
 */
states: Array<State>, who: string | null, conversation: string | null, 
/**
 * Inclusive range on `occurred_at` (memories without one are excluded when set).
 */
from: number | null, to: number | null, 
/**
 * Soft-deleted memories are hidden unless this is set.
 */
include_deleted: boolean, 
/**
 * Only members of this concept cluster. Checked in SQL only: [`MemoryFilter::matches`]
 * cannot see cluster membership, so searches apply it through the allowed-id set.
 */
cluster: number | null, };

export type SortKey = "id" | "created_at" | "updated_at" | "occurred_at" | "importance" | "access_count" | "last_accessed";

export type ListQuery = { filter: MemoryFilter, sort: SortKey, descending: boolean, offset: number, 
/**
 * 0 means 100.
 */
limit: number, };

export type Page = { total: number, offset: number, memories: Array<Memory>, };

export type MemoryUpdate = { text?: string, who?: string, when?: string, where?: string, why?: string, how?: string, importance?: number, state?: State, tags?: Array<string>, metadata?: JsonValue, };

export type Stats = { db_path: string, memories: number, by_kind: Array<[string, number]>, by_state: Array<[string, number]>, deleted: number, conversations: Array<[string, number]>, links: number, indexed: number, index_tombstones: number, embedding_model: string, dim: number, };

export type Route = "direct" | "pattern" | "causal" | "hybrid";

export type ScoreMode = "context" | "fusion";

export type Weights = { semantic: number, lexical: number, recency: number, actor: number, spatial: number, usage: number, };

export type Budget = { window: number, system_reserve: number, output_reserve: number, conversation_tokens: number, };

export type Signals = { semantic: number, lexical: number, recency: number, actor: number, spatial: number, usage: number, 
/**
 * Best semantic+lexical evidence of the adjacent turns.
 */
neighbour: number, 
/**
 * Reached by graph traversal (causal route): 1 / depth.
 */
graph: number, };

export type Origin = "vector" | "lexical" | "both" | "graph" | "adjacent" | "connected";

export type Hit = { memory: Memory, 
/**
 * 1-based rank by score; connected bubbles have none.
 */
rank: number | null, origin: Origin, signals: Signals, 
/**
 * The fused (or context-mode) score the ranking used.
 */
score: number, mmr_score: number | null, mmr_rank: number | null, tokens: number, packed: boolean, 
/**
 * softmax(q·m/√d) over the packed memories.
 */
attention: number | null, };

export type Timings = { embed_ms: number, vector_ms: number, lexical_ms: number, score_ms: number, pack_ms: number, total_ms: number, };

export type SearchPath = "exact" | "hnsw";

export type SearchQuery = { query: string, k: number, mode: ScoreMode, 
/**
 * Forces a route; `None` lets the router choose.
 */
route: Route | null, filter: MemoryFilter, weights: Weights, budget: Budget, mmr_lambda: number, 
/**
 * Weight of the adjacent-turn signal added to an episode's fused score: a reply is
 * often only understandable with the turn before it.
 */
neighbour_weight: number, 
/**
 * The actor asking, if known (otherwise actors named in the query are used).
 */
actor: string | null, 
/**
 * Time the recency signals are measured from (Unix ms); now if `None`.
 */
as_of: number | null, };

export type SearchResponse = { query: string, route: Route, route_reason: string, mode: ScoreMode, weights: Weights, vector_path: SearchPath, 
/**
 * Actors the query was matched against (from the query text or `actor`).
 */
actors: Array<string>, 
/**
 * The top k, best first.
 */
hits: Array<Hit>, 
/**
 * Connected bubbles of the top results (seed 004), score 0.
 */
connected: Array<Hit>, 
/**
 * The candidates just below the cut, best first (for the retrieval debugger).
 */
near_misses: Array<Hit>, candidates_considered: number, 
/**
 * Ids of the packed context, in MMR order.
 */
context: Array<number>, budget_tokens: number, used_tokens: number, timings: Timings, };

export type ClusterInfo = { id: number, label: string, size: number, 
/**
 * Mean liquid energy of the members.
 */
energy: number, merged_into: number | null, created_at: number, updated_at: number, };

export type ClusterMerge = { id: number, from_id: number, into_id: number, similarity: number, merged_at: number, };

export type GraphNode = { id: number, kind: Kind, who: string | null, 
/**
 * The first 120 characters of the text.
 */
label: string, importance: number, 
/**
 * Hops from the nearest seed (0 for a seed).
 */
depth: number, };

export type GraphEdge = { src: number, dst: number, kind: LinkKind, score: number, };

export type Neighbourhood = { nodes: Array<GraphNode>, edges: Array<GraphEdge>, 
/**
 * True when `limit` stopped the traversal before `depth` was exhausted.
 */
truncated: boolean, };

export type Similar = { id: number, 
/**
 * Cosine similarity of the two memories' embeddings.
 */
similarity: number, memory: Memory, };

export type MemorySleepEvent = { cycle: number, started_at: number, 
/**
 * The cycle's status (completed, undone, …).
 */
status: string, 
/**
 * `changed` (a field), `forgotten`, or `consolidated` (a summary or schema was made
 * from it).
 */
event: "changed" | "forgotten" | "consolidated", field: string | null, old: JsonValue | null, new: JsonValue | null, 
/**
 * The summary or schema created from it, for `consolidated`.
 */
created: number | null, };

export type ApiError = { code: string, message: string, };

export type Status = { state: "opening" | "ready" | "failed", error: ApiError | null, db_path: string, model_dir: string, stats: Stats | null, demo_if_empty: boolean, };

export type ProgressPayload = { job: number, kind: string, stage: string, done: number, total: number, };

export type JobDone = { job: number, kind: string, ok: boolean, result: JsonValue | null, error: ApiError | null, };

export type LlmSettings = { base_url: string, model: string, has_key: boolean, timeout_secs: number, };

export type AutoSleepSettings = { enabled: boolean, 
/**
 * A cycle starts once this many new episodes wait for consolidation.
 */
every: number, 
/**
 * How often the waiting count is checked (seconds).
 */
poll_secs: number, };

export type ServerStatus = { running: boolean, address: string | null, mcp_url: string | null, db_path: string | null, token: string | null, token_file: string, };

export type ExternalChanges = { added: Array<number>, updated: Array<number>, removed: Array<number>, };
