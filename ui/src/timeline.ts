// The time scrubber: a timeline under the views from the store's first to its last change,
// with a mark for each import, sleep cycle, curation and undo. Dragging it shows the store
// as it was: the browser lists what existed then (the engine's list as of the instant), the
// Space hides the points of memories that did not exist yet or were deleted or forgotten
// then and colours states as they were, the detail pane shows the memory as it was. "Now"
// returns. Every memory's visibility over time is loaded once when the scrubber opens, so
// a step of the drag is computed here (statesAt) without asking the engine.

import { api } from "./api";
import type { Tick, Timeline, VisibilitySteps } from "./bindings";
import { h, clear, toast } from "./dom";
import { bus, state } from "./store";
import { countAt } from "./timesteps";

const KIND_LABEL: Record<string, string> = { import: "import", sleep: "sleep cycle", curation: "curation", undo: "undo" };

function fmtInstant(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

export class TimeScrubber {
  readonly el: HTMLElement;
  private readonly range = h("input", { type: "range", min: "0", max: "1000", step: "1", value: "1000", "aria-label": "time", "data-testid": "time-range" }) as HTMLInputElement;
  private readonly ticks = h("div", { class: "ticks" });
  private readonly label = h("span", { class: "when", "data-testid": "time-label" }, "now");
  private readonly nowBtn = h("button", { class: "small", "data-testid": "time-now", onclick: () => this.setAt(null) }, "Now");
  private readonly toggle = h("button", { class: "small", "data-testid": "time-open", title: "See the store as it was at any past instant", onclick: () => void this.open(!this.isOpen) }, "Time travel");
  private readonly bar = h("div", { class: "scrub", hidden: true });
  private line: Timeline | null = null;
  private steps: VisibilitySteps | null = null;
  private isOpen = false;
  private frame = 0;

  constructor(private readonly onTime: (steps: VisibilitySteps | null, at: number | null) => void) {
    this.range.addEventListener("input", () => this.scheduleFromRange());
    this.bar.append(h("div", { class: "track" }, this.ticks, this.range), this.label, this.nowBtn);
    this.el = h("div", { class: "timeline", "data-testid": "timeline" }, this.toggle, this.bar);
    bus.on("data", () => { if (this.isOpen) void this.load(); }, "timeline");
  }

  /// Opens (loading the timeline and every memory's steps) or closes (back to now).
  async open(on: boolean): Promise<void> {
    this.isOpen = on;
    this.bar.hidden = !on;
    this.toggle.setAttribute("aria-pressed", String(on));
    if (!on) {
      this.setAt(null);
      return;
    }
    await this.load();
  }

  private async load(): Promise<void> {
    try {
      const [line, steps] = await Promise.all([api.timeline(), api.visibilitySteps()]);
      this.line = line;
      this.steps = steps;
      this.drawTicks();
      if (state.asOf !== null) this.onTime(this.steps, state.asOf);
      this.showLabel();
    } catch (e) {
      toast(`time travel: ${(e as Error).message}`, "error");
    }
  }

  /// The instant the range's position stands for (its right end is now).
  private instantOf(v: number): number | null {
    const l = this.line;
    if (!l || l.first === null || l.last === null || v >= 1000) return null;
    return Math.round(l.first + ((l.last - l.first) * v) / 1000);
  }

  private scheduleFromRange(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.setAt(this.instantOf(Number(this.range.value)), false);
    });
  }

  /// Shows the store at `at` (null: now).
  setAt(at: number | null, moveRange = true): void {
    state.asOf = at;
    const l = this.line;
    if (moveRange) {
      this.range.value = at === null || !l || l.first === null || l.last === null || l.last <= l.first
        ? "1000"
        : String(Math.max(0, Math.min(999, Math.floor(((at - l.first) * 1000) / (l.last - l.first)))));
    }
    document.body.classList.toggle("past", at !== null);
    this.showLabel();
    this.onTime(this.steps, at);
    bus.emit("asof");
  }

  private showLabel(): void {
    const at = state.asOf;
    this.nowBtn.disabled = at === null;
    if (at === null) {
      this.label.textContent = "now";
      return;
    }
    const n = this.steps ? countAt(this.steps, at) : null;
    this.label.textContent = `as of ${fmtInstant(at)}${n === null ? "" : ` · ${n.toLocaleString("en-US")} memories then`}`;
  }

  private drawTicks(): void {
    clear(this.ticks);
    const l = this.line;
    if (!l || l.first === null || l.last === null) return;
    const span = Math.max(1, l.last - l.first);
    for (const t of l.ticks) {
      const x = ((t.at - l.first) / span) * 100;
      this.ticks.append(h("button", {
        class: `tick ${t.kind}`, style: `left: ${x.toFixed(3)}%`, title: `${fmtInstant(t.at)} · ${t.label}`,
        "aria-label": `${KIND_LABEL[t.kind] ?? t.kind}: ${t.label}`, "data-testid": `tick-${t.kind}`,
        // A mark goes to just before what it marks: the store as it was before the import or cycle.
        onclick: () => this.setAt(Math.max(l.first ?? t.at, t.at - 1)),
      }));
    }
  }

  /// The ticks as loaded (for tests and the detail pane).
  get marks(): Tick[] {
    return this.line?.ticks ?? [];
  }
}
