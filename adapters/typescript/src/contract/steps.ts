// The step engine's wire: what every step-driven client (docs/LIFECYCLE.md
// and the suites that run on its commands) talks to its server through: the
// wire to the run's server (HTTP(S) with the run's credentials, or the stdio
// server the client starts itself), the control client of that server, a
// reply judged under the core rules, and setting problems reported as config
// problems. It knows no suite: a suite gives its routes (`WireOptions`).

import { clientCredential } from "../sdk/auth.js";
import { CodecError, decodeJson } from "../sdk/codec.js";
import {
  HttpClientTransport,
  interceptUrl,
  postForm,
} from "../sdk/httpTransport.js";
import type { EngineDeps, Outcome } from "../sdk/engine.js";
import type { Json, JsonObject } from "../sdk/json.js";
import { loadSchemas, type SchemaSet } from "../sdk/schemas.js";
import { SettingError } from "../sdk/settings.js";
import { clientTls, requiresHttps, type ClientTls } from "../sdk/tls.js";
import type { Exchange } from "../sdk/transport.js";
import { startChildServer, type ChildServer } from "./childServer.js";
import {
  ConfigError,
  type SchemaDir,
  type StepClientSettings,
} from "./config.js";
import { ControlClient } from "./controlClient.js";
import { WAIT_LIMIT_MS } from "./entries.js";

/** Requests a client may have in flight at once over HTTP (one connection each). */
const MAX_IN_FLIGHT = 64;

function debug(text: string): void {
  if (process.env["AHP_DEBUG"])
    process.stderr.write(`ahp-ts client: ${text}
`);
}

/** A SettingError as the config's error (exit 2); anything else unchanged. */
export function asConfigError(configFile: string, error: unknown): unknown {
  return error instanceof SettingError
    ? new ConfigError(configFile, error.setting, error.message)
    : error;
}

/** The canonical schema set of `schemaDir`; an unusable one is a ConfigError naming it. */
export function schemasFor(
  configFile: string,
  schemaDir: SchemaDir,
): SchemaSet {
  try {
    return loadSchemas(schemaDir.path);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    const origin = schemaDir.from === "schemaDir" ? "" : ` (${schemaDir.from})`;
    throw new ConfigError(configFile, "schemaDir", `${error.message}${origin}`);
  }
}

/**
 * How a suite talks to its server. `url`: where the endpoint's messages go
 * over HTTP; `refuses`: the HTTP statuses of a notification's answer that
 * mean the receiver refused it (nothing will be recorded).
 */
export interface WireOptions {
  readonly url: (endpoint: string) => URL;
  /** Where notifications go (default: `url`'s). */
  readonly notifyUrl?: (endpoint: string) => URL;
  readonly refuses: (status: number) => boolean;
}

/** The default: POSTs to `.../intercept`; any status of 400 or more refuses. */
export const INTERCEPT_WIRE: WireOptions = {
  url: interceptUrl,
  refuses: (status) => status >= 400,
};

/** What came back for one request: a parsed reply, a malformed one, or a transport failure. */
export type Received =
  | { readonly response: Json }
  | { readonly malformed: string }
  | { readonly error: string };

export function parsed(exchange: Exchange): Received {
  if ("error" in exchange) return exchange;
  try {
    return { response: decodeJson(exchange.body) };
  } catch (error) {
    if (error instanceof CodecError) return { malformed: error.message };
    throw error;
  }
}

/** The SDK's composition engine, loaded by a client that judges replies. */
export type Engine = typeof import("../sdk/engine.js");

/**
 * What `received` makes of `request` under the core rules: a transport
 * failure or a malformed reply is a rejection, like a reply the rules reject.
 */
export function judged(
  engine: Engine,
  request: JsonObject,
  received: Received,
  deps: EngineDeps,
): Outcome {
  if ("error" in received)
    return { status: "rejected", reason: `transport: ${received.error}` };
  if ("malformed" in received)
    return {
      status: "rejected",
      reason: `malformed reply: ${received.malformed}`,
    };
  return engine.applyResponse(request, received.response, deps);
}

/**
 * A notification on its way. Nobody waits for its answer: `refused`
 * resolves only when the receiver refused it (an HTTP status of 400 or
 * more, or a transport failure), so that a wait for its receipt can give
 * up early; `done` says its receipt was confirmed, after which an answer
 * that has not come is given up (the exchange is closed).
 */
export interface Notification {
  readonly refused: Promise<string>;
  done(): void;
}

/** A promise that never settles (a notification nobody refused). */
const NEVER = new Promise<never>(() => undefined);

/** How long an unanswered notification stays open once its receipt was confirmed. */
const NOTIFY_GRACE_MS = 1_000;

