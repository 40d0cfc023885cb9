//! Entities a text names, found without an LLM: proper names (runs of capitalised words,
//! acronyms), quoted titles, and the things a speaker calls theirs ("my dog", "our new
//! car", "Caroline's kids"). Each gets a kind from the words around it and a key for
//! matching: lower-case, possessive and plural stripped; an owned thing's key is
//! `owner:thing` ("melanie:kid"), so "my kids" said by Melanie and "Melanie's kids" in a
//! question meet.

use super::{words, Word};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    Person,
    Place,
    Organisation,
    /// A quoted title: a book, song, film, event.
    Title,
    /// Something a person calls theirs.
    Possession,
    /// A proper name whose kind the words around it do not tell.
    Name,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Entity {
    pub kind: EntityKind,
    /// As written ("New York", "Nothing is Impossible", "dog" for "my dog").
    pub text: String,
    /// The matching key: "new york", "nothing is impossible", "melanie:dog".
    pub key: String,
}

/// Capitalised words that start sentences or fill them without naming anything.
const NOT_NAMES: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "hey",
    "hi",
    "hello",
    "wow",
    "oh",
    "ooh",
    "omg",
    "yeah",
    "yes",
    "no",
    "nope",
    "yep",
    "thanks",
    "thank",
    "sure",
    "great",
    "nice",
    "cool",
    "awesome",
    "amazing",
    "well",
    "so",
    "ok",
    "okay",
    "haha",
    "lol",
    "congrats",
    "congratulations",
    "sounds",
    "that's",
    "it's",
    "you're",
    "we're",
    "they're",
    "what's",
    "there's",
    "here's",
    "let's",
    "don't",
    "can't",
    "didn't",
    "isn't",
    "wasn't",
    "aww",
    "aw",
    "ah",
    "hmm",
    "um",
    "definitely",
    "absolutely",
    "totally",
    "really",
    "good",
    "glad",
    "sorry",
    "love",
    "totally",
    "btw",
    "by",
    "anyway",
    "anyways",
    "also",
    "plus",
    "just",
    "still",
    "mom",
    "dad",
    "mum",
    "god",
    "gosh",
    "dear",
    "when",
    "what",
    "where",
    "who",
    "whom",
    "why",
    "how",
    "which",
    "would",
    "could",
    "should",
    "did",
    "do",
    "does",
    "is",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "will",
    "can",
    "may",
    "might",
    "must",
    "in",
    "on",
    "at",
    "to",
    "for",
    "from",
    "with",
    "and",
    "or",
    "but",
    "if",
    "as",
    "after",
    "before",
    "since",
    "during",
    "both",
    "all",
    "any",
    "some",
    "every",
    "each",
    "my",
    "your",
    "our",
    "their",
    "his",
    "her",
    "its",
    "this",
    "that",
    "these",
    "those",
    "the",
    "a",
    "an",
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
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "christmas",
    "today",
    "tomorrow",
    "yesterday",
    "tonight",
];

/// Words that join a multi-word name: "Bank of America", "Lord of the Rings".
const NAME_JOINERS: &[&str] = &["of", "the", "de", "la", "del", "van", "von", "&"];

/// Words before a name that say it is a place.
const PLACE_CUES: &[&str] = &[
    "in", "to", "from", "visited", "visit", "visiting", "near", "around", "across", "toward",
    "towards", "into",
];

/// Last words of organisations and places.
const ORG_TAILS: &[&str] = &[
    "university",
    "college",
    "school",
    "inc",
    "club",
    "center",
    "centre",
    "company",
    "corp",
    "hospital",
    "church",
    "foundation",
    "studio",
    "agency",
    "group",
    "team",
    "academy",
    "institute",
    "association",
    "society",
    "band",
    "bank",
    "store",
    "shop",
    "cafe",
];
const PLACE_TAILS: &[&str] = &[
    "park",
    "street",
    "lake",
    "mountain",
    "mountains",
    "beach",
    "city",
    "river",
    "island",
    "county",
    "valley",
    "falls",
    "canyon",
    "museum",
    "zoo",
    "trail",
];
/// Words before a name that say it is a person.
const PERSON_CUES: &[&str] = &[
    "friend",
    "sister",
    "brother",
    "mom",
    "dad",
    "mother",
    "father",
    "son",
    "daughter",
    "wife",
    "husband",
    "partner",
    "boyfriend",
    "girlfriend",
    "cousin",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "named",
    "called",
    "met",
    "with",
    "colleague",
    "coworker",
    "boss",
    "neighbor",
    "neighbour",
    "mr",
    "mrs",
    "ms",
    "dr",
];

