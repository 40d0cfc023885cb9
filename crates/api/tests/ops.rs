//! The operations layer over a real store with the deterministic hashing embedder: no
//! window, no server. What every front end relies on: one set of limits with errors that
//! name the field, every write path keeping the store clustered, the backend rule, and the
//! workspace the app keeps over an open store.

use somna_api::sleep::Backend;
use somna_api::{
    AddMemoryArgs, Api, DeleteArgs, Filters, ImportRequest, LayoutKey, LayoutRequest, ListArgs,
    MessageArg, NeighbourhoodRequest, SearchArgs, SearchOptions, SimilarArgs, UndoRequest,
    UpdateFields, Workspace,
};
use somna_engine::cluster::ClusterUpkeep;
use somna_engine::embed::HashEmbedder;
use somna_engine::ingest::ImportFormat;
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
