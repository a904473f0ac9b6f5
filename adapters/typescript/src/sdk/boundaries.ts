// The nine boundaries of the core set: which event field each modify target
// edits, the shape its value takes, whether an operation is gated, and what a
// `return` may supply (docs/scenarios.md, "Boundaries in the core set"). Each
// shape other than `object` and `any` names the canonical schema definition
// the slot's values are validated against (content.ts, schemas.ts).

import type { SchemaShape } from "./content.js";
import { isObject, type Json, type JsonObject } from "./json.js";

/** A modify slot's shape: a schema definition, or `object` (tool input). */
export type ValueShape = "object" | SchemaShape;
/** What a `return` may supply: a schema definition, or any JSON value. */
export type ReturnShape = "any" | SchemaShape;

/** The shapes whose values are lists: `merge` appends, `replace` checks withheld content. */
export const LIST_SHAPES: ReadonlySet<ValueShape> = new Set<ValueShape>([
  "messageList",
  "assistantMessageList",
  "textPartList",
]);

/** The target's value in the event, and whether a modification may edit it. */
export interface TargetValue {
  readonly value: Json;
  /** Why the target cannot be edited, or null when it can. */
  readonly lockedBecause: string | null;
}

export interface Boundary {
  readonly event: string;
  readonly target: string;
  readonly shape: ValueShape;
  /** Whether the boundary gates an operation (`executed` can be true). */
  readonly gated: boolean;
  /** Whether permission effects (deny/ask/allow) decide anything here. */
  readonly permission: boolean;
  /** What a `return` may supply here, or null when it is not allowed. */
  readonly returnShape: ReturnShape | null;
  original(event: JsonObject): TargetValue;
}

function editable(value: Json | undefined): TargetValue {
  return { value: value === undefined ? null : value, lockedBecause: null };
}

function field(event: JsonObject, ...path: string[]): Json | undefined {
  let current: Json | undefined = event;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * The answer object of an elicitation result: the `content` of the MCP result
 * serialized in the text of `elicitation.result`. Editable only for an accepted
 * form result whose result part carries its body.
 */
function elicitationAnswer(event: JsonObject): TargetValue {
  const elicitation = field(event, "elicitation");
  const part = field(event, "elicitation", "result");
  let parsed: unknown;
  if (isObject(part) && typeof part["text"] === "string") {
    try {
      parsed = JSON.parse(part["text"]);
    } catch {
      parsed = undefined;
    }
  }
  const content =
    isObject(parsed) && isObject(parsed["content"]) ? parsed["content"] : null;
  const locked = (reason: string): TargetValue => ({
    value: content,
    lockedBecause: reason,
  });
  if (!isObject(elicitation) || elicitation["mode"] !== "form")
    return locked("not a form elicitation");
  if (elicitation["action"] !== "accept")
    return locked("elicitation result not accepted");
  if (
    !isObject(part) ||
    part["selection"] !== "body" ||
    part["gap"] !== undefined
  ) {
    return locked("elicitation result part has no body");
  }
  if (!isObject(parsed) || content === null)
    return locked("elicitation result carries no answer object");
  if (parsed["action"] !== undefined && parsed["action"] !== "accept") {
    return locked("elicitation result not accepted");
  }
  return editable(content);
}

const BOUNDARIES: readonly Boundary[] = [
  {
    event: "tool.before",
    target: "input",
    shape: "object",
    gated: true,
    permission: true,
    returnShape: "any",
    original: (event) => editable(field(event, "tool", "input")),
  },
  {
    event: "tool.after",
    target: "output",
    shape: "messageList",
    gated: false,
    permission: false,
    returnShape: null,
    original: (event) => editable(field(event, "items")),
  },
  {
    event: "turn.finish.before",
    target: "response",
    shape: "messageList",
    gated: false,
    permission: false,
    returnShape: null,
    original: (event) => editable(field(event, "items")),
  },
  {
    event: "model.request.before",
    target: "request",
    shape: "messageList",
    gated: true,
    permission: true,
    returnShape: "messageList",
    original: (event) => editable(field(event, "items")),
  },
  {
    event: "context.compact.before",
    target: "instructions",
    shape: "textPartList",
    gated: true,
    permission: true,
    returnShape: "textPartList",
    original: (event) => editable(field(event, "instructions") ?? []),
  },
  {
    event: "context.compact.after",
    target: "summary",
    shape: "textPartList",
    gated: false,
    permission: false,
    returnShape: null,
    original: (event) => editable(field(event, "summary")),
  },
  {
    event: "user.message.outbound",
    target: "content",
    shape: "assistantMessageList",
    gated: true,
    permission: true,
    returnShape: null,
    original: (event) => editable(field(event, "message", "messages")),
  },
  {
    event: "user.elicitation.result",
    target: "content",
    shape: "answerContent",
    gated: false,
    permission: false,
    returnShape: null,
    original: elicitationAnswer,
  },
  {
    event: "workspace.change.before",
    target: "workspace",
    shape: "workspaceChange",
    gated: true,
    permission: true,
    returnShape: null,
    original: (event) => editable(field(event, "workspace", "change")),
  },
];

const BY_EVENT = new Map(
  BOUNDARIES.map((boundary) => [boundary.event, boundary]),
);

export function boundaryFor(eventType: unknown): Boundary | undefined {
  return typeof eventType === "string" ? BY_EVENT.get(eventType) : undefined;
}
