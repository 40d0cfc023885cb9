//! `eval memory`: seed 000's evaluation of five memory methods over the same engine and the
//! same LoCoMo-format conversations, and its two tables.
//!
//! Methods: no memory; plain vector RAG (cosine top-k over the raw turns); episodic only
//! (fusion retrieval over the turns, packed); episodic + summarization (turns and the
//! summaries of one sleep cycle, nothing forgotten, no schemas); the full sleep pipeline
//! (every kind after one cycle: summaries, schemas, decay and forgetting, fusion retrieval,
//! context packing).
//!
//! Every method hands an agent a *packed context* per question. Without an LLM the metrics
//! are computed on that context; with an OpenAI-compatible endpoint the context is also
//! turned into an answer, which is judged against the gold answer. Gold answers and evidence
//! are read only to score: retrieval sees the question text (or its cue words) alone. The
//! metric definitions are in the README ("Evaluating memory methods").

use super::locomo::{normalize_dia_ids, Question};
use super::metrics::ndcg_at_k;
use crate::events::Job;
use crate::ingest::parse_locomo;
use crate::memory::{Details, Kind, Memory, State};
use crate::retrieve::SearchQuery;
use crate::sleep::chat::{self, ChatConfig};
use crate::sleep::{SleepConfig, SleepOptions};
use crate::store::MemoryFilter;
use crate::{AddOptions, Error, Result, Somna};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Seed 000's baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Nothing is remembered: the context is empty.
    NoMemory,
    /// Cosine top-k over the raw turns, packed in rank order.
    Rag,
    /// The engine's fusion retrieval and packing over the turns only.
    Episodic,
    /// Turns and sleep summaries (no schemas, nothing forgotten).
    Summaries,
    /// Everything one sleep cycle leaves: turns, facts, summaries, schemas, decay.
    Sleep,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::NoMemory,
        Method::Rag,
        Method::Episodic,
        Method::Summaries,
        Method::Sleep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::NoMemory => "no_memory",
            Method::Rag => "rag",
            Method::Episodic => "episodic",
            Method::Summaries => "summaries",
            Method::Sleep => "sleep",
        }
    }

    /// Whether a sleep cycle changes what the method retrieves.
    pub fn sleeps(self) -> bool {
        matches!(self, Method::Summaries | Method::Sleep)
    }
}

impl std::str::FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown method {s:?}; expected no_memory, rag, episodic, summaries or sleep"
                ))
            })
    }
}

#[derive(Debug, Clone)]
pub struct MemoryEvalOptions {
    pub methods: Vec<Method>,
    /// Items retrieved per question (the top k that is ranked and packed).
    pub k: usize,
    /// At most this many questions per conversation (in file order); `None`: all.
    pub max_questions: Option<usize>,
    /// Answer and judge with this endpoint (the LLM setting).
    pub llm: Option<ChatConfig>,
    /// The cycle's configuration (`now_ms` is set to the data's last turn when `None`).
    pub sleep: SleepConfig,
}

impl Default for MemoryEvalOptions {
    fn default() -> Self {
        Self {
            methods: Method::ALL.to_vec(),
            k: 10,
            max_questions: None,
            llm: None,
            sleep: SleepConfig::default(),
        }
    }
}

/// What scoring may read of a question: never shown to a retriever.
#[derive(Debug, Clone)]
pub struct GoldAnswer {
    /// `None` for adversarial questions (LoCoMo category 5): the conversation holds no answer.
    pub answer: Option<String>,
    pub evidence: HashSet<String>,
}

/// A question with its gold answer and the conversation's session count.
#[derive(Debug, Clone)]
pub struct EvalQuestion {
    pub question: Question,
    pub gold: GoldAnswer,
    pub sessions: u32,
}

impl EvalQuestion {
    /// Answerable: a gold answer and labelled evidence.
    pub fn answerable(&self) -> bool {
        self.question.category != 5 && self.gold.answer.is_some() && !self.gold.evidence.is_empty()
    }

    /// The sessions its evidence lies in.
    pub fn evidence_sessions(&self) -> HashSet<u32> {
        self.gold
            .evidence
            .iter()
            .filter_map(|d| session_of(d))
            .collect()
    }

    /// Answerable with evidence in two or more sessions.
    pub fn multi_session(&self) -> bool {
        self.answerable() && self.evidence_sessions().len() >= 2
    }

    /// Answerable with every evidence turn in the older half of the conversation's sessions.
    pub fn delayed(&self) -> bool {
        let half = self.sessions.div_ceil(2);
        let s = self.evidence_sessions();
        self.answerable() && !s.is_empty() && s.iter().all(|&n| n <= half)
    }
}

/// "D8:6" → 8.
fn session_of(dia: &str) -> Option<u32> {
    dia.strip_prefix('D')?.split(':').next()?.parse().ok()
}

