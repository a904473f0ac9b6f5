// The elicitation suite (docs/ELICITATION.md): an MCP elicitation request and
// its result as two AHP events, over the real wire.
//
// Client: one process runs every row of the file, each after a `row-start`
// mark. A wire row uploads bytes (three credentials, aliases rebound) and
// sends messages unchanged but for `items[].body.ref` aliases, reporting
// what each step got. An atomic row is a host: it sends the request event,
// judges the reply (deny, a supplied result), sends the result event built
// from the effective result and judges that reply (a content edit), and
// reports what it published. It never reads `expected` or `responses`.
//
// Server: a hook backend that validates complete elicitation events itself
// (sdk/elicitation.ts), keeps the live requests per session, records every
// accepted event with its summary and answers it with the row's scripted
// response, else the no-effect reply; a refusal is HTTP 400 (409 for content
// it does not have) with a JSON-RPC -32602 body, over stdio that error line,
// and nothing is recorded. The upload receiver is the step engine's
// (contract/stepServer.ts).

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  decodeBase64,
  decodeJson,
  encodeJson,
  errorResponse,
  INVALID_PARAMS,
  replyId,
} from "../sdk/codec.js";
import {
  ElicitationReceiver,
  FormSchemas,
  judgeRequestReply,
  judgeResultReply,
  mcpChecks,
  noEffectReply,
  requestView,
  resultRequest,
  type HostDeps,
  type McpChecks,
} from "../sdk/elicitation.js";
import {
  DEFAULT_LIMITS,
  HttpConnection,
  interceptUrl,
  type ListenerLimits,
} from "../sdk/httpTransport.js";
import {
  cloneJson,
  hasKey,
  isObject,
  parseStrictJson,
  type Json,
  type JsonObject,
} from "../sdk/json.js";
import {
  discoveryManifest,
  discoveryResponse,
  getCapabilities,
} from "../sdk/manifest.js";
import type { SchemaSet } from "../sdk/schemas.js";
import { within } from "../sdk/stdioTransport.js";
import { ContentStore, sha256Hex, uploadContent } from "../sdk/upload.js";
import { Barriers } from "../contract/barriers.js";
import type { ChildServer } from "../contract/childServer.js";
import {
  ConfigError,
  readJsonFile,
  readStepClientConfig,
  type SchemaDir,
  type StepClientSettings,
} from "../contract/config.js";
import type { ControlClient } from "../contract/controlClient.js";
import { EntryLog } from "../contract/entries.js";
import type { ResultEntry } from "../contract/report.js";
import { RowFailure, rowResult } from "../contract/rows.js";
import {
  RawReply,
  type Reply,
  type ServerBehaviour,
  type SuiteServer,
} from "../contract/server.js";
import { stepControlRoutes } from "../contract/stepControl.js";
import { runStepClient } from "../contract/stepClient.js";
import { runStepServer, uploadListener } from "../contract/stepServer.js";
import {
  connect,
  exchangeLimit,
  schemasFor,
  startStdioServer,
  type Connection,
} from "../contract/steps.js";
import type { Suite } from "../contract/suite.js";

const SUITE = "elicitation";
/** The one mark kind of the suite. */
const ROW_START = "row-start";
/** The variable holding the upload token the server does not accept. */
const UNAUTHORIZED_TOKEN_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN";
const DEFAULT_TOKEN_ENV = "AHP_INTEROP_UPLOAD_TOKEN";

function note(text: string): void {
  process.stderr.write(`ahp-ts elicitation: ${text}\n`);
}

// ---------------------------------------------------------------- the scenario file

export interface WireRow {
  readonly id: string;
  readonly transports: readonly string[] | null;
  readonly steps: readonly Json[];
}

export interface AtomicRow {
  readonly id: string;
  readonly transports: readonly string[] | null;
  readonly atomic: Json;
  /** The server's scripted replies by event id; always empty for the client. */
  readonly responses: ReadonlyMap<string, Json>;
}

export type ElicitationRow = WireRow | AtomicRow;

export function isAtomic(row: ElicitationRow): row is AtomicRow {
  return "atomic" in row;
}

export interface ElicitationFile {
  /** Null when the file has none (only the server needs it). */
  readonly authenticatedSource: string | null;
  readonly rows: readonly ElicitationRow[];
}

/**
 * Reads `{version, suite, authenticatedSource, scenarios}`; never
 * `expected`, and `responses` only for the server (`withResponses`).
 */
