//! `eval locomo`: imports LoCoMo conversations into a store, ranks each conversation's turns
//! for each question with the engine's search, and scores the rankings against the labelled
//! evidence. Questions are parsed into [`Question`], which holds no answer and no evidence;
//! evidence is kept apart in [`Gold`] and read only by [`score`].

use super::metrics::{all_at_k, ndcg_at_k, recall_at_k};
use crate::events::Job;
use crate::ingest::parse_locomo;
use crate::retrieve::SearchQuery;
use crate::store::MemoryFilter;
use crate::{AddOptions, Result, Somna};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// What the retriever sees of a question.
#[derive(Debug, Clone)]
pub struct Question {
    pub conversation: String,
    pub index: usize,
    pub text: String,
    pub category: u32,
}

/// The labelled evidence of a question (dia ids, normalised).
#[derive(Debug, Clone)]
pub struct Gold {
    pub evidence: HashSet<String>,
}

/// One line of `--out ranked.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ranked {
    pub conversation: String,
    pub question_index: usize,
    pub ranked_dia_ids: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Scores {
    pub questions: usize,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub recall_at_20: f64,
    pub all_at_10: f64,
    pub ndcg_at_10: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub overall: Scores,
    /// By category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub by_category: BTreeMap<u32, Scores>,
    /// Questions without usable evidence (not scored).
    pub unscored: usize,
    pub search_ms_p50: f64,
    pub search_ms_p99: f64,
}

/// Normalises LoCoMo's malformed evidence ids: "D8:6; D9:17" (two ids), "D:11:26" → "D11:26",
/// "D30:05" → "D30:5".
pub fn normalize_dia_ids(raw: &str) -> Vec<String> {
    raw.split([';', ','])
        .filter_map(|part| {
            let digits: Vec<u32> = part
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .filter_map(|s| s.parse().ok())
                .collect();
            match digits.as_slice() {
                [session, turn] => Some(format!("D{session}:{turn}")),
                _ => None,
            }
        })
        .collect()
}

/// Reads questions and gold evidence from a LoCoMo file.
pub fn load_questions(file: &Path) -> Result<Vec<(Question, Gold)>> {
    let text = crate::ingest::read_text(file)?;
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    let mut out = Vec::new();
    for sample in doc.as_array().into_iter().flatten() {
        let conv = sample["sample_id"].as_str().unwrap_or_default().to_string();
        for (i, qa) in sample["qa"].as_array().into_iter().flatten().enumerate() {
            let question = Question {
                conversation: conv.clone(),
                index: i,
                text: qa["question"].as_str().unwrap_or_default().to_string(),
                category: qa["category"].as_u64().unwrap_or(0) as u32,
            };
            let evidence = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str())
                .flat_map(normalize_dia_ids)
                .collect();
            out.push((question, Gold { evidence }));
        }
    }
    Ok(out)
}

/// Imports every conversation of `file` that the store does not hold yet.
pub fn import(engine: &Somna, file: &Path, job: &Job) -> Result<()> {
    let batches = parse_locomo(file)?;
    let opts = AddOptions {
        actor: "import".into(),
        ..Default::default()
    };
    engine.import(&batches, &opts, job)?;
    Ok(())
}

/// Ranks the conversation's turns for one question with the normal search path (without
/// access bookkeeping, so question order cannot change the results). Facts count as the
/// turn they were extracted from; a summary brings forward its source turns that the
/// search also returned.
pub fn rank(engine: &Somna, q: &Question, depth: usize) -> Result<(Vec<String>, f64)> {
    let r = rank_with(engine, q, depth, &SearchQuery::new(""))?;
    Ok((r.dia_ids, r.ms))
}

/// A question's ranked turns, the route that ranked them, and the search's time.
#[derive(Debug, Clone)]
pub struct Ranking {
    pub dia_ids: Vec<String>,
    pub route: crate::retrieve::Route,
    pub ms: f64,
}

