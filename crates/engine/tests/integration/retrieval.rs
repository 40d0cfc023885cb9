//! Retrieval with the real model over the sample conversation: ranking, signals, packing,
//! connected bubbles, routes, score modes, filters and access accounting.

use crate::common::*;
use somna_engine::memory::LinkKind;
use somna_engine::retrieve::{Budget, Hit, Origin, SearchResponse};
use somna_engine::{
    AddOptions, AddReport, Kind, MemoryFilter, Route, ScoreMode, SearchQuery, Somna,
};
use std::collections::{BTreeSet, HashSet};

/// Measuring recency from a fixed time keeps every score reproducible.
fn as_of() -> i64 {
    ts(2023, 7, 1, 0, 0)
}

fn loaded() -> (Fixture, AddReport) {
    loaded_in(Fixture::real())
}

fn loaded_in(f: Fixture) -> (Fixture, AddReport) {
    let rep = f
        .engine
        .add(CONVERSATION, &sample_conversation(), &AddOptions::default())
        .unwrap();
    assert_eq!(rep.episodes.len(), 12);
    // Unrelated material in another conversation, so scoping has something to exclude.
    let other = [
        msg_at(
            "Carol",
            "My golden retriever Bella loves swimming in the lake.",
            "x",
            ts(2023, 6, 1, 10, 0),
        ),
        msg_at(
            "Dan",
            "I am a pastry chef too, croissants are my speciality.",
            "x",
            ts(2023, 6, 1, 10, 5),
        ),
    ];
    f.engine
        .add("carol-dan", &other, &AddOptions::default())
        .unwrap();
    (f, rep)
}

fn query(text: &str) -> SearchQuery {
    SearchQuery {
        recency_from: Some(as_of()),
        ..SearchQuery::new(text)
    }
}

fn scoped(text: &str) -> SearchQuery {
    let mut q = query(text);
    q.filter.conversation = Some(CONVERSATION.into());
    q
}

fn search(engine: &Somna, q: &SearchQuery) -> SearchResponse {
    engine.search_readonly(q).unwrap()
}

/// The turn's bubble and the facts derived from it.
fn answers(engine: &Somna, rep: &AddReport, turn: usize) -> HashSet<i64> {
    let bubble = rep.episodes[turn];
    let mut out = HashSet::from([bubble]);
    for &fact in &rep.facts_added {
        if engine
            .get(fact)
            .unwrap()
            .links
            .iter()
            .any(|l| l.kind == LinkKind::DerivedFrom && l.dst == bubble)
        {
            out.insert(fact);
        }
    }
    out
}

#[test]
fn paraphrased_questions_find_the_right_turn_first() {
    // "… the child of Bob …": the lexical stage searches without Bob's name, or his short
    // pastry-chef fact, which names him, ranks first on BM25 alone.
    let (f, rep) = loaded_in(Fixture::real());
    let cases = [
        (
            "Where are Alice and her sister going hiking?",
            turn::DOLOMITES,
        ),
        (
            "What musical instrument is the child of Bob learning?",
            turn::VIOLIN,
        ),
        ("Where is the birthday dinner going to be?", turn::BIRTHDAY),
        ("What does Bob do for work?", turn::PASTRY_CHEF),
        ("In which city does Alice live?", turn::LISBON),
        ("What kind of dog did Alice adopt?", turn::PUPPY),
    ];
    for (question, turn) in cases {
        let r = search(&f.engine, &scoped(question));
        let want = answers(&f.engine, &rep, turn);
        let got = &r.hits[0].memory;
        assert!(
            want.contains(&got.id),
            "{question:?}: first hit {:?} ({:?}), expected turn {turn}",
            got.text,
            got.kind
        );
        assert!(r
            .hits
            .iter()
            .all(|h| h.memory.conversation.as_deref() == Some(CONVERSATION)));
    }
}

