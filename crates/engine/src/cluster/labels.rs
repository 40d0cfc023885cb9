//! Cluster labels: the top TF-IDF terms of a cluster's member texts, e.g.
//! "hiking · trail · mountains". A term's weight in a cluster is its count there times the
//! log inverse document frequency over all memories; stopwords, numbers and very short
//! words are skipped, and a term must occur in at least two members of a larger cluster.

use std::collections::{HashMap, HashSet};

/// Words that make poor cluster labels beyond the shared [`crate::text::STOPWORDS`].
const EXTRA_STOPWORDS: &[&str] = &["aren", "below", "took", "came", "told"];

/// Lowercase alphabetic words of at least three letters that are not stopwords or
/// contractions ("i'm", "don't"); a possessive 's is dropped.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphabetic() && c != '\'' && c != '’')
        .map(|w| w.trim_matches(['\'', '’']).to_lowercase().replace('’', "'"))
        .map(|w| w.strip_suffix("'s").map(str::to_string).unwrap_or(w))
        .filter(|w| {
            w.chars().count() >= 3
                && !w.contains('\'')
                && !crate::text::is_stopword(w)
                && !EXTRA_STOPWORDS.contains(&w.as_str())
        })
}

/// Document frequencies of terms over a corpus of member texts (the IDF of labels).
#[derive(Debug, Default, Clone)]
pub struct DocFreq {
    df: HashMap<String, usize>,
    docs: usize,
}

impl DocFreq {
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut out = Self::default();
        for t in texts {
            out.docs += 1;
            for term in terms(t).collect::<HashSet<_>>() {
                *out.df.entry(term).or_default() += 1;
            }
        }
        out
    }

    fn idf(&self, term: &str) -> f64 {
        let df = self.df.get(term).copied().unwrap_or(0);
        ((1 + self.docs) as f64 / (1 + df) as f64).ln() + 1.0
    }
}

/// A label for each group of texts (`groups[c]` = member texts of cluster c), with IDF
/// over all the groups' texts. Terms in `skip` (such as the speakers' names, which say
/// who talked rather than about what) are left out.
pub fn labels(groups: &[Vec<&str>], max_terms: usize, skip: &HashSet<String>) -> Vec<String> {
    let df = DocFreq::new(groups.iter().flatten().copied());
    groups
        .iter()
        .map(|texts| label(texts, &df, max_terms, skip))
        .collect()
}

/// The label of one group of texts: its `max_terms` terms of highest count × IDF.
pub fn label(texts: &[&str], df: &DocFreq, max_terms: usize, skip: &HashSet<String>) -> String {
    // term → (occurrences, members containing it)
    let mut tf: HashMap<String, (usize, usize)> = HashMap::new();
    for t in texts {
        let all: Vec<String> = terms(t).collect();
        for term in all.iter().collect::<HashSet<_>>() {
            tf.entry(term.clone()).or_default().1 += 1;
        }
        for term in all {
            tf.entry(term).or_default().0 += 1;
        }
    }
    let min_members = if texts.len() > 3 { 2 } else { 1 };
    let mut scored: Vec<(f64, String)> = tf
        .into_iter()
        .filter(|(term, (_, members))| *members >= min_members && !skip.contains(term))
        .map(|(term, (count, _))| (count as f64 * df.idf(&term), term))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(max_terms)
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_pick_distinctive_terms_and_skip_stopwords() {
        let hiking = vec![
            "We went hiking on the trail to the mountains",
            "The mountains trail was steep, great hiking",
            "I love hiking, the summit trail was long",
            "Hiking boots for the mountains trail",
        ];
        let cooking = vec![
            "I was cooking pasta with garlic",
            "The pasta sauce needs garlic",
            "Cooking pasta tonight, the garlic is fresh",
            "My pasta recipe uses garlic and tomato",
        ];
        let out = labels(&[hiking.clone(), cooking.clone()], 3, &HashSet::new());
        assert_eq!(out[0], "hiking · trail · mountains");
        assert!(
            out[1].starts_with("garlic · pasta") || out[1].starts_with("pasta · garlic"),
            "{}",
            out[1]
        );
        assert!(!out[1].contains("the"));
        assert_eq!(
            terms("It's Caroline's 2 dogs!").collect::<Vec<_>>(),
            vec!["caroline", "dogs"]
        );
    }
}
