//! Parsers for the memory people keep elsewhere: ChatGPT's and Claude's data exports
//! (conversations, as turns), mem0 memories and Letta agent files (memories another system
//! already made, as facts). Like the parsers in `import.rs`, each reads the whole input and
//! checks every record before anything is written, so bad input imports nothing; an
//! error names the file, the record (its place, from 1, and its id) and the problem.
//!
//! Every message keeps the source's own id as its external id (a ChatGPT message id, a
//! Claude message uuid, a mem0 memory id, a Letta block or passage id), so importing the
//! same file again, or resuming an interrupted import, stores each record once.

use super::import::{check_message, import_err, strip_bom, ConversationBatch, Records};
use crate::store::Message;
use crate::{Error, Result};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The JSON document of `text`, or an import error at the line and column where it breaks.
fn parse_json(file: &Path, text: &str) -> Result<Value> {
    serde_json::from_str(strip_bom(text)).map_err(|e| {
        import_err(
            file,
            format!("line {}, column {}", e.line(), e.column()),
            format!("invalid JSON: {e}"),
        )
    })
}

/// "record N (id X)": the place of a top-level record, from 1, and its id when it has one.
fn record(i: usize, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("record {} (id {id})", i + 1),
        None => format!("record {}", i + 1),
    }
}

/// The string field `key` of `v`, when present and a string.
fn str_field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Unix milliseconds of a time given as Unix seconds (a number, fractions allowed) or as an
/// ISO 8601 text: RFC 3339 (`2024-03-01T12:00:00Z`, `…+01:00`), the same with a space for
/// the `T` (Python's `str(datetime)`), or without an offset (taken as UTC).
pub(crate) fn parse_time(v: &Value) -> std::result::Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => {
            let secs = n
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("unreadable time {n}"))?;
            Ok(Some((secs * 1000.0).round() as i64))
        }
        Value::String(s) => parse_iso(s)
            .map(Some)
            .ok_or_else(|| format!("unreadable time {s:?}")),
        other => Err(format!("unreadable time {other}")),
    }
}

fn parse_iso(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    let spaced = s.replacen(' ', "T", 1);
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&spaced) {
        return Some(t.timestamp_millis());
    }
    chrono::NaiveDateTime::parse_from_str(&spaced, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}

/// The time in field `key` of `v` (absent or null: none), or an import error at `loc`.
fn time_field(file: &Path, loc: &str, v: &Value, key: &str) -> Result<Option<i64>> {
    match v.get(key) {
        None => Ok(None),
        Some(t) => parse_time(t).map_err(|e| import_err(file, loc, format!("`{key}`: {e}"))),
    }
}

/// The error for a file whose records yield nothing to store.
fn nothing(file: &Path, what: &str) -> Error {
    import_err(file, "top level", format!("nothing to import: {what}"))
}

/// The top-level records of a document that is a list of them, or one of them alone
/// (`is_one` tells which object is a record).
fn records_of<'v>(
    file: &Path,
    doc: &'v Value,
    is_one: impl Fn(&Map<String, Value>) -> bool,
    expected: &str,
) -> Result<Vec<&'v Value>> {
    match doc {
        Value::Array(items) => Ok(items.iter().collect()),
        Value::Object(o) if is_one(o) => Ok(vec![doc]),
        _ => Err(import_err(
            file,
            "top level",
            format!("expected {expected}"),
        )),
    }
}

// ---------------------------------------------------------------- ChatGPT

