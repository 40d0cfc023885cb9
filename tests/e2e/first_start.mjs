// The first minute of a new user (issue 21), measured in the real webview: the app started
// on an empty store with the bundled demo (SOMNA_DEMO_IF_EMPTY=1, as `scripts/setup.sh`
// starts it with --demo-if-empty). Prints, in seconds from the launch: when the memory list
// first showed a memory, when the Space first drew points, and when the demo import ended,
// with what the list and the Space held at 10 s. Fails if the list or the Space stayed empty
// until the import ended (nothing streamed in). Run by `scripts/e2e-perf.sh --first-start`
// (not part of CI: it is a timing).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session, sleep } from "./webdriver.mjs";

const SHOTS = process.env.SOMNA_E2E_SHOTS;

const t0 = Date.now();
const s = await Session.create(process.env.SOMNA_WEBDRIVER_URL, process.env.SOMNA_APP_BIN, {
  SOMNA_DEMO_IF_EMPTY: "1",
});
const secs = () => (Date.now() - t0) / 1000;
const out = { session_s: secs() };
try {
  const probe = `
    const rows = document.querySelectorAll('[data-testid="memory-list"] .mrow[data-id]:not([hidden])').length;
    const points = globalThis.__somnaPerf?.first_frame_ms > 0 ? globalThis.__somnaPerf.points : 0;
    const count = document.querySelector('[data-testid="browser-count"]')?.textContent ?? "";
    const importing = !!document.querySelector('[data-testid="job-import"]');
    const failed = document.querySelector('[data-testid="startup"]:not([hidden]) .card.error')?.textContent ?? null;
    return { rows, points, count, importing, failed };`;
  let sawImport = false;
  for (;;) {
    const p = await s.exec(probe).catch(() => null);
    const t = secs();
    if (p) {
      if (p.failed) throw new Error(`the app could not open its store: ${p.failed}`);
      sawImport ||= p.importing;
      if (p.rows > 0 && out.first_row_s === undefined) {
        out.first_row_s = t;
        out.importing_at_first_row = p.importing;
      }
      if (p.points > 0 && out.first_points_s === undefined) {
        out.first_points_s = t;
        out.points_at_first_frame = p.points;
        out.importing_at_first_points = p.importing;
      }
      if (t >= 10 && out.at_10s === undefined) {
        out.at_10s = { list: p.count, points: p.points, importing: p.importing };
        // What a new user sees 10 s after the first start (with SOMNA_E2E_SHOTS set).
        if (SHOTS) {
          mkdirSync(SHOTS, { recursive: true });
          writeFileSync(join(SHOTS, "first-start-10s.png"), await s.screenshot());
        }
      }
      if (sawImport && !p.importing && out.first_row_s !== undefined) {
        out.import_done_s = t;
        out.final = { list: p.count, points: p.points };
        break;
      }
    }
    if (t > 900) throw new Error("the demo import did not end within 15 minutes");
    await sleep(200);
  }
  console.log(JSON.stringify(out, null, 2));
  if (!out.importing_at_first_row || !out.importing_at_first_points) {
    throw new Error("the list and the Space must fill while the import runs, not after it");
  }
} finally {
  await s.quit();
}
