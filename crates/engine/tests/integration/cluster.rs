//! Projection, concept clusters and the liquid loop through the engine's API, on the
//! hashing embedder (texts that share words get similar vectors).

use crate::common::{msg, open_hash, Fixture};
use somna_engine::project::align::median_movement;
use somna_engine::{AddOptions, Job, Layout, ProjectionMethod, ProjectionParams, Somna};

const TOPICS: [&[&str]; 3] = [
    &["hiking", "trail", "mountains", "summit", "boots", "ridge"],
    &["cooking", "pasta", "recipe", "garlic", "tomato", "sauce"],
    &["guitar", "concert", "chords", "band", "melody", "stage"],
];

/// `per_topic` messages about each topic, each using four of its six words.
pub fn topical_store(per_topic: usize) -> Fixture {
    let f = Fixture::hash();
    add_topical(&f.engine, per_topic, 0);
    f
}

pub fn add_topical(engine: &Somna, per_topic: usize, offset: usize) {
    let mut msgs = Vec::new();
    for i in offset..offset + per_topic {
        for words in TOPICS {
            let w = |j: usize| words[(i + j) % words.len()];
            msgs.push(msg(
                "Ann",
                &format!("{} {} {} {} number{i}", w(0), w(1), w(2), w(3)),
            ));
        }
    }
    let opts = AddOptions {
        extract_facts: false,
        ..AddOptions::default()
    };
    engine.add("c1", &msgs, &opts).expect("add messages");
}

fn visible(engine: &Somna) -> usize {
    engine.list(&Default::default()).unwrap().total as usize
}

fn check_shape(l: &Layout, n: usize) {
    assert_eq!(l.ids.len(), n);
    assert_eq!(l.coords.len(), n * l.dims);
    assert!(l.coords.iter().all(|v| v.is_finite()));
}

#[test]
fn pca_layout_is_cached_extended_incrementally_and_aligned() {
    let f = topical_store(30);
    let e = &f.engine;
    let n = visible(e);
    let params = ProjectionParams::new(ProjectionMethod::Pca, 3);
    let full = e.project(&params, &Job::default()).unwrap();
    check_shape(&full, n);
    assert_eq!(full.placed_incrementally, 0);
    // Cached: asking for the layout returns it unchanged.
    let cached = e.layout(ProjectionMethod::Pca, 3, &Job::default()).unwrap();
    assert_eq!(cached, full);

    add_topical(e, 2, 100);
    let grown = e.layout(ProjectionMethod::Pca, 3, &Job::default()).unwrap();
    check_shape(&grown, visible(e));
    assert_eq!(grown.placed_incrementally, visible(e) - n);
    // Old points did not move at all.
    assert_eq!(&grown.coords[..n * 3], &full.coords[..]);

    // A full recompute is aligned to the cached layout: old points barely move.
    let again = e.project(&params, &Job::default()).unwrap();
    let moved = median_movement(&again.ids, &again.coords, &grown.ids, &grown.coords, 3);
    assert!(moved < 0.02, "median movement {moved}");

    // A deleted memory leaves the layout.
    let gone = again.ids[0];
    e.delete(gone, false, "test").unwrap();
    let after = e.layout(ProjectionMethod::Pca, 3, &Job::default()).unwrap();
    assert!(!after.ids.contains(&gone));
    check_shape(&after, visible(e));
}

#[test]
fn tsne_layout_runs_on_landmarks_and_places_new_memories_near_their_neighbours() {
    let f = topical_store(40);
    let e = &f.engine;
    let params = ProjectionParams {
        method: ProjectionMethod::Tsne,
        dims: 2,
        perplexity: 15.0,
        iterations: 300,
        landmarks: 80,
        seed: 3,
    };
    let l = e.project(&params, &Job::default()).unwrap();
    check_shape(&l, visible(e));
    let serialised = serde_json::to_value(&l).unwrap();
    assert_eq!(serialised["method"], "tsne");
    add_topical(e, 1, 200);
    let grown = e
        .layout(ProjectionMethod::Tsne, 2, &Job::default())
        .unwrap();
    assert_eq!(grown.placed_incrementally, 3);
    assert_eq!(grown.params, params);
    check_shape(&grown, visible(e));
}

