// The step engine's server process (`lifecycle-server`, for every suite the
// lifecycle commands run): the config read for the suite, the canonical
// schemas, the suite's server built and started (contract/server.ts), then
// it runs until it stops. Beside it, what step servers script and offer
// alike: the scripted operational failures of a reply sequence [ext] and
// the upload receiver's listener.

import { encodeJson } from "../sdk/codec.js";
import type { ListenerLimits } from "../sdk/httpTransport.js";
import { isObject, type Json } from "../sdk/json.js";
import type { SchemaSet } from "../sdk/schemas.js";
import { uploadReceiver, type ContentStore } from "../sdk/upload.js";
import {
  readStepServerConfig,
  refuseStepSuite,
  type StepServerSettings,
  type StepServerSpec,
} from "./config.js";
import type { EntryLog } from "./entries.js";
import { RawReply, type SuiteListener, type SuiteServer } from "./server.js";
import { asConfigError, schemasFor } from "./steps.js";

/**
 * Runs the server of the suite `spec` names: `build` makes it from the
 * settings and the schemas (reading the suite's scenario file; a file it
 * cannot use is a ConfigError). Resolves with the exit code once it stopped.
 */
export async function runStepServer(
  configPath: string,
  spec: StepServerSpec,
  build: (settings: StepServerSettings, schemas: SchemaSet) => SuiteServer,
): Promise<number> {
  const settings = readStepServerConfig(configPath, spec);
  const schemas = schemasFor(configPath, settings.schemaDir);
  const suite = build(settings, schemas);
  const { startServer } = await import("./server.js");
  let server;
  try {
    server = await startServer(settings, suite);
  } catch (error) {
    throw asConfigError(configPath, error);
  }
  await server.stopped;
  return 0;
}

/**
 * `lifecycle-server` for a suite no module runs: exit 2 naming `suite`,
 * with the suites this server runs (`known`); or what else makes the
 * config unusable, as every step server reads it.
 */
export function refuseOtherSuite(
  configPath: string,
  known: readonly string[],
): Promise<number> {
  refuseStepSuite(configPath, known);
}

// ---------------------------------------------------------------- scripted faults

/** The scripted operational failures a reply sequence may hold [ext] (docs/LIFECYCLE.md). */
export type Fault = "server-error" | "malformed" | "timeout";
const FAULTS: readonly string[] = ["server-error", "malformed", "timeout"];

/** The fault a sequence entry scripts (`{"fault": KIND}`, nothing else), or null for a response. */
export function faultOf(entry: Json): Fault | null {
  if (!isObject(entry) || Object.keys(entry).length !== 1) return null;
  const kind = entry["fault"];
  return typeof kind === "string" && FAULTS.includes(kind)
    ? (kind as Fault)
    : null;
}

/** The 25 bytes a `malformed` fault answers: the start of a response, not JSON. */
const MALFORMED_BODY = '{"jsonrpc": "2.0", "id": ';

/**
 * The answer a fault other than `timeout` writes (a `timeout` never
 * answers): `malformed` the 25 bytes with 200, `server-error` a JSON-RPC
 * error with 500.
 */
export function faultReply(
  fault: "server-error" | "malformed",
  id: Json,
): RawReply {
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

// ---------------------------------------------------------------- uploads

/** The upload receiver's path and its body limit. */
const UPLOAD_PATH = "/upload";
const UPLOAD_LIMIT = 1024 * 1024;

/**
 * The upload receiver (sdk/upload.ts) as a listener of its own, published
 * as `uploadEndpoint`: the one bearer `token`, bodies up to 1 MiB, bytes
 * kept in `store`, each attempt recorded `upload` in `log` before it is
 * answered.
 */
export function uploadListener(options: {
  readonly token: string;
  readonly store: ContentStore;
  readonly log: EntryLog;
  readonly limits: ListenerLimits;
}): SuiteListener {
  const uploads = uploadReceiver({
    token: options.token,
    maxBytes: UPLOAD_LIMIT,
    path: UPLOAD_PATH,
    store: options.store,
    record: (attempt) => options.log.append({ kind: "upload", ...attempt }),
    limits: options.limits,
  });
  return {
    readinessKey: "uploadEndpoint",
    path: UPLOAD_PATH,
    handler: uploads.handler,
    setup: (server) => server.on("clientError", uploads.onClientError),
  };
}
