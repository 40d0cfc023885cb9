//! The candle BERT embedder against sentence-transformers' all-MiniLM-L6-v2: the reference
//! vectors in tests/data/parity_reference.json were made by scripts/make_parity_reference.py.

use crate::common::bert;
use serde::Deserialize;
use somna_engine::embed::{dot, BertEmbedder, Embedder, EncoderKind, ModelDir, MAX_TOKENS};
use somna_engine::paths;

#[derive(Deserialize)]
struct Reference {
    max_seq_length: usize,
    items: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    text: String,
    embedding: Vec<f32>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/parity_reference.json"
    );
    let text = std::fs::read_to_string(path).expect("read the parity reference");
    let r: Reference = serde_json::from_str(&text).expect("parse the parity reference");
    assert!(
        r.items.len() >= 20,
        "the reference should cover many kinds of text"
    );
    r
}

/// Cosine similarity, accumulated in f64 so values near 1 are not rounded to 1.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let d = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .map(|(p, q)| *p as f64 * *q as f64)
            .sum::<f64>()
    };
    d(a, b) / (d(a, a).sqrt() * d(b, b).sqrt())
}

fn texts(r: &Reference) -> Vec<&str> {
    r.items.iter().map(|i| i.text.as_str()).collect()
}

#[test]
fn batch_embeddings_match_sentence_transformers() {
    let r = reference();
    // One call for every text: mixed lengths exercise sorting, batching and padding.
    let got = bert().embed(&texts(&r)).unwrap();
    assert_eq!(got.len(), r.items.len());
    let mut min = (f64::INFINITY, "");
    for (item, v) in r.items.iter().zip(&got) {
        assert_eq!(v.len(), item.embedding.len());
        let c = cosine(v, &item.embedding);
        if c < min.0 {
            min = (c, item.text.as_str());
        }
        assert!(c >= 0.9999, "cosine {c} for {:?}", item.text);
    }
    println!(
        "parity: min cosine {:.9} (1 - min = {:.1e}) over {} texts (worst: {:?})",
        min.0,
        1.0 - min.0,
        got.len(),
        min.1
    );
}

/// A search's query is embedded on the single-query path, in plain bf16 where the products
/// run on AMX or AVX-512 BF16: it must still meet the parity bar against sentence-transformers, and stay
/// that close to the stored vector of the same text.
#[test]
fn query_embeddings_match_sentence_transformers() {
    let r = reference();
    let e = bert();
    let stored = e.embed(&texts(&r)).unwrap();
    let mut min = (f64::INFINITY, "");
    for (item, s) in r.items.iter().zip(&stored) {
        let q = e.embed_one(&item.text).unwrap();
        assert_eq!(q.len(), item.embedding.len());
        let c = cosine(&q, &item.embedding);
        if c < min.0 {
            min = (c, item.text.as_str());
        }
        assert!(c >= 0.9999, "query cosine {c} for {:?}", item.text);
        let c = cosine(&q, s);
        assert!(
            c >= 0.9999,
            "query and stored vector differ: cosine {c} for {:?}",
            item.text
        );
    }
    println!(
        "query parity ({}): min cosine {:.9} (1 - min = {:.1e}) over {} texts (worst: {:?})",
        match (
            somna_engine::embed::products_on_amx(),
            somna_engine::embed::products_in_bf16(),
        ) {
            (true, _) => "bf16 on AMX",
            (false, true) => "bf16 on AVX-512",
            (false, false) => "f32",
        },
        min.0,
        1.0 - min.0,
        r.items.len(),
        min.1
    );
}

#[test]
fn one_by_one_embeddings_equal_the_batch() {
    let r = reference();
    let e = bert();
    let batch = e.embed(&texts(&r)).unwrap();
    for (item, b) in r.items.iter().zip(&batch) {
        let single = e.embed(&[item.text.as_str()]).unwrap().remove(0);
        let c = cosine(&single, b);
        assert!(
            c >= 0.99999,
            "padding changed the vector of {:?}: cosine {c}",
            item.text
        );
    }
}

/// More texts than one batch: the batches run side by side, one per core, and every vector
/// must come back in its own text's place.
#[test]
fn batches_run_side_by_side_and_keep_each_text_in_its_place() {
    let r = reference();
    let e = bert();
    let texts: Vec<String> = (0..4)
        .flat_map(|round| {
            r.items
                .iter()
                .map(move |item| format!("{} (round {round})", item.text))
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert!(refs.len() > 2 * somna_engine::embed::BATCH_SIZE);
    let all = e.embed(&refs).unwrap();
    assert_eq!(all.len(), refs.len());
    for (text, v) in refs.iter().zip(&all) {
        // The same text alone, at the stored vectors' precision (a query's is lower: see
        // `query_embeddings_match_sentence_transformers`).
        let single = e.embed(&[text]).unwrap().remove(0);
        let c = cosine(&single, v);
        assert!(
            c >= 0.99999,
            "{text:?} got another text's vector: cosine {c}"
        );
    }
}

#[test]
fn vectors_have_unit_norm_and_384_dimensions() {
    let r = reference();
    let e = bert();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2");
    for (item, v) in r.items.iter().zip(e.embed(&texts(&r)).unwrap()) {
        assert_eq!(v.len(), 384);
        let norm = dot(&v, &v).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm} for {:?}", item.text);
    }
    assert!(e.embed(&[]).unwrap().is_empty());
}

#[test]
fn token_counts_are_not_truncated() {
    let r = reference();
    assert_eq!(r.max_seq_length, MAX_TOKENS);
    let e = bert();
    let longest = r.items.iter().max_by_key(|i| i.text.len()).unwrap();
    let n = e.count_tokens(&longest.text);
    assert!(
        n > MAX_TOKENS,
        "count_tokens gave {n} for a {}-byte text",
        longest.text.len()
    );
    assert_eq!(e.count_tokens("Hello"), 1);
    // Counting follows the text, embedding stops at MAX_TOKENS: a longer tail leaves the
    // vector unchanged but the count grows.
    let longer = format!("{} and then some more words at the very end", longest.text);
    assert!(e.count_tokens(&longer) > n);
    let v = e.embed(&[longest.text.as_str(), longer.as_str()]).unwrap();
    assert!(
        cosine(&v[0], &v[1]) > 0.99999,
        "text past the 256th token changed the vector"
    );
}

#[test]
fn somna_encoder_equals_candle_transformers_bert() {
    // The default encoder is Somna's own (weights stored for the matmul); candle-transformers'
    // BertModel computes the same function. In f32 or with AMX's split products the two
    // agree to 1e-6; with AVX-512 BF16's plain bf16 products (8 bits) to the bar the vectors
    // are held to against sentence-transformers', 1e-4 (`batch_embeddings_match_…`).
    let plain_bf16 =
        somna_engine::embed::products_in_bf16() && !somna_engine::embed::products_on_amx();
    let bar = if plain_bf16 { 0.9999 } else { 0.999999 };
    let r = reference();
    let reference_model = BertEmbedder::load_with(
        &ModelDir(paths::model_dir()),
        EncoderKind::CandleTransformers,
    )
    .unwrap();
    let ours = bert().embed(&texts(&r)).unwrap();
    let theirs = reference_model.embed(&texts(&r)).unwrap();
    for ((item, a), b) in r.items.iter().zip(&ours).zip(&theirs) {
        let c = cosine(a, b);
        assert!(c >= bar, "encoders differ on {:?}: cosine {c}", item.text);
    }
}
