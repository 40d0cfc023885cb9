// Somna's UI: a top bar (search, import, export, settings, running jobs), the memory
// browser on the left, the views in the middle (3D space, retrieval X-ray, bubble graph,
// sleep, clusters), and the selected memory's details on the right.

import { api, rpc, onEvent, onProgress, onJobDone, waitJob, CommandError } from "./api";
import { Browser } from "./browser";
import { Detail } from "./detail";
import { h, clear, fmtInt, toast } from "./dom";
import { Graph } from "./graph/view";
import { Space } from "./space/view";
import { methodLabel, type ProjectionMethod } from "./space/toolbar";
import { bus, parseLayout, parsePoints, select, state } from "./store";
import type { ProgressPayload, Route, ScoreMode, Stats, Status } from "./types";
import { Xray, searchSummary } from "./xray";
import { SleepPanel } from "./sleep";
import { ClusterPanel } from "./clusters";
import { recordSpan, timed } from "./render/perf";
import { openImportDialog, openExportDialog, openSettingsDialog } from "./dialogs";
import { TimeScrubber } from "./timeline";
import { GoldenPanel } from "./golden";
import { LedgerPanel } from "./ledger";
import { WhatIfPanel } from "./whatif";
import { warmFonts } from "./fontwarm";

const app = document.getElementById("app")!;

const browser = new Browser();
const detail = new Detail();
const space = new Space();
const xray = new Xray(() => void runSearch(false));
const graph = new Graph();
const sleep = new SleepPanel();
const clusters = new ClusterPanel();
const golden = new GoldenPanel();
const ledger = new LedgerPanel();
const whatif = new WhatIfPanel();

// ---- top bar ------------------------------------------------------------------------
const searchInput = h("input", {
  type: "search", placeholder: "Search memories (hybrid: semantic + lexical + recency + actor + usage)",
  "aria-label": "search", "data-testid": "search", spellcheck: "false",
});
const kSel = h("select", { "aria-label": "k" }, ...[5, 10, 20, 50].map((k) => h("option", { value: String(k) }, `k=${k}`)));
kSel.value = "10";
const modeSel = h("select", { "aria-label": "score mode" }, h("option", { value: "fusion" }, "fusion"), h("option", { value: "context" }, "context"));
const routeSel = h("select", { "aria-label": "route" },
  ...["auto", "direct", "pattern", "causal", "hybrid"].map((r) => h("option", { value: r }, r === "auto" ? "route: auto" : r)));
const searchInfo = h("span", { class: "muted search-info", "data-testid": "search-info" });
const clearBtn = h("button", { class: "icon", title: "clear search", hidden: true, onclick: () => clearSearch() }, "✕");
const statsEl = h("span", { class: "stats muted", "data-testid": "stats" });
const liveEl = h("span", { class: "muted", "data-testid": "live" });
const jobsEl = h("div", { class: "jobs", "data-testid": "jobs" });
const topbar = h("header", { class: "topbar" },
  h("div", { class: "brand" }, h("span", { class: "logo" }), "Somna"),
  h("form", { class: "searchbar", onsubmit: (e: Event) => { e.preventDefault(); void runSearch(true); } },
    searchInput, kSel, modeSel, routeSel,
    h("button", { type: "submit", class: "primary", "data-testid": "search-go" }, "Search"), clearBtn),
  searchInfo,
  jobsEl,
  liveEl,
  statsEl,
  h("button", { onclick: () => openImportDialog(), "data-testid": "import-open" }, "Import"),
  h("button", { onclick: () => openExportDialog() }, "Export"),
  h("button", { class: "icon", title: "settings", onclick: () => openSettingsDialog(), "data-testid": "settings-open" }, "⚙"));

// ---- views --------------------------------------------------------------------------
type Tab = "space" | "xray" | "graph" | "sleep" | "clusters" | "golden" | "ledger" | "whatif";
const tabs: { id: Tab; label: string; el: HTMLElement }[] = [
  { id: "space", label: "Space", el: h("div", { class: "view space-view" }) },
  { id: "xray", label: "Retrieval X-ray", el: xray.el },
  { id: "graph", label: "Bubble graph", el: graph.el },
  { id: "sleep", label: "Sleep", el: sleep.el },
  { id: "clusters", label: "Clusters", el: clusters.el },
  { id: "golden", label: "Golden queries", el: golden.el },
  { id: "ledger", label: "Ledger", el: ledger.el },
  { id: "whatif", label: "What-if", el: whatif.el },
];
tabs[0].el.append(space.el);
const tabBar = h("nav", { class: "tabs", role: "tablist" }, ...tabs.map((t) =>
  h("button", { role: "tab", "data-tab": t.id, "data-testid": `tab-${t.id}`, onclick: () => showTab(t.id) }, t.label)));
