//! Near-duplicate groups: memories whose vectors are within a cosine threshold of each
//! other and that say the same thing in the sense a person would merge.
//!
//! The rules beside the threshold, and why:
//! - **Same kind.** A fact and the turn it was extracted from are meant to coexist.
//! - **Same speaker** (when both have one). "I moved to Porto" from Ann and from Bob are
//!   two memories about two people.
//! - **Episodes: same conversation, and at least [`MIN_CONTENT_WORDS`] content words.** A
//!   turn is an event of its conversation: the same words in another conversation are
//!   another event, and short phatic turns ("Thanks!", "Sounds good") repeat without
//!   being duplicated knowledge. Facts, summaries and schemas are knowledge, so the same
//!   fact stated in two conversations is one fact stored twice.
//! - **The same numbers.** "My VO2 max went up to 46" and "… to 47" embed at 0.97, but
//!   they are a progression (a value that changed), not one statement stored twice: on
//!   the bundled demo most groups at 0.92 were such series until this rule.
//! - **Live memories only**: not deleted, forgotten or archived (a merge archives its
//!   sources, so a merged group is not found again).
//!
//! Groups are the connected components of the "is a near-duplicate of" pairs, found with
//! each memory's nearest neighbours in the vector index (so the cost is one index query
//! per memory).

use crate::compress::text::content_stems;
use crate::memory::{Kind, Memory, State};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// An episode needs this many content words to be a duplicate of another.
pub const MIN_CONTENT_WORDS: usize = 3;
/// Neighbours looked at per memory.
pub const NEIGHBOURS: usize = 16;
/// The default cosine threshold.
pub const DEFAULT_THRESHOLD: f32 = 0.92;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct DuplicateQuery {
    /// Cosine similarity at or above which two memories are near-duplicates (0.5..=1).
    pub threshold: f32,
    /// Only within this conversation.
    pub conversation: Option<String>,
    /// Groups returned, largest first, at most.
    pub limit: usize,
}

impl Default for DuplicateQuery {
    fn default() -> Self {
        Self {
            threshold: DEFAULT_THRESHOLD,
            conversation: None,
            limit: 500,
        }
    }
}

impl DuplicateQuery {
    pub fn validate(&self) -> crate::Result<()> {
        if !(0.5..=1.0).contains(&self.threshold) {
            return Err(crate::Error::InvalidInput(
                "duplicates: the threshold is a cosine similarity within 0.5..=1".into(),
            ));
        }
        if self.limit == 0 || self.limit > 10_000 {
            return Err(crate::Error::InvalidInput(
                "duplicates: limit is 1..=10000 groups".into(),
            ));
        }
        Ok(())
    }
}

/// One group of near-duplicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DuplicateGroup {
    /// Oldest first.
    pub ids: Vec<i64>,
    pub kind: Kind,
    pub who: Option<String>,
    /// The lowest similarity of the pairs that joined the group.
    pub min_similarity: f32,
    pub texts: Vec<String>,
}

/// The groups over `memories`; `neighbours(m)` gives m's nearest memories as (id, cosine).
pub fn groups(
    memories: &[Memory],
    q: &DuplicateQuery,
    mut neighbours: impl FnMut(&Memory) -> Vec<(i64, f32)>,
) -> Vec<DuplicateGroup> {
    let eligible: HashMap<i64, &Memory> = memories
        .iter()
        .filter(|m| {
            m.deleted_at.is_none() && !matches!(m.state, State::Forgotten | State::Archived)
        })
        .filter(|m| q.conversation.is_none() || m.conversation == q.conversation)
        .filter(|m| m.kind != Kind::Episode || content_stems(&m.text).len() >= MIN_CONTENT_WORDS)
        .map(|m| (m.id, m))
        .collect();
    let mut ids: Vec<i64> = eligible.keys().copied().collect();
    ids.sort_unstable();
    let mut parent: HashMap<i64, i64> = ids.iter().map(|&i| (i, i)).collect();
    let mut weakest: HashMap<i64, f32> = HashMap::new();
    for &id in &ids {
        let m = eligible[&id];
        for (other, sim) in neighbours(m) {
            if other == id || sim < q.threshold {
                continue;
            }
            let Some(o) = eligible.get(&other) else {
                continue;
            };
            if !alike(m, o) {
                continue;
            }
            let (a, b) = (find(&mut parent, id), find(&mut parent, other));
            if a == b {
                continue;
            }
            let w = weakest
                .get(&a)
                .copied()
                .unwrap_or(1.0)
                .min(weakest.get(&b).copied().unwrap_or(1.0))
                .min(sim);
            let root = a.min(b);
            parent.insert(a.max(b), root);
            weakest.insert(root, w);
        }
    }
    let mut members: HashMap<i64, Vec<i64>> = HashMap::new();
    for &id in &ids {
        let root = find(&mut parent, id);
        members.entry(root).or_default().push(id);
    }
    let mut out: Vec<DuplicateGroup> = members
        .into_iter()
        .filter(|(_, ms)| ms.len() > 1)
        .map(|(root, mut ms)| {
            ms.sort_by_key(|i| {
                let m = eligible[i];
                (m.occurred_at.unwrap_or(m.created_at), *i)
            });
            let first = eligible[&ms[0]];
            DuplicateGroup {
                kind: first.kind,
                who: first.w5h1.who.clone(),
                min_similarity: weakest.get(&root).copied().unwrap_or(1.0),
                texts: ms.iter().map(|i| eligible[i].text.clone()).collect(),
                ids: ms,
            }
        })
        .collect();
    out.sort_by(|a, b| b.ids.len().cmp(&a.ids.len()).then(a.ids[0].cmp(&b.ids[0])));
    out.truncate(q.limit);
    out
}

