//! The memory people already have: ChatGPT's and Claude's data exports, mem0 memories and
//! Letta agent files, from the fixtures in `tests/fixtures/imports/`. Per format: the
//! format is detected, a fixture imports with the counts and texts it should, importing
//! it again adds nothing, a malformed record is an error naming it that writes nothing,
//! and an export of the result imports into a fresh store as the same store.

use crate::common::*;
use serde_json::{json, Value};
use somna_engine::ingest::{ImportFormat, ImportOutcome};
use somna_engine::{AddReport, Job, Kind, ListQuery, Memory, MemoryFilter, Somna, State};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/imports")
        .join(name)
}

fn import(engine: &Somna, file: &Path, format: ImportFormat) -> somna_engine::Result<AddReport> {
    match engine.import_file(file, format, &Job::default())? {
        ImportOutcome::Conversations(r) => Ok(r),
        other => panic!("not a conversation import: {other:?}"),
    }
}

/// Every memory of the store (deleted and forgotten ones too), by id.
fn memories(engine: &Somna) -> Vec<Memory> {
    let q = ListQuery {
        filter: MemoryFilter {
            states: State::ALL.to_vec(),
            include_deleted: true,
            ..Default::default()
        },
        limit: 100_000,
        ..Default::default()
    };
    let mut v = engine.list(&q).unwrap().memories;
    v.sort_by_key(|m| m.id);
    v
}

/// The texts of the stored messages of `conversation`, in order.
fn texts(engine: &Somna, conversation: &str) -> Vec<String> {
    engine
        .with_store(|s| s.read().recent_messages(conversation, 1_000_000))
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect()
}

/// Imports `name` (format detected), checks that a second import stores nothing and
/// changes nothing, and that an export of the store round-trips through a fresh store.
fn import_twice(name: &str, format: ImportFormat) -> (Fixture, AddReport) {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(ImportFormat::detect(name, &text).unwrap(), format, "{name}");
    let f = Fixture::hash();
    let first = import(&f.engine, &path, format).unwrap();
    assert!(first.messages_stored > 0);
    assert_eq!(first.messages_skipped, 0);
    let before = memories(&f.engine);
    let again = import(&f.engine, &path, format).unwrap();
    assert_eq!(
        (again.messages_stored, again.messages_skipped),
        (0, first.messages_stored),
        "{name}: a second import stores nothing"
    );
    assert!(again.episodes.is_empty() && again.facts_added.is_empty());
    assert_eq!(
        memories(&f.engine),
        before,
        "{name}: changed by a second import"
    );

    let doc = f.engine.export().unwrap();
    let dst = Fixture::hash();
    dst.engine.import_export(&doc, &Job::default()).unwrap();
    let mut back = dst.engine.export().unwrap();
    back.exported_at = doc.exported_at;
    assert_eq!(back, doc, "{name}: the export round trip");
    (f, first)
}

/// A malformed variant of a fixture: the error names the file, the record and the
/// problem, and nothing is written.
fn refused(name: &str, format: ImportFormat, content: &Value, expect: &[&str]) {
    let f = Fixture::hash();
    let path = f.dir.path().join(name);
    std::fs::write(&path, serde_json::to_string_pretty(content).unwrap()).unwrap();
    let before = f.snapshot();
    let e = import(&f.engine, &path, format).unwrap_err();
    assert_eq!(e.code(), "import", "{e}");
    let text = e.to_string();
    assert!(text.contains(name), "{text}");
    for part in expect {
        assert!(text.contains(part), "{text} lacks {part:?}");
    }
    assert_eq!(f.snapshot(), before, "a refused import wrote something");
}

