// Builders for the elicitation suite's tests: request and result events,
// intercept requests, replies, upload and send steps, and the summaries the
// receiver records (docs/ELICITATION.md, "The receiver").

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Json, JsonObject } from "../sdk/json.js";
import { SCHEMA_DIR } from "./processes.js";

export const SOURCE = "urn:ahp-ts:elicitation";
export const SERVER = "ts-travel-desk";
export const AUTH_SOURCE = "authenticated:ts-sender";
export const TIME = "2026-05-19T14:05:00Z";

/** The form the requests ask for. */
export const FORM: JsonObject = {
  type: "object",
  properties: {
    day: { type: "string", enum: ["monday", "tuesday"] },
    seats: { type: "integer", minimum: 1, maximum: 4 },
    contact: { type: "string", format: "email" },
  },
  required: ["day"],
};

export const formParams = (schema: JsonObject = FORM): JsonObject => ({
  mode: "form",
  message: "Which day should the shuttle come?",
  requestedSchema: schema,
});

export const URL_PARAMS: JsonObject = {
  mode: "url",
  message: "Sign in to the desk.",
  elicitationId: "ts-sign-in",
  url: "https://desk.example/sign-in",
};

/** A body-selected text part holding `body` (serialized unless already text). */
export const bodyPart = (id: string, body: Json | string): JsonObject => ({
  id,
  kind: "text",
  mediaType: "text/plain",
  selection: "body",
  text: typeof body === "string" ? body : JSON.stringify(body),
});

export const withheldPart = (
  id: string,
  selection: "metadata" | "omit",
): JsonObject => ({ id, kind: "text", mediaType: "text/plain", selection });

export const gapPart = (id: string): JsonObject => ({
  id,
  kind: "text",
  mediaType: "text/plain",
  selection: "body",
  gap: { reason: "not captured" },
});

export const attachmentItem = (id: string, ref: string): JsonObject => ({
  id,
  kind: "attachment",
  mediaType: "image/png",
  selection: "body",
  body: { ref },
});

export interface EventOptions {
  readonly session?: string | null;
  readonly source?: string;
  readonly server?: string;
  readonly mode?: string;
  /** The event's part; null leaves it out. */
  readonly part?: JsonObject | null;
  readonly items?: JsonObject[];
}

/** A `user.elicitation.request` event (form mode, the FORM body, by default). */
export function requestEvent(
  id: string,
  session: string,
  options: EventOptions = {},
): JsonObject {
  const part =
    options.part === undefined
      ? bodyPart(`${id}-body`, formParams())
      : options.part;
  return {
    id,
    source: options.source ?? SOURCE,
    type: "user.elicitation.request",
    time: TIME,
    ...(options.session === null
      ? {}
      : { session: { id: options.session ?? session } }),
    ...(options.items === undefined ? {} : { items: options.items }),
    elicitation: {
      server: options.server ?? SERVER,
      mode: options.mode ?? "form",
      ...(part === null ? {} : { request: part }),
    },
  };
}

/** A `user.elicitation.result` event answering `parent` with `result` (a body part by default). */
export function resultEvent(
  id: string,
  parent: string,
  session: string,
  result: JsonObject,
  options: EventOptions & { readonly action?: string } = {},
): JsonObject {
  const part =
    options.part === undefined ? bodyPart(`${id}-body`, result) : options.part;
  return {
    id,
    source: options.source ?? SOURCE,
    type: "user.elicitation.result",
    time: TIME,
    ...(options.session === null
      ? {}
      : { session: { id: options.session ?? session } }),
    parentEventId: parent,
    elicitation: {
      server: options.server ?? SERVER,
      mode: options.mode ?? "form",
      action: options.action ?? (result["action"] as string),
      ...(part === null ? {} : { result: part }),
    },
  };
}

export const REQUEST_CAPS: JsonObject = {
  effects: ["deny", "return", "message"],
};
export const RESULT_CAPS: JsonObject = {
  effects: ["modify", "message"],
  modify: { content: { replace: true, merge: true } },
};

/** The `hooks/intercept` request of `event` (its id is the event's). */
export function intercept(
  event: JsonObject,
  capabilities: JsonObject = { effects: [] },
): JsonObject {
  return {
    jsonrpc: "2.0",
    id: event["id"] as string,
    method: "hooks/intercept",
    params: { protocolVersion: "draft", event, capabilities },
  };
}

/** A success reply to `id` with `effects`. */
export const reply = (id: string, effects: Json[]): JsonObject => ({
  jsonrpc: "2.0",
  id,
  result: { protocolVersion: "draft", effects },
});

export const noEffect = (id: Json): JsonObject => reply(id as string, []);

export const send = (message: JsonObject): JsonObject => ({
  op: "send",
  message,
});

export const sha = (bytes: Buffer): string =>
  createHash("sha256").update(bytes).digest("hex");

export const upload = (
  alias: string,
  text: string,
  credential: "upload" | "unauthorized" | "none" = "upload",
  sha256?: string,
): JsonObject => ({
  op: "upload",
  alias,
  bodyBase64: Buffer.from(text).toString("base64"),
  credential,
  ...(sha256 === undefined ? {} : { sha256 }),
});

const PROVENANCE: JsonObject = {
  kind: "mcp",
  authenticatedSource: AUTH_SOURCE,
};

/** The summary of an accepted request event. */
export const requestSummary = (
  params: JsonObject | null,
  selection?: string,
) =>
  params === null
    ? { selection: selection ?? "metadata" }
    : { request: params };

/** The summary of an accepted result event, both parts body-selected. */
export const resultSummary = (
  params: JsonObject,
  result: JsonObject,
): JsonObject => ({
  request: params,
  result,
  provenance: PROVENANCE,
  externalCompletion: false,
});

/** The summary of an accepted result event where a part carries no body. */
export const withheldSummary = (
  request: string,
  result: string,
): JsonObject => ({
  selection: { request, result },
  bodyValidation: "not-selected",
  provenance: PROVENANCE,
  externalCompletion: false,
});

/** Every canonical schema document, parsed. */
export function schemaDocuments(): JsonObject[] {
  return readdirSync(SCHEMA_DIR)
    .filter((name) => name.endsWith(".schema.json"))
    .map(
      (name) =>
        JSON.parse(readFileSync(join(SCHEMA_DIR, name), "utf8")) as JsonObject,
    );
}
