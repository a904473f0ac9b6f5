// The catalogue suite (docs/CATALOGUE.md): every event type on the wire,
// source-local lineage at the receiver, registration documents a host-side
// SDK could not enforce refused.
//
// Client: discovers the server's manifest once (`hooks/capabilities`),
// then runs each scenario's steps: `notify` sends a message its SDK found
// valid, `rawNotify` sends one unchecked, `register` evaluates a
// registration document against the discovered manifest. After every
// notification it waits (`/wait-observed`) until the server recorded a
// verdict for it. It reports what it sent, what it decided and what
// discovery answered, with the server's receipts.
//
// Server: answers discovery with the catalogue manifest, judges each
// `hooks/observe` (schema 400, lineage 409, else observed 202), records
// every verdict before answering it; over stdio a notification is never
// answered.

import {
  encodeJson,
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  replyId,
} from "../sdk/codec.js";
import { hasKey, isObject, type Json, type JsonObject } from "../sdk/json.js";
import { LineageChecker } from "../sdk/lineage.js";
import {
  catalogueManifest,
  discoveryResponse,
  getCapabilities,
} from "../sdk/manifest.js";
import { eventOf } from "../sdk/observe.js";
import { evaluateRegistration } from "../sdk/registration.js";
import type { SchemaSet } from "../sdk/schemas.js";
import { within } from "../sdk/stdioTransport.js";
import { routeUrl } from "../sdk/httpTransport.js";
import {
  readJsonFile,
  readStepClientConfig,
  readStepScenarios,
  type StepClientSettings,
  type StepScenario,
} from "../contract/config.js";
import type { ControlClient } from "../contract/controlClient.js";
import { EntryLog } from "../contract/entries.js";
import type { ResultEntry } from "../contract/report.js";
import {
  Counts,
  notifyRecorded,
  RowFailure,
  rowResult,
} from "../contract/rows.js";
import {
  Acknowledgement,
  Refusal,
  type Reply,
  type ServerBehaviour,
  type SuiteServer,
} from "../contract/server.js";
import { stepControlRoutes } from "../contract/stepControl.js";
import { runStepClient } from "../contract/stepClient.js";
import { runStepServer } from "../contract/stepServer.js";
import {
  connect,
  schemasFor,
  type Connection,
  type Wire,
  type WireOptions,
} from "../contract/steps.js";
import type { Suite } from "../contract/suite.js";

const SUITE = "catalogue";

function note(text: string): void {
  process.stderr.write(`ahp-ts catalogue client: ${text}\n`);
}

function debug(text: string): void {
  if (process.env["AHP_DEBUG"]) note(text);
}

// ---------------------------------------------------------------- client

/**
 * Discovery goes to the endpoint's `/capabilities` and notifications to its
 * `/observe` (on the endpoint without `/intercept`: upstream servers route by
 * path, ours accept any). A notification's answer is a verdict (202 or 204, or
 * 400 and 409 for a rejection, recorded either way); any other status means
 * the receiver refused it before judging it (docs/CATALOGUE.md), and the row
 * fails.
 */
const CATALOGUE_WIRE: WireOptions = {
  url: (endpoint) => routeUrl(endpoint, "capabilities"),
  notifyUrl: (endpoint) => routeUrl(endpoint, "observe"),
  refuses: (status) => ![202, 204, 400, 409].includes(status),
};

/** The one discovery request, sent before the first step. */
const DISCOVERY_REQUEST: JsonObject = {
  jsonrpc: "2.0",
  id: "discovery",
  method: "hooks/capabilities",
  params: { protocolVersion: "draft" },
};

const STEP_OPS = new Set(["notify", "rawNotify", "register"]);

/** What discovery gave: the response as received (null for none) and the manifest, or why there is none. */
interface Discovery {
  readonly response: Json;
  readonly manifest: JsonObject | null;
  readonly problem: string | null;
}

async function discover(
  wire: Wire,
  schemas: SchemaSet,
  timeoutMs: number,
): Promise<Discovery> {
  const received = await within(
    wire.send(encodeJson(DISCOVERY_REQUEST), DISCOVERY_REQUEST["id"] ?? null),
    timeoutMs,
    null,
  );
  const none = (problem: string): Discovery => ({
    response: null,
    manifest: null,
    problem,
  });
  if (received === null) return none(`no answer within ${timeoutMs} ms`);
  if ("error" in received) return none(received.error);
  if ("malformed" in received)
    return none(`malformed answer: ${received.malformed}`);
  const { response } = received;
  const unusable = (problem: string): Discovery => ({
    response,
    manifest: null,
    problem,
  });
  const invalid = schemas.capabilitiesResponse(response);
  if (invalid !== null)
    return unusable(`the answer fails capabilities-response: ${invalid}`);
  if (!isObject(response) || response["id"] !== DISCOVERY_REQUEST["id"])
    return unusable("the answer has another id");
  const result = response["result"];
  const manifest = isObject(result) ? result["manifest"] : undefined;
  if (!isObject(manifest)) return unusable("the answer has no manifest");
  return { response, manifest, problem: null };
}

