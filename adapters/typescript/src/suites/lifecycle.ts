// The lifecycle suite (docs/LIFECYCLE.md): what happens around one response.
//
// Client: a blind client that runs each scenario's steps itself against the
// server (several requests in flight over HTTP, replies staged and accepted
// one by one, cancellation, late and duplicate replies, observation after
// settlement, content uploaded before the event that refers to it, stray
// stdio frames) or runs a serial interceptor chain, marks each milestone
// with the server's control listener, and reports what it derived with the
// server's receipt entries.
//
// Server: every scenario request's reply is held until released (sticky by
// request id); the n-th receipt of an id gets the n-th reply of its
// sequence; observations are checked and recorded and, when they belong to
// a scenario, answered with a deliberately hostile intercept response (a
// notification of a held-observer chain's boundary event is recorded
// `observer-blocked` just before its `observed` entry, as upstream servers
// record it); the upload receiver stores bytes under receiver-made references.

import { readFileSync } from "node:fs";
import {
  decodeBase64,
  encodeJson,
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  replyId,
} from "../sdk/codec.js";
import type { EngineDeps, Outcome } from "../sdk/engine.js";
import {
  HttpClientTransport,
  interceptUrl,
  DEFAULT_LIMITS,
  type ListenerLimits,
} from "../sdk/httpTransport.js";
import {
  cloneJson,
  hasKey,
  isObject,
  type Json,
  type JsonObject,
} from "../sdk/json.js";
import {
  discoveryManifest,
  discoveryResponse,
  getCapabilities,
} from "../sdk/manifest.js";
import {
  bodyRefs,
  eventIdOf,
  eventOf,
  observeNotification,
  projectItems,
  rebindBodyRefs,
  type ContentProjection,
} from "../sdk/observe.js";
import type { SchemaSet } from "../sdk/schemas.js";
import { SettingError } from "../sdk/settings.js";
import { StdioSession, within } from "../sdk/stdioTransport.js";
import type { ClientTls } from "../sdk/tls.js";
import {
  ContentStore,
  uploadContent,
  uploadReceiver,
  type ContentDescriptor,
} from "../sdk/upload.js";
import { Barriers } from "../contract/barriers.js";
import {
  ConfigError,
  readStepClientConfig,
  readStepScenarios,
  readStepServerConfig,
  readStepUpload,
  type ObserveFault,
  type StepClientSettings,
  type StepScenario,
  type UploadSettings,
} from "../contract/config.js";
import { ControlClient, ControlError } from "../contract/controlClient.js";
import {
  asConfigError,
  connect,
  dropped,
  exchangeLimit,
  parsed,
  schemasFor,
  type HttpCredentials,
  type Received,
  type Wire,
} from "../contract/steps.js";
import { EntryLog } from "../contract/entries.js";
import { stepControlRoutes } from "../contract/stepControl.js";
import { writeReport, type ResultEntry } from "../contract/report.js";
import {
  RawReply,
  Refusal,
  SILENCE,
  type Reply,
  type ServerBehaviour,
  type SuiteServer,
} from "../contract/server.js";

type Engine = typeof import("../sdk/engine.js");

/** The suites this module's roles run. */
const SUITE = "lifecycle";
/** The upload receiver's path and its body limit. */
const UPLOAD_PATH = "/upload";
const UPLOAD_LIMIT = 1024 * 1024;

function debug(text: string): void {
  if (process.env["AHP_DEBUG"])
    process.stderr.write(`ahp-ts lifecycle: ${text}\n`);
}

/**
 * The backends of the config's `backends` [ext], by name: an endpoint is
 * called over HTTP(S) with the run's credentials, a command is started on
 * first use as a stdio backend (kept once it runs, reaped at close). A
 * backend that cannot be reached (refused, not startable) fails the call.
 */
export class Backends {
  private readonly http = new Map<string, HttpClientTransport>();
  private readonly stdio = new Map<string, StdioSession>();

  constructor(
    private readonly settings: StepClientSettings,
    private readonly credentials: HttpCredentials | null,
  ) {}

  /** Whether `name` is a backend of its own (otherwise the run's server serves it). */
  has(name: string): boolean {
    return this.settings.backends.has(name);
  }

  async call(
    name: string,
    line: string,
    id: Json,
    deadlineMs: number,
  ): Promise<Received> {
    const backend = this.settings.backends.get(name);
    if (backend === undefined)
      return { error: `backend ${name}: the config's backends names none` };
    const started = Date.now();
    if ("endpoint" in backend) {
      let transport = this.http.get(name);
      if (transport === undefined) {
        let url: URL;
        try {
          url = interceptUrl(backend.endpoint);
        } catch {
          return { error: `backend ${name}: bad endpoint ${backend.endpoint}` };
        }
        transport = new HttpClientTransport(
          url,
          this.credentials?.tls ?? { ca: null, cert: null, key: null },
          exchangeLimit(this.settings.timeoutMs),
          this.credentials?.token ?? null,
        );
        this.http.set(name, transport);
      }
      return parsed(await transport.send(line, { timeoutMs: deadlineMs }));
    }
    let session = this.stdio.get(name);
    if (session === undefined) {
      const starting = new StdioSession(backend.command, null, (bad) =>
        dropped(bad, `a line from backend ${name} no call waits for`),
      );
      const problem = await within(
        starting.started,
        deadlineMs,
        `not started within ${deadlineMs} ms`,
      );
      if (problem !== null) {
        await starting.close(0);
        return { error: `backend ${name} cannot be started: ${problem}` };
      }
      session = starting;
      this.stdio.set(name, session);
    }
    const remaining = Math.max(1, deadlineMs - (Date.now() - started));
    return parsed(await session.request(line, id, remaining));
  }

