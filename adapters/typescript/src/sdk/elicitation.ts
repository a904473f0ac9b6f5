// Elicitation over AHP (docs/ELICITATION.md): an MCP `elicitation/create`
// request and its `ElicitResult`, carried as two events whose `request` /
// `result` part is one text part holding the serialized MCP body. No I/O:
// the schema documents and the canonical checks are handed in.
//
// The receiver (a hook backend) validates complete events itself: the
// canonical envelope, the MCP body inside the text part, the form schema
// the request asked for, the correlation of a result to its live request,
// and content references against its store. The host judges a backend's
// replies at both boundaries: `deny` and a supplied result at the request,
// a `modify` of the answer's `content` at the result (the core engine's
// rules), each value checked against the MCP definition and the requested
// form schema before anything is published.

import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import { applyResponse, type EngineDeps } from "./engine.js";
import { EffectError, readEffect, type Effect } from "./effects.js";
import {
  cloneJson,
  hasKey,
  isObject,
  JsonSyntaxError,
  parseStrictJson,
  type Json,
  type JsonObject,
} from "./json.js";
import { bodyRefs, eventOf } from "./observe.js";

const require = createRequire(import.meta.url);

/** Returns null when the value is valid, else a short description of the first error. */
export type Check = (value: unknown) => string | null;

export const REQUEST_EVENT = "user.elicitation.request";
export const RESULT_EVENT = "user.elicitation.result";

const MCP_SCHEMA =
  "https://interop.ahp.test/schemas/draft/mcp-elicitation.schema.json";

interface Validate {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

type AjvInstance = InstanceType<typeof import("ajv/dist/2020.js").default>;

function newAjv(options: Record<string, unknown>): AjvInstance {
  const Ajv2020 = (
    require("ajv/dist/2020") as typeof import("ajv/dist/2020.js")
  ).default;
  return new Ajv2020({ strict: false, allErrors: false, ...options });
}

function checkOf(validate: Validate): Check {
  return (value) => {
    if (validate(value)) return null;
    const first = validate.errors?.[0];
    return first === undefined
      ? "invalid"
      : `${first.instancePath || "/"} ${first.message ?? "is invalid"}`;
  };
}

// ---------------------------------------------------------------- the MCP definitions

/** The pinned MCP definitions (`mcp-elicitation.schema.json`). */
export interface McpChecks {
  /** `#/$defs/requestParams`: the `elicitation/create` params. */
  readonly requestParams: Check;
  /** `#/$defs/result`: an `ElicitResult`. */
  readonly result: Check;
}

/**
 * The MCP definitions compiled from the canonical schema documents (every
 * `*.schema.json` of the schema directory, parsed): Draft 2020-12, formats
 * `uri` and `date-time` asserted as in the rest of the canonical set.
 */
export function mcpChecks(documents: readonly JsonObject[]): McpChecks {
  const ajv = newAjv({ unicodeRegExp: true });
  const addFormats = (require("ajv-formats") as typeof import("ajv-formats"))
    .default;
  addFormats(ajv, ["uri", "date-time"]);
  for (const document of documents) ajv.addSchema(document);
  const compiled = (definition: string): Check => {
    const validate = ajv.getSchema(`${MCP_SCHEMA}#/$defs/${definition}`);
    if (validate === undefined)
      throw new Error(`no ${definition} in mcp-elicitation.schema.json`);
    return checkOf(validate);
  };
  return {
    requestParams: compiled("requestParams"),
    result: compiled("result"),
  };
}

// ---------------------------------------------------------------- requested form schemas

/** JSON with object keys sorted: one text per distinct value. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key] ?? null)}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/**
 * The form schemas requests ask for, each compiled once (by its content):
 * Draft 2020-12, formats are annotations (never asserted), no default is
 * filled in. A top-level `$schema` is dropped: the schema is applied as
 * Draft 2020-12 whatever it names.
 */
export class FormSchemas {
  private readonly ajv = newAjv({
    validateFormats: false,
    useDefaults: false,
    addUsedSchema: false,
  });
  private readonly compiled = new Map<string, Check | string>();

  /** How many distinct schemas were compiled so far. */
  get size(): number {
    return this.compiled.size;
  }

