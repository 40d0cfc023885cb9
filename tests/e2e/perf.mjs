// Measures the 3D view at scale in the real webview (not part of CI: it needs a large store).
// Usage (see scripts/e2e-perf.sh): opens the app on $SOMNA_DB, waits for the first frame,
// then times recolouring, selection, picking and a lasso, and prints JSON. With
// $SOMNA_PERF_BUSY=N it also measures how long the page's main thread is blocked while a
// sleep cycle and an import of N messages run (see `busy` below).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session, sleep } from "./webdriver.mjs";

const SHOTS = process.env.SOMNA_E2E_SHOTS;
async function shot(s, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(SHOTS, `${name}.png`), await s.screenshot());
}

/// Three 64-vertex elliptic lassos through the app's own selectPolygon; main-thread ms,
/// worker ms, wall ms and how many points each selected.
const LASSO = `
  const done = arguments[arguments.length - 1];
  (async () => {
    const sp = globalThis.__somnaSpace, perf = globalThis.__somnaPerf;
    const res = { lasso: [], lasso_worker: [], lasso_wall: [], lasso_parts: [], lasso_selected: [] };
    const poly = [];
    for (let a = 0; a < 64; a++) poly.push(300 + 150 * Math.cos(a / 64 * 6.283), 300 + 120 * Math.sin(a / 64 * 6.283));
    for (let i = 0; i < 3; i++) {
      res.lasso_selected.push(await sp.selectPolygon(poly, false));
      res.lasso.push(perf.lasso_ms); res.lasso_worker.push(perf.lasso_worker_ms); res.lasso_wall.push(perf.lasso_wall_ms);
      res.lasso_parts.push({ ...perf.lasso_parts });
    }
    globalThis.__somnaSelect([]);
    return res;
  })().then(done, (e) => done({ error: String(e) }));`;