/// Reads the questions, gold answers and evidence of a LoCoMo-format file.
pub fn load(file: &Path, max_per_conversation: Option<usize>) -> Result<Vec<EvalQuestion>> {
    let text = crate::ingest::read_text(file)?;
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    let samples = doc.as_array().ok_or_else(|| Error::Import {
        file: file.display().to_string(),
        location: "top level".into(),
        problem: "expected an array of LoCoMo samples".into(),
    })?;
    let mut out = Vec::new();
    for sample in samples {
        let conv = sample["sample_id"].as_str().unwrap_or_default().to_string();
        let sessions = sample["conversation"]
            .as_object()
            .map(|c| {
                c.keys()
                    .filter_map(|k| k.strip_prefix("session_"))
                    .filter_map(|n| n.parse::<u32>().ok())
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        let qa = sample["qa"].as_array().into_iter().flatten().enumerate();
        for (i, qa) in qa.take(max_per_conversation.unwrap_or(usize::MAX)) {
            let category = qa["category"].as_u64().unwrap_or(0) as u32;
            let answer = match &qa["answer"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            }
            .filter(|a| !a.trim().is_empty());
            out.push(EvalQuestion {
                question: Question {
                    conversation: conv.clone(),
                    index: i,
                    text: qa["question"].as_str().unwrap_or_default().to_string(),
                    category,
                },
                gold: GoldAnswer {
                    answer: if category == 5 { None } else { answer },
                    evidence: qa["evidence"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.as_str())
                        .flat_map(normalize_dia_ids)
                        .collect(),
                },
                sessions,
            });
        }
    }
    Ok(out)
}

/// Lowercase content words (stopwords and one-letter words dropped).
pub fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| {
            !w.is_empty()
                && (w.len() > 1 || w.chars().all(|c| c.is_ascii_digit()))
                && !crate::text::is_stopword(w)
        })
        .collect()
}

/// The cue of the cue-based recall probe: the question's content words only.
pub fn cue(question: &str) -> String {
    let words = content_words(question);
    if words.is_empty() {
        question.to_string()
    } else {
        words.join(" ")
    }
}

/// Where a memory comes from in the conversation: the turns (dia ids) it is, or derives from,
/// and the words of those turns (text, speaker, date).
#[derive(Debug, Clone, Default)]
struct Provenance {
    dia: HashSet<String>,
    words: HashSet<String>,
}

/// One packed item as the agent sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContextItem {
    pub id: i64,
    pub kind: Kind,
    pub text: String,
    pub tokens: usize,
}

/// What a method returned for one query.
#[derive(Debug, Clone, Default)]
struct Retrieved {
    ranked: Vec<i64>,
    packed: Vec<ContextItem>,
}

/// The context text handed to an agent: one line per packed item, with date and speaker.
pub fn render_context(items: &[ContextItem]) -> String {
    items
        .iter()
        .map(|i| i.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_item(m: &Memory) -> String {
    let date = m
        .occurred_at
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%-d %B %Y").to_string());
    let who = m.w5h1.who.as_deref();
    let head = match (m.kind, date, who) {
        (Kind::Episode | Kind::Fact, Some(d), Some(w)) => format!("[{d}] {w}: "),
        (Kind::Episode | Kind::Fact, None, Some(w)) => format!("{w}: "),
        (Kind::Summary, Some(d), _) => format!("[summary, {d}] "),
        (Kind::Summary, None, _) => "[summary] ".to_string(),
        (Kind::Schema, _, _) => "[pattern] ".to_string(),
        (_, Some(d), None) => format!("[{d}] "),
        _ => String::new(),
    };
    format!("{head}{}", m.text)
}

/// The no-LLM scores of one (method, phase, query) on one question.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContextScores {
    /// Share of the gold answer's content words present in the packed context.
    pub answer_recall: f64,
    /// Share of evidence turns covered by the top k items (a summary or schema covers the
    /// turns it derives from).
    pub recall_at_k: f64,
    pub ndcg_at_k: f64,
    /// Share of evidence turns covered by the packed context.
    pub context_recall: f64,
    /// Share of the evidence sessions with a covered evidence turn in the packed context.
    pub session_coverage: f64,
    /// Every evidence turn covered by the packed context.
    pub all_evidence: bool,
    /// A packed schema covers an evidence turn.
    pub schema_evidence: bool,
    pub packed: usize,
    pub packed_tokens: usize,
    /// Packed items whose content words are mostly (< 80 %) absent from the turns they
    /// derive from, or that derive from no turn of the conversation.
    pub unsupported: usize,
}

/// What the LLM made of a context.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LlmAnswer {
    pub answer: String,
    /// correct, wrong, abstained (UNKNOWN) or asserted (an answer to an unanswerable question).
    pub verdict: String,
}

impl LlmAnswer {
    fn correct(&self) -> bool {
        self.verdict == "correct"
    }
    /// A confident answer that is wrong, or any answer to an unanswerable question.
    fn hallucinated(&self) -> bool {
        self.verdict == "wrong" || self.verdict == "asserted"
    }
}

