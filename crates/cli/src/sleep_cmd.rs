//! `somna sleep [--dry-run]`, `somna sleep undo ID`, `somna sleep history`, `somna sleep show
//! ID`, `somna facts`, `somna schemas`.

use crate::output::{fmt_time, memory_line, print_json, StageBars};
use crate::Ctx;
use anyhow::Context;
use clap::{Args, Subcommand};
use somna_api::sleep::Backend;
use somna_api::{Api, Filters, ListArgs, UndoRequest};
use somna_engine::memory::Details;
use somna_engine::{
    paths, Job, Kind, ListQuery, MemoryFilter, SleepConfig, SleepOptions, SleepReport, Somna,
};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct SleepArgs {
    #[command(subcommand)]
    action: Option<SleepAction>,
    /// Compute the cycle and show what it would change, writing nothing.
    #[arg(long)]
    dry_run: bool,
    /// Run even when the loss guard refuses the cycle (it would archive or forget more
    /// than `max_loss_share` of the live memories; see --config).
    #[arg(long)]
    force: bool,
    /// Sleep review: a JSON file naming the accepted proposals of a dry run ({now_ms,
    /// summaries: [[source ids]], schemas: [text], states: [memory ids], decay}); only
    /// those are written, as one cycle.
    #[arg(long)]
    review: Option<PathBuf>,
    /// Recorded as what started the cycle.
    #[arg(long, default_value = "cli")]
    trigger: String,
    /// A JSON file of SleepConfig fields (weights, thresholds, ages); others keep defaults.
    #[arg(long)]
    config: Option<PathBuf>,
    /// extractive (default, offline) or chat: an OpenAI-compatible endpoint from
    /// SOMNA_LLM_BASE_URL, SOMNA_LLM_MODEL, SOMNA_LLM_API_KEY, else the one saved in the
    /// app's settings (falls back per batch).
    #[arg(long, default_value = "extractive")]
    backend: String,
    /// Run auto-sleep until Ctrl-C: a cycle starts whenever enough new episodes wait
    /// (the store's auto-sleep setting, or --every).
    #[arg(long)]
    auto: bool,
    /// With --auto: episodes that start a cycle (default: the stored setting).
    #[arg(long)]
    every: Option<usize>,
}

