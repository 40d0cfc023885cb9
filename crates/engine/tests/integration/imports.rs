//! Imports through the engine's file entry points (`import_file`, `import_text`): a
//! message's identity is its content (or the source's own id), never its place in a file,
//! so files with the same name, edited files and resumed imports each store every message
//! exactly once; files with a byte-order mark are read; a file with nothing to import is an
//! error that names it; and stores written with the old line ids are not duplicated.

use crate::common::*;
use somna_engine::ingest::{ConversationBatch, ImportFormat, ImportOutcome};
use somna_engine::{AddOptions, AddReport, Job, Message, ProgressEvent, Somna, IMPORT_BATCH};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn write(dir: &Path, rel: &str, content: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, content).unwrap();
    p
}

/// One chat JSONL line.
fn line(role: &str, text: &str) -> String {
    serde_json::json!({"role": role, "content": text}).to_string() + "\n"
}

fn lines(texts: &[&str]) -> String {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| line(if i % 2 == 0 { "user" } else { "assistant" }, t))
        .collect()
}

fn import(engine: &Somna, file: &Path, format: ImportFormat) -> somna_engine::Result<AddReport> {
    match engine.import_file(file, format, &Job::default())? {
        ImportOutcome::Conversations(r) => Ok(r),
        other => panic!("not a conversation import: {other:?}"),
    }
}

fn chat(engine: &Somna, file: &Path) -> AddReport {
    import(engine, file, ImportFormat::ChatJsonl).expect("import")
}

/// (stored, skipped) of a report.
fn counts(r: &AddReport) -> (usize, usize) {
    (r.messages_stored, r.messages_skipped)
}

/// Texts of a conversation's stored messages, in order.
fn texts(engine: &Somna, conversation: &str) -> Vec<String> {
    engine
        .with_store(|s| s.read().recent_messages(conversation, 1_000_000))
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect()
}

#[test]
fn two_different_files_with_the_same_name_store_every_message() {
    let f = Fixture::hash();
    let a = write(
        f.dir.path(),
        "a/notes.jsonl",
        &lines(&["buy milk", "call Ann"]),
    );
    let b = write(
        f.dir.path(),
        "b/notes.jsonl",
        &lines(&["the boiler is fixed", "Ben moved to Oslo", "pay rent"]),
    );
    assert_eq!(counts(&chat(&f.engine, &a)), (2, 0));
    assert_eq!(
        counts(&chat(&f.engine, &b)),
        (3, 0),
        "nothing of b is skipped"
    );
    assert_eq!(texts(&f.engine, "notes").len(), 5);
    // Each again: everything is already there.
    let before = f.snapshot();
    assert_eq!(counts(&chat(&f.engine, &a)), (0, 2));
    assert_eq!(counts(&chat(&f.engine, &b)), (0, 3));
    assert_eq!(f.snapshot(), before);
}

#[test]
fn an_edited_or_rotated_file_stores_its_changed_lines() {
    let f = Fixture::hash();
    let p = write(
        f.dir.path(),
        "log.jsonl",
        &lines(&["first entry", "second entry", "third entry"]),
    );
    assert_eq!(counts(&chat(&f.engine, &p)), (3, 0));
    // Edited: the second line changes, a line is inserted at the top.
    write(
        f.dir.path(),
        "log.jsonl",
        &(line("system", "a header")
            + &line("user", "first entry")
            + &line("assistant", "second entry, corrected")
            + &line("user", "third entry")),
    );
    assert_eq!(counts(&chat(&f.engine, &p)), (2, 2));
    // Rotated: the file now holds only new lines.
    write(
        f.dir.path(),
        "log.jsonl",
        &lines(&["fourth entry", "fifth entry"]),
    );
    assert_eq!(counts(&chat(&f.engine, &p)), (2, 0));
    let stored = texts(&f.engine, "log");
    assert_eq!(stored.len(), 7, "{stored:?}");
    assert!(stored.contains(&"second entry".to_string()));
    assert!(stored.contains(&"second entry, corrected".to_string()));
}

