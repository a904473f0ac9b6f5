// The adapter contract's files (docs/CONTRACT.md): the server, client and
// replay configs and the scenario file, read strictly into typed settings.
// Anything unusable is a ConfigError naming the file and the field (exit 2).
// Unknown keys are ignored; answers (`expected`, ...) are never read.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
