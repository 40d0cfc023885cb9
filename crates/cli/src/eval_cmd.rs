//! `somna eval memory`: seed 000's five methods, Table 1 and Table 2 (see the engine's
//! `eval::memory`).

use crate::output::print_json;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use somna_engine::eval::memory::{self, MemoryEvalOptions, Method};
use somna_engine::sleep::chat::ChatConfig;
use somna_engine::{Config, Job, Progress, ProgressEvent, SleepConfig, Somna};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Args)]
pub struct MemoryArgs {
    /// A LoCoMo-format JSON file (conversations with qa, answers and evidence).
    #[arg(long)]
    data: PathBuf,
    /// Methods to evaluate, comma-separated: no_memory, rag, episodic, summaries, sleep.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "no_memory,rag,episodic,summaries,sleep"
    )]
    methods: Vec<String>,
    /// Items retrieved (ranked and packed) per question.
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// At most this many questions per conversation.
    #[arg(long)]
    max_questions: Option<usize>,
    /// Also answer from each context with an OpenAI-compatible endpoint and judge the
    /// answers (SOMNA_LLM_BASE_URL, SOMNA_LLM_MODEL, SOMNA_LLM_API_KEY, or the flags below).
    #[arg(long)]
    llm: bool,
    #[arg(long, requires = "llm")]
    llm_base_url: Option<String>,
    #[arg(long, requires = "llm")]
    llm_model: Option<String>,
    #[arg(long, requires = "llm")]
    llm_api_key: Option<String>,
    /// A JSON file of SleepConfig fields for the cycle.
    #[arg(long)]
    sleep_config: Option<PathBuf>,
    /// Where results_<ts>.json, table1_<ts>.csv and table2_<ts>.csv go.
    #[arg(long, default_value = ".")]
    out_dir: PathBuf,
    /// Keep the evaluation store here (must not exist yet) instead of a temporary one.
    #[arg(long)]
    store: Option<PathBuf>,
}

/// One bar per progress stage (import, before, the sleep phases, after).
struct StageBars {
    hidden: bool,
    current: Mutex<Option<(&'static str, ProgressBar)>>,
}

impl StageBars {
    fn finish(&self) {
        if let Some((_, b)) = self
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            b.finish();
        }
    }
}

impl Progress for StageBars {
    fn report(&self, e: ProgressEvent) {
        if self.hidden {
            return;
        }
        let mut slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|(s, _)| *s != e.stage) {
            if let Some((_, b)) = slot.take() {
                b.finish();
            }
        }
        let (_, bar) = slot.get_or_insert_with(|| {
            let b = ProgressBar::new(e.total.max(1));
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>10} [{bar:40}] {pos}/{len} {elapsed} (eta {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix(e.stage);
            (e.stage, b)
        });
        bar.set_length(e.total.max(1));
        bar.set_position(e.done.min(e.total.max(1)));
    }
}

fn llm_config(args: &MemoryArgs) -> anyhow::Result<Option<ChatConfig>> {
    if !args.llm {
        return Ok(None);
    }
    let env = ChatConfig::from_env();
    let base_url = args
        .llm_base_url
        .clone()
        .or_else(|| env.as_ref().map(|c| c.base_url.clone()));
    let model = args
        .llm_model
        .clone()
        .or_else(|| env.as_ref().map(|c| c.model.clone()));
    let (Some(base_url), Some(model)) = (base_url, model) else {
        anyhow::bail!(
            "--llm needs an endpoint: set SOMNA_LLM_BASE_URL and SOMNA_LLM_MODEL or pass --llm-base-url and --llm-model"
        );
    };
    Ok(Some(ChatConfig {
        base_url,
        model,
        api_key: args
            .llm_api_key
            .clone()
            .or_else(|| env.as_ref().and_then(|c| c.api_key.clone())),
        timeout_secs: env.as_ref().map_or(60, |c| c.timeout_secs),
    }))
}

pub fn run_memory(args: MemoryArgs, model_dir: &Path, json: bool) -> anyhow::Result<()> {
    let methods = args
        .methods
        .iter()
        .map(|m| m.trim().parse::<Method>())
        .collect::<Result<Vec<_>, _>>()?;
    let sleep = match &args.sleep_config {
        Some(p) => serde_json::from_str::<SleepConfig>(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("parsing {}", p.display()))?,
        None => SleepConfig::default(),
    };
    let opts = MemoryEvalOptions {
        methods,
        k: args.k,
        max_questions: args.max_questions,
        llm: llm_config(&args)?,
        sleep,
    };
    let tmp = tempfile::tempdir()?;
    let db = match &args.store {
        Some(p) if p.exists() => anyhow::bail!(
            "{} exists: the evaluation imports into a new store",
            p.display()
        ),
        Some(p) => p.clone(),
        None => tmp.path().join("eval.db"),
    };
    let engine = Somna::open(&Config::new(&db, model_dir), &Job::default())?;
    let (cancel_job, _) = crate::job_with_bar("eval", true);
    let bars = Arc::new(StageBars {
        hidden: json,
        current: Mutex::new(None),
    });
    let job = Job {
        progress: bars.clone(),
        cancel: cancel_job.cancel.clone(),
    };
    let report = memory::run(&engine, &args.data, &opts, &job);
    bars.finish();
    let report = report?;
    let files = memory::write_outputs(&report, &args.out_dir)?;
    if json {
        print_json(&serde_json::json!({
            "files": files,
            "table1": report.table1,
            "table2": report.table2,
            "sleep": report.sleep,
            "llm_usage": report.llm_usage,
        }))?;
    } else {
        out!("{}", memory::format_tables(&report));
        out!(
            "Wrote {}, {} and {}",
            files.results.display(),
            files.table1.display(),
            files.table2.display()
        );
    }
    Ok(())
}
