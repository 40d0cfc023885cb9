//! Ingest policies from TOML (seed 002) and the rolling conversation summaries.

use crate::common::*;
use somna_engine::ingest::{Policies, POLICIES_FILE};
use somna_engine::memory::{Details, LinkKind};
use somna_engine::{AddOptions, Error, Message, Somna};

fn turn(i: usize) -> Message {
    let topics = [
        "the garden",
        "a new bike",
        "the river trail",
        "sourdough bread",
        "chess club",
    ];
    msg_at(
        if i.is_multiple_of(2) { "Ada" } else { "Bo" },
        &format!(
            "Turn {i}: we talked about {} and what to do next weekend.",
            topics[i % 5]
        ),
        "s1",
        ts(2024, 3, 1, 9, 0) + i as i64 * 60_000,
    )
}

/// Live conversation summaries: (id, window, source ids).
fn window_summaries(engine: &Somna, conversation: &str) -> Vec<(i64, u64, Vec<i64>)> {
    let ids = engine
        .with_store(|s| {
            let mut stmt = s.conn().prepare(
                "SELECT id FROM memories WHERE kind = 'summary' AND conversation = ?1
                   AND deleted_at IS NULL ORDER BY id",
            )?;
            let ids: Vec<i64> = stmt
                .query_map([conversation], |r| r.get(0))?
                .collect::<somna_engine::Result<_>>()?;
            Ok(ids)
        })
        .unwrap();
    ids.into_iter()
        .map(|id| {
            let d = engine.get(id).unwrap();
            let window = d.memory.metadata["conversation_window"].as_u64().unwrap();
            let Details::Summary {
                source_episode_ids, ..
            } = d.memory.details
            else {
                panic!("a summary has summary details")
            };
            let mut linked: Vec<i64> = d
                .links
                .iter()
                .filter(|l| l.kind == LinkKind::DerivedFrom && l.src == id)
                .map(|l| l.dst)
                .collect();
            linked.sort();
            let mut sources = source_episode_ids.clone();
            sources.sort();
            assert_eq!(linked, sources, "derived_from links match the source ids");
            (id, window, source_episode_ids)
        })
        .collect()
}

#[test]
fn every_20_bubbles_of_a_conversation_get_a_summary() {
    let f = Fixture::hash();
    f.engine.set_policies(Policies::default());
    let mut episodes = Vec::new();
    // Batches of 7 cross window boundaries mid-batch.
    for chunk in (0..45).collect::<Vec<_>>().chunks(7) {
        let msgs: Vec<Message> = chunk.iter().map(|&i| turn(i)).collect();
        let rep = f.engine.add("c1", &msgs, &AddOptions::default()).unwrap();
        episodes.extend(rep.episodes);
    }
    // Another conversation's turns never join c1's windows.
    f.engine
        .add("c2", &[turn(0), turn(1)], &AddOptions::default())
        .unwrap();
    let s = window_summaries(&f.engine, "c1");
    assert_eq!(s.len(), 2, "45 bubbles: two complete windows");
    assert_eq!(s[0].1, 0);
    assert_eq!(s[0].2, episodes[..20].to_vec());
    assert_eq!(s[1].1, 1);
    assert_eq!(s[1].2, episodes[20..40].to_vec());
    assert!(window_summaries(&f.engine, "c2").is_empty());
    let text = f.engine.get(s[0].0).unwrap().memory.text;
    assert!(!text.is_empty() && text.contains("Turn"), "{text}");
    // A sleep cycle still sees every bubble as waiting for consolidation.
    let waiting = f
        .engine
        .with_store(|st| st.read().unconsolidated_episodes())
        .unwrap();
    assert_eq!(waiting, 47);
}

#[test]
fn a_complex_update_summarises_the_window_still_filling_then_it_grows_in_place() {
    let f = Fixture::hash();
    f.engine
        .set_policies(Policies::parse("[updates]\nresult = \"complex\"\n", "p.toml").unwrap());
    let msgs: Vec<Message> = (0..5).map(turn).collect();
    let rep = f.engine.add("c", &msgs, &AddOptions::default()).unwrap();
    assert!(rep.summaries.is_empty(), "statements are simple updates");
    let mut result = turn(5);
    result.metadata = serde_json::json!({"event": "result"});
    let rep = f
        .engine
        .add("c", &[result], &AddOptions::default())
        .unwrap();
    assert_eq!(rep.summaries.len(), 1, "a result is integrated at once");
    let partial = window_summaries(&f.engine, "c");
    assert_eq!(partial.len(), 1);
    assert_eq!(partial[0].2.len(), 6);
    let msgs: Vec<Message> = (6..20).map(turn).collect();
    f.engine.add("c", &msgs, &AddOptions::default()).unwrap();
    let full = window_summaries(&f.engine, "c");
    assert_eq!(full.len(), 1, "rewritten in place, not duplicated");
    assert_eq!(full[0].0, partial[0].0);
    assert_eq!(full[0].2.len(), 20);
    let history = f.engine.history(full[0].0).unwrap();
    assert!(history
        .iter()
        .any(|h| h.cause.as_deref() == Some("conversation summary: the window grew")));
}

