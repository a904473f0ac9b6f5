// JSON-RPC wire codec: strict UTF-8 decoding, strict JSON parsing, compact
// encoding, error replies.

import {
  JsonSyntaxError,
  parseStrictJson,
  type Json,
  type JsonObject,
} from "./json.js";

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

/** Parses strict JSON (see parseStrictJson); a malformed text is a CodecError. */
export function parseJson(text: string): Json {
  try {
    return parseStrictJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      throw new CodecError(`malformed JSON: ${error.message}`);
    throw error;
  }
}

/** One wire message: strict UTF-8, then strict JSON. */
export function decodeJson(bytes: Uint8Array): Json {
  return parseJson(decodeUtf8(bytes));
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

const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes canonical base64 (RFC 4648, padded, no whitespace); null when it is not base64. */
export function decodeBase64(text: string): Buffer | null {
  return BASE64.test(text) ? Buffer.from(text, "base64") : null;
}
