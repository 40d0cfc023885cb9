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
tokens: number | null, 
/**
 * Pinned by a person: a sleep cycle never compresses, decays, archives or forgets it.
 */
pinned: boolean, 
/**
 * For facts: from when it held in the world (the time of the message that said it)
 * and until when (the time of the message that replaced it; `None` while it holds).
 */
valid_from: number | null, valid_to: number | null, 
/**
 * The fact that replaced this one (reconciliation: same subject and attribute, a new
 * value). A superseded fact is kept, hidden from searches and listings by default.
 */
superseded_by: number | null, who: string | null, what: string | null, when: string | null, where: string | null, why: string | null, how: string | null, };

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
provenance: Array<Memory>, 
/**
 * Set when this is the memory as it was at this instant (Unix ms), not as it is.
 */
as_of: number | null, };

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
cluster: number | null, 
/**
 * Facts another fact replaced: hidden (the default), included, only those, or only
 * the stale facts (those and the contested ones: see [`Superseded::Stale`]). Ignored
 * when `valid_at` is set.
 */
superseded: Superseded, 
/**
 * For [`Superseded::Stale`]: how many days without confirmation make a contradicted
 * fact stale (default [`STALE_DAYS`]).
 */
stale_days: number | null, 
/**
 * What held at this event time (Unix ms): facts valid then (superseded or not), and
 * other memories that had occurred by then.
 */
valid_at: number | null, };

export type Superseded = "hide" | "include" | "only" | "stale";

export type SortKey = "id" | "created_at" | "updated_at" | "occurred_at" | "importance" | "access_count" | "last_accessed";

export type ListQuery = { filter: MemoryFilter, sort: SortKey, descending: boolean, offset: number, 
/**
 * 0 means 100.
 */
limit: number, };

export type Page = { total: number, offset: number, memories: Array<Memory>, 
/**
 * Set when this is the listing as it was at this instant (Unix ms).
 */
as_of: number | null, };

export type MemoryUpdate = { text?: string, who?: string, when?: string, where?: string, why?: string, how?: string, importance?: number, state?: State, tags?: Array<string>, metadata?: JsonValue, };

export type Stats = { db_path: string, memories: number, by_kind: Array<[string, number]>, by_state: Array<[string, number]>, deleted: number, conversations: Array<[string, number]>, links: number, 
/**
 * Memories in the vector index (not deleted, embedded).
 */
indexed: number, index_tombstones: number, 
/**
 * Vectors this process holds: all of `indexed` with the engine's own graph; with
 * pgvector's, none until something needs every vector (clustering, projection, sleep).
 */
vectors_held: number, 
/**
 * What answers the larger k-NN searches: the engine's own HNSW graph (`hnsw`, SQLite
 * stores) or the store's pgvector index that every process shares (`pgvector`).
 */
vector_index: SearchPath, embedding_model: string, dim: number, };

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
graph: number, 
/**
 * Dated within the time the question names (or, for a "when" question, dated at all).
 */
temporal: number, 
/**
 * Share of the question's entities named.
 */
entity: number, 
/**
 * Best similarity to one part of a multi-part question.
 */
clause: number, 
/**
 * Reached along a similarity link from a top hit (the link's score).
 */
expand: number, 
/**
 * The share of the query's exact patterns (quoted phrases, code-like tokens) the
 * memory holds; scored on the pattern route.
 */
pattern: number, };

export type Origin = "vector" | "lexical" | "both" | "graph" | "adjacent" | "date" | "connected";

export type EntityKind = "person" | "place" | "organisation" | "title" | "possession" | "name";

export type Reason = { "kind": "date", phrase: string | null, date: string, asked: string, 
/**
 * Days between the two (0 when they overlap).
 */
gap_days: number, } | { "kind": "dated", phrase: string, date: string, } | { "kind": "entity", names: Array<string>, } | { "kind": "answer", entity: EntityKind, names: Array<string>, } | { "kind": "pattern", found: Array<string>, } | { "kind": "link", link: string, from: number | null, };

export type Question = { 
/**
 * It asks for a time ("when", "what year", "how long ago").
 */
asks_when: boolean, 
/**
 * The times it names, each as written and as resolved ("in May 2023 = May 2023").
 */
times: Array<string>, 
/**
 * The entities it names besides the speakers.
 */
entities: Array<string>, };

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
attention: number | null, 
/**
 * Why it matched beyond its scores: dates, entities, links (hits and near misses).
 */
reasons: Array<Reason>, };

export type Timings = { embed_ms: number, vector_ms: number, lexical_ms: number, score_ms: number, pack_ms: number, total_ms: number, };

export type SearchPath = "exact" | "hnsw" | "pgvector";

