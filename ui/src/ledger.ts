// Cost and latency ledger panel: what the engine's operations (searches, adds, imports,
// embedding batches, sleep phases, LLM calls, layouts, golden runs) cost over a window:
// totals by operation, a chart by hour, and the hourly rows.

import { api } from "./api";
import { h, clear, fmtInt, fmtTime } from "./dom";
import { fmtMetric, fmtMs, hourlySeries, METRIC_LABEL, type HourSeries, type LedgerMetric } from "./panels";
import type { LedgerReport, LedgerSummary } from "./types";

const WINDOWS: [number, string][] = [[1, "last hour"], [6, "last 6 hours"], [24, "last 24 hours"], [24 * 7, "last 7 days"], [24 * 30, "last 30 days"]];
const COLORS = ["#8b7cff", "#5eead4", "#f59e0b", "#f472b6", "#60a5fa", "#a3e635"];
const SVG = "http://www.w3.org/2000/svg";

export class LedgerPanel {
  readonly el: HTMLElement;
  private windowSel: HTMLSelectElement;
  private metricSel: HTMLSelectElement;
  private totalsEl: HTMLElement;
  private chartEl: HTMLElement;
  private opsEl: HTMLElement;
  private hoursEl: HTMLElement;
  private report: LedgerReport | null = null;

  constructor() {
    this.windowSel = h("select", { "aria-label": "ledger window", "data-testid": "ledger-window", onchange: () => void this.refresh() },
      ...WINDOWS.map(([v, l]) => h("option", { value: String(v) }, l)));
    this.windowSel.value = "24";
    this.metricSel = h("select", { "aria-label": "chart metric", "data-testid": "ledger-metric", onchange: () => this.renderChart() },
      ...(Object.keys(METRIC_LABEL) as LedgerMetric[]).map((m) => h("option", { value: m }, `chart: ${METRIC_LABEL[m]}`)));
    this.totalsEl = h("div", { class: "kv", "data-testid": "ledger-totals" });
    this.chartEl = h("div", { class: "ledger-chart", "data-testid": "ledger-chart" });
    this.opsEl = h("div", { "data-testid": "ledger-ops" });
    this.hoursEl = h("div", { "data-testid": "ledger-hours" });
    this.el = h("section", { class: "panel-view ledger" },
      h("div", { class: "toolbar" }, this.windowSel, this.metricSel,
        h("button", { "data-testid": "ledger-refresh", onclick: () => void this.refresh() }, "Refresh"),
        h("span", { class: "muted" }, "Every engine operation records its wall time, the items it handled, its LLM calls and tokens.")),
      h("div", { class: "ledger-body" }, this.totalsEl, this.chartEl,
        h("h3", null, "By operation"), this.opsEl,
        h("details", { class: "section" }, h("summary", null, "By hour and operation"), this.hoursEl)));
  }

  async refresh(): Promise<void> {
    try {
      this.report = await api.ledger(Number(this.windowSel.value));
    } catch (e) {
      clear(this.opsEl);
      this.opsEl.append(h("p", { class: "placeholder error" }, (e as Error).message));
      return;
    }
    const r = this.report;
    const sum = (f: (x: LedgerSummary) => number) => r.by_op.reduce((s, x) => s + f(x), 0);
    clear(this.totalsEl);
    this.totalsEl.append(
      h("span", null, h("b", null, fmtInt(sum((x) => x.count))), " operations"),
      h("span", null, h("b", null, fmtMs(sum((x) => x.total_ms))), " spent"),
      h("span", null, h("b", null, fmtInt(sum((x) => x.llm_calls))), " LLM calls"),
      h("span", null, h("b", null, fmtInt(sum((x) => x.tokens))), " tokens"),
      h("span", { class: "muted" }, `${fmtTime(r.since)} – ${fmtTime(r.until)} UTC`));
    this.renderChart();
    clear(this.opsEl);
    clear(this.hoursEl);
    if (!r.by_op.length) {
      this.opsEl.append(h("p", { class: "placeholder" }, "Nothing recorded in this window."));
      return;
    }
    this.opsEl.append(table(r.by_op, false, "ledger-op-table"));
    this.hoursEl.append(table([...r.by_hour].reverse(), true, "ledger-hour-table"));
  }

