// One request/response protocol between the main thread and a Web Worker, typed by the
// worker's method map. Each call carries a sequence number, so replies may come back in any
// order; a call may send events (progress, intermediate results) before its reply; typed
// arrays cross by transfer when the caller or the handler lists their buffers. Both of the
// UI's workers (the 3D view's uploads and lasso, the graph layout) speak it.

/// A worker method: one request in, one response out, and events while it runs.
export interface Method<Req, Res, Ev = never> {
  req: Req;
  res: Res;
  ev: Ev;
}

export type Protocol = { [name: string]: Method<any, any, any> };

/// Where messages go and come from: a Worker, a worker's own scope, or a MessagePort.
export interface Port {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onmessage: ((e: MessageEvent) => void) | null;
}

interface CallMsg {
  seq: number;
  method: string;
  req: unknown;
}

type ReplyMsg =
  | { seq: number; type: "done"; res: unknown }
  | { seq: number; type: "error"; message: string }
  | { seq: number; type: "event"; ev: unknown };

const TRANSFER = Symbol("transfer");

/// A response whose buffers move to the receiver instead of being copied.
export interface Transfer<T> {
  readonly [TRANSFER]: Transferable[];
  readonly value: T;
}

export function transfer<T>(value: T, buffers: Transferable[]): Transfer<T> {
  return { [TRANSFER]: buffers, value };
}

function unwrap<T>(out: T | Transfer<T>): [T, Transferable[]] {
  if (out !== null && typeof out === "object" && TRANSFER in out) return [out.value, out[TRANSFER]];
  return [out as T, []];
}

/// The same buffer listed twice makes postMessage throw: each once.
function unique(buffers: Transferable[]): Transferable[] {
  return buffers.length < 2 ? buffers : [...new Set(buffers)];
}

/// A failure inside the worker (its handler threw, or the worker itself failed).
export class WorkerError extends Error {}

export interface CallOptions<Ev> {
  /// Buffers of the request to move to the worker (the caller must not use them after).
  transfer?: Transferable[];
  onEvent?: (ev: Ev) => void;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  onEvent?: (ev: unknown) => void;
}

/// The main thread's side: `call(method, request)` resolves with the worker's response.
export class WorkerProxy<P extends Protocol> {
  private seq = 0;
  private pending = new Map<number, Pending>();

  constructor(private readonly port: Port & { onerror?: ((e: ErrorEvent) => void) | null; terminate?(): void }) {
    port.onmessage = (e) => this.receive(e.data as ReplyMsg);
    if ("onerror" in port) port.onerror = (e) => this.fail(`the worker failed: ${e.message}`);
  }

  call<K extends keyof P & string>(method: K, req: P[K]["req"], opts: CallOptions<P[K]["ev"]> = {}): Promise<P[K]["res"]> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, onEvent: opts.onEvent as ((ev: unknown) => void) | undefined });
      const msg: CallMsg = { seq, method, req };
      try {
        this.port.postMessage(msg, unique(opts.transfer ?? []));
      } catch (e) {
        this.pending.delete(seq);
        reject(e as Error);
      }
    });
  }

  /// Calls still waiting for their response.
  get inFlight(): number {
    return this.pending.size;
  }

  /// Stops the worker; calls still waiting are rejected.
  destroy(): void {
    this.port.terminate?.();
    this.fail("the worker was stopped");
  }

  private receive(m: ReplyMsg): void {
    const p = this.pending.get(m.seq);
    if (!p) return;
    if (m.type === "event") {
      p.onEvent?.(m.ev);
      return;
    }
    this.pending.delete(m.seq);
    if (m.type === "done") p.resolve(m.res);
    else p.reject(new WorkerError(m.message));
  }

  private fail(message: string): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(new WorkerError(message));
  }
}

/// What a handler may use while it runs: its call's sequence number and a way to send
/// events to the caller.
export interface CallContext<Ev> {
  seq: number;
  emit(ev: Ev, transfer?: Transferable[]): void;
}

type Out<T> = T | Transfer<T>;

export type Handlers<P extends Protocol> = {
  [K in keyof P]: (req: P[K]["req"], ctx: CallContext<P[K]["ev"]>) => Out<P[K]["res"]> | Promise<Out<P[K]["res"]>>;
};

/// The worker's side: answers every call on `port` with its handler.
export function serve<P extends Protocol>(port: Port, handlers: Handlers<P>): void {
  port.onmessage = (e) => {
    const { seq, method, req } = e.data as CallMsg;
    const post = (m: ReplyMsg, buffers: Transferable[] = []) => port.postMessage(m, unique(buffers));
    const handler = handlers[method];
    if (!handler) {
      post({ seq, type: "error", message: `unknown worker method ${method}` });
      return;
    }
    const ctx: CallContext<unknown> = { seq, emit: (ev, buffers) => post({ seq, type: "event", ev }, buffers) };
    const reply = (out: unknown) => {
      const [res, buffers] = unwrap(out);
      post({ seq, type: "done", res }, buffers);
    };
    const fail = (err: unknown) => post({ seq, type: "error", message: err instanceof Error ? err.message : String(err) });
    try {
      const out = handler(req, ctx);
      if (out instanceof Promise) out.then(reply, fail);
      else reply(out);
    } catch (err) {
      fail(err);
    }
  };
}
