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

/// A label for each group of texts (`groups[c]` = member texts of cluster c). Terms in
/// `skip` (such as the speakers' names, which say who talked rather than about what) are
/// left out.
pub fn labels(groups: &[Vec<&str>], max_terms: usize, skip: &HashSet<String>) -> Vec<String> {
    let mut df: HashMap<String, usize> = HashMap::new();
    let mut docs = 0usize;
    let mut tfs: Vec<HashMap<String, (usize, usize)>> = Vec::with_capacity(groups.len());
    for texts in groups {
        let mut tf: HashMap<String, (usize, usize)> = HashMap::new();
        for t in texts {
            docs += 1;
            let unique: HashSet<String> = terms(t).collect();
            for term in terms(t) {
                tf.entry(term).or_default().0 += 1;
            }
            for term in unique {
                tf.entry(term.clone()).or_default().1 += 1;
                *df.entry(term).or_default() += 1;
            }
        }
        tfs.push(tf);
    }
    tfs.into_iter()
        .zip(groups)
        .map(|(tf, texts)| {
            let min_members = if texts.len() > 3 { 2 } else { 1 };
            let mut scored: Vec<(f64, String)> = tf
                .into_iter()
                .filter(|(term, (_, members))| *members >= min_members && !skip.contains(term))
                .map(|(term, (count, _))| {
                    let idf = ((1 + docs) as f64 / (1 + df[&term]) as f64).ln() + 1.0;
                    (count as f64 * idf, term)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored
                .into_iter()
                .take(max_terms)
                .map(|(_, t)| t)
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .collect()
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
