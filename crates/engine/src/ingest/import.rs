//! Parsers for the conversation formats Somna imports. Each reads the whole file and
//! validates every record before anything is written, so a malformed file (or one that holds
//! no message at all) imports nothing and the error names the file, the record and the
//! problem. A leading UTF-8 byte-order mark is ignored by every parser.
//!
//! Each imported message carries an external id, its identity within its conversation: an
//! import skips the messages whose id is already stored, so re-importing a file (or
//! resuming a killed import) stores each message once. The id is the source's own where the
//! format has a stable one (LoCoMo's `dia_id`), otherwise a hash of the message's content
//! ([`content_id`]), never a position in the file.

use crate::store::Message;
use crate::{Error, Result};
use chrono::{NaiveDate, NaiveTime};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;

/// The messages of one conversation, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationBatch {
    pub conversation: String,
    pub messages: Vec<Message>,
    /// What the messages are: turns of a conversation, or memories another system made.
    pub records: Records,
    /// Turns the file held with no words and no image: nothing to remember, so not among
    /// `messages` (the import's report counts them as `messages_blank`).
    pub blank: usize,
}

impl ConversationBatch {
    /// Turns of `conversation`.
    pub fn turns(conversation: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            conversation: conversation.into(),
            messages,
            records: Records::Turns,
            blank: 0,
        }
    }
}

/// What the records of an imported batch are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Records {
    /// Turns of a conversation: each becomes an episodic bubble, with the facts it states.
    #[default]
    Turns,
    /// Memories another system already distilled (mem0 memories, Letta's core memory blocks
    /// and archival passages): each becomes one fact, stored as it is, with no bubble, no
    /// extraction and no reconciliation against the facts already stored.
    Facts,
}

pub(super) fn import_err(
    file: &Path,
    location: impl Into<String>,
    problem: impl Into<String>,
) -> Error {
    Error::Import {
        file: file.display().to_string(),
        location: location.into(),
        problem: problem.into(),
    }
}

/// An import error at `location` of `file` for a message that [`super::validate_message`]
/// refuses (too long, a NUL character, empty), so the error names the file and the record.
pub(super) fn check_message(file: &Path, location: &str, m: &Message) -> Result<()> {
    super::validate_message(m).map_err(|e| match e {
        Error::InvalidInput(problem) => import_err(file, location, problem),
        other => other,
    })
}

/// The UTF-8 byte-order mark some tools (Windows editors, Excel) write at the start.
const BOM: char = '\u{feff}';

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// A file's text without a leading byte-order mark, or a typed error: an I/O error naming
/// it, or an import error at the first byte that is not UTF-8 (a UTF-16 file is named so).
pub fn read_text(file: &Path) -> Result<String> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(import_err(
            file,
            "byte 0",
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark): save it as UTF-8",
        ));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        import_err(
            file,
            format!("byte {}", e.utf8_error().valid_up_to()),
            "not valid UTF-8",
        )
    })?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(text)
}

