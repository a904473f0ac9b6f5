// Content-model checks the engine needs beyond the canonical schema of the
// response: the canonical definition of each modify slot, and withheld-content
// detection. The schema checks themselves are injected (see schemas.ts), so
// this module has no I/O and no hand-written copy of a schema.

import { isObject, type Json } from "./json.js";

/**
 * One validator per canonical definition a slot value is checked against
 * (docs/scenarios.md, "Composition rules", phase 1 item 4).
 */
export interface ContentValidators {
  /** `content-item.schema.json#/$defs/messages`: a canonical message list. */
  messageList(value: unknown): boolean;
  /** `interaction-event.schema.json#/$defs/assistantMessages`: a message list of role `assistant` only. */
  assistantMessageList(value: unknown): boolean;
  /** `content-item.schema.json#/$defs/textParts`: a list of canonical text parts. */
  textPartList(value: unknown): boolean;
  /** `common.schema.json#/$defs/workspaceChange`: `cwd` and/or `workspaceRoots`, nothing else. */
  workspaceChange(value: unknown): boolean;
  /** `mcp-elicitation.schema.json#/$defs/answerContent`: a flat form answer. */
  answerContent(value: unknown): boolean;
}

/** The schema-backed shapes, by the name of their validator. */
export type SchemaShape = keyof ContentValidators;

/** A part that does not carry its whole body: `omit`/`metadata` selection, or a gap. */
function isWithheldPart(part: unknown): boolean {
  if (!isObject(part)) return false;
  const selection = part["selection"];
  return (
    selection === "omit" ||
    selection === "metadata" ||
    part["gap"] !== undefined
  );
}

/** Whether a message list or a text-part list holds withheld content. */
export function holdsWithheldContent(list: Json): boolean {
  if (!Array.isArray(list)) return false;
  return list.some((item) => {
    if (isObject(item) && Array.isArray(item["parts"])) {
      return item["parts"].some(isWithheldPart);
    }
    return isWithheldPart(item);
  });
}