  /** The check of `schema`, or why it is not a usable JSON Schema. */
  check(schema: JsonObject): Check | string {
    const key = canonical(schema);
    const known = this.compiled.get(key);
    if (known !== undefined) return known;
    const copy = cloneJson(schema);
    delete copy["$schema"];
    let made: Check | string;
    try {
      made = checkOf(this.ajv.compile(copy));
    } catch (error) {
      made = `requestedSchema is not a usable JSON Schema: ${(error as Error).message}`;
    }
    this.compiled.set(key, made);
    return made;
  }
}

/** A submitted form's content (absent: `{}`) against the requested schema's check. */
export function formProblem(
  form: Check,
  content: Json | undefined,
): string | null {
  const problem = form(content === undefined ? {} : content);
  return problem === null
    ? null
    : `content fails the requested schema: ${problem}`;
}

// ---------------------------------------------------------------- bodies

/** The MCP body in a text part: one strict JSON object, or why not. */
export function parseBody(text: Json | undefined): JsonObject | string {
  if (typeof text !== "string") return "the body-selected part has no text";
  let value: Json;
  try {
    value = parseStrictJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      return `the text is not strict JSON: ${error.message}`;
    throw error;
  }
  return isObject(value) ? value : "the text is not a JSON object";
}

/** The mode an MCP request body states (`form` when absent). */
export function bodyMode(params: JsonObject): Json {
  return hasKey(params, "mode") ? (params["mode"] ?? null) : "form";
}

function field(value: Json | undefined, key: string): Json | undefined {
  return isObject(value) ? value[key] : undefined;
}

/** The part of an elicitation event (`request` or `result`). */
function partOf(
  event: JsonObject,
  name: "request" | "result",
): Json | undefined {
  return field(event["elicitation"], name);
}

// ---------------------------------------------------------------- the receiver

/** What the receiver needs: the canonical checks, its store, the authenticated sender. */
export interface ReceiverDeps {
  /** The canonical `intercept-request` check of a whole message. */
  readonly request: Check;
  readonly mcp: McpChecks;
  readonly forms: FormSchemas;
  /** Whether the receiver stored bytes under `ref` (uploaded with the accepted token). */
  readonly stored: (ref: string) => boolean;
  /** Who the receiver's authentication says the sender is. */
  readonly authenticatedSource: string;
}

/** A request accepted and not yet answered. */
interface LiveRequest {
  readonly source: Json | undefined;
  readonly server: Json | undefined;
  readonly mode: Json | undefined;
  readonly selection: Json | undefined;
  /** The parsed params of a body-selected request, else null. */
  readonly params: JsonObject | null;
  /** The requested form schema's check of a form body, else null. */
  readonly form: Check | null;
}

export type Verdict =
  | {
      readonly accepted: true;
      readonly eventId: string;
      readonly type: string;
      readonly summary: JsonObject;
    }
  | {
      readonly accepted: false;
      /** 400, or 409 for content the receiver does not have. */
      readonly status: 400 | 409;
      readonly reason: string;
    };

function refused(reason: string, status: 400 | 409 = 400): Verdict {
  return { accepted: false, status, reason };
}

/**
 * The receiver's checks, in the contract's order, and its correlation
 * state: the live requests by session id, then event id. A refused message
 * changes nothing; an accepted request becomes live, an accepted result
 * answers its request (which stops being live).
 */
export class ElicitationReceiver {
  private readonly live = new Map<string, Map<string, LiveRequest>>();

  constructor(private readonly deps: ReceiverDeps) {}

  /** How many requests are live (all sessions). */
  get liveCount(): number {
    let count = 0;
    for (const session of this.live.values()) count += session.size;
    return count;
  }

  /** Judges one `hooks/intercept` message; on acceptance, updates the state. */
  receive(message: Json): Verdict {
    // 1. the canonical envelope, and an elicitation event
    const invalid = this.deps.request(message);
    if (invalid !== null)
      return refused(`invalid intercept request: ${invalid}`);
    const event = eventOf(message) as JsonObject;
    const type = event["type"];
    if (type !== REQUEST_EVENT && type !== RESULT_EVENT)
      return refused(
        `event type ${JSON.stringify(type)} is not an elicitation event`,
      );
    // 2. content references
    const missing = bodyRefs(message).filter((ref) => !this.deps.stored(ref));
    if (missing.length > 0)
      return refused(`body refs never uploaded: ${missing.join(", ")}`, 409);
    // 3. a session, the event's part, no selected gap
    const sessionId = field(event["session"], "id");
    if (typeof sessionId !== "string" || sessionId.length === 0)
      return refused("the event carries no session.id");
    const name = type === REQUEST_EVENT ? "request" : "result";
    // An absent part is the omit selection (interaction-payloads.md, "MCP
    // elicitation binding": "Omission has no part").
    const elicitation = event["elicitation"];
    const part: Json | undefined =
      isObject(elicitation) && !hasKey(elicitation, name)
        ? { selection: "omit" }
        : partOf(event, name);
    if (!isObject(part)) return refused(`elicitation.${name} is not a part`);
    if (part["selection"] === "body" && hasKey(part, "gap"))
      return refused(
        `elicitation.${name} is body-selected with a gap: the body cannot be validated`,
      );
    const eventId = event["id"] as string;
    return type === REQUEST_EVENT
      ? this.request(event, eventId, sessionId, part)
      : this.result(event, eventId, sessionId, part);
  }