/// ChatGPT's data export (`conversations.json`): a list of conversations, each a tree of
/// message nodes (`mapping`: node id → `{message, parent, children}`) in which every
/// regenerated answer or edited question starts a branch. Only the branch the person last
/// saw is read: from `current_node` up through each node's `parent` to the root (without
/// `current_node`, the latest child at each step from the root). The user's and the
/// assistant's text messages become turns (`user` and `ChatGPT`); system, tool and hidden
/// messages and non-text content (code runs, browsing, images) are skipped. The
/// conversation is `chatgpt:<conversation id>`; the title, conversation id and model are
/// kept in each message's metadata.
pub fn parse_chatgpt_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc = parse_json(file, text)?;
    let convs = records_of(
        file,
        &doc,
        |o| o.contains_key("mapping"),
        "a list of ChatGPT conversations (objects with `mapping`)",
    )?;
    let mut out = Vec::with_capacity(convs.len());
    for (i, c) in convs.iter().enumerate() {
        let id = str_field(c, "id").or_else(|| str_field(c, "conversation_id"));
        let at = record(i, id);
        let id = id.ok_or_else(|| import_err(file, &at, "missing string field `id`"))?;
        let title = str_field(c, "title");
        let mapping = c
            .get("mapping")
            .and_then(Value::as_object)
            .ok_or_else(|| import_err(file, &at, "missing object `mapping`"))?;
        let path = current_branch(file, &at, c, mapping)?;
        let mut messages = Vec::new();
        for node_id in path {
            let node = &mapping[node_id];
            let Some(msg) = node.get("message").filter(|m| !m.is_null()) else {
                continue;
            };
            if let Some(m) = chatgpt_message(file, &at, node_id, msg, id, title)? {
                messages.push(m);
            }
        }
        out.push(ConversationBatch::turns(format!("chatgpt:{id}"), messages));
    }
    if out.iter().all(|b| b.messages.is_empty()) {
        return Err(nothing(
            file,
            "no conversation has a user or assistant message",
        ));
    }
    Ok(out)
}

/// The node ids of the current branch of one conversation, root first.
fn current_branch<'m>(
    file: &Path,
    at: &str,
    conv: &Value,
    mapping: &'m Map<String, Value>,
) -> Result<Vec<&'m str>> {
    let node = |id: &str| mapping.get_key_value(id).map(|(k, v)| (k.as_str(), v));
    let leaf = match conv.get("current_node") {
        Some(Value::String(cur)) => {
            node(cur)
                .ok_or_else(|| {
                    import_err(
                        file,
                        at,
                        format!("`current_node` {cur:?} is not in `mapping`"),
                    )
                })?
                .0
        }
        Some(Value::Null) | None => match latest_leaf(file, at, mapping)? {
            Some(leaf) => leaf,
            None => return Ok(Vec::new()),
        },
        Some(other) => {
            return Err(import_err(
                file,
                at,
                format!("`current_node` must be a node id, not {other}"),
            ))
        }
    };
    let mut path = vec![leaf];
    let mut seen: HashSet<&str> = HashSet::from([leaf]);
    let mut here = leaf;
    loop {
        let parent = match mapping[here].get("parent") {
            None | Some(Value::Null) => break,
            Some(Value::String(p)) => p.as_str(),
            Some(other) => {
                return Err(import_err(
                    file,
                    format!("{at}, node {here}"),
                    format!("`parent` must be a node id, not {other}"),
                ))
            }
        };
        let (parent, _) = node(parent).ok_or_else(|| {
            import_err(
                file,
                format!("{at}, node {here}"),
                format!("its parent {parent:?} is not in `mapping`"),
            )
        })?;
        if !seen.insert(parent) {
            return Err(import_err(
                file,
                format!("{at}, node {here}"),
                "the `parent` links go round in a loop",
            ));
        }
        path.push(parent);
        here = parent;
    }
    path.reverse();
    Ok(path)
}