#[test]
fn repeated_identical_messages_are_each_kept_once() {
    let f = Fixture::hash();
    let p = write(f.dir.path(), "c.jsonl", &lines(&["ok", "sure", "ok", "ok"]));
    let r = chat(&f.engine, &p);
    // Roles alternate: "ok" is said twice by the user (lines 1 and 3), once by the assistant.
    assert_eq!(counts(&r), (4, 0));
    assert_eq!(counts(&chat(&f.engine, &p)), (0, 4));
    // One more "ok" of the user: only that one is new.
    write(
        f.dir.path(),
        "c.jsonl",
        &(lines(&["ok", "sure", "ok", "ok"]) + &line("user", "ok")),
    );
    assert_eq!(counts(&chat(&f.engine, &p)), (1, 4));
    assert_eq!(texts(&f.engine, "c").len(), 5);
}

#[test]
fn an_interrupted_import_resumes_with_no_loss_and_no_duplicate() {
    let f = Fixture::hash();
    // Three conversations interleaved, with repeats on both sides of the batch boundary.
    let n = IMPORT_BATCH * 2 + 40;
    let mut text = String::new();
    for i in 0..n {
        let content = if i % 25 == 0 {
            "ok".to_string()
        } else {
            format!("note {i} about day {}", i / 7)
        };
        text += &(serde_json::json!({
            "role": "user",
            "content": content,
            "conversation": format!("c{}", i % 3),
        })
        .to_string()
            + "\n");
    }
    let p = write(f.dir.path(), "big.jsonl", &text);
    let cancel = somna_engine::CancelToken::new();
    let token = cancel.clone();
    let job = Job {
        progress: Arc::new(move |e: ProgressEvent| {
            if e.stage == "import" && e.done > 0 {
                token.cancel();
            }
        }),
        cancel,
    };
    let e = f
        .engine
        .import_file(&p, ImportFormat::ChatJsonl, &job)
        .unwrap_err();
    assert_eq!(e.code(), "cancelled");
    let partial = f.snapshot().messages;
    assert!(partial > 0 && (partial as usize) < n, "{partial} of {n}");
    let r = chat(&f.engine, &p);
    assert_eq!(counts(&r), (n - partial as usize, partial as usize));
    assert_eq!(f.snapshot().messages as usize, n);
    let oks: usize = (0..3)
        .map(|c| {
            texts(&f.engine, &format!("c{c}"))
                .iter()
                .filter(|t| *t == "ok")
                .count()
        })
        .sum();
    assert_eq!(oks, n.div_ceil(25));
    assert_eq!(counts(&chat(&f.engine, &p)), (0, n));
}

/// Stores `file`'s messages the way Somna did before content ids: external id
/// `line:<n>`, speaker the `name` or the role, conversation the file's stem.
fn import_the_old_way(engine: &Somna, file: &Path) {
    let conversation = file.file_stem().unwrap().to_string_lossy().into_owned();
    let messages: Vec<Message> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let role = v["role"].as_str().unwrap().to_string();
            Message {
                speaker: Some(v["name"].as_str().unwrap_or(&role).to_string()),
                role,
                text: v["content"].as_str().unwrap().to_string(),
                session: None,
                occurred_at: v["timestamp"].as_i64().map(|s| s * 1000),
                external_id: Some(format!("line:{}", i + 1)),
                metadata: serde_json::json!({}),
            }
        })
        .collect();
    let r = engine
        .import(
            &[ConversationBatch::turns(conversation, messages)],
            &AddOptions::default(),
            &Job::default(),
        )
        .unwrap();
    assert_eq!(r.messages_skipped, 0);
}