  async close(): Promise<void> {
    for (const transport of this.http.values()) await transport.close();
    await Promise.all([...this.stdio.values()].map((s) => s.close()));
  }
}

// ---------------------------------------------------------------- client: rows

/** A row that cannot run to the end: reported `failed` with the reason. */
class RowFailure extends Error {}
/** A row this client does not implement: reported `unsupported`. */
class RowUnsupported extends Error {}

type KeyState = "pending" | "staged" | "published" | "cancelled" | "failed";

const STEP_OPS = new Set([
  "send",
  "wait",
  "release",
  "receive",
  "accept",
  "cancel",
  "failOpen",
  "observe",
  "upload",
  "emit",
]);

/** The keys a published state carries (the core rules' keys). */
const STATE_KEYS = [
  "decision",
  "executed",
  "input",
  "messages",
  "flow",
  "result",
] as const;

function stringAt(block: JsonObject, key: string, where: string): string {
  const value = block[key];
  if (typeof value !== "string" || value.length === 0)
    throw new RowFailure(`${where}: ${key} must be a non-empty string`);
  return value;
}

function countAt(block: JsonObject, key: string, where: string): number {
  const value = block[key];
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
    throw new RowFailure(`${where}: ${key} must be a non-negative integer`);
  return value;
}

/** The original `tool.input` of a request's event (undefined when it has no tool). */
function originalInput(request: JsonObject): Json | undefined {
  const tool = eventOf(request)?.["tool"];
  return isObject(tool) && hasKey(tool, "input") ? tool["input"] : undefined;
}

/** What one client run shares across its rows. */
class ClientRun {
  readonly contentUploads: JsonObject[] = [];
  private readonly sends = new Map<string, number>();
  private readonly observed = new Map<string, number>();
  readonly deps: EngineDeps;

  constructor(
    readonly settings: StepClientSettings,
    readonly wire: Wire,
    readonly control: ControlClient,
    readonly engine: Engine,
    readonly schemas: SchemaSet,
    /** The upload endpoint when the config gives none (stdio: the readiness file's). */
    readonly uploadEndpoint: string | null,
    /** The config's `backends` [ext]; every other backend name is the run's server. */
    readonly backends: Backends,
  ) {
    // The lifecycle vectors run the `task` tool with inputs the core suite's
    // host rule would refuse; that rule belongs to the core suite's host.
    this.deps = {
      validateResponse: schemas.response,
      content: schemas.content,
      hostRule: () => null,
    };
  }

  /** Counts one more send of `id` in this run; returns how many there have been. */
  sent(id: string): number {
    const count = (this.sends.get(id) ?? 0) + 1;
    this.sends.set(id, count);
    return count;
  }

  /** Counts one more observation of `eventId` in this run. */
  observe(eventId: string): number {
    const count = (this.observed.get(eventId) ?? 0) + 1;
    this.observed.set(eventId, count);
    return count;
  }

  mark(scenario: string, kind: string, id: string): Promise<void> {
    return this.control.ok("/mark", { scenario, kind, id });
  }
}

/** The upload settings of the config, or of a step's own block. */
function uploadSettings(run: ClientRun, step: JsonObject): UploadSettings {
  const configured = run.settings.upload;
  if (step["upload"] === undefined) {
    if (configured === null)
      throw new RowFailure("upload: the config has no upload block");
    return configured;
  }
  const own = readStepUpload(step["upload"], configured?.endpoint ?? null);
  if (typeof own === "string") throw new RowFailure(`upload: ${own}`);
  return own;
}

/**
 * The TLS trust of a step's own upload block [ext]: `tls.caFile` verifies an
 * https upload origin. It is all the TLS material an upload uses: never the
 * event's CA, never the event's client certificate (docs/ISOLATION.md).
 */
function stepUploadTls(step: JsonObject): ClientTls | null {
  const block = step["upload"];
  if (!isObject(block) || block["tls"] === undefined) return null;
  const tls = block["tls"];
  const caFile = isObject(tls) ? tls["caFile"] : undefined;
  if (typeof caFile !== "string")
    throw new RowFailure("upload: tls must be an object with a caFile path");
  try {
    return { ca: readFileSync(caFile), cert: null, key: null };
  } catch (error) {
    throw new RowFailure(
      `upload: tls.caFile: cannot read ${caFile}: ${(error as Error).message}`,
    );
  }
}

/** Uploads bytes as declared; resolves with the status and a confirmed receipt, if any. */
async function upload(
  run: ClientRun,
  settings: UploadSettings,
  bytes: Buffer,
  declared: { size: number; sha256: string },
  tls: ClientTls | null = null,
): Promise<{ status: number; receipt: ContentDescriptor | null }> {
  const endpoint = settings.endpoint ?? run.uploadEndpoint;
  if (endpoint === null) throw new RowFailure("upload: no upload endpoint");
  const token =
    settings.tokenEnv === null
      ? null
      : (process.env[settings.tokenEnv] ?? null);
  if (settings.tokenEnv !== null && token === null)
    debug(`upload: $${settings.tokenEnv} is not set; sending no credential`);
  if (bytes.length > settings.maxBytes)
    debug(`upload: ${bytes.length} bytes exceed maxBytes ${settings.maxBytes}`);
  const outcome = await uploadContent(
    { endpoint, token, timeoutMs: settings.timeoutMs, tls },
    bytes,
    declared,
    run.schemas.uploadReceipt,
  );
  if ("error" in outcome) throw new RowFailure(outcome.error);
  if (outcome.problem !== null) debug(`upload: ${outcome.problem}`);
  return { status: outcome.status, receipt: outcome.receipt };
}

