// The core suite: the blind client (each scenario's request sent exactly
// once, the response applied with the engine, the report written), its
// in-process replay, and the scripted server behind both transports.
// Transport failures are `failed` rows, never rejections; a malformed
// response is a rejection of the whole response.

import { clientCredential } from "../sdk/auth.js";
import {
  CodecError,
  decodeJson,
  encodeJson,
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  replyId,
} from "../sdk/codec.js";
import type { EngineDeps } from "../sdk/engine.js";
import {
  HttpClientTransport,
  interceptUrl,
  postForm,
} from "../sdk/httpTransport.js";
import { hasKey, isObject, type Json, type JsonObject } from "../sdk/json.js";
import {
  discoveryManifest,
  discoveryResponse,
  getCapabilities,
} from "../sdk/manifest.js";
import {
  byText,
  loadSchemas,
  type Check,
  type SchemaSet,
  type TextCheck,
} from "../sdk/schemas.js";
import { SettingError } from "../sdk/settings.js";
import { StdioClientTransport } from "../sdk/stdioTransport.js";
import { clientTls, requiresHttps } from "../sdk/tls.js";
import type { ClientTransport } from "../sdk/transport.js";
import { Backend } from "../contract/backend.js";
import { Barriers } from "../contract/barriers.js";
import {
  ConfigError,
  readClientConfig,
  readReplayConfig,
  readScenarios,
  readServerConfig,
  type ClientSettings,
  type Scenario,
  type SchemaDir,
} from "../contract/config.js";
import { coreControlRoutes, type ServerState } from "../contract/control.js";
import { Receipts } from "../contract/receipts.js";
import { writeReport, type ResultEntry } from "../contract/report.js";
import type {
  Reply,
  ServerBehaviour,
  SuiteServer,
} from "../contract/server.js";
import type { Suite } from "../contract/suite.js";

// Each role loads what only it needs when it starts (the engine for the
// client and replay, the listeners for the server): start-up is paid once
// per process, and the harness starts two per combination.
type Engine = typeof import("../sdk/engine.js");

// ---------------------------------------------------------------- client

/** What came back for one request: a parsed response, a malformed one, or a transport failure. */
type Received =
  | { readonly response: Json }
  | { readonly malformed: string }
  | { readonly error: string };

type Send = (request: JsonObject) => Promise<Received>;

/** Sends over `transport` and parses the answer strictly. */
function sender(transport: ClientTransport): Send {
  return async (request) => {
    const exchange = await transport.send(encodeJson(request));
    if ("error" in exchange) return exchange;
    try {
      return { response: decodeJson(exchange.body) };
    } catch (error) {
      if (error instanceof CodecError) return { malformed: error.message };
      throw error;
    }
  };
}

function debug(id: string, text: string): void {
  if (process.env["AHP_DEBUG"])
    process.stderr.write(`ahp-ts client: ${id}: ${text}\n`);
}

/** One row: validate the request, send it once, apply the response. */
async function runScenario(
  scenario: Scenario,
  send: Send,
  engine: Engine,
  deps: EngineDeps,
  validateRequest: Check,
): Promise<ResultEntry> {
  const { id, request } = scenario;
  if (!isObject(request))
    return { id, status: "failed", error: "scenario request is not an object" };
  const invalid = validateRequest(request);
  if (invalid !== null)
    return {
      id,
      status: "failed",
      error: `request fails intercept-request schema: ${invalid}`,
    };
  // A row the engine cannot apply does not run at all: it is not sent.
  const unsupported = engine.unsupportedReason(request);
  if (unsupported !== null)
    return { id, status: "unsupported", error: unsupported };
  const received = await send(request);
  if ("error" in received)
    return { id, status: "failed", error: received.error };
  if ("malformed" in received) {
    debug(id, `rejected: malformed response: ${received.malformed}`);
    return { id, status: "completed", actual: { rejected: true } };
  }
  const outcome = engine.applyResponse(request, received.response, deps);
  switch (outcome.status) {
    case "applied":
      return { id, status: "completed", actual: outcome.actual };
    case "rejected":
      debug(id, `rejected: ${outcome.reason}`);
      return { id, status: "completed", actual: { rejected: true } };
    case "unsupported":
      return { id, status: "unsupported", error: outcome.reason };
  }
}

