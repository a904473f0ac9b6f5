// The server process of the adapter contract: AHP over HTTP(S) or stdio in
// front of a suite's behaviour, the control listener with the suite's
// routes, any further listener the suite needs (each published in the
// readiness file), shutdown. Every message is parsed strictly; a malformed
// one gets -32700 (`id: null`; HTTP status 400) and no receipt. Over HTTP
// the headers are authenticated before any body is read.

import type http from "node:http";
import { createAuthenticator, type Authenticator } from "../sdk/auth.js";
import {
  CodecError,
  decodeUtf8,
  encodeJson,
  errorResponse,
  PARSE_ERROR,
  parseJson,
} from "../sdk/codec.js";
import {
  DEFAULT_LIMITS,
  discardBody,
  listen,
  readBody,
  refuse,
  sendEmpty,
  sendJson,
  type ListenerLimits,
} from "../sdk/httpTransport.js";
import type { Json, JsonObject } from "../sdk/json.js";
import { LINE_TOO_LONG, LineReader } from "../sdk/stdioTransport.js";
import { serverTls } from "../sdk/tls.js";
import { ConfigError, type ServerSettings } from "./config.js";
import { controlHandler, type ControlRoutes } from "./control.js";
import { writeReadiness } from "./readiness.js";

const INTERNAL_ERROR = -32603;
/** The control listener reads small bodies only. */
const CONTROL_BODY_LIMIT = 1024 * 1024;

/**
 * A message refused with an HTTP status of its own (e.g. 400, 409), no
 * body; over stdio `stdioReply` is written instead (nothing when undefined)
 * and the reason goes to stderr.
 */
export class Refusal {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly stdioReply: Json | undefined = undefined,
  ) {}
}

/**
 * A message taken, answered over HTTP with `status` (e.g. 202) and no body;
 * over stdio nothing is written (a notification is never answered there).
 */
export class Acknowledgement {
  constructor(readonly status: number) {}
}

/**
 * An answer written exactly as given, whatever it is (a scripted fault):
 * over HTTP with `status` and `Content-Type: application/json`, over stdio
 * `body` as a line.
 */
export class RawReply {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {}
}

/**
 * No answer at all: over HTTP the exchange stays open, unanswered, until
 * the client closes it or the server stops (then it is closed without a
 * byte written); over stdio nothing is written.
 */
export class Silence {
  /** A brand: no JSON value is a Silence. */
  private readonly silence = true;
}

/** The one Silence. */
export const SILENCE = new Silence();

/**
 * A reply to send (any JSON value, sent unchanged), undefined for none (a
 * notification: HTTP 204, nothing over stdio), a refusal, an empty answer
 * with a status of its own, a raw answer, or silence.
 */
export type Reply =
  Json | undefined | Refusal | Acknowledgement | RawReply | Silence;

/** What a suite's server does with each parsed message. */
export interface ServerBehaviour {
  /**
   * Receipts `message` and answers it; a promise when the reply is held.
   * `text` is the JSON text it was parsed from (e.g. to keep a verdict per
   * text: validation is deterministic).
   */
  handle(message: Json, text: string): Reply | Promise<Reply>;
  /**
   * The answer to `GET /capabilities` (upstream clients' discovery): the bare
   * capabilities object (`getCapabilities`) of the `tool.before` entry of the
   * manifest this server answers `hooks/capabilities` with, never an
   * envelope. It is never receipted: no message is handled for it.
   */
  capabilities(): JsonObject;
}

/** What the server process offers a suite's control routes. */
export interface ServerContext {
  /** Stops the server (held replies go first). */
  readonly stop: () => void;
  /**
   * Over stdio: writes one frame as a stdout line, in order with the
   * replies; resolves once it is written. Null over HTTP.
   */
  readonly writeFrame: ((frame: Json) => Promise<void>) | null;
}

