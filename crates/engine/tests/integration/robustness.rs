//! Hostile input, malformed imports, damaged index files, deletes, missing or corrupt
//! models and provenance refusals: the engine answers with an error code or recovers,
//! and never writes half of something.

use crate::common::*;
use somna_engine::embed::CountingEmbedder;
use somna_engine::ingest::{parse_chat_jsonl, parse_locomo};
use somna_engine::memory::LinkKind;
use somna_engine::retrieve::{Route, SearchResponse};
use somna_engine::{
    AddOptions, Job, ListQuery, MemoryFilter, MemoryUpdate, SearchQuery, Somna, Source,
};
use std::path::Path;

/// Every memory id a response mentions (hits, connected bubbles, near misses).
fn all_ids(r: &SearchResponse) -> Vec<i64> {
    r.hits
        .iter()
        .chain(&r.connected)
        .chain(&r.near_misses)
        .map(|h| h.memory.id)
        .collect()
}

fn top_id(engine: &Somna, query: &str) -> i64 {
    let r = engine.search_readonly(&SearchQuery::new(query)).unwrap();
    r.hits
        .first()
        .unwrap_or_else(|| panic!("no hit for {query:?}"))
        .memory
        .id
}

// ---------------------------------------------------------------- hostile queries

#[test]
fn fts_syntax_in_queries_never_errors() {
    let f = Fixture::hash();
    let texts = [
        "Ann keeps the spare key under the blue flowerpot",
        "NEAR the station there is a bakery selling col:val pastries",
        "the DROP TABLE statement removes a table",
    ];
    let msgs: Vec<_> = texts.iter().map(|t| msg("Ann", t)).collect();
    f.engine.add("c", &msgs, &no_facts()).unwrap();
    let long = "spare key flowerpot bakery ".repeat(400);
    assert!(long.len() >= 10_000);
    let queries = [
        "\"unbalanced",
        "NEAR(a b)",
        "NEAR(key flowerpot, 2)",
        "a AND OR NOT",
        "col:val",
        "text:key",
        "*",
        "key*",
        "^x",
        "(((",
        ")))",
        "'; DROP TABLE memories; --",
        "\"\"",
        "-key +flowerpot",
        "🎉🔥💯",
        "x\u{0}y",
        long.as_str(),
    ];
    for q in queries {
        let r = f.engine.search(&SearchQuery::new(q));
        assert!(r.is_ok(), "query {q:?} failed: {:?}", r.err());
    }
    // The store survived the injection attempt.
    assert_eq!(f.snapshot().memories, 3);
    let emoji = f.engine.search(&SearchQuery::new("🎉🔥💯")).unwrap();
    assert_eq!(emoji.route, Route::Direct, "{}", emoji.route_reason);
    assert!(emoji.hits.iter().all(|h| h.signals.lexical == 0.0));
}

#[test]
fn empty_queries_and_bad_k_are_invalid_input() {
    let f = Fixture::hash();
    f.engine
        .add("c", &[msg("Ann", "something to find")], &no_facts())
        .unwrap();
    for q in ["", "   ", "\n\t"] {
        assert_eq!(
            err_code(f.engine.search(&SearchQuery::new(q))),
            "invalid_input",
            "{q:?}"
        );
        assert_eq!(
            err_code(f.engine.search_readonly(&SearchQuery::new(q))),
            "invalid_input"
        );
    }
    let mut q = SearchQuery::new("something");
    q.k = 0;
    assert_eq!(err_code(f.engine.search(&q)), "invalid_input");
}

#[test]
fn searching_an_empty_store_finds_nothing() {
    let f = Fixture::hash();
    let r = f
        .engine
        .search(&SearchQuery::new("anything at all"))
        .unwrap();
    assert!(r.hits.is_empty() && r.context.is_empty());
    assert_eq!(r.used_tokens, 0);
}

// ---------------------------------------------------------------- message validation

#[test]
fn empty_or_oversized_messages_are_refused_and_nothing_is_stored() {
    let f = Fixture::hash();
    f.engine
        .add("c", &[msg("Ann", "a valid first message")], &no_facts())
        .unwrap();
    let before = f.snapshot();
    let huge = "x".repeat(2 << 20);
    let bad = ["", "   ", "\n\t \r\n", huge.as_str(), "nul \u{0} inside"];
    for text in bad {
        let r = f
            .engine
            .add("c", &[msg("Ann", text)], &AddOptions::default());
        assert_eq!(err_code(r), "invalid_input", "text of {} bytes", text.len());
        // A bad message in the middle of a batch refuses the whole batch.
        let batch = [
            msg("Ann", "fine one"),
            msg("Ann", text),
            msg("Ann", "fine two"),
        ];
        assert_eq!(
            err_code(f.engine.add("c", &batch, &AddOptions::default())),
            "invalid_input"
        );
        assert_eq!(f.snapshot(), before, "a refused add wrote something");
    }
    assert_eq!(
        err_code(
            f.engine
                .add("  ", &[msg("Ann", "no conversation")], &no_facts())
        ),
        "invalid_input"
    );
    assert_eq!(f.snapshot(), before);
}