/// Without `current_node`: from the root (the node without a parent), the last child at
/// each step, which is the latest answer or edit.
fn latest_leaf<'m>(
    file: &Path,
    at: &str,
    mapping: &'m Map<String, Value>,
) -> Result<Option<&'m str>> {
    let Some((root, _)) = mapping
        .iter()
        .find(|(_, n)| n.get("parent").is_none_or(Value::is_null))
    else {
        return if mapping.is_empty() {
            Ok(None)
        } else {
            Err(import_err(
                file,
                at,
                "no node of `mapping` is a root (every one has a parent)",
            ))
        };
    };
    let mut here = root.as_str();
    let mut seen = HashSet::from([here]);
    while let Some(next) = mapping[here]
        .get("children")
        .and_then(Value::as_array)
        .and_then(|c| c.last())
        .and_then(Value::as_str)
    {
        let (next, _) = mapping.get_key_value(next).ok_or_else(|| {
            import_err(
                file,
                format!("{at}, node {here}"),
                format!("its child {next:?} is not in `mapping`"),
            )
        })?;
        if !seen.insert(next.as_str()) {
            return Err(import_err(
                file,
                format!("{at}, node {here}"),
                "the `children` links go round in a loop",
            ));
        }
        here = next;
    }
    Ok(Some(here))
}