  private renderChart(): void {
    clear(this.chartEl);
    const r = this.report;
    if (!r) return;
    const metric = this.metricSel.value as LedgerMetric;
    const s = hourlySeries(r.by_hour, r.since, r.until, metric);
    if (s.max <= 0) {
      this.chartEl.append(h("p", { class: "placeholder" }, `No ${METRIC_LABEL[metric]} recorded in this window.`));
      return;
    }
    this.chartEl.append(chart(s, metric), h("div", { class: "legend-row" }, ...s.ops.map((op, i) =>
      h("span", { class: "key" }, swatch(COLORS[i % COLORS.length]), op))));
  }
}

function swatch(color: string): HTMLElement {
  const e = h("span", { class: "swatch" });
  e.style.background = color;
  return e;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Stacked bars, one per hour, coloured by operation; y axis from 0 to the largest hour. */
function chart(s: HourSeries, metric: LedgerMetric): SVGSVGElement {
  const W = 720, H = 170, left = 84, bottom = 22, top = 8, right = 8;
  const plotW = W - left - right, plotH = H - top - bottom;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": `${METRIC_LABEL[metric]} by hour` });
  const n = s.hours.length;
  const bw = plotW / n;
  for (const frac of [0, 0.5, 1]) {
    const y = top + plotH * (1 - frac);
    root.append(svg("line", { x1: left, x2: W - right, y1: y, y2: y, class: "grid" }));
    const label = svg("text", { x: left - 6, y: y + 4, "text-anchor": "end", class: "axis" });
    label.textContent = fmtMetric(metric, s.max * frac);
    root.append(label);
  }
  for (let i = 0; i < n; i++) {
    let y = top + plotH;
    const parts: string[] = [];
    for (let o = 0; o < s.ops.length; o++) {
      const v = s.values[o][i];
      if (v <= 0) continue;
      const hgt = (v / s.max) * plotH;
      y -= hgt;
      const rect = svg("rect", { x: left + i * bw + bw * 0.1, y, width: Math.max(1, bw * 0.8), height: Math.max(0.5, hgt), fill: COLORS[o % COLORS.length] });
      root.append(rect);
      parts.push(`${s.ops[o]} ${fmtMetric(metric, v)}`);
    }
    if (parts.length) {
      const hit = svg("rect", { x: left + i * bw, y: top, width: bw, height: plotH, fill: "transparent" });
      const t = svg("title", {});
      t.textContent = `${fmtTime(s.hours[i])} UTC\n${parts.join("\n")}`;
      hit.append(t);
      root.append(hit);
    }
  }
  // Hour labels: about eight along the axis, on whole hours.
  const every = Math.max(1, Math.ceil(n / 8));
  for (let i = 0; i < n; i += every) {
    const d = new Date(s.hours[i]);
    const text = n > 48 ? d.toISOString().slice(5, 10) : `${d.toISOString().slice(11, 13)}:00`;
    const label = svg("text", { x: left + i * bw + bw / 2, y: H - 6, "text-anchor": "middle", class: "axis" });
    label.textContent = text;
    root.append(label);
  }
  return root;
}

function table(rows: LedgerSummary[], byHour: boolean, testid: string): HTMLElement {
  const num = (x: string) => h("td", { class: "num" }, x);
  return h("table", { class: "ledger-table", "data-testid": testid },
    h("thead", null, h("tr", null,
      byHour ? h("th", null, "hour (UTC)") : null,
      h("th", null, "operation"), h("th", { class: "num" }, "count"), h("th", { class: "num" }, "total time"),
      h("th", { class: "num" }, "mean"), h("th", { class: "num" }, "slowest"), h("th", { class: "num" }, "items"),
      h("th", { class: "num" }, "LLM calls"), h("th", { class: "num" }, "tokens"))),
    h("tbody", null, ...rows.map((r) => h("tr", { "data-op": r.op ?? "" },
      byHour ? h("td", null, fmtTime(r.period_start)) : null,
      h("td", null, r.op ?? "—"), num(fmtInt(r.count)), num(fmtMs(r.total_ms)), num(fmtMs(r.mean_ms)), num(fmtMs(r.max_ms)),
      num(fmtInt(r.items)), num(fmtInt(r.llm_calls)), num(fmtInt(r.tokens))))));
}
