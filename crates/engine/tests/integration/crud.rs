//! Create, read, update, delete, list and the lossless export round trip.

use crate::common::*;
use somna_engine::ingest::ExportDoc;
use somna_engine::memory::LinkKind;
use somna_engine::store::SortKey;
use somna_engine::{
    AddOptions, Job, Kind, ListQuery, Memory, MemoryFilter, MemoryUpdate, SearchQuery, Somna,
    Source, State,
};
use std::collections::{BTreeMap, BTreeSet};

/// Adds one episode ("the boiler needs servicing", no facts) and returns its id.
fn add_boiler_note(engine: &Somna) -> i64 {
    engine
        .add(
            "c",
            &[msg("Ann", "the boiler needs servicing")],
            &no_facts(),
        )
        .unwrap()
        .episodes[0]
}

fn embedding(engine: &Somna, id: i64) -> Vec<f32> {
    engine
        .with_store(|s| s.read().embedding_of(id))
        .unwrap()
        .expect("an embedding")
}

fn top_id(engine: &Somna, query: &str) -> i64 {
    engine
        .search_readonly(&SearchQuery::new(query))
        .unwrap()
        .hits[0]
        .memory
        .id
}

// ---------------------------------------------------------------- update

#[test]
fn updating_the_text_re_embeds_and_records_history() {
    let f = Fixture::real();
    let old = "I keep my bike in the garage next to the lawnmower.";
    let new = "My favourite food is spicy ramen from the night market.";
    let ids = f
        .engine
        .add(
            "home",
            &[
                msg("Alice", old),
                msg("Bob", "My bicycle is stored in the shed behind the garage."),
                msg("Alice", "We are out of oat milk again, can you buy some?"),
            ],
            &no_facts(),
        )
        .unwrap()
        .episodes;
    let id = ids[0];
    assert_eq!(top_id(&f.engine, old), id);
    let before = f.engine.get(id).unwrap().memory;
    let vec_before = embedding(&f.engine, id);

    let updated = f
        .engine
        .update(
            id,
            &MemoryUpdate {
                text: Some(new.into()),
                ..Default::default()
            },
            "editor",
        )
        .unwrap();
    assert_eq!(updated.text, new);
    assert_eq!(updated.w5h1.what.as_deref(), Some(new));
    assert!(updated.updated_at >= before.updated_at);
    assert_ne!(
        embedding(&f.engine, id),
        vec_before,
        "the text changed but the embedding did not"
    );

    assert_eq!(
        top_id(&f.engine, "Where can I get spicy noodles at night?"),
        id
    );
    assert_ne!(
        top_id(&f.engine, old),
        id,
        "the old text still finds the updated memory first"
    );
    assert_eq!(top_id(&f.engine, old), ids[1]);

    let h = f.engine.history(id).unwrap();
    assert_eq!(
        h.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
        ["add", "update"]
    );
    let last = h.last().unwrap();
    assert_eq!(last.actor, "editor");
    let (o, n) = (
        last.old_value.as_ref().unwrap(),
        last.new_value.as_ref().unwrap(),
    );
    assert_eq!(
        (o["text"].as_str(), n["text"].as_str()),
        (Some(old), Some(new))
    );
    assert_eq!(
        (o["what"].as_str(), n["what"].as_str()),
        (Some(old), Some(new))
    );
    assert!(
        o.get("importance").is_none(),
        "only changed fields are recorded: {o}"
    );
    assert!(
        o["updated_at"].as_i64() < n["updated_at"].as_i64(),
        "and when, for time travel: {o}"
    );
}

#[test]
fn updating_other_fields_keeps_the_embedding_and_records_only_what_changed() {
    let f = Fixture::hash();
    let id = add_boiler_note(&f.engine);
    let v = embedding(&f.engine, id);
    let importance_before = f.engine.get(id).unwrap().memory.importance;
    let upd = MemoryUpdate {
        importance: Some(0.95),
        tags: Some(vec!["house".into(), "urgent".into()]),
        metadata: Some(serde_json::json!({"ticket": 42, "note": "ünïcødé"})),
        ..Default::default()
    };
    let m = f.engine.update(id, &upd, "ops").unwrap();
    assert_eq!(m.importance, 0.95);
    assert_eq!(m.tags, ["house", "urgent"]);
    assert_eq!(m.metadata["ticket"], 42);
    assert_eq!(embedding(&f.engine, id), v);
    let last = f.engine.history(id).unwrap().pop().unwrap();
    let keys: BTreeSet<&str> = last
        .new_value
        .as_ref()
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["importance", "metadata", "tags", "updated_at"])
    );
    assert_eq!(
        last.old_value.as_ref().unwrap()["importance"].as_f64(),
        Some(importance_before)
    );
    assert_eq!(
        last.new_value.as_ref().unwrap()["importance"].as_f64(),
        Some(0.95)
    );
    assert_eq!(last.actor, "ops");
}