fn load(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

// ---------------------------------------------------------------- ChatGPT

#[test]
fn a_chatgpt_export_imports_the_current_branch_of_each_conversation() {
    let (f, r) = import_twice("chatgpt-conversations.json", ImportFormat::Chatgpt);
    // Conversation 1: the hidden system message, the abandoned answer and the tool output
    // are not turns; conversation 2: both turns.
    assert_eq!(r.messages_stored, 5);
    assert_eq!(r.episodes.len(), 5);
    let c1 = "chatgpt:67e1a2b3-aaaa-4bbb-8ccc-0000000000c1";
    assert_eq!(
        texts(&f.engine, c1),
        [
            "My starter Brötchen-Mutter is sluggish since I moved to Zürich — why?",
            "Zürich's tap water is hard and your kitchen is cooler; keep the starter near 24 °C.",
            "Here it is after a warm night: bubbly! 🫧",
        ]
    );
    assert_eq!(
        texts(&f.engine, "chatgpt:67e1a2b3-aaaa-4bbb-8ccc-0000000000c2"),
        [
            "I land at Haneda on 3 May; where should I stay near 浅草?",
            "Stay by Kaminarimon gate; the Ginza line runs from there."
        ]
    );
    let all = memories(&f.engine);
    assert!(
        all.iter().all(|m| !m.text.contains("ABANDONED")
            && !m.text.contains("24.0")
            && !m.text.contains("asset_pointer")),
        "only the current branch's visible text"
    );
    let first = all
        .iter()
        .find(|m| m.kind == Kind::Episode && m.text.contains("Brötchen"))
        .unwrap();
    assert_eq!(first.conversation.as_deref(), Some(c1));
    assert_eq!(first.occurred_at, Some(1_709_287_200_123));
    assert_eq!(first.w5h1.who.as_deref(), Some("user"));
    assert_eq!(first.metadata["title"], "Sourdough starter 🍞");
    assert_eq!(
        first.metadata["message_id"],
        "8f1c2d3e-0002-4a6b-9c0d-000000000002"
    );
    let answer = all
        .iter()
        .find(|m| m.kind == Kind::Episode && m.text.contains("tap water"))
        .unwrap();
    assert_eq!(answer.w5h1.who.as_deref(), Some("ChatGPT"));
    assert_eq!(answer.metadata["model"], "gpt-4o");
}

#[test]
fn a_malformed_chatgpt_record_is_named_and_nothing_is_written() {
    let mut doc = load("chatgpt-conversations.json");
    doc[1]["mapping"]["aaa-2"]["message"]
        .as_object_mut()
        .unwrap()
        .remove("author");
    refused(
        "bad-chatgpt.json",
        ImportFormat::Chatgpt,
        &doc,
        &[
            "record 2 (id 67e1a2b3-aaaa-4bbb-8ccc-0000000000c2)",
            "message aaa-2",
            "author.role",
        ],
    );
    let mut doc = load("chatgpt-conversations.json");
    doc[0]["current_node"] = "no-such-node".into();
    refused(
        "dangling.json",
        ImportFormat::Chatgpt,
        &doc,
        &["record 1 (id 67e1a2b3", "no-such-node", "not in `mapping`"],
    );
}

// ---------------------------------------------------------------- Claude

#[test]
fn a_claude_export_imports_each_conversation_s_text() {
    let (f, r) = import_twice("claude-conversations.json", ImportFormat::Claude);
    assert_eq!(r.messages_stored, 5);
    let c1 = "claude:5b7c1e2a-1111-4d2e-9f00-00000000c1a1";
    assert_eq!(
        texts(&f.engine, c1),
        [
            "I have a 5×10 m allotment in Gent with clay soil. What grows well?",
            "Clay holds water: brassicas, beans and courgettes do well.\nAdd compost each autumn — « la terre te le rendra ».",
            "Great, I'll start with broad beans in April 🌱",
        ],
        "text blocks only: the tool use and its result are left out"
    );
    let all = memories(&f.engine);
    let answer = all
        .iter()
        .find(|m| m.kind == Kind::Episode && m.text.contains("brassicas"))
        .unwrap();
    assert_eq!(answer.w5h1.who.as_deref(), Some("Claude"));
    assert_eq!(answer.occurred_at, Some(1_712_045_709_250));
    assert_eq!(answer.metadata["title"], "Garden plan for the allotment");
    assert_eq!(answer.metadata["message_id"], "c1a1-m2");
    let unnamed = all
        .iter()
        .find(|m| m.kind == Kind::Episode && m.text.contains("Ingrid's birthday"))
        .unwrap();
    assert!(
        unnamed.metadata.get("title").is_none(),
        "an empty name is no title"
    );
}

#[test]
fn a_claude_conversation_with_branches_is_read_along_its_current_leaf() {
    let doc = json!([{
        "uuid": "conv", "name": "n", "current_leaf_message_uuid": "m3b",
        "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "first", "parent_message_uuid": "00000000-0000-4000-8000-000000000000"},
            {"uuid": "m2", "sender": "assistant", "text": "answer", "parent_message_uuid": "m1"},
            {"uuid": "m3a", "sender": "human", "text": "edited away", "parent_message_uuid": "m2"},
            {"uuid": "m3b", "sender": "human", "text": "kept", "parent_message_uuid": "m2"}
        ]
    }]);
    let f = Fixture::hash();
    let p = f.dir.path().join("branches.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    import(&f.engine, &p, ImportFormat::Claude).unwrap();
    assert_eq!(texts(&f.engine, "claude:conv"), ["first", "answer", "kept"]);
}

#[test]
fn a_malformed_claude_record_is_named_and_nothing_is_written() {
    let mut doc = load("claude-conversations.json");
    doc[0]["chat_messages"][2]["created_at"] = "the second of April".into();
    refused(
        "bad-claude.json",
        ImportFormat::Claude,
        &doc,
        &[
            "record 1 (id 5b7c1e2a-1111-4d2e-9f00-00000000c1a1)",
            "message 3 (id c1a1-m3)",
            "created_at",
            "the second of April",
        ],
    );
}

// ---------------------------------------------------------------- mem0

#[test]
fn mem0_memories_become_facts_with_their_ids_owners_and_times() {
    let (f, r) = import_twice("mem0-memories.json", ImportFormat::Mem0);
    assert_eq!((r.messages_stored, r.episodes.len()), (3, 0));
    assert_eq!(
        r.facts_added.len(),
        3,
        "every memory is kept, none reconciled away"
    );
    let all = memories(&f.engine);
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|m| m.kind == Kind::Fact));
    let veg = all
        .iter()
        .find(|m| m.text.starts_with("Is vegetarian"))
        .unwrap();
    assert_eq!(veg.conversation.as_deref(), Some("mem0:alex"));
    assert_eq!(veg.w5h1.who.as_deref(), Some("alex"));
    // 2024-07-20T01:23:45.123456-07:00
    assert_eq!(veg.occurred_at, Some(1_721_463_825_123));
    assert_eq!(veg.valid_from, veg.occurred_at);
    let kept = &veg.metadata["mem0"];
    assert_eq!(kept["id"], "3f9d2a61-6c1e-4b7a-9e0f-5a1b2c3d4e01");
    assert_eq!(kept["user_id"], "alex");
    assert_eq!(kept["hash"], "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(
        kept["metadata"],
        json!({"category": "food", "confidence": 0.93})
    );
    assert_eq!(kept["updated_at"], "2024-07-21T09:00:00.000000-07:00");
    let krakow = all.iter().find(|m| m.text.contains("Kraków")).unwrap();
    assert_eq!(
        krakow.metadata["mem0"]["categories"],
        json!(["personal_details"])
    );
    let agent = all
        .iter()
        .find(|m| m.text.contains("bullet points ✔"))
        .unwrap();
    assert_eq!(agent.conversation.as_deref(), Some("mem0:travel-planner"));
    assert_eq!(agent.w5h1.who.as_deref(), Some("travel-planner"));
    assert_eq!(
        agent.occurred_at,
        Some(1_722_513_600_000),
        "a time without offset is UTC"
    );
    // Each fact is its message's memory.
    let linked = f
        .engine
        .with_store(|s| {
            s.conn().query_row(
                "SELECT COUNT(*) FROM messages WHERE memory_id IS NOT NULL",
                [],
                |r| r.get::<i64>(0),
            )
        })
        .unwrap();
    assert_eq!(linked, 3);
}

