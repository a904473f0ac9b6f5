// HTTP(S) transport. Client: one keep-alive connection with TCP_NODELAY,
// redirects never followed. Server: every response's head and body go out in
// one write (a split write meets Nagle and delayed ACK: ~44 ms per round
// trip), and every read is bounded: the handler sees the headers first and
// decides whether to read the body at all; a body over the limit gets 413; a
// header, body or idle connection that stalls is closed; the listen backlog
// is 511. A request the parser refuses (e.g. a chunk size that is not hex)
// gets Node's own answer: 400 (431 for huge headers, 408 for a slow head),
// unless a response to it is already under way, then the connection closes.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createRequire } from "node:module";
import type { SecureContext, TLSSocket } from "node:tls";
import { defaultCa } from "./defaultTrust.js";
import type { ClientTls, ServerTls } from "./tls.js";
import type { ClientTransport, Exchange } from "./transport.js";

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** Per-request options of HttpConnection.post. */
export interface PostOptions {
  /** This request's bound instead of the connection's. */
  readonly timeoutMs?: number;
  /** Aborts the request (its socket is destroyed). */
  readonly signal?: AbortSignal;
  /** Whether the request's socket and timer must not keep the process alive. */
  readonly unref?: boolean;
}

/** A notification on its way: what the receiver answered, if it ever does, and a way to stop waiting. */
export interface PendingNotification {
  /** Resolves with the answer or the transport failure; never rejects. */
  readonly answer: Promise<HttpAnswer | { readonly error: string }>;
  /** Gives up on the answer: the request and its socket are destroyed. */
  abort(): void;
}

const require = createRequire(import.meta.url);
let httpsModule: typeof import("node:https") | null = null;

/**
 * node:https (with node:tls), loaded when a TLS client or server first needs
 * it: a process that speaks plain HTTP only never loads them.
 */
export function httpsLib(): typeof import("node:https") {
  httpsModule ??= require("node:https") as typeof import("node:https");
  return httpsModule;
}

/**
 * The `ca` option of a TLS client: its own CA, else none (Node's default
 * store) or the default store with deferred extra certificates.
 */
export function trustOf(ca: Buffer | null | undefined): {
  ca?: Buffer | string[];
} {
  if (ca !== null && ca !== undefined) return { ca };
  const fallback = defaultCa();
  return fallback === undefined ? {} : { ca: fallback };
}

/** A TLS client's own material: its CA, certificate and key (null: none). */
type ClientMaterial = Pick<ClientTls, "ca" | "cert" | "key">;

/** The secure contexts made so far, with what each was made from (the same buffers). */
const contexts: {
  readonly material: ClientMaterial;
  readonly pinned: boolean;
  readonly context: SecureContext;
}[] = [];

/**
 * The secure context of a TLS client's sockets, made once per material: Node
 * makes one per socket from the options otherwise, parsing the CA,
 * certificate and key again for every connection (the default trust with
 * deferred extra certificates is some 280 of them, about 90 ms of CPU). It
 * is made when a request needs it, from the same options, so that one that
 * cannot be made fails each request as before. A context holds only what it
 * was made from: material with no certificate gets a context with none.
 * `pinned`: TLS 1.2 at least, stated (the AHP connections), rather than
 * Node's default minimum (uploads, the token request).
 */
export function clientContext(
  material: ClientMaterial,
  pinned: boolean,
): SecureContext {
  const kept = contexts.find(
    ({ material: m, pinned: p }) =>
      p === pinned &&
      m.ca === material.ca &&
      m.cert === material.cert &&
      m.key === material.key,
  );
  if (kept !== undefined) return kept.context;
  const { createSecureContext } =
    require("node:tls") as typeof import("node:tls");
  const context = createSecureContext({
    ...trustOf(material.ca),
    ...(material.cert === null ? {} : { cert: material.cert }),
    ...(material.key === null ? {} : { key: material.key }),
    ...(pinned ? { minVersion: "TLSv1.2" as const } : {}),
  });
  contexts.push({
    material: { ca: material.ca, cert: material.cert, key: material.key },
    pinned,
    context,
  });
  return context;
}

