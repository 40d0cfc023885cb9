//! Causal links extracted at ingest and the causal route that walks them.

use crate::common::*;
use somna_engine::memory::LinkKind;
use somna_engine::{AddOptions, Route, SearchQuery, Somna};

/// (src, dst, score) of every causal link.
fn causal_links(engine: &Somna) -> Vec<(i64, i64, f64)> {
    engine
        .with_store(|s| {
            Ok(s.read()
                .all_links()?
                .into_iter()
                .filter(|l| l.kind == LinkKind::Causal)
                .map(|l| (l.src, l.dst, l.score))
                .collect())
        })
        .unwrap()
}

fn turns() -> Vec<somna_engine::Message> {
    let t = |mi| ts(2023, 9, 1, 10, mi);
    vec![
        msg_at(
            "Ada",
            "I got laid off from the bakery last week.",
            "s1",
            t(0),
        ),
        msg_at("Bo", "Oh no, I'm so sorry to hear that.", "s1", t(1)),
        msg_at(
            "Ada",
            "I'm so happy the weather is nice today though.",
            "s1",
            t(2),
        ),
        msg_at("Bo", "Have you been painting lately?", "s1", t(3)),
        msg_at(
            "Ada",
            "I'm moving back to my parents' house because I lost my job at the bakery.",
            "s1",
            t(4),
        ),
        msg_at("Bo", "As a result, I'll visit you more often.", "s1", t(5)),
    ]
}

#[test]
fn causal_cues_link_the_effect_to_its_cause() {
    let f = Fixture::real();
    let rep = f
        .engine
        .add("ada-bo", &turns(), &AddOptions::default())
        .unwrap();
    let e = &rep.episodes;
    let links = causal_links(&f.engine);
    let pairs: Vec<(i64, i64)> = links.iter().map(|l| (l.0, l.1)).collect();
    // "because I lost my job at the bakery" → the earlier lay-off turn, found by similarity.
    assert!(pairs.contains(&(e[4], e[0])), "{links:?}");
    // "As a result, …" → the turn before.
    assert!(pairs.contains(&(e[5], e[4])), "{links:?}");
    // "so sorry", "so happy" and questions are not causal.
    assert_eq!(pairs.len(), 2, "{links:?}");
    assert_eq!(rep.causal_links, 2);
    assert!(links.iter().all(|l| l.2 > 0.0 && l.2 <= 1.0));
}

#[test]
fn the_causal_route_reaches_causes_through_the_links() {
    let f = Fixture::real();
    let rep = f
        .engine
        .add("ada-bo", &turns(), &AddOptions::default())
        .unwrap();
    let cause = rep.episodes[0];
    let q = SearchQuery {
        recency_from: Some(ts(2023, 9, 2, 0, 0)),
        ..SearchQuery::new("Why is Ada moving back to her parents' house?")
    };
    let r = f.engine.search_readonly(&q).unwrap();
    assert_eq!(r.route, Route::Causal, "{}", r.route_reason);
    let hit = r
        .hits
        .iter()
        .find(|h| h.memory.id == cause)
        .expect("the cause is retrieved");
    assert!(
        hit.signals.graph >= 1.0,
        "reached at depth 1: {:?}",
        hit.signals
    );
    // The hybrid route walks the one hop too; the pattern route walks none.
    let routed = |route| {
        f.engine
            .search_readonly(&SearchQuery {
                route: Some(route),
                ..q.clone()
            })
            .unwrap()
    };
    let hybrid = routed(Route::Hybrid);
    let hybrid_hit = hybrid.hits.iter().find(|h| h.memory.id == cause);
    assert!(hybrid_hit.is_some_and(|h| h.signals.graph >= 1.0));
    let plain = routed(Route::Pattern);
    let plain_hit = plain.hits.iter().find(|h| h.memory.id == cause);
    assert!(plain_hit.is_none_or(|h| h.signals.graph == 0.0));
}
