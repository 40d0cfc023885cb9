//! Cluster labels a person can read: the noun phrases and named entities most distinctive
//! of a cluster's members, e.g. "sourdough starter · Gertrude · rye".
//!
//! - **Terms.** A member's terms are its named entities ([`crate::lang::entities`]: names,
//!   places, organisations, quoted titles; shown as written) and its noun phrases: runs of
//!   content words between function words and punctuation, with every one-, two- and
//!   three-word span of a run a candidate ("hip fracture", "hip", "fracture"). A word
//!   ends a run when it is a stopword, one of the most common English words
//!   ([`crate::lang::common`]: "year", "next", "makes"), conversational filler, a number,
//!   a contraction, or shaped like a verb or adjective by its place: after a subject or
//!   auxiliary ("we *baked*", "to *adopt*"), after a copula or intensifier ("it's *normal*",
//!   "so *dry*"), an "-ed" form or an "-ly" adverb. Speakers' names say who talked, not
//!   about what, and are never terms.
//! - **Weights (c-TF-IDF).** A term's weight in a cluster is the number of members that
//!   contain it times log(1 + A / f), where f is the number of memories that contain it
//!   anywhere and A the mean cluster size; multi-word phrases get a small bonus. In a
//!   cluster of four or more a term must occur in at least two members.
//! - **Unique labels.** Terms are handed out best weight first across all clusters: a term
//!   labels one cluster only, and the terms of one label share no word. A label is up to
//!   three terms, the strongest first; no two clusters get the same label.

use crate::lang::{common, entities, words};
use std::collections::{HashMap, HashSet};

/// The separator between a label's terms.
pub const SEP: &str = " · ";

/// Words that join a multi-word name ("Isle of Skye"): a label check skips them there.
const NAME_JOINERS: &[&str] = &["of", "the", "de", "la", "del", "van", "von", "and"];

/// Conversational filler and time words outside the common-word list that name nothing.
const FILLER: &[&str] = &[
    "haha",
    "hahaha",
    "lol",
    "omg",
    "congrats",
    "congratulations",
    "awesome",
    "amazing",
    "cool",
    "thanks",
    "glad",
    "hey",
    "wow",
    "yay",
    "hmm",
    "btw",
    "gonna",
    "wanna",
    "gotta",
    "kinda",
    "sorta",
    "stuff",
    "something",
    "anything",
    "everything",
    "nothing",
    "someone",
    "anyone",
    "everyone",
    "somebody",
    "anybody",
    "everybody",
    "lots",
    "tons",
    "super",
    "totally",
    "definitely",
    "absolutely",
    "honestly",
    "literally",
    "exciting",
    "excited",
    "fantastic",
    "wonderful",
    "incredible",
    "lovely",
    "okay",
    "yep",
    "nope",
    "yeah",
    "hello",
    "weekend",
    "weekends",
    "morning",
    "mornings",
    "evening",
    "evenings",
    "afternoon",
    "tonight",
    "tomorrow",
    "yesterday",
    "today",
    "ago",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "aren",
    "took",
    "came",
    "told",
    "glad",
    "sorry",
    "tips",
    "advice",
    "plenty",
    "bunch",
    "whatever",
    "anyway",
    "anyways",
    "though",
    "although",
    "maybe",
    "perhaps",
    "sure",
    "rest",
    "familiar",
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fifteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "hundred",
    "thousand",
    "dozen",
    "bye",
    "plus",
    "fave",
    "fam",
    "vid",
    "vids",
    "pic",
    "pics",
    "biz",
    "blast",
    "awe",
    "tho",
    "bro",
];

/// Words after which the next word is a verb ("we baked", "to adopt", "I'll try").
const VERB_CUES: &[&str] = &[
    "i", "we", "you", "they", "he", "she", "to", "will", "would", "can", "could", "should", "must",
    "might", "may", "did", "didn't", "don't", "doesn't", "won't", "can't", "i'll", "we'll",
    "you'll", "they'll", "i've", "we've", "you've", "they've", "i'd", "we'd", "i'm", "we're",
    "you're", "they're", "he's", "she's", "just", "also", "finally", "already", "still", "never",
    "always", "often", "usually", "actually", "probably", "gonna", "wanna", "let's", "please",
    "who",
];