/** The shared part of a step row and a chain row: aliases, content sources, sending. */
class Row {
  /** Upload aliases (and content sources) bound to the receiver's references. */
  readonly aliases = new Map<string, string>();

  constructor(
    readonly run: ClientRun,
    readonly scenario: StepScenario,
  ) {}

  get id(): string {
    return this.scenario.id;
  }

  request(key: string): JsonObject {
    const request = this.scenario.requests[key];
    if (!isObject(request)) throw new RowFailure(`no request ${key}`);
    return request;
  }

  /**
   * `message` ready for the wire: aliases rebound; a content source that no
   * step uploaded is uploaded now (its first use) and reported.
   */
  async prepare(message: JsonObject, method: string): Promise<JsonObject> {
    let ready = rebindBodyRefs(message, this.aliases) as JsonObject;
    for (const ref of bodyRefs(ready)) {
      const source = this.run.settings.contentSources.find(
        (candidate) => candidate.ref === ref,
      );
      if (source === undefined || this.aliases.has(ref)) continue;
      const uploadSettings = this.run.settings.upload;
      if (uploadSettings === null)
        throw new RowFailure(
          `content source ${ref}: the config has no upload block`,
        );
      const { status, receipt } = await upload(
        this.run,
        uploadSettings,
        source.bytes,
        {
          size: source.size,
          sha256: source.sha256,
        },
      );
      if (receipt === null)
        throw new RowFailure(
          `content source ${ref}: upload answered ${status}`,
        );
      this.aliases.set(ref, receipt.ref);
      this.run.contentUploads.push({
        sourceRef: ref,
        descriptor: { ...receipt },
        method,
        eventId: eventIdOf(ready),
      });
    }
    ready = rebindBodyRefs(ready, this.aliases) as JsonObject;
    return ready;
  }

  /**
   * Sends a `hooks/observe` notification without waiting for its answer,
   * then waits (`POST /wait-observed`) until the server recorded it, so
   * that its receipt precedes whatever the next step causes. An observer
   * that never answers delays nothing; one that refuses the notification
   * fails the row.
   */
  async notify(message: JsonObject): Promise<void> {
    const ready = await this.prepare(message, "hooks/observe");
    const invalid = this.run.schemas.observe(ready);
    if (invalid !== null)
      throw new RowFailure(
        `notification fails observe-notification schema: ${invalid}`,
      );
    const eventId = eventIdOf(ready);
    const notification = this.run.wire.notify(encodeJson(ready));
    const count = this.run.observe(eventId);
    const refused = notification.refused.then((reason) => {
      throw new RowFailure(`the notification of ${eventId} failed: ${reason}`);
    });
    try {
      await Promise.race([
        this.run.control.ok("/wait-observed", { eventId, count }),
        refused,
      ]);
    } finally {
      notification.done();
    }
  }

  /** Waits for a reply, bounded by the config's timeout. */
  async take(reply: Promise<Received>, what: string): Promise<Received> {
    const received = await within(reply, this.run.settings.timeoutMs, null);
    if (received === null)
      throw new RowFailure(
        `${what}: no reply within ${this.run.settings.timeoutMs} ms`,
      );
    return received;
  }

  applied(request: JsonObject, received: Received): Outcome {
    if ("error" in received)
      return { status: "rejected", reason: `transport: ${received.error}` };
    if ("malformed" in received)
      return {
        status: "rejected",
        reason: `malformed reply: ${received.malformed}`,
      };
    return this.run.engine.applyResponse(
      request,
      received.response,
      this.run.deps,
    );
  }
}

interface Slot {
  readonly key: string;
  readonly reply: Promise<Received>;
}

/** One scenario of steps. */
class StepRow extends Row {
  private readonly published: string[] = [];
  private readonly cancelled: string[] = [];
  private readonly ignored: string[] = [];
  private readonly states: JsonObject = {};
  private readonly observations: Json[] = [];
  private readonly uploadStatuses: number[] = [];
  private readonly keys = new Map<string, KeyState>();
  private readonly staged = new Map<string, Received>();
  private readonly slots = new Map<string, Slot>();
  /** Each request as sent (rebound), and its bytes for a replay. */
  private readonly sentRequests = new Map<string, JsonObject>();
  private readonly sentLines = new Map<string, string>();

  async execute(): Promise<JsonObject> {
    for (const [index, raw] of this.scenario.steps.entries()) {
      if (!isObject(raw))
        throw new RowFailure(`steps[${index}] is not an object`);
      await this.step(raw, `steps[${index}] (${JSON.stringify(raw["op"])})`);
    }
    return {
      published: this.published,
      cancelled: this.cancelled,
      ignored: this.ignored,
      states: this.states,
      observations: this.observations,
      uploadStatuses: this.uploadStatuses,
    };
  }

