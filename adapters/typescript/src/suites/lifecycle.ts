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
import { DEFAULT_LIMITS, type ListenerLimits } from "../sdk/httpTransport.js";
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
import { within } from "../sdk/stdioTransport.js";
import type { ClientTls } from "../sdk/tls.js";
import {
  ContentStore,
  uploadContent,
  type ContentDescriptor,
} from "../sdk/upload.js";
import { Barriers } from "../contract/barriers.js";
import {
  choice,
  connectChains,
  readSubscription,
  type Backends,
  type ChainConnection,
  type Subscription as ChainSubscription,
} from "../contract/chains.js";
import {
  readStepClientConfig,
  readStepScenarios,
  readStepUpload,
  type ObserveFault,
  type StepClientSettings,
  type StepScenario,
  type UploadSettings,
} from "../contract/config.js";
import type { ControlClient } from "../contract/controlClient.js";
import { EntryLog } from "../contract/entries.js";
import type { ResultEntry } from "../contract/report.js";
import {
  Counts,
  notifyRecorded,
  RowFailure,
  RowUnsupported,
  rowResult,
} from "../contract/rows.js";
import {
  Refusal,
  SILENCE,
  type Reply,
  type ServerBehaviour,
  type SuiteServer,
} from "../contract/server.js";
import { stepControlRoutes } from "../contract/stepControl.js";
import { runStepClient } from "../contract/stepClient.js";
import {
  faultOf,
  faultReply,
  runStepServer,
  uploadListener,
} from "../contract/stepServer.js";
import {
  judged,
  schemasFor,
  type Engine,
  type Received,
  type Wire,
} from "../contract/steps.js";
import type { Suite } from "../contract/suite.js";

/** The suite this module runs. */
const SUITE = "lifecycle";

function debug(text: string): void {
  if (process.env["AHP_DEBUG"])
    process.stderr.write(`ahp-ts lifecycle: ${text}\n`);
}

/** A stderr line of the client. */
function note(text: string): void {
  process.stderr.write(`ahp-ts lifecycle client: ${text}\n`);
}

// ---------------------------------------------------------------- client: rows

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
  private readonly sends = new Counts();
  private readonly observed = new Counts();
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
    return this.sends.next(id);
  }

  /** Counts one more observation of `eventId` in this run. */
  observe(eventId: string): number {
    return this.observed.next(eventId);
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
    await notifyRecorded(
      this.run.wire,
      this.run.control,
      encodeJson(ready),
      eventId,
      this.run.observe(eventId),
    );
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
    return judged(this.run.engine, request, received, this.run.deps);
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

/** A chain subscription: as every chain reads it, and how its calls see the items. */
interface Subscription extends ChainSubscription {
  readonly content: ContentProjection;
}

function readChain(chain: Json): {
  subscriptions: Subscription[];
  interrupt: boolean;
  holdObservers: boolean;
} {
  if (!isObject(chain) || !Array.isArray(chain["subscriptions"]))
    throw new RowFailure("chain needs a subscriptions list");
  const subscriptions = chain["subscriptions"].map((raw, index) => {
    const where = `chain.subscriptions[${index}]`;
    const subscription = readSubscription(raw, where);
    return {
      ...subscription,
      content: choice(
        raw as JsonObject,
        "content",
        ["metadata", "omit"] as const,
        "metadata",
        where,
      ),
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
      if (this.run.backends.serves(subscription.backend)) {
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
        note(
          `${this.id}: call ${subscription.id} failed (${subscription.failurePolicy}): ${outcome.reason}`,
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
  return await rowResult(id, note, () =>
    scenario.chain === null
      ? new StepRow(run, scenario).execute()
      : new ChainRow(run, scenario).execute(),
  );
}

async function runClient(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const scenarios = readStepScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  const engine = await import("../sdk/engine.js");
  return runStepClient(settings, {
    rows: scenarios,
    extra: { contentUploads: [] },
    note,
    open: () => connectChains(settings),
    start: (connection: ChainConnection, extra) => {
      const run = new ClientRun(
        settings,
        connection.wire,
        connection.control,
        engine,
        schemas,
        connection.uploadEndpoint,
        connection.backends,
      );
      extra["contentUploads"] = run.contentUploads;
      return Promise.resolve((scenario: StepScenario) => runRow(run, scenario));
    },
  });
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
  const uploads = uploadListener({
    token: options.uploadToken,
    store,
    log,
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
    listeners: [uploads],
    onStop: () => {
      holds.releaseAll();
      log.stop();
    },
  };
  return { suite, log };
}

function runServer(configPath: string): Promise<number> {
  // The upload receiver needs its token: `uploadAuth` is required.
  return runStepServer(
    configPath,
    { name: SUITE, uploads: true },
    (settings, schemas) => {
      const scenarios = readStepScenarios(settings.scenarioFile, {
        file: configPath,
        field: "scenarioFile",
      });
      return lifecycleServer(scenarios, {
        uploadToken: settings.uploadToken ?? "",
        schemas,
      }).suite;
    },
  );
}

/** The lifecycle suite, run by the lifecycle commands (also for the isolation suite's configs, which name it). */
export const suite: Suite = {
  name: SUITE,
  handlers: {
    "lifecycle-client": runClient,
    "lifecycle-server": runServer,
  },
};
