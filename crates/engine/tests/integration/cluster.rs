//! Projection, concept clusters and the liquid loop through the engine's API, on the
//! hashing embedder (texts that share words get similar vectors).

use crate::common::{msg, Fixture};
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
