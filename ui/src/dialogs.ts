// Modal dialogs: import (file picker, format, progress, cancel), export, settings.

import { api, waitJob } from "./api";
import { h, clear, fmtInt, toast } from "./dom";
import type { ImportFormat, JobId, ServerStatus, Stats } from "./types";

export function modal(title: string, ...content: (Node | null)[]): { el: HTMLElement; close: () => void } {
  const card = h("div", { class: "card dialog", role: "dialog", "aria-label": title }, h("h2", null, title), ...content);
  const el = h("div", { class: "modal" }, card);
  const close = () => el.remove();
  el.addEventListener("click", (e) => { if (e.target === el) close(); });
  document.addEventListener("keydown", function esc(e) {
    if (e.key === "Escape") { close(); document.removeEventListener("keydown", esc); }
  });
  document.body.append(el);
  return { el, close };
}

export function openImportDialog(): void {
  const file = h("input", { type: "file", accept: ".json,.jsonl,.ndjson,.af,application/json", "data-testid": "import-file" });
  const format = h("select", { "aria-label": "format", "data-testid": "import-format" },
    h("option", { value: "auto" }, "detect from file"), h("option", { value: "chat-jsonl" }, "chat JSONL (one message per line)"),
    h("option", { value: "locomo" }, "LoCoMo JSON"), h("option", { value: "json" }, "Somna export"),
    h("option", { value: "chatgpt" }, "ChatGPT data export (conversations.json)"),
    h("option", { value: "claude" }, "Claude data export (conversations.json)"),
    h("option", { value: "mem0" }, "mem0 memories (get_all)"),
    h("option", { value: "letta" }, "Letta agent file (.af)"));
  const status = h("div", { class: "muted", "data-testid": "import-status" });
  const go = h("button", { class: "primary", "data-testid": "import-start" }, "Import");
  const cancel = h("button", { hidden: true }, "Cancel import");
  let job: JobId<"import"> | null = null;
  const { close } = modal("Import conversations and memories",
    h("p", { class: "muted" }, "Chat JSONL: {role, content, name?, timestamp?, conversation?} per line. LoCoMo JSON. A Somna export. ChatGPT's or Claude's conversations.json (from their data export; ChatGPT's current branch only). mem0 memories and Letta agent files (.af), whose memories become facts. A malformed file imports nothing and says where the problem is; importing the same file again stores nothing twice, and an interrupted import resumes."),
    h("label", null, "file", file), h("label", null, "format", format), status,
    h("div", { class: "actions" }, go, cancel, h("button", { onclick: () => close() }, "Close")));
  cancel.addEventListener("click", () => { if (job !== null) void api.cancelJob(job); });
  go.addEventListener("click", async () => {
    const f = file.files?.[0];
    if (!f) {
      status.textContent = "Choose a file first.";
      return;
    }
    go.disabled = true;
    try {
      const content = await f.text();
      const fmt = format.value === "auto" ? null : (format.value as ImportFormat);
      status.textContent = `Importing ${f.name}${fmt ? ` as ${fmt}` : ""}…`;
      job = await api.importText(f.name, fmt, content);
      cancel.hidden = false;
      const r = await waitJob(job);
      const stored = "memories" in r ? r.memories : r.messages_stored;
      const skipped = "messages_skipped" in r ? r.messages_skipped : 0;
      const blank = "messages_blank" in r ? r.messages_blank : 0;
      const c = r.clusters;
      const clustered = c.action === "clustered" ? ` Clustered into ${c.k} concepts.`
        : c.action === "joined" && c.memories ? ` ${c.memories} joined existing clusters.` : "";
      const notes = [skipped ? `${skipped} already present` : "", blank ? `${blank} blank turns left out` : ""];
      status.textContent = `Imported ${f.name} (${r.format}): ${[`${stored} stored`, ...notes].filter(Boolean).join(", ")}.${clustered}`;
      status.setAttribute("data-done", "true");
    } catch (e) {
      status.textContent = (e as Error).message;
      status.classList.add("error");
    } finally {
      go.disabled = false;
      cancel.hidden = true;
      job = null;
    }
  });
}

export function openExportDialog(): void {
  const today = new Date().toISOString().slice(0, 10);
  const path = h("input", { type: "text", value: `~/somna-export-${today}.json`, "aria-label": "path" });
  const status = h("div", { class: "muted" });
  const go = h("button", { class: "primary" }, "Export");
  const { close } = modal("Export the store",
    h("p", { class: "muted" }, "Every memory with its links, messages and history, as a Somna JSON export (re-importable)."),
    h("label", null, "write to", path), status,
    h("div", { class: "actions" }, go, h("button", { onclick: () => close() }, "Close")));
  go.addEventListener("click", async () => {
    go.disabled = true;
    try {
      const n = await api.exportStore(path.value);
      status.textContent = `Exported ${n} memories to ${path.value}.`;
      toast(`exported ${n} memories`);
    } catch (e) {
      status.textContent = (e as Error).message;
    } finally {
      go.disabled = false;
    }
  });
}

/** The vector index as Settings shows it: the engine's own graph, or pgvector's in the store. */
function indexText(s: Stats): string {
  return s.vector_index === "pgvector"
    ? `pgvector, in the store (shared by every process): ${fmtInt(s.indexed)} vectors, ${fmtInt(s.vectors_held)} held by this app`
    : `HNSW in this app, ${fmtInt(s.indexed)} vectors, ${fmtInt(s.index_tombstones)} tombstones`;
}

