// The step engine's chains: a boundary run through serial subscriptions
// (docs/LIFECYCLE.md "Chains"; docs/COMPACTION.md runs two of them). The
// subscriptions a row names are read one way here; each call goes to the
// run's server over the wire, or to a backend of the config's own [ext]
// (docs/LIFECYCLE.md, "several backends").

import { HttpClientTransport, interceptUrl } from "../sdk/httpTransport.js";
import { isObject, type Json, type JsonObject } from "../sdk/json.js";
import { StdioSession, within } from "../sdk/stdioTransport.js";
import type { StepClientSettings } from "./config.js";
import { RowFailure, RowUnsupported } from "./rows.js";
import {
  connect,
  dropped,
  exchangeLimit,
  parsed,
  type Connection,
  type HttpCredentials,
  type Received,
} from "./steps.js";

/** One subscription of a chain, as every chain reads it. */
export interface Subscription {
  readonly id: string;
  /** The backend's name: "" (the run's server) when absent, unless the config's `backends` has it. */
  readonly backend: string;
  readonly mode: "intercept" | "observe";
  readonly failurePolicy: "fail-open" | "fail-closed";
  /** The deadline of an intercept subscription's call [ext]; null for the config's `timeoutMs`. */
  readonly timeoutMs: number | null;
}

/**
 * `block[key]` (`fallback` when absent) as one of `choices`; another value
 * is a choice this client does not implement (the row is unsupported).
 */
export function choice<T extends string>(
  block: JsonObject,
  key: string,
  choices: readonly T[],
  fallback: T,
  where: string,
): T {
  const value = block[key] ?? fallback;
  if (
    typeof value !== "string" ||
    !(choices as readonly string[]).includes(value)
  )
    throw new RowUnsupported(
      `${where}.${key} ${JSON.stringify(value)} is not implemented`,
    );
  return value as T;
}

/**
 * The subscription `raw` at `where` (e.g. `chain.subscriptions[0]`): a
 * malformed field fails the row, a mode or policy this client does not know
 * makes it unsupported. A suite reads what else its subscriptions carry
 * from `raw` itself (e.g. how its calls see the event's items).
 */
export function readSubscription(raw: Json, where: string): Subscription {
  if (!isObject(raw)) throw new RowFailure(`${where} is not an object`);
  const id = raw["id"];
  if (typeof id !== "string" || id.length === 0)
    throw new RowFailure(`${where}.id must be a non-empty string`);
  const backend = raw["backend"] ?? "";
  if (typeof backend !== "string")
    throw new RowFailure(`${where}.backend must be a string`);
  const timeoutMs = raw["timeoutMs"] ?? null;
  if (
    timeoutMs !== null &&
    (typeof timeoutMs !== "number" ||
      !Number.isInteger(timeoutMs) ||
      timeoutMs < 1)
  )
    throw new RowFailure(`${where}.timeoutMs must be a positive integer`);
  return {
    id,
    backend,
    timeoutMs,
    mode: choice(
      raw,
      "mode",
      ["intercept", "observe"] as const,
      "intercept",
      where,
    ),
    failurePolicy: choice(
      raw,
      "failurePolicy",
      ["fail-open", "fail-closed"] as const,
      "fail-open",
      where,
    ),
  };
}

/** The reserved backend name that no server serves [ext]: the config's `backends` says where it is not. */
export const UNREACHABLE = "unreachable";

/**
 * The backends of the config's `backends` [ext], by name: an endpoint is
 * called over HTTP(S) with the run's credentials, a command is started on
 * first use as a stdio backend (kept once it runs, reaped at close). A
 * backend that cannot be reached (refused, not startable) fails the call.
 */
export class Backends {
  private readonly http = new Map<string, HttpClientTransport>();
  private readonly stdio = new Map<string, StdioSession>();

  constructor(
    private readonly settings: StepClientSettings,
    private readonly credentials: HttpCredentials | null,
  ) {}

  /**
   * Whether a call to `name` goes here: a backend of its own, or the
   * unreachable one; every other name is the run's server's.
   */
  serves(name: string): boolean {
    return name === UNREACHABLE || this.settings.backends.has(name);
  }

  async call(
    name: string,
    line: string,
    id: Json,
    deadlineMs: number,
  ): Promise<Received> {
    const backend = this.settings.backends.get(name);
    if (backend === undefined)
      return { error: `backend ${name}: the config's backends names none` };
    const started = Date.now();
    if ("endpoint" in backend) {
      let transport = this.http.get(name);
      if (transport === undefined) {
        let url: URL;
        try {
          url = interceptUrl(backend.endpoint);
        } catch {
          return { error: `backend ${name}: bad endpoint ${backend.endpoint}` };
        }
        transport = new HttpClientTransport(
          url,
          this.credentials?.tls ?? { ca: null, cert: null, key: null },
          exchangeLimit(this.settings.timeoutMs),
          this.credentials?.token ?? null,
        );
        this.http.set(name, transport);
      }
      return parsed(await transport.send(line, { timeoutMs: deadlineMs }));
    }
    let session = this.stdio.get(name);
    if (session === undefined) {
      const starting = new StdioSession(backend.command, null, (bad) =>
        dropped(bad, `a line from backend ${name} no call waits for`),
      );
      const problem = await within(
        starting.started,
        deadlineMs,
        `not started within ${deadlineMs} ms`,
      );
      if (problem !== null) {
        await starting.close(0);
        return { error: `backend ${name} cannot be started: ${problem}` };
      }
      session = starting;
      this.stdio.set(name, session);
    }
    const remaining = Math.max(1, deadlineMs - (Date.now() - started));
    return parsed(await session.request(line, id, remaining));
  }

  async close(): Promise<void> {
    for (const transport of this.http.values()) await transport.close();
    await Promise.all([...this.stdio.values()].map((s) => s.close()));
  }
}

/** A chain client's connection: the run's wire and control, and the config's backends. */
export interface ChainConnection extends Connection {
  readonly backends: Backends;
}

/**
 * Opens the wire (stdio: starts the server) and the control client, with
 * the config's backends beside them; closing it closes the backends, then
 * the wire.
 */
export async function connectChains(
  settings: StepClientSettings,
): Promise<ChainConnection> {
  const connection = await connect(settings);
  const backends = new Backends(settings, connection.credentials);
  return {
    ...connection,
    backends,
    close: async () => {
      await backends.close();
      await connection.close();
    },
  };
}