export function readElicitationScenarios(
  path: string,
  referrer: { file: string; field: string } | null,
  withResponses: boolean,
): ElicitationFile {
  const file = readJsonFile(path, referrer);
  const rows = isObject(file) ? file["scenarios"] : undefined;
  if (!isObject(file) || !Array.isArray(rows))
    throw new ConfigError(path, "scenarios", "must be a list");
  const source = file["authenticatedSource"];
  if (
    source !== undefined &&
    (typeof source !== "string" || source.length === 0)
  )
    throw new ConfigError(
      path,
      "authenticatedSource",
      "must be a non-empty string",
    );
  const read = rows.map((row, index): ElicitationRow => {
    const where = `scenarios[${index}]`;
    if (!isObject(row)) throw new ConfigError(path, where, "must be an object");
    const id = row["id"];
    if (typeof id !== "string" || id.length === 0)
      throw new ConfigError(path, `${where}.id`, "must be a non-empty string");
    const transports = row["transports"];
    if (
      transports !== undefined &&
      !(
        Array.isArray(transports) &&
        transports.every((t) => typeof t === "string")
      )
    )
      throw new ConfigError(
        path,
        `${where}.transports`,
        "must be a list of transport names",
      );
    const base = {
      id,
      transports: transports ?? null,
    };
    if (hasKey(row, "atomic")) {
      const responses = new Map<string, Json>();
      const raw = withResponses ? (row["responses"] ?? {}) : {};
      if (!isObject(raw))
        throw new ConfigError(path, `${where}.responses`, "must be an object");
      for (const [key, response] of Object.entries(raw))
        responses.set(key, response);
      return { ...base, atomic: row["atomic"] ?? null, responses };
    }
    const steps = row["steps"] ?? [];
    if (!Array.isArray(steps))
      throw new ConfigError(path, `${where}.steps`, "must be a list");
    return { ...base, steps };
  });
  return {
    authenticatedSource: typeof source === "string" ? source : null,
    rows: read,
  };
}

/** Every `*.schema.json` of the schema directory, parsed (for the MCP definitions). */
function schemaDocuments(
  configFile: string,
  schemaDir: SchemaDir,
): JsonObject[] {
  const fail = (reason: string): never => {
    throw new ConfigError(configFile, "schemaDir", reason);
  };
  let names: string[] = [];
  try {
    names = readdirSync(schemaDir.path).filter((name) =>
      name.endsWith(".schema.json"),
    );
  } catch (error) {
    fail(`cannot read ${schemaDir.path}: ${(error as Error).message}`);
  }
  return names.sort().map((name) => {
    const document = parseStrictJson(
      readFileSync(join(schemaDir.path, name), "utf8"),
    );
    return isObject(document) ? document : fail(`${name} is not a JSON object`);
  });
}

/** The MCP definitions of the schema directory; an unusable one is the config's error. */
export function mcpChecksFor(
  configFile: string,
  schemaDir: SchemaDir,
): McpChecks {
  const documents = schemaDocuments(configFile, schemaDir);
  try {
    return mcpChecks(documents);
  } catch (error) {
    throw new ConfigError(configFile, "schemaDir", (error as Error).message);
  }
}

// ---------------------------------------------------------------- client

/** One answer on the wire: the HTTP status (null over stdio) and the parsed message. */
interface Answer {
  readonly status: number | null;
  /** The parsed body or line; undefined when there is none or it is not JSON. */
  readonly message: Json | undefined;
  /** Why the body or line is not a JSON message, or null. */
  readonly malformed: string | null;
}

function parseAnswer(status: number | null, bytes: Buffer): Answer {
  if (bytes.length === 0)
    return { status, message: undefined, malformed: "no body" };
  try {
    return { status, message: decodeJson(bytes), malformed: null };
  } catch (error) {
    return { status, message: undefined, malformed: (error as Error).message };
  }
}

function errorCode(message: Json | undefined): number | null {
  const error = isObject(message) ? message["error"] : undefined;
  const code = isObject(error) ? error["code"] : undefined;
  return typeof code === "number" ? code : null;
}

/**
 * The lines a stdio server writes, in order: with one message outstanding,
 * the next line is its answer, whatever its id (a line with another id is
 * that message's correlation failure, never a wait).
 */
class StdioLines {
  private readonly queue: Buffer[] = [];
  private waiter: ((line: Buffer) => void) | null = null;

