// The adapter contract's files (docs/CONTRACT.md): the server, client and
// replay configs and the scenario file, read strictly into typed settings.
// Anything unusable is a ConfigError naming the file and the field (exit 2).
// Unknown keys are ignored; answers (`expected`, ...) are never read.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeBase64 } from "../sdk/codec.js";
import {
  isObject,
  JsonSyntaxError,
  parseStrictJson,
  type Json,
  type JsonObject,
} from "../sdk/json.js";
import type {
  AuthMode,
  AuthSettings,
  Profile,
  TlsFiles,
} from "../sdk/settings.js";

/** A config (or a file it names) that cannot be used; the message is one line. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly field: string | null,
    reason: string,
  ) {
    const where = field === null ? "" : `field ${field}: `;
    super(`${file}: ${where}${reason}`.replace(/\s*\n\s*/g, " "));
  }
}

export type Transport = "http" | "stdio";

export interface ServerSettings {
  readonly configFile: string;
  readonly transport: Transport;
  readonly readinessFile: string;
  readonly scenarioFile: string | null;
  readonly auth: AuthSettings;
  readonly tls: TlsFiles | null;
  readonly receiptLog: string | null;
  readonly schemaDir: SchemaDir;
}

export interface ClientSettings {
  readonly configFile: string;
  readonly transport: Transport;
  readonly endpoint: string | null;
  readonly serverCommand: readonly string[];
  readonly serverCwd: string | null;
  readonly serverConfig: string | null;
  readonly scenarioFile: string;
  readonly reportFile: string;
  readonly auth: AuthSettings;
  readonly tls: TlsFiles | null;
  readonly timeoutMs: number;
  readonly schemaDir: SchemaDir;
  readonly language: string;
}

export interface ReplaySettings {
  readonly configFile: string;
  readonly scenarioFile: string;
  readonly reportFile: string;
  readonly schemaDir: SchemaDir;
  readonly language: string;
}

/** The language a client reports when its config names none. */
export const LANGUAGE = "typescript";

const ADAPTER_DIR = fileURLToPath(new URL("../../", import.meta.url));

/** The canonical schemas' directory, and where that came from (for errors). */
export interface SchemaDir {
  readonly path: string;
  readonly from: "schemaDir" | "$AHP_SCHEMA_DIR" | "default";
}

/** Where the canonical schemas are: `schemaDir` of the config, else `$AHP_SCHEMA_DIR`, else the repository's. */
export function schemaDirFor(configured: string | undefined): SchemaDir {
  if (configured !== undefined) return { path: configured, from: "schemaDir" };
  const environment = process.env["AHP_SCHEMA_DIR"];
  if (environment !== undefined && environment.length > 0)
    return { path: environment, from: "$AHP_SCHEMA_DIR" };
  return {
    path: join(ADAPTER_DIR, "..", "..", "schemas", "draft"),
    from: "default",
  };
}

/** Reads and strictly parses a JSON file; `field` names the config field that pointed to it, if any. */
export function readJsonFile(
  path: string,
  referrer: { file: string; field: string } | null = null,
): Json {
  const fail = (reason: string): never => {
    throw referrer === null
      ? new ConfigError(path, null, reason)
      : new ConfigError(referrer.file, referrer.field, `${path}: ${reason}`);
  };
  let text = "";
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(path));
  } catch (error) {
    fail(
      error instanceof TypeError
        ? "malformed UTF-8"
        : `cannot read: ${(error as Error).message}`,
    );
  }
  try {
    return parseStrictJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      return fail(`malformed JSON: ${error.message}`);
    throw error;
  }
}

/** Typed access to the fields of one object in a config file. */
class Fields {
  constructor(
    readonly file: string,
    private readonly block: JsonObject,
    private readonly prefix = "",
  ) {}

  fail(key: string, reason: string): never {
    throw new ConfigError(this.file, `${this.prefix}${key}`, reason);
  }

  value(key: string): Json | undefined {
    const value = this.block[key];
    return value === null ? undefined : value;
  }

  optionalString(key: string): string | undefined {
    const value = this.value(key);
    if (value === undefined) return undefined;
    if (typeof value !== "string") this.fail(key, "must be a string");
    return value;
  }

