// Context compaction on the host's side (docs/COMPACTION.md), without any
// contract knowledge: the synthetic compactor's summary, the
// `context.compact.after` request derived from a settled before boundary,
// a boundary's event with its modify target set to an effective value,
// and whether a message's text parts carry a `body`.

import {
  cloneJson,
  hasKey,
  isObject,
  type Json,
  type JsonObject,
} from "./json.js";

/** How the compaction's summary came to be. */
export type Provenance =
  | { readonly kind: "supplied"; readonly supplier: string | null }
  | { readonly kind: "generated" };

/** What the host did with the compaction. */
export type Execution =
  | { readonly status: "executed" }
  | { readonly status: "skipped"; readonly reason: "supplied_result" };

/** The texts of a text-part list's parts, in order (parts without text skipped). */
function texts(parts: Json | undefined): string[] {
  if (!Array.isArray(parts)) return [];
  const found: string[] = [];
  for (const part of parts)
    if (isObject(part) && typeof part["text"] === "string")
      found.push(part["text"]);
  return found;
}

/**
 * The synthetic compactor's summary: one inline text part
 * `"Summary of N items."`, followed by `" Instructions: "` and the settled
 * instructions' texts joined by a space when they have any text.
 */
export function syntheticSummary(
  rowId: string,
  itemCount: number,
  instructions: Json | undefined,
): JsonObject[] {
  const joined = texts(instructions).join(" ");
  const text =
    `Summary of ${itemCount} items.` +
    (joined.length > 0 ? ` Instructions: ${joined}` : "");
  return [
    {
      id: `${rowId}:summary`,
      kind: "text",
      mediaType: "text/plain",
      selection: "body",
      text,
    },
  ];
}

/** The capabilities of the after boundary: summary replace only, or nothing. */
export function afterCapabilities(observeOnly: boolean): JsonObject {
  return observeOnly
    ? { effects: [] }
    : {
        effects: ["modify"],
        modify: { summary: { replace: true, merge: false } },
      };
}

/**
 * The `context.compact.after` intercept request of a compaction whose
 * before event is `before`: id `<rowId>:after`, the before event's source,
 * time and session, the summary, the removed items' ids, the execution.
 */
export function afterRequest(
  rowId: string,
  before: JsonObject,
  summary: Json,
  execution: Execution,
  observeOnly: boolean,
  protocolVersion: Json = "draft",
): JsonObject {
  const id = `${rowId}:after`;
  const event: JsonObject = { id };
  for (const key of ["source", "time", "session"])
    if (hasKey(before, key)) event[key] = cloneJson(before[key] ?? null);
  event["type"] = "context.compact.after";
  event["parentEventId"] = before["id"] ?? null;
  event["summary"] = cloneJson(summary);
  const items = Array.isArray(before["items"]) ? before["items"] : [];
  event["removed"] = items.map((item) => ({
    id: isObject(item) ? (item["id"] ?? null) : null,
  }));
  event["execution"] = { ...execution };
  return {
    jsonrpc: "2.0",
    id,
    method: "hooks/intercept",
    params: {
      protocolVersion,
      event,
      capabilities: afterCapabilities(observeOnly),
    },
  };
}

/**
 * A copy of `event` with its modify target `field` set to `value`. Absent
 * `instructions` stay absent while the value is the empty list they mean.
 */
export function withTarget(
  event: JsonObject,
  field: string,
  value: Json,
): JsonObject {
  const copy = cloneJson(event);
  if (
    !hasKey(event, field) &&
    field === "instructions" &&
    Array.isArray(value) &&
    value.length === 0
  )
    return copy;
  copy[field] = cloneJson(value);
  return copy;
}

/** Whether any text part (`kind: "text"`) anywhere in `value` carries a `body`. */
export function textPartWithBody(value: Json | undefined): boolean {
  if (Array.isArray(value)) return value.some(textPartWithBody);
  if (!isObject(value)) return false;
  if (value["kind"] === "text" && hasKey(value, "body")) return true;
  return Object.values(value).some(textPartWithBody);
}
