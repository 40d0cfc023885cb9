//! Ingest policies (seed 002), read from a TOML file: each message gets an event type
//! (statement, reasoning, result, status, consensus, or any name), which decides its
//! truncation, its formatting (verbatim, narrative or structured) and whether it is a
//! simple update (appended as a bubble) or a complex one (also integrated at once into the
//! conversation's rolling summary). Rules matched on conversation, role, speaker or text
//! set the event type, skip messages, and adjust importance and fact extraction. A FIFO cap
//! bounds each conversation's raw message log.
//!
//! The defaults (an empty file): every message is a verbatim statement, nothing is
//! truncated or skipped, and a conversation summary is written every 20 bubbles. An engine
//! opened as a library starts with [`Policies::none`] (no summaries either) until
//! [`crate::Somna::set_policies`]; the CLI applies `<data dir>/policies.toml`, `--policies
//! FILE` or the defaults.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The file looked for in the data directory.
pub const POLICIES_FILE: &str = "policies.toml";

/// How a bubble's text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// The message's text as it came.
    #[default]
    Verbatim,
    /// "Alice said: …", "Alice reasoned: …", "Alice reported the result: …".
    Narrative,
    /// "Speaker: Alice | Event: statement | Content: …".
    Structured,
}

/// Simple: the bubble is appended, nothing else. Complex: the conversation's rolling
/// summary is also brought up to date at once (with the extractive compressor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Update {
    Simple,
    Complex,
}

/// One rule; every given condition must hold. The first matching rule applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Conversation name; `*` matches any run of characters ("agent-*").
    pub conversation: Option<String>,
    pub role: Option<String>,
    pub speaker: Option<String>,
    /// The text contains this (case-insensitive).
    pub contains: Option<String>,
    /// The event type given to matching messages.
    pub event: Option<String>,
    /// Keep the raw message but make no memory of it.
    #[serde(default)]
    pub skip: bool,
    /// The bubble's importance is at least this…
    pub importance_min: Option<f64>,
    /// …after adding this (may be negative); clamped to 0–1.
    pub importance_boost: Option<f64>,
    /// Overrides fact extraction for matching messages.
    pub extract_facts: Option<bool>,
}

/// Everything a policies file can set. Unknown keys are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policies {
    pub style: Style,
    /// Truncation on or off (seed 002's `enable_truncation`).
    pub truncation: bool,
    /// Largest text (characters) kept in a bubble, per event type; a type not listed is
    /// never truncated (seed 002: statement 300, reasoning 200, result none). The raw
    /// message keeps the whole text.
    pub truncate: BTreeMap<String, usize>,
    /// Event type → update route; types not listed are simple.
    pub updates: BTreeMap<String, Update>,
    /// FIFO cap on each conversation's raw message log (characters of text): the oldest
    /// messages are dropped from the log; their bubbles stay. `None`: no cap.
    pub history_max_chars: Option<usize>,
    /// A conversation summary every this many bubbles of a conversation; 0: never.
    pub summary_every: usize,
    #[serde(rename = "rule")]
    pub rules: Vec<Rule>,
}

impl Default for Policies {
    fn default() -> Self {
        Self {
            style: Style::Verbatim,
            truncation: true,
            truncate: BTreeMap::new(),
            updates: BTreeMap::new(),
            history_max_chars: None,
            summary_every: 20,
            rules: Vec::new(),
        }
    }
}

/// What the policies decide for one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub event: String,
    pub skip: bool,
    pub update: Update,
    pub importance_min: Option<f64>,
    pub importance_boost: f64,
    pub extract_facts: Option<bool>,
}