#[test]
fn a_malformed_mem0_record_is_named_and_nothing_is_written() {
    let mut doc = load("mem0-memories.json");
    doc["results"][1]["memory"] = Value::Null;
    refused(
        "bad-mem0.json",
        ImportFormat::Mem0,
        &doc,
        &[
            "record 2 (id 3f9d2a61-6c1e-4b7a-9e0f-5a1b2c3d4e02)",
            "`memory`",
        ],
    );
    let mut doc = load("mem0-memories.json");
    doc["results"][2]["id"] = doc["results"][0]["id"].clone();
    refused(
        "dup-mem0.json",
        ImportFormat::Mem0,
        &doc,
        &[
            "record 3 (id 3f9d2a61-6c1e-4b7a-9e0f-5a1b2c3d4e01)",
            "record 1",
        ],
    );
}

// ---------------------------------------------------------------- Letta

#[test]
fn a_letta_agent_file_imports_core_and_archival_memory_as_facts() {
    let (f, r) = import_twice("letta-agent.af", ImportFormat::Letta);
    // Two blocks with a value (the empty scratchpad is not a memory), two passages.
    assert_eq!(
        (r.messages_stored, r.facts_added.len(), r.episodes.len()),
        (4, 4, 0)
    );
    let all = memories(&f.engine);
    assert!(all.iter().all(|m| m.kind == Kind::Fact
        && m.conversation.as_deref() == Some("letta:Sam the librarian")
        && m.w5h1.who.as_deref() == Some("Sam the librarian")));
    let human = all
        .iter()
        .find(|m| m.text.starts_with("Name: Maja"))
        .unwrap();
    assert_eq!(human.session.as_deref(), Some("core memory"));
    assert_eq!(human.metadata["letta"]["label"], "human");
    assert_eq!(human.metadata["letta"]["block_id"], "block-1");
    assert_eq!(human.metadata["letta"]["limit"], 5000);
    let persona = all.iter().find(|m| m.text.contains("Ørsted")).unwrap();
    assert_eq!(persona.metadata["letta"]["label"], "persona");
    let loan = all.iter().find(|m| m.text.contains("Solaris")).unwrap();
    assert_eq!(loan.session.as_deref(), Some("archival memory"));
    assert_eq!(
        loan.metadata["letta"]["passage_id"],
        "passage-7b1e0c2d-0001-4f00-8000-000000000001"
    );
    assert_eq!(loan.metadata["letta"]["tags"], json!(["loans"]));
    assert_eq!(loan.occurred_at, Some(1_740_910_500_000));
}