/// One ChatGPT message as a turn, or `None` for what is not a visible user or assistant
/// text (system and tool messages, hidden context, code and browsing output, empty text).
fn chatgpt_message(
    file: &Path,
    at: &str,
    node_id: &str,
    msg: &Value,
    conversation_id: &str,
    title: Option<&str>,
) -> Result<Option<Message>> {
    let mid = str_field(msg, "id").unwrap_or(node_id);
    let loc = format!("{at}, message {mid}");
    let role = msg
        .get("author")
        .and_then(|a| str_field(a, "role"))
        .ok_or_else(|| import_err(file, &loc, "missing string field `author.role`"))?;
    let speaker = match role {
        "user" => "user",
        "assistant" => "ChatGPT",
        _ => return Ok(None),
    };
    let meta = msg.get("metadata");
    let hidden = meta
        .and_then(|m| m.get("is_visually_hidden_from_conversation"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if hidden {
        return Ok(None);
    }
    let content = msg
        .get("content")
        .filter(|c| c.is_object())
        .ok_or_else(|| import_err(file, &loc, "missing object `content`"))?;
    let kind = str_field(content, "content_type").unwrap_or("text");
    if kind != "text" && kind != "multimodal_text" {
        return Ok(None);
    }
    let text = match content.get("parts") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        None | Some(Value::Null) => str_field(content, "text").unwrap_or_default().to_string(),
        Some(other) => {
            return Err(import_err(
                file,
                &loc,
                format!("`content.parts` must be a list, not {other}"),
            ))
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let occurred_at = time_field(file, &loc, msg, "create_time")?;
    let mut metadata = json!({
        "source": "chatgpt",
        "conversation_id": conversation_id,
        "message_id": mid,
    });
    if let Some(t) = title {
        metadata["title"] = t.into();
    }
    if let Some(model) = meta.and_then(|m| str_field(m, "model_slug")) {
        metadata["model"] = model.into();
    }
    let m = Message {
        role: role.to_string(),
        speaker: Some(speaker.to_string()),
        text,
        session: None,
        occurred_at,
        external_id: Some(mid.to_string()),
        metadata,
    };
    check_message(file, &loc, &m)?;
    Ok(Some(m))
}

// ---------------------------------------------------------------- Claude

/// Claude's data export (`conversations.json`): a list of conversations (`uuid`, `name`,
/// `chat_messages`), each message with `uuid`, `sender` (`human` or `assistant`), `text`
/// or `content` blocks, and `created_at`. Human and assistant messages become turns
/// (`user` and `Claude`); the text is `text`, or the `text` blocks of `content` (tool use
/// and tool results are skipped). Where a conversation names its `current_leaf_message_uuid`
/// and its messages their `parent_message_uuid`, only that branch is read. The
/// conversation is `claude:<uuid>`; its name is kept in each message's metadata.
pub fn parse_claude_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc = parse_json(file, text)?;
    let convs = records_of(
        file,
        &doc,
        |o| o.contains_key("chat_messages"),
        "a list of Claude conversations (objects with `chat_messages`)",
    )?;
    let mut out = Vec::with_capacity(convs.len());
    for (i, c) in convs.iter().enumerate() {
        let id = str_field(c, "uuid");
        let at = record(i, id);
        let id = id.ok_or_else(|| import_err(file, &at, "missing string field `uuid`"))?;
        let name = str_field(c, "name").filter(|n| !n.trim().is_empty());
        let all = c
            .get("chat_messages")
            .and_then(Value::as_array)
            .ok_or_else(|| import_err(file, &at, "missing list `chat_messages`"))?;
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (j, m) in all.iter().enumerate() {
            let mid = str_field(m, "uuid").ok_or_else(|| {
                import_err(
                    file,
                    format!("{at}, message {}", j + 1),
                    "missing string field `uuid`",
                )
            })?;
            if let Some(first) = by_id.insert(mid, j) {
                return Err(import_err(
                    file,
                    format!("{at}, message {} (id {mid})", j + 1),
                    format!("the same `uuid` as message {}", first + 1),
                ));
            }
        }
        let order = claude_branch(file, &at, c, all, &by_id)?;
        let mut messages = Vec::new();
        for j in order {
            if let Some(m) = claude_message(file, &at, j, &all[j], id, name)? {
                messages.push(m);
            }
        }
        out.push(ConversationBatch::turns(format!("claude:{id}"), messages));
    }
    if out.iter().all(|b| b.messages.is_empty()) {
        return Err(nothing(
            file,
            "no conversation has a human or assistant message",
        ));
    }
    Ok(out)
}

/// The indices of the messages to read, in order: the branch ending at
/// `current_leaf_message_uuid` when the conversation names one and its messages name
/// their parents, otherwise every message as listed.
fn claude_branch(
    file: &Path,
    at: &str,
    conv: &Value,
    all: &[Value],
    by_id: &HashMap<&str, usize>,
) -> Result<Vec<usize>> {
    let leaf = str_field(conv, "current_leaf_message_uuid");
    let linked = all
        .iter()
        .any(|m| str_field(m, "parent_message_uuid").is_some());
    let Some(leaf) = leaf.filter(|_| linked) else {
        return Ok((0..all.len()).collect());
    };
    let mut here = *by_id.get(leaf).ok_or_else(|| {
        import_err(
            file,
            at,
            format!("`current_leaf_message_uuid` {leaf:?} is not one of its messages"),
        )
    })?;
    let mut path = vec![here];
    let mut seen = HashSet::from([here]);
    while let Some(parent) = str_field(&all[here], "parent_message_uuid") {
        // The root's parent is a sentinel id outside the conversation.
        let Some(&p) = by_id.get(parent) else { break };
        if !seen.insert(p) {
            return Err(import_err(
                file,
                format!("{at}, message {}", here + 1),
                "the `parent_message_uuid` links go round in a loop",
            ));
        }
        path.push(p);
        here = p;
    }
    path.reverse();
    Ok(path)
}

/// One Claude message as a turn, or `None` for another sender or a message without text.
fn claude_message(
    file: &Path,
    at: &str,
    j: usize,
    m: &Value,
    conversation_id: &str,
    name: Option<&str>,
) -> Result<Option<Message>> {
    let mid = str_field(m, "uuid").unwrap_or_default();
    let loc = format!("{at}, message {} (id {mid})", j + 1);
    let sender = str_field(m, "sender")
        .ok_or_else(|| import_err(file, &loc, "missing string field `sender`"))?;
    let (role, speaker) = match sender {
        "human" | "user" => ("user", "user"),
        "assistant" => ("assistant", "Claude"),
        _ => return Ok(None),
    };
    let text = match (m.get("text"), m.get("content")) {
        (Some(Value::String(t)), _) if !t.trim().is_empty() => t.clone(),
        (_, Some(Value::Array(blocks))) => blocks
            .iter()
            .filter(|b| str_field(b, "type").is_none_or(|t| t == "text"))
            .filter_map(|b| str_field(b, "text"))
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        (Some(Value::String(_)), _) => String::new(),
        _ => {
            return Err(import_err(
                file,
                &loc,
                "missing `text` (a string) or `content` (a list of blocks)",
            ))
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let occurred_at = time_field(file, &loc, m, "created_at")?;
    let mut metadata = json!({
        "source": "claude",
        "conversation_id": conversation_id,
        "message_id": mid,
    });
    if let Some(n) = name {
        metadata["title"] = n.into();
    }
    let message = Message {
        role: role.to_string(),
        speaker: Some(speaker.to_string()),
        text,
        session: None,
        occurred_at,
        external_id: Some(mid.to_string()),
        metadata,
    };
    check_message(file, &loc, &message)?;
    Ok(Some(message))
}

// ---------------------------------------------------------------- mem0

/// mem0 memories as its `get_all` returns them (`{"results": [...]}`, or the older bare
/// list): each `{id, memory, user_id?, agent_id?, run_id?, metadata?, created_at?,
/// updated_at?, hash?, categories?}` becomes one fact. Its conversation is
/// `mem0:<user_id>` (else the agent's, the run's, or `mem0`), who is the user (else the
/// agent); the time is `created_at`; every mem0 field is kept in the memory's metadata
/// under `mem0`.
pub fn parse_mem0_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc = parse_json(file, text)?;
    let items = match &doc {
        Value::Object(o) => match o.get("results").or_else(|| o.get("memories")) {
            Some(Value::Array(items)) => items,
            _ => {
                return Err(import_err(
                    file,
                    "top level",
                    "expected mem0's get_all result: {\"results\": [memories]}",
                ))
            }
        },
        Value::Array(items) => items,
        _ => {
            return Err(import_err(
                file,
                "top level",
                "expected mem0's get_all result: {\"results\": [memories]}",
            ))
        }
    };
    let mut out: Vec<ConversationBatch> = Vec::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, r) in items.iter().enumerate() {
        let id = str_field(r, "id");
        let at = record(i, id);
        if !r.is_object() {
            return Err(import_err(file, &at, "expected a memory object"));
        }
        let id = id.ok_or_else(|| import_err(file, &at, "missing string field `id`"))?;
        if let Some(first) = seen.insert(id, i) {
            return Err(import_err(
                file,
                &at,
                format!("the same `id` as record {}", first + 1),
            ));
        }
        let text = match r.get("memory") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err(import_err(file, &at, "missing string field `memory`")),
        };
        let text_of = |key: &str| -> Result<Option<&str>> {
            match r.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.as_str())),
                Some(Value::String(_)) => Ok(None),
                Some(other) => Err(import_err(
                    file,
                    &at,
                    format!("`{key}` must be a string, not {other}"),
                )),
            }
        };
        let (user, agent, run) = (
            text_of("user_id")?,
            text_of("agent_id")?,
            text_of("run_id")?,
        );
        match r.get("metadata") {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(import_err(
                    file,
                    &at,
                    format!("`metadata` must be an object, not {other}"),
                ))
            }
        }
        let created = time_field(file, &at, r, "created_at")?;
        time_field(file, &at, r, "updated_at")?;
        let mut kept = Map::new();
        for key in [
            "id",
            "user_id",
            "agent_id",
            "run_id",
            "actor_id",
            "role",
            "hash",
            "created_at",
            "updated_at",
            "categories",
            "metadata",
        ] {
            if let Some(v) = r.get(key).filter(|v| !v.is_null()) {
                kept.insert(key.into(), v.clone());
            }
        }
        let owner = user.or(agent).or(run);
        let conversation = match owner {
            Some(o) => format!("mem0:{o}"),
            None => "mem0".to_string(),
        };
        let message = Message {
            role: "memory".into(),
            speaker: Some(user.or(agent).unwrap_or("mem0").to_string()),
            text,
            session: None,
            occurred_at: created,
            external_id: Some(id.to_string()),
            metadata: json!({"source": "mem0", "mem0": kept}),
        };
        check_message(file, &at, &message)?;
        let n = *slot.entry(conversation.clone()).or_insert_with(|| {
            out.push(ConversationBatch {
                conversation,
                messages: Vec::new(),
                records: Records::Facts,
                blank: 0,
            });
            out.len() - 1
        });
        out[n].messages.push(message);
    }
    if out.is_empty() {
        return Err(nothing(file, "the file holds no memories"));
    }
    Ok(out)
}