export function openSettingsDialog(): void {
  const info = h("dl", { class: "grid" });
  const path = h("input", { type: "text", "aria-label": "store path", "data-testid": "store-path" });
  const status = h("div", { class: "muted" });
  const open = h("button", { class: "primary", "data-testid": "store-open" }, "Open this store");
  const llmUrl = h("input", { type: "text", placeholder: "http://localhost:11434/v1", "aria-label": "LLM base URL" });
  const llmModel = h("input", { type: "text", placeholder: "model name, e.g. llama3.2", "aria-label": "LLM model" });
  const llmKey = h("input", { type: "password", placeholder: "API key (optional; saved in the data directory, readable only by you)", "aria-label": "LLM API key", autocomplete: "off" });
  const llmTimeout = h("input", { type: "number", min: "1", max: "600", value: "60", "aria-label": "LLM timeout" });
  const llmStatus = h("div", { class: "muted" });
  const llmSave = h("button", null, "Use this endpoint");
  const llmClear = h("button", null, "Clear");
  const srvPort = h("input", { type: "number", min: "0", max: "65535", value: "7411", "aria-label": "server port" });
  const srvInfo = h("dl", { class: "grid", "data-testid": "server-info" });
  const srvToggle = h("button", { "data-testid": "server-toggle" }, "Start server");
  const { close } = modal("Settings",
    h("h4", null, "Store"), info,
    h("label", null, "store location: a SQLite file (created if missing) or a Postgres URL, postgres://user@host/database (the password from the URL, PGPASSWORD or ~/.pgpass)", path),
    status,
    h("div", { class: "actions" }, open),
    h("h4", null, "LLM endpoint for sleep cycles (OpenAI-compatible chat completions)"),
    h("p", { class: "muted" }, "Optional. Sleep cycles then ask this model for summaries and schemas; a failing or malformed answer falls back to the extractive backend for that batch, and the report says so. Also read from SOMNA_LLM_BASE_URL, SOMNA_LLM_MODEL and SOMNA_LLM_API_KEY at start."),
    h("label", null, "base URL", llmUrl), h("label", null, "model", llmModel), h("label", null, "API key", llmKey),
    h("label", null, "timeout (s)", llmTimeout), llmStatus,
    h("div", { class: "actions" }, llmSave, llmClear),
    h("h4", null, "Server for agents (MCP and REST on 127.0.0.1)"),
    h("p", { class: "muted" }, "Agents connect to the MCP endpoint (streamable HTTP) or the REST API with the bearer token below. Memories they write appear here within a second. Opening another store moves a running server to it."),
    h("label", null, "port (0: any free port)", srvPort), srvInfo,
    h("div", { class: "actions" }, srvToggle, h("button", { onclick: () => close() }, "Close")));
  let srvRunning = false;
  const showServer = (s: ServerStatus) => {
    srvRunning = s.running;
    srvToggle.textContent = s.running ? "Stop server" : "Start server";
    clear(srvInfo);
    // Text nodes only: nothing here is rendered as HTML.
    srvInfo.append(h("dt", null, "status"), h("dd", null, s.running ? "running" : "stopped"));
    if (s.running) {
      srvInfo.append(
        h("dt", null, "MCP"), h("dd", { "data-testid": "server-mcp-url" }, s.mcp_url ?? ""),
        h("dt", null, "REST"), h("dd", null, `${s.address ?? ""}/api/v1 (OpenAPI: ${s.address ?? ""}/openapi.json)`),
        h("dt", null, "token"), h("dd", { class: "mono", "data-testid": "server-token" }, s.token ?? ""),
        h("dt", null, "store"), h("dd", { "data-testid": "server-store" }, s.db_path ?? ""));
    }
    srvInfo.append(h("dt", null, "token file"), h("dd", null, s.token_file));
  };
  void api.serverStatus().then(showServer).catch(() => {});
  srvToggle.addEventListener("click", async () => {
    srvToggle.disabled = true;
    try {
      showServer(srvRunning ? await api.serverStop() : await api.serverStart(Number(srvPort.value) || 0));
    } catch (e) {
      clear(srvInfo);
      srvInfo.append(h("dt", null, "error"), h("dd", null, (e as Error).message));
    } finally {
      srvToggle.disabled = false;
    }
  });
  const showLlm = () => void api.llmSettings().then((l) => {
    llmUrl.value = l?.base_url ?? "";
    llmModel.value = l?.model ?? "";
    llmTimeout.value = String(l?.timeout_secs ?? 60);
    llmStatus.textContent = l ? `in use: ${l.model} at ${l.base_url}${l.has_key ? " (with a key)" : ""}` : "not set: sleep cycles use the extractive backend";
  });
  showLlm();
  llmSave.addEventListener("click", async () => {
    try {
      await api.setLlmSettings(llmUrl.value, llmModel.value, llmKey.value || null, Number(llmTimeout.value) || 60);
      llmKey.value = "";
      showLlm();
    } catch (e) {
      llmStatus.textContent = (e as Error).message;
    }
  });
  llmClear.addEventListener("click", async () => {
    await api.setLlmSettings("", "", null, 60).catch(() => {});
    showLlm();
  });
  void api.status().then((s) => {
    path.value = s.db_path;
    info.append(h("dt", null, "store"), h("dd", null, s.db_path), h("dt", null, "model"), h("dd", null, s.model_dir),
      h("dt", null, "embedding"), h("dd", null, s.stats ? `${s.stats.embedding_model} (${s.stats.dim} dims)` : "—"),
      h("dt", null, "index"), h("dd", null, s.stats ? indexText(s.stats) : "—"));
  });
  open.addEventListener("click", async () => {
    open.disabled = true;
    status.textContent = "Opening…";
    try {
      const job = await api.openStore(path.value);
      await waitJob(job);
      status.textContent = "Opened.";
      location.reload();
    } catch (e) {
      status.textContent = (e as Error).message;
    } finally {
      open.disabled = false;
    }
  });
}
