// The Space view's toolbar: projection method, colour mode, cluster pull, the nearest-memory
// lines' toggle, reset view, and the status line.

import type { ProjectionMethod } from "../bindings";
import type { ColorBy } from "../colors";
import { h } from "../dom";

export type { ProjectionMethod };

const METHOD_LABELS: Record<ProjectionMethod, string> = { pca: "PCA", tsne: "t-SNE", umap: "UMAP" };
const METHOD_TITLES: Record<ProjectionMethod, string> = {
  pca: "PCA: the three directions of largest variance; fast, and new memories are placed exactly.",
  tsne:
    "t-SNE on up to 3,000 memories, the others placed beside their nearest; keeps close neighbours close. " +
    "On a larger store the placed memories keep less of their neighbourhood than in UMAP, which lays out every memory.",
  umap: "UMAP of every memory (up to a million); keeps neighbourhoods, and more of the global shape than t-SNE.",
};

/** The name a person reads for a projection method. */
export function methodLabel(m: ProjectionMethod): string {
  return METHOD_LABELS[m];
}

const COLOR_MODES: ColorBy[] = ["cluster", "energy", "kind", "recency", "usage", "importance", "state"];

export interface ToolbarHandlers {
  method(m: ProjectionMethod): void;
  colorBy(c: ColorBy): void;
  pull(p: number): void;
  showNear(on: boolean): void;
  resetView(): void;
}

export class SpaceToolbar {
  readonly el: HTMLElement;
  private readonly status = h("div", { class: "space-status muted", "data-testid": "space-status" });
  private readonly methodButtons: HTMLButtonElement[];

  constructor(pull: number, nearK: number, on: ToolbarHandlers) {
    const colorSel = h("select", { "aria-label": "colour by", "data-testid": "color-by", onchange: () => on.colorBy(colorSel.value as ColorBy) },
      ...COLOR_MODES.map((c) => h("option", { value: c }, c)));
    this.methodButtons = (["pca", "tsne", "umap"] as const).map((m) =>
      h("button", { class: "seg", "data-method": m, "data-testid": `method-${m}`, "aria-pressed": String(m === "pca"),
        title: METHOD_TITLES[m], onclick: () => on.method(m) }, methodLabel(m)));
    const pct = (p: number) => `${Math.round(p * 100)}%`;
    const pullOut = h("span", { class: "num" }, pct(pull));
    const pullIn = h("input", { type: "range", min: "0", max: "0.8", step: "0.05", value: String(pull),
      "aria-label": "cluster pull", "data-testid": "cluster-pull",
      oninput: () => {
        pullOut.textContent = pct(Number(pullIn.value));
        on.pull(Number(pullIn.value));
      } });
    const nearIn = h("input", { type: "checkbox", checked: true, "aria-label": "show nearest memories", "data-testid": "show-near",
      onchange: () => on.showNear(nearIn.checked) });
    this.el = h("div", { class: "toolbar" },
      h("div", { class: "segmented" }, ...this.methodButtons),
      h("label", { class: "muted" }, "colour ", colorSel),
      h("label", { class: "muted", title: "Draws each point toward the centre of its cluster, so points move as the liquid loop moves memories between clusters and merges them. 0% is the pure projection." },
        "cluster pull ", pullIn, pullOut),
      h("label", { class: "muted", title: `Violet lines from the selected memory to its ${nearK} nearest memories in embedding space (the vector index), brighter for more similar.` },
        nearIn, " nearest"),
      h("button", { class: "icon", title: "reset view", onclick: () => on.resetView() }, "⟲"),
      this.status);
  }

  setMethod(m: ProjectionMethod): void {
    for (const b of this.methodButtons) b.setAttribute("aria-pressed", String(b.dataset.method === m));
  }

  setStatus(text: string): void {
    this.status.textContent = text;
  }
}
