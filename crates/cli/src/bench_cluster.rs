//! `somna bench --only pca,tsne,umap,kmeans,stability,liquid`: projection and clustering
//! against linfa and the Python peers (scikit-learn PCA / TSNE / MiniBatchKMeans, openTSNE,
//! run by `scripts/peer_cluster_bench.py` on the same vectors in the same run; umap-learn in
//! bench_umap.rs), layout stability, and liquid-loop step times on stores.

use crate::bench_cmd::{f32_bytes, run_peer};
use crate::output::Bar;
use clap::Args;
use serde::Serialize;
use somna_engine::bench::cluster::{
    bench_kmeans, bench_pca, bench_stability, bench_tsne, KMeansBench, PcaBench, StabilityBench,
    TsneBench,
};
use somna_engine::bench::{clustered_vectors, percentile};
use somna_engine::{Config, Job, LiquidParams, ProjectionMethod, ProjectionParams, Somna};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIM: usize = 384;

#[derive(Args)]
pub struct ClusterBenchArgs {
    /// Vectors for PCA and k-means.
    #[arg(long, default_value_t = 100_000)]
    cluster_n: usize,
    /// Points for t-SNE and the stability test.
    #[arg(long, default_value_t = 10_000)]
    tsne_n: usize,
    /// Points Somna's t-SNE lays out itself, placing the rest beside them (default: all of
    /// them, as the peers do); the app's default is 3,000. Trustworthiness is of the first
    /// 10,000 points either way.
    #[arg(long)]
    tsne_landmarks: Option<usize>,
    #[arg(long, default_value_t = 1000)]
    tsne_iterations: usize,
    /// t-SNE output dimensions to run (Somna and the peer: 3 is scikit-learn, 2 openTSNE).
    #[arg(long, value_delimiter = ',', default_value = "3,2")]
    tsne_dims: Vec<usize>,
    #[arg(long, default_value_t = 50)]
    kmeans_k: usize,
    /// Points for the linfa KMeans comparison (0: skip; linfa is slow).
    #[arg(long, default_value_t = 20_000)]
    linfa_kmeans_n: usize,
    /// Also time linfa-reduction's Pca.
    #[arg(long)]
    linfa_pca: bool,
    /// Stores (SQLite files, with their .index beside them) to time liquid steps on; each is
    /// copied to a temporary directory first.
    #[arg(long, value_delimiter = ',')]
    liquid_dbs: Vec<PathBuf>,
    #[arg(long, default_value_t = 5)]
    liquid_steps: usize,
    /// Points for UMAP (each size with its own vectors; Somna's default landmarks).
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    umap_sizes: Vec<usize>,
    /// UMAP output dimensions.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    umap_dims: Vec<usize>,
    /// UMAP landmarks (default: Somna's, 1,000,000); fewer than n places the rest.
    #[arg(long)]
    umap_landmarks: Option<usize>,
    /// Also write the generated vectors here (f32 LE, row-major), e.g. to run the peer alone.
    #[arg(long)]
    cluster_data_out: Option<PathBuf>,
}

pub struct Env<'a> {
    pub peer_python: Option<&'a Path>,
    pub scripts: &'a Path,
    pub seed: u64,
    pub model_dir: &'a Path,
    pub tmp: &'a Path,
    pub json: bool,
}

#[derive(Serialize, Default)]
pub struct ClusterReport {
    pub data: String,
    pub pca: Option<PcaBench>,
    pub tsne3: Option<TsneBench>,
    pub tsne2: Option<TsneBench>,
    pub umap: Vec<crate::bench_umap::UmapBench>,
    pub kmeans: Option<KMeansBench>,
    pub stability: Vec<StabilityBench>,
    pub liquid: Vec<LiquidBench>,
    pub peer: Option<serde_json::Value>,
}

#[derive(Serialize)]
pub struct LiquidBench {
    pub memories: usize,
    pub clusters: usize,
    pub cluster_seconds: f64,
    /// First step, including the neighbour-cache build.
    pub first_step_ms: f64,
    pub neighbour_build_ms: f64,
    pub warm_steps: usize,
    pub warm_p50_ms: f64,
    pub warm_max_ms: f64,
}

