//! The operations layer over a real store with the deterministic hashing embedder: no
//! window, no server. What every front end relies on: one set of limits with errors that
//! name the field, every write path keeping the store clustered, the backend rule, and the
//! workspace the app keeps over an open store.

use somna_api::sleep::Backend;
use somna_api::{
    AddMemoryArgs, Api, DeleteArgs, Filters, GoldenAddArgs, GoldenHistoryArgs, ImportRequest,
    LayoutAsOf, LayoutKey, LayoutRequest, LedgerArgs, ListArgs, MessageArg, NeighbourhoodRequest,
    SearchArgs, SearchDefaults, SearchOptions, SimilarArgs, TunedSearchArgs, UndoRequest,
    UpdateFields, Workspace,
};
use somna_engine::cluster::ClusterUpkeep;
use somna_engine::embed::HashEmbedder;
use somna_engine::ingest::ImportFormat;
use somna_engine::retrieve::Weights;
use somna_engine::{Config, Job, ProjectionMethod, SleepConfig, SleepOptions, Somna};
use std::sync::Arc;

fn engine(dir: &tempfile::TempDir) -> Arc<Somna> {
    let cfg = Config::new(dir.path().join("s.db"), dir.path().join("model"));
    Arc::new(Somna::open_with(&cfg, Arc::new(HashEmbedder::new(384)), &Job::default()).unwrap())
}

fn message(text: &str) -> MessageArg {
    MessageArg {
        text: text.into(),
        speaker: Some("Ada".into()),
        ..MessageArg::default()
    }
}

fn add(api: &Api, texts: &[&str]) -> Vec<i64> {
    api.add(AddMemoryArgs {
        conversation: "c".into(),
        messages: texts.iter().map(|t| message(t)).collect(),
        ..AddMemoryArgs::default()
    })
    .unwrap()
    .episodes
}

const TOPICS: [&str; 8] = [
    "the lighthouse keeper repaints the tower",
    "the ferry to the island leaves at noon",
    "my sister bakes sourdough bread on sundays",
    "the marathon route follows the river",
    "the compiler rejects the borrowed reference",
    "we planted tomatoes in the back garden",
    "the violin needs new strings before the concert",
    "the train to Lisbon was two hours late",
];

fn many(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{} (note {i})", TOPICS[i % TOPICS.len()]))
        .collect()
}

#[test]
fn every_limit_is_refused_with_the_field_and_its_range() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    let id = add(&api, &["the ferry leaves at noon", "the tower is white"])[0];
    let search = |k| {
        api.search(
            &SearchArgs {
                query: "ferry".into(),
                k: Some(k),
                mode: None,
                route: None,
                filters: None,
                as_of: None,
            },
            SearchOptions::default(),
        )
    };
    let refused = |r: somna_engine::Result<()>, text: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{e}");
        assert!(e.to_string().contains(text), "{e} lacks {text:?}");
    };
    refused(search(0).map(drop), "k must be 1 to 200 (got 0)");
    refused(search(201).map(drop), "k must be 1 to 200 (got 201)");
    assert!(search(200).is_ok());
    refused(
        api.list(&ListArgs {
            limit: Some(0),
            ..ListArgs::default()
        })
        .map(drop),
        "limit must be 1 to 1000 (got 0)",
    );
    refused(
        api.similar(&SimilarArgs { id, k: Some(101) }).map(drop),
        "k must be 1 to 100 (got 101)",
    );
    refused(
        api.neighbourhood(&NeighbourhoodRequest {
            seeds: vec![id],
            depth: 5,
            limit: 10,
        })
        .map(drop),
        "depth must be 1 to 4 (got 5)",
    );
    refused(
        api.add(AddMemoryArgs {
            conversation: "c".into(),
            ..AddMemoryArgs::default()
        })
        .map(drop),
        "messages must be 1 to 1000 (got 0)",
    );
    refused(
        api.sleep_history(Some(0)).map(drop),
        "limit must be 1 to 1000 (got 0)",
    );
    refused(
        api.list(&ListArgs {
            filters: Some(Filters {
                from: Some(2),
                to: Some(1),
                ..Filters::default()
            }),
            ..ListArgs::default()
        })
        .map(drop),
        "filters.from (2) is after filters.to (1)",
    );
}