/// The external id of an imported message whose source gives it none: `msg:` and the first
/// 128 bits (hex) of the SHA-256 of its conversation, role, speaker, time, session and
/// text. The same message imported again (the same file again, a copy of it elsewhere, an
/// edited version, a resumed import) has the same id and is skipped; a different message
/// never takes a stored one's place. `occurrence` counts identical messages within the
/// conversation of one file from 1: the second "ok" of the same speaker at the same time is
/// `msg:<hash>#2`, so repeats are kept, as many times as the file holds them.
pub fn content_id(conversation: &str, m: &Message, occurrence: usize) -> String {
    // A JSON array is an unambiguous encoding of the fields (no separator can be forged).
    let key = serde_json::json!([
        conversation,
        m.role,
        m.speaker,
        m.occurred_at,
        m.session,
        m.text
    ]);
    let digest = Sha256::digest(key.to_string().as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    if occurrence <= 1 {
        format!("msg:{hex}")
    } else {
        format!("msg:{hex}#{occurrence}")
    }
}

/// Parses a LoCoMo session time: its own "1:56 pm on 8 May, 2023", and the other ways a
/// file of the same shape may write one ("May 8, 2023 1:56 PM", "8 May 2023, 13:56",
/// "2023-05-08 13:56:00", RFC 3339, a date alone, taken as midnight). UTC is assumed where
/// the text has no zone (LoCoMo's has none).
pub fn parse_locomo_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    // (am/pm in capitals for chrono's %p, spaces single)
    let s = s
        .split_whitespace()
        .map(|w| match w.to_ascii_lowercase().as_str() {
            "am" | "pm" | "a.m." | "p.m." => w.replace('.', "").to_ascii_uppercase(),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    const DATES: [&str; 6] = [
        "%d %B, %Y",
        "%d %B %Y",
        "%B %d, %Y",
        "%B %d %Y",
        "%Y-%m-%d",
        "%Y/%m/%d",
    ];
    const TIMES: [&str; 4] = ["%I:%M %p", "%I:%M:%S %p", "%H:%M", "%H:%M:%S"];
    let at = |t: chrono::NaiveDateTime| Some(t.and_utc().timestamp_millis());
    for date in DATES {
        for time in TIMES {
            for shape in [
                format!("{time} on {date}"),
                format!("{date} {time}"),
                format!("{date}, {time}"),
                format!("{date} at {time}"),
                format!("{date}T{time}"),
            ] {
                if let Ok(t) = chrono::NaiveDateTime::parse_from_str(&s, &shape) {
                    return at(t);
                }
            }
        }
        if let Ok(d) = NaiveDate::parse_from_str(&s, date) {
            return at(d.and_time(NaiveTime::MIN));
        }
    }
    None
}

/// LoCoMo JSON: a list of samples, each with `sample_id` and `conversation` holding
/// `session_<n>` turn lists and `session_<n>_date_time`. Each turn becomes a message with
/// speaker, `dia_id` as external id, and an image caption appended to the text.
/// Only the conversation is read: `qa` (answers, evidence) is never looked at here.
pub fn parse_locomo(file: &Path) -> Result<Vec<ConversationBatch>> {
    parse_locomo_text(file, &read_text(file)?)
}

/// [`parse_locomo`] over text already read; `file` names it in errors. A `dia_id` used
/// twice in one sample is an error (it is the turn's identity: the second would be taken
/// for the first and skipped), and so is a file without any turn.
pub fn parse_locomo_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc: Value = serde_json::from_str(strip_bom(text)).map_err(|e| {
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
        let mut blank = 0;
        // dia_id → where it was first seen.
        let mut seen: HashMap<&str, String> = HashMap::new();
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
                if let Some(first) = seen.insert(dia_id, loc.clone()) {
                    return Err(import_err(
                        file,
                        &loc,
                        format!("`dia_id` {dia_id:?} is also the id of {first}"),
                    ));
                }
                let Some((text, metadata)) = locomo_turn(turn, dia_id, || field("text"))? else {
                    blank += 1;
                    continue;
                };
                let message = Message {
                    role: "user".into(),
                    speaker: Some(speaker.to_string()),
                    text,
                    session: Some(session.clone()),
                    occurred_at,
                    external_id: Some(dia_id.to_string()),
                    metadata: Value::Object(metadata),
                };
                check_message(file, &loc, &message)?;
                messages.push(message);
            }
        }
        out.push(ConversationBatch {
            blank,
            ..ConversationBatch::turns(id, messages)
        });
    }
    if out.iter().all(|b| b.messages.is_empty()) {
        let what = if out.is_empty() {
            "the list holds no samples"
        } else {
            "no sample has a turn"
        };
        return Err(import_err(
            file,
            "top level",
            format!("nothing to import: {what}"),
        ));
    }
    Ok(out)
}

/// A LoCoMo turn's text and metadata (its `dia_id`, image caption and URL), or `None` for a
/// turn with neither words nor an image: nothing to remember. A turn may share an image and
/// say nothing (no `text`, or a blank one): its text is then the caption alone. `text` reads
/// the `text` field as a string, or fails naming the turn.
fn locomo_turn<'a>(
    turn: &'a Value,
    dia_id: &str,
    text: impl FnOnce() -> Result<&'a str>,
) -> Result<Option<(String, serde_json::Map<String, Value>)>> {
    let caption = turn
        .get("blip_caption")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty());
    let words = match turn.get("text") {
        None | Some(Value::Null) if caption.is_some() => "",
        _ => text()?,
    };
    let mut metadata = serde_json::Map::new();
    metadata.insert("dia_id".into(), Value::from(dia_id));
    let text = match caption {
        Some(caption) => {
            metadata.insert("blip_caption".into(), Value::from(caption));
            let shares = format!("[shares an image: {caption}]");
            if words.trim().is_empty() {
                shares
            } else {
                format!("{words} {shares}")
            }
        }
        None if words.trim().is_empty() => return Ok(None),
        None => words.to_string(),
    };
    if let Some(url) = turn.get("img_url") {
        metadata.insert("img_url".into(), url.clone());
    }
    Ok(Some((text, metadata)))
}