/**
 * A keep-alive client for one origin: at most `maxSockets` sockets (one by
 * default: requests are serial), reused across requests.
 */
export class HttpConnection {
  private readonly agent: http.Agent;
  private readonly secure: boolean;
  /** The TLS material of its sockets (https only). */
  private readonly tls: ClientTls | null;

  constructor(
    origin: URL,
    tls: ClientTls,
    private readonly timeoutMs: number,
    maxSockets = 1,
  ) {
    this.secure = origin.protocol === "https:";
    const options = {
      keepAlive: true,
      maxSockets,
      maxFreeSockets: Number.isFinite(maxSockets) ? maxSockets : 256,
    };
    this.tls = this.secure ? tls : null;
    this.agent = this.secure
      ? new (httpsLib().Agent)({ ...options, rejectUnauthorized: true })
      : new http.Agent(options);
  }

  /**
   * POSTs `body` to `url`; resolves with any status (the caller decides),
   * rejects on transport errors. `options.timeoutMs` replaces the
   * connection's own bound for this request; `options.signal` aborts it.
   * Either destroys the request (and its socket).
   */
  post(
    url: URL,
    body: string,
    headers: Readonly<Record<string, string>>,
    options: PostOptions = {},
  ): Promise<HttpAnswer> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted === true) {
        reject(new Error("aborted"));
        return;
      }
      const request = (this.secure ? httpsLib() : http).request(url, {
        agent: this.agent,
        ...(this.tls === null
          ? {}
          : { secureContext: clientContext(this.tls, true) }),
        method: "POST",
        headers: {
          ...headers,
          "Content-Length": String(Buffer.byteLength(body)),
        },
      });
      const onAbort = () => request.destroy(new Error("aborted"));
      const done = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      const timer = setTimeout(
        () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      if (options.unref === true) {
        timer.unref();
        request.on("socket", (socket) => socket.unref());
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      request.setNoDelay(true);
      request.on("error", (error) => {
        done();
        reject(error);
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => {
          done();
          reject(error);
        });
        response.on("end", () => {
          done();
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks),
          });
        });
      });
      request.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * An AHP client over HTTP(S): POSTs each message to one URL; any status but
 * 200 is a transport failure. With `maxSockets` above one, that many
 * requests may be outstanding at once (each on its own connection).
 */
export class HttpClientTransport implements ClientTransport {
  private readonly connection: HttpConnection;
  /**
   * Notifications go on connections of their own, as many as are open at
   * once: an answer that never comes must not hold a request's socket.
   */
  private readonly notifications: HttpConnection;
  private readonly pending = new Set<AbortController>();
  private readonly headers: Record<string, string>;

  constructor(
    private readonly url: URL,
    tls: ClientTls,
    timeoutMs: number,
    token: string | null,
    maxSockets = 1,
  ) {
    this.connection = new HttpConnection(url, tls, timeoutMs, maxSockets);
    this.notifications = new HttpConnection(url, tls, timeoutMs, Infinity);
    this.headers = { "Content-Type": "application/json" };
    if (token !== null) this.headers["Authorization"] = `Bearer ${token}`;
  }