#[test]
fn a_200_kb_text_is_stored_whole_and_searchable() {
    let f = Fixture::real();
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 100_000 {
        text.push_str(&format!(
            "Line {i} of the long maintenance log: checked the pumps and valves. "
        ));
        i += 1;
    }
    // A word in the middle of the text, far past the 256 tokens that are embedded.
    text.push_str("The quarterly audit found a zanzibarquokka in the basement. ");
    while text.len() < 200_000 {
        text.push_str(&format!(
            "Line {i} of the long maintenance log: checked the pumps and valves. "
        ));
        i += 1;
    }
    let rep = f
        .engine
        .add("log", &[msg("Ops", &text)], &no_facts())
        .unwrap();
    let id = rep.episodes[0];
    let stored = f.engine.get(id).unwrap().memory;
    assert_eq!(stored.text.len(), text.len());
    assert!(
        stored.text == text,
        "the long text was not stored byte for byte"
    );
    f.engine
        .add(
            "log",
            &[msg(
                "Ops",
                "The coffee machine on floor two is broken again.",
            )],
            &no_facts(),
        )
        .unwrap();
    let r = f
        .engine
        .search(&SearchQuery::new("zanzibarquokka"))
        .unwrap();
    assert_eq!(r.hits[0].memory.id, id);
    assert!(r.hits[0].signals.lexical > 0.0);
    assert!(
        r.hits[0].tokens > 10_000,
        "tokens of the whole text: {}",
        r.hits[0].tokens
    );
}

#[test]
fn odd_unicode_round_trips_byte_exactly() {
    let f = Fixture::hash();
    let texts = [
        "Cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e (combining marks)",
        "\u{301}a text that starts with a lone combining mark",
        "שלום עולם — مرحبا بالعالم \u{200F}rtl mark\u{202E} override\u{202C}",
        "family 👨\u{200D}👩\u{200D}👧\u{200D}👦 and flag 🏳\u{FE0F}\u{200D}🌈 zero\u{200B}width",
        "東京で会いましょう。你好，世界。안녕하세요",
        "🎉🔥💯",
        "\u{FEFF}bom first, CRLF\r\nline two\ttabbed",
        "ℌ𝔢𝔩𝔩𝔬 in math letters, Ǆ and ﬁ ligatures, İstanbul",
    ];
    let msgs: Vec<_> = texts.iter().map(|t| msg("Zoë 🦊", t)).collect();
    let rep = f
        .engine
        .add("unicode", &msgs, &AddOptions::default())
        .unwrap();
    assert_eq!(rep.episodes.len(), texts.len());
    for (id, t) in rep.episodes.iter().zip(texts) {
        let m = f.engine.get(*id).unwrap().memory;
        assert_eq!(m.text.as_bytes(), t.as_bytes());
        assert_eq!(m.w5h1.who.as_deref(), Some("Zoë 🦊"));
    }
    let doc = f.engine.export().unwrap();
    for (m, t) in doc.messages.iter().zip(texts) {
        assert_eq!(m.message.text.as_bytes(), t.as_bytes());
    }
    // Searchable by its CJK text.
    assert_eq!(top_id(&f.engine, "東京で会いましょう"), rep.episodes[4]);
}

// ---------------------------------------------------------------- malformed imports

fn write(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

const LOCOMO: &str = r#"[{"sample_id": "conv-1", "qa": [],
  "conversation": {"speaker_a": "Ann", "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Ann", "dia_id": "D1:1", "text": "I started pottery classes."},
      {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice, what did you make?"},
      {"speaker": "Ann", "dia_id": "D1:3", "text": "A lopsided bowl for my cat."},
      {"speaker": "Ben", "dia_id": "D1:4", "text": "Post a picture!"}
    ]}}]"#;