  private isLive(eventId: string): boolean {
    for (const session of this.live.values())
      if (session.has(eventId)) return true;
    return false;
  }

  // 4. a request event
  private request(
    event: JsonObject,
    eventId: string,
    sessionId: string,
    part: JsonObject,
  ): Verdict {
    if (this.isLive(eventId))
      return refused(`request ${eventId} is already live`);
    const elicitation = event["elicitation"] as JsonObject;
    let params: JsonObject | null = null;
    let form: Check | null = null;
    if (part["selection"] === "body") {
      const body = parseBody(part["text"]);
      if (typeof body === "string") return refused(`request body: ${body}`);
      const problem = this.deps.mcp.requestParams(body);
      if (problem !== null)
        return refused(`request body fails MCP requestParams: ${problem}`);
      const mode = bodyMode(body);
      if (mode !== elicitation["mode"])
        return refused(
          `request body mode ${JSON.stringify(mode)} is not elicitation.mode ${JSON.stringify(elicitation["mode"] ?? null)}`,
        );
      if (mode === "form" && isObject(body["requestedSchema"])) {
        const check = this.deps.forms.check(body["requestedSchema"]);
        if (typeof check === "string") return refused(check);
        form = check;
      }
      params = body;
    }
    let session = this.live.get(sessionId);
    if (session === undefined) {
      session = new Map();
      this.live.set(sessionId, session);
    }
    session.set(eventId, {
      source: event["source"],
      server: elicitation["server"],
      mode: elicitation["mode"],
      selection: part["selection"],
      params,
      form,
    });
    return {
      accepted: true,
      eventId,
      type: REQUEST_EVENT,
      summary:
        params === null
          ? { selection: part["selection"] ?? null }
          : { request: cloneJson(params) },
    };
  }

  // 5. a result event
  private result(
    event: JsonObject,
    eventId: string,
    sessionId: string,
    part: JsonObject,
  ): Verdict {
    const parentId = event["parentEventId"];
    if (typeof parentId !== "string")
      return refused("a result event needs parentEventId");
    const session = this.live.get(sessionId);
    const parent = session?.get(parentId);
    if (session === undefined || parent === undefined)
      return refused(
        `parentEventId ${parentId} names no live request in session ${sessionId}`,
      );
    const elicitation = event["elicitation"] as JsonObject;
    const mismatch = (
      [
        ["source", event["source"], parent.source],
        ["elicitation.server", elicitation["server"], parent.server],
        ["elicitation.mode", elicitation["mode"], parent.mode],
      ] as const
    ).find(([, mine, theirs]) => mine !== theirs);
    if (mismatch !== undefined)
      return refused(`${mismatch[0]} differs from the request's`);
    let result: JsonObject | null = null;
    if (part["selection"] === "body") {
      const body = parseBody(part["text"]);
      if (typeof body === "string") return refused(`result body: ${body}`);
      const problem = this.deps.mcp.result(body);
      if (problem !== null)
        return refused(`result body fails MCP result: ${problem}`);
      const action = body["action"];
      if (action !== elicitation["action"])
        return refused(
          `result action ${JSON.stringify(action ?? null)} is not elicitation.action`,
        );
      const submitsForm = action === "accept" && elicitation["mode"] === "form";
      if (!submitsForm && hasKey(body, "content"))
        return refused("only an accepted form result carries content");
      if (submitsForm && parent.form !== null) {
        const invalid = formProblem(parent.form, body["content"]);
        if (invalid !== null) return refused(invalid);
      }
      result = body;
    }
    session.delete(parentId);
    if (session.size === 0) this.live.delete(sessionId);
    const provenance = {
      kind: "mcp",
      authenticatedSource: this.deps.authenticatedSource,
    };
    const summary: JsonObject =
      parent.params !== null && result !== null
        ? {
            request: cloneJson(parent.params),
            result: cloneJson(result),
            provenance,
            externalCompletion: false,
          }
        : {
            selection: {
              request: parent.selection ?? null,
              result: part["selection"] ?? null,
            },
            bodyValidation: "not-selected",
            provenance,
            externalCompletion: false,
          };
    return { accepted: true, eventId, type: RESULT_EVENT, summary };
  }
}

/** The canonical no-effect reply to a request with `id`. */
export function noEffectReply(id: Json): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    result: { protocolVersion: "draft", effects: [] },
  };
}