  /**
   * POSTs a request and resolves with the 200 answer's body, or a failure:
   * a transport error, another status, `timeoutMs` (this request's deadline,
   * else the transport's bound) passed, `signal` aborted. A request that
   * fails on time or by abort is destroyed with its socket.
   */
  async send(
    line: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<Exchange> {
    try {
      const answer = await this.connection.post(
        this.url,
        line,
        this.headers,
        options,
      );
      if (answer.status !== 200)
        return { error: `HTTP status ${answer.status}` };
      return { body: answer.body };
    } catch (error) {
      return { error: `transport: ${(error as Error).message}` };
    }
  }

  /**
   * POSTs a notification (no JSON-RPC answer is expected) without waiting
   * for anything: `answer` resolves with the status and body, whatever they
   * are, or a transport failure, if the receiver ever answers. The request
   * keeps nothing alive (socket and timer unref'd) and is destroyed at
   * `abort()`, after the transport's bound, or at `close()`.
   */
  notify(line: string, url: URL = this.url): PendingNotification {
    const controller = new AbortController();
    this.pending.add(controller);
    const answer = this.notifications
      .post(url, line, this.headers, {
        signal: controller.signal,
        unref: true,
      })
      .then(
        (answer) => answer,
        (error: unknown) => ({
          error: `transport: ${(error as Error).message}`,
        }),
      )
      .finally(() => this.pending.delete(controller));
    return { answer, abort: () => controller.abort() };
  }

  close(): Promise<void> {
    for (const controller of [...this.pending]) controller.abort();
    this.connection.close();
    this.notifications.close();
    return Promise.resolve();
  }
}

/**
 * POSTs a form (the OAuth token request) and resolves with the status and the
 * body text; redirects are not followed (a 3xx is returned as is).
 */
export function postForm(
  target: string,
  form: string,
  tls: ClientTls,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(target);
    const secure = url.protocol === "https:";
    const request = (secure ? httpsLib() : http).request(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": String(Buffer.byteLength(form)),
      },
      ...(secure
        ? {
            secureContext: clientContext(
              { ca: tls.ca, cert: null, key: null },
              false,
            ),
            rejectUnauthorized: true,
          }
        : {}),
      timeout: timeoutMs,
    });
    request.on("timeout", () =>
      request.destroy(new Error("token endpoint timed out")),
    );
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      response.on("error", reject);
    });
    request.end(form);
  });
}

/** The URL a client posts intercepts to: the endpoint, or endpoint + "/intercept". */
/**
 * `route` on the endpoint's base (the endpoint without a trailing
 * `/intercept`): upstream servers route by path, ours accept any path.
 */
export function routeUrl(endpoint: string, route: string): URL {
  const url = new URL(endpoint);
  const base = url.pathname.replace(/\/intercept$/, "").replace(/\/+$/, "");
  url.pathname = `${base}/${route}`;
  return url;
}