#[test]
fn umap_layout_runs_on_landmarks_and_places_new_memories_near_their_topic() {
    let f = topical_store(40);
    let e = &f.engine;
    let params = ProjectionParams {
        landmarks: 80,
        ..ProjectionParams::new(ProjectionMethod::Umap, 2)
    };
    assert_eq!(params.iterations, 0, "umap-learn's epochs by default");
    let l = e.project(&params, &Job::default()).unwrap();
    check_shape(&l, visible(e));
    assert_eq!(serde_json::to_value(&l).unwrap()["method"], "umap");
    add_topical(e, 1, 200);
    let grown = e
        .layout(ProjectionMethod::Umap, 2, &Job::default())
        .unwrap();
    assert_eq!(grown.placed_incrementally, 3);
    assert_eq!(grown.params, params);
    check_shape(&grown, visible(e));
    // Each new memory lands beside a memory of its own topic.
    let at = |r: usize| (grown.coords[2 * r], grown.coords[2 * r + 1]);
    let topic: Vec<usize> = grown.ids.iter().map(|&id| topic_of(&text(e, id))).collect();
    for (r, &own) in topic.iter().enumerate().skip(l.ids.len()) {
        let (x, y) = at(r);
        let d = |o: usize| (at(o).0 - x).powi(2) + (at(o).1 - y).powi(2);
        let nearest = (0..l.ids.len())
            .min_by(|&a, &b| d(a).total_cmp(&d(b)))
            .unwrap();
        assert_eq!(
            topic[nearest], own,
            "new memory {} placed beside another topic",
            grown.ids[r]
        );
    }
}

#[test]
fn projection_refuses_bad_parameters_and_honours_cancellation() {
    let f = topical_store(5);
    let bad = ProjectionParams::new(ProjectionMethod::Pca, 4);
    assert_eq!(
        f.engine.project(&bad, &Job::default()).unwrap_err().code(),
        "invalid_input"
    );
    let job = Job::default();
    job.cancel.cancel();
    let p = ProjectionParams::new(ProjectionMethod::Pca, 2);
    assert_eq!(f.engine.project(&p, &job).unwrap_err().code(), "cancelled");
    // Nothing was cached by the cancelled run.
    let l = f
        .engine
        .layout(ProjectionMethod::Pca, 2, &Job::default())
        .unwrap();
    assert_eq!(l.ids.len(), visible(&f.engine));
}

/// Which topic a text is about (by its first word).
fn topic_of(text: &str) -> usize {
    let first = text.split_whitespace().next().unwrap_or("");
    TOPICS
        .iter()
        .position(|t| t.contains(&first))
        .expect("a topical text")
}

fn text(engine: &Somna, id: i64) -> String {
    engine.get(id).unwrap().memory.text
}

#[test]
fn clusters_group_topics_label_them_and_take_new_memories_incrementally() {
    let f = topical_store(30);
    let e = &f.engine;
    let n = visible(e);
    let report = e.cluster(Some(3), &Job::default()).unwrap();
    assert_eq!((report.k, report.n), (3, n));
    assert!(report.inertia > 0.0 && report.iterations >= 1);
    let clusters = e.clusters().unwrap();
    assert_eq!(clusters.len(), 3);
    assert_eq!(clusters.iter().map(|c| c.size).sum::<usize>(), n);
    for c in &clusters {
        // Every member of a cluster is about one topic, and the label uses its words.
        let members = e.cluster_members(c.id, usize::MAX).unwrap();
        assert_eq!(members.len(), c.size);
        let topics: std::collections::HashSet<usize> =
            members.iter().map(|m| topic_of(&text(e, *m))).collect();
        assert_eq!(topics.len(), 1, "cluster {} mixes topics", c.label);
        let words = TOPICS[*topics.iter().next().unwrap()];
        // Up to three terms (words or phrases of the topic's words), none a common word.
        let terms: Vec<&str> = c.label.split(" · ").collect();
        assert!((1..=3).contains(&terms.len()), "{}", c.label);
        assert!(
            terms
                .iter()
                .all(|t| t.split(' ').all(|w| words.contains(&w))),
            "{}",
            c.label
        );
        assert!(!c.label.contains("stage"), "a common word: {}", c.label);
        assert!((c.energy - 0.5).abs() < 1e-6);
    }
    let assignments = e.cluster_assignments().unwrap();
    assert_eq!(assignments.len(), n);
    assert!(assignments.iter().all(|a| a.2 > 0.0 && a.2 <= 1.0));

    // The seed's default k.
    let report = e.cluster(None, &Job::default()).unwrap();
    assert_eq!(report.k, (n / 10).clamp(8, 64));

    // New memories join the cluster of their topic without a refit.
    e.cluster(Some(3), &Job::default()).unwrap();
    add_topical(e, 1, 500);
    assert_eq!(e.cluster_incremental().unwrap(), 3);
    let assignments = e.cluster_assignments().unwrap();
    assert_eq!(assignments.len(), n + 3);
    let cluster_of: std::collections::HashMap<i64, i64> =
        assignments.iter().map(|a| (a.0, a.1)).collect();
    for (id, cid, _) in assignments.iter().rev().take(3) {
        let mates = e.cluster_members(*cid, 5).unwrap();
        assert!(mates
            .iter()
            .all(|m| topic_of(&text(e, *m)) == topic_of(&text(e, *id))));
        assert_eq!(cluster_of[id], *cid);
    }
    assert_eq!(e.cluster_incremental().unwrap(), 0);

    // Only visible memories without a cluster are placed: one deleted first stays out.
    add_topical(e, 1, 600);
    let clustered: std::collections::HashSet<i64> = e
        .cluster_assignments()
        .unwrap()
        .iter()
        .map(|a| a.0)
        .collect();
    let listing = somna_engine::ListQuery {
        limit: 10_000,
        ..Default::default()
    };
    let fresh: Vec<i64> = e
        .list(&listing)
        .unwrap()
        .memories
        .iter()
        .map(|m| m.id)
        .filter(|id| !clustered.contains(id))
        .collect();
    assert_eq!(fresh.len(), 3);
    e.delete(fresh[0], false, "test").unwrap();
    assert_eq!(e.cluster_incremental().unwrap(), 2);
    let placed: Vec<i64> = e
        .cluster_assignments()
        .unwrap()
        .iter()
        .map(|a| a.0)
        .collect();
    assert!(!placed.contains(&fresh[0]));
    assert!(placed.contains(&fresh[1]) && placed.contains(&fresh[2]));
}

