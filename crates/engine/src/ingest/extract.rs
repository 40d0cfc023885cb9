//! The deterministic extractor (no LLM): a message becomes an episodic bubble with 5W1H,
//! first-person statements of stable properties become facts, and importance comes from
//! what the text carries.

use crate::lang::time::{day_of_ms, find_times, When};
use crate::memory::{W5H1, WHEN_RESOLVED};
use crate::text::find_location;
use chrono::{DateTime, Utc};

/// Formats a Unix-ms time the way people write it: "8 May 2023, 1:56 pm".
pub fn human_time(ms: i64) -> Option<String> {
    let t: DateTime<Utc> = DateTime::from_timestamp_millis(ms)?;
    Some(t.format("%-d %B %Y, %-I:%M %P").to_string())
}

/// The 5W1H `when` of a text written at `occurred_at`: the time it was written, then each
/// time expression of the text resolved against that day: "8 May 2023, 1:56 pm · yesterday
/// = 7 May 2023 · last week = 1–7 May 2023". Vague references ("recently") and expressions
/// that already name their own date are left out.
pub fn grounded_when(text: &str, occurred_at: Option<i64>) -> Option<String> {
    let at = occurred_at?;
    let written = human_time(at)?;
    let resolved: Vec<String> = find_times(text, day_of_ms(at))
        .into_iter()
        .filter(|t| !t.vague)
        .filter_map(|t| match t.when {
            When::Range(r) if !r.label().eq_ignore_ascii_case(&t.phrase) => {
                Some(format!("{} = {}", t.phrase, r.label()))
            }
            _ => None,
        })
        .collect();
    Some(if resolved.is_empty() {
        written
    } else {
        format!("{written}{WHEN_RESOLVED}{}", resolved.join(WHEN_RESOLVED))
    })
}

/// 5W1H of a conversation turn.
pub fn w5h1_for_turn(
    speaker: &str,
    text: &str,
    occurred_at: Option<i64>,
    conversation: &str,
    session: Option<&str>,
) -> W5H1 {
    let place = find_location(text).unwrap_or_else(|| match session {
        Some(s) => format!("{conversation}/{s}"),
        None => conversation.to_string(),
    });
    W5H1 {
        who: Some(speaker.to_string()),
        what: Some(text.to_string()),
        when: grounded_when(text, occurred_at),
        where_: Some(place),
        why: None,
        how: None,
    }
}

/// Openings of first-person statements about stable properties, with their third-person
/// rewrite (`{}` is the speaker).
const FACT_OPENINGS: &[(&str, &str)] = &[
    ("my name is ", "{}'s name is "),
    ("i am allergic to ", "{} is allergic to "),
    ("i'm allergic to ", "{} is allergic to "),
    ("i work as ", "{} works as "),
    ("i work at ", "{} works at "),
    ("i work for ", "{} works for "),
    ("i work in ", "{} works in "),
    ("i live in ", "{} lives in "),
    ("i live with ", "{} lives with "),
    ("i grew up in ", "{} grew up in "),
    ("i was born in ", "{} was born in "),
    ("i'm from ", "{} is from "),
    ("i am from ", "{} is from "),
    ("i'm passionate about ", "{} is passionate about "),
    ("i am passionate about ", "{} is passionate about "),
    (
        "i've always been passionate about ",
        "{} is passionate about ",
    ),
    ("i've always had a love for ", "{} loves "),
    ("i've always loved ", "{} has always loved "),
    ("i've always liked ", "{} has always liked "),
    ("i believe in ", "{} believes in "),
    ("i collect ", "{} collects "),
    ("i own a ", "{} owns a "),
    ("i own an ", "{} owns an "),
    ("i volunteer at ", "{} volunteers at "),
    ("i love ", "{} loves "),
    ("i like ", "{} likes "),
    ("i enjoy ", "{} enjoys "),
    ("i prefer ", "{} prefers "),
    ("i hate ", "{} hates "),
    ("i dislike ", "{} dislikes "),
    ("i don't like ", "{} doesn't like "),
    ("i have a ", "{} has a "),
    ("i have an ", "{} has an "),
    ("i have two ", "{} has two "),
    ("i have three ", "{} has three "),
    ("i've been a ", "{} has been a "),
    ("i am a ", "{} is a "),
    ("i'm a ", "{} is a "),
    ("i am an ", "{} is an "),
    ("i'm an ", "{} is an "),
    ("i study ", "{} studies "),
    ("i speak ", "{} speaks "),
    ("i play ", "{} plays "),
    ("i always ", "{} always "),
    ("i usually ", "{} usually "),
    ("my goal is ", "{}'s goal is "),
    ("my dream is ", "{}'s dream is "),
    ("my favorite ", "{}'s favorite "),
    ("my favourite ", "{}'s favourite "),
    ("my wife ", "{}'s wife "),
    ("my husband ", "{}'s husband "),
    ("my partner ", "{}'s partner "),
    ("my kids ", "{}'s kids "),
    ("my son ", "{}'s son "),
    ("my daughter ", "{}'s daughter "),
    ("my dog ", "{}'s dog "),
    ("my cat ", "{}'s cat "),
    ("my job ", "{}'s job "),
    ("my hobby ", "{}'s hobby "),
    ("my hobbies ", "{}'s hobbies "),
];

