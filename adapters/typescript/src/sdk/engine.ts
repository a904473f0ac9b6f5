// The composition engine: applies one intercept response to its request under
// the rules of docs/scenarios.md. No I/O. Phase 1 stages every effect and
// rejects the whole response on any failure; phase 2 publishes the staged
// outcome. Nothing is published from a rejected response.

import {
  boundaryFor,
  LIST_SHAPES,
  type Boundary,
  type ReturnShape,
  type ValueShape,
} from "./boundaries.js";
import { holdsWithheldContent, type ContentValidators } from "./content.js";
import { EffectError, readEffect, type Effect } from "./effects.js";
import { hostRuleViolation } from "./hostRules.js";
import {
  cloneJson,
  hasKey,
  isObject,
  jsonEqual,
  type Json,
  type JsonObject,
} from "./json.js";

/** A host's local rule on the staged effective value: why it fails, or null. */
export type HostRule = (event: JsonObject, staged: Json) => string | null;

export interface EngineDeps {
  /** Validates a whole JSON-RPC response against `intercept-response`; returns an error or null. */
  readonly validateResponse: (response: unknown) => string | null;
  readonly content: ContentValidators;
  /** The host's rule on the staged value; the synthetic host's `task` rule when absent. */
  readonly hostRule?: HostRule;
}

export type Outcome =
  | {
      readonly status: "applied";
      readonly actual: JsonObject;
      /**
       * The `params.state` the next interceptor of a serial chain receives:
       * the permission this response leaves (before `none` resolves), the
       * candidate that survives, and the flow outcome, if any.
       */
      readonly state: JsonObject;
    }
  | { readonly status: "rejected"; readonly reason: string }
  | { readonly status: "unsupported"; readonly reason: string };

/** Thrown inside the transaction; turns into a rejection of the whole response. */
class Rejection extends Error {}

function reject(reason: string): never {
  throw new Rejection(reason);
}

const PERMISSION_RANK: Readonly<Record<string, number>> = {
  none: 0,
  allow: 1,
  ask: 2,
  deny: 3,
};

function objectAt(value: Json | undefined): JsonObject {
  return isObject(value) ? value : {};
}

function stringsAt(value: Json | undefined): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

/** Rule 1: envelope and correlation. */
function checkEnvelope(request: JsonObject, response: Json): JsonObject {
  if (!isObject(response)) reject("response is not a JSON object");
  if (response["jsonrpc"] !== "2.0") reject("jsonrpc is not 2.0");
  if (!hasKey(response, "id") || !jsonIdEqual(response["id"], request["id"]))
    reject("response id differs from request id");
  if (hasKey(response, "error")) reject("response carries an error");
  const result = response["result"];
  if (!isObject(result)) reject("result is not an object");
  return result;
}

function jsonIdEqual(a: Json | undefined, b: Json | undefined): boolean {
  return (typeof a === "string" || typeof a === "number") && a === b;
}

/** Rule 3: the effect is advertised by the request's capabilities. */
function checkAdvertised(effect: Effect, capabilities: JsonObject): void {
  if (!stringsAt(capabilities["effects"]).includes(effect.type))
    reject(`effect ${effect.type} not advertised`);
  if (effect.type === "modify") {
    const grant = objectAt(objectAt(capabilities["modify"])[effect.target]);
    if (grant[effect.operation] !== true)
      reject(`modify ${effect.target}/${effect.operation} not advertised`);
  } else if (effect.type === "flow") {
    const operations = stringsAt(objectAt(capabilities["flow"])["operations"]);
    if (!operations.includes(effect.operation))
      reject(`flow ${effect.operation} not advertised`);
  } else if (effect.type === "inject") {
    const context = objectAt(objectAt(capabilities["inject"])["context"]);
    if (context["append"] !== true) reject("inject append not advertised");
    if (!stringsAt(context["deliverAt"]).includes(effect.deliverAt))
      reject(`inject ${effect.deliverAt} not advertised`);
  }
}

/**
 * Rule 4: whether `value` fits a slot's shape, judged by the canonical schema
 * definition the shape names (`object` and `any` for tool.before).
 */
function fits(
  shape: ValueShape | ReturnShape,
  value: Json,
  content: ContentValidators,
): boolean {
  if (shape === "any") return true;
  if (shape === "object") return isObject(value);
  return content[shape](value);
}

/**
 * Rule 4 plus application: the next effective value after one modification.
 * The supplied value and the staged result are both checked against the
 * slot's canonical definition.
 */