const views = h("div", { class: "views" }, ...tabs.map((t) => t.el));
const scrubber = new TimeScrubber((steps, at) => space.setTime(steps, at));
const center = h("main", { class: "center" }, tabBar, views, scrubber.el);

let currentTab: Tab = "space";
function showTab(id: Tab): void {
  currentTab = id;
  for (const t of tabs) t.el.hidden = t.id !== id;
  for (const b of tabBar.querySelectorAll("button")) b.setAttribute("aria-selected", String(b.dataset.tab === id));
  // One WebGL canvas serves both the Space tab and the X-ray (which shows it beside the table).
  if (id === "xray") xray.spaceSlot.append(space.el);
  else if (id === "space") tabs[0].el.append(space.el);
  graph.setActive(id === "graph");
  if (id === "sleep") void sleep.refresh();
  if (id === "clusters") void clusters.refresh();
  if (id === "golden") void golden.refresh();
  if (id === "ledger") void ledger.refresh();
  if (id === "whatif") void whatif.refresh();
  space.requestFrame();
}

app.append(topbar, h("div", { class: "body" }, browser.el, center, detail.el));
// Handles for the end-to-end tests and for poking at the app from the web inspector.
// `__somnaSettled()`: no store change waits to be shown, no point refresh runs, and no
// point glides (what a test waits for before reading positions).
const settled = () => flushTimer === null && timePlacementTimer === null && pointsInFlight === 0 && !space.busy;
Object.assign(globalThis, { __somnaScrubber: scrubber, __somnaSpace: space, __somnaState: state, __somnaGraph: graph, __somnaSelect: select, __somnaApi: { rpc, waitJob }, __somnaSettled: settled });
showTab("space");

// ---- search -------------------------------------------------------------------------
/// Runs the search box's query; `reveal` switches to the X-ray (a user's search does, a
/// refresh after a change does not).
async function runSearch(reveal = true): Promise<void> {
  const q = searchInput.value;
  if (!q.trim()) {
    clearSearch();
    return;
  }
  try {
    const req = {
      query: q, k: Number(kSel.value), mode: modeSel.value as ScoreMode,
      route: routeSel.value === "auto" ? null : (routeSel.value as Route), filters: { ...state.filter },
    };
    const r = await api.search(req, xray.tuning);
    xray.request = req;
    state.search = r;
    clearBtn.hidden = false;
    searchInfo.textContent = searchSummary(r);
    bus.emit("search");
    // The X-ray shows the query in the 3D view beside its ranked table.
    if (reveal && currentTab !== "xray") showTab("xray");
  } catch (e) {
    toast((e as Error).message, "error");
  }
}

function clearSearch(): void {
  searchInput.value = "";
  state.search = null;
  clearBtn.hidden = true;
  searchInfo.textContent = "";
  bus.emit("search");
}
bus.on("filter", () => {
  if (state.search) void runSearch(false);
}, "main");
bus.on("asof", () => {
  scheduleTimePlacement();
}, "main");

// Time travel moves the points to where they were (and re-runs the search as of then): each
// full computation of a layout is kept (aligned to the one before it), and the store as of
// an instant places today's points as the computation in force then did. Asked for once the
// scrubber rests for a moment, then the points glide there (and back when "Now" returns).
const TIME_PLACEMENT_MS = 120;
let timePlacementTimer: ReturnType<typeof setTimeout> | null = null;
let timePlacementToken = 0;
function scheduleTimePlacement(): void {
  if (timePlacementTimer !== null) clearTimeout(timePlacementTimer);
  timePlacementTimer = setTimeout(() => {
    timePlacementTimer = null;
    // The search too runs again on the store as it was then, once the scrubber rests.
    if (state.search) void runSearch(false);
    void placeAtTime(state.asOf);
  }, TIME_PLACEMENT_MS);
}
async function placeAtTime(at: number | null): Promise<void> {
  const points = state.points;
  if (!points || points.n === 0) return;
  const token = ++timePlacementToken;
  pointsInFlight++;
  try {
    const buf = await api.layoutData(method, 3, at);
    // A newer instant, a point refresh or another method since: that one places them.
    if (token !== timePlacementToken || state.points !== points || state.asOf !== at) return;
    await space.setData(points, parseLayout(buf, method), true);
  } catch {
    /* no layout computed yet: the refresh that computes one places the points */
  } finally {
    pointsInFlight--;
  }
}
// Applied settings change the fusion weights searches rank with.
bus.on("settings", () => {
  if (state.search) void runSearch(false);
}, "main");