/// Words after which the word before is a verb ("reminds *me*", "helping *others*").
const OBJECTS: &[&str] = &[
    "me",
    "you",
    "him",
    "us",
    "them",
    "myself",
    "yourself",
    "himself",
    "herself",
    "ourselves",
    "themselves",
    "others",
    "it",
];

/// Determiners after which an "-ing" word before them is a verb ("telling *the* kids").
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "these", "those", "some",
    "every", "all",
];

/// Words after which the next word describes rather than names ("it's normal", "so dry").
const ADJ_CUES: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "am",
    "be",
    "been",
    "being",
    "it's",
    "that's",
    "feel",
    "feels",
    "felt",
    "seems",
    "seem",
    "seemed",
    "look",
    "looks",
    "looked",
    "sounds",
    "sound",
    "so",
    "very",
    "too",
    "pretty",
    "quite",
    "super",
    "really",
    "extremely",
    "incredibly",
    "become",
    "became",
    "stay",
    "stayed",
];

fn is_filler(w: &str) -> bool {
    static SET: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| FILLER.iter().copied().collect())
        .contains(w)
        || is_laugh(w)
}

/// "haha", "ahhahha", "hehe", "lolol".
fn is_laugh(w: &str) -> bool {
    let only = |set: &str| w.chars().all(|c| set.contains(c));
    (w.contains('h') && (only("ah") || only("eh"))) || (w.starts_with("lol") && only("lo"))
}

/// Whether a lower-case word can stand in a label: alphabetic, three letters or more, not
/// a stopword, common word or filler, and not a speaker's name.
fn label_word(w: &str, skip: &HashSet<String>) -> bool {
    w.chars().count() >= 3
        && w.chars().all(char::is_alphabetic)
        && !crate::text::is_stopword(w)
        && !common::is_common(w)
        && !is_filler(w)
        && !skip.contains(w)
}

/// What finds the terms of texts: the speakers' names (people, and never terms).
#[derive(Debug, Clone, Default)]
pub struct Extractor {
    known: Vec<String>,
    skip: HashSet<String>,
}

impl Extractor {
    /// Whether a capitalised word is a short form of a speaker's name ("Mel" for Melanie).
    fn short_name(&self, lower: &str) -> bool {
        lower.chars().count() >= 3 && self.skip.iter().any(|n| n.starts_with(lower))
    }

    /// `speakers`: the store's speaker names (actors).
    pub fn new<S: AsRef<str>>(speakers: &[S]) -> Self {
        let known: Vec<String> = speakers.iter().map(|s| s.as_ref().to_string()).collect();
        let skip = known
            .iter()
            .flat_map(|s| words(s).into_iter().map(|w| w.lower))
            .map(|w| w.strip_suffix("'s").map(str::to_string).unwrap_or(w))
            .collect();
        Extractor { known, skip }
    }

    /// The distinct terms of `text` (keys: lower-case words joined by spaces). Named
    /// entities' written forms are counted into `shown`.
    pub fn terms(&self, text: &str, shown: &mut Shown) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for e in entities::extract_entities(text, None, &self.known) {
            if e.kind == entities::EntityKind::Possession {
                continue;
            }
            let ws: Vec<&str> = e.key.split(' ').collect();
            let joiner = |w: &str| NAME_JOINERS.contains(&w);
            if ws.len() > 4
                || ws.first().is_some_and(|w| joiner(w))
                || ws.last().is_some_and(|w| joiner(w))
                || !ws
                    .iter()
                    .filter(|w| !joiner(w))
                    .all(|w| label_word(w, &self.skip) && !self.short_name(w))
            {
                continue;
            }
            *shown
                .0
                .entry(e.key.clone())
                .or_default()
                .entry(e.text.clone())
                .or_default() += 1;
            if seen.insert(e.key.clone()) {
                out.push(e.key);
            }
        }
        for run in self.runs(text) {
            for n in 1..=run.len().min(3) {
                // A phrase ends in a noun: an adjective or verb may only describe one.
                for span in run.windows(n) {
                    if span.last().is_some_and(|w| common::is_not_noun(&w.0)) {
                        continue;
                    }
                    // The head noun singular: "socks" and "sock" are one term.
                    let mut key_words: Vec<String> = span.iter().map(|w| w.0.clone()).collect();
                    if let Some(last) = key_words.last_mut() {
                        *last = entities::singular(last);
                    }
                    let key = key_words.join(" ");
                    let written = span
                        .iter()
                        .map(|w| w.1.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    *shown
                        .0
                        .entry(key.clone())
                        .or_default()
                        .entry(written)
                        .or_default() += 1;
                    if seen.insert(key.clone()) {
                        out.push(key);
                    }
                }
            }
        }
        out
    }