function applyModify(
  boundary: Boundary,
  current: Json,
  effect: Extract<Effect, { type: "modify" }>,
  content: ContentValidators,
): Json {
  const { operation, value } = effect;
  const { shape } = boundary;
  if (!fits(shape, value, content))
    reject(`modify value fails the ${shape} definition`);
  let next: Json;
  if (LIST_SHAPES.has(shape)) {
    if (!Array.isArray(value)) reject("modify value is not a list");
    if (operation === "replace") {
      if (holdsWithheldContent(current))
        reject("whole-list replace over withheld content");
      next = cloneJson(value);
    } else {
      if (!Array.isArray(current)) reject("merge target is not a list");
      next = [...current, ...cloneJson(value)];
    }
  } else {
    if (!isObject(value)) reject("modify value is not an object");
    if (operation === "replace") {
      next = cloneJson(value);
    } else {
      if (!isObject(current)) reject("merge target is not an object");
      next = { ...current, ...cloneJson(value) };
    }
  }
  if (!fits(shape, next, content))
    reject(`staged ${boundary.target} fails the ${shape} definition`);
  return next;
}

interface Staged {
  effective: Json;
  returned: { value: Json } | null;
  messages: string[];
  injections: JsonObject[];
  permissions: string[];
  stop: boolean;
  continues: number;
  instructions: string[];
}

/** Phase 1: read, check and stage every effect in response order. */
function stage(
  boundary: Boundary,
  event: JsonObject,
  capabilities: JsonObject,
  effects: Effect[],
  deps: EngineDeps,
): Staged {
  const original = boundary.original(event);
  const staged: Staged = {
    effective: cloneJson(original.value),
    returned: null,
    messages: [],
    injections: [],
    permissions: [],
    stop: false,
    continues: 0,
    instructions: [],
  };
  const flowCaps = objectAt(capabilities["flow"]);
  for (const effect of effects) {
    checkAdvertised(effect, capabilities);
    switch (effect.type) {
      case "deny":
      case "ask":
      case "allow":
        staged.permissions.push(effect.type);
        break;
      case "message":
        staged.messages.push(effect.text);
        break;
      case "modify":
        if (effect.target !== boundary.target)
          reject(
            `modify target ${effect.target} does not exist at ${boundary.event}`,
          );
        if (original.lockedBecause !== null) reject(original.lockedBecause);
        staged.effective = applyModify(
          boundary,
          staged.effective,
          effect,
          deps.content,
        );
        break;
      case "return":
        if (boundary.returnShape === null)
          reject(`return is not allowed at ${boundary.event}`);
        if (!fits(boundary.returnShape, effect.value, deps.content))
          reject(`return value fails the ${boundary.returnShape} definition`);
        staged.returned = { value: cloneJson(effect.value) };
        break;
      case "flow":
        if (effect.operation === "stop") {
          staged.stop = true;
        } else {
          const remaining = flowCaps["remainingContinuations"];
          if (typeof remaining !== "number" || remaining <= 0)
            reject("continue with no remaining continuations");
          staged.continues += 1;
          if (effect.instruction !== null)
            staged.instructions.push(effect.instruction);
        }
        break;
      case "inject":
        if (!deps.content.messageList(effect.value))
          reject("inject value is not a message list");
        staged.injections.push(cloneJson(effect.whole));
        break;
    }
  }
  const violation = (deps.hostRule ?? hostRuleViolation)(
    event,
    staged.effective,
  );
  if (violation !== null) reject(violation);
  return staged;
}