#[test]
fn a_store_with_old_line_ids_is_not_duplicated_by_reimporting_the_same_file() {
    let f = Fixture::hash();
    let content = [
        serde_json::json!({"role": "user", "name": "Ann", "content": "I adopted a cat", "timestamp": 1_700_000_000}),
        serde_json::json!({"role": "assistant", "content": "What is its name?"}),
        serde_json::json!({"role": "user", "name": "Ann", "content": "ok"}),
        serde_json::json!({"role": "user", "name": "Ann", "content": "ok"}),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let p = write(f.dir.path(), "pets.jsonl", &content);
    import_the_old_way(&f.engine, &p);
    let before = f.snapshot();
    assert_eq!(before.messages, 4);
    // The same file again: each line is the message stored under its old id.
    assert_eq!(counts(&chat(&f.engine, &p)), (0, 4));
    assert_eq!(f.snapshot(), before);
    // Edited: the changed line is new, the others are still recognised.
    let edited = content.replace("What is its name?", "What is the cat called?");
    write(f.dir.path(), "pets.jsonl", &edited);
    assert_eq!(counts(&chat(&f.engine, &p)), (1, 3));
    // The corrected line is now stored under its content id, the others still match their
    // old ids: a third import skips all four.
    assert_eq!(counts(&chat(&f.engine, &p)), (0, 4));
    // Another file of the same name, its lines in other places: nothing is lost.
    let other = write(
        f.dir.path(),
        "elsewhere/pets.jsonl",
        &lines(&["the dog barks", "I adopted a cat"]),
    );
    assert_eq!(counts(&chat(&f.engine, &other)), (2, 0));
    assert_eq!(f.snapshot().messages, 7);
}

#[test]
fn locomo_keeps_its_dia_ids_and_reimports_skip_everything() {
    let f = Fixture::hash();
    let doc = r#"[{"sample_id": "conv-9", "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
          {"speaker": "Ann", "dia_id": "D1:1", "text": "I started pottery."},
          {"speaker": "Ben", "dia_id": "D1:2", "text": "ok"},
          {"speaker": "Ben", "dia_id": "D1:3", "text": "ok"}]}}]"#;
    let p = write(f.dir.path(), "a/l.json", doc);
    assert_eq!(
        counts(&import(&f.engine, &p, ImportFormat::Locomo).unwrap()),
        (3, 0)
    );
    // A copy under another name is the same source: its ids are already stored.
    let q = write(f.dir.path(), "b/copy.json", doc);
    assert_eq!(
        counts(&import(&f.engine, &q, ImportFormat::Locomo).unwrap()),
        (0, 3)
    );
    let ids: Vec<Option<String>> = f
        .engine
        .with_store(|s| s.read().recent_messages("conv-9", 10))
        .unwrap()
        .into_iter()
        .map(|m| m.external_id)
        .collect();
    assert_eq!(ids, ["D1:1", "D1:2", "D1:3"].map(|s| Some(s.to_string())));
}

#[test]
fn files_with_a_byte_order_mark_import_in_every_format() {
    let f = Fixture::hash();
    let bom = "\u{feff}";
    let chat_text = format!("{bom}{}", lines(&["hello from Windows", "and back"]));
    let p = write(f.dir.path(), "win.jsonl", &chat_text);
    assert_eq!(counts(&chat(&f.engine, &p)), (2, 0));
    let r = f
        .engine
        .import_text(
            "win2.jsonl",
            ImportFormat::ChatJsonl,
            &chat_text,
            &Job::default(),
        )
        .unwrap();
    assert!(matches!(r, ImportOutcome::Conversations(ref r) if r.messages_stored == 2));

    let locomo = format!(
        "{bom}{}",
        r#"[{"sample_id": "bom", "conversation": {"session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "a line from Excel"}]}}]"#
    );
    assert_eq!(
        ImportFormat::detect("bom.json", &locomo).unwrap(),
        ImportFormat::Locomo
    );
    let p = write(f.dir.path(), "bom.json", &locomo);
    assert_eq!(
        counts(&import(&f.engine, &p, ImportFormat::Locomo).unwrap()),
        (1, 0)
    );

    // A Somna export with a BOM restores into an empty store.
    let export = format!(
        "{bom}{}",
        serde_json::to_string_pretty(&f.engine.export().unwrap()).unwrap()
    );
    assert_eq!(
        ImportFormat::detect("e.json", &export).unwrap(),
        ImportFormat::Json
    );
    let fresh = Fixture::hash();
    let p = write(fresh.dir.path(), "e.json", &export);
    match fresh
        .engine
        .import_file(&p, ImportFormat::Json, &Job::default())
        .unwrap()
    {
        ImportOutcome::Export { memories } => assert_eq!(memories as i64, f.snapshot().memories),
        other => panic!("{other:?}"),
    }
    assert_eq!(fresh.snapshot(), f.snapshot());
}