/// Chat JSONL: one OpenAI-style message per line, `{"role", "content", "name"?,
/// "timestamp"?, "conversation"?}`. `content` may be a string or a list of text parts;
/// `timestamp` RFC 3339 or Unix seconds/milliseconds. Lines without `conversation` belong
/// to one named after the file. Blank lines are skipped; a file without any message is an
/// error. Conversations come in the order of their first line. The format has no message
/// id, so each message's external id is its [`content_id`].
pub fn parse_chat_jsonl(file: &Path) -> Result<Vec<ConversationBatch>> {
    parse_chat_jsonl_text(file, &read_text(file)?)
}

/// [`parse_chat_jsonl`] over text already read; `file` names it in errors and is the
/// default conversation.
pub fn parse_chat_jsonl_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    Ok(parse_chat_jsonl_lines(file, text)?.batches)
}

/// Parsed chat JSONL with the line each message came from.
#[derive(Debug)]
pub(crate) struct ChatLines {
    pub batches: Vec<ConversationBatch>,
    /// `lines[c][i]`: the 1-based line of message `i` of conversation `c`.
    pub lines: Vec<Vec<usize>>,
}

/// [`parse_chat_jsonl_text`], keeping each message's line (for stores that hold the line
/// ids of earlier versions; see `Somna::import_text`). Linear in the file's size: each
/// line finds its conversation and counts its repeats in hash maps.
pub(crate) fn parse_chat_jsonl_lines(file: &Path, text: &str) -> Result<ChatLines> {
    let default_conv = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "chat".into());
    let mut out: Vec<ConversationBatch> = Vec::new();
    let mut lines: Vec<Vec<usize>> = Vec::new();
    // Conversation name → its index in `out` (first-appearance order is kept).
    let mut slot: HashMap<String, usize> = HashMap::new();
    // Content id → how many messages of the file had it so far.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, line) in strip_bom(text).lines().enumerate() {
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
        let mut message = Message {
            role: role.to_string(),
            speaker: Some(speaker),
            text: content,
            session: None,
            occurred_at,
            external_id: None,
            metadata: Value::Object(Default::default()),
        };
        check_message(file, &loc, &message)?;
        let id = content_id(&conversation, &message, 1);
        let n = seen.entry(id.clone()).or_insert(0);
        *n += 1;
        message.external_id = Some(if *n == 1 { id } else { format!("{id}#{n}") });
        let c = match slot.get(&conversation) {
            Some(&c) => c,
            None => {
                slot.insert(conversation.clone(), out.len());
                out.push(ConversationBatch::turns(conversation, Vec::new()));
                lines.push(Vec::new());
                out.len() - 1
            }
        };
        out[c].messages.push(message);
        lines[c].push(i + 1);
    }
    if out.is_empty() {
        return Err(import_err(
            file,
            "start of file",
            "nothing to import: the file holds no message (it is empty or only blank lines)",
        ));
    }
    Ok(ChatLines {
        batches: out,
        lines,
    })
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
        // The same instant written the other ways a file of LoCoMo's shape may use.
        for s in [
            "1:56 PM on 8 May, 2023",
            "1:56 pm on May 8, 2023",
            "1:56 p.m. on 8 May 2023",
            "May 8, 2023 1:56 PM",
            "8 May 2023, 13:56",
            "2023-05-08 13:56:00",
            "2023-05-08T13:56:00",
            "2023-05-08T13:56:00Z",
            "2023-05-08T15:56:00+02:00",
            "  1:56  pm  on  8  May,  2023 ",
        ] {
            assert_eq!(parse_locomo_time(s), Some(t), "{s}");
        }
        // A date alone is its midnight.
        for s in ["2023-05-08", "8 May, 2023", "May 8, 2023"] {
            assert_eq!(parse_locomo_time(s), Some(1_683_504_000_000), "{s}");
        }
        assert!(parse_locomo_time("13:56 on 31 February, 2023").is_none());
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
    fn a_locomo_turn_without_words_keeps_its_image_and_one_without_either_is_counted_blank() {
        let (_d, p) = write(
            r#"[{"sample_id":"c1","conversation":{"session_1":[
                {"speaker":"A","dia_id":"D1:1","text":"hi"},
                {"speaker":"B","dia_id":"D1:2","text":"  "},
                {"speaker":"A","dia_id":"D1:3","img_url":["u"],"blip_caption":"a dog on a beach"},
                {"speaker":"B","dia_id":"D1:4","text":"","blip_caption":""},
                {"speaker":"A","dia_id":"D1:5","text":" so "}]}}]"#,
            "l.json",
        );
        let convs = parse_locomo(&p).unwrap();
        let texts: Vec<_> = convs[0].messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hi", "[shares an image: a dog on a beach]", " so "]);
        assert_eq!(convs[0].blank, 2);
        // A file of blank turns only has nothing to import.
        let (_d, p) = write(
            r#"[{"sample_id":"c1","conversation":{"session_1":[
                {"speaker":"B","dia_id":"D1:2","text":""}]}}]"#,
            "l.json",
        );
        let e = parse_locomo(&p).unwrap_err().to_string();
        assert!(e.contains("nothing to import"), "{e}");
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
        let m = &c[1].messages[0];
        assert_eq!(m.external_id, Some(content_id("x", m, 1)));

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

    fn chat(role: &str, text: &str, at: Option<i64>) -> Message {
        Message {
            role: role.into(),
            speaker: Some(role.into()),
            text: text.into(),
            session: None,
            occurred_at: at,
            external_id: None,
            metadata: Value::Object(Default::default()),
        }
    }

    #[test]
    fn content_ids_depend_on_content_and_conversation_never_on_position() {
        let m = chat("user", "hello", Some(5));
        let id = content_id("c", &m, 1);
        assert!(id.starts_with("msg:") && id.len() == 4 + 32, "{id}");
        assert_eq!(content_id("c", &m.clone(), 1), id, "deterministic");
        assert_eq!(content_id("c", &m, 2), format!("{id}#2"));
        let others = [
            content_id("d", &m, 1),
            content_id("c", &chat("assistant", "hello", Some(5)), 1),
            content_id("c", &chat("user", "hello!", Some(5)), 1),
            content_id("c", &chat("user", "hello", Some(6)), 1),
            content_id("c", &chat("user", "hello", None), 1),
            content_id(
                "c",
                &Message {
                    speaker: Some("Ann".into()),
                    ..m.clone()
                },
                1,
            ),
        ];
        for (i, o) in others.iter().enumerate() {
            assert_ne!(o, &id, "variant {i}");
        }
        // Field boundaries cannot be forged by moving text between fields.
        let a = chat("user", "a\",\"b", None);
        let b = Message {
            speaker: Some("user\",\"a".into()),
            text: "b".into(),
            ..chat("user", "", None)
        };
        assert_ne!(content_id("c", &a, 1), content_id("c", &b, 1));
    }

    #[test]
    fn chat_jsonl_ids_follow_the_content_and_repeats_are_numbered() {
        let line = |t: &str| format!("{{\"role\":\"user\",\"content\":\"{t}\"}}\n");
        let (_d, p) = write(&[line("ok"), line("one"), line("ok")].concat(), "a.jsonl");
        let first = parse_chat_jsonl(&p).unwrap();
        let ids: Vec<String> = first[0]
            .messages
            .iter()
            .map(|m| m.external_id.clone().unwrap())
            .collect();
        assert_eq!(ids[2], format!("{}#2", ids[0]));
        assert_ne!(ids[0], ids[1]);
        // The same lines elsewhere in another file with the same name: the same ids.
        let (_d, p) = write(
            &[
                line("new"),
                line("ok"),
                line("one"),
                "\n".into(),
                line("ok"),
            ]
            .concat(),
            "a.jsonl",
        );
        let moved = parse_chat_jsonl(&p).unwrap();
        let moved_ids: Vec<&str> = moved[0]
            .messages
            .iter()
            .filter_map(|m| m.external_id.as_deref())
            .collect();
        for id in &ids {
            assert!(
                moved_ids.contains(&id.as_str()),
                "{id} not in {moved_ids:?}"
            );
        }
        assert_eq!(moved_ids.len(), 4);
    }

    #[test]
    fn grouping_many_conversations_keeps_first_appearance_order() {
        // 80,000 conversations of one line each, then a second message for every tenth one:
        // the grouping is linear (a quadratic one takes close to a minute here).
        let n = 80_000;
        let mut text = String::with_capacity(n * 70);
        for i in 0..n {
            text.push_str(&format!(
                "{{\"role\":\"user\",\"content\":\"m{i}\",\"conversation\":\"c{i}\"}}\n"
            ));
        }
        for i in (0..n).step_by(10).rev() {
            text.push_str(&format!(
                "{{\"role\":\"assistant\",\"content\":\"r{i}\",\"conversation\":\"c{i}\"}}\n"
            ));
        }
        let parsed = parse_chat_jsonl_lines(Path::new("many.jsonl"), &text).unwrap();
        let c = &parsed.batches;
        assert_eq!(c.len(), n);
        for (i, b) in c.iter().enumerate() {
            assert_eq!(b.conversation, format!("c{i}"));
            assert_eq!(b.messages[0].text, format!("m{i}"));
            assert_eq!(parsed.lines[i][0], i + 1);
            if i % 10 == 0 {
                assert_eq!(b.messages.len(), 2);
                assert_eq!(b.messages[1].text, format!("r{i}"));
                assert_eq!(parsed.lines[i][1], n + (n / 10 - i / 10));
            } else {
                assert_eq!(b.messages.len(), 1);
            }
        }
    }

    #[test]
    fn a_file_with_nothing_to_import_is_an_error_naming_it() {
        for (name, content) in [
            ("empty.jsonl", ""),
            ("blank.jsonl", "\n  \n\t\n"),
            ("bom.jsonl", "\u{feff}"),
        ] {
            let (_d, p) = write(content, name);
            let e = parse_chat_jsonl(&p).unwrap_err();
            assert_eq!(e.code(), "import");
            let text = e.to_string();
            assert!(
                text.contains(name) && text.contains("nothing to import"),
                "{text}"
            );
        }
        for (content, why) in [
            ("[]", "no samples"),
            (
                r#"[{"sample_id":"c","conversation":{"session_1":[]}}]"#,
                "no sample has a turn",
            ),
        ] {
            let (_d, p) = write(content, "l.json");
            let e = parse_locomo(&p).unwrap_err().to_string();
            assert!(e.contains("l.json") && e.contains(why), "{e}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_accepted_by_every_parser() {
        let jsonl = "\u{feff}{\"role\":\"user\",\"content\":\"hi\"}\n";
        let (_d, p) = write(jsonl, "bom.jsonl");
        assert_eq!(read_text(&p).unwrap(), &jsonl[3..], "read_text drops it");
        let c = parse_chat_jsonl(&p).unwrap();
        assert_eq!(c[0].messages[0].text, "hi");
        // Text handed over directly (the API, the app) may still carry it.
        let c = parse_chat_jsonl_text(&p, jsonl).unwrap();
        assert_eq!(c[0].messages[0].text, "hi");
        let locomo = "\u{feff}[{\"sample_id\":\"c\",\"conversation\":{\"session_1\":[{\"speaker\":\"A\",\"dia_id\":\"D1:1\",\"text\":\"x\"}]}}]";
        let (_d, p) = write(locomo, "bom.json");
        assert_eq!(parse_locomo(&p).unwrap()[0].messages.len(), 1);
        assert_eq!(parse_locomo_text(&p, locomo).unwrap()[0].messages.len(), 1);
        // UTF-16 is named as such rather than as a bad byte.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u16.jsonl");
        std::fs::write(&p, [0xff, 0xfe, b'{', 0]).unwrap();
        let e = read_text(&p).unwrap_err().to_string();
        assert!(e.contains("u16.jsonl") && e.contains("UTF-16"), "{e}");
    }

    #[test]
    fn a_repeated_dia_id_is_an_error_naming_both_turns() {
        let (_d, p) = write(
            r#"[{"sample_id":"c1","conversation":{"session_1":[
                {"speaker":"A","dia_id":"D1:1","text":"x"},
                {"speaker":"B","dia_id":"D1:1","text":"y"}]}}]"#,
            "dup.json",
        );
        let e = parse_locomo(&p).unwrap_err().to_string();
        assert!(
            e.contains("dup.json") && e.contains("c1 session_1 turn 1") && e.contains("turn 0"),
            "{e}"
        );
    }

    #[test]
    fn a_message_the_engine_refuses_is_an_error_naming_the_file_and_line() {
        let (_d, p) = write(
            "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\"a\\u0000b\"}\n",
            "nul.jsonl",
        );
        let e = parse_chat_jsonl(&p).unwrap_err();
        assert_eq!(e.code(), "import");
        let text = e.to_string();
        assert!(
            text.contains("nul.jsonl") && text.contains("line 2") && text.contains("NUL"),
            "{text}"
        );
        // (A blank LoCoMo turn is left out and counted instead: see
        // a_locomo_turn_without_words_keeps_its_image_and_one_without_either_is_counted_blank.)
        let (_d, p) = write(
            r#"[{"sample_id":"c1","conversation":{"session_1":[{"speaker":"A","dia_id":"D1:1","text":"a\u0000b"}]}}]"#,
            "nul.json",
        );
        let text = parse_locomo(&p).unwrap_err().to_string();
        assert!(
            text.contains("nul.json")
                && text.contains("c1 session_1 turn 0")
                && text.contains("NUL"),
            "{text}"
        );
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
    /// ChatGPT's data export (`conversations.json`).
    Chatgpt,
    /// Claude's data export (`conversations.json`).
    Claude,
    /// mem0 memories as `get_all` returns them.
    Mem0,
    /// A Letta agent file (`.af`).
    Letta,
}

