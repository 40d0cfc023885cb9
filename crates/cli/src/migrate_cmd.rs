//! `somna migrate --from A --to B`: copies a whole store into an empty one, between a SQLite
//! file and a Postgres database either way (or file to file), and proves the copy: a table
//! of row counts and SHA-256 checksums of every part of the store, read back from the
//! destination.
//!
//! The copy is the lossless export read into the destination in one transaction (ids,
//! embeddings, history, operations, clusters, layouts, golden runs, ledger, settings), so
//! an interrupted migration leaves the destination as it was: run it again.

use crate::output::print_json;
use crate::{job_with_bar, Ctx};
use anyhow::{bail, Context};
use serde::Serialize;
use sha2::{Digest, Sha256};
use somna_engine::ingest::ExportDoc;
use std::path::PathBuf;

/// One part of the store in the report.
#[derive(Debug, Serialize)]
struct Part {
    name: &'static str,
    source_rows: usize,
    copied_rows: usize,
    source_sha256: String,
    copied_sha256: String,
}

impl Part {
    fn same(&self) -> bool {
        self.source_rows == self.copied_rows && self.source_sha256 == self.copied_sha256
    }
}

/// Rows and checksum of each part of an export (its time of export left out).
fn parts(doc: &ExportDoc) -> anyhow::Result<Vec<(&'static str, usize, String)>> {
    fn part<T: Serialize>(
        name: &'static str,
        rows: &[T],
    ) -> anyhow::Result<(&'static str, usize, String)> {
        let bytes = serde_json::to_vec(rows)?;
        Ok((name, rows.len(), format!("{:x}", Sha256::digest(&bytes))))
    }
    let c = &doc.clusters;
    Ok(vec![
        part("memories (with embeddings)", &doc.memories)?,
        part("links", &doc.links)?,
        part("messages", &doc.messages)?,
        part("history", &doc.history)?,
        part("co-access pairs", &doc.co_access)?,
        part("operations (sleep cycles, curations)", &doc.operations)?,
        part("clusters", &c.clusters)?,
        part("cluster members", &c.members)?,
        part("cluster merges", &c.merges)?,
        part("liquid energies", &c.energies)?,
        part("layouts", &doc.layouts)?,
        part("layout history", &doc.layout_history)?,
        part("golden queries", &doc.golden_queries)?,
        part("golden runs", &doc.golden_runs)?,
        part("golden results", &doc.golden_results)?,
        part("ledger", &doc.ledger)?,
        part("contradictions", &doc.fact_contradictions)?,
        part("re-statements", &doc.fact_restated)?,
        part("highest memory id", &[doc.last_memory_id])?,
        part("settings", &doc.settings.iter().collect::<Vec<_>>())?,
    ])
}

pub fn migrate(ctx: &Ctx, from: PathBuf, to: PathBuf) -> anyhow::Result<()> {
    let at = |db: &PathBuf| Ctx {
        db: db.clone(),
        model_dir: ctx.model_dir.clone(),
        json: ctx.json,
        policies: None,
    };
    let source = at(&from).open().context("opening the source store")?;
    let destination = at(&to).open().context("opening the destination store")?;
    let doc = source.export()?;
    let before = destination.export()?;
    if !before.memories.is_empty() || !before.messages.is_empty() || !before.operations.is_empty() {
        bail!(
            "the destination already holds {} memories and {} messages: migrate into an empty store",
            before.memories.len(),
            before.messages.len()
        );
    }
    let (job, bar) = job_with_bar("migrate", ctx.json);
    destination.import_export(&doc, &job)?;
    bar.finish();
    let copied = destination.export()?;
    let report: Vec<Part> = parts(&doc)?
        .into_iter()
        .zip(parts(&copied)?)
        .map(
            |((name, source_rows, source_sha256), (_, copied_rows, copied_sha256))| Part {
                name,
                source_rows,
                copied_rows,
                source_sha256,
                copied_sha256,
            },
        )
        .collect();
    let all_same = report.iter().all(Part::same);
    let (from, to) = (source.stats()?.db_path, destination.stats()?.db_path);
    if ctx.json {
        print_json(&serde_json::json!({
            "from": from,
            "to": to,
            "identical": all_same,
            "parts": report,
        }))?;
    } else {
        println!("copied {from} into {to}");
        println!(
            "{:<38} {:>9} {:>9}  sha256 (source = copy)",
            "part", "source", "copy"
        );
        for p in &report {
            println!(
                "{:<38} {:>9} {:>9}  {} {}",
                p.name,
                p.source_rows,
                p.copied_rows,
                &p.source_sha256[..16],
                if p.same() { "=" } else { "DIFFERS" }
            );
        }
    }
    if !all_same {
        bail!("the copy differs from the source (see the parts marked DIFFERS)");
    }
    Ok(())
}
