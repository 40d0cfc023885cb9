//! Text tools of the extractive compressor: sentences, content words with a light stemmer,
//! document frequencies over the store (for TF-IDF), and a small theme lexicon.

use std::collections::{HashMap, HashSet};

/// Chat filler that makes poor summary concepts, beyond the shared
/// [`crate::text::STOPWORDS`].
const CONVERSATIONAL: &[&str] = &[
    "actually",
    "ago",
    "almost",
    "anyone",
    "anything",
    "aww",
    "back",
    "best",
    "better",
    "big",
    "bit",
    "cannot",
    "cant",
    "couldn",
    "day",
    "days",
    "done",
    "else",
    "enough",
    "everything",
    "excited",
    "feels",
    "felt",
    "find",
    "fun",
    "give",
    "go",
    "goes",
    "gotta",
    "guess",
    "happy",
    "hasn",
    "haven",
    "however",
    "im",
    "ive",
    "last",
    "little",
    "lots",
    "makes",
    "making",
    "may",
    "nothing",
    "probably",
    "put",
    "quite",
    "ready",
    "real",
    "seems",
    "shouldn",
    "sometimes",
    "sound",
    "sounds",
    "stuff",
    "super",
    "thats",
    "thought",
    "times",
    "true",
    "try",
    "trying",
    "use",
    "wants",
    "ways",
    "wish",
    "without",
    "won",
    "wonderful",
    "wouldn",
    "year",
    "years",
    "hope",
    "absolutely",
    "incredible",
    "looking",
    "able",
    "week",
    "weekend",
    "yesterday",
    "tomorrow",
    "cute",
    "beautiful",
    "fantastic",
    "share",
    "sharing",
    "talk",
    "talking",
    "mine",
    "congrats",
    "congratulations",
    "bet",
    "special",
    "first",
    "next",
    "another",
    "together",
    "experience",
    "important",
    "hard",
    "tough",
    "super",
    "sweet",
    "work",
    "often",
    "bye",
    "helps",
    "helped",
    "wanna",
    "people",
    "photo",
    "photos",
    "image",
    "images",
    "shares",
    "pic",
    "pics",
    "picture",
    "pictures",
    "kinda",
    "anyway",
    "guy",
    "guys",
    "folks",
    "lol",
    "haha",
    "gosh",
    "omg",
    "dear",
    "dude",
    "man",
];

