//! Causal cues in a turn's text (seed 001's causal links): "because", "since", "due to",
//! "so", "therefore", "as a result", "led to", "caused", "that's why"… A cue splits a
//! sentence into a cause and an effect clause. The turn holding the cue is the effect's
//! bubble; its cause is found elsewhere in the conversation: the earlier memory most
//! similar to the cause clause, or, when the cause is only a reference ("As a result, …",
//! "So I quit", "That led to …"), the turn just before.

/// What a cue says about the turn it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CausalCue {
    /// The cue as found (lowercase), e.g. "because".
    pub marker: &'static str,
    /// The cause clause; `None` when the cause is a reference to what came before.
    pub cause: Option<String>,
    /// The effect clause (may be empty when the cue opens the sentence).
    pub effect: String,
}

/// Where the cause sits relative to the cue.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// "X because Y": the cause follows the cue.
    After,
    /// "Y, so X", "Y led to X": the cause precedes the cue.
    Before,
}

/// Cues, longest first so "because of" wins over "because".
const CUES: &[(&str, Side)] = &[
    ("as a result of", Side::After),
    ("as a consequence of", Side::After),
    ("because of", Side::After),
    ("because", Side::After),
    ("due to", Side::After),
    ("owing to", Side::After),
    ("thanks to", Side::After),
    ("caused by", Side::After),
    ("since", Side::After),
    ("as a result", Side::Before),
    ("as a consequence", Side::Before),
    ("consequently", Side::Before),
    ("therefore", Side::Before),
    ("that's why", Side::Before),
    ("that is why", Side::Before),
    ("which is why", Side::Before),
    ("this is why", Side::Before),
    ("led to", Side::Before),
    ("leads to", Side::Before),
    ("lead to", Side::Before),
    ("leading to", Side::Before),
    ("resulted in", Side::Before),
    ("results in", Side::Before),
    ("caused", Side::Before),
    ("causes", Side::Before),
    ("so", Side::Before),
];

/// Words that may follow a clause-opening "so" or "since" when it introduces a clause
/// (as opposed to "so much", "so happy", "since 2019").
const CLAUSE_SUBJECTS: &[&str] = &[
    "i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "you", "you're", "he",
    "he's", "she", "she's", "they", "they're", "it", "it's", "that", "this", "my", "our", "now",
    "now,", "let's", "there", "the", "his", "her", "their",
];

/// A cause clause that only points back at what came before.
const REFERENCES: &[&str] = &[
    "", "that", "this", "it", "which", "all that", "all this", "this all",
];

/// Finds the first causal cue of `text`, if any.
pub fn find_cue(text: &str) -> Option<CausalCue> {
    for sentence in sentences(text) {
        let lower = sentence.to_lowercase();
        let words: Vec<(usize, &str)> = word_spans(&lower);
        for (wi, &(start, _)) in words.iter().enumerate() {
            for &(cue, side) in CUES {
                let cue_words: Vec<&str> = cue.split(' ').collect();
                if wi + cue_words.len() > words.len() {
                    continue;
                }
                let matches = cue_words
                    .iter()
                    .enumerate()
                    .all(|(k, w)| strip(words[wi + k].1) == *w);
                if !matches {
                    continue;
                }
                let next = words.get(wi + cue_words.len()).map(|w| strip(w.1));
                if !accepts(cue, next, wi, &lower, start) {
                    continue;
                }
                let end =
                    words[wi + cue_words.len() - 1].0 + words[wi + cue_words.len() - 1].1.len();
                let before = clause(&sentence[..start]);
                let after = clause(&sentence[end..]);
                let (cause, effect) = match side {
                    Side::After => (after, before),
                    Side::Before => (before, after),
                };
                let cause = (!REFERENCES.contains(&cause.to_lowercase().as_str())
                    && cause.split_whitespace().count() >= 2)
                    .then_some(cause);
                return Some(CausalCue {
                    marker: cue,
                    cause,
                    effect,
                });
            }
        }
    }
    None
}