#[test]
fn invalid_updates_are_refused_and_change_nothing() {
    let f = Fixture::hash();
    let id = add_boiler_note(&f.engine);
    let before = f.snapshot();
    let m = f.engine.get(id).unwrap().memory;
    let bad = [
        MemoryUpdate {
            importance: Some(1.5),
            ..Default::default()
        },
        MemoryUpdate {
            importance: Some(-0.1),
            ..Default::default()
        },
        MemoryUpdate {
            text: Some("   ".into()),
            ..Default::default()
        },
        MemoryUpdate {
            text: Some("x".repeat(2 << 20)),
            ..Default::default()
        },
    ];
    for upd in &bad {
        assert_eq!(err_code(f.engine.update(id, upd, "user")), "invalid_input");
    }
    assert_eq!(
        err_code(f.engine.update(424_242, &MemoryUpdate::default(), "user")),
        "not_found"
    );
    assert_eq!(f.snapshot(), before);
    assert_eq!(f.engine.get(id).unwrap().memory, m);
}

// ---------------------------------------------------------------- list

const C1: &str = "c1";
const C2: &str = "c2";

fn day(d: u32) -> i64 {
    ts(2024, 1, d, 12, 0)
}

/// Ten dated turns in two conversations (three of them state facts); returns the
/// episodes' and the facts' ids.
fn listing_store() -> (Fixture, Vec<i64>, Vec<i64>) {
    let f = Fixture::hash();
    let c1 = [
        ("Ann", "I like green tea with honey."),
        ("Ben", "The train was late this morning."),
        ("Ann", "We should repaint the fence before spring."),
        ("Ben", "I work at the harbour office."),
        ("Ann", "The fence paint is in the shed."),
        ("Ben", "Saturday works for me."),
    ];
    let c2 = [
        ("Ann", "Reminder: dentist on Friday."),
        ("Cid", "I play the cello in an orchestra."),
        ("Ann", "Can you water the plants while I am away?"),
        ("Cid", "Sure, every two days."),
    ];
    let mut episodes = Vec::new();
    let mut facts = Vec::new();
    for (conv, turns, first_day) in [(C1, &c1[..], 1), (C2, &c2[..], 7)] {
        let msgs: Vec<_> = turns
            .iter()
            .enumerate()
            .map(|(i, (who, text))| msg_at(who, text, "s", day(first_day + i as u32)))
            .collect();
        let rep = f.engine.add(conv, &msgs, &AddOptions::default()).unwrap();
        episodes.extend(rep.episodes);
        facts.extend(rep.facts_added);
    }
    assert_eq!(episodes.len(), 10);
    assert_eq!(facts.len(), 3, "green tea, harbour office, cello");
    (f, episodes, facts)
}

