// The What-if panel: a person changes lifecycle and forgetting thresholds and the fusion
// weights, sees which memories would change state and when and how the current search would
// rank, and that nothing was written; then applies the change and undoes it.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session, sleep } from "./webdriver.mjs";

const APP = process.env.SOMNA_APP_BIN;
const DRIVER = process.env.SOMNA_WEBDRIVER_URL ?? "http://127.0.0.1:4444";
const SHOTS = process.env.SOMNA_E2E_SHOTS;
let s;

async function shot(name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}

/// Runs an async script body in the page and resolves with what it returns.
function run(body) {
  return s.execAsync(`const done = arguments[arguments.length - 1];
    (async () => { ${body} })().then(done, (e) => done({ error: String(e) }));`);
}

/// What a simulation must leave as it was: the counts by state, the settings, their log,
/// the sleep cycles and the store's last change.
function written() {
  return run(`const r = globalThis.__somnaApi.rpc;
    const [stats, settings, log, cycles, timeline] = await Promise.all([
      r.stats(null), r.settings(null), r.settings_history(50), r.sleep_history(50), r.timeline(null)]);
    return { memories: stats.memories, by_state: stats.by_state, settings, log: log.length, cycles: cycles.length, last: timeline.last };`);
}

/// Sets a number input the way typing does (an input event per change).
async function setInput(testid, value) {
  await s.exec(`const el = document.querySelector('[data-testid="${testid}"]');
    el.value = ${JSON.stringify(String(value))};
    el.dispatchEvent(new Event("input", { bubbles: true }));`);
}

before(async () => {
  assert.ok(APP, "SOMNA_APP_BIN must point at the built app");
  s = await Session.create(DRIVER, APP);
  // A fresh store (this file run alone) gets the demo data; after app.test.mjs it has it.
  await s.until(`document.querySelector('[data-testid="load-demo"]') || Number(document.querySelector('[data-testid="browser-count"]')?.textContent.replace(/[^0-9]/g, "") || 0) > 1000`, 120000);
  if (await s.exec(`return !!document.querySelector('[data-testid="load-demo"]') && !document.querySelector('[data-testid="startup"]').hidden;`)) {
    await s.click('[data-testid="load-demo"]');
  }
  await s.until(`Number(document.querySelector('[data-testid="browser-count"]')?.textContent.replace(/[^0-9]/g, "") || 0) > 1000`, 480000);
  // The demo import (and the clustering after it) has ended: nothing else writes meanwhile.
  await s.until(`!document.querySelector('[data-testid^="job-"]')`, 480000);
});

after(async () => {
  await s?.quit();
});

test("what-if: a change of settings shows its state changes over time and the search both ways, writes nothing, then applies and undoes", { timeout: 300000 }, async () => {
  // A search, so the panel ranks it both ways.
  await s.clear('[data-testid="search"]');
  await s.type('[data-testid="search"]', "lamp hours in September");
  await s.click('[data-testid="search-go"]');
  await s.until(`globalThis.__somnaState.search?.query === "lamp hours in September"`, 30000);

  const before = await written();
  await s.click('[data-testid="tab-whatif"]');
  await s.waitFor('[data-testid="whatif-summary"]', { timeout: 60000, pred: (t) => t.includes("unchanged") && t.includes("nothing written") });
  // Unchanged settings move nothing.
  assert.equal(await s.text('[data-testid="whatif-differing"]'), "0");

  // Archive after 14 days instead of 90, forget more, and weigh meaning over words.
  await setInput("whatif-cold_after_days", 10);
  await setInput("whatif-archive_after_days", 14);
  await setInput("whatif-forget_importance", 0.6);
  await setInput("whatif-w-semantic", 0.6);
  await setInput("whatif-w-lexical", 0.15);
  await s.waitFor('[data-testid="whatif-summary"]', { timeout: 60000, pred: (t) => t.includes("Proposed:") && t.includes("archive after") });
  await s.until(`Number(document.querySelector('[data-testid="whatif-differing"]').textContent.replace(/[^0-9]/g, "")) > 0`, 60000);
  const rows = await s.exec(`return [...document.querySelectorAll('[data-testid="whatif-row"]')].map((r) => r.textContent).slice(0, 5);`);
  assert.ok(rows.length > 0 && rows.some((r) => r.includes("→")), JSON.stringify(rows));
  const chartBars = await s.exec(`return document.querySelectorAll('[data-testid="whatif-chart"] rect').length;`);
  assert.ok(chartBars > 4, `chart bars: ${chartBars}`);
  const searchText = await s.text('[data-testid="whatif-search"]');
  assert.match(searchText, /lamp hours in September/);
  // The report itself says what the proposed settings do to the search and the store.
  const report = await run(`return await globalThis.__somnaApi.rpc.what_if({ patch: { archive_after_days: 14, cold_after_days: 10, decay: null, half_life_days: null, decay_alpha: null, importance_floor: null, warm_after_days: null, forget_importance: 0.6, forget_max_words: null, weights: null }, query: "lamp hours in September", k: 5, horizon_days: 10, limit: 50, now_ms: null });`);
  const l = report.lifecycle;
  assert.ok(l.differing > 0 && (l.at_horizon_after.archived ?? 0) > (l.at_horizon_before.archived ?? 0),
    JSON.stringify({ after: l.at_horizon_after, before: l.at_horizon_before }));
  assert.equal(report.search.before.hits.length, 5);
  await s.exec(`document.querySelectorAll(".toast").forEach((t) => t.remove());`);
  await sleep(500);
  await shot("whatif");

  // Nothing was written by any of it.
  assert.deepEqual(await written(), before);

  // Apply saves the settings, recorded and undoable.
  await s.click('[data-testid="whatif-apply"]');
  await s.waitFor('[data-testid="whatif-history"]', { timeout: 30000, pred: (t) => /#\d+/.test(t) && t.includes("archive after") });
  const saved = await run(`return await globalThis.__somnaApi.rpc.settings(null);`);
  assert.equal(saved.sleep.archive_after_days, 14);
  assert.equal(saved.weights.semantic, 0.6);
  // The panel now starts from the saved settings: nothing proposed.
  await s.waitFor('[data-testid="whatif-summary"]', { timeout: 60000, pred: (t) => t.includes("unchanged") });
  await shot("whatif-applied");
  await s.exec(`[...document.querySelectorAll('[data-testid^="whatif-change-"] button')][0].click();`);
  await s.waitFor('[data-testid="whatif-history"]', { timeout: 30000, pred: (t) => t.includes("undone") });
  const restored = await run(`return await globalThis.__somnaApi.rpc.settings(null);`);
  assert.deepEqual(restored, before.settings);
});
