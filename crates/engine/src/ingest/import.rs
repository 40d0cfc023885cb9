//! Parsers for the conversation formats Somna imports. Each reads the whole file and
//! validates every record before anything is written, so a malformed file imports nothing
//! and the error names the file, the record and the problem.

use crate::store::Message;
use crate::{Error, Result};
use chrono::{NaiveDate, NaiveTime};
use serde_json::Value;
use std::path::Path;

/// The messages of one conversation, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationBatch {
    pub conversation: String,
    pub messages: Vec<Message>,
}

fn import_err(file: &Path, location: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::Import {
        file: file.display().to_string(),
        location: location.into(),
        problem: problem.into(),
    }
}

/// A file's text, or a typed error: an I/O error naming it, or an import error at the first
/// byte that is not UTF-8.
pub fn read_text(file: &Path) -> Result<String> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
    String::from_utf8(bytes).map_err(|e| {
        import_err(
            file,
            format!("byte {}", e.utf8_error().valid_up_to()),
            "not valid UTF-8",
        )
    })
}

/// Parses LoCoMo's "1:56 pm on 8 May, 2023" (UTC is assumed: the data has no zone).
pub fn parse_locomo_time(s: &str) -> Option<i64> {
    let (time, date) = s.trim().split_once(" on ")?;
    let time = NaiveTime::parse_from_str(&time.trim().to_uppercase(), "%I:%M %p").ok()?;
    let date = NaiveDate::parse_from_str(date.trim(), "%d %B, %Y")
        .or_else(|_| NaiveDate::parse_from_str(date.trim(), "%d %B %Y"))
        .ok()?;
    Some(date.and_time(time).and_utc().timestamp_millis())
}

/// LoCoMo JSON: a list of samples, each with `sample_id` and `conversation` holding
/// `session_<n>` turn lists and `session_<n>_date_time`. Each turn becomes a message with
/// speaker, `dia_id` as external id, and an image caption appended to the text.
/// Only the conversation is read: `qa` (answers, evidence) is never looked at here.
pub fn parse_locomo(file: &Path) -> Result<Vec<ConversationBatch>> {
    parse_locomo_text(file, &read_text(file)?)
}

/// [`parse_locomo`] over text already read; `file` names it in errors.
pub fn parse_locomo_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        import_err(
            file,
            format!("line {}, column {}", e.line(), e.column()),
            format!("invalid JSON: {e}"),
        )
    })?;
    let samples = doc
        .as_array()
        .ok_or_else(|| import_err(file, "top level", "expected a JSON list of LoCoMo samples"))?;
    let mut out = Vec::with_capacity(samples.len());
    for (i, sample) in samples.iter().enumerate() {
        let at = format!("sample {i}");
        let id = sample
            .get("sample_id")
            .and_then(Value::as_str)
            .ok_or_else(|| import_err(file, &at, "missing string field `sample_id`"))?;
        let conv = sample
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                import_err(
                    file,
                    format!("{at} ({id})"),
                    "missing object `conversation`",
                )
            })?;
        let mut sessions: Vec<(u32, &Vec<Value>)> = conv
            .iter()
            .filter_map(|(k, v)| {
                let n = k.strip_prefix("session_")?.parse::<u32>().ok()?;
                Some((n, v.as_array()?))
            })
            .collect();
        sessions.sort_by_key(|(n, _)| *n);
        let mut messages = Vec::new();
        for (n, turns) in sessions {
            let session = format!("session_{n}");
            let when_key = format!("session_{n}_date_time");
            let occurred_at = match conv.get(&when_key).and_then(Value::as_str) {
                Some(s) => Some(parse_locomo_time(s).ok_or_else(|| {
                    import_err(
                        file,
                        format!("{id} {when_key}"),
                        format!("unreadable date {s:?}"),
                    )
                })?),
                None => None,
            };
            for (t, turn) in turns.iter().enumerate() {
                let loc = format!("{id} {session} turn {t}");
                let field = |name: &str| -> Result<&str> {
                    turn.get(name).and_then(Value::as_str).ok_or_else(|| {
                        import_err(file, &loc, format!("missing string field `{name}`"))
                    })
                };
                let speaker = field("speaker")?;
                let dia_id = field("dia_id")?;
                let mut text = field("text")?.to_string();
                let mut metadata = serde_json::Map::new();
                metadata.insert("dia_id".into(), Value::from(dia_id));
                if let Some(caption) = turn.get("blip_caption").and_then(Value::as_str) {
                    text.push_str(&format!(" [shares an image: {caption}]"));
                    metadata.insert("blip_caption".into(), Value::from(caption));
                }
                if let Some(url) = turn.get("img_url") {
                    metadata.insert("img_url".into(), url.clone());
                }
                messages.push(Message {
                    role: "user".into(),
                    speaker: Some(speaker.to_string()),
                    text,
                    session: Some(session.clone()),
                    occurred_at,
                    external_id: Some(dia_id.to_string()),
                    metadata: Value::Object(metadata),
                });
            }
        }
        out.push(ConversationBatch {
            conversation: id.to_string(),
            messages,
        });
    }
    Ok(out)
}

