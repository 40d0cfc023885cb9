//! Text compression, shared by the rolling conversation summaries of ingestion and the
//! summaries and schemas of sleep cycles: backends behind one trait ([`Compressor`]; the
//! chat backend is `sleep::chat`). [`Extractive`] is the default: deterministic and
//! offline. It picks the sentences closest to the batch's TF-IDF centroid (with a
//! redundancy penalty), key concepts by TF-IDF over the store, themes from a lexicon,
//! relationships from concepts that co-occur in a turn, and a confidence from coverage
//! and embedding cohesion.

pub mod text;

use crate::embed::dot;
use crate::Result;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use text::DocFreq;

/// One episode as a compressor sees it.
#[derive(Debug, Clone)]
pub struct EpisodeView {
    pub id: i64,
    pub who: Option<String>,
    pub text: String,
    pub when: Option<String>,
    pub vector: Option<Vec<f32>>,
}

impl EpisodeView {
    /// A memory as a compressor sees it, with its vector when the caller has one.
    pub fn of(m: &crate::memory::Memory, vector: Option<Vec<f32>>) -> Self {
        EpisodeView {
            id: m.id,
            who: m.w5h1.who.clone(),
            text: m.text.clone(),
            when: m.w5h1.when.clone(),
            vector,
        }
    }
}

/// Episodes to compress into one summary (one session or a time window of it).
#[derive(Debug, Clone)]
pub struct Batch {
    pub conversation: Option<String>,
    pub session: Option<String>,
    pub episodes: Vec<EpisodeView>,
}

/// What compressing a batch yields (seed 000's CompressionResult).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compression {
    pub summary: String,
    pub key_concepts: Vec<String>,
    pub themes: Vec<String>,
    pub relationships: Vec<String>,
    pub confidence: f64,
    /// Something the report should mention (e.g. a retry after a context overflow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A summary as schema formation sees it.
#[derive(Debug, Clone)]
pub struct SummaryView {
    pub text: String,
    pub who: Vec<String>,
    pub when: Option<String>,
    pub occurred_at: Option<i64>,
    pub session: Option<String>,
    pub key_concepts: Vec<String>,
    pub themes: Vec<String>,
}

/// A schema's description (seed 000's Schema without ids).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaDraft {
    pub name: String,
    pub description: String,
    pub core_concepts: Vec<String>,
    pub examples: Vec<String>,
    pub confidence: f64,
}

/// Store-wide statistics a compressor may use.
pub struct Corpus {
    pub df: DocFreq,
    /// Speaker names: never key concepts.
    pub names: HashSet<String>,
}

impl Corpus {
    /// Document frequencies over `texts`, and the words of the `speakers`' names.
    pub fn of<'a>(
        texts: impl IntoIterator<Item = &'a str>,
        speakers: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut df = DocFreq::default();
        for t in texts {
            df.add(t);
        }
        let names = speakers
            .into_iter()
            .flat_map(text::words)
            .map(|w| w.stem)
            .collect();
        Corpus { df, names }
    }

    /// Whether a word is a speaker's name or, capitalised, a short form of one ("Mel").
    pub fn is_name(&self, w: &text::Word) -> bool {
        self.names.contains(&w.stem)
            || (w.capitalized
                && w.stem.len() >= 3
                && self.names.iter().any(|n| n.starts_with(&w.stem)))
    }
}

/// Turns episode batches into summaries and summary groups into schemas. An LLM backend
/// implements the same trait; a failing call falls back to [`Extractive`] for that batch.
pub trait Compressor: Send + Sync {
    fn name(&self) -> &str;
    fn compress(&self, batch: &Batch, corpus: &Corpus) -> Result<Compression>;
    /// Describes summaries that share `core_concepts` (most shared first).
    fn schema(
        &self,
        core_concepts: &[String],
        members: &[&SummaryView],
        corpus: &Corpus,
    ) -> Result<SchemaDraft>;
    /// Names for concept clusters: `samples[c]` are some member texts of cluster c,
    /// `hints[c]` its extractive label. `None` (the default, and [`Extractive`]'s answer)
    /// keeps the extractive labels; a name an LLM backend cannot give falls back to its hint.
    fn name_clusters(
        &self,
        _samples: &[Vec<String>],
        _hints: &[String],
    ) -> Result<Option<Vec<String>>> {
        Ok(None)
    }
}