/// [`rank`] with the constants (route, weights, tuning) of `template`.
pub fn rank_with(
    engine: &Somna,
    q: &Question,
    depth: usize,
    template: &SearchQuery,
) -> Result<Ranking> {
    let mut sq = template.clone();
    sq.query = q.text.clone();
    sq.k = depth;
    sq.filter = MemoryFilter {
        conversation: Some(q.conversation.clone()),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let response = engine.search_readonly(&sq)?;
    let elapsed = t.elapsed().as_secs_f64() * 1000.0;
    let listed: Vec<&crate::Memory> = response
        .hits
        .iter()
        .chain(&response.near_misses)
        .map(|h| &h.memory)
        .collect();
    let dia = |m: &crate::Memory| {
        m.metadata
            .get("dia_id")
            .and_then(|d| d.as_str())
            .map(str::to_string)
    };
    let mut seen = HashSet::new();
    let mut ids = Vec::new();
    for (i, m) in listed.iter().enumerate() {
        if let Some(d) = dia(m) {
            if seen.insert(d.clone()) {
                ids.push(d);
            }
        } else if m.kind == crate::Kind::Summary {
            // A summary (from a sleep cycle) points at its source turns: those the search
            // also returned move up to the summary's rank.
            if let crate::memory::Details::Summary {
                source_episode_ids, ..
            } = &m.details
            {
                let sources: HashSet<i64> = source_episode_ids.iter().copied().collect();
                for later in &listed[i + 1..] {
                    if sources.contains(&later.id) {
                        if let Some(d) = dia(later) {
                            if seen.insert(d.clone()) {
                                ids.push(d);
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(Ranking {
        dia_ids: ids,
        route: response.route,
        ms: elapsed,
    })
}

/// A question, its evidence and the ranking the engine produced for it.
pub type Judged = (Question, Gold, Vec<String>);

/// Scores rankings against the gold evidence.
pub fn score(results: &[Judged], latencies: &mut [f64]) -> Report {
    let mut groups: BTreeMap<u32, Vec<&Judged>> = BTreeMap::new();
    let mut unscored = 0;
    for r in results {
        if r.1.evidence.is_empty() {
            unscored += 1;
        } else {
            groups.entry(r.0.category).or_default().push(r);
        }
    }
    let summarise = |rs: &[&Judged]| {
        let n = rs.len().max(1) as f64;
        let mean = |f: &dyn Fn(&Vec<String>, &HashSet<String>) -> f64| {
            rs.iter().map(|r| f(&r.2, &r.1.evidence)).sum::<f64>() / n
        };
        Scores {
            questions: rs.len(),
            recall_at_5: mean(&|r, e| recall_at_k(r, e, 5)),
            recall_at_10: mean(&|r, e| recall_at_k(r, e, 10)),
            recall_at_20: mean(&|r, e| recall_at_k(r, e, 20)),
            all_at_10: mean(&|r, e| all_at_k(r, e, 10)),
            ndcg_at_10: mean(&|r, e| ndcg_at_k(r, e, 10)),
        }
    };
    let all: Vec<&Judged> = groups.values().flatten().copied().collect();
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        if latencies.is_empty() {
            0.0
        } else {
            latencies[((latencies.len() - 1) as f64 * p).round() as usize]
        }
    };
    Report {
        overall: summarise(&all),
        by_category: groups.iter().map(|(c, rs)| (*c, summarise(rs))).collect(),
        unscored,
        search_ms_p50: pct(0.5),
        search_ms_p99: pct(0.99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_evidence_ids_are_normalised() {
        assert_eq!(normalize_dia_ids("D8:6; D9:17"), vec!["D8:6", "D9:17"]);
        assert_eq!(normalize_dia_ids("D:11:26"), vec!["D11:26"]);
        assert_eq!(normalize_dia_ids("D30:05"), vec!["D30:5"]);
        assert_eq!(normalize_dia_ids("D1:3"), vec!["D1:3"]);
        assert!(normalize_dia_ids("garbage").is_empty());
    }
}