  requiredString(key: string): string {
    const value = this.optionalString(key);
    if (value === undefined || value.length === 0)
      this.fail(key, "is required");
    return value;
  }

  /** An optional string that must not be empty or blank when present. */
  optionalName(key: string): string | undefined {
    const value = this.optionalString(key);
    if (value !== undefined && !/\S/.test(value))
      this.fail(key, "must not be blank");
    return value;
  }

  oneOf<T extends string>(key: string, choices: readonly T[], fallback: T): T {
    const value = this.value(key) ?? fallback;
    if (
      typeof value !== "string" ||
      !(choices as readonly string[]).includes(value)
    )
      this.fail(key, `must be one of ${choices.join(", ")}`);
    return value as T;
  }

  object(key: string): Fields | null {
    const value = this.value(key);
    if (value === undefined) return null;
    if (!isObject(value)) this.fail(key, "must be an object");
    return new Fields(this.file, value, `${this.prefix}${key}.`);
  }

  /** The string fields among `keys` that are present, so that absent ones stay absent. */
  strings<K extends string>(keys: readonly K[]): Partial<Record<K, string>> {
    const picked: Partial<Record<K, string>> = {};
    for (const key of keys) {
      const value = this.optionalString(key);
      if (value !== undefined) picked[key] = value;
    }
    return picked;
  }
}

const AUTH_MODES: readonly AuthMode[] = [
  "none",
  "bearer",
  "oauth",
  "mtls",
  "workload",
];
const PROFILES: readonly Profile[] = ["strict", "compat"];

function readAuth(config: Fields): AuthSettings {
  const auth = config.object("auth") ?? new Fields(config.file, {}, "auth.");
  const rawClock = auth.value("clock");
  const clock =
    rawClock === undefined || typeof rawClock === "number"
      ? rawClock
      : auth.fail("clock", "must be a number");
  return {
    mode: auth.oneOf("mode", AUTH_MODES, "none"),
    profile: auth.oneOf("profile", PROFILES, "strict"),
    ...auth.strings([
      "token",
      "tokenEndpoint",
      "clientId",
      "clientSecret",
      "audience",
      "assertion",
      "issuer",
      "purpose",
      "publicKeyFile",
      "signingKey",
      "caFile",
      "certFile",
      "keyFile",
    ] as const),
    ...(clock === undefined ? {} : { clock }),
  };
}

function readTls(config: Fields): TlsFiles | null {
  return (
    config
      .object("tls")
      ?.strings(["caFile", "certFile", "keyFile", "clientCaFile"] as const) ??
    null
  );
}

function configFields(path: string): Fields {
  const block = readJsonFile(path);
  if (!isObject(block))
    throw new ConfigError(path, null, "the config must be a JSON object");
  return new Fields(path, block);
}

export function readServerConfig(path: string): ServerSettings {
  const config = configFields(path);
  return {
    configFile: path,
    transport: config.oneOf("transport", ["http", "stdio"] as const, "http"),
    readinessFile: config.requiredString("readinessFile"),
    scenarioFile: config.optionalString("scenarioFile") ?? null,
    auth: readAuth(config),
    tls: readTls(config),
    receiptLog: config.optionalString("receiptLog") ?? null,
    schemaDir: schemaDirFor(config.optionalString("schemaDir")),
  };
}