/// The deterministic, offline default.
#[derive(Debug, Clone)]
pub struct Extractive {
    /// Sentences quoted in a summary, at most.
    pub max_sentences: usize,
    /// Words of quoted sentences, at most (a sentence that would exceed it is skipped).
    pub max_words: usize,
    pub key_concepts: usize,
}

impl Default for Extractive {
    fn default() -> Self {
        Self {
            max_sentences: 3,
            max_words: 70,
            key_concepts: 5,
        }
    }
}

struct Sentence {
    episode: usize,
    who: Option<String>,
    text: String,
    vec: HashMap<String, f64>,
    words: usize,
}

impl Extractive {
    /// Greedy MMR on the centroid: relevance minus redundancy with what is chosen, within
    /// the sentence and word limits. The chosen sentences' indices, in text order.
    fn choose(&self, sents: &[Sentence], centroid: &HashMap<String, f64>) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::new();
        let mut used_words = 0;
        while chosen.len() < self.max_sentences {
            let best = sents
                .iter()
                .enumerate()
                .filter(|(i, s)| !chosen.contains(i) && used_words + s.words <= self.max_words)
                .map(|(i, s)| {
                    let redundancy = chosen
                        .iter()
                        .map(|&c| text::cosine(&s.vec, &sents[c].vec))
                        .fold(0.0, f64::max);
                    (i, text::cosine(&s.vec, centroid) - 0.7 * redundancy)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            match best {
                Some((i, score)) if score > 0.0 => {
                    used_words += sents[i].words;
                    chosen.push(i);
                }
                _ => break,
            }
        }
        chosen.sort_unstable();
        chosen
    }
}

/// The sentences a summary may quote: 4–40 words, at least two content words, not a
/// question; quotes made single.
fn candidate_sentences(batch: &Batch, corpus: &Corpus) -> Vec<Sentence> {
    let mut sents = Vec::new();
    for (i, e) in batch.episodes.iter().enumerate() {
        for s in text::sentences(&text::without_captions(&e.text)) {
            let s = s.replace('"', "'");
            let words = s.split_whitespace().count();
            let st = text::content_stems(&s);
            if !(4..=40).contains(&words) || st.len() < 2 || crate::lang::asks::is_question(&s) {
                continue;
            }
            sents.push(Sentence {
                episode: i,
                who: e.who.clone(),
                vec: text::tfidf(&st, &corpus.df),
                text: s,
                words,
            });
        }
    }
    sents
}

/// "DATE: Ada and Ben talked about X, Y and Z." then each chosen sentence quoted with its
/// speaker.
fn summary_text(batch: &Batch, labels: &[String], sents: &[Sentence], chosen: &[usize]) -> String {
    let people = speakers(batch.episodes.iter().map(|e| e.who.clone()));
    let when = batch.episodes.iter().find_map(|e| e.when.clone());
    let mut summary = String::new();
    if let Some(w) = &when {
        summary.push_str(&format!("{}: ", date_part(w)));
    }
    let subject = if people.is_empty() {
        "The conversation".to_string()
    } else {
        text::join_and(&people)
    };
    if labels.is_empty() {
        summary.push_str(&format!("{subject} talked."));
    } else {
        let verb = if people.len() > 1 {
            "talked about"
        } else {
            "wrote about"
        };
        summary.push_str(&format!(
            "{subject} {verb} {}.",
            text::join_and(&labels[..labels.len().min(3)])
        ));
    }
    for &i in chosen {
        let s = &sents[i];
        match &s.who {
            Some(w) => summary.push_str(&format!(" {w}: \"{}\"", s.text)),
            None => summary.push_str(&format!(" \"{}\"", s.text)),
        }
    }
    summary
}

/// How much of the batch's concept mass the quoted sentences cover, and how tightly the
/// episodes cluster in embedding space (halved when nothing was quoted).
fn confidence(batch: &Batch, concepts: &[Concept], sents: &[Sentence], chosen: &[usize]) -> f64 {
    let covered_stems: HashSet<&String> =
        chosen.iter().flat_map(|&i| sents[i].vec.keys()).collect();
    let mass: f64 = concepts.iter().map(|c| c.score).sum();
    let coverage = if mass > 0.0 {
        concepts
            .iter()
            .filter(|c| c.stems.iter().all(|s| covered_stems.contains(s)))
            .map(|c| c.score)
            .sum::<f64>()
            / mass
    } else {
        0.0
    };
    let covered_episodes: HashSet<usize> = chosen.iter().map(|&i| sents[i].episode).collect();
    let cohesion = cohesion(&batch.episodes);
    let size = (batch.episodes.len() as f64 / 6.0).min(1.0);
    (0.4 * coverage + 0.4 * cohesion + 0.2 * size)
        * if covered_episodes.is_empty() {
            0.5
        } else {
            1.0
        }
}

impl Compressor for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    /// Quotes the sentences nearest the batch's centroid (greedy MMR), after a line naming
    /// who talked about which key concepts.
    fn compress(&self, batch: &Batch, corpus: &Corpus) -> Result<Compression> {
        let stems: Vec<Vec<String>> = batch
            .episodes
            .iter()
            .map(|e| {
                text::words(&e.text)
                    .into_iter()
                    .filter(|w| w.content && !corpus.is_name(w))
                    .map(|w| w.stem)
                    .collect()
            })
            .collect();
        let concepts = key_concepts(batch, corpus, self.key_concepts);
        let all: Vec<String> = stems.iter().flatten().cloned().collect();
        let centroid = text::tfidf(&all, &corpus.df);
        let sents = candidate_sentences(batch, corpus);
        let chosen = self.choose(&sents, &centroid);
        let labels: Vec<String> = concepts.iter().map(|c| c.label.clone()).collect();
        let summary = summary_text(batch, &labels, &sents, &chosen);
        let themes: Vec<String> = text::themes(&all)
            .into_iter()
            .filter(|t| t.1 >= 2)
            .take(3)
            .map(|t| t.0.to_string())
            .collect();
        let relationships = relationships(&concepts, &stems);
        let confidence = confidence(batch, &concepts, &sents, &chosen);
        Ok(Compression {
            summary,
            key_concepts: labels,
            themes,
            relationships,
            confidence: round2(confidence),
            note: None,
        })
    }