/// One question under one method, phase and query form.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuestionResult {
    pub method: Method,
    /// "before" or "after" the sleep cycle.
    pub phase: String,
    /// "question" (the full question is the query) or "cue" (its content words).
    pub query: String,
    pub conversation: String,
    pub question_index: usize,
    pub category: u32,
    pub ranked_ids: Vec<i64>,
    pub packed_ids: Vec<i64>,
    pub scores: ContextScores,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmAnswer>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Table1Row {
    pub method: Method,
    /// "context" (no LLM: metrics on the packed context) or "llm" (judged answers).
    pub setting: String,
    pub long_horizon_qa: f64,
    pub multi_session_continuity: f64,
    pub hallucination_rate: f64,
    /// Retrieval on the answerable questions (evidence turns in the top k; NDCG@k).
    pub recall_at_k: f64,
    pub ndcg_at_k: f64,
    pub questions: usize,
    pub multi_session_questions: usize,
    pub mean_packed_items: f64,
    pub mean_packed_tokens: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Table2Row {
    pub method: Method,
    pub setting: String,
    pub probe: String,
    pub before: f64,
    pub after: f64,
    pub delta: f64,
    pub questions: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LlmUsage {
    pub calls: u64,
    pub cached: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SleepSummary {
    pub cycle_id: Option<i64>,
    pub millis: u64,
    pub summaries: usize,
    pub schemas: usize,
    pub forgotten: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryEvalReport {
    pub data: String,
    pub started_at: i64,
    pub k: usize,
    pub methods: Vec<Method>,
    pub llm_model: Option<String>,
    pub questions: usize,
    pub answerable: usize,
    pub multi_session: usize,
    pub delayed: usize,
    pub adversarial: usize,
    pub sleep: Option<SleepSummary>,
    pub table1: Vec<Table1Row>,
    pub table2: Vec<Table2Row>,
    pub llm_usage: LlmUsage,
    pub per_question: Vec<QuestionResult>,
}

/// Support threshold of a packed item (share of its content words found in its turns).
const SUPPORTED: f64 = 0.8;

/// Imports `data` into `engine` (an empty store), evaluates every method before and after one
/// sleep cycle, and returns both tables with every per-question result. Progress stages:
/// "import", "before", the sleep phases, "after"; cancellable between questions.
pub fn run(
    engine: &Somna,
    data: &Path,
    opts: &MemoryEvalOptions,
    job: &Job,
) -> Result<MemoryEvalReport> {
    if opts.k == 0 || opts.k > 1000 {
        return Err(Error::InvalidInput("k must be between 1 and 1000".into()));
    }
    if opts.methods.is_empty() {
        return Err(Error::InvalidInput("no method to evaluate".into()));
    }
    let started_at = crate::store::now_ms();
    let questions = load(data, opts.max_questions)?;
    let batches = parse_locomo(data)?;
    engine.import(
        &batches,
        &AddOptions {
            actor: "eval".into(),
            ..Default::default()
        },
        job,
    )?;
    let as_of = last_turns(engine)?;
    let mut ev = Evaluator {
        engine,
        k: opts.k,
        llm: opts.llm.as_ref(),
        as_of: &as_of,
        provenance: HashMap::new(),
        answers: HashMap::new(),
        usage: LlmUsage::default(),
    };
    let mut methods = opts.methods.clone();
    methods.sort();
    methods.dedup();
    let mut results = Vec::new();
    let total = (methods.len() * questions.len()) as u64;
    for (mi, &m) in methods.iter().enumerate() {
        for (qi, q) in questions.iter().enumerate() {
            job.cancel.check()?;
            results.extend(ev.evaluate(m, "before", q)?);
            job.report("before", (mi * questions.len() + qi + 1) as u64, total);
        }
    }
    let sleeping: Vec<Method> = methods.iter().copied().filter(|m| m.sleeps()).collect();
    let mut sleep = None;
    if !sleeping.is_empty() {
        let mut config = opts.sleep.clone();
        if config.now_ms.is_none() {
            config.now_ms = as_of.values().copied().max();
        }
        let t = std::time::Instant::now();
        let rep = engine.sleep(
            &SleepOptions {
                dry_run: false,
                trigger: "eval".into(),
                config,
                // The eval measures the cycle its settings describe; the guard is for stores
                // people keep.
                force: true,
                review: None,
            },
            job,
        )?;
        let of = |k: Kind| rep.created.iter().filter(|c| c.kind == k).count();
        sleep = Some(SleepSummary {
            cycle_id: rep.id,
            millis: t.elapsed().as_millis() as u64,
            summaries: of(Kind::Summary),
            schemas: of(Kind::Schema),
            forgotten: rep.forgotten.len(),
        });
        let total = (sleeping.len() * questions.len()) as u64;
        for (mi, &m) in sleeping.iter().enumerate() {
            for (qi, q) in questions.iter().enumerate() {
                job.cancel.check()?;
                results.extend(ev.evaluate(m, "after", q)?);
                job.report("after", (mi * questions.len() + qi + 1) as u64, total);
            }
        }
    }
    let settings: &[&str] = if opts.llm.is_some() {
        &["context", "llm"]
    } else {
        &["context"]
    };
    let mut table1 = Vec::new();
    let mut table2 = Vec::new();
    for &m in &methods {
        for &s in settings {
            table1.push(table1_row(m, s, &results, &questions));
            table2.extend(table2_rows(m, s, &results, &questions));
        }
    }
    Ok(MemoryEvalReport {
        data: data.display().to_string(),
        started_at,
        k: opts.k,
        methods,
        llm_model: opts.llm.as_ref().map(|c| c.model.clone()),
        questions: questions.len(),
        answerable: questions.iter().filter(|q| q.answerable()).count(),
        multi_session: questions.iter().filter(|q| q.multi_session()).count(),
        delayed: questions.iter().filter(|q| q.delayed()).count(),
        adversarial: questions
            .iter()
            .filter(|q| q.question.category == 5)
            .count(),
        sleep,
        table1,
        table2,
        llm_usage: ev.usage,
        per_question: results,
    })
}

/// The last turn's time per conversation: "now" for recency, as an agent at the end of it.
fn last_turns(engine: &Somna) -> Result<HashMap<String, i64>> {
    engine.with_store(|s| Ok(s.read().last_turn_times()?.into_iter().collect()))
}

struct Evaluator<'a> {
    engine: &'a Somna,
    k: usize,
    llm: Option<&'a ChatConfig>,
    as_of: &'a HashMap<String, i64>,
    provenance: HashMap<i64, Provenance>,
    /// LLM replies by (system, user) prompt: an identical context is answered once.
    answers: HashMap<(String, String), String>,
    usage: LlmUsage,
}

impl Evaluator<'_> {
    /// The results of one method on one question: the full question, and (for answerable
    /// questions) the cue.
    fn evaluate(
        &mut self,
        m: Method,
        phase: &str,
        q: &EvalQuestion,
    ) -> Result<Vec<QuestionResult>> {
        let mut out = Vec::new();
        let queries: &[&str] = if q.answerable() {
            &["question", "cue"]
        } else {
            &["question"]
        };
        for &form in queries {
            let text = if form == "cue" {
                cue(&q.question.text)
            } else {
                q.question.text.clone()
            };
            let r = self.retrieve(m, phase, &q.question.conversation, &text)?;
            let scores = self.score(&r, q)?;
            let llm = match self.llm {
                Some(cfg) => Some(self.answer(cfg, q, &r.packed)?),
                None => None,
            };
            out.push(QuestionResult {
                method: m,
                phase: phase.into(),
                query: form.into(),
                conversation: q.question.conversation.clone(),
                question_index: q.question.index,
                category: q.question.category,
                ranked_ids: r.ranked,
                packed_ids: r.packed.iter().map(|i| i.id).collect(),
                scores,
                llm,
            });
        }
        Ok(out)
    }

    fn retrieve(&self, m: Method, phase: &str, conv: &str, text: &str) -> Result<Retrieved> {
        let conversation = Some(conv.to_string());
        let filter = match m {
            Method::NoMemory => return Ok(Retrieved::default()),
            Method::Rag => return self.rag(conv, text),
            Method::Episodic => MemoryFilter {
                kinds: vec![Kind::Episode],
                states: State::ALL.to_vec(),
                conversation,
                ..Default::default()
            },
            // Before the cycle there are no summaries: the turns alone.
            Method::Summaries => MemoryFilter {
                kinds: if phase == "before" {
                    vec![Kind::Episode]
                } else {
                    vec![Kind::Episode, Kind::Summary]
                },
                states: State::ALL.to_vec(),
                conversation,
                ..Default::default()
            },
            Method::Sleep => MemoryFilter {
                conversation,
                ..Default::default()
            },
        };
        let mut sq = SearchQuery::new(text);
        sq.k = self.k;
        sq.filter = filter;
        sq.recency_from = self.as_of.get(conv).copied();
        let resp = self.engine.search_readonly(&sq)?;
        let by_id: HashMap<i64, &Memory> =
            resp.hits.iter().map(|h| (h.memory.id, &h.memory)).collect();
        let tokens: HashMap<i64, usize> =
            resp.hits.iter().map(|h| (h.memory.id, h.tokens)).collect();
        Ok(Retrieved {
            ranked: resp.hits.iter().map(|h| h.memory.id).collect(),
            packed: resp
                .context
                .iter()
                .filter_map(|id| {
                    by_id.get(id).map(|m| ContextItem {
                        id: *id,
                        kind: m.kind,
                        text: render_item(m),
                        tokens: tokens[id],
                    })
                })
                .collect(),
        })
    }

    /// Plain vector RAG: the k turns nearest the query by cosine, packed in rank order
    /// while they fit the default budget.
    fn rag(&self, conv: &str, text: &str) -> Result<Retrieved> {
        let qvec = self
            .engine
            .embedder()
            .embed(&[text])?
            .pop()
            .ok_or_else(|| Error::Embedding("no query vector".into()))?;
        let filter = MemoryFilter {
            kinds: vec![Kind::Episode],
            states: State::ALL.to_vec(),
            conversation: Some(conv.to_string()),
            ..Default::default()
        };
        let (ids, memories) = self.engine.with_store(|s| {
            let read = s.read();
            let scope = read.filter_ids(&filter)?;
            let allowed: HashSet<i64> = scope.iter().copied().collect();
            let allow = |id: i64| allowed.contains(&id);
            let hits = self
                .engine
                .index_read()
                .search(&qvec, self.k, Some(&allow), Some(&scope))
                .0;
            let ids: Vec<i64> = hits.iter().map(|h| h.0).collect();
            let memories = read.get_memories(&ids)?;
            Ok((ids, memories))
        })?;
        let by_id: HashMap<i64, Memory> = memories.into_iter().map(|m| (m.id, m)).collect();
        let mut budget = crate::retrieve::Budget::default().available();
        let mut packed = Vec::new();
        for id in &ids {
            let Some(m) = by_id.get(id) else { continue };
            let tokens = m
                .tokens
                .map_or_else(
                    || self.engine.embedder().count_tokens(&m.text),
                    |t| t as usize,
                )
                .max(1);
            if tokens > budget {
                break;
            }
            budget -= tokens;
            packed.push(ContextItem {
                id: *id,
                kind: m.kind,
                text: render_item(m),
                tokens,
            });
        }
        Ok(Retrieved {
            ranked: ids,
            packed,
        })
    }

    /// The turns a memory is or derives from (summaries through their source episodes,
    /// schemas through their summaries), cached.
    fn provenance(&mut self, id: i64) -> Result<Provenance> {
        if let Some(p) = self.provenance.get(&id) {
            return Ok(p.clone());
        }
        let mut p = Provenance::default();
        let mut seen = HashSet::new();
        let mut frontier = vec![id];
        while let Some(cur) = frontier.pop() {
            if !seen.insert(cur) {
                continue;
            }
            let Some(m) = self.engine.with_store(|s| s.read().get_memory(cur))? else {
                continue;
            };
            match &m.details {
                Details::Summary {
                    source_episode_ids, ..
                } => frontier.extend(source_episode_ids),
                Details::Schema {
                    related_memory_ids, ..
                } => frontier.extend(related_memory_ids),
                Details::None => {
                    if let Some(d) = m.metadata.get("dia_id").and_then(|d| d.as_str()) {
                        p.dia.extend(normalize_dia_ids(d));
                        p.words.extend(content_words(&render_item(&m)));
                    }
                }
            }
        }
        self.provenance.insert(id, p.clone());
        Ok(p)
    }

    fn score(&mut self, r: &Retrieved, q: &EvalQuestion) -> Result<ContextScores> {
        let evidence = &q.gold.evidence;
        let mut s = ContextScores {
            packed: r.packed.len(),
            packed_tokens: r.packed.iter().map(|i| i.tokens).sum(),
            ..Default::default()
        };
        // Ranking: an item is relevant when it covers an evidence turn no earlier item did.
        let mut covered = HashSet::new();
        let mut gains = Vec::new();
        for id in r.ranked.iter().take(self.k) {
            let p = self.provenance(*id)?;
            let new: Vec<&String> = p
                .dia
                .iter()
                .filter(|d| evidence.contains(*d) && !covered.contains(*d))
                .collect();
            gains.push(if new.is_empty() {
                String::new()
            } else {
                format!("r{id}")
            });
            covered.extend(new.into_iter().cloned());
        }
        if !evidence.is_empty() {
            s.recall_at_k = covered.len() as f64 / evidence.len() as f64;
            let relevant: HashSet<String> =
                gains.iter().filter(|g| !g.is_empty()).cloned().collect();
            // ndcg_at_k's ideal is |relevant| items at the top; here the ideal is one new
            // evidence turn per rank, so pad the relevant set with the uncoverable rest.
            let mut ideal = relevant.clone();
            for i in 0..evidence.len().saturating_sub(relevant.len()) {
                ideal.insert(format!("missing{i}"));
            }
            s.ndcg_at_k = ndcg_at_k(&gains, &ideal, self.k);
        }
        // The packed context.
        let mut in_context = HashSet::new();
        let mut context_words = HashSet::new();
        for item in &r.packed {
            let p = self.provenance(item.id)?;
            let words = content_words(&item.text);
            context_words.extend(words.iter().cloned());
            let found = words.iter().filter(|w| p.words.contains(*w)).count();
            let support = if words.is_empty() {
                1.0
            } else {
                found as f64 / words.len() as f64
            };
            if p.dia.is_empty() || support < SUPPORTED {
                s.unsupported += 1;
            }
            let hits: Vec<&String> = p.dia.iter().filter(|d| evidence.contains(*d)).collect();
            if item.kind == Kind::Schema && !hits.is_empty() {
                s.schema_evidence = true;
            }
            in_context.extend(hits.into_iter().cloned());
        }
        if !evidence.is_empty() {
            s.context_recall = in_context.len() as f64 / evidence.len() as f64;
            s.all_evidence = in_context.len() == evidence.len();
            let sessions = q.evidence_sessions();
            let hit_sessions: HashSet<u32> =
                in_context.iter().filter_map(|d| session_of(d)).collect();
            if !sessions.is_empty() {
                s.session_coverage = hit_sessions.len() as f64 / sessions.len() as f64;
            }
        }
        if let Some(a) = &q.gold.answer {
            let want: HashSet<String> = content_words(a).into_iter().collect();
            if !want.is_empty() {
                s.answer_recall = want.iter().filter(|w| context_words.contains(*w)).count() as f64
                    / want.len() as f64;
            }
        }
        Ok(s)
    }

    /// One chat completion, cached by prompt; counts calls and tokens.
    fn chat(&mut self, cfg: &ChatConfig, system: &str, user: &str) -> Result<String> {
        let key = (system.to_string(), user.to_string());
        if let Some(a) = self.answers.get(&key) {
            self.usage.cached += 1;
            return Ok(a.clone());
        }
        let started = std::time::Instant::now();
        let reply = chat::complete(cfg, system, user)?;
        let tokens = reply.prompt_tokens.unwrap_or(0) + reply.completion_tokens.unwrap_or(0);
        self.engine.record(
            "llm",
            started,
            crate::ledger::Cost {
                items: 1,
                llm_calls: 1,
                tokens,
            },
        );
        self.usage.calls += 1;
        self.usage.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        self.usage.completion_tokens += reply.completion_tokens.unwrap_or(0);
        self.answers.insert(key, reply.content.clone());
        Ok(reply.content)
    }

    /// Answers from the context, then judges the answer against the gold answer.
    fn answer(
        &mut self,
        cfg: &ChatConfig,
        q: &EvalQuestion,
        ctx: &[ContextItem],
    ) -> Result<LlmAnswer> {
        let context = if ctx.is_empty() {
            "(no memories)".to_string()
        } else {
            render_context(ctx)
        };
        let user = format!("Memories:\n{context}\n\nQuestion: {}", q.question.text);
        let answer = self.chat(cfg, ANSWER_PROMPT, &user)?.trim().to_string();
        let abstained = is_abstention(&answer);
        let verdict = match (&q.gold.answer, abstained) {
            (None, true) => "abstained",
            (None, false) => "asserted",
            (Some(_), true) => "abstained",
            (Some(gold), false) => {
                let user = format!(
                    "Question: {}\nGold answer: {gold}\nCandidate answer: {answer}",
                    q.question.text
                );
                let v = self.chat(cfg, JUDGE_PROMPT, &user)?.to_uppercase();
                if v.contains("CORRECT") && !v.contains("INCORRECT") {
                    "correct"
                } else {
                    "wrong"
                }
            }
        };
        Ok(LlmAnswer {
            answer,
            verdict: verdict.into(),
        })
    }
}

pub const ANSWER_PROMPT: &str = "You answer questions about a long conversation using only the \
memories given. Reply with a short phrase. If the memories do not contain the answer, reply \
exactly UNKNOWN.";

pub const JUDGE_PROMPT: &str = "You grade an answer against the gold answer of a question. \
The candidate is correct when it states the same fact (wording, format and extra detail do \
not matter). Reply with one word: CORRECT or WRONG.";

fn is_abstention(answer: &str) -> bool {
    let a = answer.trim().to_lowercase();
    a.is_empty()
        || a.starts_with("unknown")
        || a.starts_with("i don't know")
        || a.starts_with("i do not know")
        || a.contains("not mentioned")
}

fn mean(xs: impl Iterator<Item = f64>) -> (f64, usize) {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (if n == 0 { 0.0 } else { sum / n as f64 }, n)
}

/// The results of one method in its final state (after the cycle for methods that sleep).
fn final_results<'a>(
    m: Method,
    results: &'a [QuestionResult],
    query: &str,
) -> Vec<&'a QuestionResult> {
    let phase = if m.sleeps() { "after" } else { "before" };
    results
        .iter()
        .filter(|r| r.method == m && r.phase == phase && r.query == query)
        .collect()
}