/// Words that make a first-person sentence an event rather than a stable property.
const TRANSIENT: &[&str] = &[
    "today",
    "yesterday",
    "tonight",
    "tomorrow",
    "right now",
    "this morning",
    "last night",
    "last week",
    "this week",
    "just ",
    "currently",
    "at the moment",
];

/// Adverbs between "I" and a fact's verb that change nothing about the fact.
const ADVERBS: &[&str] = &[
    "really ",
    "also ",
    "absolutely ",
    "totally ",
    "still ",
    "truly ",
    "definitely ",
    "do ",
];

/// Facts stated in `text` by `speaker`, rewritten in the third person. A fact is the
/// statement's first clause: what follows a comma, a dash, "but" or "because" is the
/// speaker's aside ("I love coconut milk, but I also…" gives "… loves coconut milk").
pub fn extract_facts(speaker: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in split_sentences(text) {
        let lower = sentence.to_lowercase();
        if crate::lang::asks::is_question(&lower) || TRANSIENT.iter().any(|w| lower.contains(w)) {
            continue;
        }
        // Allow a short lead-in such as "Well, " or "Yeah, ".
        let start = lower
            .find(", i ")
            .or_else(|| lower.find(", my "))
            .filter(|&p| p < 12)
            .map_or(0, |p| p + 2);
        // "I really love", "I also enjoy", "I do like": read as "I love", "I enjoy", "I like".
        let body = &lower[start..];
        let adverb = ADVERBS
            .iter()
            .find(|a| body.strip_prefix("i ").is_some_and(|b| b.starts_with(*a)))
            .map_or(0, |a| a.len());
        let without_adverb;
        let body = if adverb == 0 {
            body
        } else {
            without_adverb = format!("i {}", &body["i ".len() + adverb..]);
            &without_adverb
        };
        for (opening, rewrite) in FACT_OPENINGS {
            if body.starts_with(opening) {
                // Odd Unicode can lowercase to a different length: such a sentence is skipped.
                let Some(rest) = sentence.get(start + adverb + opening.len()..) else {
                    break;
                };
                let rest = first_clause(rest);
                let opens_with_love = ["love", "like", "enjoy", "hate"]
                    .iter()
                    .any(|verb| rewrite.contains(verb));
                if rest.len() <= 200
                    && names_something(rest)
                    && !(opens_with_love && is_remark_on_something_shown(rest))
                {
                    if let Some(rest) = in_third_person(rest, opening) {
                        out.push(format!("{}{}", rewrite.replace("{}", speaker), rest));
                    }
                }
                break;
            }
        }
    }
    out
}