fn list(engine: &Somna, filter: MemoryFilter) -> (u64, Vec<Memory>) {
    let page = engine
        .list(&ListQuery {
            filter,
            limit: 1000,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        page.total as usize,
        page.memories.len(),
        "total disagrees with the listing"
    );
    (page.total, page.memories)
}

fn ids(ms: &[Memory]) -> Vec<i64> {
    ms.iter().map(|m| m.id).collect()
}

#[test]
fn list_filters_by_kind_speaker_conversation_and_time() {
    let (f, episodes, facts) = listing_store();
    let (total, all) = list(&f.engine, MemoryFilter::default());
    assert_eq!(total, 13);
    assert!(
        all.windows(2).all(|w| w[0].id < w[1].id),
        "default order is by id"
    );

    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            kinds: vec![Kind::Fact],
            ..Default::default()
        },
    );
    assert_eq!(ids(&got), facts);
    let (n, got) = list(
        &f.engine,
        MemoryFilter {
            kinds: vec![Kind::Episode],
            ..Default::default()
        },
    );
    assert_eq!((n, ids(&got)), (10, episodes.clone()));

    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            who: Some("ann".into()),
            ..Default::default()
        },
    );
    let expected: Vec<i64> = all
        .iter()
        .filter(|m| m.w5h1.who.as_deref() == Some("Ann"))
        .map(|m| m.id)
        .collect();
    assert_eq!(expected.len(), 6, "five turns and one fact");
    assert_eq!(ids(&got), expected);

    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            conversation: Some(C2.into()),
            ..Default::default()
        },
    );
    let expected: Vec<i64> = all
        .iter()
        .filter(|m| m.conversation.as_deref() == Some(C2))
        .map(|m| m.id)
        .collect();
    assert_eq!(expected.len(), 5);
    assert_eq!(ids(&got), expected);

    // The range is inclusive at both ends; memories without a time are excluded.
    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            from: Some(day(3)),
            to: Some(day(6)),
            ..Default::default()
        },
    );
    // A fact is dated by the message that stated it ("harbour office": day 4).
    let mut want = episodes[2..6].to_vec();
    want.push(facts[1]);
    want.sort();
    assert_eq!(ids(&got), want);
    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            from: Some(day(9)),
            ..Default::default()
        },
    );
    assert_eq!(ids(&got), episodes[8..]);
    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            to: Some(day(1)),
            ..Default::default()
        },
    );
    assert_eq!(
        ids(&got),
        [episodes[0], facts[0]],
        "green tea was said on day 1"
    );

    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            kinds: vec![Kind::Episode],
            who: Some("Ben".into()),
            conversation: Some(C1.into()),
            ..Default::default()
        },
    );
    assert_eq!(ids(&got), [episodes[1], episodes[3], episodes[5]]);
}

#[test]
fn list_sorts_and_pages_with_a_correct_total() {
    let (f, episodes, _facts) = listing_store();
    let sorted = |sort, descending| {
        f.engine
            .list(&ListQuery {
                sort,
                descending,
                limit: 1000,
                ..Default::default()
            })
            .unwrap()
            .memories
    };
    let by_time = sorted(SortKey::OccurredAt, true);
    // Every memory has a time (a fact has its message's); ties go by id, newest first.
    let mut want: Vec<(i64, i64)> = by_time
        .iter()
        .map(|m| (m.occurred_at.expect("every memory is dated"), m.id))
        .collect();
    want.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids(&by_time), want.iter().map(|w| w.1).collect::<Vec<_>>());
    assert_eq!(
        ids(&by_time)
            .iter()
            .filter(|id| episodes.contains(id))
            .copied()
            .collect::<Vec<_>>(),
        episodes.iter().rev().copied().collect::<Vec<_>>()
    );
    let by_importance = sorted(SortKey::Importance, true);
    assert!(by_importance
        .windows(2)
        .all(|w| w[0].importance >= w[1].importance));
    let by_importance_asc = sorted(SortKey::Importance, false);
    assert!(by_importance_asc
        .windows(2)
        .all(|w| w[0].importance <= w[1].importance));

    let full = ids(&sorted(SortKey::OccurredAt, false));
    let mut paged = Vec::new();
    for offset in (0..16).step_by(4) {
        let page = f
            .engine
            .list(&ListQuery {
                sort: SortKey::OccurredAt,
                offset,
                limit: 4,
                ..Default::default()
            })
            .unwrap();
        assert_eq!((page.total, page.offset), (13, offset));
        assert!(page.memories.len() <= 4);
        paged.extend(ids(&page.memories));
    }
    assert_eq!(paged, full);
    // limit 0 means the default page size (100), not zero rows.
    assert_eq!(
        f.engine.list(&ListQuery::default()).unwrap().memories.len(),
        13
    );

    // Deleted and forgotten memories leave the default listing and its total.
    f.engine.delete(episodes[0], false, "user").unwrap();
    f.engine
        .update(
            episodes[1],
            &MemoryUpdate {
                state: Some(State::Forgotten),
                ..Default::default()
            },
            "user",
        )
        .unwrap();
    let page = f.engine.list(&ListQuery::default()).unwrap();
    assert_eq!(page.total, 11);
    assert!(
        !ids(&page.memories).contains(&episodes[0]) && !ids(&page.memories).contains(&episodes[1])
    );
    let (n, _) = list(
        &f.engine,
        MemoryFilter {
            include_deleted: true,
            ..Default::default()
        },
    );
    assert_eq!(n, 12);
    let (_, got) = list(
        &f.engine,
        MemoryFilter {
            states: vec![State::Forgotten],
            ..Default::default()
        },
    );
    assert_eq!(ids(&got), [episodes[1]]);

    // A memory without a time sorts last, in either direction.
    let rep = f
        .engine
        .add(
            "c3",
            &[msg("Dee", "No clock on this one.")],
            &AddOptions::default(),
        )
        .unwrap();
    let undated = rep.episodes[0];
    for descending in [true, false] {
        let all = sorted(SortKey::OccurredAt, descending);
        assert_eq!(
            all.last().map(|m| m.id),
            Some(undated),
            "descending {descending}"
        );
    }
}