#[test]
fn an_older_letta_agent_file_with_inline_core_memory_imports_too() {
    let doc = json!({
        "name": "old-agent",
        "agent_type": "memgpt_agent",
        "core_memory": [
            {"label": "human", "value": "Likes jazz.", "limit": 2000},
            {"label": "persona", "value": "A calm assistant.", "limit": 2000}
        ],
        "messages": [],
        "tools": []
    });
    let text = doc.to_string();
    assert_eq!(
        ImportFormat::detect("old.json", &text).unwrap(),
        ImportFormat::Letta
    );
    let f = Fixture::hash();
    let p = f.dir.path().join("old.af");
    std::fs::write(&p, &text).unwrap();
    let r = import(&f.engine, &p, ImportFormat::Letta).unwrap();
    assert_eq!(r.facts_added.len(), 2);
    let r = import(&f.engine, &p, ImportFormat::Letta).unwrap();
    assert_eq!((r.messages_stored, r.messages_skipped), (0, 2));
    let human = memories(&f.engine)
        .into_iter()
        .find(|m| m.text == "Likes jazz.")
        .unwrap();
    assert_eq!(human.metadata["letta"]["block_id"], "core:human");
}

#[test]
fn a_malformed_letta_record_is_named_and_nothing_is_written() {
    let mut doc = load("letta-agent.af");
    doc["agents"][0]["block_ids"] = json!(["block-0", "block-9"]);
    refused(
        "bad-letta.af",
        ImportFormat::Letta,
        &doc,
        &["record 1 (id agent-0)", "block-9"],
    );
    let mut doc = load("letta-agent.af");
    doc["agents"][0]["passages"][1]
        .as_object_mut()
        .unwrap()
        .remove("text");
    refused(
        "no-text.af",
        ImportFormat::Letta,
        &doc,
        &[
            "record 1 (id agent-0), passage 2 (id passage-7b1e0c2d-0002-4f00-8000-000000000002)",
            "`text`",
        ],
    );
}

// ---------------------------------------------------------------- detection

#[test]
fn each_format_is_detected_from_its_content_whatever_the_file_is_called() {
    for (name, format) in [
        ("chatgpt-conversations.json", ImportFormat::Chatgpt),
        ("claude-conversations.json", ImportFormat::Claude),
        ("mem0-memories.json", ImportFormat::Mem0),
        ("letta-agent.af", ImportFormat::Letta),
    ] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        assert_eq!(
            ImportFormat::detect("data.json", &text).unwrap(),
            format,
            "{name}"
        );
        // One conversation alone, and mem0's older bare list.
        let doc: Value = serde_json::from_str(&text).unwrap();
        let single = match format {
            ImportFormat::Chatgpt | ImportFormat::Claude => doc[0].clone(),
            ImportFormat::Mem0 => doc["results"].clone(),
            _ => continue,
        };
        assert_eq!(
            ImportFormat::detect("data.json", &single.to_string()).unwrap(),
            format,
            "{name}, one record"
        );
    }
}