#[test]
fn adds_keep_the_store_clustered_once_it_is_large_enough() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    let texts = many(20);
    for t in &texts[..10] {
        add(&api, &[t]);
    }
    assert!(api.clusters().unwrap().is_empty(), "too few to cluster yet");
    let refs: Vec<&str> = texts[10..].iter().map(String::as_str).collect();
    add(&api, &refs);
    assert!(
        !api.clusters().unwrap().is_empty(),
        "clustered at the threshold"
    );
    // A later add joins a cluster instead of waiting for a recomputation.
    let id = add(&api, &["the lighthouse keeper repaints the tower again"])[0];
    let points = api.point_attributes().unwrap();
    let i = points.ids.iter().position(|&p| p == id).unwrap();
    assert!(points.clusters[i] >= 0, "the new memory joined a cluster");
}

#[test]
fn an_import_detects_its_format_and_keeps_the_store_clustered() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    let content: String = many(24)
        .iter()
        .map(|t| format!("{}\n", serde_json::json!({"role": "user", "content": t})))
        .collect();
    let req = ImportRequest {
        name: "chat.jsonl".into(),
        format: None,
        content,
    };
    let done = api.import(&req, &Job::default()).unwrap();
    assert_eq!(done.format, ImportFormat::ChatJsonl);
    assert!(
        matches!(done.clusters, ClusterUpkeep::Clustered { .. }),
        "{:?}",
        done.clusters
    );
    let json = serde_json::to_value(&done).unwrap();
    assert_eq!(
        json["messages_stored"], 24,
        "the outcome's fields sit at the top: {json}"
    );
}

#[test]
fn an_import_with_nothing_in_it_is_an_import_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    for (name, format) in [
        ("empty.jsonl", None),
        ("empty.txt", Some(ImportFormat::ChatJsonl)),
        ("empty.json", None),
    ] {
        let req = ImportRequest {
            name: name.into(),
            format,
            content: "\u{feff}\n".into(),
        };
        let e = api.import(&req, &Job::default()).unwrap_err();
        assert_eq!(e.code(), "import", "{name}");
        assert!(e.to_string().starts_with(&format!("{name}: ")), "{e}");
    }
    assert_eq!(api.stats().unwrap().memories, 0);
}

#[test]
fn writes_are_recorded_with_the_front_ends_actor() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "mcp");
    let id = add(&api, &["the ferry leaves at noon"])[0];
    api.update(
        id,
        UpdateFields {
            importance: Some(0.9),
            ..UpdateFields::default()
        },
    )
    .unwrap();
    api.delete(&DeleteArgs { id, hard: false }).unwrap();
    let actors: Vec<String> = api
        .history(id)
        .unwrap()
        .into_iter()
        .map(|h| h.actor)
        .collect();
    assert_eq!(actors, ["mcp", "mcp", "mcp"]);
}

#[test]
fn sleep_runs_with_the_chosen_backend_and_undo_reports_the_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    add(
        &api,
        &many(12).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let e = Backend::choose(Some("chat"), || Ok(None)).unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    let dry = api
        .sleep(
            &SleepOptions {
                dry_run: true,
                trigger: "test".into(),
                config: SleepConfig::default(),
                force: false,
                review: None,
            },
            &Backend::Extractive,
            &Job::default(),
        )
        .unwrap();
    assert_eq!(dry.status, "dry_run");
    let done = api
        .sleep(
            &SleepOptions {
                dry_run: false,
                trigger: "test".into(),
                config: SleepConfig::default(),
                force: false,
                review: None,
            },
            &Backend::Extractive,
            &Job::default(),
        )
        .unwrap();
    let id = done.id.unwrap();
    let undone = api
        .sleep_undo(&UndoRequest { id, cascade: false }, &Job::default())
        .unwrap();
    assert_eq!(undone.last().and_then(|r| r.id), Some(id));
    assert_eq!(api.sleep_history(None).unwrap()[0].status, "undone");
}

#[test]
fn the_workspace_keeps_the_layouts_it_computed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let (ws, problems) = Workspace::open(engine, "app", dir.path(), Arc::new(|_| {}));
    assert!(problems.is_empty(), "{problems:?}");
    add(
        ws.api(),
        &many(10).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let key = LayoutKey {
        method: ProjectionMethod::Pca,
        dims: 3,
    };
    assert_eq!(
        ws.layout(key).unwrap(),
        None,
        "nothing computed or saved yet"
    );
    let req = LayoutRequest {
        method: ProjectionMethod::Pca,
        dims: 3,
        full: false,
    };
    let summary = ws.compute_layout(&req, &Job::default()).unwrap();
    assert_eq!(summary.points, 10);
    let l = ws.layout(key).unwrap().unwrap();
    assert_eq!((l.ids.len(), l.coords.len()), (10, 30));
    let bad = LayoutRequest { dims: 4, ..req };
    assert!(ws.compute_layout(&bad, &Job::default()).is_err());
    assert!(!ws.liquid_status().running);
}

