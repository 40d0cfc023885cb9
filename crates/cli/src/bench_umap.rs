//! `somna bench --only umap`: Somna's UMAP against umap-learn (run by
//! `scripts/peer_umap_bench.py` on the same vectors in the same run), at each size of
//! `--umap-sizes`. Somna runs with its defaults (every point laid out up to a million;
//! neighbours exact up to 20,000 points, by cells above), as umap-learn does (neighbours by
//! NN-descent). Quality is trustworthiness@10 of the first 10,000 points
//! of each layout (exact; all of them at 10K), computed the same way for both.

use crate::bench_cluster::Env;
use crate::bench_cmd::{f32_bytes, run_peer};
use serde::Serialize;
use somna_engine::bench::clustered_vectors;
use somna_engine::metrics::trustworthiness;
use somna_engine::project::umap::umap;
use somna_engine::{Job, ProjectionMethod, ProjectionParams};
use std::time::Instant;

const DIM: usize = 384;
/// Points trustworthiness is measured on (the first of each layout).
pub const SAMPLE: usize = 10_000;

#[derive(Debug, Serialize)]
pub struct UmapBench {
    pub n: usize,
    pub dims: usize,
    pub landmarks: usize,
    pub seconds: f64,
    /// Trustworthiness@10 of the first `SAMPLE` points.
    pub trustworthiness10: f64,
    pub peer: Option<serde_json::Value>,
}

/// UMAP into each of `dims` at each of `sizes` (with `landmarks`, else Somna's default),
/// Somna then the peer on the same vectors.
pub fn run(
    (sizes, dims, landmarks): (&[usize], &[usize], Option<usize>),
    env: &Env,
    job: &Job,
) -> anyhow::Result<Vec<UmapBench>> {
    let mut out = Vec::new();
    for &n in sizes {
        let x = clustered_vectors(n, DIM, (n / 100).max(10), 1.0, env.seed + 7);
        let data = env.tmp.join(format!("umap-{n}.f32"));
        std::fs::write(&data, f32_bytes(&x))?;
        let m = n.min(SAMPLE);
        for &d in dims {
            let defaults = ProjectionParams::new(ProjectionMethod::Umap, d);
            let params = ProjectionParams {
                landmarks: landmarks.unwrap_or(defaults.landmarks),
                ..defaults
            };
            eprintln!(
                "umap: {n} × {DIM} → {d}D ({} landmarks)",
                params.landmarks.min(n)
            );
            let t = Instant::now();
            let y = umap(&x, DIM, &params, job)?;
            let seconds = t.elapsed().as_secs_f64();
            let trust = trustworthiness(&x[..m * DIM], DIM, &y[..m * d], d, 10);
            eprintln!("  somna {seconds:.1} s, T@10 {trust:.4}");
            let peer = match env.peer_python {
                Some(py) => Some(run_peer(
                    py,
                    &env.scripts.join("peer_umap_bench.py"),
                    &[
                        "--data".as_ref(),
                        data.as_os_str(),
                        "--dims".as_ref(),
                        d.to_string().as_ref(),
                        "--sample".as_ref(),
                        m.to_string().as_ref(),
                    ],
                )?),
                None => None,
            };
            if let Some(p) = &peer {
                eprintln!("  peer: {p}");
            }
            out.push(UmapBench {
                n,
                dims: d,
                landmarks: params.landmarks.min(n),
                seconds,
                trustworthiness10: trust,
                peer,
            });
        }
        std::fs::remove_file(&data).ok();
    }
    Ok(out)
}

pub fn print(rows: &[UmapBench]) {
    if rows.is_empty() {
        return;
    }
    out!(
        "\nUMAP (n clustered unit vectors × {DIM}, n/100 clusters, per size; trustworthiness@10 \
         of the first {SAMPLE} points of each layout)"
    );
    for r in rows {
        let ps = r.peer.as_ref().and_then(|p| p["seconds"].as_f64());
        out!(
            "  UMAP {}→{}D ({} landmarks)  somna {:>7.1} s T@10 {:.4}{}",
            r.n,
            r.dims,
            r.landmarks,
            r.seconds,
            r.trustworthiness10,
            ps.map(|s| format!(
                "   umap-learn {s:.1} s T@10 {:.4} (first call {:.1} s)   ratio {:.2}×",
                r.peer.as_ref().unwrap()["trustworthiness10"]
                    .as_f64()
                    .unwrap_or(0.0),
                r.peer.as_ref().unwrap()["warmup_seconds"]
                    .as_f64()
                    .unwrap_or(0.0),
                r.seconds / s
            ))
            .unwrap_or_default()
        );
    }
}
