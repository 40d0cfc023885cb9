//! `somna curate …` (act on memories by id, each action a logged operation with
//! `--preview` and `undo`) and `somna duplicates` (near-duplicate groups).

use crate::output::{fmt_time, print_json};
use crate::Ctx;
use clap::{Args, Subcommand};
use somna_api::sleep::Backend;
use somna_api::{CurateRequest, CurateUndoArgs, DuplicatesArgs};
use somna_engine::curate::{CurateAction, CurationReport};
use somna_engine::{paths, Job};

#[derive(Args)]
pub struct CurateArgs {
    #[command(subcommand)]
    action: CurateCommand,
    /// Show what the action would change, writing nothing.
    #[arg(long, global = true)]
    preview: bool,
}

#[derive(Subcommand)]
enum CurateCommand {
    /// Merge memories into one; the sources are archived (never deleted) and linked from
    /// it. Without --text the source that says the most is kept (--backend chat drafts).
    Merge {
        #[arg(required = true, num_args = 2..)]
        ids: Vec<i64>,
        #[arg(long)]
        text: Option<String>,
        /// extractive (default) or chat (an LLM drafts the merged text).
        #[arg(long, default_value = "extractive")]
        backend: String,
    },
    /// Soft-delete memories (restorable).
    Delete {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Bring back deleted or forgotten memories.
    Restore {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Pin memories: sleep cycles never compress, decay, archive or forget them.
    Pin {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    Unpin {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Add and remove tags.
    Tag {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long)]
        add: Vec<String>,
        #[arg(long)]
        remove: Vec<String>,
    },
    /// Set importance (0 to 1).
    Importance {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long)]
        set: f64,
    },
    /// Place memories in a concept cluster (liquid steps leave them there).
    Move {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long)]
        cluster: i64,
    },
    /// Name a concept cluster (liquid steps keep a person's label).
    Relabel {
        cluster: i64,
        #[arg(long)]
        label: String,
    },
    /// Undo a curation exactly (refused while a later operation on the same memories stands).
    Undo { id: i64 },
    /// The latest curations.
    History {
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
}

pub fn run(ctx: &Ctx, args: CurateArgs) -> anyhow::Result<()> {
    let api = ctx.api("cli")?;
    let mut backend = Backend::Extractive;
    let action = match args.action {
        CurateCommand::Undo { id } => {
            let r = api.curate_undo(&CurateUndoArgs { id }, &Job::default())?;
            return show(&r, ctx.json);
        }
        CurateCommand::History { limit } => {
            let list = api.curations(Some(limit))?;
            if ctx.json {
                return print_json(&list);
            }
            if list.is_empty() {
                out!("no curations yet");
            }
            for r in &list {
                out!("{}", line(r));
            }
            return Ok(());
        }
        CurateCommand::Merge {
            ids,
            text,
            backend: name,
        } => {
            backend = Backend::choose(Some(&name), || {
                somna_api::llm::configured(&paths::data_dir())
            })?;
            CurateAction::Merge { ids, text }
        }
        CurateCommand::Delete { ids } => CurateAction::Delete { ids },
        CurateCommand::Restore { ids } => CurateAction::Restore { ids },
        CurateCommand::Pin { ids } => CurateAction::Pin { ids },
        CurateCommand::Unpin { ids } => CurateAction::Unpin { ids },
        CurateCommand::Tag { ids, add, remove } => CurateAction::Tag { ids, add, remove },
        CurateCommand::Importance { ids, set } => CurateAction::SetImportance {
            ids,
            importance: set,
        },
        CurateCommand::Relabel { cluster, label } => {
            CurateAction::RelabelCluster { cluster, label }
        }
        CurateCommand::Move { ids, cluster } => CurateAction::MoveToCluster { ids, cluster },
    };
    let req = CurateRequest {
        action,
        preview: args.preview,
    };
    let r = api.curate(&req, &backend)?;
    show(&r, ctx.json)
}

fn line(r: &CurationReport) -> String {
    format!(
        "{:>5}  {:<10} {:<8} {}  by {}  {} changes{}",
        r.id.map(|i| i.to_string()).unwrap_or_else(|| "-".into()),
        r.op,
        r.status,
        fmt_time(r.at),
        r.by,
        r.changed.len(),
        r.merged
            .as_ref()
            .map(|m| format!(", merged {} memories", m.sources.len()))
            .unwrap_or_default()
    )
}

fn show(r: &CurationReport, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(r);
    }
    out!("{}", line(r));
    if let Some(m) = &r.merged {
        let id = m.id.map(|i| format!("#{i} ")).unwrap_or_default();
        out!(
            "  merged {id}({}, text by {}): {}",
            m.kind,
            m.drafted_by,
            crate::output::clip(&m.text, 300)
        );
    }
    if let Some(l) = &r.relabel {
        out!(
            "  cluster {}: {} -> {}",
            l.cluster,
            crate::output::clip(&l.old, 80),
            crate::output::clip(&l.new, 80)
        );
    }
    for c in &r.changed {
        out!("  #{} {}: {} -> {}", c.memory_id, c.field, c.old, c.new);
    }
    for n in &r.notes {
        out!("  note: {n}");
    }
    if r.status == "preview" {
        out!("preview: nothing was written; run again without --preview to apply");
    } else if r.status == "done" {
        if let Some(id) = r.id {
            out!("undo with: somna curate undo {id}");
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct DuplicatesInput {
    /// Cosine similarity at or above which two memories are near-duplicates.
    #[arg(long, default_value_t = somna_engine::curate::duplicates::DEFAULT_THRESHOLD)]
    threshold: f32,
    #[arg(long)]
    conversation: Option<String>,
    #[arg(long, default_value_t = 500)]
    limit: usize,
}

pub fn duplicates(ctx: &Ctx, input: DuplicatesInput) -> anyhow::Result<()> {
    let api = ctx.api("cli")?;
    let groups = api.duplicates(&DuplicatesArgs {
        threshold: Some(input.threshold),
        conversation: input.conversation,
        limit: Some(input.limit),
    })?;
    if ctx.json {
        return print_json(&serde_json::json!({ "groups": groups }));
    }
    let memories: usize = groups.iter().map(|g| g.ids.len()).sum();
    out!(
        "{} groups of near-duplicates ({memories} memories) at cosine >= {}",
        groups.len(),
        input.threshold
    );
    for g in &groups {
        out!(
            "- {} × {} by {} (min similarity {:.3}): ids {:?}",
            g.ids.len(),
            g.kind,
            g.who.as_deref().unwrap_or("?"),
            g.min_similarity,
            g.ids
        );
        for t in g.texts.iter().take(3) {
            out!("    {}", crate::output::clip(t, 100));
        }
    }
    if !groups.is_empty() {
        out!("merge a group with: somna curate merge <ids…> [--preview]");
    }
    Ok(())
}