// ---------------------------------------------------------------- the host

/** What the host's judgements need. */
export interface HostDeps {
  readonly engine: EngineDeps;
  readonly mcp: McpChecks;
  readonly forms: FormSchemas;
}

/** The host's view of an elicitation request event: its mode and requested form schema. */
export interface RequestView {
  readonly event: JsonObject;
  readonly mode: Json | undefined;
  /** The requested schema's check (a form body's), null when unknown or not a form. */
  readonly form: Check | null;
  /** Why the requested schema cannot be used, or null. */
  readonly formUnusable: string | null;
}

/** The request event of an intercept request, its mode and its requested form schema. */
export function requestView(
  request: JsonObject,
  forms: FormSchemas,
): RequestView {
  const event = eventOf(request) ?? {};
  const mode = field(event["elicitation"], "mode");
  const part = partOf(event, "request");
  let form: Check | null = null;
  let formUnusable: string | null = null;
  if (isObject(part) && part["selection"] === "body" && !hasKey(part, "gap")) {
    const body = parseBody(part["text"]);
    const schema =
      typeof body === "string" ? undefined : body["requestedSchema"];
    if (
      typeof body !== "string" &&
      bodyMode(body) === "form" &&
      isObject(schema)
    ) {
      const check = forms.check(schema);
      if (typeof check === "string") formUnusable = check;
      else form = check;
    }
  }
  return { event, mode, form, formUnusable };
}

/**
 * Why an MCP result cannot be the answer to `view`'s request: the MCP
 * definition, content only for an accepted form (and then valid against the
 * requested schema, absent content counting as `{}`); null when it can.
 */
export function resultProblem(
  value: Json,
  view: RequestView,
  mcp: McpChecks,
): string | null {
  const invalid = mcp.result(value);
  if (invalid !== null) return `fails MCP result: ${invalid}`;
  const result = value as JsonObject;
  const submitsForm = result["action"] === "accept" && view.mode === "form";
  if (!submitsForm)
    return hasKey(result, "content")
      ? "only an accepted form result carries content"
      : null;
  if (view.formUnusable !== null) return view.formUnusable;
  return view.form === null ? null : formProblem(view.form, result["content"]);
}

export type RequestJudgement =
  | { readonly request: "rejected"; readonly reason: string }
  | { readonly request: "denied" }
  | {
      readonly request: "allowed";
      /** The effective result: the last accepted `return` value, else the user's. */
      readonly result: JsonObject;
      readonly provenance: "user" | "hook";
    };

function idEqual(a: Json | undefined, b: Json | undefined): boolean {
  return (typeof a === "string" || typeof a === "number") && a === b;
}

function stringList(value: Json | undefined): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

/**
 * The request boundary: the reply to `request` judged whole (correlated id,
 * no error, a valid `intercept-response` with the request's
 * protocolVersion, every effect advertised, every `return` a valid answer to
 * the request); then a `deny` denies (the user is not asked), else the last
 * `return` is the effective result, else `userResult`. `message` effects
 * change nothing.
 */