/// Runs the clustering and projection benchmarks `has` selects, each as a step, on one set
/// of clustered vectors; `None` when none is selected.
pub fn run(
    args: &ClusterBenchArgs,
    has: &dyn Fn(&str) -> bool,
    env: Env,
) -> anyhow::Result<Option<ClusterReport>> {
    let sections = ["pca", "tsne", "umap", "kmeans", "stability", "liquid"];
    if !sections.iter().any(|s| has(s)) {
        return Ok(None);
    }
    let mut r = ClusterReport::default();
    if ["pca", "tsne", "kmeans", "stability"]
        .iter()
        .any(|s| has(s))
        || args.cluster_data_out.is_some()
    {
        shared_vector_steps(args, has, &env, &mut r)?;
    }
    if has("umap") {
        let (j, bar) = job("umap", &env);
        let shape = (
            &args.umap_sizes[..],
            &args.umap_dims[..],
            args.umap_landmarks,
        );
        r.umap = crate::bench_umap::run(shape, &env, &j)?;
        bar.finish();
    }
    if has("liquid") {
        for db in &args.liquid_dbs {
            r.liquid.push(liquid(db, args, &env)?);
        }
    }
    Ok(Some(r))
}

/// PCA, t-SNE, k-means and stability (and their Python peer) on one set of clustered
/// vectors: `cluster_n` of them, t-SNE on the first `tsne_n`.
fn shared_vector_steps(
    args: &ClusterBenchArgs,
    has: &dyn Fn(&str) -> bool,
    env: &Env,
    r: &mut ClusterReport,
) -> anyhow::Result<()> {
    let n = args.cluster_n.max(args.tsne_n);
    let x = clustered_vectors(n, DIM, (n / 100).max(10), 1.0, env.seed + 7);
    r.data = format!(
        "{n} clustered unit vectors × {DIM} ({} clusters, benchmark generator, seed {})",
        (n / 100).max(10),
        env.seed + 7
    );
    if let Some(path) = &args.cluster_data_out {
        std::fs::write(path, f32_bytes(&x))?;
    }
    let xs = &x[..args.cluster_n * DIM];
    let xt = &x[..args.tsne_n * DIM];
    if has("pca") {
        eprintln!("pca: {} × {DIM} → 3", args.cluster_n);
        r.pca = Some(bench_pca(xs, DIM, 3, args.linfa_pca)?);
        eprintln!("  {:?}", r.pca);
    }
    if has("tsne") {
        tsne_step(args, env, xt, r)?;
    }
    if has("kmeans") {
        eprintln!("k-means: k = {} on {}", args.kmeans_k, args.cluster_n);
        r.kmeans = Some(bench_kmeans(xs, DIM, args.kmeans_k, args.linfa_kmeans_n)?);
        eprintln!("  {:?}", r.kmeans);
    }
    if has("stability") {
        stability_step(args, env, xt, r)?;
    }
    if let (Some(py), true) = (env.peer_python, has("pca") || has("tsne") || has("kmeans")) {
        // Both are prefixes of the same vectors: the peer takes its t-SNE points from the front.
        let longer = if xs.len() >= xt.len() { xs } else { xt };
        let target = r.kmeans.as_ref().map(|k| k.somna.inertia);
        r.peer = Some(peer_step(args, env, has, py, longer, target)?);
        eprintln!(
            "  peer: {}",
            r.peer.as_ref().map(|p| p.to_string()).unwrap_or_default()
        );
    }
    Ok(())
}

/// A job reporting to a progress bar labelled `label`.
fn job(label: &'static str, env: &Env) -> (Job, Arc<Bar>) {
    let bar = Arc::new(Bar::new(label, env.json));
    (
        Job {
            progress: bar.clone(),
            cancel: Default::default(),
        },
        bar,
    )
}

/// t-SNE of the first `tsne_n` points into each dimension asked for.
fn tsne_step(
    args: &ClusterBenchArgs,
    env: &Env,
    xt: &[f32],
    r: &mut ClusterReport,
) -> anyhow::Result<()> {
    for dims in [3, 2].into_iter().filter(|d| args.tsne_dims.contains(d)) {
        eprintln!(
            "t-SNE: {} points → {dims}D, {} iterations",
            args.tsne_n, args.tsne_iterations
        );
        let (j, bar) = job("tsne", env);
        let landmarks = args.tsne_landmarks.unwrap_or(args.tsne_n);
        let t = bench_tsne(xt, DIM, dims, 30.0, (args.tsne_iterations, landmarks), &j)?;
        bar.finish();
        eprintln!("  {t:?}");
        if dims == 3 {
            r.tsne3 = Some(t);
        } else {
            r.tsne2 = Some(t);
        }
    }
    Ok(())
}

