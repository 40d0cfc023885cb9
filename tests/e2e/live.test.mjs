// Live updates: while the app runs, an agent writes memories through MCP (the official
// Python client, driving `somna mcp` over stdio in another process, then the app's own
// HTTP server); the app shows them without a restart: rows in the browser, points with
// positions in the 3D view, hits in a search.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "./webdriver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const APP = process.env.SOMNA_APP_BIN;
const CLI = process.env.SOMNA_CLI_BIN;
const DRIVER = process.env.SOMNA_WEBDRIVER_URL ?? "http://127.0.0.1:4444";
const SHOTS = process.env.SOMNA_E2E_SHOTS;
let s;
let python;

async function shot(name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}

function mcpAdd(args) {
  const out = execFileSync(python, [join(repo, "tests", "mcp", "mcp_add.py"), ...args], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop());
}

async function count() {
  return s.exec(`return Number((document.querySelector('[data-testid="browser-count"]')?.textContent ?? "").replace(/[^0-9]/g, "") || 0);`);
}

/// Waits until every id has a row count, a point and a 3D position; returns the time taken.
async function waitShown(ids, before, started) {
  await s.until(`Number(document.querySelector('[data-testid="browser-count"]').textContent.replace(/[^0-9]/g, "")) >= ${before + ids.length}`, 15000);
  const shownMs = Date.now() - started;
  const list = JSON.stringify(ids);
  await s.until(`(() => { const sp = globalThis.__somnaSpace;
    return ${list}.every((id) => sp.positionOf(id) !== null); })()`, 30000);
  return shownMs;
}

/// Starts the app's own server from the settings dialog (left open); its MCP URL and token.
async function startServer() {
  await s.click('[data-testid="settings-open"]');
  // The dialog shows the server's status once it has asked for it.
  await s.until(`document.querySelector('[data-testid="server-info"]')?.textContent.includes("status")`, 15000);
  await s.click('[data-testid="server-toggle"]');
  await s.waitFor('[data-testid="server-token"]', { timeout: 30000 });
  return { url: await s.text('[data-testid="server-mcp-url"]'), token: await s.text('[data-testid="server-token"]') };
}

before(async () => {
  assert.ok(APP, "SOMNA_APP_BIN must point at the built app");
  assert.ok(CLI, "SOMNA_CLI_BIN must point at the built somna");
  python = execFileSync("bash", [join(repo, "scripts", "mcp-venv.sh")], { encoding: "utf8" }).trim();
  s = await Session.create(DRIVER, APP);
  // The engine is open when the browser shows a count.
  await s.until(`/memories/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "") && globalThis.__somnaState`, 180000);
});

after(async () => {
  await s?.quit();
});

test("memories an agent adds through `somna mcp` (another process) appear without a restart", { timeout: 240000 }, async () => {
  const before = await count();
  const started = Date.now();
  const ids = mcpAdd(["stdio", CLI, process.env.SOMNA_DB, "agent-live",
    "The zephyrine kite festival starts on the first windy Saturday.",
    "Zephyrine kites are flown from the north pier.",
    "Bring spare zephyrine line, it snaps in gusts."]);
  assert.equal(ids.length, 3);
  const wroteMs = Date.now() - started;
  const shownMs = await waitShown(ids, before, started);
  console.log(`external MCP write: client done after ${wroteMs} ms, rows shown after ${shownMs} ms`);
  await shot("live-agent-rows");
  // The app's own index took the vectors in: a search finds them.
  await s.clear('[data-testid="search"]');
  await s.type('[data-testid="search"]', "zephyrine kite festival");
  await s.click('[data-testid="search-go"]');
  await s.until(`globalThis.__somnaState.search?.query === "zephyrine kite festival" && ${JSON.stringify(ids)}.includes(globalThis.__somnaState.search.hits[0]?.memory.id)`, 30000);
  await s.exec(`document.querySelector('[data-testid="search"]').value = ""; document.querySelector(".search-info")?.replaceChildren();`);
});

test("the app starts its own server, shows address and token; an agent's writes through it appear", { timeout: 240000 }, async () => {
  const { url, token } = await startServer();
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.match(token, /^[0-9a-f]{64}$/);
  await shot("settings-server");
  const before = await count();
  const started = Date.now();
  const ids = mcpAdd(["http", url, token, "agent-http", "The app's own server stored this quokka note.", "A second quokka note over HTTP."]);
  assert.equal(ids.length, 2);
  const shownMs = await waitShown(ids, before, started);
  console.log(`MCP over the app's HTTP server: rows shown after ${shownMs} ms`);
  // Stopping it: the token no longer opens anything because nothing listens.
  await s.click('[data-testid="server-toggle"]');
  await s.until(`!document.querySelector('[data-testid="server-token"]')`, 15000);
  await s.exec(`document.querySelector(".modal")?.remove();`);
  assert.throws(() => mcpAdd(["http", url, token, "agent-http", "nobody listens"]));
});

test("opening another store moves the app's running server to it", { timeout: 300000 }, async () => {
  const other = join(process.env.SOMNA_HOME ?? dirname(process.env.SOMNA_DB), "switched", "other.db");
  const { url, token } = await startServer();
  await s.clear('[data-testid="store-path"]');
  await s.type('[data-testid="store-path"]', other);
  await s.click('[data-testid="store-open"]');
  // The page reloads on the new, empty store.
  await s.until(`/^0 memories/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "")`, 180000);
  // The empty store offers the demo once its first refresh is done; start empty instead.
  await s.waitFor('[data-testid="start-empty"]', { timeout: 60000 });
  await s.click('[data-testid="start-empty"]');
  await s.click('[data-testid="settings-open"]');
  await s.waitFor('[data-testid="server-store"]', { timeout: 30000, pred: (t) => t === other });
  assert.equal(await s.text('[data-testid="server-mcp-url"]'), url, "same address after the switch");
  // An agent's write through the same address lands in the new store.
  const ids = mcpAdd(["http", url, token, "agent-switch", "After the switch this note about marmots goes to the new store."]);
  assert.equal(ids.length, 1);
  await s.exec(`document.querySelector(".modal")?.remove();`);
  await s.until(`/^1 memor/.test(document.querySelector('[data-testid="browser-count"]')?.textContent ?? "")`, 15000);
  await s.click('[data-testid="settings-open"]');
  await s.waitFor('[data-testid="server-token"]', { timeout: 30000 });
  await s.click('[data-testid="server-toggle"]');
  await s.until(`!document.querySelector('[data-testid="server-token"]')`, 15000);
  await s.exec(`document.querySelector(".modal")?.remove();`);
});