// ---------------------------------------------------------------- export / import

/// A store with everything an export carries: two conversations, facts with derived
/// links, similar links, an inferred memory, access counts, an update, a soft delete, a
/// hard delete and a forgotten memory.
fn eventful_store() -> Fixture {
    let f = Fixture::hash();
    let conv = sample_conversation();
    let rep = f
        .engine
        .add(CONVERSATION, &conv, &AddOptions::default())
        .unwrap();
    let other = f
        .engine
        .add(
            "notes",
            &[
                msg("Ann", "I like long walks by the sea."),
                msg("Ann", "The sea was calm today."),
            ],
            &AddOptions::default(),
        )
        .unwrap();
    let e = &rep.episodes;
    let inferred = AddOptions {
        source: Source::AgentInference,
        parents: vec![e[turn::PUPPY]],
        actor: "agent".into(),
        extract_facts: false,
    };
    f.engine
        .add(
            CONVERSATION,
            &[msg("agent", "Alice owns a dog called Max.")],
            &inferred,
        )
        .unwrap();
    f.engine
        .search(&SearchQuery::new("golden retriever puppy"))
        .unwrap();
    f.engine
        .search(&SearchQuery::new("deploy failure"))
        .unwrap();
    let upd = MemoryUpdate {
        text: Some("The deploy works again after the timeout fix.".into()),
        tags: Some(vec!["ops".into()]),
        metadata: Some(serde_json::json!({"nested": {"a": [1, 2.5, null]}, "emoji": "🚀"})),
        ..Default::default()
    };
    f.engine
        .update(e[turn::PARSE_CONFIG], &upd, "editor")
        .unwrap();
    f.engine
        .update(
            e[turn::VIOLIN],
            &MemoryUpdate {
                state: Some(State::Forgotten),
                ..Default::default()
            },
            "sleep:1",
        )
        .unwrap();
    f.engine.delete(e[turn::DOLOMITES], false, "user").unwrap();
    f.engine.delete(other.episodes[1], true, "user").unwrap();
    f
}

/// Equal slices, or a message naming the first element that differs.
fn assert_same<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x == y,
            "{what}[{i}] differs:\n  before: {x:?}\n  after:  {y:?}"
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: lengths differ");
}

fn assert_same_doc(a: &ExportDoc, b: &ExportDoc) {
    assert_eq!((&a.format, a.version), (&b.format, b.version));
    assert_same("memories", &a.memories, &b.memories);
    assert_same("links", &a.links, &b.links);
    assert_same("messages", &a.messages, &b.messages);
    assert_same("history", &a.history, &b.history);
}