/// The rules beside the threshold (see the module's documentation).
fn alike(a: &Memory, b: &Memory) -> bool {
    let same_who = match (&a.w5h1.who, &b.w5h1.who) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        _ => true,
    };
    a.kind == b.kind
        && same_who
        && (a.kind != Kind::Episode || a.conversation == b.conversation)
        && numbers(&a.text) == numbers(&b.text)
}

/// Numbers people write out in words, as digits.
const NUMBER_WORDS: [(&str, &str); 20] = [
    ("zero", "0"),
    ("one", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("eleven", "11"),
    ("twelve", "12"),
    ("fifteen", "15"),
    ("twenty", "20"),
    ("thirty", "30"),
    ("forty", "40"),
    ("fifty", "50"),
    ("hundred", "100"),
    ("thousand", "1000"),
];

/// The numbers a text states, in order, in digits or words ("3 weeks", "six weeks",
/// "17 °C", "$19k", "1.5").
fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter_map(|t| {
            if t.chars().any(|c| c.is_ascii_digit()) {
                let digits: String = t
                    .chars()
                    .filter(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                return Some(digits);
            }
            let lower = t.to_lowercase();
            NUMBER_WORDS
                .iter()
                .find(|(w, _)| *w == lower)
                .map(|(_, d)| d.to_string())
        })
        .collect()
}

fn find(parent: &mut HashMap<i64, i64>, id: i64) -> i64 {
    let mut root = id;
    while parent[&root] != root {
        root = parent[&root];
    }
    let mut cur = id;
    while parent[&cur] != root {
        let next = parent[&cur];
        parent.insert(cur, root);
        cur = next;
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::fixture::memory;

    /// Neighbours from a fixed similarity table (symmetric).
    fn table(pairs: &[(i64, i64, f32)]) -> impl FnMut(&Memory) -> Vec<(i64, f32)> + '_ {
        move |m| {
            pairs
                .iter()
                .filter_map(|&(a, b, s)| {
                    (a == m.id)
                        .then_some((b, s))
                        .or_else(|| (b == m.id).then_some((a, s)))
                })
                .collect()
        }
    }

    #[test]
    fn groups_join_near_duplicates_of_one_speaker_and_leave_the_rest() {
        let mut ms = vec![
            memory(1, "I adopted a greyhound called Pixel", "Ann"),
            memory(2, "I adopted a greyhound named Pixel", "Ann"),
            memory(3, "I adopted a greyhound named Pixel!", "Ann"),
            memory(4, "I adopted a greyhound called Pixel", "Bob"),
            memory(5, "Thanks so much", "Ann"),
            memory(6, "Thanks so much!", "Ann"),
            memory(7, "I adopted a greyhound called Pixel", "Ann"),
        ];
        ms[6].conversation = Some("other".into());
        let pairs = [
            (1, 2, 0.97),
            (2, 3, 0.95),
            (1, 4, 0.99),
            (5, 6, 0.99),
            (1, 7, 0.99),
            (1, 3, 0.80),
        ];
        let g = groups(&ms, &DuplicateQuery::default(), table(&pairs));
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].ids, vec![1, 2, 3]);
        assert!((g[0].min_similarity - 0.95).abs() < 1e-6);

        // Facts are knowledge: the same fact in two conversations is a duplicate.
        for m in &mut ms {
            m.kind = Kind::Fact;
        }
        let g = groups(&ms, &DuplicateQuery::default(), table(&pairs));
        assert_eq!(g[0].ids, vec![1, 2, 3, 7]);
        assert_eq!(g[1].ids, vec![5, 6]);

        let strict = DuplicateQuery {
            threshold: 0.98,
            ..Default::default()
        };
        let g = groups(&ms, &strict, table(&pairs));
        assert_eq!(
            g.iter().map(|g| g.ids.clone()).collect::<Vec<_>>(),
            vec![vec![1, 7], vec![5, 6]]
        );
    }

    #[test]
    fn statements_that_differ_in_a_number_are_a_series_not_duplicates() {
        let ms = vec![
            memory(1, "My watch says my VO2 max went up to 46.", "Ann"),
            memory(2, "My watch says my VO2 max went up to 47.", "Ann"),
            memory(3, "My watch says my VO2 max went up to 47!", "Ann"),
        ];
        let pairs = [(1, 2, 0.97), (2, 3, 0.99)];
        let g = groups(&ms, &DuplicateQuery::default(), table(&pairs));
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].ids, vec![2, 3]);
        assert_eq!(numbers("$19k of 48.5k, 3 weeks."), vec!["19", "48.5", "3"]);
        assert_eq!(numbers("Six weeks until the concert"), vec!["6"]);
    }
}
