// stdio transport: one compact JSON-RPC object per line, terminated by "\n".
// Client side: the server runs in its own process group; one line out, one
// line in; at the end stdin is closed, the server gets 2 s, then the whole
// group is killed. Server side: a line splitter over stdin, bounded.

import type { ChildProcessByStdio } from "node:child_process";
import { createRequire } from "node:module";
import type { Readable, Writable } from "node:stream";
import { decodeJson } from "./codec.js";
import { isObject, type Json } from "./json.js";
import type { ClientTransport, Exchange } from "./transport.js";

/** node:child_process, loaded by the first client that starts a server (a server never does). */
function spawnLib(): (typeof import("node:child_process"))["spawn"] {
  return (
    createRequire(import.meta.url)(
      "node:child_process",
    ) as typeof import("node:child_process")
  ).spawn;
}

/** Stands for a line longer than the reader's limit (its bytes are not kept). */
export const LINE_TOO_LONG: unique symbol = Symbol("line too long");
export type Line = Buffer | typeof LINE_TOO_LONG;

/** Resolves with `promise`'s value, or with `fallback` after `ms`; never leaves a timer behind. */
export async function within<T, F>(
  promise: Promise<T>,
  ms: number,
  fallback: F,
): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Splits a byte stream into lines (without the "\n"), keeping bytes intact
 * across chunks. A line longer than `maxLine` bytes is not kept: it comes out
 * as LINE_TOO_LONG once its "\n" arrives.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingSize = 0;
  private overlong = false;

  constructor(private readonly maxLine = Infinity) {}

  /** Feeds a chunk; returns the complete lines it finished. */
  push(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (
      let newline = chunk.indexOf(10);
      newline !== -1;
      newline = chunk.indexOf(10, start)
    ) {
      this.keep(chunk.subarray(start, newline));
      lines.push(this.overlong ? LINE_TOO_LONG : Buffer.concat(this.pending));
      this.pending = [];
      this.pendingSize = 0;
      this.overlong = false;
      start = newline + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
    return lines;
  }

  private keep(bytes: Buffer): void {
    if (this.overlong) return;
    this.pendingSize += bytes.length;
    if (this.pendingSize > this.maxLine) {
      this.overlong = true;
      this.pending = [];
    } else {
      this.pending.push(bytes);
    }
  }
}

/** Reads lines from a stream one at a time, in order. */
export class LineReader {
  private readonly splitter: LineSplitter;
  private readonly lines: Line[] = [];
  private waiter: ((line: Line | null) => void) | null = null;
  private ended = false;

  constructor(stream: Readable, maxLine = Infinity) {
    this.splitter = new LineSplitter(maxLine);
    stream.on("data", (chunk: Buffer) => {
      for (const line of this.splitter.push(chunk)) this.deliver(line);
    });
    stream.on("end", () => this.finish());
    stream.on("close", () => this.finish());
    stream.on("error", () => this.finish());
  }

  private deliver(line: Line): void {
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter(line);
    } else {
      this.lines.push(line);
    }
  }

  private finish(): void {
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.(null);
  }

  /** The next line, or null at end of stream. */
  next(): Promise<Line | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Stops waiting: the pending `next()` resolves with null. */
  cancel(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.(null);
  }
}

/** The client's view of a stdio server: a child in its own process group. */
export class StdioServerProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly reader: LineReader;
  private readonly exited: Promise<void>;
  private exitedFlag = false;
  /** Resolves with null once the process runs, or why it could not be started (its 'error' event). */
  readonly started: Promise<string | null>;

  constructor(command: readonly string[], cwd: string | null) {
    const [program, ...args] = command;
    if (program === undefined) throw new Error("empty server command");
    this.child = spawnLib()(program, args, {
      cwd: cwd ?? undefined,
      detached: true, // its own session and process group
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.child.stdin.on("error", () => undefined); // a dead server shows up as a failed exchange
    this.reader = new LineReader(this.child.stdout);
    this.started = new Promise((resolve) => {
      this.child.once("spawn", () => resolve(null));
      this.child.once("error", (error) => resolve(error.message));
    });
    this.exited = new Promise((resolve) => {
      this.child.once("exit", () => {
        this.exitedFlag = true;
        resolve();
      });
      this.child.once("error", () => {
        this.exitedFlag = true;
        resolve();
      });
    });
  }

  get hasExited(): boolean {
    return this.exitedFlag;
  }

  /** The server's process id (also its process group's). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves once the server process exited. */
  get exit(): Promise<void> {
    return this.exited;
  }

  /** Writes one line (a "\n" is added); false when the server is gone. */
  write(line: string): boolean {
    if (this.exitedFlag) return false;
    this.child.stdin.write(`${line}\n`);
    return true;
  }

  /** The next line the server wrote, or null once its stdout closed. */
  nextLine(): Promise<Line | null> {
    return this.reader.next();
  }

  /** Kills the whole process group at once (for exit paths that cannot wait). */
  kill(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exitedFlag) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  }

  /** Writes one line and reads one line; an error when the server died or time ran out. */
  async exchange(
    line: string,
    timeoutMs: number,
  ): Promise<{ line: Buffer } | { error: string }> {
    if (this.exitedFlag) return { error: "server process has exited" };
    this.child.stdin.write(`${line}\n`);
    const answer = await within(
      this.reader.next(),
      timeoutMs,
      "timeout" as const,
    );
    if (answer === "timeout") {
      this.reader.cancel();
      return { error: `timed out after ${timeoutMs} ms` };
    }
    if (answer === null) return { error: "server process closed its stdout" };
    return { line: answer === LINE_TOO_LONG ? Buffer.alloc(0) : answer };
  }

  /** Closes stdin, waits up to `graceMs` for exit, then kills the whole process group. */
  async close(graceMs = 2000): Promise<void> {
    this.child.stdin.end();
    await within(this.exited, graceMs, undefined);
    const pid = this.child.pid;
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // The group is already gone.
      }
    }
    await within(this.exited, graceMs, undefined);
  }
}