export type Tuning = { 
/**
 * Memories dated within the time a question names ("in May 2023", "in August").
 */
temporal: number, 
/**
 * For a "when" question: memories that carry a date of their own ("yesterday").
 */
when_prior: number, 
/**
 * The share of the question's entities a memory names.
 */
entity: number, 
/**
 * For a question whose answer is a place or a title: memories that name one.
 */
answer_kind: number, 
/**
 * The best similarity to one part of a multi-part question.
 */
clause: number, 
/**
 * Reached along a similarity link from a top hit.
 */
expand: number, 
/**
 * Taken off a hit's score for every better hit from the same session.
 */
spread: number, 
/**
 * The same, only for questions that ask for several things.
 */
spread_aggregate: number, 
/**
 * 1: embed the question without its question words ("When did", "What is").
 */
strip_question: number, 
/**
 * 1: the lexical query leaves out the names of the people it is about ("… the child of
 * Bob …" searches the other words), whom the actor signal already scores; otherwise a
 * short memory that only names them ("Bob works as a pastry chef") wins on BM25.
 */
lexical_without_actors: number, 
/**
 * 1: the question is embedded without the names of the people it is about. A memory's
 * embedded text starts with its speaker's name, so a short turn that says little
 * ("Jon: Thanks for having my back.") is near any question naming Jon by the name
 * alone; the actor signal already scores who a memory is by.
 */
semantic_without_actors: number, };

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
 * Time the recency signals are measured from (Unix ms); `as_of`, else now, if `None`.
 */
recency_from: number | null, 
/**
 * Searches the store as it was at this instant (Unix ms): the memories that existed
 * then, with their texts, states and fields of then (time travel). Records no access.
 */
as_of: number | null, 
/**
 * Weights of the evidence stages beyond the fusion signals.
 */
tuning: Tuning, };

export type SearchResponse = { query: string, route: Route, route_reason: string, mode: ScoreMode, weights: Weights, vector_path: SearchPath, 
/**
 * Actors the query was matched against (from the query text or `actor`).
 */
actors: Array<string>, 
/**
 * What the search read in the question: whether it asks when, the times and entities
 * it names.
 */
question: Question, 
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
context: Array<number>, budget_tokens: number, used_tokens: number, 
/**
 * Set when the search was of the store as it was at this instant (Unix ms): the hits
 * are historical, as they were then.
 */
as_of: number | null, timings: Timings, };

export type ClusterGroup = { 
/**
 * 1, 2, … in order of the groups' sizes (memories), largest first.
 */
id: number, label: string, };

export type ClusterInfo = { id: number, label: string, size: number, 
/**
 * Mean liquid energy of the members.
 */
energy: number, merged_into: number | null, created_at: number, updated_at: number, 
/**
 * The group of clusters it belongs to, when the clustering made more than
 * [`groups::GROUP_ABOVE`] clusters.
 */
group: ClusterGroup | null, };

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

export type Filters = { 
/**
 * Only these kinds (default: every kind).
 */
kinds: Array<Kind>, 
/**
 * Only these states (default: every state except forgotten).
 */
states: Array<State>, 
/**
 * Only memories about this actor (speaker name).
 */
who?: string | null, 
/**
 * Only memories of this conversation.
 */
conversation?: string | null, 
/**
 * Occurred at or after this time (Unix milliseconds).
 */
from?: number | null, 
/**
 * Occurred at or before this time (Unix milliseconds).
 */
to?: number | null, 
/**
 * Include soft-deleted memories.
 */
include_deleted: boolean, 
/**
 * Only members of this concept cluster.
 */
cluster?: number | null, 
/**
 * Facts another fact replaced: hide (default), include, only those, or stale (those,
 * and facts not confirmed in `stale_days` while a newer fact contradicts them).
 */
superseded?: Superseded | null, 
/**
 * With `superseded: stale`: days without confirmation (1 to 3650, default 30).
 */
stale_days?: number | null, 
/**
 * What held at this event time (Unix milliseconds): facts valid then, superseded or
 * not, and other memories that had occurred by then.
 */
valid_at?: number | null, };

export type ListArgs = { filters?: Filters | null, 
/**
 * Sort key (default id).
 */
sort?: SortKey | null, 
/**
 * Sort descending.
 */
descending: boolean, 
/**
 * Rows to skip.
 */
offset: number, 
/**
 * Page size (1 to 1000, default 100).
 */
limit?: number | null, 
/**
 * List the store as it was at this instant (Unix milliseconds): the memories that
 * existed then, as they were.
 */
as_of?: number | null, };

export type SearchArgs = { 
/**
 * What to look for, in natural language.
 */
query: string, 
/**
 * How many results (1 to 200, default 10).
 */
k?: number | null, 
/**
 * Scoring mode (default fusion).
 */
mode?: ScoreMode | null, 
/**
 * Force a retrieval route (default: chosen from the query).
 */
route?: Route | null, 
/**
 * Restrict the candidates.
 */
filters?: Filters | null, 
/**
 * Search the store as it was at this instant (Unix milliseconds): the memories that
 * existed then, ranked by their texts and states of then. The result says so.
 */
as_of?: number | null, };

