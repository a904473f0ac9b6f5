// The adapter contract's config files (docs/CONTRACT.md), read into typed values.

import { readFileSync } from "node:fs";
import { isObject, type JsonObject } from "./json.js";

export class ConfigError extends Error {}

export type Transport = "http" | "stdio";
export type AuthMode = "none" | "bearer" | "oauth" | "mtls" | "workload";
export type Profile = "strict" | "compat";

/** The `auth` block: the mode, the profile, and the mode's own fields. */
export interface AuthConfig {
  readonly mode: AuthMode;
  readonly profile: Profile;
  readonly token?: string;
  readonly tokenEndpoint?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly audience?: string;
  readonly assertion?: string;
  readonly issuer?: string;
  readonly purpose?: string;
  readonly clock?: number;
  readonly publicKeyFile?: string;
  readonly signingKey?: string;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** The `tls` block [ext]: server `certFile`/`keyFile`/`clientCaFile?`; client `caFile`/`certFile?`/`keyFile?`. */
export interface TlsConfig {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly clientCaFile?: string;
}

export interface ServerConfig {
  readonly transport: Transport;
  readonly readinessFile: string;
  readonly scenarioFile: string | null;
  readonly auth: AuthConfig;
  readonly tls: TlsConfig | null;
  readonly receiptLog: string | null;
}

export interface ClientConfig {
  readonly transport: Transport;
  readonly endpoint: string | null;
  readonly serverCommand: readonly string[];
  readonly serverCwd: string | null;
  readonly serverConfig: string | null;
  readonly scenarioFile: string;
  readonly reportFile: string;
  readonly auth: AuthConfig;
  readonly tls: TlsConfig | null;
  readonly timeoutMs: number;
}

const AUTH_MODES: readonly string[] = [
  "none",
  "bearer",
  "oauth",
  "mtls",
  "workload",
];

function optionalString(block: JsonObject, key: string): string | undefined {
  const value = block[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string")
    throw new ConfigError(`config: ${key} must be a string`);
  return value;
}

function requiredString(block: JsonObject, key: string): string {
  const value = optionalString(block, key);
  if (value === undefined || value.length === 0)
    throw new ConfigError(`config: ${key} is required`);
  return value;
}

function transportOf(block: JsonObject): Transport {
  const transport = block["transport"] ?? "http";
  if (transport !== "http" && transport !== "stdio")
    throw new ConfigError("config: transport must be http or stdio");
  return transport;
}

/** Copies the string-valued keys that are present, so optional fields stay absent. */
function pick<K extends string>(
  block: JsonObject,
  keys: readonly K[],
): Partial<Record<K, string>> {
  const picked: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const value = optionalString(block, key);
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}

function readAuth(raw: unknown): AuthConfig {
  const block = isObject(raw) ? raw : {};
  const mode = block["mode"] ?? "none";
  if (typeof mode !== "string" || !AUTH_MODES.includes(mode))
    throw new ConfigError("config: unknown auth.mode");
  const profile = block["profile"] ?? "strict";
  if (profile !== "strict" && profile !== "compat")
    throw new ConfigError("config: unknown auth.profile");
  const clock = block["clock"];
  if (clock !== undefined && typeof clock !== "number")
    throw new ConfigError("config: auth.clock must be a number");
  const fields = pick(block, [
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
  ] as const);
  return {
    mode: mode as AuthMode,
    profile,
    ...fields,
    ...(clock === undefined ? {} : { clock }),
  };
}

function readTls(raw: unknown): TlsConfig | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new ConfigError("config: tls must be an object");
  return pick(raw, ["caFile", "certFile", "keyFile", "clientCaFile"] as const);
}

function readJsonFile(path: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(
      `config: cannot read ${path}: ${(error as Error).message}`,
    );
  }
  if (!isObject(parsed))
    throw new ConfigError(`config: ${path} is not a JSON object`);
  return parsed;
}

export function readServerConfig(path: string): ServerConfig {
  const block = readJsonFile(path);
  return {
    transport: transportOf(block),
    readinessFile: requiredString(block, "readinessFile"),
    scenarioFile: optionalString(block, "scenarioFile") ?? null,
    auth: readAuth(block["auth"]),
    tls: readTls(block["tls"]),
    receiptLog: optionalString(block, "receiptLog") ?? null,
  };
}

export function readClientConfig(path: string): ClientConfig {
  const block = readJsonFile(path);
  const transport = transportOf(block);
  const command = block["serverCommand"];
  if (
    command !== undefined &&
    !(
      Array.isArray(command) &&
      command.every((part) => typeof part === "string")
    )
  ) {
    throw new ConfigError("config: serverCommand must be an array of strings");
  }
  const timeoutMs = block["timeoutMs"] ?? 10000;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0))
    throw new ConfigError("config: timeoutMs must be positive");
  const config: ClientConfig = {
    transport,
    endpoint: optionalString(block, "endpoint") ?? null,
    serverCommand: (command as string[] | undefined) ?? [],
    serverCwd: optionalString(block, "serverCwd") ?? null,
    serverConfig: optionalString(block, "serverConfig") ?? null,
    scenarioFile: requiredString(block, "scenarioFile"),
    reportFile: requiredString(block, "reportFile"),
    auth: readAuth(block["auth"]),
    tls: readTls(block["tls"]),
    timeoutMs,
  };
  if (transport === "http" && config.endpoint === null)
    throw new ConfigError("config: endpoint is required over http");
  if (transport === "stdio" && config.serverCommand.length === 0) {
    throw new ConfigError("config: serverCommand is required over stdio");
  }
  return config;
}

/** A scenario file: `{version, scenarios: [{id, request, response, ...}]}`. */
export interface Scenario {
  readonly id: string;
  readonly request: unknown;
  readonly response: unknown;
}

export function readScenarios(path: string): Scenario[] {
  const file = readJsonFile(path);
  const rows = file["scenarios"];
  if (!Array.isArray(rows))
    throw new ConfigError(`scenario file ${path} has no scenarios list`);
  return rows.map((row, index) => {
    if (!isObject(row) || typeof row["id"] !== "string") {
      throw new ConfigError(
        `scenario file ${path}: row ${index} has no string id`,
      );
    }
    // Only the id, the request and the response are read: never an answer.
    return {
      id: row["id"],
      request: row["request"] ?? null,
      response: row["response"] ?? null,
    };
  });
}