/// How far points move when the projection is recomputed, for PCA and t-SNE.
fn stability_step(
    args: &ClusterBenchArgs,
    env: &Env,
    xt: &[f32],
    r: &mut ClusterReport,
) -> anyhow::Result<()> {
    let methods = [
        ProjectionMethod::Pca,
        ProjectionMethod::Tsne,
        ProjectionMethod::Umap,
    ];
    for method in methods {
        let defaults = ProjectionParams::new(method, 3);
        let params = match method {
            // UMAP lays out every point, with its own epochs.
            ProjectionMethod::Umap => defaults,
            _ => ProjectionParams {
                landmarks: 2000,
                iterations: args.tsne_iterations.min(750),
                ..defaults
            },
        };
        eprintln!("stability: {} of {} points", method.as_str(), args.tsne_n);
        let (j, bar) = job("stability", env);
        let s = bench_stability(xt, DIM, &params, &j)?;
        bar.finish();
        eprintln!("  {s:?}");
        r.stability.push(s);
    }
    Ok(())
}

/// The Python peer (scikit-learn, openTSNE) on the same vectors and selection.
fn peer_step(
    args: &ClusterBenchArgs,
    env: &Env,
    has: &dyn Fn(&str) -> bool,
    py: &Path,
    vectors: &[f32],
    target_inertia: Option<f64>,
) -> anyhow::Result<serde_json::Value> {
    let data = env.tmp.join("cluster.f32");
    std::fs::write(&data, f32_bytes(vectors))?;
    let only: Vec<&str> = ["pca", "tsne", "kmeans"]
        .into_iter()
        .filter(|s| has(s))
        .collect();
    let (tn, it, k) = (
        args.tsne_n.to_string(),
        args.tsne_iterations.to_string(),
        args.kmeans_k.to_string(),
    );
    // The peer's k-means is also timed to the inertia Somna's reached (0: not run).
    let target = target_inertia.unwrap_or(0.0).to_string();
    let mut only = only.join(",");
    // The peer script reads "tsne" as both; "tsne2" / "tsne3" as one of them.
    if has("tsne") && args.tsne_dims.len() == 1 {
        only = only.replace("tsne", &format!("tsne{}", args.tsne_dims[0]));
    }
    run_peer(
        py,
        &env.scripts.join("peer_cluster_bench.py"),
        &[
            "--data".as_ref(),
            data.as_os_str(),
            "--only".as_ref(),
            only.as_ref(),
            "--tsne-n".as_ref(),
            tn.as_ref(),
            "--iterations".as_ref(),
            it.as_ref(),
            "--k".as_ref(),
            k.as_ref(),
            "--kmeans-target-inertia".as_ref(),
            target.as_ref(),
        ],
    )
}

fn liquid(db: &Path, args: &ClusterBenchArgs, env: &Env) -> anyhow::Result<LiquidBench> {
    let dir = env.tmp.join(format!(
        "liquid-{}",
        db.file_name().and_then(|f| f.to_str()).unwrap_or("db")
    ));
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join("somna.db");
    crate::bench_cmd::copy_store(db, &copy)?;
    let engine = Somna::open(&Config::new(&copy, env.model_dir), &Job::default())?;
    let t = std::time::Instant::now();
    let report = engine.cluster(None, &Job::default())?;
    let cluster_seconds = t.elapsed().as_secs_f64();
    eprintln!(
        "liquid: {} memories, {} clusters in {cluster_seconds:.1} s",
        report.n, report.k
    );
    let params = LiquidParams::default();
    let t = std::time::Instant::now();
    let first = engine.liquid_step(&params)?;
    let first_step_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut warm = Vec::new();
    for _ in 0..args.liquid_steps {
        let t = std::time::Instant::now();
        let s = engine.liquid_step(&params)?;
        warm.push(t.elapsed().as_secs_f64() * 1e3);
        eprintln!(
            "  step {}: {} moved, {} merged, {:.1} ms",
            s.step,
            s.moved.len(),
            s.merged.len(),
            warm[warm.len() - 1]
        );
    }
    let max = warm.iter().copied().fold(0.0, f64::max);
    Ok(LiquidBench {
        memories: report.n,
        clusters: report.k,
        cluster_seconds,
        first_step_ms,
        neighbour_build_ms: first.prepare_millis as f64,
        warm_steps: warm.len(),
        warm_p50_ms: percentile(&mut warm, 0.5),
        warm_max_ms: max,
    })
}