/// Whether an ambiguous cue is causal here. "so" must open a clause (start of the
/// sentence or after a comma/"and") and be followed by a subject; "since" must be followed
/// by a subject that does not start a time ("since I was a kid", "since 2019").
fn accepts(cue: &str, next: Option<&str>, wi: usize, lower: &str, start: usize) -> bool {
    match cue {
        "so" => {
            let prev = lower[..start].trim_end();
            let opens =
                wi == 0 || prev.ends_with(',') || prev.ends_with(" and") || prev.ends_with('-');
            opens && next.is_some_and(|n| CLAUSE_SUBJECTS.contains(&n))
        }
        "since" => {
            let rest = lower[start..].trim_start_matches("since").trim_start();
            next.is_some_and(|n| CLAUSE_SUBJECTS.contains(&n) && n != "then")
                && ![
                    "i was",
                    "we were",
                    "he was",
                    "she was",
                    "they were",
                    "the day",
                    "the time",
                    "we last",
                    "i last",
                    "you last",
                    "we spoke",
                    "we talked",
                    "we chatted",
                ]
                .iter()
                .any(|t| rest.starts_with(t))
        }
        "caused" | "causes" => next.is_some_and(|n| !["by"].contains(&n)),
        _ => true,
    }
}

/// The sentences of `text` (split after . ! ? ; and newlines, keeping the text).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut begin = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | ';' | '\n') {
            let s = &text[begin..i];
            if !s.trim().is_empty() {
                out.push(s);
            }
            begin = i + c.len_utf8();
        }
    }
    if !text[begin..].trim().is_empty() {
        out.push(&text[begin..]);
    }
    out
}

/// (byte offset, word) of each whitespace-separated word.
fn word_spans(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(b)) => {
                out.push((b, &s[b..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, &s[b..]));
    }
    out
}

fn strip(w: &str) -> &str {
    w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
}

fn clause(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| c == ',' || c == '-' || c == ':' || c.is_whitespace())
        .trim_start_matches("and ")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(t: &str) -> Option<(&'static str, Option<String>, String)> {
        find_cue(t).map(|c| (c.marker, c.cause, c.effect))
    }

    #[test]
    fn explicit_causes_are_split_from_their_effects() {
        assert_eq!(
            cue("I'm moving back home because I lost my job at the bakery."),
            Some((
                "because",
                Some("I lost my job at the bakery".into()),
                "I'm moving back home".into()
            ))
        );
        assert_eq!(
            cue("The deploy failed, so we rolled back the release"),
            Some((
                "so",
                Some("The deploy failed".into()),
                "we rolled back the release".into()
            ))
        );
        assert_eq!(
            cue("The flaky migration test led to a week of broken builds!"),
            Some((
                "led to",
                Some("The flaky migration test".into()),
                "a week of broken builds".into()
            ))
        );
        assert_eq!(
            cue("We missed the train due to the storm.").map(|c| c.1),
            Some(Some("the storm".into()))
        );
    }

    #[test]
    fn references_point_back() {
        assert_eq!(cue("As a result, I quit.").map(|c| c.1), Some(None));
        assert_eq!(
            cue("So I decided to quit.").map(|c| (c.0, c.1)),
            Some(("so", None))
        );
        assert_eq!(cue("That led to the outage.").map(|c| c.1), Some(None));
        assert_eq!(cue("That's why I'm late").map(|c| c.1), Some(None));
    }

    #[test]
    fn non_causal_uses_are_ignored() {
        assert_eq!(cue("I'm so happy for you!"), None);
        assert_eq!(cue("Thanks so much, that means a lot"), None);
        assert_eq!(cue("I've lived here since 2019."), None);
        assert_eq!(cue("I've painted since I was a kid."), None);
        assert_eq!(
            cue("A lot's happened since we last chatted - I joined a group."),
            None
        );
        assert_eq!(cue("What a lovely day at the beach."), None);
    }
}