/// Every signal within [0, 1] and a finite positive score.
fn check_signals(h: &Hit) {
    let s = &h.signals;
    for (name, v) in [
        ("semantic", s.semantic),
        ("lexical", s.lexical),
        ("recency", s.recency),
        ("actor", s.actor),
        ("spatial", s.spatial),
        ("usage", s.usage),
        ("neighbour", s.neighbour),
        ("graph", s.graph),
    ] {
        assert!(
            (0.0..=1.0).contains(&v),
            "signal {name} = {v} for memory {}",
            h.memory.id
        );
    }
    assert!(h.score.is_finite() && h.score > 0.0, "score {}", h.score);
}

/// A hit above the cut: signals as above, plus MMR and tokens.
fn check_hit(h: &Hit, engine: &Somna) {
    check_signals(h);
    assert!(h.rank.is_some() && h.mmr_rank.is_some());
    assert!(h.mmr_score.is_some_and(f64::is_finite));
    assert!(h.tokens > 0);
    assert_eq!(h.tokens, engine.embedder().count_tokens(&h.memory.text));
}

#[test]
fn a_possessive_does_not_match_unrelated_contractions() {
    // Lexical matching must come from words the texts share: "Carol's umbrella" shares
    // nothing with "Let's go to the cinema tonight." but the query token `s` matches the
    // `s` the tokenizer splits off "Let's".
    let f = Fixture::hash();
    let opts = AddOptions {
        extract_facts: false,
        ..Default::default()
    };
    let ids = f
        .engine
        .add(
            "c",
            &[
                msg("Ann", "Let's go to the cinema tonight."),
                msg("Ann", "The umbrella is in the hall."),
            ],
            &opts,
        )
        .unwrap()
        .episodes;
    let r = search(&f.engine, &query("Carol's umbrella"));
    assert_eq!(r.hits[0].memory.id, ids[1]);
    let cinema = r
        .hits
        .iter()
        .find(|h| h.memory.id == ids[0])
        .expect("both memories are candidates");
    assert_eq!(
        cinema.signals.lexical, 0.0,
        "\"Carol's umbrella\" matched \"Let's go to the cinema\" lexically"
    );
}

#[test]
fn every_hit_carries_signals_scores_and_tokens() {
    let (f, _) = loaded();
    for q in [
        "When did Alice adopt her puppy?",
        "parse_config",
        "🐶",
        "Lisbon tram office",
    ] {
        let r = search(&f.engine, &query(q));
        assert!(!r.hits.is_empty(), "{q:?}");
        for h in &r.hits {
            check_hit(h, &f.engine);
        }
        let ranks: Vec<usize> = r.hits.iter().map(|h| h.rank.unwrap()).collect();
        assert_eq!(ranks, (1..=r.hits.len()).collect::<Vec<_>>());
        assert!(
            r.hits.windows(2).all(|w| w[0].score >= w[1].score),
            "hits are best first"
        );
        let mut mmr: Vec<usize> = r.hits.iter().map(|h| h.mmr_rank.unwrap()).collect();
        mmr.sort();
        assert_eq!(mmr, ranks, "MMR ranks are a permutation of the hits");
    }
}

#[test]
fn the_adjacent_turn_signal_stays_within_0_1() {
    let (f, rep) = loaded();
    // Verbatim a question turn: the reply to it gets the strongest adjacent-turn evidence.
    let r = search(
        &f.engine,
        &query("Congratulations! How is the little guy settling in at home?"),
    );
    let reply = rep.episodes[turn::PUPPY_AGAIN];
    assert!(
        r.hits.iter().any(|h| h.memory.id == reply),
        "the reply is a hit"
    );
    for h in &r.hits {
        check_hit(h, &f.engine);
    }
    for h in &r.near_misses {
        check_signals(h);
    }
}

fn packed(r: &SearchResponse) -> Vec<&Hit> {
    r.hits.iter().filter(|h| h.packed).collect()
}

