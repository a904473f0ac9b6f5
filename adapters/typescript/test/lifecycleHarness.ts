// Builders and process helpers for the lifecycle suite's tests: hand-built
// scenarios (tool.before requests and scripted replies), the server as a
// real process or in process (short limits), the client as a real process.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject, Json } from "../sdk/json.js";
import { loadSchemas } from "../sdk/schemas.js";
import { DEFAULT_LIMITS, type ListenerLimits } from "../sdk/httpTransport.js";
import { startServer as startInProcessServer } from "../contract/server.js";
import type { RunningServer as InProcessRunning } from "../contract/server.js";
import type { StepScenario } from "../contract/config.js";
import type { EntryLog } from "../contract/entries.js";
import { lifecycleServer } from "../suites/lifecycle.js";
import * as b from "./builders.js";
import { assertContract } from "./contractSchemas.js";
import {
  ADAPTER_DIR,
  CLI,
  runCli,
  SCHEMA_DIR,
  startServer,
  writeJson,
  type RunningServer,
} from "./processes.js";

export const UPLOAD_TOKEN = "upload-token-for-tests-0123456789";
export const STRANGER_TOKEN = "another-upload-token-0123456789";
export const TOKEN_ENV = "AHP_INTEROP_UPLOAD_TOKEN";
export const STRANGER_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN";

export const CAPS: JsonObject = {
  effects: ["allow", "deny", "ask", "modify", "message", "return", "flow"],
  modify: { input: { replace: true, merge: true } },
  flow: { operations: ["stop"] },
};

/** A tool.before intercept request with id (= event id) `id`. */
export function req(
  id: string,
  input: Json = { value: "original" },
  extra: JsonObject = {},
  state: JsonObject | null = { permission: "none", candidate: null },
): JsonObject {
  const request = b.request(
    id,
    { ...b.toolBefore(input), ...extra },
    CAPS,
    state ?? undefined,
  );
  return request;
}

/** A success reply with `effects`. */
export const ok = (id: string, effects: Json[]): JsonObject =>
  b.success(id, effects);

export const setInput = (value: string): JsonObject =>
  b.modify("input", "replace", { value });

export const note = (text: string): JsonObject => ({ type: "message", text });

/** An attachment item whose body is `ref`. */
export const attachmentItem = (id: string, ref: string): JsonObject => ({
  id,
  kind: "attachment",
  mediaType: "application/octet-stream",
  selection: "body",
  body: { ref },
});