  private idOf(key: string): string {
    return this.request(key)["id"] as string;
  }

  private mark(kind: string, id: string): Promise<void> {
    return this.run.mark(this.id, kind, id);
  }

  private async step(step: JsonObject, where: string): Promise<void> {
    switch (step["op"]) {
      case "send":
        return this.send(step, where);
      case "wait": {
        const key = stringAt(step, "key", where);
        const count = countAt(step, "count", where);
        return this.run.control.ok("/wait", { id: this.idOf(key), count });
      }
      case "release":
        return this.run.control.ok("/release", {
          id: this.idOf(stringAt(step, "key", where)),
        });
      case "receive":
        return this.receive(stringAt(step, "slot", where), where);
      case "accept":
        return this.accept(stringAt(step, "key", where));
      case "cancel":
        return this.cancel(stringAt(step, "key", where));
      case "failOpen":
        return this.failOpen(stringAt(step, "key", where));
      case "observe":
        return this.observe(step, where);
      case "upload":
        return this.upload(step, where);
      case "emit":
        return this.emit(step, where);
      default:
        throw new RowUnsupported(
          `step op ${JSON.stringify(step["op"])} is not implemented`,
        );
    }
  }

  private async send(step: JsonObject, where: string): Promise<void> {
    const key = stringAt(step, "key", where);
    const slot = stringAt(step, "slot", where);
    const bypass = step["bypassSDK"] === true;
    const id = this.idOf(key);
    let line = bypass ? this.sentLines.get(key) : undefined;
    if (line === undefined) {
      const request = await this.prepare(this.request(key), "hooks/intercept");
      const invalid = this.run.schemas.request(request);
      if (invalid !== null)
        throw new RowFailure(
          `${where}: request fails intercept-request schema: ${invalid}`,
        );
      const unsupported = this.run.engine.unsupportedReason(request);
      if (unsupported !== null) throw new RowUnsupported(unsupported);
      line = encodeJson(request);
      this.sentRequests.set(key, request);
      this.sentLines.set(key, line);
    }
    const reply = bypass
      ? this.run.wire.replay(line, id)
      : this.run.wire.send(line, id);
    this.slots.set(slot, { key, reply });
    this.run.sent(id);
    if (!bypass && !this.keys.has(key)) this.keys.set(key, "pending");
  }

  private async receive(slot: string, where: string): Promise<void> {
    const bound = this.slots.get(slot);
    if (bound === undefined)
      throw new RowFailure(`${where}: no send bound slot ${slot}`);
    const received = await this.take(bound.reply, where);
    const state = this.keys.get(bound.key) ?? "pending";
    if (state !== "pending") {
      // Cancelled, already staged, published (or already evaluated):
      // dropped, whatever came back.
      this.ignored.push(slot);
      return;
    }
    if ("error" in received)
      throw new RowFailure(`${where}: ${received.error}`);
    if ("response" in received) {
      const invalid = this.run.schemas.response(received.response);
      if (invalid !== null)
        debug(`${this.id}: staged a reply that fails the schema: ${invalid}`);
    }
    this.staged.set(bound.key, received);
    this.keys.set(bound.key, "staged");
    await this.mark("acquired", this.idOf(bound.key));
  }

  private async accept(key: string): Promise<void> {
    const received = this.staged.get(key);
    const request = this.sentRequests.get(key);
    if (
      this.keys.get(key) !== "staged" ||
      received === undefined ||
      request === undefined
    )
      return;
    this.staged.delete(key);
    const outcome = this.applied(request, received);
    if (outcome.status === "unsupported")
      throw new RowUnsupported(outcome.reason);
    if (outcome.status === "rejected") {
      // Not accepted under the core rules: nothing is published.
      debug(`${this.id}: ${key} rejected: ${outcome.reason}`);
      this.keys.set(key, "failed");
      return;
    }
    const id = this.idOf(key);
    const state: JsonObject = {};
    for (const name of STATE_KEYS) {
      const value = outcome.actual[name];
      if (value !== undefined) state[name] = value;
    }
    this.states[id] = state;
    this.published.push(id);
    this.keys.set(key, "published");
    await this.mark("accepted", id);
  }

  private async cancel(key: string): Promise<void> {
    const id = this.idOf(key);
    await this.mark("cancelled", id);
    this.cancelled.push(id);
    // A staged reply is dropped; a published state stays as it is.
    this.staged.delete(key);
    this.keys.set(key, "cancelled");
  }

  private async failOpen(key: string): Promise<void> {
    const state = this.keys.get(key);
    if (state === "cancelled" || state === "staged" || state === "published")
      return;
    const id = this.idOf(key);
    const input = originalInput(this.request(key));
    this.states[id] = {
      decision: "allow",
      executed: true,
      ...(input === undefined ? {} : { input: cloneJson(input) }),
      messages: [],
    };
    this.published.push(id);
    this.keys.set(key, "published");
    await this.mark("accepted", id);
  }

  private async observe(step: JsonObject, where: string): Promise<void> {
    const key = stringAt(step, "key", where);
    const subscription = stringAt(step, "subscription", where);
    const items = step["items"];
    if (items !== undefined && !Array.isArray(items))
      throw new RowFailure(`${where}: items must be a list`);
    const request = this.request(key);
    const id = this.idOf(key);
    const published = this.states[id];
    const input =
      isObject(published) && hasKey(published, "input")
        ? published["input"]
        : originalInput(request);
    await this.notify(observeNotification(request, input, items));
    this.observations.push({
      eventId: eventIdOf(request),
      subscription,
      ...(input === undefined ? {} : { input: cloneJson(input) }),
    });
  }

