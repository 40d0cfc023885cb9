//! The memory record and its closed vocabularies (kind, state, provenance source).

use serde::{Deserialize, Serialize};

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::Error;
            fn from_str(s: &str) -> crate::Result<Self> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(crate::Error::InvalidInput(format!(
                        concat!("unknown ", stringify!($name), " {:?}; expected one of: {}"),
                        other,
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// What a memory is: an episodic bubble, a semantic fact, a consolidated summary or a schema.
    Kind { Episode = "episode", Fact = "fact", Summary = "summary", Schema = "schema" }
);

string_enum!(
    /// Lifecycle state (SPEC: active 0–7 days, warm 7–30, cold 30–90, archived 90+; forgotten by sleep).
    State { Active = "active", Warm = "warm", Cold = "cold", Archived = "archived", Forgotten = "forgotten" }
);

string_enum!(
    /// Provenance kind of a write (seed 001).
    Source {
        UserInput = "user_input",
        ToolOutput = "tool_output",
        System = "system",
        External = "external",
        AgentInference = "agent_inference",
    }
);

string_enum!(
    /// Kind of a link between two memories.
    LinkKind { Similar = "similar", DerivedFrom = "derived_from", Causal = "causal", CoAccess = "co_access" }
);

impl Source {
    /// Base L-score of a source (seed 001).
    pub fn base_l_score(self) -> f64 {
        match self {
            Source::UserInput => 1.0,
            Source::ToolOutput => 0.9,
            Source::System => 0.85,
            Source::External => 0.7,
            Source::AgentInference => 0.6,
        }
    }
}

/// Writes whose provenance score falls below this are refused.
pub const L_SCORE_THRESHOLD: f64 = 0.3;

/// L-score of a new memory: its source's base score, or with parents
/// max(0.01, 0.9 × mean of the parents' scores) (seed 001).
pub fn l_score(source: Source, parent_scores: &[f64]) -> f64 {
    if parent_scores.is_empty() {
        return source.base_l_score();
    }
    let mean = parent_scores.iter().sum::<f64>() / parent_scores.len() as f64;
    (0.9 * mean).max(0.01)
}

/// The six journalistic fields (seed 003).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct W5H1 {
    pub who: Option<String>,
    pub what: Option<String>,
    pub when: Option<String>,
    #[serde(rename = "where")]
    pub where_: Option<String>,
    pub why: Option<String>,
    pub how: Option<String>,
}

/// Separates the time a text was written from the times it refers to in a grounded `when`
/// ("8 May 2023, 1:56 pm · yesterday = 7 May 2023").
pub const WHEN_RESOLVED: &str = " · ";

impl W5H1 {
    /// The time expressions of the text, resolved at ingest ("yesterday = 7 May 2023").
    pub fn resolved_times(&self) -> Vec<&str> {
        self.when
            .as_deref()
            .map(|w| w.split(WHEN_RESOLVED).skip(1).collect())
            .unwrap_or_default()
    }
}

/// Kind-specific fields of summaries and schemas (SPEC data model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Details {
    #[default]
    None,
    Summary {
        key_concepts: Vec<String>,
        themes: Vec<String>,
        relationships: Vec<String>,
        confidence: f64,
        source_episode_ids: Vec<i64>,
    },
    Schema {
        name: String,
        description: String,
        core_concepts: Vec<String>,
        related_memory_ids: Vec<i64>,
        examples: Vec<String>,
        confidence: f64,
    },
}

