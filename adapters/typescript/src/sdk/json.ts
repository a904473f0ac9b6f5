// Strict JSON: the value model, a parser that refuses what JSON.parse lets
// through (duplicate object keys, nesting deeper than MAX_DEPTH), and the one
// equality helper shared by the engine, the client and the server.
//
// The parser is JSON.parse (it refuses NaN, trailing commas, ...) followed by
// a check of the structure. The check usually works on the parsed value with
// native searches (countedProblem: a scan of every character in JavaScript
// costs some 40 ms on a 700 KB scenario file before the JIT warms up); a text
// that spells a colon as an escape is scanned character by character
// instead (scannedProblem). Both are exact; the tests hold them equal.

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function hasKey(value: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(value, key);
}

/**
 * Deep equality under strict JSON typing: booleans are never numbers, arrays
 * compare in order and length, object key order is ignored, numbers compare by
 * value (JavaScript cannot tell `1` from `1.0`).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => jsonEqual(item, b[index]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => hasKey(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** A JSON number that is an integer by value and greater than zero; never a boolean. */
export function isPositiveInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}

/** A deep copy of a JSON value, so that published results never alias inputs. */
export function cloneJson<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** Containers nested deeper than this make a text malformed (`[]` is depth 1). */
export const MAX_DEPTH = 512;

/** A text that is not strict JSON. */
export class JsonSyntaxError extends Error {}

/** Keys an object may hold before its duplicate check switches from a scan to a Set. */
const SCANNED_KEYS = 16;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const ARRAY = -1;

/** The index of the quote that closes the string opened at `open`. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH)
      backslashes += 1;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Why a text that JSON.parse accepted is still malformed (a duplicate key, or
 * nesting deeper than MAX_DEPTH), or null, by scanning the text: exact for
 * any valid JSON. Only called on valid JSON, so the scan follows the
 * structure and skips every string that is not a key.
 */
export function scannedProblem(text: string): string | null {
  // The keys of every open object, innermost last; per open container, where
  // its keys start in `keys` (ARRAY for an array) and, once it has many, a Set.
  const keys: string[] = [];
  const starts: number[] = [];
  const sets: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = closingQuote(text, index);
      if (expectKey) {
        const raw = text.slice(index + 1, end);
        const key = raw.includes("\\")
          ? (JSON.parse(text.slice(index, end + 1)) as string)
          : raw;
        const top = starts.length - 1;
        const set = sets[top] ?? null;
        if (set !== null) {
          if (set.has(key)) return `duplicate key ${JSON.stringify(key)}`;
          set.add(key);
        } else {
          const start = starts[top] ?? 0;
          for (let at = start; at < keys.length; at += 1)
            if (keys[at] === key) return `duplicate key ${JSON.stringify(key)}`;
          if (keys.length - start === SCANNED_KEYS)
            sets[top] = new Set(keys.slice(start));
        }
        keys.push(key);
        expectKey = false;
      }
      index = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (starts.length === MAX_DEPTH)
        return `nested deeper than ${MAX_DEPTH} levels`;
      expectKey = code === OPEN_OBJECT;
      starts.push(expectKey ? keys.length : ARRAY);
      sets.push(null);
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      const start = starts.pop() ?? ARRAY;
      sets.pop();
      if (start !== ARRAY) keys.length = start;
      expectKey = false;
    } else if (code === COMMA) {
      expectKey = (starts[starts.length - 1] ?? ARRAY) !== ARRAY;
    }
  }
  return null;
}

/** How many times `:` occurs in `text`. */
function colonsIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1))
    count += 1;
  return count;
}

/**
 * The same question as scannedProblem, answered from the parsed value with
 * native string searches, for a text that spells no colon as an escape.
 *
 * Every object member of a valid text has exactly one `:` outside its string
 * literals, and nothing else outside them is a colon; a colon inside a
 * literal decodes to itself (the text has no `\u003a`). So the text's
 * members number its colons minus the colons in the parsed value's strings
 * (keys and values), and a duplicate key shows as more members than the
 * value has keys: the members JSON.parse dropped (an earlier key and its
 * value) only lower the colons counted in the value, never raise them. With
 * no duplicates the value mirrors the text, so its depth is the text's.
 * Undefined when the text spells a colon as an escape: use scannedProblem.
 */
export function countedProblem(text: string, value: Json): string | null {
  if (typeof value === "string") return null;
  let members = 0;
  let colonsInStrings = 0;
  // Containers still to look into, and their depth (the root is level 1).
  const pending: (Json[] | JsonObject)[] = [];
  const depths: number[] = [];
  if (typeof value === "object" && value !== null) {
    pending.push(value);
    depths.push(1);
  }
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const depth = depths.pop() as number;
    if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels`;
    const isArray = Array.isArray(item);
    const keys = isArray ? null : Object.keys(item);
    const size = keys === null ? (item as Json[]).length : keys.length;
    for (let index = 0; index < size; index += 1) {
      let child: Json;
      if (keys === null) {
        child = (item as Json[])[index] as Json;
      } else {
        const key = keys[index] as string;
        members += 1;
        if (key.includes(":")) colonsInStrings += colonsIn(key);
        child = (item as JsonObject)[key] as Json;
      }
      if (typeof child === "string") {
        if (child.includes(":")) colonsInStrings += colonsIn(child);
      } else if (typeof child === "object" && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return colonsIn(text) - colonsInStrings === members
    ? null
    : "a duplicate key";
}

/** A colon spelt as an escape, which would hide from countedProblem. */
const ESCAPED_COLON = /\\u003a/i;

/**
 * Parses JSON text strictly: anything JSON.parse refuses, a duplicate object
 * key (JSON.parse keeps the last one silently) or nesting deeper than
 * MAX_DEPTH throws JsonSyntaxError. Escaped lone surrogates are kept, as
 * JSON.parse keeps them.
 */
export function parseStrictJson(text: string): Json {
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (error) {
    throw new JsonSyntaxError((error as Error).message);
  }
  const problem = ESCAPED_COLON.test(text)
    ? scannedProblem(text)
    : countedProblem(text, value);
  if (problem !== null) throw new JsonSyntaxError(problem);
  return value;
}