  private async upload(step: JsonObject, where: string): Promise<void> {
    const alias = stringAt(step, "ref", where);
    const text = step["bodyBase64"];
    const bytes = typeof text === "string" ? decodeBase64(text) : null;
    if (bytes === null)
      throw new RowFailure(`${where}: bodyBase64 is not base64`);
    const size = countAt(step, "size", where);
    const sha256 = stringAt(step, "sha256", where);
    const settings = uploadSettings(this.run, step);
    const { status, receipt } = await upload(
      this.run,
      settings,
      bytes,
      { size, sha256 },
      stepUploadTls(step),
    );
    this.uploadStatuses.push(status);
    if (receipt !== null) this.aliases.set(alias, receipt.ref);
  }

  private async emit(step: JsonObject, where: string): Promise<void> {
    const frame = step["response"];
    if (!isObject(frame))
      throw new RowFailure(`${where}: response must be an object`);
    const id = frame["id"];
    if (typeof id !== "string" && typeof id !== "number")
      throw new RowFailure(`${where}: the frame needs a string or number id`);
    if (this.run.wire.transport !== "stdio")
      throw new RowFailure(`${where}: emit needs the stdio transport`);
    const dropped = this.run.wire.expectStray(id);
    await this.run.control.ok("/emit", { response: frame });
    if (
      (await within(dropped, this.run.settings.timeoutMs, "timeout")) ===
      "timeout"
    )
      throw new RowFailure(`${where}: the emitted frame never arrived`);
    await this.mark("discarded", String(id));
    this.ignored.push(`unsolicited:${String(id)}`);
  }
}

interface Subscription {
  readonly id: string;
  /** The backend's name: the run's server, unless the config's `backends` has it. */
  readonly backend: string;
  readonly mode: "intercept" | "observe";
  readonly failurePolicy: "fail-open" | "fail-closed";
  readonly content: ContentProjection;
  /** The deadline of an intercept subscription's call [ext]; null for the config's. */
  readonly timeoutMs: number | null;
}

/** The reserved backend name that no server serves [ext]: the config's `backends` says where it is not. */
const UNREACHABLE = "unreachable";

function readChain(chain: Json): {
  subscriptions: Subscription[];
  interrupt: boolean;
  holdObservers: boolean;
} {
  if (!isObject(chain) || !Array.isArray(chain["subscriptions"]))
    throw new RowFailure("chain needs a subscriptions list");
  const subscriptions = chain["subscriptions"].map((raw, index) => {
    const where = `chain.subscriptions[${index}]`;
    if (!isObject(raw)) throw new RowFailure(`${where} is not an object`);
    const pick = <T extends string>(
      key: string,
      choices: readonly T[],
      fallback: T,
    ): T => {
      const value = raw[key] ?? fallback;
      if (
        typeof value !== "string" ||
        !(choices as readonly string[]).includes(value)
      )
        throw new RowUnsupported(
          `${where}.${key} ${JSON.stringify(value)} is not implemented`,
        );
      return value as T;
    };
    const backend = raw["backend"] ?? "";
    if (typeof backend !== "string")
      throw new RowFailure(`${where}.backend must be a string`);
    const timeoutMs = raw["timeoutMs"] ?? null;
    if (
      timeoutMs !== null &&
      (typeof timeoutMs !== "number" ||
        !Number.isInteger(timeoutMs) ||
        timeoutMs < 1)
    )
      throw new RowFailure(`${where}.timeoutMs must be a positive integer`);
    return {
      id: stringAt(raw, "id", where),
      backend,
      timeoutMs,
      mode: pick("mode", ["intercept", "observe"] as const, "intercept"),
      failurePolicy: pick(
        "failurePolicy",
        ["fail-open", "fail-closed"] as const,
        "fail-open",
      ),
      content: pick("content", ["metadata", "omit"] as const, "metadata"),
    };
  });
  return {
    subscriptions,
    interrupt: chain["interrupt"] === true,
    holdObservers: chain["holdObservers"] === true,
  };
}