/// Broad themes and the (stemmed) words that signal them.
const THEMES: &[(&str, &[&str])] = &[
    (
        "family",
        &[
            "family",
            "kid",
            "child",
            "children",
            "son",
            "daughter",
            "mom",
            "mother",
            "dad",
            "father",
            "parent",
            "husband",
            "wife",
            "sister",
            "brother",
            "grandma",
            "grandmother",
            "baby",
            "adoption",
            "adopt",
        ],
    ),
    (
        "friendship",
        &[
            "friend",
            "friendship",
            "buddy",
            "bff",
            "hang",
            "support",
            "supportive",
        ],
    ),
    (
        "work and career",
        &[
            "job",
            "career",
            "office",
            "boss",
            "colleague",
            "project",
            "company",
            "business",
            "interview",
            "promotion",
            "client",
            "startup",
            "meeting",
            "manager",
        ],
    ),
    (
        "education",
        &[
            "school",
            "class",
            "course",
            "study",
            "studying",
            "university",
            "college",
            "degree",
            "teacher",
            "student",
            "learn",
            "learning",
            "exam",
            "counseling",
        ],
    ),
    (
        "health and wellbeing",
        &[
            "health",
            "doctor",
            "hospital",
            "sick",
            "therapy",
            "therapist",
            "mental",
            "exercise",
            "yoga",
            "running",
            "run",
            "gym",
            "meditation",
            "injury",
            "stress",
            "anxiety",
            "diet",
        ],
    ),
    (
        "art and creativity",
        &[
            "art",
            "painting",
            "paint",
            "draw",
            "drawing",
            "artist",
            "canvas",
            "sculpture",
            "pottery",
            "creative",
            "creativity",
            "poem",
            "poetry",
            "museum",
        ],
    ),
    (
        "books and writing",
        &[
            "book", "novel", "reading", "read", "author", "writing", "writer", "story", "library",
        ],
    ),
    (
        "music",
        &[
            "music", "song", "guitar", "piano", "violin", "concert", "band", "sing", "singing",
            "album", "playlist",
        ],
    ),
    (
        "travel and outdoors",
        &[
            "trip", "travel", "camping", "camp", "hike", "hiking", "beach", "mountain", "vacation",
            "road", "park", "nature", "lake", "forest", "flight",
        ],
    ),
    (
        "pets and animals",
        &[
            "dog", "cat", "pet", "puppy", "kitten", "horse", "animal", "bird",
        ],
    ),
    (
        "food and cooking",
        &[
            "food",
            "cook",
            "cooking",
            "recipe",
            "bake",
            "baking",
            "dinner",
            "lunch",
            "restaurant",
            "cake",
            "pie",
            "meal",
        ],
    ),
    (
        "sports and games",
        &[
            "game",
            "games",
            "sport",
            "soccer",
            "football",
            "basketball",
            "tennis",
            "team",
            "match",
            "tournament",
            "play",
            "playing",
            "chess",
            "videogame",
        ],
    ),
    (
        "identity and community",
        &[
            "lgbtq",
            "transgender",
            "trans",
            "community",
            "pride",
            "identity",
            "activism",
            "volunteer",
            "volunteering",
            "charity",
            "rights",
            "advocacy",
        ],
    ),
    (
        "home",
        &[
            "house",
            "home",
            "apartment",
            "garden",
            "move",
            "moving",
            "neighborhood",
            "renovation",
            "room",
        ],
    ),
    (
        "money",
        &[
            "money",
            "budget",
            "saving",
            "save",
            "rent",
            "salary",
            "loan",
            "invest",
            "investment",
        ],
    ),
    (
        "technology",
        &[
            "computer",
            "software",
            "app",
            "code",
            "coding",
            "program",
            "programming",
            "phone",
            "internet",
            "website",
            "robot",
            "ai",
        ],
    ),
    (
        "events and celebrations",
        &[
            "birthday",
            "party",
            "wedding",
            "celebration",
            "festival",
            "anniversary",
            "holiday",
            "christmas",
            "parade",
            "event",
        ],
    ),
];

fn stopwords() -> &'static HashSet<&'static str> {
    static SET: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        crate::text::STOPWORDS
            .iter()
            .chain(CONVERSATIONAL)
            .copied()
            .collect()
    })
}

fn theme_words() -> &'static HashMap<&'static str, Vec<usize>> {
    static MAP: std::sync::OnceLock<HashMap<&'static str, Vec<usize>>> = std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (_, words)) in THEMES.iter().enumerate() {
            for w in *words {
                m.entry(*w).or_default().push(i);
            }
        }
        m
    })
}

/// Whether `term` is the name of a theme (rather than a key concept).
pub fn is_theme(term: &str) -> bool {
    THEMES.iter().any(|t| t.0 == term)
}

/// The words that signal a theme (empty for an unknown theme).
pub fn theme_words_of(theme: &str) -> &'static [&'static str] {
    THEMES.iter().find(|t| t.0 == theme).map_or(&[], |t| t.1)
}

/// The themes signalled by the given (stemmed) words with their counts, strongest first.
pub fn themes(words: &[String]) -> Vec<(&'static str, usize)> {
    let mut counts = vec![0usize; THEMES.len()];
    for w in words {
        if let Some(ts) = theme_words().get(w.as_str()) {
            for &t in ts {
                counts[t] += 1;
            }
        }
    }
    let mut out: Vec<(&'static str, usize)> = counts
        .into_iter()
        .enumerate()
        .filter(|(_, c)| *c > 0)
        .map(|(i, c)| (THEMES[i].0, c))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    out
}

/// `text` without image captions (`[shares an image: …]`), which the importer appends.
pub fn without_captions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Splits text into sentences at `.`, `!`, `?` and line breaks, keeping the punctuation.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            push_sentence(&mut out, &mut cur);
            continue;
        }
        cur.push(c);
        let next_is_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && next_is_space {
            push_sentence(&mut out, &mut cur);
        }
    }
    push_sentence(&mut out, &mut cur);
    out
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    cur.clear();
}