#[derive(Subcommand)]
enum SleepAction {
    /// Revert a committed cycle exactly. A cycle that later live cycles touched is refused
    /// (error `undo_blocked`, naming them) unless --cascade, which undoes those first,
    /// newest first.
    Undo {
        id: i64,
        #[arg(long)]
        cascade: bool,
    },
    /// The latest cycles.
    History {
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// One cycle's full report.
    Show { id: i64 },
    /// Show or change the store's auto-sleep setting (the app starts auto-sleep when it is
    /// enabled; `somna sleep --auto` uses its threshold).
    AutoSetting {
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
        /// New episodes that start a cycle.
        #[arg(long)]
        every: Option<usize>,
        /// Seconds between checks.
        #[arg(long)]
        poll_secs: Option<f64>,
    },
}

fn job(json: bool) -> (Job, Arc<StageBars>) {
    let bars = Arc::new(StageBars::new(json));
    let job = Job {
        progress: bars.clone(),
        cancel: Default::default(),
    };
    let cancel = job.cancel.clone();
    let _ = ctrlc::set_handler(move || cancel.cancel());
    (job, bars)
}

pub fn run(ctx: &Ctx, args: SleepArgs) -> anyhow::Result<()> {
    let json = ctx.json;
    let api = ctx.api("user")?;
    if args.auto {
        return run_auto(&api, args.every, json);
    }
    match args.action {
        Some(SleepAction::AutoSetting {
            enable,
            disable,
            every,
            poll_secs,
        }) => auto_setting(&api, enable, disable, every, poll_secs, json),
        Some(SleepAction::Undo { id, cascade }) => undo(&api, UndoRequest { id, cascade }, json),
        Some(SleepAction::History { limit }) => {
            let cycles = api.sleep_history(Some(limit))?;
            if json {
                return print_json(&cycles);
            }
            if cycles.is_empty() {
                out!("no sleep cycles yet");
            }
            for r in &cycles {
                out!("{}", cycle_line(r));
            }
            Ok(())
        }
        Some(SleepAction::Show { id }) => {
            let r = api.sleep_report(id)?;
            if json {
                return print_json(&r);
            }
            print_report(&r);
            Ok(())
        }
        None => cycle(&api, args, json),
    }
}

fn auto_setting(
    api: &Api,
    enable: bool,
    disable: bool,
    every: Option<usize>,
    poll_secs: Option<f64>,
    json: bool,
) -> anyhow::Result<()> {
    let mut s = api.auto_sleep_settings()?;
    if enable || disable {
        s.enabled = enable;
    }
    if let Some(n) = every {
        s.every = n;
    }
    if let Some(p) = poll_secs {
        s.poll_secs = p;
    }
    if enable || disable || every.is_some() || poll_secs.is_some() {
        api.set_auto_sleep_settings(&s)?;
    }
    if json {
        return print_json(&s);
    }
    out!(
        "auto-sleep {}: a cycle after {} new episodes, checked every {} s",
        if s.enabled { "enabled" } else { "disabled" },
        s.every,
        s.poll_secs
    );
    Ok(())
}

fn undo(api: &Api, req: UndoRequest, json: bool) -> anyhow::Result<()> {
    let (job, bars) = job(json);
    let reports = api.sleep_undo(&req, &job)?;
    bars.finish();
    if json && req.cascade {
        return print_json(&reports);
    }
    if json {
        return print_json(&reports[0]);
    }
    for r in &reports {
        out!(
            "undid sleep cycle {}: {} memories removed, {} field changes reverted, {} memories no longer forgotten",
            r.id.unwrap_or_default(),
            r.created.len(),
            r.changed.len(),
            r.forgotten.len()
        );
    }
    Ok(())
}

/// One cycle (or a dry run) with the chosen backend.
fn cycle(api: &Api, args: SleepArgs, json: bool) -> anyhow::Result<()> {
    let config: SleepConfig = match &args.config {
        Some(p) => serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("{}: not a sleep config", p.display()))?,
        None => api.sleep_config()?,
    };
    let backend = Backend::choose(Some(&args.backend), || {
        somna_api::llm::configured(&paths::data_dir())
    })?;
    let (job, bars) = job(json);
    let opts = SleepOptions {
        dry_run: args.dry_run,
        trigger: args.trigger.clone(),
        config,
        force: args.force,
        review: match &args.review {
            Some(p) => Some(
                serde_json::from_str(
                    &std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?,
                )
                .with_context(|| format!("{}: not a sleep review", p.display()))?,
            ),
            None => None,
        },
    };
    let result = api.sleep(&opts, &backend, &job);
    bars.finish();
    let r = match result {
        Err(somna_engine::Error::Cancelled) => anyhow::bail!(
            "sleep cycle cancelled: the phases already committed are kept and recorded; the next cycle finishes the work"
        ),
        other => other?,
    };
    if json {
        return print_json(&r);
    }
    print_report(&r);
    Ok(())
}

