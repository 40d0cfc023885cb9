//! Cluster labels on real data: the bundled demo (assets/demo/) and the LoCoMo dev set
//! (`shared/data/locomo-dev.json` beside the repository, never copied into it), clustered
//! with the real model. Every label word must be outside the most common English words,
//! labels must be unique, and with more than 20 clusters every cluster is in a labelled
//! group.

use crate::common::Fixture;
use somna_engine::cluster::groups::GROUP_ABOVE;
use somna_engine::cluster::labels::common_words_in;
use somna_engine::ingest::ImportFormat;
use somna_engine::{Job, Somna};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The LoCoMo dev set: `SOMNA_LOCOMO_DEV`, or `shared/data/locomo-dev.json` in a folder
/// above the repository (where the workspace and CI keep it).
fn locomo_dev() -> PathBuf {
    if let Ok(p) = std::env::var("SOMNA_LOCOMO_DEV") {
        return PathBuf::from(p);
    }
    let root = repo_root().canonicalize().expect("the repository root");
    root.ancestors()
        .map(|a| a.join("shared/data/locomo-dev.json"))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "the LoCoMo dev set is not in shared/data/ above {} (set SOMNA_LOCOMO_DEV)",
                root.display()
            )
        })
}

/// Clusters the store (default k) and checks every label; returns the labels.
fn check_labels(e: &Somna, what: &str) -> Vec<String> {
    let report = e.cluster(None, &Job::default()).unwrap();
    let clusters = e.clusters().unwrap();
    assert_eq!(clusters.len(), report.k);
    let mut seen = HashSet::new();
    let mut bad = Vec::new();
    for c in &clusters {
        eprintln!(
            "{what}: {:>4}  {}{}",
            c.size,
            c.label,
            c.group
                .as_ref()
                .map(|g| format!("   [group {}: {}]", g.id, g.label))
                .unwrap_or_default()
        );
        assert!(!c.label.trim().is_empty(), "cluster {} has no label", c.id);
        assert!(
            seen.insert(c.label.clone()),
            "two clusters are {:?}",
            c.label
        );
        let common = common_words_in(&c.label);
        if !common.is_empty() {
            bad.push(format!("{:?}: {common:?}", c.label));
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: labels with common English words: {bad:?}"
    );
    // More than 20 clusters: every cluster is in a group; groups are labelled the same way.
    if clusters.len() > GROUP_ABOVE {
        let mut groups: HashMap<i64, (String, usize)> = HashMap::new();
        for c in &clusters {
            let g = c.group.as_ref().expect("every cluster is grouped");
            groups.entry(g.id).or_insert((g.label.clone(), 0)).1 += 1;
        }
        assert!(
            groups.len() >= 3 && groups.len() < clusters.len(),
            "{groups:?}"
        );
        let labels: HashSet<&String> = groups.values().map(|g| &g.0).collect();
        assert_eq!(
            labels.len(),
            groups.len(),
            "group labels are unique: {groups:?}"
        );
        for (label, _) in groups.values() {
            assert!(common_words_in(label).is_empty(), "group {label:?}");
        }
    } else {
        assert!(clusters.iter().all(|c| c.group.is_none()));
    }
    clusters.into_iter().map(|c| c.label).collect()
}

#[test]
fn demo_labels_have_no_common_english_words_and_are_unique() {
    let f = Fixture::real();
    let demo = repo_root().join("assets/demo/demo.jsonl");
    f.engine
        .import_file(&demo, ImportFormat::ChatJsonl, &Job::default())
        .unwrap();
    let labels = check_labels(&f.engine, "demo");
    // Some of the demo's recurring topics show up by name.
    let all = labels.join(" | ").to_lowercase();
    for topic in ["marathon", "beagle", "bouldering", "choir"] {
        assert!(all.contains(topic), "no label names {topic}: {all}");
    }
}

/// Not in the default run: the LoCoMo dev set is evaluation-only data kept beside the
/// repository, not in it, so a clean clone (CI's) has no copy. Run it with
/// `cargo test --workspace --all-targets -- --ignored locomo_dev_labels`
/// (or with `SOMNA_LOCOMO_DEV` naming the file).
#[test]
#[ignore = "needs the LoCoMo dev set beside the repository (evaluation-only data)"]
fn locomo_dev_labels_have_no_common_english_words_and_are_unique() {
    let f = Fixture::real();
    f.engine
        .import_file(&locomo_dev(), ImportFormat::Locomo, &Job::default())
        .unwrap();
    check_labels(&f.engine, "locomo-dev");
}
