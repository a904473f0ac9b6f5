// The discovery manifests a server answers to `hooks/capabilities`, and the
// bare capabilities object `GET /capabilities` answers (`getCapabilities`).
// The core and lifecycle suites': the nine core boundaries, intercept mode,
// with the effects, modify targets and flow operations each event defines.
// The catalogue suite's (docs/CATALOGUE.md, "Discovery"): every catalogue
// event type but `hook.failure`, observable, three of them also
// interceptable.

import { cloneJson, isObject, type Json, type JsonObject } from "./json.js";

interface EventEntry {
  readonly event: string;
  readonly effects: readonly string[];
  readonly target?: string;
  readonly flow?: readonly string[];
}

const EVENTS: readonly EventEntry[] = [
  {
    event: "tool.before",
    effects: [
      "deny",
      "allow",
      "ask",
      "modify",
      "message",
      "return",
      "flow",
      "inject",
    ],
    target: "input",
    flow: ["stop"],
  },
  {
    event: "tool.after",
    effects: ["modify", "message", "flow", "inject"],
    target: "output",
    flow: ["stop", "continue"],
  },
  {
    event: "turn.finish.before",
    effects: ["modify", "message", "flow"],
    target: "response",
    flow: ["stop", "continue"],
  },
  {
    event: "model.request.before",
    effects: ["deny", "modify", "message", "return", "flow", "inject"],
    target: "request",
    flow: ["stop"],
  },
  {
    event: "context.compact.before",
    effects: ["deny", "modify", "message", "return", "inject"],
    target: "instructions",
  },
  {
    event: "context.compact.after",
    effects: ["modify", "message", "inject"],
    target: "summary",
  },
  {
    event: "user.message.outbound",
    effects: ["deny", "modify", "message"],
    target: "content",
  },
  {
    event: "user.elicitation.result",
    effects: ["modify", "message"],
    target: "content",
  },
  {
    event: "workspace.change.before",
    effects: ["deny", "modify", "message"],
    target: "workspace",
  },
];

function capabilitiesOf(entry: EventEntry): JsonObject {
  const capabilities: JsonObject = { effects: [...entry.effects] };
  if (entry.target !== undefined)
    capabilities["modify"] = { [entry.target]: { replace: true, merge: true } };
  if (entry.flow !== undefined) {
    capabilities["flow"] = entry.flow.includes("continue")
      ? {
          operations: [...entry.flow],
          remainingContinuations: 0,
          continuationCount: 0,
        }
      : { operations: [...entry.flow] };
  }
  if (entry.effects.includes("inject"))
    capabilities["inject"] = {
      context: { append: true, deliverAt: ["now", "next_turn"] },
    };
  return capabilities;
}

export function discoveryManifest(): JsonObject {
  return {
    events: EVENTS.map((entry) => ({
      event: entry.event,
      modes: ["intercept"],
      capabilities: capabilitiesOf(entry),
    })),
    gaps: [],
    transports: ["http", "stdio"],
    authentication: ["bearer", "oauth"],
    toolPaths: ["native"],
    contentCategories: ["text"],
    limits: {},
    managedPolicy: { scopes: ["user"], disableable: true },
    correlationIdentityFields: ["session.id", "call.id"],
  };
}

/**
 * The catalogue's event types in the order of the protocol's event type
 * list (`common.schema.json#/$defs/eventType`), `hook.failure` left out: a
 * host reports its own failures, nobody subscribes to them here.
 */
export const CATALOGUE_EVENTS: readonly string[] = [
  "tool.before",
  "tool.after",
  "session.start",
  "config.change.before",
  "turn.start",
  "turn.finish.before",
  "model.request.before",
  "model.response.after",
  "model.switch.before",
  "tool.permission.request",
  "tool.batch.after",
  "context.compact.before",
  "context.compact.after",
  "task.change.before",
  "user.elicitation.request",
  "user.elicitation.result",
  "user.message.inbound",
  "user.message.outbound",
  "workspace.change.before",
  "session.end",
  "config.change.after",
  "turn.end",
  "turn.progress",
  "model.error",
  "model.switch.after",
  "tool.permission.resolved",
  "tool.progress",
  "task.change.after",
  "user.attention",
  "workspace.change.after",
  "file.changed",
];

/** The catalogue events that may also be intercepted, with what an interceptor may do there. */
const CATALOGUE_INTERCEPTS: Readonly<Record<string, () => JsonObject>> = {
  "tool.before": () => ({
    effects: ["deny", "allow", "ask", "modify", "message", "flow"],
    modify: { input: { replace: true, merge: true } },
    flow: { operations: ["stop"] },
  }),
  "tool.after": () => ({
    effects: ["modify", "message"],
    modify: { output: { replace: true, merge: false } },
  }),
  "turn.start": () => ({ effects: ["deny", "message"] }),
};

/** The catalogue suite's manifest (a fresh copy each call). */
export function catalogueManifest(): JsonObject {
  return {
    events: CATALOGUE_EVENTS.map((event) => {
      const capabilities = CATALOGUE_INTERCEPTS[event];
      return capabilities === undefined
        ? { event, modes: ["observe"] }
        : {
            event,
            modes: ["intercept", "observe"],
            capabilities: capabilities(),
          };
    }),
    gaps: [],
    transports: ["http"],
    authentication: ["bearer"],
    toolPaths: ["native"],
    contentCategories: ["text"],
    limits: { minTimeoutMs: 100, maxTimeoutMs: 30000 },
    managedPolicy: { scopes: ["user", "project"], disableable: true },
    correlationIdentityFields: ["session.id", "call.id"],
  };
}

/** The event whose capabilities `GET /capabilities` answers. */
export const GET_CAPABILITIES_EVENT = "tool.before";

/**
 * What `GET /capabilities` answers: the `capabilities` object of the
 * `manifest` entry for `tool.before` whose `modes` include `intercept`, as it
 * is (a copy), not a JSON-RPC envelope: upstream clients validate the answer
 * against `capabilities.schema.json`. A manifest without such an entry
 * answers its first intercept entry's capabilities (every manifest here has
 * one); one without any intercept entry is an error.
 */
export function getCapabilities(manifest: JsonObject): JsonObject {
  const events = manifest["events"];
  const intercepts = (Array.isArray(events) ? events : []).filter(
    (entry): entry is JsonObject =>
      isObject(entry) &&
      Array.isArray(entry["modes"]) &&
      entry["modes"].includes("intercept") &&
      isObject(entry["capabilities"]),
  );
  const chosen =
    intercepts.find((entry) => entry["event"] === GET_CAPABILITIES_EVENT) ??
    intercepts[0];
  if (chosen === undefined)
    throw new Error("the manifest has no intercept entry");
  return cloneJson(chosen["capabilities"] as JsonObject);
}

/** A `hooks/capabilities` success response for `id` announcing `manifest`. */
export function discoveryResponse(
  id: Json,
  manifest: JsonObject = discoveryManifest(),
): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    result: { protocolVersion: "draft", manifest },
  };
}
