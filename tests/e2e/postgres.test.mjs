// The app on a Postgres store (issue 15): it opens a `postgres://` store from its settings (a
// fresh schema of the test server that scripts/e2e.sh makes), never shows the password, and an agent writing
// through `somna mcp` in another process appears in it within a second: the app hears the
// commit by LISTEN/NOTIFY (it does not poll a Postgres store). A search then finds the agent's
// memory through pgvector's index in the server.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Session, sleep } from "./webdriver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const APP = process.env.SOMNA_APP_BIN;
const CLI = process.env.SOMNA_CLI_BIN;
const DRIVER = process.env.SOMNA_WEBDRIVER_URL ?? "http://127.0.0.1:4444";
const STORE = process.env.SOMNA_E2E_PG_STORE;
let s;
let python;

const COUNT = `Number((document.querySelector('[data-testid="browser-count"]')?.textContent ?? "").replace(/[^0-9]/g, "") || 0)`;

before(async () => {
  assert.ok(APP, "SOMNA_APP_BIN must point at the built app");
  assert.ok(CLI, "SOMNA_CLI_BIN must point at the built somna");
  assert.ok(STORE?.startsWith("postgres://"),
    "SOMNA_E2E_PG_STORE must name a fresh Postgres store (scripts/e2e.sh makes one with scripts/pg.sh schema)");
  python = execFileSync("bash", [join(repo, "scripts", "mcp-venv.sh")], { encoding: "utf8" }).trim();
  s = await Session.create(DRIVER, APP);
  await s.until(`/memories/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "") && globalThis.__somnaState`, 180000);
  // The app's own store, new when this file runs alone, offers the demo first.
  await startEmpty(15000).catch(() => {});
  // Opened as a person does: Settings → store location → the URL (with its password).
  await s.click('[data-testid="settings-open"]');
  await s.waitFor('[data-testid="store-path"]', { timeout: 30000 });
  await s.clear('[data-testid="store-path"]');
  await s.type('[data-testid="store-path"]', STORE);
  await s.click('[data-testid="store-open"]');
  // The page reloads on the new, empty store, which offers the demo; this test starts empty.
  await s.until(`/^0 memories/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "")`, 180000);
  await startEmpty(60000);
});

/// Waits for an empty store's offer of the demo data and declines it ("Start empty").
async function startEmpty(timeout) {
  await s.until(`(() => { const o = document.querySelector('[data-testid="startup"]');
    return !!o && !o.hidden && !!o.querySelector('[data-testid="start-empty"]'); })()`, timeout);
  await s.exec(`document.querySelector('[data-testid="start-empty"]').click();`);
  await s.until(`document.querySelector('[data-testid="startup"]').hidden`, 5000);
}

after(async () => {
  await s?.quit();
});

test("the app shows the Postgres store it opened, without the password", { timeout: 120000 }, async () => {
  await s.click('[data-testid="settings-open"]');
  await s.until(`document.querySelector('[data-testid="server-info"]')?.textContent.includes("status")`, 15000);
  const page = await s.exec(`return document.body.innerText + " " + [...document.querySelectorAll("input")].map((i) => i.value).join(" ");`);
  assert.match(page, /postgres:\/\/somna@127\.0\.0\.1:\d+\/somna/);
  assert.ok(!page.includes("somna-test"), "the password is never shown");
  await s.exec(`document.querySelector(".modal")?.remove();`);
});

test("an agent's write through `somna mcp` in another process appears within a second", { timeout: 240000 }, async () => {
  const before = await s.exec(`return ${COUNT};`);
  const texts = [
    "The zephyrine kite festival starts on the first windy Saturday.",
    "Zephyrine kites are flown from the north pier.",
  ];
  const agent = promisify(execFile)(python,
    [join(repo, "tests", "mcp", "mcp_add.py"), "stdio", CLI, STORE, "agent-pg", ...texts], { encoding: "utf8" });
  let done = false;
  let result;
  agent.then((r) => { result = r; done = true; }, (e) => { result = e; done = true; });
  // Watch the list while the agent runs (its process starts, loads the model, commits).
  let shownAt = null;
  const deadline = Date.now() + 180000;
  while (Date.now() < deadline && (shownAt === null || !done)) {
    if (shownAt === null && (await s.exec(`return ${COUNT};`)) >= before + texts.length) {
      shownAt = Date.now();
    }
    await sleep(shownAt === null ? 25 : 200);
  }
  assert.ok(done && !(result instanceof Error), `the agent failed: ${result?.stderr ?? result}`);
  const ids = JSON.parse(result.stdout.trim().split("\n").pop());
  assert.equal(ids.length, texts.length);
  assert.ok(shownAt !== null, "the agent's memories never appeared in the app");
  const returned = Number(/add_memory returned at (\d+)/.exec(result.stderr)?.[1]);
  assert.ok(returned > 0, `no time of the commit in: ${result.stderr}`);
  const latency = shownAt - returned;
  console.log(`somna mcp on Postgres: shown in the app ${latency} ms after the tool call returned`);
  assert.ok(latency < 1000, `shown ${latency} ms after the commit (want under 1 s)`);

  // The search runs on the server's pgvector index.
  await s.clear('[data-testid="search"]');
  await s.type('[data-testid="search"]', "zephyrine kite festival");
  await s.click('[data-testid="search-go"]');
  await s.until(`globalThis.__somnaState.search?.query === "zephyrine kite festival" && ${JSON.stringify(ids)}.includes(globalThis.__somnaState.search.hits[0]?.memory.id)`, 30000);
  assert.equal(await s.exec(`return globalThis.__somnaState.search.vector_path;`), "pgvector");
});
