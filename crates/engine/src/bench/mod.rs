//! Benchmark building blocks, shared by `somna bench`: seeded synthetic data (sentences and
//! clustered unit vectors), exact ground truth, and measurements of the embedder, the ANN
//! index and the full search path. Everything is reproducible from its seed.

pub mod cluster;

use crate::embed::{dot, normalize, Embedder};
use crate::events::Job;
use crate::index::{IndexParams, VectorIndex};
use crate::Result;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

const PEOPLE: &[&str] = &[
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jules", "Kofi",
    "Lena", "Mateo", "Nadia", "Omar", "Priya",
];
const VERBS: &[&str] = &[
    "fixed",
    "reviewed",
    "deployed",
    "planned",
    "discussed",
    "cooked",
    "painted",
    "booked",
    "visited",
    "debugged",
    "wrote",
    "read",
    "repaired",
    "ordered",
    "tested",
    "cancelled",
];
const OBJECTS: &[&str] = &[
    "the login service",
    "a birthday dinner",
    "the Kafka consumer",
    "a trip to Lisbon",
    "the garden fence",
    "the quarterly report",
    "a pottery class",
    "the CI pipeline",
    "a flight to Tokyo",
    "the database migration",
    "a marathon training plan",
    "the kitchen sink",
    "a sourdough starter",
    "the HNSW index",
    "a job interview",
    "the tax return",
    "a piano lesson",
    "the Rust crate",
    "a camping weekend",
    "the memory leak",
];
const WHENS: &[&str] = &[
    "yesterday",
    "last Tuesday",
    "this morning",
    "in March",
    "two weeks ago",
    "on Friday night",
    "after lunch",
    "before the standup",
    "over the weekend",
    "at 3 pm",
];
const TAILS: &[&str] = &[
    "and it went better than expected.",
    "but we ran out of time.",
    "with help from a friend.",
    "and took notes for next time.",
    "because the deadline moved.",
    "after reading the docs twice.",
    "and everyone was happy.",
    "which cost more than planned.",
    "despite the rain.",
    "and found two more bugs.",
];

/// `n` varied, conversation-like sentences, reproducible from `seed`.
pub fn synthetic_sentences(n: usize, seed: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let pick =
                |rng: &mut ChaCha8Rng, xs: &[&str]| xs[rng.gen_range(0..xs.len())].to_string();
            let mut s = format!(
                "{} {} {} {} {}",
                pick(&mut rng, PEOPLE),
                pick(&mut rng, VERBS),
                pick(&mut rng, OBJECTS),
                pick(&mut rng, WHENS),
                pick(&mut rng, TAILS)
            );
            if rng.gen_bool(0.3) {
                s.push_str(&format!(" Ticket #{}.", 1000 + i));
            }
            s
        })
        .collect()
}

/// `n` unit vectors shaped like sentence embeddings: `clusters` centres in a
/// `LATENT_DIM`-dimensional space (points spread around them by `spread`), mapped into `dim`
/// dimensions by a fixed random linear map, plus a little isotropic noise, normalised.
/// Real embeddings have a low intrinsic dimension; isotropic noise in all 384 dimensions
/// would make every point of a cluster nearly equidistant, which no embedding model does.
/// Row-major. The map depends only on `dim` and `map_seed`, so data and queries drawn with
/// different seeds share it.
pub fn clustered_vectors(
    n: usize,
    dim: usize,
    clusters: usize,
    spread: f32,
    seed: u64,
) -> Vec<f32> {
    const LATENT_DIM: usize = 32;
    const NOISE: f32 = 0.05;
    let map_seed = 0x5eed;
    let gauss = |rng: &mut ChaCha8Rng| -> f32 {
        // Box-Muller
        let (u, v): (f32, f32) = (rng.gen_range(1e-7..1.0), rng.gen_range(0.0..1.0));
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    };
    let mut map_rng = ChaCha8Rng::seed_from_u64(map_seed);
    let map: Vec<f32> = (0..dim * LATENT_DIM).map(|_| gauss(&mut map_rng)).collect();
    let mut centre_rng = ChaCha8Rng::seed_from_u64(map_seed + clusters as u64);
    let centres: Vec<Vec<f32>> = (0..clusters)
        .map(|_| (0..LATENT_DIM).map(|_| gauss(&mut centre_rng)).collect())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let c = &centres[rng.gen_range(0..clusters)];
        let latent: Vec<f32> = c.iter().map(|x| x + spread * gauss(&mut rng)).collect();
        let mut v: Vec<f32> = (0..dim)
            .map(|d| {
                let row = &map[d * LATENT_DIM..(d + 1) * LATENT_DIM];
                dot(row, &latent) / (LATENT_DIM as f32).sqrt() + NOISE * gauss(&mut rng)
            })
            .collect();
        normalize(&mut v);
        out.extend_from_slice(&v);
    }
    out
}