/** One serial interceptor chain over `requests.a`. */
class ChainRow extends Row {
  async execute(): Promise<JsonObject> {
    const chain = readChain(this.scenario.chain);
    const boundary = await this.prepare(this.request("a"), "hooks/intercept");
    const unsupported = this.run.engine.unsupportedReason(boundary);
    if (unsupported !== null) throw new RowUnsupported(unsupported);
    const event = eventOf(boundary);
    if (event?.["type"] !== "tool.before")
      throw new RowUnsupported(
        `chains at ${JSON.stringify(event?.["type"])} are not implemented`,
      );
    const rid = boundary["id"] as string;
    const original = originalInput(boundary);
    const hasItems = event !== null && hasKey(event, "items");
    const items = event?.["items"];
    const params = boundary["params"] as JsonObject;
    let effective: Json | undefined = original;
    // The state each call carries: the request's own until a reply settles one.
    let state: Json | undefined = params["state"];
    const called: string[] = [];
    const failures: string[] = [];
    const observations: string[] = [];
    const intercepts = chain.subscriptions.filter(
      (s) => s.mode === "intercept",
    );
    const mark = (kind: string) => this.run.mark(this.id, kind, rid);
    if (intercepts.length > 0 && !chain.interrupt)
      await this.run.control.ok("/release", { id: rid });
    for (const subscription of intercepts) {
      const call = cloneJson(boundary);
      const callEvent = eventOf(call) as JsonObject;
      const tool = callEvent["tool"];
      if (isObject(tool) && effective !== undefined)
        tool["input"] = cloneJson(effective);
      if (hasItems)
        callEvent["items"] = projectItems(items, subscription.content);
      if (state !== undefined)
        (call["params"] as JsonObject)["state"] = cloneJson(state);
      const invalid = this.run.schemas.request(call);
      if (invalid !== null)
        throw new RowFailure(
          `call ${subscription.id} fails intercept-request schema: ${invalid}`,
        );
      const line = encodeJson(call);
      called.push(subscription.id);
      if (chain.interrupt) {
        const reply = this.run.wire.send(line, rid);
        const count = this.run.sent(rid);
        // Interrupted while the first call is in flight: settled with the
        // original input; the late reply is dropped, nothing is observed.
        await this.run.control.ok("/wait", { id: rid, count });
        await mark("cancelled");
        await mark("chain-settled");
        await this.run.control.ok("/release", { id: rid });
        await this.take(reply, `call ${subscription.id}`);
        return { called, failures, observations, input: original ?? null };
      }
      // Every way a call fails (unreachable, a status, not a JSON-RPC
      // response, another id, an error, the deadline, the core rules) is an
      // operational failure; the subscription's policy decides.
      const deadlineMs = subscription.timeoutMs ?? this.run.settings.timeoutMs;
      let received: Promise<Received>;
      if (
        subscription.backend === UNREACHABLE ||
        this.run.backends.has(subscription.backend)
      ) {
        received = this.run.backends.call(
          subscription.backend,
          line,
          rid,
          deadlineMs,
        );
      } else {
        received = this.run.wire.call(line, rid, deadlineMs);
        this.run.sent(rid);
      }
      const outcome = this.applied(call, await received);
      if (outcome.status === "unsupported")
        throw new RowUnsupported(outcome.reason);
      if (outcome.status === "rejected") {
        process.stderr.write(
          `ahp-ts lifecycle client: ${this.id}: call ${subscription.id} failed (${subscription.failurePolicy}): ${outcome.reason}\n`,
        );
        failures.push(subscription.id);
        if (subscription.failurePolicy === "fail-closed") {
          effective = original;
          break;
        }
        continue;
      }
      effective = outcome.actual["input"];
      state = outcome.state;
      if (
        outcome.actual["decision"] === "deny" ||
        outcome.actual["flow"] === "stop"
      )
        break;
    }
    await mark("chain-settled");
    for (const subscription of chain.subscriptions) {
      if (subscription.mode === "intercept" && called.includes(subscription.id))
        continue;
      const message = observeNotification(
        boundary,
        effective,
        hasItems ? projectItems(items, subscription.content) : undefined,
      );
      if (chain.holdObservers) await mark("observer-blocked");
      await this.notify(message);
      observations.push(subscription.id);
    }
    return { called, failures, observations, input: effective ?? null };
  }
}

// ---------------------------------------------------------------- client: the run

async function runRow(
  run: ClientRun,
  scenario: StepScenario,
): Promise<ResultEntry> {
  const { id } = scenario;
  if (
    scenario.transports !== null &&
    !scenario.transports.includes(run.wire.transport)
  )
    return {
      id,
      status: "unsupported",
      error: `the scenario runs over ${scenario.transports.join(", ")} only`,
    };
  if (scenario.chain === null) {
    for (const step of scenario.steps) {
      const op = isObject(step) ? step["op"] : undefined;
      if (typeof op !== "string" || !STEP_OPS.has(op))
        return {
          id,
          status: "unsupported",
          error: `step op ${JSON.stringify(op)} is not implemented`,
        };
    }
  }
  try {
    const actual =
      scenario.chain === null
        ? await new StepRow(run, scenario).execute()
        : await new ChainRow(run, scenario).execute();
    return { id, status: "completed", actual };
  } catch (error) {
    if (error instanceof RowUnsupported)
      return { id, status: "unsupported", error: error.message };
    if (error instanceof RowFailure || error instanceof ControlError) {
      process.stderr.write(
        `ahp-ts lifecycle client: ${id}: ${error.message}\n`,
      );
      return { id, status: "failed", error: error.message };
    }
    throw error;
  }
}

/** Opens the wire (stdio: starts the server) and the control client. */

