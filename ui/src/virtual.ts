// The window of a virtualised list: which rows to draw, and where, for a scroll position.
// Past MAX_SCROLL_PX the scrollbar is scaled: the spacer stays that tall and a scroll
// position maps linearly onto the whole list, so the last row is still reachable.

/// Height of one row in pixels.
export const ROW = 58;
/// Browsers cap element heights (~33M px); beyond this the scrollbar is scaled.
export const MAX_SCROLL_PX = 8_000_000;
/// Rows drawn above and below the visible ones.
const OVERSCAN = 2;

export interface ListWindow {
  /// Height of the scrolling spacer.
  height: number;
  /// The first row to draw and how many.
  first: number;
  count: number;
  /// Where the first drawn row goes, in the spacer's pixels.
  offset: number;
}

/// The rows to draw for `total` rows scrolled to `scrollTop` in a viewport `view` pixels tall.
export function listWindow(total: number, scrollTop: number, view: number): ListWindow {
  const full = total * ROW;
  const height = Math.min(full, MAX_SCROLL_PX);
  const scale = full > MAX_SCROLL_PX ? (full - view) / Math.max(1, height - view) : 1;
  const virtualTop = scrollTop * scale;
  const first = Math.max(0, Math.floor(virtualTop / ROW) - OVERSCAN);
  const count = Math.max(0, Math.min(total - first, Math.ceil(view / ROW) + 2 * OVERSCAN + 1));
  const offset = scrollTop - (virtualTop - first * ROW);
  return { height, first, count, offset };
}