/// Chat JSONL: one OpenAI-style message per line, `{"role", "content", "name"?,
/// "timestamp"?, "conversation"?}`. `content` may be a string or a list of text parts;
/// `timestamp` RFC 3339 or Unix seconds/milliseconds. Lines without `conversation` belong
/// to one named after the file. Blank lines are skipped.
pub fn parse_chat_jsonl(file: &Path) -> Result<Vec<ConversationBatch>> {
    parse_chat_jsonl_text(file, &read_text(file)?)
}

/// [`parse_chat_jsonl`] over text already read; `file` names it in errors and is the
/// default conversation.
pub fn parse_chat_jsonl_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let default_conv = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "chat".into());
    let mut out: Vec<ConversationBatch> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let loc = format!("line {}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| import_err(file, &loc, format!("invalid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| import_err(file, &loc, "expected a JSON object"))?;
        let role = obj
            .get("role")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .ok_or_else(|| import_err(file, &loc, "missing string field `role`"))?;
        let content = match obj.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => {
                return Err(import_err(
                    file,
                    &loc,
                    "missing field `content` (a string or a list of text parts)",
                ))
            }
        };
        if content.trim().is_empty() {
            return Err(import_err(file, &loc, "`content` is empty"));
        }
        let occurred_at = match obj.get("timestamp") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => {
                let x = n.as_f64().unwrap_or(0.0);
                Some(if x > 1e11 {
                    x as i64
                } else {
                    (x * 1000.0) as i64
                })
            }
            Some(Value::String(s)) => Some(
                chrono::DateTime::parse_from_rfc3339(s)
                    .map_err(|e| {
                        import_err(file, &loc, format!("unreadable timestamp {s:?}: {e}"))
                    })?
                    .timestamp_millis(),
            ),
            Some(other) => {
                return Err(import_err(
                    file,
                    &loc,
                    format!("unreadable timestamp {other}"),
                ))
            }
        };
        let conversation = match obj.get("conversation") {
            None | Some(Value::Null) => default_conv.clone(),
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(other) => {
                return Err(import_err(
                    file,
                    &loc,
                    format!("`conversation` must be a non-empty string, not {other}"),
                ))
            }
        };
        let speaker = obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(role)
            .to_string();
        let message = Message {
            role: role.to_string(),
            speaker: Some(speaker),
            text: content,
            session: None,
            occurred_at,
            external_id: Some(format!("line:{}", i + 1)),
            metadata: Value::Object(Default::default()),
        };
        match out.iter_mut().find(|b| b.conversation == conversation) {
            Some(b) => b.messages.push(message),
            None => out.push(ConversationBatch {
                conversation,
                messages: vec![message],
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(content: &str, name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(content.as_bytes())
            .unwrap();
        (dir, path)
    }

    #[test]
    fn formats_are_detected_from_name_and_content() {
        use ImportFormat::*;
        let d = ImportFormat::detect;
        assert_eq!(d("a.jsonl", "").unwrap(), ChatJsonl);
        assert_eq!(
            d(
                "a.txt",
                "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"user\",\"content\":\"x\"}"
            )
            .unwrap(),
            ChatJsonl
        );
        assert_eq!(
            d(
                "l.json",
                "\u{feff} [{\"sample_id\":\"c\",\"conversation\":{}}]"
            )
            .unwrap(),
            Locomo
        );
        assert_eq!(d("l.json", "[ ]").unwrap(), Locomo);
        let export = "{\n  \"format\" : \"somna-export\",\n  \"version\": 1\n}";
        assert_eq!(d("e.json", export).unwrap(), Json);
        assert_eq!(
            d("e.json", "{\"format\":\"somna-export\",\"version\":1}").unwrap(),
            Json
        );
        // What cannot be told apart is a typed import error naming the file, not a guess.
        for bad in [
            "",
            "hello",
            "{\"sample_id\":\"c\",\"conversation\":{}}",
            "{\"format\":\"other\"}",
            "[1, 2]",
        ] {
            match d("x.json", bad) {
                Err(Error::Import { file, problem, .. }) => {
                    assert_eq!(file, "x.json");
                    assert!(problem.contains("cannot tell the format"), "{problem}");
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn detected_formats_match_the_shipped_files() {
        let demo = include_str!("../../../../assets/demo/demo.jsonl");
        assert_eq!(
            ImportFormat::detect("demo.jsonl", demo).unwrap(),
            ImportFormat::ChatJsonl
        );
        assert_eq!(
            ImportFormat::detect("demo.txt", demo).unwrap(),
            ImportFormat::ChatJsonl
        );
    }

    #[test]
    fn locomo_times_parse() {
        let t = parse_locomo_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(t, 1_683_554_160_000);
        assert!(parse_locomo_time("10:37 am on 27 June, 2023").is_some());
        assert!(parse_locomo_time("noon-ish").is_none());
    }

    #[test]
    fn locomo_sample_becomes_messages_with_captions_and_dia_ids() {
        let (_d, p) = write(
            r#"[{"sample_id":"c1","qa":[{"question":"q","answer":"secret"}],
                "conversation":{"speaker_a":"A","speaker_b":"B",
                "session_2_date_time":"1:00 pm on 2 May, 2023",
                "session_2":[{"speaker":"B","dia_id":"D2:1","text":"later"}],
                "session_1_date_time":"1:56 pm on 8 May, 2023",
                "session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi","blip_caption":"a cat"}]}}]"#,
            "l.json",
        );
        let convs = parse_locomo(&p).unwrap();
        assert_eq!(convs[0].conversation, "c1");
        let m = &convs[0].messages;
        assert_eq!(m[0].external_id.as_deref(), Some("D1:1"));
        assert_eq!(m[0].text, "hi [shares an image: a cat]");
        assert_eq!(m[1].session.as_deref(), Some("session_2"));
        assert!(!format!("{m:?}").contains("secret"));
    }

    #[test]
    fn malformed_locomo_names_the_record() {
        let (_d, p) = write(
            r#"[{"sample_id":"c1","conversation":{"session_1":[{"speaker":"A","text":"x"}]}}]"#,
            "bad.json",
        );
        let e = parse_locomo(&p).unwrap_err().to_string();
        assert!(
            e.contains("bad.json") && e.contains("c1 session_1 turn 0") && e.contains("dia_id"),
            "{e}"
        );
        let (_d, p) = write("[{", "trunc.json");
        let e = parse_locomo(&p).unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn chat_jsonl_groups_by_conversation_and_reports_bad_lines() {
        let (_d, p) = write(
            "{\"role\":\"user\",\"content\":\"hello\",\"timestamp\":\"2024-01-02T03:04:05Z\"}\n\n\
             {\"role\":\"assistant\",\"name\":\"bot\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"conversation\":\"x\"}\n",
            "chat.jsonl",
        );
        let c = parse_chat_jsonl(&p).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].conversation, "chat");
        assert_eq!(c[1].messages[0].speaker.as_deref(), Some("bot"));
        assert_eq!(c[1].messages[0].external_id.as_deref(), Some("line:3"));

        let (_d, p) = write(
            "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\"}\n",
            "bad.jsonl",
        );
        let e = parse_chat_jsonl(&p).unwrap_err();
        assert_eq!(e.code(), "import");
        assert!(e.to_string().contains("line 2") && e.to_string().contains("content"));

        let (_d, p) = write("\u{feff}not json", "x.jsonl");
        assert!(parse_chat_jsonl(&p)
            .unwrap_err()
            .to_string()
            .contains("line 1"));
    }

    #[test]
    fn invalid_utf8_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.jsonl");
        std::fs::write(&p, [0x7b, 0xff, 0xfe]).unwrap();
        assert!(parse_chat_jsonl(&p)
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
    }
}

/// The file formats [`crate::Somna::import_text`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    /// LoCoMo JSON.
    Locomo,
    /// One OpenAI-style message per line.
    ChatJsonl,
    /// A Somna export.
    Json,
}