async function runClient(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const scenarios = readStepScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  if (settings.suite !== SUITE) {
    const error = `suite ${JSON.stringify(settings.suite)} is not implemented by this client`;
    writeReport(
      settings.reportFile,
      settings.language,
      scenarios.map(({ id }) => ({ id, status: "unsupported", error })),
      { contentUploads: [] },
    );
    return 0;
  }
  const engine = await import("../sdk/engine.js");
  const results: ResultEntry[] = [];
  const extra: Record<string, Json> = { contentUploads: [] };
  let opened: Awaited<ReturnType<typeof connect>> | null = null;
  try {
    opened = await connect(settings);
  } catch (error) {
    if (error instanceof SettingError || error instanceof ConfigError)
      throw asConfigError(configPath, error);
    const reason = `cannot open transport: ${(error as Error).message}`;
    process.stderr.write(`ahp-ts lifecycle client: ${reason}\n`);
    for (const { id } of scenarios)
      results.push({ id, status: "failed", error: reason });
  }
  if (opened !== null) {
    const { wire, control, uploadEndpoint, credentials } = opened;
    const backends = new Backends(settings, credentials);
    const run = new ClientRun(
      settings,
      wire,
      control,
      engine,
      schemas,
      uploadEndpoint,
      backends,
    );
    try {
      for (const scenario of scenarios)
        results.push(await runRow(run, scenario));
      extra["contentUploads"] = run.contentUploads;
      try {
        extra["receipts"] = await control.get("/receipts");
      } catch (error) {
        process.stderr.write(
          `ahp-ts lifecycle client: cannot fetch the receipts: ${(error as Error).message}\n`,
        );
      }
    } finally {
      control.close();
      await backends.close();
      await wire.close();
    }
  }
  writeReport(settings.reportFile, settings.language, results, extra);
  return 0;
}

// ---------------------------------------------------------------- server

/** The hostile answer to an observation of a scenario's event: observers must not decide. */
const HOSTILE_OBSERVER: JsonObject = {
  jsonrpc: "2.0",
  id: "unsolicited-observer",
  result: {
    protocolVersion: "draft",
    effects: [{ type: "deny", reason: "observer must not decide" }],
  },
};

/** The scripted operational failures a reply sequence may hold [ext]. */
type Fault = "server-error" | "malformed" | "timeout";
const FAULTS: readonly string[] = ["server-error", "malformed", "timeout"];

/** The fault a sequence entry scripts (`{"fault": KIND}`, nothing else), or null for a response. */
function faultOf(entry: Json): Fault | null {
  if (!isObject(entry) || Object.keys(entry).length !== 1) return null;
  const kind = entry["fault"];
  return typeof kind === "string" && FAULTS.includes(kind)
    ? (kind as Fault)
    : null;
}

/** The 25 bytes a `malformed` fault answers: the start of a response, not JSON. */
const MALFORMED_BODY = '{"jsonrpc": "2.0", "id": ';

/** The answer a fault other than `timeout` writes (`replied` is recorded first). */
function faultReply(fault: "server-error" | "malformed", id: Json): RawReply {
  return fault === "malformed"
    ? new RawReply(200, MALFORMED_BODY)
    : new RawReply(
        500,
        encodeJson({
          jsonrpc: "2.0",
          id,
          error: { code: -32603, message: "scripted server error" },
        }),
      );
}

interface Script {
  /** By request id: the reply, and the replies of its sequence by receipt. */
  readonly replies: ReadonlyMap<
    string,
    { response: Json; sequence: readonly Json[] }
  >;
  /** The event ids of every scenario request. */
  readonly events: ReadonlySet<string>;
  /** By event id: the answer to each of its observations (`observeFaults`). */
  readonly observeFaults: ReadonlyMap<string, readonly ObserveFault[]>;
  /** The boundary event ids (`requests.a`'s event) of the chains with `holdObservers`. */
  readonly heldObservers: ReadonlySet<string>;
}

function scriptOf(scenarios: readonly StepScenario[]): Script {
  const replies = new Map<
    string,
    { response: Json; sequence: readonly Json[] }
  >();
  const events = new Set<string>();
  const observeFaults = new Map<string, readonly ObserveFault[]>();
  const heldObservers = new Set<string>();
  for (const scenario of scenarios) {
    const boundary = eventOf(scenario.requests["a"] ?? null)?.["id"];
    if (
      isObject(scenario.chain) &&
      scenario.chain["holdObservers"] === true &&
      typeof boundary === "string"
    )
      heldObservers.add(boundary);
    for (const [key, request] of Object.entries(scenario.requests)) {
      const id = (request as JsonObject)["id"] as string;
      replies.set(id, {
        response: scenario.responses[key] ?? null,
        sequence: scenario.responseSequences[key] ?? [],
      });
      const eventId = eventOf(request)?.["id"];
      if (typeof eventId === "string") {
        events.add(eventId);
        const faults = scenario.observeFaults[key];
        if (faults !== undefined) observeFaults.set(eventId, faults);
      }
    }
  }
  return { replies, events, observeFaults, heldObservers };
}

/**
 * The lifecycle server's behaviour: intercepts receipted, held until their
 * id is released, answered from the script; observations checked,
 * receipted and (for a scenario's event) answered with a hostile frame.
 */
export class LifecycleBehaviour implements ServerBehaviour {
  private readonly occurrences = new Map<string, number>();
  /** By event id: how many observations of it were recorded. */
  private readonly observations = new Map<string, number>();

  constructor(
    private readonly script: Script,
    private readonly log: EntryLog,
    private readonly holds: Barriers,
    private readonly store: ContentStore,
    private readonly schemas: SchemaSet,
  ) {}

  capabilities(): JsonObject {
    return getCapabilities(discoveryManifest());
  }

  handle(message: Json): Reply | Promise<Reply> {
    if (!isObject(message))
      return errorResponse(null, INVALID_REQUEST, "not a JSON-RPC object");
    const method = message["method"];
    if (method === "hooks/observe") return this.observe(message);
    if (!hasKey(message, "id")) return undefined;
    if (method === "hooks/capabilities")
      return discoveryResponse(replyId(message));
    if (method !== "hooks/intercept")
      return errorResponse(
        replyId(message),
        typeof method === "string" ? METHOD_NOT_FOUND : INVALID_REQUEST,
        typeof method === "string"
          ? `unknown method ${method}`
          : "not a JSON-RPC request",
      );
    return this.intercept(message);
  }