/// One memory as stored. Times are Unix milliseconds (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Memory {
    pub id: i64,
    pub kind: Kind,
    pub text: String,
    #[serde(flatten)]
    pub w5h1: W5H1,
    pub conversation: Option<String>,
    pub session: Option<String>,
    pub occurred_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub importance: f64,
    pub novelty: f64,
    pub access_count: i64,
    pub last_accessed: Option<i64>,
    pub state: State,
    pub tags: Vec<String>,
    pub source: Source,
    pub l_score: f64,
    pub metadata: serde_json::Value,
    pub details: Details,
    /// Soft-deleted memories keep everything and can be restored.
    pub deleted_at: Option<i64>,
    /// Tokens of `text` in the model's tokenizer (counted when the text was written).
    pub tokens: Option<i64>,
    /// Pinned by a person: a sleep cycle never compresses, decays, archives or forgets it.
    #[serde(default)]
    pub pinned: bool,
    /// For facts: from when it held in the world (the time of the message that said it)
    /// and until when (the time of the message that replaced it; `None` while it holds).
    #[serde(default)]
    pub valid_from: Option<i64>,
    #[serde(default)]
    pub valid_to: Option<i64>,
    /// The fact that replaced this one (reconciliation: same subject and attribute, a new
    /// value). A superseded fact is kept, hidden from searches and listings by default.
    #[serde(default)]
    pub superseded_by: Option<i64>,
}

impl Memory {
    /// True when this memory held at event time `t` (Unix ms): a fact within its validity,
    /// anything else once it had occurred.
    pub fn valid_at(&self, t: i64) -> bool {
        let occurred = self.occurred_at.is_none_or(|o| o <= t);
        if self.kind != Kind::Fact {
            return occurred;
        }
        let from = self
            .valid_from
            .or(self.occurred_at)
            .unwrap_or(self.created_at);
        occurred && from <= t && self.valid_to.is_none_or(|end| end > t)
    }
}

/// What a caller provides to create a memory; the engine fills in the rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewMemory {
    pub kind: Kind,
    pub text: String,
    #[serde(flatten)]
    pub w5h1: W5H1,
    pub conversation: Option<String>,
    pub session: Option<String>,
    pub occurred_at: Option<i64>,
    pub importance: f64,
    pub novelty: f64,
    pub tags: Vec<String>,
    pub source: Source,
    pub parents: Vec<i64>,
    pub metadata: serde_json::Value,
    pub details: Details,
}

impl NewMemory {
    pub fn new(kind: Kind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            w5h1: W5H1::default(),
            conversation: None,
            session: None,
            occurred_at: None,
            importance: 0.5,
            novelty: 0.5,
            tags: Vec::new(),
            source: Source::UserInput,
            parents: Vec::new(),
            metadata: serde_json::Value::Object(Default::default()),
            details: Details::None,
        }
    }
}

/// The text that is embedded for a memory: speaker and content first (the speaker name
/// matters for retrieval), then the remaining 5W1H fields that carry meaning: why, how, and
/// the dates the text's own time expressions resolve to ("yesterday = 7 May 2023").
pub fn embedding_text(kind: Kind, text: &str, w: &W5H1) -> String {
    let what = w.what.as_deref().unwrap_or(text);
    let mut out = match (&w.who, kind) {
        (Some(who), Kind::Episode | Kind::Fact) if !who.is_empty() => format!("{who}: {what}"),
        _ => what.to_string(),
    };
    for extra in [&w.why, &w.how].into_iter().flatten() {
        if !extra.is_empty() {
            out.push_str(". ");
            out.push_str(extra);
        }
    }
    let times = w.resolved_times();
    if !times.is_empty() {
        out.push_str(&format!(" ({})", times.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l_score_follows_seed_001() {
        assert_eq!(l_score(Source::UserInput, &[]), 1.0);
        assert_eq!(l_score(Source::AgentInference, &[]), 0.6);
        assert!((l_score(Source::UserInput, &[1.0, 0.8]) - 0.81).abs() < 1e-12);
        assert_eq!(l_score(Source::UserInput, &[0.0]), 0.01);
    }

    #[test]
    fn enums_round_trip_through_text() {
        for k in Kind::ALL {
            assert_eq!(k.as_str().parse::<Kind>().unwrap(), *k);
        }
        let err = "bubble".parse::<Kind>().unwrap_err();
        assert!(err.to_string().contains("episode, fact, summary, schema"));
    }

    #[test]
    fn embedding_text_keeps_speaker() {
        let w = W5H1 {
            who: Some("Caroline".into()),
            what: Some("I went to a support group".into()),
            ..Default::default()
        };
        assert_eq!(
            embedding_text(Kind::Episode, "x", &w),
            "Caroline: I went to a support group"
        );
    }
}