impl Policies {
    /// Parses a policies file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let p: Policies = toml::from_str(text).map_err(|e| Error::Policy {
            file: file.to_string(),
            line: e.span().map_or(1, |s| line_of(text, s.start)),
            problem: e.message().to_string(),
        })?;
        p.validate(text, file)?;
        Ok(p)
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// `<dir>/policies.toml` if it exists, else the defaults.
    pub fn load_from_dir(dir: &Path) -> Result<Self> {
        let path = dir.join(POLICIES_FILE);
        if path.exists() {
            Self::load(&path)
        } else {
            Ok(Self::default())
        }
    }

    /// Checks values the types allow but the engine does not; the error names the line of
    /// the table holding the bad value.
    fn validate(&self, text: &str, file: &str) -> Result<()> {
        let header_line = |header: &str, nth: usize| {
            text.match_indices(header)
                .nth(nth)
                .map_or(1, |(at, _)| line_of(text, at))
        };
        let bad = |line: usize, problem: String| {
            Err(Error::Policy {
                file: file.to_string(),
                line,
                problem,
            })
        };
        for (i, r) in self.rules.iter().enumerate() {
            for (name, v) in [
                ("importance_min", r.importance_min),
                ("importance_boost", r.importance_boost),
            ] {
                if let Some(v) = v {
                    if !v.is_finite() || v.abs() > 1.0 || (name == "importance_min" && v < 0.0) {
                        return bad(
                            header_line("[[rule]]", i),
                            format!("rule {}: {name} must be within 0–1 (boost −1–1)", i + 1),
                        );
                    }
                }
            }
        }
        if self.truncate.values().any(|&n| n == 0) {
            return bad(
                header_line("[truncate]", 0),
                "a truncation length must be at least 1".into(),
            );
        }
        Ok(())
    }

    /// The decision for a message of `conversation`.
    pub fn decide(
        &self,
        conversation: &str,
        role: &str,
        speaker: &str,
        text: &str,
        event: Option<&str>,
    ) -> Decision {
        let rule = self.rules.iter().find(|r| {
            r.conversation
                .as_deref()
                .is_none_or(|g| glob(g, conversation))
                && r.role
                    .as_deref()
                    .is_none_or(|x| x.eq_ignore_ascii_case(role))
                && r.speaker
                    .as_deref()
                    .is_none_or(|x| x.eq_ignore_ascii_case(speaker))
                && r.contains
                    .as_deref()
                    .is_none_or(|x| text.to_lowercase().contains(&x.to_lowercase()))
        });
        let event = event
            .map(str::to_string)
            .or_else(|| rule.and_then(|r| r.event.clone()))
            .unwrap_or_else(|| "statement".into())
            .to_lowercase();
        Decision {
            update: self.updates.get(&event).copied().unwrap_or(Update::Simple),
            skip: rule.is_some_and(|r| r.skip),
            importance_min: rule.and_then(|r| r.importance_min),
            importance_boost: rule.and_then(|r| r.importance_boost).unwrap_or(0.0),
            extract_facts: rule.and_then(|r| r.extract_facts),
            event,
        }
    }

    /// The bubble text for a message: truncated for its event type, then formatted.
    pub fn bubble_text(&self, speaker: &str, text: &str, event: &str) -> String {
        self.format(speaker, &self.truncated(text, event), event)
    }

    /// `text` cut to its event type's length (characters, then "..."), if it has one.
    pub fn truncated(&self, text: &str, event: &str) -> String {
        match self.truncate.get(event).filter(|_| self.truncation) {
            Some(&max) if text.chars().count() > max => {
                let cut: String = text.chars().take(max).collect();
                format!("{}...", cut.trim_end())
            }
            _ => text.to_string(),
        }
    }

    /// `body` in the configured style.
    pub fn format(&self, speaker: &str, body: &str, event: &str) -> String {
        match self.style {
            Style::Verbatim => body.to_string(),
            Style::Narrative => {
                let verb = match event {
                    "statement" => "said".to_string(),
                    "reasoning" => "reasoned".to_string(),
                    "result" => "reported the result".to_string(),
                    "status" => "reported the status".to_string(),
                    "consensus" => "reported a consensus".to_string(),
                    other => format!("reported ({other})"),
                };
                format!("{speaker} {verb}: {body}")
            }
            Style::Structured => format!("Speaker: {speaker} | Event: {event} | Content: {body}"),
        }
    }

    /// Plain ingest: the defaults without conversation summaries.
    pub fn none() -> Self {
        Self {
            summary_every: 0,
            ..Self::default()
        }
    }

    /// Seed 002's configuration, as a starting point for a policies file.
    pub fn seed_002() -> Self {
        Self {
            style: Style::Narrative,
            truncate: BTreeMap::from([("statement".into(), 300), ("reasoning".into(), 200)]),
            updates: BTreeMap::from([
                ("result".into(), Update::Complex),
                ("consensus".into(), Update::Complex),
            ]),
            history_max_chars: Some(100_000),
            ..Self::default()
        }
    }
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// `*` matches any run of characters; everything else literally (case-sensitive).
fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first) || s.len() < first.len() + last.len() || !s.ends_with(last) {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
style = "structured"
history_max_chars = 500
summary_every = 10

[truncate]
statement = 20
reasoning = 10

[updates]
result = "complex"

[[rule]]
conversation = "agent-*"
role = "tool"
event = "result"
importance_min = 0.8

[[rule]]
contains = "password"
skip = true

[[rule]]
speaker = "Bot"
extract_facts = false
importance_boost = -0.2
"#;

    #[test]
    fn a_file_sets_styles_truncation_routes_and_rules() {
        let p = Policies::parse(FILE, "p.toml").unwrap();
        assert_eq!(p.style, Style::Structured);
        assert_eq!(p.summary_every, 10);
        assert_eq!(p.history_max_chars, Some(500));
        let d = p.decide("agent-7", "tool", "runner", "exit 0", None);
        assert_eq!(
            (d.event.as_str(), d.update, d.importance_min),
            ("result", Update::Complex, Some(0.8))
        );
        let d = p.decide("chat", "tool", "runner", "exit 0", None);
        assert_eq!((d.event.as_str(), d.update), ("statement", Update::Simple));
        assert!(
            p.decide("chat", "user", "Ada", "my PASSWORD is x", None)
                .skip
        );
        let d = p.decide("chat", "assistant", "bot", "hello", Some("Reasoning"));
        assert_eq!(
            (d.event.as_str(), d.extract_facts, d.importance_boost),
            ("reasoning", Some(false), -0.2)
        );
        assert_eq!(
            p.bubble_text("Ada", "I think we should maximise the floor", "statement"),
            "Speaker: Ada | Event: statement | Content: I think we should ma..."
        );
        assert_eq!(
            p.bubble_text("Ada", "short", "statement"),
            "Speaker: Ada | Event: statement | Content: short"
        );
        assert_eq!(
            p.bubble_text("Ada", "a result that is never cut", "result"),
            "Speaker: Ada | Event: result | Content: a result that is never cut"
        );
        let narrative = Policies {
            style: Style::Narrative,
            truncation: false,
            ..p
        };
        assert_eq!(
            narrative.bubble_text("Ada", "I think we should maximise the floor", "statement"),
            "Ada said: I think we should maximise the floor"
        );
    }

    #[test]
    fn defaults_change_nothing() {
        let p = Policies::parse("", "empty.toml").unwrap();
        assert_eq!(p, Policies::default());
        let text = "x".repeat(1000);
        assert_eq!(p.bubble_text("Ada", &text, "statement"), text);
        assert!(!p.decide("c", "user", "Ada", &text, None).skip);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let e = Policies::parse(
            "style = \"narrative\"\n\n[truncate]\nstatement = \"long\"\n",
            "p.toml",
        )
        .unwrap_err();
        match &e {
            Error::Policy { file, line, .. } => {
                assert_eq!((file.as_str(), *line), ("p.toml", 4), "{e}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.code(), "policy");
        let e =
            Policies::parse("summary_every = 20\nstyel = \"narrative\"\n", "q.toml").unwrap_err();
        assert!(matches!(e, Error::Policy { line: 2, .. }), "{e}");
        let e = Policies::parse("[[rule]]\nimportance_min = 3.0\n", "r.toml").unwrap_err();
        assert!(e.to_string().contains("rule 1"), "{e}");
        assert!(matches!(e, Error::Policy { line: 1, .. }), "{e}");
    }

    #[test]
    fn globs() {
        assert!(glob("agent-*", "agent-7"));
        assert!(glob("*-log", "build-log"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxcyyb"));
        assert!(!glob("agent-*", "user-7"));
        assert!(glob("exact", "exact"));
    }
}
