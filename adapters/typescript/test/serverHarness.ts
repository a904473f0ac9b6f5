// An in-process server for tests that need real sockets but short limits
// (a stall timer of a few hundred milliseconds), and small scenario files
// with barriers.

import { join } from "node:path";
import { Backend } from "../contract/backend.js";
import { Barriers } from "../contract/barriers.js";
import type { ServerSettings } from "../contract/config.js";
import type { ServerState } from "../contract/control.js";
import { Receipts } from "../contract/receipts.js";
import { startServer, type RunningServer } from "../contract/server.js";
import { DEFAULT_LIMITS, type ListenerLimits } from "../sdk/httpTransport.js";
import type { JsonObject } from "../sdk/json.js";
import { loadSchemas } from "../sdk/schemas.js";
import type { AuthSettings } from "../sdk/settings.js";
import { coreSuite } from "../suites/core.js";
import {
  readBlindRows,
  SCHEMA_DIR,
  UPSTREAM_FILE,
  writeJson,
  type BlindRow,
} from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);

/** The first upstream row, renamed to `id` (request, event and response ids). */
export function rowWithId(id: string, barrier?: string): JsonObject {
  const row = structuredClone(readBlindRows(UPSTREAM_FILE)[0]) as BlindRow;
  const request = row.request as {
    id: string;
    params: { event: { id: string } };
  };
  request.id = id;
  request.params.event.id = id;
  const response = row.response as { id: string };
  response.id = id;
  return {
    id,
    request,
    response,
    ...(barrier === undefined ? {} : { barrier }),
  };
}

/** A scenario file in `directory`: rows `plain-1` and `held-1` (barrier `b1`). */
export function barrierScenarios(directory: string): string {
  return writeJson(join(directory, "barrier-scenarios.json"), {
    version: 1,
    scenarios: [rowWithId("plain-1"), rowWithId("held-1", "b1")],
  });
}

export interface InProcessServer {
  readonly server: RunningServer;
  readonly state: ServerState;
  readonly port: number;
  readonly controlPort: number;
}

export async function startInProcess(
  directory: string,
  scenarioFile: string,
  options: {
    auth?: AuthSettings;
    limits?: Partial<ListenerLimits>;
  } = {},
): Promise<InProcessServer> {
  const settings: ServerSettings = {
    configFile: join(directory, "in-process.json"),
    transport: "http",
    readinessFile: join(directory, "in-process-ready.json"),
    scenarioFile,
    auth: options.auth ?? { mode: "none", profile: "strict" },
    tls: null,
    receiptLog: null,
    schemaDir: { path: SCHEMA_DIR, from: "schemaDir" },
  };
  const state: ServerState = {
    receipts: new Receipts(null),
    barriers: new Barriers(),
    backend: new Backend(scenarioFile),
  };
  const server = await startServer(
    settings,
    coreSuite(state, schemas.request),
    {
      ...DEFAULT_LIMITS,
      ...options.limits,
    },
  );
  return {
    server,
    state,
    port: Number(new URL(server.endpoint ?? "").port),
    controlPort: Number(new URL(server.controlEndpoint).port),
  };
}