    fn schema(
        &self,
        core: &[String],
        members: &[&SummaryView],
        _corpus: &Corpus,
    ) -> Result<SchemaDraft> {
        let seed = core.first().cloned().unwrap_or_default();
        let concepts: Vec<&String> = core.iter().filter(|c| !text::is_theme(c)).collect();
        let theme = core.iter().find(|c| text::is_theme(c));
        let name = if text::is_theme(&seed) {
            match concepts.first() {
                Some(c) => format!("{}: {c}", capitalize(&seed)),
                None => capitalize(&seed),
            }
        } else {
            let mut n = capitalize(&seed);
            if let Some(second) = concepts.get(1) {
                n.push_str(&format!(" and {second}"));
            }
            if let Some(t) = theme {
                n.push_str(&format!(" ({t})"));
            }
            n
        };
        let mut ordered: Vec<&&SummaryView> = members.iter().collect();
        ordered.sort_by_key(|m| m.occurred_at);
        let people = speakers(ordered.iter().flat_map(|m| m.who.iter().cloned().map(Some)));
        let dates: Vec<String> = ordered
            .iter()
            .filter_map(|m| m.when.as_deref().map(date_part))
            .collect();
        let span = match (dates.first(), dates.last()) {
            (Some(a), Some(b)) if a != b => format!(" between {a} and {b}"),
            (Some(a), _) => format!(" on {a}"),
            _ => String::new(),
        };
        let sessions: HashSet<&Option<String>> = ordered.iter().map(|m| &m.session).collect();
        let subject = if people.is_empty() {
            "The conversations".to_string()
        } else {
            text::join_and(&people[..people.len().min(3)])
        };
        let mut description = format!(
            "{subject} came back to {seed} in {} conversation{}{span}",
            sessions.len(),
            if sessions.len() == 1 { "" } else { "s" }
        );
        let others: Vec<String> = concepts
            .iter()
            .filter(|c| **c != &seed)
            .map(|c| c.to_string())
            .collect();
        if !others.is_empty() {
            description.push_str(&format!(", usually with {}", text::join_and(&others)));
        }
        description.push('.');
        let themes: Vec<&String> = core
            .iter()
            .filter(|c| text::is_theme(c) && **c != seed)
            .collect();
        if !themes.is_empty() {
            let t: Vec<&str> = themes.iter().map(|t| t.as_str()).collect();
            description.push_str(&format!(" Themes: {}.", t.join("; ")));
        }
        // Words that mark a quote as an example of this schema: its concepts' words, and
        // the lexicon of its themes.
        let mut marks: HashSet<String> = HashSet::new();
        for c in core {
            if text::is_theme(c) {
                marks.extend(text::theme_words_of(c).iter().map(|w| w.to_string()));
            } else {
                marks.extend(text::content_stems(c));
            }
        }
        // Examples: from the members sharing the most core terms, a quoted sentence that
        // mentions a core concept (else the first quote).
        let mut ranked: Vec<(usize, &&SummaryView)> = members
            .iter()
            .map(|m| {
                let own: HashSet<&String> = m.key_concepts.iter().chain(&m.themes).collect();
                (core.iter().filter(|c| own.contains(c)).count(), m)
            })
            .collect();
        ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
        let mut examples: Vec<String> = Vec::new();
        for (_, m) in &ranked {
            let found = quotes(&m.text)
                .into_iter()
                .find(|q| text::content_stems(q).iter().any(|s| marks.contains(s)));
            if let Some(q) = found.filter(|q| !examples.contains(q)) {
                examples.push(q);
            }
            if examples.len() == 3 {
                break;
            }
        }
        if examples.is_empty() {
            examples.extend(
                ranked
                    .iter()
                    .find_map(|(_, m)| quotes(&m.text).into_iter().next()),
            );
        }
        let support = (members.len() as f64 / 6.0).min(1.0);
        let agreement = ranked.iter().map(|r| r.0 as f64).sum::<f64>()
            / (ranked.len().max(1) * core.len().max(1)) as f64;
        Ok(SchemaDraft {
            name,
            description,
            core_concepts: core.to_vec(),
            examples,
            confidence: round2(0.5 * support + 0.5 * agreement),
        })
    }
}