#[test]
fn a_policies_file_truncates_formats_skips_boosts_and_caps_the_log() {
    let f = Fixture::hash();
    let path = f.dir.path().join(POLICIES_FILE);
    std::fs::write(
        &path,
        r#"
style = "structured"
history_max_chars = 400
summary_every = 0

[truncate]
statement = 40

[[rule]]
role = "tool"
event = "result"
importance_min = 0.9

[[rule]]
contains = "secret"
skip = true
"#,
    )
    .unwrap();
    f.engine
        .set_policies(Policies::load_from_dir(f.dir.path()).unwrap());
    let long = "I believe we should maximise the floor because it protects the most vulnerable members of the group.";
    let mut tool = msg(
        "runner",
        "exit code 0 after 41 tests; all green, nothing flaky this time around at all",
    );
    tool.role = "tool".into();
    let rep = f
        .engine
        .add(
            "c",
            &[msg("Ada", long), msg("Bo", "the secret is 1234"), tool],
            &AddOptions::default(),
        )
        .unwrap();
    assert_eq!(rep.messages_stored, 3);
    assert_eq!(rep.messages_ignored, 1);
    assert_eq!(rep.episodes.len(), 2);
    let ada = f.engine.get(rep.episodes[0]).unwrap().memory;
    assert_eq!(
        ada.text,
        "Speaker: Ada | Event: statement | Content: I believe we should maximise the floor b..."
    );
    let result = f.engine.get(rep.episodes[1]).unwrap().memory;
    assert!(result
        .text
        .starts_with("Speaker: runner | Event: result | Content: exit code 0"));
    assert!(
        result.text.ends_with("at all"),
        "results are never truncated"
    );
    assert!(result.importance >= 0.9);
    assert_eq!(result.metadata["event"], "result");
    // The raw log keeps whole texts, and the FIFO cap drops the oldest first.
    let raw: Vec<String> = f
        .engine
        .with_store(|s| {
            let mut st = s.conn().prepare("SELECT text FROM messages ORDER BY id")?;
            let v: Vec<String> = st
                .query_map([], |r| r.get(0))?
                .collect::<somna_engine::Result<_>>()?;
            Ok(v)
        })
        .unwrap();
    assert_eq!(raw[0], long);
    let more: Vec<Message> = (0..10).map(turn).collect();
    let rep = f.engine.add("c", &more, &AddOptions::default()).unwrap();
    assert!(rep.messages_pruned > 0);
    let (count, chars): (i64, i64) = f
        .engine
        .with_store(|s| {
            s.conn().query_row(
                "SELECT COUNT(*), SUM(length(text)) FROM messages WHERE conversation = 'c'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
        .unwrap();
    assert!(
        chars <= 400 && count < 13,
        "{count} messages, {chars} chars"
    );
    assert_eq!(
        f.engine.get(ada.id).unwrap().memory.id,
        ada.id,
        "bubbles stay"
    );
    assert!(
        window_summaries(&f.engine, "c").is_empty(),
        "summary_every = 0"
    );
}

#[test]
fn a_malformed_policies_file_is_a_typed_error_naming_the_line() {
    let dir = tempdir();
    let path = dir.path().join(POLICIES_FILE);
    std::fs::write(&path, "style = \"narrative\"\n[[rule]]\nskip = maybe\n").unwrap();
    match Policies::load(&path) {
        Err(Error::Policy {
            file,
            line,
            problem,
        }) => {
            assert_eq!(line, 3, "{problem}");
            assert!(file.ends_with(POLICIES_FILE));
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(&path, "style = \"poetic\"\n").unwrap();
    let e = Policies::load_from_dir(dir.path()).unwrap_err();
    assert_eq!(e.code(), "policy");
    assert!(e.to_string().contains("line 1"), "{e}");
}