export type IdArgs = { 
/**
 * The memory id.
 */
id: number, };

export type GetArgs = { 
/**
 * The memory id.
 */
id: number, 
/**
 * The memory as it was at this instant (Unix milliseconds): its fields then, the
 * links and history up to then. Not found if it did not exist then.
 */
as_of?: number | null, };

export type Tick = { 
/**
 * Unix ms.
 */
at: number, 
/**
 * "import", "sleep", "curation" or "undo".
 */
kind: string, 
/**
 * What happened, for a tooltip ("412 memories added by import", "sleep cycle 3").
 */
label: string, };

export type Timeline = { 
/**
 * First and last recorded change (Unix ms); `None` for an empty store.
 */
first: number | null, last: number | null, ticks: Array<Tick>, };

export type VisibilitySteps = { ids: Array<number>, offsets: Array<number>, at: Array<number>, states: Array<number>, };

export type UpdateArgs = { 
/**
 * The memory id.
 */
id: number, 
/**
 * New text (re-embeds and re-links the memory).
 */
text?: string | null, who?: string | null, when?: string | null, where?: string | null, why?: string | null, how?: string | null, 
/**
 * 0 to 1.
 */
importance?: number | null, state?: State | null, tags?: Array<string> | null, metadata?: JsonValue | null, };

export type UpdateFields = { 
/**
 * New text (re-embeds and re-links the memory).
 */
text?: string | null, who?: string | null, when?: string | null, where?: string | null, why?: string | null, how?: string | null, 
/**
 * 0 to 1.
 */
importance?: number | null, state?: State | null, tags?: Array<string> | null, metadata?: JsonValue | null, };

export type DeleteArgs = { 
/**
 * The memory id.
 */
id: number, 
/**
 * Remove it and its links for good (default: a restorable soft delete).
 */
hard: boolean, };

export type DeleteResult = { id: number, hard: boolean, };

export type ImportFormat = "locomo" | "chat-jsonl" | "json" | "chatgpt" | "claude" | "mem0" | "letta";

export type ImportRequest = { 
/**
 * The file's name (names it in errors; the default conversation of chat JSONL).
 */
name: string, format?: ImportFormat | null, content: string, };

export type AddReport = { messages_stored: number, 
/**
 * Messages whose external id was already stored (a resumed import).
 */
messages_skipped: number, episodes: Array<number>, facts_added: Array<number>, 
/**
 * Facts that duplicated an existing one (NOOP).
 */
facts_unchanged: number, 
/**
 * Stored facts a new fact replaced (a new value, or a contradiction): each is kept,
 * closed (`valid_to`, `superseded_by` the new fact, in `facts_added`).
 */
facts_updated: Array<number>, 
/**
 * Stored facts deleted by an add (none since facts are superseded instead; kept for
 * readers of older reports).
 */
facts_deleted: Array<number>, links_created: number, 
/**
 * Causal links from a turn's bubble to the earlier memory holding its cause.
 */
causal_links: number, 
/**
 * Messages an ingest policy said to skip (stored raw, no memory made).
 */
messages_ignored: number, 
/**
 * Raw messages dropped from the log by the FIFO history cap (their bubbles stay).
 */
messages_pruned: number, 
/**
 * Turns of an imported file with no words and no image: nothing to remember, so not
 * stored.
 */
messages_blank: number, 
/**
 * Conversation summaries written (created or rewritten).
 */
summaries: Array<number>, };

export type ImportOutcome = AddReport | { memories: number, };

export type ClusterUpkeep = { "action": "clustered", k: number, n: number, millis: number, } | { "action": "joined", memories: number, } | { "action": "too_few", memories: number, };

export type ImportDone = { format: ImportFormat, clusters: ClusterUpkeep, } & (AddReport | { memories: number, });

export type PathRequest = { 
/**
 * A file path; a leading `~/` is the home directory.
 */
path: string, };

export type JobRef = { job: number, };

export type SimilarArgs = { 
/**
 * The memory id.
 */
id: number, 
/**
 * How many (1 to 100, default 8).
 */
k?: number | null, };

export type SimilarResult = { id: number, similar: Array<Similar>, };

export type NeighbourhoodRequest = { 
/**
 * Start here; empty: the most linked memories.
 */
seeds: Array<number>, 
/**
 * Hops, 1 to 4.
 */
depth: number, 
/**
 * Nodes, 1 to 2000.
 */
limit: number, };

export type ProjectionMethod = "pca" | "tsne" | "umap";