/** The client's AHP transport as the steps use it. */
export interface Wire {
  readonly transport: "http" | "stdio";
  /** Sends a request through the SDK and resolves with its reply. */
  send(line: string, id: Json): Promise<Received>;
  /**
   * One chain call: resolves with its reply, or a failure once `deadlineMs`
   * passed without one (the call is then abandoned: over HTTP its request
   * is destroyed; over stdio nothing waits for its id any more).
   */
  call(line: string, id: Json, deadlineMs: number): Promise<Received>;
  /** Sends the same bytes again, outside the SDK's pending-request bookkeeping. */
  replay(line: string, id: Json): Promise<Received>;
  /** Sends a notification and returns at once; its answer, whatever and whenever, is dropped. */
  notify(line: string): Notification;
  /** stdio: resolves once an unsolicited frame with `id` has been read and dropped. */
  expectStray(id: Json): Promise<void>;
  close(): Promise<void>;
}

/** How long one exchange may take: a held reply waits for its release. */
export function exchangeLimit(timeoutMs: number): number {
  return timeoutMs + WAIT_LIMIT_MS + 5_000;
}

/** The TLS material and event credential HTTP exchanges carry. */
export interface HttpCredentials {
  readonly tls: ClientTls;
  readonly token: string | null;
}

/** The notification of an HTTP transport: the answer is only looked at for a refusal. */
function httpNotification(
  transport: HttpClientTransport,
  line: string,
  refuses: (status: number) => boolean,
  url?: URL,
) {
  const pending = transport.notify(line, url);
  const refused = pending.answer.then((answer): Promise<string> | string => {
    if ("error" in answer) return answer.error;
    if (refuses(answer.status)) return `HTTP status ${answer.status}`;
    debug(`observe answered HTTP ${answer.status}`);
    return NEVER;
  });
  return {
    refused,
    done: () => {
      setTimeout(() => pending.abort(), NOTIFY_GRACE_MS).unref();
    },
  };
}

async function httpWire(
  settings: StepClientSettings,
  options: WireOptions,
): Promise<{ wire: Wire; credentials: HttpCredentials }> {
  const endpoint = settings.endpoint ?? "";
  if (requiresHttps(settings.auth) && !endpoint.startsWith("https://"))
    throw new SettingError(
      "endpoint",
      `must be https for auth mode ${settings.auth.mode} under the ${settings.auth.profile} profile`,
    );
  const tls = clientTls(settings.auth, settings.tls);
  const token = await clientCredential(settings.auth, (url, form) =>
    postForm(url, form, tls, settings.timeoutMs),
  );
  const transport = new HttpClientTransport(
    options.url(endpoint),
    tls,
    exchangeLimit(settings.timeoutMs),
    token,
    MAX_IN_FLIGHT,
  );
  const send = async (line: string) => parsed(await transport.send(line));
  const notifyUrl = options.notifyUrl?.(endpoint);
  const wire: Wire = {
    transport: "http",
    send,
    call: async (line, _id, deadlineMs) =>
      parsed(await transport.send(line, { timeoutMs: deadlineMs })),
    replay: send,
    notify: (line) =>
      httpNotification(transport, line, options.refuses, notifyUrl),
    expectStray: () => Promise.reject(new Error("stray frames are stdio only")),
    close: () => transport.close(),
  };
  return { wire, credentials: { tls, token } };
}

/** Whether `line` fails to parse as JSON at all (not merely lacks an id). */
function unparseable(line: Buffer): boolean {
  try {
    decodeJson(line);
    return false;
  } catch {
    return true;
  }
}