// ---------------------------------------------------------------- Letta

/// A Letta agent file (`.af`). The current schema is `{agents, blocks, …}`: each agent
/// names its core memory blocks by id (`block_ids`) in the file's `blocks` (`{id, label,
/// value, limit?, description?}`); the older one is a single agent with its blocks inline
/// (`core_memory`). Each block with a value becomes one fact (session `core memory`), each
/// archival passage (`{id, text, created_at?, tags?}`, in the agent's `passages` or
/// `archival_memory`, or in a top-level `passages` list naming its `agent_id`) one fact
/// (session `archival memory`). The conversation is `letta:<agent name>` and who is the
/// agent; the agent, the block's label, limit and description and the passage's tags are
/// kept in the memory's metadata under `letta`. Messages, tools and settings are not read.
pub fn parse_letta_text(file: &Path, text: &str) -> Result<Vec<ConversationBatch>> {
    let doc = parse_json(file, text)?;
    let obj = doc.as_object().ok_or_else(|| {
        import_err(
            file,
            "top level",
            "expected a Letta agent file (an object with `agents` and `blocks`)",
        )
    })?;
    let agents: Vec<&Value> = match obj.get("agents") {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(other) => {
            return Err(import_err(
                file,
                "top level",
                format!("`agents` must be a list, not {other}"),
            ))
        }
        None if obj.contains_key("core_memory") || obj.contains_key("memory") => vec![&doc],
        None => {
            return Err(import_err(
                file,
                "top level",
                "expected a Letta agent file (an object with `agents` and `blocks`)",
            ))
        }
    };
    let mut blocks: HashMap<&str, &Value> = HashMap::new();
    if let Some(list) = obj.get("blocks").and_then(Value::as_array) {
        for (i, b) in list.iter().enumerate() {
            let id = str_field(b, "id").ok_or_else(|| {
                import_err(
                    file,
                    format!("block {}", i + 1),
                    "missing string field `id`",
                )
            })?;
            blocks.insert(id, b);
        }
    }
    let shared_passages: Vec<&Value> = obj
        .get("passages")
        .filter(|_| obj.contains_key("agents"))
        .and_then(Value::as_array)
        .map(|p| p.iter().collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, agent) in agents.iter().enumerate() {
        let agent_id = str_field(agent, "id");
        let at = record(i, agent_id.or_else(|| str_field(agent, "name")));
        let name = str_field(agent, "name")
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| import_err(file, &at, "missing string field `name`"))?;
        let mut messages = Vec::new();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut push = |loc: String, m: Message| -> Result<()> {
            let ext = m.external_id.clone().unwrap_or_default();
            if let Some(first) = seen.insert(ext.clone(), loc.clone()) {
                return Err(import_err(
                    file,
                    &loc,
                    format!("the id {ext:?} is also the id of {first}"),
                ));
            }
            check_message(file, &loc, &m)?;
            messages.push(m);
            Ok(())
        };
        for (j, (loc, block)) in agent_blocks(file, &at, agent, &blocks)?
            .into_iter()
            .enumerate()
        {
            if let Some(m) = letta_block(file, &loc, j, block, name, agent_id)? {
                push(loc, m)?;
            }
        }
        let own = ["passages", "archival_memory"]
            .iter()
            .find_map(|k| agent.get(*k).and_then(Value::as_array));
        let passages = own.into_iter().flatten().chain(
            shared_passages
                .iter()
                .copied()
                .filter(|p| agents.len() == 1 || str_field(p, "agent_id") == agent_id),
        );
        for (j, p) in passages.enumerate() {
            let loc = format!("{at}, passage {}", j + 1);
            let m = letta_passage(file, &loc, p, name, agent_id)?;
            let loc = format!(
                "{loc} (id {})",
                m.external_id.as_deref().unwrap_or_default()
            );
            push(loc, m)?;
        }
        out.push(ConversationBatch {
            conversation: format!("letta:{name}"),
            messages,
            records: Records::Facts,
            blank: 0,
        });
    }
    if out.iter().all(|b| b.messages.is_empty()) {
        return Err(nothing(
            file,
            "no agent has a memory block with a value or an archival passage",
        ));
    }
    Ok(out)
}