// ---- jobs ---------------------------------------------------------------------------
const jobRows = new Map<number, HTMLElement>();
const JOB_SHOW_AFTER_MS = 400;
void onProgress((p: ProgressPayload) => {
  let row = jobRows.get(p.job);
  if (!row) {
    row = h("div", { class: "job", "data-testid": `job-${p.kind}` },
      h("span", { class: "label" }), h("progress", { max: "1", value: "0" }),
      h("button", { class: "icon", title: "cancel", onclick: () => void api.cancelJob(p.job) }, "✕"));
    jobRows.set(p.job, row);
    // A job shows once it has run for a moment: the layouts that follow each refresh end in
    // a fraction of a second, and a row that comes and goes each time only flickers (and
    // costs the page a layout and a paint each way).
    const shown = row;
    setTimeout(() => { if (jobRows.get(p.job) === shown) jobsEl.append(shown); }, JOB_SHOW_AFTER_MS);
  }
  (row.querySelector(".label") as HTMLElement).textContent = `${p.kind}: ${p.stage} ${fmtInt(p.done)}/${fmtInt(p.total)}`;
  const bar = row.querySelector("progress") as HTMLProgressElement;
  bar.max = Math.max(1, p.total);
  bar.value = p.done;
});
void onJobDone((d) => {
  jobRows.get(d.job)?.remove();
  jobRows.delete(d.job);
  jobsEnded();
  if (!d.ok && d.error) {
    toast(d.error.code === "cancelled" ? `${d.kind} cancelled` : `${d.kind} failed: ${d.error.message}`, d.error.code === "cancelled" ? "info" : "error");
  }
  if (d.ok && d.kind === "import") {
    toast("import finished");
    void refreshAll(true);
  }
});

// ---- data refresh -------------------------------------------------------------------
let method: ProjectionMethod = "pca";
space.setMethodHandler((m) => {
  if (m === method) return;
  method = m;
  space.setMethod(m);
  space.resetNormalisation();
  void refreshPoints(false, false);
});

async function refreshStats(): Promise<Stats | null> {
  try {
    const s = await api.stats();
    const text = `${fmtInt(s.memories)} memories · ${s.conversations.length} conversations · ${fmtInt(s.links)} links`;
    if (statsEl.textContent !== text) statsEl.textContent = text;
    browser.setStats(s);
    return s;
  } catch {
    return null;
  }
}

let pointsToken = 0;
/// Point refreshes under way (fetching the point data or the layout, or installing them).
let pointsInFlight = 0;
/// Reloads point attributes and the layout of the current method; `full` asks for a full
/// recompute instead of the cached layout with incremental placement.
async function refreshPoints(animate: boolean, full: boolean): Promise<void> {
  const token = ++pointsToken;
  pointsInFlight++;
  try {
    const buf = await api.pointAttributes();
    if (token !== pointsToken) return;
    state.points = timed("refresh.parsePoints", () => parsePoints(buf));
    bus.emit("points");
    if (state.points.n === 0) {
      await space.setData(state.points, null, false);
      space.setStatus("no memories yet");
      return;
    }
    space.setStatus(`${methodLabel(method)}: computing layout of ${fmtInt(state.points.n)} memories…`);
    const job = await api.computeLayout(method, 3, full);
    const summary = await waitJob(job);
    if (token !== pointsToken) return;
    const layoutBuf = await api.layoutData(method, 3, state.asOf);
    const layout = timed("refresh.parseLayout", () => parseLayout(layoutBuf, method));
    const t0 = performance.now();
    const installed = space.setData(state.points, layout, animate);
    recordSpan("refresh.setData.sync", t0);
    await installed;
    space.setStatus(`${methodLabel(method)} · ${fmtInt(summary.points)} points` +
      (summary.placed_incrementally ? ` · ${fmtInt(summary.placed_incrementally)} placed incrementally` : ""));
    bus.emit("layout");
  } catch (e) {
    if (e instanceof CommandError && e.code === "cancelled") {
      space.setStatus("layout cancelled");
      return;
    }
    space.setStatus(`layout failed: ${(e as Error).message}`);
  } finally {
    pointsInFlight--;
  }
}

