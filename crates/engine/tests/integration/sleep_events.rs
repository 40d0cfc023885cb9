//! A memory's sleep history (what each cycle did to it), found through the reports' JSON in
//! SQL, against a scan of every full report.

use crate::sleep::{fixture, options};
use somna_engine::points::MemorySleepEvent;
use somna_engine::{Job, ListQuery, MemoryFilter, SleepConfig, SleepOptions, State};

/// The events of memory `id`, from every report read in full (what the engine did before).
fn scanned(
    engine: &somna_engine::Somna,
    id: i64,
) -> Vec<(i64, String, Option<String>, Option<i64>)> {
    let mut out = Vec::new();
    for r in engine.sleep_history(200).unwrap() {
        let cycle = r.id.unwrap();
        for c in r.changed.iter().filter(|c| c.memory_id == id) {
            out.push((cycle, "changed".into(), Some(c.field.clone()), None));
        }
        if r.forgotten.contains(&id) {
            out.push((cycle, "forgotten".into(), None, None));
        }
        for p in r.created.iter().filter(|p| p.derived_from.contains(&id)) {
            out.push((cycle, "consolidated".into(), None, p.id));
        }
    }
    out
}

fn key(e: &MemorySleepEvent) -> (i64, String, Option<String>, Option<i64>) {
    (e.cycle, e.event.clone(), e.field.clone(), e.created)
}

#[test]
fn a_memorys_sleep_history_matches_the_full_reports() {
    let f = fixture();
    let e = &f.engine;
    e.sleep(&options(), &Job::default()).unwrap();
    // A second cycle a year later decays and forgets more.
    let later = SleepOptions {
        config: SleepConfig {
            now_ms: Some(options().config.now_ms.unwrap() + 365 * 86_400_000),
            ..options().config
        },
        ..options()
    };
    e.sleep(&later, &Job::default()).unwrap();
    let all = e
        .list(&ListQuery {
            filter: MemoryFilter {
                states: State::ALL.to_vec(),
                include_deleted: true,
                ..Default::default()
            },
            limit: 10_000,
            ..Default::default()
        })
        .unwrap()
        .memories;
    let mut seen = std::collections::HashSet::new();
    for m in &all {
        let fast: Vec<_> = e
            .memory_sleep_history(m.id, 200)
            .unwrap()
            .iter()
            .map(key)
            .collect();
        assert_eq!(fast, scanned(e, m.id), "memory {}", m.id);
        seen.extend(fast.into_iter().map(|k| k.1));
    }
    for event in ["changed", "forgotten", "consolidated"] {
        assert!(seen.contains(event), "no {event} event in {seen:?}");
    }
    // The limit counts cycles, newest first: with 1, only the latest cycle's events.
    let newest = e.sleep_history(1).unwrap()[0].id.unwrap();
    let mut older_only = 0;
    for m in &all {
        let expected: Vec<_> = scanned(e, m.id)
            .into_iter()
            .filter(|k| k.0 == newest)
            .collect();
        let got: Vec<_> = e
            .memory_sleep_history(m.id, 1)
            .unwrap()
            .iter()
            .map(key)
            .collect();
        if got.is_empty() && !scanned(e, m.id).is_empty() {
            older_only += 1;
        }
        assert_eq!(got, expected, "memory {} with limit 1", m.id);
    }
    assert!(
        older_only > 0,
        "some memory should only have events in the older cycle"
    );
}