export function interceptUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith("/intercept"))
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/intercept`;
  return url;
}

/** The bounds of a listener's reads. */
export interface ListenerLimits {
  /** The largest request body read; a larger one gets 413. */
  readonly maxBodyBytes: number;
  /** Headers that take this long, a body that stalls this long, or a keep-alive connection idle this long is closed. */
  readonly stallMs: number;
}

export const DEFAULT_LIMITS: ListenerLimits = {
  maxBodyBytes: 8 * 1024 * 1024,
  stallMs: 10_000,
};

const BACKLOG = 511;
/**
 * How much of a refused request's body (401, 413, ...) is read and thrown
 * away after the status went out, so that a client that sends the whole body
 * before reading sees the status rather than a reset; past this, the
 * connection is closed.
 */
const DISCARD_LIMIT = 256 * 1024 * 1024;

export type Handler = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
) => void;

/**
 * Starts an HTTP or HTTPS listener on 127.0.0.1, port 0; resolves with its
 * port. `setup` sees the server before it listens (e.g. to handle
 * `clientError` itself).
 */
export function listen(
  handler: Handler,
  tls: ServerTls | null,
  limits: ListenerLimits = DEFAULT_LIMITS,
  setup: ((server: http.Server) => void) | null = null,
): Promise<{ server: http.Server; port: number }> {
  const options: http.ServerOptions = {
    noDelay: true,
    keepAlive: true,
    keepAliveTimeout: limits.stallMs,
    headersTimeout: limits.stallMs,
    // A bound on receiving one whole request; the body's own stall timer is tighter.
    requestTimeout: limits.stallMs * 6,
    connectionsCheckingInterval: Math.max(
      50,
      Math.min(1000, Math.floor(limits.stallMs / 4)),
    ),
  };
  // A client certificate that does not verify is refused in HTTP (401, before
  // the request is read): OpenSSL, as Node drives it, completes the handshake
  // and Node would then only close the socket, a bare EOF no peer can tell
  // from a network failure. A missing certificate is refused the same way.
  const guarded: Handler =
    tls !== null && tls.clientCa !== null
      ? (request, response) => {
          if (!(request.socket as TLSSocket).authorized) {
            refuse(request, response, 401, limits);
            return;
          }
          handler(request, response);
        }
      : handler;
  const server = tls
    ? httpsLib().createServer(
        {
          ...options,
          cert: tls.cert,
          key: tls.key,
          minVersion: "TLSv1.2",
          // No client certificate is asked for, so no CA is needed: an empty
          // list instead of none, for which Node would load its whole root
          // store into the context (tens of ms of CPU at each start).
          ...(tls.clientCa === null
            ? { ca: [] }
            : {
                ca: tls.clientCa,
                requestCert: true,
                rejectUnauthorized: false,
              }),
        },
        guarded,
      )
    : http.createServer(options, handler);
  // With a listener, `Expect: 100-continue` is the handler's to answer (after it checked the headers).
  server.on("checkContinue", guarded);
  setup?.(server);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", backlog: BACKLOG }, () => {
      server.off("error", reject);
      resolve({ server, port: (server.address() as AddressInfo).port });
    });
  });
}

/**
 * Reads the rest of a refused request's body without keeping it (bounded by
 * DISCARD_LIMIT and the stall timer), so that the connection can serve the
 * next request.
 */
export function discardBody(
  request: http.IncomingMessage,
  limits: ListenerLimits = DEFAULT_LIMITS,
): void {
  if (request.complete) return;
  let seen = 0;
  const stall = new StallTimer(request.socket, limits.stallMs);
  request.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_LIMIT) request.socket.destroy();
    else stall.restart();
  });
  request.once("end", () => stall.stop());
  request.once("close", () => stall.stop());
  request.resume();
}

/** Destroys a socket when `restart` is not called for `ms`. */
class StallTimer {
  private readonly timer: NodeJS.Timeout;

  constructor(socket: Socket, ms: number) {
    this.timer = setTimeout(() => socket.destroy(), ms);
  }

  restart(): void {
    this.timer.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Answers a request with `status` and no body, before (or instead of)
 * reading its body; the body is then read and thrown away, bounded.
 */
export function refuse(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  status: number,
  limits: ListenerLimits = DEFAULT_LIMITS,
): void {
  sendEmpty(response, status);
  discardBody(request, limits);
}

/**
 * Reads a request body of at most `limits.maxBodyBytes`, with a stall timer.
 * Resolves with the body, or with null when the request was answered instead
 * (413: the declared or the received length is over the limit) or its
 * connection closed (a stall, an abort, a parse error).
 */
export function readBody(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  limits: ListenerLimits = DEFAULT_LIMITS,
): Promise<Buffer | null> {
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > limits.maxBodyBytes) {
    refuse(request, response, 413, limits);
    return Promise.resolve(null);
  }
  if (/^100-continue$/i.test(request.headers.expect ?? ""))
    response.writeContinue();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stall = new StallTimer(request.socket, limits.stallMs);
    const finish = (body: Buffer | null) => {
      stall.stop();
      request.off("data", onData);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBodyBytes) {
        finish(null);
        refuse(request, response, 413, limits);
        return;
      }
      stall.restart();
      chunks.push(chunk);
    };
    request.on("data", onData);
    request.once("end", () => finish(Buffer.concat(chunks)));
    request.once("close", () => {
      if (!request.complete) finish(null);
    });
  });
}

/** Sends a JSON body: head and body in one write. */
export function sendJson(
  response: http.ServerResponse,
  status: number,
  text: string,
): void {
  if (response.headersSent || response.req.socket.destroyed) return;
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** Sends a status with no body (e.g. 401, 204). */
export function sendEmpty(response: http.ServerResponse, status: number): void {
  if (response.headersSent || response.req.socket.destroyed) return;
  response.writeHead(status, { "Content-Length": "0" });
  response.end();
}