const s = await Session.create(process.env.SOMNA_WEBDRIVER_URL, process.env.SOMNA_APP_BIN);
try {
  const t0 = Date.now();
  await s.until(`(globalThis.__somnaPerf?.first_frame_ms ?? 0) > 0 && (globalThis.__somnaPerf?.points ?? 0) > 0`, 1800000);
  const wall = Date.now() - t0;
  const out = { wall_until_first_frame_ms: wall, ...(await s.exec("return globalThis.__somnaPerf;")) };
  // The cached layout may be drawn before the engine opens (when opening takes a while); the
  // full refresh follows once it has, and ends with the layout's summary in the status line.
  await s.until(`document.querySelector('[data-testid="space-status"]')?.textContent.startsWith("PCA ·")`, 600000);
  out.uploads = await s.exec("return globalThis.__somnaPerf.uploads;");
  const timings = await s.exec(`
    const sp = globalThis.__somnaSpace, st = globalThis.__somnaState, perf = globalThis.__somnaPerf;
    const res = { recolor: [], select: [], pick: [] };
    const sel = document.querySelector('[data-testid="color-by"]');
    for (const c of ["kind", "recency", "usage", "cluster", "importance", "state"]) {
      sel.value = c; sel.dispatchEvent(new Event("change")); res.recolor.push(perf.recolor_ms);
    }
    const p = st.points;
    for (let i = 0; i < 5; i++) {
      const id = p.ids[Math.floor(p.n * (i + 0.5) / 5)];
      const t = performance.now();
      globalThis.__somnaSelect([id], id);
      res.select.push(performance.now() - t);
    }
    for (let i = 0; i < 10; i++) { sp.pick(100 + 40 * i, 100 + 30 * i, 8); res.pick.push(perf.pick_ms); }
    return res;`);
  // Lasso: membership is found in the upload worker. `lasso` is the main thread's share
  // (posting the positions, applying the rows as the selection); `lasso_worker` the worker's.
  Object.assign(timings, await s.execAsync(LASSO));
  // Re-uploads through the app's own refresh (point data and layout fetched again, the
  // layout placed incrementally): main-thread time of each upload (posting to the upload
  // worker and installing its result) and the worker's time.
  Object.assign(timings, await s.execAsync(`
    const done = arguments[arguments.length - 1];
    const perf = globalThis.__somnaPerf;
    (async () => {
      const res = { upload: [], upload_worker: [], upload_parts: [] };
      for (let i = 0; i < 5; i++) {
        const before = perf.uploads.length;
        await globalThis.somnaRefresh(false);
        if (perf.uploads.length === before) throw new Error("the refresh uploaded nothing");
        res.upload.push(perf.upload_ms);
        res.upload_worker.push(perf.upload_worker_ms);
        res.upload_parts.push({ ...perf.upload_parts });
      }
      return res;
    })().then(done, (e) => done({ error: String(e) }));`));
  out.samples = timings;
  // The memory list (newest id first): scrolled to 25, 50, 75 and 100% of its scrollbar.
  // `render` is the main-thread time of the render a scroll triggers; `filled` the wall time
  // until every drawn row shows its memory (pages are fetched from the backend on demand).
  // At the bottom the store's oldest memory must be on screen.
  out.list = await s.execAsync(`
    const done = arguments[arguments.length - 1];
    (async () => {
      const list = document.querySelector('[data-testid="memory-list"]');
      const total = Number(document.querySelector('[data-testid="browser-count"]').textContent.replace(/[^0-9]/g, ""));
      const res = { total, render: [], filled: [] };
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      for (const f of [0.25, 0.5, 0.75, 1]) {
        const t = performance.now();
        list.scrollTop = f * (list.scrollHeight - list.clientHeight);
        list.dispatchEvent(new Event("scroll"));
        res.render.push(performance.now() - t);
        for (;;) {
          const rows = [...list.querySelectorAll(".mrow:not([hidden])")];
          if (rows.length && rows.every((r) => r.dataset.id)) break;
          if (performance.now() - t > 30000) throw new Error("rows not filled at " + f);
          await frame();
        }
        res.filled.push(performance.now() - t);
      }
      const oldest = globalThis.__somnaState.points.ids[0];
      const row = list.querySelector('[data-testid="memory-row-' + oldest + '"]');
      const lr = row?.getBoundingClientRect(), vr = list.getBoundingClientRect();
      res.oldest_on_screen = !!row && !row.hidden && lr.top >= vr.top - 1 && lr.bottom <= vr.bottom + 1;
      return res;
    })().then(done, (e) => done({ error: String(e) }));`);
  // Time travel: what one step of a scrubber drag costs on the main thread (the states at
  // the instant for every point, the Space's visibility and colours, the list's and the
  // search's requests sent), with the frame after it; and, when the scrubber rests, the
  // wall time until the points have glided to where they were then (the layout as of the
  // instant fetched and uploaded). 40 steps evenly over the store's whole timeline,
  // four times over (160 steps: the bound is on every step, so the tail is what counts).
  await s.cmd("POST", "/timeouts", { script: 600000 });
  out.scrub = await s.execAsync(`
    const done = arguments[arguments.length - 1];
    (async () => {
      const sc = globalThis.__somnaScrubber;
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      let t = performance.now();
      await sc.open(true);
      const res = { open_ms: performance.now() - t, step: [], step_with_frame: [], rest_until_settled: [] };
      const line = await globalThis.__somnaApi.rpc.timeline(null);
      // The app's own spans over 10 ms during the steps (render/perf.ts), with the step
      // they fell in: what else ran on the main thread while a step waited for its frame.
      globalThis.__somnaSpans.reset();
      const starts = [];
      for (let k = 0; k < 160; k++) {
        const i = (k % 40) + 1;
        const at = Math.round(line.first + ((line.last - line.first) * i) / 41);
        t = performance.now();
        starts.push(t);
        sc.setAt(at, true);
        res.step.push(performance.now() - t);
        await frame();
        res.step_with_frame.push(performance.now() - t);
      }
      res.long_spans = globalThis.__somnaSpans.long.map((x) => ({ step: starts.filter((s) => s <= x.at).length, name: x.name, ms: Math.round(x.ms) }));
      for (const f of [0.25, 0.75]) {
        t = performance.now();
        sc.setAt(Math.round(line.first + (line.last - line.first) * f), true);
        await frame();
        while (!globalThis.__somnaSettled() && performance.now() - t < 120000) await frame();
        res.rest_until_settled.push(performance.now() - t);
      }
      res.points = globalThis.__somnaState.points.n;
      await sc.open(false);
      return res;
    })().then(done, (e) => done({ error: String(e) }));`);
  await sleep(500);
  // Raster time: a forced synchronous frame (software GL under Xvfb).
  out.raster_ms = await s.exec(`
    const sp = globalThis.__somnaSpace; const t = performance.now(); sp.renderNow(); return performance.now() - t;`);
  out.software_renderer = await s.exec(`return globalThis.__somnaPerf.software_renderer;`);
  out.gl_renderer = await s.exec(`const gl = document.createElement("canvas").getContext("webgl2"); const x = gl && gl.getExtension("WEBGL_debug_renderer_info");
    return gl ? { renderer: gl.getParameter(gl.RENDERER), vendor: gl.getParameter(gl.VENDOR), unmasked: x ? gl.getParameter(x.UNMASKED_RENDERER_WEBGL) : null } : null;`);
  out.canvas = await s.exec(`const c = document.querySelector('[data-testid="space-canvas"]'); return c ? { css: [c.clientWidth, c.clientHeight], drawn: [c.width, c.height] } : null;`);
  await shot(s, "space-store");
  // Synthetic scale: N points (typed arrays built in the page) through the same code paths.
  const synthN = Number(process.env.SOMNA_PERF_SYNTH ?? 0);
  if (synthN > 0) {
    out.synthetic = await s.execAsync(`
      const done = arguments[arguments.length - 1];
      (async () => {
      const n = ${synthN}, sp = globalThis.__somnaSpace, st = globalThis.__somnaState, perf = globalThis.__somnaPerf;
      const ids = new Int32Array(n), clusters = new Int32Array(n), times = new Float32Array(n), access = new Uint32Array(n);
      const importance = new Float32Array(n), energy = new Float32Array(n), kinds = new Uint8Array(n), states = new Uint8Array(n);
      const coords = new Float32Array(n * 3);
      let seed = 1; const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 4294967296);
      for (let i = 0; i < n; i++) {
        ids[i] = i + 1; clusters[i] = i % 64; times[i] = rnd() * 1e7; access[i] = Math.floor(rnd() * 10);
        importance[i] = rnd(); energy[i] = rnd(); kinds[i] = i % 4; states[i] = i % 3;
        const c = i % 64;
        coords[i * 3] = Math.cos(c) * 3 + (rnd() - 0.5); coords[i * 3 + 1] = Math.sin(c) * 3 + (rnd() - 0.5); coords[i * 3 + 2] = (c / 32 - 1) + (rnd() - 0.5);
      }
      const index = new Map(); for (let i = 0; i < n; i++) index.set(ids[i], i); // the same get() as the app's RowIndex
      const points = { n, t0: 0, ids, clusters, times, access, importance, energy, kinds, states, index };
      st.points = points;
      sp.resetNormalisation();
      const res = { n, upload: [], recolor: [], select: [], pick: [] };
      res.upload_parts = []; res.upload_wall = [];
      for (let i = 0; i < 3; i++) {
        // The layout's buffers are handed to the upload worker: a fresh copy each time.
        const layout = { method: "pca", dims: 3, ids: ids.slice(), coords: coords.slice() };
        const t = performance.now();
        await sp.setData(points, layout, false);
        res.upload_wall.push(performance.now() - t);
        res.upload.push(perf.upload_ms);
        res.upload_parts.push({ ...perf.upload_parts });
      }
      const sel = document.querySelector('[data-testid="color-by"]');
      for (const c of ["kind", "recency", "usage", "cluster"]) { sel.value = c; sel.dispatchEvent(new Event("change")); res.recolor.push(perf.recolor_ms); }
      for (let i = 0; i < 3; i++) { const t = performance.now(); globalThis.__somnaSelect([ids[i * 1000]], ids[i * 1000]); res.select.push(performance.now() - t); }
      for (let i = 0; i < 5; i++) { sp.pick(100 + 40 * i, 100 + 30 * i, 8); res.pick.push(perf.pick_ms); }
      const t = performance.now(); sp.renderNow(); res.raster_ms = performance.now() - t;
      return res;
      })().then(done, (e) => done({ error: String(e) }));`);
    Object.assign(out.synthetic, await s.execAsync(LASSO));
    if (SHOTS) {
      // What a person sees at this scale: coloured by cluster, the lasso's points selected.
      await s.execAsync(`
        const done = arguments[arguments.length - 1];
        const sel = document.querySelector('[data-testid="color-by"]');
        sel.value = "cluster"; sel.dispatchEvent(new Event("change"));
        // The harness's points are generated, not the store's: the status line says so.
        globalThis.__somnaSpace.setStatus("generated by the perf script · " + globalThis.__somnaState.points.n.toLocaleString("en-US") + " points");
        const poly = [];
        for (let a = 0; a < 64; a++) poly.push(300 + 150 * Math.cos(a / 64 * 6.283), 300 + 120 * Math.sin(a / 64 * 6.283));
        globalThis.__somnaSpace.selectPolygon(poly, false).then(() => { globalThis.__somnaSpace.renderNow(); done(null); }, (e) => done(String(e)));`);
      await sleep(2000);
      await shot(s, "space-synthetic");
    }
  }
  const busyN = Number(process.env.SOMNA_PERF_BUSY ?? 0);
  if (busyN > 0) {
    // The probe runs for as long as the jobs take: far beyond the default 30 s script timeout.
    await s.cmd("POST", "/timeouts", { script: 900000 });
    out.busy = await busy(s, busyN);
  }
  console.log(JSON.stringify(out, null, 2));
} finally {
  await s.quit();
}