/** Phase 2: derive the published result from an accepted, staged response. */
function publish(
  boundary: Boundary,
  event: JsonObject,
  capabilities: JsonObject,
  state: JsonObject,
  staged: Staged,
): { actual: JsonObject; state: JsonObject } {
  // The incoming candidate and the incoming grant are judged on the final
  // staged value: a change restored exactly within the response keeps both.
  const unchanged = jsonEqual(staged.effective, boundary.original(event).value);

  // Permission: the strongest of the (possibly invalidated) incoming grant and
  // this response's effects, reported before the host resolves `none`.
  let permission: string | null = null;
  let decision = "allow";
  if (boundary.permission) {
    const stated = state["permission"];
    const incoming =
      typeof stated === "string" && hasKey(PERMISSION_RANK, stated)
        ? stated
        : "none";
    permission = [incoming, ...staged.permissions].reduce((best, next) =>
      (PERMISSION_RANK[next] ?? 0) > (PERMISSION_RANK[best] ?? 0) ? next : best,
    );
    // An allow, incoming or this response's, is for the original value.
    if (permission === "allow" && !unchanged) permission = "none";
    decision = permission === "none" ? "allow" : permission;
  }

  // Flow: stop wins. An incoming continue counts only where this request can
  // continue; it shares the response's one allowance.
  const flowCaps = objectAt(capabilities["flow"]);
  const canContinue = stringsAt(flowCaps["operations"]).includes("continue");
  const stop = staged.stop || state["flow"] === "stop";
  const proceed =
    staged.continues > 0 || (canContinue && state["flow"] === "continue");
  const flow = stop ? "stop" : proceed ? "continue" : null;

  let candidate: { value: Json } | null = null;
  if (boundary.returnShape !== null) {
    const incoming = state["candidate"];
    if (isObject(incoming) && hasKey(incoming, "value") && unchanged)
      candidate = { value: incoming["value"] ?? null };
    if (staged.returned !== null) candidate = staged.returned;
  }
  const supplied =
    candidate !== null && decision === "allow" && flow !== "stop";

  const actual: JsonObject = {
    decision,
    ...(permission === null ? {} : { permission }),
    executed:
      !supplied && boundary.gated && decision === "allow" && flow !== "stop",
    messages: staged.messages,
  };
  if (boundary.event === "tool.before") actual["input"] = staged.effective;
  actual["effective"] = { [boundary.target]: staged.effective };
  if (supplied && candidate !== null)
    actual["result"] = cloneJson(candidate.value);
  if (flow !== null) actual["flow"] = flow;
  if (staged.injections.length > 0) actual["injections"] = staged.injections;
  if (canContinue) {
    const remaining = flowCaps["remainingContinuations"];
    const available = typeof remaining === "number" ? remaining : 0;
    // This response's accepted continue instructions only (never `state.instructions`).
    actual["continuationInstructions"] = staged.instructions;
    actual["continuationRemaining"] =
      flow === "continue" ? available - 1 : available;
  }
  // What the next interceptor receives: where this boundary has no
  // permission semantics or no return, the incoming values pass through.
  const next: JsonObject = {
    permission:
      permission ??
      (typeof state["permission"] === "string" ? state["permission"] : "none"),
    candidate:
      boundary.returnShape === null
        ? cloneJson(state["candidate"] ?? null)
        : candidate === null
          ? null
          : { value: cloneJson(candidate.value) },
  };
  if (flow !== null) next["flow"] = flow;
  else if (typeof state["flow"] === "string") next["flow"] = state["flow"];
  return { actual, state: next };
}

/** Why the engine cannot apply responses to `request`'s event, or null when it can. */
export function unsupportedReason(request: JsonObject): string | null {
  const event = objectAt(objectAt(request["params"])["event"]);
  return boundaryFor(event["type"]) === undefined
    ? `event type ${JSON.stringify(event["type"])} is not implemented`
    : null;
}

/**
 * Applies `response` to `request` (a `hooks/intercept` JSON-RPC request).
 * Returns the derived result, a whole-response rejection, or `unsupported`
 * for an event type this engine does not implement.
 */
export function applyResponse(
  request: JsonObject,
  response: Json,
  deps: EngineDeps,
): Outcome {
  const params = objectAt(request["params"]);
  const event = objectAt(params["event"]);
  const boundary = boundaryFor(event["type"]);
  if (boundary === undefined)
    return { status: "unsupported", reason: unsupportedReason(request) ?? "" };
  try {
    const result = checkEnvelope(request, response);
    const schemaError = deps.validateResponse(response);
    if (schemaError !== null)
      reject(`response fails intercept-response schema: ${schemaError}`);
    if (result["protocolVersion"] !== params["protocolVersion"])
      reject("protocolVersion differs from the request");
    const rawEffects = result["effects"];
    if (!Array.isArray(rawEffects)) reject("effects is not an array");
    const effects = rawEffects.map((raw, index) => readEffect(raw, index));
    const capabilities = objectAt(params["capabilities"]);
    const state = objectAt(params["state"]);
    const staged = stage(boundary, event, capabilities, effects, deps);
    return {
      status: "applied",
      ...publish(boundary, event, capabilities, state, staged),
    };
  } catch (error) {
    if (error instanceof Rejection || error instanceof EffectError)
      return { status: "rejected", reason: error.message };
    throw error;
  }
}