#[test]
fn a_file_with_nothing_to_import_is_an_error_naming_it_and_stores_nothing() {
    let f = Fixture::hash();
    f.engine
        .add(
            "existing",
            &[msg("Ann", "already here")],
            &AddOptions::default(),
        )
        .unwrap();
    let before = f.snapshot();
    for (name, content, format) in [
        ("empty.jsonl", "", ImportFormat::ChatJsonl),
        ("blank.jsonl", "\n\n   \n", ImportFormat::ChatJsonl),
        ("bom-only.jsonl", "\u{feff}\n", ImportFormat::ChatJsonl),
        ("none.json", "[]", ImportFormat::Locomo),
    ] {
        let p = write(f.dir.path(), name, content);
        let e = import(&f.engine, &p, format).unwrap_err();
        assert_eq!(e.code(), "import", "{name}");
        assert_eq!(e.kind(), somna_engine::ErrorKind::Invalid);
        let text = e.to_string();
        assert!(
            text.contains(name) && text.contains("nothing to import"),
            "{text}"
        );
        assert_eq!(f.snapshot(), before, "{name}");
    }
}

#[test]
fn a_message_the_engine_refuses_is_named_by_file_and_line() {
    let f = Fixture::hash();
    let before = f.snapshot();
    let text = line("user", "fine") + &line("user", "nul \u{0} inside") + &line("user", "ok");
    let e = f
        .engine
        .import_text(
            "dir/chat.jsonl",
            ImportFormat::ChatJsonl,
            &text,
            &Job::default(),
        )
        .unwrap_err();
    assert_eq!(e.code(), "import");
    let msg = e.to_string();
    assert!(
        msg.starts_with("dir/chat.jsonl: line 2: ") && msg.contains("NUL"),
        "{msg}"
    );
    let long = "x".repeat(somna_engine::ingest::MAX_TEXT_BYTES + 1);
    let doc = serde_json::json!([{"sample_id": "c", "conversation": {"session_1": [
        {"speaker": "A", "dia_id": "D1:1", "text": "fine"},
        {"speaker": "B", "dia_id": "D1:2", "text": long}]}}]);
    let e = f
        .engine
        .import_text(
            "big.json",
            ImportFormat::Locomo,
            &doc.to_string(),
            &Job::default(),
        )
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("big.json: c session_1 turn 1: ") && msg.contains("limit"),
        "{}",
        &msg[..msg.len().min(300)]
    );
    assert_eq!(f.snapshot(), before);
}

#[test]
fn an_import_commits_small_batches_first_so_the_first_memories_appear_early() {
    let f = Fixture::hash();
    let n = IMPORT_BATCH + 112 + 10;
    let text: String = (0..n)
        .map(|i| line("user", &format!("note {i} about day {}", i / 7)))
        .collect();
    let p = write(f.dir.path(), "ramp.jsonl", &text);
    // Progress after each committed batch, and the messages stored at that moment.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (log, db) = (seen.clone(), f.cfg.db_path.clone());
    let job = Job {
        progress: Arc::new(move |e: ProgressEvent| {
            if e.stage == "import" && e.done > 0 {
                // Another connection, as a watching app's would be.
                let stored = somna_engine::store::Store::open(&db)
                    .unwrap()
                    .conn()
                    .query_row("SELECT count(*) FROM messages", [], |r| r.get::<i64>(0))
                    .unwrap() as u64;
                log.lock().unwrap().push((e.done, stored));
            }
        }),
        cancel: somna_engine::CancelToken::new(),
    };
    f.engine
        .import_file(&p, ImportFormat::ChatJsonl, &job)
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    // 16, 32 and 64 messages, then batches of IMPORT_BATCH; each batch is committed (and so
    // visible to another reader of the store) before its progress is reported.
    let ends = [16, 48, 112, 112 + IMPORT_BATCH as u64, n as u64];
    assert_eq!(
        seen.iter().map(|s| s.0).collect::<Vec<_>>(),
        ends.to_vec(),
        "batch ends"
    );
    for (done, stored) in seen {
        assert_eq!(stored, done, "stored when {done} were reported");
    }
}