/** A further plain-HTTP loopback listener of a suite, published in the readiness file. */
export interface SuiteListener {
  /** The readiness key its URL is published under, e.g. `uploadEndpoint`. */
  readonly readinessKey: string;
  /** The path of the published URL, e.g. `/upload`. */
  readonly path: string;
  readonly handler: (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => void;
  /** Sees the listener before it listens (e.g. its `clientError` handler). */
  readonly setup?: (server: http.Server) => void;
}

/** A suite's server: its behaviour, its control routes, further listeners, and its own stop. */
export interface SuiteServer {
  readonly behaviour: ServerBehaviour;
  controlRoutes(context: ServerContext): ControlRoutes;
  readonly listeners?: readonly SuiteListener[];
  /** Called once when the server stops: let every held reply go, close files. */
  onStop(): void;
}

export interface RunningServer {
  readonly endpoint: string | null;
  readonly controlEndpoint: string;
  /** Resolves once the server stopped (/shutdown, EOF on stdin, SIGTERM/SIGINT, stop()). */
  readonly stopped: Promise<void>;
  stop(): void;
}

export function diagnostic(text: string): void {
  process.stderr.write(`ahp-ts server: ${text}\n`);
}

/** A parsed message's answer, or the -32700 answer of a malformed one (status 400 over HTTP). */
type Answer =
  | { readonly status: 200; readonly reply: Reply | Promise<Reply> }
  | { readonly status: 400; readonly reply: JsonObject };

function malformed(reason: string): Answer {
  return { status: 400, reply: errorResponse(null, PARSE_ERROR, reason) };
}

function answer(behaviour: ServerBehaviour, bytes: Buffer): Answer {
  let text: string;
  let message: Json;
  try {
    text = decodeUtf8(bytes);
    message = parseJson(text);
  } catch (error) {
    if (error instanceof CodecError) return malformed(error.message);
    throw error;
  }
  return { status: 200, reply: behaviour.handle(message, text) };
}

class Server {
  private readonly listeners: http.Server[] = [];
  private readonly signals = ["SIGTERM", "SIGINT"] as const;
  private stopping = false;
  private resolveStopped: () => void = () => undefined;
  readonly stopped = new Promise<void>((resolve) => {
    this.resolveStopped = resolve;
  });
  private readonly behaviour: ServerBehaviour;

  constructor(
    private readonly suite: SuiteServer,
    private readonly authenticate: Authenticator,
    readonly limits: ListenerLimits,
  ) {
    this.behaviour = suite.behaviour;
    for (const signal of this.signals) process.once(signal, this.stop);
  }

  /** The AHP listener: POST of any JSON-RPC message on any path, GET /capabilities. */
  readonly ahp = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): void => {
    this.serveAhp(request, response).catch((error: unknown) => {
      diagnostic(`request failed: ${(error as Error).message}`);
      sendEmpty(response, 500);
    });
  };

  private async serveAhp(
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    // The headers decide first: no body is read for a request that is refused.
    if (!(await this.authenticate(request.rawHeaders))) {
      refuse(request, response, 401, this.limits);
      return;
    }
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    if (request.method === "GET" && path.endsWith("/capabilities")) {
      sendJson(response, 200, encodeJson(this.behaviour.capabilities()));
      discardBody(request, this.limits);
      return;
    }
    if (request.method !== "POST") {
      refuse(request, response, 405, this.limits);
      return;
    }
    const body = await readBody(request, response, this.limits);
    if (body === null) return;
    const { status, reply } = answer(this.behaviour, body);
    const sent = await reply;
    // Silence: nothing is written; the connection closes when the client
    // closes it or the server stops (stop closes every connection).
    if (sent instanceof Silence) return;
    if (sent instanceof Refusal || sent instanceof Acknowledgement)
      sendEmpty(response, sent.status);
    else if (sent instanceof RawReply)
      sendJson(response, sent.status, sent.body);
    else if (sent === undefined) sendEmpty(response, 204);
    else sendJson(response, status, encodeJson(sent));
  }

  /** Writes one frame to stdout as a line; resolves once written. */
  readonly writeFrame = (frame: Json): Promise<void> =>
    new Promise((resolve) => {
      process.stdout.write(`${encodeJson(frame)}\n`, () => resolve());
    });

