// Lays out, once and out of sight, the text styles the retrieval X-ray uses and the start
// page does not (italic rows, table heads, monospaced cells, reasons, cut lines), so that
// their fonts are found while nothing is happening. WebKit looks each new combination of
// family, size, weight and style up in fontconfig the first time it lays one out, and with
// ~130 fonts installed that took 30–45 ms of the main thread on the first search, inside
// the block that also switches to the X-ray (README, "Main-thread blocking").

import { h } from "./dom";
import type { Hit } from "./types";
import { SIGNALS } from "./viewkeys";
import { RankedTable } from "./xray_rows";

/// A hit holding what a row of the X-ray's table shows (the row reads nothing else of it),
/// with the characters the table writes.
function sampleHit(): Hit {
  return {
    memory: { id: 1, kind: "fact", text: "Aa 09 ✓ → ·", who: "Ann", superseded_by: 2 },
    rank: 1, signals: Object.fromEntries(SIGNALS.map((s) => [s, 0.5])), score: 1, mmr_score: 0.5, mmr_rank: 1,
    tokens: 12, packed: true, reasons: [{ kind: "dated", phrase: "yesterday", date: "1 May 2023" }],
  } as unknown as Hit;
}

/// The X-ray's own table with a hit, a near miss and a connected bubble (each kind of row,
/// the cut lines and a line of reasons), and the summary's headings and monospaced weights.
function sample(): HTMLElement {
  const hit = sampleHit();
  const table = new RankedTable({ select: () => {}, mark: () => {} });
  table.show([hit], [hit], [hit], () => false);
  return h("div", { class: "xray-side", "aria-hidden": "true" },
    h("h3", null, "Ranked"), h("h4", null, "Packed context · 1 / 2 tokens"),
    h("div", { class: "xray-summary" }, h("span", { class: "w" }, "#1 a→b")),
    table.el);
}

/// Lays the sample out off screen and removes it again; returns the ms it took.
export function warmFonts(): number {
  const t0 = performance.now();
  const box = h("div", { "data-testid": "font-warm", style: "position: fixed; left: -10000px; top: 0; width: 900px; visibility: hidden; contain: strict; height: 400px;" }, sample());
  document.body.append(box);
  void box.offsetHeight;
  box.remove();
  return performance.now() - t0;
}