/// The core memory blocks of one agent with where each is named: the file's blocks it
/// names by id (current schema), or its inline `core_memory` / `memory.blocks` (older).
fn agent_blocks<'v>(
    file: &Path,
    at: &str,
    agent: &'v Value,
    blocks: &HashMap<&str, &'v Value>,
) -> Result<Vec<(String, &'v Value)>> {
    if let Some(ids) = agent.get("block_ids").and_then(Value::as_array) {
        return ids
            .iter()
            .map(|id| {
                let id = id.as_str().ok_or_else(|| {
                    import_err(file, at, format!("`block_ids` holds {id}, not a block id"))
                })?;
                let b = blocks.get(id).ok_or_else(|| {
                    import_err(
                        file,
                        at,
                        format!("it names block {id:?}, which the file's `blocks` do not hold"),
                    )
                })?;
                Ok((format!("{at}, block {id}"), *b))
            })
            .collect();
    }
    let inline = agent
        .get("core_memory")
        .or_else(|| agent.get("memory").and_then(|m| m.get("blocks")));
    match inline {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => Ok(list
            .iter()
            .enumerate()
            .map(|(j, b)| {
                let name = str_field(b, "id").or_else(|| str_field(b, "label"));
                let loc = match name {
                    Some(n) => format!("{at}, block {n}"),
                    None => format!("{at}, block {}", j + 1),
                };
                (loc, b)
            })
            .collect()),
        Some(other) => Err(import_err(
            file,
            at,
            format!("`core_memory` must be a list of blocks, not {other}"),
        )),
    }
}