#[test]
fn liquid_steps_pull_strays_home_merge_split_topics_and_track_energy() {
    let f = topical_store(20);
    let e = &f.engine;
    e.cluster(Some(3), &Job::default()).unwrap();
    let clusters = e.clusters().unwrap();
    // Put one hiking memory into the cooking cluster by hand.
    let assignments = e.cluster_assignments().unwrap();
    let (stray, home) = assignments
        .iter()
        .find(|a| topic_of(&text(e, a.0)) == 0)
        .map(|a| (a.0, a.1))
        .unwrap();
    let away = clusters.iter().find(|c| c.id != home).unwrap().id;
    misplace(e, &[stray], away, None);
    let params = somna_engine::LiquidParams::default();
    let first = e.liquid_step(&params).unwrap();
    assert_eq!(first.step, 1);
    assert!(
        first
            .moved
            .iter()
            .any(|m| m.memory_id == stray && m.from == away && m.to == home),
        "{:?}",
        first.moved
    );
    assert!((first.energy_mean - 0.5 * 0.99).abs() < 1e-5);
    let home_now = e.cluster_assignments().unwrap();
    assert!(home_now.contains(&(
        stray,
        home,
        home_now.iter().find(|a| a.0 == stray).unwrap().2
    )));

    // Accessed memories gain energy.
    e.search(&somna_engine::SearchQuery::new("hiking trail"))
        .unwrap();
    let second = e.liquid_step(&params).unwrap();
    assert_eq!(second.step, 2);
    assert!(
        second.energy_max > 0.5 * 0.99 * 0.99 + 0.04,
        "{}",
        second.energy_max
    );

    // Over-split topics merge: with a low threshold the clusters of one topic converge.
    e.cluster(Some(6), &Job::default()).unwrap();
    let loose = somna_engine::LiquidParams {
        merge_threshold: 0.5,
        ..params.clone()
    };
    let step = e.liquid_step(&loose).unwrap();
    assert!(!step.merged.is_empty());
    let merges = e.cluster_merges().unwrap();
    assert_eq!(merges.len(), step.merged.len());
    let live = e.clusters().unwrap();
    assert_eq!(live.len(), step.clusters);
    assert!(merges
        .iter()
        .all(|m| live.iter().all(|c| c.id != m.from_id)));
    assert_eq!(live.iter().map(|c| c.size).sum::<usize>(), visible(e));
    // The step counter survives in the store.
    assert_eq!(step.step, 3);
}

