// Observation and content references: the `hooks/observe` notification of a
// settled boundary, a subscription's projection of the event's items, and
// the attachment body references an event carries (`items[].body.ref`, and
// `items[].parts[].body.ref` of message items).

import { cloneJson, isObject, type Json, type JsonObject } from "./json.js";

/** How much of the event's content a subscription receives. */
export type ContentProjection = "metadata" | "omit";

/** A subscription's view of the event's items: `metadata` as they are, `omit` none. */
export function projectItems(
  items: Json | undefined,
  projection: ContentProjection,
): Json[] {
  if (projection === "omit" || !Array.isArray(items)) return [];
  return cloneJson(items);
}

/**
 * The `hooks/observe` notification for an intercept request's event after
 * settlement: the event with `tool.input` set to the settled input (when the
 * event has a tool) and, when given, `items` replaced. A notification has no
 * id and no capabilities or state.
 */
export function observeNotification(
  request: JsonObject,
  settledInput: Json | undefined,
  items?: Json[],
): JsonObject {
  const params = isObject(request["params"]) ? request["params"] : {};
  const event = cloneJson(isObject(params["event"]) ? params["event"] : {});
  const tool = event["tool"];
  if (settledInput !== undefined && isObject(tool))
    tool["input"] = cloneJson(settledInput);
  if (items !== undefined) event["items"] = cloneJson(items);
  return {
    jsonrpc: "2.0",
    method: "hooks/observe",
    params: { protocolVersion: params["protocolVersion"] ?? "draft", event },
  };
}

/** The event of a `hooks/intercept` or `hooks/observe` message, if any. */
export function eventOf(message: Json): JsonObject | null {
  if (!isObject(message)) return null;
  const params = message["params"];
  const event = isObject(params) ? params["event"] : undefined;
  return isObject(event) ? event : null;
}

/** The event id of a message, or "" when it has none. */
export function eventIdOf(message: Json): string {
  const id = eventOf(message)?.["id"];
  return typeof id === "string" ? id : "";
}

/**
 * Every body ref of a message's event items, in order: `items[].body.ref` of
 * a part item and, for a message item, `items[].parts[].body.ref` of each of
 * its parts (docs/LIFECYCLE.md, docs/ELICITATION.md: every one must name
 * stored bytes).
 */
export function bodyRefs(message: Json): string[] {
  const items = eventOf(message)?.["items"];
  if (!Array.isArray(items)) return [];
  const refs: string[] = [];
  const collect = (part: Json): void => {
    const body = isObject(part) ? part["body"] : undefined;
    if (isObject(body) && typeof body["ref"] === "string")
      refs.push(body["ref"]);
  };
  for (const item of items) {
    collect(item);
    const parts = isObject(item) ? item["parts"] : undefined;
    if (Array.isArray(parts)) for (const part of parts) collect(part);
  }
  return refs;
}

/**
 * `value` with every body reference (`{..., body: {ref}}` at any depth) that
 * `refs` maps replaced by its target; the rest unchanged (a copy).
 */
export function rebindBodyRefs(
  value: Json,
  refs: ReadonlyMap<string, string>,
): Json {
  if (Array.isArray(value))
    return value.map((item) => rebindBodyRefs(item, refs));
  if (!isObject(value)) return value;
  const copy: JsonObject = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = rebindBodyRefs(item, refs);
  const body = copy["body"];
  if (isObject(body) && typeof body["ref"] === "string") {
    const target = refs.get(body["ref"]);
    if (target !== undefined) copy["body"] = { ...body, ref: target };
  }
  return copy;
}