/** A stderr note for a line the client drops. */
export function dropped(line: Buffer, why: string): void {
  const text = line.toString("utf8");
  process.stderr.write(
    `ahp-ts client: dropped ${why}: ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}...` : text)}\n`,
  );
}

/**
 * The stdio wire: the child server's session, with unsolicited lines
 * routed to replays and strays. A line that does not parse is given to the
 * one outstanding chain call, if there is one (it fails at once rather than
 * at its deadline); otherwise, like a response to an id no call waits for,
 * it is dropped with a note on stderr and the backend stays usable.
 */
export class StdioWire implements Wire {
  readonly transport = "stdio";
  private readonly replays = new Map<
    string,
    ((received: Received) => void)[]
  >();
  private readonly strays = new Map<string, (() => void)[]>();
  /** The outstanding chain call's taker of an unparseable line, if any. */
  private outstanding: ((line: Buffer) => void) | null = null;
  child: ChildServer | null = null;

  constructor(private readonly limitMs: number) {}

  /** Every line that answers no pending SDK request lands here. */
  readonly unsolicited = (line: Buffer, id: Json | undefined): void => {
    if (id === undefined && this.outstanding !== null && unparseable(line)) {
      dropped(line, "a line that is not JSON, failing the call waiting");
      this.outstanding(line);
      return;
    }
    const key = JSON.stringify(id ?? null);
    const stray = this.strays.get(key)?.shift();
    if (stray !== undefined) {
      debug(`dropped the stray frame ${key}`);
      stray();
      return;
    }
    const replay = this.replays.get(key)?.shift();
    if (replay !== undefined) {
      replay(parsed({ body: line }));
      return;
    }
    // An answer to a notification (the hostile observer), a response to an
    // id nobody waits for, a line that is not JSON: dropped.
    dropped(line, "a line no request waits for");
  };

  private get session() {
    if (this.child === null) throw new Error("the stdio server is not running");
    return this.child.session;
  }

  async send(line: string, id: Json): Promise<Received> {
    return parsed(await this.session.request(line, id, this.limitMs));
  }

  async call(line: string, id: Json, deadlineMs: number): Promise<Received> {
    const controller = new AbortController();
    const taken: { line: Buffer | null } = { line: null };
    const take = (bad: Buffer) => {
      taken.line = bad;
      controller.abort();
    };
    this.outstanding = take;
    try {
      const exchange = await this.session.request(
        line,
        id,
        deadlineMs,
        controller.signal,
      );
      return parsed(taken.line === null ? exchange : { body: taken.line });
    } finally {
      if (this.outstanding === take) this.outstanding = null;
    }
  }

  replay(line: string, id: Json): Promise<Received> {
    const key = JSON.stringify(id);
    return new Promise((resolve) => {
      const queue = this.replays.get(key) ?? [];
      queue.push(resolve);
      this.replays.set(key, queue);
      if (!this.session.write(line))
        resolve({ error: "server process has exited" });
    });
  }

  notify(line: string): Notification {
    return this.session.write(line)
      ? { refused: NEVER, done: () => undefined }
      : {
          refused: Promise.resolve("server process has exited"),
          done: () => undefined,
        };
  }

  expectStray(id: Json): Promise<void> {
    const key = JSON.stringify(id);
    return new Promise((resolve) => {
      const queue = this.strays.get(key) ?? [];
      queue.push(resolve);
      this.strays.set(key, queue);
    });
  }

  async close(): Promise<void> {
    await this.child?.close();
  }
}

/** The wire (over stdio: the server, started), the server's control client, what the run needs of them. */
export interface Connection {
  readonly wire: Wire;
  readonly control: ControlClient;
  /** The upload endpoint when the config gives none (stdio: the readiness file's). */
  readonly uploadEndpoint: string | null;
  /** Over HTTP, what every exchange carries; null over stdio. */
  readonly credentials: HttpCredentials | null;
  /** Closes the wire (stdio: the server is stopped and reaped). */
  close(): Promise<void>;
}

/** Opens the wire (stdio: starts the server) and the control client. */
export async function connect(
  settings: StepClientSettings,
  options: WireOptions = INTERCEPT_WIRE,
): Promise<Connection> {
  if (settings.transport === "http") {
    const { wire, credentials } = await httpWire(settings, options);
    return {
      wire,
      control: new ControlClient(
        settings.controlEndpoint ?? "",
        settings.timeoutMs,
      ),
      uploadEndpoint: settings.upload?.endpoint ?? null,
      credentials,
      close: () => wire.close(),
    };
  }
  const wire = new StdioWire(exchangeLimit(settings.timeoutMs));
  const started = await startStdioServer(settings, wire.unsolicited);
  wire.child = started.child;
  return {
    wire,
    control: started.control,
    uploadEndpoint: started.uploadEndpoint,
    credentials: null,
    close: () => wire.close(),
  };
}

/** A stdio server the client started, the control client of its readiness, and the upload endpoint. */
export interface StartedServer {
  readonly child: ChildServer;
  readonly control: ControlClient;
  /** The config's upload endpoint, else the readiness file's; null when neither names one. */
  readonly uploadEndpoint: string | null;
}

/**
 * Starts the run's stdio server (childServer.ts: `childPidFile`, readiness,
 * reaping); every line it writes that answers no pending request goes to
 * `onLine`.
 */
export async function startStdioServer(
  settings: StepClientSettings,
  onLine: (line: Buffer, id: Json | undefined) => void,
): Promise<StartedServer> {
  const child = await startChildServer(
    {
      configFile: settings.configFile,
      serverCommand: settings.serverCommand,
      serverCwd: settings.serverCwd,
      serverConfig: settings.serverConfig ?? "",
      childPidFile: settings.childPidFile ?? "",
    },
    onLine,
  );
  const { readiness } = child;
  const uploadEndpoint = readiness["uploadEndpoint"];
  return {
    child,
    control: new ControlClient(
      typeof readiness["controlEndpoint"] === "string"
        ? readiness["controlEndpoint"]
        : "",
      settings.timeoutMs,
    ),
    uploadEndpoint:
      settings.upload?.endpoint ??
      (typeof uploadEndpoint === "string" ? uploadEndpoint : null),
  };
}