/// Adjectives skipped between "my" and the thing.
const OWN_ADJECTIVES: &[&str] = &[
    "new",
    "old",
    "little",
    "big",
    "first",
    "favorite",
    "favourite",
    "own",
    "best",
    "dear",
    "lovely",
    "beautiful",
    "younger",
    "older",
    "oldest",
    "youngest",
    "latest",
    "current",
    "two",
    "three",
    "sweet",
    "amazing",
    "awesome",
    "late",
    "whole",
    "entire",
    "local",
    "very",
    "newest",
    "last",
    "recent",
    "huge",
    "small",
    "cute",
    "adorable",
];
/// Nouns after "my" that are not things ("my goodness", "my pleasure", "my bad").
const NOT_OWNED: &[&str] = &[
    "god",
    "gosh",
    "goodness",
    "pleasure",
    "bad",
    "lord",
    "word",
    "life",
    "way",
    "mind",
    "thoughts",
    "thought",
    "opinion",
    "time",
    "day",
    "best",
    "own",
    "heart",
    "self",
    "place",
    "turn",
    "fault",
    "favorite",
    "favourite",
    "goal",
    "goals",
    "dream",
    "dreams",
];

/// The singular stem of a lower-case noun: "kids" → "kid", "stories" → "story",
/// "boxes" → "box", "children" → "child".
pub fn singular(noun: &str) -> String {
    match noun {
        "children" => return "child".into(),
        "people" => return "person".into(),
        "men" => return "man".into(),
        "women" => return "woman".into(),
        "feet" => return "foot".into(),
        "teeth" => return "tooth".into(),
        "mice" => return "mouse".into(),
        _ => {}
    }
    let n = noun.len();
    if n > 4 && noun.ends_with("ies") {
        return format!("{}y", &noun[..n - 3]);
    }
    if n > 4
        && ["ches", "shes", "sses", "xes"]
            .iter()
            .any(|s| noun.ends_with(s))
    {
        return noun[..n - 2].to_string();
    }
    if n > 3 && noun.ends_with('s') && !noun.ends_with("ss") && !noun.ends_with("us") {
        return noun[..n - 1].to_string();
    }
    noun.to_string()
}

fn strip_possessive(w: &str) -> &str {
    w.strip_suffix("'s").unwrap_or(w)
}

/// The key of a name: lower-case words, possessive stripped.
pub fn name_key(name: &str) -> String {
    words(name)
        .iter()
        .map(|w| strip_possessive(&w.lower).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn starts_upper(text: &str, w: &Word) -> bool {
    text[w.start..]
        .chars()
        .next()
        .is_some_and(char::is_uppercase)
}

/// Whether word `i` starts a sentence (nothing but openers before it since the last stop).
fn sentence_start(text: &str, ws: &[Word], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let between = &text[ws[i - 1].end..ws[i].start];
    between.contains(['.', '!', '?', '\n', ':', '"', '“'])
}

/// Proper names: runs of capitalised words (joined by "of", "the", …), and acronyms.
fn names(text: &str, ws: &[Word], known: &[String]) -> Vec<Entity> {
    let is_known = |k: &str| known.iter().any(|n| n.eq_ignore_ascii_case(k));
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let w = &ws[i];
        let bare = strip_possessive(&w.lower);
        let capital =
            starts_upper(text, w) && w.lower.chars().next().is_some_and(char::is_alphabetic);
        if !capital || NOT_NAMES.contains(&bare) {
            i += 1;
            continue;
        }
        // Extend over further capitalised words and joiners followed by one.
        let mut j = i + 1;
        while j < ws.len() {
            let between = &text[ws[j - 1].end..ws[j].start];
            if between.contains(['.', '!', '?', ',', ';', ':', '\n', '"', '(', ')']) {
                break;
            }
            if starts_upper(text, &ws[j]) && !NOT_NAMES.contains(&strip_possessive(&ws[j].lower)) {
                j += 1;
                continue;
            }
            // "of", "of the": joined only when a capitalised word follows.
            let mut k = j;
            while k < ws.len() && k < j + 2 && NAME_JOINERS.contains(&ws[k].lower.as_str()) {
                k += 1;
            }
            if k > j && ws.get(k).is_some_and(|n| starts_upper(text, n)) {
                j = k + 1;
            } else {
                break;
            }
        }
        let single = j == i + 1;
        let acronym = w.lower.len() >= 2
            && text[w.start..w.end]
                .chars()
                .all(|c| c.is_uppercase() || c.is_ascii_digit());
        // A lone capitalised word opening a sentence is usually just the sentence's first
        // word; keep it only when it is a known name or an acronym.
        if single && sentence_start(text, ws, i) && !is_known(bare) && !acronym {
            i = j;
            continue;
        }
        let written = text[w.start..ws[j - 1].end].to_string();
        let written = written
            .strip_suffix("'s")
            .or_else(|| written.strip_suffix("’s"))
            .unwrap_or(&written)
            .to_string();
        let key = name_key(&written);
        let last = key.rsplit(' ').next().unwrap_or_default();
        let before = if i > 0 { ws[i - 1].lower.as_str() } else { "" };
        let kind = if is_known(&key) || PERSON_CUES.contains(&before) {
            EntityKind::Person
        } else if ORG_TAILS.contains(&last) {
            EntityKind::Organisation
        } else if PLACE_TAILS.contains(&last) || PLACE_CUES.contains(&before) {
            EntityKind::Place
        } else {
            EntityKind::Name
        };
        out.push(Entity {
            kind,
            text: written,
            key,
        });
        i = j;
    }
    out
}

/// Quoted titles of one to eight words: "Nothing is Impossible", “Charlotte's Web”.
fn titles(text: &str) -> Vec<Entity> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”')] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let inner = after[..b].trim();
            let n = words(inner).len();
            if (1..=8).contains(&n) && !inner.contains(['.', '!', '?']) {
                out.push(Entity {
                    kind: EntityKind::Title,
                    text: inner.to_string(),
                    key: name_key(inner),
                });
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    out
}

/// Things called someone's: "my (new) dog" by `speaker`, "our car", "Caroline's kids".
fn possessions(text: &str, ws: &[Word], speaker: Option<&str>) -> Vec<Entity> {
    let mut out = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        let owner = match w.lower.as_str() {
            "my" | "our" => match speaker {
                Some(s) => s.to_lowercase(),
                None => continue,
            },
            other => match other.strip_suffix("'s") {
                Some(name) if starts_upper(text, w) && !NOT_NAMES.contains(&name) => {
                    name.to_string()
                }
                _ => continue,
            },
        };
        let mut j = i + 1;
        while ws
            .get(j)
            .is_some_and(|n| OWN_ADJECTIVES.contains(&n.lower.as_str()))
        {
            j += 1;
        }
        let Some(thing) = ws.get(j) else { continue };
        let noun = strip_possessive(&thing.lower);
        if noun.len() < 3
            || crate::text::is_stopword(noun)
            || NOT_OWNED.contains(&noun)
            || !noun.chars().all(char::is_alphabetic)
        {
            continue;
        }
        let stem = singular(noun);
        out.push(Entity {
            kind: EntityKind::Possession,
            text: noun.to_string(),
            key: format!("{owner}:{stem}"),
        });
    }
    out
}