/// A word of text: its lower-case surface form and stem; `content` when it carries topic.
#[derive(Debug, Clone)]
pub struct Word {
    /// Written with a capital letter (a name, or the start of a sentence).
    pub capitalized: bool,
    pub surface: String,
    pub stem: String,
    pub content: bool,
}

/// The words of `text` in order.
pub fn words(text: &str) -> Vec<Word> {
    word_iter(text).collect()
}

/// [`words`], one at a time (a count that stops early reads only what it needs).
pub fn word_iter(text: &str) -> impl Iterator<Item = Word> + '_ {
    raw_words(text).map(word_of)
}

/// The stretches of `text` that are words: letters, digits and apostrophes.
fn raw_words(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
}

fn word_of(raw: &str) -> Word {
    let lower = raw.to_lowercase();
    let lower = lower.trim_matches('\'');
    let base = lower
        .strip_suffix("'s")
        .or_else(|| lower.strip_suffix("’s"))
        .unwrap_or(lower);
    // A contraction ("won't", "I've") is never a topic.
    let contraction = base.contains('\'');
    let base = base.replace('\'', "");
    let stem = stem(&base);
    let content = !contraction
        && base.chars().count() >= 3
        && !base.chars().all(|c| c.is_ascii_digit())
        && !stopwords().contains(base.as_str())
        && !stopwords().contains(stem.as_str());
    Word {
        capitalized: raw.chars().next().is_some_and(char::is_uppercase),
        surface: base,
        stem,
        content,
    }
}

/// How many words of `text` are content words ([`Word::content`]), counted no further than
/// `cap`: what [`word_iter`] decides, without its strings. An ASCII word (most are) is
/// judged in one reused buffer; any other goes through [`word_iter`]'s own steps. The
/// what-if simulator counts the words of every memory the forgetting rule reaches (up to
/// 100,000), on every simulation.
pub fn content_words_up_to(text: &str, cap: usize) -> usize {
    let mut lower = String::new();
    let mut n = 0;
    for raw in raw_words(text) {
        if n >= cap {
            break;
        }
        let content = if raw.is_ascii() {
            ascii_content(raw, &mut lower)
        } else {
            word_of(raw).content
        };
        n += usize::from(content);
    }
    n
}

/// [`word_of`]'s `content` for an ASCII word, lower-cased into `lower`.
fn ascii_content(raw: &str, lower: &mut String) -> bool {
    lower.clear();
    lower.extend(raw.chars().map(|c| c.to_ascii_lowercase()));
    let trimmed = lower.trim_matches('\'');
    let base = trimmed.strip_suffix("'s").unwrap_or(trimmed);
    // A contraction is never content; without one, removing apostrophes changes nothing.
    if base.contains('\'') || base.len() < 3 || base.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let words = stopwords();
    if words.contains(base) {
        return false;
    }
    match stem_in_place(base) {
        Stem::Same => true,
        Stem::Prefix(p) => !words.contains(p),
        Stem::Y(p) => !words.contains(format!("{p}y").as_str()),
    }
}

/// What [`stem`] makes of a word, without a new string where it can.
enum Stem<'a> {
    Same,
    /// A prefix of the word.
    Prefix(&'a str),
    /// This prefix followed by "y".
    Y(&'a str),
}

fn stem_in_place(w: &str) -> Stem<'_> {
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        return Stem::Y(&w[..n - 3]);
    }
    if n > 4 && (w.ends_with("sses") || w.ends_with("ches") || w.ends_with("shes")) {
        return Stem::Prefix(&w[..n - 2]);
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return Stem::Prefix(&w[..n - 1]);
    }
    Stem::Same
}

/// Stems of the content words of `text`.
pub fn content_stems(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| w.content)
        .map(|w| w.stem)
        .collect()
}

/// A light plural stemmer: "paintings" → "painting", "classes" → "class", "kids" → "kid".
fn stem(w: &str) -> String {
    match stem_in_place(w) {
        Stem::Same => w.to_string(),
        Stem::Prefix(p) => p.to_string(),
        Stem::Y(p) => format!("{p}y"),
    }
}

/// Document frequencies of stems over a corpus (one document per memory).
#[derive(Debug, Clone, Default)]
pub struct DocFreq {
    pub docs: usize,
    pub df: HashMap<String, u32>,
}