impl ImportFormat {
    /// Tells the format of a file from its name and content, reading only as much as it
    /// needs: a `.jsonl` name or a first line that is a message object (`role` and
    /// `content`) is chat JSONL; an object whose `format` is Somna's is an export; a list of
    /// samples with a `conversation` object is LoCoMo. Anything else is a typed import error
    /// that says what was found, so the caller can name the format instead.
    pub fn detect(name: &str, text: &str) -> Result<ImportFormat> {
        let file = Path::new(name);
        let lower = name.to_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            return Ok(ImportFormat::ChatJsonl);
        }
        let body = text.trim_start_matches('\u{feff}').trim_start();
        let undetected = |what: &str| {
            import_err(
                file,
                "start of file",
                format!(
                    "cannot tell the format: {what}; expected chat JSONL (one {{\"role\", \"content\"}} object per line), LoCoMo JSON (a list of samples) or a Somna export"
                ),
            )
        };
        match body.chars().next() {
            None => Err(undetected("the file is empty")),
            Some('[') => {
                // A LoCoMo file is a list of samples; peek at the first one's keys only.
                let first = serde_json::Deserializer::from_str(&body[1..])
                    .into_iter::<Value>()
                    .next();
                match first {
                    Some(Ok(v)) if v.get("conversation").is_some_and(Value::is_object) => {
                        Ok(ImportFormat::Locomo)
                    }
                    // An empty list, or a sample the LoCoMo parser will report precisely.
                    _ if body[1..].trim_start().starts_with(']') => Ok(ImportFormat::Locomo),
                    Some(Ok(v)) if v.is_object() => Ok(ImportFormat::Locomo),
                    _ => Err(undetected("a JSON list whose first item is not an object")),
                }
            }
            Some('{') => {
                let first_line = body.lines().next().unwrap_or_default();
                if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(first_line) {
                    if m.contains_key("role") && m.contains_key("content") {
                        return Ok(ImportFormat::ChatJsonl);
                    }
                    if m.get("format")
                        .and_then(Value::as_str)
                        .is_some_and(|f| f == super::EXPORT_FORMAT)
                    {
                        return Ok(ImportFormat::Json);
                    }
                    if m.contains_key("conversation") {
                        return Err(undetected(
                            "a single LoCoMo sample; LoCoMo files are a list of samples",
                        ));
                    }
                }
                // A pretty-printed export names its format in its first field.
                let head: String = body.chars().take(4096).collect();
                if names_export_format(&head) {
                    return Ok(ImportFormat::Json);
                }
                Err(undetected(
                    "a JSON object that is neither a chat message nor a Somna export",
                ))
            }
            Some(_) => Err(undetected("the file does not start with JSON")),
        }
    }
}

/// Whether `head` has a top-level `"format": "somna-export"` (any spacing).
fn names_export_format(head: &str) -> bool {
    head.match_indices("\"format\"").any(|(i, key)| {
        let rest = head[i + key.len()..].trim_start();
        rest.strip_prefix(':').is_some_and(|v| {
            v.trim_start()
                .strip_prefix('"')
                .is_some_and(|v| v.starts_with(super::EXPORT_FORMAT))
        })
    })
}

/// What an import stored: conversations go through ingestion; an export restores memories.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum ImportOutcome {
    Conversations(super::AddReport),
    Export { memories: usize },
}