/// Places a chat names in lower case as often as capitalised (`places_en.txt`).
const PLACES: &str = include_str!("places_en.txt");

/// The gazetteer: its names (lower case, without a leading "the"), the first words of its
/// names of several words, and the most words a name has.
struct Gazetteer {
    names: HashSet<&'static str>,
    starts: HashSet<&'static str>,
    longest: usize,
}

fn gazetteer() -> &'static Gazetteer {
    static SET: OnceLock<Gazetteer> = OnceLock::new();
    SET.get_or_init(|| {
        let names: HashSet<&'static str> = PLACES
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let starts = names
            .iter()
            .filter_map(|n| n.split_once(' ').map(|(first, _)| first))
            .collect();
        let longest = names
            .iter()
            .map(|n| n.split(' ').count())
            .max()
            .unwrap_or(1);
        Gazetteer {
            names,
            starts,
            longest,
        }
    })
}

/// Whether a name's key is a place the gazetteer knows ("the Netherlands" as
/// "netherlands").
fn is_known_place(key: &str) -> bool {
    gazetteer()
        .names
        .contains(key.strip_prefix("the ").unwrap_or(key))
}

/// The places of the gazetteer `text` names in any case ("we went to spain", "new york"):
/// at each word the longest run of words, with only spaces between them, that is one.
fn gazetteer_places(text: &str, ws: &[Word]) -> Vec<Entity> {
    let g = gazetteer();
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let first = strip_possessive(&ws[i].lower);
        // (runs of several words only from a word that starts such a name: most words
        // start none, and cost one lookup)
        let several = if g.starts.contains(first) {
            (2..=g.longest.min(ws.len() - i)).rev().find(|&n| {
                let spaced = (i + 1..i + n).all(|j| &text[ws[j - 1].end..ws[j].start] == " ");
                let key: Vec<&str> = ws[i..i + n]
                    .iter()
                    .map(|w| strip_possessive(&w.lower))
                    .collect();
                spaced && g.names.contains(key.join(" ").as_str())
            })
        } else {
            None
        };
        let Some(n) = several.or_else(|| g.names.contains(first).then_some(1)) else {
            i += 1;
            continue;
        };
        let written = text[ws[i].start..ws[i + n - 1].end].to_string();
        out.push(Entity {
            kind: EntityKind::Place,
            key: name_key(&written),
            text: written,
        });
        i += n;
    }
    out
}

