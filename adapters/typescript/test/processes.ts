// Test helpers that run the adapter as real processes: a server to readiness,
// a client to completion, and clean shutdown. Ordering uses events (file
// watches, process exits), never sleeps.

import { spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  watch,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Json, JsonObject } from "../sdk/json.js";

export const ADAPTER_DIR = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = join(ADAPTER_DIR, "dist", "cli.js");
export const REPO_DIR = join(ADAPTER_DIR, "..", "..");
export const SCHEMA_DIR = join(REPO_DIR, "schemas", "draft");
export const CONTRACT_SCHEMA_DIR = join(REPO_DIR, "schemas", "contract");
export const UPSTREAM_FILE = join(
  REPO_DIR,
  "scenarios",
  "upstream",
  "scenarios.json",
);
export const CORE_FILE = join(REPO_DIR, "scenarios", "core.json");

/** A scenario row as a blind client gets it: id, request and response only. */
export interface BlindRow {
  readonly id: string;
  readonly request: JsonObject;
  readonly response: Json;
}

/** The rows of a scenario file, without their answers (the tests never judge them). */
export function readBlindRows(path: string): BlindRow[] {
  const { scenarios } = JSON.parse(readFileSync(path, "utf8")) as {
    scenarios: BlindRow[];
  };
  return scenarios.map(({ id, request, response }) => ({
    id,
    request,
    response,
  }));
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value));
  return path;
}

/** Resolves once `path` exists (watching its directory), rejects after `timeoutMs`. */
export function waitForFile(path: string, timeoutMs = 20_000): Promise<void> {
  const directory = join(path, "..");
  return new Promise((resolve, reject) => {
    const watcher = watch(directory);
    const done = (error?: Error) => {
      clearTimeout(timer);
      watcher.close();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(
      () => done(new Error(`${path} did not appear`)),
      timeoutMs,
    );
    watcher.on("change", () => {
      if (existsSync(path)) done();
    });
    if (existsSync(path)) done();
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

export interface Readiness {
  readonly endpoint: string | null;
  readonly controlEndpoint: string;
  readonly pid: number;
}

export interface RunningServer {
  readonly child: ChildProcess;
  readonly readiness: Readiness;
  stop(): Promise<void>;
}

export type Command =
  "server" | "client" | "replay" | "lifecycle-server" | "lifecycle-client";

/** Spawns `node dist/cli.js COMMAND --config PATH` (stderr passed through). */
function spawnCli(role: Command, configPath: string): ChildProcess {
  return spawn(process.execPath, [CLI, role, "--config", configPath], {
    cwd: ADAPTER_DIR,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/**
 * Runs `node dist/cli.js COMMAND --config PATH` to completion (killed after
 * `limitMs`); resolves with its exit code, stdout and stderr.
 */
export function runCli(
  role: Command,
  configPath: string,
  env: Readonly<Record<string, string>> = {},
  limitMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, role, "--config", configPath], {
    cwd: ADAPTER_DIR,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const watchdog = setTimeout(() => child.kill("SIGKILL"), limitMs);
  return new Promise((resolve) => {
    child.once("close", (code) => {
      clearTimeout(watchdog);
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
  });
}

/** Starts `node dist/cli.js ROLE --config PATH` (a server role) and waits for its readiness file. */
export async function startServer(
  configPath: string,
  readinessFile: string,
  role: Command = "server",
): Promise<RunningServer> {
  const child = spawnCli(role, configPath);
  const early = exited(child).then((code) => {
    throw new Error(`server exited early with ${code}`);
  });
  await Promise.race([waitForFile(readinessFile), early]);
  early.catch(() => undefined);
  const readiness = JSON.parse(
    readFileSync(readinessFile, "utf8"),
  ) as Readiness;
  return {
    child,
    readiness,
    async stop() {
      if (child.exitCode !== null) return;
      const gone = exited(child);
      await control(readiness.controlEndpoint, "POST", "/shutdown").catch(() =>
        child.kill("SIGKILL"),
      );
      await gone;
    },
  };
}

/**
 * Runs `node dist/cli.js client --config PATH` to completion and returns its
 * exit code; a client still running after `limitMs` is killed (a hang fails
 * the test instead of leaking a process).
 */
export async function runClientProcess(
  configPath: string,
  limitMs = 60_000,
): Promise<number | null> {
  const child = spawnCli("client", configPath);
  const watchdog = setTimeout(() => child.kill("SIGKILL"), limitMs);
  try {
    return await exited(child);
  } finally {
    clearTimeout(watchdog);
  }
}

/** Whether a process is gone (or only a zombie waiting to be reaped). */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** A request to the control listener; resolves with status and parsed body. */
export function control(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? "" : JSON.stringify(body);
    const request = http.request(new URL(path, base), {
      method,
      headers: { "Content-Length": String(Buffer.byteLength(text)) },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: response.statusCode ?? 0,
          body: raw.length > 0 ? JSON.parse(raw) : null,
        });
      });
    });
    request.end(text);
  });
}

/** Reads a receipt log: one `{kind, message}` per line. */
export function readReceiptLog(
  path: string,
): { kind: string; message: unknown }[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { kind: string; message: unknown });
}