/// Parses with `parse` and imports what parsed; returns the error.
fn import_file(
    engine: &Somna,
    path: &Path,
    parse: fn(&Path) -> somna_engine::Result<Vec<somna_engine::ingest::ConversationBatch>>,
) -> somna_engine::Error {
    let r = parse(path).and_then(|b| engine.import(&b, &AddOptions::default(), &Job::default()));
    r.expect_err("the malformed file was imported")
}

#[test]
fn a_valid_locomo_file_imports_and_reimporting_skips_everything() {
    let f = Fixture::hash();
    let p = write(f.dir.path(), "ok.json", LOCOMO);
    let batches = parse_locomo(&p).unwrap();
    let rep = f
        .engine
        .import(&batches, &AddOptions::default(), &Job::default())
        .unwrap();
    assert_eq!((rep.messages_stored, rep.messages_skipped), (4, 0));
    let before = f.snapshot();
    let again = f
        .engine
        .import(&batches, &AddOptions::default(), &Job::default())
        .unwrap();
    assert_eq!((again.messages_stored, again.messages_skipped), (0, 4));
    assert_eq!(f.snapshot(), before);
}

#[test]
fn truncated_locomo_json_is_an_import_error_and_stores_nothing() {
    let f = Fixture::hash();
    f.engine
        .add("existing", &[msg("Ann", "already here")], &no_facts())
        .unwrap();
    let before = f.snapshot();
    let p = write(
        f.dir.path(),
        "truncated.json",
        &LOCOMO[..LOCOMO.len() * 2 / 3],
    );
    let e = import_file(&f.engine, &p, parse_locomo);
    assert_eq!(e.code(), "import");
    let text = e.to_string();
    assert!(
        text.contains("truncated.json") && text.contains("line "),
        "{text}"
    );
    assert_eq!(f.snapshot(), before);
}