  readonly take = (line: Buffer): void => {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter !== null) waiter(line);
    else this.queue.push(line);
  };

  /** Drops the lines no message waited for (a late answer), with a note. */
  drain(): void {
    for (const line of this.queue.splice(0))
      note(
        `dropped a line no message waits for: ${line.toString("utf8").slice(0, 120)}`,
      );
  }

  /** The next line, or null after `timeoutMs`. */
  next(timeoutMs: number): Promise<Buffer | null> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return within(
      new Promise<Buffer>((resolve) => {
        this.waiter = resolve;
      }),
      timeoutMs,
      null,
    ).finally(() => {
      this.waiter = null;
    });
  }
}

/**
 * The wire as this suite uses it: one message out, its one answer back.
 * Over HTTP a POST with the mode's credentials, whatever the status; over
 * stdio one line to the server, then the next line it writes.
 */
interface Exchanges {
  send(line: string): Promise<Answer>;
  close(): Promise<void>;
}

class HttpExchanges implements Exchanges {
  private readonly http: HttpConnection;
  private readonly url: URL;
  private readonly headers: Record<string, string>;

  constructor(
    private readonly settings: StepClientSettings,
    private readonly connection: Connection,
  ) {
    const tls = connection.credentials?.tls ?? {
      ca: null,
      cert: null,
      key: null,
    };
    const token = connection.credentials?.token ?? null;
    this.headers = { "Content-Type": "application/json" };
    if (token !== null) this.headers["Authorization"] = `Bearer ${token}`;
    this.url = interceptUrl(settings.endpoint ?? "");
    this.http = new HttpConnection(
      this.url,
      tls,
      exchangeLimit(settings.timeoutMs),
    );
  }

