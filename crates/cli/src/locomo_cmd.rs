//! `somna eval locomo`: retrieval recall on LoCoMo-format conversations, on the whole file
//! or leave-one-conversation-out (`--folds`, with `--grid` constants chosen per fold), and
//! each route against the others on the questions the router gives it (`--routes`).

use crate::output::{print_json, scores_row};
use anyhow::Context;
use clap::Args;
use somna_engine::embed::{BertEmbedder, CachedEmbedder, Embedder, ModelDir};
use somna_engine::eval::folds::{self, FoldReport, Grid, Objective, Outcome};
use somna_engine::eval::locomo::{self, Gold, Question, Scores};
use somna_engine::{Config, Job, Route, SearchQuery, Somna};
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Args)]
pub struct LocomoArgs {
    #[arg(long)]
    data: PathBuf,
    /// Write one JSON line of ranked dia ids per question (the grid's first point).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the imported store here (reused if it exists) instead of a temporary one.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Embeddings of texts seen before are read from this file instead of being computed
    /// again (made if missing): a re-import after a change to ingestion takes seconds.
    #[arg(long)]
    embed_cache: Option<PathBuf>,
    /// Leave one conversation out: constants are chosen on the others, scored on it.
    #[arg(long)]
    folds: bool,
    /// A retrieval constant and the values to try, NAME=V1,V2,… (repeatable; needs --folds).
    #[arg(long, requires = "folds")]
    grid: Vec<String>,
    /// What each fold chooses by: r10 or r10+all10.
    #[arg(long, default_value = "r10")]
    objective: String,
    /// Also rank every question with each route forced, and show each route against the
    /// others on the questions the router gives it.
    #[arg(long)]
    routes: bool,
}

fn open(args: &LocomoArgs, db: &Path, model_dir: &Path) -> anyhow::Result<Somna> {
    let bert: Arc<dyn Embedder> = Arc::new(BertEmbedder::load(&ModelDir(model_dir.into()))?);
    let embedder: Arc<dyn Embedder> = match &args.embed_cache {
        Some(p) => Arc::new(
            CachedEmbedder::open(bert, p)
                .with_context(|| format!("opening the embedding cache {}", p.display()))?,
        ),
        None => bert,
    };
    Ok(Somna::open_with(
        &Config::new(db, model_dir),
        embedder,
        &Job::default(),
    )?)
}

/// Ranks every question with `template`'s constants.
fn run_all(
    engine: &Somna,
    questions: &[(Question, Gold)],
    template: &SearchQuery,
    job: &Job,
    done: &mut u64,
    total: u64,
    latencies: &mut Vec<f64>,
) -> anyhow::Result<Vec<Outcome>> {
    let mut out = Vec::with_capacity(questions.len());
    for (q, gold) in questions {
        job.cancel.check()?;
        let r = locomo::rank_with(engine, q, 60, template)?;
        latencies.push(r.ms);
        out.push(Outcome {
            question: q.clone(),
            gold: gold.clone(),
            ranked: r.dia_ids,
            route: r.route,
        });
        *done += 1;
        job.report("questions", *done, total);
    }
    Ok(out)
}

fn write_ranked(path: &Path, run: &[Outcome]) -> anyhow::Result<()> {
    let mut w = BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for o in run {
        let line = locomo::Ranked {
            conversation: o.question.conversation.clone(),
            question_index: o.question.index,
            ranked_dia_ids: o.ranked.clone(),
        };
        serde_json::to_writer(&mut w, &line)?;
        writeln!(w)?;
    }
    Ok(())
}

