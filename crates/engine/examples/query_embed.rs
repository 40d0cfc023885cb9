//! Single-query embedding latency under the four thread arrangements a search can use:
//! candle's matrix products on every core or on one, each alone or beside a busy thread
//! (the lexical search runs beside the query embedding). Prints p50/p99 in ms.
//!
//!     cargo run -p somna-engine --example query_embed -- [MODEL_DIR] [QUERIES]

use somna_engine::embed::{BertEmbedder, Embedder, ModelDir};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> somna_engine::Result<()> {
    somna_engine::embed::pin_thread_count();
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(somna_engine::paths::model_dir);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(300);
    let model = BertEmbedder::load(&ModelDir(dir))?;
    let queries = somna_engine::bench::synthetic_queries(n, 7);
    for q in queries.iter().take(20) {
        model.embed(&[q])?; // warm-up
    }
    for (name, single, busy) in [
        ("all cores", false, false),
        ("one core", true, false),
        ("all cores, busy neighbour", false, true),
        ("one core, busy neighbour", true, true),
    ] {
        let stop = AtomicBool::new(false);
        let times = std::thread::scope(|s| {
            if busy {
                // Bursts like a lexical search: ~7 ms of work, then a short pause.
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        let mut x = 0u64;
                        while t.elapsed() < Duration::from_millis(7) {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        }
                        std::hint::black_box(x);
                        std::thread::sleep(Duration::from_millis(3));
                    }
                });
            }
            let mut times = Vec::with_capacity(n);
            for q in &queries {
                let t = Instant::now();
                if single {
                    // What `embed_one` (the search path) does.
                    model.embed_one(q)?;
                } else {
                    model.embed(&[q])?;
                }
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            stop.store(true, Ordering::Relaxed);
            Ok::<_, somna_engine::Error>(times)
        })?;
        let mut sorted = times;
        sorted.sort_by(f64::total_cmp);
        println!(
            "{name:<28} p50 {:6.2} ms  p99 {:6.2} ms",
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.99)
        );
    }
    Ok(())
}
