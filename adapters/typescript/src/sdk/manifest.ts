// The discovery manifest this server answers to `hooks/capabilities` and
// `GET /capabilities`: the nine core boundaries, intercept mode, with the
// effects, modify targets and flow operations each event defines.

import type { Json, JsonObject } from "./json.js";

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

/** A `hooks/capabilities` success response for `id`. */
export function discoveryResponse(id: Json): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    result: { protocolVersion: "draft", manifest: discoveryManifest() },
  };
}