pub fn print(r: &ClusterReport) {
    if !r.data.is_empty() {
        out!("\nclustering and projection ({})", r.data);
    }
    let peer = r.peer.clone().unwrap_or_default();
    if let Some(p) = &r.pca {
        let ps = peer["pca"]["seconds"].as_f64();
        out!(
            "  PCA {}×{DIM}→3     somna {:>7.2} s (median of {:.2?}){}{}   EVR {:?}",
            p.n,
            p.seconds,
            p.runs,
            p.linfa_seconds
                .map(|l| format!("   linfa {l:.2} s"))
                .unwrap_or_default(),
            ps.map(|s| format!(
                "   sklearn {s:.2} s (median of 3, solver {})   ratio {:.2}×",
                peer["pca"]["solver"].as_str().unwrap_or("?"),
                p.seconds / s
            ))
            .unwrap_or_default(),
            p.explained_variance_ratio
        );
    }
    let tsne_peers: [(&Option<TsneBench>, &[&str]); 2] = [
        (&r.tsne3, &["tsne3_opentsne", "tsne3_sklearn"]),
        (&r.tsne2, &["tsne2_opentsne"]),
    ];
    for (t, keys) in tsne_peers {
        if let Some(t) = t {
            let placed = if t.landmarks < t.n {
                format!(" ({} landmarks)", t.landmarks)
            } else {
                String::new()
            };
            let peers: String = keys
                .iter()
                .filter_map(|key| {
                    let s = peer[key]["seconds"].as_f64()?;
                    Some(format!(
                        "   {key} {s:.1} s T@10 {:.4}   ratio {:.2}×",
                        peer[key]["trustworthiness10"].as_f64().unwrap_or(0.0),
                        t.seconds / s
                    ))
                })
                .collect();
            out!(
                "  t-SNE {}→{}D{placed}        somna {:>7.1} s T@10 {:.4}{peers}",
                t.n,
                t.dims,
                t.seconds,
                t.trustworthiness10,
            );
        }
    }
    crate::bench_umap::print(&r.umap);
    if let Some(k) = &r.kmeans {
        let ps = peer["minibatch_kmeans"]["seconds"].as_f64();
        out!(
            "  k-means k={} n={}  somna {:>7.2} s inertia {:.1} ({} iterations){}",
            k.somna.k,
            k.somna.n,
            k.somna.seconds,
            k.somna.inertia,
            k.somna.iterations,
            ps.map(|s| format!(
                "   MiniBatchKMeans {s:.2} s inertia {:.1}   ratio {:.2}×",
                peer["minibatch_kmeans"]["inertia"].as_f64().unwrap_or(0.0),
                k.somna.seconds / s
            ))
            .unwrap_or_default()
        );
        let eq = &peer["kmeans_equal_inertia"];
        if let Some(s) = eq["seconds"].as_f64() {
            out!(
                "  k-means at equal inertia: somna {:.2} s   sklearn KMeans (lloyd, one start) {s:.2} s inertia {:.1} ({} iterations{})   ratio {:.2}×;  sklearn to convergence {:.2} s inertia {:.1} ({} iterations)",
                k.somna.seconds,
                eq["inertia"].as_f64().unwrap_or(0.0),
                eq["iterations"],
                if eq["reached"].as_bool() == Some(true) { "" } else { ", never reached" },
                k.somna.seconds / s,
                peer["kmeans"]["seconds"].as_f64().unwrap_or(0.0),
                peer["kmeans"]["inertia"].as_f64().unwrap_or(0.0),
                peer["kmeans"]["iterations"]
            );
        }
        if let (Some(o), Some(l)) = (&k.same_n_somna, &k.linfa) {
            out!(
                "  k-means k={} n={} (20 it.) somna {:.2} s inertia {:.1}   linfa {:.2} s inertia {:.1}   ratio {:.2}×",
                o.k, o.n, o.seconds, o.inertia, l.seconds, l.inertia, o.seconds / l.seconds
            );
        }
    }
    for s in &r.stability {
        out!(
            "  stability {} (+{} to {}): median movement / extent: incremental {:.4}, recompute + Procrustes {:.4}, naive recompute {:.4}",
            s.method.as_str(),
            s.added,
            s.old,
            s.incremental,
            s.recompute_aligned,
            s.recompute_naive
        );
    }
    for l in &r.liquid {
        out!(
            "  liquid {} memories, {} clusters: warm step p50 {:.1} ms (max {:.1}), first step {:.0} ms (neighbour cache {:.0} ms), clustering {:.1} s",
            l.memories, l.clusters, l.warm_p50_ms, l.warm_max_ms, l.first_step_ms, l.neighbour_build_ms, l.cluster_seconds
        );
    }
}