/// Main-thread blocking in the page while the engine works. For `secs` seconds with nothing
/// running (idle), then while a sleep cycle and an import of `n` generated messages run as
/// jobs, the page repeats a search (through the search box, to its X-ray), a selection and a
/// 64-vertex lasso, one every 200 ms. Two probes run all the time: a 4 ms timer heartbeat
/// (its lateness is how long the main thread was blocked) and requestAnimationFrame (the
/// gap between frames). Reports the longest and the 99th percentile of each, the count over
/// 50 ms, the interactions' own main-thread times, and the searches' round trips. Each
/// heartbeat block over 50 ms is split into the app's own recorded spans (`__somnaSpans`,
/// render/perf.ts) and the page's rendering updates; the largest spans are listed.
async function busy(s, n) {
  return s.execAsync(`
    const done = arguments[arguments.length - 1];
    const n = ${n};
    (async () => {
      const { rpc, waitJob } = globalThis.__somnaApi;
      const sp = globalThis.__somnaSpace, st = globalThis.__somnaState;
      const input = document.querySelector('[data-testid="search"]');
      const form = input.closest("form");
      const words = ["lighthouse", "garden", "recipe", "marathon", "wedding", "Lisbon", "compiler", "ferry"];
      const poly = [];
      for (let a = 0; a < 64; a++) poly.push(300 + 150 * Math.cos(a / 64 * 6.283), 300 + 120 * Math.sin(a / 64 * 6.283));
      const pct = (xs, q) => { const v = [...xs].sort((a, b) => a - b); return v.length ? v[Math.min(v.length - 1, Math.floor(q * v.length))] : 0; };
      const summary = (xs) => ({ n: xs.length, max: Math.max(0, ...xs), p99: pct(xs, 0.99), p50: pct(xs, 0.5), over_50ms: xs.filter((x) => x > 50).length });
      // Each heartbeat block over 50 ms against the UI's own recorded spans (render/perf.ts):
      // the span time inside the block is the app's JS; the rest is the engine of the page
      // (style, layout, raster of the WebGL frame under software GL, garbage collection).
      function attribute(blocks, renders) {
        const sp = globalThis.__somnaSpans;
        let blocked = 0, js = 0, rendering = 0;
        const who = {};
        for (const [a, b] of blocks) {
          blocked += b - a;
          for (const s of sp.long) {
            const o = Math.min(b, s.at + s.ms) - Math.max(a, s.at);
            if (o > 0) { js += o; who[s.name] = (who[s.name] ?? 0) + o; }
          }
          for (const [ra, rb] of renders) rendering += Math.max(0, Math.min(b, rb) - Math.max(a, ra));
        }
        const spans = Object.entries(sp.by).sort((x, y) => y[1].total - x[1].total).slice(0, 15)
          .map(([name, v]) => ({ name, n: v.n, total: Math.round(v.total), max: Math.round(v.max), over_50ms: v.over_50ms }));
        // Each block with what the page was doing in it: the app's long spans, rendering
        // updates, IPC calls that ended in it and callbacks that ran in it.
        const near = blocks.map(([a, b]) => ({ at: Math.round(a), ms: Math.round(b - a),
          spans: sp.long.filter((s) => s.at < b && s.at + s.ms > a).map((s) => s.name + " " + Math.round(s.ms)),
          render: Math.round(renders.reduce((t, [ra, rb]) => t + Math.max(0, Math.min(b, rb) - Math.max(a, ra)), 0)),
          ipc: ipc.filter((e) => (e.kind === "invoke" ? e.end : e.at) < b + 5 && (e.kind === "invoke" ? e.end : e.end) > a - 5)
            .map((e) => e.kind === "invoke" ? e.name + " -> " + e.bytes + " B" : "cb " + e.name + " " + Math.round(e.end - e.at)) }));
        return { blocks: near, blocks_over_50ms: { n: blocks.length, ms: Math.round(blocked), app_js_ms: Math.round(js), render_update_ms: Math.round(rendering),
          by_span: Object.fromEntries(Object.entries(who).map(([k, v]) => [k, Math.round(v)]).sort((x, y) => y[1] - x[1])) }, spans };
      }
      // Every IPC call (command, start, end, response size) and every callback the backend runs
      // in the page (events, command replies; start, end, event name): the blocks' neighbours.
      const ipc = [];
      // Tauri's internals are read-only properties: wrap the page's fetch (each command is a
      // POST to ipc://) and the callback table's lookup (events and command replies).
      const inner = globalThis.__TAURI_INTERNALS__;
      if (!globalThis.__somnaWrapped) {
        globalThis.__somnaWrapped = true;
        const fetch0 = globalThis.fetch.bind(globalThis);
        globalThis.fetch = (url, opts) => {
          const e = { kind: "invoke", name: String(url).split("/").pop(), at: performance.now(), end: 0, bytes: 0 };
          ipc.push(e);
          return fetch0(url, opts).then((r) => {
            e.end = performance.now();
            e.bytes = Number(r.headers.get("content-length") ?? 0);
            return r;
          });
        };
        const cbs = inner.callbacks, get = Map.prototype.get;
        cbs.get = (id) => {
          const f = get.call(cbs, id);
          return f && ((data) => {
            const e = { kind: "callback", name: data && typeof data === "object" && "event" in data ? data.event : "reply", at: performance.now(), end: 0 };
            try { return f(data); } finally { e.end = performance.now(); ipc.push(e); }
          });
        };
      }
      globalThis.__somnaIpc = ipc;
      async function measure(label, until) {
        const beats = [], frames = [], search = [], select = [], lasso = [], roundtrip = [];
        ipc.length = 0;
        let on = true, lastBeat = performance.now(), lastFrame = performance.now();
        const blocks = [];
        const beat = () => {
          const t = performance.now(), late = Math.max(0, t - lastBeat - 4);
          beats.push(late);
          if (late > 50) blocks.push([lastBeat + 4, t]);
          lastBeat = t;
          if (on) setTimeout(beat, 4);
        };
        globalThis.__somnaSpans.reset();
        // The page's rendering update (style, layout, paint, the WebGL canvas's raster and
        // compositing: all on the CPU under Xvfb) runs after the animation-frame callbacks
        // and before the next task: a message posted from the last callback measures it.
        const renders = [], chan = new MessageChannel();
        let rafEnd = 0;
        chan.port1.onmessage = () => { const t = performance.now(); renders.push([rafEnd, t]); };
        const frame = () => {
          const t = performance.now(); frames.push(t - lastFrame); lastFrame = t;
          if (on) requestAnimationFrame(frame);
          rafEnd = performance.now();
          chan.port2.postMessage(0);
        };
        setTimeout(beat, 4); requestAnimationFrame(frame);
        const t0 = performance.now();
        let i = 0;
        while (!(await until(performance.now() - t0))) {
          const q = words[i % words.length] + " " + i;
          let t = performance.now();
          input.value = q;
          form.requestSubmit();
          search.push(performance.now() - t);
          const sent = performance.now();
          while (st.search?.query !== q && performance.now() - sent < 30000) await new Promise((r) => setTimeout(r, 5));
          roundtrip.push(performance.now() - sent);
          const p = st.points;
          if (p && p.n) {
            const id = p.ids[(i * 7919) % p.n];
            t = performance.now(); globalThis.__somnaSelect([id], id); select.push(performance.now() - t);
            t = performance.now(); sp.selectPolygon(poly, false); lasso.push(performance.now() - t);
          }
          i++;
          await new Promise((r) => setTimeout(r, 200));
        }
        on = false;
        const calls = {};
        for (const e of ipc) {
          const c = (calls[e.kind + " " + e.name] ??= { n: 0, ms: 0, bytes: 0 });
          c.n++; c.ms += e.kind === "callback" ? e.end - e.at : 0; c.bytes += e.bytes ?? 0;
        }
        for (const c of Object.values(calls)) c.ms = Math.round(c.ms);
        return { label, ...attribute(blocks, renders), ipc: calls, render_update_ms: summary(renders.map(([a, b]) => b - a)), secs: (performance.now() - t0) / 1000, interactions: i, heartbeat_late_ms: summary(beats), frame_gap_ms: summary(frames),
          search_submit_ms: summary(search), search_roundtrip_ms: summary(roundtrip), select_ms: summary(select), lasso_ms: summary(lasso) };
      }
      const idle = await measure("idle", (el) => el > 8000);
      let content = "";
      for (let i = 0; i < n; i++) {
        content += JSON.stringify({ role: i % 2 ? "assistant" : "user", name: i % 2 ? "Bot" : "Perf",
          content: "Perf note " + i + " about " + words[i % words.length] + " and the plans for day " + Math.floor(i / 10) + ".",
          conversation: "perf-busy" }) + "\\n";
      }
      const t0 = performance.now();
      const importJob = await rpc.import_text({ name: "perf-busy.jsonl", format: "chat-jsonl", content });
      const sleepJob = await rpc.sleep_run({ dry_run: false, config: null, backend: null });
      const ended = {};
      const finished = Promise.all([
        waitJob(importJob).then(() => { ended.import_s = (performance.now() - t0) / 1000; }),
        waitJob(sleepJob).then(() => { ended.sleep_s = (performance.now() - t0) / 1000; }),
      ]);
      let all = false;
      finished.then(() => { all = true; }, () => { all = true; });
      const working = await measure("sleep cycle + import", () => all);
      await finished;
      return { messages: n, jobs: ended, idle, working };
    })().then(done, (e) => done({ error: String(e) }));`);
}
