// Lays out, once and out of sight, the text styles the retrieval X-ray uses and the start
// page does not (italic rows, table heads, monospaced cells, reasons, cut lines), so that
// their fonts are found while nothing is happening. WebKit looks each new combination of
// family, size, weight and style up in fontconfig the first time it lays one out, and with
// ~130 fonts installed that took 30–45 ms of the main thread on the first search, inside
// the block that also switches to the X-ray (README, "Main-thread blocking").

import { h } from "./dom";

/// One row of each kind the X-ray's table shows, with the characters it writes.
function sample(): HTMLElement {
  const cells = (cls: string) => h("tr", { class: `clickable ${cls}` },
    h("td", { class: "rank" }, "1·"),
    h("td", { class: "mem" }, h("span", { class: "kind k-fact" }, "f"), h("span", { class: "who" }, "Ann"), " ",
      h("span", { class: "state s-superseded" }, "superseded "), h("span", { class: "text" }, "Aa 09 ✓ →")),
    h("td", { class: "num sig" }, "0.91"), h("td", { class: "num" }, "12"), h("td", null, "✓"));
  return h("div", { class: "xray-side", "aria-hidden": "true" },
    h("h3", null, "Ranked"), h("h4", null, "Packed context · 1 / 2 tokens"),
    h("div", { class: "xray-summary" }, h("span", { class: "w" }, "#1 a→b")),
    h("table", { class: "ranked" },
      h("thead", null, h("tr", null, h("th", null, "memory"), h("th", { class: "num" }, "sem"))),
      h("tbody", null, cells("hit"), cells("miss"), cells("connected"),
        h("tr", { class: "why hit" }, h("td", null), h("td", null, h("span", { class: "reason" }, "September = date"))),
        h("tr", { class: "cut" }, h("td", { colspan: "5" }, "cut at k = 10 · near misses below")))));
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