    /// Runs of content words: the noun-phrase chunks of `text`, each word lower-case and
    /// as written (a sentence's capital first letter dropped).
    fn runs(&self, text: &str) -> Vec<Vec<(String, String)>> {
        let ws = words(text);
        let mut runs = Vec::new();
        let mut run: Vec<(String, String)> = Vec::new();
        for (i, w) in ws.iter().enumerate() {
            let between = if i > 0 {
                &text[ws[i - 1].end..w.start]
            } else {
                ""
            };
            let joined = i > 0 && between.chars().all(char::is_whitespace);
            let starts_sentence = i == 0 || between.contains(['.', '!', '?', '\n', ':', '"', '“']);
            let prev = if joined { ws[i - 1].lower.as_str() } else { "" };
            let lower = w.lower.as_str();
            let n = lower.len();
            let next = ws
                .get(i + 1)
                .filter(|nx| text[w.end..nx.start].chars().all(char::is_whitespace))
                .map_or("", |nx| nx.lower.as_str());
            let raw = &text[w.start..w.end];
            let capital = raw.chars().next().is_some_and(char::is_uppercase);
            // A verb or adjective by its place, an "-ly" adverb or an "-ed" form ends a run.
            let by_place = VERB_CUES.contains(&prev)
                || ADJ_CUES.contains(&prev)
                || OBJECTS.contains(&next)
                || (lower.ends_with("ing") && DETERMINERS.contains(&next));
            let by_shape = (n > 4 && lower.ends_with("ly"))
                || (lower.ends_with("ed") && !lower.ends_with("eed"));
            let short_name = capital && self.short_name(lower);
            let content = label_word(lower, &self.skip) && !(short_name || by_place || by_shape);
            if (!joined || !content) && !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
            if content {
                let acronym = raw.chars().all(|c| !c.is_lowercase());
                let written = if starts_sentence && !acronym {
                    lower.to_string()
                } else {
                    raw.to_string()
                };
                run.push((lower.to_string(), written));
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
        runs
    }
}

/// Written forms of terms by key, with their counts (the most frequent is shown).
#[derive(Debug, Clone, Default)]
pub struct Shown(HashMap<String, HashMap<String, usize>>);

impl Shown {
    /// How a term is shown: as most often written (a named entity capitalised, a phrase in
    /// lower case unless written otherwise inside sentences).
    pub fn show(&self, key: &str) -> String {
        self.0
            .get(key)
            .and_then(|forms| {
                forms
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|f| f.0.clone())
            })
            .unwrap_or_else(|| key.to_string())
    }
}

/// Term frequencies over every memory (the f of c-TF-IDF) and how entities are written.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub extractor: Extractor,
    df: HashMap<String, usize>,
    docs: usize,
    pub shown: Shown,
}

impl Corpus {
    /// Terms of every text in `texts`; returns the corpus and each text's terms.
    pub fn build<'a>(
        texts: impl IntoIterator<Item = &'a str>,
        extractor: Extractor,
    ) -> (Self, Vec<Vec<String>>) {
        let mut c = Corpus {
            extractor,
            ..Corpus::default()
        };
        let mut all = Vec::new();
        for t in texts {
            let terms = c.extractor.terms(t, &mut c.shown);
            for k in &terms {
                *c.df.entry(k.clone()).or_default() += 1;
            }
            c.docs += 1;
            all.push(terms);
        }
        (c, all)
    }

    /// The terms of a text not in the corpus (entities' written forms are not recorded).
    pub fn terms(&self, text: &str) -> Vec<String> {
        self.extractor.terms(text, &mut Shown::default())
    }
}

