//! `somna cluster`, `somna liquid`, `somna project`: concept clusters, the liquid loop and
//! 2D/3D layouts.

use crate::output::print_json;
use anyhow::Context;
use clap::{Args, ValueEnum};
use somna_api::sleep::Backend;
use somna_api::{Api, ClusterRequest, LayoutKey};
use somna_engine::{Job, LiquidParams, ProjectionMethod, ProjectionParams};
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct ClusterArgs {
    /// Number of clusters (default: min(max(8, n/10), 64)).
    #[arg(long)]
    k: Option<usize>,
    /// Member texts shown per cluster.
    #[arg(long, default_value_t = 3)]
    show: usize,
    /// Only the largest N clusters are listed.
    #[arg(long)]
    top: Option<usize>,
    /// Who names the clusters: "auto" (the LLM endpoint when one is set, else the
    /// extractive labels), "extractive" (noun phrases and entities by c-TF-IDF) or "chat".
    #[arg(long, default_value = "auto")]
    labels: String,
}

#[derive(Args)]
pub struct LiquidArgs {
    #[arg(long, default_value_t = 1)]
    steps: usize,
    #[arg(long)]
    flow_rate: Option<f32>,
    #[arg(long)]
    merge_threshold: Option<f32>,
    #[arg(long)]
    neighbours: Option<usize>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Method {
    Pca,
    Tsne,
    Umap,
}

#[derive(Args)]
pub struct ProjectArgs {
    #[arg(long, value_enum, default_value = "pca")]
    method: Method,
    #[arg(long, default_value_t = 3)]
    dims: usize,
    /// Write the layout (JSON) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Use the cached layout, placing new memories incrementally, instead of recomputing.
    #[arg(long)]
    cached: bool,
    /// t-SNE's perplexity (30).
    #[arg(long)]
    perplexity: Option<f64>,
    /// t-SNE gradient steps (1000) or UMAP epochs (umap-learn's: 500 up to 10K points,
    /// else 200).
    #[arg(long)]
    iterations: Option<usize>,
    /// t-SNE (3,000) and UMAP (1,000,000) lay out at most this many memories and place
    /// the others beside their nearest ones.
    #[arg(long)]
    landmarks: Option<usize>,
    #[arg(long)]
    seed: Option<u64>,
}

fn short(text: &str, max: usize) -> String {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() <= max {
        t
    } else {
        format!("{}…", t.chars().take(max).collect::<String>())
    }
}

pub fn cluster(api: &Api, args: ClusterArgs, job: &Job, json: bool) -> anyhow::Result<()> {
    let endpoint = || somna_api::llm::configured(&somna_engine::paths::data_dir());
    let backend = match args.labels.as_str() {
        "auto" => match endpoint()? {
            Some(c) => Backend::Chat(c),
            None => Backend::Extractive,
        },
        name => Backend::choose(Some(name), endpoint)?,
    };
    let report = api.cluster_with(&ClusterRequest { k: args.k }, &backend, job)?;
    let mut clusters = api.clusters()?;
    clusters.truncate(args.top.unwrap_or(usize::MAX));
    let mut listed = Vec::with_capacity(clusters.len());
    for c in &clusters {
        let ids = api.cluster_members(c.id, args.show)?;
        let texts: Vec<String> = ids
            .iter()
            .map(|id| api.get(*id).map(|d| d.memory.text))
            .collect::<Result<_, _>>()?;
        listed.push((c, texts));
    }
    if json {
        let clusters: Vec<_> = listed
            .iter()
            .map(|(c, texts)| serde_json::json!({"cluster": c, "sample": texts}))
            .collect();
        return print_json(&serde_json::json!({
            "k": report.k, "n": report.n, "inertia": report.inertia,
            "iterations": report.iterations, "millis": report.millis, "clusters": clusters,
            "named_by": report.named_by, "note": report.note,
        }));
    }
    out!(
        "{} memories in {} clusters (inertia {:.1}, {} iterations, {} ms)",
        report.n,
        report.k,
        report.inertia,
        report.iterations,
        report.millis
    );
    if let Some(by) = &report.named_by {
        out!("clusters named by {by}");
    }
    if let Some(note) = &report.note {
        out!("note: {note}");
    }
    for (c, texts) in listed {
        match &c.group {
            Some(g) => out!(
                "\n#{} {} ({} memories; group {}: {})",
                c.id,
                c.label,
                c.size,
                g.id,
                g.label
            ),
            None => out!("\n#{} {} ({} memories)", c.id, c.label, c.size),
        }
        for t in texts {
            out!("    {}", short(&t, 110));
        }
    }
    Ok(())
}

pub fn liquid(api: &Api, args: LiquidArgs, job: &Job, json: bool) -> anyhow::Result<()> {
    let defaults = LiquidParams::default();
    let params = LiquidParams {
        flow_rate: args.flow_rate.unwrap_or(defaults.flow_rate),
        merge_threshold: args.merge_threshold.unwrap_or(defaults.merge_threshold),
        neighbours: args.neighbours.unwrap_or(defaults.neighbours),
        ..defaults
    };
    let mut steps = Vec::with_capacity(args.steps);
    for _ in 0..args.steps {
        job.cancel.check()?;
        let s = api.liquid_step(&params, job)?;
        if !json {
            out!(
                "step {}: {} moved, {} merged, energy mean {:.3} max {:.3}, {} clusters, {} memories, {} ms{}",
                s.step,
                s.moved.len(),
                s.merged.len(),
                s.energy_mean,
                s.energy_max,
                s.clusters,
                s.memories,
                s.millis,
                if s.prepare_millis > 0 {
                    format!(
                        " (+{} ms building the neighbour cache, {} lists from the saved file)",
                        s.prepare_millis, s.reused_neighbour_lists
                    )
                } else {
                    String::new()
                }
            );
            for m in &s.merged {
                out!(
                    "    merged #{} into #{} (cosine {:.3})",
                    m.from_id,
                    m.into_id,
                    m.similarity
                );
            }
            for r in &s.relabelled {
                out!("    relabelled #{}: {}", r.cluster_id, r.label);
            }
        }
        steps.push(s);
    }
    if json {
        print_json(&steps)?;
    }
    Ok(())
}

pub fn project(api: &Api, args: ProjectArgs, job: &Job, json: bool) -> anyhow::Result<()> {
    let method = match args.method {
        Method::Pca => ProjectionMethod::Pca,
        Method::Tsne => ProjectionMethod::Tsne,
        Method::Umap => ProjectionMethod::Umap,
    };
    let d = ProjectionParams::new(method, args.dims);
    let params = ProjectionParams {
        perplexity: args.perplexity.unwrap_or(d.perplexity),
        iterations: args.iterations.unwrap_or(d.iterations),
        landmarks: args.landmarks.unwrap_or(d.landmarks),
        seed: args.seed.unwrap_or(d.seed),
        ..d
    };
    let started = Instant::now();
    let layout = if args.cached {
        api.cached_layout(
            LayoutKey {
                method,
                dims: args.dims,
            },
            job,
        )?
    } else {
        api.project(&params, job)?
    };
    let millis = started.elapsed().as_millis();
    match &args.out {
        Some(path) => {
            let f = std::fs::File::create(path)
                .with_context(|| format!("creating {}", path.display()))?;
            serde_json::to_writer(BufWriter::new(f), &layout)?;
        }
        None if json => print_json(&layout)?,
        None => {}
    }
    if !json {
        out!(
            "{} layout in {}D: {} memories ({} placed incrementally), {} ms{}",
            method.as_str(),
            layout.dims,
            layout.ids.len(),
            layout.placed_incrementally,
            millis,
            args.out
                .as_ref()
                .map(|p| format!(", written to {}", p.display()))
                .unwrap_or_default()
        );
    }
    Ok(())
}
