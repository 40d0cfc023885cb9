//! `somna eval memory` (seed 000's five methods, Table 1 and Table 2; the engine's
//! `eval::memory`), `somna golden` (the retrieval regression suite) and `somna ledger`.

use crate::output::{print_json, StageBars};
use anyhow::Context;
use clap::Args;
use somna_api::Api;
use somna_engine::eval::golden::GoldenOptions;
use somna_engine::eval::memory::{self, MemoryEvalOptions, Method};
use somna_engine::ledger::LedgerGroup;
use somna_engine::sleep::chat::ChatConfig;
use somna_engine::{Config, Job, MemoryFilter, SleepConfig, Somna};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    let bars = Arc::new(StageBars::new(json));
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

#[derive(Args)]
pub struct GoldenArgs {
    #[command(subcommand)]
    action: GoldenAction,
}

#[derive(clap::Subcommand)]
enum GoldenAction {
    /// Save a query with the memories it should find.
    Add {
        query: String,
        /// Expected memory ids, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        expect: Vec<i64>,
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Search only this conversation.
        #[arg(long)]
        conversation: Option<String>,
    },
    /// The saved queries.
    List,
    /// Remove a saved query and its results.
    Remove { id: i64 },
    /// Run every saved query: R@k and NDCG@k, regressions against the previous run.
    Run {
        /// Exit with status 2 when a query regressed.
        #[arg(long)]
        fail_on_regression: bool,
    },
}

pub fn golden(api: &Api, args: GoldenArgs, json: bool) -> anyhow::Result<()> {
    match args.action {
        GoldenAction::Add {
            query,
            expect,
            k,
            conversation,
        } => {
            let opts = GoldenOptions {
                filter: MemoryFilter {
                    conversation,
                    ..Default::default()
                },
                ..Default::default()
            };
            let g = api.golden_add(&query, &expect, k, &opts)?;
            if json {
                print_json(&g)?;
            } else {
                out!(
                    "golden query {} saved: {:?} expects {:?} in the top {}",
                    g.id,
                    g.query,
                    g.expected,
                    g.k
                );
            }
        }
        GoldenAction::List => {
            let list = api.golden_list()?;
            if json {
                print_json(&list)?;
            } else if list.is_empty() {
                out!("no golden queries (add one with `somna golden add QUERY --expect ID`)");
            } else {
                for g in list {
                    out!(
                        "{:>5}  k={:<3} expects {:?}  {}",
                        g.id,
                        g.k,
                        g.expected,
                        crate::output::printable(&g.query)
                    );
                }
            }
        }
        GoldenAction::Remove { id } => {
            api.golden_remove(id)?;
            if json {
                print_json(&serde_json::json!({"removed": id}))?;
            } else {
                out!("golden query {id} removed");
            }
        }
        GoldenAction::Run { fail_on_regression } => {
            let (job, bar) = crate::job_with_bar("golden", json);
            let run = api.golden_run(&job)?;
            bar.finish();
            if json {
                print_json(&run)?;
            } else {
                out!(
                    "{:>5}  {:>6} {:>6}  {:<16} query",
                    "id",
                    "R@k",
                    "NDCG",
                    "previous"
                );
                for o in &run.outcomes {
                    let prev = match (o.previous_recall, o.previous_ndcg) {
                        (Some(r), Some(n)) => format!("{r:.3} {n:.3}"),
                        _ => "-".into(),
                    };
                    out!(
                        "{:>5}  {:>6.3} {:>6.3}  {:<16} {}{}",
                        o.query_id,
                        o.recall,
                        o.ndcg,
                        prev,
                        crate::output::printable(&o.query),
                        if o.regressed { "  REGRESSED" } else { "" }
                    );
                }
                out!(
                    "run {}: {} queries, mean R@k {:.3}, mean NDCG@k {:.3}, {} regression(s)",
                    run.id,
                    run.outcomes.len(),
                    run.mean_recall,
                    run.mean_ndcg,
                    run.regressions
                );
            }
            if fail_on_regression && run.regressions > 0 {
                std::process::exit(2);
            }
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct LedgerArgs {
    /// Group by operation, or by day or hour (and operation).
    #[arg(long, default_value = "op")]
    by: String,
    /// Only entries since this time: RFC 3339, YYYY-MM-DD, or an age such as 30m, 24h, 7d.
    #[arg(long)]
    since: Option<String>,
}

/// "30m", "24h", "7d" → milliseconds.
fn age_ms(s: &str) -> Option<i64> {
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: i64 = n.parse().ok()?;
    let unit = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    Some(n * unit)
}

pub fn ledger(api: &Api, args: LedgerArgs, json: bool) -> anyhow::Result<()> {
    let by: LedgerGroup = args.by.parse()?;
    let since = match args.since.as_deref() {
        None => 0,
        Some(s) => match age_ms(s) {
            Some(age) => chrono::Utc::now().timestamp_millis() - age,
            None => crate::parse_time(s, false)?,
        },
    };
    let rows = api.ledger_summary(since, by)?;
    if json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        out!("the ledger is empty for this period");
        return Ok(());
    }
    out!(
        "{:<17} {:<16} {:>7} {:>11} {:>9} {:>9} {:>8} {:>6} {:>8}",
        "period",
        "op",
        "count",
        "total ms",
        "mean ms",
        "max ms",
        "items",
        "llm",
        "tokens"
    );
    for r in rows {
        out!(
            "{:<17} {:<16} {:>7} {:>11.1} {:>9.2} {:>9.2} {:>8} {:>6} {:>8}",
            r.period_start.map_or("all".into(), crate::output::fmt_time),
            r.op.as_deref().unwrap_or("-"),
            r.count,
            r.total_ms,
            r.mean_ms,
            r.max_ms,
            r.items,
            r.llm_calls,
            r.tokens
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::age_ms;

    #[test]
    fn a_ledger_age_is_minutes_hours_or_days_and_nothing_else() {
        assert_eq!(age_ms("30m"), Some(30 * 60_000));
        assert_eq!(age_ms("24h"), Some(24 * 3_600_000));
        assert_eq!(age_ms("7d"), Some(7 * 86_400_000));
        for bad in ["", "d", "7w", "1.5h", "2024-03-01"] {
            assert_eq!(age_ms(bad), None, "{bad:?}");
        }
    }
}