#[test]
fn a_locomo_turn_without_dia_id_is_an_import_error_naming_the_turn() {
    let f = Fixture::hash();
    f.engine
        .add("existing", &[msg("Ann", "already here")], &no_facts())
        .unwrap();
    let before = f.snapshot();
    let broken = LOCOMO.replace(r#""dia_id": "D1:3", "#, "");
    assert_ne!(broken, LOCOMO);
    let p = write(f.dir.path(), "no-dia.json", &broken);
    let e = import_file(&f.engine, &p, parse_locomo);
    assert_eq!(e.code(), "import");
    let text = e.to_string();
    assert!(
        text.contains("no-dia.json")
            && text.contains("conv-1 session_1 turn 2")
            && text.contains("dia_id"),
        "{text}"
    );
    assert_eq!(f.snapshot(), before, "turns before the bad one were stored");
}

#[test]
fn a_bad_chat_jsonl_line_is_an_import_error_naming_the_line() {
    let f = Fixture::hash();
    f.engine
        .add("existing", &[msg("Ann", "already here")], &no_facts())
        .unwrap();
    let before = f.snapshot();
    let content = [
        r#"{"role": "user", "content": "first line is fine"}"#,
        r#"{"role": "assistant", "content": "so is the second"}"#,
        r#"{"role": "user", "content": "third is cut off"#,
        r#"{"role": "assistant", "content": "fourth is fine"}"#,
        r#"{"role": "user", "content": "and the fifth"}"#,
    ]
    .join("\n");
    let p = write(f.dir.path(), "chat.jsonl", &content);
    let e = import_file(&f.engine, &p, parse_chat_jsonl);
    assert_eq!(e.code(), "import");
    let text = e.to_string();
    assert!(
        text.contains("chat.jsonl") && text.contains("line 3"),
        "{text}"
    );
    assert_eq!(f.snapshot(), before);
}

#[test]
fn an_invalid_message_in_an_import_batch_stores_nothing() {
    let f = Fixture::hash();
    let before = f.snapshot();
    let mut batch = parse_chat_jsonl(&write(
        f.dir.path(),
        "x.jsonl",
        "{\"role\":\"user\",\"content\":\"one\"}\n{\"role\":\"user\",\"content\":\"two\"}\n{\"role\":\"user\",\"content\":\"three\"}\n",
    ))
    .unwrap();
    batch[0].messages[1].text = " ".into();
    let e = f
        .engine
        .import(&batch, &AddOptions::default(), &Job::default())
        .unwrap_err();
    // A batch built by code has no file: the error names the conversation and the message.
    // (A file's bad message is refused by its parser, naming the file and line: imports.rs.)
    assert_eq!(e.code(), "invalid_input");
    assert!(
        e.to_string().contains("conversation \"x\", message 2 of 3"),
        "{e}"
    );
    assert_eq!(f.snapshot(), before);
}

// ---------------------------------------------------------------- index recovery

/// A distinct sentence per i (the word choices cycle with coprime periods).
pub(crate) fn note(i: usize) -> String {
    const NAMES: [&str; 7] = ["Ann", "Ben", "Chloe", "Dmitri", "Eve", "Farah", "Goran"];
    const ADJ: [&str; 11] = [
        "quickly",
        "happily",
        "reluctantly",
        "secretly",
        "proudly",
        "calmly",
        "boldly",
        "nervously",
        "eagerly",
        "quietly",
        "loudly",
    ];
    const PLACES: [&str; 13] = [
        "harbour",
        "library",
        "bakery",
        "stadium",
        "museum",
        "orchard",
        "garage",
        "observatory",
        "market",
        "monastery",
        "lighthouse",
        "vineyard",
        "quarry",
    ];
    const TOPICS: [&str; 17] = [
        "taxes",
        "gardening",
        "chess",
        "violins",
        "glaciers",
        "volcanoes",
        "sourdough",
        "bicycles",
        "comets",
        "beekeeping",
        "origami",
        "tides",
        "falconry",
        "pottery",
        "kites",
        "lichens",
        "sailing",
    ];
    format!(
        "{} {} went to the {} to talk about {} with friend number {i}",
        NAMES[i % 7],
        ADJ[i % 11],
        PLACES[i % 13],
        TOPICS[i % 17]
    )
}

/// A saved store of `n` notes (hashing embedder); returns the fixture with the engine
/// dropped, i.e. its directory and config, and the notes' ids.
pub(crate) fn saved_store(n: usize) -> (tempfile::TempDir, somna_engine::Config, Vec<i64>) {
    let f = Fixture::sqlite_hash();
    let msgs: Vec<_> = (0..n).map(|i| msg("Scribe", &note(i))).collect();
    let rep = f.engine.add("notes", &msgs, &no_facts()).unwrap();
    assert_eq!(rep.episodes.len(), n);
    assert!(
        f.engine.open_report().index_rebuilt.is_some(),
        "a new store has no index to load"
    );
    let Fixture { engine, cfg, dir } = f;
    drop(engine); // saves <db>.index/
    assert!(
        index_dir(&cfg).join("manifest.json").is_file(),
        "dropping the engine saved no index"
    );
    (dir, cfg, rep.episodes)
}

fn index_file(cfg: &somna_engine::Config, suffix: &str) -> std::path::PathBuf {
    std::fs::read_dir(index_dir(cfg))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in the index directory"))
}

/// Reopens after damage: the index must be rebuilt (with a reason), complete, and find
/// memories by their exact text; the rebuilt index is saved, so the next open loads it.
fn assert_recovers(cfg: &somna_engine::Config, ids: &[i64]) {
    let engine = open_hash(cfg);
    let reason = engine.open_report().index_rebuilt.clone();
    assert!(
        reason.is_some(),
        "the damaged index was loaded instead of rebuilt"
    );
    assert_eq!(engine.stats().unwrap().indexed, ids.len());
    for &i in &[0, ids.len() / 2, ids.len() - 1] {
        assert_eq!(
            top_id(&engine, &note(i)),
            ids[i],
            "search after rebuild ({reason:?})"
        );
    }
    drop(engine);
    let engine = open_hash(cfg);
    assert_eq!(
        engine.open_report().index_rebuilt,
        None,
        "the rebuilt index was not saved"
    );
    assert_eq!(top_id(&engine, &note(7)), ids[7]);
}

#[test]
fn an_undamaged_index_is_loaded_not_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    let engine = open_hash(&cfg);
    assert_eq!(engine.open_report().index_rebuilt, None);
    assert_eq!(engine.stats().unwrap().indexed, 300);
    assert_eq!(top_id(&engine, &note(123)), ids[123]);
}

#[test]
fn a_deleted_index_directory_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    std::fs::remove_dir_all(index_dir(&cfg)).unwrap();
    assert_recovers(&cfg, &ids);
}

#[test]
fn a_truncated_graph_file_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    let graph = index_file(&cfg, ".hnsw.graph");
    let len = std::fs::metadata(&graph).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&graph)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_recovers(&cfg, &ids);
}

#[test]
fn a_missing_data_file_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    std::fs::remove_file(index_file(&cfg, ".hnsw.data")).unwrap();
    assert_recovers(&cfg, &ids);
}