#[test]
fn the_layout_as_of_an_instant_puts_the_points_where_that_computation_placed_them() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, problems) = Workspace::open(engine(&dir), "app", dir.path(), Arc::new(|_| {}));
    assert!(problems.is_empty(), "{problems:?}");
    let texts = many(12);
    add(
        ws.api(),
        &texts[..6].iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let req = LayoutRequest {
        method: ProjectionMethod::Pca,
        dims: 3,
        full: true,
    };
    let first = ws.compute_layout(&req, &Job::default()).unwrap();
    let then = ws.layout(req_key(&req)).unwrap().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let later = add(
        ws.api(),
        &texts[6..].iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let second = ws.compute_layout(&req, &Job::default()).unwrap();
    assert!(second.computed_at > first.computed_at);
    let now = ws.layout(req_key(&req)).unwrap().unwrap();
    assert_eq!(now.ids.len(), 12);
    assert_ne!(
        now.coords[..18],
        then.coords[..18],
        "the second computation moved them"
    );

    let as_of = |at: i64| {
        ws.layout_as_of(LayoutAsOf {
            method: ProjectionMethod::Pca,
            dims: 3,
            at,
        })
        .unwrap()
        .unwrap()
    };
    // Between the two computations: the first one's places; the memories added later
    // (not in it) keep today's.
    let past = as_of(second.computed_at - 1);
    assert_eq!(past.ids, now.ids);
    for (r, id) in past.ids.iter().enumerate() {
        let at = |l: &somna_api::LayoutCoords| {
            let k = l.ids.iter().position(|x| x == id).unwrap();
            l.coords[k * 3..k * 3 + 3].to_vec()
        };
        let expected = if later.contains(id) {
            at(&now)
        } else {
            at(&then)
        };
        assert_eq!(past.coords[r * 3..r * 3 + 3], expected[..], "memory {id}");
    }
    // From the second computation on: today's.
    assert_eq!(as_of(second.computed_at), now);
    assert_eq!(as_of(i64::MAX), now);
}

fn req_key(r: &LayoutRequest) -> LayoutKey {
    LayoutKey {
        method: r.method,
        dims: r.dims,
    }
}

#[test]
fn the_workspace_announces_other_processes_writes_on_the_change_stream() {
    use somna_engine::{Change, Origin};
    let dir = tempfile::tempdir().unwrap();
    let (ws, problems) = Workspace::open(engine(&dir), "app", dir.path(), Arc::new(|_| {}));
    assert!(problems.is_empty(), "{problems:?}");
    let changes = ws.api().engine().subscribe();
    // Another engine on the same file stands for another process (`somna mcp`, a server).
    let other = Api::new(engine(&dir), "mcp");
    let ids = add(&other, &["the ferry to the island leaves at noon"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let event = changes
            .recv_timeout(left)
            .expect("the other writer's add never reached the workspace's stream");
        if event.origin == Origin::External {
            if let Change::MemoriesAdded { ids: added } = &event.change {
                assert!(ids.iter().all(|id| added.contains(id)), "{added:?} {ids:?}");
                break;
            }
        }
    }
}

#[test]
fn the_app_saves_a_golden_query_from_a_search_runs_it_and_reads_its_runs_and_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    add(
        &api,
        &[
            "the ferry to the island leaves at noon",
            "the tower is white",
        ],
    );
    let search = SearchArgs {
        query: "ferry to the island".into(),
        k: Some(5),
        mode: None,
        route: None,
        filters: Some(Filters {
            conversation: Some("c".into()),
            ..Filters::default()
        }),
        as_of: None,
    };
    let r = api.search(&search, SearchOptions::default()).unwrap();
    let top = r.hits[0].memory.id;
    let args = |expected: Vec<i64>, k: Option<usize>| GoldenAddArgs {
        query: search.query.clone(),
        expected,
        k,
        filters: search.filters.clone(),
        mode: None,
        route: None,
    };
    let refused = |r: somna_engine::Result<()>, text: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{e}");
        assert!(e.to_string().contains(text), "{e} lacks {text:?}");
    };
    refused(
        api.golden_add_from(&args(vec![top], Some(0))).map(drop),
        "k must be 1 to 200 (got 0)",
    );
    refused(
        api.golden_add_from(&args(vec![], None)).map(drop),
        "at least one expected memory",
    );
    let g = api.golden_add_from(&args(vec![top], None)).unwrap();
    assert_eq!((g.k, g.expected.clone()), (10, vec![top]));
    // The search's filter is kept with the query.
    assert_eq!(g.options["filter"]["conversation"], "c");
    let entries = api.golden_entries().unwrap();
    assert_eq!(entries[0].memories[0].id, top);
    assert_eq!(entries[0].memories[0].text, r.hits[0].memory.text);

    let run = api.golden_run(&Job::default()).unwrap();
    assert_eq!((run.stage.as_str(), run.mean_recall), ("manual", 1.0));
    let history = api.golden_history(&GoldenHistoryArgs::default()).unwrap();
    assert_eq!(history, vec![run]);
    refused(
        api.golden_history(&GoldenHistoryArgs { limit: Some(0) })
            .map(drop),
        "limit must be 1 to 1000 (got 0)",
    );

    // The ledger over the last hour has the searches and the golden run, by operation and
    // by hour; a window out of range is refused.
    let ledger = api.ledger_report(&LedgerArgs { hours: Some(1) }).unwrap();
    assert_eq!(ledger.until - ledger.since, 3_600_000);
    let ops: Vec<&str> = ledger
        .by_op
        .iter()
        .filter_map(|r| r.op.as_deref())
        .collect();
    assert!(
        ops.contains(&"search") && ops.contains(&"golden"),
        "{ops:?}"
    );
    assert!(ledger
        .by_hour
        .iter()
        .all(|r| r.period_start.is_some_and(|p| p % 3_600_000 == 0)));
    let searches: u64 = ledger
        .by_hour
        .iter()
        .filter(|r| r.op.as_deref() == Some("search"))
        .map(|r| r.count)
        .sum();
    assert_eq!(
        Some(searches),
        ledger
            .by_op
            .iter()
            .find(|r| r.op.as_deref() == Some("search"))
            .map(|r| r.count)
    );
    refused(
        api.ledger_report(&LedgerArgs { hours: Some(0) }).map(drop),
        "hours must be 1 to 2160 (got 0)",
    );
}