#[test]
fn liquid_loop_steps_starts_and_pauses_from_another_thread() {
    use somna_engine::{LiquidEvent, LiquidLoop, LiquidParams};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;
    let dir = crate::common::tempdir();
    let cfg = crate::common::config(&dir);
    let engine = Arc::new(crate::common::open_hash(&cfg));
    add_topical(&engine, 10, 0);
    engine.cluster(Some(3), &Job::default()).unwrap();
    // Memories added after the clustering join the loop on its first step.
    add_topical(&engine, 1, 900);
    let n = visible(&engine);
    let (tx, rx) = mpsc::channel();
    let params = LiquidParams {
        interval_ms: 10,
        ..LiquidParams::default()
    };
    let lp = LiquidLoop::spawn(engine.clone(), params, move |ev| {
        let _ = tx.send(ev);
    });
    let next = || rx.recv_timeout(Duration::from_secs(20)).expect("an event");
    lp.step();
    assert!(matches!(next(), LiquidEvent::Step(s) if s.step == 1 && s.memories == n));
    lp.start();
    assert_eq!(next(), LiquidEvent::State { running: true });
    let mut steps = 0;
    while steps < 3 {
        if let LiquidEvent::Step(_) = next() {
            steps += 1;
        }
    }
    assert!(lp.is_running());
    lp.pause();
    while next() != (LiquidEvent::State { running: false }) {}
    assert!(!lp.is_running());
    lp.stop();
}

/// Three clusters over the topical store; the hiking memories (with their cluster), the
/// cluster most of them are in, and another cluster.
fn hiking_home_away(e: &Somna) -> (Vec<(i64, i64)>, i64, i64) {
    e.cluster(Some(3), &Job::default()).unwrap();
    let hiking: Vec<(i64, i64)> = e
        .cluster_assignments()
        .unwrap()
        .iter()
        .filter(|a| topic_of(&text(e, a.0)) == 0)
        .map(|a| (a.0, a.1))
        .collect();
    let home = hiking[0].1;
    let away = e
        .clusters()
        .unwrap()
        .into_iter()
        .find(|c| c.id != home)
        .unwrap()
        .id;
    (hiking, home, away)
}

#[test]
fn liquid_moves_relabel_the_clusters_they_change() {
    let f = topical_store(20);
    let e = &f.engine;
    let (hiking, home, away) = hiking_home_away(e);
    // Three strays (15% of the cluster) sit in the wrong cluster, and both labels are stale.
    let strays: Vec<i64> = hiking.iter().take(3).map(|h| h.0).collect();
    misplace(
        e,
        &strays,
        away,
        Some("UPDATE clusters SET label = 'stale'"),
    );
    let step = e
        .liquid_step(&somna_engine::LiquidParams::default())
        .unwrap();
    assert_eq!(step.moved.len(), 3, "{:?}", step.moved);
    let mut relabelled: Vec<i64> = step.relabelled.iter().map(|r| r.cluster_id).collect();
    relabelled.sort_unstable();
    let mut expected = vec![home, away];
    expected.sort_unstable();
    assert_eq!(relabelled, expected);
    for c in e.clusters().unwrap() {
        if c.id == home {
            assert!(
                c.label
                    .split(" · ")
                    .all(|t| t.split(' ').all(|w| TOPICS[0].contains(&w))),
                "{}",
                c.label
            );
        } else if c.id == away {
            assert_ne!(c.label, "stale");
        } else {
            // Untouched clusters keep their (stale) label: relabelling is per changed cluster.
            assert_eq!(c.label, "stale");
        }
    }
    // A step without moves relabels nothing.
    let quiet = e
        .liquid_step(&somna_engine::LiquidParams::default())
        .unwrap();
    assert!(quiet.moved.is_empty() && quiet.relabelled.is_empty());
}