/**
 * An AHP client over stdio: one line out, one line in. After a failed
 * exchange (a timeout above all) the stream is unusable: a late line could
 * answer the next request, so every later exchange fails too.
 */
export class StdioClientTransport implements ClientTransport {
  private readonly server: StdioServerProcess;
  private broken: string | null = null;

  constructor(
    command: readonly string[],
    cwd: string | null,
    private readonly timeoutMs: number,
  ) {
    this.server = new StdioServerProcess(command, cwd);
  }

  async send(line: string): Promise<Exchange> {
    if (this.broken !== null) return { error: this.broken };
    const result = await this.server.exchange(line, this.timeoutMs);
    if ("error" in result) {
      this.broken = `stdio stream unusable after: ${result.error}`;
      return { error: result.error };
    }
    return { body: result.line };
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/**
 * A stdio client session with several requests outstanding: each reply is
 * correlated to its request by id (first come, first served for one id);
 * every other line (an unsolicited or stale frame, a malformed line, an
 * answer to a notification) goes to `onUnsolicited` and answers nothing.
 */
export class StdioSession {
  private readonly server: StdioServerProcess;
  private readonly pending = new Map<
    string,
    ((exchange: Exchange) => void)[]
  >();
  private closedReason: string | null = null;
  /** Resolves when the server's stdout closed. */
  readonly drained: Promise<void>;

  constructor(
    command: readonly string[],
    cwd: string | null,
    private readonly onUnsolicited: (
      line: Buffer,
      id: Json | undefined,
    ) => void,
  ) {
    this.server = new StdioServerProcess(command, cwd);
    this.drained = this.pump();
  }

  get pid(): number | undefined {
    return this.server.pid;
  }

  get exit(): Promise<void> {
    return this.server.exit;
  }

  /** Resolves with null once the server runs, or why it could not be started. */
  get started(): Promise<string | null> {
    return this.server.started;
  }

  private static key(id: Json): string {
    return JSON.stringify(id);
  }

  private async pump(): Promise<void> {
    for (
      let line = await this.server.nextLine();
      line !== null;
      line = await this.server.nextLine()
    ) {
      if (line === LINE_TOO_LONG) {
        this.onUnsolicited(Buffer.alloc(0), undefined);
        continue;
      }
      let id: Json | undefined;
      try {
        const message = decodeJson(line);
        id = isObject(message) ? message["id"] : undefined;
      } catch {
        id = undefined;
      }
      const key = id === undefined ? null : StdioSession.key(id);
      const waiters = key === null ? undefined : this.pending.get(key);
      const deliver = waiters?.shift();
      if (waiters?.length === 0 && key !== null) this.pending.delete(key);
      if (deliver !== undefined) deliver({ body: line });
      else this.onUnsolicited(line, id);
    }
    this.closedReason = "server process closed its stdout";
    const waiters = [...this.pending.values()].flat();
    this.pending.clear();
    for (const deliver of waiters) deliver({ error: this.closedReason });
  }

  /**
   * Writes a request line and resolves with the line answering `id`, or a
   * failure (the server closed its stdout, `timeoutMs` passed, `signal`
   * aborted). A request that failed waits for nothing any more: a later
   * line for `id` answers the next request with that id, or none.
   */
  request(
    line: string,
    id: Json,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Exchange> {
    if (this.closedReason !== null)
      return Promise.resolve({ error: this.closedReason });
    if (signal?.aborted === true) return Promise.resolve({ error: "aborted" });
    const key = StdioSession.key(id);
    return new Promise((resolve) => {
      const forget = () => {
        const queue = this.pending.get(key);
        const index = queue?.indexOf(deliver) ?? -1;
        if (queue !== undefined && index !== -1) queue.splice(index, 1);
        if (queue?.length === 0) this.pending.delete(key);
      };
      const onAbort = () => {
        forget();
        deliver({ error: "aborted" });
      };
      const timer = setTimeout(() => {
        forget();
        deliver({ error: `timed out after ${timeoutMs} ms` });
      }, timeoutMs);
      const deliver = (exchange: Exchange) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(exchange);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const waiters = this.pending.get(key) ?? [];
      waiters.push(deliver);
      this.pending.set(key, waiters);
      if (!this.server.write(line)) {
        forget();
        deliver({ error: "server process has exited" });
      }
    });
  }

  /** Writes a line with no bookkeeping (a notification, a deliberate replay). */
  write(line: string): boolean {
    return this.server.write(line);
  }

  close(graceMs = 2000): Promise<void> {
    return this.server.close(graceMs);
  }

  kill(): void {
    this.server.kill();
  }
}