/// One core memory block as a fact, or `None` when its value is empty.
fn letta_block(
    file: &Path,
    loc: &str,
    j: usize,
    b: &Value,
    agent: &str,
    agent_id: Option<&str>,
) -> Result<Option<Message>> {
    let label = str_field(b, "label")
        .filter(|l| !l.trim().is_empty())
        .ok_or_else(|| import_err(file, loc, "missing string field `label`"))?;
    let value = match b.get("value") {
        Some(Value::String(v)) => v,
        Some(Value::Null) | None => return Ok(None),
        Some(other) => {
            return Err(import_err(
                file,
                loc,
                format!("`value` must be a string, not {other}"),
            ))
        }
    };
    if value.trim().is_empty() {
        return Ok(None);
    }
    let id = str_field(b, "id")
        .map(str::to_string)
        .unwrap_or_else(|| format!("core:{label}"));
    let mut letta = json!({
        "agent": agent,
        "memory": "core",
        "block_id": id,
        "label": label,
        "position": j + 1,
    });
    if let Some(a) = agent_id {
        letta["agent_id"] = a.into();
    }
    for key in ["limit", "description", "metadata", "read_only"] {
        if let Some(v) = b.get(key).filter(|v| !v.is_null()) {
            letta[key] = v.clone();
        }
    }
    Ok(Some(Message {
        role: "memory".into(),
        speaker: Some(agent.to_string()),
        text: value.clone(),
        session: Some("core memory".into()),
        occurred_at: time_field(file, loc, b, "updated_at")?.or(time_field(
            file,
            loc,
            b,
            "created_at",
        )?),
        external_id: Some(id),
        metadata: json!({"source": "letta", "letta": letta}),
    }))
}

