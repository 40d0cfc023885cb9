//! Human-readable printing and progress bars for the CLI.

/// `println!` that ends the program quietly (status 0) when stdout's reader has gone away,
/// as in `somna list | head`, instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            panic!("writing to stdout: {e}");
        }
    }};
}

use indicatif::{ProgressBar, ProgressStyle};
use somna_engine::eval::locomo::{Report, Scores};
use somna_engine::index::SearchPath;
use somna_engine::retrieve::{Hit, SearchResponse};
use somna_engine::{Memory, MemoryDetail, Progress, ProgressEvent, Stats};
use std::sync::Mutex;

pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    out!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// An indicatif bar fed by engine progress events; silent with --json or when stderr is
/// not a terminal's concern (indicatif hides itself then).
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    label: &'static str,
    hidden: bool,
}

impl Bar {
    pub fn new(label: &'static str, hidden: bool) -> Self {
        Self {
            bar: Mutex::new(None),
            label,
            hidden,
        }
    }

    pub fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn report(&self, e: ProgressEvent) {
        if self.hidden {
            return;
        }
        let mut slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        let bar = slot.get_or_insert_with(|| {
            let b = if e.total > 0 {
                ProgressBar::new(e.total)
            } else {
                ProgressBar::new_spinner()
            };
            let template = if e.total > 0 {
                "{prefix:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})"
            } else {
                "{prefix:>10} {spinner} {pos} ({per_sec})"
            };
            b.set_style(
                ProgressStyle::with_template(template)
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b.set_prefix(self.label);
            b
        });
        if e.total > 0 {
            bar.set_length(e.total);
        }
        bar.set_position(e.done);
        bar.set_message(e.stage);
    }
}

pub fn fmt_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "?".into())
}

/// An instant to the second, in UTC (time travel's instants are often seconds apart).
pub fn fmt_instant(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| "?".into())
}

/// An (untrusted) text safe to print on a terminal: control characters (escape sequences,
/// carriage returns, newlines) and the invisible characters that reorder or hide text
/// (bidi controls, zero-width marks) are written as escapes such as `\n` or `\u{202e}`;
/// everything else, quotes and apostrophes included, prints as it is ("John's", not
/// `John\'s` as `str::escape_debug` writes it).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if c.is_control() || hidden {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// At most `n` characters of an (untrusted) text, made [`printable`].
pub fn clip(text: &str, n: usize) -> String {
    let mut s = printable(&text.chars().take(n).collect::<String>());
    if text.chars().count() > n {
        s.push('…');
    }
    s
}

/// One line per memory: id, kind, state, who, text (control characters escaped).
pub fn memory_line(m: &Memory) -> String {
    let text = printable(&m.text.chars().take(100).collect::<String>());
    format!(
        "#{:<6} {:<7} {:<9} {:<12} {}{}",
        m.id,
        m.kind,
        if m.deleted_at.is_some() {
            "deleted".to_string()
        } else {
            m.state.to_string()
        },
        m.w5h1.who.as_deref().unwrap_or("-"),
        text,
        if m.text.chars().count() > 100 {
            "…"
        } else {
            ""
        }
    )
}

fn hit_line(h: &Hit) -> String {
    let s = &h.signals;
    format!(
        "{:>3} {:.3} sem {:.2} lex {:.2} rec {:.2} act {:.2} nb {:.2} mmr {:>6} {} {}",
        h.rank.map_or("-".into(), |r| r.to_string()),
        h.score,
        s.semantic,
        s.lexical,
        s.recency,
        s.actor,
        s.neighbour,
        h.mmr_score.map_or("-".into(), |m| format!("{m:.3}")),
        if h.packed { "P" } else { " " },
        memory_line(&h.memory)
    )
}

pub fn print_search(r: &SearchResponse) {
    out!(
        "route {:?} ({}), mode {:?}, {} candidates, {:.1} ms (embed {:.1}, vector {:.1} {:?}, lexical {:.1})",
        r.route, r.route_reason, r.mode, r.candidates_considered, r.timings.total_ms,
        r.timings.embed_ms, r.timings.vector_ms, r.vector_path, r.timings.lexical_ms
    );
    if !r.actors.is_empty() {
        out!("actors: {}", r.actors.join(", "));
    }
    let q = &r.question;
    if q.asks_when || !q.times.is_empty() || !q.entities.is_empty() {
        let mut read = Vec::new();
        if q.asks_when {
            read.push("asks when".to_string());
        }
        if !q.times.is_empty() {
            read.push(format!("names {}", q.times.join("; ")));
        }
        if !q.entities.is_empty() {
            read.push(format!("about {}", q.entities.join(", ")));
        }
        out!("the question: {}", read.join(" · "));
    }
    for h in &r.hits {
        out!("{}", hit_line(h));
        if !h.reasons.is_empty() {
            let why: Vec<String> = h.reasons.iter().map(ToString::to_string).collect();
            out!("      why: {}", why.join(" · "));
        }
    }
    if !r.connected.is_empty() {
        out!("connected:");
        for h in &r.connected {
            out!("      {}", memory_line(&h.memory));
        }
    }
    out!(
        "packed {} memories, {} of {} tokens (P = packed)",
        r.context.len(),
        r.used_tokens,
        r.budget_tokens
    );
}