export type LayoutKey = { method: ProjectionMethod, dims: number, };

export type LayoutAsOf = { method: ProjectionMethod, dims: number, 
/**
 * The instant (Unix ms).
 */
at: number, };

export type LayoutRequest = { method: ProjectionMethod, dims: number, full: boolean, };

export type LayoutSummary = { method: ProjectionMethod, dims: number, points: number, placed_incrementally: number, computed_at: number, };

export type ClusterRequest = { 
/**
 * Clusters to make; left out, chosen from the store's size.
 */
k?: number | null, };

export type ClusterReport = { k: number, n: number, 
/**
 * Sum of squared distances to the centroids.
 */
inertia: number, iterations: number, millis: number, clusters: Array<ClusterInfo>, 
/**
 * The compression backend that named the clusters (e.g. "chat:qwen2.5"); `None` when
 * the labels are the extractive ones (noun phrases and entities, c-TF-IDF).
 */
named_by: string | null, 
/**
 * Something the report should mention (a backend that could not name the clusters).
 */
note: string | null, };

export type LiquidParams = { 
/**
 * A memory moves only when its strongest pull × energy exceeds this.
 */
flow_rate: number, 
/**
 * Clusters whose centroids' cosine similarity exceeds this merge.
 */
merge_threshold: number, 
/**
 * Nearest neighbours per memory.
 */
neighbours: number, w_co_access: number, w_temporal: number, w_semantic: number, 
/**
 * Temporal proximity is exp(−|Δt| / this many hours).
 */
temporal_scale_hours: number, 
/**
 * Energy factor per step.
 */
decay: number, 
/**
 * Energy gained per access.
 */
energy_per_access: number, 
/**
 * Pause between steps of a running [`LiquidLoop`].
 */
interval_ms: number, };

export type LiquidStatus = { running: boolean, params: LiquidParams, };

export type Moved = { memory_id: number, from: number, to: number, };

export type Relabelled = { cluster_id: number, label: string, };

export type LiquidStep = { step: number, moved: Array<Moved>, merged: Array<ClusterMerge>, energy_mean: number, energy_max: number, 
/**
 * Live clusters after the step.
 */
clusters: number, memories: number, 
/**
 * Wall time of the step, excluding a first-step neighbour build.
 */
millis: number, 
/**
 * Time spent building or extending the neighbour cache (0 on a warm step).
 */
prepare_millis: number, 
/**
 * Clusters whose membership changed enough that their label was recomputed.
 */
relabelled: Array<Relabelled>, 
/**
 * On a step that built the neighbour cache: how many lists came from the file saved
 * beside the store (the rest were searched).
 */
reused_neighbour_lists: number, };

export type LiquidState = { running: boolean, };

export type ProgressEvent = { stage: string, done: number, total: number, };

export type ReplayWeights = { recency: number, importance: number, novelty: number, access: number, };

export type SleepConfig = { weights: ReplayWeights, 
/**
 * Recency = e^(−rate × days since the episode occurred).
 */
recency_decay_per_day: number, 
/**
 * Unconsolidated episodes replayed (and consolidated) per cycle, at most.
 */
max_replay: number, 
/**
 * Episodes per summary, at most; a longer session is cut into even windows.
 */
batch_size: number, 
/**
 * A session with fewer unconsolidated episodes waits for a later cycle.
 */
min_batch: number, 
/**
 * A gap this long (minutes) between turns without a session starts a new batch.
 */
gap_minutes: number, 
/**
 * Summaries that share a concept form a schema when there are at least this many.
 */
schema_min_support: number, 
/**
 * New schemas per cycle, at most.
 */
max_schemas: number, 
/**
 * Schemas group summaries of one conversation (false: across the whole store).
 */
schemas_per_conversation: boolean, 
/**
 * Importance halves every this many days without… anything (decay floor below).
 */
importance_half_life_days: number, importance_floor: number, 
/**
 * How importance decays with time in the store (seed 003): exponential (halves every
 * half-life) or power law (halves at the half-life, then ever more slowly).
 */
decay: DecayModel, 
/**
 * The power law's exponent α (seed 003: 1.5); unused by the exponential model.
 */
decay_alpha: number, 
/**
 * Lifecycle by age (days): active < warm < cold < archived.
 */
warm_after_days: number, cold_after_days: number, archive_after_days: number, 
/**
 * A consolidated episode is forgotten when it is cold or archived, never accessed,
 * below this importance and has at most `forget_max_words` content words.
 */
forget_importance: number, forget_max_words: number, 
/**
 * Loss guard: a cycle that would archive or forget more than this share of the live
 * (not yet archived or forgotten) memories is refused before it writes anything,
 * unless forced ([`SleepOptions::force`]).
 */
max_loss_share: number, 
/**
 * "Now" for the cycle (Unix ms); `None`: the clock. Tests and replays set it.
 */
now_ms: number | null, };

