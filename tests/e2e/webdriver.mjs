// A small W3C WebDriver client over fetch (Node 20), enough to drive Somna's webview
// through tauri-driver + WebKitWebDriver.

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  static async create(base, application, env = {}) {
    const res = await fetch(`${base}/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        capabilities: { alwaysMatch: { "tauri:options": { application, env } } },
      }),
    });
    const body = await res.json();
    if (!res.ok || !body.value?.sessionId) {
      throw new Error(`session failed: ${JSON.stringify(body)}`);
    }
    return new Session(base, body.value.sessionId);
  }

  async cmd(method, path, body) {
    const res = await fetch(`${this.base}/session/${this.id}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) {
      throw new Error(`${method} ${path}: ${JSON.stringify(json.value ?? json).slice(0, 600)}`);
    }
    return json.value;
  }

  async quit() {
    await fetch(`${this.base}/session/${this.id}`, { method: "DELETE" }).catch(() => {});
  }

  /// Runs a synchronous script in the page; `args` are passed as `arguments`.
  exec(script, ...args) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /// Runs an async script: the last argument is the callback.
  execAsync(script, ...args) {
    return this.cmd("POST", "/execute/async", { script, args });
  }

  async find(css) {
    const v = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return v[ELEMENT];
  }

  async findAll(css) {
    const v = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return v.map((e) => e[ELEMENT]);
  }

  async click(css) {
    const el = await this.waitFor(css);
    // WebKitWebDriver does not scroll inside scrolling containers (a tall dialog) itself.
    await this.exec("arguments[0].scrollIntoView({ block: 'center' })", { [ELEMENT]: el });
    await this.cmd("POST", `/element/${el}/click`, {});
    return el;
  }

  async type(css, text) {
    const el = await this.waitFor(css);
    await this.cmd("POST", `/element/${el}/value`, { text });
    return el;
  }

  async clear(css) {
    const el = await this.waitFor(css);
    await this.cmd("POST", `/element/${el}/clear`, {});
  }

  async text(css) {
    // The UI may re-render the element between finding and reading it (a detail pane
    // that fills in after its fetch): find it again when the reference went stale.
    for (let attempt = 0; ; attempt++) {
      const el = await this.waitFor(css);
      try {
        return await this.cmd("GET", `/element/${el}/text`);
      } catch (e) {
        if (attempt >= 5 || !String(e.message).includes("stale element")) throw e;
      }
    }
  }

  async screenshot() {
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }

  /// Waits until `css` matches a displayed element (or `pred(text)` holds for its text).
  async waitFor(css, { timeout = 30000, pred = null } = {}) {
    const end = Date.now() + timeout;
    let last = "";
    while (Date.now() < end) {
      try {
        const el = await this.find(css);
        if (!pred) return el;
        last = await this.cmd("GET", `/element/${el}/text`);
        if (pred(last)) return el;
      } catch {
        /* not there yet */
      }
      await sleep(150);
    }
    throw new Error(`timed out waiting for ${css}${pred ? ` (last text: ${JSON.stringify(last).slice(0, 300)})` : ""}`);
  }

  /// Waits until a page expression is truthy and returns its value.
  async until(expr, timeout = 30000) {
    const end = Date.now() + timeout;
    let v;
    while (Date.now() < end) {
      v = await this.exec(`return (${expr});`);
      if (v) return v;
      await sleep(150);
    }
    throw new Error(`timed out waiting for ${expr} (last ${JSON.stringify(v)})`);
  }

  /// A mouse click at (x, y) relative to the element matched by `css` (W3C actions).
  async clickAt(css, x, y, { shift = false } = {}) {
    const el = await this.waitFor(css);
    const rect = await this.cmd("GET", `/element/${el}/rect`);
    const key = shift
      ? [{ type: "key", id: "kb", actions: [{ type: "keyDown", value: "\uE008" }, { type: "pause", duration: 0 }, { type: "pause", duration: 0 }, { type: "keyUp", value: "\uE008" }] }]
      : [];
    await this.cmd("POST", "/actions", {
      actions: [
        ...key,
        {
          type: "pointer",
          id: "mouse",
          parameters: { pointerType: "mouse" },
          actions: [
            { type: "pointerMove", duration: 0, x: Math.round(rect.x + x), y: Math.round(rect.y + y) },
            { type: "pointerDown", button: 0 },
            { type: "pointerUp", button: 0 },
          ],
        },
      ],
    });
    await this.cmd("DELETE", "/actions");
  }
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