type Key = (String, usize);

fn question_map(questions: &[EvalQuestion]) -> HashMap<Key, &EvalQuestion> {
    questions
        .iter()
        .map(|q| ((q.question.conversation.clone(), q.question.index), q))
        .collect()
}

fn table1_row(
    m: Method,
    setting: &str,
    results: &[QuestionResult],
    questions: &[EvalQuestion],
) -> Table1Row {
    let qs = question_map(questions);
    let rs = final_results(m, results, "question");
    let of = |r: &&QuestionResult| qs[&(r.conversation.clone(), r.question_index)];
    let answerable: Vec<&&QuestionResult> = rs.iter().filter(|r| of(r).answerable()).collect();
    let multi: Vec<&&QuestionResult> = rs.iter().filter(|r| of(r).multi_session()).collect();
    let llm = setting == "llm";
    let correct =
        |r: &&&QuestionResult| r.llm.as_ref().is_some_and(LlmAnswer::correct) as u8 as f64;
    let (qa, n) = if llm {
        mean(answerable.iter().map(correct))
    } else {
        mean(answerable.iter().map(|r| r.scores.answer_recall))
    };
    let (continuity, n_multi) = if llm {
        mean(multi.iter().map(correct))
    } else {
        mean(multi.iter().map(|r| r.scores.session_coverage))
    };
    let hallucination = if llm {
        mean(
            rs.iter()
                .map(|r| r.llm.as_ref().is_some_and(LlmAnswer::hallucinated) as u8 as f64),
        )
        .0
    } else {
        let packed: usize = rs.iter().map(|r| r.scores.packed).sum();
        let unsupported: usize = rs.iter().map(|r| r.scores.unsupported).sum();
        if packed == 0 {
            0.0
        } else {
            unsupported as f64 / packed as f64
        }
    };
    Table1Row {
        method: m,
        setting: setting.into(),
        long_horizon_qa: qa,
        multi_session_continuity: continuity,
        hallucination_rate: hallucination,
        recall_at_k: mean(answerable.iter().map(|r| r.scores.recall_at_k)).0,
        ndcg_at_k: mean(answerable.iter().map(|r| r.scores.ndcg_at_k)).0,
        questions: n,
        multi_session_questions: n_multi,
        mean_packed_items: mean(rs.iter().map(|r| r.scores.packed as f64)).0,
        mean_packed_tokens: mean(rs.iter().map(|r| r.scores.packed_tokens as f64)).0,
    }
}