export type PhaseReport = { name: string, millis: number, 
/**
 * Whether its transaction committed (always false in a dry run).
 */
committed: boolean, 
/**
 * Phase-specific counts, e.g. candidates, selected, batches, summaries, schemas,
 * decayed, state_changes, forgotten.
 */
counts: { [key in string]: number }, };

export type ProposedMemory = { 
/**
 * `None` in a dry run, and for a created memory that no longer exists.
 */
id: number | null, kind: Kind, text: string, conversation: string | null, session: string | null, details: Details, 
/**
 * Existing memories it derives from.
 */
derived_from: Array<number>, 
/**
 * Other proposals it derives from, by position in `created` (dry runs: a schema over
 * summaries that do not exist yet).
 */
derived_from_proposed: Array<number>, 
/**
 * Which backend wrote it ("extractive", or the fallback note of a failed LLM call).
 */
backend: string, };

export type FieldChange = { memory_id: number, 
/**
 * Sleep cycles: `last_accessed`, `importance` or `state`; curation also `pinned`,
 * `tags` and `deleted_at`.
 */
field: string, old: JsonValue, new: JsonValue, };

export type Change = { "kind": "memories_added", ids: Array<number>, } | { "kind": "memories_updated", ids: Array<number>, } | { "kind": "memories_removed", ids: Array<number>, } | { "kind": "memories_accessed", ids: Array<number>, } | { "kind": "links", ids: Array<number>, } | { "kind": "messages", conversations: Array<string>, } | { "kind": "clusters", ids: Array<number>, } | { "kind": "energies", ids: Array<number>, } | { "kind": "layout", method: string, dims: number, } | { "kind": "sleep_cycles", ids: Array<number>, } | { "kind": "golden" } | { "kind": "ledger" } | { "kind": "settings", keys: Array<string>, };

export type ChangeOrigin = "local" | "external";

export type ChangeEvent = { origin: ChangeOrigin, change: Change, };

export type GoldenOutcome = { query_id: number, query: string, k: number, expected: Array<number>, ranked: Array<number>, recall: number, ndcg: number, previous_recall: number | null, previous_ndcg: number | null, 
/**
 * Lower R@k or NDCG@k than in the previous run.
 */
regressed: boolean, };

export type GoldenRun = { id: number, run_at: number, 
/**
 * manual, before_sleep or after_sleep.
 */
stage: string, cycle_id: number | null, outcomes: Array<GoldenOutcome>, mean_recall: number, mean_ndcg: number, regressions: number, };

export type LossBudget = { live: number, lost: number, 
/**
 * `max_loss_share` of the cycle's config.
 */
limit_share: number, 
/**
 * Run with `force`: the limit did not apply.
 */
forced: boolean, };

export type Review = { 
/**
 * The dry run's "now" (its `config.now_ms`, else its `started_at`).
 */
now_ms: number, 
/**
 * Accepted summaries, each as the ids it derives from (the dry run's `derived_from`).
 */
summaries: Array<Array<number>>, 
/**
 * Accepted schemas, by their text.
 */
schemas: Array<string>, 
/**
 * Memories whose proposed state change (forget phase) is accepted.
 */
states: Array<number>, 
/**
 * Accept the importance decay of the forget phase.
 */
decay: boolean, };

export type SleepReport = { 
/**
 * `None` for a dry run.
 */
id: number | null, trigger: string, 
/**
 * running, completed, cancelled, failed, interrupted (killed; a later cycle found it),
 * refused (the loss guard stopped it before it wrote anything), undone, or dry_run.
 */
status: string, started_at: number, ended_at: number | null, dry_run: boolean, backend: string, phases: Array<PhaseReport>, created: Array<ProposedMemory>, changed: Array<FieldChange>, forgotten: Array<number>, 
/**
 * Fallbacks, skipped batches, recovered cycles, errors.
 */
notes: Array<string>, config: SleepConfig, 
/**
 * The golden-query runs before and after the cycle (when golden queries exist).
 */
golden: Array<GoldenRun>, 
/**
 * The loss guard's figures (absent in reports of cycles from before the guard).
 */
loss: LossBudget | null, };

export type CurateAction = { "op": "merge", ids: Array<number>, text: string | null, } | { "op": "delete", ids: Array<number>, } | { "op": "restore", ids: Array<number>, } | { "op": "pin", ids: Array<number>, } | { "op": "unpin", ids: Array<number>, } | { "op": "tag", ids: Array<number>, add: Array<string>, remove: Array<string>, } | { "op": "set_importance", ids: Array<number>, importance: number, } | { "op": "relabel_cluster", cluster: number, label: string, } | { "op": "move_to_cluster", ids: Array<number>, cluster: number, };