/// A key concept: a word or a two-word phrase, its stems and TF-IDF score.
struct Concept {
    label: String,
    stems: Vec<String>,
    score: f64,
}

/// Episodes of a batch using a term, and the term's surface forms with their counts.
type Usage = (HashSet<usize>, BTreeMap<String, usize>);

/// Words and adjacent word pairs scored by (episodes of the batch that use them) × idf;
/// a phrase used in two or more turns beats its words.
fn key_concepts(batch: &Batch, corpus: &Corpus, k: usize) -> Vec<Concept> {
    // stem → (episodes using it, surface counts); BTreeMap keeps ties deterministic.
    let mut uni: BTreeMap<String, Usage> = BTreeMap::new();
    let mut bi: BTreeMap<(String, String), Usage> = BTreeMap::new();
    for (i, e) in batch.episodes.iter().enumerate() {
        let words = text::words(&e.text);
        for (j, w) in words.iter().enumerate() {
            if !w.content || corpus.is_name(w) {
                continue;
            }
            let entry = uni.entry(w.stem.clone()).or_default();
            entry.0.insert(i);
            *entry.1.entry(w.surface.clone()).or_default() += 1;
            if let Some(n) = words.get(j + 1) {
                if n.content && !corpus.is_name(n) {
                    let entry = bi.entry((w.stem.clone(), n.stem.clone())).or_default();
                    entry.0.insert(i);
                    *entry
                        .1
                        .entry(format!("{} {}", w.surface, n.surface))
                        .or_default() += 1;
                }
            }
        }
    }
    let surface = |m: &BTreeMap<String, usize>| {
        m.iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|x| x.0.clone())
            .unwrap_or_default()
    };
    let mut cands: Vec<Concept> = Vec::new();
    for ((a, b), (eps, forms)) in &bi {
        if eps.len() >= 2 && a != b {
            cands.push(Concept {
                label: surface(forms),
                stems: vec![a.clone(), b.clone()],
                score: eps.len() as f64 * (corpus.df.idf(a) + corpus.df.idf(b)) / 2.0 * 1.3,
            });
        }
    }
    for (s, (eps, forms)) in &uni {
        let df_ok = eps.len() >= 2 || batch.episodes.len() <= 3;
        if df_ok {
            cands.push(Concept {
                label: surface(forms),
                stems: vec![s.clone()],
                score: eps.len() as f64 * corpus.df.idf(s),
            });
        }
    }
    cands.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.label.cmp(&b.label)));
    let mut out: Vec<Concept> = Vec::new();
    for c in cands {
        let overlaps = out
            .iter()
            .any(|o| c.stems.iter().any(|s| o.stems.contains(s)));
        if !overlaps {
            out.push(c);
        }
        if out.len() == k {
            break;
        }
    }
    out
}