#[test]
fn export_then_import_into_a_fresh_store_is_lossless() {
    let src = eventful_store();
    let doc = src.engine.export().unwrap();

    // The document carries every kind of state.
    assert!(doc.memories.iter().any(|m| m.memory.deleted_at.is_some()));
    assert!(doc
        .memories
        .iter()
        .any(|m| m.memory.state == State::Forgotten));
    assert!(doc.memories.iter().any(|m| m.memory.access_count > 0));
    assert!(doc.memories.iter().any(|m| m.memory.kind == Kind::Fact));
    assert!(doc
        .memories
        .iter()
        .all(|m| m.embedding.as_ref().is_some_and(|v| v.len() == 384)));
    assert!(doc.links.iter().any(|l| l.kind == LinkKind::Similar));
    assert!(doc.links.iter().any(|l| l.kind == LinkKind::DerivedFrom));
    assert!(
        doc.messages.iter().any(|m| m.memory_id.is_none()),
        "the hard-deleted memory's message"
    );
    let events: BTreeSet<&str> = doc.history.iter().map(|h| h.event.as_str()).collect();
    assert!(
        ["add", "update", "delete", "hard_delete"]
            .iter()
            .all(|e| events.contains(e)),
        "{events:?}"
    );

    let dst = Fixture::hash();
    assert_eq!(
        dst.engine.import_export(&doc, &Job::default()).unwrap(),
        doc.memories.len()
    );
    let again = dst.engine.export().unwrap();
    assert_same_doc(&doc, &again);
    let mut again = again;
    again.exported_at = doc.exported_at;
    assert_eq!(doc, again);

    // The imported store works: indexed, searchable, deleted memories still hidden.
    assert_eq!(
        dst.engine.stats().unwrap().indexed,
        embedded_live_memories(&dst.engine)
    );
    assert_eq!(
        dst.engine.stats().unwrap().memories,
        src.engine.stats().unwrap().memories
    );
    let live = doc
        .memories
        .iter()
        .find(|m| m.memory.text.contains("birthday"))
        .unwrap();
    assert_eq!(top_id(&dst.engine, &live.memory.text), live.memory.id);
    let deleted = doc
        .memories
        .iter()
        .find(|m| m.memory.deleted_at.is_some())
        .unwrap();
    let r = dst
        .engine
        .search_readonly(&SearchQuery::new(&deleted.memory.text))
        .unwrap();
    assert!(r.hits.iter().all(|h| h.memory.id != deleted.memory.id));
}

