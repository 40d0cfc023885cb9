//! Word lists for cluster labels. The most common English words (`common_en.txt`:
//! wordfreq's top 1,000, CC BY-SA 4.0; its header says where it comes from): a word among
//! them names nothing on its own ("year", "next", "makes", "talked"), so labels leave them
//! out, and a check over real data fails when one appears in a label. And words that are
//! rarely nouns (`not_nouns_en.txt`: adjectives, verbs and adverbs by WordNet 3.0 among
//! wordfreq's 30,000 most frequent words): they may describe a noun in a label's phrase
//! ("swollen ankles") but do not end one ("positive", "accept", "dry").

use std::collections::HashSet;
use std::sync::OnceLock;

const LIST: &str = include_str!("common_en.txt");
const NOT_NOUNS: &str = include_str!("not_nouns_en.txt");

fn words_of(list: &'static str) -> HashSet<&'static str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

fn set() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| words_of(LIST))
}

/// Whether the lower-case `word` (or the plain form it inflects) is rarely a noun.
pub fn is_not_noun(word: &str) -> bool {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let s = SET.get_or_init(|| words_of(NOT_NOUNS));
    s.contains(word)
        || inflection_bases(word)
            .iter()
            .any(|b| s.contains(b.as_str()))
}

/// How many words the list holds.
pub fn len() -> usize {
    set().len()
}

/// Whether the lower-case `word`, or the plain form it inflects ("makes" → "make",
/// "talked" → "talk", "stories" → "story", "planned" → "plan"), is one of the most common
/// English words. An "-ing" form is judged as written: "camping" names an activity even
/// though "camp" is common, while the common "-ing" forms ("going", "thinking") are in
/// the list themselves.
pub fn is_common(word: &str) -> bool {
    let s = set();
    if s.contains(word) {
        return true;
    }
    inflection_bases(word)
        .iter()
        .any(|b| s.contains(b.as_str()))
}

/// The forms `word` may inflect: plural or third person "-s"/"-es"/"-ies", past "-ed"/"-d"
/// with a doubled consonant undone, possessive "'s".
fn inflection_bases(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let n = word.len();
    if !word.is_ascii() || n < 4 {
        return out;
    }
    if let Some(b) = word.strip_suffix("'s") {
        out.push(b.to_string());
    }
    if let Some(b) = word.strip_suffix("ies") {
        out.push(format!("{b}y"));
    }
    if let Some(b) = word.strip_suffix("es") {
        out.push(b.to_string());
    }
    if let Some(b) = word.strip_suffix('s') {
        if !b.ends_with('s') {
            out.push(b.to_string());
        }
    }
    if let Some(b) = word.strip_suffix("ied") {
        out.push(format!("{b}y"));
    }
    if let Some(b) = word.strip_suffix("ed") {
        out.push(b.to_string());
        out.push(format!("{b}e"));
        let bytes = b.as_bytes();
        if bytes.len() >= 2 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2] {
            out.push(b[..b.len() - 1].to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_loaded_without_its_header() {
        assert!(len() > 950, "{}", len());
        assert!(is_common("the") && is_common("year") && is_common("next"));
        assert!(!is_common("#"));
    }

    #[test]
    fn adjectives_and_verbs_are_not_nouns() {
        for w in [
            "positive",
            "accept",
            "reminds",
            "dry",
            "passionate",
            "heartbreaking",
        ] {
            assert!(is_not_noun(w), "{w}");
        }
        for w in [
            "painting",
            "concert",
            "dance",
            "sourdough",
            "flowers",
            "horses",
        ] {
            assert!(!is_not_noun(w), "{w}");
        }
    }

    #[test]
    fn inflected_forms_of_common_words_are_common() {
        for w in [
            "makes", "talked", "stories", "planned", "tests", "sounds", "runs",
        ] {
            assert!(is_common(w), "{w}");
        }
        for w in [
            "sourdough",
            "marathon",
            "camping",
            "beagle",
            "dementia",
            "pottery",
        ] {
            assert!(!is_common(w), "{w}");
        }
    }
}