pub const PROBES: [&str; 4] = [
    "delayed_recall",
    "cue_based_recall",
    "cross_episode_integration",
    "schema_utilization",
];

fn table2_rows(
    m: Method,
    setting: &str,
    results: &[QuestionResult],
    questions: &[EvalQuestion],
) -> Vec<Table2Row> {
    let qs = question_map(questions);
    let llm = setting == "llm";
    let probe = |probe: &str, phase: &str| -> (f64, usize) {
        // Methods that do not sleep are the same after the cycle.
        let phase = if m.sleeps() { phase } else { "before" };
        let query = if probe == "cue_based_recall" {
            "cue"
        } else {
            "question"
        };
        let rs = results.iter().filter(|r| {
            r.method == m && r.phase == phase && r.query == query && {
                let q = qs[&(r.conversation.clone(), r.question_index)];
                match probe {
                    "delayed_recall" => q.delayed(),
                    "cue_based_recall" => q.answerable(),
                    _ => q.multi_session(),
                }
            }
        });
        let correct = |r: &QuestionResult| r.llm.as_ref().is_some_and(LlmAnswer::correct);
        mean(rs.map(|r| match (probe, llm) {
            ("delayed_recall" | "cue_based_recall", false) => r.scores.context_recall,
            ("cross_episode_integration", false) => r.scores.all_evidence as u8 as f64,
            ("schema_utilization", false) => r.scores.schema_evidence as u8 as f64,
            ("schema_utilization", true) => (r.scores.schema_evidence && correct(r)) as u8 as f64,
            (_, true) => correct(r) as u8 as f64,
            _ => 0.0,
        }))
    };
    PROBES
        .iter()
        .map(|p| {
            let (before, n) = probe(p, "before");
            let (after, _) = probe(p, "after");
            Table2Row {
                method: m,
                setting: setting.into(),
                probe: p.to_string(),
                before,
                after,
                delta: after - before,
                questions: n,
            }
        })
        .collect()
}

