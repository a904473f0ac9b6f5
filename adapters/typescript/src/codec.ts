// JSON-RPC wire codec: strict UTF-8 decoding, JSON parsing, compact encoding.

import type { Json, JsonObject } from "./json.js";

export class CodecError extends Error {}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes UTF-8 bytes; malformed sequences are an error, never replaced. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new CodecError("malformed UTF-8");
  }
}

export function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    throw new CodecError(`malformed JSON: ${(error as Error).message}`);
  }
}

/** Compact JSON: one line, no raw newline inside (JSON escapes them). */
export function encodeJson(value: Json): string {
  return JSON.stringify(value);
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export function errorResponse(
  id: Json,
  code: number,
  message: string,
): JsonObject {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** The request id when it is a valid JSON-RPC id, else null (for error replies). */
export function replyId(message: Json): Json {
  if (
    typeof message === "object" &&
    message !== null &&
    !Array.isArray(message)
  ) {
    const id = message["id"];
    if (typeof id === "string" || typeof id === "number") return id;
  }
  return null;
}