/// Exact top-k ids (rows of `data`) for every query, by brute force in parallel.
pub fn exact_top_k(data: &[f32], queries: &[f32], dim: usize, k: usize) -> Vec<Vec<u32>> {
    queries
        .par_chunks(dim)
        .map(|q| {
            let mut scored: Vec<(u32, f32)> = data
                .chunks(dim)
                .enumerate()
                .map(|(i, v)| (i as u32, dot(q, v)))
                .collect();
            let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1);
            if scored.len() > k {
                scored.select_nth_unstable_by(k, cmp);
                scored.truncate(k);
            }
            scored.sort_by(cmp);
            scored.into_iter().map(|s| s.0).collect()
        })
        .collect()
}

/// Percentile of sorted `xs` (nearest rank).
pub fn percentile(xs: &mut [f64], p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbedResult {
    /// Cores the batch used (`RAYON_NUM_THREADS`, default all); single queries use one.
    pub threads: usize,
    pub sentences: usize,
    pub seconds: f64,
    pub sentences_per_sec: f64,
    pub single_query_ms_p50: f64,
    pub single_query_ms_p99: f64,
}

/// Throughput over `sentences` in one call (batched as the engine does), and the median
/// and 99th-percentile latency of 200 single-sentence embeddings.
pub fn bench_embed(embedder: &dyn Embedder, sentences: &[String]) -> Result<EmbedResult> {
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    embedder.embed(&refs[..refs.len().min(16)])?; // warm-up
    let t = Instant::now();
    embedder.embed(&refs)?;
    let seconds = t.elapsed().as_secs_f64();
    let mut singles = Vec::new();
    for s in refs.iter().cycle().take(200) {
        let t = Instant::now();
        embedder.embed_one(s)?;
        singles.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(EmbedResult {
        threads: candle_core::utils::get_num_threads(),
        sentences: refs.len(),
        seconds,
        sentences_per_sec: refs.len() as f64 / seconds,
        single_query_ms_p50: percentile(&mut singles.clone(), 0.5),
        single_query_ms_p99: percentile(&mut singles, 0.99),
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct EfResult {
    pub ef: usize,
    pub recall_at_10: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnnResult {
    pub n: usize,
    pub params: IndexParams,
    pub build_seconds: f64,
    /// What the index holds once built, and at most during the build, in MiB above the
    /// process's resident memory before it (Linux only).
    pub memory: Option<AnnMemory>,
    pub results: Vec<EfResult>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct AnnMemory {
    /// The vectors alone: n × dim × 4 bytes.
    pub raw_mib: f64,
    /// Resident memory added by building the index, measured after the build.
    pub index_mib: f64,
    /// The resident high-water mark during the build, above the memory before it.
    pub peak_mib: f64,
}

/// Resident memory and its high-water mark, in KiB (`/proc/self/status`; `None` where
/// there is none).
pub fn resident_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Sets the high-water mark back to the current resident memory (Linux's
/// `/proc/self/clear_refs` with 5); false where that is not possible.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Builds Somna's index over `data` and measures recall@10 against `truth` and single-query
/// latency at each ef (graph search, no exact shortcut).
pub fn bench_ann(
    data: &[f32],
    dim: usize,
    queries: &[f32],
    truth: &[Vec<u32>],
    params: IndexParams,
    efs: &[usize],
    job: &Job,
) -> Result<AnnResult> {
    let n = data.len() / dim;
    // From before the owned copy of the vectors the index is handed: an import hands it
    // one too, and memory it frees may stay resident.
    let before = resident_kib().filter(|_| reset_peak());
    let mut index = VectorIndex::new(dim, params, n);
    let items: Vec<(i64, Vec<f32>, i64)> = data
        .chunks(dim)
        .enumerate()
        .map(|(i, v)| (i as i64, v.to_vec(), i as i64 + 1))
        .collect();
    let t = Instant::now();
    index.insert_batch(items, job)?;
    let build_seconds = t.elapsed().as_secs_f64();
    let memory = before.zip(resident_kib()).map(|((rss0, _), (rss, peak))| {
        let mib = |kib: u64| kib as f64 / 1024.0;
        AnnMemory {
            raw_mib: (data.len() * 4) as f64 / (1024.0 * 1024.0),
            index_mib: mib(rss.saturating_sub(rss0)),
            peak_mib: mib(peak.saturating_sub(rss0)),
        }
    });
    let mut results = Vec::new();
    for &ef in efs {
        let mut lat = Vec::with_capacity(truth.len());
        let mut found = 0usize;
        for (q, gold) in queries.chunks(dim).zip(truth) {
            let t = Instant::now();
            let hits = index.search_graph(q, 10, ef);
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
            found += hits.iter().filter(|h| gold.contains(&(h.0 as u32))).count();
        }
        results.push(EfResult {
            ef,
            recall_at_10: found as f64 / (10 * truth.len()) as f64,
            p50_ms: percentile(&mut lat.clone(), 0.5),
            p99_ms: percentile(&mut lat, 0.99),
        });
    }
    Ok(AnnResult {
        n,
        params,
        build_seconds,
        memory,
        results,
    })
}

/// Query strings for search benchmarks: a mix of natural questions, keyword and identifier
/// queries drawn from the synthetic vocabulary.
pub fn synthetic_queries(n: usize, seed: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let who = PEOPLE.choose(&mut rng).expect("people");
            let what = OBJECTS.choose(&mut rng).expect("objects");
            match i % 3 {
                0 => format!("What did {who} do with {what}?"),
                1 => what
                    .trim_start_matches("the ")
                    .trim_start_matches("a ")
                    .to_string(),
                _ => format!("ticket #{} {who}", 1000 + rng.gen_range(0..n * 10)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_data_is_reproducible() {
        assert_eq!(synthetic_sentences(5, 1), synthetic_sentences(5, 1));
        assert_ne!(synthetic_sentences(5, 1), synthetic_sentences(5, 2));
        let v = clustered_vectors(10, 8, 2, 0.5, 3);
        assert_eq!(v, clustered_vectors(10, 8, 2, 0.5, 3));
        for row in v.chunks(8) {
            assert!((dot(row, row) - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn exact_truth_puts_a_point_first_for_itself() {
        let v = clustered_vectors(50, 8, 3, 0.5, 4);
        let t = exact_top_k(&v, &v[8 * 7..8 * 8], 8, 3);
        assert_eq!(t[0][0], 7);
    }

    #[test]
    fn ann_bench_reports_high_recall_on_easy_data() {
        let dim = 16;
        let data = clustered_vectors(2000, dim, 10, 1.0, 5);
        let queries = clustered_vectors(20, dim, 10, 1.0, 6);
        let truth = exact_top_k(&data, &queries, dim, 10);
        let r = bench_ann(
            &data,
            dim,
            &queries,
            &truth,
            IndexParams::default(),
            &[64],
            &Job::default(),
        )
        .unwrap();
        assert!(r.results[0].recall_at_10 > 0.9, "{:?}", r.results);
    }
}