/// A cluster's candidate terms, best first: (weight, key).
fn candidates(
    members: &[&[String]],
    corpus: &Corpus,
    clusters: usize,
    min_members: usize,
) -> Vec<(f64, String)> {
    let mut tf: HashMap<&str, usize> = HashMap::new();
    for terms in members {
        for t in terms.iter() {
            *tf.entry(t.as_str()).or_default() += 1;
        }
    }
    let mean_size = corpus.docs.max(1) as f64 / clusters.max(1) as f64;
    let mut out: Vec<(f64, String)> = tf
        .into_iter()
        .filter(|(_, n)| *n >= min_members)
        .map(|(t, n)| {
            let f = corpus.df.get(t).copied().unwrap_or(n).max(n) as f64;
            let words = t.split(' ').count() as f64;
            let w = n as f64 * (1.0 + mean_size / f).ln() * (1.0 + 0.3 * (words - 1.0));
            (w, t.to_string())
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out
}

fn min_members(size: usize) -> usize {
    if size >= 4 {
        2
    } else {
        1
    }
}

fn overlaps(a: &str, b: &str) -> bool {
    let aw: HashSet<&str> = a.split(' ').collect();
    b.split(' ').any(|w| aw.contains(w))
}

/// Labels for clusters given each member's terms (`groups[c]` = the term lists of cluster
/// c's members), unique across the clusters; see the module doc.
pub fn labels(groups: &[Vec<&[String]>], corpus: &Corpus, max_terms: usize) -> Vec<String> {
    let k = groups.len();
    let cands: Vec<Vec<(f64, String)>> = groups
        .iter()
        .map(|g| candidates(g, corpus, k, min_members(g.len())))
        .collect();
    let mut all: Vec<(f64, usize, &str)> = cands
        .iter()
        .enumerate()
        .flat_map(|(c, list)| list.iter().map(move |(w, t)| (*w, c, t.as_str())))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    let mut used: HashSet<&str> = HashSet::new();
    let mut chosen: Vec<Vec<&str>> = vec![Vec::new(); k];
    for (_, c, t) in all {
        if chosen[c].len() >= max_terms
            || used.contains(t)
            || chosen[c].iter().any(|o| overlaps(o, t))
        {
            continue;
        }
        used.insert(t);
        chosen[c].push(t);
    }
    let used: HashSet<String> = used.into_iter().map(str::to_string).collect();
    let mut out = Vec::with_capacity(k);
    let mut taken: HashSet<String> = HashSet::new();
    for (c, terms) in chosen.into_iter().enumerate() {
        let mut label = show(&terms, corpus);
        if label.is_empty() {
            // Every distinctive term went to other clusters: the best of its own.
            label = fallback(&cands[c], groups[c].as_slice(), corpus, k, max_terms, &used);
        }
        out.push(unique(label, &mut taken));
    }
    out
}

/// The label of one cluster (`members`: its members' terms) whose terms are not among
/// `taken` (the terms of the other clusters' labels), with `clusters` live clusters.
pub fn label_one(
    members: &[&[String]],
    corpus: &Corpus,
    clusters: usize,
    taken: &HashSet<String>,
    max_terms: usize,
) -> String {
    let cands = candidates(members, corpus, clusters, min_members(members.len()));
    let mut chosen: Vec<&str> = Vec::new();
    for (_, t) in &cands {
        if chosen.len() >= max_terms {
            break;
        }
        if taken.contains(t) || chosen.iter().any(|o| overlaps(o, t)) {
            continue;
        }
        chosen.push(t);
    }
    let label = show(&chosen, corpus);
    if label.is_empty() {
        fallback(&cands, members, corpus, clusters, max_terms, taken)
    } else {
        label
    }
}

/// The terms (keys) of a label, for excluding them from other clusters' labels.
pub fn label_terms(label: &str) -> impl Iterator<Item = String> + '_ {
    label.split(SEP).map(entities::name_key)
}

fn show(terms: &[&str], corpus: &Corpus) -> String {
    terms
        .iter()
        .map(|t| corpus.shown.show(t))
        .collect::<Vec<_>>()
        .join(SEP)
}

/// A label when the distinctive terms are taken: the cluster's own best terms that no
/// other label uses (`used`), else its best terms, else its terms seen once, else "mixed
/// topics".
fn fallback(
    cands: &[(f64, String)],
    members: &[&[String]],
    corpus: &Corpus,
    clusters: usize,
    max_terms: usize,
    used: &HashSet<String>,
) -> String {
    let pick = |list: &[(f64, String)], free: bool| {
        let mut chosen: Vec<&str> = Vec::new();
        for (_, t) in list {
            if chosen.len() < max_terms
                && !(free && used.contains(t))
                && !chosen.iter().any(|o| overlaps(o, t))
            {
                chosen.push(t);
            }
        }
        show(&chosen, corpus)
    };
    let once = candidates(members, corpus, clusters, 1);
    for label in [
        pick(cands, true),
        pick(&once, true),
        pick(cands, false),
        pick(&once, false),
    ] {
        if !label.is_empty() {
            return label;
        }
    }
    "mixed topics".into()
}

/// `label`, or with " (2)", " (3)", … when another cluster has it already.
fn unique(label: String, taken: &mut HashSet<String>) -> String {
    let mut out = label.clone();
    let mut n = 2;
    while !taken.insert(out.clone()) {
        out = format!("{label} ({n})");
        n += 1;
    }
    out
}

/// The words of `label` among the most common English words (joiners inside a multi-word
/// name such as "Isle of Skye" excepted): what the label check over real data
/// requires to be empty.
pub fn common_words_in(label: &str) -> Vec<String> {
    let mut out = Vec::new();
    for term in label.split(SEP) {
        let ws = words(term);
        let name = ws.len() > 1 && term.chars().next().is_some_and(char::is_uppercase);
        for (i, w) in ws.iter().enumerate() {
            let joiner = name && i > 0 && i + 1 < ws.len() && NAME_JOINERS.contains(&&*w.lower);
            let bare = w.lower.strip_suffix("'s").unwrap_or(&w.lower);
            if !joiner && common::is_common(bare) {
                out.push(w.lower.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms_of(text: &str) -> Vec<String> {
        Extractor::new(&["Maya", "Somna"]).terms(text, &mut Shown::default())
    }

    fn label_all(groups: &[Vec<&str>], max_terms: usize) -> Vec<String> {
        let (corpus, terms) = Corpus::build(
            groups.iter().flatten().copied(),
            Extractor::new(&["Maya", "Somna"]),
        );
        let mut it = terms.iter();
        let grouped: Vec<Vec<&[String]>> = groups
            .iter()
            .map(|g| g.iter().map(|_| it.next().unwrap().as_slice()).collect())
            .collect();
        labels(&grouped, &corpus, max_terms)
    }

    #[test]
    fn phrases_are_runs_of_content_words_without_verbs_or_common_words() {
        let t = terms_of("We went to a pottery class and I baked sourdough bread yesterday.");
        assert!(t.contains(&"pottery".to_string()), "{t:?}");
        assert!(t.contains(&"sourdough bread".to_string()), "{t:?}");
        // "went", "class", "baked", "yesterday": common, a verb, filler.
        for w in ["went", "class", "baked", "yesterday", "pottery class"] {
            assert!(!t.contains(&w.to_string()), "{w} in {t:?}");
        }
        // A word after a subject is a verb; after a copula, an adjective.
        let t = terms_of("We hike every week. The trail is steep, so dry.");
        assert!(
            !t.iter().any(|k| k == "hike" || k == "steep" || k == "dry"),
            "{t:?}"
        );
        assert!(t.contains(&"trail".to_string()), "{t:?}");
        // Speakers' names and numbers are not terms; places are named entities.
        let t = terms_of("Maya ran 21 km along the Tagus river in Lisbon.");
        assert!(
            !t.iter().any(|k| k.contains("maya") || k.contains("21")),
            "{t:?}"
        );
        assert!(t.contains(&"lisbon".to_string()), "{t:?}");
    }

    #[test]
    fn laughter_and_short_forms_of_speakers_are_not_terms() {
        let t = terms_of("Ahhahha, hah! Lolol. I told Mayo and Som about the quilt.");
        assert!(
            !t.iter().any(|k| k.contains("hah") || k.contains("lol")),
            "{t:?}"
        );
        // "Som" is short for the speaker Somna; "Mayo" is not a prefix of Maya.
        assert!(!t.contains(&"som".to_string()), "{t:?}");
        assert!(t.contains(&"quilt".to_string()), "{t:?}");
    }

    #[test]
    fn entities_are_shown_as_written() {
        let (corpus, _) = Corpus::build(
            [
                "I signed up for the Lisbon Marathon.",
                "The Lisbon Marathon is in October.",
            ],
            Extractor::new(&["Maya"]),
        );
        assert_eq!(corpus.shown.show("lisbon marathon"), "Lisbon Marathon");
        assert_eq!(corpus.shown.show("sourdough"), "sourdough");
    }

    #[test]
    fn c_tf_idf_prefers_terms_concentrated_in_the_cluster() {
        let hiking = vec![
            "Hiking the ridge trail with new boots on the summit.",
            "The ridge trail was muddy but the summit view paid off.",
            "Bought hiking boots for the ridge trail.",
            "Summit photos from the ridge trail, and the boots held up.",
        ];
        let cooking = vec![
            "Tried a garlic pasta recipe with fresh basil.",
            "The pasta sauce needs more garlic and basil.",
            "Garlic bread and pasta tonight, basil from the balcony.",
            "My pasta recipe uses garlic, tomato and basil.",
        ];
        let out = label_all(&[hiking, cooking], 3);
        assert!(out[0].contains("ridge trail"), "{out:?}");
        assert!(
            out[0].contains("summit") || out[0].contains("boots"),
            "{out:?}"
        );
        assert!(
            out[1].contains("garlic") && out[1].contains("pasta"),
            "{out:?}"
        );
        for l in &out {
            assert!(common_words_in(l).is_empty(), "{l}");
            assert!(!l.contains("the"), "{l}");
        }
    }

    #[test]
    fn labels_are_unique_and_share_no_term() {
        // Two clusters about the same thing: the term goes to one, the other gets its own.
        let a = vec![
            "Sourdough starter fed with rye flour.",
            "My sourdough starter smells of rye.",
            "Rye flour makes the sourdough starter bubbly.",
        ];
        let b = vec![
            "Sourdough loaf with a crisp crust.",
            "The sourdough loaf crust cracked in the oven.",
            "Sourdough loaf, crust too dark.",
        ];
        let out = label_all(&[a.clone(), b.clone(), a, b], 3);
        let set: HashSet<&String> = out.iter().collect();
        assert_eq!(set.len(), 4, "{out:?}");
        let t0: HashSet<String> = label_terms(&out[0]).collect();
        let t1: HashSet<String> = label_terms(&out[1]).collect();
        assert!(t0.is_disjoint(&t1), "{out:?}");
    }

    #[test]
    fn the_common_word_check_names_offending_words() {
        assert_eq!(
            common_words_in("enjoy · classic · sounds"),
            vec!["enjoy", "sounds"]
        );
        assert_eq!(
            common_words_in("talked · september · october"),
            vec!["talked", "september", "october"]
        );
        assert!(common_words_in("sourdough starter · Isle of Skye").is_empty());
        assert_eq!(common_words_in("the rings"), vec!["the"]);
    }

    #[test]
    fn label_one_avoids_terms_other_clusters_use() {
        let texts = [
            "Bouldering gym with chalk and crash pads.",
            "Chalk bag and climbing shoes for the bouldering gym.",
            "Crash pads at the bouldering gym again.",
        ];
        let (corpus, terms) = Corpus::build(texts, Extractor::new::<&str>(&[]));
        let members: Vec<&[String]> = terms.iter().map(Vec::as_slice).collect();
        let free = label_one(&members, &corpus, 1, &HashSet::new(), 3);
        assert!(free.contains("bouldering gym"), "{free}");
        let taken: HashSet<String> = label_terms("bouldering gym · chalk").collect();
        let other = label_one(&members, &corpus, 1, &taken, 3);
        assert!(
            !other.contains("bouldering gym") && !other.starts_with("chalk"),
            "{other}"
        );
        assert!(!other.is_empty());
    }
}