// Imports keep the store clustered (the engine's keep_clustered, run at the end of every
// import job), so the views only read the labels here.
async function refreshClusterLabels(): Promise<void> {
  try {
    const cs = await api.clusters();
    state.clusterLabels = new Map(cs.map((c) => [c.id, c.label]));
    state.clusterGroups = new Map(cs.flatMap((c) => (c.group ? [[c.id, c.group] as const] : [])));
    bus.emit("clusters");
  } catch {
    /* clusters are optional until computed */
  }
}

async function refreshAll(animate: boolean): Promise<void> {
  const s = await refreshStats();
  browser.setActors(await api.actors().catch(() => []));
  browser.reload();
  await refreshPoints(animate, false);
  await refreshClusterLabels();
  if (s && s.memories === 0) showFirstRun();
}
bus.on("data", () => {
  // Search results hold copies of the memories: re-run the search so edits show.
  if (state.search) void runSearch(false);
  void refreshStats();
  // While a job runs the points are placed without the glide: each animated frame is a
  // full raster of the view, and refreshes come every second.
  void refreshPoints(!jobRows.size, false);
}, "main");
(globalThis as unknown as { somnaRefresh: (full: boolean) => Promise<void> }).somnaRefresh = (full) => refreshPoints(true, full);
bus.on("clusters", () => space.recolor(), "main");
// A liquid step moved memories between clusters or merged clusters: apply it to the point
// data at once so the points glide to their new clusters (the refresh that follows from the
// step's cluster change then finds nothing left to move).
void onEvent("somna://liquid-step", (step) => {
  if (step.moved.length || step.merged.length) space.moveClusters(step.moved, step.merged);
});
// Every change of the store arrives as one event (the engine's change stream, forwarded by
// src-tauri/src/live.rs): the app's own writes, an agent's through the app's server, and
// other processes' (an agent's `somna serve` / `somna mcp`). Changes are gathered for a
// moment, so a burst of writes causes one refresh, not one per write. While a job runs (an
// import's batches, a sleep cycle's steps) the views refresh at most once a second: each
// refresh reloads the point data, the list and the search, and the page stays responsive
// only if that work is a small share of each second. When the last job ends, what is still
// pending is refreshed at once.
const GATHER_MS = 150;
const BUSY_REFRESH_MS = 1000;
const pending = { memories: false, clusters: false, external: { added: 0, updated: 0, removed: 0 } };
let flushTimer: ReturnType<typeof setTimeout> | null = null;
let lastFlush = -Infinity;
function scheduleFlush(): void {
  if (flushTimer !== null) return;
  const wait = jobRows.size ? Math.max(GATHER_MS, lastFlush + BUSY_REFRESH_MS - performance.now()) : GATHER_MS;
  flushTimer = setTimeout(flushChanges, wait);
}
function jobsEnded(): void {
  if (jobRows.size || flushTimer === null) return;
  clearTimeout(flushTimer);
  flushTimer = setTimeout(flushChanges, GATHER_MS);
}
function flushChanges(): void {
  flushTimer = null;
  lastFlush = performance.now();
  const { memories, clusters, external } = pending;
  pending.memories = pending.clusters = false;
  pending.external = { added: 0, updated: 0, removed: 0 };
  if (clusters) void refreshClusterLabels().then(() => { if (!memories) void refreshPoints(!jobRows.size, false); });
  if (memories) bus.emit("data");
  const parts = [
    external.added ? `${external.added} added` : "",
    external.updated ? `${external.updated} changed` : "",
    external.removed ? `${external.removed} deleted` : "",
  ].filter(Boolean);
  if (parts.length) {
    liveEl.textContent = `agent: ${parts.join(", ")}`;
    liveEl.title = `last external change at ${new Date().toLocaleTimeString()}`;
  }
}
void onEvent("somna://changed", ({ origin, change }) => {
  switch (change.kind) {
    case "memories_added":
    case "memories_updated":
    case "memories_removed":
      pending.memories = true;
      if (origin === "external") {
        const key = change.kind === "memories_added" ? "added" : change.kind === "memories_updated" ? "updated" : "removed";
        pending.external[key] += change.ids.length;
      }
      break;
    case "clusters":
      pending.clusters = true;
      break;
    default:
      // Accesses, links, energies, layouts, cycles, settings and the ledger change nothing
      // the views show without another change beside them.
      return;
  }
  scheduleFlush();
});