#[test]
fn packing_respects_the_token_budget() {
    let (f, _) = loaded();
    let roomy = search(
        &f.engine,
        &query("What are Alice and Bob planning together?"),
    );
    assert_eq!(roomy.budget_tokens, Budget::default().available());
    let tiny_budget = Budget {
        window: 600,
        system_reserve: 512,
        output_reserve: 0,
        conversation_tokens: 0,
    };
    let tiny = search(
        &f.engine,
        &SearchQuery {
            budget: tiny_budget,
            ..query("What are Alice and Bob planning together?")
        },
    );
    assert_eq!(tiny.budget_tokens, 88);
    for r in [&roomy, &tiny] {
        let p = packed(r);
        let sum: usize = p.iter().map(|h| h.tokens).sum();
        assert!(
            sum <= r.budget_tokens,
            "{sum} tokens packed into {}",
            r.budget_tokens
        );
        assert_eq!(r.used_tokens, sum);
        let ctx: BTreeSet<i64> = r.context.iter().copied().collect();
        assert_eq!(ctx, p.iter().map(|h| h.memory.id).collect::<BTreeSet<_>>());
        assert_eq!(ctx.len(), r.context.len());
        let attention: f64 = p
            .iter()
            .map(|h| h.attention.expect("packed hits have attention"))
            .sum();
        assert!((attention - 1.0).abs() < 1e-9);
        assert!(r
            .hits
            .iter()
            .filter(|h| !h.packed)
            .all(|h| h.attention.is_none()));
        // Context order is MMR order.
        let order: Vec<usize> = r
            .context
            .iter()
            .map(|id| {
                r.hits
                    .iter()
                    .find(|h| h.memory.id == *id)
                    .unwrap()
                    .mmr_rank
                    .unwrap()
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }
    assert_eq!(
        packed(&roomy).len(),
        roomy.hits.len(),
        "a roomy budget packs every hit"
    );
    assert!(!packed(&tiny).is_empty(), "88 tokens fit at least one turn");
    assert!(packed(&tiny).len() < packed(&roomy).len());
    let zero = search(
        &f.engine,
        &SearchQuery {
            budget: Budget {
                conversation_tokens: 1 << 20,
                ..Budget::default()
            },
            ..query("puppy")
        },
    );
    assert!(zero.context.is_empty() && zero.used_tokens == 0 && zero.budget_tokens == 0);
}

#[test]
fn connected_bubbles_come_from_strong_links_with_score_zero() {
    let (f, rep) = loaded();
    // The two puppy turns are near-duplicates, so ingestion linked them.
    let puppy = rep.episodes[turn::PUPPY];
    let links = f.engine.get(puppy).unwrap().links;
    assert!(
        links
            .iter()
            .any(|l| l.kind == LinkKind::Similar && l.dst == rep.episodes[turn::PUPPY_AGAIN]),
        "{links:?}"
    );
    let mut q = scoped("Alice adopted a golden retriever puppy named Max");
    q.k = 1;
    let r = search(&f.engine, &q);
    assert_eq!(r.hits.len(), 1);
    assert!(
        !r.connected.is_empty(),
        "no connected bubbles for hit {:?}",
        r.hits[0].memory.text
    );
    let hit_ids: HashSet<i64> = r.hits.iter().map(|h| h.memory.id).collect();
    let mut expected = BTreeSet::new();
    for h in &r.hits {
        for l in f.engine.get(h.memory.id).unwrap().links {
            if l.kind == LinkKind::Similar && l.src == h.memory.id && !hit_ids.contains(&l.dst) {
                assert!(l.score >= 0.6, "a similar link below the threshold: {l:?}");
                expected.insert(l.dst);
            }
        }
    }
    let got: BTreeSet<i64> = r.connected.iter().map(|c| c.memory.id).collect();
    assert_eq!(got, expected);
    for c in &r.connected {
        assert_eq!(c.score, 0.0);
        assert_eq!(c.rank, None);
        assert_eq!(c.origin, Origin::Connected);
        assert!(!c.packed);
    }
}

#[test]
fn the_router_picks_pattern_for_identifiers_and_hybrid_for_questions() {
    let (f, rep) = loaded();
    let r = search(&f.engine, &query("parse_config"));
    assert_eq!(r.route, Route::Pattern, "{}", r.route_reason);
    assert_eq!(r.hits[0].memory.id, rep.episodes[turn::PARSE_CONFIG]);
    assert!(r.hits[0].signals.lexical > 0.0);
    let r = search(
        &f.engine,
        &query("Which mountains is Alice going hiking in this summer?"),
    );
    assert_eq!(r.route, Route::Hybrid, "{}", r.route_reason);
    let r = search(&f.engine, &query("🐕🐕"));
    assert_eq!(r.route, Route::Direct, "{}", r.route_reason);
}

#[test]
fn a_file_path_in_the_query_raises_the_spatial_signal() {
    let (f, rep) = loaded();
    let r = search(
        &f.engine,
        &query("what went wrong in /etc/somna/config.toml"),
    );
    let target = rep.episodes[turn::PARSE_CONFIG];
    let hit = r
        .hits
        .iter()
        .find(|h| h.memory.id == target)
        .expect("the config turn is found");
    assert_eq!(
        hit.memory.w5h1.where_.as_deref(),
        Some("/etc/somna/config.toml")
    );
    assert_eq!(hit.signals.spatial, 1.0);
    assert_eq!(r.hits[0].memory.id, target);
}

#[test]
fn forcing_the_direct_route_ignores_lexical_matches() {
    let (f, _) = loaded();
    for text in [
        "parse_config",
        "Dolomites mountain huts",
        "When is the birthday dinner?",
    ] {
        let r = search(
            &f.engine,
            &SearchQuery {
                route: Some(Route::Direct),
                ..query(text)
            },
        );
        assert_eq!(r.route, Route::Direct);
        assert_eq!(r.weights.lexical, 0.0);
        assert!(!r.hits.is_empty());
        for h in r.hits.iter().chain(&r.near_misses) {
            assert_eq!(h.signals.lexical, 0.0, "{text:?}: memory {}", h.memory.id);
            assert_ne!(h.origin, Origin::Lexical);
        }
    }
}

#[test]
fn context_mode_scores_semantic_times_importance_times_recency() {
    let (f, _) = loaded();
    let q = SearchQuery {
        mode: ScoreMode::Context,
        k: 20,
        ..query("What did Bob bake for the puppy?")
    };
    let r = search(&f.engine, &q);
    assert_eq!(r.mode, ScoreMode::Context);
    assert!(r.hits.len() > 5);
    for h in r.hits.iter().chain(&r.near_misses) {
        let m = &h.memory;
        let recency = match m.kind {
            Kind::Fact => 1.0,
            _ => {
                let t = m.occurred_at.unwrap_or(m.created_at);
                let age_days = ((as_of() - t) as f64 / 86_400_000.0).max(0.0);
                (-0.05 * age_days).exp()
            }
        };
        let expected = h.signals.semantic * m.importance * recency;
        assert!(
            (h.score - expected).abs() < 1e-9,
            "memory {}: score {} expected {expected}",
            m.id,
            h.score
        );
    }
}

#[test]
fn filters_by_kind_speaker_and_time_are_honoured() {
    let (f, rep) = loaded();
    let all_of = |r: &SearchResponse| -> Vec<somna_engine::Memory> {
        r.hits
            .iter()
            .chain(&r.connected)
            .chain(&r.near_misses)
            .map(|h| h.memory.clone())
            .collect()
    };

    let mut q = query("Where does Alice live and what does Bob do?");
    q.filter.kinds = vec![Kind::Fact];
    let got = all_of(&search(&f.engine, &q));
    assert!(!got.is_empty());
    assert!(got.iter().all(|m| m.kind == Kind::Fact));
    assert!(got.iter().any(|m| rep.facts_added.contains(&m.id)));

    let mut q = query("What did they talk about?");
    q.filter.who = Some("bob".into());
    let got = all_of(&search(&f.engine, &q));
    assert!(!got.is_empty());
    assert!(
        got.iter().all(|m| m.w5h1.who.as_deref() == Some("Bob")),
        "{got:?}"
    );

    let (from, to) = (ts(2023, 6, 20, 0, 0), ts(2023, 6, 20, 23, 59));
    let mut q = query("golden retriever puppy Max");
    q.filter = MemoryFilter {
        from: Some(from),
        to: Some(to),
        ..Default::default()
    };
    let got = all_of(&search(&f.engine, &q));
    assert!(!got.is_empty());
    assert!(
        got.iter()
            .all(|m| m.occurred_at.is_some_and(|t| (from..=to).contains(&t))),
        "{got:?}"
    );
    assert!(got.iter().all(|m| m.id != rep.episodes[turn::PUPPY]));

    let mut q = query("golden retriever");
    q.filter.conversation = Some("carol-dan".into());
    assert!(all_of(&search(&f.engine, &q))
        .iter()
        .all(|m| m.conversation.as_deref() == Some("carol-dan")));
}

#[test]
fn search_counts_access_and_co_access_but_search_readonly_does_not() {
    let (f, _) = loaded();
    let q = SearchQuery {
        k: 3,
        ..scoped("Tell me about the puppy Max")
    };
    let co_access = |a: i64, b: i64| {
        f.engine
            .with_store(|s| s.read().co_access_count(a, b))
            .unwrap()
    };
    let access = |id: i64| f.engine.get(id).unwrap().memory;

    let r = f.engine.search_readonly(&q).unwrap();
    let ids: Vec<i64> = r.hits.iter().map(|h| h.memory.id).collect();
    assert_eq!(ids.len(), 3);
    for &id in &ids {
        assert_eq!(
            (access(id).access_count, access(id).last_accessed),
            (0, None)
        );
    }
    assert_eq!(co_access(ids[0], ids[1]), 0);

    let r = f.engine.search(&q).unwrap();
    let ids: Vec<i64> = r.hits.iter().map(|h| h.memory.id).collect();
    for &id in &ids {
        let m = access(id);
        assert_eq!(m.access_count, 1, "memory {id}");
        assert!(m.last_accessed.is_some());
    }
    for (i, &a) in ids.iter().enumerate() {
        for &b in &ids[i + 1..] {
            assert_eq!(co_access(a, b), 1);
            assert_eq!(co_access(b, a), 1, "co-access is symmetric");
        }
    }
    // Connected bubbles and near misses were not "returned", so they were not counted.
    for h in r.connected.iter().chain(&r.near_misses) {
        assert_eq!(access(h.memory.id).access_count, 0);
    }
    f.engine.search_readonly(&q).unwrap();
    assert!(ids.iter().all(|&id| access(id).access_count == 1));
    f.engine.search(&SearchQuery { k: 3, ..q }).unwrap();
    assert_eq!(co_access(ids[0], ids[1]), 2);
}

#[test]
fn a_wide_search_counts_co_access_among_its_best_hits_only() {
    // 250 memories that all match the query, with the fast hashing embedder.
    let f = Fixture::hash();
    let msgs: Vec<_> = (0..250)
        .map(|i| {
            msg(
                "Ann",
                &format!("lighthouse note number {i} about the harbour"),
            )
        })
        .collect();
    let opts = AddOptions {
        extract_facts: false,
        ..AddOptions::default()
    };
    f.engine.add("c1", &msgs, &opts).unwrap();
    let r = f
        .engine
        .search(&SearchQuery {
            k: 200,
            ..query("lighthouse note about the harbour")
        })
        .unwrap();
    assert_eq!(r.hits.len(), 200);
    let ids: Vec<i64> = r.hits.iter().map(|h| h.memory.id).collect();
    let pairs = f.engine.with_store(|s| s.read().all_co_access()).unwrap();
    // k(k−1)/2 = 19,900 pairs before; now the pairs of the best 10 hits: 45.
    let top = somna_engine::store::CO_ACCESS_TOP_HITS;
    assert_eq!(pairs.len(), top * (top - 1) / 2);
    let best: HashSet<i64> = ids[..top].iter().copied().collect();
    assert!(pairs
        .iter()
        .all(|p| best.contains(&p.a) && best.contains(&p.b) && p.count == 1));
    // Every hit still counts as accessed (liquid energies read access counts).
    for id in ids {
        assert_eq!(f.engine.get(id).unwrap().memory.access_count, 1, "{id}");
    }
}
