// Content-model checks the engine needs beyond the canonical schema: value
// shapes per boundary and withheld-content detection. Schema checks of
// messages and parts are injected (see schemas.ts), so this module has no I/O.

import { isObject, type Json, type JsonObject } from "./json.js";

/** Validators for the content model, backed by the canonical schemas. */
export interface ContentValidators {
  /** A canonical message list: an array of `message` objects. */
  messageList(value: unknown): boolean;
  /** A text-part list: an array of canonical parts whose `kind` is `text`. */
  textPartList(value: unknown): boolean;
}

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

/** An elicitation answer: a flat object of strings, numbers, booleans or string arrays. */
export function isFlatAnswer(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  return Object.values(value).every(
    (entry) =>
      typeof entry === "string" ||
      typeof entry === "number" ||
      typeof entry === "boolean" ||
      (Array.isArray(entry) && entry.every((item) => typeof item === "string")),
  );
}

const WORKSPACE_KEYS = new Set(["cwd", "workspaceRoots"]);

/** A workspace change: at least one of `cwd`, `workspaceRoots`, and nothing else. */
export function isWorkspaceChange(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length === 0 || keys.some((key) => !WORKSPACE_KEYS.has(key)))
    return false;
  const cwd = value["cwd"];
  const roots = value["workspaceRoots"];
  if (cwd !== undefined && typeof cwd !== "string") return false;
  if (
    roots !== undefined &&
    !(Array.isArray(roots) && roots.every((root) => typeof root === "string"))
  ) {
    return false;
  }
  return true;
}
