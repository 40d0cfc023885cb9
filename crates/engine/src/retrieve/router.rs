//! The rule-based query router (seed 001): direct (vector), pattern (lexical-led), causal
//! (graph traversal from vector hits along causal and derived links), or hybrid.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Direct,
    Pattern,
    Causal,
    Hybrid,
}

impl Route {
    pub const ALL: &'static [Route] =
        &[Route::Direct, Route::Pattern, Route::Causal, Route::Hybrid];

    pub fn as_str(self) -> &'static str {
        match self {
            Route::Direct => "direct",
            Route::Pattern => "pattern",
            Route::Causal => "causal",
            Route::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Route {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "direct" => Ok(Route::Direct),
            "pattern" => Ok(Route::Pattern),
            "causal" => Ok(Route::Causal),
            "hybrid" => Ok(Route::Hybrid),
            other => Err(crate::Error::InvalidInput(format!(
                "unknown route {other:?}; expected direct, pattern, causal or hybrid"
            ))),
        }
    }
}

const CAUSAL_CUES: &[&str] = &[
    "why ",
    "because",
    "caused",
    "cause of",
    "led to",
    "lead to",
    "result of",
    "resulted",
    "what happened after",
    "consequence",
    "due to",
    "reason",
    "how come",
    "what made",
    "what happened because",
    "as a result",
];

/// Picks a route for `query` and says why. `has_causal_links`: whether the store has any
/// causal or derived links to traverse.
pub fn classify(query: &str, has_causal_links: bool) -> (Route, &'static str) {
    let lower = format!("{} ", query.to_lowercase());
    if has_causal_links && CAUSAL_CUES.iter().any(|c| lower.contains(c)) {
        return (
            Route::Causal,
            "causal cue word and causal/derived links exist",
        );
    }
    if crate::store::fts_query(query).is_none() {
        return (Route::Direct, "no words to match lexically");
    }
    let tokens: Vec<&str> = query.split_whitespace().collect();
    if query.contains('"') || !patterns(query).is_empty() {
        return (Route::Pattern, "identifier, path, quote or code-like token");
    }
    if tokens.len() <= 2 {
        return (Route::Pattern, "keyword query (two words or fewer)");
    }
    (Route::Hybrid, "natural-language query")
}

/// The exact strings a pattern query asks for: quoted phrases ("The Lean Startup") and
/// code-like tokens (`parse_config`, `std::fs`, `src/main.rs`, `HnswIo`, `5K`, `TICKET-42`),
/// lower-cased.
pub fn patterns(query: &str) -> Vec<String> {
    let mut out: Vec<String> = query
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    for t in query.split_whitespace() {
        let t = t.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '/');
        let code_like = t.contains('_')
            || t.contains("::")
            || (t.contains('/') && t.len() > 2)
            || t.chars().any(|c| c.is_ascii_digit()) && t.chars().any(|c| c.is_alphabetic())
            || is_camel_case(t);
        if code_like && !out.iter().any(|p| p.contains(&t.to_lowercase())) {
            out.push(t.to_lowercase());
        }
    }
    out
}

/// The share of `patterns` that `text` holds (case-insensitive).
pub fn pattern_share(patterns: &[String], text: &str) -> f64 {
    if patterns.is_empty() {
        return 0.0;
    }
    let lower = text.to_lowercase();
    patterns
        .iter()
        .filter(|p| lower.contains(p.as_str()))
        .count() as f64
        / patterns.len() as f64
}

fn is_camel_case(t: &str) -> bool {
    let upper_inside = t.chars().skip(1).filter(|c| c.is_uppercase()).count();
    t.chars().next().is_some_and(char::is_alphabetic)
        && upper_inside >= 1
        && t.chars().any(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_quoted_phrases_and_code_like_tokens() {
        assert_eq!(
            patterns(r#"When did Jon start reading "The Lean Startup"?"#),
            vec!["the lean startup"]
        );
        assert_eq!(
            patterns("error in parse_config at src/main.rs after the 5K run"),
            vec!["parse_config", "src/main.rs", "5k"]
        );
        assert!(patterns("what did Caroline paint").is_empty());
        let p = patterns(r#""Becoming Nicole" by parse_config"#);
        assert_eq!(pattern_share(&p, "I read BECOMING NICOLE twice"), 0.5);
        assert_eq!(pattern_share(&[], "anything"), 0.0);
    }

    #[test]
    fn routes_follow_the_rules() {
        assert_eq!(classify("why did the build fail", true).0, Route::Causal);
        assert_eq!(classify("why did the build fail", false).0, Route::Hybrid);
        assert_eq!(classify("how come Ada moved home", true).0, Route::Causal);
        assert_eq!(classify("error in parse_config", false).0, Route::Pattern);
        assert_eq!(classify("what does HnswIo do", false).0, Route::Pattern);
        assert_eq!(classify("kafka", false).0, Route::Pattern);
        assert_eq!(classify("🙂 ???", false).0, Route::Direct);
        assert_eq!(
            classify("When did Caroline go to the support group?", false).0,
            Route::Hybrid
        );
    }
}