/** The transport the client config asks for; credentials are acquired here (once per run). */
async function openTransport(
  settings: ClientSettings,
): Promise<ClientTransport> {
  if (settings.transport === "stdio") {
    const command =
      settings.serverConfig === null
        ? settings.serverCommand
        : [...settings.serverCommand, "--config", settings.serverConfig];
    return new StdioClientTransport(
      command,
      settings.serverCwd,
      settings.timeoutMs,
    );
  }
  const endpoint = settings.endpoint ?? "";
  if (requiresHttps(settings.auth) && !endpoint.startsWith("https://")) {
    throw new SettingError(
      "endpoint",
      `must be https for auth mode ${settings.auth.mode} under the ${settings.auth.profile} profile`,
    );
  }
  const tls = clientTls(settings.auth, settings.tls);
  const token = await clientCredential(settings.auth, (url, form) =>
    postForm(url, form, tls, settings.timeoutMs),
  );
  return new HttpClientTransport(
    interceptUrl(endpoint),
    tls,
    settings.timeoutMs,
    token,
  );
}

function engineDeps(schemas: SchemaSet): EngineDeps {
  return { validateResponse: schemas.response, content: schemas.content };
}

/** A SettingError as the ConfigError of the config field it names; anything else unchanged. */
function asConfigError(configFile: string, error: unknown): unknown {
  return error instanceof SettingError
    ? new ConfigError(configFile, error.setting, error.message)
    : error;
}

function schemasFor(configFile: string, schemaDir: SchemaDir): SchemaSet {
  try {
    return loadSchemas(schemaDir.path);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    const origin = schemaDir.from === "schemaDir" ? "" : ` (${schemaDir.from})`;
    throw new ConfigError(configFile, "schemaDir", `${error.message}${origin}`);
  }
}

async function runClient(configPath: string): Promise<number> {
  const settings = readClientConfig(configPath);
  const scenarios = readScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  const engine = await import("../sdk/engine.js");
  const deps = engineDeps(schemas);
  const results: ResultEntry[] = [];
  let transport: ClientTransport | null = null;
  try {
    transport = await openTransport(settings);
  } catch (error) {
    if (error instanceof SettingError) throw asConfigError(configPath, error);
    const reason = `cannot open transport: ${(error as Error).message}`;
    process.stderr.write(`ahp-ts client: ${reason}\n`);
    for (const { id } of scenarios)
      results.push({ id, status: "failed", error: reason });
  }
  if (transport !== null) {
    const send = sender(transport);
    try {
      for (const scenario of scenarios)
        results.push(
          await runScenario(scenario, send, engine, deps, schemas.request),
        );
    } finally {
      await transport.close();
    }
  }
  writeReport(settings.reportFile, settings.language, results);
  return 0;
}

/** Replay [ext]: each scenario's response applied to its request in process; no network. */
async function runReplay(configPath: string): Promise<number> {
  const settings = readReplayConfig(configPath);
  const scenarios = readScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  const schemas = schemasFor(configPath, settings.schemaDir);
  const engine = await import("../sdk/engine.js");
  const deps = engineDeps(schemas);
  const results: ResultEntry[] = [];
  for (const scenario of scenarios) {
    const send: Send = () => Promise.resolve({ response: scenario.response });
    results.push(
      await runScenario(scenario, send, engine, deps, schemas.request),
    );
  }
  writeReport(settings.reportFile, settings.language, results);
  return 0;
}

// ---------------------------------------------------------------- server

