//! `somna whatif` (what a change of decay, lifecycle, forgetting or fusion settings would
//! do, written nowhere; `--apply` saves it) and `somna settings` (the saved settings, the
//! log of applications, undo).

use crate::output::{clip, fmt_time, print_json};
use crate::Ctx;
use anyhow::Context;
use clap::{Args, Subcommand};
use somna_engine::retrieve::{SearchResponse, Weights};
use somna_engine::whatif::{WhatIfReport, WhatIfRequest};
use somna_engine::{DecayModel, Settings, SettingsChange, SettingsPatch};

#[derive(Args)]
pub struct WhatIfArgs {
    /// Importance decay model: exp (exponential) or power (power law).
    #[arg(long, value_name = "exp|power")]
    decay: Option<String>,
    /// Importance half-life (days).
    #[arg(long, value_name = "DAYS")]
    half_life: Option<f64>,
    /// The power law's exponent (seed 003: 1.5).
    #[arg(long)]
    alpha: Option<f64>,
    /// Importance never decays below this.
    #[arg(long)]
    floor: Option<f64>,
    /// Lifecycle: warm from this age (days).
    #[arg(long, value_name = "DAYS")]
    warm_after: Option<f64>,
    /// Lifecycle: cold from this age (days).
    #[arg(long, value_name = "DAYS")]
    cold_after: Option<f64>,
    /// Lifecycle: archived from this age (days).
    #[arg(long, value_name = "DAYS")]
    archive_after: Option<f64>,
    /// Forget consolidated, cold, never retrieved episodes below this importance…
    #[arg(long, value_name = "IMPORTANCE")]
    forget_below: Option<f64>,
    /// …with at most this many content words.
    #[arg(long, value_name = "N")]
    forget_max_words: Option<usize>,
    /// A fusion weight, NAME=VALUE (semantic, lexical, recency, actor, spatial, usage;
    /// repeatable); the others keep their saved values and all must sum to 1.
    #[arg(long = "weight", value_name = "NAME=VALUE")]
    weights: Vec<String>,
    /// A search to rank with the saved and the proposed settings.
    #[arg(long)]
    query: Option<String>,
    /// Hits of that search (1–200).
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// How far ahead to follow the lifecycle (days, 1–3650).
    #[arg(long, value_name = "DAYS", default_value_t = 180.0)]
    horizon: f64,
    /// Transitions listed (the totals count them all).
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Save the proposed settings after showing what they do (undo: `somna settings undo ID`).
    #[arg(long)]
    apply: bool,
}

#[derive(Args)]
pub struct SettingsArgs {
    #[command(subcommand)]
    action: Option<SettingsAction>,
}