#[test]
fn liquid_neighbour_lists_are_saved_beside_the_store_and_reused_after_a_restart() {
    let f = topical_store(20);
    let n = visible(&f.engine);
    f.engine.cluster(Some(3), &Job::default()).unwrap();
    let params = somna_engine::LiquidParams::default();
    assert_eq!(
        f.engine
            .liquid_step(&params)
            .unwrap()
            .reused_neighbour_lists,
        0
    );
    // Beside the store's file, or for a Postgres store its local caches' name.
    let mut file = f
        .engine
        .with_store(|s| Ok(s.path().as_os_str().to_owned()))
        .unwrap();
    file.push(".liquid");
    let file = std::path::PathBuf::from(file);
    assert!(file.exists());
    let crate::common::Fixture {
        engine,
        cfg,
        dir: _dir,
    } = f;
    drop(engine);

    // A restart reads them back.
    let e = open_hash(&cfg);
    assert_eq!(e.liquid_step(&params).unwrap().reused_neighbour_lists, n);
    drop(e);

    // Memories added since are searched for; the others are reused.
    let e = open_hash(&cfg);
    add_topical(&e, 2, 900);
    let step = e.liquid_step(&params).unwrap();
    assert_eq!(step.reused_neighbour_lists, n);
    assert_eq!(step.memories, n + 6);
    drop(e);

    // Lists made with another k, or a damaged file, are rebuilt.
    let e = open_hash(&cfg);
    let other = somna_engine::LiquidParams {
        neighbours: 5,
        ..params.clone()
    };
    assert_eq!(e.liquid_step(&other).unwrap().reused_neighbour_lists, 0);
    drop(e);
    std::fs::write(&file, b"damaged").unwrap();
    let e = open_hash(&cfg);
    assert_eq!(e.liquid_step(&params).unwrap().reused_neighbour_lists, 0);
}

#[test]
fn imports_keep_the_store_clustered() {
    use somna_engine::cluster::{ClusterUpkeep, AUTO_CLUSTER_MIN};
    let f = Fixture::hash();
    let e = &f.engine;
    // Too few memories: nothing is clustered.
    add_topical(e, 1, 0);
    assert_eq!(
        e.keep_clustered(&Job::default()).unwrap(),
        ClusterUpkeep::TooFew { memories: 3 }
    );
    assert!(e.clusters().unwrap().is_empty());
    // Enough: the first call clusters everything with the default k.
    add_topical(e, 10, 1);
    let n = visible(e);
    assert!(n >= AUTO_CLUSTER_MIN);
    match e.keep_clustered(&Job::default()).unwrap() {
        ClusterUpkeep::Clustered {
            k, n: clustered, ..
        } => {
            assert_eq!(k, (n / 10).clamp(8, 64).min(n));
            assert_eq!(clustered, n);
        }
        other => panic!("expected a full clustering, got {other:?}"),
    }
    assert_eq!(e.cluster_assignments().unwrap().len(), n);
    // Later imports join the existing clusters instead of replacing them.
    let ids = |e: &Somna| {
        let mut v: Vec<i64> = e.clusters().unwrap().iter().map(|c| c.id).collect();
        v.sort_unstable();
        v
    };
    let before = ids(e);
    add_topical(e, 2, 100);
    assert_eq!(
        e.keep_clustered(&Job::default()).unwrap(),
        ClusterUpkeep::Joined { memories: 6 }
    );
    assert_eq!(before, ids(e));
    assert_eq!(e.cluster_assignments().unwrap().len(), n + 6);
}

#[test]
fn the_upkeep_joins_what_arrived_here_or_from_another_process_and_first_what_any_left() {
    use somna_engine::cluster::ClusterUpkeep;
    let f = Fixture::hash();
    let e = &f.engine;
    let upkeep = |e: &Somna| e.keep_clustered(&Job::default()).unwrap();
    add_topical(e, 10, 0);
    assert!(matches!(upkeep(e), ClusterUpkeep::Clustered { .. }));
    // Another process adds memories and ends without keeping the store clustered: once
    // their vectors are in this process's index, its first join looks at the whole store
    // and places them.
    let other = open_hash(&f.cfg);
    add_topical(&other, 1, 100);
    drop(other);
    e.sync_external_changes().unwrap();
    assert_eq!(upkeep(e), ClusterUpkeep::Joined { memories: 3 });
    // From then on a join places what arrived: this process's own memories…
    add_topical(e, 1, 200);
    assert_eq!(upkeep(e), ClusterUpkeep::Joined { memories: 3 });
    assert_eq!(upkeep(e), ClusterUpkeep::Joined { memories: 0 });
    // …and another process's, once this one has caught up with its changes.
    let other = open_hash(&f.cfg);
    add_topical(&other, 2, 300);
    e.sync_external_changes().unwrap();
    assert_eq!(upkeep(e), ClusterUpkeep::Joined { memories: 6 });
    assert_eq!(e.cluster_assignments().unwrap().len(), visible(e));
}