export function readClientConfig(path: string): ClientSettings {
  const config = configFields(path);
  const transport = config.oneOf(
    "transport",
    ["http", "stdio"] as const,
    "http",
  );
  const command = config.value("serverCommand");
  if (
    command !== undefined &&
    !(
      Array.isArray(command) &&
      command.every((part) => typeof part === "string")
    )
  ) {
    config.fail("serverCommand", "must be an array of strings");
  }
  const rawTimeout = config.value("timeoutMs") ?? 10000;
  const timeoutMs =
    typeof rawTimeout === "number" && rawTimeout > 0
      ? rawTimeout
      : config.fail("timeoutMs", "must be a positive number");
  const endpoint = config.optionalString("endpoint") ?? null;
  if (transport === "http" && endpoint === null)
    config.fail("endpoint", "is required over http");
  const serverCommand = (command as string[] | undefined) ?? [];
  if (transport === "stdio" && serverCommand.length === 0)
    config.fail("serverCommand", "is required over stdio");
  return {
    configFile: path,
    transport,
    endpoint,
    serverCommand,
    serverCwd: config.optionalString("serverCwd") ?? null,
    serverConfig: config.optionalString("serverConfig") ?? null,
    scenarioFile: config.requiredString("scenarioFile"),
    reportFile: config.requiredString("reportFile"),
    auth: readAuth(config),
    tls: readTls(config),
    timeoutMs,
    schemaDir: schemaDirFor(config.optionalString("schemaDir")),
    language: config.optionalName("language") ?? LANGUAGE,
  };
}

export function readReplayConfig(path: string): ReplaySettings {
  const config = configFields(path);
  return {
    configFile: path,
    scenarioFile: config.requiredString("scenarioFile"),
    reportFile: config.requiredString("reportFile"),
    schemaDir: schemaDirFor(config.optionalString("schemaDir")),
    language: config.optionalName("language") ?? LANGUAGE,
  };
}

/** One scenario as the adapter sees it: never an answer key. */
export interface Scenario {
  readonly id: string;
  readonly request: Json;
  readonly response: Json;
  /** The barrier that holds the server's reply until released [ext]; null when none. */
  readonly barrier: string | null;
}

/**
 * Reads a scenario file `{version, scenarios: [{id, request, response, barrier?}]}`.
 * `referrer` names the config field that pointed to it.
 */
export function readScenarios(
  path: string,
  referrer: { file: string; field: string } | null = null,
): Scenario[] {
  const file = readJsonFile(path, referrer);
  const rows = isObject(file) ? file["scenarios"] : undefined;
  if (!Array.isArray(rows))
    throw new ConfigError(path, "scenarios", "must be a list");
  return rows.map((row, index) => {
    const fields = isObject(row)
      ? new Fields(path, row, `scenarios[${index}].`)
      : null;
    if (fields === null)
      throw new ConfigError(path, `scenarios[${index}]`, "must be an object");
    const rawId = fields.value("id");
    const id =
      typeof rawId === "string" ? rawId : fields.fail("id", "must be a string");
    return {
      id,
      request: fields.value("request") ?? null,
      response: fields.value("response") ?? null,
      barrier: fields.optionalString("barrier") ?? null,
    };
  });
}

// ---------------------------------------------------------------- step-driven suites

/**
 * The `suite` a step-driven config names (`lifecycle` when absent), to pick
 * the module that reads the config for good; null when the file cannot be
 * read or `suite` is not a string (the command's fallback for a suite no
 * module runs reads it again and says why).
 */
export function stepSuiteOf(path: string): string | null {
  try {
    const config = readJsonFile(path);
    const suite = isObject(config) ? (config["suite"] ?? "lifecycle") : null;
    return typeof suite === "string" ? suite : null;
  } catch (error) {
    if (error instanceof ConfigError) return null;
    throw error;
  }
}

/** What reading a step-driven server config needs to know of the suite it runs. */
export interface StepServerSpec {
  /** The config's `suite` the server runs. */
  readonly name: string;
  /** Whether its server runs the upload receiver (`uploadAuth` is then required). */
  readonly uploads: boolean;
}

export interface StepServerSettings {
  readonly configFile: string;
  readonly suite: string;
  readonly transport: Transport;
  readonly readinessFile: string;
  readonly scenarioFile: string;
  readonly auth: AuthSettings;
  readonly tls: TlsFiles | null;
  /** The one upload token the upload receiver accepts; null when the suite uploads nothing. */
  readonly uploadToken: string | null;
  readonly schemaDir: SchemaDir;
}

/** Upload settings: the config's `upload` block, or a step's own. */
export interface UploadSettings {
  /** The environment variable holding the bearer token; null for no credential. */
  readonly tokenEnv: string | null;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly endpoint: string | null;
}

/** A content source: bytes a message may refer to by `ref` before any step uploaded them. */
export interface ContentSource {
  readonly ref: string;
  readonly size: number;
  readonly sha256: string;
  readonly bytes: Buffer;
}

