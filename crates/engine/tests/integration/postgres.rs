//! The engine on a Postgres + pgvector store: the same operations as on SQLite, checked
//! against the SQLite store they are copied from. Needs a real server at
//! `SOMNA_TEST_PG_URL` (`scripts/test.sh` starts one with `scripts/pg.sh`); without it
//! these tests fail, they never skip. Each test gets a schema of its own in that database.

use crate::common::*;
use somna_engine::embed::{Embedder, HashEmbedder};
use somna_engine::index::SearchPath;
use somna_engine::ingest::ExportDoc;
use somna_engine::retrieve::Origin as Found;
use somna_engine::{
    AddOptions, Change, Job, Kind, ListQuery, MemoryFilter, Origin, SearchQuery, Somna,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_store_on_postgres_adds_finds_lists_and_deletes_as_on_sqlite() {
    let pg = Fixture::postgres_hash();
    let sqlite = Fixture::sqlite_hash();
    let conversation = sample_conversation();
    for engine in [&pg.engine, &sqlite.engine] {
        engine
            .add(CONVERSATION, &conversation, &AddOptions::default())
            .unwrap();
    }
    let stats = pg.engine.stats().unwrap();
    assert!(
        stats.db_path.starts_with("postgres://"),
        "{}",
        stats.db_path
    );
    assert!(
        !stats.db_path.contains("somna-test"),
        "the password is never shown"
    );
    assert_eq!(stats.memories, sqlite.engine.stats().unwrap().memories);
    // The store's own index answers; this process has read no vector yet.
    assert_eq!(stats.vector_index, SearchPath::Pgvector);
    assert_eq!(stats.indexed, stats.memories as usize);
    assert_eq!(stats.vectors_held, 0);

    // The exact text of a turn finds it first (vector and lexical stages both on Postgres).
    let text = &conversation[turn::VIOLIN].text;
    let hits = pg
        .engine
        .search_readonly(&SearchQuery::new(text))
        .unwrap()
        .hits;
    assert_eq!(hits[0].memory.text, *text);
    // Query syntax is plain text, as on SQLite.
    pg.engine
        .search_readonly(&SearchQuery::new("(AND) OR \"quote NEAR/2 *"))
        .unwrap();

    // Filters are the same SQL on both.
    let filter = MemoryFilter {
        who: Some("alice".into()),
        kinds: vec![Kind::Episode],
        ..Default::default()
    };
    let list = |e: &Somna| -> Vec<String> {
        e.list(&ListQuery {
            filter: filter.clone(),
            ..Default::default()
        })
        .unwrap()
        .memories
        .into_iter()
        .map(|m| m.text)
        .collect()
    };
    assert_eq!(list(&pg.engine), list(&sqlite.engine));
    assert!(!list(&pg.engine).is_empty());

    let id = hits[0].memory.id;
    pg.engine.delete(id, false, "user").unwrap();
    assert!(pg
        .engine
        .search_readonly(&SearchQuery::new(text))
        .unwrap()
        .hits
        .iter()
        .all(|h| h.memory.id != id));
    pg.engine.restore(id, "user").unwrap();
    assert_eq!(pg.engine.history(id).unwrap().len(), 3);
}

/// Every table's rows as an export holds them, with the export's time left out.
fn doc_of(engine: &Somna) -> ExportDoc {
    let mut doc = engine.export().unwrap();
    doc.exported_at = 0;
    doc
}

/// The sample conversation's export with one more memory for each of `texts` (a copy of its
/// first memory with that text and a vector of its own from the hashing
/// embedder), and the id the first of them gets.
fn sample_doc_with(texts: impl IntoIterator<Item = String>) -> (ExportDoc, i64) {
    let src = Fixture::sqlite_hash();
    src.engine
        .add(CONVERSATION, &sample_conversation(), &no_facts())
        .unwrap();
    let mut doc = doc_of(&src.engine);
    let embedder = somna_engine::embed::HashEmbedder::new(384);
    let template = doc.memories[0].clone();
    let first = doc.memories.iter().map(|m| m.memory.id).max().unwrap() + 1;
    let mut next = first;
    for text in texts {
        let mut m = template.clone();
        m.memory.id = next;
        m.embedding = Some(embedder.embed(&[text.as_str()]).unwrap().remove(0));
        m.memory.text = text;
        doc.memories.push(m);
        next += 1;
    }
    doc.last_memory_id = Some(next - 1);
    (doc, first)
}

#[test]
fn a_sqlite_store_copied_into_postgres_exports_the_same_and_a_sleep_cycle_undoes_cleanly() {
    let src = Fixture::sqlite_hash();
    src.engine
        .add(CONVERSATION, &sample_conversation(), &AddOptions::default())
        .unwrap();
    src.engine
        .add(
            "other",
            &[msg("Cy", "the boiler needs servicing")],
            &no_facts(),
        )
        .unwrap();
    let doc = doc_of(&src.engine);

    let pg = Fixture::postgres_hash();
    pg.engine.import_export(&doc, &Job::default()).unwrap();
    assert_eq!(doc_of(&pg.engine), doc, "the copy is lossless");

    // A new memory on Postgres never takes an id the copy carried.
    let before_max = doc.memories.iter().map(|m| m.memory.id).max().unwrap();
    let added = pg
        .engine
        .add(
            "other",
            &[msg("Cy", "the plumber comes on Monday")],
            &no_facts(),
        )
        .unwrap()
        .episodes[0];
    assert!(added > before_max);

    // A sleep cycle writes, and its undo puts every row back.
    let before = doc_of(&pg.engine);
    let report = pg
        .engine
        .sleep(&crate::sleep::options(), &Job::default())
        .unwrap();
    assert_ne!(doc_of(&pg.engine).memories, before.memories);
    pg.engine
        .sleep_undo(
            report.id.expect("a committed cycle has an id"),
            &Job::default(),
        )
        .unwrap();
    assert_eq!(doc_of(&pg.engine).memories, before.memories);
}

#[test]
fn a_large_export_restored_into_an_empty_postgres_store_keeps_a_valid_pgvector_index() {
    // A thousand more memories, each with words and a vector of its own: enough for the
    // restore to build pgvector's index once at the end instead of row by row.
    let text = |i: i64| format!("harbour note {i}: crate {} went to pier {}", i * 7, i % 13);
    let (doc, first_new) = sample_doc_with((0..1000).map(text));

    let pg = Fixture::postgres_hash();
    pg.engine.import_export(&doc, &Job::default()).unwrap();
    // (Not assert_eq: a difference would print 1,012 vectors.)
    assert!(doc_of(&pg.engine) == doc, "the copy is lossless");
    let url = pg.cfg.db_path.to_str().unwrap();
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let valid: Vec<bool> = client
        .query(
            "SELECT i.indisvalid FROM pg_index i
             JOIN pg_class c ON c.oid = i.indexrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relname = 'memory_vectors_hnsw' AND n.nspname = current_schema()",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(valid, [true], "pgvector's index is there, and valid");
    // Each row written once (no dead versions): compacting the table leaves it the same
    // size. An insert then two updates a memory left it three times its size.
    let size = |c: &mut postgres::Client| -> i64 {
        c.query_one("SELECT pg_relation_size('memories')", &[])
            .unwrap()
            .get(0)
    };
    let restored = size(&mut client);
    client.batch_execute("VACUUM FULL memories").unwrap();
    assert_eq!(restored, size(&mut client), "one version of each row");
    let response = pg
        .engine
        .search_readonly(&SearchQuery::new(text(500)))
        .unwrap();
    assert_eq!(response.vector_path, SearchPath::Pgvector);
    assert_eq!(response.hits[0].memory.id, first_new + 500);
}

#[test]
fn a_second_process_on_the_same_postgres_store_sees_the_first_ones_writes() {
    let a = Fixture::postgres_hash();
    let b = open_hash(&a.cfg);
    let id = a
        .engine
        .add(
            "c",
            &[msg("Ann", "the boiler needs servicing")],
            &no_facts(),
        )
        .unwrap()
        .episodes[0];
    b.sync_external_changes().unwrap();
    assert_eq!(b.get(id).unwrap().memory.text, "the boiler needs servicing");
    let hits = b
        .search_readonly(&SearchQuery::new("the boiler needs servicing"))
        .unwrap()
        .hits;
    assert_eq!(hits[0].memory.id, id);
}

#[test]
fn the_vector_stage_reads_pgvectors_index_so_another_processs_memory_is_found_before_any_catch_up()
{
    let a = Fixture::postgres_hash();
    let b = open_hash(&a.cfg);
    a.engine
        .add(CONVERSATION, &sample_conversation(), &no_facts())
        .unwrap();
    let text = "the lighthouse keeper repainted the lamp room vermilion";
    let id = a
        .engine
        .add("c", &[msg("Ann", text)], &no_facts())
        .unwrap()
        .episodes[0];
    // `b` has not caught up (its own copy of the vectors lacks the memory): the database's
    // index finds it, and its similarity is read from the database.
    let response = b.search_readonly(&SearchQuery::new(text)).unwrap();
    assert_eq!(response.vector_path, SearchPath::Pgvector);
    let top = &response.hits[0];
    assert_eq!(top.memory.id, id);
    assert!(
        matches!(top.origin, Found::Vector | Found::Both),
        "{:?}",
        top.origin
    );
    // (The memory's vector embeds its speaker and time too: close to the text's, not equal.)
    assert!(top.signals.semantic > 0.9, "{:?}", top.signals);

    // A filtered search scans its few memories exactly, in the database, and returns only
    // what the filter passes.
    let mut q = SearchQuery::new(text);
    q.filter.who = Some("alice".into());
    let response = b.search_readonly(&q).unwrap();
    assert_eq!(response.vector_path, SearchPath::Exact);
    assert!(!response.hits.is_empty());
    assert!(response
        .hits
        .iter()
        .all(|h| h.memory.w5h1.who.as_deref() == Some("Alice")));

    // A deleted memory leaves the database's index at once.
    a.engine.delete(id, false, "test").unwrap();
    let response = b.search_readonly(&SearchQuery::new(text)).unwrap();
    assert!(response.hits.iter().all(|h| h.memory.id != id));
}

#[test]
fn the_engines_own_neighbour_searches_ask_pgvector_so_another_processs_memory_is_a_neighbour_at_once(
) {
    let a = Fixture::postgres_hash();
    a.engine
        .add(CONVERSATION, &sample_conversation(), &no_facts())
        .unwrap();
    let text = "the lighthouse keeper repainted the lamp room vermilion";
    let first = a
        .engine
        .add("c1", &[msg("Ann", text)], &no_facts())
        .unwrap()
        .episodes[0];
    let b = open_hash(&a.cfg);
    // No graph of its own: the store's index answers, whatever the store's size; and no
    // vector read at open.
    let stats = b.stats().unwrap();
    assert_eq!(stats.vector_index, SearchPath::Pgvector);
    assert_eq!((stats.vectors_held, stats.index_tombstones), (0, 0));
    // The same words again, written by `a` after `b` opened: `b` holds no vector of it and
    // has not caught up, yet it is the nearest memory `b` finds to the first.
    let second = a
        .engine
        .add("c2", &[msg("Ann", text)], &no_facts())
        .unwrap()
        .episodes[0];
    let near: Vec<i64> = b
        .similar_to(first, 5)
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(near.first(), Some(&second), "{near:?}");
    assert!(!near.contains(&first), "a memory is not its own neighbour");
    // A search reads only its candidates' vectors...
    let response = b.search_readonly(&SearchQuery::new(text)).unwrap();
    assert!(response.hits.iter().any(|h| h.memory.id == second));
    assert_eq!(b.stats().unwrap().vectors_held, 0);
    // ...what reads every vector (here the search for near-duplicates) reads them all.
    b.find_duplicates(&somna_engine::curate::duplicates::DuplicateQuery::default())
        .unwrap();
    let stats = b.stats().unwrap();
    assert_eq!(stats.vectors_held, stats.memories as usize);
}

#[test]
fn another_processs_write_reaches_the_watcher_by_notify_without_a_poll() {
    let a = Fixture::postgres_hash();
    let app: Arc<Somna> = Arc::new(open_hash(&a.cfg));
    let rx = app.subscribe();
    // An interval of an hour: only a notification can wake the watcher within the test.
    let watch = app.watch_external(Duration::from_secs(3600));
    // The watcher catches up once as it starts listening; let that pass.
    std::thread::sleep(Duration::from_millis(300));
    while rx.try_recv().is_ok() {}
    let started = Instant::now();
    let id = a
        .engine
        .add("c", &[msg("Ada", "heard, not polled")], &no_facts())
        .unwrap()
        .episodes[0];
    let event = rx
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("{e:?}; the watcher's last error: {:?}", watch.last_error()));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(event.origin, Origin::External);
    assert_eq!(event.change, Change::MemoriesAdded { ids: vec![id] });
    assert_eq!(watch.last_error(), None);
    watch.stop();
}

#[test]
fn an_unreachable_server_or_a_wrong_password_is_a_typed_error_naming_the_fix() {
    let refused = somna_engine::store::Store::open_url("postgres://somna@127.0.0.1:9/somna")
        .err()
        .expect("nothing listens on port 9");
    assert_eq!(refused.code(), "store_unavailable");
    assert!(
        refused.to_string().contains("cannot be reached"),
        "{refused}"
    );

    let url = postgres_server_url();
    let wrong = url.replacen(":somna-test@", ":not-the-password@", 1);
    assert_ne!(wrong, url, "the test URL carries the test password");
    let err = somna_engine::store::Store::open_url(&wrong)
        .err()
        .expect("a wrong password is refused");
    assert_eq!(err.code(), "store_unavailable");
    let text = err.to_string();
    assert!(text.contains("password"), "{text}");
    assert!(
        !text.contains("not-the-password"),
        "the password is never shown: {text}"
    );
}

#[test]
fn a_sleep_cycle_is_refused_while_another_process_holds_the_stores_cycle_lock() {
    let a = Fixture::postgres_hash();
    a.engine
        .add(CONVERSATION, &sample_conversation(), &AddOptions::default())
        .unwrap();
    let b = open_hash(&a.cfg);
    // As another machine's cycle would hold it: the lock lives in the server.
    let held = b
        .with_store(|s| s.cycle_lock())
        .unwrap()
        .expect("a Postgres store has a server-side lock");
    let err = a
        .engine
        .sleep(&crate::sleep::options(), &Job::default())
        .unwrap_err();
    assert_eq!(err.code(), "cycle_running");
    drop(held);
    a.engine
        .sleep(&crate::sleep::options(), &Job::default())
        .unwrap();
}

/// Dropping the lock releases it at once: closing its connection alone would leave the
/// lock to the server's backend until it noticed, and a cycle or undo right after one
/// ended (as a person's "undo" after a cycle) was refused as `cycle_running`.
#[test]
fn the_cycle_lock_is_free_again_as_soon_as_its_holder_drops_it() {
    let a = Fixture::postgres_hash();
    for round in 0..500 {
        let held = a.engine.with_store(|s| s.cycle_lock()).unwrap_or_else(|e| {
            panic!("round {round}: the lock dropped in the round before is still held: {e}")
        });
        drop(held);
    }
}

#[test]
fn a_lexical_search_for_two_common_words_on_postgres_ranks_as_scoring_every_match_would() {
    // Every query word is in more memories than the search scores at once (over 1,000),
    // so the memories holding both words are scored first; that is the result only when
    // no memory holding just one of them could rank among it.
    let long = |i: i64| {
        (0..28)
            .map(|j| format!("filler{i}x{j}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut texts: Vec<String> = Vec::new();
    for i in 0..1100 {
        texts.push(format!("alpha gamma crate {i}"));
        texts.push(format!("beta delta crate {i}"));
    }
    for i in 0..900 {
        texts.push(format!("harbour crate {i}"));
    }
    // Short memories holding alpha and beta: nothing holding one of them can beat them.
    for i in 0..30 {
        texts.push(format!("alpha beta {i}"));
    }
    // Long memories holding gamma and delta: short ones holding one of them rank higher.
    for i in 0..30 {
        texts.push(format!("gamma delta {}", long(i)));
    }
    texts.push("gamma".into());
    let count = texts.len();
    let (mut doc, first) = sample_doc_with(texts);
    let lone_gamma = first + count as i64 - 1;
    // No 5W1H: a memory's words are its text's alone.
    for m in doc.memories.iter_mut().filter(|m| m.memory.id >= first) {
        m.memory.w5h1 = Default::default();
    }
    let pg = Fixture::postgres_hash();
    pg.engine.import_export(&doc, &Job::default()).unwrap();

    let store = somna_engine::store::Store::open(&pg.cfg.db_path).unwrap();
    let texts_of = |query: &str| -> Vec<(i64, String)> {
        let hits = store
            .read()
            .lexical_search(query, &MemoryFilter::default(), 10)
            .unwrap();
        assert_eq!(hits.len(), 10, "{query}");
        let ids: Vec<i64> = hits.iter().map(|h| h.0).collect();
        let memories = store.read().get_memories(&ids).unwrap();
        memories.into_iter().map(|m| (m.id, m.text)).collect()
    };
    for (_, text) in texts_of("alpha beta") {
        assert!(text.starts_with("alpha beta "), "{text}");
    }
    let found = texts_of("gamma delta");
    assert_eq!(found[0].0, lone_gamma, "{found:?}");
    assert!(
        found.iter().all(|(_, t)| !t.starts_with("gamma delta")),
        "a long memory holding both words scores below a short one holding one: {found:?}"
    );
}

#[test]
fn a_postgres_store_made_at_schema_12_is_brought_up_to_date_on_open_and_an_older_one_is_refused() {
    let Fixture { engine, cfg, dir } = Fixture::postgres_hash();
    engine
        .add(CONVERSATION, &sample_conversation(), &AddOptions::default())
        .unwrap();
    let id = engine.list(&ListQuery::default()).unwrap().memories[0].id;
    drop(engine);
    let url = cfg.db_path.to_str().unwrap().to_string();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let version = |c: &mut postgres::Client| -> i64 {
        c.query_one("SELECT version FROM somna_schema", &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(version(&mut client), somna_engine::store::SCHEMA_VERSION);
    // The store as schema 12 made it: golden queries without their vectors.
    client
        .batch_execute(
            "ALTER TABLE golden_queries DROP COLUMN vector, DROP COLUMN vector_model;
             UPDATE somna_schema SET version = 12",
        )
        .unwrap();
    let engine = open_hash(&cfg);
    assert_eq!(version(&mut client), somna_engine::store::SCHEMA_VERSION);
    let golden = engine
        .golden_add("pottery", &[id], 5, &Default::default())
        .unwrap();
    let model = HashEmbedder::new(384).model_id().to_string();
    let saved = engine_store_vectors(&cfg, &model);
    assert_eq!(saved, [golden.query]);
    drop(engine);
    // Older than any Postgres store was made at: refused, named.
    client
        .batch_execute("UPDATE somna_schema SET version = 11")
        .unwrap();
    let err = Somna::open_with(&cfg, Arc::new(HashEmbedder::new(384)), &Job::default())
        .err()
        .expect("a store at schema 11 is refused");
    assert!(err.to_string().contains("schema 11"), "{err}");
    drop(dir);
}

/// The texts of the golden queries whose vector `model` made, read from the store itself.
fn engine_store_vectors(cfg: &somna_engine::Config, model: &str) -> Vec<String> {
    somna_engine::store::Store::open(&cfg.db_path)
        .unwrap()
        .read()
        .golden_vectors(model)
        .unwrap()
        .into_iter()
        .map(|(text, _)| text)
        .collect()
}