/// The entities of `text` said by `speaker` (who "my" refers to). `known` are names known
/// to be people (the store's speakers).
pub fn extract_entities(text: &str, speaker: Option<&str>, known: &[String]) -> Vec<Entity> {
    let ws = words(text);
    let mut out = titles(text);
    // A capitalised name the gazetteer knows is a place ("Spain", also without "in").
    out.extend(names(text, &ws, known).into_iter().map(|mut e| {
        if e.kind == EntityKind::Name && is_known_place(&e.key) {
            e.kind = EntityKind::Place;
        }
        e
    }));
    out.extend(gazetteer_places(text, &ws));
    out.extend(possessions(text, &ws, speaker));
    let mut seen = HashSet::new();
    out.retain(|e| !e.key.is_empty() && seen.insert(e.key.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str, speaker: Option<&str>) -> Vec<(EntityKind, String)> {
        let known = vec!["Caroline".to_string(), "Melanie".to_string()];
        extract_entities(text, speaker, &known)
            .into_iter()
            .map(|e| (e.kind, e.key))
            .collect()
    }

    #[test]
    fn names_places_and_organisations_are_found() {
        let got = keys(
            "Yesterday I flew to New York with my friend Jordan to visit Columbia University.",
            Some("Melanie"),
        );
        assert!(
            got.contains(&(EntityKind::Place, "new york".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&(EntityKind::Person, "jordan".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&(EntityKind::Organisation, "columbia university".into())),
            "{got:?}"
        );
        assert!(got.contains(&(EntityKind::Possession, "melanie:friend".into())));
        // The sentence's first word is not a name.
        assert!(!got.iter().any(|(_, k)| k == "yesterday"), "{got:?}");
    }

    #[test]
    fn places_the_gazetteer_knows_are_places_in_any_case() {
        // Typed in lower case, one word or several, possessive or not.
        let got = keys(
            "we drove from new york to florida, then flew to spain's coast",
            None,
        );
        for place in ["new york", "florida", "spain"] {
            assert!(
                got.contains(&(EntityKind::Place, place.into())),
                "{place}: {got:?}"
            );
        }
        // Capitalised without a cue word before it, and with "the".
        let got = keys("Barcelona was lovely. The Netherlands too.", None);
        assert!(
            got.contains(&(EntityKind::Place, "barcelona".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&(EntityKind::Place, "the netherlands".into()))
                || got.contains(&(EntityKind::Place, "netherlands".into())),
            "{got:?}"
        );
        // Words that are places only in some readings are not in it; nor is a place's
        // name split by punctuation.
        let got = keys(
            "i ate turkey from a china plate with us. new, york-style bagels",
            None,
        );
        assert!(got.iter().all(|(k, _)| *k != EntityKind::Place), "{got:?}");
    }

    #[test]
    fn known_speakers_are_people_even_at_a_sentence_start() {
        let got = keys("Caroline's talk was great. Melanie came too.", None);
        assert!(
            got.contains(&(EntityKind::Person, "caroline".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&(EntityKind::Person, "melanie".into())),
            "{got:?}"
        );
    }

    #[test]
    fn quoted_titles_and_joined_names_stay_whole() {
        let got = keys(
            "I just finished \"Nothing is Impossible\" and started The Lord of the Rings.",
            None,
        );
        assert!(got.contains(&(EntityKind::Title, "nothing is impossible".into())));
        assert!(got.iter().any(|(_, k)| k == "lord of the rings"), "{got:?}");
        let got = keys("We marched at the LGBTQ pride parade.", None);
        assert!(got.iter().any(|(_, k)| k == "lgbtq"), "{got:?}");
    }

    #[test]
    fn owned_things_key_on_their_owner() {
        let said = keys("My kids loved our new puppy!", Some("Melanie"));
        assert!(said.contains(&(EntityKind::Possession, "melanie:kid".into())));
        assert!(said.contains(&(EntityKind::Possession, "melanie:puppy".into())));
        let asked = keys("What do Melanie's kids like?", None);
        assert!(asked.contains(&(EntityKind::Possession, "melanie:kid".into())));
        // Figures of speech are not possessions.
        assert!(keys("Oh my gosh, my pleasure!", Some("A")).is_empty());
        // Without a speaker, "my" has no owner.
        assert!(keys("my dog", None).is_empty());
    }

    #[test]
    fn plurals_become_singular() {
        assert_eq!(singular("kids"), "kid");
        assert_eq!(singular("stories"), "story");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(singular("children"), "child");
        assert_eq!(singular("glass"), "glass");
        assert_eq!(singular("bus"), "bus");
    }

    #[test]
    fn odd_text_does_not_panic() {
        for t in [
            "",
            "\"",
            "“unclosed",
            "'s",
            "My",
            "A B C D E F G",
            "🙂 Ünï Ödé",
        ] {
            let _ = extract_entities(t, Some("x"), &[]);
        }
    }
}