/// `somna sleep --auto`: runs auto-sleep in the foreground until Ctrl-C, printing each
/// cycle as it ends.
fn run_auto(api: &Api, every: Option<usize>, json: bool) -> anyhow::Result<()> {
    let settings = api.auto_sleep_settings()?;
    let every = every.unwrap_or(settings.every);
    let (job, _bar) = crate::job_with_bar("auto-sleep", true);
    if !json {
        eprintln!(
            "auto-sleep: a cycle after every {every} new episodes (checked every {} s); Ctrl-C stops",
            settings.poll_secs
        );
    }
    let auto = api.spawn_auto_sleep(Some(every))?;
    let mut shown = 0;
    loop {
        let stop = job.cancel.is_cancelled();
        if stop {
            // Cancels a running cycle before its current phase commits, then joins.
            let reports = auto.reports();
            auto.stop();
            print_new(&reports, &mut shown, json)?;
            break;
        }
        if auto.cycles() > shown {
            print_new(&auto.reports(), &mut shown, json)?;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    Ok(())
}

fn print_new(
    reports: &[somna_engine::Result<SleepReport>],
    shown: &mut usize,
    json: bool,
) -> anyhow::Result<()> {
    for r in &reports[(*shown).min(reports.len())..] {
        match r {
            Ok(r) if json => print_json(r)?,
            Ok(r) => out!("{}", cycle_line(r)),
            Err(e) => eprintln!("auto-sleep: a cycle failed: {e}"),
        }
    }
    *shown = reports.len();
    Ok(())
}

fn cycle_line(r: &SleepReport) -> String {
    let count = |kind: Kind| r.created.iter().filter(|p| p.kind == kind).count();
    format!(
        "#{:<4} {} {:<11} {:<6} {:>6} ms  {} summaries, {} schemas, {} changes, {} forgotten",
        r.id.unwrap_or_default(),
        fmt_time(r.started_at),
        r.status,
        r.trigger,
        r.phases.iter().map(|p| p.millis).sum::<u64>(),
        count(Kind::Summary),
        count(Kind::Schema),
        r.changed.len(),
        r.forgotten.len()
    )
}

fn print_report(r: &SleepReport) {
    match r.id {
        Some(id) => out!("sleep cycle {id}: {} ({})", r.status, r.backend),
        None => out!(
            "dry run ({}): nothing was written; this is what a cycle would do",
            r.backend
        ),
    }
    for p in &r.phases {
        let counts: Vec<String> = p.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out!("  {:<9} {:>7} ms  {}", p.name, p.millis, counts.join(", "));
    }
    if let Some(l) = &r.loss {
        out!(
            "  loss guard: archives or forgets {} of {} live memories ({:.1}%; limit {:.0}%{})",
            l.lost,
            l.live,
            l.share() * 100.0,
            l.limit_share * 100.0,
            if l.forced { ", forced" } else { "" }
        );
    }
    for p in &r.created {
        let id = p.id.map_or("new".to_string(), |i| format!("#{i}"));
        match &p.details {
            Details::Schema {
                name, confidence, ..
            } => out!(
                "\n+ schema {id} \"{name}\" (confidence {confidence:.2}, from {} summaries)\n  {}",
                p.derived_from.len() + p.derived_from_proposed.len(),
                p.text
            ),
            Details::Summary {
                key_concepts,
                confidence,
                ..
            } => out!(
                "\n+ summary {id} of {} episodes [{}] (confidence {confidence:.2})\n  {}",
                p.derived_from.len(),
                key_concepts.join(", "),
                p.text
            ),
            Details::None => out!("\n+ {} {id}\n  {}", p.kind, p.text),
        }
    }
    let mut by_field: std::collections::BTreeMap<(&str, String), usize> = Default::default();
    for c in &r.changed {
        let what = match c.field.as_str() {
            "state" => format!("{} → {}", json_str(&c.old), json_str(&c.new)),
            other => other.to_string(),
        };
        *by_field.entry((c.field.as_str(), what)).or_default() += 1;
    }
    if !by_field.is_empty() {
        out!("\nchanges:");
        for ((_, what), n) in by_field {
            out!("  {n:>6} × {what}");
        }
    }
    if !r.forgotten.is_empty() {
        let shown: Vec<String> = r
            .forgotten
            .iter()
            .take(20)
            .map(|i| format!("#{i}"))
            .collect();
        out!(
            "forgotten ({}; `somna restore ID` brings one back, `somna sleep undo` all): {}{}",
            r.forgotten.len(),
            shown.join(" "),
            if r.forgotten.len() > 20 { " …" } else { "" }
        );
    }
    for n in &r.notes {
        out!("note: {n}");
    }
}

fn json_str(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// `somna facts` and `somna schemas`: every memory of one kind, newest first.
pub fn list_kind(
    ctx: &Ctx,
    kind: Kind,
    conversation: Option<String>,
    limit: usize,
) -> anyhow::Result<()> {
    let json = ctx.json;
    let page = ctx.api("user")?.list(&ListArgs {
        filters: Some(Filters {
            kinds: vec![kind],
            conversation,
            ..Filters::default()
        }),
        descending: true,
        limit: Some(limit),
        ..ListArgs::default()
    })?;
    if json {
        return print_json(&page);
    }
    for m in &page.memories {
        match &m.details {
            Details::Schema {
                name,
                description,
                core_concepts,
                related_memory_ids,
                examples,
                confidence,
            } => {
                out!(
                    "#{} {name} (confidence {confidence:.2}, {} summaries)",
                    m.id,
                    related_memory_ids.len()
                );
                out!("  {description}");
                out!("  concepts: {}", core_concepts.join(", "));
                for e in examples {
                    out!("  e.g. {e}");
                }
            }
            _ => out!("{}", memory_line(m)),
        }
    }
    out!("({} of {})", page.memories.len(), page.total);
    Ok(())
}

/// `somna bench --only sleep`: one cycle over a store of `episodes` episodes.
#[derive(serde::Serialize)]
pub struct SleepBench {
    pub episodes: u64,
    pub source: String,
    pub seconds: f64,
    /// (phase, milliseconds)
    pub phases: Vec<(String, u64)>,
    pub summaries: usize,
    pub schemas: usize,
    pub forgotten: usize,
    pub changes: usize,
}

/// Builds (or reuses, in `cache`) a store of `episodes` episodes — LoCoMo turns from
/// `data` repeated under new conversation names, or synthetic sentences — copies it, and
/// runs one default cycle on the copy with the extractive backend.
pub fn bench_sleep(
    embedder: Arc<dyn somna_engine::embed::Embedder>,
    model_dir: &std::path::Path,
    cache: &std::path::Path,
    scratch: &std::path::Path,
    episodes: usize,
    data: Option<&std::path::Path>,
    synthetic: impl FnOnce(usize) -> Vec<somna_engine::ingest::ConversationBatch>,
) -> anyhow::Result<SleepBench> {
    use somna_engine::{AddOptions, Config};
    let source = match data {
        Some(p) => format!("LoCoMo turns from {} (repeated)", p.display()),
        None => "synthetic sentences".to_string(),
    };
    let tag = if data.is_some() {
        "locomo"
    } else {
        "synthetic"
    };
    let db = cache.join(format!("sleep-{episodes}-{tag}.db"));
    {
        let engine = Somna::open_with(
            &Config::new(&db, model_dir),
            embedder.clone(),
            &Job::default(),
        )?;
        let have = engine.list(&ListQuery {
            filter: MemoryFilter {
                kinds: vec![Kind::Episode],
                ..Default::default()
            },
            limit: 1,
            ..Default::default()
        })?;
        if (have.total as usize) < episodes {
            eprintln!(
                "building a {episodes}-episode store at {} (reused next time)",
                db.display()
            );
            let batches = match data {
                Some(p) => {
                    let base = somna_engine::ingest::parse_locomo(p)?;
                    let mut out = Vec::new();
                    let mut n = 0;
                    'fill: for copy in 0.. {
                        for b in &base {
                            let mut b = b.clone();
                            b.conversation = format!("{}-copy{copy}", b.conversation);
                            b.messages.truncate(episodes - n);
                            n += b.messages.len();
                            out.push(b);
                            if n >= episodes {
                                break 'fill;
                            }
                        }
                    }
                    out
                }
                None => synthetic(episodes),
            };
            let (job, bars) = job(false);
            engine.import(&batches, &AddOptions::default(), &job)?;
            bars.finish();
        }
    }
    let run = scratch.join("sleep-run.db");
    crate::bench_cmd::copy_store(&db, &run).context("copying the bench store")?;
    let engine = Somna::open_with(&Config::new(&run, model_dir), embedder, &Job::default())?;
    let total = engine.stats()?.by_kind;
    let n = total
        .iter()
        .find(|(k, _)| k == "episode")
        .map_or(0, |(_, n)| *n);
    let opts = SleepOptions {
        trigger: "bench".into(),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let r = engine.sleep(&opts, &Job::default())?;
    let seconds = t.elapsed().as_secs_f64();
    let count = |kind: Kind| r.created.iter().filter(|p| p.kind == kind).count();
    Ok(SleepBench {
        episodes: n,
        source,
        seconds,
        phases: r
            .phases
            .iter()
            .map(|p| (p.name.clone(), p.millis))
            .collect(),
        summaries: count(Kind::Summary),
        schemas: count(Kind::Schema),
        forgotten: r.forgotten.len(),
        changes: r.changed.len(),
    })
}

pub fn print_bench(b: &SleepBench) {
    out!(
        "\nsleep cycle (extractive) over {} episodes ({}): {:.1} s",
        b.episodes,
        b.source,
        b.seconds
    );
    for (name, ms) in &b.phases {
        out!("  {name:<9} {ms:>8} ms");
    }
    out!(
        "  {} summaries, {} schemas, {} forgotten, {} field changes",
        b.summaries,
        b.schemas,
        b.forgotten,
        b.changes
    );
}
