//! Whether a sentence or a turn asks something. A question mark says so; chat often goes
//! without one ("what did you do this weekend", "any plans for the summer"), so a sentence
//! with no stop at its end is read by how it opens. A sentence that ends in '.' or '!' is
//! a statement or an exclamation whatever its first words ("How cool is that!").

use super::words;

/// Words that open a question whatever follows ("where did…", "why not…").
const WH: &[&str] = &[
    "what", "what's", "whats", "where", "where's", "when", "when's", "who", "who's", "whose",
    "whom", "why", "which", "how's", "hows", "how'd", "wanna", "anything", "any",
];

/// Words after "how" that make it ask ("how long…", "how did…"); after others it
/// exclaims ("how cool is that").
const HOW_ASKS: &[&str] = &[
    "long", "many", "much", "often", "old", "far", "come", "about", "is", "are", "was", "were",
    "did", "do", "does", "have", "has", "had", "can", "could", "would", "will", "should", "so",
    "you", "u", "ya", "we", "they", "he", "she", "it", "i", "your", "the",
];

/// Auxiliaries that open a question when a subject follows ("did you…", "is it…").
const AUXILIARIES: &[&str] = &[
    "do", "does", "did", "are", "is", "was", "were", "have", "has", "had", "can", "could", "will",
    "would", "should", "shall", "may", "might", "don't", "didn't", "doesn't", "aren't", "isn't",
    "wasn't", "haven't", "hasn't", "won't", "wouldn't", "can't", "couldn't", "r",
];

/// Subjects after an auxiliary.
const SUBJECTS: &[&str] = &[
    "you", "u", "ya", "y'all", "we", "they", "he", "she", "it", "i", "your", "that", "this",
    "there", "the", "anyone", "anybody", "everyone", "any", "yours",
];

/// Whether `sentence` asks something: it ends with '?', or it has no stop at its end and
/// opens as a question does.
pub fn is_question(sentence: &str) -> bool {
    // (a closing smiley or emoji is not the sentence's end: "what did you do :)")
    let s =
        sentence.trim_end_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '?' | '.' | '!'));
    if s.ends_with('?') {
        return true;
    }
    if s.ends_with(['.', '!']) {
        return false;
    }
    opens_a_question(s)
}

/// Whether the last sentence of `text` asks something (so a reply to it answers it).
pub fn ends_with_question(text: &str) -> bool {
    let t = text.trim_end_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '?' | '.' | '!'));
    let core = t.trim_end_matches(['?', '.', '!']);
    let start = core.rfind(['.', '!', '?', '\n']).map_or(0, |p| p + 1);
    is_question(&t[start..])
}

fn opens_a_question(s: &str) -> bool {
    let w = words(s);
    let (Some(first), second) = (w.first(), w.get(1)) else {
        return false;
    };
    let second = second.map_or("", |w| w.lower.as_str());
    match first.lower.as_str() {
        // "what a day", "what an idea": exclamations
        "what" => !matches!(second, "a" | "an"),
        "how" => HOW_ASKS.contains(&second),
        "you" => matches!(second, "ever" | "wanna" | "think" | "going" | "gonna"),
        "ever" => matches!(second, "been" | "tried" | "seen" | "heard" | "thought"),
        "got" => matches!(second, "any" | "anything"),
        f if WH.contains(&f) => true,
        // ("do it now", "don't this…": an order, not a question)
        "do" | "don't" => matches!(
            second,
            "you" | "u" | "ya" | "y'all" | "we" | "they" | "he" | "she" | "i" | "anyone"
        ),
        f if AUXILIARIES.contains(&f) => SUBJECTS.contains(&second),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_mark_asks_and_a_stop_states() {
        assert!(is_question("Did you go?"));
        assert!(is_question("You went there?"));
        assert!(!is_question("What a day."));
        assert!(!is_question("How cool is that!"));
        assert!(!is_question("Did you know, I went."));
    }

    #[test]
    fn chat_questions_without_a_question_mark_are_read_by_their_opening() {
        for q in [
            "what did you do this weekend",
            "where did you go",
            "did you like it",
            "is it far from here",
            "any plans for the summer",
            "how long have you been painting",
            "how's the new job :)",
            "ever been to spain",
            "got any tips",
            "r u coming",
            "wanna grab lunch",
        ] {
            assert!(is_question(q), "{q}");
        }
        for s in [
            "what a day",
            "how cool is that",
            "i went to the beach",
            "you did great",
            "do it now",
            "thanks so much",
            "",
        ] {
            assert!(!is_question(s), "{s}");
        }
    }

    #[test]
    fn a_turn_asks_when_its_last_sentence_does() {
        assert!(ends_with_question("That's great! What did you do?"));
        assert!(ends_with_question("That's great! what did you do"));
        assert!(ends_with_question("Nice.\nhow was it 😊"));
        assert!(!ends_with_question("What did you do? I went hiking."));
        assert!(!ends_with_question("I went hiking"));
    }
}
