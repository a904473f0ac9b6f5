// The compaction suite (docs/COMPACTION.md): context compaction as two
// lifecycle chains, `context.compact.before` then `context.compact.after`.
//
// Client: a blind host. For each run it calls the before subscriptions as a
// serial chain (state carried forward, failure policies, short-circuits,
// notifications after settlement), takes the boundary's outcome from the
// core rules (a supplied summary, the synthetic compactor's, or nothing),
// derives the after request from it and runs the after chain; it reports
// what it derived. A negative is sent unchanged and its error code reported.
//
// Server: the lifecycle server's chain behaviour, never holding a reply:
// `<row>:before` and `<row>:after` are answered by the n-th entry of their
// sequences (a response, or a scripted fault); an invalid request, an
// unknown id or a text part with a `body` gets -32602 and is not recorded;
// every observation is recorded and answered 204.

import {
  encodeJson,
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  replyId,
} from "../sdk/codec.js";
import {
  afterRequest,
  textPartWithBody,
  withTarget,
  syntheticSummary,
  type Execution,
  type Provenance,
} from "../sdk/compaction.js";
import type { EngineDeps, Outcome } from "../sdk/engine.js";
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
import { eventIdOf, eventOf } from "../sdk/observe.js";
import type { SchemaSet } from "../sdk/schemas.js";
import { within } from "../sdk/stdioTransport.js";
import { Barriers } from "../contract/barriers.js";
import {
  connectChains,
  readSubscription,
  type Backends,
  type ChainConnection,
  type Subscription,
} from "../contract/chains.js";
import {
  ConfigError,
  readJsonFile,
  readStepClientConfig,
  type StepClientSettings,
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
import { faultOf, faultReply, runStepServer } from "../contract/stepServer.js";
import {
  judged,
  schemasFor,
  type Engine,
  type Received,
  type Wire,
} from "../contract/steps.js";
import type { Suite } from "../contract/suite.js";

const SUITE = "compaction";
const BEFORE = "context.compact.before";

function note(text: string): void {
  process.stderr.write(`ahp-ts compaction: ${text}\n`);
}

// ---------------------------------------------------------------- the scenario file

export interface CompactionRun {
  readonly id: string;
  /** The before request; null when absent (a server's file needs none). */
  readonly request: JsonObject | null;
  readonly before: readonly Json[];
  readonly after: readonly Json[];
  readonly afterObserveOnly: boolean;
  readonly sequences: {
    readonly before: readonly Json[];
    readonly after: readonly Json[];
  };
}

export interface CompactionNegative {
  readonly id: string;
  readonly negative: Json;
}

export type CompactionRow = CompactionRun | CompactionNegative;

export function isNegative(row: CompactionRow): row is CompactionNegative {
  return "negative" in row;
}

/** Reads `{version, suite, scenarios}`; never `expected` or `proof`. */
export function readCompactionScenarios(
  path: string,
  referrer: { file: string; field: string } | null = null,
): CompactionRow[] {
  const file = readJsonFile(path, referrer);
  const rows = isObject(file) ? file["scenarios"] : undefined;
  if (!Array.isArray(rows))
    throw new ConfigError(path, "scenarios", "must be a list");
  return rows.map((row, index): CompactionRow => {
    const where = `scenarios[${index}]`;
    if (!isObject(row)) throw new ConfigError(path, where, "must be an object");
    const id = row["id"];
    if (typeof id !== "string" || id.length === 0)
      throw new ConfigError(path, `${where}.id`, "must be a non-empty string");
    if (hasKey(row, "negative"))
      return { id, negative: row["negative"] ?? null };
    const request = row["request"] ?? null;
    if (request !== null && !isObject(request))
      throw new ConfigError(path, `${where}.request`, "must be an object");
    const list = (value: Json | undefined, field: string): Json[] => {
      if (value === undefined) return [];
      if (!Array.isArray(value))
        throw new ConfigError(path, `${where}.${field}`, "must be a list");
      return value;
    };
    const sequences = row["responseSequences"] ?? {};
    if (!isObject(sequences))
      throw new ConfigError(
        path,
        `${where}.responseSequences`,
        "must be an object",
      );
    return {
      id,
      request,
      before: list(row["before"], "before"),
      after: list(row["after"], "after"),
      afterObserveOnly: row["afterObserveOnly"] === true,
      sequences: {
        before: list(sequences["before"], "responseSequences.before"),
        after: list(sequences["after"], "responseSequences.after"),
      },
    };
  });
}

// ---------------------------------------------------------------- client

/** A boundary's subscriptions (`before`, `after`), read as every chain reads them (no `content`). */
export function readSubscriptions(
  raw: readonly Json[],
  where: string,
): Subscription[] {
  return raw.map((entry, index) =>
    readSubscription(entry, `${where}[${index}]`),
  );
}

/** What one boundary's chain left. */
export interface Settled {
  readonly called: string[];
  readonly failures: string[];
  readonly observations: string[];
  /** The settled value of the boundary's modify target. */
  readonly effective: Json;
  /** The state the next call would have carried (undefined: the request's own). */
  readonly state: Json | undefined;
  /** Whether a fail-closed failure ended the chain. */
  readonly failedClosed: boolean;
  /** The subscription whose accepted reply last carried a `return`, if any. */
  readonly supplier: string | null;
}

/** The boundary's outcome (COMPACTION.md step 2). */
export interface CompactionOutcome {
  readonly applied: boolean;
  readonly summary: Json;
  readonly execution: Execution | null;
  readonly provenance: Provenance | null;
}

const NOT_APPLIED: CompactionOutcome = {
  applied: false,
  summary: null,
  execution: null,
  provenance: null,
};

/**
 * Step 2: the before boundary's outcome from its settled chain, by the core
 * rules: the settled request (the settled instructions, the carried state)
 * judged with no further effects gives the decision, `executed` and a
 * bound `result`. A fail-closed failure compacts nothing.
 */
export function compactionOutcome(
  engine: Engine,
  deps: EngineDeps,
  request: JsonObject,
  settled: Settled,
  summarise: () => Json,
): CompactionOutcome {
  if (settled.failedClosed) return NOT_APPLIED;
  const settledRequest = callRequest(
    request,
    "instructions",
    settled.effective,
    settled.state,
  );
  const params = settledRequest["params"] as JsonObject;
  const judged = engine.applyResponse(
    settledRequest,
    {
      jsonrpc: "2.0",
      id: settledRequest["id"] ?? null,
      result: {
        protocolVersion: params["protocolVersion"] ?? null,
        effects: [],
      },
    },
    deps,
  );
  if (judged.status !== "applied") return NOT_APPLIED;
  const { actual } = judged;
  if (hasKey(actual, "result"))
    return {
      applied: true,
      summary: cloneJson(actual["result"] ?? null),
      execution: { status: "skipped", reason: "supplied_result" },
      provenance: { kind: "supplied", supplier: settled.supplier },
    };
  if (actual["executed"] === true)
    return {
      applied: true,
      summary: summarise(),
      execution: { status: "executed" },
      provenance: { kind: "generated" },
    };
  return NOT_APPLIED;
}

/** The boundary's original value of `field` (absent instructions are `[]`). */
function originalValue(event: JsonObject, field: string): Json {
  const value = event[field];
  if (value === undefined) return field === "instructions" ? [] : null;
  return cloneJson(value);
}

/** One call of a chain: the request with the target's effective value and the carried state. */
export function callRequest(
  request: JsonObject,
  field: string,
  effective: Json,
  state: Json | undefined,
): JsonObject {
  const call = cloneJson(request);
  const params = isObject(call["params"]) ? call["params"] : {};
  call["params"] = params;
  const event = isObject(params["event"]) ? params["event"] : {};
  params["event"] = withTarget(event, field, effective);
  if (state !== undefined) params["state"] = cloneJson(state);
  return call;
}

/** The `hooks/observe` notification of a settled boundary: its event with the settled target. */
export function settledNotification(
  request: JsonObject,
  field: string,
  effective: Json,
): JsonObject {
  const params = isObject(request["params"]) ? request["params"] : {};
  const event = isObject(params["event"]) ? params["event"] : {};
  return {
    jsonrpc: "2.0",
    method: "hooks/observe",
    params: {
      protocolVersion: params["protocolVersion"] ?? "draft",
      event: withTarget(event, field, effective),
    },
  };
}

/** Whether an accepted response carries a `return` effect. */
function returns(received: Received): boolean {
  if (!("response" in received) || !isObject(received.response)) return false;
  const result = received.response["result"];
  const effects = isObject(result) ? result["effects"] : undefined;
  return (
    Array.isArray(effects) &&
    effects.some((effect) => isObject(effect) && effect["type"] === "return")
  );
}

class ClientRun {
  private readonly observed = new Counts();
  readonly deps: EngineDeps;

  constructor(
    readonly settings: StepClientSettings,
    readonly wire: Wire,
    readonly control: ControlClient,
    readonly engine: Engine,
    readonly schemas: SchemaSet,
    readonly backends: Backends,
  ) {
    this.deps = {
      validateResponse: schemas.response,
      content: schemas.content,
      hostRule: () => null,
    };
  }

  applied(request: JsonObject, received: Received): Outcome {
    return judged(this.engine, request, received, this.deps);
  }

  /**
   * Sends a notification, then waits until the server recorded it; one
   * that the server refuses fails the row.
   */
  async notify(message: JsonObject): Promise<void> {
    const invalid = this.schemas.observe(message);
    if (invalid !== null)
      throw new RowFailure(
        `notification fails observe-notification schema: ${invalid}`,
      );
    const eventId = eventIdOf(message);
    await notifyRecorded(
      this.wire,
      this.control,
      encodeJson(message),
      eventId,
      this.observed.next(eventId),
    );
  }

  /** One call to a subscription's backend, bounded by its deadline. */
  call(subscription: Subscription, line: string, id: Json): Promise<Received> {
    const deadlineMs = subscription.timeoutMs ?? this.settings.timeoutMs;
    if (this.backends.serves(subscription.backend))
      return this.backends.call(subscription.backend, line, id, deadlineMs);
    return this.wire.call(line, id, deadlineMs);
  }

  /**
   * One boundary as a serial chain over `request` (its modify target
   * `field`): calls, failures and short-circuits as in a lifecycle chain,
   * `chain-settled` marked, then every uncalled subscription notified.
   */
  async chain(
    rowId: string,
    request: JsonObject,
    field: string,
    subscriptions: readonly Subscription[],
  ): Promise<Settled> {
    const rid = request["id"] as string;
    const event = eventOf(request) ?? {};
    const original = originalValue(event, field);
    let effective: Json = original;
    let state: Json | undefined = (request["params"] as JsonObject)["state"];
    let failedClosed = false;
    let supplier: string | null = null;
    const called: string[] = [];
    const failures: string[] = [];
    const observations: string[] = [];
    for (const subscription of subscriptions) {
      if (subscription.mode !== "intercept") continue;
      const call = callRequest(request, field, effective, state);
      const invalid = this.schemas.request(call);
      if (invalid !== null)
        throw new RowFailure(
          `call ${subscription.id} fails intercept-request schema: ${invalid}`,
        );
      called.push(subscription.id);
      const received = await this.call(subscription, encodeJson(call), rid);
      const outcome = this.applied(call, received);
      if (outcome.status === "unsupported")
        throw new RowUnsupported(outcome.reason);
      if (outcome.status === "rejected") {
        note(
          `${rowId}: call ${subscription.id} failed (${subscription.failurePolicy}): ${outcome.reason}`,
        );
        failures.push(subscription.id);
        if (subscription.failurePolicy === "fail-closed") {
          effective = original;
          failedClosed = true;
          break;
        }
        continue;
      }
      const published = outcome.actual["effective"];
      effective = cloneJson(
        (isObject(published) ? published[field] : undefined) ?? null,
      );
      state = outcome.state;
      if (returns(received)) supplier = subscription.id;
      if (
        outcome.actual["decision"] === "deny" ||
        outcome.actual["flow"] === "stop"
      )
        break;
    }
    await this.control.ok("/mark", {
      scenario: rowId,
      kind: "chain-settled",
      id: rid,
    });
    for (const subscription of subscriptions) {
      if (subscription.mode === "intercept" && called.includes(subscription.id))
        continue;
      await this.notify(settledNotification(request, field, effective));
      observations.push(subscription.id);
    }
    return {
      called,
      failures,
      observations,
      effective,
      state,
      failedClosed,
      supplier,
    };
  }

  /** A run (COMPACTION.md steps 1 to 5): its `actual`. */
  async run(row: CompactionRun): Promise<JsonObject> {
    const { request } = row;
    if (request === null) throw new RowFailure("the run has no request object");
    const event = eventOf(request);
    if (event === null || event["type"] !== BEFORE)
      throw new RowFailure(`request is not a ${BEFORE} intercept request`);
    if (request["id"] !== `${row.id}:before`)
      throw new RowFailure(`request id is not ${row.id}:before`);
    const unsupported = this.engine.unsupportedReason(request);
    if (unsupported !== null) throw new RowUnsupported(unsupported);
    const beforeSubs = readSubscriptions(row.before, "before");
    const afterSubs = readSubscriptions(row.after, "after");
    const before = await this.chain(
      row.id,
      request,
      "instructions",
      beforeSubs,
    );
    const items = Array.isArray(event["items"]) ? event["items"] : [];
    const outcome = compactionOutcome(
      this.engine,
      this.deps,
      request,
      before,
      () => syntheticSummary(row.id, items.length, before.effective),
    );
    const boundary = (settled: Settled | null): JsonObject => ({
      called: settled?.called ?? [],
      failures: settled?.failures ?? [],
      observations: settled?.observations ?? [],
    });
    let after: Settled | null = null;
    let summary: Json = null;
    if (outcome.applied && outcome.execution !== null) {
      const params = request["params"] as JsonObject;
      const derived = afterRequest(
        row.id,
        event,
        outcome.summary,
        outcome.execution,
        row.afterObserveOnly,
        params["protocolVersion"] ?? "draft",
      );
      after = await this.chain(row.id, derived, "summary", afterSubs);
      summary = after.effective;
    }
    // a fail-closed failure at the after boundary prevents the application too
    const applied = outcome.applied && !(after?.failedClosed ?? false);
    return {
      applied,
      instructions: before.effective,
      summary: applied ? summary : null,
      execution:
        applied && outcome.execution !== null ? { ...outcome.execution } : null,
      provenance:
        applied && outcome.provenance !== null
          ? { ...outcome.provenance }
          : null,
      before: boundary(before),
      after: boundary(after),
    };
  }

  /** A negative: sent unchanged (no SDK check); the error code of the answer. */
  async negative(row: CompactionNegative): Promise<JsonObject> {
    const line = encodeJson(row.negative);
    const id = replyId(row.negative);
    const received = await within(
      this.wire.replay(line, id),
      this.settings.timeoutMs,
      null,
    );
    if (received === null)
      throw new RowFailure(`no answer within ${this.settings.timeoutMs} ms`);
    if ("error" in received) throw new RowFailure(received.error);
    if ("malformed" in received)
      throw new RowFailure(`malformed answer: ${received.malformed}`);
    const answer = received.response;
    const error = isObject(answer) ? answer["error"] : undefined;
    const code = isObject(error) ? error["code"] : undefined;
    return { error: typeof code === "number" ? code : null };
  }
}

function runRow(run: ClientRun, row: CompactionRow): Promise<ResultEntry> {
  return rowResult(row.id, note, () =>
    isNegative(row) ? run.negative(row) : run.run(row),
  );
}

async function runClient(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const rows = readCompactionScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  const engine = await import("../sdk/engine.js");
  return runStepClient(settings, {
    rows,
    extra: {},
    note,
    open: () => connectChains(settings),
    start: (connection: ChainConnection) => {
      const run = new ClientRun(
        settings,
        connection.wire,
        connection.control,
        engine,
        schemas,
        connection.backends,
      );
      return Promise.resolve((row: CompactionRow) => runRow(run, row));
    },
  });
}

// ---------------------------------------------------------------- server

/** By boundary request id (`<row>:before`, `<row>:after`): its reply sequence. */
export function sequencesOf(
  rows: readonly CompactionRow[],
): Map<string, readonly Json[]> {
  const sequences = new Map<string, readonly Json[]>();
  for (const row of rows) {
    if (isNegative(row)) continue;
    sequences.set(`${row.id}:before`, row.sequences.before);
    sequences.set(`${row.id}:after`, row.sequences.after);
  }
  return sequences;
}

/**
 * The compaction server's behaviour: the runs' boundary requests answered
 * from their sequences (never held), anything else refused unrecorded,
 * observations recorded and answered 204.
 */
export class CompactionBehaviour implements ServerBehaviour {
  private readonly occurrences = new Map<string, number>();

  constructor(
    private readonly sequences: ReadonlyMap<string, readonly Json[]>,
    private readonly log: EntryLog,
    private readonly schemas: SchemaSet,
  ) {}

  capabilities(): JsonObject {
    return getCapabilities(discoveryManifest());
  }

  handle(message: Json): Reply {
    if (!isObject(message))
      return errorResponse(null, INVALID_REQUEST, "not a JSON-RPC object");
    const method = message["method"];
    if (method === "hooks/observe") return this.observe(message);
    if (!hasKey(message, "id")) return undefined;
    if (method === "hooks/intercept") return this.intercept(message);
    if (method === "hooks/capabilities")
      return discoveryResponse(replyId(message));
    return errorResponse(
      replyId(message),
      typeof method === "string" ? METHOD_NOT_FOUND : INVALID_REQUEST,
      typeof method === "string"
        ? `unknown method ${method}`
        : "not a JSON-RPC request",
    );
  }

  private observe(message: JsonObject): Reply {
    const invalid = this.schemas.observe(message);
    if (invalid !== null)
      return new Refusal(400, `invalid hooks/observe: ${invalid}`);
    const event = eventOf(message) as JsonObject;
    this.log.append({
      kind: "observed",
      eventId: event["id"] ?? null,
      event,
      message,
    });
    return undefined;
  }

  private intercept(message: Json): Reply {
    const refuse = (why: string): Reply =>
      errorResponse(replyId(message), INVALID_PARAMS, why);
    const invalid = this.schemas.request(message);
    if (invalid !== null)
      return refuse(`invalid intercept request: ${invalid}`);
    const request = message as JsonObject;
    const id = request["id"];
    const sequence =
      typeof id === "string" ? this.sequences.get(id) : undefined;
    if (sequence === undefined || typeof id !== "string")
      return refuse("no run's boundary request has this id");
    if (textPartWithBody(request["params"]))
      return refuse("compaction text parts are inline: a text part has a body");
    this.log.append({ kind: "received", id, message: request });
    const occurrence = this.occurrences.get(id) ?? 0;
    this.occurrences.set(id, occurrence + 1);
    const entry =
      sequence.length === 0
        ? null
        : (sequence[Math.min(occurrence, sequence.length - 1)] ?? null);
    const fault = faultOf(entry);
    if (fault === "timeout") return SILENCE;
    this.log.append({ kind: "replied", id });
    return fault === null ? entry : faultReply(fault, id);
  }
}

export interface CompactionServerOptions {
  readonly schemas: SchemaSet;
  readonly waitLimitMs?: number;
}

/** The compaction suite's server for `rows`, and the entry log it records into. */
export function compactionServer(
  rows: readonly CompactionRow[],
  options: CompactionServerOptions,
): { suite: SuiteServer; log: EntryLog } {
  const log = new EntryLog();
  // Nothing is ever held: a /release is taken and changes nothing.
  const holds = new Barriers();
  const suite: SuiteServer = {
    behaviour: new CompactionBehaviour(sequencesOf(rows), log, options.schemas),
    controlRoutes: (context) =>
      stepControlRoutes(context, log, {
        holds,
        waitLimitMs: options.waitLimitMs,
      }),
    onStop: () => {
      holds.releaseAll();
      log.stop();
    },
  };
  return { suite, log };
}

function runServer(configPath: string): Promise<number> {
  return runStepServer(
    configPath,
    { name: SUITE, uploads: false },
    (settings, schemas) => {
      const rows = readCompactionScenarios(settings.scenarioFile, {
        file: configPath,
        field: "scenarioFile",
      });
      return compactionServer(rows, { schemas }).suite;
    },
  );
}

/** The compaction suite, run by the lifecycle commands with `suite: "compaction"`. */
export const suite: Suite = {
  name: SUITE,
  handlers: {
    "lifecycle-client": runClient,
    "lifecycle-server": runServer,
  },
};