export function judgeRequestReply(
  request: JsonObject,
  response: Json,
  userResult: JsonObject,
  deps: HostDeps,
): RequestJudgement {
  const reject = (reason: string): RequestJudgement => ({
    request: "rejected",
    reason,
  });
  if (!isObject(response)) return reject("the reply is not a JSON object");
  if (response["jsonrpc"] !== "2.0") return reject("jsonrpc is not 2.0");
  if (!idEqual(response["id"], request["id"]))
    return reject("the reply's id is not the request's");
  if (hasKey(response, "error")) return reject("the reply carries an error");
  const result = response["result"];
  if (!isObject(result)) return reject("result is not an object");
  const invalid = deps.engine.validateResponse(response);
  if (invalid !== null)
    return reject(`the reply fails intercept-response: ${invalid}`);
  const params = isObject(request["params"]) ? request["params"] : {};
  if (result["protocolVersion"] !== params["protocolVersion"])
    return reject("protocolVersion differs from the request's");
  const raw = result["effects"];
  if (!Array.isArray(raw)) return reject("effects is not a list");
  let effects: Effect[];
  try {
    effects = raw.map((effect, index) => readEffect(effect, index));
  } catch (error) {
    if (error instanceof EffectError) return reject(error.message);
    throw error;
  }
  const advertised = stringList(field(params["capabilities"], "effects"));
  const view = requestView(request, deps.forms);
  let denied = false;
  let returned: JsonObject | null = null;
  for (const effect of effects) {
    if (!advertised.includes(effect.type))
      return reject(`effect ${effect.type} is not advertised`);
    if (effect.type === "deny") denied = true;
    else if (effect.type === "return") {
      const problem = resultProblem(effect.value, view, deps.mcp);
      if (problem !== null) return reject(`the returned result ${problem}`);
      returned = cloneJson(effect.value as JsonObject);
    }
  }
  if (denied) return { request: "denied" };
  return returned === null
    ? { request: "allowed", result: cloneJson(userResult), provenance: "user" }
    : { request: "allowed", result: returned, provenance: "hook" };
}

/** The ids the result boundary's event uses. */
export interface ResultIds {
  /** The event id (and the JSON-RPC id). */
  readonly eventId: string;
  /** The id of its `result` text part. */
  readonly partId: string;
}

/**
 * The result boundary's intercept request: the `user.elicitation.result`
 * event answering `request`'s event (its source, time, session, server and
 * mode), carrying `effective` serialized in a body-selected text part.
 */
export function resultRequest(
  request: JsonObject,
  effective: JsonObject,
  ids: ResultIds,
  capabilities: Json,
): JsonObject {
  const event = eventOf(request) ?? {};
  const elicitation = isObject(event["elicitation"])
    ? event["elicitation"]
    : {};
  const resultEvent: JsonObject = {
    id: ids.eventId,
    source: event["source"] ?? null,
    time: event["time"] ?? null,
    ...(hasKey(event, "session")
      ? { session: cloneJson(event["session"] ?? null) }
      : {}),
    type: RESULT_EVENT,
    parentEventId: event["id"] ?? null,
    elicitation: {
      server: elicitation["server"] ?? null,
      mode: elicitation["mode"] ?? null,
      action: effective["action"] ?? null,
      result: {
        id: ids.partId,
        kind: "text",
        mediaType: "text/plain",
        selection: "body",
        text: JSON.stringify(effective),
      },
    },
  };
  return {
    jsonrpc: "2.0",
    id: ids.eventId,
    method: "hooks/intercept",
    params: {
      protocolVersion: "draft",
      event: resultEvent,
      capabilities: cloneJson(capabilities),
    },
  };
}

export type ResultJudgement =
  | { readonly result: "rejected"; readonly reason: string }
  | {
      readonly result: "accepted";
      /** The effective result with its `content` as edited. */
      readonly published: JsonObject;
      /** Whether an accepted `modify` edited the content. */
      readonly edited: boolean;
    };

/** Whether an (accepted) reply carries a `modify` effect. */
function modifies(response: Json): boolean {
  const effects = field(field(response, "result"), "effects");
  return (
    Array.isArray(effects) &&
    effects.some((effect) => field(effect, "type") === "modify")
  );
}

/**
 * The result boundary: the reply to `call` (the result request) judged by
 * the core rules at `user.elicitation.result`, then the effective content
 * checked against the requested schema of `view`'s request; any failure
 * rejects the whole reply.
 */
export function judgeResultReply(
  call: JsonObject,
  response: Json,
  effective: JsonObject,
  view: RequestView,
  deps: HostDeps,
): ResultJudgement {
  const outcome = applyResponse(call, response, deps.engine);
  if (outcome.status !== "applied")
    return { result: "rejected", reason: outcome.reason };
  const edited = modifies(response);
  const published = cloneJson(effective);
  if (edited) {
    const staged = field(outcome.actual["effective"], "content");
    published["content"] = cloneJson(staged ?? null);
  }
  if (published["action"] === "accept" && view.mode === "form") {
    if (view.formUnusable !== null)
      return { result: "rejected", reason: view.formUnusable };
    const problem =
      view.form === null ? null : formProblem(view.form, published["content"]);
    if (problem !== null) return { result: "rejected", reason: problem };
  }
  return { result: "accepted", published, edited };
}