/**
 * A backend other than the run's server [ext]: over HTTP an endpoint, over
 * stdio a command started on first use (docs/LIFECYCLE.md, "several
 * backends").
 */
export type BackendSettings =
  { readonly endpoint: string } | { readonly command: readonly string[] };

export interface StepClientSettings {
  readonly configFile: string;
  /** As found; a suite the client does not run makes every row unsupported. */
  readonly suite: string;
  readonly transport: Transport;
  readonly scenarioFile: string;
  readonly reportFile: string;
  readonly childPidFile: string | null;
  readonly auth: AuthSettings;
  readonly tls: TlsFiles | null;
  readonly timeoutMs: number;
  readonly upload: UploadSettings | null;
  readonly contentSources: readonly ContentSource[];
  readonly endpoint: string | null;
  readonly controlEndpoint: string | null;
  readonly serverCommand: readonly string[];
  readonly serverCwd: string | null;
  readonly serverConfig: string | null;
  /** `backends` [ext], by the name a chain subscription gives; empty when absent. */
  readonly backends: ReadonlyMap<string, BackendSettings>;
  readonly schemaDir: SchemaDir;
  readonly language: string;
}

/** The config's `suite` (`lifecycle` when absent), when it is one of `known`; else the field fails. */
function knownSuite(config: Fields, known: readonly string[]): string {
  const suite = config.value("suite") ?? "lifecycle";
  if (typeof suite !== "string" || !known.includes(suite))
    config.fail(
      "suite",
      `unknown suite ${JSON.stringify(suite)}: this server runs ${known.join(", ")}`,
    );
  return suite;
}

/**
 * The step-driven server config of the suite `spec` names; `uploadAuth` is
 * required by a suite that uploads, and not read for another.
 */
export function readStepServerConfig(
  path: string,
  spec: StepServerSpec,
): StepServerSettings {
  const config: Fields = configFields(path);
  const suite = knownSuite(config, [spec.name]);
  const uploadToken = spec.uploads
    ? (
        config.object("uploadAuth") ?? config.fail("uploadAuth", "is required")
      ).requiredString("token")
    : null;
  return {
    configFile: path,
    suite,
    transport: config.oneOf("transport", ["http", "stdio"] as const, "http"),
    readinessFile: config.requiredString("readinessFile"),
    scenarioFile: config.requiredString("scenarioFile"),
    auth: readAuth(config),
    tls: readTls(config),
    uploadToken,
    schemaDir: schemaDirFor(config.optionalString("schemaDir")),
  };
}

/**
 * A step-driven server config whose `suite` is none of `known` (the suites
 * this server runs): the ConfigError naming `suite`, or whatever else makes
 * the file unusable first, as `readStepServerConfig` finds it.
 */
export function refuseStepSuite(path: string, known: readonly string[]): never {
  const suite = knownSuite(configFields(path), known);
  throw new Error(`suite ${suite} is one this server runs`);
}

function positiveInteger(
  fields: Fields,
  key: string,
  fallback?: number,
): number {
  const value = fields.value(key) ?? fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    return fields.fail(key, "must be a positive integer");
  return value;
}

function readUploadFields(
  upload: Fields,
  fallbackEndpoint: string | null,
): UploadSettings {
  const auth: Fields | null = upload.object("auth");
  let tokenEnv: string | null = null;
  if (auth !== null) {
    auth.oneOf("type", ["bearer"] as const, "bearer");
    tokenEnv = auth.requiredString("tokenEnv");
  }
  const maxBytes = upload.value("maxBytes") ?? 1024 * 1024;
  if (
    typeof maxBytes !== "number" ||
    !Number.isInteger(maxBytes) ||
    maxBytes < 0
  )
    upload.fail("maxBytes", "must be a non-negative integer");
  return {
    tokenEnv,
    timeoutMs: positiveInteger(upload, "timeoutMs", 5000),
    maxBytes,
    endpoint: upload.optionalString("endpoint") ?? fallbackEndpoint,
  };
}