export type MergedMemory = { 
/**
 * `None` in a preview, and once the merge is undone.
 */
id: number | null, kind: Kind, text: string, who: string | null, sources: Array<number>, 
/**
 * Where the text came from: "person", "extractive" (the richest source) or the chat
 * backend's name.
 */
drafted_by: string, };

export type ClusterRelabel = { cluster: number, old: string, 
/**
 * Whether the old label was a person's too (what an undo puts back).
 */
old_by_person: boolean, new: string, };

export type CurationReport = { 
/**
 * The operation log's id; `None` for a preview.
 */
id: number | null, op: string, 
/**
 * preview, done or undone.
 */
status: string, at: number, 
/**
 * Who asked: "user", "app", "cli", "agent", …
 */
by: string, changed: Array<FieldChange>, merged: MergedMemory | null, relabel: ClusterRelabel | null, 
/**
 * Named memories left alone, and why (already pinned, already deleted, …).
 */
notes: Array<string>, };

export type DuplicateGroup = { 
/**
 * Oldest first.
 */
ids: Array<number>, kind: Kind, who: string | null, 
/**
 * The lowest similarity of the pairs that joined the group.
 */
min_similarity: number, texts: Array<string>, };

export type CurateRequest = { action: CurateAction, 
/**
 * Compute what it would change without writing anything.
 */
preview: boolean, };

export type CurateUndoArgs = { id: number, };

export type DuplicatesArgs = { 
/**
 * Cosine similarity at or above which two memories are near-duplicates (0.5 to 1,
 * default 0.92).
 */
threshold?: number | null, 
/**
 * Only within this conversation.
 */
conversation?: string | null, 
/**
 * Groups returned, largest first (1 to 10,000, default 500).
 */
limit?: number | null, };

export type SetLlmSettings = { base_url: string, model: string, api_key?: string | null, 
/**
 * Seconds per request, 1 to 600.
 */
timeout_secs: number, };

export type SleepRunRequest = { dry_run: boolean, 
/**
 * Every knob; left out, the saved settings'.
 */
config?: SleepConfig | null, 
/**
 * "extractive" (default) or "chat".
 */
backend?: string | null, 
/**
 * Run even when the loss guard would refuse it.
 */
force: boolean, 
/**
 * Sleep review: write only these accepted proposals of a dry run.
 */
review?: Review | null, };

export type UndoRequest = { id: number, 
/**
 * Undo the later cycles that touched the same memories first, newest first.
 */
cascade: boolean, };

export type TunedSearchArgs = { search: SearchArgs, 
/**
 * The context window in tokens (2048 to 200000, default 8192); the system and output
 * reserves come out of it.
 */
window?: number | null, 
/**
 * Fusion weights, each within 0..=1, summing to 1.
 */
weights?: Weights | null, };

export type SearchDefaults = { weights: Weights, window: number, system_reserve: number, output_reserve: number, window_min: number, window_max: number, };

export type GoldenQuery = { id: number, query: string, expected: Array<number>, k: number, 
/**
 * Search options as JSON (`filter`, `mode`, `route`), `{}` for the defaults.
 */
options: JsonValue, created_at: number, };

export type GoldenEntry = { golden: GoldenQuery, memories: Array<Memory>, };

export type GoldenAddArgs = { query: string, 
/**
 * Ids of the memories the query must find (at least one; each must exist).
 */
expected: Array<number>, 
/**
 * How deep they must be found (1 to 200, default 10).
 */
k?: number | null, filters?: Filters | null, mode?: ScoreMode | null, route?: Route | null, };

export type GoldenHistoryArgs = { 
/**
 * The latest runs to read (1 to 1000, default 50).
 */
limit?: number | null, };

export type LedgerSummary = { 
/**
 * The operation, or `None` when grouping by period only.
 */
op: string | null, 
/**
 * Start of the period (Unix ms), or `None` when grouping by operation only.
 */
period_start: number | null, count: number, total_ms: number, mean_ms: number, max_ms: number, items: number, llm_calls: number, tokens: number, };

export type LedgerArgs = { 
/**
 * How far back, in hours (1 to 2160, default 24).
 */
hours?: number | null, };

export type LedgerReport = { 
/**
 * Start of the window (Unix ms).
 */
since: number, 
/**
 * When the report was read (Unix ms).
 */
until: number, 
/**
 * One row per operation, largest total time first.
 */
by_op: Array<LedgerSummary>, 
/**
 * One row per hour and operation, oldest hour first.
 */
by_hour: Array<LedgerSummary>, };

export type DecayModel = "exponential" | "power_law";

export type Settings = { sleep: SleepConfig, weights: Weights, };