#[test]
fn a_cluster_a_person_named_keeps_its_name_through_liquid_steps_and_undo_restores_the_old() {
    use somna_engine::curate::CurateAction;
    let f = topical_store(20);
    let e = &f.engine;
    let (hiking, home, away) = hiking_home_away(e);
    let before = e
        .clusters()
        .unwrap()
        .into_iter()
        .find(|c| c.id == home)
        .unwrap()
        .label;
    let rename = CurateAction::RelabelCluster {
        cluster: home,
        label: "Mountain walks".into(),
    };
    let preview = e
        .curate(
            &rename,
            true,
            "test",
            &somna_engine::sleep::Extractive::default(),
        )
        .unwrap();
    assert_eq!(preview.relabel.as_ref().unwrap().old, before);
    let label_of = |id: i64| {
        e.clusters()
            .unwrap()
            .into_iter()
            .find(|c| c.id == id)
            .unwrap()
            .label
    };
    assert_eq!(label_of(home), before, "a preview renames nothing");
    let done = e
        .curate(
            &rename,
            false,
            "test",
            &somna_engine::sleep::Extractive::default(),
        )
        .unwrap();
    assert_eq!(label_of(home), "Mountain walks");
    // The same strays as in the test above: both clusters change enough to be relabelled,
    // but the named one keeps its name.
    let strays: Vec<i64> = hiking.iter().take(3).map(|h| h.0).collect();
    let stale = format!("UPDATE clusters SET label = 'stale' WHERE id = {away}");
    misplace(e, &strays, away, Some(&stale));
    let step = e
        .liquid_step(&somna_engine::LiquidParams::default())
        .unwrap();
    assert_eq!(step.moved.len(), 3, "{:?}", step.moved);
    let relabelled: Vec<i64> = step.relabelled.iter().map(|r| r.cluster_id).collect();
    assert_eq!(
        relabelled,
        vec![away],
        "only the unnamed cluster is relabelled"
    );
    assert_eq!(label_of(home), "Mountain walks");
    assert_ne!(label_of(away), "stale");

    e.curate_undo(done.id.unwrap(), &Job::default()).unwrap();
    assert_eq!(label_of(home), before);
    let bad = e.curate(
        &CurateAction::RelabelCluster {
            cluster: 424_242,
            label: "x".into(),
        },
        false,
        "test",
        &somna_engine::sleep::Extractive::default(),
    );
    assert_eq!(bad.unwrap_err().code(), "invalid_input");
}

#[test]
fn memories_a_person_moved_stay_in_their_new_cluster_and_undo_puts_them_back() {
    use somna_engine::curate::CurateAction;
    let f = topical_store(20);
    let e = &f.engine;
    let (hiking, home, away) = hiking_home_away(e);
    let moved: Vec<i64> = hiking.iter().take(3).map(|h| h.0).collect();
    let extractive = somna_engine::sleep::Extractive::default();
    let done = e
        .curate(
            &CurateAction::MoveToCluster {
                ids: moved.clone(),
                cluster: away,
            },
            false,
            "test",
            &extractive,
        )
        .unwrap();
    assert_eq!(done.changed.len(), 3);
    let cluster_of = |id: i64| {
        e.cluster_assignments()
            .unwrap()
            .into_iter()
            .find(|a| a.0 == id)
            .unwrap()
            .1
    };
    // The same three strays a step pulls home when they got there by themselves (see
    // liquid_moves_relabel_the_clusters_they_change) stay where a person put them.
    for _ in 0..3 {
        let step = e
            .liquid_step(&somna_engine::LiquidParams::default())
            .unwrap();
        assert!(
            step.moved.iter().all(|m| !moved.contains(&m.memory_id)),
            "{:?}",
            step.moved
        );
    }
    for id in &moved {
        assert_eq!(cluster_of(*id), away);
    }
    e.curate_undo(done.id.unwrap(), &Job::default()).unwrap();
    for id in &moved {
        assert_eq!(cluster_of(*id), home);
    }
    let bad = e.curate(
        &CurateAction::MoveToCluster {
            ids: moved.clone(),
            cluster: 424_242,
        },
        false,
        "test",
        &extractive,
    );
    assert_eq!(bad.unwrap_err().code(), "invalid_input");
}

/// Puts memories `ids` in cluster `to` behind the engine's back (as a stale membership
/// would leave them), then runs `also` (a statement making labels stale), if any.
fn misplace(e: &Somna, ids: &[i64], to: i64, also: Option<&str>) {
    e.with_store(|s| {
        for id in ids {
            s.conn().execute(
                "UPDATE cluster_members SET cluster_id = ?2 WHERE memory_id = ?1",
                [*id, to],
            )?;
        }
        if let Some(sql) = also {
            s.conn().execute(sql, [])?;
        }
        Ok(())
    })
    .unwrap();
}