/**
 * A step's own `upload` block (it replaces the config's for that step; its
 * endpoint defaults to the config's): the settings, or why it is unusable.
 */
export function readStepUpload(
  block: Json,
  fallbackEndpoint: string | null,
): UploadSettings | string {
  if (!isObject(block)) return "upload must be an object";
  try {
    return readUploadFields(
      new Fields("step", block, "upload."),
      fallbackEndpoint,
    );
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

function readContentSources(config: Fields): ContentSource[] {
  const raw = config.value("contentSources") ?? [];
  if (!Array.isArray(raw)) config.fail("contentSources", "must be a list");
  return raw.map((entry, index) => {
    const where = `contentSources[${index}]`;
    if (!isObject(entry)) config.fail(where, "must be an object");
    const source: Fields = new Fields(config.file, entry, `${where}.`);
    const descriptor: Fields =
      source.object("descriptor") ?? source.fail("descriptor", "is required");
    const size = descriptor.value("size");
    if (typeof size !== "number" || !Number.isInteger(size) || size < 0)
      descriptor.fail("size", "must be a non-negative integer");
    const sha256 = descriptor.requiredString("sha256");
    if (!/^[0-9a-f]{64}$/.test(sha256))
      descriptor.fail("sha256", "must be 64 lowercase hex digits");
    const bytes = decodeBase64(source.optionalString("bytes") ?? "");
    if (bytes === null) source.fail("bytes", "must be base64");
    return { ref: descriptor.requiredString("ref"), size, sha256, bytes };
  });
}

function readBackends(config: Fields): Map<string, BackendSettings> {
  const backends = new Map<string, BackendSettings>();
  const block = config.object("backends");
  if (block === null) return backends;
  const raw = config.value("backends") as JsonObject;
  for (const name of Object.keys(raw)) {
    const entry: Fields =
      block.object(name) ?? block.fail(name, "must be an object");
    const command = entry.value("command");
    const endpoint = entry.optionalString("endpoint");
    if (endpoint !== undefined && command === undefined) {
      if (endpoint.length === 0) entry.fail("endpoint", "must not be empty");
      backends.set(name, { endpoint });
    } else if (command !== undefined && endpoint === undefined) {
      if (
        !Array.isArray(command) ||
        command.length === 0 ||
        !command.every((part) => typeof part === "string" && part.length > 0)
      )
        entry.fail("command", "must be a non-empty array of strings");
      backends.set(name, { command: command as string[] });
    } else {
      block.fail(name, "needs exactly one of endpoint and command");
    }
  }
  return backends;
}

export function readStepClientConfig(path: string): StepClientSettings {
  const config: Fields = configFields(path);
  const suite = config.value("suite") ?? "lifecycle";
  if (typeof suite !== "string") config.fail("suite", "must be a string");
  const transport = config.oneOf(
    "transport",
    ["http", "stdio"] as const,
    "http",
  );
  const command = config.value("serverCommand");
  if (
    command !== undefined &&
    !(
      Array.isArray(command) &&
      command.every((part) => typeof part === "string")
    )
  )
    config.fail("serverCommand", "must be an array of strings");
  const serverCommand = command ?? [];
  const endpoint = config.optionalString("endpoint") ?? null;
  const controlEndpoint = config.optionalString("controlEndpoint") ?? null;
  const childPidFile = config.optionalString("childPidFile") ?? null;
  const serverConfig = config.optionalString("serverConfig") ?? null;
  if (transport === "http") {
    if (endpoint === null) config.fail("endpoint", "is required over http");
    if (controlEndpoint === null)
      config.fail("controlEndpoint", "is required over http");
  } else {
    if (serverCommand.length === 0)
      config.fail("serverCommand", "is required over stdio");
    if (serverConfig === null)
      config.fail("serverConfig", "is required over stdio");
    if (childPidFile === null)
      config.fail("childPidFile", "is required over stdio");
  }
  const upload = config.object("upload");
  const rawTimeout = config.value("timeoutMs") ?? 10000;
  const timeoutMs =
    typeof rawTimeout === "number" && rawTimeout > 0
      ? rawTimeout
      : config.fail("timeoutMs", "must be a positive number");
  return {
    configFile: path,
    suite,
    transport,
    scenarioFile: config.requiredString("scenarioFile"),
    reportFile: config.requiredString("reportFile"),
    childPidFile,
    auth: readAuth(config),
    tls: readTls(config),
    timeoutMs,
    upload: upload === null ? null : readUploadFields(upload, null),
    contentSources: readContentSources(config),
    endpoint,
    controlEndpoint,
    serverCommand,
    serverCwd: config.optionalString("serverCwd") ?? null,
    serverConfig,
    backends: readBackends(config),
    schemaDir: schemaDirFor(config.optionalString("schemaDir")),
    language: config.optionalName("language") ?? LANGUAGE,
  };
}

/** What answers the n-th observation of a request's event [ext]: the usual answer, or none. */
export type ObserveFault = "silent" | null;

/** One step-driven scenario as the adapter sees it: never `expected` or `chainProof`. */
export interface StepScenario {
  readonly id: string;
  readonly requests: Readonly<Record<string, Json>>;
  readonly responses: Readonly<Record<string, Json>>;
  /** Entries may be `{"fault": KIND}` [ext] (the server's to produce). */
  readonly responseSequences: Readonly<Record<string, readonly Json[]>>;
  /** By request key, the answer to each observation of its event [ext]; `{}` when none. */
  readonly observeFaults: Readonly<Record<string, readonly ObserveFault[]>>;
  /** The steps as written; each is checked when it runs. */
  readonly steps: readonly Json[];
  /** The serial chain, when the scenario is one (checked when it runs). */
  readonly chain: Json | null;
  /** The transports the scenario runs on; null for both. */
  readonly transports: readonly string[] | null;
}

/** Reads a step-driven scenario file `{version, scenarios: [...]}` (docs/LIFECYCLE.md). */
export function readStepScenarios(
  path: string,
  referrer: { file: string; field: string } | null = null,
): StepScenario[] {
  const file = readJsonFile(path, referrer);
  const rows = isObject(file) ? file["scenarios"] : undefined;
  if (!Array.isArray(rows))
    throw new ConfigError(path, "scenarios", "must be a list");
  return rows.map((row, index) => {
    if (!isObject(row))
      throw new ConfigError(path, `scenarios[${index}]`, "must be an object");
    const fields: Fields = new Fields(path, row, `scenarios[${index}].`);
    const rawId = fields.value("id");
    const id =
      typeof rawId === "string" && rawId.length > 0
        ? rawId
        : fields.fail("id", "must be a non-empty string");
    const map = (key: string): Record<string, Json> => {
      const value = fields.value(key) ?? {};
      if (!isObject(value)) fields.fail(key, "must be an object");
      return value;
    };
    const requests = map("requests");
    for (const [key, request] of Object.entries(requests)) {
      if (!isObject(request) || typeof request["id"] !== "string")
        fields.fail(`requests.${key}`, "must be a request with a string id");
    }
    const sequences: Record<string, readonly Json[]> = {};
    for (const [key, sequence] of Object.entries(map("responseSequences"))) {
      if (!Array.isArray(sequence))
        fields.fail(`responseSequences.${key}`, "must be a list");
      sequences[key] = sequence;
    }
    const observeFaults: Record<string, ObserveFault[]> = {};
    for (const [key, faults] of Object.entries(map("observeFaults"))) {
      if (
        !Array.isArray(faults) ||
        !faults.every((fault) => fault === null || fault === "silent")
      )
        fields.fail(
          `observeFaults.${key}`,
          'must be a list of null or "silent"',
        );
      observeFaults[key] = faults;
    }
    const steps = fields.value("steps") ?? [];
    if (!Array.isArray(steps)) fields.fail("steps", "must be a list");
    const transports = fields.value("transports");
    if (
      transports !== undefined &&
      !(
        Array.isArray(transports) &&
        transports.every((t) => typeof t === "string")
      )
    )
      fields.fail("transports", "must be a list of transport names");
    return {
      id,
      requests,
      responses: map("responses"),
      responseSequences: sequences,
      observeFaults,
      steps,
      chain: fields.value("chain") ?? null,
      transports: transports ?? null,
    };
  });
}