#[test]
fn a_garbage_slot_table_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    let slots = index_dir(&cfg).join("slots.bin");
    let len = std::fs::metadata(&slots).unwrap().len() as usize;
    std::fs::write(
        &slots,
        (0..len).map(|i| (i * 37 % 251) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    assert_recovers(&cfg, &ids);
}

#[test]
fn a_corrupt_manifest_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    std::fs::write(
        index_dir(&cfg).join("manifest.json"),
        b"{\"format\": 1, \"dim\": 384, \"par",
    )
    .unwrap();
    assert_recovers(&cfg, &ids);
}

#[test]
fn another_stores_index_is_rebuilt() {
    let (_dir, cfg, ids) = saved_store(300);
    let (_other_dir, other_cfg, _) = saved_store(400);
    std::fs::remove_dir_all(index_dir(&cfg)).unwrap();
    copy_dir(&index_dir(&other_cfg), &index_dir(&cfg));
    assert_recovers(&cfg, &ids);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn a_saved_index_catches_up_with_later_writes() {
    let (_dir, cfg, ids) = saved_store(300);
    let engine = open_hash(&cfg);
    let extra: Vec<_> = (300..310).map(|i| msg("Scribe", &note(i))).collect();
    let more = engine.add("notes", &extra, &no_facts()).unwrap().episodes;
    engine.delete(ids[5], false, "user").unwrap();
    engine.delete(ids[6], true, "user").unwrap();
    drop(engine);
    let engine = open_hash(&cfg);
    assert_eq!(engine.open_report().index_rebuilt, None);
    assert_eq!(
        engine.stats().unwrap().indexed,
        embedded_live_memories(&engine)
    );
    assert_eq!(engine.stats().unwrap().indexed, 300 + 10 - 2);
    assert_eq!(top_id(&engine, &note(305)), more[5]);
}

#[test]
fn a_stale_index_left_by_a_crash_is_loaded_and_caught_up() {
    // Simulates a crash after writes that were committed to SQLite but never saved to the
    // index: the index directory is put back to its state before those writes.
    let (dir, cfg, ids) = saved_store(300);
    let stale = dir.path().join("stale-index");
    copy_dir(&index_dir(&cfg), &stale);
    let engine = open_hash(&cfg);
    let extra: Vec<_> = (300..320).map(|i| msg("Scribe", &note(i))).collect();
    let more = engine.add("notes", &extra, &no_facts()).unwrap().episodes;
    let upd = MemoryUpdate {
        text: Some("the zeppelin hangar smelled of varnish and rope".into()),
        ..Default::default()
    };
    engine.update(ids[10], &upd, "user").unwrap();
    engine.delete(ids[11], false, "user").unwrap();
    engine.delete(ids[12], true, "user").unwrap();
    engine.delete(ids[13], false, "user").unwrap();
    engine.restore(ids[13], "user").unwrap();
    drop(engine);
    std::fs::remove_dir_all(index_dir(&cfg)).unwrap();
    copy_dir(&stale, &index_dir(&cfg));

    let engine = open_hash(&cfg);
    assert_eq!(
        engine.open_report().index_rebuilt,
        None,
        "a stale but valid index should be loaded"
    );
    let stats = engine.stats().unwrap();
    assert_eq!(stats.indexed, embedded_live_memories(&engine));
    assert_eq!(stats.indexed, 300 + 20 - 2);
    assert_eq!(top_id(&engine, &note(317)), more[17]);
    assert_eq!(
        top_id(&engine, "the zeppelin hangar smelled of varnish and rope"),
        ids[10]
    );
    assert_eq!(
        top_id(&engine, &note(13)),
        ids[13],
        "the restored memory is searchable"
    );
    for gone in [ids[11], ids[12]] {
        for q in [note(11), note(12)] {
            let r = engine.search_readonly(&SearchQuery::new(q)).unwrap();
            assert!(!all_ids(&r).contains(&gone));
        }
    }
    // The old text of the updated memory no longer finds it through its old vector.
    let r = engine
        .search_readonly(&SearchQuery {
            route: Some(Route::Direct),
            ..SearchQuery::new(note(10))
        })
        .unwrap();
    assert_ne!(r.hits[0].memory.id, ids[10]);
}

// ---------------------------------------------------------------- deletes

#[test]
fn soft_deleted_memories_never_appear_and_restore_brings_them_back() {
    let f = Fixture::hash();
    let texts = [
        "Ann parked the red bicycle behind the old library",
        "Ann parked the red bicycle behind the new library",
        "Ben baked a lemon cake for the office party",
    ];
    let msgs: Vec<_> = texts.iter().map(|t| msg("Ann", t)).collect();
    let ids = f.engine.add("c", &msgs, &no_facts()).unwrap().episodes;
    let a = ids[0];
    f.engine
        .update(
            a,
            &MemoryUpdate {
                importance: Some(0.9),
                ..Default::default()
            },
            "editor",
        )
        .unwrap();
    f.engine.delete(a, false, "alice").unwrap();
    assert_eq!(
        err_code(f.engine.delete(a, false, "alice")),
        "invalid_input",
        "deleting twice"
    );

    let hidden = |engine: &Somna| {
        for q in [texts[0], "red bicycle", "old library", "bicycle"] {
            let r = engine.search(&SearchQuery::new(q)).unwrap();
            assert!(
                !all_ids(&r).contains(&a),
                "deleted memory returned for {q:?}"
            );
            let mut q = SearchQuery::new(q);
            q.filter.conversation = Some("c".into());
            assert!(!all_ids(&engine.search(&q).unwrap()).contains(&a));
        }
        let listed: Vec<i64> = engine
            .list(&ListQuery::default())
            .unwrap()
            .memories
            .iter()
            .map(|m| m.id)
            .collect();
        assert!(!listed.contains(&a));
    };
    hidden(&f.engine);
    let with_deleted = ListQuery {
        filter: MemoryFilter {
            include_deleted: true,
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(f
        .engine
        .list(&with_deleted)
        .unwrap()
        .memories
        .iter()
        .any(|m| m.id == a && m.deleted_at.is_some()));

    // Still hidden after the index was saved and loaded again.
    let Fixture {
        engine,
        cfg,
        dir: _dir,
    } = f;
    drop(engine);
    let engine = open_hash(&cfg);
    assert_eq!(engine.open_report().index_rebuilt, None);
    hidden(&engine);

    let restored = engine.restore(a, "bob").unwrap();
    assert_eq!(restored.deleted_at, None);
    assert_eq!(top_id(&engine, texts[0]), a);
    assert_eq!(
        err_code(engine.restore(a, "bob")),
        "invalid_input",
        "restoring a live memory"
    );

    let h = engine.history(a).unwrap();
    let events: Vec<(&str, &str)> = h
        .iter()
        .map(|e| (e.event.as_str(), e.actor.as_str()))
        .collect();
    assert_eq!(
        events,
        [
            ("add", "user"),
            ("update", "editor"),
            ("delete", "alice"),
            ("restore", "bob")
        ]
    );
    assert!(h
        .windows(2)
        .all(|w| w[0].id < w[1].id && w[0].created_at <= w[1].created_at));
}

#[test]
fn hard_delete_removes_the_memory_and_its_links() {
    let f = Fixture::hash();
    let texts = [
        "Ann parked the red bicycle behind the old library",
        "Ann parked the red bicycle behind the new library",
        "Ann parked the red bicycle behind the town library",
    ];
    let msgs: Vec<_> = texts.iter().map(|t| msg("Ann", t)).collect();
    let ids = f.engine.add("c", &msgs, &no_facts()).unwrap().episodes;
    let b = ids[1];
    let links = f.engine.get(b).unwrap().links;
    assert!(
        links.iter().any(|l| l.kind == LinkKind::Similar),
        "near-duplicates should be linked"
    );
    f.engine.delete(b, true, "admin").unwrap();

    assert_eq!(err_code(f.engine.get(b)), "not_found");
    let dangling: i64 = f
        .engine
        .with_store(|s| {
            s.conn().query_row(
                "SELECT COUNT(*) FROM links WHERE src = ?1 OR dst = ?1",
                [b],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(dangling, 0);
    for other in [ids[0], ids[2]] {
        assert!(f
            .engine
            .get(other)
            .unwrap()
            .links
            .iter()
            .all(|l| l.src != b && l.dst != b));
    }
    for q in texts {
        assert!(!all_ids(&f.engine.search(&SearchQuery::new(q)).unwrap()).contains(&b));
    }
    let h = f.engine.history(b).unwrap();
    assert_eq!(
        h.last().map(|e| (e.event.as_str(), e.actor.as_str())),
        Some(("hard_delete", "admin"))
    );
    assert_eq!(err_code(f.engine.restore(b, "admin")), "not_found");
    assert_eq!(err_code(f.engine.history(987_654)), "not_found");
}

#[test]
fn a_new_memory_never_inherits_a_hard_deleted_ones_history() {
    let f = Fixture::hash();
    let ids = f
        .engine
        .add(
            "c",
            &[msg("Ann", "first note"), msg("Ann", "second note")],
            &no_facts(),
        )
        .unwrap()
        .episodes;
    f.engine.delete(ids[1], true, "admin").unwrap();
    let new = f
        .engine
        .add("c", &[msg("Ann", "a brand new note")], &no_facts())
        .unwrap()
        .episodes[0];
    assert_ne!(new, ids[1], "the hard-deleted memory's id was reused");
    let events: Vec<String> = f
        .engine
        .history(new)
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(events, ["add"]);
}

// ---------------------------------------------------------------- model files

#[test]
fn a_missing_model_is_model_missing_with_the_install_command() {
    let dir = tempdir();
    let empty = tempdir();
    let cfg = somna_engine::Config::new(dir.path().join("s.db"), empty.path());
    let e = Somna::open(&cfg, &Job::default())
        .err()
        .expect("opened without a model");
    assert_eq!(e.code(), "model_missing");
    assert!(e.to_string().contains("somna model install"), "{e}");
}

#[test]
fn a_corrupt_model_file_is_model_corrupt() {
    let dir = tempdir();
    let model = tempdir();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(
            somna_engine::paths::model_dir().join(name),
            model.path().join(name),
        )
        .expect("the real model must be installed");
    }
    std::fs::write(
        model.path().join("model.safetensors"),
        b"\x08\0\0\0\0\0\0\0{}garbage",
    )
    .unwrap();
    let cfg = somna_engine::Config::new(dir.path().join("s.db"), model.path());
    let e = Somna::open(&cfg, &Job::default())
        .err()
        .expect("opened with a corrupt model");
    assert_eq!(e.code(), "model_corrupt", "{e}");
}

#[test]
fn the_installed_model_opens_a_store() {
    let dir = tempdir();
    let engine = Somna::open(&config(&dir), &Job::default()).unwrap();
    let s = engine.stats().unwrap();
    assert_eq!(
        (s.embedding_model.as_str(), s.dim),
        ("all-MiniLM-L6-v2", 384)
    );
    drop(engine);
    // A store made with one embedder refuses another.
    let e = Somna::open_with(
        &config(&dir),
        std::sync::Arc::new(somna_engine::embed::HashEmbedder::new(384)),
        &Job::default(),
    )
    .err()
    .expect("opened with another embedder");
    assert_eq!(e.code(), "invalid_input");
}

// ---------------------------------------------------------------- provenance

/// A store holding one imported memory with the given provenance score; returns its id.
fn store_with_parent(l_score: f64) -> (Fixture, i64) {
    let src = Fixture::hash();
    src.engine
        .add(
            "origin",
            &[msg("Ann", "The shipment arrives on Tuesday.")],
            &no_facts(),
        )
        .unwrap();
    let mut doc = src.engine.export().unwrap();
    assert_eq!(doc.memories.len(), 1);
    doc.memories[0].memory.l_score = l_score;
    let id = doc.memories[0].memory.id;
    let f = Fixture::hash();
    assert_eq!(f.engine.import_export(&doc, &Job::default()).unwrap(), 1);
    assert_eq!(f.engine.get(id).unwrap().memory.l_score, l_score);
    (f, id)
}

fn inference(parents: Vec<i64>) -> AddOptions {
    AddOptions {
        source: Source::AgentInference,
        parents,
        actor: "agent".into(),
        extract_facts: true,
    }
}

#[test]
fn a_write_derived_from_low_provenance_is_refused() {
    let (f, parent) = store_with_parent(0.2);
    let before = f.snapshot();
    let r = f.engine.add(
        "origin",
        &[msg("agent", "So the shipment is probably late.")],
        &inference(vec![parent]),
    );
    assert_eq!(err_code(r), "provenance_below_threshold");
    assert_eq!(f.snapshot(), before, "a refused write stored something");
}

#[test]
fn provenance_scores_follow_sources_and_parents() {
    let f = Fixture::hash();
    let user = f
        .engine
        .add(
            "c",
            &[msg("Ann", "The shipment arrives on Tuesday.")],
            &no_facts(),
        )
        .unwrap()
        .episodes[0];
    assert_eq!(f.engine.get(user).unwrap().memory.l_score, 1.0);
    let guess = f
        .engine
        .add(
            "c",
            &[msg("agent", "Ann expects a delivery.")],
            &inference(vec![]),
        )
        .unwrap()
        .episodes[0];
    assert_eq!(f.engine.get(guess).unwrap().memory.l_score, 0.6);
    let derived = f
        .engine
        .add(
            "c",
            &[msg("agent", "A delivery comes Tuesday.")],
            &inference(vec![user]),
        )
        .unwrap()
        .episodes[0];
    let d = f.engine.get(derived).unwrap();
    assert!((d.memory.l_score - 0.9).abs() < 1e-12);
    assert!(d
        .links
        .iter()
        .any(|l| l.src == derived && l.dst == user && l.kind == LinkKind::DerivedFrom));
    assert_eq!(
        d.provenance.iter().map(|m| m.id).collect::<Vec<_>>(),
        [user]
    );
    // A chain: 0.9 × 0.9 = 0.81, and the provenance lists both ancestors, nearest first.
    let deeper = f
        .engine
        .add(
            "c",
            &[msg("agent", "Plan the unloading for Tuesday.")],
            &inference(vec![derived]),
        )
        .unwrap()
        .episodes[0];
    let d = f.engine.get(deeper).unwrap();
    assert!((d.memory.l_score - 0.81).abs() < 1e-12);
    assert_eq!(
        d.provenance.iter().map(|m| m.id).collect::<Vec<_>>(),
        [derived, user]
    );
    assert_eq!(
        err_code(
            f.engine
                .add("c", &[msg("a", "x y z")], &inference(vec![999_999]))
        ),
        "not_found"
    );
}

#[test]
fn a_fact_below_the_threshold_never_leaves_half_a_write() {
    // Parent 0.35: the bubble scores 0.9 × 0.35 = 0.315 (allowed), a fact derived from it
    // 0.9 × 0.315 = 0.28 (refused). Whatever the engine decides, nothing stored may score
    // below the threshold and a refusal must store nothing.
    let (f, parent) = store_with_parent(0.35);
    let before = f.snapshot();
    let r = f.engine.add(
        "origin",
        &[msg("agent", "I live in Lisbon.")],
        &inference(vec![parent]),
    );
    match r {
        Err(e) => {
            assert_eq!(e.code(), "provenance_below_threshold");
            assert_eq!(f.snapshot(), before, "a refused write stored something");
        }
        Ok(rep) => {
            for id in rep.episodes.iter().chain(&rep.facts_added) {
                let s = f.engine.get(*id).unwrap().memory.l_score;
                assert!(s >= 0.3, "memory {id} stored with l_score {s}");
            }
        }
    }
}

#[test]
fn forgotten_memories_are_hidden_until_restored() {
    let f = Fixture::hash();
    let texts = [
        "Ann stores the ladder in the attic",
        "Ben keeps the kayak at the lake house",
    ];
    let ids = f
        .engine
        .add("c", &texts.map(|t| msg("Ann", t)), &no_facts())
        .unwrap()
        .episodes;
    let forget = MemoryUpdate {
        state: Some(somna_engine::State::Forgotten),
        ..Default::default()
    };
    f.engine.update(ids[0], &forget, "sleep:1").unwrap();
    let r = f.engine.search(&SearchQuery::new(texts[0])).unwrap();
    assert!(
        !all_ids(&r).contains(&ids[0]),
        "a forgotten memory was returned"
    );
    let mut q = SearchQuery::new(texts[0]);
    q.filter.states = vec![somna_engine::State::Forgotten];
    assert_eq!(
        f.engine.search(&q).unwrap().hits[0].memory.id,
        ids[0],
        "asking for forgotten memories finds them"
    );
    let m = f.engine.restore(ids[0], "user").unwrap();
    assert_eq!(m.state, somna_engine::State::Active);
    assert_eq!(top_id(&f.engine, texts[0]), ids[0]);
}

#[test]
fn concurrent_adds_share_one_embedding_batch() {
    let dir = tempdir();
    let mut cfg = config(&dir);
    // The batch is full with both callers' texts; a lone caller waits up to 2 s.
    cfg.queue_batch = 2;
    cfg.queue_flush = std::time::Duration::from_secs(2);
    let emb = std::sync::Arc::new(CountingEmbedder::new(384));
    let engine = Somna::open_with(&cfg, emb.clone(), &Job::default()).unwrap();
    let start = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for i in 0..2 {
            let (engine, start) = (&engine, &start);
            s.spawn(move || {
                start.wait();
                engine
                    .add(
                        &format!("c{i}"),
                        &[msg("Ann", &format!("note number {i}"))],
                        &no_facts(),
                    )
                    .unwrap();
            });
        }
    });
    assert_eq!(snapshot(&engine).memories, 2);
    assert_eq!(emb.calls(), 1, "the two adds were embedded separately");
}