#[derive(Subcommand)]
enum SettingsAction {
    /// The applications of settings, newest first.
    History {
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Put back the settings an application replaced.
    Undo { id: i64 },
}

impl WhatIfArgs {
    fn patch(&self, saved: &Settings) -> anyhow::Result<SettingsPatch> {
        let weights = if self.weights.is_empty() {
            None
        } else {
            let mut w = saved.weights;
            for spec in &self.weights {
                let (name, value) = spec
                    .split_once('=')
                    .with_context(|| format!("--weight {spec:?}: write NAME=VALUE"))?;
                let value: f64 = value
                    .trim()
                    .parse()
                    .with_context(|| format!("--weight {spec:?}: {value:?} is not a number"))?;
                let slot = match name.trim() {
                    "semantic" => &mut w.semantic,
                    "lexical" => &mut w.lexical,
                    "recency" => &mut w.recency,
                    "actor" => &mut w.actor,
                    "spatial" => &mut w.spatial,
                    "usage" => &mut w.usage,
                    other => anyhow::bail!(somna_engine::Error::InvalidInput(format!(
                        "--weight: no fusion weight {other:?} (semantic, lexical, recency, actor, spatial, usage)"
                    ))),
                };
                *slot = value;
            }
            Some(w)
        };
        Ok(SettingsPatch {
            decay: self
                .decay
                .as_deref()
                .map(str::parse::<DecayModel>)
                .transpose()?,
            half_life_days: self.half_life,
            decay_alpha: self.alpha,
            importance_floor: self.floor,
            warm_after_days: self.warm_after,
            cold_after_days: self.cold_after,
            archive_after_days: self.archive_after,
            forget_importance: self.forget_below,
            forget_max_words: self.forget_max_words,
            weights,
        })
    }
}

pub fn whatif(ctx: &Ctx, args: WhatIfArgs) -> anyhow::Result<()> {
    let api = ctx.api("cli")?;
    let patch = args.patch(&api.settings()?)?;
    let req = WhatIfRequest {
        patch: patch.clone(),
        query: args.query.clone(),
        k: Some(args.k),
        horizon_days: Some(args.horizon),
        limit: Some(args.limit),
        now_ms: None,
    };
    let report = api.what_if(&req)?;
    let applied = if args.apply {
        Some(api.apply_settings(&patch)?)
    } else {
        None
    };
    if ctx.json {
        return print_json(&serde_json::json!({ "whatif": report, "applied": applied }));
    }
    print_report(&report, args.limit);
    match applied {
        Some(a) => out!(
            "\napplied as settings change {} (undo: somna settings undo {})",
            a.id,
            a.id
        ),
        None if !patch.is_empty() => {
            out!("\nnothing was written; --apply saves these settings")
        }
        None => {}
    }
    Ok(())
}

pub fn settings(ctx: &Ctx, args: SettingsArgs) -> anyhow::Result<()> {
    let api = ctx.api("cli")?;
    match args.action {
        None => {
            let s = api.settings()?;
            if ctx.json {
                return print_json(&s);
            }
            for (name, value) in knobs(&s) {
                out!("{name:<22} {value}");
            }
            Ok(())
        }
        Some(SettingsAction::History { limit }) => {
            let log = api.settings_history(Some(limit))?;
            if ctx.json {
                return print_json(&log);
            }
            if log.is_empty() {
                out!("no settings applied yet (the defaults are in use)");
            }
            for c in &log {
                out!(
                    "{:>5}  {}  {:<6} by {:<5} {}",
                    c.id,
                    fmt_time(c.at),
                    c.status,
                    c.by,
                    changed(c).join(", ")
                );
            }
            Ok(())
        }
        Some(SettingsAction::Undo { id }) => {
            let c = api.settings_undo(id)?;
            if ctx.json {
                return print_json(&c);
            }
            // What the undo set: the application read backwards.
            let mut back = c.clone();
            std::mem::swap(&mut back.old, &mut back.new);
            out!(
                "undid settings change {}: {}",
                c.id,
                changed(&back).join(", ")
            );
            Ok(())
        }
    }
}

/// The knobs the simulator moves, by name, with their values.
fn knobs(s: &Settings) -> Vec<(&'static str, String)> {
    let c = &s.sleep;
    let w: &Weights = &s.weights;
    vec![
        ("decay", snake(&c.decay)),
        ("half_life_days", c.importance_half_life_days.to_string()),
        ("decay_alpha", c.decay_alpha.to_string()),
        ("importance_floor", c.importance_floor.to_string()),
        ("warm_after_days", c.warm_after_days.to_string()),
        ("cold_after_days", c.cold_after_days.to_string()),
        ("archive_after_days", c.archive_after_days.to_string()),
        ("forget_importance", c.forget_importance.to_string()),
        ("forget_max_words", c.forget_max_words.to_string()),
        (
            "weights",
            format!(
                "semantic {} lexical {} recency {} actor {} spatial {} usage {}",
                w.semantic, w.lexical, w.recency, w.actor, w.spatial, w.usage
            ),
        ),
    ]
}

fn snake<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// "name old → new" for each knob that differs.
fn changed(c: &SettingsChange) -> Vec<String> {
    knobs(&c.old)
        .into_iter()
        .zip(knobs(&c.new))
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, b)| format!("{} {} → {}", a.0, a.1, b.1))
        .collect()
}

fn day(now: i64, at: Option<i64>) -> String {
    match at {
        None => "—".into(),
        Some(t) if t == now => "next cycle".into(),
        Some(t) => format!("day {:.0}", (t - now) as f64 / 86_400_000.0),
    }
}