// ---- start-up -----------------------------------------------------------------------
const overlay = h("div", { class: "overlay-card", "data-testid": "startup" });
document.body.append(overlay);

function showOpening(text: string): void {
  clear(overlay);
  overlay.hidden = false;
  overlay.append(h("div", { class: "card" }, h("div", { class: "spinner" }), h("p", null, text)));
}

function showFailure(s: Status): void {
  clear(overlay);
  overlay.hidden = false;
  const e = s.error!;
  const hint = e.code === "model_missing" || e.code === "model_corrupt"
    ? h("p", null, "Install the embedding model with ", h("code", null, "somna model install"), ", then restart Somna.")
    : null;
  overlay.append(h("div", { class: "card error" },
    h("h2", null, "Somna could not open its store"),
    h("p", { class: "mono" }, `[${e.code}] ${e.message}`), hint,
    h("p", { class: "muted" }, `store: ${s.db_path}`), h("p", { class: "muted" }, `model: ${s.model_dir}`)));
}

function showFirstRun(): void {
  clear(overlay);
  overlay.hidden = false;
  const demoBtn = h("button", { class: "primary", "data-testid": "load-demo", onclick: () => void loadDemo() }, "Load the demo data");
  overlay.append(h("div", { class: "card" },
    h("h2", null, "Your memory store is empty"),
    h("p", null, "Load the bundled demo: six people talking with their assistants over eight weeks (1,270 turns), so every view has something to show. Or import your own conversations."),
    h("div", { class: "actions" }, demoBtn,
      h("button", { onclick: () => { overlay.hidden = true; openImportDialog(); } }, "Import a file…"),
      h("button", { "data-testid": "start-empty", onclick: () => { overlay.hidden = true; } }, "Start empty"))));
}

async function loadDemo(): Promise<void> {
  overlay.hidden = true;
  try {
    const job = await api.loadDemo();
    await waitJob(job);
  } catch (e) {
    toast((e as Error).message, "error");
  }
}

/// While the engine opens, the cached layout is drawn from the store directly, so the 3D
/// view appears at once; the full refresh follows when the engine is ready.
async function showCachedLayout(): Promise<void> {
  try {
    const [attrs, layout] = await Promise.all([api.pointAttributes(), api.layoutData(method, 3)]);
    if (state.points) return;
    state.points = parsePoints(attrs);
    overlay.hidden = true;
    void space.setData(state.points, parseLayout(layout, method), false);
    space.setStatus(`cached layout of ${fmtInt(state.points.n)} memories · opening the store…`);
  } catch {
    /* nothing cached yet: the view fills in when the engine is ready */
  }
}

async function start(): Promise<void> {
  showOpening("Opening the memory store…");
  void onEvent("somna://opening", (p) =>
    showOpening(`Opening the memory store… ${p.stage} ${fmtInt(p.done)}/${fmtInt(p.total)}`));
  const ready = new Promise<void>((resolve) => {
    void onEvent("somna://ready", () => resolve());
    void onEvent("somna://open-failed", () => resolve());
  });
  let s = await api.status();
  if (s.state === "opening") {
    void showCachedLayout();
    await ready;
    s = await api.status();
  }
  if (s.state === "failed") {
    showFailure(s);
    return;
  }
  overlay.hidden = true;
  // Once the first view has had its second: the X-ray's fonts, before the first search.
  setTimeout(() => timed("fonts.warm", warmFonts), 1000);
  if (s.demo_if_empty && s.stats?.memories === 0) {
    void loadDemo();
    return;
  }
  await refreshAll(false);
}

void start();