/** What one client run shares across its rows. */
class ClientRun {
  /** By event id: how many notifications of it this run sent. */
  private readonly sends = new Counts();

  constructor(
    readonly settings: StepClientSettings,
    readonly wire: Wire,
    readonly control: ControlClient,
    readonly schemas: SchemaSet,
    readonly discovery: Discovery,
  ) {}

  /** Counts one more notification of `eventId`; returns how many there have been. */
  sent(eventId: string): number {
    return this.sends.next(eventId);
  }
}

/** One scenario's steps. */
class Row {
  private readonly sent: Json[] = [];
  private readonly registrations: JsonObject[] = [];

  constructor(
    private readonly run: ClientRun,
    private readonly scenario: StepScenario,
  ) {}

  async execute(): Promise<JsonObject> {
    for (const [index, step] of this.scenario.steps.entries()) {
      const where = `steps[${index}]`;
      if (!isObject(step)) throw new RowFailure(`${where} is not an object`);
      switch (step["op"]) {
        case "notify":
          await this.notify(step, where);
          break;
        case "rawNotify":
          await this.send(step["message"] ?? null, where);
          break;
        case "register":
          this.register(step, where);
          break;
        default:
          throw new RowFailure(
            `${where}: op ${JSON.stringify(step["op"])} is not implemented`,
          );
      }
    }
    return { sent: this.sent, registrations: this.registrations };
  }

  /** Sends the message when the SDK finds it a valid `hooks/observe` notification. */
  private async notify(step: JsonObject, where: string): Promise<void> {
    const message = step["message"] ?? null;
    const invalid = this.run.schemas.observe(message);
    if (invalid !== null) {
      debug(
        `${this.scenario.id} ${where}: not sent, it fails observe-notification: ${invalid}`,
      );
      return;
    }
    await this.send(message, where);
  }

  /**
   * Sends `message` unchanged, then waits until the server recorded as
   * many verdicts for its event as this run sent notifications of it.
   */
  private async send(message: Json, where: string): Promise<void> {
    const eventId = eventOf(message)?.["id"];
    if (typeof eventId !== "string")
      throw new RowFailure(
        `${where}: the message has no string params.event.id to wait for`,
      );
    const count = this.run.sent(eventId);
    this.sent.push(message);
    await notifyRecorded(
      this.run.wire,
      this.run.control,
      encodeJson(message),
      eventId,
      count,
      where,
    );
  }

  /** Evaluates a registration document against the discovered manifest. */
  private register(step: JsonObject, where: string): void {
    const { manifest, problem } = this.run.discovery;
    if (manifest === null)
      throw new RowFailure(`${where}: no manifest was discovered: ${problem}`);
    if (!hasKey(step, "registration"))
      throw new RowFailure(`${where}: register needs a registration`);
    const requirements = step["requirements"] ?? [];
    if (!Array.isArray(requirements))
      throw new RowFailure(`${where}: requirements must be a list`);
    const context = step["context"] ?? {};
    if (!isObject(context))
      throw new RowFailure(`${where}: context must be an object`);
    const verdict = evaluateRegistration(
      {
        registration: step["registration"] ?? null,
        manifest,
        requirements,
        context,
      },
      this.run.schemas.registration,
    );
    if (verdict.accepted) {
      this.registrations.push({ accepted: true });
      return;
    }
    debug(
      `${this.scenario.id} ${where}: refused by ${verdict.rule}: ${verdict.reason}`,
    );
    this.registrations.push({ accepted: false, rule: verdict.rule });
  }
}

async function runRow(
  run: ClientRun,
  scenario: StepScenario,
): Promise<ResultEntry> {
  const { id } = scenario;
  for (const step of scenario.steps) {
    const op = isObject(step) ? step["op"] : undefined;
    if (typeof op !== "string" || !STEP_OPS.has(op))
      return {
        id,
        status: "unsupported",
        error: `step op ${JSON.stringify(op ?? null)} is not implemented`,
      };
  }
  return await rowResult(id, note, () => new Row(run, scenario).execute());
}

async function runClient(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const scenarios = readStepScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  return runStepClient(settings, {
    rows: scenarios,
    extra: { discovery: null },
    note,
    open: () => connect(settings, CATALOGUE_WIRE),
    start: async ({ wire, control }: Connection, extra) => {
      const discovery = await discover(wire, schemas, settings.timeoutMs);
      if (discovery.problem !== null) note(`discovery: ${discovery.problem}`);
      extra["discovery"] = discovery.response;
      const run = new ClientRun(settings, wire, control, schemas, discovery);
      return (scenario: StepScenario) => runRow(run, scenario);
    },
  });
}