/// The files one run writes.
#[derive(Debug, Clone, Serialize)]
pub struct Outputs {
    pub results: PathBuf,
    pub table1: PathBuf,
    pub table2: PathBuf,
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Table 1 as CSV (header and one row per method and setting).
pub fn table1_csv(rows: &[Table1Row]) -> String {
    let mut out = String::from(
        "method,setting,long_horizon_qa,multi_session_continuity,hallucination_rate,recall_at_k,ndcg_at_k,questions,multi_session_questions,mean_packed_items,mean_packed_tokens\n",
    );
    for r in rows {
        out.push_str(&format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{:.2},{:.1}\n",
            csv_field(r.method.name()),
            csv_field(&r.setting),
            r.long_horizon_qa,
            r.multi_session_continuity,
            r.hallucination_rate,
            r.recall_at_k,
            r.ndcg_at_k,
            r.questions,
            r.multi_session_questions,
            r.mean_packed_items,
            r.mean_packed_tokens
        ));
    }
    out
}

/// Table 2 as CSV (one row per method, setting and probe).
pub fn table2_csv(rows: &[Table2Row]) -> String {
    let mut out = String::from("method,setting,probe,before,after,delta,questions\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:+.4},{}\n",
            csv_field(r.method.name()),
            csv_field(&r.setting),
            csv_field(&r.probe),
            r.before,
            r.after,
            r.delta,
            r.questions
        ));
    }
    out
}