impl ImportFormat {
    /// Tells the format of a file from its name and content: a `.jsonl` name or a first
    /// line that is a message object (`role` and `content`) is chat JSONL; a `.af` name is
    /// a Letta agent file; an object whose `format` is Somna's is an export. A JSON list
    /// is told by its first item: a ChatGPT conversation has `mapping`, a Claude one
    /// `chat_messages`, a mem0 memory `memory` and `id`, a LoCoMo sample `conversation`.
    /// A JSON object is told by its top-level keys: mem0's `results`, a Letta agent file's
    /// `agents` (or an older one's `core_memory`), or one ChatGPT or Claude conversation.
    /// Anything else is a typed import error that says what was found, so the caller can
    /// name the format instead.
    pub fn detect(name: &str, text: &str) -> Result<ImportFormat> {
        let file = Path::new(name);
        let lower = name.to_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            return Ok(ImportFormat::ChatJsonl);
        }
        if lower.ends_with(".af") {
            return Ok(ImportFormat::Letta);
        }
        let body = text.trim_start_matches('\u{feff}').trim_start();
        let undetected = |what: &str| {
            import_err(
                file,
                "start of file",
                format!(
                    "cannot tell the format: {what}; expected chat JSONL (one {{\"role\", \"content\"}} object per line), LoCoMo JSON, a Somna export, ChatGPT's or Claude's conversations.json, mem0 memories or a Letta agent file"
                ),
            )
        };
        match body.chars().next() {
            None => Err(undetected("the file is empty")),
            Some('[') => {
                // Peek at the first item's keys only.
                let first = serde_json::Deserializer::from_str(&body[1..])
                    .into_iter::<Value>()
                    .next();
                match first {
                    Some(Ok(Value::Object(m))) => Ok(if m.contains_key("mapping") {
                        ImportFormat::Chatgpt
                    } else if m.contains_key("chat_messages") {
                        ImportFormat::Claude
                    } else if m.contains_key("memory") && m.contains_key("id") {
                        ImportFormat::Mem0
                    } else {
                        // A LoCoMo sample, or one the LoCoMo parser will report precisely.
                        ImportFormat::Locomo
                    }),
                    // An empty list.
                    _ if body[1..].trim_start().starts_with(']') => Ok(ImportFormat::Locomo),
                    _ => Err(undetected("a JSON list whose first item is not an object")),
                }
            }
            Some('{') => {
                let first_line = body.lines().next().unwrap_or_default();
                if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(first_line) {
                    if m.contains_key("role") && m.contains_key("content") {
                        return Ok(ImportFormat::ChatJsonl);
                    }
                }
                // A pretty-printed export names its format in its first field.
                let head: String = body.chars().take(4096).collect();
                if names_export_format(&head) {
                    return Ok(ImportFormat::Json);
                }
                // The top-level keys, without building the values.
                let keys: HashMap<String, serde::de::IgnoredAny> = match serde_json::from_str(body)
                {
                    Ok(k) => k,
                    Err(_) => {
                        return Err(undetected("a JSON object that does not parse"));
                    }
                };
                let has = |k: &str| keys.contains_key(k);
                if has("format") && has("memories") {
                    return Ok(ImportFormat::Json);
                }
                if has("results") {
                    return Ok(ImportFormat::Mem0);
                }
                if has("agents") || has("core_memory") {
                    return Ok(ImportFormat::Letta);
                }
                if has("mapping") {
                    return Ok(ImportFormat::Chatgpt);
                }
                if has("chat_messages") {
                    return Ok(ImportFormat::Claude);
                }
                if has("conversation") {
                    return Err(undetected(
                        "a single LoCoMo sample; LoCoMo files are a list of samples",
                    ));
                }
                Err(undetected(
                    "a JSON object that is none of the formats Somna reads",
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
