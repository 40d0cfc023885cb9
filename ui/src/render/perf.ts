// Timings of what the 3D view controls, readable by the end-to-end tests and the webview
// perf script (globalThis.__somnaPerf). All are main-thread milliseconds unless named
// `worker`.

export interface Perf {
  /// The last data upload: posting it to the worker plus installing the result.
  upload_ms: number;
  upload_worker_ms: number;
  recolor_ms: number;
  select_ms: number;
  pick_ms: number;
  /// The last lasso: posting the polygon and positions to the worker plus applying its rows
  /// (the selection and everything that listens to it); the worker's share and the wall time.
  lasso_ms: number;
  lasso_worker_ms: number;
  lasso_wall_ms: number;
  lasso_parts: { post: number; apply: number };
  first_frame_ms: number;
  first_frame_at_ms: number;
  render_ms: number;
  points: number;
  /// The last upload's stages: posting and installing (main thread); layout fill, cluster
  /// pull and colours (worker).
  upload_parts: { post: number; install: number; fill: number; pull: number; colors: number };
  /// Every upload so far (the first 50): points, main-thread ms, worker ms.
  uploads: { n: number; main_ms: number; worker_ms: number }[];
}

export const perf: Perf = {
  upload_ms: 0, upload_worker_ms: 0, recolor_ms: 0, select_ms: 0, pick_ms: 0,
  lasso_ms: 0, lasso_worker_ms: 0, lasso_wall_ms: 0, lasso_parts: { post: 0, apply: 0 },
  first_frame_ms: 0, first_frame_at_ms: 0, render_ms: 0, points: 0,
  upload_parts: { post: 0, install: 0, fill: 0, pull: 0, colors: 0 },
  uploads: [],
};
(globalThis as unknown as { __somnaPerf: Perf }).__somnaPerf = perf;

/// Completes the record of an installed upload of `n` points; `after` is the main-thread
/// time spent after the install proper (selection marks, legend, overlays).
export function recordUpload(n: number, after: number): void {
  const parts = perf.upload_parts;
  parts.install += after;
  perf.upload_ms = parts.post + parts.install;
  perf.upload_worker_ms = parts.fill + parts.pull + parts.colors;
  perf.points = n;
  if (perf.uploads.length < 50) perf.uploads.push({ n, main_ms: perf.upload_ms, worker_ms: perf.upload_worker_ms });
}

export function recordLasso(post: number, apply: number, worker: number, wall: number): void {
  perf.lasso_parts = { post, apply };
  perf.lasso_ms = post + apply;
  perf.lasso_worker_ms = worker;
  perf.lasso_wall_ms = wall;
}

/// Main-thread spans by name (bus handlers, event handlers, frames): how many, total and
/// longest ms, how many over 50 ms; `long` keeps the spans over 10 ms with their start time
/// (the first 2,000), so the busy probe can tell which blocks were the UI's own work and which
/// were not (raster, style and layout, garbage collection).
export interface Span { n: number; total: number; max: number; over_50ms: number }
export const spans = {
  by: {} as Record<string, Span>,
  long: [] as { name: string; at: number; ms: number }[],
  reset(): void {
    this.by = {};
    this.long = [];
  },
};
(globalThis as unknown as { __somnaSpans: typeof spans }).__somnaSpans = spans;

export function recordSpan(name: string, t0: number): void {
  const ms = performance.now() - t0;
  const s = (spans.by[name] ??= { n: 0, total: 0, max: 0, over_50ms: 0 });
  s.n++;
  s.total += ms;
  if (ms > s.max) s.max = ms;
  if (ms > 50) s.over_50ms++;
  if (ms > 10 && spans.long.length < 2000) spans.long.push({ name, at: t0, ms });
}

/// Runs `f` as a named span.
export function timed<T>(name: string, f: () => T): T {
  const t0 = performance.now();
  try {
    return f();
  } finally {
    recordSpan(name, t0);
  }
}