pub fn print_detail(d: &MemoryDetail) {
    let m = &d.memory;
    out!("{}", memory_line(m));
    out!("  text:        {}", printable(&m.text));
    for (k, v) in [
        ("who", &m.w5h1.who),
        ("when", &m.w5h1.when),
        ("where", &m.w5h1.where_),
        ("why", &m.w5h1.why),
        ("how", &m.w5h1.how),
    ] {
        if let Some(v) = v {
            out!("  {k:<12} {}", printable(v));
        }
    }
    out!(
        "  conversation {} / {}",
        m.conversation.as_deref().unwrap_or("-"),
        m.session.as_deref().unwrap_or("-")
    );
    out!(
        "  importance {:.2}  novelty {:.2}  accesses {}  source {}  l_score {:.3}",
        m.importance,
        m.novelty,
        m.access_count,
        m.source,
        m.l_score
    );
    out!(
        "  created {}  updated {}",
        fmt_time(m.created_at),
        fmt_time(m.updated_at)
    );
    if let Some(from) = m.valid_from {
        let until = m.valid_to.map_or("now".to_string(), fmt_time);
        out!("  valid        {} to {until}", fmt_time(from));
    }
    if let Some(by) = m.superseded_by {
        out!("  superseded by #{by}");
    }
    out!("  metadata {}", m.metadata);
    if !d.provenance.is_empty() {
        out!("provenance:");
        for p in &d.provenance {
            out!("  {}", memory_line(p));
        }
    }
    if !d.links.is_empty() {
        out!("links:");
        for l in &d.links {
            out!("  {} -> {} {:?} {:.3}", l.src, l.dst, l.kind, l.score);
        }
    }
    out!("history:");
    for h in &d.history {
        out!("  {} {} by {}", fmt_time(h.created_at), h.event, h.actor);
    }
}

pub fn print_stats(s: &Stats) {
    out!("store        {}", s.db_path);
    out!("memories     {} ({} deleted)", s.memories, s.deleted);
    for (k, n) in &s.by_kind {
        out!("  {k:<10} {n}");
    }
    for (k, n) in &s.by_state {
        out!("  {k:<10} {n}");
    }
    out!("links        {}", s.links);
    match s.vector_index {
        SearchPath::Pgvector => out!(
            "index        pgvector in the store, {} vectors ({} held here; {} × {})",
            s.indexed,
            s.vectors_held,
            s.embedding_model,
            s.dim
        ),
        _ => out!(
            "index        {} vectors, {} tombstones ({} × {})",
            s.indexed,
            s.index_tombstones,
            s.embedding_model,
            s.dim
        ),
    }
    out!("conversations:");
    for (c, n) in &s.conversations {
        out!("  {c:<24} {n} messages");
    }
}

pub fn scores_row(name: &str, s: &Scores) -> String {
    format!(
        "{name:<14} {:>5} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>8.3}",
        s.questions, s.recall_at_5, s.recall_at_10, s.recall_at_20, s.all_at_10, s.ndcg_at_10
    )
}

pub fn print_locomo(r: &Report) {
    out!(
        "{:<14} {:>5} {:>7} {:>7} {:>7} {:>7} {:>8}",
        "category",
        "n",
        "R@5",
        "R@10",
        "R@20",
        "All@10",
        "NDCG@10"
    );
    let names = [
        "",
        "1 multi-hop",
        "2 temporal",
        "3 open-domain",
        "4 single-hop",
        "5 adversarial",
    ];
    for (c, s) in &r.by_category {
        let name = names.get(*c as usize).copied().unwrap_or("other");
        out!("{}", scores_row(name, s));
    }
    out!("{}", scores_row("overall", &r.overall));
    out!(
        "({} questions without evidence not scored; search p50 {:.1} ms, p99 {:.1} ms)",
        r.unscored,
        r.search_ms_p50,
        r.search_ms_p99
    );
}

/// One progress bar per stage of a job (a sleep cycle's phases, an evaluation's steps),
/// hidden for `--json`.
pub(crate) struct StageBars {
    hidden: bool,
    current: Mutex<Option<(&'static str, ProgressBar)>>,
}

impl StageBars {
    pub(crate) fn new(hidden: bool) -> Self {
        Self {
            hidden,
            current: Mutex::new(None),
        }
    }

    pub(crate) fn finish(&self) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_keeps_quotes_and_escapes_what_a_terminal_would_obey() {
        assert_eq!(
            printable("John's \"Aragorn\" — ок 🌟"),
            "John's \"Aragorn\" — ок 🌟"
        );
        assert_eq!(printable("a\nb\r\x1b[31mred"), "a\\nb\\r\\u{1b}[31mred");
        assert_eq!(printable("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(clip("John's dog", 6), "John's…");
    }
}