/// Pairs of key concepts used in the same turn, most frequent first.
fn relationships(concepts: &[Concept], stems: &[Vec<String>]) -> Vec<String> {
    let mut pairs: Vec<(usize, String)> = Vec::new();
    for (i, a) in concepts.iter().enumerate() {
        for b in &concepts[i + 1..] {
            let n = stems
                .iter()
                .filter(|ep| {
                    a.stems.iter().all(|s| ep.contains(s)) && b.stems.iter().all(|s| ep.contains(s))
                })
                .count();
            if n > 0 {
                pairs.push((n, format!("{} — {}", a.label, b.label)));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    pairs.into_iter().take(5).map(|p| p.1).collect()
}

/// Mean cosine of the episodes' embeddings to their normalised mean (0 without vectors).
fn cohesion(episodes: &[EpisodeView]) -> f64 {
    let vs: Vec<&Vec<f32>> = episodes.iter().filter_map(|e| e.vector.as_ref()).collect();
    let Some(first) = vs.first() else { return 0.0 };
    let mut mean = vec![0f32; first.len()];
    for v in &vs {
        for (m, x) in mean.iter_mut().zip(v.iter()) {
            *m += x;
        }
    }
    crate::embed::normalize(&mut mean);
    (vs.iter().map(|v| dot(v, &mean) as f64).sum::<f64>() / vs.len() as f64).clamp(0.0, 1.0)
}

/// Distinct speakers in order of first appearance.
fn speakers(who: impl Iterator<Item = Option<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in who.flatten() {
        if !w.is_empty() && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// "8 May 2023, 1:56 pm" → "8 May 2023".
fn date_part(when: &str) -> String {
    when.split(',').next().unwrap_or(when).trim().to_string()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The quoted sentences of a summary, each with its speaker: `Ann: "…"`.
fn quotes(summary: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = summary;
    let mut offset = 0;
    while let Some(open) = rest.find(": \"") {
        let start = rest[..open]
            .rfind(['.', '"', '!', '?'])
            .map_or(0, |p| p + 1);
        let Some(close) = rest[open + 3..].find('"') else {
            break;
        };
        let close = close + open + 3;
        out.push(rest[start..=close].trim().to_string());
        offset += close + 1;
        rest = &summary[offset..];
    }
    out
}

fn round2(x: f64) -> f64 {
    (x.clamp(0.0, 1.0) * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(texts: &[&str]) -> Corpus {
        let mut df = DocFreq::default();
        for t in texts {
            df.add(t);
        }
        for t in [
            "the weather is fine",
            "my car broke",
            "coffee in the morning",
        ] {
            df.add(t);
        }
        Corpus {
            df,
            names: ["ann", "bob"].map(String::from).into_iter().collect(),
        }
    }

    fn ep(id: i64, who: &str, text: &str) -> EpisodeView {
        EpisodeView {
            id,
            who: Some(who.into()),
            text: text.into(),
            when: Some("8 May 2023, 1:56 pm".into()),
            vector: None,
        }
    }

    #[test]
    fn summary_names_people_concepts_and_quotes_central_sentences() {
        let texts = [
            "I started a pottery class last month and I made my first bowl.",
            "A pottery class sounds relaxing. What did you make in the pottery class?",
            "A blue bowl for my mom. The glaze on the bowl came out uneven though.",
            "Thanks!",
            "Bob, my dog chewed my shoes again.",
        ];
        let batch = Batch {
            conversation: Some("c".into()),
            session: None,
            episodes: texts
                .iter()
                .enumerate()
                .map(|(i, t)| ep(i as i64, if i % 2 == 0 { "Ann" } else { "Bob" }, t))
                .collect(),
        };
        let c = Extractive::default()
            .compress(&batch, &corpus(&texts))
            .unwrap();
        assert!(
            c.summary
                .starts_with("8 May 2023: Ann and Bob talked about pottery class"),
            "{}",
            c.summary
        );
        assert!(c.summary.contains("Ann: \"I started a pottery class"));
        assert_eq!(c.key_concepts[0], "pottery class");
        assert!(c.key_concepts.contains(&"bowl".to_string()));
        assert!(!c.key_concepts.iter().any(|k| k == "bob" || k == "thanks"));
        assert!(c
            .relationships
            .contains(&"pottery class — bowl".to_string()));
        assert!(c.confidence > 0.0 && c.confidence <= 1.0);
        assert_eq!(
            quotes(&c.summary)[0],
            "Ann: \"I started a pottery class last month and I made my first bowl.\""
        );
    }

    #[test]
    fn schema_is_named_after_its_core_concepts() {
        let m = SummaryView {
            text: "8 May 2023: Ann and Bob talked about pottery. Ann: \"I made a bowl.\"".into(),
            who: vec!["Ann".into(), "Bob".into()],
            when: Some("8 May 2023, 1:00 pm".into()),
            occurred_at: Some(0),
            session: Some("s1".into()),
            key_concepts: vec!["pottery".into(), "bowl".into()],
            themes: vec![],
        };
        let members = [&m, &m, &m];
        let core = vec!["pottery".to_string(), "bowl".to_string()];
        let s = Extractive::default()
            .schema(&core, &members, &corpus(&[]))
            .unwrap();
        assert_eq!(s.name, "Pottery and bowl");
        assert_eq!(
            s.description,
            "Ann and Bob came back to pottery in 1 conversation on 8 May 2023, usually with bowl."
        );
        assert_eq!(s.examples[0], "Ann: \"I made a bowl.\"");
        assert!((s.confidence - 0.75).abs() < 1e-9);
    }
}