/// One archival passage as a fact.
fn letta_passage(
    file: &Path,
    loc: &str,
    p: &Value,
    agent: &str,
    agent_id: Option<&str>,
) -> Result<Message> {
    let id =
        str_field(p, "id").ok_or_else(|| import_err(file, loc, "missing string field `id`"))?;
    let text = str_field(p, "text")
        .or_else(|| str_field(p, "content"))
        .ok_or_else(|| {
            import_err(
                file,
                format!("{loc} (id {id})"),
                "missing string field `text`",
            )
        })?;
    let mut letta = json!({"agent": agent, "memory": "archival", "passage_id": id});
    if let Some(a) = agent_id {
        letta["agent_id"] = a.into();
    }
    for key in ["tags", "metadata", "created_at"] {
        if let Some(v) = p.get(key).filter(|v| !v.is_null()) {
            letta[key] = v.clone();
        }
    }
    Ok(Message {
        role: "memory".into(),
        speaker: Some(agent.to_string()),
        text: text.to_string(),
        session: Some("archival memory".into()),
        occurred_at: time_field(file, &format!("{loc} (id {id})"), p, "created_at")?,
        external_id: Some(id.to_string()),
        metadata: json!({"source": "letta", "letta": letta}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_seconds_rfc3339_python_and_naive_utc() {
        let ms = |v: Value| parse_time(&v).unwrap();
        assert_eq!(ms(json!(1_700_000_000.25)), Some(1_700_000_000_250));
        assert_eq!(ms(json!("2024-03-01T12:00:00Z")), Some(1_709_294_400_000));
        assert_eq!(
            ms(json!("2024-03-01T13:00:00+01:00")),
            Some(1_709_294_400_000)
        );
        assert_eq!(
            ms(json!("2024-03-01 12:00:00.500000+00:00")),
            Some(1_709_294_400_500)
        );
        assert_eq!(
            ms(json!("2024-03-01T12:00:00.123456")),
            Some(1_709_294_400_123)
        );
        assert_eq!(ms(Value::Null), None);
        assert!(parse_time(&json!("yesterday"))
            .unwrap_err()
            .contains("yesterday"));
        assert!(parse_time(&json!([1])).is_err());
    }

    #[test]
    fn a_chatgpt_tree_is_read_along_the_current_branch_only() {
        let doc = json!([{
            "id": "c1", "title": "T", "current_node": "d",
            "mapping": {
                "root": {"id": "root", "message": null, "parent": null, "children": ["a"]},
                "a": {"id": "a", "parent": "root", "children": ["b", "d"], "message": {
                    "id": "a", "author": {"role": "user"}, "create_time": 10.0,
                    "content": {"content_type": "text", "parts": ["question"]}}},
                "b": {"id": "b", "parent": "a", "children": [], "message": {
                    "id": "b", "author": {"role": "assistant"}, "create_time": 11.0,
                    "content": {"content_type": "text", "parts": ["old answer"]}}},
                "d": {"id": "d", "parent": "a", "children": [], "message": {
                    "id": "d", "author": {"role": "assistant"}, "create_time": 12.0,
                    "content": {"content_type": "text", "parts": ["new answer"]}}}
            }
        }]);
        let b = parse_chatgpt_text(Path::new("c.json"), &doc.to_string()).unwrap();
        let texts: Vec<&str> = b[0].messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["question", "new answer"]);
        // Without `current_node`: the latest child at each step.
        let mut doc = doc;
        doc[0].as_object_mut().unwrap().remove("current_node");
        let b = parse_chatgpt_text(Path::new("c.json"), &doc.to_string()).unwrap();
        assert_eq!(b[0].messages[1].text, "new answer");
        // A loop in the parent links is an error naming the node.
        doc[0]["current_node"] = "a".into();
        doc[0]["mapping"]["root"]["parent"] = "a".into();
        let e = parse_chatgpt_text(Path::new("c.json"), &doc.to_string()).unwrap_err();
        assert!(e.to_string().contains("loop"), "{e}");
    }
}