#[test]
fn an_export_survives_a_json_file_round_trip() {
    let src = eventful_store();
    let doc = src.engine.export().unwrap();
    let path = src.dir.path().join("export.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let read: ExportDoc = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_same_doc(&doc, &read);
    let dst = Fixture::hash();
    dst.engine.import_export(&read, &Job::default()).unwrap();
    assert_same_doc(&doc, &dst.engine.export().unwrap());
}

#[test]
fn importing_an_export_into_a_non_empty_store_is_refused() {
    let src = eventful_store();
    let doc = src.engine.export().unwrap();
    let dst = Fixture::hash();
    dst.engine
        .add("mine", &[msg("Zed", "my own memory")], &no_facts())
        .unwrap();
    let before = dst.snapshot();
    assert_eq!(
        err_code(dst.engine.import_export(&doc, &Job::default())),
        "invalid_input"
    );
    assert_eq!(dst.snapshot(), before, "a refused import wrote something");

    let mut wrong = doc.clone();
    wrong.format = "mem0-export".into();
    assert_eq!(
        err_code(
            Fixture::hash()
                .engine
                .import_export(&wrong, &Job::default())
        ),
        "invalid_input"
    );
    let mut short = doc;
    short.memories[0].embedding = Some(vec![0.5; 12]);
    let fresh = Fixture::hash();
    assert_eq!(
        err_code(fresh.engine.import_export(&short, &Job::default())),
        "invalid_input"
    );
    assert_eq!(fresh.snapshot().memories, 0);
}

#[test]
fn token_counts_missing_from_an_older_store_are_backfilled_on_open() {
    let dir = tempdir();
    let cfg = config(&dir);
    let id = {
        let engine = open_hash(&cfg);
        let r = engine
            .add(
                "c",
                &[msg("Ada", "four words right here")],
                &AddOptions::default(),
            )
            .unwrap();
        assert_eq!(engine.get(r.episodes[0]).unwrap().memory.tokens, Some(4));
        r.episodes[0]
    };
    // What a store written before migration 0003 looks like.
    somna_engine::store::Store::open(&cfg.db_path)
        .unwrap()
        .conn()
        .execute("UPDATE memories SET tokens = NULL", [])
        .unwrap();
    let engine = open_hash(&cfg);
    assert_eq!(engine.get(id).unwrap().memory.tokens, Some(4));
}

// ---------------------------------------------------------------- similar memories

#[test]
fn similar_memories_are_the_nearest_visible_ones_by_embedding() {
    let f = Fixture::real();
    let e = &f.engine;
    let texts = [
        "the boiler needs servicing before winter",
        "the heating engineer will look at the boiler on Monday",
        "our radiators stay cold even with the boiler on",
        "I ran ten kilometres along the river this morning",
        "my favourite pasta is spaghetti with clams",
    ];
    let ids: Vec<i64> = texts
        .iter()
        .map(|t| e.add("c", &[msg("Ann", t)], &no_facts()).unwrap().episodes[0])
        .collect();
    let near = e.similar_to(ids[0], 3).unwrap();
    let got: Vec<i64> = near.iter().map(|s| s.id).collect();
    // The two other heating notes come first; the memory itself is never among them.
    assert_eq!(
        BTreeSet::from([got[0], got[1]]),
        BTreeSet::from([ids[1], ids[2]])
    );
    assert!(!got.contains(&ids[0]));
    assert!(
        near.windows(2).all(|w| w[0].similarity >= w[1].similarity),
        "{near:?}"
    );
    // Each similarity is the cosine of the stored embeddings.
    let (a, b) = (embedding(e, ids[0]), embedding(e, got[0]));
    let cos: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(
        (near[0].similarity - cos).abs() < 1e-4,
        "{} vs {cos}",
        near[0].similarity
    );

    // A deleted memory is no longer anyone's neighbour.
    e.delete(got[0], false, "test").unwrap();
    let after: Vec<i64> = e
        .similar_to(ids[0], 3)
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert!(!after.contains(&got[0]), "{after:?}");
    assert!(after.contains(&got[1]));

    // An unknown id is a typed error, not an empty answer.
    assert!(matches!(
        e.similar_to(999_999, 3),
        Err(somna_engine::Error::NotFound { id: 999_999 })
    ));
}

// ---------------------------------------------------------------- the whole store

/// [`eventful_store`] with everything else a store keeps: a sleep cycle, concept clusters
/// with a person's label and placement, liquid energies and merges, cached layouts, a
/// golden query and its run, ledger entries and settings.
fn whole_store() -> Fixture {
    use somna_engine::compress::Extractive;
    use somna_engine::curate::CurateAction;
    use somna_engine::golden::GoldenOptions;
    use somna_engine::{LiquidParams, ProjectionMethod, SleepConfig, SleepOptions};
    let f = eventful_store();
    let job = Job::default();
    let opts = SleepOptions {
        trigger: "test".into(),
        config: SleepConfig {
            batch_size: 4,
            ..Default::default()
        },
        force: true,
        ..Default::default()
    };
    f.engine.sleep(&opts, &job).unwrap();
    f.engine.cluster(Some(4), &job).unwrap();
    let clusters = f.engine.clusters().unwrap();
    let (first, second) = (clusters[0].id, clusters[1].id);
    let curate = |action| {
        f.engine
            .curate(&action, false, "test", &Extractive::default())
            .unwrap()
    };
    curate(CurateAction::RelabelCluster {
        cluster: first,
        label: "Dogs & déploiements 🐕".into(),
    });
    let member = f.engine.cluster_members(second, 1).unwrap()[0];
    curate(CurateAction::MoveToCluster {
        ids: vec![member],
        cluster: first,
    });
    f.engine
        .search(&SearchQuery::new("golden retriever puppy"))
        .unwrap();
    f.engine
        .liquid_step(&LiquidParams {
            merge_threshold: -1.0,
            ..Default::default()
        })
        .unwrap();
    f.engine.layout(ProjectionMethod::Pca, 2, &job).unwrap();
    f.engine.layout(ProjectionMethod::Pca, 3, &job).unwrap();
    let live = f
        .engine
        .list(&ListQuery::default())
        .unwrap()
        .memories
        .iter()
        .map(|m| m.id)
        .take(2)
        .collect::<Vec<_>>();
    f.engine
        .golden_add("puppy", &live, 5, &GoldenOptions::default())
        .unwrap();
    f.engine.golden_run("manual", None, &job).unwrap();
    // A fact said again (recorded as a re-statement) and one a newer fact in another
    // conversation contradicts (the second rule of "stale").
    let day = 86_400_000;
    let now = somna_engine::store::now_ms();
    for (conversation, text, days_ago) in [
        ("home", "I live in Lisbon.", 200),
        ("home", "I live in Lisbon.", 150),
        ("work", "I live in Porto.", 100),
    ] {
        let m = msg_at("Ada", text, "s", now - days_ago * day);
        f.engine
            .add(conversation, &[m], &AddOptions::default())
            .unwrap();
    }
    f.engine
        .with_store(|s| {
            let read = s.read();
            assert_eq!(read.all_restatements()?.len(), 1, "a re-statement");
            assert_eq!(read.all_contradictions()?.len(), 1, "a contradiction");
            Ok(())
        })
        .unwrap();
    let mut auto = f.engine.auto_sleep_settings().unwrap();
    auto.every = 77;
    f.engine.set_auto_sleep_settings(&auto).unwrap();
    f.engine.flush_ledger().unwrap();
    f
}

/// The tables of the store, from `sqlite_master`, each as its rows in a fixed order (every
/// column, as SQLite holds it). Left out: the lexical index's shadow tables (`memories_fts*`,
/// rebuilt from `memories` by triggers; checked by an integrity check instead), and the
/// column `memories.embed_seq` (the position of an embedding in this store's change log
/// for its own vector index, which an import renumbers).
fn tables(engine: &Somna) -> BTreeMap<String, Vec<String>> {
    engine
        .with_store(|s| {
            let conn = s.conn();
            let postgres = conn.dialect() == somna_engine::store::sql::Dialect::Postgres;
            let names: Vec<String> = conn
                .prepare(conn.pick(
                    "SELECT name FROM sqlite_master WHERE type = 'table'
                     AND name NOT LIKE 'memories_fts%' ORDER BY name",
                    "SELECT table_name::text FROM information_schema.tables
                     WHERE table_schema = current_schema()
                       AND table_name NOT IN ('somna_schema', 'somna_writes')
                     ORDER BY table_name",
                ))?
                .query_map([], |r| r.get(0))?
                .collect::<somna_engine::Result<_>>()?;
            let mut out = BTreeMap::new();
            for name in names {
                let columns: Vec<String> = if postgres {
                    conn.prepare(
                        "SELECT column_name::text FROM information_schema.columns
                         WHERE table_schema = current_schema() AND table_name = ?1
                         ORDER BY ordinal_position",
                    )?
                    .query_map([name.as_str()], |r| r.get(0))?
                    .collect::<somna_engine::Result<_>>()?
                } else {
                    conn.prepare(&format!("SELECT name FROM pragma_table_info('{name}')"))?
                        .query_map([], |r| r.get(0))?
                        .collect::<somna_engine::Result<_>>()?
                };
                // Postgres's own: the lexical index (a generated column) and the order links
                // were made in (renumbered by an import, as embed_seq).
                let kept: Vec<String> = columns
                    .iter()
                    .filter(|c| !(name == "memories" && c.as_str() == "embed_seq"))
                    .filter(|c| !(name == "memories" && c.as_str() == "fts"))
                    .filter(|c| !(name == "links" && c.as_str() == "seq"))
                    .map(|c| format!("\"{c}\""))
                    .collect();
                let order: Vec<String> = (1..=kept.len()).map(|i| i.to_string()).collect();
                let sql = format!(
                    "SELECT {} FROM \"{name}\" ORDER BY {}",
                    kept.join(", "),
                    order.join(", ")
                );
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt
                    .query_map([], |r| {
                        Ok((0..kept.len())
                            .map(|i| r.show(i))
                            .collect::<Vec<_>>()
                            .join(" | "))
                    })?
                    .collect::<somna_engine::Result<Vec<_>>>()?;
                out.insert(name, rows);
            }
            Ok(out)
        })
        .unwrap()
}

#[test]
fn an_export_is_the_whole_store_and_its_import_exports_the_same_document() {
    let src = whole_store();
    let before = tables(&src.engine);
    // The fixture fills every table, so a table the export forgot cannot pass unseen.
    let empty: Vec<&String> = before
        .iter()
        .filter(|(_, rows)| rows.is_empty())
        .map(|(name, _)| name)
        .collect();
    assert!(
        empty.is_empty(),
        "the fixture leaves these empty: {empty:?}"
    );
    let doc = src.engine.export().unwrap();
    assert_eq!(doc.version, somna_engine::ingest::EXPORT_VERSION);
    assert!(doc.operations.iter().any(|o| o.op == "sleep"));
    assert!(doc.clusters.clusters.iter().any(|c| c.label_by_person));
    assert!(doc.clusters.members.iter().any(|m| m.by_person));

    // Through a file, as a person moving a store would.
    let path = src.dir.path().join("store.json");
    somna_engine::ingest::write_export(&doc, &path, true).unwrap();
    let dst = Fixture::hash();
    let outcome = dst
        .engine
        .import_file(
            &path,
            somna_engine::ingest::ImportFormat::Json,
            &Job::default(),
        )
        .unwrap();
    assert!(
        matches!(outcome, somna_engine::ingest::ImportOutcome::Export { memories } if memories == doc.memories.len())
    );
    let after = tables(&dst.engine);
    for (name, rows) in &before {
        assert_same(name, rows, &after[name]);
    }
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut again = dst.engine.export().unwrap();
    again.exported_at = doc.exported_at;
    assert_same_doc(&doc, &again);
    assert_eq!(doc, again);
    // The lexical index was rebuilt consistently with the memories.
    // (Postgres's lexical index is a generated column: it cannot drift.)
    dst.engine
        .with_store(|s| {
            if s.conn().dialect() == somna_engine::store::sql::Dialect::Sqlite {
                s.conn().execute(
                    "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')",
                    [],
                )?;
            }
            Ok(())
        })
        .unwrap();
    // The history of cycles came along: the cycle can still be undone in the new store.
    let cycle = doc.operations.iter().find(|o| o.op == "sleep").unwrap().id;
    assert_eq!(dst.engine.sleep_history(10).unwrap()[0].id, Some(cycle));
}

#[test]
fn a_version_1_export_without_the_new_sections_still_imports() {
    let src = eventful_store();
    let doc = src.engine.export().unwrap();
    let mut v1 = serde_json::to_value(&doc).unwrap();
    let obj = v1.as_object_mut().unwrap();
    obj.insert("version".into(), 1.into());
    for key in [
        "operations",
        "clusters",
        "layouts",
        "golden_queries",
        "golden_runs",
        "golden_results",
        "ledger",
        "settings",
        "last_memory_id",
    ] {
        assert!(obj.remove(key).is_some(), "{key}");
    }
    let dst = Fixture::hash();
    let text = serde_json::to_string(&v1).unwrap();
    assert_eq!(
        somna_engine::ingest::ImportFormat::detect("old.json", &text).unwrap(),
        somna_engine::ingest::ImportFormat::Json
    );
    dst.engine
        .import_text(
            "old.json",
            somna_engine::ingest::ImportFormat::Json,
            &text,
            &Job::default(),
        )
        .unwrap();
    let again = dst.engine.export().unwrap();
    assert_same_doc(&doc, &again);
    // A version this build does not know is refused, naming the versions it reads.
    let mut v9 = doc.clone();
    v9.version = 9;
    let e = Fixture::hash()
        .engine
        .import_export(&v9, &Job::default())
        .unwrap_err();
    assert!(e.to_string().contains("versions 1 to 2"), "{e}");
}

#[test]
fn an_export_into_a_store_with_a_cycle_of_its_own_is_refused_and_writes_nothing() {
    let src = whole_store();
    let mut doc = src.engine.export().unwrap();
    // Memories that do not collide, but an operation log that does.
    let dst = whole_store();
    let before = tables(&dst.engine);
    let shift = 10_000;
    for m in &mut doc.memories {
        m.memory.id += shift;
    }
    doc.links.clear();
    doc.messages.clear();
    doc.history.clear();
    doc.co_access.clear();
    doc.clusters = Default::default();
    doc.layouts.clear();
    doc.golden_queries.clear();
    doc.golden_runs.clear();
    doc.golden_results.clear();
    doc.ledger.clear();
    doc.fact_contradictions.clear();
    doc.fact_restated.clear();
    let e = dst.engine.import_export(&doc, &Job::default()).unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    assert!(
        e.to_string().contains("operation") && e.to_string().contains("empty store"),
        "{e}"
    );
    assert_eq!(tables(&dst.engine), before);
}
