// The stdio server a step-driven client starts itself (docs/LIFECYCLE.md):
// `serverCommand --config serverConfig` in `serverCwd`, in its own process
// group; `{"pid": N}` goes to `childPidFile`; the server's readiness file
// (named by its config) gives the control and upload endpoints. The server
// is reaped on every exit path: normal close, an exception, a signal.

import { existsSync, renameSync, rmSync, watch, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isObject, type Json, type JsonObject } from "../sdk/json.js";
import { StdioSession } from "../sdk/stdioTransport.js";
import { ConfigError, readJsonFile } from "./config.js";

/** How long the server may take to write its readiness file. */
const STARTUP_LIMIT_MS = 30_000;

export interface ChildServerSettings {
  readonly configFile: string;
  readonly serverCommand: readonly string[];
  readonly serverCwd: string | null;
  readonly serverConfig: string;
  readonly childPidFile: string;
}

export interface ChildServer {
  readonly session: StdioSession;
  /** The readiness file's contents. */
  readonly readiness: JsonObject;
  /** Closes stdin, waits briefly, kills the process group; idempotent. */
  close(): Promise<void>;
}

function writeAtomically(path: string, value: Json): void {
  const temporary = join(dirname(path), `.${process.pid}.child.tmp`);
  writeFileSync(temporary, JSON.stringify(value));
  renameSync(temporary, path);
}

/** Resolves once `path` exists; false when `gone` settles first or time runs out. */
function appeared(
  path: string,
  gone: Promise<void>,
  limitMs: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    let watcher: ReturnType<typeof watch> | null = null;
    const done = (outcome: boolean) => {
      clearTimeout(timer);
      clearInterval(poll);
      watcher?.close();
      resolve(outcome);
    };
    const check = () => {
      if (existsSync(path)) done(true);
    };
    const timer = setTimeout(() => done(false), limitMs);
    // The watch is the fast path; the poll covers file systems that do not notify.
    const poll = setInterval(check, 100);
    try {
      watcher = watch(dirname(path), check);
    } catch {
      watcher = null;
    }
    void gone.then(() => {
      if (existsSync(path)) done(true);
      else done(false);
    });
    check();
  });
}

/**
 * Starts the stdio server and waits for its readiness. `onUnsolicited`
 * receives every line that answers no pending request. Throws ConfigError
 * when the server config cannot be read, Error when the server does not
 * come up.
 */
export async function startChildServer(
  settings: ChildServerSettings,
  onUnsolicited: (line: Buffer, id: Json | undefined) => void,
): Promise<ChildServer> {
  const serverConfig = readJsonFile(settings.serverConfig, {
    file: settings.configFile,
    field: "serverConfig",
  });
  const readinessFile =
    isObject(serverConfig) && typeof serverConfig["readinessFile"] === "string"
      ? serverConfig["readinessFile"]
      : null;
  if (readinessFile === null)
    throw new ConfigError(
      settings.configFile,
      "serverConfig",
      `${settings.serverConfig} names no readinessFile`,
    );
  // A readiness file left from an earlier server would name dead endpoints.
  rmSync(readinessFile, { force: true });
  const session = new StdioSession(
    [...settings.serverCommand, "--config", settings.serverConfig],
    settings.serverCwd,
    onUnsolicited,
  );
  let closing: Promise<void> | null = null;
  const reapNow = () => session.kill();
  const onSignal = (signal: NodeJS.Signals) => {
    session.kill();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("exit", reapNow);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  const close = (): Promise<void> => {
    closing ??= session.close().finally(() => {
      process.off("exit", reapNow);
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    });
    return closing;
  };
  try {
    const pid = session.pid;
    if (pid === undefined) throw new Error("the server could not be started");
    writeAtomically(settings.childPidFile, { pid });
    if (!(await appeared(readinessFile, session.exit, STARTUP_LIMIT_MS)))
      throw new Error(
        `the server wrote no readiness file ${readinessFile} within ${STARTUP_LIMIT_MS / 1000} s`,
      );
    let readiness: Json;
    try {
      readiness = readJsonFile(readinessFile);
    } catch (error) {
      // The server's own file: a bad one is the server's failure, not the config's.
      throw new Error((error as Error).message, { cause: error });
    }
    if (
      !isObject(readiness) ||
      typeof readiness["controlEndpoint"] !== "string"
    )
      throw new Error(
        `readiness file ${readinessFile} names no controlEndpoint`,
      );
    return { session, readiness, close };
  } catch (error) {
    await close();
    throw error;
  }
}