export type SettingsPatch = { 
/**
 * Importance decay model: exponential or power_law.
 */
decay?: DecayModel | null, 
/**
 * Importance half-life in days (both models halve at it).
 */
half_life_days?: number | null, 
/**
 * The power law's exponent (0 to 10; seed 003: 1.5).
 */
decay_alpha?: number | null, 
/**
 * Importance never decays below this.
 */
importance_floor?: number | null, 
/**
 * Lifecycle: warm from this age (days).
 */
warm_after_days?: number | null, 
/**
 * Lifecycle: cold from this age (days).
 */
cold_after_days?: number | null, 
/**
 * Lifecycle: archived from this age (days).
 */
archive_after_days?: number | null, 
/**
 * A consolidated, cold, never retrieved episode below this importance is forgotten…
 */
forget_importance?: number | null, 
/**
 * …when it has at most this many content words.
 */
forget_max_words?: number | null, 
/**
 * Fusion weights (they must sum to 1).
 */
weights?: Weights | null, };

export type SettingsChange = { 
/**
 * The operation-log row (undo it with this id).
 */
id: number, at: number, 
/**
 * Who applied it ("cli", "app", …).
 */
by: string, 
/**
 * done or undone.
 */
status: string, old: Settings, new: Settings, };

export type WhatIfRequest = { 
/**
 * The settings to try, over the saved ones.
 */
patch: SettingsPatch, 
/**
 * A search to rank both ways (the X-ray's current query).
 */
query?: string | null, 
/**
 * How many hits of that search (1 to 200, default 10).
 */
k?: number | null, 
/**
 * How far ahead to follow the lifecycle, in days (1 to 3650, default 180).
 */
horizon_days?: number | null, 
/**
 * How many transitions and next-cycle changes to list (1 to 100000, default 200);
 * the totals count them all.
 */
limit?: number | null, 
/**
 * "Now" (Unix ms); left out, the clock. Tests and replays set it.
 */
now_ms?: number | null, };

export type StateChange = { memory_id: number, from: State, to: State, };

export type Transition = { memory_id: number, kind: Kind, 
/**
 * The memory's text, cut to 120 characters.
 */
text: string, 
/**
 * The state it leaves (with the proposed settings, else the saved ones).
 */
from: State, to: State, 
/**
 * The first instant (Unix ms) a cycle would make it with the proposed settings; `None`:
 * not within the horizon.
 */
after_at: number | null, 
/**
 * The same with the saved settings.
 */
before_at: number | null, };

export type Bucket = { 
/**
 * Days from now; the first bucket is the next cycle (0 to 0).
 */
from_day: number, to_day: number, before: number, after: number, };

export type LifecycleWhatIf = { 
/**
 * Memories simulated (not deleted, not forgotten, not pinned).
 */
simulated: number, 
/**
 * The state changes the next cycle would make with the proposed settings (the first
 * `limit`, by memory id).
 */
next_cycle: Array<StateChange>, next_cycle_after: number, next_cycle_before: number, 
/**
 * Transitions within the horizon, those the proposed settings move first, then by time
 * (the first `limit`).
 */
transitions: Array<Transition>, transitions_after: number, transitions_before: number, 
/**
 * Transitions the proposed settings make, prevent or move by a day or more.
 */
differing: number, 
/**
 * Counts over time: the next cycle, then even stretches up to the horizon.
 */
series: Array<Bucket>, 
/**
 * How many memories are in each state at the horizon, with each side's settings.
 */
at_horizon_after: { [key in string]: number }, at_horizon_before: { [key in string]: number }, };

export type GoldenWhatIf = { query_id: number, query: string, k: number, expected: Array<number>, 
/**
 * The 1-based rank of each expected memory (`None`: not in the top k).
 */
before_ranks: Array<number | null>, after_ranks: Array<number | null>, before_recall: number, after_recall: number, };

export type GoldenSummary = { queries: Array<GoldenWhatIf>, 
/**
 * Mean R@k over the queries (0 without queries).
 */
mean_recall_before: number, mean_recall_after: number, 
/**
 * Queries whose R@k rises, falls.
 */
improved: number, regressed: number, };

export type SearchWhatIf = { before: SearchResponse, after: SearchResponse, };

export type WhatIfTimings = { snapshot_ms: number, lifecycle_ms: number, 
/**
 * Embedding the queries in one batch (about 0 when every one was embedded lately).
 */
embed_ms: number, 
/**
 * Ranking the golden queries and the current search both ways, on two threads.
 */
golden_ms: number, 
/**
 * Of `golden_ms`, the current search's two rankings (beside the golden queries').
 */
search_ms: number, total_ms: number, };

export type WhatIfReport = { now: number, horizon_days: number, 
/**
 * The saved settings.
 */
before: Settings, 
/**
 * The saved settings with the patch.
 */
after: Settings, lifecycle: LifecycleWhatIf, golden: GoldenSummary, search: SearchWhatIf | null, timings: WhatIfTimings, };