/// The first clause of the rest of a statement: up to a comma, a semicolon, a spaced dash,
/// "but", "because", "'cause", "since", or "and I" ("a shooting guard for the team and our
/// season opener is next week"), without a trailing "too" or closing punctuation. Hyphenated
/// words ("dairy-free", "sci-fi") stay whole.
fn first_clause(rest: &str) -> &str {
    const BREAKS: &[&str] = &[
        ",",
        ";",
        ": ",
        " - ",
        " – ",
        " — ",
        "—",
        " but ",
        " because ",
        " 'cause ",
        " cause ",
        " since ",
        " and i ",
        " and i'",
        " and our ",
        " and we ",
        " so i ",
        " when i ",
    ];
    let lower = rest.to_lowercase();
    let end = BREAKS
        .iter()
        .filter_map(|b| lower.find(b))
        .min()
        .unwrap_or(rest.len());
    let mut clause = rest[..end].trim_end_matches(['.', '!', ' ']);
    for tail in [" too", " as well", " also"] {
        if clause.to_lowercase().ends_with(tail) {
            clause = &clause[..clause.len() - tail.len()];
        }
    }
    clause.trim()
}

/// The clause in the third person: "my" becomes "their", "me" "them", "myself" "themself"
/// ("loves running their own studio"); a verb after "always" or "usually" takes its third
/// person ("usually works"). `None` when the clause has a subject of its own in the first
/// person ("a painting in my room to remind me of everything I do"), which reads wrongly
/// rewritten.
fn in_third_person(clause: &str, opening: &str) -> Option<String> {
    let words = crate::lang::words(clause);
    if words.iter().any(|w| {
        matches!(
            w.lower.as_str(),
            "i" | "i'm" | "i've" | "i'd" | "i'll" | "we" | "we're" | "we've" | "our" | "us"
        )
    }) {
        return None;
    }
    let mut out = String::with_capacity(clause.len() + 8);
    let mut at = 0;
    for (n, w) in words.iter().enumerate() {
        let replacement = match w.lower.as_str() {
            "my" => Some("their".to_string()),
            "me" => Some("them".to_string()),
            "myself" => Some("themself".to_string()),
            "mine" => Some("theirs".to_string()),
            _ if n == 0 && (opening.ends_with("always ") || opening.ends_with("usually ")) => {
                Some(third_person_verb(&clause[w.start..w.end]))
            }
            _ => None,
        };
        if let Some(r) = replacement {
            out.push_str(&clause[at..w.start]);
            out.push_str(&r);
            at = w.end;
        }
    }
    out.push_str(&clause[at..]);
    Some(out)
}

/// "work" → "works", "go" → "goes", "have" → "has", "watch" → "watches", "try" → "tries".
fn third_person_verb(verb: &str) -> String {
    let lower = verb.to_lowercase();
    match lower.as_str() {
        "have" => return "has".into(),
        "do" | "go" => return format!("{verb}es"),
        _ => {}
    }
    if lower.ends_with('s') && !lower.ends_with("ss") {
        return verb.into();
    }
    if ["sh", "ch", "ss", "x", "z", "o"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return format!("{verb}es");
    }
    let consonant_y = lower.ends_with('y')
        && lower.len() > 1
        && !matches!(
            lower.as_bytes()[lower.len() - 2],
            b'a' | b'e' | b'i' | b'o' | b'u'
        );
    if consonant_y {
        return format!("{}ies", &verb[..verb.len() - 1]);
    }
    format!("{verb}s")
}

/// Whether what a person loves or likes is "the" something longer than two words ("the
/// self-acceptance and love theme", "the connection to nature", "the structure of the
/// language"): a remark on what was just said or shown. "The ocean" or "the outdoors" stays.
fn is_remark_on_something_shown(clause: &str) -> bool {
    let words = crate::lang::words(clause);
    words.first().is_some_and(|w| w.lower == "the") && words.len() > 3
}

/// Words that point at something said or shown elsewhere ("I love it", "I love how you
/// use it"): a statement that opens with one says nothing on its own.
const ANAPHORIC_OPENINGS: &[&str] = &[
    "it",
    "it's",
    "its",
    "that",
    "this",
    "these",
    "those",
    "them",
    "they",
    "how",
    "what",
    "when",
    "where",
    "why",
    "which",
    "who",
    "so",
    "too",
    "you",
    "your",
    "him",
    "her",
    "me",
    "us",
    "everything",
    "anything",
    "something",
    "one",
];

/// Words that carry no object of their own: function words and intensifiers ("a huge
/// fan", "to", "a lot").
const EMPTY_WORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "and", "or", "but", "too", "also", "as", "well", "very",
    "really", "so", "such", "much", "huge", "big", "total", "fan", "lot", "lots", "bit", "little",
    "it", "this", "that", "them", "again", "all", "both", "just", "pretty",
];

