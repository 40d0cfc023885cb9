// The panels for what the command line had alone: golden queries (saved from a search in the
// X-ray, run, their results), the cost and latency ledger, and the X-ray's token budget and
// fusion weights. Runs on the store it finds (fresh, or filled by the other files).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Session, sleep } from "./webdriver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const APP = process.env.SOMNA_APP_BIN;
const DRIVER = process.env.SOMNA_WEBDRIVER_URL ?? "http://127.0.0.1:4444";
const SHOTS = process.env.SOMNA_E2E_SHOTS;
const QUERY = "how many hours did the lamp run in September?";
let s;

async function shot(name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}

async function dismissToasts() {
  await s.exec(`document.querySelectorAll(".toast").forEach((t) => t.remove());`);
}

before(async () => {
  assert.ok(APP, "SOMNA_APP_BIN must point at the built app");
  s = await Session.create(DRIVER, APP);
});

after(async () => {
  await s?.quit();
});

test("a golden query saved from a search runs and its result shows in the golden panel", { timeout: 300000 }, async () => {
  // A fresh store offers the demo: start empty and import the small fixture instead.
  await s.until(`!!document.querySelector('[data-testid="start-empty"]') || /[0-9] memories/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "")`, 120000);
  if (await s.exec(`return !!document.querySelector('[data-testid="start-empty"]') && !document.querySelector('[data-testid="startup"]').hidden;`)) {
    await s.click('[data-testid="start-empty"]');
  }
  await s.click('[data-testid="import-open"]');
  await s.type('[data-testid="import-file"]', join(here, "fixtures", "lighthouse.jsonl"));
  await s.click('[data-testid="import-start"]');
  await s.waitFor('[data-testid="import-status"][data-done="true"]', { timeout: 120000 });
  await s.exec(`document.querySelector(".modal")?.remove();`);

  await s.clear('[data-testid="search"]');
  await s.type('[data-testid="search"]', QUERY);
  await s.click('[data-testid="search-go"]');
  await s.until(`globalThis.__somnaState.search?.query === ${JSON.stringify(QUERY)} && document.querySelector('[data-testid="xray-table"]') && !document.querySelector('[data-testid="xray"][data-pending]')`, 30000);
  // Tick the lamp's turn as the memory this query must find, and save the query. When
  // app.test.mjs ran first on this store, it edited that turn to say 415 hours (and the
  // re-import of the same turns adds nothing), so either figure is the lamp's turn.
  const id = await s.exec(`return globalThis.__somnaState.search.hits.find((h) => /lamp ran 41[25] hours/.test(h.memory.text))?.memory.id ?? 0;`);
  assert.ok(id > 0, "the lamp's turn is among the hits");
  assert.equal(await s.exec(`return document.querySelector('[data-testid="golden-save"]').disabled;`), true, "nothing ticked yet");
  await s.click(`[data-testid="xray-expect-${id}"]`);
  await s.waitFor('[data-testid="xray-golden"]', { pred: (t) => t.includes("1 memory ticked as expected") });
  await s.click('[data-testid="golden-save"]');
  await s.until(`[...document.querySelectorAll(".toast")].some((t) => t.textContent.includes("Saved golden query"))`, 15000);
  await dismissToasts();

  await s.click('[data-testid="tab-golden"]');
  await s.waitFor('[data-testid="golden-list"]', { pred: (t) => t.includes(QUERY) && /lamp ran 41[25] hours/.test(t) });
  await s.click('[data-testid="golden-run-all"]');
  await s.waitFor('[data-testid="golden-run-summary"]', { timeout: 60000, pred: (t) => /By hand/.test(t) && /mean R@k 1\.00/.test(t) });
  const outcomes = await s.text('[data-testid="golden-outcomes"]');
  assert.ok(outcomes.includes(QUERY), outcomes);
  // The run is in the history, and the query's row says its memory was found.
  await s.waitFor('[data-testid="golden-history"]', { pred: (t) => /by hand/.test(t) && /R@k 1\.00/.test(t) });
  assert.match(await s.text('[data-testid="golden-list"]'), /✓ #\d+/);
  await dismissToasts();
  await sleep(300);
  await shot("golden-panel");
});

test("the ledger panel shows what the operations cost, by operation and by hour", { timeout: 60000 }, async () => {
  await s.click('[data-testid="tab-ledger"]');
  await s.waitFor('[data-testid="ledger-op-table"]', { timeout: 30000 });
  const ops = await s.exec(`return [...document.querySelectorAll('[data-testid="ledger-op-table"] tbody tr')].map((tr) => tr.dataset.op);`);
  for (const op of ["search", "golden"]) assert.ok(ops.includes(op), `${op} in ${ops}`);
  assert.match(await s.text('[data-testid="ledger-totals"]'), /[0-9,]+ operations/);
  // The chart has a bar for this hour and a legend of the operations.
  assert.ok(await s.exec(`return document.querySelectorAll('[data-testid="ledger-chart"] svg rect[fill]:not([fill="transparent"])').length > 0;`));
  await s.exec(`document.querySelector('[data-testid="ledger-hours"]').closest("details").open = true;`);
  assert.ok(await s.exec(`return document.querySelectorAll('[data-testid="ledger-hour-table"] tbody tr').length > 0;`));
  await sleep(300);
  await shot("ledger-panel");
});

test("the X-ray re-runs the search with the budget and weights a person sets, and resets them", { timeout: 60000 }, async () => {
  await s.click('[data-testid="tab-xray"]');
  await s.exec(`document.querySelector('[data-testid="xray-tuning"]').open = true;`);
  await s.until(`document.querySelector('[data-testid="tune-semantic"]').value !== ""`, 10000);
  const set = (k, v) => s.exec(`const i = document.querySelector('[data-testid="tune-${k}"]'); i.value = "${v}"; i.dispatchEvent(new Event("input"));`);
  await set("window", 4096);
  for (const [k, v] of [["semantic", 0.8], ["lexical", 0.8], ["recency", 0.2], ["actor", 0.1], ["spatial", 0], ["usage", 0.1]]) await set(k, v);
  assert.match(await s.text('[data-testid="tune-sum"]'), /sum to 2\.00: they are scaled to sum to 1/);
  await s.click('[data-testid="tune-apply"]');
  await s.until(`globalThis.__somnaState.search?.budget_tokens === 4096 - 512 - 1024 && !document.querySelector('[data-testid="xray"][data-pending]')`, 30000);
  const w = await s.exec(`return globalThis.__somnaState.search.weights;`);
  assert.ok(Math.abs(w.recency - 0.1) < 1e-9 && Math.abs(w.actor - 0.05) < 1e-9, JSON.stringify(w));
  assert.match(await s.text('[data-testid="xray-in-force"]'), /your weights, a 4,096-token window/);
  assert.match(await s.text('[data-testid="xray-weights"]'), /^your weights/);
  await dismissToasts();
  await sleep(300);
  await shot("xray-tuning");
  await s.click('[data-testid="tune-reset"]');
  await s.until(`globalThis.__somnaState.search?.budget_tokens === 8192 - 512 - 1024 && !document.querySelector('[data-testid="xray"][data-pending]')`, 30000);
  assert.match(await s.text('[data-testid="xray-in-force"]'), /default weights, the default window/);
  assert.equal(await s.exec(`return document.querySelector('[data-testid="tune-semantic"]').value;`), "0.35");
});