  private unstored(message: JsonObject): string | null {
    const missing = bodyRefs(message).filter((ref) => !this.store.has(ref));
    return missing.length === 0
      ? null
      : `body refs never uploaded: ${missing.join(", ")}`;
  }

  private observe(message: JsonObject): Reply {
    const invalid = this.schemas.observe(message);
    if (invalid !== null)
      return new Refusal(400, `invalid hooks/observe: ${invalid}`);
    const unstored = this.unstored(message);
    if (unstored !== null) return new Refusal(409, unstored);
    const event = eventOf(message) as JsonObject;
    const eventId = event["id"] as string;
    // A held observer, recorded as upstream servers do (the client marks it too).
    if (this.script.heldObservers.has(eventId))
      this.log.append({ kind: "observer-blocked", id: eventId });
    this.log.append({ kind: "observed", eventId, event, message });
    const seen = this.observations.get(eventId) ?? 0;
    this.observations.set(eventId, seen + 1);
    // A silent observer [ext]: recorded, never answered (null or past the end: as usual).
    if (this.script.observeFaults.get(eventId)?.[seen] === "silent")
      return SILENCE;
    return this.script.events.has(eventId)
      ? cloneJson(HOSTILE_OBSERVER)
      : undefined;
  }

  private intercept(message: JsonObject): Reply | Promise<Reply> {
    const id = message["id"] ?? null;
    const invalid = this.schemas.request(message);
    if (invalid === null) {
      const unstored = this.unstored(message);
      if (unstored !== null)
        return new Refusal(
          409,
          unstored,
          errorResponse(replyId(message), INVALID_PARAMS, unstored),
        );
    }
    this.log.append({ kind: "received", id, message });
    // An error answer is a reply too: recorded `replied` just before it is written.
    if (invalid !== null) {
      this.log.append({ kind: "replied", id });
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        `invalid intercept request: ${invalid}`,
      );
    }
    const scripted =
      typeof id === "string" ? this.script.replies.get(id) : undefined;
    if (scripted === undefined || typeof id !== "string") {
      this.log.append({ kind: "replied", id });
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        "unknown scenario request id",
      );
    }
    const occurrence = this.occurrences.get(id) ?? 0;
    this.occurrences.set(id, occurrence + 1);
    const { sequence } = scripted;
    const response =
      sequence.length === 0
        ? scripted.response
        : (sequence[Math.min(occurrence, sequence.length - 1)] ?? null);
    const fault = sequence.length === 0 ? null : faultOf(response);
    // A scripted timeout [ext] never answers, not even once released or at shutdown.
    if (fault === "timeout") return SILENCE;
    return this.holds.wait(id).then(() => {
      this.log.append({ kind: "replied", id });
      return fault === null ? response : faultReply(fault, id);
    });
  }
}

export interface LifecycleServerOptions {
  readonly uploadToken: string;
  readonly schemas: SchemaSet;
  /** Bounds of the upload receiver's reads (the stall timer). */
  readonly limits?: ListenerLimits;
  /** How long a control wait may block before its 408. */
  readonly waitLimitMs?: number;
}

/** The lifecycle suite's server for `scenarios`, and the entry log it records into. */
export function lifecycleServer(
  scenarios: readonly StepScenario[],
  options: LifecycleServerOptions,
): { suite: SuiteServer; log: EntryLog } {
  const log = new EntryLog();
  const holds = new Barriers();
  const store = new ContentStore();
  const uploads = uploadReceiver({
    token: options.uploadToken,
    maxBytes: UPLOAD_LIMIT,
    path: UPLOAD_PATH,
    store,
    record: (attempt) => log.append({ kind: "upload", ...attempt }),
    limits: options.limits ?? DEFAULT_LIMITS,
  });
  const suite: SuiteServer = {
    behaviour: new LifecycleBehaviour(
      scriptOf(scenarios),
      log,
      holds,
      store,
      options.schemas,
    ),
    controlRoutes: (context) =>
      stepControlRoutes(context, log, {
        holds,
        waitLimitMs: options.waitLimitMs,
      }),
    listeners: [
      {
        readinessKey: "uploadEndpoint",
        path: UPLOAD_PATH,
        handler: uploads.handler,
        setup: (server) => server.on("clientError", uploads.onClientError),
      },
    ],
    onStop: () => {
      holds.releaseAll();
      log.stop();
    },
  };
  return { suite, log };
}

async function runServer(configPath: string): Promise<number> {
  const settings = readStepServerConfig(configPath, [SUITE]);
  const schemas = schemasFor(configPath, settings.schemaDir);
  const scenarios = readStepScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  // readStepServerConfig requires the upload token of a lifecycle server.
  const { suite } = lifecycleServer(scenarios, {
    uploadToken: settings.uploadToken ?? "",
    schemas,
  });
  const { startServer } = await import("../contract/server.js");
  let server;
  try {
    server = await startServer(settings, suite);
  } catch (error) {
    throw asConfigError(configPath, error);
  }
  await server.stopped;
  return 0;
}

/** The lifecycle suite's roles, by command (see cli.ts). */
export const roles = {
  client: runClient,
  server: runServer,
} as const;