/// Words that point at something in the conversation or a photo ("the freedom it brings",
/// "seeing them eat", "this city"): a fact whose first clause holds one cannot be read alone.
const ANAPHORA: &[&str] = &[
    "it", "this", "these", "those", "them", "they", "here", "there", "that's",
];

/// Nouns for what a person sees in something shown ("the color and texture", "the theme",
/// "the dark sky and green scenery"): a remark on a photo, not a property of its speaker.
const REMARKS: &[&str] = &[
    "color",
    "colors",
    "colour",
    "colours",
    "texture",
    "theme",
    "details",
    "detail",
    "vibe",
    "vibes",
    "way",
    "sky",
    "scenery",
    "view",
    "feelings",
    "plots",
    "energy",
    "look",
    "shape",
    "design",
    "message",
    "idea",
    "thought",
    "leaves",
    "composition",
    "style",
];

/// Openings of a passing state or a one-off, not a stable property ("so excited", "a mix of
/// excited and scared", "a few plans", "a picture from…", "feel like…"); each also without
/// its article, for the openings that take it ("I have a few plans").
const PASSING: &[&str] = &[
    "so excited",
    "excited",
    "getting excited",
    "a mix of",
    "mix of",
    "a few",
    "few",
    "a picture",
    "picture",
    "a photo",
    "photo",
    "a pic",
    "pic",
    "a question",
    "question",
    "a feeling",
    "feeling",
    "a great time",
    "great time",
    "a blast",
    "blast",
    "a lot",
    "lot",
    "feel",
    "felt",
    "think",
    "thought",
    "knew",
    "want",
    "wanted",
];

/// Whether the rest of a fact ("pottery and hiking", not "it", "to", "how you use it", "the
/// color and texture" or "so excited about summer") names something a reader can understand
/// without the conversation around it. Only the first clause is read: what follows a comma,
/// a dash or "but" is the speaker's aside.
fn names_something(rest: &str) -> bool {
    let clause = first_clause(rest);
    let words: Vec<String> = crate::lang::words(clause)
        .into_iter()
        .map(|w| w.lower)
        .collect();
    let lower = words.join(" ");
    let Some(first) = words.first() else {
        return false;
    };
    let head_nouns_are_remarks = words
        .iter()
        .filter(|w| !EMPTY_WORDS.contains(&w.as_str()))
        .all(|w| {
            REMARKS.contains(&w.as_str()) || matches!(w.as_str(), "dark" | "green" | "yellow")
        });
    // "that" after a preposition or "and" points ("escaping to that world", "his tech and
    // that humour"); after a noun it relates ("stories that tackle issues").
    let pointing_that = words.windows(2).any(|w| {
        w[1] == "that"
            && matches!(
                w[0].as_str(),
                "and" | "to" | "of" | "in" | "with" | "about" | "for" | "on" | "at"
            )
    });
    !(ANAPHORIC_OPENINGS.contains(&first.as_str())
        || words.iter().any(|w| ANAPHORA.contains(&w.as_str()))
        || pointing_that
        // "My wife and I hosted…": an event shared with them, not a property of theirs.
        || lower.starts_with("and i ")
        || lower.starts_with("and me ")
        || lower.starts_with("the way ")
        || lower.starts_with("the thought")
        || PASSING.iter().any(|p| {
            let core = ["are ", "is ", "am ", "was ", "were "]
                .iter()
                .find_map(|c| lower.strip_prefix(c))
                .unwrap_or(&lower);
            core == *p || core.starts_with(&format!("{p} "))
        })
        || (first == "the" || first == "all") && head_nouns_are_remarks
        // "getting immersed in the feelings and plots": ends on a remark on something shown.
        || words.iter().rposition(|w| w == "the").is_some_and(|at| {
            words[at + 1..].iter().all(|w| {
                REMARKS.contains(&w.as_str()) || EMPTY_WORDS.contains(&w.as_str())
            })
        })
        // "so much and others don't": a comparison with nothing named.
        || lower.contains("so much")
        || lower.contains("so many")
        // "(my favorite) was when we were down 10": the verb's complement points.
        || ["is ", "was ", "are ", "were "].iter().any(|c| {
            lower
                .strip_prefix(c)
                .and_then(|core| core.split(' ').next())
                .is_some_and(|w| ANAPHORIC_OPENINGS.contains(&w))
        })
        || words.iter().all(|w| EMPTY_WORDS.contains(&w.as_str())))
}

fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + c.len_utf8();
        }
    }
    let tail = text[start..].trim();
    if !tail.is_empty() {
        out.push(tail);
    }
    out
}

/// Importance in [0, 1] from what a turn carries: specifics (numbers, names, dates),
/// stable self-descriptions, emphasis, and length. Small talk scores low.
pub fn importance(text: &str, has_facts: bool) -> f64 {
    let lower = text.to_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut score: f64 = 0.3;
    score += (words.len() as f64 / 60.0).min(0.2);
    if text.chars().any(|c| c.is_ascii_digit()) {
        score += 0.1;
    }
    let names = words
        .iter()
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase) && w.len() > 1)
        .count();
    score += (names as f64 * 0.04).min(0.12);
    if has_facts {
        score += 0.15;
    }
    const EMPHASIS: &[&str] = &[
        "important",
        "remember",
        "never forget",
        "always",
        "must",
        "deadline",
        "decided",
        "promise",
        "goal",
        "plan",
        "birthday",
        "anniversary",
        "married",
        "born",
        "died",
        "diagnosed",
        "moved",
        "new job",
        "graduat",
    ];
    if EMPHASIS.iter().any(|w| lower.contains(w)) {
        score += 0.1;
    }
    const SMALL_TALK: &[&str] = &[
        "thanks",
        "thank you",
        "lol",
        "haha",
        "ok",
        "okay",
        "cool",
        "nice",
        "bye",
        "see you",
    ];
    if words.len() <= 4 && SMALL_TALK.iter().any(|w| lower.contains(w)) {
        score -= 0.2;
    }
    score.clamp(0.05, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_rewritten_in_third_person() {
        let f = extract_facts(
            "Caroline",
            "Hey! My name is Caroline. I love pottery and hiking.",
        );
        assert_eq!(
            f,
            vec![
                "Caroline's name is Caroline",
                "Caroline loves pottery and hiking"
            ]
        );
        let f = extract_facts("Mel", "Well, I work as a nurse in Boston.");
        assert_eq!(f, vec!["Mel works as a nurse in Boston"]);
    }

    #[test]
    fn statements_that_point_elsewhere_are_not_facts() {
        for said in [
            "I love to.",
            "I love it!",
            "I love how you use it to tell your stories.",
            "I love that it teaches me patience.",
            "I'm a huge fan.",
            "I love this series.",
            "I love when you try something new.",
            "I love the color and texture!",
            "I love all the yellow leaves, it looks so cozy.",
            "I love the freedom and connection it brings.",
            "I love seeing them eat fruit.",
            "I love the energy of this city.",
            "My kids are so excited about summer break.",
            "I have a few plans.",
            "I'm a mix of excited and scared.",
            "I always feel like I could write a movie.",
            "I love escaping to that world.",
            "My wife and I hosted a get-together.",
            "I love the way the frosting turned out.",
        ] {
            assert!(extract_facts("Mel", said).is_empty(), "{said}");
        }
        assert_eq!(
            extract_facts(
                "Mel",
                "I'm a big fan of pottery. I love to paint. I love the ocean. \
                 I love coconut milk, but I also enjoy it with chocolate. \
                 I love stories that tackle important issues."
            ),
            vec![
                "Mel is a big fan of pottery",
                "Mel loves to paint",
                "Mel loves the ocean",
                "Mel loves coconut milk",
                "Mel loves stories that tackle important issues"
            ]
        );
    }

    #[test]
    fn a_fact_is_its_first_clause_in_the_third_person() {
        let cases = [
            (
                "I love running my own studio.",
                "Mel loves running their own studio",
            ),
            (
                "I usually work during regular hours, but sometimes I bring work home.",
                "Mel usually works during regular hours",
            ),
            (
                "I usually play CS:GO with my friends.",
                "Mel usually plays CS:GO with their friends",
            ),
            ("I always watch the game.", "Mel always watches the game"),
            (
                "I'm a shooting guard for the team and our season opener is next week.",
                "Mel is a shooting guard for the team",
            ),
            ("I love traveling too.", "Mel loves traveling"),
            (
                "I do love watching classics.",
                "Mel loves watching classics",
            ),
            (
                "I really enjoy dramas and emotionally-driven films.",
                "Mel enjoys dramas and emotionally-driven films",
            ),
            (
                "I'm passionate about veterans and their rights.",
                "Mel is passionate about veterans and their rights",
            ),
            (
                "I love discovering new cities - check out this pic!",
                "Mel loves discovering new cities",
            ),
            (
                "My goal is to give kids a loving home.",
                "Mel's goal is to give kids a loving home",
            ),
        ];
        for (said, fact) in cases {
            assert_eq!(extract_facts("Mel", said), vec![fact], "{said}");
        }
    }

    #[test]
    fn remarks_and_clauses_with_a_subject_of_their_own_are_not_facts() {
        for said in [
            "I love the self-acceptance and love theme.",
            "I love the connection to nature.",
            "I love getting immersed in the feelings and plots.",
            "My favorite was when we were down 10 in the 4th.",
            "My kids have so much and others don't.",
            "My favorite dairy-free treat is this amazing tart.",
            "I have a painting in my room to remind me of everything I do.",
            "I really like your coconut recommendation.",
        ] {
            assert!(extract_facts("Mel", said).is_empty(), "{said}");
        }
    }

    #[test]
    fn verbs_take_their_third_person() {
        for (verb, third) in [
            ("work", "works"),
            ("go", "goes"),
            ("have", "has"),
            ("watch", "watches"),
            ("try", "tries"),
            ("play", "plays"),
            ("miss", "misses"),
        ] {
            assert_eq!(third_person_verb(verb), third);
        }
    }

    #[test]
    fn events_and_questions_are_not_facts() {
        assert!(extract_facts("A", "I love that you went there yesterday!").is_empty());
        assert!(extract_facts("A", "I like it?").is_empty());
        assert!(extract_facts("A", "We went camping.").is_empty());
    }

    #[test]
    fn locations_are_found_in_text() {
        assert_eq!(
            find_location("see https://example.com/a, then edit ./src/main.rs").as_deref(),
            Some("https://example.com/a")
        );
        assert_eq!(
            find_location("open /etc/hosts.").as_deref(),
            Some("/etc/hosts")
        );
        assert_eq!(find_location("a / b and 1/2"), None);
    }

    #[test]
    fn times_read_like_people_write_them() {
        // 2023-05-08 13:56 UTC
        assert_eq!(
            human_time(1_683_554_160_000).unwrap(),
            "8 May 2023, 1:56 pm"
        );
    }

    #[test]
    fn when_holds_the_time_written_and_the_times_the_text_refers_to() {
        // Monday 8 May 2023, 13:56 UTC.
        let at = Some(1_683_554_160_000);
        assert_eq!(
            grounded_when(
                "I went to a support group yesterday, and last week too.",
                at
            )
            .unwrap(),
            "8 May 2023, 1:56 pm · yesterday = 7 May 2023 · last week = 1–7 May 2023"
        );
        assert_eq!(
            grounded_when("Recently, on 8 May 2023, nothing.", at).unwrap(),
            "8 May 2023, 1:56 pm"
        );
        assert_eq!(grounded_when("yesterday", None), None);
        let w = w5h1_for_turn("Mel", "See you tomorrow", at, "c", Some("s1"));
        assert_eq!(w.resolved_times(), vec!["tomorrow = 9 May 2023"]);
    }

    #[test]
    fn small_talk_matters_less_than_specifics() {
        let chat = importance("haha ok", false);
        let specific = importance(
            "I moved to Seattle on 3 June 2022 and started a new job at Boeing",
            false,
        );
        assert!(chat < 0.3 && specific > 0.6, "{chat} {specific}");
    }

    #[test]
    fn odd_unicode_does_not_panic() {
        for t in [
            "",
            "🙂🙂",
            "ÅÄÖ. ß!",
            "\u{200b}\u{0301}",
            "日本語の文。私は猫が好きです。",
        ] {
            let _ = extract_facts("x", t);
            let _ = importance(t, false);
            let _ = find_location(t);
        }
    }
}