#[test]
fn a_tuned_search_runs_with_the_window_and_weights_it_was_given_and_refuses_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(engine(&dir), "test");
    add(
        &api,
        &[
            "the ferry to the island leaves at noon",
            "the tower is white",
        ],
    );
    let tuned = |window: Option<usize>, weights: Option<Weights>| TunedSearchArgs {
        search: SearchArgs {
            query: "ferry".into(),
            k: None,
            mode: None,
            route: Some(somna_engine::Route::Hybrid),
            filters: None,
            as_of: None,
        },
        window,
        weights,
    };
    let run = |t: TunedSearchArgs| {
        let (args, opts) = t.split(false);
        api.search(&args, opts)
    };
    let plain = run(tuned(None, None)).unwrap();
    assert_eq!(plain.weights, Weights::default());
    assert_eq!(plain.budget_tokens, 8192 - 512 - 1024);
    let lexical_only = Weights {
        semantic: 0.0,
        lexical: 1.0,
        recency: 0.0,
        actor: 0.0,
        spatial: 0.0,
        usage: 0.0,
    };
    let r = run(tuned(Some(4096), Some(lexical_only))).unwrap();
    assert_eq!(r.weights, lexical_only);
    assert_eq!(r.budget_tokens, 4096 - 512 - 1024);
    let e = run(tuned(
        None,
        Some(Weights {
            lexical: 0.5,
            ..lexical_only
        }),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("weights must sum to 1"), "{e}");
    let e = run(tuned(Some(100), None)).unwrap_err();
    assert!(
        e.to_string().contains("window must be 2048 to 200000"),
        "{e}"
    );
    // The defaults the X-ray resets to are the engine's.
    let d = SearchDefaults::default();
    assert_eq!((d.weights, d.window), (Weights::default(), 8192));
}
