// Strict JSON value helpers shared by the engine, the client and the server.

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