  async send(line: string): Promise<Answer> {
    try {
      const answer = await this.http.post(this.url, line, this.headers, {
        timeoutMs: this.settings.timeoutMs,
      });
      return parseAnswer(answer.status, answer.body);
    } catch (error) {
      throw new RowFailure(`transport: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.http.close();
    await this.connection.close();
  }
}

class StdioExchanges implements Exchanges {
  constructor(
    private readonly settings: StepClientSettings,
    private readonly child: ChildServer,
    private readonly lines: StdioLines,
  ) {}

  async send(line: string): Promise<Answer> {
    this.lines.drain();
    if (!this.child.session.write(line))
      throw new RowFailure("the server process has exited");
    const answer = await this.lines.next(this.settings.timeoutMs);
    if (answer === null)
      throw new RowFailure(`no answer within ${this.settings.timeoutMs} ms`);
    return parseAnswer(null, answer);
  }

  close(): Promise<void> {
    return this.child.close();
  }
}

/** The run's link to its server: the exchanges, the control client, the upload endpoint. */
interface Link {
  readonly exchanges: Exchanges;
  readonly control: ControlClient;
  readonly uploadEndpoint: string | null;
  readonly transport: "http" | "stdio";
  /** Closes the exchanges (stdio: the server is stopped and reaped). */
  close(): Promise<void>;
}

/** Opens the link: over HTTP the run's credentials, over stdio the server started here. */
async function openLink(settings: StepClientSettings): Promise<Link> {
  if (settings.transport === "http") {
    const connection = await connect(settings);
    const exchanges = new HttpExchanges(settings, connection);
    return {
      exchanges,
      control: connection.control,
      uploadEndpoint: connection.uploadEndpoint,
      transport: "http",
      close: () => exchanges.close(),
    };
  }
  const lines = new StdioLines();
  const { child, control, uploadEndpoint } = await startStdioServer(
    settings,
    lines.take,
  );
  const exchanges = new StdioExchanges(settings, child, lines);
  return {
    exchanges,
    control,
    uploadEndpoint,
    transport: "stdio",
    close: () => exchanges.close(),
  };
}

/** Every `items[].body.ref` of the message's event that `aliases` binds, replaced (a copy). */
export function rebindItems(
  message: Json,
  aliases: ReadonlyMap<string, string>,
): Json {
  const copy = cloneJson(message);
  const params = isObject(copy) ? copy["params"] : undefined;
  const event = isObject(params) ? params["event"] : undefined;
  const items = isObject(event) ? event["items"] : undefined;
  if (!Array.isArray(items)) return copy;
  for (const item of items) {
    const body = isObject(item) ? item["body"] : undefined;
    if (!isObject(body) || typeof body["ref"] !== "string") continue;
    const bound = aliases.get(body["ref"]);
    if (bound !== undefined) body["ref"] = bound;
  }
  return copy;
}

class ClientRun {
  readonly control: ControlClient;
  readonly exchanges: Exchanges;
  /** The upload endpoint (the config's, else the readiness file's over stdio). */
  readonly uploadEndpoint: string | null;
  readonly transport: "http" | "stdio";

  constructor(
    readonly settings: StepClientSettings,
    link: Link,
    readonly schemas: SchemaSet,
    readonly host: HostDeps,
  ) {
    this.control = link.control;
    this.exchanges = link.exchanges;
    this.uploadEndpoint = settings.upload?.endpoint ?? link.uploadEndpoint;
    this.transport = link.transport;
  }

  mark(rowId: string): Promise<void> {
    return this.control.ok("/mark", {
      scenario: rowId,
      kind: ROW_START,
      id: rowId,
    });
  }

  // ------------------------------------------------ wire rows

  async wire(row: WireRow): Promise<JsonObject> {
    const aliases = new Map<string, string>();
    const steps: JsonObject[] = [];
    for (const [index, step] of row.steps.entries()) {
      const where = `steps[${index}]`;
      if (!isObject(step)) throw new RowFailure(`${where} is not an object`);
      if (step["op"] === "upload")
        steps.push(await this.upload(step, where, aliases));
      else if (step["op"] === "send")
        steps.push(await this.sendStep(step, where, aliases));
      else
        throw new RowFailure(
          `${where}: op ${JSON.stringify(step["op"] ?? null)} is not upload or send`,
        );
    }
    return { steps };
  }

  private token(credential: Json | undefined, where: string): string | null {
    const fromEnv = (name: string): string | null => {
      const value = process.env[name];
      if (value === undefined || value.length === 0) {
        note(`${where}: $${name} is not set; sending no credential`);
        return null;
      }
      return value;
    };
    switch (credential) {
      case "upload":
        return fromEnv(this.settings.upload?.tokenEnv ?? DEFAULT_TOKEN_ENV);
      case "unauthorized":
        return fromEnv(UNAUTHORIZED_TOKEN_ENV);
      case "none":
        return null;
      default:
        throw new RowFailure(
          `${where}: credential must be upload, unauthorized or none`,
        );
    }
  }

  private async upload(
    step: JsonObject,
    where: string,
    aliases: Map<string, string>,
  ): Promise<JsonObject> {
    const alias = step["alias"];
    if (typeof alias !== "string" || alias.length === 0)
      throw new RowFailure(`${where}: alias must be a non-empty string`);
    const text = step["bodyBase64"];
    const bytes = typeof text === "string" ? decodeBase64(text) : null;
    if (bytes === null)
      throw new RowFailure(`${where}: bodyBase64 is not base64`);
    const declared = step["sha256"];
    if (declared !== undefined && typeof declared !== "string")
      throw new RowFailure(`${where}: sha256 must be a string`);
    const token = this.token(step["credential"], where);
    const endpoint = this.uploadEndpoint;
    if (endpoint === null) throw new RowFailure(`${where}: no upload endpoint`);
    const outcome = await uploadContent(
      {
        endpoint,
        token,
        timeoutMs: this.settings.upload?.timeoutMs ?? 5000,
        tls: null,
      },
      bytes,
      { size: bytes.length, sha256: declared ?? sha256Hex(bytes) },
      this.schemas.uploadReceipt,
    );
    if ("error" in outcome) throw new RowFailure(`${where}: ${outcome.error}`);
    if (outcome.problem !== null) note(`${where}: ${outcome.problem}`);
    const ref = outcome.receipt?.ref ?? null;
    if (outcome.status === 201 && ref !== null) aliases.set(alias, ref);
    return { op: "upload", status: outcome.status, ref };
  }

  private async sendStep(
    step: JsonObject,
    where: string,
    aliases: ReadonlyMap<string, string>,
  ): Promise<JsonObject> {
    if (!hasKey(step, "message")) throw new RowFailure(`${where}: no message`);
    const message = rebindItems(step["message"] ?? null, aliases);
    const answer = await this.exchanges.send(encodeJson(message));
    if (answer.status !== null) {
      const accepted = answer.status === 200;
      return {
        op: "send",
        outcome: accepted ? "accepted" : "rejected",
        status: answer.status,
        error: errorCode(answer.message),
        response: accepted ? (answer.message ?? null) : null,
      };
    }
    const accepted =
      isObject(answer.message) && hasKey(answer.message, "result");
    return {
      op: "send",
      outcome: accepted ? "accepted" : "rejected",
      status: null,
      error: errorCode(answer.message),
      response: accepted ? (answer.message ?? null) : null,
    };
  }

  // ------------------------------------------------ atomic rows

  /**
   * The reply an intercept got, as the host judges it: a 200's message;
   * over HTTP a refusal that carries a JSON-RPC error is that error reply
   * (as the same refusal is over stdio); anything else fails the row.
   */
  private async reply(request: JsonObject): Promise<Json> {
    const answer = await this.exchanges.send(encodeJson(request));
    if (answer.status === null || answer.status === 200) {
      if (answer.malformed !== null)
        note(`malformed reply: ${answer.malformed}`);
      return answer.message === undefined ? null : answer.message;
    }
    if (isObject(answer.message) && hasKey(answer.message, "error"))
      return answer.message;
    throw new RowFailure(`HTTP status ${answer.status}`);
  }

  async atomic(row: AtomicRow): Promise<JsonObject> {
    const atomic = row.atomic;
    if (!isObject(atomic)) throw new RowFailure("atomic must be an object");
    const request = atomic["request"];
    if (!isObject(request))
      throw new RowFailure("atomic.request must be an object");
    const userResult = atomic["userResult"];
    if (!isObject(userResult))
      throw new RowFailure("atomic.userResult must be an object");
    const invalid = this.schemas.request(request);
    if (invalid !== null)
      throw new RowFailure(
        `atomic.request fails intercept-request: ${invalid}`,
      );
    const notSent = (outcome: string): JsonObject => ({
      request: outcome,
      result: "not-sent",
      published: null,
      provenance: null,
    });
    const judged = judgeRequestReply(
      request,
      await this.reply(request),
      userResult,
      this.host,
    );
    if (judged.request === "rejected") {
      note(`${row.id}: request reply rejected: ${judged.reason}`);
      return notSent("rejected");
    }
    if (judged.request === "denied") return notSent("denied");
    const call = resultRequest(
      request,
      judged.result,
      { eventId: `${row.id}:result`, partId: `${row.id}:result-body` },
      atomic["resultCapabilities"] ?? null,
    );
    const callInvalid = this.schemas.request(call);
    if (callInvalid !== null)
      throw new RowFailure(
        `the result request fails intercept-request: ${callInvalid}`,
      );
    const view = requestView(request, this.host.forms);
    const settled = judgeResultReply(
      call,
      await this.reply(call),
      judged.result,
      view,
      this.host,
    );
    if (settled.result === "rejected") {
      note(`${row.id}: result reply rejected: ${settled.reason}`);
      return {
        request: "allowed",
        result: "rejected",
        published: null,
        provenance: null,
      };
    }
    return {
      request: "allowed",
      result: "accepted",
      published: settled.published,
      provenance: settled.edited ? "hook" : judged.provenance,
    };
  }
}

async function runRow(
  run: ClientRun,
  row: ElicitationRow,
): Promise<ResultEntry> {
  const { id } = row;
  if (row.transports !== null && !row.transports.includes(run.transport))
    return {
      id,
      status: "unsupported",
      error: `the row runs over ${row.transports.join(", ")} only`,
    };
  return await rowResult(id, note, async () => {
    await run.mark(id);
    return isAtomic(row) ? await run.atomic(row) : await run.wire(row);
  });
}

async function runClient(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const { rows } = readElicitationScenarios(
    settings.scenarioFile,
    { file: configPath, field: "scenarioFile" },
    false,
  );
  const schemas = schemasFor(configPath, settings.schemaDir);
  const mcp = mcpChecksFor(configPath, settings.schemaDir);
  const host: HostDeps = {
    engine: {
      validateResponse: schemas.response,
      content: schemas.content,
      hostRule: () => null,
    },
    mcp,
    forms: new FormSchemas(),
  };
  return runStepClient(settings, {
    rows,
    extra: {},
    note,
    open: () => openLink(settings),
    start: (link: Link) => {
      const run = new ClientRun(settings, link, schemas, host);
      return Promise.resolve((row: ElicitationRow) => runRow(run, row));
    },
  });
}

// ---------------------------------------------------------------- server

/** A refusal: HTTP `status` with the JSON-RPC -32602 error body; over stdio that line. */
function refusal(message: Json, status: number, reason: string): RawReply {
  note(`refused (${status}): ${reason}`);
  return new RawReply(
    status,
    encodeJson(errorResponse(replyId(message), INVALID_PARAMS, reason)),
  );
}

/**
 * The elicitation server's behaviour: every message but an observation or
 * a discovery request is an intercept the receiver judges; an accepted one
 * is recorded and answered with its scripted response, else no effect.
 */
export class ElicitationBehaviour implements ServerBehaviour {
  constructor(
    private readonly receiver: ElicitationReceiver,
    private readonly responses: ReadonlyMap<string, Json>,
    private readonly log: EntryLog,
  ) {}

  capabilities(): JsonObject {
    return getCapabilities(discoveryManifest());
  }

  handle(message: Json): Reply {
    const method = isObject(message) ? message["method"] : undefined;
    if (method === "hooks/observe") return undefined;
    if (
      method === "hooks/capabilities" &&
      isObject(message) &&
      hasKey(message, "id")
    )
      return discoveryResponse(replyId(message));
    const verdict = this.receiver.receive(message);
    if (!verdict.accepted)
      return refusal(message, verdict.status, verdict.reason);
    this.log.append({
      kind: "elicitation",
      eventId: verdict.eventId,
      type: verdict.type,
      summary: verdict.summary,
    });
    if (this.responses.has(verdict.eventId))
      return this.responses.get(verdict.eventId) ?? null;
    return noEffectReply(replyId(message));
  }
}

export interface ElicitationServerOptions {
  readonly uploadToken: string;
  readonly schemas: SchemaSet;
  readonly mcp: McpChecks;
  readonly limits?: ListenerLimits;
  readonly waitLimitMs?: number;
}

/** The control calls the suite uses: health, receipts, `row-start` marks, shutdown. */
const CONTROL_CALLS = [
  "GET /health",
  "GET /receipts",
  "POST /mark",
  "POST /shutdown",
];

/** The elicitation suite's server for `file`, and the entry log it records into. */
export function elicitationServer(
  file: ElicitationFile,
  options: ElicitationServerOptions,
): { suite: SuiteServer; log: EntryLog; receiver: ElicitationReceiver } {
  const log = new EntryLog();
  const store = new ContentStore();
  const holds = new Barriers();
  const uploads = uploadListener({
    token: options.uploadToken,
    store,
    log,
    limits: options.limits ?? DEFAULT_LIMITS,
  });
  const receiver = new ElicitationReceiver({
    request: options.schemas.request,
    mcp: options.mcp,
    forms: new FormSchemas(),
    stored: (ref) => store.has(ref),
    authenticatedSource: file.authenticatedSource ?? "",
  });
  const responses = new Map<string, Json>();
  for (const row of file.rows)
    if (isAtomic(row))
      for (const [id, response] of row.responses) responses.set(id, response);
  const suite: SuiteServer = {
    behaviour: new ElicitationBehaviour(receiver, responses, log),
    controlRoutes: (context) =>
      stepControlRoutes(context, log, {
        holds,
        waitLimitMs: options.waitLimitMs,
        markKinds: [ROW_START],
        calls: CONTROL_CALLS,
      }),
    listeners: [uploads],
    onStop: () => {
      holds.releaseAll();
      log.stop();
    },
  };
  return { suite, log, receiver };
}

function runServer(configPath: string): Promise<number> {
  // The upload receiver needs its token: `uploadAuth` is required.
  return runStepServer(
    configPath,
    { name: SUITE, uploads: true },
    (settings, schemas) => {
      const mcp = mcpChecksFor(configPath, settings.schemaDir);
      const file = readElicitationScenarios(
        settings.scenarioFile,
        { file: configPath, field: "scenarioFile" },
        true,
      );
      if (file.authenticatedSource === null)
        throw new ConfigError(
          configPath,
          "scenarioFile",
          `${settings.scenarioFile}: authenticatedSource is required`,
        );
      return elicitationServer(file, {
        uploadToken: settings.uploadToken ?? "",
        schemas,
        mcp,
      }).suite;
    },
  );
}

/** The elicitation suite, run by the lifecycle commands with `suite: "elicitation"`. */
export const suite: Suite = {
  name: SUITE,
  handlers: {
    "lifecycle-client": runClient,
    "lifecycle-server": runServer,
  },
};