  /** Answers stdin lines on stdout, one line each, as each reply is ready; EOF stops the server. */
  async serveStdio(): Promise<void> {
    const reader = new LineReader(process.stdin, this.limits.maxBodyBytes);
    const write = (reply: Reply) => {
      if (reply instanceof Silence || reply instanceof Acknowledgement) return;
      if (reply instanceof Refusal) {
        diagnostic(`refused (${reply.status}): ${reply.reason}`);
        if (reply.stdioReply !== undefined)
          process.stdout.write(`${encodeJson(reply.stdioReply)}\n`);
      } else if (reply instanceof RawReply) {
        process.stdout.write(`${reply.body}\n`);
      } else if (reply !== undefined) {
        process.stdout.write(`${encodeJson(reply)}\n`);
      }
    };
    for (
      let line = await reader.next();
      line !== null;
      line = await reader.next()
    ) {
      if (
        line !== LINE_TOO_LONG &&
        (line.length === 0 || (line.length === 1 && line[0] === 13))
      )
        continue;
      let reply: Reply | Promise<Reply>;
      try {
        reply = (
          line === LINE_TOO_LONG
            ? malformed(`a line longer than ${this.limits.maxBodyBytes} bytes`)
            : answer(this.behaviour, line)
        ).reply;
      } catch (error) {
        diagnostic(`line failed: ${(error as Error).message}`);
        reply = errorResponse(null, INTERNAL_ERROR, "internal error");
      }
      // A held reply goes out when released; the next lines are answered meanwhile.
      if (reply instanceof Promise) void reply.then(write);
      else write(reply);
    }
    this.stop();
  }

  track(listener: http.Server): void {
    this.listeners.push(listener);
  }

  /** Lets every held reply go, then closes the listeners and the receipt log. */
  readonly stop = (): void => {
    if (this.stopping) return;
    this.stopping = true;
    for (const signal of this.signals) process.off(signal, this.stop);
    this.suite.onStop();
    setImmediate(() => {
      for (const listener of this.listeners) {
        listener.close();
        listener.closeAllConnections();
      }
      this.resolveStopped();
    });
  };
}

/** The settings the shared server process needs (a suite's config may carry more). */
export type ProcessSettings = Pick<
  ServerSettings,
  "configFile" | "transport" | "readinessFile" | "auth" | "tls"
>;

/**
 * Starts the server: listeners on 127.0.0.1 port 0 (the AHP one over HTTP
 * only, then the suite's own), then the readiness file. Setting problems
 * throw SettingError or ConfigError before anything listens.
 */
export async function startServer(
  settings: ProcessSettings,
  suite: SuiteServer,
  limits: ListenerLimits = DEFAULT_LIMITS,
): Promise<RunningServer> {
  const http = settings.transport === "http";
  const tls = http ? serverTls(settings.auth, settings.tls) : null;
  if (!http && settings.auth.mode !== "none") {
    diagnostic(
      `auth mode ${settings.auth.mode} does not apply over stdio; process trust only`,
    );
  }
  const authenticate = http
    ? await createAuthenticator(settings.auth)
    : () => Promise.resolve(true);
  const server = new Server(suite, authenticate, limits);
  const routes = suite.controlRoutes({
    stop: server.stop,
    writeFrame: http ? null : server.writeFrame,
  });
  const control = await listen(
    controlHandler(routes, { ...limits, maxBodyBytes: CONTROL_BODY_LIMIT }),
    null,
    limits,
  );
  server.track(control.server);
  let endpoint: string | null = null;
  if (http) {
    const ahp = await listen(server.ahp, tls, limits);
    server.track(ahp.server);
    endpoint = `${tls === null ? "http" : "https"}://127.0.0.1:${ahp.port}/intercept`;
  }
  const published: Record<string, string> = {};
  for (const extra of suite.listeners ?? []) {
    const listener = await listen(
      extra.handler,
      null,
      limits,
      extra.setup ?? null,
    );
    server.track(listener.server);
    published[extra.readinessKey] =
      `http://127.0.0.1:${listener.port}${extra.path}`;
  }
  const controlEndpoint = `http://127.0.0.1:${control.port}`;
  try {
    writeReadiness(settings.readinessFile, {
      endpoint,
      controlEndpoint,
      ...published,
      pid: process.pid,
    });
  } catch (error) {
    server.stop();
    throw new ConfigError(
      settings.configFile,
      "readinessFile",
      `cannot write ${settings.readinessFile}: ${(error as Error).message}`,
    );
  }
  if (!http) void server.serveStdio();
  return {
    endpoint,
    controlEndpoint,
    stopped: server.stopped,
    stop: server.stop,
  };
}