fn print_report(r: &WhatIfReport, limit: usize) {
    let diff = changed(&SettingsChange {
        id: 0,
        at: r.now,
        by: String::new(),
        status: String::new(),
        old: r.before.clone(),
        new: r.after.clone(),
    });
    if diff.is_empty() {
        out!("what if: the saved settings, unchanged");
    } else {
        out!("what if: {}", diff.join("; "));
    }
    let l = &r.lifecycle;
    out!(
        "\n{} memories followed for {} days from {} (saved → proposed settings)",
        l.simulated,
        r.horizon_days,
        fmt_time(r.now)
    );
    out!(
        "next cycle: {} → {} state changes; within the horizon: {} → {} transitions, {} moved by the change",
        l.next_cycle_before,
        l.next_cycle_after,
        l.transitions_before,
        l.transitions_after,
        l.differing
    );
    out!("\n{:>14}  {:>7}  {:>8}", "when", "saved", "proposed");
    for b in &l.series {
        if b.before == 0 && b.after == 0 {
            continue;
        }
        let when = if b.to_day == 0.0 {
            "next cycle".to_string()
        } else {
            format!("days {:.0}–{:.0}", b.from_day, b.to_day)
        };
        out!("{when:>14}  {:>7}  {:>8}", b.before, b.after);
    }
    let states: Vec<String> = l
        .at_horizon_after
        .keys()
        .chain(l.at_horizon_before.keys())
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|s| {
            format!(
                "{s} {} → {}",
                l.at_horizon_before.get(&s).copied().unwrap_or(0),
                l.at_horizon_after.get(&s).copied().unwrap_or(0)
            )
        })
        .collect();
    out!("at the horizon: {}", states.join(", "));
    if !l.transitions.is_empty() {
        out!(
            "\ntransitions ({} listed; moved by the change first):",
            l.transitions.len().min(limit)
        );
        out!(
            "{:>7}  {:<8} {:<20} {:>11}  {:>11}  text",
            "id",
            "kind",
            "change",
            "saved",
            "proposed"
        );
        for t in &l.transitions {
            out!(
                "{:>7}  {:<8} {:<20} {:>11}  {:>11}  {}",
                t.memory_id,
                t.kind.as_str(),
                format!("{} → {}", t.from.as_str(), t.to.as_str()),
                day(r.now, t.before_at),
                day(r.now, t.after_at),
                clip(&t.text, 60)
            );
        }
    }
    let g = &r.golden;
    if g.queries.is_empty() {
        out!("\ngolden queries: none saved (somna golden add)");
    } else {
        out!(
            "\ngolden queries: mean R@k {:.3} → {:.3} ({} improve, {} regress)",
            g.mean_recall_before,
            g.mean_recall_after,
            g.improved,
            g.regressed
        );
        let rank = |v: &[Option<usize>]| -> String {
            v.iter()
                .map(|r| r.map_or("-".into(), |r| r.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        };
        for q in &g.queries {
            out!(
                "{:>5}  R@{} {:.2} → {:.2}  ranks {} → {}  {}",
                q.query_id,
                q.k,
                q.before_recall,
                q.after_recall,
                rank(&q.before_ranks),
                rank(&q.after_ranks),
                clip(&q.query, 60)
            );
        }
    }
    if let Some(s) = &r.search {
        out!("\nsearch {:?}: saved → proposed", clip(&s.before.query, 60));
        print_sides(&s.before, &s.after);
    }
    out!(
        "\n({:.0} ms: snapshot {:.0}, lifecycle {:.0}, embedding {:.0}, golden queries and search {:.0}, of it the search {:.0})",
        r.timings.total_ms,
        r.timings.snapshot_ms,
        r.timings.lifecycle_ms,
        r.timings.embed_ms,
        r.timings.golden_ms,
        r.timings.search_ms
    );
}

/// Both rankings side by side, each hit with its rank on the other side.
fn print_sides(before: &SearchResponse, after: &SearchResponse) {
    let n = before.hits.len().max(after.hits.len());
    let rank_in = |r: &SearchResponse, id: i64| {
        r.hits
            .iter()
            .position(|h| h.memory.id == id)
            .map_or("out".into(), |p| format!("#{}", p + 1))
    };
    for i in 0..n {
        let b = before.hits.get(i);
        let a = after.hits.get(i);
        let side = |h: Option<&somna_engine::retrieve::Hit>, other: &SearchResponse| {
            h.map_or(String::new(), |h| {
                format!(
                    "{:>6} {:.3} (other {:>3}) {}",
                    h.memory.id,
                    h.score,
                    rank_in(other, h.memory.id),
                    clip(&h.memory.text, 28)
                )
            })
        };
        out!("{:>3}  {:<62}  {}", i + 1, side(b, after), side(a, before));
    }
}