/**
 * The scripted server: every object message is receipted before it is
 * answered (by kind: `notification` without an id, `discovery` for
 * hooks/capabilities, else `request`); each intercept gets its scenario's
 * response unchanged, held while the scenario's barrier is.
 */
export class CoreBehaviour implements ServerBehaviour {
  /** The request check, its verdict kept per text (clients send the same texts). */
  private readonly validateRequest: TextCheck;

  constructor(
    private readonly state: ServerState,
    validateRequest: Check,
  ) {
    this.validateRequest = byText(validateRequest);
  }

  capabilities(): JsonObject {
    return getCapabilities(discoveryManifest());
  }

  handle(message: Json, text: string): Reply | Promise<Reply> {
    const { receipts } = this.state;
    if (!isObject(message))
      return errorResponse(null, INVALID_REQUEST, "not a JSON-RPC object");
    if (!hasKey(message, "id")) {
      receipts.record("notification", message);
      return undefined;
    }
    const method = message["method"];
    if (method === "hooks/capabilities") {
      receipts.record("discovery", message);
      return discoveryResponse(replyId(message));
    }
    receipts.record("request", message);
    if (typeof method !== "string")
      return errorResponse(
        replyId(message),
        INVALID_REQUEST,
        "not a JSON-RPC request",
      );
    if (method !== "hooks/intercept")
      return errorResponse(
        replyId(message),
        METHOD_NOT_FOUND,
        `unknown method ${method}`,
      );
    return this.intercept(message, text);
  }

  private intercept(message: JsonObject, text: string): Reply | Promise<Reply> {
    const schemaError = this.validateRequest(message, text);
    if (schemaError !== null)
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        `invalid intercept request: ${schemaError}`,
      );
    const id = message["id"];
    const scripted =
      typeof id === "string" ? this.state.backend.reply(id) : undefined;
    if (scripted === undefined)
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        "unknown scenario id",
      );
    if (scripted.barrier === null) return scripted.response;
    return this.state.barriers
      .wait(scripted.barrier)
      .then(() => scripted.response);
  }
}

/** The core suite's server: the scripted behaviour, the core control routes. */
export function coreSuite(
  state: ServerState,
  validateRequest: Check,
): SuiteServer {
  return {
    behaviour: new CoreBehaviour(state, validateRequest),
    controlRoutes: (context) => coreControlRoutes(state, context.stop),
    onStop: () => {
      state.barriers.releaseAll();
      // Replies released just now are written first; then the log closes.
      setImmediate(() => state.receipts.close());
    },
  };
}

/** The server state of a config: receipts (and their log), barriers, the scripted replies. */
function serverState(
  configFile: string,
  scenarioFile: string | null,
  receiptLog: string | null,
): ServerState {
  const backend = new Backend(scenarioFile, {
    file: configFile,
    field: "scenarioFile",
  });
  let receipts: Receipts;
  try {
    receipts = new Receipts(receiptLog);
  } catch (error) {
    throw new ConfigError(
      configFile,
      "receiptLog",
      `cannot open ${receiptLog}: ${(error as Error).message}`,
    );
  }
  return { receipts, barriers: new Barriers(), backend };
}

async function runServer(configPath: string): Promise<number> {
  const settings = readServerConfig(configPath);
  const schemas = schemasFor(configPath, settings.schemaDir);
  const state = serverState(
    configPath,
    settings.scenarioFile,
    settings.receiptLog,
  );
  const { startServer } = await import("../contract/server.js");
  let server;
  try {
    server = await startServer(settings, coreSuite(state, schemas.request));
  } catch (error) {
    state.receipts.close();
    throw asConfigError(configPath, error);
  }
  await server.stopped;
  return 0;
}

/** The core suite, run by the core commands (the configs name no suite). */
export const suite: Suite = {
  name: "core",
  handlers: {
    client: runClient,
    server: runServer,
    replay: runReplay,
  },
};
