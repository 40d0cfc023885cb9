// Measures the 3D view at scale in the real webview (not part of CI: it needs a large store).
// Usage (see scripts/e2e-perf.sh): opens the app on $SOMNA_DB, waits for the first frame,
// then times recolouring, selection, picking and a lasso, and prints JSON.

import { Session, sleep } from "./webdriver.mjs";

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
  await sleep(500);
  // Raster time: a forced synchronous frame (software GL under Xvfb).
  out.raster_ms = await s.exec(`
    const sp = globalThis.__somnaSpace; const t = performance.now(); sp.renderNow(); return performance.now() - t;`);
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
  }
  console.log(JSON.stringify(out, null, 2));
} finally {
  await s.quit();
}