export function sha(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** An upload step for `text`, declared as is unless `declared` says otherwise. */
export function uploadStep(
  ref: string,
  text: string,
  declared: { size?: number; sha256?: string } = {},
  extra: JsonObject = {},
): JsonObject {
  const bytes = Buffer.from(text);
  return {
    op: "upload",
    subscription: "body",
    ref,
    bodyBase64: bytes.toString("base64"),
    size: declared.size ?? bytes.length,
    sha256: declared.sha256 ?? sha(bytes),
    ...extra,
  };
}

export function scenarioFile(path: string, scenarios: JsonObject[]): string {
  return writeJson(path, { version: 1, scenarios });
}

/** The scenarios of a file as the server reads them (no answers in them anyway). */
export function asStepScenarios(scenarios: JsonObject[]): StepScenario[] {
  return scenarios.map((row) => ({
    id: row["id"] as string,
    requests: (row["requests"] ?? {}) as Record<string, Json>,
    responses: (row["responses"] ?? {}) as Record<string, Json>,
    responseSequences: (row["responseSequences"] ?? {}) as Record<
      string,
      Json[]
    >,
    observeFaults: (row["observeFaults"] ?? {}) as Record<
      string,
      ("silent" | null)[]
    >,
    steps: (row["steps"] ?? []) as Json[],
    chain: row["chain"] ?? null,
    transports: null,
  }));
}

export interface LifecycleReadiness {
  readonly endpoint: string | null;
  readonly controlEndpoint: string;
  readonly uploadEndpoint: string;
  readonly pid: number;
}

export const serverConfig = (
  directory: string,
  file: string,
  extra: JsonObject = {},
): JsonObject => ({
  suite: "lifecycle",
  transport: "http",
  readinessFile: join(directory, "ready.json"),
  scenarioFile: file,
  auth: { mode: "none", profile: "strict" },
  uploadAuth: { token: UPLOAD_TOKEN },
  schemaDir: SCHEMA_DIR,
  ...extra,
});

/** The lifecycle server as a process over HTTP. */
export async function startLifecycleServer(
  directory: string,
  file: string,
  extra: JsonObject = {},
): Promise<{ server: RunningServer; readiness: LifecycleReadiness }> {
  const config = serverConfig(directory, file, extra);
  assertContract(
    "lifecycle-server-config.schema.json",
    config,
    "server config",
  );
  const path = writeJson(join(directory, "server.json"), config);
  const server = await startServer(
    path,
    config["readinessFile"] as string,
    "lifecycle-server",
  );
  return {
    server,
    readiness: server.readiness as unknown as LifecycleReadiness,
  };
}

const schemas = loadSchemas(SCHEMA_DIR);

/** The lifecycle server in this process (HTTP), with short limits. */
export async function startLifecycleInProcess(
  directory: string,
  scenarios: JsonObject[],
  options: { limits?: Partial<ListenerLimits>; waitLimitMs?: number } = {},
): Promise<{
  server: InProcessRunning;
  log: EntryLog;
  readiness: LifecycleReadiness;
}> {
  const readinessFile = join(directory, "in-process-ready.json");
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const { suite, log } = lifecycleServer(asStepScenarios(scenarios), {
    uploadToken: UPLOAD_TOKEN,
    schemas,
    limits,
    ...(options.waitLimitMs === undefined
      ? {}
      : { waitLimitMs: options.waitLimitMs }),
  });
  const server = await startInProcessServer(
    {
      configFile: join(directory, "in-process.json"),
      transport: "http",
      readinessFile,
      auth: { mode: "none", profile: "strict" },
      tls: null,
    },
    suite,
    limits,
  );
  const readiness = JSON.parse(
    readFileSync(readinessFile, "utf8"),
  ) as LifecycleReadiness;
  return { server, log, readiness };
}

export interface LifecycleReport {
  readonly language: string;
  readonly results: {
    readonly id: string;
    readonly status: string;
    readonly actual?: JsonObject;
    readonly error?: string;
  }[];
  readonly contentUploads: JsonObject[];
  readonly receipts?: { readonly entries: JsonObject[] };
}

/** Runs the lifecycle client to completion with `config`; resolves with its exit code and report. */
export async function runLifecycleClient(
  directory: string,
  config: JsonObject,
  env: Readonly<Record<string, string>> = {
    [TOKEN_ENV]: UPLOAD_TOKEN,
    [STRANGER_ENV]: STRANGER_TOKEN,
  },
  /** Whether `config` must be a valid contract config (false for a deliberately odd one). */
  contractConfig = true,
): Promise<{ code: number | null; stderr: string; report: LifecycleReport }> {
  if (contractConfig)
    assertContract(
      "lifecycle-client-config.schema.json",
      config,
      "client config",
    );
  const path = writeJson(join(directory, "client.json"), config);
  const result = await runCli("lifecycle-client", path, env, 90_000);
  const report = JSON.parse(
    readFileSync(config["reportFile"] as string, "utf8"),
  ) as LifecycleReport;
  return { code: result.code, stderr: result.stderr, report };
}

/** The upload block of a client config. */
export const uploadBlock = (endpoint?: string): JsonObject => ({
  auth: { type: "bearer", tokenEnv: TOKEN_ENV },
  timeoutMs: 5000,
  maxBytes: 1048576,
  ...(endpoint === undefined ? {} : { endpoint }),
});

/** A client config over HTTP against `readiness`. */
export const httpClientConfig = (
  directory: string,
  file: string,
  readiness: LifecycleReadiness,
  extra: JsonObject = {},
): JsonObject => ({
  suite: "lifecycle",
  transport: "http",
  scenarioFile: file,
  reportFile: join(directory, "report.json"),
  childPidFile: join(directory, "child.json"),
  auth: { mode: "none", profile: "strict" },
  timeoutMs: 10000,
  upload: uploadBlock(readiness.uploadEndpoint),
  contentSources: [],
  endpoint: readiness.endpoint ?? "",
  controlEndpoint: readiness.controlEndpoint,
  schemaDir: SCHEMA_DIR,
  ...extra,
});

/** A client config over stdio: the client starts the server itself. */
export function stdioClientConfig(
  directory: string,
  file: string,
  extra: JsonObject = {},
): JsonObject {
  const stdioServer = serverConfig(directory, file, {
    transport: "stdio",
    readinessFile: join(directory, "stdio-ready.json"),
  });
  assertContract(
    "lifecycle-server-config.schema.json",
    stdioServer,
    "stdio server config",
  );
  const server = writeJson(join(directory, "stdio-server.json"), stdioServer);
  return {
    suite: "lifecycle",
    transport: "stdio",
    scenarioFile: file,
    reportFile: join(directory, "report.json"),
    childPidFile: join(directory, "child.json"),
    auth: { mode: "none", profile: "strict" },
    timeoutMs: 10000,
    upload: uploadBlock(),
    contentSources: [],
    serverCommand: [process.execPath, CLI, "lifecycle-server"],
    serverCwd: ADAPTER_DIR,
    serverConfig: server,
    schemaDir: SCHEMA_DIR,
    ...extra,
  };
}

/** An entry as `kind:id` (the event id for an observation), for order assertions. */
export function label(entry: JsonObject): string {
  const text = (value: Json | undefined) =>
    typeof value === "string" ? value : JSON.stringify(value ?? null);
  return `${text(entry["kind"])}:${text(entry["id"] ?? entry["eventId"])}`;
}