/// Writes `results_<ts>.json`, `table1_<ts>.csv` and `table2_<ts>.csv` into `dir`.
pub fn write_outputs(report: &MemoryEvalReport, dir: &Path) -> Result<Outputs> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let ts = chrono::DateTime::from_timestamp_millis(report.started_at)
        .unwrap_or_default()
        .format("%Y%m%d_%H%M%S")
        .to_string();
    let out = Outputs {
        results: dir.join(format!("results_{ts}.json")),
        table1: dir.join(format!("table1_{ts}.csv")),
        table2: dir.join(format!("table2_{ts}.csv")),
    };
    let write = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| Error::io(p, e));
    write(&out.results, &serde_json::to_string_pretty(report)?)?;
    write(&out.table1, &table1_csv(&report.table1))?;
    write(&out.table2, &table2_csv(&report.table2))?;
    Ok(out)
}

/// Both tables as aligned text.
pub fn format_tables(report: &MemoryEvalReport) -> String {
    let mut s = format!(
        "Table 1: task metrics (k = {}; {} questions, {} answerable, {} multi-session, {} adversarial)\n",
        report.k, report.questions, report.answerable, report.multi_session, report.adversarial
    );
    s.push_str(&format!(
        "{:<10} {:<8} {:>8} {:>10} {:>8} {:>7} {:>7} {:>7} {:>7}\n",
        "method", "setting", "QA", "continuity", "halluc.", "R@k", "NDCG@k", "items", "tokens"
    ));
    for r in &report.table1 {
        s.push_str(&format!(
            "{:<10} {:<8} {:>8.3} {:>10.3} {:>8.3} {:>7.3} {:>7.3} {:>7.1} {:>7.0}\n",
            r.method.name(),
            r.setting,
            r.long_horizon_qa,
            r.multi_session_continuity,
            r.hallucination_rate,
            r.recall_at_k,
            r.ndcg_at_k,
            r.mean_packed_items,
            r.mean_packed_tokens
        ));
    }
    s.push_str("\nTable 2: cognitive probes before and after one sleep cycle\n");
    s.push_str(&format!(
        "{:<10} {:<8} {:<26} {:>7} {:>7} {:>8} {:>6}\n",
        "method", "setting", "probe", "before", "after", "delta", "n"
    ));
    for r in &report.table2 {
        s.push_str(&format!(
            "{:<10} {:<8} {:<26} {:>7.3} {:>7.3} {:>+8.3} {:>6}\n",
            r.method.name(),
            r.setting,
            r.probe,
            r.before,
            r.after,
            r.delta,
            r.questions
        ));
    }
    if let Some(sl) = &report.sleep {
        s.push_str(&format!(
            "\nSleep cycle {}: {} summaries, {} schemas, {} forgotten in {} ms\n",
            sl.cycle_id.map_or("-".into(), |i| i.to_string()),
            sl.summaries,
            sl.schemas,
            sl.forgotten,
            sl.millis
        ));
    }
    if report.llm_model.is_some() {
        let u = &report.llm_usage;
        s.push_str(&format!(
            "LLM: {} calls ({} answered from cache), {} prompt + {} completion tokens\n",
            u.calls, u.cached, u.prompt_tokens, u.completion_tokens
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_and_sessions() {
        assert_eq!(
            cue("When did Caroline go to the LGBTQ support group?"),
            "caroline go lgbtq support group"
        );
        assert_eq!(session_of("D12:3"), Some(12));
        let q = EvalQuestion {
            question: Question {
                conversation: "c".into(),
                index: 0,
                text: "q".into(),
                category: 1,
            },
            gold: GoldAnswer {
                answer: Some("a".into()),
                evidence: ["D1:2".to_string(), "D3:1".to_string()].into(),
            },
            sessions: 6,
        };
        assert!(q.multi_session() && q.delayed());
        let late = EvalQuestion {
            gold: GoldAnswer {
                evidence: ["D4:1".to_string()].into(),
                ..q.gold.clone()
            },
            ..q.clone()
        };
        assert!(!late.multi_session() && !late.delayed());
    }

    #[test]
    fn abstentions() {
        assert!(is_abstention("UNKNOWN"));
        assert!(is_abstention("It is not mentioned."));
        assert!(!is_abstention("7 May 2023"));
    }
}
