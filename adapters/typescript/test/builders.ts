// Small wire builders for focused engine tests.

import type { Json, JsonObject } from "../sdk/json.js";

/** A content part; `extra` adds the body, gap or other fields. */
export const part = (
  id: string,
  selection: string,
  extra: JsonObject = {},
  kind = "text",
  mediaType = "text/plain",
): JsonObject => ({ id, kind, mediaType, selection, ...extra });
export const text = (id: string, body: string): JsonObject =>
  part(id, "body", { text: body });
export const metadataPart = (id: string): JsonObject => part(id, "metadata");
export const gapPart = (id: string): JsonObject =>
  part(id, "body", { gap: { reason: "unavailable" } });
export const attachment = (id: string): JsonObject =>
  part(id, "body", { body: { ref: "blob-1" } }, "attachment", "image/png");
export const message = (
  id: string,
  role: string,
  ...parts: JsonObject[]
): JsonObject => ({ id, role, parts });
export const say = (id: string, role: string, body: string): JsonObject =>
  message(id, role, text(`${id}-t`, body));

/** A full event: envelope fields plus the given payload (which includes `type`). */
export function event(id: string, payload: JsonObject): JsonObject {
  return {
    id,
    source: "urn:ahp-ts:test",
    time: "2026-01-01T00:00:00Z",
    session: { id: "s-1" },
    ...payload,
  };
}

export const toolBefore = (input: Json, name = "search"): JsonObject => ({
  type: "tool.before",
  call: { id: "call-1" },
  path: "native",
  tool: { name, origin: "native", input },
});

export const toolAfter = (items: Json[]): JsonObject => ({
  type: "tool.after",
  call: { id: "call-1" },
  path: "native",
  tool: { name: "search", origin: "native", input: {} },
  outcome: "ok",
  execution: { status: "executed" },
  items,
});

export const turnFinish = (items: Json[]): JsonObject => ({
  type: "turn.finish.before",
  turn: { id: "turn-1" },
  outcome: "completed",
  continuationCount: 0,
  items,
});

export const modelRequest = (items: Json[]): JsonObject => ({
  type: "model.request.before",
  model: { id: "m", provider: "p" },
  attempt: { id: "a-1", number: 1 },
  params: {},
  items,
});

export const compactBefore = (instructions?: Json[]): JsonObject => ({
  type: "context.compact.before",
  trigger: "auto",
  items: [],
  ...(instructions === undefined ? {} : { instructions }),
});

export const compactAfter = (summary: Json[]): JsonObject => ({
  type: "context.compact.after",
  summary,
  removed: [{ id: "old-1" }],
  execution: { status: "executed" },
});

export const outbound = (messages: Json[]): JsonObject => ({
  type: "user.message.outbound",
  message: { channel: "chat", messages },
});

export function elicitationResult(
  mode: string,
  action: string,
  result: JsonObject | null,
): JsonObject {
  return {
    type: "user.elicitation.result",
    parentEventId: "elicit-1",
    elicitation: {
      server: "calendar",
      mode,
      action,
      ...(result === null ? {} : { result }),
    },
  };
}

export const answerPart = (answer: Json, selection = "body"): JsonObject =>
  selection === "body"
    ? text("answer-part", JSON.stringify(answer))
    : part("answer-part", selection);

export const workspaceBefore = (change: JsonObject): JsonObject => ({
  type: "workspace.change.before",
  workspace: { kind: "cwd", change },
});

export function capabilities(
  effects: string[],
  extra: JsonObject = {},
): JsonObject {
  return { effects, ...extra };
}

export const modifyCaps = (
  target: string,
  replace = true,
  merge = true,
): JsonObject => ({ [target]: { replace, merge } });

export function request(
  id: string,
  payload: JsonObject,
  caps: JsonObject,
  state?: JsonObject,
): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    method: "hooks/intercept",
    params: {
      protocolVersion: "draft",
      event: event(id, payload),
      capabilities: caps,
      ...(state === undefined ? {} : { state }),
    },
  };
}

/** A `modify` effect. */
export const modify = (
  target: string,
  operation: string,
  value: Json,
): JsonObject => ({ type: "modify", target, operation, value });

export function success(id: Json, effects: Json): JsonObject {
  return { jsonrpc: "2.0", id, result: { protocolVersion: "draft", effects } };
}