/** Every command: its request (`req`) and response types. */
export type Rpc = {
  status: { req: null; res: Status };
  stats: { req: null; res: Stats };
  list_memories: { req: ListArgs; res: Page };
  search: { req: TunedSearchArgs; res: SearchResponse };
  get_memory: { req: GetArgs; res: MemoryDetail };
  memory_history: { req: IdArgs; res: Array<HistoryEntry> };
  update_memory: { req: UpdateArgs; res: Memory };
  delete_memory: { req: DeleteArgs; res: DeleteResult };
  restore_memory: { req: IdArgs; res: Memory };
  import_text: { req: ImportRequest; res: JobId<"import"> };
  load_demo: { req: null; res: JobId<"import"> };
  export_store: { req: PathRequest; res: number };
  cancel_job: { req: JobRef; res: boolean };
  similar: { req: SimilarArgs; res: SimilarResult };
  neighbourhood: { req: NeighbourhoodRequest; res: Neighbourhood };
  actors: { req: null; res: Array<string> };
  open_store: { req: PathRequest; res: JobId<"open"> };
  memory_sleep_history: { req: IdArgs; res: Array<MemorySleepEvent> };
  timeline: { req: null; res: Timeline };
  visibility_steps: { req: null; res: VisibilitySteps };
  compute_layout: { req: LayoutRequest; res: JobId<"layout"> };
  cluster_run: { req: ClusterRequest; res: JobId<"cluster"> };
  clusters: { req: null; res: Array<ClusterInfo> };
  cluster_merges: { req: null; res: Array<ClusterMerge> };
  liquid_defaults: { req: null; res: LiquidParams };
  liquid_status: { req: null; res: LiquidStatus };
  liquid_start: { req: LiquidParams | null; res: null };
  liquid_pause: { req: null; res: null };
  liquid_step: { req: LiquidParams | null; res: null };
  liquid_set_params: { req: LiquidParams; res: null };
  sleep_config: { req: null; res: SleepConfig };
  llm_settings: { req: null; res: LlmSettings | null };
  set_llm_settings: { req: SetLlmSettings; res: null };
  sleep_run: { req: SleepRunRequest; res: JobId<"sleep"> };
  sleep_history: { req: number; res: Array<SleepReport> };
  sleep_undo: { req: UndoRequest; res: JobId<"sleep-undo"> };
  curate: { req: CurateRequest; res: CurationReport };
  curate_undo: { req: CurateUndoArgs; res: CurationReport };
  curations: { req: number; res: Array<CurationReport> };
  duplicates: { req: DuplicatesArgs; res: Array<DuplicateGroup> };
  auto_sleep_settings: { req: null; res: AutoSleepSettings };
  set_auto_sleep: { req: AutoSleepSettings; res: null };
  settings: { req: null; res: Settings };
  what_if: { req: WhatIfRequest; res: WhatIfReport };
  apply_settings: { req: SettingsPatch; res: SettingsChange };
  settings_undo: { req: number; res: SettingsChange };
  settings_history: { req: number; res: Array<SettingsChange> };
  server_status: { req: null; res: ServerStatus };
  server_start: { req: number; res: ServerStatus };
  server_stop: { req: null; res: ServerStatus };
  golden_list: { req: null; res: Array<GoldenEntry> };
  golden_add: { req: GoldenAddArgs; res: GoldenQuery };
  golden_remove: { req: IdArgs; res: null };
  golden_run: { req: null; res: JobId<"golden"> };
  golden_history: { req: GoldenHistoryArgs; res: Array<GoldenRun> };
  ledger: { req: LedgerArgs; res: LedgerReport };
  search_defaults: { req: null; res: SearchDefaults };
  point_attributes: { req: null; res: ArrayBuffer };
  layout_data: { req: LayoutKey; res: ArrayBuffer };
  layout_as_of: { req: LayoutAsOf; res: ArrayBuffer };
};

/** Every event the shell emits: its name and payload type. */
export type Events = {
  "somna://changed": ChangeEvent;
  "somna://progress": ProgressPayload;
  "somna://job-done": JobDone;
  "somna://opening": ProgressEvent;
  "somna://ready": null;
  "somna://open-failed": ApiError;
  "somna://liquid-step": LiquidStep;
  "somna://liquid-state": LiquidState;
  "somna://liquid-error": ApiError;
};

/** A job's id, marked with its kind. */
export type JobId<K extends keyof JobResults> = number & { readonly __job?: K };

/** Every kind of job: the type of its result. */
export type JobResults = {
  "import": ImportDone;
  "layout": LayoutSummary;
  "cluster": ClusterReport;
  "sleep": SleepReport;
  "sleep-undo": SleepReport;
  "open": string;
  "golden": GoldenRun;
};