pub fn run(args: LocomoArgs, model_dir: &Path, json: bool) -> anyhow::Result<()> {
    let objective: Objective = args.objective.parse()?;
    let grid = Grid::parse(&args.grid)?;
    let points = grid.points();
    let tmp = tempfile::tempdir()?;
    let db = args
        .store
        .clone()
        .unwrap_or_else(|| tmp.path().join("eval.db"));
    let engine = open(&args, &db, model_dir)?;
    let (job, bar) = crate::job_with_bar("import", json);
    locomo::import(&engine, &args.data, &job)?;
    bar.finish();
    let questions = locomo::load_questions(&args.data)?;

    let runs_needed = points.len() + if args.routes { Route::ALL.len() } else { 0 };
    let total = (runs_needed * questions.len()) as u64;
    let (job, bar) = crate::job_with_bar("questions", json);
    let (mut done, mut latencies) = (0u64, Vec::new());
    let mut runs = Vec::with_capacity(points.len());
    for point in &points {
        let mut template = SearchQuery::new("");
        for (name, value) in point {
            folds::apply(&mut template, name, *value)?;
        }
        runs.push(run_all(
            &engine,
            &questions,
            &template,
            &job,
            &mut done,
            total,
            &mut latencies,
        )?);
    }
    let mut forced = Vec::new();
    if args.routes {
        for &route in Route::ALL {
            let mut template = SearchQuery::new("");
            template.route = Some(route);
            let run = run_all(
                &engine,
                &questions,
                &template,
                &job,
                &mut done,
                total,
                &mut Vec::new(),
            )?;
            forced.push((route, run));
        }
    }
    bar.finish();
    if let Some(p) = &args.out {
        write_ranked(p, &runs[0])?;
    }
    let matrix = args.routes.then(|| folds::route_matrix(&runs[0], &forced));

    if !args.folds {
        let judged: Vec<locomo::Judged> = runs[0]
            .iter()
            .map(|o| (o.question.clone(), o.gold.clone(), o.ranked.clone()))
            .collect();
        let report = locomo::score(&judged, &mut latencies);
        if json {
            print_json(&serde_json::json!({"report": report, "routes": matrix}))?;
        } else {
            crate::output::print_locomo(&report);
            if let Some(m) = &matrix {
                print_route_matrix(m);
            }
        }
        return Ok(());
    }
    let report = folds::folds(&grid, &runs, objective)?;
    latencies.sort_by(f64::total_cmp);
    if json {
        print_json(&serde_json::json!({"folds": report, "routes": matrix}))?;
    } else {
        print_folds(&report);
        if let Some(m) = &matrix {
            print_route_matrix(m);
        }
        let p = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
        if !latencies.is_empty() {
            out!(
                "({} searches; p50 {:.1} ms, p99 {:.1} ms)",
                latencies.len(),
                p(0.5),
                p(0.99)
            );
        }
    }
    Ok(())
}

fn point_label(p: &folds::Point) -> String {
    if p.is_empty() {
        return "defaults".into();
    }
    p.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

const CATEGORIES: [&str; 6] = [
    "",
    "1 multi-hop",
    "2 temporal",
    "3 open-domain",
    "4 single-hop",
    "5 adversarial",
];

fn header(first: &str) {
    out!(
        "{first:<14} {:>5} {:>7} {:>7} {:>7} {:>7} {:>8}",
        "n",
        "R@5",
        "R@10",
        "R@20",
        "All@10",
        "NDCG@10"
    );
}

fn print_folds(r: &FoldReport) {
    out!("Leave-one-conversation-out (objective {:?}):", r.objective);
    out!(
        "{:<10} {:>5} {:>8} {:>8} {:>8}  chosen on the others",
        "held out",
        "n",
        "train",
        "R@10",
        "All@10"
    );
    for f in &r.folds {
        out!(
            "{:<10} {:>5} {:>8.3} {:>8.3} {:>8.3}  {}",
            f.held_out,
            f.test.overall.questions,
            f.train_objective,
            f.test.overall.recall_at_10,
            f.test.overall.all_at_10,
            point_label(&f.chosen)
        );
    }
    out!("");
    out!("Fold average (mean of the held-out conversations):");
    header("category");
    for (c, s) in &r.average_by_category {
        let name = CATEGORIES.get(*c as usize).copied().unwrap_or("other");
        out!("{}", scores_row(name, s));
    }
    out!("{}", scores_row("overall", &r.average));
    out!("");
    out!("By route (fold average over folds where the router chose it):");
    header("route");
    for (route, s) in &r.average_by_route {
        out!("{}", scores_row(route, s));
    }
    if r.grid.axes.is_empty() {
        return;
    }
    out!("");
    out!(
        "Full fit (best on all conversations at once): {} → R@10 {:.3}, All@10 {:.3}",
        point_label(&r.full_fit),
        r.full_fit_scores.recall_at_10,
        r.full_fit_scores.all_at_10
    );
}

fn print_route_matrix(m: &BTreeMap<String, BTreeMap<String, Scores>>) {
    out!("");
    out!("Each route on the questions the router gave to each (R@10 / All@10):");
    let routes: Vec<&str> = Route::ALL.iter().map(|r| r.as_str()).collect();
    let mut head = format!("{:<10} {:>5}", "chosen", "n");
    for r in &routes {
        head.push_str(&format!(" {:>15}", format!("as {r}")));
    }
    out!("{head}");
    for (row, cols) in m {
        let n = cols.values().next().map_or(0, |s| s.questions);
        let mut line = format!("{row:<10} {n:>5}");
        for r in &routes {
            let cell = cols.get(*r).map_or("-".to_string(), |s| {
                format!("{:.3} / {:.3}", s.recall_at_10, s.all_at_10)
            });
            line.push_str(&format!(" {cell:>15}"));
        }
        out!("{line}");
    }
}