// ---------------------------------------------------------------- server

/**
 * The catalogue server's behaviour: discovery answered with the catalogue
 * manifest; each `hooks/observe` judged by its schema, then by source-local
 * lineage (state for the life of the server), and its verdict recorded
 * before it is answered.
 */
export class CatalogueBehaviour implements ServerBehaviour {
  private readonly lineage = new LineageChecker();

  constructor(
    private readonly log: EntryLog,
    private readonly schemas: SchemaSet,
  ) {}

  /** M's `tool.before` capabilities, unrecorded: it is no request a client sent. */
  capabilities(): JsonObject {
    return getCapabilities(catalogueManifest());
  }

  handle(message: Json): Reply {
    if (!isObject(message))
      return errorResponse(null, INVALID_REQUEST, "not a JSON-RPC object");
    const method = message["method"];
    if (method === "hooks/capabilities") return this.discovery(message);
    if (method === "hooks/observe") return this.observe(message);
    // Nothing else is served here, and nothing else is recorded.
    if (!hasKey(message, "id")) return undefined;
    return typeof method === "string"
      ? errorResponse(
          replyId(message),
          METHOD_NOT_FOUND,
          `${method} is not served by the catalogue suite`,
        )
      : errorResponse(
          replyId(message),
          INVALID_REQUEST,
          "not a JSON-RPC request",
        );
  }

  private discovery(message: JsonObject): Reply {
    const invalid = this.schemas.capabilitiesRequest(message);
    const response =
      invalid === null
        ? discoveryResponse(message["id"] ?? null, catalogueManifest())
        : errorResponse(
            replyId(message),
            INVALID_PARAMS,
            `invalid hooks/capabilities request: ${invalid}`,
          );
    this.log.append({ kind: "discovery", request: message, response });
    return response;
  }

  private observe(message: JsonObject): Reply {
    const event = eventOf(message);
    const id = event?.["id"];
    const eventId = typeof id === "string" ? id : null;
    const invalid = this.schemas.observe(message);
    if (invalid !== null || event === null) {
      this.log.append({
        kind: "rejected",
        eventId,
        message,
        errorKind: "schema",
      });
      return new Refusal(
        400,
        `invalid hooks/observe: ${invalid ?? "no event"}`,
      );
    }
    const verdict = this.lineage.judge(event);
    if (!verdict.accepted) {
      this.log.append({
        kind: "rejected",
        eventId,
        message,
        errorKind: "lineage",
      });
      return new Refusal(
        409,
        `lineage (${verdict.rule}) of ${eventId ?? "?"}: ${verdict.reason}`,
      );
    }
    this.log.append({ kind: "observed", eventId, event, message });
    return new Acknowledgement(202);
  }
}

export interface CatalogueServerOptions {
  readonly schemas: SchemaSet;
  /** How long a control wait may block before its 408. */
  readonly waitLimitMs?: number;
}

/**
 * The control calls of the suite (docs/CATALOGUE.md): `/wait-observed`
 * counts the event's verdicts, `observed` or `rejected`; nothing is held.
 */
const CONTROL_CALLS = [
  "GET /health",
  "GET /receipts",
  "POST /wait-observed",
  "POST /shutdown",
];

/** The catalogue suite's server, and the entry log it records into. */
export function catalogueServer(options: CatalogueServerOptions): {
  suite: SuiteServer;
  log: EntryLog;
} {
  const log = new EntryLog();
  const suite: SuiteServer = {
    behaviour: new CatalogueBehaviour(log, options.schemas),
    controlRoutes: (context) =>
      stepControlRoutes(context, log, {
        waitLimitMs: options.waitLimitMs,
        observedKinds: ["observed", "rejected"],
        calls: CONTROL_CALLS,
      }),
    onStop: () => log.stop(),
  };
  return { suite, log };
}

function runServer(configPath: string): Promise<number> {
  return runStepServer(
    configPath,
    { name: SUITE, uploads: false },
    (settings, schemas) => {
      // The server needs nothing of the scenarios; their file must still be usable.
      readJsonFile(settings.scenarioFile, {
        file: configPath,
        field: "scenarioFile",
      });
      return catalogueServer({ schemas }).suite;
    },
  );
}

/** The catalogue suite, run by the lifecycle commands with `suite: "catalogue"`. */
export const suite: Suite = {
  name: SUITE,
  handlers: {
    "lifecycle-client": runClient,
    "lifecycle-server": runServer,
  },
};