impl DocFreq {
    pub fn add(&mut self, text: &str) {
        self.docs += 1;
        let uniq: HashSet<String> = content_stems(text).into_iter().collect();
        for s in uniq {
            *self.df.entry(s).or_default() += 1;
        }
    }

    /// Smoothed inverse document frequency.
    pub fn idf(&self, stem: &str) -> f64 {
        let df = self.df.get(stem).copied().unwrap_or(0) as f64;
        ((self.docs as f64 + 1.0) / (df + 1.0)).ln() + 1.0
    }
}

/// Sparse TF-IDF vector of a bag of stems, L2-normalised.
pub fn tfidf(stems: &[String], df: &DocFreq) -> HashMap<String, f64> {
    let mut v: HashMap<String, f64> = HashMap::new();
    for s in stems {
        *v.entry(s.clone()).or_default() += 1.0;
    }
    for (s, x) in v.iter_mut() {
        *x = (1.0 + x.ln()) * df.idf(s);
    }
    let norm = v.values().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.values_mut().for_each(|x| *x /= norm);
    }
    v
}

pub fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .filter_map(|(k, x)| large.get(k).map(|y| x * y))
        .sum()
}

/// "a", "a and b", "a, b and c".
pub fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_content_word_count_decides_each_word_as_word_iter_does() {
        use rand::{Rng, SeedableRng};
        let mut texts: Vec<String> = [
            "",
            "I won't go to the lighthouse's garden with Maya's kids",
            "Ferries, lighthouses, harbours; pottery glazes and mountain trails!",
            "'quoted' words, ''odd'' ones, it's Bob's and the kids' bikes",
            "1999 2024s 42nd 3d abc ABC Abc aBC",
            "stories classes watches dishes bus this glass series bodies bees",
            "Ünïcödé wörds, café crème, Straße, ÉCOLE, naïve résumés, 東京 タワー",
            "emoji 🎉 party🎉time and ’curly’ quotes’s end",
            "the and of THE And Of yours themselves everything",
        ]
        .map(String::from)
        .to_vec();
        // Random texts over an alphabet that reaches every rule: stopwords, plural
        // endings, apostrophes, digits, capitals and letters outside ASCII.
        let pieces = [
            "the", "and", "ies", "s", "ss", "us", "is", "'", "'s", "’", "3", "42", "é", "İ", "ß",
            "Ab", "cd", "ef", "xyz", " ", " ", ",", "-", "won", "t", "body", "class", "ch", "sh",
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..2000 {
            let n = rng.gen_range(0..30);
            texts.push(
                (0..n)
                    .map(|_| pieces[rng.gen_range(0..pieces.len())])
                    .collect(),
            );
        }
        for text in &texts {
            let content = word_iter(text).filter(|w| w.content).count();
            for cap in 0..12 {
                assert_eq!(
                    content_words_up_to(text, cap),
                    content.min(cap),
                    "{text:?} capped at {cap}"
                );
            }
        }
    }

    #[test]
    fn sentences_split_at_terminal_punctuation() {
        let s = sentences("I went to the 3.5 km race. It was great! Did you go?\nYes");
        assert_eq!(
            s,
            vec![
                "I went to the 3.5 km race.",
                "It was great!",
                "Did you go?",
                "Yes"
            ]
        );
    }

    #[test]
    fn content_words_drop_filler_and_stem_plurals() {
        assert_eq!(
            content_stems("Wow, I won't, I really love my paintings and the kids' classes!"),
            vec!["painting", "kid", "class"]
        );
    }

    #[test]
    fn themes_come_from_the_lexicon() {
        let w: Vec<String> = ["painting", "canvas", "kid"].map(String::from).to_vec();
        let t = themes(&w);
        assert_eq!(t[0], ("art and creativity", 2));
        assert_eq!(t[1], ("family", 1));
    }

    #[test]
    fn idf_favours_rare_words() {
        let mut df = DocFreq::default();
        for t in ["pottery class", "pottery again", "camping trip"] {
            df.add(t);
        }
        assert!(df.idf("camping") > df.idf("pottery"));
        assert_eq!(
            join_and(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
    }
}
